//! The one error type of the crates that join the stages, with the small data types it
//! carries (a mail not sent, a setting refused).

use std::path::PathBuf;

use serde::Serialize;

/// What joining the stages can fail with, split by what a caller does about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The store failed (or a row is missing: [`Error::is_not_found`]).
    #[error("while {doing}")]
    Store {
        /// What was being done.
        doing: &'static str,
        /// The store's error.
        #[source]
        source: store::Error,
    },
    /// The crawler refused or failed (settings, fetch, a crawl's store).
    #[error(transparent)]
    Crawler(#[from] crawler::Error),
    /// The matcher's index or settings refused something.
    #[error("while {doing}")]
    Matcher {
        /// What was being done.
        doing: &'static str,
        /// The matcher's error.
        #[source]
        source: matcher::Error,
    },
    /// A work could not be registered (the store failed, or the text is not a work).
    #[error("while registering a work")]
    Import(#[source] import::Error),
    /// Fingerprint settings out of range.
    #[error("invalid [fingerprint] settings")]
    Fingerprint(#[source] fingerprint::Error),
    /// A local input cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A page that cannot be matched: an HTTP error status, a page over a parsing limit, an
    /// input that is neither a file nor an http(s) URL.
    #[error("{0}")]
    Page(String),
    /// A task of ours panicked or was cancelled.
    #[error("{what} failed: {reason}")]
    Task {
        /// Which task.
        what: &'static str,
        /// The panic or cancellation.
        reason: String,
    },
    /// An export could not be written (a full disk, a closed pipe: see
    /// [`std::io::ErrorKind::BrokenPipe`] on the source).
    #[error("while writing the export")]
    Write(#[source] std::io::Error),
    /// A takedown notice cannot be drafted as asked (an unknown template, a bad recipient,
    /// an incomplete rights-holder profile); the message says what to change.
    #[error("{0}")]
    Notice(String),
    /// An SMTP server did not take a message ([`NotSent::permanent`] says
    /// whether sending again can help); the message says why, with the server's reply.
    #[error(transparent)]
    Mail(NotSent),
    /// An account input was refused (a user name, a password, a token's name); the message
    /// says what is allowed.
    #[error("{0}")]
    Account(String),
    /// An input given by hand was refused as given (a seed URL, a crawl's settings); the
    /// message says what to give instead.
    #[error("{0}")]
    Refused(String),
    /// Settings given in the UI were refused, each by its key; nothing was saved.
    #[error("{}", Refusal::list(.0))]
    Settings(Vec<Refusal>),
    /// A notice template failed to render.
    #[error("while rendering a notice")]
    Render(#[source] askama::Error),
    /// The time-stamping authority failed or its token was refused
    /// ([`timestamp::Error::is_transient`] says whether to try again).
    #[error("while stamping snapshot {snapshot}")]
    Timestamp {
        /// The snapshot.
        snapshot: store::SnapshotId,
        /// Why.
        #[source]
        source: timestamp::Error,
    },
    /// A file of an evidence package exists and overwriting was not asked for; nothing was
    /// written.
    #[error("{} exists; nothing was written (overwrite with --force)", .0.display())]
    Exists(PathBuf),
    /// A file or folder of an evidence package cannot be written.
    #[error("cannot write {}", path.display())]
    WriteFile {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An index snapshot was refused (damaged, truncated, of another version or settings);
    /// the message says why. A worker loads from the store instead.
    #[error("index snapshot {location} refused: {reason}")]
    Snapshot {
        /// The file or object.
        location: String,
        /// Why.
        reason: matcher::SnapshotError,
    },
    /// A value could not be serialised for the store.
    #[error("while encoding {what}")]
    Encode {
        /// What.
        what: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// This crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether a row the operation needed does not exist (a snapshot without text, a
    /// deleted crawl): retrying will not help.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Store { source, .. } => matches!(source, store::Error::NotFound { .. }),
            Error::Crawler(crawler::Error::Store { source, .. }) => matches!(
                source.downcast_ref::<store::Error>(),
                Some(store::Error::NotFound { .. })
            ),
            _ => false,
        }
    }

    /// A task of ours that panicked or was cancelled, as an error.
    pub fn task(what: &'static str, e: impl std::fmt::Display) -> Self {
        Error::Task {
            what,
            reason: e.to_string(),
        }
    }
}

/// `map_err` for store calls: `.map_err(store_err("reading a page text"))`.
pub fn store_err(doing: &'static str) -> impl FnOnce(store::Error) -> Error {
    move |source| Error::Store { doing, source }
}

/// `map_err` for matcher calls.
pub fn matcher_err(doing: &'static str) -> impl FnOnce(matcher::Error) -> Error {
    move |source| Error::Matcher { doing, source }
}

/// Why a message did not go out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct NotSent {
    /// In words, with the server's reply when there was one.
    pub reason: String,
    /// The server refused for good (a 5xx reply): sending again will not help.
    pub permanent: bool,
}

/// What is wrong with a value, for the UI to say in the user's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    /// Longer than the key allows.
    TooLong,
    /// A control character (a line break in a one-line value).
    ControlCharacter,
    /// Not an email address.
    NotAnEmail,
    /// Not a telephone number.
    NotAPhoneNumber,
    /// Neither `dmca` nor `cn`.
    UnknownTemplate,
    /// Not an IANA time zone name.
    UnknownTimeZone,
    /// A line of the abuse contacts is not `host = address`.
    BadContact,
    /// Not a key the UI may change.
    UnknownKey,
}

/// A refused value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The key.
    pub key: String,
    /// What is wrong.
    pub problem: Problem,
    /// The same in English with the value, for logs and the API.
    pub message: String,
}

impl Refusal {
    /// A refusal of `key`'s value.
    pub fn new(key: &str, problem: Problem, message: String) -> Self {
        Refusal {
            key: key.to_owned(),
            problem,
            message,
        }
    }

    /// Refusals as one message.
    pub fn list(refusals: &[Refusal]) -> String {
        refusals
            .iter()
            .map(|r| format!("{}: {}", r.key, r.message))
            .collect::<Vec<_>>()
            .join("; ")
    }
}
