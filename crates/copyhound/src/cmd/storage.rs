//! `copyhound storage`: where page bodies and screenshots are kept. `migrate` moves the
//! stored bodies and screenshots between the database and the object store
//! `[storage] bodies` names
//! (`store::Store::move_bodies_to_store` and `move_bodies_to_db`, which check each body
//! against its SHA-256); `status` counts them.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use store::{BodyTotals, MoveReport, Store};

use super::outln;

/// Subcommands of `storage`.
#[derive(Debug, Subcommand)]
pub enum StorageCommand {
    /// Move stored bodies and screenshots to the object store (`[storage] bodies`) or back
    /// into the database. Resumable: run it again after an error or Ctrl-C and it goes on.
    Migrate(MigrateArgs),
    /// Count bodies, screenshots and bytes in the database and in segments on the object
    /// store.
    Status,
}

/// Where `storage migrate` moves bodies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Destination {
    /// Into the database.
    Db,
    /// Into WARC segments on the object store.
    Store,
}

/// Options of `storage migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Where to move bodies.
    #[arg(long, value_enum, default_value = "store")]
    to: Destination,
    /// Move at most this many bodies and screenshots.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
}

/// Runs a `storage` subcommand on `store`.
pub async fn run(store: &Store, command: StorageCommand) -> Result<()> {
    match command {
        StorageCommand::Status => print_totals(&store.body_totals().await?),
        StorageCommand::Migrate(args) => migrate(store, &args).await,
    }
}

async fn migrate(store: &Store, args: &MigrateArgs) -> Result<()> {
    let place = store
        .body_store()
        .map(|b| b.describe().to_owned())
        .unwrap_or_else(|| "the object store".to_owned());
    let report = match args.to {
        Destination::Store => {
            if store.body_store().is_none() {
                bail!(
                    "[storage] bodies is \"db\": set it to file:///PATH or s3://BUCKET/PREFIX \
                     (COPYHOUND_STORAGE__BODIES) to move bodies to an object store"
                );
            }
            store
                .move_bodies_to_store(args.limit)
                .await
                .with_context(|| {
                    format!("while moving bodies to {place} (run it again to go on)")
                })?
        }
        Destination::Db => store.move_bodies_to_db(args.limit).await.with_context(|| {
            format!("while moving bodies from {place} into the database (run it again to go on)")
        })?,
    };
    print_report(&report, args.to, &place)?;
    print_totals(&store.body_totals().await?)
}

fn print_report(report: &MoveReport, to: Destination, place: &str) -> Result<()> {
    match to {
        Destination::Store => outln!(
            "moved {} bodies, {} bytes, to {place} in {} segments",
            report.bodies,
            report.bytes,
            report.segments
        ),
        Destination::Db => outln!(
            "moved {} bodies, {} bytes, into the database; {} emptied segments deleted",
            report.bodies,
            report.bytes,
            report.segments
        ),
    }
    outln!(
        "moved {} screenshots, {} bytes, with them",
        report.screenshots,
        report.screenshot_bytes
    );
    if !report.refused.is_empty() {
        outln!(
            "left {} bodies or screenshots where they were (they do not match their SHA-256):",
            report.refused.len()
        );
        for line in &report.refused {
            outln!("  {line}");
        }
    }
    Ok(())
}

fn print_totals(t: &BodyTotals) -> Result<()> {
    outln!(
        "in the database: {} bodies, {} bytes; in segments: {} bodies, {} bytes ({} segments, {} bytes stored)",
        t.db_bodies,
        t.db_bytes,
        t.store_bodies,
        t.store_bytes,
        t.segments,
        t.segment_bytes
    );
    outln!(
        "screenshots in the database: {}, {} bytes; in segments: {}, {} bytes",
        t.screenshots,
        t.screenshot_bytes,
        t.store_screenshots,
        t.store_screenshot_bytes
    );
    Ok(())
}
