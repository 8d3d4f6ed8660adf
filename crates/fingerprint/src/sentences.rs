//! The k longest sentences of a text, hashed: the fast path for verbatim copies.
//!
//! A pirate who copies a chapter verbatim (even wrapped in ads and navigation) copies its
//! longest sentences too. Sentences are split on Chinese and Latin sentence punctuation
//! (`。！？；…` `.!?;` and line breaks), normalised, and the `k` longest (ties broken by hash,
//! so the choice is deterministic) are hashed one by one; the sorted hashes are hashed again
//! into one 128-bit signature, which is equal for two texts whose k longest sentences are the
//! same set.

use serde::{Deserialize, Serialize};

use crate::hash::{hash_bytes, hash_bytes_128};
use crate::normalize::Compact;

/// Default number of sentences kept.
pub const DEFAULT_SENTENCES: usize = 5;
/// Default minimum normalised length (characters) of a sentence worth keeping.
pub const DEFAULT_SENTENCE_MIN_CHARS: usize = 8;
/// Seed of sentence hashes.
pub const SENTENCE_SEED: u64 = 0x7365_6e74_656e_6365; // "sentence"

fn is_terminator(c: char) -> bool {
    matches!(
        c,
        '。' | '！'
            | '？'
            | '；'
            | '…'
            | '.'
            | '!'
            | '?'
            | ';'
            | '\n'
            | '\r'
            | '｡'
            | '︒'
            | '﹒'
            | '．'
    )
}

/// Splits `text` into sentences: `(byte offset, sentence)` pairs, terminators included with
/// the sentence they end, empty pieces skipped.
pub fn split_sentences(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some((i, c)) = iter.next() {
            if is_terminator(c) {
                // Keep runs of terminators ("！？", "……") together.
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = iter.peek() {
                    if is_terminator(d) {
                        end = j + d.len_utf8();
                        iter.next();
                    } else {
                        break;
                    }
                }
                let piece = (start, &text[start..end]);
                start = end;
                if !piece.1.trim().is_empty() {
                    return Some(piece);
                }
            }
        }
        if start < text.len() {
            let piece = (start, &text[start..]);
            start = text.len();
            if !piece.1.trim().is_empty() {
                return Some(piece);
            }
        }
        None
    })
}

/// The signature of a text's k longest sentences.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentenceSignature {
    /// 64-bit hashes of the normalised longest sentences, ascending.
    #[serde(
        serialize_with = "crate::serde_util::fixed::serialize_u64s",
        deserialize_with = "crate::serde_util::fixed::deserialize_u64s"
    )]
    pub hashes: Vec<u64>,
    /// 128-bit hash of `hashes`; 0 when no sentence was long enough.
    #[serde(
        serialize_with = "crate::serde_util::fixed::serialize_u128",
        deserialize_with = "crate::serde_util::fixed::deserialize_u128"
    )]
    pub signature: u128,
}

/// Hash of one normalised sentence, as stored in [`SentenceSignature::hashes`]. Matchers hash
/// every sentence of a suspect page with it and look the result up.
pub fn sentence_hash(normalized: &str) -> u64 {
    hash_bytes(normalized.as_bytes(), SENTENCE_SEED)
}

/// The signature of the `k` longest sentences of `text` that have at least `min_chars`
/// normalised characters.
pub fn longest_sentences(text: &str, k: usize, min_chars: usize) -> SentenceSignature {
    let mut buf = Compact::default();
    // (length, hash) of the best k so far; small k, so a sorted Vec beats a heap.
    let mut best: Vec<(usize, u64)> = Vec::with_capacity(k + 1);
    for (_, sentence) in split_sentences(text) {
        buf.fill(sentence);
        if buf.chars < min_chars.max(1) {
            continue;
        }
        let entry = (buf.chars, sentence_hash(&buf.text));
        // Longest first; equal lengths by ascending hash.
        let rank = |e: &(usize, u64)| (std::cmp::Reverse(e.0), e.1);
        if best.len() == k && best.last().is_some_and(|last| rank(&entry) >= rank(last)) {
            continue;
        }
        if best.iter().any(|e| e.1 == entry.1) {
            continue;
        }
        let at = best.partition_point(|e| rank(e) < rank(&entry));
        best.insert(at, entry);
        best.truncate(k);
    }
    let mut hashes: Vec<u64> = best.into_iter().map(|(_, h)| h).collect();
    hashes.sort_unstable();
    let signature = if hashes.is_empty() {
        0
    } else {
        let bytes: Vec<u8> = hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
        hash_bytes_128(&bytes)
    };
    SentenceSignature { hashes, signature }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_chinese_and_latin() {
        let s: Vec<&str> = split_sentences("天下大势，分久必合。合久必分！Yes? No.\n\n最后")
            .map(|(_, s)| s)
            .collect();
        assert_eq!(
            s,
            vec![
                "天下大势，分久必合。",
                "合久必分！",
                "Yes?",
                " No.\n\n",
                "最后"
            ]
        );
    }

    #[test]
    fn ellipses_and_question_marks_stay_together() {
        let s: Vec<&str> = split_sentences("真的吗？！……好").map(|(_, s)| s).collect();
        assert_eq!(s, vec!["真的吗？！……", "好"]);
    }

    #[test]
    fn same_sentences_any_order_same_signature() {
        let a = "甲乙丙丁戊己庚辛壬癸。子丑寅卯辰巳午未申酉戌亥。一二三四五六七八九十百千。";
        let b = "广告！子丑寅卯辰巳午未申酉戌亥。一二三四五六七八九十百千。甲乙丙丁戊己庚辛壬癸。";
        let (sa, sb) = (longest_sentences(a, 3, 8), longest_sentences(b, 3, 8));
        assert_eq!(sa.hashes.len(), 3);
        assert_eq!(sa, sb);
        let c = longest_sentences(
            "甲乙丙丁戊己庚辛壬葵。子丑寅卯辰巳午未申酉戌亥。一二三四五六七八九十百千。",
            3,
            8,
        );
        assert_ne!(sa.signature, c.signature);
    }

    #[test]
    fn traditional_copy_has_the_same_signature() {
        let a = longest_sentences(
            "話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦。",
            2,
            4,
        );
        let b = longest_sentences(
            "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。",
            2,
            4,
        );
        assert_eq!(a, b);
    }

    #[test]
    fn short_text_has_no_signature() {
        let s = longest_sentences("短。", 5, 8);
        assert!(s.hashes.is_empty());
        assert_eq!(s.signature, 0);
    }
}
