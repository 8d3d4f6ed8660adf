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
//! # Index shards
//!
//! `bounds::Shard` is a spec `K/N` and the hash that puts a work in a shard: the SplitMix64
//! finaliser of the work id, mod N, pinned by a unit test (it decides which machine holds a
//! work, so it never changes). With `[index] shards = N` above 1, the job loop
//! (`pipeline::Handler::with_shards`) turns a `Job::MatchSnapshot` into N `Job::MatchShard`
//! jobs, one per shard on queue `match-K-of-N` (de-duplicated per snapshot and shard while
//! waiting), instead of matching; the worker that does this loads no index.
//! `copyhound worker --shard K/N` serves that queue alone with an [`Analyser::with_shard`],
//! whose [`LiveIndex`] holds shard K's works and follows only their change-log entries; a
//! `MatchShard` of another shard reaching it fails for good. Its result goes through the
//! store's `record_matches_scoped`, which filters the snapshot's existing rows to the shard's
//! works before the usual record: only they are replaced or deleted, only their cases (a case
//! is a site and a work, so shards never share one) are opened, widened, reopened and
//! recounted, and a match of a work outside the shard is refused. Two shards recording one
//! page take the page's row lock in turn on Postgres (one writer on SQLite), and each page's
//! `latest` flags and copy counts are per chapter, hence per shard: in any order the shards
//! leave what one unsharded record would (`crates/pipeline/tests/all/shards.rs` checks it against
//! an unsharded re-match on both backends). `shards = 1` (the default) is the unsharded path,
//! unchanged.
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
