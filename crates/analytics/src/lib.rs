//! copyhound's analytics: the figures a rights team reads, computed from the store without
//! writing anything — new copies and matches per day as a chart series, the sites copying most, each
//! work's exposure, the takedown funnel with the median time from first seen to removal,
//! licensed matches apart (never counted as infringement), and crawl health per site.
//!
//! It sits above `store` (it reads through [`store::StatsReads`] only) beside `pipeline`;
//! `copyhound stats` prints its figures and the admin UI renders the same structs, which
//! serialise with serde.
//!
//! - [`stats`] computes every figure into one [`Stats`]; [`detections`], [`top_sites`],
//!   [`exposure`], [`funnel`], [`licensed`] and [`crawl_health`] compute one each.
//! - `Stats`' `Display` ([`text`]) writes every figure as plain text, as `copyhound stats`
//!   prints them.
//! - [`Window`] says which time the time-based figures cover (`--since DATE`) and what
//!   "today" is, so tests and the UI get the same numbers for the same clock.
//!
//! A copy is a (page, chapter) pair off licensed domains, counted on the day it was first
//! matched: a re-crawl of the same pages adds matches but no copies. Nothing here counts
//! `matches` on a read: the store keeps daily counters beside each recording (`copies_daily`
//! and `detections_daily`, written by `record_matches`), so each figure reads thousands of rows
//! at 10^6 matches. `benches/stats.rs` times each figure at 10^5 cases and 10^6 matches on
//! both backends.
//!
//! ```no_run
//! # async fn demo(store: &store::Store) -> analytics::Result<()> {
//! use chrono::{NaiveDate, Utc};
//!
//! let since = NaiveDate::from_ymd_opt(2026, 11, 1);
//! let figures = analytics::stats(store, &analytics::Window::new(since, Utc::now())?, 10).await?;
//! for day in &figures.detections.days {
//!     println!("{} {} ({} licensed)", day.day, day.matches, day.licensed);
//! }
//! # Ok(()) }
//! ```

pub mod text;

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde::Serialize;
use store::{SiteId, StatsReads, WorkId};

/// The longest detections chart, in days (ten years): a `--since` further back is refused
/// rather than answered with millions of zero days.
pub const MAX_DAYS: i64 = 3660;

/// What went wrong computing figures.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The window asked for cannot be charted.
    #[error("since {since} is {problem}: give a date from {earliest} to {today}")]
    InvalidSince {
        /// The date given.
        since: NaiveDate,
        /// What is wrong with it.
        problem: &'static str,
        /// The earliest date accepted.
        earliest: NaiveDate,
        /// Today.
        today: NaiveDate,
    },
    /// The store could not be read.
    #[error("while reading {what}: {source}")]
    Store {
        /// Which figure was being read.
        what: &'static str,
        /// The store's error.
        #[source]
        source: store::Error,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

fn reading(what: &'static str) -> impl FnOnce(store::Error) -> Error {
    move |source| Error::Store { what, source }
}

/// The time the time-based figures cover: from the start of `since` (UTC) to `now`, or all
/// time without `since`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Window {
    /// The first day covered, if bounded.
    pub since: Option<NaiveDate>,
    /// When the figures are computed.
    pub now: DateTime<Utc>,
}

impl Window {
    /// The window from `since` to `now`.
    ///
    /// # Errors
    /// [`Error::InvalidSince`] for a `since` after today or more than [`MAX_DAYS`] back.
    pub fn new(since: Option<NaiveDate>, now: DateTime<Utc>) -> Result<Window> {
        let today = now.date_naive();
        let earliest = today - TimeDelta::days(MAX_DAYS - 1);
        if let Some(since) = since {
            let problem = if since > today {
                Some("in the future")
            } else if since < earliest {
                Some("too far back to chart day by day")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(Error::InvalidSince {
                    since,
                    problem,
                    earliest,
                    today,
                });
            }
        }
        Ok(Window { since, now })
    }

    /// The start of `since` as a time.
    fn start(&self) -> Option<DateTime<Utc>> {
        self.since
            .map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc())
    }
}

/// Every figure, as `copyhound stats` prints it and the admin UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// The time covered by the time-based figures.
    pub window: Window,
    /// Matches per day.
    pub detections: Detections,
    /// The sites copying the most chapters.
    pub top_sites: Vec<TopSite>,
    /// The works copied the most, as they stand now.
    pub exposure: Vec<WorkExposure>,
    /// How far review took the cases found.
    pub funnel: Funnel,
    /// Matches on licensed domains, reported apart.
    pub licensed: Licensed,
    /// Crawls per site.
    pub crawl_health: Vec<CrawlHealth>,
}

/// Every figure for `window`, lists cut to `top` rows.
///
/// # Errors
/// [`Error::Store`] naming the figure that could not be read.
pub async fn stats(store: &impl StatsReads, window: &Window, top: u32) -> Result<Stats> {
    let detections = detections(store, window).await?;
    let (exposure, licensed_by_work) = split_exposure(exposure_rows(store, top).await?);
    Ok(Stats {
        window: *window,
        top_sites: top_sites(store, window, top).await?,
        funnel: funnel(store, window).await?,
        licensed: Licensed {
            matches: detections.licensed_total,
            by_work: licensed_by_work,
        },
        crawl_health: crawl_health(store, window).await?,
        detections,
        exposure,
    })
}

/// One day of the detections chart: matches counted per snapshot (each re-fetch of a page
/// counts again), and the new copies among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DayPoint {
    /// The UTC day the copies were fetched.
    pub day: NaiveDate,
    /// Matches off licensed domains.
    pub matches: u64,
    /// Matches on licensed domains.
    pub licensed: u64,
    /// New copies off licensed domains: (page, chapter) pairs first matched this day. A
    /// re-crawl of the same pages adds matches, not copies.
    pub copies: u64,
}

/// Matches per day, every day of the window present (zero when nothing was found).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detections {
    /// One point per day, oldest first: from `since` (or the first detection) to today (or
    /// the last detection, if later).
    pub days: Vec<DayPoint>,
    /// Matches off licensed domains over the window.
    pub total: u64,
    /// Matches on licensed domains over the window.
    pub licensed_total: u64,
    /// New copies off licensed domains over the window.
    pub copies_total: u64,
}

/// The detections chart over `window`.
///
/// # Errors
/// [`Error::Store`].
pub async fn detections(store: &impl StatsReads, window: &Window) -> Result<Detections> {
    let today = window.now.date_naive();
    // Without a since the chart starts at the first detection, at most MAX_DAYS back.
    let floor = window
        .since
        .unwrap_or(today - TimeDelta::days(MAX_DAYS - 1));
    let counts = store
        .detections_by_day(Some(floor))
        .await
        .map_err(reading("detections per day"))?;
    let first = window
        .since
        .or_else(|| counts.first().map(|c| c.day))
        .unwrap_or(today);
    let last = counts.last().map_or(today, |c| c.day.max(today));
    let mut by_day = counts.iter().map(|c| (c.day, c)).peekable();
    let mut days = Vec::new();
    for day in first.iter_days().take_while(|d| *d <= last) {
        let point = match by_day.next_if(|(d, _)| *d == day) {
            Some((_, c)) => DayPoint {
                day,
                matches: c.matches,
                licensed: c.licensed,
                copies: c.copies,
            },
            None => DayPoint {
                day,
                matches: 0,
                licensed: 0,
                copies: 0,
            },
        };
        days.push(point);
    }
    Ok(Detections {
        total: days.iter().map(|d| d.matches).sum(),
        licensed_total: days.iter().map(|d| d.licensed).sum(),
        copies_total: days.iter().map(|d| d.copies).sum(),
        days,
    })
}

/// A site among those copying the most.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopSite {
    /// The site.
    pub site_id: SiteId,
    /// Its host.
    pub site: String,
    /// Chapters it copies, over its cases.
    pub chapters: u64,
    /// Works it copies.
    pub works: u64,
    /// Its pages with copies.
    pub pages: u64,
}

/// The `limit` sites copying the most chapters in cases seen in the window (dismissed cases
/// left out).
///
/// # Errors
/// [`Error::Store`].
pub async fn top_sites(
    store: &impl StatsReads,
    window: &Window,
    limit: u32,
) -> Result<Vec<TopSite>> {
    let sites = store
        .top_sites(window.start(), limit)
        .await
        .map_err(reading("top sites"))?;
    Ok(sites
        .into_iter()
        .map(|s| TopSite {
            site_id: s.site_id,
            site: s.site,
            chapters: s.chapters,
            works: s.works,
            pages: s.pages,
        })
        .collect())
}

/// How exposed a work is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkExposure {
    /// The work.
    pub work_id: WorkId,
    /// Its title.
    pub title: String,
    /// Sites copying it.
    pub sites: u64,
    /// Pages copying it.
    pub pages: u64,
    /// Chapters it has.
    pub chapters: u64,
    /// Distinct chapters copied somewhere.
    pub chapters_copied: u64,
    /// `chapters_copied / chapters`, 0..1 (0 for a work without chapters).
    pub share_copied: f64,
}

/// The `limit` works with the most chapters copied, as they stand now (all time: exposure is
/// a state, not a rate). Licensed matches are not copies.
///
/// # Errors
/// [`Error::Store`].
pub async fn exposure(store: &impl StatsReads, limit: u32) -> Result<Vec<WorkExposure>> {
    Ok(split_exposure(exposure_rows(store, limit).await?).0)
}

async fn exposure_rows(store: &impl StatsReads, limit: u32) -> Result<Vec<store::WorkCopies>> {
    store
        .work_exposure(limit)
        .await
        .map_err(reading("exposure per work"))
}

/// The works with copies, and those with licensed matches.
fn split_exposure(rows: Vec<store::WorkCopies>) -> (Vec<WorkExposure>, Vec<LicensedWork>) {
    let licensed = rows
        .iter()
        .filter(|w| w.licensed_matches > 0)
        .map(|w| LicensedWork {
            work_id: w.work_id,
            title: w.title.clone(),
            matches: w.licensed_matches,
        })
        .collect();
    let copied = rows
        .into_iter()
        .filter(|w| w.sites > 0 || w.chapters_copied > 0)
        .map(|w| WorkExposure {
            share_copied: share(w.chapters_copied, w.chapters),
            work_id: w.work_id,
            title: w.title,
            sites: w.sites,
            pages: w.pages,
            chapters: w.chapters,
            chapters_copied: w.chapters_copied,
        })
        .collect();
    (copied, licensed)
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Cases found in the window and how far review took them: found → confirmed → notice sent
/// → removed, each step counting the cases that ever reached it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Funnel {
    /// Cases first seen in the window.
    pub found: u64,
    /// Of those, ever confirmed by a reviewer.
    pub confirmed: u64,
    /// Ever sent a takedown notice.
    pub notice_sent: u64,
    /// Ever marked removed.
    pub removed: u64,
    /// Ever dismissed (not infringing).
    pub dismissed: u64,
    /// Cases by the status they have now.
    pub by_status: BTreeMap<&'static str, u64>,
    /// Median time from the first copy seen to the first removal, in seconds, over the
    /// removed cases (the mean of the two middle ones for an even count; `None` when none
    /// was removed).
    pub median_seconds_to_removal: Option<i64>,
    /// How many removals that median is over.
    pub removals: u64,
}

/// The takedown funnel of the cases first seen in the window.
///
/// # Errors
/// [`Error::Store`].
pub async fn funnel(store: &impl StatsReads, window: &Window) -> Result<Funnel> {
    let counts = store
        .case_funnel(window.start())
        .await
        .map_err(reading("the takedown funnel"))?;
    let removals = store
        .removal_times(window.start())
        .await
        .map_err(reading("times to removal"))?;
    Ok(Funnel {
        found: counts.found,
        confirmed: counts.confirmed,
        notice_sent: counts.notice_sent,
        removed: counts.removed,
        dismissed: counts.dismissed,
        by_status: counts.by_status,
        median_seconds_to_removal: removals.median.map(|t| t.num_seconds()),
        removals: removals.removed,
    })
}

/// Matches on licensed domains: allowed copies, reported apart and never counted as
/// infringement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Licensed {
    /// Licensed matches in the window.
    pub matches: u64,
    /// Licensed matches per work (all time), of the works the exposure read returned.
    pub by_work: Vec<LicensedWork>,
}

/// A work's licensed matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LicensedWork {
    /// The work.
    pub work_id: WorkId,
    /// Its title.
    pub title: String,
    /// Its matches on licensed domains.
    pub matches: u64,
}

/// Licensed matches in the window and per work.
///
/// # Errors
/// [`Error::Store`].
pub async fn licensed(store: &impl StatsReads, window: &Window, limit: u32) -> Result<Licensed> {
    let detections = detections(store, window).await?;
    let (_, by_work) = split_exposure(exposure_rows(store, limit).await?);
    Ok(Licensed {
        matches: detections.licensed_total,
        by_work,
    })
}

/// A site's crawls in the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrawlHealth {
    /// The site.
    pub site_id: SiteId,
    /// Its host.
    pub site: String,
    /// Crawls created in the window.
    pub crawls: u64,
    /// Pages whose text was stored.
    pub pages: u64,
    /// Entries that failed for good or ended with an HTTP error status.
    pub errors: u64,
    /// `errors / (pages + errors)`, 0..1.
    pub error_rate: f64,
    /// The failures by kind (`timeout`, `http_404`, ...).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Body bytes fetched.
    pub bytes: u64,
    /// Pages per second over the time the crawls ran (`None` before any started).
    pub pages_per_second: Option<f64>,
}

/// Crawl health per site over the crawls created in the window, lowest site id first.
///
/// # Errors
/// [`Error::Store`].
pub async fn crawl_health(store: &impl StatsReads, window: &Window) -> Result<Vec<CrawlHealth>> {
    let totals = store
        .crawl_totals(window.start(), window.now)
        .await
        .map_err(reading("crawl health"))?;
    Ok(totals
        .into_iter()
        .map(|t| CrawlHealth {
            error_rate: share(t.errors, t.pages + t.errors),
            pages_per_second: (t.seconds > 0.0).then(|| t.pages_timed as f64 / t.seconds),
            site_id: t.site_id,
            site: t.site,
            crawls: t.crawls,
            pages: t.pages,
            errors: t.errors,
            errors_by_kind: t.errors_by_kind,
            bytes: t.bytes,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_since_in_the_future_or_too_far_back_is_refused_naming_the_range() {
        let now = DateTime::parse_from_rfc3339("2026-11-25T10:00:00Z")
            .unwrap()
            .to_utc();
        let day = |s: &str| s.parse::<NaiveDate>().unwrap();
        assert!(Window::new(Some(day("2026-11-25")), now).is_ok());
        assert!(Window::new(None, now).is_ok());
        let err = Window::new(Some(day("2026-11-26")), now)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("2026-11-26") && err.contains("future") && err.contains("2026-11-25"),
            "{err}"
        );
        let err = Window::new(Some(day("1900-01-01")), now)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("1900-01-01") && err.contains("too far back"),
            "{err}"
        );
    }
}
