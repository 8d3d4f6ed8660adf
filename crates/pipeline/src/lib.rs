//! copyhound's stages joined into the system a rights team runs: a crawled page's text queues
//! its match job in the transaction that stores it, the match stage finds the registered
//! chapters it copies, and the matches become cases. The CLI and the admin UI both call
//! this crate; it reads no configuration and parses no command line.
//!
//! - [`Job`] and [`Handler`]: the jobs where the stages meet and the one handler a worker
//!   runs them with.
//! - [`CrawlRunner`]: a crawl's life (status, totals, stop and resume) for `crawl` and the
//!   workers alike; its pages queue their match jobs ([`match_follow_up`]).
//! - [`Analyser`]: the match stage over a [`LiveIndex`] kept current through the work change
//!   log.
//! - [`crawls`]: stored crawls as people read them (a listing, one crawl's sheet).
//! - [`launch`]: crawls started by hand, new or resumed, queued or run here with their
//!   pages matched ([`LocalCrawl`]).
//! - [`Checker`]: `check`'s core, reading pages the way a crawl reads them.
//! - [`notices`]: takedown notices drafted from a confirmed case; [`Rechecker`]: the
//!   re-checks after a notice is sent, until every copy is gone; [`sending`]: a notice
//!   mailed with its evidence package over [`mail`]'s SMTP client, recorded before and after
//!   so nothing is sent twice.
//! - [`alerts`]: each user's alerts of events by mail, at once or in a daily digest, in
//!   their language; [`webhooks`]: signed webhooks, configured or added by admins.
//! - [`overrides`]: the settings an admin changes in the UI (the rights holder, abuse
//!   contacts, the notice template, the time zone shown) over the settings file's values.
//! - [`timestamps`]: RFC 3161 stamps of the snapshots that are evidence of a case, and
//!   [`case_timestamps`] reading them back verified.
//! - [`accounts`]: users with roles and argon2id passwords, sessions and API tokens for the
//!   admin UI.
//! - [`demo`]: `copyhound demo`'s sample works, its pirate site and licensed mirror, and
//!   their set-up.
//! - [`Workers`]: the worker loops of `copyhound worker`, `serve` and `demo`, with the
//!   matcher index loaded at start and kept current.
//! - [`warc_export`]: the stored crawl evidence written as one WARC file.
//! - [`setup`]: what a deployment still lacks (works, sites, the rights holder, a running
//!   worker, an address policy its sites pass), the dashboard's checklist; [`cron_words`]:
//!   a schedule in words, in English or Chinese.
//! - [`discovery`]: query phrases of a work sent to search providers within daily budgets,
//!   the URLs found probed by a crawl of depth 0 and the domains with a copy made candidate
//!   sites a person approves or ignores.
//! - [`works`]: registered works listed, shown, edited, deleted and fingerprinted again.
//! - [`evidence::write_package`]: a case's evidence package (WARC, texts, passages,
//!   timestamp tokens, manifest).

pub mod accounts;
pub mod alerts;
mod analyse;
pub mod bodies;
pub mod capture;
pub mod cases;
pub mod check;
mod crawl;
pub mod crawls;
pub mod cron_words;
pub mod demo;
pub mod discovery;
pub mod doctor;
mod error;
pub mod evidence;
mod handler;
mod index;
mod job;
pub mod launch;
pub mod mail;
pub mod metrics;
pub mod notices;
pub mod overrides;
pub mod rechecks;
mod rematch;
pub mod removals;
pub mod reports;
pub mod review;
pub mod sending;
mod serve;
pub mod setup;
pub mod sites;
pub mod snapshot;
mod texts;
pub mod timestamps;
pub mod warc_export;
pub mod webhooks;
pub mod workers;
pub mod works;

pub use analyse::{Analysed, Analyser};
pub use capture::{CaptureSummary, capture_case, queue_capture};
pub use cases::{CaseChapter, CaseDossier, CasePage, CaseView, case_dossier, case_view};
pub use check::{Checked, Checker};
pub use crawl::{CrawlFinish, CrawlRunner, match_follow_up, match_job};
pub use error::{Error, Result};
pub use evidence::{Package, TimestampToken, package_zip, write_package};
pub use handler::Handler;
pub use index::{IndexOrigin, LiveIndex, LoadReport, load_matcher, load_shard, stream_chapters};
pub use job::{Job, MATCH_QUEUE, chain, match_shard_job, shard_queue};
pub use launch::{CrawlOverrides, CrawlSummary, LocalCrawl};
pub use mail::{Mailer, NotifySettings, SmtpSettings, SmtpTls};
pub use notices::{NoticeSettings, NoticeTemplate, RightsHolder};
pub use rechecks::{RecheckReport, RecheckSettings, Rechecker};
pub use rematch::{
    DEFAULT_BATCH_PAGES, RematchOptions, Rematched, Requeued, queue_rematch, rematch,
};
pub use reports::{ReportFormat, export_reports};
pub use serve::{MatchDrain, MatchWorkers, keep_index_current, serve};
pub use setup::{BlockedSite, SetupStatus, SetupStep, setup_status};
pub use sites::{
    SiteCrawl, check_site, crawl_progress, crawl_site_now, site_crawl, site_crawl_settings,
    site_history, site_job, site_job_live, site_schedule, watch_site,
};
pub use snapshot::{LiveIndexSettings, SnapshotPlace, WrittenSnapshot, write_snapshot};
pub use texts::{StoreTexts, TextCache, chapters, find};
pub use timestamps::{
    EvidenceSettings, SnapshotTimestamp, Verification, case_timestamps, stamp_case, stamp_job,
};
pub use workers::{WorkerOptions, Workers, all_queues, load_index_now};
