//! The segment writer timed (issue #30: "a crawl's pages/s with bodies on the local store
//! within 10% of bodies in the database"): `SEGMENT_BENCH_BODIES` (default 2,000) responses
//! of ~16 KB of HTML (slices of a real novel, so they compress as pages do) are stored in a
//! fresh SQLite database and, when one is reachable (`COPYHOUND_TEST_POSTGRES_URL`), a fresh
//! Postgres schema; then `Store::move_bodies_to_store` moves every body into WARC segments
//! on a folder store. Prints bodies/s and MB/s of the move, and the same bodies encoded as
//! gzip WARC records alone (`warc::encode_record`, one thread), the part no database
//! round trip is in.
//!
//! `cargo bench --bench segments` (in `crates/store`, or `--workspace`).

use std::time::Instant;

use sha2::Digest;
use store::testing::TestDb;
use store::{
    BackendKind, EvidenceWrites, NewSnapshot, NewWireBody, StorageSettings, Store, StoreSettings,
};

const NOVEL: &str = include_str!("../../bench/data/sanguoyanyi_1-10.txt");

/// Body `n`: an HTML page around ~16 KB of the novel, starting at a place of its own.
fn body(n: usize) -> Vec<u8> {
    let chars: Vec<char> = NOVEL.chars().collect();
    let start = (n * 997) % chars.len();
    let text: String = chars.iter().cycle().skip(start).take(5_000).collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第{n}章</title></head>\
         <body><div id=\"nav\"><a href=\"/\">目录</a></div><div id=\"content\"><p>{}</p>\
         </div></body></html>",
        text.replace('\n', "</p><p>")
    )
    .into_bytes()
}

/// A 200 response of `body` served as it is, with its head.
fn snapshot(n: usize, body: &[u8]) -> NewSnapshot {
    let sha: [u8; 32] = sha2::Sha256::digest(body).into();
    NewSnapshot {
        header_block: b"content-type: text/html; charset=utf-8\r\n".to_vec(),
        content_type: Some("text/html; charset=utf-8".into()),
        sha256: sha,
        body_len: body.len() as u64,
        wire: Some(NewWireBody {
            sha256: sha,
            len: body.len() as u64,
            zstd: None,
        }),
        ..store::testing::sample_snapshot(
            &format!("http://p.example/{n}.html"),
            0,
            chrono::Utc::now(),
        )
    }
}

async fn run(db: TestDb, bodies: &[Vec<u8>]) {
    let dir = tempfile::tempdir().unwrap();
    let settings = StoreSettings {
        storage: StorageSettings {
            bodies: format!("file://{}", dir.path().join("store").display()),
            spool_dir: dir.path().join("spool"),
            ..StorageSettings::default()
        },
        ..StoreSettings::default()
    };
    let store: Store = db.reopen(&settings).await;
    for (n, b) in bodies.iter().enumerate() {
        let zstd = zstd::bulk::compress(b, 3).unwrap();
        store
            .insert_snapshot(&snapshot(n, b), Some(&zstd))
            .await
            .unwrap();
    }
    let started = Instant::now();
    let moved = store.move_bodies_to_store(None).await.unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(moved.bodies, bodies.len() as u64, "{moved:?}");
    let backend = match db.kind() {
        BackendKind::Sqlite => "sqlite",
        BackendKind::Postgres => "postgres",
    };
    println!(
        "segments {backend}: {} bodies ({:.1} MB) in {} segment(s) in {secs:.2} s: \
         {:.0} bodies/s, {:.1} MB/s",
        moved.bodies,
        moved.bytes as f64 / 1e6,
        moved.segments,
        moved.bodies as f64 / secs,
        moved.bytes as f64 / 1e6 / secs
    );
    store.close().await;
}

/// The bodies as WARC `response` records in gzip members, on one thread: the floor under
/// the writer's rate.
fn encode_only(bodies: &[Vec<u8>]) {
    let started = Instant::now();
    let mut out = 0usize;
    for b in bodies {
        let fields = [
            ("WARC-Type", "response".to_owned()),
            ("WARC-Target-URI", "http://p.example/".to_owned()),
        ];
        out += store::warc::encode_record(&fields, b, Some(b), true)
            .unwrap()
            .len();
    }
    let secs = started.elapsed().as_secs_f64();
    let bytes: usize = bodies.iter().map(Vec::len).sum();
    println!(
        "segments encode only: {} records ({:.1} MB to {:.1} MB) in {secs:.2} s: \
         {:.0} records/s, {:.1} MB/s",
        bodies.len(),
        bytes as f64 / 1e6,
        out as f64 / 1e6,
        bodies.len() as f64 / secs,
        bytes as f64 / 1e6 / secs
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::var("SEGMENT_BENCH_BODIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let bodies: Vec<Vec<u8>> = (0..n).map(body).collect();
    encode_only(&bodies);
    if let Some(db) = store::testing::sqlite("bench_segments").await {
        run(db, &bodies).await;
    }
    if let Some(db) = store::testing::postgres("bench_segments").await {
        run(db, &bodies).await;
    }
}
