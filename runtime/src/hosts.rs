//! Owns which host names a gateway answers to. A web page can make a
//! browser send requests to a loopback port under its own name (DNS
//! rebinding); checking `Host` against a short list of names the operator
//! chose closes that door. Both gateways and every process's metrics
//! listener use this one list: loopback names and addresses, the host of
//! `HADO_PUBLIC_URL`, and `HADO_ALLOWED_HOSTS`.

use crate::settings::{ConfigError, Lookup, host_name, read};
use http::header::{HOST, ORIGIN};
use http::{HeaderMap, Uri};
use url::Url;

/// Names every gateway answers to, besides the configured ones.
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The host names a gateway serves, lowercased, without ports or brackets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedHosts {
    names: Vec<String>,
}

/// Why a request's host was refused; the text is safe to show the caller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostRefusal {
    /// No `Host` header (nor an absolute URI), or one that is not a host.
    #[error("the request names no valid Host")]
    Missing,
    /// A host this gateway was not configured to serve.
    #[error("host {0} is not served here; the operator can add it to HADO_ALLOWED_HOSTS")]
    NotServed(String),
    /// A request target in absolute form whose host is not its `Host`.
    #[error("the request target and the Host header name different hosts")]
    Conflicting,
    /// An `Origin` whose host is not served here: another site's page.
    #[error("origin {0} may not call this server")]
    ForeignOrigin(String),
}

impl AllowedHosts {
    /// Loopback only: what `hado up` and the tests serve.
    pub fn loopback() -> Self {
        Self { names: LOOPBACK_HOSTS.iter().map(|name| name.to_string()).collect() }
    }

    /// Loopback, the host of `HADO_PUBLIC_URL`, and each name in the
    /// comma-separated `HADO_ALLOWED_HOSTS`.
    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let mut hosts = Self::loopback();
        if let Some(public_url) = read(lookup, "HADO_PUBLIC_URL") {
            let host = Url::parse(&public_url)
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https"))
                .and_then(|url| url.host().map(host_name));
            hosts.names.push(host.ok_or_else(|| ConfigError {
                variable: "HADO_PUBLIC_URL",
                problem: format!("{public_url:?} is not a URL such as https://hado.example.com"),
            })?);
        }
        if let Some(extra) = read(lookup, "HADO_ALLOWED_HOSTS") {
            for item in extra.split(',').map(str::trim).filter(|item| !item.is_empty()) {
                let host = host_of_authority(item)
                    .filter(|_| !item.contains(':') || item.starts_with('['));
                hosts.names.push(host.ok_or_else(|| ConfigError {
                    variable: "HADO_ALLOWED_HOSTS",
                    problem: format!("{item:?} is not a host name; list names such as hado.example.com, separated by commas"),
                })?);
            }
        }
        hosts.names.dedup();
        Ok(hosts)
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether `host` (a name from [`host_of_authority`]) is served.
    pub fn serves(&self, host: &str) -> bool {
        self.names.iter().any(|name| name == host)
    }

    /// The request's host when it is one this gateway serves. A request
    /// in absolute form (`GET http://host/path`) names its host twice; RFC
    /// 9112 section 3.2.2 has the target's win, and a proxy in front may
    /// read either, so both must name the same served host.
    pub fn admit(&self, headers: &HeaderMap, uri: &Uri) -> Result<String, HostRefusal> {
        let header = match headers.get(HOST) {
            Some(value) => {
                Some(value.to_str().ok().and_then(host_of_authority).ok_or(HostRefusal::Missing)?)
            }
            None => None,
        };
        let target = match uri.authority() {
            Some(authority) => {
                Some(host_of_authority(authority.as_str()).ok_or(HostRefusal::Missing)?)
            }
            None => None,
        };
        let host = match (header, target) {
            (Some(header), Some(target)) if header != target => {
                return Err(HostRefusal::Conflicting);
            }
            (Some(host), _) | (None, Some(host)) => host,
            (None, None) => return Err(HostRefusal::Missing),
        };
        if self.serves(&host) { Ok(host) } else { Err(HostRefusal::NotServed(host)) }
    }

    /// Whether an `Origin` header names a host this gateway serves (any
    /// scheme and port: an agent's page on another local port is fine).
    /// `Host` as [`AllowedHosts::admit`] checks it, and the `Origin`, when
    /// the request has one, naming a host served here: the door of routes
    /// that no other site's page may call (gateway-mcp's, all of them).
    pub fn admit_with_origin(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), HostRefusal> {
        self.admit(headers, uri)?;
        match headers.get(ORIGIN) {
            Some(origin) => {
                let origin = origin.to_str().unwrap_or("");
                if self.serves_origin(origin) {
                    Ok(())
                } else {
                    Err(HostRefusal::ForeignOrigin(origin.to_owned()))
                }
            }
            None => Ok(()),
        }
    }

    pub fn serves_origin(&self, origin: &str) -> bool {
        Url::parse(origin)
            .ok()
            .and_then(|url| url.host().map(host_name))
            .is_some_and(|host| self.serves(&host))
    }
}

/// The host name in `host[:port]` or `[v6]:port`, lowercased, without
/// brackets; `None` for anything else (a path, credentials, a bad port).
pub(crate) fn host_of_authority(authority: &str) -> Option<String> {
    if authority.is_empty() || authority.contains(['/', '?', '#', '@', '\\', ' ']) {
        return None;
    }
    let url = Url::parse(&format!("http://{authority}/")).ok()?;
    url.host().map(host_name)
}

/// Whether `origin` (an `Origin` header) is exactly the origin of pages at
/// `site` (a URL such as `http://localhost:8080/`): scheme, host and port
/// all compared, default ports folded.
pub fn same_origin(origin: &str, site: &str) -> bool {
    let (Ok(given), Ok(own)) = (Url::parse(origin), Url::parse(site)) else { return false };
    given.origin().is_tuple() && given.origin() == own.origin()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(pairs: &[(&str, &str)]) -> Result<AllowedHosts, ConfigError> {
        let owned: Vec<(String, String)> =
            pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect();
        AllowedHosts::from_lookup(&move |variable| {
            owned.iter().find(|(key, _)| key == variable).map(|(_, value)| value.clone())
        })
    }

    #[test]
    fn loopback_is_always_served_and_nothing_else_by_default() {
        let allowed = hosts(&[]).unwrap();
        assert_eq!(allowed.names(), ["localhost", "127.0.0.1", "::1"]);
        for served in ["localhost:8080", "127.0.0.1", "[::1]:8081", "LOCALHOST"] {
            assert_eq!(
                host_of_authority(served).map(|host| allowed.serves(&host)),
                Some(true),
                "{served}"
            );
        }
        for foreign in ["attacker.example:8080", "localhost.attacker.example", "10.0.0.1"] {
            assert_eq!(
                host_of_authority(foreign).map(|host| allowed.serves(&host)),
                Some(false),
                "{foreign}"
            );
        }
    }

    #[test]
    fn the_public_url_and_extra_hosts_are_served() {
        let allowed = hosts(&[
            ("HADO_PUBLIC_URL", "https://Hado.Example.com/"),
            ("HADO_ALLOWED_HOSTS", "inbox.example.org, [fd00::1]"),
        ])
        .unwrap();
        assert!(allowed.names().ends_with(&[
            "hado.example.com".into(),
            "inbox.example.org".into(),
            "fd00::1".into()
        ]));
        assert!(allowed.serves_origin("https://hado.example.com"));
        assert!(!allowed.serves_origin("https://evil.example.com"));
        assert!(!allowed.serves_origin("null"));
    }

    #[test]
    fn each_bad_setting_is_named() {
        assert_eq!(
            hosts(&[("HADO_PUBLIC_URL", "hado.example.com")]).unwrap_err().variable,
            "HADO_PUBLIC_URL"
        );
        assert_eq!(
            hosts(&[("HADO_ALLOWED_HOSTS", "https://x.org")]).unwrap_err().variable,
            "HADO_ALLOWED_HOSTS"
        );
        assert_eq!(
            hosts(&[("HADO_ALLOWED_HOSTS", "x.org:80")]).unwrap_err().variable,
            "HADO_ALLOWED_HOSTS"
        );
    }

    #[test]
    fn an_absolute_target_cannot_name_a_second_host() {
        let allowed = hosts(&[]).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(HOST, "127.0.0.1:8080".parse().unwrap());
        let smuggled: Uri = "http://attacker.example/me".parse().unwrap();
        assert_eq!(allowed.admit(&headers, &smuggled), Err(HostRefusal::Conflicting));
        let same: Uri = "http://127.0.0.1:8080/me".parse().unwrap();
        assert_eq!(allowed.admit(&headers, &same), Ok("127.0.0.1".to_owned()));
        let unserved: Uri = "http://attacker.example/me".parse().unwrap();
        assert_eq!(
            allowed.admit(&HeaderMap::new(), &unserved),
            Err(HostRefusal::NotServed("attacker.example".into()))
        );
        assert_eq!(allowed.admit(&headers, &"/me".parse().unwrap()), Ok("127.0.0.1".to_owned()));
    }

    #[test]
    fn authorities_with_more_than_a_host_and_port_are_refused() {
        for bad in ["", "user@localhost", "localhost/path", "localhost:port", "local host"] {
            assert_eq!(host_of_authority(bad), None, "{bad}");
        }
    }

    #[test]
    fn same_origin_compares_scheme_host_and_port() {
        assert!(same_origin("http://localhost:8080", "http://localhost:8080/"));
        assert!(same_origin("https://hado.example.com", "https://hado.example.com:443/inbox"));
        assert!(!same_origin("http://localhost:8081", "http://localhost:8080/"), "another port");
        assert!(!same_origin("https://localhost:8080", "http://localhost:8080/"), "another scheme");
        assert!(
            !same_origin("http://attacker.example:8080", "http://localhost:8080/"),
            "another host"
        );
        assert!(!same_origin("null", "http://localhost:8080/"), "an opaque origin");
    }
}
