//! The conformance suite on SQLite (a temp file per test), plus what only SQLite does.

use crate::common;
use crate::conformance_suite;

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

/// A SQLite database in a temp folder with the migrations up to `version` applied, its URL,
/// and a connection to it with foreign keys enforced.
async fn migrated_to(version: i64) -> (tempfile::TempDir, String, sqlx::SqliteConnection) {
    use sqlx::{Connection, Executor};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/copyhound.db", dir.path().display());
    let migrations =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/sqlite");
    let migrator = sqlx::migrate::Migrator::new(migrations).await.unwrap();
    let mut c = sqlx::SqliteConnection::connect(&format!("{url}?mode=rwc"))
        .await
        .unwrap();
    c.execute("PRAGMA foreign_keys = ON").await.unwrap();
    migrator.run_to(version, &mut c).await.unwrap();
    (dir, url, c)
}

/// The cases migration rebuilds `cases` and `matches` (a CHECK constraint changes): rows
/// written before it keep their ids and references, statuses are renamed, matches get their
/// page and fetch time, nothing dangles, ids go on from the old sequence, and foreign keys
/// are enforced again afterwards.
#[tokio::test]
async fn the_cases_migration_keeps_references_and_renames_statuses() {
    use sqlx::{Connection, Executor};
    use store::{CaseId, CaseReads, CaseStatus, MatchReads, MatchWrites, NewMatch, SnapshotId};

    let (_dir, url, mut c) = migrated_to(20261124000000).await;
    {
        c.execute(
            "INSERT INTO works (id, title, content_hash, source_format, chapter_count) \
                 VALUES (1, '红楼梦', x'01', 'txt', 2);
             INSERT INTO chapters (id, work_id, ordinal, title, body, chars) \
                 VALUES (1, 1, 1, '第一回', 'a', 1000), (2, 1, 2, '第二回', 'b', 2000);
             INSERT INTO sites (id, name, base_url, host) \
                 VALUES (1, 'copy.example', 'https://copy.example/', 'copy.example');
             INSERT INTO pages (id, site_id, url) VALUES (1, 1, 'https://copy.example/1');
             INSERT INTO snapshot_bodies (sha256, body_zstd, body_len) VALUES (x'02', x'00', 1);
             INSERT INTO snapshots (id, page_id, url, final_url, status, body_zstd, body_len, \
                 sha256, fetched_at) VALUES (1, 1, 'https://copy.example/1', \
                 'https://copy.example/1', 200, x'', 1, x'02', '2026-11-20T10:00:00+00:00');
             INSERT INTO cases (id, site_id, work_id, status, review_note, reviewed_at, \
                 first_seen_at, last_seen_at) VALUES \
                 (7, 1, 1, 'resolved', '已删除', '2026-11-21T00:00:00.000Z', \
                  '2026-11-20T10:00:00.000Z', '2026-11-20T10:00:00.000Z');
             INSERT INTO matches (id, snapshot_id, chapter_id, work_id, case_id, method, score, \
                 coverage, matched_chars) VALUES (40, 1, 1, 1, 7, 'align', 0.9, 0.8, 800), \
                 (41, 1, 2, 1, 7, 'align', 0.7, 0.5, 900);
             INSERT INTO notices (case_id, template, recipient, subject, body) \
                 VALUES (7, 'dmca', 'abuse@copy.example', 'Takedown', '...');
             INSERT INTO works (id, title, content_hash, source_format) VALUES (2, 'x', x'03', 'txt');
             INSERT INTO cases (id, site_id, work_id, status) VALUES (9, 1, 2, 'open');
             DELETE FROM cases WHERE id = 9;",
        )
        .await
        .unwrap();
        c.close().await.unwrap();
    }

    let s = Store::open(&url, &StoreSettings::default()).await.unwrap();
    let case = s.case(CaseId(7)).await.unwrap();
    assert_eq!(case.status, CaseStatus::Removed);
    assert_eq!(case.review_note.as_deref(), Some("已删除"));
    assert_eq!(
        (case.pages, case.chapters_matched, case.work_chapters),
        (1, 2, 2)
    );
    assert_eq!(
        case.status_changed_at.to_rfc3339(),
        "2026-11-21T00:00:00+00:00"
    );
    let rows = s.matches_of(SnapshotId(1)).await.unwrap();
    assert_eq!(rows.iter().map(|m| m.id).collect::<Vec<_>>(), [40, 41]);
    assert!(
        rows.iter()
            .all(|m| m.case_id == Some(CaseId(7)) && m.latest && !m.licensed)
    );
    assert_eq!(rows[1].found.chapter_chars, 2000);
    assert_eq!(s.case_matches(CaseId(7)).await.unwrap().len(), 2);

    let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let notices: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM notices WHERE case_id = 7")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(notices, 1, "dropping the old cases table must not cascade");
    let dangling: Vec<(String,)> = sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check")
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert!(dangling.is_empty(), "{dangling:?}");
    for table in ["matches", "notices"] {
        let parents: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT \"table\" FROM pragma_foreign_key_list('{table}')"
        )))
        .fetch_all(&mut c)
        .await
        .unwrap();
        assert!(
            parents.contains(&"cases".to_owned()),
            "{table}: {parents:?}"
        );
        assert!(
            !parents.iter().any(|p| p.ends_with("_new")),
            "{table}: {parents:?}"
        );
    }
    c.close().await.unwrap();

    // The next case id continues after the deleted 9, and foreign keys hold again.
    let snap = {
        use store::EvidenceWrites;
        let mut snap = store::NewSnapshot {
            crawl: None,
            url: "https://other.example/1".into(),
            final_url: "https://other.example/1".into(),
            status: 200,
            http_version: "HTTP/1.1".into(),
            headers: vec![],
            header_block: vec![],
            request_header_block: vec![],
            content_type: None,
            redirects: "[]".into(),
            sha256: [2; 32],
            body_len: 1,
            body_status: "complete".into(),
            fetched_at: chrono::Utc::now(),
            elapsed_ms: 1,
            remote_addr: None,
            etag: None,
            last_modified: None,
            wire: None,
        };
        snap.sha256 = [5; 32];
        s.insert_snapshot(&snap, Some(&b"z"[..])).await.unwrap().0
    };
    let m = |chapter: i64| NewMatch {
        chapter_id: store::ChapterId(chapter),
        work_id: store::WorkId(1),
        method: "align".into(),
        score: 0.9,
        coverage: 0.9,
        matched_chars: 1,
        chapter_chars: 1,
        page_chars: 1,
        page_share: 1.0,
        passages: "[]".into(),
    };
    assert!(s.record_matches(snap, &[m(99)], "worker").await.is_err());
    let r = s.record_matches(snap, &[m(1)], "worker").await.unwrap();
    assert_eq!(r.opened, vec![CaseId(10)]);
}

/// The analytics migration counts the matches stored before it (licensed ones apart, by UTC
/// fetch day) and reads the review history from the audit log, and recordings after it keep
/// those counts current.
#[tokio::test]
async fn the_analytics_migration_counts_the_matches_already_stored() {
    use chrono::NaiveDate;
    use sqlx::{Connection, Executor};
    use store::{ChapterId, DayCount, MatchWrites, NewMatch, SnapshotId, StatsReads, WorkId};

    let (_dir, url, mut c) = migrated_to(20261126000000).await;
    {
        c.execute(
            "INSERT INTO works (id, title, content_hash, source_format, chapter_count) \
                 VALUES (1, '红楼梦', x'01', 'txt', 3);
             INSERT INTO chapters (id, work_id, ordinal, title, body, chars) \
                 VALUES (1, 1, 1, '一', 'a', 10), (2, 1, 2, '二', 'b', 10), (3, 1, 3, '三', 'c', 10);
             INSERT INTO sites (id, name, base_url, host) \
                 VALUES (1, 'copy.example', 'https://copy.example/', 'copy.example');
             INSERT INTO pages (id, site_id, url) VALUES (1, 1, 'https://copy.example/1'), \
                 (2, 1, 'https://copy.example/2');
             INSERT INTO snapshots (id, page_id, url, final_url, status, body_zstd, body_len, \
                 sha256, fetched_at) VALUES \
                 (1, 1, 'https://copy.example/1', 'https://copy.example/1', 200, x'', 1, x'02', \
                  '2026-11-20T10:00:00+00:00'), \
                 (2, 2, 'https://copy.example/2', 'https://copy.example/2', 200, x'', 1, x'03', \
                  '2026-11-21T23:59:59.500+00:00');
             INSERT INTO cases (id, site_id, work_id, status, first_seen_at) \
                 VALUES (7, 1, 1, 'removed', '2026-11-20T10:00:00+00:00');
             INSERT INTO audit_log (at, actor, action, target_type, target_id) VALUES \
                 ('2026-11-21T10:00:00+00:00', 'alice', 'case.confirmed', 'case', 7), \
                 ('2026-11-22T10:00:00+00:00', 'alice', 'case.notice_sent', 'case', 7), \
                 ('2026-11-23T10:00:00+00:00', 'alice', 'case.removed', 'case', 7), \
                 ('2026-11-24T10:00:00+00:00', 'alice', 'case.removed', 'case', 7);
             INSERT INTO matches (snapshot_id, chapter_id, work_id, case_id, page_id, fetched_at, \
                 licensed, method, score, coverage, matched_chars) VALUES \
                 (1, 1, 1, 7, 1, '2026-11-20T10:00:00+00:00', FALSE, 'align', 0.9, 0.9, 9), \
                 (1, 2, 1, 7, 1, '2026-11-20T10:00:00+00:00', FALSE, 'align', 0.9, 0.9, 9), \
                 (2, 3, 1, NULL, 2, '2026-11-21T23:59:59.500+00:00', TRUE, 'align', 0.9, 0.9, 9);",
        )
        .await
        .unwrap();
        c.close().await.unwrap();
    }

    let s = Store::open(&url, &StoreSettings::default()).await.unwrap();
    let day = |d| NaiveDate::from_ymd_opt(2026, 11, d).unwrap();
    let count = |d, matches, licensed, copies| DayCount {
        day: day(d),
        matches,
        licensed,
        copies,
    };
    assert_eq!(
        s.detections_by_day(None).await.unwrap(),
        [count(20, 2, 0, 2), count(21, 0, 1, 0)]
    );
    // The review history is read back from the audit log: the first removal three days
    // after the copy was first seen.
    let funnel = s.case_funnel(None).await.unwrap();
    assert_eq!(
        (
            funnel.found,
            funnel.confirmed,
            funnel.notice_sent,
            funnel.removed,
            funnel.dismissed
        ),
        (1, 1, 1, 1, 0)
    );
    let removals = s.removal_times(None).await.unwrap();
    assert_eq!(
        (removals.removed, removals.median),
        (1, Some(chrono::TimeDelta::days(3)))
    );
    let exposure = &s.work_exposure(10).await.unwrap()[0];
    assert_eq!(
        (exposure.chapters_copied, exposure.licensed_matches),
        (2, 1)
    );

    // Matching snapshot 1 again finds chapter 1 only.
    let only_first = NewMatch {
        chapter_id: ChapterId(1),
        work_id: WorkId(1),
        method: "align".into(),
        score: 0.9,
        coverage: 0.9,
        matched_chars: 9,
        chapter_chars: 10,
        page_chars: 10,
        page_share: 0.9,
        passages: "[]".into(),
    };
    s.record_matches(SnapshotId(1), &[only_first], "worker")
        .await
        .unwrap();
    assert_eq!(
        s.detections_by_day(None).await.unwrap(),
        [count(20, 1, 0, 1), count(21, 0, 1, 0)]
    );
    assert_eq!(s.work_exposure(10).await.unwrap()[0].chapters_copied, 1);
}

/// The next case of the review queue (asked for by every case page) walks
/// `cases_status_recent` in order on SQLite once `ANALYZE` has run over 50,000 cases.
/// Joining `sites` first, as SQLite 3.51's planner chose with those statistics (with 20,000
/// cases it did not), read and sorted every case of the status: 15 ms a case page instead of
/// 0.5.
#[tokio::test]
async fn the_review_queue_walks_its_index_in_order_after_analyze() {
    use sqlx::Connection;
    use store::{CaseFilter, CaseStatus};
    let db = store::testing::sqlite("plan").await.unwrap();
    store::testing::fill_cases(&db.url, db.kind(), 50_000, 316).await;
    let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::raw_sql("ANALYZE").execute(&mut c).await.unwrap();
    c.close().await.unwrap();
    let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    let filter = CaseFilter {
        status: Some(CaseStatus::New),
        ..Default::default()
    };
    let sql = format!(
        "EXPLAIN QUERY PLAN {}",
        store::testing::case_list_sql(&filter, true, 1)
    );
    let at: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT last_seen_at FROM cases WHERE id = 25000")
            .fetch_one(&mut c)
            .await
            .unwrap();
    let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind("new")
        .bind(at)
        .bind(25_000_i64)
        .fetch_all(&mut c)
        .await
        .unwrap();
    let plan: Vec<&str> = plan.iter().map(|p| p.3.as_str()).collect();
    assert!(
        plan[0].starts_with("SEARCH c USING INDEX cases_status_recent")
            && !plan.iter().any(|p| p.contains("TEMP B-TREE")),
        "{plan:#?}"
    );
}
