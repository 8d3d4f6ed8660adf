//! `copyhound worker`: run jobs from the queue until Ctrl-C (or SIGTERM), then let running
//! jobs finish for a grace period and give the rest back to the queue.

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use pipeline::{WorkerOptions, Workers};
use settings::Settings;

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
    let handler = settings.handler(&store)?;
    let queues = if args.queues.is_empty() {
        pipeline::all_queues()
    } else {
        args.queues.clone()
    };
    let workers = start_workers(&store, &handler, &queues, &args.options(), database);
    let analyser =
        pipeline::workers::serves_matches(&queues).then(|| pipeline::load_index_now(&handler));
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
            Some(tokio::spawn(admin::serve_ops(
                listener,
                store.clone(),
                settings.ops(analyser),
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

impl WorkerArgs {
    /// The worker loops' options these flags set.
    pub fn options(&self) -> WorkerOptions {
        WorkerOptions {
            concurrency: self.concurrency,
            grace: Duration::from_secs(self.grace),
            lease: Duration::from_secs(self.lease),
        }
    }
}

/// Starts the worker loops over `queues`, saying which worker serves which queue.
pub fn start_workers(
    store: &store::Store,
    handler: &pipeline::Handler,
    queues: &[String],
    options: &WorkerOptions,
    database: &str,
) -> Workers {
    let workers = Workers::start(store, handler, queues, options);
    for w in workers.serving() {
        eprintln!(
            "worker {} serving queue {:?} on {} (Ctrl-C to stop)",
            w.name,
            w.queue,
            super::masked(database)
        );
    }
    workers
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
