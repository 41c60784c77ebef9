//! Owns who the client of a request is when a proxy stands in front
//! (`HADO_TRUSTED_PROXIES`). A request from a trusted proxy's address may
//! name the person (`X-Remote-User`) and the client it came from
//! (`X-Forwarded-For`); from anyone else both headers are ignored. Both
//! gateways read the list here, so that a per-client limit counts the same
//! client behind Caddy in each.

use std::net::IpAddr;

use axum::http::HeaderMap;

use hado_runtime::settings::{ConfigError, Lookup, read};

/// The addresses and ranges of the proxies in front, parsed by `ipnet`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    ranges: Vec<ipnet::IpNet>,
}

impl TrustedProxies {
    /// `HADO_TRUSTED_PROXIES`: addresses or CIDR ranges separated by commas;
    /// none when unset.
    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        read(lookup, "HADO_TRUSTED_PROXIES")
            .map_or_else(|| Ok(Self::default()), |list| Self::parse(&list))
    }

    /// A comma-separated list of addresses and ranges, as the variable takes it.
    pub fn parse(list: &str) -> Result<Self, ConfigError> {
        let ranges = list
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                parse_range(item).ok_or_else(|| ConfigError {
                    variable: "HADO_TRUSTED_PROXIES",
                    problem: format!("{item:?} is not an IP address or range such as 10.0.0.0/8"),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { ranges })
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether `peer` is a trusted proxy; an IPv4-mapped IPv6 address (as a
    /// dual-stack listener reports an IPv4 peer) counts as its IPv4 address.
    pub fn trusts(&self, peer: IpAddr) -> bool {
        let peer = canonical(peer);
        self.ranges.iter().any(|range| range.contains(&peer))
    }

    /// The client a request comes from: from a trusted proxy, the right-most
    /// `X-Forwarded-For` entry that is not itself a trusted proxy (entries
    /// to its left were written by the client and prove nothing); otherwise,
    /// or when the header names no address, the peer itself.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let hops = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','));
        let hops: Vec<&str> = hops.map(str::trim).collect();
        for hop in hops.iter().rev() {
            match parse_address(hop) {
                Some(address) if self.trusts(address) => continue,
                Some(address) => return canonical(address),
                // A hop that is no address (`unknown`, garbage): what stands
                // to its left cannot be believed either.
                None => return peer,
            }
        }
        peer
    }
}

fn parse_range(text: &str) -> Option<ipnet::IpNet> {
    match text.parse::<ipnet::IpNet>() {
        Ok(range) => Some(range),
        Err(_) => text.parse::<IpAddr>().ok().map(ipnet::IpNet::from),
    }
}

/// An `X-Forwarded-For` hop: an address, perhaps `[v6]` or with a port.
fn parse_address(hop: &str) -> Option<IpAddr> {
    if let Ok(address) = hop.parse::<IpAddr>() {
        return Some(address);
    }
    if let Ok(socket) = hop.parse::<std::net::SocketAddr>() {
        return Some(socket.ip());
    }
    hop.strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .and_then(|inner| inner.parse().ok())
}

fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(address),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(list: &str) -> Result<TrustedProxies, ConfigError> {
        let list = list.to_owned();
        TrustedProxies::from_lookup(&move |variable| {
            (variable == "HADO_TRUSTED_PROXIES").then(|| list.clone())
        })
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn addresses_and_ranges_are_trusted_and_nothing_else() {
        let trusted = proxies("10.0.0.0/8, ::1,192.168.1.7").unwrap();
        for address in ["10.1.2.3", "::1", "192.168.1.7", "::ffff:10.0.0.9"] {
            assert!(trusted.trusts(address.parse().unwrap()), "{address}");
        }
        for address in ["11.0.0.1", "127.0.0.1", "192.168.1.8"] {
            assert!(!trusted.trusts(address.parse().unwrap()), "{address}");
        }
        assert!(proxies("").unwrap().is_empty());
        assert_eq!(proxies("10.0.0.0/33").unwrap_err().variable, "HADO_TRUSTED_PROXIES");
        assert_eq!(proxies("proxy.local").unwrap_err().variable, "HADO_TRUSTED_PROXIES");
    }

    #[test]
    fn the_client_is_the_right_most_untrusted_hop_from_a_trusted_peer() {
        let trusted = proxies("10.0.0.0/8").unwrap();
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let client = |headers: &HeaderMap| trusted.client(proxy, headers).to_string();
        assert_eq!(client(&forwarded(&["203.0.113.9"])), "203.0.113.9");
        assert_eq!(
            client(&forwarded(&["1.1.1.1, 203.0.113.9, 10.0.0.5"])),
            "203.0.113.9",
            "a spoofed left entry is not believed"
        );
        assert_eq!(
            client(&forwarded(&["1.1.1.1", "203.0.113.9"])),
            "203.0.113.9",
            "repeated headers are one list"
        );
        assert_eq!(client(&forwarded(&["[2001:db8::1]:4711"])), "2001:db8::1");
        assert_eq!(client(&forwarded(&["1.1.1.1, unknown"])), "10.0.0.2", "garbage ends the trust");
        assert_eq!(client(&HeaderMap::new()), "10.0.0.2");
        let stranger: IpAddr = "198.51.100.4".parse().unwrap();
        assert_eq!(
            trusted.client(stranger, &forwarded(&["203.0.113.9"])).to_string(),
            "198.51.100.4",
            "only a trusted peer may forward"
        );
    }
}
