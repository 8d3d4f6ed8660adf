//! Chapters served with no text (issue #46), crawled from a real HTTP server on 127.0.0.1:
//! one drawn on a `<canvas>` in shuffled chunks by a script, one shown through a glyph sprite
//! (a same-site SVG file fetched under the crawl's rules, decoy glyphs in it); both read by
//! the plain crawl (the script sandbox's canvas, the sprite read in `extract`) and by the
//! rendered one (the browser's recorded draw calls; a third page draws what its script
//! fetched, which only the browser reads).

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use crawler::MemoryCrawl;
use crawler::render::RenderSettings;
use extract::{PageKind, TextSource};
use url::Url;

#[derive(Clone, Default)]
struct Site {
    bodies: Arc<HashMap<String, (&'static str, String)>>,
    hits: Arc<Mutex<Vec<String>>>,
}

impl Site {
    async fn serve(self) -> SocketAddr {
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
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new().fallback(answer).with_state(self);
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    }

    fn hits(&self, path: &str) -> usize {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|p| *p == path)
            .count()
    }
}

const HTML: &str = "text/html; charset=utf-8";

/// The chapter, in rows of 30 characters.
fn rows() -> Vec<String> {
    let text: String = common::zh_chapter("sanguoyanyi_02").paragraphs.join("");
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    chars
        .chunks(30)
        .take(40)
        .map(|c| c.iter().collect())
        .collect()
}

/// A page whose script draws `rows` in chunks of 6 characters, XORed char codes, in a
/// shuffled order, each at its place; and a decoy on a canvas never shown.
fn canvas_page(rows: &[String]) -> String {
    let key = 0x1d3;
    let mut chunks = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let chars: Vec<char> = row.chars().collect();
        for (k, part) in chars.chunks(6).enumerate() {
            let codes: Vec<String> = part.iter().map(|c| (*c as u32 ^ key).to_string()).collect();
            chunks.push(format!(
                "[{},{},[{}]]",
                8 + k * 6 * 20,
                30 + r * 30,
                codes.join(",")
            ));
        }
    }
    let n = chunks.len();
    let shuffled: Vec<&String> = (0..n).map(|i| &chunks[(i * 11) % n]).collect();
    let shuffled: Vec<&str> = shuffled.iter().map(|s| s.as_str()).collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第二回</title></head><body>\
         <div class=nav><a href=/>首页</a></div>\
         <div id=content><canvas id=page width=760 height={}></canvas></div>\
         <script>(function () {{ var d = [{}]; var c = document.getElementById('page').getContext('2d');\
         c.font = '20px serif'; c.fillStyle = '#222';\
         for (var i = 0; i < d.length; i++) {{ var s = ''; for (var j = 0; j < d[i][2].length; j++) s += String.fromCharCode(d[i][2][j] ^ {key}); c.fillText(s, d[i][0], d[i][1]); }}\
         document.createElement('canvas').getContext('2d').fillText('本站防盗诱饵文字', 0, 20); }})();</script>\
         </body></html>",
        40 + rows.len() * 30,
        shuffled.join(",")
    )
}

/// A page of empty spans showing glyphs of `/s/1.svg`, rows of 25 glyphs with a decoy (龘) after
/// every fourth; and the SVG.
fn sprite_page(rows: &[String]) -> (String, String) {
    let mut alphabet: Vec<char> = rows.iter().flat_map(|r| r.chars()).collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    let mut svg = String::from(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><style>text { font-size: 18px; }</style>",
    );
    let mut style = String::from(
        "i[class^=\"gx\"] { display: inline-block; width: 18px; height: 22px; background-image: url(/s/1.svg); }\n",
    );
    let mut class_of = HashMap::new();
    for (r, row) in alphabet.chunks(25).enumerate() {
        let y = 30 + r * 40;
        let mut text = String::new();
        let mut slot = 0;
        for (i, c) in row.iter().enumerate() {
            if i % 5 == 4 {
                text.push('龘');
                slot += 1;
            }
            text.push(*c);
            let name = format!("gx{}", class_of.len());
            style.push_str(&format!(
                ".{name} {{ background-position: -{}px -{}px; }}\n",
                slot * 18,
                y - 17
            ));
            class_of.insert(*c, name);
            slot += 1;
        }
        svg.push_str(&format!("<text x=\"0\" y=\"{y}\">{text}</text>"));
    }
    svg.push_str("</svg>");
    let body: String = rows
        .iter()
        .map(|r| {
            let glyphs: String = r
                .chars()
                .map(|c| format!("<i class=\"{}\"></i>", class_of[&c]))
                .collect();
            format!("<p>{glyphs}</p>")
        })
        .collect();
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第二回</title><style>{style}</style></head>\
         <body><div class=nav><a href=/>首页</a></div><div id=content>{body}</div></body></html>"
    );
    (html, svg)
}

/// A page whose script fetches the rows and draws them through a transform, one row per call,
/// bottom row first: only a browser reads it (the sandbox fetches nothing).
fn fetched_canvas_page() -> String {
    "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第二回</title></head><body>\
     <div id=content><canvas id=c width=760 height=1300></canvas></div>\
     <script>fetch('/api/rows').then(function (r) { return r.json(); }).then(function (rows) {\
     var ctx = document.getElementById('c').getContext('2d'); ctx.font = '20px serif'; ctx.translate(10, 20);\
     for (var i = rows.length - 1; i >= 0; i--) ctx.fillText(rows[i], 0, i * 30); });</script>\
     </body></html>"
        .to_owned()
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

async fn crawl(render: Option<RenderSettings>) {
    let rows = rows();
    let (sprite_html, svg) = sprite_page(&rows);
    let site = Site {
        bodies: Arc::new(HashMap::from([
            ("/canvas.html".to_owned(), (HTML, canvas_page(&rows))),
            ("/sprite.html".to_owned(), (HTML, sprite_html)),
            ("/s/1.svg".to_owned(), ("image/svg+xml", svg)),
            ("/fetched.html".to_owned(), (HTML, fetched_canvas_page())),
            (
                "/api/rows".to_owned(),
                ("application/json", serde_json::to_string(&rows).unwrap()),
            ),
        ])),
        ..Site::default()
    };
    let addr = site.clone().serve().await;
    let url = |p: &str| Url::parse(&format!("http://{addr}{p}")).unwrap();
    let mut settings = common::local_crawl_settings();
    settings.max_depth = 0;
    settings.follow_sitemaps = false;
    let rendering = render.is_some();
    settings.render = render.unwrap_or(RenderSettings {
        enabled: false,
        auto: false,
        ..RenderSettings::default()
    });
    let mut seeds = vec![url("/canvas.html"), url("/sprite.html")];
    let mut expected = vec![
        ("/canvas.html", TextSource::Canvas),
        ("/sprite.html", TextSource::Sprite),
    ];
    if rendering {
        seeds.push(url("/fetched.html"));
        expected.push(("/fetched.html", TextSource::Canvas));
    }
    let crawl = MemoryCrawl::in_memory(settings, seeds).unwrap();
    let report = crawl.run().await.unwrap();
    if rendering {
        assert_eq!(report.rendered, 3, "{report}");
    }
    let pages = crawl.sink().pages();
    let want = squeeze(&rows.concat());
    for (path, source) in expected {
        let page = pages
            .iter()
            .find(|p| p.url == url(path))
            .unwrap_or_else(|| panic!("no page for {path}: {report}"));
        assert_eq!(
            (page.kind, page.source),
            (PageKind::Content, source),
            "{path}"
        );
        assert_eq!(squeeze(&page.text), want, "{path}");
        assert!(!page.text.contains('龘'), "{path}: a decoy leaked");
    }
    // Fetched once by the crawl; the browser loads it too, to show it.
    let fetched = site.hits("/s/1.svg");
    assert!(
        if rendering {
            fetched >= 1
        } else {
            fetched == 1
        },
        "{fetched}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canvas_and_sprite_chapters_are_read_by_the_plain_crawl() {
    crawl(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canvas_and_sprite_chapters_are_read_by_the_rendered_crawl() {
    if RenderSettings::default().unavailable().is_some() {
        eprintln!("skipped: no chromium");
        return;
    }
    crawl(Some(RenderSettings {
        enabled: true,
        page_timeout: Duration::from_secs(10),
        script_timeout: Duration::from_secs(5),
        max_requests: 200,
        ..RenderSettings::default()
    }))
    .await;
}
