//! Per-user alerts by mail (issue #29) against a real SMTP server on 127.0.0.1 (aiosmtpd,
//! `tests/smtp/server.py`), on both backends: cases opened by the match stage become events
//! a worker turns into immediate alerts (English and Chinese subjects, a link to the case,
//! text and HTML), a daily digest holding both events mailed once however often its job
//! runs, nothing for a user whose alerts are off; an alert's job run again mails nothing.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::smtp::{Mode, Received, SmtpServer};
use detection::Analyser;
use import::{ImportOptions, ImportSettings, Importer};
use jobs::Event;
use notification::alerts::{self, AlertOutcome};
use notification::{Mailer, NotifySettings};
use pipeline::Handler;
use store::testing::TestDb;
use store::{
    AlertDelivery, Alerts, JobFilter, JobQueue, JobStatus, NewJob, NewUser, Page, Role,
    UserChanges, UserId, Users, WorkerSettings,
};

const PUBLIC: &str = "https://copyhound.press.example";

/// A user with an address, a language and one choice for `case.opened`.
async fn user(
    store: &store::Store,
    name: &str,
    locale: Option<&str>,
    delivery: AlertDelivery,
) -> UserId {
    let user = store
        .create_user(
            &NewUser {
                username: name,
                display_name: None,
                password_hash: "$argon2id$not-a-real-hash",
                role: Role::Reviewer,
            },
            "test",
        )
        .await
        .unwrap();
    if let Some(locale) = locale {
        let changes = UserChanges {
            locale: Some(Some(locale.to_owned())),
            ..UserChanges::default()
        };
        store.update_user(user.id, &changes, "test").await.unwrap();
    }
    let email = format!("{}@press.example", user.id);
    alerts::set_alerts(
        store,
        user.id,
        Some(&email),
        &[(Event::CaseOpened, delivery)],
        name,
    )
    .await
    .unwrap();
    user.id
}

fn to(mail: &Received) -> String {
    mail.json["rcpt_tos"][0].as_str().unwrap().to_owned()
}

async fn jobs_done(store: &store::Store, kind: &str) -> Vec<store::JobRecord> {
    store
        .jobs(&JobFilter::Kind(kind.into()), Page::all())
        .await
        .unwrap()
}

async fn alerted(db: &TestDb) {
    let Some(server) = SmtpServer::start(Mode::Accept).await else {
        return;
    };
    let store = &db.store;
    let alice = user(store, "alice", Some("en"), AlertDelivery::Immediate).await;
    let lilei = user(store, "李雷", Some("zh-CN"), AlertDelivery::Immediate).await;
    let bob = user(store, "bob", None, AlertDelivery::Digest).await;
    let carol = user(store, "carol", None, AlertDelivery::Off).await;
    // A bad address is refused and changes nothing.
    let err = alerts::set_alerts(store, carol, Some("not an address"), &[], "carol")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not an email address"), "{err}");
    assert_eq!(
        store.user(carol).await.unwrap().email.as_deref(),
        Some(format!("{carol}@press.example").as_str())
    );
    assert_eq!(
        store.alert_preferences(bob).await.unwrap(),
        vec![("case.opened".to_owned(), AlertDelivery::Digest)]
    );
    assert!(store.alert_preferences(carol).await.unwrap().is_empty());

    let notify = NotifySettings {
        smtp: server.settings("copyhound <alerts@press.example>"),
        public_url: format!("{PUBLIC}/"),
        ..NotifySettings::default()
    };
    let importer = Importer::new(ImportSettings::default()).unwrap();
    importer
        .import_bytes(
            store,
            "fengshen.txt",
            common::WORK.as_bytes().to_vec(),
            &ImportOptions::default(),
            &(),
        )
        .await
        .unwrap();
    let analyser = Arc::new(
        Analyser::new(store.clone(), Default::default(), Default::default()).with_events(true),
    );
    let mut cases = Vec::new();
    for host in ["pirate-one.test", "pirate-two.test"] {
        let page = common::stored_page(
            store,
            &format!("https://{host}/book/2.html"),
            &common::pirate_chapter(2),
        )
        .await;
        cases.extend(analyser.analyse(page).await.unwrap().opened);
    }
    assert_eq!(cases.len(), 2, "one case per site");

    let handler = Handler::new(store.clone(), importer, Arc::clone(&analyser))
        .with_mail(common::profile(), notify.clone());
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let settings = WorkerSettings {
        poll_interval: Duration::from_millis(20),
        ..WorkerSettings::default()
    };
    let worker = pipeline::serve(store, handler, settings, stop_rx);

    store::testing::wait_for(
        "both events fanned out and four alerts mailed",
        Duration::from_secs(60),
        async || {
            let events = jobs_done(store, "Event").await;
            let sends = jobs_done(store, "SendAlert").await;
            events.len() == 2
                && sends.len() == 4
                && events
                    .iter()
                    .chain(&sends)
                    .all(|j| j.status == JobStatus::Done)
        },
    )
    .await;
    let immediate = server.received();
    assert_eq!(immediate.len(), 4, "two users, two events each");
    for mail in &immediate {
        assert_ne!(
            to(mail),
            format!("{bob}@press.example"),
            "bob waits for his digest"
        );
        assert_ne!(
            to(mail),
            format!("{carol}@press.example"),
            "carol's alerts are off"
        );
        let text = mail.text("text/plain");
        let html = mail.text("text/html");
        assert!(
            cases
                .iter()
                .any(|c| text.contains(&format!("{PUBLIC}/cases/{c}"))
                    && html.contains(&format!("href=\"{PUBLIC}/cases/{c}\""))),
            "a link to its case in both parts: {text}\n{html}"
        );
        if to(mail) == format!("{lilei}@press.example") {
            assert!(
                mail.header("Subject").contains("新案件"),
                "{}",
                mail.header("Subject")
            );
            assert!(text.contains("新案件"), "{text}");
        } else {
            assert_eq!(to(mail), format!("{alice}@press.example"));
            assert!(
                mail.header("Subject").contains("new case"),
                "{}",
                mail.header("Subject")
            );
        }
    }

    // The digest, queued twice as a schedule and a retry would: mailed once, both events.
    for _ in 0..2 {
        store
            .enqueue(&NewJob::new(&jobs::Job::SendDigests).unwrap())
            .await
            .unwrap();
        store::testing::wait_for("the digest job done", Duration::from_secs(30), async || {
            jobs_done(store, "SendDigests")
                .await
                .iter()
                .all(|j| j.status == JobStatus::Done)
        })
        .await;
    }
    let _ = stop.send(true);
    worker.await.unwrap();
    let all = server.received();
    assert_eq!(all.len(), 5, "one digest, however often its job ran");
    let digest = &all[4];
    assert_eq!(to(digest), format!("{bob}@press.example"));
    assert!(
        digest.header("Subject").contains("daily digest, 2 events"),
        "{}",
        digest.header("Subject")
    );
    let text = digest.text("text/plain");
    for case in &cases {
        assert!(text.contains(&format!("{PUBLIC}/cases/{case}")), "{text}");
    }
    assert!(store.users_with_digest_items().await.unwrap().is_empty());

    // An alert's job run again mails nothing.
    let sent = jobs_done(store, "SendAlert").await;
    let job: jobs::Job = serde_json::from_str(&sent[0].payload).unwrap();
    let jobs::Job::SendAlert { user, event } = job else {
        panic!("{job:?}");
    };
    let mailer = Mailer::new(&notify.smtp).unwrap();
    assert_eq!(
        alerts::send_alert(store, &notify, &mailer, user, event)
            .await
            .unwrap(),
        AlertOutcome::AlreadySent
    );
    assert_eq!(server.received().len(), 5);
}

/// A server that refuses: the alert is not recorded as sent and the digest items wait.
async fn refused(db: &TestDb) {
    let Some(server) = SmtpServer::start(Mode::Refuse).await else {
        return;
    };
    let store = &db.store;
    let dora = user(store, "dora", None, AlertDelivery::Digest).await;
    let notify = NotifySettings {
        smtp: server.settings("copyhound <alerts@press.example>"),
        ..NotifySettings::default()
    };
    let at = chrono::Utc::now();
    let data = serde_json::json!({"crawl": 3, "error": "robots.txt denied /"});
    store
        .set_alert_preferences(
            dora,
            &[("crawl.failed".to_owned(), AlertDelivery::Immediate)],
            "dora",
        )
        .await
        .unwrap();
    let queued = alerts::on_event(store, &notify, Event::CrawlFailed, at, &data)
        .await
        .unwrap();
    assert_eq!(queued.immediate, vec![dora]);
    // The same event handled again records no second event.
    alerts::on_event(store, &notify, Event::CrawlFailed, at, &data)
        .await
        .unwrap();
    let sends = jobs_done(store, "SendAlert").await;
    assert_eq!(sends.len(), 1, "{sends:?}");
    let jobs::Job::SendAlert { event, .. } = serde_json::from_str(&sends[0].payload).unwrap()
    else {
        panic!()
    };
    let mailer = Mailer::new(&notify.smtp).unwrap();
    let err = alerts::send_alert(store, &notify, &mailer, dora, event)
        .await
        .unwrap_err();
    assert!(matches!(err, jobs::Error::Mail(_)), "{err}");
    // Not recorded as sent: a retry tries again (and is refused again).
    assert!(
        alerts::send_alert(store, &notify, &mailer, dora, event)
            .await
            .is_err()
    );
    assert!(server.received().is_empty());
}

store::on_both_backends!(alerted, refused);
