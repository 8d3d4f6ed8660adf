//! Reads for operating copyhound ([`OpsReads`]): is the database reachable and its schema
//! this build's, and the few counts `/metrics` exposes; and [`Store::backup_to`], a consistent
//! copy of a SQLite database taken while it is in use.
//!
//! Every read here is meant for a scrape every few seconds: match counts come from the
//! `detections_daily` counters (days × works rows, never the matches), the queue depth from
//! the `jobs_status` index with finished jobs left out.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};

use sqlx::Row;
use tracing::instrument;

use crate::db::{Backend, read_pool};
use crate::{BackendKind, Error, MigrationStatus, Result, Store};

/// How the database's schema compares with this build's migrations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaState {
    /// Migrations this build carries that the database lacks (`copyhound migrate` applies
    /// them).
    pub pending: Vec<MigrationStatus>,
    /// Versions applied to the database that this build does not know: a newer copyhound
    /// migrated it, and this one may not read it correctly.
    pub unknown: Vec<i64>,
}

impl SchemaState {
    /// Whether the schema is exactly this build's.
    pub fn is_current(&self) -> bool {
        self.pending.is_empty() && self.unknown.is_empty()
    }
}

/// Matches recorded so far, from the per-day counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MatchTotals {
    /// Matches off licensed domains.
    pub matches: u64,
    /// Matches on licensed domains.
    pub licensed: u64,
}

/// Jobs of one queue, kind and state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobDepth {
    /// The queue.
    pub queue: String,
    /// The job kind.
    pub kind: String,
    /// `queued`, `running` or `dead` (done jobs are not counted).
    pub status: String,
    /// How many.
    pub jobs: u64,
}

/// What a running system is asked by its health checks, `/metrics` and `copyhound doctor`.
pub trait OpsReads {
    /// One round trip to the database.
    ///
    /// # Errors
    /// [`Error::Backend`] when it cannot be reached or refuses the statement.
    fn ping(&self) -> impl Future<Output = Result<()>> + Send;

    /// The schema against this build's migrations.
    ///
    /// # Errors
    /// [`Error::Backend`] when the database cannot be read.
    fn schema_state(&self) -> impl Future<Output = Result<SchemaState>> + Send;

    /// Matches recorded, licensed apart.
    fn match_totals(&self) -> impl Future<Output = Result<MatchTotals>> + Send;

    /// Jobs not yet done, by queue, kind and state; queue, kind and state order.
    fn job_depth(&self) -> impl Future<Output = Result<Vec<JobDepth>>> + Send;

    /// For each queue with a job due at `now` and not claimed, how long the one due longest
    /// has waited: the queue's latency, whichever process runs it. Queue order.
    fn queue_wait(
        &self,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<(String, Duration)>>> + Send;
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl OpsReads for Store {
    #[instrument(skip_all)]
    async fn ping(&self) -> Result<()> {
        let one: i32 = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT 1").fetch_one(pool).await?
        });
        debug_assert_eq!(one, 1);
        Ok(())
    }

    #[instrument(skip_all)]
    async fn schema_state(&self) -> Result<SchemaState> {
        // The table is missing until the first migration: then everything is pending.
        let exists_sql = match self.kind() {
            BackendKind::Postgres => {
                "SELECT COUNT(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = '_sqlx_migrations'"
            }
            BackendKind::Sqlite => {
                "SELECT COUNT(*) FROM sqlite_master \
                 WHERE type = 'table' AND name = '_sqlx_migrations'"
            }
        };
        let applied: Vec<i64> = read_pool!(self, |pool| {
            let exists: i64 = sqlx::query_scalar(exists_sql).fetch_one(pool).await?;
            if exists == 0 {
                Vec::new()
            } else {
                sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
                    .fetch_all(pool)
                    .await?
            }
        });
        let known = crate::db::migrator(self.kind())
            .iter()
            .filter(|m| m.migration_type.is_up_migration());
        let mut state = SchemaState::default();
        let mut known_versions = Vec::new();
        for m in known {
            known_versions.push(m.version);
            if !applied.contains(&m.version) {
                state.pending.push(MigrationStatus {
                    version: m.version,
                    description: m.description.to_string(),
                    applied: false,
                });
            }
        }
        state.unknown = applied
            .into_iter()
            .filter(|v| !known_versions.contains(v))
            .collect();
        state.unknown.sort_unstable();
        Ok(state)
    }

    #[instrument(skip_all)]
    async fn match_totals(&self) -> Result<MatchTotals> {
        let rows: Vec<(bool, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT licensed, CAST(SUM(matches) AS BIGINT) FROM detections_daily \
                 GROUP BY licensed",
            )
            .fetch_all(pool)
            .await?
        });
        let mut totals = MatchTotals::default();
        for (licensed, n) in rows {
            if licensed {
                totals.licensed += count(n);
            } else {
                totals.matches += count(n);
            }
        }
        Ok(totals)
    }

    #[instrument(skip_all)]
    async fn job_depth(&self) -> Result<Vec<JobDepth>> {
        let rows = read_pool!(self, |pool| {
            sqlx::query(
                "SELECT queue, kind, status, COUNT(*) FROM jobs \
                 WHERE status IN ('queued', 'running', 'dead') \
                 GROUP BY queue, kind, status ORDER BY queue, kind, status",
            )
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(|row| {
                Ok(JobDepth {
                    queue: row.try_get(0)?,
                    kind: row.try_get(1)?,
                    status: row.try_get(2)?,
                    jobs: count(row.try_get(3)?),
                })
            })
            .collect::<std::result::Result<Vec<_>, sqlx::Error>>()?
        });
        Ok(rows)
    }

    #[instrument(skip_all)]
    async fn queue_wait(&self, now: DateTime<Utc>) -> Result<Vec<(String, Duration)>> {
        // Over the partial index `jobs_claim`, which holds queued jobs only.
        let now_ms = crate::queue::millis(now);
        let rows: Vec<(String, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT queue, MIN(run_at) FROM jobs WHERE status = 'queued' AND run_at <= $1 \
                 GROUP BY queue ORDER BY queue",
            )
            .bind(now_ms)
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(queue, due)| {
                let waited = u64::try_from(now_ms.saturating_sub(due)).unwrap_or(0);
                (queue, Duration::from_millis(waited))
            })
            .collect())
    }
}

impl Store {
    /// Writes a consistent copy of a SQLite database to `target` while other connections and
    /// processes go on reading and writing: `VACUUM INTO` reads one snapshot of the database
    /// (a read transaction, which in WAL mode blocks no writer) and writes it compacted, with
    /// every committed transaction up to its start and none after. Returns the copy's size in
    /// bytes.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] on Postgres (use `pg_dump`), for an in-memory database, or when
    /// `target` exists; [`Error::Backend`] when the copy cannot be written.
    #[instrument(skip(self))]
    pub async fn backup_to(&self, target: &Path) -> Result<u64> {
        let Backend::Sqlite { reader, .. } = &self.backend else {
            return Err(Error::InvalidInput(
                "copyhound backup copies SQLite databases; back up Postgres with pg_dump \
                 (e.g. `pg_dump --format=custom --file copyhound.dump DATABASE_URL`)"
                    .to_owned(),
            ));
        };
        let source = self.url().expose();
        if source.contains(":memory:") || source.contains("mode=memory") {
            return Err(Error::InvalidInput(
                "an in-memory database cannot be backed up".to_owned(),
            ));
        }
        if target.exists() {
            return Err(Error::InvalidInput(format!(
                "{} exists: give a new file name (the backup never overwrites)",
                target.display()
            )));
        }
        let Some(path) = target.to_str() else {
            return Err(Error::InvalidInput(format!(
                "{} is not valid UTF-8: give another file name",
                target.display()
            )));
        };
        if path.contains('\0') {
            return Err(Error::InvalidInput(
                "the backup file name holds a NUL character".to_owned(),
            ));
        }
        // The file name is bound as a parameter: VACUUM INTO takes any expression.
        sqlx::query("VACUUM INTO $1")
            .bind(path)
            .execute(reader)
            .await?;
        let bytes = std::fs::metadata(target).map(|m| m.len()).map_err(|e| {
            Error::InvalidInput(format!("reading the backup {}: {e}", target.display()))
        })?;
        Ok(bytes)
    }
}

impl Store {
    /// The bytes the database holds in use: on SQLite its pages less the free ones (what a
    /// `VACUUM` would leave), on Postgres the tables of the store's schema with their
    /// indexes and TOAST (dead rows included until a vacuum reclaims them: see
    /// [`Store::compact`]). For sizing and for `bench pipeline`'s bytes a page.
    ///
    /// # Errors
    /// [`Error::Backend`] when the database cannot be read.
    #[instrument(skip_all)]
    pub async fn database_bytes(&self) -> Result<u64> {
        let sql = match self.kind() {
            BackendKind::Postgres => {
                "SELECT CAST(COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS BIGINT) \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')"
            }
            BackendKind::Sqlite => {
                "SELECT (c.page_count - f.freelist_count) * s.page_size \
                 FROM pragma_page_count() c, pragma_freelist_count() f, pragma_page_size() s"
            }
        };
        let n: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar(sql).fetch_one(pool).await?
        });
        Ok(count(n))
    }

    /// Rewrites the database without the space of rows removed or emptied, so that
    /// [`Store::database_bytes`] counts live rows only: on SQLite `VACUUM`, on Postgres
    /// `VACUUM FULL` of the store schema's tables. Each table is locked while it is
    /// rewritten: for a measurement or a maintenance window, not a running deployment.
    ///
    /// # Errors
    /// [`Error::Backend`] when the database refuses (another process holding a lock).
    #[instrument(skip_all)]
    pub async fn compact(&self) -> Result<()> {
        match &self.backend {
            Backend::Postgres(pool) => {
                let tables: Vec<String> = sqlx::query_scalar(
                    "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c \
                     JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE n.nspname = current_schema() AND c.relkind = 'r' ORDER BY 1",
                )
                .fetch_all(pool)
                .await?;
                if !tables.is_empty() {
                    // Names quoted by the server's `format('%I')`.
                    let sql = format!("VACUUM FULL {}", tables.join(", "));
                    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                        .execute(pool)
                        .await?;
                }
            }
            Backend::Sqlite { writer, .. } => {
                sqlx::raw_sql("VACUUM").execute(writer).await?;
            }
        }
        Ok(())
    }
}
