//! Pages disguised with a remapped font, crawled from a real HTTP server on 127.0.0.1: the
//! font is fetched under the crawl's rules and the text read through it; a font on an
//! address the crawl refuses is never fetched.

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use crawler::{Crawl, CrawlSettings};
use extract::{PageKind, TextSource};
use ipnet::IpNet;
use testkit::fonts::{reference_font, remapped_font, woff2};

/// A site of fixed responses that counts the requests for each path (the OCR tests serve
/// theirs with it too).
#[derive(Clone, Default)]
pub(crate) struct Site {
    pub(crate) bodies: Arc<HashMap<String, (&'static str, Vec<u8>)>>,
    pub(crate) hits: Arc<Mutex<Vec<String>>>,
}

impl Site {
    pub(crate) async fn serve(self, ip: &str) -> SocketAddr {
        async fn answer(State(site): State<Site>, request: Request) -> Response {
            let path = request.uri().path().to_owned();
            site.hits.lock().unwrap().push(path.clone());
            match site.bodies.get(&path) {
                Some((kind, body)) => {
                    ([(header::CONTENT_TYPE, *kind)], body.clone()).into_response()
                }
                None => StatusCode::NOT_FOUND.into_response(),
            }
        }
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new().fallback(answer).with_state(self);
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    }

    pub(crate) fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|p| *p == path)
            .count()
    }
}

/// The first chapter of the sample with its 40 most frequent Han characters remapped, and
/// the remapped font that draws them (WOFF2).
fn disguised() -> Option<(String, String, Vec<u8>)> {
    let reference = std::fs::read(reference_font()?).unwrap();
    let text = common::book()[0].text();
    let mut counts: HashMap<char, usize> = HashMap::new();
    for c in text
        .chars()
        .filter(|c| ('\u{4E00}'..='\u{9FFF}').contains(c))
    {
        *counts.entry(c).or_default() += 1;
    }
    let mut by_count: Vec<(char, usize)> = counts.into_iter().collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let pairs: Vec<(char, char)> = by_count
        .iter()
        .take(40)
        .enumerate()
        .map(|(i, &(c, _))| (char::from_u32(0xE000 + i as u32).unwrap(), c))
        .collect();
    let hidden: String = text
        .chars()
        .map(|c| pairs.iter().find(|p| p.1 == c).map_or(c, |p| p.0))
        .collect();
    let font = woff2(&remapped_font(&reference, &pairs).unwrap()).unwrap();
    Some((text, hidden, font))
}

fn page(text: &str, font_url: &str) -> Vec<u8> {
    let paragraphs: String = text.lines().map(|l| format!("<p>{l}</p>\n")).collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第一回</title>\
         <style>@font-face {{ font-family: r; src: url(\"{font_url}\") format(\"woff2\"); }}\
         #content {{ font-family: r; }}</style></head>\
         <body><div id=\"content\">{paragraphs}</div></body></html>"
    )
    .into_bytes()
}

fn settings() -> CrawlSettings {
    CrawlSettings {
        max_depth: 0,
        ..common::local_crawl_settings()
    }
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[tokio::test]
async fn the_page_font_is_fetched_once_per_page_and_the_text_read_through_it() {
    let Some((text, hidden, font)) = disguised() else {
        return;
    };
    let site = Site {
        bodies: Arc::new(HashMap::from([
            (
                "/book/1.html".to_owned(),
                ("text/html", page(&hidden, "fonts/r1.woff2")),
            ),
            ("/book/fonts/r1.woff2".to_owned(), ("font/woff2", font)),
            // A font that is no font: the page keeps its text, PUA and all.
            (
                "/book/2.html".to_owned(),
                ("text/html", page(&hidden, "/junk.woff2")),
            ),
            (
                "/junk.woff2".to_owned(),
                ("font/woff2", b"wOF2 junk".to_vec()),
            ),
        ])),
        ..Site::default()
    };
    let addr = site.clone().serve("127.0.0.1").await;
    let url = |p: &str| url::Url::parse(&format!("http://{addr}{p}")).unwrap();
    let crawl =
        Crawl::in_memory(settings(), vec![url("/book/1.html"), url("/book/2.html")]).unwrap();
    crawl.run().await.unwrap();
    let pages = crawl.sink().pages();
    let decoded = pages.iter().find(|p| p.url == url("/book/1.html")).unwrap();
    assert_eq!(decoded.kind, PageKind::Content);
    assert_eq!(decoded.source, TextSource::Font);
    assert_eq!(squash(&decoded.text), squash(&text));
    assert_eq!(site.hits("/book/fonts/r1.woff2"), 1);
    // The font is evidence: its response is a snapshot of the crawl.
    let snapshots = crawl.sink().snapshots();
    assert!(
        snapshots
            .iter()
            .any(|s| s.final_url == url("/book/fonts/r1.woff2"))
    );
    let kept = pages.iter().find(|p| p.url == url("/book/2.html")).unwrap();
    assert_eq!(kept.source, TextSource::Markup);
    assert_eq!(squash(&kept.text), squash(&hidden));
    assert_eq!(site.hits("/junk.woff2"), 1);
}

#[tokio::test]
async fn a_font_on_a_refused_address_is_never_fetched() {
    let Some((_, hidden, font)) = disguised() else {
        return;
    };
    // The font's server listens on 127.0.0.2, which the crawl may not reach: only
    // 127.0.0.1 is let through.
    let fonts = Site {
        bodies: Arc::new(HashMap::from([(
            "/r.woff2".to_owned(),
            ("font/woff2", font),
        )])),
        ..Site::default()
    };
    let fonts_addr = fonts.clone().serve("127.0.0.2").await;
    let site = Site {
        bodies: Arc::new(HashMap::from([(
            "/book/1.html".to_owned(),
            (
                "text/html",
                page(&hidden, &format!("http://{fonts_addr}/r.woff2")),
            ),
        )])),
        ..Site::default()
    };
    let addr = site.clone().serve("127.0.0.1").await;
    let mut settings = settings();
    settings.fetch.safety.allow_private = false;
    settings.fetch.safety.allowed_networks = vec!["127.0.0.1/32".parse::<IpNet>().unwrap()];
    let seed = url::Url::parse(&format!("http://{addr}/book/1.html")).unwrap();
    let crawl = Crawl::in_memory(settings, vec![seed.clone()]).unwrap();
    crawl.run().await.unwrap();
    let pages = crawl.sink().pages();
    let kept = pages.iter().find(|p| p.url == seed).unwrap();
    assert_eq!(kept.source, TextSource::Markup);
    assert_eq!(squash(&kept.text), squash(&hidden));
    assert_eq!(fonts.hits("/r.woff2"), 0, "the refused font was fetched");
}
