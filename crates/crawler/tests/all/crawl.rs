//! Whole crawls against the local fixture site: discovery, pagination, robots, politeness,
//! retries, traps, safety, de-duplication and conditional re-crawls.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{FixtureServer, local_crawl_settings as settings};
use crawler::crawl::LinkSkip;
use crawler::links::Rejection;
use crawler::{
    Crawl, CrawlSettings, ErrorKind, Failure, FetchSettings, MemoryFrontier, MemoryHostStates,
    MemorySink, PolitenessSettings, RobotsSettings, SkipReason, assemble_chapters,
};
use extract::{PageKind, TextSource};

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[tokio::test]
async fn crawls_a_novel_site_end_to_end() {
    let server = FixtureServer::start().await;
    let crawl = Crawl::in_memory(
        CrawlSettings {
            max_depth: 3,
            ..settings()
        },
        vec![server.url("/")],
    )
    .unwrap();
    let report = crawl.run().await.unwrap();
    println!("{report}");
    let hits = server.hit_paths();

    // Every chapter, all three pages of the split one, the table of contents, the page only
    // the sitemap lists, the table-layout page.
    for path in [
        "/robots.txt",
        "/sitemap.xml",
        "/book/1/",
        "/book/1/1.html",
        "/book/1/3.html",
        "/book/1/3_2.html",
        "/book/1/3_3.html",
        "/book/1/6.html",
        "/extra/sitemap-only.html",
        "/en/1.html",
    ] {
        assert!(hits.contains(path), "{path} was not fetched");
    }
    assert!(
        !hits.iter().any(|p| p.starts_with("/private/")),
        "robots.txt denial ignored"
    );
    assert_eq!(
        server.hits_on("/robots.txt").len(),
        1,
        "robots.txt is cached"
    );
    assert_eq!(server.hits_on("/book/1/2.html").len(), 1, "de-duplication");

    // The site's menus link to pages that do not exist, as real ones do.
    assert!(report.errors[&Failure::Status(404)] >= 1);
    assert!(hits.contains("/status/404"));
    assert_eq!(report.skipped.get(&SkipReason::NotText), Some(&1), "/bin");
    assert!(report.links_not_followed[&LinkSkip::Scope(Rejection::OtherDomain)] >= 1);
    assert!(
        report.links_not_followed[&LinkSkip::DepthLimit] >= 1,
        "the calendar trap hits the depth limit"
    );
    assert!(
        server
            .hits()
            .iter()
            .filter(|h| h.path.starts_with("/cal/"))
            .count()
            <= 13
    );
    assert!(
        report.duplicate_bodies >= 1,
        "/dup/a and /dup/b share a body"
    );
    assert!(crawl.sink().body_count() < crawl.sink().snapshots().len());

    // Extraction results.
    let pages = crawl.sink().pages();
    let page = |path: &str| {
        pages
            .iter()
            .find(|p| p.url == server.url(path))
            .unwrap_or_else(|| panic!("no page {path}"))
    };
    assert_eq!(page("/book/1/").kind, PageKind::Index);
    assert_eq!(page("/stub").kind, PageKind::Redirect);
    let first = page("/book/1/1.html");
    assert_eq!((first.kind, first.encoding), (PageKind::Content, "GBK"));
    assert_eq!(first.declared_encoding, None);
    let fourth = page("/book/1/4.html");
    assert_eq!(
        (fourth.encoding, fourth.declared_encoding),
        ("GBK", Some("windows-1252")),
        "a GBK page served as iso-8859-1 is read as GBK, the conflict recorded"
    );
    assert_eq!(
        first.chapter_title.as_deref(),
        Some("第一回 宴桃园豪杰三结义 斩黄巾英雄首立功")
    );

    // Chapters come out whole and exact, the split one reassembled from its three pages.
    let book = common::book();
    let chapters = assemble_chapters(&pages);
    for (i, original) in book.iter().enumerate() {
        let url = server.url(&format!("/book/1/{}.html", i + 1));
        let chapter = chapters
            .iter()
            .find(|c| c.url == url)
            .unwrap_or_else(|| panic!("chapter {url}"));
        assert_eq!(
            squash(&chapter.text),
            squash(&original.text()),
            "chapter {}",
            i + 1
        );
        assert!(!chapter.incomplete);
        assert_eq!(chapter.pages.len(), if i == 2 { 3 } else { 1 });
    }
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = FixtureServer::start().await;
    let crawl = Crawl::in_memory(
        CrawlSettings {
            follow_sitemaps: false,
            ..settings()
        },
        vec![server.url("/status/429"), server.url("/status/503")],
    )
    .unwrap();
    let report = crawl.run().await.unwrap();
    for (path, min_gap) in [("/status/429", 1000), ("/status/503", 900)] {
        let hits = server.hits_on(path);
        assert_eq!(hits.len(), 2, "{path}");
        let gap = hits[1].at - hits[0].at;
        assert!(
            gap >= Duration::from_millis(min_gap),
            "{path}: retried after {gap:?}"
        );
    }
    assert_eq!(
        (report.pages, report.retries, report.error_count()),
        (2, 2, 0)
    );
}

#[tokio::test]
async fn server_errors_back_off_then_are_reported() {
    let server = FixtureServer::start().await;
    let crawl = Crawl::in_memory(
        CrawlSettings {
            follow_sitemaps: false,
            ..settings()
        },
        vec![server.url("/status/500")],
    )
    .unwrap();
    let report = crawl.run().await.unwrap();
    let hits = server.hits_on("/status/500");
    assert_eq!(hits.len(), 3, "max_attempts");
    // Equal jitter: the n-th wait is between base·2^(n-1)/2 and base·2^(n-1).
    assert!(hits[1].at - hits[0].at >= Duration::from_millis(50));
    assert!(hits[2].at - hits[1].at >= Duration::from_millis(100));
    assert_eq!(report.errors.get(&Failure::Status(500)), Some(&1));
    assert_eq!(report.retries, 2);
}

#[tokio::test]
async fn robots_denials_are_obeyed_unless_overridden() {
    let server = FixtureServer::start().await;
    let seed = vec![server.url("/private/secret.html")];
    let quiet = CrawlSettings {
        follow_sitemaps: false,
        ..settings()
    };
    let report = Crawl::in_memory(quiet.clone(), seed.clone())
        .unwrap()
        .run()
        .await
        .unwrap();
    assert_eq!(report.skipped.get(&SkipReason::RobotsDenied), Some(&1));
    assert!(server.hits_on("/private/secret.html").is_empty());

    let overridden = CrawlSettings {
        robots: RobotsSettings {
            ignore_for: vec!["127.0.0.1".into()],
            ..RobotsSettings::default()
        },
        ..quiet
    };
    let report = Crawl::in_memory(overridden, seed)
        .unwrap()
        .run()
        .await
        .unwrap();
    assert_eq!(report.pages, 1);
    assert_eq!(server.hits_on("/private/secret.html").len(), 1);
}

#[tokio::test]
async fn calendar_trap_ends_at_the_limits() {
    let server = FixtureServer::start().await;
    // Page budget: an endless calendar stops at 40 pages with URLs left over.
    let report = Crawl::in_memory(
        CrawlSettings {
            max_pages: Some(40),
            max_depth: 1000,
            follow_sitemaps: false,
            ..settings()
        },
        vec![server.url("/cal/2024/1")],
    )
    .unwrap()
    .run()
    .await
    .unwrap();
    assert_eq!(report.pages, 40);
    assert!(report.frontier.queued > 0);

    // Depth limit alone also ends it.
    let report = Crawl::in_memory(
        CrawlSettings {
            max_pages: None,
            max_depth: 6,
            follow_sitemaps: false,
            ..settings()
        },
        vec![server.url("/cal/2030/6")],
    )
    .unwrap()
    .run()
    .await
    .unwrap();
    assert!(
        report.pages > 6 && report.pages < 60,
        "{} pages",
        report.pages
    );
    assert_eq!(report.frontier.queued, 0);
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let server = FixtureServer::start().await;
    let strict = CrawlSettings {
        fetch: FetchSettings::default(),
        ..settings()
    };
    let report = Crawl::in_memory(strict, vec![server.url("/")])
        .unwrap()
        .run()
        .await
        .unwrap();
    // The seed and the /sitemap.xml queued for its origin.
    assert_eq!(
        report
            .errors
            .get(&Failure::Error(ErrorKind::AddressRefused)),
        Some(&2)
    );
    assert_eq!(report.pages, 0);
    assert!(
        server.hits().is_empty(),
        "not even robots.txt was asked for"
    );
}

#[tokio::test]
async fn recrawl_sends_validators_and_reuses_the_stored_body() {
    let server = FixtureServer::start().await;
    let sink = Arc::new(MemorySink::new());
    let quiet = CrawlSettings {
        follow_sitemaps: false,
        ..settings()
    };
    for round in 0..2 {
        let crawl = Crawl::new(
            quiet.clone(),
            vec![server.url("/etag")],
            MemoryFrontier::new(quiet.frontier_limits()),
            Arc::clone(&sink),
            MemoryHostStates::default(),
        )
        .unwrap();
        let report = crawl.run().await.unwrap();
        assert_eq!(
            report.pages, 2,
            "round {round}: the page and the link it holds"
        );
        assert_eq!(report.not_modified, round);
    }
    let hits = server.hits_on("/etag");
    assert!(hits[1].headers.contains_key("if-none-match"));
    let pages = sink.pages();
    let again = pages
        .iter()
        .rfind(|p| p.url == server.url("/etag"))
        .unwrap();
    assert!(again.not_modified);
    assert!(again.text.contains("有版本号的页面"));
    // The 304 is stored as a revisit of the capture it confirms, and its page names it.
    let rows = sink.snapshots();
    let capture = rows
        .iter()
        .find(|r| r.request_url == server.url("/etag") && r.status == 200)
        .unwrap();
    let revisit = rows.iter().find(|r| r.status == 304).unwrap();
    assert_eq!(revisit.revisit_of, Some(capture.id));
    assert_eq!(again.snapshot, revisit.id);
    assert!(
        rows.iter()
            .all(|r| r.status == 304 || r.revisit_of.is_none())
    );
}

#[tokio::test]
async fn an_empty_204_is_no_page() {
    let server = FixtureServer::start().await;
    let sink = Arc::new(MemorySink::new());
    let quiet = CrawlSettings {
        follow_sitemaps: false,
        ..settings()
    };
    let crawl = Crawl::new(
        quiet.clone(),
        vec![server.url("/no-content")],
        MemoryFrontier::new(quiet.frontier_limits()),
        Arc::clone(&sink),
        MemoryHostStates::default(),
    )
    .unwrap();
    let report = crawl.run().await.unwrap();
    assert_eq!(server.hits_on("/no-content").len(), 1);
    assert_eq!(report.pages, 0, "{report:?}");
    assert!(sink.pages().is_empty());
}

#[tokio::test]
async fn politeness_delay_spaces_requests_to_a_host() {
    let server = FixtureServer::start().await;
    let seeds = (1..=5)
        .map(|i| server.url(&format!("/book/1/{i}.html")))
        .collect();
    let crawl = Crawl::in_memory(
        CrawlSettings {
            max_depth: 0,
            follow_sitemaps: false,
            politeness: PolitenessSettings {
                delay: Duration::from_millis(150),
                per_host_concurrency: 1,
                global_concurrency: 4,
                ..settings().politeness
            },
            ..settings()
        },
        seeds,
    )
    .unwrap();
    let report = crawl.run().await.unwrap();
    assert_eq!(
        report.pages, 7,
        "five seeds and the two further pages of the split chapter"
    );
    let mut times: Vec<_> = server.hits().iter().map(|h| h.at).collect();
    times.sort();
    for pair in times.windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_millis(145),
            "requests {:?} apart",
            pair[1] - pair[0]
        );
    }
}

#[tokio::test]
async fn a_stopped_crawl_resumes_from_its_frontier() {
    let server = FixtureServer::start().await;
    let s = CrawlSettings {
        max_depth: 2,
        follow_sitemaps: false,
        politeness: PolitenessSettings {
            delay: Duration::from_millis(20),
            per_host_concurrency: 1,
            global_concurrency: 2,
            ..settings().politeness
        },
        ..settings()
    };
    let frontier = Arc::new(MemoryFrontier::new(s.frontier_limits()));
    let sink = Arc::new(MemorySink::new());
    let start = |s: CrawlSettings| {
        Crawl::new(
            s,
            vec![server.url("/book/1/")],
            Arc::clone(&frontier),
            Arc::clone(&sink),
            MemoryHostStates::default(),
        )
        .unwrap()
    };
    let first = start(s.clone());
    // Stopped while the server holds the book's pages after the first three, so the crawl
    // cannot have run out of work before the stop, however fast it goes.
    server.hold_book_after(3);
    let running = tokio::spawn({
        let first = first.clone();
        async move { first.run().await }
    });
    server.book_request_held().await;
    first.stop();
    server.release();
    let stopped = running.await.unwrap().unwrap();
    assert!(stopped.frontier.queued > 0, "stopped with work left");
    let resumed = start(s).run().await.unwrap();
    assert_eq!(resumed.frontier.queued + resumed.frontier.in_flight, 0);

    // Every page was fetched exactly once over the two runs.
    let pages: Vec<_> = server
        .hits()
        .into_iter()
        .filter(|h| h.path.starts_with("/book/1/"))
        .collect();
    let distinct: std::collections::HashSet<_> = pages.iter().map(|h| h.path.clone()).collect();
    assert_eq!(pages.len(), distinct.len());
    assert!(distinct.contains("/book/1/3_3.html") && distinct.contains("/book/1/6.html"));
    assert_eq!(stopped.pages + resumed.pages, sink.pages().len() as u64);
}

#[tokio::test]
async fn script_written_pages_and_content_endpoints_give_their_text() {
    let server = FixtureServer::start().await;
    let seeds = ["/js/1.html", "/js/2.html", "/js/3.html"].map(|p| server.url(p));
    let crawl = Crawl::in_memory(
        CrawlSettings {
            max_depth: 0,
            ..settings()
        },
        seeds.to_vec(),
    )
    .unwrap();
    crawl.run().await.unwrap();
    let pages = crawl.sink().pages();
    let page = |path: &str| {
        pages
            .iter()
            .find(|p| p.url == server.url(path))
            .unwrap_or_else(|| panic!("no page {path}"))
    };
    let book = common::book();

    // Written by a script in \uXXXX escapes: the text is the chapter's.
    let written = page("/js/1.html");
    assert_eq!(written.source, TextSource::Script);
    assert_eq!(written.kind, PageKind::Content);
    assert_eq!(squash(&written.text), squash(&book[1].text()));

    // Fetched from the JSON endpoint the script names: fetched once, under robots.txt and
    // politeness, kept as a snapshot of its own that the page's text points at.
    let fetched = page("/js/2.html");
    assert_eq!(fetched.source, TextSource::Endpoint);
    assert_eq!(squash(&fetched.text), squash(&book[2].text()));
    assert_eq!(server.hits_on("/api/chapter/2.json").len(), 1);
    let snapshots = crawl.sink().snapshots();
    let endpoint = snapshots
        .iter()
        .find(|row| Some(row.id) == fetched.text_snapshot)
        .expect("the endpoint's snapshot is stored");
    assert_eq!(endpoint.final_url, server.url("/api/chapter/2.json"));

    // An endpoint robots.txt denies is not fetched; the page stays empty.
    let denied = page("/js/3.html");
    assert_eq!(
        (denied.kind, denied.source),
        (PageKind::Empty, TextSource::Markup)
    );
    assert!(server.hits_on("/private/api/3.json").is_empty());
}
