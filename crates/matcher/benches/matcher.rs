//! Criterion benchmarks of the matcher's hot paths that need no pirate pages (means; the
//! p99 figures come from the `bench` crate's `examples/scale.rs`). `cargo bench -p matcher`;
//! whole queries on pirate pages are `cargo bench -p bench --bench matcher`.
//!
//! * `simhash/query_10m_k3`: one lookup in permuted tables over 10M fingerprints.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use fingerprint::hash::fmix64;
use matcher::simhash::{SimHashIndex, SimHashLayout};

fn simhash(c: &mut Criterion) {
    let n = 10_000_000;
    let entries: Vec<(u64, u32)> = (0..n as u64).map(|i| (fmix64(i + 1), i as u32)).collect();
    let index = SimHashIndex::build(SimHashLayout::plan(3, n), &entries);
    drop(entries);
    let queries: Vec<u64> = (0..4096u64)
        .map(|i| fmix64(i + 1) ^ (1 << (i % 64)))
        .collect();
    let mut i = 0;
    c.bench_function("simhash/query_10m_k3", |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            index.query(black_box(queries[i]))
        })
    });
}

criterion_group!(benches, simhash);
criterion_main!(benches);
