//! `copyhound cases evidence` on both backends: a pirate site serving a chapter gzip- and
//! brotli-encoded is crawled into a case, and its evidence package is read back: the WARC by
//! the crawler's reader (digests checked, bytes as served) and by the standard `warcio`
//! tool, every file against the manifest, and `--force` guarding what exists.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

use crate::common;

use axum::Router;
use axum::extract::Path as UrlPath;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use common::{json, ok, records, run_async as run, sha256_hex};
use crawler::WarcRecord;

/// 三国演义 1–10, registered as the work.
const SANGUO: &str = include_str!("../../../matcher/tests/data/sanguoyanyi_1-10.txt");

fn chapter(from: &str, to: &str) -> String {
    let start = SANGUO.find(from).unwrap();
    let end = SANGUO[start..].find(to).map_or(SANGUO.len(), |e| start + e);
    SANGUO[start..end].to_owned()
}

fn html(title: &str, body: &str) -> String {
    format!(
        "<html><head><meta charset=\"utf-8\"><title>{title}</title></head><body>\
         <div id=\"content\">{}</div><a href=\"/\">目录</a></body></html>",
        body.replace('\n', "<br>")
    )
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &Default::default()).unwrap();
    out
}

/// Chapter 2 gzip-encoded, chapter 3 brotli-encoded, behind a redirect.
async fn page(UrlPath(name): UrlPath<String>) -> Response {
    let (coding, body) = match name.as_str() {
        "2.html" => (
            "gzip",
            gzip(html("第二回", &chapter("第二回", "第三回")).as_bytes()),
        ),
        "3.html" => (
            "br",
            brotli(html("第三回", &chapter("第三回", "第四回")).as_bytes()),
        ),
        "old-3.html" => {
            return (
                axum::http::StatusCode::MOVED_PERMANENTLY,
                [(header::LOCATION, "/p/3.html")],
            )
                .into_response();
        }
        _ => return axum::http::StatusCode::NOT_FOUND.into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_ENCODING, coding),
        ],
        body,
    )
        .into_response()
}

async fn index() -> axum::response::Html<&'static str> {
    axum::response::Html(
        "<html><body><ul><li><a href=\"/p/2.html\">第二回</a></li>\
         <li><a href=\"/p/old-3.html\">第三回</a></li></ul></body></html>",
    )
}

async fn site() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = Router::new()
        .route("/", axum::routing::get(index))
        .route("/p/{name}", axum::routing::get(page));
    common::serve(app).await
}

/// The HTTP header of a response record's block, and a header's value in it.
fn http_header<'a>(record: &'a WarcRecord, name: &str) -> Option<&'a str> {
    let end = record.block.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&record.block[..end]).ok()?;
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// `warcio check` and `warcio index` on the file: skipped loudly without warcio, except
/// under CI, where its absence fails (`.ci/run` installs it).
fn warcio(path: &Path) {
    if testkit::warcio::warcio_check(path, "the evidence WARC").is_none() {
        return;
    }
    let index = std::process::Command::new("python3")
        .args([
            "-m",
            "warcio.cli",
            "index",
            "-f",
            "warc-type,warc-target-uri,http:content-encoding",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(index.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&index.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["warc-type"], "warcinfo", "{lines:?}");
    let encodings: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["http:content-encoding"].as_str())
        .collect();
    assert!(
        encodings.contains(&"gzip") && encodings.contains(&"br"),
        "{lines:?}"
    );
}

async fn evidence_package(db: &str, dir: &Path) {
    let (addr, _stop) = site().await;
    let sanguo = dir.join("三国演义.txt");
    std::fs::write(&sanguo, SANGUO).unwrap();
    ok(db, &["works", "import", sanguo.to_str().unwrap()]).await;
    let seed = format!("http://{addr}/");
    let crawled = json(db, &["crawl", &seed, "--allow-private", "--json"]).await;
    assert_eq!(crawled["status"], "done", "{crawled}");
    let cases = json(db, &["cases", "list", "--json"]).await;
    assert_eq!(cases.as_array().unwrap().len(), 1, "{cases}");
    let id = cases[0]["id"].to_string();

    let out = dir.join("evidence");
    let printed = ok(
        db,
        &["cases", "evidence", &id, "--out", out.to_str().unwrap()],
    )
    .await;
    assert!(printed.contains("2 snapshots"), "{printed}");

    // Every file the manifest lists is there with its hash and size.
    let manifest_bytes = std::fs::read(out.join("manifest.json")).unwrap();
    assert!(printed.contains(&sha256_hex(&manifest_bytes)), "{printed}");
    let manifest: serde_json::Value = serde_json::from_slice(&manifest_bytes).unwrap();
    assert_eq!(manifest["case"]["id"].to_string(), id);
    assert_eq!(manifest["work"]["title"], "三国演义");
    assert!(manifest["tool"]["version"].is_string() && manifest["written_at"].is_string());
    let files = manifest["files"].as_array().unwrap();
    for f in files {
        let bytes = std::fs::read(out.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["sha256"], sha256_hex(&bytes), "{f}");
        assert_eq!(f["bytes"], bytes.len() as u64, "{f}");
    }
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    for want in ["case.warc.gz", "passages.json", "README.txt"] {
        assert!(paths.contains(&want), "{paths:?}");
    }
    assert_eq!(paths.iter().filter(|p| p.starts_with("texts/")).count(), 2);
    let snapshots = manifest["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.len(), 2, "{manifest}");

    // The WARC: warcinfo first, every digest right, the bytes as served under the
    // headers as served, the request as sent, and the decoded hash the case names.
    let warc = records(&out.join("case.warc.gz"));
    assert_eq!(warc[0].record_type(), Some("warcinfo"));
    for r in &warc {
        r.verify_digests().unwrap();
    }
    for s in snapshots {
        let final_url = s["final_url"].as_str().unwrap();
        let response = warc
            .iter()
            .find(|r| r.field("WARC-Record-ID") == s["warc_record_id"].as_str())
            .unwrap();
        assert_eq!(response.field("WARC-Target-URI"), Some(final_url));
        let payload = response.http_payload().unwrap();
        assert_eq!(sha256_hex(payload), s["wire_sha256"], "{s}");
        assert_ne!(s["wire_sha256"], s["body_sha256"], "{s}");
        let coding = http_header(response, "content-encoding").unwrap();
        let decoded = match coding {
            "gzip" => {
                assert!(payload.starts_with(&[0x1f, 0x8b]));
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(payload), &mut out)
                    .unwrap();
                out
            }
            "br" => {
                let mut out = Vec::new();
                brotli::BrotliDecompress(&mut &payload[..], &mut out).unwrap();
                out
            }
            other => panic!("unexpected coding {other}"),
        };
        assert_eq!(sha256_hex(&decoded), s["body_sha256"], "{s}");
        assert_eq!(
            http_header(response, "content-length"),
            Some(payload.len().to_string().as_str())
        );
        let request = warc
            .iter()
            .find(|r| {
                r.record_type() == Some("request")
                    && r.field("WARC-Concurrent-To") == response.field("WARC-Record-ID")
            })
            .unwrap();
        let path = final_url.split_once(&format!("{addr}")).unwrap().1;
        assert!(
            request
                .block
                .starts_with(format!("GET {path} HTTP/1.1\r\n").as_bytes()),
            "{}",
            String::from_utf8_lossy(&request.block)
        );
        assert_eq!(
            http_header(request, "accept-encoding"),
            Some("gzip, deflate, br, zstd")
        );
        assert_eq!(
            http_header(request, "host"),
            Some(addr.to_string().as_str())
        );
    }
    // The redirect hop to chapter 3 is in the file.
    assert!(
        warc.iter().any(|r| r
            .field("WARC-Target-URI")
            .is_some_and(|u| u.ends_with("/p/old-3.html"))),
        "redirect hop missing"
    );
    warcio(&out.join("case.warc.gz"));

    // Passages: the chapters with their pages' aligned text.
    let passages: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("passages.json")).unwrap()).unwrap();
    let chapters = passages.as_array().unwrap();
    assert_eq!(chapters.len(), 2, "{passages}");
    let p = &chapters[0]["pages"][0]["passages"][0];
    assert!(!p["page_text"].as_str().unwrap().is_empty(), "{p}");
    assert!(!p["chapter_text"].as_str().unwrap().is_empty(), "{p}");

    // An existing package is not overwritten, and nothing is touched, without --force.
    let before = std::fs::read(out.join("case.warc.gz")).unwrap();
    std::fs::write(out.join("README.txt"), "mine").unwrap();
    let refused = run(
        db,
        &["cases", "evidence", &id, "--out", out.to_str().unwrap()],
    )
    .await;
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("exists") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(out.join("README.txt")).unwrap(), b"mine");
    assert_eq!(std::fs::read(out.join("case.warc.gz")).unwrap(), before);
    ok(
        db,
        &[
            "cases",
            "evidence",
            &id,
            "--out",
            out.to_str().unwrap(),
            "--force",
        ],
    )
    .await;
    assert_ne!(std::fs::read(out.join("README.txt")).unwrap(), b"mine");

    let missing = run(
        db,
        &["cases", "evidence", "999", "--out", out.to_str().unwrap()],
    )
    .await;
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("no case 999"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_evidence_package_reads_back_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    evidence_package(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_evidence_package_reads_back_on_postgres() {
    let Some(db) = store::testing::postgres("evidence_cli").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    evidence_package(&db.url, dir.path()).await;
}
