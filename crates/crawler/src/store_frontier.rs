//! [`Frontier`] and [`HostStateStore`] over the database: [`StoreFrontier`] keeps a crawl's
//! URLs in the store's `frontier` table and [`StoreHostStates`] the per-host politeness
//! state in `host_states`, so a crawl resumes after a restart and any number of worker
//! processes share one crawl and one politeness budget per host. [`StoreCrawl`] wires both
//! with a [`StoreSink`] for a crawl row of the store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use store::{
    CrawlFrontier, CrawlId, CrawlRunId, CrawlRuns, Crawls, FrontierClaim, FrontierId,
    FrontierLease, FrontierOutcome, HostLease, HostStateRecord, HostStates, NewCrawl,
    NewFrontierEntry,
};
use url::Url;

use crate::crawl::{Crawl, CrawlReport, CrawlSettings, Parts};
use crate::error::{Error, Result};
use crate::frontier::{
    ChainPos, Claim, Claimed, Discovery, EntryId, EntryState, Frontier, FrontierEntry,
    FrontierProgress,
};
use crate::politeness::{HostKey, HostState, HostStateStore, Lease, LeaseId};
use crate::store_sink::{PageFollowUp, StoreSink};

fn backend(doing: &'static str) -> impl FnOnce(store::Error) -> Error {
    move |e| Error::Store {
        doing,
        source: Box::new(e),
    }
}

/// A crawl's frontier in the store.
///
/// Each claim is leased for `lease`: a worker that dies mid-page loses its entries to the
/// other workers once the lease runs out, and a late `complete` from it is ignored (the
/// store fences claims by number). Pick a lease well above the longest page (fetch timeout
/// plus the inline politeness wait).
///
/// A frontier made by [`StoreFrontier::with_run`] claims for a run of the crawl
/// ([`store::CrawlRuns`]) that a task of its own keeps alive with heartbeats: when this
/// process dies, the heartbeats stop and the crawl's other runners (or a `--resume`) take
/// its entries back once the run's `dead_after` has passed, long before the lease ends.
#[derive(Debug)]
pub struct StoreFrontier<S> {
    store: S,
    crawl: CrawlId,
    lease: Duration,
    run: Option<CrawlRunId>,
    heartbeat: Option<tokio::task::AbortHandle>,
    /// Claim numbers of the entries this process holds, for the store's fence.
    held: Mutex<HashMap<EntryId, u32>>,
}

impl<S> Drop for StoreFrontier<S> {
    fn drop(&mut self) {
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

impl<S> StoreFrontier<S> {
    /// The frontier of crawl `crawl` in `store`, claiming without a run: only the lease
    /// gives a dead worker's entries back.
    pub fn new(store: S, crawl: CrawlId, lease: Duration) -> Self {
        Self {
            store,
            crawl,
            lease,
            run: None,
            heartbeat: None,
            held: Mutex::new(HashMap::new()),
        }
    }

    /// The run this frontier claims for, if any.
    pub fn run(&self) -> Option<CrawlRunId> {
        self.run
    }

    /// The crawl it belongs to.
    pub fn crawl(&self) -> CrawlId {
        self.crawl
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    fn take(&self, id: EntryId) -> Option<FrontierLease> {
        let claim = self.held.lock().expect("held claims").remove(&id)?;
        Some(FrontierLease {
            id: FrontierId(id.0 as i64),
            claim,
        })
    }
}

impl<S> StoreFrontier<S>
where
    S: CrawlRuns + Clone + Send + Sync + 'static,
{
    /// The frontier of crawl `crawl`, claiming for a new run of it that counts as dead
    /// `dead_after` after its last heartbeat; a spawned task sends one every fifth of that
    /// until the frontier is dropped or [`StoreFrontier::end_run`] is called.
    ///
    /// # Errors
    /// [`Error::Store`] for an unknown crawl or a failing store.
    pub async fn with_run(
        store: S,
        crawl: CrawlId,
        lease: Duration,
        dead_after: Duration,
    ) -> Result<Self> {
        let run = store
            .start_crawl_run(crawl, dead_after)
            .await
            .map_err(backend("starting a run of the crawl"))?;
        let beat = (dead_after / 5).max(Duration::from_millis(10));
        let task = tokio::spawn({
            let store = store.clone();
            async move {
                let mut tick = tokio::time::interval(beat);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    match store.heartbeat_crawl_run(run).await {
                        Ok(()) => {}
                        Err(store::Error::NotFound { .. }) => break,
                        // The database may be back by the next beat; the run counts as dead
                        // only after `dead_after` without one.
                        Err(e) => tracing::warn!(%run, error = %e, "crawl run heartbeat failed"),
                    }
                }
            }
        });
        Ok(Self {
            store,
            crawl,
            lease,
            run: Some(run),
            heartbeat: Some(task.abort_handle()),
            held: Mutex::new(HashMap::new()),
        })
    }

    /// Ends this frontier's run (if it has one): the heartbeats stop and the entries it
    /// still holds go back to the queue at once. Call it when the runner stops; a runner
    /// killed before it does is found dead by its heartbeat instead.
    ///
    /// # Errors
    /// [`Error::Store`] when the store fails.
    pub async fn end_run(&self) -> Result<()> {
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
        if let Some(run) = self.run {
            self.store
                .end_crawl_run(run)
                .await
                .map_err(backend("ending a run of the crawl"))?;
        }
        Ok(())
    }
}

/// A crawl's frontier entries that its other runs hold, as a resume finds them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeldUrls {
    /// Held by runs that died: they are crawled again at once.
    pub by_dead_runs: u64,
    /// Held by runs that were alive moments ago: they stay with them.
    pub by_live_runs: u64,
    /// Runs alive moments ago.
    pub live_runs: usize,
    /// If the live runs were killed, their entries come back within this
    /// (their longest `run_dead_after`; zero when they hold none).
    pub longest_wait: Duration,
}

/// Who holds the entries of crawl `crawl` (for an operator resuming it).
///
/// # Errors
/// [`Error::Store`] when the store fails.
pub async fn held_urls<S: CrawlRuns>(store: &S, crawl: CrawlId) -> Result<HeldUrls> {
    let runs = store
        .crawl_runs(crawl)
        .await
        .map_err(backend("listing the runs of a crawl"))?;
    let mut held = HeldUrls::default();
    for run in &runs {
        if run.alive {
            held.by_live_runs += run.claims;
            held.live_runs += 1;
            held.longest_wait = held.longest_wait.max(run.dead_after);
        } else {
            held.by_dead_runs += run.claims;
        }
    }
    if held.by_live_runs == 0 {
        held.longest_wait = Duration::ZERO;
    }
    Ok(held)
}

/// A store write for a claim that another worker has taken over since is not an error of
/// this crawl: that worker finishes the entry.
fn ignore_lost_claim(result: store::Result<()>, doing: &'static str) -> Result<()> {
    match result {
        Err(store::Error::Conflict(message)) => {
            tracing::warn!(%message, "frontier claim lost; another worker owns the entry");
            Ok(())
        }
        other => other.map_err(backend(doing)),
    }
}

fn to_row(entry: FrontierEntry) -> NewFrontierEntry {
    NewFrontierEntry {
        url: entry.url.into(),
        depth: entry.depth,
        discovery: entry.discovery.as_str().to_owned(),
        rank: i16::from(entry.discovery.rank()),
        parent: entry.parent.map(Into::into),
        chain: entry.chain.map(|c| (c.head.into(), c.index)),
    }
}

fn from_row(row: &store::FrontierRecord) -> Option<FrontierEntry> {
    let chain = match &row.chain {
        Some((head, index)) => Some(ChainPos {
            head: Url::parse(head).ok()?,
            index: *index,
        }),
        None => None,
    };
    Some(FrontierEntry {
        url: Url::parse(&row.url).ok()?,
        depth: row.depth,
        discovery: Discovery::parse(&row.discovery)?,
        parent: row.parent.as_deref().and_then(|p| Url::parse(p).ok()),
        chain,
    })
}

impl<S> Frontier for StoreFrontier<S>
where
    S: CrawlFrontier + Send + Sync,
{
    async fn push(&self, entries: Vec<FrontierEntry>) -> Result<usize> {
        let rows: Vec<NewFrontierEntry> = entries.into_iter().map(to_row).collect();
        let added = self
            .store
            .push_frontier(self.crawl, &rows)
            .await
            .map_err(backend("adding urls to the frontier"))?;
        Ok(added as usize)
    }

    async fn claim(&self) -> Result<Claim> {
        let claim = self
            .store
            .claim_frontier(self.crawl, self.run, self.lease)
            .await
            .map_err(backend("claiming a frontier entry"))?;
        match claim {
            FrontierClaim::Entry(row) => {
                let Some(entry) = from_row(&row) else {
                    // Written by another build, or damaged: record it and move on.
                    ignore_lost_claim(
                        self.store
                            .complete_frontier(
                                row.lease,
                                &FrontierOutcome::Failed("invalid_url".into()),
                            )
                            .await,
                        "recording an unreadable frontier entry",
                    )?;
                    return Ok(Claim::Wait(Duration::ZERO));
                };
                let id = EntryId(row.lease.id.0 as u64);
                self.held
                    .lock()
                    .expect("held claims")
                    .insert(id, row.lease.claim);
                Ok(Claim::Entry(Box::new(Claimed {
                    id,
                    entry,
                    attempts: row.attempts,
                })))
            }
            FrontierClaim::Wait(d) => Ok(Claim::Wait(d)),
            FrontierClaim::Done => Ok(Claim::Done),
        }
    }

    async fn complete(&self, id: EntryId, state: EntryState) -> Result<()> {
        let Some(lease) = self.take(id) else {
            return Ok(());
        };
        let outcome = match state {
            EntryState::Fetched { status } => FrontierOutcome::Done { status },
            EntryState::Skipped(why) => FrontierOutcome::Skipped(why),
            EntryState::Failed(why) => FrontierOutcome::Failed(why),
        };
        ignore_lost_claim(
            self.store.complete_frontier(lease, &outcome).await,
            "completing a frontier entry",
        )
    }

    async fn retry(&self, id: EntryId, not_before: DateTime<Utc>, counts: bool) -> Result<()> {
        let Some(lease) = self.take(id) else {
            return Ok(());
        };
        ignore_lost_claim(
            self.store.retry_frontier(lease, not_before, counts).await,
            "returning a frontier entry to the queue",
        )
    }

    async fn progress(&self) -> Result<FrontierProgress> {
        let c = self
            .store
            .frontier_counts(self.crawl)
            .await
            .map_err(backend("counting the frontier"))?;
        Ok(FrontierProgress {
            queued: c.queued,
            in_flight: c.claimed,
            finished: c.finished(),
            claimed: c.pages_claimed,
            dropped: 0,
        })
    }
}

/// Per-host politeness state in the store, shared by every process that crawls.
#[derive(Clone, Debug)]
pub struct StoreHostStates<S> {
    store: S,
    run: Option<CrawlRunId>,
}

impl<S> StoreHostStates<S> {
    /// Host slots taken through it lapse only with their lease if never given back.
    pub fn new(store: S) -> Self {
        Self { store, run: None }
    }

    /// Host slots taken through it belong to crawl run `run`: if the run dies, the slots are
    /// free at once rather than after `politeness.lease`.
    pub fn for_run(store: S, run: Option<CrawlRunId>) -> Self {
        Self { store, run }
    }
}

impl From<HostStateRecord> for HostState {
    fn from(r: HostStateRecord) -> Self {
        Self {
            next_allowed_at: r.next_allowed_at,
            backoff_until: r.backoff_until,
            consecutive_failures: r.consecutive_failures,
            leases: r
                .leases
                .into_iter()
                .map(|l| Lease {
                    id: LeaseId(l.id),
                    expires_at: l.expires_at,
                })
                .collect(),
        }
    }
}

/// The stored row for `s`: each lease keeps the run it had in `before`, and a lease new to
/// it belongs to `run`.
fn to_record(
    s: HostState,
    before: &HashMap<u64, Option<CrawlRunId>>,
    run: Option<CrawlRunId>,
) -> HostStateRecord {
    HostStateRecord {
        next_allowed_at: s.next_allowed_at,
        backoff_until: s.backoff_until,
        consecutive_failures: s.consecutive_failures,
        leases: s
            .leases
            .into_iter()
            .map(|l| HostLease {
                id: l.id.0,
                expires_at: l.expires_at,
                run: before.get(&l.id.0).copied().unwrap_or(run),
            })
            .collect(),
    }
}

impl<S> HostStateStore for StoreHostStates<S>
where
    S: HostStates + Send + Sync,
{
    async fn update<R, F>(&self, host: &HostKey, f: F) -> Result<R>
    where
        R: Send,
        F: FnOnce(&mut HostState) -> R + Send,
    {
        self.store
            .update_host_state(host.as_str(), |record| {
                let before: HashMap<u64, Option<CrawlRunId>> =
                    record.leases.iter().map(|l| (l.id, l.run)).collect();
                let mut state = HostState::from(std::mem::take(record));
                let out = f(&mut state);
                *record = to_record(state, &before, self.run);
                out
            })
            .await
            .map_err(backend("updating a host's politeness state"))
    }
}

/// A crawl whose frontier, host states and evidence all live in one store.
pub type StoreCrawl<S> = Crawl<StoreFrontier<S>, StoreSink<S>, StoreHostStates<S>>;

impl<S> StoreCrawl<S>
where
    S: Crawls
        + CrawlFrontier
        + CrawlRuns
        + HostStates
        + store::EvidenceWrites
        + store::EvidenceReads
        + store::Renders
        + Clone
        + Send
        + Sync
        + 'static,
{
    /// Creates a crawl row for `seeds` with `settings` (kept as JSON, so any worker can run
    /// it) and the page budget `settings.max_pages`, after checking that they can run
    /// ([`CrawlSettings::check`]).
    ///
    /// # Errors
    /// The errors of [`Crawl::new`] (nothing is written then), [`Error::Store`] when the
    /// store fails.
    pub async fn create(store: &S, settings: &CrawlSettings, seeds: &[Url]) -> Result<CrawlId> {
        let crawl = new_crawl(settings, seeds)?;
        store
            .create_crawl(&crawl)
            .await
            .map_err(backend("creating a crawl"))
    }

    /// [`StoreCrawl::create`] unless the site of the first seed has an unfinished crawl, whose
    /// id comes back instead: `true` when the crawl was created. One crawl of a site at a time,
    /// however many processes start one at once.
    ///
    /// # Errors
    /// As [`StoreCrawl::create`].
    pub async fn create_unless_unfinished(
        store: &S,
        settings: &CrawlSettings,
        seeds: &[Url],
    ) -> Result<(CrawlId, bool)> {
        let crawl = new_crawl(settings, seeds)?;
        store
            .create_crawl_unless_unfinished(&crawl)
            .await
            .map_err(backend("creating a crawl"))
    }

    /// The runner for stored crawl `id` with the settings and seeds it was created with (its
    /// frontier claims last `settings.frontier_lease`), as a new run of the crawl
    /// ([`StoreFrontier::with_run`], dead after `settings.run_dead_after` without a
    /// heartbeat). Run it with [`StoreCrawl::run_to_end`], or call [`StoreCrawl::end_run`] when
    /// it stops.
    /// Several runners (in one process or many) may run one crawl at once; a runner started
    /// after another stopped resumes where it stopped.
    ///
    /// # Errors
    /// [`Error::Store`] for an unknown crawl or a failing store, [`Error::InvalidSetting`]
    /// when the stored settings cannot be read, and the errors of [`Crawl::new`].
    pub async fn open(store: S, id: CrawlId) -> Result<Self> {
        let settings = Self::stored_settings(&store, id).await?;
        Self::open_then(store, id, settings, None).await
    }

    /// The settings crawl `id` was created with.
    ///
    /// # Errors
    /// [`Error::Store`] for an unknown crawl or a failing store, [`Error::InvalidSetting`]
    /// when the stored settings cannot be read.
    pub async fn stored_settings(store: &S, id: CrawlId) -> Result<CrawlSettings> {
        let row = store.crawl(id).await.map_err(backend("reading a crawl"))?;
        serde_json::from_str(&row.settings).map_err(|e| Error::InvalidSetting {
            name: "crawls.settings",
            value: format!("crawl {id}"),
            reason: e.to_string(),
        })
    }

    /// As [`StoreCrawl::open`], with `settings` instead of the stored ones (the page budget
    /// stays the store's).
    ///
    /// # Errors
    /// As [`StoreCrawl::open`].
    pub async fn open_with(store: S, id: CrawlId, settings: CrawlSettings) -> Result<Self> {
        Self::open_then(store, id, settings, None).await
    }

    /// As [`StoreCrawl::open_with`], each stored page text queueing `follow_up`'s job in the
    /// transaction that stores it ([`StoreSink::then`]).
    ///
    /// # Errors
    /// As [`StoreCrawl::open`].
    pub async fn open_then(
        store: S,
        id: CrawlId,
        settings: CrawlSettings,
        follow_up: Option<PageFollowUp>,
    ) -> Result<Self> {
        let lease = settings.frontier_lease;
        let row = store.crawl(id).await.map_err(backend("reading a crawl"))?;
        let seeds = row
            .seeds
            .iter()
            .map(|s| Url::parse(s).map_err(|e| Error::invalid_url(s, e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        // Built (and so checked) before the run starts, so bad settings leave no run behind.
        let parts = Parts::new(&settings, &seeds)?;
        let frontier =
            StoreFrontier::with_run(store.clone(), id, lease, settings.run_dead_after).await?;
        let hosts = StoreHostStates::for_run(store.clone(), frontier.run());
        Ok(Crawl::from_parts(
            settings,
            parts,
            frontier,
            StoreSink::for_crawl(store, id).then(follow_up),
            hosts,
        ))
    }

    /// Ends this runner's run of the crawl ([`StoreFrontier::end_run`]).
    ///
    /// # Errors
    /// [`Error::Store`] when the store fails.
    pub async fn end_run(&self) -> Result<()> {
        self.frontier().end_run().await
    }

    /// [`Crawl::run`], then [`StoreCrawl::end_run`], so that the URLs this runner still
    /// holds go back at once. Failing to end the run is logged, not returned: without its
    /// heartbeats the run counts as dead after `crawler.run_dead_after` anyway.
    ///
    /// # Errors
    /// As [`Crawl::run`].
    pub async fn run_to_end(&self) -> Result<CrawlReport> {
        let result = self.run().await;
        if let Err(e) = self.end_run().await {
            tracing::warn!(error = %e, "could not end the crawl run");
        }
        result
    }
}

/// The crawl row for `seeds` with `settings`, once they are checked to run
/// ([`CrawlSettings::check`]).
fn new_crawl(settings: &CrawlSettings, seeds: &[Url]) -> Result<NewCrawl> {
    // Settings a runner would refuse are refused before a row exists that no runner
    // could ever run.
    settings.check(seeds)?;
    let seeds = seeds
        .iter()
        .map(|s| {
            extract::links::normalize(s)
                .map(String::from)
                .ok_or_else(|| Error::invalid_url(s.as_str(), "a seed must be an http(s) url"))
        })
        .collect::<Result<Vec<_>>>()?;
    let settings_json = serde_json::to_string(settings).map_err(|e| Error::InvalidSetting {
        name: "crawler",
        value: format!("{settings:?}"),
        reason: e.to_string(),
    })?;
    Ok(NewCrawl {
        seeds,
        settings: settings_json,
        max_pages: settings.max_pages,
    })
}
