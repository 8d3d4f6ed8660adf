//! One process serving the admin UI and API with, when asked, the workers beside it: what
//! `copyhound serve` and the demo run. The matcher index the workers load is the one
//! `/readyz` and `/metrics` report on; the re-check and discovery schedules are made sure of before the
//! workers start; after the server stops, the workers get their grace and their report is
//! returned.

use std::future::Future;

use pipeline::{Handler, WorkerOptions, Workers};
use store::{Store, WorkerReport};

use crate::{AdminSettings, AdminState};

/// The workers to run beside the server.
#[derive(Debug)]
pub struct WorkersBeside {
    /// What they run jobs with.
    pub handler: Handler,
    /// How they run.
    pub options: WorkerOptions,
    /// The re-check schedule to make sure of.
    pub rechecks: casework::RecheckSettings,
    /// The discovery schedule to make sure of (or remove, when it is off or no provider is
    /// configured).
    pub discovery: discovery::DiscoverySettings,
    /// The database as the start-up lines name it (its password masked).
    pub database: String,
}

/// What stopped the service.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The re-check, digest or discovery schedule could not be created.
    #[error("while creating the re-check, digest and discovery schedules")]
    Schedule(#[source] jobs::Error),
    /// The web server failed.
    #[error("the web server failed")]
    Server(#[source] std::io::Error),
    /// A worker loop failed while it stopped.
    #[error("while stopping the workers")]
    Workers(#[source] jobs::Error),
}

/// Serves the admin UI on `listener` until `shutdown`, with `workers` beside it; `say`
/// gets the start-up lines (the address, each worker's queue). The workers' report when
/// there were workers.
///
/// # Errors
/// [`ServiceError`]: the schedule, the server or a worker loop failed.
pub async fn serve_with_workers(
    store: &Store,
    listener: tokio::net::TcpListener,
    mut settings: AdminSettings,
    workers: Option<WorkersBeside>,
    say: &(dyn Fn(&str) + Sync),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Option<WorkerReport>, ServiceError> {
    let workers = match workers {
        None => None,
        Some(beside) => {
            settings.ops.analyser = Some(pipeline::load_index_now(&beside.handler));
            pipeline::workers::ensure_schedules(
                store,
                &beside.handler,
                &beside.rechecks,
                &beside.discovery,
            )
            .await
            .map_err(ServiceError::Schedule)?;
            let queues = pipeline::all_queues();
            let workers = Workers::start(store, &beside.handler, &queues, &beside.options);
            for line in workers.serving_notes(&beside.database) {
                say(&line);
            }
            Some(workers)
        }
    };
    let local = listener.local_addr().map_err(ServiceError::Server)?;
    say(&format!(
        "copyhound serving http://{local}/ (Ctrl-C to stop)"
    ));
    let state = AdminState::new(store.clone(), settings);
    crate::serve(listener, state, shutdown)
        .await
        .map_err(ServiceError::Server)?;
    match workers {
        Some(workers) => Ok(Some(workers.stop().await.map_err(ServiceError::Workers)?)),
        None => Ok(None),
    }
}

/// `/healthz`, `/readyz` and `/metrics` served on their own listener beside a worker
/// (`worker --metrics-listen`), until [`OpsServer::stop`].
#[derive(Debug)]
pub struct OpsServer {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl OpsServer {
    /// Starts serving on `listener`.
    pub fn start(
        listener: tokio::net::TcpListener,
        store: Store,
        ops: crate::state::OpsSettings,
    ) -> Self {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(crate::serve_ops(listener, store, ops, async move {
            let _ = stopped.await;
        }));
        OpsServer { stop, task }
    }

    /// Stops serving and waits for the server to end.
    ///
    /// # Errors
    /// [`ServiceError::Server`] when it failed or panicked.
    pub async fn stop(self) -> Result<(), ServiceError> {
        let _ = self.stop.send(());
        self.task
            .await
            .map_err(|e| ServiceError::Server(std::io::Error::other(e)))?
            .map_err(ServiceError::Server)
    }
}
