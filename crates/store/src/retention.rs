//! Retention of page bodies (`[retention]`, `copyhound gc`, the daily `retention-gc`
//! schedule): the bodies of snapshots past their time are deleted, from the database or
//! from their WARC segments on the object store.
//!
//! A snapshot's bodies (its decoded body and its bytes as served, both rows of
//! `snapshot_bodies` by SHA-256) expire:
//!
//! - when nothing keeps the snapshot as evidence, `unmatched` after it was fetched;
//! - when something does, `evidence` after it was fetched **and** after the last copy of
//!   every case it belongs to was seen (`cases.last_seen_at`): a snapshot is evidence when it
//!   matched a chapter (in a case or on a licensed domain), carries a trusted timestamp, is a
//!   re-check's fetch (`recheck_copies`), or gave a matched page its text (an endpoint's
//!   response, `page_texts.text_snapshot_id`). Notices and re-checks hang on their case, so
//!   the case's last copy seen is their clock too.
//!
//! A body is deleted only when every snapshot naming it (either way) has expired: bodies are
//! shared. Each batch marks its expired snapshots (`snapshots.body_removed_at`) and deletes,
//! in the same transaction, the bodies no unmarked snapshot names. On Postgres the batch locks
//! those body rows before it looks for a snapshot that still names them, and a snapshot write
//! that finds its body stored locks it too (`store_body!`), so a page fetched again while gc
//! runs never ends with a row pointing at a deleted body.
//!
//! Bodies in segments leave their record behind when their row goes. A segment left with no
//! row is deleted (the object, then its row); one whose live records fill at most half of it
//! ([`COMPACT_BELOW`]) is compacted: its live bodies are read back into the database, each
//! checked against its SHA-256, the segment deleted, and the bodies written to a new segment
//! by the usual writer ([`Store::move_bodies_to_store`]). gc also deletes what interrupted
//! writers left: `uploading` segments, segment objects no row names (listed from the store)
//! and `segment-*.warc.gz.part` spool files older than `orphan_grace`.
//!
//! A dry run ([`Store::gc`] with `dry_run`) reads the same predicate as one set instead of in
//! batches and writes nothing; on an unchanged database it reports the same numbers.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tracing::{info, instrument, warn};

use crate::bodies::SEGMENT_UNUSED;
use crate::db::{id_list, in_tx, read_pool, write_pool, write_tx};
use crate::queue::millis;
use crate::{BackendKind, Result, Store};

/// How long bodies are kept (`[retention]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetentionSettings {
    /// Bodies of snapshots nothing keeps as evidence are deleted this long after their fetch.
    #[serde(with = "bounds::duration_serde")]
    pub unmatched: Duration,
    /// Bodies kept as evidence are deleted this long after their fetch and after the last
    /// copy of their cases was seen (3 years: the limitation period of US and Chinese claims).
    #[serde(with = "bounds::duration_serde")]
    pub evidence: Duration,
    /// Whether the extracted texts of unmatched snapshots stay when their bodies go (pages
    /// are not fingerprinted apart from their texts, so the text is all there is).
    pub keep_unmatched_texts: bool,
    /// `uploading` segments and spool files older than this were left by a writer that
    /// died, and are deleted.
    #[serde(with = "bounds::duration_serde")]
    pub orphan_grace: Duration,
}

/// The shortest `unmatched`: a page is matched by a job queued when its text is stored,
/// which runs within minutes; a body deleted before could be the evidence of a new case.
pub const MIN_UNMATCHED: Duration = Duration::from_secs(3600);

/// The shortest `orphan_grace`: the longest upload of a segment (5 GiB at the most) must
/// end well within it.
pub const MIN_ORPHAN_GRACE: Duration = Duration::from_secs(3600);

/// A segment whose live records fill at most this share of its bytes is compacted.
pub const COMPACT_BELOW: f64 = 0.5;

/// Snapshots marked per transaction.
const BATCH: i64 = 500;

impl Default for RetentionSettings {
    fn default() -> Self {
        RetentionSettings {
            unmatched: Duration::from_secs(30 * 86_400),
            evidence: Duration::from_secs(3 * 365 * 86_400),
            keep_unmatched_texts: true,
            orphan_grace: Duration::from_secs(86_400),
        }
    }
}

impl RetentionSettings {
    /// These settings with unmatched bodies kept `period` instead (`gc --unmatched-older-than`);
    /// evidence is kept at least as long, so a shorter period never shortens it below that.
    pub fn with_unmatched(&self, period: Duration) -> RetentionSettings {
        RetentionSettings {
            unmatched: period,
            evidence: self.evidence.max(period),
            ..self.clone()
        }
    }

    /// Checks the periods against their floors, and that evidence outlives the unmatched.
    ///
    /// # Errors
    /// The first value out of range, by its key.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        check_unmatched(self.unmatched)?;
        if self.evidence < self.unmatched {
            return Err(bounds::OutOfRange::new(
                "evidence",
                format!("{:?}", self.evidence),
                "must be at least `unmatched`: evidence is kept longer than what matched nothing",
            ));
        }
        if self.orphan_grace < MIN_ORPHAN_GRACE {
            return Err(bounds::OutOfRange::new(
                "orphan_grace",
                format!("{:?}", self.orphan_grace),
                "must be at least 1h (an upload in progress must not look orphaned)",
            ));
        }
        Ok(())
    }
}

/// Refuses an `unmatched` period under [`MIN_UNMATCHED`] (also `gc --unmatched-older-than`).
///
/// # Errors
/// The period, said with the floor and why.
pub fn check_unmatched(unmatched: Duration) -> std::result::Result<(), bounds::OutOfRange> {
    if unmatched < MIN_UNMATCHED {
        return Err(bounds::OutOfRange::new(
            "unmatched",
            format!("{unmatched:?}"),
            "must be at least 1h (a page's match job runs after its fetch; its body is the \
             evidence of any case it opens)",
        ));
    }
    Ok(())
}

/// What [`Store::gc`] removed, or would.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GcReport {
    /// Nothing was written or deleted.
    pub dry_run: bool,
    /// Snapshots whose bodies expired (marked `body_removed_at`).
    pub snapshots: u64,
    /// Bodies deleted (database rows, and records in segments).
    pub bodies: u64,
    /// Their uncompressed bytes.
    pub bytes: u64,
    /// Screenshots deleted: those only renders of expired snapshots named.
    pub screenshots: u64,
    /// Their bytes (PNG).
    pub screenshot_bytes: u64,
    /// Page texts of unmatched snapshots deleted (`keep_unmatched_texts = false`).
    pub texts: u64,
    /// Segments deleted because no body in them is left.
    pub segments_deleted: u64,
    /// Segments compacted: their live bodies rewritten, the old object deleted.
    pub segments_compacted: u64,
    /// Records (bodies and screenshots) rewritten by compaction.
    pub bodies_rewritten: u64,
    /// Bytes of the segment objects deleted (emptied and compacted ones).
    pub segment_bytes: u64,
    /// `uploading` segments past `orphan_grace` deleted (object and row).
    pub orphan_segments: u64,
    /// Spool files past `orphan_grace` deleted.
    pub spool_files: u64,
    /// Segment objects no `body_segments` row names, last written before `orphan_grace`,
    /// deleted (left by a delete of an emptied segment that failed after its row went).
    pub orphan_objects: u64,
    /// Their bytes.
    pub orphan_object_bytes: u64,
}

/// The SQL condition that snapshot `s` is evidence: matched, stamped, a re-check's fetch,
/// or the text of a matched page.
fn evidence(s: &str) -> String {
    format!(
        "(EXISTS (SELECT 1 FROM matches m WHERE m.snapshot_id = {s}.id) \
         OR EXISTS (SELECT 1 FROM snapshot_timestamps t WHERE t.snapshot_id = {s}.id) \
         OR EXISTS (SELECT 1 FROM recheck_copies r WHERE r.snapshot_id = {s}.id) \
         OR EXISTS (SELECT 1 FROM recheck_copies r WHERE r.removed_snapshot_id = {s}.id) \
         OR EXISTS (SELECT 1 FROM page_texts pt JOIN matches m ON m.snapshot_id = pt.snapshot_id \
                    WHERE pt.text_snapshot_id = {s}.id))"
    )
}

/// The SQL condition that snapshot `s` is evidence of a case whose last copy was seen at or
/// after `$2`, the evidence cutoff.
fn case_seen(s: &str) -> String {
    format!(
        "(EXISTS (SELECT 1 FROM matches m JOIN cases c ON c.id = m.case_id \
                  WHERE m.snapshot_id = {s}.id AND c.last_seen_at >= $2) \
         OR EXISTS (SELECT 1 FROM recheck_copies r JOIN cases c ON c.id = r.case_id \
                    WHERE r.snapshot_id = {s}.id AND c.last_seen_at >= $2) \
         OR EXISTS (SELECT 1 FROM recheck_copies r JOIN cases c ON c.id = r.case_id \
                    WHERE r.removed_snapshot_id = {s}.id AND c.last_seen_at >= $2) \
         OR EXISTS (SELECT 1 FROM page_texts pt JOIN matches m ON m.snapshot_id = pt.snapshot_id \
                    JOIN cases c ON c.id = m.case_id \
                    WHERE pt.text_snapshot_id = {s}.id AND c.last_seen_at >= $2))"
    )
}

/// The SQL condition that snapshot `s` still holds its bodies and they have expired; `$1`
/// is the unmatched cutoff, `$2` the evidence cutoff. A capture that a revisit confirms (a
/// `304` re-fetch, `snapshots.revisit_of`) is judged with its revisits: the revisit holds no
/// body of its own, so its evidence is the capture's body.
fn expired(s: &str) -> String {
    let with_revisits = |of: fn(&str) -> String| {
        format!(
            "({} OR EXISTS (SELECT 1 FROM snapshots rv WHERE rv.revisit_of = {s}.id AND {}))",
            of(s),
            of("rv")
        )
    };
    format!(
        "({s}.body_removed_at IS NULL AND (({s}.fetched_at < $1 AND NOT {}) \
         OR ({s}.fetched_at < $2 AND NOT {})))",
        with_revisits(evidence),
        with_revisits(case_seen),
    )
}

/// The SQL query of the hashes of the bodies that are removable: named (as body or wire
/// body) by an expired snapshot and by no snapshot that keeps its bodies (the dry run's set;
/// the run itself reaches it batch by batch). Each snapshot still holding its bodies is
/// judged once and its hashes grouped, rather than each body looking its snapshots up and
/// judging them (four times per body; 1.6 s of the Postgres dry run at 10^5 bodies).
fn removable_hashes() -> String {
    let gone = format!("CASE WHEN {} THEN 1 ELSE 0 END", expired("s"));
    format!(
        "SELECT u.h FROM \
         (SELECT s.sha256 AS h, {gone} AS gone FROM snapshots s \
          WHERE s.body_removed_at IS NULL \
          UNION ALL \
          SELECT s.wire_sha256, {gone} FROM snapshots s \
          WHERE s.body_removed_at IS NULL AND s.wire_sha256 IS NOT NULL) u \
         GROUP BY u.h HAVING MIN(u.gone) = 1"
    )
}

/// The SQL condition that screenshot `sc` is named by a render of an expired snapshot and
/// by no render of a snapshot that keeps its bodies: a screenshot goes with the bodies of
/// the snapshots it shows, and one of evidence stays as long as they do.
fn screenshot_removable(sc: &str) -> String {
    let (x, z) = (expired("x"), expired("z"));
    format!(
        "(EXISTS (SELECT 1 FROM renders rx JOIN snapshots x ON x.id = rx.snapshot_id \
                  WHERE rx.screenshot_sha256 = {sc}.sha256 AND {x}) \
          AND NOT EXISTS (SELECT 1 FROM renders rz JOIN snapshots z ON z.id = rz.snapshot_id \
                          WHERE rz.screenshot_sha256 = {sc}.sha256 \
                          AND z.body_removed_at IS NULL AND NOT {z}))"
    )
}

/// `$first, $first+1, …` for `n` values.
fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A segment as gc judges it: id, key, size, records left, their bytes.
type SegmentLeft = (i64, String, i64, i64, i64);

/// What one batch of gc did: snapshots marked, texts deleted, bodies and screenshots deleted
/// (bytes, segment).
type Batch = (u64, u64, Vec<(i64, Option<i64>)>, Vec<(i64, Option<i64>)>);

impl Store {
    /// Deletes the bodies past their retention (see the module docs), then the segments
    /// left empty or mostly dead, then what interrupted writers left; with `dry_run`,
    /// counts all of it and changes nothing.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for settings out of range; a database failure;
    /// [`crate::Error::ObjectStore`] or [`crate::Error::CorruptBody`] when a segment cannot
    /// be read or deleted (what was done before stays done: run it again).
    #[instrument(skip(self))]
    pub async fn gc(&self, retention: &RetentionSettings, dry_run: bool) -> Result<GcReport> {
        let report = self.gc_or_plan(retention, dry_run).await?;
        info!(?report, "gc");
        Ok(report)
    }

    /// What [`Store::gc`] would remove now: its dry run, without the log line, for `doctor`
    /// and `/metrics` ("what retention will free").
    ///
    /// # Errors
    /// As [`Store::gc`].
    pub async fn retention_outlook(&self, retention: &RetentionSettings) -> Result<GcReport> {
        self.gc_or_plan(retention, true).await
    }

    async fn gc_or_plan(&self, retention: &RetentionSettings, dry_run: bool) -> Result<GcReport> {
        retention
            .validate()
            .map_err(|e| crate::Error::InvalidInput(e.in_section("retention").to_string()))?;
        let now = Utc::now();
        let before = |period: Duration| {
            chrono::Duration::from_std(period)
                .ok()
                .and_then(|d| now.checked_sub_signed(d))
                .unwrap_or(DateTime::<Utc>::MIN_UTC)
        };
        let (unmatched_cutoff, evidence_cutoff) =
            (before(retention.unmatched), before(retention.evidence));
        let cutoffs = (unmatched_cutoff, evidence_cutoff);
        let mut report = if dry_run {
            self.gc_plan(cutoffs, retention.keep_unmatched_texts)
                .await?
        } else {
            self.gc_bodies(cutoffs, retention.keep_unmatched_texts, now)
                .await?
        };
        report.dry_run = dry_run;
        self.gc_orphans(retention.orphan_grace, now, dry_run, &mut report)
            .await?;
        Ok(report)
    }

    /// The dry run's counts, read as sets, in one read-only transaction (one view of the
    /// database). On Postgres without JIT compilation: these queries' cost estimates
    /// (every `EXISTS` per row) are far past `jit_above_cost`, and compiling them took 5 s
    /// of the 8.5 s dry run at 10^5 bodies while running them takes well under one.
    async fn gc_plan(
        &self,
        (unmatched, evidence): (DateTime<Utc>, DateTime<Utc>),
        keep_texts: bool,
    ) -> Result<GcReport> {
        // Snapshots and their unmatched texts in one pass: a page text per snapshot at most
        // (its key). The `EXISTS` stay in the select list, where Postgres probes the indexes
        // per row; as a join its row estimate of the expired set (a half per `NOT EXISTS`,
        // 3% of the rows) chose a nested loop over all matches per snapshot (8 s).
        let snapshots_sql = format!(
            "SELECT COUNT(*), CAST(COALESCE(SUM(CASE WHEN \
             EXISTS (SELECT 1 FROM page_texts pt WHERE pt.snapshot_id = s.id) \
             AND NOT EXISTS (SELECT 1 FROM matches m WHERE m.snapshot_id = s.id) \
             THEN 1 ELSE 0 END), 0) AS BIGINT) FROM snapshots s WHERE {}",
            expired("s")
        );
        let gone = removable_hashes();
        let bodies_sql = format!(
            "SELECT COUNT(*), CAST(COALESCE(SUM(b.body_len), 0) AS BIGINT) \
             FROM snapshot_bodies b WHERE b.sha256 IN ({gone})"
        );
        let screenshots_sql = format!(
            "SELECT COUNT(*), CAST(COALESCE(SUM(sc.bytes), 0) AS BIGINT) \
             FROM screenshots sc WHERE {}",
            screenshot_removable("sc")
        );
        // Each segment holding a removable body or screenshot, with what would be left in it.
        let segments_sql = format!(
            "SELECT g.id, g.key, g.bytes, CAST(SUM(1 - u.gone) AS BIGINT), \
             CAST(SUM(CASE WHEN u.gone = 1 THEN 0 ELSE u.len END) AS BIGINT) \
             FROM body_segments g JOIN \
             (SELECT b.segment_id AS seg, CASE WHEN b.sha256 IN ({gone}) THEN 1 ELSE 0 END \
                     AS gone, b.segment_length AS len FROM snapshot_bodies b \
              WHERE b.segment_id IS NOT NULL \
              UNION ALL \
              SELECT sc.segment_id, CASE WHEN {rs} THEN 1 ELSE 0 END, sc.segment_length \
              FROM screenshots sc WHERE sc.segment_id IS NOT NULL) u ON u.seg = g.id \
             WHERE g.state = 'sealed' GROUP BY g.id, g.key, g.bytes HAVING SUM(u.gone) > 0",
            rs = screenshot_removable("sc")
        );
        let mut report = GcReport::default();
        macro_rules! plan {
            ($tx:ident) => {{
                let (snapshots, texts): (i64, i64) =
                    sqlx::query_as(sqlx::AssertSqlSafe(snapshots_sql.clone()))
                        .bind(unmatched)
                        .bind(evidence)
                        .fetch_one(&mut *$tx)
                        .await?;
                let bodies: (i64, i64) = sqlx::query_as(sqlx::AssertSqlSafe(bodies_sql.clone()))
                    .bind(unmatched)
                    .bind(evidence)
                    .fetch_one(&mut *$tx)
                    .await?;
                let shots: (i64, i64) =
                    sqlx::query_as(sqlx::AssertSqlSafe(screenshots_sql.clone()))
                        .bind(unmatched)
                        .bind(evidence)
                        .fetch_one(&mut *$tx)
                        .await?;
                let touched: Vec<SegmentLeft> =
                    sqlx::query_as(sqlx::AssertSqlSafe(segments_sql.clone()))
                        .bind(unmatched)
                        .bind(evidence)
                        .fetch_all(&mut *$tx)
                        .await?;
                (
                    snapshots,
                    bodies,
                    shots,
                    if keep_texts { 0 } else { texts },
                    touched,
                )
            }};
        }
        let (snapshots, (bodies, bytes), (shots, shot_bytes), texts, touched) = match &self.backend
        {
            crate::db::Backend::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                let out = in_tx!(tx, {
                    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query("SET LOCAL jit = off").execute(&mut *tx).await?;
                    plan!(tx)
                });
                tx.rollback().await?;
                out
            }
            crate::db::Backend::Sqlite { reader, .. } => {
                let mut tx = reader.begin().await?;
                let out = in_tx!(tx, plan!(tx));
                tx.rollback().await?;
                out
            }
        };
        let n = |v: i64| v.max(0) as u64;
        report.snapshots = n(snapshots);
        report.bodies = n(bodies);
        report.bytes = n(bytes);
        report.screenshots = n(shots);
        report.screenshot_bytes = n(shot_bytes);
        report.texts = n(texts);
        if self.body_store().is_some() {
            let mut judged = touched;
            judged.extend(self.empty_segments().await?);
            judged.sort_by_key(|s| s.0);
            judged.dedup_by_key(|s| s.0);
            for (_, _, size, left, live) in judged {
                if left == 0 {
                    report.segments_deleted += 1;
                    report.segment_bytes += n(size);
                } else if compactable(size, live) {
                    report.segments_compacted += 1;
                    report.bodies_rewritten += n(left);
                    report.segment_bytes += n(size);
                }
            }
        }
        Ok(report)
    }

    /// The run: marks expired snapshots a batch at a time and deletes the bodies nothing
    /// else names, then deals with the segments they were in.
    async fn gc_bodies(
        &self,
        (unmatched, evidence): (DateTime<Utc>, DateTime<Utc>),
        keep_texts: bool,
        now: DateTime<Utc>,
    ) -> Result<GcReport> {
        let mut report = GcReport::default();
        // The candidates: snapshots old enough for either limit whose bodies are still
        // there, by columns alone. Whether each has expired is judged by the mark below,
        // for these rows only: with the `EXISTS` of expiry in this scan, Postgres hashed
        // one of them (every page text joined to the matches, 0.8 s) and compiled the
        // query (JIT, 1 to 3 s) for every batch, 40 minutes for 10^6 bodies.
        const CANDIDATES: &str = "SELECT s.id FROM snapshots s WHERE s.id > $3 \
             AND s.body_removed_at IS NULL AND (s.fetched_at < $1 OR s.fetched_at < $2) \
             ORDER BY s.id LIMIT $4";
        let postgres = self.kind() == BackendKind::Postgres;
        let mut after = 0i64;
        let mut touched: Vec<i64> = Vec::new();
        loop {
            let rows: Vec<i64> = read_pool!(self, |pool| {
                sqlx::query_scalar(CANDIDATES)
                    .bind(unmatched)
                    .bind(evidence)
                    .bind(after)
                    .bind(BATCH)
                    .fetch_all(pool)
                    .await?
            });
            let Some(&last) = rows.last() else { break };
            after = last;
            // Ids come from the database as integers: written into the SQL as they are. The
            // mark keeps those that have expired, inside the transaction: a snapshot
            // matched since the read above keeps its bodies.
            let ids = id_list(rows.iter().copied());
            let mark = format!(
                "UPDATE snapshots AS s SET body_removed_at = $3 WHERE s.id IN ({ids}) AND {} \
                 RETURNING id, sha256, wire_sha256",
                expired("s")
            );
            let (marked, texts_deleted, deleted, shots): Batch = write_tx!(self, |tx| {
                if postgres {
                    // As in the plan: the per-row `EXISTS` push the estimates past
                    // `jit_above_cost`, and compiling took 827 ms of an 845 ms batch.
                    sqlx::query("SET LOCAL jit = off").execute(&mut *tx).await?;
                }
                let marked: Vec<(i64, Vec<u8>, Option<Vec<u8>>)> =
                    sqlx::query_as(sqlx::AssertSqlSafe(mark.clone()))
                        .bind(unmatched)
                        .bind(evidence)
                        .bind(now)
                        .fetch_all(&mut *tx)
                        .await?;
                let mut hashes: Vec<Vec<u8>> = marked
                    .iter()
                    .flat_map(|(_, sha, wire)| std::iter::once(sha.clone()).chain(wire.clone()))
                    .collect();
                hashes.sort_unstable();
                hashes.dedup();
                let marked_ids = id_list(marked.iter().map(|r| r.0));
                let texts_deleted = if keep_texts || marked.is_empty() {
                    0
                } else {
                    sqlx::query(sqlx::AssertSqlSafe(format!(
                        "DELETE FROM page_texts WHERE snapshot_id IN ({marked_ids}) AND NOT EXISTS \
                             (SELECT 1 FROM matches m WHERE m.snapshot_id = page_texts.snapshot_id)"
                    )))
                    .execute(&mut *tx)
                    .await?
                    .rows_affected()
                };
                let mut deleted: Vec<(i64, Option<i64>)> = Vec::new();
                if !hashes.is_empty() {
                    let list = placeholders(1, hashes.len());
                    if postgres {
                        // Waits for a snapshot write that found one of these bodies
                        // stored (it locks the row for share), so that the delete below
                        // sees its snapshot.
                        let lock = format!(
                            "SELECT sha256 FROM snapshot_bodies WHERE sha256 IN ({list}) \
                                 FOR UPDATE"
                        );
                        let mut q = sqlx::query(sqlx::AssertSqlSafe(lock));
                        for h in &hashes {
                            q = q.bind(h);
                        }
                        q.execute(&mut *tx).await?;
                    }
                    let delete = format!(
                        "DELETE FROM snapshot_bodies WHERE sha256 IN ({list}) \
                             AND NOT EXISTS (SELECT 1 FROM snapshots s \
                                             WHERE s.sha256 = snapshot_bodies.sha256 \
                                             AND s.body_removed_at IS NULL) \
                             AND NOT EXISTS (SELECT 1 FROM snapshots s \
                                             WHERE s.wire_sha256 = snapshot_bodies.sha256 \
                                             AND s.body_removed_at IS NULL) \
                             RETURNING body_len, segment_id"
                    );
                    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(delete));
                    for h in &hashes {
                        q = q.bind(h);
                    }
                    deleted = q.fetch_all(&mut *tx).await?;
                }
                // The screenshots renders of these snapshots name and no render of a
                // snapshot keeping its bodies does: gone too, the renders' references
                // emptied first. On Postgres locked first, as the bodies are, so a
                // render stored meanwhile keeps its screenshot (`insert_render` locks
                // one it finds stored).
                let mut shots: Vec<(i64, Option<i64>)> = Vec::new();
                let named: Vec<Vec<u8>> = if marked.is_empty() {
                    Vec::new()
                } else {
                    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                        "SELECT DISTINCT screenshot_sha256 FROM renders \
                             WHERE snapshot_id IN ({marked_ids}) AND screenshot_sha256 IS NOT NULL"
                    )))
                    .fetch_all(&mut *tx)
                    .await?
                };
                if !named.is_empty() {
                    let list = placeholders(1, named.len());
                    if postgres {
                        let lock = format!(
                            "SELECT sha256 FROM screenshots WHERE sha256 IN ({list}) \
                                 FOR UPDATE"
                        );
                        let mut q = sqlx::query(sqlx::AssertSqlSafe(lock));
                        for h in &named {
                            q = q.bind(h);
                        }
                        q.execute(&mut *tx).await?;
                    }
                    let unnamed = format!(
                        "SELECT sha256, bytes, segment_id FROM screenshots \
                             WHERE sha256 IN ({list}) AND NOT EXISTS \
                             (SELECT 1 FROM renders r JOIN snapshots s ON s.id = r.snapshot_id \
                              WHERE r.screenshot_sha256 = screenshots.sha256 \
                              AND s.body_removed_at IS NULL)"
                    );
                    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(unnamed));
                    for h in &named {
                        q = q.bind(h);
                    }
                    let gone: Vec<(Vec<u8>, i64, Option<i64>)> = q.fetch_all(&mut *tx).await?;
                    if !gone.is_empty() {
                        let list = placeholders(1, gone.len());
                        for sql in [
                            format!(
                                "UPDATE renders SET screenshot_sha256 = NULL \
                                     WHERE screenshot_sha256 IN ({list})"
                            ),
                            format!("DELETE FROM screenshots WHERE sha256 IN ({list})"),
                        ] {
                            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
                            for g in &gone {
                                q = q.bind(&g.0);
                            }
                            q.execute(&mut *tx).await?;
                        }
                    }
                    shots = gone.into_iter().map(|g| (g.1, g.2)).collect();
                }
                (marked.len() as u64, texts_deleted, deleted, shots)
            });
            report.snapshots += marked;
            report.texts += texts_deleted;
            report.bodies += deleted.len() as u64;
            report.bytes += deleted.iter().map(|d| d.0.max(0) as u64).sum::<u64>();
            touched.extend(deleted.iter().filter_map(|d| d.1));
            report.screenshots += shots.len() as u64;
            report.screenshot_bytes += shots.iter().map(|d| d.0.max(0) as u64).sum::<u64>();
            touched.extend(shots.iter().filter_map(|d| d.1));
        }
        if self.body_store().is_none() {
            if !touched.is_empty() {
                warn!(
                    segments = touched.len(),
                    "bodies were deleted from segments, but no object store is set: the \
                     segments stay until gc runs with [storage] bodies naming their store"
                );
            }
            return Ok(report);
        }
        touched.sort_unstable();
        touched.dedup();
        let mut judged = self.segments_left(&touched).await?;
        judged.extend(self.empty_segments().await?);
        judged.sort_by_key(|s| s.0);
        judged.dedup_by_key(|s| s.0);
        let mut compacted = false;
        for (id, key, size, left, live) in judged {
            if left == 0 {
                if self.delete_empty_segment(id, &key).await? {
                    report.segments_deleted += 1;
                    report.segment_bytes += size.max(0) as u64;
                }
            } else if compactable(size, live) {
                let moved = self.move_segment_to_db(id).await?;
                report.segments_compacted += 1;
                report.bodies_rewritten += moved.bodies + moved.screenshots;
                report.segment_bytes += size.max(0) as u64;
                compacted = true;
            }
        }
        if compacted {
            // The compacted segments' live bodies wait in the database: into new segments.
            self.move_bodies_to_store(None).await?;
        }
        Ok(report)
    }

    /// Segments `ids` (sealed), each with the bodies left in it and their records' bytes.
    async fn segments_left(&self, ids: &[i64]) -> Result<Vec<SegmentLeft>> {
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let list = id_list(chunk.iter().copied());
            let sql = format!(
                "SELECT g.id, g.key, g.bytes, \
                 CAST(COUNT(u.seg) AS BIGINT), CAST(COALESCE(SUM(u.len), 0) AS BIGINT) \
                 FROM body_segments g LEFT JOIN \
                 (SELECT segment_id AS seg, segment_length AS len FROM snapshot_bodies \
                  WHERE segment_id IN ({list}) \
                  UNION ALL SELECT segment_id, segment_length FROM screenshots \
                  WHERE segment_id IN ({list})) u ON u.seg = g.id \
                 WHERE g.state = 'sealed' AND g.id IN ({list}) GROUP BY g.id, g.key, g.bytes"
            );
            let rows: Vec<SegmentLeft> = read_pool!(self, |pool| {
                sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                    .fetch_all(pool)
                    .await?
            });
            out.extend(rows);
        }
        Ok(out)
    }

    /// Sealed segments no row points at (an earlier delete of the object failed).
    async fn empty_segments(&self) -> Result<Vec<SegmentLeft>> {
        read_pool!(self, |pool| {
            Ok(sqlx::query_as(
                "SELECT g.id, g.key, g.bytes, CAST(0 AS BIGINT), CAST(0 AS BIGINT) \
                 FROM body_segments g WHERE g.state = 'sealed' AND NOT EXISTS \
                 (SELECT 1 FROM snapshot_bodies b WHERE b.segment_id = g.id) AND NOT EXISTS \
                 (SELECT 1 FROM screenshots sc WHERE sc.segment_id = g.id)",
            )
            .fetch_all(pool)
            .await?)
        })
    }

    /// Deletes segment `id`'s object, then its row, when no body row points at it (none
    /// can come to: only a segment's own commit points rows at it). Whether the row went.
    async fn delete_empty_segment(&self, id: i64, key: &str) -> Result<bool> {
        self.require_body_store()?.delete(key).await?;
        let sql = format!("DELETE FROM body_segments WHERE id = $1 AND {SEGMENT_UNUSED}");
        let gone = write_pool!(self, |pool| {
            sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .bind(id)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(gone > 0)
    }

    /// Deletes `uploading` segments (object, then row), segment objects no row names and
    /// spool files older than `grace`.
    async fn gc_orphans(
        &self,
        grace: Duration,
        now: DateTime<Utc>,
        dry_run: bool,
        report: &mut GcReport,
    ) -> Result<()> {
        let Some(bodies) = self.body_store() else {
            return Ok(());
        };
        let before = chrono::Duration::from_std(grace)
            .ok()
            .and_then(|d| now.checked_sub_signed(d))
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let orphans: Vec<(i64, String)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT id, key FROM body_segments WHERE state = 'uploading' AND created_at < $1 \
                 ORDER BY id",
            )
            .bind(millis(before))
            .fetch_all(pool)
            .await?
        });
        for (id, key) in orphans {
            if !dry_run {
                bodies.delete(&key).await?;
                write_pool!(self, |pool| {
                    sqlx::query("DELETE FROM body_segments WHERE id = $1 AND state = 'uploading'")
                        .bind(id)
                        .execute(pool)
                        .await?;
                });
            }
            report.orphan_segments += 1;
        }
        // Objects under `segments/` that no row names. Listed before the rows are read: a
        // writer inserts its `uploading` row before its upload starts, so an object listed
        // has its row by then, unless the row went since (an emptied segment, whose object
        // is an orphan indeed). The age spares an object whose row is being written anyway.
        let listed = bodies.list_segments().await?;
        let keys: Vec<String> = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT key FROM body_segments")
                .fetch_all(pool)
                .await?
        });
        let keys: std::collections::HashSet<String> = keys.into_iter().collect();
        for object in listed {
            if keys.contains(&object.key) || object.modified >= before {
                continue;
            }
            if !dry_run {
                bodies.delete(&object.key).await?;
            }
            warn!(key = %object.key, bytes = object.size, dry_run, "an orphan segment object");
            report.orphan_objects += 1;
            report.orphan_object_bytes += object.size;
        }
        let spool = bodies.spool_dir();
        let entries = match std::fs::read_dir(spool) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(crate::Error::ObjectStore(format!(
                    "reading the spool folder {}: {e}",
                    spool.display()
                )));
            }
        };
        let oldest = std::time::SystemTime::now()
            .checked_sub(grace)
            .unwrap_or(std::time::UNIX_EPOCH);
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !(name.starts_with("segment-") && name.ends_with(".warc.gz.part")) {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| at < oldest);
            if !old {
                continue;
            }
            if !dry_run && let Err(e) = std::fs::remove_file(entry.path()) {
                warn!(error = %e, file = %entry.path().display(), "a stale spool file stays");
                continue;
            }
            report.spool_files += 1;
        }
        Ok(())
    }
}

/// Whether a segment of `size` bytes with `live` bytes of records left is compacted.
fn compactable(size: i64, live: i64) -> bool {
    size > 0 && (live as f64) <= COMPACT_BELOW * size as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_refuse_short_periods() {
        assert!(RetentionSettings::default().validate().is_ok());
        let short = RetentionSettings {
            unmatched: Duration::from_secs(60),
            ..RetentionSettings::default()
        };
        assert!(short.validate().unwrap_err().to_string().contains("1h"));
        let inverted = RetentionSettings {
            evidence: Duration::from_secs(86_400),
            ..RetentionSettings::default()
        };
        assert!(inverted.validate().is_err());
    }

    #[test]
    fn segments_are_compacted_at_half_dead() {
        assert!(compactable(1000, 500));
        assert!(!compactable(1000, 501));
        assert!(!compactable(0, 0));
    }
}
