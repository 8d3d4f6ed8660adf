//! `copyhound snapshots export --warc FILE [--crawl ID]`: write the stored crawl evidence
//! (all of it, or one crawl's) as WARC.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use store::CrawlId;

use super::outln;

/// `snapshots` subcommands.
#[derive(Debug, Subcommand)]
pub enum SnapshotsCommand {
    /// Write the stored snapshots (every one, or one crawl's) to a WARC file
    /// (gzip-compressed when FILE ends in .gz).
    Export(ExportArgs),
}

/// Options of `snapshots export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The WARC file to write.
    #[arg(long, value_name = "FILE")]
    warc: PathBuf,
    /// Only the snapshots of this crawl (see `copyhound crawls list`), in URL order.
    #[arg(long, value_name = "ID")]
    crawl: Option<CrawlId>,
}

/// Runs a `snapshots` subcommand against the database at `database`.
pub async fn run(store: &store::Store, command: SnapshotsCommand) -> Result<()> {
    let SnapshotsCommand::Export(args) = command;
    let done = evidence::warc_export::export_warc(store, args.crawl, &args.warc)
        .await
        .with_context(|| format!("while exporting to {}", args.warc.display()))?;
    let of = args
        .crawl
        .map_or_else(String::new, |id| format!(" of crawl {id}"));
    outln!(
        "exported {} snapshots{of} ({} bytes) to {}",
        done.snapshots,
        done.bytes,
        args.warc.display()
    );
    if done.removed > 0 {
        outln!(
            "left out {} snapshots whose bodies gc removed ([retention])",
            done.removed
        );
    }
    Ok(())
}
