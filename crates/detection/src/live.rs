//! The index a worker keeps: loaded at start from a snapshot ([`crate::snapshot`]) or from
//! the store ([`crate::index`]), and kept current through the work change log.

use std::sync::Arc;

use bounds::Shard;
use fingerprint::Fingerprinter;
use jobs::{Result, matcher_err, store_err};
use matcher::{Matcher, MatcherSettings};
use store::{IndexEntry, IndexLoads, WorkChangeKind, WorkChanges};

use crate::index::{Decoded, LoadReport, load_shard};
use crate::snapshot::SnapshotPlace;

/// Changes read from the log per query while refreshing.
const CHANGES_PAGE: u32 = 1000;

/// A long-lived index kept current as works are added and removed, without reloading: it
/// remembers the last change-log sequence number it applied, and [`LiveIndex::refresh`]
/// applies the newer ones (an added work's chapters are read and added, a removed work's
/// dropped). Matching takes the read lock, so queries run in parallel and a refresh holds
/// the write lock only while it changes the index, never while it reads the database.
#[derive(Debug)]
pub struct LiveIndex {
    matcher: std::sync::RwLock<Matcher>,
    /// The last sequence number applied; the lock also keeps refreshes one at a time.
    applied: tokio::sync::Mutex<i64>,
    /// What the start-up load found.
    pub loaded: LoadReport,
    /// Where the start-up load came from.
    pub origin: IndexOrigin,
    /// The works it holds: [`Shard::ALL`], or one shard's.
    shard: Shard,
    full_loads: std::sync::atomic::AtomicUsize,
    changes_applied: std::sync::atomic::AtomicUsize,
}

/// Where a [`LiveIndex`] was loaded from.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexOrigin {
    /// Built from every stored fingerprint.
    Store {
        /// Why the snapshot found was not used (damaged, truncated, of another version or
        /// settings, unreadable), when one was looked for and found wanting.
        refused: Option<String>,
    },
    /// Read from a snapshot, then the change log replayed from its position.
    Snapshot {
        /// The snapshot's file or object.
        location: String,
        /// The change log position it was written at.
        position: i64,
        /// Changes replayed after it.
        replayed: usize,
    },
}

impl LiveIndex {
    /// Loads every stored chapter. The change log's position is read first, so a work
    /// written during the load is applied again by the first refresh (which is harmless:
    /// applying a change twice gives the same index).
    ///
    /// # Errors
    /// Invalid settings or a database failure.
    pub async fn load(
        store: &(impl IndexLoads + WorkChanges),
        settings: MatcherSettings,
        fingerprinter: Arc<Fingerprinter>,
    ) -> Result<Self> {
        Self::load_from(store, settings, fingerprinter, None).await
    }

    /// [`LiveIndex::load_from`] holding only the works of `shard` ([`Shard::holds`]): the
    /// load and a snapshot keep only them, and refreshes ignore the change log's entries of
    /// other works. [`Shard::ALL`] holds everything, as [`LiveIndex::load_from`].
    ///
    /// # Errors
    /// As [`LiveIndex::load_from`].
    pub async fn load_shard(
        store: &(impl IndexLoads + WorkChanges),
        settings: MatcherSettings,
        fingerprinter: Arc<Fingerprinter>,
        snapshots: Option<&SnapshotPlace>,
        shard: Shard,
    ) -> Result<Self> {
        let mut refused = None;
        if let Some(place) = snapshots {
            match crate::snapshot::read_newest(place, &settings.index).await {
                Ok(Some(mut found)) => {
                    let position = found.header.position;
                    if !shard.is_all() {
                        found.index.retain_works(|w| shard.holds(w.0));
                    }
                    let matcher = Matcher::new(settings, fingerprinter, found.index)
                        .map_err(matcher_err("setting up the matcher"))?;
                    let mut live = LiveIndex::new(
                        matcher,
                        position,
                        IndexOrigin::Snapshot {
                            location: found.location.clone(),
                            position,
                            replayed: 0,
                        },
                        shard,
                    );
                    let replayed = live.refresh(store).await?;
                    let chapters = live.matcher().index().len();
                    live.loaded.chapters = chapters;
                    live.origin = IndexOrigin::Snapshot {
                        location: found.location,
                        position,
                        replayed,
                    };
                    tracing::info!(
                        snapshot = %place.describe(),
                        position,
                        replayed,
                        shard = %shard,
                        "matcher index read from a snapshot"
                    );
                    return Ok(live);
                }
                Ok(None) => tracing::info!(
                    snapshot = %place.describe(),
                    "no index snapshot there; loading the index from the database"
                ),
                Err(e) => {
                    let why = jobs::chain(&e);
                    tracing::warn!(reason = %why, "index snapshot not used; loading the index from the database");
                    refused = Some(why);
                }
            }
        }
        let applied = store
            .last_change()
            .await
            .map_err(store_err("reading the work change log"))?;
        let (matcher, loaded) = load_shard(store, settings, fingerprinter, shard).await?;
        let mut live = LiveIndex::new(matcher, applied, IndexOrigin::Store { refused }, shard);
        live.loaded = loaded;
        Ok(live)
    }

    /// Loads the newest snapshot at `snapshots` and replays the change log from its
    /// position; without a place, or when it holds no snapshot, or when the newest is
    /// refused (damaged, truncated, another format or normaliser version, other index
    /// settings) or cannot be read, loads every stored chapter as [`LiveIndex::load`] does.
    /// A refusal is logged with its reason and kept in [`LiveIndex::origin`].
    ///
    /// # Errors
    /// Invalid settings or a database failure (a snapshot's failure is not one: the store
    /// is loaded instead).
    pub async fn load_from(
        store: &(impl IndexLoads + WorkChanges),
        settings: MatcherSettings,
        fingerprinter: Arc<Fingerprinter>,
        snapshots: Option<&SnapshotPlace>,
    ) -> Result<Self> {
        Self::load_shard(store, settings, fingerprinter, snapshots, Shard::ALL).await
    }

    fn new(matcher: Matcher, applied: i64, origin: IndexOrigin, shard: Shard) -> Self {
        LiveIndex {
            loaded: LoadReport {
                chapters: matcher.index().len(),
                skipped: 0,
            },
            matcher: std::sync::RwLock::new(matcher),
            applied: tokio::sync::Mutex::new(applied),
            origin,
            shard,
            full_loads: std::sync::atomic::AtomicUsize::new(1),
            changes_applied: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The matcher, for queries (a read lock: hold it for one page, not across awaits).
    pub fn matcher(&self) -> std::sync::RwLockReadGuard<'_, Matcher> {
        self.matcher
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The works it holds: [`Shard::ALL`] or one shard's.
    pub fn shard(&self) -> Shard {
        self.shard
    }

    /// Full loads done (1: the start-up one; refreshes never reload).
    pub fn full_loads(&self) -> usize {
        self.full_loads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Changes applied by refreshes so far.
    pub fn changes_applied(&self) -> usize {
        self.changes_applied
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Applies the changes logged since the last refresh; returns how many.
    ///
    /// # Errors
    /// A database failure; the changes applied before it stay applied, the rest come with the
    /// next refresh.
    pub async fn refresh(&self, store: &(impl IndexLoads + WorkChanges)) -> Result<usize> {
        let mut applied = self.applied.lock().await;
        let mut count = 0;
        loop {
            let changes = store
                .changes_since(*applied, CHANGES_PAGE)
                .await
                .map_err(store_err("reading the work change log"))?;
            for change in &changes {
                if !self.shard.holds(change.work_id.0) {
                    // Another shard's work: that shard follows it.
                    *applied = change.seq;
                    continue;
                }
                let work = matcher::WorkId(change.work_id.0);
                let entries = match change.kind {
                    WorkChangeKind::Added => store
                        .work_index_entries(change.work_id)
                        .await
                        .map_err(store_err("reading an added work's fingerprints"))?,
                    WorkChangeKind::Removed => Vec::new(),
                };
                // Decode outside the lock; swap under it.
                let decoded: Vec<(Option<Decoded>, &IndexEntry)> =
                    entries.iter().map(|e| (Decoded::new(e), e)).collect();
                {
                    let mut matcher = self
                        .matcher
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    let index = matcher.index_mut();
                    // Idempotent: a work added twice (or loaded, then added) is replaced.
                    index.remove_work(work);
                    for (d, stored) in &decoded {
                        let Some(d) = d else { continue };
                        if let Err(e) = index.add(&d.entry(stored)) {
                            tracing::warn!(chapter = %stored.chapter_id, error = %e, "fingerprint not indexed");
                        }
                    }
                }
                *applied = change.seq;
                count += 1;
                self.changes_applied
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            if changes.len() < CHANGES_PAGE as usize {
                return Ok(count);
            }
        }
    }
}
