//! The live index and the match stage on both backends: works added and removed after the
//! start-up load reach the index through the change log, without a reload, and a stored
//! page's matches follow.

use std::sync::Arc;

use import::{ImportOptions, ImportSettings, Importer};
use matcher::MatcherSettings;
use pipeline::{Analyser, LiveIndex, ReportFormat, TextCache, export_reports, find};
use store::testing::TestDb;
use store::{EvidenceWrites, MatchReads, NewPageText, NewSnapshot, ReportFilter, WorkWrites};

/// 老残游记 1–2: registered before the index is loaded.
const FIRST: &str = include_str!("../../import/tests/data/laocanyouji_toc_1-2.txt");
/// 封神演义 1–3 (traditional): registered while the index runs.
const LATER: &str = include_str!("../../import/tests/data/fengshenyanyi_hant_1-3.txt");

/// Chapter 2 of 封神演义 in simplified script with an ad in front: a pirate page.
fn pirate_page() -> String {
    let start = LATER.find("第二回").expect("chapter 2");
    let end = LATER.find("第三回").expect("chapter 3");
    let chapter = zhconv::zhconv(&LATER[start..end], zhconv::Variant::ZhHans);
    format!("【本站首发】最新章节请访问 www.example.com！\n{chapter}")
}

async fn import(store: &store::Store, name: &str, text: &str) -> store::WorkId {
    let importer = Importer::new(ImportSettings::default()).unwrap();
    importer
        .import_bytes(
            store,
            name,
            text.as_bytes().to_vec(),
            &ImportOptions::default(),
            &(),
        )
        .await
        .unwrap()
        .work
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

/// A stored snapshot whose page text is `text`.
async fn snapshot(store: &store::Store, text: &str) -> store::SnapshotId {
    let body = text.as_bytes();
    let url = "https://pirate.example/book/2.html".to_owned();
    let new = NewSnapshot {
        crawl: None,
        url: url.clone(),
        final_url: url.clone(),
        status: 200,
        http_version: "HTTP/1.1".into(),
        headers: Vec::new(),
        header_block: Vec::new(),
        request_header_block: Vec::new(),
        content_type: Some("text/plain; charset=utf-8".into()),
        redirects: "[]".into(),
        sha256: [7; 32],
        body_len: body.len() as u64,
        body_status: "complete".into(),
        fetched_at: chrono::Utc::now(),
        elapsed_ms: 1,
        remote_addr: None,
        etag: None,
        last_modified: None,
        wire: None,
    };
    let (id, _) = store
        .insert_snapshot(&new, Some(&zstd::encode_all(body, 1).unwrap()))
        .await
        .unwrap();
    store
        .insert_page_text(&NewPageText {
            snapshot: id,
            url,
            depth: 0,
            chain: None,
            kind: "chapter".into(),
            title: None,
            chapter_title: None,
            body: text.to_owned(),
            encoding: "UTF-8".into(),
            decode_errors: false,
            not_modified: false,
            fetched_at: chrono::Utc::now(),
        })
        .await
        .unwrap();
    id
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
    let snap = snapshot(store, &page).await;
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
            Err(pipeline::Error::Write(e)) => {
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
