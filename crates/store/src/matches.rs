//! Matches: the registered chapters a stored page (snapshot) copies, as the match stage
//! found them. A snapshot's matches are replaced as a whole, so matching a page again (a
//! retried job, a re-match after works changed) leaves exactly the latest result, and rows
//! already attached to a case keep their id and case.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::{read_pool, write_tx};
use crate::ids::{ChapterId, SnapshotId, WorkId};
use crate::{Result, Store};

/// A match to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMatch {
    /// The chapter copied.
    pub chapter_id: ChapterId,
    /// Its work.
    pub work_id: WorkId,
    /// How it was found (e.g. `"align"`).
    pub method: String,
    /// The matcher's score, 0..1.
    pub score: f64,
    /// Share of the chapter found in the page, 0..1.
    pub coverage: f64,
    /// Characters matched.
    pub matched_chars: u32,
    /// The aligned passages as JSON (pairs of byte ranges in page and chapter).
    pub passages: String,
}

/// A stored match.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchRecord {
    /// Its id.
    pub id: i64,
    /// The page.
    pub snapshot_id: SnapshotId,
    /// The match itself.
    pub found: NewMatch,
    /// The case it belongs to, once one was opened.
    pub case_id: Option<i64>,
    /// When it was first stored.
    pub created_at: DateTime<Utc>,
}

/// Writes of the match stage.
pub trait MatchWrites {
    /// Makes `matches` the snapshot's matches, in one transaction: rows of chapters no longer
    /// matched are deleted, the others inserted or updated.
    fn replace_matches(
        &self,
        snapshot: SnapshotId,
        matches: &[NewMatch],
    ) -> impl Future<Output = Result<()>> + Send;
}

/// Reads of matches.
pub trait MatchReads {
    /// The snapshot's matches by chapter id.
    fn matches_of(
        &self,
        snapshot: SnapshotId,
    ) -> impl Future<Output = Result<Vec<MatchRecord>>> + Send;
}

#[derive(sqlx::FromRow)]
struct MatchRow {
    id: i64,
    snapshot_id: SnapshotId,
    chapter_id: ChapterId,
    work_id: WorkId,
    case_id: Option<i64>,
    method: String,
    score: f64,
    coverage: f64,
    matched_chars: i32,
    passages: String,
    created_at: DateTime<Utc>,
}

impl MatchWrites for Store {
    #[instrument(skip(self, matches), fields(matches = matches.len()))]
    async fn replace_matches(&self, snapshot: SnapshotId, matches: &[NewMatch]) -> Result<()> {
        let keep: Vec<i64> = matches.iter().map(|m| m.chapter_id.0).collect();
        write_tx!(self, |tx| {
            let existing: Vec<i64> =
                sqlx::query_scalar("SELECT chapter_id FROM matches WHERE snapshot_id = $1")
                    .bind(snapshot)
                    .fetch_all(&mut *tx)
                    .await?;
            for gone in existing.iter().filter(|c| !keep.contains(c)) {
                sqlx::query("DELETE FROM matches WHERE snapshot_id = $1 AND chapter_id = $2")
                    .bind(snapshot)
                    .bind(gone)
                    .execute(&mut *tx)
                    .await?;
            }
            for m in matches {
                sqlx::query(
                    "INSERT INTO matches (snapshot_id, chapter_id, work_id, method, score, \
                     coverage, matched_chars, passages) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (snapshot_id, chapter_id) DO UPDATE SET \
                     work_id = excluded.work_id, method = excluded.method, \
                     score = excluded.score, coverage = excluded.coverage, \
                     matched_chars = excluded.matched_chars, passages = excluded.passages",
                )
                .bind(snapshot)
                .bind(m.chapter_id)
                .bind(m.work_id)
                .bind(&m.method)
                .bind(m.score)
                .bind(m.coverage)
                .bind(i32::try_from(m.matched_chars).unwrap_or(i32::MAX))
                .bind(&m.passages)
                .execute(&mut *tx)
                .await?;
            }
            Ok(())
        })
    }
}

impl MatchReads for Store {
    #[instrument(skip(self))]
    async fn matches_of(&self, snapshot: SnapshotId) -> Result<Vec<MatchRecord>> {
        let rows: Vec<MatchRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT id, snapshot_id, chapter_id, work_id, case_id, method, score, coverage, \
                 matched_chars, passages, created_at FROM matches WHERE snapshot_id = $1 \
                 ORDER BY chapter_id",
            )
            .bind(snapshot)
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|r| MatchRecord {
                id: r.id,
                snapshot_id: r.snapshot_id,
                found: NewMatch {
                    chapter_id: r.chapter_id,
                    work_id: r.work_id,
                    method: r.method,
                    score: r.score,
                    coverage: r.coverage,
                    matched_chars: u32::try_from(r.matched_chars).unwrap_or(0),
                    passages: r.passages,
                },
                case_id: r.case_id,
                created_at: r.created_at,
            })
            .collect())
    }
}
