//! What a deployment still lacks before copyhound can do its work, as the dashboard's
//! checklist shows it: a work to protect, a site to watch, the rights holder every notice
//! speaks for, a worker serving the queues, and an address policy that lets the crawler
//! reach the sites watched. [`setup_status`] computes it; the admin UI only renders the
//! [`SetupStep`]s, each with where to fix it.

use chrono::{DateTime, TimeDelta, Utc};
use crawler::CrawlSettings;
use crawling::sites::address_refused;
use jobs::{Result, store_err};
use store::{Page, Store, SuspectSites, WorkFilter, WorkReads, WorkerPresence};
use takedown::RightsHolder;

/// A worker not seen for this long is taken for stopped: a running worker says it is alive
/// at each maintenance round (every 5 s by default).
pub const WORKER_SILENT_AFTER: TimeDelta = TimeDelta::minutes(1);

/// One thing still to do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum SetupStep {
    /// No work is registered: crawled pages have nothing to be matched against.
    RegisterWork,
    /// No site is watched: nothing is crawled.
    AddSite,
    /// The rights holder's profile lacks these settings (their keys), so no takedown notice
    /// can be drafted.
    SetRightsHolder {
        /// The settings still empty.
        missing: Vec<&'static str>,
    },
    /// No worker said it was alive within [`WORKER_SILENT_AFTER`]: queued crawls and match
    /// jobs wait.
    StartWorker {
        /// When a worker was last seen, if ever (in the last week).
        last_seen: Option<DateTime<Utc>>,
    },
    /// These active sites' start URLs are addresses the crawler's policy refuses (loopback,
    /// private), so their crawls fail.
    AllowPrivate {
        /// The sites, lowest id first.
        sites: Vec<BlockedSite>,
    },
}

/// An active site whose start URL the address policy refuses.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BlockedSite {
    /// The site.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its start URL.
    pub start_url: String,
    /// The crawler's refusal.
    pub reason: String,
}

/// What is still to do, in the order a new deployment does it; empty when all is done.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct SetupStatus {
    /// The steps left.
    pub steps: Vec<SetupStep>,
}

impl SetupStatus {
    /// Whether nothing is left to do.
    pub fn is_done(&self) -> bool {
        self.steps.is_empty()
    }
}

/// What `store` and the settings still lack at `now`: `crawler` is the crawler's settings
/// (its address policy), `rights_holder` the profile notices are drafted with.
///
/// # Errors
/// [`jobs::Error::Store`] when the store cannot be read.
pub async fn setup_status(
    store: &Store,
    crawler: &CrawlSettings,
    rights_holder: &RightsHolder,
    now: DateTime<Utc>,
) -> Result<SetupStatus> {
    let mut steps = Vec::new();
    let one = Page {
        after: None,
        limit: Some(1),
    };
    let works = store
        .works(&WorkFilter::All, one)
        .await
        .map_err(store_err("reading the works"))?;
    if works.is_empty() {
        steps.push(SetupStep::RegisterWork);
    }
    let sites = store
        .watched_sites()
        .await
        .map_err(store_err("reading the watched sites"))?;
    if sites.is_empty() {
        steps.push(SetupStep::AddSite);
    }
    let missing = rights_holder.missing();
    if !missing.is_empty() {
        steps.push(SetupStep::SetRightsHolder { missing });
    }
    let last_seen = store
        .workers_seen(1)
        .await
        .map_err(store_err("reading the workers"))?
        .first()
        .map(|w| w.seen_at);
    if last_seen.is_none_or(|at| now - at > WORKER_SILENT_AFTER) {
        steps.push(SetupStep::StartWorker { last_seen });
    }
    let mut blocked: Vec<BlockedSite> = sites
        .into_iter()
        .filter(|s| s.enabled)
        .filter_map(|s| {
            address_refused(crawler, &s.start_url).map(|reason| BlockedSite {
                id: s.id,
                name: s.name,
                start_url: s.start_url,
                reason,
            })
        })
        .collect();
    if !blocked.is_empty() {
        blocked.sort_by_key(|s| s.id);
        steps.push(SetupStep::AllowPrivate { sites: blocked });
    }
    Ok(SetupStatus { steps })
}
