//! Queue throughput: enqueue + claim + complete, end to end through the real worker loop.
//!
//! Each iteration enqueues N no-op jobs from 4 producer tasks while 4 [`Worker`] loops
//! (concurrency 4 each) claim and complete them, and stops when all N are done. Run with
//! `cargo bench -p store --bench queue`; Postgres comes from `COPYHOUND_TEST_POSTGRES_URL`
//! (a fresh schema; skipped with a message when unreachable).

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use store::testing::TestDb;
use store::{JobQueue, NewJob, Store, Worker, WorkerSettings};
use tokio::runtime::Runtime;

const JOBS: u64 = 4000;
const WORKERS: usize = 4;

#[derive(Serialize, Deserialize)]
enum BenchJob {
    Noop { n: u64 },
}

async fn run_batch(store: &Store) -> Duration {
    let (stop, rx) = tokio::sync::watch::channel(false);
    let workers: Vec<_> = (0..WORKERS)
        .map(|i| {
            let mut rx = rx.clone();
            let settings = WorkerSettings {
                name: format!("bench-{i}"),
                concurrency: 4,
                poll_interval: Duration::from_millis(5),
                maintenance_interval: Duration::from_secs(60),
                ..WorkerSettings::default()
            };
            tokio::spawn(Worker::new(store.clone(), settings).run(
                |_: BenchJob, _| async { Ok(()) },
                async move {
                    let _ = rx.wait_for(|s| *s).await;
                },
            ))
        })
        .collect();
    let start = Instant::now();
    let producers: Vec<_> = (0..4u64)
        .map(|p| {
            let store = store.clone();
            tokio::spawn(async move {
                for n in (p..JOBS).step_by(4) {
                    let job = NewJob::new(&BenchJob::Noop { n }).unwrap();
                    store.enqueue(&job).await.unwrap();
                }
            })
        })
        .collect();
    for p in producers {
        p.await.unwrap();
    }
    loop {
        let done: u64 = store.counts().await.unwrap().iter().map(|c| c.done).sum();
        if done >= JOBS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let elapsed = start.elapsed();
    stop.send(true).unwrap();
    for w in workers {
        w.await.unwrap();
    }
    store
        .purge_done(chrono::Utc::now() + chrono::Duration::seconds(1))
        .await
        .unwrap();
    elapsed
}

fn bench_backend(c: &mut Criterion, name: &str, db: Option<TestDb>, rt: &Runtime) {
    let Some(db) = db else {
        eprintln!("queue/{name}: SKIPPED (database not reachable)");
        return;
    };
    let mut group = c.benchmark_group("queue");
    group.throughput(Throughput::Elements(JOBS));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function(
        format!("{name}/enqueue+claim+complete/{WORKERS}-workers"),
        |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += run_batch(&db.store).await;
                    }
                    total
                })
            });
        },
    );
    group.finish();
}

fn queue(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let sqlite = rt.block_on(store::testing::sqlite("bench"));
    bench_backend(c, "sqlite", sqlite, &rt);
    let postgres = rt.block_on(store::testing::postgres("bench"));
    bench_backend(c, "postgres", postgres, &rt);
}

criterion_group!(benches, queue);
criterion_main!(benches);
