//! One module per subcommand, and what the database commands share.

pub mod backup;
pub mod bench;
pub mod cases;
pub mod check;
pub mod completions;
pub mod config;
pub mod crawl;
pub mod crawls;
pub mod demo;
pub mod discover;
pub mod doctor;
pub mod gc;
pub mod index;
pub mod migrate;
pub mod notices;
pub mod notify;
pub mod rematch;
pub mod reports;
pub mod serve;
pub mod sites;
pub mod snapshots;
pub mod stats;
pub mod storage;
pub mod users;
pub mod worker;
pub mod works;

use std::io::{ErrorKind, Write as _};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use store::{Store, StoreSettings};

/// Set once Ctrl-C stopped a command that shuts down cleanly on it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit status of a command stopped by Ctrl-C: 128 + SIGINT, what a shell reports for a
/// process the signal killed.
pub const INTERRUPTED_EXIT: u8 = 130;

/// Records that Ctrl-C (SIGINT) stopped the command.
pub fn mark_interrupted() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether Ctrl-C stopped the command.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Whether to colour what goes to a stream: only a terminal, and never when `NO_COLOR` is
/// set to anything but the empty string (<https://no-color.org>).
pub fn use_color(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The database URL for messages, password masked.
pub fn masked(url: &str) -> String {
    store::mask_password(url)
}

/// How commands open the store: set once by `main` from the global flags, defaults
/// otherwise (unit tests).
static STORE_SETTINGS: OnceLock<StoreSettings> = OnceLock::new();

/// Sets the store settings every command opens the database with (`main`, once).
pub fn set_store_settings(settings: StoreSettings) {
    let _ = STORE_SETTINGS.set(settings);
}

/// The store settings commands open the database with.
pub fn store_settings() -> StoreSettings {
    STORE_SETTINGS.get().cloned().unwrap_or_default()
}

/// A number of seconds from the command line: finite, not negative.
pub fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..1e9).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds: give one like 10 or 0.5 (0 or more)"
        )),
    }
}

/// A pipeline error as it is, or the message `missing` makes when what the call needed
/// does not exist (a mistyped id).
pub fn or_missing(missing: impl FnOnce() -> String) -> impl FnOnce(jobs::Error) -> anyhow::Error {
    move |e| {
        if e.is_not_found() {
            anyhow::anyhow!(missing())
        } else {
            e.into()
        }
    }
}

/// Opens the database and applies pending migrations.
pub async fn open_store(url: &str) -> Result<Store> {
    Store::open(url, &store_settings()).await.with_context(|| {
        format!(
            "while opening the database {} (set by --database or COPYHOUND_DATABASE_URL)",
            masked(url)
        )
    })
}

/// Runs `command` on the database at `url` (see [`open_store`]) and closes the database
/// after it, whether it succeeded or not.
pub async fn on_store<T>(url: &str, command: impl AsyncFnOnce(&Store) -> Result<T>) -> Result<T> {
    let store = open_store(url).await?;
    let result = command(&store).await;
    store.close().await;
    result
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

/// Writes `text` to standard output; [`StdoutClosed`] when the reader has gone. Every
/// control character but line feeds and tabs, and every bidi override, is written as
/// `\uXXXX` (`bounds::text::escape_controls`): commands print stored titles, names and URLs
/// that came from files, the API and crawled pages, and an ESC sequence among them must not
/// drive the terminal.
pub fn write_stdout(text: &str) -> Result<()> {
    write_stdout_styled(&bounds::text::escape_controls(text))
}

/// [`write_stdout`] without the escaping, for output that colours itself (`check` on a
/// terminal) and has escaped what it prints from the store.
pub fn write_stdout_styled(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        other => Ok(other.context("while writing to standard output")?),
    }
}
