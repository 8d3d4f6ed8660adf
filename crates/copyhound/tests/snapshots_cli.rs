//! `copyhound snapshots export`, run as a user would run it, against a temp SQLite database.

use std::process::Command;

use store::{EvidenceWrites, NewSnapshot, Store, StoreSettings};

#[tokio::test]
async fn stored_snapshots_export_as_warc() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("c.db").display());
    let store = Store::open(&db, &StoreSettings::default()).await.unwrap();
    let body = "第一章".as_bytes();
    let sha: [u8; 32] = {
        use sha2::Digest;
        sha2::Sha256::digest(body).into()
    };
    let row = NewSnapshot {
        crawl: None,
        url: "http://example.com/1".into(),
        final_url: "http://example.com/1".into(),
        status: 200,
        http_version: "HTTP/1.1".into(),
        headers: vec![("content-type".into(), "text/plain".into())],
        header_block: b"content-type: text/plain\r\n".to_vec(),
        request_header_block: Vec::new(),
        content_type: Some("text/plain".into()),
        redirects: "[]".into(),
        sha256: sha,
        body_len: body.len() as u64,
        body_status: "complete".into(),
        fetched_at: chrono::Utc::now(),
        elapsed_ms: 3,
        remote_addr: None,
        etag: None,
        last_modified: None,
    };
    let zstd = zstd::encode_all(body, 3).unwrap();
    store.insert_snapshot(&row, Some(&zstd)).await.unwrap();
    store.close().await;

    let warc = dir.path().join("out.warc");
    let out = Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .env_remove("COPYHOUND_DATABASE_URL")
        .args(["--database", &db, "snapshots", "export", "--warc"])
        .arg(&warc)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("exported 1 snapshots"), "{stdout}");
    let written = std::fs::read(&warc).unwrap();
    assert!(written.starts_with(b"WARC/1.1") || written.starts_with(b"WARC/1.0"));
    assert!(written.windows(body.len()).any(|w| w == body));
}
