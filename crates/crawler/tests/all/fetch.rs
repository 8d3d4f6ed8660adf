//! The fetcher against a real local server: charsets, redirects, statuses, timeouts, size
//! limits, content types, compression, conditional requests, the safety guard, and WARC export
//! of what it fetched.

use crate::common;

use std::time::{Duration, Instant};

use common::FixtureServer;
use crawler::safety::SafetySettings;
use crawler::snapshot::{decode_headers, encode_headers};
use crawler::warc::{WarcReader, WarcWriter};
use crawler::{
    BodyStatus, Error, FetchRequest, FetchSettings, Fetcher, Sha256, Snapshot, TimeoutPhase,
    Validators, Wire,
};
use extract::charset;

fn settings() -> FetchSettings {
    FetchSettings {
        safety: SafetySettings {
            allow_private: true,
            ..SafetySettings::default()
        },
        ..FetchSettings::default()
    }
}

fn fetcher() -> Fetcher {
    Fetcher::new(settings()).unwrap()
}

async fn get(f: &Fetcher, server: &FixtureServer, path: &str) -> Snapshot {
    f.fetch(&FetchRequest::get(server.url(path))).await.unwrap()
}

async fn get_err(f: &Fetcher, server: &FixtureServer, path: &str) -> Error {
    f.fetch(&FetchRequest::get(server.url(path)))
        .await
        .unwrap_err()
}

#[tokio::test]
async fn gbk_pages_decode_with_and_without_a_declared_charset() {
    let server = FixtureServer::start().await;
    let f = fetcher();
    let book = common::book();
    for (path, source) in [
        ("/book/1/1.html", charset::CharsetSource::Header),
        ("/book/1/2.html", charset::CharsetSource::Meta),
        ("/book/1/3.html", charset::CharsetSource::Detected),
        ("/book/1/", charset::CharsetSource::Detected),
    ] {
        let snap = get(&f, &server, path).await;
        assert_eq!(snap.status, 200);
        let d = charset::decode(&snap.body, snap.content_type(), None);
        assert_eq!((d.encoding, d.source), (encoding_rs::GBK, source), "{path}");
        assert!(!d.had_errors, "{path}");
        let want = match path {
            "/book/1/" => "《三国演义》是中国古典四大名著之一",
            _ => &book[path[8..9].parse::<usize>().unwrap() - 1].paragraphs[0],
        };
        assert!(d.text.contains(want), "{path}");
        assert_eq!(Sha256::of(&snap.body), snap.sha256);
    }
    let snap = get(&f, &server, "/big5").await;
    let d = charset::decode(&snap.body, snap.content_type(), None);
    assert_eq!(d.encoding, encoding_rs::BIG5);
    assert!(d.text.contains("女魁星北斗垂景象"));
}

#[tokio::test]
async fn snapshot_records_request_response_and_headers() {
    let server = FixtureServer::start().await;
    let snap = get(&fetcher(), &server, "/moved").await;
    assert_eq!(snap.request_url, server.url("/moved"));
    assert_eq!(snap.final_url, server.url("/book/1/1.html"));
    assert_eq!(snap.redirects.len(), 1);
    assert_eq!(snap.redirects[0].status, 301);
    assert_eq!(snap.status, 200);
    assert_eq!(snap.http_version, "HTTP/1.1");
    assert_eq!(snap.body_status, BodyStatus::Complete);
    assert_eq!(snap.content_type(), Some("text/html; charset=GBK"));
    assert_eq!(snap.remote_addr, Some(server.addr));
    assert_eq!(
        decode_headers(&encode_headers(&snap.headers)).unwrap(),
        snap.headers
    );

    // The request headers recorded are the ones the server saw.
    let seen = &server.hits_on("/book/1/1.html")[0].headers;
    for name in [
        "user-agent",
        "accept",
        "accept-language",
        "accept-encoding",
        "host",
    ] {
        assert_eq!(snap.request_headers.get(name), seen.get(name), "{name}");
    }
    assert!(seen["user-agent"].to_str().unwrap().contains("copyhound/"));
    assert!(
        seen["user-agent"]
            .to_str()
            .unwrap()
            .contains("+https://example.invalid/copyhound/crawler")
    );
}

#[tokio::test]
async fn gzip_and_brotli_are_decoded_and_kept_as_served() {
    let server = FixtureServer::start().await;
    let f = fetcher();
    for (path, text, coding) in [
        ("/gzip", "压缩的页面，gzip。", "gzip"),
        ("/br", "压缩的页面，brotli。", "br"),
    ] {
        let snap = get(&f, &server, path).await;
        assert!(
            String::from_utf8(snap.body.to_vec())
                .unwrap()
                .contains(text),
            "{path}"
        );
        assert_eq!(snap.sha256, Sha256::of(&snap.body));
        // The headers are as served and describe the wire bytes, which are kept.
        assert_eq!(
            snap.headers.get("content-encoding").unwrap(),
            coding,
            "{path}"
        );
        let Wire::Encoded { bytes, sha256 } = &snap.wire else {
            panic!("{path}: {:?}", snap.wire);
        };
        assert_eq!(*sha256, Sha256::of(bytes));
        assert_ne!(bytes, &snap.body);
        if coding == "gzip" {
            assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
        }
    }
    let plain = get(&f, &server, "/book/1/1.html").await;
    assert_eq!(plain.wire, Wire::Identity);
    assert_eq!(plain.wire_bytes(), Some(&plain.body));
}

/// A server on a raw socket that records the request bytes and answers with `response`.
async fn raw_server(response: Vec<u8>) -> (std::net::SocketAddr, tokio::task::JoinHandle<Vec<u8>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut buf).await.unwrap();
            assert!(n > 0, "connection closed mid-request");
            got.extend_from_slice(&buf[..n]);
        }
        // The client may hang up early (a refused body); what it read is what matters.
        let _ = conn.write_all(&response).await;
        let _ = conn.shutdown().await;
        got
    });
    (addr, task)
}

#[tokio::test]
async fn the_request_and_response_are_recorded_as_they_went_over_the_wire() {
    let page = "<html><body><p>第一回　宴桃园豪杰三结义</p></body></html>".repeat(20);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, page.as_bytes()).unwrap();
    let wire = gz.finish().unwrap();
    let mut response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\
         content-encoding: gzip\r\ncontent-length: {}\r\nx-pirate: 1\r\n\r\n",
        wire.len()
    )
    .into_bytes();
    let head_len = response.len();
    response.extend_from_slice(&wire);
    let (addr, server) = raw_server(response.clone()).await;
    let url = url::Url::parse(&format!("http://{addr}/book/1.html?p=2")).unwrap();
    let snap = fetcher().fetch(&FetchRequest::get(url)).await.unwrap();
    let received = server.await.unwrap();

    // The stored request is byte for byte what the server read.
    let mut recorded = b"GET /book/1.html?p=2 HTTP/1.1\r\n".to_vec();
    recorded.extend_from_slice(&encode_headers(&snap.request_headers));
    recorded.extend_from_slice(b"\r\n");
    assert_eq!(
        String::from_utf8_lossy(&received),
        String::from_utf8_lossy(&recorded)
    );
    assert_eq!(snap.http_version, "HTTP/1.1");
    assert_eq!(snap.body, page.as_bytes());
    assert_eq!(snap.wire_bytes().unwrap(), &wire[..]);

    // So are the WARC's request block and the response block (head and wire bytes).
    let mut w = WarcWriter::new(Vec::new());
    w.write_snapshot(&snap).unwrap();
    let records: Vec<_> = WarcReader::new(std::io::Cursor::new(w.finish().unwrap()))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let request = records
        .iter()
        .find(|r| r.record_type() == Some("request"))
        .unwrap();
    assert_eq!(request.block, received);
    let served = records
        .iter()
        .find(|r| r.record_type() == Some("response"))
        .unwrap();
    assert_eq!(served.block, response);
    assert_eq!(served.http_payload().unwrap(), &response[head_len..]);
    for r in &records {
        r.verify_digests().unwrap();
    }
}

#[tokio::test]
async fn bad_content_codings_fail_the_fetch_with_the_coding_named() {
    let mut truncated = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, "第一回".repeat(500).as_bytes()).unwrap();
        gz.finish().unwrap()
    };
    truncated.truncate(truncated.len() / 2);
    let bomb = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &vec![b' '; 64 << 20]).unwrap();
        gz.finish().unwrap()
    };
    for (coding, body, says) in [
        ("gzip", truncated, "gzip"),
        ("compress", b"whatever".to_vec(), "compress"),
        ("gzip, rot13", b"whatever".to_vec(), "rot13"),
        ("gzip", bomb, "decompression bomb"),
    ] {
        let mut response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-encoding: {coding}\r\n\
             content-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        response.extend_from_slice(&body);
        let (addr, _server) = raw_server(response).await;
        let url = url::Url::parse(&format!("http://{addr}/")).unwrap();
        let err = fetcher().fetch(&FetchRequest::get(url)).await.unwrap_err();
        assert!(
            matches!(err, Error::ContentCoding { .. }),
            "{coding}: {err}"
        );
        assert!(err.to_string().contains(says), "{coding}: {err}");
    }
}

#[tokio::test]
async fn redirect_loops_and_chains_are_stopped() {
    let server = FixtureServer::start().await;
    let f = fetcher();
    let err = get_err(&f, &server, "/loop/a").await;
    assert!(matches!(err, Error::RedirectLoop { .. }), "{err}");
    assert_eq!(
        server.hits().len(),
        2,
        "a → b → a is caught before a is asked again"
    );

    let err = get_err(&f, &server, "/chain/0").await;
    assert!(
        matches!(err, Error::TooManyRedirects { limit: 10, .. }),
        "{err}"
    );
    assert_eq!(server.hits_on("/chain/10").len(), 1);
    assert!(server.hits_on("/chain/11").is_empty());
}

#[tokio::test]
async fn error_statuses_are_evidence_not_errors() {
    let server = FixtureServer::start().await;
    let f = fetcher();
    let s404 = get(&f, &server, "/status/404").await;
    assert_eq!(s404.status, 404);
    assert!(String::from_utf8_lossy(&s404.body).contains("404 Not Found"));
    let s500 = get(&f, &server, "/status/500").await;
    assert_eq!(s500.status, 500);
    let s429 = get(&f, &server, "/status/429").await;
    assert_eq!(
        (s429.status, s429.retry_after()),
        (429, Some(Duration::from_secs(1)))
    );
    let s503 = get(&f, &server, "/status/503").await;
    let wait = s503.retry_after().unwrap();
    assert!(
        wait <= Duration::from_secs(3),
        "http-date Retry-After: {wait:?}"
    );
}

#[tokio::test]
async fn slow_drip_times_out() {
    let server = FixtureServer::start().await;
    let f = Fetcher::new(FetchSettings {
        timeout: Duration::from_millis(800),
        ..settings()
    })
    .unwrap();
    let started = Instant::now();
    let err = get_err(&f, &server, "/slow").await;
    assert!(
        matches!(
            err,
            Error::Timeout {
                phase: TimeoutPhase::Total,
                ..
            }
        ),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));

    // The per-read timeout catches a server that stops sending altogether.
    let f = Fetcher::new(FetchSettings {
        read_timeout: Duration::from_millis(50),
        ..settings()
    })
    .unwrap();
    let err = get_err(&f, &server, "/slow").await;
    assert!(
        matches!(
            err,
            Error::Timeout {
                phase: TimeoutPhase::Read,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("/slow"), "{err}");
}

#[tokio::test]
async fn fifty_megabytes_are_cut_at_the_limit() {
    let server = FixtureServer::start().await;
    let snap = get(&fetcher(), &server, "/huge").await;
    assert_eq!(snap.body_status, BodyStatus::Truncated);
    assert_eq!(snap.body.len(), 5 * 1024 * 1024);
    assert!(snap.body.starts_with(b"<p>xxx"));
    let small = fetcher()
        .fetch(&FetchRequest {
            max_body_bytes: Some(1000),
            accept_json: false,
            accept_font: false,
            accept_svg: false,
            accept_image: false,
            ..FetchRequest::get(server.url("/huge"))
        })
        .await
        .unwrap();
    assert_eq!(
        (small.body.len(), small.body_status),
        (1000, BodyStatus::Truncated)
    );
}

#[tokio::test]
async fn binary_responses_are_recorded_without_their_body() {
    let server = FixtureServer::start().await;
    let f = fetcher();
    for path in ["/bin", "/image.png"] {
        let snap = get(&f, &server, path).await;
        assert_eq!(snap.status, 200);
        assert_eq!(snap.body_status, BodyStatus::NotDownloaded, "{path}");
        assert!(snap.body.is_empty());
        assert!(snap.media_type().is_some());
    }
    let snap = get(&f, &server, "/no-type").await;
    assert_eq!(
        snap.body_status,
        BodyStatus::Complete,
        "no content type: downloaded and judged later"
    );
}

#[tokio::test]
async fn conditional_requests_get_304() {
    let server = FixtureServer::start().await;
    let f = fetcher();
    let first = get(&f, &server, "/etag").await;
    let validators = Validators::from_snapshot(&first).unwrap();
    assert_eq!(validators.etag.as_deref(), Some("\"v1\""));
    let again = f
        .fetch(&FetchRequest {
            validators: Some(validators),
            ..FetchRequest::get(server.url("/etag"))
        })
        .await
        .unwrap();
    assert_eq!(again.status, 304);
    let hit = &server.hits_on("/etag")[1];
    assert_eq!(hit.headers["if-none-match"], "\"v1\"");
    assert_eq!(
        hit.headers["if-modified-since"],
        "Wed, 21 Oct 2015 07:28:00 GMT"
    );
}

#[tokio::test]
async fn private_addresses_are_refused_after_dns_and_on_redirects() {
    let server = FixtureServer::start().await;
    // Default policy: the loopback server itself is refused, by literal and by name.
    let strict = Fetcher::new(FetchSettings::default()).unwrap();
    let err = get_err(&strict, &server, "/").await;
    assert!(matches!(err, Error::AddressRefused { .. }), "{err}");
    let by_name = url::Url::parse(&format!("http://localhost:{}/", server.addr.port())).unwrap();
    let err = strict.fetch(&FetchRequest::get(by_name)).await.unwrap_err();
    match &err {
        Error::AddressRefused { host, addr, .. } => {
            assert_eq!(host, "localhost");
            assert!(addr.is_loopback());
        }
        other => panic!("expected a refusal after dns, got {other}"),
    }
    assert!(
        err.to_string().contains("--allow-private"),
        "the message says how to allow it: {err}"
    );
    assert!(server.hits().is_empty(), "nothing reached the server");

    // Allowing only the fixture's own address: a redirect to a private network is refused
    // before any connection is made.
    let lab = Fetcher::new(FetchSettings {
        safety: SafetySettings {
            allow_private: false,
            allowed_networks: vec!["127.0.0.1/32".parse().unwrap()],
            ..SafetySettings::default()
        },
        ..FetchSettings::default()
    })
    .unwrap();
    assert_eq!(get(&lab, &server, "/dup/a").await.status, 200);
    let err = get_err(&lab, &server, "/redirect-private").await;
    match err {
        Error::AddressRefused { addr, .. } => assert_eq!(addr.to_string(), "10.255.255.1"),
        other => panic!("expected a refused redirect, got {other}"),
    }
}

#[tokio::test]
async fn warc_export_round_trips_and_verifies() {
    let server = FixtureServer::start().await;
    let f = fetcher();
    let chapter = get(&f, &server, "/moved").await;
    let truncated = f
        .fetch(&FetchRequest {
            max_body_bytes: Some(4096),
            accept_json: false,
            accept_font: false,
            accept_svg: false,
            accept_image: false,
            ..FetchRequest::get(server.url("/huge"))
        })
        .await
        .unwrap();
    for gzip in [false, true] {
        let mut w = if gzip {
            WarcWriter::new_gzip(Vec::new())
        } else {
            WarcWriter::new(Vec::new())
        };
        w.write_warcinfo("evidence.warc", &[("operator", "copyhound tests")])
            .unwrap();
        let written = w.write_snapshot(&chapter).unwrap();
        w.write_snapshot(&truncated).unwrap();
        let bytes = w.finish().unwrap();
        if gzip {
            assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
        }
        let records: Vec<_> = WarcReader::new(std::io::Cursor::new(bytes))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let types: Vec<&str> = records.iter().map(|r| r.record_type().unwrap()).collect();
        assert_eq!(
            types,
            [
                "warcinfo", "response", "request", "response", "metadata", "request", "response",
                "metadata"
            ]
        );
        for r in &records {
            assert_eq!(r.version, "WARC/1.1");
            r.verify_digests().unwrap();
        }
        let response = &records[3];
        assert_eq!(
            response.field("WARC-Record-ID"),
            Some(written.response.as_str())
        );
        assert_eq!(
            response.field("WARC-Target-URI"),
            Some(chapter.final_url.as_str())
        );
        assert_eq!(response.field("WARC-IP-Address"), Some("127.0.0.1"));
        assert_eq!(response.http_payload().unwrap(), &chapter.body[..]);
        assert!(response.block.starts_with(b"HTTP/1.1 200 OK\r\n"));
        assert_eq!(
            records[2].field("WARC-Concurrent-To"),
            Some(written.response.as_str())
        );
        assert!(
            records[2]
                .block
                .starts_with(b"GET /book/1/1.html HTTP/1.1\r\n")
        );
        assert_eq!(
            records[4].field("WARC-Refers-To"),
            Some(written.response.as_str())
        );
        assert!(
            String::from_utf8_lossy(&records[4].block)
                .contains(&format!("body-sha256: {}", chapter.sha256))
        );
        assert_eq!(records[6].field("WARC-Truncated"), Some("length"));
        assert_eq!(records[6].http_payload().unwrap().len(), 4096);
    }

    // A flipped byte is caught.
    let mut w = WarcWriter::new(Vec::new());
    w.write_snapshot(&chapter).unwrap();
    let mut bytes = w.finish().unwrap();
    let at = bytes
        .windows(18)
        .position(|w| w == b"<div id=\"content\">")
        .unwrap()
        + 5;
    bytes[at] ^= 1;
    let records: Vec<_> = WarcReader::new(std::io::Cursor::new(bytes))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(records.iter().any(|r| r.verify_digests().is_err()));
}
