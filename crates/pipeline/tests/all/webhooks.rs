//! Signed webhooks (issue #29) on both backends: a case opened by the match stage becomes a
//! `case.opened` event, a worker fans it out and POSTs it to a receiver on 127.0.0.1 that
//! checks the signature and the timestamp; the receiver's first answer is a 503, so the
//! delivery is retried (same delivery id); a webhook on a loopback address the crawler's
//! address rules do not allow is refused and dead, its reason on the job. A webhook an admin
//! stored gets its signed deliveries the same way (a private address refused when stored,
//! a stored webhook turned off gets nothing).

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use detection::Analyser;
use import::{ImportOptions, ImportSettings, Importer};
use jobs::Event;
use notification::NotifySettings;
use notification::webhooks::WebhookSettings;
use pipeline::Handler;
use store::testing::TestDb;
use store::{JobFilter, JobQueue, JobStatus, Page, Webhooks, WorkerSettings};

const SECRET: &str = "whsec-0123456789abcdef";

/// What the receiver got: each request's headers, body, and whether its signature held.
#[derive(Default)]
struct Inbox {
    requests: Vec<(HeaderMap, Bytes, bool)>,
}

async fn receive(
    State(inbox): State<Arc<Mutex<Inbox>>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let signed = headers
        .get("x-copyhound-signature")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("sha256="))
        .is_some_and(|sig| sig == notification::webhooks::sign(SECRET.as_bytes(), &body));
    let mut inbox = inbox.lock().unwrap();
    inbox.requests.push((headers, body, signed));
    match (signed, inbox.requests.len()) {
        (false, _) => StatusCode::UNAUTHORIZED,
        // The first delivery meets a receiver that is down.
        (true, 1) => StatusCode::SERVICE_UNAVAILABLE,
        (true, _) => StatusCode::NO_CONTENT,
    }
}

async fn delivered_and_retried(db: &TestDb) {
    let store = &db.store;
    let inbox: Arc<Mutex<Inbox>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(Arc::clone(&inbox));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let hook = |url: String, events: &[&str]| WebhookSettings {
        url,
        secret: bounds::Secret::new(SECRET),
        events: events.iter().map(|e| (*e).to_owned()).collect(),
    };
    let notify = NotifySettings {
        webhooks: vec![
            hook(format!("http://127.0.0.1:{port}/hook"), &["case.opened"]),
            // Loopback too, but outside the one network the address rules allow.
            hook(format!("http://127.0.0.2:{port}/hook"), &[]),
            // Takes other events only.
            hook(format!("http://127.0.0.1:{port}/other"), &["notice.sent"]),
        ],
        ..NotifySettings::default()
    };
    let mut crawl = crawler::CrawlSettings::default();
    crawl.fetch.safety.allowed_networks = vec!["127.0.0.1/32".parse().unwrap()];

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
    let page = common::stored_page(
        store,
        "https://pirate.test/book/2.html",
        &common::pirate_chapter(2),
    )
    .await;
    let opened = analyser.analyse(page).await.unwrap().opened;
    assert_eq!(opened.len(), 1);
    let case = opened[0];

    let handler = Handler::new(store.clone(), importer, Arc::clone(&analyser))
        .with_crawler(crawl)
        .with_mail(common::profile(), notify);
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let settings = WorkerSettings {
        poll_interval: Duration::from_millis(20),
        backoff: store::Backoff {
            base: Duration::from_millis(50),
            max: Duration::from_millis(200),
        },
        ..WorkerSettings::default()
    };
    let worker = pipeline::serve(store, handler, settings, stop_rx);

    let deliveries_now = async || {
        store
            .jobs(&JobFilter::Kind("DeliverWebhook".into()), Page::all())
            .await
            .unwrap()
    };
    store::testing::wait_for(
        "one delivery done and the refused one dead",
        Duration::from_secs(30),
        async || {
            let deliveries = deliveries_now().await;
            deliveries.len() == 2
                && deliveries
                    .iter()
                    .all(|j| matches!(j.status, JobStatus::Done | JobStatus::Dead))
        },
    )
    .await;
    let deliveries = deliveries_now().await;
    let _ = stop.send(true);
    worker.await.unwrap();

    assert_eq!(
        deliveries.len(),
        2,
        "one delivery per webhook taking case.opened"
    );
    let by_url = |host: &str| {
        deliveries
            .iter()
            .find(|j| j.payload.contains(host))
            .unwrap_or_else(|| panic!("a delivery to {host}: {deliveries:?}"))
    };
    let done = by_url("127.0.0.1");
    assert_eq!(done.status, JobStatus::Done, "{done:?}");
    assert_eq!(done.attempts, 2, "retried after the 503");
    let refused = by_url("127.0.0.2");
    assert_eq!(refused.status, JobStatus::Dead, "{refused:?}");
    assert_eq!(refused.attempts, 1, "an address refused is not tried again");
    let why = refused.last_error.as_deref().unwrap_or_default();
    assert!(why.contains("loopback"), "{why}");

    let inbox = inbox.lock().unwrap();
    assert_eq!(inbox.requests.len(), 2, "the 503, then the delivery");
    for (headers, body, signed) in &inbox.requests {
        assert!(signed, "the signature is the HMAC-SHA256 of the body");
        let parsed: serde_json::Value = serde_json::from_slice(body).unwrap();
        assert_eq!(parsed["event"], Event::CaseOpened.as_str());
        assert_eq!(parsed["data"]["case"], case.0);
        assert_eq!(parsed["data"]["snapshot"], page.0);
        assert_eq!(
            headers["x-copyhound-timestamp"].to_str().unwrap(),
            parsed["timestamp"].to_string(),
            "the signed body carries the timestamp the header states"
        );
        let age = chrono::Utc::now().timestamp() - parsed["timestamp"].as_i64().unwrap();
        assert!((0..300).contains(&age), "{age}");
        assert_eq!(headers["x-copyhound-event"], "case.opened");
        assert_eq!(headers["content-type"], "application/json");
    }
    assert_eq!(
        inbox.requests[0].0["x-copyhound-delivery"], inbox.requests[1].0["x-copyhound-delivery"],
        "a retry is the same delivery"
    );
}

async fn stored_webhooks_get_signed_deliveries(db: &TestDb) {
    let store = &db.store;
    let inbox: Arc<Mutex<Inbox>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new()
        .route("/stored", axum::routing::post(receive))
        .route("/off", axum::routing::post(receive))
        .with_state(Arc::clone(&inbox));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut crawl = crawler::CrawlSettings::default();
    crawl.fetch.safety.allowed_networks = vec!["127.0.0.1/32".parse().unwrap()];

    let add = |url: String, events: Vec<String>| {
        let crawl = crawl.clone();
        async move {
            notification::webhooks::add_webhook(store, &crawl, &url, SECRET, &events, "alice").await
        }
    };
    // Refused when stored: an address outside the allowed network, a short secret.
    let err = add(format!("http://127.0.0.2:{port}/stored"), Vec::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("loopback"), "{err}");
    let err = notification::webhooks::add_webhook(
        store,
        &crawl,
        &format!("http://127.0.0.1:{port}/stored"),
        "short",
        &[],
        "alice",
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("secret"), "{err}");
    add(
        format!("http://127.0.0.1:{port}/stored"),
        vec!["crawl.failed".to_owned()],
    )
    .await
    .unwrap();
    let off = add(format!("http://127.0.0.1:{port}/off"), Vec::new())
        .await
        .unwrap();
    store
        .set_webhook_enabled(off.id, false, "alice")
        .await
        .unwrap();

    jobs::emit(
        store,
        Event::CrawlFailed,
        serde_json::json!({"crawl": 9, "error": "every page timed out"}),
    )
    .await
    .unwrap();
    let importer = Importer::new(ImportSettings::default()).unwrap();
    let analyser = Arc::new(Analyser::new(
        store.clone(),
        Default::default(),
        Default::default(),
    ));
    // No webhook in the settings: the stored one alone.
    let handler = Handler::new(store.clone(), importer, analyser)
        .with_crawler(crawl)
        .with_mail(common::profile(), NotifySettings::default());
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let settings = WorkerSettings {
        poll_interval: Duration::from_millis(20),
        backoff: store::Backoff {
            base: Duration::from_millis(50),
            max: Duration::from_millis(200),
        },
        ..WorkerSettings::default()
    };
    let worker = pipeline::serve(store, handler, settings, stop_rx);
    store::testing::wait_for(
        "the stored webhook's delivery done",
        Duration::from_secs(30),
        async || {
            let jobs = store
                .jobs(&JobFilter::Kind("DeliverWebhook".into()), Page::all())
                .await
                .unwrap();
            jobs.len() == 1 && jobs[0].status == JobStatus::Done
        },
    )
    .await;
    let _ = stop.send(true);
    worker.await.unwrap();

    let inbox = inbox.lock().unwrap();
    assert_eq!(
        inbox.requests.len(),
        2,
        "the 503, then the delivery; none to /off"
    );
    for (headers, body, signed) in &inbox.requests {
        assert!(signed, "signed with the stored secret");
        let parsed: serde_json::Value = serde_json::from_slice(body).unwrap();
        assert_eq!(parsed["event"], "crawl.failed");
        assert_eq!(parsed["data"]["crawl"], 9);
        assert_eq!(headers["x-copyhound-event"], "crawl.failed");
    }
}

store::on_both_backends!(delivered_and_retried, stored_webhooks_get_signed_deliveries);
