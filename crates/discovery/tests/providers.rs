//! Each search provider against a local server on 127.0.0.1 that answers in the provider's
//! documented format (`tests/data/discovery`, sources in its README): the request it sends
//! (method, path, parameters, headers, key, body), the hits it reads, and its quota, error,
//! slow and oversized answers. Then what discovery sends outside its rules (issue #43): a
//! key carried across a redirect to another host, a redirect or a name that leads to a
//! refused address, for the providers and for Common Crawl's downloads.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use crawler::outbound::{Outbound, OutboundSettings, Redirects};
use discovery::providers::{self, ProviderError, ProviderKind, ProviderSettings};

/// What the server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    headers: HeaderMap,
    body: Vec<u8>,
}

#[derive(Clone)]
struct Answer {
    status: StatusCode,
    body: Vec<u8>,
    /// Take the request and never answer.
    stall: bool,
    seen: Arc<Mutex<Vec<Seen>>>,
}

async fn answer(
    State(a): State<Answer>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, [(&'static str, &'static str); 1], Vec<u8>) {
    a.seen.lock().unwrap().push(Seen {
        method,
        path: uri.path().to_owned(),
        query: serde_urlencoded::from_str(uri.query().unwrap_or_default()).unwrap(),
        headers,
        body: body.to_vec(),
    });
    if a.stall {
        // A server that took the request and never answers.
        std::future::pending::<()>().await;
    }
    (a.status, [("content-type", "application/json")], a.body)
}

/// A server on 127.0.0.1 answering every request with `status` and `body`.
async fn server(status: u16, body: &[u8], stall: bool) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let state = Answer {
        status: StatusCode::from_u16(status).unwrap(),
        body: body.to_vec(),
        stall,
        seen: Arc::clone(&seen),
    };
    let app = Router::new().fallback(answer).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), seen)
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/data/discovery/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

const PHRASE: &str = "铃舌上缠着一缕褪色的朱砂红绳";

fn param<'a>(seen: &'a Seen, key: &str) -> Option<&'a str> {
    seen.query
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

async fn ask(
    kind: ProviderKind,
    endpoint: String,
    key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    let settings = ProviderSettings::new(kind, Some(endpoint), key);
    settings.validate().unwrap();
    let client = client(&crawler::SafetySettings {
        allow_private: true,
        ..crawler::SafetySettings::default()
    });
    providers::search(&client, &settings, PHRASE)
        .await
        .map(|hits| hits.into_iter().map(|h| h.url).collect())
}

/// A provider's client as discovery builds it: the address rules of `safety`, a redirect
/// followed to the same host only.
fn client(safety: &crawler::SafetySettings) -> Outbound {
    Outbound::new(&OutboundSettings {
        redirects: Redirects::SameHost,
        ..OutboundSettings::new(safety, "copyhound-test/1")
    })
    .unwrap()
}

#[tokio::test]
async fn searxng_is_asked_for_json_with_the_exact_phrase() {
    let (base, seen) = server(200, &fixture("searxng.json"), false).await;
    let urls = ask(ProviderKind::Searxng, base.clone(), None)
        .await
        .unwrap();
    assert_eq!(
        urls,
        [
            "https://pirate-one.example/book/12/3.html",
            "http://mirror.example/read/77"
        ]
    );
    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(seen.method, Method::GET);
    assert_eq!(seen.path, "/search");
    assert_eq!(param(&seen, "q"), Some(format!("\"{PHRASE}\"").as_str()));
    assert_eq!(param(&seen, "format"), Some("json"));
    assert!(seen.headers.get("authorization").is_none());
    // A base URL that already ends in /search is not doubled.
    let (base, seen) = server(200, &fixture("searxng.json"), false).await;
    ask(ProviderKind::Searxng, format!("{base}/search/"), None)
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap()[0].path, "/search");
}

#[tokio::test]
async fn searxng_without_the_json_format_is_an_error_answer() {
    // SearXNG answers 403 when `json` is not among the instance's search.formats.
    let (base, _) = server(403, b"<html>403 Forbidden</html>", false).await;
    let err = ask(ProviderKind::Searxng, base, None).await.unwrap_err();
    assert!(
        matches!(&err, ProviderError::Refused { status: 403, message } if message.contains("Forbidden")),
        "{err:?}"
    );
    assert_eq!(err.outcome(), "error");
}

#[tokio::test]
async fn brave_sends_the_key_in_its_header_and_reads_web_results() {
    let (base, seen) = server(200, &fixture("brave.json"), false).await;
    let endpoint = format!("{base}/res/v1/web/search");
    let urls = ask(ProviderKind::Brave, endpoint, Some("brave-key"))
        .await
        .unwrap();
    assert_eq!(urls, ["https://pirate-two.example/c/3"]);
    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(seen.method, Method::GET);
    assert_eq!(seen.path, "/res/v1/web/search");
    assert_eq!(seen.headers["x-subscription-token"], "brave-key");
    assert_eq!(seen.headers["accept"], "application/json");
    assert_eq!(param(&seen, "q"), Some(format!("\"{PHRASE}\"").as_str()));
    assert_eq!(param(&seen, "count"), Some("20"));
    // The key never travels in the URL.
    assert!(seen.query.iter().all(|(_, v)| v != "brave-key"));
}

#[tokio::test]
async fn brave_quota_and_key_errors_are_told_apart() {
    let (base, _) = server(429, &fixture("brave_429.json"), false).await;
    let err = ask(ProviderKind::Brave, base, Some("k")).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::Quota {
            status: 429,
            message: "Request rate limit exceeded for plan.".into()
        }
    );
    assert_eq!(err.outcome(), "quota");
    let (base, _) = server(401, &fixture("brave_401.json"), false).await;
    let err = ask(ProviderKind::Brave, base, Some("k")).await.unwrap_err();
    assert_eq!(
        err,
        ProviderError::Refused {
            status: 401,
            message: "The provided subscription token is invalid.".into()
        }
    );
}

#[tokio::test]
async fn baidu_posts_the_phrase_as_the_user_message_with_a_bearer_key() {
    let (base, seen) = server(200, &fixture("baidu.json"), false).await;
    let endpoint = format!("{base}/v2/ai_search/web_search");
    let urls = ask(ProviderKind::Baidu, endpoint, Some("bce-v3/ALTAK-test"))
        .await
        .unwrap();
    assert_eq!(
        urls,
        [
            "https://pirate-three.example/xs/3.html",
            "https://pirate-three.example/xs/4.html"
        ]
    );
    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(seen.method, Method::POST);
    assert_eq!(seen.path, "/v2/ai_search/web_search");
    assert_eq!(seen.headers["authorization"], "Bearer bce-v3/ALTAK-test");
    assert_eq!(seen.headers["content-type"], "application/json");
    let body: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
    assert_eq!(
        body["messages"],
        serde_json::json!([{"role": "user", "content": format!("\"{PHRASE}\"")}])
    );
    assert_eq!(body["search_source"], "baidu_search_v2");
    assert_eq!(body["resource_type_filter"][0]["type"], "web");
    assert_eq!(body["resource_type_filter"][0]["top_k"], 20);
}

#[tokio::test]
async fn baidu_errors_come_with_http_200_and_a_quota_message_is_a_quota() {
    let (base, _) = server(200, &fixture("baidu_quota.json"), false).await;
    let err = ask(ProviderKind::Baidu, base, Some("k")).await.unwrap_err();
    assert!(
        matches!(&err, ProviderError::Quota { status: 200, message } if message.contains("额度")),
        "{err:?}"
    );
    let (base, _) = server(401, &fixture("baidu_auth.json"), false).await;
    let err = ask(ProviderKind::Baidu, base, Some("k")).await.unwrap_err();
    assert!(
        matches!(&err, ProviderError::Refused { status: 401, message } if message.contains("InvalidHTTPAuthHeader")),
        "{err:?}"
    );
}

#[tokio::test]
async fn serpapi_sends_engine_query_and_key_and_reads_organic_links() {
    let (base, seen) = server(200, &fixture("serpapi.json"), false).await;
    let endpoint = format!("{base}/search.json");
    let urls = ask(ProviderKind::Serpapi, endpoint, Some("serp-key"))
        .await
        .unwrap();
    assert_eq!(
        urls,
        [
            "https://pirate-four.example/read/3",
            "https://pirate-four.example/read/4"
        ]
    );
    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/search.json");
    assert_eq!(param(&seen, "engine"), Some("google"));
    assert_eq!(param(&seen, "api_key"), Some("serp-key"));
    assert_eq!(param(&seen, "q"), Some(format!("\"{PHRASE}\"").as_str()));
    assert_eq!(param(&seen, "num"), Some("20"));
}

#[tokio::test]
async fn serpapi_out_of_searches_is_a_quota_and_an_empty_search_is_no_error() {
    let (base, _) = server(429, &fixture("serpapi_out.json"), false).await;
    let err = ask(ProviderKind::Serpapi, base, Some("k"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Quota {
            status: 429,
            message: "Your account has run out of searches.".into()
        }
    );
    let (base, _) = server(200, &fixture("serpapi_empty.json"), false).await;
    assert!(
        ask(ProviderKind::Serpapi, base, Some("k"))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_slow_or_oversized_answer_is_a_transport_error_not_a_hang() {
    let (base, seen) = server(200, &fixture("searxng.json"), true).await;
    let mut settings = ProviderSettings::new(ProviderKind::Searxng, Some(base), None);
    settings.timeout = Duration::from_millis(300);
    let err = providers::search(
        &client(&crawler::SafetySettings {
            allow_private: true,
            ..Default::default()
        }),
        &settings,
        PHRASE,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ProviderError::Transport(_)), "{err:?}");
    assert_eq!(seen.lock().unwrap().len(), 1, "asked once, never again");

    let big = format!(
        "{{\"results\": [], \"pad\": \"{}\"}}",
        "x".repeat(64 * 1024)
    );
    let (base, _) = server(200, big.as_bytes(), false).await;
    let mut settings = ProviderSettings::new(ProviderKind::Searxng, Some(base), None);
    settings.max_response_bytes = 16 * 1024;
    let err = providers::search(
        &client(&crawler::SafetySettings {
            allow_private: true,
            ..Default::default()
        }),
        &settings,
        PHRASE,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ProviderError::Transport(m) if m.contains("max_response_bytes")),
        "{err:?}"
    );
}

// Issue #43: outbound requests outside the rules ---------------------------------------------

/// A server on `ip` answering every request with a redirect to `to`, recording what it saw.
async fn redirecting(ip: &str, to: String) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let state = (to, Arc::clone(&seen));
    let app = Router::new()
        .fallback(
            |State((to, seen)): State<(String, Arc<Mutex<Vec<Seen>>>)>,
             method: Method,
             uri: Uri,
             headers: HeaderMap| async move {
                seen.lock().unwrap().push(Seen {
                    method,
                    path: uri.path().to_owned(),
                    query: serde_urlencoded::from_str(uri.query().unwrap_or_default()).unwrap(),
                    headers,
                    body: Vec::new(),
                });
                (StatusCode::FOUND, [("location", to)])
            },
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), seen)
}

/// Whether anything the server saw holds `secret`, in any header, the path or the query.
fn leaked(seen: &[Seen], secret: &str) -> bool {
    seen.iter().any(|s| {
        s.path.contains(secret)
            || s.query.iter().any(|(_, v)| v.contains(secret))
            || s.headers
                .values()
                .any(|v| String::from_utf8_lossy(v.as_bytes()).contains(secret))
    })
}

#[tokio::test]
async fn a_providers_key_never_follows_a_redirect_to_another_host() {
    for kind in [
        ProviderKind::Brave,
        ProviderKind::Serpapi,
        ProviderKind::Baidu,
    ] {
        let secret = format!("{}-secret-key-value", kind.as_str());
        // The other host: `localhost` where the provider is `127.0.0.1`, another name for
        // another origin.
        let (elsewhere, stolen) = server(200, b"{}", false).await;
        let port = elsewhere.rsplit(':').next().unwrap();
        let (endpoint, asked) =
            redirecting("127.0.0.1", format!("http://localhost:{port}/collect")).await;
        let err = ask(kind, endpoint, Some(&secret)).await.unwrap_err();
        assert!(
            matches!(&err, ProviderError::Transport(m) if m.contains("redirect")),
            "{kind:?}: {err:?}"
        );
        assert!(!err.to_string().contains(&secret), "{err}");
        assert_eq!(asked.lock().unwrap().len(), 1);
        let stolen = stolen.lock().unwrap();
        assert!(stolen.is_empty(), "{kind:?}: the other host was asked");
        assert!(!leaked(&stolen, &secret));
    }
}

#[tokio::test]
async fn a_redirect_on_the_providers_own_host_is_followed() {
    // The API moved to another path of the same server, which carries the key on.
    let app = Router::new()
        .route(
            "/old",
            axum::routing::get(|| async { (StatusCode::FOUND, [("location", "/new")]) }),
        )
        .route(
            "/new",
            axum::routing::get(|headers: HeaderMap| async move {
                let keyed = headers
                    .get("x-subscription-token")
                    .is_some_and(|k| k == "k");
                if keyed {
                    (StatusCode::OK, fixture("brave.json"))
                } else {
                    (StatusCode::UNAUTHORIZED, fixture("brave_401.json"))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let urls = ask(ProviderKind::Brave, format!("http://{addr}/old"), Some("k"))
        .await
        .unwrap();
    assert!(!urls.is_empty());
}

/// Settings that allow `127.0.0.2` alone among the non-public addresses, as a lab network
/// would be listed, `wet.test` naming 127.0.0.1.
fn lab_only() -> crawler::CrawlSettings {
    let mut crawl = crawler::CrawlSettings::default();
    crawl.fetch.safety.allowed_networks = vec!["127.0.0.2/32".parse().unwrap()];
    crawl
        .fetch
        .safety
        .hosts
        .insert("wet.test".into(), "127.0.0.1".parse().unwrap());
    crawl
}

/// A gzip list of one WET path.
fn segment_list_gz() -> Vec<u8> {
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"crawl-data/CC-MAIN-2026-44/segments/1/wet/a.warc.wet.gz\n")
        .unwrap();
    gz.finish().unwrap()
}

#[tokio::test]
async fn common_crawl_downloads_follow_no_redirect_or_name_to_a_refused_address() {
    use discovery::segment_list;
    // The list, on 127.0.0.1: an address the settings refuse.
    let (target, fetched) = server(200, &segment_list_gz(), false).await;
    let port = target.rsplit(':').next().unwrap();
    let crawl = lab_only();
    for (how, to) in [
        (
            "an address",
            format!("http://127.0.0.1:{port}/wet.paths.gz"),
        ),
        ("a name", format!("http://localhost:{port}/wet.paths.gz")),
        (
            "a listed name",
            format!("http://wet.test:{port}/wet.paths.gz"),
        ),
    ] {
        // A server on the allowed 127.0.0.2 redirects there.
        let (lab, asked) = redirecting("127.0.0.2", to).await;
        let err = segment_list(
            &format!("{lab}/wet.paths.gz"),
            &crawl,
            bounds::Shard::ALL,
            false,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("loopback address 127.0.0.1"), "{how}: {err}");
        assert_eq!(asked.lock().unwrap().len(), 1, "{how}");
        assert!(
            fetched.lock().unwrap().is_empty(),
            "{how}: the refused address was fetched"
        );
    }
    // A name that resolves to a refused address, asked for directly.
    let err = segment_list(
        &format!("http://wet.test:{port}/wet.paths.gz"),
        &crawl,
        bounds::Shard::ALL,
        false,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("wet.test") && err.contains("loopback"),
        "{err}"
    );
    assert!(fetched.lock().unwrap().is_empty());
    // The deployment's allow_private lets the same redirect through.
    let (lab, _) = redirecting("127.0.0.2", format!("http://localhost:{port}/wet.paths.gz")).await;
    let mut open = crawl.clone();
    open.fetch.safety.allow_private = true;
    let paths = segment_list(
        &format!("{lab}/wet.paths.gz"),
        &open,
        bounds::Shard::ALL,
        false,
    )
    .await
    .unwrap();
    assert_eq!(
        paths,
        ["https://data.commoncrawl.org/crawl-data/CC-MAIN-2026-44/segments/1/wet/a.warc.wet.gz"]
    );
}
