//! Where a crawl's evidence and pages go.
//!
//! [`MemorySink`] keeps evidence in process memory; [`crate::StoreSink`] writes it to the
//! database (`snapshots`, `snapshot_bodies` deduplicated by SHA-256, `page_texts`).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use extract::{PageKind, TextSource};
use url::Url;

use crate::error::Result;
use crate::fetch::Validators;
use crate::frontier::ChainPos;
use crate::snapshot::{BodyStatus, Sha256, Snapshot, compress, decompress, encode_headers};

/// A stored snapshot's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SnapshotId(pub u64);

/// What storing a snapshot did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredSnapshot {
    pub id: SnapshotId,
    /// Whether the body was new; `false` means a body with the same SHA-256 was already
    /// stored and only the response row was added.
    pub new_body: bool,
}

/// What the last fetch of a URL left for a conditional re-fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviousFetch {
    /// The stored response: what a `304 Not Modified` answer confirms unchanged.
    pub snapshot: SnapshotId,
    pub validators: Validators,
    /// Its body, to re-use on `304 Not Modified`.
    pub sha256: Sha256,
}

/// One page as the crawl understood it.
#[derive(Clone, Debug)]
pub struct PageRecord {
    /// The frontier URL.
    pub url: Url,
    /// The URL after redirects.
    pub final_url: Url,
    /// The evidence it came from.
    pub snapshot: SnapshotId,
    pub depth: u32,
    /// Its place in a chapter split over several pages (`index` 0 is the first page).
    pub chain: Option<ChainPos>,
    pub kind: PageKind,
    pub title: Option<String>,
    pub chapter_title: Option<String>,
    /// Main text, paragraphs separated by `\n`.
    pub text: String,
    /// The encoding it was decoded with (encoding_rs name, e.g. `GBK`).
    pub encoding: &'static str,
    /// Whether decoding replaced malformed bytes.
    pub decode_errors: bool,
    /// Whether the text came from an earlier snapshot because the server said 304.
    pub not_modified: bool,
    pub fetched_at: DateTime<Utc>,
    /// Where the text came from (markup, an inline script, or the page's content endpoint).
    pub source: TextSource,
    /// For a text from the content endpoint: the snapshot of the endpoint's response.
    pub text_snapshot: Option<SnapshotId>,
    /// The charset the page declared, when it was decoded in another one
    /// ([`extract::charset::Decoded::overridden`]).
    pub declared_encoding: Option<&'static str>,
}

/// A PNG of a rendered page.
#[derive(Clone, Debug)]
pub struct Screenshot {
    pub png: Vec<u8>,
    /// Pixels (the height cut at `screenshot_max_height`).
    pub width: u32,
    pub height: u32,
}

/// What a rendered fetch of a page left, to store beside the page's snapshot.
#[derive(Clone, Debug)]
pub struct RenderedPage {
    /// The snapshot of the page's raw response.
    pub snapshot: SnapshotId,
    /// Where the browser ended.
    pub final_url: String,
    /// The DOM as rendered.
    pub html: String,
    /// The displayed text.
    pub text: String,
    pub screenshot: Option<Screenshot>,
    pub rendered_at: DateTime<Utc>,
    pub timed_out: bool,
    pub requests: u32,
    pub refused: u32,
}

/// Storage for snapshots and pages.
pub trait SnapshotSink: Send + Sync {
    /// Stores one response; its body only if no body with that SHA-256 is stored yet.
    fn store_snapshot(
        &self,
        snapshot: &Snapshot,
    ) -> impl Future<Output = Result<StoredSnapshot>> + Send;

    /// Stores a response that confirms `of` unchanged (`304 Not Modified` to the
    /// conditional request `of`'s validators made): a revisit of that capture, kept as one,
    /// so its own empty body is never taken for the page's evidence.
    fn store_revisit(
        &self,
        snapshot: &Snapshot,
        of: &PreviousFetch,
    ) -> impl Future<Output = Result<StoredSnapshot>> + Send;

    /// Stores what extraction found on a page.
    fn store_page(&self, page: PageRecord) -> impl Future<Output = Result<()>> + Send;

    /// Validators and body hash of the newest stored 2xx response for `url` (request or
    /// final URL), for a conditional re-fetch.
    fn previous(&self, url: &Url) -> impl Future<Output = Result<Option<PreviousFetch>>> + Send;

    /// A stored body by its hash, decompressed.
    fn body(&self, sha256: &Sha256) -> impl Future<Output = Result<Option<Bytes>>> + Send;

    /// Stores a rendered fetch beside its page's snapshot. A sink without room for renders
    /// drops it.
    fn store_render(&self, render: RenderedPage) -> impl Future<Output = Result<()>> + Send {
        let _ = render;
        async { Ok(()) }
    }
}

impl<T: SnapshotSink> SnapshotSink for std::sync::Arc<T> {
    fn store_snapshot(
        &self,
        snapshot: &Snapshot,
    ) -> impl Future<Output = Result<StoredSnapshot>> + Send {
        (**self).store_snapshot(snapshot)
    }

    fn store_revisit(
        &self,
        snapshot: &Snapshot,
        of: &PreviousFetch,
    ) -> impl Future<Output = Result<StoredSnapshot>> + Send {
        (**self).store_revisit(snapshot, of)
    }

    fn store_page(&self, page: PageRecord) -> impl Future<Output = Result<()>> + Send {
        (**self).store_page(page)
    }

    fn previous(&self, url: &Url) -> impl Future<Output = Result<Option<PreviousFetch>>> + Send {
        (**self).previous(url)
    }

    fn body(&self, sha256: &Sha256) -> impl Future<Output = Result<Option<Bytes>>> + Send {
        (**self).body(sha256)
    }

    fn store_render(&self, render: RenderedPage) -> impl Future<Output = Result<()>> + Send {
        (**self).store_render(render)
    }
}

/// A stored response row, as [`MemorySink`] keeps it.
#[derive(Clone, Debug)]
pub struct SnapshotRow {
    pub id: SnapshotId,
    pub sha256: Sha256,
    pub request_url: Url,
    pub final_url: Url,
    pub status: u16,
    /// Wire-format header block.
    pub headers: Vec<u8>,
    pub body_status: BodyStatus,
    pub body_len: usize,
    pub fetched_at: DateTime<Utc>,
    /// For a revisit: the capture it confirms unchanged.
    pub revisit_of: Option<SnapshotId>,
}

#[derive(Default)]
struct Inner {
    bodies: HashMap<Sha256, (Vec<u8>, usize)>,
    rows: Vec<SnapshotRow>,
    pages: Vec<PageRecord>,
    renders: Vec<RenderedPage>,
    latest: HashMap<String, PreviousFetch>,
    compressed_bytes: u64,
}

/// [`SnapshotSink`] in process memory: bodies zstd-compressed and deduplicated by SHA-256.
#[derive(Default)]
pub struct MemorySink {
    inner: Mutex<Inner>,
    keep_pages: bool,
}

impl MemorySink {
    /// A sink that keeps snapshots and pages.
    pub fn new() -> Self {
        Self {
            inner: Mutex::default(),
            keep_pages: true,
        }
    }

    /// A sink that stores snapshots but counts pages without keeping their text (for long
    /// benchmark runs).
    pub fn without_pages() -> Self {
        Self {
            inner: Mutex::default(),
            keep_pages: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("sink lock")
    }

    /// Stored response rows, in order.
    pub fn snapshots(&self) -> Vec<SnapshotRow> {
        self.lock().rows.clone()
    }

    /// Stored pages, in order.
    pub fn pages(&self) -> Vec<PageRecord> {
        self.lock().pages.clone()
    }

    /// Stored rendered fetches, in order.
    pub fn renders(&self) -> Vec<RenderedPage> {
        self.lock().renders.clone()
    }

    /// Distinct bodies stored.
    pub fn body_count(&self) -> usize {
        self.lock().bodies.len()
    }

    /// Bytes of compressed bodies stored.
    pub fn compressed_bytes(&self) -> u64 {
        self.lock().compressed_bytes
    }
}

impl MemorySink {
    fn store_row(
        &self,
        snapshot: &Snapshot,
        revisit_of: Option<SnapshotId>,
    ) -> Result<StoredSnapshot> {
        // Compress outside the lock; a duplicate body wastes the work but never blocks others.
        let known = self.lock().bodies.contains_key(&snapshot.sha256);
        let compressed = if known {
            None
        } else {
            Some(compress(&snapshot.body)?)
        };
        let mut inner = self.lock();
        let id = SnapshotId(inner.rows.len() as u64 + 1);
        let new_body = match compressed {
            Some(c) if !inner.bodies.contains_key(&snapshot.sha256) => {
                inner.compressed_bytes += c.len() as u64;
                inner
                    .bodies
                    .insert(snapshot.sha256, (c, snapshot.body.len()));
                true
            }
            _ => false,
        };
        inner.rows.push(SnapshotRow {
            id,
            sha256: snapshot.sha256,
            request_url: snapshot.request_url.clone(),
            final_url: snapshot.final_url.clone(),
            status: snapshot.status,
            headers: encode_headers(&snapshot.headers),
            body_status: snapshot.body_status,
            body_len: snapshot.body.len(),
            fetched_at: snapshot.fetched_at,
            revisit_of,
        });
        if snapshot.is_success()
            && snapshot.body_status == BodyStatus::Complete
            && let Some(validators) = Validators::from_snapshot(snapshot)
        {
            let prev = PreviousFetch {
                snapshot: id,
                validators,
                sha256: snapshot.sha256,
            };
            inner
                .latest
                .insert(snapshot.request_url.to_string(), prev.clone());
            inner.latest.insert(snapshot.final_url.to_string(), prev);
        }
        Ok(StoredSnapshot { id, new_body })
    }
}

impl SnapshotSink for MemorySink {
    async fn store_snapshot(&self, snapshot: &Snapshot) -> Result<StoredSnapshot> {
        self.store_row(snapshot, None)
    }

    async fn store_revisit(
        &self,
        snapshot: &Snapshot,
        of: &PreviousFetch,
    ) -> Result<StoredSnapshot> {
        self.store_row(snapshot, Some(of.snapshot))
    }

    async fn store_page(&self, page: PageRecord) -> Result<()> {
        if self.keep_pages {
            self.lock().pages.push(page);
        }
        Ok(())
    }

    async fn previous(&self, url: &Url) -> Result<Option<PreviousFetch>> {
        Ok(self.lock().latest.get(url.as_str()).cloned())
    }

    async fn store_render(&self, render: RenderedPage) -> Result<()> {
        if self.keep_pages {
            self.lock().renders.push(render);
        }
        Ok(())
    }

    async fn body(&self, sha256: &Sha256) -> Result<Option<Bytes>> {
        let stored = self.lock().bodies.get(sha256).cloned();
        stored
            .map(|(c, len)| decompress(&c, len).map(Bytes::from))
            .transpose()
    }
}
