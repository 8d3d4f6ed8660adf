//! `copyhound serve`: the admin UI and API, the workers and the schedules in one process.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::worker::{WorkerArgs, Workers, all_queues, handler, shutdown_signal};
use crate::settings::Settings;

/// Options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (default: `[server] listen`, 127.0.0.1:8080). Anything but a
    /// loopback address should sit behind TLS.
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Serve the UI and API only; `copyhound worker` processes run the jobs.
    #[arg(long)]
    no_workers: bool,
    /// Where uploaded works wait for their import job, shared with the workers (default:
    /// `[server] upload_dir`, data/uploads).
    #[arg(long)]
    upload_dir: Option<PathBuf>,
    /// Mark the session cookie Secure (HTTPS only). Default: on, except when listening on a
    /// loopback address over plain HTTP.
    #[arg(long)]
    secure_cookies: Option<bool>,
    /// Jobs run at once per queue by this process's workers.
    #[arg(long, default_value_t = 4, value_parser = super::parse_count)]
    concurrency: usize,
    /// Seconds running jobs get to finish after Ctrl-C.
    #[arg(long, default_value_t = 30)]
    grace: u64,
}

#[cfg(test)]
impl ServeArgs {
    /// The address given with `--listen`, if any.
    pub fn listen(&self) -> Option<SocketAddr> {
        self.listen
    }
}

/// Runs until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs, database: &str, settings: &Settings) -> Result<()> {
    let shutdown = shutdown_signal();
    let store = super::open_store(database).await?;
    let result = serve_store(&store, args, database, settings, shutdown).await;
    store.close().await;
    result
}

async fn serve_store(
    store: &store::Store,
    args: ServeArgs,
    database: &str,
    settings: &Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    if let Some((name, password)) = pipeline::accounts::bootstrap_admin(store)
        .await
        .context("while creating the first admin")?
    {
        eprintln!(
            "no users yet: created {name:?} with the one-time password {password}\n\
             log in and change it, or add your own admin with `copyhound users add NAME --role admin`"
        );
    }
    let listen = args.listen.unwrap_or(settings.server.listen);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen} (--listen, [server] listen)"))?;
    let workers = if args.no_workers {
        None
    } else {
        Some(handler(store, settings)?)
    };
    let options = ServeOptions {
        secure_cookies: args.secure_cookies.unwrap_or(!listen.ip().is_loopback()),
        upload_dir: args
            .upload_dir
            .unwrap_or_else(|| settings.server.upload_dir.clone()),
        concurrency: args.concurrency,
        grace: args.grace,
    };
    serve(
        store, listener, workers, &options, database, settings, shutdown,
    )
    .await
}

/// How [`serve`] runs: what `serve`'s flags set, and `demo` chooses for itself.
pub struct ServeOptions {
    /// Mark the session cookie Secure.
    pub secure_cookies: bool,
    /// Where uploaded works wait for their import job.
    pub upload_dir: PathBuf,
    /// Jobs run at once per queue by the workers.
    pub concurrency: usize,
    /// Seconds running jobs get to finish after the shutdown signal.
    pub grace: u64,
}

/// The admin UI on `listener` and, given a job handler, the workers on every queue with the
/// re-check schedule, until `shutdown`; then the workers finish or hand back their jobs.
/// Shared by `serve` and `demo`.
pub async fn serve(
    store: &store::Store,
    listener: tokio::net::TcpListener,
    workers: Option<pipeline::Handler>,
    options: &ServeOptions,
    database: &str,
    settings: &Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let mut admin_settings = admin::AdminSettings {
        secure_cookies: options.secure_cookies,
        upload_dir: options.upload_dir.clone(),
        crawler: settings.crawler.clone(),
        notices: settings.notices.clone(),
        rechecks: settings.rechecks.clone(),
        ops: admin::OpsSettings {
            metrics_token: settings.server.metrics_token.clone(),
            analyser: None,
        },
        ..settings.server.admin()
    };
    let workers = match workers {
        None => None,
        Some(handler) => {
            admin_settings.ops.analyser = Some(super::worker::load_index_now(&handler));
            pipeline::rechecks::ensure_recheck_schedule(store, &settings.rechecks)
                .await
                .context("while creating the re-check schedule")?;
            let worker_args = WorkerArgs {
                queues: all_queues(),
                concurrency: options.concurrency,
                grace: options.grace,
                lease: 60,
                metrics_listen: None,
            };
            Some(Workers::start(
                store,
                &handler,
                &worker_args.queues,
                &worker_args,
                database,
            ))
        }
    };
    let local = listener.local_addr().context("reading the bound address")?;
    eprintln!("copyhound serving http://{local}/ (Ctrl-C to stop)");
    let state = admin::AdminState::new(store.clone(), admin_settings);
    admin::serve(listener, state, shutdown)
        .await
        .context("the web server failed")?;
    if let Some(workers) = workers {
        let report = workers.stop().await?;
        eprintln!(
            "workers stopped: {} completed, {} retried, {} dead, {} released",
            report.completed, report.retried, report.dead, report.released
        );
    }
    Ok(())
}
