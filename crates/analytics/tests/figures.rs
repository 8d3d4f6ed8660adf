//! The figures on a known fixture, on SQLite and on Postgres: a store filled through its API
//! with matches, cases, reviews and a crawl whose numbers are worked out by hand below.

use std::collections::BTreeMap;
use std::time::Duration;

use analytics::{DayPoint, Window};
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use store::testing::{TestDb, sample_snapshot, sample_work};
use store::{
    CaseStatus, CaseWrites, ChapterId, CrawlFrontier, CrawlStatus, Crawls, EvidenceWrites,
    FrontierClaim, FrontierOutcome, LicensedDomains, MatchWrites, NewCrawl, NewFrontierEntry,
    NewMatch, NewPageText, NewSnapshot, SnapshotId, Store, WorkId, WorkInsert, WorkReads,
    WorkWrites,
};

fn time(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

async fn work(s: &Store, title: &str, chapters: usize) -> (WorkId, Vec<ChapterId>) {
    let WorkInsert::Created(id) = s.insert_work(&sample_work(title, chapters)).await.unwrap()
    else {
        panic!("a new work")
    };
    let chapters = s.chapters(id).await.unwrap().iter().map(|c| c.id).collect();
    (id, chapters)
}

fn snapshot(url: &str, sha: u8, fetched_at: &str) -> NewSnapshot {
    sample_snapshot(url, sha, time(fetched_at))
}

async fn copy_found(s: &Store, url: &str, sha: u8, at: &str, copies: &[(WorkId, ChapterId)]) {
    let (id, _): (SnapshotId, _) = s
        .insert_snapshot(&snapshot(url, sha, at), Some(&b"<html>"[..]))
        .await
        .unwrap();
    let matches: Vec<NewMatch> = copies
        .iter()
        .map(|&(work_id, chapter_id)| NewMatch {
            chapter_id,
            work_id,
            method: "align".into(),
            score: 0.9,
            coverage: 0.9,
            matched_chars: 90,
            chapter_chars: 100,
            page_chars: 120,
            page_share: 0.75,
            passages: "[]".into(),
        })
        .collect();
    s.record_matches(id, &matches, "worker").await.unwrap();
}

/// A crawl of pirate.example that stored one page and failed one (timeout), ended.
async fn crawl(s: &Store) {
    let id = s
        .create_crawl(&NewCrawl {
            seeds: vec!["https://pirate.example/".into()],
            settings: "{}".into(),
            max_pages: None,
        })
        .await
        .unwrap();
    s.set_crawl_status(id, CrawlStatus::Running, None)
        .await
        .unwrap();
    let (snapshot, _) = s
        .insert_snapshot(
            &NewSnapshot {
                crawl: Some(id),
                ..snapshot("https://pirate.example/", 9, "2026-11-19T08:00:00Z")
            },
            Some(&b"<html>index"[..]),
        )
        .await
        .unwrap();
    s.insert_page_text(&NewPageText {
        snapshot,
        url: "https://pirate.example/".into(),
        depth: 0,
        chain: None,
        kind: "index".into(),
        title: None,
        chapter_title: None,
        body: "目录".into(),
        encoding: "UTF-8".into(),
        decode_errors: false,
        not_modified: false,
        fetched_at: Utc::now(),
        text_source: "markup".into(),
        text_snapshot: None,
        declared_encoding: None,
    })
    .await
    .unwrap();
    s.push_frontier(
        id,
        &[NewFrontierEntry {
            url: "https://pirate.example/slow".into(),
            depth: 1,
            discovery: "link".into(),
            rank: 2,
            parent: None,
            chain: None,
        }],
    )
    .await
    .unwrap();
    let FrontierClaim::Entry(e) = s
        .claim_frontier(id, None, Duration::from_secs(60))
        .await
        .unwrap()
    else {
        panic!("an entry to claim")
    };
    s.complete_frontier(e.lease, &FrontierOutcome::Failed("timeout".into()))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    s.set_crawl_status(id, CrawlStatus::Done, None)
        .await
        .unwrap();
}

async fn figures(db: &TestDb) {
    let s = &db.store;
    let (a, ach) = work(s, "三国演义", 4).await;
    let (b, bch) = work(s, "水浒传", 2).await;
    s.add_licensed("partner.example", Some(a), None)
        .await
        .unwrap();
    // 16th: two chapters of A on pirate.example. 18th: a third chapter of A on another page
    // of pirate.example, B's first chapter on mirror.example, and A's fourth on the
    // licensed partner.example.
    copy_found(
        s,
        "https://pirate.example/a1",
        1,
        "2026-11-16T10:00:00Z",
        &[(a, ach[0]), (a, ach[1])],
    )
    .await;
    copy_found(
        s,
        "https://pirate.example/a2",
        2,
        "2026-11-18T09:00:00Z",
        &[(a, ach[2])],
    )
    .await;
    copy_found(
        s,
        "https://mirror.example/b1",
        3,
        "2026-11-18T11:00:00Z",
        &[(b, bch[0])],
    )
    .await;
    copy_found(
        s,
        "https://partner.example/a",
        4,
        "2026-11-18T15:00:00Z",
        &[(a, ach[3])],
    )
    .await;
    // 19th: pirate.example's first page fetched again, the same two chapters on it: two
    // matches, no new copy.
    copy_found(
        s,
        "https://pirate.example/a1",
        5,
        "2026-11-19T10:00:00Z",
        &[(a, ach[0]), (a, ach[1])],
    )
    .await;
    crawl(s).await;
    // Both cases go all the way: confirmed, notice sent, removed.
    let before_removal = Utc::now();
    for case in store::CaseReads::cases(s, &store::CaseFilter::default(), None, 10)
        .await
        .unwrap()
    {
        for status in [
            CaseStatus::Confirmed,
            CaseStatus::NoticeSent,
            CaseStatus::Removed,
        ] {
            s.set_case_status(case.id, status, "alice", None)
                .await
                .unwrap();
        }
    }
    let after_removal = Utc::now();

    let now = time("2026-11-20T12:00:00Z");
    let all = analytics::stats(s, &Window::new(None, now).unwrap(), 10)
        .await
        .unwrap();

    // Every day from the first detection to today, zeros included: (day, matches,
    // licensed matches, new copies).
    let point = |d, matches, licensed, copies| DayPoint {
        day: day(d),
        matches,
        licensed,
        copies,
    };
    assert_eq!(
        all.detections.days,
        [
            point(16, 2, 0, 2),
            point(17, 0, 0, 0),
            point(18, 2, 1, 2),
            point(19, 2, 0, 0),
            point(20, 0, 0, 0)
        ]
    );
    assert_eq!(
        (
            all.detections.total,
            all.detections.licensed_total,
            all.detections.copies_total
        ),
        (6, 1, 4)
    );

    let top: Vec<_> = all
        .top_sites
        .iter()
        .map(|t| (t.site.as_str(), t.chapters, t.works, t.pages))
        .collect();
    assert_eq!(
        top,
        [("pirate.example", 3, 1, 2), ("mirror.example", 1, 1, 1)]
    );

    // The licensed copy is no exposure: A has 3 of 4 chapters copied, B 1 of 2.
    let exposure: Vec<_> = all
        .exposure
        .iter()
        .map(|w| {
            (
                w.work_id,
                w.sites,
                w.pages,
                w.chapters_copied,
                w.chapters,
                w.share_copied,
            )
        })
        .collect();
    assert_eq!(exposure, [(a, 1, 2, 3, 4, 0.75), (b, 1, 1, 1, 2, 0.5)]);
    assert_eq!(all.licensed.matches, 1);
    assert_eq!(all.licensed.by_work.len(), 1);
    assert_eq!(
        (
            all.licensed.by_work[0].work_id,
            all.licensed.by_work[0].matches
        ),
        (a, 1)
    );

    let f = &all.funnel;
    assert_eq!(
        (f.found, f.confirmed, f.notice_sent, f.removed, f.dismissed),
        (2, 2, 2, 2, 0)
    );
    assert_eq!(f.by_status, BTreeMap::from([("removed", 2)]));
    // Removed just now, first seen on the 16th 10:00 and the 18th 11:00: the median is
    // the mean of the two, from the 17th 10:30.
    let middle = time("2026-11-17T10:30:00Z");
    let median = TimeDelta::seconds(f.median_seconds_to_removal.unwrap());
    assert_eq!(f.removals, 2);
    assert!(
        median >= before_removal - middle - TimeDelta::seconds(1)
            && median <= after_removal - middle + TimeDelta::seconds(1),
        "{median}"
    );

    assert_eq!(all.crawl_health.len(), 1);
    let h = &all.crawl_health[0];
    assert_eq!(h.site, "pirate.example");
    assert_eq!((h.crawls, h.pages, h.errors, h.bytes), (1, 1, 1, 1000));
    assert_eq!(
        h.errors_by_kind,
        BTreeMap::from([("timeout".to_owned(), 1)])
    );
    assert!((h.error_rate - 0.5).abs() < 1e-9);
    assert!(h.pages_per_second.is_some_and(|p| p > 0.0));

    // Since the 18th: the detections of the 18th on, the case first seen then (mirror/B),
    // pirate.example still on top (its case was last seen on the 19th).
    let recent = analytics::stats(s, &Window::new(Some(day(18)), now).unwrap(), 10)
        .await
        .unwrap();
    assert_eq!(
        recent.detections.days,
        [point(18, 2, 1, 2), point(19, 2, 0, 0), point(20, 0, 0, 0)]
    );
    assert_eq!((recent.funnel.found, recent.funnel.removed), (1, 1));
    assert_eq!(recent.top_sites.len(), 2);
    // One site at most.
    assert_eq!(
        analytics::top_sites(s, &Window::new(None, now).unwrap(), 1)
            .await
            .unwrap()
            .len(),
        1
    );

    let json = serde_json::to_value(&recent).unwrap();
    assert_eq!(json["window"]["since"], "2026-11-18");
    assert_eq!(json["funnel"]["by_status"]["removed"], 1);
    assert_eq!(json["detections"]["days"][0]["licensed"], 1);
}

#[tokio::test]
async fn figures_on_a_known_fixture_on_sqlite() {
    let db = store::testing::sqlite("figures").await.unwrap();
    figures(&db).await;
}

#[tokio::test]
async fn figures_on_a_known_fixture_on_postgres() {
    let Some(db) = store::testing::postgres("analytics_figures").await else {
        return;
    };
    figures(&db).await;
}
