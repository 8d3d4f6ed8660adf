//! The page's own CSS, for what changes the text a reader sees: `order` on flex and grid items
//! (pirate pages shuffle paragraphs, or half-sentences, in the markup and put them back in
//! order with classes of their `<style>`), and `display:none` / `visibility:hidden` set by
//! those classes (anti-copy junk hidden between the words).
//!
//! The `<style>` blocks are parsed with `cssparser` (the tokenizer and rule grammar of Servo,
//! which `scraper`'s selectors already use); each selector of a rule is compiled by
//! [`scraper::Selector`] and matched against the parsed tree. The cascade kept is the part that
//! decides these three properties: `!important` first, then the inline `style` attribute, then
//! specificity, then source order. Rules inside `@media`, `@supports` and other at-rules are
//! left out: they hold for some screens only, and the page is read for none in particular.
//!
//! [`apply`] rewrites the tree: children of a flex or grid container are put in the order of
//! their `order` values (stable, as browsers lay them out), and hidden elements are detached,
//! unless what they hold is most of the page's text (a page that hides its body until a
//! script shows it). What the walk then reads is the text in the order it is shown.
//!
//! Bounds: at most [`MAX_CSS_BYTES`] of style text, [`MAX_RULES`] rules and [`MAX_MATCHES`]
//! selector matches per page; past them the rest is ignored. Every step is a loop over the
//! tree or the rules, never a recursion.

use std::collections::HashMap;
use std::time::Instant;

use cssparser::{
    AtRuleParser, CowRcStr, DeclarationParser, ParseError, Parser, ParserState,
    QualifiedRuleParser, RuleBodyItemParser, RuleBodyParser, StyleSheetParser, Token,
};
use ego_tree::NodeId;
use scraper::{ElementRef, Html, Node, Selector};

/// Style text read per page (the `<style>` blocks together).
pub const MAX_CSS_BYTES: usize = 512 * 1024;
/// Style rules kept per page (one per selector of a rule's list).
pub const MAX_RULES: usize = 4096;
/// Selector matches tried per page: elements × rules that set a property we read.
pub const MAX_MATCHES: usize = 2_000_000;

/// The properties read, as one rule or inline style declares them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Declared {
    display: Option<(Display, bool)>,
    hidden: Option<(bool, bool)>,
    order: Option<(i32, bool)>,
}

impl Declared {
    fn is_empty(&self) -> bool {
        *self == Declared::default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Display {
    None,
    /// `flex`, `inline-flex`, `grid`, `inline-grid`: its children are laid out by `order`.
    Container,
    Other,
}

/// One selector of a rule, with its declarations.
#[derive(Debug)]
struct Rule {
    selector: Selector,
    specificity: u32,
    declared: Declared,
}

/// The `<style>` rules of a page that set a property this module reads.
#[derive(Debug, Default)]
pub struct PageStyle {
    rules: Vec<Rule>,
}

impl PageStyle {
    /// Parses style text (the `<style>` blocks of a page, concatenated), within the bounds.
    pub fn parse(css: &str) -> Self {
        let css = &css[..floor_char_boundary(css, MAX_CSS_BYTES)];
        let mut parser = Parser::new(css);
        let mut rules = Vec::new();
        let mut sheet = SheetParser;
        for (selectors, declared) in StyleSheetParser::new(&mut parser, &mut sheet).flatten() {
            if declared.is_empty() {
                continue;
            }
            for (selector, specificity) in selectors {
                if rules.len() >= MAX_RULES {
                    break;
                }
                rules.push(Rule {
                    selector,
                    specificity,
                    declared,
                });
            }
        }
        PageStyle { rules }
    }

    /// Whether no rule sets a property this module reads.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// The style text of a document's `<style>` elements, up to [`MAX_CSS_BYTES`].
pub fn style_text(doc: &Html) -> String {
    let mut css = String::new();
    for node in doc.tree.root().descendants() {
        let Node::Element(el) = node.value() else {
            continue;
        };
        if el.name() != "style" {
            continue;
        }
        for child in node.children() {
            if let Node::Text(t) = child.value() {
                if css.len() + t.len() > MAX_CSS_BYTES {
                    return css;
                }
                css.push_str(t);
            }
        }
        css.push('\n');
    }
    css
}

/// Font sources a page's style names, at most this many.
pub const MAX_FONT_SOURCES: usize = 16;

/// The `url(...)` of each `src` of the `@font-face` rules in `css` (the page's style text), in
/// order, at most [`MAX_FONT_SOURCES`]; of one `src` list only the first URL, the font a
/// browser tries first. Relative URLs are returned as written.
pub fn font_sources(css: &str) -> Vec<String> {
    let css = &css[..floor_char_boundary(css, MAX_CSS_BYTES)];
    let mut parser = Parser::new(css);
    let mut out = Vec::new();
    let mut in_font_face = false;
    while out.len() < MAX_FONT_SOURCES {
        let token = match parser.next() {
            Ok(t) => t.clone(),
            Err(_) => break,
        };
        match token {
            Token::AtKeyword(name) => in_font_face = name.eq_ignore_ascii_case("font-face"),
            Token::CurlyBracketBlock if in_font_face => {
                in_font_face = false;
                let _ = parser.parse_nested_block(|block| {
                    font_face_sources(block, &mut out);
                    Ok::<(), ParseError<()>>(())
                });
            }
            Token::Semicolon | Token::CurlyBracketBlock => in_font_face = false,
            _ => {}
        }
    }
    out.truncate(MAX_FONT_SOURCES);
    out
}

/// The first URL of each `src` declaration in one `@font-face` block.
fn font_face_sources(block: &mut Parser<'_>, out: &mut Vec<String>) {
    let mut after_src = false;
    let mut taken = false;
    while let Ok(token) = block.next().cloned() {
        match token {
            Token::Ident(name) => after_src = name.eq_ignore_ascii_case("src"),
            Token::Semicolon => {
                after_src = false;
                taken = false;
            }
            Token::UnquotedUrl(url) if after_src && !taken && !url.is_empty() => {
                out.push(url.to_string());
                taken = true;
            }
            Token::Function(name) if after_src && !taken && name.eq_ignore_ascii_case("url") => {
                let url: Result<String, ParseError<()>> = block.parse_nested_block(|f| {
                    f.expect_string()
                        .map(|s| s.to_string())
                        .map_err(ParseError::from)
                });
                if let Ok(url) = url
                    && !url.is_empty()
                {
                    out.push(url);
                    taken = true;
                }
            }
            _ => {}
        }
    }
}

/// What [`apply`] changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// Flex or grid containers whose children were put in `order`.
    pub reordered: usize,
    /// Hidden elements detached.
    pub hidden: usize,
    /// Whether a bound (matches, deadline) stopped it before the end.
    pub cut_short: bool,
}

/// Applies the page's `<style>` rules and inline styles to `doc` (see the [module docs](self)):
/// flex and grid children in `order`, hidden elements detached. A page whose styles set no
/// `order` and hide nothing is left as it is.
pub fn apply(doc: &mut Html, deadline: Option<Instant>) -> Applied {
    let style = style_text(doc);
    apply_style(doc, &style, deadline)
}

/// [`apply`] with the page's `<style>` text ([`style_text`]) already gathered.
pub fn apply_style(doc: &mut Html, style: &str, deadline: Option<Instant>) -> Applied {
    let style = PageStyle::parse(style);
    let mut applied = Applied::default();
    let mut computed: HashMap<NodeId, Declared> = HashMap::new();
    let mut matches = 0usize;
    for node in doc.tree.root().descendants() {
        let Some(el) = ElementRef::wrap(node) else {
            continue;
        };
        let inline = el
            .value()
            .attr("style")
            .map(parse_inline)
            .unwrap_or_default();
        if style.is_empty() && inline.is_empty() {
            continue;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            applied.cut_short = true;
            break;
        }
        // (important, from the style attribute, specificity, source order) of each winner.
        let mut best: [Option<(bool, bool, u32, usize)>; 3] = [None; 3];
        let mut out = Declared::default();
        let mut consider = |d: &Declared, inline: bool, spec: u32, at: usize| {
            let mut take = |slot: usize, important: bool| {
                let key = (important, inline, spec, at);
                if best[slot].is_none_or(|b| key >= b) {
                    best[slot] = Some(key);
                    true
                } else {
                    false
                }
            };
            if let Some((v, imp)) = d.display
                && take(0, imp)
            {
                out.display = Some((v, imp));
            }
            if let Some((v, imp)) = d.hidden
                && take(1, imp)
            {
                out.hidden = Some((v, imp));
            }
            if let Some((v, imp)) = d.order
                && take(2, imp)
            {
                out.order = Some((v, imp));
            }
        };
        for (at, rule) in style.rules.iter().enumerate() {
            matches += 1;
            if matches > MAX_MATCHES {
                applied.cut_short = true;
                break;
            }
            if rule.selector.matches(&el) {
                consider(&rule.declared, false, rule.specificity, at);
            }
        }
        consider(&inline, true, 0, usize::MAX);
        if !out.is_empty() {
            computed.insert(node.id(), out);
        }
    }
    if computed.is_empty() {
        return applied;
    }
    applied.reordered = reorder(doc, &computed);
    applied.hidden = hide(doc, &computed);
    applied
}

/// Puts the children of every flex or grid container in the order of their `order` values.
fn reorder(doc: &mut Html, computed: &HashMap<NodeId, Declared>) -> usize {
    let containers: Vec<NodeId> = computed
        .iter()
        .filter(|(_, d)| matches!(d.display, Some((Display::Container, _))))
        .map(|(&id, _)| id)
        .collect();
    let mut reordered = 0;
    for id in containers {
        let Some(node) = doc.tree.get(id) else {
            continue;
        };
        let children: Vec<(i32, NodeId)> = node
            .children()
            .map(|c| {
                let order = computed
                    .get(&c.id())
                    .and_then(|d| d.order)
                    .map_or(0, |(o, _)| o);
                (order, c.id())
            })
            .collect();
        if children.iter().all(|&(o, _)| o == 0) {
            continue;
        }
        let mut sorted = children.clone();
        sorted.sort_by_key(|&(o, _)| o);
        if sorted == children {
            continue;
        }
        let Some(mut parent) = doc.tree.get_mut(id) else {
            continue;
        };
        for &(_, child) in &sorted {
            parent.append_id(child);
        }
        reordered += 1;
    }
    reordered
}

/// Detaches the elements the styles hide, unless they hold most of the text of the body.
fn hide(doc: &mut Html, computed: &HashMap<NodeId, Declared>) -> usize {
    let is_hidden = |d: &Declared| {
        matches!(d.display, Some((Display::None, _))) || matches!(d.hidden, Some((true, _)))
    };
    let mut roots: Vec<NodeId> = Vec::new();
    let mut hidden_chars = 0usize;
    let mut all_chars = 0usize;
    // Document order; a hidden element's descendants are counted with it, and text that is
    // never shown (scripts, styles, the head) not at all.
    let mut inside: Vec<NodeId> = Vec::new();
    let mut unshown = 0usize;
    let is_unshown = |el: &scraper::node::Element| {
        matches!(
            el.name(),
            "head" | "script" | "style" | "noscript" | "template"
        )
    };
    for edge in doc.tree.root().traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) => match node.value() {
                Node::Element(el) if is_unshown(el) => unshown += 1,
                Node::Element(el) => {
                    let protected = matches!(el.name(), "html" | "body" | "head");
                    if inside.is_empty()
                        && !protected
                        && computed.get(&node.id()).is_some_and(is_hidden)
                    {
                        roots.push(node.id());
                        inside.push(node.id());
                    }
                }
                Node::Text(t) if unshown == 0 => {
                    let n = t.chars().filter(|c| !c.is_whitespace()).count();
                    all_chars += n;
                    if !inside.is_empty() {
                        hidden_chars += n;
                    }
                }
                _ => {}
            },
            ego_tree::iter::Edge::Close(node) => {
                if let Node::Element(el) = node.value()
                    && is_unshown(el)
                {
                    unshown -= 1;
                }
                if inside.last() == Some(&node.id()) {
                    inside.pop();
                }
            }
        }
    }
    // A page that hides its text until a script shows it: the browser shows it, so do we.
    if hidden_chars * 2 > all_chars {
        return 0;
    }
    for &id in &roots {
        if let Some(mut node) = doc.tree.get_mut(id) {
            node.detach();
        }
    }
    roots.len()
}

/// The declarations of a `style` attribute.
fn parse_inline(style: &str) -> Declared {
    let style = &style[..floor_char_boundary(style, 16 * 1024)];
    let mut parser = Parser::new(style);
    declarations(&mut parser)
}

fn declarations(input: &mut Parser<'_>) -> Declared {
    let mut out = Declared::default();
    let mut body = DeclParser;
    for d in RuleBodyParser::new(input, &mut body).flatten() {
        match d {
            Decl::Display(v, imp) => out.display = Some((v, imp)),
            Decl::Hidden(v, imp) => out.hidden = Some((v, imp)),
            Decl::Order(v, imp) => out.order = Some((v, imp)),
            Decl::Other => {}
        }
    }
    out
}

enum Decl {
    Display(Display, bool),
    Hidden(bool, bool),
    Order(i32, bool),
    Other,
}

struct DeclParser;

impl<'i> DeclarationParser<'i> for DeclParser {
    type Declaration = Decl;
    type Error = ();

    fn parse_value(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
        _start: &ParserState,
    ) -> Result<Decl, ParseError<()>> {
        let decl = if name.eq_ignore_ascii_case("display") {
            let v = input.expect_ident()?.to_ascii_lowercase();
            let display = match v.as_str() {
                "none" => Display::None,
                "flex" | "inline-flex" | "grid" | "inline-grid" => Display::Container,
                _ => Display::Other,
            };
            Decl::Display(display, important(input))
        } else if name.eq_ignore_ascii_case("visibility") {
            let v = input.expect_ident()?.to_ascii_lowercase();
            Decl::Hidden(v == "hidden" || v == "collapse", important(input))
        } else if name.eq_ignore_ascii_case("order") {
            let v = input.expect_integer()?;
            Decl::Order(v, important(input))
        } else {
            while input.next().is_ok() {}
            return Ok(Decl::Other);
        };
        // Anything after the value but `!important` makes the declaration invalid.
        if !input.is_exhausted() {
            return Err(input.new_error_for_next_token());
        }
        Ok(decl)
    }
}

/// Whether `!important` follows (consumed).
fn important(input: &mut Parser<'_>) -> bool {
    input.try_parse(cssparser::parse_important).is_ok()
}

impl<'i> AtRuleParser<'i> for DeclParser {
    type Prelude = ();
    type AtRule = Decl;
    type Error = ();
}

impl<'i> QualifiedRuleParser<'i> for DeclParser {
    type Prelude = ();
    type QualifiedRule = Decl;
    type Error = ();
}

impl<'i> RuleBodyItemParser<'i, Decl, ()> for DeclParser {
    fn parse_declarations(&self) -> bool {
        true
    }
    fn parse_qualified(&self) -> bool {
        false
    }
}

/// The top level of a style sheet: qualified rules kept, at-rules skipped.
struct SheetParser;

type Selectors = Vec<(Selector, u32)>;

impl<'i> QualifiedRuleParser<'i> for SheetParser {
    type Prelude = Selectors;
    type QualifiedRule = (Selectors, Declared);
    type Error = ();

    fn parse_prelude(&mut self, input: &mut Parser<'i>) -> Result<Selectors, ParseError<()>> {
        let start = input.position();
        while input.next().is_ok() {}
        let text = input.slice_from(start);
        // Each selector of the list apart, for its own specificity; one that scraper cannot
        // compile (a pseudo-element, a vendor pseudo-class) is left out, as a browser drops
        // the rule it does not understand.
        let selectors: Selectors = split_list(text)
            .into_iter()
            .filter_map(|s| {
                let selector = Selector::parse(s).ok()?;
                Some((selector, specificity(s)))
            })
            .collect();
        Ok(selectors)
    }

    fn parse_block(
        &mut self,
        prelude: Selectors,
        _start: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<(Selectors, Declared), ParseError<()>> {
        Ok((prelude, declarations(input)))
    }
}

impl<'i> AtRuleParser<'i> for SheetParser {
    type Prelude = ();
    type AtRule = (Selectors, Declared);
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
        Ok((Vec::new(), Declared::default()))
    }

    fn parse_block(
        &mut self,
        _: (),
        _: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<Self::AtRule, ParseError<()>> {
        // Conditional and other at-rule blocks are skipped (see the module docs).
        while input.next().is_ok() {}
        Ok((Vec::new(), Declared::default()))
    }
}

/// The selectors of a comma-separated list, split at top-level commas.
pub(crate) fn split_list(text: &str) -> Vec<&str> {
    let mut parser = Parser::new(text);
    let mut out = Vec::new();
    let mut start = parser.position();
    loop {
        let at = parser.position();
        match parser.next() {
            Ok(Token::Comma) => {
                out.push(parser.slice(start..at).trim());
                start = parser.position();
            }
            Ok(_) => {}
            Err(_) => {
                out.push(parser.slice_from(start).trim());
                break;
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The specificity of one selector as `ids << 20 | classes << 10 | types`: `#id`; `.class`,
/// `[attr]` and pseudo-classes; type selectors and pseudo-elements. Counted over cssparser's
/// tokens because `scraper` keeps its parsed selectors private; the arguments of functional
/// pseudo-classes (`:not(...)`, `:is(...)`) are not looked into.
pub(crate) fn specificity(selector: &str) -> u32 {
    let mut parser = Parser::new(selector);
    let (mut ids, mut classes, mut types) = (0u32, 0u32, 0u32);
    let mut after = None::<char>; // '.' or ':' just before
    let mut colons = 0;
    while let Ok(token) = parser.next_including_whitespace() {
        match token {
            Token::IDHash(_) => ids += 1,
            Token::Delim('.') => {
                after = Some('.');
                continue;
            }
            Token::Colon => {
                colons += 1;
                after = Some(':');
                continue;
            }
            Token::SquareBracketBlock => classes += 1,
            Token::Ident(_) | Token::Function(_) => match after {
                Some('.') => classes += 1,
                Some(':') if colons >= 2 => types += 1,
                Some(':') => classes += 1,
                _ => types += 1,
            },
            _ => {}
        }
        after = None;
        colons = 0;
    }
    (ids.min(1023) << 20) | (classes.min(1023) << 10) | types.min(1023)
}

pub(crate) fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts of the `p` and `span` elements in tree order (`Html::select` walks the
    /// arena, in the order the parser made the nodes).
    fn texts(doc: &Html) -> Vec<String> {
        let sel = Selector::parse("p, span").unwrap();
        doc.root_element()
            .select(&sel)
            .map(|e| e.text().collect::<String>())
            .collect()
    }

    fn page(style: &str, body: &str) -> Html {
        Html::parse_document(&format!(
            "<html><head><style>{style}</style></head><body>{body}</body></html>"
        ))
    }

    #[test]
    fn font_face_sources_are_read_in_order_first_of_each_list() {
        let css = r#"
            .x { src: url(no.woff2) }
            @font-face { font-family: "r0"; src: url("/fonts/r0.woff2") format("woff2"), url(/fonts/r0.ttf); }
            @media print { .y { color: red } }
            @font-face{font-family:r1;src:url(fonts/r1.woff)}
            @FONT-FACE { src: local("Arial") }
        "#;
        assert_eq!(font_sources(css), ["/fonts/r0.woff2", "fonts/r1.woff"]);
        let many = "@font-face{src:url(a.woff2)}".repeat(1000);
        assert_eq!(font_sources(&many).len(), MAX_FONT_SOURCES);
        assert!(font_sources("@font-face { src: url(").is_empty());
        assert!(font_sources(&"@font-face{".repeat(100_000)).is_empty());
    }

    #[test]
    fn flex_children_are_read_in_their_order() {
        let mut doc = page(
            ".c{display:flex;flex-direction:column}.a{order:1}.b{order:2}.z{order:3}",
            "<div class=c><p class=z>three</p><p class=a>one</p><p class=b>two</p></div>",
        );
        let applied = apply(&mut doc, None);
        assert_eq!(applied.reordered, 1);
        assert_eq!(texts(&doc), ["one", "two", "three"]);
    }

    #[test]
    fn inline_grid_and_negative_orders_count_and_ties_keep_the_markup_order() {
        let mut doc = page(
            "span.x{order:-1}",
            "<div style='display: inline-grid'><span>b</span><span class=x>a</span><span>c</span></div>",
        );
        apply(&mut doc, None);
        assert_eq!(texts(&doc), ["a", "b", "c"]);
    }

    #[test]
    fn order_outside_a_flex_container_changes_nothing() {
        let mut doc = page(
            ".a{order:2}.b{order:1}",
            "<div><p class=a>first</p><p class=b>second</p></div>",
        );
        assert_eq!(apply(&mut doc, None).reordered, 0);
        assert_eq!(texts(&doc), ["first", "second"]);
    }

    #[test]
    fn the_cascade_decides() {
        // A later rule of the same specificity wins; an id beats classes; !important beats
        // the style attribute.
        let mut doc = page(
            ".c{display:flex}.a{order:5}.a{order:1}#b{order:0}.b.b.b{order:9}.d{order:0!important}",
            "<div class=c><p id=b class='b'>b</p><p class=a>a</p><p class=d style='order:-5'>d</p></div>",
        );
        apply(&mut doc, None);
        assert_eq!(texts(&doc), ["b", "d", "a"]);
    }

    #[test]
    fn hidden_classes_are_dropped_but_not_the_whole_text() {
        let mut doc = page(
            ".x{display:none}.y{visibility:hidden}",
            "<div><p>keep this text here</p><span class=x>junk</span><span class=y>more</span></div>",
        );
        assert_eq!(apply(&mut doc, None).hidden, 2);
        assert_eq!(texts(&doc), ["keep this text here"]);
        // A page hiding its content until a script shows it keeps it.
        let mut doc = page(
            "#content{display:none}",
            "<div id=content><p>the whole chapter text is here</p></div><p>menu</p>",
        );
        assert_eq!(apply(&mut doc, None).hidden, 0);
        // Rules for some screens only are not applied.
        let mut doc = page(
            "@media (max-width: 600px) { .x{display:none} .c{display:flex} }",
            "<div class=c><p>long text that stays</p><p class=x>x</p></div>",
        );
        assert_eq!(apply(&mut doc, None), Applied::default());
    }

    #[test]
    fn specificity_counts_ids_classes_and_types() {
        assert_eq!(specificity("#a"), 1 << 20);
        assert_eq!(specificity("div.a.b"), (2 << 10) | 1);
        assert_eq!(specificity("a:hover"), (1 << 10) | 1);
        assert_eq!(specificity("p::before"), 2);
        assert_eq!(specificity("div > p [x]"), (1 << 10) | 2);
    }

    #[test]
    fn nasty_css_is_bounded() {
        // Unclosed blocks, deep nesting, a huge selector list, garbage.
        let deep = "(".repeat(100_000);
        let many: String = (0..20_000).map(|i| format!(".c{i}{{order:{i}}}")).collect();
        for css in [
            format!("a{{order:{deep}}}"),
            format!("{deep}{{display:none}}"),
            "{{{{{{{{{{{{".repeat(10_000),
            many,
            format!(".a{}{{display:none}}", ",.b".repeat(50_000)),
            "\u{0}\u{FFFD}@@@;;;}}}".repeat(10_000),
        ] {
            let style = PageStyle::parse(&css);
            assert!(style.rules.len() <= MAX_RULES);
            let mut doc = page(&css, "<div class=c0><p>text</p></div>");
            apply(&mut doc, None);
        }
    }
}
