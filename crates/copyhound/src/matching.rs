//! Wiring between the store and the matcher: the index loaded from the stored fingerprints,
//! and chapter texts read from the store for verification.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use fingerprint::{FingerprintSummary, Fingerprinter, Winnow};
use matcher::{ChapterEntry, ChapterSource, IndexBuilder, Matcher, MatcherSettings, SourceError};
use store::{Chapter, IndexLoads, Page, Posting, WorkReads};

/// Chapters per index-load query: two queries a page, a few MB of postings each.
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
        for entry in &page {
            let summary = match FingerprintSummary::from_bytes(&entry.summary) {
                Ok(summary) => summary,
                Err(e) => {
                    tracing::warn!(chapter = %entry.chapter_id, error = %e, "unreadable fingerprint skipped");
                    report.skipped += 1;
                    continue;
                }
            };
            let (winnow, pinyin_winnow) =
                (winnows(&entry.text_winnow), winnows(&entry.pinyin_winnow));
            let added = builder.add(&ChapterEntry {
                id: matcher::ChapterId(entry.chapter_id.0),
                work: matcher::WorkId(entry.work_id.0),
                summary: &summary,
                winnow: &winnow,
                pinyin_winnow: &pinyin_winnow,
            });
            match added {
                Ok(_) => report.chapters += 1,
                Err(e) => {
                    tracing::warn!(chapter = %entry.chapter_id, error = %e, "fingerprint not indexed");
                    report.skipped += 1;
                }
            }
        }
        if short {
            break;
        }
    }
    let matcher = Matcher::new(settings, fingerprinter, builder.build())
        .context("while setting up the matcher")?;
    Ok((matcher, report))
}

/// Chapter texts read from the store ahead of verification: the matcher's queries are
/// synchronous, so the few candidates' chapters are fetched first, then matched.
#[derive(Debug, Default)]
pub struct StoreTexts {
    chapters: HashMap<matcher::ChapterId, Chapter>,
}

impl StoreTexts {
    /// Reads the chapters `ids` (those no longer stored are left out; the matcher skips them).
    ///
    /// # Errors
    /// A database failure.
    pub async fn load(
        store: &impl WorkReads,
        ids: impl IntoIterator<Item = matcher::ChapterId>,
    ) -> Result<Self> {
        let mut chapters = HashMap::new();
        for id in ids {
            match store.chapter(store::ChapterId(id.0)).await {
                Ok(chapter) => {
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
        self.chapters.get(&id)
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

/// The registered chapters `text` copies, best first, with the chapters' texts.
///
/// # Errors
/// A database failure.
pub async fn find(
    matcher: &Matcher,
    store: &impl WorkReads,
    text: &str,
) -> Result<(Vec<matcher::Match>, StoreTexts)> {
    let page = matcher.page(text);
    let candidates = matcher
        .candidates(&page)
        .context("while looking up candidates")?;
    let texts = StoreTexts::load(store, candidates.iter().map(|c| c.chapter)).await?;
    // Verify the candidates already looked up (`check_page` would look them up again).
    let verified = candidates
        .iter()
        .filter_map(|c| Some(matcher.verify(&page, c, &texts.chapter(c.chapter)?.body)))
        .collect();
    Ok((matcher.select(&page, verified), texts))
}
