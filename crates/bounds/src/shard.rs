//! A shard spec `K/N` and the stable hash that puts a work in a shard.
//!
//! [`Shard::of`] is part of the deployment's data layout: shard workers of one deployment
//! (and of the next version) must agree on it, so it never changes. It is the SplitMix64
//! finaliser ("fmix64" of MurmurHash3's family, Stafford's variant 13) of the id's bits,
//! reduced mod N:
//!
//! ```text
//! z = id as u64
//! z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
//! z = (z ^ (z >> 27)) * 0x94d049bb133111eb
//! z =  z ^ (z >> 31)
//! shard = z mod N
//! ```
//!
//! ```
//! let shard: bounds::Shard = "1/4".parse().unwrap();
//! assert_eq!((shard.index(), shard.count()), (1, 4));
//! assert_eq!(bounds::Shard::of(42, 4), 2);
//! assert!(bounds::Shard::ALL.holds(42));
//! ```

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (0 ≤ index < count); [`Shard::ALL`] is the one shard of an
/// unsharded deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// Everything: shard 0 of 1.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`; `None` unless 0 ≤ index < count.
    #[must_use]
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (index < count).then_some(Shard { index, count })
    }

    /// K, 0-based.
    #[must_use]
    pub fn index(self) -> u32 {
        self.index
    }

    /// N.
    #[must_use]
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether this is [`Shard::ALL`] (one shard holds everything).
    #[must_use]
    pub fn is_all(self) -> bool {
        self.count == 1
    }

    /// The shard (of `count`, at least 1) that the work with id `id` belongs to; stable
    /// across versions (the module documentation gives the function).
    #[must_use]
    pub fn of(id: i64, count: u32) -> u32 {
        let mut z = id as u64;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // The remainder is below `count`, a u32.
        (z % u64::from(count.max(1))) as u32
    }

    /// Whether the work with id `id` is in this shard.
    #[must_use]
    pub fn holds(self, id: i64) -> bool {
        Shard::of(id, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with 0 ≤ K < N, e.g. `0/4`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("{s:?}: give K/N, e.g. 0/4"))?;
        let k: u32 = k
            .trim()
            .parse()
            .map_err(|_| format!("{s:?}: K is not a number"))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("{s:?}: N is not a number"))?;
        Shard::new(k, n).ok_or_else(|| format!("{s:?}: give 0 <= K < N"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!("0/1".parse::<Shard>(), Ok(Shard::ALL));
        assert_eq!("3/4".parse::<Shard>(), Ok(Shard::new(3, 4).unwrap()));
        assert_eq!("3/4".parse::<Shard>().unwrap().to_string(), "3/4");
        for bad in ["", "1", "4/4", "5/4", "0/0", "-1/4", "a/4", "1/b", "1/4/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad:?}");
        }
    }

    /// Pinned: the hash decides which machine holds a work, so a change here would move
    /// works between shards of a running deployment.
    #[test]
    fn the_hash_of_a_work_never_changes() {
        let of_8: Vec<u32> = (1..=16).map(|id| Shard::of(id, 8)).collect();
        assert_eq!(of_8, PINNED_OF_8);
        assert_eq!(Shard::of(0, 1), 0);
        assert_eq!(Shard::of(i64::MAX, 1), 0);
        assert_eq!(Shard::of(42, 0), 0, "a count of 0 is read as 1");
    }

    const PINNED_OF_8: [u32; 16] = [5, 2, 0, 4, 4, 4, 4, 0, 7, 1, 5, 4, 1, 1, 1, 5];

    #[test]
    fn each_work_is_in_exactly_one_shard_and_shards_are_even() {
        let n = 5;
        let mut sizes = [0usize; 5];
        for id in 1..=10_000i64 {
            let holders: Vec<u32> = (0..n)
                .filter(|&k| Shard::new(k, n).unwrap().holds(id))
                .collect();
            assert_eq!(holders.len(), 1, "work {id}");
            sizes[holders[0] as usize] += 1;
        }
        for size in sizes {
            assert!((1800..=2200).contains(&size), "{sizes:?}");
        }
    }
}
