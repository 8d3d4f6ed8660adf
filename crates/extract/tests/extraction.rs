//! Main-text extraction on the real captured pages (`tests/data/html`) and on fixture pages
//! in common novel-site layouts, with the quality measure: recovered chapter characters and
//! boilerplate characters in the output, printed per page (`-- --nocapture`) and checked
//! against the targets (≥ 95 % recovered, ≤ 5 % boilerplate).

mod common;

use common::{Chapter, Nav, Quality, data, en_chapter, gbk, quality, zh_chapter};
use extract::page::Method;
use extract::{PageKind, charset, extract};
use url::Url;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

/// The synopsis of the real biquge.info book page, written down after reading the page: the
/// four paragraphs of `<div id="intro">`, without the site's "本站提示" line.
const TOC_SYNOPSIS: [&str; 4] = [
    "重生在封神大战之前的上古时代，李长寿成了一个小小的炼气士，没有什么气运加身，也不是什么注定的大劫之子，他只有一个想要长生不老的修仙梦。",
    "为了能在残酷的洪荒安身立命，他努力不沾因果，杀人必扬其灰，凡事谋而后动，从不轻易步入危险之中。",
    "藏底牌，修遁术，炼丹毒，掌神通，不动稳如老狗，一动石破天惊，动后悄声走人。",
    "本来李长寿规划中，自己会一直躲在山中平安无事的修行成仙，直到有一年，他的老师父静极思动，又给他……收了个师妹回来……【PS：双开爆肝，轻松修仙，主写隔壁第一剑~】",
];

#[test]
fn real_book_page_is_an_index_with_its_synopsis() {
    let html = data("html/biquge_info_book_toc.html");
    let e = extract(&html, &url("http://www.biquge.info/74_74132/"));
    assert_eq!(e.kind, PageKind::Index);
    assert_eq!(
        e.title.as_deref(),
        Some("我师兄实在太稳健了最新章节列表_我师兄实在太稳健了最新章节目录_笔趣阁")
    );
    assert_eq!(
        e.headings.first().map(String::as_str),
        Some("我师兄实在太稳健了")
    );
    assert_eq!(e.paragraphs, TOC_SYNOPSIS);
    assert_eq!(e.method, Method::Density);
    let chapter_links = e
        .links
        .iter()
        .filter(|l| extract::page::is_chapter_heading(&l.text))
        .count();
    assert!(chapter_links >= 650, "{chapter_links} chapter links");
    assert!(e.links.iter().any(|l| l.url.as_str()
        == "http://www.biquge.info/74_74132/14482860.html"
        && l.text == "第一章 小小灵娥"));
    assert_eq!((e.next_page, e.next_chapter), (None, None));
}

#[test]
fn real_redirect_stub_points_to_the_book() {
    let html = data("html/biquge_info_js_redirect_stub.html");
    let e = extract(&html, &url("http://www.biquge.info/74_74132/"));
    assert_eq!(e.kind, PageKind::Redirect);
    assert_eq!(
        e.redirect_to,
        Some(url("http://www.biquge.info/74_74132/?kabcja=odc5d1"))
    );
    assert!(e.paragraphs.is_empty());
}

#[test]
fn real_cloudflare_challenge_is_recognised_and_yields_no_text() {
    let html = data("html/69shuba_cloudflare_challenge.html");
    let e = extract(&html, &url("https://www.69shuba.com/txt/1/1"));
    assert_eq!(e.kind, PageKind::Challenge);
    assert_eq!(e.title.as_deref(), Some("Just a moment..."));
    assert!(e.paragraphs.is_empty());
    assert!(e.nofollow && e.noindex);
}

fn nav(next_label: &'static str) -> Nav {
    Nav {
        prev: "/b/1/1.html".into(),
        toc: "/b/1/".into(),
        next: "/b/1/3.html".into(),
        next_label,
    }
}

struct Case {
    name: String,
    expected: String,
    output: String,
}

fn fixture_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut push = |name: String, ch: &Chapter, html: &[u8], content_type: &str, url_: &str| {
        let decoded = charset::decode(html, Some(content_type), None);
        assert!(!decoded.had_errors, "{name}");
        let e = extract(&decoded.text, &url(url_));
        assert_eq!(e.kind, PageKind::Content, "{name}");
        cases.push(Case {
            name,
            expected: ch.text(),
            output: e.text(),
        });
    };
    for i in 1..=6 {
        let ch = zh_chapter(&format!("sanguoyanyi_{i:02}"));
        let html =
            common::div_br_page("b/1", &ch.title, &ch.paragraphs, &nav("下一章"), None, None);
        push(
            format!("div+br gbk, no charset: sanguoyanyi {i}"),
            &ch,
            &gbk(&html),
            "text/html",
            "http://x.example/b/1/2.html",
        );
    }
    let xiyou = zh_chapter("xiyouji_01");
    let html = common::div_br_page(
        "b/2",
        &xiyou.title,
        &xiyou.paragraphs,
        &nav("下一章"),
        Some("gbk"),
        None,
    );
    push(
        "div+br gbk, meta charset: xiyouji 1".into(),
        &xiyou,
        &gbk(&html),
        "text/html",
        "http://x.example/b/2/1.html",
    );
    let html = common::table_page(&xiyou.title, &xiyou.paragraphs, &nav("下一页"));
    push(
        "table: xiyouji 1".into(),
        &xiyou,
        html.as_bytes(),
        "text/html; charset=utf-8",
        "http://x.example/t/1.html",
    );
    let sanguo4 = zh_chapter("sanguoyanyi_04");
    let html = common::p_article_page(&sanguo4.title, &sanguo4.paragraphs, &nav("下一章"));
    push(
        "p article: sanguoyanyi 4".into(),
        &sanguo4,
        html.as_bytes(),
        "text/html",
        "http://x.example/p/4.html",
    );
    for (i, name) in ["alice_01", "alice_02"].iter().enumerate() {
        let ch = en_chapter(name);
        let html = common::p_article_page(&ch.title, &ch.paragraphs, &nav("Next chapter"));
        push(
            format!("p article: alice {}", i + 1),
            &ch,
            html.as_bytes(),
            "text/html",
            "http://x.example/a/1.html",
        );
        let html = common::table_page(&ch.title, &ch.paragraphs, &nav("下一页"));
        push(
            format!("table: alice {}", i + 1),
            &ch,
            html.as_bytes(),
            "text/html",
            "http://x.example/a/2.html",
        );
    }
    for i in [2, 5] {
        let ch = zh_chapter(&format!("sanguoyanyi_{i:02}"));
        let html = common::txtnav_page(&ch.title, &ch.paragraphs, &nav("下一章"));
        push(
            format!("69shu txtnav gbk: sanguoyanyi {i}"),
            &ch,
            &gbk(&html),
            "text/html",
            "http://x.example/txt/1/2",
        );
        let html = common::mobile_page(&ch.title, &ch.paragraphs, &nav("下一章"));
        push(
            format!("mobile #nr1 + blurbs: sanguoyanyi {i}"),
            &ch,
            html.as_bytes(),
            "text/html",
            "http://m.x.example/1/2.html",
        );
        let html = common::reader_page(&ch.title, &ch.paragraphs, &nav("下一章"));
        push(
            format!("reader + comments + recs: sanguoyanyi {i}"),
            &ch,
            html.as_bytes(),
            "text/html",
            "http://x.example/chapter/1/2",
        );
    }
    let alice = en_chapter("alice_02");
    let html = common::reader_page(&alice.title, &alice.paragraphs, &nav("Next"));
    push(
        "reader + comments + recs: alice 2".into(),
        &alice,
        html.as_bytes(),
        "text/html",
        "http://x.example/chapter/2/2",
    );
    let book = common::book();
    for part in 1..=3 {
        let html = common::book_page(&book, 3, part);
        let expected = common::split_chapter(&book[2])[part - 1].join("\n");
        let e = extract(
            &charset::decode(&gbk(&html), None, None).text,
            &url("http://x.example/book/1/3.html"),
        );
        cases.push(Case {
            name: format!("split chapter page {part}/3: sanguoyanyi 3"),
            expected,
            output: e.text(),
        });
    }
    cases
}

#[test]
fn extraction_quality_meets_the_targets() {
    let mut cases = fixture_cases();
    let toc = extract(
        &data("html/biquge_info_book_toc.html"),
        &url("http://www.biquge.info/74_74132/"),
    );
    cases.push(Case {
        name: "real: biquge.info book page (synopsis)".into(),
        expected: TOC_SYNOPSIS.join("\n"),
        output: toc.text(),
    });
    for (name, file) in [
        (
            "real: biquge.info js redirect stub",
            "html/biquge_info_js_redirect_stub.html",
        ),
        (
            "real: 69shuba cloudflare challenge",
            "html/69shuba_cloudflare_challenge.html",
        ),
    ] {
        let e = extract(&data(file), &url("http://www.example.com/"));
        cases.push(Case {
            name: name.into(),
            expected: String::new(),
            output: e.text(),
        });
    }

    println!(
        "{:<46} {:>8} {:>8} {:>9} {:>12}",
        "page", "expected", "output", "recovered", "boilerplate"
    );
    let (mut exp_total, mut rec_total, mut out_total, mut junk_total) = (0.0, 0.0, 0.0, 0.0);
    let mut failures = Vec::new();
    for c in &cases {
        let Quality {
            expected_chars,
            output_chars,
            recall,
            boilerplate,
        } = quality(&c.expected, &c.output);
        println!(
            "{:<46} {:>8} {:>8} {:>8.1}% {:>11.1}%",
            c.name,
            expected_chars,
            output_chars,
            recall * 100.0,
            boilerplate * 100.0
        );
        exp_total += expected_chars as f64;
        rec_total += recall * expected_chars as f64;
        out_total += output_chars as f64;
        junk_total += boilerplate * output_chars as f64;
        if recall < 0.95 || boilerplate > 0.05 {
            failures.push(c.name.clone());
        }
    }
    println!(
        "{:<46} {:>8} {:>8} {:>8.1}% {:>11.1}%",
        "all pages (character-weighted)",
        exp_total,
        out_total,
        100.0 * rec_total / exp_total,
        100.0 * junk_total / out_total.max(1.0)
    );
    assert!(failures.is_empty(), "below target: {failures:?}");
}

#[test]
fn quality_measure_behaves() {
    let q = quality(
        "一二三四五六七八九十甲乙丙丁",
        "一二三四五六七八九十甲乙丙丁",
    );
    assert_eq!((q.recall, q.boilerplate), (1.0, 0.0));
    let q = quality(
        "一二三四五六七八九十甲乙丙丁",
        "广告广告广告广告一二三四五六七八九十甲乙丙丁",
    );
    assert_eq!(q.recall, 1.0);
    assert!((q.boilerplate - 8.0 / 22.0).abs() < 1e-9);
    let q = quality("一二三四五六七八九十甲乙丙丁", "");
    assert_eq!(q.recall, 0.0);
}
