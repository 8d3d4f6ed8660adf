//! `copyhound serve`: the admin UI and API, the workers and the schedules in one process.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use pipeline::WorkerOptions;

use super::worker::shutdown_signal;
use settings::Settings;

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
    #[arg(long, default_value_t = 4, value_parser = bounds::parse_count)]
    concurrency: usize,
    /// Seconds running jobs get to finish after Ctrl-C.
    #[arg(long, default_value_t = 30)]
    grace: u64,
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
    let first_admin = accounts::bootstrap_admin(store)
        .await
        .context("while creating the first admin")?;
    let listen = args.listen.unwrap_or(settings.server.listen);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen} (--listen, [server] listen)"))?;
    if let Some((name, password)) = first_admin {
        let at = listener.local_addr().unwrap_or(listen);
        eprintln!(
            "no users yet: created {name:?} with the one-time password {password}\n\
             log in and change it on your account page, http://{at}/account (or add your \
             own admin with `copyhound users add NAME --role admin`)"
        );
    }
    let workers = if args.no_workers {
        None
    } else {
        Some(settings.handler(store)?)
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
    let admin = settings.admin(options.secure_cookies, options.upload_dir.clone());
    let workers = workers.map(|handler| admin::service::WorkersBeside {
        handler,
        options: WorkerOptions {
            concurrency: options.concurrency,
            grace: Duration::from_secs(options.grace),
            ..WorkerOptions::default()
        },
        rechecks: settings.rechecks.clone(),
        discovery: settings.discovery.clone(),
        database: super::masked(database),
    });
    let say = |line: &str| eprintln!("{line}");
    let stopped =
        admin::service::serve_with_workers(store, listener, admin, workers, &say, shutdown).await?;
    if let Some(report) = stopped {
        eprintln!("workers stopped: {report}");
    }
    Ok(())
}
