//! The crawl frontier: URLs waiting to be fetched, de-duplicated, ordered, with limits.
//!
//! [`Frontier`] is shaped like the table it will be in the store, one row per normalised URL
//! of a crawl: `frontier(crawl_id, url, url_hash UNIQUE, depth, discovery, chain_head,
//! chain_index, state queued|claimed|done|failed|skipped, attempts, not_before,
//! claimed_until, last_error)`. `push` is `INSERT ... ON CONFLICT DO NOTHING`, `claim` an
//! `UPDATE ... WHERE id = (SELECT ... ORDER BY depth, rank, id FOR UPDATE SKIP LOCKED)`, so
//! several workers can share one crawl and a restarted crawl resumes where it stopped.
//! [`MemoryFrontier`] is the in-process implementation;
//! [`StoreFrontier`](crate::StoreFrontier) the one over that table.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::future::Future;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use url::Url;

use crate::error::Result;

/// A frontier row's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId(pub u64);

/// How a URL entered the frontier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Discovery {
    /// Given when the crawl started.
    Seed,
    /// A link on a fetched page.
    Link,
    /// The next page of a chapter split over several pages.
    Pagination,
    /// A script or `<meta refresh>` redirect stub's target.
    Redirect,
    /// A sitemap file (robots.txt `Sitemap:` or `/sitemap.xml`); its body is parsed, not
    /// extracted.
    Sitemap,
    /// A page listed in a sitemap.
    SitemapLink,
}

impl Discovery {
    /// Stable lower-case name, for database columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Seed => "seed",
            Self::Link => "link",
            Self::Pagination => "pagination",
            Self::Redirect => "redirect",
            Self::Sitemap => "sitemap",
            Self::SitemapLink => "sitemap_link",
        }
    }

    /// The discovery named by [`Discovery::as_str`].
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "seed" => Self::Seed,
            "link" => Self::Link,
            "pagination" => Self::Pagination,
            "redirect" => Self::Redirect,
            "sitemap" => Self::Sitemap,
            "sitemap_link" => Self::SitemapLink,
            _ => return None,
        })
    }

    /// Claim order within one depth: finish split chapters first, then sitemaps (they fan
    /// out), then everything else.
    pub fn rank(self) -> u8 {
        match self {
            Self::Pagination => 0,
            Self::Sitemap => 1,
            Self::Seed | Self::Redirect => 2,
            Self::Link | Self::SitemapLink => 3,
        }
    }
}

/// Where a page sits in a chapter split over several pages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChainPos {
    /// The chapter's first page.
    pub head: Url,
    /// 0 for the first page, 1 for the second, ...
    pub index: u32,
}

/// A URL to crawl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontierEntry {
    /// The normalised URL: the de-duplication key.
    pub url: Url,
    /// Link hops from a seed (pagination does not add one).
    pub depth: u32,
    /// How it was found.
    pub discovery: Discovery,
    /// The page it was found on.
    pub parent: Option<Url>,
    /// Its place in a split chapter.
    pub chain: Option<ChainPos>,
}

impl FrontierEntry {
    /// A seed at depth 0.
    pub fn seed(url: Url) -> Self {
        Self {
            url,
            depth: 0,
            discovery: Discovery::Seed,
            parent: None,
            chain: None,
        }
    }
}

/// An entry taken by a worker.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub id: EntryId,
    pub entry: FrontierEntry,
    /// Earlier attempts that counted (0 on the first claim).
    pub attempts: u32,
}

/// What [`Frontier::claim`] gives.
#[derive(Debug)]
pub enum Claim {
    /// Fetch this.
    Entry(Box<Claimed>),
    /// Nothing is ready; ask again after at most this long (entries in flight may add more,
    /// retries become due).
    Wait(Duration),
    /// The crawl is over: nothing queued (or the page budget is spent) and nothing in flight.
    Done,
}

/// How an entry ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryState {
    /// A response was stored (any status).
    Fetched { status: u16 },
    /// Not fetched, or fetched and not used, for a reason that will not change.
    Skipped(String),
    /// Failed for good (after retries).
    Failed(String),
}

/// Counts for progress displays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrontierProgress {
    /// Waiting to be claimed (including retries not yet due).
    pub queued: u64,
    /// Claimed and not finished.
    pub in_flight: u64,
    /// Finished (fetched, skipped or failed).
    pub finished: u64,
    /// Distinct entries claimed so far (what the page budget counts).
    pub claimed: u64,
    /// Pushes refused because the frontier was full.
    pub dropped: u64,
}

/// The frontier of one crawl, shared by all its workers.
pub trait Frontier: Send + Sync {
    /// Adds the entries whose URL this crawl has not seen; returns how many were added.
    fn push(&self, entries: Vec<FrontierEntry>) -> impl Future<Output = Result<usize>> + Send;

    /// Takes the next entry: due retries first, then the lowest (depth, discovery rank),
    /// oldest first. A claim lasts until `complete` or `retry`; a store-backed frontier gives
    /// it a lease so a dead worker's entries return to the queue.
    fn claim(&self) -> impl Future<Output = Result<Claim>> + Send;

    /// Records how a claimed entry ended.
    fn complete(&self, id: EntryId, state: EntryState) -> impl Future<Output = Result<()>> + Send;

    /// Returns a claimed entry to the queue, due at `not_before`. `counts` says whether this
    /// was a failed attempt (it was not when the host was just busy).
    fn retry(
        &self,
        id: EntryId,
        not_before: DateTime<Utc>,
        counts: bool,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Current counts.
    fn progress(&self) -> impl Future<Output = Result<FrontierProgress>> + Send;
}

impl<T: Frontier> Frontier for std::sync::Arc<T> {
    fn push(&self, entries: Vec<FrontierEntry>) -> impl Future<Output = Result<usize>> + Send {
        (**self).push(entries)
    }

    fn claim(&self) -> impl Future<Output = Result<Claim>> + Send {
        (**self).claim()
    }

    fn complete(&self, id: EntryId, state: EntryState) -> impl Future<Output = Result<()>> + Send {
        (**self).complete(id, state)
    }

    fn retry(
        &self,
        id: EntryId,
        not_before: DateTime<Utc>,
        counts: bool,
    ) -> impl Future<Output = Result<()>> + Send {
        (**self).retry(id, not_before, counts)
    }

    fn progress(&self) -> impl Future<Output = Result<FrontierProgress>> + Send {
        (**self).progress()
    }
}

/// Limits of a [`MemoryFrontier`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrontierLimits {
    /// Distinct entries that may be claimed (the crawl's page budget); `None` for no limit.
    pub max_claims: Option<u64>,
    /// Distinct URLs remembered; pushes beyond are dropped (and counted), which bounds memory
    /// however large the site.
    pub max_entries: usize,
}

impl Default for FrontierLimits {
    fn default() -> Self {
        Self {
            max_claims: None,
            max_entries: 1_000_000,
        }
    }
}

struct Slot {
    entry: FrontierEntry,
    attempts: u32,
}

#[derive(Default)]
struct Inner {
    /// 64-bit hashes of every URL ever pushed: 8 bytes a URL instead of the URL itself.
    /// A collision (about 1 in 10^7 at a million URLs) loses one URL, never fetches a wrong one.
    seen: HashSet<u64>,
    slots: HashMap<EntryId, Slot>,
    fresh: BinaryHeap<Reverse<(u32, u8, EntryId)>>,
    retries: BinaryHeap<Reverse<(DateTime<Utc>, EntryId)>>,
    in_flight: u64,
    finished: u64,
    claimed: u64,
    dropped: u64,
    next_id: u64,
}

/// [`Frontier`] in process memory, for single-process crawls, tests and benchmarks.
pub struct MemoryFrontier {
    inner: Mutex<Inner>,
    limits: FrontierLimits,
}

impl MemoryFrontier {
    /// An empty frontier.
    pub fn new(limits: FrontierLimits) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            limits,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("frontier lock")
    }
}

/// The de-duplication hash of a normalised URL.
fn url_hash(url: &Url) -> u64 {
    // DefaultHasher::new() uses fixed keys, so the hash is stable within a build; it is never
    // persisted (the store keys rows by the URL itself).
    let mut h = DefaultHasher::new();
    url.as_str().hash(&mut h);
    h.finish()
}

/// How long an idle worker waits before asking again when others are still working.
const IDLE_POLL: Duration = Duration::from_millis(5);

impl Frontier for MemoryFrontier {
    async fn push(&self, entries: Vec<FrontierEntry>) -> Result<usize> {
        let mut inner = self.lock();
        let mut added = 0;
        for entry in entries {
            if inner.seen.len() >= self.limits.max_entries {
                inner.dropped += 1;
                continue;
            }
            if !inner.seen.insert(url_hash(&entry.url)) {
                continue;
            }
            let id = EntryId(inner.next_id);
            inner.next_id += 1;
            inner
                .fresh
                .push(Reverse((entry.depth, entry.discovery.rank(), id)));
            inner.slots.insert(id, Slot { entry, attempts: 0 });
            added += 1;
        }
        Ok(added)
    }

    async fn claim(&self) -> Result<Claim> {
        let mut inner = self.lock();
        let now = Utc::now();
        let due_retry = inner
            .retries
            .peek()
            .is_some_and(|Reverse((at, _))| *at <= now);
        let budget_left = self.limits.max_claims.is_none_or(|max| inner.claimed < max);
        let id = if due_retry {
            inner.retries.pop().map(|Reverse((_, id))| id)
        } else if budget_left {
            let id = inner.fresh.pop().map(|Reverse((_, _, id))| id);
            inner.claimed += u64::from(id.is_some());
            id
        } else {
            None
        };
        if let Some(id) = id {
            inner.in_flight += 1;
            let slot = &inner.slots[&id];
            return Ok(Claim::Entry(Box::new(Claimed {
                id,
                entry: slot.entry.clone(),
                attempts: slot.attempts,
            })));
        }
        if inner.in_flight > 0 {
            return Ok(Claim::Wait(IDLE_POLL));
        }
        if let Some(Reverse((at, _))) = inner.retries.peek() {
            return Ok(Claim::Wait((*at - now).to_std().unwrap_or(IDLE_POLL)));
        }
        Ok(Claim::Done)
    }

    async fn complete(&self, id: EntryId, _state: EntryState) -> Result<()> {
        let mut inner = self.lock();
        if inner.slots.remove(&id).is_some() {
            inner.in_flight -= 1;
            inner.finished += 1;
        }
        Ok(())
    }

    async fn retry(&self, id: EntryId, not_before: DateTime<Utc>, counts: bool) -> Result<()> {
        let mut inner = self.lock();
        let Some(slot) = inner.slots.get_mut(&id) else {
            return Ok(());
        };
        slot.attempts += u32::from(counts);
        inner.in_flight -= 1;
        inner.retries.push(Reverse((not_before, id)));
        Ok(())
    }

    async fn progress(&self) -> Result<FrontierProgress> {
        let inner = self.lock();
        Ok(FrontierProgress {
            queued: (inner.fresh.len() + inner.retries.len()) as u64,
            in_flight: inner.in_flight,
            finished: inner.finished,
            claimed: inner.claimed,
            dropped: inner.dropped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str, depth: u32, discovery: Discovery) -> FrontierEntry {
        FrontierEntry {
            url: Url::parse(url).unwrap(),
            depth,
            discovery,
            parent: None,
            chain: None,
        }
    }

    async fn claim_url(f: &MemoryFrontier) -> Option<(EntryId, String)> {
        match f.claim().await.unwrap() {
            Claim::Entry(c) => Some((c.id, c.entry.url.to_string())),
            _ => None,
        }
    }

    #[tokio::test]
    async fn dedups_orders_and_finishes() {
        let f = MemoryFrontier::new(FrontierLimits::default());
        let added = f
            .push(vec![
                entry("http://a.test/2", 1, Discovery::Link),
                entry("http://a.test/1", 0, Discovery::Seed),
                entry("http://a.test/2", 1, Discovery::Link),
                entry("http://a.test/1_2", 1, Discovery::Pagination),
            ])
            .await
            .unwrap();
        assert_eq!(added, 3);
        let (a, u) = claim_url(&f).await.unwrap();
        assert_eq!(u, "http://a.test/1");
        let (b, u) = claim_url(&f).await.unwrap();
        assert_eq!(u, "http://a.test/1_2");
        let (c, u) = claim_url(&f).await.unwrap();
        assert_eq!(u, "http://a.test/2");
        assert!(matches!(f.claim().await.unwrap(), Claim::Wait(_)));
        for id in [a, b, c] {
            f.complete(id, EntryState::Fetched { status: 200 })
                .await
                .unwrap();
        }
        assert!(matches!(f.claim().await.unwrap(), Claim::Done));
        let p = f.progress().await.unwrap();
        assert_eq!((p.finished, p.claimed, p.in_flight, p.queued), (3, 3, 0, 0));
    }

    #[tokio::test]
    async fn retries_wait_until_due_and_count_attempts() {
        let f = MemoryFrontier::new(FrontierLimits::default());
        f.push(vec![entry("http://a.test/", 0, Discovery::Seed)])
            .await
            .unwrap();
        let (id, _) = claim_url(&f).await.unwrap();
        // Due in a second, not milliseconds: the claim below must come before it on a
        // loaded machine too.
        let due_in = Duration::from_secs(1);
        f.retry(id, Utc::now() + due_in, true).await.unwrap();
        let mut wait = match f.claim().await.unwrap() {
            Claim::Wait(d) => {
                assert!(d <= due_in, "{d:?}");
                d
            }
            other => panic!("{other:?}"),
        };
        // As a crawler does: wait as long as the frontier says until the entry is due.
        let waited = std::time::Instant::now();
        loop {
            tokio::time::sleep(wait).await;
            match f.claim().await.unwrap() {
                Claim::Entry(c) => {
                    assert_eq!(c.attempts, 1);
                    break;
                }
                Claim::Wait(d) if waited.elapsed() < 10 * due_in => wait = d,
                other => panic!("{other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn budget_and_capacity_bound_the_crawl() {
        let f = MemoryFrontier::new(FrontierLimits {
            max_claims: Some(2),
            max_entries: 3,
        });
        let entries = (0..10)
            .map(|i| entry(&format!("http://a.test/{i}"), 1, Discovery::Link))
            .collect();
        assert_eq!(f.push(entries).await.unwrap(), 3);
        let (a, _) = claim_url(&f).await.unwrap();
        let (b, _) = claim_url(&f).await.unwrap();
        assert!(matches!(f.claim().await.unwrap(), Claim::Wait(_)));
        f.complete(a, EntryState::Skipped("x".into()))
            .await
            .unwrap();
        f.complete(b, EntryState::Failed("y".into())).await.unwrap();
        assert!(matches!(f.claim().await.unwrap(), Claim::Done));
        let p = f.progress().await.unwrap();
        assert_eq!((p.queued, p.dropped), (1, 7));
    }
}
