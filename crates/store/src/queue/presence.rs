//! Which worker loops are alive: each renews its row of `workers` at every maintenance round
//! and deletes it when it stops, so a reader (the dashboard) can tell that no worker serves
//! the queues. A worker killed without stopping leaves its row, which stops being renewed.

use std::future::Future;

use chrono::{DateTime, TimeDelta, Utc};
use tracing::instrument;

use super::{from_millis, millis};
use crate::db::{read_pool, write_pool};
use crate::{Result, Store};

/// How long the row of a worker that stopped without saying so is kept: long enough to show
/// when a worker was last seen, short enough that rows of restarts do not pile up.
const FORGET_AFTER: TimeDelta = TimeDelta::days(7);

/// A worker loop as last seen.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WorkerSeen {
    /// Its name (`jobs.locked_by` of its claims).
    pub name: String,
    /// The queue it serves.
    pub queue: String,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it last said it was alive.
    pub seen_at: DateTime<Utc>,
}

/// Worker loops saying they are alive, and readers asking which are.
pub trait WorkerPresence {
    /// Notes that worker `name`, serving `queue` since `started_at`, is alive at `now`.
    ///
    /// # Errors
    /// [`crate::Error::Backend`] when the database fails.
    fn worker_alive(
        &self,
        name: &str,
        queue: &str,
        started_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Forgets worker `name`: it stopped.
    ///
    /// # Errors
    /// [`crate::Error::Backend`] when the database fails.
    fn worker_stopped(&self, name: &str) -> impl Future<Output = Result<()>> + Send;

    /// The `limit` workers seen most recently, most recent first.
    ///
    /// # Errors
    /// [`crate::Error::Backend`] when the database fails.
    fn workers_seen(&self, limit: u32) -> impl Future<Output = Result<Vec<WorkerSeen>>> + Send;
}

impl WorkerPresence for Store {
    #[instrument(skip(self, started_at, now))]
    async fn worker_alive(
        &self,
        name: &str,
        queue: &str,
        started_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        write_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO workers (name, queue, started_at, seen_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (name) DO UPDATE SET queue = excluded.queue, \
                 started_at = excluded.started_at, seen_at = excluded.seen_at",
            )
            .bind(name)
            .bind(queue)
            .bind(millis(started_at))
            .bind(millis(now))
            .execute(pool)
            .await?;
        });
        write_pool!(self, |pool| {
            sqlx::query("DELETE FROM workers WHERE seen_at < $1")
                .bind(millis(now - FORGET_AFTER))
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    #[instrument(skip(self))]
    async fn worker_stopped(&self, name: &str) -> Result<()> {
        write_pool!(self, |pool| {
            sqlx::query("DELETE FROM workers WHERE name = $1")
                .bind(name)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    #[instrument(skip(self))]
    async fn workers_seen(&self, limit: u32) -> Result<Vec<WorkerSeen>> {
        let rows: Vec<(String, String, i64, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT name, queue, started_at, seen_at FROM workers \
                 ORDER BY seen_at DESC, name LIMIT $1",
            )
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(name, queue, started_at, seen_at)| WorkerSeen {
                name,
                queue,
                started_at: from_millis(started_at),
                seen_at: from_millis(seen_at),
            })
            .collect())
    }
}
