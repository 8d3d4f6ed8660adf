//! Stable hash primitives shared by every fingerprint.
//!
//! Nothing here uses `RandomState` or a platform-dependent hash: every value is a pure function
//! of its input and a fixed seed, so fingerprints are identical across runs, machines and thread
//! counts and can be persisted.

/// The MurmurHash3 64-bit finaliser: a bijective mixer with full avalanche.
#[inline]
pub fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

/// Stable 64-bit hash of a byte string (XXH3, whose output is fixed by its specification).
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(bytes, seed)
}

/// Stable 128-bit hash of a byte string (XXH3-128).
#[inline]
pub fn hash_bytes_128(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// Maps a 64-bit hash uniformly onto `0..n` (Lemire's multiply-shift reduction on the high
/// 32 bits, so the low 32 bits stay independent of the result).
#[inline]
pub fn reduce(h: u64, n: usize) -> usize {
    (((h >> 32) * n as u64) >> 32) as usize
}

/// Odd multiplier of the polynomial rolling hash (a 64-bit prime).
const P: u64 = 0x9E37_79B9_7F4A_7C15 | 1;

/// Polynomial rolling hash over a sliding window of `k` symbols, finalised by [`fmix64`].
///
/// `h = Σ (s_i + 1)·P^(k-1-i) mod 2^64` is updated in O(1) per symbol whatever `k` is, then
/// mixed with the seed so that windows with close sums still get unrelated hashes.
#[derive(Debug, Clone)]
pub struct Rolling {
    k: usize,
    p_k: u64,
    seed: u64,
    h: u64,
    ring: Vec<u64>,
    idx: usize,
    filled: usize,
}

impl Rolling {
    /// A window of `k >= 1` symbols.
    ///
    /// # Panics
    /// If `k == 0`.
    pub fn new(k: usize, seed: u64) -> Self {
        assert!(k >= 1, "k-gram length must be at least 1");
        let p_k = (0..k).fold(1u64, |acc, _| acc.wrapping_mul(P));
        Rolling {
            k,
            p_k,
            seed,
            h: 0,
            ring: vec![0; k],
            idx: 0,
            filled: 0,
        }
    }

    /// Window length.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Forgets every symbol pushed so far.
    pub fn reset(&mut self) {
        self.h = 0;
        self.idx = 0;
        self.filled = 0;
    }

    /// Pushes one symbol; returns the hash of the last `k` symbols once `k` have been pushed.
    #[inline]
    pub fn push(&mut self, symbol: u64) -> Option<u64> {
        let s = symbol.wrapping_add(1);
        self.h = self.h.wrapping_mul(P).wrapping_add(s);
        if self.filled == self.k {
            self.h = self
                .h
                .wrapping_sub(self.ring[self.idx].wrapping_mul(self.p_k));
        } else {
            self.filled += 1;
        }
        self.ring[self.idx] = s;
        self.idx += 1;
        if self.idx == self.k {
            self.idx = 0;
        }
        (self.filled == self.k).then(|| fmix64(self.h ^ self.seed))
    }

    /// The hash of everything pushed when fewer than `k` symbols were pushed (so that a text
    /// shorter than one window still has one shingle); `None` if nothing was pushed or a full
    /// window was reached.
    pub fn partial(&self) -> Option<u64> {
        (self.filled > 0 && self.filled < self.k)
            .then(|| fmix64(self.h ^ self.seed ^ (self.filled as u64).wrapping_mul(P)))
    }
}

/// Calls `f` with the hash of every window of `k` consecutive `symbols`, in order: what
/// [`Rolling`] returns when they are pushed one by one, computed over a slice with the
/// state in registers (the leaving symbol is read back from the slice, not kept in a ring).
/// Nothing when fewer than `k` symbols are given.
///
/// The state carried from window to window is the hash of the window's first `k - 1`
/// symbols: a window's hash is that times `P` plus its last symbol, and the next state is
/// the window's hash less its first symbol. So `f` is called at one place in the loop, and
/// inlined there with the caller's test of each hash (a first window apart from the loop was
/// a second call, which kept the compiler from inlining `f`).
///
/// # Panics
/// If `k == 0`.
#[inline(always)]
pub fn for_each_window(symbols: &[u64], k: usize, seed: u64, mut f: impl FnMut(u64)) {
    assert!(k >= 1, "k-gram length must be at least 1");
    if symbols.len() < k {
        return;
    }
    // P^(k-1): the weight of a window's first symbol.
    let p_first = (1..k).fold(1u64, |acc, _| acc.wrapping_mul(P));
    let (head, rest) = symbols.split_at(k - 1);
    let mut h = head.iter().fold(0u64, |h, &s| {
        h.wrapping_mul(P).wrapping_add(s.wrapping_add(1))
    });
    for (&last, &first) in rest.iter().zip(symbols) {
        let window = h.wrapping_mul(P).wrapping_add(last.wrapping_add(1));
        f(fmix64(window ^ seed));
        h = window.wrapping_sub(first.wrapping_add(1).wrapping_mul(p_first));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(symbols: &[u64], seed: u64) -> u64 {
        let h = symbols
            .iter()
            .fold(0u64, |acc, &s| acc.wrapping_mul(P).wrapping_add(s + 1));
        fmix64(h ^ seed)
    }

    #[test]
    fn rolling_equals_direct_hash_of_each_window() {
        let symbols: Vec<u64> = "天下大势分久必合合久必分"
            .chars()
            .map(|c| c as u64)
            .collect();
        for k in 1..6 {
            let mut r = Rolling::new(k, 7);
            for (i, &s) in symbols.iter().enumerate() {
                let got = r.push(s);
                if i + 1 >= k {
                    assert_eq!(got, Some(direct(&symbols[i + 1 - k..=i], 7)), "k={k} i={i}");
                } else {
                    assert_eq!(got, None);
                }
            }
        }
    }

    #[test]
    fn windows_over_a_slice_equal_the_rolling_hash() {
        let symbols: Vec<u64> = (0..200u64).map(|i| fmix64(i) % 5000).collect();
        for k in [1, 2, 5, 6, 17] {
            for len in [0, 1, k - 1, k, k + 1, 200] {
                let symbols = &symbols[..len.min(200)];
                let mut rolling = Rolling::new(k, 42);
                let pushed: Vec<u64> = symbols.iter().filter_map(|&s| rolling.push(s)).collect();
                let mut windows = Vec::new();
                for_each_window(symbols, k, 42, |h| windows.push(h));
                assert_eq!(windows, pushed, "k = {k}, {len} symbols");
            }
        }
    }

    #[test]
    fn reduce_stays_in_range() {
        for h in [0, 1, u64::MAX, 0x8000_0000_0000_0000, 12345678901234567] {
            assert!(reduce(h, 128) < 128);
            assert!(reduce(h, 7) < 7);
        }
    }

    #[test]
    fn fixed_values_do_not_drift() {
        // Persisted fingerprints depend on these exact values.
        assert_eq!(fmix64(0), 0);
        assert_eq!(fmix64(1), 0xb456bcfc34c2cb2c);
        assert_eq!(hash_bytes(b"copyhound", 0), hash_bytes(b"copyhound", 0));
    }
}
