//! Packed postings: both kinds of a chapter's winnowing postings in one value
//! (`fingerprints.postings`), what the matcher's start-up load reads instead of a row per
//! posting in `winnow_postings` (which stays, for lookups by hash).
//!
//! # Encoding, version 1
//!
//! ```text
//! version: u8 = 1
//! text:    count: varint, then count × (pos delta: varint, hash: u64 little-endian)
//! pinyin:  the same
//! ```
//!
//! Varints are LEB128 (7 bits a byte, low first; a count is a `u64`, a delta a `u32`). Each
//! kind's postings are in the order the rows path returns them, `ORDER BY pos, hash` on the
//! signed columns: position, then hash as an `i64`. A position is stored as the difference
//! from the previous one of its kind (the first from 0), wrapping in `u32` so any order
//! round-trips; in practice it is small and non-negative, one or two bytes. Hashes are
//! uniform, so they are stored whole: a varint would make them longer. A chapter's ~350
//! postings take about 3.5 KB.

use crate::ids::ChapterId;
use crate::works::Posting;
use crate::{Error, Result};

/// The first byte of every packed value this version writes.
pub(crate) const VERSION: u8 = 1;

/// Bytes of the smallest posting: a one-byte delta and the hash.
const MIN_POSTING_BYTES: usize = 1 + 8;

/// The order the rows path returns (`ORDER BY pos, hash` on `INTEGER`/`BIGINT` columns).
fn row_order(p: &Posting) -> (i32, i64) {
    (p.pos as i32, p.hash as i64)
}

/// Packs a chapter's text and pinyin postings (in any order; they are sorted here).
pub(crate) fn encode(text: &[Posting], pinyin: &[Posting]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 2 * 10 + (text.len() + pinyin.len()) * 10);
    out.push(VERSION);
    for list in [text, pinyin] {
        let mut sorted = list.to_vec();
        sorted.sort_by_key(row_order);
        put_varint(&mut out, sorted.len() as u64);
        let mut prev = 0u32;
        for p in &sorted {
            put_varint(&mut out, u64::from(p.pos.wrapping_sub(prev)));
            out.extend_from_slice(&p.hash.to_le_bytes());
            prev = p.pos;
        }
    }
    out
}

/// Unpacks a value [`encode`] wrote: `(text, pinyin)`, each in row order.
///
/// # Errors
/// [`Error::InvalidInput`] naming `chapter` when the value is of an unknown version,
/// truncated, has bytes left over, or a varint out of range.
pub(crate) fn decode(chapter: ChapterId, bytes: &[u8]) -> Result<(Vec<Posting>, Vec<Posting>)> {
    let bad = |what: &str| {
        Error::InvalidInput(format!(
            "packed postings of chapter {chapter} ({} bytes): {what}",
            bytes.len()
        ))
    };
    let mut r = Reader { bytes, at: 0 };
    match r.byte() {
        Some(VERSION) => {}
        Some(v) => return Err(bad(&format!("unknown version {v}"))),
        None => return Err(bad("empty")),
    }
    let mut lists = [Vec::new(), Vec::new()];
    for list in &mut lists {
        let count = r.varint(u64::MAX).ok_or_else(|| bad("truncated count"))?;
        // Checked before allocating, so a corrupt count cannot ask for gigabytes.
        if count > (r.remaining() / MIN_POSTING_BYTES) as u64 {
            return Err(bad(&format!(
                "count {count} needs more than the {} bytes left",
                r.remaining()
            )));
        }
        list.reserve_exact(count as usize);
        let mut pos = 0u32;
        for _ in 0..count {
            let delta = r
                .varint(u64::from(u32::MAX))
                .ok_or_else(|| bad("truncated or oversized position"))?;
            pos = pos.wrapping_add(delta as u32);
            let hash = r.hash().ok_or_else(|| bad("truncated hash"))?;
            list.push(Posting { hash, pos });
        }
    }
    if r.remaining() != 0 {
        return Err(bad(&format!("{} bytes left over", r.remaining())));
    }
    let [text, pinyin] = lists;
    Ok((text, pinyin))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// A LEB128 varint no greater than `max`; `None` when truncated or out of range.
    fn varint(&mut self, max: u64) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            // The tenth byte may hold only the top bit of a u64.
            if shift == 63 && bits > 1 {
                return None;
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return (v <= max).then_some(v);
            }
        }
        None
    }

    fn hash(&mut self) -> Option<u64> {
        let end = self.at.checked_add(8)?;
        let raw: [u8; 8] = self.bytes.get(self.at..end)?.try_into().ok()?;
        self.at = end;
        Some(u64::from_le_bytes(raw))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn p(pos: u32, hash: u64) -> Posting {
        Posting { hash, pos }
    }

    fn sorted(list: &[Posting]) -> Vec<Posting> {
        let mut list = list.to_vec();
        list.sort_by_key(row_order);
        list
    }

    const CHAPTER: ChapterId = ChapterId(42);

    #[test]
    fn the_layout_is_version_counts_deltas_and_little_endian_hashes() {
        let bytes = encode(&[p(300, 2), p(5, 1)], &[]);
        let mut expected = vec![VERSION, 2, 5];
        expected.extend_from_slice(&1u64.to_le_bytes());
        // 295 = 0b10_0100111: low seven bits first, with the continuation bit.
        expected.extend_from_slice(&[0xa7, 0x02]);
        expected.extend_from_slice(&2u64.to_le_bytes());
        expected.push(0);
        assert_eq!(bytes, expected);
        assert_eq!(
            decode(CHAPTER, &bytes).unwrap(),
            (vec![p(5, 1), p(300, 2)], vec![])
        );
    }

    #[test]
    fn hashes_sort_as_signed_like_the_bigint_column() {
        let high = 1u64 << 63;
        let (text, _) = decode(CHAPTER, &encode(&[p(1, 7), p(1, high)], &[])).unwrap();
        assert_eq!(text, vec![p(1, high), p(1, 7)]);
    }

    #[test]
    fn empty_lists_take_three_bytes() {
        let bytes = encode(&[], &[]);
        assert_eq!(bytes, [VERSION, 0, 0]);
        assert_eq!(decode(CHAPTER, &bytes).unwrap(), (vec![], vec![]));
    }

    #[test]
    fn corrupt_values_are_errors_naming_the_chapter() {
        let good = encode(&[p(1, 10), p(9, 20)], &[p(2, 30)]);
        let mut cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![2, 0, 0],
            vec![VERSION],
            vec![VERSION, 0],
            // A count far beyond the bytes left.
            vec![VERSION, 0xff, 0xff, 0xff, 0xff, 0x0f],
            // A position delta over u32::MAX.
            [
                &[VERSION, 1, 0xff, 0xff, 0xff, 0xff, 0x7f][..],
                &[0; 8],
                &[0],
            ]
            .concat(),
            // A varint running past 64 bits.
            [&[VERSION][..], &[0xff; 10], &[0x01]].concat(),
            [&good[..], &[0]].concat(),
        ];
        cases.extend((0..good.len()).map(|n| good[..n].to_vec()));
        for bytes in cases {
            match decode(CHAPTER, &bytes) {
                Err(Error::InvalidInput(msg)) => {
                    assert!(msg.contains("chapter 42"), "{msg}");
                }
                other => panic!("{bytes:?} decoded to {other:?}"),
            }
        }
    }

    fn postings() -> impl Strategy<Value = Vec<Posting>> {
        // Mostly small positions as real chapters have, sometimes any u32 (deltas wrap).
        let pos = prop_oneof![4 => 0u32..100_000, 1 => any::<u32>()];
        prop::collection::vec(
            (pos, any::<u64>()).prop_map(|(pos, hash)| p(pos, hash)),
            0..400,
        )
    }

    proptest! {
        #[test]
        fn round_trips_in_row_order(text in postings(), pinyin in postings()) {
            let bytes = encode(&text, &pinyin);
            let (t, y) = decode(CHAPTER, &bytes).unwrap();
            prop_assert_eq!(t, sorted(&text));
            prop_assert_eq!(y, sorted(&pinyin));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(CHAPTER, &bytes);
        }

        #[test]
        fn any_truncation_is_an_error(text in postings(), pinyin in postings(), cut in any::<prop::sample::Index>()) {
            let bytes = encode(&text, &pinyin);
            let n = cut.index(bytes.len());
            prop_assert!(decode(CHAPTER, &bytes[..n]).is_err());
        }
    }
}
