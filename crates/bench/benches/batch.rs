//! Batch mode against page-at-a-time matching, up to candidates (verification costs the same
//! both ways): `cargo bench -p bench --bench batch`. Chapters are the sample's registered
//! chapters and synthetic variants of them (as `benches/matcher.rs`), pages the pirate pages
//! of every case, round-robin.
//!
//! * `batch/page_query_{C}`: one page's candidates from an index of C chapters.
//! * `batch/build_{C}`: building that index (C chapters added, then built).
//! * `batch/stream_{B}x{C}`: a batch of B pages, C chapters streamed past it, finished.
//!
//! Then it fits the [`matcher::CostModel`] constants to a grid of (B, C) timed once each and
//! prints, for each C, the batch size from which batch mode is cheaper, with the chapter index
//! loaded and without.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use bench::pirate_pages;
use bench::quality::fingerprint_all;
use bench::synthetic::{SYNTHETIC_STRIDE, common_hashes, synthetic_variant};
use criterion::{Criterion, criterion_group, criterion_main};
use fingerprint::ChapterFingerprint;
use matcher::{
    BatchQuery, ChapterEntry, ChapterId, CostModel, Index, IndexBuilder, MatcherSettings, Probe,
    WorkId,
};

struct Data {
    chapters: Vec<(ChapterId, WorkId, ChapterFingerprint)>,
    pages: Vec<Probe>,
    settings: MatcherSettings,
}

fn data(max_chapters: usize, max_pages: usize) -> Data {
    let corpus = common::corpus_with(8192);
    let fingerprinter = common::fingerprinter();
    let bases = fingerprint_all(&corpus.registered, &fingerprinter, 2);
    let common = common_hashes(&bases);
    let settings = MatcherSettings::default();
    let mut chapters = Vec::with_capacity(max_chapters);
    'fill: for variant in 0.. {
        for (chapter, base) in corpus.registered.iter().zip(&bases) {
            if chapters.len() == max_chapters {
                break 'fill;
            }
            let fp = if variant == 0 {
                base.clone()
            } else {
                synthetic_variant(base, variant as u64, &common)
            };
            chapters.push((
                ChapterId(variant * SYNTHETIC_STRIDE + chapter.id.0),
                chapter.work,
                fp,
            ));
        }
    }
    let index = IndexBuilder::new(settings.index.clone()).unwrap().build();
    let matcher = matcher::Matcher::new(settings.clone(), fingerprinter, index).unwrap();
    let texts = pirate_pages(&corpus, 20, 5);
    let probes: Vec<Probe> = texts
        .iter()
        .map(|p| matcher.probe(&matcher.page(&p.text)).unwrap())
        .collect();
    let pages = probes.iter().cycle().take(max_pages).cloned().collect();
    Data {
        chapters,
        pages,
        settings,
    }
}

fn build(d: &Data, chapters: usize) -> Index {
    let mut b = IndexBuilder::new(d.settings.index.clone()).unwrap();
    for (id, work, fp) in &d.chapters[..chapters] {
        b.add(&ChapterEntry::new(*id, *work, fp)).unwrap();
    }
    b.build()
}

fn batch(d: &Data, pages: usize, chapters: usize) -> usize {
    let mut q = BatchQuery::new(&d.settings, &d.pages[..pages]).unwrap();
    for (id, work, fp) in &d.chapters[..chapters] {
        q.add(&ChapterEntry::new(*id, *work, fp)).unwrap();
    }
    q.finish().iter().map(Vec::len).sum()
}

fn query_all(d: &Data, index: &Index, pages: usize) -> usize {
    d.pages[..pages]
        .iter()
        .map(|p| index.candidates(p, &d.settings.candidates).len())
        .sum()
}

const CHAPTERS: [usize; 3] = [2_000, 10_000, 40_000];
const PAGES: [usize; 4] = [10, 100, 1_000, 4_000];

fn criterion_runs(c: &mut Criterion) {
    let d = data(*CHAPTERS.last().unwrap(), *PAGES.last().unwrap());
    let mut g = c.benchmark_group("batch");
    g.sample_size(10);
    for &chapters in &CHAPTERS {
        let index = build(&d, chapters);
        let mut i = 0;
        g.bench_function(format!("page_query_{chapters}"), |b| {
            b.iter(|| {
                i = (i + 1) % d.pages.len();
                index.candidates(black_box(&d.pages[i]), &d.settings.candidates)
            })
        });
        g.bench_function(format!("build_{chapters}"), |b| {
            b.iter(|| build(&d, black_box(chapters)))
        });
        for &pages in &PAGES[..3] {
            g.bench_function(format!("stream_{pages}x{chapters}"), |b| {
                b.iter(|| batch(&d, black_box(pages), chapters))
            });
        }
    }
    g.finish();
    crossover(&d);
}

fn nanos(f: impl FnOnce() -> usize) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_nanos() as f64
}

/// Fits the cost model to the grid and prints the cross-over.
fn crossover(d: &Data) {
    let (c_lo, c_hi) = (CHAPTERS[0], *CHAPTERS.last().unwrap());
    let (b_lo, b_hi) = (PAGES[0], *PAGES.last().unwrap());
    let index = build(d, c_hi);
    let page_query_ns = nanos(|| query_all(d, &index, b_hi)) / b_hi as f64;
    let chapter_build_ns = nanos(|| build(d, c_hi).len()) / c_hi as f64;
    // batch(B, C) = B × page + C × stream: two points along each axis.
    let hi_hi = nanos(|| batch(d, b_hi, c_hi));
    let lo_hi = nanos(|| batch(d, b_lo, c_hi));
    let hi_lo = nanos(|| batch(d, b_hi, c_lo));
    let model = CostModel {
        page_query_ns,
        chapter_build_ns,
        batch_page_ns: ((hi_hi - lo_hi) / (b_hi - b_lo) as f64).max(0.0),
        chapter_stream_ns: ((hi_hi - hi_lo) / (c_hi - c_lo) as f64).max(0.0),
    };
    println!("\nbatch mode cost model (ns): {model:?}");
    println!(
        "| B \\ C | {} |",
        CHAPTERS.map(|c| c.to_string()).join(" | ")
    );
    for &pages in &PAGES {
        let row: Vec<String> = CHAPTERS
            .iter()
            .map(|&chapters| {
                let index = build(d, chapters);
                let single = nanos(|| query_all(d, &index, pages)) / 1e6;
                let stream = nanos(|| batch(d, pages, chapters)) / 1e6;
                format!(
                    "page {single:.1} ms, batch {stream:.1} ms → {}",
                    if stream < single { "batch" } else { "page" }
                )
            })
            .collect();
        println!("| {pages} | {} |", row.join(" | "));
    }
    for chapters in [10_000, 100_000, 1_000_000] {
        println!(
            "C = {chapters}: batch cheaper from B = {:?} (index loaded), {:?} (not loaded)",
            model.crossover(chapters, true),
            model.crossover(chapters, false)
        );
    }
}

criterion_group!(benches, criterion_runs);
criterion_main!(benches);
