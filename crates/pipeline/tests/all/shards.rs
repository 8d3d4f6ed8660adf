//! Index shards on both backends (#31): two shard workers, fed by the match queue's fan-out,
//! leave the same (page, chapter) pairs and cases as one unsharded index; one shard's record
//! never removes another's rows; a work added or removed while the shards run reaches only
//! the shard that holds it; a shard worker that dies holding its jobs loses none of them;
//! `doctor` counts each shard's queue.

use crate::common;

use std::time::Duration;

use bounds::Shard;
use store::testing::{TestDb, wait_for};
use store::{JobQueue, MatchReads, MatchWrites, SnapshotId, Store, WorkId, WorkWrites};

use common::{WORK, cases, import, pirate_chapter, stored_page};

/// 老残游记 1–2: the second work, in the other shard of two.
const OTHER: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");
/// 红楼梦 1–2: a work added while the shards run.
const ADDED: &str = include_str!("../../../import/tests/data/hongloumeng_hant_1-2.txt");

fn shard(k: u32) -> Shard {
    Shard::new(k, 2).unwrap()
}

/// A handler whose analyser holds `shard` of the index; `shards` is the deployment's count.
fn handler(store: &Store, shard: Shard, shards: u32) -> pipeline::Handler {
    common::shard_handler(store, shard).with_shards(shards)
}

/// (snapshot, chapter, work, licensed, case) of every stored match of `pages`.
async fn pairs(store: &Store, pages: &[SnapshotId]) -> Vec<(i64, i64, i64, Option<i64>)> {
    let mut out = Vec::new();
    for &page in pages {
        for m in store.matches_of(page).await.unwrap() {
            out.push((
                page.0,
                m.found.chapter_id.0,
                m.found.work_id.0,
                m.case_id.map(|c| c.0),
            ));
        }
    }
    out
}

/// Waits until no queue holds a waiting or running job, and none died.
async fn drained(store: &Store) {
    wait_for(
        "every queue drained",
        Duration::from_secs(180),
        async || {
            let counts = store.counts().await.unwrap();
            assert!(counts.iter().all(|c| c.dead == 0), "{counts:?}");
            counts.iter().all(|c| c.queued == 0 && c.running == 0)
        },
    )
    .await;
}

async fn queue_matches(store: &Store, pages: &[SnapshotId]) {
    for &page in pages {
        store
            .enqueue(&jobs::match_job(page).unwrap())
            .await
            .unwrap();
    }
}

/// Matches `pages` again with one unsharded index and asserts the pairs and cases are
/// `sharded`'s.
async fn one_index_agrees(store: &Store, pages: &[SnapshotId], sharded: &Outcome) {
    let single = handler(store, Shard::ALL, 1);
    let one = pipeline::Workers::start(
        store,
        &single,
        &[jobs::MATCH_QUEUE.to_owned()],
        &pipeline::WorkerOptions::default(),
    );
    queue_matches(store, pages).await;
    drained(store).await;
    one.stop().await.unwrap();
    assert_eq!(pairs(store, pages).await, sharded.0);
    assert_eq!(cases(store).await, sharded.1);
}

/// The (page, chapter) pairs and the cases a run left.
type Outcome = (
    Vec<(i64, i64, i64, Option<i64>)>,
    Vec<(i64, i64, String, u32, u32)>,
);

async fn two_shards_find_what_one_index_finds(db: &TestDb) {
    let store = &db.store;
    let work = import(store, "封神演义.txt", WORK).await;
    let other = import(store, "老残游记.txt", OTHER).await;
    // The scenario needs one work in each shard of two.
    assert_ne!(
        Shard::of(work.0, 2),
        Shard::of(other.0, 2),
        "works {work} and {other} hash to one shard: pick other works"
    );
    let other_page = format!("【免费阅读】\n{OTHER}");
    let pages = vec![
        stored_page(store, "http://pirate.example/fs/2", &pirate_chapter(2)).await,
        stored_page(store, "http://pirate.example/lc/all", &other_page).await,
        // Both works on one page: both shards record this snapshot.
        stored_page(
            store,
            "http://pirate.example/mixed",
            &format!("{}\n{other_page}", pirate_chapter(3)),
        )
        .await,
    ];

    // The deployment with two shards: an unsharded worker fans the match queue out, one
    // worker per shard matches.
    let fan = handler(store, Shard::ALL, 2);
    let (h0, h1) = (handler(store, shard(0), 2), handler(store, shard(1), 2));
    let options = pipeline::WorkerOptions::default();
    let workers = [
        pipeline::Workers::start(store, &fan, &[jobs::MATCH_QUEUE.to_owned()], &options),
        pipeline::Workers::start(store, &h0, &[jobs::shard_queue(shard(0))], &options),
        pipeline::Workers::start(store, &h1, &[jobs::shard_queue(shard(1))], &options),
    ];
    queue_matches(store, &pages).await;
    drained(store).await;
    let sharded = (pairs(store, &pages).await, cases(store).await);
    // Each shard's index holds its own work alone.
    for (h, mine) in [(&h0, shard(0)), (&h1, shard(1))] {
        let live = h.analyser().loaded().expect("the shard matched pages");
        assert_eq!(live.shard(), mine);
        let expected = if mine.holds(work.0) { 3 } else { 2 };
        assert_eq!(live.matcher().index().len(), expected, "shard {mine}");
    }
    // The fan-out worker never loaded an index.
    assert!(fan.analyser().loaded().is_none());
    let works_of = |p: SnapshotId| {
        sharded
            .0
            .iter()
            .filter(|r| r.0 == p.0)
            .map(|r| r.2)
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(works_of(pages[2]), [work.0, other.0].into(), "{sharded:?}");
    assert_eq!(
        sharded.1.len(),
        2,
        "a case per work on the site: {sharded:?}"
    );

    // One unsharded index matching the same pages again changes nothing.
    one_index_agrees(store, &pages, &sharded).await;

    // A work added while the shards run reaches its shard only; a removed one leaves its
    // shard only.
    let added = import(store, "红楼梦.txt", ADDED).await;
    let holder = Shard::of(added.0, 2);
    let before: Vec<usize> = [&h0, &h1]
        .iter()
        .map(|h| h.analyser().loaded().unwrap().matcher().index().len())
        .collect();
    store.delete_work(other).await.unwrap();
    for (k, h) in [&h0, &h1].into_iter().enumerate() {
        let live = h.analyser().loaded().unwrap();
        live.refresh(store).await.unwrap();
        let mut expected = before[k];
        if k as u32 == holder {
            expected += 2;
        }
        if shard(k as u32).holds(other.0) {
            expected -= 2;
        }
        assert_eq!(live.matcher().index().len(), expected, "shard {k}");
    }
    for w in workers {
        let report = w.stop().await.unwrap();
        assert_eq!(report.dead, 0, "{report:?}");
    }
}

async fn a_shard_record_keeps_the_other_shards_rows(db: &TestDb) {
    let store = &db.store;
    let work = import(store, "封神演义.txt", WORK).await;
    let other = import(store, "老残游记.txt", OTHER).await;
    let (of_work, of_other) = (
        Shard::new(Shard::of(work.0, 2), 2).unwrap(),
        Shard::new(Shard::of(other.0, 2), 2).unwrap(),
    );
    assert_ne!(of_work, of_other, "works {work} and {other} share a shard");
    let page = stored_page(
        store,
        "http://pirate.example/mixed",
        &format!("{}\n【免费阅读】\n{OTHER}", pirate_chapter(2)),
    )
    .await;
    let analyser = detection::Analyser::new(
        store.clone(),
        Default::default(),
        matcher::MatcherSettings::default(),
    );
    analyser.analyse(page).await.unwrap();
    let all = store.matches_of(page).await.unwrap();
    let rows_of = |w: WorkId, rows: &[store::MatchRecord]| {
        rows.iter()
            .filter(|m| m.found.work_id == w)
            .map(|m| m.found.clone())
            .collect::<Vec<_>>()
    };
    assert!(!rows_of(work, &all).is_empty() && !rows_of(other, &all).is_empty());
    let counters = cases(store).await;

    // The work's shard finds nothing now: its rows go, the other shard's stay.
    store
        .record_matches_scoped(page, &[], of_work, "pipeline")
        .await
        .unwrap();
    let left = store.matches_of(page).await.unwrap();
    assert!(rows_of(work, &left).is_empty());
    assert_eq!(rows_of(other, &left), rows_of(other, &all));
    // Its shard records them again: all as before, counters too.
    store
        .record_matches_scoped(page, &rows_of(work, &all), of_work, "pipeline")
        .await
        .unwrap();
    assert_eq!(
        store
            .matches_of(page)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.found)
            .collect::<Vec<_>>(),
        all.iter().map(|m| m.found.clone()).collect::<Vec<_>>()
    );
    assert_eq!(cases(store).await, counters);
    // A shard may not write another's work.
    let err = store
        .record_matches_scoped(page, &rows_of(other, &all), of_work, "pipeline")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not in shard"), "{err}");
    assert_eq!(store.matches_of(page).await.unwrap().len(), all.len());
}

/// A shard worker that dies with its jobs claimed (it claimed them, then never heartbeat nor
/// settled them, as a worker killed with SIGKILL leaves them): once their lease runs out the
/// shard's next worker runs them, and the pages' matches and cases are what one unsharded
/// index gives.
async fn a_dead_shard_workers_jobs_run_again(db: &TestDb) {
    let store = &db.store;
    let work = import(store, "封神演义.txt", WORK).await;
    let other = import(store, "老残游记.txt", OTHER).await;
    assert_ne!(Shard::of(work.0, 2), Shard::of(other.0, 2));
    let other_page = format!("【免费阅读】\n{OTHER}");
    let pages = vec![
        stored_page(store, "http://pirate.example/fs/2", &pirate_chapter(2)).await,
        stored_page(
            store,
            "http://pirate.example/mixed",
            &format!("{}\n{other_page}", pirate_chapter(3)),
        )
        .await,
    ];
    let options = pipeline::WorkerOptions::default();
    let fan = handler(store, Shard::ALL, 2);
    let fanning = pipeline::Workers::start(store, &fan, &[jobs::MATCH_QUEUE.to_owned()], &options);
    queue_matches(store, &pages).await;
    let (q0, q1) = (jobs::shard_queue(shard(0)), jobs::shard_queue(shard(1)));
    wait_for(
        "both shards' jobs queued",
        Duration::from_secs(60),
        async || {
            let counts = store.counts().await.unwrap();
            let queued = |q: &str| counts.iter().find(|c| c.queue == q).map_or(0, |c| c.queued);
            queued(&q0) == pages.len() as u64 && queued(&q1) == pages.len() as u64
        },
    )
    .await;
    fanning.stop().await.unwrap();
    // Shard 0's worker claims every job of its queue and dies.
    let claimed = store
        .claim(&q0, "shard-0-killed", 100, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), pages.len());

    let (h0, h1) = (handler(store, shard(0), 2), handler(store, shard(1), 2));
    let workers = [
        pipeline::Workers::start(store, &h0, &[q0], &options),
        pipeline::Workers::start(store, &h1, &[q1], &options),
    ];
    drained(store).await;
    let sharded = (pairs(store, &pages).await, cases(store).await);
    let works: std::collections::BTreeSet<i64> = sharded.0.iter().map(|r| r.2).collect();
    assert_eq!(works, [work.0, other.0].into(), "{sharded:?}");
    for w in workers {
        let report = w.stop().await.unwrap();
        assert_eq!(report.dead, 0, "{report:?}");
    }

    one_index_agrees(store, &pages, &sharded).await;
}

/// `doctor`'s shards finding: each shard's queue counted; jobs left on the queue of a former
/// shard count (nobody serves it) are a warning.
async fn doctor_counts_each_shards_queue(db: &TestDb) {
    use pipeline::doctor::{Level, shards};
    let store = &db.store;
    import(store, "封神演义.txt", WORK).await;
    let page = stored_page(store, "http://pirate.example/fs/2", &pirate_chapter(2)).await;
    let one = shards(1, store).await;
    assert_eq!(one.level, Level::Ok, "{one:?}");
    for k in 0..2 {
        store
            .enqueue(&jobs::match_shard_job(page, shard(k)).unwrap())
            .await
            .unwrap();
    }
    let two = shards(2, store).await;
    assert_eq!(two.level, Level::Ok, "{two:?}");
    assert!(
        two.detail.contains("match-0-of-2: 1, match-1-of-2: 1"),
        "{two:?}"
    );
    // The deployment went from 2 shards to 3: the jobs of 2 wait for nobody.
    let three = shards(3, store).await;
    assert_eq!(three.level, Level::Warn, "{three:?}");
    assert!(
        three.detail.contains("match-0-of-2: 1, match-1-of-2: 1"),
        "{three:?}"
    );
}

store::on_both_backends!(
    two_shards_find_what_one_index_finds,
    a_shard_record_keeps_the_other_shards_rows,
    a_dead_shard_workers_jobs_run_again,
    doctor_counts_each_shards_queue,
);
