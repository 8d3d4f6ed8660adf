//! The JSON API under `/api/v1` through the router, on SQLite and Postgres: bearer tokens
//! and roles, the one error shape, cursor pagination, the review → notice → re-check flow,
//! hostile text kept as data, and the OpenAPI document: valid OpenAPI 3.1, and every
//! documented route answering with a documented status and a body that fits its schema.

mod common;

use std::collections::BTreeMap;

use admin::{AdminSettings, AdminState};
use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use pipeline::{NoticeSettings, RightsHolder};
use serde_json::{Value, json};
use store::testing::TestDb;
use store::{Role, Store, UserId};
use tower::ServiceExt;

use common::{HOSTILE, users, with_case};

struct Api {
    app: Router,
    _dir: tempfile::TempDir,
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {} {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts the status and the error shape; returns the error's code.
    fn error_code(&self, status: StatusCode) -> String {
        assert_eq!(self.status, status, "{}", self.text());
        let body = self.json();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.is_empty(), "{body}");
        body["error"]["code"].as_str().unwrap().to_owned()
    }
}

fn profile() -> NoticeSettings {
    NoticeSettings {
        rights_holder: RightsHolder {
            name: "Fengshen Press 封神出版社".into(),
            address: "1 Example Road, Beijing".into(),
            email: "legal@press.example".into(),
            phone: "+86 10 1234 5678".into(),
            signatory: "Li Lei 李雷".into(),
        },
        ..NoticeSettings::default()
    }
}

impl Api {
    fn new(store: &Store) -> Api {
        let dir = tempfile::tempdir().unwrap();
        let settings = AdminSettings {
            secure_cookies: false,
            upload_dir: dir.path().join("uploads"),
            notices: profile(),
            ..AdminSettings::default()
        };
        Api {
            app: admin::router(AdminState::new(store.clone(), settings)),
            _dir: dir,
        }
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Answer {
        let mut r = Request::builder().method(method).uri(path);
        if let Some(t) = token {
            r = r.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        let body = match body {
            Some(v) => {
                r = r.header(header::CONTENT_TYPE, "application/json");
                Body::from(v.to_string())
            }
            None => Body::empty(),
        };
        let response = self
            .app
            .clone()
            .oneshot(r.body(body).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = axum::body::to_bytes(response.into_body(), 64 << 20)
            .await
            .unwrap()
            .to_vec();
        Answer {
            status,
            headers,
            body,
        }
    }

    async fn get(&self, path: &str, token: &str) -> Answer {
        self.call(Method::GET, path, Some(token), None).await
    }

    async fn post(&self, path: &str, token: &str, body: Value) -> Answer {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }
}

async fn user_id(store: &Store, name: &str) -> UserId {
    use store::Users;
    store.user_by_name(name).await.unwrap().unwrap().id
}

/// A bearer token for each of alice (admin), rita (reviewer) and vic (viewer).
async fn tokens(store: &Store) -> BTreeMap<Role, String> {
    users(store).await;
    let mut out = BTreeMap::new();
    for (name, role) in [
        ("alice", Role::Admin),
        ("rita", Role::Reviewer),
        ("vic", Role::Viewer),
    ] {
        let id = user_id(store, name).await;
        let issued = pipeline::accounts::issue_api_token(store, id, "tests", None, "test")
            .await
            .unwrap();
        out.insert(role, issued.token);
    }
    out
}

async fn import_small(store: &Store, title: &str) {
    let text = format!(
        "第一章 开端\n{}\n第二章 发展\n{}\n",
        format!("{title}的第一章正文，讲述一个平凡的早晨。").repeat(20),
        format!("{title}的第二章正文，讲述一个不平凡的夜晚。").repeat(20)
    );
    import::Importer::new(import::ImportSettings::default())
        .unwrap()
        .import_bytes(
            store,
            &format!("{title}.txt"),
            text.into_bytes(),
            &import::ImportOptions {
                title: Some(title.to_owned()),
                author: None,
            },
            &(),
        )
        .await
        .unwrap();
}

async fn api_for_every_role(db: &TestDb) {
    let store = &db.store;
    let tokens = tokens(store).await;
    let (admin, reviewer, viewer) = (
        tokens[&Role::Admin].as_str(),
        tokens[&Role::Reviewer].as_str(),
        tokens[&Role::Viewer].as_str(),
    );
    let case = with_case(store).await;
    let api = Api::new(store);

    // No token, a made-up token, a cookie instead of a token: 401 in the one error shape.
    let a = api.call(Method::GET, "/api/v1/cases", None, None).await;
    assert_eq!(a.error_code(StatusCode::UNAUTHORIZED), "unauthenticated");
    assert!(
        a.headers[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .starts_with("Bearer"),
    );
    let a = api
        .get(
            "/api/v1/cases",
            "chk_0000000000000000000000000000000000000000",
        )
        .await;
    assert_eq!(a.error_code(StatusCode::UNAUTHORIZED), "unauthenticated");
    let a = api
        .call(
            Method::GET,
            "/api/v1/cases",
            Some(&"x".repeat(10_000)),
            None,
        )
        .await;
    assert_eq!(a.error_code(StatusCode::UNAUTHORIZED), "unauthenticated");

    // The OpenAPI document needs no token.
    let a = api
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.json()["openapi"], "3.1.0");

    // A viewer reads; the hostile title comes back as data, in JSON, never as markup.
    let a = api.get("/api/v1/cases?status=new", viewer).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(
        a.headers[header::CONTENT_TYPE].to_str().unwrap(),
        "application/json"
    );
    let body = a.json();
    let items = body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], case.0);
    assert_eq!(items[0]["status"], "new");
    assert_eq!(items[0]["work_title"], format!("封神演义{HOSTILE}"));
    assert!(body.get("next_cursor").is_none(), "one page only: {body}");
    assert!(a.headers.contains_key(header::CONTENT_SECURITY_POLICY));

    let a = api.get(&format!("/api/v1/cases/{case}"), viewer).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    let detail = a.json();
    let chapter = &detail["chapters"][0];
    assert_eq!(chapter["index"], 1);
    assert!(chapter["coverage"].as_f64().unwrap() > 0.9, "{chapter}");
    let passage = &chapter["passages"][0];
    assert!(passage["chars"].as_u64().unwrap() > 100, "{chapter}");
    assert!(passage["page"]["end"].as_u64() > passage["page"]["start"].as_u64());
    let sha = detail["snapshots"][0]["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);
    assert!(detail["recheck"].is_null());

    // A viewer may not review, register, watch or crawl.
    for (path, body) in [
        (
            format!("/api/v1/cases/{case}/status"),
            json!({"status": "confirmed"}),
        ),
        (
            "/api/v1/works".into(),
            json!({"title": "t", "text": "第一章 x"}),
        ),
        (
            "/api/v1/sites".into(),
            json!({"start_url": "http://other.example/"}),
        ),
        (
            format!("/api/v1/cases/{case}/notices"),
            json!({"template": "cn"}),
        ),
    ] {
        let a = api.post(&path, viewer, body).await;
        assert_eq!(a.error_code(StatusCode::FORBIDDEN), "forbidden", "{path}");
    }
    let a = api.get(&format!("/api/v1/cases/{case}"), viewer).await;
    assert_eq!(a.json()["case"]["status"], "new", "nothing changed");

    // Input refused with a message that says what is allowed.
    let a = api.get("/api/v1/cases?status=bogus", viewer).await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    let a = api.get("/api/v1/cases?limit=0", viewer).await;
    assert!(
        a.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 to 500")
    );
    let a = api.get("/api/v1/cases?cursor=garbage", viewer).await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    let a = api.get("/api/v1/cases/abc", viewer).await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    let a = api.get("/api/v1/cases/999999", viewer).await;
    assert_eq!(a.error_code(StatusCode::NOT_FOUND), "not_found");
    let a = api.get("/api/v1/no/such/route", viewer).await;
    assert_eq!(a.error_code(StatusCode::NOT_FOUND), "not_found");
    let a = api
        .call(
            Method::POST,
            &format!("/api/v1/cases/{case}/status"),
            Some(reviewer),
            None,
        )
        .await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    let a = api
        .post(
            &format!("/api/v1/cases/{case}/status"),
            reviewer,
            json!({"status": "confirmed", "extra": 1}),
        )
        .await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    let a = api
        .post(
            &format!("/api/v1/cases/{case}/status"),
            reviewer,
            json!({"status": "removed"}),
        )
        .await;
    assert_eq!(a.error_code(StatusCode::CONFLICT), "conflict");

    // Drafting a notice before the case is confirmed is refused.
    let a = api
        .post(
            &format!("/api/v1/cases/{case}/notices"),
            reviewer,
            json!({"template": "cn"}),
        )
        .await;
    assert!(a.status.is_client_error(), "{}", a.text());

    // A reviewer confirms, drafts a notice and marks it sent: re-checks begin.
    let a = api
        .post(
            &format!("/api/v1/cases/{case}/status"),
            reviewer,
            json!({"status": "confirmed", "note": "whole chapter, ads around it"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(a.json()["status"], "confirmed");
    assert_eq!(a.json()["review_note"], "whole chapter, ads around it");
    let a = api
        .post(
            &format!("/api/v1/cases/{case}/notices"),
            reviewer,
            json!({"template": "dmca", "to": "abuse@pirate.example"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.text());
    let notice = a.json();
    assert_eq!(notice["status"], "draft");
    assert_eq!(notice["recipient"], "abuse@pirate.example");
    assert!(
        notice["body_text"]
            .as_str()
            .unwrap()
            .contains("pirate.example/book/1.html")
    );
    assert!(
        !notice["body_html"].as_str().unwrap().contains(HOSTILE),
        "escaped"
    );
    let id = notice["id"].as_i64().unwrap();
    let a = api
        .get(&format!("/api/v1/notices?case={case}"), viewer)
        .await;
    assert_eq!(a.json().as_array().unwrap().len(), 1);
    let a = api
        .post(&format!("/api/v1/notices/{id}/sent"), viewer, json!({}))
        .await;
    assert_eq!(a.error_code(StatusCode::FORBIDDEN), "forbidden");
    let a = api
        .call(
            Method::POST,
            &format!("/api/v1/notices/{id}/sent"),
            Some(reviewer),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(a.json()["status"], "sent");
    let a = api
        .call(
            Method::POST,
            &format!("/api/v1/notices/{id}/sent"),
            Some(reviewer),
            None,
        )
        .await;
    assert_eq!(a.error_code(StatusCode::CONFLICT), "conflict");
    let a = api.get(&format!("/api/v1/cases/{case}"), viewer).await;
    let detail = a.json();
    assert_eq!(detail["case"]["status"], "notice_sent");
    assert_eq!(detail["recheck"]["days_since_notice"], 0);
    assert!(detail["recheck"]["next_at"].is_string(), "{detail}");

    // Every change is in the audit log under the token's user.
    let history = {
        use store::CaseReads;
        store.case_history(case).await.unwrap()
    };
    assert!(
        history
            .iter()
            .any(|h| h.actor.starts_with("rita (api-token:chk_")),
        "{history:?}"
    );

    // Works: registered by a job; listed a page at a time.
    let a = api
        .post(
            "/api/v1/works",
            reviewer,
            json!({"title": "新书", "text": "第一章 开端\n正文。"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.text());
    let job = a.json()["job_id"].as_i64().unwrap();
    let a = api.get(&format!("/api/v1/jobs/{job}"), viewer).await;
    assert_eq!(a.json()["kind"], "ImportWork");
    assert_eq!(a.json()["status"], "queued");
    let a = api
        .post(
            "/api/v1/works",
            reviewer,
            json!({"file": {"name": "book.exe", "content_base64": "AAAA"}}),
        )
        .await;
    assert!(
        a.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains(".txt")
    );
    let a = api
        .post(
            "/api/v1/works",
            reviewer,
            json!({"file": {"name": "book.txt", "content_base64": "not base64!"}}),
        )
        .await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    let a = api
        .call(Method::POST, "/api/v1/works", Some(reviewer), None)
        .await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");

    for title in ["甲书", "乙书", "丙书"] {
        import_small(store, title).await;
    }
    let mut seen = Vec::new();
    let mut path = "/api/v1/works?limit=2".to_owned();
    for _ in 0..5 {
        let page = api.get(&path, viewer).await.json();
        for w in page["items"].as_array().unwrap() {
            seen.push(w["title"].as_str().unwrap().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(c) => path = format!("/api/v1/works?limit=2&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 4, "every work once: {seen:?}");
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 4, "no work twice: {seen:?}");
    let a = api.get("/api/v1/works?q=%E4%B9%99", viewer).await;
    assert_eq!(a.json()["items"][0]["title"], "乙书");
    let work = a.json()["items"][0]["id"].as_i64().unwrap();
    let a = api.get(&format!("/api/v1/works/{work}"), viewer).await;
    assert_eq!(a.json()["chapters"].as_array().unwrap().len(), 2);

    // Sites: watched, paused, crawled on demand.
    let a = api
        .post(
            "/api/v1/sites",
            reviewer,
            json!({"start_url": "http://pirate.example/book/", "schedule": "0 3 * * *", "max_pages": 50}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.text());
    let site = a.json();
    assert_eq!(site["host"], "pirate.example");
    assert_eq!(site["max_pages"], 50);
    assert!(site["next_crawl_at"].is_string());
    let id = site["id"].as_i64().unwrap();
    let a = api
        .post(
            "/api/v1/sites",
            reviewer,
            json!({"start_url": "http://pirate.example/other/"}),
        )
        .await;
    assert_eq!(a.error_code(StatusCode::CONFLICT), "conflict");
    let a = api
        .post(
            "/api/v1/sites",
            reviewer,
            json!({"start_url": "ftp://x.example/", "max_pages": 5}),
        )
        .await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    // An address the crawler would refuse is refused here, in any spelling, with the
    // setting that allows it named.
    for url in [
        "http://127.0.0.1:8080/",
        "http://2130706433/",
        "http://[::1]/",
    ] {
        let a = api
            .post("/api/v1/sites", reviewer, json!({"start_url": url}))
            .await;
        assert_eq!(
            a.error_code(StatusCode::BAD_REQUEST),
            "bad_request",
            "{url}"
        );
        let message = a.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("allow_private"), "{url}: {message}");
    }
    let a = api
        .post(
            "/api/v1/sites",
            reviewer,
            json!({"start_url": "http://y.example/", "concurrency": 1000}),
        )
        .await;
    assert!(
        a.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("up to 64")
    );
    let a = api
        .call(
            Method::PATCH,
            &format!("/api/v1/sites/{id}"),
            Some(reviewer),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(a.json()["enabled"], false);
    let a = api
        .call(
            Method::POST,
            &format!("/api/v1/sites/{id}/crawls"),
            Some(reviewer),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.text());
    let a = api.get(&format!("/api/v1/sites/{id}/crawls"), viewer).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    let a = api.get("/api/v1/crawls/987654", viewer).await;
    assert_eq!(a.error_code(StatusCode::NOT_FOUND), "not_found");

    // Reports and figures.
    let a = api.get("/api/v1/reports?format=jsonl", viewer).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    let lines: Vec<Value> = a
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty());
    let a = api.get("/api/v1/reports", viewer).await;
    assert!(
        a.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let a = api.get("/api/v1/reports?format=pdf", viewer).await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");
    let a = api.get("/api/v1/stats?top=5", viewer).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert!(a.json()["funnel"].is_object(), "{}", a.text());
    let a = api.get("/api/v1/stats?since=1999-01-01", viewer).await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");

    // A revoked token stops working at once.
    let _ = admin;
    let alice = user_id(store, "alice").await;
    let issued = pipeline::accounts::issue_api_token(store, alice, "short-lived", None, "test")
        .await
        .unwrap();
    assert_eq!(
        api.get("/api/v1/works", &issued.token).await.status,
        StatusCode::OK
    );
    {
        use store::ApiTokens;
        store
            .revoke_api_token(issued.record.id, "test")
            .await
            .unwrap();
    }
    let a = api.get("/api/v1/works", &issued.token).await;
    assert_eq!(a.error_code(StatusCode::UNAUTHORIZED), "unauthenticated");
}

#[tokio::test]
async fn api_for_every_role_on_sqlite() {
    let db = store::testing::sqlite("admin_api").await.unwrap();
    api_for_every_role(&db).await;
}

#[tokio::test]
async fn api_for_every_role_on_postgres() {
    let Some(db) = store::testing::postgres("admin_api").await else {
        return;
    };
    api_for_every_role(&db).await;
}

/// The schema of a documented response, standing alone: a `$ref` into the document's own
/// components, which travel with it.
fn response_schema(doc: &Value, path: &str, method: &str, status: u16) -> Option<Value> {
    let response = &doc["paths"][path][method]["responses"][status.to_string()];
    assert!(
        !response.is_null(),
        "{method} {path} answered {status}, which the document does not list"
    );
    let content = response.get("content")?;
    let schema = content.get("application/json")?.get("schema")?.clone();
    Some(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "allOf": [schema],
        "components": doc["components"],
    }))
}

fn check_body(doc: &Value, path: &str, method: &str, answer: &Answer) {
    let Some(schema) = response_schema(doc, path, method, answer.status.as_u16()) else {
        return;
    };
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("{method} {path}: the schema does not compile: {e}"));
    let body = answer.json();
    let errors: Vec<String> = validator
        .iter_errors(&body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{method} {path} {}: the body does not fit its schema: {errors:?}\n{body}",
        answer.status
    );
}

/// Each documented operation called with a token of the admin, with the ids of rows the
/// test made, and a body where it takes one.
async fn documented_routes_answer_as_documented(db: &TestDb) {
    let store = &db.store;
    let tokens = tokens(store).await;
    let admin = tokens[&Role::Admin].as_str();
    let viewer = tokens[&Role::Viewer].as_str();
    let case = with_case(store).await;
    let api = Api::new(store);
    let doc: Value = serde_json::from_str(&admin::openapi_json()).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");

    // The rows each path's ids name.
    let site = api
        .post(
            "/api/v1/sites",
            admin,
            json!({"start_url": "http://pirate.example/"}),
        )
        .await
        .json()["id"]
        .as_i64()
        .unwrap();
    let job = api
        .call(
            Method::POST,
            &format!("/api/v1/sites/{site}/crawls"),
            Some(admin),
            None,
        )
        .await
        .json()["job_id"]
        .as_i64()
        .unwrap();
    let crawl = {
        use store::Crawls;
        store
            .create_crawl(&store::NewCrawl {
                seeds: vec!["http://pirate.example/".into()],
                settings: "{}".into(),
                max_pages: Some(10),
            })
            .await
            .unwrap()
            .0
    };
    api.post(
        &format!("/api/v1/cases/{case}/status"),
        admin,
        json!({"status": "confirmed"}),
    )
    .await;
    let notice = api
        .post(
            &format!("/api/v1/cases/{case}/notices"),
            admin,
            json!({"template": "cn"}),
        )
        .await
        .json()["id"]
        .as_i64()
        .unwrap();
    let work = api.get("/api/v1/works", admin).await.json()["items"][0]["id"]
        .as_i64()
        .unwrap();
    // A candidate with a URL found, which approving watches and ignoring then shuts out.
    {
        use store::Discovery;
        store
            .add_found_urls(&[store::FoundUrl {
                domain: "copies.example".into(),
                url: "http://copies.example/book/1".into(),
                found_by: "search:searxng".into(),
                work: None,
            }])
            .await
            .unwrap();
        store
            .add_candidate("copies.example", "search:searxng")
            .await
            .unwrap();
    }

    let bodies: BTreeMap<(&str, &str), Value> = BTreeMap::from([
        (
            ("post", "/api/v1/works"),
            json!({"title": "另一本书", "text": "第一章 开端\n正文。"}),
        ),
        (
            ("post", "/api/v1/sites"),
            json!({"start_url": "http://mirror.example/"}),
        ),
        (
            ("patch", "/api/v1/sites/{id}"),
            json!({"enabled": true, "name": "盗版站", "max_pages": 20}),
        ),
        (
            ("patch", "/api/v1/works/{id}"),
            json!({"title": "封神演义", "author": ""}),
        ),
        (
            ("patch", "/api/v1/notices/{id}"),
            json!({"recipient": "abuse@hoster.example", "body_text": "改过的通知"}),
        ),
        (
            ("post", "/api/v1/cases/{id}/status"),
            json!({"status": "removed"}),
        ),
        (
            ("post", "/api/v1/cases/{id}/notices"),
            json!({"template": "dmca"}),
        ),
        (
            ("post", "/api/v1/candidates/{domain}/approve"),
            json!({"schedule": "0 3 * * *"}),
        ),
    ]);
    let mut operations: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(|method| (path.clone(), method.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    // Setting the status goes last: sending the notice needs the case confirmed.
    operations.sort_by_key(|(path, _)| path.ends_with("/status"));
    let mut checked = 0;
    for (path, method) in &operations {
        {
            let id = match path.as_str() {
                p if p.starts_with("/api/v1/works/") => work,
                p if p.starts_with("/api/v1/sites/") => site,
                p if p.starts_with("/api/v1/crawls/") => crawl,
                p if p.starts_with("/api/v1/cases/") => case.0,
                p if p.starts_with("/api/v1/notices/") => notice,
                p if p.starts_with("/api/v1/jobs/") => job,
                _ => 0,
            };
            let uri = path
                .replace("{id}", &id.to_string())
                .replace("{domain}", "copies.example");
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let body = bodies.get(&(method.as_str(), path.as_str())).cloned();
            let answer = api.call(m.clone(), &uri, Some(admin), body.clone()).await;
            assert!(
                answer.status.is_success(),
                "{method} {uri}: {} {}",
                answer.status,
                answer.text()
            );
            check_body(&doc, path, method, &answer);
            // The refusals are documented too: no token, and (for a write) a viewer's.
            let answer = api.call(m.clone(), &uri, None, body.clone()).await;
            check_body(&doc, path, method, &answer);
            if m != Method::GET {
                let answer = api.call(m, &uri, Some(viewer), body).await;
                assert_eq!(answer.status, StatusCode::FORBIDDEN, "{method} {uri}");
                check_body(&doc, path, method, &answer);
            }
            checked += 1;
        }
    }
    assert!(checked >= 18, "every operation called: {checked}");
    // What the edits changed, and a sent notice refused.
    let w = api
        .get(&format!("/api/v1/works/{work}"), admin)
        .await
        .json();
    assert_eq!(
        (w["title"].as_str(), w["author"].as_str()),
        (Some("封神演义"), None)
    );
    let s = api
        .get(&format!("/api/v1/sites/{site}"), admin)
        .await
        .json();
    assert_eq!(s["name"], "盗版站", "{s}");
    let n = api
        .get(&format!("/api/v1/notices/{notice}"), admin)
        .await
        .json();
    assert_eq!(
        (n["recipient"].as_str(), n["status"].as_str()),
        (Some("abuse@hoster.example"), Some("sent"))
    );
    assert_eq!(n["body_text"], "改过的通知");
    let refused = api
        .call(
            Method::PATCH,
            &format!("/api/v1/notices/{notice}"),
            Some(admin),
            Some(json!({"body_text": "too late"})),
        )
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], "conflict");
    let refused = api
        .call(
            Method::PATCH,
            &format!("/api/v1/works/{work}"),
            Some(admin),
            Some(json!({"title": " "})),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::BAD_REQUEST,
        "{}",
        refused.text()
    );
    assert!(refused.text().contains("title"), "{}", refused.text());
}

#[tokio::test]
async fn documented_routes_answer_as_documented_on_sqlite() {
    let db = store::testing::sqlite("admin_openapi").await.unwrap();
    documented_routes_answer_as_documented(&db).await;
}

#[tokio::test]
async fn documented_routes_answer_as_documented_on_postgres() {
    let Some(db) = store::testing::postgres("admin_openapi").await else {
        return;
    };
    documented_routes_answer_as_documented(&db).await;
}

/// The document checked by `openapi-spec-validator` (the OpenAPI Initiative's schemas):
/// installed by `.ci/run`; elsewhere the test says loudly that it was skipped.
#[test]
fn the_openapi_document_is_valid_openapi_3_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, admin::openapi_json()).unwrap();
    let probe = std::process::Command::new("python3")
        .args(["-c", "import openapi_spec_validator"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var("CI").is_err(),
            "openapi-spec-validator is missing under CI: .ci/run installs it"
        );
        eprintln!(
            "SKIPPED: python3 -m pip install openapi-spec-validator to validate the document"
        );
        return;
    }
    let out = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator", "--schema", "3.1"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
