//! SimHash-64 (Charikar 2002) over weighted tokens.
//!
//! Every token is hashed to 64 bits; bit `i` of the fingerprint is set when the weights of the
//! tokens whose hash has bit `i` set outweigh those where it is clear. Similar documents get
//! fingerprints a small Hamming distance apart; unrelated ones sit near 32.
//! Weights come from [`crate::Segmenter::weighted_tokens`] (TF-IDF).

use crate::hash::hash_bytes;

/// Seed of token hashes.
pub const SIMHASH_SEED: u64 = 0x7369_6d68_6173_6836; // "simhash6"

/// The SimHash of `(token, weight)` pairs. Tokens with a non-positive or non-finite weight are
/// ignored; no tokens give 0.
pub fn simhash<'a>(tokens: impl IntoIterator<Item = (&'a str, f64)>) -> u64 {
    let mut acc = [0f64; 64];
    for (token, weight) in tokens {
        if !(weight.is_finite() && weight > 0.0) {
            continue;
        }
        let h = hash_bytes(token.as_bytes(), SIMHASH_SEED);
        for (bit, slot) in acc.iter_mut().enumerate() {
            // Branch-free: +w when the bit is set, -w otherwise.
            let sign = ((h >> bit) & 1) as f64 * 2.0 - 1.0;
            *slot += sign * weight;
        }
    }
    acc.iter().enumerate().fold(
        0u64,
        |fp, (bit, &v)| if v > 0.0 { fp | 1 << bit } else { fp },
    )
}

/// Number of differing bits.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_tokens_give_identical_hashes() {
        let t = [("天下", 2.0), ("大势", 1.5), ("合久必分", 3.0)];
        assert_eq!(simhash(t), simhash(t));
        assert_eq!(hamming(simhash(t), simhash(t)), 0);
    }

    #[test]
    fn order_does_not_matter_and_bad_weights_are_ignored() {
        let a = [("a", 1.0), ("b", 2.0), ("c", 0.5)];
        let b = [
            ("c", 0.5),
            ("nan", f64::NAN),
            ("a", 1.0),
            ("neg", -3.0),
            ("b", 2.0),
        ];
        assert_eq!(simhash(a), simhash(b));
        assert_eq!(simhash([]), 0);
    }

    #[test]
    fn hamming_counts_bits() {
        assert_eq!(hamming(0, u64::MAX), 64);
        assert_eq!(hamming(0b1010, 0b0110), 2);
    }
}
