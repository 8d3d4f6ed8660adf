//! Property tests of the crate's invariants: evidence round-trips byte for byte (header
//! blocks, zstd, WARC), the frontier never hands out a URL twice, and host admission never
//! breaks the delay or the concurrency limit.

use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use crawler::frontier::{Claim, Discovery, EntryState, FrontierEntry, FrontierLimits};
use crawler::politeness::{Backoff, HostFeedback, HostLimits, HostState, LeaseId};
use crawler::snapshot::{compress, decode_headers, decompress, encode_headers};
use crawler::warc::{WarcReader, WarcWriter};
use crawler::{BodyStatus, Frontier, MemoryFrontier, Sha256, Snapshot, Wire};
use proptest::prelude::*;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

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
