//! From crawl to case as a user runs it, on both backends: a local pirate site (a chapter
//! split over two pages, a page of an unregistered novel) and a licensed mirror are crawled,
//! the pages are matched as they are stored, and `cases`, `reports export`, `licensed` and
//! `rematch` show and change what was found; `cases stamp` has a local openssl TSA stamp the
//! case's evidence and `cases show` prints the tokens verified.

use std::net::SocketAddr;

use crate::common;

use axum::Router;
use axum::extract::Path;
use axum::response::{Html, IntoResponse, Response};
use common::{json, lines, ok, run_async as run};

/// 三国演义 1–10 (registered) and 西游记 1–4 (registered only later, for `rematch`).
const SANGUO: &str = include_str!("../../../matcher/tests/data/sanguoyanyi_1-10.txt");
const XIYOU: &str = include_str!("../../../matcher/tests/data/xiyouji_1-4.txt");

fn chapter(text: &str, from: &str, to: &str) -> String {
    let start = text.find(from).unwrap();
    let end = text[start..].find(to).map_or(text.len(), |e| start + e);
    text[start..end].to_owned()
}

fn html(title: &str, body: &str) -> String {
    format!(
        "<html><head><meta charset=\"utf-8\"><title>{title}</title></head><body>\
         <div id=\"content\">{}</div><a href=\"/\">目录</a></body></html>",
        body.replace('\n', "<br>")
    )
}

async fn page(Path(name): Path<String>) -> Response {
    let ch2 = chapter(SANGUO, "第二回", "第三回");
    let half = ch2.char_indices().nth(ch2.chars().count() / 2).unwrap().0;
    let body = match name.as_str() {
        "split-1.html" => html("第二回（1）", &ch2[..half]),
        "split-2.html" => html("第二回（2）", &ch2[half..]),
        "xiyou.html" => html("第一回", &chapter(XIYOU, "第一回", "第二回")),
        _ => return axum::http::StatusCode::NOT_FOUND.into_response(),
    };
    Html(body).into_response()
}

async fn index() -> Html<&'static str> {
    Html(
        "<html><body><ul><li><a href=\"/p/split-1.html\">第二回</a></li>\
         <li><a href=\"/p/split-2.html\">第二回（2）</a></li>\
         <li><a href=\"/p/xiyou.html\">西游记</a></li></ul></body></html>",
    )
}

async fn site() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = Router::new()
        .route("/", axum::routing::get(index))
        .route("/p/{name}", axum::routing::get(page));
    common::serve(app).await
}

async fn from_crawl_to_case(db: &str, dir: &std::path::Path) {
    let (addr, _stop) = site().await;
    let sanguo = dir.join("三国演义.txt");
    std::fs::write(&sanguo, SANGUO).unwrap();
    ok(db, &["works", "import", sanguo.to_str().unwrap()]).await;
    // The same site under another name is a licensed mirror.
    ok(
        db,
        &["licensed", "add", "localhost", "--note", "our partner"],
    )
    .await;
    let listed = json(db, &["licensed", "list", "--json"]).await;
    assert_eq!(listed[0]["domain"], "localhost", "{listed}");

    let pirate = format!("http://{addr}/");
    let mirror = format!("http://localhost:{}/", addr.port());
    for seed in [&pirate, &mirror] {
        let s = json(db, &["crawl", seed, "--allow-private", "--json"]).await;
        assert_eq!(s["status"], "done", "{s}");
        assert_eq!(s["match_jobs_left"], 0, "{s}");
    }

    // One case: the pirate site copying the work; the mirror's copies open none.
    let cases = json(db, &["cases", "list", "--json"]).await;
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 1, "{cases:?}");
    let case = &cases[0];
    assert_eq!(case["status"], "new");
    assert_eq!(case["site"], format!("127.0.0.1:{}", addr.port()));
    assert_eq!(
        (case["chapters_matched"].as_u64(), case["pages"].as_u64()),
        (Some(1), Some(2))
    );
    let id = case["id"].to_string();

    // The chapter split over two pages is one chapter, covered by both together.
    let shown = json(db, &["cases", "show", &id, "--json"]).await;
    let chapters = shown["chapters"].as_array().unwrap();
    assert_eq!(chapters.len(), 1, "{shown}");
    assert_eq!(chapters[0]["chapter_index"], 2);
    assert!(chapters[0]["coverage"].as_f64().unwrap() > 0.95, "{shown}");
    assert!(
        chapters[0]["best"]["coverage"].as_f64().unwrap() < 0.6,
        "{shown}"
    );
    assert_eq!(shown["history"][0]["action"], "case.open", "{shown}");
    stamp_the_evidence(db, &id).await;

    // The export: the two pirate pages in the case, the two mirror pages licensed.
    let records = lines(&ok(db, &["reports", "export"]).await);
    assert_eq!(records.len(), 4, "{records:?}");
    for r in &records {
        let licensed = r["url"].as_str().unwrap().contains("localhost");
        assert_eq!(r["licensed"], licensed, "{r}");
        assert_eq!(r["case_id"].is_null(), licensed, "{r}");
        assert_eq!(r["chapter_index"], 2);
        assert_eq!(r["snapshot_sha256"].as_str().unwrap().len(), 64);
        assert!(r["spans"][0]["chapter"]["end"].as_u64().unwrap() > 0, "{r}");
    }
    let csv = ok(
        db,
        &["reports", "export", "--format", "csv", "--no-licensed"],
    )
    .await;
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("url,site,work_id,"), "{csv}");

    // Review: allowed moves are recorded, others refused with the allowed ones named.
    ok(
        db,
        &[
            "cases",
            "set",
            &id,
            "confirmed",
            "--note",
            "checked by hand",
        ],
    )
    .await;
    let refused = run(db, &["cases", "set", &id, "removed"]).await;
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("notice_sent"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let confirmed = json(db, &["cases", "list", "--status", "confirmed", "--json"]).await;
    assert_eq!(confirmed.as_array().unwrap().len(), 1);

    // Matching again changes nothing: same case, same records.
    ok(db, &["rematch", "--mode", "page"]).await;
    assert_eq!(
        json(db, &["cases", "list", "--json"])
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(lines(&ok(db, &["reports", "export"]).await).len(), 4);

    // A work registered after the crawl: rematch finds its copy on the pirate site.
    let xiyou = dir.join("西游记.txt");
    std::fs::write(&xiyou, XIYOU).unwrap();
    ok(db, &["works", "import", xiyou.to_str().unwrap()]).await;
    let out = ok(
        db,
        &[
            "rematch",
            "--site",
            &format!("127.0.0.1:{}", addr.port()),
            "--mode",
            "batch",
            "--batch-pages",
            "2",
        ],
    )
    .await;
    assert!(out.contains("pages matched on 127.0.0.1"), "{out}");
    assert!(out.contains("in batch mode"), "{out}");
    let cases = json(db, &["cases", "list", "--status", "new", "--json"]).await;
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 1, "{cases:?}");
    assert_eq!(cases[0]["work_title"], "西游记");
}

/// `cases stamp` and `cases show` with a local TSA (and without one configured).
async fn stamp_the_evidence(db: &str, id: &str) {
    let refused = run(db, &["cases", "stamp", id]).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("COPYHOUND_EVIDENCE__TIMESTAMP__URL"),
        "{stderr}"
    );
    let Some(tsa) = testkit::tsa::LocalTsa::start().await else {
        return;
    };
    let with_tsa = |args: &[&str]| {
        let mut cmd = common::copyhound(db);
        cmd.env("COPYHOUND_EVIDENCE__TIMESTAMP__URL", &tsa.url)
            .env(
                "COPYHOUND_EVIDENCE__TIMESTAMP__CA_CERTIFICATES",
                &tsa.ca_pem,
            )
            .args(args);
        tokio::task::spawn_blocking(move || cmd.output().unwrap())
    };
    let out = with_tsa(&["cases", "stamp", id]).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("2 snapshot(s) and 0 screenshot(s) stamped, 0 failed"),
        "{stdout}"
    );
    // Stamped once: a second run asks nothing.
    let again = with_tsa(&["cases", "stamp", id]).await.unwrap();
    assert!(
        String::from_utf8_lossy(&again.stdout)
            .contains("0 snapshot(s) and 0 screenshot(s) stamped"),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );

    let shown = with_tsa(&["cases", "show", id]).await.unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(
        text.matches("verified, signer chains to the trusted ca")
            .count(),
        2,
        "{text}"
    );
    assert!(text.contains(&format!("by {}", tsa.url)), "{text}");
    let shown = with_tsa(&["cases", "show", id, "--json"]).await.unwrap();
    let value: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let stamps = value["timestamps"].as_array().unwrap();
    assert_eq!(stamps.len(), 2, "{value}");
    assert_eq!(stamps[0]["verification"]["status"], "valid", "{value}");
    assert_eq!(stamps[0]["verification"]["chained"], true, "{value}");
    // Without the CA the signature is still checked, and the output says what is not.
    let plain = ok(db, &["cases", "show", id]).await;
    assert!(plain.contains("not checked against a ca"), "{plain}");

    // The evidence package carries each token, which openssl verifies against the body hash.
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("package");
    ok(
        db,
        &["cases", "evidence", id, "--out", dir.to_str().unwrap()],
    )
    .await;
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let snapshots = manifest["snapshots"].as_array().unwrap();
    let stamped: Vec<_> = snapshots
        .iter()
        .filter(|s| s["timestamp"].is_string())
        .collect();
    assert_eq!(stamped.len(), 2, "{manifest}");
    for s in stamped {
        let token = dir.join(s["timestamp"].as_str().unwrap());
        let verify = std::process::Command::new("openssl")
            .args(["ts", "-verify", "-token_in", "-in"])
            .arg(&token)
            .args(["-digest", s["body_sha256"].as_str().unwrap(), "-CAfile"])
            .arg(&tsa.ca_pem)
            .output()
            .unwrap();
        assert!(
            verify.status.success(),
            "{}{}",
            String::from_utf8_lossy(&verify.stdout),
            String::from_utf8_lossy(&verify.stderr)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_becomes_cases_and_reports_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    from_crawl_to_case(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_becomes_cases_and_reports_on_postgres() {
    let Some(db) = store::testing::postgres("cases_cli").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    from_crawl_to_case(&db.url, dir.path()).await;
}
