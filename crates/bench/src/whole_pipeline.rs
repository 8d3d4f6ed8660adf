//! `bench pipeline`: the whole pipeline timed and scored over HTTP. The pirate pages of
//! `bench quality` (every evasion in four layouts and six encodings, and the negatives) are
//! served by a local site on 127.0.0.1 (`pipeline::demo::SiteServer`), the corpus is
//! registered in a fresh store (SQLite by default, or an empty Postgres database), and the
//! site is crawled with no politeness delay while the match queue is served in the same
//! process — fetch, store, decode, extract, match, record — until every page is matched.
//! Pages per second are counted from the crawl's start to the last match; recall and
//! precision from the matches stored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use crawling::CrawlRunner;
use detection::Analyser;
use import::{ImportSettings, Importer};
use matcher::ChapterId;
use pipeline::demo::{PageKind, SitePage, SiteServer};
use pipeline::{Handler, MatchWorkers};
use serde::Serialize;
use store::{EvidenceReads, MatchReads, Page, Store, StoreSettings, WorkFilter, WorkReads};

use crate::pirate::{Case, Corpus, PageOptions, PiratePage};
use crate::quality::{QualityReport, StoredIds, score, store_corpus};
use crate::{Progress, Sections};

/// Options of `bench pipeline`.
#[derive(Debug, Clone)]
pub struct PipelineOptions {
    /// The pages.
    pub pages: PageOptions,
    /// The store: an empty database (`postgres://…` or `sqlite://…`); `None` for a fresh
    /// SQLite file in a temporary directory. A database that holds works is refused.
    pub store: Option<String>,
    /// Fetches at once (the crawl's global concurrency; one host, no delay).
    pub fetches: usize,
    /// Match jobs at once (and threads that fingerprint the corpus).
    pub matchers: usize,
    /// Where bodies go (`[storage] bodies`): `None` or `db` for the database; `file:///…`
    /// or `s3://…` for an object store, the bodies then moved into segments before the
    /// clock stops.
    pub bodies: Option<String>,
}

/// What `bench pipeline` measured, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct PipelineFigures {
    /// The store's backend.
    pub backend: &'static str,
    /// Pages served.
    pub pages: usize,
    /// Pages the crawl fetched (the index too).
    pub pages_crawled: u64,
    /// Pages the match queue matched.
    pub pages_matched: u64,
    /// Seconds from the crawl's start to the last match.
    pub seconds: f64,
    /// Pages a second through the whole pipeline.
    pub pages_per_second: f64,
    /// Where the bodies went (`db`, or the object store's URL).
    pub bodies: String,
    /// Of `seconds`, those spent moving the bodies into segments on the object store.
    pub segment_seconds: f64,
    /// What the crawl added to the database's bytes in use ([`Store::database_bytes`], live
    /// rows only: measured after [`Store::compact`]), per page crawled (the registered
    /// works' rows, there before, left out).
    pub database_bytes_per_page: f64,
    /// Page-level recall over every evasion.
    pub recall: f64,
    /// Precision over every page.
    pub precision: f64,
    /// Right-chapter attribution over every page.
    pub right_chapter: f64,
    /// [`QualityReport::missed_targets`].
    pub missed_targets: Vec<String>,
}

/// What `bench pipeline` measured: the figures and the counts per case.
#[derive(Debug, Clone)]
pub struct PipelineRun {
    /// The figures.
    pub figures: PipelineFigures,
    /// Counts per case, from the matches stored.
    pub report: QualityReport,
}

/// Runs `bench pipeline` with `sections` (the crawl starts from `sections.crawler`, with the
/// pages' site let through and no delay). What it is about to crawl goes to `progress`.
///
/// # Errors
/// A corpus that cannot be read, a store that cannot be opened or holds works, settings
/// refused, a failed crawl or match.
pub async fn run(
    options: &PipelineOptions,
    sections: &Sections<'_>,
    progress: Progress<'_>,
) -> Result<PipelineRun> {
    let corpus = options.pages.corpus()?;
    let temp = tempfile::tempdir().context("while making a temporary directory")?;
    let database = match &options.store {
        Some(url) => url.clone(),
        None => format!("sqlite://{}", temp.path().join("pipeline.db").display()),
    };
    let bodies = options.bodies.clone().unwrap_or_else(|| "db".to_owned());
    let settings = StoreSettings {
        storage: store::StorageSettings {
            bodies,
            spool_dir: temp.path().join("spool"),
            ..store::StorageSettings::default()
        },
        ..StoreSettings::default()
    };
    let store = Store::open(&database, &settings)
        .await
        .with_context(|| format!("while opening {}", store::mask_password(&database)))?;
    let result = crawl_and_score(options, sections, &corpus, &store, temp.path(), progress).await;
    store.close().await;
    result
}

/// The handler of the match jobs: the configured fingerprints, matching and crawler (no
/// time-stamping: nothing here serves the queue its jobs go to).
fn handler(store: &Store, sections: &Sections<'_>) -> Result<Handler> {
    let importer = Importer::new(ImportSettings {
        fingerprint: sections.fingerprint.clone(),
        limits: sections.import.clone(),
        ..ImportSettings::default()
    })
    .context("while setting up the importer")?;
    let analyser = Analyser::new(
        store.clone(),
        sections.fingerprint.clone(),
        sections.matcher.clone(),
    );
    Ok(Handler::new(store.clone(), importer, Arc::new(analyser))
        .with_crawler(sections.crawler.clone()))
}

/// The site's pages as written under `out`: `/` links every page, `/p/N.html` is page N's
/// file, `/p/N.json` the content endpoint a script-written page N fetches, `/p/fonts/rN.woff2`
/// and `/p/sprites/sN.svg` the font and sprite a page names.
fn site_pages(pages: &[PiratePage], files: &[PathBuf]) -> Result<Vec<SitePage>> {
    let mut site_pages = Vec::with_capacity(files.len() + 1);
    let mut links = Vec::with_capacity(files.len());
    for (i, (file, p)) in files.iter().zip(pages).enumerate() {
        let path = format!("/p/{i}.html");
        let body = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let kind = if p.case.is_evasion() {
            PageKind::Copy
        } else {
            PageKind::Innocent
        };
        links.push((path.clone(), format!("第{i}章")));
        site_pages.push(SitePage { path, kind, body });
        // A page of images: its images at `images/…` beside it (`html::ImageStyle::file`).
        if p.case.is_images()
            && let Some(dir) = file.parent()
            && let Some(n) = file
                .file_name()
                .and_then(|f| f.to_str())
                .and_then(|f| f.get(..4))
                .and_then(|n| n.parse::<usize>().ok())
        {
            let style = crate::html::ImageStyle::of(n);
            let photo = (p.case == Case::ImagesOtherNovel).then(|| "photo".to_owned());
            for k in (0..style.count).map(|k| k.to_string()).chain(photo) {
                let name = style.file(p.case, n, &k);
                let image = dir.join(&name);
                if image.exists() {
                    site_pages.push(SitePage {
                        path: format!("/p/{name}"),
                        kind,
                        body: std::fs::read(&image)
                            .with_context(|| format!("reading {}", image.display()))?,
                    });
                }
            }
        }
        // A remapped font's page: its font at `fonts/rN.woff2` beside it (N the number in
        // the page's file name, see `html::font_path`).
        if p.case == Case::FontRemap
            && let Some(n) = file
                .file_name()
                .and_then(|f| f.to_str())
                .and_then(|f| f.get(..4))
                .and_then(|n| n.parse::<usize>().ok())
            && let Some(dir) = file.parent()
        {
            let font = crate::html::font_path(dir, n);
            if font.exists() {
                site_pages.push(SitePage {
                    path: format!("/p/fonts/r{n}.woff2"),
                    kind,
                    body: std::fs::read(&font)
                        .with_context(|| format!("reading {}", font.display()))?,
                });
            }
        }
        // A glyph-sprite page whose sprite is a file: the SVG at `sprites/sN.svg` beside it
        // (see `html::sprite_path`).
        if p.case == Case::Sprite
            && let Some(n) = file
                .file_name()
                .and_then(|f| f.to_str())
                .and_then(|f| f.get(..4))
                .and_then(|n| n.parse::<usize>().ok())
            && let Some(dir) = file.parent()
        {
            let svg = crate::html::sprite_path(dir, n);
            if svg.exists() {
                site_pages.push(SitePage {
                    path: format!("/p/sprites/s{n}.svg"),
                    kind,
                    body: std::fs::read(&svg)
                        .with_context(|| format!("reading {}", svg.display()))?,
                });
            }
        }
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
        body: crate::demo::index_page("目录", &links)?,
    });
    Ok(site_pages)
}

/// What the pipeline stored for each of `pages`, served at `http://{site}/p/N.html`: the
/// corpus chapters matched and their coverage.
async fn stored_matches(
    store: &Store,
    site: &str,
    pages: usize,
    ids: &StoredIds,
) -> Result<Vec<Vec<(ChapterId, f64)>>> {
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
                .map(|m| (ids.corpus_id(m.found.chapter_id.0), m.found.coverage))
                .collect();
            by_url.insert(s.url.clone(), found);
        }
        after = batch.last().map(|s| s.id);
        if batch.len() < 500 {
            break;
        }
    }
    Ok((0..pages)
        .map(|i| {
            by_url
                .remove(&format!("http://{site}/p/{i}.html"))
                .unwrap_or_default()
        })
        .collect())
}

async fn crawl_and_score(
    options: &PipelineOptions,
    sections: &Sections<'_>,
    corpus: &Corpus,
    store: &Store,
    out: &Path,
    progress: Progress<'_>,
) -> Result<PipelineRun> {
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
    let matchers = options.matchers;
    let ids = store_corpus(corpus, sections.fingerprint, store, matchers).await?;
    let pages = options.pages.pages(corpus);
    std::fs::create_dir_all(out.join("pages"))?;
    let reference = crate::html::reference_font(&sections.crawler.extract.fonts);
    if reference.is_none() {
        progress(crate::quality::NO_REFERENCE_FONT);
    }
    let pages = crate::quality::readable(
        pages,
        &sections.crawler.extract,
        reference.is_some(),
        progress,
    );
    let files = crate::html::write_pages(&pages, &ids.to_store, out, true, reference.as_deref())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let site = SiteServer::start(listener, site_pages(&pages, &files)?)?;
    let addr = site.addr();

    let mut crawl = sections.crawler.clone();
    crawl.max_pages = Some(files.len() as u64 + 10);
    crawl.max_depth = 1;
    crawl.follow_sitemaps = false;
    crawl.fetch.safety.allow_private = true;
    crawl.politeness.delay = Duration::ZERO;
    crawl.politeness.per_host_concurrency = u32::try_from(options.fetches).unwrap_or(u32::MAX);
    crawl.politeness.global_concurrency = options.fetches;
    let seed = url::Url::parse(&format!("http://{addr}/"))?;
    // Loaded before the clock starts, as a running worker has it.
    let handler = handler(store, sections)?;
    handler.analyser().index().await?;
    let id = crawler::StoreCrawl::create(store, &crawl, std::slice::from_ref(&seed)).await?;
    let runner = CrawlRunner::open(store, id, Some(crawl)).await?;
    progress(&format!(
        "crawling {} pages on {seed} into {} ({} fetches, {matchers} matchers at once)…",
        files.len(),
        store.kind().name(),
        options.fetches
    ));
    // The works' rows are there already: what the crawl adds is measured from here, live
    // rows only (on Postgres the bodies moved out are dead rows until a vacuum).
    store.compact().await?;
    let database_before = store.database_bytes().await?;
    let started = Instant::now();
    let matching = MatchWorkers::start(store, handler, matchers);
    let finish = runner.run(std::future::pending(), true).await?;
    let drain = matching.finish(Duration::from_secs(30)).await?;
    // With an object store, the bodies are in segments only once the segment writer has
    // moved them (the `body-segments` schedule's work): that is part of the crawl's cost.
    let segmenting = Instant::now();
    let bodies = options.bodies.clone().unwrap_or_else(|| "db".to_owned());
    if bodies != "db" {
        store.move_bodies_to_store(None).await?;
    }
    let segment_seconds = segmenting.elapsed().as_secs_f64();
    let seconds = started.elapsed().as_secs_f64();
    site.stop().await?;

    store.compact().await?;
    let database_after = store.database_bytes().await?;
    let reported = stored_matches(store, &addr.to_string(), pages.len(), &ids).await?;
    let report = score(&pages, &reported, seconds, matchers);
    let (evasions, all) = (report.evasions(), report.all());
    let figures = PipelineFigures {
        backend: store.kind().name(),
        pages: pages.len(),
        pages_crawled: finish.report.pages,
        pages_matched: drain.matched,
        seconds,
        pages_per_second: pages.len() as f64 / seconds.max(1e-9),
        bodies,
        segment_seconds,
        database_bytes_per_page: database_after.saturating_sub(database_before) as f64
            / finish.report.pages.max(1) as f64,
        recall: evasions.recall(),
        precision: all.precision(),
        right_chapter: all.right_chapter(),
        missed_targets: report.missed_targets(),
    };
    Ok(PipelineRun { figures, report })
}
