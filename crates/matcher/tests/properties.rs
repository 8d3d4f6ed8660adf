//! Property tests of the matcher's exact guarantees: SimHash tables return exactly the
//! brute-force set (built, inserted, removed, merged), LSH buckets report exactly the chapters
//! that share whole bands, and alignment runs are exact, co-linear and counted once.

use std::collections::{HashMap, HashSet};

use fingerprint::hash::fmix64;
use fingerprint::{DnaCode, FingerprintSummary, MinHash, NORMALIZER_VERSION, SentenceSignature};
use matcher::align::align;
use matcher::index::Probe;
use matcher::simhash::{SimHashIndex, SimHashLayout};
use matcher::{
    AlignSettings, CandidateSettings, ChapterEntry, ChapterId, IndexBuilder, IndexSettings, WorkId,
};
use proptest::prelude::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        fmix64(self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// `x` with `d` distinct random bits flipped.
    fn flip(&mut self, x: u64, d: u32) -> u64 {
        let mut out = x;
        while (out ^ x).count_ones() < d {
            out ^= 1 << self.below(64);
        }
        out
    }
}

fn found(index: &SimHashIndex, q: u64, dead: &HashSet<u32>) -> Vec<(u32, u32)> {
    let mut out = index.query(q);
    out.retain(|(v, _)| !dead.contains(v));
    out
}

fn brute(entries: &[(u64, u32)], q: u64, k: u32, dead: &HashSet<u32>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = entries
        .iter()
        .map(|&(fp, v)| (v, (fp ^ q).count_ones()))
        .filter(|&(v, d)| d <= k && !dead.contains(&v))
        .collect();
    out.sort_unstable();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn simhash_tables_equal_brute_force(
        seed in any::<u64>(),
        n in 1usize..400,
        inserted in 0usize..60,
        k in 0u32..=4,
        extra_blocks in 0usize..=3,
        removed in prop::collection::vec(0u32..460, 0..30),
    ) {
        let mut rng = Rng(seed);
        let bases: Vec<u64> = (0..8).map(|_| rng.next()).collect();
        // Half random, half planted within k + 1 bits of a few bases.
        let entries: Vec<(u64, u32)> = (0..(n + inserted) as u32)
            .map(|i| {
                let fp = if rng.below(2) == 0 {
                    rng.next()
                } else {
                    let base = bases[rng.below(8) as usize];
                    let d = rng.below(k as u64 + 2) as u32;
                    rng.flip(base, d)
                };
                (fp, i)
            })
            .collect();
        let layout = SimHashLayout::with_blocks(k, k as usize + 1 + extra_blocks);
        let mut index = SimHashIndex::build(layout.clone(), &entries[..n]);
        for &(fp, v) in &entries[n..] {
            index.insert(fp, v);
        }
        let dead: HashSet<u32> = removed.into_iter().collect();
        let mut queries: Vec<u64> = Vec::new();
        for &b in &bases {
            let d = rng.below(3) as u32;
            queries.push(rng.flip(b, d));
            queries.push(rng.next());
        }
        queries.extend(entries.iter().take(4).map(|e| e.0));
        for &q in &queries {
            prop_assert_eq!(found(&index, q, &dead), brute(&entries, q, k, &dead));
        }
        // Merging folds the delta in, drops the removed entries and may change the layout.
        index.merge(SimHashLayout::plan(k, n), &|v| !dead.contains(&v));
        prop_assert_eq!(index.delta_len(), 0);
        let none = HashSet::new();
        for &q in &queries {
            prop_assert_eq!(found(&index, q, &none), brute(&entries, q, k, &dead));
        }
    }

    #[test]
    fn lsh_reports_exactly_the_chapters_sharing_whole_bands(
        seed in any::<u64>(),
        n in 2usize..40,
        bands in 1usize..=20,
        rows in 1usize..=6,
    ) {
        prop_assume!(bands * rows <= 128);
        let mut rng = Rng(seed);
        // Signatures derived from a few ancestors, each value kept with a random probability,
        // so pairs share anything from no band to all of them.
        let ancestors: Vec<Vec<u32>> = (0..3)
            .map(|_| (0..128).map(|_| rng.next() as u32).collect())
            .collect();
        let signatures: Vec<Vec<u32>> = (0..n)
            .map(|_| {
                let a = &ancestors[rng.below(3) as usize];
                let keep = rng.below(101);
                a.iter()
                    .map(|&v| if rng.below(100) < keep { v } else { rng.next() as u32 })
                    .collect()
            })
            .collect();
        let settings = IndexSettings { lsh_bands: bands, lsh_rows: rows, ..IndexSettings::default() };
        let summary = |values: &[u32], simhash: u64| FingerprintSummary {
            normalizer_version: NORMALIZER_VERSION,
            chars: 1000,
            simhash,
            minhash: MinHash::from_values(values.to_vec()),
            sentences: SentenceSignature::default(),
            dna: DnaCode::default(),
        };
        let summaries: Vec<FingerprintSummary> =
            signatures.iter().map(|s| summary(s, rng.next())).collect();
        let mut builder = IndexBuilder::new(settings.clone()).unwrap();
        for (i, s) in summaries.iter().enumerate() {
            builder
                .add(&ChapterEntry {
                    id: ChapterId(i as i64),
                    work: WorkId(0),
                    summary: s,
                    winnow: &[],
                    pinyin_winnow: &[],
                })
                .unwrap();
        }
        let index = builder.build();
        // No cap on posting lists: here many chapters share a band on purpose.
        let wide = CandidateSettings {
            max_candidates: 1000,
            max_key_postings: usize::MAX,
            max_key_share: 1.0,
            ..CandidateSettings::default()
        };
        for (q, s) in summaries.iter().enumerate() {
            let probe = Probe::new(&settings, s, &[], &[], &[]).unwrap();
            let got: HashMap<i64, u32> = index
                .candidates(&probe, &wide)
                .into_iter()
                .map(|c| (c.chapter.0, c.evidence.lsh_bands))
                .collect();
            for (i, other) in signatures.iter().enumerate() {
                let shared = (0..bands)
                    .filter(|b| signatures[q][b * rows..(b + 1) * rows] == other[b * rows..(b + 1) * rows])
                    .count() as u32;
                prop_assert_eq!(got.get(&(i as i64)).copied().unwrap_or(0), shared, "chapter {}", i);
            }
        }
    }

    #[test]
    fn alignment_runs_are_exact_colinear_and_counted_once(
        seed in any::<u64>(),
        len in 0usize..400,
        alphabet in 2u64..2000,
        k in 2usize..10,
        max_gap in 0usize..30,
        min_passage in 0usize..40,
    ) {
        let mut rng = Rng(seed);
        let chapter: Vec<u32> = (0..len).map(|_| rng.below(alphabet) as u32).collect();
        // The page: pieces of the chapter (some repeated or out of order) and noise.
        let mut page: Vec<u32> = Vec::new();
        for _ in 0..rng.below(8) {
            match rng.below(3) {
                0 if !chapter.is_empty() => {
                    let a = rng.below(chapter.len() as u64) as usize;
                    let b = (a + rng.below(120) as usize).min(chapter.len());
                    page.extend_from_slice(&chapter[a..b]);
                }
                1 => page.extend((0..rng.below(40)).map(|_| rng.below(alphabet) as u32)),
                _ => page.extend_from_slice(&chapter),
            }
        }
        let settings = AlignSettings { k, max_gap, min_passage_chars: min_passage };
        let a = align(&page, &chapter, &settings);
        let mut total = 0;
        for r in &a.runs {
            let (p, c, l) = (r.page as usize, r.chapter as usize, r.len as usize);
            prop_assert!(l > 0);
            prop_assert_eq!(&page[p..p + l], &chapter[c..c + l]);
            total += l;
        }
        for w in a.runs.windows(2) {
            prop_assert!(w[0].page + w[0].len <= w[1].page);
            prop_assert!(w[0].chapter + w[0].len <= w[1].chapter);
        }
        prop_assert_eq!(a.matched(), total);
        prop_assert!(total <= page.len().min(chapter.len()));
        let mut next_run = 0;
        for p in &a.passages {
            prop_assert_eq!(p.runs.start, next_run);
            next_run = p.runs.end;
            let runs = &a.runs[p.runs.clone()];
            prop_assert_eq!(p.matched, runs.iter().map(|r| r.len as usize).sum::<usize>());
            prop_assert!(p.matched >= min_passage);
            prop_assert_eq!(p.page.start, runs[0].page as usize);
            prop_assert_eq!(p.chapter.end, (runs[runs.len() - 1].chapter + runs[runs.len() - 1].len) as usize);
        }
        prop_assert_eq!(next_run, a.runs.len());
    }
}

#[test]
fn a_verbatim_copy_aligns_completely() {
    let mut rng = Rng(3);
    let chapter: Vec<u32> = (0..5000).map(|_| 100 + rng.below(3000) as u32).collect();
    let mut page: Vec<u32> = (0..50).collect();
    page.extend_from_slice(&chapter);
    page.extend(0..50);
    let a = align(&page, &chapter, &AlignSettings::default());
    assert_eq!(a.matched(), 5000);
    assert_eq!(a.passages.len(), 1);
    assert_eq!(a.passages[0].page, 50..5050);
}
