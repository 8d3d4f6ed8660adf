//! Reads for analytics ([`StatsReads`]): counts over matches, cases, the audit log and crawls,
//! for the `analytics` crate to shape into figures. Nothing here writes.
//!
//! Figures over matches read counters kept by the transaction that records a snapshot's
//! matches ([`crate::MatchWrites::record_matches`], through [`detection_deltas`]):
//! `detections_daily` (matches per UTC fetch day, work and licensed flag) and
//! `chapter_copies` (matches per chapter copied off licensed domains), so a read at 10^6
//! matches touches thousands of rows, not millions. Deleting a work removes its counters with
//! it (foreign keys); nothing else deletes matches.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use sqlx::AssertSqlSafe;
use tracing::instrument;

use crate::crawl::{
    TOTALS_BYTES, TOTALS_FAILED, TOTALS_PAGES, frontier_error_kind, frontier_failed,
};
use crate::db::read_pool;
use crate::ids::{SiteId, WorkId};
use crate::{CaseStatus, Result, Store};

/// Matches found on one UTC day (by the fetch time of the snapshot they were found on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayCount {
    /// The day.
    pub day: NaiveDate,
    /// Matches off licensed domains (infringement found).
    pub matches: u64,
    /// Matches on licensed domains (never infringement).
    pub licensed: u64,
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
    /// Cases a reviewer ever confirmed (by the audit log: still counted when later dismissed
    /// or reopened).
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
    /// Matches per UTC day from `since` on, oldest first; days without matches are left out.
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

    /// For every case first seen since `since` that was ever marked removed, the time from
    /// its first seen copy to its first removal, shortest first.
    fn removal_times(
        &self,
        since: Option<DateTime<Utc>>,
    ) -> impl Future<Output = Result<Vec<TimeDelta>>> + Send;

    /// Crawls created since `since`, summed by site, lowest site id first.
    fn crawl_totals(
        &self,
        since: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<SiteCrawlTotals>>> + Send;
}

/// A name (status, action) and how many rows have it.
type Counted = (String, i64);

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
        let rows: Vec<(NaiveDate, i64, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT day, \
                 CAST(SUM(CASE WHEN licensed THEN 0 ELSE matches END) AS BIGINT), \
                 CAST(SUM(CASE WHEN licensed THEN matches ELSE 0 END) AS BIGINT) \
                 FROM detections_daily WHERE day >= $1 GROUP BY day ORDER BY day",
            )
            .bind(since)
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(day, matches, licensed)| DayCount {
                day,
                matches: count(matches),
                licensed: count(licensed),
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
        let (statuses, reached): (Vec<Counted>, Vec<Counted>) = read_pool!(self, |pool| {
            let statuses = sqlx::query_as(
                "SELECT status, COUNT(*) FROM cases WHERE first_seen_at >= $1 GROUP BY status",
            )
            .bind(from(since))
            .fetch_all(pool)
            .await?;
            let reached = sqlx::query_as(
                "SELECT a.action, COUNT(DISTINCT a.target_id) FROM audit_log a \
                     JOIN cases c ON c.id = a.target_id \
                     WHERE a.target_type = 'case' AND a.action IN ('case.confirmed', \
                     'case.notice_sent', 'case.removed', 'case.dismissed') \
                     AND c.first_seen_at >= $1 GROUP BY a.action",
            )
            .bind(from(since))
            .fetch_all(pool)
            .await?;
            (statuses, reached)
        });
        let mut funnel = FunnelCounts::default();
        for (status, n) in statuses {
            let status = CaseStatus::parse(&status)?;
            funnel.found += count(n);
            funnel.by_status.insert(status.as_str(), count(n));
        }
        for (action, n) in reached {
            let slot = match action.strip_prefix("case.").map(CaseStatus::parse) {
                Some(Ok(CaseStatus::Confirmed)) => &mut funnel.confirmed,
                Some(Ok(CaseStatus::NoticeSent)) => &mut funnel.notice_sent,
                Some(Ok(CaseStatus::Removed)) => &mut funnel.removed,
                Some(Ok(CaseStatus::Dismissed)) => &mut funnel.dismissed,
                _ => continue,
            };
            *slot = count(n);
        }
        Ok(funnel)
    }

    #[instrument(skip(self))]
    async fn removal_times(&self, since: Option<DateTime<Utc>>) -> Result<Vec<TimeDelta>> {
        let rows: Vec<(i64, DateTime<Utc>, DateTime<Utc>)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT c.id, c.first_seen_at, a.at FROM audit_log a \
                 JOIN cases c ON c.id = a.target_id \
                 WHERE a.target_type = 'case' AND a.action = 'case.removed' \
                 AND c.first_seen_at >= $1",
            )
            .bind(from(since))
            .fetch_all(pool)
            .await?
        });
        let mut first_removal: HashMap<i64, TimeDelta> = HashMap::new();
        for (case, first_seen, removed) in rows {
            let took = removed - first_seen;
            first_removal
                .entry(case)
                .and_modify(|t| *t = (*t).min(took))
                .or_insert(took);
        }
        let mut times: Vec<TimeDelta> = first_removal.into_values().collect();
        times.sort_unstable();
        Ok(times)
    }

    #[instrument(skip(self))]
    async fn crawl_totals(
        &self,
        since: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Vec<SiteCrawlTotals>> {
        // An ended crawl's totals were written into its row when it ended
        // (`Crawls::set_crawl_status`); only unfinished ones are counted afresh, so a year of
        // crawls reads one row each.
        let crawls_sql = format!(
            "SELECT crawls.site_id, sites.host, crawls.started_at, crawls.finished_at, \
             CASE WHEN crawls.finished_at IS NULL THEN {TOTALS_PAGES} \
                  ELSE CAST(crawls.pages_fetched AS BIGINT) END, \
             CASE WHEN crawls.finished_at IS NULL THEN {TOTALS_FAILED} \
                  ELSE CAST(crawls.pages_failed AS BIGINT) END, \
             CASE WHEN crawls.finished_at IS NULL THEN {TOTALS_BYTES} \
                  ELSE CAST(crawls.bytes AS BIGINT) END \
             FROM crawls JOIN sites ON sites.id = crawls.site_id WHERE crawls.created_at >= $1"
        );
        let errors_sql = format!(
            "SELECT crawls.site_id, e.kind, e.n FROM crawls JOIN ( \
             SELECT crawl_id, {} AS kind, COUNT(*) AS n FROM frontier \
             WHERE crawl_id IN (SELECT id FROM crawls WHERE created_at >= $1) AND {} \
             GROUP BY crawl_id, kind) e ON e.crawl_id = crawls.id",
            frontier_error_kind!(),
            frontier_failed!()
        );
        #[allow(clippy::type_complexity)]
        let (crawls, errors): (
            Vec<(
                SiteId,
                String,
                Option<DateTime<Utc>>,
                Option<DateTime<Utc>>,
                i64,
                i64,
                i64,
            )>,
            Vec<(SiteId, String, i64)>,
        ) = read_pool!(self, |pool| {
            let crawls = sqlx::query_as(AssertSqlSafe(crawls_sql))
                .bind(from(since))
                .fetch_all(pool)
                .await?;
            let errors = sqlx::query_as(AssertSqlSafe(errors_sql))
                .bind(from(since))
                .fetch_all(pool)
                .await?;
            (crawls, errors)
        });
        let mut sites: BTreeMap<SiteId, SiteCrawlTotals> = BTreeMap::new();
        for (site_id, site, started, finished, pages, failed, bytes) in crawls {
            let t = sites.entry(site_id).or_insert_with(|| SiteCrawlTotals {
                site_id,
                site,
                crawls: 0,
                pages: 0,
                errors: 0,
                errors_by_kind: BTreeMap::new(),
                bytes: 0,
                seconds: 0.0,
                pages_timed: 0,
            });
            t.crawls += 1;
            t.pages += count(pages);
            t.errors += count(failed);
            t.bytes += count(bytes);
            if let Some(started) = started {
                let ran = finished.unwrap_or(now) - started;
                t.seconds += (ran.num_milliseconds().max(0) as f64) / 1e3;
                t.pages_timed += count(pages);
            }
        }
        for (site_id, kind, n) in errors {
            if let Some(t) = sites.get_mut(&site_id) {
                *t.errors_by_kind.entry(kind).or_default() += count(n);
            }
        }
        Ok(sites.into_values().collect())
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

/// Applies [`detection_deltas`] for a snapshot fetched at `fetched_at` on a connection of
/// either backend, inside the caller's transaction.
macro_rules! apply_detection_deltas {
    ($conn:expr, $fetched_at:expr, $old:expr, $new:expr) => {{
        let day = $fetched_at.date_naive();
        let (daily, chapters) = $crate::stats::detection_deltas($old, $new);
        for ((work, licensed), n) in daily {
            sqlx::query(
                "INSERT INTO detections_daily (day, work_id, licensed, matches) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (day, work_id, licensed) \
                 DO UPDATE SET matches = detections_daily.matches + excluded.matches",
            )
            .bind(day)
            .bind(work)
            .bind(licensed)
            .bind(n)
            .execute(&mut *$conn)
            .await?;
            if n < 0 {
                sqlx::query(
                    "DELETE FROM detections_daily WHERE day = $1 AND work_id = $2 \
                     AND licensed = $3 AND matches <= 0",
                )
                .bind(day)
                .bind(work)
                .bind(licensed)
                .execute(&mut *$conn)
                .await?;
            }
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
    fn the_same_matches_again_change_nothing() {
        let rows = [(1, 5, false), (2, 5, true)];
        assert_eq!(detection_deltas(&rows, &rows), (vec![], vec![]));
    }
}
