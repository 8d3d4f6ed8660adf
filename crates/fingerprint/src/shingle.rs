//! k-shingles as 64-bit hashes, with exact Jaccard similarity and containment.
//!
//! * **Character shingles** are the hashes of every window of `k` consecutive characters of
//!   the normalised text (k = 5 by default for Chinese, where one character carries about as
//!   much as an English word).
//! * **Word shingles** are the hashes of every window of `k` consecutive words from
//!   [`crate::Segmenter::words`].
//!
//! A text shorter than `k` (but not empty) has exactly one shingle: the hash of the whole text.

use crate::hash::{Rolling, hash_bytes};

/// Seed of character shingle hashes (and of the winnowing k-grams built on them).
pub const CHAR_SHINGLE_SEED: u64 = 0x636f_7079_686f_756e; // "copyhoun"
/// Seed of word shingle hashes.
pub const WORD_SHINGLE_SEED: u64 = 0x776f_7264_7368_696e; // "wordshin"

/// Calls `f(position, hash)` for every `k`-character window of `text`, where `position` is
/// the index (in characters) of the window's first character.
pub fn for_each_char_shingle(text: &str, k: usize, mut f: impl FnMut(u32, u64)) {
    let mut rolling = Rolling::new(k, CHAR_SHINGLE_SEED);
    let mut count: u32 = 0;
    for c in text.chars() {
        count += 1;
        if let Some(h) = rolling.push(c as u64) {
            f(count - k as u32, h);
        }
    }
    if let Some(h) = rolling.partial() {
        f(0, h);
    }
}

/// The character shingle hashes of `text`, in text order (with repeats).
pub fn char_shingles(text: &str, k: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(text.len() / 3);
    for_each_char_shingle(text, k, |_, h| out.push(h));
    out
}

/// The word shingle hashes of `words`, in order (with repeats).
pub fn word_shingles<S: AsRef<str>>(words: &[S], k: usize) -> Vec<u64> {
    let mut rolling = Rolling::new(k, WORD_SHINGLE_SEED);
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        if let Some(h) = rolling.push(hash_bytes(w.as_ref().as_bytes(), WORD_SHINGLE_SEED)) {
            out.push(h);
        }
    }
    if let Some(h) = rolling.partial() {
        out.push(h);
    }
    out
}

/// A set of shingle hashes, sorted and without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShingleSet(Vec<u64>);

impl ShingleSet {
    /// Builds the set from hashes in any order, repeats allowed.
    pub fn new(mut hashes: Vec<u64>) -> Self {
        hashes.sort_unstable();
        hashes.dedup();
        ShingleSet(hashes)
    }

    /// Number of distinct shingles.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The sorted hashes.
    pub fn hashes(&self) -> &[u64] {
        &self.0
    }

    /// Size of the intersection with `other`.
    pub fn intersection_len(&self, other: &ShingleSet) -> usize {
        let (mut i, mut j, mut n) = (0, 0, 0);
        let (a, b) = (&self.0, &other.0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    n += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        n
    }

    /// Exact Jaccard similarity `|A ∩ B| / |A ∪ B|`; 0 when both are empty.
    pub fn jaccard(&self, other: &ShingleSet) -> f64 {
        let inter = self.intersection_len(other);
        let union = self.len() + other.len() - inter;
        if union == 0 {
            0.0
        } else {
            inter as f64 / union as f64
        }
    }

    /// Containment of `self` in `other`: `|A ∩ B| / |A|`, the share of this text's shingles
    /// that appear in the other one (a chapter pasted into a page full of ads is contained in
    /// it even though their Jaccard similarity is low); 0 when `self` is empty.
    pub fn containment_in(&self, other: &ShingleSet) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.intersection_len(other) as f64 / self.len() as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_shingles_count_and_positions() {
        let mut seen = Vec::new();
        for_each_char_shingle("abcdefg", 5, |p, _| seen.push(p));
        assert_eq!(seen, vec![0, 1, 2]);
        assert_eq!(char_shingles("abc", 5).len(), 1);
        assert!(char_shingles("", 5).is_empty());
    }

    #[test]
    fn jaccard_and_containment() {
        let a = ShingleSet::new(char_shingles("天下大势分久必合合久必分", 3));
        let b = ShingleSet::new(char_shingles("广告天下大势分久必合合久必分广告", 3));
        assert_eq!(a.jaccard(&a), 1.0);
        assert_eq!(a.containment_in(&b), 1.0);
        assert!(a.jaccard(&b) < 1.0 && a.jaccard(&b) > 0.5);
        let empty = ShingleSet::default();
        assert_eq!(empty.jaccard(&empty), 0.0);
        assert_eq!(empty.containment_in(&a), 0.0);
    }

    #[test]
    fn word_shingles_depend_on_order() {
        let a = word_shingles(&["the", "cat", "sat", "on"], 2);
        let b = word_shingles(&["cat", "the", "sat", "on"], 2);
        assert_eq!(a.len(), 3);
        assert_ne!(ShingleSet::new(a), ShingleSet::new(b));
    }
}
