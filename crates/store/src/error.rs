//! The store's one error type.

use crate::ids::JobId;

/// What can go wrong in the store. Callers act on [`Error::NotFound`], [`Error::Conflict`]
/// and [`Error::LeaseLost`]; [`Error::is_unavailable`] tells a database that is down or
/// unreachable (retry later) from a statement that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No row with that id or key.
    #[error("{what} {key} not found")]
    NotFound {
        /// What was looked for ("work", "job", ...).
        what: &'static str,
        /// The id or key asked for.
        key: String,
    },
    /// The write would break a uniqueness rule or a state transition.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The job's lease expired (and another worker may own it now) or it was released.
    #[error("lease on job {job} attempt {attempt} is lost: it expired or the job was released")]
    LeaseLost {
        /// The job.
        job: JobId,
        /// The attempt whose lease was lost.
        attempt: u32,
    },
    /// A database URL with a scheme the store does not speak.
    #[error(
        "unsupported database url {url}: use sqlite://PATH (e.g. sqlite://data/copyhound.db) \
         or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
    )]
    UnsupportedUrl {
        /// The URL, password masked.
        url: String,
    },
    /// A value the store cannot accept (bad cron expression, bad payload, oversized value).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Applying the migrations failed.
    #[error("applying {backend} migrations failed: {error}")]
    Migrate {
        /// "postgres" or "sqlite".
        backend: &'static str,
        /// The migrator's error.
        error: sqlx::migrate::MigrateError,
    },
    /// The database refused or failed a statement, or could not be reached.
    // The message carries the driver's; it is not also chained as a source, which would
    // print it twice in `{:#}` chains.
    #[error("database error: {0}")]
    Backend(sqlx::Error),
    /// The object store of bodies (`[storage] bodies`) could not be reached or refused a
    /// request; the same call may succeed later.
    #[error("object store: {0}")]
    ObjectStore(String),
    /// A body read back from a segment is not what its row says (a damaged record).
    #[error("corrupt body: {0}")]
    CorruptBody(String),
}

/// The store's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn not_found(what: &'static str, key: impl ToString) -> Self {
        Error::NotFound {
            what,
            key: key.to_string(),
        }
    }

    /// `Ok` when a write touched a row, [`Error::NotFound`] when it touched none.
    pub(crate) fn found(rows: u64, what: &'static str, key: impl ToString) -> Result<()> {
        if rows == 0 {
            Err(Error::not_found(what, key))
        } else {
            Ok(())
        }
    }

    /// True when the database could not be reached or the connection broke: the same call
    /// may succeed later (a restarted server, a full pool). False for a statement error.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Error::Backend(e) => {
                matches!(
                    e,
                    sqlx::Error::Io(_)
                        | sqlx::Error::Tls(_)
                        | sqlx::Error::PoolTimedOut
                        | sqlx::Error::PoolClosed
                        | sqlx::Error::WorkerCrashed
                        | sqlx::Error::Protocol(_)
                ) || sqlite_busy(e)
                    || e.as_database_error().is_some_and(|d| {
                        // 57P01 admin_shutdown (server restart, pg_terminate_backend),
                        // 57P02/57P03 crash_shutdown/cannot_connect_now, 08xxx connection
                        // exceptions.
                        d.code()
                            .is_some_and(|c| c.starts_with("57P") || c.starts_with("08"))
                    })
            }
            _ => false,
        }
    }

    /// True when a write failed only because the SQLite write lock is held: SQLITE_BUSY or
    /// SQLITE_LOCKED (any extended code), or no turn on this process's writer connection
    /// within `acquire_timeout`. The same write may succeed once the holder commits.
    pub fn is_lock_contention(&self) -> bool {
        matches!(self, Error::Backend(e) if sqlite_busy(e) || matches!(e, sqlx::Error::PoolTimedOut))
    }
}

/// SQLITE_BUSY (5) or SQLITE_LOCKED (6); sqlx reports the extended code (517 is
/// SQLITE_BUSY_SNAPSHOT, 262 SQLITE_LOCKED_SHAREDCACHE, ...), whose low byte is the primary.
fn sqlite_busy(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.try_downcast_ref::<sqlx::sqlite::SqliteError>())
        .and_then(|d| sqlx::error::DatabaseError::code(d)?.parse::<i32>().ok())
        .is_some_and(|code| matches!(code & 0xff, 5 | 6))
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        if let Some(d) = e.as_database_error()
            && d.is_unique_violation()
        {
            return Error::Conflict(d.message().to_owned());
        }
        Error::Backend(e)
    }
}
