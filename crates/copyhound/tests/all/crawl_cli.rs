//! `copyhound crawl`, crawl jobs run by `copyhound worker` and `copyhound crawls` on what
//! they stored, as a user runs them, against a small site served on 127.0.0.1 by the test
//! and a temp SQLite database.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use common::{Env, copyhound};
use store::{
    CrawlFrontier, CrawlId, CrawlStatus, Crawls, EvidenceReads, JobFilter, JobQueue, JobStatus,
    MatchWrites, Page, Schedules, Store, StoreSettings, WorkReads,
};

/// Pages of the site: `/` links to `/1.html`..`/5.html`, each of which links to the next (the
/// last to `/`) and back to `/`.
const PAGES: usize = 6;

/// The test site, counting requests per path. Stops when dropped (and after two minutes).
struct Site {
    addr: SocketAddr,
    hits: Arc<Mutex<HashMap<String, u32>>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Site {
    async fn start() -> Self {
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let app = Router::new().fallback(page).with_state(Arc::clone(&hits));
        let (addr, tx) = common::serve(app).await;
        Site {
            addr,
            hits,
            _stop: tx,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Requests per page path (robots.txt and sitemap.xml left out).
    fn page_hits(&self) -> HashMap<String, u32> {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p.as_str() != "/robots.txt" && p.as_str() != "/sitemap.xml")
            .map(|(p, n)| (p.clone(), *n))
            .collect()
    }
}

async fn page(State(hits): State<Arc<Mutex<HashMap<String, u32>>>>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let n: usize = match path.as_str() {
        "/" => 0,
        p => match p
            .strip_prefix('/')
            .and_then(|p| p.strip_suffix(".html"))
            .and_then(|n| n.parse().ok())
        {
            Some(n) if (1..PAGES).contains(&n) => n,
            _ => return (StatusCode::NOT_FOUND, "not found").into_response(),
        },
    };
    let links: String = if n == 0 {
        (1..PAGES)
            .map(|i| format!(r#"<li><a href="/{i}.html">第{i}章</a></li>"#))
            .collect()
    } else {
        let next = if n + 1 < PAGES {
            format!("/{}.html", n + 1)
        } else {
            "/".to_owned()
        };
        format!(r#"<a href="/">目录</a> <a href="{next}">下一章</a>"#)
    };
    Html(format!(
        "<html><head><title>第{n}章</title></head><body><h1>第{n}章</h1>\
         <div id=content><p>话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。</p>\
         <p>及秦灭之后，楚、汉分争，又并入于汉。这是第{n}页。</p></div><ul>{links}</ul></body></html>"
    ))
    .into_response()
}

/// The binary with crawl settings fast enough for a test.
fn crawl_cmd(env: &Env) -> Command {
    let mut c = copyhound(&env.db);
    c.env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "10ms")
        .env("COPYHOUND_CRAWLER__FETCH__TIMEOUT", "10s");
    c
}

async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn ok(out: &Output) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    (stdout, stderr)
}

fn summary(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `copyhound crawl ARGS... --json`, which must succeed; its summary.
async fn crawl_json(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut cmd = crawl_cmd(env);
    cmd.arg("crawl").args(args).arg("--json");
    let (stdout, _) = ok(&output(cmd).await);
    summary(&stdout)
}

impl Site {
    /// Waits until `n` pages were fetched (a crawl under way, to interrupt).
    async fn wait_for_pages(&self, n: usize) {
        let start = Instant::now();
        while self.page_hits().len() < n {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the crawl never started"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Every page of the site was fetched, none twice.
    fn assert_each_page_once(&self) {
        let hits = self.page_hits();
        assert_eq!(hits.len(), PAGES, "{hits:?}");
        assert!(hits.values().all(|n| *n == 1), "fetched twice: {hits:?}");
    }
}

async fn open(env: &Env) -> Store {
    Store::open(&env.db, &StoreSettings::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_site_is_crawled_and_stored_with_allow_private() {
    let site = Site::start().await;
    let env = Env::new();
    let s = crawl_json(&env, &[&site.url(), "--allow-private"]).await;
    assert_eq!(s["status"], "done", "{s}");
    assert_eq!(s["pages"], PAGES as u64, "{s}");
    assert_eq!(s["queued"], 0, "{s}");
    assert_eq!(s["errors"], serde_json::json!({}), "{s}");
    // The sitemap the site does not have is skipped, not an error.
    assert_eq!(s["skipped"]["no_sitemap"], 1, "{s}");
    assert!(
        s["bytes"].as_u64().unwrap() > 0 && s["seconds"].as_f64().is_some(),
        "{s}"
    );
    site.assert_each_page_once();

    let store = open(&env).await;
    let id = CrawlId(s["crawl_id"].as_i64().unwrap());
    let row = store.crawl(id).await.unwrap();
    assert_eq!(row.status, CrawlStatus::Done);
    assert_eq!(row.pages_fetched, PAGES as u64);
    assert_eq!(row.bytes, s["bytes"].as_u64().unwrap());
    let snapshots = store.snapshots(Page::all()).await.unwrap();
    let page_rows: Vec<_> = snapshots
        .iter()
        .filter(|r| r.url.ends_with(".html"))
        .collect();
    assert_eq!(page_rows.len(), PAGES - 1);
    let text = store.page_text(page_rows[0].id).await.unwrap();
    assert!(text.body.contains("话说天下大势"), "{}", text.body);

    // Without --json: the human summary.
    let mut cmd = crawl_cmd(&env);
    cmd.args(["crawl", &site.url(), "--allow-private", "--max-pages", "2"]);
    let (stdout, _) = ok(&output(cmd).await);
    assert!(stdout.contains("crawl 2: done"), "{stdout}");
    assert!(stdout.contains("1 pages"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_are_refused_without_the_flag_and_bad_urls_too() {
    let site = Site::start().await;
    let env = Env::new();
    let mut cmd = crawl_cmd(&env);
    cmd.args(["crawl", &site.url()]);
    let out = output(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("refused to fetch 127.0.0.1") && stderr.contains("--allow-private"),
        "{stderr}"
    );
    assert!(site.page_hits().is_empty(), "fetched anyway");

    for bad in ["not a url", "ftp://example.com/"] {
        let mut cmd = crawl_cmd(&env);
        cmd.args(["crawl", bad]);
        let out = output(cmd).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("invalid url"), "{stderr}");
    }
    let mut cmd = crawl_cmd(&env);
    cmd.args(["crawl", "--resume", "42"]);
    let out = output(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("crawl 42 not found"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_is_honoured_and_a_crawl_resumes_without_refetching() {
    let site = Site::start().await;
    let env = Env::new();
    let s = crawl_json(&env, &[&site.url(), "--allow-private", "--max-pages", "3"]).await;
    // The budget counts fetched urls: the sitemap probe is one of them.
    assert_eq!(s["pages"], 2, "{s}");
    assert_eq!(site.page_hits().len(), 2);
    assert!(s["queued"].as_u64().unwrap() > 0, "{s}");
    let id = s["crawl_id"].as_i64().unwrap().to_string();

    let s = crawl_json(&env, &["--resume", &id, "--max-pages", "100"]).await;
    assert_eq!(s["status"], "done", "{s}");
    assert_eq!(s["pages"], (PAGES - 2) as u64, "{s}");
    site.assert_each_page_once();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_crawl_that_resumes_later() {
    let site = Site::start().await;
    let env = Env::new();
    let mut cmd = copyhound(&env.db);
    // Slow enough to interrupt part-way.
    cmd.env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "400ms")
        .args(["crawl", &site.url(), "--allow-private", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    site.wait_for_pages(2).await;
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    // Stopped cleanly, with its summary, and the exit status of an interrupted command.
    assert_eq!(
        out.status.code(),
        Some(130),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    let s = summary(&stdout);
    assert_eq!(s["status"], "queued", "{s}\n{stderr}");
    assert!(stderr.contains("stopping"), "{stderr}");
    let fetched = site.page_hits().len();
    assert!(fetched < PAGES, "{fetched} pages before the stop");
    let id = CrawlId(s["crawl_id"].as_i64().unwrap());
    assert_eq!(
        open(&env).await.crawl(id).await.unwrap().status,
        CrawlStatus::Queued
    );

    let s = crawl_json(&env, &["--resume", &id.to_string()]).await;
    assert_eq!(s["status"], "done", "{s}");
    site.assert_each_page_once();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_share_a_queued_crawl() {
    let site = Site::start().await;
    let env = Env::new();
    let s = crawl_json(
        &env,
        &[
            &site.url(),
            "--allow-private",
            "--enqueue",
            "--runners",
            "2",
        ],
    )
    .await;
    assert_eq!(s["status"], "queued");
    let id = CrawlId(s["crawl_id"].as_i64().unwrap());
    assert!(site.page_hits().is_empty(), "--enqueue crawled already");

    let workers: Vec<_> = (0..2).map(|_| spawn_worker(crawl_cmd(&env), 5)).collect();
    let store = open(&env).await;
    wait_until_done(&store, id).await;
    for w in workers {
        stop_worker(w, "-INT").await;
    }
    site.assert_each_page_once();
    // Both runners added their pages to the crawl's totals.
    assert_eq!(store.crawl(id).await.unwrap().pages_fetched, PAGES as u64);
    let counts = store.frontier_counts(id).await.unwrap();
    assert_eq!((counts.queued, counts.claimed), (0, 0), "{counts:?}");
    // Workers alone (no `serve`) made sure of the re-check schedule.
    let schedules = store.schedules().await.unwrap();
    assert!(
        schedules.iter().any(|s| s.name == "rechecks"),
        "{schedules:?}"
    );
}

/// `copyhound worker` serving one job at a time, given `grace` seconds at shutdown.
fn spawn_worker(mut cmd: Command, grace: u32) -> Child {
    cmd.args([
        "worker",
        "--grace",
        &grace.to_string(),
        "--concurrency",
        "1",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap()
}

/// Sends `signal` to a worker and waits for it to exit, stopped cleanly: 130 after Ctrl-C
/// (`-INT`), success after `-TERM`; its stderr.
async fn stop_worker(worker: Child, signal: &str) -> String {
    Command::new("kill")
        .args([signal, &worker.id().to_string()])
        .status()
        .unwrap();
    let out = tokio::task::spawn_blocking(move || worker.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let expected = if signal == "-INT" { 130 } else { 0 };
    assert_eq!(out.status.code(), Some(expected), "{stderr}");
    stderr
}

async fn wait_until_done(store: &Store, id: CrawlId) {
    let start = Instant::now();
    while store.crawl(id).await.unwrap().status != CrawlStatus::Done {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the crawl did not finish"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_worker_hands_its_crawl_back_at_once() {
    let site = Site::start().await;
    let env = Env::new();
    let s = crawl_json(&env, &[&site.url(), "--allow-private", "--enqueue"]).await;
    let id = CrawlId(s["crawl_id"].as_i64().unwrap());

    // Slow enough to interrupt part-way, and a grace period longer than the test allows: the
    // crawl must stop on the shutdown signal, not wait the grace period out.
    let mut slow = crawl_cmd(&env);
    slow.env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "400ms");
    let worker = spawn_worker(slow, 300);
    site.wait_for_pages(2).await;
    let stopping = Instant::now();
    let stderr = stop_worker(worker, "-TERM").await;
    assert!(
        stopping.elapsed() < Duration::from_secs(20),
        "{:?}",
        stopping.elapsed()
    );
    assert!(stderr.contains("1 released"), "{stderr}");
    assert!(
        site.page_hits().len() < PAGES,
        "the whole site was crawled before the stop"
    );

    let store = open(&env).await;
    assert_eq!(store.crawl(id).await.unwrap().status, CrawlStatus::Queued);
    let jobs = store
        .jobs(&JobFilter::Kind("Crawl".into()), Page::first(10))
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    // Handed back, not failed: the attempt is not used up.
    assert_eq!(
        (jobs[0].status, jobs[0].attempts),
        (JobStatus::Queued, 0),
        "{jobs:?}"
    );

    // Another worker finishes the crawl without fetching anything twice.
    let worker = spawn_worker(crawl_cmd(&env), 5);
    wait_until_done(&store, id).await;
    stop_worker(worker, "-INT").await;
    site.assert_each_page_once();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_crawl_settings_are_refused_before_a_crawl_row_is_written() {
    let site = Site::start().await;
    let env = Env::new();
    let config = env.file(
        "bad.toml",
        b"[crawler.scope]\ninclude = [\"/book/(unclosed\"]\n",
    );
    for extra in [&[][..], &["--enqueue"][..]] {
        let mut cmd = crawl_cmd(&env);
        cmd.arg("--config")
            .arg(&config)
            .args(["crawl", &site.url(), "--allow-private"])
            .args(extra);
        let out = output(cmd).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("/book/(unclosed"), "{stderr}");
    }
    assert!(site.page_hits().is_empty(), "fetched anyway");
    // No orphan `queued` crawl was left behind.
    assert!(matches!(
        open(&env).await.crawl(CrawlId(1)).await.unwrap_err(),
        store::Error::NotFound { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_runs_while_a_large_import_holds_the_database() {
    let site = Site::start().await;
    let env = Env::new();
    ok(&output({
        let mut c = copyhound(&env.db);
        c.arg("migrate");
        c
    })
    .await);
    let novel = env.file("长篇.txt", common::long_novel("丙", 600).as_bytes());
    // The import writes batch after batch into the same SQLite file the crawl writes to.
    let mut import = copyhound(&env.db);
    import.args(["works", "import", novel.to_str().unwrap()]);
    let import = tokio::task::spawn_blocking(move || import.output().unwrap());
    let s = crawl_json(&env, &[&site.url(), "--allow-private"]).await;
    assert_eq!(s["status"], "done", "{s}");
    assert_eq!(s["pages"], PAGES as u64, "{s}");
    site.assert_each_page_once();
    ok(&import.await.unwrap());
}

/// `copyhound ARGS...` on the test's database, which must succeed; its standard output.
async fn stdout_of(env: &Env, args: &[&str]) -> String {
    let mut cmd = copyhound(&env.db);
    cmd.args(args);
    ok(&output(cmd).await).0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawls_list_and_show_what_a_crawl_stored() {
    let site = Site::start().await;
    let env = Env::new();
    let out = stdout_of(&env, &["crawls", "list"]).await;
    assert!(out.contains("no crawls yet"), "{out}");
    // A second seed that is not there: an error of its own kind.
    let missing = format!("{}missing.html", site.url());
    let s = crawl_json(&env, &[&site.url(), &missing, "--allow-private"]).await;
    assert_eq!(s["status"], "done", "{s}");
    let id = s["crawl_id"].as_i64().unwrap().to_string();

    let out = stdout_of(&env, &["crawls", "list"]).await;
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{id} ")))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains(" done ") && row.contains("(+1 more)"), "{row}");
    assert!(row.contains(&site.url()), "{row}");
    let listed: serde_json::Value =
        serde_json::from_str(&stdout_of(&env, &["crawls", "list", "--json"]).await).unwrap();
    let listed = &listed[0];
    assert_eq!(listed["id"].to_string(), id);
    assert_eq!(listed["status"], "done");
    assert_eq!(listed["seeds"].as_array().unwrap().len(), 2);
    assert_eq!(listed["pages"], PAGES as u64);
    assert_eq!(listed["errors"], 1);
    assert_eq!(listed["bytes"], s["total"]["bytes"]);
    assert!(listed["finished_at"].is_string(), "{listed}");
    let out = stdout_of(&env, &["crawls", "list", "--status", "failed"]).await;
    assert!(out.contains("no failed crawls"), "{out}");
    let mut bad = copyhound(&env.db);
    bad.args(["crawls", "list", "--status", "finished"]);
    let out = output(bad).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("\"finished\" is not a crawl status"),
        "{stderr}"
    );

    let out = stdout_of(&env, &["crawls", "show", &id]).await;
    assert!(out.starts_with(&format!("crawl {id}: done")), "{out}");
    for line in [
        format!("seeds (2):     {}", site.url()),
        "errors:        1 (http_404 1)".to_owned(),
        "skipped:       1 (no_sitemap 1)".to_owned(),
        format!("pages:         {PAGES} (content "),
        "runs:          1 (0 alive)".to_owned(),
        "max depth ".to_owned(),
        "matches:       0 of 0 works; cases: none".to_owned(),
    ] {
        assert!(out.contains(&line), "{line:?} not in\n{out}");
    }

    // Matches found on its pages (by the match stage, once it runs) are counted.
    let novel = env.file("三国.txt", "第一回 宴桃园豪杰三结义\n话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。".as_bytes());
    stdout_of(&env, &["works", "import", novel.to_str().unwrap()]).await;
    let store = open(&env).await;
    let crawl = CrawlId(id.parse().unwrap());
    let page = store
        .crawl_snapshots(crawl, None, 100)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.url.ends_with("/1.html"))
        .unwrap();
    let chapter = store.chapters(store::WorkId(1)).await.unwrap()[0].id;
    store
        .record_matches(
            page.id,
            &[store::NewMatch {
                chapter_id: chapter,
                work_id: store::WorkId(1),
                method: "winnow".into(),
                score: 0.9,
                coverage: 0.8,
                matched_chars: 40,
                chapter_chars: 50,
                page_chars: 45,
                page_share: 0.9,
                passages: "[]".into(),
            }],
            "test",
        )
        .await
        .unwrap();
    store.close().await;
    let shown: serde_json::Value =
        serde_json::from_str(&stdout_of(&env, &["crawls", "show", &id, "--json"]).await).unwrap();
    assert_eq!(shown["status"], "done");
    assert_eq!(shown["errors_by_kind"], serde_json::json!({"http_404": 1}));
    assert_eq!(shown["skipped"], serde_json::json!({"no_sitemap": 1}));
    assert_eq!(shown["pages"], PAGES as u64);
    assert_eq!(
        (shown["matches"].as_u64(), shown["matched_works"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(shown["cases"].as_array().map(Vec::len), Some(1), "{shown}");
    assert_eq!(shown["frontier"]["queued"], 0);
    assert!(shown["settings"]["max_depth"].is_u64(), "{shown}");
    let runs = shown["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert!(
        runs[0]["ended_at"].is_string() && runs[0]["alive"] == false,
        "{shown}"
    );
    let responses = shown["responses"].as_u64().unwrap();
    assert!(responses > PAGES as u64, "{shown}");
    assert_eq!(
        shown["new_bodies"].as_u64().unwrap() + shown["duplicate_bodies"].as_u64().unwrap(),
        responses
    );

    let mut missing = copyhound(&env.db);
    missing.args(["crawls", "show", "99"]);
    let out = output(missing).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("there is no crawl 99: see `copyhound crawls list`"),
        "{stderr}"
    );
}
