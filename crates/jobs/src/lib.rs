//! The floor every crate that joins copyhound's stages stands on: the jobs where the stages
//! meet, and the one error they all report.
//!
//! - [`Job`]: the serde enum the queue stores (its variant is the job's `kind`; its JSON is
//!   pinned, so jobs queued by an older build still decode), the queues' names
//!   ([`MATCH_QUEUE`], [`shard_queue`]) and the jobs several domains queue ([`match_job`],
//!   [`match_shard_job`], [`stamp_job`], [`queue_stamp`], [`emit`]). What a job *does* is
//!   the domains' own handler functions, dispatched by `pipeline`'s `Handler` above them all.
//! - [`Event`]: what happened, as webhooks and alerts name it.
//! - [`Error`] and [`Result`]: what joining the stages can fail with, with the small data
//!   types it carries ([`NotSent`], [`Refusal`]) and the `map_err` helpers [`store_err`] and
//!   [`matcher_err`]; [`chain`] writes an error with its causes on one line.
//! - [`cron_words`]: a schedule in words, in English or Chinese.
//! - [`metrics`]: how long each kind of job took in this process, for `/metrics`.
//!
//! It may use the stage crates and their leaves (`store`, `crawler`, `matcher`, `import`,
//! `fingerprint`, `timestamp`, `bounds`); nothing of copyhound's domains above it.
//!
//! ```
//! let job = store::NewJob::new(&jobs::Job::Gc).unwrap();
//! assert_eq!(job.kind(), "Gc");
//! ```

pub mod cron_words;
mod error;
mod event;
mod job;
pub mod metrics;

pub use error::{Error, NotSent, Problem, Refusal, Result, matcher_err, store_err};
pub use event::Event;
pub use job::{
    Job, MATCH_QUEUE, chain, emit, match_follow_up, match_job, match_shard_job, queue_stamp,
    shard_queue, stamp_job,
};
