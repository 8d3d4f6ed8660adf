//! `copyhound migrate`: apply the embedded migrations (the other commands do it at start too).

use anyhow::{Context, Result};
use clap::Args;
use store::Store;

use super::outln;

/// Options of `migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Only list the migrations and whether each is applied.
    #[arg(long)]
    status: bool,
}

/// Runs `migrate` against the database at `database`.
pub async fn run(args: MigrateArgs, database: &str) -> Result<()> {
    let url = super::masked(database);
    let store = Store::connect(database, &super::store_settings())
        .await
        .with_context(|| format!("while opening the database {url}"))?;
    let before = store.migration_status().await?;
    if !args.status {
        store
            .migrate()
            .await
            .with_context(|| format!("while applying {} migrations to {url}", store.kind()))?;
    }
    let after = store.migration_status().await?;
    for (m, was) in after.iter().zip(&before) {
        let state = match (was.applied, m.applied) {
            (true, _) => "applied",
            (false, true) => "applied now",
            (false, false) => "pending",
        };
        outln!("{} {:<24} {state}", m.version, m.description);
    }
    outln!(
        "{} database {url} is {}",
        store.kind(),
        if after.iter().all(|m| m.applied) {
            "up to date"
        } else {
            "behind: run `copyhound migrate`"
        }
    );
    store.close().await;
    Ok(())
}
