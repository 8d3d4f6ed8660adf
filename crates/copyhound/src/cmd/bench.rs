//! `copyhound bench ...`: throughput figures of the hot paths measured on this machine
//! (`bench fingerprint`, `extract`, `match`, `load`) and the detection quality (`bench
//! quality`, `pipeline`). The harnesses are the `bench` crate's (see its docs for what each
//! measures and how); these modules parse the flags, call them and print.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use bench::Sections;
use bench::throughput::{FingerprintBench, Kind};
use clap::{Args, Subcommand};

use super::outln;
use settings::Settings;

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
    Quality(super::quality::QualityArgs),
    /// The whole pipeline over HTTP: the quality benchmark's pages served on 127.0.0.1,
    /// crawled with no delay, matched and recorded in a fresh store; pages per second and
    /// detection.
    Pipeline(super::bench_pipeline::PipelineArgs),
    /// The matcher's start-up load from a SQLite store filled with synthetic chapters.
    Load(super::bench_load::LoadArgs),
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
    #[arg(long, default_value_t = 1, value_parser = super::parse_count)]
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
    #[arg(long, value_parser = super::parse_count)]
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
pub(crate) fn to_stderr(line: &str) {
    eprintln!("{line}");
}

/// For `--json` runs, which print nothing but the JSON object.
pub(crate) fn quiet(_: &str) {}

pub fn run(command: BenchCommand, database: &str, settings: &Settings) -> Result<()> {
    let sections = Sections {
        fingerprint: &settings.fingerprint,
        matcher: &settings.matcher,
        crawler: &settings.crawler,
        import: &settings.import,
    };
    match command {
        BenchCommand::Fingerprint(args) => fingerprint(args, settings),
        BenchCommand::Match(args) => block_on(match_pages(args, database, &sections)),
        BenchCommand::Load(args) => block_on(super::bench_load::run(args, &sections)),
        BenchCommand::Quality(args) => block_on(super::quality::run(args, &sections)),
        BenchCommand::Pipeline(args) => block_on(super::bench_pipeline::run(args, &sections)),
        BenchCommand::Extract(args) => extract(args, settings),
    }
}

/// Runs an async bench on a multi-threaded runtime.
fn block_on(bench: impl Future<Output = Result<()>>) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(bench)
}

fn extract(args: ExtractArgs, settings: &Settings) -> Result<()> {
    let (threads, json, min_time) = args.measure.checked()?;
    let input = args.input.as_deref();
    let figures = bench::throughput::extract(input, &settings.crawler.extract, threads, min_time)?;
    if json {
        outln!("{}", serde_json::to_string(&figures)?);
        return Ok(());
    }
    outln!(
        "extracting {} pages, {:.1} MB decoded, on {} thread(s)",
        figures.pages,
        figures.bytes as f64 / 1e6,
        threads
    );
    outln!("{:<18} {:>10} {:>10}", "kind", "pages/s", "MB/s");
    for (kind, t) in [("parse", figures.parse), ("extract", figures.extract)] {
        outln!("{:<18} {:>10.0} {:>10.1}", kind, t.docs_per_s, t.mb_per_s);
    }
    Ok(())
}

async fn match_pages(args: MatchArgs, database: &str, sections: &Sections<'_>) -> Result<()> {
    let inputs = pipeline::check::expand_inputs(&[args.input.to_string_lossy().into_owned()])?;
    let store = super::open_store(database).await?;
    let jobs = args.jobs.unwrap_or_else(super::check::default_jobs);
    let result = bench::matching::run(&store, inputs, jobs, sections, &to_stderr).await;
    store.close().await;
    let figures = result?;
    if args.json {
        outln!("{}", serde_json::to_string(&figures)?);
    } else {
        outln!(
            "index: {} chapters loaded in {:.2} s",
            figures.chapters_indexed,
            figures.load_seconds
        );
        outln!(
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

fn fingerprint(args: FingerprintArgs, settings: &Settings) -> Result<()> {
    let (threads, json, min_time) = args.measure.checked()?;
    let bench = FingerprintBench::new(
        args.input.as_deref(),
        args.chapter_bytes,
        &settings.fingerprint,
        &to_stderr,
    )?;
    if !json {
        outln!(
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
        outln!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    outln!("{:<18} {:>10} {:>10}", "kind", "docs/s", "MB/s");
    for (kind, t) in &report.kinds {
        let note = match kind {
            Kind::WinnowNormalized => "  (MB of normalised text)",
            Kind::JiebaCut => "  (reference: jieba-rs cut alone, no fingerprint)",
            _ => "",
        };
        outln!(
            "{:<18} {:>10.0} {:>10.1}{note}",
            kind.name(),
            t.docs_per_s,
            t.mb_per_s
        );
    }
    Ok(())
}
