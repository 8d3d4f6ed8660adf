//! The disguises the case page lists for each page of the demo's cases, each true of that
//! page: the demo's pirate site served on 127.0.0.1, crawled and matched by the job workers
//! as `copyhound demo` does, and every page of its cases read as the case page reads it
//! (`casework::review::review_pages` with the page's own limits). Every kind of page the demo
//! holds is one check: a whole-chapter copy is not "split" because the chapter is also on
//! other pages, a traditional or edited page is not "homophones", a merged page is
//! "merged".

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use casework::review::{Disguise, ReviewLimits, review_pages};
use import::{ImportSettings, Importer};
use pipeline::demo::{PageKind, SiteServer};
use store::testing::{TestDb, wait_for};
use store::{CaseFilter, CaseReads, JobQueue};

store::on_both_backends!(every_label_is_true_of_its_page);

async fn every_label_is_true_of_its_page(db: &TestDb) {
    let store = &db.store;
    let pages = bench::demo::demo_pages().unwrap();
    let copies: BTreeSet<String> = pages
        .iter()
        .filter(|p| p.kind == PageKind::Copy)
        .map(|p| p.path.clone())
        .collect();
    let importer = Importer::new(ImportSettings::default()).unwrap();
    pipeline::demo::register_sample(store, &importer)
        .await
        .unwrap();
    let site = SiteServer::start(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        pages,
    )
    .unwrap();
    let mut crawl = crawler::CrawlSettings::default();
    crawl.fetch.safety.allow_private = true;
    crawl.politeness.delay = Duration::ZERO;
    pipeline::demo::watch_demo_sites(store, &crawl, site.addr())
        .await
        .unwrap();
    let analyser = detection::Analyser::new(
        store.clone(),
        fingerprint::FingerprintSettings::default(),
        matcher::MatcherSettings::default(),
    );
    let handler =
        pipeline::Handler::new(store.clone(), importer, Arc::new(analyser)).with_crawler(crawl);
    let workers = pipeline::Workers::start(
        store,
        &handler,
        &pipeline::all_queues(),
        &pipeline::WorkerOptions::default(),
    );
    wait_for(
        "the demo crawled and matched",
        Duration::from_secs(300),
        async || {
            let counts = store.counts().await.unwrap();
            assert!(counts.iter().all(|c| c.dead == 0), "{counts:?}");
            counts.iter().all(|c| c.queued == 0 && c.running == 0)
        },
    )
    .await;
    workers.stop().await.unwrap();
    site.stop().await.unwrap();

    // Every copy's labels, by its path on the pirate site.
    let mut labels: BTreeMap<String, BTreeSet<Disguise>> = BTreeMap::new();
    // What each page's passages differ by, for the message of a failure.
    let mut counts: BTreeMap<String, Vec<casework::review::DiffCounts>> = BTreeMap::new();
    let cache = detection::TextCache::default();
    for case in store
        .cases(&CaseFilter::default(), None, 100)
        .await
        .unwrap()
    {
        let view = casework::case_view(store, case.id).await.unwrap();
        for page in review_pages(store, &view, &cache, ReviewLimits::default())
            .await
            .unwrap()
        {
            let path = url::Url::parse(&page.url).unwrap().path().to_owned();
            counts.insert(
                path.clone(),
                page.chapters
                    .iter()
                    .flat_map(|c| c.passages.iter().map(|p| p.comparison.counts))
                    .collect(),
            );
            labels.insert(path, page.disguises.into_iter().collect());
        }
    }
    assert_eq!(
        labels.keys().cloned().collect::<BTreeSet<_>>(),
        copies,
        "every copy is a page of a case"
    );

    let want =
        |path: &str| -> BTreeSet<Disguise> {
            let name = path.trim_start_matches("/read/").trim_end_matches(".html");
            let name = name.split_once('-').map_or(name, |(n, rest)| {
                if rest.parse::<u32>().is_ok() { n } else { name }
            });
            BTreeSet::from_iter(match name {
                "verbatim" | "partial" => vec![],
                "ads" => vec![Disguise::Inserted],
                "traditional" => vec![Disguise::Traditional],
                "homophones" => vec![Disguise::Homophones],
                "edits" => vec![Disguise::Edited],
                "split" => vec![Disguise::Split],
                "merged" => vec![Disguise::Merged],
                "look-alike" => vec![Disguise::LookAlike],
                other => panic!("a demo page this test does not know: {other}"),
            })
        };
    let wrong: Vec<String> = labels
        .iter()
        .filter(|(path, seen)| **seen != want(path))
        .map(|(path, seen)| {
            format!(
                "{path}: {seen:?}, want {:?}; passages differ by {:?}",
                want(path),
                counts[path]
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "labels not true of their page:\n{}",
        wrong.join("\n")
    );
    assert!(
        labels
            .keys()
            .filter(|p| p.starts_with("/read/split-"))
            .count()
            >= 2,
        "{labels:?}"
    );
}
