//! Criterion benchmarks of whole matcher queries on pirate pages (means; the p99 figures come
//! from `examples/scale.rs`). `cargo bench -p bench --bench matcher`.
//!
//! * `query/check_page_100k`: a whole query (prepare the page, candidates, verify, select) on
//!   an index of 100,000 chapters: the bundled chapters and synthetic variants of them, pages
//!   taken round-robin from the pirate pages of every case.
//! * `query/verify_one`: aligning one ~8 KB page with its chapter.
//! * `snapshot/load_100k`: the same index of 100,000 chapters read back from its snapshot
//!   bytes (hash checked, tables copied, id map rebuilt), the part of a worker's start-up
//!   after the file is read.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

use bench::quality::fingerprint_all;
use bench::synthetic::{SYNTHETIC_STRIDE, SyntheticSource, common_hashes, synthetic_variant};
use bench::{Case, pirate_pages};
use criterion::{Criterion, criterion_group, criterion_main};
use matcher::{
    ChapterEntry, ChapterId, Index, IndexBuilder, Matcher, MatcherSettings, MemorySource,
};

fn query(c: &mut Criterion) {
    let corpus = common::corpus_with(8192);
    let fingerprinter = common::fingerprinter();
    let bases = fingerprint_all(&corpus.registered, &fingerprinter, 2);
    let common = common_hashes(&bases);
    let settings = MatcherSettings::default();
    let mut builder = IndexBuilder::new(settings.index.clone()).unwrap();
    for variant in 0..(100_000 / bases.len()) as i64 {
        for (chapter, base) in corpus.registered.iter().zip(&bases) {
            let fp = if variant == 0 {
                base.clone()
            } else {
                synthetic_variant(base, variant as u64, &common)
            };
            let id = ChapterId(variant * SYNTHETIC_STRIDE + chapter.id.0);
            builder
                .add(&ChapterEntry::new(id, chapter.work, &fp))
                .unwrap();
        }
    }
    let mut texts = MemorySource::new();
    for chapter in &corpus.registered {
        texts.insert(chapter.id, chapter.text.clone());
    }
    let matcher = Matcher::new(settings, fingerprinter, builder.build()).unwrap();
    let source = SyntheticSource { bases: texts };
    let pages = pirate_pages(&corpus, 10, 5);
    let mut i = 0;
    let mut g = c.benchmark_group("query");
    g.bench_function("check_page_100k", |b| {
        b.iter(|| {
            i = (i + 1) % pages.len();
            matcher.check(black_box(&pages[i].text), &source).unwrap()
        })
    });
    let with_ads = pages.iter().find(|p| p.case == Case::Ads).unwrap();
    let page = matcher.page(&with_ads.text);
    let candidate = matcher.candidates(&page).unwrap()[0];
    let chapter = source.bases.get(candidate.chapter).unwrap();
    g.bench_function("verify_one", |b| {
        b.iter(|| matcher.verify(&page, &candidate, black_box(chapter)))
    });
    g.finish();

    let bytes = matcher.index().clone().to_snapshot(0);
    let settings = matcher.index().settings().clone();
    let mut g = c.benchmark_group("snapshot");
    g.sample_size(10);
    g.bench_function("load_100k", |b| {
        b.iter(|| Index::from_snapshot(black_box(&bytes), &settings).unwrap())
    });
    g.finish();
}

criterion_group!(benches, query);
criterion_main!(benches);
