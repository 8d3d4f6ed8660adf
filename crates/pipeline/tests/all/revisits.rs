//! A page crawled again with a conditional request that the site answers `304 Not Modified`
//! (issue #42): the revisit's row, stamps, evidence package, WARC files and their replay, on
//! both backends.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use crawler::{CrawlSettings, StoreCrawl, WarcReader, WarcRecord};
use evidence::stamp_case;
use store::testing::TestDb;
use store::{CaseFilter, CaseReads, EvidenceReads, SnapshotId, SnapshotRecord, Timestamps};
use testkit::tsa::LocalTsa;

use common::{WORK, handler, import, pirate_chapter};

/// SHA-256 of zero bytes, lower-case hex: what a 304 carries, never evidence.
const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const PAGE: &str = "/book/2.html";

/// A site whose one page has an ETag and answers a request that names it with 304; counts
/// the 304s it sent.
async fn conditional_site(not_modified: Arc<AtomicUsize>) -> std::net::SocketAddr {
    let body: String = pirate_chapter(2)
        .lines()
        .map(|l| format!("<p>{l}</p>"))
        .collect();
    let page = format!(
        "<html><head><title>第二回</title></head><body><div id=\"content\">{body}</div></body></html>"
    );
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, headers: HeaderMap| {
        let page = page.clone();
        let not_modified = Arc::clone(&not_modified);
        async move {
            if uri.path() != PAGE {
                return StatusCode::NOT_FOUND.into_response();
            }
            let validators = [
                (header::ETAG, "\"v1\""),
                (header::LAST_MODIFIED, "Wed, 21 Oct 2015 07:28:00 GMT"),
            ];
            if headers
                .get(header::IF_NONE_MATCH)
                .is_some_and(|v| v == "\"v1\"")
            {
                not_modified.fetch_add(1, Ordering::SeqCst);
                return (StatusCode::NOT_MODIFIED, validators).into_response();
            }
            let html = (header::CONTENT_TYPE, "text/html; charset=utf-8");
            (StatusCode::OK, validators, [html], page).into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

fn crawl_settings() -> CrawlSettings {
    let mut s = CrawlSettings::default();
    s.fetch.safety.allow_private = true;
    s.follow_sitemaps = false;
    s
}

/// One crawl of `url` run here, its pages matched; its `not_modified` count.
async fn crawl(store: &store::Store, url: &url::Url) -> u64 {
    let settings = crawl_settings();
    let id = StoreCrawl::create(store, &settings, std::slice::from_ref(url))
        .await
        .unwrap();
    let local = pipeline::LocalCrawl::open(store, id, settings, handler(store))
        .await
        .unwrap();
    let (finish, _) = local.run(std::future::pending(), |_| {}).await.unwrap();
    let report = finish.unwrap().report;
    assert_eq!(report.pages, 1, "{report:?}");
    report.not_modified
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn records(path: &std::path::Path) -> Vec<WarcRecord> {
    WarcReader::new(std::fs::File::open(path).unwrap())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// What a replay tool (pywb) shows for `url`: of the records it indexes under that URI
/// (`response`, `revisit`, `resource`), the newest by `WARC-Date`, the later in the file on a
/// tie; a revisit resolved to the `response` its `WARC-Refers-To-Target-URI` and
/// `WARC-Refers-To-Date` name. Returns the revisit (if it was one) and the record replayed.
fn replay<'a>(warc: &'a [WarcRecord], url: &str) -> (Option<&'a WarcRecord>, &'a WarcRecord) {
    let latest = warc
        .iter()
        .filter(|r| matches!(r.record_type(), Some("response" | "revisit" | "resource")))
        .filter(|r| r.field("WARC-Target-URI") == Some(url))
        .max_by(|a, b| a.field("WARC-Date").cmp(&b.field("WARC-Date")))
        .expect("a record of the page");
    if latest.record_type() != Some("revisit") {
        return (None, latest);
    }
    let target = latest.field("WARC-Refers-To-Target-URI").unwrap();
    let date = latest.field("WARC-Refers-To-Date").unwrap();
    let original = warc
        .iter()
        .find(|r| {
            r.record_type() == Some("response")
                && r.field("WARC-Target-URI") == Some(target)
                && r.field("WARC-Date") == Some(date)
        })
        .expect("the revisit's capture is in the file");
    (Some(latest), original)
}

/// The WARC file `path` passes warcio, holds the revisit of `revisit` as a `revisit` record
/// naming `capture`'s response, and replays the page as `capture`'s 200.
fn check_warc(path: &std::path::Path, url: &str, capture: &SnapshotRecord, revisit: SnapshotId) {
    testkit::warcio::warcio_check(path, "a WARC file with a revisit");
    let warc = records(path);
    for r in &warc {
        r.verify_digests().unwrap();
    }
    let revisits: Vec<_> = warc
        .iter()
        .filter(|r| r.record_type() == Some("revisit"))
        .collect();
    assert_eq!(revisits.len(), 1, "revisit {revisit}");
    let rv = revisits[0];
    assert_eq!(
        rv.field("WARC-Profile"),
        Some("http://netpreserve.org/warc/1.1/revisit/server-not-modified")
    );
    assert_eq!(rv.field("WARC-Target-URI"), Some(url));
    assert_eq!(
        rv.field("WARC-Refers-To-Target-URI"),
        Some(capture.final_url.as_str())
    );
    assert_eq!(
        rv.field("WARC-Refers-To-Date"),
        Some(store::warc::warc_date(capture.fetched_at).as_str())
    );
    assert!(rv.block.starts_with(b"HTTP/1.1 304 Not Modified\r\n"));
    assert!(rv.block.ends_with(b"\r\n\r\n"), "a 304 has no payload");
    let (revisited, shown) = replay(&warc, url);
    assert_eq!(
        revisited.map(|r| r.field("WARC-Record-ID")),
        Some(rv.field("WARC-Record-ID"))
    );
    assert_eq!(rv.field("WARC-Refers-To"), shown.field("WARC-Record-ID"));
    assert!(shown.block.starts_with(b"HTTP/1.1 200 OK\r\n"));
    let payload = shown.http_payload().unwrap();
    assert!(String::from_utf8_lossy(payload).contains("第二回"));
    assert_eq!(
        rv.field("WARC-Payload-Digest").unwrap(),
        crawler::warc::labelled_digest(payload)
    );
    // Nothing in the file is recorded as a response of the empty body.
    assert!(
        !warc.iter().any(|r| r.record_type() == Some("response")
            && r.field("WARC-Target-URI") == Some(url)
            && r.http_payload().is_some_and(<[u8]>::is_empty)),
        "a 304 written as a response"
    );
}

async fn a_304_is_kept_as_a_revisit_of_the_capture_it_confirms(db: &TestDb) {
    let Some(tsa) = LocalTsa::start().await else {
        return;
    };
    let store = &db.store;
    import(store, "封神演义.txt", WORK).await;
    let sent = Arc::new(AtomicUsize::new(0));
    let addr = conditional_site(Arc::clone(&sent)).await;
    let url = url::Url::parse(&format!("http://{addr}{PAGE}")).unwrap();

    assert_eq!(crawl(store, &url).await, 0);
    assert_eq!(
        crawl(store, &url).await,
        1,
        "the re-crawl is counted not modified"
    );
    assert_eq!(sent.load(Ordering::SeqCst), 1);

    // The rows: the capture, and the revisit naming it.
    let rows = store.snapshots(store::Page::all()).await.unwrap();
    let capture = rows.iter().find(|r| r.status == 200).unwrap().clone();
    let revisit = rows.iter().find(|r| r.status == 304).unwrap().clone();
    assert_eq!(revisit.revisit_of, Some(capture.id));
    assert_eq!(capture.revisit_of, None);
    assert_eq!(
        hex(&revisit.sha256),
        EMPTY,
        "the row keeps what was received"
    );

    // Both are evidence of the one case, the revisit with the capture's digest.
    let cases = store.cases(&CaseFilter::default(), None, 10).await.unwrap();
    assert_eq!(cases.len(), 1);
    let case = cases[0].id;
    let view = casework::case_view(store, case).await.unwrap();
    let ids: Vec<SnapshotId> = view.snapshots().into_iter().map(|(id, _)| id).collect();
    assert!(
        ids.contains(&capture.id) && ids.contains(&revisit.id),
        "{ids:?}"
    );
    let m = view
        .matches
        .iter()
        .find(|m| m.snapshot_id == revisit.id)
        .unwrap();
    assert_eq!(m.snapshot_sha256, hex(&capture.sha256));
    assert_eq!(m.revisit_of, Some((capture.id, capture.fetched_at)));
    assert_eq!(
        store.snapshot_sha256(revisit.id).await.unwrap(),
        capture.sha256
    );

    // Stamps: both snapshots, the revisit's over the capture's digest, none over nothing.
    let authority =
        timestamp::Tsa::new(tsa.url.clone(), std::time::Duration::from_secs(20), None).unwrap();
    let stamped = stamp_case(store, &authority, case).await.unwrap();
    assert_eq!(stamped.stamped.len(), 2, "{stamped:?}");
    assert!(stamped.failed.is_empty(), "{stamped:?}");
    let empty: [u8; 32] = (0..32)
        .map(|i| u8::from_str_radix(&EMPTY[2 * i..2 * i + 2], 16).unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    for token in store.case_timestamps(case).await.unwrap() {
        assert_ne!(token.sha256, empty);
        let verified = timestamp::verify(&token.token, &token.sha256, None, None);
        assert!(verified.is_ok(), "{verified:?}");
        assert!(timestamp::verify(&token.token, &empty, None, None).is_err());
    }
    let revisit_stamp = &store.snapshot_timestamps(revisit.id).await.unwrap()[0];
    timestamp::verify(&revisit_stamp.token, &capture.sha256, None, None).unwrap();

    // The package: no empty digest, the revisit said to be one, its text said to be the
    // capture's.
    let dir = tempfile::tempdir().unwrap();
    evidence::write_package(store, case, dir.path(), false)
        .await
        .unwrap();
    let manifest = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    assert!(!manifest.contains(EMPTY), "{manifest}");
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let snapshots = manifest["snapshots"].as_array().unwrap();
    let entry = snapshots.iter().find(|s| s["id"] == revisit.id.0).unwrap();
    assert_eq!(entry["revisit_of"]["snapshot"], capture.id.0);
    assert_eq!(entry["evidence_sha256"], hex(&capture.sha256));
    assert_eq!(entry["revisit_of"]["body_sha256"], hex(&capture.sha256));
    assert!(entry.get("body_sha256").is_none(), "{entry}");
    assert_eq!(entry["text_from"], capture.id.0);
    assert_eq!(
        entry["unchanged_since"],
        format!(
            "unchanged since {} (server said 304)",
            capture
                .fetched_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )
    );
    assert_eq!(entry["timestamp"], format!("timestamps/{}.tsr", revisit.id));
    let readme = std::fs::read_to_string(dir.path().join("README.txt")).unwrap();
    assert!(readme.contains("304 Not Modified"), "{readme}");
    check_warc(
        &dir.path().join(evidence::package::WARC_FILE),
        url.as_str(),
        &capture,
        revisit.id,
    );

    // `snapshots export` writes the revisit alike.
    let export = dir.path().join("all.warc.gz");
    let written = evidence::warc_export::export_warc(store, None, &export)
        .await
        .unwrap();
    assert_eq!(written.snapshots, rows.len() as u64);
    check_warc(&export, url.as_str(), &capture, revisit.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_304_is_a_revisit_on_sqlite() {
    let Some(db) = store::testing::sqlite("revisit_sqlite").await else {
        return;
    };
    a_304_is_kept_as_a_revisit_of_the_capture_it_confirms(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_304_is_a_revisit_on_postgres() {
    let Some(db) = store::testing::postgres("revisit_postgres").await else {
        return;
    };
    a_304_is_kept_as_a_revisit_of_the_capture_it_confirms(&db).await;
}
