//! Winnowing (Schleimer, Wilkerson, Aiken 2003) with positions.
//!
//! From the sequence of k-gram hashes of a text, every window of `w` consecutive hashes
//! contributes its minimum; consecutive windows that pick the same k-gram record it once.
//! **Guarantee**: two texts that share a run of at least `w + k - 1` characters share at least
//! one recorded hash (the minimum of the window that lies inside the run), while only about
//! `2 / (w + 1)` of all k-grams are kept.
//!
//! *Robust winnowing* breaks ties so that repetitive text (「哈哈哈哈」, ads repeated on every line)
//! does not record the same hash over and over: a window keeps the previous window's choice if
//! that k-gram is still in the window and still minimal; otherwise it picks the rightmost
//! minimum.

use serde::{Deserialize, Serialize};

use crate::hash::Rolling;
use crate::shingle::CHAR_SHINGLE_SEED;

/// Default k-gram length (characters of normalised text).
pub const DEFAULT_WINNOW_K: usize = 5;
/// Default window (k-grams).
pub const DEFAULT_WINNOW_W: usize = 30;

/// One recorded fingerprint: a k-gram hash and the index (in symbols of the hashed stream,
/// i.e. characters of the normalised text) of the k-gram's first symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Winnow {
    /// The k-gram hash.
    pub hash: u64,
    /// Position of the k-gram's first symbol.
    pub pos: u32,
}

/// Streaming winnower: push k-gram hashes in order, collect the fingerprints.
///
/// Keeps the last `w` hashes in a ring and the current choice; the window is rescanned only
/// when the chosen k-gram leaves it (for random hashes about every `w/2` pushes), so a push
/// costs about two comparisons on average. The ring's write position wraps by comparison,
/// not by `% w`: a division per push (and per rescanned slot) used to cost more than all the
/// rest of winnowing.
#[derive(Debug, Clone)]
pub struct Winnower {
    w: usize,
    /// The last `w` pushed (hash, position) pairs; slot `i % w` holds push `i`.
    ring: Vec<(u64, u32)>,
    /// The slot the next push goes to (`pushed % w`); once `w` pushes have been made it holds
    /// the oldest pair of the window.
    slot: usize,
    /// The current choice: push index and hash.
    selected: Option<(usize, u64)>,
    pushed: usize,
    out: Vec<Winnow>,
}

impl Winnower {
    /// A winnower with window `w >= 1`.
    ///
    /// # Panics
    /// If `w == 0`.
    pub fn new(w: usize) -> Self {
        assert!(w >= 1, "winnowing window must be at least 1");
        Winnower {
            w,
            ring: vec![(0, 0); w],
            slot: 0,
            selected: None,
            pushed: 0,
            out: Vec::new(),
        }
    }

    /// Pushes the hash of the k-gram that starts at `pos` (positions must increase).
    #[inline]
    pub fn push(&mut self, hash: u64, pos: u32) {
        let i = self.pushed;
        self.ring[self.slot] = (hash, pos);
        self.slot += 1;
        if self.slot == self.w {
            self.slot = 0;
        }
        self.pushed += 1;
        if self.pushed < self.w {
            return;
        }
        let oldest = self.pushed - self.w;
        match self.selected {
            // Robust winnowing: keep the previous choice while it is in the window and still
            // minimal; a smaller newcomer is the new (rightmost) minimum.
            Some((at, h)) if at >= oldest => {
                if hash < h {
                    self.record(i, hash, pos);
                }
            }
            _ => self.rescan(oldest),
        }
    }

    /// Records the rightmost minimum of the window that starts at push `oldest`: the whole
    /// ring once it is full (from the oldest slot on, wrapping), else the pushes so far.
    fn rescan(&mut self, oldest: usize) {
        let (older, newer) = if self.pushed >= self.w {
            let (newer, older) = self.ring.split_at(self.slot);
            (older, newer)
        } else {
            (&self.ring[..self.pushed], &self.ring[..0])
        };
        let mut best: Option<(usize, u64, u32)> = None;
        for (i, &(h, p)) in older.iter().chain(newer).enumerate() {
            if best.is_none_or(|(_, bh, _)| h <= bh) {
                best = Some((oldest + i, h, p));
            }
        }
        if let Some((i, h, p)) = best {
            self.record(i, h, p);
        }
    }

    #[inline]
    fn record(&mut self, index: usize, hash: u64, pos: u32) {
        self.selected = Some((index, hash));
        self.out.push(Winnow { hash, pos });
    }

    /// Finishes: a stream shorter than one window contributes its (rightmost) minimum.
    pub fn finish(mut self) -> Vec<Winnow> {
        if self.pushed > 0 && self.pushed < self.w {
            self.rescan(0);
        }
        self.out
    }
}

/// [`winnow_hashes`] of a slice, appended to `out`: the same selection as [`Winnower`] (a
/// property test checks), with the window a subslice instead of a ring, so a rescan is two
/// passes over contiguous memory (the minimum, then where it last occurs) that the compiler
/// vectorises.
///
/// # Panics
/// If `w == 0`.
pub fn winnow_slice(hashes: &[u64], w: usize, out: &mut Vec<Winnow>) {
    assert!(w >= 1, "winnowing window must be at least 1");
    // The rightmost minimum of `window`, which starts at index `from`.
    let rightmost_min = |window: &[u64], from: usize| {
        let min = window.iter().copied().min().unwrap_or(u64::MAX);
        let at = window.iter().rposition(|&h| h == min).unwrap_or(0);
        (from + at, min)
    };
    if hashes.is_empty() {
        return;
    }
    let first = &hashes[..w.min(hashes.len())];
    let (mut at, mut min) = rightmost_min(first, 0);
    out.push(Winnow {
        hash: min,
        pos: at as u32,
    });
    for (i, &hash) in hashes.iter().enumerate().skip(w) {
        let oldest = i + 1 - w;
        if at >= oldest {
            if hash < min {
                (at, min) = (i, hash);
            } else {
                continue;
            }
        } else {
            (at, min) = rightmost_min(&hashes[oldest..=i], oldest);
        }
        out.push(Winnow {
            hash: min,
            pos: at as u32,
        });
    }
}

/// Winnows a sequence of k-gram hashes whose positions are their indices (0, 1, 2, ...).
pub fn winnow_hashes(hashes: impl IntoIterator<Item = u64>, w: usize) -> Vec<Winnow> {
    let mut winnower = Winnower::new(w);
    for (i, h) in hashes.into_iter().enumerate() {
        winnower.push(h, i as u32);
    }
    winnower.finish()
}

/// Winnows the `k`-character grams of (normalised) `text`; positions are character indices.
/// Uses the same k-gram hashes as [`crate::shingle::char_shingles`].
pub fn winnow_text(text: &str, k: usize, w: usize) -> Vec<Winnow> {
    let mut winnower = Winnower::new(w);
    let mut rolling = Rolling::new(k, CHAR_SHINGLE_SEED);
    let mut count: u32 = 0;
    for c in text.chars() {
        count += 1;
        if let Some(h) = rolling.push(c as u64) {
            winnower.push(h, count - k as u32);
        }
    }
    winnower.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(hashes: &[u64], w: usize) -> Vec<u64> {
        // The set of window minima: what winnowing must cover.
        if hashes.len() < w {
            return hashes.iter().min().into_iter().copied().collect();
        }
        hashes
            .windows(w)
            .map(|win| *win.iter().min().unwrap())
            .collect()
    }

    /// Robust winnowing by its definition, window by window (O(n·w)): the reference the
    /// streaming winnower must equal.
    fn reference(hashes: &[u64], w: usize) -> Vec<Winnow> {
        let mut out: Vec<Winnow> = Vec::new();
        let mut selected: Option<usize> = None;
        let windows = if hashes.len() < w {
            usize::from(!hashes.is_empty())
        } else {
            hashes.len() - w + 1
        };
        for start in 0..windows {
            let window = start..(start + w).min(hashes.len());
            let min = hashes[window.clone()].iter().copied().min().unwrap();
            if let Some(s) = selected
                && window.contains(&s)
                && hashes[s] == min
            {
                continue;
            }
            let rightmost = window.rev().find(|&i| hashes[i] == min).unwrap();
            selected = Some(rightmost);
            out.push(Winnow {
                hash: min,
                pos: rightmost as u32,
            });
        }
        out
    }

    #[test]
    fn streaming_and_sliced_equal_the_reference_definition() {
        for seed in 0..200u64 {
            let n = (crate::hash::fmix64(seed) % 300) as usize;
            let alphabet = 1 + seed % 7; // small alphabets force ties
            let hashes: Vec<u64> = (0..n as u64)
                .map(|i| crate::hash::fmix64(seed * 1000 + i) % alphabet)
                .collect();
            for w in [1, 2, 3, 5, 8, 30] {
                let expected = reference(&hashes, w);
                assert_eq!(
                    winnow_hashes(hashes.iter().copied(), w),
                    expected,
                    "seed {seed} w {w}"
                );
                let mut sliced = Vec::new();
                winnow_slice(&hashes, w, &mut sliced);
                assert_eq!(sliced, expected, "slice, seed {seed} w {w}");
            }
        }
    }

    #[test]
    fn every_window_minimum_is_recorded() {
        let hashes: Vec<u64> = (0..500u64).map(|i| crate::hash::fmix64(i % 37)).collect();
        for w in [1, 2, 4, 10] {
            let got = winnow_hashes(hashes.iter().copied(), w);
            let recorded: std::collections::HashSet<u64> = got.iter().map(|f| f.hash).collect();
            for m in brute_force(&hashes, w) {
                assert!(
                    recorded.contains(&m),
                    "w={w}: window minimum {m} not recorded"
                );
            }
            // Positions increase.
            assert!(got.windows(2).all(|p| p[0].pos < p[1].pos), "w={w}");
        }
    }

    #[test]
    fn repetitive_text_records_few_fingerprints() {
        let text = "哈".repeat(1000);
        let fp = winnow_text(&text, 5, 20);
        // All k-grams are equal: robust winnowing keeps one choice per w-stretch, not one per
        // window.
        assert!(fp.len() <= 1000 / 20 + 2, "{}", fp.len());
        assert!(fp.iter().all(|f| f.hash == fp[0].hash));
    }

    #[test]
    fn density_is_about_two_over_w_plus_one() {
        let text: String = (0..20_000u32)
            .map(|i| {
                char::from_u32(0x4E00 + (crate::hash::fmix64(i as u64) % 3000) as u32).unwrap()
            })
            .collect();
        let fp = winnow_text(&text, 5, 30);
        let density = fp.len() as f64 / 20_000.0;
        assert!((0.045..0.085).contains(&density), "density {density}");
    }

    #[test]
    fn short_streams() {
        assert!(winnow_text("", 5, 10).is_empty());
        assert_eq!(winnow_text("abcdef", 5, 10).len(), 1);
        assert!(winnow_text("abc", 5, 10).is_empty());
    }
}
