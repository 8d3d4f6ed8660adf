//! The dashboard's checklist ([`pipeline::setup_status`]) on both backends: every step shows
//! while its part is missing and goes once it is done, until nothing is left.

use chrono::{TimeDelta, Utc};
use crawler::CrawlSettings;
use crawling::sites::{default_site_settings, watch_site};
use pipeline::{SetupStep, setup_status};
use store::testing::TestDb;
use store::{NewSite, WorkWrites, WorkerPresence};
use takedown::RightsHolder;

fn rights_holder() -> RightsHolder {
    RightsHolder {
        name: "Qidian Rights Ltd".into(),
        address: "1 Example Road, Shanghai".into(),
        email: "legal@example.com".into(),
        phone: String::new(),
        signatory: "Li Lei".into(),
    }
}

fn private_allowed() -> CrawlSettings {
    let mut crawler = CrawlSettings::default();
    crawler.fetch.safety.allow_private = true;
    crawler
}

async fn site(db: &TestDb, url: &str) -> i64 {
    let base = private_allowed();
    watch_site(
        &db.store,
        &base,
        &NewSite {
            start_url: url.to_owned(),
            name: None,
            settings: default_site_settings(&base),
            schedule: None,
        },
    )
    .await
    .unwrap()
    .id
}

fn kinds(steps: &[SetupStep]) -> Vec<&'static str> {
    steps
        .iter()
        .map(|s| match s {
            SetupStep::RegisterWork => "work",
            SetupStep::AddSite => "site",
            SetupStep::SetRightsHolder { .. } => "rights holder",
            SetupStep::StartWorker { .. } => "worker",
            SetupStep::AllowPrivate { .. } => "private",
        })
        .collect()
}

async fn the_checklist_follows_what_is_missing(db: &TestDb) {
    let s = &db.store;
    let public_only = CrawlSettings::default();
    let now = Utc::now();

    // A fresh store: everything is missing.
    let status = setup_status(s, &public_only, &RightsHolder::default(), now)
        .await
        .unwrap();
    assert_eq!(
        kinds(&status.steps),
        ["work", "site", "rights holder", "worker"]
    );
    assert!(!status.is_done());
    let SetupStep::SetRightsHolder { missing } = &status.steps[2] else {
        unreachable!()
    };
    assert!(
        missing.contains(&"notices.rights_holder.name"),
        "{missing:?}"
    );
    assert_eq!(status.steps[3], SetupStep::StartWorker { last_seen: None });

    // A work, a public site, a rights holder.
    s.insert_work(&store::testing::sample_work("三国演义", 3))
        .await
        .unwrap();
    site(db, "https://pirate.example/book/").await;
    let status = setup_status(s, &public_only, &rights_holder(), now)
        .await
        .unwrap();
    assert_eq!(kinds(&status.steps), ["worker"]);

    // A worker seen two minutes ago has stopped; one seen just now runs.
    let two_minutes_ago = now - TimeDelta::minutes(2);
    s.worker_alive("w1", "default", two_minutes_ago, two_minutes_ago)
        .await
        .unwrap();
    let status = setup_status(s, &public_only, &rights_holder(), now)
        .await
        .unwrap();
    assert_eq!(
        status.steps,
        [SetupStep::StartWorker {
            last_seen: Some(store_millis(two_minutes_ago))
        }]
    );
    s.worker_alive("w1", "default", two_minutes_ago, now)
        .await
        .unwrap();
    let status = setup_status(s, &public_only, &rights_holder(), now)
        .await
        .unwrap();
    assert!(status.is_done(), "{status:?}");

    // Sites on loopback and private addresses, in any spelling, added while the policy
    // allowed them, are named while it refuses them; a paused one is not crawled.
    let local = site(db, "http://127.0.0.1:8080/book/").await;
    let hex = site(db, "http://0x7f000002/").await;
    let named = site(db, "http://books.localhost/").await;
    let lan = site(db, "http://10.1.2.3/").await;
    let paused = site(db, "http://192.168.1.9/").await;
    crawling::sites::set_site_enabled(s, paused, false)
        .await
        .unwrap();
    let status = setup_status(s, &public_only, &rights_holder(), now)
        .await
        .unwrap();
    let [SetupStep::AllowPrivate { sites }] = &status.steps[..] else {
        panic!("{status:?}")
    };
    let ids: Vec<i64> = sites.iter().map(|b| b.id).collect();
    assert_eq!(ids, [local, hex, named, lan]);
    assert_eq!(sites[0].start_url, "http://127.0.0.1:8080/book/");
    assert!(sites[0].reason.contains("127.0.0.1"), "{}", sites[0].reason);

    // Allowing the loopback network leaves the private one.
    let mut loopback = CrawlSettings::default();
    loopback.fetch.safety.allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
    let status = setup_status(s, &loopback, &rights_holder(), now)
        .await
        .unwrap();
    let [SetupStep::AllowPrivate { sites }] = &status.steps[..] else {
        panic!("{status:?}")
    };
    assert_eq!(sites.iter().map(|b| b.id).collect::<Vec<_>>(), [lan]);
    // Allowing private addresses leaves nothing to do.
    let status = setup_status(s, &private_allowed(), &rights_holder(), now)
        .await
        .unwrap();
    assert!(status.is_done(), "{status:?}");
}

/// `t` as the store keeps worker times: to the millisecond.
fn store_millis(t: chrono::DateTime<Utc>) -> chrono::DateTime<Utc> {
    chrono::DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap()
}

#[tokio::test]
async fn the_checklist_follows_what_is_missing_on_sqlite() {
    let db = store::testing::sqlite("setup_status").await.unwrap();
    the_checklist_follows_what_is_missing(&db).await;
}

#[tokio::test]
async fn the_checklist_follows_what_is_missing_on_postgres() {
    let Some(db) = store::testing::postgres("setup_status").await else {
        return;
    };
    the_checklist_follows_what_is_missing(&db).await;
}
