//! Reports: the matches as one row per (page, chapter), for export (CSV, JSON lines). Each
//! row is the latest snapshot of the page that matched the chapter (the `matches.latest`
//! flag that [`crate::MatchWrites::record_matches`] keeps), with the first and last time a
//! snapshot of that page matched it. Rows come in (page id, chapter id) order, a page of
//! rows at a time after a [`ReportCursor`], so an export of 10^6 rows holds one page in
//! memory and each page is an index range scan.

use std::future::Future;

use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use tracing::instrument;

use crate::cases::hex;
use crate::db::read_pool;
use crate::ids::{CaseId, ChapterId, PageId, SnapshotId, WorkId};
use crate::{CaseStatus, Result, Store};

/// Which matches on licensed domains a report holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LicensedRows {
    /// Licensed and unlicensed rows.
    Include,
    /// Only rows that are not licensed (the infringing ones).
    #[default]
    Exclude,
    /// Only licensed rows.
    Only,
}

/// Which rows [`Reports::report_rows`] returns; the conditions that are set all apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportFilter {
    /// Only rows whose case is in this status (licensed rows have no case and drop out).
    pub status: Option<CaseStatus>,
    /// Only rows of this work.
    pub work: Option<WorkId>,
    /// Licensed rows: left out by default.
    pub licensed: LicensedRows,
}

/// Where a page of [`Reports::report_rows`] starts: after this (page, chapter). Take it from
/// the last row of the previous page with [`ReportRow::cursor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReportCursor {
    /// The page.
    pub page: PageId,
    /// The chapter.
    pub chapter: ChapterId,
}

/// One (page, chapter) of a report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReportRow {
    /// The page.
    pub page_id: PageId,
    /// Its URL.
    pub url: String,
    /// Its site's host.
    pub site: String,
    /// The work copied.
    pub work_id: WorkId,
    /// Its title.
    pub work_title: String,
    /// The chapter copied.
    pub chapter_id: ChapterId,
    /// Its 1-based position in the work (import order).
    pub chapter_index: u32,
    /// Its title.
    pub chapter_title: String,
    /// The latest match's score, 0..1.
    pub score: f64,
    /// Share of the chapter found in the page, 0..1.
    pub coverage: f64,
    /// Characters matched.
    pub matched_chars: u32,
    /// The case the match belongs to (`None` when licensed).
    pub case_id: Option<CaseId>,
    /// That case's status.
    pub case_status: Option<CaseStatus>,
    /// Fetch time of the first snapshot of the page that matched the chapter.
    pub first_seen: DateTime<Utc>,
    /// Fetch time of the latest one (the snapshot of this row).
    pub last_seen: DateTime<Utc>,
    /// SHA-256 of that snapshot's body, lower-case hex.
    pub snapshot_sha256: String,
    /// That snapshot.
    pub snapshot_id: SnapshotId,
    /// Whether the page's host is licensed for the work.
    pub licensed: bool,
    /// Where that snapshot's text came from: `markup`, `script` (written by an inline
    /// script) or `endpoint` (fetched by its script from the site).
    pub text_source: String,
    /// The aligned passages as JSON (the matcher's format).
    pub passages: String,
}

impl ReportRow {
    /// The cursor that continues a report after this row.
    pub fn cursor(&self) -> ReportCursor {
        ReportCursor {
            page: self.page_id,
            chapter: self.chapter_id,
        }
    }
}

/// Reads for reports and exports.
pub trait Reports {
    /// At most `limit` rows passing `filter`, one per (page, chapter), in (page id, chapter
    /// id) order after `after` (`None`: from the start). A short page is the last.
    fn report_rows(
        &self,
        filter: &ReportFilter,
        after: Option<ReportCursor>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<ReportRow>>> + Send;
}

#[derive(sqlx::FromRow)]
struct ReportDbRow {
    page_id: PageId,
    url: String,
    host: String,
    work_id: WorkId,
    work_title: String,
    chapter_id: ChapterId,
    ordinal: i32,
    chapter_title: String,
    score: f64,
    coverage: f64,
    matched_chars: i32,
    case_id: Option<CaseId>,
    status: Option<String>,
    first_seen: DateTime<Utc>,
    fetched_at: DateTime<Utc>,
    sha256: Vec<u8>,
    snapshot_id: SnapshotId,
    licensed: bool,
    text_source: Option<String>,
    passages: String,
}

impl Reports for Store {
    #[instrument(skip(self))]
    async fn report_rows(
        &self,
        filter: &ReportFilter,
        after: Option<ReportCursor>,
        limit: u32,
    ) -> Result<Vec<ReportRow>> {
        // The inner query reads only `matches`, in the order of its partial index from the
        // cursor on, and stops at the limit; the outer one adds the rest by primary key and
        // the first seen time from matches_seen. Written as one join, SQLite 3.51 drove it
        // from `pages` (a range it inferred from the cursor) and sorted every later row:
        // a full export took 345 s at 10^6 rows instead of seconds. The status filter is an
        // EXISTS for the same reason: it must filter that scan, not drive it.
        // Placeholders are numbered in the order the values are bound below.
        let mut inner = String::from("SELECT * FROM matches mm WHERE mm.latest");
        let mut n = 0;
        let mut next = || {
            n += 1;
            n
        };
        if filter.status.is_some() {
            inner += &format!(
                " AND EXISTS (SELECT 1 FROM cases cc WHERE cc.id = mm.case_id AND cc.status = ${})",
                next()
            );
        }
        if filter.work.is_some() {
            inner += &format!(" AND mm.work_id = ${}", next());
        }
        match filter.licensed {
            LicensedRows::Include => {}
            LicensedRows::Exclude => inner += " AND NOT mm.licensed",
            LicensedRows::Only => inner += " AND mm.licensed",
        }
        if after.is_some() {
            let (a, b) = (next(), next());
            inner += &format!(" AND (mm.page_id, mm.chapter_id) > (${a}, ${b})");
        }
        // The limit is written into the text, not bound: a Postgres generic plan guesses a
        // bound limit at a tenth of the table and would hash-join whole tables to it.
        inner += &format!(" ORDER BY mm.page_id, mm.chapter_id LIMIT {limit}");
        let sql = format!(
            "SELECT m.page_id, p.url, si.host, m.work_id, w.title AS work_title, m.chapter_id, \
             ch.ordinal, ch.title AS chapter_title, m.score, m.coverage, m.matched_chars, \
             m.case_id, c.status, \
             (SELECT MIN(f.fetched_at) FROM matches f \
              WHERE f.page_id = m.page_id AND f.chapter_id = m.chapter_id) AS first_seen, \
             m.fetched_at, sn.sha256, m.snapshot_id, m.licensed, pt.text_source, m.passages \
             FROM ({inner}) m \
             JOIN pages p ON p.id = m.page_id \
             JOIN sites si ON si.id = p.site_id \
             JOIN works w ON w.id = m.work_id \
             JOIN chapters ch ON ch.id = m.chapter_id \
             JOIN snapshots sn ON sn.id = m.snapshot_id \
             LEFT JOIN cases c ON c.id = m.case_id \
             LEFT JOIN page_texts pt ON pt.snapshot_id = m.snapshot_id \
             ORDER BY m.page_id, m.chapter_id"
        );
        let rows: Vec<ReportDbRow> = read_pool!(self, |pool| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql));
            if let Some(status) = filter.status {
                q = q.bind(status.as_str());
            }
            if let Some(work) = filter.work {
                q = q.bind(work);
            }
            if let Some(after) = after {
                q = q.bind(after.page).bind(after.chapter);
            }
            q.fetch_all(pool).await?
        });
        rows.into_iter()
            .map(|r| {
                Ok(ReportRow {
                    page_id: r.page_id,
                    url: r.url,
                    site: r.host,
                    work_id: r.work_id,
                    work_title: r.work_title,
                    chapter_id: r.chapter_id,
                    chapter_index: u32::try_from(r.ordinal).unwrap_or(0),
                    chapter_title: r.chapter_title,
                    score: r.score,
                    coverage: r.coverage,
                    matched_chars: u32::try_from(r.matched_chars).unwrap_or(0),
                    case_id: r.case_id,
                    case_status: r.status.as_deref().map(CaseStatus::parse).transpose()?,
                    first_seen: r.first_seen,
                    last_seen: r.fetched_at,
                    snapshot_sha256: hex(&r.sha256),
                    snapshot_id: r.snapshot_id,
                    licensed: r.licensed,
                    text_source: r.text_source.unwrap_or_else(|| "markup".to_owned()),
                    passages: r.passages,
                })
            })
            .collect()
    }
}
