//! Text out of HTML and XHTML (web pages, EPUB chapters): block elements become line
//! breaks, scripts and styles are dropped. A simple extractor for files a rights holder
//! hands in; the crawler has its own main-text extractor for pirate pages.
//!
//! Both parse with [`ingest::html::parse_document`] (bounded depth, elements and attributes)
//! and walk the tree without recursion, so no file can overflow the stack or take more than
//! linear time.

use ego_tree::iter::Edge;
use ingest::html::{HtmlLimits, parse_document};
use scraper::{ElementRef, Node};

use crate::{Error, Result};

/// Elements whose content is not text a reader sees.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "head", "title", "svg", "iframe", "object",
];
/// Elements that start a new line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "blockquote",
    "pre",
    "nav",
    "aside",
    "main",
    "body",
    "figure",
    "figcaption",
    "address",
];

/// A document's `<title>` and its visible text, one line per block element, with runs of
/// whitespace inside a line collapsed to one space.
///
/// # Errors
/// [`Error::TooComplex`] when the document breaks `limits`' element budget.
pub fn html_to_text(html: &str, limits: &HtmlLimits) -> Result<(Option<String>, String)> {
    let parsed = parse_document(html, limits, None);
    if let Some(exceeded) = parsed.exceeded {
        return Err(Error::TooComplex(exceeded.to_string()));
    }
    let doc = parsed.html;
    let title = doc
        .root_element()
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "title")
        .map(|e| collapse(&e.text().collect::<String>()))
        .filter(|t| !t.is_empty());
    let mut out = String::with_capacity(html.len() / 2);
    // Depth inside a skipped element (script, style, ...): its text is not shown.
    let mut skipped = 0usize;
    for edge in doc.root_element().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Text(t) if skipped == 0 => out.push_str(t),
                Node::Element(e) => {
                    let name = e.name();
                    if skipped > 0 || SKIPPED.contains(&name) {
                        skipped += 1;
                    } else if BLOCKS.contains(&name) {
                        out.push('\n');
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(e) = node.value() {
                    if skipped > 0 {
                        skipped -= 1;
                    } else if BLOCKS.contains(&e.name()) {
                        out.push('\n');
                    }
                }
            }
        }
    }
    let text = out
        .lines()
        .map(collapse)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    Ok((title, text))
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_lines_and_scripts_vanish() {
        let (title, text) = html_to_text(
            "<!DOCTYPE html><html><head><title> 红楼梦 </title><style>p{}</style></head>\
             <body><script>var x=1;</script><h2>第一回　甄士隐梦幻识通灵</h2>\
             <p>此开卷第一回也。<br/>作者自云：<b>曾历过</b>一番梦幻之后。</p>\
             <div>   多余   空格  </div></body></html>",
            &HtmlLimits::default(),
        )
        .unwrap();
        assert_eq!(title.as_deref(), Some("红楼梦"));
        assert_eq!(
            text,
            "第一回 甄士隐梦幻识通灵\n此开卷第一回也。\n作者自云：曾历过一番梦幻之后。\n多余 空格"
        );
    }

    #[test]
    fn deep_nesting_neither_overflows_nor_loses_text() {
        let depth = 100_000;
        let html = format!(
            "<html><body>{}第一章 深处{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let (_, text) = html_to_text(&html, &HtmlLimits::default()).unwrap();
        assert_eq!(text, "第一章 深处");
    }

    #[test]
    fn too_many_elements_is_an_error() {
        let html = "<span>字</span>".repeat(2_000);
        let limits = HtmlLimits {
            max_elements: 500,
            ..HtmlLimits::default()
        };
        let err = html_to_text(&html, &limits).unwrap_err();
        assert!(err.to_string().contains("more than 500 elements"), "{err}");
    }
}
