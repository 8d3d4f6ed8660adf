//! Infringement cases: one per site copying one work. The match stage opens and widens them
//! ([`crate::MatchWrites::record_matches`], in the transaction that stores the matches); a
//! reviewer moves them through [`CaseStatus`] ([`CaseWrites::set_case_status`]); every
//! change leaves an `audit_log` row, read back by [`CaseReads::case_history`].
//!
//! Counters (`pages`, `chapters_matched`) live on the case row and are recomputed by every
//! write that touches the case, so listing 10^5 cases reads one index range and no matches.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::future::Future;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use tracing::instrument;

use crate::audit::{AuditRecord, insert_audit};
use crate::db::{durable_tx, read_pool};
use crate::ids::{CaseId, ChapterId, PageId, SiteId, SnapshotId, WorkId};
use crate::licensed::host_suffixes;
use crate::matches::NewMatch;
use crate::stats::{CopyDeltas, FirstMatch, apply_copy_deltas, apply_detection_deltas};
use crate::{AuditLog, Error, Result, Store};

/// Where a case stands. Stored by [`CaseStatus::as_str`] in `cases.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    /// Opened by the match stage (or reopened), not reviewed yet.
    New,
    /// A reviewer confirmed the copy.
    Confirmed,
    /// A takedown notice went out.
    NoticeSent,
    /// The copy is gone. A copy fetched after this reopens the case.
    Removed,
    /// Not infringing (a quote, a false match). Reopens only when another chapter is copied.
    Dismissed,
}

impl CaseStatus {
    /// Every status, in review order.
    pub const ALL: [CaseStatus; 5] = [
        CaseStatus::New,
        CaseStatus::Confirmed,
        CaseStatus::NoticeSent,
        CaseStatus::Removed,
        CaseStatus::Dismissed,
    ];

    /// The name kept in `cases.status` and used by the CLI and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::New => "new",
            CaseStatus::Confirmed => "confirmed",
            CaseStatus::NoticeSent => "notice_sent",
            CaseStatus::Removed => "removed",
            CaseStatus::Dismissed => "dismissed",
        }
    }

    /// The status named `s` (exactly as [`CaseStatus::as_str`] writes it, ignoring case and
    /// surrounding spaces).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the valid values.
    pub fn parse(s: &str) -> Result<Self> {
        let wanted = s.trim();
        CaseStatus::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unknown case status {s:?}: use one of {}",
                    list(&CaseStatus::ALL)
                ))
            })
    }

    /// The statuses a reviewer may move a case to from this one.
    pub fn next(self) -> &'static [CaseStatus] {
        use CaseStatus::*;
        match self {
            New => &[Confirmed, Dismissed],
            Confirmed => &[NoticeSent, Dismissed, New],
            NoticeSent => &[Removed, Confirmed],
            Removed => &[New],
            Dismissed => &[New],
        }
    }

    /// Whether a reviewer may move a case from this status to `to`.
    pub fn can_become(self, to: CaseStatus) -> bool {
        self.next().contains(&to)
    }
}

fn list(statuses: &[CaseStatus]) -> String {
    statuses
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for CaseStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CaseStatus {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        CaseStatus::parse(s)
    }
}

/// Which cases [`CaseReads::cases`] lists; the conditions that are set all apply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaseFilter {
    /// Only cases in this status.
    pub status: Option<CaseStatus>,
    /// Only cases of this work.
    pub work: Option<WorkId>,
    /// Only cases on sites with this host (`sites.host`: the URL's host, with a port when the
    /// URL had one). Compared lower-cased.
    pub site: Option<String>,
    /// Only cases with at least this share of the work's chapters copied (0..1).
    pub min_exposure: Option<f64>,
}

/// Where a page of [`CaseReads::cases`] starts: after this case in the listing's order
/// (newest `last_seen_at` first, then highest id). Take it from the last row of the previous
/// page with [`CaseRecord::cursor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaseCursor {
    /// The case's `last_seen_at`.
    pub last_seen_at: DateTime<Utc>,
    /// The case.
    pub id: CaseId,
}

/// A case as listed and shown.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CaseRecord {
    /// Its id.
    pub id: CaseId,
    /// The site copying.
    pub site_id: SiteId,
    /// The site's host (with a port when its URLs have one).
    pub site: String,
    /// The work copied.
    pub work_id: WorkId,
    /// Its title.
    pub work_title: String,
    /// Where review stands.
    pub status: CaseStatus,
    /// Fetch time of the earliest snapshot that matched.
    pub first_seen_at: DateTime<Utc>,
    /// Fetch time of the latest snapshot that matched.
    pub last_seen_at: DateTime<Utc>,
    /// When `status` last changed (opened, reviewed, reopened).
    pub status_changed_at: DateTime<Utc>,
    /// The note of the last review, if any.
    pub review_note: Option<String>,
    /// Distinct pages of the site with a match of the work.
    pub pages: u32,
    /// Distinct chapters of the work matched on the site.
    pub chapters_matched: u32,
    /// Chapters the work has.
    pub work_chapters: u32,
    /// `chapters_matched / work_chapters`, 0..1 (0 for a work without chapters).
    pub exposure: f64,
    /// Chapters matched when the case was last dismissed (empty if it never was).
    pub dismissed_chapters: Vec<ChapterId>,
}

impl CaseRecord {
    /// The cursor that continues a listing after this case.
    pub fn cursor(&self) -> CaseCursor {
        CaseCursor {
            last_seen_at: self.last_seen_at,
            id: self.id,
        }
    }
}

/// One match of a case, with the evidence a reviewer looks at.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CaseMatch {
    /// The match row (`matches.id`).
    pub match_id: i64,
    /// The snapshot that matched.
    pub snapshot_id: SnapshotId,
    /// Its page.
    pub page_id: PageId,
    /// The URL fetched.
    pub url: String,
    /// The URL after redirects.
    pub final_url: String,
    /// When it was fetched.
    pub fetched_at: DateTime<Utc>,
    /// SHA-256 of the evidence, lower-case hex: the response body's, or for a revisit (the
    /// server said `304 Not Modified`) the body's of the capture it confirms.
    pub snapshot_sha256: String,
    /// For a revisit: the capture it confirms unchanged, and when that was fetched.
    pub revisit_of: Option<(SnapshotId, DateTime<Utc>)>,
    /// The chapter copied.
    pub chapter_id: ChapterId,
    /// Its 1-based position in the work (import order).
    pub chapter_index: u32,
    /// Its title.
    pub chapter_title: String,
    /// The matcher's score, 0..1.
    pub score: f64,
    /// Share of the chapter found in the page, 0..1.
    pub coverage: f64,
    /// Share of the page's main text that is the chapter, 0..1.
    pub page_share: f64,
    /// Characters matched.
    pub matched_chars: u32,
    /// Characters of the chapter.
    pub chapter_chars: u32,
    /// Characters of the page's main text.
    pub page_chars: u32,
    /// The aligned passages as JSON (the matcher's format).
    pub passages: String,
}

/// What [`crate::MatchWrites::record_matches`] did to cases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Cases opened by this snapshot.
    pub opened: Vec<CaseId>,
    /// Removed or dismissed cases this snapshot put back to `new`.
    pub reopened: Vec<CaseId>,
    /// Every case the snapshot's matches belong to now, ascending.
    pub cases: Vec<CaseId>,
    /// Matches stored as licensed (on a licensed domain): in no case.
    pub licensed: usize,
}

/// Reads of cases, for the CLI, the admin UI and reports.
pub trait CaseReads {
    /// At most `limit` cases passing `filter`, newest `last_seen_at` first (then highest id),
    /// after `after` (`None`: from the start).
    fn cases(
        &self,
        filter: &CaseFilter,
        after: Option<CaseCursor>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<CaseRecord>>> + Send;

    /// One case.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is none with that id.
    fn case(&self, id: CaseId) -> impl Future<Output = Result<CaseRecord>> + Send;

    /// Every match of the case, oldest fetch first (then page, chapter order).
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such case.
    fn case_matches(&self, id: CaseId) -> impl Future<Output = Result<Vec<CaseMatch>>> + Send;

    /// The case's audit rows (opened, reviewed, reopened), oldest first.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such case.
    fn case_history(&self, id: CaseId) -> impl Future<Output = Result<Vec<AuditRecord>>> + Send;
}

/// Review of cases.
pub trait CaseWrites {
    /// Moves the case to `status` (one of [`CaseStatus::next`] of its current status), in
    /// one transaction: sets `status_changed_at` and the review note, records the chapters
    /// matched when dismissing, the first time the case reached a review status (what
    /// [`crate::StatsReads::case_funnel`] counts), and writes an `audit_log` row `case.<status>` by `actor`
    /// with the note. Returns the case as it is now.
    ///
    /// # Errors
    /// [`Error::NotFound`] for a missing case; [`Error::Conflict`] for a move the current
    /// status does not allow (the message names the allowed ones), nothing written then.
    fn set_case_status(
        &self,
        id: CaseId,
        status: CaseStatus,
        actor: &str,
        note: Option<&str>,
    ) -> impl Future<Output = Result<CaseRecord>> + Send;
}

/// The columns [`CaseRow`] reads; conditions follow (`AND ...`).
///
/// `CROSS JOIN` keeps `cases` the outer loop on SQLite, whose planner takes that order as
/// written (Postgres reorders it freely, so it changes nothing there). Without it SQLite
/// 3.51 (the one sqlx bundles), with `ANALYZE`d statistics of 10^5 cases on 100 sites,
/// started from `sites` and read every case of the status through `cases_site_counts`, then
/// sorted them: the next case of the review queue took 15 ms instead of 0.5, and the case
/// page, which asks for it, 200 ms p50 under 20 clients.
const CASE_SELECT: &str = "SELECT c.id, c.site_id, s.host, c.work_id, w.title, c.status, \
     c.first_seen_at, c.last_seen_at, c.status_changed_at, c.review_note, c.pages, \
     c.chapters_matched, w.chapter_count, c.dismissed_chapters \
     FROM cases c CROSS JOIN sites s CROSS JOIN works w \
     WHERE s.id = c.site_id AND w.id = c.work_id";

#[derive(sqlx::FromRow)]
struct CaseRow {
    id: CaseId,
    site_id: SiteId,
    host: String,
    work_id: WorkId,
    title: String,
    status: String,
    first_seen_at: DateTime<Utc>,
    last_seen_at: DateTime<Utc>,
    status_changed_at: DateTime<Utc>,
    review_note: Option<String>,
    pages: i32,
    chapters_matched: i32,
    chapter_count: i32,
    dismissed_chapters: String,
}

impl TryFrom<CaseRow> for CaseRecord {
    type Error = Error;
    fn try_from(r: CaseRow) -> Result<Self> {
        let chapters_matched = u32::try_from(r.chapters_matched).unwrap_or(0);
        let work_chapters = u32::try_from(r.chapter_count).unwrap_or(0);
        Ok(CaseRecord {
            id: r.id,
            site_id: r.site_id,
            site: r.host,
            work_id: r.work_id,
            work_title: r.title,
            status: CaseStatus::parse(&r.status)?,
            first_seen_at: r.first_seen_at,
            last_seen_at: r.last_seen_at,
            status_changed_at: r.status_changed_at,
            review_note: r.review_note,
            pages: u32::try_from(r.pages).unwrap_or(0),
            chapters_matched,
            work_chapters,
            exposure: if work_chapters == 0 {
                0.0
            } else {
                f64::from(chapters_matched) / f64::from(work_chapters)
            },
            dismissed_chapters: chapter_list(&r.dismissed_chapters)
                .into_iter()
                .map(ChapterId)
                .collect(),
        })
    }
}

/// A `dismissed_chapters` value; unreadable JSON counts as none dismissed, so such a case
/// reopens on its next match rather than never.
fn chapter_list(json: &str) -> Vec<i64> {
    serde_json::from_str(json).unwrap_or_default()
}

#[derive(sqlx::FromRow)]
struct CaseMatchRow {
    id: i64,
    snapshot_id: SnapshotId,
    page_id: PageId,
    url: String,
    final_url: String,
    fetched_at: DateTime<Utc>,
    sha256: Vec<u8>,
    revisit_of: Option<SnapshotId>,
    revisit_fetched_at: Option<DateTime<Utc>>,
    chapter_id: ChapterId,
    ordinal: i32,
    title: String,
    score: f64,
    coverage: f64,
    page_share: f64,
    matched_chars: i32,
    chapter_chars: i32,
    page_chars: i32,
    passages: String,
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

impl CaseReads for Store {
    #[instrument(skip(self))]
    async fn cases(
        &self,
        filter: &CaseFilter,
        after: Option<CaseCursor>,
        limit: u32,
    ) -> Result<Vec<CaseRecord>> {
        let sql = list_sql(filter, after.is_some(), limit);
        let site = filter.site.as_ref().map(|s| s.trim().to_lowercase());
        let rows: Vec<CaseRow> = read_pool!(self, |pool| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql));
            if let Some(status) = filter.status {
                q = q.bind(status.as_str());
            }
            if let Some(work) = filter.work {
                q = q.bind(work);
            }
            if let Some(site) = &site {
                q = q.bind(site.clone());
            }
            if let Some(min) = filter.min_exposure {
                q = q.bind(min);
            }
            if let Some(after) = after {
                q = q.bind(after.last_seen_at).bind(after.id);
            }
            q.fetch_all(pool).await?
        });
        rows.into_iter().map(CaseRecord::try_from).collect()
    }

    #[instrument(skip(self))]
    async fn case(&self, id: CaseId) -> Result<CaseRecord> {
        let sql = format!("{CASE_SELECT} AND c.id = $1");
        let row: Option<CaseRow> = read_pool!(self, |pool| {
            sqlx::query_as(AssertSqlSafe(sql))
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        row.ok_or_else(|| Error::not_found("case", id))?.try_into()
    }

    #[instrument(skip(self))]
    async fn case_matches(&self, id: CaseId) -> Result<Vec<CaseMatch>> {
        self.case_exists(id).await?;
        let rows: Vec<CaseMatchRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT m.id, m.snapshot_id, m.page_id, sn.url, sn.final_url, m.fetched_at, \
                 COALESCE(rv.sha256, sn.sha256) AS sha256, rv.id AS revisit_of, \
                 rv.fetched_at AS revisit_fetched_at, m.chapter_id, ch.ordinal, ch.title, \
                 m.score, m.coverage, m.page_share, m.matched_chars, m.chapter_chars, \
                 m.page_chars, m.passages \
                 FROM matches m JOIN snapshots sn ON sn.id = m.snapshot_id \
                 LEFT JOIN snapshots rv ON rv.id = sn.revisit_of \
                 JOIN chapters ch ON ch.id = m.chapter_id \
                 WHERE m.case_id = $1 ORDER BY m.fetched_at, m.page_id, ch.ordinal, m.id",
            )
            .bind(id)
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|r| CaseMatch {
                match_id: r.id,
                snapshot_id: r.snapshot_id,
                page_id: r.page_id,
                url: r.url,
                final_url: r.final_url,
                fetched_at: r.fetched_at,
                snapshot_sha256: hex(&r.sha256),
                revisit_of: r.revisit_of.zip(r.revisit_fetched_at),
                chapter_id: r.chapter_id,
                chapter_index: count(r.ordinal),
                chapter_title: r.title,
                score: r.score,
                coverage: r.coverage,
                page_share: r.page_share,
                matched_chars: count(r.matched_chars),
                chapter_chars: count(r.chapter_chars),
                page_chars: count(r.page_chars),
                passages: r.passages,
            })
            .collect())
    }

    #[instrument(skip(self))]
    async fn case_history(&self, id: CaseId) -> Result<Vec<AuditRecord>> {
        self.case_exists(id).await?;
        self.audit_of("case", id.0).await
    }
}

impl Store {
    pub(crate) async fn case_exists(&self, id: CaseId) -> Result<()> {
        let found: Option<i64> = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT id FROM cases WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        found.map(drop).ok_or_else(|| Error::not_found("case", id))
    }
}

impl CaseWrites for Store {
    #[instrument(skip(self, note), fields(status = %status))]
    async fn set_case_status(
        &self,
        id: CaseId,
        status: CaseStatus,
        actor: &str,
        note: Option<&str>,
    ) -> Result<CaseRecord> {
        durable_tx!(self, |tx| tx.set_status(id, status, actor, note).await?);
        self.case(id).await
    }
}

/// The case writes that run inside a caller's transaction, on either backend's connection.
pub(crate) trait CaseTx {
    /// Stores a snapshot's matches and opens, widens, reopens and counts their cases; see
    /// [`crate::MatchWrites::record_matches`]; only the existing matches of works in
    /// `scope` are replaced ([`crate::MatchWrites::record_matches_scoped`]).
    fn record(
        &mut self,
        snapshot: SnapshotId,
        matches: &[NewMatch],
        scope: bounds::Shard,
        actor: &str,
    ) -> impl Future<Output = Result<Recorded>> + Send;

    /// See [`CaseWrites::set_case_status`].
    fn set_status(
        &mut self,
        id: CaseId,
        to: CaseStatus,
        actor: &str,
        note: Option<&str>,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// `(page_id, site_id, host, fetched_at, url)` of a snapshot.
type SnapshotPlace = (i64, i64, String, DateTime<Utc>, String);
/// `(id, status, status_changed_at, dismissed_chapters, first_seen_at, last_seen_at)`.
type CaseState = (
    i64,
    String,
    DateTime<Utc>,
    String,
    DateTime<Utc>,
    DateTime<Utc>,
);

/// The [`CaseState`] of a (site, work)'s case, with a backend's row-lock clause.
macro_rules! case_state_sql {
    ($lock:literal) => {
        concat!(
            "SELECT id, status, status_changed_at, dismissed_chapters, first_seen_at, \
             last_seen_at FROM cases WHERE site_id = $1 AND work_id = $2",
            $lock
        )
    };
}

/// The reason a copy's re-check row gives when a crawl, not a re-check, last saw it up.
pub const FOUND_BY_A_CRAWL: &str = "found by a crawl";

/// Implements [`CaseTx`] for one backend's connection; `$lock` is the row-lock clause
/// (` FOR UPDATE` on Postgres; SQLite has one writer and no such clause).
macro_rules! case_tx {
    ($conn:ty, $lock:literal) => {
        impl CaseTx for $conn {
            async fn record(
                &mut self,
                snapshot: SnapshotId,
                matches: &[NewMatch],
                scope: bounds::Shard,
                actor: &str,
            ) -> Result<Recorded> {
                let place: Option<SnapshotPlace> = sqlx::query_as(
                    "SELECT s.page_id, p.site_id, si.host, s.fetched_at, s.url \
                     FROM snapshots s JOIN pages p ON p.id = s.page_id \
                     JOIN sites si ON si.id = p.site_id WHERE s.id = $1",
                )
                .bind(snapshot)
                .fetch_optional(&mut *self)
                .await?;
                let (page_id, site_id, host, fetched_at, url) =
                    place.ok_or_else(|| Error::not_found("snapshot", snapshot))?;
                // Recordings of one page follow one another: each recomputes the page's
                // latest rows from what the one before committed. Cases are locked in work
                // order below (all of a page's cases are its site's), so two pages of a
                // site never wait on each other in a cycle.
                // (SQLite has one writer: there is nothing to wait for.)
                if !$lock.is_empty() {
                    sqlx::query(concat!("SELECT id FROM pages WHERE id = $1", $lock))
                        .bind(page_id)
                        .fetch_optional(&mut *self)
                        .await?;
                }

                let mut licensed_all = false;
                let mut licensed_works = HashSet::new();
                for domain in host_suffixes(&host) {
                    let rows: Vec<Option<i64>> = sqlx::query_scalar(
                        "SELECT work_id FROM licensed_domains WHERE domain = $1",
                    )
                    .bind(domain)
                    .fetch_all(&mut *self)
                    .await?;
                    for work in rows {
                        match work {
                            None => licensed_all = true,
                            Some(w) => {
                                licensed_works.insert(w);
                            }
                        }
                    }
                }
                let is_licensed = |w: WorkId| licensed_all || licensed_works.contains(&w.0);

                // (chapter, work, case, licensed) of what the snapshot has now.
                let existing: Vec<(i64, i64, Option<i64>, bool)> = sqlx::query_as(
                    "SELECT chapter_id, work_id, case_id, licensed FROM matches \
                     WHERE snapshot_id = $1",
                )
                .bind(snapshot)
                .fetch_all(&mut *self)
                .await?;
                // A shard's result replaces its own works' rows only: another shard's rows
                // are neither deleted nor counted here (their cases are other works').
                let existing: Vec<(i64, i64, Option<i64>, bool)> = existing
                    .into_iter()
                    .filter(|e| scope.holds(e.1))
                    .collect();

                // Chapters by work, of the matches that belong in a case.
                let mut by_work: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
                for m in matches.iter().filter(|m| !is_licensed(m.work_id)) {
                    by_work.entry(m.work_id.0).or_default().insert(m.chapter_id.0);
                }
                let mut works: BTreeSet<i64> = by_work.keys().copied().collect();
                works.extend(existing.iter().filter(|e| e.2.is_some()).map(|e| e.1));

                let now = Utc::now();
                let mut recorded = Recorded::default();
                let mut case_of: BTreeMap<i64, i64> = BTreeMap::new();
                let mut touched: BTreeSet<i64> = BTreeSet::new();
                // Case → its widened (first, last) seen times, written with its counters.
                let mut seen: BTreeMap<i64, (DateTime<Utc>, DateTime<Utc>)> = BTreeMap::new();
                for work in works {
                    let Some(chapters) = by_work.get(&work) else {
                        // The work's case only loses this snapshot's matches.
                        let lost: Vec<i64> = sqlx::query_scalar(concat!(
                            "SELECT id FROM cases WHERE site_id = $1 AND work_id = $2",
                            $lock
                        ))
                        .bind(site_id)
                        .bind(work)
                        .fetch_all(&mut *self)
                        .await?;
                        touched.extend(lost);
                        continue;
                    };
                    // The case is there for every page of a site but the first: read (and
                    // lock) it, and open it only when it is missing.
                    let state: Option<CaseState> = sqlx::query_as(case_state_sql!($lock))
                    .bind(site_id)
                    .bind(work)
                    .fetch_optional(&mut *self)
                    .await?;
                    let (id, status, changed_at, dismissed, first, last) = match state {
                        Some(state) => state,
                        None => {
                            let opened: Option<i64> = sqlx::query_scalar(
                                "INSERT INTO cases (site_id, work_id, status, status_changed_at, \
                                 first_seen_at, last_seen_at, created_at, updated_at) \
                                 VALUES ($1, $2, 'new', $3, $4, $4, $3, $3) \
                                 ON CONFLICT (site_id, work_id) DO NOTHING RETURNING id",
                            )
                            .bind(site_id)
                            .bind(work)
                            .bind(now)
                            .bind(fetched_at)
                            .fetch_optional(&mut *self)
                            .await?;
                            if let Some(id) = opened {
                                let details = serde_json::json!({
                                    "snapshot": snapshot.0, "url": url,
                                    "note": format!("copy found at {url}"),
                                });
                                insert_audit!(
                                    &mut *self, actor, "case.open", Some("case"), Some(id),
                                    &details, now
                                );
                                recorded.opened.push(CaseId(id));
                                case_of.insert(work, id);
                                touched.insert(id);
                                continue;
                            }
                            // Another writer opened it in the meantime.
                            sqlx::query_as(case_state_sql!($lock))
                            .bind(site_id)
                            .bind(work)
                            .fetch_one(&mut *self)
                            .await?
                        }
                    };
                    let status = CaseStatus::parse(&status)?;
                    let reopen = match status {
                        CaseStatus::Removed if fetched_at > changed_at => {
                            Some(format!("the copy was found again at {url}"))
                        }
                        CaseStatus::Dismissed => {
                            let dismissed = chapter_list(&dismissed);
                            chapters
                                .iter()
                                .any(|c| !dismissed.contains(c))
                                .then(|| format!("new chapter copied at {url}"))
                        }
                        _ => None,
                    };
                    if let Some(note) = reopen {
                        sqlx::query(
                            "UPDATE cases SET status = 'new', status_changed_at = $2, \
                             updated_at = $2 WHERE id = $1",
                        )
                        .bind(id)
                        .bind(now)
                        .execute(&mut *self)
                        .await?;
                        let details = serde_json::json!({
                            "from": status.as_str(), "to": "new",
                            "snapshot": snapshot.0, "url": url, "note": note,
                        });
                        insert_audit!(
                            &mut *self, actor, "case.reopen", Some("case"), Some(id),
                            &details, now
                        );
                        recorded.reopened.push(CaseId(id));
                    }
                    // After a notice, the case's re-check panel shows each copy's newest
                    // state, whoever saw it: a crawl that finds the page newer than its last
                    // re-check has seen it up.
                    let checked: Option<DateTime<Utc>> = sqlx::query_scalar(
                        "SELECT checked_at FROM recheck_copies WHERE case_id = $1 AND page_id = $2",
                    )
                    .bind(id)
                    .bind(page_id)
                    .fetch_optional(&mut *self)
                    .await?;
                    if checked.is_some_and(|at| at < fetched_at) {
                        sqlx::query(
                            "UPDATE recheck_copies SET url = $3, state = 'up', reason = $4, \
                             snapshot_id = $5, checked_at = $6, removed_at = NULL, \
                             removed_snapshot_id = NULL WHERE case_id = $1 AND page_id = $2",
                        )
                        .bind(id)
                        .bind(page_id)
                        .bind(&url)
                        .bind(FOUND_BY_A_CRAWL)
                        .bind(snapshot)
                        .bind(fetched_at)
                        .execute(&mut *self)
                        .await?;
                    }
                    if fetched_at < first || fetched_at > last {
                        seen.insert(id, (first.min(fetched_at), last.max(fetched_at)));
                    }
                    case_of.insert(work, id);
                    touched.insert(id);
                }

                let keep: HashSet<i64> = matches.iter().map(|m| m.chapter_id.0).collect();
                let mut chapters: BTreeSet<i64> = keep.iter().copied().collect();
                for (chapter, _, _, _) in &existing {
                    chapters.insert(*chapter);
                    if !keep.contains(chapter) {
                        sqlx::query(
                            "DELETE FROM matches WHERE snapshot_id = $1 AND chapter_id = $2",
                        )
                        .bind(snapshot)
                        .bind(chapter)
                        .execute(&mut *self)
                        .await?;
                    }
                }
                for m in matches {
                    let licensed = is_licensed(m.work_id);
                    recorded.licensed += usize::from(licensed);
                    let case = if licensed {
                        None
                    } else {
                        case_of.get(&m.work_id.0).copied()
                    };
                    sqlx::query(
                        "INSERT INTO matches (snapshot_id, chapter_id, work_id, case_id, page_id, \
                         fetched_at, licensed, method, score, coverage, matched_chars, \
                         page_share, chapter_chars, page_chars, passages) VALUES ($1, $2, $3, \
                         $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
                         ON CONFLICT (snapshot_id, chapter_id) DO UPDATE SET \
                         work_id = excluded.work_id, case_id = excluded.case_id, \
                         page_id = excluded.page_id, fetched_at = excluded.fetched_at, \
                         licensed = excluded.licensed, method = excluded.method, \
                         score = excluded.score, coverage = excluded.coverage, \
                         matched_chars = excluded.matched_chars, \
                         page_share = excluded.page_share, \
                         chapter_chars = excluded.chapter_chars, \
                         page_chars = excluded.page_chars, passages = excluded.passages",
                    )
                    .bind(snapshot)
                    .bind(m.chapter_id)
                    .bind(m.work_id)
                    .bind(case)
                    .bind(page_id)
                    .bind(fetched_at)
                    .bind(licensed)
                    .bind(&m.method)
                    .bind(m.score)
                    .bind(m.coverage)
                    .bind(clamp(m.matched_chars))
                    .bind(m.page_share)
                    .bind(clamp(m.chapter_chars))
                    .bind(clamp(m.page_chars))
                    .bind(&m.passages)
                    .execute(&mut *self)
                    .await?;
                }

                // The newest snapshot of the page matching each chapter is the one reports
                // show: flip only the rows whose flag changes.
                // A copy is a (page, chapter) pair counted on its first match's day.
                let old_of: BTreeMap<i64, (i64, bool)> =
                    existing.iter().map(|e| (e.0, (e.1, e.3))).collect();
                let new_of: BTreeMap<i64, (i64, bool)> = matches
                    .iter()
                    .map(|m| (m.chapter_id.0, (m.work_id.0, is_licensed(m.work_id))))
                    .collect();
                let mut copies = CopyDeltas::default();
                for chapter in chapters {
                    let other: Option<FirstMatch> = sqlx::query_as(
                        "SELECT fetched_at, snapshot_id, work_id, licensed FROM matches \
                         WHERE page_id = $1 AND chapter_id = $2 AND snapshot_id <> $3 \
                         ORDER BY fetched_at, snapshot_id LIMIT 1",
                    )
                    .bind(page_id)
                    .bind(chapter)
                    .bind(snapshot)
                    .fetch_optional(&mut *self)
                    .await?;
                    copies.pair(
                        other,
                        (fetched_at, snapshot.0),
                        old_of.get(&chapter).copied(),
                        new_of.get(&chapter).copied(),
                    );
                    sqlx::query(
                        "UPDATE matches SET latest = NOT latest \
                         WHERE page_id = $1 AND chapter_id = $2 AND latest <> (id = ( \
                         SELECT id FROM matches WHERE page_id = $1 AND chapter_id = $2 \
                         ORDER BY fetched_at DESC, snapshot_id DESC LIMIT 1))",
                    )
                    .bind(page_id)
                    .bind(chapter)
                    .execute(&mut *self)
                    .await?;
                }

                for id in touched {
                    let (pages, chapters): (i64, i64) = sqlx::query_as(
                        "SELECT COUNT(DISTINCT page_id), COUNT(DISTINCT chapter_id) \
                         FROM matches WHERE case_id = $1",
                    )
                    .bind(id)
                    .fetch_one(&mut *self)
                    .await?;
                    match seen.get(&id) {
                        Some((first, last)) => {
                            sqlx::query(
                                "UPDATE cases SET pages = $2, chapters_matched = $3, \
                                 first_seen_at = $5, last_seen_at = $6, updated_at = $4 \
                                 WHERE id = $1",
                            )
                            .bind(id)
                            .bind(pages)
                            .bind(chapters)
                            .bind(now)
                            .bind(first)
                            .bind(last)
                            .execute(&mut *self)
                            .await?
                        }
                        None => {
                            sqlx::query(
                                "UPDATE cases SET pages = $2, chapters_matched = $3, \
                                 updated_at = $4 \
                                 WHERE id = $1 AND (pages <> $2 OR chapters_matched <> $3)",
                            )
                            .bind(id)
                            .bind(pages)
                            .bind(chapters)
                            .bind(now)
                            .execute(&mut *self)
                            .await?
                        }
                    };
                }

                // The analytics counters last: a counter row shared by recordings of one
                // work on one day is held from here to the commit only.
                let before: Vec<(i64, i64, bool)> =
                    existing.iter().map(|e| (e.0, e.1, e.3)).collect();
                let after: Vec<(i64, i64, bool)> = matches
                    .iter()
                    .map(|m| (m.chapter_id.0, (m.work_id.0, is_licensed(m.work_id))))
                    .collect::<BTreeMap<_, _>>()
                    .into_iter()
                    .map(|(chapter, (work, licensed))| (chapter, work, licensed))
                    .collect();
                apply_detection_deltas!(self, fetched_at, &before, &after);
                apply_copy_deltas!(self, copies);

                recorded.cases = case_of.into_values().map(CaseId).collect();
                recorded.cases.sort_unstable();
                Ok(recorded)
            }

            async fn set_status(
                &mut self,
                id: CaseId,
                to: CaseStatus,
                actor: &str,
                note: Option<&str>,
            ) -> Result<()> {
                let status: Option<String> =
                    sqlx::query_scalar(concat!("SELECT status FROM cases WHERE id = $1", $lock))
                        .bind(id)
                        .fetch_optional(&mut *self)
                        .await?;
                let from = CaseStatus::parse(&status.ok_or_else(|| Error::not_found("case", id))?)?;
                if !from.can_become(to) {
                    return Err(Error::Conflict(format!(
                        "case {id} is {from} and cannot become {to}: from {from} it can become {}",
                        list(from.next())
                    )));
                }
                let now = Utc::now();
                if to == CaseStatus::Dismissed {
                    let chapters: Vec<i64> = sqlx::query_scalar(
                        "SELECT DISTINCT chapter_id FROM matches WHERE case_id = $1 \
                         ORDER BY chapter_id",
                    )
                    .bind(id)
                    .fetch_all(&mut *self)
                    .await?;
                    sqlx::query("UPDATE cases SET dismissed_chapters = $2 WHERE id = $1")
                        .bind(id)
                        .bind(serde_json::Value::from(chapters).to_string())
                        .execute(&mut *self)
                        .await?;
                }
                sqlx::query(
                    "UPDATE cases SET status = $2, status_changed_at = $3, review_note = $4, \
                     reviewed_at = $3, updated_at = $3 WHERE id = $1",
                )
                .bind(id)
                .bind(to.as_str())
                .bind(now)
                .bind(note)
                .execute(&mut *self)
                .await?;
                // When the case first reached a review status, for the analytics funnel.
                let reached = match to {
                    CaseStatus::New => None,
                    CaseStatus::Confirmed => Some(
                        "UPDATE cases SET confirmed_at = $2 WHERE id = $1 AND confirmed_at IS NULL",
                    ),
                    CaseStatus::NoticeSent => Some(
                        "UPDATE cases SET notice_sent_at = $2 \
                         WHERE id = $1 AND notice_sent_at IS NULL",
                    ),
                    CaseStatus::Removed => Some(
                        "UPDATE cases SET removed_at = $2 WHERE id = $1 AND removed_at IS NULL",
                    ),
                    CaseStatus::Dismissed => Some(
                        "UPDATE cases SET dismissed_at = $2 WHERE id = $1 AND dismissed_at IS NULL",
                    ),
                };
                if let Some(sql) = reached {
                    sqlx::query(sql)
                        .bind(id)
                        .bind(now)
                        .execute(&mut *self)
                        .await?;
                }
                let details = serde_json::json!({
                    "from": from.as_str(), "to": to.as_str(), "note": note,
                });
                let action = format!("case.{to}");
                insert_audit!(
                    &mut *self, actor, &action, Some("case"), Some(id.0), &details, now
                );
                Ok(())
            }
        }
    };
}

case_tx!(sqlx::PgConnection, " FOR UPDATE");
case_tx!(sqlx::SqliteConnection, "");

/// A count as stored in an INTEGER column (values beyond `i32::MAX` are clamped).
/// The review queue's query for [`CaseReads::cases`]: its placeholders are numbered in the
/// order the values are bound there.
pub(crate) fn list_sql(filter: &CaseFilter, after: bool, limit: u32) -> String {
    let mut sql = CASE_SELECT.to_owned();
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };
    if filter.status.is_some() {
        sql += &format!(" AND c.status = ${}", next());
    }
    if filter.work.is_some() {
        sql += &format!(" AND c.work_id = ${}", next());
    }
    if filter.site.is_some() {
        sql += &format!(
            " AND c.site_id IN (SELECT id FROM sites WHERE host = ${})",
            next()
        );
    }
    if filter.min_exposure.is_some() {
        sql += &format!(" AND c.chapters_matched >= ${} * w.chapter_count", next());
    }
    if after {
        let (a, b) = (next(), next());
        sql += &format!(" AND (c.last_seen_at, c.id) < (${a}, ${b})");
    }
    // Written into the text, not bound: a Postgres generic plan would guess a bound
    // limit at a tenth of the table.
    sql += &format!(" ORDER BY c.last_seen_at DESC, c.id DESC LIMIT {limit}");
    sql
}

fn clamp(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_from_their_names_and_list_the_valid_ones_otherwise() {
        for s in CaseStatus::ALL {
            assert_eq!(s.as_str().parse::<CaseStatus>().unwrap(), s);
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(
            " Notice_Sent ".parse::<CaseStatus>().unwrap(),
            CaseStatus::NoticeSent
        );
        let err = "open".parse::<CaseStatus>().unwrap_err().to_string();
        assert!(
            err.contains("\"open\"")
                && err.contains("new, confirmed, notice_sent, removed, dismissed"),
            "{err}"
        );
    }

    #[test]
    fn transitions_follow_the_review_flow() {
        use CaseStatus::*;
        let allowed = [
            (New, Confirmed),
            (New, Dismissed),
            (Confirmed, NoticeSent),
            (Confirmed, Dismissed),
            (Confirmed, New),
            (NoticeSent, Removed),
            (NoticeSent, Confirmed),
            (Removed, New),
            (Dismissed, New),
        ];
        for from in CaseStatus::ALL {
            for to in CaseStatus::ALL {
                assert_eq!(
                    from.can_become(to),
                    allowed.contains(&(from, to)),
                    "{from} -> {to}"
                );
            }
        }
    }

    #[test]
    fn hex_is_lower_case_two_digits_a_byte() {
        assert_eq!(hex(&[0, 0xab, 0x0f]), "00ab0f");
    }
}
