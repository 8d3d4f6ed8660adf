//! The JSON API under `/api/v1` through the router, on SQLite and Postgres: bearer tokens
//! and roles, the one error shape, cursor pagination, the review → notice → re-check flow,
//! hostile text kept as data, and the OpenAPI document: valid OpenAPI 3.1, and every
//! documented route answering with a documented status and a body that fits its schema.

use crate::common;

use std::collections::BTreeMap;

use admin::{AdminSettings, AdminState};
use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use store::testing::TestDb;
use store::{Role, Store, UserId};
use takedown::{NoticeSettings, RightsHolder};
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
            // Small enough that a test's body can be over it without tens of megabytes.
            max_upload_bytes: 1 << 20,
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
        self.send(r.body(body).unwrap()).await
    }

    async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.app.clone().oneshot(request).await.unwrap();
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
        let issued = accounts::issue_api_token(store, id, "tests", None, "test")
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
    assert_eq!(
        a.error_code(StatusCode::UNSUPPORTED_MEDIA_TYPE),
        "unsupported_media_type"
    );
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

    // Drafting a notice before the case is confirmed is refused as the document says.
    let a = api
        .post(
            &format!("/api/v1/cases/{case}/notices"),
            reviewer,
            json!({"template": "cn"}),
        )
        .await;
    assert_eq!(a.error_code(StatusCode::CONFLICT), "conflict");
    let doc: Value = serde_json::from_str(&admin::openapi_json()).unwrap();
    check_body(&doc, "/api/v1/cases/{id}/notices", "post", &a);

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
    assert_eq!(
        a.error_code(StatusCode::UNSUPPORTED_MEDIA_TYPE),
        "unsupported_media_type"
    );

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
    // The API's typed figures are those `copyhound stats --json` prints, field for field.
    let window = analytics::Window::new(None, chrono::Utc::now()).unwrap();
    let mut printed =
        serde_json::to_value(analytics::stats(store, &window, 5).await.unwrap()).unwrap();
    let mut answered = a.json();
    assert!(answered["window"]["now"].is_string(), "{answered}");
    for figures in [&mut printed, &mut answered] {
        figures["window"]["now"] = Value::Null;
    }
    assert_eq!(answered, printed);
    assert!(
        answered["top_sites"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
    );
    let a = api.get("/api/v1/stats?since=1999-01-01", viewer).await;
    assert_eq!(a.error_code(StatusCode::BAD_REQUEST), "bad_request");

    // A revoked token stops working at once.
    let _ = admin;
    let alice = user_id(store, "alice").await;
    let issued = accounts::issue_api_token(store, alice, "short-lived", None, "test")
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

/// The rows the test made, whose ids the document's paths name.
struct Rows {
    work: i64,
    site: i64,
    crawl: i64,
    case: i64,
    notice: i64,
    job: i64,
}

impl Rows {
    /// Makes a watched site with a crawl job, a crawl, a confirmed case (`with_case`) with a
    /// drafted notice, and a discovery candidate (`copies.example`) with a URL found.
    async fn new(store: &Store, api: &Api, admin: &str) -> Rows {
        let case = with_case(store).await;
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
        Rows {
            work,
            site,
            crawl,
            case: case.0,
            notice,
            job,
        }
    }

    /// The id of the row a documented path names.
    fn id(&self, path: &str) -> i64 {
        match path {
            p if p.starts_with("/api/v1/works/") => self.work,
            p if p.starts_with("/api/v1/sites/") => self.site,
            p if p.starts_with("/api/v1/crawls/") => self.crawl,
            p if p.starts_with("/api/v1/cases/") => self.case,
            p if p.starts_with("/api/v1/notices/") => self.notice,
            p if p.starts_with("/api/v1/jobs/") => self.job,
            _ => 0,
        }
    }

    /// A documented path with the ids of these rows.
    fn uri(&self, path: &str) -> String {
        path.replace("{id}", &self.id(path).to_string())
            .replace("{domain}", "copies.example")
    }
}

/// A body each operation that takes one accepts.
fn bodies() -> BTreeMap<(&'static str, &'static str), Value> {
    BTreeMap::from([
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
    ])
}

/// The HTTP methods an OpenAPI path item may hold operations under.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Every operation of the document as (path, lower-case method).
fn operations(doc: &Value) -> Vec<(String, String)> {
    doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .filter(|k| METHODS.contains(&k.as_str()))
                .map(|method| (path.clone(), method.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Each documented operation called with a token of the admin, with the ids of rows the
/// test made, and a body where it takes one.
async fn documented_routes_answer_as_documented(db: &TestDb) {
    let store = &db.store;
    let tokens = tokens(store).await;
    let admin = tokens[&Role::Admin].as_str();
    let viewer = tokens[&Role::Viewer].as_str();
    let api = Api::new(store);
    let doc: Value = serde_json::from_str(&admin::openapi_json()).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let rows = Rows::new(store, &api, admin).await;
    let (work, site, notice) = (rows.work, rows.site, rows.notice);
    let bodies = bodies();
    let mut operations = operations(&doc);
    // Setting the status goes last: sending the notice needs the case confirmed.
    operations.sort_by_key(|(path, _)| path.ends_with("/status"));
    let mut checked = 0;
    for (path, method) in &operations {
        {
            let uri = rows.uri(path);
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

/// Asserts the one error shape, `{"error": {"code", "message"}}` as JSON and nothing else;
/// returns the code.
fn shape(answer: &Answer, what: &str) -> String {
    let context = || format!("{what}: {} {}", answer.status, answer.text());
    assert_eq!(
        answer
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
        Some("application/json"),
        "{}",
        context()
    );
    let body = answer.json();
    assert_eq!(body.as_object().map(|o| o.len()), Some(1), "{}", context());
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{}", context());
    let code = body["error"]["code"].as_str().unwrap_or_default();
    assert!(!code.is_empty(), "{}", context());
    code.to_owned()
}

/// Asserts that `answer` is a refusal the document lists for the operation, in the one
/// error shape that the document says; returns the code.
fn documented_refusal(
    doc: &Value,
    path: &str,
    method: &str,
    answer: &Answer,
    what: &str,
) -> String {
    assert!(
        answer.status.is_client_error(),
        "{what}: {method} {path} answered {} {}",
        answer.status,
        answer.text()
    );
    check_body(doc, path, method, answer);
    shape(answer, what)
}

/// The schema a parameter or property says, through a `$ref` and past a `null` alternative.
fn effective_schema<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        return effective_schema(doc, &doc["components"]["schemas"][name]);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alternatives) = schema[key].as_array()
            && let Some(one) = alternatives.iter().find(|a| a["type"] != "null")
        {
            return effective_schema(doc, one);
        }
    }
    schema
}

/// A query value that a parameter of `schema` cannot take, if its schema says enough.
fn wrong_value(doc: &Value, schema: &Value) -> Option<&'static str> {
    let schema = effective_schema(doc, schema);
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if schema.get("enum").is_some() {
        Some("bogus")
    } else if types.contains(&"integer") || types.contains(&"number") {
        Some("x")
    } else if types.contains(&"boolean") {
        Some("maybe")
    } else if schema["format"] == "date" {
        Some("2026-13-45")
    } else {
        None
    }
}

/// Every documented operation called the ways a client gets it wrong: with a method its
/// path does not take, an unknown id, an id that is no number, a query parameter of the
/// wrong type, and a body that is not sent as JSON, does not parse, has another shape or is
/// over the limit. Each answer's status must be listed for the operation and its body be
/// the one error shape; so must the answers of unknown routes and refused cross-site calls
/// under `/api/`, while a page keeps its HTML error page.
async fn every_refusal_is_documented(db: &TestDb) {
    let store = &db.store;
    let tokens = tokens(store).await;
    let admin = tokens[&Role::Admin].as_str();
    let api = Api::new(store);
    let doc: Value = serde_json::from_str(&admin::openapi_json()).unwrap();
    let rows = Rows::new(store, &api, admin).await;
    let bodies = bodies();
    let mut operations = 0;
    let mut refusals = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let methods: Vec<&str> = METHODS
            .into_iter()
            .filter(|m| item.get(*m).is_some())
            .collect();
        let uri = rows.uri(path);

        // A method the path does not take: 405, `Allow` naming those it does.
        let wrong = ["delete", "put", "patch", "post", "get"]
            .into_iter()
            .find(|m| !methods.contains(m))
            .unwrap();
        let m = Method::from_bytes(wrong.to_uppercase().as_bytes()).unwrap();
        let answer = api.call(m, &uri, Some(admin), None).await;
        let what = format!("{wrong} {uri}");
        assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED, "{what}");
        let allow = answer.headers[header::ALLOW]
            .to_str()
            .unwrap()
            .to_lowercase();
        for method in &methods {
            assert!(
                allow.split(',').any(|a| a.trim() == *method),
                "{what}: Allow {allow:?} lacks {method}"
            );
            let code = documented_refusal(&doc, path, method, &answer, &what);
            assert_eq!(code, "method_not_allowed", "{what}");
        }
        refusals += 1;

        for method in methods {
            operations += 1;
            let operation = &item[method];
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let body = bodies.get(&(method, path.as_str())).cloned();
            let parameters = operation["parameters"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let in_path = |name: &str| {
                parameters
                    .iter()
                    .any(|p| p["in"] == "path" && p["name"] == name)
            };

            // An unknown id: 404 wherever the operation looks a row up by it.
            if in_path("id") || in_path("domain") {
                let unknown = path
                    .replace("{id}", "987654321")
                    .replace("{domain}", "unknown.example");
                let what = format!("{method} {unknown} (unknown id)");
                let answer = api
                    .call(m.clone(), &unknown, Some(admin), body.clone())
                    .await;
                let documents_404 = !operation["responses"]["404"].is_null();
                assert!(
                    documents_404 || !in_path("id"),
                    "{method} {path} looks a row up by id and does not list 404"
                );
                if documents_404 {
                    assert_eq!(
                        answer.status,
                        StatusCode::NOT_FOUND,
                        "{what}: {}",
                        answer.text()
                    );
                    let code = documented_refusal(&doc, path, method, &answer, &what);
                    assert_eq!(code, "not_found", "{what}");
                    refusals += 1;
                } else {
                    check_body(&doc, path, method, &answer);
                }
            }

            // An id that is no number, a domain that is no host name.
            if in_path("id") || in_path("domain") {
                let bad = path
                    .replace("{id}", "abc")
                    .replace("{domain}", "no%20host%21");
                let what = format!("{method} {bad} (bad id)");
                let answer = api.call(m.clone(), &bad, Some(admin), body.clone()).await;
                documented_refusal(&doc, path, method, &answer, &what);
                if in_path("id") {
                    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{what}");
                }
                refusals += 1;
            }

            // A query parameter of the wrong type.
            for parameter in parameters.iter().filter(|p| p["in"] == "query") {
                let Some(value) = wrong_value(&doc, &parameter["schema"]) else {
                    continue;
                };
                let name = parameter["name"].as_str().unwrap();
                let with_query = format!("{uri}?{name}={value}");
                let what = format!("{method} {with_query}");
                let answer = api
                    .call(m.clone(), &with_query, Some(admin), body.clone())
                    .await;
                assert_eq!(
                    answer.status,
                    StatusCode::BAD_REQUEST,
                    "{what}: {}",
                    answer.text()
                );
                documented_refusal(&doc, path, method, &answer, &what);
                refusals += 1;
            }

            // Bodies the operation cannot take.
            if operation.get("requestBody").is_none() {
                continue;
            }
            let good = body.clone().unwrap_or(json!({})).to_string();
            let oversize = json!({"text": "字".repeat(2 << 20)}).to_string();
            for (content_type, bytes, status, why) in [
                (
                    None,
                    good.clone(),
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "no content type",
                ),
                (
                    Some("text/plain"),
                    good,
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "sent as text",
                ),
                (
                    Some("application/json"),
                    "{\"".to_owned(),
                    StatusCode::BAD_REQUEST,
                    "no JSON",
                ),
                (
                    Some("application/json"),
                    "[1, 2]".to_owned(),
                    StatusCode::BAD_REQUEST,
                    "another shape",
                ),
                (
                    Some("application/json"),
                    oversize,
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "over the limit",
                ),
            ] {
                let mut request = Request::builder()
                    .method(m.clone())
                    .uri(&uri)
                    .header(header::AUTHORIZATION, format!("Bearer {admin}"));
                if let Some(t) = content_type {
                    request = request.header(header::CONTENT_TYPE, t);
                }
                let answer = api.send(request.body(Body::from(bytes)).unwrap()).await;
                let what = format!("{method} {uri} ({why})");
                assert_eq!(answer.status, status, "{what}: {}", answer.text());
                documented_refusal(&doc, path, method, &answer, &what);
                refusals += 1;
            }
        }
    }
    assert!(operations >= 20, "every operation called: {operations}");
    assert!(refusals >= 60, "refusals checked: {refusals}");

    // Addresses under /api/ that no route answers, in any method.
    for (method, uri) in [
        (Method::GET, "/api"),
        (Method::GET, "/api/"),
        (Method::GET, "/api/v2/cases"),
        (Method::POST, "/api/v1/no/such/route"),
        (
            Method::DELETE,
            &*format!("/api/v1/cases/{}/nope", rows.case),
        ),
    ] {
        let answer = api.call(method.clone(), uri, Some(admin), None).await;
        let what = format!("{method} {uri}");
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{what}");
        assert_eq!(shape(&answer, &what), "not_found");
        assert!(
            answer.text().contains("openapi.json"),
            "{what}: {}",
            answer.text()
        );
    }
    // The document's own route takes GET only.
    let answer = api
        .call(Method::DELETE, "/api/v1/openapi.json", Some(admin), None)
        .await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(shape(&answer, "DELETE openapi.json"), "method_not_allowed");

    // A call another site's page makes a browser send (no bearer token) is refused in the
    // API's shape, as the document lists.
    let path = "/api/v1/cases/{id}/status";
    let request = Request::builder()
        .method(Method::POST)
        .uri(rows.uri(path))
        .header(header::ORIGIN, "http://evil.example")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(r#"{"status": "dismissed"}"#))
        .unwrap();
    let answer = api.send(request).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text());
    assert_eq!(
        documented_refusal(&doc, path, "post", &answer, "cross-site"),
        "forbidden"
    );

    // Pages keep their own error page.
    let answer = api.call(Method::GET, "/no/such/page", None, None).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert!(
        answer.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{:?}",
        answer.headers
    );
}

#[tokio::test]
async fn every_refusal_is_documented_on_sqlite() {
    let db = store::testing::sqlite("admin_refusals").await.unwrap();
    every_refusal_is_documented(&db).await;
}

#[tokio::test]
async fn every_refusal_is_documented_on_postgres() {
    let Some(db) = store::testing::postgres("admin_refusals").await else {
        return;
    };
    every_refusal_is_documented(&db).await;
}

/// The files of a zip by their paths.
fn unzip(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    use std::io::Read;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut file = zip.by_index(i).unwrap();
            let name = file.name().unwrap().into_owned();
            let mut out = Vec::new();
            file.read_to_end(&mut out).unwrap();
            (name, out)
        })
        .collect()
}

/// The files under `dir` by their `/`-separated paths below it.
fn files_under(dir: &std::path::Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().to_string_lossy();
                out.insert(name.replace('\\', "/"), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// A WARC file's records after its `warcinfo`, decompressed, with the `warcinfo`'s id (which
/// names its time of writing, and each record repeats) blanked.
fn records_after_warcinfo(gz: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut rest = gz;
    // The bufread decoder consumes no more of its reader than the member.
    let mut warcinfo = String::new();
    flate2::bufread::GzDecoder::new(&mut rest)
        .read_to_string(&mut warcinfo)
        .unwrap();
    let id = warcinfo
        .lines()
        .find_map(|l| l.strip_prefix("WARC-Record-ID: "))
        .unwrap()
        .to_owned();
    let mut records = String::new();
    flate2::bufread::MultiGzDecoder::new(rest)
        .read_to_string(&mut records)
        .unwrap();
    assert!(records.contains("WARC-Type: response"), "{records:.300}");
    records.replace(&id, "<warcinfo>").into_bytes()
}

/// `GET /api/v1/cases/{id}/evidence` answers the package `copyhound cases evidence` writes
/// (`evidence::write_package`), zipped: the same files with the same bytes, but for what
/// says when it was written (the manifest's `written_at`, the WARC file's `warcinfo` record).
async fn evidence_package_through_the_api(db: &TestDb) {
    let store = &db.store;
    let tokens = tokens(store).await;
    let viewer = tokens[&Role::Viewer].as_str();
    let case = with_case(store).await;
    let api = Api::new(store);
    let dir = tempfile::tempdir().unwrap();
    evidence::write_package(store, case, dir.path(), false)
        .await
        .unwrap();
    let written = files_under(dir.path());

    let uri = format!("/api/v1/cases/{case}/evidence");
    let answer = api.get(&uri, viewer).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    assert_eq!(answer.headers[header::CONTENT_TYPE], "application/zip");
    assert_eq!(
        answer.headers[header::CONTENT_DISPOSITION],
        format!("attachment; filename=\"case-{case}-evidence.zip\"")
    );
    let doc: Value = serde_json::from_str(&admin::openapi_json()).unwrap();
    let documented = &doc["paths"]["/api/v1/cases/{id}/evidence"]["get"]["responses"]["200"];
    assert!(
        documented["content"]["application/zip"].is_object(),
        "{documented}"
    );
    let zipped = unzip(&answer.body);
    assert_eq!(
        zipped.keys().collect::<Vec<_>>(),
        written.keys().collect::<Vec<_>>()
    );
    assert!(
        zipped.keys().any(|k| k.starts_with("texts/")),
        "the page's text: {:?}",
        zipped.keys()
    );
    for (name, bytes) in &zipped {
        match name.as_str() {
            "manifest.json" => {
                let mut ours: Value = serde_json::from_slice(bytes).unwrap();
                let mut theirs: Value = serde_json::from_slice(&written[name]).unwrap();
                for manifest in [&mut ours, &mut theirs] {
                    manifest["written_at"] = Value::Null;
                    for file in manifest["files"].as_array_mut().unwrap() {
                        if file["path"] == "case.warc.gz" {
                            file["sha256"] = Value::Null;
                            file["bytes"] = Value::Null;
                        }
                    }
                }
                assert_eq!(ours, theirs);
            }
            "case.warc.gz" => {
                let ours = records_after_warcinfo(bytes);
                assert!(
                    ours == records_after_warcinfo(&written[name]),
                    "the WARC records differ"
                );
            }
            _ => assert!(*bytes == written[name], "{name} differs"),
        }
    }
    // The manifest vouches for the files of the zip.
    let manifest: Value = serde_json::from_slice(&zipped["manifest.json"]).unwrap();
    for file in manifest["files"].as_array().unwrap() {
        let path = file["path"].as_str().unwrap();
        let digest = <sha2::Sha256 as sha2::Digest>::digest(&zipped[path]);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(file["sha256"], hex, "{path}");
    }

    // Refusals in the one shape.
    let answer = api.call(Method::GET, &uri, None, None).await;
    assert_eq!(
        answer.error_code(StatusCode::UNAUTHORIZED),
        "unauthenticated"
    );
    let answer = api.get("/api/v1/cases/987654321/evidence", viewer).await;
    assert_eq!(answer.error_code(StatusCode::NOT_FOUND), "not_found");
}

#[tokio::test]
async fn evidence_package_through_the_api_on_sqlite() {
    let db = store::testing::sqlite("admin_evidence").await.unwrap();
    evidence_package_through_the_api(&db).await;
}

#[tokio::test]
async fn evidence_package_through_the_api_on_postgres() {
    let Some(db) = store::testing::postgres("admin_evidence").await else {
        return;
    };
    evidence_package_through_the_api(&db).await;
}

/// Where `schema` (and what it holds) describes an object's properties in place: the paths
/// found, with `at` as their root.
fn inlined_objects(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") {
                out.push(at.to_owned());
            }
            for (key, value) in map {
                inlined_objects(value, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                inlined_objects(value, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Every object the API sends or takes is a component that operations and other components
/// name by `$ref`, so that a generated client has one class for it: no schema with properties
/// stands in an operation, or inside a component.
#[test]
fn every_object_is_a_component_named_by_ref() {
    let doc: Value = serde_json::from_str(&admin::openapi_json()).unwrap();
    let mut inlined = Vec::new();
    inlined_objects(&doc["paths"], "#/paths", &mut inlined);
    let components = doc["components"]["schemas"].as_object().unwrap();
    for (name, schema) in components {
        for (key, value) in schema.as_object().unwrap() {
            inlined_objects(
                value,
                &format!("#/components/schemas/{name}/{key}"),
                &mut inlined,
            );
        }
    }
    assert!(inlined.is_empty(), "schemas inlined at {inlined:#?}");
    // The pages and the figures are components with their parts named.
    for name in [
        "CasePage",
        "WorkPage",
        "SitePage",
        "StatsOut",
        "FunnelOut",
        "ErrorBody",
    ] {
        assert!(components.contains_key(name), "{name} is no component");
    }
    assert_eq!(
        components["CasePage"]["properties"]["items"]["items"]["$ref"],
        "#/components/schemas/CaseOut"
    );
    assert_eq!(
        components["StatsOut"]["properties"]["crawl_health"]["items"]["$ref"],
        "#/components/schemas/CrawlHealthOut"
    );
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
