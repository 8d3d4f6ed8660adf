//! Properties of the bounded parser and the decoder over generated input: tag soup, arbitrary
//! strings and byte soup. A few thousand cases run with the tests; the `#[ignore]`d twins run
//! 10^5 each (`cargo test --release -p ingest --test properties -- --ignored`).

use ingest::charset;
use ingest::html::{HtmlLimits, parse_document};
use proptest::prelude::*;
use scraper::Html;

/// Cases per property in the ordinary run, and in the long one.
const CASES: u32 = 2_000;
const LONG_CASES: u32 = 100_000;

/// Tag soup: start and end tags of elements with special parsing rules (implied ends,
/// formatting, tables, raw text), attributes, text and comments, in any order.
fn tag_soup() -> impl Strategy<Value = String> {
    let tag = prop::sample::select(vec![
        "div", "p", "span", "b", "i", "a", "font", "li", "ul", "ol", "dl", "dd", "dt", "table",
        "tr", "td", "th", "br", "h1", "h2", "section", "em", "strong", "script", "title", "select",
        "option", "button", "pre", "form", "nobr", "u", "html", "body", "head",
    ]);
    let attrs = prop::collection::vec(
        prop::sample::select(vec![
            " id=x",
            " class=\"a b\"",
            " href=/1",
            " style=\"x>y\"",
        ]),
        0..3,
    );
    let token = prop_oneof![
        3 => (tag.clone(), attrs).prop_map(|(t, a)| format!("<{t}{}>", a.concat())),
        2 => tag.prop_map(|t| format!("</{t}>")),
        3 => prop::sample::select(vec!["第一章", "话说天下", "text", " ", "a<b", "&amp;", "\n"])
            .prop_map(str::to_owned),
        1 => Just("<!-- c -->".to_owned()),
    ];
    prop::collection::vec(token, 0..80).prop_map(|t| t.concat())
}

/// With no limit reached, the guards change nothing: the DOM is the standard parser's.
fn guards_change_nothing_below_the_limits(html: &str) {
    let limits = HtmlLimits {
        max_open_formatting: 1_000,
        ..HtmlLimits::default()
    };
    let parsed = parse_document(html, &limits, None);
    if parsed.flattened > 0 || parsed.attributes_cut > 0 {
        return; // a limit was reached: not this property's case
    }
    assert_eq!(parsed.exceeded, None);
    assert_eq!(
        parsed.html.html(),
        Html::parse_document(html).html(),
        "input: {html:?}"
    );
}

/// Any input parses, to a tree no deeper than the limit allows (the tree builder adds a few
/// implied elements of its own).
fn any_input_parses_within_bounds(html: &str, depth: usize) {
    let limits = HtmlLimits {
        max_depth: depth,
        max_open_formatting: 4,
        ..HtmlLimits::default()
    };
    let parsed = parse_document(html, &limits, None);
    let deepest = parsed
        .html
        .tree
        .nodes()
        .map(|n| n.ancestors().count())
        .max()
        .unwrap_or(0);
    assert!(deepest <= 3 * depth + 16, "depth {deepest} for {html:?}");
}

/// Any bytes decode; valid UTF-8 comes back unchanged.
fn any_bytes_decode(bytes: &[u8]) {
    let d = charset::decode(bytes, None, None);
    assert!(d.replaced <= bytes.len());
    assert_eq!(d.had_errors, d.replaced > 0);
}

fn valid_utf8_is_kept(text: &str) {
    let d = charset::decode(text.as_bytes(), None, None);
    if !text.is_ascii() {
        assert_eq!(d.encoding, encoding_rs::UTF_8, "{text:?}");
    }
    assert_eq!(d.text, text.strip_prefix('\u{FEFF}').unwrap_or(text));
    assert_eq!(d.replaced, 0);
}

/// One stray byte in a Chinese UTF-8 text keeps UTF-8 and becomes one U+FFFD.
fn a_stray_byte_keeps_utf8(text: &str, at: usize, stray: u8) {
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let at = boundaries[at % boundaries.len()];
    let mut bytes = text.as_bytes().to_vec();
    bytes.insert(at, stray);
    let d = charset::decode(&bytes, None, None);
    assert_eq!(
        d.encoding,
        encoding_rs::UTF_8,
        "stray {stray:#x} at byte {at} of {text}"
    );
    assert_eq!(d.replaced, 1);
}

fn chinese_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(
            "话说天下大势分久必合合久必分周末七国分争并入于秦及灭之后楚汉又，。"
                .chars()
                .collect::<Vec<_>>(),
        ),
        24..200,
    )
    .prop_map(|c| c.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn soup_parses_as_the_standard_says(html in tag_soup()) {
        guards_change_nothing_below_the_limits(&html);
    }

    #[test]
    fn soup_parses_within_bounds(html in tag_soup(), depth in 1usize..16) {
        any_input_parses_within_bounds(&html, depth);
    }

    #[test]
    fn strings_parse_within_bounds(html in any::<String>(), depth in 1usize..16) {
        any_input_parses_within_bounds(&html, depth);
    }

    #[test]
    fn byte_soup_decodes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        any_bytes_decode(&bytes);
    }

    #[test]
    fn utf8_decodes_unchanged(text in "[^<]{0,300}") {
        valid_utf8_is_kept(&text);
    }

    #[test]
    fn damaged_utf8_stays_utf8(text in chinese_text(), at in any::<usize>(), stray in 0x80u8..=0xFF) {
        a_stray_byte_keeps_utf8(&text, at, stray);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(LONG_CASES))]

    #[test]
    #[ignore = "long: 10^5 cases each"]
    fn long_soup_parses_as_the_standard_says(html in tag_soup()) {
        guards_change_nothing_below_the_limits(&html);
    }

    #[test]
    #[ignore = "long: 10^5 cases each"]
    fn long_soup_and_strings_parse_within_bounds(
        html in tag_soup(), text in any::<String>(), depth in 1usize..16
    ) {
        any_input_parses_within_bounds(&html, depth);
        any_input_parses_within_bounds(&text, depth);
    }

    #[test]
    #[ignore = "long: 10^5 cases each"]
    fn long_bytes_decode(bytes in prop::collection::vec(any::<u8>(), 0..4096), text in "[^<]{0,300}") {
        any_bytes_decode(&bytes);
        valid_utf8_is_kept(&text);
    }

    #[test]
    #[ignore = "long: 10^5 cases each"]
    fn long_damaged_utf8_stays_utf8(text in chinese_text(), at in any::<usize>(), stray in 0x80u8..=0xFF) {
        a_stray_byte_keeps_utf8(&text, at, stray);
    }
}
