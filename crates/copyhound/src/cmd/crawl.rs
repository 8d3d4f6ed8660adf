//! `copyhound crawl URL...`: crawl sites now (or queue the crawl for the workers), with the
//! frontier, per-host politeness and evidence in the database, so a stopped crawl resumes with
//! `--resume CRAWL_ID` and `copyhound worker`s on several machines can share it.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use crawler::{CrawlReport, CrawlSettings, Frontier};
use indicatif::{ProgressBar, ProgressFinish, ProgressStyle};
use pipeline::{CrawlOverrides, CrawlSummary, LocalCrawl, launch};
use store::{CrawlId, Store};

use super::outln;
use settings::Settings;

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
    /// Render every page in a headless Chromium (packages chromium and chromium-driver):
    /// text built by the page's scripts or ordered by its CSS, and a screenshot of each.
    #[arg(long)]
    render: bool,
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

/// Runs `crawl`.
pub async fn run(store: &Store, args: CrawlArgs, settings: &Settings) -> Result<()> {
    let overrides = CrawlOverrides {
        max_pages: args.max_pages,
        max_depth: args.max_depth,
        allow_private: args.allow_private,
        render: args.render,
    };
    let (id, crawl_settings) = match args.resume {
        Some(id) => {
            let id = CrawlId(id);
            let (stored, held) = launch::resume_crawl(store, id, &overrides).await?;
            for note in launch::held_urls_notes(id, &held) {
                eprintln!("{note}");
            }
            (id, stored)
        }
        None => launch::new_crawl(store, &settings.crawler, &args.urls, &overrides).await?,
    };
    if args.enqueue {
        crawling::queue_crawl(store, id, args.runners).await?;
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
    // The pages are analysed as they are stored, here (and by any worker serving the match
    // queue): the command ends with every page it fetched matched.
    let local = LocalCrawl::open(store, id, crawl_settings, settings.handler(store)?)
        .await
        .with_context(|| format!("while setting up crawl {id}"))?;
    if !json {
        eprintln!(
            "crawl {id} running (Ctrl-C stops it; resume with `copyhound crawl --resume {id}`)"
        );
    }
    let progress = tokio::spawn(show_progress(local.crawl().clone()));
    let stop = async move {
        signal.await;
        eprintln!("stopping: finishing the pages in flight");
    };
    let (finish, drain) = local
        .run(stop, |finish| {
            progress.abort();
            if !json && finish.is_ok() {
                eprintln!("matching the pages stored…");
            }
        })
        .await
        .context("while matching the crawled pages")?;
    let finish = finish.with_context(|| format!("crawl {id} failed"))?;
    if json {
        let summary = CrawlSummary::new(id, &finish, &drain);
        outln!("{}", serde_json::to_string(&summary)?);
    } else {
        super::write_stdout(&launch::finished_text(id, &finish, &drain))?;
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
