//! The rendered fetch in a real headless Chromium (issue #25): pages whose chapter text only
//! a browser shows, found with rendering on, each with a screenshot; a page whose script asks
//! for a private address refused by the address rules (a canary listener sees nothing); and
//! hostile pages that each end within their budget while the pool goes on rendering; a page
//! whose browser failed tried once more in a new one.

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use crawler::render::RenderSettings;
use crawler::{AddressPolicy, MemoryCrawl, RenderRequest, Renderer, SafetySettings};
use extract::{Extractor, PageKind, TextSource};
use url::Url;

/// The chapter every text-hiding page hides.
fn chapter() -> String {
    common::zh_chapter("sanguoyanyi_02").paragraphs.join("")
}

type Pages = Arc<HashMap<String, (&'static str, String)>>;

async fn serve_page(State(pages): State<Pages>, uri: Uri) -> Response {
    match pages.get(uri.path()) {
        Some((kind, body)) => ([(header::CONTENT_TYPE, *kind)], body.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, "no such page").into_response(),
    }
}

/// A site on 127.0.0.1 serving `pages` (path → content type, body) until the test ends.
async fn site(pages: Vec<(&str, &'static str, String)>) -> SocketAddr {
    let pages: Pages = Arc::new(
        pages
            .into_iter()
            .map(|(p, k, b)| (p.to_owned(), (k, b)))
            .collect(),
    );
    let app = Router::new().fallback(serve_page).with_state(pages);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

const HTML: &str = "text/html; charset=utf-8";

fn page(body: &str) -> String {
    format!(
        "<html><head><title>第一回</title></head><body><div class=nav><a href=/>首页</a> <a href=/2.html>下一章</a></div><div id=content>正在加载章节内容……</div>{body}</body></html>"
    )
}

/// The five ways of hiding a chapter from a reader of the markup.
fn hiding_pages(text: &str) -> Vec<(&'static str, &'static str, String)> {
    let html = format!("<p>{text}</p>");
    let key = 0x5a_u32;
    let xored: Vec<String> = html.chars().map(|c| (c as u32 ^ key).to_string()).collect();
    // Fragments shown in the chapter's order by flex `order`, served shuffled.
    let chars: Vec<char> = text.chars().collect();
    let pieces: Vec<String> = chars.chunks(40).map(|c| c.iter().collect()).collect();
    let mut shuffled: Vec<(usize, &String)> = pieces.iter().enumerate().collect();
    shuffled.reverse();
    let spans: String = shuffled
        .iter()
        .map(|(i, p)| format!("<span class=f{i}>{p}</span>"))
        .collect();
    let orders: String = (0..pieces.len())
        .map(|i| format!("#content .f{i} {{ order: {i}; }} "))
        .collect();
    vec![
        (
            "/atob.html",
            HTML,
            page(&format!(
                "<script>document.getElementById('content').innerHTML = decodeURIComponent(escape(atob('{}')));</script>",
                common::base64(html.as_bytes())
            )),
        ),
        (
            "/codes.html",
            HTML,
            page(&format!(
                "<script>var a = [{}]; document.getElementById('content').innerHTML = String.fromCharCode.apply(null, a);</script>",
                common::char_codes(&html)
            )),
        ),
        (
            "/decrypt.html",
            HTML,
            page(&format!(
                "<script>var k = {key}; var c = [{}]; var out = []; for (var i = 0; i < c.length; i++) out.push(String.fromCharCode(c[i] ^ k)); document.getElementById('content').innerHTML = out.join('');</script>",
                xored.join(",")
            )),
        ),
        (
            "/fetch.html",
            HTML,
            page(
                "<script>fetch('/api/chapter?id=1').then(function (r) { return r.json(); }).then(function (d) { document.getElementById('content').innerHTML = d.parts.join(''); });</script>",
            ),
        ),
        (
            "/api/chapter",
            "application/json",
            serde_json::json!({ "parts": text.chars().collect::<Vec<_>>().chunks(50).map(|c| format!("<p>{}</p>", c.iter().collect::<String>())).collect::<Vec<_>>() }).to_string(),
        ),
        (
            "/ordered.html",
            HTML,
            format!(
                "<html><head><title>第一回</title><style>#content {{ display: flex; flex-wrap: wrap; flex-direction: column; }} {orders}</style></head><body><div class=nav><a href=/>首页</a></div><div id=content>{spans}</div></body></html>"
            ),
        ),
    ]
}

fn settings() -> RenderSettings {
    RenderSettings {
        enabled: true,
        page_timeout: Duration::from_secs(10),
        script_timeout: Duration::from_secs(5),
        max_requests: 200,
        ..RenderSettings::default()
    }
}

fn extractor() -> Arc<Extractor> {
    Arc::new(Extractor::new(&extract::ExtractSettings::default()).unwrap())
}

/// Text as a fingerprint sees it: no whitespace.
fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_chapters_are_found_with_render_each_with_a_screenshot() {
    let text = chapter();
    let addr = site(hiding_pages(&text)).await;
    let mut crawl_settings = common::local_crawl_settings();
    crawl_settings.render = settings();
    crawl_settings.max_depth = 0;
    crawl_settings.follow_sitemaps = false;
    let seeds: Vec<Url> = ["atob", "codes", "decrypt", "fetch", "ordered"]
        .iter()
        .map(|p| Url::parse(&format!("http://{addr}/{p}.html")).unwrap())
        .collect();
    let crawl = MemoryCrawl::in_memory(crawl_settings, seeds.clone()).unwrap();
    let report = crawl.run().await.unwrap();
    assert_eq!(report.rendered, 5, "{report}");
    let pages = crawl.sink().pages();
    let renders = crawl.sink().renders();
    for seed in &seeds {
        let page = pages
            .iter()
            .find(|p| &p.url == seed)
            .unwrap_or_else(|| panic!("no page for {seed}: {report}"));
        assert_eq!(page.source, TextSource::Rendered, "{seed}");
        assert_eq!(page.kind, PageKind::Content, "{seed}");
        assert_eq!(squeeze(&page.text), squeeze(&text), "{seed}");
        let render = renders
            .iter()
            .find(|r| r.snapshot == page.snapshot)
            .unwrap_or_else(|| panic!("no render stored for {seed}"));
        let shot = render.screenshot.as_ref().expect("a screenshot");
        assert!(shot.png.starts_with(b"\x89PNG\r\n\x1a\n"), "{seed}");
        assert!(shot.height >= 100 && shot.width >= 100, "{seed}");
        assert!(
            render.html.contains("<p>") || render.html.contains("<span"),
            "{seed}"
        );
        assert!(!render.html.contains("data-copyhound-i"), "{seed}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_asking_for_a_private_address_is_refused_and_the_canary_sees_nothing() {
    // The canary on 127.0.0.2: loopback, outside the one network this crawl may reach.
    let canary = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let canary_port = canary.local_addr().unwrap().port();
    let text = chapter();
    let addr = site(vec![(
        "/leak.html",
        HTML,
        page(&format!(
            "<div id=content><p>{text}</p></div><script>fetch('http://127.0.0.2:{canary_port}/secret').catch(function () {{}}); var i = new Image(); i.src = 'http://localhost.:{canary_port}/img'; var s = new WebSocket('ws://127.0.0.2:{canary_port}/ws');</script><img src='https://127.0.0.2:{canary_port}/tls.png'>"
        )),
    )])
    .await;
    let renderer = Renderer::new(settings()).unwrap();
    let policy = AddressPolicy::new(&SafetySettings {
        allow_private: false,
        allowed_networks: vec!["127.0.0.1/32".parse().unwrap()],
        ..SafetySettings::default()
    });
    let rendered = renderer
        .render(
            &extractor(),
            RenderRequest {
                url: Url::parse(&format!("http://{addr}/leak.html")).unwrap(),
                policy: Arc::new(policy),
                allow_url: None,
                screenshot: false,
            },
        )
        .await
        .unwrap();
    assert!(squeeze(&rendered.text).contains(&squeeze(&text)[..30]));
    assert!(
        rendered.refused.iter().any(|r| r.contains("127.0.0.2")),
        "{:?}",
        rendered.refused
    );
    // Every request of the page went through the proxy; none reached the canary.
    assert!(rendered.requests >= 2, "{}", rendered.requests);
    match canary.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the canary was reached: {other:?}"),
    }
}

/// Each hostile page, and a plain page after it: the hostile one ends within the pool's
/// budget (rendered or refused), and the plain one still renders.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_end_within_their_budget_and_rendering_goes_on() {
    let text = chapter();
    let subresources = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&subresources);
    let hostile: Vec<(&str, String)> = vec![
        ("/loop.html", page("<script>while (true) {}</script>")),
        (
            "/alerts.html",
            page(
                "<script>for (var i = 0; i < 100000; i++) { alert(i); confirm(i); prompt(i); }</script>",
            ),
        ),
        (
            "/raf.html",
            page(
                "<script>function f() { document.title = String(Math.random()); requestAnimationFrame(f); } f();</script>",
            ),
        ),
        (
            "/memory.html",
            page("<script>var a = []; for (;;) a.push(new Array(1000000).fill(1.5));</script>"),
        ),
        (
            "/away.html",
            page(
                "<script>setTimeout(function () { location.href = '/plain.html'; }, 10); for (var i = 0; i < 50; i++) window.open('/plain.html');</script>",
            ),
        ),
        (
            "/canvas.html",
            page(
                "<canvas id=c width=30000 height=30000></canvas><script>var x = document.getElementById('c').getContext('2d'); x.fillStyle = 'red'; x.fillRect(0, 0, 30000, 30000);</script><div style='height:100000px'>tall</div>",
            ),
        ),
        (
            "/many.html",
            page(
                "<script>for (var i = 0; i < 10000; i++) { var m = new Image(); m.src = '/img/' + i + '.png'; }</script>",
            ),
        ),
    ];
    let mut pages: Vec<(&str, &'static str, String)> =
        hostile.iter().map(|(p, b)| (*p, HTML, b.clone())).collect();
    pages.push((
        "/plain.html",
        HTML,
        format!("<html><body><div id=content><p>{text}</p></div></body></html>"),
    ));
    let app_pages: Pages = Arc::new(
        pages
            .into_iter()
            .map(|(p, k, b)| (p.to_owned(), (k, b)))
            .collect(),
    );
    let app = Router::new()
        .route(
            "/img/{n}",
            axum::routing::get(move || {
                let counted = Arc::clone(&counted);
                async move {
                    counted.fetch_add(1, Ordering::Relaxed);
                    StatusCode::NOT_FOUND
                }
            }),
        )
        .fallback(serve_page)
        .with_state(app_pages);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let s = RenderSettings {
        page_timeout: Duration::from_secs(5),
        script_timeout: Duration::from_secs(3),
        max_requests: 300,
        max_heap_mib: 64,
        pool_size: 1,
        ..settings()
    };
    let budget = s.page_timeout + s.script_timeout * 5 + Duration::from_secs(5);
    let renderer = Renderer::new(s).unwrap();
    let extractor = extractor();
    let request = |path: &str| RenderRequest {
        url: Url::parse(&format!("http://{addr}{path}")).unwrap(),
        policy: Arc::new(AddressPolicy::allow_all()),
        allow_url: None,
        screenshot: true,
    };
    for (path, _) in &hostile {
        let started = Instant::now();
        let outcome = renderer.render(&extractor, request(path)).await;
        let took = started.elapsed();
        // The pool's own budget, plus the time to start a browser after a kill.
        assert!(
            took < budget + Duration::from_secs(30),
            "{path} took {took:?}: {outcome:?}"
        );
        if let Ok(r) = &outcome
            && let Some(shot) = &r.screenshot
        {
            assert!(shot.height <= 20_000, "{path}: {}", shot.height);
        }
        let plain = renderer
            .render(&extractor, request("/plain.html"))
            .await
            .unwrap_or_else(|e| panic!("after {path} the next page failed: {e}"));
        assert_eq!(squeeze(&plain.text), squeeze(&text), "after {path}");
    }
    // The page asking for 10,000 images got at most the cap through.
    assert!(
        subresources.load(Ordering::Relaxed) < 300,
        "{} images fetched",
        subresources.load(Ordering::Relaxed)
    );
    // The loop and the memory bomb cost their browsers.
    assert!(
        renderer.browsers_started() >= 2,
        "{}",
        renderer.browsers_started()
    );
}

/// A page whose browser failed (here its tab crashed, out of heap, the first time the page
/// was served) is tried once more in a new browser, and read: on a busy machine a browser
/// that starts or answers too slowly once costs no page. A page over its budget is final.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_browser_failed_is_tried_once_more_in_a_new_one() {
    let text = chapter();
    let served = Arc::new(AtomicUsize::new(0));
    let plain = format!("<html><body><div id=content><p>{text}</p></div></body></html>");
    let app = Router::new().route(
        "/flaky.html",
        axum::routing::get({
            let served = Arc::clone(&served);
            move || {
                let first = served.fetch_add(1, Ordering::SeqCst) == 0;
                let body = if first {
                    page("<script>var a = []; for (;;) a.push(new Array(1000000).fill(1.5));</script>")
                } else {
                    plain.clone()
                };
                async move { ([(header::CONTENT_TYPE, HTML)], body).into_response() }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let renderer = Renderer::new(RenderSettings {
        max_heap_mib: 64,
        pool_size: 1,
        ..settings()
    })
    .unwrap();
    let request = RenderRequest {
        url: Url::parse(&format!("http://{addr}/flaky.html")).unwrap(),
        policy: Arc::new(AddressPolicy::allow_all()),
        allow_url: None,
        screenshot: false,
    };
    let rendered = renderer
        .render_again_if_failed(&extractor(), request)
        .await
        .unwrap();
    assert_eq!(squeeze(&rendered.text), squeeze(&text));
    assert_eq!(served.load(Ordering::SeqCst), 2);
    assert_eq!(renderer.browsers_started(), 2);
}
