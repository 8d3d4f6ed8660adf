//! Text out of HTML and XHTML (web pages, EPUB chapters): block elements become line
//! breaks, scripts and styles are dropped. A simple extractor for files a rights holder
//! hands in; the crawler has its own main-text extractor for pirate pages.

use scraper::{ElementRef, Html, Node};

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
pub fn html_to_text(html: &str) -> (Option<String>, String) {
    let doc = Html::parse_document(html);
    let title = doc
        .root_element()
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "title")
        .map(|e| collapse(&e.text().collect::<String>()))
        .filter(|t| !t.is_empty());
    let mut out = String::with_capacity(html.len() / 2);
    walk(doc.root_element(), &mut out);
    let text = out
        .lines()
        .map(collapse)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    (title, text)
}

fn walk(element: ElementRef<'_>, out: &mut String) {
    for child in element.children() {
        match child.value() {
            Node::Text(t) => out.push_str(t),
            Node::Element(e) => {
                let name = e.name();
                if SKIPPED.contains(&name) {
                    continue;
                }
                let block = BLOCKS.contains(&name);
                if block {
                    out.push('\n');
                }
                if let Some(el) = ElementRef::wrap(child) {
                    walk(el, out);
                }
                if block {
                    out.push('\n');
                }
            }
            _ => {}
        }
    }
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
        );
        assert_eq!(title.as_deref(), Some("红楼梦"));
        assert_eq!(
            text,
            "第一回 甄士隐梦幻识通灵\n此开卷第一回也。\n作者自云：曾历过一番梦幻之后。\n多余 空格"
        );
    }
}
