//! Queries spent per work registered: how many exact-phrase queries discovery sends before a
//! work's pirate site becomes a candidate. `cargo bench -p pipeline --bench discovery`.
//!
//! Eight works are registered (Chinese in both scripts, and English). Each has a pirate site
//! on 127.0.0.1 that copies every other chapter, disguised as pirates do: converted to the
//! other script, an advertisement every 150 characters, the first lines rewritten; beside
//! the copies, an innocent page. A local search engine answering in SearXNG's JSON format
//! holds every page and returns the ones that contain a query's phrase as the engines'
//! exact-phrase search does (scripts folded, spaces and case ignored: what Baidu and Google
//! do with a quoted phrase). Discovery then runs for each work as its schedule would, one
//! query a run (so the count is exact), until the work's pirate site is a candidate or the
//! work has no phrase left to send. Printed: per work its chapters, phrases and the queries it
//! took; then the mean over the works and how many were found. Nothing is timed: the figure
//! is a count, the same on every machine.

// The tests' sites, imports and handler.
#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, Uri};
use common::{handler, import, site};
use crawler::CrawlSettings;
use discovery::{DiscoverySettings, ProviderKind, ProviderSettings, SearchOptions};
use store::{Discovery, WorkId, WorkReads};

/// Queries a work sends in one run of the bench: one, so the count is exact.
const RUN: u32 = 1;
/// Runs at most before a work counts as not found.
const RUNS: u32 = 100;

const WORKS: [(&str, &str); 8] = [
    (
        "三国演义.txt",
        include_str!("../../bench/data/sanguoyanyi_1-10.txt"),
    ),
    (
        "西游记.txt",
        include_str!("../../bench/data/xiyouji_1-4.txt"),
    ),
    (
        "水浒传.txt",
        include_str!("../../bench/data/shuihuquanzhuan_1-2.txt"),
    ),
    (
        "紅樓夢.txt",
        include_str!("../../bench/data/hongloumeng_hant_1-2.txt"),
    ),
    (
        "封神演義.txt",
        include_str!("../../import/tests/data/fengshenyanyi_hant_1-3.txt"),
    ),
    (
        "老残游记.txt",
        include_str!("../../import/tests/data/laocanyouji_toc_1-2.txt"),
    ),
    ("alice.txt", include_str!("../../bench/data/alice_1-3.txt")),
    (
        "frankenstein.txt",
        include_str!("../../bench/data/frankenstein_1-2.txt"),
    ),
];

/// What the engine compares: simplified script, no white space, lower case.
fn folded(text: &str) -> String {
    zhconv::zhconv(text, zhconv::Variant::ZhHans)
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The text of a pirate page of `chapter`, disguised the `n`th way.
fn pirate_text(chapter: &str, n: usize) -> String {
    let han = chapter
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count()
        > 100;
    let mut text = chapter.to_owned();
    match n % 3 {
        // The other script.
        0 if han => {
            let hant = zhconv::zhconv(&text, zhconv::Variant::ZhHant);
            text = if hant == text {
                zhconv::zhconv(&text, zhconv::Variant::ZhHans)
            } else {
                hant
            };
        }
        // An advertisement every 150 characters.
        1 => {
            let ad = if han {
                "【笔趣阁 biquge.example 最快更新】"
            } else {
                " [read the next chapter first at novelfull.example] "
            };
            let chars: Vec<char> = text.chars().collect();
            text = chars
                .chunks(150)
                .map(|c| c.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join(ad);
        }
        // The first lines rewritten.
        _ => {
            let rest: Vec<&str> = text.lines().skip(3).collect();
            text = format!("本章由网友上传，请支持正版。\n\n{}", rest.join("\n"));
        }
    }
    text
}

/// `text` as a page, a paragraph a line.
fn html(text: &str) -> String {
    let paragraphs: String = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{}</p>", l.trim()))
        .collect();
    format!(
        "<html><head><title>免费阅读</title></head><body><div id=\"content\">{paragraphs}</div>\
         </body></html>"
    )
}

/// The engine's pages: URL and folded text.
type Web = Arc<Mutex<Vec<(String, String)>>>;

/// A SearXNG on 127.0.0.1 answering a quoted phrase with the pages of `web` that hold it (ten
/// at most), counting the queries.
async fn engine(web: Web) -> (String, Arc<Mutex<u64>>) {
    let asked = Arc::new(Mutex::new(0u64));
    let count = Arc::clone(&asked);
    let app = Router::new().fallback(move |uri: Uri| {
        let web = Arc::clone(&web);
        let count = Arc::clone(&count);
        async move {
            *count.lock().unwrap() += 1;
            let query: BTreeMap<String, String> =
                serde_urlencoded::from_str(uri.query().unwrap_or_default()).unwrap_or_default();
            let phrase = folded(query.get("q").map_or("", |q| q.trim_matches('"')));
            let results: Vec<_> = web
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, text)| !phrase.is_empty() && text.contains(&phrase))
                .take(10)
                .map(|(url, _)| {
                    serde_json::json!({"url": url, "title": "", "content": "", "engine": "bing",
                        "engines": ["bing"], "positions": [1], "score": 1.0,
                        "category": "general"})
                })
                .collect();
            let body = serde_json::json!({"query": query.get("q"), "number_of_results": 0,
                "results": results, "answers": [], "corrections": [], "infoboxes": [],
                "suggestions": [], "unresponsive_engines": []});
            (
                StatusCode::OK,
                [("content-type", "application/json")],
                body.to_string(),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), asked)
}

struct Row {
    title: &'static str,
    chapters: usize,
    phrases: usize,
    /// Queries sent until the pirate site was a candidate; `None`: never found.
    queries: Option<u32>,
    sent: u32,
}

async fn run() -> Vec<Row> {
    let db = store::testing::sqlite("bench_discovery").await.unwrap();
    let store = &db.store;
    let mut works: Vec<(&'static str, WorkId)> = Vec::new();
    for (name, text) in WORKS {
        works.push((name, import(store, name, text).await));
    }
    let web: Web = Arc::default();
    let mut pirates = BTreeMap::new();
    for (i, &(_, work)) in works.iter().enumerate() {
        // Path → the page's text.
        let mut texts = BTreeMap::new();
        for (n, info) in store.chapters(work).await.unwrap().iter().enumerate() {
            if n % 2 == 1 || (n == 0 && i % 2 == 0) {
                let body = store.chapter(info.id).await.unwrap().body;
                texts.insert(
                    format!("book/{}/{n}.html", work.0),
                    pirate_text(&body, i + n),
                );
            }
        }
        texts.insert(
            "about.html".to_owned(),
            "本站所有小说均由网友上传，如有侵权请联系删除。".to_owned(),
        );
        let pages = texts.iter().map(|(p, t)| (p.clone(), html(t))).collect();
        let addr = site(pages).await;
        let mut web = web.lock().unwrap();
        for (path, text) in &texts {
            web.push((format!("http://{addr}/{path}"), folded(text)));
        }
        pirates.insert(work, addr.to_string());
    }
    let (endpoint, asked) = engine(Arc::clone(&web)).await;
    let mut settings = DiscoverySettings {
        queries_per_work_per_day: 100_000,
        ..DiscoverySettings::default()
    };
    settings.providers.insert(
        "searxng".into(),
        ProviderSettings::new(ProviderKind::Searxng, Some(endpoint), None),
    );
    let mut crawl = CrawlSettings::default();
    crawl.fetch.safety.allow_private = true;
    crawl.politeness.delay = Duration::from_millis(1);

    let mut rows = Vec::new();
    for (title, work) in works {
        let chapters = store.chapters(work).await.unwrap().len();
        let options = SearchOptions {
            work,
            provider: None,
            max_queries: Some(RUN),
            allow_private: true,
        };
        let mut row = Row {
            title,
            chapters,
            phrases: 0,
            queries: None,
            sent: 0,
        };
        for _ in 0..RUNS {
            let report = discovery::search_work(store, &settings, &crawl, handler(store), &options)
                .await
                .unwrap();
            row.phrases = report.phrases;
            row.sent += report.sent;
            let found = store
                .candidates(None)
                .await
                .unwrap()
                .iter()
                .any(|c| c.domain == pirates[&work]);
            if found {
                row.queries = Some(row.sent);
                break;
            }
            if report.sent == 0 {
                break;
            }
        }
        rows.push(row);
    }
    let engine_saw = *asked.lock().unwrap();
    let sent: u32 = rows.iter().map(|r| r.sent).sum();
    assert_eq!(
        u64::from(sent),
        engine_saw,
        "every query sent reached the engine"
    );
    rows
}

fn main() {
    // `cargo test --benches` runs every bench once with `--bench` absent: the figures are
    // counts, quick to get, so the run is the same.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rows = runtime.block_on(run());
    println!("discovery: queries sent until a work's pirate site is a candidate ({RUN} a run)");
    println!("work\tchapters\tphrases\tqueries");
    for r in &rows {
        let queries = r
            .queries
            .map_or(format!("not found after {}", r.sent), |q| q.to_string());
        println!("{}\t{}\t{}\t{}", r.title, r.chapters, r.phrases, queries);
    }
    let found: Vec<u32> = rows.iter().filter_map(|r| r.queries).collect();
    let spent: u32 = rows.iter().map(|r| r.sent).sum();
    println!(
        "found {}/{} works; queries spent per work registered: {:.1} (per work found: {:.1})",
        found.len(),
        rows.len(),
        f64::from(spent) / rows.len() as f64,
        f64::from(found.iter().sum::<u32>()) / found.len().max(1) as f64,
    );
}
