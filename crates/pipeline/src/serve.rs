//! Workers over the queue: [`MatchWorkers`] serve the match queue beside a crawl run in this
//! process (`copyhound crawl`), so that the crawl's pages are analysed as they are stored and
//! the command ends with every page matched.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jobs::metrics::{JobOutcome, job_metrics};
use jobs::{Job, MATCH_QUEUE, chain};
use store::{JobContext, JobQueue, Store, Worker, WorkerReport, WorkerSettings};

use crate::handler::Handler;

/// Match jobs served in this process until [`MatchWorkers::finish`].
#[derive(Debug)]
pub struct MatchWorkers {
    store: Store,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<WorkerReport>,
}

/// What the in-process match workers did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchDrain {
    /// Match jobs completed here.
    pub matched: u64,
    /// Match jobs that failed here (retried later, or dead).
    pub failed: u64,
    /// Match jobs still queued when it stopped (for `copyhound worker`).
    pub left: u64,
}

impl MatchWorkers {
    /// Match jobs at once unless told otherwise: twice the cores. A match job waits on the
    /// store (claim, the page's text, the record, completion) about as long as it computes,
    /// so with one job per core the cores sat idle a third of a crawl: on 2 cores
    /// `copyhound bench pipeline --pages 100` went from 131 to 169 pages/s on SQLite and from
    /// 103 to 129 on Postgres with 4 jobs instead of 2.
    #[must_use]
    pub fn default_concurrency() -> usize {
        2 * std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    }

    /// Starts serving the match queue with `concurrency` jobs at once.
    pub fn start(store: &Store, handler: Handler, concurrency: usize) -> Self {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let settings = WorkerSettings {
            queue: MATCH_QUEUE.to_owned(),
            concurrency,
            poll_interval: Duration::from_millis(100),
            // Schedules are the long-running workers' business.
            run_schedules: false,
            ..WorkerSettings::default()
        };
        let task = serve(store, handler, settings, stopped);
        MatchWorkers {
            store: store.clone(),
            stop,
            task,
        }
    }

    /// Waits until the match queue has nothing due (or makes no progress for `idle`), then
    /// stops; running jobs finish first.
    ///
    /// # Errors
    /// The workers' task panicked.
    pub async fn finish(self, idle: Duration) -> jobs::Result<MatchDrain> {
        let mut last = (u64::MAX, Instant::now());
        loop {
            let queued = self.queued().await;
            if queued == 0 {
                break;
            }
            if queued != last.0 {
                last = (queued, Instant::now());
            } else if last.1.elapsed() >= idle {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = self.stop.send(true);
        let MatchWorkers { store, task, .. } = self;
        let report = task
            .await
            .map_err(|e| jobs::Error::task("the match workers", e))?;
        Ok(MatchDrain {
            matched: report.completed,
            failed: report.retried + report.dead,
            left: queued(&store).await,
        })
    }

    async fn queued(&self) -> u64 {
        queued(&self.store).await
    }
}

/// Match jobs queued (due now or later) and running.
async fn queued(store: &Store) -> u64 {
    {
        match store.counts().await {
            Ok(counts) => counts
                .iter()
                .filter(|c| c.queue == MATCH_QUEUE)
                .map(|c| c.queued + c.running)
                .sum(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot count match jobs");
                0
            }
        }
    }
}

/// Serves `settings.queue` with `handler` in a task of its own until `stop` turns true (then
/// running jobs get the settings' grace period); the task returns what the worker did.
pub fn serve(
    store: &Store,
    handler: Handler,
    settings: WorkerSettings,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<WorkerReport> {
    let worker = Worker::new(store.clone(), settings);
    tokio::spawn(async move {
        worker
            .run(
                move |job: Job, ctx: JobContext| {
                    let handler = handler.clone();
                    async move {
                        let (kind, started) = (ctx.kind.clone(), Instant::now());
                        let result = handler.handle(job, ctx).await;
                        let outcome = match &result {
                            Ok(()) => JobOutcome::Done,
                            Err(e) if e.is_interrupted() => JobOutcome::Interrupted,
                            Err(_) => JobOutcome::Failed,
                        };
                        job_metrics().observe(&kind, outcome, started.elapsed());
                        result
                    }
                },
                async move {
                    let _ = stop.wait_for(|s| *s).await;
                },
            )
            .await
    })
}

/// Keeps a handler's loaded index current between jobs.
pub fn keep_index_current(
    store: Store,
    handler: &Handler,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    let analyser = Arc::clone(handler.analyser());
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            let Some(live) = analyser.loaded() else {
                continue;
            };
            match live.refresh(&store).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    applied = n,
                    since_load = live.changes_applied(),
                    full_loads = live.full_loads(),
                    "matcher index refreshed"
                ),
                Err(e) => {
                    tracing::warn!(error = %chain(&e), "matcher index refresh failed");
                }
            }
        }
    })
}
