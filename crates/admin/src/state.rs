//! What every handler shares.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use casework::RecheckSettings;
use store::Store;
use takedown::NoticeSettings;

use crate::limiter::{LoginLimiter, LoginLimits};

/// How the admin UI behaves; the binary fills it from its settings (`[server]`: the keys
/// named alike there).
#[derive(Debug, Clone)]
pub struct AdminSettings {
    /// Mark the session cookie `Secure` (and name it `__Host-…`). Off only for plain HTTP
    /// on a loopback address (tests, the demo); behind TLS always on.
    pub secure_cookies: bool,
    /// How long a session lasts at most, used or not (`[server] session_lifetime`).
    pub session_lifetime: Duration,
    /// How long a session lasts without use (`[server] session_idle_timeout`).
    pub session_idle_timeout: Duration,
    /// Where uploaded works are kept until their import job has read them.
    pub upload_dir: PathBuf,
    /// The largest uploaded work, bytes (`[server] max_upload_bytes`): the body of the
    /// upload form, and the file of an API upload (whose body holds it as base64).
    pub max_upload_bytes: usize,
    /// The largest body of every other request (a form, an API call), bytes
    /// (`[server] max_form_bytes`).
    pub max_form_bytes: usize,
    /// Failed logins allowed before the next attempt must wait.
    pub login: LoginLimits,
    /// The reverse proxies whose `X-Forwarded-For` (or `Forwarded`) names the client
    /// (`[server] trusted_proxies`); anyone else's is ignored.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// How long a connection may take to send a request's headers, and may sit idle between
    /// requests, before it is closed (`[server] header_read_timeout`).
    pub header_read_timeout: Duration,
    /// How long a request may take, its body included, before it is answered 408
    /// (`[server] request_timeout`).
    pub request_timeout: Duration,
    /// How long a request's body may take before it is answered 408 and its connection
    /// closed, extended by a second for every `body_min_rate` bytes that arrive
    /// (`[server] body_read_timeout`).
    pub body_read_timeout: Duration,
    /// Bytes per second a body must keep up to use more than `body_read_timeout`
    /// (`[server] body_min_rate`).
    pub body_min_rate: u64,
    /// Connections served at once; more wait to be accepted (`[server] max_connections`).
    pub max_connections: usize,
    /// Connections one client (an IPv4 address, an IPv6 /64) may hold open; more are closed
    /// at once. Trusted proxies are not limited (`[server] max_connections_per_client`).
    pub max_connections_per_client: usize,
    /// Connections accepted past `max_connections` for `/healthz`, `/readyz` and `/metrics`
    /// only, so probes answer while the cap is full (`[server] reserved_ops_connections`).
    pub reserved_ops_connections: usize,
    /// Rows per page of a listing.
    pub page_size: u32,
    /// The crawler's settings, the base a suspect site's own limits apply to.
    pub crawler: crawler::CrawlSettings,
    /// How long the dashboard's and analytics page's figures are reused before they are
    /// counted again: they read every case and match, and a team of people refreshing the
    /// dashboard should not count them once each.
    pub figures_ttl: Duration,
    /// The rights holder and templates of takedown notices.
    pub notices: NoticeSettings,
    /// When re-checks run after a notice is sent.
    pub rechecks: RecheckSettings,
    /// Whether an SMTP server is configured (`[notify.smtp] host`), so that a notice's Send
    /// button queues a job the workers can run.
    pub mail_configured: bool,
    /// `/healthz`, `/readyz`, `/metrics`: the metrics token and the index to report on.
    pub ops: OpsSettings,
    /// Search providers and budgets (`[discovery]`), shown on the Candidates page.
    pub discovery: discovery::DiscoverySettings,
}

impl Default for AdminSettings {
    fn default() -> Self {
        AdminSettings {
            secure_cookies: true,
            session_lifetime: Duration::from_secs(12 * 3600),
            // OWASP's session guidance: an idle timeout of a few hours for a low-risk
            // application, well under the absolute one.
            session_idle_timeout: Duration::from_secs(2 * 3600),
            upload_dir: PathBuf::from("data/uploads"),
            // An EPUB of a long novel is a few MiB; the importer's own limits apply after.
            max_upload_bytes: 32 << 20,
            // The largest form is a bulk case change of a page of ids: a few KiB.
            max_form_bytes: 64 << 10,
            login: LoginLimits::default(),
            trusted_proxies: Vec::new(),
            // Browsers send a request's headers in one go; a client that has not within
            // seconds holds a connection open on purpose (slowloris).
            header_read_timeout: Duration::from_secs(15),
            // An upload of max_upload_bytes at 1 Mbit/s takes about four and a half minutes.
            request_timeout: Duration::from_secs(300),
            // Apache's mod_reqtimeout defaults (`body=20,MinRate=500`), shortened: a form is
            // sent in one go, and an upload at any real speed earns its time. A client that
            // trickles its body on purpose holds a connection seconds, not minutes.
            body_read_timeout: Duration::from_secs(10),
            body_min_rate: 500,
            max_connections: 1024,
            // A browser opens six connections to a host; an office behind one NAT address
            // is a few browsers.
            max_connections_per_client: 64,
            reserved_ops_connections: 16,
            page_size: 50,
            figures_ttl: Duration::from_secs(10),
            crawler: crawler::CrawlSettings::default(),
            notices: NoticeSettings::default(),
            rechecks: RecheckSettings::default(),
            mail_configured: false,
            discovery: discovery::DiscoverySettings::default(),
            ops: OpsSettings::default(),
        }
    }
}

impl AdminSettings {
    /// Checks the limits a settings file sets; keys are those of `[server]`.
    ///
    /// # Errors
    /// The first value out of range.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        let second = Duration::from_secs(1);
        bounds::at_least("session_lifetime", self.session_lifetime, 60 * second)?;
        bounds::between(
            "session_idle_timeout",
            self.session_idle_timeout,
            60 * second,
            self.session_lifetime,
        )?;
        bounds::at_least("max_upload_bytes", self.max_upload_bytes, 1024)?;
        bounds::between(
            "max_form_bytes",
            self.max_form_bytes,
            1024,
            self.max_upload_bytes,
        )?;
        bounds::at_least(
            "header_read_timeout",
            self.header_read_timeout,
            Duration::from_millis(1),
        )?;
        bounds::at_least(
            "request_timeout",
            self.request_timeout,
            Duration::from_millis(1),
        )?;
        bounds::between(
            "body_read_timeout",
            self.body_read_timeout,
            Duration::from_millis(1),
            self.request_timeout,
        )?;
        bounds::at_least("body_min_rate", self.body_min_rate, 1)?;
        bounds::at_least("max_connections", self.max_connections, 1)?;
        bounds::between(
            "max_connections_per_client",
            self.max_connections_per_client,
            1,
            self.max_connections,
        )
    }
}

/// The store and settings every handler shares; cloning is a reference count.
#[derive(Debug, Clone)]
pub struct AdminState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    settings: AdminSettings,
    limiter: LoginLimiter,
    figures: FiguresCache,
    texts: detection::TextCache,
    effective: std::sync::Mutex<Option<Effective>>,
}

/// The settings in effect as last read, with the time zone they name.
#[derive(Debug, Clone)]
struct Effective {
    read_at: std::time::Instant,
    settings: Arc<takedown::overrides::Effective>,
    zone: jiff::tz::TimeZone,
}

/// How long the settings saved in the UI are reused before they are read again: every page
/// needs the time zone, and another process's save shows within this.
const EFFECTIVE_TTL: Duration = Duration::from_secs(5);

impl AdminState {
    /// The state over `store`.
    pub fn new(store: Store, settings: AdminSettings) -> Self {
        let limiter = LoginLimiter::new(settings.login.clone());
        AdminState {
            inner: Arc::new(Inner {
                store,
                settings,
                limiter,
                figures: Default::default(),
                texts: Default::default(),
                effective: Default::default(),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The settings.
    pub fn settings(&self) -> &AdminSettings {
        &self.inner.settings
    }

    pub(crate) fn limiter(&self) -> &LoginLimiter {
        &self.inner.limiter
    }

    /// Chapter texts the case pages showed, kept (bounded) since a chapter never changes.
    pub(crate) fn texts(&self) -> &detection::TextCache {
        &self.inner.texts
    }

    /// The settings in effect: the file's notice settings with the values saved in the UI
    /// (read again after [`EFFECTIVE_TTL`], or at once after [`AdminState::forget_effective`]).
    pub(crate) async fn effective(
        &self,
    ) -> crate::error::WebResult<Arc<takedown::overrides::Effective>> {
        Ok(self.effective_and_zone().await?.0)
    }

    /// The time zone pages show times in.
    pub(crate) async fn zone(&self) -> crate::error::WebResult<jiff::tz::TimeZone> {
        Ok(self.effective_and_zone().await?.1)
    }

    async fn effective_and_zone(
        &self,
    ) -> crate::error::WebResult<(Arc<takedown::overrides::Effective>, jiff::tz::TimeZone)> {
        if let Some(e) = self.cached_effective() {
            return Ok(e);
        }
        let settings =
            Arc::new(takedown::overrides::effective(self.store(), &self.settings().notices).await?);
        let zone = takedown::notice_settings::zone(&settings.notices.time_zone);
        let fresh = Effective {
            read_at: std::time::Instant::now(),
            settings: Arc::clone(&settings),
            zone: zone.clone(),
        };
        *self.lock_effective() = Some(fresh);
        Ok((settings, zone))
    }

    fn cached_effective(
        &self,
    ) -> Option<(Arc<takedown::overrides::Effective>, jiff::tz::TimeZone)> {
        self.lock_effective()
            .as_ref()
            .filter(|e| e.read_at.elapsed() < EFFECTIVE_TTL)
            .map(|e| (Arc::clone(&e.settings), e.zone.clone()))
    }

    /// Reads the settings again on next use: they were just saved.
    pub(crate) fn forget_effective(&self) {
        *self.lock_effective() = None;
    }

    fn lock_effective(&self) -> std::sync::MutexGuard<'_, Option<Effective>> {
        // A panic while holding it left a value or none: either is fine to use.
        self.inner
            .effective
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn figures(&self) -> &FiguresCache {
        &self.inner.figures
    }
}

/// How the operations endpoints behave.
#[derive(Debug, Clone, Default)]
pub struct OpsSettings {
    /// When set, `/metrics` answers only requests bearing it (`Authorization: Bearer …`).
    pub metrics_token: Option<bounds::Secret>,
    /// The analyser whose index this process's match jobs use: `/readyz` waits for its index
    /// and `/metrics` shows its size. `None` in a process that runs no match jobs.
    pub analyser: Option<Arc<detection::Analyser>>,
    /// The retention policy whose outlook (what `gc` would remove now) `/metrics` shows,
    /// worked out at most once per [`RetentionOutlook::EVERY`]. `None`: not shown.
    pub retention: Option<RetentionOutlook>,
}

/// What the retention policy will free, for `/metrics`: `gc`'s dry run reads the snapshots
/// and bodies (0.8 s on SQLite, 8.6 s on Postgres at 10^5 pages, `cargo bench --bench gc`),
/// too slow for a scrape, so it runs in a task of its own and a scrape shows the last answer;
/// one older than [`RetentionOutlook::EVERY`] starts the next run.
#[derive(Debug, Clone)]
pub struct RetentionOutlook {
    settings: store::RetentionSettings,
    last: Arc<std::sync::Mutex<Outlook>>,
}

#[derive(Debug, Default)]
struct Outlook {
    /// The last answer and when its run started.
    report: Option<(std::time::Instant, store::GcReport)>,
    /// A run is under way.
    running: bool,
}

impl RetentionOutlook {
    /// How long an answer is shown before the next run is started.
    pub const EVERY: std::time::Duration = std::time::Duration::from_secs(600);

    /// The outlook of `settings`.
    pub fn new(settings: store::RetentionSettings) -> Self {
        RetentionOutlook {
            settings,
            last: Arc::default(),
        }
    }

    /// The last dry run's report, if one finished; starts a run when there is none or it is
    /// older than [`RetentionOutlook::EVERY`] and none is under way.
    pub(crate) fn report(&self, store: &store::Store) -> Option<store::GcReport> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let stale = last
            .report
            .as_ref()
            .is_none_or(|(at, _)| at.elapsed() >= Self::EVERY);
        if stale && !last.running {
            last.running = true;
            let (store, settings, slot) =
                (store.clone(), self.settings.clone(), Arc::clone(&self.last));
            tokio::spawn(async move {
                let started = std::time::Instant::now();
                let report = store.retention_outlook(&settings).await;
                let mut last = slot.lock().unwrap_or_else(|e| e.into_inner());
                last.running = false;
                match report {
                    Ok(report) => last.report = Some((started, report)),
                    Err(e) => tracing::warn!(error = %e, "what retention will free was not read"),
                }
            });
        }
        last.report.as_ref().map(|(_, report)| report.clone())
    }
}

/// The figures counted lately, by window start and table size, reused for
/// [`crate::AdminSettings::figures_ttl`]. Counting holds the lock, so a burst of requests
/// counts once and the rest wait for its result instead of each running the same queries.
#[derive(Debug, Default)]
pub(crate) struct FiguresCache(
    tokio::sync::Mutex<HashMap<FiguresKey, (Instant, Arc<analytics::Stats>)>>,
);

impl FiguresCache {
    /// The cache, locked while a request counts.
    pub(crate) async fn lock(
        &self,
    ) -> tokio::sync::MutexGuard<'_, HashMap<FiguresKey, (Instant, Arc<analytics::Stats>)>> {
        self.0.lock().await
    }
}

/// The window's first day and the rows of the top tables.
pub(crate) type FiguresKey = (Option<chrono::NaiveDate>, u32);
