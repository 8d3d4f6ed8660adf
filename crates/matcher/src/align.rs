//! Passage alignment: which stretches of a page reproduce which stretches of a chapter.
//!
//! Both texts are compared as sequences of **pinyin symbols** ([`fingerprint::pinyin::symbol`]
//! of each normalised character), so a homophone swapped in (他 → 她, 在 → 再) still aligns;
//! traditional script, full-width letters, spacing and punctuation are already gone after
//! normalisation. Non-Han characters stand for themselves, so English aligns letter by letter.
//!
//! 1. **Seeds.** Every `k`-symbol gram of the chapter is hashed into a table; every `k`-gram of
//!    the page that is in it gives an anchor (page position, chapter position). Grams that occur
//!    more than [`MAX_OCCURRENCES`] times in the chapter are skipped: they cannot be placed.
//! 2. **Runs.** Anchors on one diagonal at consecutive page positions form an exact run: a
//!    stretch of the page equal, symbol for symbol, to a stretch of the chapter.
//! 3. **Chain.** Runs are taken longest first and kept when they fit, after trimming any
//!    overlap, between the runs already kept in **both** texts' order (co-linear). The long runs
//!    of a real copy form the backbone; chance agreements elsewhere do not fit and are dropped,
//!    and no chapter character is counted twice.
//! 4. **Passages.** Consecutive kept runs whose gaps are at most `max_gap` characters on both
//!    sides (an edited character, a dropped sentence) form one passage; passages with fewer than
//!    `min_passage_chars` matched characters are dropped as chance.
//!
//! Positions here are **normalised character indices** (the symbols are one per normalised
//! character); [`crate::Matcher::verify`] maps them back to byte offsets of the originals.
//! The cost is linear in the two lengths plus `R log R` for `R` runs.

use std::collections::BTreeMap;
use std::ops::Range;

use fingerprint::hash::Rolling;
use foldhash::{HashMap, HashMapExt};

use crate::settings::AlignSettings;

/// A gram that occurs more often than this in the chapter seeds nothing.
pub const MAX_OCCURRENCES: usize = 16;
/// Runs beyond this many (longest first) are not chained: only a pathological page (the same
/// short phrase thousands of times) has more.
const MAX_RUNS: usize = 1 << 16;
const SEED: u64 = 0x616c_6967_6e6d_656e; // "alignmen"
const NIL: u32 = u32::MAX;

/// An exact run: `len` symbols from `page` in the page equal `len` symbols from `chapter` in
/// the chapter (normalised character indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Run {
    /// Start in the page.
    pub page: u32,
    /// Start in the chapter.
    pub chapter: u32,
    /// Length in symbols (normalised characters).
    pub len: u32,
}

impl Run {
    fn page_end(&self) -> u32 {
        self.page + self.len
    }
    fn chapter_end(&self) -> u32 {
        self.chapter + self.len
    }
}

/// Consecutive runs merged across small gaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// Normalised character range in the page, from the first run's start to the last run's
    /// end (gaps included).
    pub page: Range<usize>,
    /// Normalised character range in the chapter, likewise.
    pub chapter: Range<usize>,
    /// Characters inside the passage's runs (gaps excluded).
    pub matched: usize,
    /// The passage's runs, as a range of [`Alignment::runs`].
    pub runs: Range<usize>,
}

/// The alignment of a page with a chapter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Alignment {
    /// The kept runs, ascending in both texts, non-overlapping in both.
    pub runs: Vec<Run>,
    /// The passages, ascending in both texts.
    pub passages: Vec<Passage>,
}

impl Alignment {
    /// Matched characters: the total length of the kept runs (the same count on both sides).
    pub fn matched(&self) -> usize {
        self.passages.iter().map(|p| p.matched).sum()
    }
}

/// Aligns `page` with `chapter` (pinyin symbol sequences, one per normalised character); see
/// the [module docs](self).
pub fn align(page: &[u32], chapter: &[u32], settings: &AlignSettings) -> Alignment {
    let runs = seed_runs(page, chapter, settings.k);
    let chained = chain(runs, (settings.k as u32 / 2).max(1));
    passages(chained, settings.max_gap, settings.min_passage_chars)
}

/// Steps 1 and 2: the exact runs (of at least `k` symbols) shared by the two sequences.
fn seed_runs(page: &[u32], chapter: &[u32], k: usize) -> Vec<Run> {
    if page.len() < k || chapter.len() < k || page.len() + chapter.len() >= NIL as usize {
        return Vec::new();
    }
    // Chapter grams: hash → newest start, and per start the next older start of the same hash.
    let mut heads: HashMap<u64, u32> = HashMap::with_capacity(chapter.len());
    let mut older = vec![NIL; chapter.len()];
    let mut count: HashMap<u64, u32> = HashMap::new();
    let mut rolling = Rolling::new(k, SEED);
    for (j, &s) in chapter.iter().enumerate() {
        if let Some(h) = rolling.push(s as u64) {
            let start = (j + 1 - k) as u32;
            if let Some(previous) = heads.insert(h, start) {
                older[start as usize] = previous;
                *count.entry(h).or_insert(1) += 1;
            }
        }
    }
    // Anchors packed as (diagonal << 32 | page start); the diagonal is biased to stay positive.
    let bias = page.len() as u64;
    let mut anchors: Vec<u64> = Vec::with_capacity(page.len());
    let mut rolling = Rolling::new(k, SEED);
    for (i, &s) in page.iter().enumerate() {
        let Some(h) = rolling.push(s as u64) else {
            continue;
        };
        let Some(&head) = heads.get(&h) else {
            continue;
        };
        if count.get(&h).is_some_and(|&n| n as usize > MAX_OCCURRENCES) {
            continue;
        }
        let start = (i + 1 - k) as u64;
        let mut j = head;
        while j != NIL {
            let diagonal = j as u64 + bias - start;
            anchors.push(diagonal << 32 | start);
            j = older[j as usize];
        }
    }
    anchors.sort_unstable();
    let mut runs: Vec<Run> = Vec::new();
    let mut current: Option<(u64, u64, u64)> = None; // (diagonal, first start, last start)
    let close = |(d, first, last): (u64, u64, u64), runs: &mut Vec<Run>| {
        runs.push(Run {
            page: first as u32,
            chapter: (d + first - bias) as u32,
            len: (last - first) as u32 + k as u32,
        });
    };
    for a in anchors {
        let (d, i) = (a >> 32, a & 0xFFFF_FFFF);
        current = match current {
            Some((cd, first, last)) if cd == d && last + 1 == i => Some((cd, first, i)),
            Some(run) => {
                close(run, &mut runs);
                Some((d, i, i))
            }
            None => Some((d, i, i)),
        };
    }
    if let Some(run) = current {
        close(run, &mut runs);
    }
    runs
}

/// Step 3: the co-linear, non-overlapping subset of `runs`, longest first; a run is trimmed to
/// fit between its neighbours and dropped if less than `min_len` of it is left.
fn chain(mut runs: Vec<Run>, min_len: u32) -> Vec<Run> {
    runs.sort_unstable_by(|a, b| {
        b.len
            .cmp(&a.len)
            .then(a.page.cmp(&b.page))
            .then(a.chapter.cmp(&b.chapter))
    });
    runs.truncate(MAX_RUNS);
    // Kept runs by page start; their chapter starts ascend in the same order.
    let mut kept: BTreeMap<u32, Run> = BTreeMap::new();
    for mut r in runs {
        let start = r.page;
        if let Some((_, before)) = kept.range(..=start).next_back() {
            let overlap = before
                .page_end()
                .saturating_sub(r.page)
                .max(before.chapter_end().saturating_sub(r.chapter));
            if overlap >= r.len {
                continue;
            }
            r.page += overlap;
            r.chapter += overlap;
            r.len -= overlap;
        }
        if let Some((_, after)) = kept.range(start + 1..).next() {
            let overlap = r
                .page_end()
                .saturating_sub(after.page)
                .max(r.chapter_end().saturating_sub(after.chapter));
            if overlap >= r.len {
                continue;
            }
            r.len -= overlap;
        }
        if r.len >= min_len {
            kept.insert(r.page, r);
        }
    }
    kept.into_values().collect()
}

/// Step 4: passages from the chained runs (ascending in both texts).
fn passages(chained: Vec<Run>, max_gap: usize, min_passage_chars: usize) -> Alignment {
    let mut groups: Vec<(usize, usize)> = Vec::new(); // run index ranges
    for (i, r) in chained.iter().enumerate() {
        let joins = groups.last().is_some_and(|&(_, end)| {
            let prev = chained[end - 1];
            (r.page - prev.page_end()) as usize <= max_gap
                && (r.chapter - prev.chapter_end()) as usize <= max_gap
        });
        match groups.last_mut() {
            Some(last) if joins => last.1 = i + 1,
            _ => groups.push((i, i + 1)),
        }
    }
    let mut out = Alignment::default();
    for (lo, hi) in groups {
        let group = &chained[lo..hi];
        let matched: usize = group.iter().map(|r| r.len as usize).sum();
        if matched < min_passage_chars {
            continue;
        }
        let (first, last) = (group[0], group[group.len() - 1]);
        let start = out.runs.len();
        out.runs.extend_from_slice(group);
        out.passages.push(Passage {
            page: first.page as usize..last.page_end() as usize,
            chapter: first.chapter as usize..last.chapter_end() as usize,
            matched,
            runs: start..out.runs.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(s: &str) -> Vec<u32> {
        s.chars().map(fingerprint::pinyin::symbol).collect()
    }

    fn settings(k: usize, max_gap: usize, min_passage_chars: usize) -> AlignSettings {
        AlignSettings {
            k,
            max_gap,
            min_passage_chars,
        }
    }

    #[test]
    fn identical_texts_align_fully() {
        let s = symbols("abcdefghijklmnopqrstuvwxyz0123456789");
        let a = align(&s, &s, &settings(5, 4, 10));
        assert_eq!(
            a.runs,
            vec![Run {
                page: 0,
                chapter: 0,
                len: 36
            }]
        );
        assert_eq!(a.matched(), 36);
        assert_eq!(a.passages[0].page, 0..36);
    }

    #[test]
    fn substitution_insertion_and_deletion_leave_small_gaps() {
        let chapter = "thequickbrownfoxjumpsoverthelazydogandrunsawayintothedarkforest";
        // substitute one letter, insert one, delete one
        let page = "xxthequickbrownfoxjumpsoverthelazydxgandrunsawayyintothedrkforest";
        let a = align(&symbols(page), &symbols(chapter), &settings(5, 6, 10));
        assert_eq!(a.passages.len(), 1, "{a:?}");
        let p = &a.passages[0];
        assert_eq!(p.page, 2..page.len());
        assert_eq!(p.chapter, 0..chapter.len());
        assert!(p.matched >= chapter.len() - 3 - 8, "{}", p.matched);
        // Runs ascend and do not overlap on either side.
        for w in a.runs.windows(2) {
            assert!(w[0].page_end() <= w[1].page && w[0].chapter_end() <= w[1].chapter);
        }
    }

    #[test]
    fn duplicated_character_keeps_both_runs() {
        // The page repeats one character: the two runs overlap by one in the chapter.
        let chapter = "abcdefghijklmnopqrstuvwxyz";
        let page = "abcdefghijklmmnopqrstuvwxyz";
        let a = align(&symbols(page), &symbols(chapter), &settings(4, 4, 4));
        assert_eq!(a.matched(), 26, "{a:?}");
    }

    #[test]
    fn homophones_align() {
        let chapter = "他在山上看见一只老虎便急忙跑回家中告诉他的父亲";
        let page = "她再山上看见一只老虎便急忙跑回家中告诉她的父亲";
        let a = align(&symbols(page), &symbols(chapter), &settings(6, 4, 6));
        assert_eq!(a.matched(), chapter.chars().count());
    }

    #[test]
    fn crossing_and_chance_runs_are_dropped() {
        // The page holds the chapter's second half before its first half: only one half can
        // be kept co-linearly.
        let chapter = "abcdefghijklmnopqrstuvwxyz";
        let page = "nopqrstuvwxyzabcdefghijklm";
        let a = align(&symbols(page), &symbols(chapter), &settings(4, 2, 4));
        assert_eq!(a.matched(), 13);
        // A short shared gram far from anything else is below min_passage_chars.
        let a = align(
            &symbols("zzzzzzzzzzhelloqqqqqqqqqqq"),
            &symbols("yyyyyyyyhelloxxxxxxxx"),
            &settings(4, 2, 8),
        );
        assert!(a.passages.is_empty() && a.runs.is_empty());
    }

    #[test]
    fn short_inputs() {
        let s = symbols("abc");
        assert_eq!(align(&s, &s, &settings(4, 2, 1)), Alignment::default());
        assert_eq!(align(&[], &s, &settings(2, 2, 1)), Alignment::default());
    }
}
