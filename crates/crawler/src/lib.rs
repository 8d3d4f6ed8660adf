//! The crawler: polite, robust fetching, charset decoding, main-text extraction, link
//! discovery and evidence snapshots.
//!
//! In copyhound's flow this is the first stage: *schedule → **crawl** → page snapshot →
//! analyze → match*. It fetches pages of suspect sites, keeps every response verbatim as
//! evidence ([`Snapshot`], exportable as WARC), and gets the chapter text out of hostile markup
//! for the fingerprint stage. It never decides whether a page infringes.
//!
//! # Pieces
//!
//! Each is a plain-function or plain-struct core, usable alone:
//!
//! | module | does | main items |
//! |---|---|---|
//! | [`fetch`] | one URL → one [`Snapshot`]: timeouts, size cap, manual redirects, conditional requests | [`Fetcher`], [`FetchSettings`] |
//! | [`coding`] | `Content-Encoding` (gzip, deflate, br, zstd, stacked) undone within size and ratio caps | [`coding::decode`] |
//! | [`outbound`] | every other outbound HTTP client (search providers, the CDX index, WET files) under the same address rules, redirects checked hop by hop, keys kept to their host | [`outbound::Outbound`] |
//! | [`safety`] | refuses loopback/private/link-local/multicast addresses after DNS and on every redirect | [`AddressPolicy`] |
//! | [`robots`] | robots.txt fetched once per origin, cached, obeyed, per-site override | [`RobotsCache`] |
//! | [`politeness`] | per-host delay/concurrency, global concurrency, `Retry-After`, backoff with jitter | [`Politeness`], [`HostStateStore`] |
//! | [`charset`] | BOM → header → `<meta>` → chardetng (an `iso-8859-1` label is weak evidence), decoded with encoding_rs (the `ingest` crate's, shared with the importer) | [`charset::decode`] |
//! | [`extract`] | main text, title, chapter heading, next page/chapter, page kind; parsed within [`HtmlLimits`] | [`Extractor`], [`Extracted`] |
//! | [`css`] | the page's own `<style>` and inline styles: flex/grid `order`, hidden classes, applied before extraction | [`css::apply`] |
//! | [`fonts`] | a page's PUA code points read through its `@font-face` (the `fontmap` crate), the same way in a crawl and in `check` | [`fonts::decode_text`], [`FontSettings`] |
//! | [`script`], [`js`] | what inline scripts write: their string literals scanned; on a page without text of its own, the scripts run in a QuickJS sandbox | [`script::scan`], [`js::evaluate`], [`ScriptSettings`] |
//! | [`render`] | the rendered fetch: a pool of headless Chromium behind a proxy that applies the address rules to every request of the page; displayed text and screenshots | [`Renderer`], [`RenderSettings`] |
//! | [`links`] | normalisation, scope, trap shapes, sitemaps | [`links::normalize`], [`Scope`] |
//! | [`snapshot`], [`warc`] | evidence values, zstd, header blocks; WARC 1.1 writer and reader | [`Snapshot`], [`WarcWriter`] |
//! | [`frontier`], [`sink`], [`crawl`] | the runner over storage traits, with in-memory stores | [`Crawl`], [`Frontier`], [`SnapshotSink`] |
//!
//! The three storage traits ([`Frontier`], [`SnapshotSink`], [`HostStateStore`]) have
//! in-memory implementations and store-backed ones ([`StoreFrontier`], [`StoreSink`],
//! [`StoreHostStates`], wired together by [`StoreCrawl`]), with which a crawl is shared by
//! many worker processes and resumes after a restart.
//!
//! # Example
//!
//! Extraction and decoding are plain functions:
//!
//! ```
//! use crawler::{charset, extract::{extract, PageKind}};
//! use url::Url;
//!
//! let gbk = encoding_rs::GBK.encode(
//!     "<html><body><div class=nav><a href=/>首页</a></div>\
//!      <div id=content>话说天下大势，分久必合，合久必分。<br><br>周末七国分争，并入于秦。</div></body></html>",
//! ).0;
//! let decoded = charset::decode(&gbk, Some("text/html"), Some("cn")); // no charset declared
//! assert_eq!(decoded.encoding, encoding_rs::GBK);
//! let page = extract(&decoded.text, &Url::parse("http://example.com/1.html").unwrap());
//! assert_eq!(page.kind, PageKind::Content);
//! assert_eq!(page.paragraphs, ["话说天下大势，分久必合，合久必分。", "周末七国分争，并入于秦。"]);
//! ```
//!
//! A whole crawl, in memory:
//!
//! ```no_run
//! # async fn demo() -> crawler::Result<()> {
//! use crawler::{Crawl, CrawlSettings};
//!
//! let settings = CrawlSettings { max_pages: Some(200), ..CrawlSettings::default() };
//! let seed = url::Url::parse("https://suspect.example/book/1/").unwrap();
//! let crawl = Crawl::in_memory(settings, vec![seed])?;
//! let report = crawl.run().await?;
//! println!("{report}");
//! for chapter in crawler::assemble_chapters(&crawl.sink().pages()) {
//!     println!("{} {} chars", chapter.url, chapter.text.chars().count());
//! }
//! # Ok(()) }
//! ```

pub use ingest::charset;
pub use ingest::html::{Exceeded, HtmlLimits};
pub mod coding;
pub mod crawl;
pub mod css;
use bounds::duration_serde;
mod error;
pub mod extract;
pub mod fetch;
pub mod fonts;
pub mod frontier;
pub mod js;
pub mod links;
pub mod outbound;
pub mod politeness;
pub mod render;
pub mod robots;
pub mod safety;
pub mod script;
pub mod sink;
pub mod snapshot;
pub mod store_frontier;
pub mod store_sink;
pub mod warc;

pub use crawl::{
    Chapter, Crawl, CrawlReport, CrawlSettings, Failure, LinkSkip, MemoryCrawl, SkipReason,
    assemble_chapters,
};
pub use error::{Error, ErrorKind, Result, TimeoutPhase};
pub use extract::{
    ExtractSettings, Extracted, Extractor, PageKind, ReadPage, TextSource, read_endpoint, read_page,
};
pub use fetch::{FetchRequest, FetchSettings, Fetcher, Validators};
pub use fontmap::FontSettings;
pub use frontier::{
    Claim, Claimed, Discovery, EntryId, Frontier, FrontierEntry, FrontierLimits, MemoryFrontier,
};
pub use js::ScriptSettings;
pub use links::{Scope, ScopeSettings};
pub use politeness::{
    HostFeedback, HostKey, HostState, HostStateStore, MemoryHostStates, Politeness,
    PolitenessSettings,
};
pub use render::{RenderRequest, RenderSettings, Rendered, Renderer, Screenshot};
pub use robots::{RobotsCache, RobotsSettings};
pub use safety::{AddressPolicy, SafetySettings};
pub use sink::{MemorySink, PageRecord, RenderedPage, SnapshotId, SnapshotSink};
pub use snapshot::{BodyStatus, Sha256, Snapshot, Wire};
pub use store_frontier::{HeldUrls, StoreCrawl, StoreFrontier, StoreHostStates, held_urls};
pub use store_sink::{PageFollowUp, StoreSink, new_render, stored_snapshot};
pub use warc::{WarcReader, WarcRecord, WarcWriter};
