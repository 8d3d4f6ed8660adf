//! SimHash-64 (Charikar 2002) over weighted tokens.
//!
//! Every token is hashed to 64 bits ([`token_hash`]); bit `i` of the fingerprint is set when
//! the weights of the tokens whose hash has bit `i` set outweigh those where it is clear.
//! Similar documents get fingerprints a small Hamming distance apart; unrelated ones sit near
//! 32. Weights come from [`crate::Segmenter`] (TF-IDF).
//!
//! Weights are summed as integers ([`SimHasher`]), so the result is exact and does not depend
//! on the order the tokens arrive in: a floating-point sum would, and near-ties could then
//! flip a bit between two orders of the same words.

use crate::hash::hash_bytes;

/// Seed of token hashes.
pub const SIMHASH_SEED: u64 = 0x7369_6d68_6173_6836; // "simhash6"

/// Fixed-point scale of floating-point weights given to [`simhash`]: a weight `w` counts as
/// `round(w × 2^WEIGHT_FRACTION_BITS)`.
pub const WEIGHT_FRACTION_BITS: u32 = 20;

/// The 64-bit hash of a token.
#[inline]
pub fn token_hash(token: &str) -> u64 {
    hash_bytes(token.as_bytes(), SIMHASH_SEED)
}

/// An exact, order-independent SimHash accumulator over integer weights.
///
/// Bit `i` of the result is set when the tokens whose hash sets it carry more than half of
/// all weight. Instead of adding every token's weight into 64 per-bit sums, the accumulator
/// adds it into one of 16 sums per 4-bit digit of the hash (16 additions a token instead of
/// 64) and folds those into per-bit sums once, in [`SimHasher::finish`]. Nibbles rather than
/// bytes: a chapter has a few hundred distinct words, and 256 sums per byte would cost more
/// to clear and fold (16 KiB) than they save. The sums are `u64`: callers keep the sum of all
/// weights below 2^63 (the segmenter's TF × IDF weights stay below 2^56 for any text of fewer
/// than 2^32 words).
#[derive(Debug, Clone, Default)]
pub struct SimHasher {
    /// `by_nibble[p][v]`: total weight of the tokens whose hash has nibble `p` equal to `v`.
    by_nibble: [[u64; 16]; 16],
    total: u64,
}

impl SimHasher {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a token by its [`token_hash`] with an integer weight.
    #[inline]
    pub fn add(&mut self, hash: u64, weight: u64) {
        self.total += weight;
        for (p, sums) in self.by_nibble.iter_mut().enumerate() {
            sums[(hash >> (4 * p)) as usize & 15] += weight;
        }
    }

    /// The fingerprint: bit `i` set when its weight is more than half the total (0 when
    /// nothing was added).
    pub fn finish(&self) -> u64 {
        let mut fp = 0u64;
        for (p, sums) in self.by_nibble.iter().enumerate() {
            for bit in 0..4 {
                // The weight of every nibble value with this bit set.
                let set: u64 = (0..16).filter(|v| v >> bit & 1 == 1).map(|v| sums[v]).sum();
                // set > total − set, without overflow: set ≤ total < 2^63.
                if set > self.total - set {
                    fp |= 1 << (4 * p + bit);
                }
            }
        }
        fp
    }
}

/// The fixed-point integer form of a floating-point weight (see [`WEIGHT_FRACTION_BITS`]);
/// non-finite and non-positive weights count as 0, huge ones saturate at 2^40.
#[inline]
pub fn fixed_weight(weight: f64) -> u64 {
    const MAX: f64 = (1u64 << 40) as f64;
    if weight.is_finite() && weight > 0.0 {
        (weight * (1u64 << WEIGHT_FRACTION_BITS) as f64)
            .round()
            .min(MAX) as u64
    } else {
        0
    }
}

/// The SimHash of `(token, weight)` pairs, weights in [fixed point](fixed_weight). Tokens
/// with a non-positive or non-finite weight are ignored; no tokens give 0. Weights above
/// 2^20 saturate, and at most 2^23 tokens of that weight fit; weights are relative, so scale
/// them down if there are more.
pub fn simhash<'a>(tokens: impl IntoIterator<Item = (&'a str, f64)>) -> u64 {
    let mut acc = SimHasher::new();
    for (token, weight) in tokens {
        let w = fixed_weight(weight);
        if w > 0 {
            acc.add(token_hash(token), w);
        }
    }
    acc.finish()
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
    fn one_token_gives_its_own_hash() {
        assert_eq!(simhash([("天下", 0.25)]), token_hash("天下"));
    }

    #[test]
    fn a_bit_follows_the_heavier_side() {
        // Two tokens: each bit where they differ follows the heavier one.
        let (a, b) = (token_hash("a"), token_hash("b"));
        let fp = simhash([("a", 3.0), ("b", 1.0)]);
        assert_eq!(fp, a);
        let fp = simhash([("a", 1.0), ("b", 3.0)]);
        assert_eq!(fp, b);
        // An exact tie sets only the bits both agree on.
        assert_eq!(simhash([("a", 1.0), ("b", 1.0)]), a & b);
    }

    #[test]
    fn integer_sums_ignore_order_where_floats_would_not() {
        // 0.1 + 0.2 + 0.3 differs from 0.3 + 0.2 + 0.1 in floating point; the integer
        // accumulator gives one answer for every order.
        let words = [("x", 0.1), ("y", 0.2), ("z", 0.3), ("w", 0.6)];
        let mut reversed = words;
        reversed.reverse();
        assert_eq!(simhash(words), simhash(reversed));
    }

    #[test]
    fn fixed_weights_saturate_and_drop_bad_values() {
        assert_eq!(fixed_weight(1.0), 1 << WEIGHT_FRACTION_BITS);
        assert_eq!(fixed_weight(f64::INFINITY), 0);
        assert_eq!(fixed_weight(-1.0), 0);
        assert_eq!(fixed_weight(1e300), 1 << 40);
    }

    #[test]
    fn nibble_sums_equal_per_bit_sums() {
        // The by-definition accumulator: one sum per bit.
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = crate::hash::fmix64(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
            state
        };
        for n in [1, 2, 3, 10, 1000] {
            let tokens: Vec<(u64, u64)> = (0..n).map(|_| (next(), next() >> 44)).collect();
            let mut acc = SimHasher::new();
            let mut per_bit = [0i128; 64];
            for &(h, w) in &tokens {
                acc.add(h, w);
                for (bit, sum) in per_bit.iter_mut().enumerate() {
                    *sum += if h >> bit & 1 == 1 {
                        w as i128
                    } else {
                        -(w as i128)
                    };
                }
            }
            let expected = per_bit
                .iter()
                .enumerate()
                .fold(0u64, |fp, (bit, &s)| if s > 0 { fp | 1 << bit } else { fp });
            assert_eq!(acc.finish(), expected, "{n} tokens");
        }
    }

    #[test]
    fn hamming_counts_bits() {
        assert_eq!(hamming(0, u64::MAX), 64);
        assert_eq!(hamming(0b1010, 0b0110), 2);
    }
}
