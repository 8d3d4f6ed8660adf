//! `copyhound snapshots export --warc FILE [--crawl ID]`: write the stored crawl evidence
//! (all of it, or one crawl's) as WARC.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use store::{
    CrawlId, Crawls, EvidenceReads, Page, SnapshotCursor, SnapshotId, SnapshotRecord, Store,
};

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

/// Rows read per query, so an export of a large database keeps memory flat.
const BATCH: u32 = 200;

/// Runs a `snapshots` subcommand against the database at `database`.
pub async fn run(command: SnapshotsCommand, database: &str) -> Result<()> {
    let SnapshotsCommand::Export(args) = command;
    let store = super::open_store(database).await?;
    let result = export(&store, &args).await;
    store.close().await;
    result
}

/// Which snapshots an export reads next.
enum Position {
    /// All of them, by id.
    All(Option<SnapshotId>),
    /// One crawl's, by URL.
    Crawl(CrawlId, Option<SnapshotCursor>),
}

impl Position {
    async fn next_batch(&mut self, store: &Store) -> store::Result<Vec<SnapshotRecord>> {
        let rows = match self {
            Position::All(after) => {
                store
                    .snapshots(Page {
                        after: *after,
                        limit: Some(BATCH),
                    })
                    .await?
            }
            Position::Crawl(crawl, after) => {
                store.crawl_snapshots(*crawl, after.as_ref(), BATCH).await?
            }
        };
        if let Some(last) = rows.last() {
            match self {
                Position::All(after) => *after = Some(last.id),
                Position::Crawl(_, after) => *after = Some(SnapshotCursor::after(last)),
            }
        }
        Ok(rows)
    }
}

async fn export(store: &Store, args: &ExportArgs) -> Result<()> {
    // Before the file is created: a mistyped id must not leave an empty WARC behind.
    if let Some(id) = args.crawl {
        match store.crawl(id).await {
            Err(store::Error::NotFound { .. }) => {
                bail!("there is no crawl {id}: see `copyhound crawls list` for the ids")
            }
            other => {
                other.with_context(|| format!("while looking up crawl {id}"))?;
            }
        }
    }
    let file = std::fs::File::create(&args.warc)
        .with_context(|| format!("while creating {}", args.warc.display()))?;
    let out = std::io::BufWriter::new(file);
    let gzip = args.warc.extension().is_some_and(|e| e == "gz");
    let mut warc = if gzip {
        crawler::WarcWriter::new_gzip(out)
    } else {
        crawler::WarcWriter::new(out)
    };
    let mut position = match args.crawl {
        Some(id) => Position::Crawl(id, None),
        None => Position::All(None),
    };
    let mut count = 0u64;
    loop {
        let rows = position
            .next_batch(store)
            .await
            .context("while reading snapshots")?;
        if rows.is_empty() {
            break;
        }
        for row in &rows {
            let snapshot = crawler::stored_snapshot(store, row)
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
    let of = args
        .crawl
        .map_or_else(String::new, |id| format!(" of crawl {id}"));
    outln!(
        "exported {count} snapshots{of} ({bytes} bytes) to {}",
        args.warc.display()
    );
    Ok(())
}
