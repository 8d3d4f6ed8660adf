//! The crawler: polite, robust fetching, link discovery and evidence snapshots.
//!
//! In copyhound's flow this is the first stage: *schedule → **crawl** → page snapshot →
//! analyze → match*. It fetches pages of suspect sites and keeps every response verbatim as
//! evidence ([`Snapshot`], exportable as WARC). What a page says (its main text, links, page
//! kind, script-written text, fonts) is the `extract` crate's: the crawl hands it each body,
//! and the fonts and content endpoints a page names once fetched. It never decides whether a
//! page infringes.
//!
//! It may use `extract` (what a page says), `store` (the store-backed frontier, sink and host
//! states), `fontmap` (font settings: a font's body cap) and `bounds`; never `pipeline` or
//! another stage.
//!
//! # Pieces
//!
//! Each is a plain-function or plain-struct core, usable alone:
//!
//! | module | does | main items |
//! |---|---|---|
//! | [`fetch`] | one URL → one [`Snapshot`]: timeouts, size cap, manual redirects, conditional requests; a page's fonts fetched | [`Fetcher`], [`FetchSettings`], [`fetch::font_request`] |
//! | [`coding`] | `Content-Encoding` (gzip, deflate, br, zstd, stacked) undone within size and ratio caps | [`coding::decode`] |
//! | [`outbound`] | every other outbound HTTP client (search providers, the CDX index, WET files) under the same address rules, redirects checked hop by hop, keys kept to their host | [`outbound::Outbound`] |
//! | [`safety`] | refuses loopback/private/link-local/multicast addresses after DNS and on every redirect | [`AddressPolicy`] |
//! | [`robots`] | robots.txt fetched once per origin, cached, obeyed, per-site override | [`RobotsCache`] |
//! | [`politeness`] | per-host delay/concurrency, global concurrency, `Retry-After`, backoff with jitter | [`Politeness`], [`HostStateStore`] |
//! | [`render`] | the rendered fetch: a pool of headless Chromium behind a proxy that applies the address rules to every request of the page; displayed text and screenshots | [`Renderer`], [`RenderSettings`] |
//! | [`links`] | scope, trap shapes, sitemaps (over `extract::links`' normalised URLs) | [`Scope`], [`links::parse_sitemap`] |
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

pub mod coding;
pub mod crawl;
use bounds::duration_serde;
mod error;
pub mod fetch;
pub mod frontier;
pub mod links;
pub mod outbound;
pub mod politeness;
pub mod render;
pub mod robots;
pub mod safety;
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
pub use fetch::{FetchRequest, FetchSettings, Fetcher, Validators};
pub use frontier::{
    Claim, Claimed, Discovery, EntryId, Frontier, FrontierEntry, FrontierLimits, MemoryFrontier,
};
pub use links::{Scope, ScopeSettings};
pub use politeness::{
    HostFeedback, HostKey, HostState, HostStateStore, MemoryHostStates, Politeness,
    PolitenessSettings,
};
pub use render::{RenderRequest, RenderSettings, Rendered, Renderer};
pub use robots::{RobotsCache, RobotsSettings};
pub use safety::{AddressPolicy, SafetySettings};
pub use sink::{MemorySink, PageRecord, RenderedPage, Screenshot, SnapshotId, SnapshotSink};
pub use snapshot::{BodyStatus, Sha256, Snapshot, Wire};
pub use store_frontier::{HeldUrls, StoreCrawl, StoreFrontier, StoreHostStates, held_urls};
pub use store_sink::{PageFollowUp, StoreSink, new_render, stored_snapshot};
pub use warc::{WarcReader, WarcRecord, WarcWriter};
