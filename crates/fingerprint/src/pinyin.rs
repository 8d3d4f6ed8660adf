//! The pinyin stream: normalised Chinese as toneless syllables, so that homophone substitution
//! (同音字替换: 他→她, 在→再, 做→作 to dodge exact-text matching) still matches.
//!
//! Each Han character maps to its toneless pinyin syllable through the [`pinyin`] crate.
//! Polyphonic characters (多音字) are resolved deterministically to the crate's first
//! (most common) reading, so the same character always gives the same syllable. Other
//! characters (Latin letters, digits) stand for themselves in the stream.
//!
//! The stream is a sequence of symbols (`u32`): syllables get small ids (their rank in the
//! sorted list of all syllables), other characters their code point plus an offset that keeps
//! them apart from the syllables. k-grams of symbols are hashed and winnowed exactly like the
//! normalised text ([`pinyin_winnow`]).

use std::sync::LazyLock;

use pinyin::ToPinyin;

use crate::hash::Rolling;
use crate::winnow::{Winnow, Winnower};

/// Default k-gram length of pinyin winnowing (syllables).
pub const DEFAULT_PINYIN_K: usize = 6;
/// Default window of pinyin winnowing (k-grams).
pub const DEFAULT_PINYIN_W: usize = 30;
/// Seed of pinyin k-gram hashes (different from the text's, so the two never collide).
pub const PINYIN_SEED: u64 = 0x7069_6e79_696e_6b21; // "pinyink!"

/// Offset added to non-Han code points in the symbol stream.
const NON_HAN_OFFSET: u32 = 0x1_0000;
/// First code point covered by the table.
const TABLE_START: u32 = 0x3400;
/// One past the last code point covered by the table (CJK Ext. A and the URO, BMP only).
const TABLE_END: u32 = 0xA000;

struct Tables {
    /// Sorted toneless syllables; a symbol `s` in `1..=len` is `syllables[s - 1]`.
    syllables: Vec<&'static str>,
    /// Per code point in `TABLE_START..TABLE_END`: syllable id (0 = not a Han character).
    ids: Box<[u16]>,
    /// First letter of each syllable, by id (`initials[0]` unused).
    initials: Vec<u8>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let mut syllables: Vec<&'static str> = (TABLE_START..TABLE_END)
        .filter_map(char::from_u32)
        .filter_map(|c| c.to_pinyin().map(|p| p.plain()))
        .collect();
    syllables.sort_unstable();
    syllables.dedup();
    let ids = (TABLE_START..TABLE_END)
        .map(|cp| {
            char::from_u32(cp)
                .and_then(|c| c.to_pinyin())
                .and_then(|p| syllables.binary_search(&p.plain()).ok())
                .map_or(0, |i| (i + 1) as u16)
        })
        .collect();
    let initials = std::iter::once(0)
        .chain(syllables.iter().map(|s| s.as_bytes()[0]))
        .collect();
    Tables {
        syllables,
        ids,
        initials,
    }
});

/// Builds the syllable table now (about 10 ms) instead of on first use.
pub fn warm_up() {
    LazyLock::force(&TABLES);
}

/// The syllable id of a character, or 0 if it has no pinyin reading in the table.
#[inline]
fn syllable_id(c: char) -> u16 {
    let cp = c as u32;
    if (TABLE_START..TABLE_END).contains(&cp) {
        TABLES.ids[(cp - TABLE_START) as usize]
    } else {
        0
    }
}

/// The stream symbol of one normalised character.
#[inline]
pub fn symbol(c: char) -> u32 {
    match syllable_id(c) {
        0 => NON_HAN_OFFSET + c as u32,
        id => id as u32,
    }
}

/// [`symbol`] of every character in `chars` (numbers of `char`s, `c as u64`), in place:
/// the table is looked up once for the slice, not once a character.
pub fn symbols_in_place(chars: &mut [u64]) {
    let ids: &[u16] = &TABLES.ids;
    for c in chars {
        let cp = *c as u32;
        let id = cp
            .checked_sub(TABLE_START)
            .and_then(|i| ids.get(i as usize))
            .copied()
            .unwrap_or(0);
        *c = u64::from(match id {
            0 => NON_HAN_OFFSET + cp,
            id => u32::from(id),
        });
    }
}

/// The toneless syllable of a character, if it is a Han character with a reading.
pub fn syllable(c: char) -> Option<&'static str> {
    match syllable_id(c) {
        0 => None,
        id => Some(TABLES.syllables[id as usize - 1]),
    }
}

/// The initial letter (`b'a'..=b'z'`) of a character: the first letter of its pinyin for Han
/// characters, the letter itself (lower-cased) for ASCII letters, `None` otherwise.
#[inline]
pub fn initial(c: char) -> Option<u8> {
    symbol_and_initial(c).1
}

/// [`symbol`] and [`initial`] of one character with one table lookup (the fingerprinter's
/// single pass needs both).
#[inline]
pub fn symbol_and_initial(c: char) -> (u32, Option<u8>) {
    match syllable_id(c) {
        0 => (
            NON_HAN_OFFSET + c as u32,
            c.is_ascii_alphabetic()
                .then(|| c.to_ascii_lowercase() as u8),
        ),
        id => (u32::from(id), Some(TABLES.initials[usize::from(id)])),
    }
}

/// The toneless syllables of (normalised) `text`, space-separated; other characters are
/// kept as they are. For display and debugging: `"天下ok"` → `"tian xia o k"`.
pub fn pinyin_syllables(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if !out.is_empty() {
            out.push(' ');
        }
        match syllable(c) {
            Some(s) => out.push_str(s),
            None => out.push(c),
        }
    }
    out
}

/// The initials of (normalised) `text`: one letter per Han character or ASCII letter.
pub fn pinyin_initials(text: &str) -> String {
    text.chars().filter_map(initial).map(char::from).collect()
}

/// Winnowing over the pinyin symbol stream of (normalised) `text`: `k`-syllable grams,
/// window `w`. Positions are character indices into `text`, so they line up with the text's
/// own winnowing.
pub fn pinyin_winnow(text: &str, k: usize, w: usize) -> Vec<Winnow> {
    let mut rolling = Rolling::new(k, PINYIN_SEED);
    let mut winnower = Winnower::new(w);
    for (i, c) in text.chars().enumerate() {
        if let Some(h) = rolling.push(symbol(c) as u64) {
            winnower.push(h, (i + 1 - k) as u32);
        }
    }
    winnower.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_in_place_are_each_characters_symbol() {
        let text = "天下大势ab1é\u{3400}\u{9FFF}\u{A000}😀";
        let mut chars: Vec<u64> = text.chars().map(|c| c as u64).collect();
        symbols_in_place(&mut chars);
        let expected: Vec<u64> = text.chars().map(|c| u64::from(symbol(c))).collect();
        assert_eq!(chars, expected);
    }

    #[test]
    fn syllables_and_initials() {
        assert_eq!(pinyin_syllables("天下ok"), "tian xia o k");
        assert_eq!(pinyin_initials("盗版小说abc"), "dbxsabc");
        assert_eq!(syllable('中'), Some("zhong"));
        assert_eq!(syllable('a'), None);
    }

    #[test]
    fn homophones_share_symbols() {
        assert_eq!(symbol('他'), symbol('她'));
        assert_eq!(symbol('他'), symbol('它'));
        assert_eq!(symbol('做'), symbol('作'));
        assert_ne!(symbol('他'), symbol('你'));
        assert_ne!(symbol('a'), symbol('b'));
    }

    #[test]
    fn homophone_substitution_keeps_the_pinyin_winnowing() {
        let original = "他在山上看见一只老虎便急忙跑回家中告诉他的父亲";
        let disguised = "她再山上看见一只老虎便急忙跑回家中告诉她的父亲";
        assert_eq!(
            pinyin_winnow(original, 4, 4),
            pinyin_winnow(disguised, 4, 4)
        );
        assert_ne!(
            crate::winnow::winnow_text(original, 4, 4),
            crate::winnow::winnow_text(disguised, 4, 4)
        );
    }
}
