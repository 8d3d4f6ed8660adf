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
    /// Hold shard K of N of the index (`[index] shards` = N): the works whose id hashes to K.
    /// The worker then serves that shard's match queue, `match-K-of-N`, alone (unless
    /// --queue says otherwise): its memory is sized for its shard, and the default queue's
    /// jobs (re-checks, discovery) match with the whole index.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<bounds::Shard>,
    /// Jobs run at once, per queue.
    #[arg(long, default_value_t = 4, value_parser = bounds::parse_count)]
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
    let shard = args.shard.unwrap_or(bounds::Shard::ALL);
    let handler = settings.shard_handler(&store, shard)?;
    let queues = pipeline::workers::worker_queues(&args.queues, args.shard);
    pipeline::workers::ensure_schedules(&store, &handler, &settings.rechecks, &settings.discovery)
        .await
        .context("while creating the re-check, digest and discovery schedules")?;
    let workers = Workers::start(&store, &handler, &queues, &args.options());
    for line in workers.serving_notes(&super::masked(database)) {
        eprintln!("{line}");
    }
    let analyser = pipeline::workers::loads_index(&queues, args.shard, &handler)
        .then(|| pipeline::load_index_now(&handler));
    let ops = match args.metrics_listen {
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address} (--metrics-listen)"))?;
            eprintln!(
                "worker metrics on http://{}/metrics",
                listener.local_addr().context("reading the bound address")?
            );
            let ops = settings.ops(analyser);
            Some(admin::service::OpsServer::start(
                listener,
                store.clone(),
                ops,
            ))
        }
        None => None,
    };
    shutdown.await;
    if let Some(ops) = ops {
        ops.stop().await.context("the metrics server failed")?;
    }
    let report = workers.stop().await?;
    eprintln!("worker stopped: {report}");
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

/// [`shutdown_signal_quiet`], saying so when it comes.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    let signal = shutdown_signal_quiet();
    async move {
        signal.await;
        eprintln!("shutting down: letting running jobs finish");
    }
}

/// Listens for Ctrl-C and SIGTERM from the moment it is called
/// ([`pipeline::workers::stop_signal`]); a Ctrl-C is recorded as the interruption it is.
pub fn shutdown_signal_quiet() -> impl Future<Output = ()> + Send + 'static {
    let signal = pipeline::workers::stop_signal();
    async move {
        if signal.await == pipeline::workers::Stop::Interrupt {
            super::mark_interrupted();
        }
    }
}
