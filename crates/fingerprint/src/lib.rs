//! Text normalisation and content fingerprints for copyhound.
//!
//! Every page copyhound crawls and every chapter a rights holder registers goes through this
//! crate: the text is normalised (see [`mod@normalize`]) and summarised by fingerprints that the
//! `matcher` indexes and compares. It sits between import/crawling (which produce text) and
//! matching (which consumes fingerprints), and does no I/O.
//!
//! | fingerprint | module | over | catches |
//! |---|---|---|---|
//! | k-shingles, exact Jaccard / containment | [`shingle`] | characters or words | ground truth for the estimates |
//! | SimHash-64 | [`simhash`] | jieba / Unicode words, TF-IDF weights | whole-chapter near duplicates |
//! | MinHash (128 values) + LSH bands | [`minhash`] | character 5-grams | Jaccard candidates |
//! | winnowing (k, w) with positions | [`winnow`] | character k-grams | partial copies, split/merged chapters, injected ads |
//! | k longest sentences → 128 bits | [`sentences`] | sentences | verbatim copies, fast |
//! | pinyin winnowing | [`pinyin`] | toneless syllables | homophone substitution |
//! | pinyin-initial DNA | [`dna`] | initial-letter frequencies | the seed design, for comparison |
//!
//! [`Fingerprinter`] computes all of them in one call and bundles them into a
//! [`ChapterFingerprint`]. Everything is deterministic across runs, machines and thread counts:
//! hashes are fixed functions with fixed seeds (no `RandomState`), and the versions of the
//! dictionaries and tables that feed them are pinned ([`NORMALIZER_VERSION`] changes whenever
//! they do). Of copyhound's crates it may use `bounds` only.
//!
//! # Beneath the fingerprints
//!
//! - [`mod@normalize`]: one lookup table per Basic Multilingual Plane character, built once;
//!   [`Normalized`] keeps offsets into the original text, [`Compact`] is the hot path without
//!   them ([`Compact::spaced`] for segmentation).
//! - [`segment`]: words and their TF-IDF weights (jieba-rs `cut` in 64 KB chunks with
//!   jieba's IDF table bundled in `data/`, since jieba-rs keeps its own private; UAX #29
//!   words for text that is not Chinese).
//! - [`hash`]: fmix64, XXH3, Lemire reduction and the O(1) polynomial rolling hash every
//!   k-gram uses.
//! - [`ChapterFingerprint`] and [`FingerprintSummary`] persist in a versioned postcard format.
//!   `tests/stability.rs` pins a digest of sample fingerprints: a speed-up must not change them.
//!
//! A scan of many pages that are nearly all innocent does not fingerprint each one whole:
//! [`Fingerprinter::scan_grams`] and [`Fingerprinter::grams_of_text`] normalise straight into
//! a slice of characters ([`normalize::normalize_chars_into`], runs of ASCII through a small
//! table without a branch a character) and run each rolling hash over the slice in a loop of
//! its own ([`hash::for_each_window`]), for the matcher's first look (see `matcher`'s docs).
//!
//! # Written by hand, and why
//!
//! - MinHash and SimHash: they must use stable hashes that can be persisted and indexed; the
//!   crates available use `RandomState`-like or unstable hashes.
//! - Winnowing: tiny, and the robust tie-break plus positions were needed.
//! - The normalisation table: NFKC itself is `unicode-normalization` and the conversion tables
//!   are `zhconv`; the table only caches their per-character results, and the hot path copies
//!   runs of unchanged characters, so normalisation runs at 300–700 MB/s depending on how busy
//!   the shared host is. The look-alike folding (about a thousand code points, found at the
//!   table's build by asking `unicode-security`'s `skeleton` about every letter and digit
//!   outside ASCII and the CJK blocks) left the hot path as it was (criterion
//!   `normalize_compact` on 8 KB of 三国演义: 866 MiB/s before, 838 after, within the host's
//!   noise).
//! - SimHash weighting keys term counts and the IDF table by the 64-bit token hash instead of
//!   the word, and sums integer weights per hash byte: around jieba-rs's `cut`, which is most
//!   of the time, it adds about a quarter (`cargo run --release -p fingerprint --example
//!   simhash_stages` times each stage).
//!
//! # Example
//!
//! ```
//! use fingerprint::{Fingerprinter, FingerprintSettings, simhash::hamming};
//!
//! let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
//! let chapter = "話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦。及秦滅之後，楚、漢分爭，又并入於漢。";
//! let pirated = "本书首发！！话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。";
//! let (a, b) = (fp.fingerprint(chapter), fp.fingerprint(pirated));
//! assert!(a.summary.minhash.jaccard(&b.summary.minhash) > 0.7);
//! assert!(hamming(a.summary.simhash, b.summary.simhash) < 16);
//! let bytes = a.to_bytes();
//! assert_eq!(fingerprint::ChapterFingerprint::from_bytes(&bytes).unwrap(), a);
//! ```

pub mod dna;
pub mod hash;
pub mod minhash;
pub mod normalize;
pub mod pinyin;
pub mod segment;
pub mod sentences;
mod serde_util;
pub mod shingle;
pub mod simhash;
pub mod winnow;

use serde::{Deserialize, Serialize};

pub use dna::{DnaCode, DnaSettings};
pub use minhash::{MinHash, MinHasher};
pub use normalize::{Compact, Normalized, normalize, normalize_compact};
pub use segment::{SegmentSettings, Segmenter};
pub use sentences::SentenceSignature;
pub use winnow::Winnow;

/// Version of everything that decides a fingerprint's value: the normalisation pipeline, the
/// pinned conversion/segmentation/pinyin data and the hash functions. Stored with every
/// fingerprint; fingerprints of different versions must not be compared.
///
/// Version 2 folds look-alike letters (Cyrillic, Greek, ... confusables) into Latin ones:
/// stored works of version 1 are refingerprinted by `copyhound works refingerprint`.
pub const NORMALIZER_VERSION: u32 = 2;

/// Version of the binary format of [`ChapterFingerprint::to_bytes`].
pub const FORMAT_VERSION: u8 = 1;

/// Errors of this crate.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// Input bytes are not UTF-8.
    #[error("input is not valid utf-8 at byte {offset}")]
    InvalidUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// A setting is out of range.
    #[error("invalid fingerprint settings: {0}")]
    OutOfRange(#[from] bounds::OutOfRange),
    /// Stored bytes were written by an unknown format version.
    #[error("fingerprint format version {found} is not supported (expected {expected})")]
    UnsupportedFormat {
        /// Version byte found.
        found: u8,
        /// Version this build reads.
        expected: u8,
    },
    /// Stored bytes are truncated or corrupt.
    #[error("corrupt fingerprint bytes: {0}")]
    Corrupt(String),
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Decodes bytes as UTF-8, or says where they stop being UTF-8.
///
/// # Errors
/// [`Error::InvalidUtf8`] with the offset of the first bad byte.
pub fn decode_utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| Error::InvalidUtf8 {
        offset: e.valid_up_to(),
    })
}

/// Settings of a [`Fingerprinter`]. Every field has a default; see each module for what the
/// parameters mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FingerprintSettings {
    /// Character shingle length of MinHash (characters). Default 5.
    pub shingle_k: usize,
    /// Number of MinHash values. Default 128.
    pub minhash_values: usize,
    /// Seed of the MinHash family.
    pub minhash_seed: u64,
    /// k-gram length of text winnowing (characters). Default 5.
    pub winnow_k: usize,
    /// Window of text winnowing (k-grams). Default 30: any shared run of 34 characters is
    /// guaranteed to be found.
    pub winnow_w: usize,
    /// k-gram length of pinyin winnowing (syllables). Default 6.
    pub pinyin_k: usize,
    /// Window of pinyin winnowing. Default 30.
    pub pinyin_w: usize,
    /// Number of longest sentences hashed. Default 5.
    pub sentences: usize,
    /// Minimum normalised length of a sentence to count. Default 8.
    pub sentence_min_chars: usize,
    /// The DNA code.
    pub dna: DnaSettings,
    /// Segmentation and stop words of SimHash.
    pub segment: SegmentSettings,
}

impl Default for FingerprintSettings {
    fn default() -> Self {
        FingerprintSettings {
            shingle_k: 5,
            minhash_values: minhash::DEFAULT_MINHASH_VALUES,
            minhash_seed: minhash::DEFAULT_MINHASH_SEED,
            winnow_k: winnow::DEFAULT_WINNOW_K,
            winnow_w: winnow::DEFAULT_WINNOW_W,
            pinyin_k: pinyin::DEFAULT_PINYIN_K,
            pinyin_w: pinyin::DEFAULT_PINYIN_W,
            sentences: sentences::DEFAULT_SENTENCES,
            sentence_min_chars: sentences::DEFAULT_SENTENCE_MIN_CHARS,
            dna: DnaSettings::default(),
            segment: SegmentSettings::default(),
        }
    }
}

impl FingerprintSettings {
    /// Checks every parameter; keys are relative to `[fingerprint]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad value and what is allowed.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::between("shingle_k", self.shingle_k, 1, 64)?;
        bounds::between("minhash_values", self.minhash_values, 1, 4096)?;
        bounds::between("winnow_k", self.winnow_k, 1, 64)?;
        bounds::between("winnow_w", self.winnow_w, 1, 1024)?;
        bounds::between("pinyin_k", self.pinyin_k, 1, 64)?;
        bounds::between("pinyin_w", self.pinyin_w, 1, 1024)?;
        bounds::between("sentences", self.sentences, 0, 64)?;
        // The code reads 0 as 1 (an empty sentence is never hashed): refused, not reinterpreted.
        bounds::at_least("sentence_min_chars", self.sentence_min_chars, 1)?;
        self.dna.validate().map_err(|e| e.in_section("dna"))?;
        self.segment.validate().map_err(|e| e.in_section("segment"))
    }
}

/// The compact part of a chapter's fingerprint: everything but the winnowing postings.
///
/// Serialised with the default settings (`cargo run --release -p fingerprint --example
/// sizes`): about 610 bytes for an 8 KB Chinese chapter and 630 for an 8 KB English one
/// (three times the characters, so more DNA windows). 514 of them are MinHash (128 values of
/// 4 bytes), 48 the five sentence hashes and their signature, 8 the SimHash; the DNA code
/// takes 7 bytes per 26-letter window at radix 4.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FingerprintSummary {
    /// [`NORMALIZER_VERSION`] of the code that computed it.
    pub normalizer_version: u32,
    /// Number of normalised characters.
    pub chars: u32,
    /// SimHash-64 of the TF-IDF-weighted words.
    #[serde(
        serialize_with = "serde_util::fixed::serialize_u64",
        deserialize_with = "serde_util::fixed::deserialize_u64"
    )]
    pub simhash: u64,
    /// MinHash of the character shingles.
    pub minhash: MinHash,
    /// The k longest sentences.
    pub sentences: SentenceSignature,
    /// The pinyin-initial DNA code.
    pub dna: DnaCode,
}

/// The fingerprints one pass over a normalised text gives ([`Fingerprinter::grams`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Grams {
    /// MinHash of the character shingles.
    pub minhash: MinHash,
    /// Winnowing of the normalised text.
    pub winnow: Vec<Winnow>,
    /// Winnowing of its pinyin stream.
    pub pinyin_winnow: Vec<Winnow>,
}

/// The buffer [`Fingerprinter::scan_grams`] reuses from page to page: the normalised
/// characters, then their pinyin symbols.
#[derive(Debug, Clone, Default)]
pub struct ScanBuffers {
    symbols: Vec<u64>,
    /// The text and the pinyin k-grams' hashes, for [`Fingerprinter::grams_of_text`]'s
    /// winnowing.
    text_hashes: Vec<u64>,
    pinyin_hashes: Vec<u64>,
}

/// Which stream a k-gram hash of [`Fingerprinter::scan_grams`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GramKind {
    /// The normalised text's characters (`winnow_k` of them).
    Text,
    /// The pinyin stream's syllables (`pinyin_k` of them).
    Pinyin,
}

/// Everything copyhound knows about one chapter's (or page's) text.
///
/// Serialised, an 8 KB Chinese chapter (~2,700 characters) is about 3.9 KB: the summary plus
/// ~150 text and ~150 pinyin winnowing fingerprints of about 11 bytes each (a fixed 8-byte
/// hash would not save space: postcard's varints are at most 10 bytes for a hash and 2–3 for a
/// position). An 8 KB English chapter has three times the characters and fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChapterFingerprint {
    /// The compact part.
    pub summary: FingerprintSummary,
    /// Winnowing of the normalised text; positions are normalised character indices.
    pub winnow: Vec<Winnow>,
    /// Winnowing of the pinyin stream; positions are normalised character indices.
    pub pinyin_winnow: Vec<Winnow>,
}

fn to_versioned_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![FORMAT_VERSION];
    // Serialising plain structs into a Vec cannot fail.
    out.extend(postcard::to_allocvec(value).expect("postcard serialises in-memory values"));
    out
}

fn from_versioned_bytes<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T> {
    let (&version, rest) = bytes
        .split_first()
        .ok_or_else(|| Error::Corrupt("empty input".into()))?;
    if version != FORMAT_VERSION {
        return Err(Error::UnsupportedFormat {
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    let (value, extra) =
        postcard::take_from_bytes(rest).map_err(|e| Error::Corrupt(e.to_string()))?;
    if !extra.is_empty() {
        return Err(Error::Corrupt(format!("{} trailing bytes", extra.len())));
    }
    Ok(value)
}

impl FingerprintSummary {
    /// The compact binary form: a format version byte, then postcard.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_versioned_bytes(self)
    }

    /// Reads [`FingerprintSummary::to_bytes`] output.
    ///
    /// # Errors
    /// [`Error::UnsupportedFormat`] or [`Error::Corrupt`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        from_versioned_bytes(bytes)
    }
}

impl ChapterFingerprint {
    /// The compact binary form: a format version byte, then postcard.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_versioned_bytes(self)
    }

    /// Reads [`ChapterFingerprint::to_bytes`] output.
    ///
    /// # Errors
    /// [`Error::UnsupportedFormat`] or [`Error::Corrupt`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        from_versioned_bytes(bytes)
    }
}

/// Computes fingerprints with one set of settings. Build once (it loads jieba's dictionary
/// and IDF table), then share it across threads: every method takes `&self`.
#[derive(Debug)]
pub struct Fingerprinter {
    settings: FingerprintSettings,
    minhasher: MinHasher,
    segmenter: Segmenter,
}

impl Fingerprinter {
    /// Builds a fingerprinter.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if a parameter is out of range.
    pub fn new(settings: FingerprintSettings) -> Result<Self> {
        settings.validate()?;
        normalize::warm_up();
        pinyin::warm_up();
        Ok(Fingerprinter {
            minhasher: MinHasher::new(settings.minhash_values, settings.minhash_seed),
            segmenter: Segmenter::new(&settings.segment),
            settings,
        })
    }

    /// The settings in use.
    pub fn settings(&self) -> &FingerprintSettings {
        &self.settings
    }

    /// The segmenter in use.
    pub fn segmenter(&self) -> &Segmenter {
        &self.segmenter
    }

    /// All fingerprints of `text` in one pass over its normalised form.
    pub fn fingerprint(&self, text: &str) -> ChapterFingerprint {
        let compact = normalize_compact(text);
        self.fingerprint_normalized(text, &compact)
    }

    /// [`Fingerprinter::fingerprint`] of raw bytes, which must be UTF-8 (decode other
    /// encodings first).
    ///
    /// # Errors
    /// [`Error::InvalidUtf8`] with the offset of the first bad byte.
    pub fn fingerprint_bytes(&self, bytes: &[u8]) -> Result<ChapterFingerprint> {
        Ok(self.fingerprint(decode_utf8(bytes)?))
    }

    /// The fingerprints of a normalised text that one pass over its characters gives:
    /// MinHash, the text's and the pinyin stream's winnowing, and (when `initials`) the pinyin
    /// initials the DNA is made of. What [`Fingerprinter::fingerprint_normalized`] and
    /// [`Fingerprinter::grams`] share.
    fn one_pass(&self, compact: &Compact, initials: bool) -> (Grams, Vec<u8>) {
        let s = &self.settings;
        let mut minhash = self.minhasher.builder();
        let mut text_winnow = winnow::Winnower::new(s.winnow_w);
        let mut pinyin_winnow = winnow::Winnower::new(s.pinyin_w);
        let mut shingles = hash::Rolling::new(s.shingle_k, shingle::CHAR_SHINGLE_SEED);
        let mut wgrams = hash::Rolling::new(s.winnow_k, shingle::CHAR_SHINGLE_SEED);
        let mut pgrams = hash::Rolling::new(s.pinyin_k, pinyin::PINYIN_SEED);
        let same_k = s.shingle_k == s.winnow_k;
        let mut letters = Vec::with_capacity(if initials { compact.chars } else { 0 });
        for (i, c) in compact.text.chars().enumerate() {
            let i = i as u32;
            let h = shingles.push(c as u64);
            if let Some(h) = h {
                minhash.add(h);
            }
            let wh = if same_k { h } else { wgrams.push(c as u64) };
            if let Some(wh) = wh {
                text_winnow.push(wh, i + 1 - s.winnow_k as u32);
            }
            let (symbol, initial) = pinyin::symbol_and_initial(c);
            if let Some(ph) = pgrams.push(u64::from(symbol)) {
                pinyin_winnow.push(ph, i + 1 - s.pinyin_k as u32);
            }
            if initials && let Some(l) = initial {
                letters.push(l);
            }
        }
        if let Some(h) = shingles.partial() {
            minhash.add(h);
        }
        let grams = Grams {
            minhash: minhash.finish(),
            winnow: text_winnow.finish(),
            pinyin_winnow: pinyin_winnow.finish(),
        };
        (grams, letters)
    }

    /// The MinHash of `text` (normalisation included), with the hash of every text and pinyin
    /// k-gram handed to `each` on the way: what [`Fingerprinter::grams`] winnows, before the
    /// winnowing. The MinHash equals `grams(&normalize_compact(text)).minhash`, and every
    /// hash in the winnowings is among those handed over (a property test checks). For a
    /// cheap first look at many pages: a page none of whose k-grams is held anywhere cannot
    /// share a winnowing fingerprint either. `buffers` are reused from page to page.
    ///
    /// Where [`Fingerprinter::grams`] writes the normalised text, then feeds each of its
    /// characters to every rolling hash in turn, this normalises into a slice of characters
    /// ([`normalize::normalize_chars_into`]) and runs each hash over the whole slice in a loop
    /// of its own ([`hash::for_each_window`]), its state in registers.
    pub fn scan_grams(
        &self,
        text: &str,
        buffers: &mut ScanBuffers,
        mut each: impl FnMut(GramKind, u64),
    ) -> MinHash {
        let s = &self.settings;
        let symbols = &mut buffers.symbols;
        symbols.clear();
        normalize::normalize_chars_into(text, symbols);
        // One loop a stream, with `each` inlined into it (not called through the MinHash's
        // closure): the caller's test of a hash then costs a few instructions on registers.
        let mut minhash = self.minhasher.builder();
        if s.shingle_k == s.winnow_k {
            hash::for_each_window(symbols, s.shingle_k, shingle::CHAR_SHINGLE_SEED, |h| {
                minhash.add(h);
                each(GramKind::Text, h);
            });
        } else {
            hash::for_each_window(symbols, s.shingle_k, shingle::CHAR_SHINGLE_SEED, |h| {
                minhash.add(h)
            });
            hash::for_each_window(symbols, s.winnow_k, shingle::CHAR_SHINGLE_SEED, |h| {
                each(GramKind::Text, h)
            });
        }
        self.add_partial_shingle(&mut minhash, symbols);
        pinyin::symbols_in_place(symbols);
        hash::for_each_window(symbols, s.pinyin_k, pinyin::PINYIN_SEED, |h| {
            each(GramKind::Pinyin, h)
        });
        minhash.finish()
    }

    /// [`Fingerprinter::grams`] of `normalize_compact(text)` (equal: a property test checks),
    /// by [`Fingerprinter::scan_grams`]'s path: the text normalised into a slice of
    /// characters, each rolling hash run over it in a loop of its own into a slice of hashes,
    /// and each slice winnowed in place ([`winnow::winnow_slice`]). For
    /// [`Fingerprinter::grams`]'s callers that start from the text and do not need the
    /// normalised text itself (a first look at many pages). `buffers` are reused from page to
    /// page.
    pub fn grams_of_text(&self, text: &str, buffers: &mut ScanBuffers) -> Grams {
        let s = &self.settings;
        let ScanBuffers {
            symbols,
            text_hashes,
            pinyin_hashes,
        } = buffers;
        symbols.clear();
        text_hashes.clear();
        pinyin_hashes.clear();
        normalize::normalize_chars_into(text, symbols);
        let same_k = s.shingle_k == s.winnow_k;
        let minhash = self.minhash_of_chars(symbols, |h| {
            if same_k {
                text_hashes.push(h);
            }
        });
        if !same_k {
            hash::for_each_window(symbols, s.winnow_k, shingle::CHAR_SHINGLE_SEED, |h| {
                text_hashes.push(h)
            });
        }
        pinyin::symbols_in_place(symbols);
        hash::for_each_window(symbols, s.pinyin_k, pinyin::PINYIN_SEED, |h| {
            pinyin_hashes.push(h)
        });
        let mut winnowed = Vec::new();
        winnow::winnow_slice(text_hashes, s.winnow_w, &mut winnowed);
        let mut pinyin_winnowed = Vec::new();
        winnow::winnow_slice(pinyin_hashes, s.pinyin_w, &mut pinyin_winnowed);
        Grams {
            minhash,
            winnow: winnowed,
            pinyin_winnow: pinyin_winnowed,
        }
    }

    /// The MinHash of normalised characters (from [`normalize::normalize_chars_into`]): each
    /// character shingle's hash is also handed to `each`. A text shorter than one shingle
    /// still has one, as in the full pass.
    fn minhash_of_chars(&self, chars: &[u64], mut each: impl FnMut(u64)) -> MinHash {
        let k = self.settings.shingle_k;
        let mut minhash = self.minhasher.builder();
        hash::for_each_window(chars, k, shingle::CHAR_SHINGLE_SEED, |h| {
            minhash.add(h);
            each(h);
        });
        self.add_partial_shingle(&mut minhash, chars);
        minhash.finish()
    }

    /// The one shingle of normalised characters fewer than a shingle's length, as the full
    /// pass has it ([`hash::Rolling::partial`]); nothing for longer (or empty) ones.
    fn add_partial_shingle(&self, minhash: &mut minhash::MinHashBuilder, chars: &[u64]) {
        let k = self.settings.shingle_k;
        if chars.len() < k {
            let mut partial = hash::Rolling::new(k, shingle::CHAR_SHINGLE_SEED);
            chars.iter().for_each(|&c| _ = partial.push(c));
            if let Some(h) = partial.partial() {
                minhash.add(h);
            }
        }
    }

    /// MinHash and both winnowings of a normalised text (from [`normalize_compact`]): the
    /// cheap part of [`Fingerprinter::fingerprint_normalized`], without the word segmentation
    /// SimHash needs, the sentences and the DNA. Equal to the full fingerprint's fields.
    pub fn grams(&self, compact: &Compact) -> Grams {
        self.one_pass(compact, false).0
    }

    /// All fingerprints of `text`, given its normalised form (from [`normalize_compact`]).
    pub fn fingerprint_normalized(&self, text: &str, compact: &Compact) -> ChapterFingerprint {
        let s = &self.settings;
        let (grams, initials) = self.one_pass(compact, true);
        let spaced = compact.spaced();
        let simhash = self.simhash_spaced(&spaced);
        ChapterFingerprint {
            summary: FingerprintSummary {
                normalizer_version: NORMALIZER_VERSION,
                chars: compact.chars.min(u32::MAX as usize) as u32,
                simhash,
                minhash: grams.minhash,
                sentences: sentences::longest_sentences(text, s.sentences, s.sentence_min_chars),
                dna: DnaCode::from_initials(&initials, &s.dna),
            },
            winnow: grams.winnow,
            pinyin_winnow: grams.pinyin_winnow,
        }
    }

    /// MinHash of the character shingles of `text` (normalisation included).
    pub fn minhash(&self, text: &str) -> MinHash {
        let mut chars = Vec::new();
        normalize::normalize_chars_into(text, &mut chars);
        self.minhash_of_chars(&chars, |_| {})
    }

    /// SimHash of the TF-IDF-weighted words of `text` (normalisation included).
    pub fn simhash(&self, text: &str) -> u64 {
        self.simhash_spaced(&normalize_compact(text).spaced())
    }

    fn simhash_spaced(&self, spaced: &str) -> u64 {
        let mut acc = simhash::SimHasher::new();
        self.segmenter
            .for_each_term(spaced, |_, hash, _, weight| acc.add(hash, weight));
        acc.finish()
    }

    /// Winnowing of the normalised text of `text`.
    pub fn winnow(&self, text: &str) -> Vec<Winnow> {
        let compact = normalize_compact(text);
        winnow::winnow_text(
            &compact.text,
            self.settings.winnow_k,
            self.settings.winnow_w,
        )
    }

    /// Winnowing of the pinyin stream of `text`.
    pub fn pinyin_winnow(&self, text: &str) -> Vec<Winnow> {
        let compact = normalize_compact(text);
        pinyin::pinyin_winnow(
            &compact.text,
            self.settings.pinyin_k,
            self.settings.pinyin_w,
        )
    }

    /// The k-longest-sentences signature of `text`.
    pub fn sentences(&self, text: &str) -> SentenceSignature {
        sentences::longest_sentences(
            text,
            self.settings.sentences,
            self.settings.sentence_min_chars,
        )
    }

    /// The pinyin-initial DNA code of `text`.
    pub fn dna(&self, text: &str) -> DnaCode {
        let compact = normalize_compact(text);
        let initials: Vec<u8> = compact.text.chars().filter_map(pinyin::initial).collect();
        DnaCode::from_initials(&initials, &self.settings.dna)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_settings_are_refused_naming_the_key() {
        FingerprintSettings::default().validate().unwrap();
        let refusal = |change: fn(&mut FingerprintSettings)| {
            let mut s = FingerprintSettings::default();
            change(&mut s);
            Fingerprinter::new(s).unwrap_err().to_string()
        };
        assert_eq!(
            refusal(|s| s.winnow_w = 0),
            "invalid fingerprint settings: winnow_w = 0 is out of range: must be between 1 and 1024"
        );
        assert!(refusal(|s| s.minhash_values = 5000).contains("minhash_values = 5000"));
        assert!(refusal(|s| s.sentence_min_chars = 0).contains("sentence_min_chars = 0"));
        assert!(refusal(|s| s.dna.radix = 3).contains("dna.radix = 3 is out of range"));
        assert!(refusal(|s| s.dna.overlap = -0.1).contains("dna.overlap = -0.1"));
        assert!(refusal(|s| s.segment.min_token_chars = 0).contains("segment.min_token_chars = 0"));
    }

    fn fp() -> Fingerprinter {
        Fingerprinter::new(FingerprintSettings::default()).unwrap()
    }

    #[test]
    fn bundle_agrees_with_single_kinds() {
        let f = fp();
        let text = "第一回　宴桃園豪傑三結義　斬黃巾英雄首立功\n滾滾長江東逝水，浪花淘盡英雄。是非成敗轉頭空。青山依舊在，幾度夕陽紅。";
        let all = f.fingerprint(text);
        assert_eq!(all.summary.minhash, f.minhash(text));
        assert_eq!(all.summary.simhash, f.simhash(text));
        assert_eq!(all.winnow, f.winnow(text));
        assert_eq!(all.pinyin_winnow, f.pinyin_winnow(text));
        assert_eq!(all.summary.sentences, f.sentences(text));
        assert_eq!(all.summary.dna, f.dna(text));
    }

    #[test]
    fn bundle_with_different_k_agrees_too() {
        let f = Fingerprinter::new(FingerprintSettings {
            shingle_k: 4,
            winnow_k: 7,
            ..FingerprintSettings::default()
        })
        .unwrap();
        let text =
            "滾滾長江東逝水，浪花淘盡英雄。是非成敗轉頭空。青山依舊在，幾度夕陽紅。白髮漁樵江渚上";
        let all = f.fingerprint(text);
        assert_eq!(all.summary.minhash, f.minhash(text));
        assert_eq!(all.winnow, f.winnow(text));
    }

    #[test]
    fn invalid_utf8_is_a_clear_error() {
        let err = fp().fingerprint_bytes(b"abc\xff\xfedef").unwrap_err();
        assert_eq!(err, Error::InvalidUtf8 { offset: 3 });
        assert_eq!(err.to_string(), "input is not valid utf-8 at byte 3");
    }

    #[test]
    fn bytes_round_trip_and_version_checks() {
        let a = fp().fingerprint("天下大势，分久必合，合久必分。");
        let bytes = a.to_bytes();
        assert_eq!(ChapterFingerprint::from_bytes(&bytes).unwrap(), a);
        let mut wrong = bytes.clone();
        wrong[0] = 99;
        assert_eq!(
            ChapterFingerprint::from_bytes(&wrong).unwrap_err(),
            Error::UnsupportedFormat {
                found: 99,
                expected: FORMAT_VERSION
            }
        );
        assert!(matches!(
            ChapterFingerprint::from_bytes(&bytes[..bytes.len() / 2]),
            Err(Error::Corrupt(_))
        ));
        assert!(matches!(
            ChapterFingerprint::from_bytes(&[]),
            Err(Error::Corrupt(_))
        ));
        let s = a.summary.to_bytes();
        assert_eq!(FingerprintSummary::from_bytes(&s).unwrap(), a.summary);
    }
}
