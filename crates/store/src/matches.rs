//! Matches: the registered chapters a stored page (snapshot) copies, as the match stage
//! found them. A snapshot's matches are recorded as a whole, with their cases, in one
//! transaction ([`MatchWrites::record_matches`]), so matching a page again (a retried job, a
//! re-match after works changed) leaves exactly the latest result, and rows kept keep their
//! id and case.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::cases::{CaseTx, Recorded};
use crate::db::{read_pool, write_tx};
use crate::ids::{CaseId, ChapterId, SnapshotId, WorkId};
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
    /// Characters of the chapter (as the matcher counts them).
    pub chapter_chars: u32,
    /// Characters of the page's main text.
    pub page_chars: u32,
    /// Share of the page's main text that is the chapter, 0..1.
    pub page_share: f64,
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
    /// The case it belongs to; `None` when licensed.
    pub case_id: Option<CaseId>,
    /// Whether the page's host is a licensed domain for the work.
    pub licensed: bool,
    /// Whether this snapshot is the latest of its page to match this chapter (the row a
    /// report shows).
    pub latest: bool,
    /// When it was first stored.
    pub created_at: DateTime<Utc>,
}

/// Writes of the match stage.
pub trait MatchWrites {
    /// Makes `matches` the snapshot's matches and files them in cases, in one transaction:
    ///
    /// - rows of chapters no longer matched are deleted, the others inserted or updated
    ///   (a row kept keeps its id);
    /// - a match on a licensed domain (the page's host or a parent domain of it is licensed
    ///   for every work or for the match's work) is stored as licensed, in no case;
    /// - any other joins the case of (page's site, work): a missing one is opened (`new`,
    ///   first and last seen at the snapshot's fetch time, audit row `case.open` by
    ///   `actor`), an existing one has its first/last seen widened;
    /// - a `removed` case goes back to `new` for a snapshot fetched after it was removed;
    ///   a `dismissed` one only for a chapter not matched when it was dismissed (audit row
    ///   `case.reopen` with the reason as its note);
    /// - the `pages` and `chapters_matched` counters of every case touched (also of cases
    ///   that lost matches) are recomputed, and the page's latest rows per chapter kept.
    ///
    /// Recording the same matches again changes nothing (no audit row, same ids).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for a missing snapshot; [`crate::Error::Backend`] (for
    /// example a chapter that does not exist): nothing is written then.
    fn record_matches(
        &self,
        snapshot: SnapshotId,
        matches: &[NewMatch],
        actor: &str,
    ) -> impl Future<Output = Result<Recorded>> + Send;

    /// [`MatchWrites::record_matches`] for one shard's result: `matches` (all of works in
    /// `shard`, [`bounds::Shard::holds`]) replace the snapshot's matches of the shard's
    /// works only; the rows of other shards' works, and their cases, are left as they are.
    /// Each shard touches only its own works' cases (a case is a site and a work) and their
    /// counters, so the shards of one page, recorded in any order, leave the same matches,
    /// cases and counters as one unsharded [`MatchWrites::record_matches`] of them all.
    /// With [`bounds::Shard::ALL`] this is [`MatchWrites::record_matches`].
    ///
    /// # Errors
    /// As [`MatchWrites::record_matches`]; [`crate::Error::InvalidInput`] for a match of a work
    /// outside `shard` (nothing is written then).
    fn record_matches_scoped(
        &self,
        snapshot: SnapshotId,
        matches: &[NewMatch],
        shard: bounds::Shard,
        actor: &str,
    ) -> impl Future<Output = Result<Recorded>> + Send;
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
    case_id: Option<CaseId>,
    licensed: bool,
    latest: bool,
    method: String,
    score: f64,
    coverage: f64,
    matched_chars: i32,
    chapter_chars: i32,
    page_chars: i32,
    page_share: f64,
    passages: String,
    created_at: DateTime<Utc>,
}

impl MatchWrites for Store {
    #[instrument(skip(self, matches), fields(matches = matches.len()))]
    async fn record_matches(
        &self,
        snapshot: SnapshotId,
        matches: &[NewMatch],
        actor: &str,
    ) -> Result<Recorded> {
        self.record_matches_scoped(snapshot, matches, bounds::Shard::ALL, actor)
            .await
    }

    #[instrument(skip(self, matches), fields(matches = matches.len(), shard = %shard))]
    async fn record_matches_scoped(
        &self,
        snapshot: SnapshotId,
        matches: &[NewMatch],
        shard: bounds::Shard,
        actor: &str,
    ) -> Result<Recorded> {
        if let Some(m) = matches.iter().find(|m| !shard.holds(m.work_id.0)) {
            return Err(crate::Error::InvalidInput(format!(
                "work {} is not in shard {shard}",
                m.work_id
            )));
        }
        Ok(write_tx!(self, |tx| tx
            .record(snapshot, matches, shard, actor)
            .await?))
    }
}

impl MatchReads for Store {
    #[instrument(skip(self))]
    async fn matches_of(&self, snapshot: SnapshotId) -> Result<Vec<MatchRecord>> {
        let rows: Vec<MatchRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT id, snapshot_id, chapter_id, work_id, case_id, licensed, latest, method, \
                 score, coverage, matched_chars, chapter_chars, page_chars, page_share, \
                 passages, created_at FROM matches WHERE snapshot_id = $1 ORDER BY chapter_id",
            )
            .bind(snapshot)
            .fetch_all(pool)
            .await?
        });
        let count = |n: i32| u32::try_from(n).unwrap_or(0);
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
                    matched_chars: count(r.matched_chars),
                    chapter_chars: count(r.chapter_chars),
                    page_chars: count(r.page_chars),
                    page_share: r.page_share,
                    passages: r.passages,
                },
                case_id: r.case_id,
                licensed: r.licensed,
                latest: r.latest,
                created_at: r.created_at,
            })
            .collect())
    }
}
