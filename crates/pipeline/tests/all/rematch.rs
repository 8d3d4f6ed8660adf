//! `rematch` in page and batch mode on both backends (#31 point 4): batch mode (the stored
//! fingerprints streamed past the pages, no index loaded) records the same matches and cases
//! as page-at-a-time matching, in one batch or many, for the whole index or one shard; `auto`
//! chooses by the sizes.

use crate::common;

use bounds::Shard;
use matcher::{Mode, ModeChoice};
use pipeline::RematchOptions;
use store::testing::TestDb;
use store::{MatchReads, SnapshotId, Store, TextFilter};

use common::{WORK, cases, import, pirate_chapter, stored_page};

/// 老残游记 1–2: a second work.
const OTHER: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");

fn handler(store: &Store, shard: Shard) -> pipeline::Handler {
    common::shard_handler(store, shard)
}

/// (snapshot, chapter, work, case, coverage in thousandths) of every stored match of `pages`.
async fn pairs(store: &Store, pages: &[SnapshotId]) -> Vec<(i64, i64, i64, Option<i64>, i64)> {
    let mut out = Vec::new();
    for &page in pages {
        for m in store.matches_of(page).await.unwrap() {
            out.push((
                page.0,
                m.found.chapter_id.0,
                m.found.work_id.0,
                m.case_id.map(|c| c.0),
                (m.found.coverage * 1000.0).round() as i64,
            ));
        }
    }
    out
}

fn options(mode: ModeChoice, batch_pages: usize) -> RematchOptions {
    RematchOptions {
        mode,
        batch_pages,
        ..RematchOptions::default()
    }
}

/// The pirate pages of both works and innocent ones, stored unmatched.
async fn pages(store: &Store) -> Vec<SnapshotId> {
    let mut pages = Vec::new();
    for n in 1..=3 {
        let url = format!("http://pirate.example/fs/{n}");
        pages.push(stored_page(store, &url, &pirate_chapter(n)).await);
    }
    let other = format!("【免费阅读】\n{OTHER}");
    pages.push(stored_page(store, "http://pirate.example/lc/all", &other).await);
    for i in 0..3 {
        let text = format!("第{i}篇 今天天气很好，我们去公园散步，然后回家吃饭。").repeat(30);
        pages.push(stored_page(store, &format!("http://blog.example/{i}"), &text).await);
    }
    pages
}

async fn batch_mode_records_what_page_mode_records(db: &TestDb) {
    let store = &db.store;
    let work = import(store, "封神演义.txt", WORK).await;
    let other = import(store, "老残游记.txt", OTHER).await;
    let pages = pages(store).await;
    let all = TextFilter::default();

    // Batches of 3 pages: 7 pages in 3 batches, nothing queued, nothing loaded.
    let batch = handler(store, Shard::ALL);
    let done = pipeline::rematch(store, batch.clone(), &all, &options(ModeChoice::Batch, 3))
        .await
        .unwrap();
    assert_eq!(done.mode, Some(Mode::Batch));
    assert_eq!((done.matched, done.batches, done.queued), (7, 3, 0));
    assert!(done.chapters >= 5, "{done:?}");
    assert!(
        batch.analyser().loaded().is_none(),
        "batch mode loads no index"
    );
    let batched = (pairs(store, &pages).await, cases(store).await);
    let works: std::collections::BTreeSet<i64> = batched.0.iter().map(|p| p.2).collect();
    assert_eq!(works, [work.0, other.0].into(), "{batched:?}");
    assert!(
        batched.0.iter().all(|p| p.0 <= pages[3].0),
        "innocent pages match nothing: {batched:?}"
    );
    assert_eq!(batched.1.len(), 2, "one case a work: {batched:?}");

    // Page-at-a-time over the same pages finds the same, and leaves the same cases.
    let page = pipeline::rematch(
        store,
        handler(store, Shard::ALL),
        &all,
        &options(ModeChoice::Page, 3),
    )
    .await
    .unwrap();
    assert_eq!(page.mode, Some(Mode::Page));
    assert_eq!(
        (page.queued, page.matched, page.left),
        (7, 7, 0),
        "{page:?}"
    );
    assert_eq!((pairs(store, &pages).await, cases(store).await), batched);

    // One batch of everything, again the same.
    let one = pipeline::rematch(store, batch, &all, &options(ModeChoice::Batch, 100))
        .await
        .unwrap();
    assert_eq!((one.matched, one.batches), (7, 1));
    assert_eq!((pairs(store, &pages).await, cases(store).await), batched);

    // A shard's batch streams its own works only and replaces only their matches.
    let mine = Shard::new(Shard::of(work.0, 2), 2).unwrap();
    if !mine.holds(other.0) {
        pipeline::rematch(
            store,
            handler(store, mine),
            &all,
            &options(ModeChoice::Batch, 100),
        )
        .await
        .unwrap();
        assert_eq!((pairs(store, &pages).await, cases(store).await), batched);
    }

    // Batch mode runs here: queueing it is refused, queueing page mode is not.
    let queue = RematchOptions {
        enqueue: true,
        ..options(ModeChoice::Batch, 3)
    };
    let refused = pipeline::rematch(store, handler(store, Shard::ALL), &all, &queue).await;
    assert!(refused.unwrap_err().to_string().contains("--enqueue"));
}

async fn auto_chooses_by_the_sizes(db: &TestDb) {
    let store = &db.store;
    import(store, "封神演义.txt", WORK).await;
    let pages = pages(store).await;
    let all = TextFilter::default();
    // Building the index is dear, a query cheap: batch mode while no index is loaded, page
    // mode once one is.
    let model = matcher::CostModel {
        page_query_ns: 10.0,
        chapter_build_ns: 1000.0,
        batch_page_ns: 5.0,
        chapter_stream_ns: 100.0,
    };
    let auto = RematchOptions {
        model,
        ..options(ModeChoice::Auto, 100)
    };
    let fresh = handler(store, Shard::ALL);
    let chosen = pipeline::rematch(store, fresh, &all, &auto).await.unwrap();
    assert_eq!(chosen.mode, Some(Mode::Batch), "{chosen:?}");
    assert_eq!(chosen.matched, pages.len() as u64);
    let loaded = handler(store, Shard::ALL);
    loaded.analyser().index().await.unwrap();
    let chosen = pipeline::rematch(store, loaded, &all, &auto).await.unwrap();
    assert_eq!(chosen.mode, Some(Mode::Page), "{chosen:?}");
    assert_eq!(chosen.matched, pages.len() as u64);
    // The measured model: the chapters of one work stream past a few pages faster than
    // their index is built.
    let measured = pipeline::rematch(
        store,
        handler(store, Shard::ALL),
        &all,
        &options(ModeChoice::Auto, 100),
    )
    .await
    .unwrap();
    assert_eq!(measured.mode, Some(Mode::Batch), "{measured:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_mode_records_what_page_mode_records_on_sqlite() {
    let Some(db) = store::testing::sqlite("rematch_batch_sqlite").await else {
        return;
    };
    batch_mode_records_what_page_mode_records(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_mode_records_what_page_mode_records_on_postgres() {
    let Some(db) = store::testing::postgres("rematch_batch_postgres").await else {
        return;
    };
    batch_mode_records_what_page_mode_records(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_chooses_by_the_sizes_on_sqlite() {
    let Some(db) = store::testing::sqlite("rematch_auto_sqlite").await else {
        return;
    };
    auto_chooses_by_the_sizes(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_chooses_by_the_sizes_on_postgres() {
    let Some(db) = store::testing::postgres("rematch_auto_postgres").await else {
        return;
    };
    auto_chooses_by_the_sizes(&db).await;
}
