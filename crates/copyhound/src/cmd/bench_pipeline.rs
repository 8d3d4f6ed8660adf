//! `copyhound bench pipeline`: the whole pipeline timed and scored over HTTP. The pirate
//! pages of `bench quality` (every evasion in four layouts and six encodings, and the
//! negatives) are served by a local site on 127.0.0.1, the corpus is registered in a fresh
//! store (SQLite by default, or an empty Postgres database), and the site is crawled with no
//! politeness delay while the match queue is served in the same process — fetch, store,
//! decode, extract, match, record — until every page is matched. Pages per second are counted
//! from the crawl's start to the last match; recall and precision from the matches stored.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use matcher::ChapterId;
use matcher::quality::{Corpus, pirate_pages};
use pipeline::demo::{PageKind, SitePage, SiteServer, index_page};
use pipeline::{CrawlRunner, MatchWorkers};
use serde::Serialize;
use store::{EvidenceReads, MatchReads, Page, Store, StoreSettings, WorkFilter, WorkReads};

use super::{outln, write_stdout};
use settings::Settings;

/// Options of `bench pipeline`.
#[derive(Debug, Args)]
pub struct PipelineArgs {
    /// Novels, as for `bench quality` (default: the sample compiled in).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Pages per case.
    #[arg(long, default_value_t = 50)]
    pages: usize,
    /// Seed of the page generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Novels are cut into chapters of about this many bytes.
    #[arg(long, default_value_t = 12_000)]
    chapter_bytes: usize,
    /// The store: an empty database (`postgres://…` or `sqlite://…`); default: a fresh SQLite
    /// file in a temporary directory. A database that holds works is refused.
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Fetches at once (the crawl's global concurrency; one host, no delay).
    #[arg(long, default_value_t = 16, value_parser = super::parse_count)]
    fetches: usize,
    /// Match jobs at once; default: twice the number of cores.
    #[arg(long, value_parser = super::parse_count)]
    matchers: Option<usize>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// The JSON output.
#[derive(Debug, Serialize)]
struct Figures {
    backend: &'static str,
    pages: usize,
    pages_crawled: u64,
    pages_matched: u64,
    seconds: f64,
    pages_per_second: f64,
    recall: f64,
    precision: f64,
    right_chapter: f64,
    missed_targets: Vec<String>,
}

/// Runs the benchmark.
pub async fn run(args: PipelineArgs, settings: &Settings) -> Result<()> {
    let corpus = match &args.corpus {
        Some(dir) => Corpus::load(dir, args.chapter_bytes)
            .with_context(|| format!("while reading the corpus {}", dir.display()))?,
        None => super::quality::sample_corpus(args.chapter_bytes),
    };
    let temp = tempfile::tempdir().context("while making a temporary directory")?;
    let database = match &args.store {
        Some(url) => url.clone(),
        None => format!("sqlite://{}", temp.path().join("pipeline.db").display()),
    };
    let store = Store::open(&database, &StoreSettings::default())
        .await
        .with_context(|| format!("while opening {}", super::masked(&database)))?;
    let result = bench(&args, settings, &corpus, &store, temp.path()).await;
    store.close().await;
    let figures = result?;
    if args.json {
        outln!("{}", serde_json::to_string(&figures)?);
    }
    Ok(())
}

async fn bench(
    args: &PipelineArgs,
    settings: &Settings,
    corpus: &Corpus,
    store: &Store,
    out: &std::path::Path,
) -> Result<Figures> {
    if !store
        .works(
            &WorkFilter::All,
            Page {
                after: None,
                limit: Some(1),
            },
        )
        .await?
        .is_empty()
    {
        bail!("the store given with --store holds works: give an empty database");
    }
    let matchers = args
        .matchers
        .unwrap_or_else(MatchWorkers::default_concurrency);
    let ids = super::quality::register(corpus, settings, store, matchers).await?;
    let by_store: HashMap<i64, ChapterId> = ids.iter().map(|(c, s)| (*s, *c)).collect();
    let pages = pirate_pages(corpus, args.pages, args.seed);
    std::fs::create_dir_all(out.join("pages"))?;
    let files = super::quality::write_pages(&pages, &ids, out, true)?;

    // The demo's site server, on the pages as written: `/` links every page, `/p/N.html`
    // is page N's file, `/p/N.json` the content endpoint a script-written page N fetches.
    let mut site_pages = Vec::with_capacity(files.len() + 1);
    let mut links = Vec::with_capacity(files.len());
    for (i, (file, p)) in files.iter().zip(&pages).enumerate() {
        let path = format!("/p/{i}.html");
        let body = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let kind = if p.case.is_evasion() {
            PageKind::Copy(p.case)
        } else {
            PageKind::Innocent(p.case)
        };
        links.push((path.clone(), format!("第{i}章")));
        site_pages.push(SitePage { path, kind, body });
        // A script-written page that fetches its chapter: its content endpoint beside it.
        let endpoint = file.with_extension("json");
        if endpoint.exists() {
            let body = std::fs::read(&endpoint)
                .with_context(|| format!("reading {}", endpoint.display()))?;
            site_pages.push(SitePage {
                path: format!("/p/{i}.json"),
                kind,
                body,
            });
        }
    }
    site_pages.push(SitePage {
        path: "/".to_owned(),
        kind: PageKind::Index,
        body: index_page("目录", &links)?,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let site = SiteServer::start(listener, site_pages)?;
    let addr = site.addr();

    let mut crawl = settings.crawler.clone();
    crawl.max_pages = Some(files.len() as u64 + 10);
    crawl.max_depth = 1;
    crawl.follow_sitemaps = false;
    crawl.fetch.safety.allow_private = true;
    crawl.politeness.delay = Duration::ZERO;
    crawl.politeness.per_host_concurrency = u32::try_from(args.fetches).unwrap_or(u32::MAX);
    crawl.politeness.global_concurrency = args.fetches;
    let seed = url::Url::parse(&format!("http://{addr}/"))?;
    // Loaded before the clock starts, as a running worker has it.
    let handler = settings.handler(store)?;
    handler.analyser().index().await?;
    let id = crawler::StoreCrawl::create(store, &crawl, std::slice::from_ref(&seed)).await?;
    let runner = CrawlRunner::open(store, id, Some(crawl)).await?;
    if !args.json {
        eprintln!(
            "crawling {} pages on {seed} into {} ({} fetches, {matchers} matchers at once)…",
            files.len(),
            store.kind().name(),
            args.fetches
        );
    }
    let started = Instant::now();
    let matching = MatchWorkers::start(store, handler, matchers);
    let finish = runner.run(std::future::pending(), true).await?;
    let drain = matching.finish(Duration::from_secs(30)).await?;
    let seconds = started.elapsed().as_secs_f64();
    site.stop().await?;

    // What the pipeline stored for each page, by the page's URL.
    let mut by_url: HashMap<String, Vec<(ChapterId, f64)>> = HashMap::new();
    let mut after = None;
    loop {
        let batch = store
            .snapshots(Page {
                after,
                limit: Some(500),
            })
            .await?;
        for s in &batch {
            let found = store
                .matches_of(s.id)
                .await?
                .iter()
                .map(|m| {
                    let chapter = by_store
                        .get(&m.found.chapter_id.0)
                        .copied()
                        .unwrap_or(ChapterId(-1));
                    (chapter, m.found.coverage)
                })
                .collect();
            by_url.insert(s.url.clone(), found);
        }
        after = batch.last().map(|s| s.id);
        if batch.len() < 500 {
            break;
        }
    }
    let reported: Vec<Vec<(ChapterId, f64)>> = (0..pages.len())
        .map(|i| {
            by_url
                .remove(&format!("http://{addr}/p/{i}.html"))
                .unwrap_or_default()
        })
        .collect();
    let report = matcher::quality::score(&pages, &reported, seconds, matchers);
    let (evasions, all) = (report.evasions(), report.all());
    let figures = Figures {
        backend: store.kind().name(),
        pages: pages.len(),
        pages_crawled: finish.report.pages,
        pages_matched: drain.matched,
        seconds,
        pages_per_second: pages.len() as f64 / seconds.max(1e-9),
        recall: evasions.recall(),
        precision: all.precision(),
        right_chapter: all.right_chapter(),
        missed_targets: report.missed_targets(),
    };
    if !args.json {
        write_stdout(&report.to_string())?;
        outln!(
            "\n{} pages crawled, {} matched, in {:.2} s: {:.0} pages/s through the whole \
             pipeline on {} (fetch → store → text → match → record)",
            figures.pages_crawled,
            figures.pages_matched,
            seconds,
            figures.pages_per_second,
            figures.backend
        );
        if figures.missed_targets.is_empty() {
            outln!("detection targets met");
        } else {
            for m in &figures.missed_targets {
                outln!("target missed: {m}");
            }
        }
    }
    Ok(figures)
}
