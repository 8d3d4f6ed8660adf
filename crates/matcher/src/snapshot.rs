//! An [`Index`] as one file: what `copyhound index snapshot` writes and a worker loads instead
//! of rebuilding the index from every stored fingerprint.
//!
//! # Format (version 1)
//!
//! All numbers little-endian.
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `CHNDXSNP` |
//! | 4 | format version ([`FORMAT_VERSION`]) |
//! | 4 | normaliser version of the fingerprints indexed ([`fingerprint::NORMALIZER_VERSION`]) |
//! | 36 | the [`IndexSettings`]: SimHash distance (4), expected chapters (8), LSH bands (8) and rows (8), text and pinyin sample (4 + 4) |
//! | 8 | the position (an opaque `i64`: the work change log's sequence number the index is current to) |
//! | 8 | when it was written, milliseconds since the Unix epoch |
//! | 8 | chapters in the index |
//! | 8 | payload bytes |
//! | payload | the chapter table and every packed table, each as its raw 64-bit (or 32-, 16-, 8-bit) words |
//! | 32 | SHA-256 of every byte before it |
//!
//! The payload is the index's own arrays (bit-packed words, directories, the chapter
//! table): reading it is a copy of each array, not a rebuild, and the index comes out
//! exactly as it was written (the same keys, so the same candidates in the same order). The
//! map from chapter id to key is rebuilt from the chapter table (a hash map insert a
//! chapter).
//!
//! [`Index::from_snapshot`] refuses, with a [`SnapshotError`] that says why, a file that is
//! not a snapshot, is shorter or longer than its header says (truncated), does not hash to
//! its SHA-256 (damaged), has another format version, indexes fingerprints of another
//! normaliser version, or was built with other index settings than the caller's. A payload
//! that hashes right but is malformed (a writer's bug) is refused too, never read out of
//! bounds.

use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::index::Index;
use crate::settings::IndexSettings;

/// The first eight bytes of every snapshot.
pub const MAGIC: [u8; 8] = *b"CHNDXSNP";

/// The format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Bytes before the payload.
const HEADER_BYTES: usize = 8 + 4 + 4 + 36 + 8 + 8 + 8 + 8;
/// Bytes of the trailing SHA-256.
const HASH_BYTES: usize = 32;

/// What a snapshot's header says.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotHeader {
    /// Its format version.
    pub format_version: u32,
    /// The normaliser version of the fingerprints it indexes.
    pub normalizer_version: u32,
    /// The index settings it was built with.
    pub settings: IndexSettings,
    /// The position it was written at (the work change log's sequence number).
    pub position: i64,
    /// When it was written, milliseconds since the Unix epoch.
    pub created_unix_ms: i64,
    /// Chapters in the index.
    pub chapters: u64,
    /// Bytes of the whole file.
    pub bytes: u64,
}

/// Why a snapshot was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    /// The bytes do not start with [`MAGIC`].
    #[error("not a copyhound index snapshot (it does not start with the snapshot magic)")]
    NotASnapshot,
    /// Fewer (or more) bytes than the header announces.
    #[error("truncated: {found} bytes where its header announces {expected}")]
    Truncated {
        /// Bytes the header announces (or the least a header needs).
        expected: u64,
        /// Bytes there are.
        found: u64,
    },
    /// Longer than its header says.
    #[error("damaged: {found} bytes where its header announces {expected}")]
    Overlong {
        /// Bytes the header announces.
        expected: u64,
        /// Bytes there are.
        found: u64,
    },
    /// The SHA-256 at its end is not the hash of the rest.
    #[error("damaged: its contents do not hash to the SHA-256 it ends with")]
    HashMismatch,
    /// Another format version.
    #[error(
        "format version {found}, but this build reads version {FORMAT_VERSION}; write a new \
         one with `copyhound index snapshot`"
    )]
    Version {
        /// The version the file says.
        found: u32,
    },
    /// Fingerprints of another normaliser version.
    #[error(
        "it indexes fingerprints of normaliser version {found}, but this build uses version \
         {}; refingerprint the works, then write a new snapshot",
        fingerprint::NORMALIZER_VERSION
    )]
    Normalizer {
        /// The version the file says.
        found: u32,
    },
    /// Built with other index settings.
    #[error(
        "it was built with other [matcher.index] settings ({differ}); write a new snapshot \
         with this configuration"
    )]
    Settings {
        /// Which settings differ, with both values.
        differ: String,
    },
    /// The payload hashes right but cannot be read (a writer's bug).
    #[error("malformed payload: {0}")]
    Malformed(String),
}

/// Appends numbers little-endian to a buffer.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    pub(crate) fn u8s(&mut self, values: impl ExactSizeIterator<Item = u8>) {
        self.u64(values.len() as u64);
        self.bytes.extend(values);
    }

    pub(crate) fn u16s(&mut self, values: impl ExactSizeIterator<Item = u16>) {
        self.u64(values.len() as u64);
        self.bytes.reserve(values.len() * 2);
        for v in values {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A length, then the values.
    pub(crate) fn u32s(&mut self, values: impl ExactSizeIterator<Item = u32>) {
        self.u64(values.len() as u64);
        self.bytes.reserve(values.len() * 4);
        for v in values {
            self.u32(v);
        }
    }

    /// A length, then the values.
    pub(crate) fn u64s(&mut self, values: &[u64]) {
        self.u64(values.len() as u64);
        self.bytes.reserve(values.len() * 8);
        for &v in values {
            self.u64(v);
        }
    }
}

/// Reads what a [`Writer`] wrote, refusing to read past the end.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

/// A [`SnapshotError::Malformed`] saying `why`.
pub(crate) fn malformed(why: impl Into<String>) -> SnapshotError {
    SnapshotError::Malformed(why.into())
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SnapshotError> {
        if n > self.bytes.len() {
            return Err(malformed(format!(
                "{n} bytes wanted, {} left",
                self.bytes.len()
            )));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], SnapshotError> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> Result<i64, SnapshotError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// A length written by the writer, checked against what is left (`size` bytes each).
    fn count(&mut self, size: usize) -> Result<usize, SnapshotError> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|n| n.checked_mul(size).is_some_and(|b| b <= self.bytes.len()))
            .ok_or_else(|| malformed(format!("an array of {n} elements runs past the end")))
    }

    fn elements<const N: usize, T>(
        &mut self,
        decode: fn([u8; N]) -> T,
    ) -> Result<Vec<T>, SnapshotError> {
        let n = self.count(N)?;
        let bytes = self.take(n * N)?;
        Ok(bytes
            .chunks_exact(N)
            .map(|c| decode(c.try_into().expect("chunks of N")))
            .collect())
    }

    pub(crate) fn u8s(&mut self) -> Result<Vec<u8>, SnapshotError> {
        let n = self.count(1)?;
        Ok(self.take(n)?.to_vec())
    }

    pub(crate) fn u16s(&mut self) -> Result<Vec<u16>, SnapshotError> {
        self.elements(u16::from_le_bytes)
    }

    pub(crate) fn u32s(&mut self) -> Result<Vec<u32>, SnapshotError> {
        self.elements(u32::from_le_bytes)
    }

    pub(crate) fn u64s(&mut self) -> Result<Vec<u64>, SnapshotError> {
        self.elements(u64::from_le_bytes)
    }

    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// A directory of offsets (`dir[b]..dir[b + 1]` is bucket `b`) read from a snapshot: empty,
/// or `2^bits + 1` offsets ascending from 0 to `len`, so no lookup reads out of bounds.
pub(crate) fn check_directory(
    what: &str,
    dir: &[u32],
    bits: u32,
    len: usize,
) -> Result<(), SnapshotError> {
    if dir.is_empty() {
        return if len == 0 {
            Ok(())
        } else {
            Err(malformed(format!(
                "{what}: {len} entries without a directory"
            )))
        };
    }
    let wanted = 1usize
        .checked_shl(bits)
        .filter(|_| bits <= 24)
        .map(|n| n + 1);
    if wanted != Some(dir.len()) {
        return Err(malformed(format!(
            "{what}: a directory of {} offsets for {bits} bits",
            dir.len()
        )));
    }
    if dir[0] != 0 || dir.windows(2).any(|w| w[0] > w[1]) || dir[dir.len() - 1] as usize != len {
        return Err(malformed(format!(
            "{what}: directory offsets do not ascend from 0 to {len}"
        )));
    }
    Ok(())
}

fn write_settings(w: &mut Writer, s: &IndexSettings) {
    w.u32(s.simhash_max_distance);
    w.u64(s.expected_chapters as u64);
    w.u64(s.lsh_bands as u64);
    w.u64(s.lsh_rows as u64);
    w.u32(s.text_sample);
    w.u32(s.pinyin_sample);
}

fn read_settings(r: &mut Reader<'_>) -> Result<IndexSettings, SnapshotError> {
    let size = |v: u64| usize::try_from(v).map_err(|_| malformed(format!("setting {v} too large")));
    Ok(IndexSettings {
        simhash_max_distance: r.u32()?,
        expected_chapters: size(r.u64()?)?,
        lsh_bands: size(r.u64()?)?,
        lsh_rows: size(r.u64()?)?,
        text_sample: r.u32()?,
        pinyin_sample: r.u32()?,
    })
}

/// The settings that differ between `a` (the snapshot's) and `b` (the caller's), as
/// `KEY X in the snapshot, Y configured` for each key that differs, comma-separated; empty
/// when none.
fn settings_differ(a: &IndexSettings, b: &IndexSettings) -> String {
    let pairs = [
        (
            "simhash_max_distance",
            a.simhash_max_distance.to_string(),
            b.simhash_max_distance.to_string(),
        ),
        (
            "expected_chapters",
            a.expected_chapters.to_string(),
            b.expected_chapters.to_string(),
        ),
        (
            "lsh_bands",
            a.lsh_bands.to_string(),
            b.lsh_bands.to_string(),
        ),
        ("lsh_rows", a.lsh_rows.to_string(), b.lsh_rows.to_string()),
        (
            "text_sample",
            a.text_sample.to_string(),
            b.text_sample.to_string(),
        ),
        (
            "pinyin_sample",
            a.pinyin_sample.to_string(),
            b.pinyin_sample.to_string(),
        ),
    ];
    pairs
        .iter()
        .filter(|(_, x, y)| x != y)
        .map(|(key, x, y)| format!("{key} {x} in the snapshot, {y} configured"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads and checks the header and the hash of `bytes`: everything but the payload.
///
/// # Errors
/// The [`SnapshotError`] that refuses the file (not the settings check: see
/// [`Index::from_snapshot`]).
pub fn read_header(bytes: &[u8]) -> Result<SnapshotHeader, SnapshotError> {
    let found = bytes.len() as u64;
    let least = (HEADER_BYTES + HASH_BYTES) as u64;
    if bytes.len() < MAGIC.len() {
        return Err(if MAGIC.starts_with(bytes) {
            SnapshotError::Truncated {
                expected: least,
                found,
            }
        } else {
            SnapshotError::NotASnapshot
        });
    }
    if bytes[..MAGIC.len()] != MAGIC {
        return Err(SnapshotError::NotASnapshot);
    }
    if bytes.len() < HEADER_BYTES {
        return Err(SnapshotError::Truncated {
            expected: least,
            found,
        });
    }
    let mut r = Reader {
        bytes: &bytes[MAGIC.len()..HEADER_BYTES],
    };
    let format_version = r.u32()?;
    if format_version != FORMAT_VERSION {
        return Err(SnapshotError::Version {
            found: format_version,
        });
    }
    let normalizer_version = r.u32()?;
    let settings = read_settings(&mut r)?;
    let position = r.i64()?;
    let created_unix_ms = r.i64()?;
    let chapters = r.u64()?;
    let payload = r.u64()?;
    let expected = payload.saturating_add(least);
    if found < expected {
        return Err(SnapshotError::Truncated { expected, found });
    }
    if found > expected {
        return Err(SnapshotError::Overlong { expected, found });
    }
    let (body, hash) = bytes.split_at(bytes.len() - HASH_BYTES);
    if Sha256::digest(body).as_slice() != hash {
        return Err(SnapshotError::HashMismatch);
    }
    if normalizer_version != fingerprint::NORMALIZER_VERSION {
        return Err(SnapshotError::Normalizer {
            found: normalizer_version,
        });
    }
    Ok(SnapshotHeader {
        format_version,
        normalizer_version,
        settings,
        position,
        created_unix_ms,
        chapters,
        bytes: found,
    })
}

impl Index {
    /// The index as a snapshot file (see the [module docs](self)) at `position`, an opaque
    /// number the reader gets back (the work change log's sequence number the index is
    /// current to). Merges the deltas and purges removed chapters first ([`Index::compact`])
    /// when there are any, so the file holds the packed tables only.
    pub fn to_snapshot(&mut self, position: i64) -> Vec<u8> {
        if !self.is_compact() {
            self.compact();
        }
        let mut payload = Writer::default();
        self.write_payload(&mut payload);
        let mut w = Writer {
            bytes: Vec::with_capacity(HEADER_BYTES + payload.bytes.len() + HASH_BYTES),
        };
        w.bytes.extend_from_slice(&MAGIC);
        w.u32(FORMAT_VERSION);
        w.u32(fingerprint::NORMALIZER_VERSION);
        write_settings(&mut w, self.settings());
        w.i64(position);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        w.i64(now);
        w.u64(self.len() as u64);
        w.u64(payload.bytes.len() as u64);
        debug_assert_eq!(w.bytes.len(), HEADER_BYTES);
        w.bytes.append(&mut payload.bytes);
        let hash = Sha256::digest(&w.bytes);
        w.bytes.extend_from_slice(&hash);
        w.bytes
    }

    /// Reads a snapshot written by [`Index::to_snapshot`], for an index with `settings`.
    ///
    /// # Errors
    /// The [`SnapshotError`] that refuses it: not a snapshot, truncated, damaged, another
    /// format or normaliser version, other settings than `settings`, a malformed payload.
    pub fn from_snapshot(
        bytes: &[u8],
        settings: &IndexSettings,
    ) -> Result<(Index, SnapshotHeader), SnapshotError> {
        let header = read_header(bytes)?;
        let differ = settings_differ(&header.settings, settings);
        if !differ.is_empty() {
            return Err(SnapshotError::Settings { differ });
        }
        let mut r = Reader {
            bytes: &bytes[HEADER_BYTES..bytes.len() - HASH_BYTES],
        };
        let index = Index::read_payload(&mut r, header.settings.clone())?;
        if !r.is_empty() {
            return Err(malformed("bytes after the last table"));
        }
        if index.len() as u64 != header.chapters {
            return Err(malformed(format!(
                "{} chapters where the header says {}",
                index.len(),
                header.chapters
            )));
        }
        Ok((index, header))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{ChapterEntry, IndexBuilder, Probe};
    use crate::settings::CandidateSettings;
    use crate::{ChapterId, WorkId};
    use fingerprint::{FingerprintSettings, Fingerprinter};

    fn fp() -> &'static Fingerprinter {
        static F: std::sync::OnceLock<Fingerprinter> = std::sync::OnceLock::new();
        F.get_or_init(|| Fingerprinter::new(FingerprintSettings::default()).unwrap())
    }

    /// Public-domain openings (三国演义, 西游记, Alice) and a few variants of each.
    const TEXTS: [&str; 3] = [
        "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。",
        "诗曰：混沌未分天地乱，茫茫渺渺无人见。自从盘古破鸿蒙，开辟从兹清浊辨。覆载群生仰至仁，发明万物皆成善。欲知造化会元功，须看西游释厄传。盖闻天地之数，有十二万九千六百岁为一元。",
        "Alice was beginning to get very tired of sitting by her sister on the bank, and of having nothing to do: once or twice she had peeped into the book her sister was reading, but it had no pictures or conversations in it.",
    ];

    fn probe(index: &Index, text: &str) -> Probe {
        let f = fp().fingerprint(text);
        Probe::new(
            index.settings(),
            &f.summary,
            &f.summary.sentences.hashes,
            &f.winnow,
            &f.pinyin_winnow,
        )
        .unwrap()
    }

    fn candidates(index: &Index, text: &str) -> Vec<(i64, u32)> {
        index
            .candidates(&probe(index, text), &CandidateSettings::default())
            .iter()
            .map(|c| (c.chapter.0, c.key.0))
            .collect()
    }

    /// Three works of a few chapters each (texts cut and joined differently), one chapter
    /// removed and one added after the build, so the chapter table has a free key.
    fn index() -> Index {
        let mut b = IndexBuilder::new(IndexSettings::default()).unwrap();
        let mut id = 0;
        for (w, text) in TEXTS.iter().enumerate() {
            for cut in 0..4 {
                id += 1;
                let chars: Vec<char> = text.chars().collect();
                let body: String = chars[cut * 3..].iter().collect();
                let variant = format!("{body}{}", TEXTS[(w + 1) % 3]);
                b.add(&ChapterEntry::new(
                    ChapterId(id),
                    WorkId(w as i64),
                    &fp().fingerprint(&variant),
                ))
                .unwrap();
            }
        }
        let mut index = b.build();
        assert!(index.remove(ChapterId(2)));
        index
            .add(&ChapterEntry::new(
                ChapterId(100),
                WorkId(9),
                &fp().fingerprint(TEXTS[0]),
            ))
            .unwrap();
        index
    }

    #[test]
    fn round_trip_answers_the_same_candidates() {
        let mut original = index();
        let bytes = original.to_snapshot(42);
        assert!(original.is_compact());
        let (mut back, header) = Index::from_snapshot(&bytes, original.settings()).unwrap();
        assert_eq!(header.position, 42);
        assert_eq!(header.chapters, original.len() as u64);
        assert_eq!(header.bytes, bytes.len() as u64);
        assert_eq!(header.normalizer_version, fingerprint::NORMALIZER_VERSION);
        assert_eq!(back.len(), original.len());
        let (a, b) = (original.stats(), back.stats());
        assert_eq!(
            (
                a.chapters,
                a.lsh_postings,
                a.text_postings,
                a.pinyin_postings
            ),
            (
                b.chapters,
                b.lsh_postings,
                b.text_postings,
                b.pinyin_postings
            )
        );
        let mut pages: Vec<String> = TEXTS.iter().map(|t| t.to_string()).collect();
        pages.push(format!("广告{}{}", TEXTS[1], TEXTS[2]));
        for page in &pages {
            let found = candidates(&original, page);
            assert!(!found.is_empty());
            assert_eq!(candidates(&back, page), found, "{page}");
        }
        // Both go on alike: the same free key is reused, the same chapters go.
        let entry = fp().fingerprint(TEXTS[2]);
        let k1 = original
            .add(&ChapterEntry::new(ChapterId(200), WorkId(8), &entry))
            .unwrap();
        let k2 = back
            .add(&ChapterEntry::new(ChapterId(200), WorkId(8), &entry))
            .unwrap();
        assert_eq!(k1, k2);
        assert_eq!(original.remove_work(WorkId(1)), back.remove_work(WorkId(1)));
        for page in &pages {
            assert_eq!(candidates(&back, page), candidates(&original, page));
        }
        // Written again, the bytes are the same but for the time.
        let again = Index::from_snapshot(&bytes, original.settings())
            .unwrap()
            .0
            .to_snapshot(42);
        assert_eq!(again[..60], bytes[..60]);
        assert_eq!(again[68..again.len() - 32], bytes[68..bytes.len() - 32]);
    }

    #[test]
    fn an_empty_index_round_trips() {
        let mut empty = Index::new(IndexSettings::default()).unwrap();
        let bytes = empty.to_snapshot(0);
        let (back, header) = Index::from_snapshot(&bytes, &IndexSettings::default()).unwrap();
        assert!(back.is_empty());
        assert_eq!(header.chapters, 0);
        assert!(candidates(&back, TEXTS[0]).is_empty());
    }

    /// `bytes` with the hash at its end recomputed, as a writer of another build would.
    fn rehashed(mut bytes: Vec<u8>) -> Vec<u8> {
        let end = bytes.len() - HASH_BYTES;
        let hash = Sha256::digest(&bytes[..end]);
        bytes[end..].copy_from_slice(&hash);
        bytes
    }

    #[test]
    fn refuses_damaged_and_foreign_snapshots_with_the_reason() {
        let settings = IndexSettings::default();
        let good = index().to_snapshot(7);
        let refused = |bytes: &[u8]| Index::from_snapshot(bytes, &settings).unwrap_err();
        let len = good.len() as u64;
        for cut in [0, 5, 40, HEADER_BYTES, good.len() / 2, good.len() - 1] {
            let err = refused(&good[..cut]);
            assert!(
                matches!(err, SnapshotError::Truncated { found, .. } if found == cut as u64),
                "{cut}: {err}"
            );
            assert!(err.to_string().starts_with("truncated"), "{err}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(
            refused(&longer),
            SnapshotError::Overlong {
                expected: len,
                found: len + 1
            }
        );
        // A flipped bit anywhere in the header's numbers, the payload or the hash.
        for at in [
            60,
            HEADER_BYTES,
            good.len() / 2,
            good.len() - 40,
            good.len() - 1,
        ] {
            let mut flipped = good.clone();
            flipped[at] ^= 0x10;
            assert_eq!(refused(&flipped), SnapshotError::HashMismatch, "byte {at}");
        }
        assert!(
            SnapshotError::HashMismatch
                .to_string()
                .contains("do not hash to the SHA-256")
        );
        let mut other = good.clone();
        other[8..12].copy_from_slice(&2u32.to_le_bytes());
        let err = refused(&other);
        assert_eq!(err, SnapshotError::Version { found: 2 });
        assert!(err.to_string().contains("format version 2"), "{err}");
        let mut magic = good.clone();
        magic[0] = b'X';
        assert_eq!(refused(&magic), SnapshotError::NotASnapshot);
        assert_eq!(refused(b"hello"), SnapshotError::NotASnapshot);
        let mut normalizer = good.clone();
        normalizer[12..16].copy_from_slice(&(fingerprint::NORMALIZER_VERSION + 1).to_le_bytes());
        let err = refused(&rehashed(normalizer));
        assert!(matches!(err, SnapshotError::Normalizer { .. }), "{err}");
        assert!(err.to_string().contains("normaliser version"), "{err}");
        let sampled = IndexSettings {
            text_sample: 3,
            ..IndexSettings::default()
        };
        let err = Index::from_snapshot(&good, &sampled).unwrap_err();
        assert!(
            err.to_string()
                .contains("text_sample 2 in the snapshot, 3 configured"),
            "{err}"
        );
        // A payload that hashes right but lies about an array's length.
        let mut lying = good.clone();
        lying[HEADER_BYTES..HEADER_BYTES + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let err = refused(&rehashed(lying));
        assert!(matches!(err, SnapshotError::Malformed(_)), "{err}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Whatever bytes of a good payload are changed (the hash recomputed over them),
        /// reading either refuses or gives an index whose queries do not panic.
        #[test]
        fn changed_payloads_never_panic(at in 0usize..10_000, value in proptest::prelude::any::<u8>()) {
            static GOOD: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
            let good = GOOD.get_or_init(|| index().to_snapshot(1));
            let mut bytes = good.clone();
            let payload = HEADER_BYTES..good.len() - HASH_BYTES;
            let at = payload.start + at % payload.len();
            bytes[at] = value;
            if let Ok((back, _)) = Index::from_snapshot(&rehashed(bytes), &IndexSettings::default()) {
                for text in TEXTS {
                    let _ = candidates(&back, text);
                }
            }
        }
    }
}
