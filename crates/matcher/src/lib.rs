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
//! pinyin-symbol alignment); edited characters (winnowing and MinHash tolerate them, alignment
//! merges across the gaps); chapters split over pages or merged into one, partial copies
//! (postings count per chapter, coverage and page share). Short quotations fall below the
//! minimum matched characters.
//!
//! The `bench` crate builds pirate pages with each disguise from public-domain text and
//! measures recall and precision (`copyhound bench quality`; its `examples/quality.rs` prints
//! the table).
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

pub mod align;
pub mod batch;
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
