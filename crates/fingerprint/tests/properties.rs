//! Property tests of the guarantees the fingerprints make: MinHash estimates Jaccard within
//! its standard error, winnowing finds every long enough shared run, SimHash is a function of
//! the text. Seeds are fixed so a run is reproducible; failures print the case.

use std::collections::HashSet;

use fingerprint::hash::fmix64;
use fingerprint::minhash::MinHasher;
use fingerprint::shingle::ShingleSet;
use fingerprint::winnow::winnow_text;
use fingerprint::{FingerprintSettings, Fingerprinter};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x636f_7079),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Two sets with a chosen overlap: `shared` common elements, `only_a`/`only_b` private ones.
/// The seed is mixed first so that different seeds give unrelated sets (with `seed ^ i`
/// alone, small seeds would permute the same elements and every "independent" pair would
/// share its errors).
fn set_pair(seed: u64, shared: usize, only_a: usize, only_b: usize) -> (Vec<u64>, Vec<u64>) {
    let key = fmix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
    let el = |tag: u64, i: usize| fmix64(key ^ (tag << 48) ^ i as u64);
    let common: Vec<u64> = (0..shared).map(|i| el(1, i)).collect();
    let mut a = common.clone();
    a.extend((0..only_a).map(|i| el(2, i)));
    let mut b = common;
    b.extend((0..only_b).map(|i| el(3, i)));
    (a, b)
}

proptest! {
    #![proptest_config(config(400))]

    /// No estimate strays beyond 5 standard errors `sqrt(J(1-J)/N)` of the exact Jaccard
    /// (plus one value, 1/N, for the estimator's granularity); the 3-standard-error share is
    /// checked by `minhash_estimates_within_three_standard_errors` below.
    #[test]
    fn minhash_estimate_never_beyond_five_standard_errors(
        seed in any::<u64>(),
        shared in 0usize..1500,
        only_a in 0usize..1500,
        only_b in 0usize..1500,
    ) {
        prop_assume!(shared + only_a > 0 && shared + only_b > 0);
        let (a, b) = set_pair(seed, shared, only_a, only_b);
        let exact = ShingleSet::new(a.clone()).jaccard(&ShingleSet::new(b.clone()));
        let m = MinHasher::default();
        let n = m.len() as f64;
        let estimate = m.hash(a).jaccard(&m.hash(b));
        let se = (exact * (1.0 - exact) / n).sqrt();
        prop_assert!(
            (estimate - exact).abs() <= 5.0 * se + 1.0 / n,
            "exact {exact:.4} estimate {estimate:.4} se {se:.4}"
        );
    }

    /// Winnowing's guarantee: a shared run of at least w + k - 1 characters yields a shared
    /// fingerprint, whatever surrounds it (small alphabets make ties and repeats common).
    #[test]
    fn winnowing_finds_every_long_shared_run(
        k in 1usize..9,
        w in 1usize..25,
        extra in 0usize..20,
        prefix_a in "[a-d你好]{0,60}",
        prefix_b in "[a-d你好]{0,60}",
        suffix_a in "[a-d你好]{0,60}",
        suffix_b in "[a-d你好]{0,60}",
        seed in any::<u64>(),
    ) {
        let len = w + k - 1 + extra;
        let alphabet: Vec<char> = "abcd你好世界天下".chars().collect();
        let shared: String = (0..len)
            .map(|i| alphabet[(fmix64(seed ^ i as u64) % alphabet.len() as u64) as usize])
            .collect();
        let a = format!("{prefix_a}{shared}{suffix_a}");
        let b = format!("{prefix_b}{shared}{suffix_b}");
        let fa: HashSet<u64> = winnow_text(&a, k, w).into_iter().map(|f| f.hash).collect();
        let fb: HashSet<u64> = winnow_text(&b, k, w).into_iter().map(|f| f.hash).collect();
        prop_assert!(!fa.is_disjoint(&fb), "k={k} w={w} shared={shared:?}");
    }

    /// Winnowing positions point at the k-gram they hash.
    #[test]
    fn winnowing_positions_point_at_their_kgram(text in "[a-z天地玄黄]{0,200}", k in 1usize..7, w in 1usize..12) {
        let chars: Vec<char> = text.chars().collect();
        for f in winnow_text(&text, k, w) {
            let gram: String = chars[f.pos as usize..f.pos as usize + k].iter().collect();
            let again = winnow_text(&gram, k, 1);
            prop_assert_eq!(again[0].hash, f.hash);
        }
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// Identical text gives identical fingerprints, and so does any re-spacing or
    /// re-punctuation of Chinese text.
    #[test]
    fn fingerprints_are_functions_of_the_normalised_text(text in "[天地玄黄宇宙洪荒日月盈昃 ，。！]{0,300}") {
        let f = fingerprinter();
        let a = f.fingerprint(&text);
        prop_assert_eq!(&a, &f.fingerprint(&text));
        let respaced: String = text.chars().flat_map(|c| [c, ' ']).collect();
        let b = f.fingerprint(&respaced);
        prop_assert_eq!(a.summary.simhash, b.summary.simhash);
        prop_assert_eq!(&a.summary.minhash, &b.summary.minhash);
        prop_assert_eq!(&a.winnow, &b.winnow);
        prop_assert_eq!(&a.pinyin_winnow, &b.pinyin_winnow);
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// The hot-path normaliser (no offsets, runs copied whole, UTF-8 decoded by hand) gives
    /// exactly what the offset-keeping one does, on text mixing every path: identity runs,
    /// mapped characters (upper case, traditional, full-width), drops, multi-character
    /// expansions, combining marks and jamo that re-run the previous character, astral
    /// characters.
    #[test]
    fn compact_normalisation_equals_the_exact_path(
        text in "[a-zA-Z09 ,.\n天地後來說話ＡＢ１e\u{0301}\u{0308}\u{1100}\u{1161}\u{11A8}한ﬁ①😀𠀀\u{200B}\u{0BC6}\u{0BBE}İß]{0,200}"
    ) {
        let exact = fingerprint::normalize(&text);
        let compact = fingerprint::normalize_compact(&text);
        prop_assert_eq!(compact.text.as_str(), exact.text());
        prop_assert_eq!(compact.breaks.as_slice(), exact.breaks());
        prop_assert_eq!(compact.chars, exact.char_len());
        let mut chars = vec![7];
        fingerprint::normalize::normalize_chars_into(&text, &mut chars);
        let expected: Vec<u64> = std::iter::once(7).chain(exact.text().chars().map(|c| c as u64)).collect();
        prop_assert_eq!(chars, expected);
    }

    /// The first look's single pass hashes what the fingerprint hashes: the same MinHash (as
    /// `Fingerprinter::minhash` has), and every winnowed hash among the k-gram hashes it hands
    /// over, on the same mixed text.
    #[test]
    fn scanned_grams_hold_the_fingerprints_grams(
        text in "[a-zA-Z09 ,.\n天地玄黄後來說話ＡＢ１e\u{0301}\u{1100}\u{1161}한ﬁ①😀𠀀\u{200B}İß]{0,300}"
    ) {
        let f = fingerprinter();
        let grams = f.grams(&fingerprint::normalize_compact(&text));
        let (mut texts, mut pinyins) = (HashSet::new(), HashSet::new());
        // Buffers that held another page before.
        let mut buffers = fingerprint::ScanBuffers::default();
        f.scan_grams("天地玄黄，宇宙洪荒。日月盈昃", &mut buffers, |_, _| {});
        let minhash = f.scan_grams(&text, &mut buffers, |kind, h| {
            match kind {
                fingerprint::GramKind::Text => texts.insert(h),
                fingerprint::GramKind::Pinyin => pinyins.insert(h),
            };
        });
        prop_assert_eq!(&minhash, &grams.minhash);
        prop_assert_eq!(&f.minhash(&text), &grams.minhash, "Fingerprinter::minhash");
        prop_assert_eq!(&f.grams_of_text(&text, &mut buffers), &grams, "grams_of_text");
        prop_assert!(grams.winnow.iter().all(|w| texts.contains(&w.hash)));
        prop_assert!(grams.pinyin_winnow.iter().all(|w| pinyins.contains(&w.hash)));
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// The ASCII fast path of the scan's normaliser (runs of ASCII taken without a branch a
    /// character) gives what the offset-keeping path does, and the scan the fingerprint's
    /// grams, on text that is mostly ASCII words, spaces and punctuation with Han
    /// characters, look-alikes, expansions and combining marks between the runs: a mark
    /// right after a run re-runs the run's last letter, or nothing after a dropped one.
    #[test]
    fn ascii_runs_normalise_and_hash_as_the_general_path(
        text in "([A-Za-z0-9 ,.;!?'\"()\t\n\r-]{0,12}[天地玄黄後來說話，。“”ＡéаΟﬁ①😀𠀀\u{0301}\u{0308}\u{1161}\u{200B}\u{7F}\u{0}]?){0,40}"
    ) {
        let exact = fingerprint::normalize(&text);
        let mut chars = vec![9];
        fingerprint::normalize::normalize_chars_into(&text, &mut chars);
        let expected: Vec<u64> =
            std::iter::once(9).chain(exact.text().chars().map(|c| c as u64)).collect();
        prop_assert_eq!(chars, expected);
        let f = fingerprinter();
        let grams = f.grams(&fingerprint::normalize_compact(&text));
        let mut buffers = fingerprint::ScanBuffers::default();
        let (mut texts, mut pinyins) = (HashSet::new(), HashSet::new());
        let minhash = f.scan_grams(&text, &mut buffers, |kind, h| {
            match kind {
                fingerprint::GramKind::Text => texts.insert(h),
                fingerprint::GramKind::Pinyin => pinyins.insert(h),
            };
        });
        prop_assert_eq!(&minhash, &grams.minhash);
        prop_assert_eq!(&f.grams_of_text(&text, &mut buffers), &grams, "grams_of_text");
        prop_assert!(grams.winnow.iter().all(|w| texts.contains(&w.hash)));
        prop_assert!(grams.pinyin_winnow.iter().all(|w| pinyins.contains(&w.hash)));
    }
}

fn fingerprinter() -> &'static Fingerprinter {
    static F: std::sync::OnceLock<Fingerprinter> = std::sync::OnceLock::new();
    F.get_or_init(|| Fingerprinter::new(FingerprintSettings::default()).unwrap())
}

/// Over 1000 random set pairs (sizes 1–3000, any overlap), estimates fall within 3 standard
/// errors (+1/N) of the exact Jaccard as often as a normal estimator would: a normal tail
/// leaves 0.27% outside, so more than 5 of 1000 (P < 0.001 by chance) means a broken hash or
/// bin assignment.
#[test]
fn minhash_estimates_within_three_standard_errors() {
    let m = MinHasher::default();
    let n = m.len() as f64;
    let mut outside = Vec::new();
    for case in 0..1000u64 {
        let r = |i: u64| fmix64(case.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ i);
        let shared = (r(1) % 1000) as usize;
        let only_a = (r(2) % 1000) as usize + 1;
        let only_b = (r(3) % 1000) as usize + 1;
        let (a, b) = set_pair(r(4), shared, only_a, only_b);
        let exact = ShingleSet::new(a.clone()).jaccard(&ShingleSet::new(b.clone()));
        let estimate = m.hash(a).jaccard(&m.hash(b));
        let se = (exact * (1.0 - exact) / n).sqrt();
        if (estimate - exact).abs() > 3.0 * se + 1.0 / n {
            outside.push((exact, estimate));
        }
    }
    assert!(
        outside.len() <= 5,
        "{} of 1000 outside 3 SE: {outside:?}",
        outside.len()
    );
}

/// Over many independent random pairs the estimator is unbiased: the mean error stays within
/// 5 standard errors of the mean (about 0.007 here) of zero.
#[test]
fn minhash_estimator_is_unbiased() {
    let m = MinHasher::default();
    let mut total_error = 0.0;
    let pairs = 1000;
    for i in 0..pairs {
        let (a, b) = set_pair(i, 300, 200 + (i % 300) as usize, 100);
        let exact = ShingleSet::new(a.clone()).jaccard(&ShingleSet::new(b.clone()));
        total_error += m.hash(a).jaccard(&m.hash(b)) - exact;
    }
    let mean = total_error / pairs as f64;
    // Per pair J ≈ 0.3–0.5, so the error's SD is ≤ sqrt(0.25/128) = 0.044; over 1000 pairs
    // the mean's SD is ≤ 0.0014.
    assert!(mean.abs() < 0.007, "mean error {mean}");
}
