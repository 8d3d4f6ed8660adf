//! The in-memory indexes over every registered chapter's fingerprints, and candidate lookup.
//!
//! | index | key | finds | bytes a chapter at 10^6 (defaults) |
//! |---|---|---|---|
//! | SimHash permuted tables | 64-bit SimHash | whole-chapter near duplicates, Hamming ≤ k | 35 (4 tables of 48 + 20 bits an entry; was 12 bytes an entry) |
//! | MinHash LSH buckets | band key (top 32 bits) | Jaccard-similar chapters, S-curve `1-(1-s^r)^b` | 85 (20 bands, 4.2 a posting; was 6) |
//! | sentence map | hash of one of the k longest sentences | verbatim copies, fast | 22 (≤ 5 sentences) |
//! | text winnowing postings | winnowing hash (1 in `text_sample`) | partial copies, split and merged chapters, ads | 322 (81 postings, 4.0 each; was 6) |
//! | pinyin winnowing postings | pinyin winnowing hash (1 in `pinyin_sample`) | homophone substitution | 325 (82 postings) |
//! | chapters | chapter key | id, work, lengths; the id map | 63 |
//!
//! Every table is bit-packed (`crate::packed`): a posting keeps the bits of its key that the
//! table's directory does not resolve and its chapter key in `⌈log2 chapters⌉` bits, a SimHash
//! entry the bits after its table's directory (see the [`simhash`](crate::simhash) and
//! `postings` module docs for the layouts and why not delta codes). Lookups are unchanged
//! (exact, the same candidates); measured with `examples/scale.rs index` (counting allocator):
//!
//! | index of | chapters | simhash | lsh | sentences | text | pinyin | total |
//! |---:|---:|---:|---:|---:|---:|---:|---:|
//! | 10^5, before | 52 | 58 | 123 | 33 | 491 | 495 | 1,254 |
//! | 10^5, packed | 52 | 43 | 85 | 23 | 329 | 332 | **866** |
//! | 10^6, before | 63 | 49 | 122 | 31 | 494 | 498 | 1,262 |
//! | 10^6, packed | 63 | 35 | 85 | 22 | 322 | 325 | **857** |
//!
//! Postings name the chapter only (a [`ChapterKey`], `u32`), not the position of the
//! fingerprint in it: candidate lookup needs only to count shared fingerprints per chapter,
//! and verification recomputes every position exactly from the texts of the few candidates.
//! A 16-bit position would add a third to the postings' memory for no gain in recall.
//!
//! # Memory and sampling
//!
//! Winnowing keeps about 2/31 of a text's character positions, for the text and again for its
//! pinyin: 160 + 160 fingerprints for a chapter of 2,600 normalised characters (7.5 KB), which
//! would be 2 KiB of postings alone. The index keeps one in `text_sample` (and one in
//! `pinyin_sample`) of them, chosen by hash so a page and a chapter keep the same ones. Measured
//! over 100,000 corpus chapters and synthetic variants of them (the `bench` crate's
//! `examples/scale.rs index --chapters 100000 --text-sample N --pinyin-sample N`; 857 bytes
//! at a million with the default), and the share of copied excerpts hidden in another
//! chapter that are still found (`bench`'s `examples/quality.rs --excerpts`, 300 pages a row,
//! report thresholds lowered so that only lookup and alignment count):
//!
//! | sample | bytes a chapter (before packing) | 150 chars | 300 chars | 300 chars, 3–5% edited | 600 chars, edited |
//! |---:|---:|---:|---:|---:|---:|
//! | 1 | 1,480 (2,229) | 0.993 | 1.000 | 1.000 | 1.000 |
//! | **2** (default) | **866** (1,254) | 0.977 | 1.000 | 0.993 | 1.000 |
//! | 4 | 545 (759) | 0.860 | 0.977 | 0.903 | 0.993 |
//! | 8 | 379 (517) | 0.463 | 0.823 | 0.590 | 0.920 |
//!
//! With 2, every passage long enough to be reported (300 characters by default) is found, and
//! a million chapters of this size take 0.8 GiB. Memory grows with chapter length (about
//! 200 bytes plus 0.25 a normalised character): for chapters much longer than 7,000
//! characters, a sample of 3 or 4 keeps within 2 KiB.
//!
//! Build a large index with [`IndexBuilder`] (bulk, bounded memory), then keep it current with
//! [`Index::add`], [`Index::remove`] and [`Index::remove_work`]: additions go to small deltas
//! that are merged into the packed tables as they grow, removals hide a chapter at once and
//! are purged by a compaction once enough accumulate.

use fingerprint::{ChapterFingerprint, FingerprintSummary, NORMALIZER_VERSION, Winnow};
use foldhash::{HashMap, HashMapExt};
use serde::Serialize;

use crate::postings::{PostingBuilder, PostingTable, key_of};
use crate::settings::{CandidateSettings, IndexSettings};
use crate::simhash::{SimHashIndex, SimHashLayout};
use crate::snapshot::{Reader, SnapshotError, Writer, malformed};
use crate::{ChapterId, ChapterKey, Error, Result, WorkId};

/// One chapter's fingerprints, as the store hands them to the index. Borrowed, so a loader can
/// decode rows into reused buffers.
#[derive(Debug, Clone, Copy)]
pub struct ChapterEntry<'a> {
    /// The chapter.
    pub id: ChapterId,
    /// The work it belongs to.
    pub work: WorkId,
    /// Its compact fingerprints (SimHash, MinHash, longest sentences, character count).
    pub summary: &'a FingerprintSummary,
    /// Its text winnowing (all of it; the index samples).
    pub winnow: &'a [Winnow],
    /// Its pinyin winnowing (all of it; the index samples).
    pub pinyin_winnow: &'a [Winnow],
}

impl<'a> ChapterEntry<'a> {
    /// The entry of a freshly computed fingerprint.
    pub fn new(id: ChapterId, work: WorkId, fingerprint: &'a ChapterFingerprint) -> Self {
        ChapterEntry {
            id,
            work,
            summary: &fingerprint.summary,
            winnow: &fingerprint.winnow,
            pinyin_winnow: &fingerprint.pinyin_winnow,
        }
    }
}

/// What the index keeps about each chapter key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChapterMeta {
    id: ChapterId,
    work: WorkId,
    /// Normalised characters.
    chars: u32,
    /// Indexed (sampled, distinct) text and pinyin postings, saturated at `u16::MAX`.
    text_postings: u16,
    pinyin_postings: u16,
    /// Indexed sentences.
    sentences: u8,
}

/// The keys one chapter or page contributes to each index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    /// SimHash-64.
    pub simhash: u64,
    /// LSH band keys.
    pub lsh: Vec<u32>,
    /// Sentence keys.
    pub sentences: Vec<u32>,
    /// Sampled text winnowing keys, ascending and distinct.
    pub text: Vec<u32>,
    /// Sampled pinyin winnowing keys, ascending and distinct.
    pub pinyin: Vec<u32>,
}

fn sampled_keys(winnow: &[Winnow], sample: u32) -> Vec<u32> {
    let mut keys: Vec<u32> = winnow
        .iter()
        .filter(|w| (w.hash as u32).is_multiple_of(sample))
        .map(|w| key_of(w.hash))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn distinct_keys(hashes: impl IntoIterator<Item = u64>) -> Vec<u32> {
    let mut keys: Vec<u32> = hashes.into_iter().map(key_of).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

impl Probe {
    /// The keys of a fingerprint under `settings`; `sentence_hashes` are the sentence hashes to
    /// index or look up ([`fingerprint::sentences::sentence_hash`] values: a chapter's longest
    /// sentences, or every sentence of a page).
    ///
    /// # Errors
    /// [`Error::IncompatibleFingerprint`] if the fingerprint was computed by another
    /// normaliser version or its MinHash is shorter than `lsh_bands × lsh_rows`.
    pub fn new(
        settings: &IndexSettings,
        summary: &FingerprintSummary,
        sentence_hashes: &[u64],
        winnow: &[Winnow],
        pinyin_winnow: &[Winnow],
    ) -> Result<Self> {
        if summary.normalizer_version != NORMALIZER_VERSION {
            return Err(Error::IncompatibleFingerprint(format!(
                "normalizer version {} (this build reads {NORMALIZER_VERSION}); refingerprint the work",
                summary.normalizer_version
            )));
        }
        let (bands, rows) = (settings.lsh_bands, settings.lsh_rows);
        let values = summary.minhash.values().len();
        if !summary.minhash.is_empty() && values < bands * rows {
            return Err(Error::IncompatibleFingerprint(format!(
                "minhash of {values} values is shorter than index.lsh_bands × index.lsh_rows = {}",
                bands * rows
            )));
        }
        Ok(Probe {
            simhash: summary.simhash,
            lsh: summary
                .minhash
                .band_keys(bands, rows)
                .into_iter()
                .map(key_of)
                .collect(),
            sentences: distinct_keys(sentence_hashes.iter().copied()),
            text: sampled_keys(winnow, settings.text_sample),
            pinyin: sampled_keys(pinyin_winnow, settings.pinyin_sample),
        })
    }

    /// The posting keys of a page's one-pass fingerprints ([`fingerprint::Fingerprinter::grams`]):
    /// LSH bands and both winnowings, no SimHash and no sentences.
    ///
    /// # Errors
    /// [`Error::IncompatibleFingerprint`] if its MinHash is shorter than
    /// `lsh_bands × lsh_rows`.
    pub fn of_grams(settings: &IndexSettings, grams: &fingerprint::Grams) -> Result<Self> {
        let (bands, rows) = (settings.lsh_bands, settings.lsh_rows);
        let values = grams.minhash.values().len();
        if !grams.minhash.is_empty() && values < bands * rows {
            return Err(Error::IncompatibleFingerprint(format!(
                "minhash of {values} values is shorter than index.lsh_bands × index.lsh_rows = {}",
                bands * rows
            )));
        }
        Ok(Probe {
            simhash: NO_SIMHASH,
            lsh: grams
                .minhash
                .band_keys(bands, rows)
                .into_iter()
                .map(key_of)
                .collect(),
            sentences: Vec::new(),
            text: sampled_keys(&grams.winnow, settings.text_sample),
            pinyin: sampled_keys(&grams.pinyin_winnow, settings.pinyin_sample),
        })
    }

    pub(crate) fn of_entry(settings: &IndexSettings, entry: &ChapterEntry<'_>) -> Result<Self> {
        Probe::new(
            settings,
            entry.summary,
            &entry.summary.sentences.hashes,
            entry.winnow,
            entry.pinyin_winnow,
        )
        .map_err(|e| match e {
            Error::IncompatibleFingerprint(why) => {
                Error::IncompatibleFingerprint(format!("{}: {why}", entry.id))
            }
            other => other,
        })
    }
}

/// Why a chapter is a candidate for a page: what each index found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// SimHash Hamming distance, when within the index's maximum.
    pub simhash_distance: Option<u32>,
    /// LSH bands shared.
    pub lsh_bands: u32,
    /// The chapter's longest sentences found among the page's sentences.
    pub sentences: u32,
    /// Distinct sampled text winnowing fingerprints shared.
    pub text_hits: u32,
    /// Distinct sampled pinyin winnowing fingerprints shared.
    pub pinyin_hits: u32,
    /// Estimated containment of the chapter in the page, in `[0, 1]`: the larger share of the
    /// chapter's indexed text or pinyin fingerprints found in the page (1 when SimHash, LSH or
    /// the sentences say the page copies the whole chapter). Candidates are verified in
    /// descending order of this estimate.
    pub estimated_coverage: f32,
}

impl Evidence {
    /// Whether a whole-chapter index (SimHash, LSH, at least two longest sentences) found it.
    pub fn whole_chapter(&self) -> bool {
        self.simhash_distance.is_some() || self.lsh_bands > 0 || self.sentences >= 2
    }
}

/// A chapter worth verifying against a page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The chapter.
    pub chapter: ChapterId,
    /// Its work.
    pub work: WorkId,
    /// Its key in the index.
    pub key: ChapterKey,
    /// Normalised characters of the chapter.
    pub chapter_chars: usize,
    /// What the indexes found.
    pub evidence: Evidence,
}

/// Sizes of the index, for monitoring and the memory figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IndexStats {
    /// Chapters that queries can find.
    pub chapters: usize,
    /// Removed chapters whose postings await the next compaction.
    pub retired: usize,
    /// SimHash tables (the layout's `C(B, k)`).
    pub simhash_tables: usize,
    /// Postings of each posting index (removed chapters' included until compaction).
    pub lsh_postings: usize,
    /// See `lsh_postings`.
    pub sentence_postings: usize,
    /// See `lsh_postings`.
    pub text_postings: usize,
    /// See `lsh_postings`.
    pub pinyin_postings: usize,
    /// Heap bytes of each part.
    pub memory: MemoryUsage,
}

/// Heap bytes held by each part of the index (allocated capacity).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryUsage {
    /// Per-chapter metadata and the map from [`ChapterId`] to [`ChapterKey`].
    pub chapters: usize,
    /// SimHash tables and delta.
    pub simhash: usize,
    /// LSH buckets.
    pub lsh: usize,
    /// Sentence map.
    pub sentences: usize,
    /// Text winnowing postings.
    pub text: usize,
    /// Pinyin winnowing postings.
    pub pinyin: usize,
}

impl MemoryUsage {
    /// All parts together.
    pub fn total(&self) -> usize {
        self.chapters + self.simhash + self.lsh + self.sentences + self.text + self.pinyin
    }
}

/// Chapter metadata, the id map and key recycling, shared by [`Index`] and [`IndexBuilder`].
#[derive(Debug, Clone, Default)]
struct Chapters {
    meta: Vec<ChapterMeta>,
    /// One bit per key: the chapter is in the index. Kept apart from `meta` so that queries
    /// filtering long posting lists read 128 KiB per million chapters, which stays in cache.
    alive: Vec<u64>,
    by_id: HashMap<ChapterId, u32>,
    /// Keys whose postings are all purged: reusable.
    free: Vec<u32>,
    /// Keys removed but still named by postings.
    retired: Vec<u32>,
}

impl ChapterMeta {
    /// The metadata of `entry`, whose keys are `probe`.
    pub(crate) fn new(entry: &ChapterEntry<'_>, probe: &Probe) -> Self {
        ChapterMeta {
            id: entry.id,
            work: entry.work,
            chars: entry.summary.chars,
            text_postings: probe.text.len().min(u16::MAX as usize) as u16,
            pinyin_postings: probe.pinyin.len().min(u16::MAX as usize) as u16,
            sentences: probe.sentences.len().min(u8::MAX as usize) as u8,
        }
    }
}

impl Chapters {
    fn allocate(&mut self, entry: &ChapterEntry<'_>, probe: &Probe) -> Result<u32> {
        let meta = ChapterMeta::new(entry, probe);
        let key = match self.free.pop() {
            Some(k) => {
                self.meta[k as usize] = meta;
                k
            }
            None => {
                let k = u32::try_from(self.meta.len())
                    .ok()
                    .filter(|&k| k < u32::MAX)
                    .ok_or(Error::Full)?;
                self.meta.push(meta);
                if self.alive.len() * 64 < self.meta.len() {
                    self.alive.push(0);
                }
                k
            }
        };
        self.alive[key as usize / 64] |= 1 << (key % 64);
        self.by_id.insert(entry.id, key);
        Ok(key)
    }

    fn retire(&mut self, id: ChapterId) -> bool {
        let Some(key) = self.by_id.remove(&id) else {
            return false;
        };
        self.alive[key as usize / 64] &= !(1 << (key % 64));
        self.retired.push(key);
        true
    }

    #[inline]
    fn alive(&self, key: u32) -> bool {
        self.alive
            .get(key as usize / 64)
            .is_some_and(|w| w & (1 << (key % 64)) != 0)
    }

    fn live(&self) -> usize {
        self.by_id.len()
    }

    /// Appends the chapter table to a snapshot, a column at a time.
    ///
    /// # Panics
    /// If chapters await a compaction.
    fn write(&self, w: &mut Writer) {
        assert!(
            self.retired.is_empty(),
            "a snapshot holds compacted chapters"
        );
        let column = |f: fn(&ChapterMeta) -> i64| -> Vec<u64> {
            self.meta.iter().map(|m| f(m) as u64).collect()
        };
        w.u64s(&column(|m| m.id.0));
        w.u64s(&column(|m| m.work.0));
        w.u32s(self.meta.iter().map(|m| m.chars));
        w.u16s(self.meta.iter().map(|m| m.text_postings));
        w.u16s(self.meta.iter().map(|m| m.pinyin_postings));
        w.u8s(self.meta.iter().map(|m| m.sentences));
        w.u64s(&self.alive);
        w.u32s(self.free.iter().copied());
    }

    /// Reads what [`Chapters::write`] wrote and rebuilds the id map from it.
    fn read(r: &mut Reader<'_>) -> Result<Self, SnapshotError> {
        let ids = r.u64s()?;
        let works = r.u64s()?;
        let chars = r.u32s()?;
        let text = r.u16s()?;
        let pinyin = r.u16s()?;
        let sentences = r.u8s()?;
        let alive = r.u64s()?;
        let free = r.u32s()?;
        let n = ids.len();
        if [
            works.len(),
            chars.len(),
            text.len(),
            pinyin.len(),
            sentences.len(),
        ]
        .iter()
        .any(|&l| l != n)
            || n >= u32::MAX as usize
        {
            return Err(malformed("chapter columns of different lengths"));
        }
        let beyond = alive
            .last()
            .is_some_and(|&w| n % 64 != 0 && w >> (n % 64) != 0);
        if alive.len() != n.div_ceil(64) || beyond {
            return Err(malformed(format!(
                "{} words of live chapters for {n} chapters",
                alive.len()
            )));
        }
        let meta: Vec<ChapterMeta> = (0..n)
            .map(|i| ChapterMeta {
                id: ChapterId(ids[i] as i64),
                work: WorkId(works[i] as i64),
                chars: chars[i],
                text_postings: text[i],
                pinyin_postings: pinyin[i],
                sentences: sentences[i],
            })
            .collect();
        let mut chapters = Chapters {
            meta,
            alive,
            by_id: HashMap::new(),
            free: Vec::new(),
            retired: Vec::new(),
        };
        let live = chapters.alive.iter().map(|w| w.count_ones() as usize).sum();
        chapters.by_id.reserve(live);
        for key in 0..n as u32 {
            if chapters.alive(key)
                && chapters
                    .by_id
                    .insert(chapters.meta[key as usize].id, key)
                    .is_some()
            {
                return Err(malformed(format!(
                    "{} has two keys",
                    chapters.meta[key as usize].id
                )));
            }
        }
        let mut seen = vec![0u64; n.div_ceil(64)];
        for &key in &free {
            let (word, bit) = (key as usize / 64, 1u64 << (key % 64));
            if key as usize >= n || chapters.alive(key) || seen[word] & bit != 0 {
                return Err(malformed(format!("free key {key} is not a free key")));
            }
            seen[word] |= bit;
        }
        chapters.free = free;
        Ok(chapters)
    }

    fn memory_bytes(&self) -> usize {
        self.meta.capacity() * size_of::<ChapterMeta>()
            + self.alive.capacity() * 8
            + self.by_id.capacity() * (size_of::<(ChapterId, u32)>() + 1)
            + (self.free.capacity() + self.retired.capacity()) * 4
    }
}

/// Builds an [`Index`] from many chapters at once (start-up load from the store): postings are
/// sorted in large batches instead of going through the deltas, so loading is linear and the
/// transient memory stays near twice the final size of the largest table.
#[derive(Debug)]
pub struct IndexBuilder {
    settings: IndexSettings,
    chapters: Chapters,
    simhash: Vec<(u64, u32)>,
    lsh: PostingBuilder,
    sentences: PostingBuilder,
    text: PostingBuilder,
    pinyin: PostingBuilder,
}

impl IndexBuilder {
    /// A builder with `settings`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if a setting is out of range.
    pub fn new(settings: IndexSettings) -> Result<Self> {
        settings.validate().map_err(|e| e.in_section("index"))?;
        Ok(IndexBuilder {
            settings,
            chapters: Chapters::default(),
            simhash: Vec::new(),
            lsh: PostingBuilder::default(),
            sentences: PostingBuilder::default(),
            text: PostingBuilder::default(),
            pinyin: PostingBuilder::default(),
        })
    }

    /// Number of chapters added so far.
    pub fn len(&self) -> usize {
        self.chapters.live()
    }

    /// Whether no chapter was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds one chapter.
    ///
    /// # Errors
    /// [`Error::Conflict`] if the chapter was already added; [`Error::IncompatibleFingerprint`]
    /// if its fingerprint does not fit the settings; [`Error::Full`] past `u32::MAX - 1`
    /// chapters.
    pub fn add(&mut self, entry: &ChapterEntry<'_>) -> Result<ChapterKey> {
        if self.chapters.by_id.contains_key(&entry.id) {
            return Err(Error::Conflict(entry.id));
        }
        let probe = Probe::of_entry(&self.settings, entry)?;
        let key = self.chapters.allocate(entry, &probe)?;
        if probe.simhash != NO_SIMHASH {
            self.simhash.push((probe.simhash, key));
        }
        for (builder, keys) in [
            (&mut self.lsh, &probe.lsh),
            (&mut self.sentences, &probe.sentences),
            (&mut self.text, &probe.text),
            (&mut self.pinyin, &probe.pinyin),
        ] {
            for &k in keys {
                builder.push(k, key);
            }
        }
        Ok(ChapterKey(key))
    }

    /// Finishes the index.
    pub fn build(self) -> Index {
        let layout = SimHashLayout::plan(
            self.settings.simhash_max_distance,
            self.settings.expected_chapters.max(self.simhash.len()),
        );
        let mut chapters = self.chapters;
        chapters.meta.shrink_to_fit();
        chapters.by_id.shrink_to_fit();
        Index {
            simhash: SimHashIndex::build(layout, &self.simhash),
            lsh: self.lsh.finish(),
            sentences: self.sentences.finish(),
            text: self.text.finish(),
            pinyin: self.pinyin.finish(),
            settings: self.settings,
            chapters,
            epoch: next_epoch(),
        }
    }
}

/// The in-memory indexes over every registered chapter; see the [module docs](self).
///
/// Queries take `&self` and may run on many threads; updates take `&mut self` (wrap the index
/// in a lock, or build a new one and swap it in).
#[derive(Debug, Clone)]
pub struct Index {
    settings: IndexSettings,
    chapters: Chapters,
    simhash: SimHashIndex,
    lsh: PostingTable,
    sentences: PostingTable,
    text: PostingTable,
    pinyin: PostingTable,
    /// Which set of keys this is: new, from [`next_epoch`], at every build and every added
    /// chapter (removals only take keys away). What a [`crate::FirstLook`] checks its key
    /// filters against.
    epoch: u64,
}

/// A number no index had before in this process.
fn next_epoch() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The SimHash of a text without words; such chapters are left out of the SimHash tables
/// (thousands of empty or image-only chapters would all be each other's neighbours).
pub(crate) const NO_SIMHASH: u64 = 0;

/// A posting delta is merged when it exceeds this many postings or a 32nd of its table. A
/// delta posting costs about 20 bytes (hash map and chain) against 6 packed, so this keeps the
/// delta under a fifth of the table's memory; a merge rewrites the table (0.5 GB and well
/// under a second for the text postings of a million chapters), about every 30,000 added
/// chapters at that size.
const MIN_DELTA_MERGE: usize = 1 << 16;
const DELTA_SHARE: usize = 32;
/// The SimHash delta, scanned in full by every query, is merged past this many entries or a
/// 64th of the tables (16K at a million chapters: about 10 µs a query).
const MIN_SIMHASH_DELTA_MERGE: usize = 256;
/// Retired chapters are purged past this many or an eighth of the live ones.
const MIN_RETIRED_COMPACT: usize = 1024;

impl Index {
    /// An empty index.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if a setting is out of range.
    pub fn new(settings: IndexSettings) -> Result<Self> {
        Ok(IndexBuilder::new(settings)?.build())
    }

    /// The settings the index was built with.
    pub fn settings(&self) -> &IndexSettings {
        &self.settings
    }

    /// Number of chapters queries can find.
    pub fn len(&self) -> usize {
        self.chapters.live()
    }

    /// Whether the index holds no chapter.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `chapter` is in the index.
    pub fn contains(&self, chapter: ChapterId) -> bool {
        self.chapters.by_id.contains_key(&chapter)
    }

    /// The key of `chapter`, if it is in the index.
    pub fn key(&self, chapter: ChapterId) -> Option<ChapterKey> {
        self.chapters.by_id.get(&chapter).map(|&k| ChapterKey(k))
    }

    /// Adds a chapter, or replaces it if its id is already present (a changed chapter).
    ///
    /// # Errors
    /// [`Error::IncompatibleFingerprint`] if its fingerprint does not fit the settings (the
    /// index is unchanged); [`Error::Full`] past `u32::MAX - 1` chapter keys.
    pub fn add(&mut self, entry: &ChapterEntry<'_>) -> Result<ChapterKey> {
        let probe = Probe::of_entry(&self.settings, entry)?;
        self.epoch = next_epoch();
        self.chapters.retire(entry.id);
        let key = self.chapters.allocate(entry, &probe)?;
        if probe.simhash != NO_SIMHASH {
            self.simhash.insert(probe.simhash, key);
        }
        for (table, keys) in [
            (&mut self.lsh, &probe.lsh),
            (&mut self.sentences, &probe.sentences),
            (&mut self.text, &probe.text),
            (&mut self.pinyin, &probe.pinyin),
        ] {
            for &k in keys {
                table.insert(k, key);
            }
        }
        self.maintain();
        Ok(ChapterKey(key))
    }

    /// Removes a chapter; returns whether it was present. It stops matching at once.
    pub fn remove(&mut self, chapter: ChapterId) -> bool {
        let removed = self.chapters.retire(chapter);
        self.maintain();
        removed
    }

    /// Removes every chapter of `work`; returns how many there were. Scans the chapter table
    /// (a few milliseconds at a million chapters).
    pub fn remove_work(&mut self, work: WorkId) -> usize {
        let chapters = &self.chapters;
        let ids: Vec<ChapterId> = (0..chapters.meta.len() as u32)
            .filter(|&k| chapters.alive(k) && chapters.meta[k as usize].work == work)
            .map(|k| chapters.meta[k as usize].id)
            .collect();
        for &id in &ids {
            self.chapters.retire(id);
        }
        self.maintain();
        ids.len()
    }

    /// Removes every chapter whose work `keep` refuses (an index read whole, narrowed to a
    /// shard's works); returns how many were removed.
    pub fn retain_works(&mut self, keep: impl Fn(WorkId) -> bool) -> usize {
        let chapters = &self.chapters;
        let ids: Vec<ChapterId> = (0..chapters.meta.len() as u32)
            .filter(|&k| chapters.alive(k) && !keep(chapters.meta[k as usize].work))
            .map(|k| chapters.meta[k as usize].id)
            .collect();
        for &id in &ids {
            self.chapters.retire(id);
        }
        if !ids.is_empty() {
            self.compact();
        }
        ids.len()
    }

    /// Merges deltas that have grown and purges removed chapters once they are many; called
    /// after every update, so the amortised cost of an update stays constant.
    fn maintain(&mut self) {
        let live = self.len();
        if self.chapters.retired.len() >= MIN_RETIRED_COMPACT.max(live / 8) {
            self.compact();
            return;
        }
        if self.simhash.delta_len() >= MIN_SIMHASH_DELTA_MERGE.max(self.simhash.len() / 64) {
            self.merge_simhash();
        }
        self.merge_postings(false);
    }

    /// Merges the posting deltas that have grown (or all of them, with `all`), dropping
    /// removed chapters' postings on the way.
    fn merge_postings(&mut self, all: bool) {
        let chapters = &self.chapters;
        let keep = |v: u32| chapters.alive(v);
        for table in [
            &mut self.lsh,
            &mut self.sentences,
            &mut self.text,
            &mut self.pinyin,
        ] {
            if all || table.delta_len() >= MIN_DELTA_MERGE.max(table.packed_len() / DELTA_SHARE) {
                table.merge(Vec::new(), &keep);
            }
        }
    }

    fn merge_simhash(&mut self) {
        let layout = SimHashLayout::plan(
            self.settings.simhash_max_distance,
            self.settings.expected_chapters.max(self.len()),
        );
        let chapters = &self.chapters;
        self.simhash.merge(layout, &|v| chapters.alive(v));
    }

    /// Merges every delta and purges every removed chapter now, making their keys reusable
    /// and releasing spare memory. Updates do this on their own when it pays; call it after a
    /// large batch of updates to get the packed layout (and its memory figures) at once.
    pub fn compact(&mut self) {
        self.merge_simhash();
        self.merge_postings(true);
        let retired = std::mem::take(&mut self.chapters.retired);
        self.chapters.free.extend(retired);
        self.chapters.by_id.shrink_to_fit();
    }

    /// Whether every delta is merged and every removed chapter purged: what
    /// [`Index::compact`] leaves, and a fresh build.
    pub fn is_compact(&self) -> bool {
        self.chapters.retired.is_empty()
            && self.simhash.delta_len() == 0
            && [&self.lsh, &self.sentences, &self.text, &self.pinyin]
                .iter()
                .all(|t| t.delta_len() == 0)
    }

    /// Appends every table to a snapshot's payload (see [`crate::snapshot`]).
    ///
    /// # Panics
    /// If the index is not compact.
    pub(crate) fn write_payload(&self, w: &mut Writer) {
        self.chapters.write(w);
        self.simhash.write(w);
        for table in [&self.lsh, &self.sentences, &self.text, &self.pinyin] {
            table.write(w);
        }
    }

    /// Reads what [`Index::write_payload`] wrote, for `settings` (the snapshot's).
    pub(crate) fn read_payload(
        r: &mut Reader<'_>,
        settings: IndexSettings,
    ) -> std::result::Result<Self, SnapshotError> {
        settings
            .validate()
            .map_err(|e| malformed(format!("index settings: {e}")))?;
        let chapters = Chapters::read(r)?;
        let simhash = SimHashIndex::read(r, settings.simhash_max_distance)?;
        Ok(Index {
            chapters,
            simhash,
            lsh: PostingTable::read(r, "LSH buckets")?,
            sentences: PostingTable::read(r, "sentence map")?,
            text: PostingTable::read(r, "text postings")?,
            pinyin: PostingTable::read(r, "pinyin postings")?,
            settings,
            epoch: next_epoch(),
        })
    }

    /// Sizes and memory of each part.
    pub fn stats(&self) -> IndexStats {
        IndexStats {
            chapters: self.len(),
            retired: self.chapters.retired.len(),
            simhash_tables: self.simhash.layout().tables(),
            lsh_postings: self.lsh.len(),
            sentence_postings: self.sentences.len(),
            text_postings: self.text.len(),
            pinyin_postings: self.pinyin.len(),
            memory: MemoryUsage {
                chapters: self.chapters.memory_bytes(),
                simhash: self.simhash.memory_bytes(),
                lsh: self.lsh.memory_bytes(),
                sentences: self.sentences.memory_bytes(),
                text: self.text.memory_bytes(),
                pinyin: self.pinyin.memory_bytes(),
            },
        }
    }

    /// Which set of keys the index holds: a new number after each added chapter (removals
    /// keep it, as they only take keys away), unique in the process.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The text and the pinyin winnowing postings: what a first look's key filters are
    /// built from ([`crate::FirstLook`]).
    pub(crate) fn winnow_tables(&self) -> [&PostingTable; 2] {
        [&self.text, &self.pinyin]
    }

    /// Whether any LSH band, sentence, text or pinyin key of `probe` is held by a live
    /// chapter (a key held by more chapters than [`Index::candidates`] reads counts as not
    /// held, as there): a page without one can be a candidate through SimHash alone.
    pub fn any_posting(&self, probe: &Probe, settings: &CandidateSettings) -> bool {
        let max = settings.key_postings_cap(self.len());
        let dead = self.chapters.retired.len();
        let live = |key: u32| self.chapters.alive(key);
        let tables = [
            (&self.lsh, &probe.lsh),
            (&self.sentences, &probe.sentences),
            (&self.text, &probe.text),
            (&self.pinyin, &probe.pinyin),
        ];
        tables.iter().any(|(table, keys)| {
            keys.iter().any(|&k| {
                let mut held = false;
                table.for_each_live_capped(k, max, dead, &live, |_| held = true);
                held
            })
        })
    }

    /// The chapters the indexes relate to a page with keys `probe`, strongest evidence first,
    /// at most `settings.max_candidates`. A chapter qualifies through SimHash (distance within
    /// the index's maximum), LSH (one shared band), the sentence map (two of its longest
    /// sentences, or its only one) or at least `settings.min_posting_hits` shared winnowing
    /// fingerprints. Keys with longer posting lists than
    /// [`CandidateSettings::key_postings_cap`] are skipped, and so is a SimHash that as many
    /// chapters are near (boilerplate chapters), or that is 0 (a text without words).
    pub fn candidates(&self, probe: &Probe, settings: &CandidateSettings) -> Vec<Candidate> {
        let mut found: HashMap<u32, Evidence> = HashMap::with_capacity(64);
        let max = settings.key_postings_cap(self.len());
        let live = |key: u32| self.chapters.alive(key);
        if probe.simhash != NO_SIMHASH {
            let mut near = self.simhash.query(probe.simhash);
            near.retain(|&(key, _)| live(key));
            if near.len() <= max {
                for (key, d) in near {
                    found.entry(key).or_default().simhash_distance = Some(d);
                }
            }
        }
        let dead = self.chapters.retired.len();
        let mut count = |table: &PostingTable, keys: &[u32], tally: fn(&mut Evidence)| {
            for &k in keys {
                table.for_each_live_capped(k, max, dead, &live, |key| {
                    tally(found.entry(key).or_default())
                });
            }
        };
        count(&self.lsh, &probe.lsh, |e| e.lsh_bands += 1);
        count(&self.sentences, &probe.sentences, |e| e.sentences += 1);
        count(&self.text, &probe.text, |e| e.text_hits += 1);
        count(&self.pinyin, &probe.pinyin, |e| e.pinyin_hits += 1);
        let chapters = &self.chapters;
        rank(
            found
                .into_iter()
                // Found by SimHash (its entries are filtered here).
                .filter(|&(key, _)| chapters.alive(key))
                .map(|(key, evidence)| (key, &chapters.meta[key as usize], evidence)),
            settings,
        )
    }
}

/// The candidate rules applied to the evidence collected for one page: which chapters qualify
/// (a whole-chapter index found them, or `min_posting_hits` winnowing fingerprints), their
/// estimated coverage, and the strongest `max_candidates` of them. Shared by
/// [`Index::candidates`] and the batch query ([`crate::BatchQuery`]), so both give the same
/// candidates for the same evidence.
pub(crate) fn rank<'m>(
    found: impl Iterator<Item = (u32, &'m ChapterMeta, Evidence)>,
    settings: &CandidateSettings,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = found
        .filter_map(|(key, meta, mut evidence)| {
            let whole =
                evidence.whole_chapter() || (meta.sentences == 1 && evidence.sentences == 1);
            if !whole && evidence.text_hits + evidence.pinyin_hits < settings.min_posting_hits {
                return None;
            }
            let share = |hits: u32, postings: u16| {
                if postings == 0 {
                    0.0
                } else {
                    (hits as f64 / postings as f64).min(1.0)
                }
            };
            let contained = share(evidence.text_hits, meta.text_postings)
                .max(share(evidence.pinyin_hits, meta.pinyin_postings));
            evidence.estimated_coverage = if whole { 1.0 } else { contained as f32 };
            Some(Candidate {
                chapter: meta.id,
                work: meta.work,
                key: ChapterKey(key),
                chapter_chars: meta.chars as usize,
                evidence,
            })
        })
        .collect();
    // Containment first (length-neutral, so a long chapter with a few chance hits does not
    // push out a short one copied whole), then length, then id for a stable order.
    out.sort_unstable_by(|a, b| {
        b.evidence
            .estimated_coverage
            .total_cmp(&a.evidence.estimated_coverage)
            .then(b.chapter_chars.cmp(&a.chapter_chars))
            .then(a.chapter.cmp(&b.chapter))
    });
    out.truncate(settings.max_candidates);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fingerprint::{FingerprintSettings, Fingerprinter};

    fn fp() -> &'static Fingerprinter {
        static F: std::sync::OnceLock<Fingerprinter> = std::sync::OnceLock::new();
        F.get_or_init(|| Fingerprinter::new(FingerprintSettings::default()).unwrap())
    }

    const A: &str = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。";
    const B: &str = "诗曰：混沌未分天地乱，茫茫渺渺无人见。自从盘古破鸿蒙，开辟从兹清浊辨。覆载群生仰至仁，发明万物皆成善。欲知造化会元功，须看西游释厄传。盖闻天地之数，有十二万九千六百岁为一元。将一元分为十二会，乃子、丑、寅、卯、辰、巳、午、未、申、酉、戌、亥之十二支也。";

    fn probe_of(index: &Index, text: &str) -> Probe {
        let f = fp().fingerprint(text);
        let sentences: Vec<u64> = fingerprint::sentences::split_sentences(text)
            .map(|(_, s)| fingerprint::sentences::sentence_hash(fingerprint::normalize(s).text()))
            .collect();
        Probe::new(
            index.settings(),
            &f.summary,
            &sentences,
            &f.winnow,
            &f.pinyin_winnow,
        )
        .unwrap()
    }

    fn ids(index: &Index, text: &str) -> Vec<i64> {
        index
            .candidates(&probe_of(index, text), &CandidateSettings::default())
            .iter()
            .map(|c| c.chapter.0)
            .collect()
    }

    fn small_index() -> Index {
        let mut b = IndexBuilder::new(IndexSettings::default()).unwrap();
        for (i, t) in [A, B].iter().enumerate() {
            b.add(&ChapterEntry::new(
                ChapterId(i as i64 + 1),
                WorkId(10 + i as i64),
                &fp().fingerprint(t),
            ))
            .unwrap();
        }
        b.build()
    }

    #[test]
    fn finds_the_copied_chapter_only() {
        let index = small_index();
        assert_eq!(ids(&index, A), vec![1]);
        assert_eq!(ids(&index, &format!("广告。{B}上一章 下一章")), vec![2]);
        let c = index.candidates(&probe_of(&index, A), &CandidateSettings::default());
        assert_eq!(c[0].evidence.simhash_distance, Some(0));
        assert_eq!(c[0].evidence.lsh_bands, 20);
        assert!(c[0].evidence.text_hits > 0 && c[0].evidence.pinyin_hits > 0);
        assert_eq!(c[0].evidence.estimated_coverage, 1.0);
        assert!(ids(&index, "今天天气很好，我们一起去公园散步吧，然后去吃饭。").is_empty());
    }

    #[test]
    fn add_replace_remove_and_compact() {
        let mut index = small_index();
        assert!(index.remove(ChapterId(1)));
        assert!(!index.remove(ChapterId(1)));
        assert!(ids(&index, A).is_empty());
        assert_eq!(index.stats().retired, 1);
        // Re-adding under the same id, then replacing it with other text.
        index
            .add(&ChapterEntry::new(
                ChapterId(1),
                WorkId(10),
                &fp().fingerprint(A),
            ))
            .unwrap();
        assert_eq!(ids(&index, A), vec![1]);
        index
            .add(&ChapterEntry::new(
                ChapterId(1),
                WorkId(10),
                &fp().fingerprint(B),
            ))
            .unwrap();
        assert!(ids(&index, A).is_empty());
        let mut both = ids(&index, B);
        both.sort_unstable();
        assert_eq!(both, vec![1, 2]);
        index.compact();
        let stats = index.stats();
        assert_eq!((stats.chapters, stats.retired), (2, 0));
        // Keys of purged chapters are reused.
        let key = index
            .add(&ChapterEntry::new(
                ChapterId(3),
                WorkId(10),
                &fp().fingerprint(A),
            ))
            .unwrap();
        assert!(key.index() < 3, "{key:?}");
        assert_eq!(ids(&index, A), vec![3]);
        assert_eq!(index.remove_work(WorkId(10)), 2);
        assert_eq!(index.len(), 1);
        assert!(ids(&index, A).is_empty());
    }

    #[test]
    fn wordless_and_boilerplate_chapters_do_not_flood_candidates() {
        let mut b = IndexBuilder::new(IndexSettings::default()).unwrap();
        let empty = fp().fingerprint("！！！……　");
        assert_eq!(empty.summary.simhash, NO_SIMHASH);
        let boilerplate = fp().fingerprint(A);
        for i in 0..40 {
            b.add(&ChapterEntry::new(ChapterId(i), WorkId(1), &empty))
                .unwrap();
            b.add(&ChapterEntry::new(
                ChapterId(100 + i),
                WorkId(1),
                &boilerplate,
            ))
            .unwrap();
        }
        b.add(&ChapterEntry::new(
            ChapterId(1000),
            WorkId(2),
            &fp().fingerprint(B),
        ))
        .unwrap();
        let index = b.build();
        assert_eq!(index.stats().simhash_tables, 4);
        assert!(ids(&index, "？？").is_empty());
        // Forty chapters share every fingerprint of A (more than the cap of 32 for a small
        // index): A is common text, not evidence; B is still found.
        assert!(ids(&index, A).is_empty());
        assert_eq!(ids(&index, B), vec![1000]);
    }

    #[test]
    fn builder_refuses_duplicates_and_foreign_fingerprints() {
        let mut b = IndexBuilder::new(IndexSettings::default()).unwrap();
        let f = fp().fingerprint(A);
        b.add(&ChapterEntry::new(ChapterId(1), WorkId(1), &f))
            .unwrap();
        assert!(matches!(
            b.add(&ChapterEntry::new(ChapterId(1), WorkId(1), &f)),
            Err(Error::Conflict(ChapterId(1)))
        ));
        let mut old = f.clone();
        old.summary.normalizer_version = 0;
        let err = b
            .add(&ChapterEntry::new(ChapterId(2), WorkId(1), &old))
            .unwrap_err();
        assert!(err.to_string().contains("chapter 2"), "{err}");
        assert_eq!(b.len(), 1);
    }
}
