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

use std::io::{ErrorKind, Write as _};

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

/// Standard output was closed by its reader (`copyhound check DIR | head`): not an error;
/// the command ends early and `main` exits with success.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub struct StdoutClosed;

/// `println!` for commands: writes through [`write_stdout`] and returns [`StdoutClosed`] from
/// the calling function (with `?`) when the reader has gone, where `println!` would panic.
macro_rules! outln {
    () => {
        $crate::cmd::write_stdout("\n")?
    };
    ($($arg:tt)*) => {
        $crate::cmd::write_stdout(&format!("{}\n", format_args!($($arg)*)))?
    };
}
pub(crate) use outln;

/// Writes `text` to standard output; [`StdoutClosed`] when the reader has gone.
pub fn write_stdout(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        other => Ok(other.context("while writing to standard output")?),
    }
}
