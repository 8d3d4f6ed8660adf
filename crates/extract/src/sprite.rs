//! Text drawn through a glyph sprite (the 大众点评 technique): each character of the chapter is
//! an empty element (`<span class="x1a2"></span>`) whose class gives it a CSS
//! `background-image` (an SVG of `<text>` rows) and a `background-position` that shows one
//! glyph of it. A browser shows the character; the markup holds none.
//!
//! [`apply`] reads it back: the page's `<style>` rules (and inline styles) that set a
//! background image or position are parsed with `cssparser`; each empty element with a class
//! gets the image and position its rules give it (the cascade by specificity, then source
//! order, then the `style` attribute); the SVG (a `data:` URI, base64 or percent-encoded, or a
//! same-site file the fetch brings in as data, as it brings fonts) is read with `quick-xml`
//! into glyphs with their positions; the glyph the position shows (the row whose baseline is
//! the first below the box's top, the glyph nearest the box's left edge in it) becomes the
//! element's text. Glyphs no element shows (a sprite's decoy slots) are never read.
//!
//! Glyph positions: a `<text>`/`<tspan>` places its characters at its `x` list, or from its
//! `x` one font size apart (the sprites are monospaced grids: their positions in the CSS are
//! multiples of the font size); `<textPath>` starts at its path's `M x y`. Font size from the
//! `font-size` attribute or `style` of the element or an ancestor, or the SVG's `<style>`;
//! 16 px otherwise.
//!
//! Bounds: [`MAX_SVG_BYTES`] per sprite, [`MAX_SPRITES`] sprites, [`MAX_GLYPHS`] glyphs per
//! sprite, [`MAX_SPRITE_RULES`] rules, [`MAX_SPANS`] elements, [`MAX_SELECTOR_MATCHES`]
//! matches of selectors other than a plain class; the SVG's elements are walked with a stack
//! of at most [`MAX_SVG_DEPTH`] (deeper ones are skipped), never by recursion.

use std::collections::HashMap;

use base64::Engine as _;
use cssparser::{
    AtRuleParser, CowRcStr, DeclarationParser, ParseError, Parser, ParserState,
    QualifiedRuleParser, RuleBodyItemParser, RuleBodyParser, StyleSheetParser, Token,
};
use ego_tree::NodeId;
use scraper::node::Text;
use scraper::{ElementRef, Html, Node, Selector};
use url::Url;

use crate::css;

/// Bytes of one sprite's SVG read at most.
pub const MAX_SVG_BYTES: usize = 2 << 20;
/// Sprites (distinct images) read per page.
pub const MAX_SPRITES: usize = 8;
/// Glyphs read per sprite.
pub const MAX_GLYPHS: usize = 100_000;
/// Style rules that set a background kept per page.
pub const MAX_SPRITE_RULES: usize = 50_000;
/// Empty elements looked at per page.
pub const MAX_SPANS: usize = 200_000;
/// Matches of selectors other than `.class` / `tag.class` tried per page.
pub const MAX_SELECTOR_MATCHES: usize = 2_000_000;
/// Nesting of SVG elements followed.
pub const MAX_SVG_DEPTH: usize = 64;

/// One sprite a page names: where it is, and its bytes or why there are none.
pub type FetchedSprite = (Url, Result<Vec<u8>, String>);

/// Reads a sprite a page read from a file names: only a file beside the page or below its
/// folder, within [`MAX_SVG_BYTES`] ([`crate::fonts::read_file_beside`]).
///
/// # Errors
/// Why the sprite is not read, as the note to record.
pub fn read_file_sprite(page: &Url, sprite: &Url) -> Result<Vec<u8>, String> {
    crate::fonts::read_file_beside(page, sprite, MAX_SVG_BYTES as u64)
}

/// What [`apply`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Elements given their glyph's character.
    pub replaced: usize,
    /// Sprite URLs (not `data:`) elements use that were not given, resolved against the base.
    pub wanted: Vec<Url>,
    /// One line per sprite that could not be read, and why.
    pub notes: Vec<String>,
}

/// What a rule or `style` attribute says of the background.
#[derive(Clone, Debug, Default, PartialEq)]
struct Background {
    image: Option<String>,
    position: Option<(f64, f64)>,
}

impl Background {
    fn is_empty(&self) -> bool {
        self.image.is_none() && self.position.is_none()
    }
    fn over(&mut self, other: &Background) {
        if other.image.is_some() {
            self.image.clone_from(&other.image);
        }
        if other.position.is_some() {
            self.position = other.position;
        }
    }
}

/// The page's background rules: plain class selectors by class, the rest compiled.
#[derive(Default)]
struct Rules {
    by_class: HashMap<String, Vec<(u32, usize, usize)>>,
    general: Vec<(Selector, u32, usize, usize)>,
    backgrounds: Vec<Background>,
}

impl Rules {
    fn parse(style: &str) -> Rules {
        let mut rules = Rules::default();
        let mut parser = Parser::new(style);
        let mut sheet = SheetParser;
        let mut order = 0usize;
        for (selectors, bg) in StyleSheetParser::new(&mut parser, &mut sheet).flatten() {
            if bg.is_empty() {
                continue;
            }
            let at = rules.backgrounds.len();
            rules.backgrounds.push(bg);
            for text in css::split_list(&selectors) {
                if order >= MAX_SPRITE_RULES {
                    return rules;
                }
                order += 1;
                let spec = css::specificity(text);
                if let Some(class) = plain_class(text) {
                    rules
                        .by_class
                        .entry(class.to_owned())
                        .or_default()
                        .push((spec, order, at));
                } else if let Ok(sel) = Selector::parse(text) {
                    rules.general.push((sel, spec, order, at));
                }
            }
        }
        rules
    }

    fn is_empty(&self) -> bool {
        self.backgrounds.is_empty()
    }
}

/// The class of a `.class` or `tag.class` selector.
fn plain_class(selector: &str) -> Option<&str> {
    let (tag, class) = selector.split_once('.')?;
    let ident = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b >= 0x80)
    };
    ((tag.is_empty() || ident(tag)) && ident(class)).then_some(class)
}

/// Replaces the empty elements of `doc` that show a glyph of a sprite with its character (see
/// the [module docs](self)). `base` resolves sprite URLs; `sprites` are the files the fetch
/// brought. A page whose style sets no background is left as it is, at the cost of a search
/// for the word.
pub fn apply(doc: &mut Html, base: &Url, sprites: &[FetchedSprite]) -> Applied {
    let style = css::style_text(doc);
    apply_style(doc, base, sprites, &style)
}

/// [`apply`] with the page's `<style>` text ([`css::style_text`]) already gathered.
pub fn apply_style(doc: &mut Html, base: &Url, sprites: &[FetchedSprite], style: &str) -> Applied {
    let mut out = Applied::default();
    // The sprite's image is named by a rule of the page's style (inline styles then only
    // place the glyph).
    if !(style.contains("background") && style.contains("url")) {
        return out;
    }
    let rules = Rules::parse(style);
    // The empty elements with a class or style, in document order.
    let mut spans: Vec<(NodeId, Background)> = Vec::new();
    let mut matches = 0usize;
    for node in doc.tree.root().descendants() {
        if spans.len() >= MAX_SPANS {
            break;
        }
        let Some(el) = ElementRef::wrap(node) else {
            continue;
        };
        let e = el.value();
        let inline = e.attr("style").filter(|s| s.contains("background"));
        if (e.attr("class").is_none() && inline.is_none())
            || node.has_children() && node.children().any(|c| !is_blank(c.value()))
        {
            continue;
        }
        let mut hits: Vec<(u32, usize, usize)> = Vec::new();
        for class in e.classes() {
            if let Some(found) = rules.by_class.get(class) {
                hits.extend(found);
            }
        }
        if !rules.general.is_empty() && matches < MAX_SELECTOR_MATCHES {
            for (sel, spec, order, at) in &rules.general {
                matches += 1;
                if sel.matches(&el) {
                    hits.push((*spec, *order, *at));
                }
            }
        }
        if hits.is_empty() && inline.is_none() {
            continue;
        }
        hits.sort_unstable();
        let mut bg = Background::default();
        for &(_, _, at) in &hits {
            bg.over(&rules.backgrounds[at]);
        }
        if let Some(inline) = inline {
            bg.over(&declarations(inline));
        }
        if bg.image.is_some() && bg.position.is_some() {
            spans.push((node.id(), bg));
        }
    }
    if rules.is_empty() || spans.is_empty() {
        return out;
    }
    let mut parsed: HashMap<String, Option<Sprite>> = HashMap::new();
    for (id, bg) in spans {
        let (Some(image), Some((px, py))) = (bg.image, bg.position) else {
            continue;
        };
        if !parsed.contains_key(&image) {
            let sprite = if parsed.len() >= MAX_SPRITES {
                None
            } else {
                load(&image, base, sprites, &mut out)
            };
            parsed.insert(image.clone(), sprite);
        }
        let Some(Some(sprite)) = parsed.get(&image) else {
            continue;
        };
        let Some(ch) = sprite.glyph_at(-px, -py) else {
            continue;
        };
        if let Some(mut node) = doc.tree.get_mut(id) {
            while let Some(mut child) = node.first_child() {
                child.detach();
            }
            node.append(Node::Text(Text {
                text: (&*ch.encode_utf8(&mut [0; 4])).into(),
            }));
            out.replaced += 1;
        }
    }
    out
}

fn is_blank(node: &Node) -> bool {
    match node {
        Node::Text(t) => t.trim().is_empty(),
        Node::Comment(_) => true,
        _ => false,
    }
}

/// The sprite at `image` (a `data:` URI, or a URL among `sprites`): `None`, with a note or a
/// wanted URL, when it cannot be read.
fn load(image: &str, base: &Url, sprites: &[FetchedSprite], out: &mut Applied) -> Option<Sprite> {
    let svg = if image.trim_start().starts_with("data:") {
        match data_uri(image.trim()) {
            Ok(svg) => svg,
            Err(why) => {
                out.notes.push(format!("sprite data: URI: {why}"));
                return None;
            }
        }
    } else {
        let url = base.join(image.trim()).ok()?;
        match sprites.iter().find(|(u, _)| *u == url) {
            Some((_, Ok(bytes))) => {
                let bytes = &bytes[..bytes.len().min(MAX_SVG_BYTES)];
                String::from_utf8_lossy(bytes).into_owned()
            }
            Some((_, Err(why))) => {
                out.notes.push(format!("sprite {url}: {why}"));
                return None;
            }
            None => {
                if !out.wanted.contains(&url) {
                    out.wanted.push(url);
                }
                return None;
            }
        }
    };
    let sprite = Sprite::parse(&svg);
    if sprite.glyphs.is_empty() {
        out.notes.push(format!(
            "sprite {}: no glyph",
            &image[..css::floor_char_boundary(image, 64)]
        ));
        return None;
    }
    Some(sprite)
}

/// The SVG of an `image/svg+xml` `data:` URI, base64 or percent-encoded, within
/// [`MAX_SVG_BYTES`].
fn data_uri(uri: &str) -> Result<String, String> {
    let rest = uri.strip_prefix("data:").ok_or("not a data: URI")?;
    let (header, data) = rest.split_once(',').ok_or("no comma")?;
    if !header.to_ascii_lowercase().starts_with("image/svg+xml") {
        return Err(format!(
            "not an SVG: {}",
            &header[..css::floor_char_boundary(header, 40)]
        ));
    }
    if data.len() > MAX_SVG_BYTES * 4 / 3 + 4 {
        return Err(format!("over {MAX_SVG_BYTES} bytes"));
    }
    let bytes = if header.to_ascii_lowercase().ends_with(";base64") {
        let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let clean = percent_decode(&clean);
        let engine = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        );
        engine
            .decode(clean.as_slice())
            .map_err(|e| format!("bad base64: {e}"))?
    } else {
        percent_decode(data)
    };
    if bytes.len() > MAX_SVG_BYTES {
        return Err(format!("over {MAX_SVG_BYTES} bytes"));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// One glyph of a sprite: its character, where its baseline starts, its font size.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Glyph {
    x: f64,
    y: f64,
    size: f64,
    ch: char,
}

/// A sprite's glyphs, sorted by baseline, then `x`.
#[derive(Debug, Default)]
struct Sprite {
    glyphs: Vec<Glyph>,
}

/// The text-positioning state of one open SVG element.
#[derive(Clone, Debug)]
struct Pen {
    /// Explicit `x` positions left for the next characters.
    xs: Vec<f64>,
    size: f64,
}

impl Sprite {
    /// The glyphs of an SVG, read by an event loop with a bounded stack of open elements.
    fn parse(svg: &str) -> Sprite {
        use quick_xml::events::Event;
        let svg = &svg[..css::floor_char_boundary(svg, MAX_SVG_BYTES)];
        let mut reader = quick_xml::Reader::from_str(svg);
        // A sprite with a mismatched end tag still shows its glyphs in a browser.
        reader.config_mut().check_end_names = false;
        let mut glyphs = Vec::new();
        let default_size = style_font_size(svg).unwrap_or(16.0);
        let mut stack: Vec<Pen> = Vec::new();
        // Elements below the depth bound, not followed.
        let mut ignored = 0usize;
        let (mut pen_x, mut pen_y) = (0.0f64, 0.0f64);
        let mut paths: HashMap<String, (f64, f64)> = HashMap::new();
        let mut in_text = 0usize;
        let mut skip_text = 0usize;
        loop {
            let event = match reader.read_event() {
                Ok(Event::Eof) | Err(_) => break,
                Ok(e) => e,
            };
            let self_closing = matches!(event, Event::Empty(_));
            match event {
                Event::Start(e) | Event::Empty(e) => {
                    let name = e.local_name().as_ref().to_owned();
                    let mut attrs: HashMap<String, String> = HashMap::new();
                    for a in e.attributes().flatten() {
                        let key = a.key.local_name().as_ref().to_owned();
                        attrs.insert(key, a.value.into_owned());
                    }
                    if name == "path"
                        && let (Some(id), Some(d)) = (attrs.get("id"), attrs.get("d"))
                        && paths.len() < 10_000
                        && let Some(at) = move_to(d)
                    {
                        paths.insert(id.clone(), at);
                    }
                    if self_closing {
                        continue;
                    }
                    if ignored > 0 || stack.len() >= MAX_SVG_DEPTH {
                        ignored += 1;
                        continue;
                    }
                    let parent_size = stack.last().map_or(default_size, |p| p.size);
                    let size = attrs
                        .get("font-size")
                        .and_then(|v| number(v))
                        .or_else(|| attrs.get("style").and_then(|s| style_font_size(s)))
                        .filter(|s| *s > 0.0 && s.is_finite())
                        .unwrap_or(parent_size);
                    let mut pen = Pen {
                        xs: Vec::new(),
                        size,
                    };
                    if matches!(name.as_str(), "text" | "tspan" | "textPath") {
                        if let Some(xs) = attrs.get("x") {
                            pen.xs = numbers(xs);
                            pen.xs.reverse();
                        }
                        if let Some(y) = attrs.get("y").and_then(|y| numbers(y).first().copied()) {
                            pen_y = y;
                        }
                        if name == "textPath" {
                            let href = attrs.get("href").map(String::as_str).unwrap_or("");
                            if let Some(&(x, y)) = paths.get(href.trim_start_matches('#')) {
                                pen_x = x;
                                pen_y = y;
                            }
                        }
                        in_text += 1;
                    } else if matches!(
                        name.as_str(),
                        "style" | "script" | "title" | "desc" | "metadata"
                    ) {
                        skip_text += 1;
                    }
                    stack.push(pen);
                }
                Event::End(e) => {
                    if ignored > 0 {
                        ignored -= 1;
                        continue;
                    }
                    let local = e.local_name();
                    let name: &str = local.as_ref();
                    if matches!(name, "text" | "tspan" | "textPath") {
                        in_text = in_text.saturating_sub(1);
                    } else if matches!(name, "style" | "script" | "title" | "desc" | "metadata") {
                        skip_text = skip_text.saturating_sub(1);
                    }
                    stack.pop();
                }
                Event::Text(t) if ignored == 0 && in_text > 0 && skip_text == 0 => {
                    let text = t.xml10_content();
                    place(&text, &mut stack, &mut pen_x, pen_y, &mut glyphs);
                }
                Event::CData(t) if ignored == 0 && in_text > 0 && skip_text == 0 => {
                    let text = t.xml10_content();
                    place(&text, &mut stack, &mut pen_x, pen_y, &mut glyphs);
                }
                Event::GeneralRef(r) if ignored == 0 && in_text > 0 && skip_text == 0 => {
                    let ch = match r.resolve_char_ref() {
                        Ok(Some(c)) => Some(c),
                        _ => match &*r {
                            "lt" => Some('<'),
                            "gt" => Some('>'),
                            "amp" => Some('&'),
                            "quot" => Some('"'),
                            "apos" => Some('\''),
                            _ => None,
                        },
                    };
                    if let Some(ch) = ch {
                        place(
                            ch.encode_utf8(&mut [0; 4]),
                            &mut stack,
                            &mut pen_x,
                            pen_y,
                            &mut glyphs,
                        );
                    }
                }
                _ => {}
            }
            if glyphs.len() >= MAX_GLYPHS {
                glyphs.truncate(MAX_GLYPHS);
                break;
            }
        }
        glyphs.sort_by(|a: &Glyph, b: &Glyph| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
        Sprite { glyphs }
    }

    /// The glyph a box whose top-left corner is at (`x`, `y`) of the sprite shows: in the row
    /// with the first baseline below `y` (within two font sizes), the glyph starting nearest
    /// `x` (within half a font size).
    fn glyph_at(&self, x: f64, y: f64) -> Option<char> {
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        let first = self.glyphs.partition_point(|g| g.y <= y);
        let row_y = self.glyphs.get(first)?.y;
        let end = first + self.glyphs[first..].partition_point(|g| g.y <= row_y);
        let row = &self.glyphs[first..end];
        if row_y - y > row[0].size * 2.0 {
            return None;
        }
        let best = row
            .iter()
            .min_by(|a, b| (a.x - x).abs().total_cmp(&(b.x - x).abs()))?;
        ((best.x - x).abs() < best.size / 2.0).then_some(best.ch)
    }
}

/// Places the characters of `text` at the current pen: the element's explicit `x` list first,
/// then one font size apart.
fn place(text: &str, stack: &mut [Pen], pen_x: &mut f64, pen_y: f64, glyphs: &mut Vec<Glyph>) {
    let Some(pen) = stack.last_mut() else {
        return;
    };
    for ch in text.chars() {
        if ch.is_whitespace() {
            continue;
        }
        if glyphs.len() >= MAX_GLYPHS {
            return;
        }
        if let Some(x) = pen.xs.pop() {
            *pen_x = x;
        }
        glyphs.push(Glyph {
            x: *pen_x,
            y: pen_y,
            size: pen.size,
            ch,
        });
        *pen_x += pen.size;
    }
}

/// The `M x y` a path's data starts with.
fn move_to(d: &str) -> Option<(f64, f64)> {
    let d = d.trim_start().strip_prefix(['M', 'm'])?;
    let n = numbers(d);
    Some((*n.first()?, *n.get(1)?))
}

fn number(v: &str) -> Option<f64> {
    v.trim().trim_end_matches("px").trim().parse().ok()
}

/// The numbers of an SVG list (`"0 14 28"`, `"0,14,28"`), at most [`MAX_GLYPHS`].
fn numbers(v: &str) -> Vec<f64> {
    v.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .take(MAX_GLYPHS)
        .map_while(|s| {
            // `M0 30H600`: a command letter ends the list.
            let end = s
                .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
                .unwrap_or(s.len());
            let n = s[..end].parse().ok();
            if end < s.len() {
                n.map(|n| (n, true))
            } else {
                n.map(|n| (n, false))
            }
        })
        .scan(false, |stop, (n, last)| {
            if *stop {
                return None;
            }
            *stop = last;
            Some(n)
        })
        .collect()
}

/// The first `font-size: Npx` of a style text.
fn style_font_size(style: &str) -> Option<f64> {
    let at = style.find("font-size")?;
    let rest = style[at + "font-size".len()..]
        .trim_start()
        .strip_prefix(':')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c.is_whitespace()))
        .unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

/// The background of a `style` attribute.
fn declarations(style: &str) -> Background {
    let style = &style[..css::floor_char_boundary(style, 16 * 1024)];
    let mut parser = Parser::new(style);
    block(&mut parser)
}

fn block(input: &mut Parser<'_>) -> Background {
    let mut out = Background::default();
    let mut body = DeclParser;
    for d in RuleBodyParser::new(input, &mut body).flatten() {
        out.over(&d);
    }
    out
}

struct DeclParser;

impl<'i> DeclarationParser<'i> for DeclParser {
    type Declaration = Background;
    type Error = ();

    fn parse_value(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
        _start: &ParserState,
    ) -> Result<Background, ParseError<()>> {
        let name = name.to_ascii_lowercase();
        let mut bg = Background::default();
        if !matches!(
            name.as_str(),
            "background" | "background-image" | "background-position"
        ) {
            while input.next().is_ok() {}
            return Ok(bg);
        }
        let mut numbers: Vec<f64> = Vec::new();
        while let Ok(token) = input.next() {
            match token.clone() {
                Token::UnquotedUrl(u) => bg.image = Some(u.to_string()),
                Token::Function(f) if f.eq_ignore_ascii_case("url") => {
                    let url = input.parse_nested_block(|i| {
                        i.expect_string()
                            .map(|s| s.to_string())
                            .map_err(ParseError::<()>::from)
                    });
                    if let Ok(u) = url {
                        bg.image = Some(u);
                    }
                }
                Token::Dimension { value, unit, .. } if unit.eq_ignore_ascii_case("px") => {
                    numbers.push(f64::from(value));
                }
                Token::Number { value, .. } => numbers.push(f64::from(value)),
                Token::Ident(i) if matches!(&*i.to_ascii_lowercase(), "left" | "top") => {
                    numbers.push(0.0);
                }
                _ => {}
            }
        }
        if name != "background-image" && numbers.len() >= 2 {
            bg.position = Some((numbers[0], numbers[1]));
        }
        if name == "background-position" {
            bg.image = None;
        }
        Ok(bg)
    }
}

impl<'i> AtRuleParser<'i> for DeclParser {
    type Prelude = ();
    type AtRule = Background;
    type Error = ();
}

impl<'i> QualifiedRuleParser<'i> for DeclParser {
    type Prelude = ();
    type QualifiedRule = Background;
    type Error = ();
}

impl<'i> RuleBodyItemParser<'i, Background, ()> for DeclParser {
    fn parse_declarations(&self) -> bool {
        true
    }
    fn parse_qualified(&self) -> bool {
        false
    }
}

/// The top level: qualified rules with their selector text; at-rules skipped.
struct SheetParser;

impl<'i> QualifiedRuleParser<'i> for SheetParser {
    type Prelude = String;
    type QualifiedRule = (String, Background);
    type Error = ();

    fn parse_prelude(&mut self, input: &mut Parser<'i>) -> Result<String, ParseError<()>> {
        let start = input.position();
        while input.next().is_ok() {}
        Ok(input.slice_from(start).to_owned())
    }

    fn parse_block(
        &mut self,
        prelude: String,
        _start: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<(String, Background), ParseError<()>> {
        Ok((prelude, block(input)))
    }
}

impl<'i> AtRuleParser<'i> for SheetParser {
    type Prelude = ();
    type AtRule = (String, Background);
    type Error = ();

    fn parse_prelude(
        &mut self,
        _name: CowRcStr<'i>,
        input: &mut Parser<'i>,
    ) -> Result<(), ParseError<()>> {
        while input.next().is_ok() {}
        Ok(())
    }

    fn rule_without_block(&mut self, _: (), _: &ParserState) -> Result<Self::AtRule, ()> {
        Ok((String::new(), Background::default()))
    }

    fn parse_block(
        &mut self,
        _: (),
        _: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<Self::AtRule, ParseError<()>> {
        while input.next().is_ok() {}
        Ok((String::new(), Background::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn read(html: &str, sprites: &[FetchedSprite]) -> (String, Applied) {
        let mut doc = Html::parse_document(html);
        let base = Url::parse("http://example.com/book/1.html").unwrap();
        let applied = apply(&mut doc, &base, sprites);
        let body = Selector::parse("body").unwrap();
        let text: String = doc.select(&body).flat_map(|b| b.text()).collect();
        (text.split_whitespace().collect(), applied)
    }

    /// Rows of 16 px glyphs, the second row made of decoys no class shows.
    const GRID: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="400" height="80"><style>text{font-size:16px;fill:#333}</style><text x="0" y="20">天下大势分久必合</text><text x="0" y="44">诱饵假字不可读</text><text x="0" y="68">合久必分</text></svg>"#;

    fn grid_page(uri: &str) -> String {
        format!(
            "<html><head><style>
            span[class^=\"zq\"] {{ width: 16px; height: 18px; display: inline-block; background-image: url({uri}); }}
            .zqa {{ background: -0px -4px; }} .zqb {{ background: -16.0px -5px; }}
            .zqc {{ background-position: -48px -3px; }} .zqd {{ background: -0px -52px; }}
            .zqe {{ background: -32px -50px; }} .unused {{ background: -16px -28px; }}
            </style></head><body><div id=content>话说<span class=\"zqa\"></span><span class=\"zqb\"></span> <span class=\"zqc\"></span>，<span class=\"zqd\"></span><span class=\"zqe\"></span></div></body></html>"
        )
    }

    #[test]
    fn spans_read_through_an_inline_sprite_and_no_decoy_leaks() {
        for uri in [
            format!("\"data:image/svg+xml;base64,{}\"", b64(GRID)),
            // Percent-encoded, unquoted.
            format!(
                "data:image/svg+xml;charset=utf-8,{}",
                GRID.replace('%', "%25")
                    .replace('"', "%22")
                    .replace('<', "%3C")
                    .replace('>', "%3E")
                    .replace(' ', "%20")
                    .replace('#', "%23")
                    .replace('{', "%7B")
                    .replace('}', "%7D")
                    .replace(';', "%3B")
            ),
        ] {
            let (text, applied) = read(&grid_page(&uri), &[]);
            assert_eq!(text, "话说天下势，合必", "{uri}");
            assert_eq!(applied.replaced, 5);
            for decoy in "诱饵假字不可读".chars() {
                assert!(!text.contains(decoy));
            }
        }
    }

    #[test]
    fn a_same_site_sprite_file_is_wanted_then_read() {
        let html = grid_page("\"../sprites/a.svg\"");
        let (text, applied) = read(&html, &[]);
        assert_eq!(text, "话说，");
        let url = Url::parse("http://example.com/sprites/a.svg").unwrap();
        assert_eq!(applied.wanted, std::slice::from_ref(&url));
        let (text, applied) = read(&html, &[(url.clone(), Ok(GRID.as_bytes().to_vec()))]);
        assert_eq!(text, "话说天下势，合必");
        assert!(applied.wanted.is_empty());
        let (_, applied) = read(&html, &[(url, Err("HTTP 404".into()))]);
        assert_eq!(applied.replaced, 0);
        assert_eq!(applied.notes.len(), 1);
    }

    #[test]
    fn glyphs_one_per_element_with_x_lists_and_text_paths() {
        let svg = r##"<svg><defs><path id="r1" d="M0 30 H600"/></defs>
            <text font-size="20"><tspan x="0 20 40" y="30">甲乙丙</tspan><tspan x="0" y="60">丁</tspan><tspan x="20" y="60">戊</tspan></text>
            <text font-size="20"><textPath xlink:href="#r1">&#x5df1;&amp;</textPath></text></svg>"##;
        let sprite = Sprite::parse(svg);
        assert_eq!(sprite.glyph_at(20.0, 12.0), Some('乙'));
        assert_eq!(sprite.glyph_at(40.0, 12.0), Some('丙'));
        assert_eq!(sprite.glyph_at(20.0, 42.0), Some('戊'));
        // The text path's row shares the first row's baseline: its first glyph is at x 0 too.
        assert!(matches!(sprite.glyph_at(0.0, 12.0), Some('甲' | '己')));
        // Between glyphs, or far above a row: nothing.
        assert_eq!(sprite.glyph_at(10.0, 12.0), None);
        assert_eq!(sprite.glyph_at(0.0, -200.0), None);
        assert_eq!(sprite.glyph_at(f64::NAN, 0.0), None);
    }

    #[test]
    fn hostile_sprites_stay_bounded() {
        // Bad base64, a data URI that is no SVG, an empty SVG: nothing read, each noted.
        for uri in [
            "\"data:image/svg+xml;base64,@@@@not base64\"",
            "\"data:text/html,<svg><text y='20'>字</text></svg>\"",
            "\"data:image/svg+xml,<svg></svg>\"",
        ] {
            let (text, applied) = read(&grid_page(uri), &[]);
            assert_eq!((text.as_str(), applied.replaced), ("话说，", 0), "{uri}");
            assert_eq!(applied.notes.len(), 1, "{uri}");
        }
        // Nesting far past the bound: the deep glyphs are skipped, the parser does not recurse.
        let deep = format!(
            "<svg><text x=\"0\" y=\"20\">天</text>{}<text x=\"0\" y=\"40\">深</text>{}</svg>",
            "<g>".repeat(200_000),
            "</g>".repeat(200_000)
        );
        let sprite = Sprite::parse(&deep);
        assert_eq!(sprite.glyphs.len(), 1);
        // A huge sprite is cut at its byte bound and its glyph bound.
        let huge = format!(
            "<svg><text x=\"0\" y=\"20\">{}</text></svg>",
            "字".repeat(MAX_SVG_BYTES)
        );
        let sprite = Sprite::parse(&huge);
        assert_eq!(sprite.glyphs.len(), MAX_GLYPHS);
        let uri = format!("data:image/svg+xml;base64,{}", b64(&huge));
        assert!(data_uri(&uri).is_err());
        // Many spans and many rules: bounded work, the right glyphs.
        let mut style = String::from("i { background-image: url(\"data:image/svg+xml;base64,");
        style.push_str(&b64(GRID));
        style.push_str("\"); }\n");
        let mut body = String::new();
        for i in 0..60_000 {
            style.push_str(&format!(
                ".c{i} {{ background: -{}px -4px; }}\n",
                (i % 8) * 16
            ));
            if i % 1000 == 999 {
                style.push_str("</style><style>");
            }
            body.push_str(&format!("<i class=c{i}></i>"));
        }
        let html = format!("<style>{style}</style><body>{body}</body>");
        let (text, applied) = read(&html, &[]);
        // The style text stops at its own bound (css::MAX_CSS_BYTES): the rules past it, and
        // their spans, are not read.
        assert!(
            applied.replaced > 1000 && applied.replaced < 60_000,
            "{}",
            applied.replaced
        );
        assert!(text.starts_with("天下大势分久必合天下"));
    }
}
