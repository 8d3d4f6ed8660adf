//! Word segmentation and TF-IDF weights.
//!
//! * Text with Chinese characters is cut by [jieba-rs](jieba_rs) (dictionary DAG, no HMM: the
//!   HMM guesses new words, which is slower and makes tokens depend on context more than a
//!   fingerprint should). A word's weight is `tf × idf / total` with jieba's IDF table
//!   (bundled in `data/`, see its README); words missing from that table get the table's
//!   median IDF, as jieba itself does. Latin words inside Chinese text are single tokens
//!   (jieba keeps ASCII letter/digit runs together).
//! * Text without Chinese characters is cut at Unicode word boundaries (UAX #29). There is no
//!   IDF table for other languages, so the documented fallback weight of a word is
//!   `tf × (1 + ln(chars)) / total`: longer words are rarer (Zipf's law of abbreviation), which
//!   ranks content words above function words the way an IDF would, without a corpus.
//! * IDFs are kept in fixed point (2^-20 steps), so SimHash can sum weights as integers,
//!   exactly and in any order ([`Segmenter::for_each_term`]); words are told apart by their
//!   64-bit [`token_hash`], in the term counts and in the IDF table alike.
//! * Stop words are dropped in both cases: jieba's default list (English function words), a
//!   short list of Chinese function words, and whatever [`SegmentSettings::stop_words`] adds;
//!   so are tokens shorter than [`SegmentSettings::min_token_chars`].
//!
//! Segmentation runs on the *normalised* text with a space at every word break (see
//! [`crate::normalize::Compact::spaced`]), so traditional characters are already simplified
//! (jieba's dictionary is simplified) and full-width Latin is already ASCII.

use std::collections::BTreeSet;
use std::io::Read;
use std::sync::LazyLock;

use jieba_rs::Jieba;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::simhash::{WEIGHT_FRACTION_BITS, fixed_weight, token_hash};

/// The default dictionary, loaded once per process (about 0.3 s).
static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// The jieba-rs segmenter this crate cuts Chinese with (default dictionary, loaded on first
/// use). For comparisons: `copyhound bench fingerprint` times its plain `cut` next to
/// SimHash, so the cost of everything around the cut can be read on any machine.
pub fn jieba() -> &'static Jieba {
    &JIEBA
}

/// jieba's IDF table, loaded once per process (about 0.1 s).
static IDF: LazyLock<Idf> = LazyLock::new(|| {
    Idf::parse(include_bytes!("../data/jieba_idf.txt.zst"))
        .expect("the bundled IDF table is a valid zstd-compressed `word idf` list")
});

/// The IDF jieba's bundled table gives `word` (simplified Chinese, as normalised text has it),
/// or `None` for a word the table does not list. Discovery ranks query phrases by the rarity
/// of their character bigrams with it; reading the table changes no fingerprint.
pub fn word_idf(word: &str) -> Option<f64> {
    match IDF.slots[IDF.probe(token_hash(word))] {
        0 => None,
        slot => Some((slot & IDF_VALUE_MASK) as f64 / (1u64 << WEIGHT_FRACTION_BITS) as f64),
    }
}

/// The IDF jieba gives a word missing from its table (the table's lower median).
pub fn median_idf() -> f64 {
    IDF.median as f64 / (1u64 << WEIGHT_FRACTION_BITS) as f64
}

/// English function words dropped by default (jieba's default stop word list).
pub const DEFAULT_ENGLISH_STOP_WORDS: &[&str] = &[
    "the", "of", "is", "and", "to", "in", "that", "we", "for", "an", "are", "by", "be", "as", "on",
    "with", "can", "if", "from", "which", "you", "it", "this", "then", "at", "have", "all", "not",
    "one", "has", "or",
];

/// Chinese function words dropped by default (high-frequency particles and pronouns that say
/// nothing about content).
pub const DEFAULT_CHINESE_STOP_WORDS: &[&str] = &[
    "的", "了", "着", "是", "在", "和", "与", "及", "也", "就", "都", "而", "又", "把", "被", "之",
    "其", "这", "那", "个", "一个", "我", "你", "他", "她", "它", "们", "我们", "你们", "他们",
];

/// jieba's IDF table, keyed by [`token_hash`], with values in fixed point.
///
/// Open addressing with linear probing in one array of `u64` slots: the high 40 bits hold the
/// low 40 bits of the word's hash (lowest bit forced to 1, so no entry is 0, the empty slot),
/// the low 24 bits its IDF × 2^[`WEIGHT_FRACTION_BITS`] (jieba's IDFs are all below 16). The
/// slot a probe starts at comes from the hash's top 19 bits, so a word is told apart by 58
/// bits of its hash. A lookup is usually one cache line, where a `HashMap<Box<str>, f64>`
/// hashed the string again and followed a pointer to compare it. Two words of the table
/// sharing those 58 bits would merge; the bundled table has none (a test checks), and a word
/// outside the table takes a table word's IDF with a probability of about 2^-39.
struct Idf {
    slots: Box<[u64]>,
    shift: u32,
    /// Entries in the table.
    len: usize,
    /// The lower median IDF, in fixed point: the weight of words missing from the table.
    median: u64,
}

/// Bits of an [`Idf`] slot that hold the value.
const IDF_VALUE_BITS: u32 = 24;
const IDF_VALUE_MASK: u64 = (1 << IDF_VALUE_BITS) - 1;

impl Idf {
    fn parse(compressed: &[u8]) -> std::io::Result<Idf> {
        let mut text = String::new();
        ruzstd::decoding::StreamingDecoder::new(compressed)
            .map_err(std::io::Error::other)?
            .read_to_string(&mut text)?;
        let mut entries = Vec::with_capacity(280_000);
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if let (Some(word), Some(Ok(idf))) = (parts.next(), parts.next().map(str::parse)) {
                let idf: f64 = idf;
                if !(0.0..(1u64 << (IDF_VALUE_BITS - WEIGHT_FRACTION_BITS)) as f64).contains(&idf) {
                    return Err(std::io::Error::other(format!(
                        "IDF {idf} of {word:?} is outside the table's range"
                    )));
                }
                entries.push((token_hash(word), idf));
            }
        }
        if entries.is_empty() {
            return Err(std::io::Error::other("empty IDF table"));
        }
        let capacity = (entries.len() * 5 / 3).next_power_of_two();
        let mut idf = Idf {
            slots: vec![0; capacity].into_boxed_slice(),
            shift: 64 - capacity.trailing_zeros(),
            len: 0,
            median: 0,
        };
        for &(hash, value) in &entries {
            // A word listed twice keeps its last value, as a map insert would.
            let i = idf.probe(hash);
            if idf.slots[i] == 0 {
                idf.len += 1;
            }
            idf.slots[i] = Self::tag(hash) | fixed_weight(value);
        }
        // The lower median, as jieba computes it.
        let mut values: Vec<f64> = entries.iter().map(|e| e.1).collect();
        let mid = (values.len() - 1) / 2;
        let (_, median, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
        idf.median = fixed_weight(*median);
        Ok(idf)
    }

    #[inline]
    fn tag(hash: u64) -> u64 {
        (hash << IDF_VALUE_BITS) | (1 << IDF_VALUE_BITS)
    }

    /// The slot holding `hash`, or the empty slot where it would go.
    #[inline]
    fn probe(&self, hash: u64) -> usize {
        let tag = Self::tag(hash);
        let mask = self.slots.len() - 1;
        let mut i = (hash >> self.shift) as usize;
        loop {
            let slot = self.slots[i];
            if slot == 0 || slot & !IDF_VALUE_MASK == tag {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The IDF of the word with `hash`, in fixed point.
    #[inline]
    fn get(&self, hash: u64) -> u64 {
        match self.slots[self.probe(hash)] {
            0 => self.median,
            slot => slot & IDF_VALUE_MASK,
        }
    }
}

/// A set of 64-bit hashes (the stop words' [`token_hash`]es) asked once per distinct word:
/// open addressing at most a quarter full, so a lookup is usually one slot and one
/// predictable branch (a binary search's branches are not).
#[derive(Debug)]
struct HashSet64 {
    /// `0` marks an empty slot; the hash 0 itself is kept in `has_zero`.
    slots: Box<[u64]>,
    shift: u32,
    has_zero: bool,
}

impl HashSet64 {
    fn new(hashes: impl IntoIterator<Item = u64>) -> Self {
        let hashes: Vec<u64> = hashes.into_iter().collect();
        let capacity = (hashes.len() * 4).next_power_of_two().max(64);
        let mut set = HashSet64 {
            slots: vec![0; capacity].into_boxed_slice(),
            shift: 64 - capacity.trailing_zeros(),
            has_zero: false,
        };
        for h in hashes {
            if h == 0 {
                set.has_zero = true;
                continue;
            }
            let i = set.probe(h);
            set.slots[i] = h;
        }
        set
    }

    /// The slot holding `h`, or the empty slot where it would go.
    #[inline]
    fn probe(&self, h: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        while self.slots[i] != 0 && self.slots[i] != h {
            i = (i + 1) & mask;
        }
        i
    }

    #[inline]
    fn contains(&self, h: u64) -> bool {
        if h == 0 {
            self.has_zero
        } else {
            self.slots[self.probe(h)] == h
        }
    }
}

/// Term frequencies of one text: an open-addressing table keyed by [`token_hash`] (a 64-bit
/// hash tells words apart as well as the words do; no string is compared), growing at half
/// load.
struct Terms<'a> {
    slots: Vec<Term<'a>>,
    len: usize,
    shift: u32,
}

/// A slot of [`Terms`]; `count == 0` marks it empty.
#[derive(Clone, Copy, Default)]
struct Term<'a> {
    hash: u64,
    count: u32,
    word: &'a str,
}

impl<'a> Terms<'a> {
    /// A table sized for about `capacity` distinct words.
    fn with_capacity(capacity: usize) -> Self {
        let slots = (capacity * 2).next_power_of_two().max(64);
        Terms {
            slots: vec![Term::default(); slots],
            len: 0,
            shift: 64 - slots.trailing_zeros(),
        }
    }

    #[inline]
    fn add(&mut self, hash: u64, word: &'a str) {
        let mask = self.slots.len() - 1;
        let mut i = (hash >> self.shift) as usize;
        loop {
            let slot = &mut self.slots[i];
            if slot.count == 0 {
                *slot = Term {
                    hash,
                    count: 1,
                    word,
                };
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    self.grow();
                }
                return;
            }
            if slot.hash == hash {
                slot.count = slot.count.saturating_add(1);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let mut bigger = Terms::with_capacity(self.slots.len());
        let mask = bigger.slots.len() - 1;
        for term in self.slots.iter().filter(|t| t.count > 0) {
            let mut i = (term.hash >> bigger.shift) as usize;
            while bigger.slots[i].count > 0 {
                i = (i + 1) & mask;
            }
            bigger.slots[i] = *term;
        }
        bigger.len = self.len;
        *self = bigger;
    }

    fn iter(&self) -> impl Iterator<Item = &Term<'a>> {
        self.slots.iter().filter(|t| t.count > 0)
    }
}

/// Settings of segmentation and weighting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SegmentSettings {
    /// Extra stop words (normalised form: simplified, lower case).
    pub stop_words: Vec<String>,
    /// Whether [`DEFAULT_ENGLISH_STOP_WORDS`] and [`DEFAULT_CHINESE_STOP_WORDS`] apply.
    pub default_stop_words: bool,
    /// Tokens shorter than this many characters are dropped from the weighted tokens (not
    /// from [`Segmenter::words`]). Default 2, jieba's own keyword default: single Chinese
    /// characters (曰, 之, 人) are the function words of every novel, and keeping them pulls
    /// the SimHashes of unrelated chapters together (measured on the corpus: mean Hamming
    /// distance between chapters of different novels 28.1 bits with 1, 32.0 with 2).
    pub min_token_chars: usize,
}

impl SegmentSettings {
    /// Checks the settings; keys are relative to `[fingerprint.segment]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] for `min_token_chars` 0 (the segmenter would read it as 1).
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::at_least("min_token_chars", self.min_token_chars, 1)
    }
}

impl Default for SegmentSettings {
    fn default() -> Self {
        SegmentSettings {
            stop_words: Vec::new(),
            default_stop_words: true,
            min_token_chars: 2,
        }
    }
}

/// Cuts normalised text into words and weighs them. Build once, share freely (`Send + Sync`).
#[derive(Debug)]
pub struct Segmenter {
    stop_words: HashSet64,
    min_token_chars: usize,
}

fn has_han(text: &str) -> bool {
    text.chars().any(crate::normalize::is_han)
}

/// Size of the pieces of text handed to jieba at once: `cut` returns a vector of 48-byte
/// tokens, so a whole 100 MB text at once would need gigabytes.
const CUT_CHUNK_BYTES: usize = 64 * 1024;

/// Calls `f` with every jieba word of `spaced`, cutting it in pieces that end at a space
/// (jieba segments the text between spaces independently, so the words are the same).
fn for_each_jieba_word<'a>(spaced: &'a str, mut f: impl FnMut(&'a str)) {
    let mut rest = spaced;
    while !rest.is_empty() {
        let mut end = rest.len();
        if end > CUT_CHUNK_BYTES {
            // `spaced` has a space at least every MAX_SEGMENT_BYTES, so one is always found.
            // Searching bytes is safe: a space byte is always a whole character in UTF-8.
            let bytes = rest.as_bytes();
            end = bytes[..CUT_CHUNK_BYTES]
                .iter()
                .rposition(|&b| b == b' ')
                .or_else(|| bytes.iter().position(|&b| b == b' '))
                .map_or(rest.len(), |i| i + 1);
        }
        let (chunk, tail) = rest.split_at(end);
        for token in JIEBA.cut(chunk, false) {
            f(token.word);
        }
        rest = tail;
    }
}

impl Segmenter {
    /// Builds a segmenter (loads jieba's dictionary and IDF table on first use in the process).
    pub fn new(settings: &SegmentSettings) -> Self {
        let mut stop_words: BTreeSet<String> = BTreeSet::new();
        if settings.default_stop_words {
            stop_words.extend(
                DEFAULT_ENGLISH_STOP_WORDS
                    .iter()
                    .chain(DEFAULT_CHINESE_STOP_WORDS)
                    .map(|s| s.to_string()),
            );
        }
        stop_words.extend(settings.stop_words.iter().cloned());
        LazyLock::force(&JIEBA);
        LazyLock::force(&IDF);
        Segmenter {
            stop_words: HashSet64::new(stop_words.iter().map(|w| token_hash(w))),
            min_token_chars: settings.min_token_chars.max(1),
        }
    }

    /// Whether a token is long enough to weigh (checked on every token, before hashing).
    #[inline(always)]
    fn long_enough(&self, word: &str) -> bool {
        let min = self.min_token_chars;
        // A character is 1 to 4 bytes: the length alone settles most words; otherwise count
        // the bytes that start a character.
        word.len() > 4 * (min - 1)
            || (word.len() >= min && word.bytes().filter(|&b| (b as i8) >= -0x40).count() >= min)
    }

    /// `(word, weight)` pairs of `spaced` normalised text (see the [module docs](self)),
    /// heaviest first, ties by word; every distinct word once.
    pub fn weighted_tokens<'a>(&self, spaced: &'a str) -> Vec<(&'a str, f64)> {
        let mut out = Vec::new();
        self.for_each_weighted(spaced, |w, x| out.push((w, x)));
        out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        out
    }

    /// Calls `f(word, weight)` for every distinct word of `spaced`, in no particular order;
    /// the weight is `tf × idf / total` (see the [module docs](self)).
    pub fn for_each_weighted<'a>(&self, spaced: &'a str, mut f: impl FnMut(&'a str, f64)) {
        let mut words = Vec::new();
        let mut total = 0u64;
        self.for_each_term(spaced, |word, _, count, weight| {
            total += u64::from(count);
            words.push((word, weight));
        });
        let scale = (total.max(1) << WEIGHT_FRACTION_BITS) as f64;
        for (word, weight) in words {
            f(word, weight as f64 / scale);
        }
    }

    /// Calls `f(word, hash, tf, tf × idf)` for every distinct word of `spaced` that is weighed
    /// (long enough, not a stop word), in no particular order: `hash` is its [`token_hash`],
    /// `tf × idf` an integer with the IDF in [fixed point](crate::simhash::fixed_weight),
    /// ready for [`crate::simhash::SimHasher`]. Not divided by the number of words, which
    /// changes no SimHash.
    pub fn for_each_term<'a>(&self, spaced: &'a str, mut f: impl FnMut(&'a str, u64, u32, u64)) {
        // Short tokens are dropped before hashing (single characters are a third of jieba's
        // tokens); stop words are checked once per distinct word.
        // About one distinct weighed word per 16 bytes (435 per 8 KB chapter of the corpus).
        let mut terms = Terms::with_capacity((spaced.len() / 16).min(1 << 15));
        let han = has_han(spaced);
        let mut count = |w: &'a str| {
            if self.long_enough(w) {
                terms.add(token_hash(w), w);
            }
        };
        if han {
            // jieba's tokens include the spaces between runs, which are one character.
            for_each_jieba_word(spaced, |w| {
                if w != " " {
                    count(w)
                }
            });
        } else {
            spaced.unicode_words().for_each(count);
        }
        // Every word's IDF first, then the callbacks: the table is megabytes, so a lookup is
        // often a cache miss, and a loop of nothing but independent lookups lets the
        // processor wait for many at once. (Measured: the lookups cost 13% of SimHash's time
        // made inside the loop that weighs, 7% made here.)
        let mut weighed = Vec::with_capacity(terms.len);
        for term in terms.iter() {
            if self.stop_words.contains(term.hash) {
                continue;
            }
            let idf = if han {
                IDF.get(term.hash)
            } else {
                fixed_weight(1.0 + (term.word.chars().count() as f64).ln())
            };
            weighed.push((term, idf));
        }
        for (term, idf) in weighed {
            f(
                term.word,
                term.hash,
                term.count,
                u64::from(term.count) * idf,
            );
        }
    }

    /// The words of `spaced` normalised text in order, stop words included (for word
    /// shingles, where order and function words matter).
    pub fn words<'a>(&self, spaced: &'a str) -> Vec<&'a str> {
        if has_han(spaced) {
            let mut words = Vec::new();
            for_each_jieba_word(spaced, |w| {
                if w != " " {
                    words.push(w);
                }
            });
            words
        } else {
            spaced.unicode_words().collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::normalize_compact;

    fn seg() -> Segmenter {
        Segmenter::new(&SegmentSettings::default())
    }

    #[test]
    fn chinese_words_and_weights() {
        let s = seg();
        let spaced =
            normalize_compact("今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。")
                .spaced();
        let words = s.words(&spaced);
        assert!(words.contains(&"北京烤鸭"), "{words:?}");
        let weighted = s.weighted_tokens(&spaced);
        assert!(weighted.iter().all(|(w, _)| *w != "的" && *w != " "));
        assert!(weighted.windows(2).all(|p| p[0].1 >= p[1].1));
        assert!(weighted.iter().any(|(w, _)| *w == "北京烤鸭"));
        // jieba's IDF: a rare place name outweighs a common word.
        let weight = |word: &str| weighted.iter().find(|(w, _)| *w == word).unwrap().1;
        assert!(weight("北京烤鸭") > weight("今天"));
    }

    #[test]
    fn latin_words_and_fallback_weights() {
        let s = seg();
        let spaced = normalize_compact("The cat sat on the MAT; extraordinarily.").spaced();
        assert_eq!(s.words(&spaced)[..3], ["the", "cat", "sat"]);
        let weighted = s.weighted_tokens(&spaced);
        assert!(weighted.iter().all(|(w, _)| *w != "the" && *w != "on"));
        assert_eq!(weighted[0].0, "extraordinarily");
    }

    #[test]
    fn mixed_text_keeps_latin_words_whole() {
        let s = seg();
        let spaced = normalize_compact("他打开了 iPhone 手机").spaced();
        let words = s.words(&spaced);
        assert!(words.contains(&"iphone"), "{words:?}");
    }

    #[test]
    fn chunked_cutting_gives_the_same_words() {
        let text = "今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。".repeat(5000);
        let spaced = normalize_compact(&text).spaced();
        assert!(spaced.len() > 4 * CUT_CHUNK_BYTES);
        let chunked = seg().words(&spaced);
        let whole: Vec<&str> = JIEBA
            .cut(&spaced, false)
            .into_iter()
            .map(|t| t.word)
            .filter(|w| *w != " ")
            .collect();
        assert_eq!(chunked, whole);
    }

    #[test]
    fn word_idf_reads_the_table_and_says_when_a_word_is_missing() {
        // Common words are cheaper than rare ones; a made-up run of characters is absent.
        let common = word_idf("我们").expect("我们 is in jieba's table");
        let rare = word_idf("饕餮").expect("饕餮 is in jieba's table");
        assert!(rare > common, "{rare} vs {common}");
        assert_eq!(word_idf("嘭鬯"), None);
        assert!(median_idf() > 0.0);
    }

    #[test]
    fn idf_table_keeps_every_word_apart_and_its_value() {
        let mut text = String::new();
        ruzstd::decoding::StreamingDecoder::new(&include_bytes!("../data/jieba_idf.txt.zst")[..])
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        let mut last: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            let (word, idf) = (parts.next().unwrap(), parts.next().unwrap());
            last.insert(word, idf.parse().unwrap());
        }
        // No two words merged: as many entries as distinct words.
        assert_eq!(IDF.len, last.len());
        for (word, idf) in &last {
            assert_eq!(IDF.get(token_hash(word)), fixed_weight(*idf), "{word}");
        }
        // A word outside the table gets the median; jieba's is 11.739...
        assert!(!last.contains_key("copyhound"));
        assert_eq!(IDF.get(token_hash("copyhound")), IDF.median);
        assert!((11.5..12.0).contains(&(IDF.median as f64 / f64::from(1 << WEIGHT_FRACTION_BITS))));
    }

    #[test]
    fn idf_table_refuses_values_it_cannot_hold() {
        let table = |text: &str| {
            let mut compressed = Vec::new();
            ruzstd::encoding::compress(
                text.as_bytes(),
                &mut compressed,
                ruzstd::encoding::CompressionLevel::Fastest,
            );
            Idf::parse(&compressed)
        };
        assert!(table("天下 3.5\n大势 12.0\n").is_ok());
        let err = table("天下 3.5\n大势 16.0\n").err().unwrap();
        assert!(err.to_string().contains("outside"), "{err}");
        assert!(table("").is_err());
    }

    #[test]
    fn terms_count_every_token_through_growth() {
        let words: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
        let mut terms = Terms::with_capacity(1);
        for round in 0..3 {
            for w in &words[..words.len() - round * 1000] {
                terms.add(token_hash(w), w);
            }
        }
        assert_eq!(terms.len, 5000);
        let mut counts: Vec<(String, u32)> = terms
            .iter()
            .map(|t| (t.word.to_string(), t.count))
            .collect();
        counts.sort();
        assert_eq!(counts.iter().map(|c| c.1).sum::<u32>(), 5000 + 4000 + 3000);
        assert!(counts.iter().all(|(w, n)| {
            let i: usize = w[1..].parse().unwrap();
            *n == 1 + u32::from(i < 4000) + u32::from(i < 3000)
        }));
    }

    #[test]
    fn stop_word_set_finds_exactly_its_members() {
        let set = HashSet64::new([5, 0, u64::MAX, 1 << 63]);
        for h in [5, 0, u64::MAX, 1 << 63] {
            assert!(set.contains(h));
        }
        for h in [1, 6, u64::MAX - 1, 1 << 62] {
            assert!(!set.contains(h));
        }
        assert!(!HashSet64::new([]).contains(0));
    }

    #[test]
    fn configurable_stop_words() {
        let s = Segmenter::new(&SegmentSettings {
            stop_words: vec!["cat".into()],
            ..SegmentSettings::default()
        });
        let weighted = s.weighted_tokens("the cat sat");
        assert_eq!(weighted.len(), 1);
        assert_eq!(weighted[0].0, "sat");
    }
}
