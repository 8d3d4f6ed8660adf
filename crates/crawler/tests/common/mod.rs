//! Shared by the integration tests and the benchmark: a real axum fixture server on
//! 127.0.0.1:0 that plays a hostile novel site, serving the extraction tests' page builders
//! (`pages`, the `extract` crate's `tests/common`).
#![allow(dead_code)]

#[path = "../../../extract/tests/common/mod.rs"]
mod pages;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
pub use pages::*;

/// Crawl settings for the fixture server: loopback allowed, no delay, short timeouts.
pub fn local_crawl_settings() -> crawler::CrawlSettings {
    crawler::CrawlSettings {
        fetch: crawler::FetchSettings {
            safety: crawler::SafetySettings {
                allow_private: true,
                ..crawler::SafetySettings::default()
            },
            timeout: Duration::from_secs(5),
            ..crawler::FetchSettings::default()
        },
        politeness: crawler::PolitenessSettings {
            delay: Duration::ZERO,
            per_host_concurrency: 4,
            global_concurrency: 4,
            backoff_base: Duration::from_millis(100),
            ..crawler::PolitenessSettings::default()
        },
        ..crawler::CrawlSettings::default()
    }
}

// ---------------------------------------------------------------------------------------------
// The fixture server

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Hit {
    pub path: String,
    pub query: Option<String>,
    pub at: Instant,
    pub headers: HeaderMap,
}

#[derive(Default)]
struct ServerState {
    base: String,
    hits: Mutex<Vec<Hit>>,
    counters: Mutex<HashMap<String, u32>>,
    book: Vec<Chapter>,
    alice: Vec<Chapter>,
    bench_pages: usize,
    /// The benchmark server keeps no request log, so its memory stays flat.
    record_hits: bool,
    /// Holds book requests (see [`FixtureServer::hold_book_after`]).
    hold: testkit::hold::Hold,
}

/// A real HTTP server on 127.0.0.1 with an ephemeral port. It stops when dropped, and in any
/// case after two minutes, so no test leaves it running.
pub struct FixtureServer {
    pub addr: SocketAddr,
    state: Arc<ServerState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FixtureServer {
    pub async fn start() -> Self {
        Self::start_with_bench_pages(0).await
    }

    /// A server that also serves `/bench/{i}.html` for i in 0..pages: a tree of chapter pages
    /// where page i links to pages 10i+1..=10i+10.
    pub async fn start_with_bench_pages(bench_pages: usize) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(ServerState {
            base: format!("http://{addr}"),
            book: book(),
            alice: vec![en_chapter("alice_01"), en_chapter("alice_02")],
            bench_pages,
            record_hits: bench_pages == 0,
            ..ServerState::default()
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&state));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let server = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = tokio::time::timeout(Duration::from_secs(120), rx).await;
            });
            let _ = server.await;
        });
        Self {
            addr,
            state,
            shutdown: Some(tx),
        }
    }

    pub fn url(&self, path: &str) -> url::Url {
        url::Url::parse(&format!("http://{}{path}", self.addr)).expect("fixture url")
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    pub fn hits_on(&self, path: &str) -> Vec<Hit> {
        self.hits().into_iter().filter(|h| h.path == path).collect()
    }

    pub fn hit_paths(&self) -> HashSet<String> {
        self.hits().into_iter().map(|h| h.path).collect()
    }

    /// Answers `n` more requests for book pages (`/book/...`) and holds the ones after them
    /// until [`release`](Self::release): a test stops a crawl part-way at a point it
    /// chooses, however fast the crawl goes.
    pub fn hold_book_after(&self, n: usize) {
        self.state.hold.after(n);
    }

    /// Waits until a book request is held.
    pub async fn book_request_held(&self) {
        self.state.hold.held().await;
    }

    /// Answers the held requests and every later one.
    pub fn release(&self) {
        self.state.hold.release();
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn respond(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(body.into())
        .expect("response")
}

fn redirect(status: StatusCode, location: &str) -> Response {
    Response::builder()
        .status(status)
        .header(header::LOCATION, location)
        .body(Body::from("moved"))
        .expect("redirect")
}

fn html(body: String) -> Response {
    respond(StatusCode::OK, "text/html; charset=utf-8", body)
}

fn gbk_html(body: &str, content_type: &str) -> Response {
    respond(StatusCode::OK, content_type, gbk(body))
}

async fn handle(State(state): State<Arc<ServerState>>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let headers = req.headers().clone();
    if state.record_hits {
        state.hits.lock().unwrap().push(Hit {
            path: path.clone(),
            query,
            at: Instant::now(),
            headers: headers.clone(),
        });
    }
    let count = if !state.record_hits {
        0
    } else {
        let mut c = state.counters.lock().unwrap();
        let n = c.entry(path.clone()).or_default();
        *n += 1;
        *n
    };
    if path.starts_with("/book/") {
        state.hold.pass().await;
    }
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segs.as_slice() {
        ["robots.txt"] => respond(
            StatusCode::OK,
            "text/plain",
            format!(
                "User-agent: *\nDisallow: /private/\n\nUser-agent: copyhound\nDisallow: /private/\nDisallow: /bench/disallowed\n\nSitemap: {}/sitemap.xml\n",
                state.base
            ),
        ),
        ["sitemap.xml"] => respond(
            StatusCode::OK,
            "application/xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{b}/book/1/</loc></url><url><loc>{b}/extra/sitemap-only.html</loc></url></urlset>"#,
                b = state.base
            ),
        ),
        [""] => html(format!(
            r#"<html><head><title>{SITE}</title></head><body>{}<div class="main"><h2>推荐</h2><ul><li><a href="/book/1/">三国演义</a></li><li><a href="/en/1.html">Alice (table)</a></li><li><a href="/private/secret.html">内部</a></li><li><a href="/status/404">失效链接</a></li><li><a href="/cal/2024/1">活动日历</a></li><li><a href="/stub">旧地址</a></li><li><a href="http://other.example/">友情链接</a></li><li><a href="mailto:admin@example.com">联系</a></li><li><a href="/dup/a">A</a></li><li><a href="/dup/b">B</a></li><li><a href="/bin">下载</a></li></ul></div>{}</body></html>"#,
            top_nav(),
            footer()
        )),
        ["book", "1", ""] => gbk_html(&toc_page("book/1", &chapter_titles(&state.book)), "text/html"),
        ["book", "1", file] => {
            let stem = file.trim_end_matches(".html");
            let (n, part) = match stem.split_once('_') {
                Some((n, p)) => (n.parse().unwrap_or(0), p.parse().unwrap_or(0)),
                None => (stem.parse().unwrap_or(0), 1),
            };
            if !(1..=state.book.len()).contains(&n) || !(1..=3).contains(&part) || (n != 3 && part != 1) {
                return respond(StatusCode::NOT_FOUND, "text/html", "<h1>404 Not Found</h1>");
            }
            let page = book_page(&state.book, n, part);
            // Chapter 1 declares its charset in the header only, the others in <meta> only,
            // the split chapter nowhere; chapter 4's server adds the classic default
            // `iso-8859-1`, which overrides its <meta> and is wrong.
            let ct = match n {
                1 => "text/html; charset=GBK",
                4 => "text/html; charset=iso-8859-1",
                _ => "text/html",
            };
            gbk_html(&page, ct)
        }
        ["extra", "sitemap-only.html"] => {
            let ch = &state.alice[0];
            let nav = Nav {
                prev: "/".into(),
                toc: "/".into(),
                next: "/".into(),
                next_label: "下一章",
            };
            html(p_article_page(&ch.title, &ch.paragraphs, &nav))
        }
        ["en", "1.html"] => {
            let ch = &state.alice[1];
            let nav = Nav {
                prev: "/".into(),
                toc: "/".into(),
                next: "/en/1.html".into(),
                next_label: "下一页",
            };
            html(table_page(&ch.title, &ch.paragraphs, &nav))
        }
        ["js", "1.html"] => {
            // The chapter written by a script, all in \uXXXX escapes, cut in two pieces.
            let ch = &state.book[1];
            let html_text: String = ch.paragraphs.iter().map(|p| format!("<p>{}</p>", html_escape(p))).collect();
            let escaped: String = html_text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
            let (a, b) = escaped.split_at(escaped.len() / 12 * 6);
            html(format!(
                r#"<html><head><title>{}</title></head><body>{}<div id="content"></div><script>var t = "{a}" +
                "{b}"; document.getElementById("content").innerHTML = t;</script>{}</body></html>"#,
                ch.title, top_nav(), footer()
            ))
        }
        ["js", n @ ("2.html" | "3.html")] => {
            // An empty page whose script fetches the chapter from a JSON endpoint (under
            // /private/ for page 3, which robots.txt denies).
            let api = if *n == "2.html" { "/api/chapter/2.json" } else { "/private/api/3.json" };
            html(format!(
                r##"<html><head><title>第三回</title></head><body>{}<div id="content"></div><script>$.getJSON("{api}", function (d) {{ $("#content").html(d.data.content); }});</script>{}</body></html>"##,
                top_nav(), footer()
            ))
        }
        ["api", "chapter", "2.json"] => {
            let ch = &state.book[2];
            let body = serde_json::json!({"code": 0, "data": {"title": ch.title, "content": ch.paragraphs}});
            respond(StatusCode::OK, "application/json", body.to_string())
        }
        ["private", ..] => html("<html><body><p>secret</p></body></html>".into()),
        ["status", "404"] => respond(StatusCode::NOT_FOUND, "text/html", "<html><body><h1>404 Not Found</h1></body></html>"),
        ["status", "500"] => respond(StatusCode::INTERNAL_SERVER_ERROR, "text/html", "<h1>500</h1>"),
        ["status", "429"] if count == 1 => Response::builder()
            .status(StatusCode::TOO_MANY_REQUESTS)
            .header(header::RETRY_AFTER, "1")
            .body(Body::from("slow down"))
            .unwrap(),
        ["status", "429"] => html("<html><body><div id=content>终于等到你，还好我没放弃。</div></body></html>".into()),
        ["status", "503"] if count == 1 => {
            let at = httpdate(std::time::SystemTime::now() + Duration::from_secs(2));
            Response::builder()
                .status(StatusCode::SERVICE_UNAVAILABLE)
                .header(header::RETRY_AFTER, at)
                .body(Body::from("maintenance"))
                .unwrap()
        }
        ["status", "503"] => html("<html><body><p>back</p></body></html>".into()),
        ["cal", y, m] => {
            // A calendar: every month links to the next and previous month and the next year,
            // forever.
            let (y, m): (i32, i32) = (y.parse().unwrap_or(2024), m.parse().unwrap_or(1));
            let next = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
            let prev = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
            html(format!(
                r#"<html><body><h1>{y}年{m}月活动</h1><p>本月暂无活动。</p><a href="/cal/{}/{}">上个月</a> <a href="/cal/{}/{}">下个月</a> <a href="/cal/{}/{m}">明年</a></body></html>"#,
                prev.0,
                prev.1,
                next.0,
                next.1,
                y + 1
            ))
        }
        ["loop", "a"] => redirect(StatusCode::FOUND, "/loop/b"),
        ["loop", "b"] => redirect(StatusCode::MOVED_PERMANENTLY, "/loop/a"),
        ["chain", n] => {
            let n: u32 = n.parse().unwrap_or(0);
            redirect(StatusCode::FOUND, &format!("/chain/{}", n + 1))
        }
        ["moved"] => redirect(StatusCode::MOVED_PERMANENTLY, "/book/1/1.html#top"),
        ["redirect-private"] => redirect(StatusCode::FOUND, "http://10.255.255.1/secret"),
        ["stub"] => html(r#"<html><body><br><br><script>window.location="/book/1/";</script><center><h3><a href="/book/1/"><p>&#x5982;&#x679C;&#x60A8;&#x7684;&#x9875;&#x9762;&#x6CA1;&#x6709;&#x81EA;&#x52A8;&#x8DF3;&#x8F6C;&#xFF0C;&#x8BF7;&#x70B9;&#x51FB;&#x8FD9;&#x91CC;</p></a></h3></center></body></html>"#.into()),
        ["slow"] => {
            // Headers at once, then one byte every 100 ms for at most 10 s.
            let stream = futures_util::stream::unfold(0u32, |i| async move {
                if i >= 100 {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                Some((Ok::<_, std::io::Error>(Bytes::from_static(b"x")), i + 1))
            });
            respond(StatusCode::OK, "text/html", Body::from_stream(stream))
        }
        ["huge"] => {
            // 50 MB of HTML in 64 KiB chunks, streamed without a Content-Length.
            const CHUNK: usize = 64 * 1024;
            const TOTAL: usize = 50 * 1024 * 1024;
            let chunk = Bytes::from(b"<p>".iter().chain(&[b'x'; CHUNK - 7]).chain(b"</p>").copied().collect::<Vec<u8>>());
            let stream = futures_util::stream::unfold(0usize, move |sent| {
                let chunk = chunk.clone();
                async move { (sent < TOTAL).then(|| (Ok::<_, std::io::Error>(chunk), sent + CHUNK)) }
            });
            respond(StatusCode::OK, "text/html", Body::from_stream(stream))
        }
        ["bin"] => respond(StatusCode::OK, "application/octet-stream", vec![0u8; 1024 * 1024]),
        ["image.png"] => respond(StatusCode::OK, "image/png", b"\x89PNG\r\n\x1a\n....".to_vec()),
        ["no-type"] => Response::builder().body(Body::from("<html><body><p>没有类型的页面。</p></body></html>")).unwrap(),
        ["gzip"] => {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all("<html><body><p>压缩的页面，gzip。</p></body></html>".as_bytes()).unwrap();
            Response::builder()
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::CONTENT_ENCODING, "gzip")
                .body(Body::from(gz.finish().unwrap()))
                .unwrap()
        }
        ["br"] => {
            let mut out = Vec::new();
            let input = "<html><body><p>压缩的页面，brotli。</p></body></html>".as_bytes();
            brotli::BrotliCompress(&mut &input[..], &mut out, &Default::default()).unwrap();
            Response::builder()
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::CONTENT_ENCODING, "br")
                .body(Body::from(out))
                .unwrap()
        }
        ["etag"] => {
            if headers.get(header::IF_NONE_MATCH).is_some_and(|v| v == "\"v1\"") {
                return Response::builder()
                    .status(StatusCode::NOT_MODIFIED)
                    .header(header::ETAG, "\"v1\"")
                    .body(Body::empty())
                    .unwrap();
            }
            Response::builder()
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::ETAG, "\"v1\"")
                .header(header::LAST_MODIFIED, "Wed, 21 Oct 2015 07:28:00 GMT")
                .body(Body::from(r#"<html><body><div id="content">有版本号的页面，第二次应当返回304。</div><a href="/etag-child">下一章</a></body></html>"#))
                .unwrap()
        }
        ["etag-child"] => html("<html><body><p>子页面。</p></body></html>".into()),
        ["no-content"] => Response::builder()
            .status(StatusCode::NO_CONTENT)
            .body(Body::empty())
            .unwrap(),
        ["dup", _] => html("<html><body><p>两个网址，同一个页面。</p></body></html>".into()),
        ["big5"] => {
            // The Gutenberg scrape is one line per chapter.
            let text = data("zh/jinghuayuan_hant_01.txt");
            let page = format!("<html><head><title>鏡花緣</title></head><body><div id=\"content\">{}</div></body></html>", text.trim());
            respond(StatusCode::OK, "text/html", encoding_rs::BIG5.encode(&page).0.into_owned())
        }
        ["cf"] => respond(StatusCode::FORBIDDEN, "text/html; charset=UTF-8", data("html/69shuba_cloudflare_challenge.html")),
        ["bench", file] => {
            let i: usize = file.trim_end_matches(".html").parse().unwrap_or(usize::MAX);
            if i >= state.bench_pages {
                return respond(StatusCode::NOT_FOUND, "text/html", "<h1>404</h1>");
            }
            let ch = &state.book[i % state.book.len()];
            let children: Vec<String> = (10 * i + 1..=10 * i + 10)
                .filter(|c| *c < state.bench_pages)
                .map(|c| format!(r#"<a href="/bench/{c}.html">第{c}章</a>"#))
                .collect();
            let nav = Nav {
                prev: "/bench/0.html".into(),
                toc: "/bench/0.html".into(),
                next: format!("/bench/{}.html", (i + 1) % state.bench_pages),
                next_label: "下一章",
            };
            let heading = format!("第{i}章 {}", ch.title);
            let page = div_br_page("bench", &heading, &ch.paragraphs, &nav, Some("gbk"), Some(&children.join(" ")));
            gbk_html(&page, "text/html")
        }
        _ => respond(StatusCode::NOT_FOUND, "text/html", "<html><body><h1>404 Not Found</h1></body></html>"),
    }
}

fn httpdate(t: std::time::SystemTime) -> String {
    let dt: chrono::DateTime<chrono::Utc> = t.into();
    dt.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// A `HeaderValue` from a static string (test convenience).
pub fn hv(s: &'static str) -> HeaderValue {
    HeaderValue::from_static(s)
}
