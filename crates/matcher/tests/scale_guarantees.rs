//! The statistical and scale guarantees: SimHash tables return exactly the brute-force
//! set on 200,000 fingerprints with planted near neighbours, and LSH candidate rates follow
//! the S-curve `1-(1-s^r)^b` within sampling error.

use fingerprint::hash::fmix64;
use fingerprint::minhash::{MinHasher, lsh_probability};
use fingerprint::{DnaCode, FingerprintSummary, NORMALIZER_VERSION, SentenceSignature};
use matcher::index::Probe;
use matcher::simhash::{SimHashIndex, SimHashLayout};
use matcher::{CandidateSettings, ChapterEntry, ChapterId, IndexBuilder, IndexSettings, WorkId};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        fmix64(self.0)
    }
}

#[test]
fn simhash_tables_equal_brute_force_on_200k_fingerprints() {
    const N: usize = 200_000;
    const QUERIES: usize = 400;
    let k = 3;
    let mut rng = Rng(42);
    let queries: Vec<u64> = (0..QUERIES).map(|_| rng.next()).collect();
    let mut entries: Vec<(u64, u32)> = Vec::with_capacity(N);
    // Around every query, neighbours at distances 0..=5: those up to k must be found, the
    // others must not.
    for &q in &queries {
        for d in 0..=5u32 {
            let mut fp = q;
            while (fp ^ q).count_ones() < d {
                fp ^= 1 << (rng.next() % 64);
            }
            entries.push((fp, entries.len() as u32));
        }
    }
    while entries.len() < N {
        entries.push((rng.next(), entries.len() as u32));
    }
    let layout = SimHashLayout::plan(k, N);
    assert_eq!(layout.tables(), 4);
    let index = SimHashIndex::build(layout, &entries);
    let mut neighbours = 0;
    for &q in &queries {
        let got = index.query(q);
        let mut want: Vec<(u32, u32)> = entries
            .iter()
            .map(|&(fp, v)| (v, (fp ^ q).count_ones()))
            .filter(|&(_, d)| d <= k)
            .collect();
        want.sort_unstable();
        assert_eq!(got, want, "query {q:#x}");
        neighbours += got.len();
    }
    assert!(neighbours >= QUERIES * 4, "{neighbours}");
}

/// Two sets of random elements whose union has `union` elements and whose Jaccard similarity
/// is `jaccard`.
fn pair(rng: &mut Rng, union: usize, jaccard: f64) -> (Vec<u64>, Vec<u64>) {
    let shared = (jaccard * union as f64).round() as usize;
    let own = (union - shared) / 2;
    let common: Vec<u64> = (0..shared).map(|_| rng.next()).collect();
    let mut a = common.clone();
    let mut b = common;
    a.extend((0..own).map(|_| rng.next()));
    b.extend((0..union - shared - own).map(|_| rng.next()));
    (a, b)
}

fn summary(minhash: fingerprint::MinHash, simhash: u64) -> FingerprintSummary {
    FingerprintSummary {
        normalizer_version: NORMALIZER_VERSION,
        chars: 1000,
        simhash,
        minhash,
        sentences: SentenceSignature::default(),
        dna: DnaCode::default(),
    }
}

#[test]
fn lsh_candidate_rates_follow_the_s_curve() {
    const TRIALS: usize = 400;
    let settings = IndexSettings::default();
    let (bands, rows) = (settings.lsh_bands, settings.lsh_rows);
    let minhasher = MinHasher::default();
    let mut rng = Rng(7);
    let similarities = [0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9];
    let mut builder = IndexBuilder::new(settings.clone()).unwrap();
    let mut queries = Vec::new();
    for (si, &s) in similarities.iter().enumerate() {
        for t in 0..TRIALS {
            let (a, b) = pair(&mut rng, 600, s);
            let id = ChapterId((si * TRIALS + t) as i64);
            let sa = summary(minhasher.hash(a), rng.next());
            builder
                .add(&ChapterEntry {
                    id,
                    work: WorkId(0),
                    summary: &sa,
                    winnow: &[],
                    pinyin_winnow: &[],
                })
                .unwrap();
            queries.push((si, id, summary(minhasher.hash(b), rng.next())));
        }
    }
    let index = builder.build();
    let wide = CandidateSettings {
        max_candidates: 1000,
        ..CandidateSettings::default()
    };
    let mut hits = vec![0usize; similarities.len()];
    for (si, id, s) in &queries {
        let probe = Probe::new(&settings, s, &[], &[], &[]).unwrap();
        let found = index
            .candidates(&probe, &wide)
            .iter()
            .any(|c| c.chapter == *id && c.evidence.lsh_bands > 0);
        hits[*si] += usize::from(found);
    }
    println!("| Jaccard | expected 1-(1-s^{rows})^{bands} | measured ({TRIALS} pairs) |");
    for (si, &s) in similarities.iter().enumerate() {
        let p = lsh_probability(s, bands, rows);
        let rate = hits[si] as f64 / TRIALS as f64;
        let se = (p * (1.0 - p) / TRIALS as f64).sqrt();
        println!("| {s:.2} | {p:.3} | {rate:.3} |");
        // Four standard errors, plus a little for the one-permutation MinHash's dependence
        // between values (its per-value agreement is not exactly independent).
        assert!(
            (rate - p).abs() <= 4.0 * se + 0.03,
            "s = {s}: expected {p:.3}, measured {rate:.3} (se {se:.3})"
        );
    }
}
