//! Property tests of the crate's invariants: normalisation is idempotent and order-blind,
//! evidence round-trips byte for byte (header blocks, zstd, WARC), the frontier never hands
//! out a URL twice, host admission never breaks the delay or the concurrency limit, and GBK
//! text survives the charset pipeline without a declaration.

use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use crawler::frontier::{Claim, Discovery, EntryState, FrontierEntry, FrontierLimits};
use crawler::politeness::{Backoff, HostFeedback, HostLimits, HostState, LeaseId};
use crawler::snapshot::{compress, decode_headers, decompress, encode_headers};
use crawler::warc::{WarcReader, WarcWriter};
use crawler::{BodyStatus, Frontier, MemoryFrontier, Sha256, Snapshot, Wire, charset, links};
use proptest::prelude::*;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

fn path_segment() -> impl Strategy<Value = String> {
    "[a-z0-9_-]{1,8}"
}

fn query_pair() -> impl Strategy<Value = (String, String)> {
    ("[a-z]{1,5}", "[a-z0-9%]{0,6}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn normalisation_is_idempotent_and_ignores_parameter_order(
        host in "[a-z]{1,10}\\.(com|cn|info)",
        segments in prop::collection::vec(path_segment(), 0..5),
        mut pairs in prop::collection::vec(query_pair(), 0..6),
        fragment in prop::option::of("[a-z]{1,6}"),
    ) {
        // Distinct names, so the order of equal names (which is kept) does not matter here.
        let mut seen = HashSet::new();
        pairs.retain(|(k, _)| seen.insert(k.clone()));
        let build = |pairs: &[(String, String)]| {
            let q: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let mut s = format!("http://{host}:80/{}", segments.join("/"));
            if !q.is_empty() {
                s.push('?');
                s.push_str(&q.join("&"));
            }
            if let Some(f) = &fragment {
                s.push('#');
                s.push_str(f);
            }
            Url::parse(&s).unwrap()
        };
        let a = links::normalize(&build(&pairs)).unwrap();
        prop_assert_eq!(links::normalize(&a).unwrap(), a.clone());
        pairs.reverse();
        prop_assert_eq!(links::normalize(&build(&pairs)).unwrap(), a.clone());
        prop_assert!(a.fragment().is_none() && a.port().is_none());
    }

    #[test]
    fn header_blocks_round_trip(
        headers in prop::collection::vec(("[a-z][a-z0-9-]{0,15}", prop::collection::vec(0x20u8..0x7f, 0..40)), 0..12),
        high in prop::collection::vec(0x80u8..=0xff, 0..20),
    ) {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let value: Vec<u8> = value.into_iter().chain(high.iter().copied()).collect();
            // Header values never begin or end with white space on the wire.
            let value = value.trim_ascii().to_vec();
            map.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_bytes(&value).unwrap());
        }
        prop_assert_eq!(decode_headers(&encode_headers(&map)).unwrap(), map);
    }

    #[test]
    fn zstd_round_trips(body in prop::collection::vec(any::<u8>(), 0..20_000)) {
        prop_assert_eq!(decompress(&compress(&body).unwrap(), body.len()).unwrap(), body);
    }

    #[test]
    fn warc_records_round_trip_any_body(body in prop::collection::vec(any::<u8>(), 0..5_000), gzip in any::<bool>()) {
        let snap = snapshot(Bytes::from(body.clone()));
        let mut w = if gzip { WarcWriter::new_gzip(Vec::new()) } else { WarcWriter::new(Vec::new()) };
        w.write_snapshot(&snap).unwrap();
        let bytes = w.finish().unwrap();
        let records: Vec<_> = WarcReader::new(std::io::Cursor::new(bytes)).unwrap().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(records.len(), 3);
        for r in &records {
            prop_assert!(r.verify_digests().is_ok());
        }
        prop_assert_eq!(records[1].http_payload().unwrap(), &body[..]);
    }

    #[test]
    fn gbk_text_survives_undeclared(text in "[\u{4e00}-\u{9fa5}，。！？]{20,200}") {
        let bytes = encoding_rs::GBK.encode(&format!("<html><body><p>{text}</p></body></html>")).0.into_owned();
        let decoded = charset::decode(&bytes, None, Some("cn"));
        prop_assert!(decoded.text.contains(&text), "decoded as {}", decoded.encoding.name());
    }

    #[test]
    fn host_admission_keeps_delay_and_concurrency(
        steps in prop::collection::vec((0i64..400, any::<bool>(), any::<bool>()), 1..80),
    ) {
        let limits = HostLimits { delay: Duration::from_millis(100), max_in_flight: 2, lease: Duration::from_secs(60) };
        let backoff = Backoff { base: Duration::from_millis(50), max: Duration::from_secs(5), max_retry_after: Duration::from_secs(60) };
        let mut state = HostState::default();
        let mut now = DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
        let mut held: Vec<LeaseId> = Vec::new();
        let mut last_start: Option<DateTime<Utc>> = None;
        for (i, (advance, release, failed)) in steps.into_iter().enumerate() {
            now += chrono::Duration::milliseconds(advance);
            if release && !held.is_empty() {
                let fb = if failed { HostFeedback::Failed } else { HostFeedback::Success };
                state.release(held.remove(0), fb, &backoff, now, 0.5);
            } else if let Ok(lease) = state.admit(&limits, now, LeaseId(i as u64)) {
                if let Some(prev) = last_start {
                    prop_assert!(now - prev >= chrono::Duration::milliseconds(100));
                }
                last_start = Some(now);
                held.push(lease.id);
                prop_assert!(held.len() <= 2);
            }
        }
    }
}

fn snapshot(body: Bytes) -> Snapshot {
    let url = Url::parse("http://example.com/a?b=1").unwrap();
    Snapshot {
        request_url: url.clone(),
        final_url: url,
        redirects: Vec::new(),
        status: 200,
        http_version: "HTTP/1.1",
        headers: HeaderMap::new(),
        request_headers: HeaderMap::new(),
        sha256: Sha256::of(&body),
        body,
        wire: Wire::Identity,
        body_status: BodyStatus::Complete,
        fetched_at: Utc::now(),
        elapsed: Duration::from_millis(5),
        remote_addr: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    #[test]
    fn frontier_never_hands_out_a_url_twice(batches in prop::collection::vec(prop::collection::vec(0u16..300, 0..40), 1..10)) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let f = MemoryFrontier::new(FrontierLimits::default());
            let mut claimed = HashSet::new();
            let mut pushed = HashSet::new();
            for batch in batches {
                let entries = batch.iter().map(|n| {
                    pushed.insert(*n);
                    FrontierEntry {
                        url: Url::parse(&format!("http://a.test/{n}")).unwrap(),
                        depth: u32::from(*n % 4),
                        discovery: Discovery::Link,
                        parent: None,
                        chain: None,
                    }
                }).collect();
                f.push(entries).await.unwrap();
                for _ in 0..5 {
                    if let Claim::Entry(c) = f.claim().await.unwrap() {
                        assert!(claimed.insert(c.entry.url.clone()), "{} claimed twice", c.entry.url);
                        f.complete(c.id, EntryState::Fetched { status: 200 }).await.unwrap();
                    }
                }
            }
            while let Claim::Entry(c) = f.claim().await.unwrap() {
                assert!(claimed.insert(c.entry.url.clone()), "{} claimed twice", c.entry.url);
                f.complete(c.id, EntryState::Fetched { status: 200 }).await.unwrap();
            }
            assert_eq!(claimed.len(), pushed.len());
        });
    }
}

/// A page of nested `div`/`p`/`span` elements with classes `c0`..`c7` and text, and a style
/// sheet of rules over those classes; `with_order` adds `order` declarations.
fn styled_page(with_order: bool, with_hiding: bool) -> impl Strategy<Value = (String, String)> {
    let mut values = vec![
        "display:flex",
        "display:grid",
        "display:inline-flex",
        "display:block",
        "color:red",
        "visibility:visible",
        "font-size:12px",
        "flex-direction:column",
    ];
    if with_order {
        values.extend(["order:1", "order:-2", "order:3"]);
    }
    if with_hiding {
        values.extend(["display:none", "visibility:hidden"]);
    }
    let rule = (0..8usize, proptest::sample::select(values))
        .prop_map(|(class, decl)| format!(".c{class}{{{decl}}}"));
    let rules = proptest::collection::vec(rule, 0..12).prop_map(|r| r.concat());
    let el = (
        proptest::sample::select(vec!["div", "p", "span"]),
        0..8usize,
        "[a-z]{1,6}",
    );
    let body = proptest::collection::vec((el, 0..3usize), 1..40).prop_map(|items| {
        // Each item opens an element; its number says how many open elements to close after.
        let (mut html, mut open) = (String::new(), Vec::new());
        for ((tag, class, text), close) in items {
            html.push_str(&format!("<{tag} class=c{class}>{text} "));
            open.push(tag);
            for _ in 0..close {
                if let Some(t) = open.pop() {
                    html.push_str(&format!("</{t}>"));
                }
            }
        }
        while let Some(t) = open.pop() {
            html.push_str(&format!("</{t}>"));
        }
        html
    });
    (rules, body)
}

fn styled(rules: &str, body: &str) -> scraper::Html {
    scraper::Html::parse_document(&format!(
        "<html><head><style>{rules}</style></head><body>{body}</body></html>"
    ))
}

fn words(doc: &scraper::Html) -> Vec<String> {
    doc.root_element()
        .select(&scraper::Selector::parse("body").unwrap())
        .flat_map(|b| b.text().map(str::to_owned).collect::<Vec<_>>())
        .flat_map(|t| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn css_reordering_is_the_identity_without_order((rules, body) in styled_page(false, false)) {
        let mut doc = styled(&rules, &body);
        let before = doc.html();
        let applied = crawler::css::apply(&mut doc, None);
        prop_assert_eq!(applied.reordered, 0);
        prop_assert_eq!(doc.html(), before);
    }

    #[test]
    fn css_keeps_every_word_and_only_moves_siblings((rules, body) in styled_page(true, false)) {
        let mut doc = styled(&rules, &body);
        let mut before = words(&doc);
        crawler::css::apply(&mut doc, None);
        let mut after = words(&doc);
        before.sort();
        after.sort();
        prop_assert_eq!(after, before);
    }

    #[test]
    fn css_hiding_keeps_the_rest_in_order((rules, body) in styled_page(false, true)) {
        let mut doc = styled(&rules, &body);
        let before = words(&doc);
        crawler::css::apply(&mut doc, None);
        let after = words(&doc);
        // What is left is a subsequence of what was there.
        let mut at = before.iter();
        for w in &after {
            prop_assert!(at.any(|b| b == w), "{w} out of order");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The crawl (with the server's `iso-8859-1` default) and `check` (a file, no header) read
    /// the same GBK bytes the same way.
    #[test]
    fn a_latin1_header_reads_gbk_as_a_file_does(text in "[\u{4e00}-\u{9fa5}，。！？]{20,200}") {
        let bytes = encoding_rs::GBK.encode(&format!("<html><body><p>{text}</p></body></html>")).0.into_owned();
        let file = charset::decode(&bytes, None, None);
        let crawled = charset::decode(&bytes, Some("text/html; charset=iso-8859-1"), None);
        prop_assert_eq!(&crawled.text, &file.text);
        prop_assert!(crawled.text.contains(&text), "decoded as {}", crawled.encoding.name());
    }
}
