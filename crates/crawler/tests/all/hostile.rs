//! A site written to make the crawler fail, served on 127.0.0.1: 5 MiB of nested markup, a tag
//! with half a million attributes, an element bomb, reopened formatting, a gzip bomb, byte
//! soup, a sitemap of `<loc` without `>`, a robots.txt of wildcards, inline scripts made to
//! stall a literal decoder (a megabyte literal, a million `+`, broken escapes, lone
//! surrogates, quadratic self-concatenation, a string that never ends) and a content endpoint
//! answering JSON nested 5 million deep. Every page is handled
//! (stored with its text, skipped and counted, or refused and counted) and the crawl goes on
//! to the real chapter.

use crate::common;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use common::local_crawl_settings;
use crawler::{Crawl, CrawlSettings, ErrorKind, SkipReason};
use extract::ExtractSettings;
use testkit::hostile;

const SIZE: usize = 5 * 1024 * 1024;
const CHAPTER: &str = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。";

/// One response of the site: content type, optional content encoding, body.
struct Page {
    content_type: &'static str,
    encoding: Option<&'static str>,
    body: Vec<u8>,
}

fn html(body: String) -> Page {
    Page {
        content_type: "text/html; charset=utf-8",
        encoding: None,
        body: body.into_bytes(),
    }
}

fn hostile_site() -> HashMap<String, Page> {
    let mut site = HashMap::new();
    let links: String = [
        "nested",
        "attrs",
        "elements",
        "formatting",
        "bomb",
        "soup",
        "script",
        "endpoint",
        "chapter",
    ]
    .iter()
    .map(|p| format!("<a href=\"/{p}.html\">{p}</a> "))
    .collect();
    site.insert(
        "/".into(),
        html(format!("<html><body>{links}</body></html>")),
    );

    // Each just under the 5 MiB body cap.
    site.insert(
        "/nested.html".into(),
        html(hostile::nested_within(
            "div",
            SIZE - 1024,
            &format!("<div id=content>{CHAPTER}</div>"),
        )),
    );
    site.insert(
        "/attrs.html".into(),
        html(hostile::attributes(SIZE - 1024, CHAPTER)),
    );
    site.insert(
        "/elements.html".into(),
        html(hostile::elements(SIZE - 1024)),
    );
    site.insert(
        "/formatting.html".into(),
        html(hostile::reopened_formatting(200, 400_000, CHAPTER)),
    );
    // 200 MB of zeros in 200 KB: the body cap (5 MiB) holds after inflation.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..200 {
        gz.write_all(&zeros).unwrap();
    }
    site.insert(
        "/bomb.html".into(),
        Page {
            content_type: "text/html",
            encoding: Some("gzip"),
            body: gz.finish().unwrap(),
        },
    );
    site.insert(
        "/soup.html".into(),
        Page {
            content_type: "text/html",
            encoding: None,
            body: hostile::byte_soup(SIZE),
        },
    );
    let mut script = format!(
        "<html><body><div id=content></div><script>document.getElementById('content').innerHTML = '<p>{CHAPTER}</p>';\n"
    );
    script += &format!("var big = \"{}\";\n", "\\u5b57".repeat(180_000));
    script += &format!("var plus = 'a'{};\n", " + 'b'".repeat(300_000));
    script += "var s = 'xxxxxxxxxx';\n";
    script += &"s = s + s + '\\uD800\\u12\\x\\u{110000}';\n".repeat(2_000);
    script += "d.innerHTML = s; document.write(\"never ends ";
    script += &"\\".repeat(SIZE - 1024 - script.len());
    site.insert("/script.html".into(), html(script));
    site.insert(
        "/endpoint.html".into(),
        html(
            "<html><body><div id=content></div><script>fetch('/deep.json');</script></body></html>"
                .into(),
        ),
    );
    site.insert(
        "/deep.json".into(),
        Page {
            content_type: "application/json",
            encoding: None,
            body: "[".repeat(SIZE - 1024).into_bytes(),
        },
    );
    site.insert(
        "/chapter.html".into(),
        html(format!(
            "<html><body><div id=content><p>{CHAPTER}</p></div></body></html>"
        )),
    );
    site.insert(
        "/sitemap.xml".into(),
        Page {
            content_type: "application/xml",
            encoding: None,
            body: "<urlset><url><loc".repeat(SIZE / 17).into_bytes(),
        },
    );
    let robots: String = (0..20_000)
        .map(|i| format!("Disallow: /x{i}/*a*b*c*d*e*f*g*h*$\n"))
        .collect();
    site.insert(
        "/robots.txt".into(),
        Page {
            content_type: "text/plain",
            encoding: None,
            body: format!("User-agent: *\n{robots}Sitemap: /sitemap.xml\n").into_bytes(),
        },
    );
    site
}

async fn serve(State(site): State<Arc<HashMap<String, Page>>>, req: Request) -> Response {
    let Some(page) = site.get(req.uri().path()) else {
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Body::empty())
            .expect("404");
    };
    let mut response = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, page.content_type);
    if let Some(encoding) = page.encoding {
        response = response.header(header::CONTENT_ENCODING, encoding);
    }
    response.body(Body::from(page.body.clone())).expect("page")
}

/// Serves the site until the returned sender is dropped.
async fn start() -> (url::Url, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .fallback(serve)
        .with_state(Arc::new(hostile_site()));
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let server = axum::serve(listener, app).with_graceful_shutdown(async move {
            let _ = tokio::time::timeout(Duration::from_secs(300), rx).await;
        });
        let _ = server.await;
    });
    (url::Url::parse(&format!("http://{addr}/")).unwrap(), tx)
}

fn settings() -> CrawlSettings {
    let mut s = local_crawl_settings();
    s.fetch.timeout = Duration::from_secs(30);
    // Debug builds parse five times slower than release, and two tests run at once.
    s.extract.time_budget = Duration::from_secs(30);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_page_is_handled_and_the_crawl_goes_on() {
    let (seed, _server) = start().await;
    let crawl = Crawl::in_memory(settings(), vec![seed.clone()]).unwrap();
    let report = crawl.run().await.unwrap();
    println!("{report}");
    let pages = crawl.sink().pages();
    let text_of = |path: &str| {
        pages
            .iter()
            .find(|p| p.url.path() == path)
            .map(|p| p.text.clone())
            .unwrap_or_else(|| panic!("{path} has no page record: {report}"))
    };
    assert!(text_of("/chapter.html").contains(CHAPTER));
    // Flattened, not lost.
    assert!(text_of("/nested.html").contains(CHAPTER));
    assert!(text_of("/attrs.html").contains(CHAPTER));
    assert!(text_of("/formatting.html").contains(CHAPTER));
    // The script page's chapter is read; the rest of its script is decoded within the caps.
    assert!(text_of("/script.html").contains(CHAPTER));
    // The endpoint is fetched, its JSON refused, and the empty page kept as it is.
    assert_eq!(text_of("/endpoint.html"), "");
    // The element bomb is the one page over a limit.
    assert_eq!(
        report.skipped.get(&SkipReason::OverLimit),
        Some(&1),
        "{report}"
    );
    assert!(!pages.iter().any(|p| p.url.path() == "/elements.html"));
    // The gzip bomb is refused (never inflated past the decoding caps), counted as the one
    // error; the soup is decoded to something and recorded.
    assert!(!pages.iter().any(|p| p.url.path() == "/bomb.html"));
    assert_eq!(
        report
            .errors
            .get(&crawler::crawl::Failure::Error(ErrorKind::ContentCoding)),
        Some(&1),
        "{report}"
    );
    text_of("/soup.html");
    assert_eq!(report.error_count(), 1, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_over_its_time_budget_is_skipped_and_counted() {
    let (seed, _server) = start().await;
    let mut settings = settings();
    settings.extract = ExtractSettings {
        time_budget: Duration::from_millis(1),
        ..ExtractSettings::default()
    };
    settings.follow_sitemaps = false;
    let crawl = Crawl::in_memory(settings, vec![seed]).unwrap();
    let report = crawl.run().await.unwrap();
    println!("{report}");
    // The big pages (nested, attributes, elements, formatting) cannot be read in 1 ms; the
    // small ones are read before the first look at the clock.
    let over = report.skipped.get(&SkipReason::OverLimit).copied();
    assert!(over >= Some(4), "{report}");
    let pages = crawl.sink().pages();
    assert!(
        pages
            .iter()
            .any(|p| p.url.path() == "/chapter.html" && p.text.contains(CHAPTER))
    );
}
