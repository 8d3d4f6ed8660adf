//! Query phrases: the spans of a chapter a search engine is asked for as exact phrases.
//!
//! A good query phrase is indexed as one phrase by the engines (so it lies inside one
//! sentence), is rare (so the pages it finds are copies, not the language's common stock),
//! and survives the edits pirate pages make (so it stays away from the chapter's first lines,
//! which they often replace with their own headers and advertisements). Selection is
//! deterministic: the same chapter and settings give the same phrases in the same order.
//!
//! - Chinese text: spans of [`PhraseSettings::han_min_chars`] to
//!   [`PhraseSettings::han_max_chars`] Han characters within one sentence, each sentence's
//!   rarest window, ranked by the mean rarity of its character bigrams. A bigram's rarity is
//!   its IDF in jieba's table (the one the fingerprint crate bundles, [`word_idf`]) when it is
//!   a word there; otherwise (a bigram across a word boundary) the IDF of its rarer character,
//!   or the table's median for characters it does not list.
//! - Other text: the longest sentences, each cut to its first
//!   [`PhraseSettings::english_words`] words.
//! - A phrase is always a substring of the chapter as stored (quotes and all, never
//!   re-spelled), never contains an ASCII double quote (the query wraps it in one), and a
//!   sentence gives at most one phrase.
//!
//! Spans that also occur in other registered works or on licensed domains' pages find those
//! first: [`SharedSpans`] finds them, by the whole normalised phrase, so that the caller can
//! drop them before the budget is spent.

use std::collections::HashMap;

use fingerprint::hash::Rolling;
use fingerprint::normalize::{is_han, normalize_compact};
use fingerprint::segment::{median_idf, word_idf};
use fingerprint::sentences::split_sentences;
use serde::{Deserialize, Serialize};

/// How phrases are cut from a chapter (`[discovery.phrases]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PhraseSettings {
    /// Fewest Han characters in a Chinese phrase.
    pub han_min_chars: usize,
    /// Most Han characters in a Chinese phrase.
    pub han_max_chars: usize,
    /// Words an English (non-Chinese) phrase is cut to.
    pub english_words: usize,
    /// Fewest words of an English phrase (shorter sentences are common stock).
    pub english_min_words: usize,
    /// Non-empty lines at the start of a chapter no phrase is taken from (titles and the
    /// lines pirate pages most often rewrite).
    pub skip_lines: usize,
}

impl Default for PhraseSettings {
    fn default() -> Self {
        PhraseSettings {
            han_min_chars: 15,
            han_max_chars: 30,
            english_words: 20,
            english_min_words: 8,
            skip_lines: 2,
        }
    }
}

impl PhraseSettings {
    /// Checks the ranges.
    ///
    /// # Errors
    /// A value out of range, named by its key (the caller adds the section).
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::between("han_min_chars", self.han_min_chars, 4, 200)?;
        bounds::between("han_max_chars", self.han_max_chars, self.han_min_chars, 200)
            .map_err(|e| e.against("han_min_chars"))?;
        bounds::between("english_words", self.english_words, 3, 64)?;
        bounds::between(
            "english_min_words",
            self.english_min_words,
            1,
            self.english_words,
        )?;
        bounds::between("skip_lines", self.skip_lines, 0, 1000)
    }
}

/// One query phrase of a chapter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phrase {
    /// The span as the chapter has it.
    pub text: String,
    /// Its byte offset in the chapter.
    pub offset: usize,
    /// How rare it is (mean bigram IDF for Chinese; words for English): higher first.
    pub rarity: f64,
}

/// The query phrases of `chapter`, rarest first (ties by position), at most one per
/// sentence. Deterministic.
pub fn select_phrases(chapter: &str, settings: &PhraseSettings) -> Vec<Phrase> {
    let start = body_start(chapter, settings.skip_lines);
    let body = &chapter[start..];
    let han = body.chars().filter(|&c| is_han(c)).count();
    let letters = body.chars().filter(|c| c.is_alphabetic()).count();
    let mut phrases: Vec<Phrase> = if han * 4 >= letters.max(1) {
        split_sentences(body)
            .filter_map(|(at, sentence)| han_phrase(sentence, start + at, settings))
            .collect()
    } else {
        split_sentences(body)
            .filter_map(|(at, sentence)| english_phrase(sentence, start + at, settings))
            .collect()
    };
    phrases.sort_by(|a, b| b.rarity.total_cmp(&a.rarity).then(a.offset.cmp(&b.offset)));
    // The same span twice in a chapter is one query.
    let mut seen = std::collections::HashSet::new();
    phrases.retain(|p| seen.insert(p.text.clone()));
    phrases
}

/// The byte offset after the first `skip` non-empty lines (the whole text when it has no
/// more lines than that, so a one-paragraph chapter keeps its text).
fn body_start(text: &str, skip: usize) -> usize {
    let mut skipped = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if skipped == skip {
            return at;
        }
        if !line.trim().is_empty() {
            skipped += 1;
        }
        at += line.len();
    }
    if skipped == skip && at < text.len() {
        at
    } else {
        0
    }
}

/// The rarity of a bigram of normalised characters (see the module docs).
fn bigram_rarity(a: char, b: char) -> f64 {
    let mut buf = [0u8; 8];
    let mut word = String::with_capacity(8);
    word.push(a);
    word.push(b);
    if let Some(idf) = word_idf(&word) {
        return idf;
    }
    let mut single = |c: char| word_idf(c.encode_utf8(&mut buf)).unwrap_or_else(median_idf);
    let (x, y) = (single(a), single(b));
    x.max(y)
}

/// A sentence's rarest window of Han characters, if it has enough of them.
fn han_phrase(sentence: &str, offset: usize, settings: &PhraseSettings) -> Option<Phrase> {
    // The sentence without its terminators and the blanks around it.
    let trimmed_start = sentence.len() - sentence.trim_start().len();
    let core = sentence
        .trim()
        .trim_end_matches(['。', '！', '？', '；', '…', '.', '!', '?', ';', '｡', '．']);
    // Han characters with their byte offsets in `core` and their normalised form.
    let hans: Vec<(usize, char)> = core
        .char_indices()
        .filter(|&(_, c)| is_han(c))
        .filter_map(|(i, c)| {
            let n = normalize_compact(c.encode_utf8(&mut [0u8; 4])).text;
            n.chars().next().map(|n| (i, n))
        })
        .collect();
    if hans.len() < settings.han_min_chars {
        return None;
    }
    let rarity: Vec<f64> = hans
        .windows(2)
        .map(|w| bigram_rarity(w[0].1, w[1].1))
        .collect();
    let len = hans.len().min(settings.han_max_chars);
    // Sliding sum over the window's len - 1 bigrams; the first best window wins ties.
    let mut sum: f64 = rarity[..len - 1].iter().sum();
    let mut best = (sum, 0usize);
    for start in 1..=hans.len() - len {
        sum += rarity[start + len - 2] - rarity[start - 1];
        if sum > best.0 + 1e-9 {
            best = (sum, start);
        }
    }
    let (first, last) = (hans[best.1].0, hans[best.1 + len - 1].0);
    let end = last + core[last..].chars().next().map_or(0, char::len_utf8);
    let text = &core[first..end];
    if text.contains('"') {
        return None;
    }
    // Summed again in order, so the score does not depend on the sliding sum's rounding.
    let score: f64 = rarity[best.1..best.1 + len - 1].iter().sum::<f64>() / (len - 1) as f64;
    Some(Phrase {
        text: text.to_owned(),
        offset: offset + trimmed_start + first,
        rarity: score,
    })
}

/// A sentence's first `english_words` words, if it has `english_min_words` or more.
fn english_phrase(sentence: &str, offset: usize, settings: &PhraseSettings) -> Option<Phrase> {
    let words: Vec<(usize, &str)> = sentence
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - sentence.as_ptr() as usize, w))
        .collect();
    if words.len() < settings.english_min_words {
        return None;
    }
    let take = words.len().min(settings.english_words);
    let first = words[0].0;
    let (last_at, last) = words[take - 1];
    let text = sentence[first..last_at + last.len()]
        .trim_end_matches(|c: char| c.is_ascii_punctuation() && c != '\'');
    if text.contains('"') || text.is_empty() {
        return None;
    }
    Some(Phrase {
        text: text.to_owned(),
        offset: offset + first,
        // Longer sentences first: the whole sentence's length, so a 40-word sentence cut to
        // 20 words ranks above a sentence of 20.
        rarity: words.len() as f64,
    })
}

/// Finds which phrases occur in other texts (other works' chapters, licensed pages), by the
/// whole normalised phrase: every text is read once, whatever the number of phrases.
#[derive(Debug)]
pub struct SharedSpans {
    /// The shortest normalised phrase, in characters: the anchor window rolled over texts.
    anchor: usize,
    /// Anchor hash → (phrase index, the phrase's normalised characters).
    anchors: HashMap<u64, Vec<(usize, Vec<char>)>>,
    shared: Vec<bool>,
}

/// The seed of anchor hashes (any constant; nothing is stored).
const ANCHOR_SEED: u64 = 0x7368_6172_6564; // "shared"

impl SharedSpans {
    /// Ready to scan texts for `phrases`.
    pub fn new<'a>(phrases: impl IntoIterator<Item = &'a str>) -> Self {
        let normalized: Vec<Vec<char>> = phrases
            .into_iter()
            .map(|p| normalize_compact(p).text.chars().collect())
            .collect();
        let anchor = normalized
            .iter()
            .map(Vec::len)
            .filter(|&n| n > 0)
            .min()
            .unwrap_or(1);
        let mut anchors: HashMap<u64, Vec<(usize, Vec<char>)>> = HashMap::new();
        for (i, chars) in normalized.iter().enumerate() {
            if chars.is_empty() {
                continue;
            }
            let mut rolling = Rolling::new(anchor, ANCHOR_SEED);
            let hash = chars[..anchor]
                .iter()
                .filter_map(|&c| rolling.push(u64::from(c)))
                .last()
                .expect("an anchor of `anchor` characters");
            anchors.entry(hash).or_default().push((i, chars.clone()));
        }
        SharedSpans {
            anchor,
            anchors,
            shared: vec![false; normalized.len()],
        }
    }

    /// Reads one other text: the phrases it holds become shared.
    pub fn scan(&mut self, text: &str) {
        if self.anchors.is_empty() {
            return;
        }
        let chars: Vec<char> = normalize_compact(text).text.chars().collect();
        let mut rolling = Rolling::new(self.anchor, ANCHOR_SEED);
        for (end, &c) in chars.iter().enumerate() {
            let Some(hash) = rolling.push(u64::from(c)) else {
                continue;
            };
            let Some(candidates) = self.anchors.get(&hash) else {
                continue;
            };
            let start = end + 1 - self.anchor;
            for (i, phrase) in candidates {
                if !self.shared[*i] && chars[start..].starts_with(phrase) {
                    self.shared[*i] = true;
                }
            }
        }
    }

    /// Whether phrase `i` (in the order given to [`SharedSpans::new`]) was found in a text
    /// scanned so far.
    pub fn is_shared(&self, i: usize) -> bool {
        self.shared.get(i).copied().unwrap_or(false)
    }

    /// How many phrases were found elsewhere.
    pub fn shared_count(&self) -> usize {
        self.shared.iter().filter(|&&s| s).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAPTER: &str = "第一章 风起\n\
        作者：某某\n\
        本站最新地址请收藏\n\
        那天夜里，饕餮纹的青铜鼎在祠堂深处嗡嗡作响，惊醒了守夜的老族长和他的孙子。\
        我们去吃饭吧。\
        他提着灯笼穿过回廊，看见檐角的铜铃无风自动，铃舌上缠着一缕褪色的朱砂红绳。\n\
        窗外的雨一直下着，院子里的积水倒映着昏黄的灯光，远处传来几声犬吠和更夫的梆子声。\n";

    #[test]
    fn chinese_phrases_are_exact_spans_of_the_chapter_within_the_bounds() {
        let settings = PhraseSettings::default();
        let phrases = select_phrases(CHAPTER, &settings);
        assert!(phrases.len() >= 3, "{phrases:?}");
        for p in &phrases {
            assert_eq!(&CHAPTER[p.offset..p.offset + p.text.len()], p.text);
            let han = p.text.chars().filter(|&c| is_han(c)).count();
            assert!(
                (15..=30).contains(&han),
                "{} has {han} Han characters",
                p.text
            );
            assert!(!p.text.contains('"'));
        }
        // Ranked rarest first, deterministic.
        assert!(phrases.windows(2).all(|w| w[0].rarity >= w[1].rarity));
        assert_eq!(phrases, select_phrases(CHAPTER, &settings));
        // Not from the first lines, and the short common sentence gives none.
        let body = CHAPTER.find("那天").unwrap();
        assert!(phrases.iter().all(|p| p.offset >= body), "{phrases:?}");
        assert!(phrases.iter().all(|p| !p.text.contains("吃饭")));
    }

    #[test]
    fn the_rarest_window_of_a_long_sentence_is_chosen() {
        // A long sentence of common words with a rare stretch in its second half.
        let sentence = "我们今天我们明天我们后天我们大家我们一起我们都是好的饕餮鸱吻狻猊睚眦螭吻蒲牢囚牛椒图趴蝮负屃贔屭嘲风";
        let settings = PhraseSettings {
            skip_lines: 0,
            ..PhraseSettings::default()
        };
        let phrases = select_phrases(sentence, &settings);
        assert_eq!(phrases.len(), 1);
        assert!(phrases[0].text.contains("饕餮"), "{}", phrases[0].text);
        assert_eq!(phrases[0].text.chars().count(), 30);
        // Rarer than the common start.
        let common = han_phrase(&sentence[..sentence.find("饕").unwrap()], 0, &settings);
        assert!(common.is_none_or(|c| c.rarity < phrases[0].rarity));
    }

    #[test]
    fn english_phrases_are_the_longest_sentences_cut_to_twenty_words() {
        let text = "Chapter One\nBy Someone\nRead more at our site\n\
            It was cold. The lamplighter walked the length of the harbour wall twice every night, \
            counting the ships at anchor and the lights that burned in their cabins until dawn came. \
            She said nothing at all to him that evening, though the letter was already in her pocket.\n";
        let phrases = select_phrases(text, &PhraseSettings::default());
        assert_eq!(phrases.len(), 2, "{phrases:?}");
        assert_eq!(
            phrases[0].text,
            "The lamplighter walked the length of the harbour wall twice every night, counting \
             the ships at anchor and the lights"
        );
        assert_eq!(phrases[0].text.split_whitespace().count(), 20);
        assert!(phrases[1].text.starts_with("She said nothing"));
        assert!(!phrases[1].text.ends_with('.'));
        for p in &phrases {
            assert_eq!(&text[p.offset..p.offset + p.text.len()], p.text);
        }
    }

    #[test]
    fn phrases_with_a_double_quote_are_left_out() {
        let text = "a\nb\nc\nHe wrote \"leave the harbour before the tide turns and never come back\" on the wall.\n";
        assert!(select_phrases(text, &PhraseSettings::default()).is_empty());
    }

    #[test]
    fn a_chapter_of_only_a_few_lines_keeps_them() {
        let text = "他提着灯笼穿过回廊，看见檐角的铜铃无风自动，铃舌上缠着一缕褪色的朱砂红绳。";
        assert_eq!(select_phrases(text, &PhraseSettings::default()).len(), 1);
        assert!(select_phrases("", &PhraseSettings::default()).is_empty());
    }

    #[test]
    fn shared_spans_are_found_whole_and_normalised() {
        let phrases = [
            "铃舌上缠着一缕褪色的朱砂红绳",
            "院子里的积水倒映着昏黄的灯光",
            "counting the ships at anchor",
        ];
        let mut shared = SharedSpans::new(phrases.iter().copied());
        // Traditional characters and other punctuation still hold the first phrase; half of
        // the second is not the phrase.
        shared.scan("另一部書：鈴舌上纏着一縷褪色的朱砂紅繩！院子里的积水倒映");
        shared.scan("COUNTING, the ships at — anchor");
        assert!(shared.is_shared(0));
        assert!(!shared.is_shared(1));
        assert!(shared.is_shared(2));
        assert_eq!(shared.shared_count(), 2);
        assert!(!shared.is_shared(7));
    }

    #[test]
    fn settings_out_of_range_are_refused() {
        let bad = PhraseSettings {
            han_max_chars: 10,
            ..PhraseSettings::default()
        };
        assert!(bad.validate().is_err());
        assert!(PhraseSettings::default().validate().is_ok());
    }
}
