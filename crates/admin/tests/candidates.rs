//! `GET /api/v1/candidates` through the router, on SQLite and Postgres: every role reads the
//! candidates discovery stored, filtered by status; a bad status and a missing token are
//! refused in the one error shape; a hostile domain is refused by the store.

mod common;

use admin::{AdminSettings, AdminState};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::Value;
use store::testing::TestDb;
use store::{Discovery, Role, Store, Users};
use tower::ServiceExt;

use common::{HOSTILE, users};

async fn get(store: &Store, path: &str, token: Option<&str>) -> (StatusCode, Value) {
    let dir = tempfile::tempdir().unwrap();
    let settings = AdminSettings {
        secure_cookies: false,
        upload_dir: dir.path().join("uploads"),
        ..AdminSettings::default()
    };
    let app = admin::router(AdminState::new(store.clone(), settings));
    let mut r = Request::builder().uri(path);
    if let Some(t) = token {
        r = r.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let response = app.oneshot(r.body(Body::empty()).unwrap()).await.unwrap();
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
    pipeline::accounts::issue_api_token(store, id, "tests", None, "test")
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
    pipeline::discovery::ignore(store, "mirror.example:8080")
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
