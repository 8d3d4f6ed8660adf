//! Retention of page bodies (`Store::gc`, issue #30 point 3) on both database backends, with
//! bodies in the database and in segments on the two object stores (a folder and s3rver, as
//! in `bodies.rs`): what expired goes, what is evidence stays, a dry run reports the same
//! numbers and changes nothing, segments left empty are deleted and mostly dead ones
//! compacted, and what interrupted writers left is cleaned.

use chrono::{DateTime, Utc};
use sha2::Digest;
use store::testing::{BulkSql, S3Server, TestDb};
use store::{
    BodyBytes, EvidenceReads, EvidenceWrites, GcReport, RetentionSettings, SnapshotId,
    StorageSettings, Store,
};

async fn databases(test: &str) -> Vec<TestDb> {
    let mut dbs = vec![store::testing::sqlite(test).await.unwrap()];
    dbs.extend(store::testing::postgres(test).await);
    dbs
}

/// `None` (bodies stay in the database), a folder, and the S3 server when there is one.
fn storages(
    dir: &std::path::Path,
    s3: Option<&S3Server>,
    name: &str,
) -> Vec<Option<StorageSettings>> {
    let spool = dir.join("spool");
    let mut all = vec![
        None,
        Some(StorageSettings {
            bodies: format!("file://{}/{name}", dir.display()),
            spool_dir: spool.clone(),
            ..StorageSettings::default()
        }),
    ];
    all.extend(s3.map(|s3| Some(s3.storage(name, &spool))));
    all
}

fn days_ago(days: i64) -> DateTime<Utc> {
    Utc::now() - chrono::Duration::days(days)
}

/// A page body of about `len` bytes, distinct per `n`.
fn page(n: usize, len: usize) -> Vec<u8> {
    let mut text = format!("<html><title>第{n}章</title><p>").into_bytes();
    while text.len() < len {
        text.extend_from_slice(format!("盗版第{n}段，全文阅读。").as_bytes());
    }
    text
}

/// Stores `body` as a response of page `n` fetched at `at`, with its page text.
async fn store_page(s: &Store, n: usize, body: &[u8], at: DateTime<Utc>) -> SnapshotId {
    let url = format!("http://盗版.example/{n}.html");
    let snapshot = store::NewSnapshot {
        sha256: sha2::Sha256::digest(body).into(),
        body_len: body.len() as u64,
        ..store::testing::sample_snapshot(&url, 0, at)
    };
    let zstd = zstd::bulk::compress(body, 3).unwrap();
    let (id, _) = s.insert_snapshot(&snapshot, Some(&zstd)).await.unwrap();
    s.insert_page_text(&store::testing::sample_page_text(id, &url, "正文"))
        .await
        .unwrap();
    id
}

async fn readable(s: &Store, body: &[u8]) -> bool {
    let sha: [u8; 32] = sha2::Sha256::digest(body).into();
    match s.body(&sha).await.unwrap() {
        None => false,
        Some(stored) => {
            let bytes = match stored.bytes {
                BodyBytes::Zstd(z) => zstd::bulk::decompress(&z, stored.len as usize).unwrap(),
                BodyBytes::Plain(p) => p,
            };
            assert_eq!(bytes, body);
            true
        }
    }
}

async fn count(db: &TestDb, sql: &str) -> i64 {
    db.scalar(sql).await
}

/// Work `w` (one chapter, id `w` too) and a case of it on the pages' site, its last copy
/// seen at `seen`; the case's id is `w`.
async fn case(db: &TestDb, w: u32, seen: DateTime<Utc>) {
    let sql = BulkSql(db.kind());
    let over = sql.own_ids();
    let seen = sql.time(&seen.timestamp().to_string());
    db.execute(&format!(
        "INSERT INTO works (id, title, content_hash, source_format, chapter_count, chars) {over} \
         VALUES ({w}, '作品{w}', {}, 'txt', 1, 100); \
         INSERT INTO chapters (id, work_id, ordinal, title, body, chars) {over} \
         VALUES ({w}, {w}, 1, '第一章', 'x', 100); \
         INSERT INTO cases (id, site_id, work_id, status, last_seen_at) {over} \
         SELECT {w}, MIN(id), {w}, 'confirmed', {seen} FROM sites",
        sql.bytes(&w.to_string())
    ))
    .await;
}

/// A match of snapshot `s` with chapter `w`, in case `w` or in none (a licensed domain's).
async fn matched(db: &TestDb, s: SnapshotId, w: u32, in_case: bool) {
    let case = if in_case {
        w.to_string()
    } else {
        "NULL".into()
    };
    let licensed = if in_case { "FALSE" } else { "TRUE" };
    db.execute(&format!(
        "INSERT INTO matches (snapshot_id, chapter_id, work_id, case_id, page_id, fetched_at, \
         licensed, method, score, coverage, matched_chars) \
         SELECT id, {w}, {w}, {case}, page_id, fetched_at, {licensed}, 'align', 0.9, 0.8, 100 \
         FROM snapshots WHERE id = {s}"
    ))
    .await;
}

fn retention(keep_unmatched_texts: bool) -> RetentionSettings {
    RetentionSettings {
        keep_unmatched_texts,
        ..RetentionSettings::default()
    }
}

/// Runs gc dry, then for real: both report the same, and a second dry run finds nothing.
async fn dry_then_real(s: &Store, retention: &RetentionSettings) -> GcReport {
    let dry = s.gc(retention, true).await.unwrap();
    assert!(dry.dry_run);
    let real = s.gc(retention, false).await.unwrap();
    assert_eq!(
        GcReport {
            dry_run: false,
            ..dry.clone()
        },
        real,
        "the dry run's numbers"
    );
    let again = s.gc(retention, true).await.unwrap();
    assert_eq!(
        (again.snapshots, again.bodies, again.bytes),
        (0, 0, 0),
        "{again:?}"
    );
    real
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_bodies_go_and_evidence_stays() {
    let dir = tempfile::tempdir().unwrap();
    let s3 = S3Server::start().await;
    for db in databases("expired_bodies_go_and_evidence_stays").await {
        for storage in storages(dir.path(), s3.as_ref(), &format!("evidence-{}", db.kind())) {
            for table in [
                "recheck_copies",
                "notices",
                "matches",
                "cases",
                "chapters",
                "works",
                "snapshot_timestamps",
                "page_texts",
                "snapshots",
                "snapshot_bodies",
                "body_segments",
            ] {
                db.execute(&format!("DELETE FROM {table}")).await;
            }
            let s = match &storage {
                None => db.store.clone(),
                Some(st) => db.store.clone().with_storage(st).unwrap(),
            };
            let old = days_ago(40);
            let bodies: Vec<Vec<u8>> = (0..9).map(|n| page(n, 2000 + n * 100)).collect();
            // Unmatched and old: goes, its text too (keep_unmatched_texts = false).
            let u1 = store_page(&s, 0, &bodies[0], old).await;
            // Unmatched and old, its body also a fresh page's: the snapshot expires, the
            // body stays for the fresh one.
            let u2 = store_page(&s, 1, &bodies[1], old).await;
            let _fresh = store_page(&s, 2, &bodies[1], Utc::now()).await;
            // Old, in a case whose copy was seen today.
            case(&db, 1, Utc::now()).await;
            let c1 = store_page(&s, 3, &bodies[3], old).await;
            matched(&db, c1, 1, true).await;
            // Old, in a case with a notice.
            case(&db, 2, Utc::now()).await;
            let n1 = store_page(&s, 4, &bodies[4], old).await;
            matched(&db, n1, 2, true).await;
            db.execute(
                "INSERT INTO notices (case_id, template, recipient, subject, body) \
                 VALUES (2, 'dmca', 'abuse@盗版.example', 'Notice', 'text')",
            )
            .await;
            // Old, unmatched, with a trusted timestamp.
            let t1 = store_page(&s, 5, &bodies[5], old).await;
            let sql = BulkSql(db.kind());
            db.execute(&format!(
                "INSERT INTO snapshot_timestamps (snapshot_id, tsa_url, token, gen_time, \
                 hash_algorithm) VALUES ({t1}, 'https://tsa.example/', {}, {}, 'sha256')",
                sql.bytes("7"),
                sql.time(&old.timestamp().to_string())
            ))
            .await;
            // Old, unmatched, a re-check's fetch of case 1's copy.
            let r1 = store_page(&s, 6, &bodies[6], old).await;
            db.execute(&format!(
                "INSERT INTO recheck_copies (case_id, page_id, url, state, reason, snapshot_id, \
                 checked_at) SELECT 1, page_id, url, 'up', 'still there', id, fetched_at \
                 FROM snapshots WHERE id = {r1}"
            ))
            .await;
            // Fetched four years ago, in a case whose last copy was seen then: past evidence.
            let long_ago = days_ago(4 * 365);
            case(&db, 3, long_ago).await;
            let e1 = store_page(&s, 7, &bodies[7], long_ago).await;
            matched(&db, e1, 3, true).await;
            // Old, matched on a licensed domain (no case): evidence for three years.
            case(&db, 4, Utc::now()).await;
            let l1 = store_page(&s, 8, &bodies[8], old).await;
            matched(&db, l1, 4, false).await;

            if storage.is_some() {
                let moved = s.move_bodies_to_store(None).await.unwrap();
                assert_eq!((moved.bodies, moved.segments), (8, 1), "{moved:?}");
            }
            let report = dry_then_real(&s, &retention(false)).await;
            let gone = (bodies[0].len() + bodies[7].len()) as u64;
            assert_eq!(
                (report.snapshots, report.bodies, report.bytes, report.texts),
                (3, 2, gone, 2),
                "{storage:?}: {report:?}"
            );
            // Two of eight records dead: the segment stays as it is.
            assert_eq!((report.segments_deleted, report.segments_compacted), (0, 0));
            for (n, body) in bodies.iter().enumerate().filter(|(n, _)| *n != 2) {
                assert_eq!(readable(&s, body).await, n != 0 && n != 7, "body {n}");
            }
            let removed = |id: SnapshotId| {
                let s = s.clone();
                async move { s.snapshot(id).await.unwrap().body_removed_at.is_some() }
            };
            for id in [u1, u2, e1] {
                assert!(removed(id).await, "{id}");
            }
            for id in [c1, n1, t1, r1, l1] {
                assert!(!removed(id).await, "{id}");
            }
            // The unmatched page's text went; the matched one's of four years ago stayed.
            assert!(s.page_text(u1).await.is_err());
            assert!(s.page_text(e1).await.is_ok());
            assert!(s.page_text(c1).await.is_ok());
            // The crawl sends no validators from a snapshot without its body.
            let url = s.snapshot(u1).await.unwrap().url;
            db.execute(&format!("UPDATE snapshots SET etag = 'x' WHERE id = {u1}"))
                .await;
            assert!(s.latest_validated(&url).await.unwrap().is_none());
            // The same page fetched again stores its body again.
            store_page(&s, 0, &bodies[0], Utc::now()).await;
            assert!(readable(&s, &bodies[0]).await);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texts_of_unmatched_pages_stay_when_kept() {
    for db in databases("texts_of_unmatched_pages_stay_when_kept").await {
        let u = store_page(&db.store, 0, &page(0, 500), days_ago(40)).await;
        let report = dry_then_real(&db.store, &retention(true)).await;
        assert_eq!((report.snapshots, report.bodies, report.texts), (1, 1, 0));
        assert!(db.store.page_text(u).await.is_ok());
        // A shorter period than the setting's: what `gc --unmatched-older-than` passes.
        let v = store_page(&db.store, 1, &page(1, 500), days_ago(2)).await;
        let short = RetentionSettings {
            unmatched: std::time::Duration::from_secs(86_400),
            ..retention(true)
        };
        assert_eq!(
            db.store.gc(&retention(true), false).await.unwrap().bodies,
            0
        );
        assert_eq!(db.store.gc(&short, false).await.unwrap().bodies, 1);
        assert!(
            db.store
                .snapshot(v)
                .await
                .unwrap()
                .body_removed_at
                .is_some()
        );
        let too_short = RetentionSettings {
            unmatched: std::time::Duration::from_secs(60),
            ..retention(true)
        };
        assert!(db.store.gc(&too_short, false).await.is_err());
    }
}

/// A 304 re-fetch is evidence of the body its capture holds (issue #42): while the revisit
/// is kept as evidence, so is the capture's body, however old the capture and unmatched
/// itself; once the revisit's case is past the evidence period, the body goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_stays_while_a_revisit_of_it_is_evidence() {
    for db in databases("a_capture_stays_while_a_revisit_of_it_is_evidence").await {
        let s = &db.store;
        let body = page(0, 500);
        let capture = store_page(s, 0, &body, days_ago(1200)).await;
        let mut not_modified =
            store::testing::sample_snapshot("http://盗版.example/0.html", 0, days_ago(2));
        not_modified.status = 304;
        not_modified.body_len = 0;
        not_modified.sha256 = sha2::Sha256::digest(b"").into();
        let empty = zstd::bulk::compress(b"", 3).unwrap();
        let (revisit, _) = s
            .insert_revisit(&not_modified, Some(&empty), capture)
            .await
            .unwrap();
        case(&db, 1, days_ago(1)).await;
        matched(&db, revisit, 1, true).await;
        let report = dry_then_real(s, &retention(false)).await;
        assert_eq!(report.bodies, 0, "{report:?}");
        assert!(readable(s, &body).await);
        assert!(s.snapshot(capture).await.unwrap().body_removed_at.is_none());

        let long_ago = BulkSql(db.kind()).time(&days_ago(4000).timestamp().to_string());
        db.execute(&format!("UPDATE cases SET last_seen_at = {long_ago}"))
            .await;
        let report = dry_then_real(s, &retention(false)).await;
        assert_eq!(report.bodies, 1, "{report:?}");
        assert!(!readable(s, &body).await);
    }
}

fn objects(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(objects(&path));
        } else if path.to_string_lossy().ends_with(".warc.gz") {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_empty_go_mostly_dead_are_compacted_and_orphans_are_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let s3 = S3Server::start().await;
    for db in databases("segments_empty_go").await {
        for storage in storages(dir.path(), s3.as_ref(), &format!("segments-{}", db.kind()))
            .into_iter()
            .flatten()
        {
            for table in [
                "page_texts",
                "snapshots",
                "snapshot_bodies",
                "body_segments",
            ] {
                db.execute(&format!("DELETE FROM {table}")).await;
            }
            let s = db.store.clone().with_storage(&storage).unwrap();
            let old = days_ago(40);
            let bodies: Vec<Vec<u8>> = (0..10).map(|n| page(n, 3000)).collect();
            // Segment 1: four old bodies, all expire.
            for (n, body) in bodies[..4].iter().enumerate() {
                store_page(&s, n, body, old).await;
            }
            s.move_bodies_to_store(None).await.unwrap();
            // Segment 2: six bodies, four old (expire), two fresh (stay): compacted.
            for (n, body) in bodies[4..].iter().enumerate() {
                let at = if n < 4 { old } else { Utc::now() };
                store_page(&s, 4 + n, body, at).await;
            }
            s.move_bodies_to_store(None).await.unwrap();
            let segments = "SELECT COUNT(*) FROM body_segments";
            assert_eq!(count(&db, segments).await, 2);

            // An upload whose commit never came, and a spool file of a killed writer.
            store_page(&s, 99, &page(99, 3000), Utc::now()).await;
            let mut writer = s.segment_writer().unwrap();
            writer.fill(None).await.unwrap();
            let orphan = writer.upload().await.unwrap().unwrap();
            let orphan_key = orphan.key().to_owned();
            drop(orphan);
            db.execute("UPDATE body_segments SET created_at = 0 WHERE state = 'uploading'")
                .await;
            let part = storage.spool_dir.join("segment-killed.warc.gz.part");
            std::fs::write(&part, b"half a record").unwrap();
            std::fs::File::options()
                .write(true)
                .open(&part)
                .unwrap()
                .set_modified(
                    std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400),
                )
                .unwrap();
            let young = storage.spool_dir.join("segment-writing.warc.gz.part");
            std::fs::write(&young, b"being written").unwrap();

            let report = dry_then_real(&s, &retention(true)).await;
            assert_eq!(report.bodies, 8, "{report:?}");
            assert_eq!(report.bytes, 8 * bodies[0].len() as u64);
            assert_eq!(
                (
                    report.segments_deleted,
                    report.segments_compacted,
                    report.bodies_rewritten
                ),
                (1, 1, 2),
                "{report:?}"
            );
            assert_eq!((report.orphan_segments, report.spool_files), (1, 1));
            assert!(report.segment_bytes > 0);
            // Left: the compacted bodies in a new segment, and the page of the orphan's
            // upload, which waited in the database and went into a segment with them.
            assert_eq!(
                count(
                    &db,
                    "SELECT COUNT(*) FROM body_segments WHERE state = 'sealed'"
                )
                .await,
                1
            );
            assert_eq!(
                count(
                    &db,
                    "SELECT COUNT(*) FROM body_segments WHERE state <> 'sealed'"
                )
                .await,
                0
            );
            assert_eq!(
                count(
                    &db,
                    &format!("SELECT COUNT(*) FROM body_segments WHERE key = '{orphan_key}'")
                )
                .await,
                0
            );
            for (n, body) in bodies.iter().enumerate() {
                assert_eq!(readable(&s, body).await, n >= 8, "body {n}");
            }
            assert!(readable(&s, &page(99, 3000)).await);
            let totals = s.body_totals().await.unwrap();
            assert_eq!((totals.db_bodies, totals.store_bodies), (0, 3));
            assert!(!part.exists());
            assert!(young.exists());
            std::fs::remove_file(&young).unwrap();
            if let Some(root) = storage.bodies.strip_prefix("file://") {
                // The emptied, the compacted and the orphan's objects are gone.
                assert_eq!(objects(std::path::Path::new(root)).len(), 1);
            }
        }
    }
}

/// Stores a render of `snapshot` whose screenshot is `png`.
async fn rendered(s: &Store, snapshot: SnapshotId, png: &[u8]) {
    use store::Renders;
    s.insert_render(&store::NewRender {
        snapshot,
        final_url: format!("http://盗版.example/r{snapshot}.html"),
        html_zstd: zstd::bulk::compress(b"<p>x</p>", 3).unwrap(),
        html_len: 8,
        text: "正文".into(),
        screenshot: Some(store::NewScreenshot {
            sha256: sha2::Sha256::digest(png).into(),
            png: png.to_vec(),
            width: 1280,
            height: 2000,
        }),
        rendered_at: Utc::now(),
        timed_out: false,
        requests: 1,
        refused: 0,
    })
    .await
    .unwrap();
}

async fn screenshot(s: &Store, png: &[u8]) -> Option<Vec<u8>> {
    use store::Renders;
    s.screenshot_png(&sha2::Sha256::digest(png).into())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_go_with_their_snapshots_bodies_and_evidence_keeps_them() {
    use store::Renders;
    let dir = tempfile::tempdir().unwrap();
    let s3 = S3Server::start().await;
    for db in databases("screenshots_go_with_their_snapshots").await {
        for storage in storages(dir.path(), s3.as_ref(), &format!("shots-{}", db.kind())) {
            for table in [
                "renders",
                "screenshots",
                "matches",
                "cases",
                "chapters",
                "works",
                "page_texts",
                "snapshots",
                "snapshot_bodies",
                "body_segments",
            ] {
                db.execute(&format!("DELETE FROM {table}")).await;
            }
            let s = match &storage {
                None => db.store.clone(),
                Some(st) => db.store.clone().with_storage(st).unwrap(),
            };
            let old = days_ago(40);
            let pngs: Vec<Vec<u8>> = (0..4u8)
                .map(|n| {
                    let mut p = b"\x89PNG\r\n\x1a\n".to_vec();
                    p.extend((0..4000u32).map(|i| (i as u8) ^ n));
                    p
                })
                .collect();
            // Old and unmatched: its screenshot goes with its body.
            let u = store_page(&s, 0, &page(0, 1000), old).await;
            rendered(&s, u, &pngs[0]).await;
            // Old, in a case seen today: evidence, its screenshot stays.
            case(&db, 1, Utc::now()).await;
            let c = store_page(&s, 1, &page(1, 1000), old).await;
            matched(&db, c, 1, true).await;
            rendered(&s, c, &pngs[1]).await;
            // One screenshot of an old unmatched page and of a fresh one: stays.
            let u2 = store_page(&s, 2, &page(2, 1000), old).await;
            let fresh = store_page(&s, 3, &page(3, 1000), Utc::now()).await;
            rendered(&s, u2, &pngs[2]).await;
            rendered(&s, fresh, &pngs[2]).await;
            // Two renders of the old unmatched page, one screenshot each: both go.
            rendered(&s, u2, &pngs[3]).await;

            if storage.is_some() {
                let moved = s.move_bodies_to_store(None).await.unwrap();
                assert_eq!((moved.bodies, moved.screenshots), (4, 4), "{moved:?}");
            }
            let report = dry_then_real(&s, &retention(true)).await;
            assert_eq!(
                (report.snapshots, report.bodies, report.screenshots),
                (2, 2, 2),
                "{storage:?}: {report:?}"
            );
            assert_eq!(
                report.screenshot_bytes,
                (pngs[0].len() + pngs[3].len()) as u64
            );
            assert_eq!(screenshot(&s, &pngs[0]).await, None);
            assert_eq!(screenshot(&s, &pngs[3]).await, None);
            for kept in &pngs[1..3] {
                assert_eq!(screenshot(&s, kept).await.as_ref(), Some(kept));
            }
            // The expired page's renders no longer name a screenshot; the others' do.
            assert!(s.latest_screenshot(u).await.unwrap().is_none());
            assert!(s.latest_render(u).await.unwrap().is_some());
            let shown = s.latest_screenshot(c).await.unwrap().unwrap();
            assert_eq!(shown.screenshot.unwrap().bytes, pngs[1].len() as u64);
            assert!(s.latest_screenshot(fresh).await.unwrap().is_some());
            // The same screenshot rendered again stores it again.
            rendered(&s, fresh, &pngs[0]).await;
            assert_eq!(screenshot(&s, &pngs[0]).await.as_ref(), Some(&pngs[0]));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segment_objects_no_row_names_go_once_old_and_fresh_ones_stay() {
    let dir = tempfile::tempdir().unwrap();
    let s3 = S3Server::start().await;
    for db in databases("segment_objects_no_row_names").await {
        for storage in storages(dir.path(), s3.as_ref(), &format!("orphans-{}", db.kind()))
            .into_iter()
            .flatten()
        {
            for table in [
                "page_texts",
                "snapshots",
                "snapshot_bodies",
                "body_segments",
            ] {
                db.execute(&format!("DELETE FROM {table}")).await;
            }
            let s = db.store.clone().with_storage(&storage).unwrap();
            let bodies: Vec<Vec<u8>> = (0..3).map(|n| page(n, 2000)).collect();
            for (n, body) in bodies.iter().enumerate() {
                store_page(&s, n, body, Utc::now()).await;
            }
            s.move_bodies_to_store(None).await.unwrap();
            // An old segment object made whole and left without a row, and a fresh one (a
            // writer's whose row is not there yet, as far as gc can tell).
            let put = |name: &'static str| {
                let s = s.clone();
                async move {
                    let mut file = tempfile::tempfile().unwrap();
                    std::io::Write::write_all(&mut file, b"a record nobody points at").unwrap();
                    s.body_store()
                        .unwrap()
                        .put_file(name, &mut file, 25)
                        .await
                        .unwrap();
                }
            };
            put("segments/2020/01/02/stray.warc.gz").await;
            put("segments/2099/01/01/fresh.warc.gz").await;
            let local = storage
                .bodies
                .strip_prefix("file://")
                .map(std::path::PathBuf::from);
            if let Some(root) = &local {
                // Every object old but the fresh one, the segment rows point at too.
                for file in objects(root) {
                    if file.ends_with("fresh.warc.gz") {
                        continue;
                    }
                    std::fs::File::options()
                        .write(true)
                        .open(&file)
                        .unwrap()
                        .set_modified(
                            std::time::SystemTime::now()
                                - std::time::Duration::from_secs(2 * 86_400),
                        )
                        .unwrap();
                }
            }
            // S3 keeps its own times: there both are fresh, and both stay.
            let old = u64::from(local.is_some());
            let report = dry_then_real(&s, &retention(true)).await;
            assert_eq!(
                (report.orphan_objects, report.orphan_object_bytes),
                (old, old * 25),
                "{}: {report:?}",
                storage.bodies
            );
            let again = s.gc(&retention(true), true).await.unwrap();
            assert_eq!(again.orphan_objects, 0, "{again:?}");
            let names = s
                .body_store()
                .unwrap()
                .list_names("segments/2099/01/01")
                .await
                .unwrap();
            assert_eq!(names, vec!["segments/2099/01/01/fresh.warc.gz".to_owned()]);
            if let Some(root) = &local {
                assert!(!root.join("segments/2020/01/02/stray.warc.gz").exists());
            } else {
                let stray = s
                    .body_store()
                    .unwrap()
                    .list_names("segments/2020/01/02")
                    .await;
                assert_eq!(stray.unwrap().len(), 1);
            }
            // Everything the database points to reads back.
            for body in &bodies {
                assert!(readable(&s, body).await);
            }
            assert_eq!(s.body_totals().await.unwrap().store_bodies, 3);
        }
    }
}

/// Issue #43 point 5: a symbolic link inside a `file://` store to a folder elsewhere, and
/// one to a file elsewhere, holding old `.warc.gz` files no row names. gc neither lists nor
/// deletes them: nothing outside the store's folder is ever gc's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gc_never_follows_a_link_out_of_a_file_store() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    let victim = |name: &str| {
        let path = outside.path().join(name);
        std::fs::write(&path, b"someone else's file").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(two_days_ago)
            .unwrap();
        path
    };
    let in_folder = victim("kept.warc.gz");
    let linked_file = victim("linked.warc.gz");
    for db in databases("gc_never_follows_a_link").await {
        let root = dir.path().join(format!("links-{}", db.kind()));
        let storage = StorageSettings {
            bodies: format!("file://{}", root.display()),
            spool_dir: dir.path().join("spool"),
            ..StorageSettings::default()
        };
        let s = db.store.clone().with_storage(&storage).unwrap();
        let day = root.join("segments/2020/01/02");
        std::fs::create_dir_all(&day).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("segments/2020/elsewhere")).unwrap();
        std::os::unix::fs::symlink(&linked_file, day.join("link.warc.gz")).unwrap();
        let report = s.gc(&retention(true), false).await.unwrap();
        assert_eq!(report.orphan_objects, 0, "{report:?}");
        assert!(in_folder.exists(), "a file in a linked folder was deleted");
        assert!(linked_file.exists(), "a linked file's target was deleted");
        let dry = s.gc(&retention(true), true).await.unwrap();
        assert_eq!(
            dry.orphan_objects, 0,
            "a dry run lists nothing through them: {dry:?}"
        );
    }
}
