//! The matcher's index over the stored fingerprints, loaded a page of chapters at a time; a
//! snapshot of it ([`crate::snapshot`]) and the index kept current ([`crate::live`]) are
//! built on this.

use std::sync::Arc;

use bounds::Shard;
use fingerprint::{FingerprintSummary, Fingerprinter, Winnow};
use jobs::{Result, matcher_err, store_err};
use matcher::{ChapterEntry, IndexBuilder, Matcher, MatcherSettings};
use store::{IndexEntry, IndexLoads, Page, Posting};

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
pub(crate) struct Decoded {
    summary: FingerprintSummary,
    winnow: Vec<Winnow>,
    pinyin_winnow: Vec<Winnow>,
}

impl Decoded {
    /// `None` (after a warning) when the stored summary cannot be read.
    pub(crate) fn new(entry: &IndexEntry) -> Option<Self> {
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

    pub(crate) fn entry<'a>(&'a self, stored: &IndexEntry) -> ChapterEntry<'a> {
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
    mut add: impl FnMut(&ChapterEntry<'_>) -> matcher::Result<()>,
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
    load_shard(store, settings, fingerprinter, Shard::ALL).await
}

/// [`load_matcher`] of the chapters of `shard`'s works only ([`Shard::holds`] of the work
/// id): every stored entry is still read, a page at a time, and the others' dropped before
/// they are decoded.
///
/// # Errors
/// As [`load_matcher`].
pub async fn load_shard(
    store: &impl IndexLoads,
    settings: MatcherSettings,
    fingerprinter: Arc<Fingerprinter>,
    shard: Shard,
) -> Result<(Matcher, LoadReport)> {
    let mut builder =
        IndexBuilder::new(settings.index.clone()).map_err(matcher_err("setting up the index"))?;
    let mut report = LoadReport::default();
    for_each_stored_page(store, shard, |page| {
        add_entries(page, &mut report, |e| builder.add(e).map(drop));
    })
    .await?;
    let matcher = Matcher::new(settings, fingerprinter, builder.build())
        .map_err(matcher_err("setting up the matcher"))?;
    Ok((matcher, report))
}

/// Streams the chapter fingerprints of `shard`'s works in the store past a batch of pages
/// (batch mode, see [`matcher::batch`]), a page of chapters at a time, as [`load_shard`]
/// reads them into an index: the same chapters are skipped, so the batch's candidates are
/// those of a matcher of the shard loaded now.
///
/// # Errors
/// A database failure.
pub async fn stream_chapters(
    store: &impl IndexLoads,
    shard: Shard,
    query: &mut matcher::BatchQuery,
) -> Result<LoadReport> {
    let mut report = LoadReport::default();
    for_each_stored_page(store, shard, |page| {
        add_entries(page, &mut report, |e| query.add(e));
    })
    .await?;
    Ok(report)
}

/// Streams the chapter fingerprints of one work past a batch of pages (one query).
///
/// # Errors
/// A database failure.
pub async fn stream_work(
    store: &impl IndexLoads,
    work: store::WorkId,
    query: &mut matcher::BatchQuery,
) -> Result<LoadReport> {
    let entries = store
        .work_index_entries(work)
        .await
        .map_err(store_err("loading a work's fingerprints"))?;
    let mut report = LoadReport::default();
    add_entries(&entries, &mut report, |e| query.add(e));
    Ok(report)
}

/// Hands `each` the store's chapter fingerprints of `shard`'s works, a page of
/// [`LOAD_PAGE`] stored entries at a time (the others' dropped before they are decoded).
async fn for_each_stored_page(
    store: &impl IndexLoads,
    shard: Shard,
    mut each: impl FnMut(&[IndexEntry]),
) -> Result<()> {
    let mut after = None;
    loop {
        let page = store
            .index_entries(Page {
                after,
                limit: Some(LOAD_PAGE),
            })
            .await
            .map_err(store_err("loading fingerprints from the database"))?;
        after = page.last().map(|e| e.chapter_id);
        let short = page.len() < LOAD_PAGE as usize;
        if shard.is_all() {
            each(&page);
        } else {
            let mine: Vec<IndexEntry> = page
                .into_iter()
                .filter(|e| shard.holds(e.work_id.0))
                .collect();
            each(&mine);
        }
        if short {
            return Ok(());
        }
    }
}
