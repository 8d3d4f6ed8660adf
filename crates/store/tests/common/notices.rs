//! The conformance cases of takedown notices and re-checks (issue #12), run on both backends
//! through `conformance.rs`.

use chrono::{Duration as TimeDelta, Utc};
use store::testing::TestDb;
use store::{
    AuditLog, CaseReads, CaseStatus, CaseWrites, CopyCheck, CopyState, Error, MatchWrites,
    NewNotice, NoticeDraftEdit, NoticeId, NoticeMail, NoticeStatus, Notices, PageId, Rechecks,
    SendStart, SettingChange, SettingOverrides, SnapshotId, Store,
};

use super::cases::{actions, at, found, not_found, snapshot_at, work};

fn draft(case: store::CaseId, template: &str) -> NewNotice {
    NewNotice {
        case,
        template: template.into(),
        recipient: "abuse@盗版.example".into(),
        subject: "侵权通知书：《镜花缘》".into(),
        body_text: "权利人：某出版社\n网址：https://盗版.example/1\n".into(),
        body_html: "<p>权利人：某出版社 &lt;script&gt;</p>".into(),
    }
}

/// The page of a snapshot, through the case's matches.
async fn page_of(s: &Store, case: store::CaseId, snapshot: SnapshotId) -> PageId {
    s.case_matches(case)
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.snapshot_id == snapshot)
        .unwrap()
        .page_id
}

fn check(
    page: PageId,
    url: &str,
    state: CopyState,
    reason: &str,
    snapshot: Option<SnapshotId>,
) -> CopyCheck {
    CopyCheck {
        page,
        url: url.into(),
        state,
        reason: reason.into(),
        snapshot,
        dns_failures: 0,
    }
}

/// A case against a new work (`seed`) opened by a match on `url`.
async fn open_case(s: &Store, seed: u8, url: &str) -> store::CaseId {
    let (w, ch) = work(s, "镜花缘", seed).await;
    let snap = snapshot_at(s, url, 1, at(0)).await;
    s.record_matches(snap, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap()
        .opened[0]
}

pub async fn notices_are_drafted_for_confirmed_cases_and_marked_sent_once(db: &TestDb) {
    let s = &db.store;
    let case = open_case(s, 61, "https://盗版.example/1").await;

    // An unreviewed case gets no notice.
    match s.create_notice(&draft(case, "cn"), "alice").await {
        Err(Error::Conflict(msg)) => assert!(msg.contains("confirm"), "{msg}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    not_found(
        s.create_notice(&draft(store::CaseId(9_999), "cn"), "alice")
            .await,
        "case",
    );
    s.set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let cn = s.create_notice(&draft(case, "cn"), "alice").await.unwrap();
    let dmca = s.create_notice(&draft(case, "dmca"), "bob").await.unwrap();
    assert_eq!(cn.status, NoticeStatus::Draft);
    assert_eq!(cn.case_id, case);
    assert_eq!(cn.created_by, "alice");
    assert_eq!(cn.subject, "侵权通知书：《镜花缘》");
    assert_eq!(cn.body_html, "<p>权利人：某出版社 &lt;script&gt;</p>");
    assert!(cn.sent_at.is_none());
    assert_eq!(s.notice(cn.id).await.unwrap(), cn);
    let listed: Vec<NoticeId> = s
        .notices(Some(case))
        .await
        .unwrap()
        .iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(listed, vec![dmca.id, cn.id], "newest first");
    assert_eq!(s.notices(None).await.unwrap().len(), 2);
    assert!(
        s.notices(Some(store::CaseId(9_999)))
            .await
            .unwrap()
            .is_empty()
    );
    not_found(s.notice(NoticeId(9_999)).await, "notice");
    assert!(s.case_recheck(case).await.unwrap().is_none());

    // Sending moves the case and starts its re-checks.
    let sent_at = Utc::now();
    let first = sent_at + TimeDelta::days(1);
    let sent = s
        .mark_notice_sent(cn.id, "alice", sent_at, first)
        .await
        .unwrap();
    assert_eq!(sent.status, NoticeStatus::Sent);
    assert_eq!(
        sent.sent_at.unwrap().timestamp_millis(),
        sent_at.timestamp_millis()
    );
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::NoticeSent);
    let recheck = s.case_recheck(case).await.unwrap().unwrap();
    assert_eq!(recheck.notice, Some(cn.id));
    assert_eq!(
        recheck.next_at.unwrap().timestamp_millis(),
        first.timestamp_millis()
    );
    assert_eq!(recheck.checks, 0);
    assert!(recheck.copies.is_empty());
    match s.mark_notice_sent(cn.id, "alice", sent_at, first).await {
        Err(Error::Conflict(msg)) => assert!(msg.contains("already"), "{msg}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    // A second notice of a case that is notice_sent already: the case stays, re-checks restart.
    let later = first + TimeDelta::days(3);
    s.mark_notice_sent(dmca.id, "bob", sent_at + TimeDelta::days(2), later)
        .await
        .unwrap();
    let recheck = s.case_recheck(case).await.unwrap().unwrap();
    assert_eq!(recheck.notice, Some(dmca.id));
    assert_eq!(
        recheck.next_at.unwrap().timestamp_millis(),
        later.timestamp_millis()
    );
    let history = actions(s, case).await;
    assert_eq!(
        history.iter().filter(|a| *a == "case.notice_sent").count(),
        1,
        "{history:?}"
    );
    let notice_audit = store::AuditLog::audit_of(s, "notice", cn.id.0)
        .await
        .unwrap();
    let notice_actions: Vec<&str> = notice_audit.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(notice_actions, ["notice.create", "notice.sent"]);

    // A dismissed case's draft cannot be sent.
    let third = s.create_notice(&draft(case, "cn"), "alice").await.unwrap();
    s.set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    s.set_case_status(case, CaseStatus::Dismissed, "alice", None)
        .await
        .unwrap();
    match s.mark_notice_sent(third.id, "alice", sent_at, first).await {
        Err(Error::Conflict(msg)) => assert!(msg.contains("dismissed"), "{msg}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(
        s.notice(third.id).await.unwrap().status,
        NoticeStatus::Draft
    );
}

pub async fn rechecks_remove_the_case_when_every_copy_is_gone(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "儒林外史", 62).await;
    let (u1, u2) = ("https://copy.example/a", "https://copy.example/b");
    let s1 = snapshot_at(s, u1, 11, at(0)).await;
    let s2 = snapshot_at(s, u2, 12, at(1)).await;
    let case = s
        .record_matches(s1, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap()
        .opened[0];
    s.record_matches(s2, &[found(w, ch[1], 0.9)], "worker")
        .await
        .unwrap();
    let (p1, p2) = (page_of(s, case, s1).await, page_of(s, case, s2).await);
    s.set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let notice = s
        .create_notice(&draft(case, "dmca"), "alice")
        .await
        .unwrap();
    let t0 = Utc::now();
    s.mark_notice_sent(notice.id, "alice", t0, t0 + TimeDelta::days(1))
        .await
        .unwrap();

    // Due only once its time comes.
    assert!(s.due_rechecks(t0, 10).await.unwrap().is_empty());
    assert_eq!(
        s.due_rechecks(t0 + TimeDelta::days(1), 10).await.unwrap(),
        vec![case]
    );
    not_found(
        s.record_recheck(store::CaseId(9_999), &[], t0, None, "recheck")
            .await,
        "notice sent for case",
    );

    // Day 1: one copy gone, the other up.
    let gone1 = snapshot_at(s, u1, 13, t0 + TimeDelta::days(1)).await;
    let up2 = snapshot_at(s, u2, 14, t0 + TimeDelta::days(1)).await;
    let day1 = t0 + TimeDelta::days(1);
    let written = s
        .record_recheck(
            case,
            &[
                check(p1, u1, CopyState::Removed, "HTTP 404", Some(gone1)),
                check(p2, u2, CopyState::Up, "still serves 1 chapter", Some(up2)),
            ],
            day1,
            Some(t0 + TimeDelta::days(2)),
            "recheck",
        )
        .await
        .unwrap();
    assert_eq!(written.newly_removed, vec![p1]);
    assert!(written.back_up.is_empty());
    assert!(!written.case_removed);
    assert_eq!(written.recheck.checks, 1);
    assert_eq!(written.recheck.copies.len(), 2);
    let c1 = &written
        .recheck
        .copies
        .iter()
        .find(|c| c.page == p1)
        .unwrap();
    assert_eq!(c1.state, CopyState::Removed);
    assert_eq!(c1.removed_snapshot, Some(gone1));
    assert_eq!(
        c1.removed_at.unwrap().timestamp_millis(),
        day1.timestamp_millis()
    );
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::NoticeSent);
    assert!(s.due_rechecks(day1, 10).await.unwrap().is_empty());

    // Day 2: the second copy is gone too; the first stays gone with its first evidence.
    let day2 = t0 + TimeDelta::days(2);
    let gone1b = snapshot_at(s, u1, 15, day2).await;
    let gone2 = snapshot_at(s, u2, 16, day2).await;
    let written = s
        .record_recheck(
            case,
            &[
                check(p1, u1, CopyState::Removed, "HTTP 410", Some(gone1b)),
                check(
                    p2,
                    u2,
                    CopyState::Removed,
                    "no longer holds the chapters",
                    Some(gone2),
                ),
            ],
            day2,
            Some(t0 + TimeDelta::days(3)),
            "recheck",
        )
        .await
        .unwrap();
    assert_eq!(written.newly_removed, vec![p2]);
    assert!(written.case_removed);
    assert_eq!(written.recheck.next_at, None, "re-checks stop");
    let c1 = written
        .recheck
        .copies
        .iter()
        .find(|c| c.page == p1)
        .unwrap();
    assert_eq!(
        c1.removed_snapshot,
        Some(gone1),
        "the first evidence is kept"
    );
    assert_eq!(c1.snapshot, Some(gone1b));
    assert_eq!(c1.reason, "HTTP 410");
    let c = s.case(case).await.unwrap();
    assert_eq!(c.status, CaseStatus::Removed);
    let history = s.case_history(case).await.unwrap();
    let removed = history.last().unwrap();
    assert_eq!(
        (removed.action.as_str(), removed.actor.as_str()),
        ("case.removed", "recheck")
    );
    let note = removed.note().unwrap();
    assert!(
        note.contains(&gone1.0.to_string()) && note.contains(&gone2.0.to_string()),
        "{note}"
    );
    assert!(
        s.due_rechecks(day2 + TimeDelta::days(30), 10)
            .await
            .unwrap()
            .is_empty()
    );

    // The copy comes back in a later crawl: the case reopens and says where.
    let back = snapshot_at(
        s,
        "https://copy.example/c",
        17,
        Utc::now() + TimeDelta::hours(1),
    )
    .await;
    let r = s
        .record_matches(back, &[found(w, ch[2], 0.9)], "worker")
        .await
        .unwrap();
    assert_eq!(r.reopened, vec![case]);
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::New);
    let reopen = s.case_history(case).await.unwrap().pop().unwrap();
    assert_eq!(reopen.action, "case.reopen");
    assert!(reopen.note().unwrap().contains("https://copy.example/c"));
}

pub async fn a_copy_back_up_is_reported_and_a_reviewed_case_stops_its_rechecks(db: &TestDb) {
    let s = &db.store;
    let (w, ch) = work(s, "老残游记", 63).await;
    let u = "https://copy.example/lao";
    let snap = snapshot_at(s, u, 21, at(0)).await;
    let case = s
        .record_matches(snap, &[found(w, ch[0], 0.9)], "worker")
        .await
        .unwrap()
        .opened[0];
    s.set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let notice = s.create_notice(&draft(case, "cn"), "alice").await.unwrap();
    let t0 = Utc::now();
    s.mark_notice_sent(notice.id, "alice", t0, t0)
        .await
        .unwrap();
    let page = page_of(s, case, snap).await;
    let mut unknown = check(page, u, CopyState::Unknown, "host did not resolve", None);
    unknown.dns_failures = 1;
    let w1 = s
        .record_recheck(
            case,
            &[unknown],
            t0,
            Some(t0 + TimeDelta::days(1)),
            "recheck",
        )
        .await
        .unwrap();
    assert!(!w1.case_removed && w1.newly_removed.is_empty());
    assert_eq!(w1.recheck.copies[0].dns_failures, 1);
    assert_eq!(w1.recheck.copies[0].removed_at, None);
    let gone = snapshot_at(s, u, 22, t0 + TimeDelta::days(1)).await;
    let mut removed = check(page, u, CopyState::Removed, "HTTP 404", Some(gone));
    removed.dns_failures = 0;
    // The case has one page: gone means removed... unless a reviewer moved it back first.
    s.set_case_status(case, CaseStatus::Confirmed, "alice", Some("wrong site"))
        .await
        .unwrap();
    let w2 = s
        .record_recheck(
            case,
            &[removed],
            t0 + TimeDelta::days(1),
            Some(t0 + TimeDelta::days(2)),
            "recheck",
        )
        .await
        .unwrap();
    assert!(
        !w2.case_removed,
        "a case out of notice_sent is not removed by a re-check"
    );
    assert_eq!(w2.recheck.next_at, None, "and its re-checks stop");
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::Confirmed);
    // Sent again, the copy is found up again: reported as back.
    let again = s.create_notice(&draft(case, "cn"), "alice").await.unwrap();
    s.mark_notice_sent(again.id, "alice", t0, t0).await.unwrap();
    let up = snapshot_at(s, u, 23, t0 + TimeDelta::days(2)).await;
    let w3 = s
        .record_recheck(
            case,
            &[check(
                page,
                u,
                CopyState::Up,
                "still serves 1 chapter",
                Some(up),
            )],
            t0 + TimeDelta::days(2),
            Some(t0 + TimeDelta::days(3)),
            "recheck",
        )
        .await
        .unwrap();
    assert_eq!(w3.back_up, vec![page]);
    assert_eq!(w3.recheck.copies[0].removed_at, None);
    assert_eq!(w3.recheck.copies[0].removed_snapshot, None);
    assert_eq!(w3.recheck.checks, 3);
    assert!(w3.recheck.next_at.is_some());
}

pub async fn a_draft_is_edited_until_it_is_sent(db: &TestDb) {
    let s = &db.store;
    let case = open_case(s, 62, "https://盗版.example/2").await;
    s.set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let notice = s.create_notice(&draft(case, "cn"), "alice").await.unwrap();
    let edit = NoticeDraftEdit {
        recipient: "legal@托管.example".into(),
        body_text: "改过的通知 <b>\n第二行".into(),
        body_html: "<pre>改过的通知 &lt;b&gt;\n第二行</pre>".into(),
    };
    let edited = s.edit_notice_draft(notice.id, &edit, "bob").await.unwrap();
    assert_eq!(edited.recipient, edit.recipient);
    assert_eq!(edited.body_text, edit.body_text);
    assert_eq!(edited.body_html, edit.body_html);
    assert_eq!(
        (edited.subject, edited.created_by),
        (notice.subject, notice.created_by)
    );
    let audit = s.audit_of("notice", notice.id.0).await.unwrap();
    let row = audit.iter().find(|a| a.action == "notice.edit").unwrap();
    assert_eq!(row.actor, "bob");
    assert_eq!(row.details["recipient"]["before"], "abuse@盗版.example");
    assert_eq!(row.details["text_changed"], true);

    not_found(
        s.edit_notice_draft(NoticeId(9_999), &edit, "bob").await,
        "notice",
    );
    let now = Utc::now();
    s.mark_notice_sent(notice.id, "alice", now, now)
        .await
        .unwrap();
    match s.edit_notice_draft(notice.id, &edit, "bob").await {
        Err(Error::Conflict(msg)) => assert!(msg.contains("marked sent"), "{msg}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

/// Issue #29: a send records its Message-ID before it talks to the server; a refusal leaves
/// a draft with the reason; an attempt cut off mid-send blocks a second send until asked; an
/// accepted one is marked sent with the message's SHA-256, and a send run again after that
/// sends nothing.
pub async fn a_mailed_notice_is_recorded_before_and_after_it_is_sent(db: &TestDb) {
    let s = &db.store;
    let case = open_case(s, 63, "https://盗版.example/3").await;
    s.set_case_status(case, CaseStatus::Confirmed, "alice", None)
        .await
        .unwrap();
    let notice = s.create_notice(&draft(case, "cn"), "alice").await.unwrap();
    assert_eq!(notice.message_id, None);
    not_found(
        s.begin_notice_send(NoticeId(9_999), "x@h", Utc::now(), false, "alice")
            .await,
        "notice",
    );

    // A refused attempt: the draft keeps its Message-ID and says why.
    let t0 = Utc::now();
    let SendStart::Begun(begun) = s
        .begin_notice_send(notice.id, "first@press.example", t0, false, "alice")
        .await
        .unwrap()
    else {
        panic!("a draft's send begins");
    };
    assert_eq!(begun.message_id.as_deref(), Some("first@press.example"));
    assert!(begun.sending_since.is_some());
    let failed = s
        .fail_notice_send(notice.id, "550 5.7.1 relaying denied", "alice")
        .await
        .unwrap();
    assert_eq!(failed.status, NoticeStatus::Draft);
    assert_eq!(failed.sending_since, None);
    assert_eq!(
        failed.send_error.as_deref(),
        Some("550 5.7.1 relaying denied")
    );

    // The next attempt keeps the first Message-ID; cut off, it blocks a third.
    let SendStart::Begun(again) = s
        .begin_notice_send(notice.id, "second@press.example", t0, false, "alice")
        .await
        .unwrap()
    else {
        panic!("a failed send begins again");
    };
    assert_eq!(again.message_id.as_deref(), Some("first@press.example"));
    assert_eq!(again.send_error, None);
    match s
        .begin_notice_send(notice.id, "third@press.example", t0, false, "worker")
        .await
    {
        Err(Error::Conflict(msg)) => {
            assert!(msg.contains("<first@press.example>"), "{msg}");
            assert!(msg.contains("no outcome recorded"), "{msg}");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    // Asked to, it sends again with the same Message-ID.
    let SendStart::Begun(forced) = s
        .begin_notice_send(notice.id, "fourth@press.example", t0, true, "bob")
        .await
        .unwrap()
    else {
        panic!("a forced send begins");
    };
    assert_eq!(forced.message_id.as_deref(), Some("first@press.example"));

    let mail = NoticeMail {
        sha256: "ab".repeat(32),
        reply: "250 2.0.0 Ok: queued as 4F2A".into(),
    };
    let sent = s
        .mark_notice_mailed(notice.id, &mail, "worker", t0, t0 + TimeDelta::days(1))
        .await
        .unwrap();
    assert_eq!(sent.status, NoticeStatus::Sent);
    assert_eq!(sent.sent_sha256.as_deref(), Some(mail.sha256.as_str()));
    assert_eq!(sent.smtp_reply.as_deref(), Some(mail.reply.as_str()));
    assert_eq!(sent.sending_since, None);
    assert_eq!(s.case(case).await.unwrap().status, CaseStatus::NoticeSent);
    assert!(s.case_recheck(case).await.unwrap().is_some());

    // A job run again after its worker died finds it sent and sends nothing.
    match s
        .begin_notice_send(notice.id, "fifth@press.example", t0, true, "worker")
        .await
        .unwrap()
    {
        SendStart::AlreadySent(n) => assert_eq!(n, sent),
        other => panic!("expected already sent, got {other:?}"),
    }
    match s.fail_notice_send(notice.id, "late", "worker").await {
        Err(Error::Conflict(msg)) => assert!(msg.contains("was sent"), "{msg}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    let actions: Vec<String> = s
        .audit_of("notice", notice.id.0)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.action)
        .collect();
    assert_eq!(
        actions,
        [
            "notice.create",
            "notice.send",
            "notice.send_failed",
            "notice.send",
            "notice.send",
            "notice.sent"
        ]
    );

    // A person who marks a cut-off send sent settles it.
    let other = s
        .create_notice(&draft(case, "dmca"), "alice")
        .await
        .unwrap();
    s.begin_notice_send(other.id, "other@press.example", t0, false, "alice")
        .await
        .unwrap();
    let settled = s.mark_notice_sent(other.id, "alice", t0, t0).await.unwrap();
    assert_eq!(settled.sending_since, None);
    assert_eq!(settled.sent_sha256, None);
    assert_eq!(settled.message_id.as_deref(), Some("other@press.example"));
}

pub async fn setting_overrides_are_saved_cleared_and_audited(db: &TestDb) {
    let s = &db.store;
    assert!(s.setting_overrides().await.unwrap().is_empty());
    let set = |key: &str, value: Option<&str>| SettingChange {
        key: key.into(),
        value: value.map(str::to_owned),
    };
    let changed = s
        .save_setting_overrides(
            &[
                set("notices.rights_holder.name", Some("示例出版社 📚")),
                set("server.time_zone", Some("Asia/Shanghai")),
                set("notices.template", None),
            ],
            "alice",
        )
        .await
        .unwrap();
    // Clearing what was never saved is no change.
    assert_eq!(changed, ["notices.rights_holder.name", "server.time_zone"]);
    let saved = s.setting_overrides().await.unwrap();
    assert_eq!(saved.len(), 2);
    assert_eq!(saved[0].key, "notices.rights_holder.name");
    assert_eq!(saved[0].value, "示例出版社 📚");
    assert_eq!(saved[1].updated_by, "alice");

    // The same value again changes nothing and writes no audit row.
    let again = s
        .save_setting_overrides(&[set("server.time_zone", Some("Asia/Shanghai"))], "bob")
        .await
        .unwrap();
    assert!(again.is_empty());
    let changed = s
        .save_setting_overrides(
            &[
                set("server.time_zone", None),
                set("notices.rights_holder.name", Some("Press")),
            ],
            "bob",
        )
        .await
        .unwrap();
    assert_eq!(changed.len(), 2);
    let saved = s.setting_overrides().await.unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(
        (saved[0].value.as_str(), saved[0].updated_by.as_str()),
        ("Press", "bob")
    );

    let rows: Vec<_> = s
        .recent_audit(None, 10)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.action == "settings.change")
        .collect();
    assert_eq!(rows.len(), 2, "one row per save that changed something");
    let last = &rows[0];
    assert_eq!(last.actor, "bob");
    assert_eq!(last.details["server.time_zone"]["before"], "Asia/Shanghai");
    assert!(last.details["server.time_zone"]["after"].is_null());
    assert_eq!(
        last.details["notices.rights_holder.name"]["before"],
        "示例出版社 📚"
    );
}
