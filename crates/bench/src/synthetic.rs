//! Synthetic chapters: variants of real chapters' fingerprints and texts, for measuring the
//! matcher's index at a scale the corpus cannot reach (`bench load`, `examples/scale.rs`,
//! `benches/matcher.rs`).

use std::borrow::Cow;
use std::collections::HashSet;

use fingerprint::ChapterFingerprint;
use fingerprint::hash::fmix64;
use foldhash::HashMap;
use matcher::{ChapterId, ChapterSource, MemorySource, SourceError};

/// Ids of synthetic variants are `variant · SYNTHETIC_STRIDE + base id` (base ids stay below
/// the stride; variant 0 is the real chapter).
pub const SYNTHETIC_STRIDE: i64 = 1 << 32;

/// Winnowing hashes (text and pinyin) that occur in at least two of `fingerprints`: the common
/// phrasing that synthetic variants keep, so that posting lists have the long tail real text
/// has.
pub fn common_hashes(fingerprints: &[ChapterFingerprint]) -> HashSet<u64> {
    let mut df: HashMap<u64, u32> = HashMap::default();
    for fp in fingerprints {
        let mut seen: Vec<u64> = fp
            .winnow
            .iter()
            .chain(&fp.pinyin_winnow)
            .map(|w| w.hash)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        for h in seen {
            *df.entry(h).or_default() += 1;
        }
    }
    df.into_iter()
        .filter(|&(_, n)| n >= 2)
        .map(|(h, _)| h)
        .collect()
}

/// Synthetic chapter number `variant` (≥ 1) made from a real chapter's fingerprint, for
/// measuring the index at a scale the corpus cannot reach: the same number of fingerprints of
/// every kind at the same positions, but with every hash outside `common` (and every MinHash
/// value, sentence hash and the SimHash) replaced by a hash of it and the variant number. It
/// stands for a different chapter of the same length and language, sharing only common
/// phrasing with the others; [`synthetic_text`] is its text for verification.
pub fn synthetic_variant(
    base: &ChapterFingerprint,
    variant: u64,
    common: &HashSet<u64>,
) -> ChapterFingerprint {
    let salt = fmix64(variant.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let remap = |h: u64| {
        if common.contains(&h) {
            h
        } else {
            fmix64(h ^ salt)
        }
    };
    let winnows = |ws: &[fingerprint::Winnow]| {
        ws.iter()
            .map(|w| fingerprint::Winnow {
                hash: remap(w.hash),
                pos: w.pos,
            })
            .collect()
    };
    let mut summary = base.summary.clone();
    summary.simhash = fmix64(summary.simhash ^ salt);
    summary.minhash = fingerprint::MinHash::from_values(
        summary
            .minhash
            .values()
            .iter()
            .map(|&v| fmix64(v as u64 ^ salt) as u32)
            .collect(),
    );
    for h in &mut summary.sentences.hashes {
        *h = fmix64(*h ^ salt);
    }
    summary.sentences.signature ^= salt as u128;
    ChapterFingerprint {
        summary,
        winnow: winnows(&base.winnow),
        pinyin_winnow: winnows(&base.pinyin_winnow),
    }
}

/// The text a synthetic variant stands for: the base text with its Han characters and Latin
/// letters enciphered by a permutation that depends on the variant (it shares no passage
/// with the base, so verifying a page against it finds nothing, as for an unrelated chapter).
pub fn synthetic_text(base: &str, variant: u64) -> String {
    // 20,992 CJK unified ideographs (2^9 · 41): an odd multiplier not divisible by 41
    // permutes them.
    const HAN: u32 = 0x9FFF - 0x4E00 + 1;
    let shift = (fmix64(variant) % HAN as u64) as u32;
    base.chars()
        .map(|c| match c {
            '\u{4E00}'..='\u{9FFF}' => {
                let i = (c as u32 - 0x4E00).wrapping_mul(7919).wrapping_add(shift) % HAN;
                char::from_u32(0x4E00 + i).unwrap_or(c)
            }
            'a'..='z' => char::from(b'a' + ((c as u8 - b'a') as u32 + shift % 25 + 1) as u8 % 26),
            'A'..='Z' => char::from(b'A' + ((c as u8 - b'A') as u32 + shift % 25 + 1) as u8 % 26),
            _ => c,
        })
        .collect()
}

/// The [`ChapterSource`] of an index of real chapters and their synthetic variants: real
/// chapters (variant 0) come from `bases`, variants from [`synthetic_text`].
#[derive(Debug, Clone, Default)]
pub struct SyntheticSource {
    /// The real chapters' texts, by id.
    pub bases: MemorySource,
}

impl ChapterSource for SyntheticSource {
    fn chapter_text(&self, chapter: ChapterId) -> Result<Option<Cow<'_, str>>, SourceError> {
        let (variant, base) = (
            chapter.0 / SYNTHETIC_STRIDE,
            ChapterId(chapter.0 % SYNTHETIC_STRIDE),
        );
        Ok(self.bases.get(base).map(|text| {
            if variant == 0 {
                Cow::Borrowed(text)
            } else {
                Cow::Owned(synthetic_text(text, variant as u64))
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use fingerprint::Fingerprinter;

    use super::*;

    #[test]
    fn synthetic_variants_keep_shape_and_common_hashes_only() {
        let f = Fingerprinter::new(fingerprint::FingerprintSettings::default()).unwrap();
        let a =
            f.fingerprint(&"话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。".repeat(20));
        let b = f.fingerprint(&format!(
            "{}{}",
            "他在做事，她再作诗，它在那里。".repeat(20),
            "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。".repeat(4)
        ));
        let common = common_hashes(&[a.clone(), b.clone()]);
        assert!(!common.is_empty());
        let v = synthetic_variant(&a, 3, &common);
        assert_eq!(v.winnow.len(), a.winnow.len());
        assert_eq!(v.summary.minhash.values().len(), 128);
        for (x, y) in v.winnow.iter().zip(&a.winnow) {
            assert_eq!(x.pos, y.pos);
            assert_eq!(x.hash == y.hash, common.contains(&y.hash));
        }
        assert_ne!(v.summary.simhash, a.summary.simhash);
        let text = "话说天下大势 Alice";
        let enciphered = synthetic_text(text, 3);
        assert_eq!(enciphered.chars().count(), text.chars().count());
        assert!(
            enciphered
                .chars()
                .zip(text.chars())
                .filter(|(x, y)| x == y)
                .count()
                <= 2
        );
    }
}
