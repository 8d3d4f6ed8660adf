//! The change log of registered works: one row per work added or removed, written in the
//! same transaction as the work, so a long-lived matcher index can follow the works without
//! reloading (read the rows after the last sequence number applied, apply them, repeat).
//!
//! Sequence numbers must become visible in order, or a reader that saw 11 would never see a
//! 10 committed later. SQLite has one writer, so they do. On Postgres an identity value is
//! taken at insert but seen at commit; each writer therefore locks `work_changes` (a mode
//! that conflicts with itself but not with reads) before its insert and keeps the lock until
//! it commits, so writers of works follow one another through the log and readers are never
//! blocked.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::read_pool;
use crate::ids::WorkId;
use crate::{Error, Result, Store};

/// What happened to a work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkChangeKind {
    /// The work and its chapters were stored.
    Added,
    /// The work and its chapters were deleted.
    Removed,
}

impl WorkChangeKind {
    /// The name kept in `work_changes.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkChangeKind::Added => "added",
            WorkChangeKind::Removed => "removed",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "added" => Ok(WorkChangeKind::Added),
            "removed" => Ok(WorkChangeKind::Removed),
            other => Err(Error::InvalidInput(format!(
                "unknown work change kind {other:?} in work_changes"
            ))),
        }
    }
}

/// One row of the change log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkChange {
    /// Its position in the log (increasing, with gaps).
    pub seq: i64,
    /// The work (which may no longer exist).
    pub work_id: WorkId,
    /// What happened.
    pub kind: WorkChangeKind,
    /// When.
    pub at: DateTime<Utc>,
}

/// Reads of the change log.
pub trait WorkChanges {
    /// Up to `limit` changes with a sequence number above `after`, oldest first.
    fn changes_since(
        &self,
        after: i64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<WorkChange>>> + Send;

    /// The newest sequence number (0 when the log is empty): where a reader that has just
    /// loaded every work starts.
    fn last_change(&self) -> impl Future<Output = Result<i64>> + Send;
}

#[derive(sqlx::FromRow)]
struct ChangeRow {
    seq: i64,
    work_id: WorkId,
    kind: String,
    at: DateTime<Utc>,
}

impl WorkChanges for Store {
    #[instrument(skip(self))]
    async fn changes_since(&self, after: i64, limit: u32) -> Result<Vec<WorkChange>> {
        let rows: Vec<ChangeRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT seq, work_id, kind, at FROM work_changes WHERE seq > $1 \
                 ORDER BY seq LIMIT $2",
            )
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        });
        rows.into_iter()
            .map(|r| {
                Ok(WorkChange {
                    seq: r.seq,
                    work_id: r.work_id,
                    kind: WorkChangeKind::parse(&r.kind)?,
                    at: r.at,
                })
            })
            .collect()
    }

    #[instrument(skip(self))]
    async fn last_change(&self) -> Result<i64> {
        let last: Option<i64> = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT MAX(seq) FROM work_changes")
                .fetch_one(pool)
                .await?
        });
        Ok(last.unwrap_or(0))
    }
}

/// Appends to the change log inside a work write's transaction.
pub(crate) trait LogChange {
    fn log_change(
        &mut self,
        work_id: i64,
        kind: WorkChangeKind,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// Inserts the row on either backend's connection.
macro_rules! insert_change {
    ($conn:expr, $work_id:expr, $kind:expr) => {
        sqlx::query("INSERT INTO work_changes (work_id, kind) VALUES ($1, $2)")
            .bind($work_id)
            .bind($kind.as_str())
            .execute($conn)
            .await?
    };
}

impl LogChange for sqlx::PgConnection {
    async fn log_change(&mut self, work_id: i64, kind: WorkChangeKind) -> Result<()> {
        // Held until commit: see the module docs.
        sqlx::query("LOCK TABLE work_changes IN SHARE ROW EXCLUSIVE MODE")
            .execute(&mut *self)
            .await?;
        insert_change!(&mut *self, work_id, kind);
        Ok(())
    }
}

impl LogChange for sqlx::SqliteConnection {
    async fn log_change(&mut self, work_id: i64, kind: WorkChangeKind) -> Result<()> {
        insert_change!(&mut *self, work_id, kind);
        Ok(())
    }
}
