//! `copyhound crawls list|show`: the crawls stored in the database, and everything stored
//! about one of them (what a user looks at right after `copyhound crawl`).

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use serde::Serialize;
use store::{CrawlDetail, CrawlFilter, CrawlId, CrawlRecord, CrawlStatus, Crawls, Store};

use super::outln;

/// `crawls` subcommands.
#[derive(Debug, Subcommand)]
pub enum CrawlsCommand {
    /// List crawls, newest first: status, seeds, times, pages, errors, bytes.
    List(ListArgs),
    /// Show everything stored about one crawl.
    Show(ShowArgs),
}

/// Options of `crawls list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only crawls in this status: queued, running, done, failed or cancelled.
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    status: Option<CrawlStatus>,
    /// At most this many crawls.
    #[arg(long, value_name = "N", default_value_t = 50)]
    limit: u32,
    /// Only crawls older than this one (the last id of the previous listing).
    #[arg(long, value_name = "ID")]
    before: Option<CrawlId>,
    /// Print a JSON array.
    #[arg(long)]
    json: bool,
}

/// Options of `crawls show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The crawl's id (see `crawls list`, or what `copyhound crawl` printed).
    id: CrawlId,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs a `crawls` subcommand against the database at `database`.
pub async fn run(command: CrawlsCommand, database: &str) -> Result<()> {
    let store = super::open_store(database).await?;
    let result = match command {
        CrawlsCommand::List(args) => list(&store, args).await,
        CrawlsCommand::Show(args) => show(&store, args).await,
    };
    store.close().await;
    result
}

fn parse_status(s: &str) -> std::result::Result<CrawlStatus, String> {
    let all = [
        CrawlStatus::Queued,
        CrawlStatus::Running,
        CrawlStatus::Done,
        CrawlStatus::Failed,
        CrawlStatus::Cancelled,
    ];
    all.into_iter()
        .find(|status| status.as_str() == s.trim().to_ascii_lowercase())
        .ok_or_else(|| {
            format!("{s:?} is not a crawl status: give queued, running, done, failed or cancelled")
        })
}

/// A crawl as `crawls list --json` prints it.
#[derive(Debug, Serialize)]
struct ListedCrawl<'a> {
    id: CrawlId,
    status: &'static str,
    seeds: &'a [String],
    created_at: DateTime<Utc>,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    /// Distinct URLs whose text was stored, over all runs.
    pages: u64,
    /// Entries that failed for good or ended with an HTTP status of 400 or more.
    errors: u64,
    bytes: u64,
    max_pages: Option<u64>,
    error: Option<&'a str>,
}

impl<'a> ListedCrawl<'a> {
    fn new(c: &'a CrawlRecord) -> Self {
        ListedCrawl {
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

async fn list(store: &Store, args: ListArgs) -> Result<()> {
    let filter = args.status.map_or(CrawlFilter::All, CrawlFilter::Status);
    let crawls = store
        .crawls(&filter, args.before, args.limit)
        .await
        .context("while listing crawls")?;
    if args.json {
        let listed: Vec<ListedCrawl<'_>> = crawls.iter().map(ListedCrawl::new).collect();
        outln!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    if crawls.is_empty() {
        match args.status {
            Some(status) => outln!("no {} crawls", status.as_str()),
            None => outln!("no crawls yet: start one with `copyhound crawl URL`"),
        }
        return Ok(());
    }
    outln!(
        "{:>5}  {:<9}  {:<16}  {:<8}  {:<8}  {:>6}  {:>6}  {:>9}  SEEDS",
        "ID",
        "STATUS",
        "CREATED",
        "STARTED",
        "FINISHED",
        "PAGES",
        "ERRORS",
        "BYTES"
    );
    for c in &crawls {
        let seeds = match c.seeds.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [first, rest @ ..] => format!("{first} (+{} more)", rest.len()),
        };
        outln!(
            "{:>5}  {:<9}  {:<16}  {:<8}  {:<8}  {:>6}  {:>6}  {:>9}  {seeds}",
            c.id,
            c.status.as_str(),
            c.created_at.format("%Y-%m-%d %H:%M"),
            later_time(c.created_at, c.started_at),
            later_time(c.created_at, c.finished_at),
            c.pages_fetched,
            c.pages_failed,
            size(c.bytes)
        );
    }
    if crawls.len() == args.limit as usize
        && let Some(last) = crawls.last()
    {
        outln!(
            "(the newest {}; older ones with --before {})",
            args.limit,
            last.id
        );
    }
    Ok(())
}

/// A time after `since`: its time of day on the same day, else its date.
fn later_time(since: DateTime<Utc>, at: Option<DateTime<Utc>>) -> String {
    match at {
        None => "-".into(),
        Some(at) if at.date_naive() == since.date_naive() => at.format("%H:%M:%S").to_string(),
        Some(at) => at.format("%m-%d %H:%M").to_string(),
    }
}

/// Bytes for people: B, KB, MB, GB (powers of 1000).
fn size(bytes: u64) -> String {
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
#[derive(Debug, Serialize)]
struct SettingsSummary {
    max_depth: u32,
    /// The delay between two fetches from one host, as in the settings (`1s`, `250ms`).
    delay: String,
    per_host_concurrency: u32,
    max_attempts: u32,
}

fn settings_summary(stored: &str) -> std::result::Result<SettingsSummary, String> {
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
struct ShownCrawl<'a> {
    #[serde(flatten)]
    crawl: ListedCrawl<'a>,
    /// Frontier entries claimed so far: the part of `max_pages` spent.
    pages_claimed: u64,
    /// `null` when the stored settings cannot be read (`settings_error` says why).
    settings: Option<SettingsSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    settings_error: Option<String>,
    runs: Vec<ShownRun>,
    responses: u64,
    new_bodies: u64,
    duplicate_bodies: u64,
    pages_by_kind: &'a BTreeMap<String, u64>,
    errors_by_kind: &'a BTreeMap<String, u64>,
    skipped: &'a BTreeMap<String, u64>,
    frontier: store::FrontierCounts,
    matches: u64,
    matched_works: u64,
    cases: &'a [i64],
}

/// A run as `crawls show --json` prints it.
#[derive(Debug, Serialize)]
struct ShownRun {
    id: store::CrawlRunId,
    started_at: DateTime<Utc>,
    heartbeat_at: DateTime<Utc>,
    ended_at: Option<DateTime<Utc>>,
    alive: bool,
}

async fn show(store: &Store, args: ShowArgs) -> Result<()> {
    let detail = match store.crawl_detail(args.id).await {
        Err(store::Error::NotFound { .. }) => {
            bail!("there is no crawl {}: see `copyhound crawls list`", args.id)
        }
        other => other.context("while reading the crawl")?,
    };
    let settings = settings_summary(&detail.crawl.settings);
    if args.json {
        let (settings, settings_error) = match settings {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e)),
        };
        let shown = ShownCrawl {
            crawl: ListedCrawl::new(&detail.crawl),
            pages_claimed: detail.crawl.pages_claimed,
            settings,
            settings_error,
            runs: detail
                .runs
                .iter()
                .map(|r| ShownRun {
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
        };
        outln!("{}", serde_json::to_string_pretty(&shown)?);
        return Ok(());
    }
    print_detail(&detail, settings)
}

/// `12 (a 7, b 5)`, or just `0`.
fn with_breakdown(total: u64, parts: &BTreeMap<String, u64>) -> String {
    if parts.is_empty() {
        return total.to_string();
    }
    let mut parts: Vec<(&String, &u64)> = parts.iter().collect();
    parts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let parts: Vec<String> = parts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("{total} ({})", parts.join(", "))
}

fn print_detail(
    d: &CrawlDetail,
    settings: std::result::Result<SettingsSummary, String>,
) -> Result<()> {
    let c = &d.crawl;
    let time = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    outln!("crawl {}: {}", c.id, c.status.as_str());
    if let Some(error) = &c.error {
        outln!("error:         {error}");
    }
    for (i, seed) in c.seeds.iter().enumerate() {
        let label = if i == 0 {
            format!("seeds ({}):", c.seeds.len())
        } else {
            String::new()
        };
        outln!("{label:<14} {seed}");
    }
    let budget = c
        .max_pages
        .map_or_else(|| "no page limit".to_owned(), |n| format!("max {n} pages"));
    match settings {
        Ok(s) => outln!(
            "settings:      {budget} ({} claimed), max depth {}, delay {} per host, {} per host at once, {} attempts",
            c.pages_claimed,
            s.max_depth,
            s.delay,
            s.per_host_concurrency,
            s.max_attempts
        ),
        Err(e) => outln!(
            "settings:      {budget} ({} claimed); the rest cannot be read: {e}",
            c.pages_claimed
        ),
    }
    outln!("created:       {}", time(c.created_at));
    if let Some(started) = c.started_at {
        outln!("started:       {}", time(started));
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
        outln!("finished:      {}{took}", time(finished));
    }
    let alive = d.runs.iter().filter(|r| r.alive).count();
    outln!("runs:          {} ({alive} alive)", d.runs.len());
    for r in &d.runs {
        let end = match (r.ended_at, r.alive) {
            (Some(ended), _) => format!("ended {}", time(ended)),
            (None, true) => format!("alive, heartbeat {}", time(r.heartbeat_at)),
            (None, false) => format!("dead, last heartbeat {}", time(r.heartbeat_at)),
        };
        outln!("  run {:<8} started {}, {end}", r.id, time(r.started_at));
    }
    outln!(
        "pages:         {}",
        with_breakdown(c.pages_fetched, &d.pages_by_kind)
    );
    outln!(
        "responses:     {} ({} new bodies, {} already stored)",
        d.responses,
        d.new_bodies,
        d.duplicate_bodies()
    );
    outln!("bytes:         {} ({})", c.bytes, size(c.bytes));
    outln!(
        "errors:        {}",
        with_breakdown(c.pages_failed, &d.errors)
    );
    let skipped: u64 = d.skipped.values().sum();
    outln!("skipped:       {}", with_breakdown(skipped, &d.skipped));
    let f = &d.frontier;
    outln!(
        "frontier:      {} queued, {} claimed, {} finished ({} done, {} failed, {} skipped)",
        f.queued,
        f.claimed,
        f.finished(),
        f.done,
        f.failed,
        f.skipped
    );
    let cases = if d.cases.is_empty() {
        "none".to_owned()
    } else {
        let ids: Vec<String> = d.cases.iter().map(i64::to_string).collect();
        format!("{} ({})", d.cases.len(), ids.join(", "))
    };
    outln!(
        "matches:       {} of {} works; cases: {cases}",
        d.matches,
        d.matched_works
    );
    if c.status == CrawlStatus::Queued && f.queued > 0 {
        outln!("resume with:   copyhound crawl --resume {}", c.id);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_and_bad_ones_are_named() {
        assert_eq!(parse_status("Done"), Ok(CrawlStatus::Done));
        let err = parse_status("finished").unwrap_err();
        assert!(
            err.contains("\"finished\"") && err.contains("cancelled"),
            "{err}"
        );
    }

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
