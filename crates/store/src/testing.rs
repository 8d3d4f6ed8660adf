//! Fresh databases for tests, on either backend (feature `testing`): a temp SQLite file, or
//! a Postgres schema of its own, dropped afterwards.
//!
//! The Postgres URL comes from `COPYHOUND_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`). When the server cannot be reached,
//! [`postgres`] prints a loud `SKIPPED` line and returns `None`, or panics when
//! `COPYHOUND_REQUIRE_POSTGRES=1` (as `.ci/run` sets it).

#![allow(clippy::missing_panics_doc)] // test fixtures panic on setup failure by design

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{Connection, Executor};

use crate::{BackendKind, DatabaseUrl, Store, StoreSettings};

/// Where the Postgres half of the suite connects; one env var, with the CI default.
pub const POSTGRES_URL_VAR: &str = "COPYHOUND_TEST_POSTGRES_URL";
/// Set to 1 (as `.ci/run` does) to fail instead of skipping when Postgres is unreachable.
pub const REQUIRE_POSTGRES_VAR: &str = "COPYHOUND_REQUIRE_POSTGRES";
const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
/// Test schemas are named `cht_<unix seconds>_<pid>_<n>`; ones older than this are left
/// over from a crashed run and dropped.
const STALE_SCHEMA_SECS: u64 = 3600;

/// A store on a database of its own, removed when dropped.
pub struct TestDb {
    /// The store, migrated.
    pub store: Store,
    /// The URL the store was opened with.
    pub url: String,
    /// Postgres: the schema (also the connections' application_name).
    pub schema: Option<String>,
    cleanup: Cleanup,
}

enum Cleanup {
    TempDir(#[allow(dead_code)] tempfile::TempDir),
    Schema { admin_url: String, schema: String },
}

impl TestDb {
    /// Which backend.
    pub fn kind(&self) -> BackendKind {
        self.store.kind()
    }

    /// Runs raw SQL (setup a test needs beyond the store API) on a connection of its own.
    pub async fn execute(&self, sql: &str) {
        let sql = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()));
        match self.kind() {
            BackendKind::Postgres => {
                let mut c = sqlx::PgConnection::connect(&self.url).await.unwrap();
                sql.execute(&mut c).await.unwrap();
            }
            BackendKind::Sqlite => {
                let mut c = sqlx::SqliteConnection::connect(&self.url).await.unwrap();
                sql.execute(&mut c).await.unwrap();
            }
        }
    }

    /// Opens a second store on the same database (another "process").
    pub async fn reopen(&self, settings: &StoreSettings) -> Store {
        Store::open(&self.url, settings).await.unwrap()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Cleanup::Schema { admin_url, schema } = &self.cleanup {
            let (admin_url, schema) = (admin_url.clone(), schema.clone());
            // Drop runs inside the test's runtime, which cannot block on a future: use a
            // thread with a runtime of its own.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    if let Ok(mut c) = sqlx::PgConnection::connect(&admin_url).await {
                        let _ = c
                            .execute(sqlx::AssertSqlSafe(format!(
                                "DROP SCHEMA IF EXISTS {schema} CASCADE"
                            )))
                            .await;
                    }
                });
            })
            .join();
        }
    }
}

/// A migrated SQLite database in a temp folder.
pub async fn sqlite(_test: &str) -> Option<TestDb> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/copyhound.db", dir.path().display());
    let store = Store::open(&url, &StoreSettings::default()).await.unwrap();
    Some(TestDb {
        store,
        url,
        schema: None,
        cleanup: Cleanup::TempDir(dir),
    })
}

fn postgres_base_url() -> String {
    std::env::var(POSTGRES_URL_VAR).unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned())
}

fn require_postgres() -> bool {
    std::env::var(REQUIRE_POSTGRES_VAR).is_ok_and(|v| v == "1")
}

static SWEPT: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();

/// A migrated Postgres schema of its own, or `None` (after a loud message) when Postgres is
/// unreachable and not required.
pub async fn postgres(test: &str) -> Option<TestDb> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let admin_url = postgres_base_url();
    let mut admin = match sqlx::PgConnection::connect(&admin_url).await {
        Ok(c) => c,
        Err(e) => {
            let url = DatabaseUrl::parse(&admin_url)
                .map(|u| u.to_string())
                .unwrap_or(admin_url);
            if require_postgres() {
                panic!(
                    "postgres not reachable at {url} ({e}) and {REQUIRE_POSTGRES_VAR}=1: \
                     start postgres or set {POSTGRES_URL_VAR}"
                );
            }
            eprintln!(
                "\n!!!!!!!! SKIPPED: postgres not reachable at {url} ({e}); test {test} did \
                 not run. Start postgres or set {POSTGRES_URL_VAR}; {REQUIRE_POSTGRES_VAR}=1 \
                 makes this a failure. !!!!!!!!\n"
            );
            return None;
        }
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    SWEPT
        .get_or_init(|| async {
            let stale: Vec<String> = sqlx::query_scalar(
                "SELECT nspname::TEXT FROM pg_namespace WHERE nspname LIKE 'cht\\_%'",
            )
            .fetch_all(&mut admin)
            .await
            .unwrap_or_default();
            for schema in stale {
                let born: u64 = schema
                    .split('_')
                    .nth(1)
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(0);
                if now.saturating_sub(born) > STALE_SCHEMA_SECS {
                    let _ = admin
                        .execute(sqlx::AssertSqlSafe(format!(
                            "DROP SCHEMA IF EXISTS {schema} CASCADE"
                        )))
                        .await;
                }
            }
        })
        .await;
    let schema = format!(
        "cht_{now}_{}_{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .await
        .unwrap();
    let sep = if admin_url.contains('?') { '&' } else { '?' };
    let url = format!("{admin_url}{sep}options[search_path]={schema}&application_name={schema}");
    let store = Store::open(&url, &StoreSettings::default()).await.unwrap();
    Some(TestDb {
        store,
        url,
        schema: Some(schema.clone()),
        cleanup: Cleanup::Schema { admin_url, schema },
    })
}

/// Kills every server connection of this test's stores (Postgres only): what a server
/// restart does to a running worker. Returns how many it killed.
pub async fn terminate_connections(db: &TestDb) -> u64 {
    let schema = db.schema.as_deref().expect("postgres test db");
    let mut admin = sqlx::PgConnection::connect(&postgres_base_url())
        .await
        .unwrap();
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1 AND pid <> pg_backend_pid()",
    )
    .bind(schema)
    .fetch_all(&mut admin)
    .await
    .unwrap();
    killed.into_iter().filter(|&k| k).count() as u64
}
