//! The webhooks page (issue #29) over real HTTP on 127.0.0.1, on both backends: an admin
//! adds a webhook (a loopback address outside the crawler's allowed network, a short secret
//! and a forged form refused), never sees its secret again, sends it a test event that the
//! receiver finds signed, turns it off and deletes it; a reviewer may not see the page.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use store::testing::TestDb;
use store::{AuditLog, Webhooks};

use common::ui::csrf_of;
use common::users;

const PASSWORD: &str = "correct horse battery";
const SECRET: &str = "whsec-page-0123456789abcdef";

type Inbox = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

async fn receive(State(inbox): State<Inbox>, headers: HeaderMap, body: Bytes) -> StatusCode {
    inbox.lock().unwrap().push((headers, body));
    StatusCode::NO_CONTENT
}

/// A browser without a browser: cookies kept, redirects not followed.
struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    fn new(base: String) -> Client {
        Client {
            http: reqwest::Client::builder()
                .cookie_store(true)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base,
        }
    }

    async fn get(&self, path: &str) -> (StatusCode, String) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }

    async fn post(&self, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(form)
                    .finish(),
            )
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }

    async fn login(&self, name: &str) {
        let (_, page) = self.get("/login").await;
        let csrf = csrf_of(&page);
        let (status, body) = self
            .post(
                "/login",
                &[("username", name), ("password", PASSWORD), ("csrf", &csrf)],
            )
            .await;
        assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    }
}

async fn admins_manage_webhooks_over_http(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let inbox: Inbox = Arc::default();
    let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = receiver.local_addr().unwrap().port();
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(Arc::clone(&inbox));
    tokio::spawn(async move { axum::serve(receiver, app).await.unwrap() });

    let mut settings = admin::AdminSettings {
        secure_cookies: false,
        ..admin::AdminSettings::default()
    };
    settings.crawler.fetch.safety.allowed_networks = vec!["127.0.0.1/32".parse().unwrap()];
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(admin::serve(
        listener,
        admin::AdminState::new(store.clone(), settings),
        async move {
            let _ = stopped.await;
        },
    ));

    let reviewer = Client::new(format!("http://{addr}"));
    reviewer.login("rita").await;
    assert_eq!(reviewer.get("/webhooks").await.0, StatusCode::FORBIDDEN);

    let admin = Client::new(format!("http://{addr}"));
    admin.login("alice").await;
    let (status, page) = admin.get("/webhooks").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("id=\"no-webhooks\""), "{page}");
    let csrf = csrf_of(&page);
    let good = format!("http://127.0.0.1:{port}/hook");
    let add = async |url: String, secret: &str, csrf: String| {
        admin
            .post(
                "/webhooks",
                &[
                    ("csrf", csrf.as_str()),
                    ("url", url.as_str()),
                    ("secret", secret),
                    ("event.case.opened", "on"),
                    ("event.notice.sent", "on"),
                ],
            )
            .await
    };

    // Loopback, but outside the one network the crawler may reach: refused beside the URL.
    let (status, body) = add(
        format!("http://127.0.0.2:{port}/hook"),
        SECRET,
        csrf.clone(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("id=\"url-error\""), "{body}");
    assert!(body.contains("loopback"), "{body}");
    assert!(body.contains("127.0.0.2"), "the URL typed is kept: {body}");
    assert!(!body.contains(SECRET), "a secret is never sent back");
    let (status, body) = add(good.clone(), "short", csrf.clone()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.contains("id=\"secret-error\""), "{body}");
    let (status, _) = add(good.clone(), SECRET, String::new()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "no CSRF token");
    assert!(store.webhooks().await.unwrap().is_empty());

    let (status, body) = add(good.clone(), SECRET, csrf.clone()).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let stored = store.webhooks().await.unwrap();
    assert_eq!(stored.len(), 1);
    let hook = &stored[0];
    assert_eq!(hook.url, good);
    assert_eq!(hook.events, vec!["case.opened", "notice.sent"]);
    assert_eq!(hook.secret.expose(), SECRET);
    let (_, page) = admin.get("/webhooks").await;
    assert!(page.contains(&good), "{page}");
    assert!(page.contains("Case opened, Notice sent"), "{page}");
    assert!(
        page.contains("Notice sent <span class=\"mono\">notice.sent</span>"),
        "{page}"
    );
    assert!(!page.contains(SECRET), "the secret is never shown: {page}");
    let (status, _) = add(good.clone(), SECRET, csrf.clone()).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "one webhook per URL"
    );

    // Send test: delivered, signed with the stored secret.
    let (status, page) = admin
        .post(&format!("/webhooks/{}/test", hook.id), &[("csrf", &csrf)])
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("id=\"webhook-tested\""), "{page}");
    assert!(page.contains("delivered (HTTP 204)"), "{page}");
    {
        let inbox = inbox.lock().unwrap();
        assert_eq!(inbox.len(), 1);
        let (headers, body) = &inbox[0];
        assert_eq!(
            headers["x-copyhound-signature"].to_str().unwrap(),
            format!(
                "sha256={}",
                notification::webhooks::sign(SECRET.as_bytes(), body)
            )
        );
        let parsed: serde_json::Value = serde_json::from_slice(body).unwrap();
        assert_eq!(parsed["event"], "webhook.test");
        assert_eq!(headers["x-copyhound-event"], "webhook.test");
    }

    let (status, _) = admin
        .post(
            &format!("/webhooks/{}/enabled", hook.id),
            &[("csrf", &csrf), ("enabled", "false")],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(!store.webhooks().await.unwrap()[0].enabled);
    let (status, _) = reviewer
        .post(&format!("/webhooks/{}/delete", hook.id), &[("csrf", &csrf)])
        .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a reviewer's session, any token"
    );
    let (status, _) = admin
        .post(&format!("/webhooks/{}/delete", hook.id), &[("csrf", &csrf)])
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(store.webhooks().await.unwrap().is_empty());
    let audit = store.audit_of("webhook", hook.id.0).await.unwrap();
    assert_eq!(audit.len(), 3, "{audit:?}");
    assert!(audit.iter().all(|a| a.actor == "alice"));

    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

store::on_both_backends!(admins_manage_webhooks_over_http);
