//! `copyhound gc` run as a user would run it, against a temp SQLite database with bodies in
//! it: the dry run's line, the run's, and a period the flag refuses (the rules themselves
//! are tested in store's `tests/gc.rs` on both backends and both object stores).

use crate::common;

use store::{EvidenceReads, EvidenceWrites, Store, StoreSettings};

async fn store_page(store: &Store, n: usize, body: &[u8], days_old: i64) -> store::SnapshotId {
    use sha2::Digest;
    let url = format!("http://盗版.example/{n}");
    let row = store::NewSnapshot {
        sha256: sha2::Sha256::digest(body).into(),
        body_len: body.len() as u64,
        ..store::testing::sample_snapshot(
            &url,
            0,
            chrono::Utc::now() - chrono::Duration::days(days_old),
        )
    };
    let zstd = zstd::encode_all(body, 3).unwrap();
    store.insert_snapshot(&row, Some(&zstd)).await.unwrap().0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gc_says_what_it_would_remove_then_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    let store = Store::open(&db, &StoreSettings::default()).await.unwrap();
    let bodies: Vec<Vec<u8>> = (0..3)
        .map(|n| format!("<p>第{n}章 全文阅读</p>").repeat(40).into_bytes())
        .collect();
    let old_a = store_page(&store, 0, &bodies[0], 40).await;
    let old_b = store_page(&store, 1, &bodies[1], 40).await;
    let week = store_page(&store, 2, &bodies[2], 7).await;
    let gone = bodies[0].len() + bodies[1].len();

    let out = common::ok(&db, &["gc", "--dry-run"]).await;
    assert!(
        out.contains(&format!("would remove 2 bodies, {gone} bytes")),
        "{out}"
    );
    assert!(
        store
            .snapshot(old_a)
            .await
            .unwrap()
            .body_removed_at
            .is_none()
    );

    let out = common::ok(&db, &["gc"]).await;
    assert!(
        out.contains(&format!("removed 2 bodies, {gone} bytes")),
        "{out}"
    );
    for id in [old_a, old_b] {
        assert!(store.snapshot(id).await.unwrap().body_removed_at.is_some());
    }
    assert!(
        store
            .snapshot(week)
            .await
            .unwrap()
            .body_removed_at
            .is_none()
    );

    // A shorter period than the setting's, by flag.
    let out = common::ok(&db, &["gc", "--unmatched-older-than", "3d"]).await;
    assert!(
        out.contains(&format!("removed 1 bodies, {} bytes", bodies[2].len())),
        "{out}"
    );
    // Under an hour a page may not be matched yet: refused, saying why.
    let out = common::run_async(&db, &["gc", "--unmatched-older-than", "10m"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("at least 1h"), "{stderr}");
}
