//! The match stage: a stored page's text matched against the registered works, and the
//! matches recorded (a copy of a work opens or reopens its case).
//!
//! - [`Analyser`]: matches a stored page over a [`LiveIndex`] kept current through the work
//!   change log, records the matches and queues what follows (a trusted timestamp of the
//!   evidence, an event for the webhooks and alerts) with the jobs of the `jobs` crate.
//! - [`LiveIndex`], [`load_matcher`]: the matcher index loaded from the store or from an
//!   index [`snapshot`] ([`write_snapshot`]), and kept current.
//! - [`texts`]: the registered chapters' texts read for the passages a match quotes
//!   ([`TextCache`]).
//! - [`Checker`]: `copyhound check`'s core, reading pages the way a crawl reads them.
//!
//! It may use `jobs` and the stage crates below it (`store`, `fingerprint`, `matcher`,
//! `crawler`); cases, notices and the job loop sit above it.
//!
//! ```no_run
//! # async fn demo(
//! #     store: store::Store,
//! #     fingerprinter: std::sync::Arc<fingerprint::Fingerprinter>,
//! # ) -> jobs::Result<()> {
//! let settings = matcher::MatcherSettings::default();
//! let (matcher, report) = detection::load_matcher(&store, settings, fingerprinter).await?;
//! # let _ = (matcher, report);
//! # Ok(()) }
//! ```

mod analyse;
pub mod check;
mod index;
mod live;
pub mod snapshot;
pub mod texts;

pub use analyse::{Analysed, Analyser, DEFAULT_BATCH_PAGES};
pub use check::{Checked, Checker};
pub use index::{LoadReport, load_matcher, load_shard, stream_chapters};
pub use live::{IndexOrigin, LiveIndex};
pub use snapshot::{LiveIndexSettings, SnapshotPlace, WrittenSnapshot, write_snapshot};
pub use texts::{StoreTexts, TextCache, chapters, find};
