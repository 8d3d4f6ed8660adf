//! The conformance suite on SQLite (a temp file per test), plus what only SQLite does.

mod common;

conformance_suite!(store::testing::sqlite);

use store::{BackendKind, Store, StoreSettings};

#[tokio::test]
async fn a_missing_database_file_and_folder_are_created_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/deeper/copyhound.db");
    let url = format!("sqlite://{}", path.display());
    let store = Store::open(&url, &StoreSettings::default()).await.unwrap();
    assert_eq!(store.kind(), BackendKind::Sqlite);
    assert!(path.exists());
    store.close().await;
    let mode: String = {
        use sqlx::Connection;
        let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut c)
            .await
            .unwrap()
    };
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn an_in_memory_database_works_with_one_connection() {
    use store::{Page, WorkFilter, WorkReads};
    let store = Store::open("sqlite::memory:", &StoreSettings::default())
        .await
        .unwrap();
    assert!(
        store
            .works(&WorkFilter::All, Page::all())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn other_schemes_are_refused_naming_the_two_that_work() {
    let err = Store::open(
        "mysql://root:hunter2@localhost/db",
        &StoreSettings::default(),
    )
    .await
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("sqlite://") && msg.contains("postgres://"),
        "{msg}"
    );
    assert!(!msg.contains("hunter2"), "{msg}");
}
