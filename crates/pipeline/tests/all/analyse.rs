//! The live index and the match stage on both backends: works added and removed after the
//! start-up load reach the index through the change log, without a reload, and a stored
//! page's matches follow; a page that becomes evidence of a case is stamped (RFC 3161, by a
//! local openssl TSA) and its tokens read back verified.

use crate::common;

use std::sync::Arc;

use casework::{ReportFormat, export_reports};
use detection::{Analyser, LiveIndex, TextCache, find};
use matcher::MatcherSettings;
use store::testing::TestDb;
use store::{MatchReads, ReportFilter, WorkWrites};

use common::import;

/// 老残游记 1–2: registered before the index is loaded.
const FIRST: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");
/// 封神演义 1–3 (traditional): registered while the index runs.
const LATER: &str = include_str!("../../../import/tests/data/fengshenyanyi_hant_1-3.txt");

/// Chapter 2 of 封神演义 in simplified script with an ad in front: a pirate page.
fn pirate_page() -> String {
    let start = LATER.find("第二回").expect("chapter 2");
    let end = LATER.find("第三回").expect("chapter 3");
    let chapter = zhconv::zhconv(&LATER[start..end], zhconv::Variant::ZhHans);
    format!("【本站首发】最新章节请访问 www.example.com！\n{chapter}")
}

async fn found(live: &LiveIndex, store: &store::Store, text: &str) -> Vec<i64> {
    let (live, store, text) = (live.matcher(), store.clone(), text.to_owned());
    let runtime = tokio::runtime::Handle::current();
    let cache = TextCache::default();
    tokio::task::block_in_place(|| find(&live, &store, &text, &runtime, &cache))
        .unwrap()
        .0
        .iter()
        .map(|m| m.work.0)
        .collect()
}

async fn works_reach_a_running_index_without_a_reload(db: &TestDb) {
    let store = &db.store;
    let first = import(store, "老残游记.txt", FIRST).await;
    let analyser = Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    );
    let live: &Arc<LiveIndex> = analyser.index().await.unwrap();
    let loaded = live.matcher().index().len();
    assert_eq!(live.loaded.chapters, loaded);
    let page = pirate_page();
    assert!(found(live, store, &page).await.is_empty());
    // Nothing happened since the load.
    assert_eq!(live.refresh(store).await.unwrap(), 0);

    let later = import(store, "封神演义.txt", LATER).await;
    // Not before a refresh: the index is a snapshot until then.
    assert!(found(live, store, &page).await.is_empty());
    assert_eq!(live.refresh(store).await.unwrap(), 1);
    assert_eq!(found(live, store, &page).await, vec![later.0]);
    assert!(live.matcher().index().len() > loaded);

    // The match job stores the result (and replaces it when run again).
    let snap = common::stored_page(store, "https://pirate.example/book/2.html", &page).await;
    for _ in 0..2 {
        assert_eq!(analyser.analyse(snap).await.unwrap().matches, 1);
        let stored = store.matches_of(snap).await.unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].found.work_id, later);
        assert!(stored[0].found.coverage > 0.9);
        assert!(stored[0].found.passages.starts_with("[{"));
    }

    exports_the_match(store, later).await;

    store.delete_work(later).await.unwrap();
    assert_eq!(live.refresh(store).await.unwrap(), 1);
    assert!(found(live, store, &page).await.is_empty());
    assert_eq!(live.matcher().index().len(), loaded);
    // Matching again after the removal clears the stored match (its chapter is gone).
    assert_eq!(analyser.analyse(snap).await.unwrap().matches, 0);
    assert!(store.matches_of(snap).await.unwrap().is_empty());
    // The first work is still found, and no refresh ever reloaded.
    let own = &FIRST[FIRST.rfind("第二回").unwrap()..];
    assert_eq!(found(live, store, own).await, vec![first.0]);
    assert_eq!(live.full_loads(), 1);
    assert_eq!(live.changes_applied(), 2);
}

/// A reader that went away after `room` bytes.
struct ClosedAfter {
    room: usize,
}

impl std::io::Write for ClosedAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The stored match exported in both formats, and a closed reader reported as one.
async fn exports_the_match(store: &store::Store, work: store::WorkId) {
    let filter = ReportFilter::default();
    let mut jsonl = Vec::new();
    let n = export_reports(store, &filter, ReportFormat::Jsonl, &mut jsonl).await;
    assert_eq!(n.unwrap(), 1);
    let record: serde_json::Value = serde_json::from_slice(&jsonl).unwrap();
    assert_eq!(record["work_id"], work.0);
    assert_eq!(record["chapter_index"], 2);
    assert_eq!(record["licensed"], false);
    assert!(record["spans"].is_array());
    let mut csv = Vec::new();
    let n = export_reports(store, &filter, ReportFormat::Csv, &mut csv).await;
    assert_eq!(n.unwrap(), 1);
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count(), 2);
    assert!(csv.starts_with("url,site,work_id,"));
    for format in [ReportFormat::Jsonl, ReportFormat::Csv] {
        let closed = ClosedAfter { room: 0 };
        match export_reports(store, &filter, format, closed).await {
            Err(jobs::Error::Write(e)) => {
                assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{format:?}");
            }
            other => panic!("{format:?}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_index_follows_works_on_sqlite() {
    let Some(db) = store::testing::sqlite("live_index_sqlite").await else {
        return;
    };
    works_reach_a_running_index_without_a_reload(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_index_follows_works_on_postgres() {
    let Some(db) = store::testing::postgres("live_index_postgres").await else {
        return;
    };
    works_reach_a_running_index_without_a_reload(&db).await;
}

/// A page that opens a case queues its stamp; stamping stores a verified token once per TSA;
/// a case's tokens read back verified, a forged one refused with its reason.
async fn evidence_is_stamped_once_and_read_back_verified(db: &TestDb) {
    use casework::Verification;
    use casework::timestamps::{Stamped, case_timestamps, stamp_snapshot};
    use evidence::stamp_case;
    use jobs::Job;
    use store::{JobFilter, JobQueue, NewTimestamp, Page, Timestamps};
    use testkit::tsa::{LocalTsa, Reply};

    let Some(local) = LocalTsa::start().await else {
        return;
    };
    let store = &db.store;
    import(store, "封神演义.txt", LATER).await;
    let analyser = Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    )
    .with_stamping(true);
    let snap =
        common::stored_page(store, "https://pirate.example/book/2.html", &pirate_page()).await;
    let case = analyser.analyse(snap).await.unwrap().opened[0];
    let queued = store
        .jobs(&JobFilter::Kind("StampSnapshot".into()), Page::all())
        .await
        .unwrap();
    assert_eq!(queued.len(), 1);
    assert_eq!(
        serde_json::from_str::<Job>(&queued[0].payload).unwrap(),
        Job::StampSnapshot { snapshot: snap }
    );

    let trust = timestamp::Trust::load(&local.ca_pem).unwrap();
    let tsa = timestamp::Tsa::new(
        local.url.clone(),
        std::time::Duration::from_secs(20),
        Some(trust.clone()),
    )
    .unwrap();
    let Stamped::New(at) = stamp_snapshot(store, &tsa, snap).await.unwrap() else {
        panic!("a first stamp is new");
    };
    // Idempotent: stamped already, the TSA (now failing) is not asked again.
    local.reply(Reply::Status(500));
    assert_eq!(
        stamp_snapshot(store, &tsa, snap).await.unwrap(),
        Stamped::Already
    );
    let nothing = stamp_case(store, &tsa, case).await.unwrap();
    assert!(nothing.stamped.is_empty() && nothing.failed.is_empty());

    // A token someone altered, stored as if from another TSA, is read back refused.
    let mut forged = store.snapshot_timestamps(snap).await.unwrap()[0]
        .token
        .clone();
    *forged.last_mut().unwrap() ^= 1;
    store
        .insert_timestamp(&NewTimestamp {
            snapshot: snap,
            tsa_url: "https://forged.example/".into(),
            token: forged,
            gen_time: at,
            hash_algorithm: "sha-256".into(),
        })
        .await
        .unwrap();
    let read = case_timestamps(store, case, Some(&trust)).await.unwrap();
    assert_eq!(read.len(), 2);
    assert_eq!((read[0].snapshot, read[0].gen_time), (snap, at));
    assert_eq!(read[0].tsa, local.url);
    assert!(
        matches!(&read[0].verification, Verification::Valid { chained: true, signer }
                 if signer.contains("copyhound test TSA")),
        "{:?}",
        read[0].verification
    );
    assert!(!read[0].token_der.is_empty());
    match &read[1].verification {
        Verification::Invalid { reason } => assert!(reason.contains("signature"), "{reason}"),
        other => panic!("a forged token read as {other:?}"),
    }
    // Without the CA the signature still holds, unchained.
    let unchained = case_timestamps(store, case, None).await.unwrap();
    assert!(matches!(
        unchained[0].verification,
        Verification::Valid { chained: false, .. }
    ));

    // `cases stamp` with another TSA: a refusal is reported per snapshot, then it stamps.
    let other = timestamp::Tsa::new(
        format!("{}?second", local.url),
        std::time::Duration::from_secs(20),
        None,
    )
    .unwrap();
    local.reply(Reply::OpensslRejecting);
    let refused = stamp_case(store, &other, case).await.unwrap();
    assert_eq!(refused.failed.len(), 1);
    assert!(
        refused.failed[0].1.contains("rejection"),
        "{:?}",
        refused.failed
    );
    local.reply(Reply::Openssl);
    let done = stamp_case(store, &other, case).await.unwrap();
    assert_eq!(done.stamped.len(), 1);
    assert_eq!(done.stamped[0].0, snap);
    assert_eq!(case_timestamps(store, case, None).await.unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_is_stamped_on_sqlite() {
    let Some(db) = store::testing::sqlite("stamps_sqlite").await else {
        return;
    };
    evidence_is_stamped_once_and_read_back_verified(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_is_stamped_on_postgres() {
    let Some(db) = store::testing::postgres("stamps_postgres").await else {
        return;
    };
    evidence_is_stamped_once_and_read_back_verified(&db).await;
}
