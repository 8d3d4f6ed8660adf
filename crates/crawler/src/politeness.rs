//! Politeness: per-host delay and concurrency, global concurrency, `Retry-After` and
//! exponential backoff with jitter.
//!
//! Per-host state must be shared by every worker process on every machine, so it lives behind
//! the [`HostStateStore`] trait: one row per host ([`HostState`]), changed only through
//! [`HostStateStore::update`], an atomic read-modify-write (a `SELECT ... FOR UPDATE` and an
//! `UPDATE` in one transaction on Postgres). The rules themselves are plain methods on
//! [`HostState`], so every backend applies the same ones. [`MemoryHostStates`] is the
//! in-process store.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use url::Url;

use crate::error::{Error, Result};

/// How long a worker waits before asking again when a host is at its concurrency limit
/// (nobody can say when a slot frees, so this is a poll interval).
const FULL_HOST_POLL: Duration = Duration::from_millis(50);

/// The politeness key: a lower-case host name (ports share a host: they share its server).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostKey(String);

impl HostKey {
    /// The key for `url`'s host.
    pub fn of(url: &Url) -> Option<Self> {
        url.host_str().map(|h| Self(h.to_ascii_lowercase()))
    }

    /// The host name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for HostKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Identifies one granted fetch slot on a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseId(pub u64);

/// A fetch slot in use; it expires so a dead worker cannot hold a host forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    pub id: LeaseId,
    pub expires_at: DateTime<Utc>,
}

/// How a fetch went, as far as the host's health is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostFeedback {
    /// Any response that is not throttling or a server error (404 included).
    Success,
    /// `429`, or `503` with `Retry-After`: the server asked us to slow down.
    Throttled { retry_after: Option<Duration> },
    /// A 5xx, a timeout or a connection failure.
    Failed,
}

/// Per-host rules for one fetch, derived from settings and robots.txt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostLimits {
    /// Minimum time between the starts of two fetches.
    pub delay: Duration,
    /// Fetches in flight at once.
    pub max_in_flight: u32,
    /// How long a granted slot lasts if it is never released.
    pub lease: Duration,
}

/// Backoff rules applied on [`HostState::release`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Wait after the first failure; doubles with each further one.
    pub base: Duration,
    /// Ceiling of the exponential wait.
    pub max: Duration,
    /// Ceiling on a server's `Retry-After`, so a hostile `Retry-After: 999999999` cannot
    /// park a host for years.
    pub max_retry_after: Duration,
}

impl Backoff {
    /// The wait after `failures` consecutive failures with "equal jitter": half of the
    /// exponential step is fixed, the other half scaled by `jitter` (0..1), so workers that
    /// failed together do not come back together, and no wait collapses to zero.
    pub fn delay(&self, failures: u32, jitter: f64) -> Duration {
        if failures == 0 {
            return Duration::ZERO;
        }
        let factor = 1u32 << (failures - 1).min(20);
        let step = self.base.saturating_mul(factor).min(self.max);
        step / 2 + (step / 2).mul_f64(jitter.clamp(0.0, 1.0))
    }
}

/// The shared state of one host: what a `host_state` table row holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostState {
    /// No fetch starts before this (delay since the last start).
    pub next_allowed_at: Option<DateTime<Utc>>,
    /// No fetch starts before this either (backoff or `Retry-After`).
    pub backoff_until: Option<DateTime<Utc>>,
    /// Failures since the last success.
    pub consecutive_failures: u32,
    /// Slots in use.
    pub leases: Vec<Lease>,
}

impl HostState {
    /// Takes a fetch slot at `now`, or says how long to wait.
    ///
    /// # Errors
    ///
    /// The wait, when the host is in its delay, backing off, or at its concurrency limit.
    pub fn admit(
        &mut self,
        limits: &HostLimits,
        now: DateTime<Utc>,
        id: LeaseId,
    ) -> Result<Lease, Duration> {
        self.leases.retain(|l| l.expires_at > now);
        let ready_at = [self.next_allowed_at, self.backoff_until]
            .into_iter()
            .flatten()
            .fold(now, DateTime::max);
        if ready_at > now {
            return Err((ready_at - now).to_std().unwrap_or(FULL_HOST_POLL));
        }
        if self.leases.len() >= limits.max_in_flight.max(1) as usize {
            return Err(FULL_HOST_POLL);
        }
        let lease = Lease {
            id,
            expires_at: now + limits.lease,
        };
        self.leases.push(lease);
        self.next_allowed_at = Some(now + limits.delay);
        Ok(lease)
    }

    /// Gives a slot back and records how the fetch went; returns when the host may next be
    /// fetched (a retry of a failed URL should not be scheduled before it).
    pub fn release(
        &mut self,
        lease: LeaseId,
        feedback: HostFeedback,
        backoff: &Backoff,
        now: DateTime<Utc>,
        jitter: f64,
    ) -> DateTime<Utc> {
        self.leases.retain(|l| l.id != lease && l.expires_at > now);
        match feedback {
            HostFeedback::Success => self.consecutive_failures = 0,
            HostFeedback::Throttled { retry_after } => {
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                let wait = retry_after
                    .map(|d| d.min(backoff.max_retry_after))
                    .unwrap_or_else(|| backoff.delay(self.consecutive_failures, jitter));
                self.extend_backoff(now + wait);
            }
            HostFeedback::Failed => {
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                self.extend_backoff(now + backoff.delay(self.consecutive_failures, jitter));
            }
        }
        [self.next_allowed_at, self.backoff_until]
            .into_iter()
            .flatten()
            .fold(now, DateTime::max)
    }

    fn extend_backoff(&mut self, until: DateTime<Utc>) {
        self.backoff_until = Some(self.backoff_until.map_or(until, |b| b.max(until)));
    }

    /// Whether the row carries nothing a future fetch must respect (it may be dropped).
    pub fn is_idle(&self, now: DateTime<Utc>) -> bool {
        self.leases.iter().all(|l| l.expires_at <= now)
            && self.next_allowed_at.is_none_or(|t| t <= now)
            && self.backoff_until.is_none_or(|t| t <= now)
            && self.consecutive_failures == 0
    }
}

/// Shared per-host state. Implementations must run `f` atomically with respect to all other
/// workers that share the store (a row lock or a serialisable transaction).
pub trait HostStateStore: Send + Sync {
    /// Loads `host`'s state (default if absent), applies `f`, saves it, returns `f`'s result.
    fn update<R, F>(&self, host: &HostKey, f: F) -> impl Future<Output = Result<R>> + Send
    where
        R: Send,
        F: FnOnce(&mut HostState) -> R + Send;
}

impl<T: HostStateStore> HostStateStore for Arc<T> {
    fn update<R, F>(&self, host: &HostKey, f: F) -> impl Future<Output = Result<R>> + Send
    where
        R: Send,
        F: FnOnce(&mut HostState) -> R + Send,
    {
        (**self).update(host, f)
    }
}

/// [`HostStateStore`] in process memory, bounded: idle rows are dropped beyond `capacity`.
#[derive(Debug)]
pub struct MemoryHostStates {
    states: Mutex<HashMap<HostKey, HostState>>,
    capacity: usize,
}

impl MemoryHostStates {
    /// A store that keeps at most about `capacity` hosts that have nothing to remember.
    pub fn new(capacity: usize) -> Self {
        Self {
            states: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// A copy of `host`'s state, for inspection.
    pub fn get(&self, host: &HostKey) -> Option<HostState> {
        self.states.lock().expect("host states").get(host).cloned()
    }
}

impl Default for MemoryHostStates {
    fn default() -> Self {
        Self::new(100_000)
    }
}

impl HostStateStore for MemoryHostStates {
    async fn update<R, F>(&self, host: &HostKey, f: F) -> Result<R>
    where
        R: Send,
        F: FnOnce(&mut HostState) -> R + Send,
    {
        let mut states = self.states.lock().expect("host states");
        if states.len() >= self.capacity && !states.contains_key(host) {
            let now = Utc::now();
            states.retain(|_, s| !s.is_idle(now));
        }
        Ok(f(states.entry(host.clone()).or_default()))
    }
}

/// Politeness settings.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct PolitenessSettings {
    /// Minimum time between fetch starts on one host. A robots.txt `Crawl-delay` raises it.
    #[serde(with = "crate::duration_serde")]
    pub delay: Duration,
    /// Fetches in flight on one host.
    pub per_host_concurrency: u32,
    /// Fetches in flight in this process, all hosts together.
    pub global_concurrency: usize,
    /// Ceiling on robots.txt `Crawl-delay` (a site asking for an hour per page is obeyed up to
    /// this; beyond it the crawl would never finish).
    #[serde(with = "crate::duration_serde")]
    pub max_crawl_delay: Duration,
    /// First backoff after an error; doubles per further consecutive error.
    #[serde(with = "crate::duration_serde")]
    pub backoff_base: Duration,
    /// Ceiling of the exponential backoff.
    #[serde(with = "crate::duration_serde")]
    pub backoff_max: Duration,
    /// Ceiling on a server's `Retry-After`.
    #[serde(with = "crate::duration_serde")]
    pub max_retry_after: Duration,
    /// How long a fetch slot is held if a worker dies without releasing it.
    #[serde(with = "crate::duration_serde")]
    pub lease: Duration,
}

impl Default for PolitenessSettings {
    fn default() -> Self {
        Self {
            delay: Duration::from_secs(1),
            per_host_concurrency: 1,
            global_concurrency: 16,
            max_crawl_delay: Duration::from_secs(60),
            backoff_base: Duration::from_secs(2),
            backoff_max: Duration::from_secs(600),
            max_retry_after: Duration::from_secs(3600),
            lease: Duration::from_secs(300),
        }
    }
}

impl PolitenessSettings {
    /// Checks every value; keys are relative to `[crawler.politeness]`. A zero `delay` is
    /// allowed (a local test site); a zero backoff is not: doubling zero stays zero, and a
    /// failing host would be asked again at once, forever.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and what is allowed.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        bounds::at_least("per_host_concurrency", self.per_host_concurrency, 1)?;
        bounds::at_least("global_concurrency", self.global_concurrency, 1)?;
        bounds::at_least("backoff_base", self.backoff_base, bounds::MIN_TIMEOUT)?;
        bounds::at_least("backoff_max", self.backoff_max, self.backoff_base)
            .map_err(|e| e.against("backoff_base"))?;
        bounds::at_least("lease", self.lease, bounds::MIN_TIMEOUT)
    }

    /// The backoff rules.
    pub fn backoff(&self) -> Backoff {
        Backoff {
            base: self.backoff_base,
            max: self.backoff_max,
            max_retry_after: self.max_retry_after,
        }
    }

    /// Host limits given robots.txt's `Crawl-delay` (capped at `max_crawl_delay`).
    pub fn limits(&self, crawl_delay: Option<Duration>) -> HostLimits {
        HostLimits {
            delay: crawl_delay.map_or(self.delay, |d| self.delay.max(d.min(self.max_crawl_delay))),
            max_in_flight: self.per_host_concurrency,
            lease: self.lease,
        }
    }
}

/// A granted fetch slot: one global permit and one host lease. Give it back with
/// [`Politeness::release`]; if dropped instead, the global permit returns at once and the host
/// lease expires after `lease`.
#[derive(Debug)]
#[must_use = "release the permit with Politeness::release so the host's state is updated"]
pub struct Permit {
    host: HostKey,
    lease: LeaseId,
    _global: OwnedSemaphorePermit,
}

impl Permit {
    /// The host this permit is for.
    pub fn host(&self) -> &HostKey {
        &self.host
    }
}

/// Gatekeeper for every request: global concurrency here, per-host state in the store.
pub struct Politeness<H> {
    store: H,
    global: Arc<Semaphore>,
    settings: PolitenessSettings,
}

impl<H: HostStateStore> Politeness<H> {
    /// Politeness over `store`.
    pub fn new(store: H, settings: PolitenessSettings) -> Self {
        Self {
            store,
            global: Arc::new(Semaphore::new(settings.global_concurrency.max(1))),
            settings,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &PolitenessSettings {
        &self.settings
    }

    /// The host-state store.
    pub fn store(&self) -> &H {
        &self.store
    }

    /// Takes a slot on `host` now, or says how long until one may be free. Waits only for a
    /// global permit.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if the host-state store fails.
    pub async fn try_acquire(
        &self,
        host: &HostKey,
        crawl_delay: Option<Duration>,
    ) -> Result<Result<Permit, Duration>> {
        let global = Arc::clone(&self.global)
            .acquire_owned()
            .await
            .map_err(|e| Error::store("waiting for a global fetch slot", e))?;
        let limits = self.settings.limits(crawl_delay);
        let id = LeaseId(fastrand::u64(..));
        let admitted = self
            .store
            .update(host, |s| s.admit(&limits, Utc::now(), id))
            .await?;
        Ok(admitted.map(|lease| Permit {
            host: host.clone(),
            lease: lease.id,
            _global: global,
        }))
    }

    /// Takes a slot on `host`, sleeping as long as the host's state requires.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if the host-state store fails.
    pub async fn acquire(&self, host: &HostKey, crawl_delay: Option<Duration>) -> Result<Permit> {
        loop {
            match self.try_acquire(host, crawl_delay).await? {
                Ok(permit) => return Ok(permit),
                Err(wait) => tokio::time::sleep(wait).await,
            }
        }
    }

    /// Gives a slot back with what happened; returns when the host may next be fetched.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if the host-state store fails.
    pub async fn release(&self, permit: Permit, feedback: HostFeedback) -> Result<DateTime<Utc>> {
        let backoff = self.settings.backoff();
        let jitter = fastrand::f64();
        let Permit {
            host,
            lease,
            _global,
        } = permit;
        let next = self
            .store
            .update(&host, |s| {
                s.release(lease, feedback, &backoff, Utc::now(), jitter)
            })
            .await?;
        if feedback != HostFeedback::Success {
            tracing::debug!(%host, ?feedback, next = %next, "host backing off");
        }
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_700_000_000_000 + ms).unwrap()
    }

    const LIMITS: HostLimits = HostLimits {
        delay: Duration::from_secs(1),
        max_in_flight: 2,
        lease: Duration::from_secs(60),
    };

    const BACKOFF: Backoff = Backoff {
        base: Duration::from_secs(2),
        max: Duration::from_secs(60),
        max_retry_after: Duration::from_secs(300),
    };

    #[test]
    fn delay_and_concurrency_gate_admission() {
        let mut s = HostState::default();
        let a = s.admit(&LIMITS, t(0), LeaseId(1)).unwrap();
        assert_eq!(
            s.admit(&LIMITS, t(500), LeaseId(2)),
            Err(Duration::from_millis(500))
        );
        s.admit(&LIMITS, t(1000), LeaseId(2)).unwrap();
        assert_eq!(s.admit(&LIMITS, t(2000), LeaseId(3)), Err(FULL_HOST_POLL));
        s.release(a.id, HostFeedback::Success, &BACKOFF, t(2100), 0.5);
        assert!(s.admit(&LIMITS, t(2100), LeaseId(3)).is_ok());
        // Leases of dead workers expire.
        assert!(s.admit(&LIMITS, t(3200), LeaseId(4)).is_err());
        assert!(s.admit(&LIMITS, t(61_500), LeaseId(4)).is_ok());
    }

    #[test]
    fn backoff_grows_with_jitter_and_resets() {
        assert_eq!(BACKOFF.delay(0, 0.3), Duration::ZERO);
        assert_eq!(BACKOFF.delay(1, 0.0), Duration::from_secs(1));
        assert_eq!(BACKOFF.delay(1, 1.0), Duration::from_secs(2));
        assert_eq!(BACKOFF.delay(3, 1.0), Duration::from_secs(8));
        assert_eq!(BACKOFF.delay(40, 1.0), Duration::from_secs(60));
        assert_eq!(BACKOFF.delay(40, 0.0), Duration::from_secs(30));

        let mut s = HostState::default();
        let l = s.admit(&LIMITS, t(0), LeaseId(1)).unwrap();
        let next = s.release(l.id, HostFeedback::Failed, &BACKOFF, t(100), 1.0);
        assert_eq!(next, t(2100));
        assert_eq!(
            s.admit(&LIMITS, t(2000), LeaseId(2)),
            Err(Duration::from_millis(100))
        );
        let l = s.admit(&LIMITS, t(2100), LeaseId(2)).unwrap();
        let next = s.release(l.id, HostFeedback::Failed, &BACKOFF, t(2200), 1.0);
        assert_eq!((next, s.consecutive_failures), (t(6200), 2));
        let l = s.admit(&LIMITS, t(6200), LeaseId(3)).unwrap();
        s.release(l.id, HostFeedback::Success, &BACKOFF, t(6300), 1.0);
        assert_eq!(s.consecutive_failures, 0);
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let mut s = HostState::default();
        let l = s.admit(&LIMITS, t(0), LeaseId(1)).unwrap();
        let fb = HostFeedback::Throttled {
            retry_after: Some(Duration::from_secs(30)),
        };
        assert_eq!(s.release(l.id, fb, &BACKOFF, t(10), 0.0), t(30_010));
        let l = s.admit(&LIMITS, t(30_010), LeaseId(2)).unwrap();
        let fb = HostFeedback::Throttled {
            retry_after: Some(Duration::from_secs(1_000_000)),
        };
        assert_eq!(s.release(l.id, fb, &BACKOFF, t(30_020), 0.0), t(330_020));
    }

    #[tokio::test]
    async fn politeness_spaces_requests_and_limits_globally() {
        let settings = PolitenessSettings {
            delay: Duration::from_millis(40),
            global_concurrency: 1,
            ..PolitenessSettings::default()
        };
        let p = Politeness::new(MemoryHostStates::default(), settings);
        let host = HostKey::of(&Url::parse("http://A.test/x").unwrap()).unwrap();
        assert_eq!(host.as_str(), "a.test");
        let started = std::time::Instant::now();
        let first = p.acquire(&host, None).await.unwrap();
        assert_eq!(p.global.available_permits(), 0);
        p.release(first, HostFeedback::Success).await.unwrap();
        let second = p.acquire(&host, None).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(40));
        // The one global permit is held by `second`.
        assert_eq!(p.global.available_permits(), 0);
        p.release(second, HostFeedback::Success).await.unwrap();
        assert_eq!(p.global.available_permits(), 1);
        // Crawl-delay raises the delay, capped.
        let limits = p.settings().limits(Some(Duration::from_secs(3600)));
        assert_eq!(limits.delay, Duration::from_secs(60));
    }

    #[tokio::test]
    async fn memory_store_drops_idle_hosts_beyond_capacity() {
        let store = MemoryHostStates::new(10);
        for i in 0..100 {
            let host = HostKey(format!("h{i}.test"));
            store
                .update(&host, |s| s.consecutive_failures = 0)
                .await
                .unwrap();
        }
        assert!(store.states.lock().unwrap().len() <= 11);
    }
}
