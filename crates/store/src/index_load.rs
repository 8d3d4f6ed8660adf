//! The matcher's start-up load: every chapter's stored fingerprint with all its winnowing
//! postings, a page of chapters at a time.
//!
//! The postings come packed in the fingerprint's row (`fingerprints.postings`, see
//! `crate::packed`): one row per chapter. Only chapters written before that column existed
//! (NULL) have theirs aggregated from `winnow_postings`, a row per posting: about ten times
//! slower (measured with `copyhound bench load` on SQLite, 100,000 chapters: ~3,000
//! chapters/s aggregated, ~35,000 packed).

use std::future::Future;

use sqlx::AssertSqlSafe;
use tracing::instrument;

use crate::db::{Backend, read_pool};
use crate::ids::{ChapterId, WorkId};
use crate::packed;
use crate::works::{Page, Posting, PostingKind};
use crate::{Error, Result, Store};

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
    /// until a page shorter than the limit comes back. Each page costs one query whatever
    /// its size (two when it holds chapters stored before postings were packed), so load
    /// with pages of a few hundred chapters.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the chapter when its packed postings are corrupt.
    fn index_entries(
        &self,
        page: Page<ChapterId>,
    ) -> impl Future<Output = Result<Vec<IndexEntry>>> + Send;

    /// The entries of one work's chapters by ascending chapter id (none when the work is
    /// gone): what a running index adds when the change log says the work was added.
    ///
    /// # Errors
    /// As [`IndexLoads::index_entries`].
    fn work_index_entries(
        &self,
        work: WorkId,
    ) -> impl Future<Output = Result<Vec<IndexEntry>>> + Send;

    /// How many entries [`IndexLoads::index_entries`] would hand over now: the chapters an
    /// index loaded now holds (before any is refused), one count query.
    ///
    /// # Errors
    /// A database failure.
    fn index_size(&self) -> impl Future<Output = Result<u64>> + Send;
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
    postings: Option<Vec<u8>>,
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

    #[instrument(skip(self))]
    async fn index_size(&self) -> Result<u64> {
        let n: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) {FROM_ENTRIES}")))
                .fetch_one(pool)
                .await?
        });
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// The rows that are index entries: chapters with a fingerprint, of works whose import has
/// finished (chapters of a work still being imported are not entries yet).
const FROM_ENTRIES: &str = "FROM fingerprints f JOIN chapters c ON c.id = f.chapter_id \
     JOIN works w ON w.id = c.work_id AND w.importing_since IS NULL";

impl Store {
    async fn entries(&self, which: Entries) -> Result<Vec<IndexEntry>> {
        const SELECT: &str = "SELECT f.chapter_id, c.work_id, f.normalizer_version, f.summary, \
             f.postings";
        let rows: Vec<EntryRow> = read_pool!(self, |pool| {
            match which {
                Entries::Page { after, limit } => sqlx::query_as(AssertSqlSafe(format!(
                    "{SELECT} {FROM_ENTRIES} WHERE f.chapter_id > $1 ORDER BY f.chapter_id LIMIT $2"
                )))
                .bind(after)
                .bind(limit)
                .fetch_all(pool)
                .await?,
                Entries::Work(work) => {
                    sqlx::query_as(AssertSqlSafe(format!(
                        "{SELECT} {FROM_ENTRIES} WHERE c.work_id = $1 ORDER BY f.chapter_id"
                    )))
                    .bind(work)
                    .fetch_all(pool)
                    .await?
                }
            }
        });
        // Chapters fingerprinted before the packed column existed: their postings come from
        // the rows.
        let unpacked: Vec<bool> = rows.iter().map(|r| r.postings.is_none()).collect();
        let mut range = rows
            .iter()
            .filter(|r| r.postings.is_none())
            .map(|r| r.chapter_id);
        let range = range
            .next()
            .map(|first| (first, range.next_back().unwrap_or(first)));
        let mut entries = Vec::with_capacity(rows.len());
        for r in rows {
            let (text_winnow, pinyin_winnow) = match &r.postings {
                Some(bytes) => packed::decode(r.chapter_id, bytes)?,
                None => (Vec::new(), Vec::new()),
            };
            entries.push(IndexEntry {
                chapter_id: r.chapter_id,
                work_id: r.work_id,
                normalizer_version: u32::try_from(r.normalizer_version).unwrap_or(0),
                summary: r.summary,
                text_winnow,
                pinyin_winnow,
            });
        }
        let Some((first, last)) = range else {
            return Ok(entries);
        };
        let postings = self.postings_in(first, last).await?;
        let mut i = 0;
        for (chapter, kind, list) in postings {
            while i < entries.len() && entries[i].chapter_id < chapter {
                i += 1;
            }
            let Some(entry) = entries
                .get_mut(i)
                .filter(|e| e.chapter_id == chapter && unpacked[i])
            else {
                // A chapter in the id range without a fingerprint row, or one read packed.
                continue;
            };
            if kind == PostingKind::Pinyin.code() {
                entry.pinyin_winnow = list;
            } else {
                entry.text_winnow = list;
            }
        }
        Ok(entries)
    }

    /// The postings of the chapters `first..=last`, one row per chapter and kind, by chapter
    /// and kind, each list by position (then hash). Aggregated in the database: a row per
    /// posting (hundreds per chapter) cost a round trip through sqlx-sqlite's worker thread
    /// each, most of a large load's time.
    async fn postings_in(
        &self,
        first: ChapterId,
        last: ChapterId,
    ) -> Result<Vec<(ChapterId, i16, Vec<Posting>)>> {
        let lists = |hashes: Vec<i64>, positions: Vec<i32>| -> Vec<Posting> {
            hashes
                .into_iter()
                .zip(positions)
                .map(|(hash, pos)| Posting {
                    hash: hash as u64,
                    pos: pos as u32,
                })
                .collect()
        };
        Ok(match &self.backend {
            Backend::Postgres(pool) => {
                let rows: Vec<(ChapterId, i16, Vec<i64>, Vec<i32>)> = sqlx::query_as(
                    "SELECT chapter_id, kind, array_agg(hash ORDER BY pos, hash), \
                     array_agg(pos ORDER BY pos, hash) FROM winnow_postings \
                     WHERE chapter_id >= $1 AND chapter_id <= $2 \
                     GROUP BY chapter_id, kind ORDER BY chapter_id, kind",
                )
                .bind(first)
                .bind(last)
                .fetch_all(pool)
                .await?;
                rows.into_iter()
                    .map(|(c, k, h, p)| (c, k, lists(h, p)))
                    .collect()
            }
            Backend::Sqlite { reader, .. } => {
                // "hash pos,hash pos,..." in one text per chapter and kind.
                let rows: Vec<(ChapterId, i16, String)> = sqlx::query_as(
                    "SELECT chapter_id, kind, group_concat(hash || ' ' || pos, ',' ORDER BY pos, hash) \
                     FROM winnow_postings WHERE chapter_id >= $1 AND chapter_id <= $2 \
                     GROUP BY chapter_id, kind ORDER BY chapter_id, kind",
                )
                .bind(first)
                .bind(last)
                .fetch_all(reader)
                .await?;
                let mut out = Vec::with_capacity(rows.len());
                for (chapter, kind, text) in rows {
                    let mut list = Vec::with_capacity(text.len() / 24);
                    for pair in text.split(',') {
                        let parsed = pair.split_once(' ').and_then(|(h, p)| {
                            Some(Posting {
                                hash: h.parse::<i64>().ok()? as u64,
                                pos: p.parse::<u32>().ok()?,
                            })
                        });
                        list.push(parsed.ok_or_else(|| {
                            Error::InvalidInput(format!(
                                "unreadable posting {pair:?} of chapter {chapter}"
                            ))
                        })?);
                    }
                    out.push((chapter, kind, list));
                }
                out
            }
        })
    }
}
