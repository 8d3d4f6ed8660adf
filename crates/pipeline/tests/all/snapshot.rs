//! Index snapshots on both backends (issue #31 point 2): written from the store and loaded
//! back, they answer pages with the same candidates as an index loaded from the store; works
//! added and removed after one are replayed from the change log; a truncated, damaged or
//! foreign-version snapshot is refused with its reason and the index comes from the store;
//! the object store of `[storage]` (a folder, and S3) holds them under `snapshots/`.

use crate::common;

use std::sync::Arc;

use detection::{IndexOrigin, LiveIndex, SnapshotPlace, write_snapshot};
use fingerprint::{FingerprintSettings, Fingerprinter};
use matcher::MatcherSettings;
use store::testing::TestDb;
use store::{WorkChanges, WorkWrites};

use common::import;

/// 老残游记 1–2.
const FIRST: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");
/// 封神演义 1–3 (traditional).
const LATER: &str = include_str!("../../../import/tests/data/fengshenyanyi_hant_1-3.txt");

fn fingerprinter() -> Arc<Fingerprinter> {
    Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap())
}

/// Pages: each chapter of both works (封神演义 in simplified script with an ad, as a
/// pirate copies it), two chapters merged, and a text copying neither.
fn pages() -> Vec<String> {
    let mut pages = Vec::new();
    for (text, marks) in [
        (FIRST, &["第一回", "第二回"][..]),
        (LATER, &["第一回", "第二回", "第三回"][..]),
    ] {
        let starts: Vec<usize> = marks.iter().map(|m| text.rfind(m).unwrap()).collect();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(text.len());
            let chapter = zhconv::zhconv(&text[start..end], zhconv::Variant::ZhHans);
            pages.push(format!("【本站首发】最新章节请访问！\n{chapter}"));
        }
    }
    let merged = format!("{}{}", pages[0], pages[3]);
    pages.push(merged);
    pages.push("今天天气很好，我们一起去公园散步吧，然后去吃饭，再回家看书。".repeat(20));
    pages
}

/// What the index proposes for a page, without the index's own keys (which differ between
/// an index that replayed removals and one built afresh): chapter, work, length, evidence.
fn candidates(live: &LiveIndex, page: &str) -> Vec<(i64, i64, usize, matcher::Evidence)> {
    let matcher = live.matcher();
    matcher
        .candidates(&matcher.page(page))
        .unwrap()
        .into_iter()
        .map(|c| (c.chapter.0, c.work.0, c.chapter_chars, c.evidence))
        .collect()
}

/// Every page gets the same candidates from both indexes; returns how many pages had any.
fn same_candidates(a: &LiveIndex, b: &LiveIndex) -> usize {
    let mut found = 0;
    for page in pages() {
        let (x, y) = (candidates(a, &page), candidates(b, &page));
        assert_eq!(x, y, "{}", &page[..60.min(page.len())]);
        found += usize::from(!x.is_empty());
    }
    found
}

fn works_found(live: &LiveIndex, page: &str) -> Vec<i64> {
    let mut works: Vec<i64> = candidates(live, page).iter().map(|c| c.1).collect();
    works.sort_unstable();
    works.dedup();
    works
}

async fn round_trip_and_replay(db: &TestDb) {
    let store = &db.store;
    let settings = MatcherSettings::default();
    let first = import(store, "老残游记.txt", FIRST).await;
    let dir = tempfile::tempdir().unwrap();
    let place = SnapshotPlace::Path(dir.path().to_owned());
    let written = write_snapshot(store, settings.clone(), fingerprinter(), &place)
        .await
        .unwrap();
    assert_eq!(written.position, store.last_change().await.unwrap());
    assert!(written.chapters >= 2, "{written:?}");
    assert_eq!(written.skipped, 0);
    let file = std::path::Path::new(&written.location);
    assert_eq!(file.parent(), Some(dir.path()));
    assert_eq!(std::fs::metadata(file).unwrap().len(), written.bytes);
    // Nothing but the snapshot in the folder: the temporary file was renamed.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    let from_store = LiveIndex::load(store, settings.clone(), fingerprinter())
        .await
        .unwrap();
    let from_snapshot =
        LiveIndex::load_from(store, settings.clone(), fingerprinter(), Some(&place))
            .await
            .unwrap();
    assert_eq!(
        from_snapshot.origin,
        IndexOrigin::Snapshot {
            location: written.location.clone(),
            position: written.position,
            replayed: 0
        }
    );
    assert_eq!(from_snapshot.loaded.chapters, written.chapters);
    assert_eq!(from_store.origin, IndexOrigin::Store { refused: None });
    assert_eq!(same_candidates(&from_store, &from_snapshot), 3);
    // The keys too: the snapshot is the index as it was built.
    let page = &pages()[1];
    let keys = |live: &LiveIndex| -> Vec<usize> {
        let m = live.matcher();
        let c = m.candidates(&m.page(page)).unwrap();
        c.iter().map(|c| c.key.index()).collect()
    };
    assert_eq!(keys(&from_snapshot), keys(&from_store));

    // A work added and one removed after the snapshot: replayed from its position.
    let later = import(store, "封神演义.txt", LATER).await;
    store.delete_work(first).await.unwrap();
    let replayed = LiveIndex::load_from(store, settings.clone(), fingerprinter(), Some(&place))
        .await
        .unwrap();
    assert_eq!(
        replayed.origin,
        IndexOrigin::Snapshot {
            location: written.location.clone(),
            position: written.position,
            replayed: 2
        }
    );
    assert_eq!(replayed.changes_applied(), 2);
    let now = LiveIndex::load(store, settings.clone(), fingerprinter())
        .await
        .unwrap();
    assert_eq!(replayed.loaded.chapters, now.matcher().index().len());
    assert_eq!(same_candidates(&now, &replayed), 4);
    let pages = pages();
    assert_eq!(works_found(&replayed, &pages[3]), vec![later.0]);
    assert!(works_found(&replayed, &pages[0]).is_empty());
    // The newest snapshot is the one loaded: written now, it needs no replay.
    let newer = write_snapshot(store, settings.clone(), fingerprinter(), &place)
        .await
        .unwrap();
    assert!(newer.position > written.position);
    let latest = LiveIndex::load_from(store, settings, fingerprinter(), Some(&place))
        .await
        .unwrap();
    assert_eq!(
        latest.origin,
        IndexOrigin::Snapshot {
            location: newer.location,
            position: newer.position,
            replayed: 0
        }
    );
    assert_eq!(same_candidates(&now, &latest), 4);
}

/// The index loaded with the snapshot file `path`, which must be refused, and the reason.
async fn refused_load(
    store: &store::Store,
    settings: &MatcherSettings,
    path: &std::path::Path,
) -> (LiveIndex, String) {
    let place = SnapshotPlace::Path(path.to_owned());
    let live = LiveIndex::load_from(store, settings.clone(), fingerprinter(), Some(&place))
        .await
        .unwrap();
    match &live.origin {
        IndexOrigin::Store {
            refused: Some(refused),
        } => {
            let refused = refused.clone();
            (live, refused)
        }
        other => panic!("{}: {other:?}", path.display()),
    }
}

async fn damaged_snapshots_are_refused(db: &TestDb) {
    let store = &db.store;
    let settings = MatcherSettings::default();
    import(store, "封神演义.txt", LATER).await;
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.snap");
    write_snapshot(
        store,
        settings.clone(),
        fingerprinter(),
        &SnapshotPlace::Path(good.clone()),
    )
    .await
    .unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let from_store = LiveIndex::load(store, settings.clone(), fingerprinter())
        .await
        .unwrap();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x01;
    let mut version = bytes.clone();
    version[8..12].copy_from_slice(&99u32.to_le_bytes());
    let mut text_sample = settings.clone();
    text_sample.index.text_sample = 3;
    let cases = [
        (
            "truncated.snap",
            bytes[..bytes.len() / 2].to_vec(),
            "truncated: ",
        ),
        (
            "flipped.snap",
            flipped,
            "damaged: its contents do not hash to the SHA-256",
        ),
        (
            "version.snap",
            version,
            "format version 99, but this build reads version 1",
        ),
        ("empty.snap", Vec::new(), "truncated: 0 bytes"),
    ];
    for (name, damaged, reason) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &damaged).unwrap();
        let (live, refused) = refused_load(store, &settings, &path).await;
        assert!(
            refused.starts_with(&format!("index snapshot {} refused: ", path.display())),
            "{refused}"
        );
        assert!(refused.contains(reason), "{name}: {refused}");
        // Loaded from the store instead.
        assert_eq!(live.loaded.chapters, from_store.loaded.chapters);
        assert_eq!(same_candidates(&from_store, &live), 4);
    }
    // A good snapshot of other index settings is refused as well, saying which.
    let (_, refused) = refused_load(store, &text_sample, &good).await;
    assert!(
        refused.contains("text_sample 2 in the snapshot, 3 configured"),
        "{refused}"
    );
    // No snapshot at all: the store, and nothing refused.
    let missing = SnapshotPlace::Path(dir.path().join("none"));
    let live = LiveIndex::load_from(store, settings, fingerprinter(), Some(&missing))
        .await
        .unwrap();
    assert_eq!(live.origin, IndexOrigin::Store { refused: None });
    assert_eq!(live.loaded.chapters, from_store.loaded.chapters);
}

/// Written to and read from `snapshots/` of the object store `storage` names (`auto`).
async fn on_an_object_store(db: &TestDb, storage: store::StorageSettings) {
    let store = &db.store;
    let settings = MatcherSettings::default();
    import(store, "封神演义.txt", LATER).await;
    let place = SnapshotPlace::parse("auto", &storage).unwrap().unwrap();
    // None yet (a first start): the store, nothing refused.
    let first = LiveIndex::load_from(store, settings.clone(), fingerprinter(), Some(&place))
        .await
        .unwrap();
    assert_eq!(first.origin, IndexOrigin::Store { refused: None });
    let written = write_snapshot(store, settings.clone(), fingerprinter(), &place)
        .await
        .unwrap();
    let prefix = format!("{}/snapshots/index-", storage.bodies.trim_end_matches('/'));
    assert!(written.location.starts_with(&prefix), "{written:?}");
    let live = LiveIndex::load_from(store, settings.clone(), fingerprinter(), Some(&place))
        .await
        .unwrap();
    assert!(
        matches!(&live.origin, IndexOrigin::Snapshot { location, replayed: 0, .. } if *location == written.location),
        "{:?}",
        live.origin
    );
    let from_store = LiveIndex::load(store, settings, fingerprinter())
        .await
        .unwrap();
    assert_eq!(same_candidates(&from_store, &live), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_round_trip_and_replay_on_sqlite() {
    let Some(db) = store::testing::sqlite("snapshot_replay_sqlite").await else {
        return;
    };
    round_trip_and_replay(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_round_trip_and_replay_on_postgres() {
    let Some(db) = store::testing::postgres("snapshot_replay_postgres").await else {
        return;
    };
    round_trip_and_replay(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_snapshots_are_refused_on_sqlite() {
    let Some(db) = store::testing::sqlite("snapshot_refused_sqlite").await else {
        return;
    };
    damaged_snapshots_are_refused(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_snapshots_are_refused_on_postgres() {
    let Some(db) = store::testing::postgres("snapshot_refused_postgres").await else {
        return;
    };
    damaged_snapshots_are_refused(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_on_a_folder_store_on_sqlite() {
    let Some(db) = store::testing::sqlite("snapshot_folder_sqlite").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let storage = store::StorageSettings {
        bodies: format!("file://{}", dir.path().display()),
        ..store::StorageSettings::default()
    };
    on_an_object_store(&db, storage).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_on_s3_on_postgres() {
    let Some(db) = store::testing::postgres("snapshot_s3_postgres").await else {
        return;
    };
    let Some(s3) = store::testing::S3Server::start().await else {
        return;
    };
    let spool = tempfile::tempdir().unwrap();
    on_an_object_store(&db, s3.storage("copyhound", spool.path())).await;
}

/// Batch mode over the store (issue #31 point 4): streaming every stored chapter past a
/// batch of the pages gives each page the candidates of an index loaded from the store, and
/// a deleted work is no longer streamed.
async fn batch_streams_the_stored_chapters(db: &TestDb) {
    let store = &db.store;
    let settings = MatcherSettings::default();
    import(store, "老残游记.txt", FIRST).await;
    let later = import(store, "封神演义.txt", LATER).await;
    for deleted in [false, true] {
        if deleted {
            store.delete_work(later).await.unwrap();
        }
        let live = LiveIndex::load(store, settings.clone(), fingerprinter())
            .await
            .unwrap();
        let texts = pages();
        let (mut batch, chapters) = {
            let matcher = live.matcher();
            let pages: Vec<_> = texts.iter().map(|t| matcher.page(t)).collect();
            (matcher.batch(&pages).unwrap(), matcher.index().len())
        };
        let report = detection::stream_chapters(store, bounds::Shard::ALL, &mut batch)
            .await
            .unwrap();
        assert_eq!(report.chapters, chapters);
        assert_eq!(report.skipped, 0);
        let mut found = 0;
        for (text, batched) in texts.iter().zip(batch.finish()) {
            let batched: Vec<_> = batched
                .into_iter()
                .map(|c| (c.chapter.0, c.work.0, c.chapter_chars, c.evidence))
                .collect();
            assert_eq!(
                batched,
                candidates(&live, text),
                "{}",
                &text[..60.min(text.len())]
            );
            assert!(batched.iter().all(|c| !deleted || c.1 != later.0));
            found += usize::from(!batched.is_empty());
        }
        assert_eq!(found, if deleted { 3 } else { 6 }, "deleted: {deleted}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_streams_the_stored_chapters_on_sqlite() {
    let Some(db) = store::testing::sqlite("snapshot_batch_sqlite").await else {
        return;
    };
    batch_streams_the_stored_chapters(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_streams_the_stored_chapters_on_postgres() {
    let Some(db) = store::testing::postgres("snapshot_batch_postgres").await else {
        return;
    };
    batch_streams_the_stored_chapters(&db).await;
}
