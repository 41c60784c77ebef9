//! Owns gateway-mcp's configuration, read from `HADO_*` environment
//! variables. A missing or malformed setting stops the gateway at start with
//! one line naming it.

use std::net::SocketAddr;

use hado_proto::process::{self, ConfigError, Lookup, read};

pub const DEFAULT_MCP_ADDR: &str = "127.0.0.1:8081";
pub const DEFAULT_CORE_URL: &str = "http://127.0.0.1:50051";
pub const DEFAULT_RATE_LIMIT: u32 = 60;

/// Host names every gateway answers to, besides the configured public ones.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

#[derive(Clone, Debug)]
pub struct McpConfig {
    /// Where `/mcp` listens (`HADO_MCP_ADDR`).
    pub addr: SocketAddr,
    /// Core's gRPC address (`HADO_CORE_URL`).
    pub core_url: String,
    /// Host names accepted in `Host` and `Origin`: the host of
    /// `HADO_PUBLIC_URL`, those in `HADO_ALLOWED_HOSTS`, and loopback.
    pub allowed_hosts: Vec<String>,
    /// Calls a minute allowed per agent token (`HADO_MCP_RATE_LIMIT`).
    pub calls_per_minute: u32,
}

impl McpConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&process::environment)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let mut allowed_hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|host| host.to_string()).collect();
        if let Some(public_url) = read(lookup, "HADO_PUBLIC_URL") {
            allowed_hosts.push(host_of_url(&public_url).ok_or_else(|| ConfigError {
                variable: "HADO_PUBLIC_URL",
                problem: format!("{public_url:?} is not a URL such as https://hado.example.com"),
            })?);
        }
        if let Some(extra) = read(lookup, "HADO_ALLOWED_HOSTS") {
            for host in extra.split(',').map(str::trim).filter(|host| !host.is_empty()) {
                if host.contains(['/', ' ', ':']) && !host.starts_with('[') {
                    return Err(ConfigError {
                        variable: "HADO_ALLOWED_HOSTS",
                        problem: format!("{host:?} is not a host name; list names such as hado.example.com, separated by commas"),
                    });
                }
                allowed_hosts.push(host.trim_matches(['[', ']']).to_ascii_lowercase());
            }
        }
        Ok(Self {
            addr: process::socket_addr(lookup, "HADO_MCP_ADDR", DEFAULT_MCP_ADDR)?,
            core_url: core_url(lookup)?,
            allowed_hosts,
            calls_per_minute: process::positive_number(lookup, "HADO_MCP_RATE_LIMIT", DEFAULT_RATE_LIMIT)?,
        })
    }

    /// A configuration for tests: loopback only, core at `core_url`.
    pub fn local(core_url: &str) -> Self {
        Self {
            addr: DEFAULT_MCP_ADDR.parse().expect("the default address parses"),
            core_url: core_url.to_owned(),
            allowed_hosts: LOOPBACK_HOSTS.iter().map(|host| host.to_string()).collect(),
            calls_per_minute: DEFAULT_RATE_LIMIT,
        }
    }
}

/// Reads `HADO_CORE_URL`, accepting a bare `host:port` as plain HTTP.
pub fn core_url(lookup: Lookup<'_>) -> Result<String, ConfigError> {
    let value = read(lookup, "HADO_CORE_URL").unwrap_or_else(|| DEFAULT_CORE_URL.to_owned());
    let url = if value.contains("://") { value.clone() } else { format!("http://{value}") };
    if host_of_url(&url).is_none() || !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ConfigError { variable: "HADO_CORE_URL", problem: format!("{value:?} is not a URL such as {DEFAULT_CORE_URL}") });
    }
    Ok(url)
}

/// The lowercased host name of `scheme://host[:port][/…]`, without brackets
/// around an IPv6 address.
pub fn host_of_url(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    host_of_authority(authority)
}

/// The lowercased host name of `host[:port]` or `[v6]:port`.
pub fn host_of_authority(authority: &str) -> Option<String> {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        authority.rsplit_once(':').map_or(authority, |(host, port)| if port.chars().all(|c| c.is_ascii_digit()) { host } else { authority })
    };
    (!host.is_empty() && !host.contains(['/', ' ', '@'])).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<McpConfig, ConfigError> {
        let owned: Vec<(String, String)> = pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect();
        McpConfig::from_lookup(&move |variable| owned.iter().find(|(key, _)| key == variable).map(|(_, value)| value.clone()))
    }

    #[test]
    fn defaults_serve_loopback_only() {
        let config = config(&[]).unwrap();
        assert_eq!(config.addr.to_string(), DEFAULT_MCP_ADDR);
        assert_eq!(config.core_url, DEFAULT_CORE_URL);
        assert_eq!(config.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
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
        assert!(config.allowed_hosts.ends_with(&["hado.example.com".into(), "inbox.example.org".into(), "fd00::1".into()]));
        assert_eq!(config.core_url, "http://core:50051");
    }

    #[test]
    fn each_bad_setting_is_named() {
        assert_eq!(config(&[("HADO_PUBLIC_URL", "hado.example.com")]).unwrap_err().variable, "HADO_PUBLIC_URL");
        assert_eq!(config(&[("HADO_ALLOWED_HOSTS", "https://x.org")]).unwrap_err().variable, "HADO_ALLOWED_HOSTS");
        assert_eq!(config(&[("HADO_CORE_URL", "ftp://core")]).unwrap_err().variable, "HADO_CORE_URL");
        assert_eq!(config(&[("HADO_MCP_RATE_LIMIT", "-1")]).unwrap_err().variable, "HADO_MCP_RATE_LIMIT");
        assert_eq!(config(&[("HADO_MCP_ADDR", "8081")]).unwrap_err().variable, "HADO_MCP_ADDR");
    }

    #[test]
    fn hosts_are_read_from_urls_and_authorities() {
        assert_eq!(host_of_url("https://user@Example.com:8443/mcp").as_deref(), Some("example.com"));
        assert_eq!(host_of_url("http://[::1]:8081").as_deref(), Some("::1"));
        assert_eq!(host_of_authority("127.0.0.1:8081").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_of_authority("localhost").as_deref(), Some("localhost"));
        assert_eq!(host_of_url("null"), None);
    }
}
