//! The UI's routes through the router, on SQLite and Postgres: logging in, every page for
//! every role, CSRF and cross-site refusals, a viewer refused a write and a reviewer refused
//! user management, the login limit, the security headers, and hostile text from a pirate
//! page and a work title shown escaped everywhere.

use std::sync::Arc;

use admin::{AdminSettings, AdminState, LoginLimits};
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use import::{ImportOptions, ImportSettings, Importer};
use matcher::MatcherSettings;
use pipeline::Analyser;
use sha2::Digest;
use store::testing::TestDb;
use store::{CaseId, EvidenceWrites, NewPageText, NewSnapshot, Role, Store};
use tower::ServiceExt;

/// 封神演义 1–3 (traditional; public domain): the protected work.
const WORK: &str = include_str!("../../import/tests/data/fengshenyanyi_hant_1-3.txt");
const HOSTILE: &str = "<script>alert('pwned')</script>";

fn pirate_page() -> String {
    let start = WORK.find("第一回").unwrap();
    let end = WORK.find("第二回").unwrap();
    let chapter = zhconv::zhconv(&WORK[start..end], zhconv::Variant::ZhHans);
    format!("{HOSTILE}最新章节请访问！\n{chapter}\n{HOSTILE}")
}

async fn stored_page(store: &Store, url: &str, text: &str) -> store::SnapshotId {
    let body = text.as_bytes();
    let new = NewSnapshot {
        content_type: Some("text/plain; charset=utf-8".into()),
        sha256: sha2::Sha256::digest(body).into(),
        body_len: body.len() as u64,
        elapsed_ms: 1,
        ..store::testing::sample_snapshot(url, 0, chrono::Utc::now())
    };
    let (id, _) = store
        .insert_snapshot(&new, Some(&zstd::encode_all(body, 1).unwrap()))
        .await
        .unwrap();
    store
        .insert_page_text(&NewPageText {
            snapshot: id,
            url: url.to_owned(),
            depth: 0,
            chain: None,
            kind: "content".into(),
            title: Some(HOSTILE.into()),
            chapter_title: None,
            body: text.to_owned(),
            encoding: "UTF-8".into(),
            decode_errors: false,
            not_modified: false,
            fetched_at: chrono::Utc::now(),
            text_source: "markup".into(),
            text_snapshot: None,
        })
        .await
        .unwrap();
    id
}

/// A work with a hostile title and a case against it from a pirate page with hostile text.
async fn with_case(store: &Store) -> CaseId {
    Importer::new(ImportSettings::default())
        .unwrap()
        .import_bytes(
            store,
            "fengshen.txt",
            WORK.as_bytes().to_vec(),
            &ImportOptions {
                title: Some(format!("封神演义{HOSTILE}")),
                author: Some(HOSTILE.into()),
            },
            &(),
        )
        .await
        .unwrap();
    let analyser = Arc::new(Analyser::new(
        store.clone(),
        Default::default(),
        MatcherSettings::default(),
    ));
    let snapshot = stored_page(store, "http://pirate.example/book/1.html", &pirate_page()).await;
    let cases = analyser.analyse(snapshot).await.unwrap().cases;
    assert_eq!(cases.len(), 1, "the pirate page opens one case");
    cases[0]
}

struct Ui {
    app: Router,
    dir: tempfile::TempDir,
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

impl Ui {
    fn new(store: &Store) -> Ui {
        let dir = tempfile::tempdir().unwrap();
        let settings = AdminSettings {
            secure_cookies: false,
            upload_dir: dir.path().join("uploads"),
            login: LoginLimits {
                per_user: 3,
                ..LoginLimits::default()
            },
            ..AdminSettings::default()
        };
        Ui {
            app: admin::router(AdminState::new(store.clone(), settings)),
            dir,
        }
    }

    async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), 64 << 20)
            .await
            .unwrap();
        Answer {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    async fn get(&self, path: &str, cookie: Option<&str>) -> Answer {
        let mut r = Request::get(path);
        if let Some(c) = cookie {
            r = r.header(header::COOKIE, c);
        }
        self.send(r.body(Body::empty()).unwrap()).await
    }

    async fn post(&self, path: &str, cookie: Option<&str>, form: &str) -> Answer {
        let mut r = Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::HOST, "localhost");
        if let Some(c) = cookie {
            r = r.header(header::COOKIE, c);
        }
        self.send(r.body(Body::from(form.to_owned())).unwrap())
            .await
    }

    /// Logs in; returns the cookie and the session's CSRF token.
    async fn login(&self, name: &str, password: &str) -> (String, String) {
        let a = self
            .post(
                "/login",
                None,
                &format!("username={name}&password={password}&next=%2F"),
            )
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
        let set = a.headers[header::SET_COOKIE].to_str().unwrap().to_owned();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        let cookie = set.split(';').next().unwrap().to_owned();
        let page = self.get("/cases", Some(&cookie)).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        (cookie, csrf_of(&page.body))
    }
}

fn csrf_of(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("a form with a CSRF token")
        + 19;
    html[at..].split('"').next().unwrap().to_owned()
}

async fn users(store: &Store) {
    for (name, role) in [
        ("alice", Role::Admin),
        ("rita", Role::Reviewer),
        ("vic", Role::Viewer),
    ] {
        pipeline::accounts::add_user(store, name, None, role, "correct horse battery", "test")
            .await
            .unwrap();
    }
}

const PASSWORD: &str = "correct+horse+battery";

async fn pages_for_every_role(db: &TestDb) {
    let store = &db.store;
    users(store).await;
    let case = with_case(store).await;
    let ui = Ui::new(store);

    // Not logged in: every page sends the browser to the login form.
    let a = ui.get("/cases", None).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert_eq!(a.headers[header::LOCATION], "/login?next=%2Fcases");
    let login = ui.get("/login", None).await;
    assert_eq!(login.status, StatusCode::OK);
    for h in [
        "content-security-policy",
        "x-content-type-options",
        "x-frame-options",
    ] {
        assert!(login.headers.contains_key(h), "{h}");
    }
    assert!(
        login.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );

    let (admin, admin_csrf) = ui.login("alice", PASSWORD).await;
    let (reviewer, reviewer_csrf) = ui.login("rita", PASSWORD).await;
    let (viewer, viewer_csrf) = ui.login("vic", PASSWORD).await;

    let read_pages = [
        "/".to_owned(),
        "/cases".to_owned(),
        "/cases?status=all&min_exposure=10".to_owned(),
        format!("/cases/{case}"),
        "/works".to_owned(),
        "/works/1".to_owned(),
        "/sites".to_owned(),
        "/notices".to_owned(),
        "/analytics".to_owned(),
    ];
    for cookie in [&admin, &reviewer, &viewer] {
        for path in &read_pages {
            let a = ui.get(path, Some(cookie)).await;
            assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.body);
            assert!(a.body.len() <= 100_000, "{path} is {} bytes", a.body.len());
            // Hostile text never reaches a page as markup.
            assert!(!a.body.contains("<script>alert"), "{path} shows raw script");
            assert!(
                !a.body.contains("http://") || !a.body.contains("src=\"http"),
                "{path}"
            );
        }
    }
    let detail = ui.get(&format!("/cases/{case}"), Some(&viewer)).await;
    assert!(
        detail.body.contains("&#60;script&#62;"),
        "escaped text shown"
    );
    assert!(
        detail.body.contains("<mark class=\"page\">"),
        "passages highlighted"
    );
    for admin_only in ["/users", "/jobs", "/audit"] {
        assert_eq!(
            ui.get(admin_only, Some(&admin)).await.status,
            StatusCode::OK,
            "{admin_only}"
        );
        assert_eq!(
            ui.get(admin_only, Some(&reviewer)).await.status,
            StatusCode::FORBIDDEN,
            "{admin_only}"
        );
        assert_eq!(
            ui.get(admin_only, Some(&viewer)).await.status,
            StatusCode::FORBIDDEN,
            "{admin_only}"
        );
    }

    // Writes: a missing or wrong CSRF token is refused, then a viewer is refused, then a
    // reviewer may.
    let status = format!("/cases/{case}/status");
    let a = ui.post(&status, Some(&reviewer), "status=confirmed").await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "no token");
    let a = ui
        .post(
            &status,
            Some(&reviewer),
            &format!("status=confirmed&csrf={viewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "another session's token");
    let a = ui
        .post(
            &status,
            Some(&viewer),
            &format!("status=confirmed&csrf={viewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "a viewer");
    let cross = Request::post(&status)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::HOST, "localhost")
        .header(header::ORIGIN, "https://evil.example")
        .header(header::COOKIE, &reviewer)
        .body(Body::from(format!("status=confirmed&csrf={reviewer_csrf}")))
        .unwrap();
    assert_eq!(
        ui.send(cross).await.status,
        StatusCode::FORBIDDEN,
        "cross-site"
    );
    let a = ui
        .post(
            &status,
            Some(&reviewer),
            &format!("status=confirmed&note=%3Cb%3Eok&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let detail = ui.get(&format!("/cases/{case}"), Some(&viewer)).await;
    assert!(detail.body.contains("&#60;b&#62;ok"), "the note is escaped");
    assert!(detail.body.contains("id=\"case-status\">Confirmed") || detail.body.contains("已确认"));

    // A reviewer may not manage users; an admin may.
    let add = "username=nina&role=viewer&password=long+enough+pw";
    let a = ui
        .post(
            "/users",
            Some(&reviewer),
            &format!("{add}&csrf={reviewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    let a = ui
        .post("/users", Some(&admin), &format!("{add}&csrf={admin_csrf}"))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let a = ui
        .post(
            "/users",
            Some(&admin),
            &format!("username=weak&role=viewer&password=short&csrf={admin_csrf}"),
        )
        .await;
    assert_eq!(
        a.status,
        StatusCode::BAD_REQUEST,
        "a weak password is refused"
    );

    // Language: the setting wins over the browser's.
    let a = ui
        .post(
            "/account/language",
            Some(&viewer),
            &format!("lang=zh&csrf={viewer_csrf}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert!(
        ui.get("/cases", Some(&viewer))
            .await
            .body
            .contains("审核队列")
    );

    // Logging out ends the session on the server.
    let a = ui
        .post("/logout", Some(&viewer), &format!("csrf={viewer_csrf}"))
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
    assert_eq!(
        ui.get("/cases", Some(&viewer)).await.status,
        StatusCode::SEE_OTHER
    );

    // Failed logins past the limit wait, even with the right password next.
    for _ in 0..3 {
        let a = ui
            .post("/login", None, "username=rita&password=wrong")
            .await;
        assert!(
            a.headers[header::LOCATION]
                .to_str()
                .unwrap()
                .contains("failed=1")
        );
    }
    let a = ui
        .post(
            "/login",
            None,
            &format!("username=rita&password={PASSWORD}"),
        )
        .await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
    drop(ui.dir);
}

#[tokio::test]
async fn pages_for_every_role_on_sqlite() {
    let db = store::testing::sqlite("admin_pages").await.unwrap();
    pages_for_every_role(&db).await;
}

#[tokio::test]
async fn pages_for_every_role_on_postgres() {
    let Some(db) = store::testing::postgres("admin_pages").await else {
        return;
    };
    pages_for_every_role(&db).await;
}
