//! `copyhound crawl --render` on both backends (issue #25): a pirate site whose chapters only
//! a browser shows (decoded by `atob`, built from char codes, decrypted with a key in the
//! page, fetched by script, put in order by CSS) is crawled with rendering into a case, and
//! the case's evidence package holds each page's screenshot, listed in the manifest with its
//! SHA-256 and in the WARC as a `resource` record of `urn:view:<page URL>` concurrent to the
//! page's response, so a replay of the page shows the page (issue #42); `cases capture` takes
//! them again and, with a time-stamping authority, stamps them, and `cases stamp` counts the
//! screenshots it stamps. Without Chromium, `--render` fails naming the packages.

use std::net::SocketAddr;
use std::path::Path;

use crate::common;

use axum::Router;
use axum::extract::Path as UrlPath;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use common::{json, ok, records, run_with, sha256_hex};

/// 三国演义 1–10, registered as the work.
const SANGUO: &str = include_str!("../../../matcher/tests/data/sanguoyanyi_1-10.txt");

const HEADINGS: [&str; 7] = [
    "第二回",
    "第三回",
    "第四回",
    "第五回",
    "第六回",
    "第七回",
    "第八回",
];

/// Chapter `n` of the work (0 is 第二回), its paragraphs as `<p>`s.
fn chapter_html(n: usize) -> String {
    let start = SANGUO.find(HEADINGS[n]).unwrap();
    let end = SANGUO[start..]
        .find(HEADINGS[n + 1])
        .map_or(SANGUO.len(), |e| start + e);
    SANGUO[start..end]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{}</p>", l.trim()))
        .collect()
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn shell(title: &str, body: &str) -> String {
    format!(
        "<html><head><meta charset=\"utf-8\"><title>{title}</title></head><body>\
         <div class=nav><a href=\"/\">目录</a></div><div id=\"content\">正在加载章节内容……</div>{body}</body></html>"
    )
}

fn codes(s: &str) -> String {
    s.encode_utf16()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The five pages, one way of hiding each.
fn hidden(name: &str) -> Option<String> {
    Some(match name {
        "atob.html" => shell(
            "第二回",
            &format!(
                "<script>document.getElementById('content').innerHTML = decodeURIComponent(escape(atob('{}')));</script>",
                base64(chapter_html(0).as_bytes())
            ),
        ),
        "codes.html" => shell(
            "第三回",
            &format!(
                "<script>var a = [{}]; var s = ''; for (var i = 0; i < a.length; i++) s += String.fromCharCode(a[i]); document.getElementById('content').innerHTML = s;</script>",
                codes(&chapter_html(1))
            ),
        ),
        "decrypt.html" => {
            let key = 0x2b_u16;
            let sealed: Vec<String> = chapter_html(2)
                .encode_utf16()
                .map(|c| (c ^ key).to_string())
                .collect();
            shell(
                "第四回",
                &format!(
                    "<script>var k = {key}; var c = [{}]; var o = []; for (var i = 0; i < c.length; i++) o.push(String.fromCharCode(c[i] ^ k)); document.getElementById('content').innerHTML = o.join('');</script>",
                    sealed.join(",")
                ),
            )
        }
        "fetch.html" => shell(
            "第五回",
            "<script>fetch('/api/5.json').then(function (r) { return r.json(); }).then(function (d) { document.getElementById('content').innerHTML = d.html; });</script>",
        ),
        "5.json" => serde_json::json!({ "html": chapter_html(3) }).to_string(),
        "ordered.html" => {
            // Paragraphs served last to first, shown first to last by flex `order`.
            let html = chapter_html(4);
            let paragraphs: Vec<&str> = html.split("</p>").filter(|p| !p.is_empty()).collect();
            let styles: String = (0..paragraphs.len())
                .map(|i| format!(".o{i} {{ order: {i}; }} "))
                .collect();
            let body: String = paragraphs
                .iter()
                .enumerate()
                .rev()
                .map(|(i, p)| format!("<div class=o{i}>{}</div>", p.trim_start_matches("<p>")))
                .collect();
            format!(
                "<html><head><meta charset=\"utf-8\"><title>第六回</title><style>#content {{ display: flex; flex-direction: column; }} {styles}</style></head><body><div class=nav><a href=\"/\">目录</a></div><div id=\"content\">{body}</div></body></html>"
            )
        }
        _ => return None,
    })
}

async fn page(UrlPath(name): UrlPath<String>) -> Response {
    match hidden(&name) {
        Some(body) => {
            let kind = if name.ends_with(".json") {
                "application/json"
            } else {
                "text/html; charset=utf-8"
            };
            ([(header::CONTENT_TYPE, kind)], body).into_response()
        }
        None => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

async fn index() -> axum::response::Html<&'static str> {
    axum::response::Html(
        "<html><body><ul><li><a href=\"/p/atob.html\">第二回</a></li>\
         <li><a href=\"/p/codes.html\">第三回</a></li><li><a href=\"/p/decrypt.html\">第四回</a></li>\
         <li><a href=\"/p/fetch.html\">第五回</a></li><li><a href=\"/p/ordered.html\">第六回</a></li></ul></body></html>",
    )
}

async fn site() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = Router::new()
        .route("/", axum::routing::get(index))
        .route("/p/{name}", axum::routing::get(page))
        .route("/api/{name}", axum::routing::get(page));
    common::serve(app).await
}

async fn rendered_crawl(db: &str, dir: &Path) {
    let (addr, _stop) = site().await;
    let sanguo = dir.join("三国演义.txt");
    std::fs::write(&sanguo, SANGUO).unwrap();
    ok(db, &["works", "import", sanguo.to_str().unwrap()]).await;
    let seed = format!("http://{addr}/");

    // Without Chromium, --render is refused before anything is stored, naming the packages.
    let refused = run_with(
        db,
        &[(
            "COPYHOUND_CRAWLER__RENDER__CHROMIUM",
            "/nonexistent/chromium",
        )],
        &["crawl", &seed, "--allow-private", "--render"],
    )
    .await;
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("chromium-driver"), "{err}");
    assert!(err.contains("/nonexistent/chromium"), "{err}");
    let crawls = json(db, &["crawls", "list", "--json"]).await;
    assert_eq!(crawls.as_array().unwrap().len(), 0, "{crawls}");

    // The crawl's log goes with any failure below: a page the browser failed on says why.
    let out = run_with(
        db,
        &[("COPYHOUND_LOG", "warn,crawler=info")],
        &["crawl", &seed, "--allow-private", "--render", "--json"],
    )
    .await;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    let crawled: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(crawled["status"], "done", "{crawled}\n{log}");
    let cases = json(db, &["cases", "list", "--json"]).await;
    assert_eq!(cases.as_array().unwrap().len(), 1, "{cases}\n{log}");
    let id = cases[0]["id"].to_string();
    let shown = json(db, &["cases", "show", &id, "--json"]).await;
    let text = shown.to_string();
    for heading in &HEADINGS[..5] {
        assert!(
            text.contains(heading),
            "{heading} not in the case: {crawled}\n{log}"
        );
    }

    let out = dir.join("evidence");
    ok(
        db,
        &["cases", "evidence", &id, "--out", out.to_str().unwrap()],
    )
    .await;
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    for f in files {
        let bytes = std::fs::read(out.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["sha256"], sha256_hex(&bytes), "{f}");
    }
    let pages: Vec<&serde_json::Value> = manifest["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["url"].as_str().unwrap().contains("/p/"))
        .collect();
    assert_eq!(pages.len(), 5, "{manifest}");
    let warc = records(&out.join("case.warc.gz"));
    for r in &warc {
        r.verify_digests().unwrap();
    }
    for s in pages {
        let shot = &s["screenshot"];
        let path = shot["path"]
            .as_str()
            .unwrap_or_else(|| panic!("no screenshot: {s}\n{log}"));
        assert_eq!(path, format!("screenshots/{}.png", s["id"]));
        let png = std::fs::read(out.join(path)).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{path}");
        assert_eq!(shot["sha256"], sha256_hex(&png), "{s}");
        assert!(files.iter().any(|f| f["path"] == path), "{path} not listed");
        let resource = warc
            .iter()
            .find(|r| r.field("WARC-Record-ID") == shot["warc_record_id"].as_str())
            .unwrap_or_else(|| panic!("no resource record for {path}"));
        assert_eq!(resource.record_type(), Some("resource"));
        assert_eq!(resource.field("Content-Type"), Some("image/png"));
        let page = s["final_url"].as_str().unwrap();
        assert_eq!(
            resource.field("WARC-Target-URI"),
            Some(format!("urn:view:{page}").as_str())
        );
        // Replayed as a replay tool does, the newest record under the page's URL is its page.
        let newest = warc
            .iter()
            .filter(|r| r.field("WARC-Target-URI") == Some(page))
            .filter(|r| matches!(r.record_type(), Some("response" | "revisit" | "resource")))
            .max_by(|a, b| a.field("WARC-Date").cmp(&b.field("WARC-Date")))
            .unwrap();
        assert_eq!(newest.record_type(), Some("response"), "{page}");
        assert_eq!(newest.field("WARC-Record-ID"), s["warc_record_id"].as_str());
        assert_eq!(
            resource.field("WARC-Concurrent-To"),
            s["warc_record_id"].as_str(),
            "{s}"
        );
        assert_eq!(resource.block, png);
    }

    // Screenshots again, now.
    let captured = ok(db, &["cases", "capture", &id, "--allow-private"]).await;
    assert!(captured.contains("5 of 5 page(s) captured"), "{captured}");
    assert!(captured.contains("0 screenshot(s) stamped"), "{captured}");

    // With an authority: `cases stamp` counts the screenshots it stamps, and a capture
    // stamps its screenshots itself, leaving `cases stamp` nothing.
    let Some(tsa) = testkit::tsa::LocalTsa::start().await else {
        return;
    };
    let with_tsa = [("COPYHOUND_EVIDENCE__TIMESTAMP__URL", tsa.url.as_str())];
    let stamped = run_with(db, &with_tsa, &["cases", "stamp", &id]).await;
    let stdout = String::from_utf8_lossy(&stamped.stdout);
    assert!(stamped.status.success(), "{stdout}");
    let snapshots = manifest["snapshots"].as_array().unwrap().len();
    assert!(
        stdout.contains(&format!(
            "{snapshots} snapshot(s) and 5 screenshot(s) stamped, 0 failed"
        )),
        "{stdout}"
    );
    let captured = run_with(db, &with_tsa, &["cases", "capture", &id, "--allow-private"]).await;
    let stdout = String::from_utf8_lossy(&captured.stdout);
    assert!(captured.status.success(), "{stdout}");
    assert!(
        stdout.contains("5 of 5 page(s) captured, 5 screenshot(s) stamped"),
        "{stdout}"
    );
    let again = run_with(db, &with_tsa, &["cases", "stamp", &id]).await;
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(
        stdout.contains("0 snapshot(s) and 0 screenshot(s) stamped, 0 failed"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_chapters_are_found_with_render_and_screenshots_go_in_the_evidence_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    rendered_crawl(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_chapters_are_found_with_render_and_screenshots_go_in_the_evidence_on_postgres() {
    let Some(db) = store::testing::postgres("render_cli").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    rendered_crawl(&db.url, dir.path()).await;
}
