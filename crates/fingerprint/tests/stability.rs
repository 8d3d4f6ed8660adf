//! Fingerprints are persisted, so their values must not drift: a change of code that is meant
//! to be a pure speed-up (or a refactoring) must leave every fingerprint bit-identical. This
//! test fingerprints the bundled sample texts in ~1 KB pieces, plus strings that take the
//! normaliser's slow paths, and compares a digest of every serialised fingerprint with the
//! value the code gave when it was written. If a change is *meant* to alter fingerprints,
//! bump `NORMALIZER_VERSION` (stored fingerprints must then be recomputed) and update the
//! digests here.

mod common;

use fingerprint::hash::hash_bytes;
use fingerprint::{FingerprintSettings, Fingerprinter, NORMALIZER_VERSION};

/// Cuts `text` at line ends once a piece reaches `target` bytes.
fn pieces(text: &str, target: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.split_inclusive('\n') {
        let last = out.last_mut().expect("never empty");
        last.push_str(line);
        if last.len() >= target {
            out.push(String::new());
        }
    }
    out
}

const ODD_STRINGS: &[&str] = &[
    "",
    "，。！？",
    "Ｔｈｅ　ＱＵＩＣＫ　ｆｏｘ ﬁ ① İstanbul Straße",
    "cafe\u{301} e\u{301}\u{308} \u{1100}\u{1161}\u{11A8} 한국 \u{0BC6}\u{0BBE}",
    "天\u{200B}下 大\u{3000}势😀𠀀𠀁 後來說話 iPhone 15",
    "Аlicе wаs bеginning tο gеt νеry tirеd 二〇二四 ВОТ в",
];

/// Digest of the serialised fingerprints of every piece, in order.
fn digest(fp: &Fingerprinter, texts: &[String]) -> (u64, u64) {
    let mut all = Vec::new();
    let mut simhashes = Vec::new();
    for t in texts {
        let f = fp.fingerprint(t);
        all.extend_from_slice(&f.to_bytes());
        simhashes.extend_from_slice(&f.summary.simhash.to_le_bytes());
    }
    (hash_bytes(&all, 0), hash_bytes(&simhashes, 0))
}

#[test]
fn fingerprints_do_not_drift() {
    assert_eq!(
        NORMALIZER_VERSION, 2,
        "update the digests below with the version"
    );
    let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
    let mut texts: Vec<String> = ODD_STRINGS.iter().map(|s| s.to_string()).collect();
    for name in [
        "sanguoyanyi_1-10.txt",
        "xiyouji_1-4.txt",
        "hongloumeng_hant_1-2.txt",
        "alice_1-3.txt",
    ] {
        texts.extend(pieces(&common::data(name), 1024));
    }
    assert!(texts.len() > 200, "{} pieces", texts.len());
    let (all, simhashes) = digest(&fp, &texts);
    println!(
        "pieces {} all {all:#018x} simhashes {simhashes:#018x}",
        texts.len()
    );
    assert_eq!(simhashes, 0x1f98_5bcc_ea0b_4e03, "SimHashes changed");
    assert_eq!(all, 0x0ce3_7f71_abc5_b33b, "fingerprints changed");
}
