//! `copyhound snapshots export`, run as a user would run it, against a temp SQLite database.

use std::process::Command;

use store::{CrawlId, Crawls, EvidenceWrites, NewCrawl, NewSnapshot, Store, StoreSettings};

/// A stored response of `crawl` at `url` with `body`.
async fn store_page(store: &Store, crawl: Option<CrawlId>, url: &str, body: &[u8]) {
    let sha: [u8; 32] = {
        use sha2::Digest;
        sha2::Sha256::digest(body).into()
    };
    let row = NewSnapshot {
        crawl,
        url: url.into(),
        final_url: url.into(),
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
        wire: None,
    };
    let zstd = zstd::encode_all(body, 3).unwrap();
    store.insert_snapshot(&row, Some(&zstd)).await.unwrap();
}

fn export(db: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .env_remove("COPYHOUND_DATABASE_URL")
        .args(["--database", db, "snapshots", "export"])
        .args(args)
        .output()
        .unwrap()
}

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
        wire: None,
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_crawls_snapshots_export_and_an_unknown_crawl_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("c.db").display());
    let store = Store::open(&db, &StoreSettings::default()).await.unwrap();
    let crawl = |seed: &str| NewCrawl {
        seeds: vec![seed.into()],
        settings: "{}".into(),
        max_pages: None,
    };
    let mine = store
        .create_crawl(&crawl("http://a.example/"))
        .await
        .unwrap();
    let other = store
        .create_crawl(&crawl("http://b.example/"))
        .await
        .unwrap();
    store_page(
        &store,
        Some(mine),
        "http://a.example/2",
        "第二章 mine".as_bytes(),
    )
    .await;
    store_page(
        &store,
        Some(other),
        "http://b.example/1",
        "第一章 other".as_bytes(),
    )
    .await;
    store_page(
        &store,
        Some(mine),
        "http://a.example/1",
        "第一章 mine".as_bytes(),
    )
    .await;
    store_page(&store, None, "http://c.example/1", "第一章 none".as_bytes()).await;
    store.close().await;

    let warc = dir.path().join("mine.warc");
    let out = export(
        &db,
        &[
            "--warc",
            warc.to_str().unwrap(),
            "--crawl",
            &mine.to_string(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("exported 2 snapshots of crawl {mine}")),
        "{stdout}"
    );
    let written = std::fs::read(&warc).unwrap();
    let has = |body: &str| written.windows(body.len()).any(|w| w == body.as_bytes());
    assert!(has("第一章 mine") && has("第二章 mine"));
    assert!(!has("other") && !has("none"));
    // In URL order.
    let at = |body: &str| {
        written
            .windows(body.len())
            .position(|w| w == body.as_bytes())
    };
    assert!(at("第一章 mine") < at("第二章 mine"));

    let missing = dir.path().join("missing.warc");
    let out = export(&db, &["--warc", missing.to_str().unwrap(), "--crawl", "99"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("there is no crawl 99") && stderr.contains("copyhound crawls list"),
        "{stderr}"
    );
    assert!(!missing.exists(), "an empty WARC was left behind");
}
