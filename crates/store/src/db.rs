//! The store handle: one of two sqlx pools, picked by URL, and the embedded migrations.

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};
use tracing::{info, instrument, warn};

use crate::url::{BackendKind, DatabaseUrl};
use crate::{Error, Result};

static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/postgres");
static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../../migrations/sqlite");

/// The embedded migrations of a backend.
pub(crate) fn migrator(kind: BackendKind) -> &'static Migrator {
    match kind {
        BackendKind::Postgres => &POSTGRES_MIGRATIONS,
        BackendKind::Sqlite => &SQLITE_MIGRATIONS,
    }
}

/// How the store opens its pools. Defaults suit one process on one machine.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// Most connections in the pool (for SQLite: the reader pool; writes always go through
    /// a single connection).
    pub max_connections: u32,
    /// How long a caller waits for a free connection before [`Error::is_unavailable`].
    pub acquire_timeout: Duration,
    /// How long one SQLite statement waits for another process's write lock (SQLite's
    /// `busy_timeout`) before it fails with SQLITE_BUSY.
    pub sqlite_busy_timeout: Duration,
    /// How many times a SQLite write that failed with SQLITE_BUSY or SQLITE_LOCKED (or
    /// waited out `acquire_timeout` for this process's one writer connection) is tried
    /// again, after a backoff from 50 ms doubling to at most 2 s. With the defaults a
    /// write gives up only after another process held the lock for over a minute.
    pub sqlite_busy_retries: u32,
    /// A work import whose latest batch is older than this was abandoned (its process was
    /// killed): the next import removes its rows. Batches take about a second each.
    pub abandoned_import_after: Duration,
    /// On Postgres, commit the machine's own writes (fetched pages, matches, cases recorded
    /// from them, the queue and the frontier) without waiting for the WAL flush
    /// (`synchronous_commit = off` for the session): a server crash can lose the last
    /// fraction of a second of them, never corrupt or reorder anything, and every one of
    /// them is redone by the job or crawl that wrote it (both idempotent). A person's
    /// decisions (case status, licensed domains, work edits, imports, the audit log) always
    /// wait for the flush (`durable_tx!`), which also makes every earlier write durable.
    /// The same trade as SQLite's `synchronous = NORMAL` in WAL mode; it brought
    /// `copyhound bench pipeline` on Postgres from about 100 to 130 pages/s.
    pub postgres_async_commit: bool,
    /// Where page bodies are kept (`[storage]`): the database, or an object store that
    /// bodies are moved to in WARC segments and read back from ([`crate::BodyStore`]).
    pub storage: crate::StorageSettings,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            max_connections: 8,
            acquire_timeout: Duration::from_secs(10),
            sqlite_busy_timeout: Duration::from_secs(10),
            sqlite_busy_retries: 5,
            abandoned_import_after: Duration::from_secs(600),
            postgres_async_commit: true,
            storage: crate::StorageSettings::default(),
        }
    }
}

/// A handle on the database: cheap to clone, shared by every task of a process.
///
/// All repository traits ([`crate::WorkReads`], [`crate::JobQueue`], ...) are implemented
/// on it, for both backends, with the same SQL wherever the two dialects agree.
#[derive(Clone)]
pub struct Store {
    pub(crate) backend: Backend,
    url: DatabaseUrl,
    busy_retries: u32,
    pub(crate) abandoned_import_after: Duration,
    pub(crate) memo: std::sync::Arc<Memo>,
    /// The object store of bodies, when `[storage] bodies` names one.
    pub(crate) bodies: Option<std::sync::Arc<crate::BodyStore>>,
    /// Called between an import's batches: a test stops an import where it chooses.
    #[cfg(feature = "testing")]
    pub(crate) import_batch_hook: Option<crate::testing::ImportBatchHook>,
}

/// What this process has learnt from the database and may rely on for a while, to spare the
/// hot paths a statement: shared by the clones of a [`Store`].
#[derive(Debug, Default)]
pub(crate) struct Memo {
    /// Crawl run → the time (ms) until which it is live by its last heartbeat read, unless
    /// it ends first (a run that ends gives its host slots back itself).
    pub(crate) live_until: std::sync::Mutex<std::collections::HashMap<i64, i64>>,
    /// Crawl → when this process last put its dead runs' and expired claims back.
    pub(crate) reclaimed_at: std::sync::Mutex<std::collections::HashMap<i64, std::time::Instant>>,
}

#[derive(Clone)]
pub(crate) enum Backend {
    Postgres(PgPool),
    /// SQLite allows one writer at a time. Writes go through a pool of one connection, so
    /// writers in this process queue in the pool instead of spinning on SQLITE_BUSY; reads
    /// run in parallel on the reader pool (WAL lets them proceed during a write).
    Sqlite {
        writer: SqlitePool,
        reader: SqlitePool,
    },
}

/// Runs `$body` with `$pool` bound to the pool that serves reads, once per backend.
macro_rules! read_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.backend {
            $crate::db::Backend::Postgres($pool) => $body,
            $crate::db::Backend::Sqlite { reader: $pool, .. } => $body,
        }
    };
}

/// Runs `$body` with `$pool` bound to the pool that serves single-statement writes. On
/// SQLite a statement refused for another process's lock runs again ([`Store::retry_busy`]):
/// an autocommit statement that failed with SQLITE_BUSY changed nothing.
macro_rules! write_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.backend {
            $crate::db::Backend::Postgres($pool) => $body,
            $crate::db::Backend::Sqlite { writer: $pool, .. } => {
                $store
                    .retry_busy(|| async { Ok::<_, $crate::Error>($body) })
                    .await?
            }
        }
    };
}

/// Evaluates `$body` (which may return early with `?`) and, when it fails, rolls `$tx` back
/// on the spot and returns the error; the value otherwise. `$body` runs inside an async
/// block, so a `return` in it would end only the body: write the body as an expression.
macro_rules! in_tx {
    ($tx:ident, $body:expr) => {{
        let result: $crate::Result<_> = async { Ok($body) }.await;
        match result {
            Ok(out) => out,
            Err(e) => {
                // The body's error is the one worth reporting; a failed rollback ends with
                // the connection, which the pool then closes.
                let _ = $tx.rollback().await;
                return Err(e);
            }
        }
    }};
}

/// Runs `$body` inside a write transaction bound to `$tx` and commits it. An early return
/// (`?`) from `$body` rolls the transaction back before the error is returned: a dropped
/// sqlx transaction leaves its `ROLLBACK` to a task the pool spawns when the connection comes
/// back, which never runs when the runtime is shutting down; the session then holds its locks
/// "idle in transaction" (a test's schema could not be dropped). SQLite transactions start with
/// `BEGIN IMMEDIATE` so that a second process waits for the lock up front rather than
/// failing with SQLITE_BUSY when a read turns into a write; that `BEGIN` is the one place
/// such a transaction can meet the lock (WAL never refuses a commit of a lock holder), so it
/// alone is retried ([`Store::retry_busy`]) and the body runs once.
macro_rules! write_tx {
    ($store:expr, |$tx:ident| $body:expr) => {
        match &$store.backend {
            $crate::db::Backend::Postgres(pool) => {
                let mut $tx = pool.begin().await?;
                let out = $crate::db::in_tx!($tx, $body);
                $tx.commit().await?;
                out
            }
            $crate::db::Backend::Sqlite { writer, .. } => {
                let mut $tx = $store
                    .retry_busy(|| async { Ok(writer.begin_with("BEGIN IMMEDIATE").await?) })
                    .await?;
                let out = $crate::db::in_tx!($tx, $body);
                $tx.commit().await?;
                out
            }
        }
    };
}

/// [`write_tx`] for a person's decision: on Postgres the commit waits for the WAL flush even
/// when the session commits asynchronously ([`StoreSettings::postgres_async_commit`]).
/// SQLite commits the same either way.
macro_rules! durable_tx {
    ($store:expr, |$tx:ident| $body:expr) => {
        match &$store.backend {
            $crate::db::Backend::Postgres(pool) => {
                let mut $tx = pool.begin().await?;
                sqlx::query("SET LOCAL synchronous_commit = on")
                    .execute(&mut *$tx)
                    .await?;
                let out = $crate::db::in_tx!($tx, $body);
                $tx.commit().await?;
                out
            }
            $crate::db::Backend::Sqlite { .. } => $crate::db::write_tx!($store, |$tx| $body),
        }
    };
}

pub(crate) use {durable_tx, in_tx, read_pool, write_pool, write_tx};

/// `options` without TLS when the server is on this host (a loopback address, `localhost` or
/// a Unix socket) and neither the URL (`sslmode=`) nor `PGSSLMODE` asks for a mode: TLS over
/// loopback protects nothing that leaves the machine, and it cost a sixth of a crawl's CPU
/// (`copyhound bench pipeline`). Any explicit mode is kept.
fn without_loopback_tls(options: PgConnectOptions, url: &str) -> PgConnectOptions {
    let host = options
        .get_host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let local = host.starts_with('/')
        || host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    let chosen = url.contains("sslmode=") || std::env::var_os("PGSSLMODE").is_some();
    if local && !chosen {
        options.ssl_mode(sqlx::postgres::PgSslMode::Disable)
    } else {
        options
    }
}

impl Store {
    /// Opens the database named by `url` and applies the migrations.
    ///
    /// # Errors
    /// [`Error::UnsupportedUrl`], an unreachable database, or a failed migration.
    pub async fn open(url: &str, settings: &StoreSettings) -> Result<Store> {
        let store = Store::connect(url, settings).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Opens the database named by `url` without touching the schema. A SQLite file (and
    /// its folder) is created if missing.
    ///
    /// # Errors
    /// [`Error::UnsupportedUrl`] for another scheme; [`Error::Backend`] when the database
    /// cannot be opened or reached.
    #[instrument(skip_all, fields(url = %DatabaseUrl::parse(url).map(|u| u.to_string()).unwrap_or_default()))]
    pub async fn connect(url: &str, settings: &StoreSettings) -> Result<Store> {
        let url = DatabaseUrl::parse(url)?;
        let backend = match url.kind() {
            BackendKind::Postgres => {
                let mut options =
                    without_loopback_tls(PgConnectOptions::from_str(url.expose())?, url.expose());
                if settings.postgres_async_commit {
                    options = options.options([("synchronous_commit", "off")]);
                }
                // One direct connection first: a pool reports an unreachable server only as
                // "pool timed out" after acquire_timeout; this says "connection refused" now.
                options.connect().await?.close().await?;
                let pool = PgPoolOptions::new()
                    .max_connections(settings.max_connections.max(1))
                    .acquire_timeout(settings.acquire_timeout)
                    .connect_with(options)
                    .await?;
                Backend::Postgres(pool)
            }
            BackendKind::Sqlite => {
                let options = SqliteConnectOptions::from_str(url.expose())?
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    // In WAL mode NORMAL loses no committed transaction on a process crash,
                    // only on power loss, and saves an fsync per commit.
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(settings.sqlite_busy_timeout)
                    .foreign_keys(true);
                let in_memory =
                    url.expose().contains(":memory:") || url.expose().contains("mode=memory");
                if !in_memory {
                    create_parent_dir(options.get_filename())?;
                }
                // The writer inserts postings at random places of the hash index; with
                // SQLite's default 2 MB page cache each work's import got slower as the index
                // grew (0.4 s, 0.8 s, 1.2 s for three 2 MB works); with 64 MB it stays ~0.5 s.
                // Writers of this process queue for the one connection while it waits out
                // another process's lock: they wait as long as it may.
                let writer = SqlitePoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(settings.acquire_timeout.max(settings.sqlite_busy_timeout))
                    .connect_with(options.clone().pragma("cache_size", "-65536"))
                    .await?;
                // Every connection to an in-memory database is a database of its own, so
                // there the writer serves reads too.
                let reader = if in_memory {
                    writer.clone()
                } else {
                    SqlitePoolOptions::new()
                        .max_connections(settings.max_connections.max(1))
                        .acquire_timeout(settings.acquire_timeout)
                        .connect_with(options)
                        .await?
                };
                Backend::Sqlite { writer, reader }
            }
        };
        info!(backend = %url.kind(), "database opened");
        let bodies = crate::BodyStore::open(&settings.storage)?.map(std::sync::Arc::new);
        Ok(Store {
            bodies,
            backend,
            url,
            busy_retries: settings.sqlite_busy_retries,
            abandoned_import_after: settings.abandoned_import_after,
            memo: std::sync::Arc::default(),
            #[cfg(feature = "testing")]
            import_batch_hook: None,
        })
    }

    /// Runs a SQLite write `op` again while it fails because another process (or, past
    /// `acquire_timeout`, this one) holds the write lock, up to `sqlite_busy_retries`
    /// times with a growing backoff; any other outcome is returned as it is. `op` must be
    /// safe to repeat after such a failure: one autocommit statement, or a `BEGIN`.
    pub(crate) async fn retry_busy<T, F, Fut>(&self, mut op: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let mut retries = 0;
        loop {
            match op().await {
                Err(e) if e.is_lock_contention() && retries < self.busy_retries => {
                    let wait = busy_backoff(retries);
                    retries += 1;
                    warn!(error = %e, retry = retries, wait_ms = wait.as_millis() as u64,
                          "sqlite write lock held elsewhere; trying again");
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }

    /// This store with bodies kept as `storage` says (what [`StoreSettings::storage`] does at
    /// [`Store::connect`]), for a store opened before.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for settings out of range.
    pub fn with_storage(mut self, storage: &crate::StorageSettings) -> Result<Store> {
        self.bodies = crate::BodyStore::open(storage)?.map(std::sync::Arc::new);
        Ok(self)
    }

    /// Applies the embedded migrations that have not been applied yet.
    ///
    /// # Errors
    /// [`Error::Migrate`] when a migration fails or the database holds a migration this
    /// build does not know (a newer copyhound ran against it).
    #[instrument(skip_all, fields(backend = %self.kind()))]
    pub async fn migrate(&self) -> Result<()> {
        let backend = self.kind().name();
        let result = match &self.backend {
            Backend::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await,
            Backend::Sqlite { writer, .. } => {
                let result = SQLITE_MIGRATIONS.run(writer).await;
                if result.is_err() {
                    // A migration that rebuilds tables runs outside sqlx's transaction with
                    // foreign keys off and opens its own (`..._cases.sql`): after a failure
                    // the writer connection may still be inside it, with enforcement off.
                    let _ = sqlx::query("ROLLBACK").execute(writer).await;
                    let _ = sqlx::query("PRAGMA foreign_keys = ON")
                        .execute(writer)
                        .await;
                }
                result
            }
        };
        result.map_err(|error| Error::Migrate { backend, error })?;
        self.backfill_username_keys().await?;
        info!("migrations applied");
        Ok(())
    }

    /// The migrations this build carries and whether each is applied, oldest first.
    ///
    /// # Errors
    /// [`Error::Backend`] when the migrations table cannot be read.
    pub async fn migration_status(&self) -> Result<Vec<MigrationStatus>> {
        let migrator = migrator(self.kind());
        // The table does not exist before the first migration: report all as pending.
        let applied: Vec<i64> = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
                .fetch_all(pool)
                .await
                .unwrap_or_default()
        });
        Ok(migrator
            .iter()
            .filter(|m| m.migration_type.is_up_migration())
            .map(|m| MigrationStatus {
                version: m.version,
                description: m.description.to_string(),
                applied: applied.contains(&m.version),
            })
            .collect())
    }

    /// Which backend this store talks to.
    pub fn kind(&self) -> BackendKind {
        self.url.kind()
    }

    /// The URL the store was opened with (password masked when displayed).
    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// Closes the pools, waiting for checked-out connections to come back.
    pub async fn close(&self) {
        match &self.backend {
            Backend::Postgres(pool) => pool.close().await,
            Backend::Sqlite { writer, reader } => {
                reader.close().await;
                writer.close().await;
            }
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("url", &self.url).finish()
    }
}

/// One embedded migration and whether the database has it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MigrationStatus {
    /// The timestamp in the file name.
    pub version: i64,
    /// The rest of the file name.
    pub description: String,
    /// Whether it is applied.
    pub applied: bool,
}

/// Ids as the list of an SQL `IN (…)`: integers only, so written into the SQL as they are
/// (for lists longer than a statement's parameters, or built once for several statements).
pub(crate) fn id_list(ids: impl IntoIterator<Item = i64>) -> String {
    ids.into_iter()
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// 50 ms doubling per retry up to 2 s, plus up to a quarter more so that processes that
/// met the same lock do not all come back at the same instant.
fn busy_backoff(retry: u32) -> Duration {
    let base = Duration::from_millis(50)
        .saturating_mul(1 << retry.min(6))
        .min(Duration::from_secs(2));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    base + base.mul_f64(f64::from(nanos % 1000) / 4000.0)
}

fn create_parent_dir(file: &std::path::Path) -> Result<()> {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => std::fs::create_dir_all(dir)
            .map_err(|e| {
                Error::Backend(sqlx::Error::Configuration(
                    format!(
                        "cannot create the folder {} for the database: {e}",
                        dir.display()
                    )
                    .into(),
                ))
            }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(url: &str) -> String {
        let options = PgConnectOptions::from_str(url).unwrap();
        format!("{:?}", without_loopback_tls(options, url).get_ssl_mode())
    }

    #[test]
    fn tls_is_left_out_only_for_a_server_on_this_host_and_no_chosen_mode() {
        if std::env::var_os("PGSSLMODE").is_some() {
            return; // the environment chose a mode: nothing is changed, as tested below
        }
        for local in [
            "postgres://u@127.0.0.1:5432/db",
            "postgres://u@localhost/db",
            "postgres://u@[::1]/db",
            "postgres:///db?host=/var/run/postgresql",
        ] {
            assert_eq!(mode(local), "Disable", "{local}");
        }
        assert_eq!(mode("postgres://u@127.0.0.1/db?sslmode=require"), "Require");
        assert_eq!(mode("postgres://u@db.example.com/db"), "Prefer");
        assert_eq!(mode("postgres://u@10.0.0.5/db"), "Prefer");
    }

    async fn synchronous_commit(store: &Store) -> String {
        let Backend::Postgres(pool) = &store.backend else {
            unreachable!("a Postgres store")
        };
        sqlx::query_scalar("SHOW synchronous_commit")
            .fetch_one(pool)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn machine_writes_commit_asynchronously_and_decisions_wait_for_the_flush() {
        let Some(db) = crate::testing::postgres("async_commit").await else {
            return;
        };
        let store = &db.store;
        assert_eq!(synchronous_commit(store).await, "off");
        let in_decision = async {
            Ok::<String, Error>(durable_tx!(store, |tx| {
                sqlx::query_scalar("SHOW synchronous_commit")
                    .fetch_one(&mut *tx)
                    .await?
            }))
        };
        assert_eq!(in_decision.await.unwrap(), "on");
        // The transaction's setting ended with it.
        assert_eq!(synchronous_commit(store).await, "off");

        let settings = StoreSettings {
            postgres_async_commit: false,
            ..StoreSettings::default()
        };
        let strict = Store::connect(&db.url, &settings).await.unwrap();
        assert_eq!(synchronous_commit(&strict).await, "on");
        strict.close().await;
    }
}
