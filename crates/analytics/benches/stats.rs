//! Each analytics figure timed on a store at scale: 10^5 cases and 10^6 matches (1000 sites ×
//! 100 works, ten matches a case, over a year of fetch times; 5% of the cases' matches on
//! licensed domains), 1.8·10^5 audit rows, 10^4 ended crawls with 2·10^5 frontier entries.
//!
//! `cargo bench -p analytics --bench stats` fills a fresh SQLite database and, when one is
//! reachable (`COPYHOUND_TEST_POSTGRES_URL`), a fresh Postgres schema with bulk SQL
//! (`store::testing::fill_cases`, which `store`'s `case_scale` example fills with too; the
//! store API would take an hour to record 10^6 matches), recounts the analytics counters as
//! the migration does, and prints the median of 7 runs of each figure after a warm-up run.
//! Target: ≤ 50 ms each (issue #12).

use std::time::{Duration, Instant};

use analytics::Window;
use chrono::{DateTime, Utc};
use store::BackendKind;
use store::testing::scale::BASE;
use store::testing::{BulkSql, TestDb, fill_cases};

const CASES: u64 = 100_000;
/// Seconds between the cases' fetch times: 10^5 cases over a year.
const STEP: u64 = 316;
const CRAWLS: u64 = 10_000;
const FRONTIER: u64 = CRAWLS * 20;

/// The UTC day of a `matches.fetched_at`, as `detections_daily.day` holds it.
fn day_of_fetch(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Sqlite => "substr(fetched_at, 1, 10)",
        BackendKind::Postgres => "(fetched_at AT TIME ZONE 'UTC')::date",
    }
}

/// `store::testing::fill_cases` (10^5 cases, 10^6 matches over a year), then what analytics
/// reads beyond it: 5% of the cases' matches moved to licensed domains, the review history in
/// the audit log, 10^4 ended crawls with 2·10^5 frontier entries, and the analytics counters
/// recounted as the migration does.
async fn fill(db: &TestDb) {
    let kind = db.kind();
    fill_cases(&db.url, kind, CASES, STEP).await;
    let sql = BulkSql(kind);
    let over = sql.own_ids();
    // A case's first fetch, as fill_cases sets it, plus `days`.
    let case_time = |days: u64| {
        sql.time(&format!(
            "{BASE} + ((id - 1) * 7919 % {CASES}) * {STEP} + 1 + {days} * 86400"
        ))
    };
    let audit = |action: &str, condition: &str, days: u64| {
        format!(
            "INSERT INTO audit_log (at, actor, action, target_type, target_id) \
             SELECT {}, 'bench', '{action}', 'case', id FROM cases WHERE {condition}",
            case_time(days)
        )
    };
    let statements = [
        "UPDATE matches SET licensed = TRUE, case_id = NULL WHERE case_id % 20 = 19".to_owned(),
        audit("case.open", "TRUE", 0),
        audit("case.confirmed", "status <> 'new'", 1),
        audit(
            "case.notice_sent",
            "status IN ('notice_sent', 'removed')",
            2,
        ),
        audit("case.removed", "status = 'removed'", 5),
        audit("case.dismissed", "status = 'dismissed'", 3),
        // Crawl i: of site (i - 1) / 10 + 1, ended, its totals in its row.
        format!(
            "INSERT INTO crawls (id, site_id, status, pages_fetched, pages_failed, bytes, \
             created_at, started_at, finished_at) {over} \
             SELECT i, (i - 1) / 10 + 1, 'done', 18, 2, 180000, {t}, {t}, {t_end} FROM {}",
            sql.series(CRAWLS),
            t = sql.time(&format!("{BASE} + ((i - 1) % 366) * 86400")),
            t_end = sql.time(&format!("{BASE} + ((i - 1) % 366) * 86400 + 600")),
        ),
        // Entry i: of crawl (i - 1) / 20 + 1; two failed (timeout), one 404, the rest fetched.
        format!(
            "INSERT INTO frontier (id, crawl_id, url, url_hash, depth, discovery, claim_rank, \
             state, status, last_error, created_at, updated_at) {over} \
             SELECT i, (i - 1) / 20 + 1, 'https://x.example/' || i, {}, 1, 'link', 2, \
             CASE WHEN (i - 1) % 20 < 2 THEN 'failed' ELSE 'done' END, \
             CASE WHEN (i - 1) % 20 < 2 THEN NULL WHEN (i - 1) % 20 = 2 THEN 404 ELSE 200 END, \
             CASE WHEN (i - 1) % 20 < 2 THEN 'timeout' END, 0, 0 FROM {}",
            sql.bytes("i"),
            sql.series(FRONTIER),
        ),
        // Each ended crawl's failures by kind, as its end keeps them.
        store::testing::recount_crawl_errors(kind),
        format!(
            "INSERT INTO detections_daily (day, work_id, licensed, matches) \
             SELECT {day}, work_id, licensed, COUNT(*) FROM matches \
             GROUP BY {day}, work_id, licensed",
            day = day_of_fetch(kind)
        ),
        "INSERT INTO chapter_copies (chapter_id, work_id, matches) \
         SELECT chapter_id, MIN(work_id), COUNT(*) FROM matches WHERE NOT licensed \
         GROUP BY chapter_id"
            .to_owned(),
        "ANALYZE".to_owned(),
    ];
    for statement in &statements {
        db.execute(statement).await;
    }
}

/// The median of 7 timed runs of `run` after one untimed.
async fn time<F, Fut, T>(mut run: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = analytics::Result<T>>,
{
    run().await.unwrap();
    let mut times = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        run().await.unwrap();
        times.push(started.elapsed());
    }
    times.sort_unstable();
    times[times.len() / 2]
}

async fn bench(db: TestDb) {
    let name = db.kind().to_string();
    let started = Instant::now();
    fill(&db).await;
    eprintln!(
        "{name}: filled {CASES} cases, {} matches in {:.1} s",
        CASES * 10,
        started.elapsed().as_secs_f64()
    );
    let s = &db.store;
    let now: DateTime<Utc> = DateTime::from_timestamp((BASE + CASES * STEP) as i64, 0).unwrap();
    let all = Window::new(None, now).unwrap();
    let recent = Window::new(Some((now - chrono::TimeDelta::days(30)).date_naive()), now).unwrap();
    let figures: Vec<(&str, Duration)> = vec![
        (
            "detections (all)",
            time(|| analytics::detections(s, &all)).await,
        ),
        (
            "detections (30 d)",
            time(|| analytics::detections(s, &recent)).await,
        ),
        (
            "top sites (all)",
            time(|| analytics::top_sites(s, &all, 10)).await,
        ),
        (
            "top sites (30 d)",
            time(|| analytics::top_sites(s, &recent, 10)).await,
        ),
        ("exposure", time(|| analytics::exposure(s, 10)).await),
        ("funnel (all)", time(|| analytics::funnel(s, &all)).await),
        (
            "funnel (30 d)",
            time(|| analytics::funnel(s, &recent)).await,
        ),
        ("licensed", time(|| analytics::licensed(s, &all, 10)).await),
        (
            "crawl health (all)",
            time(|| analytics::crawl_health(s, &all)).await,
        ),
        (
            "crawl health (30 d)",
            time(|| analytics::crawl_health(s, &recent)).await,
        ),
        (
            "stats (every figure)",
            time(|| analytics::stats(s, &all, 10)).await,
        ),
    ];
    for (figure, took) in figures {
        println!("{name}\t{figure:<22}\t{:>8.2} ms", took.as_secs_f64() * 1e3);
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if let Some(db) = store::testing::sqlite("bench_stats").await {
        bench(db).await;
    }
    if let Some(db) = store::testing::postgres("bench_stats").await {
        bench(db).await;
    }
}
