//! Main-text extraction: the chapter's paragraphs in order, without navigation, chapter
//! lists, footers and ads; plus title, headings, the "next page" link and the page's kind.
//!
//! # How
//!
//! One pass over the DOM cuts the text into *blocks*: runs of inline text between block
//! elements and `<br>`s, each owned by its nearest block element. Scripts, styles, forms
//! controls and hidden elements (`display:none`, `hidden`, piracy sites hide anti-copy junk
//! that way) are skipped. Each block scores its non-link characters, damped by its link density
//! and by the lack of sentence punctuation (menus and labels have none). Scores flow to the
//! owner, its parent (both in full: a `<div id="content">` of `<br>`-separated text and an
//! `<article>` of `<p>`s must both win) and its grandparent (half). The winner maximises score
//! × (1 − link density), boosted for well-known content ids of novel sites (`#content`,
//! `#chaptercontent`, `#booktxt`, ...) and damped for navigation-like ids and classes; ties go
//! to the deeper element. Its blocks, minus link-dense ones, headings, blocks inside
//! navigation-like descendants and short ad lines ("一秒记住本站地址", URLs), are the text.
//!
//! Before the walk, the page's own `<style>` rules and inline styles are applied
//! ([`crate::css`]): flex and grid items are put in their `order`, elements hidden by a class
//! are dropped.
//!
//! Site rules come first: CSS selectors configured for a site ([`ExtractSettings`]) win when
//! they match an element with text. dom_smoothie (a Readability port) was considered as a
//! fallback and left out: on every fixture and real page it adds nothing this does not
//! already recover (see the crate's extraction-quality test), for a second DOM.

use std::collections::HashSet;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use ego_tree::iter::Edge;
use ingest::html::{Exceeded, HtmlLimits, parse_document};
use regex::Regex;
use scraper::{Html, Node, Selector};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{Error, Result};
use crate::{canvas, css, js, links, script, sprite};

/// Extraction settings, usually per site.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct ExtractSettings {
    /// CSS selectors for the content element, tried in order before scoring
    /// (e.g. `"#chaptercontent"`, `"div.read-content"`).
    pub content_selectors: Vec<String>,
    /// Bounds on parsing one page (depth, elements, attributes).
    pub limits: HtmlLimits,
    /// Time one page's decoding and extraction may take in a crawl; a page that needs more
    /// is skipped as `over_limit` (its snapshot is kept).
    #[serde(with = "crate::duration_serde")]
    pub time_budget: Duration,
    /// Limits of the sandbox that runs a page's inline scripts ([`crate::js`]).
    pub scripts: js::ScriptSettings,
    /// Whether and within what limits a page's remapped font is read ([`crate::fonts`]).
    pub fonts: fontmap::FontSettings,
    /// Whether, when and within what limits a page's images are read ([`crate::ocr`]).
    pub ocr: crate::ocr::OcrSettings,
}

impl ExtractSettings {
    /// Checks the time budget and the parsing limits.
    ///
    /// # Errors
    /// The first setting out of range, keyed relative to this section.
    pub fn validate(&self) -> bounds::Check {
        bounds::at_least("time_budget", self.time_budget, bounds::MIN_TIMEOUT)?;
        self.scripts
            .validate()
            .map_err(|e| e.in_section("scripts"))?;
        self.fonts.validate().map_err(|e| e.in_section("fonts"))?;
        self.ocr.validate().map_err(|e| e.in_section("ocr"))?;
        self.limits.validate().map_err(|e| e.in_section("limits"))
    }
}

impl Default for ExtractSettings {
    fn default() -> Self {
        ExtractSettings {
            content_selectors: Vec::new(),
            limits: HtmlLimits::default(),
            // Linear parsing handles the 5 MiB body cap in well under a second.
            time_budget: Duration::from_secs(2),
            scripts: js::ScriptSettings::default(),
            fonts: fontmap::FontSettings::default(),
            ocr: crate::ocr::OcrSettings::default(),
        }
    }
}

/// What kind of page this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PageKind {
    /// A page with main text (a chapter, an article).
    Content,
    /// A table of contents or listing: mostly chapter links, little text.
    Index,
    /// An anti-bot interstitial (Cloudflare "Just a moment...", DDoS-Guard): no content.
    Challenge,
    /// A stub that redirects by script or `<meta refresh>`; see [`Extracted::redirect_to`].
    Redirect,
    /// No text found.
    Empty,
}

impl PageKind {
    /// Stable lower-case name, for reports and database columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Content => "content",
            Self::Index => "index",
            Self::Challenge => "challenge",
            Self::Redirect => "redirect",
            Self::Empty => "empty",
        }
    }
}

/// Where the main text came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TextSource {
    /// The page's markup.
    #[default]
    Markup,
    /// What an inline script writes into the page: its string literals ([`crate::script`]),
    /// or what it builds when it runs in the sandbox ([`crate::js`]).
    Script,
    /// A same-site JSON or text endpoint the page's script fetches its content from.
    Endpoint,
    /// The page's text with its Private Use Area code points read through the page's own
    /// remapped font ([`crate::fonts`]).
    Font,
    /// The displayed text of the page rendered in a headless browser (the crawler's `render`).
    Rendered,
    /// Text the page draws on a `<canvas>` ([`crate::canvas`]), recorded in the browser or in
    /// the script sandbox.
    Canvas,
    /// Empty elements read through the glyph sprite their CSS background shows
    /// ([`crate::sprite`]).
    Sprite,
    /// The text of the page's images, read by OCR ([`crate::ocr`]).
    Ocr,
}

impl TextSource {
    /// Stable lower-case name, for reports and database columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Markup => "markup",
            Self::Script => "script",
            Self::Endpoint => "endpoint",
            Self::Font => "font",
            Self::Rendered => "rendered",
            Self::Canvas => "canvas",
            Self::Sprite => "sprite",
            Self::Ocr => "ocr",
        }
    }

    /// The source named by [`TextSource::as_str`]; `None` for another name.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::Markup,
            Self::Script,
            Self::Endpoint,
            Self::Font,
            Self::Rendered,
            Self::Canvas,
            Self::Sprite,
            Self::Ocr,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// The attribute the crawler's `render` numbers a rendered page's elements with before the
/// page's HTML is extracted, so the browser can be asked for the chosen element's displayed
/// text.
pub const RENDER_MARK: &str = "data-copyhound-i";

/// A page with fewer characters of main text than this holds no chapter: when its script
/// fetches content from the site, that is where the text is.
pub const ENDPOINT_BELOW_CHARS: usize = 200;

/// How the main text was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// A configured site selector matched.
    Selector(String),
    /// Text-density scoring chose the container.
    Density,
    /// An inline script writes the text (density scoring over what it writes).
    Script,
    /// No container (challenge, redirect or empty page).
    None,
}

/// A link found on the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Resolved and normalised.
    pub url: Url,
    /// Its text, whitespace collapsed.
    pub text: String,
    /// `rel="nofollow"`.
    pub nofollow: bool,
}

/// What [`Extractor::extract`] found.
#[derive(Clone, Debug)]
pub struct Extracted {
    /// The kind of page.
    pub kind: PageKind,
    /// `<title>` (or `og:title`).
    pub title: Option<String>,
    /// The chapter heading ("第一回 ...", "Chapter 3"), if one is found.
    pub chapter_title: Option<String>,
    /// `<h1>`–`<h3>` texts in document order, without repeats.
    pub headings: Vec<String>,
    /// The main text, one entry per paragraph, in order. Empty for challenge and redirect
    /// pages.
    pub paragraphs: Vec<String>,
    /// The continuation of this chapter on another page (pagination of a split chapter).
    pub next_page: Option<Url>,
    /// The next chapter.
    pub next_chapter: Option<Url>,
    /// Where a redirect stub sends the browser (only on [`PageKind::Redirect`] pages: a
    /// content page's scripts assign `location` in click handlers too).
    pub redirect_to: Option<Url>,
    /// Every http(s) link, normalised, first occurrence kept.
    pub links: Vec<Link>,
    /// How the text was found.
    pub method: Method,
    /// Where the text came from: the markup, or what an inline script writes.
    pub source: TextSource,
    /// A same-site URL the page's script fetches its content from, when the page itself
    /// holds less than [`ENDPOINT_BELOW_CHARS`] characters of text (a footer, say): the
    /// crawler fetches it (as evidence of its own) for the text.
    pub content_endpoint: Option<Url>,
    /// The `@font-face` sources of the page's `<style>` ([`css::font_sources`]), resolved,
    /// when its text holds Private Use Area code points: http(s) for a page fetched over the
    /// web, `file:` only for a page read from a file.
    pub font_sources: Vec<Url>,
    /// Same-site glyph sprites (SVG files) the page's empty elements show through their CSS
    /// background ([`crate::sprite`]), which were not given in [`PageAssets::sprites`]: the
    /// crawler fetches them and reads the page again with them.
    pub sprite_sources: Vec<Url>,
    /// The page's `<img>`s that could hold its text, in page order: outside navigation,
    /// headers, footers and links, http(s) only (`file:` for a page read from a file), at most
    /// [`MAX_PAGE_IMAGES`]. The crawl reads them when the text is thin ([`crate::ocr`]).
    pub images: Vec<crate::ocr::PageImage>,
    /// The chosen container, like `div#content` (for debugging site rules).
    pub container: Option<String>,
    /// The chosen container's [`RENDER_MARK`] attribute: on a page a browser rendered, the
    /// number the renderer gave the element, so its displayed text can be read back.
    pub container_mark: Option<String>,
    /// Bytes of inline script (up to the scanner's bound) and `<script src>` elements: what
    /// says a page with little text of its own builds it in a browser.
    pub inline_script_bytes: usize,
    pub external_scripts: usize,
    /// `<meta name="robots" content="nofollow">`.
    pub nofollow: bool,
    /// `<meta name="robots" content="noindex">`.
    pub noindex: bool,
    /// Set when the page broke a parsing limit or the deadline: only its start was read,
    /// and the rest of this value describes that start.
    pub exceeded: Option<Exceeded>,
}

impl Extracted {
    /// The paragraphs joined by newlines.
    pub fn text(&self) -> String {
        self.paragraphs.join("\n")
    }

    /// Characters of main text (paragraph separators not counted).
    pub fn text_chars(&self) -> usize {
        self.paragraphs.iter().map(|p| p.chars().count()).sum()
    }

    /// A placeholder a browser would fill: little text of its own (fewer than
    /// [`ENDPOINT_BELOW_CHARS`] characters) while the page carries a big inline script
    /// (2 KiB or more), or an external one and words saying the text is loading.
    pub fn is_placeholder(&self, text_chars: usize) -> bool {
        const LOADING: [&str; 4] = ["加载", "载入", "載入", "loading"];
        matches!(self.kind, PageKind::Empty | PageKind::Content)
            && text_chars < ENDPOINT_BELOW_CHARS
            && (self.inline_script_bytes >= 2048
                || self.external_scripts > 0
                    && (self.title.iter().chain(&self.paragraphs))
                        .any(|t| LOADING.iter().any(|w| t.to_lowercase().contains(w))))
    }
}

/// A fetched page read: decoded, then its main text extracted (HTML) or tidied (plain text).
#[derive(Debug)]
pub struct ReadPage {
    /// The decoding.
    pub decoded: ingest::charset::Decoded,
    /// What extraction found; `None` for a plain-text page.
    pub extracted: Option<Extracted>,
    /// What kind of page it is (plain text is [`PageKind::Content`]).
    pub kind: PageKind,
    /// The main text, paragraphs separated by `\n`.
    pub text: String,
    /// Where the text came from.
    pub source: TextSource,
}

impl ReadPage {
    /// The parsing limit the page broke, if it did: only its start was read.
    pub fn exceeded(&self) -> Option<Exceeded> {
        self.extracted.as_ref().and_then(|e| e.exceeded)
    }
}

/// Reads a fetched response body: the one way from bytes to main text, shared by the crawl
/// and by `check` (so both apply the same site rules and limits). `content_type` is the
/// `Content-Type` header (or what a file's extension says): `text/plain` is read as text,
/// anything else as HTML. CPU work on hostile bytes: call it on a blocking thread.
pub fn read_page(
    extractor: &Extractor,
    body: &[u8],
    content_type: Option<&str>,
    url: &Url,
    deadline: Option<Instant>,
) -> ReadPage {
    read_page_with(
        extractor,
        body,
        content_type,
        url,
        deadline,
        &PageAssets::default(),
    )
}

/// [`read_page`] with what the fetch brought along ([`Extractor::extract_with`]): the glyph
/// sprites of [`Extracted::sprite_sources`], fetched.
pub fn read_page_with(
    extractor: &Extractor,
    body: &[u8],
    content_type: Option<&str>,
    url: &Url,
    deadline: Option<Instant>,
    assets: &PageAssets,
) -> ReadPage {
    let (mime, decoded) = decode_body(body, content_type, url);
    if mime == "text/plain" {
        let text = plain_text(&decoded.text);
        return ReadPage {
            decoded,
            extracted: None,
            kind: PageKind::Content,
            text,
            source: TextSource::Markup,
        };
    }
    let extracted = extractor.extract_with(&decoded.text, url, deadline, assets);
    ReadPage {
        kind: extracted.kind,
        text: extracted.text(),
        source: extracted.source,
        extracted: Some(extracted),
        decoded,
    }
}

/// Reads the response of a page's content endpoint ([`Extracted::content_endpoint`]): JSON
/// (the string, or array of strings, with the most characters: a chapter's text or its
/// paragraphs; HTML in it is extracted as a page's content is), HTML (as a page), or plain
/// text. The page's kind is [`PageKind::Content`] when text was found, else
/// [`PageKind::Empty`]; its source is [`TextSource::Endpoint`]. CPU work on hostile bytes:
/// call it on a blocking thread.
pub fn read_endpoint(
    extractor: &Extractor,
    body: &[u8],
    content_type: Option<&str>,
    url: &Url,
    deadline: Option<Instant>,
) -> ReadPage {
    let (mime, decoded) = decode_body(body, content_type, url);
    let trimmed = decoded.text.trim_start();
    let looks_json = mime.ends_with("json") || trimmed.starts_with(['{', '[']);
    let mut extracted = None;
    let text = if looks_json {
        // serde_json refuses nesting deeper than 128, so hostile JSON stays bounded.
        match serde_json::from_str::<serde_json::Value>(&decoded.text) {
            Ok(value) => {
                let best = longest_text(&value);
                if best.contains('<') {
                    let paragraphs = extractor.fragment_paragraphs(&best, deadline);
                    paragraphs.join("\n")
                } else {
                    plain_text(&best)
                }
            }
            Err(_) => String::new(),
        }
    } else if mime == "text/plain" {
        plain_text(&decoded.text)
    } else {
        let e = extractor.extract_by(&decoded.text, url, deadline);
        let text = e.text();
        extracted = Some(e);
        text
    };
    ReadPage {
        kind: if text.is_empty() {
            PageKind::Empty
        } else {
            PageKind::Content
        },
        text,
        source: TextSource::Endpoint,
        extracted,
        decoded,
    }
}

/// The string, or the array of strings joined by line breaks, with the most characters in a
/// JSON value (walked without recursion).
fn longest_text(value: &serde_json::Value) -> String {
    use serde_json::Value;
    let mut best = String::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s.len() > best.len() => best.clone_from(s),
            Value::Array(items) => {
                if items.len() > 1 && items.iter().all(Value::is_string) {
                    let joined: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                    let len: usize = joined.iter().map(|s| s.len() + 1).sum();
                    if len > best.len() {
                        best = joined.join("\n");
                    }
                } else {
                    stack.extend(items);
                }
            }
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    best
}

/// The media type of `content_type` (lower case, without parameters; empty when none) and
/// the body decoded (the URL's top-level domain helps guess an undeclared charset).
fn decode_body(
    body: &[u8],
    content_type: Option<&str>,
    url: &Url,
) -> (String, ingest::charset::Decoded) {
    let mime = content_type
        .and_then(|ct| ct.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let tld = url.host_str().and_then(|h| h.rsplit('.').next());
    (mime, ingest::charset::decode(body, content_type, tld))
}

/// A plain-text page's lines, trimmed, blank ones dropped.
pub fn plain_text(text: &str) -> String {
    text.lines()
        .map(|l| l.trim_matches(|c: char| c.is_whitespace()))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The page's `@font-face` sources resolved against `base`: http(s) ones, or `file:` ones
/// when the page itself is a file (a page on the web never names a local file).
fn page_font_sources(doc: &Html, base: &Url) -> Vec<Url> {
    css::font_sources(&css::style_text(doc))
        .iter()
        .filter_map(|src| base.join(src).ok())
        .filter(|u| match u.scheme() {
            "http" | "https" => true,
            "file" => base.scheme() == "file",
            _ => false,
        })
        .collect()
}

/// What a fetch brings along for reading a page, beside its bytes.
#[derive(Clone, Debug, Default)]
pub struct PageAssets {
    /// The text drawn on the page's canvases, as the rendered fetch recorded it in the browser
    /// ([`crate::canvas`]).
    pub draw_calls: Vec<crate::canvas::DrawCall>,
    /// The glyph sprites the page's CSS names ([`Extracted::sprite_sources`]), fetched.
    pub sprites: Vec<crate::sprite::FetchedSprite>,
}

impl PageAssets {
    /// Whether nothing was brought.
    pub fn is_empty(&self) -> bool {
        self.draw_calls.is_empty() && self.sprites.is_empty()
    }
}

/// `<img>`s a page lists at most in [`Extracted::images`].
pub const MAX_PAGE_IMAGES: usize = 64;

/// The `<img>`s of a page that could hold its text: not hidden, not inside a link (a banner,
/// a cover), navigation, a header, a footer or an element whose id or class says so; with a
/// source a crawl can fetch (lazy loaders' `data-src`/`data-original` first).
fn page_images(doc: &Html, base: &Url) -> Vec<crate::ocr::PageImage> {
    static IMG: LazyLock<Selector> = LazyLock::new(|| Selector::parse("img").expect("selector"));
    let mut out = Vec::new();
    for img in doc.select(&IMG) {
        if out.len() >= MAX_PAGE_IMAGES {
            break;
        }
        let el = img.value();
        let boxed_in = std::iter::once(img)
            .chain(img.ancestors().filter_map(scraper::ElementRef::wrap))
            .any(|a| {
                let e = a.value();
                is_hidden(e)
                    || matches!(e.name(), "a" | "nav" | "header" | "footer" | "aside")
                    || e.id().is_some_and(|id| NEGATIVE.is_match(id))
                    || e.classes().any(|c| NEGATIVE.is_match(c))
            });
        if boxed_in {
            continue;
        }
        let Some(url) = ["data-src", "data-original", "src"]
            .iter()
            .filter_map(|a| el.attr(a))
            .map(str::trim)
            .find(|v| !v.is_empty() && !v.starts_with("data:"))
            .and_then(|v| base.join(v).ok())
            .filter(|u| match u.scheme() {
                "http" | "https" => true,
                "file" => base.scheme() == "file",
                _ => false,
            })
        else {
            continue;
        };
        let side = |a: &str| {
            el.attr(a)
                .and_then(|v| v.trim().trim_end_matches("px").parse::<u32>().ok())
        };
        out.push(crate::ocr::PageImage {
            url,
            alt: el
                .attr("alt")
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            width: side("width"),
            height: side("height"),
        });
    }
    out
}

/// Extracts with the built-in rules only.
pub fn extract(html: &str, url: &Url) -> Extracted {
    static DEFAULT: LazyLock<Extractor> = LazyLock::new(Extractor::default);
    DEFAULT.extract(html, url)
}

/// The extractor with a site's rules compiled. Reusable and `Send + Sync`.
#[derive(Debug, Default)]
pub struct Extractor {
    selectors: Vec<(String, Selector)>,
    limits: HtmlLimits,
    scripts: js::ScriptSettings,
}

impl Extractor {
    /// Compiles a site's rules.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidPattern`] for a selector that does not parse.
    pub fn new(settings: &ExtractSettings) -> Result<Self> {
        let selectors = settings
            .content_selectors
            .iter()
            .map(|s| {
                Selector::parse(s)
                    .map(|sel| (s.clone(), sel))
                    .map_err(|e| Error::InvalidPattern {
                        what: "content selector",
                        pattern: s.clone(),
                        reason: e.to_string(),
                    })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            selectors,
            limits: settings.limits.clone(),
            scripts: settings.scripts.clone(),
        })
    }

    /// Extracts from a decoded page fetched from `url` (links are resolved against it, or
    /// against `<base href>`).
    pub fn extract(&self, html: &str, url: &Url) -> Extracted {
        self.extract_by(html, url, None)
    }

    /// [`Extractor::extract`], giving up on the rest of the page at `deadline`
    /// ([`Extracted::exceeded`] says so). Linear in the page whatever its markup.
    pub fn extract_by(&self, html: &str, url: &Url, deadline: Option<Instant>) -> Extracted {
        self.extract_with(html, url, deadline, &PageAssets::default())
    }

    /// [`Extractor::extract_by`] with what the fetch brought along: the text drawn on the
    /// page's canvases in a browser, the glyph sprites its CSS names.
    pub fn extract_with(
        &self,
        html: &str,
        url: &Url,
        deadline: Option<Instant>,
        assets: &PageAssets,
    ) -> Extracted {
        self.extract_inner(html, url, deadline, assets, true)
    }

    fn extract_inner(
        &self,
        html: &str,
        url: &Url,
        deadline: Option<Instant>,
        assets: &PageAssets,
        run_scripts: bool,
    ) -> Extracted {
        let parsed = parse_document(html, &self.limits, deadline);
        let mut doc = parsed.html;
        // The page's canvases, as the sandbox's `document` shows them; before their drawings
        // replace them, and before CSS detaches any, so that they are numbered as the browser
        // numbers them.
        // Only a page whose markup names a canvas is walked for them: most pages have none.
        let canvases = if has_canvas(html) {
            canvas_elements(&doc)
        } else {
            Vec::new()
        };
        // Drawn canvases become their text, where they sit; before the CSS, which may hide or
        // move them.
        let drawn = if assets.draw_calls.is_empty() {
            canvas::Inserted::default()
        } else {
            canvas::insert(&mut doc, &canvas::order(&assets.draw_calls))
        };
        let base = base_url(&doc, url);
        // The page's style, gathered once for both of its readers below (neither changes a
        // `<style>` element).
        let style = css::style_text(&doc);
        // Empty elements showing a glyph of a sprite become its character.
        let sprites = sprite::apply_style(&mut doc, &base, &assets.sprites, &style);
        // The text in the order the page's own CSS shows it, without what it hides.
        css::apply_style(&mut doc, &style, deadline);
        let doc = doc;
        let walk = Walk::run(&doc, !self.selectors.is_empty());
        let head = head_info(&doc, &base);

        let mut method = Method::Density;
        let mut chosen = None;
        for (text, sel) in &self.selectors {
            let hit = doc
                .select(sel)
                .filter_map(|el| walk.by_node.get(&el.id()).copied())
                .find(|&i| walk.els[i].chars > 0);
            if let Some(i) = hit {
                chosen = Some(i);
                method = Method::Selector(text.clone());
                break;
            }
        }
        let chosen = chosen.or_else(|| walk.best_candidate());
        let mut paragraphs = chosen.map(|c| walk.text_of(c)).unwrap_or_default();
        let mut main_chars: usize = paragraphs.iter().map(|p| p.chars().count()).sum();
        let markup_chars = main_chars;
        let mut container = chosen.map(|c| walk.els[c].describe());
        let mut container_mark = chosen.and_then(|c| walk.els[c].mark.clone());

        // Text an inline script writes wins when it is more than the markup's: the page
        // then serves an empty container (or a decoy) and fills it by script.
        let written = script::scan_by(&walk.inline_scripts, deadline);
        let mut source = TextSource::Markup;
        let mut script_chars = 0;
        if !written.html.is_empty() {
            let from_script = self.fragment_paragraphs(&written.html, deadline);
            script_chars = from_script.iter().map(|p| p.chars().count()).sum();
            if script_chars > main_chars {
                paragraphs = from_script;
                main_chars = script_chars;
                source = TextSource::Script;
                method = Method::Script;
                container = Some("script".to_owned());
                container_mark = None;
            }
        }
        // A page that holds no chapter of its own but has scripts: run them, for the text they
        // build at load time (decoded, computed, reversed), which the literal scanner reads as
        // it is written, or not at all. What they write wins over the scanner's reading when
        // it is at least half as long: it is what a browser shows.
        if run_scripts
            && (main_chars < ENDPOINT_BELOW_CHARS
                && source == TextSource::Markup
                && !walk.script_list.is_empty()
                || source == TextSource::Script && markup_chars < ENDPOINT_BELOW_CHARS)
        {
            let elements = if canvases.is_empty() {
                std::borrow::Cow::Borrowed(&walk.page_elements)
            } else {
                let mut all = walk.page_elements.clone();
                all.extend(canvases);
                std::borrow::Cow::Owned(all)
            };
            let evaluated = js::evaluate(&walk.script_list, &elements, &self.scripts, deadline);
            // The scripts drew on canvases: the page is read again with the drawing in place
            // of its canvases (their scripts not run again).
            if !evaluated.drawn.is_empty() && assets.draw_calls.is_empty() {
                let with_drawing = PageAssets {
                    draw_calls: evaluated.drawn,
                    sprites: assets.sprites.clone(),
                };
                let again = self.extract_inner(html, url, deadline, &with_drawing, false);
                if again.text_chars() > main_chars {
                    return again;
                }
            }
            if !evaluated.html.is_empty() {
                let from_js = self.fragment_paragraphs(&evaluated.html, deadline);
                let js_chars: usize = from_js.iter().map(|p| p.chars().count()).sum();
                if js_chars > markup_chars && js_chars * 2 >= script_chars {
                    paragraphs = from_js;
                    main_chars = js_chars;
                    script_chars = script_chars.max(js_chars);
                    source = TextSource::Script;
                    method = Method::Script;
                    container = Some("script".to_owned());
                    container_mark = None;
                }
            }
        }
        // Most of the text read from canvases or a sprite: that is where it came from.
        if source == TextSource::Markup && main_chars > 0 {
            if drawn.chars * 2 >= main_chars {
                source = TextSource::Canvas;
            } else if sprites.replaced * 2 >= main_chars {
                source = TextSource::Sprite;
            }
        }
        // Same-site ones, or for a page read from a file, files (read from beside it only).
        let sprite_sources: Vec<Url> = sprites
            .wanted
            .into_iter()
            .filter(|u| same_site(u, url) || u.scheme() == "file" && url.scheme() == "file")
            .take(sprite::MAX_SPRITES)
            .collect();
        let content_endpoint = if main_chars < ENDPOINT_BELOW_CHARS {
            written
                .endpoints
                .iter()
                .filter_map(|e| links::resolve(&base, e))
                .find(|e| same_site(e, url))
        } else {
            None
        };

        let links = resolve_links(&walk.links, &base);
        let unfinished =
            paragraphs.iter().any(|p| p.contains("本章未完")) || walk.unfinished_marker;
        let (next_page, next_chapter) = navigation(&walk.links, &base, url, unfinished);
        let redirect_to = script_redirect(&walk.scripts, &base).or(head.refresh);

        let chapter_links: Vec<&RawLink> = walk
            .links
            .iter()
            .filter(|l| is_chapter_heading(&l.text))
            .collect();
        let chapter_link_chars: usize = chapter_links.iter().map(|l| l.text.chars().count()).sum();
        let kind = if ingest::challenge::is_challenge(html, head.title.as_deref(), main_chars) {
            PageKind::Challenge
        } else if redirect_to.is_some() && walk.text_chars() + script_chars < 200 {
            PageKind::Redirect
        } else if chapter_links.len() >= 5 && main_chars < chapter_link_chars {
            PageKind::Index
        } else if main_chars == 0 {
            PageKind::Empty
        } else {
            PageKind::Content
        };
        if matches!(kind, PageKind::Challenge | PageKind::Redirect) {
            paragraphs.clear();
            method = Method::None;
        }
        let redirect_to = redirect_to.filter(|_| kind == PageKind::Redirect);
        if chosen.is_none() && source == TextSource::Markup {
            method = Method::None;
        }
        let content_endpoint =
            content_endpoint.filter(|_| matches!(kind, PageKind::Empty | PageKind::Content));

        let font_sources = if paragraphs.iter().any(|p| fontmap::has_private_use(p)) {
            page_font_sources(&doc, &base)
        } else {
            Vec::new()
        };

        let images = page_images(&doc, &base);
        let headings = walk.headings();
        let chapter_title = headings
            .iter()
            .find(|h| is_chapter_heading(h))
            .cloned()
            .or_else(|| {
                let title = head.title.as_deref()?;
                let first = title.split(['_', '|', '-', '–', '—']).next()?.trim();
                is_chapter_heading(first).then(|| first.to_owned())
            });

        Extracted {
            kind,
            title: head.title,
            chapter_title,
            headings,
            paragraphs,
            next_page,
            next_chapter,
            redirect_to,
            links,
            container,
            container_mark,
            inline_script_bytes: walk.inline_scripts.len(),
            external_scripts: walk.external_scripts,
            method,
            source,
            content_endpoint,
            font_sources,
            sprite_sources,
            images,
            nofollow: head.nofollow,
            noindex: head.noindex,
            exceeded: parsed.exceeded,
        }
    }
}

impl Extractor {
    /// The main text of an HTML fragment (what a script writes, or an endpoint returns),
    /// extracted as a page's is: parsed within the limits, scored, cleaned of ad lines.
    pub fn fragment_paragraphs(&self, fragment: &str, deadline: Option<Instant>) -> Vec<String> {
        let html = format!("<html><body><div id=\"content\">{fragment}</div></body></html>");
        let parsed = parse_document(&html, &self.limits, deadline);
        let walk = Walk::run(&parsed.html, false);
        walk.best_candidate()
            .map(|c| walk.text_of(c))
            .unwrap_or_default()
    }
}

/// Whether `target` is on the site of `page`: the same host, or the same registrable domain
/// (`api.example.com` for `www.example.com`), over http(s).
fn same_site(target: &Url, page: &Url) -> bool {
    if !matches!(target.scheme(), "http" | "https") {
        return false;
    }
    match (target.host_str(), page.host_str()) {
        (Some(t), Some(p)) => {
            t.eq_ignore_ascii_case(p)
                || links::registrable_domain(t) == links::registrable_domain(p)
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// The walk

/// An element of the body, in document order (a parent always precedes its children).
struct El {
    parent: Option<usize>,
    tag: String,
    id: Option<String>,
    class: Option<String>,
    /// Its [`RENDER_MARK`] attribute, on a rendered page.
    mark: Option<String>,
    /// Navigation-like id/class and no content-like one.
    negative: bool,
    /// Multiplier for candidate selection.
    weight: f64,
    /// Non-whitespace characters of text in the subtree.
    chars: usize,
    /// Of those, characters inside links.
    link_chars: usize,
    /// Accumulated block scores.
    score: f64,
}

impl El {
    fn describe(&self) -> String {
        let mut s = self.tag.clone();
        if let Some(id) = &self.id {
            s.push('#');
            s.push_str(id);
        } else if let Some(class) = &self.class
            && let Some(first) = class.split_whitespace().next()
        {
            s.push('.');
            s.push_str(first);
        }
        s
    }

    fn link_density(&self) -> f64 {
        if self.chars == 0 {
            0.0
        } else {
            self.link_chars as f64 / self.chars as f64
        }
    }
}

struct Block {
    text: String,
    chars: usize,
    link_chars: usize,
    owner: usize,
    heading: bool,
}

struct RawLink {
    href: String,
    text: String,
    nofollow: bool,
    rel_next: bool,
}

#[derive(Default)]
struct Walk {
    els: Vec<El>,
    blocks: Vec<Block>,
    links: Vec<RawLink>,
    scripts: String,
    /// Inline script source, whole (up to [`script::MAX_SCRIPT_BYTES`]), for [`script::scan`].
    inline_scripts: String,
    /// The inline scripts one by one (within the same bound), for [`js::evaluate`].
    script_list: Vec<String>,
    /// The body's elements as the sandbox's `document` shows them (at most
    /// [`MAX_PAGE_ELEMENTS`]).
    page_elements: Vec<js::PageElement>,
    by_node: std::collections::HashMap<ego_tree::NodeId, usize>,
    unfinished_marker: bool,
    /// `<script src>` elements.
    external_scripts: usize,
}

#[derive(Default)]
struct Pending {
    text: String,
    chars: usize,
    link_chars: usize,
    space: bool,
}

/// Whether `html` may hold a `<canvas>` element (its tag name in any case).
fn has_canvas(html: &str) -> bool {
    html.as_bytes()
        .windows(7)
        .any(|w| w[0] == b'<' && w[1..].eq_ignore_ascii_case(b"canvas"))
}

/// The `<canvas>` elements of a page in document order, numbered, as the sandbox's `document`
/// shows them (at most [`MAX_PAGE_ELEMENTS`]).
fn canvas_elements(doc: &Html) -> Vec<js::PageElement> {
    doc.tree
        .root()
        .descendants()
        .filter_map(|n| match n.value() {
            Node::Element(e) if e.name() == "canvas" => Some(e),
            _ => None,
        })
        .take(MAX_PAGE_ELEMENTS)
        .enumerate()
        .map(|(i, e)| js::PageElement {
            tag: "canvas".to_owned(),
            id: e.id().map(str::to_owned),
            classes: e.classes().map(str::to_owned).collect(),
            canvas: Some(i),
        })
        .collect()
}

/// Elements of a page the sandbox's `document` knows at most.
const MAX_PAGE_ELEMENTS: usize = 10_000;

/// Tags whose content is never text.
fn is_skipped(tag: &str) -> bool {
    matches!(
        tag,
        "head"
            | "script"
            | "style"
            | "noscript"
            | "template"
            | "iframe"
            | "svg"
            | "math"
            | "canvas"
            | "object"
            | "embed"
            | "select"
            | "option"
            | "textarea"
            | "button"
            | "input"
            | "audio"
            | "video"
    )
}

/// Tags that end a text block.
fn is_block(tag: &str) -> bool {
    matches!(
        tag,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "caption"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "li"
            | "main"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
    )
}

fn is_heading(tag: &str) -> bool {
    matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(^|[-_\s])(nav|navbar|navigation|menu|footer|foot|header|top|topbar|sidebar|side|aside|comment|comments|ads?|advert|advertisement|banner|gg|sponsor|share|social|related|recommend|tuijian|tj|listtj|hot|rank|list|chapterlist|booklist|mulu|toc|breadcrumb|crumbs?|copyright|login|search|tags?|pager|pagination|page_?nav|bottom|bottem|links?|footer_link|friend)([-_\s0-9]|$)",
    )
    .expect("negative pattern")
});

static POSITIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(content|article|chapter|txt|text|read|entry|post|story|novel|nr\d?|zw|yd_?text)",
    )
    .expect("positive pattern")
});

/// Ids and classes novel sites use for the chapter text.
fn known_content_name(name: &str) -> bool {
    const KNOWN: &[&str] = &[
        "content",
        "chaptercontent",
        "chapter-content",
        "chapter_content",
        "booktxt",
        "booktext",
        "htmlcontent",
        "nr1",
        "nr_content",
        "txt",
        "txtcontent",
        "textcontent",
        "acontent",
        "articlecontent",
        "article-content",
        "read-content",
        "readcontent",
        "chapter_body",
        "contentbox",
        "txtnav",
        "novelcontent",
        "zjneirong",
    ];
    KNOWN.iter().any(|k| k.eq_ignore_ascii_case(name))
}

fn is_hidden(el: &scraper::node::Element) -> bool {
    if el.attr("hidden").is_some()
        || el
            .attr("aria-hidden")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return true;
    }
    el.attr("style").is_some_and(|style| {
        let s: String = style
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        s.contains("display:none") || s.contains("visibility:hidden")
    })
}

impl Walk {
    fn run(doc: &Html, map_nodes: bool) -> Self {
        let mut w = Walk::default();
        let mut open: Vec<Option<usize>> = Vec::new(); // None for skipped or non-tracked
        let mut blocks_open: Vec<usize> = Vec::new();
        let mut skip_depth = 0usize;
        let mut in_script = false;
        // Whether the current inline script already has an entry in `script_list`.
        let mut script_open = false;
        let mut link_stack: Vec<usize> = Vec::new();
        let mut heading_depth = 0usize;
        let mut pending = Pending::default();

        for edge in doc.tree.root().traverse() {
            match edge {
                Edge::Open(node) => match node.value() {
                    Node::Element(el) => {
                        let tag = el.name();
                        if skip_depth > 0 || is_skipped(tag) || is_hidden(el) {
                            if skip_depth == 0 && tag == "script" {
                                in_script = true;
                                w.external_scripts += usize::from(el.attr("src").is_some());
                            }
                            skip_depth += 1;
                            open.push(None);
                            continue;
                        }
                        if tag == "br" || tag == "hr" || is_block(tag) {
                            w.flush(&mut pending, &blocks_open, heading_depth > 0);
                        }
                        if tag == "br" || tag == "hr" {
                            open.push(None);
                            continue;
                        }
                        let names = format!(
                            "{} {}",
                            el.id().unwrap_or(""),
                            el.attr("class").unwrap_or("")
                        );
                        let positive = POSITIVE.is_match(&names);
                        let negative = !positive && NEGATIVE.is_match(&names);
                        let known = el.id().is_some_and(known_content_name)
                            || el.classes().any(known_content_name);
                        let weight = if known {
                            1.5
                        } else if negative {
                            0.3
                        } else if positive {
                            1.2
                        } else {
                            1.0
                        };
                        if w.page_elements.len() < MAX_PAGE_ELEMENTS
                            && (el.id().is_some() || el.attr("class").is_some() || tag == "body")
                        {
                            w.page_elements.push(js::PageElement {
                                tag: tag.to_owned(),
                                id: el.id().map(str::to_owned),
                                classes: el.classes().map(str::to_owned).collect(),
                                canvas: None,
                            });
                        }
                        let idx = w.els.len();
                        w.els.push(El {
                            parent: open.iter().rev().flatten().next().copied(),
                            tag: tag.to_owned(),
                            id: el.id().map(str::to_owned),
                            class: el.attr("class").map(str::to_owned),
                            mark: el.attr(RENDER_MARK).map(str::to_owned),
                            negative,
                            weight,
                            chars: 0,
                            link_chars: 0,
                            score: 0.0,
                        });
                        if map_nodes {
                            w.by_node.insert(node.id(), idx);
                        }
                        open.push(Some(idx));
                        if is_block(tag) {
                            blocks_open.push(idx);
                        }
                        if is_heading(tag) {
                            heading_depth += 1;
                        }
                        if tag == "a" {
                            let rel = el.attr("rel").unwrap_or("").to_ascii_lowercase();
                            w.links.push(RawLink {
                                href: el.attr("href").unwrap_or("").to_owned(),
                                text: String::new(),
                                nofollow: rel.split_whitespace().any(|r| r == "nofollow"),
                                rel_next: rel.split_whitespace().any(|r| r == "next"),
                            });
                            link_stack.push(w.links.len() - 1);
                        }
                    }
                    Node::Text(text) => {
                        if in_script {
                            if w.scripts.len() < 16 * 1024 {
                                w.scripts.push_str(text);
                                w.scripts.push('\n');
                            }
                            if w.inline_scripts.len() < script::MAX_SCRIPT_BYTES {
                                w.inline_scripts.push_str(text);
                                match w.script_list.last_mut() {
                                    Some(s) if script_open => s.push_str(text),
                                    _ => w.script_list.push(text.to_string()),
                                }
                                script_open = true;
                            }
                            continue;
                        }
                        if skip_depth > 0 {
                            continue;
                        }
                        let in_link = !link_stack.is_empty();
                        let added = push_text(&mut pending, text);
                        if in_link {
                            pending.link_chars += added;
                            if let Some(&l) = link_stack.last() {
                                let link = &mut w.links[l];
                                if link.text.len() < 200 {
                                    if !link.text.is_empty()
                                        && text.starts_with(char::is_whitespace)
                                    {
                                        link.text.push(' ');
                                    }
                                    link.text.push_str(&collapse(text));
                                }
                            }
                        }
                    }
                    _ => {}
                },
                Edge::Close(node) => {
                    let Node::Element(el) = node.value() else {
                        continue;
                    };
                    let Some(entry) = open.pop() else { continue };
                    let tag = el.name();
                    let Some(idx) = entry else {
                        if skip_depth > 0 {
                            skip_depth -= 1;
                            if skip_depth == 0 && in_script {
                                in_script = false;
                                script_open = false;
                                // Ends what the script left open (a string, an expression).
                                w.inline_scripts.push_str("\n;\n");
                            }
                        }
                        continue;
                    };
                    if is_block(tag) {
                        w.flush(&mut pending, &blocks_open, heading_depth > 0);
                        blocks_open.pop();
                    }
                    if is_heading(tag) {
                        heading_depth -= 1;
                    }
                    if tag == "a" {
                        link_stack.pop();
                    }
                    let (chars, link_chars) = (w.els[idx].chars, w.els[idx].link_chars);
                    if let Some(p) = w.els[idx].parent {
                        w.els[p].chars += chars;
                        w.els[p].link_chars += link_chars;
                    }
                }
            }
        }
        w.flush(&mut pending, &blocks_open, false);
        w
    }

    fn flush(&mut self, pending: &mut Pending, blocks_open: &[usize], heading: bool) {
        let taken = std::mem::take(pending);
        if taken.chars == 0 {
            return;
        }
        let Some(&owner) = blocks_open.last() else {
            return;
        };
        let block = Block {
            text: taken.text,
            chars: taken.chars,
            link_chars: taken.link_chars.min(taken.chars),
            owner,
            heading,
        };
        if block.text.contains("本章未完") {
            self.unfinished_marker = true;
        }
        // Subtree sums are completed on close; the owner's own text is counted here.
        self.els[owner].chars += block.chars;
        self.els[owner].link_chars += block.link_chars;
        let score = block_score(&block);
        if score > 0.0 {
            let mut at = Some(owner);
            for share in [1.0, 1.0, 0.5] {
                let Some(i) = at else { break };
                self.els[i].score += score * share;
                at = self.els[i].parent;
            }
        }
        self.blocks.push(block);
    }

    fn best_candidate(&self) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (i, el) in self.els.iter().enumerate() {
            if el.score <= 0.0 {
                continue;
            }
            let ld = el.link_density();
            let s = el.score * (1.0 - ld) * el.weight;
            // `>=` so that on a tie the later, deeper element wins.
            if best.is_none_or(|(b, _)| s >= b) {
                best = Some((s, i));
            }
        }
        best.map(|(_, i)| i)
    }

    /// Whether `el` is `ancestor` or inside it, and whether a navigation-like element lies
    /// between them.
    fn within(&self, el: usize, ancestor: usize) -> Option<bool> {
        let mut at = Some(el);
        let mut negative = false;
        while let Some(i) = at {
            if i == ancestor {
                return Some(negative);
            }
            if i < ancestor {
                return None;
            }
            negative |= self.els[i].negative;
            at = self.els[i].parent;
        }
        None
    }

    fn text_of(&self, container: usize) -> Vec<String> {
        self.blocks
            .iter()
            .filter(|b| b.owner >= container && self.within(b.owner, container) == Some(false))
            .filter(|b| !b.heading && b.link_chars * 2 <= b.chars)
            .filter_map(|b| clean_line(&b.text))
            .collect()
    }

    /// Characters of text on the whole page, links included.
    fn text_chars(&self) -> usize {
        self.blocks.iter().map(|b| b.chars).sum()
    }

    fn headings(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.blocks
            .iter()
            .filter(|b| b.heading && matches!(self.els[b.owner].tag.as_str(), "h1" | "h2" | "h3"))
            .filter(|b| seen.insert(b.text.clone()))
            .take(20)
            .map(|b| b.text.clone())
            .collect()
    }
}

/// Appends `text` with whitespace runs collapsed; returns the non-whitespace chars added.
fn push_text(p: &mut Pending, text: &str) -> usize {
    let mut added = 0;
    for c in text.chars() {
        if c.is_whitespace() || c == '\u{feff}' || c == '\u{200b}' {
            p.space = true;
        } else {
            if p.space && !p.text.is_empty() {
                p.text.push(' ');
            }
            p.space = false;
            p.text.push(c);
            added += 1;
        }
    }
    p.chars += added;
    added
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_sentence_punct(c: char) -> bool {
    matches!(
        c,
        '。' | '，'
            | '！'
            | '？'
            | '；'
            | '：'
            | '、'
            | '…'
            | '“'
            | '”'
            | '.'
            | ','
            | '!'
            | '?'
            | ';'
            | ':'
            | '"'
    )
}

fn block_score(b: &Block) -> f64 {
    if b.link_chars * 2 > b.chars {
        return 0.0;
    }
    let own = (b.chars - b.link_chars) as f64;
    let ld = b.link_chars as f64 / b.chars as f64;
    let punct = b.text.chars().filter(|&c| is_sentence_punct(c)).count();
    let weight = if punct == 0 && b.chars < 25 { 0.3 } else { 1.0 };
    own * (1.0 - ld) * weight
}

static JUNK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)(https?://|www\.|[a-z0-9-]\.(com|net|org|cc|la|info|cn|me|io|co|tw|xyz|top|vip)(?-u:\b)
        |本章未完|点击下一页|继续阅读|一秒记住|记住本站|本站地址|本站提示|手机用户请|手机阅读|请收藏|加入书签|章节错误|点此举报
        |免费阅读|全文阅读|最新章节|首发(域名|网址|站)|笔趣阁|小说网|txt下载|本章完|求收藏|求推荐|求月票
        |更新时间|字数[:：]|^\s*作者[:：]|^\s*\d{4}[-/年]\d{1,2}[-/月]\d{1,2}
        |^\s*(advertisement|sponsored|read\ more|next\ chapter|previous\ chapter|table\ of\ contents)\s*$)",
    )
    .expect("junk pattern")
});

/// A bracketed aside of at most 40 characters: `『笔趣阁 m.example.com』`, `【记住本站】`.
static ASIDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[『【〖（(「\[]([^』】〗）)」\]]{1,40})[』】〗）)」\]]").expect("aside pattern")
});

/// Short lines that piracy sites inject into chapter text (site address, "remember us",
/// "continue on the next page", date and author lines). Long paragraphs are never dropped.
/// The domain's word boundary is ASCII's: a Han character right after `.com` ends the
/// address (Unicode's would count it as a letter of the word), and it lets the regex run
/// as a DFA instead of a backtracker (which took a twentieth of a crawl's CPU).
fn is_junk_line(text: &str) -> bool {
    text.chars().count() <= 80 && JUNK.is_match(text)
}

/// A text block without the site's watermarks: bracketed asides that are ad lines are cut
/// out of it, and what is left is dropped if it is an ad line itself.
fn clean_line(text: &str) -> Option<String> {
    let cleaned = if ASIDE.is_match(text) {
        let out = ASIDE.replace_all(text, |c: &regex::Captures<'_>| {
            if is_junk_line(&c[1]) {
                String::new()
            } else {
                c[0].to_owned()
            }
        });
        out.trim().to_owned()
    } else {
        text.to_owned()
    };
    (!cleaned.is_empty() && !is_junk_line(&cleaned)).then_some(cleaned)
}

static CHAPTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(第\s*[0-9０-９一二三四五六七八九十百千万零〇两]+\s*[章回节卷集部篇幕话]|chapter\s+([0-9]+|[ivxlcdm]+)\b|卷\s*[0-9一二三四五六七八九十]+)",
    )
    .expect("chapter pattern")
});

/// Whether a heading or link text looks like a chapter title.
pub fn is_chapter_heading(text: &str) -> bool {
    CHAPTER.is_match(text)
}

// ---------------------------------------------------------------------------------------------
// Head, links, navigation

#[derive(Default)]
struct HeadInfo {
    title: Option<String>,
    refresh: Option<Url>,
    nofollow: bool,
    noindex: bool,
}

static TITLE: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("title").expect("title selector"));
static META: LazyLock<Selector> = LazyLock::new(|| Selector::parse("meta").expect("meta selector"));
static BASE: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("base[href]").expect("base selector"));

fn base_url(doc: &Html, url: &Url) -> Url {
    doc.select(&BASE)
        .next()
        .and_then(|b| b.attr("href"))
        .and_then(|h| url.join(h).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .unwrap_or_else(|| url.clone())
}

fn head_info(doc: &Html, base: &Url) -> HeadInfo {
    let mut info = HeadInfo {
        title: doc
            .select(&TITLE)
            .next()
            .map(|t| collapse(&t.text().collect::<String>()))
            .filter(|t| !t.is_empty()),
        ..HeadInfo::default()
    };
    for meta in doc.select(&META) {
        let name = meta
            .attr("name")
            .or(meta.attr("property"))
            .unwrap_or("")
            .to_ascii_lowercase();
        let content = meta.attr("content").unwrap_or("");
        if name == "robots" {
            let c = content.to_ascii_lowercase();
            info.nofollow |= c.contains("nofollow") || c.contains("none");
            info.noindex |= c.contains("noindex") || c.contains("none");
        } else if name == "og:title" && info.title.is_none() {
            info.title = Some(collapse(content)).filter(|t| !t.is_empty());
        } else if meta
            .attr("http-equiv")
            .is_some_and(|h| h.eq_ignore_ascii_case("refresh"))
        {
            info.refresh = refresh_target(content, base);
        }
    }
    info
}

/// The target of `<meta http-equiv="refresh" content="0; url=...">` if it fires within 10 s.
fn refresh_target(content: &str, base: &Url) -> Option<Url> {
    let (delay, rest) = content.split_once([';', ','])?;
    if delay.trim().parse::<f64>().ok()? > 10.0 {
        return None;
    }
    let rest = rest.trim();
    let target = rest
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("url="))
        .map_or(rest, |_| &rest[4..]);
    links::resolve(base, target.trim().trim_matches(['"', '\'']))
}

static SCRIPT_REDIRECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?:\blocation(?:\.href)?\s*=\s*|\blocation\.(?:replace|assign)\(\s*)["']([^"']{1,500})["']"#,
    )
    .expect("script redirect pattern")
});

fn script_redirect(scripts: &str, base: &Url) -> Option<Url> {
    SCRIPT_REDIRECT
        .captures(scripts)
        .and_then(|c| links::resolve(base, c.get(1)?.as_str()))
}

fn resolve_links(raw: &[RawLink], base: &Url) -> Vec<Link> {
    let mut seen = HashSet::new();
    raw.iter()
        .filter_map(|l| {
            let url = links::resolve(base, &l.href)?;
            seen.insert(url.clone()).then(|| Link {
                url,
                text: l.text.clone(),
                nofollow: l.nofollow,
            })
        })
        .collect()
}

static NEXT_PAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(下一?页|下一頁|下頁|继续阅读|繼續閱讀|next\s*page|next)$")
        .expect("next page pattern")
});

static NEXT_CHAPTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(下一章|下章|下一章节|下一章節|下一回|next\s*chapter)$")
        .expect("next chapter pattern")
});

/// Finds the "next page" (continuation of this chapter) and "next chapter" links.
///
/// A "下一页" link is the chapter's continuation when its URL continues this one
/// (`123.html` → `123_2.html`, `?page=2`) or when the text says the chapter goes on
/// ("本章未完"); many sites label the next *chapter* "下一页" too, and then it is that.
fn navigation(
    raw: &[RawLink],
    base: &Url,
    current: &Url,
    unfinished: bool,
) -> (Option<Url>, Option<Url>) {
    let mut next_page = None;
    let mut next_chapter = None;
    let mut page_candidates = Vec::new();
    for l in raw {
        let text: String = l
            .text
            .chars()
            .filter(|c| {
                !c.is_whitespace()
                    && !matches!(
                        c,
                        '>' | '»'
                            | '→'
                            | '›'
                            | '<'
                            | '«'
                            | '←'
                            | '‹'
                            | '-'
                            | '['
                            | ']'
                            | '【'
                            | '】'
                    )
            })
            .collect();
        let Some(target) = links::resolve(base, &l.href) else {
            continue;
        };
        if target == *current {
            continue;
        }
        if NEXT_CHAPTER.is_match(&text) {
            next_chapter.get_or_insert(target);
        } else if NEXT_PAGE.is_match(&text) || l.rel_next {
            page_candidates.push(target);
        }
    }
    for target in page_candidates {
        if next_page.is_none() && (is_continuation(current, &target) || unfinished) {
            next_page = Some(target);
        } else if next_chapter.is_none() {
            next_chapter = Some(target);
        }
    }
    (next_page, next_chapter)
}

static PAGE_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[_-]\d{1,3}$").expect("page suffix pattern"));
static CONTINUATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[_/-]\d{1,3}$").expect("continuation pattern"));

/// Whether `target` is a later page of the same document as `current`.
pub fn is_continuation(current: &Url, target: &Url) -> bool {
    if current.host_str() != target.host_str() {
        return false;
    }
    let stem = |u: &Url| -> String {
        let p = u.path().trim_end_matches('/');
        match p.rsplit_once('.') {
            Some((s, ext)) if !ext.contains('/') && ext.len() <= 5 => s.to_owned(),
            _ => p.to_owned(),
        }
    };
    let (cs, ts) = (stem(current), stem(target));
    if cs == ts {
        // Same path: a page-like query parameter changes.
        let page_param = |u: &Url| {
            u.query_pairs()
                .find(|(k, _)| {
                    matches!(k.as_ref(), "page" | "p" | "pn" | "pageno" | "pg" | "index")
                })
                .map(|(_, v)| v.into_owned())
        };
        return page_param(target).is_some_and(|p| {
            p.chars().all(|c| c.is_ascii_digit()) && Some(p.clone()) != page_param(current)
        });
    }
    let base = PAGE_SUFFIX.replace(&cs, "");
    ts.strip_prefix(base.as_ref())
        .is_some_and(|rest| CONTINUATION.is_match(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    const PARA: [&str; 3] = [
        "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。",
        "及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下。",
        "后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。",
    ];

    fn page(body: &str) -> String {
        format!(
            "<html><head><title>第一回 宴桃园豪杰三结义_三国演义_某某小说网</title></head><body>{body}</body></html>"
        )
    }

    const NAV: &str = r#"<div class="nav"><ul><li><a href="/">首页</a></li><li><a href="/xuanhuan/">玄幻小说</a></li><li><a href="/wuxia/">武侠小说</a></li><li><a href="/top/">排行榜</a></li></ul></div>"#;
    const FOOT: &str = r#"<div id="footer"><p>本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传，让更多读者欣赏。</p><p>Copyright © 2024 某某小说网 All Rights Reserved.</p></div>"#;

    #[test]
    fn div_content_with_br_layout() {
        let body = format!(
            r#"{NAV}<div class="box"><div class="bookname"><h1>第一回 宴桃园豪杰三结义</h1><div class="bottem1"><a href="/b/1/">章节目录</a><a href="/b/1/2.html">下一章</a></div></div>
            <div id="content">&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br />&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br />　　{}<br /><br />天才一秒记住本站地址：www.biquge.example。手机版阅读网址：m.biquge.example</div></div>{FOOT}"#,
            PARA[0], PARA[1], PARA[2]
        );
        let e = extract(&page(&body), &url("http://biquge.example/b/1/1.html"));
        assert_eq!(e.kind, PageKind::Content);
        assert_eq!(e.paragraphs, PARA);
        assert_eq!(e.container.as_deref(), Some("div#content"));
        assert_eq!(e.chapter_title.as_deref(), Some("第一回 宴桃园豪杰三结义"));
        assert_eq!(
            e.next_chapter,
            Some(url("http://biquge.example/b/1/2.html"))
        );
        assert_eq!(e.next_page, None);
        assert!(
            e.links
                .iter()
                .any(|l| l.url.as_str() == "http://biquge.example/top/")
        );
    }

    #[test]
    fn p_article_layout_with_inline_ad_and_hidden_junk() {
        let body = format!(
            r#"{NAV}<article class="post"><h2>Chapter 1</h2><p>{}</p><div class="ads"><p>广告：点击领取红包，每天最高可领一百元！</p></div><p>{}<span style="display:none">乱码防盗</span></p><p>{}</p></article><aside class="sidebar"><h3>热门小说</h3><ul><li><a href="/a">斗破苍穹</a></li><li><a href="/b">遮天</a></li></ul></aside>{FOOT}"#,
            PARA[0], PARA[1], PARA[2]
        );
        let e = extract(&page(&body), &url("http://x.example/1"));
        assert_eq!(e.paragraphs, PARA);
        assert_eq!(e.headings, ["Chapter 1", "热门小说"]);
        assert_eq!(e.chapter_title.as_deref(), Some("Chapter 1"));
    }

    #[test]
    fn table_layout() {
        let body = format!(
            r#"<table width="100%"><tr><td colspan="2">{NAV}</td></tr><tr><td class="left"><a href="/1">第一回</a><br><a href="/2">第二回</a></td><td>{}<br><br>{}<br><br>{}</td></tr><tr><td colspan="2"><a href="/prev">上一页</a> | <a href="/b/">目录</a> | <a href="/next">下一页</a></td></tr></table>"#,
            PARA[0], PARA[1], PARA[2]
        );
        let e = extract(&page(&body), &url("http://x.example/b/1.html"));
        assert_eq!(e.paragraphs, PARA);
        assert_eq!(e.container.as_deref(), Some("td"));
        // "下一页" to an unrelated URL on a finished chapter is the next chapter.
        assert_eq!(
            (e.next_page, e.next_chapter),
            (None, Some(url("http://x.example/next")))
        );
    }

    #[test]
    fn pagination_links() {
        let body = format!(
            r#"<div id="content">{}<br>{}<br>本章未完，请点击下一页继续阅读</div><div class="page"><a href="/b/7.html">上一章</a><a href="/b/8_2.html">下一页</a><a href="/b/9.html">下一章</a></div>"#,
            PARA[0], PARA[1]
        );
        let e = extract(&page(&body), &url("http://x.example/b/8.html"));
        assert_eq!(e.paragraphs, &PARA[..2]);
        assert_eq!(e.next_page, Some(url("http://x.example/b/8_2.html")));
        assert_eq!(e.next_chapter, Some(url("http://x.example/b/9.html")));

        let c = url("http://x.example/b/8.html");
        assert!(is_continuation(&c, &url("http://x.example/b/8_2.html")));
        assert!(is_continuation(
            &url("http://x.example/b/8_2.html"),
            &url("http://x.example/b/8_3.html")
        ));
        assert!(is_continuation(
            &url("http://x.example/b/8/"),
            &url("http://x.example/b/8/2")
        ));
        assert!(is_continuation(
            &url("http://x.example/read?id=8"),
            &url("http://x.example/read?id=8&page=2")
        ));
        assert!(!is_continuation(&c, &url("http://x.example/b/9.html")));
        assert!(!is_continuation(&c, &url("http://x.example/b/81.html")));
        assert!(!is_continuation(&c, &url("http://y.example/b/8_2.html")));
    }

    #[test]
    fn site_selector_rule_wins() {
        let body = format!(
            r#"<div id="a"><p>{}</p><p>{}</p></div><div id="chap"><p>{}</p></div>"#,
            PARA[0], PARA[1], PARA[2]
        );
        let ex = Extractor::new(&ExtractSettings {
            content_selectors: vec!["#missing".into(), "div#chap".into()],
            ..ExtractSettings::default()
        })
        .unwrap();
        let e = ex.extract(&page(&body), &url("http://x.example/"));
        assert_eq!(e.method, Method::Selector("div#chap".into()));
        assert_eq!(e.paragraphs, [PARA[2]]);
        assert!(
            Extractor::new(&ExtractSettings {
                content_selectors: vec!["div[".into()],
                ..ExtractSettings::default()
            })
            .is_err()
        );
    }

    #[test]
    fn redirects_challenges_and_empty_pages() {
        let stub = r#"<html><body><script>window.location="/b/1/?k=x";</script><a href="/b/1/?k=x">如果您的页面没有自动跳转，请点击这里</a></body></html>"#;
        let e = extract(stub, &url("http://x.example/"));
        assert_eq!(e.kind, PageKind::Redirect);
        assert_eq!(e.redirect_to, Some(url("http://x.example/b/1/?k=x")));
        assert!(e.paragraphs.is_empty());

        let refresh = r#"<html><head><meta http-equiv="refresh" content="0; URL='/moved'"></head><body></body></html>"#;
        assert_eq!(
            extract(refresh, &url("http://x.example/")).redirect_to,
            Some(url("http://x.example/moved"))
        );

        let content = format!(
            r#"<html><body><script>function search(){{location.href="/search.php";}}</script><div id="content">{}</div></body></html>"#,
            PARA.join("<br>").repeat(4)
        );
        let e = extract(&content, &url("http://x.example/"));
        assert_eq!((e.kind, e.redirect_to), (PageKind::Content, None));

        let cf = r#"<html><head><title>Just a moment...</title></head><body><p>Verify you are human by completing the action below.</p></body></html>"#;
        let e = extract(cf, &url("http://x.example/"));
        assert_eq!((e.kind, e.paragraphs.len()), (PageKind::Challenge, 0));

        assert_eq!(
            extract("<html><body></body></html>", &url("http://x.example/")).kind,
            PageKind::Empty
        );
        let robots = r#"<html><head><meta name="robots" content="noindex,nofollow"></head><body><p>x</p></body></html>"#;
        let e = extract(robots, &url("http://x.example/"));
        assert!(e.nofollow && e.noindex);
    }

    /// `text` as a JavaScript string literal of `\uXXXX` escapes only.
    fn js_escaped(text: &str) -> String {
        text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
    }

    #[test]
    fn text_written_by_a_script_is_the_main_text() {
        let html = format!("<p>{}</p><p>{}</p><p>{}</p>", PARA[0], PARA[1], PARA[2]).repeat(2);
        let escaped = js_escaped(&html);
        let (a, b) = escaped.split_at(escaped.len() / 2 / 6 * 6);
        let body = format!(
            r#"{NAV}<h1>第一回 宴桃园豪杰三结义</h1><div id="content"></div>
            <script>function go(){{location.href="/b/2.html";}}
            var c = "{a}";
            c += "{b}";
            document.getElementById("content").innerHTML = c;</script>{FOOT}"#
        );
        let e = extract(&page(&body), &url("http://x.example/b/1.html"));
        assert_eq!(e.kind, PageKind::Content);
        assert_eq!(e.source, TextSource::Script);
        assert_eq!(e.method, Method::Script);
        assert_eq!(e.paragraphs, [PARA, PARA].concat());
        assert_eq!(e.redirect_to, None);

        // document.write of raw pieces.
        let body = format!(
            r#"<div id="content"><script>document.write('<p>{}' + '</p>' +
            "<p>{}</p>");</script></div>"#,
            PARA[0], PARA[1]
        );
        let e = extract(&page(&body), &url("http://x.example/b/1.html"));
        assert_eq!(e.source, TextSource::Script);
        assert_eq!(e.paragraphs, &PARA[..2]);

        // A page whose markup holds the chapter keeps it over a script's ad.
        let body = format!(
            r#"<div id="content">{}<br>{}<br>{}</div><script>document.write("<div>广告：点击领取红包</div>");</script>"#,
            PARA[0], PARA[1], PARA[2]
        );
        let e = extract(&page(&body), &url("http://x.example/b/1.html"));
        assert_eq!(e.source, TextSource::Markup);
        assert_eq!(e.paragraphs, PARA);
        assert_eq!(e.content_endpoint, None);
    }

    #[test]
    fn a_content_endpoint_is_named_when_the_page_has_no_text() {
        let body = r##"<div id="content"></div><script>
            fetch("https://evil.example/x.json");
            $.getJSON("/api/chapter/1.json", function (d) { $("#content").html(d.content); });
        </script>"##;
        let e = extract(&page(body), &url("http://www.x.example/b/1.html"));
        assert_eq!(e.kind, PageKind::Empty);
        assert_eq!(
            e.content_endpoint,
            Some(url("http://www.x.example/api/chapter/1.json"))
        );
        let sub = r#"<div id="content"></div><script>fetch("//api.x.example/c/1");</script>"#;
        assert_eq!(
            extract(&page(sub), &url("http://www.x.example/b/1.html")).content_endpoint,
            Some(url("http://api.x.example/c/1"))
        );

        let ex = Extractor::default();
        let json = serde_json::json!({
            "code": 0,
            "data": {"title": "第一回", "paragraphs": PARA, "next": "/api/chapter/2.json"}
        });
        let u = url("http://www.x.example/api/chapter/1.json");
        let read = read_endpoint(
            &ex,
            json.to_string().as_bytes(),
            Some("application/json"),
            &u,
            None,
        );
        assert_eq!(
            (read.kind, read.source),
            (PageKind::Content, TextSource::Endpoint)
        );
        assert_eq!(read.text, PARA.join("\n"));
        let html = serde_json::json!({"content": format!("<p>{}</p><p>{}</p>", PARA[0], PARA[1])});
        let read = read_endpoint(&ex, html.to_string().as_bytes(), None, &u, None);
        assert_eq!(read.text, PARA[..2].join("\n"));
        let deep = "[".repeat(100_000);
        let read = read_endpoint(&ex, deep.as_bytes(), Some("application/json"), &u, None);
        assert_eq!((read.kind, read.text.as_str()), (PageKind::Empty, ""));
        let plain = read_endpoint(&ex, PARA[0].as_bytes(), Some("text/plain"), &u, None);
        assert_eq!(plain.text, PARA[0]);
    }

    #[test]
    fn junk_lines_are_short_ad_lines_only() {
        assert!(is_junk_line("天才一秒记住本站地址：www.biquge.example"));
        assert!(is_junk_line("请记住本书首发域名：biquge.la。"));
        assert!(is_junk_line("Advertisement"));
        // A Han character right after the address ends it.
        assert!(is_junk_line("请访问xs99.com阅读"));
        assert!(!is_junk_line("他拿起一本小说集comics看了起来"));
        assert!(!is_junk_line(PARA[0]));
        assert!(!is_junk_line(&format!(
            "{}最新章节{}{}",
            PARA[0], PARA[1], PARA[2]
        )));
        assert!(!is_junk_line("炮兵营首发命中，敌阵大乱。"));
        assert!(is_junk_line("2024-03-01 作者： 罗贯中"));
        assert_eq!(
            clean_line("玄德大喜。『笔趣阁 m.biquge.example』").as_deref(),
            Some("玄德大喜。")
        );
        assert_eq!(
            clean_line("（玄德曰：“吾乃中山靖王之后。”）").as_deref(),
            Some("（玄德曰：“吾乃中山靖王之后。”）")
        );
        assert_eq!(clean_line("【一秒记住本站】"), None);
        assert!(is_chapter_heading("第一百二十回　甄士隐详说太虚情"));
        assert!(is_chapter_heading(
            "CHAPTER IV. The Rabbit Sends in a Little Bill"
        ));
        assert!(!is_chapter_heading("第一次见面"));
    }

    #[test]
    fn only_a_page_naming_a_canvas_is_walked_for_one() {
        assert!(has_canvas("<p>x</p><CANVAS id=c>"));
        assert!(has_canvas("<canvas"));
        assert!(!has_canvas("<p>canvas</p><canva>"));
    }

    /// A chapter of 24 lines of 20 characters, no two alike.
    fn chapter() -> Vec<String> {
        (0..24)
            .map(|l| {
                (0..20)
                    .map(|i| char::from_u32(0x4E00 + l * 37 + i * 3).unwrap())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_chapter_drawn_on_a_canvas_in_shuffled_xored_chunks_is_read_in_order() {
        let lines = chapter();
        // Chunks of 5 characters, their char codes XORed with 77, drawn in a shuffled order
        // at their places.
        let mut chunks = Vec::new();
        for (l, line) in lines.iter().enumerate() {
            let chars: Vec<char> = line.chars().collect();
            for (k, part) in chars.chunks(5).enumerate() {
                let codes: Vec<String> =
                    part.iter().map(|c| (*c as u32 ^ 77).to_string()).collect();
                chunks.push(format!(
                    "[{},{},[{}]]",
                    k * 5 * 18,
                    30 + l * 28,
                    codes.join(",")
                ));
            }
        }
        let n = chunks.len();
        let shuffled: Vec<String> = (0..n).map(|i| chunks[(i * 7) % n].clone()).collect();
        let html = format!(
            "<html><head><title>第一章</title></head><body><div class=nav><a href=/>首页</a></div>\
             <div id=content><canvas id=cv width=400 height=700>您的浏览器不支持</canvas></div>\
             <script>var ctx = document.getElementById('cv').getContext('2d'); ctx.font = '18px serif';\
             var parts = [{}];\
             parts.forEach(function (p) {{ ctx.fillText(p[2].map(function (c) {{ return String.fromCharCode(c ^ 77); }}).join(''), p[0], p[1]); }});</script>\
             </body></html>",
            shuffled.join(",")
        );
        let e = extract(&html, &Url::parse("http://example.com/1.html").unwrap());
        assert_eq!(e.source, TextSource::Canvas);
        assert_eq!(e.paragraphs, lines);
        assert_eq!(e.kind, PageKind::Content);
        // The browser's recording gives the same reading.
        let calls: Vec<crate::canvas::DrawCall> = lines
            .iter()
            .enumerate()
            .rev()
            .map(|(l, line)| crate::canvas::DrawCall {
                canvas: Some(0),
                text: line.clone(),
                x: 0.0,
                y: 30.0 + l as f64 * 28.0,
                size: 18.0,
            })
            .collect();
        let assets = PageAssets {
            draw_calls: calls,
            sprites: Vec::new(),
        };
        let e = Extractor::default().extract_with(
            &html,
            &Url::parse("http://example.com/1.html").unwrap(),
            None,
            &assets,
        );
        assert_eq!((e.source, &e.paragraphs), (TextSource::Canvas, &lines));
    }

    #[test]
    fn a_chapter_of_sprite_glyphs_is_read_and_the_sprite_file_asked_for() {
        let lines = chapter();
        let alphabet: Vec<char> = {
            let mut a: Vec<char> = lines.iter().flat_map(|l| l.chars()).collect();
            a.sort_unstable();
            a.dedup();
            a
        };
        // 30 glyphs a row, 20 px apart; a decoy row between every two.
        let mut svg = String::from("<svg xmlns=\"http://www.w3.org/2000/svg\">");
        let mut style = String::new();
        for (r, row) in alphabet.chunks(30).enumerate() {
            let y = 40 + r * 60;
            svg.push_str(&format!(
                "<text x=\"0\" y=\"{y}\" font-size=\"20\">{}</text>",
                row.iter().collect::<String>()
            ));
            svg.push_str(&format!(
                "<text x=\"0\" y=\"{}\" font-size=\"20\">伪造诱饵</text>",
                y + 30
            ));
            for (i, c) in row.iter().enumerate() {
                style.push_str(&format!(
                    ".g{:x} {{ background: -{}px -{}px; }}\n",
                    *c as u32,
                    i * 20,
                    y - 18
                ));
            }
        }
        svg.push_str("</svg>");
        let body: String = lines
            .iter()
            .map(|l| {
                let spans: String = l
                    .chars()
                    .map(|c| format!("<span class=\"g{:x}\"></span>", c as u32))
                    .collect();
                format!("<p>{spans}</p>")
            })
            .collect();
        let page = |image: &str| {
            format!(
                "<html><head><style>span {{ display:inline-block; width:20px; height:22px; background-image: url({image}); }}\n{style}</style></head>\
                 <body><div id=content>{body}</div></body></html>"
            )
        };
        let url = Url::parse("http://example.com/b/1.html").unwrap();
        let e = extract(&page("/s/1.svg"), &url);
        assert_eq!(e.text_chars(), 0);
        let wanted = Url::parse("http://example.com/s/1.svg").unwrap();
        assert_eq!(e.sprite_sources, std::slice::from_ref(&wanted));
        let assets = PageAssets {
            draw_calls: Vec::new(),
            sprites: vec![(wanted, Ok(svg.clone().into_bytes()))],
        };
        let e = Extractor::default().extract_with(&page("/s/1.svg"), &url, None, &assets);
        assert_eq!((e.source, &e.paragraphs), (TextSource::Sprite, &lines));
        // Another site's sprite is never asked for.
        let e = extract(&page("http://elsewhere.net/1.svg"), &url);
        assert!(e.sprite_sources.is_empty());
    }
}
