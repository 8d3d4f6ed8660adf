//! The conformance suite: each contract method of the store with its edge cases (missing
//! rows, duplicates, concurrent claims, unicode, failures mid-transaction), written once and
//! run on both backends by `tests/sqlite.rs` and `tests/postgres.rs`.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde::{Deserialize, Serialize};
use sqlx::Connection as _;
use store::{
    BackendKind, CrawlFilter, CrawlFrontier, CrawlId, CrawlRuns, CrawlStatus, Crawls, Enqueued,
    Error, EvidenceReads, EvidenceWrites, FingerprintReads, FrontierClaim, FrontierOutcome,
    HostStates, IndexLoads, JobError, JobFilter, JobQueue, JobStatus, MatchReads, MatchWrites,
    NewChapter, NewFingerprint, NewJob, NewWork, Page, Posting, PostingKind, Retry, Schedules,
    SnapshotId, SourceFormat, Store, StoreSettings, WorkChanges, WorkFilter, WorkInsert, WorkReads,
    WorkWrites, Worker, WorkerReport, WorkerSettings,
};
use tokio::sync::watch;

use store::testing::{ImportBatch, TestDb};

// Cases, licensed domains, reports and the audit log (issue #11) live in their own file.
pub use super::accounts::*;
pub use super::alerts::*;
pub use super::cases::*;
pub use super::discovery::*;
pub use super::notices::*;
pub use super::renders::*;
pub use super::sites::*;
pub use super::stats::*;
pub use super::timestamps::*;

// ---------------------------------------------------------------------------------------
// helpers

fn fingerprint(seed: u64, postings: usize) -> NewFingerprint {
    NewFingerprint {
        normalizer_version: 3,
        chars: 1000 + seed as u32,
        // High bit set: must survive the bit-cast to a signed BIGINT.
        simhash: u64::MAX - seed,
        summary: vec![seed as u8; 64],
        text_winnow: (0..postings)
            .map(|i| Posting {
                hash: (1 << 63) | (seed << 32) | i as u64,
                pos: i as u32 * 3,
            })
            .collect(),
        pinyin_winnow: (0..postings / 2)
            .map(|i| Posting {
                hash: (seed << 32) | i as u64,
                pos: i as u32,
            })
            .collect(),
    }
}

pub(crate) fn sample_work(title: &str, seed: u8) -> NewWork {
    let mut content_hash = [0u8; 32];
    content_hash[0] = seed;
    content_hash[31] = 0xAB;
    let s = u64::from(seed) * 10;
    NewWork {
        title: title.to_owned(),
        author: Some("曹雪芹".to_owned()),
        content_hash,
        source_name: Some(format!("{title}.txt")),
        source_format: SourceFormat::Txt,
        source_encoding: Some("GBK".to_owned()),
        front_matter: "目录\n第一回\n第二回".to_owned(),
        chapters: vec![
            NewChapter {
                title: "第一回　甄士隐梦幻识通灵".to_owned(),
                body: "此开卷第一回也。😀 ascii, ‘quotes’ and\ttabs".to_owned(),
                fingerprint: fingerprint(s + 1, 10),
            },
            NewChapter {
                title: "第二回".to_owned(),
                body: "贾夫人仙逝扬州城".to_owned(),
                fingerprint: fingerprint(s + 2, 3),
            },
            NewChapter {
                title: "Chapter 3".to_owned(),
                body: "x".to_owned(),
                fingerprint: fingerprint(s + 3, 0),
            },
        ],
    }
}

/// None of the work's first chapter's text postings is stored.
async fn assert_no_text_postings(s: &Store, work: &NewWork) {
    let hashes: Vec<u64> = work.chapters[0]
        .fingerprint
        .text_winnow
        .iter()
        .map(|p| p.hash)
        .collect();
    let hits = s
        .postings_with_hashes(PostingKind::Text, &hashes)
        .await
        .unwrap();
    assert!(hits.is_empty(), "{} postings left", hits.len());
}

pub(crate) fn created(outcome: WorkInsert) -> store::WorkId {
    match outcome {
        WorkInsert::Created(id) => id,
        other => panic!("expected a new work, got {other:?}"),
    }
}

use store::testing::wait_for;

/// Reads rows keyset-page by keyset-page (`size` at a time, each page after the last id
/// seen) until a short page, as an index load does.
async fn every_page<T, F, Fut>(
    size: u32,
    id: impl Fn(&T) -> store::ChapterId,
    mut fetch: F,
) -> Vec<T>
where
    F: FnMut(Page<store::ChapterId>) -> Fut,
    Fut: Future<Output = Vec<T>>,
{
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = fetch(Page {
            after,
            limit: Some(size),
        })
        .await;
        after = page.last().map(&id);
        let short = page.len() < size as usize;
        seen.extend(page);
        if short {
            return seen;
        }
    }
}

/// The test's store and a second one on the same database (another process), for tasks
/// that split between the two.
pub(crate) async fn two_pools(db: &TestDb) -> [Store; 2] {
    [db.store.clone(), db.reopen(&StoreSettings::default()).await]
}

/// The jobs the queue tests run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TestJob {
    Count { n: u32 },
    Sleep { ms: u64 },
    Hang,
    Ping,
}

/// A job of another enum: a worker for `TestJob` cannot decode it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum ForeignJob {
    Unknown { x: u8 },
}

pub(crate) fn job(j: &TestJob) -> NewJob {
    NewJob::new(j).unwrap()
}

fn fast_settings(name: &str) -> WorkerSettings {
    WorkerSettings {
        name: name.to_owned(),
        concurrency: 4,
        poll_interval: Duration::from_millis(20),
        maintenance_interval: Duration::from_millis(100),
        backoff: store::Backoff {
            base: Duration::from_millis(10),
            max: Duration::from_millis(100),
        },
        ..WorkerSettings::default()
    }
}

/// A running worker and the switch that stops it.
struct Running {
    stop: watch::Sender<bool>,
    handle: tokio::task::JoinHandle<WorkerReport>,
}

impl Running {
    async fn stop(self) -> WorkerReport {
        let _ = self.stop.send(true);
        self.handle.await.unwrap()
    }
}

fn spawn_worker<H, Fut>(store: &Store, settings: WorkerSettings, handler: H) -> Running
where
    H: Fn(TestJob, store::JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), JobError>> + Send + 'static,
{
    let (stop, mut rx) = watch::channel(false);
    let worker = Worker::new(store.clone(), settings);
    let handle = tokio::spawn(worker.run(handler, async move {
        let _ = rx.wait_for(|stop| *stop).await;
    }));
    Running { stop, handle }
}

async fn status_of(s: &Store, id: store::JobId) -> JobStatus {
    s.job(id).await.unwrap().status
}

// ---------------------------------------------------------------------------------------
// schema

pub async fn migrations_are_idempotent(db: &TestDb) {
    db.store.migrate().await.unwrap();
    let status = db.store.migration_status().await.unwrap();
    assert!(!status.is_empty());
    assert!(status.iter().all(|m| m.applied), "{status:?}");
}

// ---------------------------------------------------------------------------------------
// works

pub async fn work_round_trips_with_chapters_and_fingerprints(db: &TestDb) {
    let s = &db.store;
    let new = sample_work("红楼梦 (庚辰本)", 1);
    let id = created(s.insert_work(&new).await.unwrap());

    let w = s.work(id).await.unwrap();
    assert_eq!(w.id, id);
    assert_eq!(w.title, new.title);
    assert_eq!(w.author, new.author);
    assert_eq!(w.content_hash, new.content_hash);
    assert_eq!(w.source_name, new.source_name);
    assert_eq!(w.source_format, SourceFormat::Txt);
    assert_eq!(w.source_encoding.as_deref(), Some("GBK"));
    assert_eq!(w.front_matter, new.front_matter);
    assert_eq!(w.chapters, 3);
    let chars: usize = new.chapters.iter().map(|c| c.body.chars().count()).sum();
    assert_eq!(w.chars, chars as u64);
    assert!((Utc::now() - w.created_at).num_seconds().abs() < 60);

    let chapters = s.chapters(id).await.unwrap();
    assert_eq!(chapters.len(), 3);
    for (i, (got, want)) in chapters.iter().zip(&new.chapters).enumerate() {
        assert_eq!(got.ordinal, i as u32 + 1);
        assert_eq!(got.work_id, id);
        assert_eq!(got.title, want.title);
        assert_eq!(got.chars as usize, want.body.chars().count());
        let full = s.chapter(got.id).await.unwrap();
        assert_eq!(&full.info, got);
        assert_eq!(full.body, want.body);

        for (kind, postings) in [
            (PostingKind::Text, &want.fingerprint.text_winnow),
            (PostingKind::Pinyin, &want.fingerprint.pinyin_winnow),
        ] {
            let mut expected = postings.clone();
            expected.sort_by_key(|p| (p.pos, p.hash));
            assert_eq!(&s.chapter_postings(got.id, kind).await.unwrap(), &expected);
        }
    }

    let fps = s.fingerprints(Page::all()).await.unwrap();
    assert_eq!(fps.len(), 3);
    for (fp, (ch, want)) in fps.iter().zip(chapters.iter().zip(&new.chapters)) {
        assert_eq!(fp.chapter_id, ch.id);
        assert_eq!(fp.work_id, id);
        assert_eq!(fp.simhash, want.fingerprint.simhash);
        assert_eq!(fp.summary, want.fingerprint.summary);
        assert_eq!(fp.chars, want.fingerprint.chars);
        assert_eq!(fp.normalizer_version, 3);
    }
}

pub async fn reimporting_the_same_content_finds_the_existing_work(db: &TestDb) {
    let s = &db.store;
    let id = created(s.insert_work(&sample_work("西游记", 2)).await.unwrap());
    let mut again = sample_work("西游记 (another file name)", 2);
    again.source_encoding = Some("UTF-8".to_owned());
    assert_eq!(
        s.insert_work(&again).await.unwrap(),
        WorkInsert::Existing(id)
    );
    assert_eq!(
        s.work_by_content_hash(&again.content_hash).await.unwrap(),
        Some(id)
    );
    let all = s.works(&WorkFilter::All, Page::all()).await.unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].title, "西游记");
    assert_eq!(s.chapters(id).await.unwrap().len(), 3);
    assert_eq!(s.fingerprints(Page::all()).await.unwrap().len(), 3);
    assert_eq!(s.work_by_content_hash(&[9; 32]).await.unwrap(), None);
}

pub async fn concurrent_imports_of_one_work_store_it_once(db: &TestDb) {
    let work = Arc::new(sample_work("三国演义", 3));
    let tasks: Vec<_> = (0..6)
        .map(|_| {
            let (s, work) = (db.store.clone(), Arc::clone(&work));
            tokio::spawn(async move { s.insert_work(&work).await.unwrap() })
        })
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap());
    }
    let created: Vec<_> = outcomes
        .iter()
        .filter(|o| matches!(o, WorkInsert::Created(_)))
        .collect();
    assert_eq!(created.len(), 1, "{outcomes:?}");
    let id = created[0].id();
    assert!(outcomes.iter().all(|o| o.id() == id));
    assert_eq!(db.store.chapters(id).await.unwrap().len(), 3);
    assert_eq!(db.store.fingerprints(Page::all()).await.unwrap().len(), 3);
}

/// A work of `chapters` chapters of `bytes` each: several import batches.
fn long_work(title: &str, seed: u8, chapters: usize, bytes: usize) -> NewWork {
    let mut work = sample_work(title, seed);
    let body = "字".repeat(bytes / 3);
    work.chapters = (0..chapters)
        .map(|i| NewChapter {
            title: format!("第{}章", i + 1),
            body: body.clone(),
            fingerprint: fingerprint(u64::from(seed) * 1000 + i as u64, 200),
        })
        .collect();
    work
}

pub async fn a_long_import_lets_other_writers_in_and_stays_hidden(db: &TestDb) {
    // Two pools: two processes on one SQLite file, or two clients of one Postgres.
    let [a, b] = two_pools(db).await;
    let long = long_work("长篇", 7, 48, 256 * 1024);
    let import = tokio::spawn(async move { a.insert_work(&long).await });
    let mut written_during_import = 0;
    let mut i = 0u8;
    while !import.is_finished() {
        // Another writer (a crawl, another import) gets in between the batches...
        b.insert_work(&sample_work(&format!("short {i}"), 100 + i))
            .await
            .unwrap();
        i += 1;
        if !import.is_finished() {
            written_during_import += 1;
        }
        // ...and no reader sees the long work before it is whole.
        for w in b.works(&WorkFilter::All, Page::all()).await.unwrap() {
            assert_eq!(b.chapters(w.id).await.unwrap().len(), w.chapters as usize);
        }
        let mut entries = std::collections::HashMap::new();
        for entry in b.index_entries(Page::all()).await.unwrap() {
            *entries.entry(entry.work_id).or_insert(0u32) += 1;
        }
        for fp in b.fingerprints(Page::all()).await.unwrap() {
            assert!(entries.contains_key(&fp.work_id) || import.is_finished());
        }
        for (work, n) in entries {
            assert_eq!(n, b.work(work).await.unwrap().chapters, "{work}");
        }
    }
    let id = created(import.await.unwrap().unwrap());
    assert!(
        written_during_import >= 2,
        "{written_during_import} writes got in"
    );
    assert_eq!(b.chapters(id).await.unwrap().len(), 48);
    let ordinals: Vec<u32> = b
        .chapters(id)
        .await
        .unwrap()
        .iter()
        .map(|c| c.ordinal)
        .collect();
    assert_eq!(ordinals, (1..=48).collect::<Vec<_>>());
    assert_eq!(b.work_index_entries(id).await.unwrap().len(), 48);
}

pub async fn an_abandoned_import_is_hidden_then_removed(db: &TestDb) {
    let settings = StoreSettings {
        abandoned_import_after: Duration::from_millis(500),
        ..StoreSettings::default()
    };
    let s = db.reopen(&settings).await;
    let long = long_work("半途", 9, 96, 256 * 1024);
    // The importing process dies between two batches: its store holds the import after the
    // first batch until the task is aborted.
    let (batch_written, mut written) = tokio::sync::mpsc::unbounded_channel();
    let dying = s
        .clone()
        .with_import_batch_hook(Arc::new(move |batch: ImportBatch| {
            let _ = batch_written.send(batch);
            Box::pin(std::future::pending())
        }));
    let import = {
        let long = long.clone();
        tokio::spawn(async move { dying.insert_work(&long).await })
    };
    let first = written.recv().await.unwrap();
    import.abort();
    assert!(import.await.unwrap_err().is_cancelled());
    assert_eq!(first.number, 1);
    assert!(first.of > 1, "{first:?}: one batch, nothing to die between");
    let dead = first.work;
    // Its first batch is stored, and nothing reads it.
    assert!(!s.chapters(dead).await.unwrap().is_empty());
    assert!(
        s.works(&WorkFilter::All, Page::all())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(s.index_entries(Page::all()).await.unwrap().is_empty());
    assert!(matches!(s.work(dead).await, Err(Error::NotFound { .. })));
    assert_eq!(
        s.work_by_content_hash(&long.content_hash).await.unwrap(),
        None
    );
    // The same text again: once the dead import is old enough it is removed, and the work
    // is stored whole, once.
    let id = created(s.insert_work(&long).await.unwrap());
    assert_ne!(id, dead);
    assert!(
        s.chapters(dead).await.unwrap().is_empty(),
        "the dead import is left"
    );
    assert_eq!(s.chapters(id).await.unwrap().len(), 96);
    assert_eq!(s.index_entries(Page::all()).await.unwrap().len(), 96);
    assert_eq!(
        s.works(&WorkFilter::All, Page::all()).await.unwrap().len(),
        1
    );
}

pub async fn a_failed_work_insert_writes_nothing(db: &TestDb) {
    // A trigger refuses the second chapter's fingerprint, after the work, the first chapter
    // and its postings were written in the same transaction.
    db.execute(match db.kind() {
        BackendKind::Sqlite => {
            "CREATE TRIGGER refuse_4242 BEFORE INSERT ON fingerprints WHEN NEW.chars = 4242 \
             BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END;"
        }
        BackendKind::Postgres => {
            "CREATE FUNCTION refuse_4242() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN IF NEW.chars = 4242 THEN RAISE EXCEPTION 'refused by the test trigger'; END IF; \
             RETURN NEW; END $$; \
             CREATE TRIGGER refuse_4242 BEFORE INSERT ON fingerprints \
             FOR EACH ROW EXECUTE FUNCTION refuse_4242();"
        }
    })
    .await;
    let s = &db.store;
    let mut work = sample_work("水浒传", 4);
    work.chapters[1].fingerprint.chars = 4242;
    let err = s.insert_work(&work).await.unwrap_err();
    assert!(matches!(err, Error::Backend(_)), "{err:?}");
    assert!(
        err.to_string().contains("refused by the test trigger"),
        "{err}"
    );

    assert!(
        s.works(&WorkFilter::All, Page::all())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.work_by_content_hash(&work.content_hash).await.unwrap(),
        None
    );
    assert!(s.fingerprints(Page::all()).await.unwrap().is_empty());
    assert_no_text_postings(s, &work).await;
    // The failure poisoned nothing: the same work without the refused value goes in.
    work.chapters[1].fingerprint.chars = 1;
    created(s.insert_work(&work).await.unwrap());
}

pub async fn a_work_without_chapters_is_refused(db: &TestDb) {
    let mut work = sample_work("空", 5);
    work.chapters.clear();
    let err = db.store.insert_work(&work).await.unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    assert!(err.to_string().contains("no chapters"), "{err}");
}

pub async fn missing_rows_are_not_found(db: &TestDb) {
    let s = &db.store;
    let not_found = |r: Result<(), Error>, what: &str| match r {
        Err(Error::NotFound { what: w, key }) => {
            assert_eq!(w, what);
            assert_eq!(key, "424242");
        }
        other => panic!("expected {what} not found, got {other:?}"),
    };
    not_found(s.work(store::WorkId(424242)).await.map(drop), "work");
    not_found(
        s.chapter(store::ChapterId(424242)).await.map(drop),
        "chapter",
    );
    not_found(s.delete_work(store::WorkId(424242)).await, "work");
    not_found(s.job(store::JobId(424242)).await.map(drop), "job");
    not_found(s.retry_dead(store::JobId(424242)).await, "job");
    assert!(s.chapters(store::WorkId(424242)).await.unwrap().is_empty());
    assert!(
        s.chapter_postings(store::ChapterId(424242), PostingKind::Text)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        s.delete_schedule("nope").await,
        Err(Error::NotFound {
            what: "schedule",
            ..
        })
    ));
}

pub async fn works_are_filtered_and_paged(db: &TestDb) {
    let s = &db.store;
    let mut ids = Vec::new();
    for (i, (title, author)) in [
        ("Alpha 100%", "A. Writer"),
        ("a_b", "A. Writer"),
        ("axb ALPHA", "Other"),
        ("红楼梦", "曹雪芹"),
        ("西游记", "吴承恩"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut w = sample_work(title, 10 + i as u8);
        w.author = Some(author.to_owned());
        ids.push(created(s.insert_work(&w).await.unwrap()));
    }
    let titles = |v: Vec<store::WorkSummary>| v.into_iter().map(|w| w.title).collect::<Vec<_>>();
    let all = s.works(&WorkFilter::All, Page::all()).await.unwrap();
    assert_eq!(all.iter().map(|w| w.id).collect::<Vec<_>>(), ids);
    assert_eq!(all[3].chapters, 3);
    assert!(all[3].chars > 0);

    let alpha = s
        .works(&WorkFilter::TitleContains("alpha".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(titles(alpha), ["Alpha 100%", "axb ALPHA"]);
    let percent = s
        .works(&WorkFilter::TitleContains("0%".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(titles(percent), ["Alpha 100%"]);
    let underscore = s
        .works(&WorkFilter::TitleContains("a_b".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(titles(underscore), ["a_b"]);
    let han = s
        .works(&WorkFilter::TitleContains("游".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(titles(han), ["西游记"]);
    let by = s
        .works(&WorkFilter::Author("A. Writer".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(titles(by), ["Alpha 100%", "a_b"]);

    let first = s.works(&WorkFilter::All, Page::first(2)).await.unwrap();
    assert_eq!(first.len(), 2);
    let next = s
        .works(
            &WorkFilter::All,
            Page {
                after: Some(first[1].id),
                limit: Some(2),
            },
        )
        .await
        .unwrap();
    assert_eq!(next.iter().map(|w| w.id).collect::<Vec<_>>(), ids[2..4]);
}

pub async fn deleting_a_work_removes_its_chapters_and_postings(db: &TestDb) {
    let s = &db.store;
    let keep = created(s.insert_work(&sample_work("keep", 20)).await.unwrap());
    let work = sample_work("delete me", 21);
    let id = created(s.insert_work(&work).await.unwrap());
    let chapters = s.chapters(id).await.unwrap();
    s.delete_work(id).await.unwrap();

    assert!(matches!(s.work(id).await, Err(Error::NotFound { .. })));
    assert!(s.chapters(id).await.unwrap().is_empty());
    assert!(matches!(
        s.chapter(chapters[0].id).await,
        Err(Error::NotFound { .. })
    ));
    assert_no_text_postings(s, &work).await;
    let left = s.fingerprints(Page::all()).await.unwrap();
    assert_eq!(left.len(), 3);
    assert!(left.iter().all(|f| f.work_id == keep));
    assert!(matches!(
        s.delete_work(id).await,
        Err(Error::NotFound { .. })
    ));
    // The content hash is free again.
    created(s.insert_work(&work).await.unwrap());
}

pub async fn postings_are_found_by_hash(db: &TestDb) {
    let s = &db.store;
    let mut big = sample_work("big", 30);
    // More postings than one SQLite INSERT batch (2000 rows) and one lookup chunk (1000).
    big.chapters[0].fingerprint = fingerprint(777, 4500);
    let id = created(s.insert_work(&big).await.unwrap());
    created(s.insert_work(&sample_work("other", 31)).await.unwrap());
    let ch = s.chapters(id).await.unwrap()[0].id;

    let want = &big.chapters[0].fingerprint.text_winnow;
    assert_eq!(
        s.chapter_postings(ch, PostingKind::Text)
            .await
            .unwrap()
            .len(),
        4500
    );
    let mut hashes: Vec<u64> = want.iter().map(|p| p.hash).collect();
    hashes.push(12345); // not stored
    let mut hits = s
        .postings_with_hashes(PostingKind::Text, &hashes)
        .await
        .unwrap();
    hits.sort_by_key(|h| h.pos);
    assert_eq!(hits.len(), 4500);
    for (hit, p) in hits.iter().zip(want) {
        assert_eq!((hit.chapter_id, hit.hash, hit.pos), (ch, p.hash, p.pos));
    }
    // Kinds are kept apart: text hashes are not pinyin postings.
    assert!(
        s.postings_with_hashes(PostingKind::Pinyin, &hashes[..100])
            .await
            .unwrap()
            .is_empty()
    );
    let pinyin = &big.chapters[0].fingerprint.pinyin_winnow;
    let pinyin_hits = s
        .postings_with_hashes(PostingKind::Pinyin, &[pinyin[5].hash])
        .await
        .unwrap();
    assert_eq!(pinyin_hits.len(), 1);
    assert_eq!(pinyin_hits[0].pos, pinyin[5].pos);
    assert!(
        s.postings_with_hashes(PostingKind::Text, &[])
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn fingerprints_are_paged_for_index_loads(db: &TestDb) {
    let s = &db.store;
    created(s.insert_work(&sample_work("one", 40)).await.unwrap());
    created(s.insert_work(&sample_work("two", 41)).await.unwrap());
    let seen = every_page(
        4,
        |f: &store::FingerprintRecord| f.chapter_id,
        |page| async move { s.fingerprints(page).await.unwrap() },
    )
    .await;
    assert_eq!(seen.len(), 6);
    assert!(seen.windows(2).all(|w| w[0].chapter_id < w[1].chapter_id));
}

pub async fn index_entries_carry_every_posting_page_by_page(db: &TestDb) {
    use store::{IndexLoads, PostingKind};
    let s = &db.store;
    let one = sample_work("one", 50);
    let two = sample_work("two", 51);
    let first = created(s.insert_work(&one).await.unwrap());
    let second = created(s.insert_work(&two).await.unwrap());
    assert!(s.index_entries(Page::all()).await.unwrap().len() == 6);
    // A page size of 2 splits the second work across pages.
    let seen = every_page(
        2,
        |e: &store::IndexEntry| e.chapter_id,
        |page| async move { s.index_entries(page).await.unwrap() },
    )
    .await;
    assert_eq!(seen.len(), 6);
    assert!(seen.windows(2).all(|w| w[0].chapter_id < w[1].chapter_id));
    let expected = one.chapters.iter().chain(&two.chapters);
    for (entry, chapter) in seen.iter().zip(expected) {
        let fp = &chapter.fingerprint;
        assert_eq!(entry.summary, fp.summary);
        assert_eq!(entry.normalizer_version, fp.normalizer_version);
        assert_eq!(entry.text_winnow, fp.text_winnow);
        assert_eq!(entry.pinyin_winnow, fp.pinyin_winnow);
        assert_eq!(
            entry.text_winnow,
            s.chapter_postings(entry.chapter_id, PostingKind::Text)
                .await
                .unwrap()
        );
    }
    assert!(seen[..3].iter().all(|e| e.work_id == first));
    assert!(seen[3..].iter().all(|e| e.work_id == second));
    let last = seen.last().unwrap().chapter_id;
    assert!(
        s.index_entries(Page {
            after: Some(last),
            limit: Some(2)
        })
        .await
        .unwrap()
        .is_empty()
    );
}

pub async fn packed_postings_load_as_the_rows_do(db: &TestDb) {
    use store::IndexLoads;
    let s = &db.store;
    let p = |pos, hash| Posting { hash, pos };
    // Out of order, a duplicate, ties on position with hashes either side of the sign bit:
    // the rows come back `ORDER BY pos, hash` on a signed BIGINT.
    let mut odd = sample_work("odd", 70);
    odd.chapters[0].fingerprint.text_winnow = vec![
        p(9, 5),
        p(2, (1 << 63) | 7),
        p(2, 3),
        p(2, u64::MAX),
        p(0, 1),
        p(2, 3),
    ];
    odd.chapters[0].fingerprint.pinyin_winnow.reverse();
    let first = created(s.insert_work(&odd).await.unwrap());
    let second = created(s.insert_work(&sample_work("plain", 71)).await.unwrap());
    let packed = s.index_entries(Page::all()).await.unwrap();
    assert_eq!(packed.len(), 6);
    assert_eq!(
        packed[0].text_winnow,
        [
            p(0, 1),
            p(2, (1 << 63) | 7),
            p(2, u64::MAX),
            p(2, 3),
            p(2, 3),
            p(9, 5)
        ]
    );
    let mut pinyin = odd.chapters[0].fingerprint.pinyin_winnow.clone();
    pinyin.reverse();
    assert_eq!(packed[0].pinyin_winnow, pinyin);
    let packed_work = s.work_index_entries(second).await.unwrap();
    assert_eq!(packed_work, packed[3..]);

    // Chapters stored before the packed column (NULL) read from the rows, beside packed
    // ones on the same page.
    db.execute(
        "UPDATE fingerprints SET postings = NULL \
         WHERE chapter_id IN (SELECT id FROM chapters WHERE ordinal = 2)",
    )
    .await;
    let mixed = every_page(
        2,
        |e: &store::IndexEntry| e.chapter_id,
        |page| async move { s.index_entries(page).await.unwrap() },
    )
    .await;
    assert_eq!(mixed, packed);
    db.execute("UPDATE fingerprints SET postings = NULL").await;
    assert_eq!(s.index_entries(Page::all()).await.unwrap(), packed);
    assert_eq!(s.work_index_entries(second).await.unwrap(), packed_work);

    // A corrupt value (version 1, then a count with nothing behind it) is an error naming
    // the chapter, for the page and for the work.
    let chapter = packed[1].chapter_id;
    let corrupt = match db.kind() {
        BackendKind::Postgres => "'\\x0105'::BYTEA",
        BackendKind::Sqlite => "X'0105'",
    };
    db.execute(&format!(
        "UPDATE fingerprints SET postings = {corrupt} WHERE chapter_id = {chapter}"
    ))
    .await;
    for result in [
        s.index_entries(Page::all()).await,
        s.work_index_entries(first).await,
    ] {
        match result {
            Err(Error::InvalidInput(msg)) => {
                assert!(msg.contains(&format!("chapter {chapter}")), "{msg}");
            }
            other => panic!("corrupt packed postings loaded: {other:?}"),
        }
    }
    assert_eq!(s.work_index_entries(second).await.unwrap(), packed_work);
}

pub async fn work_changes_log_inserts_and_deletes_in_order(db: &TestDb) {
    use store::{IndexLoads, WorkChangeKind, WorkChanges};
    let s = &db.store;
    assert_eq!(s.last_change().await.unwrap(), 0);
    assert!(s.changes_since(0, 10).await.unwrap().is_empty());
    let one = created(s.insert_work(&sample_work("one", 60)).await.unwrap());
    let two = created(s.insert_work(&sample_work("two", 61)).await.unwrap());
    // A re-import writes nothing, so logs nothing.
    let again = s.insert_work(&sample_work("one again", 60)).await.unwrap();
    assert_eq!(again, WorkInsert::Existing(one));
    s.delete_work(one).await.unwrap();
    // A failed delete logs nothing either.
    assert!(s.delete_work(one).await.is_err());
    let changes = s.changes_since(0, 10).await.unwrap();
    let seen: Vec<_> = changes.iter().map(|c| (c.work_id, c.kind)).collect();
    assert_eq!(
        seen,
        vec![
            (one, WorkChangeKind::Added),
            (two, WorkChangeKind::Added),
            (one, WorkChangeKind::Removed)
        ]
    );
    assert!(changes.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(s.last_change().await.unwrap(), changes[2].seq);
    // Paged by sequence number.
    let rest = s.changes_since(changes[0].seq, 1).await.unwrap();
    assert_eq!(rest, vec![changes[1].clone()]);
    assert!(
        s.changes_since(changes[2].seq, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // A work's index entries: all its chapters with their postings; none once it is gone.
    let entries = s.work_index_entries(two).await.unwrap();
    assert_eq!(entries.len(), 3);
    assert!(entries.iter().all(|e| e.work_id == two));
    let work = sample_work("two", 61);
    for (entry, chapter) in entries.iter().zip(&work.chapters) {
        assert_eq!(entry.text_winnow, chapter.fingerprint.text_winnow);
        assert_eq!(entry.pinyin_winnow, chapter.fingerprint.pinyin_winnow);
    }
    assert!(s.work_index_entries(one).await.unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------
// the queue, one call at a time

pub async fn a_running_worker_is_seen_until_it_stops(db: &TestDb) {
    use store::WorkerPresence;
    let s = &db.store;
    assert!(s.workers_seen(10).await.unwrap().is_empty());
    let before = Utc::now();
    let running = spawn_worker(s, fast_settings("seen-1"), |_j: TestJob, _c| async {
        Ok(())
    });
    wait_for(
        "the worker to say it is alive",
        Duration::from_secs(30),
        || async { !s.workers_seen(10).await.unwrap().is_empty() },
    )
    .await;
    let seen = s.workers_seen(10).await.unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].name.as_str(), seen[0].queue.as_str()),
        ("seen-1", "default")
    );
    assert!(seen[0].started_at >= before - chrono::TimeDelta::seconds(1));
    assert!(seen[0].seen_at >= seen[0].started_at);
    running.stop().await;
    assert!(
        s.workers_seen(10).await.unwrap().is_empty(),
        "a stopped worker is forgotten"
    );

    // A worker killed without stopping stays as last seen, until a week has passed.
    let long_ago = Utc::now() - chrono::TimeDelta::days(8);
    s.worker_alive("killed", "match", long_ago, long_ago)
        .await
        .unwrap();
    s.worker_alive(
        "older",
        "default",
        long_ago,
        Utc::now() - chrono::TimeDelta::hours(2),
    )
    .await
    .unwrap();
    s.worker_alive("late", "default", long_ago, Utc::now())
        .await
        .unwrap();
    let names: Vec<String> = s
        .workers_seen(10)
        .await
        .unwrap()
        .into_iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(names, ["late", "older"]);
    assert_eq!(s.workers_seen(1).await.unwrap().len(), 1);
}

pub async fn jobs_go_from_queued_to_done(db: &TestDb) {
    let s = &db.store;
    let lease = Duration::from_secs(30);
    let e = s.enqueue(&job(&TestJob::Count { n: 7 })).await.unwrap();
    let Enqueued::New(id) = e else {
        panic!("{e:?}")
    };
    let rec = s.job(id).await.unwrap();
    assert_eq!(
        (rec.status, rec.attempts, rec.max_attempts),
        (JobStatus::Queued, 0, 5)
    );
    assert_eq!(
        (rec.kind.as_str(), rec.queue.as_str()),
        ("Count", "default")
    );
    assert!(s.claim("other", "w1", 10, lease).await.unwrap().is_empty());
    assert!(s.claim("default", "w1", 0, lease).await.unwrap().is_empty());

    let claimed = s.claim("default", "w1", 10, lease).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let c = &claimed[0];
    assert_eq!((c.lease.job, c.lease.attempt), (id, 1));
    assert_eq!(c.kind, "Count");
    assert_eq!(c.decode::<TestJob>().unwrap(), TestJob::Count { n: 7 });
    let rec = s.job(id).await.unwrap();
    assert_eq!(rec.status, JobStatus::Running);
    assert_eq!(rec.locked_by.as_deref(), Some("w1"));
    assert!(rec.locked_until.unwrap() > Utc::now());
    assert!(
        s.claim("default", "w2", 10, lease)
            .await
            .unwrap()
            .is_empty()
    );

    s.heartbeat(c.lease, lease).await.unwrap();
    s.complete(c.lease).await.unwrap();
    let rec = s.job(id).await.unwrap();
    assert_eq!(rec.status, JobStatus::Done);
    assert!(rec.finished_at.is_some() && rec.locked_by.is_none());
    assert!(matches!(
        s.complete(c.lease).await,
        Err(Error::LeaseLost { .. })
    ));

    assert_eq!(job(&TestJob::Hang).kind(), "Hang");
    assert!(matches!(NewJob::new(&42), Err(Error::InvalidInput(_))));
}

pub async fn dedupe_keys_hold_while_a_job_is_live(db: &TestDb) {
    let s = &db.store;
    let with_key = |n| job(&TestJob::Count { n }).dedupe_key("page:42");
    let first = s.enqueue(&with_key(1)).await.unwrap();
    assert!(matches!(first, Enqueued::New(_)));
    assert_eq!(
        s.enqueue(&with_key(2)).await.unwrap(),
        Enqueued::Duplicate(first.id())
    );
    let c = s
        .claim("default", "w", 1, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(
        s.enqueue(&with_key(3)).await.unwrap(),
        Enqueued::Duplicate(first.id())
    );
    s.complete(c[0].lease).await.unwrap();
    let second = s.enqueue(&with_key(4)).await.unwrap();
    assert!(matches!(second, Enqueued::New(id) if id != first.id()));
    let other = s
        .enqueue(&job(&TestJob::Count { n: 5 }).dedupe_key("page:43"))
        .await
        .unwrap();
    assert!(matches!(other, Enqueued::New(_)));
    // Without a key nothing is de-duplicated.
    let a = s.enqueue(&job(&TestJob::Ping)).await.unwrap();
    let b = s.enqueue(&job(&TestJob::Ping)).await.unwrap();
    assert_ne!(a.id(), b.id());
}

pub async fn due_time_and_priority_order_claims(db: &TestDb) {
    let s = &db.store;
    let lease = Duration::from_secs(30);
    let later = s
        .enqueue(&job(&TestJob::Count { n: 1 }).run_at(Utc::now() + chrono::Duration::hours(1)))
        .await
        .unwrap()
        .id();
    let normal = s
        .enqueue(&job(&TestJob::Count { n: 2 }))
        .await
        .unwrap()
        .id();
    let urgent = s
        .enqueue(&job(&TestJob::Count { n: 3 }).priority(5))
        .await
        .unwrap()
        .id();
    let first = s.claim("default", "w", 1, lease).await.unwrap();
    assert_eq!(first[0].lease.job, urgent);
    let second = s.claim("default", "w", 5, lease).await.unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].lease.job, normal);
    assert!(s.claim("default", "w", 5, lease).await.unwrap().is_empty());
    assert_eq!(status_of(s, later).await, JobStatus::Queued);
}

pub async fn failures_back_off_then_go_dead_and_can_be_retried(db: &TestDb) {
    let s = &db.store;
    let lease = Duration::from_secs(30);
    let id = s
        .enqueue(&job(&TestJob::Count { n: 1 }).max_attempts(3))
        .await
        .unwrap()
        .id();
    for attempt in 1..=3u32 {
        let c = s.claim("default", "w", 1, lease).await.unwrap();
        assert_eq!(c[0].lease.attempt, attempt);
        let status = s
            .fail(
                c[0].lease,
                &format!("error {attempt}"),
                Retry::At(Utc::now()),
            )
            .await
            .unwrap();
        let want = if attempt < 3 {
            JobStatus::Queued
        } else {
            JobStatus::Dead
        };
        assert_eq!(status, want);
    }
    let rec = s.job(id).await.unwrap();
    assert_eq!((rec.status, rec.attempts), (JobStatus::Dead, 3));
    assert_eq!(rec.last_error.as_deref(), Some("error 3"));
    assert!(rec.finished_at.is_some());
    assert!(s.claim("default", "w", 1, lease).await.unwrap().is_empty());

    s.retry_dead(id).await.unwrap();
    let rec = s.job(id).await.unwrap();
    assert_eq!((rec.status, rec.attempts), (JobStatus::Queued, 0));
    assert_eq!(rec.last_error.as_deref(), Some("error 3"));
    let c = s.claim("default", "w", 1, lease).await.unwrap();
    assert_eq!(c[0].lease.attempt, 1);
    assert!(matches!(s.retry_dead(id).await, Err(Error::Conflict(_))));

    // A retry time in the future holds the job back.
    s.fail(
        c[0].lease,
        "later",
        Retry::At(Utc::now() + chrono::Duration::hours(1)),
    )
    .await
    .unwrap();
    assert!(s.claim("default", "w", 1, lease).await.unwrap().is_empty());
    assert_eq!(status_of(s, id).await, JobStatus::Queued);

    // Retry::Never ends it on the first attempt.
    let never = s.enqueue(&job(&TestJob::Ping)).await.unwrap().id();
    let c = s.claim("default", "w", 1, lease).await.unwrap();
    assert_eq!(c[0].lease.job, never);
    assert_eq!(
        s.fail(c[0].lease, "bad input", Retry::Never).await.unwrap(),
        JobStatus::Dead
    );
}

pub async fn expired_leases_are_reaped_and_fenced(db: &TestDb) {
    let s = &db.store;
    let id = s
        .enqueue(&job(&TestJob::Count { n: 1 }))
        .await
        .unwrap()
        .id();
    // Margins of seconds, not milliseconds: the suite shares two cores with builds.
    let old = s
        .claim("default", "dies", 1, Duration::from_secs(2))
        .await
        .unwrap()[0]
        .lease;
    assert_eq!(s.reap_expired().await.unwrap(), 0, "lease not yet expired");
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(s.reap_expired().await.unwrap(), 1);
    let rec = s.job(id).await.unwrap();
    assert_eq!(rec.status, JobStatus::Queued);
    let err = rec.last_error.unwrap();
    assert!(
        err.contains("lease expired") && err.contains("dies"),
        "{err}"
    );

    let new = s
        .claim("default", "lives", 1, Duration::from_secs(30))
        .await
        .unwrap()[0]
        .lease;
    assert_eq!(new.attempt, 2);
    // The first worker wakes up: its lease is fenced off.
    let lost = |r: Result<(), Error>| assert!(matches!(r, Err(Error::LeaseLost { .. })), "{r:?}");
    lost(s.heartbeat(old, Duration::from_secs(30)).await);
    lost(s.complete(old).await);
    lost(s.release(old).await);
    lost(s.fail(old, "late", Retry::Never).await.map(drop));
    s.complete(new).await.unwrap();

    // A job whose last attempt's lease expires is dead.
    let once = s
        .enqueue(&job(&TestJob::Ping).max_attempts(1))
        .await
        .unwrap()
        .id();
    s.claim("default", "dies", 1, Duration::from_millis(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    s.reap_expired().await.unwrap();
    assert_eq!(status_of(s, once).await, JobStatus::Dead);
}

pub async fn released_jobs_do_not_use_an_attempt(db: &TestDb) {
    let s = &db.store;
    let id = s.enqueue(&job(&TestJob::Ping)).await.unwrap().id();
    let lease = s
        .claim("default", "w", 1, Duration::from_secs(30))
        .await
        .unwrap()[0]
        .lease;
    s.release(lease).await.unwrap();
    let rec = s.job(id).await.unwrap();
    assert_eq!((rec.status, rec.attempts), (JobStatus::Queued, 0));
    assert!(rec.locked_by.is_none());
    assert!(matches!(
        s.release(lease).await,
        Err(Error::LeaseLost { .. })
    ));
    let again = s
        .claim("default", "w", 1, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(again[0].lease.attempt, 1);
}

pub async fn concurrent_claims_never_share_a_job(db: &TestDb) {
    const JOBS: u32 = 400;
    for n in 0..JOBS {
        db.store.enqueue(&job(&TestJob::Count { n })).await.unwrap();
    }
    // Half the claimers use a second pool, as another process would.
    let pools = two_pools(db).await;
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let s = pools[i % 2].clone();
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = s
                        .claim("default", &format!("c{i}"), 7, Duration::from_secs(30))
                        .await
                        .unwrap();
                    if batch.is_empty() {
                        return mine;
                    }
                    for c in batch {
                        s.complete(c.lease).await.unwrap();
                        mine.push(c.decode::<TestJob>().unwrap());
                    }
                }
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for t in tasks {
        for j in t.await.unwrap() {
            assert!(seen.insert(j.clone()), "{j:?} claimed twice");
        }
    }
    assert_eq!(seen.len(), JOBS as usize);
}

// ---------------------------------------------------------------------------------------
// the queue under workers

pub async fn four_workers_run_2000_jobs_exactly_once(db: &TestDb) {
    const JOBS: u32 = 2000;
    let s = &db.store;
    for n in 0..JOBS {
        s.enqueue(&job(&TestJob::Count { n })).await.unwrap();
    }
    // n → the attempts that ran it; every 100th job fails its first attempt.
    let runs: Arc<Mutex<HashMap<u32, Vec<u32>>>> = Arc::default();
    let workers: Vec<Running> = (0..4)
        .map(|i| {
            let runs = Arc::clone(&runs);
            spawn_worker(s, fast_settings(&format!("w{i}")), move |j, ctx| {
                let runs = Arc::clone(&runs);
                async move {
                    let TestJob::Count { n } = j else {
                        return Err(JobError::permanent("unexpected job"));
                    };
                    runs.lock()
                        .unwrap()
                        .entry(n)
                        .or_default()
                        .push(ctx.lease.attempt);
                    if n % 100 == 0 && ctx.lease.attempt == 1 {
                        return Err(JobError::retry("every 100th job fails once"));
                    }
                    Ok(())
                }
            })
        })
        .collect();
    wait_for("2000 jobs done", Duration::from_secs(60), || async {
        let c = s.counts().await.unwrap();
        c.first().is_some_and(|c| c.done == u64::from(JOBS))
    })
    .await;
    let mut total = WorkerReport::default();
    for w in workers {
        let r = w.stop().await;
        assert!(r.completed > 0, "every worker took a share: {r:?}");
        total.completed += r.completed;
        total.retried += r.retried;
        total.dead += r.dead + r.lost + r.released;
    }
    assert_eq!(total.completed, u64::from(JOBS));
    assert_eq!(total.retried, u64::from(JOBS / 100));
    assert_eq!(total.dead, 0);
    let runs = std::mem::take(&mut *runs.lock().unwrap());
    assert_eq!(runs.len(), JOBS as usize);
    for (n, attempts) in runs.iter() {
        let want: &[u32] = if n % 100 == 0 { &[1, 2] } else { &[1] };
        assert_eq!(attempts, want, "job {n}");
    }
    let c = &s.counts().await.unwrap()[0];
    assert_eq!((c.queued, c.running, c.dead), (0, 0, 0));
}

pub async fn a_killed_workers_job_runs_again(db: &TestDb) {
    let s = &db.store;
    let id = s
        .enqueue(&job(&TestJob::Count { n: 1 }))
        .await
        .unwrap()
        .id();
    let started = Arc::new(AtomicBool::new(false));
    let settings = |name: &str| WorkerSettings {
        lease: Duration::from_millis(1000),
        heartbeat: Duration::from_millis(200),
        ..fast_settings(name)
    };
    let first = {
        let started = Arc::clone(&started);
        spawn_worker(s, settings("killed"), move |_, ctx| {
            let started = Arc::clone(&started);
            async move {
                if ctx.lease.attempt == 1 {
                    started.store(true, Ordering::SeqCst);
                    // Stuck until the process dies.
                    std::future::pending::<()>().await;
                }
                Ok(())
            }
        })
    };
    wait_for(
        "the first attempt to start",
        Duration::from_secs(10),
        || {
            let started = Arc::clone(&started);
            async move { started.load(Ordering::SeqCst) }
        },
    )
    .await;
    // Alive, it keeps the lease past its length: nobody else runs the job.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(status_of(s, id).await, JobStatus::Running);
    // Killed: no more heartbeats, no release.
    first.handle.abort();
    let _ = first.handle.await;

    let second = spawn_worker(s, settings("survivor"), |_, _| async { Ok(()) });
    wait_for("the job to run again", Duration::from_secs(15), || async {
        status_of(s, id).await == JobStatus::Done
    })
    .await;
    let report = second.stop().await;
    assert_eq!(report.completed, 1);
    let rec = s.job(id).await.unwrap();
    assert_eq!(rec.attempts, 2);
    assert!(rec.last_error.unwrap().contains("killed"));
}

pub async fn an_always_failing_job_ends_dead_with_its_error(db: &TestDb) {
    let s = &db.store;
    let id = s
        .enqueue(&job(&TestJob::Ping).max_attempts(4))
        .await
        .unwrap()
        .id();
    let w = spawn_worker(s, fast_settings("w"), |_, ctx| async move {
        Err(JobError::retry(format!(
            "boom on attempt {}",
            ctx.lease.attempt
        )))
    });
    wait_for("the job to die", Duration::from_secs(20), || async {
        status_of(s, id).await == JobStatus::Dead
    })
    .await;
    let report = w.stop().await;
    assert_eq!((report.retried, report.dead), (3, 1));
    let rec = s.job(id).await.unwrap();
    assert_eq!(rec.attempts, 4);
    assert_eq!(rec.last_error.as_deref(), Some("boom on attempt 4"));
    // Kept for inspection and retry.
    assert_eq!(
        s.jobs(&JobFilter::Status(JobStatus::Dead), Page::all())
            .await
            .unwrap()
            .len(),
        1
    );
}

pub async fn bad_payloads_and_permanent_errors_go_dead_at_once(db: &TestDb) {
    let s = &db.store;
    let foreign = s
        .enqueue(&NewJob::new(&ForeignJob::Unknown { x: 1 }).unwrap())
        .await
        .unwrap()
        .id();
    let permanent = s.enqueue(&job(&TestJob::Hang)).await.unwrap().id();
    let w = spawn_worker(s, fast_settings("w"), |_, _| async {
        Err(JobError::permanent("this input can never work"))
    });
    wait_for("both jobs to die", Duration::from_secs(10), || async {
        status_of(s, foreign).await == JobStatus::Dead
            && status_of(s, permanent).await == JobStatus::Dead
    })
    .await;
    w.stop().await;
    let f = s.job(foreign).await.unwrap();
    assert_eq!(f.attempts, 1);
    assert!(f.last_error.unwrap().contains("cannot read"));
    let p = s.job(permanent).await.unwrap();
    assert_eq!(p.attempts, 1);
    assert_eq!(p.last_error.as_deref(), Some("this input can never work"));
}

pub async fn shutdown_finishes_or_releases_running_jobs(db: &TestDb) {
    let s = &db.store;
    let started = Arc::new(AtomicBool::new(false));
    let handler = {
        let started = Arc::clone(&started);
        move |j: TestJob, _ctx| {
            let started = Arc::clone(&started);
            async move {
                started.store(true, Ordering::SeqCst);
                match j {
                    TestJob::Sleep { ms } => tokio::time::sleep(Duration::from_millis(ms)).await,
                    TestJob::Hang => std::future::pending::<()>().await,
                    _ => {}
                }
                Ok(())
            }
        }
    };
    let wait_started = || {
        let started = Arc::clone(&started);
        wait_for("the job to start", Duration::from_secs(10), move || {
            let started = Arc::clone(&started);
            async move { started.swap(false, Ordering::SeqCst) }
        })
    };

    // Within the grace period the running job finishes.
    let short = s
        .enqueue(&job(&TestJob::Sleep { ms: 300 }))
        .await
        .unwrap()
        .id();
    let w = spawn_worker(s, fast_settings("graceful"), handler.clone());
    wait_started().await;
    let report = w.stop().await;
    assert_eq!((report.completed, report.released), (1, 0));
    assert_eq!(status_of(s, short).await, JobStatus::Done);

    // Past it, the job goes back to the queue without using an attempt.
    let stuck = s.enqueue(&job(&TestJob::Hang)).await.unwrap().id();
    let settings = WorkerSettings {
        shutdown_grace: Duration::from_millis(200),
        ..fast_settings("impatient")
    };
    let w = spawn_worker(s, settings, handler);
    wait_started().await;
    let t = Instant::now();
    let report = w.stop().await;
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!((report.completed, report.released), (0, 1));
    let rec = s.job(stuck).await.unwrap();
    assert_eq!((rec.status, rec.attempts), (JobStatus::Queued, 0));
}

pub async fn long_jobs_see_the_shutdown_and_hand_themselves_back(db: &TestDb) {
    let s = &db.store;
    let started = Arc::new(AtomicBool::new(false));
    let handler = {
        let started = Arc::clone(&started);
        move |_: TestJob, ctx: store::JobContext| {
            let started = Arc::clone(&started);
            async move {
                assert!(!ctx.shutdown.is_requested());
                started.store(true, Ordering::SeqCst);
                ctx.shutdown.requested().await;
                assert!(ctx.shutdown.is_requested());
                Err(JobError::interrupted("stopped at a safe point"))
            }
        }
    };
    let id = s.enqueue(&job(&TestJob::Hang)).await.unwrap().id();
    // A grace period far longer than the test: the job must stop on the signal, not on the
    // grace period's cancellation.
    let settings = WorkerSettings {
        shutdown_grace: Duration::from_secs(600),
        ..fast_settings("signalled")
    };
    let w = spawn_worker(s, settings, handler);
    wait_for("the job to start", Duration::from_secs(10), || {
        let started = Arc::clone(&started);
        async move { started.load(Ordering::SeqCst) }
    })
    .await;
    let t = Instant::now();
    let report = w.stop().await;
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(
        (report.completed, report.released, report.retried),
        (0, 1, 0)
    );
    let rec = s.job(id).await.unwrap();
    assert_eq!((rec.status, rec.attempts), (JobStatus::Queued, 0));
}

pub async fn a_panicking_handler_is_retried(db: &TestDb) {
    let s = &db.store;
    let id = s.enqueue(&job(&TestJob::Ping)).await.unwrap().id();
    let w = spawn_worker(s, fast_settings("w"), |_, ctx| async move {
        assert!(ctx.lease.attempt > 1, "first attempt blows up");
        Ok(())
    });
    wait_for("the job to complete", Duration::from_secs(10), || async {
        status_of(s, id).await == JobStatus::Done
    })
    .await;
    let report = w.stop().await;
    assert_eq!((report.retried, report.completed), (1, 1));
    let err = s.job(id).await.unwrap().last_error.unwrap();
    assert!(
        err.contains("handler panicked") && err.contains("first attempt blows up"),
        "{err}"
    );
}

pub async fn schedules_enqueue_each_fire_time_once(db: &TestDb) {
    let s = &db.store;
    let template = job(&TestJob::Ping).queue("cron");
    assert!(matches!(
        s.set_schedule("bad", "every tuesday", &template).await,
        Err(Error::InvalidInput(_))
    ));
    let sched = s
        .set_schedule("ping", "* * * * * *", &template)
        .await
        .unwrap();
    assert!(sched.enabled && sched.last_run_at.is_none());
    assert!(sched.next_run_at > Utc::now() - chrono::Duration::seconds(1));

    // The callers' clock stands at each fire time in turn (`enqueue_due_at`): one second
    // apart, fire times on the wall clock would let a slow caller see the next one.
    // Six callers over two pools race for the same fire time.
    let pools = two_pools(db).await;
    let fire = sched.next_run_at;
    let racers: Vec<_> = (0..6)
        .map(|i| {
            let s = pools[i % 2].clone();
            tokio::spawn(async move { s.enqueue_due_at(fire).await.unwrap() })
        })
        .collect();
    let mut fired = Vec::new();
    for r in racers {
        fired.extend(r.await.unwrap());
    }
    assert_eq!(fired.len(), 1, "{fired:?}");
    let jobs = s
        .jobs(&JobFilter::Queue("cron".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].kind, "Ping");
    assert_eq!(jobs[0].dedupe_key.as_deref(), Some("schedule:ping"));

    // Its previous job still queued, the next fire time adds none.
    let sched = &s.schedules().await.unwrap()[0];
    assert!(sched.last_run_at.is_some());
    assert!(sched.next_run_at > fire);
    let due = s.enqueue_due_at(sched.next_run_at).await.unwrap();
    assert!(
        matches!(due[..], [Enqueued::Duplicate(id)] if id == jobs[0].id),
        "{due:?}"
    );

    // Paused, it fires no more.
    s.set_schedule_enabled("ping", false).await.unwrap();
    let sched = &s.schedules().await.unwrap()[0];
    assert!(!sched.enabled);
    assert!(
        s.enqueue_due_at(sched.next_run_at + chrono::Duration::hours(1))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(s.enqueue_due().await.unwrap().is_empty());

    s.delete_schedule("ping").await.unwrap();
    assert!(s.schedules().await.unwrap().is_empty());
    assert!(matches!(
        s.set_schedule_enabled("ping", true).await,
        Err(Error::NotFound { .. })
    ));
}

pub async fn counts_listing_and_purging(db: &TestDb) {
    let s = &db.store;
    let lease = Duration::from_secs(30);
    for n in 0..3 {
        s.enqueue(&job(&TestJob::Count { n }).queue("a"))
            .await
            .unwrap();
    }
    for n in 0..2 {
        s.enqueue(&job(&TestJob::Sleep { ms: n }).queue("b"))
            .await
            .unwrap();
    }
    let done = s.claim("a", "w", 1, lease).await.unwrap()[0].lease;
    s.complete(done).await.unwrap();
    let dead = s.claim("b", "w", 1, lease).await.unwrap()[0].lease;
    s.fail(dead, "no", Retry::Never).await.unwrap();

    let counts = s.counts().await.unwrap();
    assert_eq!(counts.len(), 2);
    assert_eq!(
        (counts[0].queue.as_str(), counts[0].queued, counts[0].done),
        ("a", 2, 1)
    );
    assert_eq!(
        (counts[1].queue.as_str(), counts[1].queued, counts[1].dead),
        ("b", 1, 1)
    );
    let by = |f: JobFilter| async move { s.jobs(&f, Page::all()).await.unwrap().len() };
    assert_eq!(by(JobFilter::All).await, 5);
    assert_eq!(by(JobFilter::Status(JobStatus::Dead)).await, 1);
    assert_eq!(by(JobFilter::Kind("Sleep".into())).await, 2);
    assert_eq!(by(JobFilter::Queue("a".into())).await, 3);
    assert_eq!(
        s.jobs(&JobFilter::All, Page::first(2)).await.unwrap().len(),
        2
    );

    assert_eq!(
        s.purge_done(Utc::now() - chrono::Duration::hours(1))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        s.purge_done(Utc::now() + chrono::Duration::seconds(1))
            .await
            .unwrap(),
        1
    );
    assert!(matches!(s.job(done.job).await, Err(Error::NotFound { .. })));
}

// ---------------------------------------------------------------------------------------
// crawls, frontiers and host states

pub(crate) fn new_crawl(max_pages: Option<u64>) -> store::NewCrawl {
    store::NewCrawl {
        seeds: vec![
            "http://例子.example/book/".into(),
            "http://b.example/".into(),
        ],
        settings: r#"{"max_depth":3}"#.into(),
        max_pages,
    }
}

pub(crate) fn entry(url: &str, depth: u32, rank: i16) -> store::NewFrontierEntry {
    store::NewFrontierEntry {
        url: url.to_owned(),
        depth,
        discovery: "link".into(),
        rank,
        parent: Some("http://例子.example/book/".into()),
        chain: None,
    }
}

pub(crate) async fn claim_entry(
    s: &Store,
    crawl: CrawlId,
    lease: Duration,
) -> Option<store::FrontierRecord> {
    match s.claim_frontier(crawl, None, lease).await.unwrap() {
        FrontierClaim::Entry(e) => Some(e),
        _ => None,
    }
}

/// Claims an entry of `crawl`, waiting as long as each claim says (a retry not yet due), as
/// a crawler does; within 30 s.
async fn claim_when_due(s: &Store, crawl: CrawlId, lease: Duration) -> store::FrontierRecord {
    let start = Instant::now();
    loop {
        match s.claim_frontier(crawl, None, lease).await.unwrap() {
            FrontierClaim::Entry(e) => return e,
            FrontierClaim::Wait(d) => {
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "no entry came due"
                );
                tokio::time::sleep(d).await;
            }
            FrontierClaim::Done => panic!("the frontier is done, with a retry left"),
        }
    }
}

pub async fn crawls_round_trip_and_change_status(db: &TestDb) {
    let s = &db.store;
    let err = s
        .create_crawl(&store::NewCrawl {
            seeds: vec![],
            ..new_crawl(None)
        })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    let id = s.create_crawl(&new_crawl(Some(10))).await.unwrap();
    let c = s.crawl(id).await.unwrap();
    assert_eq!(c.status, CrawlStatus::Queued);
    assert_eq!(c.seeds, new_crawl(None).seeds);
    assert_eq!(c.settings, r#"{"max_depth":3}"#);
    assert_eq!((c.max_pages, c.pages_claimed), (Some(10), 0));
    assert!(c.started_at.is_none() && c.finished_at.is_none());
    // A second crawl of the same site shares its site row.
    let again = s.create_crawl(&new_crawl(None)).await.unwrap();
    assert_ne!(again, id);
    assert_eq!(s.crawl(again).await.unwrap().site_id, c.site_id);

    s.set_crawl_status(id, CrawlStatus::Running, None)
        .await
        .unwrap();
    let running = s.crawl(id).await.unwrap();
    assert_eq!(running.status, CrawlStatus::Running);
    assert!(running.started_at.is_some() && running.finished_at.is_none());
    s.set_crawl_status(id, CrawlStatus::Failed, Some("store down"))
        .await
        .unwrap();
    let failed = s.crawl(id).await.unwrap();
    assert_eq!(failed.error.as_deref(), Some("store down"));
    assert!(failed.finished_at.is_some());
    assert_eq!(failed.started_at, running.started_at);
    s.set_crawl_budget(id, None).await.unwrap();
    assert_eq!(s.crawl(id).await.unwrap().max_pages, None);

    let missing = CrawlId(987_654);
    assert!(matches!(
        s.crawl(missing).await.unwrap_err(),
        Error::NotFound { .. }
    ));
    assert!(matches!(
        s.set_crawl_status(missing, CrawlStatus::Done, None)
            .await
            .unwrap_err(),
        Error::NotFound { .. }
    ));
    assert!(matches!(
        s.set_crawl_budget(missing, Some(1)).await.unwrap_err(),
        Error::NotFound { .. }
    ));
    // A frontier of an unknown crawl is refused by its foreign key.
    assert!(
        s.push_frontier(missing, &[entry("http://x.example/", 0, 2)])
            .await
            .is_err()
    );
}

pub async fn frontier_dedups_orders_retries_and_finishes(db: &TestDb) {
    let s = &db.store;
    let crawl = s.create_crawl(&new_crawl(None)).await.unwrap();
    let other = s.create_crawl(&new_crawl(None)).await.unwrap();
    let lease = Duration::from_secs(60);
    let added = s
        .push_frontier(
            crawl,
            &[
                entry("http://例子.example/2", 1, 3),
                entry("http://例子.example/book/", 0, 2),
                entry("http://例子.example/2", 1, 3),
                store::NewFrontierEntry {
                    chain: Some(("http://例子.example/book/".into(), 1)),
                    discovery: "pagination".into(),
                    ..entry("http://例子.example/book/_2", 1, 0)
                },
            ],
        )
        .await
        .unwrap();
    assert_eq!(added, 3);
    // Seen URLs stay seen, whatever their state; another crawl has a frontier of its own.
    assert_eq!(
        s.push_frontier(crawl, &[entry("http://例子.example/2", 0, 0)])
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        s.push_frontier(other, &[entry("http://例子.example/2", 0, 0)])
            .await
            .unwrap(),
        1
    );
    assert_eq!(s.push_frontier(crawl, &[]).await.unwrap(), 0);

    let a = claim_entry(s, crawl, lease).await.unwrap();
    assert_eq!((a.url.as_str(), a.depth), ("http://例子.example/book/", 0));
    assert_eq!(a.lease.claim, 1);
    assert_eq!(a.parent.as_deref(), Some("http://例子.example/book/"));
    let b = claim_entry(s, crawl, lease).await.unwrap();
    assert_eq!(b.url, "http://例子.example/book/_2");
    assert_eq!(b.discovery, "pagination");
    assert_eq!(b.chain, Some(("http://例子.example/book/".into(), 1)));
    let c = claim_entry(s, crawl, lease).await.unwrap();
    assert_eq!(c.url, "http://例子.example/2");
    // Nothing left, but entries are in flight: wait.
    assert!(matches!(
        s.claim_frontier(crawl, None, lease).await.unwrap(),
        FrontierClaim::Wait(_)
    ));
    let counts = s.frontier_counts(crawl).await.unwrap();
    assert_eq!(
        (counts.queued, counts.claimed, counts.pages_claimed),
        (0, 3, 3)
    );

    s.complete_frontier(a.lease, &FrontierOutcome::Done { status: 200 })
        .await
        .unwrap();
    s.complete_frontier(b.lease, &FrontierOutcome::Skipped("robots_denied".into()))
        .await
        .unwrap();
    // Completing twice: the claim is gone.
    assert!(matches!(
        s.complete_frontier(a.lease, &FrontierOutcome::Done { status: 200 })
            .await
            .unwrap_err(),
        Error::Conflict(_)
    ));
    // A retry comes back when due, with its attempt counted, before fresh entries. Due in
    // seconds, not milliseconds: the claims before it must see it not yet due on a machine
    // shared with builds.
    let retry_in = Duration::from_secs(2);
    s.push_frontier(crawl, &[entry("http://例子.example/3", 1, 3)])
        .await
        .unwrap();
    s.retry_frontier(c.lease, Utc::now() + retry_in, true)
        .await
        .unwrap();
    let fresh = claim_entry(s, crawl, lease).await.unwrap();
    assert_eq!(fresh.url, "http://例子.example/3");
    s.complete_frontier(fresh.lease, &FrontierOutcome::Failed("http_404".into()))
        .await
        .unwrap();
    match s.claim_frontier(crawl, None, lease).await.unwrap() {
        FrontierClaim::Wait(d) => assert!(d <= retry_in, "{d:?}"),
        other => panic!("expected a wait for the retry, got {other:?}"),
    }
    let again = claim_when_due(s, crawl, lease).await;
    assert_eq!(
        (again.url.as_str(), again.attempts),
        ("http://例子.example/2", 1)
    );
    assert_eq!(again.lease.claim, 2);
    // A retry that does not count (host busy) keeps the attempts.
    s.retry_frontier(again.lease, Utc::now(), false)
        .await
        .unwrap();
    let third = claim_entry(s, crawl, lease).await.unwrap();
    assert_eq!(third.attempts, 1);
    s.complete_frontier(third.lease, &FrontierOutcome::Done { status: 200 })
        .await
        .unwrap();
    assert_eq!(
        s.claim_frontier(crawl, None, lease).await.unwrap(),
        FrontierClaim::Done
    );
    let counts = s.frontier_counts(crawl).await.unwrap();
    assert_eq!(
        (
            counts.done,
            counts.skipped,
            counts.failed,
            counts.queued,
            counts.claimed
        ),
        (2, 1, 1, 0, 0)
    );
    // Retries do not spend budget: 4 distinct entries were claimed.
    assert_eq!(counts.pages_claimed, 4);
    assert_eq!(counts.finished(), 4);
    assert_eq!(s.frontier_counts(other).await.unwrap().queued, 1);
}

pub async fn the_page_budget_bounds_first_claims(db: &TestDb) {
    let s = &db.store;
    let crawl = s.create_crawl(&new_crawl(Some(2))).await.unwrap();
    let lease = Duration::from_secs(60);
    let entries: Vec<_> = (0..5)
        .map(|i| entry(&format!("http://a.example/{i}"), 1, 3))
        .collect();
    assert_eq!(s.push_frontier(crawl, &entries).await.unwrap(), 5);
    let a = claim_entry(s, crawl, lease).await.unwrap();
    let b = claim_entry(s, crawl, lease).await.unwrap();
    assert!(matches!(
        s.claim_frontier(crawl, None, lease).await.unwrap(),
        FrontierClaim::Wait(_)
    ));
    // A retry of a claimed entry is still allowed once the budget is spent.
    s.retry_frontier(a.lease, Utc::now(), true).await.unwrap();
    let a2 = claim_entry(s, crawl, lease).await.unwrap();
    assert_eq!(a2.url, a.url);
    for l in [a2.lease, b.lease] {
        s.complete_frontier(l, &FrontierOutcome::Done { status: 200 })
            .await
            .unwrap();
    }
    assert_eq!(
        s.claim_frontier(crawl, None, lease).await.unwrap(),
        FrontierClaim::Done
    );
    let counts = s.frontier_counts(crawl).await.unwrap();
    assert_eq!((counts.pages_claimed, counts.queued), (2, 3));
    // Raising the budget resumes the crawl.
    s.set_crawl_budget(crawl, Some(3)).await.unwrap();
    assert!(claim_entry(s, crawl, lease).await.is_some());
    assert!(matches!(
        s.claim_frontier(crawl, None, lease).await.unwrap(),
        FrontierClaim::Wait(_)
    ));
}

pub async fn expired_frontier_leases_come_back_and_are_fenced(db: &TestDb) {
    let s = &db.store;
    let crawl = s.create_crawl(&new_crawl(None)).await.unwrap();
    s.push_frontier(crawl, &[entry("http://a.example/1", 0, 2)])
        .await
        .unwrap();
    // A lease long enough that a loaded machine cannot let it run out before the first
    // reclaim below (100 ms did, once).
    let lease = Duration::from_secs(2);
    let dead = claim_entry(s, crawl, lease).await.unwrap();
    assert_eq!(s.reclaim_expired_frontier(crawl).await.unwrap(), 0);
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    assert_eq!(s.reclaim_expired_frontier(crawl).await.unwrap(), 1);
    assert_eq!(s.frontier_counts(crawl).await.unwrap().queued, 1);
    let live = claim_entry(s, crawl, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        (live.url.as_str(), live.lease.claim),
        ("http://a.example/1", 2)
    );
    // The dead worker's late writes are refused; the live one's go through.
    assert!(matches!(
        s.complete_frontier(dead.lease, &FrontierOutcome::Done { status: 200 })
            .await
            .unwrap_err(),
        Error::Conflict(_)
    ));
    assert!(matches!(
        s.retry_frontier(dead.lease, Utc::now(), true)
            .await
            .unwrap_err(),
        Error::Conflict(_)
    ));
    s.complete_frontier(live.lease, &FrontierOutcome::Done { status: 200 })
        .await
        .unwrap();
    // The claim itself reclaims: no separate reaper is needed.
    s.push_frontier(crawl, &[entry("http://a.example/2", 0, 2)])
        .await
        .unwrap();
    claim_entry(s, crawl, Duration::from_millis(50))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(80)).await;
    let back = claim_entry(s, crawl, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(back.url, "http://a.example/2");
    // Only one distinct entry's first claim spent budget each.
    assert_eq!(s.frontier_counts(crawl).await.unwrap().pages_claimed, 2);
}

pub async fn concurrent_frontier_claims_never_share_an_entry(db: &TestDb) {
    const ENTRIES: usize = 300;
    let crawl = db.store.create_crawl(&new_crawl(Some(250))).await.unwrap();
    let entries: Vec<_> = (0..ENTRIES)
        .map(|i| entry(&format!("http://a.example/{i}"), (i % 3) as u32, 3))
        .collect();
    db.store.push_frontier(crawl, &entries).await.unwrap();
    let pools = two_pools(db).await;
    let tasks: Vec<_> = (0..6)
        .map(|i| {
            let s = pools[i % 2].clone();
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    match s
                        .claim_frontier(crawl, None, Duration::from_secs(60))
                        .await
                        .unwrap()
                    {
                        FrontierClaim::Entry(e) => {
                            s.complete_frontier(e.lease, &FrontierOutcome::Done { status: 200 })
                                .await
                                .unwrap();
                            mine.push(e.url);
                        }
                        FrontierClaim::Wait(d) => tokio::time::sleep(d).await,
                        FrontierClaim::Done => return mine,
                    }
                }
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for t in tasks {
        for url in t.await.unwrap() {
            assert!(seen.insert(url.clone()), "{url} claimed twice");
        }
    }
    // The budget holds exactly under concurrent claims.
    assert_eq!(seen.len(), 250);
    let counts = db.store.frontier_counts(crawl).await.unwrap();
    assert_eq!(
        (counts.pages_claimed, counts.done, counts.queued),
        (250, 250, 50)
    );
}

pub async fn host_state_updates_are_serialised(db: &TestDb) {
    let s = &db.store;
    assert_eq!(s.host_state("例子.example").await.unwrap(), None);
    let until = chrono::DateTime::from_timestamp_millis(1_800_000_000_123).unwrap();
    let seen = s
        .update_host_state("例子.example", |h| {
            let before = h.clone();
            h.next_allowed_at = Some(until);
            h.leases.push(store::HostLease {
                id: u64::MAX,
                expires_at: until,
                run: None,
            });
            before
        })
        .await
        .unwrap();
    assert_eq!(seen, store::HostStateRecord::default());
    let stored = s.host_state("例子.example").await.unwrap().unwrap();
    assert_eq!(stored.next_allowed_at, Some(until));
    assert_eq!(stored.leases[0].id, u64::MAX);
    assert_eq!(stored.leases[0].expires_at, until);

    // Read-modify-write from many tasks on two pools: no update is lost.
    let pools = two_pools(db).await;
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let s = pools[i % 2].clone();
            tokio::spawn(async move {
                s.update_host_state("busy.example", |h| {
                    h.consecutive_failures += 1;
                    h.leases.push(store::HostLease {
                        id: i as u64,
                        expires_at: Utc::now(),
                        run: None,
                    });
                })
                .await
                .unwrap();
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let busy = s.host_state("busy.example").await.unwrap().unwrap();
    assert_eq!(busy.consecutive_failures, 40);
    assert_eq!(busy.leases.len(), 40);
    // Another host is untouched.
    assert_eq!(
        s.host_state("例子.example")
            .await
            .unwrap()
            .unwrap()
            .consecutive_failures,
        0
    );
}

pub(crate) async fn stored_page(s: &Store, crawl: Option<CrawlId>, url: &str, sha: u8, len: u64) {
    let (id, _) = s
        .insert_snapshot(
            &store::NewSnapshot {
                crawl,
                body_len: len,
                ..new_snapshot(url, sha, None)
            },
            Some(&b"z"[..]),
        )
        .await
        .unwrap();
    s.insert_page_text(&store::testing::sample_page_text(id, url, "正文"))
        .await
        .unwrap();
}

pub async fn crawl_totals_are_counted_from_what_is_stored(db: &TestDb) {
    let s = &db.store;
    let id = s.create_crawl(&new_crawl(None)).await.unwrap();
    let other = s.create_crawl(&new_crawl(None)).await.unwrap();
    let c = s.crawl(id).await.unwrap();
    assert_eq!((c.pages_fetched, c.pages_failed, c.bytes), (0, 0, 0));
    stored_page(s, Some(id), "http://a.example/1", 1, 5_000_000_000).await;
    stored_page(s, Some(id), "http://a.example/2", 2, 10).await;
    // The same response stored again by the same crawl (a runner killed before it recorded
    // the page done) is the stored row; a changed page is evidence of its own but still
    // one page.
    stored_page(s, Some(id), "http://a.example/2", 2, 10).await;
    stored_page(s, Some(id), "http://a.example/2", 3, 7).await;
    // Another crawl's pages and pages of no crawl count for neither.
    stored_page(s, Some(other), "http://a.example/1", 1, 5_000_000_000).await;
    stored_page(s, None, "http://a.example/3", 4, 1).await;
    // Failures: failed for good, or done with an error status; skipped entries are not.
    s.push_frontier(
        id,
        &[
            entry("http://a.example/f1", 0, 2),
            entry("http://a.example/f2", 0, 2),
            entry("http://a.example/s", 0, 2),
            entry("http://a.example/ok", 0, 2),
        ],
    )
    .await
    .unwrap();
    let outcomes = [
        FrontierOutcome::Failed("timeout".into()),
        FrontierOutcome::Done { status: 404 },
        FrontierOutcome::Skipped("robots_denied".into()),
        FrontierOutcome::Done { status: 200 },
    ];
    for outcome in &outcomes {
        let e = claim_entry(s, id, Duration::from_secs(60)).await.unwrap();
        s.complete_frontier(e.lease, outcome).await.unwrap();
    }
    let c = s.crawl(id).await.unwrap();
    assert_eq!(
        (c.pages_fetched, c.pages_failed, c.bytes),
        (2, 2, 5_000_000_017)
    );
    let o = s.crawl(other).await.unwrap();
    assert_eq!((o.pages_fetched, o.pages_failed), (1, 0));
    // A status change writes the same totals into the row for plain-SQL readers.
    s.set_crawl_status(id, CrawlStatus::Done, None)
        .await
        .unwrap();
    let sql = "SELECT CAST(pages_fetched AS BIGINT), CAST(pages_failed AS BIGINT), bytes \
               FROM crawls WHERE id = $1";
    let (pages, failed, bytes): (i64, i64, i64) = match db.kind() {
        BackendKind::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            let q = sqlx::query_as(sql).bind(id.0);
            q.fetch_one(&mut c).await.unwrap()
        }
        BackendKind::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
            let q = sqlx::query_as(sql).bind(id.0);
            q.fetch_one(&mut c).await.unwrap()
        }
    };
    assert_eq!((pages, failed, bytes), (2, 2, 5_000_000_017));
}

pub async fn dead_runs_give_their_claims_back_at_once(db: &TestDb) {
    let s = &db.store;
    let crawl = s.create_crawl(&new_crawl(None)).await.unwrap();
    assert!(matches!(
        s.start_crawl_run(CrawlId(987_654), Duration::from_secs(1))
            .await
            .unwrap_err(),
        Error::NotFound { .. }
    ));
    assert!(matches!(
        s.start_crawl_run(crawl, Duration::ZERO).await.unwrap_err(),
        Error::InvalidInput(_)
    ));
    let entries: Vec<_> = (0..4)
        .map(|i| entry(&format!("http://a.example/{i}"), 0, 2))
        .collect();
    s.push_frontier(crawl, &entries).await.unwrap();
    // An hour's lease: only the runs' liveness can bring these entries back in this test.
    let lease = Duration::from_secs(3600);
    let dead_after = Duration::from_millis(1500);
    let killed = s.start_crawl_run(crawl, dead_after).await.unwrap();
    let live = s.start_crawl_run(crawl, dead_after).await.unwrap();
    let claim = |run| async move {
        match s.claim_frontier(crawl, Some(run), lease).await.unwrap() {
            FrontierClaim::Entry(e) => e,
            other => panic!("expected an entry, got {other:?}"),
        }
    };
    let lost = claim(killed).await;
    let kept = claim(live).await;
    // Each run holds a fetch slot on a host, for an hour.
    let hour = Utc::now() + chrono::Duration::hours(1);
    s.update_host_state("runs.example", |h| {
        for (id, run) in [(1, killed), (2, live)] {
            h.leases.push(store::HostLease {
                id,
                expires_at: hour,
                run: Some(run),
            });
        }
    })
    .await
    .unwrap();
    let runs = s.crawl_runs(crawl).await.unwrap();
    assert_eq!(
        runs.iter()
            .map(|r| (r.id, r.alive, r.claims))
            .collect::<Vec<_>>(),
        vec![(killed, true, 1), (live, true, 1)]
    );
    // The live run beats; the killed one does not. Once its dead_after has passed its
    // entry is claimable again, the live run's is not.
    let deadline = Instant::now() + dead_after + Duration::from_millis(300);
    while Instant::now() < deadline {
        s.heartbeat_crawl_run(live).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let runs = s.crawl_runs(crawl).await.unwrap();
    assert_eq!(
        runs.iter().map(|r| (r.id, r.alive)).collect::<Vec<_>>(),
        vec![(killed, false), (live, true)]
    );
    // The dead run's host slot is free; the live run's is kept.
    let slots = s
        .update_host_state("runs.example", |h| {
            h.leases.iter().map(|l| l.id).collect::<Vec<_>>()
        })
        .await
        .unwrap();
    assert_eq!(slots, vec![2]);
    let resumed = s.start_crawl_run(crawl, dead_after).await.unwrap();
    let mut urls = HashSet::new();
    while let FrontierClaim::Entry(e) = s.claim_frontier(crawl, Some(resumed), lease).await.unwrap()
    {
        assert_ne!(e.url, kept.url, "a live run lost its claim");
        urls.insert(e.url);
    }
    assert!(
        urls.contains(&lost.url),
        "the dead run's entry never came back"
    );
    assert_eq!(urls.len(), 3);
    // The dead run's late completion is fenced; the live run's goes through.
    assert!(matches!(
        s.complete_frontier(lost.lease, &FrontierOutcome::Done { status: 200 })
            .await
            .unwrap_err(),
        Error::Conflict(_)
    ));
    s.complete_frontier(kept.lease, &FrontierOutcome::Done { status: 200 })
        .await
        .unwrap();
    // Ending a run gives its claims back at once and takes it off the list; twice is fine.
    let counts = s.frontier_counts(crawl).await.unwrap();
    assert_eq!((counts.claimed, counts.queued), (3, 0));
    assert_eq!(s.end_crawl_run(resumed).await.unwrap(), 3);
    assert_eq!(s.end_crawl_run(resumed).await.unwrap(), 0);
    assert_eq!(s.frontier_counts(crawl).await.unwrap().queued, 3);
    assert!(matches!(
        s.heartbeat_crawl_run(resumed).await.unwrap_err(),
        Error::NotFound { .. }
    ));
    assert!(matches!(
        s.end_crawl_run(store::CrawlRunId(987_654))
            .await
            .unwrap_err(),
        Error::NotFound { .. }
    ));
    let listed: Vec<_> = s
        .crawl_runs(crawl)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, vec![killed, live]);
}

// ---------------------------------------------------------------------------------------
// crawl evidence

pub(crate) fn new_snapshot(url: &str, sha: u8, etag: Option<&str>) -> store::NewSnapshot {
    store::NewSnapshot {
        crawl: None,
        url: url.to_owned(),
        final_url: format!("{url}?final"),
        status: 200,
        http_version: "HTTP/1.1".into(),
        headers: vec![("content-type".into(), "text/html; charset=gbk".into())],
        header_block: b"content-type: text/html; charset=gbk\r\nx-raw: \xb5\xda\r\n".to_vec(),
        request_header_block: b"user-agent: copyhound\r\n".to_vec(),
        content_type: Some("text/html; charset=gbk".into()),
        redirects: "[]".into(),
        sha256: [sha; 32],
        body_len: 12,
        body_status: "complete".into(),
        fetched_at: chrono::DateTime::from_timestamp_millis(1_795_000_000_000).unwrap(),
        elapsed_ms: 37,
        remote_addr: Some("127.0.0.1:80".into()),
        etag: etag.map(str::to_owned),
        last_modified: None,
        wire: None,
    }
}

pub async fn evidence_bodies_are_stored_once(db: &TestDb) {
    let s = &db.store;
    assert!(!s.has_body(&[1; 32]).await.unwrap());
    // No body given and none stored: refused, nothing written.
    let err = s
        .insert_snapshot(&new_snapshot("http://例子.example/a", 1, None), None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert!(s.snapshots(Page::all()).await.unwrap().is_empty());

    let (a, new_a) = s
        .insert_snapshot(
            &new_snapshot("http://例子.example/a", 1, Some("\"v1\"")),
            Some(&b"zstd-a"[..]),
        )
        .await
        .unwrap();
    assert!(new_a);
    assert!(s.has_body(&[1; 32]).await.unwrap());
    // The same body at another URL, given again or not: one body row.
    let (b, new_b) = s
        .insert_snapshot(
            &new_snapshot("http://例子.example/b", 1, None),
            Some(&b"other"[..]),
        )
        .await
        .unwrap();
    let (c, new_c) = s
        .insert_snapshot(&new_snapshot("http://例子.example/c", 1, None), None)
        .await
        .unwrap();
    assert!(!new_b && !new_c);
    assert!(a < b && b < c);
    let body = s.body(&[1; 32]).await.unwrap().unwrap();
    assert_eq!(
        (body.bytes, body.len),
        (store::BodyBytes::Zstd(b"zstd-a".to_vec()), 12)
    );
    assert_eq!(s.body(&[9; 32]).await.unwrap(), None);

    let rows = s.snapshots(Page::all()).await.unwrap();
    assert_eq!(rows.len(), 3);
    let first = &rows[0];
    assert_eq!(first.url, "http://例子.example/a");
    assert_eq!(first.final_url, "http://例子.example/a?final");
    assert_eq!(
        first.header_block.as_deref(),
        Some(&b"content-type: text/html; charset=gbk\r\nx-raw: \xb5\xda\r\n"[..])
    );
    assert_eq!(first.elapsed_ms, Some(37));
    assert_eq!(first.etag.as_deref(), Some("\"v1\""));
    assert_eq!(
        first.fetched_at,
        chrono::DateTime::from_timestamp_millis(1_795_000_000_000).unwrap()
    );
    let page = s
        .snapshots(Page {
            after: Some(a),
            limit: Some(1),
        })
        .await
        .unwrap();
    assert_eq!(page.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b]);
}

pub async fn wire_bodies_are_kept_beside_decoded_ones_and_stored_once(db: &TestDb) {
    let s = &db.store;
    let count = || async {
        let mut n = 0;
        for sha in [[1u8; 32], [2; 32], [3; 32]] {
            n += usize::from(s.has_body(&sha).await.unwrap());
        }
        n
    };
    // An encoded response: the decoded body (sha 1) and the bytes as served (sha 2).
    let encoded = store::NewSnapshot {
        wire: Some(store::NewWireBody {
            sha256: [2; 32],
            len: 5,
            zstd: Some(b"wire".to_vec()),
        }),
        ..new_snapshot("http://例子.example/gz", 1, None)
    };
    let (a, _) = s
        .insert_snapshot(&encoded, Some(&b"decoded"[..]))
        .await
        .unwrap();
    assert_eq!(count().await, 2);
    let row = s.snapshot(a).await.unwrap();
    assert_eq!(
        (row.sha256, row.wire_sha256, row.wire_len),
        ([1; 32], Some([2; 32]), Some(5))
    );
    let wire = s.body(&[2; 32]).await.unwrap().unwrap();
    assert_eq!(
        (wire.bytes, wire.len),
        (store::BodyBytes::Zstd(b"wire".to_vec()), 5)
    );
    // The same bytes served again, not given: found, not stored twice.
    let again = store::NewSnapshot {
        wire: Some(store::NewWireBody {
            zstd: None,
            ..encoded.wire.clone().unwrap()
        }),
        ..new_snapshot("http://例子.example/gz2", 1, None)
    };
    s.insert_snapshot(&again, None).await.unwrap();
    // Wire bytes neither given nor stored: refused, nothing written.
    let unknown = store::NewSnapshot {
        wire: Some(store::NewWireBody {
            sha256: [3; 32],
            len: 5,
            zstd: None,
        }),
        ..new_snapshot("http://例子.example/gz3", 1, None)
    };
    let err = s.insert_snapshot(&unknown, None).await.unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert_eq!(s.snapshots(Page::all()).await.unwrap().len(), 2);
    // An identity response names its one body twice and stores nothing more.
    let identity = store::NewSnapshot {
        wire: Some(store::NewWireBody {
            sha256: [1; 32],
            len: 12,
            zstd: Some(b"never stored".to_vec()),
        }),
        ..new_snapshot("http://例子.example/plain", 1, None)
    };
    let (c, _) = s.insert_snapshot(&identity, None).await.unwrap();
    assert_eq!(count().await, 2);
    assert_eq!(s.snapshot(c).await.unwrap().wire_sha256, Some([1; 32]));
    assert_eq!(
        s.body(&[1; 32]).await.unwrap().unwrap().bytes,
        store::BodyBytes::Zstd(b"decoded".to_vec())
    );
    // A row written without wire bytes says so.
    let (d, _) = s
        .insert_snapshot(&new_snapshot("http://例子.example/old", 1, None), None)
        .await
        .unwrap();
    let old = s.snapshot(d).await.unwrap();
    assert_eq!((old.wire_sha256, old.wire_len), (None, None));
    let err = s.snapshot(store::SnapshotId(d.0 + 100)).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
}

pub async fn the_latest_validated_response_is_found_by_either_url(db: &TestDb) {
    let s = &db.store;
    let url = "http://例子.example/a";
    assert!(s.latest_validated(url).await.unwrap().is_none());
    // Without validators a response cannot be revalidated.
    s.insert_snapshot(&new_snapshot(url, 1, None), Some(&b"z"[..]))
        .await
        .unwrap();
    assert!(s.latest_validated(url).await.unwrap().is_none());
    let (old, _) = s
        .insert_snapshot(&new_snapshot(url, 2, Some("\"v1\"")), Some(&b"z"[..]))
        .await
        .unwrap();
    let (new, _) = s
        .insert_snapshot(&new_snapshot(url, 3, Some("\"v2\"")), Some(&b"z"[..]))
        .await
        .unwrap();
    assert!(old < new);
    let found = s.latest_validated(url).await.unwrap().unwrap();
    assert_eq!((found.id, found.sha256), (new, [3; 32]));
    let by_final = s
        .latest_validated(&format!("{url}?final"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_final.id, new);
    // Errors and truncated bodies are not revalidated.
    let mut err = new_snapshot(url, 4, Some("\"v3\""));
    err.status = 500;
    s.insert_snapshot(&err, Some(&b"z"[..])).await.unwrap();
    let mut cut = new_snapshot(url, 5, Some("\"v4\""));
    cut.body_status = "truncated".into();
    s.insert_snapshot(&cut, Some(&b"z"[..])).await.unwrap();
    assert_eq!(s.latest_validated(url).await.unwrap().unwrap().id, new);
}

/// A `304 Not Modified` stored as a revisit: the row keeps the empty body it received and
/// names its capture, whose SHA-256 is what gets stamped; never a response to revalidate.
pub async fn a_revisit_names_its_capture_and_takes_its_digest(db: &TestDb) {
    use store::Timestamps;
    let s = &db.store;
    let url = "http://例子.example/a";
    let (capture, _) = s
        .insert_snapshot(&new_snapshot(url, 2, Some("\"v1\"")), Some(&b"z"[..]))
        .await
        .unwrap();
    let mut not_modified = new_snapshot(url, 0, Some("\"v1\""));
    not_modified.status = 304;
    not_modified.body_len = 0;
    // A capture that is not stored: refused, nothing written.
    let unknown = store::SnapshotId(capture.0 + 100);
    let err = s
        .insert_revisit(&not_modified, Some(&b"e"[..]), unknown)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert_eq!(s.snapshots(Page::all()).await.unwrap().len(), 1);

    let (revisit, _) = s
        .insert_revisit(&not_modified, Some(&b"e"[..]), capture)
        .await
        .unwrap();
    let row = s.snapshot(revisit).await.unwrap();
    assert_eq!((row.status, row.sha256), (304, [0; 32]));
    assert_eq!(row.revisit_of, Some(capture));
    assert_eq!(s.snapshot(capture).await.unwrap().revisit_of, None);
    assert_eq!(s.snapshot_sha256(revisit).await.unwrap(), [2; 32]);
    assert_eq!(s.snapshot_sha256(capture).await.unwrap(), [2; 32]);
    assert_eq!(s.latest_validated(url).await.unwrap().unwrap().id, capture);
}

pub async fn page_texts_are_stored_and_replaced(db: &TestDb) {
    let s = &db.store;
    let (id, _) = s
        .insert_snapshot(
            &new_snapshot("http://例子.example/a", 1, None),
            Some(&b"z"[..]),
        )
        .await
        .unwrap();
    assert!(matches!(
        s.page_text(id).await.unwrap_err(),
        Error::NotFound { .. }
    ));
    let mut page = store::NewPageText {
        snapshot: id,
        url: "http://例子.example/a".into(),
        depth: 2,
        chain: Some(("http://例子.example/a".into(), 0)),
        kind: "content".into(),
        title: Some("三国演义".into()),
        chapter_title: Some("第一回".into()),
        body: "话说天下大势，分久必合".into(),
        encoding: "GBK".into(),
        decode_errors: false,
        not_modified: false,
        fetched_at: Utc::now(),
        text_source: "markup".into(),
        text_snapshot: None,
        declared_encoding: None,
    };
    s.insert_page_text(&page).await.unwrap();
    let text = s.page_text(id).await.unwrap();
    assert_eq!(
        (text.body.as_str(), text.depth, text.kind.as_str()),
        ("话说天下大势，分久必合", 2, "content")
    );
    assert_eq!(text.chapter_title.as_deref(), Some("第一回"));
    page.body = "合久必分".into();
    page.kind = "index".into();
    s.insert_page_text(&page).await.unwrap();
    let text = s.page_text(id).await.unwrap();
    assert_eq!(
        (text.body.as_str(), text.kind.as_str()),
        ("合久必分", "index")
    );
    assert_eq!(
        (text.text_source.as_str(), text.text_snapshot),
        ("markup", None)
    );
    // A text fetched from the page's content endpoint names the endpoint's snapshot.
    let (endpoint, _) = s
        .insert_snapshot(
            &new_snapshot("http://例子.example/api/a.json", 2, None),
            Some(&b"z"[..]),
        )
        .await
        .unwrap();
    page.text_source = "endpoint".into();
    page.text_snapshot = Some(endpoint);
    s.insert_page_text(&page).await.unwrap();
    let text = s.page_text(id).await.unwrap();
    assert_eq!(
        (text.text_source.as_str(), text.text_snapshot),
        ("endpoint", Some(endpoint))
    );
    page.text_source = "script".into();
    page.text_snapshot = None;
    s.insert_page_text(&page).await.unwrap();
    let text = s.page_text(id).await.unwrap();
    assert_eq!(
        (text.text_source.as_str(), text.text_snapshot),
        ("script", None)
    );
    assert_eq!(text.declared_encoding, None);
    // A page decoded in another charset than it declared says which it declared.
    page.declared_encoding = Some("windows-1252".into());
    s.insert_page_text(&page).await.unwrap();
    let text = s.page_text(id).await.unwrap();
    assert_eq!(
        (text.encoding.as_str(), text.declared_encoding.as_deref()),
        ("GBK", Some("windows-1252"))
    );
    // Read with others in one query: the same text; an id without a text is left out, and
    // more ids than one statement takes are read in several.
    let one = s.page_text(id).await.unwrap();
    let mut ids: Vec<store::SnapshotId> = (1..=store::PAGE_TEXTS_AT_ONCE as i64 + 5)
        .map(|n| store::SnapshotId(id.0 + 10_000 + n))
        .collect();
    ids.push(id);
    let many = s.page_texts(&ids).await.unwrap();
    assert_eq!(many.len(), 1);
    assert_eq!(many[0], one);
    assert!(s.page_texts(&[]).await.unwrap().is_empty());
    // A page text needs its snapshot.
    page.snapshot = store::SnapshotId(id.0 + 1000);
    assert!(s.insert_page_text(&page).await.is_err());
}

pub async fn concurrent_pushes_of_shared_links_all_succeed(db: &TestDb) {
    // Every page of a site links to the same navigation: runners push overlapping sets at
    // once, in page order. None may fail (a deadlock on Postgres) and each URL is new once.
    let crawl = db.store.create_crawl(&new_crawl(None)).await.unwrap();
    let pools = two_pools(db).await;
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let s = pools[i % 2].clone();
            tokio::spawn(async move {
                let mut added = 0;
                for round in 0..5 {
                    let mut links: Vec<_> = (0..60)
                        .map(|n| {
                            entry(&format!("http://a.example/{}", (n * 7 + round) % 100), 1, 3)
                        })
                        .collect();
                    if i % 2 == 1 {
                        links.reverse();
                    }
                    added += s.push_frontier(crawl, &links).await.unwrap();
                }
                added
            })
        })
        .collect();
    let mut added = 0;
    for t in tasks {
        added += t.await.unwrap();
    }
    let distinct: HashSet<u32> = (0..5)
        .flat_map(|round| (0..60).map(move |n| (n * 7 + round) % 100))
        .collect();
    assert_eq!(added, distinct.len() as u64);
    assert_eq!(db.store.frontier_counts(crawl).await.unwrap().queued, added);
}

// ---------------------------------------------------------------------------------------
// matches

pub async fn a_pages_matches_are_replaced_as_a_whole(db: &TestDb) {
    let s = &db.store;
    let work = created(s.insert_work(&sample_work("红楼梦", 41)).await.unwrap());
    let chapters = s.chapters(work).await.unwrap();
    let (snapshot, _) = s
        .insert_snapshot(
            &new_snapshot("http://盗版.example/1.html", 41, None),
            Some(&b"p"[..]),
        )
        .await
        .unwrap();
    assert!(s.matches_of(snapshot).await.unwrap().is_empty());

    let found = |chapter: usize, score: f64| store::NewMatch {
        chapter_id: chapters[chapter].id,
        work_id: work,
        method: "winnow".into(),
        score,
        coverage: score / 2.0,
        matched_chars: 1200 + chapter as u32,
        chapter_chars: 3000,
        page_chars: 5000,
        page_share: 0.25,
        passages: r#"[{"page":[0,30],"chapter":[3,33],"chars":10}]"#.into(),
    };
    s.record_matches(snapshot, &[found(1, 0.9), found(0, 0.5)], "worker")
        .await
        .unwrap();
    let stored = s.matches_of(snapshot).await.unwrap();
    // By chapter, whatever the order given.
    let got: Vec<_> = stored.iter().map(|m| m.found.clone()).collect();
    assert_eq!(got, vec![found(0, 0.5), found(1, 0.9)]);
    let case = stored[0].case_id.expect("a case for the site and work");
    assert!(
        stored
            .iter()
            .all(|m| m.snapshot_id == snapshot && m.case_id == Some(case) && m.latest)
    );
    let first_id = stored[0].id;

    // A re-check: chapter 0 scored again (same row, new figures), chapter 1 gone, 2 new.
    s.record_matches(snapshot, &[found(0, 0.7), found(2, 0.4)], "worker")
        .await
        .unwrap();
    let stored = s.matches_of(snapshot).await.unwrap();
    let got: Vec<_> = stored.iter().map(|m| m.found.clone()).collect();
    assert_eq!(got, vec![found(0, 0.7), found(2, 0.4)]);
    assert_eq!(stored[0].id, first_id, "an updated match keeps its row");

    // Nothing found any more: no match left.
    s.record_matches(snapshot, &[], "worker").await.unwrap();
    assert!(s.matches_of(snapshot).await.unwrap().is_empty());

    // A match of a deleted work goes with it.
    s.record_matches(snapshot, &[found(1, 0.9)], "worker")
        .await
        .unwrap();
    s.delete_work(work).await.unwrap();
    assert!(s.matches_of(snapshot).await.unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------
// what the CLI shows of crawls, and operators' changes to works

/// One `i64` from `sql`, read on a connection of its own.
async fn scalar(db: &TestDb, sql: &str) -> i64 {
    match db.kind() {
        BackendKind::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
                .fetch_one(&mut c)
                .await
                .unwrap()
        }
        BackendKind::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
                .fetch_one(&mut c)
                .await
                .unwrap()
        }
    }
}

/// `actor, action, target_type, target_id, details` of every `audit_log` row, oldest first,
/// with `details` parsed.
async fn audit_rows(db: &TestDb) -> Vec<(String, String, String, i64, serde_json::Value)> {
    let sql = "SELECT actor, action, target_type, target_id, details FROM audit_log ORDER BY id";
    let rows: Vec<(String, String, String, i64, String)> = match db.kind() {
        BackendKind::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            sqlx::query_as(sql).fetch_all(&mut c).await.unwrap()
        }
        BackendKind::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
            sqlx::query_as(sql).fetch_all(&mut c).await.unwrap()
        }
    };
    rows.into_iter()
        .map(|(a, b, c, d, e)| (a, b, c, d, serde_json::from_str(&e).unwrap()))
        .collect()
}

/// A snapshot of `crawl` at `url` with body `sha`, and its page text of `kind`.
async fn crawl_page(s: &Store, crawl: CrawlId, url: &str, sha: u8, kind: &str) -> SnapshotId {
    let (id, _) = s
        .insert_snapshot(
            &store::NewSnapshot {
                crawl: Some(crawl),
                ..new_snapshot(url, sha, None)
            },
            Some(&b"z"[..]),
        )
        .await
        .unwrap();
    s.insert_page_text(&store::NewPageText {
        snapshot: id,
        url: url.to_owned(),
        depth: 1,
        chain: None,
        kind: kind.into(),
        title: None,
        chapter_title: None,
        body: "正文".into(),
        encoding: "UTF-8".into(),
        decode_errors: false,
        not_modified: false,
        fetched_at: Utc::now(),
        text_source: "markup".into(),
        text_snapshot: None,
        declared_encoding: None,
    })
    .await
    .unwrap();
    id
}

pub async fn crawls_are_listed_newest_first_by_status(db: &TestDb) {
    let s = &db.store;
    assert!(
        s.crawls(&CrawlFilter::All, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let a = s.create_crawl(&new_crawl(Some(5))).await.unwrap();
    let b = s.create_crawl(&new_crawl(None)).await.unwrap();
    let c = s.create_crawl(&new_crawl(None)).await.unwrap();
    s.set_crawl_status(a, CrawlStatus::Done, None)
        .await
        .unwrap();
    s.set_crawl_status(c, CrawlStatus::Failed, Some("磁盘满了"))
        .await
        .unwrap();
    stored_page(s, Some(b), "http://a.example/1", 1, 300).await;

    let ids = |rows: Vec<store::CrawlRecord>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = s.crawls(&CrawlFilter::All, None, 10).await.unwrap();
    assert_eq!(ids(all.clone()), vec![c, b, a]);
    // The same records as one crawl's read, totals counted afresh.
    assert_eq!(all[1], s.crawl(b).await.unwrap());
    assert_eq!((all[1].pages_fetched, all[1].bytes), (1, 300));
    assert_eq!(all[0].error.as_deref(), Some("磁盘满了"));
    // Keyset pages: after the last id seen.
    let first = s.crawls(&CrawlFilter::All, None, 2).await.unwrap();
    assert_eq!(ids(first.clone()), vec![c, b]);
    let next = s
        .crawls(&CrawlFilter::All, Some(first[1].id), 2)
        .await
        .unwrap();
    assert_eq!(ids(next), vec![a]);
    assert!(
        s.crawls(&CrawlFilter::All, Some(a), 2)
            .await
            .unwrap()
            .is_empty()
    );
    let by = |status| async move {
        ids(s
            .crawls(&CrawlFilter::Status(status), None, 10)
            .await
            .unwrap())
    };
    assert_eq!(by(CrawlStatus::Done).await, vec![a]);
    assert_eq!(by(CrawlStatus::Queued).await, vec![b]);
    assert_eq!(by(CrawlStatus::Failed).await, vec![c]);
    assert!(by(CrawlStatus::Running).await.is_empty());
    // By site: a crawl of another origin is another site's.
    let other = s
        .create_crawl(&store::NewCrawl {
            seeds: vec!["http://b.example/".into()],
            ..new_crawl(None)
        })
        .await
        .unwrap();
    let site_of = |id| async move { s.crawl(id).await.unwrap().site_id };
    let (site, other_site) = (site_of(a).await, site_of(other).await);
    assert_ne!(site, other_site);
    let of = |filter| async move { ids(s.crawls(&filter, None, 10).await.unwrap()) };
    assert_eq!(of(CrawlFilter::Site(site)).await, vec![c, b, a]);
    assert_eq!(of(CrawlFilter::Unfinished(site)).await, vec![b]);
    assert_eq!(of(CrawlFilter::Site(other_site)).await, vec![other]);
    assert!(of(CrawlFilter::Site(other_site + 99)).await.is_empty());
    assert!(
        s.crawls(&CrawlFilter::All, None, 0)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn a_crawls_detail_counts_what_is_stored(db: &TestDb) {
    let s = &db.store;
    assert!(matches!(
        s.crawl_detail(CrawlId(424_242)).await.unwrap_err(),
        Error::NotFound { .. }
    ));
    let id = s.create_crawl(&new_crawl(Some(50))).await.unwrap();
    let other = s.create_crawl(&new_crawl(None)).await.unwrap();
    let empty = s.crawl_detail(id).await.unwrap();
    assert_eq!(empty.crawl, s.crawl(id).await.unwrap());
    assert_eq!(
        (
            empty.responses,
            empty.new_bodies,
            empty.matches,
            empty.matched_works
        ),
        (0, 0, 0, 0)
    );
    assert!(empty.runs.is_empty() && empty.errors.is_empty() && empty.cases.is_empty());

    // Bodies: 1 and 2 new here, 1 again at another URL; the other crawl's copy of 2 and a
    // body first stored by the other crawl do not count as new here.
    stored_page(s, Some(other), "http://a.example/old", 9, 10).await;
    let p1 = crawl_page(s, id, "http://a.example/1", 1, "content").await;
    let p2 = crawl_page(s, id, "http://a.example/2", 2, "content").await;
    crawl_page(s, id, "http://a.example/3", 1, "index").await;
    crawl_page(s, id, "http://a.example/4", 9, "challenge").await;
    crawl_page(s, other, "http://a.example/2", 2, "content").await;

    let urls = [
        "f1", "f2", "f3", "e404", "e404b", "e500", "s1", "s2", "ok", "left",
    ];
    let entries: Vec<_> = urls
        .iter()
        .map(|u| entry(&format!("http://a.example/{u}"), 1, 2))
        .collect();
    s.push_frontier(id, &entries).await.unwrap();
    let outcomes = [
        FrontierOutcome::Failed("timeout".into()),
        FrontierOutcome::Failed("timeout".into()),
        FrontierOutcome::Failed("dns".into()),
        FrontierOutcome::Done { status: 404 },
        FrontierOutcome::Done { status: 404 },
        FrontierOutcome::Done { status: 500 },
        FrontierOutcome::Skipped("robots_denied".into()),
        FrontierOutcome::Skipped("not_text".into()),
        FrontierOutcome::Done { status: 200 },
    ];
    let run = s
        .start_crawl_run(id, Duration::from_secs(60))
        .await
        .unwrap();
    for outcome in &outcomes {
        let FrontierClaim::Entry(e) = s
            .claim_frontier(id, Some(run), Duration::from_secs(60))
            .await
            .unwrap()
        else {
            panic!("nothing to claim")
        };
        s.complete_frontier(e.lease, outcome).await.unwrap();
    }
    s.end_crawl_run(run).await.unwrap();
    let live = s
        .start_crawl_run(id, Duration::from_secs(60))
        .await
        .unwrap();

    // Matches on two of its pages (and one on the other crawl's), one of them in a case.
    let work = created(s.insert_work(&sample_work("三国演义", 51)).await.unwrap());
    let second = created(s.insert_work(&sample_work("水浒传", 52)).await.unwrap());
    let chapters = s.chapters(work).await.unwrap();
    let found = |chapter: store::ChapterId, work| store::NewMatch {
        chapter_id: chapter,
        work_id: work,
        method: "winnow".into(),
        score: 0.9,
        coverage: 0.5,
        matched_chars: 300,
        chapter_chars: 600,
        page_chars: 400,
        page_share: 0.75,
        passages: "[]".into(),
    };
    s.record_matches(
        p1,
        &[found(chapters[0].id, work), found(chapters[1].id, work)],
        "test",
    )
    .await
    .unwrap();
    let other_chapter = s.chapters(second).await.unwrap()[0].id;
    s.record_matches(p2, &[found(other_chapter, second)], "test")
        .await
        .unwrap();
    let (other_page, _) = s
        .insert_snapshot(
            &store::NewSnapshot {
                crawl: Some(other),
                ..new_snapshot("http://a.example/x", 7, None)
            },
            Some(&b"z"[..]),
        )
        .await
        .unwrap();
    s.record_matches(other_page, &[found(chapters[2].id, work)], "test")
        .await
        .unwrap();
    // Each page's matches are filed in the case of its site and work.
    let mut case_of = std::collections::HashMap::new();
    for snap in [p1, p2, other_page] {
        let case = s.matches_of(snap).await.unwrap()[0].case_id.unwrap().0;
        case_of.insert(snap, case);
    }
    let mut cases = vec![case_of[&p1], case_of[&p2]];
    cases.sort_unstable();
    cases.dedup();

    let d = s.crawl_detail(id).await.unwrap();
    assert_eq!(d.crawl, s.crawl(id).await.unwrap());
    assert_eq!(d.crawl.max_pages, Some(50));
    assert_eq!(d.frontier, s.frontier_counts(id).await.unwrap());
    assert_eq!((d.frontier.queued, d.frontier.finished()), (1, 9));
    assert_eq!((d.responses, d.new_bodies, d.duplicate_bodies()), (4, 2, 2));
    let counted = |pairs: &[(&str, u64)]| {
        pairs
            .iter()
            .map(|(k, n)| ((*k).to_owned(), *n))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(
        d.pages_by_kind,
        counted(&[("challenge", 1), ("content", 2), ("index", 1)])
    );
    assert_eq!(
        d.errors,
        counted(&[("dns", 1), ("http_404", 2), ("http_500", 1), ("timeout", 2)])
    );
    // The errors are the failures the crawl's totals count.
    assert_eq!(d.errors.values().sum::<u64>(), d.crawl.pages_failed);
    assert_eq!(d.skipped, counted(&[("not_text", 1), ("robots_denied", 1)]));
    assert_eq!(
        d.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![run, live]
    );
    assert!(d.runs[0].ended_at.is_some() && !d.runs[0].alive);
    assert!(d.runs[1].ended_at.is_none() && d.runs[1].alive);
    assert!(d.runs[0].started_at <= d.runs[1].started_at);
    assert_eq!((d.matches, d.matched_works), (3, 2));
    assert_eq!(d.cases, cases);

    let o = s.crawl_detail(other).await.unwrap();
    assert_eq!((o.responses, o.new_bodies, o.matches), (3, 2, 1));
    assert_eq!(o.cases, vec![case_of[&other_page]]);
    assert!(o.errors.is_empty() && o.runs.is_empty());
}

pub async fn a_crawls_snapshots_are_read_by_url_page_by_page(db: &TestDb) {
    let s = &db.store;
    let id = s.create_crawl(&new_crawl(None)).await.unwrap();
    let other = s.create_crawl(&new_crawl(None)).await.unwrap();
    let urls = [
        "http://a.example/c",
        "http://a.example/a",
        "http://例子.example/章",
        "http://a.example/b",
        "http://a.example/a",
    ];
    let mut expected = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let (snapshot, _) = s
            .insert_snapshot(
                &store::NewSnapshot {
                    crawl: Some(id),
                    ..new_snapshot(url, i as u8 + 1, None)
                },
                Some(&b"z"[..]),
            )
            .await
            .unwrap();
        expected.push(((*url).to_owned(), snapshot));
        s.insert_snapshot(
            &store::NewSnapshot {
                crawl: Some(other),
                ..new_snapshot(url, i as u8 + 1, None)
            },
            None,
        )
        .await
        .unwrap();
    }
    s.insert_snapshot(&new_snapshot("http://a.example/a", 1, None), None)
        .await
        .unwrap();
    expected.sort();

    for size in [1, 2, 5, 100] {
        let mut seen = Vec::new();
        let mut after: Option<store::SnapshotCursor> = None;
        loop {
            let page = s.crawl_snapshots(id, after.as_ref(), size).await.unwrap();
            assert!(page.len() <= size as usize);
            after = page.last().map(store::SnapshotCursor::after);
            let short = page.len() < size as usize;
            seen.extend(page.into_iter().map(|r| (r.url, r.id)));
            if short {
                break;
            }
        }
        assert_eq!(seen, expected, "pages of {size}");
    }
    let all = s.crawl_snapshots(id, None, 100).await.unwrap();
    assert_eq!(all[0].status, 200);
    assert_eq!(all[0].final_url, format!("{}?final", all[0].url));
    assert!(
        s.crawl_snapshots(CrawlId(777_777), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn works_are_retitled_with_an_audit_row(db: &TestDb) {
    let s = &db.store;
    let id = created(
        s.insert_work(&sample_work("红楼梦 draft", 61))
            .await
            .unwrap(),
    );
    let update = |title: Option<&str>, author: Option<Option<&str>>| store::WorkUpdate {
        title: title.map(str::to_owned),
        author: author.map(|a| a.map(str::to_owned)),
    };

    let done = s
        .update_work(id, &update(Some("  红楼梦 😀 "), None), "cli")
        .await
        .unwrap();
    assert!(done.changed());
    assert_eq!(done.before.title, "红楼梦 draft");
    assert_eq!(done.after.title, "红楼梦 😀");
    assert_eq!(done.after.author.as_deref(), Some("曹雪芹"));
    let work = s.work(id).await.unwrap();
    assert_eq!(
        (work.title.as_str(), work.author.as_deref()),
        ("红楼梦 😀", Some("曹雪芹"))
    );
    // Only what changed is in the audit row.
    let audit = audit_rows(db).await;
    assert_eq!(audit.len(), 1);
    let (actor, action, target, target_id, details) = &audit[0];
    assert_eq!(
        (actor.as_str(), action.as_str(), target.as_str(), *target_id),
        ("cli", "work.update", "work", id.0)
    );
    assert_eq!(
        details,
        &serde_json::json!({"title": {"old": "红楼梦 draft", "new": "红楼梦 😀"}})
    );

    s.update_work(id, &update(None, Some(Some("高鹗"))), "admin")
        .await
        .unwrap();
    let removed = s
        .update_work(id, &update(None, Some(Some("  "))), "cli")
        .await
        .unwrap();
    assert_eq!(removed.after.author, None);
    assert_eq!(s.work(id).await.unwrap().author, None);
    let audit = audit_rows(db).await;
    assert_eq!(audit.len(), 3);
    assert_eq!(
        audit[1].4,
        serde_json::json!({"author": {"old": "曹雪芹", "new": "高鹗"}})
    );
    assert_eq!(
        audit[2].4,
        serde_json::json!({"author": {"old": "高鹗", "new": null}})
    );

    // The same values again: nothing written.
    let same = s
        .update_work(id, &update(Some("红楼梦 😀"), Some(None)), "cli")
        .await
        .unwrap();
    assert!(!same.changed());
    assert_eq!(audit_rows(db).await.len(), 3);

    for (bad, what) in [
        (update(Some(" \t"), None), "cannot be empty"),
        (update(None, None), "needs a new title or author"),
    ] {
        let err = s.update_work(id, &bad, "cli").await.unwrap_err();
        assert!(
            matches!(&err, Error::InvalidInput(m) if m.contains(what)),
            "{err}"
        );
    }
    assert!(matches!(
        s.update_work(store::WorkId(999_999), &update(Some("x"), None), "cli")
            .await
            .unwrap_err(),
        Error::NotFound { .. }
    ));
    assert_eq!(audit_rows(db).await.len(), 3);
    assert_eq!(s.work(id).await.unwrap().title, "红楼梦 😀");
}

pub async fn a_work_with_cases_is_deleted_only_when_forced(db: &TestDb) {
    let s = &db.store;
    let plain = created(s.insert_work(&sample_work("no cases", 71)).await.unwrap());
    let id = created(s.insert_work(&sample_work("红楼梦", 72)).await.unwrap());
    let site = s
        .crawl(s.create_crawl(&new_crawl(None)).await.unwrap())
        .await
        .unwrap()
        .site_id;
    let other_site = s
        .crawl(
            s.create_crawl(&store::NewCrawl {
                seeds: vec!["http://盗版.example/".into()],
                ..new_crawl(None)
            })
            .await
            .unwrap(),
        )
        .await
        .unwrap()
        .site_id;
    db.execute(&format!(
        "INSERT INTO cases (site_id, work_id) VALUES ({site}, {id}), ({other_site}, {id});"
    ))
    .await;
    let before = s.last_change().await.unwrap();

    let refused = s.delete_work_checked(id, false, "cli").await.unwrap();
    assert_eq!(refused, store::WorkDeletion::Refused { cases: 2 });
    assert_eq!(s.work(id).await.unwrap().title, "红楼梦");
    assert_eq!(s.last_change().await.unwrap(), before);
    assert!(audit_rows(db).await.is_empty());

    let deleted = s.delete_work_checked(id, true, "cli").await.unwrap();
    assert_eq!(
        deleted,
        store::WorkDeletion::Deleted {
            work: store::WorkTitle {
                title: "红楼梦".into(),
                author: Some("曹雪芹".into()),
            },
            cases: 2,
        }
    );
    assert!(matches!(s.work(id).await, Err(Error::NotFound { .. })));
    assert_eq!(
        scalar(
            db,
            &format!("SELECT COUNT(*) FROM cases WHERE work_id = {id}")
        )
        .await,
        0
    );
    let changes = s.changes_since(before, 10).await.unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].work_id, changes[0].kind),
        (id, store::WorkChangeKind::Removed)
    );
    let audit = audit_rows(db).await;
    assert_eq!(audit.len(), 1);
    let (actor, action, _, target_id, details) = &audit[0];
    assert_eq!(
        (actor.as_str(), action.as_str(), *target_id),
        ("cli", "work.delete", id.0)
    );
    assert_eq!(details["title"], "红楼梦");
    assert_eq!(
        (details["chapters"].as_i64(), details["cases"].as_i64()),
        (Some(3), Some(2))
    );
    assert_eq!(details["forced"], true);

    // Without cases no force is needed.
    let gone = s.delete_work_checked(plain, false, "cli").await.unwrap();
    assert!(matches!(
        gone,
        store::WorkDeletion::Deleted { cases: 0, .. }
    ));
    assert_eq!(audit_rows(db).await[1].4["forced"], false);
    for missing in [id, store::WorkId(888_888)] {
        assert!(matches!(
            s.delete_work_checked(missing, true, "cli")
                .await
                .unwrap_err(),
            Error::NotFound { .. }
        ));
    }
    assert_eq!(audit_rows(db).await.len(), 2);
}

pub async fn a_works_fingerprints_are_replaced_and_logged(db: &TestDb) {
    let s = &db.store;
    let work = created(s.insert_work(&sample_work("红楼梦", 41)).await.unwrap());
    let other = created(s.insert_work(&sample_work("西游记", 42)).await.unwrap());
    let chapters = s.chapters(work).await.unwrap();
    let before = s.last_change().await.unwrap();
    let mut renewed = fingerprint(99, 7);
    renewed.normalizer_version = 4;
    let replaced: Vec<_> = chapters.iter().map(|c| (c.id, renewed.clone())).collect();
    s.replace_fingerprints(work, &replaced).await.unwrap();
    let entries = s.work_index_entries(work).await.unwrap();
    assert_eq!(entries.len(), 3);
    for e in &entries {
        assert_eq!(e.normalizer_version, 4);
        assert_eq!(e.text_winnow, renewed.text_winnow);
        assert_eq!(e.pinyin_winnow, renewed.pinyin_winnow);
        assert_eq!(e.summary, renewed.summary);
    }
    // The postings table follows too: the old hashes are gone, the new ones found.
    let old = fingerprint(41 * 10 + 1, 10).text_winnow[0].hash;
    let hits = s
        .postings_with_hashes(
            store::PostingKind::Text,
            &[old, renewed.text_winnow[0].hash],
        )
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.hash != old), "{hits:?}");
    assert_eq!(
        hits.iter()
            .filter(|h| h.hash == renewed.text_winnow[0].hash)
            .count(),
        3
    );
    // Running indexes learn of it from the change log.
    let changes = s.changes_since(before, 10).await.unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].work_id, changes[0].kind),
        (work, store::WorkChangeKind::Added)
    );
    // The other work is untouched; a chapter of it is refused, as is an unknown work.
    assert_eq!(
        s.work_index_entries(other).await.unwrap()[0].normalizer_version,
        3
    );
    let stranger = s.chapters(other).await.unwrap()[0].id;
    assert!(matches!(
        s.replace_fingerprints(work, &[(stranger, renewed.clone())])
            .await
            .unwrap_err(),
        Error::InvalidInput(_)
    ));
    assert!(matches!(
        s.replace_fingerprints(store::WorkId(987_654), &[])
            .await
            .unwrap_err(),
        Error::NotFound { .. }
    ));
    assert_eq!(s.work_index_entries(work).await.unwrap().len(), 3);
}
