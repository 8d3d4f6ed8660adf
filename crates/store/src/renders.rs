//! Rendered fetches of snapshots (`renders`) and their full-page screenshots
//! (`screenshots`, deduplicated by SHA-256 of the PNG). The crawler writes them when it
//! renders a page in a headless browser; the case page, the evidence package and the case's
//! WARC read them.
//!
//! With `[storage] bodies` naming an object store, screenshots go there as bodies do (see
//! [`crate::BodyStore`]): written to the database first, then moved by the segment writer into
//! a WARC segment as a `resource` record (`image/png`), the row then pointing at it;
//! [`Renders::screenshot_png`] reads such a one back by a ranged read, checked against its
//! SHA-256.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::{read_pool, write_pool, write_tx};
use crate::{Result, SnapshotId, Store};

/// A screenshot to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewScreenshot {
    /// SHA-256 of `png`.
    pub sha256: [u8; 32],
    pub png: Vec<u8>,
    /// Pixels.
    pub width: u32,
    pub height: u32,
}

/// A rendered fetch to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRender {
    /// The snapshot of the page's raw response, which the render sits beside.
    pub snapshot: SnapshotId,
    /// Where the browser ended.
    pub final_url: String,
    /// The rendered DOM, zstd, and its length in bytes before compression.
    pub html_zstd: Vec<u8>,
    pub html_len: u64,
    /// The displayed text.
    pub text: String,
    pub screenshot: Option<NewScreenshot>,
    pub rendered_at: DateTime<Utc>,
    /// The page had not finished loading within its budget.
    pub timed_out: bool,
    /// Requests the page made, and how many of them were refused.
    pub requests: u32,
    pub refused: u32,
}

/// A stored rendered fetch, without its HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderRecord {
    pub id: i64,
    pub snapshot: SnapshotId,
    pub final_url: String,
    pub html_len: u64,
    pub text: String,
    /// The screenshot's SHA-256, its size in pixels and bytes.
    pub screenshot: Option<ScreenshotInfo>,
    pub rendered_at: DateTime<Utc>,
    pub timed_out: bool,
    pub requests: u32,
    pub refused: u32,
}

/// What is known of a stored screenshot without its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenshotInfo {
    pub sha256: [u8; 32],
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
}

/// Rendered fetches and screenshots.
pub trait Renders {
    /// Stores a rendered fetch and its screenshot (once per SHA-256), in one transaction.
    /// Returns the render's id.
    ///
    /// # Errors
    /// [`crate::Error::Backend`]; a foreign-key error for an unknown snapshot.
    fn insert_render(&self, render: &NewRender) -> impl Future<Output = Result<i64>> + Send;

    /// The newest rendered fetch of a snapshot, if any.
    fn latest_render(
        &self,
        snapshot: SnapshotId,
    ) -> impl Future<Output = Result<Option<RenderRecord>>> + Send;

    /// The newest render of a snapshot that has a screenshot: its record.
    fn latest_screenshot(
        &self,
        snapshot: SnapshotId,
    ) -> impl Future<Output = Result<Option<RenderRecord>>> + Send;

    /// A stored screenshot's PNG bytes, from the database or from its record in a segment
    /// (checked against its SHA-256).
    ///
    /// # Errors
    /// [`crate::Error::ObjectStore`] or [`crate::Error::CorruptBody`] for a record that
    /// cannot be read; [`crate::Error::InvalidInput`] for one in a segment when no object
    /// store is set.
    fn screenshot_png(
        &self,
        sha256: &[u8; 32],
    ) -> impl Future<Output = Result<Option<Vec<u8>>>> + Send;

    /// A render's HTML, zstd-compressed, and its length.
    fn render_html(&self, id: i64) -> impl Future<Output = Result<Option<(Vec<u8>, u64)>>> + Send;

    /// Keeps an RFC 3161 token over a screenshot's SHA-256 unless it has one already.
    /// Returns whether it was kept.
    fn stamp_screenshot(
        &self,
        sha256: &[u8; 32],
        token: &ScreenshotToken,
    ) -> impl Future<Output = Result<bool>> + Send;

    /// A screenshot's token, if it was stamped.
    fn screenshot_token(
        &self,
        sha256: &[u8; 32],
    ) -> impl Future<Output = Result<Option<ScreenshotToken>>> + Send;
}

/// An RFC 3161 token over a screenshot's SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenshotToken {
    /// The TSA that issued it (the configured URL).
    pub tsa_url: String,
    /// The token, DER, as received.
    pub token: Vec<u8>,
    /// The time the TSA stamped.
    pub gen_time: DateTime<Utc>,
}

type RenderRow = (
    i64,
    i64,
    String,
    i64,
    String,
    Option<Vec<u8>>,
    DateTime<Utc>,
    bool,
    i32,
    i32,
    Option<i32>,
    Option<i32>,
    Option<i64>,
);

const RENDER_COLUMNS: &str = "r.id, r.snapshot_id, r.final_url, r.html_len, r.text, \
     r.screenshot_sha256, r.rendered_at, r.timed_out, r.requests, r.refused, s.width, s.height, \
     s.bytes FROM renders r LEFT JOIN screenshots s ON s.sha256 = r.screenshot_sha256";

fn record(row: RenderRow) -> RenderRecord {
    let (
        id,
        snapshot,
        final_url,
        html_len,
        text,
        sha,
        rendered_at,
        timed_out,
        requests,
        refused,
        w,
        h,
        b,
    ) = row;
    RenderRecord {
        id,
        snapshot: SnapshotId(snapshot),
        final_url,
        html_len: html_len as u64,
        text,
        screenshot: sha.and_then(|sha| {
            Some(ScreenshotInfo {
                sha256: sha.try_into().ok()?,
                width: w? as u32,
                height: h? as u32,
                bytes: b? as u64,
            })
        }),
        rendered_at,
        timed_out,
        requests: requests as u32,
        refused: refused as u32,
    }
}

impl Renders for Store {
    #[instrument(skip_all, fields(snapshot = %render.snapshot, html = render.html_len))]
    async fn insert_render(&self, render: &NewRender) -> Result<i64> {
        let postgres = self.kind() == crate::BackendKind::Postgres;
        let id = write_tx!(self, |tx| {
            if let Some(shot) = &render.screenshot {
                let insert = || {
                    sqlx::query(
                        "INSERT INTO screenshots (sha256, png, width, height, bytes) \
                         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (sha256) DO NOTHING",
                    )
                    .bind(shot.sha256.as_slice())
                    .bind(&shot.png)
                    .bind(shot.width as i32)
                    .bind(shot.height as i32)
                    .bind(shot.png.len() as i64)
                };
                let inserted = insert().execute(&mut *tx).await?.rows_affected() > 0;
                // On Postgres, a screenshot found stored is locked until this render
                // commits, so that gc (which locks before it deletes) sees the render naming
                // it; one gc deleted meanwhile is stored again. SQLite runs one writer.
                if !inserted && postgres {
                    let locked: Option<i32> =
                        sqlx::query_scalar("SELECT 1 FROM screenshots WHERE sha256 = $1 FOR SHARE")
                            .bind(shot.sha256.as_slice())
                            .fetch_optional(&mut *tx)
                            .await?;
                    if locked.is_none() {
                        insert().execute(&mut *tx).await?;
                    }
                }
            }
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO renders (snapshot_id, final_url, html_zstd, html_len, text, \
                 screenshot_sha256, rendered_at, timed_out, requests, refused) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
            )
            .bind(render.snapshot.0)
            .bind(&render.final_url)
            .bind(&render.html_zstd)
            .bind(render.html_len as i64)
            .bind(&render.text)
            .bind(render.screenshot.as_ref().map(|s| s.sha256.to_vec()))
            .bind(render.rendered_at)
            .bind(render.timed_out)
            .bind(render.requests as i32)
            .bind(render.refused as i32)
            .fetch_one(&mut *tx)
            .await?;
            id
        });
        Ok(id)
    }

    async fn latest_render(&self, snapshot: SnapshotId) -> Result<Option<RenderRecord>> {
        let sql =
            format!("SELECT {RENDER_COLUMNS} WHERE r.snapshot_id = $1 ORDER BY r.id DESC LIMIT 1");
        let row: Option<RenderRow> = read_pool!(self, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                .bind(snapshot.0)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.map(record))
    }

    async fn latest_screenshot(&self, snapshot: SnapshotId) -> Result<Option<RenderRecord>> {
        let sql = format!(
            "SELECT {RENDER_COLUMNS} WHERE r.snapshot_id = $1 AND r.screenshot_sha256 IS NOT NULL \
             ORDER BY r.id DESC LIMIT 1"
        );
        let row: Option<RenderRow> = read_pool!(self, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                .bind(snapshot.0)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.map(record))
    }

    async fn screenshot_png(&self, sha256: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        type Row = (Vec<u8>, i64, Option<String>, Option<i64>, Option<i64>);
        let row: Option<Row> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT c.png, c.bytes, g.key, c.segment_offset, c.segment_length \
                 FROM screenshots c LEFT JOIN body_segments g ON g.id = c.segment_id \
                 WHERE c.sha256 = $1",
            )
            .bind(sha256.as_slice())
            .fetch_optional(pool)
            .await?
        });
        match row {
            None => Ok(None),
            Some((_, bytes, Some(key), Some(offset), Some(length))) => Ok(Some(
                self.segment_body(sha256, bytes.max(0) as u64, (key, offset, length))
                    .await?,
            )),
            Some((png, ..)) => Ok(Some(png)),
        }
    }

    async fn render_html(&self, id: i64) -> Result<Option<(Vec<u8>, u64)>> {
        let row: Option<(Vec<u8>, i64)> = read_pool!(self, |pool| {
            sqlx::query_as("SELECT html_zstd, html_len FROM renders WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.map(|(z, n)| (z, n as u64)))
    }

    async fn stamp_screenshot(&self, sha256: &[u8; 32], token: &ScreenshotToken) -> Result<bool> {
        let done = write_pool!(self, |pool| {
            sqlx::query(
                "UPDATE screenshots SET tsa_url = $2, tsa_token = $3, tsa_gen_time = $4 \
                 WHERE sha256 = $1 AND tsa_token IS NULL",
            )
            .bind(sha256.as_slice())
            .bind(&token.tsa_url)
            .bind(&token.token)
            .bind(token.gen_time)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    async fn screenshot_token(&self, sha256: &[u8; 32]) -> Result<Option<ScreenshotToken>> {
        type Row = (Option<String>, Option<Vec<u8>>, Option<DateTime<Utc>>);
        let row: Option<Row> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT tsa_url, tsa_token, tsa_gen_time FROM screenshots WHERE sha256 = $1",
            )
            .bind(sha256.as_slice())
            .fetch_optional(pool)
            .await?
        });
        Ok(row.and_then(|(url, token, at)| {
            Some(ScreenshotToken {
                tsa_url: url?,
                token: token?,
                gen_time: at?,
            })
        }))
    }
}
