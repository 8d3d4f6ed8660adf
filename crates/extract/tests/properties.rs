//! Property tests of what a page says: URL normalisation is idempotent and order-blind, GBK
//! text survives the charset pipeline without a declaration (and reads alike with a latin-1
//! header), and a page's CSS only reorders or hides, never loses a word.

use std::collections::HashSet;

use extract::{charset, links};
use proptest::prelude::*;
use url::Url;

fn path_segment() -> impl Strategy<Value = String> {
    "[a-z0-9_-]{1,8}"
}

fn query_pair() -> impl Strategy<Value = (String, String)> {
    ("[a-z]{1,5}", "[a-z0-9%]{0,6}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn normalisation_is_idempotent_and_ignores_parameter_order(
        host in "[a-z]{1,10}\\.(com|cn|info)",
        segments in prop::collection::vec(path_segment(), 0..5),
        mut pairs in prop::collection::vec(query_pair(), 0..6),
        fragment in prop::option::of("[a-z]{1,6}"),
    ) {
        // Distinct names, so the order of equal names (which is kept) does not matter here.
        let mut seen = HashSet::new();
        pairs.retain(|(k, _)| seen.insert(k.clone()));
        let build = |pairs: &[(String, String)]| {
            let q: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let mut s = format!("http://{host}:80/{}", segments.join("/"));
            if !q.is_empty() {
                s.push('?');
                s.push_str(&q.join("&"));
            }
            if let Some(f) = &fragment {
                s.push('#');
                s.push_str(f);
            }
            Url::parse(&s).unwrap()
        };
        let a = links::normalize(&build(&pairs)).unwrap();
        prop_assert_eq!(links::normalize(&a).unwrap(), a.clone());
        pairs.reverse();
        prop_assert_eq!(links::normalize(&build(&pairs)).unwrap(), a.clone());
        prop_assert!(a.fragment().is_none() && a.port().is_none());
    }

    #[test]
    fn gbk_text_survives_undeclared(text in "[\u{4e00}-\u{9fa5}，。！？]{20,200}") {
        let bytes = encoding_rs::GBK.encode(&format!("<html><body><p>{text}</p></body></html>")).0.into_owned();
        let decoded = charset::decode(&bytes, None, Some("cn"));
        prop_assert!(decoded.text.contains(&text), "decoded as {}", decoded.encoding.name());
    }
}

/// A page of nested `div`/`p`/`span` elements with classes `c0`..`c7` and text, and a style
/// sheet of rules over those classes; `with_order` adds `order` declarations.
fn styled_page(with_order: bool, with_hiding: bool) -> impl Strategy<Value = (String, String)> {
    let mut values = vec![
        "display:flex",
        "display:grid",
        "display:inline-flex",
        "display:block",
        "color:red",
        "visibility:visible",
        "font-size:12px",
        "flex-direction:column",
    ];
    if with_order {
        values.extend(["order:1", "order:-2", "order:3"]);
    }
    if with_hiding {
        values.extend(["display:none", "visibility:hidden"]);
    }
    let rule = (0..8usize, proptest::sample::select(values))
        .prop_map(|(class, decl)| format!(".c{class}{{{decl}}}"));
    let rules = proptest::collection::vec(rule, 0..12).prop_map(|r| r.concat());
    let el = (
        proptest::sample::select(vec!["div", "p", "span"]),
        0..8usize,
        "[a-z]{1,6}",
    );
    let body = proptest::collection::vec((el, 0..3usize), 1..40).prop_map(|items| {
        // Each item opens an element; its number says how many open elements to close after.
        let (mut html, mut open) = (String::new(), Vec::new());
        for ((tag, class, text), close) in items {
            html.push_str(&format!("<{tag} class=c{class}>{text} "));
            open.push(tag);
            for _ in 0..close {
                if let Some(t) = open.pop() {
                    html.push_str(&format!("</{t}>"));
                }
            }
        }
        while let Some(t) = open.pop() {
            html.push_str(&format!("</{t}>"));
        }
        html
    });
    (rules, body)
}

fn styled(rules: &str, body: &str) -> scraper::Html {
    scraper::Html::parse_document(&format!(
        "<html><head><style>{rules}</style></head><body>{body}</body></html>"
    ))
}

fn words(doc: &scraper::Html) -> Vec<String> {
    doc.root_element()
        .select(&scraper::Selector::parse("body").unwrap())
        .flat_map(|b| b.text().map(str::to_owned).collect::<Vec<_>>())
        .flat_map(|t| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn css_reordering_is_the_identity_without_order((rules, body) in styled_page(false, false)) {
        let mut doc = styled(&rules, &body);
        let before = doc.html();
        let applied = extract::css::apply(&mut doc, None);
        prop_assert_eq!(applied.reordered, 0);
        prop_assert_eq!(doc.html(), before);
    }

    #[test]
    fn css_keeps_every_word_and_only_moves_siblings((rules, body) in styled_page(true, false)) {
        let mut doc = styled(&rules, &body);
        let mut before = words(&doc);
        extract::css::apply(&mut doc, None);
        let mut after = words(&doc);
        before.sort();
        after.sort();
        prop_assert_eq!(after, before);
    }

    #[test]
    fn css_hiding_keeps_the_rest_in_order((rules, body) in styled_page(false, true)) {
        let mut doc = styled(&rules, &body);
        let before = words(&doc);
        extract::css::apply(&mut doc, None);
        let after = words(&doc);
        // What is left is a subsequence of what was there.
        let mut at = before.iter();
        for w in &after {
            prop_assert!(at.any(|b| b == w), "{w} out of order");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The crawl (with the server's `iso-8859-1` default) and `check` (a file, no header) read
    /// the same GBK bytes the same way.
    #[test]
    fn a_latin1_header_reads_gbk_as_a_file_does(text in "[\u{4e00}-\u{9fa5}，。！？]{20,200}") {
        let bytes = encoding_rs::GBK.encode(&format!("<html><body><p>{text}</p></body></html>")).0.into_owned();
        let file = charset::decode(&bytes, None, None);
        let crawled = charset::decode(&bytes, Some("text/html; charset=iso-8859-1"), None);
        prop_assert_eq!(&crawled.text, &file.text);
        prop_assert!(crawled.text.contains(&text), "decoded as {}", crawled.encoding.name());
    }
}
