//! What the pipeline's tests share.

#![allow(dead_code)] // each test file uses part of it

use chrono::Utc;
use sha2::Digest;
use store::{EvidenceWrites, NewPageText, NewSnapshot, SnapshotId, Store};

/// A page as a crawl would have stored it: a plain-text response from `url` (its body
/// `text`) and its page text, not matched yet.
pub async fn stored_page(store: &Store, url: &str, text: &str) -> SnapshotId {
    let body = text.as_bytes();
    let new = NewSnapshot {
        content_type: Some("text/plain; charset=utf-8".into()),
        sha256: sha2::Sha256::digest(body).into(),
        body_len: body.len() as u64,
        elapsed_ms: 1,
        ..store::testing::sample_snapshot(url, 0, Utc::now())
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
            text_source: "markup".into(),
            text_snapshot: None,
        })
        .await
        .unwrap();
    id
}
