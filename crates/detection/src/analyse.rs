//! The match stage: a stored page's main text matched against the registered works, the
//! result stored as the snapshot's matches.

use std::sync::Arc;

use fingerprint::{FingerprintSettings, Fingerprinter};
use jobs::{Error, Result, store_err};
use matcher::MatcherSettings;
use store::{EvidenceReads, MatchWrites, NewMatch, SnapshotId, Store};

use crate::live::LiveIndex;
use crate::snapshot::SnapshotPlace;
use crate::texts::{TextCache, find};

/// Who the audit log names for cases the match stage opens or reopens.
const ACTOR: &str = "pipeline";

/// Pages a batch holds unless told otherwise: each is held prepared (its normalised text
/// and fingerprint, some tens of KB) until the chapters have streamed past, so 2,000 pages
/// cost some hundreds of MB at most, and the chapters are streamed once per 2,000 pages.
pub const DEFAULT_BATCH_PAGES: usize = 2000;

/// What matching one stored page found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analysed {
    /// Matches stored for the page (licensed ones included).
    pub matches: usize,
    /// Of which on a licensed domain (in no case).
    pub licensed: usize,
    /// Cases this page opened.
    pub opened: Vec<store::CaseId>,
    /// Cases this page reopened (a copy back after removal, a new chapter after dismissal).
    pub reopened: Vec<store::CaseId>,
    /// Every case the page's matches belong to.
    pub cases: Vec<store::CaseId>,
}

/// Matches stored pages: the live index (loaded by the first page, then kept current through
/// the work change log, never reloaded) and the chapter texts the pages named, shared by
/// every page it matches. One per process; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Analyser {
    store: Store,
    fingerprint: FingerprintSettings,
    matcher: MatcherSettings,
    live: tokio::sync::OnceCell<Arc<LiveIndex>>,
    /// The pages' fingerprinter (its dictionaries loaded once), shared with the index.
    fingerprinter: tokio::sync::OnceCell<Arc<Fingerprinter>>,
    /// Where the index's snapshots are looked for (`[index] snapshot`); none: the store.
    snapshots: Option<SnapshotPlace>,
    texts: Arc<TextCache>,
    /// Whether a time-stamping authority is configured: each snapshot that becomes evidence
    /// of a case then queues its [`jobs::Job::StampSnapshot`].
    stamp: bool,
    /// Whether webhooks listen: cases opened and reopened here, and copies back up or cases
    /// removed by the re-checks that use this analyser, then queue their [`jobs::Job::Event`].
    events: bool,
    /// The works its index holds ([`Analyser::with_shard`]).
    shard: bounds::Shard,
}

impl Analyser {
    /// An analyser over `store` that fingerprints pages with `fingerprint` (the settings the
    /// works were fingerprinted with) and matches with `matcher`. Nothing is loaded until the
    /// first page.
    pub fn new(store: Store, fingerprint: FingerprintSettings, matcher: MatcherSettings) -> Self {
        Analyser {
            store,
            fingerprint,
            matcher,
            live: tokio::sync::OnceCell::new(),
            fingerprinter: tokio::sync::OnceCell::new(),
            snapshots: None,
            texts: Arc::default(),
            stamp: false,
            events: false,
            shard: bounds::Shard::ALL,
        }
    }

    /// The analyser of one shard (`copyhound worker --shard K/N`): its index holds only the
    /// works of `shard` ([`LiveIndex::load_shard`]) and [`Analyser::analyse`] replaces only
    /// their matches ([`store::MatchWrites::record_matches_scoped`]). [`bounds::Shard::ALL`]
    /// (the default) holds everything.
    #[must_use]
    pub fn with_shard(mut self, shard: bounds::Shard) -> Self {
        self.shard = shard;
        self
    }

    /// The works its index holds ([`Analyser::with_shard`]).
    pub fn shard(&self) -> bounds::Shard {
        self.shard
    }

    /// The analyser queueing a [`jobs::Job::Event`] for each case it opens or reopens (and
    /// its re-checks for copies back up and cases removed), when `events` (webhooks are
    /// configured).
    #[must_use]
    pub fn with_events(mut self, events: bool) -> Self {
        self.events = events;
        self
    }

    /// The analyser loading its index from the newest snapshot at `snapshots` (then the
    /// change log from its position) when there is a good one; from the store otherwise.
    #[must_use]
    pub fn with_snapshots(mut self, snapshots: Option<SnapshotPlace>) -> Self {
        self.snapshots = snapshots;
        self
    }

    /// Whether events are queued ([`Analyser::with_events`]).
    pub fn emits(&self) -> bool {
        self.events
    }

    /// The analyser queueing a [`jobs::Job::StampSnapshot`] for every snapshot whose
    /// matches are filed in a case, when `stamp` (a time-stamping authority is configured).
    #[must_use]
    pub fn with_stamping(mut self, stamp: bool) -> Self {
        self.stamp = stamp;
        self
    }

    /// Whether evidence snapshots are stamped ([`Analyser::with_stamping`]).
    pub fn stamps(&self) -> bool {
        self.stamp
    }

    /// The live index, loaded on first use.
    ///
    /// # Errors
    /// Invalid settings or a database failure (the next call tries again).
    pub async fn index(&self) -> Result<&Arc<LiveIndex>> {
        self.live
            .get_or_try_init(|| async {
                let fingerprinter = Arc::clone(self.fingerprinter().await?);
                let live = LiveIndex::load_shard(
                    &self.store,
                    self.matcher.clone(),
                    fingerprinter,
                    self.snapshots.as_ref(),
                    self.shard,
                )
                .await?;
                tracing::info!(chapters = live.loaded.chapters, origin = ?live.origin, shard = %self.shard, "matcher index loaded");
                Ok(Arc::new(live))
            })
            .await
    }

    /// The fingerprinter of pages and works, made on first use.
    ///
    /// # Errors
    /// Invalid fingerprint settings.
    async fn fingerprinter(&self) -> Result<&Arc<Fingerprinter>> {
        self.fingerprinter
            .get_or_try_init(|| async {
                Fingerprinter::new(self.fingerprint.clone())
                    .map(Arc::new)
                    .map_err(Error::Fingerprint)
            })
            .await
    }

    /// A matcher with the analyser's settings over no chapters, for batch mode
    /// ([`matcher::Matcher::without_chapters`]): nothing is loaded.
    ///
    /// # Errors
    /// Invalid settings.
    pub async fn page_matcher(&self) -> Result<matcher::Matcher> {
        let fingerprinter = Arc::clone(self.fingerprinter().await?);
        matcher::Matcher::without_chapters(self.matcher.clone(), fingerprinter)
            .map_err(jobs::matcher_err("setting up the matcher"))
    }

    /// The index if it was loaded (for a refresh between pages).
    pub fn loaded(&self) -> Option<&Arc<LiveIndex>> {
        self.live.get()
    }

    /// Brings the index up to date with the works, matches the stored main text of
    /// `snapshot` and makes the result the snapshot's stored matches. Idempotent: matching a
    /// page again replaces its matches with the same ones. A shard's analyser finds and
    /// replaces the matches of its shard's works only ([`Analyser::with_shard`]).
    ///
    /// # Errors
    /// A database failure; [`Error::is_not_found`] when the snapshot has no stored text.
    pub async fn analyse(&self, snapshot: SnapshotId) -> Result<Analysed> {
        let live = self.index().await?;
        live.refresh(&self.store).await?;
        let page = self
            .store
            .page_text(snapshot)
            .await
            .map_err(store_err("reading the page text"))?;
        let (live_index, store, texts) = (
            Arc::clone(live),
            self.store.clone(),
            Arc::clone(&self.texts),
        );
        let runtime = tokio::runtime::Handle::current();
        let matches = tokio::task::spawn_blocking(move || {
            let matcher = live_index.matcher();
            find(&matcher, &store, &page.body, &runtime, &texts).map(|(matches, _)| matches)
        })
        .await
        .map_err(|e| Error::task("matching a page", e))??;
        self.record(snapshot, &matches).await
    }

    /// Matches the stored main texts of `snapshots` together in batch mode
    /// (`texts::find_batch`): the stored fingerprints of the shard's works are
    /// streamed past the pages once, and the loaded index (if any) is neither used nor
    /// loaded. Each page's result is recorded as [`Analyser::analyse`] records it, and equals
    /// it. A snapshot without a stored text is left out (not an error); the count of
    /// chapters streamed is returned beside the results.
    ///
    /// # Errors
    /// A database failure; the pages recorded before it stay recorded.
    pub async fn analyse_batch(
        &self,
        snapshots: &[SnapshotId],
    ) -> Result<(Vec<(SnapshotId, Analysed)>, crate::index::LoadReport)> {
        let (mut ids, mut bodies) = (Vec::new(), Vec::new());
        for &snapshot in snapshots {
            match self.store.page_text(snapshot).await {
                Ok(page) => {
                    ids.push(snapshot);
                    bodies.push(page.body);
                }
                Err(store::Error::NotFound { .. }) => {}
                Err(e) => return Err(store_err("reading the page text")(e)),
            }
        }
        let matcher = self.page_matcher().await?;
        let (store, texts, shard) = (self.store.clone(), Arc::clone(&self.texts), self.shard);
        let runtime = tokio::runtime::Handle::current();
        let (found, streamed) = tokio::task::spawn_blocking(move || {
            let bodies: Vec<&str> = bodies.iter().map(String::as_str).collect();
            crate::texts::find_batch(&matcher, &store, shard, &bodies, &runtime, &texts)
        })
        .await
        .map_err(|e| Error::task("matching a batch of pages", e))??;
        let mut out = Vec::with_capacity(found.len());
        for (snapshot, matches) in ids.into_iter().zip(found) {
            out.push((snapshot, self.record(snapshot, &matches).await?));
        }
        Ok((out, streamed))
    }

    /// Whether the stored main text of `snapshot` copies `work`, judged against that work's
    /// chapters alone (streamed past the page, `texts::find_in_work`); nothing is
    /// recorded and no index is loaded. What a re-check asks in a deployment of index shards,
    /// where the worker that runs it holds no index.
    ///
    /// # Errors
    /// A database failure; [`Error::is_not_found`] when the snapshot has no stored text.
    pub async fn copies_work(&self, snapshot: SnapshotId, work: store::WorkId) -> Result<bool> {
        let page = self
            .store
            .page_text(snapshot)
            .await
            .map_err(store_err("reading the page text"))?;
        let matcher = self.page_matcher().await?;
        let (store, texts) = (self.store.clone(), Arc::clone(&self.texts));
        let runtime = tokio::runtime::Handle::current();
        let found = tokio::task::spawn_blocking(move || {
            crate::texts::find_in_work(&matcher, &store, work, &[&page.body], &runtime, &texts)
        })
        .await
        .map_err(|e| Error::task("matching a page against a work", e))??;
        Ok(found
            .iter()
            .flatten()
            .any(|m| m.work == matcher::WorkId(work.0)))
    }

    /// Makes `matches` the stored matches of `snapshot` (of the shard's works), with the
    /// cases they open or reopen, then queues the stamps and events those ask for.
    async fn record(&self, snapshot: SnapshotId, matches: &[matcher::Match]) -> Result<Analysed> {
        let rows = matches
            .iter()
            .map(|m| {
                Ok(NewMatch {
                    chapter_id: store::ChapterId(m.chapter.0),
                    work_id: store::WorkId(m.work.0),
                    method: "align".to_owned(),
                    score: m.score,
                    coverage: m.coverage,
                    matched_chars: u32::try_from(m.matched_chars).unwrap_or(u32::MAX),
                    chapter_chars: u32::try_from(m.chapter_chars).unwrap_or(u32::MAX),
                    page_chars: u32::try_from(m.page_chars).unwrap_or(u32::MAX),
                    page_share: m.page_share,
                    passages: serde_json::to_string(&m.spans).map_err(|source| Error::Encode {
                        what: "aligned passages",
                        source,
                    })?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // The matches and the cases they open or reopen are written in one transaction.
        let recorded = self
            .store
            .record_matches_scoped(snapshot, &rows, self.shard, ACTOR)
            .await
            .map_err(store_err("storing the matches"))?;
        // After the matches' transaction: a worker dying in between runs this match job
        // again, which records the same matches and queues the stamp then (its key keeps it
        // queued once).
        if self.stamp {
            jobs::queue_stamp(&self.store, snapshot, &recorded.cases).await?;
        }
        if self.events {
            use jobs::{Event, emit};
            for (event, cases) in [
                (Event::CaseOpened, &recorded.opened),
                (Event::CaseReopened, &recorded.reopened),
            ] {
                for case in cases {
                    let data = serde_json::json!({ "case": case.0, "snapshot": snapshot.0 });
                    emit(&self.store, event, data).await?;
                }
            }
        }
        Ok(Analysed {
            matches: rows.len(),
            licensed: recorded.licensed,
            opened: recorded.opened,
            reopened: recorded.reopened,
            cases: recorded.cases,
        })
    }
}
