//! The harnesses behind `copyhound bench pipeline` and `bench load`, called as a library:
//! what they measure is there and adds up, on both backends where they take a store. (The
//! binary's tests run `bench quality`, `fingerprint`, `extract` and `match` as a process.)

use std::sync::Mutex;

use bench::load::{LoadFigures, LoadOptions};
use bench::pirate::PageOptions;
use bench::whole_pipeline::{PipelineOptions, PipelineRun};
use bench::{Case, Sections};
use crawler::CrawlSettings;
use fingerprint::FingerprintSettings;
use import::ImportLimits;
use matcher::MatcherSettings;
use store::WorkWrites;

/// The default settings, as the binary passes its configured ones.
struct Defaults {
    fingerprint: FingerprintSettings,
    matcher: MatcherSettings,
    crawler: CrawlSettings,
    import: ImportLimits,
}

impl Defaults {
    fn new() -> Self {
        Defaults {
            fingerprint: FingerprintSettings::default(),
            matcher: MatcherSettings::default(),
            crawler: CrawlSettings::default(),
            import: ImportLimits::default(),
        }
    }

    fn sections(&self) -> Sections<'_> {
        Sections {
            fingerprint: &self.fingerprint,
            matcher: &self.matcher,
            crawler: &self.crawler,
            import: &self.import,
        }
    }
}

/// Two pages of each case from the sample.
fn two_per_case(store: Option<String>) -> PipelineOptions {
    PipelineOptions {
        pages: PageOptions {
            corpus: None,
            per_case: 2,
            seed: 1,
            chapter_bytes: 12_000,
        },
        store,
        fetches: 4,
        matchers: 2,
        bodies: None,
    }
}

/// Runs `bench pipeline` on `store` (a fresh SQLite file when `None`), with the lines it
/// said.
async fn pipeline_bench(store: Option<String>) -> (PipelineRun, Vec<String>) {
    let defaults = Defaults::new();
    let said = Mutex::new(Vec::new());
    let progress = |line: &str| said.lock().unwrap().push(line.to_owned());
    let run = bench::whole_pipeline::run(&two_per_case(store), &defaults.sections(), &progress)
        .await
        .unwrap();
    (run, said.into_inner().unwrap())
}

fn assert_every_page_crawled_matched_and_scored(run: &PipelineRun, said: &[String]) {
    let (figures, report) = (&run.figures, &run.report);
    let pages = Case::ALL.len() * 2;
    assert_eq!(figures.pages, pages);
    assert_eq!(report.all().pages, pages);
    // The table of contents and every page; script-written pages' endpoints besides.
    assert!(figures.pages_crawled > pages as u64, "{figures:?}");
    assert!(figures.pages_matched >= pages as u64, "{figures:?}");
    assert!(figures.pages_per_second > 0.0, "{figures:?}");
    assert!(
        figures.missed_targets.is_empty(),
        "{figures:?}\n{report}\n{:#?}",
        report.failures
    );
    assert_eq!(report.stats(Case::OtherNovel).reported, 0, "{report}");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with(&format!("crawling {pages} pages on http://127.0.0.1:")),
        "{said:?}"
    );
}

#[tokio::test]
async fn pipeline_bench_crawls_matches_and_scores_every_page_on_sqlite() {
    let (run, said) = pipeline_bench(None).await;
    assert_eq!(run.figures.backend, "sqlite");
    assert_every_page_crawled_matched_and_scored(&run, &said);
}

#[tokio::test]
async fn pipeline_bench_crawls_matches_and_scores_every_page_on_postgres() {
    let Some(db) = store::testing::postgres("bench_pipeline").await else {
        return;
    };
    let (run, said) = pipeline_bench(Some(db.url.clone())).await;
    assert_eq!(run.figures.backend, "postgres");
    assert_every_page_crawled_matched_and_scored(&run, &said);
}

/// Bodies on a local object store: every page still crawled, matched and scored, the bodies
/// moved into segments before the clock stops, and the database smaller a page than with
/// the bodies in it.
#[tokio::test]
async fn pipeline_bench_with_bodies_on_a_folder_store() {
    let (in_db, _) = pipeline_bench(None).await;
    assert_eq!(in_db.figures.bodies, "db");
    assert_eq!(in_db.figures.segment_seconds.round(), 0.0);
    let folder = tempfile::tempdir().unwrap();
    let url = format!("file://{}", folder.path().display());
    let defaults = Defaults::new();
    let said = Mutex::new(Vec::new());
    let progress = |line: &str| said.lock().unwrap().push(line.to_owned());
    let options = PipelineOptions {
        bodies: Some(url.clone()),
        ..two_per_case(None)
    };
    let run = bench::whole_pipeline::run(&options, &defaults.sections(), &progress)
        .await
        .unwrap();
    assert_every_page_crawled_matched_and_scored(&run, &said.into_inner().unwrap());
    assert_eq!(run.figures.bodies, url);
    assert!(run.figures.segment_seconds > 0.0, "{:?}", run.figures);
    assert!(
        std::fs::read_dir(folder.path()).unwrap().next().is_some(),
        "segments were written"
    );
    assert!(
        run.figures.database_bytes_per_page < in_db.figures.database_bytes_per_page,
        "{} B a page with the bodies on the store, {} B in the database",
        run.figures.database_bytes_per_page,
        in_db.figures.database_bytes_per_page
    );
}

#[tokio::test]
async fn pipeline_bench_refuses_a_store_that_holds_works() {
    let db = store::testing::sqlite("refuses").await.unwrap();
    db.store
        .insert_work(&store::testing::sample_work("registered already", 1))
        .await
        .unwrap();
    let defaults = Defaults::new();
    let error = bench::whole_pipeline::run(
        &two_per_case(Some(db.url.clone())),
        &defaults.sections(),
        &|_| {},
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("holds works"), "{error:#}");
}

async fn load_bench(options: &LoadOptions) -> LoadFigures {
    let defaults = Defaults::new();
    let said = Mutex::new(Vec::new());
    let progress = |line: &str| said.lock().unwrap().push(line.to_owned());
    let figures = bench::load::run(options, &defaults.sections(), &progress)
        .await
        .unwrap();
    // Progress is said every 50,000 chapters.
    assert!(said.into_inner().unwrap().is_empty());
    figures
}

#[tokio::test]
async fn load_bench_fills_its_store_once_and_loads_every_chapter() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = LoadOptions {
        chapters: 1500,
        db: dir.path().join("nested/load.db"),
        corpus: None,
        chapter_bytes: 8192,
        threads: 2,
    };
    let first = load_bench(&options).await;
    assert_eq!(
        (first.chapters_stored, first.chapters_added),
        (1500, 1500),
        "{first:?}"
    );
    assert_eq!(
        (first.chapters_loaded, first.skipped),
        (1500, 0),
        "{first:?}"
    );
    assert!(
        first.db_bytes > 0 && first.chapters_per_second > 0.0,
        "{first:?}"
    );
    // A smaller run on the same store adds nothing and loads what is there.
    options.chapters = 1000;
    let second = load_bench(&options).await;
    assert_eq!(
        (
            second.chapters_stored,
            second.chapters_added,
            second.chapters_loaded
        ),
        (1500, 0, 1500),
        "{second:?}"
    );
}

fn index_options(chapters: usize) -> bench::index::IndexOptions {
    bench::index::IndexOptions {
        chapters,
        corpus: None,
        chapter_bytes: 8192,
        pages_per_case: 2,
        seed: 1,
        repeat: 1,
        threads: 2,
    }
}

#[tokio::test]
async fn index_bench_loads_every_chapter_and_finds_the_copies() {
    let defaults = Defaults::new();
    let said = Mutex::new(Vec::new());
    let progress = |line: &str| said.lock().unwrap().push(line.to_owned());
    let f = bench::index::run(&index_options(3000), &defaults.sections(), &progress)
        .await
        .unwrap();
    assert_eq!(f.chapters, 3000, "{f:?}");
    let p = f.parts;
    let sum = p.chapters + p.simhash + p.lsh + p.sentences + p.text + p.pinyin;
    assert!((sum - f.bytes_per_chapter).abs() < 1e-6, "{f:?}");
    // Every part holds something; postings dominate.
    assert!(
        [p.chapters, p.simhash, p.lsh, p.sentences, p.text, p.pinyin]
            .iter()
            .all(|&b| b > 0.0),
        "{f:?}"
    );
    assert!(p.text + p.pinyin > f.bytes_per_chapter / 3.0, "{f:?}");
    assert!(f.postings_per_chapter > 10.0, "{f:?}");
    assert!(f.load_s_store > 0.0 && f.page_p99_ms >= f.page_p50_ms && f.page_p50_ms > 0.0);
    assert!(f.pages > 20, "{f:?}");
    // The real chapters are in the index under their own ids: the copies are found among
    // thousands of synthetic ones.
    assert!(f.recall >= 0.9 && f.precision >= 0.95, "{f:?}");
    let json = serde_json::to_value(&f).unwrap();
    for key in [
        "chapters",
        "bytes_per_chapter",
        "load_s_store",
        "load_s_snapshot",
        "page_p99_ms",
        "recall",
    ] {
        assert!(json[key].is_number(), "{key} in {json}");
    }
    // Built, loaded from the store, loaded from a snapshot.
    assert_eq!(said.into_inner().unwrap().len(), 3);
}

#[tokio::test]
async fn index_bench_refuses_fewer_chapters_than_the_corpus_registers() {
    let defaults = Defaults::new();
    let err = bench::index::run(&index_options(3), &defaults.sections(), &|_| {})
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is fewer than the"), "{err:#}");
}
