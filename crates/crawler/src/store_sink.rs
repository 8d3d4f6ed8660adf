//! [`SnapshotSink`] over the database: [`StoreSink`] turns snapshots and pages into the
//! `store` crate's evidence rows, compressing each distinct body once, and
//! [`stored_snapshot`] rebuilds a [`Snapshot`] from those rows (for WARC export).

use std::net::SocketAddr;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use store::{EvidenceReads, EvidenceWrites, NewPageText, NewSnapshot, NewWireBody, SnapshotRecord};
use url::Url;

use crate::error::{Error, Result};
use crate::fetch::Validators;
use crate::sink::{
    PageRecord, PreviousFetch, RenderedPage, SnapshotId, SnapshotSink, StoredSnapshot,
};
use crate::snapshot::{
    RedirectHop, Sha256, Snapshot, Wire, compress, decode_headers, encode_headers, stored_bytes,
};

/// The job (if any) a stored page's text queues in the transaction that stores it: how the
/// stage after the crawl (matching) learns of each page without the crawler knowing it.
pub type PageFollowUp = std::sync::Arc<dyn Fn(&NewPageText) -> Option<store::NewJob> + Send + Sync>;

/// A [`SnapshotSink`] writing to the database through the store's evidence traits.
#[derive(Clone)]
pub struct StoreSink<S> {
    store: S,
    crawl: Option<store::CrawlId>,
    follow_up: Option<PageFollowUp>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for StoreSink<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSink")
            .field("store", &self.store)
            .field("crawl", &self.crawl)
            .field("follow_up", &self.follow_up.is_some())
            .finish()
    }
}

impl<S> StoreSink<S> {
    /// A sink whose snapshots belong to no crawl.
    pub fn new(store: S) -> Self {
        Self {
            store,
            crawl: None,
            follow_up: None,
        }
    }

    /// A sink whose snapshots belong to crawl `crawl`: they make its totals, and a response
    /// the crawl already stored (same URL, status and body) is not stored again.
    pub fn for_crawl(store: S, crawl: store::CrawlId) -> Self {
        Self {
            store,
            crawl: Some(crawl),
            follow_up: None,
        }
    }

    /// This sink, queueing `follow_up`'s job with each page text it stores for the first
    /// time (in the same transaction).
    pub fn then(mut self, follow_up: Option<PageFollowUp>) -> Self {
        self.follow_up = follow_up;
        self
    }
}

fn backend(doing: &'static str) -> impl FnOnce(store::Error) -> Error {
    move |e| Error::Store {
        doing,
        source: Box::new(e),
    }
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::CorruptEvidence {
        reason: reason.into(),
    }
}

fn lossy_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Hop {
    url: String,
    status: u16,
    /// Header values decoded lossily: redirect headers are kept for display and export,
    /// the evidence that matters (the final response) keeps its raw block.
    headers: Vec<(String, String)>,
    fetched_at: chrono::DateTime<chrono::Utc>,
    remote_addr: Option<String>,
}

fn encode_redirects(hops: &[RedirectHop]) -> String {
    let hops: Vec<Hop> = hops
        .iter()
        .map(|h| Hop {
            url: h.url.to_string(),
            status: h.status,
            headers: lossy_pairs(&h.headers),
            fetched_at: h.fetched_at,
            remote_addr: h.remote_addr.map(|a| a.to_string()),
        })
        .collect();
    serde_json::to_string(&hops).expect("redirect hops serialise")
}

fn decode_redirects(json: &str) -> Result<Vec<RedirectHop>> {
    let hops: Vec<Hop> =
        serde_json::from_str(json).map_err(|e| corrupt(format!("redirect chain: {e}")))?;
    hops.into_iter()
        .map(|h| {
            let mut headers = HeaderMap::new();
            for (k, v) in h.headers {
                if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::try_from(v)) {
                    headers.append(k, v);
                }
            }
            Ok(RedirectHop {
                url: Url::parse(&h.url).map_err(|e| corrupt(format!("redirect url: {e}")))?,
                status: h.status,
                headers,
                fetched_at: h.fetched_at,
                remote_addr: h.remote_addr.and_then(|a| a.parse().ok()),
            })
        })
        .collect()
}

fn http_version(s: Option<&str>) -> &'static str {
    match s {
        Some("HTTP/0.9") => "HTTP/0.9",
        Some("HTTP/1.0") => "HTTP/1.0",
        Some("HTTP/2") => "HTTP/2",
        Some("HTTP/3") => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// A stored body by hash, checked against it.
async fn stored_body<S: EvidenceReads + Sync>(
    store: &S,
    row: &SnapshotRecord,
    sha256: Sha256,
) -> Result<Vec<u8>> {
    let stored = store
        .body(sha256.as_bytes())
        .await
        .map_err(backend("reading a snapshot body"))?
        .ok_or_else(|| corrupt(format!("no body {sha256} for snapshot {}", row.id)))?;
    let len = stored.len as usize;
    let body = stored_bytes(stored, len)?;
    if Sha256::of(&body) != sha256 {
        return Err(corrupt(format!(
            "body of snapshot {} does not hash to {sha256}",
            row.id
        )));
    }
    Ok(body)
}

/// Rebuilds a stored response with its bodies (decoded and as served), as the crawler
/// recorded it.
///
/// # Errors
/// [`Error::Store`] when the database fails; [`Error::CorruptEvidence`] when a body is
/// missing or does not hash to the recorded SHA-256.
pub async fn stored_snapshot<S: EvidenceReads + Sync>(
    store: &S,
    row: &SnapshotRecord,
) -> Result<Snapshot> {
    let sha256 = Sha256(row.sha256);
    let body = stored_body(store, row, sha256).await?;
    let wire = match row.wire_sha256.map(Sha256) {
        None => Wire::NotRecorded,
        Some(wire) if wire == sha256 => Wire::Identity,
        Some(wire) => Wire::Encoded {
            bytes: Bytes::from(stored_body(store, row, wire).await?),
            sha256: wire,
        },
    };
    let url = |s: &str| Url::parse(s).map_err(|e| corrupt(format!("stored url {s:?}: {e}")));
    Ok(Snapshot {
        request_url: url(&row.url)?,
        final_url: url(&row.final_url)?,
        redirects: decode_redirects(&row.redirects)?,
        status: row.status,
        http_version: http_version(row.http_version.as_deref()),
        headers: decode_headers(row.header_block.as_deref().unwrap_or_default())?,
        request_headers: decode_headers(row.request_header_block.as_deref().unwrap_or_default())?,
        body: Bytes::from(body),
        wire,
        body_status: row.body_status.parse()?,
        sha256,
        fetched_at: row.fetched_at,
        elapsed: std::time::Duration::from_millis(row.elapsed_ms.unwrap_or(0)),
        remote_addr: row
            .remote_addr
            .as_deref()
            .and_then(|a| a.parse::<SocketAddr>().ok()),
    })
}

impl<S> StoreSink<S> {
    /// The row a response is stored as, with its body compressed.
    fn new_snapshot(&self, snapshot: &Snapshot) -> Result<(NewSnapshot, Vec<u8>)> {
        let sha = *snapshot.sha256.as_bytes();
        // Compressed every time, even when the body may be stored already (a page fetched
        // again unchanged): zstd at level 3 takes less than the round trip that would ask.
        let compressed = compress(&snapshot.body)?;
        let wire = match &snapshot.wire {
            Wire::Identity => Some(NewWireBody {
                sha256: sha,
                len: snapshot.body.len() as u64,
                zstd: None,
            }),
            Wire::Encoded { bytes, sha256 } => Some(NewWireBody {
                sha256: *sha256.as_bytes(),
                len: bytes.len() as u64,
                zstd: Some(compress(bytes)?),
            }),
            Wire::NotRecorded => None,
        };
        let row = NewSnapshot {
            crawl: self.crawl,
            url: snapshot.request_url.to_string(),
            final_url: snapshot.final_url.to_string(),
            status: snapshot.status,
            http_version: snapshot.http_version.to_owned(),
            headers: lossy_pairs(&snapshot.headers),
            header_block: encode_headers(&snapshot.headers),
            request_header_block: encode_headers(&snapshot.request_headers),
            content_type: snapshot.content_type().map(str::to_owned),
            redirects: encode_redirects(&snapshot.redirects),
            sha256: sha,
            body_len: snapshot.body.len() as u64,
            body_status: snapshot.body_status.as_str().to_owned(),
            fetched_at: snapshot.fetched_at,
            elapsed_ms: snapshot.elapsed.as_millis() as u64,
            remote_addr: snapshot.remote_addr.map(|a| a.to_string()),
            etag: snapshot.etag().map(str::to_owned),
            last_modified: snapshot.last_modified().map(str::to_owned),
            wire,
        };
        Ok((row, compressed))
    }

    /// Stores a response, as a revisit when it confirms `of`.
    async fn insert(
        &self,
        snapshot: &Snapshot,
        of: Option<&PreviousFetch>,
    ) -> Result<StoredSnapshot>
    where
        S: EvidenceWrites + Sync,
    {
        let (row, compressed) = self.new_snapshot(snapshot)?;
        let stored = match of {
            Some(of) => {
                let of = store::SnapshotId(of.snapshot.0 as i64);
                self.store.insert_revisit(&row, Some(&compressed), of).await
            }
            None => self.store.insert_snapshot(&row, Some(&compressed)).await,
        };
        let (id, new_body) = stored.map_err(backend("storing a snapshot"))?;
        Ok(StoredSnapshot {
            id: SnapshotId(id.0 as u64),
            new_body,
        })
    }
}

impl<S> SnapshotSink for StoreSink<S>
where
    S: EvidenceWrites + EvidenceReads + store::Renders + Send + Sync,
{
    async fn store_snapshot(&self, snapshot: &Snapshot) -> Result<StoredSnapshot> {
        self.insert(snapshot, None).await
    }

    async fn store_revisit(
        &self,
        snapshot: &Snapshot,
        of: &PreviousFetch,
    ) -> Result<StoredSnapshot> {
        self.insert(snapshot, Some(of)).await
    }

    async fn store_page(&self, page: PageRecord) -> Result<()> {
        let row = NewPageText {
            snapshot: store::SnapshotId(page.snapshot.0 as i64),
            url: page.url.to_string(),
            depth: page.depth,
            chain: page.chain.map(|c| (c.head.to_string(), c.index)),
            kind: page.kind.as_str().to_owned(),
            title: page.title,
            chapter_title: page.chapter_title,
            body: page.text,
            encoding: page.encoding.to_owned(),
            decode_errors: page.decode_errors,
            not_modified: page.not_modified,
            fetched_at: page.fetched_at,
            text_source: page.source.as_str().to_owned(),
            text_snapshot: page.text_snapshot.map(|s| store::SnapshotId(s.0 as i64)),
            declared_encoding: page.declared_encoding.map(str::to_owned),
        };
        let job = self.follow_up.as_ref().and_then(|f| f(&row));
        self.store
            .insert_page_text_then(&row, job.as_ref())
            .await
            .map_err(backend("storing a page"))
    }

    async fn previous(&self, url: &Url) -> Result<Option<PreviousFetch>> {
        let row = self
            .store
            .latest_validated(url.as_str())
            .await
            .map_err(backend("looking up the previous fetch"))?;
        Ok(row.map(|r| PreviousFetch {
            snapshot: SnapshotId(r.id.0 as u64),
            validators: Validators {
                etag: r.etag,
                last_modified: r.last_modified,
            },
            sha256: Sha256(r.sha256),
        }))
    }

    async fn body(&self, sha256: &Sha256) -> Result<Option<Bytes>> {
        let stored = self
            .store
            .body(sha256.as_bytes())
            .await
            .map_err(backend("reading a snapshot body"))?;
        stored
            .map(|b| {
                let len = b.len as usize;
                stored_bytes(b, len).map(Bytes::from)
            })
            .transpose()
    }

    async fn store_render(&self, render: RenderedPage) -> Result<()> {
        self.store
            .insert_render(&new_render(render)?)
            .await
            .map(drop)
            .map_err(backend("storing a rendered fetch"))
    }
}

/// A rendered fetch as the store keeps it: the HTML compressed, the screenshot hashed.
///
/// # Errors
/// [`Error::Io`] when compressing fails.
pub fn new_render(render: RenderedPage) -> Result<store::NewRender> {
    use sha2::Digest as _;
    Ok(store::NewRender {
        snapshot: store::SnapshotId(render.snapshot.0 as i64),
        final_url: render.final_url,
        html_zstd: compress(render.html.as_bytes())?,
        html_len: render.html.len() as u64,
        text: render.text,
        screenshot: render.screenshot.map(|shot| store::NewScreenshot {
            sha256: sha2::Sha256::digest(&shot.png).into(),
            png: shot.png,
            width: shot.width,
            height: shot.height,
        }),
        rendered_at: render.rendered_at,
        timed_out: render.timed_out,
        requests: render.requests,
        refused: render.refused,
    })
}
