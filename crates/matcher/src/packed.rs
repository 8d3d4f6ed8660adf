//! Fixed-width bit-packed arrays: the storage of the SimHash tables' fingerprints and of the
//! posting tables' tags and values.
//!
//! The indexes store numbers whose useful width is known when a table is built and is not a
//! whole number of bytes: a chapter key needs `⌈log2 chapters⌉` bits (20 at a million
//! chapters, not 32), and the part of a key or fingerprint that a table's directory does not
//! already resolve needs `width − directory bits` (11 of a posting key's 32 at a million
//! chapters, 48 of a SimHash's 64). [`BitArray`] keeps each number in exactly that many bits,
//! so element `i` is still one or two word reads away: lookups stay binary searches and
//! linear scans over contiguous memory, as with plain vectors.

use crate::snapshot::{Reader, SnapshotError, Writer, malformed};

/// An immutable array of `len` numbers of `width` bits each (1 to 64), packed end to end
/// into 64-bit words, least significant bits first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BitArray {
    width: u32,
    len: usize,
    /// The bits, plus one zero word at the end so that a read never runs past the vector.
    words: Vec<u64>,
}

/// The bits needed to write `max` (at least 1).
pub(crate) fn bits_for(max: u64) -> u32 {
    (u64::BITS - max.leading_zeros()).max(1)
}

impl BitArray {
    /// Packs `values` in `width` bits each.
    ///
    /// # Panics
    /// If `width` is not in `1..=64`, or a value does not fit in `width` bits.
    pub(crate) fn new(width: u32, values: impl ExactSizeIterator<Item = u64>) -> Self {
        assert!((1..=64).contains(&width), "bit width {width} not in 1..=64");
        let len = values.len();
        let bits = len
            .checked_mul(width as usize)
            .expect("bit array below usize::MAX bits");
        let mut words = vec![0u64; bits.div_ceil(64) + 1];
        let mut written = 0usize;
        for (i, v) in values.enumerate() {
            assert!(
                width == 64 || v >> width == 0,
                "value {v:#x} at {i} does not fit in {width} bits"
            );
            let (word, shift) = (i * width as usize / 64, (i * width as usize % 64) as u32);
            words[word] |= v << shift;
            if shift + width > 64 {
                words[word + 1] |= v >> (64 - shift);
            }
            written += 1;
        }
        assert_eq!(written, len, "iterator reported a wrong length");
        BitArray { width, len, words }
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Element `i`.
    ///
    /// # Panics
    /// In debug builds if `i >= len`; in release such a read returns padding bits or panics
    /// on the slice bound.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> u64 {
        debug_assert!(i < self.len, "index {i} of {}", self.len);
        let bit = i * self.width as usize;
        let (word, shift) = (bit / 64, (bit % 64) as u32);
        let low = self.words[word] >> shift;
        // The next word's bits above `64 - shift`, in two shifts so that `shift == 0` (no bit
        // wanted from it) does not shift by 64. The padding word keeps `word + 1` in bounds.
        let high = (self.words[word + 1] << 1) << (63 - shift);
        let mask = u64::MAX >> (64 - self.width);
        (low | high) & mask
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    /// Appends the array to a snapshot: width, length, words.
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u32(self.width);
        w.u64(self.len as u64);
        w.u64s(&self.words);
    }

    /// Reads what [`BitArray::write`] wrote: the words copied as they are, their count
    /// checked against the width and length (an empty default array has width 0).
    pub(crate) fn read(r: &mut Reader<'_>, what: &str) -> Result<Self, SnapshotError> {
        let width = r.u32()?;
        let len = r.u64()?;
        let words = r.u64s()?;
        let expected = usize::try_from(len)
            .ok()
            .and_then(|len| len.checked_mul(width as usize))
            .map(|bits| bits.div_ceil(64) + 1);
        let fits = match width {
            0 => len == 0 && words.is_empty(),
            1..=64 => expected == Some(words.len()),
            _ => false,
        };
        if !fits {
            return Err(malformed(format!(
                "{what}: {} words for {len} values of {width} bits",
                words.len()
            )));
        }
        Ok(BitArray {
            width,
            len: len as usize,
            words,
        })
    }

    /// Bits of each element (0 for the empty default array).
    pub(crate) fn width(&self) -> u32 {
        self.width
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(a: &BitArray) -> Vec<u64> {
        (0..a.len()).map(|i| a.get(i)).collect()
    }

    #[test]
    fn widths_and_edges() {
        assert_eq!(bits_for(0), 1);
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(2), 2);
        assert_eq!(bits_for(999_999), 20);
        assert_eq!(bits_for(u64::MAX), 64);
        let empty = BitArray::new(7, std::iter::empty());
        assert_eq!(empty.len(), 0);
        assert_eq!(empty.memory_bytes(), 8);
        let full = BitArray::new(64, [u64::MAX, 0, 1 << 63].into_iter());
        assert_eq!(all(&full), vec![u64::MAX, 0, 1 << 63]);
        // 20-bit values: 1,000 of them take 2,500 bytes, not 4,000.
        let keys = BitArray::new(20, (0..1000u32).map(|i| u64::from(i) * 1000));
        assert_eq!(keys.memory_bytes(), (20_000usize.div_ceil(64) + 1) * 8);
        assert_eq!(keys.get(999), 999_000);
    }

    #[test]
    #[should_panic(expected = "does not fit in 3 bits")]
    fn refuses_a_value_wider_than_the_width() {
        BitArray::new(3, [1u64, 8].into_iter());
    }

    proptest! {
        #[test]
        fn every_element_reads_back(width in 1u32..=64, seeds in prop::collection::vec(any::<u64>(), 0..300)) {
            let mask = u64::MAX >> (64 - width);
            let values: Vec<u64> = seeds.iter().map(|s| s & mask).collect();
            let packed = BitArray::new(width, values.iter().copied());
            prop_assert_eq!(packed.len(), values.len());
            prop_assert_eq!(all(&packed), values);
        }
    }
}
