//! The conformance suite on Postgres (a fresh schema per test, URL from
//! `COPYHOUND_TEST_POSTGRES_URL`), plus what only Postgres does: surviving lost connections.
//! Without a reachable server each test prints a loud SKIPPED line, or fails when
//! `COPYHOUND_REQUIRE_POSTGRES=1` (as under `.ci/run`).

use crate::common;
use crate::conformance_suite;

conformance_suite!(store::testing::postgres);

use std::time::{Duration, Instant};

use store::{JobQueue, NewJob, Worker, WorkerSettings};

/// Kills every connection of the workers' pools again and again for two seconds while 4
/// workers run 600 jobs (about 2.5 s of work), as a server restart would: the pools
/// reconnect and every job ends done, none lost or dead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_reconnect_after_losing_their_connections() {
    let Some(db) =
        store::testing::postgres("workers_reconnect_after_losing_their_connections").await
    else {
        return;
    };
    let s = &db.store;
    const JOBS: u32 = 600;
    for n in 0..JOBS {
        s.enqueue(&NewJob::new(&common::conformance::TestJob::Count { n }).unwrap())
            .await
            .unwrap();
    }
    let (stop, rx) = tokio::sync::watch::channel(false);
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let mut rx = rx.clone();
            let settings = WorkerSettings {
                name: format!("w{i}"),
                concurrency: 2,
                poll_interval: Duration::from_millis(20),
                maintenance_interval: Duration::from_millis(200),
                lease: Duration::from_secs(3),
                heartbeat: Duration::from_secs(1),
                ..WorkerSettings::default()
            };
            tokio::spawn(Worker::new(s.clone(), settings).run(
                |_: common::conformance::TestJob, _| async {
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    Ok(())
                },
                async move {
                    let _ = rx.wait_for(|s| *s).await;
                },
            ))
        })
        .collect();

    // Let the workers get going, then cut their connections repeatedly.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let done_before_outage = s.counts().await.unwrap()[0].done;
    assert!(
        done_before_outage < u64::from(JOBS) / 2,
        "{done_before_outage} done already"
    );
    let outage = Instant::now();
    let mut killed = 0;
    while outage.elapsed() < Duration::from_secs(2) {
        killed += store::testing::terminate_connections(&db).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(killed > 0, "the outage killed no connection");
    let done_after_outage = s.counts().await.unwrap()[0].done;

    let start = Instant::now();
    loop {
        let c = s.counts().await.unwrap();
        if c[0].done == u64::from(JOBS) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "workers did not carry on after reconnecting: {c:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.send(true).unwrap();
    let mut completed = 0;
    for w in workers {
        let r = w.await.unwrap();
        assert_eq!(r.dead, 0, "{r:?}");
        completed += r.completed;
    }
    // A completion whose reply was lost with its connection runs again (at least once).
    assert!(completed >= u64::from(JOBS), "{completed}");
    let c = &s.counts().await.unwrap()[0];
    assert_eq!((c.queued, c.running, c.dead), (0, 0, 0));
    eprintln!(
        "killed {killed} connections; jobs done: {done_before_outage} before the outage, \
         {done_after_outage} after it, {JOBS} in {:?}",
        start.elapsed() + Duration::from_secs(2)
    );
}
