//! robots.txt: fetched once per origin, cached with a TTL, obeyed unless a site overrides it.
//!
//! Status handling follows RFC 9309: a 2xx body is parsed; a 4xx means "no rules"; a 5xx,
//! a 429 or a network failure means "disallow everything for now" and is cached for the
//! shorter `error_ttl`, so a flaky server is asked again soon but never crawled blind.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use texting_robots::Robot;
use url::Url;

use crate::error::{Error, Result};

/// Settings for [`RobotsCache`].
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct RobotsSettings {
    /// Obey robots.txt (default). Turning this off is a crawl-wide override and is logged.
    pub obey: bool,
    /// Hosts or registrable domains whose robots.txt is ignored: the per-site override.
    /// Each use is logged once per host at `warn`.
    pub ignore_for: Vec<String>,
    /// How long fetched rules are trusted (RFC 9309 suggests at most a day).
    #[serde(with = "crate::duration_serde")]
    pub ttl: Duration,
    /// How long a failed fetch (5xx, 429, network) blocks the origin before we ask again.
    #[serde(with = "crate::duration_serde")]
    pub error_ttl: Duration,
    /// Bytes of robots.txt that are parsed (RFC 9309: at least 500 KiB).
    pub max_bytes: u64,
    /// Origins kept in memory; the least recently fetched are dropped beyond this.
    pub cache_capacity: usize,
}

impl Default for RobotsSettings {
    fn default() -> Self {
        Self {
            obey: true,
            ignore_for: Vec::new(),
            ttl: Duration::from_secs(24 * 3600),
            error_ttl: Duration::from_secs(10 * 60),
            max_bytes: 512 * 1024,
            cache_capacity: 10_000,
        }
    }
}

impl RobotsSettings {
    /// Checks the lifetimes and limits; keys are relative to `[crawler.robots]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and what is allowed.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        bounds::at_least("ttl", self.ttl, bounds::MIN_TIMEOUT)?;
        bounds::at_least("error_ttl", self.error_ttl, bounds::MIN_TIMEOUT)?;
        bounds::at_least("max_bytes", self.max_bytes, 1)?;
        bounds::at_least("cache_capacity", self.cache_capacity, 1)
    }
}

/// Why the rules are what they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotsSource {
    /// A robots.txt was fetched and parsed.
    Parsed,
    /// robots.txt answered 4xx: everything is allowed.
    Missing,
    /// robots.txt could not be fetched (5xx, 429, network): everything is disallowed for now.
    Unavailable,
    /// robots.txt is ignored for this host by configuration.
    Ignored,
}

/// The rules for one origin.
#[derive(Debug)]
pub struct RobotsRules {
    robot: Option<Robot>,
    source: RobotsSource,
    /// `Crawl-delay` for our agent, if any.
    pub crawl_delay: Option<Duration>,
    /// `Sitemap:` lines, resolved against the robots.txt URL.
    pub sitemaps: Vec<Url>,
}

impl RobotsRules {
    /// Parses a robots.txt body for `agent` (the product token of our User-Agent).
    pub fn parse(agent: &str, body: &[u8], robots_url: &Url) -> Self {
        match Robot::new(agent, body) {
            Ok(robot) => Self {
                crawl_delay: robot
                    .delay
                    .filter(|d| d.is_finite() && *d > 0.0)
                    .map(|d| Duration::from_secs_f32(d.min(86_400.0))),
                sitemaps: robot
                    .sitemaps
                    .iter()
                    .filter_map(|s| robots_url.join(s).ok())
                    .collect(),
                robot: Some(robot),
                source: RobotsSource::Parsed,
            },
            // The parser is forgiving; a file it cannot read is treated like a missing one.
            Err(_) => Self::with_source(RobotsSource::Missing),
        }
    }

    /// Rules with nothing in them, for `source`.
    pub fn with_source(source: RobotsSource) -> Self {
        Self {
            robot: None,
            source,
            crawl_delay: None,
            sitemaps: Vec::new(),
        }
    }

    /// Where the rules came from.
    pub fn source(&self) -> RobotsSource {
        self.source
    }

    /// Whether `url` may be fetched.
    pub fn allowed(&self, url: &Url) -> bool {
        match self.source {
            RobotsSource::Unavailable => url.path() == "/robots.txt",
            RobotsSource::Missing | RobotsSource::Ignored => true,
            RobotsSource::Parsed => self.robot.as_ref().is_none_or(|r| r.allowed(url.as_str())),
        }
    }

    /// `Ok` if `url` may be fetched.
    ///
    /// # Errors
    ///
    /// [`Error::RobotsDenied`] naming the host and path.
    pub fn check(&self, url: &Url) -> Result<()> {
        if self.allowed(url) {
            Ok(())
        } else {
            Err(Error::RobotsDenied {
                host: url.host_str().unwrap_or_default().to_owned(),
                path: match url.query() {
                    Some(q) => format!("{}?{q}", url.path()),
                    None => url.path().to_owned(),
                },
            })
        }
    }
}

/// What a robots.txt fetch produced, as the caller saw it.
#[derive(Debug)]
pub enum RobotsFetch {
    /// A response: its status and (possibly truncated) body.
    Response { status: u16, body: bytes::Bytes },
    /// No response (timeout, connection failure).
    Failed,
    /// Our own safety policy refused the address: nothing on this origin will be fetched
    /// anyway, so no rules are needed (and the page fetch reports the refusal).
    Refused,
}

/// The `robots.txt` URL for `url`'s origin.
pub fn robots_url(url: &Url) -> Url {
    let mut r = url.clone();
    r.set_path("/robots.txt");
    r.set_query(None);
    r.set_fragment(None);
    r
}

fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

struct Slot {
    rules: Option<(Arc<RobotsRules>, Instant)>,
}

/// Per-origin robots.txt rules with a TTL, fetched once even when many tasks ask at once.
///
/// The cache does not fetch by itself: [`RobotsCache::rules_for`] takes the fetch as a
/// closure so the caller can run it under politeness and the safety guard like any request.
pub struct RobotsCache {
    settings: RobotsSettings,
    agent: String,
    slots: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Slot>>>>,
    warned: Mutex<std::collections::HashSet<String>>,
}

impl RobotsCache {
    /// A cache for the robots agent token `agent` (e.g. `copyhound`).
    pub fn new(agent: impl Into<String>, settings: RobotsSettings) -> Self {
        if !settings.obey {
            tracing::warn!("robots.txt is ignored for the whole crawl (robots.obey = false)");
        }
        Self {
            settings,
            agent: agent.into(),
            slots: Mutex::new(HashMap::new()),
            warned: Mutex::new(Default::default()),
        }
    }

    /// Whether robots.txt is ignored for `url`'s host by an override; logs the first time
    /// per host.
    pub fn is_overridden(&self, url: &Url) -> bool {
        if !self.settings.obey {
            return true;
        }
        let host = url.host_str().unwrap_or_default();
        let domain = extract::links::registrable_domain(host);
        let overridden = self
            .settings
            .ignore_for
            .iter()
            .any(|d| d.eq_ignore_ascii_case(host) || d.eq_ignore_ascii_case(&domain));
        if overridden
            && self
                .warned
                .lock()
                .expect("robots warn set")
                .insert(host.to_owned())
        {
            tracing::warn!(
                host,
                "robots.txt ignored for this site by robots.ignore_for"
            );
        }
        overridden
    }

    /// The fresh cached rules for `url`'s origin, without fetching.
    pub fn cached(&self, url: &Url) -> Option<Arc<RobotsRules>> {
        if self.is_overridden(url) {
            return Some(Arc::new(RobotsRules::with_source(RobotsSource::Ignored)));
        }
        let slot = self
            .slots
            .lock()
            .expect("robots slots")
            .get(&origin_key(url))?
            .clone();
        let slot = slot.try_lock().ok()?;
        slot.rules
            .as_ref()
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(r, _)| Arc::clone(r))
    }

    /// The rules for `url`'s origin, calling `fetch(robots_url)` if they are missing or stale.
    /// Concurrent callers for one origin wait for a single fetch.
    #[tracing::instrument(skip_all, fields(origin = %url.origin().ascii_serialization()))]
    pub async fn rules_for<F, Fut>(&self, url: &Url, fetch: F) -> Arc<RobotsRules>
    where
        F: FnOnce(Url) -> Fut,
        Fut: Future<Output = RobotsFetch>,
    {
        if self.is_overridden(url) {
            return Arc::new(RobotsRules::with_source(RobotsSource::Ignored));
        }
        let slot = self.slot(url);
        let mut slot = slot.lock().await;
        if let Some((rules, expires)) = &slot.rules
            && *expires > Instant::now()
        {
            return Arc::clone(rules);
        }
        let robots = robots_url(url);
        let (rules, ttl) = match fetch(robots.clone()).await {
            RobotsFetch::Response { status, body } if (200..300).contains(&status) => {
                let body = &body[..body.len().min(self.settings.max_bytes as usize)];
                (
                    RobotsRules::parse(&self.agent, body, &robots),
                    self.settings.ttl,
                )
            }
            RobotsFetch::Response { status, .. }
                if (400..500).contains(&status) && status != 429 =>
            {
                (
                    RobotsRules::with_source(RobotsSource::Missing),
                    self.settings.ttl,
                )
            }
            RobotsFetch::Refused => (
                RobotsRules::with_source(RobotsSource::Missing),
                self.settings.error_ttl,
            ),
            other => {
                tracing::warn!(url = %robots, outcome = ?other_status(&other), "robots.txt unavailable; origin disallowed until retried");
                (
                    RobotsRules::with_source(RobotsSource::Unavailable),
                    self.settings.error_ttl,
                )
            }
        };
        let rules = Arc::new(rules);
        slot.rules = Some((Arc::clone(&rules), Instant::now() + ttl));
        rules
    }

    fn slot(&self, url: &Url) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut slots = self.slots.lock().expect("robots slots");
        if slots.len() >= self.settings.cache_capacity {
            evict(&mut slots, self.settings.cache_capacity);
        }
        slots
            .entry(origin_key(url))
            .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Slot { rules: None })))
            .clone()
    }
}

fn other_status(fetch: &RobotsFetch) -> Option<u16> {
    match fetch {
        RobotsFetch::Response { status, .. } => Some(*status),
        RobotsFetch::Failed | RobotsFetch::Refused => None,
    }
}

/// Drops expired and then the earliest-expiring entries until a tenth of the capacity is free.
/// Slots being fetched right now are kept.
fn evict(slots: &mut HashMap<String, Arc<tokio::sync::Mutex<Slot>>>, capacity: usize) {
    let now = Instant::now();
    let mut by_expiry: Vec<(Instant, String)> = slots
        .iter()
        .filter_map(|(k, s)| {
            let s = s.try_lock().ok()?;
            Some((s.rules.as_ref().map_or(now, |(_, e)| *e), k.clone()))
        })
        .collect();
    by_expiry.sort();
    let target = capacity - capacity / 10 - 1;
    for (expires, key) in by_expiry {
        if slots.len() <= target && expires > now {
            break;
        }
        slots.remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    const TXT: &[u8] = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n\nUser-agent: copyhound\nDisallow: /private/\nDisallow: /search\nAllow: /private/ok\nCrawl-delay: 0.5\n\nSitemap: /sitemap.xml\n";

    #[test]
    fn rules_follow_the_agent_group() {
        let r = RobotsRules::parse("copyhound", TXT, &url("http://a.test/robots.txt"));
        assert!(r.allowed(&url("http://a.test/book/1.html")));
        assert!(!r.allowed(&url("http://a.test/private/x")));
        assert!(r.allowed(&url("http://a.test/private/ok")));
        assert!(!r.allowed(&url("http://a.test/search?q=1")));
        assert_eq!(r.crawl_delay, Some(Duration::from_millis(500)));
        assert_eq!(r.sitemaps, [url("http://a.test/sitemap.xml")]);
        let err = r.check(&url("http://a.test/private/x?y=1")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "robots.txt for a.test denied /private/x?y=1"
        );
        let other = RobotsRules::parse("otherbot", TXT, &url("http://a.test/robots.txt"));
        assert!(other.allowed(&url("http://a.test/search")));
        assert_eq!(other.crawl_delay, Some(Duration::from_secs(2)));
    }

    #[tokio::test]
    async fn statuses_map_to_rfc9309_outcomes_and_fetch_once() {
        let cache = RobotsCache::new("copyhound", RobotsSettings::default());
        let calls = AtomicUsize::new(0);
        let fetch = |status: u16| {
            let calls = &calls;
            move |_u: Url| async move {
                calls.fetch_add(1, Ordering::SeqCst);
                RobotsFetch::Response {
                    status,
                    body: bytes::Bytes::from_static(TXT),
                }
            }
        };
        let r = cache.rules_for(&url("http://a.test/x"), fetch(200)).await;
        assert_eq!(r.source(), RobotsSource::Parsed);
        let r = cache.rules_for(&url("http://a.test/y"), fetch(200)).await;
        assert_eq!(
            (r.source(), calls.load(Ordering::SeqCst)),
            (RobotsSource::Parsed, 1)
        );
        assert!(cache.cached(&url("http://a.test/z")).is_some());

        let r = cache.rules_for(&url("http://b.test/x"), fetch(404)).await;
        assert!(r.allowed(&url("http://b.test/private/x")));
        for status in [500, 503, 429] {
            let host = format!("http://s{status}.test/x");
            let r = cache.rules_for(&url(&host), fetch(status)).await;
            assert_eq!(r.source(), RobotsSource::Unavailable);
            assert!(!r.allowed(&url(&host)));
        }
        let r = cache
            .rules_for(&url("http://down.test/"), |_| async { RobotsFetch::Failed })
            .await;
        assert!(!r.allowed(&url("http://down.test/")));
    }

    #[tokio::test]
    async fn override_ignores_robots_per_site() {
        let settings = RobotsSettings {
            ignore_for: vec!["pirate.test".into()],
            ..RobotsSettings::default()
        };
        let cache = RobotsCache::new("copyhound", settings);
        let r = cache
            .rules_for(&url("http://www.pirate.test/private/x"), |_| async {
                panic!("an overridden site's robots.txt is not fetched")
            })
            .await;
        assert_eq!(r.source(), RobotsSource::Ignored);
        assert!(r.allowed(&url("http://www.pirate.test/private/x")));
    }

    #[tokio::test]
    async fn cache_stays_bounded() {
        let settings = RobotsSettings {
            cache_capacity: 20,
            ..RobotsSettings::default()
        };
        let cache = RobotsCache::new("copyhound", settings);
        for i in 0..100 {
            let u = url(&format!("http://h{i}.test/"));
            cache.rules_for(&u, |_| async { RobotsFetch::Failed }).await;
        }
        assert!(cache.slots.lock().unwrap().len() <= 20);
    }
}
