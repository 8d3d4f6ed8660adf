//! MinHash signatures by one-permutation hashing with optimal densification.
//!
//! Classic MinHash hashes every shingle `N` times. One-permutation hashing (OPH; Li, Owen,
//! Zhang 2012) hashes each shingle **once**: the hash's high bits pick one of `N` bins and its
//! low 32 bits compete for that bin's minimum, so a signature costs O(shingles + N) instead of
//! O(shingles × N). Bins that no shingle reached are filled by *optimal densification*
//! (Shrivastava 2017): an empty bin `i` borrows the value of the first non-empty bin in a
//! pseudo-random probe sequence that depends only on `(i, attempt)`, so two documents borrow
//! consistently and the estimator stays unbiased with variance close to `J(1-J)/N`.
//!
//! The fraction of equal values between two signatures estimates their Jaccard similarity;
//! [`MinHash::band_keys`] cuts a signature into LSH bands (see [`lsh_probability`]).
//!
//! Values are 32 bits: a signature of 128 values is 512 bytes, and a chance equality of two
//! values (2^-32) is far below the estimator's own error.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::hash::{fmix64, hash_bytes, reduce};

/// Default number of values in a signature.
pub const DEFAULT_MINHASH_VALUES: usize = 128;
/// Default seed of the MinHash hash family.
pub const DEFAULT_MINHASH_SEED: u64 = 0x6d69_6e68_6173_6821; // "minhash!"

/// Computes MinHash signatures of a fixed size and seed. Cheap to copy and share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinHasher {
    n: usize,
    seed: u64,
}

impl Default for MinHasher {
    fn default() -> Self {
        MinHasher::new(DEFAULT_MINHASH_VALUES, DEFAULT_MINHASH_SEED)
    }
}

impl MinHasher {
    /// A hasher producing `n` values.
    ///
    /// # Panics
    /// If `n` is 0 or larger than 65,536.
    pub fn new(n: usize, seed: u64) -> Self {
        assert!(
            (1..=65_536).contains(&n),
            "minhash size {n} must be between 1 and 65536"
        );
        MinHasher { n, seed }
    }

    /// Number of values per signature.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false: a hasher has at least one value.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Starts an incremental signature (feed shingle hashes with [`MinHashBuilder::add`]).
    pub fn builder(&self) -> MinHashBuilder {
        MinHashBuilder {
            hasher: *self,
            bins: vec![u64::MAX; self.n],
        }
    }

    /// The signature of a set of shingle hashes (repeats do not matter).
    pub fn hash(&self, shingles: impl IntoIterator<Item = u64>) -> MinHash {
        let mut b = self.builder();
        for h in shingles {
            b.add(h);
        }
        b.finish()
    }
}

/// An incremental MinHash signature.
#[derive(Debug, Clone)]
pub struct MinHashBuilder {
    hasher: MinHasher,
    /// Per bin the smallest 32-bit value seen, or `u64::MAX` while empty (a value is at
    /// most `u32::MAX`, so a builder that saw a shingle has a bin below `u64::MAX`).
    bins: Vec<u64>,
}

impl MinHashBuilder {
    /// Adds one shingle hash.
    #[inline]
    pub fn add(&mut self, shingle: u64) {
        let h = fmix64(shingle ^ self.hasher.seed);
        let bin = reduce(h, self.hasher.n);
        let value = h & 0xFFFF_FFFF;
        // Safe indexing: `reduce` returns a value below `n`. Branch-free: which shingle lowers
        // a bin is a coin toss the branch predictor loses.
        let slot = &mut self.bins[bin];
        *slot = (*slot).min(value);
    }

    /// Densifies the empty bins and returns the signature. A builder that saw no shingle
    /// returns the empty signature.
    pub fn finish(self) -> MinHash {
        if self.bins.iter().all(|&v| v == u64::MAX) {
            return MinHash { values: Vec::new() };
        }
        let n = self.hasher.n;
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            let v = self.bins[i];
            if v != u64::MAX {
                values.push(v as u32);
                continue;
            }
            // Probe sequence of bin i: depends on (seed, i, attempt) only.
            let mut attempt: u64 = 1;
            loop {
                let probe = fmix64(self.hasher.seed ^ ((i as u64) << 32 | attempt));
                let j = reduce(probe, n);
                let borrowed = self.bins[j];
                if borrowed != u64::MAX {
                    values.push(borrowed as u32);
                    break;
                }
                attempt += 1;
            }
        }
        MinHash { values }
    }
}

/// A MinHash signature: `N` 32-bit values, or none for a text without shingles.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MinHash {
    values: Vec<u32>,
}

impl MinHash {
    /// Rebuilds a signature from stored values.
    pub fn from_values(values: Vec<u32>) -> Self {
        MinHash { values }
    }

    /// The values (empty for the empty signature).
    pub fn values(&self) -> &[u32] {
        &self.values
    }

    /// Whether this is the signature of an empty text.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Estimated Jaccard similarity: the share of positions where both signatures agree.
    /// 0 when either is empty or their sizes differ (they were made by different hashers).
    pub fn jaccard(&self, other: &MinHash) -> f64 {
        if self.values.is_empty() || self.values.len() != other.values.len() {
            return 0.0;
        }
        let equal = self
            .values
            .iter()
            .zip(&other.values)
            .filter(|(a, b)| a == b)
            .count();
        equal as f64 / self.values.len() as f64
    }

    /// The LSH band keys: band `b` is the stable hash of values `b·rows .. (b+1)·rows`, so
    /// two signatures share a key in band `b` exactly when those `rows` values all agree.
    /// Empty for the empty signature.
    ///
    /// # Panics
    /// If `bands × rows` exceeds the signature size, or either is 0.
    pub fn band_keys(&self, bands: usize, rows: usize) -> Vec<u64> {
        if self.values.is_empty() {
            return Vec::new();
        }
        assert!(
            bands > 0 && rows > 0 && bands * rows <= self.values.len(),
            "{bands} bands × {rows} rows do not fit a signature of {} values",
            self.values.len()
        );
        let mut buf = Vec::with_capacity(rows * 4);
        (0..bands)
            .map(|b| {
                buf.clear();
                for v in &self.values[b * rows..(b + 1) * rows] {
                    buf.extend_from_slice(&v.to_le_bytes());
                }
                hash_bytes(&buf, b as u64)
            })
            .collect()
    }
}

impl Serialize for MinHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Fixed 4 bytes a value: varints would spend 5 bytes on a random 32-bit value.
        let mut bytes = Vec::with_capacity(self.values.len() * 4);
        for v in &self.values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        s.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for MinHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_byte_buf(crate::serde_util::BytesVisitor)
            .and_then(|bytes| {
                if bytes.len() % 4 != 0 {
                    return Err(serde::de::Error::custom(format!(
                        "minhash byte length {} is not a multiple of 4",
                        bytes.len()
                    )));
                }
                Ok(MinHash {
                    values: bytes
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                })
            })
    }
}

/// Probability that two signatures with Jaccard similarity `s` share at least one LSH band
/// key: the S-curve `1 - (1 - s^rows)^bands`.
pub fn lsh_probability(s: f64, bands: usize, rows: usize) -> f64 {
    1.0 - (1.0 - s.powi(rows as i32)).powi(bands as i32)
}

/// The similarity at which the S-curve is steepest, about `(1/bands)^(1/rows)`: pairs above it
/// are likely candidates, pairs below it unlikely.
pub fn lsh_threshold(bands: usize, rows: usize) -> f64 {
    (1.0 / bands as f64).powf(1.0 / rows as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_sets_estimate_one() {
        let m = MinHasher::default();
        let a = m.hash(0..1000u64);
        let b = m.hash((0..1000u64).rev());
        assert_eq!(a, b);
        assert_eq!(a.jaccard(&b), 1.0);
        assert_eq!(a.values().len(), 128);
    }

    #[test]
    fn empty_and_tiny_sets() {
        let m = MinHasher::default();
        let e = m.hash(std::iter::empty());
        assert!(e.is_empty());
        assert_eq!(e.jaccard(&e), 0.0);
        // One shingle fills every bin through densification.
        let one = m.hash([42]);
        assert_eq!(one.values().len(), 128);
        assert!(one.values().iter().all(|&v| v == one.values()[0]));
    }

    #[test]
    fn band_keys_agree_where_values_agree() {
        let m = MinHasher::default();
        let a = m.hash(0..500u64);
        let mut values = a.values().to_vec();
        values[0] ^= 1; // disturb band 0 only
        let b = MinHash::from_values(values);
        let (ka, kb) = (a.band_keys(16, 8), b.band_keys(16, 8));
        assert_ne!(ka[0], kb[0]);
        assert_eq!(ka[1..], kb[1..]);
    }

    #[test]
    fn s_curve() {
        assert!((lsh_probability(1.0, 16, 8) - 1.0).abs() < 1e-12);
        assert_eq!(lsh_probability(0.0, 16, 8), 0.0);
        let t = lsh_threshold(16, 8);
        assert!((0.6..0.75).contains(&t), "{t}");
    }

    #[test]
    fn serde_round_trip_is_compact() {
        let a = MinHasher::default().hash(0..100u64);
        let bytes = postcard::to_allocvec(&a).unwrap();
        assert_eq!(bytes.len(), 2 + 512);
        assert_eq!(postcard::from_bytes::<MinHash>(&bytes).unwrap(), a);
    }
}
