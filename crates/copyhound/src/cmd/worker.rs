//! `copyhound worker`: run jobs from the queue until Ctrl-C (or SIGTERM), then let running
//! jobs finish for a grace period and give the rest back to the queue.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use import::{ImportOptions, ImportSettings, Importer};
use store::{Job, JobContext, JobError, Worker, WorkerSettings};

use crate::settings::Settings;

/// Options of `worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The queue to serve.
    #[arg(long, default_value = store::queue::DEFAULT_QUEUE)]
    queue: String,
    /// Jobs run at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Seconds running jobs get to finish after Ctrl-C before they are released.
    #[arg(long, default_value_t = 30)]
    grace: u64,
}

/// Runs the worker against the database at `database` until a shutdown signal.
pub async fn run(args: WorkerArgs, database: &str, settings: &Settings) -> Result<()> {
    let store = super::open_store(database).await?;
    // The configured fingerprint parameters: the matcher compares with the same ones.
    let importer = Importer::new(ImportSettings {
        fingerprint: settings.fingerprint.clone(),
        ..ImportSettings::default()
    })
    .context("while setting up the importer")?;
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
    let report = Worker::new(store.clone(), settings)
        .run(
            move |job: Job, ctx: JobContext| {
                let (store, importer) = (handler_store.clone(), importer.clone());
                async move { handle(&store, &importer, job, ctx).await }
            },
            shutdown_signal(),
        )
        .await;
    eprintln!(
        "worker stopped: {} completed, {} retried, {} dead, {} released",
        report.completed, report.retried, report.dead, report.released
    );
    store.close().await;
    Ok(())
}

async fn handle(
    store: &store::Store,
    importer: &Importer,
    job: Job,
    _ctx: JobContext,
) -> Result<(), JobError> {
    match job {
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
        other => Err(JobError::permanent(format!(
            "this build has no handler for {other:?}"
        ))),
    }
}

/// Resolves on Ctrl-C or, on Unix, SIGTERM (what `docker stop` and systemd send).
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    eprintln!("shutting down: letting running jobs finish");
}
