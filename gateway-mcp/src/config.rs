//! Owns gateway-mcp's configuration, read from `HADO_*` environment
//! variables. A missing or malformed setting stops the gateway at start with
//! one line naming it.

use std::net::SocketAddr;

pub use hado_gateway::client::DEFAULT_CORE_URL;
use hado_gateway::client::core_url;
use hado_gateway::{Limits, TrustedProxies};
use hado_runtime::AllowedHosts;
use hado_runtime::settings::{self, ConfigError, Lookup};

/// Where gateway-mcp listens by default.
pub const DEFAULT_MCP_ADDR: &str = "127.0.0.1:8081";
pub const DEFAULT_RATE_LIMIT: u32 = 60;

#[derive(Clone, Debug)]
pub struct McpConfig {
    /// Where `/mcp` listens (`HADO_MCP_ADDR`).
    pub addr: SocketAddr,
    /// Core's gRPC address (`HADO_CORE_URL`).
    pub core_url: String,
    /// Host names accepted in `Host` and `Origin`: the host of
    /// `HADO_PUBLIC_URL`, those in `HADO_ALLOWED_HOSTS`, and loopback.
    pub allowed_hosts: AllowedHosts,
    /// Calls a minute allowed per agent token (`HADO_MCP_RATE_LIMIT`).
    pub calls_per_minute: u32,
    /// Timeouts and the connection caps, as for gateway-http.
    pub limits: Limits,
    /// The proxies in front (`HADO_TRUSTED_PROXIES`), whose
    /// `X-Forwarded-For` names the client every per-address limit counts.
    pub trusted_proxies: TrustedProxies,
    /// This server's public address (`HADO_PUBLIC_URL`): the issuer agents
    /// sign in with and the base of the resource URL. Without it, the
    /// `Host` a client named (one the gateway serves), over http.
    pub public_url: Option<String>,
    /// Where the web inbox is, for the page where a person lets an agent
    /// sign in (`HADO_WEB_URL`; by default the public URL, or gateway-http's
    /// default address).
    pub web_url: String,
}

/// gateway-http's address when nothing else is said.
pub const DEFAULT_WEB_URL: &str = "http://127.0.0.1:8080";

impl McpConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&settings::environment)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let public_url = settings::url(lookup, "HADO_PUBLIC_URL")?;
        Ok(Self {
            addr: settings::socket_addr(lookup, "HADO_MCP_ADDR", DEFAULT_MCP_ADDR)?,
            core_url: core_url(lookup)?,
            allowed_hosts: AllowedHosts::from_lookup(lookup)?,
            calls_per_minute: settings::positive_number(
                lookup,
                "HADO_MCP_RATE_LIMIT",
                DEFAULT_RATE_LIMIT,
            )?,
            limits: Limits::from_lookup(lookup)?,
            trusted_proxies: TrustedProxies::from_lookup(lookup)?,
            web_url: settings::url(lookup, "HADO_WEB_URL")?
                .or_else(|| public_url.clone())
                .unwrap_or_else(|| DEFAULT_WEB_URL.to_owned()),
            public_url,
        })
    }

    /// A configuration for tests: loopback only, core at `core_url`.
    pub fn local(core_url: &str) -> Self {
        Self {
            addr: DEFAULT_MCP_ADDR.parse().expect("the default address parses"),
            core_url: core_url.to_owned(),
            allowed_hosts: AllowedHosts::loopback(),
            calls_per_minute: DEFAULT_RATE_LIMIT,
            limits: Limits::default(),
            trusted_proxies: TrustedProxies::default(),
            public_url: None,
            web_url: DEFAULT_WEB_URL.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<McpConfig, ConfigError> {
        let owned: Vec<(String, String)> =
            pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect();
        McpConfig::from_lookup(&move |variable| {
            owned.iter().find(|(key, _)| key == variable).map(|(_, value)| value.clone())
        })
    }

    #[test]
    fn defaults_serve_loopback_only() {
        let config = config(&[]).unwrap();
        assert_eq!(config.addr.to_string(), DEFAULT_MCP_ADDR);
        assert_eq!(config.core_url, DEFAULT_CORE_URL);
        assert_eq!(config.allowed_hosts, AllowedHosts::loopback());
        assert_eq!(config.calls_per_minute, 60);
    }

    #[test]
    fn the_public_url_and_extra_hosts_are_allowed() {
        let config = config(&[
            ("HADO_PUBLIC_URL", "https://Hado.Example.com/"),
            ("HADO_ALLOWED_HOSTS", "inbox.example.org, [fd00::1]"),
            ("HADO_CORE_URL", "core:50051"),
        ])
        .unwrap();
        assert!(config.allowed_hosts.names().ends_with(&[
            "hado.example.com".into(),
            "inbox.example.org".into(),
            "fd00::1".into()
        ]));
        assert_eq!(config.core_url, "http://core:50051");
    }

    #[test]
    fn each_bad_setting_is_named() {
        assert_eq!(
            config(&[("HADO_PUBLIC_URL", "hado.example.com")]).unwrap_err().variable,
            "HADO_PUBLIC_URL"
        );
        assert_eq!(
            config(&[("HADO_ALLOWED_HOSTS", "https://x.org")]).unwrap_err().variable,
            "HADO_ALLOWED_HOSTS"
        );
        assert_eq!(
            config(&[("HADO_CORE_URL", "ftp://core")]).unwrap_err().variable,
            "HADO_CORE_URL"
        );
        assert_eq!(
            config(&[("HADO_MCP_RATE_LIMIT", "-1")]).unwrap_err().variable,
            "HADO_MCP_RATE_LIMIT"
        );
        assert_eq!(config(&[("HADO_MCP_ADDR", "8081")]).unwrap_err().variable, "HADO_MCP_ADDR");
        assert_eq!(config(&[("HADO_WEB_URL", "inbox")]).unwrap_err().variable, "HADO_WEB_URL");
    }

    #[test]
    fn agents_sign_in_on_the_web_inbox_at_the_public_or_the_given_address() {
        let local = config(&[]).unwrap();
        assert_eq!((local.public_url, local.web_url.as_str()), (None, DEFAULT_WEB_URL));
        let public = config(&[("HADO_PUBLIC_URL", "https://hado.example.com/")]).unwrap();
        assert_eq!(
            (public.public_url.as_deref(), public.web_url.as_str()),
            (Some("https://hado.example.com"), "https://hado.example.com")
        );
        let split = config(&[
            ("HADO_PUBLIC_URL", "https://mcp.example.com"),
            ("HADO_WEB_URL", "https://inbox.example.com/"),
        ])
        .unwrap();
        assert_eq!(split.web_url, "https://inbox.example.com");
    }
}
