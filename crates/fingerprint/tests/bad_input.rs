//! Inputs that must not break fingerprinting: empty text, punctuation only, emoji, mixed
//! scripts, invalid UTF-8 at the byte-level API.

use fingerprint::{Error, FingerprintSettings, Fingerprinter};

fn fp() -> Fingerprinter {
    Fingerprinter::new(FingerprintSettings::default()).unwrap()
}

#[test]
fn empty_text() {
    let f = fp().fingerprint("");
    assert_eq!(f.summary.chars, 0);
    assert!(f.summary.minhash.is_empty());
    assert_eq!(f.summary.simhash, 0);
    assert!(f.winnow.is_empty() && f.pinyin_winnow.is_empty());
    assert_eq!(f.summary.sentences.signature, 0);
    assert_eq!(f.summary.dna.windows(), 0);
    // Two empty texts are not similar: there is nothing to have copied.
    assert_eq!(f.summary.minhash.jaccard(&f.summary.minhash), 0.0);
}

#[test]
fn punctuation_and_whitespace_only() {
    let f = fp().fingerprint("，。！？……——「」『』\n\t   ...!!!???");
    assert_eq!(f.summary.chars, 0);
    assert!(f.summary.minhash.is_empty());
    assert!(f.winnow.is_empty());
}

#[test]
fn emoji_are_dropped() {
    let plain = fp().fingerprint("天下大势分久必合合久必分");
    let emoji = fp().fingerprint("天😀下🎉大势👍分久必合🔥合久必分💯");
    assert_eq!(plain, emoji);
}

#[test]
fn mixed_scripts() {
    let text = "第一章 The Beginning：林黛玉 met Алиса in 東京 at 3点。한국어도 있다. ﬁn";
    let f = fp().fingerprint(text);
    assert!(f.summary.chars > 30);
    assert!(!f.summary.minhash.is_empty());
    assert_ne!(f.summary.simhash, 0);
    assert!(!f.winnow.is_empty());
}

#[test]
fn invalid_utf8_is_refused_with_its_offset() {
    let mut bytes = "第一回".as_bytes().to_vec();
    bytes.extend_from_slice(&[0xB5, 0xDA]); // GBK "第": not UTF-8
    assert_eq!(
        fp().fingerprint_bytes(&bytes).unwrap_err(),
        Error::InvalidUtf8 { offset: 9 }
    );
    assert!(fp().fingerprint_bytes("正常".as_bytes()).is_ok());
}

#[test]
fn lone_combining_marks_and_controls() {
    let f = fp().fingerprint("\u{301}\u{301}\u{0}\u{1}\u{200D}\u{FE0F}");
    assert_eq!(f.summary.chars, 0);
}
