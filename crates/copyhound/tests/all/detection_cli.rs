//! The whole product over HTTP, as a rights team runs it, on both backends: the sample
//! novels are registered with `works import`, a pirate site on 127.0.0.1 serves every evasion
//! the quality benchmark makes (verbatim, ads, the other script, homophones, character edits,
//! chapters split over pages and merged, partial copies) beside negatives (unregistered
//! chapters of the same novels, other novels, pages quoting a sentence or two), and a licensed
//! mirror serves a few of the same pages. `crawl` then `reports export` must give exactly the
//! (page, chapter) pairs the pages were made from, and `cases list` one case per work copied.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;

use crate::common;

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bench::{Case, Corpus, PiratePage, pirate_pages};
use common::{json, lines, ok};
use matcher::ChapterId;

/// The sample novels kept in the repository.
const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../matcher/tests/data");
/// Pages made of each case.
const PER_CASE: usize = 3;
/// Pages of the pirate site the licensed mirror serves too.
const MIRRORED: usize = 4;

/// A page as served: its bytes and the charset its header names (if any).
struct Served {
    bytes: Vec<u8>,
    content_type: &'static str,
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Page `n` in one of three layouts and encodings: lines in a `<div id="content">` with
/// `<br>`, paragraphs in an `<article>` in GB18030 declared by a `<meta>`, and paragraphs in
/// GB18030 declared by the header alone; each with navigation and a footer of links.
fn render(page: &PiratePage, n: usize) -> Served {
    let nav = format!(
        "<div class=\"nav\"><a href=\"/\">目录</a> <a href=\"/p/{}.html\">上一章</a> \
         <a href=\"/p/{}.html\">下一章</a></div>",
        n.saturating_sub(1),
        n + 1
    );
    let footer = "<div class=\"footer\"><a href=\"/\">首页</a> 本站所有小说均来自网友上传 \
                  <a href=\"/about\">关于我们</a></div>";
    let paragraphs: String = page
        .text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{}</p>\n", escape(l)))
        .collect();
    match n % 3 {
        0 => {
            let lines: Vec<String> = page.text.lines().map(escape).collect();
            let html = format!(
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第{n}页</title>\
                 </head><body>{nav}<div id=\"content\">{}</div>{nav}{footer}</body></html>",
                lines.join("<br>\n")
            );
            Served {
                bytes: html.into_bytes(),
                content_type: "text/html; charset=utf-8",
            }
        }
        1 => {
            let html = format!(
                "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; \
                 charset=gb18030\"><title>第{n}页</title></head><body>{nav}\
                 <article>{paragraphs}</article>{footer}</body></html>"
            );
            Served {
                bytes: encoding_rs::GB18030.encode(&html).0.into_owned(),
                content_type: "text/html",
            }
        }
        _ => {
            let html = format!(
                "<html><head><title>第{n}页</title></head><body><main>{nav}\
                 <section class=\"chapter\">{paragraphs}</section></main>{footer}</body></html>"
            );
            Served {
                bytes: encoding_rs::GB18030.encode(&html).0.into_owned(),
                content_type: "text/html; charset=GB18030",
            }
        }
    }
}

/// The site: `/` links every page (the licensed mirror, reached as `localhost`, only its
/// first [`MIRRORED`]), `/p/N.html` is page N.
#[derive(Clone)]
struct Site {
    pages: Arc<Vec<Served>>,
}

fn is_mirror(headers: &HeaderMap) -> bool {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h.starts_with("localhost"))
}

fn listed(site: &Site, headers: &HeaderMap) -> usize {
    if is_mirror(headers) {
        MIRRORED
    } else {
        site.pages.len()
    }
}

async fn index(State(site): State<Site>, headers: HeaderMap) -> Response {
    let links: String = (0..listed(&site, &headers))
        .map(|i| format!("<li><a href=\"/p/{i}.html\">第{i}章</a></li>\n"))
        .collect();
    let html = format!(
        "<html><head><meta charset=\"utf-8\"><title>目录</title></head><body><h1>全部章节</h1>\
         <ul>{links}</ul></body></html>"
    );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

async fn page(
    State(site): State<Site>,
    headers: HeaderMap,
    UrlPath(name): UrlPath<String>,
) -> Response {
    let n = name
        .strip_suffix(".html")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n < listed(&site, &headers));
    match n {
        Some(n) => {
            let served = &site.pages[n];
            (
                [(header::CONTENT_TYPE, served.content_type)],
                served.bytes.clone(),
            )
                .into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn serve(pages: Vec<Served>) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = Router::new()
        .route("/", axum::routing::get(index))
        .route("/p/{name}", axum::routing::get(page))
        .with_state(Site {
            pages: Arc::new(pages),
        });
    common::serve(app).await
}

/// Registers the corpus's registered chapters, one file a novel, with `works import`;
/// returns where each chapter landed: (work id, 1-based chapter index).
async fn register(
    db: &str,
    corpus: &Corpus,
    dir: &std::path::Path,
) -> HashMap<ChapterId, (i64, u64)> {
    let mut novels: BTreeMap<&str, Vec<_>> = BTreeMap::new();
    for c in &corpus.registered {
        novels.entry(c.work_title.as_str()).or_default().push(c);
    }
    let mut files = Vec::new();
    for (title, chapters) in &novels {
        let path = dir.join(format!("{title}.txt"));
        let text: String = chapters.iter().map(|c| c.text.as_str()).collect();
        std::fs::write(&path, text).unwrap();
        files.push(path.display().to_string());
    }
    let mut args = vec!["works", "import"];
    args.extend(files.iter().map(String::as_str));
    ok(db, &args).await;

    let works = json(db, &["works", "list", "--json"]).await;
    let mut at = HashMap::new();
    for work in works.as_array().unwrap() {
        let title = work["title"].as_str().unwrap();
        let chapters = &novels[title];
        // The import found the chapters the corpus has, in the same order.
        assert_eq!(
            work["chapters"].as_u64(),
            Some(chapters.len() as u64),
            "{work}"
        );
        for (i, c) in chapters.iter().enumerate() {
            at.insert(c.id, (work["id"].as_i64().unwrap(), i as u64 + 1));
        }
    }
    assert_eq!(at.len(), corpus.registered.len());
    at
}

/// (URL, work id, chapter index, licensed) of each record of `reports export`.
type Pair = (String, i64, u64, bool);

async fn pirate_site_to_report(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    // Whole chapters: the import cuts at headings, as the corpus does with no size limit.
    let corpus = Corpus::load(std::path::Path::new(SAMPLE), usize::MAX).unwrap();
    let pages = pirate_pages(&corpus, PER_CASE, 7);
    for case in Case::ALL {
        assert!(
            pages.iter().any(|p| p.case == case),
            "no page of {case:?}: the sample is too small for it"
        );
    }
    let at = register(db, &corpus, dir.path()).await;
    let (addr, _stop) = serve(
        pages
            .iter()
            .enumerate()
            .map(|(n, p)| render(p, n))
            .collect(),
    )
    .await;
    let pirate = format!("http://{addr}/");
    let mirror = format!("http://localhost:{}/", addr.port());
    ok(db, &["licensed", "add", "localhost"]).await;

    let mut expected: BTreeSet<Pair> = BTreeSet::new();
    for (n, page) in pages.iter().enumerate() {
        for chapter in &page.expected {
            let (work, index) = at[chapter];
            expected.insert((format!("{pirate}p/{n}.html"), work, index, false));
            if n < MIRRORED {
                expected.insert((format!("{mirror}p/{n}.html"), work, index, true));
            }
        }
    }
    assert!(
        (0..MIRRORED).any(|n| !pages[n].expected.is_empty()),
        "the mirror serves no copy"
    );

    for seed in [&pirate, &mirror] {
        let s = json(db, &["crawl", seed, "--allow-private", "--json"]).await;
        assert_eq!(s["status"], "done", "{s}");
        assert_eq!(s["match_jobs_left"], 0, "{s}");
    }

    let records = lines(&ok(db, &["reports", "export"]).await);
    let found: BTreeSet<Pair> = records
        .iter()
        .map(|r| {
            (
                r["url"].as_str().unwrap().to_owned(),
                r["work_id"].as_i64().unwrap(),
                r["chapter_index"].as_u64().unwrap(),
                r["licensed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(found.len(), records.len(), "a pair exported twice");
    let case_of = |url: &str| {
        let n: usize = url
            .rsplit('/')
            .next()
            .and_then(|f| f.strip_suffix(".html"))
            .and_then(|n| n.parse().ok())
            .unwrap();
        format!("{:?} ({})", pages[n].case, pages[n].origin)
    };
    let missed: Vec<_> = expected
        .difference(&found)
        .map(|p| (p, case_of(&p.0)))
        .collect();
    let wrong: Vec<_> = found
        .difference(&expected)
        .map(|p| (p, case_of(&p.0)))
        .collect();
    assert!(
        missed.is_empty() && wrong.is_empty(),
        "missed: {missed:#?}\nreported wrongly: {wrong:#?}"
    );
    for r in &records {
        assert_eq!(r["case_id"].is_null(), r["licensed"] == true, "{r}");
        assert_eq!(r["snapshot_sha256"].as_str().unwrap().len(), 64, "{r}");
        let coverage = r["coverage"].as_f64().unwrap();
        assert!(coverage > 0.0 && coverage <= 1.0, "{r}");
        assert!(r["matched_chars"].as_u64().unwrap() > 0, "{r}");
        assert!(!r["spans"].as_array().unwrap().is_empty(), "{r}");
        assert!(!r["chapter_title"].as_str().unwrap().is_empty(), "{r}");
    }

    // One case a work copied on the pirate site, with its pages and chapters; none for the
    // licensed mirror, none for a page that only quotes.
    let mut want: BTreeMap<i64, (BTreeSet<&str>, BTreeSet<u64>)> = BTreeMap::new();
    for (url, work, index, licensed) in &expected {
        if !licensed {
            let entry = want.entry(*work).or_default();
            entry.0.insert(url);
            entry.1.insert(*index);
        }
    }
    let cases = json(db, &["cases", "list", "--json"]).await;
    let got: BTreeMap<i64, (u64, u64)> = cases
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["site"], format!("127.0.0.1:{}", addr.port()), "{c}");
            assert_eq!(c["status"], "new", "{c}");
            (
                c["work_id"].as_i64().unwrap(),
                (
                    c["pages"].as_u64().unwrap(),
                    c["chapters_matched"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let want: BTreeMap<i64, (u64, u64)> = want
        .into_iter()
        .map(|(w, (p, c))| (w, (p.len() as u64, c.len() as u64)))
        .collect();
    assert_eq!(got.len(), cases.as_array().unwrap().len(), "a case twice");
    assert_eq!(got, want, "{cases:#}");
    eprintln!(
        "{} pages ({} negatives): {} (page, chapter) pairs reported, {} cases",
        pages.len(),
        pages.iter().filter(|p| !p.case.is_evasion()).count(),
        found.len(),
        got.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_evasion_is_reported_and_nothing_else_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/copyhound.db", dir.path().display());
    pirate_site_to_report(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_evasion_is_reported_and_nothing_else_on_postgres() {
    let Some(db) = store::testing::postgres("detection_cli").await else {
        return;
    };
    pirate_site_to_report(&db.url).await;
}
