//! The `copyhound` binary: command-line interface and process wiring.
//!
//! Parse, call a library, print. Each subcommand lives in its own module under `cmd/`; this
//! file only parses the command line, loads the settings (the `settings` crate), sets up
//! logging (`--log-format`, handed to `settings::init_logs`) and dispatches. It is the only
//! place that reads configuration, opens the database and starts servers and workers; it may
//! use every crate but `ingest`, `fontmap` and `testkit` (a dev-dependency of its tests).
//!
//! # The database and the output
//!
//! - The global `--database` (`COPYHOUND_DATABASE_URL`, else the file
//!   `COPYHOUND_DATABASE_URL_FILE` names, default `sqlite://data/copyhound.db`) names the
//!   store. Every database command runs through `cmd::on_store` (open, apply pending
//!   migrations, run, close); `doctor` and `backup` connect without migrating. The global
//!   options carry `help_heading = "Global options"`.
//! - Commands print through `cmd::write_stdout` (the `outln!` macro): when the reader has
//!   closed the pipe (`... | head`) it returns `StdoutClosed`, which `main` turns into a
//!   quiet success. Every control character but line feeds and tabs, and every bidi
//!   override, goes out as `\uXXXX` (`bounds::text::escape_controls`), so stored text never
//!   drives the terminal; `check`, which colours its output, escapes what it prints and
//!   writes through `write_stdout_styled`. `config` prints the settings with every URL's
//!   password masked.
//! - Ctrl-C (`cmd::worker::shutdown_signal_quiet`, over the pipeline's stop signal) marks the
//!   run interrupted (`cmd::mark_interrupted`), and `main` then exits 130 whatever the
//!   command returned; SIGTERM stops the same way with the command's own status.
//!
//! # Commands, by what they call
//!
//! - **Works**: `works import|list|show|set|delete|refingerprint` over `import::Importer`
//!   and the store's audited writes (actor `cli`; a progress bar on a terminal, each
//!   `ImportWarning` as `warning: FILE: ...` on standard error; `delete` refused while cases
//!   refer to the work unless `--force`).
//! - **Crawling**: `crawl` checks the crawl settings before it writes anything, then runs the
//!   crawl in this process with the match queue served beside it, so the command ends with
//!   every page it stored matched (Ctrl-C stops it resumably, `--resume` continues it), or
//!   queues its runners for the workers (`--enqueue`); each runner is a run of the crawl with
//!   a heartbeat, so after a `kill -9` its URLs come back within `crawler.run_dead_after`
//!   (15 s) rather than the frontier lease. `crawls list|show`, `sites
//!   add|list|show|set|pause|resume|crawl` (the watched sites), `snapshots export --warc
//!   FILE [--crawl ID]`.
//! - **Matching**: `check PATH|DIR|URL...` (a page with no match says whether it was a
//!   challenge, a redirect stub, an index or empty), `rematch [--site HOST] [--since DATE]
//!   [--mode auto|page|batch]`, `index snapshot [--to PATH_OR_URL]`, `discover
//!   search|phrases|commoncrawl|candidates|approve|ignore|probe|import-domains|queries`.
//! - **Cases and notices**: `cases list|show|set|stamp|capture|evidence|removals`,
//!   `licensed add|list|remove`, `reports export [--format jsonl|csv]`, `notices
//!   create|list|show|send|mark-sent|recheck`, `notify test`.
//! - **Serving**: `serve` and `demo` share `cmd::serve::serve` (the admin UI on a bound
//!   listener, workers on every queue with the schedules, stopped in that order on
//!   Ctrl-C/SIGTERM); `worker [--shard K/N] [--lease SECS]` serves the queues until
//!   Ctrl-C/SIGTERM. `serve` and `worker` start loading the matcher index at start-up, so
//!   `/readyz` turns ready without waiting for the first page. `demo` opens
//!   `DIR/copyhound.db` of its `--data DIR`, lets the crawler reach loopback addresses only
//!   (`crawler.fetch.safety.allowed_networks`: sites carry no address policy of their own, so
//!   it is the process's), registers the sample, serves the pages of `bench::demo`, watches
//!   the demo sites and prints the login it sets.
//! - **Operating**: `migrate`, `config`, `doctor`, `backup`, `gc`, `storage migrate|status`,
//!   `stats`, `users add|list|set-role|disable|enable|passwd|token|tokens|revoke-token`,
//!   `completions`; `bench …` hands its subcommand to `bench::cli` with the settings and
//!   standard output.
//!
//! # Tests
//!
//! `tests/all/` run the binary as a process. `tests/all/deploy.rs` checks `docker-compose.yml`, the
//! `Dockerfile` and `config/production.example.toml` against the settings and against the
//! binary's own command line; `tests/e2e_browser.rs` drives `serve` in a headless Chromium
//! through chromedriver, with a pirate site served by the test, and fails on any browser
//! console error; `tests/all/crawl_kill.rs` and `tests/all/worker_kill.rs` kill the process part-way.

mod cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// copyhound: track pirated copies of protected text across the web.
#[derive(Debug, Parser)]
#[command(name = "copyhound", version, about, long_about = None)]
struct Cli {
    /// Settings file (TOML) layered over the built-in defaults; see config/default.toml.
    #[arg(long, global = true, env = "COPYHOUND_CONFIG", help_heading = GLOBAL)]
    config: Option<PathBuf>,
    /// Database: sqlite://PATH (created if missing) or postgres://USER:PASSWORD@HOST:PORT/DB
    /// [default: sqlite://data/copyhound.db]. COPYHOUND_DATABASE_URL_FILE names a file
    /// holding it (a secret).
    #[arg(
        long,
        global = true,
        env = settings::DATABASE_URL_VAR,
        hide_env_values = true,
        help_heading = GLOBAL
    )]
    database: Option<String>,
    /// Seconds a SQLite write waits for another process's write lock (a `works import`, a
    /// crawl) before it is tried again (up to 5 times, with backoff) and then fails.
    #[arg(
        long,
        global = true,
        env = "COPYHOUND_SQLITE_BUSY_TIMEOUT",
        value_name = "SECONDS",
        default_value_t = 10.0,
        value_parser = cmd::parse_seconds,
        help_heading = GLOBAL
    )]
    sqlite_busy_timeout: f64,
    /// Log lines on standard error: text (coloured on a terminal unless NO_COLOR is set) or
    /// json (one object a line). Which lines: COPYHOUND_LOG (e.g. info, or
    /// warn,store=debug; default warn).
    #[arg(
        long,
        global = true,
        env = "COPYHOUND_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text,
        help_heading = GLOBAL
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// The heading the options every command takes are listed under.
const GLOBAL: &str = "Global options";

/// How log lines are written (to standard error, filtered by `COPYHOUND_LOG`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// One line of text per event.
    Text,
    /// One JSON object per event: timestamp, level, target, fields and the spans it is in.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Try copyhound: sample works, a local pirate site crawled, cases in the admin UI.
    Demo(cmd::demo::DemoArgs),
    /// Measure throughput of copyhound's hot paths.
    #[command(subcommand)]
    Bench(bench::cli::BenchCommand),
    /// Match local files or single pages (URLs) against the registered works.
    Check(cmd::check::CheckArgs),
    /// Crawl sites now (or queue the crawl) and store every page as evidence.
    Crawl(cmd::crawl::CrawlArgs),
    /// Look at stored crawls: list them, show one.
    #[command(subcommand)]
    Crawls(cmd::crawls::CrawlsCommand),
    /// Register the works to protect, and look at them.
    #[command(subcommand)]
    Works(cmd::works::WorksCommand),
    /// Apply the database migrations (every command also applies them at start).
    Migrate(cmd::migrate::MigrateArgs),
    /// Stored crawl evidence.
    #[command(subcommand)]
    Snapshots(cmd::snapshots::SnapshotsCommand),
    /// Infringement cases: one per site copying a work.
    #[command(subcommand)]
    Cases(cmd::cases::CasesCommand),
    /// Export the matches found (JSON lines or CSV).
    #[command(subcommand)]
    Reports(cmd::reports::ReportsCommand),
    /// Domains licensed to publish works: their copies never open a case.
    #[command(subcommand)]
    Licensed(cmd::cases::LicensedCommand),
    /// Discovery: a work's rare phrases sent to search providers, the pages found matched,
    /// the domains with a copy listed as candidates to approve or ignore.
    #[command(subcommand)]
    Discover(cmd::discover::DiscoverCommand),
    /// Suspect sites: watched, each crawled on its own schedule.
    #[command(subcommand)]
    Sites(cmd::sites::SitesCommand),
    /// Takedown notices drafted from confirmed cases, and the re-checks after they are sent.
    #[command(subcommand)]
    Notices(cmd::notices::NoticesCommand),
    /// Mail: try the SMTP server that notices are sent through.
    #[command(subcommand)]
    Notify(cmd::notify::NotifyCommand),
    /// Accounts of the admin UI: users, their roles and passwords, and API tokens.
    #[command(subcommand)]
    Users(cmd::users::UsersCommand),
    /// Match stored pages again (after registering a work, or adding a licensed domain).
    Rematch(cmd::rematch::RematchArgs),
    /// Figures: detections per day, top sites, exposure per work, the takedown funnel,
    /// licensed matches apart, crawl health per site.
    Stats(cmd::stats::StatsArgs),
    /// Run jobs from the queue until Ctrl-C.
    Worker(cmd::worker::WorkerArgs),
    /// Serve the admin UI and the JSON API, with workers and schedules, until Ctrl-C.
    Serve(cmd::serve::ServeArgs),
    /// Print the effective settings (defaults, --config file and COPYHOUND_* variables) as
    /// TOML, secrets masked.
    Config,
    /// Check the database, its migrations, the outbound (crawling) settings and the
    /// time-stamping authority, and say what to fix.
    Doctor(cmd::doctor::DoctorArgs),
    /// The matcher index: write a snapshot of it that workers start from.
    #[command(subcommand)]
    Index(cmd::index::IndexCommand),
    /// Where page bodies are kept: move them between the database and the object store.
    #[command(subcommand)]
    Storage(cmd::storage::StorageCommand),
    /// Remove the page bodies past their retention (`retention` settings): unmatched pages'
    /// after `unmatched`, evidence after `evidence`; print what was removed.
    Gc(cmd::gc::GcArgs),
    /// Copy a SQLite database to a new file, consistently, while copyhound runs.
    Backup(cmd::backup::BackupArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = cmd::use_color(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    settings::init_logs(cli.log_format == LogFormat::Json, color);
    let busy = std::time::Duration::from_secs_f64(cli.sqlite_busy_timeout);
    let result = settings::database_url(cli.database)
        .and_then(|database| run(cli.command, cli.config.as_deref(), &database, busy));
    let code = match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`... | head`): it has what it wanted.
        Err(e) if e.is::<cmd::StdoutClosed>() => ExitCode::SUCCESS,
        Err(e) => {
            // A secret quoted by whatever it went into (a URL, a server's answer) is masked.
            eprintln!("error: {}", bounds::mask_known(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    };
    // A command stopped by Ctrl-C exits as the shell expects of an interrupted one, even
    // when it stopped cleanly.
    if cmd::interrupted() {
        ExitCode::from(cmd::INTERRUPTED_EXIT)
    } else {
        code
    }
}

fn run(
    command: Command,
    config: Option<&std::path::Path>,
    database: &str,
    sqlite_busy_timeout: std::time::Duration,
) -> anyhow::Result<()> {
    let store_settings = store::StoreSettings {
        sqlite_busy_timeout,
        ..store::StoreSettings::default()
    };
    // Commands that need no settings run even when the settings are broken.
    let command = match command {
        Command::Completions(_) | Command::Doctor(_) => {
            cmd::set_store_settings(store_settings.clone());
            command
        }
        command => command,
    };
    let command = match command {
        Command::Completions(a) => return cmd::completions::run(a, &mut Cli::command()),
        Command::Doctor(a) => return block_on(cmd::doctor::run(a, config, database)),
        command => command,
    };
    let loaded = settings::load(config, std::env::vars())?;
    for key in &loaded.unknown_keys {
        tracing::warn!(key, "unknown setting ignored");
        eprintln!("warning: unknown setting `{key}` ignored");
    }
    let settings = loaded.settings;
    // Every command opens the database with the settings' body store.
    cmd::set_store_settings(store::StoreSettings {
        storage: settings.storage.clone(),
        ..store_settings
    });
    match command {
        Command::Demo(a) => block_on(cmd::demo::run(a, &settings)),
        Command::Bench(c) => cmd::bench::run(c, database, &settings),
        Command::Check(a) => on_store(database, async |s| cmd::check::run(s, a, &settings).await),
        Command::Crawl(a) => on_store(database, async |s| cmd::crawl::run(s, a, &settings).await),
        Command::Crawls(c) => on_store(database, async |s| cmd::crawls::run(s, c).await),
        Command::Works(c) => on_store(database, async |s| cmd::works::run(s, c, &settings).await),
        Command::Migrate(a) => block_on(cmd::migrate::run(a, database)),
        Command::Snapshots(c) => on_store(database, async |s| cmd::snapshots::run(s, c).await),
        Command::Cases(c) => block_on(cmd::cases::run(c, database, &settings)),
        Command::Reports(c) => on_store(database, async |s| cmd::reports::run(s, c).await),
        Command::Licensed(c) => on_store(database, async |s| cmd::cases::licensed(s, c).await),
        Command::Sites(c) => on_store(database, async |s| cmd::sites::run(s, c, &settings).await),
        Command::Discover(c) => on_store(database, async |s| {
            cmd::discover::run(s, c, &settings).await
        }),
        Command::Notices(c) => {
            on_store(database, async |s| cmd::notices::run(s, c, &settings).await)
        }
        Command::Notify(c) => block_on(cmd::notify::run(c, &settings)),
        Command::Users(c) => on_store(database, async |s| cmd::users::run(s, c).await),
        Command::Rematch(a) => {
            on_store(database, async |s| cmd::rematch::run(s, a, &settings).await)
        }
        Command::Stats(a) => on_store(database, async |s| cmd::stats::run(s, a).await),
        Command::Worker(a) => block_on(cmd::worker::run(a, database, &settings)),
        Command::Serve(a) => block_on(cmd::serve::run(a, database, &settings)),
        Command::Config => cmd::config::run(&settings, database),
        Command::Backup(a) => block_on(cmd::backup::run(a, database)),
        Command::Storage(c) => on_store(database, async |s| cmd::storage::run(s, c).await),
        Command::Gc(a) => on_store(database, async |s| {
            cmd::gc::run(s, a, &settings.retention).await
        }),
        Command::Index(c) => on_store(database, async |s| cmd::index::run(s, c, &settings).await),
        Command::Doctor(_) | Command::Completions(_) => unreachable!("handled above"),
    }
}

/// Runs an async command on a multi-threaded runtime.
fn block_on(command: impl std::future::Future<Output = anyhow::Result<()>>) -> anyhow::Result<()> {
    tokio::runtime::Runtime::new()?.block_on(command)
}

/// Runs a command on the opened database ([`cmd::on_store`]).
fn on_store(
    database: &str,
    command: impl AsyncFnOnce(&store::Store) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    block_on(cmd::on_store(database, command))
}
