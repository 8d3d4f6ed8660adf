//! Wiring between the store and the matcher: the index loaded from the stored fingerprints,
//! and chapter texts read from the store for verification.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use fingerprint::{FingerprintSummary, Fingerprinter, Winnow};
use matcher::{ChapterEntry, ChapterSource, IndexBuilder, Matcher, MatcherSettings, SourceError};
use store::{
    Chapter, IndexEntry, IndexLoads, Page, Posting, WorkChangeKind, WorkChanges, WorkReads,
};

/// Chapters per index-load query: one query a page (two for chapters stored before
/// postings were packed), a few MB of postings each.
const LOAD_PAGE: u32 = 500;

/// How the load went.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadReport {
    /// Chapters in the index.
    pub chapters: usize,
    /// Chapters left out: their stored fingerprint could not be read or was computed by
    /// another normaliser version.
    pub skipped: usize,
}

fn winnows(postings: &[Posting]) -> Vec<Winnow> {
    postings
        .iter()
        .map(|p| Winnow {
            hash: p.hash,
            pos: p.pos,
        })
        .collect()
}

/// A stored entry decoded for the index: the summary and both winnowings.
struct Decoded {
    summary: FingerprintSummary,
    winnow: Vec<Winnow>,
    pinyin_winnow: Vec<Winnow>,
}

impl Decoded {
    /// `None` (after a warning) when the stored summary cannot be read.
    fn new(entry: &IndexEntry) -> Option<Self> {
        match FingerprintSummary::from_bytes(&entry.summary) {
            Ok(summary) => Some(Decoded {
                summary,
                winnow: winnows(&entry.text_winnow),
                pinyin_winnow: winnows(&entry.pinyin_winnow),
            }),
            Err(e) => {
                tracing::warn!(chapter = %entry.chapter_id, error = %e, "unreadable fingerprint skipped");
                None
            }
        }
    }

    fn entry<'a>(&'a self, stored: &IndexEntry) -> ChapterEntry<'a> {
        ChapterEntry {
            id: matcher::ChapterId(stored.chapter_id.0),
            work: matcher::WorkId(stored.work_id.0),
            summary: &self.summary,
            winnow: &self.winnow,
            pinyin_winnow: &self.pinyin_winnow,
        }
    }
}

/// Adds `entries` through `add` (an index builder's or a built index's), counting what was
/// indexed and what was refused.
fn add_entries(
    entries: &[IndexEntry],
    report: &mut LoadReport,
    mut add: impl FnMut(&ChapterEntry<'_>) -> matcher::Result<matcher::ChapterKey>,
) {
    for stored in entries {
        let Some(decoded) = Decoded::new(stored) else {
            report.skipped += 1;
            continue;
        };
        match add(&decoded.entry(stored)) {
            Ok(_) => report.chapters += 1,
            Err(e) => {
                tracing::warn!(chapter = %stored.chapter_id, error = %e, "fingerprint not indexed");
                report.skipped += 1;
            }
        }
    }
}

/// Builds a matcher over every chapter fingerprint in the store, a page of chapters at a time.
///
/// # Errors
/// Invalid settings or a database failure. A chapter whose fingerprint the index refuses is
/// skipped and counted in the report instead.
pub async fn load_matcher(
    store: &impl IndexLoads,
    settings: MatcherSettings,
    fingerprinter: Arc<Fingerprinter>,
) -> Result<(Matcher, LoadReport)> {
    let mut builder =
        IndexBuilder::new(settings.index.clone()).context("while setting up the index")?;
    let mut report = LoadReport::default();
    let mut after = None;
    loop {
        let page = store
            .index_entries(Page {
                after,
                limit: Some(LOAD_PAGE),
            })
            .await
            .context("while loading fingerprints from the database")?;
        after = page.last().map(|e| e.chapter_id);
        let short = page.len() < LOAD_PAGE as usize;
        add_entries(&page, &mut report, |e| builder.add(e));
        if short {
            break;
        }
    }
    let matcher = Matcher::new(settings, fingerprinter, builder.build())
        .context("while setting up the matcher")?;
    Ok((matcher, report))
}

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
    full_loads: std::sync::atomic::AtomicUsize,
    changes_applied: std::sync::atomic::AtomicUsize,
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
        let applied = store
            .last_change()
            .await
            .context("while reading the work change log")?;
        let (matcher, loaded) = load_matcher(store, settings, fingerprinter).await?;
        Ok(LiveIndex {
            matcher: std::sync::RwLock::new(matcher),
            applied: tokio::sync::Mutex::new(applied),
            loaded,
            full_loads: std::sync::atomic::AtomicUsize::new(1),
            changes_applied: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// The matcher, for queries (a read lock: hold it for one page, not across awaits).
    pub fn matcher(&self) -> std::sync::RwLockReadGuard<'_, Matcher> {
        self.matcher
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
                .context("while reading the work change log")?;
            for change in &changes {
                let work = matcher::WorkId(change.work_id.0);
                let entries = match change.kind {
                    WorkChangeKind::Added => store
                        .work_index_entries(change.work_id)
                        .await
                        .context("while reading an added work's fingerprints")?,
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

/// Chapter texts shared by the pages of one run (`check` over a directory: pages of one
/// novel name the same candidates again and again), so each is read from the store once.
/// Bounded: when it holds more than [`TextCache::MAX_BYTES`] of text it starts over.
/// Chapters never change once stored (a re-import is a new work), so a cached text is never
/// stale; a deleted chapter is simply no longer a candidate once the index dropped it.
#[derive(Debug, Default)]
pub struct TextCache {
    inner: std::sync::Mutex<(HashMap<matcher::ChapterId, Arc<Chapter>>, usize)>,
}

impl TextCache {
    /// Text bytes kept at most.
    pub const MAX_BYTES: usize = 256 << 20;

    fn get(&self, id: matcher::ChapterId) -> Option<Arc<Chapter>> {
        let inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        inner.0.get(&id).cloned()
    }

    fn put(&self, id: matcher::ChapterId, chapter: Arc<Chapter>) {
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if inner.1 + chapter.body.len() > Self::MAX_BYTES {
            *inner = (HashMap::new(), 0);
        }
        inner.1 += chapter.body.len();
        inner.0.insert(id, chapter);
    }
}

/// Chapter texts read from the store ahead of verification: the matcher's queries are
/// synchronous, so the few candidates' chapters are fetched first, then matched.
#[derive(Debug, Default)]
pub struct StoreTexts {
    chapters: HashMap<matcher::ChapterId, Arc<Chapter>>,
}

impl StoreTexts {
    /// Reads the chapters `ids`, from `cache` when it has them (those no longer stored are
    /// left out; the matcher skips them).
    ///
    /// # Errors
    /// A database failure.
    pub async fn load(
        store: &impl WorkReads,
        ids: impl IntoIterator<Item = matcher::ChapterId>,
        cache: &TextCache,
    ) -> Result<Self> {
        let mut chapters = HashMap::new();
        for id in ids {
            if let Some(chapter) = cache.get(id) {
                chapters.insert(id, chapter);
                continue;
            }
            match store.chapter(store::ChapterId(id.0)).await {
                Ok(chapter) => {
                    let chapter = Arc::new(chapter);
                    cache.put(id, Arc::clone(&chapter));
                    chapters.insert(id, chapter);
                }
                Err(store::Error::NotFound { .. }) => {}
                Err(e) => return Err(e).context("while reading a candidate chapter"),
            }
        }
        Ok(StoreTexts { chapters })
    }

    /// A chapter read by [`StoreTexts::load`].
    pub fn chapter(&self, id: matcher::ChapterId) -> Option<&Chapter> {
        self.chapters.get(&id).map(AsRef::as_ref)
    }
}

impl ChapterSource for StoreTexts {
    fn chapter_text(
        &self,
        chapter: matcher::ChapterId,
    ) -> std::result::Result<Option<Cow<'_, str>>, SourceError> {
        Ok(self
            .chapters
            .get(&chapter)
            .map(|c| Cow::Borrowed(c.body.as_str())))
    }
}

/// The registered chapters `text` copies, best first, with the chapters' texts. Runs on a
/// blocking thread (`spawn_blocking`): fingerprinting and verification are CPU work, and the
/// few candidate chapters are read from the store through `runtime`.
///
/// # Errors
/// A database failure.
pub fn find(
    matcher: &Matcher,
    store: &(impl WorkReads + Sync),
    text: &str,
    runtime: &tokio::runtime::Handle,
    cache: &TextCache,
) -> Result<(Vec<matcher::Match>, StoreTexts)> {
    let page = matcher.page(text);
    let candidates = matcher
        .candidates(&page)
        .context("while looking up candidates")?;
    let texts = runtime.block_on(StoreTexts::load(
        store,
        candidates.iter().map(|c| c.chapter),
        cache,
    ))?;
    // Verify the candidates already looked up (`check_page` would look them up again).
    let verified = candidates
        .iter()
        .filter_map(|c| Some(matcher.verify(&page, c, &texts.chapter(c.chapter)?.body)))
        .collect();
    Ok((matcher.select(&page, verified), texts))
}

/// The match stage's job: brings `live` up to date with the works, matches the stored main
/// text of `snapshot` and makes the result the snapshot's stored matches, filed in cases
/// (`store::MatchWrites::record_matches`). Returns how many.
///
/// # Errors
/// A database failure, or [`store::Error::NotFound`] (in the chain) when the snapshot has no
/// stored text.
pub async fn match_snapshot(
    store: &store::Store,
    live: &Arc<LiveIndex>,
    snapshot: store::SnapshotId,
) -> Result<usize> {
    use store::{EvidenceReads, MatchWrites, NewMatch};
    live.refresh(store).await?;
    let page = store
        .page_text(snapshot)
        .await
        .context("while reading the page text")?;
    let (live_index, blocking_store) = (Arc::clone(live), store.clone());
    let runtime = tokio::runtime::Handle::current();
    let matches = tokio::task::spawn_blocking(move || {
        let matcher = live_index.matcher();
        // One page: nothing to share a cache with.
        let cache = TextCache::default();
        find(&matcher, &blocking_store, &page.body, &runtime, &cache).map(|(matches, _)| matches)
    })
    .await
    .context("matching a page failed")??;
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
                passages: serde_json::to_string(&m.spans)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // The matches and the cases they open or reopen are written in one transaction.
    store
        .record_matches(snapshot, &rows, "worker")
        .await
        .context("while storing the matches")?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    //! The live index on both backends: works added and removed after the start-up load reach
    //! it through the change log, without a reload.

    use super::*;
    use import::{ImportOptions, ImportSettings, Importer};
    use store::testing::TestDb;
    use store::{EvidenceWrites, MatchReads, NewPageText, NewSnapshot, WorkWrites};

    /// 老残游记 1–2: registered before the index is loaded.
    const FIRST: &str = include_str!("../../import/tests/data/laocanyouji_toc_1-2.txt");
    /// 封神演义 1–3 (traditional): registered while the index runs.
    const LATER: &str = include_str!("../../import/tests/data/fengshenyanyi_hant_1-3.txt");

    /// Chapter 2 of 封神演义 in simplified script with an ad in front: a pirate page.
    fn pirate_page() -> String {
        let start = LATER.find("第二回").expect("chapter 2");
        let end = LATER.find("第三回").expect("chapter 3");
        let chapter = zhconv::zhconv(&LATER[start..end], zhconv::Variant::ZhHans);
        format!("【本站首发】最新章节请访问 www.example.com！\n{chapter}")
    }

    async fn import(store: &store::Store, name: &str, text: &str) -> store::WorkId {
        let importer = Importer::new(ImportSettings::default()).unwrap();
        importer
            .import_bytes(
                store,
                name,
                text.as_bytes().to_vec(),
                &ImportOptions::default(),
                &(),
            )
            .await
            .unwrap()
            .work
    }

    async fn found(live: &LiveIndex, store: &store::Store, text: &str) -> Vec<i64> {
        let (live, store, text) = (live.matcher(), store.clone(), text.to_owned());
        let runtime = tokio::runtime::Handle::current();
        let cache = TextCache::default();
        tokio::task::block_in_place(|| find(&live, &store, &text, &runtime, &cache))
            .unwrap()
            .0
            .iter()
            .map(|m| m.work.0)
            .collect()
    }

    /// A stored snapshot whose page text is `text`.
    async fn snapshot(store: &store::Store, text: &str) -> store::SnapshotId {
        let body = text.as_bytes();
        let url = "https://pirate.example/book/2.html".to_owned();
        let new = NewSnapshot {
            crawl: None,
            url: url.clone(),
            final_url: url.clone(),
            status: 200,
            http_version: "HTTP/1.1".into(),
            headers: Vec::new(),
            header_block: Vec::new(),
            request_header_block: Vec::new(),
            content_type: Some("text/plain; charset=utf-8".into()),
            redirects: "[]".into(),
            sha256: [7; 32],
            body_len: body.len() as u64,
            body_status: "complete".into(),
            fetched_at: chrono::Utc::now(),
            elapsed_ms: 1,
            remote_addr: None,
            etag: None,
            last_modified: None,
        };
        let (id, _) = store
            .insert_snapshot(&new, Some(&zstd::encode_all(body, 1).unwrap()))
            .await
            .unwrap();
        store
            .insert_page_text(&NewPageText {
                snapshot: id,
                url,
                depth: 0,
                chain: None,
                kind: "chapter".into(),
                title: None,
                chapter_title: None,
                body: text.to_owned(),
                encoding: "UTF-8".into(),
                decode_errors: false,
                not_modified: false,
                fetched_at: chrono::Utc::now(),
            })
            .await
            .unwrap();
        id
    }

    async fn works_reach_a_running_index_without_a_reload(db: &TestDb) {
        let store = &db.store;
        let first = import(store, "老残游记.txt", FIRST).await;
        let fingerprinter = Arc::new(Fingerprinter::new(Default::default()).unwrap());
        let live = Arc::new(
            LiveIndex::load(store, MatcherSettings::default(), fingerprinter)
                .await
                .unwrap(),
        );
        let loaded = live.matcher().index().len();
        assert_eq!(live.loaded.chapters, loaded);
        let page = pirate_page();
        assert!(found(&live, store, &page).await.is_empty());
        // Nothing happened since the load.
        assert_eq!(live.refresh(store).await.unwrap(), 0);

        let later = import(store, "封神演义.txt", LATER).await;
        // Not before a refresh: the index is a snapshot until then.
        assert!(found(&live, store, &page).await.is_empty());
        assert_eq!(live.refresh(store).await.unwrap(), 1);
        assert_eq!(found(&live, store, &page).await, vec![later.0]);
        assert!(live.matcher().index().len() > loaded);

        // The match job stores the result (and replaces it when run again).
        let snap = snapshot(store, &page).await;
        for _ in 0..2 {
            assert_eq!(match_snapshot(store, &live, snap).await.unwrap(), 1);
            let stored = store.matches_of(snap).await.unwrap();
            assert_eq!(stored.len(), 1);
            assert_eq!(stored[0].found.work_id, later);
            assert!(stored[0].found.coverage > 0.9);
            assert!(stored[0].found.passages.starts_with("[{"));
        }

        store.delete_work(later).await.unwrap();
        assert_eq!(live.refresh(store).await.unwrap(), 1);
        assert!(found(&live, store, &page).await.is_empty());
        assert_eq!(live.matcher().index().len(), loaded);
        // Matching again after the removal clears the stored match (its chapter is gone).
        assert_eq!(match_snapshot(store, &live, snap).await.unwrap(), 0);
        assert!(store.matches_of(snap).await.unwrap().is_empty());
        // The first work is still found, and no refresh ever reloaded.
        let own = &FIRST[FIRST.rfind("第二回").unwrap()..];
        assert_eq!(found(&live, store, own).await, vec![first.0]);
        assert_eq!(live.full_loads(), 1);
        assert_eq!(live.changes_applied(), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn live_index_follows_works_on_sqlite() {
        let Some(db) = store::testing::sqlite("live_index_sqlite").await else {
            return;
        };
        works_reach_a_running_index_without_a_reload(&db).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn live_index_follows_works_on_postgres() {
        let Some(db) = store::testing::postgres("live_index_postgres").await else {
            return;
        };
        works_reach_a_running_index_without_a_reload(&db).await;
    }
}
