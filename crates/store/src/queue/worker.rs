//! The worker loop: claim, run with heartbeats, settle; bounded concurrency; graceful stop.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::Utc;
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, sleep_until};
use tracing::{Instrument, debug, info, info_span, warn};

use super::{
    ClaimedJob, DEFAULT_QUEUE, JobQueue, JobStatus, Lease, Retry, Schedules, WorkerPresence,
};
use crate::{Error, Result};

/// Exponential backoff between failed attempts: `base · 2^(attempt-1)`, capped at `max`,
/// spread by ±20% so that jobs that failed together do not retry together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Delay after the first failed attempt.
    pub base: Duration,
    /// Longest delay.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_secs(2),
            max: Duration::from_secs(60 * 60),
        }
    }
}

impl Backoff {
    /// The delay after failed attempt `attempt` (1-based) of job `job_id`; the jitter is
    /// derived from both, so it is the same for the same attempt.
    pub fn delay(&self, attempt: u32, job_id: i64) -> Duration {
        let exp = attempt.saturating_sub(1).min(30);
        let raw = self.base.saturating_mul(1 << exp).min(self.max);
        // splitmix64 of (job, attempt) → a factor in [0.8, 1.2).
        let mut z = (job_id as u64) ^ (u64::from(attempt) << 48);
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let factor = 0.8 + 0.4 * (z >> 11) as f64 / (1u64 << 53) as f64;
        raw.mul_f64(factor).min(self.max)
    }
}

/// How a [`Worker`] runs. The defaults suit jobs of seconds to minutes.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// The queue it serves.
    pub queue: String,
    /// Its name in `jobs.locked_by` (make it unique per process and loop).
    pub name: String,
    /// Jobs it runs at once.
    pub concurrency: usize,
    /// How long a claim lasts without a heartbeat; a dead worker's jobs run again after it.
    pub lease: Duration,
    /// How often a running job's lease is renewed (well under `lease`).
    pub heartbeat: Duration,
    /// How long it sleeps when the queue is empty.
    pub poll_interval: Duration,
    /// How often it reaps expired leases, enqueues due schedules and says it is alive
    /// ([`super::WorkerPresence`]; readers take a worker unseen for a minute for dead).
    pub maintenance_interval: Duration,
    /// Whether it enqueues due [`Schedules`] (any number of workers may).
    pub run_schedules: bool,
    /// On shutdown, how long running jobs may take to finish before they are released.
    pub shutdown_grace: Duration,
    /// Delay between failed attempts.
    pub backoff: Backoff,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "worker".to_owned());
        WorkerSettings {
            queue: DEFAULT_QUEUE.to_owned(),
            name: format!(
                "{host}-{}-{}",
                std::process::id(),
                SEQ.fetch_add(1, Ordering::Relaxed)
            ),
            concurrency: 4,
            lease: Duration::from_secs(60),
            heartbeat: Duration::from_secs(20),
            poll_interval: Duration::from_millis(500),
            maintenance_interval: Duration::from_secs(5),
            run_schedules: true,
            shutdown_grace: Duration::from_secs(30),
            backoff: Backoff::default(),
        }
    }
}

/// What a handler knows about the job it runs.
#[derive(Debug, Clone)]
pub struct JobContext {
    /// The job and attempt.
    pub lease: Lease,
    /// Attempts allowed; `lease.attempt == max_attempts` is the last.
    pub max_attempts: u32,
    /// The job's kind.
    pub kind: String,
    /// Set when the worker starts shutting down: a long job (a crawl) stops at a safe point
    /// and returns [`JobError::interrupted`] to be handed back without using an attempt.
    pub shutdown: ShutdownSignal,
}

/// Whether the worker running a job is shutting down.
#[derive(Debug, Clone)]
pub struct ShutdownSignal(watch::Receiver<bool>);

impl ShutdownSignal {
    /// A signal and the sender that raises it (for running a handler outside a [`Worker`]).
    pub fn new() -> (watch::Sender<bool>, Self) {
        let (tx, rx) = watch::channel(false);
        (tx, ShutdownSignal(rx))
    }

    /// Whether shutdown has begun.
    pub fn is_requested(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves when shutdown begins (never, if the worker is gone without raising it).
    pub async fn requested(&self) {
        let mut rx = self.0.clone();
        if rx.wait_for(|stop| *stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// A failed attempt, as a handler reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobError {
    message: String,
    kind: FailureKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureKind {
    Retry,
    Permanent,
    Interrupted,
}

impl JobError {
    /// A failure that may pass: retried after a backoff while attempts remain.
    pub fn retry(message: impl Into<String>) -> Self {
        JobError {
            message: message.into(),
            kind: FailureKind::Retry,
        }
    }

    /// A failure that retrying cannot fix (bad input): the job goes dead at once.
    pub fn permanent(message: impl Into<String>) -> Self {
        JobError {
            message: message.into(),
            kind: FailureKind::Permanent,
        }
    }

    /// Not a failure: the job stopped because its worker is shutting down
    /// ([`JobContext::shutdown`]) and goes back to the queue at once without using an attempt.
    pub fn interrupted(message: impl Into<String>) -> Self {
        JobError {
            message: message.into(),
            kind: FailureKind::Interrupted,
        }
    }

    /// The message kept in `jobs.last_error`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the job goes dead without retrying.
    pub fn is_permanent(&self) -> bool {
        self.kind == FailureKind::Permanent
    }

    /// Whether the job stopped for a shutdown and is to be handed back.
    pub fn is_interrupted(&self) -> bool {
        self.kind == FailureKind::Interrupted
    }
}

impl<E: std::error::Error> From<E> for JobError {
    fn from(e: E) -> Self {
        // Keep the whole chain: the last error is what an operator reads in the UI.
        let mut message = e.to_string();
        let mut source = e.source();
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        JobError::retry(message)
    }
}

/// What one [`Worker::run`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Jobs completed.
    pub completed: u64,
    /// Failed attempts queued again.
    pub retried: u64,
    /// Jobs that went dead.
    pub dead: u64,
    /// Jobs given back at shutdown.
    pub released: u64,
    /// Jobs whose lease was lost (expired and reaped) before they settled.
    pub lost: u64,
}

/// `N completed, N retried, N dead, N released`: what a stopped worker says.
impl std::fmt::Display for WorkerReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} completed, {} retried, {} dead, {} released",
            self.completed, self.retried, self.dead, self.released
        )
    }
}

#[derive(Debug, Clone, Copy)]
enum Outcome {
    Completed,
    Retried,
    Dead,
    Released,
    Lost,
}

impl WorkerReport {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Completed => self.completed += 1,
            Outcome::Retried => self.retried += 1,
            Outcome::Dead => self.dead += 1,
            Outcome::Released => self.released += 1,
            Outcome::Lost => self.lost += 1,
        }
    }
}

/// A worker loop over one queue. Run as many as you like, in one process or many.
pub struct Worker<Q> {
    queue: Q,
    settings: WorkerSettings,
}

impl<Q> Worker<Q>
where
    Q: JobQueue + Schedules + WorkerPresence + Clone + Send + Sync + 'static,
{
    /// A worker on `queue` (usually a [`crate::Store`]).
    pub fn new(queue: Q, settings: WorkerSettings) -> Self {
        Worker { queue, settings }
    }

    /// Claims and runs jobs until `shutdown` resolves, at most `concurrency` at a time.
    ///
    /// Each job is decoded into `J` and handed to `handler` in a task of its own, with its
    /// lease renewed every `heartbeat`. `Ok` completes it; [`JobError::retry`] (or a panic)
    /// queues it again after a backoff until its attempts are used up, then it is dead;
    /// [`JobError::permanent`] and a payload that does not decode make it dead at once.
    ///
    /// Database outages do not stop the loop: it backs off and carries on when the database
    /// answers again. After `shutdown`, it claims nothing more, gives running jobs
    /// `shutdown_grace` to finish and then releases the rest to the queue.
    pub async fn run<J, H, Fut, S>(self, handler: H, shutdown: S) -> WorkerReport
    where
        J: DeserializeOwned + Send + 'static,
        H: Fn(J, JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), JobError>> + Send + 'static,
        S: Future<Output = ()> + Send,
    {
        let s = Arc::new(self.settings);
        let handler = Arc::new(handler);
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (stopping_tx, stopping) = ShutdownSignal::new();
        let mut tasks: JoinSet<Outcome> = JoinSet::new();
        let mut report = WorkerReport::default();
        let mut shutdown = pin!(shutdown);
        let mut next_maintenance = Instant::now();
        let mut error_pause = Duration::ZERO;
        let concurrency = s.concurrency.max(1);
        let started_at = Utc::now();
        info!(worker = %s.name, queue = %s.queue, concurrency, "worker started");

        loop {
            while let Some(done) = tasks.try_join_next() {
                report.add(joined(done));
            }
            // Poll the shutdown signal once per round, without waiting on it.
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                () = std::future::ready(()) => {}
            }
            if Instant::now() >= next_maintenance {
                maintain(&self.queue, &s, started_at).await;
                next_maintenance = Instant::now() + s.maintenance_interval;
            }
            let free = concurrency - tasks.len();
            if free == 0 {
                tokio::select! {
                    biased;
                    () = &mut shutdown => break,
                    Some(done) = tasks.join_next() => report.add(joined(done)),
                }
                continue;
            }
            let claimed = self
                .queue
                .claim(&s.queue, &s.name, free as u32, s.lease)
                .await;
            let pause = match claimed {
                Ok(jobs) if jobs.is_empty() => {
                    error_pause = Duration::ZERO;
                    s.poll_interval
                }
                Ok(jobs) => {
                    error_pause = Duration::ZERO;
                    for job in jobs {
                        tasks.spawn(run_job(
                            self.queue.clone(),
                            Arc::clone(&handler),
                            job,
                            Arc::clone(&s),
                            cancel_rx.clone(),
                            stopping.clone(),
                        ));
                    }
                    continue;
                }
                Err(e) => {
                    error_pause = (error_pause * 2).clamp(Duration::from_millis(100), MAX_PAUSE);
                    warn!(worker = %s.name, error = %e, pause = ?error_pause, "claim failed");
                    error_pause
                }
            };
            let wake = Instant::now() + pause.min(next_maintenance - Instant::now());
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                Some(done) = tasks.join_next(), if !tasks.is_empty() => report.add(joined(done)),
                () = sleep_until(wake) => {}
            }
        }

        info!(worker = %s.name, running = tasks.len(), grace = ?s.shutdown_grace,
              "worker stopping: letting running jobs finish");
        let _ = stopping_tx.send(true);
        let grace = sleep(s.shutdown_grace);
        let mut grace = pin!(grace);
        loop {
            tokio::select! {
                done = tasks.join_next() => match done {
                    Some(done) => report.add(joined(done)),
                    None => break,
                },
                () = &mut grace => {
                    warn!(worker = %s.name, running = tasks.len(), "grace over: releasing jobs");
                    let _ = cancel_tx.send(true);
                    while let Some(done) = tasks.join_next().await {
                        report.add(joined(done));
                    }
                    break;
                }
            }
        }
        if let Err(e) = self.queue.worker_stopped(&s.name).await {
            warn!(worker = %s.name, error = %e, "could not say the worker stopped");
        }
        info!(worker = %s.name, ?report, "worker stopped");
        report
    }
}

/// Longest pause between retries of a failing database call.
const MAX_PAUSE: Duration = Duration::from_secs(5);

fn joined(done: std::result::Result<Outcome, tokio::task::JoinError>) -> Outcome {
    // run_job does not panic (handler panics are caught in their own task); a cancelled
    // task only happens when the runtime shuts down, and then the lease expires.
    done.unwrap_or(Outcome::Lost)
}

async fn maintain<Q: JobQueue + Schedules + WorkerPresence>(
    queue: &Q,
    s: &WorkerSettings,
    started_at: chrono::DateTime<Utc>,
) {
    if let Err(e) = queue
        .worker_alive(&s.name, &s.queue, started_at, Utc::now())
        .await
    {
        warn!(worker = %s.name, error = %e, "saying the worker is alive failed");
    }
    if let Err(e) = queue.reap_expired().await {
        warn!(worker = %s.name, error = %e, "reaping expired leases failed");
    }
    if s.run_schedules {
        match queue.enqueue_due().await {
            Ok(jobs) if !jobs.is_empty() => debug!(jobs = jobs.len(), "scheduled jobs enqueued"),
            Ok(_) => {}
            Err(e) => warn!(worker = %s.name, error = %e, "enqueueing scheduled jobs failed"),
        }
    }
}

async fn run_job<Q, J, H, Fut>(
    queue: Q,
    handler: Arc<H>,
    job: ClaimedJob,
    s: Arc<WorkerSettings>,
    mut cancel: watch::Receiver<bool>,
    shutdown: ShutdownSignal,
) -> Outcome
where
    Q: JobQueue + Send + Sync + 'static,
    J: DeserializeOwned + Send + 'static,
    H: Fn(J, JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), JobError>> + Send + 'static,
{
    let lease = job.lease;
    let span = info_span!("job", id = %lease.job, kind = %job.kind, attempt = lease.attempt);
    async move {
        let mut deadline = Instant::now() + s.lease;
        let value: J = match job.decode() {
            Ok(v) => v,
            Err(e) => {
                return settle_failure(&queue, lease, &e.to_string(), Retry::Never, deadline).await;
            }
        };
        let ctx = JobContext {
            lease,
            max_attempts: job.max_attempts,
            kind: job.kind.clone(),
            shutdown,
        };
        let mut running = tokio::spawn((handler)(value, ctx).in_current_span());
        let mut beat = tokio::time::interval_at(Instant::now() + s.heartbeat, s.heartbeat);
        let result = loop {
            tokio::select! {
                r = &mut running => break r,
                _ = beat.tick() => match queue.heartbeat(lease, s.lease).await {
                    Ok(()) => deadline = Instant::now() + s.lease,
                    Err(Error::LeaseLost { .. }) => {
                        running.abort();
                        warn!("lease lost while running: another worker may run the job");
                        return Outcome::Lost;
                    }
                    Err(e) => warn!(error = %e, "heartbeat failed; retrying at the next beat"),
                },
                Ok(()) = cancel.changed() => {
                    running.abort();
                    let _ = running.await;
                    return release(&queue, lease, deadline).await;
                }
            }
        };
        let error = match result {
            Ok(Ok(())) => {
                return match persist(deadline, || queue.complete(lease)).await {
                    Ok(()) => Outcome::Completed,
                    Err(e) => {
                        warn!(error = %e, "job ran but completing it failed; it will run again");
                        Outcome::Lost
                    }
                };
            }
            Ok(Err(e)) if e.is_interrupted() => {
                info!(reason = %e.message(), "job stopped for the shutdown");
                return release(&queue, lease, deadline).await;
            }
            Ok(Err(e)) => e,
            Err(join) => JobError::retry(match join.try_into_panic() {
                Ok(panic) => format!("handler panicked: {}", panic_message(&*panic)),
                Err(_) => "handler task was cancelled".to_owned(),
            }),
        };
        let retry = if error.is_permanent() {
            Retry::Never
        } else {
            let delay = s.backoff.delay(lease.attempt, lease.job.0);
            Retry::At(Utc::now() + chrono::Duration::from_std(delay).unwrap_or_default())
        };
        settle_failure(&queue, lease, error.message(), retry, deadline).await
    }
    .instrument(span)
    .await
}

async fn release<Q: JobQueue>(queue: &Q, lease: Lease, deadline: Instant) -> Outcome {
    match persist(deadline, || queue.release(lease)).await {
        Ok(()) => {
            info!("released at shutdown");
            Outcome::Released
        }
        Err(e) => {
            warn!(error = %e, "release failed; the lease will expire");
            Outcome::Lost
        }
    }
}

async fn settle_failure<Q: JobQueue>(
    queue: &Q,
    lease: Lease,
    message: &str,
    retry: Retry,
    deadline: Instant,
) -> Outcome {
    match persist(deadline, || queue.fail(lease, message, retry)).await {
        Ok(JobStatus::Dead) => {
            warn!(error = %message, "job failed for the last time: dead");
            Outcome::Dead
        }
        Ok(_) => {
            info!(error = %message, "job failed; retrying later");
            Outcome::Retried
        }
        Err(e) => {
            warn!(error = %e, "recording the failure failed; the lease will expire");
            Outcome::Lost
        }
    }
}

/// Retries a store call while the database is unavailable, until the lease runs out (after
/// that the job is someone else's to settle).
async fn persist<T, F, Fut>(deadline: Instant, mut call: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut pause = Duration::from_millis(50);
    loop {
        match call().await {
            Err(e) if e.is_unavailable() && Instant::now() + pause < deadline => {
                debug!(error = %e, ?pause, "database unavailable; retrying");
                sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
            other => return other,
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_caps() {
        let b = Backoff {
            base: Duration::from_secs(1),
            max: Duration::from_secs(60),
        };
        for job in 0..50 {
            for attempt in 1..=5u32 {
                let d = b.delay(attempt, job).as_secs_f64();
                let nominal = f64::from(1u32 << (attempt - 1));
                assert!(d >= nominal * 0.8 && d < nominal * 1.2, "{attempt}: {d}");
                assert_eq!(b.delay(attempt, job), b.delay(attempt, job));
            }
            assert!(b.delay(40, job) <= Duration::from_secs(60));
        }
        assert_ne!(b.delay(3, 1), b.delay(3, 2));
    }

    #[test]
    fn job_error_keeps_the_source_chain() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        let e: JobError = Outer(std::io::Error::other("inner")).into();
        assert_eq!(e.message(), "outer: inner");
        assert!(!e.is_permanent());
        assert!(JobError::permanent("bad").is_permanent());
        let stopped = JobError::interrupted("shutting down");
        assert!(stopped.is_interrupted() && !stopped.is_permanent());
        assert!(!e.is_interrupted());
    }
}
