//! Discovery as jobs: the `discovery` schedule queues [`Job::DiscoveryDue`], which queues one
//! [`Job::DiscoverWork`] per work due a search within the day's budget (works never searched
//! first, then round-robin by the last search); and a Common Crawl segment list queued as one
//! [`Job::ScanWet`] per WET file, so workers on many machines share a crawl.

use chrono::{DateTime, Utc};
use jobs::{Error, Job, Result, store_err};
use serde::Serialize;
use store::{Discovery, JobQueue, NewJob, Schedules, Store, WorkId};

use super::{DiscoverySettings, day_start};

/// The schedule that queues the searches due.
pub const SCHEDULE: &str = "discovery";

/// The job that searches `work` now (de-duplication key `discover:work:ID`: one queued or
/// running search per work).
///
/// # Errors
/// Never in practice (the job serialises).
pub fn discover_work_job(work: WorkId) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::DiscoverWork { work })?
        .dedupe_key(format!("discover:work:{work}"))
        .max_attempts(3))
}

/// The job that scans one WET file (de-duplication key `wet:PATH_OR_URL`).
///
/// # Errors
/// Never in practice (the job serialises).
pub fn scan_wet_job(url_or_path: &str) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::ScanWet {
        url_or_path: url_or_path.to_owned(),
    })?
    .dedupe_key(format!("wet:{url_or_path}"))
    .max_attempts(3))
}

/// Creates (or updates) the `discovery` schedule when `settings.schedule` is set and the
/// default provider is configured, and removes it otherwise. Returns whether it is set.
///
/// # Errors
/// A cron expression that does not parse; a database failure.
pub async fn ensure_discovery_schedule(
    store: &Store,
    settings: &DiscoverySettings,
) -> Result<bool> {
    let cron = settings.schedule.trim();
    if cron.is_empty() || settings.provider(None).is_err() {
        store
            .delete_schedule(SCHEDULE)
            .await
            .or_else(|e| match e {
                store::Error::NotFound { .. } => Ok(()),
                e => Err(e),
            })
            .map_err(store_err("removing the discovery schedule"))?;
        return Ok(false);
    }
    let job = NewJob::new(&Job::DiscoveryDue)
        .map_err(store_err("encoding the discovery job"))?
        .dedupe_key(SCHEDULE);
    store
        .set_schedule(SCHEDULE, cron, &job)
        .await
        .map_err(store_err(
            "writing the discovery schedule (check discovery.schedule, a cron expression)",
        ))?;
    Ok(true)
}

/// What [`enqueue_due_searches`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DueSearches {
    /// Queries the default provider may still send today, less the share of the searches
    /// queued and not run yet.
    pub budget: u64,
    /// The works whose search was queued, in the order taken.
    pub queued: Vec<WorkId>,
}

/// Queues a [`Job::DiscoverWork`] for each work due a search at `now`: works never searched
/// first, then the longest unsearched, none searched today. Each is counted at its full
/// daily share (`queries_per_work_per_day`) against what the default provider may still
/// send today (its `queries_per_day`, less today's queries and the shares of searches
/// queued today that have not run), so the queued searches stay within the day's budget;
/// each search checks both budgets again as it sends.
///
/// # Errors
/// No default provider configured; a database failure.
pub async fn enqueue_due_searches(
    store: &Store,
    settings: &DiscoverySettings,
    now: DateTime<Utc>,
) -> Result<DueSearches> {
    let (name, provider) = settings.provider(None)?;
    let today = day_start(now);
    let share = u64::from(settings.queries_per_work_per_day);
    let sent = store
        .queries_sent(today, Some(name), None)
        .await
        .map_err(store_err("counting today's queries of the provider"))?;
    let pending = store
        .searches_pending(today)
        .await
        .map_err(store_err("counting the searches queued today"))?;
    let budget = u64::from(provider.queries_per_day)
        .saturating_sub(sent)
        .saturating_sub(pending.saturating_mul(share));
    let mut due = DueSearches {
        budget,
        queued: Vec::new(),
    };
    if share == 0 || budget == 0 {
        return Ok(due);
    }
    // The last work taken may have less than its full share left: the search stops there.
    let works = u32::try_from(budget.div_ceil(share)).unwrap_or(u32::MAX);
    for work in store
        .works_due_search(today, works)
        .await
        .map_err(store_err("listing the works due a search"))?
    {
        let job = discover_work_job(work).map_err(store_err("encoding the search job"))?;
        store
            .enqueue(&job)
            .await
            .map_err(store_err("queueing a search"))?;
        store
            .mark_work_queued(work, now)
            .await
            .map_err(store_err("recording the queued search"))?;
        due.queued.push(work);
    }
    Ok(due)
}

/// Queues one [`Job::ScanWet`] per WET file (a path or URL), for the workers; a file queued
/// or being scanned already is not queued twice. Returns how many jobs are new.
///
/// # Errors
/// A database failure.
pub async fn queue_wet_scans(store: &Store, inputs: &[String]) -> Result<usize> {
    let mut new = 0;
    for input in inputs {
        if input.trim().is_empty() {
            return Err(Error::Refused("an empty WET path or URL".to_owned()));
        }
        let job = scan_wet_job(input).map_err(store_err("encoding the scan job"))?;
        let queued = store
            .enqueue(&job)
            .await
            .map_err(store_err("queueing a WET scan"))?;
        new += usize::from(matches!(queued, store::Enqueued::New(_)));
    }
    Ok(new)
}
