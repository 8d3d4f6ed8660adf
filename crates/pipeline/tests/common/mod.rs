//! What the pipeline's tests share.

#![allow(dead_code)] // each test file uses part of it

use chrono::Utc;
use store::{EvidenceWrites, NewPageText, NewSnapshot, SnapshotId, Store};

/// A page as a crawl would have stored it: a plain-text response from `url` (its body
/// `text`) and its page text, not matched yet.
pub async fn stored_page(store: &Store, url: &str, text: &str) -> SnapshotId {
    let body = text.as_bytes();
    // A stand-in for the body's SHA-256, distinct per URL and text.
    let mut sha = [0u8; 32];
    for (i, b) in url.bytes().chain(body.iter().copied()).enumerate() {
        sha[i % 32] = sha[i % 32].wrapping_mul(31).wrapping_add(b);
    }
    let new = NewSnapshot {
        crawl: None,
        url: url.to_owned(),
        final_url: url.to_owned(),
        status: 200,
        http_version: "HTTP/1.1".into(),
        headers: Vec::new(),
        header_block: Vec::new(),
        request_header_block: Vec::new(),
        content_type: Some("text/plain; charset=utf-8".into()),
        redirects: "[]".into(),
        sha256: sha,
        body_len: body.len() as u64,
        body_status: "complete".into(),
        fetched_at: Utc::now(),
        elapsed_ms: 1,
        remote_addr: None,
        etag: None,
        last_modified: None,
        wire: None,
    };
    let (id, _) = store
        .insert_snapshot(&new, Some(&zstd::encode_all(body, 1).unwrap()))
        .await
        .unwrap();
    store
        .insert_page_text(&NewPageText {
            snapshot: id,
            url: url.to_owned(),
            depth: 0,
            chain: None,
            kind: "content".into(),
            title: None,
            chapter_title: None,
            body: text.to_owned(),
            encoding: "UTF-8".into(),
            decode_errors: false,
            not_modified: false,
            fetched_at: Utc::now(),
        })
        .await
        .unwrap();
    id
}
