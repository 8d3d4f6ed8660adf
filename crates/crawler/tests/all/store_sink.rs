//! The store-backed `SnapshotSink` on both backends: what the crawler puts in and gets back
//! (body dedup as the crawl sees it, validators, pages), and rebuilding stored snapshots for
//! WARC export. The store methods themselves are in the store's conformance suite.

use std::time::Duration;

use bytes::Bytes;
use chrono::{TimeZone, Utc};
use crawler::sink::{PageRecord, SnapshotSink};
use crawler::snapshot::RedirectHop;
use crawler::{BodyStatus, Sha256, Snapshot, StoreSink, WarcReader, WarcWriter, Wire};
use extract::PageKind;
use reqwest::header::{HeaderMap, HeaderValue};
use store::testing::TestDb;
use store::{EvidenceReads, EvidenceWrites, Page};
use url::Url;

fn snapshot(path: &str, body: &'static [u8], etag: Option<&str>) -> Snapshot {
    let url = Url::parse(&format!("http://例子.example/{path}")).unwrap();
    let mut headers = HeaderMap::new();
    headers.insert(
        "content-type",
        HeaderValue::from_static("text/html; charset=gbk"),
    );
    // Not UTF-8: must survive byte for byte.
    headers.insert(
        "x-raw",
        HeaderValue::from_bytes(b"\xb5\xda\xd2\xbb").unwrap(),
    );
    if let Some(e) = etag {
        headers.insert("etag", HeaderValue::from_str(e).unwrap());
    }
    let mut hop_headers = HeaderMap::new();
    hop_headers.insert("location", HeaderValue::from_str(url.as_str()).unwrap());
    let body = Bytes::from_static(body);
    Snapshot {
        request_url: Url::parse("http://例子.example/start").unwrap(),
        final_url: url.clone(),
        redirects: vec![RedirectHop {
            url: Url::parse("http://例子.example/start").unwrap(),
            status: 301,
            headers: hop_headers,
            fetched_at: Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).unwrap(),
            remote_addr: Some("127.0.0.1:80".parse().unwrap()),
        }],
        status: 200,
        http_version: "HTTP/1.1",
        headers,
        request_headers: HeaderMap::new(),
        sha256: Sha256::of(&body),
        body,
        wire: Wire::Identity,
        body_status: BodyStatus::Complete,
        fetched_at: Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 1).unwrap(),
        elapsed: Duration::from_millis(12),
        remote_addr: Some("127.0.0.1:80".parse().unwrap()),
    }
}

async fn evidence_round_trips(db: &TestDb) {
    let sink = StoreSink::new(db.store.clone());
    let first = snapshot("a", "第一章 天下大势".as_bytes(), Some("\"v1\""));
    let a = sink.store_snapshot(&first).await.unwrap();
    assert!(a.new_body);
    // Same body at another URL: a new row, the body stored once.
    let b = sink
        .store_snapshot(&snapshot("b", "第一章 天下大势".as_bytes(), None))
        .await
        .unwrap();
    assert!(!b.new_body);
    assert_ne!(a.id, b.id);

    let prev = sink.previous(&first.final_url).await.unwrap().unwrap();
    assert_eq!(prev.validators.etag.as_deref(), Some("\"v1\""));
    assert_eq!(prev.sha256, first.sha256);
    assert!(
        sink.previous(&Url::parse("http://x.example/").unwrap())
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(sink.body(&first.sha256).await.unwrap().unwrap(), first.body);
    assert!(sink.body(&Sha256([7; 32])).await.unwrap().is_none());

    sink.store_page(PageRecord {
        url: first.request_url.clone(),
        final_url: first.final_url.clone(),
        snapshot: a.id,
        depth: 1,
        chain: None,
        kind: PageKind::Content,
        title: Some("三国演义".into()),
        chapter_title: Some("第一章".into()),
        text: "天下大势".into(),
        encoding: "GBK",
        decode_errors: false,
        not_modified: false,
        fetched_at: first.fetched_at,
        source: extract::TextSource::Script,
        text_snapshot: None,
        declared_encoding: Some("windows-1252"),
    })
    .await
    .unwrap();
    let text = db
        .store
        .page_text(store::SnapshotId(a.id.0 as i64))
        .await
        .unwrap();
    assert_eq!(text.body, "天下大势");
    assert_eq!(text.kind, "content");
    assert_eq!(text.text_source, "script");
    assert_eq!(text.declared_encoding.as_deref(), Some("windows-1252"));

    let rows = db.store.snapshots(Page::all()).await.unwrap();
    assert_eq!(rows.len(), 2);
    let back = crawler::stored_snapshot(&db.store, &rows[0]).await.unwrap();
    assert_eq!(back.body, first.body);
    assert_eq!(back.headers, first.headers);
    assert_eq!(back.final_url, first.final_url);
    assert_eq!(back.redirects.len(), 1);
    assert_eq!(back.redirects[0].status, 301);
    assert_eq!(back.fetched_at, first.fetched_at);
    // The fetch time is evidence too (it used to come back as zero).
    assert_eq!(back.elapsed, Duration::from_millis(12));

    let mut warc = WarcWriter::new(Vec::new());
    warc.write_snapshot(&back).unwrap();
    let bytes = warc.finish().unwrap();
    let records: Vec<_> = WarcReader::new(std::io::Cursor::new(bytes))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        records
            .iter()
            .any(|r| r.http_payload() == Some(&first.body[..]))
    );
    for r in &records {
        r.verify_digests().unwrap();
    }
}

#[tokio::test]
async fn sqlite_evidence_round_trips() {
    let db = store::testing::sqlite("sqlite_evidence_round_trips")
        .await
        .unwrap();
    evidence_round_trips(&db).await;
}

#[tokio::test]
async fn postgres_evidence_round_trips() {
    let Some(db) = store::testing::postgres("postgres_evidence_round_trips").await else {
        return;
    };
    evidence_round_trips(&db).await;
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

/// Bytes as served, through the store and back into a WARC: an encoded body keeps both
/// forms, an identity body is stored once, and a row without wire bytes (written before they
/// were kept) exports its decoded body under headers that agree with it, marked.
async fn wire_bytes_round_trip(db: &TestDb) {
    let sink = StoreSink::new(db.store.clone());
    let page = "<p>第二回　张翼德怒鞭督邮</p>".repeat(50);
    let wire = Bytes::from(gzip(page.as_bytes()));
    let mut encoded = snapshot("gz", b"", None);
    encoded.body = Bytes::from(page.clone().into_bytes());
    encoded.sha256 = Sha256::of(&encoded.body);
    encoded.wire = Wire::Encoded {
        sha256: Sha256::of(&wire),
        bytes: wire.clone(),
    };
    encoded
        .headers
        .insert("content-encoding", HeaderValue::from_static("gzip"));
    encoded.headers.insert(
        "content-length",
        HeaderValue::from_str(&wire.len().to_string()).unwrap(),
    );
    let identity = snapshot("plain", "第三回".as_bytes(), None);
    let mut legacy = snapshot("legacy", "第四回".as_bytes(), None);
    legacy.wire = Wire::NotRecorded;
    legacy
        .headers
        .insert("content-encoding", HeaderValue::from_static("gzip"));
    for s in [&encoded, &identity, &legacy] {
        sink.store_snapshot(s).await.unwrap();
    }
    for sha in [encoded.sha256, Sha256::of(&wire), identity.sha256] {
        assert!(db.store.has_body(sha.as_bytes()).await.unwrap(), "{sha}");
    }

    let rows = db.store.snapshots(Page::all()).await.unwrap();
    assert_eq!(rows[1].wire_sha256, Some(*identity.sha256.as_bytes()));
    let back: Vec<Snapshot> = {
        let mut v = Vec::new();
        for r in &rows {
            v.push(crawler::stored_snapshot(&db.store, r).await.unwrap());
        }
        v
    };
    assert_eq!(back[0].wire, encoded.wire);
    assert_eq!(back[0].body, encoded.body);
    assert_eq!(back[0].headers, encoded.headers);
    assert_eq!(back[1].wire, Wire::Identity);
    assert_eq!(back[2].wire, Wire::NotRecorded);

    let mut warc = WarcWriter::new(Vec::new());
    for s in &back {
        warc.write_snapshot(s).unwrap();
    }
    let records: Vec<_> = WarcReader::new(std::io::Cursor::new(warc.finish().unwrap()))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for r in &records {
        r.verify_digests().unwrap();
    }
    let responses: Vec<_> = records
        .iter()
        .filter(|r| r.record_type() == Some("response") && r.block.starts_with(b"HTTP/1.1 200"))
        .collect();
    assert_eq!(responses.len(), 3);
    let head = |r: &crawler::WarcRecord| {
        let end = r.block.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        String::from_utf8_lossy(&r.block[..end]).into_owned()
    };
    assert_eq!(responses[0].http_payload().unwrap(), &wire[..]);
    assert!(head(responses[0]).contains("content-encoding: gzip"));
    assert_eq!(responses[0].field(crawler::warc::WARNING_FIELD), None);
    assert_eq!(responses[1].http_payload().unwrap(), &identity.body[..]);
    assert_eq!(responses[2].http_payload().unwrap(), &legacy.body[..]);
    assert!(!head(responses[2]).contains("content-encoding"));
    assert!(
        responses[2]
            .field(crawler::warc::WARNING_FIELD)
            .unwrap()
            .contains("not kept")
    );
}

#[tokio::test]
async fn sqlite_wire_bytes_round_trip() {
    let db = store::testing::sqlite("sqlite_wire_bytes_round_trip")
        .await
        .unwrap();
    wire_bytes_round_trip(&db).await;
}

#[tokio::test]
async fn postgres_wire_bytes_round_trip() {
    let Some(db) = store::testing::postgres("postgres_wire_bytes_round_trip").await else {
        return;
    };
    wire_bytes_round_trip(&db).await;
}
