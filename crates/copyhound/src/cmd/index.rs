//! `copyhound index`: the matcher index. `snapshot` builds it from the stored fingerprints
//! and writes it as one file (`detection::write_snapshot`) that workers load instead
//! (`[index] snapshot`), replaying the work change log from its position.

use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use detection::SnapshotPlace;
use fingerprint::Fingerprinter;
use settings::Settings;
use store::Store;

use super::outln;

/// Subcommands of `index`.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Build the index from the database and write it as a snapshot file, which workers
    /// load at start-up instead of every stored fingerprint (`[index] snapshot`).
    Snapshot(SnapshotArgs),
}

/// Options of `index snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Where to write it: a folder (a new `index-….snap` in it), a file path (replaced
    /// whole), or `file:///PATH` / `s3://BUCKET/PREFIX` (under its `snapshots/`, with the
    /// `[storage]` endpoint and keys). Default: `snapshots/` of the object store
    /// `[storage] bodies` names.
    #[arg(long, value_name = "PATH_OR_URL")]
    to: Option<String>,
    /// Print what was written as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs an `index` subcommand on `store`.
pub async fn run(store: &Store, command: IndexCommand, settings: &Settings) -> Result<()> {
    match command {
        IndexCommand::Snapshot(args) => snapshot(store, &args, settings).await,
    }
}

async fn snapshot(store: &Store, args: &SnapshotArgs, settings: &Settings) -> Result<()> {
    let to = args.to.as_deref().unwrap_or("auto");
    let place = SnapshotPlace::parse(to, &settings.storage)
        .map_err(|e| anyhow::anyhow!("{}", jobs::chain(&e)))?
        .with_context(|| {
            format!(
                "nowhere to write the snapshot: --to {to:?} names no place ([storage] bodies is \
                 \"db\"); give --to FOLDER, or set [storage] bodies (COPYHOUND_STORAGE__BODIES) \
                 to file:///PATH or s3://BUCKET/PREFIX"
            )
        })?;
    let fingerprinter = Arc::new(
        Fingerprinter::new(settings.fingerprint.clone())
            .context("while setting up the fingerprinter ([fingerprint] settings)")?,
    );
    let written = detection::write_snapshot(store, settings.matcher.clone(), fingerprinter, &place)
        .await
        .map_err(|e| anyhow::anyhow!("{}", jobs::chain(&e)))
        .with_context(|| format!("while writing an index snapshot to {}", place.describe()))?;
    if written.skipped > 0 {
        eprintln!(
            "warning: {} chapters left out of the index (fingerprinted by another version: \
             refingerprint their works)",
            written.skipped
        );
    }
    if args.json {
        outln!("{}", serde_json::to_string(&written)?);
    } else {
        outln!(
            "index snapshot: {} chapters at change {}, {} bytes, written to {} (built in \
             {:.1} s, written in {:.1} s)",
            written.chapters,
            written.position,
            written.bytes,
            written.location,
            written.build_s,
            written.write_s
        );
    }
    Ok(())
}
