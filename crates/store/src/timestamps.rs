//! RFC 3161 tokens of evidence snapshots (`snapshot_timestamps`): one per snapshot and
//! time-stamping authority, kept as the TSA sent them. The store does not read them; the
//! `timestamp` crate verifies them and `pipeline` decides when to stamp.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::{read_pool, write_tx};
use crate::{CaseId, Error, Result, SnapshotId, Store};

/// A token to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTimestamp {
    /// The snapshot whose body hash it covers.
    pub snapshot: SnapshotId,
    /// The TSA that issued it (the configured URL).
    pub tsa_url: String,
    /// The token, DER, as received.
    pub token: Vec<u8>,
    /// The time the TSA stamped (`genTime`).
    pub gen_time: DateTime<Utc>,
    /// The message imprint's hash algorithm (`sha-256`).
    pub hash_algorithm: String,
}

/// A stored token, with the hash of the snapshot it should cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimestampRecord {
    /// The row.
    pub id: i64,
    /// The snapshot.
    pub snapshot: SnapshotId,
    /// SHA-256 of the snapshot's evidence (what verification compares the token's imprint
    /// with): its body's, or for a revisit the body's of the capture it confirms.
    pub sha256: [u8; 32],
    /// The TSA that issued it.
    pub tsa_url: String,
    /// The token, DER, as received.
    pub token: Vec<u8>,
    /// The time the TSA stamped, as read on receipt.
    pub gen_time: DateTime<Utc>,
    /// The imprint's hash algorithm.
    pub hash_algorithm: String,
    /// When the row was written.
    pub created_at: DateTime<Utc>,
}

/// Trusted timestamps of snapshots, for the stamping job, `cases stamp` and the readers of
/// a case's evidence.
pub trait Timestamps {
    /// Stores a token unless the snapshot already has one from `tsa_url`, in one
    /// transaction. Returns whether it was stored (`false`: the earlier token is kept).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown snapshot.
    fn insert_timestamp(&self, new: &NewTimestamp) -> impl Future<Output = Result<bool>> + Send;

    /// The SHA-256 of a snapshot's evidence, what a TSA is asked to stamp: its body's, or
    /// for a revisit ([`crate::SnapshotRecord::revisit_of`]) the confirmed capture's, never
    /// the empty body a `304 Not Modified` carries.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown snapshot.
    fn snapshot_sha256(&self, id: SnapshotId) -> impl Future<Output = Result<[u8; 32]>> + Send;

    /// A snapshot's tokens, oldest first.
    fn snapshot_timestamps(
        &self,
        id: SnapshotId,
    ) -> impl Future<Output = Result<Vec<TimestampRecord>>> + Send;

    /// The tokens of every snapshot a case's matches point at, by snapshot then age.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown case.
    fn case_timestamps(
        &self,
        case: CaseId,
    ) -> impl Future<Output = Result<Vec<TimestampRecord>>> + Send;

    /// The snapshots of a case's matches that have no token from `tsa_url`, by id, with
    /// the SHA-256 of their evidence (as [`Timestamps::snapshot_sha256`]).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown case.
    fn unstamped_case_snapshots(
        &self,
        case: CaseId,
        tsa_url: &str,
    ) -> impl Future<Output = Result<Vec<(SnapshotId, [u8; 32])>>> + Send;
}

type Row = (
    i64,
    i64,
    Vec<u8>,
    String,
    Vec<u8>,
    DateTime<Utc>,
    String,
    DateTime<Utc>,
);

/// The columns [`record`] reads, in its order (a macro so queries stay literals).
macro_rules! timestamp_columns {
    () => {
        "t.id, t.snapshot_id, COALESCE(rv.sha256, sn.sha256), t.tsa_url, t.token, t.gen_time, t.hash_algorithm, \
         t.created_at"
    };
}

fn sha256(bytes: Vec<u8>, id: i64) -> Result<[u8; 32]> {
    bytes
        .try_into()
        .map_err(|_| Error::InvalidInput(format!("snapshot {id} sha256 is not 32 bytes")))
}

fn record(row: Row) -> Result<TimestampRecord> {
    let (id, snapshot, sha, tsa_url, token, gen_time, hash_algorithm, created_at) = row;
    Ok(TimestampRecord {
        id,
        snapshot: SnapshotId(snapshot),
        sha256: sha256(sha, snapshot)?,
        tsa_url,
        token,
        gen_time,
        hash_algorithm,
        created_at,
    })
}

impl Timestamps for Store {
    #[instrument(skip_all, fields(snapshot = %new.snapshot, bytes = new.token.len()))]
    async fn insert_timestamp(&self, new: &NewTimestamp) -> Result<bool> {
        Ok(write_tx!(self, |tx| {
            let known: Option<i64> = sqlx::query_scalar("SELECT id FROM snapshots WHERE id = $1")
                .bind(new.snapshot)
                .fetch_optional(&mut *tx)
                .await?;
            if known.is_none() {
                return Err(Error::not_found("snapshot", new.snapshot));
            }
            sqlx::query(
                "INSERT INTO snapshot_timestamps (snapshot_id, tsa_url, token, gen_time, \
                 hash_algorithm) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (snapshot_id, tsa_url) DO NOTHING",
            )
            .bind(new.snapshot)
            .bind(&new.tsa_url)
            .bind(&new.token)
            .bind(new.gen_time)
            .bind(&new.hash_algorithm)
            .execute(&mut *tx)
            .await?
            .rows_affected()
                > 0
        }))
    }

    async fn snapshot_sha256(&self, id: SnapshotId) -> Result<[u8; 32]> {
        let sha: Option<Vec<u8>> = read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT COALESCE(rv.sha256, sn.sha256) FROM snapshots sn \
                 LEFT JOIN snapshots rv ON rv.id = sn.revisit_of WHERE sn.id = $1",
            )
            .bind(id)
            .fetch_optional(pool)
            .await?
        });
        sha256(sha.ok_or_else(|| Error::not_found("snapshot", id))?, id.0)
    }

    async fn snapshot_timestamps(&self, id: SnapshotId) -> Result<Vec<TimestampRecord>> {
        let rows: Vec<Row> = read_pool!(self, |pool| {
            sqlx::query_as(concat!(
                "SELECT ",
                timestamp_columns!(),
                " FROM snapshot_timestamps t JOIN snapshots sn ON sn.id = t.snapshot_id \
                 LEFT JOIN snapshots rv ON rv.id = sn.revisit_of \
                 WHERE t.snapshot_id = $1 ORDER BY t.id"
            ))
            .bind(id)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(record).collect()
    }

    #[instrument(skip(self))]
    async fn case_timestamps(&self, case: CaseId) -> Result<Vec<TimestampRecord>> {
        self.case_exists(case).await?;
        let rows: Vec<Row> = read_pool!(self, |pool| {
            sqlx::query_as(concat!(
                "SELECT ",
                timestamp_columns!(),
                " FROM snapshot_timestamps t JOIN snapshots sn ON sn.id = t.snapshot_id \
                 LEFT JOIN snapshots rv ON rv.id = sn.revisit_of \
                 WHERE t.snapshot_id IN (SELECT snapshot_id FROM matches WHERE case_id = $1) \
                 ORDER BY t.snapshot_id, t.id"
            ))
            .bind(case)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(record).collect()
    }

    #[instrument(skip(self))]
    async fn unstamped_case_snapshots(
        &self,
        case: CaseId,
        tsa_url: &str,
    ) -> Result<Vec<(SnapshotId, [u8; 32])>> {
        self.case_exists(case).await?;
        let rows: Vec<(i64, Vec<u8>)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT sn.id, COALESCE(rv.sha256, sn.sha256) FROM snapshots sn \
                 LEFT JOIN snapshots rv ON rv.id = sn.revisit_of \
                 WHERE sn.id IN (SELECT snapshot_id FROM matches WHERE case_id = $1) \
                 AND NOT EXISTS (SELECT 1 FROM snapshot_timestamps t \
                                 WHERE t.snapshot_id = sn.id AND t.tsa_url = $2) \
                 ORDER BY sn.id",
            )
            .bind(case)
            .bind(tsa_url)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter()
            .map(|(id, sha)| Ok((SnapshotId(id), sha256(sha, id)?)))
            .collect()
    }
}
