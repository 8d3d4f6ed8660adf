//! Discovery on both backends, end to end on 127.0.0.1: a work's phrases sent to a local
//! SearXNG that answers in its documented format, the URLs it returns fetched by a crawl of
//! depth 0 from a local pirate site and a licensed mirror, the domain with a copy made a
//! candidate (the licensed one never), the day's budgets, the cache and a quota answer, and
//! approval turning the candidate into a watched site whose crawl files its copy in the case;
//! phrases shared with another work left out; a seed list imported; a domain ignored. The
//! schedule taking works never searched first within the day's budget; a WET file and a
//! domain probe queued as jobs and run by workers; an imported domain probed through a local
//! CDX index that answers in Common Crawl's format.

use crate::common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::StatusCode;
use crawler::{CrawlSettings, StoreCrawl};
use discovery::{DiscoverySettings, ProviderKind, ProviderSettings, SearchOptions};
use store::testing::TestDb;
use store::{CandidateStatus, CaseFilter, CaseReads, Discovery, LicensedDomains, SuspectSites};

use common::{WORK, handler, import, site};

/// 老残游记 1–2: another registered work.
const OTHER: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");

/// Chapter 2 of 封神演义 in simplified script inside a pirate page.
fn pirate_page() -> String {
    let start = WORK.find("第二回").expect("chapter 2");
    let end = WORK.find("第三回").expect("chapter 3");
    let chapter = zhconv::zhconv(&WORK[start..end], zhconv::Variant::ZhHans);
    format!(
        "<html><head><title>第二回</title></head><body><div id=\"ad\">【本站首发】</div>\
         <div id=\"content\"><p>{}</p></div></body></html>",
        chapter.replace('\n', "</p><p>")
    )
}

/// A search provider on 127.0.0.1 answering every query with `status` and `body`,
/// counting the queries.
async fn provider(status: u16, body: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let app = Router::new().fallback(move |uri: axum::http::Uri| {
        let seen = Arc::clone(&seen);
        let body = body.clone();
        async move {
            seen.lock()
                .unwrap()
                .push(uri.query().unwrap_or_default().to_owned());
            (
                StatusCode::from_u16(status).unwrap(),
                [("content-type", "application/json")],
                body,
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), asked)
}

/// SearXNG's JSON answer (the shape of `tests/data/discovery/searxng.json`) with `urls`.
fn searxng_answer(urls: &[String]) -> String {
    let results: Vec<_> = urls
        .iter()
        .map(|u| {
            serde_json::json!({"url": u, "title": "第二回", "content": "", "engine": "bing",
            "engines": ["bing"], "positions": [1], "score": 1.0, "category": "general"})
        })
        .collect();
    serde_json::json!({"query": "q", "number_of_results": 0, "results": results,
        "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
        "unresponsive_engines": []})
    .to_string()
}

fn crawl_settings() -> CrawlSettings {
    let mut s = CrawlSettings::default();
    s.fetch.safety.allow_private = true;
    s.politeness.delay = std::time::Duration::from_millis(10);
    s
}

async fn search_finds_the_copy_and_approval_watches_the_site(db: &TestDb) {
    let store = &db.store;
    import(store, "老残游记.txt", OTHER).await;
    let work = import(store, "封神演义.txt", WORK).await;

    let pirate = site(BTreeMap::from([
        ("book/2.html".to_owned(), pirate_page()),
        (
            "news.html".to_owned(),
            "<html><body><p>今天天气很好，我们去公园散步。</p></body></html>".to_owned(),
        ),
    ]))
    .await;
    let mirror = site(BTreeMap::from([("read/2".to_owned(), pirate_page())])).await;
    // The mirror is reached as `localhost`, a licensed domain: never probed, never a candidate.
    store.add_licensed("localhost", None, None).await.unwrap();
    let urls = vec![
        format!("http://{pirate}/book/2.html"),
        format!("http://{pirate}/news.html"),
        format!("http://localhost:{}/read/2", mirror.port()),
        "ftp://elsewhere.example/x".to_owned(),
    ];
    let (endpoint, asked) = provider(200, searxng_answer(&urls)).await;
    let (quota_endpoint, quota_asked) = provider(
        429,
        r#"{"type":"ErrorResponse","error":{"status":429,"detail":"Request rate limit exceeded for plan."}}"#
            .to_owned(),
    )
    .await;
    let mut settings = DiscoverySettings {
        queries_per_work_per_day: 3,
        ..DiscoverySettings::default()
    };
    settings.providers.insert(
        "searxng".into(),
        ProviderSettings::new(ProviderKind::Searxng, Some(endpoint), None),
    );
    settings.providers.insert(
        "brave".into(),
        ProviderSettings::new(ProviderKind::Brave, Some(quota_endpoint), Some("k")),
    );
    settings.validate().unwrap();
    let options = SearchOptions {
        work,
        provider: None,
        max_queries: None,
        allow_private: true,
    };

    let report = discovery::search_work(
        store,
        &settings,
        &crawl_settings(),
        handler(store),
        &options,
    )
    .await
    .unwrap();
    assert!(report.phrases > 3, "{report:?}");
    assert_eq!(report.sent, 3, "the work's daily budget");
    assert!(report.budget_spent);
    assert_eq!(asked.lock().unwrap().len(), 3);
    for query in asked.lock().unwrap().iter() {
        let q: BTreeMap<String, String> = serde_urlencoded::from_str(query).unwrap();
        assert!(q["q"].starts_with('"') && q["q"].ends_with('"'), "{q:?}");
        assert_eq!(q["format"], "json");
    }
    assert_eq!(report.urls, 4);
    assert_eq!(report.skipped, 2, "the licensed mirror and the ftp URL");
    assert_eq!(report.probed, 2);
    let domain = pirate.to_string();
    assert_eq!(report.candidates.len(), 1, "{report:?}");
    let candidate = &report.candidates[0];
    assert_eq!(candidate.domain, domain);
    assert_eq!(candidate.status, CandidateStatus::New);
    assert_eq!(candidate.found_by, "search:searxng");
    assert_eq!(
        (candidate.urls, candidate.pages, candidate.works),
        (2, 1, 1)
    );
    assert!(candidate.chapters >= 1);
    // The copy opened its case, as a crawled page's does.
    let filter = CaseFilter {
        site: Some(domain.clone()),
        ..CaseFilter::default()
    };
    let cases = store.cases(&filter, None, 10).await.unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].work_id, work);
    let first_seen = cases[0].last_seen_at;
    assert!(
        store
            .cases(
                &CaseFilter {
                    site: Some(format!("localhost:{}", mirror.port())),
                    ..CaseFilter::default()
                },
                None,
                10
            )
            .await
            .unwrap()
            .is_empty()
    );

    // The budget is spent for today: the cached phrases answer again, nothing is sent.
    let again = discovery::search_work(
        store,
        &settings,
        &crawl_settings(),
        handler(store),
        &options,
    )
    .await
    .unwrap();
    assert_eq!((again.sent, again.cached), (0, 3), "{again:?}");
    assert_eq!(asked.lock().unwrap().len(), 3);

    // With budget left, a run sends the phrases never sent before the ones it sent already
    // (whose cached answers are read): over the days, every chapter's phrases are asked.
    let more = discovery::search_work(
        store,
        &DiscoverySettings {
            queries_per_work_per_day: 5,
            ..settings.clone()
        },
        &crawl_settings(),
        handler(store),
        &options,
    )
    .await
    .unwrap();
    assert_eq!((more.sent, more.cached), (2, 3), "{more:?}");
    let sent: Vec<String> = asked.lock().unwrap().clone();
    assert_eq!(sent.len(), 5);
    let mut distinct = sent.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "no phrase sent twice: {sent:?}");

    // A quota answer is counted and ends the provider's run: asked once, not in a loop.
    let quota = discovery::search_work(
        store,
        &DiscoverySettings {
            queries_per_work_per_day: 100,
            ..settings.clone()
        },
        &crawl_settings(),
        handler(store),
        &SearchOptions {
            provider: Some("brave".into()),
            ..options.clone()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        (quota.sent, quota.quota, quota.errors),
        (1, 1, 0),
        "{quota:?}"
    );
    assert_eq!(quota_asked.lock().unwrap().len(), 1);
    let today = chrono::Utc::now() - chrono::Duration::hours(24);
    let counts = store.query_counts(today).await.unwrap();
    let brave = counts.iter().find(|c| c.provider == "brave").unwrap();
    assert_eq!((brave.outcome.as_str(), brave.count), ("quota", 1));
    assert!(
        brave
            .last_message
            .as_deref()
            .unwrap()
            .contains("rate limit")
    );

    // Approval: a watched site on its schedule, and its crawl of the found URLs files the
    // copy in the case again.
    let (watched, crawl) = discovery::approve(store, &crawl_settings(), &domain, Some("0 3 * * *"))
        .await
        .unwrap();
    assert_eq!(watched.host, domain);
    assert_eq!(watched.schedule.as_deref(), Some("0 3 * * *"));
    assert!(
        store
            .watched_sites()
            .await
            .unwrap()
            .iter()
            .any(|s| s.id == watched.id)
    );
    let approved = store.candidate(&domain).await.unwrap();
    assert_eq!(approved.status, CandidateStatus::Approved);
    assert_eq!(approved.site_id, Some(watched.id));
    let stored = StoreCrawl::stored_settings(store, crawl).await.unwrap();
    let local = pipeline::LocalCrawl::open(store, crawl, stored, handler(store))
        .await
        .unwrap();
    let (finish, _) = local.run(std::future::pending(), |_| {}).await.unwrap();
    assert_eq!(finish.unwrap().report.pages, 2);
    let cases = store.cases(&filter, None, 10).await.unwrap();
    assert_eq!(cases.len(), 1, "the same case");
    assert_eq!(cases[0].site_id.0, watched.id);
    assert!(cases[0].last_seen_at > first_seen);
    // An approved domain is watched: discovery does not probe it again.
    assert!(store.host_excluded(&domain).await.unwrap());
}

async fn phrases_another_work_holds_are_left_out(db: &TestDb) {
    let store = &db.store;
    let work = import(store, "封神演义.txt", WORK).await;
    let settings = DiscoverySettings::default();
    let (phrases, shared) = discovery::work_phrases(store, work, &settings.phrases)
        .await
        .unwrap();
    assert_eq!(shared, 0);
    assert!(phrases.len() > 2);
    // Exact spans of the work's chapters, deterministic.
    let (again, _) = discovery::work_phrases(store, work, &settings.phrases)
        .await
        .unwrap();
    assert_eq!(phrases, again);
    for p in &phrases {
        assert!(WORK.contains(&p.text), "{}", p.text);
    }
    // Another work quotes the best phrase (in simplified script).
    let quoted = zhconv::zhconv(&phrases[0].text, zhconv::Variant::ZhHans);
    // Before chapter 2's heading (the first 第二回 is in the table of contents).
    let at = OTHER.rfind("第二回").unwrap();
    let other = format!("{}{quoted}。\n{}", &OTHER[..at], &OTHER[at..]);
    import(store, "引用.txt", &other).await;
    let (kept, shared) = discovery::work_phrases(store, work, &settings.phrases)
        .await
        .unwrap();
    assert_eq!(shared, 1);
    assert_eq!(kept.len(), phrases.len() - 1);
    assert!(kept.iter().all(|p| p.text != phrases[0].text));

    // A licensed publisher's pages: its blurb quotes the second phrase, and its copy of the
    // work (a match of it) holds every phrase but is the work itself, not a shared span.
    let blurb = format!("新书推荐：{}……精彩内容，尽在本站。", phrases[1].text);
    let publisher = "https://books.publisher.example";
    let blurb_page = common::stored_page(store, &format!("{publisher}/blurb.html"), &blurb).await;
    let copy = common::stored_page(store, &format!("{publisher}/book/1.html"), WORK).await;
    let (kept, shared) = discovery::work_phrases(store, work, &settings.phrases)
        .await
        .unwrap();
    assert_eq!(shared, 1, "not licensed yet: nothing more is shared");
    assert_eq!(kept.len(), phrases.len() - 1);
    store
        .add_licensed("publisher.example", Some(work), Some("contract"))
        .await
        .unwrap();
    let analyser = detection::Analyser::new(store.clone(), Default::default(), Default::default());
    assert!(analyser.analyse(copy).await.unwrap().cases.is_empty());
    assert!(analyser.analyse(blurb_page).await.unwrap().cases.is_empty());
    let (kept, shared) = discovery::work_phrases(store, work, &settings.phrases)
        .await
        .unwrap();
    assert_eq!(shared, 2, "the blurb's span, and not the licensed copy's");
    assert_eq!(kept.len(), phrases.len() - 2);
    assert!(kept.iter().all(|p| p.text != phrases[1].text));
}

async fn seed_lists_import_and_ignored_domains_stay_out(db: &TestDb) {
    let store = &db.store;
    let list = "domain,source\n\
        Pirate.Example,notorious markets 2026\n\
        https://www.copies.example/book/1,transparency report\n\
        pirate.example,again\n\
        # a comment\n\
        \n\
        not a domain,\n";
    let report = discovery::import_domains(store, list).await.unwrap();
    assert_eq!((report.added, report.known), (2, 0), "{report:?}");
    assert_eq!(report.refused.len(), 1);
    assert_eq!(report.refused[0].0, 7);
    let candidates = store.candidates(Some(CandidateStatus::New)).await.unwrap();
    let domains: Vec<&str> = candidates.iter().map(|c| c.domain.as_str()).collect();
    assert_eq!(domains, ["pirate.example", "www.copies.example"]);
    assert!(candidates.iter().all(|c| c.found_by == "import"));
    // Imported again: known, nothing added.
    let report = discovery::import_domains(store, list).await.unwrap();
    assert_eq!((report.added, report.known), (0, 2));

    // Ignoring: a candidate or a domain never seen, and either is never probed.
    assert!(!store.host_excluded("pirate.example").await.unwrap());
    discovery::ignore(store, "pirate.example").await.unwrap();
    let unseen = discovery::ignore(store, "HTTP://Never.Seen.example/x")
        .await
        .unwrap();
    assert_eq!(unseen.domain, "never.seen.example");
    assert_eq!(unseen.status, CandidateStatus::Ignored);
    assert!(store.host_excluded("pirate.example").await.unwrap());
    assert!(store.host_excluded("never.seen.example").await.unwrap());
    assert_eq!(
        store
            .candidates(Some(CandidateStatus::Ignored))
            .await
            .unwrap()
            .len(),
        2
    );
    // Approving a domain with no URL found says so.
    let err = discovery::approve(store, &CrawlSettings::default(), "www.copies.example", None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no URL was found"), "{err}");
    assert!(
        discovery::approve(store, &CrawlSettings::default(), "unknown.example", None)
            .await
            .unwrap_err()
            .is_not_found()
    );
}

async fn wet_files_from_disk_and_http_find_the_copy(db: &TestDb) {
    use discovery::wet::wet_member;
    let store = &db.store;
    import(store, "老残游记.txt", OTHER).await;
    import(store, "封神演义.txt", WORK).await;
    let pirate = site(BTreeMap::from([("book/2.html".to_owned(), pirate_page())])).await;
    let copy_url = format!("http://{pirate}/book/2.html");
    // A WET file: innocent records around one copy (as text, the way WET holds a page),
    // a record too long to read and a corrupt member.
    let start = WORK.find("第二回").unwrap();
    let end = WORK.find("第三回").unwrap();
    let copy = zhconv::zhconv(&WORK[start..end], zhconv::Variant::ZhHans);
    let mut file = wet_member(
        "warcinfo",
        "",
        "2026-11-01T00:00:00Z",
        "isPartOf: CC-MAIN-2026-44",
    );
    for i in 0..20 {
        file.extend(wet_member(
            "conversion",
            &format!("https://innocent{i}.example/"),
            "2026-11-01T00:00:00Z",
            &"今天天气很好，我们去公园散步，然后回家吃饭。".repeat(50),
        ));
    }
    file.extend(wet_member(
        "conversion",
        &copy_url,
        "2026-11-02T10:00:00Z",
        &copy,
    ));
    file.extend(wet_member(
        "conversion",
        "https://huge.example/",
        "2026-11-01T00:00:00Z",
        &"大".repeat(400_000),
    ));
    let mut broken = wet_member("conversion", "https://broken.example/", "d", &copy);
    let half = broken.len() / 2;
    for b in &mut broken[20..half] {
        *b = !*b;
    }
    file.extend(&broken);
    file.extend(wet_member(
        "conversion",
        "https://innocent-last.example/",
        "d",
        "再见",
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("segment.warc.wet.gz");
    std::fs::write(&path, &file).unwrap();

    // The same file over HTTP, and one that sends a member and then never ends.
    let served = file.clone();
    let first = wet_member("conversion", "https://slow.example/", "d", "开头");
    let app = Router::new()
        .route(
            "/crawl-data/segment.warc.wet.gz",
            axum::routing::get(move || {
                let body = served.clone();
                async move { body }
            }),
        )
        .route(
            "/crawl-data/endless.warc.wet.gz",
            axum::routing::get(move || {
                let first = first.clone();
                async move {
                    let chunks = futures_util::stream::unfold(Some(first), |state| async move {
                        match state {
                            Some(bytes) => Some((Ok::<_, std::io::Error>(bytes), None)),
                            None => std::future::pending().await,
                        }
                    });
                    axum::body::Body::from_stream(chunks)
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let options = discovery::WetOptions {
        inputs: vec![
            path.display().to_string(),
            format!("http://{server}/crawl-data/segment.warc.wet.gz"),
            format!("http://{server}/crawl-data/endless.warc.wet.gz"),
            dir.path().join("missing.wet.gz").display().to_string(),
        ],
        allow_private: true,
        max_record_bytes: 1 << 20,
        file_timeout: std::time::Duration::from_secs(2),
        read_timeout: std::time::Duration::from_secs(1),
        ..discovery::WetOptions::default()
    };
    let report = scan(store, &options).await;
    assert_eq!(report.files, 3, "{report:?}");
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.cut, 1, "the endless download");
    assert_eq!(report.counts.oversized, 2, "once per copy of the file");
    assert_eq!(report.counts.corrupt, 2);
    assert_eq!(report.counts.conversions, 2 * 22 + 1, "{:?}", report.counts);
    assert_eq!(report.hits.len(), 2, "the copy, in both copies of the file");
    assert_eq!(report.hits[0].url, copy_url);
    assert_eq!(report.hits[0].date, "2026-11-02T10:00:00Z");
    assert_eq!(report.urls, 1);
    assert_eq!(report.probed, 1);
    assert_eq!(report.candidates.len(), 1, "{report:?}");
    assert_eq!(report.candidates[0].domain, pirate.to_string());
    assert_eq!(report.candidates[0].found_by, "commoncrawl");
    assert_eq!(report.candidates[0].pages, 1);

    // Every mode finds the same copies in the two whole files (22 conversions each): page
    // mode behind the first look; batch mode, in one batch a file or in batches of 5; auto
    // (above). (The probe of the hits then matches the fetched pages as a crawl's.)
    let found = |r: &discovery::WetReport| -> Vec<(String, String, Vec<i64>)> {
        r.hits
            .iter()
            .map(|h| (h.url.clone(), h.date.clone(), h.works.clone()))
            .collect()
    };
    for (mode, batch_records, batches) in [
        (matcher::ModeChoice::Page, 2000, 0),
        (matcher::ModeChoice::Batch, 2000, 2),
        (matcher::ModeChoice::Batch, 5, 10),
    ] {
        let moded = discovery::WetOptions {
            inputs: options.inputs[..2].to_vec(),
            mode,
            batch_records,
            ..options.clone()
        };
        let again = scan(store, &moded).await;
        assert_eq!(found(&again), found(&report), "{mode:?}");
        assert_eq!(again.counts.conversions, 2 * 22, "{mode:?}");
        assert_eq!(
            again.batches, batches,
            "{mode:?} in batches of {batch_records}"
        );
    }
}

/// A Common Crawl record that copies a work on a domain that is gone (`.invalid` never
/// resolves): no live copy, but the domain is kept as a candidate, marked as seen in the
/// archive on the capture's day; a licensed domain's record is not.
async fn a_lead_seen_only_in_common_crawl_is_kept(db: &TestDb) {
    let store = &db.store;
    import(store, "封神演义.txt", WORK).await;
    store
        .add_licensed("licensed.invalid", None, None)
        .await
        .unwrap();
    let mut file = wet_with_copy("http://gone.invalid/book/2.html");
    file.extend(wet_with_copy("http://licensed.invalid/book/2.html"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("segment.warc.wet.gz");
    std::fs::write(&path, &file).unwrap();
    let options = discovery::WetOptions {
        inputs: vec![path.display().to_string()],
        allow_private: true,
        ..discovery::WetOptions::default()
    };
    let report = scan(store, &options).await;
    assert_eq!(report.hits.len(), 2, "{report:?}");
    assert!(report.candidates.is_empty(), "{report:?}");
    assert_eq!(report.leads.len(), 1, "{report:?}");
    assert_eq!(report.leads[0].domain, "gone.invalid");
    let kept = store.candidate("gone.invalid").await.unwrap();
    assert_eq!(
        kept.found_by,
        format!("{}:2026-11-02", discovery::ARCHIVE_ONLY)
    );
    assert_eq!(kept.status, CandidateStatus::New);
    assert!(store.candidate("licensed.invalid").await.is_err());
    let said = report.to_string();
    assert!(
        said.contains("gone.invalid: seen in Common Crawl on 2026-11-02, not reachable now"),
        "{said}"
    );
}

/// Scans `options`' WET files with the default discovery settings and the test crawl's.
async fn scan(store: &store::Store, options: &discovery::WetOptions) -> discovery::WetReport {
    discovery::scan_commoncrawl(
        store,
        &DiscoverySettings::default(),
        &crawl_settings(),
        handler(store),
        options,
    )
    .await
    .unwrap()
}

/// A WET file whose one conversion record copies chapter 2 at `url`, among innocent ones.
fn wet_with_copy(url: &str) -> Vec<u8> {
    use discovery::wet::wet_member;
    let start = WORK.find("第二回").unwrap();
    let end = WORK.find("第三回").unwrap();
    let copy = zhconv::zhconv(&WORK[start..end], zhconv::Variant::ZhHans);
    let mut file = wet_member("warcinfo", "", "2026-11-01T00:00:00Z", "isPartOf: CC-MAIN");
    for i in 0..3 {
        file.extend(wet_member(
            "conversion",
            &format!("https://innocent{i}.example/"),
            "2026-11-01T00:00:00Z",
            &"今天天气很好，我们去公园散步，然后回家吃饭。".repeat(20),
        ));
    }
    file.extend(wet_member("conversion", url, "2026-11-02T10:00:00Z", &copy));
    file
}

/// Serves `body` at `path` on 127.0.0.1; returns the base URL.
async fn serve_file(path: &'static str, body: Vec<u8>) -> String {
    let app = Router::new().route(
        path,
        axum::routing::get(move || {
            let body = body.clone();
            async move { body }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn searxng_settings(queries_per_day: u32, per_work: u32) -> DiscoverySettings {
    let mut provider = ProviderSettings::new(
        ProviderKind::Searxng,
        Some("http://127.0.0.1:9".to_owned()),
        None,
    );
    provider.queries_per_day = queries_per_day;
    let mut settings = DiscoverySettings {
        queries_per_work_per_day: per_work,
        ..DiscoverySettings::default()
    };
    settings.providers.insert("searxng".into(), provider);
    settings.validate().unwrap();
    settings
}

async fn the_schedule_takes_new_works_first_within_the_budget(db: &TestDb) {
    use store::{JobQueue, Schedules};
    let store = &db.store;
    let mut works = Vec::new();
    for i in 0..4 {
        let text = format!(
            "第一章 开端\n这是编号{i}的一本书，正文各不相同。{}\n",
            "文".repeat(i + 1)
        );
        works.push(import(store, &format!("书{i}.txt"), &text).await);
    }
    let now = chrono::Utc::now();
    let day = chrono::Duration::days(1);
    // Works 0 and 2 were searched before (2 the longest ago); 1 and 3 never.
    store.mark_work_searched(works[0], now - day).await.unwrap();
    store
        .mark_work_searched(works[2], now - day * 2)
        .await
        .unwrap();
    // 5 queries a day at 2 a work: three works, the third with what is left.
    let settings = searxng_settings(5, 2);

    let due = discovery::enqueue_due_searches(store, &settings, now)
        .await
        .unwrap();
    assert_eq!(due.budget, 5);
    assert_eq!(
        due.queued,
        [works[1], works[3], works[2]],
        "new works first"
    );
    let again = store
        .enqueue(&discovery::discover_work_job(works[1]).unwrap())
        .await
        .unwrap();
    assert!(
        matches!(again, store::Enqueued::Duplicate(_)),
        "the search is queued"
    );
    // The queued searches hold the day's budget: nothing more is queued today.
    let due = discovery::enqueue_due_searches(store, &settings, now)
        .await
        .unwrap();
    assert_eq!((due.budget, due.queued.len()), (0, 0), "{due:?}");
    // One search ran and sent two queries: the rest is still held.
    store.mark_work_searched(works[1], now).await.unwrap();
    for q in ["甲", "乙"] {
        store
            .record_query(&store::NewQuery {
                provider: "searxng",
                query: q,
                work: Some(works[1]),
                outcome: "ok",
                message: None,
                hits: &[],
            })
            .await
            .unwrap();
    }
    let due = discovery::enqueue_due_searches(store, &settings, now)
        .await
        .unwrap();
    assert_eq!(due.queued.len(), 0, "{due:?}");
    // The next day: round-robin, the works searched longest ago first.
    let due = discovery::enqueue_due_searches(store, &settings, now + day)
        .await
        .unwrap();
    assert_eq!(due.budget, 5);
    assert_eq!(due.queued, [works[3], works[2], works[0]], "{due:?}");
    // No share per work: no search is queued.
    let due = discovery::enqueue_due_searches(store, &searxng_settings(20, 0), now + day * 3)
        .await
        .unwrap();
    assert!(due.queued.is_empty(), "no share per work, no search");

    // The schedule exists while a provider is configured, and goes without one.
    assert!(
        discovery::ensure_discovery_schedule(store, &settings)
            .await
            .unwrap()
    );
    let names: Vec<String> = store
        .schedules()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&discovery::SCHEDULE.to_owned()), "{names:?}");
    assert!(
        !discovery::ensure_discovery_schedule(store, &DiscoverySettings::default())
            .await
            .unwrap()
    );
    assert!(
        store
            .schedules()
            .await
            .unwrap()
            .iter()
            .all(|s| s.name != discovery::SCHEDULE)
    );
}

/// A local CDX index answering as index.commoncrawl.org does (one JSON object a line), with
/// the queries it was asked.
async fn cdx_index(lines: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let app = Router::new().route(
        "/CC-MAIN-2026-44-index",
        axum::routing::get(move |uri: axum::http::Uri| {
            let seen = Arc::clone(&seen);
            let lines = lines.clone();
            async move {
                seen.lock()
                    .unwrap()
                    .push(uri.query().unwrap_or_default().to_owned());
                ([("content-type", "text/x-ndjson")], lines)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/CC-MAIN-2026-44-index"), asked)
}

async fn an_imported_domain_probed_through_the_cdx_index_becomes_a_candidate(db: &TestDb) {
    let store = &db.store;
    import(store, "封神演义.txt", WORK).await;
    let pirate = site(BTreeMap::from([
        (
            String::new(),
            "<html><body><p>最新小说，免费阅读。</p><a href=\"/news.html\">新闻</a></body></html>"
                .to_owned(),
        ),
        ("book/2.html".to_owned(), pirate_page()),
    ]))
    .await;
    let domain = pirate.to_string();
    let capture = |url: &str, status: &str, mime: &str| {
        serde_json::json!({"urlkey": "1,0,0,127)/", "timestamp": "20261102100000", "url": url,
            "mime": mime, "mime-detected": mime, "status": status, "digest": "AAAA",
            "length": "9000", "offset": "1", "filename": "crawl-data/x.warc.gz",
            "languages": "zho", "encoding": "UTF-8"})
        .to_string()
    };
    let lines = [
        capture(&format!("http://{domain}/book/2.html"), "200", "text/html"),
        capture(&format!("http://{domain}/cover.jpg"), "200", "image/jpeg"),
        capture(&format!("http://{domain}/old"), "301", "text/html"),
        capture("http://elsewhere.example/book/2.html", "200", "text/html"),
    ]
    .join("\n");
    let (endpoint, asked) = cdx_index(lines).await;
    let mut settings = DiscoverySettings::default();
    settings.cdx.endpoint = endpoint;
    settings.validate().unwrap();

    let imported = discovery::import_domains(store, &format!("{domain}\n"))
        .await
        .unwrap();
    assert_eq!(imported.added, 1);
    assert_eq!(
        discovery::domains_to_probe(store).await.unwrap(),
        [domain.as_str()]
    );
    let before = store.candidate(&domain).await.unwrap();
    assert_eq!((before.urls, before.pages, before.probed_at), (0, 0, None));

    let report = discovery::probe_domain(
        store,
        &settings,
        &crawl_settings(),
        handler(store),
        &domain,
        true,
    )
    .await
    .unwrap();
    // The index was asked for the domain's URLs in its documented parameters.
    let query = asked.lock().unwrap().clone();
    assert_eq!(query.len(), 1);
    let q: BTreeMap<String, String> = serde_urlencoded::from_str(&query[0]).unwrap();
    assert_eq!(q["url"], format!("{domain}/*"));
    assert_eq!(q["output"], "json");
    assert_eq!(q["limit"], "200");
    // Its one page on the domain, and the home page over HTTPS and HTTP.
    assert_eq!(report.cdx_urls, 1, "{report:?}");
    assert_eq!(report.cdx_error, None);
    assert_eq!(report.probed, 3, "{report:?}");
    let candidate = report.candidate.expect("still a candidate");
    assert_eq!(candidate.domain, domain);
    assert_eq!(candidate.found_by, "import", "how it was found first stays");
    assert_eq!((candidate.pages, candidate.works), (1, 1), "{candidate:?}");
    assert!(candidate.probed_at.is_some());
    let urls = store.found_urls(&domain).await.unwrap();
    assert_eq!(urls[0], format!("http://{domain}/book/2.html"), "{urls:?}");
    // Probed: not waiting for a probe any more; the copy opened its case.
    assert!(discovery::domains_to_probe(store).await.unwrap().is_empty());
    let cases = store
        .cases(
            &CaseFilter {
                site: Some(domain.clone()),
                ..CaseFilter::default()
            },
            None,
            10,
        )
        .await
        .unwrap();
    assert_eq!(cases.len(), 1);

    // An ignored domain is never probed.
    discovery::ignore(store, &domain).await.unwrap();
    let refused = discovery::probe_domain(
        store,
        &settings,
        &crawl_settings(),
        handler(store),
        &domain,
        true,
    )
    .await
    .unwrap_err();
    assert!(refused.to_string().contains("not probed"), "{refused}");
}

async fn queued_wet_scans_and_probes_run_on_the_workers(db: &TestDb) {
    let store = &db.store;
    import(store, "封神演义.txt", WORK).await;
    let scanned = site(BTreeMap::from([("book/2.html".to_owned(), pirate_page())])).await;
    let probed = site(BTreeMap::from([(String::new(), pirate_page())])).await;
    let wet = serve_file(
        "/crawl-data/segment.warc.wet.gz",
        wet_with_copy(&format!("http://{scanned}/book/2.html")),
    )
    .await;
    let file = format!("{wet}/crawl-data/segment.warc.wet.gz");
    assert_eq!(
        discovery::queue_wet_scans(store, std::slice::from_ref(&file))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        discovery::queue_wet_scans(store, &[file]).await.unwrap(),
        0,
        "queued once"
    );
    discovery::import_domains(store, &format!("{probed}\n"))
        .await
        .unwrap();
    let to_probe = discovery::domains_to_probe(store).await.unwrap();
    assert_eq!(discovery::queue_probes(store, &to_probe).await.unwrap(), 1);

    let handler = handler(store)
        .with_crawler(crawl_settings())
        .with_discovery(DiscoverySettings::default());
    let workers = pipeline::Workers::start(
        store,
        &handler,
        &pipeline::all_queues(),
        &pipeline::WorkerOptions::default(),
    );
    for (domain, found_by) in [
        (scanned.to_string(), "commoncrawl"),
        (probed.to_string(), "import"),
    ] {
        store::testing::wait_for(
            &format!("{domain} a candidate with its copy"),
            std::time::Duration::from_secs(120),
            async || {
                store
                    .candidate(&domain)
                    .await
                    .is_ok_and(|c| c.pages == 1 && c.found_by == found_by)
            },
        )
        .await;
    }
    let report = workers.stop().await.unwrap();
    assert!(report.completed >= 2, "{report:?}");
    assert_eq!(report.dead, 0, "{report:?}");
}

store::on_both_backends!(
    wet_files_from_disk_and_http_find_the_copy,
    a_lead_seen_only_in_common_crawl_is_kept,
    search_finds_the_copy_and_approval_watches_the_site,
    phrases_another_work_holds_are_left_out,
    seed_lists_import_and_ignored_domains_stay_out,
    the_schedule_takes_new_works_first_within_the_budget,
    an_imported_domain_probed_through_the_cdx_index_becomes_a_candidate,
    queued_wet_scans_and_probes_run_on_the_workers,
);
