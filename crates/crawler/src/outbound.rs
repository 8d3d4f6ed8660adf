//! The HTTP client of every outbound request that is not a crawl's page fetch: search
//! providers, the CDX index, Common Crawl's WET files. The same address rules as the crawl
//! ([`crate::safety`]): IP literals checked here, names in the resolver the client connects
//! through, every redirect hop checked again, no proxy. A client that carries a secret (an
//! API key in a header or the query) follows a redirect only to the same host and never
//! sends a `Referer`, so the key reaches no one else.
//!
//! ```no_run
//! # async fn demo() -> crawler::Result<()> {
//! use crawler::outbound::{Outbound, OutboundSettings, Redirects};
//!
//! let client = Outbound::new(&OutboundSettings {
//!     redirects: Redirects::SameHost,
//!     ..OutboundSettings::new(&crawler::SafetySettings::default(), "copyhound/1")
//! })?;
//! let response = client.send(client.client().get("https://api.search.example/q")).await?;
//! # drop(response); Ok(()) }
//! ```

use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

use crate::error::{Error, Result};
use crate::safety::{AddressPolicy, GuardedResolver, ResolveFailure, SafetySettings};

/// How a client treats a redirect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirects {
    /// Not followed: the 3xx is the answer.
    None,
    /// Followed to the same host only (an upgrade from http to https included): for a client
    /// that carries a secret. A redirect to another host is an error.
    SameHost,
    /// Followed to any host whose address the rules allow, each hop checked: for a client
    /// without a secret.
    Checked,
}

/// Redirects followed at most, as the crawl's `fetch.max_redirects` default.
const MAX_REDIRECTS: usize = 10;

/// What an [`Outbound`] client is built with.
#[derive(Clone, Debug)]
pub struct OutboundSettings {
    /// The address rules (the deployment's `[crawler.fetch.safety]`).
    pub safety: SafetySettings,
    /// The `User-Agent` sent.
    pub user_agent: String,
    /// TCP and TLS set-up.
    pub connect_timeout: Duration,
    /// Longest silence while reading, if any.
    pub read_timeout: Option<Duration>,
    /// The whole exchange, body included, if any.
    pub timeout: Option<Duration>,
    /// How redirects are treated.
    pub redirects: Redirects,
}

impl OutboundSettings {
    /// `safety`'s rules, `user_agent`, a 10 s connect timeout, no other timeout and no
    /// redirect followed.
    pub fn new(safety: &SafetySettings, user_agent: &str) -> Self {
        OutboundSettings {
            safety: safety.clone(),
            user_agent: user_agent.to_owned(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: None,
            timeout: None,
            redirects: Redirects::None,
        }
    }
}

/// An HTTP client under the crawler's address rules. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Outbound {
    client: reqwest::Client,
    policy: Arc<AddressPolicy>,
    connect_timeout: Duration,
    read_timeout: Duration,
}

/// Why a redirect was not followed; found again in reqwest's error chain.
#[derive(Clone, Debug)]
struct RedirectFailure {
    url: String,
    target: String,
    reason: String,
}

impl std::fmt::Display for RedirectFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "redirect from {} to {} refused: {}",
            self.url, self.target, self.reason
        )
    }
}

impl std::error::Error for RedirectFailure {}

impl Outbound {
    /// Builds the client.
    ///
    /// # Errors
    /// [`Error::InvalidSetting`] for a user agent that is not a header value or a client that
    /// cannot be built (no TLS roots).
    pub fn new(settings: &OutboundSettings) -> Result<Self> {
        let policy = Arc::new(AddressPolicy::new(&settings.safety));
        let redirect = match settings.redirects {
            Redirects::None => reqwest::redirect::Policy::none(),
            mode => {
                let policy = Arc::clone(&policy);
                reqwest::redirect::Policy::custom(move |attempt| {
                    let from = attempt.previous().last().cloned();
                    let refused = |reason: String| RedirectFailure {
                        url: shown(from.as_ref()),
                        target: shown(Some(attempt.url())),
                        reason,
                    };
                    if attempt.previous().len() > MAX_REDIRECTS {
                        let failure = refused(format!("more than {MAX_REDIRECTS} redirects"));
                        return attempt.error(failure);
                    }
                    if mode == Redirects::SameHost
                        && let Some(from) = &from
                        && !same_host(from, attempt.url())
                    {
                        let failure = refused(
                            "the request carries a key that is for its own host only".to_owned(),
                        );
                        return attempt.error(failure);
                    }
                    match check_literal(&policy, attempt.url()) {
                        Ok(()) => attempt.follow(),
                        Err(Literal::Scheme(scheme)) => {
                            let failure = refused(format!("{scheme:?} is not http or https"));
                            attempt.error(failure)
                        }
                        Err(Literal::Refused(failure)) => attempt.error(failure),
                    }
                })
            }
        };
        let mut builder = reqwest::Client::builder()
            .redirect(redirect)
            // A proxy would connect on our behalf and bypass the address checks.
            .no_proxy()
            .dns_resolver(GuardedResolver::new(Arc::clone(&policy)))
            // A Referer would carry the last URL, query and key included, to the next host.
            .referer(false)
            .connect_timeout(settings.connect_timeout)
            .user_agent(settings.user_agent.as_str());
        if let Some(read) = settings.read_timeout {
            builder = builder.read_timeout(read);
        }
        if let Some(total) = settings.timeout {
            builder = builder.timeout(total);
        }
        let client = builder.build().map_err(|e| Error::InvalidSetting {
            name: "fetch",
            value: "http client".to_owned(),
            reason: crate::fetch::error_chain(&e),
        })?;
        Ok(Outbound {
            client,
            policy,
            connect_timeout: settings.connect_timeout,
            read_timeout: settings
                .read_timeout
                .or(settings.timeout)
                .unwrap_or_default(),
        })
    }

    /// The client to build requests with; send them with [`Outbound::send`].
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends `request` once its URL passed the rules (a name's addresses are checked when
    /// the client connects, a redirect's before it is followed).
    ///
    /// Errors name the URL without its query and user information, where keys travel.
    ///
    /// # Errors
    /// [`Error::UnsupportedScheme`], [`Error::AddressRefused`] (the URL or a redirect),
    /// [`Error::RedirectRefused`], [`Error::Dns`], [`Error::Timeout`],
    /// [`Error::Connect`], [`Error::Transport`].
    pub async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let (client, request) = request.build_split();
        let request = request.map_err(|e| Error::InvalidUrl {
            url: e.url().map(|u| shown(Some(u))).unwrap_or_default(),
            reason: crate::fetch::error_chain(&e.without_url()),
        })?;
        let url = request.url().clone();
        match check_literal(&self.policy, &url) {
            Ok(()) => {}
            Err(Literal::Scheme(scheme)) => {
                return Err(Error::UnsupportedScheme {
                    url: shown(Some(&url)),
                    scheme,
                });
            }
            Err(Literal::Refused(failure)) => return Err(failure.into()),
        }
        client
            .execute(request)
            .await
            .map_err(|e| self.classify(e, &url))
    }

    /// The error of a read of a response this client sent, as [`Outbound::send`] names them.
    pub fn read_error(&self, e: reqwest::Error, url: &Url) -> Error {
        self.classify(e, url)
    }

    fn classify(&self, e: reqwest::Error, url: &Url) -> Error {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(s) = source {
            if let Some(failure) = s.downcast_ref::<RedirectFailure>() {
                return Error::RedirectRefused {
                    url: failure.url.clone(),
                    target: failure.target.clone(),
                    reason: failure.reason.clone(),
                };
            }
            source = s.source();
        }
        crate::fetch::classify(
            e.without_url(),
            shown(Some(url)),
            self.connect_timeout,
            self.read_timeout,
        )
    }
}

enum Literal {
    Scheme(String),
    Refused(ResolveFailure),
}

/// The scheme and an IP-literal host of `url` against `policy`; a name is checked by the
/// resolver when the client connects.
fn check_literal(policy: &AddressPolicy, url: &Url) -> std::result::Result<(), Literal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Literal::Scheme(url.scheme().to_owned()));
    }
    let ip: std::net::IpAddr = match url.host() {
        Some(Host::Ipv4(ip)) => ip.into(),
        Some(Host::Ipv6(ip)) => ip.into(),
        _ => return Ok(()),
    };
    match policy.check(&ip.to_string(), ip) {
        Ok(()) => Ok(()),
        Err(Error::AddressRefused { host, addr, class }) => {
            Err(Literal::Refused(ResolveFailure::Refused {
                host,
                addr,
                class,
            }))
        }
        Err(_) => Ok(()),
    }
}

/// Whether a redirect from `from` to `to` stays on the host: the same name and port, or an
/// upgrade from http to https on the default ports.
fn same_host(from: &Url, to: &Url) -> bool {
    if from.host_str() != to.host_str() {
        return false;
    }
    from.port_or_known_default() == to.port_or_known_default()
        || (from.scheme() == "http"
            && to.scheme() == "https"
            && from.port().is_none()
            && to.port().is_none())
}

/// `url` as messages show it: scheme, host, port and path, without user information, query
/// or fragment (where keys and passwords travel).
fn shown(url: Option<&Url>) -> String {
    let Some(url) = url else {
        return String::new();
    };
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_host_allows_the_host_and_an_upgrade_only() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_host(
            &u("https://a.example/x"),
            &u("https://a.example/y")
        ));
        assert!(same_host(
            &u("http://a.example/x"),
            &u("https://a.example/y")
        ));
        assert!(!same_host(
            &u("https://a.example/"),
            &u("https://b.example/")
        ));
        assert!(!same_host(
            &u("http://a.example:81/"),
            &u("http://a.example:82/")
        ));
        assert!(!same_host(
            &u("https://a.example/"),
            &u("https://a.example.evil/")
        ));
    }

    #[test]
    fn shown_urls_lose_their_keys() {
        let url = Url::parse("https://u:pw@api.example/s?q=1&api_key=k#f").unwrap();
        assert_eq!(shown(Some(&url)), "https://api.example/s");
    }
}
