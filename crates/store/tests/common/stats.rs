//! The conformance cases of the analytics reads (issue #12): figures on a small fixture whose
//! numbers are worked out by hand in the comments, run on both backends through
//! `conformance.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{NaiveDate, TimeDelta, Utc};
use store::testing::TestDb;
use store::{
    CaseId, CaseStatus, CaseWrites, CrawlFrontier, CrawlStatus, Crawls, DayCount, FrontierOutcome,
    LicensedDomains, MatchReads, MatchWrites, StatsReads, WorkWrites,
};

use super::cases::{at, found, snapshot_at, work};
use super::conformance::{claim_entry, entry, new_crawl, stored_page};

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

/// `(day, matches, licensed matches, new copies)`.
fn days(rows: &[(u32, u64, u64, u64)]) -> Vec<DayCount> {
    rows.iter()
        .map(|&(d, matches, licensed, copies)| DayCount {
            day: day(d),
            matches,
            licensed,
            copies,
        })
        .collect()
}

pub async fn stats_count_detections_copies_and_review_from_the_counters(db: &TestDb) {
    let s = &db.store;
    // at(0) is 2026-11-18 11:06 UTC; a day is 1440 minutes.
    let (a, ach) = work(s, "三国演义", 71).await;
    let (b, bch) = work(s, "水浒传", 72).await;
    s.add_licensed("lic.example", Some(a), None).await.unwrap();
    let s1 = snapshot_at(s, "https://copy.example/1", 1, at(0)).await;
    let s2 = snapshot_at(s, "https://copy.example/2", 2, at(1440)).await;
    let s3 = snapshot_at(s, "https://lic.example/1", 3, at(1500)).await;
    let s4 = snapshot_at(s, "https://other.example/1", 4, at(2880)).await;
    let record = |snapshot, m: Vec<store::NewMatch>| async move {
        s.record_matches(snapshot, &m, "worker").await.unwrap()
    };
    record(s1, vec![found(a, ach[0], 0.9), found(a, ach[1], 0.9)]).await;
    record(s2, vec![found(a, ach[0], 0.9), found(b, bch[0], 0.9)]).await;
    let licensed = record(s3, vec![found(a, ach[2], 0.9)]).await;
    assert_eq!(licensed.licensed, 1);
    record(s4, vec![found(a, ach[0], 0.9)]).await;
    // Matching s1 again finds only chapter 1: chapter 2 is copied nowhere any more. Recording
    // s2 again changes nothing.
    record(s1, vec![found(a, ach[0], 0.8)]).await;
    record(s2, vec![found(a, ach[0], 0.9), found(b, bch[0], 0.9)]).await;

    // 18th: s1's one match; 19th: s2's two and s3's licensed one; 20th: s4's. Each match
    // is a page's first of its chapter, so a new copy too.
    let all = days(&[(18, 1, 0, 1), (19, 2, 1, 2), (20, 1, 0, 1)]);
    assert_eq!(s.detections_by_day(None).await.unwrap(), all);
    assert_eq!(s.detections_by_day(Some(day(19))).await.unwrap(), all[1..]);
    assert!(s.detections_by_day(Some(day(21))).await.unwrap().is_empty());

    let case_of = |snapshot, work| async move {
        s.matches_of(snapshot)
            .await
            .unwrap()
            .into_iter()
            .find(|m| m.found.work_id == work)
            .and_then(|m| m.case_id)
            .unwrap()
    };
    let (copy_a, copy_b, other_a) = (
        case_of(s2, a).await,
        case_of(s2, b).await,
        case_of(s4, a).await,
    );
    let review = |case: CaseId, to: &'static [CaseStatus]| async move {
        for &status in to {
            s.set_case_status(case, status, "alice", None)
                .await
                .unwrap();
        }
    };
    use CaseStatus::*;
    review(copy_a, &[Confirmed, NoticeSent, Removed]).await;
    review(copy_b, &[Confirmed, Dismissed]).await;

    // Top sites, dismissed cases left out: copy.example's case of A has one chapter on two
    // pages (its case of B is dismissed); other.example's one chapter on one page.
    let top = s.top_sites(None, 10).await.unwrap();
    let summary: Vec<_> = top
        .iter()
        .map(|t| (t.site.as_str(), t.works, t.chapters, t.pages))
        .collect();
    assert_eq!(
        summary,
        [("copy.example", 1, 1, 2), ("other.example", 1, 1, 1)]
    );
    assert_eq!(s.top_sites(None, 1).await.unwrap().len(), 1);
    // Seen since the 20th: only other.example (copy.example was last seen on the 19th).
    let recent = s.top_sites(Some(at(2880)), 10).await.unwrap();
    assert_eq!(recent.len(), 1);
    assert_eq!(recent[0].site, "other.example");

    // Exposure: A on two sites, three pages, one chapter copied (chapter 2 was dropped,
    // chapter 3 is licensed) and one licensed match; B on one site, one page, one chapter.
    let exposure = s.work_exposure(10).await.unwrap();
    let summary: Vec<_> = exposure
        .iter()
        .map(|w| {
            (
                w.work_id,
                w.chapters,
                w.sites,
                w.pages,
                w.chapters_copied,
                w.licensed_matches,
            )
        })
        .collect();
    assert_eq!(summary, [(a, 3, 2, 3, 1, 1), (b, 3, 1, 1, 1, 0)]);

    // The funnel from the audit log: three found, two ever confirmed, one notice and one
    // removal (copy/A), one dismissal (copy/B); first seen since the 19th: copy/B and other/A.
    let funnel = s.case_funnel(None).await.unwrap();
    assert_eq!(
        (
            funnel.found,
            funnel.confirmed,
            funnel.notice_sent,
            funnel.removed,
            funnel.dismissed
        ),
        (3, 2, 1, 1, 1)
    );
    assert_eq!(
        funnel.by_status,
        BTreeMap::from([("dismissed", 1), ("new", 1), ("removed", 1)])
    );
    let recent = s.case_funnel(Some(at(1440))).await.unwrap();
    assert_eq!(
        (
            recent.found,
            recent.confirmed,
            recent.removed,
            recent.dismissed
        ),
        (2, 1, 0, 1)
    );
    let _ = other_a;

    // copy/A was first seen at at(0) and removed just now.
    let before = Utc::now();
    let times = s.removal_times(None).await.unwrap();
    assert_eq!(times.removed, 1);
    let took = times.median.unwrap();
    assert!(took <= before - at(0) && took > before - at(0) - TimeDelta::minutes(5));
    assert_eq!(
        s.removal_times(Some(at(1))).await.unwrap(),
        store::RemovalTimes::default()
    );

    // Deleting B takes its counters with it.
    s.delete_work(b).await.unwrap();
    let exposure = s.work_exposure(10).await.unwrap();
    assert_eq!(exposure.len(), 1);
    assert_eq!(
        s.detections_by_day(None).await.unwrap(),
        days(&[(18, 1, 0, 1), (19, 1, 1, 1), (20, 1, 0, 1)])
    );
}

pub async fn a_recrawl_adds_matches_but_no_new_copies(db: &TestDb) {
    let s = &db.store;
    let (a, ach) = work(s, "西游记", 73).await;
    let record = |snapshot, m: Vec<store::NewMatch>| async move {
        s.record_matches(snapshot, &m, "worker").await.unwrap()
    };
    // The 18th: two pages, three copies.
    let p1 = snapshot_at(s, "https://copy.example/1", 1, at(0)).await;
    let p2 = snapshot_at(s, "https://copy.example/2", 2, at(10)).await;
    record(p1, vec![found(a, ach[0], 0.9), found(a, ach[1], 0.9)]).await;
    record(p2, vec![found(a, ach[2], 0.9)]).await;
    // The 20th: both pages fetched again, the same chapters on them, and a chapter that is
    // new on page 2: three matches, one new copy.
    let q1 = snapshot_at(s, "https://copy.example/1", 3, at(2880)).await;
    let q2 = snapshot_at(s, "https://copy.example/2", 4, at(2890)).await;
    record(q1, vec![found(a, ach[0], 0.9), found(a, ach[1], 0.9)]).await;
    record(q2, vec![found(a, ach[2], 0.9), found(a, ach[0], 0.9)]).await;
    assert_eq!(
        s.detections_by_day(None).await.unwrap(),
        days(&[(18, 3, 0, 3), (20, 4, 0, 1)])
    );
    // Matched again, the second crawl's pages change nothing.
    record(q1, vec![found(a, ach[0], 0.9), found(a, ach[1], 0.9)]).await;
    assert_eq!(
        s.detections_by_day(None).await.unwrap(),
        days(&[(18, 3, 0, 3), (20, 4, 0, 1)])
    );
    // A snapshot of page 2 from the 19th, matched late, holds its new chapter first: the
    // copy moves to the 19th.
    let early = snapshot_at(s, "https://copy.example/2", 5, at(1440)).await;
    record(early, vec![found(a, ach[0], 0.9)]).await;
    assert_eq!(
        s.detections_by_day(None).await.unwrap(),
        days(&[(18, 3, 0, 3), (19, 1, 0, 1), (20, 4, 0, 0)])
    );
    // Page 1's first snapshot loses chapter 2: that copy is first seen on the 20th now.
    record(p1, vec![found(a, ach[0], 0.9)]).await;
    assert_eq!(
        s.detections_by_day(None).await.unwrap(),
        days(&[(18, 2, 0, 2), (19, 1, 0, 1), (20, 4, 0, 1)])
    );
}

pub async fn stats_sum_crawls_by_site(db: &TestDb) {
    let s = &db.store;
    let done = s.create_crawl(&new_crawl(None)).await.unwrap();
    let queued = s.create_crawl(&new_crawl(None)).await.unwrap();
    stored_page(s, Some(done), "http://a.example/1", 1, 100).await;
    stored_page(s, Some(done), "http://a.example/2", 2, 20).await;
    stored_page(s, Some(queued), "http://a.example/3", 3, 5).await;
    s.push_frontier(
        done,
        &[
            entry("http://a.example/f1", 0, 2),
            entry("http://a.example/f2", 0, 2),
            entry("http://a.example/f3", 0, 2),
        ],
    )
    .await
    .unwrap();
    let outcomes = [
        FrontierOutcome::Failed("timeout".into()),
        FrontierOutcome::Done { status: 404 },
        FrontierOutcome::Failed("timeout".into()),
    ];
    for outcome in &outcomes {
        let e = claim_entry(s, done, Duration::from_secs(60)).await.unwrap();
        s.complete_frontier(e.lease, outcome).await.unwrap();
    }
    s.set_crawl_status(done, CrawlStatus::Running, None)
        .await
        .unwrap();
    s.set_crawl_status(done, CrawlStatus::Done, None)
        .await
        .unwrap();
    // The unfinished crawl's failure is counted from its frontier (the ended one's was kept
    // in its row when it ended).
    s.push_frontier(queued, &[entry("http://a.example/f4", 0, 2)])
        .await
        .unwrap();
    let e = claim_entry(s, queued, Duration::from_secs(60))
        .await
        .unwrap();
    s.complete_frontier(e.lease, &FrontierOutcome::Failed("dns".into()))
        .await
        .unwrap();

    let now = Utc::now();
    let totals = s.crawl_totals(None, now).await.unwrap();
    assert_eq!(totals.len(), 1, "both crawls are of the first seed's site");
    let t = &totals[0];
    assert_eq!(t.site_id.0, s.crawl(done).await.unwrap().site_id);
    assert_eq!((t.crawls, t.pages, t.errors, t.bytes), (2, 3, 4, 125));
    assert_eq!(
        t.errors_by_kind,
        BTreeMap::from([
            ("dns".to_owned(), 1),
            ("http_404".to_owned(), 1),
            ("timeout".to_owned(), 2)
        ])
    );
    // Only the crawl that started is timed.
    assert_eq!(t.pages_timed, 2);
    assert!(t.seconds >= 0.0 && t.seconds < 60.0, "{}", t.seconds);
    let later = now + TimeDelta::hours(1);
    assert!(s.crawl_totals(Some(later), later).await.unwrap().is_empty());
}
