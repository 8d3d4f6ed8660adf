//! copyhound's job loop, at the top of the crates that join its stages: a worker takes a
//! job and [`Handler`] hands it to the handler function of the domain it belongs to. The CLI
//! and the admin UI call the domains' crates and this one; it reads no configuration and
//! parses no command line.
//!
//! The domains below it, each a crate above what it uses:
//!
//! - `jobs`: the [`jobs::Job`] enum the queue stores, the queues, the jobs several domains
//!   queue, and the one error they all report;
//! - `accounts`: users, roles, passwords, sessions and API tokens;
//! - `notification`: mail over SMTP, each user's alerts, signed webhooks;
//! - `detection`: the match stage (the live index, page texts, the analyser, `check`);
//! - `crawling`: watched sites, their crawls and a crawl's runner;
//! - `casework`: cases, their review, re-checks, trusted timestamps, reports;
//! - `evidence`: the evidence package, WARC exports, screenshots taken now, page bodies;
//! - `takedown`: notices drafted, overridden settings, notices mailed;
//! - `discovery`: search providers asked for a work's phrases, the URLs found probed, the
//!   domains with a copy made candidate sites.
//!
//! Here:
//!
//! - [`Handler`]: the one handler a worker runs every [`jobs::Job`] with.
//! - [`Workers`]: the worker loops of `copyhound worker`, `serve` and `demo`, with the
//!   matcher index loaded at start and kept current ([`serve`], [`keep_index_current`]).
//! - [`launch`]: crawls started by hand, new or resumed, queued or run here with their
//!   pages matched ([`LocalCrawl`]); [`rematch`]: stored pages matched again.
//! - [`Handler`] runs a probe's crawl here for `discovery` (its `ProbeRunner`), which sits
//!   below the loop.
//! - [`setup`]: what a deployment still lacks, the dashboard's checklist; [`doctor`]: the
//!   deployment's checks; [`demo`]: `copyhound demo`'s sample works, its pirate site and
//!   licensed mirror, and their set-up; [`works`]: registered works listed, shown, edited,
//!   deleted and fingerprinted again.

pub mod demo;
pub mod doctor;
mod handler;
pub mod launch;
mod rematch;
mod serve;
pub mod setup;
pub mod workers;
pub mod works;

pub use handler::Handler;
pub use launch::{CrawlOverrides, CrawlSummary, LocalCrawl};
pub use rematch::{RematchOptions, Rematched, Requeued, queue_rematch, rematch};
pub use serve::{MatchDrain, MatchWorkers, keep_index_current, serve};
pub use setup::{BlockedSite, SetupStatus, SetupStep, setup_status};
pub use workers::{WorkerOptions, Workers, all_queues, load_index_now};
