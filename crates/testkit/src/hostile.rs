//! Hostile documents, made on demand: the markup and bytes a pirate site or an upload may use
//! to stop copyhound. The tests and benchmarks of `ingest`, `import` and `crawler` feed them to
//! the parsers; each is about `bytes` long unless said otherwise.

/// `<div>` nested `depth` deep around `inner`, every level closed.
pub fn nested(tag: &str, depth: usize, inner: &str) -> String {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    format!(
        "<html><body>{}{inner}{}</body></html>",
        open.repeat(depth),
        close.repeat(depth)
    )
}

/// As deep as `bytes` allow: [`nested`] with depth `bytes / len("<tag></tag>")`.
pub fn nested_within(tag: &str, bytes: usize, inner: &str) -> String {
    let per_level = 2 * tag.len() + 5;
    nested(
        tag,
        bytes.saturating_sub(inner.len() + 64) / per_level,
        inner,
    )
}

/// One `<div id=content>` holding `inner`, with attributes `a0=1 a1=1 ...` up to `bytes`.
pub fn attributes(bytes: usize, inner: &str) -> String {
    let mut attrs = String::with_capacity(bytes);
    let mut i = 0;
    while attrs.len() + 16 < bytes {
        attrs.push_str(&format!(" a{i}=1"));
        i += 1;
    }
    format!("<html><body><div id=content{attrs}>{inner}</div></body></html>")
}

/// `<span>字</span>` repeated to `bytes`: more elements than any page needs.
pub fn elements(bytes: usize) -> String {
    let unit = "<span>字</span>";
    format!(
        "<html><body>{}</body></html>",
        unit.repeat(bytes / unit.len())
    )
}

/// `formatting` unclosed `<b>`s with distinct ids (the standard re-opens each in every later
/// paragraph), then paragraphs of `inner` up to `bytes`.
pub fn reopened_formatting(formatting: usize, bytes: usize, inner: &str) -> String {
    let bs: String = (0..formatting).map(|i| format!("<b id={i}>")).collect();
    let paragraph = format!("<p>{inner}");
    let n = bytes.saturating_sub(bs.len()) / paragraph.len();
    format!(
        "<html><body>{bs}<div id=content>{}</div></body></html>",
        paragraph.repeat(n.max(1))
    )
}

/// `opened` `<span>`s, then `</i>` end tags with nothing to end, up to `bytes`.
pub fn stray_end_tags(opened: usize, bytes: usize) -> String {
    format!("{}{}", "<span>".repeat(opened), "</i>".repeat(bytes / 4))
}

/// `<table><tr><td>` repeated, never closed.
pub fn table_soup(bytes: usize) -> String {
    "<table><tr><td>".repeat(bytes / 15)
}

/// Bytes with no structure (a fixed multiplicative sequence: the same on every run).
pub fn byte_soup(bytes: usize) -> Vec<u8> {
    (0..bytes as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect()
}

/// Every named hostile HTML document at about `bytes`, with `inner` as the text a reader
/// would see where the document has any.
pub fn html_corpus(bytes: usize, inner: &str) -> Vec<(&'static str, String)> {
    vec![
        ("nested_div", nested_within("div", bytes, inner)),
        ("nested_span", nested_within("span", bytes, inner)),
        ("unclosed_div", "<div>".repeat(bytes / 5)),
        ("attributes", attributes(bytes, inner)),
        ("elements", elements(bytes)),
        (
            "reopened_formatting",
            reopened_formatting(100, bytes, inner),
        ),
        ("stray_end_tags", stray_end_tags(200, bytes)),
        ("table_soup", table_soup(bytes)),
        (
            "unclosed_comment",
            format!("<p>{inner}</p><!--{}", "x".repeat(bytes)),
        ),
        (
            "unclosed_attribute_quote",
            format!("<p>{inner}</p><a href=\"{}", "<b>".repeat(bytes / 3)),
        ),
    ]
}
