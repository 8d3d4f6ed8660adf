//! The first look of a scan over many pages that are nearly all innocent (a Common Crawl WET
//! file): [`Matcher::may_match`]'s answer, at a fraction of its cost when the winnowing
//! indexes are small enough to summarise.
//!
//! [`Matcher::may_match`] normalises a page, takes its MinHash and both winnowings, and asks
//! the indexes whether one of its LSH bands or sampled winnowing keys is a live chapter's.
//! Winnowing is the larger part of that: two sliding-window minimums over every k-gram. But a
//! sampled winnowing key of the page is the key of one of its k-grams whose hash the sample
//! keeps, so a page none of whose sampled k-grams is a key of the table has none either. A
//! [`FirstLook`] keeps one bit per slice of the key space for each winnowing table (set where
//! the table holds a key), hashes the page ([`fingerprint::Fingerprinter::scan_grams`]:
//! MinHash, and each k-gram's hash handed over, not winnowed), and tests the sampled
//! k-grams against the bits. LSH bands are asked as
//! [`Matcher::may_match`] asks them. Only a page with a k-gram whose bit is set, or with a
//! shared band, takes the full look, so the answer is always [`Matcher::may_match`]'s (a
//! test checks).
//!
//! The bits help while they are sparse: 2^14 bits a posting, up to 2^27 (16 MiB) a table;
//! past 2^17 postings a table (about 1,600 chapters) a random k-gram would find its bit set
//! more often than one in a thousand, and the first look is [`Matcher::may_match`] itself.
//! At that size a scan is better served by the batch mode that indexes the pages instead.
//! A page tests about half its k-grams (the sample keeps one hash in two), one random read of
//! the bits each: a coarse copy of the bits (32 KiB) answers first from the fastest caches,
//! and the megabytes of fine bits are read for the few keys it lets through. On English text
//! (a k-gram a byte) the reads of fine bits alone had the processor waiting on memory.

use fingerprint::{GramKind, Grams, ScanBuffers};

use crate::index::Probe;
use crate::postings::{PostingTable, key_of};
use crate::{Matcher, Result};

/// Bits a posting in a key filter (one in 2^14 random keys hits a table of one posting).
const BITS_PER_POSTING_LOG2: u32 = 14;
/// The smallest and the largest filter (512 bytes, 16 MiB).
const MIN_BITS_LOG2: u32 = 12;
const MAX_BITS_LOG2: u32 = 27;
/// A filter with more than one bit in 2^10 set is not worth asking.
const USEFUL_BITS_PER_POSTING_LOG2: u32 = 10;

/// One bit per `2^(32 - bits)` keys, set where the table holds a key, and in front of it a
/// coarse copy of at most [`COARSE_BITS_LOG2`] bits (a bit per block of fine bits, set where
/// one of them is) that stays in the processor's fastest caches: a page's k-grams are tested
/// against the coarse bits first, and only the few that find a coarse bit set read the fine
/// bits, which for a few hundred chapters are megabytes, a cache miss a read.
#[derive(Debug, Clone)]
struct KeyFilter {
    coarse: Vec<u64>,
    coarse_shift: u32,
    words: Vec<u64>,
    shift: u32,
}

/// The coarse bits of a filter: 2^18 bits, 32 KiB.
const COARSE_BITS_LOG2: u32 = 18;

impl KeyFilter {
    /// The filter of `table`, or `None` when it would be too dense to turn pages away.
    fn of(table: &PostingTable) -> Option<KeyFilter> {
        let postings = table.len().max(1) as u64;
        let wanted = postings
            .saturating_mul(1 << BITS_PER_POSTING_LOG2)
            .next_power_of_two();
        let bits_log2 = wanted.trailing_zeros().clamp(MIN_BITS_LOG2, MAX_BITS_LOG2);
        if postings << USEFUL_BITS_PER_POSTING_LOG2 > 1 << bits_log2 {
            return None;
        }
        let coarse_log2 = bits_log2.min(COARSE_BITS_LOG2);
        let mut filter = KeyFilter {
            coarse: vec![0; 1 << (coarse_log2 - 6)],
            coarse_shift: 32 - coarse_log2,
            words: vec![0; 1 << (bits_log2 - 6)],
            shift: 32 - bits_log2,
        };
        table.for_each_key(|key| {
            set(&mut filter.words, key >> filter.shift);
            set(&mut filter.coarse, key >> filter.coarse_shift);
        });
        Some(filter)
    }

    /// Whether the coarse bits let `key` through to the fine ones.
    #[inline]
    fn coarse_holds(&self, key: u32) -> bool {
        get(&self.coarse, key >> self.coarse_shift)
    }

    /// The fine bits' answer, out of line: rarely asked, it keeps the hash loops that ask
    /// [`KeyFilter::coarse_holds`] small enough to be compiled as one loop.
    #[inline(never)]
    fn fine_holds(&self, key: u32) -> bool {
        get(&self.words, key >> self.shift)
    }
}

#[inline]
fn set(words: &mut [u64], bit: u32) {
    words[bit as usize / 64] |= 1 << (bit % 64);
}

#[inline]
fn get(words: &[u64], bit: u32) -> bool {
    words[bit as usize / 64] >> (bit % 64) & 1 == 1
}

/// Which winnowing hashes an index samples (`hash as u32` a multiple of the sample), without
/// a division for the usual power of two.
#[derive(Debug, Clone, Copy)]
struct Sample {
    every: u32,
    /// `every - 1` when `every` is a power of two.
    mask: Option<u32>,
}

impl Sample {
    fn new(every: u32) -> Sample {
        Sample {
            every,
            mask: every.is_power_of_two().then(|| every - 1),
        }
    }

    #[inline]
    fn keeps(self, hash: u64) -> bool {
        match self.mask {
            Some(mask) => hash as u32 & mask == 0,
            None => (hash as u32).is_multiple_of(self.every),
        }
    }
}

/// [`Matcher::may_match`] for a scan of many pages, faster while the index is small: one bit
/// per slice of the key space for each winnowing table, and the page's sampled k-grams
/// tested against them before any winnowing. Built once for a scan and handed the matcher
/// with each page; it rebuilds its filters when the matcher's index gained chapters since.
#[derive(Debug, Clone)]
pub struct FirstLook {
    /// The [`crate::Index::epoch`] the filters were built at.
    epoch: u64,
    /// The text and the pinyin winnowing tables' filters; `None` when either is too dense.
    filters: Option<[KeyFilter; 2]>,
    buffers: ScanBuffers,
}

impl FirstLook {
    /// The filters of `matcher`'s index.
    pub fn new(matcher: &Matcher) -> FirstLook {
        let index = matcher.index();
        let [text, pinyin] = index.winnow_tables();
        FirstLook {
            epoch: index.epoch(),
            filters: KeyFilter::of(text)
                .zip(KeyFilter::of(pinyin))
                .map(<[_; 2]>::from),
            buffers: ScanBuffers::default(),
        }
    }

    /// Whether the filters summarise the index (else every page takes the full first look).
    pub fn is_filtering(&self) -> bool {
        self.filters.is_some()
    }

    /// [`Matcher::may_match`] of `text`: the same answer.
    ///
    /// # Errors
    /// As [`Matcher::may_match`].
    pub fn may_match(&mut self, matcher: &Matcher, text: &str) -> Result<bool> {
        if matcher.index().epoch() != self.epoch {
            *self = FirstLook::new(matcher);
        }
        let Some([text_filter, pinyin_filter]) = &self.filters else {
            return matcher.may_match_with(text, &mut self.buffers);
        };
        let settings = matcher.index().settings();
        let (text_sample, pinyin_sample) = (
            Sample::new(settings.text_sample),
            Sample::new(settings.pinyin_sample),
        );
        let mut held = false;
        let minhash = matcher
            .fingerprinter()
            .scan_grams(text, &mut self.buffers, |kind, hash| {
                let (sample, filter) = match kind {
                    GramKind::Text => (text_sample, text_filter),
                    GramKind::Pinyin => (pinyin_sample, pinyin_filter),
                };
                // The coarse bits first, then the sample: whether the sample keeps a hash is
                // a coin toss a branch would lose half the time, while a coarse bit is rarely
                // set (a branch the processor predicts) and in the fastest cache. (With the
                // sample first, the compiler branches on it to skip the read of the bits.)
                let key = key_of(hash);
                if filter.coarse_holds(key) && sample.keeps(hash) {
                    held |= filter.fine_holds(key);
                }
            });
        if held {
            return matcher.may_match_with(text, &mut self.buffers);
        }
        let grams = Grams {
            minhash,
            winnow: Vec::new(),
            pinyin_winnow: Vec::new(),
        };
        let probe = Probe::of_grams(settings, &grams)?;
        Ok(matcher
            .index()
            .any_posting(&probe, &matcher.settings().candidates))
    }
}
