//! Helpers shared by the matcher's integration tests (and its benchmarks): the bundled corpus
//! and a matcher over it.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use fingerprint::{FingerprintSettings, Fingerprinter};
use matcher::quality::{Corpus, register};
use matcher::{Matcher, MatcherSettings, MemorySource};

/// Test data bundled with the crate (see `tests/data/README.md`).
pub fn data(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// One fingerprinter for the whole test binary (it loads jieba's dictionary).
pub fn fingerprinter() -> Arc<Fingerprinter> {
    static F: OnceLock<Arc<Fingerprinter>> = OnceLock::new();
    F.get_or_init(|| Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap()))
        .clone()
}

/// Chapters are cut into parts of about this many bytes.
pub const CHAPTER_BYTES: usize = 12_000;

/// The bundled novels: four registered (every fourth chapter held out), two foreign.
pub fn corpus() -> Corpus {
    corpus_with(CHAPTER_BYTES)
}

/// [`corpus`] with chapters cut into parts of about `chapter_bytes`.
pub fn corpus_with(chapter_bytes: usize) -> Corpus {
    let mut corpus = Corpus::new();
    for name in [
        "sanguoyanyi_1-10.txt",
        "xiyouji_1-4.txt",
        "hongloumeng_hant_1-2.txt",
        "alice_1-3.txt",
    ] {
        corpus.add_registered(name, &data(name), chapter_bytes);
    }
    for name in ["shuihuquanzhuan_1-2.txt", "frankenstein_1-2.txt"] {
        corpus.add_foreign(name, &data(name), chapter_bytes);
    }
    corpus
}

/// A matcher over the registered chapters of `corpus`, and their texts.
pub fn matcher(corpus: &Corpus, settings: MatcherSettings) -> (Matcher, MemorySource) {
    register(corpus, fingerprinter(), settings, 2).unwrap()
}
