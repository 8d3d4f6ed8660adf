//! `copyhound demo`: copyhound on a fresh machine in one command. On a SQLite store in the
//! data directory it registers the sample works compiled in, serves a pirate site and a
//! licensed mirror on 127.0.0.1 (`pipeline::demo`, the pages from `bench::demo`), watches
//! both and queues their crawls, and runs the admin UI with the workers (`serve`'s wiring),
//! printing the URL and a login.
//! A second run on the same directory finds its works and sites and crawls them again.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use pipeline::demo;

use super::serve::{ServeOptions, serve};
use super::worker::shutdown_signal;
use settings::Settings;

/// Options of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Address of the admin UI.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Where the demo keeps its database and uploads (created; reused by the next run).
    /// The demo uses `DIR/copyhound.db`, whatever `--database` says.
    #[arg(long, value_name = "DIR", default_value = "copyhound-demo")]
    data: PathBuf,
    /// Mark the session cookie Secure (HTTPS only), as for `serve`. Default: on, except when
    /// listening on a loopback address over plain HTTP.
    #[arg(long)]
    secure_cookies: Option<bool>,
}

/// Runs until Ctrl-C or SIGTERM.
pub async fn run(args: DemoArgs, settings: &Settings) -> Result<()> {
    let shutdown = shutdown_signal();
    std::fs::create_dir_all(&args.data)
        .with_context(|| format!("while creating the data directory {}", args.data.display()))?;
    let database = format!("sqlite://{}", args.data.join("copyhound.db").display());
    // The demo's sites are on this machine: loopback only is let through, not the LAN.
    let mut settings = settings.clone();
    let safety = &mut settings.crawler.fetch.safety;
    for net in ["127.0.0.0/8", "::1/128"] {
        safety
            .allowed_networks
            .push(net.parse().expect("a valid network"));
    }
    let store = super::open_store(&database).await?;
    let result = demo(&store, &args, &database, &settings, shutdown).await;
    store.close().await;
    result
}

async fn demo(
    store: &store::Store,
    args: &DemoArgs,
    database: &str,
    settings: &Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let handler = settings.handler(store)?;
    let pages = bench::demo::demo_pages().context("while building the demo site")?;
    let set_up = demo::set_up(
        store,
        handler.importer(),
        &settings.crawler,
        &settings.notices,
        pages,
    )
    .await
    .context("while setting up the demo")?;
    eprint!("{set_up}");
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {} (give another address with --listen)",
                args.listen
            )
        })?;
    let local = listener.local_addr().context("reading the bound address")?;
    let (user, password) = demo::demo_login(store)
        .await
        .context("while setting the demo login")?;
    eprintln!(
        "\nopen http://{local}/cases and sign in as {user:?} with the password {password}\n\
         cases appear as the crawls find the copies (under a minute); Ctrl-C stops the demo\n"
    );
    let options = ServeOptions {
        secure_cookies: args.secure_cookies.unwrap_or(!local.ip().is_loopback()),
        upload_dir: args.data.join("uploads"),
        concurrency: 4,
        // Crawls stopped mid-way resume on the next run.
        grace: 5,
    };
    let served = serve(
        store,
        listener,
        Some(handler),
        &options,
        database,
        settings,
        shutdown,
    )
    .await;
    set_up.site.stop().await?;
    served
}
