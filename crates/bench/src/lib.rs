//! Every benchmark and quality harness of copyhound, in one crate that no product crate
//! depends on: the binary's `copyhound bench …` commands parse their flags, call a function
//! here and print what it returns; examples, criterion benches and tests use the same pieces.
//!
//! It sits beside the data flow, above all of it: it feeds the product crates made-up pirate
//! pages and times or scores what they do with them. It may use `pipeline`, `crawler`,
//! `import`, `matcher`, `fingerprint`, `store`, `ingest`, `bounds` and `testkit` (feature
//! `fonts`, for the remapped-font pages).
//!
//! # Modules
//!
//! - [`samples`]: the public-domain novels under `crates/bench/data`, compiled in once, and
//!   real novel-site pages.
//! - [`pirate`]: a [`Corpus`] of novels cut into chapters and the pirate pages made from it
//!   with each disguise and negatives ([`Case`], [`pirate_pages`], [`pirate::excerpt_pages`]),
//!   among them issue #27's script-built, CSS-ordered, remapped-font and GBK-as-iso-8859-1
//!   pages.
//! - [`quality`]: recall and precision per case ([`QualityReport`]) of a matcher in memory
//!   ([`quality::evaluate`]) or of `check`'s whole pipeline over HTML files
//!   (`bench quality`, [`quality::run`]); [`html`] writes the pages as a pirate site's files,
//!   a remapped-font page with its font beside it.
//! - [`whole_pipeline`]: `bench pipeline`, the pages served on 127.0.0.1 and crawled into a
//!   fresh (or an empty `--store`) database with the match queue served beside.
//! - [`throughput`]: `bench fingerprint` (every fingerprint kind over a directory, by default
//!   the sample compiled in) and `bench extract` (parsing and main-text extraction);
//!   [`matching`]: `bench match`, `check`'s pipeline.
//! - [`synthetic`] chapters for scale, and [`load`]: `bench load`, the index's start-up load
//!   over a SQLite store of them; [`index`]: `bench index`, the in-memory index's bytes, load
//!   (from the store and from a snapshot), page p99 and recall at scale.
//! - [`demo`]: the pages of `copyhound demo`'s sites.
//! - [`cli`]: the flags of `copyhound bench …` and what each subcommand prints (the binary
//!   hands it the settings and standard output).
//!
//! Harnesses take typed options and the sections of the settings they need ([`Sections`]),
//! return serde structs (what `--json` prints) and report errors with `anyhow`: nobody acts
//! on a harness's failure but by reading it. What they say while they run goes to a
//! [`Progress`] the caller picks (standard error, or nothing).
//!
//! # Beside the library
//!
//! - `examples/quality.rs` prints the recall and precision table; `examples/scale.rs` the
//!   matcher's figures at scale (bytes a chapter, p99, recall).
//! - `benches/matcher.rs` times whole queries at 10^5 chapters, `benches/batch.rs` batch mode
//!   against page-at-a-time matching, `benches/render.rs` the rendered fetch.
//! - `tests/evasions.rs` runs the matcher on every disguise, `tests/batch.rs` checks batch
//!   mode against page-at-a-time matching, `tests/harnesses.rs` runs `bench pipeline` on
//!   both backends and `bench load`.
//!
//! # Example
//!
//! ```
//! use bench::quality::{evaluate, register};
//! use bench::{Case, pirate_pages, samples};
//! use fingerprint::{FingerprintSettings, Fingerprinter};
//! use matcher::MatcherSettings;
//! use std::sync::Arc;
//!
//! // Two novels of the sample: one registered, one not.
//! let mut corpus = bench::Corpus::new();
//! for sample in [&samples::SAMPLE[1], &samples::SAMPLE[5]] {
//!     corpus.add(sample.title(), sample.text, sample.registered, 12_000);
//! }
//! let fingerprinter = Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap());
//! let (matcher, texts) = register(&corpus, fingerprinter, MatcherSettings::default(), 2).unwrap();
//! let pages = pirate_pages(&corpus, 1, 7);
//! let report = evaluate(&matcher, &texts, &pages, 2).unwrap();
//! assert_eq!(report.stats(Case::Verbatim).recall(), 1.0);
//! assert_eq!(report.stats(Case::OtherNovel).reported, 0);
//! ```

pub mod cli;
pub mod demo;
pub mod drawn;
pub mod html;
pub mod index;
pub mod load;
pub mod matching;
pub mod pirate;
pub mod quality;
pub mod samples;
pub mod synthetic;
pub mod throughput;
pub mod whole_pipeline;

pub use pirate::{Case, Corpus, CorpusChapter, PiratePage, pirate_pages};
pub use quality::{CaseStats, QualityReport};

/// Where a harness says what it is doing or what it skipped, a line at a time (the binary
/// writes them to standard error; `--json` runs and tests may drop them).
pub type Progress<'a> = &'a (dyn Fn(&str) + Sync);

/// The configured sections of the settings a harness runs the product with (the binary
/// passes its own).
#[derive(Debug, Clone, Copy)]
pub struct Sections<'a> {
    /// How chapters and pages are fingerprinted.
    pub fingerprint: &'a fingerprint::FingerprintSettings,
    /// The index and the report thresholds.
    pub matcher: &'a matcher::MatcherSettings,
    /// Crawls start from these; pages on disk are extracted with their `extract`.
    pub crawler: &'a crawler::CrawlSettings,
    /// What one imported file may cost (the importer of `bench pipeline`'s job handler).
    pub import: &'a import::ImportLimits,
}
