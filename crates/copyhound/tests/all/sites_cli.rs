//! Suspect sites as a user runs them, on both backends: a local pirate site is watched with
//! a schedule and its own settings, paused and resumed, crawled now (here and by a worker,
//! one crawl at a time), and `sites show` tells what each crawl found, and how far a running
//! one has got, from another process.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Response};
use common::copyhound;
use tokio::sync::Notify;

/// 三国演义 1–10 (registered).
const SANGUO: &str = include_str!("../../../matcher/tests/data/sanguoyanyi_1-10.txt");

fn chapter(from: &str, to: &str) -> String {
    let start = SANGUO.find(from).unwrap();
    let end = SANGUO[start..].find(to).map_or(SANGUO.len(), |e| start + e);
    SANGUO[start..end].to_owned()
}

fn html(body: &str) -> String {
    format!(
        "<html><head><meta charset=\"utf-8\"><title>三国</title></head><body>\
         <div id=\"content\">{}</div><a href=\"/\">目录</a></body></html>",
        body.replace('\n', "<br>")
    )
}

async fn page(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "2.html" => Html(html(&chapter("第二回", "第三回"))).into_response(),
        "3.html" => Html(html(&chapter("第三回", "第四回"))).into_response(),
        _ => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

async fn index() -> Html<&'static str> {
    Html(
        "<html><body><ul><li><a href=\"/book/2.html\">第二回</a></li>\
         <li><a href=\"/book/3.html\">第三回</a></li>\
         <li><a href=\"/other/ads.html\">广告</a></li></ul></body></html>",
    )
}

/// The binary with the test's settings: a local site is allowed, fetches are quick.
fn cmd(db: &str) -> Command {
    let mut c = copyhound(db);
    c.env("COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE", "true")
        .env("COPYHOUND_CRAWLER__POLITENESS__DELAY", "5ms");
    c
}

async fn run(db: &str, args: &[&str]) -> (bool, String, String) {
    let mut c = cmd(db);
    c.args(args);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn ok(db: &str, args: &[&str]) -> String {
    let (success, stdout, stderr) = run(db, args).await;
    assert!(success, "{args:?}\nstdout: {stdout}\nstderr: {stderr}");
    stdout
}

async fn json(db: &str, args: &[&str]) -> serde_json::Value {
    let out = ok(db, args).await;
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

async fn refused(db: &str, args: &[&str], says: &str) {
    let (success, stdout, stderr) = run(db, args).await;
    assert!(!success, "{args:?} succeeded: {stdout}");
    assert!(stderr.contains(says), "{args:?}: {stderr}");
}

async fn watched_sites(db: &str, dir: &std::path::Path) {
    let app = Router::new()
        .route("/", axum::routing::get(index))
        .route("/book/{name}", axum::routing::get(page));
    let (addr, _stop) = common::serve(app).await;
    let novel = dir.join("三国演义.txt");
    std::fs::write(&novel, SANGUO).unwrap();
    ok(db, &["works", "import", novel.to_str().unwrap()]).await;

    let start = format!("http://{addr}/");
    let added = ok(
        db,
        &[
            "sites",
            "add",
            &start,
            "--name",
            "盗版书屋",
            "--schedule",
            "0 3 * * *",
            "--max-pages",
            "20",
            "--delay",
            "5",
            "--exclude",
            "/other/",
        ],
    )
    .await;
    assert!(
        added.contains("watched") && added.contains("next crawl"),
        "{added}"
    );
    // Watched twice, a bad pattern, a bad schedule, a bad URL: refused, and nothing stored.
    refused(
        db,
        &["sites", "add", &format!("{start}book/")],
        "watched already",
    )
    .await;
    refused(
        db,
        &["sites", "add", "http://b.example/", "--include", "("],
        "regex",
    )
    .await;
    refused(
        db,
        &["sites", "add", "http://c.example/", "--schedule", "daily"],
        "cron",
    )
    .await;
    refused(db, &["sites", "add", "c.example/book"], "http(s)").await;
    // Other spellings of the address are the same site.
    let port = addr.port();
    for other in [
        format!("http://2130706433:{port}/book/"),
        format!("http://0x7f000001:{port}/"),
        format!("http://127.1:{port}/other/"),
    ] {
        refused(db, &["sites", "add", &other], "watched already").await;
    }
    // Without the setting that allows them, a loopback or private address is refused with
    // the setting named, in the UI's and the API's words too (`crawling::watch_site`).
    let mut strict = copyhound(db);
    strict.args(["sites", "add", "http://10.0.0.7/", "--name", "内网"]);
    let out = tokio::task::spawn_blocking(move || strict.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("private") && stderr.contains("allow_private"),
        "{stderr}"
    );
    let sites = json(db, &["sites", "list", "--json"]).await;
    let sites = sites.as_array().unwrap();
    assert_eq!(sites.len(), 1, "{sites:?}");
    let site = &sites[0];
    let id = site["id"].to_string();
    assert_eq!(site["name"], "盗版书屋");
    assert_eq!(site["schedule"], "0 3 * * *");
    assert_eq!(site["settings"]["max_pages"], 20);
    assert_eq!(site["settings"]["exclude"][0], "/other/");
    assert!(
        site["next_crawl_at"].as_str().unwrap().contains("T03:0"),
        "{site}"
    );

    // Paused: no next crawl; resumed: back on its schedule.
    ok(db, &["sites", "pause", &id]).await;
    let paused = &json(db, &["sites", "list", "--json"]).await[0];
    assert_eq!(
        (
            paused["enabled"].as_bool(),
            paused["next_crawl_at"].is_null()
        ),
        (Some(false), true)
    );
    ok(db, &["sites", "resume", &id]).await;
    let resumed = &json(db, &["sites", "list", "--json"]).await[0];
    assert_eq!(resumed["enabled"], true);
    assert!(!resumed["next_crawl_at"].is_null());

    // Crawled now, here: the index and two chapters; the excluded page is never fetched.
    let summary = json(db, &["sites", "crawl", &id, "--json"]).await;
    assert_eq!(summary["status"], "done", "{summary}");
    assert_eq!(summary["pages"], 3, "{summary}");
    let shown = json(db, &["sites", "show", &id, "--json"]).await;
    let crawls = shown["crawls"].as_array().unwrap();
    assert_eq!(crawls.len(), 1, "{shown}");
    assert_eq!(crawls[0]["status"], "done");
    assert_eq!(crawls[0]["pages"], 3);
    assert_eq!(crawls[0]["queued"], 0);
    assert_eq!(crawls[0]["matches"], 2, "{shown}");
    assert_eq!(crawls[0]["cases"].as_array().unwrap().len(), 1, "{shown}");
    let cases = json(db, &["cases", "list", "--json"]).await;
    assert_eq!(cases[0]["chapters_matched"], 2, "{cases}");
    let text = ok(db, &["sites", "show", &id]).await;
    assert!(
        text.contains("盗版书屋") && text.contains("crawl ") && text.contains("3 pages"),
        "{text}"
    );
    assert!(
        text.contains("schedule    every day at 03:00 UTC"),
        "{text}"
    );

    // Crawl now through the queue: asked twice, queued once.
    let first = json(db, &["sites", "crawl", &id, "--enqueue", "--json"]).await;
    assert_eq!(first["already_queued"], false, "{first}");
    let second = json(db, &["sites", "crawl", &id, "--enqueue", "--json"]).await;
    assert_eq!(second["already_queued"], true, "{second}");
    assert_eq!(first["job"], second["job"]);
    // A worker runs it: a second crawl of the site, done, finding the same pages.
    let mut worker = cmd(db)
        .args(["worker", "--concurrency", "1", "--grace", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    let crawled = loop {
        let shown = json(db, &["sites", "show", &id, "--json"]).await;
        let crawls = shown["crawls"].as_array().unwrap().clone();
        if crawls.len() == 2 && crawls[0]["status"] == "done" && crawls[0]["matches"] == 2 {
            break crawls;
        }
        assert!(
            Instant::now() < deadline,
            "the worker did not crawl the site: {shown}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let _ = worker.kill();
    let _ = worker.wait();
    assert_eq!(crawled[0]["pages"], 3, "{crawled:?}");
    let cases = json(db, &["cases", "list", "--json"]).await;
    assert_eq!(cases.as_array().unwrap().len(), 1, "{cases}");

    // Changes: schedule removed, settings kept unless given.
    ok(
        db,
        &["sites", "set", &id, "--no-schedule", "--max-depth", "2"],
    )
    .await;
    let changed = &json(db, &["sites", "list", "--json"]).await[0];
    assert!(
        changed["schedule"].is_null() && changed["next_crawl_at"].is_null(),
        "{changed}"
    );
    assert_eq!(changed["settings"]["max_depth"], 2);
    assert_eq!(changed["settings"]["max_pages"], 20);
    refused(db, &["sites", "show", "999"], "no watched site 999").await;
    refused(db, &["sites", "crawl", "999"], "no watched site 999").await;
    refused(
        db,
        &[
            "sites",
            "set",
            &id,
            "--start-url",
            "http://elsewhere.example/",
        ],
        "not on",
    )
    .await;
}

/// A site whose second chapter is held back until the test lets it go.
async fn held(State(gate): State<Arc<Notify>>, Path(name): Path<String>) -> Response {
    if name == "held.html" {
        // Bounded: a test that fails elsewhere does not hang the server.
        let _ = tokio::time::timeout(Duration::from_secs(30), gate.notified()).await;
        return Html(html(&chapter("第三回", "第四回"))).into_response();
    }
    page(Path(name)).await
}

async fn held_index() -> Html<&'static str> {
    Html(
        "<html><body><a href=\"/book/2.html\">第二回</a>\
         <a href=\"/book/held.html\">第三回</a></body></html>",
    )
}

/// While `sites crawl` runs in one process, `sites show` in another sees the crawl running
/// with pages stored and a page still to go; once the held page is let go, it is done.
async fn progress_is_seen_from_another_process(db: &str) {
    let gate = Arc::new(Notify::new());
    let app = Router::new()
        .route("/", axum::routing::get(held_index))
        .route("/book/{name}", axum::routing::get(held))
        .with_state(gate.clone());
    let (addr, _stop) = common::serve(app).await;
    let added = ok(
        db,
        &["sites", "add", &format!("http://{addr}/"), "--delay", "5"],
    )
    .await;
    assert!(added.starts_with("site "), "{added}");
    let id = json(db, &["sites", "list", "--json"]).await[0]["id"].to_string();
    let crawling = cmd(db)
        .args(["sites", "crawl", &id, "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let seen = loop {
        let shown = json(db, &["sites", "show", &id, "--json"]).await;
        if let Some(c) = shown["crawls"].as_array().and_then(|c| c.first())
            && c["status"] == "running"
            && c["pages"].as_u64() >= Some(2)
            && c["queued"].as_u64() >= Some(1)
        {
            break c.clone();
        }
        assert!(Instant::now() < deadline, "no progress seen: {shown}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(seen["finished_at"].is_null(), "{seen}");
    gate.notify_one();
    common::wait_ok(crawling).await;
    let shown = json(db, &["sites", "show", &id, "--json"]).await;
    let done = &shown["crawls"][0];
    assert_eq!(
        (
            done["status"].as_str(),
            done["pages"].as_u64(),
            done["queued"].as_u64()
        ),
        (Some("done"), Some(3), Some(0)),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_of_a_running_crawl_is_seen_elsewhere_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    progress_is_seen_from_another_process(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_of_a_running_crawl_is_seen_elsewhere_on_postgres() {
    let Some(db) = store::testing::postgres("sites_progress").await else {
        return;
    };
    progress_is_seen_from_another_process(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sites_are_watched_scheduled_and_crawled_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    watched_sites(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sites_are_watched_scheduled_and_crawled_on_postgres() {
    let Some(db) = store::testing::postgres("sites_cli").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    watched_sites(&db.url, dir.path()).await;
}
