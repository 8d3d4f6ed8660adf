//! Fresh databases for tests, on either backend (feature `testing`): a temp SQLite file, or
//! a Postgres schema of its own, dropped afterwards.
//!
//! The Postgres URL comes from `COPYHOUND_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`). When the server cannot be reached,
//! [`postgres`] prints a loud `SKIPPED` line and returns `None`, or panics when
//! `COPYHOUND_REQUIRE_POSTGRES=1` (as `.ci/run` sets it).

#![allow(clippy::missing_panics_doc)] // test fixtures panic on setup failure by design

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{Connection, Executor};

use crate::{BackendKind, DatabaseUrl, Store, StoreSettings, WorkId};

/// Where the Postgres half of the suite connects; one env var, with the CI default.
pub const POSTGRES_URL_VAR: &str = "COPYHOUND_TEST_POSTGRES_URL";
/// Set to 1 (as `.ci/run` does) to fail instead of skipping when Postgres is unreachable.
pub const REQUIRE_POSTGRES_VAR: &str = "COPYHOUND_REQUIRE_POSTGRES";
const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
/// Test schemas are named `cht_<unix seconds>_<pid>_<n>`; ones older than this are left
/// over from a crashed run and dropped.
const STALE_SCHEMA_SECS: u64 = 3600;

/// A batch of an import, committed: the work is still hidden (its chapters so far are
/// stored, nothing reads it as a work) until the last batch is followed by the transaction
/// that shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportBatch {
    /// The work being imported.
    pub work: WorkId,
    /// Which batch, from 1.
    pub number: usize,
    /// How many batches the import writes.
    pub of: usize,
}

/// What [`Store::with_import_batch_hook`] runs after each batch of an import commits and
/// before the import goes on. The import waits for the returned future: a hook that never
/// finishes holds the import there, to be aborted as a killed process would stop it.
pub type ImportBatchHook =
    Arc<dyn Fn(ImportBatch) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

impl Store {
    /// This handle with `hook` run between the batches of each import it writes (clones
    /// made before keep none), so a test stops an import at a point it chooses instead of
    /// racing it with a timer.
    #[must_use]
    pub fn with_import_batch_hook(mut self, hook: ImportBatchHook) -> Self {
        self.import_batch_hook = Some(hook);
        self
    }
}

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

    /// The one integer `sql` answers (a `COUNT(*)`), read on a connection of its own.
    pub async fn scalar(&self, sql: &str) -> i64 {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        match self.kind() {
            BackendKind::Postgres => {
                let mut c = sqlx::PgConnection::connect(&self.url).await.unwrap();
                sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
            }
            BackendKind::Sqlite => {
                let mut c = sqlx::SqliteConnection::connect(&self.url).await.unwrap();
                sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
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
                        // The test's pool may still hold a connection whose rolled-back
                        // transaction keeps its locks until the pool flushes the rollback,
                        // which happens on the test's runtime, blocked here: end those
                        // sessions, or the DROP waits for them for ever.
                        let _ = sqlx::query(
                            "SELECT pg_terminate_backend(l.pid) FROM pg_locks l \
                             JOIN pg_class c ON c.oid = l.relation \
                             JOIN pg_namespace n ON n.oid = c.relnamespace \
                             WHERE n.nspname = $1 AND l.pid <> pg_backend_pid()",
                        )
                        .bind(&schema)
                        .execute(&mut c)
                        .await;
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

/// One `#[tokio::test]` per backend for each scenario named: `mod sqlite { fn scenario }` and
/// `mod postgres { fn scenario }`, each calling `scenario(&TestDb)` of the module that
/// invokes it. The Postgres half returns early without a server (unless
/// `COPYHOUND_REQUIRE_POSTGRES` makes that a failure, see [`crate::testing::postgres`]).
#[macro_export]
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    let db = $crate::testing::sqlite(stringify!($scenario))
                        .await
                        .expect("a SQLite test database");
                    super::$scenario(&db).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    let Some(db) = $crate::testing::postgres(stringify!($scenario)).await else {
                        return;
                    };
                    super::$scenario(&db).await;
                }
            )*
        }
    };
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

/// SQL that differs between the backends in bulk fills: a row source, times, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkSql(pub BackendKind);

impl BulkSql {
    /// A row source `n(i)` of `i` = 1..=`n`, for `FROM`.
    pub fn series(self, n: u64) -> String {
        match self.0 {
            BackendKind::Sqlite => format!(
                "(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) \
                 SELECT i FROM s) n"
            ),
            BackendKind::Postgres => format!("generate_series(1, {n}) AS n(i)"),
        }
    }

    /// A time from an expression of Unix seconds, as the column stores it.
    pub fn time(self, secs: &str) -> String {
        match self.0 {
            BackendKind::Sqlite => {
                format!("strftime('%Y-%m-%dT%H:%M:%S+00:00', {secs}, 'unixepoch')")
            }
            BackendKind::Postgres => format!("to_timestamp({secs})"),
        }
    }

    /// A 32-byte value unique to an integer expression.
    pub fn bytes(self, i: &str) -> String {
        match self.0 {
            BackendKind::Sqlite => format!("CAST(printf('%032d', {i}) AS BLOB)"),
            BackendKind::Postgres => format!("decode(lpad(to_hex({i}), 64, '0'), 'hex')"),
        }
    }

    /// What lets an `INSERT` give ids of its own (Postgres identity columns).
    pub fn own_ids(self) -> &'static str {
        match self.0 {
            BackendKind::Sqlite => "",
            BackendKind::Postgres => "OVERRIDING SYSTEM VALUE",
        }
    }
}

/// The shape [`fill_cases`] gives a store.
pub mod scale {
    /// Works filled.
    pub const WORKS: u64 = 100;
    /// Chapters per work.
    pub const CHAPTERS: u64 = 100;
    /// Pages per case (one snapshot each).
    pub const PAGES_PER_CASE: u64 = 5;
    /// Matches per page.
    pub const MATCHES_PER_PAGE: u64 = 2;
    /// The Unix second fetch times count up from (2026-11-18).
    pub const BASE: u64 = 1_795_000_000;
}

/// Fills an empty store at `url` with `cases` cases (a multiple of [`scale::WORKS`]) and
/// ten matches each, with bulk statements in one transaction, then `ANALYZE`: works of
/// [`scale::CHAPTERS`] chapters, `cases / WORKS` sites, each case (site × work) with
/// [`scale::PAGES_PER_CASE`] pages of one snapshot each matching two chapters. Statuses cycle
/// through all five; case `c` is seen at `BASE + ((c · 7919) mod cases) · step_seconds` (a
/// permutation, so no order follows ids), its pages a second apart. Matches are on no
/// licensed domain. The analytics counters are not filled: see the analytics bench.
pub async fn fill_cases(url: &str, kind: BackendKind, cases: u64, step_seconds: u64) {
    use scale::{BASE, CHAPTERS, MATCHES_PER_PAGE, PAGES_PER_CASE, WORKS};
    assert!(
        cases >= WORKS && cases.is_multiple_of(WORKS),
        "cases must be a multiple of {WORKS}"
    );
    let sql_of = BulkSql(kind);
    let (series, ts, blob) = (
        |n| sql_of.series(n),
        |secs: &str| sql_of.time(secs),
        |i: &str| sql_of.bytes(i),
    );
    let pages = cases * PAGES_PER_CASE;
    let matches = pages * MATCHES_PER_PAGE;
    let sites = cases / WORKS;
    let chapters = WORKS * CHAPTERS;
    let over = sql_of.own_ids();
    // The case of a page, and the case's place in time (a permutation of case numbers).
    let case_of_page = format!("((i - 1) / {PAGES_PER_CASE})");
    let t_case = |c: &str| format!("((({c}) * 7919) % {cases}) * {step_seconds}");
    let page_time = |page: &str| {
        let c = format!("(({page} - 1) / {PAGES_PER_CASE})");
        ts(&format!(
            "{BASE} + {} + (({page} - 1) % {PAGES_PER_CASE}) + 1",
            t_case(&c)
        ))
    };
    let status = |c: &str| {
        format!(
            "CASE ({c}) % 5 WHEN 0 THEN 'new' WHEN 1 THEN 'confirmed' WHEN 2 THEN 'notice_sent' \
             WHEN 3 THEN 'removed' ELSE 'dismissed' END"
        )
    };
    let mut sql = vec![
        format!(
            "INSERT INTO works (id, title, content_hash, source_format, chapter_count, chars) {over} \
             SELECT i, '作品 ' || i, {}, 'txt', {CHAPTERS}, 300000 FROM {} WHERE i <= {WORKS}",
            blob("i"),
            series(WORKS)
        ),
        format!(
            "INSERT INTO chapters (id, work_id, ordinal, title, body, chars) {over} \
             SELECT i, (i - 1) / {CHAPTERS} + 1, (i - 1) % {CHAPTERS} + 1, \
             '第' || ((i - 1) % {CHAPTERS} + 1) || '章', 'x', 3000 FROM {}",
            series(chapters)
        ),
        format!(
            "INSERT INTO sites (id, name, base_url, host) {over} \
             SELECT i, 'site' || i || '.example', 'https://site' || i || '.example/', \
             'site' || i || '.example' FROM {}",
            series(sites)
        ),
        format!(
            "INSERT INTO pages (id, site_id, url) {over} \
             SELECT i, {case_of_page} / {WORKS} + 1, \
             'https://site' || ({case_of_page} / {WORKS} + 1) || '.example/w' || \
             ({case_of_page} % {WORKS} + 1) || '/p' || i FROM {}",
            series(pages)
        ),
        format!(
            "INSERT INTO snapshots (id, page_id, url, final_url, status, body_zstd, body_len, \
             sha256, fetched_at) {over} \
             SELECT p.id, p.id, p.url, p.url, 200, {}, 1, {}, {} FROM pages p",
            blob("0"),
            blob("1"),
            page_time("p.id")
        ),
        format!(
            "INSERT INTO cases (id, site_id, work_id, status, status_changed_at, pages, \
             chapters_matched, first_seen_at, last_seen_at) {over} \
             SELECT i, (i - 1) / {WORKS} + 1, (i - 1) % {WORKS} + 1, {}, {}, {PAGES_PER_CASE}, \
             {}, {}, {} FROM {}",
            status("i - 1"),
            ts(&format!("{BASE} + {} + {PAGES_PER_CASE}", t_case("i - 1"))),
            PAGES_PER_CASE * MATCHES_PER_PAGE,
            ts(&format!("{BASE} + {} + 1", t_case("i - 1"))),
            ts(&format!("{BASE} + {} + {PAGES_PER_CASE}", t_case("i - 1"))),
            series(cases)
        ),
    ];
    // Match i: page (i-1)/2+1, chapter ordinal 1..10 of the case's work.
    let page = format!("((i - 1) / {MATCHES_PER_PAGE} + 1)");
    let case = format!("(({page} - 1) / {PAGES_PER_CASE})");
    let ordinal = format!(
        "((({page} - 1) % {PAGES_PER_CASE}) * {MATCHES_PER_PAGE} + (i - 1) % {MATCHES_PER_PAGE} + 1)"
    );
    sql.push(format!(
        "INSERT INTO matches (id, snapshot_id, chapter_id, work_id, case_id, page_id, fetched_at, \
         licensed, latest, method, score, coverage, matched_chars, page_share, chapter_chars, \
         page_chars, passages) {over} \
         SELECT i, {page}, ({case} % {WORKS}) * {CHAPTERS} + {ordinal}, {case} % {WORKS} + 1, \
         {case} + 1, {page}, {}, FALSE, TRUE, 'align', 0.9, 0.8, 2000, 0.5, 3000, 4000, \
         '[{{\"page\":[0,2000],\"chapter\":[0,2000]}}]' FROM {}",
        page_time(&page),
        series(matches)
    ));
    match kind {
        BackendKind::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(url).await.unwrap();
            c.execute("BEGIN").await.unwrap();
            for s in &sql {
                let t = std::time::Instant::now();
                c.execute(sqlx::AssertSqlSafe(s.clone())).await.unwrap();
                eprintln!(
                    "  {} in {:.1} s",
                    &s[..s.find('(').unwrap()],
                    t.elapsed().as_secs_f64()
                );
            }
            c.execute("COMMIT").await.unwrap();
            c.execute("ANALYZE").await.unwrap();
        }
        BackendKind::Postgres => {
            let mut c = sqlx::PgConnection::connect(url).await.unwrap();
            let mut tx = c.begin().await.unwrap();
            for s in &sql {
                let t = std::time::Instant::now();
                tx.execute(sqlx::AssertSqlSafe(s.clone())).await.unwrap();
                eprintln!(
                    "  {} in {:.1} s",
                    &s[..s.find('(').unwrap()],
                    t.elapsed().as_secs_f64()
                );
            }
            for table in [
                "works",
                "chapters",
                "sites",
                "pages",
                "snapshots",
                "cases",
                "matches",
            ] {
                tx.execute(sqlx::AssertSqlSafe(format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                     (SELECT MAX(id) FROM {table}))"
                )))
                .await
                .unwrap();
            }
            tx.commit().await.unwrap();
            c.execute("ANALYZE").await.unwrap();
        }
    }
}

/// Waits until `done` holds, checking every 20 ms, and fails the test naming `what` when it
/// still does not after `limit`: for a result that comes from another task or process.
pub async fn wait_for(what: &str, limit: std::time::Duration, mut done: impl AsyncFnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done().await {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The SQL [`crate::CaseReads::cases`] runs for `filter` (with a cursor when `after`), for
/// tests that read its plan.
pub fn case_list_sql(filter: &crate::CaseFilter, after: bool, limit: u32) -> String {
    crate::cases::list_sql(filter, after, limit)
}

/// A work titled `title` with `chapters` short chapters and placeholder fingerprints (no
/// postings), its content hash made from the title: for tests that need works to match, not
/// to index.
pub fn sample_work(title: &str, chapters: usize) -> crate::NewWork {
    let mut content_hash = [0u8; 32];
    for (i, b) in title.bytes().enumerate() {
        content_hash[i % 32] ^= b.rotate_left(i as u32 / 32);
    }
    crate::NewWork {
        title: title.to_owned(),
        author: None,
        content_hash,
        source_name: None,
        source_format: crate::SourceFormat::Txt,
        source_encoding: None,
        front_matter: String::new(),
        chapters: (1..=chapters)
            .map(|i| crate::NewChapter {
                title: format!("第{i}章"),
                body: format!("{title} {i}"),
                fingerprint: crate::NewFingerprint {
                    normalizer_version: 1,
                    chars: 100,
                    simhash: i as u64,
                    summary: vec![1; 8],
                    text_winnow: vec![],
                    pinyin_winnow: vec![],
                },
            })
            .collect(),
    }
}

/// A plain 200 response of `url` fetched at `fetched_at` (body SHA-256 all `sha`, 1000 bytes),
/// of no crawl.
pub fn sample_snapshot(
    url: &str,
    sha: u8,
    fetched_at: chrono::DateTime<chrono::Utc>,
) -> crate::NewSnapshot {
    crate::NewSnapshot {
        crawl: None,
        url: url.to_owned(),
        final_url: url.to_owned(),
        status: 200,
        http_version: "HTTP/1.1".into(),
        headers: vec![],
        header_block: vec![],
        request_header_block: vec![],
        content_type: Some("text/html".into()),
        redirects: "[]".into(),
        sha256: [sha; 32],
        body_len: 1000,
        body_status: "complete".into(),
        fetched_at,
        elapsed_ms: 5,
        remote_addr: None,
        etag: None,
        last_modified: None,
        wire: None,
    }
}

/// SQL that keeps every ended crawl's failures by kind in its row, as the crawl's end does
/// ([`crate::Crawls::set_crawl_status`]): for a bulk fill that writes crawls and frontier rows
/// directly.
pub fn recount_crawl_errors(kind: BackendKind) -> String {
    format!(
        "UPDATE crawls SET errors_by_kind = {} WHERE finished_at IS NOT NULL",
        crate::crawl::errors_json(kind)
    )
}

/// The main text of a stored page (`snapshot`, of `url`): a content page of `body`, UTF-8,
/// fetched now, at depth 0.
pub fn sample_page_text(
    snapshot: crate::SnapshotId,
    url: &str,
    body: impl Into<String>,
) -> crate::NewPageText {
    crate::NewPageText {
        snapshot,
        url: url.to_owned(),
        depth: 0,
        chain: None,
        kind: "content".into(),
        title: None,
        chapter_title: None,
        body: body.into(),
        encoding: "UTF-8".into(),
        decode_errors: false,
        not_modified: false,
        fetched_at: chrono::Utc::now(),
        text_source: "markup".into(),
        text_snapshot: None,
        declared_encoding: None,
    }
}

/// A real S3-compatible server on 127.0.0.1 for tests of bodies on an object store:
/// [s3rver](https://www.npmjs.com/package/s3rver) (npm; `.ci/run` installs it), which keeps
/// objects as files in a temp folder and speaks the S3 REST API with signature checks,
/// ranged reads and multipart uploads. Its bucket is [`S3Server::BUCKET`], its keys
/// s3rver's fixed `S3RVER`/`S3RVER`; the server is killed when this is dropped.
pub struct S3Server {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    child: tokio::process::Child,
    _data: tempfile::TempDir,
}

impl S3Server {
    /// The bucket the server is started with.
    pub const BUCKET: &'static str = "copyhound-test";

    /// Starts a server. `None`, with a loud SKIPPED line, when `s3rver` is not installed,
    /// unless `CI=true`, which makes that a failure.
    pub async fn start() -> Option<S3Server> {
        use tokio::io::AsyncBufReadExt;
        let data = tempfile::tempdir().unwrap();
        let spawned = tokio::process::Command::new("s3rver")
            .arg("-d")
            .arg(data.path())
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                "0",
                "--configure-bucket",
                Self::BUCKET,
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "s3rver is required under CI=true (.ci/run installs it: npm install -g s3rver)"
                );
                eprintln!(
                    "SKIPPED: no s3rver (npm install -g s3rver): no test of bodies on S3 ran"
                );
                return None;
            }
            Err(e) => panic!("starting s3rver: {e}"),
        };
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let listening = tokio::time::timeout(std::time::Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(at) = line.trim().strip_prefix("S3rver listening on ") {
                    return at.to_owned();
                }
            }
            panic!("s3rver ended before it listened");
        })
        .await
        .expect("s3rver did not listen within 60 s");
        // s3rver logs each request on standard output: keep reading it so it never blocks.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Some(S3Server {
            endpoint: format!("http://{listening}"),
            child,
            _data: data,
        })
    }

    /// `[storage]` settings for this server's bucket under `prefix`, spooling in `spool`.
    pub fn storage(&self, prefix: &str, spool: &std::path::Path) -> crate::StorageSettings {
        crate::StorageSettings {
            bodies: format!("s3://{}/{prefix}", Self::BUCKET),
            endpoint: self.endpoint.clone(),
            allow_http: true,
            access_key_id: Some(bounds::Secret::new("S3RVER")),
            secret_access_key: Some(bounds::Secret::new("S3RVER")),
            spool_dir: spool.to_owned(),
            ..crate::StorageSettings::default()
        }
    }

    /// Stops the server now (a store that is down).
    pub async fn stop(&mut self) {
        let _ = self.child.kill().await;
    }
}
