//! SimHash near-duplicate lookup with permuted tables (Manku, Jain, Das Sarma 2007).
//!
//! Cut the 64 bits into `B` blocks. Two fingerprints at Hamming distance `≤ k` differ in at
//! most `k` blocks, so at least `B - k` blocks are equal. Each of the `C(B, k)` choices of
//! `B - k` blocks gets a table that stores every fingerprint with its bits permuted so that
//! those blocks lead, sorted. A query permutes itself the same way for each table, reads the
//! entries that share its leading `B - k` blocks (the *prefix*), and checks the Hamming
//! distance of each: the union is **exactly** the set a brute-force scan returns, because a
//! bit permutation leaves Hamming distances unchanged and every true neighbour agrees with the
//! query on the prefix of at least one table.
//!
//! # Layout
//!
//! [`SimHashLayout::plan`] derives `B` from the bit width (64), `k` and the expected number of
//! fingerprints `n`: the **fewest tables** (hence the least memory) whose expected prefix
//! bucket holds at most [`MAX_EXPECTED_SCAN`] fingerprints,
//! `n / 2^prefix_bits ≤ 256`. For k = 3 that is 4 tables of 16-bit prefixes up to 16.7M
//! fingerprints (10M: 153 entries scanned per table, a few hundred nanoseconds), then 10 tables
//! of 25-bit prefixes. Each table also has a directory over its leading bits (at most the
//! prefix, at most `log2 n + 1`), so finding the bucket costs one memory read, not a binary
//! search.
//!
//! # Compression
//!
//! The leading bits a table's directory resolves are the same for a whole bucket, so each
//! entry keeps only the `64 − d` bits after them, and its value (a chapter key) in
//! `⌈log2 n⌉` bits: at a million fingerprints 48 + 20 bits and 2 of directory, 8.75 bytes
//! an entry per table where a `u64` and a `u32` took 12. Entries stay fixed-width, so a
//! bucket is scanned as before.
//!
//! Manku et al. compress a sorted table instead by storing, per entry, the position of the
//! first bit that differs from the previous entry (6 bits) and the bits after it, with a full
//! fingerprint at the start of each block. Consecutive entries of `n` share about `log2 n`
//! leading bits, which is what the directory already leaves out, so the two come out alike:
//! 49.9 bits an entry for Manku's against 50.1 for these tables (directory included) at a
//! million fingerprints, 47.1 against 48.2 at ten million (`examples/scale.rs simhash`
//! prints both). Manku's entries have variable length, so a bucket would be decoded from
//! its block's start on every query; a bit or so an entry per table (under 1 byte a
//! chapter over 4 tables) does not pay for that.
//!
//! # Updates
//!
//! Fingerprints added after the last build go to a small delta that queries scan in full;
//! [`SimHashIndex::merge`] folds it into the tables (and drops removed entries).

use fingerprint::simhash::hamming;

use crate::packed::{BitArray, bits_for};
use crate::snapshot::{Reader, SnapshotError, Writer, check_directory, malformed};

/// The layout keeps the expected number of fingerprints sharing a query's prefix in one table
/// at or below this: scanning 256 contiguous entries costs about as much as one cache miss
/// more, while the next layout up has 2.5× the tables.
pub const MAX_EXPECTED_SCAN: f64 = 256.0;

/// Bits of a SimHash fingerprint.
pub const BITS: u32 = 64;

/// Which blocks of the fingerprint exist, and which lead in each table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimHashLayout {
    max_distance: u32,
    /// (shift, length) of each block, most significant block first.
    blocks: Vec<(u32, u32)>,
    /// Per table: block indices, the `B - k` prefix blocks first, each group in order.
    tables: Vec<Vec<usize>>,
}

fn binomial(n: usize, k: usize) -> usize {
    (0..k).fold(1usize, |acc, i| acc * (n - i) / (i + 1))
}

/// All `k`-element subsets of `0..n`, in lexicographic order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current: Vec<usize> = (0..k).collect();
    loop {
        out.push(current.clone());
        // Find the rightmost element that can still move right.
        let Some(i) = (0..k).rev().find(|&i| current[i] < n - k + i) else {
            return out;
        };
        current[i] += 1;
        for j in i + 1..k {
            current[j] = current[j - 1] + 1;
        }
    }
}

impl SimHashLayout {
    /// The layout for Hamming distances up to `max_distance` over about `expected`
    /// fingerprints; see the [module docs](self).
    ///
    /// # Panics
    /// If `max_distance >= 32` (no table layout is useful there).
    pub fn plan(max_distance: u32, expected: usize) -> Self {
        assert!(
            max_distance < 32,
            "simhash distance {max_distance} too large"
        );
        let k = max_distance as usize;
        let n = expected.max(1) as f64;
        let mut blocks = k + 1;
        // Block counts beyond 2k + 8 would mean hundreds of tables; stop there.
        while blocks < 2 * k + 8 {
            let layout = Self::with_blocks(max_distance, blocks);
            if n / 2f64.powi(layout.min_prefix_bits() as i32) <= MAX_EXPECTED_SCAN {
                return layout;
            }
            blocks += 1;
        }
        Self::with_blocks(max_distance, blocks)
    }

    /// The layout with exactly `blocks` blocks (`blocks > max_distance`, at most 64).
    ///
    /// # Panics
    /// If `blocks` is out of that range.
    pub fn with_blocks(max_distance: u32, blocks: usize) -> Self {
        let k = max_distance as usize;
        assert!(
            blocks > k && blocks <= BITS as usize,
            "{blocks} blocks cannot cover distance {k}"
        );
        // Blocks as even as possible, the longer ones first.
        let base = BITS as usize / blocks;
        let extra = BITS as usize % blocks;
        let mut shift = BITS;
        let block_list: Vec<(u32, u32)> = (0..blocks)
            .map(|i| {
                let len = (base + usize::from(i < extra)) as u32;
                shift -= len;
                (shift, len)
            })
            .collect();
        let tables = subsets(blocks, blocks - k)
            .into_iter()
            .map(|prefix| {
                let rest = (0..blocks).filter(|b| !prefix.contains(b));
                prefix.iter().copied().chain(rest).collect()
            })
            .collect();
        debug_assert_eq!(binomial(blocks, k), subsets(blocks, blocks - k).len());
        SimHashLayout {
            max_distance,
            blocks: block_list,
            tables,
        }
    }

    /// The largest Hamming distance this layout finds.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// Number of blocks `B`.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Number of tables, `C(B, k)`.
    pub fn tables(&self) -> usize {
        self.tables.len()
    }

    /// Prefix bits of table `t`.
    pub fn prefix_bits(&self, t: usize) -> u32 {
        let keep = self.blocks.len() - self.max_distance as usize;
        self.tables[t][..keep]
            .iter()
            .map(|&b| self.blocks[b].1)
            .sum()
    }

    /// The shortest prefix over all tables.
    pub fn min_prefix_bits(&self) -> u32 {
        (0..self.tables())
            .map(|t| self.prefix_bits(t))
            .min()
            .unwrap_or(BITS)
    }

    /// `fingerprint` with its bits in table `t`'s order (prefix blocks first).
    #[inline]
    pub fn permute(&self, t: usize, fingerprint: u64) -> u64 {
        let mut out = 0u64;
        for &b in &self.tables[t] {
            let (shift, len) = self.blocks[b];
            let mask = if len == 64 {
                u64::MAX
            } else {
                (1u64 << len) - 1
            };
            out = if len == 64 { 0 } else { out << len } | (fingerprint >> shift) & mask;
        }
        out
    }
}

/// One permuted table: fingerprints (permuted) and their values, sorted by fingerprint. Each
/// fingerprint is stored without the leading bits its directory bucket already says
/// ([`BitArray`] of `64 - dir_bits` bits), each value in as many bits as the largest needs.
#[derive(Debug, Clone, Default)]
struct Table {
    /// Leading bits the directory resolves.
    dir_bits: u32,
    /// `dir[b]..dir[b + 1]`: entries whose permuted fingerprint starts with `b`.
    dir: Vec<u32>,
    /// The permuted fingerprints' `64 - dir_bits` trailing bits.
    suffixes: BitArray,
    values: BitArray,
}

impl Table {
    fn build(mut entries: Vec<(u64, u32)>, prefix_bits: u32) -> Self {
        entries.sort_unstable();
        let n = entries.len();
        let log2 = usize::BITS - n.leading_zeros();
        let dir_bits = prefix_bits.min(log2 + 1).min(24);
        let mut dir = vec![0u32; (1usize << dir_bits) + 1];
        for &(fp, _) in &entries {
            dir[bucket(fp, dir_bits) + 1] += 1;
        }
        for b in 1..dir.len() {
            dir[b] += dir[b - 1];
        }
        let mask = suffix_mask(dir_bits);
        let max_value = entries.iter().map(|e| e.1).max().unwrap_or(0);
        Table {
            dir_bits,
            dir,
            suffixes: BitArray::new(BITS - dir_bits, entries.iter().map(|e| e.0 & mask)),
            values: BitArray::new(
                bits_for(max_value.into()),
                entries.iter().map(|e| u64::from(e.1)),
            ),
        }
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    /// The permuted fingerprints and values in order.
    fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        (0..self.dir.len().saturating_sub(1)).flat_map(move |b| {
            let prefix = (b as u64).checked_shl(BITS - self.dir_bits).unwrap_or(0);
            (self.dir[b] as usize..self.dir[b + 1] as usize)
                .map(move |i| (prefix | self.suffixes.get(i), self.values.get(i) as u32))
        })
    }

    fn memory_bytes(&self) -> usize {
        self.dir.capacity() * 4 + self.suffixes.memory_bytes() + self.values.memory_bytes()
    }

    fn write(&self, w: &mut Writer) {
        w.u32(self.dir_bits);
        w.u32s(self.dir.iter().copied());
        self.suffixes.write(w);
        self.values.write(w);
    }

    fn read(r: &mut Reader<'_>, t: usize) -> Result<Self, SnapshotError> {
        let what = format!("SimHash table {t}");
        let dir_bits = r.u32()?;
        let dir = r.u32s()?;
        let suffixes = BitArray::read(r, &what)?;
        let values = BitArray::read(r, &what)?;
        check_directory(&what, &dir, dir_bits, values.len())?;
        let width_ok = BITS.checked_sub(dir_bits) == Some(suffixes.width()) || suffixes.len() == 0;
        if suffixes.len() != values.len() || !width_ok || values.width() > 32 {
            return Err(malformed(format!(
                "{what}: {} suffixes of {} bits for {} values of {} bits",
                suffixes.len(),
                suffixes.width(),
                values.len(),
                values.width()
            )));
        }
        Ok(Table {
            dir_bits,
            dir,
            suffixes,
            values,
        })
    }
}

/// The trailing `64 - dir_bits` bits.
#[inline]
fn suffix_mask(dir_bits: u32) -> u64 {
    u64::MAX >> dir_bits
}

#[inline]
fn bucket(permuted: u64, dir_bits: u32) -> usize {
    if dir_bits == 0 {
        0
    } else {
        (permuted >> (BITS - dir_bits)) as usize
    }
}

/// Permuted SimHash tables over `(fingerprint, value)` entries, values being chapter keys.
/// See the [module docs](self).
#[derive(Debug, Clone)]
pub struct SimHashIndex {
    layout: SimHashLayout,
    tables: Vec<Table>,
    /// Entries added since the last merge, scanned in full by queries.
    delta: Vec<(u64, u32)>,
}

impl SimHashIndex {
    /// An empty index with the given layout.
    pub fn new(layout: SimHashLayout) -> Self {
        SimHashIndex {
            tables: vec![Table::default(); layout.tables()],
            layout,
            delta: Vec::new(),
        }
    }

    /// Builds the tables over `entries` (fingerprint, value).
    pub fn build(layout: SimHashLayout, entries: &[(u64, u32)]) -> Self {
        let tables = (0..layout.tables())
            .map(|t| {
                let permuted = entries
                    .iter()
                    .map(|&(fp, v)| (layout.permute(t, fp), v))
                    .collect();
                Table::build(permuted, layout.prefix_bits(t))
            })
            .collect();
        SimHashIndex {
            layout,
            tables,
            delta: Vec::new(),
        }
    }

    /// The layout in use.
    pub fn layout(&self) -> &SimHashLayout {
        &self.layout
    }

    /// Entries in the tables and the delta (removed ones included until the next merge).
    pub fn len(&self) -> usize {
        self.tables.first().map_or(0, Table::len) + self.delta.len()
    }

    /// Whether the index holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entries waiting in the delta.
    pub fn delta_len(&self) -> usize {
        self.delta.len()
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.tables.iter().map(Table::memory_bytes).sum::<usize>() + self.delta.capacity() * 16
    }

    /// Appends the layout and the tables to a snapshot.
    ///
    /// # Panics
    /// If the delta is not empty (merge it first).
    pub(crate) fn write(&self, w: &mut Writer) {
        assert!(self.delta.is_empty(), "a snapshot holds merged tables only");
        w.u32(self.layout.max_distance);
        w.u32(self.layout.blocks() as u32);
        w.u32(self.tables.len() as u32);
        for table in &self.tables {
            table.write(w);
        }
    }

    /// Reads what [`SimHashIndex::write`] wrote, for `max_distance`.
    pub(crate) fn read(r: &mut Reader<'_>, max_distance: u32) -> Result<Self, SnapshotError> {
        let (distance, blocks, tables) = (r.u32()?, r.u32()?, r.u32()?);
        if distance != max_distance || blocks <= distance || blocks > BITS || distance >= 32 {
            return Err(malformed(format!(
                "a SimHash layout of {blocks} blocks for distance {distance}"
            )));
        }
        let layout = SimHashLayout::with_blocks(distance, blocks as usize);
        if tables as usize != layout.tables() {
            return Err(malformed(format!(
                "{tables} SimHash tables where the layout has {}",
                layout.tables()
            )));
        }
        let tables = (0..layout.tables())
            .map(|t| Table::read(r, t))
            .collect::<Result<Vec<_>, _>>()?;
        let len = tables.first().map_or(0, Table::len);
        if tables.iter().any(|t| t.len() != len) {
            return Err(malformed("SimHash tables of different lengths"));
        }
        Ok(SimHashIndex {
            layout,
            tables,
            delta: Vec::new(),
        })
    }

    /// Adds one entry to the delta.
    pub fn insert(&mut self, fingerprint: u64, value: u32) {
        self.delta.push((fingerprint, value));
    }

    /// Rebuilds the tables with the delta folded in, keeping only entries whose value passes
    /// `keep`, with `layout` (which may differ from the current one).
    pub fn merge(&mut self, layout: SimHashLayout, keep: &dyn Fn(u32) -> bool) {
        let mut entries: Vec<(u64, u32)> = Vec::with_capacity(self.len());
        if let Some(first) = self.tables.first() {
            // Every table holds every entry; table 0's permutation is undone to recover the
            // fingerprints (no unpermuted copy is kept: it would cost 8 more bytes an entry).
            for (p, v) in first.entries() {
                entries.push((self.unpermute(0, p), v));
            }
        }
        entries.append(&mut self.delta);
        entries.retain(|&(_, v)| keep(v));
        *self = SimHashIndex::build(layout, &entries);
    }

    /// Inverse of [`SimHashLayout::permute`] for table `t` of the current layout.
    fn unpermute(&self, t: usize, permuted: u64) -> u64 {
        let l = &self.layout;
        let mut remaining = BITS;
        let mut out = 0u64;
        for &b in &l.tables[t] {
            let (shift, len) = l.blocks[b];
            remaining -= len;
            let mask = if len == 64 {
                u64::MAX
            } else {
                (1u64 << len) - 1
            };
            out |= ((permuted >> remaining) & mask) << shift;
        }
        out
    }

    /// Every entry within the layout's maximum Hamming distance of `fingerprint`, as
    /// `(value, distance)` pairs ascending by value, each value once (an entry is found by
    /// every table whose prefix it shares). Removed entries are included until the next
    /// merge; the caller filters.
    pub fn query(&self, fingerprint: u64) -> Vec<(u32, u32)> {
        let k = self.layout.max_distance;
        let mut hits = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            if table.len() == 0 {
                continue;
            }
            let q = self.layout.permute(t, fingerprint);
            let b = bucket(q, table.dir_bits);
            let (lo, hi) = (table.dir[b] as usize, table.dir[b + 1] as usize);
            // The bucket's entries share the query's leading `dir_bits` bits: the distance is
            // that of the suffixes.
            let q = q & suffix_mask(table.dir_bits);
            for i in lo..hi {
                let d = hamming(table.suffixes.get(i), q);
                if d <= k {
                    hits.push((table.values.get(i) as u32, d));
                }
            }
        }
        for &(fp, v) in &self.delta {
            let d = hamming(fp, fingerprint);
            if d <= k {
                hits.push((v, d));
            }
        }
        // Sorting, not a set: thousands of identical fingerprints (boilerplate chapters) stay
        // O(n log n).
        hits.sort_unstable();
        hits.dedup_by_key(|h| h.0);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_follows_size() {
        let small = SimHashLayout::plan(3, 1_000);
        assert_eq!((small.blocks(), small.tables()), (4, 4));
        assert_eq!(small.min_prefix_bits(), 16);
        let ten_m = SimHashLayout::plan(3, 10_000_000);
        assert_eq!(ten_m.tables(), 4);
        let hundred_m = SimHashLayout::plan(3, 100_000_000);
        assert_eq!((hundred_m.blocks(), hundred_m.tables()), (5, 10));
        assert_eq!(hundred_m.min_prefix_bits(), 25);
        let exact = SimHashLayout::plan(0, 1_000_000);
        assert_eq!((exact.blocks(), exact.tables()), (1, 1));
    }

    #[test]
    fn permutations_are_bijective() {
        for layout in [
            SimHashLayout::with_blocks(3, 4),
            SimHashLayout::with_blocks(3, 6),
            SimHashLayout::with_blocks(0, 1),
            SimHashLayout::with_blocks(2, 7),
        ] {
            let index = SimHashIndex::new(layout.clone());
            for fp in [0u64, 1, u64::MAX, 0xDEAD_BEEF_0123_4567, 1 << 63] {
                for t in 0..layout.tables() {
                    let p = layout.permute(t, fp);
                    assert_eq!(p.count_ones(), fp.count_ones());
                    assert_eq!(index.unpermute(t, p), fp, "{layout:?} table {t}");
                }
            }
        }
    }

    #[test]
    fn finds_neighbours_in_tables_and_delta_and_merges() {
        let layout = SimHashLayout::plan(3, 100);
        let base = 0x0123_4567_89AB_CDEFu64;
        let mut idx = SimHashIndex::build(
            layout.clone(),
            &[(base, 1), (base ^ 0b111, 2), (base ^ 0b1111, 3), (!base, 4)],
        );
        idx.insert(base ^ (1 << 63), 5);
        assert_eq!(idx.query(base), vec![(1, 0), (2, 3), (5, 1)]);
        idx.merge(layout, &|v| v != 2);
        assert_eq!(idx.delta_len(), 0);
        assert_eq!(idx.len(), 4);
        assert_eq!(idx.query(base), vec![(1, 0), (5, 1)]);
    }
}
