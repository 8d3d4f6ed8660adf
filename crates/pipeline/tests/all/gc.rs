//! Retention (issue #30 point 3) seen from a case, on both backends: the evidence package of
//! a case reads the same before and after `gc` removed the unmatched pages around it, with
//! its body in a segment that gc compacts (rewritten into a new segment); and the daily
//! `retention-gc` schedule and its job.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use store::testing::TestDb;
use store::{
    JobFilter, JobQueue, JobStatus, NewJob, Page, RetentionSettings, Schedules, StorageSettings,
    WorkerSettings,
};

use crate::common;

/// Every file of a package by its path; the WARC file as its records without the
/// `warcinfo` (which carries the time of writing) and the references to it; the manifest
/// without `written_at` and the WARC file's digest.
fn package_contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let bytes = match name.as_str() {
                "case.warc.gz" => warc_records(&bytes),
                "manifest.json" => {
                    let mut manifest: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                    manifest.as_object_mut().unwrap().remove("written_at");
                    manifest["files"]
                        .as_array_mut()
                        .unwrap()
                        .retain(|f| f["path"] != "case.warc.gz");
                    serde_json::to_vec_pretty(&manifest).unwrap()
                }
                _ => bytes,
            };
            out.insert(name, bytes);
        }
    }
    out
}

fn warc_records(gz: &[u8]) -> Vec<u8> {
    let mut all = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(gz), &mut all).unwrap();
    let text = String::from_utf8_lossy(&all);
    let records: Vec<String> = text
        .split("WARC/1.1\r\n")
        .filter(|r| !r.is_empty() && !r.contains("WARC-Type: warcinfo"))
        .map(|r| {
            r.lines()
                .filter(|l| !l.starts_with("WARC-Warcinfo-ID:"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert!(records.len() >= 2, "a request and a response at least");
    records.join("\u{0}").into_bytes()
}

async fn package_is_the_same_after_gc(db: &TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let s = db
        .store
        .clone()
        .with_storage(&StorageSettings {
            bodies: format!("file://{}", dir.path().join("bodies").display()),
            spool_dir: dir.path().join("spool"),
            ..StorageSettings::default()
        })
        .unwrap();
    let case = common::confirmed_case(&s, "https://盗版.example/2.html").await;
    // Unmatched pages around it, larger than the case's, so that their segment is mostly
    // dead after gc and is compacted.
    for n in 0..6 {
        // Characters drawn by a small LCG: text that gzip cannot shrink much.
        let mut x: u32 = 2_654_435_761u32.wrapping_mul(n + 1);
        let text: String = (0..20_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from_u32(0x4e00 + (x >> 16) % 0x5000).unwrap()
            })
            .collect();
        common::stored_page(&s, &format!("https://盗版.example/other-{n}.html"), &text).await;
    }
    // All fetched forty days ago: past `unmatched`, within `evidence`.
    let old = store::testing::BulkSql(db.kind()).time(
        &(chrono::Utc::now() - chrono::Duration::days(40))
            .timestamp()
            .to_string(),
    );
    db.execute(&format!("UPDATE snapshots SET fetched_at = {old}"))
        .await;
    let moved = s.move_bodies_to_store(None).await.unwrap();
    assert_eq!(moved.segments, 1);

    let before = dir.path().join("before");
    evidence::write_package(&s, case, &before, false)
        .await
        .unwrap();
    let report = s.gc(&RetentionSettings::default(), false).await.unwrap();
    assert_eq!(report.bodies, 6, "{report:?}");
    assert_eq!(report.segments_compacted, 1, "{report:?}");
    assert_eq!(report.bodies_rewritten, 1, "{report:?}");
    let after = dir.path().join("after");
    evidence::write_package(&s, case, &after, false)
        .await
        .unwrap();
    let (before, after) = (package_contents(&before), package_contents(&after));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &before {
        assert!(after[name] == *bytes, "{name} differs after gc");
    }
    // The zip a notice attaches reads it back too.
    assert!(!evidence::package_zip(&s, case).await.unwrap().is_empty());
}

async fn the_daily_job_removes_expired_bodies(db: &TestDb) {
    let store = &db.store;
    evidence::bodies::ensure_gc_schedule(store).await.unwrap();
    let schedules = store.schedules().await.unwrap();
    let gc = schedules
        .iter()
        .find(|s| s.name == evidence::bodies::GC_SCHEDULE)
        .expect("the retention-gc schedule");
    assert_eq!(gc.cron, evidence::bodies::GC_CRON);

    let old = chrono::Utc::now() - chrono::Duration::days(40);
    let body = "一页没有匹配的正文".repeat(50);
    let id = common::stored_page(store, "https://盗版.example/x.html", &body).await;
    let at = store::testing::BulkSql(db.kind()).time(&old.timestamp().to_string());
    db.execute(&format!(
        "UPDATE snapshots SET fetched_at = {at} WHERE id = {id}"
    ))
    .await;
    store
        .enqueue(&NewJob::new(&jobs::Job::Gc).unwrap())
        .await
        .unwrap();
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let settings = WorkerSettings {
        poll_interval: Duration::from_millis(20),
        run_schedules: false,
        ..WorkerSettings::default()
    };
    let worker = pipeline::serve(store, common::handler(store), settings, stop_rx);
    store::testing::wait_for("the gc job done", Duration::from_secs(120), async || {
        let jobs = store
            .jobs(&JobFilter::Kind("Gc".into()), Page::all())
            .await
            .unwrap();
        jobs.iter().any(|j| j.status == JobStatus::Done)
    })
    .await;
    let _ = stop.send(true);
    worker.await.unwrap();
    let snapshot = store::EvidenceReads::snapshot(store, id).await.unwrap();
    assert!(snapshot.body_removed_at.is_some());
    assert!(
        store::EvidenceReads::body(store, &snapshot.sha256)
            .await
            .unwrap()
            .is_none()
    );
}

store::on_both_backends!(
    package_is_the_same_after_gc,
    the_daily_job_removes_expired_bodies
);
