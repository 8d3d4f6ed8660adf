//! Crawl evidence: response rows in `snapshots` (under a `sites`/`pages` row per origin and
//! URL), bodies deduplicated by SHA-256 in `snapshot_bodies`, and what extraction found in
//! `page_texts`. The crawler compresses bodies; the store keeps bytes as given.

use std::future::Future;

use chrono::{DateTime, Utc};
use sqlx::Row;
use tracing::instrument;

use crate::db::{read_pool, write_tx};
use crate::{CrawlId, Error, Page, Result, SnapshotId, Store};

/// One HTTP response to store.
#[derive(Debug, Clone)]
pub struct NewSnapshot {
    /// The crawl that fetched it, if any: its totals count the crawl's snapshots.
    pub crawl: Option<CrawlId>,
    /// The URL asked for.
    pub url: String,
    /// The URL after redirects.
    pub final_url: String,
    pub status: u16,
    pub http_version: String,
    /// Response headers in order, values decoded lossily (for display and search).
    pub headers: Vec<(String, String)>,
    /// The response header block as received (wire format).
    pub header_block: Vec<u8>,
    /// The request header block as sent (wire format).
    pub request_header_block: Vec<u8>,
    pub content_type: Option<String>,
    /// The redirect chain as JSON (the crawler's format).
    pub redirects: String,
    /// SHA-256 of the uncompressed body.
    pub sha256: [u8; 32],
    /// Uncompressed body length in bytes.
    pub body_len: u64,
    /// `complete`, `truncated`, ... (the crawler's names).
    pub body_status: String,
    pub fetched_at: DateTime<Utc>,
    pub elapsed_ms: u64,
    pub remote_addr: Option<String>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// The body as served (content-coding still applied); `None` only for callers that do
    /// not keep it (rows read back say so with [`SnapshotRecord::wire_sha256`] `None`).
    pub wire: Option<NewWireBody>,
}

/// The body of a response as it came over the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWireBody {
    /// Its SHA-256; equal to [`NewSnapshot::sha256`] for a response without content-coding,
    /// and then nothing more is stored.
    pub sha256: [u8; 32],
    /// Its length in bytes.
    pub len: u64,
    /// The bytes zstd-compressed, when they differ from the decoded body and the caller did
    /// not learn from [`EvidenceWrites::has_body`] that they are stored.
    pub zstd: Option<Vec<u8>>,
}

/// A stored response (without its body).
#[derive(Debug, Clone)]
pub struct SnapshotRecord {
    pub id: SnapshotId,
    pub url: String,
    pub final_url: String,
    pub status: u16,
    pub http_version: Option<String>,
    pub header_block: Option<Vec<u8>>,
    pub request_header_block: Option<Vec<u8>>,
    pub redirects: String,
    pub sha256: [u8; 32],
    pub body_len: u64,
    pub body_status: String,
    pub fetched_at: DateTime<Utc>,
    pub remote_addr: Option<String>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// How long the fetch took, in milliseconds (`None` for rows written before it was kept).
    pub elapsed_ms: Option<u64>,
    /// SHA-256 of the body as served (a [`EvidenceReads::body`] key; equal to `sha256`
    /// without content-coding); `None` for rows written before it was kept.
    pub wire_sha256: Option<[u8; 32]>,
    /// Length of the body as served.
    pub wire_len: Option<u64>,
    /// When gc removed its bodies (`[retention]`): they may no longer be read.
    pub body_removed_at: Option<DateTime<Utc>>,
    /// For a revisit (a `304 Not Modified` answer to a conditional re-fetch): the earlier
    /// capture it confirms unchanged, whose body and SHA-256 are the evidence; this row's
    /// own body is the empty one received.
    pub revisit_of: Option<SnapshotId>,
}

/// A stored body: zstd bytes from the database, or the bytes themselves read from a segment
/// of the object store (checked against their SHA-256), and the uncompressed length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBody {
    pub bytes: crate::BodyBytes,
    pub len: u64,
}

/// What extraction found on one fetched page.
#[derive(Debug, Clone)]
pub struct NewPageText {
    pub snapshot: SnapshotId,
    pub url: String,
    pub depth: u32,
    /// First URL of a chapter split over several pages, and this page's place in it.
    pub chain: Option<(String, u32)>,
    pub kind: String,
    pub title: Option<String>,
    pub chapter_title: Option<String>,
    /// Main text, paragraphs separated by `\n`.
    pub body: String,
    pub encoding: String,
    pub decode_errors: bool,
    pub not_modified: bool,
    pub fetched_at: DateTime<Utc>,
    /// Where the text came from: `markup`, `script` (an inline script writes it),
    /// `endpoint` (the page's script fetches it from the site), `font`, `rendered` or `ocr`
    /// (read from the page's images).
    pub text_source: String,
    /// For `endpoint`: the snapshot of the endpoint's response.
    pub text_snapshot: Option<SnapshotId>,
    /// The charset the page declared when it was decoded in another one ([`Self::encoding`])
    /// because the declaration was weak or wrong; `None` when it was decoded as declared.
    pub declared_encoding: Option<String>,
}

/// A stored page text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageText {
    pub snapshot: SnapshotId,
    pub url: String,
    pub depth: u32,
    pub kind: String,
    pub title: Option<String>,
    pub chapter_title: Option<String>,
    pub body: String,
    pub encoding: String,
    /// See [`NewPageText::text_source`].
    pub text_source: String,
    /// See [`NewPageText::text_snapshot`].
    pub text_snapshot: Option<SnapshotId>,
    /// See [`NewPageText::declared_encoding`].
    pub declared_encoding: Option<String>,
}

/// Evidence writes, for the crawler.
pub trait EvidenceWrites {
    /// Whether a body with this SHA-256 is stored (so the caller can skip compressing it).
    fn has_body(&self, sha256: &[u8; 32]) -> impl Future<Output = Result<bool>> + Send;

    /// Stores a response and, when given and not stored yet, its body, in one transaction.
    /// Returns the row id and whether the body was new.
    ///
    /// Within one crawl a response is stored once: the same URL answered again with the same
    /// status and body (a page fetched again because its runner was killed before it
    /// recorded the page done) returns the stored row, so evidence and totals count it once.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when `body_zstd` is `None` and no body with that hash is stored.
    fn insert_snapshot(
        &self,
        snapshot: &NewSnapshot,
        body_zstd: Option<&[u8]>,
    ) -> impl Future<Output = Result<(SnapshotId, bool)>> + Send;

    /// Stores a revisit: a response (`304 Not Modified`) that confirms capture `of`
    /// unchanged, its own (empty) body stored like any other, the reference to `of` kept
    /// with the row ([`SnapshotRecord::revisit_of`]). Deduplicated within a crawl as
    /// [`EvidenceWrites::insert_snapshot`] is.
    ///
    /// # Errors
    /// [`Error::NotFound`] when `of` is not a stored snapshot; as `insert_snapshot`.
    fn insert_revisit(
        &self,
        snapshot: &NewSnapshot,
        body_zstd: Option<&[u8]>,
        of: SnapshotId,
    ) -> impl Future<Output = Result<(SnapshotId, bool)>> + Send;

    /// Stores a page's text; a second call for the same snapshot replaces it.
    fn insert_page_text(&self, page: &NewPageText) -> impl Future<Output = Result<()>> + Send;

    /// [`EvidenceWrites::insert_page_text`], and when the row is new (not when it replaces
    /// one), `then` enqueued in the same transaction: the stage that analyses the page is
    /// queued exactly when its text is stored, and only once per snapshot, however often a
    /// crawl stores it again.
    fn insert_page_text_then(
        &self,
        page: &NewPageText,
        then: Option<&crate::NewJob>,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// Evidence reads, for conditional re-fetches and export.
pub trait EvidenceReads {
    /// The newest 2xx response with a complete body and a validator whose request or final
    /// URL is `url`.
    fn latest_validated(
        &self,
        url: &str,
    ) -> impl Future<Output = Result<Option<SnapshotRecord>>> + Send;

    /// One stored response.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id.
    fn snapshot(&self, id: SnapshotId) -> impl Future<Output = Result<SnapshotRecord>> + Send;

    /// A stored body by hash.
    fn body(&self, sha256: &[u8; 32]) -> impl Future<Output = Result<Option<StoredBody>>> + Send;

    /// Stored responses by ascending id.
    fn snapshots(
        &self,
        page: Page<SnapshotId>,
    ) -> impl Future<Output = Result<Vec<SnapshotRecord>>> + Send;

    /// The text stored for a snapshot.
    fn page_text(&self, id: SnapshotId) -> impl Future<Output = Result<PageText>> + Send;

    /// The stored texts of `ids` in one query each [`PAGE_TEXTS_AT_ONCE`] ids (a case page
    /// reads all its pages' texts so), in any order; an id without a text is left out.
    fn page_texts(&self, ids: &[SnapshotId]) -> impl Future<Output = Result<Vec<PageText>>> + Send;

    /// Snapshots with a stored text, by ascending id, that `filter` selects (what a re-match
    /// goes over).
    fn snapshots_with_text(
        &self,
        filter: &TextFilter,
        page: Page<SnapshotId>,
    ) -> impl Future<Output = Result<Vec<SnapshotId>>> + Send;

    /// A crawl's stored responses in the order of the `snapshots_crawl` index (by request
    /// URL, then id), at most `limit` after `after` (from the first when `None`); pass
    /// [`SnapshotCursor::after`] of the last row to get the next page. Empty for an unknown
    /// crawl.
    fn crawl_snapshots(
        &self,
        crawl: CrawlId,
        after: Option<&SnapshotCursor>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<SnapshotRecord>>> + Send;
}

/// Which stored page texts [`EvidenceReads::snapshots_with_text`] selects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextFilter {
    /// Pages on this host (as the `sites` row names it, lower case), when set.
    pub site: Option<String>,
    /// Fetched at or after this time, when set.
    pub since: Option<DateTime<Utc>>,
}

/// Where a page of [`EvidenceReads::crawl_snapshots`] starts: after this snapshot, in the
/// order by request URL, then id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotCursor {
    /// The request URL of the last snapshot read.
    pub url: String,
    /// Its id.
    pub id: SnapshotId,
}

impl SnapshotCursor {
    /// The position just after `record`.
    pub fn after(record: &SnapshotRecord) -> Self {
        SnapshotCursor {
            url: record.url.clone(),
            id: record.id,
        }
    }
}

/// The columns [`snapshot_from_row`] reads, in its order (a macro so queries stay literals).
macro_rules! snapshot_columns {
    () => {
        "id, url, final_url, status, http_version, header_block, request_header_block, \
         redirects, sha256, body_len, body_status, fetched_at, remote_addr, etag, last_modified, \
         elapsed_ms, wire_sha256, wire_len, body_removed_at, revisit_of"
    };
}

fn snapshot_from_row<R: Row>(row: &R) -> Result<SnapshotRecord>
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i32: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Vec<u8>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> DateTime<Utc>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let digest = |bytes: Vec<u8>| -> Result<[u8; 32]> {
        bytes
            .try_into()
            .map_err(|_| Error::InvalidInput("snapshot sha256 is not 32 bytes".into()))
    };
    let sha256 = digest(row.try_get(8)?)?;
    let wire_sha256 = row
        .try_get::<Option<Vec<u8>>, _>(16)?
        .map(digest)
        .transpose()?;
    Ok(SnapshotRecord {
        id: SnapshotId(row.try_get(0)?),
        url: row.try_get(1)?,
        final_url: row.try_get(2)?,
        status: row.try_get::<i32, _>(3)? as u16,
        http_version: row.try_get(4)?,
        header_block: row.try_get(5)?,
        request_header_block: row.try_get(6)?,
        redirects: row.try_get(7)?,
        sha256,
        body_len: row.try_get::<i64, _>(9)? as u64,
        body_status: row.try_get(10)?,
        fetched_at: row.try_get(11)?,
        remote_addr: row.try_get(12)?,
        etag: row.try_get(13)?,
        last_modified: row.try_get(14)?,
        elapsed_ms: row
            .try_get::<Option<i64>, _>(15)?
            .map(|ms| ms.max(0) as u64),
        wire_sha256,
        wire_len: row.try_get::<Option<i64>, _>(17)?.map(|n| n.max(0) as u64),
        body_removed_at: row.try_get(18)?,
        revisit_of: row.try_get::<Option<i64>, _>(19)?.map(SnapshotId),
    })
}

/// The `sites` row of a URL's origin, inserted if missing, on any executor of either backend
/// (a transaction); evaluates to its id.
macro_rules! upsert_site {
    ($exec:expr, $url:expr) => {{
        let (base_url, host) = $crate::evidence::origin($url);
        // Read first: a site is inserted once and read for every page after, and a read
        // writes nothing (the upsert below rewrites the row on Postgres).
        let known: Option<i64> = sqlx::query_scalar("SELECT id FROM sites WHERE base_url = $1")
            .bind(&base_url)
            .fetch_optional(&mut *$exec)
            .await?;
        match known {
            Some(id) => id,
            // DO UPDATE (a no-op) rather than DO NOTHING so RETURNING yields the id that
            // another writer may have inserted meanwhile.
            None => {
                sqlx::query_scalar::<_, i64>(
                    "INSERT INTO sites (name, base_url, host) VALUES ($1, $2, $3) \
                     ON CONFLICT (base_url) DO UPDATE SET host = excluded.host RETURNING id",
                )
                .bind(&host)
                .bind(&base_url)
                .bind(&host)
                .fetch_one(&mut *$exec)
                .await?
            }
        }
    }};
}
pub(crate) use upsert_site;

/// `scheme://host[:port]/` of a URL, the `sites.base_url` its pages hang under.
pub(crate) fn origin(url: &str) -> (String, String) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    let host = url[after_scheme..end].to_owned();
    (format!("{}/", &url[..end]), host)
}

/// Stores a body under its SHA-256 unless one is stored, on a transaction; with no bytes
/// given the hash must be stored already, else the whole write is refused. Evaluates to
/// whether the row is new.
macro_rules! store_body {
    ($tx:expr, $postgres:expr, $sha:expr, $zstd:expr, $len:expr, $what:literal, $url:expr) => {
        match $zstd {
            Some(zstd) => {
                let insert = || {
                    sqlx::query(
                        "INSERT INTO snapshot_bodies (sha256, body_zstd, body_len) \
                         VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING",
                    )
                    .bind($sha.as_slice())
                    .bind(zstd)
                    .bind($len as i64)
                };
                let mut inserted = insert().execute(&mut *$tx).await?.rows_affected() > 0;
                // On Postgres, a body found stored is locked until this snapshot commits,
                // so that gc (which locks before it deletes) sees the snapshot naming it; one
                // gc deleted meanwhile is stored again. SQLite runs one writer at a time.
                if !inserted && $postgres && !body_locked!(&mut *$tx, $sha) {
                    inserted = insert().execute(&mut *$tx).await?.rows_affected() > 0;
                }
                inserted
            }
            None => {
                let n: i64 = if $postgres {
                    i64::from(body_locked!(&mut *$tx, $sha))
                } else {
                    sqlx::query_scalar("SELECT COUNT(*) FROM snapshot_bodies WHERE sha256 = $1")
                        .bind($sha.as_slice())
                        .fetch_one(&mut *$tx)
                        .await?
                };
                if n == 0 {
                    return Err(Error::InvalidInput(format!(
                        concat!("no stored ", $what, " for a snapshot of {} and none given"),
                        $url
                    )));
                }
                false
            }
        }
    };
}

/// Postgres only: locks body `$sha` for share (see `store_body!`); whether it is stored.
macro_rules! body_locked {
    ($tx:expr, $sha:expr) => {
        sqlx::query_scalar::<_, i32>("SELECT 1 FROM snapshot_bodies WHERE sha256 = $1 FOR SHARE")
            .bind($sha.as_slice())
            .fetch_optional($tx)
            .await?
            .is_some()
    };
}

impl Store {
    /// A response row, with `revisit_of` when it confirms an earlier capture.
    async fn insert_response(
        &self,
        s: &NewSnapshot,
        body_zstd: Option<&[u8]>,
        revisit_of: Option<SnapshotId>,
    ) -> Result<(SnapshotId, bool)> {
        let headers = serde_json::to_string(&s.headers)
            .map_err(|e| Error::InvalidInput(format!("snapshot headers: {e}")))?;
        let postgres = self.kind() == crate::BackendKind::Postgres;
        let stored = write_tx!(self, |tx| {
            if let Some(of) = revisit_of {
                let known: Option<i64> =
                    sqlx::query_scalar("SELECT id FROM snapshots WHERE id = $1")
                        .bind(of.0)
                        .fetch_optional(&mut *tx)
                        .await?;
                if known.is_none() {
                    return Err(Error::not_found("snapshot", of));
                }
            }
            if let Some(crawl) = s.crawl {
                let known: Option<i64> = sqlx::query_scalar(
                    "SELECT id FROM snapshots WHERE crawl_id = $1 AND url = $2 AND sha256 = $3 \
                     AND status = $4 ORDER BY id LIMIT 1",
                )
                .bind(crawl.0)
                .bind(&s.url)
                .bind(s.sha256.as_slice())
                .bind(i32::from(s.status))
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(id) = known {
                    return Ok((SnapshotId(id), false));
                }
            }
            let new_body = store_body!(
                tx, postgres, &s.sha256, body_zstd, s.body_len, "body", &s.url
            );
            if let Some(wire) = s.wire.as_ref().filter(|w| w.sha256 != s.sha256) {
                let zstd = wire.zstd.as_deref();
                store_body!(
                    tx,
                    postgres,
                    &wire.sha256,
                    zstd,
                    wire.len,
                    "wire body",
                    &s.url
                );
            }
            let site_id = upsert_site!(&mut *tx, &s.url);
            let page_id: i64 = sqlx::query_scalar(
                "INSERT INTO pages (site_id, url, last_fetched_at, last_status) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (site_id, url) DO UPDATE SET \
                 last_fetched_at = excluded.last_fetched_at, last_status = excluded.last_status \
                 RETURNING id",
            )
            .bind(site_id)
            .bind(&s.url)
            .bind(s.fetched_at)
            .bind(i32::from(s.status))
            .fetch_one(&mut *tx)
            .await?;
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO snapshots (page_id, url, final_url, status, headers, content_type, \
                 body_zstd, body_len, sha256, fetched_at, http_version, header_block, \
                 request_header_block, redirects, body_status, elapsed_ms, remote_addr, etag, \
                 last_modified, crawl_id, wire_sha256, wire_len, revisit_of) VALUES ($1, $2, $3, \
                 $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
                 $21, $22, $23) RETURNING id",
            )
            .bind(page_id)
            .bind(&s.url)
            .bind(&s.final_url)
            .bind(i32::from(s.status))
            .bind(&headers)
            .bind(&s.content_type)
            .bind(Vec::<u8>::new())
            .bind(s.body_len as i64)
            .bind(s.sha256.as_slice())
            .bind(s.fetched_at)
            .bind(&s.http_version)
            .bind(&s.header_block)
            .bind(&s.request_header_block)
            .bind(&s.redirects)
            .bind(&s.body_status)
            .bind(s.elapsed_ms as i64)
            .bind(&s.remote_addr)
            .bind(&s.etag)
            .bind(&s.last_modified)
            .bind(s.crawl.map(|c| c.0))
            .bind(s.wire.as_ref().map(|w| w.sha256.to_vec()))
            .bind(s.wire.as_ref().map(|w| w.len as i64))
            .bind(revisit_of.map(|r| r.0))
            .fetch_one(&mut *tx)
            .await?;
            (SnapshotId(id), new_body)
        });
        Ok(stored)
    }
}

impl EvidenceWrites for Store {
    async fn has_body(&self, sha256: &[u8; 32]) -> Result<bool> {
        let n: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT COUNT(*) FROM snapshot_bodies WHERE sha256 = $1")
                .bind(sha256.as_slice())
                .fetch_one(pool)
                .await?
        });
        Ok(n > 0)
    }

    #[instrument(skip_all, fields(status = s.status, bytes = s.body_len))]
    async fn insert_snapshot(
        &self,
        s: &NewSnapshot,
        body_zstd: Option<&[u8]>,
    ) -> Result<(SnapshotId, bool)> {
        self.insert_response(s, body_zstd, None).await
    }

    #[instrument(skip_all, fields(status = s.status, of = %of))]
    async fn insert_revisit(
        &self,
        s: &NewSnapshot,
        body_zstd: Option<&[u8]>,
        of: SnapshotId,
    ) -> Result<(SnapshotId, bool)> {
        self.insert_response(s, body_zstd, Some(of)).await
    }

    async fn insert_page_text(&self, page: &NewPageText) -> Result<()> {
        self.insert_page_text_then(page, None).await
    }

    #[instrument(skip_all, fields(snapshot = %page.snapshot, chars = page.body.len()))]
    async fn insert_page_text_then(
        &self,
        page: &NewPageText,
        then: Option<&crate::NewJob>,
    ) -> Result<()> {
        let (head, index) = match &page.chain {
            Some((head, index)) => (Some(head.as_str()), Some(*index as i32)),
            None => (None, None),
        };
        let now = crate::queue::millis(chrono::Utc::now());
        write_tx!(self, |tx| {
            // The common case, a new row, takes one statement; a text stored again (a
            // re-extraction) replaces the row and queues nothing.
            // Binds the row's sixteen values to `$1`..`$16` of a statement.
            macro_rules! page_text {
                ($sql:expr) => {
                    sqlx::query($sql)
                        .bind(page.snapshot)
                        .bind(&page.url)
                        .bind(page.depth as i32)
                        .bind(head)
                        .bind(index)
                        .bind(&page.kind)
                        .bind(&page.title)
                        .bind(&page.chapter_title)
                        .bind(&page.body)
                        .bind(&page.encoding)
                        .bind(page.decode_errors)
                        .bind(page.not_modified)
                        .bind(page.fetched_at)
                        .bind(&page.text_source)
                        .bind(page.text_snapshot)
                        .bind(&page.declared_encoding)
                        .execute(&mut *tx)
                        .await?
                };
            }
            let inserted = page_text!(
                "INSERT INTO page_texts (snapshot_id, url, depth, chain_head, chain_index, kind, \
                 title, chapter_title, body, encoding, decode_errors, not_modified, fetched_at, \
                 text_source, text_snapshot_id, declared_encoding) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
                 $16) \
                 ON CONFLICT (snapshot_id) DO NOTHING"
            )
            .rows_affected()
                > 0;
            if inserted {
                // Two writers of one new row on Postgres may both enqueue: the job's key
                // keeps one (None: a live job holds it, which is just as good).
                if let Some(job) = then {
                    let _ = crate::queue::insert_job!(&mut *tx, job, now);
                }
            } else {
                page_text!(
                    "UPDATE page_texts SET url = $2, depth = $3, chain_head = $4, \
                     chain_index = $5, kind = $6, title = $7, chapter_title = $8, body = $9, \
                     encoding = $10, decode_errors = $11, not_modified = $12, fetched_at = $13, \
                     text_source = $14, text_snapshot_id = $15, declared_encoding = $16 \
                     WHERE snapshot_id = $1"
                );
            }
            Ok::<(), crate::Error>(())
        })?;
        Ok(())
    }
}

/// Ids [`EvidenceReads::page_texts`] asks for in one statement.
pub const PAGE_TEXTS_AT_ONCE: usize = 500;

/// The columns of a [`PageTextRow`].
const PAGE_TEXT_COLUMNS: &str = "url, depth, kind, title, chapter_title, body, encoding, \
     text_source, text_snapshot_id, declared_encoding";

fn page_text_of(id: SnapshotId, row: PageTextRow) -> PageText {
    let (
        url,
        depth,
        kind,
        title,
        chapter_title,
        body,
        encoding,
        text_source,
        text_snapshot,
        declared_encoding,
    ) = row;
    PageText {
        snapshot: id,
        url,
        depth: depth as u32,
        kind,
        title,
        chapter_title,
        body,
        encoding,
        text_source,
        text_snapshot,
        declared_encoding,
    }
}

/// `snapshot_id` and a [`PageTextRow`], as [`EvidenceReads::page_texts`] reads them.
type IdPageTextRow = (
    SnapshotId,
    String,
    i32,
    String,
    Option<String>,
    Option<String>,
    String,
    String,
    String,
    Option<SnapshotId>,
    Option<String>,
);

/// `url, depth, kind, title, chapter_title, body, encoding, text_source, text_snapshot_id,
/// declared_encoding` of a `page_texts` row.
type PageTextRow = (
    String,
    i32,
    String,
    Option<String>,
    Option<String>,
    String,
    String,
    String,
    Option<SnapshotId>,
    Option<String>,
);

impl EvidenceReads for Store {
    async fn latest_validated(&self, url: &str) -> Result<Option<SnapshotRecord>> {
        let sql = concat!(
            "SELECT ",
            snapshot_columns!(),
            " FROM snapshots WHERE (url = $1 OR final_url = $1) \
             AND status BETWEEN 200 AND 299 AND body_status = 'complete' \
             AND body_removed_at IS NULL \
             AND (etag IS NOT NULL OR last_modified IS NOT NULL) ORDER BY id DESC LIMIT 1"
        );
        read_pool!(self, |pool| {
            sqlx::query(sql)
                .bind(url)
                .fetch_optional(pool)
                .await?
                .map(|r| snapshot_from_row(&r))
                .transpose()
        })
    }

    async fn snapshot(&self, id: SnapshotId) -> Result<SnapshotRecord> {
        let sql = concat!(
            "SELECT ",
            snapshot_columns!(),
            " FROM snapshots WHERE id = $1"
        );
        let row = read_pool!(self, |pool| {
            sqlx::query(sql)
                .bind(id.0)
                .fetch_optional(pool)
                .await?
                .map(|r| snapshot_from_row(&r))
                .transpose()
        })?;
        row.ok_or_else(|| Error::not_found("snapshot", id))
    }

    async fn body(&self, sha256: &[u8; 32]) -> Result<Option<StoredBody>> {
        type BodyRow = (Vec<u8>, i64, Option<String>, Option<i64>, Option<i64>);
        let row: Option<BodyRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT b.body_zstd, b.body_len, s.key, b.segment_offset, b.segment_length \
                 FROM snapshot_bodies b LEFT JOIN body_segments s ON s.id = b.segment_id \
                 WHERE b.sha256 = $1",
            )
            .bind(sha256.as_slice())
            .fetch_optional(pool)
            .await?
        });
        let Some((zstd, len, key, offset, length)) = row else {
            return Ok(None);
        };
        let len = len.max(0) as u64;
        let bytes = match (key, offset, length) {
            (Some(key), Some(offset), Some(length)) => crate::BodyBytes::Plain(
                self.segment_body(sha256, len, (key, offset, length))
                    .await?,
            ),
            _ => crate::BodyBytes::Zstd(zstd),
        };
        Ok(Some(StoredBody { bytes, len }))
    }

    async fn snapshots(&self, page: Page<SnapshotId>) -> Result<Vec<SnapshotRecord>> {
        let sql = concat!(
            "SELECT ",
            snapshot_columns!(),
            " FROM snapshots WHERE id > $1 ORDER BY id LIMIT $2"
        );
        let after = page.after.map_or(0, |id| id.0);
        let limit = page.limit.map_or(i64::MAX, i64::from);
        read_pool!(self, |pool| {
            sqlx::query(sql)
                .bind(after)
                .bind(limit)
                .fetch_all(pool)
                .await?
                .iter()
                .map(snapshot_from_row)
                .collect()
        })
    }

    #[instrument(skip_all, fields(crawl = %crawl, limit))]
    async fn crawl_snapshots(
        &self,
        crawl: CrawlId,
        after: Option<&SnapshotCursor>,
        limit: u32,
    ) -> Result<Vec<SnapshotRecord>> {
        // Keyset on (url, id): `url >= $2` is a range of the `snapshots_crawl (crawl_id,
        // url)` index, which both backends read in URL order; a keyset on id alone would
        // sort all of the crawl's rows for every page.
        let first = concat!(
            "SELECT ",
            snapshot_columns!(),
            " FROM snapshots WHERE crawl_id = $1 ORDER BY url, id LIMIT $2"
        );
        let next = concat!(
            "SELECT ",
            snapshot_columns!(),
            " FROM snapshots WHERE crawl_id = $1 AND url >= $3 AND (url > $3 OR id > $4) \
             ORDER BY url, id LIMIT $2"
        );
        read_pool!(self, |pool| {
            let query = match after {
                None => sqlx::query(first).bind(crawl.0).bind(i64::from(limit)),
                Some(cursor) => sqlx::query(next)
                    .bind(crawl.0)
                    .bind(i64::from(limit))
                    .bind(cursor.url.as_str())
                    .bind(cursor.id.0),
            };
            query
                .fetch_all(pool)
                .await?
                .iter()
                .map(snapshot_from_row)
                .collect()
        })
    }

    async fn page_text(&self, id: SnapshotId) -> Result<PageText> {
        let sql = format!("SELECT {PAGE_TEXT_COLUMNS} FROM page_texts WHERE snapshot_id = $1");
        let row: Option<PageTextRow> = read_pool!(self, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        let row = row.ok_or_else(|| Error::not_found("page text", id))?;
        Ok(page_text_of(id, row))
    }

    #[instrument(skip_all, fields(ids = ids.len()))]
    async fn page_texts(&self, ids: &[SnapshotId]) -> Result<Vec<PageText>> {
        let mut texts = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(PAGE_TEXTS_AT_ONCE) {
            // Ids are integers, written into the statement as they are.
            let sql = format!(
                "SELECT snapshot_id, {PAGE_TEXT_COLUMNS} FROM page_texts \
                 WHERE snapshot_id IN ({})",
                crate::db::id_list(chunk.iter().map(|id| id.0))
            );
            let rows: Vec<IdPageTextRow> = read_pool!(self, |pool| {
                sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                    .persistent(false)
                    .fetch_all(pool)
                    .await?
            });
            texts.extend(rows.into_iter().map(|row| {
                let (id, url, depth, kind, title, chapter, body, encoding, source, text, declared) =
                    row;
                let text_row = (
                    url, depth, kind, title, chapter, body, encoding, source, text, declared,
                );
                page_text_of(id, text_row)
            }));
        }
        Ok(texts)
    }

    async fn snapshots_with_text(
        &self,
        filter: &TextFilter,
        page: Page<SnapshotId>,
    ) -> Result<Vec<SnapshotId>> {
        let mut sql = String::from(
            "SELECT t.snapshot_id FROM page_texts t JOIN snapshots s ON s.id = t.snapshot_id \
             JOIN pages p ON p.id = s.page_id JOIN sites w ON w.id = p.site_id \
             WHERE t.snapshot_id > $1",
        );
        let mut n = 2;
        if filter.site.is_some() {
            sql.push_str(&format!(" AND w.host = ${n}"));
            n += 1;
        }
        if filter.since.is_some() {
            sql.push_str(&format!(" AND t.fetched_at >= ${n}"));
            n += 1;
        }
        sql.push_str(&format!(" ORDER BY t.snapshot_id LIMIT ${n}"));
        let after = page.after.map_or(0, |id| id.0);
        let limit = page.limit.map_or(i64::MAX, i64::from);
        let site = filter.site.as_deref().map(str::to_ascii_lowercase);
        let ids: Vec<i64> = read_pool!(self, |pool| {
            let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone())).bind(after);
            if let Some(site) = &site {
                q = q.bind(site);
            }
            if let Some(since) = filter.since {
                q = q.bind(since);
            }
            q.bind(limit).fetch_all(pool).await?
        });
        Ok(ids.into_iter().map(SnapshotId).collect())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn origin_keeps_scheme_host_and_port() {
        assert_eq!(
            super::origin("http://127.0.0.1:8080/a/b?c"),
            ("http://127.0.0.1:8080/".into(), "127.0.0.1:8080".into())
        );
        assert_eq!(
            super::origin("https://例子.cn"),
            ("https://例子.cn/".into(), "例子.cn".into())
        );
    }
}
