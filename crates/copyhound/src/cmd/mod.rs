//! One module per subcommand, and what the database commands share.

pub mod bench;
pub mod bench_load;
pub mod check;
pub mod crawl;
pub mod migrate;
pub mod quality;
pub mod snapshots;
pub mod worker;
pub mod works;

use anyhow::{Context, Result};
use store::{Store, StoreSettings};

/// The database URL for messages, password masked.
pub fn masked(url: &str) -> String {
    store::mask_password(url)
}

/// Opens the database and applies pending migrations.
pub async fn open_store(url: &str) -> Result<Store> {
    Store::open(url, &StoreSettings::default())
        .await
        .with_context(|| {
            format!(
                "while opening the database {} (set by --database or COPYHOUND_DATABASE_URL)",
                masked(url)
            )
        })
}
