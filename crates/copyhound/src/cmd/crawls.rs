//! `copyhound crawls list|show`: the crawls stored in the database, and everything stored
//! about one of them (what a user looks at right after `copyhound crawl`).

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use crawling::crawls::{self, CrawlListing, CrawlSheet};
use store::{CrawlFilter, CrawlId, CrawlStatus, Crawls, Store};

use super::outln;

/// `crawls` subcommands.
#[derive(Debug, Subcommand)]
pub enum CrawlsCommand {
    /// List crawls, newest first: status, seeds, times, pages, errors, bytes.
    List(ListArgs),
    /// Show everything stored about one crawl.
    Show(ShowArgs),
}

/// Options of `crawls list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only crawls in this status: queued, running, done, failed or cancelled.
    #[arg(long, value_name = "STATUS", value_parser = |s: &str| s.parse::<CrawlStatus>().map_err(|e| e.to_string()))]
    status: Option<CrawlStatus>,
    /// At most this many crawls.
    #[arg(long, value_name = "N", default_value_t = 50)]
    limit: u32,
    /// Only crawls older than this one (the last id of the previous listing).
    #[arg(long, value_name = "ID")]
    before: Option<CrawlId>,
    /// Print a JSON array.
    #[arg(long)]
    json: bool,
}

/// Options of `crawls show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The crawl's id (see `crawls list`, or what `copyhound crawl` printed).
    id: CrawlId,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs a `crawls` subcommand against the database at `database`.
pub async fn run(store: &Store, command: CrawlsCommand) -> Result<()> {
    match command {
        CrawlsCommand::List(args) => list(store, args).await,
        CrawlsCommand::Show(args) => show(store, args).await,
    }
}

async fn list(store: &Store, args: ListArgs) -> Result<()> {
    let filter = args.status.map_or(CrawlFilter::All, CrawlFilter::Status);
    let crawls = store
        .crawls(&filter, args.before, args.limit)
        .await
        .context("while listing crawls")?;
    if args.json {
        let listed: Vec<CrawlListing<'_>> = crawls.iter().map(CrawlListing::new).collect();
        outln!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    if crawls.is_empty() {
        match args.status {
            Some(status) => outln!("no {} crawls", status.as_str()),
            None => outln!("no crawls yet: start one with `copyhound crawl URL`"),
        }
        return Ok(());
    }
    super::write_stdout(&crawls::crawl_table(&crawls, args.limit))
}

async fn show(store: &Store, args: ShowArgs) -> Result<()> {
    let sheet = match CrawlSheet::read(store, args.id).await {
        Err(e) if e.is_not_found() => {
            bail!("there is no crawl {}: see `copyhound crawls list`", args.id)
        }
        other => other?,
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&sheet.shown())?);
        return Ok(());
    }
    super::write_stdout(&sheet.to_string())
}
