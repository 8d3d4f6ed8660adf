//! Takedown notices and re-checks end to end on both backends: a case found on a pirate site
//! served on 127.0.0.1, a notice drafted from it with each template (every element the law
//! asks for present, hostile text escaped), marked sent, and re-checked with a test clock as
//! the site takes its copies down one way or another; a copy back later reopens the case.

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::IntoResponse;
use casework::rechecks::{self, RecheckSettings, Rechecker};
use chrono::{Duration as TimeDelta, Utc};
use detection::Analyser;
use import::{ImportOptions, ImportSettings, Importer};
use jobs::Error;
use matcher::MatcherSettings;
use store::testing::TestDb;
use store::{
    CaseId, CaseReads, CaseStatus, CaseWrites, CopyState, JobFilter, JobQueue, NoticeStatus, Page,
    Rechecks,
};
use takedown::{NoticeSettings, NoticeTemplate, notices};

use common::{WORK, pirate_chapter, profile};

/// What the fixture site answers, by path: status, content type, body.
type Pages = Arc<Mutex<HashMap<String, (u16, &'static str, String)>>>;

async fn answer(State(pages): State<Pages>, uri: Uri) -> impl IntoResponse {
    let found = pages.lock().unwrap().get(uri.path()).cloned();
    match found {
        Some((status, kind, body)) => (
            StatusCode::from_u16(status).unwrap(),
            [(header::CONTENT_TYPE, kind)],
            body,
        ),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain")],
            "not found".to_owned(),
        ),
    }
}

/// A pirate site on 127.0.0.1 serving `pages`; stops with the test's runtime.
async fn site(pages: Pages) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(answer).with_state(pages);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

fn html(text: &str) -> String {
    let paragraphs: String = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("<p>{l}</p>\n"))
        .collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>封神演义 - 盗版小说网</title>\
         </head><body><div id=\"content\">{paragraphs}</div></body></html>"
    )
}

/// A page of the pirate site as a crawl would have stored it, matched: returns the cases.
async fn crawled(db: &TestDb, analyser: &Analyser, url: &str, text: &str) -> Vec<CaseId> {
    let id = common::stored_page(&db.store, url, text).await;
    analyser.analyse(id).await.unwrap().cases
}

/// `doc` with each run of whitespace made one space.
fn flat(doc: &str) -> String {
    doc.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn crawl_settings() -> crawler::CrawlSettings {
    let mut s = crawler::CrawlSettings::default();
    s.fetch.safety.allow_private = true;
    s
}

async fn notice_lifecycle(db: &TestDb) {
    let store = &db.store;
    let title = "封神演义<script>alert(1)</script>";
    Importer::new(ImportSettings::default())
        .unwrap()
        .import_bytes(
            store,
            "fengshen.txt",
            WORK.as_bytes().to_vec(),
            &ImportOptions {
                title: Some(title.into()),
                author: Some("许仲琳".into()),
            },
            &(),
        )
        .await
        .unwrap();
    // As with a time-stamping authority configured: evidence snapshots queue their stamps.
    let analyser = Arc::new(
        Analyser::new(
            store.clone(),
            Default::default(),
            MatcherSettings::default(),
        )
        .with_stamping(true),
    );
    let pages: Pages = Arc::default();
    let addr = site(Arc::clone(&pages)).await;
    let url = |path: &str| format!("http://{addr}{path}");
    {
        let mut p = pages.lock().unwrap();
        for n in 1..=3 {
            p.insert(
                format!("/book/{n}.html"),
                (200, "text/html; charset=utf-8", html(&pirate_chapter(n))),
            );
        }
        p.insert(
            "/.well-known/security.txt".into(),
            (
                200,
                "text/plain; charset=utf-8",
                "Contact: https://pirate.test/report\nContact: mailto:abuse@pirate.test\n".into(),
            ),
        );
    }
    let mut case = None;
    for n in 1..=3 {
        let cases = crawled(
            db,
            &analyser,
            &url(&format!("/book/{n}.html")),
            &pirate_chapter(n),
        )
        .await;
        assert_eq!(cases.len(), 1, "chapter {n} matched");
        case = Some(cases[0]);
    }
    let case = case.unwrap();
    let fetcher = crawler::Fetcher::new(crawl_settings().fetch).unwrap();
    let settings = profile();

    // An incomplete profile says which settings to fill in.
    let bare = NoticeSettings::default();
    let err = notices::create_notice(store, &bare, None, case, NoticeTemplate::Cn, None, "alice")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Notice(_)), "{err}");
    assert!(
        err.to_string().contains("notices.rights_holder.name"),
        "{err}"
    );
    // Nor is an unreviewed case noticed.
    let err = notices::create_notice(
        store,
        &settings,
        None,
        case,
        NoticeTemplate::Cn,
        None,
        "alice",
    )
    .await
    .unwrap_err();
    assert!(
        jobs::chain(&err).contains("confirm"),
        "{}",
        jobs::chain(&err)
    );
    store
        .set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();

    // Both templates, the recipient from the site's security.txt.
    let matches = store.case_matches(case).await.unwrap();
    let mut texts = Vec::new();
    for template in NoticeTemplate::ALL {
        let n = notices::create_notice(
            store,
            &settings,
            Some(&fetcher),
            case,
            template,
            None,
            "alice",
        )
        .await
        .unwrap();
        assert_eq!(n.recipient, "abuse@pirate.test");
        assert_eq!(n.status, NoticeStatus::Draft);
        assert_eq!(n.template, template.as_str());
        let rh = &settings.rights_holder;
        for doc in [&n.body_text, &n.body_html] {
            for element in [
                rh.name.as_str(),
                &rh.address,
                &rh.email,
                &rh.phone,
                &rh.signatory,
                "abuse@pirate.test",
                "许仲琳",
            ] {
                assert!(doc.contains(element), "{template}: {element} missing");
            }
            for m in &matches {
                assert!(doc.contains(&m.url), "{template}: {} missing", m.url);
                assert!(doc.contains(&m.snapshot_sha256), "{template}: hash missing");
                assert!(
                    doc.contains(&m.chapter_title),
                    "{template}: chapter title missing"
                );
                let fetched = m.fetched_at.format("%Y-%m-%d %H:%M:%S UTC").to_string();
                assert!(doc.contains(&fetched), "{template}: fetch time missing");
            }
        }
        let statements: &[&str] = match template {
            NoticeTemplate::Dmca => &[
                "17 U.S.C. § 512(c)(3)",
                "good faith belief",
                "not authorized by the copyright owner, its agent, or the law",
                "under penalty of perjury",
                "authorized to act on behalf of the owner of an exclusive right",
                "/s/ Li Lei 李雷",
                "Chapters copied on",
                ": 3 of 3.",
            ],
            NoticeTemplate::Cn => &[
                "《信息网络传播权保护条例》第十四条",
                "权利人信息",
                "作品名称",
                "侵权网址",
                "构成侵权的初步证明材料",
                "对本通知书的真实性承担法律责任",
                "删除",
                "断开",
            ],
        };
        // Line breaks fall anywhere in a paragraph: compare with whitespace collapsed.
        let (text, html) = (flat(&n.body_text), flat(&n.body_html));
        for s in statements {
            assert!(text.contains(s), "{template} text: {s:?} missing");
            assert!(html.contains(s), "{template} html: {s:?} missing");
        }
        // The work title is the rights holder's, but escaped all the same in HTML.
        assert!(
            n.body_text.contains(title),
            "{template}: title verbatim in text"
        );
        assert!(
            !n.body_html.contains("<script>"),
            "{template}: html not escaped"
        );
        assert!(
            ["&lt;script&gt;", "&#60;script&#62;"]
                .iter()
                .any(|e| n.body_html.contains(&format!("{e}alert(1)"))),
            "{template}: the title is shown, escaped"
        );
        texts.push(n);
    }
    // A recipient given by hand wins, and a bad one is refused.
    let given = notices::create_notice(
        store,
        &settings,
        Some(&fetcher),
        case,
        NoticeTemplate::Dmca,
        Some("dmca@hoster.example"),
        "alice",
    )
    .await
    .unwrap();
    assert_eq!(given.recipient, "dmca@hoster.example");
    let err = notices::create_notice(
        store,
        &settings,
        None,
        case,
        NoticeTemplate::Dmca,
        Some("x@y.example\r\nBcc: z@w.example"),
        "alice",
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::Notice(_)), "{err}");

    // Sent: the case moves on and its re-checks start a day later.
    let recheck_settings = RecheckSettings::default();
    let sent_at = Utc::now();
    let sent = notices::mark_sent(store, &recheck_settings, texts[1].id, "alice", sent_at)
        .await
        .unwrap();
    assert_eq!(sent.status, NoticeStatus::Sent);
    assert_eq!(
        store.case(case).await.unwrap().status,
        CaseStatus::NoticeSent
    );
    // Marked sent by hand, the notice is heard of as a mailed one is: one notice.sent event.
    let events = store
        .jobs(&JobFilter::Kind("Event".into()), Page::all())
        .await
        .unwrap();
    let sent_events: Vec<_> = events
        .iter()
        .filter(|j| j.payload.contains("notice.sent"))
        .collect();
    assert_eq!(sent_events.len(), 1, "{events:?}");
    assert!(
        sent_events[0]
            .payload
            .contains(&format!("\"notice\":{}", texts[1].id.0)),
        "{}",
        sent_events[0].payload
    );
    assert!(
        rechecks::enqueue_due_rechecks(store, sent_at + TimeDelta::hours(23))
            .await
            .unwrap()
            .is_empty()
    );
    let day = |n: i64| sent_at + TimeDelta::days(n) + TimeDelta::minutes(1);
    assert_eq!(
        rechecks::enqueue_due_rechecks(store, day(1)).await.unwrap(),
        vec![case]
    );

    // Day 1: every copy still up, flagged with the days since the notice.
    let rechecker = Rechecker::new(
        store.clone(),
        Arc::clone(&analyser),
        &crawl_settings(),
        recheck_settings.clone(),
    )
    .unwrap();
    let report = rechecker.recheck(case, day(1)).await.unwrap();
    assert!(!report.written.case_removed);
    let copies = &report.written.recheck.copies;
    assert_eq!(copies.len(), 3);
    assert!(
        copies.iter().all(|c| c.state == CopyState::Up),
        "{copies:?}"
    );
    assert!(copies.iter().all(|c| c.snapshot.is_some()));
    assert_eq!(report.still_up().len(), 3);
    assert!(report.still_up().iter().all(|(_, days)| *days == 1));
    assert_eq!(
        report.written.recheck.next_at.unwrap().timestamp_millis(),
        (day(1) + TimeDelta::days(1)).timestamp_millis()
    );
    assert_eq!(
        store.case(case).await.unwrap().status,
        CaseStatus::NoticeSent
    );

    // Day 2: one page answers 410, one 404, one now holds other text.
    {
        let mut p = pages.lock().unwrap();
        p.insert(
            "/book/1.html".into(),
            (410, "text/html", "<p>gone</p>".into()),
        );
        p.remove("/book/2.html");
        p.insert(
            "/book/3.html".into(),
            (
                200,
                "text/html; charset=utf-8",
                html(
                    &"本站已根据权利人的通知删除该章节，敬请谅解。欢迎阅读其他作品。\n".repeat(20),
                ),
            ),
        );
    }
    let report = rechecker.recheck(case, day(2)).await.unwrap();
    let reasons: HashMap<&str, (&CopyState, &str)> = report
        .written
        .recheck
        .copies
        .iter()
        .map(|c| (c.url.as_str(), (&c.state, c.reason.as_str())))
        .collect();
    assert_eq!(
        reasons[url("/book/1.html").as_str()],
        (&CopyState::Removed, "HTTP 410")
    );
    assert_eq!(
        reasons[url("/book/2.html").as_str()],
        (&CopyState::Removed, "HTTP 404")
    );
    assert_eq!(
        reasons[url("/book/3.html").as_str()],
        (
            &CopyState::Removed,
            "the page no longer holds the copied chapters"
        )
    );
    assert!(report.written.case_removed);
    assert!(
        report
            .written
            .recheck
            .copies
            .iter()
            .all(|c| c.removed_snapshot.is_some()),
        "each removal has its snapshot"
    );
    assert_eq!(report.written.recheck.next_at, None);
    assert_eq!(store.case(case).await.unwrap().status, CaseStatus::Removed);
    // The snapshots that show the copies gone are queued for a trusted timestamp.
    let stamps: Vec<String> = store
        .jobs(&JobFilter::Kind("StampSnapshot".into()), Page::all())
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.payload)
        .collect();
    for copy in &report.written.recheck.copies {
        let id = copy.removed_snapshot.unwrap().0;
        assert!(
            stamps
                .iter()
                .any(|p| p.contains(&format!("\"snapshot\":{id}}}"))),
            "no stamp job for snapshot {id}: {stamps:?}"
        );
    }
    assert!(
        rechecks::enqueue_due_rechecks(store, day(30))
            .await
            .unwrap()
            .is_empty()
    );

    // "Re-check now" on the removed case fetches every copy again (a snapshot each), and
    // counts that check; the copies are still gone.
    let again = rechecker.recheck(case, day(3)).await.unwrap();
    let before: HashMap<&str, Option<store::SnapshotId>> = report
        .written
        .recheck
        .copies
        .iter()
        .map(|c| (c.url.as_str(), c.snapshot))
        .collect();
    assert_eq!(again.written.recheck.copies.len(), 3);
    for c in &again.written.recheck.copies {
        assert_eq!(c.state, CopyState::Removed, "{c:?}");
        assert!(
            c.snapshot.is_some() && c.snapshot != before[c.url.as_str()],
            "fetched again: {c:?}"
        );
    }
    assert_eq!(
        again.written.recheck.checks,
        report.written.recheck.checks + 1
    );
    assert_eq!(store.case(case).await.unwrap().status, CaseStatus::Removed);

    // The copy reappears at another URL of the site: the case reopens and says where.
    let back = url("/mirror/2.html");
    let cases = crawled(db, &analyser, &back, &pirate_chapter(2)).await;
    assert_eq!(cases, vec![case]);
    assert_eq!(store.case(case).await.unwrap().status, CaseStatus::New);
    let reopen = store.case_history(case).await.unwrap().pop().unwrap();
    assert_eq!(reopen.action, "case.reopen");
    assert!(
        reopen.note().unwrap().contains(&back),
        "{:?}",
        reopen.note()
    );

    // A crawl then finds a copy a re-check had seen gone: the re-check panel shows it up as
    // the crawl saw it (the newest state, whoever saw it), not "removed, HTTP 410".
    let first = url("/book/1.html");
    let seen = common::stored_page_at(store, &first, &pirate_chapter(1), day(4)).await;
    assert_eq!(analyser.analyse(seen).await.unwrap().cases, vec![case]);
    let panel = store.case_recheck(case).await.unwrap().unwrap();
    let copy = panel.copies.iter().find(|c| c.url == first).unwrap();
    assert_eq!(
        (&copy.state, copy.reason.as_str(), copy.snapshot),
        (&CopyState::Up, store::FOUND_BY_A_CRAWL, Some(seen)),
        "{copy:?}"
    );
    assert_eq!((copy.removed_at, copy.removed_snapshot), (None, None));
}

/// A DMCA notice of `case` (to `recipient`, or to whom the site says), marked sent now:
/// the notice and when it was sent.
async fn notice_sent(
    store: &store::Store,
    case: CaseId,
    recipient: Option<&str>,
) -> (store::NoticeRecord, chrono::DateTime<Utc>) {
    let n = notices::create_notice(
        store,
        &profile(),
        None,
        case,
        NoticeTemplate::Dmca,
        recipient,
        "alice",
    )
    .await
    .unwrap();
    let t0 = Utc::now();
    notices::mark_sent(store, &RecheckSettings::default(), n.id, "alice", t0)
        .await
        .unwrap();
    (n, t0)
}

/// An analyser of the default settings.
fn analyser(store: &store::Store) -> Arc<Analyser> {
    Arc::new(Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    ))
}

/// A site whose host stops resolving: one failed lookup proves nothing, two in a row do.
async fn host_gone(db: &TestDb) {
    let store = &db.store;
    let case = common::confirmed_case(store, "http://copies.invalid/book/2.html").await;
    let (n, t0) = notice_sent(store, case, None).await;
    assert_eq!(
        n.recipient, "",
        "nothing known: the notice leaves the address to fill in"
    );
    assert!(
        n.body_text
            .contains("[the service provider's designated agent")
    );
    let settings = RecheckSettings::default();
    let rechecker =
        Rechecker::new(store.clone(), analyser(store), &crawl_settings(), settings).unwrap();
    let first = rechecker
        .recheck(case, t0 + TimeDelta::days(1))
        .await
        .unwrap();
    let copy = &first.written.recheck.copies[0];
    assert_eq!(copy.state, CopyState::Unknown, "{copy:?}");
    assert_eq!(copy.dns_failures, 1);
    assert!(copy.reason.contains("did not resolve"), "{}", copy.reason);
    assert!(!first.written.case_removed);
    let second = rechecker
        .recheck(case, t0 + TimeDelta::days(2))
        .await
        .unwrap();
    let copy = &second.written.recheck.copies[0];
    assert_eq!(copy.state, CopyState::Removed, "{copy:?}");
    assert!(
        copy.reason.contains("no longer resolves"),
        "{}",
        copy.reason
    );
    assert!(second.written.case_removed);
    assert_eq!(store.case(case).await.unwrap().status, CaseStatus::Removed);
    let recheck = store.case_recheck(case).await.unwrap().unwrap();
    assert_eq!(recheck.checks, 2);
    assert_eq!(recheck.copies[0].removed_snapshot, None, "nothing answered");
}

/// A re-check in a deployment of two index shards, on a worker that holds no index: each
/// copy is judged against the case's work alone, nothing loads the catalogue, and the
/// re-checked pages' match jobs are queued for the shard workers to record.
async fn sharded_recheck(db: &TestDb) {
    let store = &db.store;
    let pages: Pages = Arc::default();
    let addr = site(Arc::clone(&pages)).await;
    let url = format!("http://{addr}/book/2.html");
    pages.lock().unwrap().insert(
        "/book/2.html".into(),
        (200, "text/html; charset=utf-8", html(&pirate_chapter(2))),
    );
    let case = common::confirmed_case(store, &url).await;
    let (_, t0) = notice_sent(store, case, Some("dmca@hoster.example")).await;
    let settings = RecheckSettings::default();
    let analyser = analyser(store);
    let rechecker = Rechecker::new(
        store.clone(),
        Arc::clone(&analyser),
        &crawl_settings(),
        settings,
    )
    .unwrap()
    .with_shards(2);
    let match_jobs = async || -> Vec<String> {
        store
            .jobs(&JobFilter::Kind("MatchSnapshot".into()), Page::all())
            .await
            .unwrap()
            .into_iter()
            .map(|j| j.payload)
            .collect()
    };
    let before = match_jobs().await.len();

    // Day 1: still up.
    let first = rechecker
        .recheck(case, t0 + TimeDelta::days(1))
        .await
        .unwrap();
    let copy = &first.written.recheck.copies[0];
    assert_eq!(copy.state, CopyState::Up, "{copy:?}");
    assert!(analyser.loaded().is_none(), "no index was loaded");
    let queued = match_jobs().await;
    assert_eq!(queued.len(), before + 1, "{queued:?}");
    let snapshot = copy.snapshot.unwrap().0;
    assert!(
        queued
            .iter()
            .any(|p| p.contains(&format!("\"snapshot\":{snapshot}}}"))),
        "{queued:?}"
    );

    // Day 2: the page holds other text.
    pages.lock().unwrap().insert(
        "/book/2.html".into(),
        (
            200,
            "text/html; charset=utf-8",
            html(&"本站已根据权利人的通知删除该章节，敬请谅解。欢迎阅读其他作品。\n".repeat(20)),
        ),
    );
    let second = rechecker
        .recheck(case, t0 + TimeDelta::days(2))
        .await
        .unwrap();
    let copy = &second.written.recheck.copies[0];
    assert_eq!(
        (&copy.state, copy.reason.as_str()),
        (
            &CopyState::Removed,
            "the page no longer holds the copied chapters"
        )
    );
    assert!(second.written.case_removed);
    assert!(analyser.loaded().is_none(), "no index was loaded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_recheck_loads_no_index_on_sqlite() {
    let Some(db) = store::testing::sqlite("sharded_recheck_sqlite").await else {
        return;
    };
    sharded_recheck(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_recheck_loads_no_index_on_postgres() {
    let Some(db) = store::testing::postgres("sharded_recheck_postgres").await else {
        return;
    };
    sharded_recheck(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_and_rechecks_on_sqlite() {
    let Some(db) = store::testing::sqlite("notices_sqlite").await else {
        return;
    };
    notice_lifecycle(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_and_rechecks_on_postgres() {
    let Some(db) = store::testing::postgres("notices_postgres").await else {
        return;
    };
    notice_lifecycle(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_gone_for_two_checks_is_removed_on_sqlite() {
    let Some(db) = store::testing::sqlite("host_gone_sqlite").await else {
        return;
    };
    host_gone(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_gone_for_two_checks_is_removed_on_postgres() {
    let Some(db) = store::testing::postgres("host_gone_postgres").await else {
        return;
    };
    host_gone(&db).await;
}
