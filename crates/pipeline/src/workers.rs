//! Worker loops over the queues in this process, with the matcher index kept current:
//! what `copyhound worker`, `serve` (beside the web UI) and `demo` run. The binary parses
//! its flags into [`WorkerOptions`] and prints; everything else is here.

use std::sync::Arc;
use std::time::Duration;

use detection::Analyser;
use jobs::MATCH_QUEUE;
use store::{Store, WorkerReport, WorkerSettings};

use crate::handler::Handler;

/// How often a loaded matcher index applies the work change log between jobs.
pub const REFRESH_EVERY: Duration = Duration::from_secs(30);

/// How the worker loops run: what `worker`'s flags set, and `serve` and `demo` choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerOptions {
    /// Jobs run at once, per queue.
    pub concurrency: usize,
    /// How long running jobs get to finish after the stop before they are released.
    pub grace: Duration,
    /// How long a claimed job stays this worker's without a heartbeat (renewed every third
    /// of it): after a crash, other workers run its jobs again once it has passed.
    pub lease: Duration,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            concurrency: 4,
            grace: Duration::from_secs(30),
            lease: Duration::from_secs(60),
        }
    }
}

/// Worker loops over some queues, with the matcher index kept current, in this process.
#[derive(Debug)]
pub struct Workers {
    stop: tokio::sync::watch::Sender<bool>,
    loops: Vec<tokio::task::JoinHandle<WorkerReport>>,
    refresher: tokio::task::JoinHandle<()>,
    serving: Vec<WorkerSettings>,
}

impl Workers {
    /// Starts serving `queues` with `options`; the index is refreshed every
    /// [`REFRESH_EVERY`].
    pub fn start(
        store: &Store,
        handler: &Handler,
        queues: &[String],
        options: &WorkerOptions,
    ) -> Workers {
        let refresher = crate::serve::keep_index_current(store.clone(), handler, REFRESH_EVERY);
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let mut loops = Vec::new();
        let mut serving = Vec::new();
        for queue in queues {
            let settings = WorkerSettings {
                queue: queue.clone(),
                concurrency: options.concurrency,
                shutdown_grace: options.grace,
                lease: options.lease,
                heartbeat: options.lease / 3,
                ..WorkerSettings::default()
            };
            loops.push(crate::serve::serve(
                store,
                handler.clone(),
                settings.clone(),
                stop_rx.clone(),
            ));
            serving.push(settings);
        }
        Workers {
            stop,
            loops,
            refresher,
            serving,
        }
    }

    /// The settings of each loop started (its worker name and queue, for the log).
    #[must_use]
    pub fn serving(&self) -> &[WorkerSettings] {
        &self.serving
    }

    /// One line a loop: `worker NAME serving queue "QUEUE" on DATABASE (Ctrl-C to stop)`,
    /// the database named as `database` (its password masked by the caller).
    pub fn serving_notes(&self, database: &str) -> Vec<String> {
        self.serving
            .iter()
            .map(|w| {
                format!(
                    "worker {} serving queue {:?} on {database} (Ctrl-C to stop)",
                    w.name, w.queue
                )
            })
            .collect()
    }

    /// Stops the loops: running jobs get the grace period, the rest go back to the queue.
    /// The reports of every loop, added up.
    ///
    /// # Errors
    /// A worker loop panicked.
    pub async fn stop(self) -> jobs::Result<WorkerReport> {
        let _ = self.stop.send(true);
        let mut report = WorkerReport::default();
        for done in self.loops {
            let r = done
                .await
                .map_err(|e| jobs::Error::task("a worker loop", e))?;
            report.completed += r.completed;
            report.retried += r.retried;
            report.dead += r.dead;
            report.released += r.released;
        }
        self.refresher.abort();
        Ok(report)
    }
}

/// Makes sure of the schedules the settings ask for: re-checks, the alert digest when mail is
/// configured (`handler.notify()`), discovery (removed when it is off), the body segments'
/// (when bodies go to an object store). Every process that
/// runs workers does this at its start (`serve` and `worker` alike), so a deployment of
/// workers alone keeps its schedules; each is an upsert, so processes starting together
/// agree.
///
/// # Errors
/// A store failure, a schedule the store refuses.
pub async fn ensure_schedules(
    store: &Store,
    handler: &Handler,
    rechecks: &casework::RecheckSettings,
    discovery: &discovery::DiscoverySettings,
) -> jobs::Result<()> {
    casework::rechecks::ensure_recheck_schedule(store, rechecks).await?;
    if let Some(notify) = handler.notify() {
        notification::alerts::ensure_digest_schedule(store, notify).await?;
    }
    discovery::ensure_discovery_schedule(store, discovery).await?;
    evidence::bodies::ensure_segment_schedule(store).await?;
    evidence::bodies::ensure_gc_schedule(store).await?;
    Ok(())
}

/// Starts loading the handler's matcher index now, in the background, rather than at the
/// first match job: `/readyz` reports ready once it is in, and the first page does not wait.
/// Returns the analyser, for `/readyz` and `/metrics`.
pub fn load_index_now(handler: &Handler) -> Arc<Analyser> {
    let analyser = Arc::clone(handler.analyser());
    let loading = Arc::clone(&analyser);
    tokio::spawn(async move {
        if let Err(e) = loading.index().await {
            // The first match job tries again and fails visibly.
            tracing::error!(error = %jobs::chain(&e), "cannot load the matcher index");
        }
    });
    analyser
}

/// Every queue: `default` (crawls, imports, re-checks, stamps) and `match`.
#[must_use]
pub fn all_queues() -> Vec<String> {
    vec![
        store::queue::DEFAULT_QUEUE.to_owned(),
        MATCH_QUEUE.to_owned(),
    ]
}

/// The queues a worker serves: those asked for; else its shard's match queue
/// (`match-K-of-N`) when it holds a shard; else [`all_queues`].
pub fn worker_queues(asked: &[String], shard: Option<bounds::Shard>) -> Vec<String> {
    match (asked.is_empty(), shard) {
        (false, _) => asked.to_vec(),
        (true, Some(shard)) => vec![jobs::shard_queue(shard)],
        (true, None) => all_queues(),
    }
}

/// Whether a worker serving `queues` loads the index: it serves match jobs, and it holds a
/// shard or the deployment is not sharded (a sharded deployment's unsharded worker only fans
/// its match jobs out).
pub fn loads_index(queues: &[String], shard: Option<bounds::Shard>, handler: &Handler) -> bool {
    (shard.is_some() || handler.shards() == 1) && serves_matches(queues)
}

/// Whether `queues` include the match queue or a shard's (`match-K-of-N`), so that this
/// process needs the index.
#[must_use]
pub fn serves_matches(queues: &[String]) -> bool {
    queues
        .iter()
        .any(|q| q == MATCH_QUEUE || q.starts_with("match-"))
}

/// Which signal asked a process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl-C (SIGINT): an interruption; a command exits 130 after it.
    Interrupt,
    /// SIGTERM: how a service manager (`docker stop`, systemd) stops a service, which then
    /// exits as it would have anyway.
    Terminate,
}

/// Listens for Ctrl-C and, on Unix, SIGTERM from the moment it is called, so that a signal
/// arriving while a process is still starting up is caught rather than killing it; the
/// returned future resolves on the first one. Must be called inside the runtime.
pub fn stop_signal() -> impl Future<Output = Stop> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let listeners = signal(SignalKind::interrupt()).and_then(|interrupt| {
            signal(SignalKind::terminate()).map(|terminate| (interrupt, terminate))
        });
        async move {
            match listeners {
                Ok((mut interrupt, mut terminate)) => tokio::select! {
                    _ = interrupt.recv() => Stop::Interrupt,
                    _ = terminate.recv() => Stop::Terminate,
                },
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C only");
                    match tokio::signal::ctrl_c().await {
                        Ok(()) => Stop::Interrupt,
                        // No signal can be heard: run until killed.
                        Err(_) => std::future::pending().await,
                    }
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        match tokio::signal::ctrl_c().await {
            Ok(()) => Stop::Interrupt,
            Err(_) => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_serves_what_it_asks_else_its_shard_else_everything() {
        let shard = bounds::Shard::new(1, 4).unwrap();
        let asked = vec!["default".to_owned()];
        assert_eq!(worker_queues(&asked, Some(shard)), asked);
        assert_eq!(worker_queues(&[], Some(shard)), vec!["match-1-of-4"]);
        assert_eq!(worker_queues(&[], None), all_queues());
        assert!(serves_matches(&worker_queues(&[], Some(shard))));
        assert!(!serves_matches(&asked));
    }
}
