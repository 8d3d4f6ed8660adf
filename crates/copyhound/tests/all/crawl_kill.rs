//! `copyhound crawl` killed with SIGKILL mid-crawl and resumed with `--resume`, on SQLite and
//! on Postgres: the resume takes back the dead run's URLs at once (not after the frontier
//! lease) and the crawl's totals come out exact, each page stored once.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use common::copyhound;
use store::{CrawlId, CrawlStatus, Crawls, EvidenceReads, Page, Store, StoreSettings};
use testkit::hold::Hold;

/// Pages of the site: `/` links to `/1.html`..`/{PAGES-1}.html`, each of which links back.
const PAGES: usize = 300;
/// What the site answers for robots.txt, sitemap.xml and anything else it lacks.
const NOT_FOUND: &str = "not found";
/// Far longer than the test may take: a resume that waited for it would fail the test.
const FRONTIER_LEASE_SECS: u64 = 600;

fn body(n: usize) -> String {
    let links: String = if n == 0 {
        (1..PAGES)
            .map(|i| format!(r#"<li><a href="/{i}.html">第{i}章</a></li>"#))
            .collect()
    } else {
        r#"<a href="/">目录</a>"#.to_owned()
    };
    format!(
        "<html><head><title>第{n}章</title></head><body><h1>第{n}章</h1>\
         <div id=content><p>话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。</p>\
         <p>及秦灭之后，楚、汉分争，又并入于汉。这是第{n}页。</p></div><ul>{links}</ul></body></html>"
    )
}

type Hits = Arc<Mutex<HashMap<String, u32>>>;

/// The site's state: its hits, and the gate that holds its pages once the crawl is part-way,
/// so that it is still running when it is killed.
#[derive(Clone, Default)]
struct Site {
    hits: Hits,
    hold: Arc<Hold>,
}

async fn page(State(site): State<Site>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    *site.hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let n = match path.as_str() {
        "/" => Some(0),
        p => p
            .strip_prefix('/')
            .and_then(|p| p.strip_suffix(".html"))
            .and_then(|n| n.parse().ok())
            .filter(|n| (1..PAGES).contains(n)),
    };
    match n {
        Some(n) => {
            site.hold.pass().await;
            Html(body(n)).into_response()
        }
        None => (StatusCode::NOT_FOUND, NOT_FOUND).into_response(),
    }
}

/// Serves the site on 127.0.0.1 until the returned sender is dropped.
async fn serve() -> (String, Site, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let site = Site::default();
    let app = Router::new().fallback(page).with_state(site.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await;
    });
    (format!("http://{addr}/"), site, tx)
}

fn crawl_cmd(db: &str) -> Command {
    let mut c = copyhound(db);
    c.env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "5ms")
        .env("COPYHOUND_CRAWLER__POLITENESS__PER_HOST_CONCURRENCY", "4")
        .env("COPYHOUND_CRAWLER__FETCH__TIMEOUT", "10s")
        .env(
            "COPYHOUND_CRAWLER__FRONTIER_LEASE",
            format!("{FRONTIER_LEASE_SECS}s"),
        )
        // As long: only the killed run's liveness may free the host slots it held.
        .env(
            "COPYHOUND_CRAWLER__POLITENESS__LEASE",
            format!("{FRONTIER_LEASE_SECS}s"),
        )
        .env("COPYHOUND_CRAWLER__RUN_DEAD_AFTER", "3s")
        .env("COPYHOUND_CRAWLER__MAX_PAGES", "1000");
    c
}

async fn killed_crawl_resumes_with_exact_totals(db: &str) {
    let (url, site, _stop) = serve().await;
    let fetched = || {
        site.hits
            .lock()
            .unwrap()
            .keys()
            .filter(|p| p.ends_with(".html") || p.as_str() == "/")
            .count()
    };
    let mut cmd = crawl_cmd(db);
    cmd.args(["crawl", &url, "--allow-private", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Killed while the site holds its pages after the first 60.
    site.hold.after(60);
    let mut child = cmd.spawn().unwrap();
    site.hold.held().await;
    child.kill().unwrap(); // SIGKILL: no chance to hand anything back
    child.wait().unwrap();
    site.hold.release();
    let before = fetched();
    assert!(before < PAGES, "the crawl finished before the kill");

    let store = Store::open(db, &StoreSettings::default()).await.unwrap();
    let id = CrawlId(1);
    let killed = store.crawl(id).await.unwrap();
    assert_eq!(killed.status, CrawlStatus::Running);
    assert!(killed.pages_fetched < PAGES as u64, "{killed:?}");

    let resuming = Instant::now();
    let mut cmd = crawl_cmd(db);
    cmd.args(["crawl", "--resume", "1", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut resume = cmd.spawn().unwrap();
    // A resume that waited for the dead run's leases would take 600 s: stop it well before.
    let limit = Duration::from_secs(FRONTIER_LEASE_SECS / 5);
    while resume.try_wait().unwrap().is_none() {
        if resuming.elapsed() > limit {
            resume.kill().unwrap();
            let out = resume.wait_with_output().unwrap();
            panic!(
                "the resume still ran after {limit:?}: it waits for the dead run's leases\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = resuming.elapsed();
    let out = resume.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["status"], "done", "{summary}");
    assert_eq!(summary["total"]["pages"], PAGES as u64, "{summary}");
    assert_eq!(fetched(), PAGES, "pages never fetched");

    let row = store.crawl(id).await.unwrap();
    assert_eq!(row.status, CrawlStatus::Done);
    assert_eq!(
        (row.pages_fetched, row.pages_failed),
        (PAGES as u64, 0),
        "{row:?}"
    );
    // Every response once: the pages, robots.txt and the sitemap probe (both 404).
    let expected_bytes: usize =
        (0..PAGES).map(|n| body(n).len()).sum::<usize>() + 2 * NOT_FOUND.len();
    assert_eq!(row.bytes, expected_bytes as u64, "{row:?}");
    let mut stored: HashMap<String, usize> = HashMap::new();
    for snapshot in store.snapshots(Page::all()).await.unwrap() {
        *stored.entry(snapshot.url).or_default() += 1;
    }
    assert_eq!(stored.len(), PAGES + 2, "{stored:?}");
    assert!(
        stored.values().all(|&n| n == 1),
        "stored twice: {:?}",
        stored.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
    eprintln!(
        "killed after {before} of {PAGES} pages ({} stored); resume took {took:?}",
        killed.pages_fetched
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_killed_crawl_resumes_at_once_with_exact_totals() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    killed_crawl_resumes_with_exact_totals(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_killed_crawl_resumes_at_once_with_exact_totals() {
    let Some(db) = store::testing::postgres("postgres_killed_crawl").await else {
        return;
    };
    killed_crawl_resumes_with_exact_totals(&db.url).await;
}
