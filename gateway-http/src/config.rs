//! Owns gateway-http's configuration, read from `HADO_*` environment
//! variables. A missing or malformed setting stops the gateway at start with
//! one line naming it.

use std::net::{IpAddr, SocketAddr};

use hado_gateway::{Limits, TrustedProxies};
use hado_runtime::AllowedHosts;
use hado_runtime::settings::{self, ConfigError, Lookup, read};

pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:8080";

#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Where the gateway listens (`HADO_HTTP_ADDR`).
    pub addr: SocketAddr,
    /// Core's gRPC address (`HADO_CORE_URL`).
    pub core_url: String,
    /// The gateway's credential for core's Inbox (`HADO_GATEWAY_TOKEN`).
    pub gateway_token: Secret,
    /// Peers whose `X-Remote-User` is believed (`HADO_TRUSTED_PROXIES`).
    pub trusted_proxies: TrustedProxies,
    /// The one user of a gateway bound to loopback (`HADO_LOCAL_USER`).
    pub local_user: Option<String>,
    /// The public address, for links the gateway prints (`HADO_PUBLIC_URL`).
    pub public_url: Option<String>,
    /// Where agents reach gateway-mcp, for the connect line in settings
    /// (`HADO_MCP_URL`). Without it: the public URL + `/mcp` behind a
    /// trusted proxy (which routes `/mcp` to gateway-mcp, as the shipped
    /// Caddyfile does); otherwise unknown, since the public URL is then
    /// gateway-http's own, where `/mcp` is not served.
    pub mcp_url: Option<String>,
    /// Telegram's webhook secret (`HADO_TELEGRAM_WEBHOOK_SECRET`): set in
    /// webhook mode, when `/hooks/telegram` takes Telegram's updates.
    pub telegram_webhook_secret: Option<Secret>,
    /// The host names served: loopback, the host of `HADO_PUBLIC_URL`, and
    /// `HADO_ALLOWED_HOSTS`. Any other `Host` is refused on every route.
    pub allowed_hosts: AllowedHosts,
    /// Timeouts and the connection cap (`HADO_HEADER_TIMEOUT`,
    /// `HADO_REQUEST_TIMEOUT`, `HADO_IDLE_TIMEOUT`, `HADO_MAX_CONNECTIONS`).
    pub limits: Limits,
}

/// A secret that never shows in `Debug` output.
#[derive(Clone)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Secret(..)")
    }
}

impl HttpConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&settings::environment)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let trusted_proxies = TrustedProxies::from_lookup(lookup)?;
        let public_url = settings::url(lookup, "HADO_PUBLIC_URL")?;
        let proxied_mcp = public_url
            .as_ref()
            .filter(|_| !trusted_proxies.is_empty())
            .map(|url| format!("{url}/mcp"));
        let mcp_url = read(lookup, "HADO_MCP_URL").or(proxied_mcp);
        Ok(Self {
            addr: settings::socket_addr(lookup, "HADO_HTTP_ADDR", DEFAULT_HTTP_ADDR)?,
            core_url: hado_gateway::client::core_url(lookup)?,
            gateway_token: Secret(settings::secret(lookup, "HADO_GATEWAY_TOKEN")?),
            trusted_proxies,
            local_user: read(lookup, "HADO_LOCAL_USER"),
            public_url,
            mcp_url,
            telegram_webhook_secret: read(lookup, "HADO_TELEGRAM_WEBHOOK_SECRET").map(Secret),
            allowed_hosts: AllowedHosts::from_lookup(lookup)?,
            limits: Limits::from_lookup(lookup)?,
        })
    }

    /// A configuration for tests: loopback only, core at `core_url` with
    /// `gateway_token`, no trusted proxy and no local user.
    pub fn local(core_url: &str, gateway_token: &str) -> Self {
        Self {
            addr: DEFAULT_HTTP_ADDR.parse().expect("the default address parses"),
            core_url: core_url.to_owned(),
            gateway_token: Secret(gateway_token.to_owned()),
            trusted_proxies: TrustedProxies::default(),
            local_user: None,
            public_url: None,
            mcp_url: None,
            telegram_webhook_secret: None,
            allowed_hosts: AllowedHosts::loopback(),
            limits: Limits::default(),
        }
    }

    pub fn trusts(&self, peer: IpAddr) -> bool {
        self.trusted_proxies.trusts(peer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    fn config(pairs: &[(&str, &str)]) -> Result<HttpConfig, ConfigError> {
        let mut owned: Vec<(String, String)> =
            pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect();
        owned.push(("HADO_GATEWAY_TOKEN".into(), SECRET.into()));
        HttpConfig::from_lookup(&move |variable| {
            owned.iter().find(|(key, _)| key == variable).map(|(_, value)| value.clone())
        })
    }

    #[test]
    fn defaults_trust_no_proxy() {
        let config = config(&[]).unwrap();
        assert_eq!(config.addr.to_string(), DEFAULT_HTTP_ADDR);
        assert!(!config.trusts("127.0.0.1".parse().unwrap()));
        assert_eq!((config.local_user, config.mcp_url), (None, None));
    }

    #[test]
    fn proxies_are_addresses_or_ranges() {
        let config = config(&[
            ("HADO_TRUSTED_PROXIES", "10.0.0.0/8, ::1,192.168.1.7"),
            ("HADO_PUBLIC_URL", "https://hado.example.com/"),
        ])
        .unwrap();
        for trusted in ["10.1.2.3", "::1", "192.168.1.7", "::ffff:10.9.9.9"] {
            assert!(config.trusts(trusted.parse().unwrap()), "{trusted}");
        }
        for untrusted in ["11.0.0.1", "192.168.1.8", "127.0.0.1"] {
            assert!(!config.trusts(untrusted.parse().unwrap()), "{untrusted}");
        }
        assert_eq!(
            config.mcp_url.as_deref(),
            Some("https://hado.example.com/mcp"),
            "behind a proxy, /mcp is on the public URL"
        );
    }

    #[test]
    fn the_mcp_address_is_never_a_guess() {
        // Without a proxy the public URL is gateway-http's own, where /mcp 404s.
        let alone = config(&[("HADO_PUBLIC_URL", "http://127.0.0.1:8080")]).unwrap();
        assert_eq!(alone.mcp_url, None);
        let told = config(&[
            ("HADO_PUBLIC_URL", "http://127.0.0.1:8080"),
            ("HADO_MCP_URL", "http://127.0.0.1:8081/mcp"),
        ])
        .unwrap();
        assert_eq!(told.mcp_url.as_deref(), Some("http://127.0.0.1:8081/mcp"));
    }

    #[test]
    fn each_bad_setting_is_named() {
        assert_eq!(
            config(&[("HADO_TRUSTED_PROXIES", "10.0.0.0/33")]).unwrap_err().variable,
            "HADO_TRUSTED_PROXIES"
        );
        assert_eq!(
            config(&[("HADO_TRUSTED_PROXIES", "proxy.local")]).unwrap_err().variable,
            "HADO_TRUSTED_PROXIES"
        );
        assert_eq!(config(&[("HADO_HTTP_ADDR", "8080")]).unwrap_err().variable, "HADO_HTTP_ADDR");
        assert_eq!(config(&[("HADO_PUBLIC_URL", "hado")]).unwrap_err().variable, "HADO_PUBLIC_URL");
        let missing = HttpConfig::from_lookup(&|_| None).unwrap_err();
        assert_eq!(missing.variable, "HADO_GATEWAY_TOKEN");
    }
}
