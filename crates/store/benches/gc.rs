//! `Store::gc` timed at scale (issue #30: "gc of 10^6 unmatched bodies in minutes, not
//! hours"): a fresh SQLite database and, when one is reachable
//! (`COPYHOUND_TEST_POSTGRES_URL`), a fresh Postgres schema, filled with bulk SQL with
//! `GC_BENCH_BODIES` (default 10^5) unmatched pages fetched 40 days ago, each with a body of
//! its own (15 KB as recorded) and a page text, and 1% of them matched in cases seen today.
//! Prints the time of a dry run and of the run that removes them (bodies in the database,
//! texts removed too), and the rate.
//!
//! `cargo bench --bench gc` (in `crates/store`, or `--workspace`).

use std::time::Instant;

use store::testing::{BulkSql, TestDb};
use store::{BackendKind, RetentionSettings};

async fn fill(db: &TestDb, n: u64) {
    let sql = BulkSql(db.kind());
    let (over, series) = (sql.own_ids(), sql.series(n));
    let old = sql.time(
        &(chrono::Utc::now() - chrono::Duration::days(40))
            .timestamp()
            .to_string(),
    );
    let now = sql.time(&chrono::Utc::now().timestamp().to_string());
    let sha = sql.bytes("i");
    let cases = n / 100;
    let statements = [
        format!(
            "INSERT INTO sites (id, name, base_url, host) {over} \
             VALUES (1, 'p.example', 'https://p.example/', 'p.example')"
        ),
        format!(
            "INSERT INTO pages (id, site_id, url) {over} \
             SELECT i, 1, 'https://p.example/' || i FROM {series}"
        ),
        format!(
            "INSERT INTO snapshot_bodies (sha256, body_zstd, body_len) \
             SELECT {sha}, {sha}, 15000 FROM {series}"
        ),
        format!(
            "INSERT INTO snapshots (id, page_id, url, final_url, status, body_zstd, body_len, \
             sha256, wire_sha256, fetched_at) {over} \
             SELECT i, i, 'https://p.example/' || i, 'https://p.example/' || i, 200, {sha}, \
             15000, {sha}, {sha}, {old} FROM {series}"
        ),
        format!(
            "INSERT INTO page_texts (snapshot_id, url, depth, kind, body, encoding, \
             decode_errors, not_modified, fetched_at) \
             SELECT i, 'https://p.example/' || i, 1, 'content', '正文', 'UTF-8', FALSE, FALSE, \
             {old} FROM {series}"
        ),
        // One case per matched page, each of a work of its own.
        format!(
            "INSERT INTO works (id, title, content_hash, source_format, chapter_count, chars) \
             {over} SELECT i, 'w' || i, {sha}, 'txt', 1, 100 FROM {}",
            sql.series(cases)
        ),
        format!(
            "INSERT INTO chapters (id, work_id, ordinal, title, body, chars) {over} \
             SELECT i, i, 1, 'c', 'x', 100 FROM {}",
            sql.series(cases)
        ),
        format!(
            "INSERT INTO cases (id, site_id, work_id, status, last_seen_at) {over} \
             SELECT i, 1, i, 'confirmed', {now} FROM {}",
            sql.series(cases)
        ),
        format!(
            "INSERT INTO matches (snapshot_id, chapter_id, work_id, case_id, page_id, \
             fetched_at, method, score, coverage, matched_chars) \
             SELECT i * 100, i, i, i, i * 100, {old}, 'align', 0.9, 0.8, 100 FROM {}",
            sql.series(cases)
        ),
    ];
    let started = Instant::now();
    for s in &statements {
        db.execute(s).await;
    }
    db.execute("ANALYZE").await;
    eprintln!(
        "  {}: filled {n} pages in {:.1} s",
        db.kind(),
        started.elapsed().as_secs_f64()
    );
}

async fn run(db: TestDb, n: u64) {
    fill(&db, n).await;
    let retention = RetentionSettings {
        keep_unmatched_texts: false,
        ..RetentionSettings::default()
    };
    let started = Instant::now();
    let dry = db.store.gc(&retention, true).await.unwrap();
    let dry_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let real = db.store.gc(&retention, false).await.unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(real.bodies, n - n / 100, "{real:?}");
    assert_eq!(dry.bodies, real.bodies);
    let backend = match db.kind() {
        BackendKind::Sqlite => "sqlite",
        BackendKind::Postgres => "postgres",
    };
    println!(
        "gc {backend}: {} of {n} bodies ({} MB as recorded) and {} texts removed in {secs:.1} s \
         ({:.0} bodies/s; dry run {dry_secs:.1} s); 10^6 at this rate: {:.1} min",
        real.bodies,
        real.bytes / 1_000_000,
        real.texts,
        real.bodies as f64 / secs,
        1e6 / (real.bodies as f64 / secs) / 60.0
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: u64 = std::env::var("GC_BENCH_BODIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    if let Some(db) = store::testing::sqlite("bench_gc").await {
        run(db, n).await;
    }
    if let Some(db) = store::testing::postgres("bench_gc").await {
        run(db, n).await;
    }
}
