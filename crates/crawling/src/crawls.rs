//! Stored crawls as people read them: one line each in a listing, and one crawl's sheet
//! (status, seeds, settings, runs, pages, errors, frontier, matches and cases) as text and as
//! JSON, for `copyhound crawls` and any other front end.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use chrono::{DateTime, Utc};
use jobs::{Result, store_err};
use serde::Serialize;
use store::{CrawlDetail, CrawlId, CrawlRecord, CrawlStatus, Crawls, Store};

/// A crawl as `crawls list --json` prints it.
#[derive(Debug, Serialize)]
pub struct CrawlListing<'a> {
    pub id: CrawlId,
    pub status: &'static str,
    pub seeds: &'a [String],
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Distinct URLs whose text was stored, over all runs.
    pub pages: u64,
    /// Entries that failed for good or ended with an HTTP status of 400 or more.
    pub errors: u64,
    pub bytes: u64,
    pub max_pages: Option<u64>,
    pub error: Option<&'a str>,
}

impl<'a> CrawlListing<'a> {
    /// The listing of `c`.
    #[must_use]
    pub fn new(c: &'a CrawlRecord) -> Self {
        CrawlListing {
            id: c.id,
            status: c.status.as_str(),
            seeds: &c.seeds,
            created_at: c.created_at,
            started_at: c.started_at,
            finished_at: c.finished_at,
            pages: c.pages_fetched,
            errors: c.pages_failed,
            bytes: c.bytes,
            max_pages: c.max_pages,
            error: c.error.as_deref(),
        }
    }
}

/// A time after `since`: its time of day on the same day, else its date.
pub fn later_time(since: DateTime<Utc>, at: Option<DateTime<Utc>>) -> String {
    match at {
        None => "-".into(),
        Some(at) if at.date_naive() == since.date_naive() => at.format("%H:%M:%S").to_string(),
        Some(at) => at.format("%m-%d %H:%M").to_string(),
    }
}

/// Bytes for people: B, KB, MB, GB (powers of 1000).
pub fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1000 {
        format!("{bytes} B")
    } else if b < 1e6 {
        format!("{:.1} KB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} GB", b / 1e9)
    }
}

/// The settings of a crawl worth showing, read from the JSON stored with it.
#[derive(Debug, Clone, Serialize)]
pub struct SettingsSummary {
    pub max_depth: u32,
    /// The delay between two fetches from one host, as in the settings (`1s`, `250ms`).
    pub delay: String,
    pub per_host_concurrency: u32,
    pub max_attempts: u32,
}

/// A stored crawl's settings (JSON) summed up; why not, when they cannot be read.
///
/// # Errors
/// The stored settings are not this build's.
pub fn settings_summary(stored: &str) -> std::result::Result<SettingsSummary, String> {
    let s: crawler::CrawlSettings = serde_json::from_str(stored).map_err(|e| e.to_string())?;
    Ok(SettingsSummary {
        max_depth: s.max_depth,
        delay: format!("{:?}", s.politeness.delay),
        per_host_concurrency: s.politeness.per_host_concurrency,
        max_attempts: s.max_attempts,
    })
}

/// A crawl as `crawls show --json` prints it.
#[derive(Debug, Serialize)]
pub struct CrawlShown<'a> {
    #[serde(flatten)]
    pub crawl: CrawlListing<'a>,
    /// Frontier entries claimed so far: the part of `max_pages` spent.
    pub pages_claimed: u64,
    /// `null` when the stored settings cannot be read (`settings_error` says why).
    pub settings: Option<SettingsSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_error: Option<String>,
    pub runs: Vec<CrawlShownRun>,
    pub responses: u64,
    pub new_bodies: u64,
    pub duplicate_bodies: u64,
    pub pages_by_kind: &'a BTreeMap<String, u64>,
    pub errors_by_kind: &'a BTreeMap<String, u64>,
    pub skipped: &'a BTreeMap<String, u64>,
    pub frontier: store::FrontierCounts,
    pub matches: u64,
    pub matched_works: u64,
    pub cases: &'a [i64],
}

/// A run as `crawls show --json` prints it.
#[derive(Debug, Serialize)]
pub struct CrawlShownRun {
    pub id: store::CrawlRunId,
    pub started_at: DateTime<Utc>,
    pub heartbeat_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub alive: bool,
}

/// One crawl's sheet: its detail from the store and its settings summed up.
#[derive(Debug)]
pub struct CrawlSheet {
    /// Everything the store counts of the crawl.
    pub detail: CrawlDetail,
    /// Its settings, or why they cannot be read.
    pub settings: std::result::Result<SettingsSummary, String>,
}

impl CrawlSheet {
    /// Reads crawl `id`'s sheet.
    ///
    /// # Errors
    /// An unknown crawl ([`jobs::Error::is_not_found`]), a database failure.
    pub async fn read(store: &Store, id: CrawlId) -> Result<Self> {
        let detail = store
            .crawl_detail(id)
            .await
            .map_err(store_err("reading the crawl"))?;
        let settings = settings_summary(&detail.crawl.settings);
        Ok(CrawlSheet { detail, settings })
    }

    /// The sheet as `crawls show --json` prints it.
    #[must_use]
    pub fn shown(&self) -> CrawlShown<'_> {
        let detail = &self.detail;
        let (settings, settings_error) = match &self.settings {
            Ok(s) => (Some(s.clone()), None),
            Err(e) => (None, Some(e.clone())),
        };
        CrawlShown {
            crawl: CrawlListing::new(&detail.crawl),
            pages_claimed: detail.crawl.pages_claimed,
            settings,
            settings_error,
            runs: detail
                .runs
                .iter()
                .map(|r| CrawlShownRun {
                    id: r.id,
                    started_at: r.started_at,
                    heartbeat_at: r.heartbeat_at,
                    ended_at: r.ended_at,
                    alive: r.alive,
                })
                .collect(),
            responses: detail.responses,
            new_bodies: detail.new_bodies,
            duplicate_bodies: detail.duplicate_bodies(),
            pages_by_kind: &detail.pages_by_kind,
            errors_by_kind: &detail.errors,
            skipped: &detail.skipped,
            frontier: detail.frontier,
            matches: detail.matches,
            matched_works: detail.matched_works,
            cases: &detail.cases,
        }
    }
}

/// `12 (a 7, b 5)`, or just `0`.
pub fn with_breakdown(total: u64, parts: &BTreeMap<String, u64>) -> String {
    if parts.is_empty() {
        return total.to_string();
    }
    let mut parts: Vec<(&String, &u64)> = parts.iter().collect();
    parts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let parts: Vec<String> = parts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("{total} ({})", parts.join(", "))
}

impl fmt::Display for CrawlSheet {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (d, settings) = (&self.detail, &self.settings);
        let c = &d.crawl;
        let time = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
        writeln!(out, "crawl {}: {}", c.id, c.status.as_str())?;
        if let Some(error) = &c.error {
            writeln!(out, "error:         {error}")?;
        }
        for (i, seed) in c.seeds.iter().enumerate() {
            let label = if i == 0 {
                format!("seeds ({}):", c.seeds.len())
            } else {
                String::new()
            };
            writeln!(out, "{label:<14} {seed}")?;
        }
        let budget = c
            .max_pages
            .map_or_else(|| "no page limit".to_owned(), |n| format!("max {n} pages"));
        match settings {
            Ok(s) => writeln!(
                out,
                "settings:      {budget} ({} claimed), max depth {}, delay {} per host, {} per host at once, {} attempts",
                c.pages_claimed, s.max_depth, s.delay, s.per_host_concurrency, s.max_attempts
            )?,
            Err(e) => writeln!(
                out,
                "settings:      {budget} ({} claimed); the rest cannot be read: {e}",
                c.pages_claimed
            )?,
        }
        writeln!(out, "created:       {}", time(c.created_at))?;
        if let Some(started) = c.started_at {
            writeln!(out, "started:       {}", time(started))?;
        }
        if let Some(finished) = c.finished_at {
            let took = c
                .started_at
                .map(|s| {
                    format!(
                        " (took {:.1} s)",
                        (finished - s).num_milliseconds() as f64 / 1000.0
                    )
                })
                .unwrap_or_default();
            writeln!(out, "finished:      {}{took}", time(finished))?;
        }
        let alive = d.runs.iter().filter(|r| r.alive).count();
        writeln!(out, "runs:          {} ({alive} alive)", d.runs.len())?;
        for r in &d.runs {
            let end = match (r.ended_at, r.alive) {
                (Some(ended), _) => format!("ended {}", time(ended)),
                (None, true) => format!("alive, heartbeat {}", time(r.heartbeat_at)),
                (None, false) => format!("dead, last heartbeat {}", time(r.heartbeat_at)),
            };
            writeln!(
                out,
                "  run {:<8} started {}, {end}",
                r.id,
                time(r.started_at)
            )?;
        }
        writeln!(
            out,
            "pages:         {}",
            with_breakdown(c.pages_fetched, &d.pages_by_kind)
        )?;
        writeln!(
            out,
            "responses:     {} ({} new bodies, {} already stored)",
            d.responses,
            d.new_bodies,
            d.duplicate_bodies()
        )?;
        writeln!(out, "bytes:         {} ({})", c.bytes, size(c.bytes))?;
        writeln!(
            out,
            "errors:        {}",
            with_breakdown(c.pages_failed, &d.errors)
        )?;
        let skipped: u64 = d.skipped.values().sum();
        writeln!(
            out,
            "skipped:       {}",
            with_breakdown(skipped, &d.skipped)
        )?;
        let f = &d.frontier;
        writeln!(
            out,
            "frontier:      {} queued, {} claimed, {} finished ({} done, {} failed, {} skipped)",
            f.queued,
            f.claimed,
            f.finished(),
            f.done,
            f.failed,
            f.skipped
        )?;
        let cases = if d.cases.is_empty() {
            "none".to_owned()
        } else {
            let ids: Vec<String> = d.cases.iter().map(i64::to_string).collect();
            format!("{} ({})", d.cases.len(), ids.join(", "))
        };
        writeln!(
            out,
            "matches:       {} of {} works; cases: {cases}",
            d.matches, d.matched_works
        )?;
        if c.status == CrawlStatus::Queued && f.queued > 0 {
            writeln!(out, "resume with:   copyhound crawl --resume {}", c.id)?;
        }
        Ok(())
    }
}

/// Crawls as a table, one line each, newest first; a note on how to see older ones when the
/// listing was cut at `limit`.
#[must_use]
pub fn crawl_table(crawls: &[CrawlRecord], limit: u32) -> String {
    let mut out = String::new();
    write_table(&mut out, crawls, limit).expect("writing to a String cannot fail");
    out
}

fn write_table(out: &mut String, crawls: &[CrawlRecord], limit: u32) -> fmt::Result {
    writeln!(
        out,
        "{:>5}  {:<9}  {:<16}  {:<8}  {:<8}  {:>6}  {:>6}  {:>9}  SEEDS",
        "ID", "STATUS", "CREATED", "STARTED", "FINISHED", "PAGES", "ERRORS", "BYTES"
    )?;
    for c in crawls {
        let seeds = match c.seeds.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [first, rest @ ..] => format!("{first} (+{} more)", rest.len()),
        };
        writeln!(
            out,
            "{:>5}  {:<9}  {:<16}  {:<8}  {:<8}  {:>6}  {:>6}  {:>9}  {seeds}",
            c.id,
            c.status.as_str(),
            c.created_at.format("%Y-%m-%d %H:%M"),
            later_time(c.created_at, c.started_at),
            later_time(c.created_at, c.finished_at),
            c.pages_fetched,
            c.pages_failed,
            size(c.bytes)
        )?;
    }
    if crawls.len() == limit as usize
        && let Some(last) = crawls.last()
    {
        writeln!(
            out,
            "(the newest {}; older ones with --before {})",
            limit, last.id
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_breakdowns_read_well() {
        assert_eq!(size(999), "999 B");
        assert_eq!(size(12_345), "12.3 KB");
        assert_eq!(size(5_000_000_017), "5.0 GB");
        let parts: BTreeMap<String, u64> = [("timeout".into(), 1), ("http_404".into(), 2)].into();
        assert_eq!(with_breakdown(3, &parts), "3 (http_404 2, timeout 1)");
        assert_eq!(with_breakdown(0, &BTreeMap::new()), "0");
    }
}
