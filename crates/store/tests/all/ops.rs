//! What operating copyhound asks the store (`OpsReads`: ping, schema state, the counts
//! `/metrics` shows) on both backends, and `Store::backup_to` on SQLite while another
//! connection writes.

use std::time::Duration;

use store::testing::{TestDb, postgres, sample_work, sqlite};
use store::{BackendKind, JobQueue, NewJob, OpsReads, WorkWrites};

#[derive(serde::Serialize)]
enum Job {
    FetchPage { n: u32 },
    MatchSnapshot { n: u32 },
}

async fn ops_reads(db: TestDb) {
    let store = &db.store;
    store.ping().await.unwrap();
    let state = store.schema_state().await.unwrap();
    assert!(state.is_current(), "{state:?}");

    assert_eq!(store.match_totals().await.unwrap(), Default::default());
    let work = store
        .insert_work(&sample_work("ops", 1))
        .await
        .unwrap()
        .id();
    db.execute(&format!(
        "INSERT INTO detections_daily (day, work_id, licensed, matches) VALUES \
         ('2026-11-01', {work}, FALSE, 3), ('2026-11-02', {work}, FALSE, 4), \
         ('2026-11-02', {work}, TRUE, 2)"
    ))
    .await;
    let totals = store.match_totals().await.unwrap();
    assert_eq!((totals.matches, totals.licensed), (7, 2));

    assert!(store.job_depth().await.unwrap().is_empty());
    let now = chrono::Utc::now();
    assert!(store.queue_wait(now).await.unwrap().is_empty());
    for n in 0..3 {
        // The first has been due for a minute; the others since now.
        let due = now - chrono::TimeDelta::seconds(if n == 0 { 60 } else { 0 });
        store
            .enqueue(&NewJob::new(&Job::FetchPage { n }).unwrap().run_at(due))
            .await
            .unwrap();
    }
    // Due in an hour: not waiting yet.
    store
        .enqueue(
            &NewJob::new(&Job::FetchPage { n: 9 })
                .unwrap()
                .queue("later")
                .run_at(now + chrono::TimeDelta::hours(1)),
        )
        .await
        .unwrap();
    let wait = store.queue_wait(now).await.unwrap();
    assert_eq!(wait.len(), 1, "{wait:?}");
    assert_eq!(wait[0].0, "default");
    assert!(
        (59_000..=61_000).contains(&wait[0].1.as_millis()),
        "{wait:?}"
    );
    store
        .enqueue(
            &NewJob::new(&Job::MatchSnapshot { n: 0 })
                .unwrap()
                .queue("match"),
        )
        .await
        .unwrap();
    let claimed = store
        .claim("default", "w1", 1, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    // A finished job is not depth.
    let done = store
        .claim("match", "w1", 1, Duration::from_secs(60))
        .await
        .unwrap();
    store.complete(done[0].lease).await.unwrap();
    let depth: Vec<(String, String, String, u64)> = store
        .job_depth()
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.queue, d.kind, d.status, d.jobs))
        .collect();
    let row = |q: &str, k: &str, s: &str, n| (q.to_owned(), k.to_owned(), s.to_owned(), n);
    assert_eq!(
        depth,
        [
            row("default", "FetchPage", "queued", 2),
            row("default", "FetchPage", "running", 1),
            row("later", "FetchPage", "queued", 1)
        ]
    );
}

async fn schema_state_sees_pending_and_unknown(db: TestDb) {
    let checksum = match db.kind() {
        BackendKind::Sqlite => "X'00'",
        BackendKind::Postgres => "'\\x00'::bytea",
    };
    db.execute(&format!(
        "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, \
         execution_time) VALUES (99990101000000, 'from the future', CURRENT_TIMESTAMP, TRUE, \
         {checksum}, 0)"
    ))
    .await;
    let last = db
        .store
        .migration_status()
        .await
        .unwrap()
        .last()
        .unwrap()
        .version;
    db.execute(&format!(
        "DELETE FROM _sqlx_migrations WHERE version = {last}"
    ))
    .await;
    let state = db.store.schema_state().await.unwrap();
    assert_eq!(state.unknown, [99990101000000]);
    assert_eq!(
        state.pending.iter().map(|m| m.version).collect::<Vec<_>>(),
        [last]
    );
    assert!(!state.is_current());
}

#[tokio::test]
async fn ops_reads_sqlite() {
    ops_reads(sqlite("ops_reads").await.unwrap()).await;
}

#[tokio::test]
async fn ops_reads_postgres() {
    if let Some(db) = postgres("ops_reads").await {
        ops_reads(db).await;
    }
}

#[tokio::test]
async fn schema_state_sqlite() {
    schema_state_sees_pending_and_unknown(sqlite("schema_state").await.unwrap()).await;
}

#[tokio::test]
async fn schema_state_postgres() {
    if let Some(db) = postgres("schema_state").await {
        schema_state_sees_pending_and_unknown(db).await;
    }
}

#[tokio::test]
async fn a_postgres_store_refuses_backup_naming_pg_dump() {
    let Some(db) = postgres("backup").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let err = db
        .store
        .backup_to(&dir.path().join("b.db"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("pg_dump"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_backup_is_consistent_while_another_connection_writes() {
    use sqlx::Connection;
    let db = sqlite("backup").await.unwrap();
    assert_eq!(db.kind(), BackendKind::Sqlite);
    db.execute("CREATE TABLE pairs (id INTEGER PRIMARY KEY, half INTEGER NOT NULL)")
        .await;
    // Another connection (another process, as far as SQLite knows) commits two rows per
    // transaction as fast as it can: a consistent copy holds an even number of rows.
    let url = db.url.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (committed, mut commits_seen) = tokio::sync::watch::channel(0u64);
    let writer = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
            let mut commits = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut tx = c.begin().await.unwrap();
                for half in 0..2 {
                    sqlx::query("INSERT INTO pairs (half) VALUES ($1)")
                        .bind(half)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                }
                tx.commit().await.unwrap();
                commits += 1;
                committed.send_replace(commits);
            }
            commits
        })
    };
    // The copy starts once the writer has committed, and the writer is seen to commit after
    // it: by its count, not by a guess at how fast it goes.
    commits_seen.wait_for(|&n| n >= 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("backup.db");
    let bytes = db.store.backup_to(&target).await.unwrap();
    // One commit may be in the database but not yet counted when the copy ends; the one
    // after it began after the copy.
    let counted_at_copy = *commits_seen.borrow_and_update();
    commits_seen
        .wait_for(|&n| n >= counted_at_copy + 2)
        .await
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let commits = writer.await.unwrap();

    assert_eq!(bytes, std::fs::metadata(&target).unwrap().len());
    let mut copy = sqlx::SqliteConnection::connect(&format!("sqlite://{}", target.display()))
        .await
        .unwrap();
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut copy)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pairs")
        .fetch_one(&mut copy)
        .await
        .unwrap();
    assert!(rows > 0, "the writer had committed before the copy");
    assert_eq!(rows % 2, 0, "a torn transaction in the copy: {rows} rows");
    assert!(
        (rows as u64) < 2 * commits,
        "the writer went on after the copy: {rows} rows of {commits} commits"
    );
    // The copy is a copyhound database this build opens as it is.
    let reopened = store::Store::connect(
        &format!("sqlite://{}", target.display()),
        &store::StoreSettings::default(),
    )
    .await
    .unwrap();
    assert!(reopened.schema_state().await.unwrap().is_current());

    let err = db.store.backup_to(&target).await.unwrap_err();
    assert!(err.to_string().contains("exists"), "{err}");
}
