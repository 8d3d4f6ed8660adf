//! Crawls, their frontiers and per-host politeness state, kept in the database so a crawl
//! resumes after a restart and many worker processes (on many machines) share one crawl and
//! one politeness budget per host.
//!
//! - [`Crawls`]: a `crawls` row per crawl with its seeds, the crawler's settings (opaque
//!   JSON), its page budget and status; listed newest first by a [`CrawlFilter`], and read
//!   whole as a [`CrawlDetail`] (runs, bodies, failures by kind, skips by reason, matches and
//!   cases found on its pages) for an operator.
//! - [`CrawlFrontier`]: one `frontier` row per normalised URL of a crawl. A push is
//!   `INSERT ... ON CONFLICT DO NOTHING` on `(crawl_id, url_hash)`; a claim takes the next
//!   due entry with a lease (`FOR UPDATE SKIP LOCKED` on Postgres, the single writer inside
//!   `BEGIN IMMEDIATE` on SQLite) and, for an entry never claimed before, one unit of the
//!   crawl's page budget in the same transaction. An entry whose lease runs out (its worker
//!   died) goes back to the queue; each claim is fenced by its claim number, so a worker that
//!   lost its lease cannot complete the entry.
//! - [`CrawlRuns`]: one `crawl_runs` row per runner of a crawl with a heartbeat. A claim
//!   records its run; the claims of a run that ended, or whose heartbeat is older than the
//!   run's own `dead_after`, go back to the queue on the next claim at once, without waiting
//!   for their lease, while a live run (any process, any machine) keeps its claims.
//! - A crawl's totals (pages stored, failures, bytes) are counted from its snapshots and
//!   frontier whenever it is read, so they are exact after any number of kills and resumes.
//! - [`HostStates`]: one `host_states` row per host, changed only by running a closure over
//!   the decoded row under a row lock (`SELECT ... FOR UPDATE` on Postgres, a write
//!   transaction on SQLite). The politeness rules themselves are the crawler's.
//!
//! The store knows nothing of HTTP: URLs, discovery kinds and settings are strings it keeps.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sha2::Digest;
use sqlx::AssertSqlSafe;
use tracing::instrument;

use crate::db::{Backend, read_pool, write_pool, write_tx};
use crate::evidence::upsert_site;
use crate::queue::{from_millis, millis};
use crate::{CrawlId, CrawlRunId, Error, FrontierId, Result, Store};

/// Where a crawl is in its life (`crawls.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CrawlStatus {
    /// Created (or stopped part-way), waiting for a runner; its frontier is kept.
    Queued,
    /// A runner works on it.
    Running,
    /// Its frontier is exhausted or its budget spent.
    Done,
    /// It stopped on an error a retry may not fix.
    Failed,
    /// Given up by an operator.
    Cancelled,
}

impl CrawlStatus {
    /// The name kept in `crawls.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            CrawlStatus::Queued => "queued",
            CrawlStatus::Running => "running",
            CrawlStatus::Done => "done",
            CrawlStatus::Failed => "failed",
            CrawlStatus::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "queued" => CrawlStatus::Queued,
            "running" => CrawlStatus::Running,
            "done" => CrawlStatus::Done,
            "failed" => CrawlStatus::Failed,
            "cancelled" => CrawlStatus::Cancelled,
            other => {
                return Err(Error::InvalidInput(format!(
                    "unknown crawl status {other:?} in the database"
                )));
            }
        })
    }
}

/// A status as a person types it (`Done`, ` running `); the error names the statuses.
impl std::str::FromStr for CrawlStatus {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        CrawlStatus::parse(&s.trim().to_ascii_lowercase()).map_err(|_| {
            Error::InvalidInput(format!(
                "{s:?} is not a crawl status: give queued, running, done, failed or cancelled"
            ))
        })
    }
}

/// A crawl to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCrawl {
    /// Seed URLs (at least one); the first one's origin is the crawl's site.
    pub seeds: Vec<String>,
    /// The crawler's settings as JSON; the store keeps them as given.
    pub settings: String,
    /// Distinct frontier entries that may be claimed; `None` for no limit.
    pub max_pages: Option<u64>,
}

/// A stored crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlRecord {
    pub id: CrawlId,
    /// The `sites` row of the first seed's origin.
    pub site_id: i64,
    pub status: CrawlStatus,
    pub seeds: Vec<String>,
    /// The crawler's settings as JSON.
    pub settings: String,
    pub max_pages: Option<u64>,
    /// Distinct frontier entries claimed so far (what `max_pages` bounds).
    pub pages_claimed: u64,
    /// Over all runs, counted from what is stored (so a page fetched again after a crash
    /// counts once): distinct URLs whose page text was stored; frontier entries that failed
    /// for good or ended with an HTTP status of 400 or more; body bytes of the crawl's
    /// stored responses (robots.txt, sitemaps and failed attempts included).
    pub pages_fetched: u64,
    pub pages_failed: u64,
    pub bytes: u64,
    /// Why it failed.
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// Crawl rows.
pub trait Crawls {
    /// Creates a crawl in status `queued` (and the `sites` row of its first seed).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] without seeds.
    fn create_crawl(&self, crawl: &NewCrawl) -> impl Future<Output = Result<CrawlId>> + Send;

    /// [`Crawls::create_crawl`] unless the site of the first seed has an unfinished crawl
    /// (`queued` or `running`): then that crawl's id. `true` when the crawl was created.
    /// Concurrent calls for one site create one crawl (the site's row is locked while the
    /// transaction looks), so two crawls of a site never overlap however they were started.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] without seeds.
    fn create_crawl_unless_unfinished(
        &self,
        crawl: &NewCrawl,
    ) -> impl Future<Output = Result<(CrawlId, bool)>> + Send;

    /// One crawl.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn crawl(&self, id: CrawlId) -> impl Future<Output = Result<CrawlRecord>> + Send;

    /// Moves a crawl to `status` (with `error` for `failed`). `running` sets `started_at` the
    /// first time; `done`, `failed` and `cancelled` set `finished_at`. The totals columns of
    /// the row are brought up to date from the snapshots and frontier at the same time, for
    /// plain-SQL readers; [`Crawls::crawl`] counts them afresh.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn set_crawl_status(
        &self,
        id: CrawlId,
        status: CrawlStatus,
        error: Option<&str>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Changes a crawl's page budget (e.g. to resume a crawl that spent it).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn set_crawl_budget(
        &self,
        id: CrawlId,
        max_pages: Option<u64>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Crawls matching `filter`, newest first: those with an id below `before` (all when
    /// `None`; pass the last id of a page to get the next), at most `limit` of them. Totals
    /// are counted as in [`Crawls::crawl`].
    fn crawls(
        &self,
        filter: &CrawlFilter,
        before: Option<CrawlId>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<CrawlRecord>>> + Send;

    /// Everything stored about one crawl, counted afresh: the row, its frontier, its runs,
    /// responses and new bodies, pages by kind, failures by kind, skipped entries by reason
    /// and the matches and cases found on its pages.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn crawl_detail(&self, id: CrawlId) -> impl Future<Output = Result<CrawlDetail>> + Send;
}

/// Which crawls [`Crawls::crawls`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CrawlFilter {
    /// Every crawl.
    #[default]
    All,
    /// Crawls in this status.
    Status(CrawlStatus),
    /// Crawls of this site (`sites.id`).
    Site(i64),
    /// Crawls of this site not yet ended (`queued` or `running`).
    Unfinished(i64),
}

/// Everything stored about one crawl ([`Crawls::crawl_detail`]). All counts are over every
/// run of the crawl, counted from what is stored when it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlDetail {
    /// The row, with its totals.
    pub crawl: CrawlRecord,
    /// Its frontier by state.
    pub frontier: FrontierCounts,
    /// Its runs, ended ones included, oldest first.
    pub runs: Vec<CrawlRunSummary>,
    /// Responses stored (snapshots; robots.txt, sitemaps and error pages included).
    pub responses: u64,
    /// Responses whose body no earlier snapshot had (stored anew by this crawl); the rest
    /// of `responses` had a body already stored.
    pub new_bodies: u64,
    /// Distinct page URLs with a stored text, by the kind extraction gave them (`content`,
    /// `index`, `challenge`, ...).
    pub pages_by_kind: BTreeMap<String, u64>,
    /// Frontier entries that failed for good, by the kind recorded (`timeout`, `dns`, ...),
    /// and those that ended with an HTTP status of 400 or more, as `http_<status>`: the
    /// failures [`CrawlRecord::pages_failed`] counts.
    pub errors: BTreeMap<String, u64>,
    /// Frontier entries not used, by the reason recorded (`robots_denied`, `not_text`, ...).
    pub skipped: BTreeMap<String, u64>,
    /// Matches found on the crawl's snapshots.
    pub matches: u64,
    /// Distinct works those matches copy.
    pub matched_works: u64,
    /// Distinct cases those matches belong to (`cases.id`), ascending.
    pub cases: Vec<i64>,
}

impl CrawlDetail {
    /// Responses whose body was stored already (by this crawl or an earlier one).
    pub fn duplicate_bodies(&self) -> u64 {
        self.responses.saturating_sub(self.new_bodies)
    }
}

/// A run of a crawl as [`CrawlDetail`] lists it, ended or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlRunSummary {
    /// Its id.
    pub id: CrawlRunId,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// Its last heartbeat.
    pub heartbeat_at: DateTime<Utc>,
    /// When it ended, if it did; a run killed without ending has none and is not alive.
    pub ended_at: Option<DateTime<Utc>>,
    /// Not ended, and its heartbeat is recent enough (see [`CrawlRuns`]).
    pub alive: bool,
}

/// A URL to add to a crawl's frontier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFrontierEntry {
    /// The normalised URL: the de-duplication key within the crawl.
    pub url: String,
    /// Link hops from a seed.
    pub depth: u32,
    /// How it was found (the crawler's name, e.g. `link`).
    pub discovery: String,
    /// Claim order within one depth, lowest first.
    pub rank: i16,
    /// The page it was found on.
    pub parent: Option<String>,
    /// First URL of a chapter split over several pages, and this page's place in it.
    pub chain: Option<(String, u32)>,
}

/// A claimed frontier entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierRecord {
    /// Id and claim number: pass it to complete or retry.
    pub lease: FrontierLease,
    pub url: String,
    pub depth: u32,
    pub discovery: String,
    pub parent: Option<String>,
    pub chain: Option<(String, u32)>,
    /// Failed attempts so far that counted.
    pub attempts: u32,
}

/// The proof that a worker holds a frontier entry: its id and the claim it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrontierLease {
    pub id: FrontierId,
    /// 1 for the first claim of the entry; later claims have higher numbers.
    pub claim: u32,
}

/// What [`CrawlFrontier::claim_frontier`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontierClaim {
    /// Work on this.
    Entry(FrontierRecord),
    /// Nothing is due now; ask again after at most this long (entries in flight may add
    /// more, a retry becomes due, another worker holds the only candidates).
    Wait(Duration),
    /// Nothing queued (or the budget is spent) and nothing in flight: the crawl is over.
    Done,
}

/// How a claimed entry ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontierOutcome {
    /// A response was stored, with this status.
    Done { status: u16 },
    /// Not used, for this reason.
    Skipped(String),
    /// Failed for good, with this error.
    Failed(String),
}

/// Counts of a crawl's frontier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FrontierCounts {
    /// Waiting, retries not yet due included.
    pub queued: u64,
    /// Claimed, lease not settled.
    pub claimed: u64,
    pub done: u64,
    pub failed: u64,
    pub skipped: u64,
    /// Distinct entries claimed so far (the crawl's spent page budget).
    pub pages_claimed: u64,
}

impl FrontierCounts {
    /// Entries that ended (done, failed or skipped).
    pub fn finished(&self) -> u64 {
        self.done + self.failed + self.skipped
    }
}

/// A crawl's frontier, shared by every worker of the crawl.
pub trait CrawlFrontier {
    /// Adds the entries whose URL the crawl has not seen; returns how many were new.
    ///
    /// # Errors
    /// [`Error::Backend`]; a foreign-key failure for an unknown crawl.
    fn push_frontier(
        &self,
        crawl: CrawlId,
        entries: &[NewFrontierEntry],
    ) -> impl Future<Output = Result<u64>> + Send;

    /// Claims the next entry for `run` (see [`CrawlRuns`]; `None` for a claim that only its
    /// lease protects) for `lease`: due retries (and entries whose lease expired or whose run
    /// is dead) first, by due time; then never-claimed entries by depth, rank and age, each
    /// taking one unit of the page budget.
    fn claim_frontier(
        &self,
        crawl: CrawlId,
        run: Option<CrawlRunId>,
        lease: Duration,
    ) -> impl Future<Output = Result<FrontierClaim>> + Send;

    /// Records how a claimed entry ended.
    ///
    /// # Errors
    /// [`Error::Conflict`] when the claim is no longer held (it expired and was taken over).
    fn complete_frontier(
        &self,
        lease: FrontierLease,
        outcome: &FrontierOutcome,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Puts a claimed entry back, due at `not_before`; `counts` says whether this was a
    /// failed attempt (it is not when the host was only busy).
    ///
    /// # Errors
    /// [`Error::Conflict`] as for [`CrawlFrontier::complete_frontier`].
    fn retry_frontier(
        &self,
        lease: FrontierLease,
        not_before: DateTime<Utc>,
        counts: bool,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Puts claimed entries whose lease ran out, or whose run is dead, back in the queue;
    /// returns how many. [`CrawlFrontier::claim_frontier`] does this too, so a crawl waits on
    /// a dead runner no longer than its `dead_after` (or, for a claim without a run, its
    /// lease).
    fn reclaim_expired_frontier(&self, crawl: CrawlId) -> impl Future<Output = Result<u64>> + Send;

    /// The crawl's frontier counts.
    fn frontier_counts(
        &self,
        crawl: CrawlId,
    ) -> impl Future<Output = Result<FrontierCounts>> + Send;
}

/// A runner's run of a crawl, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlRunRecord {
    pub id: CrawlRunId,
    pub crawl: CrawlId,
    pub started_at: DateTime<Utc>,
    pub heartbeat_at: DateTime<Utc>,
    /// How long its heartbeat may lapse before it counts as dead.
    pub dead_after: Duration,
    /// Whether its heartbeat is recent enough (it has not ended: ended runs are not listed).
    pub alive: bool,
    /// Frontier entries it holds.
    pub claims: u64,
}

/// The runs of a crawl and their heartbeats: the liveness signal that lets a crawl take back
/// the claims of its dead runners at once.
///
/// A runner starts a run, calls [`CrawlRuns::heartbeat_crawl_run`] well within `dead_after`
/// (a fifth of it, say) from a task of its own, passes the run to
/// [`CrawlFrontier::claim_frontier`], and ends it when it stops. A run killed without ending
/// is dead once its heartbeat is `dead_after` old. A run wrongly thought dead (stalled past
/// `dead_after`) loses only claims others take over; its late completions are fenced.
pub trait CrawlRuns {
    /// Registers a run of `crawl`, alive now.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown crawl; [`Error::InvalidInput`] for a zero
    /// `dead_after`.
    fn start_crawl_run(
        &self,
        crawl: CrawlId,
        dead_after: Duration,
    ) -> impl Future<Output = Result<CrawlRunId>> + Send;

    /// Marks a run alive now.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown run or one that has ended.
    fn heartbeat_crawl_run(&self, run: CrawlRunId) -> impl Future<Output = Result<()>> + Send;

    /// Ends a run and puts the entries it still holds back in the queue at once; returns
    /// how many. Ending an ended run does nothing.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown run.
    fn end_crawl_run(&self, run: CrawlRunId) -> impl Future<Output = Result<u64>> + Send;

    /// The runs of `crawl` that have not ended, oldest first, each with whether it is alive.
    fn crawl_runs(
        &self,
        crawl: CrawlId,
    ) -> impl Future<Output = Result<Vec<CrawlRunRecord>>> + Send;
}

/// A fetch slot held on a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostLease {
    pub id: u64,
    /// When it lapses if never released (Unix ms in the row).
    #[serde(with = "chrono::serde::ts_milliseconds")]
    pub expires_at: DateTime<Utc>,
    /// The crawl run holding it, if any: when that run is dead ([`CrawlRuns`]) the slot is
    /// free at once, whatever `expires_at` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<CrawlRunId>,
}

/// One host's shared politeness state, as stored (the crawler's `HostState`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostStateRecord {
    /// No fetch starts before this (delay since the last start).
    pub next_allowed_at: Option<DateTime<Utc>>,
    /// No fetch starts before this either (backoff or `Retry-After`).
    pub backoff_until: Option<DateTime<Utc>>,
    /// Failures since the last success.
    pub consecutive_failures: u32,
    /// Fetch slots in use.
    pub leases: Vec<HostLease>,
}

/// Per-host state shared by every worker.
pub trait HostStates {
    /// Loads `host`'s row (a default one if absent), runs `f` on it and writes it back, all
    /// under a row lock, so concurrent updates of one host from any process are serialised.
    /// `f` must not block: it runs inside the transaction. Leases of crawl runs that ended
    /// or are dead are gone from the row `f` sees.
    fn update_host_state<R, F>(&self, host: &str, f: F) -> impl Future<Output = Result<R>> + Send
    where
        R: Send,
        F: FnOnce(&mut HostStateRecord) -> R + Send;

    /// A host's row, if it has one.
    fn host_state(
        &self,
        host: &str,
    ) -> impl Future<Output = Result<Option<HostStateRecord>>> + Send;
}

// ---------------------------------------------------------------------------------------

/// `id, site_id, status, seeds, settings, max_pages, pages_claimed, pages_fetched,
/// pages_failed, bytes, error, created_at, started_at, finished_at` of a `crawls` row.
type CrawlRow = (
    i64,
    i64,
    String,
    String,
    String,
    Option<i64>,
    i64,
    i64,
    i64,
    i64,
    Option<String>,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
);

fn crawl_from_row(r: CrawlRow) -> Result<CrawlRecord> {
    let seeds = serde_json::from_str(&r.3)
        .map_err(|e| Error::InvalidInput(format!("seeds of crawl {}: {e}", r.0)))?;
    Ok(CrawlRecord {
        id: CrawlId(r.0),
        site_id: r.1,
        status: CrawlStatus::parse(&r.2)?,
        seeds,
        settings: r.4,
        max_pages: r.5.map(|n| n.max(0) as u64),
        pages_claimed: r.6.max(0) as u64,
        pages_fetched: r.7.max(0) as u64,
        pages_failed: r.8.max(0) as u64,
        bytes: r.9.max(0) as u64,
        error: r.10,
        created_at: r.11,
        started_at: r.12,
        finished_at: r.13,
    })
}

/// A crawl's totals counted from what is stored, as three SQL expressions over the `crawls`
/// row in scope: distinct URLs with a stored page text, entries that failed for good or ended
/// with a status of 400 or more (as the crawler's report counts errors), body bytes of its
/// snapshots.
pub(crate) const TOTALS_PAGES: &str = "(SELECT COUNT(DISTINCT pt.url) FROM page_texts pt \
     JOIN snapshots s ON s.id = pt.snapshot_id WHERE s.crawl_id = crawls.id)";
pub(crate) const TOTALS_FAILED: &str = "(SELECT COUNT(*) FROM frontier f WHERE f.crawl_id = crawls.id \
     AND (f.state = 'failed' OR (f.state = 'done' AND f.status >= 400)))";
pub(crate) const TOTALS_BYTES: &str = "(SELECT CAST(COALESCE(SUM(s.body_len), 0) AS BIGINT) \
     FROM snapshots s WHERE s.crawl_id = crawls.id)";

/// `SELECT` of every [`CrawlRow`] column from `crawls`, totals counted afresh.
fn select_crawls() -> String {
    format!(
        "SELECT id, site_id, status, seeds, settings, max_pages, pages_claimed, \
         {TOTALS_PAGES}, {TOTALS_FAILED}, {TOTALS_BYTES}, error, created_at, started_at, \
         finished_at FROM crawls"
    )
}

/// `id, started_at, heartbeat_at, dead_after_ms, ended_at` of a `crawl_runs` row.
type RunHistoryRow = (i64, i64, i64, i64, Option<i64>);

/// The kind of a failed `frontier` row (columns unqualified): entries failed for good by their
/// recorded error, entries done with a status of 400 or more as `http_<status>`.
macro_rules! frontier_error_kind {
    () => {
        "CASE WHEN state = 'failed' THEN COALESCE(last_error, 'unknown') \
         ELSE 'http_' || CAST(status AS TEXT) END"
    };
}

/// Whether a `frontier` row (columns unqualified) failed: the failures [`TOTALS_FAILED`]
/// counts.
macro_rules! frontier_failed {
    () => {
        "(state = 'failed' OR (state = 'done' AND status >= 400))"
    };
}

pub(crate) use {frontier_error_kind, frontier_failed};

/// A crawl's failures by kind as a JSON object (`{}` for none), over the `crawls` row in
/// scope: what [`Crawls::set_crawl_status`] keeps in `crawls.errors_by_kind` when the crawl
/// ends (the migration `20261127040000_crawl_errors` back-fills it the same way).
pub(crate) fn errors_json(kind: crate::BackendKind) -> String {
    let object = match kind {
        crate::BackendKind::Sqlite => "json_group_object(kind, n)",
        crate::BackendKind::Postgres => "CAST(json_object_agg(kind, n) AS TEXT)",
    };
    format!(
        "COALESCE((SELECT {object} FROM (SELECT {} AS kind, COUNT(*) AS n FROM frontier \
         WHERE frontier.crawl_id = crawls.id AND {} GROUP BY 1) e), '{{}}')",
        frontier_error_kind!(),
        frontier_failed!()
    )
}

/// A crawl's failures by kind.
const ERRORS_BY_KIND: &str = concat!(
    "SELECT ",
    frontier_error_kind!(),
    ", COUNT(*) FROM frontier WHERE crawl_id = $1 AND ",
    frontier_failed!(),
    " GROUP BY 1"
);

fn counts(rows: Vec<(String, i64)>) -> BTreeMap<String, u64> {
    rows.into_iter()
        .map(|(k, n)| (k, n.max(0) as u64))
        .collect()
}

fn budget(max_pages: Option<u64>) -> Option<i64> {
    max_pages.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}

/// The first seed and all of them as JSON, or why a crawl cannot have them.
fn seeds_json(crawl: &NewCrawl) -> Result<(&String, String)> {
    let Some(first) = crawl.seeds.first() else {
        return Err(Error::InvalidInput(
            "a crawl needs at least one seed".into(),
        ));
    };
    let seeds = serde_json::to_string(&crawl.seeds)
        .map_err(|e| Error::InvalidInput(format!("crawl seeds: {e}")))?;
    Ok((first, seeds))
}

/// Inserts a `queued` crawl row of site `$site_id` inside transaction `$tx`; its id.
macro_rules! insert_crawl {
    ($tx:expr, $site_id:expr, $seeds:expr, $crawl:expr) => {{
        let crawl: &NewCrawl = $crawl;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO crawls (site_id, seeds, settings, max_pages, created_at) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind($site_id)
        .bind($seeds)
        .bind(&crawl.settings)
        .bind(budget(crawl.max_pages))
        .bind(Utc::now())
        .fetch_one(&mut *$tx)
        .await?;
        id
    }};
}

impl Crawls for Store {
    #[instrument(skip_all, fields(seeds = crawl.seeds.len()))]
    async fn create_crawl(&self, crawl: &NewCrawl) -> Result<CrawlId> {
        let (first, seeds) = seeds_json(crawl)?;
        let id = write_tx!(self, |tx| {
            let site_id = upsert_site!(&mut *tx, first);
            insert_crawl!(tx, site_id, &seeds, crawl)
        });
        Ok(CrawlId(id))
    }

    #[instrument(skip_all, fields(seeds = crawl.seeds.len()))]
    async fn create_crawl_unless_unfinished(&self, crawl: &NewCrawl) -> Result<(CrawlId, bool)> {
        let (first, seeds) = seeds_json(crawl)?;
        let (id, created) = write_tx!(self, |tx| {
            let site_id = upsert_site!(&mut *tx, first);
            // Locks the site's row on Postgres until the commit: a second creator waits here
            // and then sees the crawl this one inserts. (SQLite has one writer.)
            sqlx::query("UPDATE sites SET updated_at = updated_at WHERE id = $1")
                .bind(site_id)
                .execute(&mut *tx)
                .await?;
            let unfinished: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM crawls WHERE site_id = $1 AND status IN ('queued', 'running') \
                 ORDER BY id DESC LIMIT 1",
            )
            .bind(site_id)
            .fetch_optional(&mut *tx)
            .await?;
            match unfinished {
                Some(id) => (id, false),
                None => (insert_crawl!(tx, site_id, &seeds, crawl), true),
            }
        });
        Ok((CrawlId(id), created))
    }

    async fn crawl(&self, id: CrawlId) -> Result<CrawlRecord> {
        let sql = format!("{} WHERE id = $1", select_crawls());
        let row: Option<CrawlRow> = read_pool!(self, |pool| {
            sqlx::query_as(AssertSqlSafe(sql.clone()))
                .bind(id.0)
                .fetch_optional(pool)
                .await?
        });
        crawl_from_row(row.ok_or_else(|| Error::not_found("crawl", id))?)
    }

    #[instrument(skip_all, fields(crawl = %id, status = status.as_str()))]
    async fn set_crawl_status(
        &self,
        id: CrawlId,
        status: CrawlStatus,
        error: Option<&str>,
    ) -> Result<()> {
        let finished = matches!(
            status,
            CrawlStatus::Done | CrawlStatus::Failed | CrawlStatus::Cancelled
        );
        let now = Utc::now();
        let sql = format!(
            "UPDATE crawls SET status = $2, error = $3, \
             started_at = CASE WHEN $4 AND started_at IS NULL THEN $5 ELSE started_at END, \
             finished_at = CASE WHEN $6 THEN $5 ELSE NULL END, pages_fetched = {TOTALS_PAGES}, \
             pages_failed = {TOTALS_FAILED}, bytes = {TOTALS_BYTES}, \
             errors_by_kind = CASE WHEN $6 THEN {} ELSE NULL END WHERE id = $1",
            errors_json(self.kind())
        );
        let n = write_pool!(self, |pool| {
            sqlx::query(AssertSqlSafe(sql.clone()))
                .bind(id.0)
                .bind(status.as_str())
                .bind(error)
                .bind(status == CrawlStatus::Running)
                .bind(now)
                .bind(finished)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Error::found(n, "crawl", id)
    }

    async fn set_crawl_budget(&self, id: CrawlId, max_pages: Option<u64>) -> Result<()> {
        let n = write_pool!(self, |pool| {
            sqlx::query("UPDATE crawls SET max_pages = $2 WHERE id = $1")
                .bind(id.0)
                .bind(budget(max_pages))
                .execute(pool)
                .await?
                .rows_affected()
        });
        Error::found(n, "crawl", id)
    }

    async fn crawls(
        &self,
        filter: &CrawlFilter,
        before: Option<CrawlId>,
        limit: u32,
    ) -> Result<Vec<CrawlRecord>> {
        let (condition, status, site) = match *filter {
            CrawlFilter::All => ("", None, None),
            CrawlFilter::Status(status) => (" AND status = $3", Some(status.as_str()), None),
            CrawlFilter::Site(site) => (" AND site_id = $3", None, Some(site)),
            CrawlFilter::Unfinished(site) => (
                " AND site_id = $3 AND status IN ('queued', 'running')",
                None,
                Some(site),
            ),
        };
        let sql = format!(
            "{} WHERE id < $1{condition} ORDER BY id DESC LIMIT $2",
            select_crawls(),
        );
        let before = before.map_or(i64::MAX, |id| id.0);
        let rows: Vec<CrawlRow> = read_pool!(self, |pool| {
            let mut query = sqlx::query_as(AssertSqlSafe(sql.clone()))
                .bind(before)
                .bind(i64::from(limit));
            if let Some(status) = status {
                query = query.bind(status);
            }
            if let Some(site) = site {
                query = query.bind(site);
            }
            query.fetch_all(pool).await?
        });
        rows.into_iter().map(crawl_from_row).collect()
    }

    #[instrument(skip_all, fields(crawl = %id))]
    async fn crawl_detail(&self, id: CrawlId) -> Result<CrawlDetail> {
        let crawl = self.crawl(id).await?;
        let frontier = self.frontier_counts(id).await?;
        #[allow(clippy::type_complexity)]
        let (runs, (responses, new_bodies), kinds, errors, skipped, (matches, works), cases): (
            Vec<RunHistoryRow>,
            (i64, i64),
            Vec<(String, i64)>,
            Vec<(String, i64)>,
            Vec<(String, i64)>,
            (i64, i64),
            Vec<i64>,
        ) = read_pool!(self, |pool| {
            let runs = sqlx::query_as(
                "SELECT id, started_at, heartbeat_at, dead_after_ms, ended_at FROM crawl_runs \
                 WHERE crawl_id = $1 ORDER BY id",
            )
            .bind(id.0)
            .fetch_all(pool)
            .await?;
            // A body is new when no earlier snapshot has it (the crawler stored it then).
            let bodies = sqlx::query_as(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN NOT EXISTS (SELECT 1 FROM snapshots o \
                 WHERE o.sha256 = s.sha256 AND o.id < s.id) THEN 1 ELSE 0 END), 0) \
                 FROM snapshots s WHERE s.crawl_id = $1",
            )
            .bind(id.0)
            .fetch_one(pool)
            .await?;
            let kinds = sqlx::query_as(
                "SELECT pt.kind, COUNT(DISTINCT pt.url) FROM page_texts pt \
                 JOIN snapshots s ON s.id = pt.snapshot_id WHERE s.crawl_id = $1 \
                 GROUP BY pt.kind",
            )
            .bind(id.0)
            .fetch_all(pool)
            .await?;
            let errors = sqlx::query_as(ERRORS_BY_KIND)
                .bind(id.0)
                .fetch_all(pool)
                .await?;
            let skipped = sqlx::query_as(
                "SELECT COALESCE(last_error, 'unknown'), COUNT(*) FROM frontier \
                 WHERE crawl_id = $1 AND state = 'skipped' GROUP BY 1",
            )
            .bind(id.0)
            .fetch_all(pool)
            .await?;
            let matches = sqlx::query_as(
                "SELECT COUNT(*), COUNT(DISTINCT m.work_id) FROM matches m \
                 JOIN snapshots s ON s.id = m.snapshot_id WHERE s.crawl_id = $1",
            )
            .bind(id.0)
            .fetch_one(pool)
            .await?;
            let cases = sqlx::query_scalar(
                "SELECT DISTINCT m.case_id FROM matches m \
                 JOIN snapshots s ON s.id = m.snapshot_id \
                 WHERE s.crawl_id = $1 AND m.case_id IS NOT NULL ORDER BY m.case_id",
            )
            .bind(id.0)
            .fetch_all(pool)
            .await?;
            (runs, bodies, kinds, errors, skipped, matches, cases)
        });
        let now = millis(Utc::now());
        Ok(CrawlDetail {
            crawl,
            frontier,
            runs: runs
                .into_iter()
                .map(
                    |(id, started, heartbeat, dead_after, ended)| CrawlRunSummary {
                        id: CrawlRunId(id),
                        started_at: from_millis(started),
                        heartbeat_at: from_millis(heartbeat),
                        ended_at: ended.map(from_millis),
                        alive: ended.is_none() && heartbeat.saturating_add(dead_after) > now,
                    },
                )
                .collect(),
            responses: responses.max(0) as u64,
            new_bodies: new_bodies.max(0) as u64,
            pages_by_kind: counts(kinds),
            errors: counts(errors),
            skipped: counts(skipped),
            matches: matches.max(0) as u64,
            matched_works: works.max(0) as u64,
            cases,
        })
    }
}

/// How long a worker that found nothing claimable waits before asking again while others
/// are still working on the crawl (their pages may add entries).
const IDLE_POLL: Duration = Duration::from_millis(50);

/// Claims back to the queue: those whose lease ran out, and those of a run of the crawl that
/// has not ended but whose heartbeat is older than its `dead_after` (`$2` is now).
const RECLAIM_POSTGRES: &str = "UPDATE frontier SET state = 'queued', claimed_until = NULL, \
     run_id = NULL, updated_at = $2 WHERE id IN (SELECT id FROM frontier WHERE crawl_id = $1 \
     AND state = 'claimed' AND (claimed_until <= $2 OR run_id IN (SELECT id FROM crawl_runs \
     WHERE crawl_id = $1 AND ended_at IS NULL AND heartbeat_at + dead_after_ms <= $2)) \
     FOR UPDATE SKIP LOCKED)";
const RECLAIM_SQLITE: &str = "UPDATE frontier SET state = 'queued', claimed_until = NULL, \
     run_id = NULL, updated_at = $2 WHERE crawl_id = $1 AND state = 'claimed' \
     AND (claimed_until <= $2 OR run_id IN (SELECT id FROM crawl_runs WHERE crawl_id = $1 \
     AND ended_at IS NULL AND heartbeat_at + dead_after_ms <= $2))";

const RETRY_CANDIDATE_POSTGRES: &str = "SELECT id FROM frontier WHERE crawl_id = $1 \
     AND state = 'queued' AND claims > 0 AND not_before <= $2 ORDER BY not_before, id LIMIT 1 \
     FOR UPDATE SKIP LOCKED";
const RETRY_CANDIDATE_SQLITE: &str = "SELECT id FROM frontier WHERE crawl_id = $1 \
     AND state = 'queued' AND claims > 0 AND not_before <= $2 ORDER BY not_before, id LIMIT 1";
const FRESH_CANDIDATE_POSTGRES: &str = "SELECT id FROM frontier WHERE crawl_id = $1 \
     AND state = 'queued' AND claims = 0 ORDER BY depth, claim_rank, id LIMIT 1 \
     FOR UPDATE SKIP LOCKED";
const FRESH_CANDIDATE_SQLITE: &str = "SELECT id FROM frontier WHERE crawl_id = $1 \
     AND state = 'queued' AND claims = 0 ORDER BY depth, claim_rank, id LIMIT 1";

/// `id, url, depth, discovery, parent, chain_head, chain_index, attempts, claims`.
type ClaimedRow = (
    i64,
    String,
    i32,
    String,
    Option<String>,
    Option<String>,
    Option<i32>,
    i32,
    i32,
);

fn url_hash(url: &str) -> Vec<u8> {
    sha2::Sha256::digest(url.as_bytes()).to_vec()
}

fn lease_end(now: i64, lease: Duration) -> i64 {
    now.saturating_add(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 4))
}

fn claim_lost(lease: FrontierLease) -> Error {
    Error::Conflict(format!(
        "frontier entry {} claim {} is no longer held: its lease expired and it was claimed again",
        lease.id, lease.claim
    ))
}

impl CrawlFrontier for Store {
    #[instrument(skip_all, fields(crawl = %crawl, entries = entries.len()))]
    async fn push_frontier(&self, crawl: CrawlId, entries: &[NewFrontierEntry]) -> Result<u64> {
        if entries.is_empty() {
            return Ok(0);
        }
        // Inserted in URL order: two runners pushing overlapping links (every page of a site
        // shares its navigation) then take the unique-index locks in the same order, where
        // any other order can deadlock on Postgres.
        let mut sorted: Vec<&NewFrontierEntry> = entries.iter().collect();
        sorted.sort_by(|a, b| a.url.cmp(&b.url));
        sorted.dedup_by(|a, b| a.url == b.url);
        let now = millis(Utc::now());
        let added = write_tx!(self, |tx| {
            let mut added = 0;
            for e in &sorted {
                let (head, index) = match &e.chain {
                    Some((head, index)) => (Some(head.as_str()), Some(*index as i32)),
                    None => (None, None),
                };
                added += sqlx::query(
                    "INSERT INTO frontier (crawl_id, url, url_hash, depth, discovery, claim_rank, \
                     parent, chain_head, chain_index, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) \
                     ON CONFLICT (crawl_id, url_hash) DO NOTHING",
                )
                .bind(crawl.0)
                .bind(&e.url)
                .bind(url_hash(&e.url))
                .bind(i32::try_from(e.depth).unwrap_or(i32::MAX))
                .bind(&e.discovery)
                .bind(e.rank)
                .bind(&e.parent)
                .bind(head)
                .bind(index)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            }
            added
        });
        Ok(added)
    }

    async fn claim_frontier(
        &self,
        crawl: CrawlId,
        run: Option<CrawlRunId>,
        lease: Duration,
    ) -> Result<FrontierClaim> {
        let postgres = matches!(self.backend, Backend::Postgres(_));
        let (reclaim_sql, retry_sql, fresh_sql) = if postgres {
            (
                RECLAIM_POSTGRES,
                RETRY_CANDIDATE_POSTGRES,
                FRESH_CANDIDATE_POSTGRES,
            )
        } else {
            (
                RECLAIM_SQLITE,
                RETRY_CANDIDATE_SQLITE,
                FRESH_CANDIDATE_SQLITE,
            )
        };
        let now = millis(Utc::now());
        let reclaim_due = self.reclaim_due(crawl);
        let claimed: Option<ClaimedRow> = write_tx!(self, |tx| {
            // Lost claims are put back every RECLAIM_EVERY while there is work to claim, and
            // always before a claim comes back empty-handed.
            let mut reclaim = reclaim_due;
            let id = loop {
                if reclaim {
                    sqlx::query(reclaim_sql)
                        .bind(crawl.0)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                }
                let mut id: Option<i64> = sqlx::query_scalar(retry_sql)
                    .bind(crawl.0)
                    .bind(now)
                    .fetch_optional(&mut *tx)
                    .await?;
                if id.is_none() {
                    let fresh: Option<i64> = sqlx::query_scalar(fresh_sql)
                        .bind(crawl.0)
                        .fetch_optional(&mut *tx)
                        .await?;
                    if fresh.is_some() {
                        // The budget row serialises first claims of one crawl; the lock is
                        // held only to the end of this short transaction.
                        let within_budget = sqlx::query(
                            "UPDATE crawls SET pages_claimed = pages_claimed + 1 WHERE id = $1 \
                             AND (max_pages IS NULL OR pages_claimed < max_pages)",
                        )
                        .bind(crawl.0)
                        .execute(&mut *tx)
                        .await?
                        .rows_affected()
                            > 0;
                        id = fresh.filter(|_| within_budget);
                    }
                }
                if id.is_some() || reclaim {
                    break id;
                }
                reclaim = true;
            };
            match id {
                Some(id) => Some(
                    sqlx::query_as(
                        "UPDATE frontier SET state = 'claimed', claims = claims + 1, \
                         claimed_until = $2, updated_at = $3, run_id = $4 WHERE id = $1 \
                         RETURNING id, url, depth, discovery, parent, chain_head, chain_index, \
                         attempts, claims",
                    )
                    .bind(id)
                    .bind(lease_end(now, lease))
                    .bind(now)
                    .bind(run)
                    .fetch_one(&mut *tx)
                    .await?,
                ),
                None => None,
            }
        });
        if let Some((id, url, depth, discovery, parent, head, index, attempts, claims)) = claimed {
            return Ok(FrontierClaim::Entry(FrontierRecord {
                lease: FrontierLease {
                    id: FrontierId(id),
                    claim: claims.max(0) as u32,
                },
                url,
                depth: depth.max(0) as u32,
                discovery,
                parent,
                chain: head.zip(index.map(|i| i.max(0) as u32)),
                attempts: attempts.max(0) as u32,
            }));
        }
        // Nothing claimable: tell waiting from finished.
        let (in_flight, next_retry, fresh, budget_left): (i64, Option<i64>, i64, bool) =
            read_pool!(self, |pool| {
                let (in_flight, next_retry, fresh): (i64, Option<i64>, i64) = sqlx::query_as(
                    "SELECT \
                     COALESCE(SUM(CASE WHEN state = 'claimed' THEN 1 ELSE 0 END), 0), \
                     MIN(CASE WHEN claims > 0 AND state = 'queued' THEN not_before END), \
                     COALESCE(SUM(CASE WHEN claims = 0 AND state = 'queued' THEN 1 ELSE 0 END), 0) \
                     FROM frontier WHERE crawl_id = $1 AND state IN ('queued', 'claimed')",
                )
                .bind(crawl.0)
                .fetch_one(pool)
                .await?;
                let budget_left: Option<bool> = sqlx::query_scalar(
                    "SELECT max_pages IS NULL OR pages_claimed < max_pages FROM crawls \
                     WHERE id = $1",
                )
                .bind(crawl.0)
                .fetch_optional(pool)
                .await?;
                (in_flight, next_retry, fresh, budget_left.unwrap_or(false))
            });
        if in_flight > 0 || (fresh > 0 && budget_left) {
            return Ok(FrontierClaim::Wait(IDLE_POLL));
        }
        if let Some(at) = next_retry {
            let wait = u64::try_from(at - millis(Utc::now())).unwrap_or(0);
            return Ok(FrontierClaim::Wait(
                Duration::from_millis(wait).max(Duration::from_millis(1)),
            ));
        }
        Ok(FrontierClaim::Done)
    }

    async fn complete_frontier(
        &self,
        lease: FrontierLease,
        outcome: &FrontierOutcome,
    ) -> Result<()> {
        let (state, status, error) = match outcome {
            FrontierOutcome::Done { status } => ("done", Some(i32::from(*status)), None),
            FrontierOutcome::Skipped(why) => ("skipped", None, Some(why.as_str())),
            FrontierOutcome::Failed(why) => ("failed", None, Some(why.as_str())),
        };
        let n = write_pool!(self, |pool| {
            sqlx::query(
                "UPDATE frontier SET state = $3, status = $4, \
                 last_error = COALESCE($5, last_error), claimed_until = NULL, run_id = NULL, \
                 updated_at = $6 \
                 WHERE id = $1 AND claims = $2 AND state = 'claimed'",
            )
            .bind(lease.id.0)
            .bind(lease.claim as i32)
            .bind(state)
            .bind(status)
            .bind(error)
            .bind(millis(Utc::now()))
            .execute(pool)
            .await?
            .rows_affected()
        });
        if n == 0 {
            return Err(claim_lost(lease));
        }
        Ok(())
    }

    async fn retry_frontier(
        &self,
        lease: FrontierLease,
        not_before: DateTime<Utc>,
        counts: bool,
    ) -> Result<()> {
        let n = write_pool!(self, |pool| {
            sqlx::query(
                "UPDATE frontier SET state = 'queued', not_before = $3, attempts = attempts + $4, \
                 claimed_until = NULL, run_id = NULL, updated_at = $5 \
                 WHERE id = $1 AND claims = $2 AND state = 'claimed'",
            )
            .bind(lease.id.0)
            .bind(lease.claim as i32)
            .bind(millis(not_before))
            .bind(i32::from(counts))
            .bind(millis(Utc::now()))
            .execute(pool)
            .await?
            .rows_affected()
        });
        if n == 0 {
            return Err(claim_lost(lease));
        }
        Ok(())
    }

    async fn reclaim_expired_frontier(&self, crawl: CrawlId) -> Result<u64> {
        let sql = match self.backend {
            Backend::Postgres(_) => RECLAIM_POSTGRES,
            Backend::Sqlite { .. } => RECLAIM_SQLITE,
        };
        let n = write_pool!(self, |pool| {
            sqlx::query(sql)
                .bind(crawl.0)
                .bind(millis(Utc::now()))
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(n)
    }

    async fn frontier_counts(&self, crawl: CrawlId) -> Result<FrontierCounts> {
        let (rows, claimed): (Vec<(String, i64)>, Option<i64>) = read_pool!(self, |pool| {
            let rows = sqlx::query_as(
                "SELECT state, COUNT(*) FROM frontier WHERE crawl_id = $1 GROUP BY state",
            )
            .bind(crawl.0)
            .fetch_all(pool)
            .await?;
            let claimed = sqlx::query_scalar("SELECT pages_claimed FROM crawls WHERE id = $1")
                .bind(crawl.0)
                .fetch_optional(pool)
                .await?;
            (rows, claimed)
        });
        let mut counts = FrontierCounts {
            pages_claimed: claimed.unwrap_or(0).max(0) as u64,
            ..FrontierCounts::default()
        };
        for (state, n) in rows {
            let n = n.max(0) as u64;
            match state.as_str() {
                "queued" => counts.queued = n,
                "claimed" => counts.claimed = n,
                "done" => counts.done = n,
                "failed" => counts.failed = n,
                "skipped" => counts.skipped = n,
                _ => {}
            }
        }
        Ok(counts)
    }
}

/// `id, crawl_id, started_at, heartbeat_at, dead_after_ms, claims` of a `crawl_runs` row.
type RunRow = (i64, i64, i64, i64, i64, i64);

impl CrawlRuns for Store {
    #[instrument(skip_all, fields(crawl = %crawl))]
    async fn start_crawl_run(&self, crawl: CrawlId, dead_after: Duration) -> Result<CrawlRunId> {
        let dead_after_ms = i64::try_from(dead_after.as_millis()).unwrap_or(i64::MAX / 4);
        if dead_after_ms == 0 {
            return Err(Error::InvalidInput(format!(
                "a run of crawl {crawl} needs a dead_after above 0 ms (crawler.run_dead_after)"
            )));
        }
        let now = millis(Utc::now());
        let id: Option<i64> = write_pool!(self, |pool| {
            sqlx::query_scalar(
                "INSERT INTO crawl_runs (crawl_id, started_at, heartbeat_at, dead_after_ms) \
                 SELECT id, $2, $2, $3 FROM crawls WHERE id = $1 RETURNING id",
            )
            .bind(crawl.0)
            .bind(now)
            .bind(dead_after_ms)
            .fetch_optional(pool)
            .await?
        });
        id.map(CrawlRunId)
            .ok_or_else(|| Error::not_found("crawl", crawl))
    }

    async fn heartbeat_crawl_run(&self, run: CrawlRunId) -> Result<()> {
        let n = write_pool!(self, |pool| {
            sqlx::query(
                "UPDATE crawl_runs SET heartbeat_at = $2 WHERE id = $1 AND ended_at IS NULL",
            )
            .bind(run.0)
            .bind(millis(Utc::now()))
            .execute(pool)
            .await?
            .rows_affected()
        });
        Error::found(n, "running crawl run", run)
    }

    #[instrument(skip_all, fields(run = %run))]
    async fn end_crawl_run(&self, run: CrawlRunId) -> Result<u64> {
        let now = millis(Utc::now());
        let requeued = write_tx!(self, |tx| {
            let crawl: Option<(i64, Option<i64>)> =
                sqlx::query_as("SELECT crawl_id, ended_at FROM crawl_runs WHERE id = $1")
                    .bind(run.0)
                    .fetch_optional(&mut *tx)
                    .await?;
            let Some((crawl, None)) = crawl else {
                return match crawl {
                    Some(_) => Ok(0),
                    None => Err(Error::not_found("crawl run", run)),
                };
            };
            sqlx::query("UPDATE crawl_runs SET ended_at = $2 WHERE id = $1")
                .bind(run.0)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            self.remember_live_until(run.0, 0);
            sqlx::query(
                "UPDATE frontier SET state = 'queued', claimed_until = NULL, run_id = NULL, \
                 updated_at = $3 WHERE crawl_id = $1 AND state = 'claimed' AND run_id = $2",
            )
            .bind(crawl)
            .bind(run.0)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected()
        });
        Ok(requeued)
    }

    async fn crawl_runs(&self, crawl: CrawlId) -> Result<Vec<CrawlRunRecord>> {
        let rows: Vec<RunRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT r.id, r.crawl_id, r.started_at, r.heartbeat_at, r.dead_after_ms, \
                 (SELECT COUNT(*) FROM frontier f WHERE f.crawl_id = r.crawl_id \
                 AND f.state = 'claimed' AND f.run_id = r.id) \
                 FROM crawl_runs r WHERE r.crawl_id = $1 AND r.ended_at IS NULL ORDER BY r.id",
            )
            .bind(crawl.0)
            .fetch_all(pool)
            .await?
        });
        let now = millis(Utc::now());
        Ok(rows
            .into_iter()
            .map(
                |(id, crawl, started, heartbeat, dead_after, claims)| CrawlRunRecord {
                    id: CrawlRunId(id),
                    crawl: CrawlId(crawl),
                    started_at: from_millis(started),
                    heartbeat_at: from_millis(heartbeat),
                    dead_after: Duration::from_millis(dead_after.max(0) as u64),
                    alive: heartbeat.saturating_add(dead_after) > now,
                    claims: claims.max(0) as u64,
                },
            )
            .collect())
    }
}

impl Store {
    /// Whether run `run` is live at `now` (ms) by what this process last read of it: a run
    /// read live stays live until its heartbeat deadline of then, so that a host's slots are
    /// checked against the runs holding them with a statement only once per deadline, not on
    /// every fetch. A run that ended may be taken for live until that deadline; it gave its
    /// host slots back when it ended.
    fn live_at(&self, run: i64, now: i64) -> bool {
        let memo = self
            .memo
            .live_until
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        memo.get(&run).is_some_and(|&until| until > now)
    }

    fn remember_live_until(&self, run: i64, until: i64) {
        let mut memo = self
            .memo
            .live_until
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if until > 0 {
            memo.insert(run, until);
        } else {
            memo.remove(&run);
        }
    }

    /// Whether this process should put a crawl's expired and dead runs' claims back before
    /// claiming: at most every [`RECLAIM_EVERY`], as a dead run's claims wait for seconds
    /// (its `dead_after`) anyway.
    fn reclaim_due(&self, crawl: CrawlId) -> bool {
        let mut memo = self
            .memo
            .reclaimed_at
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        match memo.get(&crawl.0) {
            Some(at) if now.duration_since(*at) < RECLAIM_EVERY => false,
            _ => {
                memo.insert(crawl.0, now);
                true
            }
        }
    }
}

/// How often one process puts a crawl's lost claims back while claiming.
const RECLAIM_EVERY: Duration = Duration::from_millis(500);

/// `next_allowed_at, backoff_until, consecutive_failures, leases` of a `host_states` row.
type HostRow = (Option<i64>, Option<i64>, i32, String);

fn host_from_row(
    host: &str,
    (next, backoff, failures, leases): HostRow,
) -> Result<HostStateRecord> {
    Ok(HostStateRecord {
        next_allowed_at: next.map(from_millis),
        backoff_until: backoff.map(from_millis),
        consecutive_failures: failures.max(0) as u32,
        leases: serde_json::from_str(&leases)
            .map_err(|e| Error::InvalidInput(format!("leases of host {host:?}: {e}")))?,
    })
}

impl HostStates for Store {
    async fn update_host_state<R, F>(&self, host: &str, f: F) -> Result<R>
    where
        R: Send,
        F: FnOnce(&mut HostStateRecord) -> R + Send,
    {
        let now = millis(Utc::now());
        let out = write_tx!(self, |tx| {
            // One statement inserts the row if missing and reads it; on Postgres the
            // (no-op) update also locks it to the end of the transaction, as FOR UPDATE
            // would, so that two processes' changes to one host follow each other.
            let row: HostRow = sqlx::query_as(
                "INSERT INTO host_states (host, updated_at) VALUES ($1, $2) \
                 ON CONFLICT (host) DO UPDATE SET host = excluded.host \
                 RETURNING next_allowed_at, backoff_until, consecutive_failures, leases",
            )
            .bind(host)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            let mut state = host_from_row(host, row)?;
            let mut runs: Vec<i64> = state
                .leases
                .iter()
                .filter_map(|l| l.run)
                .map(|r| r.0)
                .collect();
            runs.sort_unstable();
            runs.dedup();
            for run in runs {
                if self.live_at(run, now) {
                    continue;
                }
                let live_until: Option<i64> = sqlx::query_scalar(
                    "SELECT CASE WHEN ended_at IS NULL THEN heartbeat_at + dead_after_ms \
                     ELSE 0 END FROM crawl_runs WHERE id = $1",
                )
                .bind(run)
                .fetch_optional(&mut *tx)
                .await?;
                let live_until = live_until.unwrap_or(0);
                self.remember_live_until(run, live_until);
                if live_until <= now {
                    state.leases.retain(|l| l.run != Some(CrawlRunId(run)));
                }
            }
            let out = f(&mut state);
            let leases = serde_json::to_string(&state.leases)
                .map_err(|e| Error::InvalidInput(format!("leases of host {host:?}: {e}")))?;
            sqlx::query(
                "UPDATE host_states SET next_allowed_at = $2, backoff_until = $3, \
                 consecutive_failures = $4, leases = $5, in_flight = $6, updated_at = $7 \
                 WHERE host = $1",
            )
            .bind(host)
            .bind(state.next_allowed_at.map(millis))
            .bind(state.backoff_until.map(millis))
            .bind(i32::try_from(state.consecutive_failures).unwrap_or(i32::MAX))
            .bind(&leases)
            .bind(i32::try_from(state.leases.len()).unwrap_or(i32::MAX))
            .bind(now)
            .execute(&mut *tx)
            .await?;
            out
        });
        Ok(out)
    }

    async fn host_state(&self, host: &str) -> Result<Option<HostStateRecord>> {
        let row: Option<HostRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT next_allowed_at, backoff_until, consecutive_failures, leases \
                 FROM host_states WHERE host = $1",
            )
            .bind(host)
            .fetch_optional(pool)
            .await?
        });
        row.map(|r| host_from_row(host, r)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_as_typed_and_bad_ones_are_named() {
        assert_eq!(" Done ".parse::<CrawlStatus>().unwrap(), CrawlStatus::Done);
        let err = "finished".parse::<CrawlStatus>().unwrap_err().to_string();
        assert!(
            err.contains("\"finished\"") && err.contains("cancelled"),
            "{err}"
        );
    }
}
