//! Batch mode: when many pages arrive at once (a WET file, a re-match of every stored page),
//! index the pages' keys instead of the chapters', and stream the registered chapters'
//! fingerprints past them once.
//!
//! [`BatchQuery`] holds, for each table (LSH bands, sentences, text and pinyin winnowing), the
//! map from each key of a page of the batch to the pages that hold it, and SimHash permuted
//! tables over the pages' SimHashes. Each chapter streamed past ([`BatchQuery::add`]) is
//! turned into the same keys an [`IndexBuilder`](crate::IndexBuilder) would index, and each of
//! its keys that a page holds is recorded under that key, with the chapter. At the end
//! ([`BatchQuery::finish`]) the evidence per (page, chapter) is tallied exactly as
//! [`Index::candidates`](crate::Index::candidates) tallies it, and the same ranking rule
//! (`index::rank`) picks each page's candidates.
//!
//! The result is **identical** to page-at-a-time matching against an index built from the same
//! chapters, including the rule that depends on the whole chapter index,
//! [`CandidateSettings::key_postings_cap`]: it is applied at the end, when the number of
//! chapters streamed and, for every key a page holds, the number of chapters that hold it
//! (its posting-list length in a chapter index) are known. A key held by more chapters than
//! `max_key_postings` (the cap's upper bound) stops recording them, so the memory per key is
//! bounded; the same for a page near more chapters by SimHash. Chapters that are not streamed
//! are not found: a removed chapter is simply one the store no longer hands over.
//!
//! [`CostModel`] says which mode is cheaper for a batch of B pages against C chapters.

use fingerprint::Winnow;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde::Serialize;

use crate::index::{ChapterMeta, NO_SIMHASH, Probe, rank};
use crate::settings::{CandidateSettings, IndexSettings, MatcherSettings};
use crate::simhash::{SimHashIndex, SimHashLayout};
use crate::{Candidate, ChapterEntry, Error, Evidence, Result};

/// One key of the batch: the pages that hold it and the chapters streamed so far that do.
#[derive(Debug, Default)]
struct Slot {
    /// Page indexes, once per occurrence in a page's keys (as a query reads it).
    pages: Vec<u32>,
    /// Chapter slots, once per occurrence in a chapter's keys (as an index posts it); no
    /// longer filled past `max_key_postings` entries.
    chapters: Vec<u32>,
    /// Occurrences in chapters: the key's posting-list length in a chapter index.
    held: usize,
}

/// A batch of pages matched by streaming the registered chapters past them; see the
/// [module docs](self).
#[derive(Debug)]
pub struct BatchQuery {
    index: IndexSettings,
    candidates: CandidateSettings,
    pages: usize,
    simhash: SimHashIndex,
    /// Per page, the chapters near its SimHash (chapter slot, distance); not filled past
    /// `max_key_postings` entries.
    near: Vec<Vec<(u32, u32)>>,
    /// LSH bands, sentences, text and pinyin winnowing keys.
    tables: [HashMap<u32, Slot>; 4],
    /// The chapters that hit a key of the batch, by slot.
    chapters: Vec<ChapterMeta>,
    seen: HashSet<crate::ChapterId>,
    streamed: usize,
}

impl BatchQuery {
    /// A batch over the keys of `pages` (from [`crate::Matcher::probe`], or [`Probe::new`]
    /// with `settings.index`).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if a setting is out of range.
    pub fn new(settings: &MatcherSettings, pages: &[Probe]) -> Result<Self> {
        settings.validate()?;
        let mut tables: [HashMap<u32, Slot>; 4] = std::array::from_fn(|_| HashMap::new());
        let mut simhashes = Vec::new();
        for (i, probe) in pages.iter().enumerate() {
            let i = u32::try_from(i).map_err(|_| Error::Full)?;
            if probe.simhash != NO_SIMHASH {
                simhashes.push((probe.simhash, i));
            }
            for (table, keys) in tables.iter_mut().zip(keys_of(probe)) {
                for &k in keys {
                    table.entry(k).or_default().pages.push(i);
                }
            }
        }
        let layout = SimHashLayout::plan(settings.index.simhash_max_distance, simhashes.len());
        Ok(BatchQuery {
            index: settings.index.clone(),
            candidates: settings.candidates.clone(),
            pages: pages.len(),
            simhash: SimHashIndex::build(layout, &simhashes),
            near: vec![Vec::new(); pages.len()],
            tables,
            chapters: Vec::new(),
            seen: HashSet::new(),
            streamed: 0,
        })
    }

    /// Pages in the batch.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Chapters streamed past the batch so far.
    pub fn chapters(&self) -> usize {
        self.streamed
    }

    /// Streams one registered chapter past the batch.
    ///
    /// # Errors
    /// As [`crate::IndexBuilder::add`]: [`Error::Conflict`] if the chapter was already
    /// streamed; [`Error::IncompatibleFingerprint`] if its fingerprint does not fit the
    /// settings (the chapter is then left out, as a loader leaves it out of the index).
    pub fn add(&mut self, entry: &ChapterEntry<'_>) -> Result<()> {
        if self.seen.contains(&entry.id) {
            return Err(Error::Conflict(entry.id));
        }
        let probe = Probe::of_entry(&self.index, entry)?;
        self.seen.insert(entry.id);
        self.streamed += 1;
        let cap = self.candidates.max_key_postings;
        let mut slot = None;
        let mut slot_of = |chapters: &mut Vec<ChapterMeta>| {
            *slot.get_or_insert_with(|| {
                chapters.push(ChapterMeta::new(entry, &probe));
                (chapters.len() - 1) as u32
            })
        };
        if probe.simhash != NO_SIMHASH {
            for (page, d) in self.simhash.query(probe.simhash) {
                let near = &mut self.near[page as usize];
                if near.len() <= cap {
                    near.push((slot_of(&mut self.chapters), d));
                }
            }
        }
        for (table, keys) in self.tables.iter_mut().zip(keys_of(&probe)) {
            for k in keys {
                if let Some(s) = table.get_mut(k) {
                    s.held += 1;
                    if s.chapters.len() <= cap {
                        s.chapters.push(slot_of(&mut self.chapters));
                    }
                }
            }
        }
        Ok(())
    }

    /// Streams a freshly computed chapter fingerprint past the batch; see [`BatchQuery::add`].
    ///
    /// # Errors
    /// As [`BatchQuery::add`].
    pub fn add_parts(
        &mut self,
        id: crate::ChapterId,
        work: crate::WorkId,
        summary: &fingerprint::FingerprintSummary,
        winnow: &[Winnow],
        pinyin_winnow: &[Winnow],
    ) -> Result<()> {
        self.add(&ChapterEntry {
            id,
            work,
            summary,
            winnow,
            pinyin_winnow,
        })
    }

    /// Each page's candidates, in the order of the pages given to [`BatchQuery::new`]: what
    /// [`Index::candidates`](crate::Index::candidates) gives for it over an index of the
    /// chapters streamed. [`Candidate::key`] is the chapter's slot in this batch, not a key of
    /// any index.
    pub fn finish(self) -> Vec<Vec<Candidate>> {
        let max = self.candidates.key_postings_cap(self.streamed);
        let mut found: Vec<HashMap<u32, Evidence>> = vec![HashMap::new(); self.pages];
        for (page, near) in self.near.into_iter().enumerate() {
            if near.len() <= max {
                for (chapter, d) in near {
                    found[page].entry(chapter).or_default().simhash_distance = Some(d);
                }
            }
        }
        let tallies: [fn(&mut Evidence); 4] = [
            |e| e.lsh_bands += 1,
            |e| e.sentences += 1,
            |e| e.text_hits += 1,
            |e| e.pinyin_hits += 1,
        ];
        for (table, tally) in self.tables.iter().zip(tallies) {
            for slot in table.values() {
                if slot.held == 0 || slot.held > max {
                    continue;
                }
                for &page in &slot.pages {
                    let found = &mut found[page as usize];
                    for &chapter in &slot.chapters {
                        tally(found.entry(chapter).or_default());
                    }
                }
            }
        }
        let chapters = &self.chapters;
        found
            .into_iter()
            .map(|evidence| {
                rank(
                    evidence
                        .into_iter()
                        .map(|(slot, e)| (slot, &chapters[slot as usize], e)),
                    &self.candidates,
                )
            })
            .collect()
    }
}

fn keys_of(probe: &Probe) -> [&[u32]; 4] {
    [&probe.lsh, &probe.sentences, &probe.text, &probe.pinyin]
}

/// Which way a batch of pages is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One page at a time against the index of every chapter.
    Page,
    /// The chapters streamed past an index of the batch ([`BatchQuery`]).
    Batch,
}

impl Mode {
    /// `page` or `batch`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Page => "page",
            Mode::Batch => "batch",
        }
    }
}

/// The CPU cost of matching B pages against C chapters each way, up to candidates
/// (verification costs the same both ways and is left out), in nanoseconds per unit.
/// Measured by `crates/bench/benches/batch.rs` (the figures are in the crate docs); reading the
/// chapters' fingerprints from the store costs the same for a build and for a stream and is
/// left out too.
///
/// * page-at-a-time: `B × page_query + (C × chapter_build unless the index is loaded)`;
/// * batch: `B × batch_page + C × chapter_stream`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostModel {
    /// One page's candidate query against a chapter index ([`crate::Matcher::candidates`]).
    pub page_query_ns: f64,
    /// One chapter added to an [`crate::IndexBuilder`], its share of `build` included.
    pub chapter_build_ns: f64,
    /// One page's keys added to a [`BatchQuery`], its share of `finish` included.
    pub batch_page_ns: f64,
    /// One chapter streamed past a batch ([`BatchQuery::add`]).
    pub chapter_stream_ns: f64,
}

impl Default for CostModel {
    /// The figures `cargo bench --workspace --bench batch --profile dev` measured on the
    /// reference machine (2 shared cores; 40,000 synthetic chapters of about 2,700 characters,
    /// pirate pages of every kind); what matters is their ratios.
    fn default() -> Self {
        CostModel {
            page_query_ns: 57_700.0,
            chapter_build_ns: 21_700.0,
            batch_page_ns: 13_800.0,
            chapter_stream_ns: 10_500.0,
        }
    }
}

impl CostModel {
    /// Nanoseconds to match `pages` one at a time against `chapters`, with the chapter index
    /// already in memory (`loaded`) or built first.
    pub fn page_cost(&self, pages: usize, chapters: usize, loaded: bool) -> f64 {
        let build = if loaded {
            0.0
        } else {
            chapters as f64 * self.chapter_build_ns
        };
        pages as f64 * self.page_query_ns + build
    }

    /// Nanoseconds to match `pages` as a batch, streaming `chapters` past them.
    pub fn batch_cost(&self, pages: usize, chapters: usize) -> f64 {
        pages as f64 * self.batch_page_ns + chapters as f64 * self.chapter_stream_ns
    }

    /// Nanoseconds to match `pages` in batches of at most `batch_pages` (what memory
    /// allows), streaming `chapters` past each batch: at least one stream.
    pub fn batches_cost(&self, pages: usize, chapters: usize, batch_pages: usize) -> f64 {
        let batches = pages.div_ceil(batch_pages.max(1)).max(1);
        pages as f64 * self.batch_page_ns
            + (batches as f64) * chapters as f64 * self.chapter_stream_ns
    }

    /// The cheaper mode; page-at-a-time when they cost the same (nothing to stream).
    pub fn choose(&self, pages: usize, chapters: usize, loaded: bool) -> Mode {
        self.choose_batched(pages, chapters, loaded, usize::MAX)
    }

    /// [`CostModel::choose`] when a batch holds at most `batch_pages` pages: the chapters are
    /// streamed once per batch ([`CostModel::batches_cost`]).
    pub fn choose_batched(
        &self,
        pages: usize,
        chapters: usize,
        loaded: bool,
        batch_pages: usize,
    ) -> Mode {
        if self.batches_cost(pages, chapters, batch_pages) < self.page_cost(pages, chapters, loaded)
        {
            Mode::Batch
        } else {
            Mode::Page
        }
    }

    /// The fewest pages for which batch mode is cheaper against `chapters` chapters, `None`
    /// when it never is (a loaded index and a batch page dearer than a query).
    pub fn crossover(&self, chapters: usize, loaded: bool) -> Option<usize> {
        let per_page = self.page_query_ns - self.batch_page_ns;
        let fixed = chapters as f64 * self.chapter_stream_ns
            - if loaded {
                0.0
            } else {
                chapters as f64 * self.chapter_build_ns
            };
        if fixed < 0.0 {
            return Some(1); // streaming a chapter is cheaper than building it
        }
        if per_page <= 0.0 {
            return None;
        }
        Some((fixed / per_page).floor() as usize + 1)
    }
}

/// A mode forced by a setting or flag, or chosen by the [`CostModel`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeChoice {
    /// By the cost model.
    #[default]
    Auto,
    /// Always page-at-a-time.
    Page,
    /// Always batch.
    Batch,
}

impl ModeChoice {
    /// The mode for `pages` against `chapters`, in batches of at most `batch_pages`.
    pub fn resolve(
        self,
        model: &CostModel,
        pages: usize,
        chapters: usize,
        loaded: bool,
        batch_pages: usize,
    ) -> Mode {
        match self {
            ModeChoice::Auto => model.choose_batched(pages, chapters, loaded, batch_pages),
            ModeChoice::Page => Mode::Page,
            ModeChoice::Batch => Mode::Batch,
        }
    }
}

impl std::str::FromStr for ModeChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(ModeChoice::Auto),
            "page" => Ok(ModeChoice::Page),
            "batch" => Ok(ModeChoice::Batch),
            other => Err(format!("{other:?} is not a mode: give auto, page or batch")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chooser_follows_the_model() {
        let m = CostModel {
            page_query_ns: 10.0,
            chapter_build_ns: 8.0,
            batch_page_ns: 2.0,
            chapter_stream_ns: 4.0,
        };
        // Loaded: batch pays 4 a chapter, saves 8 a page: cheaper past C / 2 pages.
        assert_eq!(m.crossover(1000, true), Some(501));
        assert_eq!(m.choose(500, 1000, true), Mode::Page);
        assert_eq!(m.choose(501, 1000, true), Mode::Batch);
        assert!(m.batch_cost(501, 1000) < m.page_cost(501, 1000, true));
        assert!(m.batch_cost(500, 1000) >= m.page_cost(500, 1000, true));
        // Not loaded: streaming a chapter is cheaper than building it, so batch from 1 page.
        assert_eq!(m.crossover(1000, false), Some(1));
        assert_eq!(m.choose(1, 1000, false), Mode::Batch);
        // Nothing registered or nothing to match: page mode (costs are equal).
        assert_eq!(m.choose(0, 1000, true), Mode::Page);
        assert_eq!(m.choose(10, 0, true), Mode::Batch);
        // A batch page dearer than a query: never batch against a loaded index.
        let dear = CostModel {
            batch_page_ns: 20.0,
            ..m
        };
        assert_eq!(dear.crossover(1000, true), None);
        assert_eq!(dear.choose(1_000_000, 1000, true), Mode::Page);
        // Forced modes ignore the model.
        let all = usize::MAX;
        assert_eq!(
            ModeChoice::Page.resolve(&m, 10_000, 1, true, all),
            Mode::Page
        );
        assert_eq!(
            ModeChoice::Batch.resolve(&m, 1, 10_000, true, all),
            Mode::Batch
        );
        assert_eq!(
            ModeChoice::Auto.resolve(&m, 1, 10_000, true, all),
            Mode::Page
        );
        // Batches of at most 100 pages stream the chapters once each: 1,000 pages against
        // 1,000 chapters cost 2 × 1,000 + 10 × 4 × 1,000 = 42,000 in batches, 18,000 built.
        assert_eq!(m.batches_cost(1000, 1000, 100), 42_000.0);
        assert_eq!(m.batches_cost(0, 1000, 100), m.batch_cost(0, 1000));
        assert_eq!(
            ModeChoice::Auto.resolve(&m, 1000, 1000, false, all),
            Mode::Batch
        );
        assert_eq!(
            ModeChoice::Auto.resolve(&m, 1000, 1000, false, 100),
            Mode::Page
        );
        assert_eq!("batch".parse::<ModeChoice>(), Ok(ModeChoice::Batch));
        assert!("fast".parse::<ModeChoice>().is_err());
    }
}
