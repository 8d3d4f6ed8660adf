//! `copyhound bench …`: the flags of every benchmark, and what each prints. The binary
//! hands its `bench` subcommand here with its settings; the harnesses are this crate's
//! other modules (see their docs for what each measures and how).
//!
//! - `bench fingerprint`, `extract`: throughput of the hot paths on this machine
//!   ([`crate::throughput`]); `bench match`: `check` over a directory ([`crate::matching`]).
//! - `bench quality`: the evasion-quality benchmark through `check` ([`crate::quality`]).
//!   The pirate pages of [`crate::pirate`] (every evasion, and the negatives) are rendered
//!   as HTML files in several layouts and encodings ([`crate::html`]), the source works
//!   registered in a fresh SQLite store, and `copyhound check DIR`'s pipeline runs over the
//!   files. With `--out DIR` the pages (`DIR/pages/<case>/...`), what each page copies
//!   (`DIR/expected.jsonl`) and the store (`DIR/quality.db`) are kept.
//! - `bench pipeline`: the whole pipeline over HTTP ([`crate::whole_pipeline`]): the pages
//!   served on 127.0.0.1, crawled with no delay, matched and recorded in a fresh store.
//! - `bench load`: the matcher's start-up load from a SQLite store filled with synthetic
//!   chapters ([`crate::load`]).
//! - `bench index`: the in-memory index at scale, up to millions of synthetic chapters: bytes
//!   a chapter, the loader's build time, page latency and recall ([`crate::index`]).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use pipeline::MatchWorkers;

use crate::Sections;
use crate::index::IndexOptions;
use crate::load::LoadOptions;
use crate::pirate::PageOptions;
use crate::quality::{QualityOptions, QualityRun};
use crate::throughput::{FingerprintBench, Kind};
use crate::whole_pipeline::PipelineOptions;

/// Where a command's output goes, a piece at a time (the binary's standard output, which
/// fails once its reader has gone).
pub type Out<'a> = &'a dyn Fn(&str) -> Result<()>;

/// `println!` into an [`Out`], returning its error.
macro_rules! outln {
    ($out:expr) => {
        $out("\n")?
    };
    ($out:expr, $($arg:tt)*) => {
        $out(&format!("{}\n", format_args!($($arg)*)))?
    };
}

/// What to measure.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Fingerprint throughput per kind and for the whole bundle.
    Fingerprint(FingerprintArgs),
    /// `check` throughput over a directory of pages, against the registered works.
    Match(MatchArgs),
    /// Recall and precision of `check` over generated pirate pages (every evasion, HTML in
    /// several layouts and encodings) and negatives, against works registered in a fresh
    /// store.
    Quality(QualityArgs),
    /// The whole pipeline over HTTP: the quality benchmark's pages served on 127.0.0.1,
    /// crawled with no delay, matched and recorded in a fresh store; pages per second and
    /// detection.
    Pipeline(PipelineArgs),
    /// The matcher's start-up load from a SQLite store filled with synthetic chapters.
    Load(LoadArgs),
    /// The in-memory index at scale (synthetic chapters, no database): bytes a chapter, the
    /// store loader's decode and build time, page latency on one thread, recall.
    Index(IndexArgs),
    /// Parsing and main-text extraction of HTML pages (the crawler's per-page work after
    /// decoding), bounded by `[crawler.extract.limits]`.
    Extract(ExtractArgs),
}

/// Options of `bench extract`.
#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// Directory of HTML pages (`.html`, `.htm`; any encoding), searched recursively. Default:
    /// the real novel-site pages kept with the crawler's tests. `bench quality --out DIR`
    /// leaves thousands of pirate pages in `DIR/pages`.
    #[arg(long)]
    input: Option<PathBuf>,
    #[command(flatten)]
    measure: MeasureArgs,
}

/// How a throughput bench measures and prints.
#[derive(Debug, Args)]
pub struct MeasureArgs {
    /// Worker threads.
    #[arg(long, default_value_t = 1, value_parser = bounds::parse_count)]
    threads: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Minimum measuring time per kind, in seconds (every input is processed at least once).
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
}

impl MeasureArgs {
    /// Threads, JSON and time, once a time no measurement can use is refused (clap refuses
    /// 0 threads).
    fn checked(&self) -> Result<(usize, bool, Duration)> {
        if !(self.seconds.is_finite() && self.seconds >= 0.0) {
            bail!(
                "--seconds must be a non-negative number, got {}",
                self.seconds
            );
        }
        Ok((
            self.threads,
            self.json,
            Duration::from_secs_f64(self.seconds),
        ))
    }
}

/// Options of `bench match`.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Directory of pages (`.txt`, `.html`, `.htm`; any encoding), searched recursively.
    #[arg(long)]
    input: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Pages checked at once; default: twice the number of cores.
    #[arg(long, value_parser = bounds::parse_count)]
    jobs: Option<usize>,
}

/// Options of `bench fingerprint`.
#[derive(Debug, Args)]
pub struct FingerprintArgs {
    /// Directory of `.txt` files (UTF-8), searched recursively. Default: the built-in
    /// public-domain sample (三国演义, 西游记, 红楼梦 in traditional script, Alice).
    #[arg(long)]
    input: Option<PathBuf>,
    #[command(flatten)]
    measure: MeasureArgs,
    /// Target chapter size in bytes (files are cut at line ends once a chapter reaches it).
    #[arg(long, default_value_t = 8192)]
    chapter_bytes: usize,
}

/// What a harness says while it runs, on standard error.
fn to_stderr(line: &str) {
    eprintln!("{line}");
}

/// For `--json` runs, which print nothing but the JSON object.
fn quiet(_: &str) {}

/// Runs a `bench` subcommand with the binary's settings; `database` and `store` are the
/// database `bench match` reads its works from, and how to open it.
pub fn run(
    command: BenchCommand,
    database: &str,
    store: &store::StoreSettings,
    sections: &Sections<'_>,
    out: Out<'_>,
) -> Result<()> {
    match command {
        BenchCommand::Fingerprint(args) => fingerprint(args, sections, out),
        BenchCommand::Match(args) => block_on(match_pages(args, database, store, sections, out)),
        BenchCommand::Load(args) => block_on(load(args, sections, out)),
        BenchCommand::Index(args) => block_on(index(args, sections, out)),
        BenchCommand::Quality(args) => block_on(quality(args, sections, out)),
        BenchCommand::Pipeline(args) => block_on(whole_pipeline(args, sections, out)),
        BenchCommand::Extract(args) => extract(args, sections, out),
    }
}

/// Runs an async bench on a multi-threaded runtime.
fn block_on(bench: impl Future<Output = Result<()>>) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(bench)
}

fn extract(args: ExtractArgs, sections: &Sections<'_>, out: Out<'_>) -> Result<()> {
    let (threads, json, min_time) = args.measure.checked()?;
    let input = args.input.as_deref();
    let figures = crate::throughput::extract(input, &sections.crawler.extract, threads, min_time)?;
    if json {
        outln!(out, "{}", serde_json::to_string(&figures)?);
        return Ok(());
    }
    outln!(
        out,
        "extracting {} pages, {:.1} MB decoded, on {} thread(s)",
        figures.pages,
        figures.bytes as f64 / 1e6,
        threads
    );
    outln!(out, "{:<18} {:>10} {:>10}", "kind", "pages/s", "MB/s");
    for (kind, t) in [("parse", figures.parse), ("extract", figures.extract)] {
        outln!(
            out,
            "{:<18} {:>10.0} {:>10.1}",
            kind,
            t.docs_per_s,
            t.mb_per_s
        );
    }
    Ok(())
}

async fn match_pages(
    args: MatchArgs,
    database: &str,
    settings: &store::StoreSettings,
    sections: &Sections<'_>,
    out: Out<'_>,
) -> Result<()> {
    let inputs = detection::check::expand_inputs(&[args.input.to_string_lossy().into_owned()])?;
    let store = store::Store::open(database, settings)
        .await
        .with_context(|| {
            format!(
                "while opening the database {}",
                store::mask_password(database)
            )
        })?;
    let jobs = args.jobs.unwrap_or_else(detection::check::default_jobs);
    let result = crate::matching::run(&store, inputs, jobs, sections, &to_stderr).await;
    store.close().await;
    let figures = result?;
    if args.json {
        outln!(out, "{}", serde_json::to_string(&figures)?);
    } else {
        outln!(
            out,
            "index: {} chapters loaded in {:.2} s",
            figures.chapters_indexed,
            figures.load_seconds
        );
        outln!(
            out,
            "match: {} pages ({:.2} MB of main text), {} matches in {:.2} s: {:.1} pages/s, {:.2} MB/s ({} at once)",
            figures.pages,
            figures.main_text_bytes as f64 / 1e6,
            figures.matches,
            figures.seconds,
            figures.pages_per_second,
            figures.mb_per_second,
            figures.jobs
        );
    }
    Ok(())
}

fn fingerprint(args: FingerprintArgs, sections: &Sections<'_>, out: Out<'_>) -> Result<()> {
    let (threads, json, min_time) = args.measure.checked()?;
    let bench = FingerprintBench::new(
        args.input.as_deref(),
        args.chapter_bytes,
        sections.fingerprint,
        &to_stderr,
    )?;
    if !json {
        outln!(
            out,
            "fingerprinting {} documents, {:.1} MB, on {} thread(s); kinds measured in turn \
             until each has run {}s",
            bench.docs(),
            bench.bytes() as f64 / 1e6,
            threads,
            args.measure.seconds
        );
    }
    let report = bench.run(threads, min_time);
    if json {
        outln!(out, "{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    outln!(out, "{:<18} {:>10} {:>10}", "kind", "docs/s", "MB/s");
    for (kind, t) in &report.kinds {
        let note = match kind {
            Kind::WinnowNormalized => "  (MB of normalised text)",
            Kind::JiebaCut => "  (reference: jieba-rs cut alone, no fingerprint)",
            _ => "",
        };
        outln!(
            out,
            "{:<18} {:>10.0} {:>10.1}{note}",
            kind.name(),
            t.docs_per_s,
            t.mb_per_s
        );
    }
    Ok(())
}

/// The pirate pages of `bench quality` and `bench pipeline`.
#[derive(Debug, Args)]
pub struct PagesArgs {
    /// Novels: the project corpus (a directory with `zh/` and `en/`, e.g. `../shared/corpus`)
    /// or a directory holding the repository's sample. Default: the sample compiled in
    /// (三国演义 1–10, 西游记 1–4, 红楼梦 1–2 traditional, Alice 1–3 registered; 水浒全传 1–2
    /// and Frankenstein 1–2 not).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Pages per case (fewer when the corpus has too few chapters of the kind).
    #[arg(long, default_value_t = 50)]
    pages: usize,
    /// Seed of the page generator (the same seed makes the same pages).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Novels are cut into chapters of about this many bytes.
    #[arg(long, default_value_t = 12_000)]
    chapter_bytes: usize,
}

impl From<PagesArgs> for PageOptions {
    fn from(args: PagesArgs) -> Self {
        PageOptions {
            corpus: args.corpus,
            per_case: args.pages,
            seed: args.seed,
            chapter_bytes: args.chapter_bytes,
        }
    }
}

/// Options of `bench quality`.
#[derive(Debug, Args)]
pub struct QualityArgs {
    #[command(flatten)]
    pages: PagesArgs,
    /// Keep the pages, `expected.jsonl` and the store (`quality.db`) in this directory
    /// (created; pages and store of an earlier run are replaced). Default: a temporary one.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Pages checked at once; default: twice the number of cores.
    #[arg(long)]
    jobs: Option<usize>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Failed pages listed after the table.
    #[arg(long, default_value_t = 20)]
    failures: usize,
}

/// Runs the benchmark and prints its table, or its figures with `--json`.
async fn quality(args: QualityArgs, sections: &Sections<'_>, out: Out<'_>) -> Result<()> {
    let options = QualityOptions {
        pages: args.pages.into(),
        out: args.out,
        jobs: args.jobs.unwrap_or_else(detection::check::default_jobs),
    };
    let run = crate::quality::run(&options, sections, &to_stderr).await?;
    print(args.json, args.failures, &run, out)
}

fn print(json: bool, failures: usize, run: &QualityRun, out: Out<'_>) -> Result<()> {
    let report = &run.report;
    if json {
        outln!(out, "{}", serde_json::to_string(&run.figures())?);
        return Ok(());
    }
    let missed = report.missed_targets();
    outln!(
        out,
        "{} chapters registered; {} HTML pages through `check`\n",
        run.chapters_registered,
        run.pages
    );
    out(&report.to_string())?;
    if missed.is_empty() {
        outln!(
            out,
            "\ntargets met: recall ≥ 0.98 overall and ≥ 0.95 per evasion, precision ≥ 0.99, no quotation reported, right chapters"
        );
    } else {
        outln!(out, "\ntargets missed:");
        for m in &missed {
            outln!(out, "- {m}");
        }
    }
    if !report.failures.is_empty() {
        outln!(out, "\nfailures ({} in all):", report.failures.len());
        for f in report.failures.iter().take(failures) {
            outln!(out, "- {f}");
        }
    }
    if let Some(dir) = &run.out {
        outln!(
            out,
            "\npages in {0}/pages; check them again with\n  copyhound --database sqlite://{0}/quality.db check {0}/pages",
            dir.display()
        );
    }
    Ok(())
}

/// Options of `bench pipeline`.
#[derive(Debug, Args)]
pub struct PipelineArgs {
    #[command(flatten)]
    pages: PagesArgs,
    /// The store: an empty database (`postgres://…` or `sqlite://…`); default: a fresh SQLite
    /// file in a temporary directory. A database that holds works is refused.
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Fetches at once (the crawl's global concurrency; one host, no delay).
    #[arg(long, default_value_t = 16, value_parser = bounds::parse_count)]
    fetches: usize,
    /// Match jobs at once; default: twice the number of cores.
    #[arg(long, value_parser = bounds::parse_count)]
    matchers: Option<usize>,
    /// Where page bodies go, as `[storage] bodies`: `db` (default), `file:///PATH` or
    /// `s3://…` (then moved into segments before the clock stops).
    #[arg(long, value_name = "URL")]
    bodies: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs the benchmark and prints its table and summary, or its figures with `--json`.
async fn whole_pipeline(args: PipelineArgs, sections: &Sections<'_>, out: Out<'_>) -> Result<()> {
    let options = PipelineOptions {
        pages: args.pages.into(),
        store: args.store,
        fetches: args.fetches,
        matchers: args
            .matchers
            .unwrap_or_else(MatchWorkers::default_concurrency),
        bodies: args.bodies,
    };
    let progress = if args.json { quiet } else { to_stderr };
    let run = crate::whole_pipeline::run(&options, sections, &progress).await?;
    let figures = &run.figures;
    if args.json {
        outln!(out, "{}", serde_json::to_string(figures)?);
        return Ok(());
    }
    out(&run.report.to_string())?;
    outln!(
        out,
        "\n{} pages crawled, {} matched, in {:.2} s: {:.0} pages/s through the whole \
         pipeline on {} (fetch → store → text → match → record)",
        figures.pages_crawled,
        figures.pages_matched,
        figures.seconds,
        figures.pages_per_second,
        figures.backend
    );
    outln!(
        out,
        "bodies in {}{}; the database holds {:.0} bytes a page crawled",
        figures.bodies,
        if figures.bodies == "db" {
            String::new()
        } else {
            format!(
                " ({:.2} s of it moving them into segments)",
                figures.segment_seconds
            )
        },
        figures.database_bytes_per_page
    );
    if figures.missed_targets.is_empty() {
        outln!(out, "detection targets met");
    } else {
        for m in &figures.missed_targets {
            outln!(out, "target missed: {m}");
        }
    }
    Ok(())
}

/// Options of `bench load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Chapters the store holds when the load is timed (it is filled up to this).
    #[arg(long, default_value_t = 100_000)]
    chapters: usize,
    /// The SQLite file to fill and load from (created; kept, so later runs only top it up).
    #[arg(long, default_value = "data/bench-load.db")]
    db: PathBuf,
    /// Novels the synthetic chapters are variants of (as `bench quality --corpus`). Default:
    /// the sample compiled in.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Novels are cut into chapters of about this many bytes.
    #[arg(long, default_value_t = 8192)]
    chapter_bytes: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the benchmark and prints its figures.
async fn load(args: LoadArgs, sections: &Sections<'_>, out: Out<'_>) -> Result<()> {
    let options = LoadOptions {
        chapters: args.chapters,
        db: args.db,
        corpus: args.corpus,
        chapter_bytes: args.chapter_bytes,
        threads: detection::check::cores(),
    };
    let progress = if args.json { quiet } else { to_stderr };
    let figures = crate::load::run(&options, sections, &progress).await?;
    if args.json {
        outln!(out, "{}", serde_json::to_string(&figures)?);
    } else {
        outln!(
            out,
            "store: {} chapters ({} added in {:.1} s), {:.2} GB on disk",
            figures.chapters_stored,
            figures.chapters_added,
            figures.fill_seconds,
            figures.db_bytes as f64 / 1e9
        );
        outln!(
            out,
            "load: {} chapters ({} skipped) in {:.2} s: {:.0} chapters/s; resident memory {:.0} MiB",
            figures.chapters_loaded,
            figures.skipped,
            figures.load_seconds,
            figures.chapters_per_second,
            figures.rss_mib
        );
    }
    Ok(())
}

/// Options of `bench index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Chapters in the index: the corpus's registered chapters, then synthetic variants of
    /// them up to this many.
    #[arg(long, default_value_t = 100_000, value_parser = bounds::parse_count)]
    chapters: usize,
    /// Novels the synthetic chapters are variants of (as `bench quality --corpus`). Default:
    /// the sample compiled in.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Novels are cut into chapters of about this many bytes.
    #[arg(long, default_value_t = 8192, value_parser = bounds::parse_count)]
    chapter_bytes: usize,
    /// Pirate pages per case.
    #[arg(long, default_value_t = 20, value_parser = bounds::parse_count)]
    pages: usize,
    /// Seed of the page generator.
    #[arg(long, default_value_t = 11)]
    seed: u64,
    /// Runs of each page for the latency (the fastest is kept).
    #[arg(long, default_value_t = 3, value_parser = bounds::parse_count)]
    repeat: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the benchmark and prints its figures.
async fn index(args: IndexArgs, sections: &Sections<'_>, out: Out<'_>) -> Result<()> {
    let options = IndexOptions {
        chapters: args.chapters,
        corpus: args.corpus,
        chapter_bytes: args.chapter_bytes,
        pages_per_case: args.pages,
        seed: args.seed,
        repeat: args.repeat,
        threads: detection::check::cores(),
    };
    let progress = if args.json { quiet } else { to_stderr };
    let f = crate::index::run(&options, sections, &progress).await?;
    if args.json {
        outln!(out, "{}", serde_json::to_string(&f)?);
        return Ok(());
    }
    let p = &f.parts;
    outln!(
        out,
        "index: {} chapters, {:.0} bytes a chapter (chapters {:.0} | simhash {:.0} | lsh {:.0} | \
         sentences {:.0} | text {:.0} | pinyin {:.0}; {:.0} text and pinyin postings a chapter)",
        f.chapters,
        f.bytes_per_chapter,
        p.chapters,
        p.simhash,
        p.lsh,
        p.sentences,
        p.text,
        p.pinyin,
        f.postings_per_chapter
    );
    outln!(
        out,
        "load (the store loader's decode and build, no database): {:.2} s; from a snapshot \
         ({} bytes: read, SHA-256 checked, tables copied): {:.2} s, {:.1}x faster",
        f.load_s_store,
        f.snapshot_bytes,
        f.load_s_snapshot,
        f.load_s_store / f.load_s_snapshot.max(1e-9)
    );
    outln!(
        out,
        "pages: {} checked on one thread, p50 {:.2} ms, p99 {:.2} ms (fastest of {} runs each); \
         recall {:.3}, precision {:.3}",
        f.pages,
        f.page_p50_ms,
        f.page_p99_ms,
        args.repeat,
        f.recall,
        f.precision
    );
    Ok(())
}
