//! Text that only a browser shows (issue #27): pages whose inline scripts build the text at
//! load time, run in the sandbox, and pages whose own CSS orders or hides what they show.

mod common;

use std::time::{Duration, Instant};

use extract::page::Method;
use extract::{ExtractSettings, Extracted, Extractor, PageKind, ScriptSettings, TextSource};
use url::Url;

const CHAPTER: &str = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。";

fn url() -> Url {
    Url::parse("https://pirate.example/book/1.html").unwrap()
}

fn page(body: &str) -> String {
    format!(
        "<html><head><title>第一回</title></head><body><div class=nav><a href=/>首页</a> <a href=/2.html>下一章</a></div><div id=content></div>{body}</body></html>"
    )
}

/// Extraction with the default settings but a wall-time budget for scripts that a busy test
/// machine cannot reach: their work budget ends them.
fn extract(html: &str, url: &Url) -> Extracted {
    let settings = ExtractSettings {
        scripts: ScriptSettings {
            time_budget: Duration::from_secs(30),
            ..ScriptSettings::default()
        },
        ..ExtractSettings::default()
    };
    Extractor::new(&settings).unwrap().extract(html, url)
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn text_built_by_scripts_is_the_pages_text() {
    for (what, html) in common::built_pages(CHAPTER) {
        let e = extract(&html, &url());
        assert_eq!(e.kind, PageKind::Content, "{what}");
        assert_eq!(e.source, TextSource::Script, "{what}");
        assert_eq!(e.method, Method::Script, "{what}");
        assert_eq!(squash(&e.text()), squash(CHAPTER), "{what}");
    }
}

#[test]
fn hostile_scripts_end_within_the_budget_and_keep_what_was_written() {
    let write = format!(
        "<script>document.getElementById('content').innerHTML = String.fromCharCode.apply(null, [{}]);</script>",
        common::char_codes(&format!("<p>{CHAPTER}</p>"))
    );
    for hostile in [
        "while (true) {}",
        "(function f() { return f() + 1; })();",
        "var s = 'x'; while (true) { s += s; }",
        "var a = []; for (;;) { a.push(new Array(1e6).join('z')); }",
        "Object.defineProperty(Object.prototype, 'innerHTML', { set: function () { throw 1; } }); String.prototype.split = function () { return []; }; Array.prototype.join = null; document.getElementById = null;",
        "Object.defineProperty(Array.prototype, '0', { set: function () {} }); Object.prototype.__proto__ = null;",
        "setTimeout(function f() { setTimeout(f); while (true) {} });",
        "document.write('<div>'.repeat(1e6));",
    ] {
        let html = page(&format!("{write}<script>{hostile}</script>"));
        let started = Instant::now();
        let e = extract(&html, &url());
        // The work budget ended it, not the 30 s backstop.
        assert!(started.elapsed() < Duration::from_secs(20), "{hostile}");
        assert_eq!(e.source, TextSource::Script, "{hostile}");
        assert_eq!(squash(&e.text()), squash(CHAPTER), "{hostile}");
    }
}

#[test]
fn pages_with_text_of_their_own_run_no_script() {
    // A script that would write another text is not run on a page holding a chapter.
    let chapter = CHAPTER.repeat(2);
    let html = format!(
        "<html><body><div id=content><p>{chapter}</p></div><script>document.getElementById('content').innerHTML = 'x'.repeat(5000);</script></body></html>"
    );
    let e = extract(&html, &url());
    assert_eq!(e.source, TextSource::Markup);
    assert_eq!(squash(&e.text()), squash(&chapter));
}

#[test]
fn css_order_puts_shuffled_paragraphs_and_phrases_back() {
    let phrases: Vec<&str> = CHAPTER.split_inclusive(['，', '。']).collect();
    // Shuffled: odd phrases first, then even ones; each says where it belongs.
    let mut spans = String::new();
    for i in (1..phrases.len())
        .step_by(2)
        .chain((0..phrases.len()).step_by(2))
    {
        spans += &format!("<span class=h{i}>{}</span>", phrases[i]);
    }
    let style: String = (0..phrases.len())
        .map(|i| format!(".h{i}{{order:{i}}}"))
        .collect();
    let html = format!(
        "<html><head><style>.line{{display:flex;flex-wrap:wrap}}{style}</style></head><body><div id=content><div class=line>{spans}</div></div></body></html>"
    );
    let e = extract(&html, &url());
    assert_eq!(squash(&e.text()), squash(CHAPTER));

    let paragraphs = [
        "第一段话说天下大势，分久必合。",
        "第二段周末七国分争，并入于秦。",
        "第三段及秦灭之后，楚、汉分争。",
    ];
    let html = format!(
        "<html><head><style>#content{{display:flex;flex-direction:column}}.a{{order:1}}.b{{order:2}}.c{{order:3}}.junk{{display:none}}</style></head><body><div id=content><p class=c>{}</p><p class=a>{}<span class=junk>盗版</span></p><p class=b>{}</p></div></body></html>",
        paragraphs[2], paragraphs[0], paragraphs[1]
    );
    let e = extract(&html, &url());
    assert_eq!(e.paragraphs, paragraphs);
}
