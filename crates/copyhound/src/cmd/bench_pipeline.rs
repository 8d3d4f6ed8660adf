//! `copyhound bench pipeline`: the whole pipeline timed and scored over HTTP
//! (`bench::whole_pipeline`). The pirate pages of `bench quality` are served by a local site
//! on 127.0.0.1, the corpus is registered in a fresh store (SQLite by default, or an empty
//! Postgres database), and the site is crawled with no politeness delay while the match queue
//! is served in the same process, until every page is matched.

use anyhow::Result;
use bench::Sections;
use bench::whole_pipeline::PipelineOptions;
use clap::Args;
use pipeline::MatchWorkers;

use super::bench::{quiet, to_stderr};
use super::{outln, write_stdout};

/// Options of `bench pipeline`.
#[derive(Debug, Args)]
pub struct PipelineArgs {
    #[command(flatten)]
    pages: super::quality::PagesArgs,
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

/// Runs the benchmark and prints its table and summary, or its figures with `--json`.
pub async fn run(args: PipelineArgs, sections: &Sections<'_>) -> Result<()> {
    let options = PipelineOptions {
        pages: args.pages.into(),
        store: args.store,
        fetches: args.fetches,
        matchers: args
            .matchers
            .unwrap_or_else(MatchWorkers::default_concurrency),
    };
    let progress = if args.json { quiet } else { to_stderr };
    let run = bench::whole_pipeline::run(&options, sections, &progress).await?;
    let figures = &run.figures;
    if args.json {
        outln!("{}", serde_json::to_string(figures)?);
        return Ok(());
    }
    write_stdout(&run.report.to_string())?;
    outln!(
        "\n{} pages crawled, {} matched, in {:.2} s: {:.0} pages/s through the whole \
         pipeline on {} (fetch → store → text → match → record)",
        figures.pages_crawled,
        figures.pages_matched,
        figures.seconds,
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
    Ok(())
}
