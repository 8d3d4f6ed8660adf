//! The durable job queue, kept in the `jobs` table of the same database.
//!
//! A job is a value of a serde enum named by what it does (copyhound's is `pipeline::Job`);
//! its variant name
//! is the job's `kind` and the whole value, as JSON, its payload. The life of a job:
//!
//! ```text
//! enqueue ─► queued ─claim─► running ─complete─► done
//!              ▲               │ fail / lease expired
//!              └── backoff ◄───┤
//!                              └── attempts used up ─► dead ─retry_dead─► queued
//! ```
//!
//! A claim takes a lease (`locked_until`) that the worker renews with heartbeats; a lease
//! that runs out (the worker died) puts the job back, so handlers must be idempotent. Each
//! lease is fenced by its attempt number: a worker whose lease was taken over can no longer
//! complete or fail the job ([`Error::LeaseLost`]).
//!
//! On Postgres the claim uses `FOR UPDATE SKIP LOCKED`, so any number of worker processes
//! claim in parallel without blocking each other; on SQLite the claim is one statement on
//! the single writer connection, which makes it atomic.
//!
//! Why not a library: apalis 1.0 (the one queue on sqlx 0.9 with both backends) keeps its
//! own schemas and migration tables per backend and needs the `hstore` extension; our own
//! table lets the admin UI list and retry jobs with plain SQL, lets a stage store its result
//! and enqueue the next job in one transaction, and pins no second sqlx.

mod presence;
pub(crate) mod schedule;
mod worker;

use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::AssertSqlSafe;
use tracing::instrument;

use crate::db::{Backend, read_pool, write_pool};
use crate::ids::JobId;
use crate::works::Page;
use crate::{Error, Result, Store};

pub use presence::{WorkerPresence, WorkerSeen};
pub use schedule::{Schedule, Schedules, check_cron};
pub use worker::{
    Backoff, JobContext, JobError, ShutdownSignal, Worker, WorkerReport, WorkerSettings,
};

/// The queue a job goes to when [`NewJob::queue`] is not called.
pub const DEFAULT_QUEUE: &str = "default";

/// A job to enqueue: the payload plus how and when to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJob {
    pub(crate) queue: String,
    pub(crate) kind: String,
    pub(crate) payload: String,
    pub(crate) run_at: Option<DateTime<Utc>>,
    pub(crate) dedupe_key: Option<String>,
    pub(crate) priority: i32,
    pub(crate) max_attempts: u32,
}

impl NewJob {
    /// Attempts before a job is `dead`, unless [`NewJob::max_attempts`] says otherwise.
    pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

    /// A job for the default queue, to run now, with no de-duplication key.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when `job` does not serialise as an enum variant (its name
    /// becomes the job's kind).
    pub fn new<J: Serialize>(job: &J) -> Result<Self> {
        let value = serde_json::to_value(job)
            .map_err(|e| Error::InvalidInput(format!("job payload does not serialise: {e}")))?;
        let kind = match &value {
            serde_json::Value::String(unit) => unit.clone(),
            serde_json::Value::Object(map) if map.len() == 1 => {
                map.keys().next().cloned().unwrap_or_default()
            }
            other => {
                return Err(Error::InvalidInput(format!(
                    "job payload must be an enum variant, got {other}"
                )));
            }
        };
        Ok(NewJob {
            queue: DEFAULT_QUEUE.to_owned(),
            kind,
            payload: value.to_string(),
            run_at: None,
            dedupe_key: None,
            priority: 0,
            max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
        })
    }

    /// Sends the job to another queue (each worker serves one queue).
    pub fn queue(mut self, queue: impl Into<String>) -> Self {
        self.queue = queue.into();
        self
    }

    /// Runs the job no earlier than `at`.
    pub fn run_at(mut self, at: DateTime<Utc>) -> Self {
        self.run_at = Some(at);
        self
    }

    /// While a job with this key is queued or running, enqueueing another returns the
    /// existing one ([`Enqueued::Duplicate`]).
    pub fn dedupe_key(mut self, key: impl Into<String>) -> Self {
        self.dedupe_key = Some(key.into());
        self
    }

    /// Higher runs first among due jobs of a queue (default 0).
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Attempts before the job is `dead` (at least 1).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// The job's kind: its enum variant's name.
    pub fn kind(&self) -> &str {
        &self.kind
    }
}

/// The outcome of [`JobQueue::enqueue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Enqueued {
    /// A new job.
    New(JobId),
    /// A live job with the same de-duplication key already existed; nothing was added.
    Duplicate(JobId),
}

impl Enqueued {
    /// The job's id either way.
    pub fn id(self) -> JobId {
        match self {
            Enqueued::New(id) | Enqueued::Duplicate(id) => id,
        }
    }
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Waiting for its run-at time and a worker.
    Queued,
    /// Claimed by a worker whose lease has not run out.
    Running,
    /// Completed.
    Done,
    /// Failed on every attempt; kept for inspection and [`JobQueue::retry_dead`].
    Dead,
}

impl JobStatus {
    /// The name kept in `jobs.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Dead => "dead",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "queued" => JobStatus::Queued,
            "running" => JobStatus::Running,
            "done" => JobStatus::Done,
            "dead" => JobStatus::Dead,
            other => {
                return Err(Error::InvalidInput(format!(
                    "unknown job status {other:?} in the database"
                )));
            }
        })
    }
}

/// The proof that a worker holds a job: its id and the attempt it claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The job.
    pub job: JobId,
    /// The attempt (1 for the first claim); later claims of the same job have higher ones.
    pub attempt: u32,
}

/// A job a worker has claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedJob {
    /// Id and attempt: pass it to complete, fail, heartbeat or release.
    pub lease: Lease,
    /// Attempts allowed in all.
    pub max_attempts: u32,
    /// The job's kind (its enum variant name).
    pub kind: String,
    /// The job as JSON.
    pub payload: String,
}

impl ClaimedJob {
    /// Decodes the payload into the job enum.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when the payload is not a `J` (a kind this build does not
    /// know, or changed fields).
    pub fn decode<J: DeserializeOwned>(&self) -> Result<J> {
        serde_json::from_str(&self.payload).map_err(|e| {
            Error::InvalidInput(format!(
                "job {} of kind {} has a payload this build cannot read: {e}",
                self.lease.job, self.kind
            ))
        })
    }
}

/// What to do with a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Queue it again to run no earlier than this, unless its attempts are used up.
    At(DateTime<Utc>),
    /// Mark it dead now: retrying cannot help.
    Never,
}

/// A job as stored, for inspection (admin UI, CLI, tests).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JobRecord {
    /// Its id.
    pub id: JobId,
    /// Its queue.
    pub queue: String,
    /// Its kind.
    pub kind: String,
    /// The job as JSON.
    pub payload: String,
    /// Where it is.
    pub status: JobStatus,
    /// Higher runs first.
    pub priority: i32,
    /// Attempts started so far.
    pub attempts: u32,
    /// Attempts allowed.
    pub max_attempts: u32,
    /// Not to run before this.
    pub run_at: DateTime<Utc>,
    /// The worker holding it, while running.
    pub locked_by: Option<String>,
    /// When the running worker's lease ends.
    pub locked_until: Option<DateTime<Utc>>,
    /// The error of the last failed attempt (kept after success and retry).
    pub last_error: Option<String>,
    /// Its de-duplication key.
    pub dedupe_key: Option<String>,
    /// When it was enqueued.
    pub created_at: DateTime<Utc>,
    /// When it finished (done or dead).
    pub finished_at: Option<DateTime<Utc>>,
}

/// Which jobs [`JobQueue::jobs`] lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum JobFilter {
    /// Every job.
    #[default]
    All,
    /// Jobs in this state.
    Status(JobStatus),
    /// Jobs of this kind.
    Kind(String),
    /// Jobs of this queue.
    Queue(String),
}

/// How many jobs of a queue are in each state.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueCounts {
    /// The queue.
    pub queue: String,
    /// Waiting (including those scheduled for later).
    pub queued: u64,
    /// Claimed.
    pub running: u64,
    /// Completed and not yet purged.
    pub done: u64,
    /// Dead.
    pub dead: u64,
}

/// The job queue, as producers and workers use it.
pub trait JobQueue {
    /// Adds a job, unless a live job has the same de-duplication key.
    ///
    /// # Errors
    /// [`Error::Backend`] when the database fails.
    fn enqueue(&self, job: &NewJob) -> impl Future<Output = Result<Enqueued>> + Send;

    /// Claims up to `limit` due jobs of `queue` for `worker`, leased for `lease`.
    fn claim(
        &self,
        queue: &str,
        worker: &str,
        limit: u32,
        lease: Duration,
    ) -> impl Future<Output = Result<Vec<ClaimedJob>>> + Send;

    /// Extends a lease to `lease` from now.
    ///
    /// # Errors
    /// [`Error::LeaseLost`] when the lease expired and was reaped, or the job moved on.
    fn heartbeat(&self, lease: Lease, extend: Duration) -> impl Future<Output = Result<()>> + Send;

    /// Marks the job done.
    ///
    /// # Errors
    /// [`Error::LeaseLost`] as for [`JobQueue::heartbeat`].
    fn complete(&self, lease: Lease) -> impl Future<Output = Result<()>> + Send;

    /// Records a failed attempt; returns whether the job is queued again or dead.
    ///
    /// # Errors
    /// [`Error::LeaseLost`] as for [`JobQueue::heartbeat`].
    fn fail(
        &self,
        lease: Lease,
        error: &str,
        retry: Retry,
    ) -> impl Future<Output = Result<JobStatus>> + Send;

    /// Gives a job back without counting the attempt (a worker shutting down).
    ///
    /// # Errors
    /// [`Error::LeaseLost`] as for [`JobQueue::heartbeat`].
    fn release(&self, lease: Lease) -> impl Future<Output = Result<()>> + Send;

    /// Puts running jobs whose lease has run out back in the queue (or `dead` when their
    /// attempts are used up); returns how many.
    fn reap_expired(&self) -> impl Future<Output = Result<u64>> + Send;

    /// Queues a dead job again with a fresh set of attempts; its last error is kept.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown job, [`Error::Conflict`] when it is not dead or a
    /// live job holds its de-duplication key.
    fn retry_dead(&self, id: JobId) -> impl Future<Output = Result<()>> + Send;

    /// One job.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown job.
    fn job(&self, id: JobId) -> impl Future<Output = Result<JobRecord>> + Send;

    /// Jobs matching the filter, by ascending id.
    fn jobs(
        &self,
        filter: &JobFilter,
        page: Page<JobId>,
    ) -> impl Future<Output = Result<Vec<JobRecord>>> + Send;

    /// Job counts per queue and state.
    fn counts(&self) -> impl Future<Output = Result<Vec<QueueCounts>>> + Send;

    /// Deletes done jobs that finished before `before`; returns how many.
    fn purge_done(&self, before: DateTime<Utc>) -> impl Future<Output = Result<u64>> + Send;
}

pub(crate) fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

fn lease_until(now: DateTime<Utc>, lease: Duration) -> i64 {
    millis(now) + i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 4)
}

fn lease_lost(lease: Lease) -> Error {
    Error::LeaseLost {
        job: lease.job,
        attempt: lease.attempt,
    }
}

pub(crate) const INSERT_JOB: &str = "INSERT INTO jobs (queue, kind, payload, priority, max_attempts, run_at, \
     dedupe_key, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
     ON CONFLICT DO NOTHING RETURNING id";

/// Inserts a [`NewJob`] on any executor (a pool or a transaction) of either backend; evaluates
/// to `Option<i64>`, `None` when a live job holds the de-duplication key.
macro_rules! insert_job {
    ($exec:expr, $job:expr, $now:expr) => {
        sqlx::query_scalar::<_, i64>($crate::queue::INSERT_JOB)
            .bind($job.queue.as_str())
            .bind($job.kind.as_str())
            .bind($job.payload.as_str())
            .bind($job.priority)
            .bind(i32::try_from($job.max_attempts).unwrap_or(i32::MAX))
            .bind($job.run_at.map_or($now, $crate::queue::millis))
            .bind($job.dedupe_key.as_deref())
            .bind($now)
            .fetch_optional($exec)
            .await?
    };
}
pub(crate) use insert_job;

const CLAIM_POSTGRES: &str = "UPDATE jobs SET status = 'running', attempts = attempts + 1, \
     locked_by = $1, locked_until = $2, updated_at = $3 \
     WHERE id IN (SELECT id FROM jobs WHERE queue = $4 AND status = 'queued' AND run_at <= $3 \
                  ORDER BY priority DESC, run_at, id LIMIT $5 FOR UPDATE SKIP LOCKED) \
     RETURNING id, attempts, max_attempts, kind, payload";

const CLAIM_SQLITE: &str = "UPDATE jobs SET status = 'running', attempts = attempts + 1, \
     locked_by = $1, locked_until = $2, updated_at = $3 \
     WHERE id IN (SELECT id FROM jobs WHERE queue = $4 AND status = 'queued' AND run_at <= $3 \
                  ORDER BY priority DESC, run_at, id LIMIT $5) \
     RETURNING id, attempts, max_attempts, kind, payload";

const JOB_COLUMNS: &str = "id, queue, kind, payload, status, priority, attempts, max_attempts, \
     run_at, locked_by, locked_until, last_error, dedupe_key, created_at, finished_at";

#[derive(sqlx::FromRow)]
struct JobRow {
    id: JobId,
    queue: String,
    kind: String,
    payload: String,
    status: String,
    priority: i32,
    attempts: i32,
    max_attempts: i32,
    run_at: i64,
    locked_by: Option<String>,
    locked_until: Option<i64>,
    last_error: Option<String>,
    dedupe_key: Option<String>,
    created_at: i64,
    finished_at: Option<i64>,
}

impl TryFrom<JobRow> for JobRecord {
    type Error = Error;
    fn try_from(r: JobRow) -> Result<Self> {
        Ok(JobRecord {
            id: r.id,
            queue: r.queue,
            kind: r.kind,
            payload: r.payload,
            status: JobStatus::parse(&r.status)?,
            priority: r.priority,
            attempts: r.attempts.max(0) as u32,
            max_attempts: r.max_attempts.max(0) as u32,
            run_at: from_millis(r.run_at),
            locked_by: r.locked_by,
            locked_until: r.locked_until.map(from_millis),
            last_error: r.last_error,
            dedupe_key: r.dedupe_key,
            created_at: from_millis(r.created_at),
            finished_at: r.finished_at.map(from_millis),
        })
    }
}

impl Store {
    /// Runs a statement guarded by a lease (`$1` job id, `$2` attempt, `$3` a time in ms);
    /// no row changed means the lease is gone.
    async fn update_leased(&self, lease: Lease, sql: &'static str, time: i64) -> Result<()> {
        let n = write_pool!(self, |pool| {
            sqlx::query(sql)
                .bind(lease.job)
                .bind(lease.attempt as i32)
                .bind(time)
                .execute(pool)
                .await?
                .rows_affected()
        });
        if n == 0 {
            return Err(lease_lost(lease));
        }
        Ok(())
    }
}

impl JobQueue for Store {
    #[instrument(skip_all, fields(kind = %job.kind, queue = %job.queue))]
    async fn enqueue(&self, job: &NewJob) -> Result<Enqueued> {
        let now = millis(Utc::now());
        // A duplicate can finish between the failed insert and the lookup; then insert again.
        for _ in 0..3 {
            let inserted = write_pool!(self, |pool| insert_job!(pool, job, now));
            if let Some(id) = inserted {
                return Ok(Enqueued::New(JobId(id)));
            }
            let Some(key) = &job.dedupe_key else {
                return Err(Error::Conflict(format!(
                    "job of kind {} was not inserted",
                    job.kind
                )));
            };
            let existing: Option<i64> = write_pool!(self, |pool| {
                sqlx::query_scalar(
                    "SELECT id FROM jobs WHERE dedupe_key = $1 AND status IN ('queued', 'running')",
                )
                .bind(key)
                .fetch_optional(pool)
                .await?
            });
            if let Some(id) = existing {
                return Ok(Enqueued::Duplicate(JobId(id)));
            }
        }
        Err(Error::Conflict(format!(
            "job with de-duplication key {:?} kept changing state while enqueued",
            job.dedupe_key
        )))
    }

    async fn claim(
        &self,
        queue: &str,
        worker: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<Vec<ClaimedJob>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let now = Utc::now();
        let sql = match self.backend {
            Backend::Postgres(_) => CLAIM_POSTGRES,
            Backend::Sqlite { .. } => CLAIM_SQLITE,
        };
        let mut rows: Vec<(JobId, i32, i32, String, String)> = write_pool!(self, |pool| {
            sqlx::query_as(sql)
                .bind(worker)
                .bind(lease_until(now, lease))
                .bind(millis(now))
                .bind(queue)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?
        });
        rows.sort_by_key(|r| r.0);
        Ok(rows
            .into_iter()
            .map(|(id, attempts, max_attempts, kind, payload)| ClaimedJob {
                lease: Lease {
                    job: id,
                    attempt: attempts.max(0) as u32,
                },
                max_attempts: max_attempts.max(0) as u32,
                kind,
                payload,
            })
            .collect())
    }

    async fn heartbeat(&self, lease: Lease, extend: Duration) -> Result<()> {
        self.update_leased(
            lease,
            "UPDATE jobs SET locked_until = $3 \
             WHERE id = $1 AND attempts = $2 AND status = 'running'",
            lease_until(Utc::now(), extend),
        )
        .await
    }

    async fn complete(&self, lease: Lease) -> Result<()> {
        self.update_leased(
            lease,
            "UPDATE jobs SET status = 'done', locked_by = NULL, locked_until = NULL, \
             updated_at = $3, finished_at = $3 \
             WHERE id = $1 AND attempts = $2 AND status = 'running'",
            millis(Utc::now()),
        )
        .await
    }

    #[instrument(skip_all, fields(job = %lease.job, attempt = lease.attempt))]
    async fn fail(&self, lease: Lease, error: &str, retry: Retry) -> Result<JobStatus> {
        let now = millis(Utc::now());
        // Never: make attempts >= max_attempts hold by comparing with 0.
        let (run_at, retry_limit) = match retry {
            Retry::At(at) => (millis(at), None),
            Retry::Never => (now, Some(0)),
        };
        let status: Option<String> = write_pool!(self, |pool| {
            sqlx::query_scalar(
                "UPDATE jobs SET \
                   status = CASE WHEN attempts >= COALESCE($6, max_attempts) \
                            THEN 'dead' ELSE 'queued' END, \
                   finished_at = CASE WHEN attempts >= COALESCE($6, max_attempts) \
                                 THEN $4 ELSE NULL END, \
                   run_at = $5, last_error = $3, locked_by = NULL, locked_until = NULL, \
                   updated_at = $4 \
                 WHERE id = $1 AND attempts = $2 AND status = 'running' RETURNING status",
            )
            .bind(lease.job)
            .bind(lease.attempt as i32)
            .bind(error)
            .bind(now)
            .bind(run_at)
            .bind(retry_limit)
            .fetch_optional(pool)
            .await?
        });
        JobStatus::parse(&status.ok_or_else(|| lease_lost(lease))?)
    }

    async fn release(&self, lease: Lease) -> Result<()> {
        self.update_leased(
            lease,
            "UPDATE jobs SET status = 'queued', attempts = attempts - 1, run_at = $3, \
             locked_by = NULL, locked_until = NULL, updated_at = $3 \
             WHERE id = $1 AND attempts = $2 AND status = 'running'",
            millis(Utc::now()),
        )
        .await
    }

    #[instrument(skip_all)]
    async fn reap_expired(&self) -> Result<u64> {
        let now = millis(Utc::now());
        let n = write_pool!(self, |pool| {
            sqlx::query(
                "UPDATE jobs SET \
                   status = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, \
                   finished_at = CASE WHEN attempts >= max_attempts THEN $1 ELSE NULL END, \
                   last_error = 'lease expired: worker ' || COALESCE(locked_by, '?') \
                                || ' stopped before finishing attempt ' || attempts, \
                   run_at = $1, locked_by = NULL, locked_until = NULL, updated_at = $1 \
                 WHERE status = 'running' AND locked_until < $1",
            )
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        if n > 0 {
            tracing::warn!(jobs = n, "reaped jobs whose lease expired");
        }
        Ok(n)
    }

    async fn retry_dead(&self, id: JobId) -> Result<()> {
        let now = millis(Utc::now());
        let n = write_pool!(self, |pool| {
            sqlx::query(
                "UPDATE jobs SET status = 'queued', attempts = 0, run_at = $2, \
                 finished_at = NULL, updated_at = $2 WHERE id = $1 AND status = 'dead'",
            )
            .bind(id)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        if n == 0 {
            let job = self.job(id).await?;
            return Err(Error::Conflict(format!(
                "job {id} is {}, not dead",
                job.status.as_str()
            )));
        }
        Ok(())
    }

    async fn job(&self, id: JobId) -> Result<JobRecord> {
        let sql = AssertSqlSafe(format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"));
        let row: Option<JobRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql).bind(id).fetch_optional(pool).await?
        });
        row.ok_or_else(|| Error::not_found("job", id))?.try_into()
    }

    async fn jobs(&self, filter: &JobFilter, page: Page<JobId>) -> Result<Vec<JobRecord>> {
        let (condition, arg) = match filter {
            JobFilter::All => ("", None),
            JobFilter::Status(s) => ("AND status = $3", Some(s.as_str().to_owned())),
            JobFilter::Kind(k) => ("AND kind = $3", Some(k.clone())),
            JobFilter::Queue(q) => ("AND queue = $3", Some(q.clone())),
        };
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE id > $1 {condition} ORDER BY id LIMIT $2"
        );
        let after = page.after.map_or(0, |id| id.0);
        let limit = page.limit.map_or(i64::MAX, i64::from);
        let rows: Vec<JobRow> = read_pool!(self, |pool| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql)).bind(after).bind(limit);
            if let Some(arg) = &arg {
                q = q.bind(arg);
            }
            q.fetch_all(pool).await?
        });
        rows.into_iter().map(TryInto::try_into).collect()
    }

    async fn counts(&self) -> Result<Vec<QueueCounts>> {
        let rows: Vec<(String, String, i64)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT queue, status, COUNT(*) FROM jobs GROUP BY queue, status ORDER BY queue",
            )
            .fetch_all(pool)
            .await?
        });
        let mut out: Vec<QueueCounts> = Vec::new();
        for (queue, status, n) in rows {
            if out.last().is_none_or(|c| c.queue != queue) {
                out.push(QueueCounts {
                    queue: queue.clone(),
                    ..QueueCounts::default()
                });
            }
            let c = out.last_mut().expect("pushed above");
            let n = n.max(0) as u64;
            match JobStatus::parse(&status)? {
                JobStatus::Queued => c.queued = n,
                JobStatus::Running => c.running = n,
                JobStatus::Done => c.done = n,
                JobStatus::Dead => c.dead = n,
            }
        }
        Ok(out)
    }

    async fn purge_done(&self, before: DateTime<Utc>) -> Result<u64> {
        Ok(write_pool!(self, |pool| {
            sqlx::query("DELETE FROM jobs WHERE status = 'done' AND finished_at < $1")
                .bind(millis(before))
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }
}
