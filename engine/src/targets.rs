//! Owns where webhooks may be sent: only to globally routable unicast
//! addresses, so that a person cannot aim Hado's requests at its own
//! network (SSRF), unless the operator allows private targets
//! (`HADO_WEBHOOK_ALLOW_PRIVATE`). A URL is checked when it is added (its
//! host parsed as browsers do, so `127.1`, `2130706433` and `0x7f000001`
//! are all 127.0.0.1) and again at every send by the resolver the HTTP
//! client connects through: the addresses checked are the addresses
//! connected to, so a name that changes its answer in between gains nothing.
//!
//! The special-purpose ranges are listed here rather than taken from a
//! crate: the ones that classify addresses (`ip_network`, std's unstable
//! `is_global`) miss several IPv6 registry entries (IPv4-compatible
//! `::/96`, 6to4, `2001::/23`), and this list is short and cited.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use url::{Host, Url};

use crate::outbound_tls::OutboundClient;

/// IPv4 ranges that are not globally reachable unicast, from the IANA
/// IPv4 Special-Purpose Address Registry, plus multicast and broadcast.
const IPV4_SPECIAL: &[&str] = &[
    "0.0.0.0/8",          // this network
    "10.0.0.0/8",         // private
    "100.64.0.0/10",      // shared address space (carrier NAT)
    "127.0.0.0/8",        // loopback
    "169.254.0.0/16",     // link local
    "172.16.0.0/12",      // private
    "192.0.0.0/24",       // IETF protocol assignments
    "192.0.2.0/24",       // documentation (TEST-NET-1)
    "192.88.99.0/24",     // 6to4 relay anycast (deprecated)
    "192.168.0.0/16",     // private
    "198.18.0.0/15",      // benchmarking
    "198.51.100.0/24",    // documentation (TEST-NET-2)
    "203.0.113.0/24",     // documentation (TEST-NET-3)
    "224.0.0.0/4",        // multicast
    "240.0.0.0/4",        // reserved
    "255.255.255.255/32", // limited broadcast
];

/// IPv6 space outside global unicast `2000::/3` is refused whole (loopback,
/// unspecified, IPv4-mapped and -compatible, NAT64, discard, unique local,
/// link local, multicast); within it, these registry entries are too.
const IPV6_SPECIAL: &[&str] = &[
    "2001::/23",     // IETF protocol assignments (Teredo, benchmarking, ORCHID)
    "2001:db8::/32", // documentation
    "2002::/16",     // 6to4
    "3fff::/20",     // documentation
];

static SPECIAL: LazyLock<Vec<IpNet>> = LazyLock::new(|| {
    let v4 = IPV4_SPECIAL
        .iter()
        .map(|range| IpNet::V4(range.parse::<Ipv4Net>().expect("the table holds valid ranges")));
    let v6 = IPV6_SPECIAL
        .iter()
        .map(|range| IpNet::V6(range.parse::<Ipv6Net>().expect("the table holds valid ranges")));
    v4.chain(v6).collect()
});

static GLOBAL_UNICAST_V6: LazyLock<Ipv6Net> =
    LazyLock::new(|| "2000::/3".parse().expect("a valid range"));

/// Whether `address` is a globally routable unicast address.
pub fn is_public(address: IpAddr) -> bool {
    if let IpAddr::V6(v6) = address
        && !GLOBAL_UNICAST_V6.contains(&v6)
    {
        return false;
    }
    !SPECIAL.iter().any(|range| range.contains(&address))
}

/// The addresses of this machine's own interfaces, which are never a
/// target even when they are public.
fn own_addresses() -> Vec<IpAddr> {
    nix::ifaddrs::getifaddrs()
        .map(|interfaces| {
            interfaces.filter_map(|interface| interface.address).filter_map(|address| {
                if let Some(v4) = address.as_sockaddr_in() {
                    Some(IpAddr::V4(v4.ip()))
                } else {
                    address.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
                }
            })
        })
        .map(Iterator::collect)
        .unwrap_or_default()
}

/// Whether a webhook may reach `address`.
fn may_reach(address: IpAddr) -> bool {
    is_public(address) && !own_addresses().contains(&address)
}

/// Whether a host name names this machine: `localhost` and the names under
/// it (RFC 6761), however written: in any case, and with the trailing dots
/// of a fully qualified name (`localhost.`), which DNS reads as the same
/// name.
pub fn is_this_machine(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// Which targets webhooks may have.
#[derive(Clone, Copy, Debug)]
pub struct TargetPolicy {
    /// Private and loopback targets allowed too (`HADO_WEBHOOK_ALLOW_PRIVATE`).
    pub allow_private: bool,
}

/// How long the check at add time waits for a name to resolve.
const ADD_TIME_LOOKUP: Duration = Duration::from_secs(3);

impl TargetPolicy {
    /// Checks a webhook URL when it is added: an address written in it
    /// must be public ([`TargetPolicy::check_written`], the engine's own
    /// check), and a name must not resolve only to addresses that are not
    /// ([`TargetPolicy::check_name`], what `network::Internet` asks of DNS).
    #[cfg(test)]
    pub async fn check_new(self, url: &Url) -> Result<(), String> {
        if self.allow_private {
            return Ok(());
        }
        self.check_written(url)?;
        self.check_name(url).await
    }

    /// Checks the name a webhook URL gives, as it is added: not this
    /// machine, and not resolving only to private, loopback or reserved
    /// addresses. A name that cannot be resolved now is accepted: the check
    /// at send time decides then. An address written in the URL passes here.
    pub async fn check_name(self, url: &Url) -> Result<(), String> {
        self.check_written(url)?;
        let Some(Host::Domain(name)) = url.host() else { return Ok(()) };
        let port = url.port_or_known_default().unwrap_or(443);
        match tokio::time::timeout(ADD_TIME_LOOKUP, tokio::net::lookup_host((name, port))).await {
            Ok(Ok(addresses)) => {
                let addresses: Vec<IpAddr> = addresses.map(|socket| socket.ip()).collect();
                if !addresses.is_empty() && !addresses.iter().any(|address| may_reach(*address)) {
                    return Err(format!(
                        "{name} resolves only to private, loopback or reserved addresses, which are refused"
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Checks what a URL's host says by itself, at add time and at every
    /// send, the one check both use: an address written in it must pass,
    /// and a name must not be this machine's ([`is_this_machine`]); any
    /// other name is left to the resolver, which checks it as it is
    /// connected to.
    pub fn check_written(self, url: &Url) -> Result<(), String> {
        match url.host() {
            None => Err("names no host".into()),
            Some(Host::Ipv4(address)) => self.check_literal(IpAddr::V4(address)),
            Some(Host::Ipv6(address)) => self.check_literal(IpAddr::V6(address)),
            Some(Host::Domain(name)) if !self.allow_private && is_this_machine(name) => {
                Err(format!("{name} is this machine, which is refused"))
            }
            Some(Host::Domain(_)) => Ok(()),
        }
    }

    /// Checks an address written in a URL.
    pub fn check_literal(self, address: IpAddr) -> Result<(), String> {
        if self.allow_private || may_reach(address) {
            Ok(())
        } else {
            Err(format!("{address} is a private, loopback or reserved address, which is refused"))
        }
    }

    /// The resolver a webhook client connects through: it hands the client
    /// only the addresses that pass, so the address checked is the one used.
    pub fn resolver(self) -> Arc<PublicResolver> {
        Arc::new(PublicResolver { policy: self })
    }

    /// An HTTP client that reaches only what this policy lets through: no
    /// redirects and no proxy, so the address the resolver checked is the
    /// one connected to. For webhooks and clients' metadata documents.
    pub fn client(self, timeout: Duration) -> OutboundClient {
        let resolver = self.resolver();
        OutboundClient::new(|builder| {
            builder
                .timeout(timeout)
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .dns_resolver(resolver.clone())
        })
    }
}

/// A target the policy refused at connect time: a failure to report, not
/// to retry.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RefusedTarget(pub String);

impl RefusedTarget {
    /// The refusal behind a failed request, if that is why it failed.
    pub fn behind<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a RefusedTarget> {
        let mut current = Some(error);
        while let Some(error) = current {
            if let Some(refused) = error.downcast_ref::<RefusedTarget>() {
                return Some(refused);
            }
            current = error.source();
        }
        None
    }
}

/// Resolves names for the webhook client, dropping every address a webhook
/// may not reach; a name left with none fails to resolve, with the reason.
pub struct PublicResolver {
    policy: TargetPolicy,
}

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy;
        let name = name.as_str().to_owned();
        Box::pin(async move {
            if !policy.allow_private && is_this_machine(&name) {
                return Err(Box::new(RefusedTarget(format!(
                    "{name} is this machine, which is refused"
                ))) as _);
            }
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|socket| policy.check_literal(socket.ip()).is_ok())
                .collect();
            if allowed.is_empty() {
                return Err(Box::new(RefusedTarget(format!(
                    "{name} resolves only to private, loopback or reserved addresses, which are refused"
                ))) as _);
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_globally_routable_unicast_is_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.5",
            "172.20.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "192.0.2.10",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "240.0.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.0.8",
            "::1",
            "::",
            "::127.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "64:ff9b::7f00:1",
            "fd00::2",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "2002:7f00:1::",
            "100::1",
            "fec0::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in
            ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001::200e"]
        {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn obfuscated_and_reserved_addresses_are_refused_when_added() {
        let policy = TargetPolicy { allow_private: false };
        for url in [
            "http://2130706433/hook",
            "http://127.1/hook",
            "http://0x7f000001/hook",
            "http://[::127.0.0.1]/hook",
            "http://192.0.2.1/",
            "http://198.18.0.1/",
            "http://240.0.0.1/",
            "http://localhost:9/",
            "http://api.localhost/",
            "http://[::ffff:10.0.0.1]/",
        ] {
            let parsed = Url::parse(url).unwrap();
            assert!(policy.check_new(&parsed).await.is_err(), "{url}");
        }
        assert!(policy.check_new(&Url::parse("https://8.8.8.8/hook").unwrap()).await.is_ok());
        let open = TargetPolicy { allow_private: true };
        assert!(open.check_new(&Url::parse("http://127.0.0.1:9/").unwrap()).await.is_ok());
    }

    #[tokio::test]
    async fn this_machine_s_name_is_refused_however_it_is_written_when_added_and_sent() {
        let policy = TargetPolicy { allow_private: false };
        for url in [
            "https://localhost/x",
            "https://localhost./x",
            "https://LOCALHOST./x",
            "https://api.localhost./x",
            "https://localhost:8443./x",
        ] {
            let Ok(parsed) = Url::parse(url) else { continue };
            // Added (the engine's check, then the name's) and sent (the
            // delivery loop's check): the same refusal.
            let added = policy.check_new(&parsed).await.unwrap_err();
            let sent = policy.check_written(&parsed).unwrap_err();
            assert!(added.ends_with("is this machine, which is refused"), "{url}: {added}");
            assert_eq!(added, sent, "{url}");
        }
        assert!(is_this_machine("Localhost.."));
        assert!(!is_this_machine("localhost.example.com"));
        assert!(!is_this_machine("notlocalhost"));
        let open = TargetPolicy { allow_private: true };
        assert!(open.check_written(&Url::parse("https://localhost./x").unwrap()).is_ok());
    }

    #[test]
    fn this_machines_own_addresses_are_refused() {
        let policy = TargetPolicy { allow_private: false };
        for address in own_addresses() {
            assert!(policy.check_literal(address).is_err(), "{address}");
        }
    }
}
