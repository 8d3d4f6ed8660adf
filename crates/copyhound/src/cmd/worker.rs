//! `copyhound worker`: run jobs from the queue until Ctrl-C (or SIGTERM), then let running
//! jobs finish for a grace period and give the rest back to the queue.

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use import::{ImportSettings, Importer};
use pipeline::{Analyser, Handler};
use store::WorkerSettings;

use crate::settings::Settings;

/// How often a loaded matcher index applies the work change log between jobs.
const REFRESH_EVERY: Duration = Duration::from_secs(30);

/// Options of `worker`.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// The queues to serve (repeatable): `default` holds crawls and imports, `match` the
    /// pages to analyse. Default: both.
    #[arg(long = "queue", value_name = "QUEUE")]
    pub queues: Vec<String>,
    /// Jobs run at once, per queue.
    #[arg(long, default_value_t = 4, value_parser = super::parse_count)]
    pub concurrency: usize,
    /// Seconds running jobs get to finish after Ctrl-C before they are released.
    #[arg(long, default_value_t = 30)]
    pub grace: u64,
    /// Seconds a claimed job stays this worker's without a heartbeat (renewed every third of
    /// it): after a crash, other workers run its jobs again once it has passed.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(3..))]
    pub lease: u64,
    /// Serve /healthz, /readyz and /metrics (this worker's job durations and index size,
    /// and the shared counts) on this address; `[server] metrics_token` protects /metrics.
    #[arg(long, value_name = "ADDRESS")]
    pub metrics_listen: Option<std::net::SocketAddr>,
}

/// Runs the worker against the database at `database` until a shutdown signal.
pub async fn run(args: WorkerArgs, database: &str, settings: &Settings) -> Result<()> {
    // Before anything slow (the store, the dictionaries): a Ctrl-C during start-up then
    // stops the worker cleanly instead of killing it.
    let shutdown = shutdown_signal();
    let store = super::open_store(database).await?;
    let handler = handler(&store, settings)?;
    let queues = if args.queues.is_empty() {
        all_queues()
    } else {
        args.queues.clone()
    };
    let workers = Workers::start(&store, &handler, &queues, &args, database);
    let analyser = queues
        .iter()
        .any(|q| q == pipeline::MATCH_QUEUE)
        .then(|| load_index_now(&handler));
    let (stop_ops, ops_stopped) = tokio::sync::oneshot::channel::<()>();
    let ops = match args.metrics_listen {
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address} (--metrics-listen)"))?;
            eprintln!(
                "worker metrics on http://{}/metrics",
                listener.local_addr().context("reading the bound address")?
            );
            let ops = admin::OpsSettings {
                metrics_token: settings.server.metrics_token.clone(),
                analyser,
            };
            Some(tokio::spawn(admin::serve_ops(
                listener,
                store.clone(),
                ops,
                async move {
                    let _ = ops_stopped.await;
                },
            )))
        }
        None => None,
    };
    shutdown.await;
    let _ = stop_ops.send(());
    if let Some(ops) = ops {
        ops.await
            .context("the metrics server panicked")?
            .context("the metrics server failed")?;
    }
    let report = workers.stop().await?;
    eprintln!(
        "worker stopped: {} completed, {} retried, {} dead, {} released",
        report.completed, report.retried, report.dead, report.released
    );
    store.close().await;
    Ok(())
}

/// Worker loops over some queues, with the matcher index kept current, in this process
/// (`worker`, and `serve` beside the web UI).
pub struct Workers {
    stop: tokio::sync::watch::Sender<bool>,
    loops: Vec<tokio::task::JoinHandle<store::WorkerReport>>,
    refresher: tokio::task::JoinHandle<()>,
}

impl Workers {
    /// Starts serving `queues` with `args`' concurrency, grace and lease.
    pub fn start(
        store: &store::Store,
        handler: &Handler,
        queues: &[String],
        args: &WorkerArgs,
        database: &str,
    ) -> Workers {
        let refresher = pipeline::keep_index_current(store.clone(), handler, REFRESH_EVERY);
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let mut loops = Vec::new();
        for queue in queues {
            let worker_settings = WorkerSettings {
                queue: queue.clone(),
                concurrency: args.concurrency,
                shutdown_grace: Duration::from_secs(args.grace),
                lease: Duration::from_secs(args.lease),
                heartbeat: Duration::from_secs(args.lease) / 3,
                ..WorkerSettings::default()
            };
            eprintln!(
                "worker {} serving queue {:?} on {} (Ctrl-C to stop)",
                worker_settings.name,
                worker_settings.queue,
                super::masked(database)
            );
            loops.push(pipeline::serve(
                store,
                handler.clone(),
                worker_settings,
                stop_rx.clone(),
            ));
        }
        Workers {
            stop,
            loops,
            refresher,
        }
    }

    /// Stops the loops: running jobs get the grace period, the rest go back to the queue.
    ///
    /// # Errors
    /// A worker loop panicked.
    pub async fn stop(self) -> Result<store::WorkerReport> {
        let _ = self.stop.send(true);
        let mut report = store::WorkerReport::default();
        for done in self.loops {
            let r = done.await.context("a worker loop failed")?;
            report.completed += r.completed;
            report.retried += r.retried;
            report.dead += r.dead;
            report.released += r.released;
        }
        self.refresher.abort();
        Ok(report)
    }
}

/// Starts loading the handler's matcher index now, in the background, rather than at the
/// first match job: `/readyz` reports ready once it is in, and the first page does not wait.
/// Returns the analyser, for `/readyz` and `/metrics`.
pub fn load_index_now(handler: &Handler) -> std::sync::Arc<pipeline::Analyser> {
    let analyser = std::sync::Arc::clone(handler.analyser());
    let loading = std::sync::Arc::clone(&analyser);
    tokio::spawn(async move {
        if let Err(e) = loading.index().await {
            // The first match job tries again and fails visibly.
            tracing::error!(error = %pipeline::chain(&e), "cannot load the matcher index");
        }
    });
    analyser
}

/// Every queue: `default` (crawls, imports, re-checks, stamps) and `match`.
pub fn all_queues() -> Vec<String> {
    vec![
        store::queue::DEFAULT_QUEUE.to_owned(),
        pipeline::MATCH_QUEUE.to_owned(),
    ]
}

/// The job handler with the configured settings: the importer's fingerprint parameters are
/// the matcher's too, so pages are compared with the works as they were fingerprinted.
pub fn handler(store: &store::Store, settings: &Settings) -> Result<Handler> {
    let importer = Importer::new(ImportSettings {
        fingerprint: settings.fingerprint.clone(),
        limits: settings.import.clone(),
        ..ImportSettings::default()
    })
    .context("while setting up the importer")?;
    let tsa = timestamp::Tsa::from_settings(&settings.evidence.timestamp)
        .context("while setting up the time-stamping authority")?;
    let analyser = Analyser::new(
        store.clone(),
        settings.fingerprint.clone(),
        settings.matcher.clone(),
    )
    .with_stamping(tsa.is_some());
    let handler = Handler::new(store.clone(), importer, std::sync::Arc::new(analyser))
        .with_crawler(settings.crawler.clone())
        .with_rechecks(settings.rechecks.clone());
    Ok(match tsa {
        Some(tsa) => handler.with_tsa(tsa),
        None => handler,
    })
}

/// [`shutdown_signal_quiet`], saying so when it comes.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
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
                    // Ctrl-C is an interruption (exit 130); SIGTERM is how a service
                    // manager stops a service, which then exits as it would have anyway.
                    tokio::select! {
                        _ = interrupt.recv() => super::mark_interrupted(),
                        _ = terminate.recv() => {}
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C only");
                    if tokio::signal::ctrl_c().await.is_ok() {
                        super::mark_interrupted();
                    }
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_ok() {
            super::mark_interrupted();
        }
    }
}
