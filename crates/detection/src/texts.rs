//! Chapter texts read from the store for verification, and the one function that finds the
//! registered chapters a page's text copies.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bounds::Shard;
use jobs::{Error, Result, matcher_err};
use matcher::{ChapterSource, Matcher, SourceError};
use store::{Chapter, IndexLoads, WorkReads};

use crate::index::LoadReport;

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
                Err(e) => {
                    return Err(Error::Store {
                        doing: "reading a candidate chapter",
                        source: e,
                    });
                }
            }
        }
        Ok(StoreTexts { chapters })
    }

    /// A chapter read by [`StoreTexts::load`].
    pub fn chapter(&self, id: matcher::ChapterId) -> Option<&Chapter> {
        self.chapters.get(&id).map(AsRef::as_ref)
    }
}

/// Chapters `ids` as stored, through `cache` (a chapter never changes once stored), by id;
/// those no longer stored are left out. For pages that show chapters next to their copies.
///
/// # Errors
/// A database failure.
pub async fn chapters(
    store: &impl WorkReads,
    ids: impl IntoIterator<Item = store::ChapterId>,
    cache: &TextCache,
) -> Result<HashMap<store::ChapterId, Arc<Chapter>>> {
    let texts = StoreTexts::load(
        store,
        ids.into_iter().map(|id| matcher::ChapterId(id.0)),
        cache,
    )
    .await?;
    Ok(texts
        .chapters
        .into_iter()
        .map(|(id, chapter)| (store::ChapterId(id.0), chapter))
        .collect())
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
        .map_err(matcher_err("looking up candidates"))?;
    let texts = runtime.block_on(StoreTexts::load(
        store,
        candidates.iter().map(|c| c.chapter),
        cache,
    ))?;
    // Verify the candidates already looked up (`check_page` would look them up again), as
    // a batch's are.
    let found = matcher
        .verify_candidates(&page, candidates, &texts)
        .map_err(matcher_err("verifying the candidates"))?;
    Ok((found, texts))
}

/// Pages verified together in [`find_batch`]: the candidate chapters' texts of this many
/// pages are read and held at once.
const VERIFY_PAGES: usize = 256;

/// Batch mode's [`find`]: the registered chapters each of `texts` copies, best first, found by
/// streaming the stored fingerprints of `shard`'s works past an index of the pages' keys
/// ([`matcher::batch`]) instead of asking `matcher`'s index, which is not read (a matcher
/// over no chapters serves, [`Matcher::without_chapters`]). The matches equal [`find`]'s
/// against an index of the same chapters. Returns them with what the stream read. Runs on a
/// blocking thread, as [`find`]; the pages are held, prepared, until they are verified.
///
/// # Errors
/// A database failure.
pub fn find_batch(
    matcher: &Matcher,
    store: &(impl WorkReads + IndexLoads + Sync),
    shard: Shard,
    texts: &[&str],
    runtime: &tokio::runtime::Handle,
    cache: &TextCache,
) -> Result<(Vec<Vec<matcher::Match>>, LoadReport)> {
    find_streamed(matcher, store, texts, runtime, cache, |query| {
        runtime.block_on(crate::index::stream_chapters(store, shard, query))
    })
}

/// [`find_batch`] against the chapters of one work only: whether the pages copy `work`,
/// judged without the rest of the catalogue (a re-check in a deployment of index shards,
/// whose worker holds no index).
///
/// # Errors
/// A database failure.
pub fn find_in_work(
    matcher: &Matcher,
    store: &(impl WorkReads + IndexLoads + Sync),
    work: store::WorkId,
    texts: &[&str],
    runtime: &tokio::runtime::Handle,
    cache: &TextCache,
) -> Result<Vec<Vec<matcher::Match>>> {
    find_streamed(matcher, store, texts, runtime, cache, |query| {
        runtime.block_on(crate::index::stream_work(store, work, query))
    })
    .map(|(found, _)| found)
}

/// The pages of `texts` prepared and indexed as a batch, `stream` streaming chapters past
/// it, and each page's candidates verified.
fn find_streamed(
    matcher: &Matcher,
    store: &(impl WorkReads + Sync),
    texts: &[&str],
    runtime: &tokio::runtime::Handle,
    cache: &TextCache,
    stream: impl FnOnce(&mut matcher::BatchQuery) -> Result<LoadReport>,
) -> Result<(Vec<Vec<matcher::Match>>, LoadReport)> {
    let pages: Vec<_> = texts.iter().map(|t| matcher.page(t)).collect();
    let mut query = matcher
        .batch(&pages)
        .map_err(matcher_err("indexing a batch of pages"))?;
    let streamed = stream(&mut query)?;
    let mut candidates = query.finish().into_iter();
    let mut found = Vec::with_capacity(pages.len());
    for chunk in pages.chunks(VERIFY_PAGES) {
        let chunk_candidates: Vec<_> = candidates.by_ref().take(chunk.len()).collect();
        let texts = runtime.block_on(StoreTexts::load(
            store,
            chunk_candidates.iter().flatten().map(|c| c.chapter),
            cache,
        ))?;
        for (page, candidates) in chunk.iter().zip(chunk_candidates) {
            found.push(
                matcher
                    .verify_candidates(page, candidates, &texts)
                    .map_err(matcher_err("verifying a batch's candidates"))?,
            );
        }
    }
    Ok((found, streamed))
}
