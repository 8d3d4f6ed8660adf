//! Reads for analytics ([`StatsReads`]): counts over matches, cases and crawls, for the
//! `analytics` crate to shape into figures. Nothing here writes.
//!
//! Figures over matches read counters kept by the transaction that records a snapshot's
//! matches ([`crate::MatchWrites::record_matches`], through [`detection_deltas`]):
//! `detections_daily` (matches per UTC fetch day, work and licensed flag) and
//! `chapter_copies` (matches per chapter copied off licensed domains) and `copies_daily`
//! (new copies, (page, chapter) pairs, per day of their first match), so a read at 10^6
//! matches touches thousands of rows, not millions. Deleting a work removes its counters with
//! it (foreign keys); nothing else deletes matches.
//!
//! Case figures sum the counters on the case rows; the funnel reads when each case first
//! reached confirmed, notice sent, removed and dismissed (`cases.confirmed_at` …, set by the
//! status change and back-filled from the audit log); crawl health reads an ended crawl's
//! totals from its row.

use std::collections::BTreeMap;
use std::future::Future;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use sqlx::{AssertSqlSafe, Row};
use tracing::instrument;

use crate::crawl::{
    TOTALS_BYTES, TOTALS_FAILED, TOTALS_PAGES, frontier_error_kind, frontier_failed,
};
use crate::db::read_pool;
use crate::ids::{SiteId, WorkId};
use crate::{BackendKind, CaseStatus, Result, Store};

/// Matches found on one UTC day (by the fetch time of the snapshot they were found on), and
/// the copies first found that day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayCount {
    /// The day.
    pub day: NaiveDate,
    /// Matches off licensed domains (infringement found).
    pub matches: u64,
    /// Matches on licensed domains (never infringement).
    pub licensed: u64,
    /// New copies off licensed domains: (page, chapter) pairs first matched this day. A
    /// page fetched again adds matches but no copies.
    pub copies: u64,
}

/// A site's cases summed, as [`StatsReads::top_sites`] ranks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteCopies {
    /// The site.
    pub site_id: SiteId,
    /// Its host.
    pub site: String,
    /// Works it copies (its cases).
    pub works: u64,
    /// Chapters it copies, summed over its cases (a chapter of two works counts twice).
    pub chapters: u64,
    /// Its pages with a copy, summed over its cases.
    pub pages: u64,
}

/// What is known of a work's copies ([`StatsReads::work_exposure`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkCopies {
    /// The work.
    pub work_id: WorkId,
    /// Its title.
    pub title: String,
    /// Chapters it has.
    pub chapters: u64,
    /// Sites copying it (its cases). Exposure counts every copy found off licensed domains,
    /// whatever its review: dismissed cases are in, as their chapters are in
    /// `chapters_copied`.
    pub sites: u64,
    /// Pages copying it, summed over those cases.
    pub pages: u64,
    /// Distinct chapters of it matched anywhere off licensed domains.
    pub chapters_copied: u64,
    /// Matches of it on licensed domains.
    pub licensed_matches: u64,
}

/// Cases and how far review took them ([`StatsReads::case_funnel`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunnelCounts {
    /// Cases opened (every case is a copy found).
    pub found: u64,
    /// Cases a reviewer ever confirmed (still counted when later dismissed or reopened).
    pub confirmed: u64,
    /// Cases a notice was ever sent for.
    pub notice_sent: u64,
    /// Cases ever marked removed.
    pub removed: u64,
    /// Cases ever dismissed.
    pub dismissed: u64,
    /// Cases by the status they have now.
    pub by_status: BTreeMap<&'static str, u64>,
}

/// How long removals took ([`StatsReads::removal_times`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemovalTimes {
    /// Cases ever removed.
    pub removed: u64,
    /// The median time from first seen to first removal, to the millisecond: the middle one,
    /// or the mean of the two middle ones (`None` without removals).
    pub median: Option<TimeDelta>,
}

/// A site's crawls summed ([`StatsReads::crawl_totals`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SiteCrawlTotals {
    /// The site.
    pub site_id: SiteId,
    /// Its host.
    pub site: String,
    /// Crawls counted.
    pub crawls: u64,
    /// Distinct URLs whose text was stored, summed over the crawls.
    pub pages: u64,
    /// Entries that failed for good or ended with an HTTP status of 400 or more.
    pub errors: u64,
    /// Those failures by kind (`timeout`, `http_404`, ...).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Body bytes of the crawls' stored responses.
    pub bytes: u64,
    /// Seconds the started crawls ran (to `now` for those still running).
    pub seconds: f64,
    /// Pages of the started crawls (the numerator of pages per second).
    pub pages_timed: u64,
}

/// Read-only figures for analytics. `since` bounds the time-based ones; `None` is all time.
pub trait StatsReads {
    /// Matches and new copies per UTC day from `since` on, oldest first; days without
    /// either are left out.
    fn detections_by_day(
        &self,
        since: Option<NaiveDate>,
    ) -> impl Future<Output = Result<Vec<DayCount>>> + Send;

    /// The `limit` sites copying the most chapters in cases seen (`last_seen_at`) since
    /// `since`, dismissed cases left out; most chapters first, then lowest site id.
    fn top_sites(
        &self,
        since: Option<DateTime<Utc>>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<SiteCopies>>> + Send;

    /// The `limit` works with any copy or licensed match, as they stand now: most chapters
    /// copied first, then lowest work id.
    fn work_exposure(&self, limit: u32) -> impl Future<Output = Result<Vec<WorkCopies>>> + Send;

    /// Cases first seen since `since` and how far review took them.
    fn case_funnel(
        &self,
        since: Option<DateTime<Utc>>,
    ) -> impl Future<Output = Result<FunnelCounts>> + Send;

    /// Of the cases first seen since `since`, how many were ever marked removed and the
    /// median time from the first copy seen to the first removal.
    fn removal_times(
        &self,
        since: Option<DateTime<Utc>>,
    ) -> impl Future<Output = Result<RemovalTimes>> + Send;

    /// Crawls created since `since`, summed by site, lowest site id first.
    fn crawl_totals(
        &self,
        since: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<SiteCrawlTotals>>> + Send;
}

/// `since`, or a time before anything stored.
fn from(since: Option<DateTime<Utc>>) -> DateTime<Utc> {
    since.unwrap_or(DateTime::UNIX_EPOCH)
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl StatsReads for Store {
    #[instrument(skip(self))]
    async fn detections_by_day(&self, since: Option<NaiveDate>) -> Result<Vec<DayCount>> {
        let since = since.unwrap_or(DateTime::UNIX_EPOCH.date_naive());
        let rows: Vec<(NaiveDate, i64, i64, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT day, CAST(SUM(m) AS BIGINT), CAST(SUM(l) AS BIGINT), \
                 CAST(SUM(c) AS BIGINT) FROM ( \
                 SELECT day, CASE WHEN licensed THEN 0 ELSE matches END AS m, \
                 CASE WHEN licensed THEN matches ELSE 0 END AS l, 0 AS c \
                 FROM detections_daily WHERE day >= $1 \
                 UNION ALL SELECT day, 0, 0, copies FROM copies_daily \
                 WHERE day >= $1 AND NOT licensed) t GROUP BY day ORDER BY day",
            )
            .bind(since)
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(day, matches, licensed, copies)| DayCount {
                day,
                matches: count(matches),
                licensed: count(licensed),
                copies: count(copies),
            })
            .collect())
    }

    #[instrument(skip(self))]
    async fn top_sites(&self, since: Option<DateTime<Utc>>, limit: u32) -> Result<Vec<SiteCopies>> {
        // The limit is written into the text: a Postgres generic plan guesses a bound one.
        let sql = format!(
            "SELECT t.site_id, s.host, t.works, t.chapters, t.pages FROM ( \
             SELECT site_id, COUNT(*) AS works, CAST(SUM(chapters_matched) AS BIGINT) AS chapters, \
             CAST(SUM(pages) AS BIGINT) AS pages FROM cases \
             WHERE status <> 'dismissed' AND last_seen_at >= $1 GROUP BY site_id) t \
             JOIN sites s ON s.id = t.site_id ORDER BY t.chapters DESC, t.site_id LIMIT {limit}"
        );
        let rows: Vec<(SiteId, String, i64, i64, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(AssertSqlSafe(sql))
                .bind(from(since))
                .fetch_all(pool)
                .await?
        });
        Ok(rows
            .into_iter()
            .map(|(site_id, site, works, chapters, pages)| SiteCopies {
                site_id,
                site,
                works: count(works),
                chapters: count(chapters),
                pages: count(pages),
            })
            .collect())
    }

    #[instrument(skip(self))]
    async fn work_exposure(&self, limit: u32) -> Result<Vec<WorkCopies>> {
        let sql = format!(
            "SELECT w.id, w.title, w.chapter_count, COALESCE(c.sites, 0), COALESCE(c.pages, 0), \
             COALESCE(cc.chapters, 0), COALESCE(l.matches, 0) FROM works w \
             LEFT JOIN (SELECT work_id, COUNT(*) AS sites, CAST(SUM(pages) AS BIGINT) AS pages \
                 FROM cases GROUP BY work_id) c ON c.work_id = w.id \
             LEFT JOIN (SELECT work_id, COUNT(*) AS chapters FROM chapter_copies \
                 GROUP BY work_id) cc ON cc.work_id = w.id \
             LEFT JOIN (SELECT work_id, CAST(SUM(matches) AS BIGINT) AS matches \
                 FROM detections_daily WHERE licensed GROUP BY work_id) l ON l.work_id = w.id \
             WHERE w.importing_since IS NULL \
             AND (c.sites IS NOT NULL OR cc.chapters IS NOT NULL OR l.matches IS NOT NULL) \
             ORDER BY 6 DESC, w.id LIMIT {limit}"
        );
        #[allow(clippy::type_complexity)]
        let rows: Vec<(WorkId, String, i32, i64, i64, i64, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(AssertSqlSafe(sql)).fetch_all(pool).await?
        });
        Ok(rows
            .into_iter()
            .map(|r| WorkCopies {
                work_id: r.0,
                title: r.1,
                chapters: count(i64::from(r.2)),
                sites: count(r.3),
                pages: count(r.4),
                chapters_copied: count(r.5),
                licensed_matches: count(r.6),
            })
            .collect())
    }

    #[instrument(skip(self))]
    async fn case_funnel(&self, since: Option<DateTime<Utc>>) -> Result<FunnelCounts> {
        // One pass over the covering index `cases_funnel`, counting each status with a sum:
        // a GROUP BY status sorted 10^5 index entries first (54 of 90 ms on SQLite).
        let by_status: String = CaseStatus::ALL
            .iter()
            .map(|s| {
                format!(
                    ", SUM(CASE WHEN status = '{}' THEN 1 ELSE 0 END)",
                    s.as_str()
                )
            })
            .collect();
        let sql = format!(
            "SELECT COUNT(confirmed_at), COUNT(notice_sent_at), COUNT(removed_at), \
             COUNT(dismissed_at){by_status} FROM cases WHERE first_seen_at >= $1"
        );
        let row: Vec<Option<i64>> = read_pool!(self, |pool| {
            let row = sqlx::query(AssertSqlSafe(sql))
                .bind(from(since))
                .fetch_one(pool)
                .await?;
            (0..4 + CaseStatus::ALL.len())
                .map(|i| row.try_get::<Option<i64>, _>(i))
                .collect::<std::result::Result<_, _>>()?
        });
        let n = |i: usize| count(row[i].unwrap_or(0));
        let mut funnel = FunnelCounts {
            confirmed: n(0),
            notice_sent: n(1),
            removed: n(2),
            dismissed: n(3),
            ..FunnelCounts::default()
        };
        for (i, status) in CaseStatus::ALL.iter().enumerate() {
            let cases = n(4 + i);
            funnel.found += cases;
            if cases > 0 {
                funnel.by_status.insert(status.as_str(), cases);
            }
        }
        Ok(funnel)
    }

    #[instrument(skip(self))]
    async fn removal_times(&self, since: Option<DateTime<Utc>>) -> Result<RemovalTimes> {
        // The median is picked in SQL: sending 10^4 rows out of SQLite costs more than the
        // sort (its rows cross a thread one at a time).
        let took = self.seconds_between("first_seen_at", "removed_at");
        let count_sql = "SELECT COUNT(*) FROM cases \
                         WHERE first_seen_at >= $1 AND removed_at IS NOT NULL";
        let removed: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar(count_sql)
                .bind(from(since))
                .fetch_one(pool)
                .await?
        });
        let removed = count(removed);
        if removed == 0 {
            return Ok(RemovalTimes::default());
        }
        let middle_sql = format!(
            "SELECT {took} AS took FROM cases WHERE first_seen_at >= $1 \
             AND removed_at IS NOT NULL ORDER BY took LIMIT {} OFFSET {}",
            2 - removed % 2,
            (removed - 1) / 2
        );
        let middle: Vec<f64> = read_pool!(self, |pool| {
            sqlx::query_scalar(AssertSqlSafe(middle_sql))
                .bind(from(since))
                .fetch_all(pool)
                .await?
        });
        let mean = middle.iter().sum::<f64>() / middle.len().max(1) as f64;
        Ok(RemovalTimes {
            removed,
            median: Some(TimeDelta::milliseconds((mean * 1e3).round() as i64)),
        })
    }

    #[instrument(skip(self))]
    async fn crawl_totals(
        &self,
        since: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Vec<SiteCrawlTotals>> {
        // An ended crawl's totals were written into its row when it ended
        // (`Crawls::set_crawl_status`); only unfinished ones are counted afresh, so a year of
        // crawls reads one row each, summed by site in SQL.
        let ran = self.seconds_between("crawls.started_at", "COALESCE(crawls.finished_at, $2)");
        let crawls_sql = format!(
            "SELECT t.site_id, sites.host, COUNT(*), CAST(SUM(t.pages) AS BIGINT), \
             CAST(SUM(t.failed) AS BIGINT), CAST(SUM(t.bytes) AS BIGINT), \
             CAST(SUM(CASE WHEN t.ran IS NULL THEN 0 ELSE t.pages END) AS BIGINT), \
             CAST(COALESCE(SUM(t.ran), 0) AS DOUBLE PRECISION) FROM ( \
             SELECT crawls.site_id, \
             CASE WHEN crawls.finished_at IS NULL THEN {TOTALS_PAGES} \
                  ELSE CAST(crawls.pages_fetched AS BIGINT) END AS pages, \
             CASE WHEN crawls.finished_at IS NULL THEN {TOTALS_FAILED} \
                  ELSE CAST(crawls.pages_failed AS BIGINT) END AS failed, \
             CASE WHEN crawls.finished_at IS NULL THEN {TOTALS_BYTES} \
                  ELSE CAST(crawls.bytes AS BIGINT) END AS bytes, \
             {ran} AS ran FROM crawls WHERE crawls.created_at >= $1) t \
             JOIN sites ON sites.id = t.site_id GROUP BY t.site_id, sites.host ORDER BY t.site_id"
        );
        // Ended crawls keep their failures by kind in their row; only the others (running,
        // or ended before the column was kept) are counted from the frontier.
        let stored_sql = "SELECT site_id, errors_by_kind FROM crawls \
             WHERE created_at >= $1 AND errors_by_kind IS NOT NULL";
        let errors_sql = format!(
            "SELECT crawls.site_id, e.kind, CAST(SUM(e.n) AS BIGINT) FROM crawls JOIN ( \
             SELECT crawl_id, {} AS kind, COUNT(*) AS n FROM frontier \
             WHERE crawl_id IN (SELECT id FROM crawls WHERE created_at >= $1 \
             AND errors_by_kind IS NULL) AND {} \
             GROUP BY crawl_id, kind) e ON e.crawl_id = crawls.id GROUP BY crawls.site_id, e.kind",
            frontier_error_kind!(),
            frontier_failed!()
        );
        let (crawls, stored, mut errors): CrawlHealthRows = read_pool!(self, |pool| {
            let crawls = sqlx::query_as(AssertSqlSafe(crawls_sql))
                .bind(from(since))
                .bind(now)
                .fetch_all(pool)
                .await?;
            let stored = sqlx::query_as(stored_sql)
                .bind(from(since))
                .fetch_all(pool)
                .await?;
            let errors = sqlx::query_as(AssertSqlSafe(errors_sql))
                .bind(from(since))
                .fetch_all(pool)
                .await?;
            (crawls, stored, errors)
        });
        for (site_id, json) in stored {
            // Written by the store itself; an unreadable value counts as no failures.
            let kinds: BTreeMap<String, i64> = serde_json::from_str(&json).unwrap_or_default();
            errors.extend(kinds.into_iter().map(|(kind, n)| (site_id, kind, n)));
        }
        let mut sites: BTreeMap<SiteId, SiteCrawlTotals> = crawls
            .into_iter()
            .map(
                |(site_id, site, crawls, pages, failed, bytes, timed, seconds)| {
                    let totals = SiteCrawlTotals {
                        site_id,
                        site,
                        crawls: count(crawls),
                        pages: count(pages),
                        errors: count(failed),
                        errors_by_kind: BTreeMap::new(),
                        bytes: count(bytes),
                        seconds: seconds.max(0.0),
                        pages_timed: count(timed),
                    };
                    (site_id, totals)
                },
            )
            .collect();
        for (site_id, kind, n) in errors {
            if let Some(t) = sites.get_mut(&site_id) {
                *t.errors_by_kind.entry(kind).or_default() += count(n);
            }
        }
        Ok(sites.into_values().collect())
    }
}

/// `site_id, host, crawls, pages, failed, bytes, pages of started crawls, seconds run` of a
/// site's crawls.
type CrawlSumRow = (SiteId, String, i64, i64, i64, i64, i64, f64);

/// What crawl health reads: each site's sums, the ended crawls' stored failures by kind
/// (JSON), and the other crawls' failures counted by kind.
type CrawlHealthRows = (
    Vec<CrawlSumRow>,
    Vec<(SiteId, String)>,
    Vec<(SiteId, String, i64)>,
);

impl Store {
    /// SQL for the seconds from the time `from` to the time `to` (column names or
    /// expressions), as a double; NULL when either is.
    fn seconds_between(&self, from: &str, to: &str) -> String {
        match self.kind() {
            BackendKind::Sqlite => format!("((julianday({to}) - julianday({from})) * 86400.0)"),
            BackendKind::Postgres => {
                format!("CAST(EXTRACT(EPOCH FROM ({to} - {from})) AS DOUBLE PRECISION)")
            }
        }
    }
}

/// The changes to the analytics counters when a snapshot fetched on `day` goes from the
/// matches `old` to `new`, each `(chapter, work, licensed)` with a chapter at most once:
/// `(work, licensed) → change` for `detections_daily` and `(chapter, work) → change` for
/// `chapter_copies`, both in key order (the order rows are locked in, so two recordings
/// never wait on each other in a cycle) and without zero changes.
#[allow(clippy::type_complexity)]
pub(crate) fn detection_deltas(
    old: &[(i64, i64, bool)],
    new: &[(i64, i64, bool)],
) -> (Vec<((i64, bool), i64)>, Vec<((i64, i64), i64)>) {
    let mut daily: BTreeMap<(i64, bool), i64> = BTreeMap::new();
    let mut chapters: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for (rows, sign) in [(old, -1), (new, 1)] {
        for &(chapter, work, licensed) in rows {
            *daily.entry((work, licensed)).or_default() += sign;
            if !licensed {
                *chapters.entry((chapter, work)).or_default() += sign;
            }
        }
    }
    (
        daily.into_iter().filter(|(_, n)| *n != 0).collect(),
        chapters.into_iter().filter(|(_, n)| *n != 0).collect(),
    )
}

/// Adds `n` to the counter `$column` of the row (day, work, licensed) of the daily counter
/// table `$table` (`detections_daily`, `copies_daily`), deleting the row when nothing is
/// left, on a connection of either backend inside the caller's transaction.
macro_rules! add_to_daily_counter {
    ($conn:expr, $table:literal, $column:literal, $day:expr, $work:expr, $licensed:expr, $n:expr) => {{
        sqlx::query(concat!(
            "INSERT INTO ",
            $table,
            " (day, work_id, licensed, ",
            $column,
            ") \
             VALUES ($1, $2, $3, $4) ON CONFLICT (day, work_id, licensed) DO UPDATE SET ",
            $column,
            " = ",
            $table,
            ".",
            $column,
            " + excluded.",
            $column
        ))
        .bind($day)
        .bind($work)
        .bind($licensed)
        .bind($n)
        .execute(&mut *$conn)
        .await?;
        if $n < 0 {
            sqlx::query(concat!(
                "DELETE FROM ",
                $table,
                " WHERE day = $1 AND work_id = $2 AND licensed = $3 \
                 AND ",
                $column,
                " <= 0"
            ))
            .bind($day)
            .bind($work)
            .bind($licensed)
            .execute(&mut *$conn)
            .await?;
        }
    }};
}

pub(crate) use add_to_daily_counter;

/// Applies [`detection_deltas`] for a snapshot fetched at `fetched_at` on a connection of
/// either backend, inside the caller's transaction.
macro_rules! apply_detection_deltas {
    ($conn:expr, $fetched_at:expr, $old:expr, $new:expr) => {{
        let day = $fetched_at.date_naive();
        let (daily, chapters) = $crate::stats::detection_deltas($old, $new);
        for ((work, licensed), n) in daily {
            $crate::stats::add_to_daily_counter!(
                $conn,
                "detections_daily",
                "matches",
                day,
                work,
                licensed,
                n
            );
        }
        for ((chapter, work), n) in chapters {
            sqlx::query(
                "INSERT INTO chapter_copies (chapter_id, work_id, matches) VALUES ($1, $2, $3) \
                 ON CONFLICT (chapter_id) \
                 DO UPDATE SET matches = chapter_copies.matches + excluded.matches",
            )
            .bind(chapter)
            .bind(work)
            .bind(n)
            .execute(&mut *$conn)
            .await?;
            if n < 0 {
                sqlx::query("DELETE FROM chapter_copies WHERE chapter_id = $1 AND matches <= 0")
                    .bind(chapter)
                    .execute(&mut *$conn)
                    .await?;
            }
        }
    }};
}

pub(crate) use apply_detection_deltas;

/// Where a (page, chapter) pair's first match is: its fetch time and snapshot (the order
/// `latest` uses, read backwards), and the work and licensed flag it was filed under.
pub(crate) type FirstMatch = (DateTime<Utc>, i64, i64, bool);

/// The changes to `copies_daily` as recordings change pairs' first matches: a pair counts
/// once, on the UTC day of its first match, so a re-fetch of a page changes nothing and a
/// snapshot older than the first one found moves the copy to its own day.
#[derive(Debug, Default)]
pub(crate) struct CopyDeltas(BTreeMap<(NaiveDate, i64, bool), i64>);

impl CopyDeltas {
    /// One pair of the snapshot `(fetched_at, snapshot)` being recorded: `other` is the
    /// pair's first match on the page's other snapshots, `old` and `new` the snapshot's own
    /// match of the chapter (work, licensed) before and after the recording.
    pub(crate) fn pair(
        &mut self,
        other: Option<FirstMatch>,
        this: (DateTime<Utc>, i64),
        old: Option<(i64, bool)>,
        new: Option<(i64, bool)>,
    ) {
        let own =
            |m: Option<(i64, bool)>| m.map(|(work, licensed)| (this.0, this.1, work, licensed));
        let first = |own: Option<FirstMatch>| match (other, own) {
            (Some(a), Some(b)) => Some(if (b.0, b.1) < (a.0, a.1) { b } else { a }),
            (a, b) => a.or(b),
        };
        let key = |m: FirstMatch| (m.0.date_naive(), m.2, m.3);
        let (before, after) = (first(own(old)).map(key), first(own(new)).map(key));
        if before != after {
            for (copy, sign) in [(before, -1), (after, 1)] {
                if let Some(copy) = copy {
                    *self.0.entry(copy).or_default() += sign;
                }
            }
        }
    }

    /// The changes, in key order (the order rows are locked in), without zero changes.
    pub(crate) fn changes(self) -> impl Iterator<Item = ((NaiveDate, i64, bool), i64)> {
        self.0.into_iter().filter(|(_, n)| *n != 0)
    }
}

/// Applies [`CopyDeltas`] on a connection of either backend, inside the caller's
/// transaction.
macro_rules! apply_copy_deltas {
    ($conn:expr, $deltas:expr) => {{
        for ((day, work, licensed), n) in $deltas.changes() {
            $crate::stats::add_to_daily_counter!(
                $conn,
                "copies_daily",
                "copies",
                day,
                work,
                licensed,
                n
            );
        }
    }};
}

pub(crate) use apply_copy_deltas;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_count_what_changed_licensed_apart_in_key_order() {
        // Chapter 1 kept, 2 dropped, 3 added; chapter 9 of work 8 became licensed.
        let old = [(1, 5, false), (2, 5, false), (9, 8, false)];
        let new = [(3, 5, false), (1, 5, false), (9, 8, true)];
        let (daily, chapters) = detection_deltas(&old, &new);
        assert_eq!(daily, vec![((8, false), -1), ((8, true), 1)]);
        assert_eq!(chapters, vec![((2, 5), -1), ((3, 5), 1), ((9, 8), -1)]);
    }

    #[test]
    fn a_copy_counts_once_on_the_day_its_pair_was_first_matched() {
        let at = |d: u32| {
            NaiveDate::from_ymd_opt(2026, 11, d)
                .unwrap()
                .and_hms_opt(12, 0, 0)
                .unwrap()
                .and_utc()
        };
        let day = |d: u32| NaiveDate::from_ymd_opt(2026, 11, d).unwrap();
        // First found: a copy on its day.
        let mut d = CopyDeltas::default();
        d.pair(None, (at(1), 10), None, Some((5, false)));
        assert_eq!(
            d.changes().collect::<Vec<_>>(),
            vec![((day(1), 5, false), 1)]
        );
        // Fetched again later: the pair was matched before, no new copy.
        let mut d = CopyDeltas::default();
        d.pair(
            Some((at(1), 10, 5, false)),
            (at(3), 11),
            None,
            Some((5, false)),
        );
        assert_eq!(d.changes().count(), 0);
        // The same snapshot recorded again: nothing changes.
        let mut d = CopyDeltas::default();
        d.pair(None, (at(1), 10), Some((5, false)), Some((5, false)));
        assert_eq!(d.changes().count(), 0);
        // An older snapshot recorded late moves the copy to its own day.
        let mut d = CopyDeltas::default();
        d.pair(
            Some((at(3), 11, 5, false)),
            (at(1), 10),
            None,
            Some((5, false)),
        );
        assert_eq!(
            d.changes().collect::<Vec<_>>(),
            vec![((day(1), 5, false), 1), ((day(3), 5, false), -1)]
        );
        // The first match dropped: the copy moves to the next one, or goes.
        let mut d = CopyDeltas::default();
        d.pair(
            Some((at(3), 11, 5, false)),
            (at(1), 10),
            Some((5, false)),
            None,
        );
        d.pair(None, (at(1), 10), Some((6, true)), None);
        assert_eq!(
            d.changes().collect::<Vec<_>>(),
            vec![
                ((day(1), 5, false), -1),
                ((day(1), 6, true), -1),
                ((day(3), 5, false), 1)
            ]
        );
    }

    #[test]
    fn the_same_matches_again_change_nothing() {
        let rows = [(1, 5, false), (2, 5, true)];
        assert_eq!(detection_deltas(&rows, &rows), (vec![], vec![]));
    }
}
