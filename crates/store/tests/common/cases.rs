//! The conformance cases of infringement cases, licensed domains, reports and the audit log
//! (issue #11), run on both backends through `conformance.rs`.

use chrono::{DateTime, Duration as TimeDelta, Utc};
use store::testing::TestDb;
use store::{
    AuditLog, CaseFilter, CaseId, CaseReads, CaseStatus, CaseWrites, ChapterId, Error,
    EvidenceWrites, LicensedDomains, LicensedRows, MatchReads, MatchWrites, NewMatch, ReportFilter,
    Reports, SnapshotId, Store, WorkId, WorkReads, WorkWrites,
};

use super::conformance::{created, new_snapshot, sample_work};

/// A fixed past fetch time, plus `minutes`.
pub(crate) fn at(minutes: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_795_000_000_000).unwrap() + TimeDelta::minutes(minutes)
}

/// A stored snapshot of `url` fetched at `fetched_at` (a fresh body per `sha`).
pub(crate) async fn snapshot_at(
    s: &Store,
    url: &str,
    sha: u8,
    fetched_at: DateTime<Utc>,
) -> SnapshotId {
    s.insert_snapshot(
        &store::NewSnapshot {
            fetched_at,
            ..new_snapshot(url, sha, None)
        },
        Some(&b"z"[..]),
    )
    .await
    .unwrap()
    .0
}

/// A work with three chapters and its chapter ids.
pub(crate) async fn work(s: &Store, title: &str, seed: u8) -> (WorkId, Vec<ChapterId>) {
    let id = created(s.insert_work(&sample_work(title, seed)).await.unwrap());
    let chapters = s.chapters(id).await.unwrap().iter().map(|c| c.id).collect();
    (id, chapters)
}

pub(crate) fn found(work: WorkId, chapter: ChapterId, score: f64) -> NewMatch {
    NewMatch {
        chapter_id: chapter,
        work_id: work,
        method: "align".into(),
        score,
        coverage: score - 0.1,
        matched_chars: 900,
        chapter_chars: 1000,
        page_chars: 3000,
        page_share: 0.3,
        passages: r#"[{"page":[0,30],"chapter":[3,33]}]"#.into(),
    }
}

pub(crate) fn not_found<T: std::fmt::Debug>(r: Result<T, Error>, what: &str) {
    match r {
        Err(Error::NotFound { what: w, .. }) if w == what => {}
        other => panic!("expected {what} not found, got {other:?}"),
    }
}

pub(crate) async fn actions(s: &Store, case: CaseId) -> Vec<String> {
    s.case_history(case)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.action)
        .collect()
}

pub async fn cases_are_opened_widened_and_counted(db: &TestDb) {
    let s = &db.store;
    let (hlm, ch) = work(s, "红楼梦 · 脂评本", 51).await;
    let (other, och) = work(s, "西游记", 52).await;
    let p1 = snapshot_at(s, "https://盗版.example/book/1.html", 1, at(10)).await;
    let p2 = snapshot_at(s, "https://盗版.example/book/2.html", 2, at(5)).await;
    let elsewhere = snapshot_at(s, "http://mirror.test:8080/x", 3, at(20)).await;

    let r1 = s
        .record_matches(
            p1,
            &[found(hlm, ch[0], 0.9), found(other, och[1], 0.8)],
            "worker",
        )
        .await
        .unwrap();
    assert_eq!(r1.opened.len(), 2);
    assert_eq!(r1.cases, {
        let mut c = r1.opened.clone();
        c.sort();
        c
    });
    assert!(r1.reopened.is_empty());
    assert_eq!(r1.licensed, 0);
    let matched = s.matches_of(p1).await.unwrap();
    let case = matched
        .iter()
        .find(|m| m.found.work_id == hlm)
        .unwrap()
        .case_id
        .unwrap();

    // Another page of the site, fetched earlier, joins the same case and widens it.
    let r2 = s
        .record_matches(
            p2,
            &[found(hlm, ch[0], 0.7), found(hlm, ch[1], 0.6)],
            "worker",
        )
        .await
        .unwrap();
    assert!(r2.opened.is_empty());
    assert_eq!(r2.cases, vec![case]);
    let c = s.case(case).await.unwrap();
    assert_eq!(c.id, case);
    assert_eq!(c.site, "盗版.example");
    assert_eq!(c.work_id, hlm);
    assert_eq!(c.work_title, "红楼梦 · 脂评本");
    assert_eq!(c.status, CaseStatus::New);
    assert_eq!((c.first_seen_at, c.last_seen_at), (at(5), at(10)));
    assert_eq!((c.pages, c.chapters_matched, c.work_chapters), (2, 2, 3));
    assert!((c.exposure - 2.0 / 3.0).abs() < 1e-9);
    assert!(c.dismissed_chapters.is_empty());
    assert_eq!(actions(s, case).await, ["case.open"]);
    let open = &s.case_history(case).await.unwrap()[0];
    assert_eq!(open.actor, "worker");
    assert_eq!(open.target_type.as_deref(), Some("case"));
    assert_eq!(open.target_id, Some(case.0));
    assert!(open.note().unwrap().contains("盗版.example/book/1.html"));

    // Every match of the case, oldest fetch first, with its evidence.
    let evidence = s.case_matches(case).await.unwrap();
    assert_eq!(evidence.len(), 3);
    assert_eq!(evidence[0].snapshot_id, p2);
    assert_eq!(evidence[0].chapter_index, 1);
    assert_eq!(evidence[1].chapter_index, 2);
    assert_eq!(evidence[1].chapter_title, "第二回");
    assert_eq!(evidence[2].snapshot_id, p1);
    assert_eq!(evidence[2].url, "https://盗版.example/book/1.html");
    assert_eq!(
        evidence[2].final_url,
        "https://盗版.example/book/1.html?final"
    );
    assert_eq!(evidence[2].fetched_at, at(10));
    assert_eq!(evidence[2].snapshot_sha256, "01".repeat(32));
    assert_eq!(
        (
            evidence[2].matched_chars,
            evidence[2].chapter_chars,
            evidence[2].page_chars
        ),
        (900, 1000, 3000)
    );
    assert!((evidence[2].score - 0.9).abs() < 1e-9);
    assert!((evidence[2].page_share - 0.3).abs() < 1e-9);

    // Another site is another case.
    let r3 = s
        .record_matches(elsewhere, &[found(hlm, ch[2], 0.9)], "worker")
        .await
        .unwrap();
    assert_eq!(r3.opened.len(), 1);
    let mirror = r3.opened[0];
    assert_eq!(s.case(mirror).await.unwrap().site, "mirror.test:8080");

    // Listing: newest last_seen first; filters; keyset pages.
    let all = s.cases(&CaseFilter::default(), None, 10).await.unwrap();
    let ids: Vec<_> = all.iter().map(|c| c.id).collect();
    let other_case = r1.opened.iter().copied().find(|&c| c != case).unwrap();
    // mirror last seen at(20); the two p1 cases at(10), higher id first.
    assert_eq!(ids[0], mirror);
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[1].max(ids[2]), ids[1]);
    assert!(ids.contains(&case) && ids.contains(&other_case));
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = s.cases(&CaseFilter::default(), after, 1).await.unwrap();
        let Some(last) = page.last() else { break };
        after = Some(last.cursor());
        paged.push(last.id);
    }
    assert_eq!(paged, ids);
    let by_work = CaseFilter {
        work: Some(hlm),
        ..CaseFilter::default()
    };
    let listed: Vec<_> = s.cases(&by_work, None, 10).await.unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id).collect::<Vec<_>>(),
        [mirror, case]
    );
    let by_site = CaseFilter {
        site: Some("盗版.EXAMPLE".into()),
        ..CaseFilter::default()
    };
    let listed = s.cases(&by_site, None, 10).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|c| c.site == "盗版.example"));
    let combined = CaseFilter {
        status: Some(CaseStatus::New),
        work: Some(other),
        site: Some("盗版.example".into()),
        min_exposure: None,
    };
    let listed = s.cases(&combined, None, 10).await.unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id).collect::<Vec<_>>(),
        [other_case]
    );
    let confirmed = CaseFilter {
        status: Some(CaseStatus::Confirmed),
        ..CaseFilter::default()
    };
    assert!(s.cases(&confirmed, None, 10).await.unwrap().is_empty());
    // Exposure: the cases with at least the given share of their work's chapters copied.
    let all = s.cases(&CaseFilter::default(), None, 100).await.unwrap();
    let exposed = |min: f64| CaseFilter {
        min_exposure: Some(min),
        ..CaseFilter::default()
    };
    assert_eq!(
        s.cases(&exposed(0.0), None, 100).await.unwrap().len(),
        all.len()
    );
    assert!(s.cases(&exposed(1.01), None, 100).await.unwrap().is_empty());
    let most = all.iter().map(|c| c.exposure).fold(0.0, f64::max);
    let top = s.cases(&exposed(most), None, 100).await.unwrap();
    assert!(!top.is_empty());
    assert_eq!(
        top.len(),
        all.iter().filter(|c| c.exposure >= most - 1e-9).count()
    );
}

pub async fn recording_the_same_matches_twice_changes_nothing(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "三国演义", 53).await;
    let snap = snapshot_at(s, "https://copy.example/1", 4, at(0)).await;
    let matches = [found(w, ch[0], 0.9), found(w, ch[1], 0.8)];

    // A first attempt fails half way (its last chapter does not exist): nothing is kept.
    let mut broken = matches.to_vec();
    broken.push(found(w, ChapterId(987_654), 0.5));
    assert!(s.record_matches(snap, &broken, "worker").await.is_err());
    assert!(s.matches_of(snap).await.unwrap().is_empty());
    assert!(
        s.cases(&CaseFilter::default(), None, 10)
            .await
            .unwrap()
            .is_empty()
    );

    let first = s.record_matches(snap, &matches, "worker").await.unwrap();
    assert_eq!(first.opened.len(), 1);
    let case = first.opened[0];
    let rows = s.matches_of(snap).await.unwrap();
    let record = s.case(case).await.unwrap();

    let again = s.record_matches(snap, &matches, "worker").await.unwrap();
    assert!(again.opened.is_empty() && again.reopened.is_empty());
    assert_eq!(again.cases, vec![case]);
    assert_eq!(
        s.matches_of(snap).await.unwrap(),
        rows,
        "same rows, same ids"
    );
    assert_eq!(s.case(case).await.unwrap(), record);
    assert_eq!(actions(s, case).await, ["case.open"]);
}

pub async fn counters_follow_a_snapshot_that_loses_its_matches(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "水浒传", 54).await;
    let a = snapshot_at(s, "https://copy.example/a", 5, at(0)).await;
    let b = snapshot_at(s, "https://copy.example/b", 6, at(1)).await;
    let r = s
        .record_matches(a, &[found(w, ch[0], 0.9), found(w, ch[1], 0.9)], "worker")
        .await
        .unwrap();
    let case = r.cases[0];
    s.record_matches(b, &[found(w, ch[2], 0.9)], "worker")
        .await
        .unwrap();
    let c = s.case(case).await.unwrap();
    assert_eq!((c.pages, c.chapters_matched), (2, 3));

    // Page a matched again: one chapter gone.
    s.record_matches(a, &[found(w, ch[1], 0.9)], "worker")
        .await
        .unwrap();
    let c = s.case(case).await.unwrap();
    assert_eq!((c.pages, c.chapters_matched), (2, 2));

    // Page a matches nothing now: its case (not in the new result) is still recounted.
    let r = s.record_matches(a, &[], "worker").await.unwrap();
    assert!(r.cases.is_empty());
    let c = s.case(case).await.unwrap();
    assert_eq!((c.pages, c.chapters_matched), (1, 1));
    s.record_matches(b, &[], "worker").await.unwrap();
    let c = s.case(case).await.unwrap();
    assert_eq!((c.pages, c.chapters_matched, c.exposure), (0, 0, 0.0));
    assert!(s.case_matches(case).await.unwrap().is_empty());
    assert_eq!(c.status, CaseStatus::New, "a case outlives its matches");
}

pub async fn case_status_moves_are_checked_and_audited(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "聊斋志异", 55).await;
    let snap = snapshot_at(s, "https://copy.example/liao", 7, at(0)).await;
    let case = s
        .record_matches(snap, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap()
        .opened[0];
    let opened = s.case(case).await.unwrap();

    // new → removed is not a move a reviewer may make.
    match s
        .set_case_status(case, CaseStatus::Removed, "alice", None)
        .await
    {
        Err(Error::Conflict(msg)) => {
            assert!(msg.contains("confirmed, dismissed"), "{msg}");
            assert!(msg.contains("removed"), "{msg}");
        }
        other => panic!("expected a refused move, got {other:?}"),
    }
    assert_eq!(
        s.case(case).await.unwrap(),
        opened,
        "a refused move writes nothing"
    );

    let c = s
        .set_case_status(
            case,
            CaseStatus::Confirmed,
            "alice",
            Some("整章照搬 verbatim"),
        )
        .await
        .unwrap();
    assert_eq!(c.status, CaseStatus::Confirmed);
    assert_eq!(c.review_note.as_deref(), Some("整章照搬 verbatim"));
    assert!(c.status_changed_at > opened.status_changed_at);
    for (to, who) in [
        (CaseStatus::NoticeSent, "bob"),
        (CaseStatus::Confirmed, "bob"),
        (CaseStatus::NoticeSent, "bob"),
        (CaseStatus::Removed, "bob"),
        (CaseStatus::New, "alice"),
        (CaseStatus::Dismissed, "alice"),
        (CaseStatus::New, "alice"),
        (CaseStatus::Confirmed, "alice"),
        (CaseStatus::New, "alice"),
    ] {
        let c = s.set_case_status(case, to, who, None).await.unwrap();
        assert_eq!(c.status, to);
    }
    let history = s.case_history(case).await.unwrap();
    let got: Vec<_> = history.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(
        got,
        [
            "case.open",
            "case.confirmed",
            "case.notice_sent",
            "case.confirmed",
            "case.notice_sent",
            "case.removed",
            "case.new",
            "case.dismissed",
            "case.new",
            "case.confirmed",
            "case.new",
        ]
    );
    assert_eq!(history[1].actor, "alice");
    assert_eq!(history[1].note(), Some("整章照搬 verbatim"));
    assert_eq!(history[1].details["from"], "new");
    assert_eq!(history[1].details["to"], "confirmed");
    assert_eq!(history[2].actor, "bob");
    assert!(
        history
            .windows(2)
            .all(|p| p[0].id < p[1].id && p[0].at <= p[1].at)
    );

    // Dismissing records the chapters matched then.
    let c = s
        .set_case_status(case, CaseStatus::Dismissed, "alice", Some("a quotation"))
        .await
        .unwrap();
    assert_eq!(c.dismissed_chapters, vec![ch[0]]);
    // Same status again is refused too.
    assert!(matches!(
        s.set_case_status(case, CaseStatus::Dismissed, "alice", None)
            .await,
        Err(Error::Conflict(_))
    ));
}

pub async fn removed_cases_reopen_only_for_copies_fetched_after_removal(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "镜花缘", 56).await;
    let url = "https://copy.example/jing";
    let first = snapshot_at(s, url, 8, at(0)).await;
    let case = s
        .record_matches(first, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap()
        .opened[0];
    for to in [
        CaseStatus::Confirmed,
        CaseStatus::NoticeSent,
        CaseStatus::Removed,
    ] {
        s.set_case_status(case, to, "alice", None).await.unwrap();
    }
    // A snapshot fetched before the removal (a late match job, a re-match): stays removed.
    let older = snapshot_at(s, url, 9, at(30)).await;
    let r = s
        .record_matches(older, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap();
    assert!(r.reopened.is_empty() && r.opened.is_empty());
    assert_eq!(r.cases, vec![case]);
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::Removed);
    s.record_matches(first, &[found(w, ch[0], 0.8)], "worker")
        .await
        .unwrap();
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::Removed);

    // The copy is back after the removal.
    let later = snapshot_at(s, url, 10, Utc::now() + TimeDelta::hours(1)).await;
    let r = s
        .record_matches(later, &[found(w, ch[0], 0.9)], "recheck")
        .await
        .unwrap();
    assert_eq!(r.reopened, vec![case]);
    let c = s.case(case).await.unwrap();
    assert_eq!(c.status, CaseStatus::New);
    let history = s.case_history(case).await.unwrap();
    let reopen = history.last().unwrap();
    assert_eq!(reopen.action, "case.reopen");
    assert_eq!(reopen.actor, "recheck");
    assert!(reopen.note().unwrap().contains(url), "{:?}", reopen.note());
    // Recorded again: no second reopen.
    let r = s
        .record_matches(later, &[found(w, ch[0], 0.9)], "recheck")
        .await
        .unwrap();
    assert!(r.reopened.is_empty());
    assert_eq!(s.case_history(case).await.unwrap().len(), history.len());
}

pub async fn dismissed_cases_reopen_only_for_a_new_chapter(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "儒林外史", 57).await;
    let a = snapshot_at(s, "https://quotes.example/a", 11, at(0)).await;
    let case = s
        .record_matches(a, &[found(w, ch[0], 0.5)], "worker")
        .await
        .unwrap()
        .opened[0];
    s.set_case_status(
        case,
        CaseStatus::Dismissed,
        "alice",
        Some("a review quoting it"),
    )
    .await
    .unwrap();

    // The same chapter again, on another page and later: still dismissed.
    let b = snapshot_at(
        s,
        "https://quotes.example/b",
        12,
        Utc::now() + TimeDelta::hours(1),
    )
    .await;
    let r = s
        .record_matches(b, &[found(w, ch[0], 0.6)], "worker")
        .await
        .unwrap();
    assert!(r.reopened.is_empty());
    let c = s.case(case).await.unwrap();
    assert_eq!(c.status, CaseStatus::Dismissed);
    assert_eq!((c.pages, c.chapters_matched), (2, 1));

    // Another chapter copied: back to new, once.
    let c2 = snapshot_at(s, "https://quotes.example/c", 13, at(1)).await;
    let r = s
        .record_matches(c2, &[found(w, ch[0], 0.6), found(w, ch[2], 0.9)], "worker")
        .await
        .unwrap();
    assert_eq!(r.reopened, vec![case]);
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::New);
    let history = s.case_history(case).await.unwrap();
    let last = history.last().unwrap();
    assert_eq!(last.action, "case.reopen");
    assert!(
        last.note().unwrap().contains("new chapter"),
        "{:?}",
        last.note()
    );
    assert_eq!(
        actions(s, case).await,
        ["case.open", "case.dismissed", "case.reopen"]
    );
}

pub async fn licensed_domains_keep_matches_out_of_cases(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "封神演义", 58).await;
    let (other, och) = work(s, "西厢记", 59).await;

    // Adding: normalised, idempotent, checked.
    let global = s
        .add_licensed(
            " https://*.Example.COM./shop ",
            None,
            Some("publisher's own site"),
        )
        .await
        .unwrap();
    assert_eq!(global.domain, "example.com");
    assert_eq!(global.work_id, None);
    let again = s
        .add_licensed("example.com", None, Some("other note"))
        .await
        .unwrap();
    assert_eq!(again, global, "adding it again returns the row as it was");
    let partner = s.add_licensed("Partner.test", Some(w), None).await.unwrap();
    assert_eq!(partner.work_title.as_deref(), Some("封神演义"));
    for bad in ["", "  *. ", "two words.com"] {
        assert!(
            matches!(
                s.add_licensed(bad, None, None).await,
                Err(Error::InvalidInput(_))
            ),
            "{bad:?}"
        );
    }
    not_found(
        s.add_licensed("x.test", Some(WorkId(424242)), None).await,
        "work",
    );
    let listed = s.licensed_domains().await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|l| (l.domain.as_str(), l.work_id))
            .collect::<Vec<_>>(),
        [("example.com", None), ("partner.test", Some(w))]
    );

    let page = |url: &'static str, sha: u8| snapshot_at(s, url, sha, at(0));
    // A subdomain of a globally licensed domain: licensed for every work, no case.
    let sub = page("https://www.shop.example.com/1", 21).await;
    let r = s
        .record_matches(
            sub,
            &[found(w, ch[0], 0.9), found(other, och[0], 0.9)],
            "worker",
        )
        .await
        .unwrap();
    assert_eq!((r.licensed, r.opened.len(), r.cases.len()), (2, 0, 0));
    let rows = s.matches_of(sub).await.unwrap();
    assert!(rows.iter().all(|m| m.licensed && m.case_id.is_none()));
    // A look-alike is not a subdomain.
    let fake = page("https://notexample.com/1", 22).await;
    let r = s
        .record_matches(fake, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap();
    assert_eq!((r.licensed, r.opened.len()), (0, 1));
    // Licensed for one work only.
    let p = page("https://partner.test:8443/read/2", 23).await;
    let r = s
        .record_matches(
            p,
            &[found(w, ch[1], 0.9), found(other, och[1], 0.9)],
            "worker",
        )
        .await
        .unwrap();
    assert_eq!((r.licensed, r.opened.len()), (1, 1));
    let case = s.case(r.opened[0]).await.unwrap();
    assert_eq!(case.work_id, other);
    let rows = s.matches_of(p).await.unwrap();
    let licensed: Vec<_> = rows.iter().map(|m| (m.found.work_id, m.licensed)).collect();
    assert!(licensed.contains(&(w, true)) && licensed.contains(&(other, false)));

    assert_eq!(s.licensed_match_count(None).await.unwrap(), 3);
    assert_eq!(s.licensed_match_count(Some(w)).await.unwrap(), 2);
    assert_eq!(s.licensed_match_count(Some(other)).await.unwrap(), 1);

    // Removing: by normalised name and work; only that row.
    assert!(!s.remove_licensed("partner.test", None).await.unwrap());
    assert!(s.remove_licensed("PARTNER.test.", Some(w)).await.unwrap());
    assert!(!s.remove_licensed("partner.test", Some(w)).await.unwrap());
    assert_eq!(s.licensed_domains().await.unwrap(), vec![global]);
    // From now on the partner's page makes a case for that work too.
    let r = s
        .record_matches(
            p,
            &[found(w, ch[1], 0.9), found(other, och[1], 0.9)],
            "worker",
        )
        .await
        .unwrap();
    assert_eq!((r.licensed, r.opened.len(), r.cases.len()), (0, 1, 2));
}

pub async fn reports_have_one_row_per_page_and_chapter(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "红楼梦 — 程甲本", 60).await;
    let (other, och) = work(s, "Journey to the West · 西游记", 61).await;
    let url = "https://copy.example/书/1";
    // Two crawls of one page: chapter 1 in both, chapter 2 in the first only.
    let s1 = snapshot_at(s, url, 31, at(0)).await;
    let s2 = snapshot_at(s, url, 32, at(60)).await;
    let r1 = s
        .record_matches(s1, &[found(w, ch[0], 0.6), found(w, ch[1], 0.7)], "worker")
        .await
        .unwrap();
    s.record_matches(s2, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap();
    // Recording the older snapshot again does not make it the latest.
    s.record_matches(s1, &[found(w, ch[0], 0.6), found(w, ch[1], 0.7)], "worker")
        .await
        .unwrap();
    // Another page, another work, and a licensed one.
    let other_page = snapshot_at(s, "https://copy.example/2", 33, at(5)).await;
    s.record_matches(other_page, &[found(other, och[2], 0.8)], "worker")
        .await
        .unwrap();
    s.add_licensed("licensed.example", None, None)
        .await
        .unwrap();
    let lic = snapshot_at(s, "https://licensed.example/2", 34, at(7)).await;
    s.record_matches(lic, &[found(w, ch[0], 0.99)], "worker")
        .await
        .unwrap();

    // The other page's text was written by a script: its rows say so.
    store::EvidenceWrites::insert_page_text(
        s,
        &store::NewPageText {
            snapshot: other_page,
            url: "https://copy.example/2".into(),
            depth: 0,
            chain: None,
            kind: "content".into(),
            title: None,
            chapter_title: None,
            body: "正文".into(),
            encoding: "UTF-8".into(),
            decode_errors: false,
            not_modified: false,
            fetched_at: at(5),
            text_source: "script".into(),
            text_snapshot: None,
            declared_encoding: None,
        },
    )
    .await
    .unwrap();

    let all = ReportFilter {
        licensed: LicensedRows::Include,
        ..ReportFilter::default()
    };
    let rows = s.report_rows(&all, None, 100).await.unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].text_source, "markup");
    assert_eq!(rows[2].text_source, "script");
    let first = &rows[0];
    assert_eq!(first.url, url);
    assert_eq!(first.site, "copy.example");
    assert_eq!(
        (first.work_id, first.work_title.as_str()),
        (w, "红楼梦 — 程甲本")
    );
    assert_eq!((first.chapter_id, first.chapter_index), (ch[0], 1));
    assert_eq!(first.chapter_title, "第一回　甄士隐梦幻识通灵");
    assert_eq!(first.snapshot_id, s2);
    assert_eq!(first.snapshot_sha256, "20".repeat(32));
    assert_eq!((first.first_seen, first.last_seen), (at(0), at(60)));
    assert!((first.score - 0.9).abs() < 1e-9);
    assert_eq!(first.matched_chars, 900);
    assert_eq!(first.case_id, Some(r1.cases[0]));
    assert_eq!(first.case_status, Some(CaseStatus::New));
    assert!(!first.licensed);
    assert!(first.passages.starts_with("[{"));
    let second = &rows[1];
    assert_eq!((second.chapter_id, second.chapter_index), (ch[1], 2));
    assert_eq!(second.snapshot_id, s1);
    assert_eq!((second.first_seen, second.last_seen), (at(0), at(0)));
    assert_eq!(rows[2].work_title, "Journey to the West · 西游记");
    assert_eq!(rows[2].chapter_index, 3);
    assert!(rows[3].licensed && rows[3].case_id.is_none() && rows[3].case_status.is_none());

    // Keyset pages of one row give the same rows.
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = s.report_rows(&all, after, 1).await.unwrap();
        let Some(last) = page.last() else { break };
        after = Some(last.cursor());
        paged.push(last.clone());
    }
    assert_eq!(paged, rows);

    // Filters.
    let rows_of = |filter: ReportFilter| async move {
        s.report_rows(&filter, None, 100)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.page_id, r.chapter_id))
            .collect::<Vec<_>>()
    };
    let key = |i: usize| (rows[i].page_id, rows[i].chapter_id);
    assert_eq!(
        rows_of(ReportFilter::default()).await,
        [key(0), key(1), key(2)],
        "licensed rows are left out by default"
    );
    let only = ReportFilter {
        licensed: LicensedRows::Only,
        ..ReportFilter::default()
    };
    assert_eq!(rows_of(only).await, [key(3)]);
    let of_work = ReportFilter {
        work: Some(other),
        ..all
    };
    assert_eq!(rows_of(of_work).await, [key(2)]);
    s.set_case_status(r1.cases[0], CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let confirmed = ReportFilter {
        status: Some(CaseStatus::Confirmed),
        ..all
    };
    assert_eq!(rows_of(confirmed).await, [key(0), key(1)]);

    // The latest snapshot loses its match: the older one is the row again.
    s.record_matches(s2, &[], "worker").await.unwrap();
    let rows = s.report_rows(&all, None, 1).await.unwrap();
    assert_eq!(rows[0].snapshot_id, s1);
    assert_eq!((rows[0].first_seen, rows[0].last_seen), (at(0), at(0)));
}

pub async fn missing_cases_are_not_found(db: &TestDb) {
    let s = &db.store;
    let missing = CaseId(424242);
    not_found(s.case(missing).await, "case");
    not_found(s.case_matches(missing).await, "case");
    not_found(s.case_history(missing).await, "case");
    not_found(
        s.set_case_status(missing, CaseStatus::Confirmed, "alice", None)
            .await,
        "case",
    );
    not_found(
        s.record_matches(SnapshotId(424242), &[], "worker").await,
        "snapshot",
    );
    assert!(
        s.report_rows(&ReportFilter::default(), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(s.licensed_match_count(None).await.unwrap(), 0);
    assert!(s.licensed_domains().await.unwrap().is_empty());
    assert!(!s.remove_licensed("nothing.test", None).await.unwrap());
}

pub async fn audit_rows_are_written_and_read_by_target(db: &TestDb) {
    let s = &db.store;
    let details = serde_json::json!({ "note": "标题改为「红楼梦」", "from": "石头记" });
    let a = s
        .record_audit("alice", "work.rename", Some("work"), Some(7), &details)
        .await
        .unwrap();
    let b = s
        .record_audit(
            "cli",
            "work.rename",
            Some("work"),
            Some(7),
            &serde_json::json!({}),
        )
        .await
        .unwrap();
    s.record_audit("cli", "work.rename", Some("work"), Some(8), &details)
        .await
        .unwrap();
    s.record_audit("cli", "system.start", None, None, &serde_json::json!({}))
        .await
        .unwrap();
    let rows = s.audit_of("work", 7).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [a, b]);
    assert_eq!(rows[0].actor, "alice");
    assert_eq!(rows[0].action, "work.rename");
    assert_eq!(rows[0].details, details);
    assert_eq!(rows[0].note(), Some("标题改为「红楼梦」"));
    assert_eq!(rows[1].note(), None);
    assert!(s.audit_of("work", 9).await.unwrap().is_empty());
}

pub async fn concurrent_recordings_open_one_case_and_count_every_page(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "金瓶梅", 62).await;
    let mut snapshots = Vec::new();
    for n in 0..8u8 {
        let url = format!("https://busy.example/{n}");
        snapshots.push(snapshot_at(s, &url, 40 + n, at(i64::from(n))).await);
    }
    let tasks: Vec<_> = snapshots
        .iter()
        .enumerate()
        .map(|(n, &snap)| {
            let s = s.clone();
            let m = [found(w, ch[n % 3], 0.9)];
            tokio::spawn(async move { s.record_matches(snap, &m, "worker").await.unwrap() })
        })
        .collect();
    let mut opened = Vec::new();
    let mut cases = Vec::new();
    for t in tasks {
        let r = t.await.unwrap();
        opened.extend(r.opened);
        cases.extend(r.cases);
    }
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert!(cases.iter().all(|&c| c == opened[0]));
    let c = s.case(opened[0]).await.unwrap();
    assert_eq!((c.pages, c.chapters_matched), (8, 3));
    assert_eq!((c.first_seen_at, c.last_seen_at), (at(0), at(7)));
    assert_eq!(actions(s, c.id).await, ["case.open"]);
}
