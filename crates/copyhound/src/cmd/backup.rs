//! `copyhound backup FILE`: a consistent copy of the SQLite database, taken while other
//! copyhound processes go on working (`store::Store::backup_to`: `VACUUM INTO`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::outln;

/// Options of `backup`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The new file to write (never overwritten). Postgres: use pg_dump instead.
    file: PathBuf,
}

/// Copies the database at `database` to the file.
pub async fn run(args: BackupArgs, database: &str) -> Result<()> {
    // Connected, not migrated: a copy taken before an upgrade is the old schema's.
    let store = store::Store::connect(database, &super::store_settings())
        .await
        .with_context(|| format!("while opening the database {}", super::masked(database)))?;
    let bytes = store
        .backup_to(&args.file)
        .await
        .with_context(|| format!("while backing up {}", super::masked(database)))?;
    store.close().await;
    outln!(
        "backed up {} to {} ({:.1} MB)",
        super::masked(database),
        args.file.display(),
        bytes as f64 / 1e6
    );
    Ok(())
}
