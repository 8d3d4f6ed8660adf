//! `copyhound crawl URL...`: crawl sites now (or queue the crawl for the workers), with the
//! frontier, per-host politeness and evidence in the database, so a stopped crawl resumes with
//! `--resume CRAWL_ID` and `copyhound worker`s on several machines can share it.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use crawler::safety::AddressPolicy;
use crawler::{CrawlReport, CrawlSettings, Frontier, StoreCrawl};
use indicatif::{ProgressBar, ProgressFinish, ProgressStyle};
use pipeline::{CrawlFinish, CrawlRunner, Job, MatchDrain, MatchWorkers};
use serde::Serialize;
use store::{CrawlId, CrawlStatus, Crawls, JobQueue, Store};
use url::Url;

use super::outln;
use crate::settings::Settings;

/// Options of `crawl`.
#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// Seed URLs (http or https); the crawl stays on their sites.
    #[arg(value_name = "URL", required_unless_present = "resume")]
    urls: Vec<String>,
    /// Continue a stopped crawl (its seeds and settings are stored with it).
    #[arg(long, value_name = "CRAWL_ID", conflicts_with = "urls")]
    resume: Option<i64>,
    /// Pages fetched at most (the crawl's budget; with --resume, the new budget in all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_pages: Option<u64>,
    /// Link hops followed from a seed at most.
    #[arg(long, value_name = "D")]
    max_depth: Option<u32>,
    /// Allow loopback, private and link-local addresses (a local test site); refused otherwise.
    #[arg(long)]
    allow_private: bool,
    /// Queue the crawl for `copyhound worker` instead of running it now.
    #[arg(long)]
    enqueue: bool,
    /// With --enqueue: how many workers may crawl it together.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        requires = "enqueue",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    runners: u32,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

/// The summary `crawl --json` prints.
#[derive(Debug, Serialize)]
struct Summary {
    crawl_id: i64,
    /// `done`, or `queued` when stopped before the end (resume it).
    status: &'static str,
    /// Pages analysed by this command (the crawl's pages with text, and any other page
    /// waiting in the match queue).
    matched: u64,
    /// Match jobs left queued (for `copyhound worker`).
    match_jobs_left: u64,
    pages: u64,
    responses: u64,
    bytes: u64,
    new_bodies: u64,
    duplicate_bodies: u64,
    errors: BTreeMap<String, u64>,
    skipped: BTreeMap<String, u64>,
    retries: u64,
    /// Frontier entries left (queued) and finished, over all runs of the crawl.
    queued: u64,
    finished: u64,
    seconds: f64,
    /// The crawl's totals over all its runs, counted from what is stored.
    total: Totals,
}

/// A crawl's totals over all its runs (`crawls` row).
#[derive(Debug, Serialize)]
struct Totals {
    pages: u64,
    errors: u64,
    bytes: u64,
}

impl Summary {
    fn new(id: CrawlId, finish: &CrawlFinish, drain: &MatchDrain) -> Self {
        let (r, totals) = (&finish.report, &finish.totals);
        Self {
            crawl_id: id.0,
            status: finish.status.as_str(),
            matched: drain.matched,
            match_jobs_left: drain.left,
            pages: r.pages,
            responses: r.responses,
            bytes: r.bytes,
            new_bodies: r.new_bodies,
            duplicate_bodies: r.duplicate_bodies,
            errors: r.errors.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            skipped: r
                .skipped
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), *v))
                .collect(),
            retries: r.retries,
            queued: r.frontier.queued,
            finished: r.frontier.finished,
            seconds: r.elapsed.as_secs_f64(),
            total: Totals {
                pages: totals.pages_fetched,
                errors: totals.pages_failed,
                bytes: totals.bytes,
            },
        }
    }
}

/// Runs `crawl` against the database at `database`.
pub async fn run(args: CrawlArgs, database: &str, settings: &Settings) -> Result<()> {
    let store = super::open_store(database).await?;
    let result = crawl(&store, args, settings).await;
    store.close().await;
    result
}

async fn crawl(store: &Store, args: CrawlArgs, settings: &Settings) -> Result<()> {
    let (id, crawl_settings) = match args.resume {
        Some(id) => {
            let id = CrawlId(id);
            let row = store.crawl(id).await.with_context(|| {
                format!("while looking up crawl {id} (the id `copyhound crawl` printed)")
            })?;
            let mut stored: CrawlSettings = serde_json::from_str(&row.settings)
                .with_context(|| format!("while reading the settings stored with crawl {id}"))?;
            apply_flags(&mut stored, &args);
            check_crawl(&stored, &parse_seeds(&row.seeds)?).with_context(|| {
                format!("crawl {id} cannot run with the settings stored with it")
            })?;
            if args.max_pages.is_some() {
                store.set_crawl_budget(id, args.max_pages).await?;
            }
            note_held_urls(store, id).await?;
            (id, stored)
        }
        None => {
            let mut s = settings.crawler.clone();
            apply_flags(&mut s, &args);
            let seeds = parse_seeds(&args.urls)?;
            // Before anything is stored: bad settings must not leave a crawl row behind.
            check_crawl(&s, &seeds).context("while checking the crawl settings")?;
            check_addresses(&seeds, &s).await?;
            let id = StoreCrawl::create(store, &s, &seeds)
                .await
                .context("while creating the crawl")?;
            (id, s)
        }
    };
    if args.enqueue {
        for runner in 0..args.runners {
            let job = Job::crawl_runner(id, runner)?;
            store
                .enqueue(&job)
                .await
                .context("while queueing the crawl")?;
        }
        if args.json {
            outln!(
                "{}",
                serde_json::json!({"crawl_id": id.0, "status": "queued"})
            );
        } else {
            outln!(
                "crawl {id} queued for {} worker(s); run `copyhound worker` to crawl it",
                args.runners
            );
        }
        return Ok(());
    }
    run_now(store, id, crawl_settings, settings, args.json).await
}

/// Tells the operator about URLs of a resumed crawl that other runs hold: those of dead runs
/// come back at once, those of live runs stay with them.
async fn note_held_urls(store: &Store, id: CrawlId) -> Result<()> {
    let held = crawler::held_urls(store, id).await?;
    if held.by_dead_runs > 0 {
        eprintln!(
            "note: {} urls of crawl {id} held by runs that died are crawled again",
            held.by_dead_runs
        );
    }
    if held.by_live_runs > 0 {
        eprintln!(
            "note: {} urls of crawl {id} are held by {} other run(s) that were alive \
             moments ago; if they were killed, their urls come back within {} s \
             (crawler.run_dead_after)",
            held.by_live_runs,
            held.live_runs,
            held.longest_wait.as_secs_f64().ceil()
        );
    }
    Ok(())
}

/// Command-line flags over the configured (or stored) settings.
fn apply_flags(s: &mut CrawlSettings, args: &CrawlArgs) {
    if let Some(n) = args.max_pages {
        s.max_pages = Some(n);
    }
    if let Some(d) = args.max_depth {
        s.max_depth = d;
    }
    if args.allow_private {
        s.fetch.safety.allow_private = true;
    }
}

/// The crawl's settings after the flags, checked (once, with everything a crawl of `seeds`
/// builds from them) before anything is stored or queued; a value out of range is named by
/// its full key.
fn check_crawl(s: &CrawlSettings, seeds: &[Url]) -> Result<()> {
    match s.check(seeds) {
        Err(crawler::Error::OutOfRange(e)) => Err(anyhow::anyhow!("{}", e.in_section("crawler"))),
        other => Ok(other?),
    }
}

fn parse_seeds(urls: &[String]) -> Result<Vec<Url>> {
    urls.iter()
        .map(|u| {
            let url = Url::parse(u).with_context(|| {
                format!("invalid url {u:?}: give absolute http(s) urls, e.g. https://example.com/book/1/")
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                bail!("invalid url {u:?}: only http and https urls are crawled");
            }
            Ok(url)
        })
        .collect()
}

/// Refuses seeds on addresses the safety settings do not allow before anything is stored, so
/// the operator hears why at once rather than finding a crawl of zero pages.
async fn check_addresses(seeds: &[Url], settings: &CrawlSettings) -> Result<()> {
    let policy = AddressPolicy::new(&settings.fetch.safety);
    for seed in seeds {
        let Some(host) = seed.host_str() else {
            bail!("invalid url {seed}: it has no host");
        };
        let port = seed.port_or_known_default().unwrap_or(80);
        let addrs = tokio::net::lookup_host((host.trim_matches(['[', ']']), port))
            .await
            .with_context(|| format!("while resolving {host} (seed {seed})"))?;
        for addr in addrs {
            policy.check(host, addr.ip())?;
        }
    }
    Ok(())
}

/// How long `crawl` waits for match jobs that make no progress (another process's, or ones
/// failing and waiting to be retried) before it leaves them to `copyhound worker`.
const MATCH_IDLE: Duration = Duration::from_secs(30);

pub(crate) async fn run_now(
    store: &Store,
    id: CrawlId,
    crawl_settings: CrawlSettings,
    settings: &Settings,
    json: bool,
) -> Result<()> {
    // Listening before the message below invites Ctrl-C: a signal then stops the crawl
    // cleanly (and exits 130) instead of killing it.
    let signal = super::worker::shutdown_signal_quiet();
    let runner = CrawlRunner::open(store, id, Some(crawl_settings))
        .await
        .with_context(|| format!("while setting up crawl {id}"))?;
    // The pages are analysed as they are stored, here (and by any worker serving the match
    // queue): the command ends with every page it fetched matched.
    let handler = super::worker::handler(store, settings)?;
    let matching = MatchWorkers::start(store, handler, MatchWorkers::default_concurrency());
    if !json {
        eprintln!(
            "crawl {id} running (Ctrl-C stops it; resume with `copyhound crawl --resume {id}`)"
        );
    }
    let progress = tokio::spawn(show_progress(runner.crawl().clone()));
    let stop = async move {
        signal.await;
        eprintln!("stopping: finishing the pages in flight");
    };
    let result = runner.run(stop, true).await;
    progress.abort();
    let finish = result.with_context(|| format!("crawl {id} failed"));
    if !json && finish.is_ok() {
        eprintln!("matching the pages stored…");
    }
    let drain = matching
        .finish(MATCH_IDLE)
        .await
        .context("while matching the crawled pages")?;
    let finish = finish?;
    let summary = Summary::new(id, &finish, &drain);
    if json {
        outln!("{}", serde_json::to_string(&summary)?);
    } else {
        let totals = &finish.totals;
        outln!("crawl {id}: {}", finish.status.as_str());
        outln!("{}", finish.report);
        outln!(
            "crawl {id} over all runs: {} pages, {:.1} MB, {} errors",
            totals.pages_fetched,
            totals.bytes as f64 / 1e6,
            totals.pages_failed
        );
        outln!(
            "pages matched: {}{}",
            drain.matched,
            if drain.left > 0 {
                format!(" ({} left queued for `copyhound worker`)", drain.left)
            } else {
                String::new()
            }
        );
        if finish.status == CrawlStatus::Queued {
            outln!("resume with: copyhound crawl --resume {id}");
        }
    }
    Ok(())
}

/// A progress bar on a terminal, a plain line every 10 s otherwise (logs, CI).
async fn show_progress<F, S, H>(crawl: crawler::Crawl<F, S, H>)
where
    F: Frontier + 'static,
    S: crawler::SnapshotSink + 'static,
    H: crawler::HostStateStore + 'static,
{
    let line = |r: &CrawlReport, queued: u64| {
        format!(
            "{} pages, {:.1} MB, {} errors, {} queued",
            r.pages,
            r.bytes as f64 / 1e6,
            r.error_count(),
            queued
        )
    };
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new_spinner().with_finish(ProgressFinish::AndClear);
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        loop {
            let queued = crawl.frontier().progress().await.map_or(0, |p| p.queued);
            bar.set_message(line(&crawl.progress(), queued));
            bar.tick();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    } else {
        loop {
            tokio::time::sleep(Duration::from_secs(10)).await;
            let queued = crawl.frontier().progress().await.map_or(0, |p| p.queued);
            eprintln!("{}", line(&crawl.progress(), queued));
        }
    }
}
