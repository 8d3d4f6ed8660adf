//! A `copyhound worker` killed with SIGKILL in the middle of a queued crawl, while it is also
//! matching the crawl's pages, on Postgres and on SQLite: another worker takes the dead one's
//! jobs back once their lease has run out and finishes, and then every page is stored once,
//! every page's match job has run to the end exactly once, each (page, chapter) is reported
//! once and the site has one case for the work.

use std::collections::{BTreeMap, HashMap};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use common::copyhound;
use store::{
    AuditLog, CrawlId, CrawlStatus, Crawls, EvidenceReads, JobFilter, JobQueue, JobStatus,
    MatchReads, Page, Store, StoreSettings,
};
use testkit::hold::Hold;

/// 三国演义 1–10, registered whole.
const SANGUO: &str = include_str!("../../../matcher/tests/data/sanguoyanyi_1-10.txt");
/// Chapter pages of the site (`/1.html`..): page `n` copies chapter `(n - 1) % 10 + 1`.
const PAGES: usize = 80;
/// Seconds a claimed job stays a worker's without a heartbeat.
const LEASE: &str = "3";

fn chapters() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in SANGUO.split_inclusive('\n') {
        if line.starts_with('第') && line.chars().take(8).any(|c| c == '回') {
            out.push(String::new());
        }
        if let Some(last) = out.last_mut() {
            last.push_str(line);
        }
    }
    assert_eq!(out.len(), 10);
    out
}

type Hits = Arc<Mutex<HashMap<String, u32>>>;

#[derive(Clone)]
struct Site {
    chapters: Arc<Vec<String>>,
    hits: Hits,
    /// Holds the chapter pages once the crawl is part-way, so that it is still running when
    /// the worker is killed.
    hold: Arc<Hold>,
}

async fn page(State(site): State<Site>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    *site.hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    if path == "/" {
        let links: String = (1..=PAGES)
            .map(|i| format!("<li><a href=\"/{i}.html\">第{i}章</a></li>"))
            .collect();
        return Html(format!("<html><body><ul>{links}</ul></body></html>")).into_response();
    }
    let n = path
        .strip_prefix('/')
        .and_then(|p| p.strip_suffix(".html"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| (1..=PAGES).contains(n));
    match n {
        Some(n) => {
            site.hold.pass().await;
            let text = &site.chapters[(n - 1) % site.chapters.len()];
            Html(format!(
                "<html><head><meta charset=\"utf-8\"><title>第{n}页</title></head><body>\
                 <div id=\"content\">{}</div><a href=\"/\">目录</a></body></html>",
                text.replace('\n', "<br>")
            ))
            .into_response()
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

fn with_settings(db: &str) -> Command {
    let mut c = copyhound(db);
    c.env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "5ms")
        .env("COPYHOUND_CRAWLER__POLITENESS__PER_HOST_CONCURRENCY", "4")
        .env("COPYHOUND_CRAWLER__RUN_DEAD_AFTER", "3s");
    c
}

fn spawn_worker(db: &str) -> Child {
    with_settings(db)
        .args([
            "worker",
            "--lease",
            LEASE,
            "--concurrency",
            "2",
            "--grace",
            "5",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

async fn run(mut cmd: Command) -> String {
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Jobs of `kind`, every one.
async fn jobs(store: &Store, kind: &str) -> Vec<store::JobRecord> {
    store
        .jobs(&JobFilter::Kind(kind.into()), Page::all())
        .await
        .unwrap()
}

use store::testing::wait_for;

async fn killed_worker_loses_nothing(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("三国演义.txt");
    std::fs::write(&work, SANGUO).unwrap();
    let mut import = copyhound(db);
    import.args(["works", "import", work.to_str().unwrap()]);
    run(import).await;

    let site = Site {
        chapters: Arc::new(chapters()),
        hits: Hits::default(),
        hold: Arc::default(),
    };
    let hits = Arc::clone(&site.hits);
    let hold = Arc::clone(&site.hold);
    let (addr, _stop) = common::serve(Router::new().fallback(page).with_state(site)).await;
    let fetched = || {
        hits.lock()
            .unwrap()
            .keys()
            .filter(|p| p.ends_with(".html"))
            .count()
    };
    let mut crawl = with_settings(db);
    crawl.args([
        "crawl",
        &format!("http://{addr}/"),
        "--allow-private",
        "--enqueue",
        "--json",
    ]);
    let queued: serde_json::Value = serde_json::from_str(run(crawl).await.trim()).unwrap();
    let id = CrawlId(queued["crawl_id"].as_i64().unwrap());
    let store = Store::open(db, &StoreSettings::default()).await.unwrap();

    // Killed once it has fetched part of the site (the rest held) and matched some of it.
    hold.after(PAGES / 3);
    let mut first = spawn_worker(db);
    hold.held().await;
    wait_for(
        "the first worker matching",
        Duration::from_secs(60),
        async || {
            let matched = jobs(&store, "MatchSnapshot")
                .await
                .iter()
                .filter(|j| j.status == JobStatus::Done)
                .count();
            matched >= 3
        },
    )
    .await;
    first.kill().unwrap(); // SIGKILL: no chance to hand anything back
    first.wait().unwrap();
    hold.release();
    let at_kill = fetched();
    assert!(at_kill < PAGES, "the site was crawled before the kill");
    assert_eq!(store.crawl(id).await.unwrap().status, CrawlStatus::Running);

    let second = spawn_worker(db);
    wait_for(
        "the second worker finishing",
        Duration::from_secs(120),
        async || {
            let crawled = store.crawl(id).await.unwrap().status == CrawlStatus::Done;
            let matching = jobs(&store, "MatchSnapshot")
                .await
                .iter()
                .any(|j| j.status != JobStatus::Done);
            crawled && !matching
        },
    )
    .await;
    Command::new("kill")
        .args(["-INT", &second.id().to_string()])
        .status()
        .unwrap();
    common::wait_interrupted(second).await;

    // Every page stored once.
    let snapshots = store.snapshots(Page::all()).await.unwrap();
    let mut by_url: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &snapshots {
        *by_url.entry(s.url.as_str()).or_default() += 1;
    }
    assert!(
        by_url.values().all(|&n| n == 1),
        "stored twice: {:?}",
        by_url.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
    let pages: Vec<_> = snapshots
        .iter()
        .filter(|s| s.url.ends_with(".html"))
        .collect();
    assert_eq!(pages.len(), PAGES, "{by_url:?}");

    // One match job a page, done: none lost with the dead worker, none queued twice.
    let match_jobs = jobs(&store, "MatchSnapshot").await;
    let mut keys: BTreeMap<String, usize> = BTreeMap::new();
    for j in &match_jobs {
        assert_eq!(j.status, JobStatus::Done, "{j:?}");
        *keys.entry(j.dedupe_key.clone().unwrap()).or_default() += 1;
    }
    assert!(keys.values().all(|&n| n == 1), "{keys:?}");
    for s in &pages {
        assert_eq!(
            keys.get(&format!("match:{}", s.id)),
            Some(&1),
            "page {} has no match job",
            s.url
        );
        let found = store.matches_of(s.id).await.unwrap();
        assert_eq!(found.len(), 1, "{}: {found:?}", s.url);
    }
    let crawls = jobs(&store, "Crawl").await;
    assert_eq!(crawls.len(), 1, "{crawls:?}");
    assert_eq!(crawls[0].status, JobStatus::Done, "{crawls:?}");

    // Each (page, chapter) once in the report, and one case, opened once.
    let mut export = copyhound(db);
    export.args(["reports", "export"]);
    let records: Vec<serde_json::Value> = run(export)
        .await
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), PAGES);
    let mut cases = copyhound(db);
    cases.args(["cases", "list", "--json"]);
    let cases: serde_json::Value = serde_json::from_str(run(cases).await.trim()).unwrap();
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 1, "{cases:?}");
    assert_eq!(cases[0]["pages"], PAGES, "{cases:?}");
    assert_eq!(cases[0]["chapters_matched"], 10, "{cases:?}");
    let case_id = cases[0]["id"].as_i64().unwrap();
    let opened = store
        .audit_of("case", case_id)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.action == "case.open")
        .count();
    assert_eq!(opened, 1);
    eprintln!(
        "killed after {at_kill} of {PAGES} pages; {} pages fetched again after the kill",
        hits.lock().unwrap().values().filter(|&&n| n > 1).count()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_killed_worker_loses_and_doubles_nothing() {
    let Some(db) = store::testing::postgres("worker_kill").await else {
        return;
    };
    killed_worker_loses_nothing(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_killed_worker_loses_and_doubles_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    killed_worker_loses_nothing(&db).await;
}
