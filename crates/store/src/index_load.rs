//! The matcher's start-up load: every chapter's stored fingerprint with all its winnowing
//! postings, a page of chapters at a time.

use std::future::Future;

use sqlx::AssertSqlSafe;
use tracing::instrument;

use crate::db::read_pool;
use crate::ids::{ChapterId, WorkId};
use crate::works::{Page, Posting, PostingKind};
use crate::{Result, Store};

/// One chapter's fingerprint as the matcher's index takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexEntry {
    /// The chapter.
    pub chapter_id: ChapterId,
    /// Its work.
    pub work_id: WorkId,
    /// See [`NewFingerprint::normalizer_version`](crate::NewFingerprint::normalizer_version).
    pub normalizer_version: u32,
    /// `FingerprintSummary::to_bytes`.
    pub summary: Vec<u8>,
    /// Text winnowing postings, by position.
    pub text_winnow: Vec<Posting>,
    /// Pinyin winnowing postings, by position.
    pub pinyin_winnow: Vec<Posting>,
}

/// Reads for loading the matcher's index.
pub trait IndexLoads {
    /// Entries by ascending chapter id, a page at a time: call with `after = last id seen`
    /// until a page shorter than the limit comes back. Each page costs two queries whatever
    /// its size, so load with pages of a few hundred chapters.
    fn index_entries(
        &self,
        page: Page<ChapterId>,
    ) -> impl Future<Output = Result<Vec<IndexEntry>>> + Send;

    /// The entries of one work's chapters by ascending chapter id (none when the work is
    /// gone): what a running index adds when the change log says the work was added.
    fn work_index_entries(
        &self,
        work: WorkId,
    ) -> impl Future<Output = Result<Vec<IndexEntry>>> + Send;
}

/// Which entries to read.
#[derive(Debug, Clone, Copy)]
enum Entries {
    Page { after: i64, limit: i64 },
    Work(WorkId),
}

#[derive(sqlx::FromRow)]
struct EntryRow {
    chapter_id: ChapterId,
    work_id: WorkId,
    normalizer_version: i32,
    summary: Vec<u8>,
}

impl IndexLoads for Store {
    #[instrument(skip_all, fields(after = ?page.after, limit = ?page.limit))]
    async fn index_entries(&self, page: Page<ChapterId>) -> Result<Vec<IndexEntry>> {
        let after = page.after.map_or(0, |id| id.0);
        let limit = page.limit.map_or(i64::MAX, i64::from);
        self.entries(Entries::Page { after, limit }).await
    }

    #[instrument(skip(self))]
    async fn work_index_entries(&self, work: WorkId) -> Result<Vec<IndexEntry>> {
        self.entries(Entries::Work(work)).await
    }
}

impl Store {
    async fn entries(&self, which: Entries) -> Result<Vec<IndexEntry>> {
        const SELECT: &str = "SELECT f.chapter_id, c.work_id, f.normalizer_version, f.summary \
             FROM fingerprints f JOIN chapters c ON c.id = f.chapter_id";
        let rows: Vec<EntryRow> = read_pool!(self, |pool| {
            match which {
                Entries::Page { after, limit } => {
                    sqlx::query_as(AssertSqlSafe(format!(
                        "{SELECT} WHERE f.chapter_id > $1 ORDER BY f.chapter_id LIMIT $2"
                    )))
                    .bind(after)
                    .bind(limit)
                    .fetch_all(pool)
                    .await?
                }
                Entries::Work(work) => {
                    sqlx::query_as(AssertSqlSafe(format!(
                        "{SELECT} WHERE c.work_id = $1 ORDER BY f.chapter_id"
                    )))
                    .bind(work)
                    .fetch_all(pool)
                    .await?
                }
            }
        });
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            return Ok(Vec::new());
        };
        // One range query for the page's postings instead of one query a chapter.
        let postings: Vec<(ChapterId, i16, i64, i32)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT chapter_id, kind, hash, pos FROM winnow_postings \
                 WHERE chapter_id >= $1 AND chapter_id <= $2 ORDER BY chapter_id, kind, pos, hash",
            )
            .bind(first.chapter_id)
            .bind(last.chapter_id)
            .fetch_all(pool)
            .await?
        });
        let mut entries: Vec<IndexEntry> = rows
            .into_iter()
            .map(|r| IndexEntry {
                chapter_id: r.chapter_id,
                work_id: r.work_id,
                normalizer_version: u32::try_from(r.normalizer_version).unwrap_or(0),
                summary: r.summary,
                text_winnow: Vec::new(),
                pinyin_winnow: Vec::new(),
            })
            .collect();
        let mut i = 0;
        for (chapter, kind, hash, pos) in postings {
            while i < entries.len() && entries[i].chapter_id < chapter {
                i += 1;
            }
            let Some(entry) = entries.get_mut(i).filter(|e| e.chapter_id == chapter) else {
                // A chapter in the id range without a fingerprint row.
                continue;
            };
            let posting = Posting {
                hash: hash as u64,
                pos: pos as u32,
            };
            if kind == PostingKind::Pinyin.code() {
                entry.pinyin_winnow.push(posting);
            } else {
                entry.text_winnow.push(posting);
            }
        }
        Ok(entries)
    }
}
