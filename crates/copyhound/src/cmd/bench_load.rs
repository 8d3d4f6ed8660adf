//! `copyhound bench load`: the matcher's start-up load from a real store at scale
//! (`bench::load`). Fills a SQLite store (`--db`, kept between runs so a large one is filled
//! once) up to `--chapters` synthetic chapters, then times the load `check` and the workers
//! do from it.

use std::path::PathBuf;

use anyhow::Result;
use bench::Sections;
use bench::load::LoadOptions;
use clap::Args;

use super::bench::{quiet, to_stderr};
use super::outln;

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
pub async fn run(args: LoadArgs, sections: &Sections<'_>) -> Result<()> {
    let options = LoadOptions {
        chapters: args.chapters,
        db: args.db,
        corpus: args.corpus,
        chapter_bytes: args.chapter_bytes,
        threads: super::check::cores(),
    };
    let progress = if args.json { quiet } else { to_stderr };
    let figures = bench::load::run(&options, sections, &progress).await?;
    if args.json {
        outln!("{}", serde_json::to_string(&figures)?);
    } else {
        outln!(
            "store: {} chapters ({} added in {:.1} s), {:.2} GB on disk",
            figures.chapters_stored,
            figures.chapters_added,
            figures.fill_seconds,
            figures.db_bytes as f64 / 1e9
        );
        outln!(
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
