//! `copyhound snapshots export --warc FILE`: write the stored crawl evidence as WARC.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use store::{EvidenceReads, Page, SnapshotId};

use super::outln;

/// `snapshots` subcommands.
#[derive(Debug, Subcommand)]
pub enum SnapshotsCommand {
    /// Write every stored snapshot to a WARC file (gzip-compressed when FILE ends in .gz).
    Export(ExportArgs),
}

/// Options of `snapshots export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The WARC file to write.
    #[arg(long, value_name = "FILE")]
    warc: PathBuf,
}

/// Rows read per query, so an export of a large database keeps memory flat.
const BATCH: u32 = 200;

/// Runs a `snapshots` subcommand against the database at `database`.
pub async fn run(command: SnapshotsCommand, database: &str) -> Result<()> {
    let SnapshotsCommand::Export(args) = command;
    let store = super::open_store(database).await?;
    let file = std::fs::File::create(&args.warc)
        .with_context(|| format!("while creating {}", args.warc.display()))?;
    let out = std::io::BufWriter::new(file);
    let gzip = args.warc.extension().is_some_and(|e| e == "gz");
    let mut warc = if gzip {
        crawler::WarcWriter::new_gzip(out)
    } else {
        crawler::WarcWriter::new(out)
    };
    let mut after: Option<SnapshotId> = None;
    let mut count = 0u64;
    loop {
        let rows = store
            .snapshots(Page {
                after,
                limit: Some(BATCH),
            })
            .await
            .context("while reading snapshots")?;
        let Some(last) = rows.last() else { break };
        after = Some(last.id);
        for row in &rows {
            let snapshot = crawler::stored_snapshot(&store, row)
                .await
                .with_context(|| format!("while reading snapshot {}", row.id))?;
            warc.write_snapshot(&snapshot)
                .with_context(|| format!("while writing {}", args.warc.display()))?;
            count += 1;
        }
    }
    let bytes = warc.bytes_written();
    warc.finish()
        .with_context(|| format!("while finishing {}", args.warc.display()))?;
    outln!(
        "exported {count} snapshots ({bytes} bytes) to {}",
        args.warc.display()
    );
    Ok(())
}
