//! `copyhound storage migrate` and `status`, and `doctor`'s storage check, run as a user
//! would run them, against a temp SQLite database and a folder as the object store (the S3
//! store is tested under the same code in store's `tests/bodies.rs`).

use crate::common;

use store::{
    BodyBytes, EvidenceReads, EvidenceWrites, NewSnapshot, StorageSettings, Store, StoreSettings,
};

fn sha(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

/// A stored response at `url` with `body`.
async fn store_page(store: &Store, url: &str, body: &[u8]) -> store::SnapshotId {
    let row = NewSnapshot {
        crawl: None,
        url: url.into(),
        final_url: url.into(),
        status: 200,
        http_version: "HTTP/1.1".into(),
        headers: vec![("content-type".into(), "text/html".into())],
        header_block: b"content-type: text/html\r\n".to_vec(),
        request_header_block: Vec::new(),
        content_type: Some("text/html".into()),
        redirects: "[]".into(),
        sha256: sha(body),
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
    store.insert_snapshot(&row, Some(&zstd)).await.unwrap().0
}

/// A render of `snapshot` with `png` as its screenshot.
async fn render(store: &Store, snapshot: store::SnapshotId, png: &[u8]) {
    use store::Renders;
    store
        .insert_render(&store::NewRender {
            snapshot,
            final_url: "http://盗版.example/0".into(),
            html_zstd: zstd::encode_all(&b"<p></p>"[..], 3).unwrap(),
            html_len: 7,
            text: "正文".into(),
            screenshot: Some(store::NewScreenshot {
                sha256: sha(png),
                png: png.to_vec(),
                width: 800,
                height: 600,
            }),
            rendered_at: chrono::Utc::now(),
            timed_out: false,
            requests: 1,
            refused: 0,
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_migrate_moves_bodies_to_a_folder_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    let bodies_dir = dir.path().join("bodies");
    let spool = dir.path().join("spool");
    let store = Store::open(&db, &StoreSettings::default()).await.unwrap();
    let pages: Vec<Vec<u8>> = (0..3)
        .map(|n| {
            format!("<p>第{n}章 天下盗版，全文阅读</p>")
                .repeat(50)
                .into_bytes()
        })
        .collect();
    let mut snapshots = Vec::new();
    for (n, body) in pages.iter().enumerate() {
        snapshots.push(store_page(&store, &format!("http://盗版.example/{n}"), body).await);
    }
    let png: Vec<u8> = (0..2000u32).map(|i| (i * 7 % 256) as u8).collect();
    render(&store, snapshots[0], &png).await;
    let total: usize = pages.iter().map(Vec::len).sum();
    let bodies = format!("file://{}", bodies_dir.display());
    let env = [
        ("COPYHOUND_STORAGE__BODIES", bodies.as_str()),
        ("COPYHOUND_STORAGE__SPOOL_DIR", spool.to_str().unwrap()),
    ];

    // With bodies = "db" there is nowhere to move them: said, with the setting to change.
    let out = common::run_async(&db, &["storage", "migrate", "--to", "store"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("COPYHOUND_STORAGE__BODIES"), "{stderr}");
    // A location that is none of the three forms is refused by name.
    let out = common::run_with(
        &db,
        &[("COPYHOUND_STORAGE__BODIES", "ftp://x/")],
        &["storage", "status"],
    )
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("storage.bodies") && stderr.contains("s3://bucket/prefix"),
        "{stderr}"
    );

    let out = common::ok_with(&db, &env, &["storage", "migrate", "--to", "store"]).await;
    assert!(
        out.contains(&format!(
            "moved 3 bodies, {total} bytes, to {bodies} in 1 segments"
        )),
        "{out}"
    );
    assert!(
        out.contains("in the database: 0 bodies, 0 bytes; in segments: 3 bodies"),
        "{out}"
    );
    assert!(out.contains("moved 1 screenshots, 2000 bytes"), "{out}");
    assert!(
        out.contains("screenshots in the database: 0, 0 bytes; in segments: 1, 2000 bytes"),
        "{out}"
    );
    // Read back through the store with the same settings: from the segment, whole.
    let on_store = store
        .clone()
        .with_storage(&StorageSettings {
            bodies: bodies.clone(),
            spool_dir: spool.clone(),
            ..StorageSettings::default()
        })
        .unwrap();
    for body in &pages {
        let stored = on_store.body(&sha(body)).await.unwrap().unwrap();
        assert_eq!(stored.bytes, BodyBytes::Plain(body.clone()));
    }
    {
        use store::Renders;
        assert_eq!(
            on_store.screenshot_png(&sha(&png)).await.unwrap(),
            Some(png.clone())
        );
    }

    // doctor: the store answers a probe, and the bodies are counted on each side.
    let out = common::run_with(&db, &env, &["doctor", "--json"]).await;
    let findings = common::lines(&String::from_utf8_lossy(&out.stdout));
    let storage = findings
        .iter()
        .find(|f| f["check"] == "storage")
        .expect("a storage finding");
    assert_eq!(storage["level"], "ok", "{storage}");
    let detail = storage["detail"].as_str().unwrap();
    assert!(
        detail.contains("answered a probe object") && detail.contains("3 bodies"),
        "{detail}"
    );
    // What retention will free: nothing yet, the pages were fetched just now.
    let retention = findings
        .iter()
        .find(|f| f["check"] == "retention")
        .expect("a retention finding");
    assert_eq!(retention["level"], "ok", "{retention}");
    let detail = retention["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("gc would remove 0 bodies (0 B) of 0 snapshots")
            && detail.contains("unmatched pages keep their bodies 30d, evidence 3y"),
        "{detail}"
    );

    // Back into the database, one first (as a migration stopped and resumed), then the rest.
    let out = common::ok_with(
        &db,
        &env,
        &["storage", "migrate", "--to", "db", "--limit", "1"],
    )
    .await;
    assert!(out.contains("moved 1 bodies"), "{out}");
    let out = common::ok_with(&db, &env, &["storage", "migrate", "--to", "db"]).await;
    assert!(
        out.contains("moved 2 bodies")
            && out.contains("1 emptied segments deleted")
            && out.contains("moved 1 screenshots, 2000 bytes"),
        "{out}"
    );
    let out = common::ok(&db, &["storage", "status"]).await;
    assert!(
        out.contains(&format!(
            "in the database: 3 bodies, {total} bytes; in segments: 0 bodies"
        )),
        "{out}"
    );
    for body in &pages {
        let stored = store.body(&sha(body)).await.unwrap().unwrap();
        assert!(matches!(stored.bytes, BodyBytes::Zstd(_)));
    }
    {
        use store::Renders;
        assert_eq!(store.screenshot_png(&sha(&png)).await.unwrap(), Some(png));
    }
    store.close().await;
}

#[tokio::test]
async fn doctor_fails_a_store_that_does_not_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let env = [
        ("COPYHOUND_STORAGE__BODIES", "s3://bucket/bodies"),
        ("COPYHOUND_STORAGE__ENDPOINT", endpoint.as_str()),
        ("COPYHOUND_STORAGE__ALLOW_HTTP", "true"),
        ("COPYHOUND_STORAGE__ACCESS_KEY_ID", "key"),
        ("COPYHOUND_STORAGE__SECRET_ACCESS_KEY", "secret-never-shown"),
    ];
    let out = common::run_with(&db, &env, &["doctor", "--json"]).await;
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("secret-never-shown"), "{stdout}");
    let findings = common::lines(&stdout);
    let storage = findings
        .iter()
        .find(|f| f["check"] == "storage")
        .expect("a storage finding");
    assert_eq!(storage["level"], "fail", "{storage}");
    assert!(
        storage["fix"]
            .as_str()
            .unwrap()
            .contains("storage.endpoint"),
        "{storage}"
    );
}
