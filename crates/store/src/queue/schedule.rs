//! Recurring jobs: a cron expression and a job template, kept in `job_schedules`.
//!
//! Any number of processes may call [`Schedules::enqueue_due`]: each fire time is enqueued
//! once, because moving `next_run_at` forward is a compare-and-set in the same transaction
//! as the insert. A schedule whose previous job is still queued or running does not pile up
//! another (the jobs share the de-duplication key `schedule:NAME`). Fire times missed while
//! nothing ran are not caught up one by one: the next tick enqueues once and moves on.

use std::future::Future;

use chrono::{DateTime, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds};
use tracing::{instrument, warn};

use super::{Enqueued, NewJob, from_millis, insert_job, millis};
use crate::db::{read_pool, write_pool, write_tx};
use crate::ids::JobId;
use crate::{Error, Result, Store};

/// A recurring job.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Schedule {
    /// Unique name ("crawl-site-7").
    pub name: String,
    /// Cron expression, UTC: five fields, or six with seconds first.
    pub cron: String,
    /// The queue its jobs go to.
    pub queue: String,
    /// Its jobs' kind.
    pub kind: String,
    /// Its jobs' payload (JSON).
    pub payload: String,
    /// Paused when false.
    pub enabled: bool,
    /// The next fire time.
    pub next_run_at: DateTime<Utc>,
    /// The last time it enqueued a job.
    pub last_run_at: Option<DateTime<Utc>>,
    /// How long after each cron time it fires (spreads schedules that share a cron time).
    pub jitter: std::time::Duration,
}

/// Recurring jobs.
pub trait Schedules {
    /// Creates or replaces the schedule `name`, which enqueues a copy of `job` (its queue,
    /// kind and payload) whenever `cron` matches, starting after now.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a cron expression that does not parse or never fires.
    fn set_schedule(
        &self,
        name: &str,
        cron: &str,
        job: &NewJob,
    ) -> impl Future<Output = Result<Schedule>> + Send;

    /// Sets how long after each cron time schedule `name` fires, and moves its next fire
    /// time accordingly.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown schedule.
    fn set_schedule_jitter(
        &self,
        name: &str,
        jitter: std::time::Duration,
    ) -> impl Future<Output = Result<Schedule>> + Send;

    /// Pauses or resumes a schedule.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown schedule.
    fn set_schedule_enabled(
        &self,
        name: &str,
        enabled: bool,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Deletes a schedule (jobs it enqueued stay).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown schedule.
    fn delete_schedule(&self, name: &str) -> impl Future<Output = Result<()>> + Send;

    /// Every schedule, by name.
    fn schedules(&self) -> impl Future<Output = Result<Vec<Schedule>>> + Send;

    /// Enqueues the jobs of enabled schedules whose fire time has come and moves each to
    /// its next fire time. Safe to call from many processes at once.
    fn enqueue_due(&self) -> impl Future<Output = Result<Vec<Enqueued>>> + Send;

    /// [`Schedules::enqueue_due`] as if the time were `now` (a test's clock).
    fn enqueue_due_at(
        &self,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<Enqueued>>> + Send;
}

/// Parses a cron expression (five fields, or six with seconds first).
///
/// # Errors
/// [`Error::InvalidInput`] naming the expression.
pub(crate) fn parse_cron(expr: &str) -> Result<Cron> {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .build()
        .parse(expr)
        .map_err(|e| Error::InvalidInput(format!("cron expression {expr:?}: {e}")))
}

pub(crate) fn next_fire(cron: &Cron, expr: &str, after: DateTime<Utc>) -> Result<DateTime<Utc>> {
    cron.find_next_occurrence(&after, false)
        .map_err(|e| Error::InvalidInput(format!("cron expression {expr:?} never fires: {e}")))
}

/// Checks a cron expression as [`Schedules::set_schedule`] will: it parses and fires.
///
/// # Errors
/// [`Error::InvalidInput`] naming the expression.
pub fn check_cron(expr: &str) -> Result<()> {
    let cron = parse_cron(expr)?;
    next_fire(&cron, expr, Utc::now()).map(drop)
}

/// The first fire time after `after` of a schedule whose fire times are its cron times plus
/// `jitter_ms`: the cron time found is for `after - jitter`, so a jittered fire time that is
/// still ahead is not skipped.
pub(crate) fn next_jittered(expr: &str, after: DateTime<Utc>, jitter_ms: i64) -> Result<i64> {
    let cron = parse_cron(expr)?;
    let shifted = after - chrono::Duration::milliseconds(jitter_ms);
    Ok(millis(next_fire(&cron, expr, shifted)?) + jitter_ms)
}

#[derive(sqlx::FromRow)]
struct ScheduleRow {
    name: String,
    cron: String,
    queue: String,
    kind: String,
    payload: String,
    enabled: bool,
    next_run_at: i64,
    last_run_at: Option<i64>,
    jitter_ms: i64,
}

impl From<ScheduleRow> for Schedule {
    fn from(r: ScheduleRow) -> Self {
        Schedule {
            name: r.name,
            cron: r.cron,
            queue: r.queue,
            kind: r.kind,
            payload: r.payload,
            enabled: r.enabled,
            next_run_at: from_millis(r.next_run_at),
            last_run_at: r.last_run_at.map(from_millis),
            jitter: std::time::Duration::from_millis(u64::try_from(r.jitter_ms).unwrap_or(0)),
        }
    }
}

const SCHEDULE_COLUMNS: &str = "SELECT name, cron, queue, kind, payload, enabled, next_run_at, last_run_at, jitter_ms \
     FROM job_schedules";

/// Creates or replaces a schedule (an existing one keeps its jitter and enabled flag) with
/// its next fire time after `$now`; evaluates to nothing.
macro_rules! upsert_schedule {
    ($exec:expr, $name:expr, $cron:expr, $job:expr, $now:expr) => {{
        let (name, cron, job, now): (&str, &str, &$crate::queue::NewJob, DateTime<Utc>) =
            ($name, $cron, $job, $now);
        let jitter_ms: i64 =
            sqlx::query_scalar("SELECT jitter_ms FROM job_schedules WHERE name = $1")
                .bind(name)
                .fetch_optional(&mut *$exec)
                .await?
                .unwrap_or(0);
        let next = $crate::queue::schedule::next_jittered(cron, now, jitter_ms)?;
        sqlx::query(
            "INSERT INTO job_schedules (name, cron, queue, kind, payload, enabled, \
             next_run_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, TRUE, $6, $7, $7) \
             ON CONFLICT (name) DO UPDATE SET cron = $2, queue = $3, kind = $4, \
             payload = $5, next_run_at = $6, updated_at = $7",
        )
        .bind(name)
        .bind(cron)
        .bind(&job.queue)
        .bind(&job.kind)
        .bind(&job.payload)
        .bind(next)
        .bind($crate::queue::millis(now))
        .execute(&mut *$exec)
        .await?;
    }};
}
pub(crate) use upsert_schedule;

impl Store {
    /// One schedule.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown name.
    pub(crate) async fn schedule(&self, name: &str) -> Result<Schedule> {
        let sql = sqlx::AssertSqlSafe(format!("{SCHEDULE_COLUMNS} WHERE name = $1"));
        let row: Option<ScheduleRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql).bind(name).fetch_optional(pool).await?
        });
        row.map(Into::into)
            .ok_or_else(|| Error::not_found("schedule", name))
    }
}

impl Schedules for Store {
    #[instrument(skip_all, fields(name, cron))]
    async fn set_schedule(&self, name: &str, cron: &str, job: &NewJob) -> Result<Schedule> {
        let now = Utc::now();
        write_tx!(self, |tx| upsert_schedule!(&mut *tx, name, cron, job, now));
        self.schedule(name).await
    }

    async fn set_schedule_jitter(
        &self,
        name: &str,
        jitter: std::time::Duration,
    ) -> Result<Schedule> {
        let jitter_ms = i64::try_from(jitter.as_millis()).unwrap_or(i64::MAX);
        let schedule = self.schedule(name).await?;
        let now = Utc::now();
        let next = next_jittered(&schedule.cron, now, jitter_ms)?;
        write_pool!(self, |pool| {
            sqlx::query(
                "UPDATE job_schedules SET jitter_ms = $2, next_run_at = $3, updated_at = $4 \
                 WHERE name = $1",
            )
            .bind(name)
            .bind(jitter_ms)
            .bind(next)
            .bind(millis(now))
            .execute(pool)
            .await?;
        });
        self.schedule(name).await
    }

    async fn set_schedule_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        let n = write_pool!(self, |pool| {
            sqlx::query("UPDATE job_schedules SET enabled = $2, updated_at = $3 WHERE name = $1")
                .bind(name)
                .bind(enabled)
                .bind(millis(Utc::now()))
                .execute(pool)
                .await?
                .rows_affected()
        });
        Error::found(n, "schedule", name)
    }

    async fn delete_schedule(&self, name: &str) -> Result<()> {
        let n = write_pool!(self, |pool| {
            sqlx::query("DELETE FROM job_schedules WHERE name = $1")
                .bind(name)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Error::found(n, "schedule", name)
    }

    async fn schedules(&self) -> Result<Vec<Schedule>> {
        let sql = sqlx::AssertSqlSafe(format!("{SCHEDULE_COLUMNS} ORDER BY name"));
        let rows: Vec<ScheduleRow> =
            read_pool!(self, |pool| sqlx::query_as(sql).fetch_all(pool).await?);
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn enqueue_due(&self) -> Result<Vec<Enqueued>> {
        self.enqueue_due_at(Utc::now()).await
    }

    #[instrument(skip_all)]
    async fn enqueue_due_at(&self, now: DateTime<Utc>) -> Result<Vec<Enqueued>> {
        let sql = sqlx::AssertSqlSafe(format!(
            "{SCHEDULE_COLUMNS} WHERE enabled AND next_run_at <= $1 ORDER BY next_run_at"
        ));
        let due: Vec<ScheduleRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql)
                .bind(millis(now))
                .fetch_all(pool)
                .await?
        });
        let mut enqueued = Vec::new();
        for s in due {
            let next = match next_jittered(&s.cron, now, s.jitter_ms) {
                Ok(next) => next,
                Err(e) => {
                    warn!(schedule = %s.name, error = %e, "schedule skipped");
                    continue;
                }
            };
            let job = NewJob {
                queue: s.queue,
                kind: s.kind,
                payload: s.payload,
                run_at: None,
                dedupe_key: Some(format!("schedule:{}", s.name)),
                priority: 0,
                max_attempts: NewJob::DEFAULT_MAX_ATTEMPTS,
            };
            let now_ms = millis(now);
            let outcome: Option<Enqueued> = write_tx!(self, |tx| {
                let moved = sqlx::query(
                    "UPDATE job_schedules SET next_run_at = $3, last_run_at = $4, updated_at = $4 \
                     WHERE name = $1 AND next_run_at = $2",
                )
                .bind(&s.name)
                .bind(s.next_run_at)
                .bind(next)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if moved == 0 {
                    // Another process fired it first.
                    None
                } else {
                    match insert_job!(&mut *tx, job, now_ms) {
                        Some(id) => Some(Enqueued::New(JobId(id))),
                        None => {
                            let live: Option<i64> = sqlx::query_scalar(
                                "SELECT id FROM jobs WHERE dedupe_key = $1 \
                                 AND status IN ('queued', 'running')",
                            )
                            .bind(job.dedupe_key.as_deref())
                            .fetch_optional(&mut *tx)
                            .await?;
                            live.map(|id| Enqueued::Duplicate(JobId(id)))
                        }
                    }
                }
            });
            enqueued.extend(outcome);
        }
        Ok(enqueued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_five_and_six_field_expressions() {
        let now = DateTime::parse_from_rfc3339("2026-11-21T07:45:10Z")
            .unwrap()
            .with_timezone(&Utc);
        let daily = parse_cron("0 3 * * *").unwrap();
        assert_eq!(
            next_fire(&daily, "", now).unwrap().to_rfc3339(),
            "2026-11-22T03:00:00+00:00"
        );
        let every_second = parse_cron("* * * * * *").unwrap();
        assert_eq!(
            next_fire(&every_second, "", now).unwrap().to_rfc3339(),
            "2026-11-21T07:45:11+00:00"
        );
        let err = parse_cron("every tuesday").unwrap_err().to_string();
        assert!(err.contains("every tuesday"), "{err}");
    }
}
