//! Finds, fast and with proof, which registered chapters a crawled page copies.
//!
//! The matcher sits between fingerprinting and reporting: the store feeds it every registered
//! chapter's fingerprints (from the `fingerprint` crate) at start-up and as works change; the
//! analysis stage hands it each crawled page's main text; it answers with the chapters the page
//! copies, how much of each, and the copied passages side by side (byte ranges in both
//! originals). It does no I/O: chapter texts for verification come through [`ChapterSource`].
//!
//! A query runs in three steps:
//!
//! 1. **Candidates** ([`Index::candidates`]): four in-memory indexes over the chapters'
//!    fingerprints ([`index`]) — SimHash permuted tables ([`simhash`]), MinHash LSH buckets,
//!    the map of each chapter's longest sentences, and sampled winnowing postings of the text
//!    and of its pinyin — each name chapters related to the page; the strongest few are kept.
//! 2. **Verification** ([`Matcher::verify`]): each candidate's text is normalised and aligned
//!    with the page ([`align`]), giving exact runs merged into passages, matched characters,
//!    the chapter's coverage and a score.
//! 3. **Selection** ([`Matcher::select`]): chapters that pass the report thresholds (minimum
//!    matched characters; minimum coverage of the chapter, or minimum share of the page) and
//!    whose passages are not already explained by a better match become [`Match`]es.
//!
//! Main types: [`IndexBuilder`] fed with [`ChapterEntry`]s (the start-up load from the store),
//! [`Index`] (incremental add, replace, remove), [`Matcher`] (queries on a prepared [`Page`]),
//! [`Match`] and [`AlignedSpan`] (results), [`Index::to_snapshot`] and [`Index::from_snapshot`]
//! (the index as one checked file that a worker loads instead of rebuilding it, [`snapshot`]),
//! [`ChapterSource`] (chapter texts; an asynchronous store can instead call
//! [`Matcher::candidates`], fetch the texts in one query, then [`Matcher::verify`] and
//! [`Matcher::select`]), [`MatcherSettings`] (every threshold, with its default).
//!
//! Disguises pirates use and what catches them: ads and navigation around or inside the
//! chapter (winnowing postings, containment instead of similarity); traditional script,
//! full-width letters, punctuation and spacing (normalisation); homophones (pinyin postings and
//! pinyin-symbol alignment); look-alikes an OCR engine confuses on a chapter served as
//! images (己/已/巳, 未/末, 0/o: [`confusable`], equal in verification); edited characters (winnowing and MinHash tolerate them, alignment
//! merges across the gaps); chapters split over pages or merged into one, partial copies
//! (postings count per chapter, coverage and page share); a remapped font (a page's Private
//! Use Area characters align as [`WILDCARD`]s with the chapter's characters they replace).
//! Short quotations fall below the minimum matched characters.
//!
//! It may use `fingerprint` and `bounds`. The `bench` crate builds pirate pages with each
//! disguise from public-domain text and measures recall and precision (`copyhound bench
//! quality`; its `examples/quality.rs` prints the table); the quality and scale harnesses
//! live there too. The index's memory, table by table, is in the [`index`] docs.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use fingerprint::{FingerprintSettings, Fingerprinter};
//! use matcher::{ChapterEntry, ChapterId, IndexBuilder, Matcher, MatcherSettings, MemorySource, WorkId};
//!
//! let fingerprinter = Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap());
//! let mut settings = MatcherSettings::default();
//! // The example chapter is short (251 normalised characters); real ones are thousands.
//! settings.report.min_matched_chars = 200;
//! let chapter = "話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦。及秦滅之後，楚、漢分爭，又并入於漢。\
//!     漢朝自高祖斬白蛇而起義，一統天下，後來光武中興，傳至獻帝，遂分為三國。推其致亂之由，殆始於桓、靈二帝。\
//!     桓帝禁錮善類，崇信宦官。及桓帝崩，靈帝即位，大將軍竇武、太傅陳蕃共相輔佐。時有宦官曹節等弄權，竇武、陳蕃謀誅之，\
//!     機事不密，反為所害，中涓自此愈橫。建寧二年四月望日，帝御溫德殿。方陞座，殿角狂風驟起。只見一條大青蛇，\
//!     從梁上飛將下來，蟠於椅上。帝驚倒，左右急救入宮，百官俱奔避。須臾，蛇不見了。忽然大雷大雨，加以冰雹，\
//!     落到半夜方止，壞卻房屋無數。建寧四年二月，洛陽地震；又海水泛溢，沿海居民，盡被大浪捲入海中。";
//!
//! // Start-up: load every registered chapter (here one) into the index.
//! let mut builder = IndexBuilder::new(settings.index.clone()).unwrap();
//! let fp = fingerprinter.fingerprint(chapter);
//! builder.add(&ChapterEntry::new(ChapterId(7), WorkId(1), &fp)).unwrap();
//! let matcher = Matcher::new(settings, fingerprinter, builder.build()).unwrap();
//! let mut texts = MemorySource::new();
//! texts.insert(ChapterId(7), chapter);
//!
//! // A pirate page: simplified script, an ad in front.
//! let page = "【本站首发】最新章节请访问！话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。\
//!     及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。\
//!     推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。\
//!     时有宦官曹节等弄权，窦武、陈蕃谋诛之，机事不密，反为所害，中涓自此愈横。建宁二年四月望日，帝御温德殿。\
//!     方升座，殿角狂风骤起。只见一条大青蛇，从梁上飞将下来，蟠于椅上。帝惊倒，左右急救入宫，百官俱奔避。\
//!     须臾，蛇不见了。忽然大雷大雨，加以冰雹，落到半夜方止，坏却房屋无数。建宁四年二月，洛阳地震；\
//!     又海水泛溢，沿海居民，尽被大浪卷入海中。";
//! let matches = matcher.check(page, &texts).unwrap();
//! assert_eq!(matches.len(), 1);
//! let m = &matches[0];
//! assert_eq!(m.chapter, ChapterId(7));
//! assert!(m.coverage > 0.95 && m.score > 0.95);
//! // The first passage starts where the copied text starts, in both texts.
//! let span = &m.spans[0];
//! assert!(page[span.page.clone()].starts_with("话说天下大势"));
//! assert!(chapter[span.chapter.clone()].starts_with("話說天下大勢"));
//! ```
//!
//! # Scans of many pages
//!
//! A scan of pages that are nearly all innocent (a Common Crawl WET file) asks each page a
//! first look before the full fingerprint: [`Matcher::may_match`], or the same answer cheaper
//! through a [`FirstLook`] while the winnowing tables are small (up to about 1,600 chapters).
//! When many pages arrive at once, batch mode ([`batch`]) indexes the pages instead and
//! streams the chapters' stored fingerprints past them once; its candidates are identical to
//! page-at-a-time ones, and [`Matcher::verify_candidates`] verifies them. [`CostModel`]
//! chooses between the two ([`ModeChoice`]: auto, page, batch):
//!
//! - page-at-a-time costs `B × page_query (+ C × chapter_build unless the index is loaded)`,
//!   batch `B × batch_page + C × chapter_stream` (verification and the store reads cost the
//!   same both ways);
//! - with the index not loaded, batch is cheaper from one page; with it loaded, from
//!   B ≈ 0.24 × C (2,400 pages at 10^4 chapters, 240,000 at 10^6). So a worker with the index
//!   loaded keeps page-at-a-time for a WET file (~40,000 records) unless fewer than ~160,000
//!   chapters are registered, and a one-off re-match of many pages in a process that has not
//!   loaded the index is cheaper in batch mode.
//!
//! The callers choose with it: `copyhound rematch --mode auto|page|batch [--batch-pages N]`
//! (batches of at most N pages, 2,000 by default, so the chapters are streamed once a batch)
//! and `discover commoncrawl --mode …` with the `ScanWet` job (`[discovery] wet_mode`,
//! `wet_batch_records`), whose `auto` takes the first look against the loaded index and
//! matches each batch of the records that pass the cheaper way: the first look turns away
//! nearly every record at ~145 MB/s, where batch mode would fingerprint every one.
//!
//! Tests: `tests/first_look.rs` (the first look's answer is `may_match`'s), `bench`'s
//! `tests/batch.rs` (batch candidates and matches equal page-at-a-time ones on every kind of
//! pirate page, removed chapters and works, caps of one key posting, an empty batch), and the
//! pipeline's re-match and discovery tests on both backends.
//!
//! # Measurements
//!
//! WET text scanned on one core (`cargo bench -p pipeline --bench wet`, release, AMD EPYC,
//! machine otherwise idle): `wet/read` 346 MiB/s; `wet/scan` (Chinese records, first look
//! filtering) 136 → 145 MiB/s with the coarse bits; `wet/scan_large_index` (2,003 chapters,
//! past the filters) 79.6 → 104 MiB/s with `grams_of_text`. Winnowing first and testing only
//! the winnowed keys was tried and is slower on both (121 and 58 MiB/s): the two sliding
//! minimums cost more than the bit tests they save.
//!
//! English (one byte a character, so three times the k-grams a byte) went past 100 MiB/s by
//! removing the branches the processor kept mispredicting (cachegrind on 8.4 MB of English:
//! 8.27 M mispredicted branches in the first look, about one a character, down to 0.44 M):
//! `fingerprint::hash::for_each_window` carries the hash of a window's first k−1 symbols, so
//! its closure is called at one place and inlined; `scan_grams` runs one loop per stream;
//! [`FirstLook`] tests the coarse bit first (rarely set, so predicted), then the sample, then
//! the fine bits; ASCII runs are normalised through a 128-entry table. Answers are unchanged
//! (property test `ascii_runs_normalise_and_hash_as_the_general_path`). Same machine, idle,
//! before and after: `wet/scan_english` 70.5 → 111.9 MiB/s, `wet/scan` 183 → 189,
//! `wet/scan_large_index` 138 → 131 (5% slower, a cost not yet found on the path past the
//! filters), `wet/read` 441 → 428. `cargo run --release -p matcher --example first_look_scan
//! -- english 5` runs the first look alone, small enough for callgrind.
//!
//! Snapshots against a build from the store (`copyhound bench index --json`: `load_s_store`
//! decodes synthetic stored rows in memory and builds, no database; `load_s_snapshot` reads
//! the file from the page cache, checks its SHA-256 and copies the arrays; two shared cores,
//! another build running):
//!
//! | chapters | snapshot | `load_s_store` | `load_s_snapshot` | |
//! |---:|---:|---:|---:|---:|
//! | 2·10^5 | 159 MB (795 B a chapter) | 15.4 s | 0.87 s | 17.7× |
//! | 10^6 | 777 MB (777 B a chapter) | 170.5 s | 5.98 s | 28.5× |
//!
//! Batch mode against page-at-a-time, up to candidates (`cargo bench --workspace --bench batch
//! --profile dev -- --warm-up-time 1 --measurement-time 2`; dev profile, 2 shared cores;
//! 40,000 synthetic chapters, pirate pages) fits page_query 57.7 µs, chapter_build 21.7 µs,
//! batch_page 13.8 µs and chapter_stream 10.5 µs (streaming a chapter is mostly computing its
//! keys, as a build does, without the posting sort), the [`CostModel`] defaults. Measured grid
//! (ms, candidates only):
//!
//! | B \ C | 2,000 | 10,000 | 40,000 |
//! |---:|---|---|---|
//! | 10 | page 0.4, batch 20.1 | page 0.9, batch 94.7 | page 0.9, batch 440.6 |
//! | 1,000 | page 16.7, batch 41.4 | page 35.0, batch 121.3 | page 57.3, batch 503.7 |
//! | 4,000 | page 74.2, batch 74.5 | page 130.2, batch 187.8 | page 207.3, batch 519.7 |

pub mod align;
pub mod batch;
pub mod confusable;
mod first_look;
mod ids;
pub mod index;
mod matching;
pub mod settings;
pub mod simhash;
pub mod snapshot;
mod source;

mod packed;
mod postings;

pub use batch::{BatchQuery, CostModel, Mode, ModeChoice};
pub use first_look::FirstLook;
pub use ids::{ChapterId, ChapterKey, WorkId};
pub use index::{
    Candidate, ChapterEntry, Evidence, Index, IndexBuilder, IndexStats, MemoryUsage, Probe,
};
pub use matching::{AlignedSpan, Match, Matcher, Page, Verification, WILDCARD, is_private_use};
pub use settings::{
    AlignSettings, CandidateSettings, IndexSettings, MatcherSettings, ReportSettings,
};
pub use snapshot::{SnapshotError, SnapshotHeader};
pub use source::{ChapterSource, MemorySource, SourceError};

/// Errors of the matcher.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting is out of range.
    #[error("invalid matcher settings: {0}")]
    OutOfRange(#[from] bounds::OutOfRange),
    /// The index, or the fingerprints, do not fit the settings.
    #[error("invalid matcher settings: {0}")]
    InvalidSettings(String),
    /// A fingerprint cannot be indexed or compared with these settings (another normaliser
    /// version, a MinHash too short for the LSH bands).
    #[error("incompatible fingerprint: {0}")]
    IncompatibleFingerprint(String),
    /// The chapter is already in the index being built.
    #[error("{0} was added twice; each chapter is loaded once")]
    Conflict(ChapterId),
    /// Every `u32` chapter key is in use.
    #[error("the index holds u32::MAX - 1 chapter keys, its limit; shard the index")]
    Full,
    /// The [`ChapterSource`] failed to read a candidate's text.
    #[error("reading the text of {chapter} failed: {source}")]
    Source {
        /// The chapter being read.
        chapter: ChapterId,
        /// What the source reported.
        #[source]
        source: SourceError,
    },
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
