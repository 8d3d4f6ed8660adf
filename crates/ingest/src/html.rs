//! HTML to a DOM ([`scraper::Html`]), bounded in time and memory whatever the markup.
//!
//! html5ever follows the HTML standard, and the standard's tree builder costs time in
//! proportion to the depth of the open elements for every tag: 100,000 nested `<div>`s take
//! tens of seconds, and a walk of the resulting tree by recursion overflows the stack. Its
//! tokenizer checks each attribute against the tag's earlier ones, so a tag with 10^5
//! attributes is quadratic too. [`parse_document`] puts three guards around the same parser:
//!
//! 1. **Attributes**: a linear byte scan keeps the first [`HtmlLimits::max_attributes`] of each
//!    tag and drops the rest before the tokenizer sees them.
//! 2. **Depth**: a token filter between the tokenizer and the tree builder keeps an estimate of
//!    the open elements (implied end tags of `p`, `li`, `dd`/`dt`, table rows and cells included)
//!    and drops start tags nested deeper than [`HtmlLimits::max_depth`], with their end tags.
//!    Their text is kept: it lands in the deepest element kept. Unclosed formatting elements
//!    (`<b>`, `<font>`, ...), which the standard re-opens in every later paragraph, are capped
//!    at [`HtmlLimits::max_open_formatting`] the same way.
//! 3. **Size and time**: the tree sink counts the elements it creates; past
//!    [`HtmlLimits::max_elements`], or past the caller's deadline (checked every 1,024 tokens),
//!    the rest of the input is ignored and [`Parsed::exceeded`] says why.
//!
//! With these, parsing is linear in the input: see the crate's benchmark (`cargo bench -p
//! ingest`) for the figures on 5 MiB of hostile markup.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{
    ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeBuilderOpts, TreeSink,
};
use html5ever::{Attribute, LocalName, QualName, TokenizerResult, local_name};
use scraper::{Html, HtmlTreeSink};
use serde::{Deserialize, Serialize};

/// Bounds on parsing one document.
///
/// The defaults leave every real page seen so far untouched (novel sites nest 20 to 40 deep,
/// and a table of contents of 5,000 chapters makes about 15,000 elements) while keeping a
/// hostile one to a few hundred milliseconds and some tens of MB.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct HtmlLimits {
    /// Deepest element nesting kept; deeper start tags are dropped, their text kept.
    pub max_depth: usize,
    /// Elements created at most; the rest of the document is ignored and the parse is
    /// marked [`Exceeded::Elements`].
    pub max_elements: usize,
    /// Attributes kept per tag (the first ones).
    pub max_attributes: usize,
    /// Unclosed formatting elements (`b`, `i`, `font`, `a`, ...) kept open at once.
    pub max_open_formatting: usize,
}

impl Default for HtmlLimits {
    fn default() -> Self {
        HtmlLimits {
            max_depth: 256,
            max_elements: 300_000,
            max_attributes: 64,
            max_open_formatting: 8,
        }
    }
}

impl HtmlLimits {
    /// Checks that every limit is at least 1.
    ///
    /// # Errors
    /// The first limit out of range, keyed by its field name.
    pub fn validate(&self) -> bounds::Check {
        bounds::at_least("max_depth", self.max_depth, 1)?;
        bounds::at_least("max_elements", self.max_elements, 1)?;
        bounds::at_least("max_attributes", self.max_attributes, 1)?;
        bounds::at_least("max_open_formatting", self.max_open_formatting, 1)
    }
}

/// Why a parse stopped before the end of the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Exceeded {
    /// More elements than [`HtmlLimits::max_elements`].
    #[error("the page has more than {0} elements (limit max_elements)")]
    Elements(usize),
    /// The deadline passed.
    #[error("parsing the page took longer than its time budget of {0:?}")]
    Time(Duration),
}

/// A parsed document and what the guards did to it.
#[derive(Debug)]
pub struct Parsed {
    /// The DOM (of the part read, if [`Parsed::exceeded`]).
    pub html: Html,
    /// Set when a limit stopped the parse early: the DOM holds only the start of the page.
    pub exceeded: Option<Exceeded>,
    /// Start tags dropped for depth or formatting (their text kept).
    pub flattened: usize,
    /// Tags whose attributes were cut to [`HtmlLimits::max_attributes`] (for `html` and
    /// `body`, all together).
    pub attributes_cut: usize,
}

/// Parses `html` as a document within `limits`; `deadline`, if given, stops it early.
///
/// Never panics on any input and never recurses: the tree is stored flat (ego-tree) and every
/// walk over it in copyhound is iterative.
pub fn parse_document(html: &str, limits: &HtmlLimits, deadline: Option<Instant>) -> Parsed {
    let started = Instant::now();
    let (input, attributes_cut) = cap_attributes(html, limits.max_attributes.max(1));
    let sink = Counted {
        inner: HtmlTreeSink::new(Html::new_document()),
        elements: Cell::new(0),
    };
    let builder = TreeBuilder::new(sink, TreeBuilderOpts::default());
    let guard = Guard {
        inner: builder,
        limits: limits.clone(),
        deadline,
        started,
        stack: RefCell::new(Vec::new()),
        open_names: RefCell::new(HashMap::new()),
        dropped: RefCell::new(HashMap::new()),
        open_formatting: Cell::new([0; FORMATTING_COUNT]),
        root_attributes: Cell::new(0),
        roots_cut: Cell::new(0),
        tokens: Cell::new(0),
        stop: Cell::new(None),
        flattened: Cell::new(0),
    };
    let tokenizer = Tokenizer::new(guard, TokenizerOpts::default());
    let queue = BufferQueue::default();
    for chunk in chunks(&input, FEED_BYTES) {
        queue.push_back(StrTendril::from_slice(chunk));
        // A `</script>` or a `<meta charset>` pauses the tokenizer; go on regardless (nothing
        // is executed, and the text is decoded already).
        while !matches!(tokenizer.feed(&queue), TokenizerResult::Done) {}
        if tokenizer.sink.stop.get().is_some() {
            break;
        }
    }
    tokenizer.end();
    let guard = tokenizer.sink;
    let exceeded = guard.stop.get();
    let flattened = guard.flattened.get();
    let attributes_cut = attributes_cut + guard.roots_cut.get();
    let html = guard.inner.sink.inner.finish();
    Parsed {
        html,
        exceeded,
        flattened,
        attributes_cut,
    }
}

/// Input is fed in pieces of this size so that a limit stops the parse soon after it is hit.
const FEED_BYTES: usize = 64 * 1024;

/// Tokens between two looks at the clock.
const CLOCK_EVERY: u64 = 1024;

fn chunks(s: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(size);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (head, tail) = rest.split_at(end);
        rest = tail;
        Some(head)
    })
}

// ---------------------------------------------------------------------------------------------
// Attributes: a byte scan in front of the tokenizer

/// Elements whose content the tokenizer reads as raw text up to their end tag.
const RAW_TEXT: &[&[u8]] = &[
    b"script",
    b"style",
    b"textarea",
    b"title",
    b"xmp",
    b"iframe",
    b"noembed",
    b"noframes",
    b"noscript",
];

/// Keeps the first `max` attributes of every tag. Returns the input itself when no tag has
/// more, and the number of tags cut.
///
/// The scan follows the tokenizer's reading of tags (quoted values may hold `>`; comments,
/// doctypes and raw-text elements such as `<script>` are skipped whole) closely enough that a
/// tag it cuts is one the tokenizer would see with more than `max` attributes.
fn cap_attributes(s: &str, max: usize) -> (Cow<'_, str>, usize) {
    let b = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut cut = 0;
    let mut i = 0;
    while let Some(off) = find_byte(b'<', &b[i..]) {
        i += off + 1;
        let end_tag = b.get(i) == Some(&b'/');
        let name_at = i + usize::from(end_tag);
        match b.get(name_at) {
            Some(c) if c.is_ascii_alphabetic() => {}
            Some(b'!') if !end_tag => {
                i = if b[i..].starts_with(b"!--") {
                    find(&b[i + 3..], b"-->").map_or(b.len(), |e| i + 3 + e + 3)
                } else {
                    find_byte(b'>', &b[i..]).map_or(b.len(), |e| i + e + 1)
                };
                continue;
            }
            _ => continue,
        }
        let name_end = name_at
            + b[name_at..]
                .iter()
                .position(|&c| is_space(c) || c == b'/' || c == b'>')
                .unwrap_or(b.len() - name_at);
        let name = &b[name_at..name_end];
        let mut j = name_end;
        let mut count = 0;
        let mut cut_from = None;
        // Attributes until `>`.
        loop {
            while j < b.len() && (is_space(b[j]) || b[j] == b'/') {
                j += 1;
            }
            if j >= b.len() || b[j] == b'>' {
                break;
            }
            count += 1;
            if count == max + 1 {
                cut_from = Some(j);
            }
            // The name: `=` may start it, as in the standard.
            j += 1;
            while j < b.len() && !is_space(b[j]) && !matches!(b[j], b'/' | b'>' | b'=') {
                j += 1;
            }
            while j < b.len() && is_space(b[j]) {
                j += 1;
            }
            if b.get(j) != Some(&b'=') {
                continue;
            }
            j += 1;
            while j < b.len() && is_space(b[j]) {
                j += 1;
            }
            match b.get(j) {
                Some(&q @ (b'"' | b'\'')) => {
                    j = find_byte(q, &b[j + 1..]).map_or(b.len(), |e| j + 1 + e + 1);
                }
                _ => {
                    while j < b.len() && !is_space(b[j]) && b[j] != b'>' {
                        j += 1;
                    }
                }
            }
        }
        if let Some(from) = cut_from {
            let out = out.get_or_insert_with(|| String::with_capacity(s.len()));
            out.push_str(&s[copied..from]);
            copied = j.min(b.len());
            cut += 1;
        }
        i = j;
        if !end_tag && RAW_TEXT.iter().any(|r| name.eq_ignore_ascii_case(r)) {
            i = raw_text_end(b, i, name);
        } else if !end_tag && name.eq_ignore_ascii_case(b"plaintext") {
            break;
        }
    }
    match out {
        None => (Cow::Borrowed(s), 0),
        Some(mut out) => {
            out.push_str(&s[copied..]);
            (Cow::Owned(out), cut)
        }
    }
}

/// Where the raw text of element `name`, starting at `from`, ends: at its `</name`.
fn raw_text_end(b: &[u8], mut from: usize, name: &[u8]) -> usize {
    while let Some(off) = find_byte(b'<', &b[from..]) {
        let at = from + off;
        let tail = &b[at + 1..];
        if tail.first() == Some(&b'/')
            && tail.len() > name.len()
            && tail[1..=name.len()].eq_ignore_ascii_case(name)
        {
            return at;
        }
        from = at + 1;
    }
    b.len()
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

fn find_byte(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&c| c == needle)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------------------------------------
// Depth and formatting: a token filter in front of the tree builder

struct Guard {
    inner: TreeBuilder<ego_tree_id::NodeId, Counted>,
    limits: HtmlLimits,
    deadline: Option<Instant>,
    started: Instant,
    /// Estimated stack of open elements.
    stack: RefCell<Vec<LocalName>>,
    /// How many of each name the stack holds: an end tag of an element not open costs one
    /// look-up here instead of a walk down the tree builder's stack.
    open_names: RefCell<HashMap<LocalName, usize>>,
    /// Start tags dropped, by name, whose end tags are dropped too.
    dropped: RefCell<HashMap<LocalName, usize>>,
    /// Formatting start tags not yet ended, by [`formatting_index`].
    open_formatting: Cell<[usize; FORMATTING_COUNT]>,
    /// Attributes of `html` and `body` start tags passed on. The standard merges every later
    /// one's attributes into the first element, one look-up per attribute against all it has:
    /// past [`HtmlLimits::max_attributes`] in all, later ones lose theirs.
    root_attributes: Cell<usize>,
    /// Root tags whose attributes were dropped that way.
    roots_cut: Cell<usize>,
    tokens: Cell<u64>,
    stop: Cell<Option<Exceeded>>,
    flattened: Cell<usize>,
}

/// scraper's node ids, named once.
mod ego_tree_id {
    pub(super) type NodeId = <scraper::HtmlTreeSink as html5ever::tree_builder::TreeSink>::Handle;
}

impl TokenSink for Guard {
    type Handle = ego_tree_id::NodeId;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<Self::Handle> {
        if self.stop.get().is_some() {
            return match token {
                Token::EOFToken => self.inner.process_token(token, line_number),
                _ => TokenSinkResult::Continue,
            };
        }
        let n = self.tokens.get() + 1;
        self.tokens.set(n);
        if n.is_multiple_of(CLOCK_EVERY)
            && let Some(deadline) = self.deadline
            && Instant::now() >= deadline
        {
            self.stop
                .set(Some(Exceeded::Time(deadline.duration_since(self.started))));
            return TokenSinkResult::Continue;
        }
        if self.inner.sink.elements.get() >= self.limits.max_elements {
            self.stop
                .set(Some(Exceeded::Elements(self.limits.max_elements)));
            return TokenSinkResult::Continue;
        }
        match token {
            // The tree builder would hand each to the sink; nobody reads them.
            Token::ParseError(_) => TokenSinkResult::Continue,
            Token::TagToken(mut tag) => {
                if self.admit(&mut tag) {
                    self.inner.process_token(Token::TagToken(tag), line_number)
                } else {
                    self.flattened.set(self.flattened.get() + 1);
                    TokenSinkResult::Continue
                }
            }
            other => self.inner.process_token(other, line_number),
        }
    }

    fn end(&self) {
        self.inner.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.inner
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

impl Guard {
    /// Whether the tag goes on to the tree builder; updates the estimated stack.
    fn admit(&self, tag: &mut Tag) -> bool {
        let name = tag.name.clone();
        match tag.kind {
            TagKind::StartTag => {
                if matches!(
                    name,
                    local_name!("html") | local_name!("head") | local_name!("body")
                ) {
                    let total = self.root_attributes.get() + tag.attrs.len();
                    if total > self.limits.max_attributes {
                        self.roots_cut.set(self.roots_cut.get() + 1);
                        tag.attrs.clear();
                    } else {
                        self.root_attributes.set(total);
                    }
                    return true;
                }
                if tag.self_closing || is_void(&name) {
                    return true;
                }
                self.close_implied(&name);
                let formatting = formatting_index(&name);
                let mut open = self.open_formatting.get();
                let too_deep =
                    self.stack.borrow().len() >= self.limits.max_depth && !is_raw_text(&name);
                let too_much_formatting = formatting.is_some()
                    && open.iter().sum::<usize>() >= self.limits.max_open_formatting;
                if too_deep || too_much_formatting {
                    *self.dropped.borrow_mut().entry(name).or_default() += 1;
                    return false;
                }
                if let Some(f) = formatting {
                    open[f] += 1;
                    self.open_formatting.set(open);
                }
                *self
                    .open_names
                    .borrow_mut()
                    .entry(name.clone())
                    .or_default() += 1;
                self.stack.borrow_mut().push(name);
                true
            }
            TagKind::EndTag => {
                {
                    let mut dropped = self.dropped.borrow_mut();
                    if let Some(n) = dropped.get_mut(&name) {
                        *n -= 1;
                        if *n == 0 {
                            dropped.remove(&name);
                        }
                        return false;
                    }
                }
                let found = self.pop_to(&name, |_| false);
                if let Some(f) = formatting_index(&name) {
                    // With none open, the tree builder would walk its whole stack looking
                    // for one: nothing to end, so nothing to forward.
                    let mut open = self.open_formatting.get();
                    if open[f] == 0 {
                        return false;
                    }
                    open[f] -= 1;
                    self.open_formatting.set(open);
                    return true;
                }
                // An end tag with nothing to end costs the tree builder a walk down its
                // stack; `</br>` is a `<br>`, `</p>` makes an empty paragraph, and the roots
                // end the document.
                found
                    || matches!(
                        name,
                        local_name!("br")
                            | local_name!("p")
                            | local_name!("head")
                            | local_name!("body")
                            | local_name!("html")
                    )
            }
        }
    }

    /// Pops the estimate to (and including) the nearest open `name`, unless a `boundary` comes
    /// first. Returns whether it was found. Costs nothing when no `name` is open, and at most
    /// the depth limit otherwise.
    fn pop_to(&self, name: &LocalName, boundary: impl Fn(&LocalName) -> bool) -> bool {
        if !self.open_names.borrow().contains_key(name) {
            return false;
        }
        let mut stack = self.stack.borrow_mut();
        let mut at = None;
        for (i, open) in stack.iter().enumerate().rev() {
            if open == name {
                at = Some(i);
                break;
            }
            if boundary(open) {
                return false;
            }
        }
        let Some(at) = at else { return false };
        let mut open_names = self.open_names.borrow_mut();
        for closed in stack.drain(at..) {
            if let Some(n) = open_names.get_mut(&closed) {
                *n -= 1;
                if *n == 0 {
                    open_names.remove(&closed);
                }
            }
        }
        true
    }

    /// The end tags the standard implies before a start tag.
    fn close_implied(&self, name: &LocalName) {
        if closes_p(name) {
            self.pop_to(&local_name!("p"), is_scope_boundary);
        }
        match *name {
            local_name!("li") => {
                self.pop_to(name, stops_list_items);
            }
            local_name!("dd") | local_name!("dt") => {
                let stop = stops_list_items;
                if !self.pop_to(&local_name!("dd"), stop) {
                    self.pop_to(&local_name!("dt"), stop);
                }
            }
            local_name!("tr") => {
                self.pop_to(name, |n| *n == local_name!("table"));
            }
            local_name!("td") | local_name!("th") => {
                let stop = |n: &LocalName| matches!(*n, local_name!("tr") | local_name!("table"));
                if !self.pop_to(&local_name!("td"), stop) {
                    self.pop_to(&local_name!("th"), stop);
                }
            }
            local_name!("option") => {
                self.pop_to(name, |n| *n == local_name!("select"));
            }
            _ => {}
        }
    }
}

fn is_void(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("area")
            | local_name!("base")
            | local_name!("br")
            | local_name!("col")
            | local_name!("embed")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
            | local_name!("param")
            | local_name!("keygen")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("frame")
    )
}

fn is_raw_text(name: &LocalName) -> bool {
    RAW_TEXT.contains(&name.as_bytes()) || *name == local_name!("plaintext")
}

/// The standard's formatting elements: re-opened after an implied end.
const FORMATTING_COUNT: usize = 14;
const FORMATTING: [LocalName; FORMATTING_COUNT] = [
    local_name!("a"),
    local_name!("b"),
    local_name!("big"),
    local_name!("code"),
    local_name!("em"),
    local_name!("font"),
    local_name!("i"),
    local_name!("nobr"),
    local_name!("s"),
    local_name!("small"),
    local_name!("strike"),
    local_name!("strong"),
    local_name!("tt"),
    local_name!("u"),
];

fn formatting_index(name: &LocalName) -> Option<usize> {
    FORMATTING.iter().position(|f| f == name)
}

/// Start tags that end an open `<p>` ("close a p element" in the standard).
fn closes_p(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("pre")
            | local_name!("listing")
            | local_name!("table")
            | local_name!("li")
            | local_name!("dd")
            | local_name!("dt")
    )
}

/// Elements an implied `</li>`, `</dd>` or `</dt>` does not look past: the standard's special
/// elements but `address`, `div` and `p`.
fn stops_list_items(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("applet")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("body")
            | local_name!("button")
            | local_name!("caption")
            | local_name!("center")
            | local_name!("colgroup")
            | local_name!("details")
            | local_name!("dir")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("html")
            | local_name!("iframe")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("marquee")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("object")
            | local_name!("ol")
            | local_name!("plaintext")
            | local_name!("pre")
            | local_name!("script")
            | local_name!("section")
            | local_name!("select")
            | local_name!("style")
            | local_name!("summary")
            | local_name!("table")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("template")
            | local_name!("textarea")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("title")
            | local_name!("tr")
            | local_name!("ul")
            | local_name!("xmp")
    )
}

/// Elements an implied end does not look past (the standard's scope boundaries).
fn is_scope_boundary(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("applet")
            | local_name!("caption")
            | local_name!("html")
            | local_name!("table")
            | local_name!("td")
            | local_name!("th")
            | local_name!("marquee")
            | local_name!("object")
            | local_name!("template")
            | local_name!("button")
    )
}

// ---------------------------------------------------------------------------------------------
// The tree sink: scraper's, with elements counted and parse errors not kept

struct Counted {
    inner: HtmlTreeSink,
    elements: Cell<usize>,
}

impl TreeSink for Counted {
    type Handle = <HtmlTreeSink as TreeSink>::Handle;
    type Output = Html;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Html {
        self.inner.finish()
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> Self::Handle {
        self.inner.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a Self::Handle) -> Self::ElemName<'a> {
        self.inner.elem_name(target)
    }

    fn create_element(
        &self,
        name: QualName,
        attrs: Vec<Attribute>,
        flags: ElementFlags,
    ) -> Self::Handle {
        self.elements.set(self.elements.get() + 1);
        self.inner.create_element(name, attrs, flags)
    }

    fn create_comment(&self, text: StrTendril) -> Self::Handle {
        self.inner.create_comment(text)
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Self::Handle {
        self.inner.create_pi(target, data)
    }

    fn append(&self, parent: &Self::Handle, child: NodeOrText<Self::Handle>) {
        self.inner.append(parent, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &Self::Handle,
        prev_element: &Self::Handle,
        child: NodeOrText<Self::Handle>,
    ) {
        self.inner
            .append_based_on_parent_node(element, prev_element, child);
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.inner
            .append_doctype_to_document(name, public_id, system_id);
    }

    fn get_template_contents(&self, target: &Self::Handle) -> Self::Handle {
        self.inner.get_template_contents(target)
    }

    fn same_node(&self, x: &Self::Handle, y: &Self::Handle) -> bool {
        self.inner.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.inner.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &Self::Handle, new_node: NodeOrText<Self::Handle>) {
        self.inner.append_before_sibling(sibling, new_node);
    }

    fn add_attrs_if_missing(&self, target: &Self::Handle, attrs: Vec<Attribute>) {
        self.inner.add_attrs_if_missing(target, attrs);
    }

    fn remove_from_parent(&self, target: &Self::Handle) {
        self.inner.remove_from_parent(target);
    }

    fn reparent_children(&self, node: &Self::Handle, new_parent: &Self::Handle) {
        self.inner.reparent_children(node, new_parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scraper::Selector;

    fn parse(html: &str) -> Parsed {
        parse_document(html, &HtmlLimits::default(), None)
    }

    fn depth_of_deepest(doc: &Html) -> usize {
        doc.tree
            .nodes()
            .map(|n| n.ancestors().count())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn ordinary_pages_are_untouched() {
        let html = "<html><head><title>t</title><script>if (a<b && c>d) x();</script></head>\
                    <body><div id=content><p>one<p>two<ul><li>a<li>b</ul>\
                    <table><tr><td>x<td>y<tr><td>z</table><b>bold</b></div></body></html>";
        let parsed = parse(html);
        assert_eq!(parsed.exceeded, None);
        assert_eq!((parsed.flattened, parsed.attributes_cut), (0, 0));
        let plain = Html::parse_document(html);
        assert_eq!(parsed.html.html(), plain.html());
    }

    #[test]
    fn deep_nesting_is_flattened_and_text_kept() {
        let depth = 20_000;
        let html = format!(
            "<body>{}deep text{}</body>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let parsed = parse(&html);
        assert_eq!(parsed.exceeded, None);
        assert!(parsed.flattened >= depth - 256, "{}", parsed.flattened);
        assert!(depth_of_deepest(&parsed.html) < 300);
        let text: String = parsed.html.root_element().text().collect();
        assert_eq!(text, "deep text");
    }

    #[test]
    fn unclosed_paragraphs_and_list_items_do_not_count_as_depth() {
        let html = format!(
            "<body><div id=c>{}</div><ul>{}</ul></body>",
            "<p>line".repeat(2_000),
            "<li>item".repeat(2_000)
        );
        let parsed = parse(&html);
        assert_eq!(parsed.flattened, 0);
        let p = Selector::parse("div#c > p").unwrap();
        assert_eq!(parsed.html.select(&p).count(), 2_000);
    }

    #[test]
    fn unclosed_formatting_is_capped() {
        let html = format!(
            "<body>{}{}</body>",
            (0..500).map(|i| format!("<b id={i}>")).collect::<String>(),
            "<p>x</p>".repeat(500)
        );
        let parsed = parse(&html);
        let b = Selector::parse("b").unwrap();
        // The standard re-opens every unclosed <b> in each paragraph: 500 × 500 without a cap.
        assert!(parsed.html.select(&b).count() < 8 * 520);
    }

    #[test]
    fn attributes_beyond_the_cap_are_dropped() {
        let attrs: String = (0..1000).map(|i| format!(" a{i}=\"v>{i}\"")).collect();
        let html = format!("<body><p id=x{attrs}>text</p><p title='a > b' class=c>t2</p></body>");
        let parsed = parse(&html);
        assert_eq!(parsed.attributes_cut, 1);
        let p = Selector::parse("p").unwrap();
        let ps: Vec<_> = parsed.html.select(&p).collect();
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].value().attrs().count(), 64);
        assert_eq!(ps[0].value().id(), Some("x"));
        assert_eq!(ps[1].value().attr("title"), Some("a > b"));
        assert_eq!(ps[0].text().collect::<String>(), "text");
    }

    #[test]
    fn attribute_scan_skips_comments_and_scripts() {
        let many: String = (0..100).map(|i| format!(" x{i}")).collect();
        let html = format!("<!-- <a{many}> --><script>var s = '<a{many}>';</script><p>ok</p>");
        let (out, cut) = cap_attributes(&html, 64);
        assert_eq!(cut, 0);
        assert!(matches!(out, Cow::Borrowed(_)));
    }

    #[test]
    fn element_budget_stops_the_parse() {
        let html = "<span>x</span>".repeat(10_000);
        let limits = HtmlLimits {
            max_elements: 1_000,
            ..HtmlLimits::default()
        };
        let parsed = parse_document(&html, &limits, None);
        assert_eq!(parsed.exceeded, Some(Exceeded::Elements(1_000)));
        let span = Selector::parse("span").unwrap();
        assert!(parsed.html.select(&span).count() <= 1_010);
    }

    #[test]
    fn a_passed_deadline_stops_the_parse() {
        let html = "<i>x</i>".repeat(50_000);
        let parsed = parse_document(&html, &HtmlLimits::default(), Some(Instant::now()));
        assert!(matches!(parsed.exceeded, Some(Exceeded::Time(_))));
    }

    #[test]
    fn a_second_body_tag_adds_its_attributes_as_the_standard_says() {
        // Found by the long property test: attributes of a later <body> were dropped.
        let html = "第一章<div><div><body><body id=x>";
        let parsed = parse(html);
        assert_eq!(parsed.html.html(), Html::parse_document(html).html());
        assert_eq!(parsed.attributes_cut, 0);
    }

    #[test]
    fn repeated_body_tags_lose_their_attributes() {
        let html = format!(
            "<body a=1>{}text",
            (0..200)
                .map(|i| format!("<body b{i}=1>"))
                .collect::<String>()
        );
        let parsed = parse(&html);
        let body = Selector::parse("body").unwrap();
        let body = parsed.html.select(&body).next().unwrap();
        assert_eq!(body.value().attrs().count(), 64);
        assert_eq!(parsed.attributes_cut, 200 + 1 - 64);
    }
}
