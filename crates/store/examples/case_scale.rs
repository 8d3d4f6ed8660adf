//! Cases and reports at the scale issue #11 asks for: fills a fresh SQLite file and a fresh
//! Postgres schema with 10^5 cases and 10^6 matches (bulk `INSERT ... SELECT` over a
//! recursive CTE / `generate_series`, `store::testing::fill_cases`), then times the reads `cases list`, `cases show` and
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
use store::testing::fill_cases;
use store::testing::scale::{CHAPTERS, MATCHES_PER_PAGE, PAGES_PER_CASE, WORKS};
use store::{
    CaseFilter, CaseId, CaseReads, CaseStatus, ChapterId, EvidenceWrites, LicensedRows,
    MatchWrites, NewMatch, ReportFilter, Reports, Store, StoreSettings, WorkId,
};

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
    // Cases ten seconds apart.
    fill_cases(url, kind, cases, 10).await;
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
