//! `copyhound bench quality`: the evasion-quality benchmark run through `check`
//! (`bench::quality::run`).
//!
//! The pirate pages of `bench::pirate` (every evasion, and the negatives) are rendered as
//! HTML files in several layouts and encodings (`bench::html`), the source works are
//! registered in a fresh SQLite store, and the exact pipeline of `copyhound check DIR` runs
//! over the files. The table per case counts pages, page-level recall, matches, precision
//! and right-chapter attribution.
//!
//! With `--out DIR` the pages (`DIR/pages/<case>/...`), what each page copies
//! (`DIR/expected.jsonl`) and the store (`DIR/quality.db`) are kept, so that
//! `copyhound --database sqlite://DIR/quality.db check DIR/pages` can be run over them.

use std::path::PathBuf;

use anyhow::Result;
use bench::Sections;
use bench::pirate::PageOptions;
use bench::quality::{QualityOptions, QualityRun};
use clap::Args;

use super::bench::to_stderr;
use super::{outln, write_stdout};

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
pub async fn run(args: QualityArgs, sections: &Sections<'_>) -> Result<()> {
    let options = QualityOptions {
        pages: args.pages.into(),
        out: args.out,
        jobs: args.jobs.unwrap_or_else(super::check::default_jobs),
    };
    let run = bench::quality::run(&options, sections, &to_stderr).await?;
    print(args.json, args.failures, &run)
}

fn print(json: bool, failures: usize, run: &QualityRun) -> Result<()> {
    let report = &run.report;
    if json {
        outln!("{}", serde_json::to_string(&run.figures())?);
        return Ok(());
    }
    let missed = report.missed_targets();
    outln!(
        "{} chapters registered; {} HTML pages through `check`\n",
        run.chapters_registered,
        run.pages
    );
    write_stdout(&report.to_string())?;
    if missed.is_empty() {
        outln!(
            "\ntargets met: recall ≥ 0.98 overall and ≥ 0.95 per evasion, precision ≥ 0.99, no quotation reported, right chapters"
        );
    } else {
        outln!("\ntargets missed:");
        for m in &missed {
            outln!("- {m}");
        }
    }
    if !report.failures.is_empty() {
        outln!("\nfailures ({} in all):", report.failures.len());
        for f in report.failures.iter().take(failures) {
            outln!("- {f}");
        }
    }
    if let Some(out) = &run.out {
        outln!(
            "\npages in {0}/pages; check them again with\n  copyhound --database sqlite://{0}/quality.db check {0}/pages",
            out.display()
        );
    }
    Ok(())
}
