//! Cases and reports at the scale issue #11 asks for: fills a fresh SQLite file and a fresh
//! Postgres schema with 10^5 cases and 10^6 matches (bulk `INSERT ... SELECT` over a
//! recursive CTE / `generate_series`), then times the reads `cases list`, `cases show` and
//! `reports export` make, through the store's own API.
//!
//! ```text
//! cargo run -p store --example case_scale -- [--cases 100000] [--sqlite-only | --postgres-only]
//! ```
//!
//! Shape: 100 works of 100 chapters; `cases / 100` sites; each case (site × work) has 5
//! pages of one snapshot each, each page matching 2 chapters, so 10 matches per case. The
//! statuses cycle through all five; `last_seen_at` is a permutation of case ids, so the
//! listing's order is not id order. The SQLite file is left in `target/case_scale/` and the
//! Postgres schema `case_scale` (in `COPYHOUND_TEST_POSTGRES_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`) is left for `EXPLAIN`; each run recreates them.

use std::time::{Duration, Instant};

use sqlx::{Connection, Executor};
use store::{
    BackendKind, CaseFilter, CaseId, CaseReads, CaseStatus, ChapterId, EvidenceWrites,
    LicensedRows, MatchWrites, NewMatch, ReportFilter, Reports, Store, StoreSettings, WorkId,
};

const WORKS: u64 = 100;
const CHAPTERS: u64 = 100;
const PAGES_PER_CASE: u64 = 5;
const MATCHES_PER_PAGE: u64 = 2;
/// 2026-11-18T... in Unix seconds: fetch times count up from here.
const BASE: u64 = 1_795_000_000;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases: u64 = args
        .iter()
        .position(|a| a == "--cases")
        .and_then(|i| args.get(i + 1))
        .map_or(100_000, |n| n.parse().expect("--cases takes a number"));
    assert!(
        cases >= WORKS && cases.is_multiple_of(WORKS),
        "--cases must be a multiple of {WORKS}"
    );
    let sqlite = !args.iter().any(|a| a == "--postgres-only");
    let postgres = !args.iter().any(|a| a == "--sqlite-only");

    if sqlite {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/case_scale");
        let _ = std::fs::remove_dir_all(&dir);
        let url = format!("sqlite://{}/copyhound.db", dir.display());
        run(&url, cases).await;
        println!("left {url} for EXPLAIN QUERY PLAN");
    }
    if postgres {
        let admin = std::env::var("COPYHOUND_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
        let mut c = sqlx::PgConnection::connect(&admin)
            .await
            .expect("postgres reachable (COPYHOUND_TEST_POSTGRES_URL)");
        c.execute("DROP SCHEMA IF EXISTS case_scale CASCADE; CREATE SCHEMA case_scale")
            .await
            .unwrap();
        let sep = if admin.contains('?') { '&' } else { '?' };
        run(
            &format!("{admin}{sep}options[search_path]=case_scale"),
            cases,
        )
        .await;
        println!("left schema case_scale for EXPLAIN (DROP SCHEMA case_scale CASCADE)");
    }
}

async fn run(url: &str, cases: u64) {
    let store = Store::open(url, &StoreSettings::default()).await.unwrap();
    let kind = store.kind();
    println!(
        "\n== {kind}: {cases} cases, {} matches",
        cases * PAGES_PER_CASE * MATCHES_PER_PAGE
    );
    let start = Instant::now();
    fill(url, kind, cases).await;
    println!("fill + analyze: {:.1} s", start.elapsed().as_secs_f64());

    let mut filters = vec![("cases: first page of 50, no filter", CaseFilter::default())];
    filters.push((
        "cases: first page, status dismissed",
        CaseFilter {
            status: Some(CaseStatus::Dismissed),
            ..CaseFilter::default()
        },
    ));
    filters.push((
        "cases: first page, one work",
        CaseFilter {
            work: Some(WorkId(42)),
            ..CaseFilter::default()
        },
    ));
    filters.push((
        "cases: first page, one site",
        CaseFilter {
            site: Some("site7.example".into()),
            ..CaseFilter::default()
        },
    ));
    filters.push((
        "cases: first page, status + work",
        CaseFilter {
            status: Some(CaseStatus::New),
            work: Some(WorkId(41)),
            ..CaseFilter::default()
        },
    ));
    let store = &store;
    for (label, filter) in &filters {
        let rows = time(label, move || async move {
            store.cases(filter, None, 50).await.unwrap().len()
        })
        .await;
        assert!(rows > 0, "{label}: no rows");
    }
    let middle = store.case(CaseId(cases as i64 / 2)).await.unwrap().cursor();
    time("cases: a page of 50 from the middle", move || async move {
        store
            .cases(&CaseFilter::default(), Some(middle), 50)
            .await
            .unwrap()
            .len()
    })
    .await;
    time("case(id)", move || async move {
        store.case(CaseId(cases as i64 / 3)).await.unwrap();
        1
    })
    .await;
    time("case_matches(id)", move || async move {
        store
            .case_matches(CaseId(cases as i64 / 3))
            .await
            .unwrap()
            .len()
    })
    .await;

    // A new copy on a big site: one more page for an existing case, in one transaction.
    let site = 7;
    let snapshot = {
        let s = store::NewSnapshot {
            crawl: None,
            url: format!("https://site{site}.example/w43/new"),
            final_url: format!("https://site{site}.example/w43/new"),
            status: 200,
            http_version: "HTTP/1.1".into(),
            headers: vec![],
            header_block: vec![],
            request_header_block: vec![],
            content_type: None,
            redirects: "[]".into(),
            sha256: [9; 32],
            body_len: 1,
            body_status: "complete".into(),
            fetched_at: chrono::Utc::now(),
            elapsed_ms: 1,
            remote_addr: None,
            etag: None,
            last_modified: None,
            wire: None,
        };
        store.insert_snapshot(&s, Some(&b"z"[..])).await.unwrap().0
    };
    let work = 43;
    let m = |ordinal: i64| NewMatch {
        chapter_id: ChapterId((work - 1) * CHAPTERS as i64 + ordinal),
        work_id: WorkId(work),
        method: "align".into(),
        score: 0.9,
        coverage: 0.8,
        matched_chars: 2000,
        chapter_chars: 3000,
        page_chars: 4000,
        page_share: 0.5,
        passages: "[]".into(),
    };
    let new = &[m(1), m(50)];
    // The first run opens nothing (the case exists) but adds a page; the others re-record.
    time(
        "record_matches: 2 matches into an existing case",
        move || async move {
            store
                .record_matches(snapshot, new, "worker")
                .await
                .unwrap()
                .cases
                .len()
        },
    )
    .await;

    for (label, filter, page) in [
        (
            "reports: full keyset walk, pages of 1000",
            ReportFilter {
                licensed: LicensedRows::Include,
                ..ReportFilter::default()
            },
            1000,
        ),
        (
            "reports: one work, pages of 1000",
            ReportFilter {
                work: Some(WorkId(42)),
                ..ReportFilter::default()
            },
            1000,
        ),
    ] {
        let start = Instant::now();
        let (mut rows, mut pages, mut slowest) = (0usize, 0usize, Duration::ZERO);
        let mut after = None;
        loop {
            let t = Instant::now();
            let got = store.report_rows(&filter, after, page).await.unwrap();
            slowest = slowest.max(t.elapsed());
            rows += got.len();
            pages += 1;
            match got.last() {
                Some(last) if got.len() == page as usize => after = Some(last.cursor()),
                _ => break,
            }
        }
        println!(
            "{label}: {rows} rows in {pages} pages, {:.2} s ({:.0} rows/s), slowest page {:.1} ms",
            start.elapsed().as_secs_f64(),
            rows as f64 / start.elapsed().as_secs_f64(),
            slowest.as_secs_f64() * 1e3
        );
    }
    store.close().await;
}

/// Runs `f` 5 times; prints the fastest and the median.
async fn time<F, Fut>(label: &str, f: F) -> usize
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    let mut times = Vec::new();
    let mut rows = 0;
    for _ in 0..5 {
        let t = Instant::now();
        rows = f().await;
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "{label}: {rows} rows, min {:.2} ms, median {:.2} ms",
        times[0].as_secs_f64() * 1e3,
        times[2].as_secs_f64() * 1e3
    );
    rows
}

/// A row source `n(i)` of 1..=n.
type Series = fn(u64) -> String;
/// SQL made of an SQL expression.
type Sql = fn(&str) -> String;

/// Fills works, chapters, sites, pages, snapshots, cases and matches with bulk statements.
async fn fill(url: &str, kind: BackendKind, cases: u64) {
    let pages = cases * PAGES_PER_CASE;
    let matches = pages * MATCHES_PER_PAGE;
    let sites = cases / WORKS;
    let chapters = WORKS * CHAPTERS;
    // Per backend: a row source of 1..=n, a time from Unix seconds, a unique 32-byte value.
    let (series, ts, blob): (Series, Sql, Sql) = match kind {
        BackendKind::Sqlite => (
            |n| {
                format!(
                    "(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) SELECT i FROM s) n"
                )
            },
            |secs| format!("strftime('%Y-%m-%dT%H:%M:%S+00:00', {secs}, 'unixepoch')"),
            |i| format!("CAST(printf('%032d', {i}) AS BLOB)"),
        ),
        BackendKind::Postgres => (
            |n| format!("generate_series(1, {n}) AS n(i)"),
            |secs| format!("to_timestamp({secs})"),
            |i| format!("decode(lpad(to_hex({i}), 64, '0'), 'hex')"),
        ),
    };
    let over = if kind == BackendKind::Postgres {
        "OVERRIDING SYSTEM VALUE"
    } else {
        ""
    };
    // The case of a page, and the case's place in time (a permutation of case numbers).
    let case_of_page = format!("((i - 1) / {PAGES_PER_CASE})");
    let t_case = |c: &str| format!("((({c}) * 7919) % {cases}) * 10");
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
                let t = Instant::now();
                c.execute(sqlx::AssertSqlSafe(s.clone())).await.unwrap();
                println!(
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
                let t = Instant::now();
                tx.execute(sqlx::AssertSqlSafe(s.clone())).await.unwrap();
                println!(
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
