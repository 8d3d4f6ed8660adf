//! The jobs where the stages meet: the serde [`Job`] enum (its JSON is what the queue
//! stores, so jobs queued by an older build still decode), the queues' names, the jobs that
//! several stages queue, and how a job's error is written. The stages import this module to
//! queue their jobs; what a job does is `pipeline`'s handler's, above them, so no stage
//! imports back.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::Utc;
use crawler::PageFollowUp;
use store::{CaseId, CrawlId, JobQueue, NewJob, SnapshotId, Store};

use crate::error::{Result, store_err};
use crate::event::Event;

/// The queue of match jobs. Apart from crawls and imports (the default queue): matching is
/// CPU work, served by as many jobs at once as there are cores, while a crawl waits on the
/// network; and `copyhound crawl` serves it alone while it crawls.
pub const MATCH_QUEUE: &str = "match";

/// The queue of shard `shard`'s match jobs ([`Job::MatchShard`]): `match-K-of-N`, served by
/// the workers started with `--shard K/N` alone.
#[must_use]
pub fn shard_queue(shard: bounds::Shard) -> String {
    format!("match-{}-of-{}", shard.index(), shard.count())
}

/// The [`Job::MatchShard`] of `snapshot` for `shard`, on [`shard_queue`], queued once while
/// it waits (its key de-duplicates it).
///
/// # Errors
/// Never in practice ([`Job`] always serialises).
pub fn match_shard_job(snapshot: SnapshotId, shard: bounds::Shard) -> store::Result<store::NewJob> {
    Ok(store::NewJob::new(&Job::MatchShard {
        snapshot,
        shard: shard.index(),
        shards: shard.count(),
    })?
    .queue(shard_queue(shard))
    .dedupe_key(format!("match:{snapshot}:{shard}")))
}

/// The jobs copyhound runs, named by what they do (the variant name is the job's `kind` in
/// the queue). Every handler is idempotent: a job whose worker died runs again.
///
/// Exhaustive on purpose: `pipeline`'s handler matches every variant, so a new job does not
/// compile until something runs it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Job {
    /// Import a work from a file the server can read (an admin UI upload).
    ImportWork {
        /// The file.
        path: PathBuf,
        /// Title; the file stem when absent.
        title: Option<String>,
        /// Author.
        author: Option<String>,
        /// The file is an upload kept for this job alone: it is deleted when the job ends,
        /// imported or refused for good (a bomb too), so the upload folder does not grow.
        /// Absent (false) in jobs queued before uploads were deleted.
        #[serde(default)]
        delete_file: bool,
    },
    /// Run a stored crawl (`crawls` row) over its shared frontier until the frontier is done.
    /// Several jobs of one crawl (different `runner`s) crawl it together, each page fetched
    /// once; a job that runs again resumes the crawl where it stopped.
    Crawl {
        /// The crawl.
        crawl_id: CrawlId,
        /// Which of the crawl's parallel runners this is (0-based); part of the job's
        /// de-duplication key, so each runner is queued once.
        #[serde(default)]
        runner: u32,
    },
    /// Crawl a watched site (`sites` row): its unfinished crawl if one is left, else a new
    /// crawl from its start URL with its settings (`sites::site_crawl`). Queued by
    /// the site's schedule and by "crawl now", one at a time per site.
    CrawlSite {
        /// The site.
        site: i64,
    },
    /// Match a stored page's main text (its `page_texts` row) against the registered works
    /// and store the result as the snapshot's matches (replacing an earlier result).
    MatchSnapshot {
        /// The fetched page.
        snapshot: SnapshotId,
    },
    /// Match a stored page against the works of one shard of the index (`shard` of `shards`,
    /// [`bounds::Shard`]) and replace the snapshot's matches of those works only. With
    /// `[index] shards = N` above 1, a [`Job::MatchSnapshot`] queues one per shard instead
    /// of matching, each on its shard's queue ([`shard_queue`]).
    MatchShard {
        /// The fetched page.
        snapshot: SnapshotId,
        /// K, 0-based.
        shard: u32,
        /// N.
        shards: u32,
    },
    /// Queue a [`Job::Recheck`] for every case whose re-check is due (the `rechecks`
    /// schedule's job).
    RechecksDue,
    /// Fetch a case's copies again after its notice was sent and record which are gone
    /// (`Rechecker::recheck`).
    Recheck {
        /// The case.
        case: store::CaseId,
    },
    /// Stamp a snapshot's SHA-256 at the configured time-stamping authority (RFC 3161) and
    /// store the token; nothing is asked when the snapshot already has a token from it.
    /// Queued by the match stage for each snapshot that becomes evidence of a case.
    StampSnapshot {
        /// The snapshot.
        snapshot: SnapshotId,
    },
    /// Render each page of a case now in the headless browser and store its screenshot
    /// ("take a screenshot now"; `capture::capture_case`).
    CaptureCase {
        /// The case.
        case: store::CaseId,
    },
    /// Mail a takedown notice to its recipient with the case's evidence package and mark it
    /// sent once the SMTP server accepts it (`sending::send_notice`); a notice sent
    /// already is left alone, so the job may run again.
    SendNotice {
        /// The notice.
        notice: store::NoticeId,
        /// Send it although an earlier attempt was cut off with no outcome recorded.
        #[serde(default)]
        again: bool,
    },
    /// Something happened that webhooks are told of: queues one [`Job::DeliverWebhook`] per
    /// webhook that takes the event (`webhooks::fan_out`).
    Event {
        /// What happened.
        event: Event,
        /// When.
        at: chrono::DateTime<chrono::Utc>,
        /// What it is about (ids, URLs).
        data: serde_json::Value,
    },
    /// Mail a user their alert of one event (`alerts::send_alert`); a mail sent
    /// already is not sent again.
    SendAlert {
        /// Whom.
        user: store::UserId,
        /// The event, as alerts recorded it.
        event: store::AlertEventId,
    },
    /// Mail each user their daily digest of waiting alerts (`alerts::send_digests`;
    /// the `alert-digests` schedule's job).
    SendDigests,
    /// POST one event to one webhook, signed (`webhooks::deliver`); retried until
    /// the receiver answers 2xx, given up a day after the event.
    DeliverWebhook {
        /// The webhook's URL (its secret is looked up in the settings at delivery, never
        /// stored in the queue).
        url: String,
        /// The delivery's id, the same on every attempt.
        id: String,
        /// What happened.
        event: Event,
        /// When.
        at: chrono::DateTime<chrono::Utc>,
        /// What it is about.
        data: serde_json::Value,
    },
    /// Move the bodies waiting in the database into WARC segments on the object store while
    /// a segment is due (the `body-segments` schedule's job; `bodies`).
    WriteSegments,
    /// Remove the bodies past their retention, and the segments they leave empty or mostly
    /// dead (the daily `retention-gc` schedule's job; [`store::Store::gc`]).
    Gc,
    /// Queue a [`Job::DiscoverWork`] for each work due a search within the day's budget (the
    /// `discovery` schedule's job; `discovery::enqueue_due_searches`).
    DiscoveryDue,
    /// Run discovery for one work now: its phrases sent to the default provider within the
    /// day's budgets, the URLs found probed and matched (`discovery::search_work`).
    DiscoverWork {
        /// The work.
        work: store::WorkId,
    },
    /// Scan one Common Crawl WET file (a path the worker can read, or an http(s) URL) and
    /// probe the URLs of its records with a copy (`discovery::scan_commoncrawl`).
    ScanWet {
        /// The file.
        url_or_path: String,
    },
    /// Probe a domain: its home pages and the URLs the CDX index lists, fetched and matched
    /// (`discovery::probe_domain`).
    ProbeDomain {
        /// `host[:port]`.
        domain: String,
    },
}

impl Job {
    /// The job `copyhound crawl --enqueue` queues for runner `runner` of crawl `crawl_id`.
    ///
    /// # Errors
    /// Never in practice (the job serialises).
    pub fn crawl_runner(crawl_id: CrawlId, runner: u32) -> store::Result<store::NewJob> {
        Ok(store::NewJob::new(&Job::Crawl { crawl_id, runner })?
            .dedupe_key(format!("crawl:{crawl_id}:{runner}"))
            .max_attempts(3))
    }
}

/// The job that analyses a stored page: queued in the transaction that stores its text,
/// once per snapshot (its key de-duplicates it while it waits).
///
/// # Errors
/// Never in practice ([`Job`] always serialises); the store's refusal otherwise.
pub fn match_job(snapshot: store::SnapshotId) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::MatchSnapshot { snapshot })?
        .queue(MATCH_QUEUE)
        .dedupe_key(format!("match:{snapshot}")))
}

/// The follow-up a crawl's page store gets: every page with text queues its match job in the
/// same transaction.
pub fn match_follow_up() -> PageFollowUp {
    Arc::new(|page: &store::NewPageText| {
        if page.body.trim().is_empty() {
            return None;
        }
        match match_job(page.snapshot) {
            Ok(job) => Some(job),
            Err(e) => {
                tracing::error!(error = %e, "match job not queued");
                None
            }
        }
    })
}

/// The job that stamps a snapshot: de-duplicated per snapshot while it waits; a TSA that is
/// down gets a few attempts with backoff.
///
/// # Errors
/// Never in practice ([`Job`] always serialises).
pub fn stamp_job(snapshot: SnapshotId) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::StampSnapshot { snapshot })?
        .dedupe_key(format!("stamp:{snapshot}"))
        .max_attempts(5))
}

/// Queues [`stamp_job`] for `snapshot` when it is evidence of a case (`cases` non-empty):
/// what the match stage calls after recording a page's matches, when a TSA is configured.
pub async fn queue_stamp(store: &Store, snapshot: SnapshotId, cases: &[CaseId]) -> Result<()> {
    if cases.is_empty() {
        return Ok(());
    }
    let job = stamp_job(snapshot).map_err(store_err("encoding the stamp job"))?;
    store
        .enqueue(&job)
        .await
        .map_err(store_err("queueing the stamp job"))?;
    Ok(())
}

/// Queues `event` with `data` for the webhooks (and whatever else listens).
///
/// # Errors
/// A database failure.
pub async fn emit(store: &Store, event: Event, data: serde_json::Value) -> Result<()> {
    let job = NewJob::new(&Job::Event {
        event,
        at: Utc::now(),
        data,
    })
    .map_err(store_err("queueing an event"))?;
    store
        .enqueue(&job)
        .await
        .map_err(store_err("queueing an event"))?;
    Ok(())
}

/// An error with its causes, on one line (what a job's `last_error` shows).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The variant's name, which the queue stores as the job's kind. A match, so that a new
    /// variant does not compile here until its JSON is pinned below.
    fn kind(job: &Job) -> &'static str {
        match job {
            Job::ImportWork { .. } => "ImportWork",
            Job::Crawl { .. } => "Crawl",
            Job::CrawlSite { .. } => "CrawlSite",
            Job::MatchSnapshot { .. } => "MatchSnapshot",
            Job::MatchShard { .. } => "MatchShard",
            Job::RechecksDue => "RechecksDue",
            Job::Recheck { .. } => "Recheck",
            Job::StampSnapshot { .. } => "StampSnapshot",
            Job::CaptureCase { .. } => "CaptureCase",
            Job::SendNotice { .. } => "SendNotice",
            Job::Event { .. } => "Event",
            Job::DeliverWebhook { .. } => "DeliverWebhook",
            Job::SendAlert { .. } => "SendAlert",
            Job::SendDigests => "SendDigests",
            Job::WriteSegments => "WriteSegments",
            Job::Gc => "Gc",
            Job::DiscoveryDue => "DiscoveryDue",
            Job::DiscoverWork { .. } => "DiscoverWork",
            Job::ScanWet { .. } => "ScanWet",
            Job::ProbeDomain { .. } => "ProbeDomain",
        }
    }

    /// Each variant with the payload the queue holds for it. Jobs queued by an older build
    /// must still decode: a change here changes what is stored, so it needs a migration of
    /// the `jobs` table, not just a new test.
    fn pinned() -> Vec<(Job, &'static str)> {
        vec![
            (
                Job::ImportWork {
                    path: PathBuf::from("/srv/uploads/三国演义.txt"),
                    title: Some("三国演义".to_owned()),
                    author: None,
                    delete_file: true,
                },
                r#"{"ImportWork":{"path":"/srv/uploads/三国演义.txt","title":"三国演义","author":null,"delete_file":true}}"#,
            ),
            (
                Job::Crawl {
                    crawl_id: CrawlId(7),
                    runner: 2,
                },
                r#"{"Crawl":{"crawl_id":7,"runner":2}}"#,
            ),
            (Job::CrawlSite { site: 3 }, r#"{"CrawlSite":{"site":3}}"#),
            (
                Job::MatchSnapshot {
                    snapshot: SnapshotId(11),
                },
                r#"{"MatchSnapshot":{"snapshot":11}}"#,
            ),
            (
                Job::MatchShard {
                    snapshot: SnapshotId(11),
                    shard: 1,
                    shards: 4,
                },
                r#"{"MatchShard":{"snapshot":11,"shard":1,"shards":4}}"#,
            ),
            (Job::RechecksDue, r#""RechecksDue""#),
            (
                Job::Recheck { case: CaseId(5) },
                r#"{"Recheck":{"case":5}}"#,
            ),
            (
                Job::StampSnapshot {
                    snapshot: SnapshotId(13),
                },
                r#"{"StampSnapshot":{"snapshot":13}}"#,
            ),
            (
                Job::CaptureCase { case: CaseId(8) },
                r#"{"CaptureCase":{"case":8}}"#,
            ),
            (
                Job::SendNotice {
                    notice: store::NoticeId(17),
                    again: false,
                },
                r#"{"SendNotice":{"notice":17,"again":false}}"#,
            ),
            (
                Job::Event {
                    event: Event::CaseOpened,
                    at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
                    data: serde_json::json!({"case": 5}),
                },
                r#"{"Event":{"event":"case.opened","at":"2027-01-15T08:00:00Z","data":{"case":5}}}"#,
            ),
            (
                Job::DeliverWebhook {
                    url: "https://hooks.press.example/in".to_owned(),
                    id: "0a1b".to_owned(),
                    event: Event::NoticeSent,
                    at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
                    data: serde_json::json!({"notice": 3}),
                },
                r#"{"DeliverWebhook":{"url":"https://hooks.press.example/in","id":"0a1b","event":"notice.sent","at":"2027-01-15T08:00:00Z","data":{"notice":3}}}"#,
            ),
            (
                Job::SendAlert {
                    user: store::UserId(4),
                    event: store::AlertEventId(19),
                },
                r#"{"SendAlert":{"user":4,"event":19}}"#,
            ),
            (Job::SendDigests, r#""SendDigests""#),
            (Job::WriteSegments, r#""WriteSegments""#),
            (Job::Gc, r#""Gc""#),
            (Job::DiscoveryDue, r#""DiscoveryDue""#),
            (
                Job::DiscoverWork {
                    work: store::WorkId(4),
                },
                r#"{"DiscoverWork":{"work":4}}"#,
            ),
            (
                Job::ScanWet {
                    url_or_path: "https://data.commoncrawl.org/crawl-data/CC-MAIN-2026-44/segments/1/wet/x.warc.wet.gz".to_owned(),
                },
                r#"{"ScanWet":{"url_or_path":"https://data.commoncrawl.org/crawl-data/CC-MAIN-2026-44/segments/1/wet/x.warc.wet.gz"}}"#,
            ),
            (
                Job::ProbeDomain {
                    domain: "盗版.example:8080".to_owned(),
                },
                r#"{"ProbeDomain":{"domain":"盗版.example:8080"}}"#,
            ),
        ]
    }

    #[test]
    fn every_job_keeps_its_stored_json_and_kind() {
        let pinned = pinned();
        for (job, json) in &pinned {
            assert_eq!(serde_json::to_string(job).unwrap(), *json, "{job:?}");
            assert_eq!(&serde_json::from_str::<Job>(json).unwrap(), job, "{json}");
            assert_eq!(store::NewJob::new(job).unwrap().kind(), kind(job));
        }
        let kinds: BTreeSet<_> = pinned.iter().map(|(job, _)| kind(job)).collect();
        assert_eq!(kinds.len(), 20, "every variant is pinned once: {kinds:?}");
    }

    #[test]
    fn a_crawl_job_queued_before_runners_decodes_as_runner_0() {
        let job: Job = serde_json::from_str(r#"{"Crawl":{"crawl_id":7}}"#).unwrap();
        assert_eq!(
            job,
            Job::Crawl {
                crawl_id: CrawlId(7),
                runner: 0
            }
        );
    }
}
