//! Helpers shared by the bench crate's integration tests (and its criterion benches): the
//! sample compiled in as a corpus, and a matcher over it.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use bench::Corpus;
use bench::quality::register;
use bench::samples::SAMPLE;
use fingerprint::{FingerprintSettings, Fingerprinter};
use matcher::{Matcher, MatcherSettings, MemorySource};

/// A novel of the sample by file name.
pub fn data(file: &str) -> &'static str {
    SAMPLE
        .iter()
        .find(|s| s.file == file)
        .unwrap_or_else(|| panic!("no {file} in the sample"))
        .text
}

/// One fingerprinter for the whole test binary (it loads jieba's dictionary).
pub fn fingerprinter() -> Arc<Fingerprinter> {
    static F: OnceLock<Arc<Fingerprinter>> = OnceLock::new();
    F.get_or_init(|| Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap()))
        .clone()
}

/// Chapters are cut into parts of about this many bytes.
pub const CHAPTER_BYTES: usize = 12_000;

/// The sample's novels: four registered (every fourth chapter held out), two foreign.
pub fn corpus() -> Corpus {
    corpus_with(CHAPTER_BYTES)
}

/// [`corpus`] with chapters cut into parts of about `chapter_bytes`. The novels are titled
/// by their file names (`.txt` included), as these tests' pages always were: a title is in
/// every page's breadcrumbs.
pub fn corpus_with(chapter_bytes: usize) -> Corpus {
    let mut corpus = Corpus::new();
    for sample in &SAMPLE {
        corpus.add(sample.file, sample.text, sample.registered, chapter_bytes);
    }
    corpus
}

/// A matcher over the registered chapters of `corpus`, and their texts.
pub fn matcher(corpus: &Corpus, settings: MatcherSettings) -> (Matcher, MemorySource) {
    register(corpus, fingerprinter(), settings, 2).unwrap()
}
