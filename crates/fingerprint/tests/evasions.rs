//! Fingerprints of real public-domain chapters against the disguises pirates use:
//! character edits, traditional script, full-width letters, homophones, injected ads, and
//! against unrelated chapters. Thresholds here are what the matcher relies on.

mod common;

use std::collections::HashSet;

use common::{chapters, data, edit_chars};
use fingerprint::shingle::{ShingleSet, char_shingles};
use fingerprint::simhash::hamming;
use fingerprint::{
    ChapterFingerprint, DnaSettings, FingerprintSettings, Fingerprinter, Winnow, normalize,
};

fn fp() -> &'static Fingerprinter {
    static F: std::sync::OnceLock<Fingerprinter> = std::sync::OnceLock::new();
    F.get_or_init(|| Fingerprinter::new(FingerprintSettings::default()).unwrap())
}

fn hashes(w: &[Winnow]) -> HashSet<u64> {
    w.iter().map(|f| f.hash).collect()
}

/// Share of `a`'s winnowing hashes found in `b`.
fn containment(a: &[Winnow], b: &[Winnow]) -> f64 {
    let (a, b) = (hashes(a), hashes(b));
    a.intersection(&b).count() as f64 / a.len().max(1) as f64
}

fn sanguo() -> Vec<String> {
    chapters(&data("sanguoyanyi_1-10.txt"))
}

fn xiyouji() -> Vec<String> {
    chapters(&data("xiyouji_1-4.txt"))
}

#[test]
fn corpus_splits_into_chapters() {
    assert_eq!(sanguo().len(), 10);
    assert_eq!(xiyouji().len(), 4);
}

#[test]
fn simhash_tolerates_three_percent_edits_and_separates_unrelated_chapters() {
    let mean = |v: &[u32]| v.iter().sum::<u32>() as f64 / v.len() as f64;
    let (s, x) = (sanguo(), xiyouji());
    let hs: Vec<u64> = s.iter().map(|c| fp().simhash(c)).collect();
    let hx: Vec<u64> = x.iter().map(|c| fp().simhash(c)).collect();
    let edited: Vec<u32> = s
        .iter()
        .enumerate()
        .map(|(i, c)| hamming(hs[i], fp().simhash(&edit_chars(c, 0.03, i as u64))))
        .collect();
    let cross: Vec<u32> = hs
        .iter()
        .flat_map(|a| hx.iter().map(move |b| hamming(*a, *b)))
        .collect();
    let mut within = Vec::new();
    for i in 0..hs.len() {
        for j in i + 1..hs.len() {
            within.push(hamming(hs[i], hs[j]));
        }
    }
    let max_edited = *edited.iter().max().unwrap();
    let min_unrelated = *cross.iter().chain(&within).min().unwrap();
    println!(
        "3% edits: {edited:?}; other novel: mean {:.1}; same novel, other chapter: mean {:.1}; min {min_unrelated}",
        mean(&cross),
        mean(&within)
    );
    assert!(
        max_edited <= 8,
        "3% edits moved a SimHash by {max_edited} bits"
    );
    assert!(
        (29.0..=35.0).contains(&mean(&cross)),
        "unrelated mean {}",
        mean(&cross)
    );
    assert!(mean(&within) > 24.0, "same-novel mean {}", mean(&within));
    assert!(
        min_unrelated > 2 * max_edited,
        "unrelated min {min_unrelated} vs edited max {max_edited}"
    );
}

#[test]
fn minhash_tracks_exact_jaccard_on_corpus_chapters() {
    let chs = sanguo();
    for (i, ch) in chs.iter().enumerate() {
        let edited = edit_chars(ch, 0.05, 100 + i as u64);
        let exact = ShingleSet::new(char_shingles(&normalize(ch).into_text(), 5)).jaccard(
            &ShingleSet::new(char_shingles(&normalize(&edited).into_text(), 5)),
        );
        let estimate = fp().minhash(ch).jaccard(&fp().minhash(&edited));
        let se = (exact * (1.0 - exact) / 128.0).sqrt();
        assert!(
            (estimate - exact).abs() <= 3.0 * se + 1.0 / 128.0,
            "chapter {i}: {exact} vs {estimate}"
        );
    }
    // Unrelated chapters share almost no 5-gram.
    assert!(fp().minhash(&chs[0]).jaccard(&fp().minhash(&xiyouji()[0])) < 0.05);
}

#[test]
fn traditional_copy_fingerprints_like_the_simplified_original() {
    let simplified = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦；及秦灭之后，楚汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。";
    let traditional = "話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦；及秦滅之後，楚漢分爭，又並入於漢。漢朝自高祖斬白蛇而起義，一統天下，後來光武中興，傳至獻帝，遂分為三國。";
    assert_eq!(normalize(simplified).text(), normalize(traditional).text());
    let (a, b) = (fp().fingerprint(simplified), fp().fingerprint(traditional));
    assert_eq!(a, b);
}

#[test]
fn traditional_novel_chapter_matches_itself_after_conversion_noise() {
    // The traditional-script 红楼梦 chapter, re-punctuated and padded, still winnows the same.
    let ch = data("hongloumeng_hant_1-2.txt");
    let noisy = ch.replace('，', " , ").replace('．', "。\n\n");
    assert!(containment(&fp().winnow(&ch), &fp().winnow(&noisy)) > 0.99);
}

#[test]
fn full_width_copy_fingerprints_like_the_original() {
    let original = "Alice was beginning to get very tired of sitting by her sister on the bank, and of having nothing to do.";
    let full_width: String = original
        .chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap(),
            ' ' => '\u{3000}',
            c => c,
        })
        .collect();
    assert_ne!(original, full_width);
    assert_eq!(fp().fingerprint(original), fp().fingerprint(&full_width));
}

#[test]
fn homophone_substitution_survives_in_the_pinyin_stream() {
    let ch = &sanguo()[0];
    // Same toneless syllable on both sides of each pair.
    let pairs = [
        ('他', '她'),
        ('在', '再'),
        ('做', '作'),
        ('时', '十'),
        ('人', '仁'),
        ('为', '围'),
        ('之', '知'),
        ('有', '友'),
        ('不', '布'),
        ('以', '已'),
        ('曰', '约'),
        ('大', '达'),
    ];
    let disguised: String = ch
        .chars()
        .map(|c| pairs.iter().find(|(a, _)| *a == c).map_or(c, |(_, b)| *b))
        .collect();
    let changed = ch
        .chars()
        .zip(disguised.chars())
        .filter(|(a, b)| a != b)
        .count();
    assert!(changed > 100, "only {changed} substitutions");
    let (a, b) = (fp().fingerprint(ch), fp().fingerprint(&disguised));
    let text_kept = containment(&a.winnow, &b.winnow);
    let pinyin_kept = containment(&a.pinyin_winnow, &b.pinyin_winnow);
    println!(
        "homophones: text winnowing kept {text_kept:.2}, pinyin winnowing kept {pinyin_kept:.2}"
    );
    assert_eq!(pinyin_kept, 1.0);
    assert!(text_kept < 0.7, "text winnowing kept {text_kept}");
}

#[test]
fn chapter_pasted_between_ads_is_contained_in_the_page() {
    let ch = &sanguo()[2];
    let ad = "【本站首发】最新章节请访问 www.example.com 免费阅读！手机用户请浏览阅读，更优质的阅读体验。\n";
    let page = format!(
        "{}{}{}上一章 目录 下一章\n{}",
        ad.repeat(3),
        ch,
        ad,
        ad.repeat(5)
    );
    let (a, b) = (fp().fingerprint(ch), fp().fingerprint(&page));
    assert!(containment(&a.winnow, &b.winnow) > 0.98);
    assert_eq!(a.summary.sentences, b.summary.sentences);
    assert!(a.summary.minhash.jaccard(&b.summary.minhash) > 0.7);
}

#[test]
fn split_and_merged_chapters_keep_their_winnowing() {
    let chs = sanguo();
    let merged = format!("{}{}", chs[3], chs[4]);
    let m = fp().fingerprint(&merged);
    for ch in &chs[3..5] {
        assert!(containment(&fp().fingerprint(ch).winnow, &m.winnow) > 0.97);
    }
    let chars: Vec<char> = chs[5].chars().collect();
    let half = chars.len() / 2;
    let (first, second): (String, String) = (
        chars[..half].iter().collect(),
        chars[half..].iter().collect(),
    );
    let whole = hashes(&fp().winnow(&chs[5]));
    let parts: HashSet<u64> = hashes(&fp().winnow(&first))
        .union(&hashes(&fp().winnow(&second)))
        .copied()
        .collect();
    assert!(whole.intersection(&parts).count() as f64 / whole.len() as f64 > 0.97);
}

#[test]
fn dna_code_example() {
    let settings = FingerprintSettings {
        dna: DnaSettings {
            radix: 10,
            window: 500,
            ..DnaSettings::default()
        },
        ..FingerprintSettings::default()
    };
    let f = Fingerprinter::new(settings).unwrap();
    let chs = sanguo();
    let a = f.dna(&chs[0]);
    let code = a.to_string();
    println!("DNA of 三国演义 回 1 (radix 10, window 500): {code}");
    assert!(a.windows() >= 4);
    assert!(
        code.split('-')
            .all(|w| w.len() == 26 && w.bytes().all(|b| b.is_ascii_digit()))
    );
    let edited = f.dna(&edit_chars(&chs[0], 0.03, 7));
    let unrelated = f.dna(&xiyouji()[0]);
    assert!(
        a.distance(&edited) < a.distance(&unrelated),
        "edited {} unrelated {}",
        a.distance(&edited),
        a.distance(&unrelated)
    );
}

#[test]
fn summary_stays_compact() {
    // An ~8 KB chapter: the summary (everything but the winnowing postings) fits in 640 bytes.
    for ch in sanguo().iter().chain(xiyouji().iter()) {
        let chunk: String = ch.chars().take(2700).collect();
        let fp = fp().fingerprint(&chunk);
        let size = fp.summary.to_bytes().len();
        assert!(
            size <= 640,
            "summary of a {}-byte chapter is {size} bytes",
            chunk.len()
        );
        let full = fp.to_bytes();
        assert_eq!(ChapterFingerprint::from_bytes(&full).unwrap(), fp);
    }
    // English: three times the characters per byte, so more DNA windows.
    let alice = data("alice_1-3.txt");
    let mut chunk = String::new();
    for line in alice.split_inclusive('\n') {
        chunk.push_str(line);
        if chunk.len() >= 8192 {
            let size = fp().fingerprint(&chunk).summary.to_bytes().len();
            assert!(
                size <= 640,
                "summary of an English {}-byte chapter is {size} bytes",
                chunk.len()
            );
            chunk.clear();
        }
    }
}

#[test]
fn deterministic_across_threads() {
    let chs = sanguo();
    let serial: Vec<ChapterFingerprint> = chs.iter().map(|c| fp().fingerprint(c)).collect();
    let parallel: Vec<ChapterFingerprint> = std::thread::scope(|s| {
        let handles: Vec<_> = chs
            .iter()
            .map(|c| s.spawn(move || fp().fingerprint(c)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(serial, parallel);
}
