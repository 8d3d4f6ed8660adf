//! The address policy that keeps the crawler from being turned against our own network.
//!
//! Suspect sites choose the URLs we fetch (links, redirects, sitemaps), so a hostile site can
//! point us at `http://127.0.0.1:5432/`, the cloud metadata service at `169.254.169.254` or a
//! host on the office LAN. Every address is checked **after** DNS resolution, inside the
//! resolver that the HTTP client connects with, so a name that resolves to a private address
//! (or re-resolves to one later: DNS rebinding) is refused too. IP-literal hosts never reach a
//! resolver, so [`Fetcher`](crate::Fetcher) checks them itself on every hop.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

pub use crate::error::AddressClass;
use crate::error::{Error, Result};

/// Classifies an address; `None` means public unicast, which is always allowed.
///
/// IPv6 addresses that embed an IPv4 address (`::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
/// `2002::/16`) are judged by the embedded address, since that is where the packets go.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => AddressClass::Unspecified,
        (127, _, _) => AddressClass::Loopback,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => AddressClass::Private,
        (169, 254, _) => AddressClass::LinkLocal,
        (100, 64..=127, _) => AddressClass::SharedAddressSpace,
        (224..=239, _, _) => AddressClass::Multicast,
        (255, 255, 255) if ip == Ipv4Addr::BROADCAST => AddressClass::Broadcast,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18..=19, _) => {
            AddressClass::Reserved
        }
        (240..=255, _, _) => AddressClass::Reserved,
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let seg = ip.segments();
    Some(match seg[0] {
        _ if ip.is_unspecified() => AddressClass::Unspecified,
        _ if ip.is_loopback() => AddressClass::Loopback,
        0xfc00..=0xfdff => AddressClass::Private,
        0xfe80..=0xfebf => AddressClass::LinkLocal,
        // Deprecated site-local (RFC 3879); still routed internally by some networks.
        0xfec0..=0xfeff => AddressClass::Reserved,
        0xff00..=0xffff => AddressClass::Multicast,
        // Documentation 2001:db8::/32 and Teredo 2001::/32 (a tunnel to any IPv4 host).
        0x2001 if seg[1] == 0x0db8 || seg[1] == 0 => AddressClass::Reserved,
        // Anything outside global unicast 2000::/3 (besides the cases above) is not a web host.
        s if !(0x2000..=0x3fff).contains(&s) => AddressClass::Reserved,
        _ => return None,
    })
}

fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let seg = ip.segments();
    let tail =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    match seg {
        // IPv4-mapped ::ffff:a.b.c.d and the deprecated IPv4-compatible ::a.b.c.d.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(tail(hi, lo)),
        [0, 0, 0, 0, 0, 0, hi, lo] if hi != 0 => Some(tail(hi, lo)),
        // NAT64 well-known prefix.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(tail(hi, lo)),
        // 6to4 embeds the IPv4 address right after the prefix.
        [0x2002, hi, lo, ..] => Some(tail(hi, lo)),
        _ => None,
    }
}

/// Which non-public addresses the crawler may connect to.
///
/// Default: none. Tests and demos that crawl a local server set `allow_private`, or list the
/// one network they need in `allowed_networks`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct SafetySettings {
    /// Allow every non-public address (loopback, private, link-local, multicast, ...).
    /// The CLI's `--allow-private` sets this.
    pub allow_private: bool,
    /// Networks allowed even though they are not public, e.g. `"10.20.0.0/16"` for a lab.
    pub allowed_networks: Vec<IpNet>,
    /// Names answered from this table instead of DNS, like `/etc/hosts` (`"search.lab" =
    /// "10.20.0.5"`); their addresses pass the same rules as looked-up ones.
    pub hosts: BTreeMap<String, IpAddr>,
}

/// The compiled [`SafetySettings`]: decides, address by address, what may be connected to.
#[derive(Clone, Debug, Default)]
pub struct AddressPolicy {
    allow_private: bool,
    allowed: Vec<IpNet>,
    /// [`SafetySettings::hosts`], names lower-cased without a final dot.
    hosts: BTreeMap<String, IpAddr>,
}

impl AddressPolicy {
    /// Refuses every non-public address (the production default).
    pub fn public_only() -> Self {
        Self::default()
    }

    /// Allows everything, for tests and demos against local servers.
    pub fn allow_all() -> Self {
        Self {
            allow_private: true,
            ..Self::default()
        }
    }

    /// Builds the policy from settings.
    pub fn new(settings: &SafetySettings) -> Self {
        Self {
            allow_private: settings.allow_private,
            allowed: settings.allowed_networks.clone(),
            hosts: settings
                .hosts
                .iter()
                .map(|(name, ip)| (host_key(name), *ip))
                .collect(),
        }
    }

    /// The addresses `host` may be connected to: its [`SafetySettings::hosts`] entry or what
    /// DNS answers, the refused ones dropped. What the HTTP clients connect through, and what
    /// a site's start URL is checked with when it is added.
    ///
    /// # Errors
    ///
    /// [`Error::AddressRefused`] when every address is refused, [`Error::Dns`] when the
    /// lookup fails.
    pub async fn resolve(&self, host: &str) -> Result<Vec<SocketAddr>> {
        self.resolve_checked(host).await.map_err(Error::from)
    }

    async fn resolve_checked(&self, host: &str) -> Result<Vec<SocketAddr>, ResolveFailure> {
        let resolved: Vec<SocketAddr> = match self.hosts.get(&host_key(host)) {
            Some(ip) => vec![SocketAddr::new(*ip, 0)],
            None => tokio::net::lookup_host((host, 0))
                .await
                .map_err(|e| ResolveFailure::Lookup {
                    host: host.to_owned(),
                    reason: e.to_string(),
                })?
                .collect(),
        };
        let mut first_refusal = None;
        let allowed: Vec<SocketAddr> = resolved
            .into_iter()
            .filter(|addr| match self.refusal(addr.ip()) {
                None => true,
                Some(class) => {
                    first_refusal.get_or_insert((addr.ip(), class));
                    false
                }
            })
            .collect();
        if allowed.is_empty() {
            return Err(match first_refusal {
                Some((addr, class)) => ResolveFailure::Refused {
                    host: host.to_owned(),
                    addr,
                    class,
                },
                None => ResolveFailure::Lookup {
                    host: host.to_owned(),
                    reason: "no addresses".to_owned(),
                },
            });
        }
        Ok(allowed)
    }

    /// Checks one resolved address of `host`.
    ///
    /// # Errors
    ///
    /// [`Error::AddressRefused`] when the address is not public and not allowed.
    pub fn check(&self, host: &str, ip: IpAddr) -> Result<()> {
        match self.refusal(ip) {
            None => Ok(()),
            Some(class) => Err(Error::AddressRefused {
                host: host.to_owned(),
                addr: ip,
                class,
            }),
        }
    }

    /// Checks a URL whose host is written as an address (a loopback, private or link-local IP
    /// in any of its spellings: `0x7f000001`, `2130706433` and `127.1` are all 127.0.0.1 once
    /// parsed, and `localhost`), before anything is fetched: what a site's start URL and a
    /// webhook's URL are checked with when they are added. A host name passes; where it points
    /// can change, and each fetch checks it again.
    ///
    /// # Errors
    ///
    /// [`Error::AddressRefused`] when the address is not public and not allowed.
    pub fn check_literal(&self, url: &url::Url) -> Result<()> {
        let ip = match url.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(url::Host::Domain(d))
                if d.eq_ignore_ascii_case("localhost")
                    || d.to_ascii_lowercase().ends_with(".localhost") =>
            {
                IpAddr::V4(Ipv4Addr::LOCALHOST)
            }
            _ => return Ok(()),
        };
        self.check(url.host_str().unwrap_or_default(), ip)
    }

    fn refusal(&self, ip: IpAddr) -> Option<AddressClass> {
        let class = classify(ip)?;
        if self.allow_private || self.allowed.iter().any(|net| net.contains(&ip)) {
            None
        } else {
            Some(class)
        }
    }
}

/// The resolver error the guard hands to the HTTP client; [`Fetcher`](crate::Fetcher) finds it
/// again in the client's error chain and turns it into [`Error::AddressRefused`] or
/// [`Error::Dns`].
#[derive(Clone, Debug)]
pub(crate) enum ResolveFailure {
    Refused {
        host: String,
        addr: IpAddr,
        class: AddressClass,
    },
    Lookup {
        host: String,
        reason: String,
    },
}

impl std::fmt::Display for ResolveFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused { host, addr, class } => {
                write!(f, "{host} resolves to {class} address {addr}")
            }
            Self::Lookup { host, reason } => write!(f, "dns lookup failed for {host}: {reason}"),
        }
    }
}

impl std::error::Error for ResolveFailure {}

impl From<ResolveFailure> for Error {
    fn from(failure: ResolveFailure) -> Self {
        match failure {
            ResolveFailure::Refused { host, addr, class } => {
                Error::AddressRefused { host, addr, class }
            }
            ResolveFailure::Lookup { host, reason } => Error::Dns { host, reason },
        }
    }
}

/// The DNS resolver the HTTP client connects through: system resolution, then the policy.
///
/// Disallowed addresses are dropped; if none is left the lookup fails with
/// [`ResolveFailure::Refused`], so the client never opens a socket to them.
#[derive(Clone, Debug)]
pub(crate) struct GuardedResolver {
    policy: Arc<AddressPolicy>,
}

impl GuardedResolver {
    pub(crate) fn new(policy: Arc<AddressPolicy>) -> Self {
        Self { policy }
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let allowed = policy
                .resolve_checked(&host)
                .await
                .map_err(|failure| Box::new(failure) as Box<dyn std::error::Error + Send + Sync>)?;
            tracing::trace!(host = %host, addrs = allowed.len(), "resolved");
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// A host name as the `hosts` table is keyed: lower-case, without the final dot that
/// makes it absolute (`Search.Lab.` is `search.lab`).
fn host_key(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<AddressClass> {
        classify(s.parse().unwrap())
    }

    #[test]
    fn classifies_non_public_ranges() {
        use AddressClass::*;
        for (addr, want) in [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("169.254.169.254", Some(LinkLocal)),
            ("224.0.0.1", Some(Multicast)),
            ("0.0.0.0", Some(Unspecified)),
            ("255.255.255.255", Some(Broadcast)),
            ("100.64.0.1", Some(SharedAddressSpace)),
            ("192.0.2.7", Some(Reserved)),
            ("240.0.0.1", Some(Reserved)),
            ("::1", Some(Loopback)),
            ("::", Some(Unspecified)),
            ("fd12::1", Some(Private)),
            ("fe80::1", Some(LinkLocal)),
            ("ff02::1", Some(Multicast)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.0.0.1", Some(Private)),
            ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
            ("2002:c0a8:0101::1", Some(Private)),
            ("2001:db8::1", Some(Reserved)),
            ("8.8.8.8", None),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("2606:4700::1111", None),
            ("::ffff:1.1.1.1", None),
        ] {
            assert_eq!(class(addr), want, "{addr}");
        }
    }

    #[test]
    fn policy_allows_listed_networks_only() {
        let policy = AddressPolicy::new(&SafetySettings {
            allow_private: false,
            allowed_networks: vec!["127.0.0.1/32".parse().unwrap()],
            ..SafetySettings::default()
        });
        assert!(policy.check("a", "127.0.0.1".parse().unwrap()).is_ok());
        assert!(policy.check("a", "93.184.216.34".parse().unwrap()).is_ok());
        let err = policy.check("b", "127.0.0.2".parse().unwrap()).unwrap_err();
        assert!(matches!(
            err,
            Error::AddressRefused {
                class: AddressClass::Loopback,
                ..
            }
        ));
        assert!(err.to_string().contains("127.0.0.2"), "{err}");
        assert!(
            AddressPolicy::allow_all()
                .check("c", "10.0.0.1".parse().unwrap())
                .is_ok()
        );
        assert!(
            AddressPolicy::public_only()
                .check("c", "10.0.0.1".parse().unwrap())
                .is_err()
        );
    }

    #[tokio::test]
    async fn resolver_refuses_names_that_resolve_to_loopback() {
        use reqwest::dns::Resolve;
        let resolver = GuardedResolver::new(Arc::new(AddressPolicy::public_only()));
        let err = resolver
            .resolve("localhost".parse().unwrap())
            .await
            .err()
            .unwrap();
        let failure = err.downcast_ref::<ResolveFailure>().unwrap();
        assert!(
            matches!(failure, ResolveFailure::Refused { .. }),
            "{failure}"
        );
        let allowed = GuardedResolver::new(Arc::new(AddressPolicy::allow_all()));
        assert!(allowed.resolve("localhost".parse().unwrap()).await.is_ok());
    }

    #[tokio::test]
    async fn names_in_the_hosts_table_pass_the_same_rules() {
        let settings = |allow_private| SafetySettings {
            allow_private,
            hosts: [("Pirate.Test".to_owned(), "127.0.0.1".parse().unwrap())].into(),
            ..SafetySettings::default()
        };
        let err = AddressPolicy::new(&settings(false))
            .resolve("pirate.test.")
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::AddressRefused {
                    class: AddressClass::Loopback,
                    ..
                }
            ),
            "{err}"
        );
        let allowed = AddressPolicy::new(&settings(true))
            .resolve("PIRATE.test")
            .await
            .unwrap();
        assert_eq!(allowed, ["127.0.0.1:0".parse().unwrap()]);
    }
}
