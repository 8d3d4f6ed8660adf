//! The conformance cases of per-user alerts and stored webhooks (issue #29), run on both
//! backends through `conformance.rs`.

use store::testing::TestDb;
use store::{
    AlertDelivery, AlertEventId, AlertMailId, AlertStart, Alerts, AuditLog, Error, NewUser,
    NewWebhook, Role, UserChanges, UserId, Users, WebhookId, Webhooks,
};

use super::cases::{at, not_found};

async fn user(db: &TestDb, name: &str, email: Option<&str>) -> UserId {
    let user = db
        .store
        .create_user(
            &NewUser {
                username: name,
                display_name: None,
                password_hash: "$argon2id$hash",
                role: Role::Viewer,
            },
            "test",
        )
        .await
        .unwrap();
    let changes = UserChanges {
        email: Some(email.map(str::to_owned)),
        ..UserChanges::default()
    };
    db.store
        .update_user(user.id, &changes, "test")
        .await
        .unwrap();
    user.id
}

fn choice(event: &str, d: AlertDelivery) -> (String, AlertDelivery) {
    (event.to_owned(), d)
}

pub async fn alert_choices_pick_recipients_and_each_mail_is_sent_once(db: &TestDb) {
    let s = &db.store;
    let ann = user(db, "ann", Some("ann@press.example")).await;
    let li = user(db, "李雷", Some("li@例子.中国")).await;
    let quiet = user(db, "quiet", None).await;
    assert_eq!(
        s.user(ann).await.unwrap().email.as_deref(),
        Some("ann@press.example")
    );
    not_found(
        s.set_alert_preferences(UserId(999_999), &[], "test").await,
        "user",
    );
    for u in [ann, li, quiet] {
        s.set_alert_preferences(
            u,
            &[
                choice("case.opened", AlertDelivery::Immediate),
                choice("crawl.failed", AlertDelivery::Digest),
            ],
            "test",
        )
        .await
        .unwrap();
    }
    // Off removes a choice; the same choice again writes no audit row.
    s.set_alert_preferences(
        li,
        &[
            choice("case.opened", AlertDelivery::Off),
            choice("crawl.failed", AlertDelivery::Digest),
        ],
        "李雷",
    )
    .await
    .unwrap();
    assert_eq!(
        s.alert_preferences(li).await.unwrap(),
        vec![choice("crawl.failed", AlertDelivery::Digest)]
    );
    let audit = s.audit_of("user", li.0).await.unwrap();
    let alerts: Vec<_> = audit.iter().filter(|a| a.action == "user.alerts").collect();
    assert_eq!(alerts.len(), 2, "{audit:?}");

    // Only users with an address, enabled, who chose the event.
    let opened = s.alert_recipients("case.opened").await.unwrap();
    assert_eq!(
        opened.iter().map(|(u, d)| (u.id, *d)).collect::<Vec<_>>(),
        vec![(ann, AlertDelivery::Immediate)]
    );
    let failed = s.alert_recipients("crawl.failed").await.unwrap();
    assert_eq!(
        failed.iter().map(|(u, _)| u.id).collect::<Vec<_>>(),
        vec![ann, li]
    );
    s.update_user(
        ann,
        &UserChanges {
            disabled: Some(true),
            ..UserChanges::default()
        },
        "test",
    )
    .await
    .unwrap();
    assert!(s.alert_recipients("case.opened").await.unwrap().is_empty());

    // An event is recorded once per key.
    let data = serde_json::json!({"case": 7, "title": "封神 \"演义\""});
    let first = s
        .record_alert_event("k1", "case.opened", at(0), &data)
        .await
        .unwrap();
    let again = s
        .record_alert_event("k1", "case.opened", at(5), &data)
        .await
        .unwrap();
    assert_eq!(first, again);
    assert_eq!(first.data, data);
    assert_eq!(s.alert_event(first.id).await.unwrap(), first);
    not_found(s.alert_event(AlertEventId(999_999)).await, "alert event");

    // An immediate alert: begun once, released on a refusal, then sent once.
    let AlertStart::Begun(mail) = s.begin_alert_mail(ann, first.id, at(1)).await.unwrap() else {
        panic!("a first attempt begins");
    };
    assert_eq!(
        s.begin_alert_mail(ann, first.id, at(2)).await.unwrap(),
        AlertStart::Unfinished,
        "an attempt without an outcome stops the next"
    );
    s.release_alert_mail(mail).await.unwrap();
    let AlertStart::Begun(mail) = s.begin_alert_mail(ann, first.id, at(3)).await.unwrap() else {
        panic!("a refused attempt may be made again");
    };
    s.finish_alert_mail(mail, at(4)).await.unwrap();
    assert_eq!(
        s.begin_alert_mail(ann, first.id, at(5)).await.unwrap(),
        AlertStart::AlreadySent
    );
    not_found(
        s.finish_alert_mail(AlertMailId(999_999), at(5)).await,
        "alert mail",
    );

    // A digest claims what waits, oldest first; a refusal puts the items back.
    let second = s
        .record_alert_event(
            "k2",
            "crawl.failed",
            at(-10),
            &serde_json::json!({"crawl": 1}),
        )
        .await
        .unwrap();
    for event in [first.id, second.id, first.id] {
        s.add_digest_item(li, event).await.unwrap();
    }
    assert_eq!(s.users_with_digest_items().await.unwrap(), vec![li]);
    let (mail, events) = s.begin_digest(li, at(6)).await.unwrap().unwrap();
    assert_eq!(
        events.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![second.id, first.id]
    );
    assert!(s.users_with_digest_items().await.unwrap().is_empty());
    assert_eq!(s.begin_digest(li, at(6)).await.unwrap(), None);
    s.release_alert_mail(mail).await.unwrap();
    let (mail, events) = s.begin_digest(li, at(7)).await.unwrap().unwrap();
    assert_eq!(events.len(), 2);
    s.finish_alert_mail(mail, at(8)).await.unwrap();
    // Releasing a sent mail changes nothing.
    s.release_alert_mail(mail).await.unwrap();
    assert!(s.users_with_digest_items().await.unwrap().is_empty());
    assert_eq!(s.begin_digest(li, at(9)).await.unwrap(), None);
    // An event already mailed in a digest is not added to the next.
    s.add_digest_item(li, second.id).await.unwrap();
    assert_eq!(s.begin_digest(li, at(10)).await.unwrap(), None);
}

pub async fn stored_webhooks_are_added_toggled_deleted_and_audited(db: &TestDb) {
    let s = &db.store;
    assert!(s.webhooks().await.unwrap().is_empty());
    let secret = bounds::Secret::new("whsec-0123456789abcdef");
    let events = vec!["case.opened".to_owned(), "notice.sent".to_owned()];
    let hook = s
        .add_webhook(
            &NewWebhook {
                url: "https://hooks.press.example/in",
                secret: &secret,
                events: &events,
            },
            "alice",
        )
        .await
        .unwrap();
    assert!(hook.enabled);
    assert_eq!(hook.events, events);
    assert_eq!(hook.secret, secret);
    assert!(!format!("{hook:?}").contains("0123456789"), "{hook:?}");
    assert!(
        !serde_json::to_string(&hook).unwrap().contains("0123456789"),
        "never serialised"
    );
    match s
        .add_webhook(
            &NewWebhook {
                url: "https://hooks.press.example/in",
                secret: &secret,
                events: &[],
            },
            "alice",
        )
        .await
    {
        Err(Error::Conflict(m)) => assert!(m.contains("hooks.press.example"), "{m}"),
        other => panic!("{other:?}"),
    }
    s.set_webhook_enabled(hook.id, false, "alice")
        .await
        .unwrap();
    assert!(!s.webhooks().await.unwrap()[0].enabled);
    not_found(
        s.set_webhook_enabled(WebhookId(999_999), true, "alice")
            .await,
        "webhook",
    );
    s.delete_webhook(hook.id, "alice").await.unwrap();
    assert!(s.webhooks().await.unwrap().is_empty());
    not_found(s.delete_webhook(hook.id, "alice").await, "webhook");
    let audit = s.audit_of("webhook", hook.id.0).await.unwrap();
    let actions: Vec<_> = audit.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(actions.len(), 3, "create, update, delete: {actions:?}");
    for a in &audit {
        assert!(!a.details.to_string().contains("0123456789"), "{a:?}");
    }
}
