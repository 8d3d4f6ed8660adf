//! What reading the text a browser shows costs (issue #27): pages whose inline scripts build
//! their text, run in the sandbox, beside the same chapter in markup (which runs no script),
//! and the page's CSS applied to a page without `order`.
//!
//! `cargo bench -p extract --bench rendered` (release build) times whole extractions with
//! criterion. `cargo bench -p extract --bench rendered -- --p99 N` extracts each page N times
//! (default 2,000) and prints the 50th and 99th percentiles of one extraction, and of the
//! sandbox alone (`extract::js::evaluate` over the page's scripts): the target is ≤ 5 ms p99
//! added per page that needs it, and nothing added to a page that does not.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use extract::js::{PageElement, ScriptSettings, evaluate};

fn url() -> url::Url {
    url::Url::parse("http://x.example/book/1/2.html").unwrap()
}

/// The chapter as one paragraph, and the pages: in markup, and built by each kind of script.
fn pages() -> Vec<(String, String)> {
    let ch = common::zh_chapter("sanguoyanyi_02");
    let text = ch.paragraphs.join("");
    let mut pages = vec![(
        "markup (no script run)".to_owned(),
        format!(
            "<html><body><div id=content><p>{text}</p></div><script>var x = 1;</script></body></html>"
        ),
    )];
    for (what, html) in common::built_pages(&text) {
        pages.push((format!("script-built: {what}"), html));
    }
    pages
}

fn extraction(c: &mut Criterion) {
    let url = url();
    let mut group = c.benchmark_group("rendered text");
    for (name, html) in pages() {
        group.bench_function(&name, |b| {
            b.iter(|| black_box(extract::extract(black_box(&html), &url)))
        });
    }
    group.finish();
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// The scripts of `html` as extraction hands them to the sandbox.
fn scripts(html: &str) -> Vec<String> {
    let doc = scraper::Html::parse_document(html);
    let sel = scraper::Selector::parse("script").unwrap();
    doc.root_element()
        .select(&sel)
        .map(|s| s.text().collect())
        .collect()
}

fn p99(n: usize) {
    let url = url();
    let elements = vec![PageElement {
        tag: "div".into(),
        id: Some("content".into()),
        classes: vec![],
        canvas: None,
    }];
    let settings = ScriptSettings::default();
    println!("| page | extraction p50 | extraction p99 | sandbox p50 | sandbox p99 |");
    println!("|---|---:|---:|---:|---:|");
    // The sandbox's fixed cost: an engine, a context and the prelude, no script.
    let mut empty: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            black_box(evaluate(&[], &elements, &settings, None));
            t.elapsed()
        })
        .collect();
    empty.sort_unstable();
    println!(
        "| (no script: the sandbox alone) | – | – | {:.2?} | {:.2?} |",
        percentile(&empty, 0.5),
        percentile(&empty, 0.99)
    );
    for (name, html) in pages() {
        let mut whole = Vec::with_capacity(n);
        let mut sandbox = Vec::with_capacity(n);
        let scripts = scripts(&html);
        for _ in 0..n {
            let t = Instant::now();
            black_box(extract::extract(&html, &url));
            whole.push(t.elapsed());
            if name.starts_with("script") {
                let t = Instant::now();
                black_box(evaluate(&scripts, &elements, &settings, None));
                sandbox.push(t.elapsed());
            }
        }
        whole.sort_unstable();
        sandbox.sort_unstable();
        let (s50, s99) = if sandbox.is_empty() {
            ("–".to_owned(), "–".to_owned())
        } else {
            (
                format!("{:.2?}", percentile(&sandbox, 0.5)),
                format!("{:.2?}", percentile(&sandbox, 0.99)),
            )
        };
        println!(
            "| {name} | {:.2?} | {:.2?} | {s50} | {s99} |",
            percentile(&whole, 0.5),
            percentile(&whole, 0.99)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--p99") {
        let n = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(2_000);
        p99(n);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    extraction(&mut c);
    c.final_summary();
}
