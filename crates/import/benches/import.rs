//! Import throughput with fingerprinting: every novel of `../shared/corpus/zh` (17.5 MB of
//! Chinese, override with `COPYHOUND_CORPUS=DIR`) into a fresh SQLite file and a fresh
//! Postgres schema (`COPYHOUND_TEST_POSTGRES_URL`) per iteration. Store setup is not timed.
//! Run with `cargo bench -p import --bench import`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use import::{ImportOptions, ImportSettings, Importer};
use store::testing::TestDb;
use tokio::runtime::Runtime;

fn corpus() -> Option<Vec<(String, Vec<u8>)>> {
    let dir = std::env::var_os("COPYHOUND_CORPUS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/zh"),
        PathBuf::from,
    );
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    (!files.is_empty()).then_some(files)
}

fn bench_backend<F, Fut>(
    c: &mut Criterion,
    name: &str,
    files: &[(String, Vec<u8>)],
    importer: &Importer,
    rt: &Runtime,
    fresh_db: F,
) where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<TestDb>>,
{
    if rt.block_on(fresh_db()).is_none() {
        eprintln!("import/{name}: SKIPPED (database not reachable)");
        return;
    }
    let bytes: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    let mut group = c.benchmark_group("import");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(60));
    group.bench_function(format!("{name}/zh-corpus"), |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let db = fresh_db().await.unwrap();
                    let start = Instant::now();
                    for (file, data) in files {
                        importer
                            .import_bytes(
                                &db.store,
                                file,
                                data.clone(),
                                &ImportOptions::default(),
                                &(),
                            )
                            .await
                            .unwrap();
                    }
                    total += start.elapsed();
                }
                total
            })
        });
    });
    group.finish();
}

fn import(c: &mut Criterion) {
    let Some(files) = corpus() else {
        eprintln!("import: SKIPPED (no corpus: set COPYHOUND_CORPUS to a folder of .txt novels)");
        return;
    };
    let rt = Runtime::new().unwrap();
    let importer = Importer::new(ImportSettings::default()).unwrap();
    bench_backend(c, "sqlite", &files, &importer, &rt, || {
        store::testing::sqlite("bench")
    });
    bench_backend(c, "postgres", &files, &importer, &rt, || {
        store::testing::postgres("bench")
    });
}

criterion_group!(benches, import);
criterion_main!(benches);
