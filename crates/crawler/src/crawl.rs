//! The crawl runner: workers that take URLs from a [`Frontier`], obey robots.txt and
//! politeness, fetch, store evidence in a [`SnapshotSink`], decode, extract, and push the
//! links they find back, until the frontier is done or a limit is reached.
//!
//! Everything shared lives behind the three traits ([`Frontier`], [`SnapshotSink`],
//! [`HostStateStore`]), so the same runner drives an in-memory crawl now and a store-backed
//! crawl shared by many worker processes later. One bad page never stops a crawl: it is
//! retried if the failure may pass, then counted in the [`CrawlReport`] and left behind. Only a
//! failing frontier or sink stops it, since without them nothing can be recorded.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use extract::{ExtractSettings, Extracted, Extractor, PageKind, TextSource};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::fetch::{FetchRequest, FetchSettings, Fetcher};
use crate::frontier::{
    ChainPos, Claim, Claimed, Discovery, EntryId, EntryState, Frontier, FrontierEntry,
    FrontierLimits, FrontierProgress, MemoryFrontier,
};
use crate::links::{self, Rejection, Scope, ScopeSettings};
use crate::politeness::{
    HostFeedback, HostKey, HostStateStore, MemoryHostStates, Politeness, PolitenessSettings,
};
use crate::render::{RenderRequest, RenderSettings, Renderer, UrlGate};
use crate::robots::{RobotsCache, RobotsFetch, RobotsSettings};
use crate::sink::{MemorySink, PageRecord, SnapshotSink};
use crate::snapshot::{BodyStatus, Snapshot};

/// A host wait longer than this puts the URL back in the frontier instead of holding a worker.
const MAX_INLINE_WAIT: Duration = Duration::from_secs(5);

/// Child sitemaps taken from one sitemap index, and sitemap files per crawl: a sitemap index
/// may list 50,000 sitemaps of 50,000 URLs each, far beyond any page budget.
const MAX_CHILD_SITEMAPS: usize = 100;
const MAX_SITEMAP_FILES: usize = 1_000;

/// Settings of one crawl.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct CrawlSettings {
    /// URLs taken from the frontier at most (the page budget); `None` for no limit.
    pub max_pages: Option<u64>,
    /// Link hops from a seed followed at most (pagination does not count as a hop).
    pub max_depth: u32,
    /// Pages of one split chapter followed at most.
    pub max_pagination: u32,
    /// Tries of one URL when failures may pass (timeouts, 5xx, 429).
    pub max_attempts: u32,
    /// URLs an in-memory frontier remembers at most; bounds memory on any site.
    pub max_frontier: usize,
    /// How long a worker holds a URL of a frontier in the database: a worker that dies
    /// mid-page loses its URLs to the others after this. Well above one page's fetch
    /// (`fetch.timeout`, plus the up to 5 s a worker waits for its host's turn).
    #[serde(with = "crate::duration_serde")]
    pub frontier_lease: Duration,
    /// How long a runner of a crawl in the database may go without a heartbeat (it sends
    /// one every fifth of this) before the others, or a `--resume`, take back its URLs at
    /// once instead of waiting out `frontier_lease`: how long a killed runner holds up its
    /// crawl. Above 0; a runner stalled longer than this (a frozen machine) loses its URLs.
    #[serde(with = "crate::duration_serde")]
    pub run_dead_after: Duration,
    /// Read robots.txt `Sitemap:` lines (or `/sitemap.xml`) and crawl what they list.
    pub follow_sitemaps: bool,
    /// Obey `rel="nofollow"` and `<meta name="robots" content="nofollow">` (unless robots.txt
    /// is overridden for the site).
    pub obey_nofollow: bool,
    pub fetch: FetchSettings,
    pub robots: RobotsSettings,
    pub politeness: PolitenessSettings,
    pub scope: ScopeSettings,
    pub extract: ExtractSettings,
    /// The rendered fetch in a headless browser (`[crawler.render]`).
    pub render: RenderSettings,
}

impl Default for CrawlSettings {
    fn default() -> Self {
        Self {
            max_pages: Some(1_000),
            max_depth: 8,
            max_pagination: 20,
            max_attempts: 3,
            max_frontier: 1_000_000,
            frontier_lease: Duration::from_secs(300),
            run_dead_after: Duration::from_secs(15),
            follow_sitemaps: true,
            obey_nofollow: true,
            fetch: FetchSettings::default(),
            robots: RobotsSettings::default(),
            politeness: PolitenessSettings::default(),
            scope: ScopeSettings::default(),
            extract: ExtractSettings::default(),
            render: RenderSettings::default(),
        }
    }
}

impl CrawlSettings {
    /// Checks every value, sections included; keys are relative to `[crawler]`
    /// (`fetch.timeout`). [`Crawl::new`] calls it, so a crawl never starts on settings that
    /// would make every fetch fail (a zero timeout reads as "robots.txt unavailable").
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and what is allowed.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        if let Some(pages) = self.max_pages {
            bounds::at_least("max_pages", pages, 1)?;
        }
        bounds::at_least("max_attempts", self.max_attempts, 1)?;
        bounds::at_least("max_frontier", self.max_frontier, 1)?;
        bounds::at_least("frontier_lease", self.frontier_lease, bounds::MIN_TIMEOUT)?;
        bounds::at_least("run_dead_after", self.run_dead_after, bounds::MIN_TIMEOUT)?;
        self.fetch.validate().map_err(|e| e.in_section("fetch"))?;
        self.robots.validate().map_err(|e| e.in_section("robots"))?;
        self.politeness
            .validate()
            .map_err(|e| e.in_section("politeness"))?;
        self.scope.validate().map_err(|e| e.in_section("scope"))?;
        self.extract
            .validate()
            .map_err(|e| e.in_section("extract"))?;
        self.render.validate().map_err(|e| e.in_section("render"))
    }

    /// Checks that a crawl of `seeds` can run with these settings (seeds, scope patterns,
    /// extraction selectors, fetch and run settings), so a caller can refuse bad input
    /// before it stores anything.
    ///
    /// # Errors
    /// As [`Crawl::new`].
    pub fn check(&self, seeds: &[Url]) -> Result<()> {
        Parts::new(self, seeds).map(drop)
    }

    /// The limits an in-memory frontier needs to enforce these settings.
    pub fn frontier_limits(&self) -> FrontierLimits {
        FrontierLimits {
            max_claims: self.max_pages,
            max_entries: self.max_frontier,
        }
    }
}

/// Why an entry failed, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// A fetch error.
    Error(ErrorKind),
    /// A final HTTP status of 4xx or 5xx.
    Status(u16),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Error(kind) => f.write_str(kind.as_str()),
            Self::Status(s) => write!(f, "http_{s}"),
        }
    }
}

/// Why a frontier entry was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// robots.txt disallows it.
    RobotsDenied,
    /// Its content type is not text (headers kept as evidence, body not downloaded).
    NotText,
    /// An anti-bot challenge page came back instead of content.
    Challenge,
    /// A sitemap URL that does not exist.
    NoSitemap,
    /// Extraction failed on hostile markup.
    ExtractionFailed,
    /// The headless browser did not render the page within its budget (its raw text kept).
    RenderFailed,
    /// The page broke a parsing limit (too many elements) or its time budget
    /// ([`ExtractSettings`]); its snapshot is kept.
    OverLimit,
}

impl SkipReason {
    /// Stable lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RobotsDenied => "robots_denied",
            Self::NotText => "not_text",
            Self::Challenge => "challenge",
            Self::NoSitemap => "no_sitemap",
            Self::ExtractionFailed => "extraction_failed",
            Self::RenderFailed => "render_failed",
            Self::OverLimit => "over_limit",
        }
    }
}

/// Why a discovered link was not queued (counted per occurrence, before de-duplication).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkSkip {
    /// Outside the crawl's scope, or shaped like a trap.
    Scope(Rejection),
    /// Deeper than `max_depth`.
    DepthLimit,
    /// A split chapter longer than `max_pagination`.
    PaginationLimit,
    /// `rel="nofollow"` or a nofollow page.
    Nofollow,
    /// robots.txt (already cached) disallows it.
    RobotsDenied,
}

impl std::fmt::Display for LinkSkip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Scope(r) => f.write_str(r.as_str()),
            Self::DepthLimit => f.write_str("depth_limit"),
            Self::PaginationLimit => f.write_str("pagination_limit"),
            Self::Nofollow => f.write_str("nofollow"),
            Self::RobotsDenied => f.write_str("robots_denied"),
        }
    }
}

/// What a crawl did. Also its progress while it runs ([`Crawl::progress`]).
#[derive(Clone, Debug, Default)]
pub struct CrawlReport {
    /// Pages decoded and extracted (2xx, or 304 with the earlier body).
    pub pages: u64,
    /// Pages by kind (content, index, challenge, ...).
    pub pages_by_kind: BTreeMap<&'static str, u64>,
    /// Responses received and stored, any status, robots.txt and sitemaps included.
    pub responses: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Responses whose body was new to the sink.
    pub new_bodies: u64,
    /// Responses whose body the sink already had (same SHA-256).
    pub duplicate_bodies: u64,
    /// `304 Not Modified` answers to conditional requests.
    pub not_modified: u64,
    /// Bodies cut off at the size limit.
    pub truncated: u64,
    /// Responses by status.
    pub statuses: BTreeMap<u16, u64>,
    /// Entries that failed for good, by kind.
    pub errors: BTreeMap<Failure, u64>,
    /// Entries skipped, by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// Links not queued, by reason.
    pub links_not_followed: BTreeMap<LinkSkip, u64>,
    /// Retries scheduled.
    pub retries: u64,
    /// The frontier at the end.
    pub frontier: FrontierProgress,
    /// Pages rendered in the headless browser.
    pub rendered: u64,
    /// Images whose text was read by OCR.
    pub ocr_images: u64,
    /// Wall time.
    pub elapsed: Duration,
}

impl CrawlReport {
    /// Failed entries, all kinds together.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

impl std::fmt::Display for CrawlReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        writeln!(
            f,
            "{} pages, {} responses, {:.1} MB in {:.1} s ({:.0} pages/s)",
            self.pages,
            self.responses,
            self.bytes as f64 / 1e6,
            secs,
            if secs > 0.0 {
                self.pages as f64 / secs
            } else {
                0.0
            }
        )?;
        let list = |m: &mut dyn Iterator<Item = (String, u64)>| {
            m.map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(
            f,
            "bodies: {} new, {} duplicate; {} not modified, {} truncated, {} retries",
            self.new_bodies, self.duplicate_bodies, self.not_modified, self.truncated, self.retries
        )?;
        writeln!(
            f,
            "errors: {}",
            list(&mut self.errors.iter().map(|(k, v)| (k.to_string(), *v)))
        )?;
        writeln!(
            f,
            "skipped: {}",
            list(
                &mut self
                    .skipped
                    .iter()
                    .map(|(k, v)| (k.as_str().to_owned(), *v))
            )
        )?;
        write!(
            f,
            "frontier: {} left, {} dropped as full",
            self.frontier.queued, self.frontier.dropped
        )
    }
}

/// A crawl, ready to [`run`](Crawl::run). Cheap to clone; clones share everything.
pub struct Crawl<F, S, H> {
    inner: Arc<Inner<F, S, H>>,
}

impl<F, S, H> Clone for Crawl<F, S, H> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<F, S, H> {
    settings: CrawlSettings,
    seeds: Vec<Url>,
    fetcher: Fetcher,
    frontier: F,
    sink: S,
    politeness: Politeness<H>,
    robots: Arc<RobotsCache>,
    scope: Scope,
    extractor: Arc<Extractor>,
    renderer: Option<Arc<Renderer>>,
    ocr: Option<Arc<dyn extract::OcrEngine>>,
    report: Mutex<CrawlReport>,
    started: Mutex<Option<Instant>>,
    stop: AtomicBool,
    sitemap_files: AtomicUsize,
}

/// What [`Crawl::new`] builds from the settings, and all it can refuse them for.
pub(crate) struct Parts {
    seeds: Vec<Url>,
    fetcher: Fetcher,
    scope: Scope,
    extractor: Arc<Extractor>,
    renderer: Option<Arc<Renderer>>,
    ocr: Option<Arc<dyn extract::OcrEngine>>,
}

impl Parts {
    pub(crate) fn new(settings: &CrawlSettings, seeds: &[Url]) -> Result<Self> {
        settings.validate()?;
        let seeds = seeds
            .iter()
            .map(|s| {
                extract::links::normalize(s)
                    .ok_or_else(|| Error::invalid_url(s.as_str(), "a seed must be an http(s) url"))
            })
            .collect::<Result<Vec<_>>>()?;
        // Asked for, rendering must be able to run; otherwise a placeholder page is
        // rendered only when Chromium is installed. Browsers start on the first page.
        let render = &settings.render;
        let renderer = if render.enabled {
            Some(Arc::new(Renderer::new(render.clone())?))
        } else if render.auto && render.unavailable().is_none() {
            Renderer::new(render.clone()).ok().map(Arc::new)
        } else {
            None
        };
        // OCR runs where its engine is installed; without it, pages of images stay unread,
        // said once per crawl.
        let ocr = extract::Tesseract::enabled(&settings.extract.ocr).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "pages served as images will not be read");
            None
        });
        Ok(Self {
            fetcher: Fetcher::new(settings.fetch.clone())?,
            scope: Scope::new(&seeds, &settings.scope)?,
            extractor: Arc::new(Extractor::new(&settings.extract)?),
            renderer,
            ocr,
            seeds,
        })
    }
}

/// A crawl entirely in this process's memory.
pub type MemoryCrawl = Crawl<MemoryFrontier, MemorySink, MemoryHostStates>;

impl MemoryCrawl {
    /// A crawl with an in-memory frontier, sink and host state.
    ///
    /// # Errors
    ///
    /// As [`Crawl::new`].
    pub fn in_memory(settings: CrawlSettings, seeds: Vec<Url>) -> Result<Self> {
        let frontier = MemoryFrontier::new(settings.frontier_limits());
        Crawl::new(
            settings,
            seeds,
            frontier,
            MemorySink::new(),
            MemoryHostStates::default(),
        )
    }
}

impl<F, S, H> Crawl<F, S, H>
where
    F: Frontier + 'static,
    S: SnapshotSink + 'static,
    H: HostStateStore + 'static,
{
    /// A crawl from `seeds` over the given frontier, sink and host-state store.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`] for settings [`CrawlSettings::validate`] refuses,
    /// [`Error::InvalidUrl`] for a seed that is not http(s), and the settings errors of
    /// [`Fetcher::new`], [`Scope::new`] and [`Extractor::new`].
    pub fn new(
        settings: CrawlSettings,
        seeds: Vec<Url>,
        frontier: F,
        sink: S,
        hosts: H,
    ) -> Result<Self> {
        let parts = Parts::new(&settings, &seeds)?;
        Ok(Self::from_parts(settings, parts, frontier, sink, hosts))
    }

    /// A crawl from parts already built from `settings` (and so already checked).
    pub(crate) fn from_parts(
        settings: CrawlSettings,
        parts: Parts,
        frontier: F,
        sink: S,
        hosts: H,
    ) -> Self {
        let Parts {
            seeds,
            fetcher,
            scope,
            extractor,
            renderer,
            ocr,
        } = parts;
        let robots = Arc::new(RobotsCache::new(
            settings.fetch.agent.clone(),
            settings.robots.clone(),
        ));
        let politeness = Politeness::new(hosts, settings.politeness.clone());
        Self {
            inner: Arc::new(Inner {
                settings,
                seeds,
                fetcher,
                frontier,
                sink,
                politeness,
                robots,
                scope,
                extractor,
                renderer,
                ocr,
                report: Mutex::new(CrawlReport::default()),
                started: Mutex::new(None),
                stop: AtomicBool::new(false),
                sitemap_files: AtomicUsize::new(0),
            }),
        }
    }

    /// The frontier.
    pub fn frontier(&self) -> &F {
        &self.inner.frontier
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.inner.sink
    }

    /// The report so far (call from another task for a progress bar).
    pub fn progress(&self) -> CrawlReport {
        let mut report = self.inner.report.lock().expect("report").clone();
        if let Some(started) = *self.inner.started.lock().expect("started") {
            report.elapsed = started.elapsed();
        }
        report
    }

    /// Asks the workers to stop after the pages they are fetching; [`run`](Crawl::run) then
    /// returns. Entries still waiting for their host's turn go back to the frontier, which
    /// keeps them and the rest for a later run.
    pub fn stop(&self) {
        self.inner.stop.store(true, Ordering::Relaxed);
    }

    /// Runs the crawl to its end: seeds and sitemaps are queued (a resumed crawl's frontier
    /// ignores URLs it has seen), then `politeness.global_concurrency` workers crawl.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] if the frontier or the sink fails; page-level failures are in the
    /// report instead.
    #[tracing::instrument(skip_all, fields(seeds = self.inner.seeds.len()))]
    pub async fn run(&self) -> Result<CrawlReport> {
        let started = Instant::now();
        *self.inner.started.lock().expect("started") = Some(started);
        self.inner.queue_seeds().await?;

        let workers = self.inner.settings.politeness.global_concurrency.max(1);
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..workers {
            let inner = Arc::clone(&self.inner);
            set.spawn(async move { inner.work().await });
        }
        let mut first_error = None;
        while let Some(joined) = set.join_next().await {
            let result = joined.unwrap_or_else(|e| {
                Err(Error::Store {
                    doing: "running a crawl worker",
                    source: Box::new(e),
                })
            });
            if let Err(e) = result {
                self.inner.stop.store(true, Ordering::Relaxed);
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let frontier = self.inner.frontier.progress().await?;
        let mut report = self.inner.report.lock().expect("report").clone();
        report.frontier = frontier;
        report.elapsed = started.elapsed();
        tracing::info!(
            pages = report.pages,
            responses = report.responses,
            errors = report.error_count(),
            elapsed_ms = report.elapsed.as_millis() as u64,
            "crawl finished"
        );
        Ok(report)
    }
}

impl<F, S, H> Inner<F, S, H>
where
    F: Frontier + 'static,
    S: SnapshotSink + 'static,
    H: HostStateStore + 'static,
{
    fn tally(&self, f: impl FnOnce(&mut CrawlReport)) {
        f(&mut self.report.lock().expect("report"));
    }

    async fn queue_seeds(&self) -> Result<()> {
        let mut entries: Vec<FrontierEntry> = self
            .seeds
            .iter()
            .cloned()
            .map(FrontierEntry::seed)
            .collect();
        if self.settings.follow_sitemaps {
            let mut origins: Vec<Url> = Vec::new();
            for seed in &self.seeds {
                if !origins.iter().any(|o| o.origin() == seed.origin()) {
                    origins.push(seed.clone());
                }
            }
            for origin in origins {
                let rules = self
                    .robots
                    .rules_for(&origin, |u| self.fetch_robots(u))
                    .await;
                let mut sitemaps = rules.sitemaps.clone();
                if sitemaps.is_empty() {
                    sitemaps.extend(origin.join("/sitemap.xml"));
                }
                entries.extend(
                    sitemaps
                        .into_iter()
                        .filter_map(|u| extract::links::normalize(&u))
                        .filter(|u| self.scope.check(u).is_ok())
                        .map(|url| FrontierEntry {
                            url,
                            depth: 0,
                            discovery: Discovery::Sitemap,
                            parent: None,
                            chain: None,
                        }),
                );
            }
        }
        let sitemaps = entries
            .iter()
            .filter(|e| e.discovery == Discovery::Sitemap)
            .count();
        self.sitemap_files.fetch_add(sitemaps, Ordering::Relaxed);
        self.frontier.push(entries).await?;
        Ok(())
    }

    async fn work(&self) -> Result<()> {
        while !self.stop.load(Ordering::Relaxed) {
            match self.frontier.claim().await? {
                Claim::Entry(claimed) => self.process(*claimed).await?,
                Claim::Wait(d) => tokio::time::sleep(d.min(Duration::from_secs(1))).await,
                Claim::Done => break,
            }
        }
        Ok(())
    }

    /// Fetches robots.txt under politeness; the response is stored as evidence too.
    async fn fetch_robots(&self, url: Url) -> RobotsFetch {
        let Some(host) = HostKey::of(&url) else {
            return RobotsFetch::Failed;
        };
        let Ok(permit) = self.politeness.acquire(&host, None).await else {
            return RobotsFetch::Failed;
        };
        let request = FetchRequest {
            url,
            validators: None,
            max_body_bytes: Some(self.settings.robots.max_bytes),
            accept_json: false,
            accept_font: false,
            accept_svg: false,
            accept_image: false,
        };
        let result = self.fetcher.fetch(&request).await;
        if self
            .politeness
            .release(permit, feedback(&result))
            .await
            .is_err()
        {
            return RobotsFetch::Failed;
        }
        match result {
            Ok(snapshot) => {
                if self.sink.store_snapshot(&snapshot).await.is_ok() {
                    self.count_response(&snapshot, None);
                }
                RobotsFetch::Response {
                    status: snapshot.status,
                    body: snapshot.body,
                }
            }
            Err(Error::AddressRefused { .. }) => RobotsFetch::Refused,
            Err(e) => {
                tracing::debug!(error = %e, "robots.txt fetch failed");
                RobotsFetch::Failed
            }
        }
    }

    #[tracing::instrument(skip_all, fields(url = %claimed.entry.url, depth = claimed.entry.depth, attempt = claimed.attempts))]
    async fn process(&self, claimed: Claimed) -> Result<()> {
        let Claimed {
            id,
            entry,
            attempts,
        } = claimed;
        let Some(host) = HostKey::of(&entry.url) else {
            return self
                .frontier
                .complete(id, EntryState::Failed("invalid_url".into()))
                .await;
        };
        let rules = self
            .robots
            .rules_for(&entry.url, |u| self.fetch_robots(u))
            .await;
        if !rules.allowed(&entry.url) {
            tracing::debug!("robots.txt denies it");
            return self.skip(id, SkipReason::RobotsDenied).await;
        }
        let permit = loop {
            // A stop does not wait for the host's turn: the entry goes back, uncounted.
            if self.stop.load(Ordering::Relaxed) {
                return self.frontier.retry(id, Utc::now(), false).await;
            }
            match self
                .politeness
                .try_acquire(&host, rules.crawl_delay)
                .await?
            {
                Ok(permit) => break permit,
                Err(wait) if wait > MAX_INLINE_WAIT => {
                    return self.frontier.retry(id, Utc::now() + wait, false).await;
                }
                Err(wait) => tokio::time::sleep(wait).await,
            }
        };
        let previous = match self.sink.previous(&entry.url).await {
            Ok(p) => p,
            Err(e) => {
                let _ = self.politeness.release(permit, HostFeedback::Success).await;
                return Err(e);
            }
        };
        let request = FetchRequest {
            url: entry.url.clone(),
            validators: previous.as_ref().map(|p| p.validators.clone()),
            max_body_bytes: None,
            accept_json: false,
            accept_font: false,
            accept_svg: false,
            accept_image: false,
        };
        let result = self.fetcher.fetch(&request).await;
        let next_ok = self.politeness.release(permit, feedback(&result)).await?;
        let snapshot = match result {
            Ok(s) => s,
            Err(e) => {
                let kind = e.kind();
                tracing::info!(error = %e, "fetch failed");
                return self
                    .fail(
                        id,
                        attempts,
                        Failure::Error(kind),
                        kind.is_transient(),
                        next_ok,
                    )
                    .await;
            }
        };
        // A 304 confirms the capture whose validators the request sent: it is stored as a
        // revisit of it, never as a capture of its own empty body.
        let stored = match previous.as_ref().filter(|_| snapshot.status == 304) {
            Some(of) => self.sink.store_revisit(&snapshot, of).await?,
            None => self.sink.store_snapshot(&snapshot).await?,
        };
        self.count_response(&snapshot, Some(stored.new_body));

        let status = snapshot.status;
        if status == 429 || (500..600).contains(&status) {
            let transient = !matches!(status, 501 | 505);
            return self
                .fail(id, attempts, Failure::Status(status), transient, next_ok)
                .await;
        }
        let (body, not_modified) = match (status, previous) {
            (304, Some(previous)) => match self.sink.body(&previous.sha256).await? {
                Some(body) => (body, true),
                None => return self.complete(id, status).await,
            },
            // No content by protocol: nothing to read, and an empty body is no page's evidence.
            (204, _) => return self.complete(id, status).await,
            (200..=299, _) => (snapshot.body.clone(), false),
            _ => {
                if entry.discovery == Discovery::Sitemap {
                    return self.skip(id, SkipReason::NoSitemap).await;
                }
                if status >= 400 {
                    self.tally(|r| *r.errors.entry(Failure::Status(status)).or_default() += 1);
                }
                return self.complete(id, status).await;
            }
        };
        if snapshot.body_status == BodyStatus::NotDownloaded {
            return self.skip(id, SkipReason::NotText).await;
        }
        if entry.discovery == Discovery::Sitemap {
            self.expand_sitemap(&entry, body).await?;
            return self.complete(id, status).await;
        }
        self.handle_page(id, &entry, &snapshot, stored.id, body, not_modified)
            .await
    }

    async fn handle_page(
        &self,
        id: EntryId,
        entry: &FrontierEntry,
        snapshot: &Snapshot,
        snapshot_id: crate::sink::SnapshotId,
        body: Bytes,
        not_modified: bool,
    ) -> Result<()> {
        let read = match self
            .read_blocking(snapshot, body.clone(), extract::read_page)
            .await
        {
            Ok(done) => done,
            Err(e) => {
                tracing::error!(error = %e, "extraction panicked; page skipped");
                return self.skip(id, SkipReason::ExtractionFailed).await;
            }
        };
        // Empty elements showing glyphs of a same-site sprite: the sprite is fetched (as
        // evidence of its own) and the page read again with it.
        let read = match read.extracted.as_ref().map(|e| e.sprite_sources.clone()) {
            Some(urls) if !urls.is_empty() => {
                let mut sprites = Vec::with_capacity(urls.len());
                for url in urls {
                    let bytes = self.fetch_sprite(url.clone()).await?;
                    sprites.push((url, bytes));
                }
                match self.read_with_sprites(snapshot, body, sprites).await {
                    Ok(again) => again,
                    Err(e) => {
                        tracing::error!(error = %e, "extraction with sprites panicked; first reading kept");
                        read
                    }
                }
            }
            _ => read,
        };
        if let Some(exceeded) = read.exceeded() {
            tracing::info!(url = %snapshot.final_url, %exceeded, "page over a parsing limit; skipped");
            return self.skip(id, SkipReason::OverLimit).await;
        }
        let extract::ReadPage {
            decoded,
            extracted,
            mut kind,
            mut text,
            mut source,
        } = read;
        // A page that holds no chapter but names the same-site endpoint its script fetches
        // the content from: the endpoint is fetched too (as evidence of its own), and its
        // text is the page's when it is more.
        let mut text_snapshot = None;
        if let Some(endpoint) = extracted.as_ref().and_then(|e| e.content_endpoint.clone())
            && let Some((endpoint_id, read)) = self.fetch_endpoint(endpoint).await?
            && read.text.chars().count() > text.chars().count()
        {
            kind = read.kind;
            text = read.text;
            source = read.source;
            text_snapshot = Some(endpoint_id);
        }
        // Private Use Area code points drawn by the page's own font: the font is fetched
        // (as evidence of its own) and the text read through it.
        if let Some(extracted) = &extracted {
            let fonts = &self.settings.extract.fonts;
            let wanted = extract::fonts::sources_to_fetch(fonts, &text, &extracted.font_sources);
            if !wanted.is_empty()
                && let Some(decoded) = self
                    .decode_fonts(&snapshot.final_url, &text, wanted)
                    .await?
            {
                text = decoded;
                source = TextSource::Font;
            }
        }
        // The page in a headless browser: every page of a crawl that asks for it, and a
        // placeholder (little text, a big script) of any crawl when Chromium is installed.
        // A challenge page is rendered for its screenshot only: its kind and text stay, so
        // the browser is never a way past a challenge.
        let challenge = kind == PageKind::Challenge;
        if let (Some(renderer), Some(read)) = (&self.renderer, &extracted)
            && !matches!(kind, PageKind::Redirect | PageKind::Index)
            && (self.settings.render.enabled
                || challenge
                || read.is_placeholder(text.chars().count()))
        {
            match self.render(renderer, snapshot, snapshot_id).await? {
                Some(rendered)
                    if !challenge
                        && (self.settings.render.enabled && source != TextSource::Sprite
                            || rendered.text.chars().count() > text.chars().count()) =>
                {
                    kind = rendered.extracted.kind;
                    text = rendered.text;
                    // What the browser drew on canvases, or showed of a sprite, says so.
                    source = match rendered.extracted.source {
                        s @ (TextSource::Canvas | TextSource::Sprite) => s,
                        _ => TextSource::Rendered,
                    };
                    text_snapshot = None;
                }
                _ => {}
            }
        }
        // A page whose text is thin for the images it shows, or of a site listed for it: its
        // images are fetched (each as evidence of its own) and read by OCR, and their text is
        // the page's when it is more.
        if let (Some(engine), Some(read)) = (&self.ocr, &extracted)
            && !matches!(
                kind,
                PageKind::Redirect | PageKind::Index | PageKind::Challenge
            )
            && let Some((trigger, wanted)) = extract::ocr::images_to_fetch(
                &self.settings.extract.ocr,
                snapshot.final_url.host_str(),
                text.chars().count(),
                &read.images,
            )
        {
            let urls: Vec<Url> = wanted.iter().map(|i| i.url.clone()).collect();
            tracing::debug!(?trigger, images = urls.len(), "reading the page's images");
            if let Some(ocr) = self.read_images(engine, &snapshot.final_url, &urls).await?
                && ocr.chars() > text.chars().filter(|c| !c.is_whitespace()).count()
            {
                kind = PageKind::Content;
                text = ocr.text;
                source = TextSource::Ocr;
                text_snapshot = None;
            }
        }
        let chain = entry.chain.clone().or_else(|| {
            extracted.as_ref()?.next_page.as_ref().map(|_| ChainPos {
                head: entry.url.clone(),
                index: 0,
            })
        });
        let page = PageRecord {
            url: entry.url.clone(),
            final_url: snapshot.final_url.clone(),
            snapshot: snapshot_id,
            depth: entry.depth,
            chain,
            kind,
            title: extracted.as_ref().and_then(|e| e.title.clone()),
            chapter_title: extracted.as_ref().and_then(|e| e.chapter_title.clone()),
            text,
            encoding: decoded.encoding.name(),
            decode_errors: decoded.had_errors,
            not_modified,
            fetched_at: snapshot.fetched_at,
            source,
            text_snapshot,
            declared_encoding: decoded.overridden.map(|e| e.name()),
        };
        self.sink.store_page(page).await?;
        self.tally(|r| {
            r.pages += 1;
            *r.pages_by_kind.entry(kind.as_str()).or_default() += 1;
            if kind == PageKind::Challenge {
                *r.skipped.entry(SkipReason::Challenge).or_default() += 1;
            }
        });
        if let Some(extracted) = extracted {
            let entries = self.discover(entry, &snapshot.final_url, &extracted);
            if !entries.is_empty() {
                self.frontier.push(entries).await?;
            }
        }
        self.complete(id, snapshot.status).await
    }

    /// Renders a fetched page in the headless browser, every request it makes checked by the
    /// crawl's address rules and robots.txt, and stores the rendered DOM, its text and a
    /// screenshot (content and challenge pages) beside the snapshot. `None` when the browser
    /// failed (counted, the raw text kept); a failure of the store is an error.
    async fn render(
        &self,
        renderer: &Renderer,
        snapshot: &Snapshot,
        snapshot_id: crate::sink::SnapshotId,
    ) -> Result<Option<crate::render::Rendered>> {
        let robots = Arc::clone(&self.robots);
        let allow_url: UrlGate =
            Arc::new(move |u: &Url| robots.cached(u).is_none_or(|r| r.allowed(u)));
        let request = RenderRequest {
            url: snapshot.final_url.clone(),
            policy: Arc::new(crate::safety::AddressPolicy::new(
                &self.settings.fetch.safety,
            )),
            allow_url: Some(allow_url),
            screenshot: true,
        };
        let mut rendered = match renderer
            .render_again_if_failed(&self.extractor, request)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "rendering failed; the raw text is kept");
                self.tally(|r| *r.skipped.entry(SkipReason::RenderFailed).or_default() += 1);
                return Ok(None);
            }
        };
        if !matches!(
            rendered.extracted.kind,
            PageKind::Content | PageKind::Challenge
        ) {
            rendered.screenshot = None;
        }
        self.sink
            .store_render(rendered.to_store(snapshot_id))
            .await?;
        self.tally(|r| r.rendered += 1);
        Ok(Some(rendered))
    }

    /// Fetches a page's content endpoint under the rules of any fetch (robots.txt, the host's
    /// politeness, the fetcher's address safety and size caps), stores the response as a
    /// snapshot, and reads its text within a page's time budget. `None` when robots.txt
    /// denies it, the fetch fails or the response is not a 2xx; a failure of the store is an
    /// error.
    async fn fetch_endpoint(
        &self,
        url: Url,
    ) -> Result<Option<(crate::sink::SnapshotId, extract::ReadPage)>> {
        let Some(host) = HostKey::of(&url) else {
            return Ok(None);
        };
        let rules = self.robots.rules_for(&url, |u| self.fetch_robots(u)).await;
        if !rules.allowed(&url) {
            tracing::debug!(%url, "robots.txt denies the content endpoint");
            return Ok(None);
        }
        let permit = self.politeness.acquire(&host, rules.crawl_delay).await?;
        let request = FetchRequest {
            url,
            validators: None,
            max_body_bytes: None,
            accept_json: true,
            accept_font: false,
            accept_svg: false,
            accept_image: false,
        };
        let result = self.fetcher.fetch(&request).await;
        self.politeness.release(permit, feedback(&result)).await?;
        let snapshot = match result {
            Ok(s) => s,
            Err(e) => {
                tracing::info!(error = %e, "content endpoint fetch failed");
                return Ok(None);
            }
        };
        let stored = self.sink.store_snapshot(&snapshot).await?;
        self.count_response(&snapshot, Some(stored.new_body));
        if !(200..300).contains(&snapshot.status)
            || snapshot.body_status == BodyStatus::NotDownloaded
        {
            return Ok(None);
        }
        let body = snapshot.body.clone();
        let read = self
            .read_blocking(&snapshot, body, extract::read_endpoint)
            .await;
        Ok(read.ok().map(|read| (stored.id, read)))
    }

    /// Fetches the fonts at `urls` (each as [`Crawl::fetch_font`] does) and reads `text`
    /// through them on a blocking thread: the decoded text, or `None` when no font mapped a
    /// character (each font's problem logged). A failure of the store is an error.
    async fn decode_fonts(&self, page: &Url, text: &str, urls: &[Url]) -> Result<Option<String>> {
        let mut fonts = Vec::with_capacity(urls.len());
        for url in urls {
            fonts.push((url.clone(), self.fetch_font(url.clone()).await?));
        }
        let decoder = extract::fonts::decoder(&self.settings.extract.fonts);
        let input = text.to_owned();
        let decoded = tokio::task::spawn_blocking(move || {
            extract::fonts::decode_text(&decoder, &input, &fonts)
        })
        .await;
        let decoded = match decoded {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(error = %e, url = %page, "font decoding panicked; text kept");
                return Ok(None);
            }
        };
        for note in &decoded.notes {
            tracing::info!(url = %page, %note, "page font not used");
        }
        tracing::debug!(
            url = %page,
            replaced = decoded.replaced,
            left = decoded.left,
            "page text read through its font"
        );
        Ok((decoded.replaced > 0).then_some(decoded.text))
    }

    /// Reads a page again, with its glyph sprites, on a blocking thread within the page's
    /// time budget.
    async fn read_with_sprites(
        &self,
        snapshot: &Snapshot,
        body: Bytes,
        sprites: Vec<extract::sprite::FetchedSprite>,
    ) -> std::result::Result<extract::ReadPage, tokio::task::JoinError> {
        let extractor = Arc::clone(&self.extractor);
        let content_type = snapshot.content_type().map(str::to_owned);
        let url = snapshot.final_url.clone();
        let deadline = Instant::now() + self.settings.extract.time_budget;
        tokio::task::spawn_blocking(move || {
            let assets = extract::PageAssets {
                sprites,
                ..extract::PageAssets::default()
            };
            extract::read_page_with(
                &extractor,
                &body,
                content_type.as_deref(),
                &url,
                Some(deadline),
                &assets,
            )
        })
        .await
    }

    /// Fetches a page's glyph sprite ([`Self::fetch_asset`]), capped at
    /// [`extract::sprite::MAX_SVG_BYTES`].
    async fn fetch_sprite(&self, url: Url) -> Result<std::result::Result<Vec<u8>, String>> {
        let request = crate::fetch::sprite_request(url);
        let cap = extract::sprite::MAX_SVG_BYTES as u64;
        self.fetch_asset(&request, cap, "an SVG").await
    }

    /// Fetches a page's font ([`Self::fetch_asset`]), capped at
    /// [`FontSettings::max_font_bytes`](fontmap::FontSettings::max_font_bytes).
    async fn fetch_font(&self, url: Url) -> Result<std::result::Result<Vec<u8>, String>> {
        let fonts = &self.settings.extract.fonts;
        let request = crate::fetch::font_request(url, fonts);
        self.fetch_asset(&request, fonts.max_font_bytes, "a font")
            .await
    }

    /// Fetches what a page brings along (a font, a glyph sprite, an image) under the rules of
    /// any fetch (robots.txt, the host's politeness, the fetcher's address safety), its body
    /// capped at `cap` bytes, and stores the response as a snapshot: the bytes, or why there
    /// are none (`what` names the kind expected when the body is not of it). A failure of the
    /// store is an error.
    async fn fetch_asset(
        &self,
        request: &FetchRequest,
        cap: u64,
        what: &str,
    ) -> Result<std::result::Result<Vec<u8>, String>> {
        let url = &request.url;
        let Some(host) = HostKey::of(url) else {
            return Ok(Err("no host".to_owned()));
        };
        let rules = self.robots.rules_for(url, |u| self.fetch_robots(u)).await;
        if !rules.allowed(url) {
            return Ok(Err("robots.txt denies it".to_owned()));
        }
        let permit = self.politeness.acquire(&host, rules.crawl_delay).await?;
        let result = self.fetcher.fetch(request).await;
        self.politeness.release(permit, feedback(&result)).await?;
        let snapshot = match result {
            Ok(s) => s,
            Err(e) => return Ok(Err(format!("fetch failed: {e}"))),
        };
        let stored = self.sink.store_snapshot(&snapshot).await?;
        self.count_response(&snapshot, Some(stored.new_body));
        Ok(match (snapshot.status, snapshot.body_status) {
            (200..=299, BodyStatus::Complete) => Ok(snapshot.body.to_vec()),
            (200..=299, BodyStatus::Truncated) => Err(format!("over the cap of {cap} bytes")),
            (200..=299, _) => Err(format!(
                "not {what}: {}",
                snapshot.content_type().unwrap_or("no content type")
            )),
            (status, _) => Err(format!("the server answered HTTP {status}")),
        })
    }

    /// Fetches a page's images (each as [`Crawl::fetch_image`] does) and reads them with
    /// `engine` on a blocking thread within `ocr.page_budget`: what was read, each image with
    /// its SHA-256, size, lines, boxes and confidences, or `None` when reading panicked. A
    /// failure of the store is an error.
    async fn read_images(
        &self,
        engine: &Arc<dyn extract::OcrEngine>,
        page: &Url,
        urls: &[Url],
    ) -> Result<Option<extract::PageOcr>> {
        let mut images = Vec::with_capacity(urls.len());
        for url in urls {
            images.push((url.clone(), self.fetch_image(url.clone()).await?));
        }
        let engine = Arc::clone(engine);
        let settings = self.settings.extract.ocr.clone();
        let deadline = Instant::now() + settings.page_budget;
        let read = tokio::task::spawn_blocking(move || {
            extract::ocr::read_images(engine.as_ref(), &settings, &images, deadline)
        })
        .await;
        let read = match read {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, url = %page, "reading images panicked; text kept");
                return Ok(None);
            }
        };
        for image in &read.images {
            if let Some(note) = &image.note {
                tracing::info!(url = %page, image = %image.url, %note, "page image not read");
            }
        }
        tracing::debug!(url = %page, chars = read.chars(), engine = %read.engine, "page images read");
        self.tally(|r| {
            r.ocr_images += read.images.iter().filter(|i| !i.lines.is_empty()).count() as u64
        });
        Ok(Some(read))
    }

    /// Fetches a page's image ([`Self::fetch_asset`]), capped at
    /// [`OcrSettings::max_image_bytes`](extract::OcrSettings::max_image_bytes).
    async fn fetch_image(&self, url: Url) -> Result<std::result::Result<Vec<u8>, String>> {
        let ocr = &self.settings.extract.ocr;
        let request = crate::fetch::image_request(url, ocr);
        self.fetch_asset(&request, ocr.max_image_bytes, "an image")
            .await
    }

    /// Runs `read` (`read_page` or `read_endpoint`) over a response's `body` on a blocking
    /// thread within the page time budget: decoding and extraction are CPU work on hostile
    /// bytes, and no page may starve the tasks that hold the store's connections.
    async fn read_blocking(
        &self,
        snapshot: &Snapshot,
        body: Bytes,
        read: Reader,
    ) -> std::result::Result<extract::ReadPage, tokio::task::JoinError> {
        let extractor = Arc::clone(&self.extractor);
        let content_type = snapshot.content_type().map(str::to_owned);
        let url = snapshot.final_url.clone();
        let deadline = Instant::now() + self.settings.extract.time_budget;
        tokio::task::spawn_blocking(move || {
            read(
                &extractor,
                &body,
                content_type.as_deref(),
                &url,
                Some(deadline),
            )
        })
        .await
    }

    /// The frontier entries for what a page links to.
    fn discover(
        &self,
        entry: &FrontierEntry,
        page_url: &Url,
        ex: &Extracted,
    ) -> Vec<FrontierEntry> {
        let mut out = Vec::new();
        let mut skips: Vec<LinkSkip> = Vec::new();
        let child =
            |url: Url, depth: u32, discovery: Discovery, chain: Option<ChainPos>| FrontierEntry {
                url,
                depth,
                discovery,
                parent: Some(page_url.clone()),
                chain,
            };
        let in_scope = |url: &Url, skips: &mut Vec<LinkSkip>| match self.scope.check(url) {
            Ok(()) => true,
            Err(r) => {
                skips.push(LinkSkip::Scope(r));
                false
            }
        };
        if let Some(next) = &ex.next_page {
            let pos = entry.chain.as_ref().map_or(
                ChainPos {
                    head: entry.url.clone(),
                    index: 1,
                },
                |c| ChainPos {
                    head: c.head.clone(),
                    index: c.index + 1,
                },
            );
            if pos.index > self.settings.max_pagination {
                skips.push(LinkSkip::PaginationLimit);
            } else if in_scope(next, &mut skips) {
                out.push(child(
                    next.clone(),
                    entry.depth,
                    Discovery::Pagination,
                    Some(pos),
                ));
            }
        }
        let depth = entry.depth + 1;
        if let Some(target) = &ex.redirect_to {
            if depth > self.settings.max_depth {
                skips.push(LinkSkip::DepthLimit);
            } else if in_scope(target, &mut skips) {
                out.push(child(target.clone(), depth, Discovery::Redirect, None));
            }
        }
        let obey_nofollow = self.settings.obey_nofollow && !self.robots.is_overridden(page_url);
        if ex.nofollow && obey_nofollow {
            skips.push(LinkSkip::Nofollow);
        } else {
            for link in &ex.links {
                if Some(&link.url) == ex.next_page.as_ref()
                    || Some(&link.url) == ex.redirect_to.as_ref()
                {
                    continue;
                }
                let skip = if link.nofollow && obey_nofollow {
                    Some(LinkSkip::Nofollow)
                } else if depth > self.settings.max_depth {
                    Some(LinkSkip::DepthLimit)
                } else if let Err(rejection) = self.scope.check(&link.url) {
                    Some(LinkSkip::Scope(rejection))
                } else if self
                    .robots
                    .cached(&link.url)
                    .is_some_and(|r| !r.allowed(&link.url))
                {
                    Some(LinkSkip::RobotsDenied)
                } else {
                    None
                };
                match skip {
                    Some(skip) => skips.push(skip),
                    None => out.push(child(link.url.clone(), depth, Discovery::Link, None)),
                }
            }
        }
        if !skips.is_empty() {
            self.tally(|r| {
                for s in skips {
                    *r.links_not_followed.entry(s).or_default() += 1;
                }
            });
        }
        out
    }

    async fn expand_sitemap(&self, entry: &FrontierEntry, body: Bytes) -> Result<()> {
        // Up to 50 MB inflated: parsed on a blocking thread like a page.
        let sitemap = tokio::task::spawn_blocking(move || links::parse_sitemap(&body))
            .await
            .unwrap_or_default();
        let mut out = Vec::new();
        for loc in sitemap.sitemaps.iter().take(MAX_CHILD_SITEMAPS) {
            if self.sitemap_files.fetch_add(1, Ordering::Relaxed) >= MAX_SITEMAP_FILES {
                break;
            }
            if let Some(url) =
                extract::links::resolve(&entry.url, loc).filter(|u| self.scope.check(u).is_ok())
            {
                out.push(FrontierEntry {
                    url,
                    depth: entry.depth,
                    discovery: Discovery::Sitemap,
                    parent: Some(entry.url.clone()),
                    chain: None,
                });
            }
        }
        let depth = entry.depth + 1;
        if depth <= self.settings.max_depth {
            out.extend(
                sitemap
                    .pages
                    .iter()
                    .filter_map(|loc| extract::links::resolve(&entry.url, loc))
                    .filter(|u| self.scope.check(u).is_ok())
                    .map(|url| FrontierEntry {
                        url,
                        depth,
                        discovery: Discovery::SitemapLink,
                        parent: Some(entry.url.clone()),
                        chain: None,
                    }),
            );
        }
        tracing::debug!(
            pages = sitemap.pages.len(),
            sitemaps = sitemap.sitemaps.len(),
            "sitemap read"
        );
        self.frontier.push(out).await.map(drop)
    }

    fn count_response(&self, snapshot: &Snapshot, new_body: Option<bool>) {
        self.tally(|r| {
            r.responses += 1;
            r.bytes += snapshot.body.len() as u64;
            *r.statuses.entry(snapshot.status).or_default() += 1;
            match new_body {
                Some(true) => r.new_bodies += 1,
                Some(false) => r.duplicate_bodies += 1,
                None => {}
            }
            r.not_modified += u64::from(snapshot.status == 304);
            r.truncated += u64::from(snapshot.body_status == BodyStatus::Truncated);
        });
    }

    async fn complete(&self, id: EntryId, status: u16) -> Result<()> {
        self.frontier
            .complete(id, EntryState::Fetched { status })
            .await
    }

    async fn skip(&self, id: EntryId, reason: SkipReason) -> Result<()> {
        self.tally(|r| *r.skipped.entry(reason).or_default() += 1);
        self.frontier
            .complete(id, EntryState::Skipped(reason.as_str().to_owned()))
            .await
    }

    /// Retries a failure that may pass, when attempts remain; otherwise records it.
    async fn fail(
        &self,
        id: EntryId,
        attempts: u32,
        failure: Failure,
        transient: bool,
        next_ok: DateTime<Utc>,
    ) -> Result<()> {
        if transient && attempts + 1 < self.settings.max_attempts {
            self.tally(|r| r.retries += 1);
            let not_before = next_ok.max(Utc::now());
            tracing::debug!(%failure, %not_before, "retry scheduled");
            return self.frontier.retry(id, not_before, true).await;
        }
        tracing::warn!(%failure, attempts = attempts + 1, "giving up on url");
        self.tally(|r| *r.errors.entry(failure).or_default() += 1);
        self.frontier
            .complete(id, EntryState::Failed(failure.to_string()))
            .await
    }
}

/// A way from a response's body to its text: `extract::read_page` or `read_endpoint`.
type Reader = fn(&Extractor, &[u8], Option<&str>, &Url, Option<Instant>) -> extract::ReadPage;

/// How a fetch result bears on the host's health.
fn feedback(result: &Result<Snapshot>) -> HostFeedback {
    match result {
        Ok(s) if s.status == 429 || (s.status == 503 && s.retry_after().is_some()) => {
            HostFeedback::Throttled {
                retry_after: s.retry_after(),
            }
        }
        Ok(s) if (500..600).contains(&s.status) => HostFeedback::Failed,
        Ok(_) => HostFeedback::Success,
        Err(e) => match e.kind() {
            ErrorKind::Timeout | ErrorKind::Connect | ErrorKind::Transport | ErrorKind::Dns => {
                HostFeedback::Failed
            }
            _ => HostFeedback::Success,
        },
    }
}

/// One chapter put together from its pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chapter {
    /// The first page's URL.
    pub url: Url,
    pub title: Option<String>,
    /// The pages in order.
    pub pages: Vec<Url>,
    /// The pages' texts joined by `\n`.
    pub text: String,
    /// Whether a page of the chain is missing (index gap), e.g. it failed to fetch.
    pub incomplete: bool,
}

/// Joins pages of split chapters (by [`ChainPos`]) and passes single-page content through.
/// Index, challenge and redirect pages are left out.
pub fn assemble_chapters(pages: &[PageRecord]) -> Vec<Chapter> {
    let mut chains: BTreeMap<String, Vec<&PageRecord>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for page in pages.iter().filter(|p| p.kind == PageKind::Content) {
        let key = page
            .chain
            .as_ref()
            .map_or_else(|| page.url.to_string(), |c| c.head.to_string());
        let list = chains.entry(key.clone()).or_default();
        if list.is_empty() {
            order.push(key);
        }
        list.push(page);
    }
    order
        .into_iter()
        .map(|key| {
            let mut parts = chains.remove(&key).unwrap_or_default();
            parts.sort_by_key(|p| p.chain.as_ref().map_or(0, |c| c.index));
            let incomplete = parts
                .iter()
                .enumerate()
                .any(|(i, p)| p.chain.as_ref().map_or(0, |c| c.index) as usize != i);
            Chapter {
                url: Url::parse(&key).unwrap_or_else(|_| parts[0].url.clone()),
                title: parts
                    .iter()
                    .find_map(|p| p.chapter_title.clone().or_else(|| p.title.clone())),
                pages: parts.iter().map(|p| p.url.clone()).collect(),
                text: parts
                    .iter()
                    .map(|p| p.text.as_str())
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n"),
                incomplete,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first error `change` makes, as the binary prints it (under `[crawler]`).
    fn refusal(change: impl FnOnce(&mut CrawlSettings)) -> String {
        let mut s = CrawlSettings::default();
        change(&mut s);
        s.validate().unwrap_err().in_section("crawler").to_string()
    }

    #[test]
    fn out_of_range_settings_are_refused_with_key_value_and_range() {
        CrawlSettings::default().validate().unwrap();
        // Zero durations: timeouts, leases, cache lifetimes, backoff.
        assert_eq!(
            refusal(|s| s.fetch.timeout = Duration::ZERO),
            "crawler.fetch.timeout = 0s is out of range: must be at least 1ms"
        );
        assert_eq!(
            refusal(|s| s.fetch.connect_timeout = Duration::ZERO),
            "crawler.fetch.connect_timeout = 0s is out of range: must be at least 1ms"
        );
        assert!(refusal(|s| s.fetch.read_timeout = Duration::ZERO).contains("read_timeout"));
        assert!(refusal(|s| s.frontier_lease = Duration::ZERO).contains("frontier_lease = 0s"));
        assert!(refusal(|s| s.robots.ttl = Duration::ZERO).contains("robots.ttl = 0s"));
        assert!(refusal(|s| s.robots.error_ttl = Duration::ZERO).contains("robots.error_ttl"));
        assert!(refusal(|s| s.politeness.lease = Duration::ZERO).contains("politeness.lease"));
        assert_eq!(
            refusal(|s| s.politeness.backoff_base = Duration::ZERO),
            "crawler.politeness.backoff_base = 0s is out of range: must be at least 1ms"
        );
        // One setting bounded by another.
        assert_eq!(
            refusal(|s| s.politeness.backoff_max = Duration::from_millis(1500)),
            "crawler.politeness.backoff_max = 1500ms is out of range: must be at least 2s"
        );
        // Sizes and counts that must be at least 1.
        assert_eq!(
            refusal(|s| s.max_pages = Some(0)),
            "crawler.max_pages = 0 is out of range: must be at least 1"
        );
        assert!(refusal(|s| s.max_attempts = 0).contains("crawler.max_attempts = 0"));
        assert!(refusal(|s| s.max_frontier = 0).contains("crawler.max_frontier = 0"));
        assert!(refusal(|s| s.fetch.max_body_bytes = 0).contains("fetch.max_body_bytes = 0"));
        assert!(refusal(|s| s.robots.max_bytes = 0).contains("robots.max_bytes = 0"));
        assert!(refusal(|s| s.robots.cache_capacity = 0).contains("robots.cache_capacity"));
        assert!(
            refusal(|s| s.politeness.per_host_concurrency = 0)
                .contains("politeness.per_host_concurrency = 0")
        );
        assert!(
            refusal(|s| s.politeness.global_concurrency = 0)
                .contains("politeness.global_concurrency = 0")
        );
        assert!(refusal(|s| s.scope.max_url_len = 0).contains("scope.max_url_len = 0"));
        assert!(
            refusal(|s| s.scope.max_repeated_segment = 0)
                .contains("scope.max_repeated_segment = 0")
        );

        // What may be zero or absent is accepted.
        let mut s = CrawlSettings {
            max_pages: None,
            max_depth: 0,
            max_pagination: 0,
            ..CrawlSettings::default()
        };
        s.fetch.max_redirects = 0;
        s.politeness.delay = Duration::ZERO;
        s.scope.max_query_params = 0;
        s.validate().unwrap();
    }

    #[test]
    fn a_crawl_and_a_fetcher_refuse_out_of_range_settings() {
        let mut s = CrawlSettings::default();
        s.fetch.timeout = Duration::ZERO;
        let seed = Url::parse("https://example.com/").unwrap();
        let Err(err) = Crawl::in_memory(s.clone(), vec![seed]) else {
            panic!("a zero timeout was accepted");
        };
        assert!(matches!(err, Error::OutOfRange(_)), "{err:?}");
        assert_eq!(err.kind(), ErrorKind::Config);
        assert_eq!(
            err.to_string(),
            "invalid crawl settings: fetch.timeout = 0s is out of range: must be at least 1ms"
        );
        let Err(err) = Fetcher::new(s.fetch) else {
            panic!("a zero timeout was accepted");
        };
        assert!(err.to_string().contains("fetch.timeout = 0s"), "{err}");
    }

    #[test]
    fn settings_load_from_a_config_tree_with_defaults_filled_in() {
        let json = r##"{
            "max_pages": 50,
            "politeness": {"delay": "250ms", "backoff_max": 60},
            "fetch": {"timeout": "30s", "safety": {"allow_private": true, "allowed_networks": ["10.0.0.0/8"]}},
            "robots": {"ignore_for": ["pirate.example"], "ttl": "12h"},
            "scope": {"exclude": ["/login"]},
            "extract": {"content_selectors": ["#chaptercontent"]}
        }"##;
        let s: CrawlSettings = serde_json::from_str(json).unwrap();
        assert_eq!(s.max_pages, Some(50));
        assert_eq!(s.max_depth, CrawlSettings::default().max_depth);
        assert_eq!(s.politeness.delay, Duration::from_millis(250));
        assert_eq!(s.politeness.backoff_max, Duration::from_secs(60));
        assert_eq!(s.politeness.per_host_concurrency, 1);
        assert_eq!(s.fetch.timeout, Duration::from_secs(30));
        assert_eq!(s.fetch.max_body_bytes, 5 * 1024 * 1024);
        assert!(s.fetch.safety.allow_private);
        assert_eq!(s.robots.ttl, Duration::from_secs(12 * 3600));
        // An unknown key is not this crate's to refuse: the binary's loader warns about it,
        // in every section alike, and the value keeps its default.
        let s =
            serde_json::from_str::<CrawlSettings>(r#"{"politeness": {"dealy": "1s"}}"#).unwrap();
        assert_eq!(
            s.politeness.delay,
            CrawlSettings::default().politeness.delay
        );
        let err =
            serde_json::from_str::<CrawlSettings>(r#"{"fetch": {"timeout": "soon"}}"#).unwrap_err();
        assert!(err.to_string().contains("invalid duration"), "{err}");
    }

    fn page(url: &str, chain: Option<(&str, u32)>, text: &str) -> PageRecord {
        let u = Url::parse(url).unwrap();
        PageRecord {
            url: u.clone(),
            final_url: u,
            snapshot: crate::sink::SnapshotId(1),
            depth: 1,
            chain: chain.map(|(head, index)| ChainPos {
                head: Url::parse(head).unwrap(),
                index,
            }),
            kind: PageKind::Content,
            title: None,
            chapter_title: Some("第三回".into()),
            text: text.into(),
            encoding: "GBK",
            decode_errors: false,
            not_modified: false,
            fetched_at: Utc::now(),
            source: extract::TextSource::Markup,
            text_snapshot: None,
            declared_encoding: None,
        }
    }

    #[test]
    fn chapters_are_assembled_in_chain_order() {
        let head = "http://a.test/3.html";
        let pages = [
            page("http://a.test/3_3.html", Some((head, 2)), "三"),
            page(head, Some((head, 0)), "一"),
            page("http://a.test/4.html", None, "四"),
            page("http://a.test/3_2.html", Some((head, 1)), "二"),
        ];
        let chapters = assemble_chapters(&pages);
        assert_eq!(chapters.len(), 2);
        assert_eq!(
            (chapters[0].text.as_str(), chapters[0].pages.len()),
            ("一\n二\n三", 3)
        );
        assert!(!chapters[0].incomplete);
        assert_eq!(chapters[1].text, "四");
        let gap = assemble_chapters(&[pages[0].clone(), pages[1].clone()]);
        assert!(gap[0].incomplete);
        assert_eq!(Failure::Status(404).to_string(), "http_404");
        assert_eq!(Failure::Error(ErrorKind::Timeout).to_string(), "timeout");
    }
}
