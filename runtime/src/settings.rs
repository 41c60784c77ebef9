//! Owns how a Hado process reads its `HADO_*` settings: each one read
//! once into a value, and a bad one named with what to set instead, so that
//! the process stops with one line an operator can act on.

use std::net::SocketAddr;

/// A setting that is missing or malformed, named so the operator can fix it.
#[derive(Debug, thiserror::Error)]
#[error("{variable}: {problem}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub problem: String,
}

/// Where settings come from: the environment, or a table in tests.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Reads the process environment.
pub fn environment(variable: &str) -> Option<String> {
    std::env::var(variable).ok()
}

/// Reads one variable; blank counts as unset.
pub fn read(lookup: Lookup<'_>, variable: &'static str) -> Option<String> {
    lookup(variable).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty())
}

/// Reads a listening address such as `127.0.0.1:8081`.
pub fn socket_addr(
    lookup: Lookup<'_>,
    variable: &'static str,
    default: &str,
) -> Result<SocketAddr, ConfigError> {
    let value = read(lookup, variable).unwrap_or_else(|| default.to_owned());
    value.parse().map_err(|_| ConfigError {
        variable,
        problem: format!("{value:?} is not an address such as {default}"),
    })
}

/// Reads a positive whole number.
pub fn positive_number(
    lookup: Lookup<'_>,
    variable: &'static str,
    default: u32,
) -> Result<u32, ConfigError> {
    let Some(value) = read(lookup, variable) else { return Ok(default) };
    match value.parse::<u32>() {
        Ok(number) if number > 0 => Ok(number),
        _ => Err(ConfigError {
            variable,
            problem: format!("{value:?} is not a whole number above zero"),
        }),
    }
}

/// Secrets shorter than this are refused: they would be guessable.
pub(crate) const MIN_SECRET_LEN: usize = 32;

/// Reads a required secret of at least [`MIN_SECRET_LEN`] characters.
pub fn secret(lookup: Lookup<'_>, variable: &'static str) -> Result<String, ConfigError> {
    let value = read(lookup, variable).ok_or_else(|| ConfigError {
        variable,
        problem: format!("is not set; set it to a random secret of at least {MIN_SECRET_LEN} characters (`hado up` generates one)"),
    })?;
    if value.len() < MIN_SECRET_LEN {
        return Err(ConfigError {
            variable,
            problem: format!("is {} characters long; use at least {MIN_SECRET_LEN}", value.len()),
        });
    }
    Ok(value)
}

/// An address setting (`HADO_PUBLIC_URL`, `HADO_WEB_URL`): an absolute URL
/// with a host, kept without its trailing slash.
pub fn url(lookup: Lookup<'_>, variable: &'static str) -> Result<Option<String>, ConfigError> {
    let Some(url) = read(lookup, variable).map(|url| url.trim_end_matches('/').to_owned()) else {
        return Ok(None);
    };
    if host_of_url(&url).is_none() {
        return Err(ConfigError {
            variable,
            problem: format!("{url:?} is not a URL such as https://hado.example.com"),
        });
    }
    Ok(Some(url))
}

/// The host of an absolute URL, parsed by the `url` crate as browsers parse
/// it: names lowercased, IPv6 addresses without brackets.
pub fn host_of_url(text: &str) -> Option<String> {
    url::Url::parse(text).ok()?.host().map(host_name)
}

/// How a parsed host is written in Hado's lists and messages.
pub(crate) fn host_name(host: url::Host<&str>) -> String {
    match host {
        url::Host::Domain(name) => name.to_ascii_lowercase(),
        url::Host::Ipv4(address) => address.to_string(),
        url::Host::Ipv6(address) => address.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_number_or_address_names_its_variable() {
        let lookup = |variable: &str| match variable {
            "A" => Some("0".to_owned()),
            "B" => Some("localhost".to_owned()),
            "C" => Some("  ".to_owned()),
            _ => None,
        };
        assert_eq!(
            positive_number(&lookup, "A", 5).unwrap_err().to_string(),
            "A: \"0\" is not a whole number above zero"
        );
        assert_eq!(socket_addr(&lookup, "B", "127.0.0.1:1").unwrap_err().variable, "B");
        assert_eq!(positive_number(&lookup, "C", 5).unwrap(), 5, "blank counts as unset");
    }

    #[test]
    fn hosts_are_read_from_urls_and_authorities() {
        assert_eq!(
            host_of_url("https://user@Example.com:8443/mcp").as_deref(),
            Some("example.com")
        );
        assert_eq!(host_of_url("http://[::1]:8081").as_deref(), Some("::1"));
        assert_eq!(
            host_of_url("http://127.1:8081").as_deref(),
            Some("127.0.0.1"),
            "read as browsers read it"
        );
        assert_eq!(host_of_url("hado.example.com"), None, "not a URL");
        assert_eq!(host_of_url("null"), None);
    }
}
