//! A packed multimap from 32-bit keys to chapter keys: the storage of the LSH buckets, the
//! sentence map and the winnowing postings.
//!
//! Keys are the top 32 bits of a 64-bit fingerprint hash (`(hash >> 32) as u32`): at a
//! billion postings two unrelated hashes share a key with probability 2^-32 per pair, far
//! below what verification would notice, and a posting stays small.
//!
//! The table has two parts:
//!
//! * the **packed** part, sorted by key: a directory of `2^d + 1` offsets indexed by the key's
//!   high `d` bits (16 to 24, so that buckets hold 32 to 64 postings), then per posting only
//!   the key's `32 − d` low bits (the *tag*) and the value in `⌈log2 (largest value + 1)⌉`
//!   bits, each bit-packed ([`BitArray`]). At a million chapters that is 11 + 20 bits and
//!   about 0.8 bit of directory: 4 bytes a posting, where a `u16` tag and a `u32` value took
//!   6. A lookup reads one directory slot and binary-searches the bucket's tags, one or two
//!   cache lines.
//! * a small **delta** of postings added since the last merge, a hash map of key → chain of
//!   values, so single chapters can be added without rewriting the packed part.
//!
//! [`PostingTable::merge`] folds the delta into the packed part and drops the postings of
//! removed chapters in one linear pass; [`PostingBuilder`] builds a large table in bounded
//! memory by merging sorted runs.
//!
//! # Why fixed widths, not delta codes
//!
//! The directory is the high part of an Elias–Fano code of the sorted keys, and the tag its
//! low part; the alternatives measured against it at a million chapters (83 million text
//! postings, 2^21 buckets) were:
//!
//! * byte varints of the key gaps (about 52 on average, one byte) and of the values (three
//!   bytes): 32 bits a posting, no smaller than 11 + 20 + 0.8, and a bucket must be decoded
//!   from its start instead of binary-searched;
//! * delta-coding the values within a key: most keys name one chapter (lists average 1.03
//!   values), so there is nothing to delta;
//! * Rice-coded key gaps (about 7 bits instead of 11 + 0.8): 4 bits a posting less, at the
//!   cost of a sequential decode of the bucket on every lookup; left for when the chapter
//!   key, not the key, is the larger part.

use foldhash::HashMap;

use crate::packed::{BitArray, bits_for};
use crate::snapshot::{Reader, SnapshotError, Writer, check_directory, malformed};

/// The fewest key bits the directory resolves (so that the tag, the low 16 bits, completes
/// the key), and the most (a 64 MiB directory).
const MIN_DIR_BITS: u32 = 16;
const MAX_DIR_BITS: u32 = 24;

/// Directory bits for `n` postings: buckets of 32 to 64 postings on average (one or two cache
/// lines of tags to search), for about 0.1 byte a posting.
fn dir_bits_for(n: usize) -> u32 {
    let ceil_log2 = usize::BITS - n.saturating_sub(1).leading_zeros();
    ceil_log2
        .saturating_sub(6)
        .clamp(MIN_DIR_BITS, MAX_DIR_BITS)
}
/// The low `32 - dir_bits` bits of a key: its tag.
#[inline]
fn low_mask(dir_bits: u32) -> u32 {
    u32::MAX >> dir_bits
}

/// End-of-chain marker in the delta.
const NIL: u32 = u32::MAX;

/// Packs a (key, value) pair so that sorting the packed numbers sorts by key, then value.
#[inline]
pub(crate) fn pack(key: u32, value: u32) -> u64 {
    (key as u64) << 32 | value as u64
}

/// The key under which a 64-bit fingerprint hash is stored.
#[inline]
pub(crate) fn key_of(hash: u64) -> u32 {
    (hash >> 32) as u32
}

#[derive(Debug, Clone, Default)]
struct Delta {
    /// Key → index of the newest entry of its chain.
    heads: HashMap<u32, u32>,
    /// (value, index of the next older entry or NIL).
    entries: Vec<(u32, u32)>,
}

/// A multimap `u32 → u32` (fingerprint key → chapter key); see the [module docs](self).
#[derive(Debug, Clone, Default)]
pub(crate) struct PostingTable {
    /// Key bits the directory resolves (`MIN_DIR_BITS..=MAX_DIR_BITS` once built).
    dir_bits: u32,
    /// `dir[b]..dir[b + 1]` is the range of postings whose key's high `dir_bits` bits are `b`;
    /// empty while the packed part is empty.
    dir: Vec<u32>,
    /// Low `32 - dir_bits` bits of each posting's key, ascending within a bucket.
    tags: BitArray,
    /// The posting values, ascending within one key.
    values: BitArray,
    delta: Delta,
}

impl PostingTable {
    /// Postings in the packed part.
    pub(crate) fn packed_len(&self) -> usize {
        self.values.len()
    }

    /// Postings in the delta.
    pub(crate) fn delta_len(&self) -> usize {
        self.delta.entries.len()
    }

    /// All postings, dead ones included until the next merge.
    pub(crate) fn len(&self) -> usize {
        self.packed_len() + self.delta_len()
    }

    /// Heap bytes held (capacities, not lengths).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.dir.capacity() * 4
            + self.tags.memory_bytes()
            + self.values.memory_bytes()
            + self.delta.entries.capacity() * 8
            // hashbrown: key and value, one control byte per bucket; about 8/7 buckets a slot.
            + self.delta.heads.capacity() * 9
    }

    /// The positions in the packed part of the postings of `key`.
    fn packed(&self, key: u32) -> std::ops::Range<usize> {
        if self.dir.is_empty() {
            return 0..0;
        }
        let bucket = (key >> (32 - self.dir_bits)) as usize;
        let (lo, hi) = (self.dir[bucket] as usize, self.dir[bucket + 1] as usize);
        // Within a bucket the key's high bits are equal, so ordering by key is ordering by tag.
        let tag = u64::from(key & low_mask(self.dir_bits));
        let start = self.first_tag_not(lo, hi, |t| t < tag);
        let end = self.first_tag_not(start, hi, |t| t <= tag);
        start..end
    }

    /// The first position in `lo..hi` whose tag fails `before` (which must hold for a prefix
    /// of the range), or `hi`.
    fn first_tag_not(&self, mut lo: usize, mut hi: usize, before: impl Fn(u64) -> bool) -> usize {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(self.tags.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Calls `f` with the key of every posting, dead ones included (a key once per posting).
    pub(crate) fn for_each_key(&self, mut f: impl FnMut(u32)) {
        for (bucket, range) in self.dir.windows(2).enumerate() {
            let high = if self.dir_bits == 0 {
                0
            } else {
                (bucket as u32) << (32 - self.dir_bits)
            };
            for i in range[0] as usize..range[1] as usize {
                f(high | self.tags.get(i) as u32);
            }
        }
        self.delta.heads.keys().for_each(|&k| f(k));
    }

    fn packed_values(&self, key: u32) -> impl Iterator<Item = u32> + '_ {
        // Values were packed from `u32`s.
        self.packed(key).map(|i| self.values.get(i) as u32)
    }

    fn delta_chain(&self, key: u32) -> impl Iterator<Item = u32> + '_ {
        let mut next = self.delta.heads.get(&key).copied().unwrap_or(NIL);
        std::iter::from_fn(move || {
            if next == NIL {
                return None;
            }
            let (value, older) = self.delta.entries[next as usize];
            next = older;
            Some(value)
        })
    }

    /// Calls `f` with every value stored under `key` that passes `live`, unless more than `max`
    /// do: then returns `false` without calling it. `dead` bounds the values that fail `live`
    /// (each removed chapter appears at most once under a key). A list longer than `max` but
    /// not than `max + dead` is counted value by value (stopping at `max + 1` live ones), so
    /// removed chapters awaiting compaction never change which keys are skipped, and neither a
    /// short list nor a far too long one costs anything extra.
    pub(crate) fn for_each_live_capped(
        &self,
        key: u32,
        max: usize,
        dead: usize,
        live: &dyn Fn(u32) -> bool,
        mut f: impl FnMut(u32),
    ) -> bool {
        let packed = self.packed(key);
        let has_delta = !self.delta.heads.is_empty();
        let raw = packed.len()
            + if has_delta {
                self.delta_chain(key).count()
            } else {
                0
            };
        if raw > max.saturating_add(dead) {
            return false;
        }
        if raw > max {
            let values = self.packed_values(key).chain(self.delta_chain(key));
            if values.filter(|&v| live(v)).nth(max).is_some() {
                return false;
            }
        }
        for v in self.packed_values(key).chain(self.delta_chain(key)) {
            if live(v) {
                f(v);
            }
        }
        true
    }

    /// Appends the packed part to a snapshot.
    ///
    /// # Panics
    /// If the delta is not empty (merge it first).
    pub(crate) fn write(&self, w: &mut Writer) {
        assert!(
            self.delta.entries.is_empty(),
            "a snapshot holds merged tables only"
        );
        w.u32(self.dir_bits);
        w.u32s(self.dir.iter().copied());
        self.tags.write(w);
        self.values.write(w);
    }

    /// Reads what [`PostingTable::write`] wrote.
    pub(crate) fn read(r: &mut Reader<'_>, what: &str) -> Result<Self, SnapshotError> {
        let dir_bits = r.u32()?;
        let dir = r.u32s()?;
        let tags = BitArray::read(r, what)?;
        let values = BitArray::read(r, what)?;
        check_directory(what, &dir, dir_bits, values.len())?;
        let bits_ok = dir.is_empty() || (MIN_DIR_BITS..=MAX_DIR_BITS).contains(&dir_bits);
        let tags_ok = 32u32.checked_sub(dir_bits) == Some(tags.width()) || tags.len() == 0;
        if !bits_ok || !tags_ok || tags.len() != values.len() || values.width() > 32 {
            return Err(malformed(format!(
                "{what}: {} tags of {} bits under a {dir_bits}-bit directory, {} values",
                tags.len(),
                tags.width(),
                values.len()
            )));
        }
        Ok(PostingTable {
            dir_bits,
            dir,
            tags,
            values,
            delta: Delta::default(),
        })
    }

    /// Adds one posting to the delta.
    pub(crate) fn insert(&mut self, key: u32, value: u32) {
        let at = u32::try_from(self.delta.entries.len()).expect("delta below 2^32 postings");
        let older = self.delta.heads.insert(key, at).unwrap_or(NIL);
        self.delta.entries.push((value, older));
    }

    /// Folds the delta and `extra` (packed pairs from [`pack`], any order) into the packed
    /// part, dropping every posting whose value fails `keep`, then releases spare capacity.
    pub(crate) fn merge(&mut self, mut extra: Vec<u64>, keep: &dyn Fn(u32) -> bool) {
        extra.reserve(self.delta.entries.len());
        for (&key, &head) in &self.delta.heads {
            let mut next = head;
            while next != NIL {
                let (value, older) = self.delta.entries[next as usize];
                extra.push(pack(key, value));
                next = older;
            }
        }
        self.delta = Delta::default();
        extra.sort_unstable();
        extra.dedup();
        self.merge_sorted(&extra, keep);
    }

    /// Merges sorted, distinct packed pairs into the packed part (the delta is untouched).
    fn merge_sorted(&mut self, sorted: &[u64], keep: &dyn Fn(u32) -> bool) {
        let total = self.values.len() + sorted.len();
        let bits = dir_bits_for(total);
        // Tags are at most 32 - MIN_DIR_BITS = 16 bits wide.
        let mut tags: Vec<u16> = Vec::with_capacity(total);
        let mut values: Vec<u32> = Vec::with_capacity(total);
        let mut dir = vec![0u32; (1 << bits) + 1];
        let mut push = |packed: u64| {
            let value = packed as u32;
            if keep(value) {
                let key = (packed >> 32) as u32;
                dir[(key >> (32 - bits)) as usize + 1] += 1;
                tags.push((key & low_mask(bits)) as u16);
                values.push(value);
            }
        };
        let mut new = sorted.iter().copied().peekable();
        let old_bits = self.dir_bits;
        for bucket in 0..self.dir.len().saturating_sub(1) {
            let (lo, hi) = (self.dir[bucket] as usize, self.dir[bucket + 1] as usize);
            for i in lo..hi {
                let key = (bucket as u32) << (32 - old_bits) | self.tags.get(i) as u32;
                let old = pack(key, self.values.get(i) as u32);
                while let Some(&n) = new.peek() {
                    if n < old {
                        push(n);
                        new.next();
                    } else {
                        break;
                    }
                }
                if new.peek() == Some(&old) {
                    new.next();
                }
                push(old);
            }
        }
        for n in new {
            push(n);
        }
        for b in 1..dir.len() {
            dir[b] += dir[b - 1];
        }
        assert!(
            values.len() <= u32::MAX as usize,
            "a posting table holds fewer than 2^32 postings"
        );
        let value_bits = bits_for(values.iter().copied().max().unwrap_or(0).into());
        self.dir = if values.is_empty() { Vec::new() } else { dir };
        self.dir_bits = bits;
        // Release the old packed part before packing the new one, so that both packed parts
        // and the unpacked vectors are never held at once.
        self.tags = BitArray::default();
        self.values = BitArray::default();
        self.tags = BitArray::new(32 - bits, tags.iter().map(|&t| u64::from(t)));
        drop(tags);
        self.values = BitArray::new(value_bits, values.iter().map(|&v| u64::from(v)));
    }
}

/// Builds a large [`PostingTable`] in bounded memory: pairs are buffered, and each full buffer
/// is sorted and merged into the packed part, so the transient memory is the packed table twice
/// (old and new during a merge) plus one buffer.
#[derive(Debug, Default)]
pub(crate) struct PostingBuilder {
    table: PostingTable,
    pending: Vec<u64>,
}

/// Buffered pairs at which a builder merges, at the least (32 MiB of buffer).
const MIN_PENDING: usize = 1 << 22;

impl PostingBuilder {
    /// Buffers one posting.
    pub(crate) fn push(&mut self, key: u32, value: u32) {
        self.pending.push(pack(key, value));
        // Merging when the buffer reaches a quarter of the table keeps the total work linear
        // (each posting is copied about five times) and the buffer small.
        if self.pending.len() >= MIN_PENDING.max(self.table.packed_len() / 4) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.table.merge(pending, &|_| true);
    }

    /// Merges what is buffered and returns the table.
    pub(crate) fn finish(mut self) -> PostingTable {
        self.flush();
        self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn values(t: &PostingTable, key: u32) -> Vec<u32> {
        let mut v = Vec::new();
        assert!(t.for_each_live_capped(key, usize::MAX, 0, &|_| true, |x| v.push(x)));
        v.sort_unstable();
        v
    }

    #[test]
    fn packed_and_delta_lookups_agree() {
        let mut t = PostingTable::default();
        let keys = [0u32, 1, 0xFFFF, 0x1_0000, 0xABCD_1234, u32::MAX];
        for (i, &k) in keys.iter().enumerate() {
            t.insert(k, i as u32);
            t.insert(k, 100 + i as u32);
        }
        let all_keys = |t: &PostingTable| {
            let mut seen = Vec::new();
            t.for_each_key(|k| seen.push(k));
            seen.sort_unstable();
            seen.dedup();
            seen
        };
        assert_eq!(all_keys(&t), keys);
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(values(&t, k), vec![i as u32, 100 + i as u32]);
            assert!(!t.for_each_live_capped(k, 1, 0, &|_| true, |_| panic!("over the cap")));
            // Dead values neither count towards the cap nor reach `f`.
            let mut seen = Vec::new();
            assert!(t.for_each_live_capped(k, 1, 1, &|v| v < 100, |x| seen.push(x)));
            assert_eq!(seen, vec![i as u32]);
        }
        t.merge(Vec::new(), &|_| true);
        assert_eq!(t.delta_len(), 0);
        assert_eq!(t.packed_len(), 12);
        assert_eq!(all_keys(&t), keys);
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(values(&t, k), vec![i as u32, 100 + i as u32]);
        }
        assert!(values(&t, 2).is_empty());
        assert!(values(&t, 0xABCD_1235).is_empty());
    }

    #[test]
    fn merge_drops_dead_values_and_duplicates() {
        let mut t = PostingTable::default();
        t.merge(vec![pack(5, 1), pack(5, 2), pack(7, 3)], &|_| true);
        t.insert(5, 4);
        t.insert(5, 1); // already packed
        t.merge(Vec::new(), &|v| v != 2);
        assert_eq!(values(&t, 5), vec![1, 4]);
        assert_eq!(values(&t, 7), vec![3]);
        assert_eq!(t.len(), 3);
        t.merge(Vec::new(), &|_| false);
        assert_eq!(t.len(), 0);
        assert!(values(&t, 5).is_empty());
    }

    #[test]
    fn directory_grows_with_the_table_and_keeps_every_key() {
        assert_eq!(dir_bits_for(0), 16);
        assert_eq!(dir_bits_for(1 << 22), 16);
        assert_eq!(dir_bits_for((1 << 22) + 1), 17);
        assert_eq!(dir_bits_for(81_000_000), 21);
        assert_eq!(dir_bits_for(usize::MAX), 24);
        let mut t = PostingTable::default();
        let key = |i: u32| fingerprint::hash::fmix64(i as u64) as u32;
        t.merge((0..1000).map(|i| pack(key(i), i)).collect(), &|_| true);
        assert_eq!(t.dir_bits, 16);
        // Force a merge into a larger directory and check keys survive the change of layout.
        let mut bigger = t.clone();
        let sorted: Vec<u64> = (1000..1000 + (1 << 22) as u32)
            .map(|i| pack(key(i), i))
            .collect();
        bigger.merge(sorted, &|_| true);
        assert_eq!(bigger.dir_bits, 17);
        for i in (0..1000).chain([1 << 21, (1 << 22) + 999]) {
            assert!(values(&bigger, key(i)).contains(&i), "{i}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The bit-packed table answers every key as a plain multimap does, through bulk
        /// merges (with removals), delta inserts and a change of directory size.
        #[test]
        fn packed_lookups_equal_a_reference_multimap(
            seed in proptest::prelude::any::<u64>(),
            n in 0usize..3000,
            distinct in 1u32..2000,
            value_range in 1u32..u32::MAX,
            inserted in 0usize..200,
            dead_every in 2u32..50,
        ) {
            let mut x = seed;
            let mut next = move || {
                x = fingerprint::hash::fmix64(x.wrapping_add(0x9E37_79B9_7F4A_7C15));
                x
            };
            // Keys from a small set spread over the whole range (long lists, every tag bit),
            // with neighbours that differ in the lowest bit only.
            let keys: Vec<u32> = (0..distinct).map(|_| next() as u32).collect();
            let mut pair = || {
                let k = keys[(next() % distinct as u64) as usize];
                let k = if next() % 4 == 0 { k ^ 1 } else { k };
                (k, (next() % value_range as u64) as u32)
            };
            let mut reference: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            let mut bulk = Vec::with_capacity(n);
            for _ in 0..n {
                let (k, v) = pair();
                bulk.push(pack(k, v));
                reference.entry(k).or_default().push(v);
            }
            let mut t = PostingTable::default();
            t.merge(bulk, &|_| true);
            for _ in 0..inserted {
                let (k, v) = pair();
                t.insert(k, v);
                reference.entry(k).or_default().push(v);
            }
            for list in reference.values_mut() {
                list.sort_unstable();
                list.dedup();
            }
            let check = |t: &PostingTable, reference: &BTreeMap<u32, Vec<u32>>| {
                for (&k, vs) in reference {
                    let mut got = values(t, k);
                    got.dedup();
                    if &got != vs {
                        return Err(format!("key {k:#x}: {got:?} != {vs:?}"));
                    }
                    if !values(t, k.wrapping_add(2)).iter().all(|v| {
                        reference.get(&k.wrapping_add(2)).is_some_and(|r| r.contains(v))
                    }) {
                        return Err(format!("key {:#x} has values it was not given", k.wrapping_add(2)));
                    }
                }
                Ok(())
            };
            check(&t, &reference).map_err(proptest::test_runner::TestCaseError::fail)?;
            // Merging the delta drops the dead values.
            t.merge(Vec::new(), &|v| v % dead_every != 0);
            for list in reference.values_mut() {
                list.retain(|v| v % dead_every != 0);
            }
            reference.retain(|_, list| !list.is_empty());
            proptest::prop_assert_eq!(t.delta_len(), 0);
            proptest::prop_assert_eq!(t.len(), reference.values().map(Vec::len).sum::<usize>());
            check(&t, &reference).map_err(proptest::test_runner::TestCaseError::fail)?;
        }
    }

    #[test]
    fn builder_equals_a_reference_multimap() {
        let mut reference: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut b = PostingBuilder::default();
        let mut x = 1u64;
        for v in 0..20_000u32 {
            x = fingerprint::hash::fmix64(x + v as u64);
            // Few distinct keys, so lists are long, and keys across the whole range.
            let key = ((x >> 40) as u32 % 3000).wrapping_mul(0x9E37_79B9);
            b.push(key, v);
            reference.entry(key).or_default().push(v);
        }
        let t = b.finish();
        for (k, vs) in &reference {
            assert_eq!(&values(&t, *k), vs);
        }
        assert_eq!(t.len(), 20_000);
    }
}
