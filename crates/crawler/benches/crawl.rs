//! Crawl throughput against the local fixture server (politeness delays zero) and the memory
//! a long crawl holds. Decoding and extraction per page are the `extract` crate's benchmark.
//!
//! `cargo bench -p crawler --bench crawl` (release build). The crawl benchmark's throughput
//! line is pages/s: fetched, stored (zstd + SHA-256, deduplicated), decoded (GBK), extracted
//! and link-discovered. The fixture server runs in the same process, on the same two
//! runtime threads, so it is part of the cost.
//!
//! `cargo bench -p crawler --bench crawl -- --memory N` crawls N pages once with a sink that
//! keeps nothing and prints the resident set; run it for growing N to see memory stay flat.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use crawler::safety::SafetySettings;
use crawler::sink::{PreviousFetch, StoredSnapshot};
use crawler::{
    Crawl, CrawlSettings, FetchSettings, MemoryFrontier, MemoryHostStates, PolitenessSettings,
    ScopeSettings, SnapshotId, SnapshotSink,
};
use criterion::{Criterion, Throughput};

const PAGES: usize = 1_000;

fn settings(pages: usize) -> CrawlSettings {
    CrawlSettings {
        max_pages: Some(pages as u64),
        max_depth: 10,
        follow_sitemaps: false,
        fetch: FetchSettings {
            safety: SafetySettings {
                allow_private: true,
                ..SafetySettings::default()
            },
            ..FetchSettings::default()
        },
        politeness: PolitenessSettings {
            delay: Duration::ZERO,
            per_host_concurrency: 16,
            global_concurrency: 16,
            ..PolitenessSettings::default()
        },
        scope: ScopeSettings {
            include: vec![r"/bench/\d+\.html$".into()],
            ..ScopeSettings::default()
        },
        ..CrawlSettings::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn crawl_throughput(c: &mut Criterion) {
    let rt = runtime();
    let server = rt.block_on(common::FixtureServer::start_with_bench_pages(PAGES));
    let seed = server.url("/bench/0.html");
    let mut group = c.benchmark_group("crawl");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(40));
    group.throughput(Throughput::Elements(PAGES as u64));
    group.bench_function(format!("{PAGES} gbk chapter pages, delays 0"), |b| {
        b.iter(|| {
            let crawl = Crawl::in_memory(settings(PAGES), vec![seed.clone()]).expect("crawl");
            let report = rt.block_on(crawl.run()).expect("run");
            assert_eq!(report.pages, PAGES as u64, "{report}");
            black_box(report)
        })
    });
    group.finish();
}

/// A sink that hashes and compresses like a store would, then forgets: what stays in memory
/// during a crawl is then the crawler's own.
struct ForgetfulSink;

impl SnapshotSink for ForgetfulSink {
    async fn store_snapshot(
        &self,
        snapshot: &crawler::Snapshot,
    ) -> crawler::Result<StoredSnapshot> {
        black_box(crawler::snapshot::compress(&snapshot.body)?);
        Ok(StoredSnapshot {
            id: SnapshotId(0),
            new_body: true,
        })
    }
    async fn store_revisit(
        &self,
        snapshot: &crawler::Snapshot,
        _of: &PreviousFetch,
    ) -> crawler::Result<StoredSnapshot> {
        self.store_snapshot(snapshot).await
    }
    async fn store_page(&self, page: crawler::PageRecord) -> crawler::Result<()> {
        black_box(page);
        Ok(())
    }
    async fn previous(&self, _url: &url::Url) -> crawler::Result<Option<PreviousFetch>> {
        Ok(None)
    }
    async fn body(&self, _sha256: &crawler::Sha256) -> crawler::Result<Option<bytes::Bytes>> {
        Ok(None)
    }
}

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Resident memory after one crawl of `pages` pages with a sink that keeps nothing. Run it for
/// growing sizes in fresh processes: if the crawler held per-page state beyond its frontier's
/// URL hashes and queued URLs, the peak would grow with the crawl.
fn memory_probe(pages: usize) {
    let rt = runtime();
    let server = rt.block_on(common::FixtureServer::start_with_bench_pages(pages));
    let s = settings(pages);
    let crawl = Crawl::new(
        s.clone(),
        vec![server.url("/bench/0.html")],
        MemoryFrontier::new(s.frontier_limits()),
        ForgetfulSink,
        MemoryHostStates::default(),
    )
    .expect("crawl");
    let started = Instant::now();
    let report = rt.block_on(crawl.run()).expect("run");
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{:>6} pages in {secs:>5.1} s ({:>4.0} pages/s): VmRSS {:>7} KiB, VmHWM {:>7} KiB",
        report.pages,
        report.pages as f64 / secs,
        rss_kib("VmRSS:"),
        rss_kib("VmHWM:")
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--memory") {
        let pages = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(10_000);
        memory_probe(pages);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    crawl_throughput(&mut c);
    c.final_summary();
}
