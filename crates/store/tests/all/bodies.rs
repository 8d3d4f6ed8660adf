//! Page bodies on an object store (issue #30), on both database backends and two stores:
//! the local filesystem and a real S3-compatible server on 127.0.0.1 (s3rver, which
//! `.ci/run` installs; without it the S3 half prints a loud SKIPPED line, or fails under
//! `CI=true`). Postgres comes from `COPYHOUND_TEST_POSTGRES_URL` as in the conformance suite.

use sha2::Digest;
use store::testing::{S3Server, TestDb};
use store::{
    BodyBytes, EvidenceReads, EvidenceWrites, NewSnapshot, NewWireBody, StorageSettings, Store,
};

/// The databases to run on: SQLite always, Postgres when reachable (required under
/// `COPYHOUND_REQUIRE_POSTGRES=1`).
async fn databases(test: &str) -> Vec<TestDb> {
    let mut dbs = vec![store::testing::sqlite(test).await.unwrap()];
    dbs.extend(store::testing::postgres(test).await);
    dbs
}

/// The object stores to run with: a folder, and the S3 server when there is one.
struct Stores {
    dir: tempfile::TempDir,
    s3: Option<S3Server>,
}

impl Stores {
    async fn start() -> Stores {
        Stores {
            dir: tempfile::tempdir().unwrap(),
            s3: S3Server::start().await,
        }
    }

    /// `[storage]` for each store, each under a prefix of its own (`name`).
    fn settings(&self, name: &str) -> Vec<StorageSettings> {
        let spool = self.dir.path().join("spool");
        let mut all = vec![StorageSettings {
            bodies: format!("file://{}/{name}", self.dir.path().display()),
            spool_dir: spool.clone(),
            ..StorageSettings::default()
        }];
        all.extend(self.s3.as_ref().map(|s3| s3.storage(name, &spool)));
        all
    }
}

/// A page body: bytes in Chinese, distinct per `n`, `len` bytes long or more.
fn page(n: usize, len: usize) -> Vec<u8> {
    let mut text = format!("<html><title>第{n}章</title><p>").into_bytes();
    while text.len() < len {
        text.extend_from_slice(format!("天下盗版第{n}段，全文阅读。").as_bytes());
    }
    text.extend_from_slice(b"</p></html>");
    text
}

fn sha(bytes: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(bytes).into()
}

/// Stores a response with `body`; with `wire`, also its bytes as served (content-coded).
async fn store_page(s: &Store, n: usize, body: &[u8], wire: Option<&[u8]>) -> [u8; 32] {
    let snapshot = NewSnapshot {
        crawl: None,
        url: format!("http://盗版.example/{n}.html"),
        final_url: format!("http://盗版.example/{n}.html"),
        status: 200,
        http_version: "HTTP/1.1".into(),
        headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
        header_block: b"content-type: text/html; charset=utf-8\r\ntransfer-encoding: chunked\r\n"
            .to_vec(),
        request_header_block: b"user-agent: copyhound\r\n".to_vec(),
        content_type: Some("text/html; charset=utf-8".into()),
        redirects: "[]".into(),
        sha256: sha(body),
        body_len: body.len() as u64,
        body_status: "complete".into(),
        fetched_at: chrono::Utc::now(),
        elapsed_ms: 5,
        remote_addr: None,
        etag: None,
        last_modified: None,
        wire: Some(match wire {
            Some(w) => NewWireBody {
                sha256: sha(w),
                len: w.len() as u64,
                zstd: Some(zstd::bulk::compress(w, 3).unwrap()),
            },
            None => NewWireBody {
                sha256: sha(body),
                len: body.len() as u64,
                zstd: None,
            },
        }),
    };
    let zstd = zstd::bulk::compress(body, 3).unwrap();
    s.insert_snapshot(&snapshot, Some(&zstd)).await.unwrap();
    sha(body)
}

/// Removes every snapshot, body and segment row (a database reused for the next store).
async fn reset(db: &TestDb) {
    db.execute("DELETE FROM snapshots").await;
    db.execute("DELETE FROM snapshot_bodies").await;
    db.execute("DELETE FROM body_segments").await;
}

/// The bytes `s` reads back for `sha`, and whether they came from a segment.
async fn read(s: &Store, sha: &[u8; 32]) -> (Vec<u8>, bool) {
    let stored = s.body(sha).await.unwrap().expect("a stored body");
    match stored.bytes {
        BodyBytes::Zstd(z) => (
            zstd::bulk::decompress(&z, stored.len as usize).unwrap(),
            false,
        ),
        BodyBytes::Plain(bytes) => (bytes, true),
    }
}

/// Stores `n` pages (every third served gzip-coded, so its wire body is a body of its own)
/// and returns every body stored, by hash.
async fn fill(s: &Store, n: usize, len: usize) -> Vec<([u8; 32], Vec<u8>)> {
    let mut bodies = Vec::new();
    for i in 0..n {
        let body = page(i, len);
        if i % 3 == 0 {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, &body).unwrap();
            let wire = gz.finish().unwrap();
            store_page(s, i, &body, Some(&wire)).await;
            bodies.push((sha(&wire), wire));
        } else {
            store_page(s, i, &body, None).await;
        }
        bodies.push((sha(&body), body));
    }
    bodies
}

/// Every row that points at a segment reads back whole from the store, checked against its
/// hash: nothing the database points to is missing.
async fn every_pointer_resolves(s: &Store, bodies: &[([u8; 32], Vec<u8>)]) {
    for (sha, bytes) in bodies {
        assert_eq!(&read(s, sha).await.0, bytes);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_round_trip_through_each_store() {
    let stores = Stores::start().await;
    for db in databases("bodies_round_trip_through_each_store").await {
        for storage in stores.settings(&format!("round-trip-{}", db.kind())) {
            let s = db.store.clone().with_storage(&storage).unwrap();
            // Clear what the previous store's pass left.
            reset(&db).await;
            let bodies = fill(&s, 12, 3000).await;
            let before = s.body_totals().await.unwrap();
            assert_eq!((before.db_bodies, before.store_bodies), (16, 0));
            assert!(s.segment_due().await.unwrap(), "no segment written yet");

            let report = s.move_bodies_to_store(None).await.unwrap();
            assert_eq!(
                (report.bodies, report.segments),
                (16, 1),
                "{}: {report:?}",
                storage.bodies
            );
            assert!(report.refused.is_empty());
            assert_eq!(report.bytes, before.db_bytes);
            let after = s.body_totals().await.unwrap();
            assert_eq!((after.db_bodies, after.store_bodies), (0, 16));
            assert_eq!(after.store_bytes, before.db_bytes);
            assert!(after.segment_bytes > 0);
            for (sha, bytes) in &bodies {
                let (back, from_segment) = read(&s, sha).await;
                assert!(from_segment, "{}", storage.bodies);
                assert_eq!(&back, bytes);
            }
            // Nothing left to move: no segment is due and another move writes none.
            assert!(!s.segment_due().await.unwrap());
            assert_eq!(s.move_bodies_to_store(None).await.unwrap().segments, 0);
            // A store without the object store cannot read them, and says why.
            let err = db.store.body(&bodies[0].0).await.unwrap_err();
            assert!(err.to_string().contains("[storage] bodies"), "{err}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_are_warc_files_with_a_record_per_body() {
    let stores = Stores::start().await;
    for db in databases("segments_are_warc_files").await {
        let storage = stores.settings(&format!("warc-{}", db.kind())).remove(0);
        let s = db.store.clone().with_storage(&storage).unwrap();
        let bodies = fill(&s, 3, 500).await;
        s.move_bodies_to_store(None).await.unwrap();
        let root = storage.bodies.strip_prefix("file://").unwrap();
        let files: Vec<_> = walk(std::path::Path::new(root));
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].to_string_lossy().ends_with(".warc.gz"));
        let records: Vec<String> = members(&std::fs::read(&files[0]).unwrap())
            .iter()
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect();
        // Every gzip member is one record: warcinfo, then one per body (4: page 0 is coded).
        assert_eq!(records.len(), 1 + bodies.len());
        assert!(records[0].contains("WARC-Type: warcinfo"));
        let responses = records
            .iter()
            .filter(|r| r.contains("WARC-Type: response"))
            .count();
        let resources = records
            .iter()
            .filter(|r| r.contains("WARC-Type: resource"))
            .count();
        // Bodies served as they are and the coded one's bytes are responses, each with the
        // head it was served with; the decoded body of the coded response is a resource of
        // the response's media type.
        assert_eq!((responses, resources), (3, 1), "{records:#?}");
        for r in &records[1..] {
            assert!(r.starts_with("WARC/1.1\r\n"), "{r}");
            assert!(r.contains("WARC-Target-URI: http://盗版.example/"), "{r}");
            assert!(!r.contains("transfer-encoding"), "{r}");
            if r.contains("WARC-Type: response") {
                assert!(
                    r.contains("HTTP/1.1 200 \r\ncontent-type: text/html"),
                    "{r}"
                );
            } else {
                assert!(r.contains("Content-Type: text/html; charset=utf-8"), "{r}");
            }
        }
        testkit::warcio::warcio_check(&files[0], "a body segment");
    }
}

/// The records of a segment's bytes, one a gzip member.
fn members(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut records = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let mut gz = flate2::bufread::GzDecoder::new(rest);
        let mut one = Vec::new();
        std::io::Read::read_to_end(&mut gz, &mut one).unwrap();
        rest = gz.into_inner();
        records.push(one);
    }
    records
}

/// A segment of more records than one commit statement points at (500) and than one read
/// of the database takes (64), encoded in parts on every core: each row points at its own
/// record, in hash order, and reads back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segment_of_many_records_points_each_row_at_its_own() {
    let stores = Stores::start().await;
    for db in databases("a_segment_of_many_records").await {
        let storage = stores.settings(&format!("many-{}", db.kind())).remove(0);
        let s = db.store.clone().with_storage(&storage).unwrap();
        let mut bodies = Vec::new();
        for i in 0..1_100 {
            let body = page(i, 60);
            store_page(&s, i, &body, None).await;
            bodies.push((sha(&body), body));
        }
        let report = s.move_bodies_to_store(None).await.unwrap();
        assert_eq!((report.bodies, report.segments), (1_100, 1), "{report:?}");
        assert!(report.refused.is_empty());
        assert_eq!(
            db.scalar("SELECT COUNT(DISTINCT segment_offset) FROM snapshot_bodies")
                .await,
            1_100
        );
        // Records follow the rows' hash order.
        let out_of_order = "SELECT COUNT(*) FROM (SELECT segment_offset, \
             LAG(segment_offset) OVER (ORDER BY sha256) AS previous FROM snapshot_bodies) t \
             WHERE previous >= segment_offset";
        assert_eq!(db.scalar(out_of_order).await, 0);
        every_pointer_resolves(&s, &bodies).await;
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_read_back_after_migrating_both_ways() {
    let stores = Stores::start().await;
    for db in databases("bodies_read_back_after_migrating_both_ways").await {
        for storage in stores.settings(&format!("both-ways-{}", db.kind())) {
            reset(&db).await;
            let s = db.store.clone().with_storage(&storage).unwrap();
            let bodies = fill(&s, 9, 2000).await;
            // In steps, as a migration cut off and resumed would go.
            let first = s.move_bodies_to_store(Some(5)).await.unwrap();
            assert_eq!(first.bodies, 5);
            assert_eq!(s.body_totals().await.unwrap().db_bodies, 7);
            let rest = s.move_bodies_to_store(None).await.unwrap();
            assert_eq!(rest.bodies, 7);
            assert_eq!(s.body_totals().await.unwrap().segments, 2);
            every_pointer_resolves(&s, &bodies).await;

            let back = s.move_bodies_to_db(Some(3)).await.unwrap();
            assert_eq!(back.bodies, 3);
            let back = s.move_bodies_to_db(None).await.unwrap();
            assert_eq!(back.bodies, 9);
            // Both segments emptied, so deleted, rows and objects.
            assert_eq!(back.segments, 2, "{back:?}");
            let totals = s.body_totals().await.unwrap();
            assert_eq!(
                (totals.db_bodies, totals.store_bodies, totals.segments),
                (12, 0, 0)
            );
            for (sha, bytes) in &bodies {
                let (read_back, from_segment) = read(&s, sha).await;
                assert!(!from_segment);
                assert_eq!(&read_back, bytes);
            }
            // The database alone reads them again.
            every_pointer_resolves(&db.store, &bodies).await;
            if let Some(root) = storage.bodies.strip_prefix("file://") {
                let left: Vec<_> = walk(std::path::Path::new(root))
                    .into_iter()
                    .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
                    .collect();
                assert!(left.is_empty(), "{left:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_killed_before_its_commit_leaves_only_pointers_to_what_exists() {
    let stores = Stores::start().await;
    for db in databases("a_writer_killed_before_its_commit").await {
        for storage in stores.settings(&format!("killed-{}", db.kind())) {
            reset(&db).await;
            let s = db.store.clone().with_storage(&storage).unwrap();
            let bodies = fill(&s, 6, 1000).await;

            // Killed after writing the records to its spool file, before the upload.
            let mut writer = s.segment_writer().unwrap();
            assert_eq!(writer.fill(None).await.unwrap(), 8);
            drop(writer);
            let totals = s.body_totals().await.unwrap();
            assert_eq!((totals.db_bodies, totals.store_bodies), (8, 0));
            every_pointer_resolves(&s, &bodies).await;

            // Killed after the upload, before the rows point at it: the object is there,
            // nothing points at it, its row says `uploading`.
            let mut writer = s.segment_writer().unwrap();
            writer.fill(None).await.unwrap();
            let uploaded = writer.upload().await.unwrap().unwrap();
            let orphan = uploaded.key().to_owned();
            drop(uploaded);
            let totals = s.body_totals().await.unwrap();
            assert_eq!(
                (totals.db_bodies, totals.store_bodies, totals.segments),
                (8, 0, 0)
            );
            every_pointer_resolves(&s, &bodies).await;
            let uploading: i64 = count(
                &db,
                &format!("SELECT COUNT(*) FROM body_segments WHERE state = 'uploading' AND key = '{orphan}'"),
            )
            .await;
            assert_eq!(uploading, 1);

            // The next writer takes the bodies again; every row then points at a segment
            // that reads back.
            let report = s.move_bodies_to_store(None).await.unwrap();
            assert_eq!(report.bodies, 8);
            every_pointer_resolves(&s, &bodies).await;
            let pointing_at_orphan = count(
                &db,
                &format!(
                    "SELECT COUNT(*) FROM snapshot_bodies b JOIN body_segments g \
                     ON g.id = b.segment_id WHERE g.key = '{orphan}' OR g.state <> 'sealed'"
                ),
            )
            .await;
            assert_eq!(pointing_at_orphan, 0);
            // The spool folder holds no file of a dropped writer.
            let spooled = std::fs::read_dir(&storage.spool_dir).unwrap().count();
            assert_eq!(spooled, 0);
        }
    }
}

async fn count(db: &TestDb, sql: &str) -> i64 {
    db.scalar(sql).await
}

/// An S3 endpoint where nothing listens.
fn down_store(spool: &std::path::Path) -> StorageSettings {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    StorageSettings {
        bodies: "s3://down/bodies".into(),
        endpoint: format!("http://127.0.0.1:{port}"),
        allow_http: true,
        access_key_id: Some(bounds::Secret::new("key")),
        secret_access_key: Some(bounds::Secret::new("secret")),
        spool_dir: spool.to_owned(),
        ..StorageSettings::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_is_down_fails_the_move_and_loses_nothing() {
    let stores = Stores::start().await;
    for db in databases("a_store_that_is_down").await {
        reset(&db).await;
        let spool = stores.dir.path().join("spool-down");
        let down = db.store.clone().with_storage(&down_store(&spool)).unwrap();
        let bodies = fill(&down, 4, 800).await;

        // To the store: refused, the bodies stay in the database and read back.
        let err = down.move_bodies_to_store(None).await.unwrap_err();
        assert!(matches!(err, store::Error::ObjectStore(_)), "{err}");
        assert!(down.write_due_segments().await.is_err());
        assert_eq!(down.body_totals().await.unwrap().store_bodies, 0);
        every_pointer_resolves(&down, &bodies).await;
        assert!(down.body_store().unwrap().probe().await.is_err());

        // Up again: the same move goes through.
        let up_settings = stores.settings(&format!("down-{}", db.kind())).remove(0);
        let up = db.store.clone().with_storage(&up_settings).unwrap();
        assert_eq!(up.move_bodies_to_store(None).await.unwrap().bodies, 6);
        up.body_store().unwrap().probe().await.unwrap();

        // Back to the database while the store is down: an error, nothing moved, and
        // every body is where its row says.
        if let Some(s3) = &stores.s3 {
            let mut s3_settings = s3.storage(&format!("down-back-{}", db.kind()), &spool);
            s3_settings.segment_bytes = 1 << 20;
            let on_s3 = db.store.clone().with_storage(&s3_settings).unwrap();
            // Move them from the folder into the database, then onto S3.
            up.move_bodies_to_db(None).await.unwrap();
            assert_eq!(on_s3.move_bodies_to_store(None).await.unwrap().bodies, 6);
            let mut broken = s3_settings.clone();
            broken.endpoint = down_store(&spool).endpoint;
            let cut_off = db.store.clone().with_storage(&broken).unwrap();
            let err = cut_off.move_bodies_to_db(None).await.unwrap_err();
            assert!(matches!(err, store::Error::ObjectStore(_)), "{err}");
            assert_eq!(on_s3.body_totals().await.unwrap().store_bodies, 6);
            every_pointer_resolves(&on_s3, &bodies).await;
            assert_eq!(on_s3.move_bodies_to_db(None).await.unwrap().bodies, 6);
            every_pointer_resolves(&db.store, &bodies).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_roll_at_their_size_and_the_rest_waits_for_their_age() {
    let stores = Stores::start().await;
    for db in databases("segments_roll_at_their_size").await {
        for mut storage in stores.settings(&format!("roll-{}", db.kind())) {
            reset(&db).await;
            storage.segment_bytes = 1 << 20;
            let s = db.store.clone().with_storage(&storage).unwrap();
            // Bodies that do not compress: 10 of 300 KB make about 3 MB of records, and one
            // of 17 MiB goes up in parts (past 16 MiB).
            let mut bodies = Vec::new();
            for n in 0..10 {
                let body: Vec<u8> = (0..300_000).map(|_| fastrand::u8(..)).collect();
                store_page(&s, n, &body, None).await;
                bodies.push((sha(&body), body));
            }
            let big: Vec<u8> = (0..17 << 20).map(|_| fastrand::u8(..)).collect();
            store_page(&s, 99, &big, None).await;
            bodies.push((sha(&big), big));

            // Many segments' worth wait: the schedule's job writes every full one.
            let report = s.write_due_segments().await.unwrap();
            assert!(report.segments >= 2, "{report:?}");
            let totals = s.body_totals().await.unwrap();
            assert!(totals.db_bytes < 1 << 20, "{totals:?}");
            // The rest waits for segment_age since the last segment, then goes too.
            if totals.db_bodies > 0 {
                assert!(!s.segment_due().await.unwrap());
                db.execute("UPDATE body_segments SET created_at = 0").await;
                assert!(s.segment_due().await.unwrap());
                s.write_due_segments().await.unwrap();
            }
            let totals = s.body_totals().await.unwrap();
            assert_eq!((totals.db_bodies, totals.store_bodies), (0, 11));
            // No segment much past its size but the one holding the big body.
            let oversized = count(
                &db,
                "SELECT COUNT(*) FROM body_segments WHERE bytes > 1400000",
            )
            .await;
            assert_eq!(oversized, 1);
            every_pointer_resolves(&s, &bodies).await;
        }
    }
}

/// A PNG-like blob (every byte value, NULs too), distinct per `n`.
fn png(n: u8, len: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(n)));
    bytes
}

/// Stores a render of snapshot `snapshot` with `shot` as its screenshot.
async fn render_with(s: &Store, snapshot: store::SnapshotId, shot: &[u8]) {
    use store::Renders;
    s.insert_render(&store::NewRender {
        snapshot,
        final_url: format!("http://盗版.example/{snapshot}.html"),
        html_zstd: zstd::bulk::compress(b"<html></html>", 3).unwrap(),
        html_len: 13,
        text: "正文".into(),
        screenshot: Some(store::NewScreenshot {
            sha256: sha(shot),
            png: shot.to_vec(),
            width: 1280,
            height: 4000,
        }),
        rendered_at: chrono::Utc::now(),
        timed_out: false,
        requests: 3,
        refused: 0,
    })
    .await
    .unwrap();
}

/// The snapshot of page `n` (stored by `store_page`).
async fn snapshot_of(db: &TestDb, n: usize) -> store::SnapshotId {
    store::SnapshotId(
        db.scalar(&format!(
            "SELECT MIN(id) FROM snapshots WHERE url = 'http://盗版.example/{n}.html'"
        ))
        .await,
    )
}

/// Screenshots in segments (not in the database).
async fn screenshots_in_segments(db: &TestDb) -> i64 {
    db.scalar(
        "SELECT COUNT(*) FROM screenshots WHERE segment_id IS NOT NULL \
         AND segment_offset IS NOT NULL AND segment_length IS NOT NULL",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_go_to_the_store_with_the_bodies_and_back() {
    use store::Renders;
    let stores = Stores::start().await;
    for db in databases("screenshots_go_to_the_store").await {
        for storage in stores.settings(&format!("shots-{}", db.kind())) {
            db.execute("DELETE FROM renders").await;
            db.execute("DELETE FROM screenshots").await;
            reset(&db).await;
            let s = db.store.clone().with_storage(&storage).unwrap();
            let bodies = fill(&s, 3, 1000).await;
            let shots: Vec<Vec<u8>> = (0..3).map(|n| png(n, 5000 + usize::from(n))).collect();
            // Page 0 rendered twice with the same screenshot (stored once), pages 1 and 2
            // with one each.
            render_with(&s, snapshot_of(&db, 0).await, &shots[0]).await;
            render_with(&s, snapshot_of(&db, 0).await, &shots[0]).await;
            render_with(&s, snapshot_of(&db, 1).await, &shots[1]).await;
            render_with(&s, snapshot_of(&db, 2).await, &shots[2]).await;
            let shot_bytes: u64 = shots.iter().map(|p| p.len() as u64).sum();
            let before = s.body_totals().await.unwrap();
            assert_eq!(
                (
                    before.screenshots,
                    before.screenshot_bytes,
                    before.store_screenshots
                ),
                (3, shot_bytes, 0)
            );

            // In steps, as a migration cut off and resumed goes: 4 bodies, then the rest
            // (and the screenshots, after the bodies).
            let first = s.move_bodies_to_store(Some(4)).await.unwrap();
            assert_eq!((first.bodies, first.screenshots), (4, 0), "{first:?}");
            let rest = s.move_bodies_to_store(None).await.unwrap();
            assert_eq!(
                (rest.bodies, rest.screenshots, rest.screenshot_bytes),
                (0, 3, shot_bytes),
                "{}: {rest:?}",
                storage.bodies
            );
            assert!(rest.refused.is_empty());
            let after = s.body_totals().await.unwrap();
            assert_eq!(
                (
                    after.screenshots,
                    after.store_screenshots,
                    after.store_screenshot_bytes
                ),
                (0, 3, shot_bytes)
            );
            assert_eq!(screenshots_in_segments(&db).await, 3);
            // The database keeps no copy.
            assert_eq!(
                db.scalar("SELECT COUNT(*) FROM screenshots WHERE LENGTH(png) > 0")
                    .await,
                0
            );
            // Read back byte for byte, by the render that names them too.
            for shot in &shots {
                assert_eq!(&s.screenshot_png(&sha(shot)).await.unwrap().unwrap(), shot);
            }
            let newest = s
                .latest_screenshot(snapshot_of(&db, 1).await)
                .await
                .unwrap()
                .unwrap()
                .screenshot
                .unwrap();
            assert_eq!(newest.bytes, shots[1].len() as u64);
            assert_eq!(
                s.screenshot_png(&newest.sha256).await.unwrap().unwrap(),
                shots[1]
            );
            assert!(!s.segment_due().await.unwrap());
            every_pointer_resolves(&s, &bodies).await;
            // A store without the object store cannot read them, and says why.
            let err = db.store.screenshot_png(&sha(&shots[0])).await.unwrap_err();
            assert!(err.to_string().contains("[storage] bodies"), "{err}");

            // Back into the database, in steps.
            let back = s.move_bodies_to_db(Some(5)).await.unwrap();
            assert_eq!(back.bodies + back.screenshots, 5, "{back:?}");
            let back = s.move_bodies_to_db(None).await.unwrap();
            let totals = s.body_totals().await.unwrap();
            assert_eq!(
                (
                    totals.screenshots,
                    totals.store_screenshots,
                    totals.segments
                ),
                (3, 0, 0),
                "{back:?}"
            );
            assert_eq!(screenshots_in_segments(&db).await, 0);
            for shot in &shots {
                assert_eq!(
                    &db.store.screenshot_png(&sha(shot)).await.unwrap().unwrap(),
                    shot
                );
            }
            every_pointer_resolves(&db.store, &bodies).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_is_a_png_resource_record_and_its_row_follows_the_upload() {
    use store::Renders;
    let stores = Stores::start().await;
    for db in databases("a_screenshot_is_a_png_resource_record").await {
        for storage in stores.settings(&format!("shot-record-{}", db.kind())) {
            db.execute("DELETE FROM renders").await;
            db.execute("DELETE FROM screenshots").await;
            reset(&db).await;
            let s = db.store.clone().with_storage(&storage).unwrap();
            fill(&s, 1, 500).await;
            let shot = png(7, 3000);
            render_with(&s, snapshot_of(&db, 0).await, &shot).await;
            // A damaged screenshot row (its bytes do not hash to it) stays where it is.
            let damaged = png(8, 100);
            render_with(&s, snapshot_of(&db, 0).await, &damaged).await;
            db.execute(&format!(
                "UPDATE screenshots SET png = {} WHERE bytes = 108",
                store::testing::BulkSql(db.kind()).bytes("5")
            ))
            .await;

            // Killed after the upload, before the rows point at it: the screenshot is
            // still read from the database.
            let mut writer = s.segment_writer().unwrap();
            // Page 0 was served coded: two bodies, and the screenshot.
            assert_eq!(writer.fill(None).await.unwrap(), 3);
            let uploaded = writer.upload().await.unwrap().unwrap();
            drop(uploaded);
            assert_eq!(screenshots_in_segments(&db).await, 0);
            assert_eq!(s.screenshot_png(&sha(&shot)).await.unwrap().unwrap(), shot);

            let moved = s.move_bodies_to_store(None).await.unwrap();
            assert_eq!((moved.bodies, moved.screenshots), (2, 1), "{moved:?}");
            assert_eq!(moved.refused.len(), 1, "{moved:?}");
            assert!(moved.refused[0].starts_with(&hex(&sha(&damaged))));
            assert_eq!(s.screenshot_png(&sha(&shot)).await.unwrap().unwrap(), shot);
            if let Some(root) = storage.bodies.strip_prefix("file://") {
                // Two objects hold it: the upload whose commit never came, and the segment.
                let mut pngs = 0;
                for file in walk(std::path::Path::new(root)) {
                    for one in members(&std::fs::read(&file).unwrap()) {
                        let text = String::from_utf8_lossy(&one);
                        if !text.contains("Content-Type: image/png\r\n") {
                            continue;
                        }
                        pngs += 1;
                        assert!(text.contains("WARC-Type: resource\r\n"), "{text}");
                        // Its own URI: under the page's, replay would show it as the page.
                        assert!(
                            text.contains("WARC-Target-URI: urn:view:http://盗版.example/"),
                            "{text}"
                        );
                        assert!(one.ends_with(&[&shot[..], b"\r\n\r\n"].concat()));
                    }
                    testkit::warcio::warcio_check(&file, "a segment with a screenshot");
                }
                assert_eq!(pngs, 2);
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bodies moved out of the database give their bytes back once the database is compacted
/// (`Store::compact`), on both backends: what `bench pipeline` reports as bytes a page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compacting_after_a_move_gives_the_bodies_bytes_back() {
    let stores = Stores::start().await;
    for db in databases("compacting_after_a_move").await {
        let storage = stores.settings(&format!("compact-{}", db.kind())).remove(0);
        let s = db.store.clone().with_storage(&storage).unwrap();
        // Bytes zstd cannot shrink: 300 bodies of 8 KB, 2.4 MB in the database.
        let mut stored = 0;
        for i in 0..300u32 {
            let body: Vec<u8> = (0..256u32)
                .flat_map(|j| sha(&[i.to_le_bytes(), j.to_le_bytes()].concat()))
                .collect();
            stored += body.len() as u64;
            store_page(&s, i as usize, &body, None).await;
        }
        s.compact().await.unwrap();
        let before = s.database_bytes().await.unwrap();
        assert_eq!(s.move_bodies_to_store(None).await.unwrap().bodies, 300);
        s.compact().await.unwrap();
        let after = s.database_bytes().await.unwrap();
        assert!(
            before.saturating_sub(after) >= stored * 8 / 10,
            "{}: {before} bytes before the move, {after} after; {stored} moved",
            db.kind()
        );
    }
}
