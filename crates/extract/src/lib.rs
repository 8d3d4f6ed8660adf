//! What a page says, apart from how it was fetched: its main text, title, chapter heading,
//! links and next page, what kind of page it is, the text its inline scripts write, its own
//! CSS applied, its remapped fonts read back, and the text it draws on canvases or shows through
//! glyph sprites.
//!
//! In copyhound's flow this is the second stage: *crawl → **extract** → fingerprint → match*.
//! The crawl (`crawler`) fetches a page and hands its bytes here; `check` reads a file or a
//! URL and hands its bytes here the same way, so both read a page alike. Everything is a plain
//! function or a plain struct over bytes and strings: no HTTP, no network, no storage. What a
//! fetch brings along (a page's fonts, its content endpoint's answer) is passed in as data.
//!
//! It may use the leaves `ingest` (charset decoding, bounded HTML parsing), `fontmap` (a
//! font's bytes to its code-point map) and `bounds` (settings checks), and parsing crates
//! (scraper, cssparser, QuickJS); never `crawler`, `store` or an HTTP client.
//!
//! # Pieces
//!
//! | module | does | main items |
//! |---|---|---|
//! | [`page`] | a page's bytes read: decoded ([`charset`]), its main text, title, chapter heading, next page/chapter and kind; parsed within [`HtmlLimits`] and a time budget | [`read_page`], [`Extractor`], [`Extracted`], [`ExtractSettings`] |
//! | [`links`] | URL normalisation: the one spelling of a page's address its links, the frontier and the crawl scope share | [`links::normalize`], [`links::resolve`] |
//! | [`css`] | the page's own `<style>` and inline styles: flex/grid `order`, hidden classes, applied before extraction; its `@font-face` sources | [`css::apply`] |
//! | [`script`], [`js`] | what inline scripts write: their string literals scanned; on a page without text of its own, the scripts run in a QuickJS sandbox | [`script::scan`], [`js::evaluate`], [`ScriptSettings`] |
//! | [`fonts`] | a page's PUA code points read through the fonts its `@font-face` names (the `fontmap` crate), the same way in a crawl and in `check` | [`fonts::decode_text`], [`FontSettings`] |
//! | [`canvas`] | text drawn on a `<canvas>` (`fillText`/`strokeText` calls recorded in the browser or the sandbox) put in reading order where the canvas sits | [`canvas::order`], [`canvas::insert`], [`PageAssets`] |
//! | [`sprite`] | empty elements read through the glyph of an SVG sprite their CSS background shows (inline `data:` URI, or a same-site file the fetch brings) | [`sprite::apply`], [`Extracted::sprite_sources`] |
//! | [`ocr`] | a chapter served as images read back: when (thin text, or a listed site), images decoded within limits and tested for text, the OCR engine behind a trait (Tesseract as a subprocess, killed on overrun) | [`ocr::images_to_fetch`], [`ocr::read_images`], [`OcrEngine`], [`Tesseract`], [`OcrSettings`] |
//!
//! # Example
//!
//! ```
//! use extract::{PageKind, charset, extract};
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

use bounds::duration_serde;
pub use fontmap::FontSettings;
pub use ingest::charset;
pub use ingest::html::{Exceeded, HtmlLimits};
pub mod canvas;
pub mod css;
mod error;
pub mod fonts;
pub mod js;
pub mod links;
pub mod ocr;
pub mod page;
pub mod script;
pub mod sprite;

pub use error::{Error, Result};
pub use js::ScriptSettings;
pub use ocr::{OcrEngine, OcrSettings, PageImage, PageOcr, Tesseract};
pub use page::{
    ExtractSettings, Extracted, Extractor, PageAssets, PageKind, RENDER_MARK, ReadPage, TextSource,
    extract, read_endpoint, read_page, read_page_with,
};
