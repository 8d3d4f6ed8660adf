//! Discovery's candidates through the router, on SQLite and Postgres: `GET
//! /api/v1/candidates` for every role, filtered by status, a bad status and a missing token
//! refused in the one error shape, a hostile domain refused by the store; the Candidates page
//! (the list by status, a candidate's found URLs) and its Approve and Ignore forms (CSRF, the
//! reviewer role, a bad schedule answered on the form); and the API's approve and ignore.
//! The Candidates page's providers and a search started from a work's page.

use crate::common;

use admin::{AdminSettings, AdminState};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use store::testing::TestDb;
use store::{CandidateStatus, Discovery, Role, Store, SuspectSites, Users};
use tower::ServiceExt;

use common::ui::Ui;
use common::{HOSTILE, users};

const PASSWORD: &str = "correct+horse+battery";

async fn get(store: &Store, path: &str, token: Option<&str>) -> (StatusCode, Value) {
    call(store, "GET", path, token, None).await
}

async fn call(
    store: &Store,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let dir = tempfile::tempdir().unwrap();
    let settings = AdminSettings {
        secure_cookies: false,
        upload_dir: dir.path().join("uploads"),
        ..AdminSettings::default()
    };
    let app = admin::router(AdminState::new(store.clone(), settings));
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
    let response = app.oneshot(r.body(body).unwrap()).await.unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let json = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&body)));
    (status, json)
}

async fn token(store: &Store, name: &str) -> String {
    let id = store.user_by_name(name).await.unwrap().unwrap().id;
    accounts::issue_api_token(store, id, "tests", None, "test")
        .await
        .unwrap()
        .token
}

fn domains(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|c| c["domain"].as_str().unwrap())
        .collect()
}

async fn candidates_api(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let viewer = token(store, "vic").await;
    let reviewer = token(store, "rita").await;
    assert_eq!(
        store.user_by_name("vic").await.unwrap().unwrap().role,
        Role::Viewer
    );

    store
        .add_candidate("pirate.example", "search")
        .await
        .unwrap();
    store
        .add_candidate("mirror.example:8080", "import")
        .await
        .unwrap();
    discovery::ignore(store, "mirror.example:8080")
        .await
        .unwrap();
    // The store refuses a hostile "domain": nothing but a host name and port is listed.
    let refused = store.add_candidate(HOSTILE, "import").await.unwrap_err();
    assert!(
        matches!(refused, store::Error::InvalidInput(_)),
        "{refused}"
    );

    let (status, all) = get(store, "/api/v1/candidates", Some(&viewer)).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    let mut names = domains(&all);
    names.sort();
    assert_eq!(names, ["mirror.example:8080", "pirate.example"]);
    let pirate = all
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["domain"] == "pirate.example")
        .unwrap();
    assert_eq!(pirate["status"], "new");
    assert_eq!(pirate["found_by"], "search");
    assert_eq!(pirate["site_id"], Value::Null);
    assert_eq!(pirate["urls"], 0);
    assert_eq!(pirate["pages"], 0);

    let (status, new) = get(store, "/api/v1/candidates?status=new", Some(&reviewer)).await;
    assert_eq!(status, StatusCode::OK, "{new}");
    let mut new = domains(&new);
    new.sort();
    assert_eq!(new, ["pirate.example"]);
    let (_, ignored) = get(store, "/api/v1/candidates?status=ignored", Some(&viewer)).await;
    assert_eq!(domains(&ignored), ["mirror.example:8080"]);
    let (_, approved) = get(store, "/api/v1/candidates?status=approved", Some(&viewer)).await;
    assert_eq!(domains(&approved), Vec::<&str>::new());

    let (status, err) = get(store, "/api/v1/candidates?status=bogus", Some(&viewer)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert_eq!(err["error"]["code"], "bad_request");
    let (status, err) = get(store, "/api/v1/candidates", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{err}");
    assert_eq!(err["error"]["code"], "unauthenticated");
}

/// A candidate with `urls` found on it, as a search stores them.
async fn candidate_with_urls(store: &Store, domain: &str, urls: &[&str]) {
    let rows: Vec<store::FoundUrl> = urls
        .iter()
        .map(|u| store::FoundUrl {
            domain: domain.to_owned(),
            url: (*u).to_owned(),
            found_by: "search:searxng".into(),
            work: None,
        })
        .collect();
    store.add_found_urls(&rows).await.unwrap();
    store.add_candidate(domain, "search:searxng").await.unwrap();
}

async fn candidates_page_and_actions(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    candidate_with_urls(
        store,
        "pirate.example",
        &[
            "http://pirate.example/book/2.html",
            "http://pirate.example/book/3.html",
        ],
    )
    .await;
    candidate_with_urls(
        store,
        "mirror.example:8080",
        &["http://mirror.example:8080/r/2"],
    )
    .await;
    store.add_candidate("bare.example", "import").await.unwrap();
    let ui = Ui::with(store, |_| {});
    let (reviewer, reviewer_csrf) = ui.login("rita", PASSWORD).await;
    let (viewer, viewer_csrf) = ui.login("vic", PASSWORD).await;

    // The list: new candidates by default, a link to each, the menu entry marked.
    let list = ui.get("/candidates", Some(&viewer)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(list.body.contains("id=\"nav-candidates\""), "{}", list.body);
    for d in ["pirate.example", "mirror.example%3A8080", "bare.example"] {
        assert!(
            list.body.contains(&format!("href=\"/candidates/{d}\"")),
            "{d}: {}",
            list.body
        );
    }
    let bad = ui.get("/candidates?status=bogus", Some(&viewer)).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    // A candidate's page lists the URLs found; a viewer sees no form.
    let page = ui.get("/candidates/pirate.example", Some(&viewer)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("http://pirate.example/book/3.html"));
    assert!(!page.body.contains("id=\"approve-candidate\""));
    let page = ui.get("/candidates/pirate.example", Some(&reviewer)).await;
    assert!(
        page.body.contains("id=\"approve-candidate\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("id=\"ignore-candidate\""));
    assert_eq!(
        ui.get("/candidates/unknown.example", Some(&viewer))
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    // Approve: no token, a viewer, a bad schedule (answered on the form, typed value kept).
    let approve = "/candidates/pirate.example/approve";
    let a = ui.post(approve, Some(&reviewer), "schedule=").await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "no CSRF token");
    let a = ui
        .post(
            approve,
            Some(&viewer),
            &format!("schedule=&csrf={viewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "a viewer");
    let a = ui
        .post(
            approve,
            Some(&reviewer),
            &format!("schedule=every+tuesday&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    assert!(a.body.contains("id=\"schedule-error\""), "{}", a.body);
    assert!(a.body.contains("value=\"every tuesday\""), "{}", a.body);
    assert_eq!(
        store.candidate("pirate.example").await.unwrap().status,
        CandidateStatus::New
    );
    // Approved with a schedule: a watched site starting at the first URL found, its crawl
    // queued, the candidate approved and linked to it.
    let a = ui
        .post(
            approve,
            Some(&reviewer),
            &format!("schedule=0+3+*+*+*&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let site_path = a.location().to_owned();
    assert!(site_path.starts_with("/sites/"), "{site_path}");
    let approved = store.candidate("pirate.example").await.unwrap();
    assert_eq!(approved.status, CandidateStatus::Approved);
    let site = store.site(approved.site_id.unwrap()).await.unwrap();
    assert_eq!(site_path, format!("/sites/{}", site.id));
    assert_eq!(site.start_url, "http://pirate.example/book/2.html");
    assert_eq!(site.schedule.as_deref(), Some("0 3 * * *"));
    let page = ui.get("/candidates/pirate.example", Some(&reviewer)).await;
    assert!(page.body.contains("id=\"candidate-site\""), "{}", page.body);
    assert!(!page.body.contains("id=\"approve-candidate\""));
    let approved_list = ui.get("/candidates?status=approved", Some(&viewer)).await;
    assert!(approved_list.body.contains("/candidates/pirate.example"));
    assert!(!approved_list.body.contains("/candidates/bare.example"));
    // A candidate with no URL found yet is refused on the form, saying why.
    let a = ui
        .post(
            "/candidates/bare.example/approve",
            Some(&reviewer),
            &format!("schedule=&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    assert!(a.body.contains("no URL was found"), "{}", a.body);

    // Ignore from the page.
    let a = ui
        .post(
            "/candidates/bare.example/ignore",
            Some(&reviewer),
            &format!("csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(a.location(), "/candidates");
    assert_eq!(
        store.candidate("bare.example").await.unwrap().status,
        CandidateStatus::Ignored
    );

    // The API: a viewer refused, a reviewer approves and ignores; an unknown candidate is
    // not found.
    let viewer_token = token(store, "vic").await;
    let reviewer_token = token(store, "rita").await;
    let path = "/api/v1/candidates/mirror.example:8080/approve";
    let (status, err) = call(store, "POST", path, Some(&viewer_token), Some(json!({}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert_eq!(err["error"]["code"], "forbidden");
    let (status, err) = call(
        store,
        "POST",
        "/api/v1/candidates/unknown.example/approve",
        Some(&reviewer_token),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    let (status, err) = call(
        store,
        "POST",
        path,
        Some(&reviewer_token),
        Some(json!({"schedule": "not cron"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    let (status, body) = call(store, "POST", path, Some(&reviewer_token), Some(json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["candidate"]["domain"], "mirror.example:8080");
    assert_eq!(body["candidate"]["status"], "approved");
    let site = store.site(body["site_id"].as_i64().unwrap()).await.unwrap();
    assert_eq!(site.host, "mirror.example:8080");
    assert_eq!(site.schedule, None);
    assert!(body["crawl_id"].as_i64().unwrap() > 0);
    let (status, body) = call(
        store,
        "POST",
        "/api/v1/candidates/Never.Seen.example/ignore",
        Some(&reviewer_token),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["domain"], "never.seen.example");
    assert_eq!(body["status"], "ignored");
    assert!(store.host_excluded("never.seen.example").await.unwrap());
}

#[tokio::test]
async fn candidates_page_and_actions_on_sqlite() {
    let db = store::testing::sqlite("admin_candidate_actions")
        .await
        .unwrap();
    candidates_page_and_actions(&db).await;
}

#[tokio::test]
async fn candidates_page_and_actions_on_postgres() {
    let Some(db) = store::testing::postgres("admin_candidate_actions").await else {
        return;
    };
    candidates_page_and_actions(&db).await;
}

#[tokio::test]
async fn candidates_api_on_sqlite() {
    let db = store::testing::sqlite("admin_candidates").await.unwrap();
    candidates_api(&db).await;
}

#[tokio::test]
async fn candidates_api_on_postgres() {
    let Some(db) = store::testing::postgres("admin_candidates").await else {
        return;
    };
    candidates_api(&db).await;
}

/// Discovery from the UI: the Candidates page says whether a provider is configured and
/// what each sent today; a work's page runs a search now and follows its job.
async fn searching_from_the_ui(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = common::with_case(store).await;
    let work = store::CaseReads::case(store, case).await.unwrap().work_id;
    let search = format!("/works/{work}/discover");

    // No provider: said on both pages, the button off, a search refused.
    let ui = Ui::with(store, |_| {});
    let (reviewer, csrf) = ui.login("rita", PASSWORD).await;
    let list = ui.get("/candidates", Some(&reviewer)).await;
    assert!(list.body.contains("id=\"no-provider\""), "{}", list.body);
    let page = ui.get(&format!("/works/{work}"), Some(&reviewer)).await;
    assert!(
        page.body.contains("id=\"discover-now\" disabled"),
        "{}",
        page.body
    );
    let a = ui
        .post(&search, Some(&reviewer), &format!("csrf={csrf}"))
        .await;
    assert_eq!(a.status, StatusCode::CONFLICT, "{}", a.body);

    // One provider: the default, with today's queries; the search queued and followed.
    let ui = Ui::with(store, |s| {
        s.discovery.providers.insert(
            "brave".into(),
            discovery::ProviderSettings::new(discovery::ProviderKind::Brave, None, Some("k")),
        );
    });
    let (reviewer, csrf) = ui.login("rita", PASSWORD).await;
    let (viewer, viewer_csrf) = ui.login("vic", PASSWORD).await;
    let list = ui.get("/candidates", Some(&viewer)).await;
    assert!(
        list.body.contains("data-provider=\"brave\""),
        "{}",
        list.body
    );
    assert!(list.body.contains(">0 / 100</td>"), "{}", list.body);
    assert!(
        list.body.contains("class=\"badge\""),
        "the default is marked"
    );
    let a = ui
        .post(&search, Some(&viewer), &format!("csrf={viewer_csrf}"))
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "a viewer may not search");
    let a = ui
        .post(&search, Some(&reviewer), &format!("csrf={csrf}"))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let to = a.headers[header::LOCATION].to_str().unwrap().to_owned();
    assert!(
        to.starts_with(&format!("/works/{work}?queued=discover&job=")),
        "{to}"
    );
    let page = ui.get(&to, Some(&reviewer)).await;
    assert!(
        page.body
            .contains("data-job=\"queued.discover.pending\" data-refresh="),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn searching_from_the_ui_on_sqlite() {
    let db = store::testing::sqlite("admin_search_ui").await.unwrap();
    searching_from_the_ui(&db).await;
}

#[tokio::test]
async fn searching_from_the_ui_on_postgres() {
    let Some(db) = store::testing::postgres("admin_search_ui").await else {
        return;
    };
    searching_from_the_ui(&db).await;
}
