//! Crawls over the store on both backends: the frontier and host states in the database, a
//! crawl stopped part-way and resumed by a new runner, two runners sharing one crawl, a dead
//! runner's URLs coming back. Each
//! checks, through the fixture server's hit log, that no page is fetched twice.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use common::FixtureServer;
use crawler::links::ScopeSettings;
use crawler::{
    Claim, CrawlSettings, Frontier, FrontierEntry, HostKey, PolitenessSettings, StoreCrawl,
    StoreFrontier,
};
use store::testing::TestDb;
use store::{CrawlStatus, Crawls, HostStates};

/// The book's pages: the table of contents, six chapters, the two extra pages of chapter 3.
const BOOK_PAGES: usize = 9;

fn settings(delay_ms: u64) -> CrawlSettings {
    let local = common::local_crawl_settings();
    CrawlSettings {
        max_depth: 3,
        follow_sitemaps: false,
        max_pages: None,
        politeness: PolitenessSettings {
            delay: Duration::from_millis(delay_ms),
            per_host_concurrency: 2,
            global_concurrency: 2,
            ..local.politeness
        },
        scope: ScopeSettings {
            include: vec!["/book/".into()],
            ..ScopeSettings::default()
        },
        ..local
    }
}

/// Fetches per path, robots.txt left out (each runner reads it once for its own cache).
fn page_hits(server: &FixtureServer) -> HashMap<String, usize> {
    let mut hits = HashMap::new();
    for h in server.hits() {
        if h.path != "/robots.txt" {
            *hits.entry(h.path).or_default() += 1;
        }
    }
    hits
}

fn assert_each_page_once(server: &FixtureServer) {
    let hits = page_hits(server);
    let twice: Vec<_> = hits.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    assert_eq!(hits.len(), BOOK_PAGES, "{hits:?}");
    for p in [
        "/book/1/",
        "/book/1/1.html",
        "/book/1/3_3.html",
        "/book/1/6.html",
    ] {
        assert!(hits.contains_key(p), "{p} was never fetched: {hits:?}");
    }
}

async fn resumes_without_refetching(db: &TestDb) {
    let server = FixtureServer::start().await;
    let settings = settings(40);
    let id = StoreCrawl::create(&db.store, &settings, &[server.url("/book/1/")])
        .await
        .unwrap();
    let first = StoreCrawl::open(db.store.clone(), id).await.unwrap();
    // Stopped while the server holds the book's pages after the first three; the runner
    // finishes the pages it is on once they are answered.
    server.hold_book_after(3);
    let running = tokio::spawn({
        let first = first.clone();
        async move { first.run().await }
    });
    server.book_request_held().await;
    first.stop();
    server.release();
    let before = running.await.unwrap().unwrap();
    let left = first.frontier().progress().await.unwrap();
    assert!(left.queued > 0, "the crawl finished before it was stopped");
    assert_eq!(left.in_flight, 0, "a stopped runner left claims behind");
    let fetched_before = page_hits(&server).len();
    assert!(
        fetched_before < BOOK_PAGES,
        "{fetched_before} pages before the stop"
    );

    // A new runner, as after a restart: a fresh store handle, the settings from the row.
    let store = db.reopen(&store::StoreSettings::default()).await;
    let second = StoreCrawl::open(store.clone(), id).await.unwrap();
    let after = second.run().await.unwrap();
    assert_each_page_once(&server);
    assert_eq!(
        before.pages + after.pages,
        BOOK_PAGES as u64,
        "pages stored across both runs"
    );
    let end = second.frontier().progress().await.unwrap();
    assert_eq!((end.queued, end.in_flight), (0, 0));
    assert_eq!(
        store.crawl(id).await.unwrap().settings,
        serde_json::to_string(&settings).unwrap()
    );
    // The host's politeness state is in the database, every slot given back.
    let host = HostKey::of(&server.url("/")).unwrap();
    let state = store.host_state(host.as_str()).await.unwrap().unwrap();
    assert!(state.leases.is_empty(), "{state:?}");
    assert!(state.next_allowed_at.is_some());
}

async fn two_runners_share_one_crawl(db: &TestDb) {
    let server = FixtureServer::start().await;
    let id = StoreCrawl::create(&db.store, &settings(0), &[server.url("/book/1/")])
        .await
        .unwrap();
    db.store
        .set_crawl_status(id, CrawlStatus::Running, None)
        .await
        .unwrap();
    let other = db.reopen(&store::StoreSettings::default()).await;
    let a = StoreCrawl::open(db.store.clone(), id).await.unwrap();
    let b = StoreCrawl::open(other, id).await.unwrap();
    let (ra, rb) = tokio::join!(a.run(), b.run());
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_each_page_once(&server);
    assert_eq!(ra.pages + rb.pages, BOOK_PAGES as u64, "{ra}\n{rb}");
    let counts = a.frontier().progress().await.unwrap();
    assert_eq!((counts.queued, counts.in_flight), (0, 0));
}

async fn a_dead_runners_urls_come_back(db: &TestDb) {
    let server = FixtureServer::start().await;
    let settings = CrawlSettings {
        frontier_lease: Duration::from_millis(300),
        ..settings(0)
    };
    let seed = server.url("/book/1/");
    let id = StoreCrawl::create(&db.store, &settings, std::slice::from_ref(&seed))
        .await
        .unwrap();
    // A runner takes the seed and dies before fetching it.
    let dead = StoreFrontier::new(db.store.clone(), id, settings.frontier_lease);
    let seed = extract::links::normalize(&seed).unwrap();
    dead.push(vec![FrontierEntry::seed(seed)]).await.unwrap();
    assert!(matches!(dead.claim().await.unwrap(), Claim::Entry(_)));
    drop(dead);

    let started = std::time::Instant::now();
    let report = StoreCrawl::open(db.store.clone(), id)
        .await
        .unwrap()
        .run()
        .await
        .unwrap();
    // The live runner waited for the lease, then crawled everything once.
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert_eq!(report.pages, BOOK_PAGES as u64, "{report}");
    assert_each_page_once(&server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_dead_runners_urls_come_back() {
    let db = store::testing::sqlite("sqlite_dead_runner").await.unwrap();
    a_dead_runners_urls_come_back(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_dead_runners_urls_come_back() {
    let Some(db) = store::testing::postgres("postgres_dead_runner").await else {
        return;
    };
    a_dead_runners_urls_come_back(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_crawl_resumes_without_refetching() {
    let db = store::testing::sqlite("sqlite_crawl_resumes")
        .await
        .unwrap();
    resumes_without_refetching(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_crawl_resumes_without_refetching() {
    let Some(db) = store::testing::postgres("postgres_crawl_resumes").await else {
        return;
    };
    resumes_without_refetching(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_two_runners_share_one_crawl() {
    let db = store::testing::sqlite("sqlite_two_runners").await.unwrap();
    two_runners_share_one_crawl(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_runners_share_one_crawl() {
    let Some(db) = store::testing::postgres("postgres_two_runners").await else {
        return;
    };
    two_runners_share_one_crawl(&db).await;
}
