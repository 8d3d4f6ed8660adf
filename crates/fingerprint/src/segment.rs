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
//! * Stop words are dropped in both cases: jieba's default list (English function words), a
//!   short list of Chinese function words, and whatever [`SegmentSettings::stop_words`] adds;
//!   so are tokens shorter than [`SegmentSettings::min_token_chars`].
//!
//! Segmentation runs on the *normalised* text with a space at every word break (see
//! [`crate::normalize::Compact::spaced`]), so traditional characters are already simplified
//! (jieba's dictionary is simplified) and full-width Latin is already ASCII.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::sync::LazyLock;

use foldhash::fast::FixedState;
use jieba_rs::Jieba;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// The default dictionary, loaded once per process (about 0.3 s).
static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// jieba's IDF table, loaded once per process (about 0.1 s).
static IDF: LazyLock<Idf> = LazyLock::new(|| {
    Idf::parse(include_bytes!("../data/jieba_idf.txt.zst"))
        .expect("the bundled IDF table is a valid zstd-compressed `word idf` list")
});

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

/// An IDF table: word → inverse document frequency.
struct Idf {
    map: HashMap<Box<str>, f64, FixedState>,
    median: f64,
}

impl Idf {
    fn parse(compressed: &[u8]) -> std::io::Result<Idf> {
        let mut text = String::new();
        ruzstd::decoding::StreamingDecoder::new(compressed)
            .map_err(std::io::Error::other)?
            .read_to_string(&mut text)?;
        let mut map = HashMap::with_capacity_and_hasher(280_000, FixedState::default());
        let mut values = Vec::with_capacity(280_000);
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if let (Some(word), Some(Ok(idf))) = (parts.next(), parts.next().map(str::parse)) {
                map.insert(Box::from(word), idf);
                values.push(idf);
            }
        }
        if values.is_empty() {
            return Err(std::io::Error::other("empty IDF table"));
        }
        // The lower median, as jieba computes it.
        let mid = (values.len() - 1) / 2;
        let (_, median, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
        Ok(Idf {
            median: *median,
            map,
        })
    }

    fn get(&self, word: &str) -> f64 {
        self.map.get(word).copied().unwrap_or(self.median)
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
    stop_words: HashSet<String, FixedState>,
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
            stop_words: stop_words.into_iter().collect(),
            min_token_chars: settings.min_token_chars.max(1),
        }
    }

    fn keep(&self, word: &str) -> bool {
        word != " "
            && word.chars().nth(self.min_token_chars - 1).is_some()
            && !self.stop_words.contains(word)
    }

    /// `(word, weight)` pairs of `spaced` normalised text (see the [module docs](self)),
    /// heaviest first, ties by word; every distinct word once.
    pub fn weighted_tokens<'a>(&self, spaced: &'a str) -> Vec<(&'a str, f64)> {
        let mut out = Vec::new();
        self.for_each_weighted(spaced, |w, x| out.push((w, x)));
        out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        out
    }

    /// Calls `f(word, weight)` for every distinct word of `spaced`, in no particular order
    /// (what SimHash needs: its sum does not depend on order).
    pub fn for_each_weighted<'a>(&self, spaced: &'a str, mut f: impl FnMut(&'a str, f64)) {
        // Count every token, then filter distinct words: stop words and short tokens depend
        // only on the word, and checking them once per word instead of once per token saves
        // a hash lookup per token.
        let mut tf: HashMap<&str, u32, FixedState> = HashMap::default();
        let han = has_han(spaced);
        if han {
            for_each_jieba_word(spaced, |w| *tf.entry(w).or_default() += 1);
        } else {
            for w in spaced.unicode_words() {
                *tf.entry(w).or_default() += 1;
            }
        }
        tf.retain(|w, _| self.keep(w));
        let total = tf.values().sum::<u32>().max(1) as f64;
        for (w, n) in tf {
            let idf = if han {
                IDF.get(w)
            } else {
                1.0 + (w.chars().count() as f64).ln()
            };
            f(w, n as f64 * idf / total);
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
