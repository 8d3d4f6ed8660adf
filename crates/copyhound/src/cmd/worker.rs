//! `copyhound worker`: run jobs from the queue until Ctrl-C (or SIGTERM), then let running
//! jobs finish for a grace period and give the rest back to the queue.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use crawler::StoreCrawl;
use import::{ImportOptions, ImportSettings, Importer};
use store::{CrawlStatus, Crawls, Job, JobContext, JobError, Worker, WorkerSettings};

use crate::matching::{LiveIndex, match_snapshot};
use crate::settings::Settings;

/// How often a loaded matcher index applies the work change log between jobs.
const REFRESH_EVERY: Duration = Duration::from_secs(30);

/// Options of `worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The queue to serve.
    #[arg(long, default_value = store::queue::DEFAULT_QUEUE)]
    queue: String,
    /// Jobs run at once.
    #[arg(long, default_value_t = 4, value_parser = super::parse_count)]
    concurrency: usize,
    /// Seconds running jobs get to finish after Ctrl-C before they are released.
    #[arg(long, default_value_t = 30)]
    grace: u64,
}

/// Runs the worker against the database at `database` until a shutdown signal.
pub async fn run(args: WorkerArgs, database: &str, settings: &Settings) -> Result<()> {
    // Before anything slow (the store, the dictionaries): a Ctrl-C during start-up then
    // stops the worker cleanly instead of killing it.
    let shutdown = shutdown_signal();
    let store = super::open_store(database).await?;
    // The configured fingerprint parameters: the matcher compares with the same ones.
    let importer = Importer::new(ImportSettings {
        fingerprint: settings.fingerprint.clone(),
        limits: settings.import.clone(),
        ..ImportSettings::default()
    })
    .context("while setting up the importer")?;
    let matcher_settings = (settings.fingerprint.clone(), settings.matcher.clone());
    let settings = WorkerSettings {
        queue: args.queue,
        concurrency: args.concurrency,
        shutdown_grace: Duration::from_secs(args.grace),
        ..WorkerSettings::default()
    };
    eprintln!(
        "worker {} serving queue {:?} on {} (Ctrl-C to stop)",
        settings.name,
        settings.queue,
        super::masked(database)
    );
    let handler_store = store.clone();
    let index = Arc::new(MatchIndex {
        live: tokio::sync::OnceCell::new(),
        settings: matcher_settings,
    });
    // Between jobs too, so the first match job after a quiet spell has little to apply.
    let refresher = {
        let (index, store) = (Arc::clone(&index), store.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(REFRESH_EVERY);
            loop {
                tick.tick().await;
                let Some(live) = index.live.get() else {
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
                        tracing::warn!(error = %format!("{e:#}"), "matcher index refresh failed");
                    }
                }
            }
        })
    };
    let report = Worker::new(store.clone(), settings)
        .run(
            move |job: Job, ctx: JobContext| {
                let (store, importer, index) =
                    (handler_store.clone(), importer.clone(), Arc::clone(&index));
                async move { handle(&store, &importer, &index, job, ctx).await }
            },
            shutdown,
        )
        .await;
    refresher.abort();
    eprintln!(
        "worker stopped: {} completed, {} retried, {} dead, {} released",
        report.completed, report.retried, report.dead, report.released
    );
    store.close().await;
    Ok(())
}

/// The matcher index of the match jobs: loaded by the first one, then kept current through
/// the work change log (each job refreshes it first; nothing is reloaded).
struct MatchIndex {
    live: tokio::sync::OnceCell<Arc<LiveIndex>>,
    settings: (fingerprint::FingerprintSettings, matcher::MatcherSettings),
}

impl MatchIndex {
    async fn get(&self, store: &store::Store) -> Result<&Arc<LiveIndex>> {
        self.live
            .get_or_try_init(|| async {
                let fingerprinter = Arc::new(
                    fingerprint::Fingerprinter::new(self.settings.0.clone())
                        .context("while setting up the fingerprinter ([fingerprint] settings)")?,
                );
                let live = LiveIndex::load(store, self.settings.1.clone(), fingerprinter).await?;
                tracing::info!(chapters = live.loaded.chapters, "matcher index loaded");
                Ok(Arc::new(live))
            })
            .await
    }
}

async fn handle(
    store: &store::Store,
    importer: &Importer,
    index: &MatchIndex,
    job: Job,
    ctx: JobContext,
) -> Result<(), JobError> {
    match job {
        // Idempotent: the snapshot's matches are replaced as a whole.
        Job::MatchSnapshot { snapshot } => {
            let live = index
                .get(store)
                .await
                .map_err(|e| JobError::retry(format!("{e:#}")))?;
            match match_snapshot(store, live, snapshot).await {
                Ok(_) => Ok(()),
                Err(e)
                    if e.chain().any(|c| {
                        matches!(
                            c.downcast_ref::<store::Error>(),
                            Some(store::Error::NotFound { .. })
                        )
                    }) =>
                {
                    Err(JobError::permanent(format!("{e:#}")))
                }
                Err(e) => Err(JobError::retry(format!("{e:#}"))),
            }
        }
        // Idempotent: a second run finds the work by its content hash and writes nothing.
        Job::ImportWork {
            path,
            title,
            author,
        } => {
            let options = ImportOptions { title, author };
            match importer
                .import_file(store, Path::new(&path), &options, &())
                .await
            {
                Ok(_) => Ok(()),
                Err(e @ (import::Error::Store(_) | import::Error::Read { .. })) => Err(e.into()),
                // The file is not a work: retrying will not change that.
                Err(e) => Err(JobError::permanent(e.to_string())),
            }
        }
        Job::Crawl { crawl_id, runner } => run_crawl(store, crawl_id, runner, ctx).await,
        other => Err(JobError::permanent(format!(
            "this build has no handler for {other:?}"
        ))),
    }
}

/// Runs one runner of a stored crawl to the end of its shared frontier. The worker renews the
/// job's lease while it runs; if this worker dies, the job runs again and resumes the crawl
/// (the entries it held come back once its crawl run misses its heartbeats for
/// `crawler.run_dead_after`; the other runners of the crawl keep theirs).
async fn run_crawl(
    store: &store::Store,
    id: store::CrawlId,
    runner: u32,
    ctx: JobContext,
) -> Result<(), JobError> {
    let crawl = match StoreCrawl::open(store.clone(), id).await {
        Ok(c) => c,
        Err(crawler::Error::Store { source, .. })
            if matches!(
                source.downcast_ref::<store::Error>(),
                Some(store::Error::NotFound { .. })
            ) =>
        {
            return Err(JobError::permanent(format!("crawl {id} does not exist")));
        }
        Err(e @ crawler::Error::Store { .. }) => return Err(JobError::retry(e.to_string())),
        Err(e) => return Err(JobError::permanent(format!("crawl {id} cannot run: {e}"))),
    };
    store
        .set_crawl_status(id, CrawlStatus::Running, None)
        .await
        .map_err(|e| JobError::retry(e.to_string()))?;
    tracing::info!(crawl = %id, runner, attempt = ctx.lease.attempt, "crawl runner started");
    // On the worker's shutdown the crawl stops after the pages in flight; the URLs it had
    // claimed go back to the frontier and the job back to the queue, to resume later.
    let run = crawl.run_to_end();
    let mut run = std::pin::pin!(run);
    let mut interrupted = false;
    let result = loop {
        tokio::select! {
            r = &mut run => break r,
            () = ctx.shutdown.requested(), if !interrupted => {
                interrupted = true;
                crawl.stop();
            }
        }
    };
    match result {
        Ok(report) => {
            tracing::info!(crawl = %id, runner, pages = report.pages, interrupted,
                           "crawl runner finished");
            if interrupted {
                store
                    .set_crawl_status(id, CrawlStatus::Queued, None)
                    .await
                    .map_err(|e| JobError::retry(e.to_string()))?;
                return Err(JobError::interrupted(format!(
                    "crawl {id} stopped for a worker shutdown after {} pages",
                    report.pages
                )));
            }
            store
                .set_crawl_status(id, CrawlStatus::Done, None)
                .await
                .map_err(|e| JobError::retry(e.to_string()))
        }
        Err(e) => {
            let message = format!("{e:#}");
            if ctx.lease.attempt >= ctx.max_attempts {
                store
                    .set_crawl_status(id, CrawlStatus::Failed, Some(&message))
                    .await
                    .ok();
            }
            Err(JobError::retry(message))
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM, saying so.
/// [`shutdown_signal_quiet`], saying so when it comes.
fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    let signal = shutdown_signal_quiet();
    async move {
        signal.await;
        eprintln!("shutting down: letting running jobs finish");
    }
}

/// Listens for Ctrl-C and, on Unix, SIGTERM (what `docker stop` and systemd send) from the
/// moment it is called, so that a signal arriving while the command is still starting up is
/// caught rather than killing the process; the returned future resolves on the first one.
/// Must be called inside the runtime.
pub fn shutdown_signal_quiet() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let listeners = signal(SignalKind::interrupt()).and_then(|interrupt| {
            signal(SignalKind::terminate()).map(|terminate| (interrupt, terminate))
        });
        async move {
            match listeners {
                Ok((mut interrupt, mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C only");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
