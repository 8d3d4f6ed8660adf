//! The UI driven through the router as a browser drives it: cookies and form tokens from the
//! pages, a form posted from the page it came from.

use admin::{AdminSettings, AdminState};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use store::Store;
use tower::ServiceExt;

pub struct Ui {
    pub app: Router,
    pub settings: AdminSettings,
    pub dir: tempfile::TempDir,
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    /// The value of the cookie `name` this answer sets (`name=value`), if any.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or_default())
            .find(|pair| pair.split_once('=').is_some_and(|(k, _)| k == name))
            .map(str::to_owned)
    }

    /// Where it redirects to.
    pub fn location(&self) -> &str {
        self.headers[header::LOCATION].to_str().unwrap()
    }
}

impl Ui {
    /// The UI over `store` with plain-HTTP cookies and its own upload folder, its settings
    /// changed by `change`.
    pub fn with(store: &Store, change: impl FnOnce(&mut AdminSettings)) -> Ui {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = AdminSettings {
            secure_cookies: false,
            upload_dir: dir.path().join("uploads"),
            ..AdminSettings::default()
        };
        change(&mut settings);
        Ui {
            app: admin::router(AdminState::new(store.clone(), settings.clone())),
            settings,
            dir,
        }
    }

    pub async fn send(&self, request: Request<Body>) -> Answer {
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

    pub async fn get(&self, path: &str, cookie: Option<&str>) -> Answer {
        let mut r = Request::get(path);
        if let Some(c) = cookie {
            r = r.header(header::COOKIE, c);
        }
        self.send(r.body(Body::empty()).unwrap()).await
    }

    /// A form post as a browser on this host sends it.
    pub fn form(path: &str, cookie: Option<&str>, form: &str) -> Request<Body> {
        let mut r = Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::HOST, "localhost");
        if let Some(c) = cookie {
            r = r.header(header::COOKIE, c);
        }
        r.body(Body::from(form.to_owned())).unwrap()
    }

    pub async fn post(&self, path: &str, cookie: Option<&str>, form: &str) -> Answer {
        self.send(Self::form(path, cookie, form)).await
    }

    /// The logged-in user's UI in Chinese, as the header's language switch sets it.
    pub async fn speak_chinese(&self, cookie: &str, csrf: &str) {
        let a = self
            .post(
                "/account/language",
                Some(cookie),
                &format!("csrf={csrf}&lang=zh"),
            )
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    }

    /// The login page's token and the cookie that holds it, as a browser gets them.
    pub async fn login_token(&self) -> (String, String) {
        let page = self.get("/login", None).await;
        let cookie = page
            .cookie("copyhound_login")
            .expect("a login token cookie");
        (cookie, csrf_of(&page.body))
    }

    /// The login form posted from the login page, with `cookies` besides its token's.
    pub async fn post_login_with(&self, form: &str, cookies: &[&str]) -> Answer {
        let (cookie, token) = self.login_token().await;
        let cookies = std::iter::once(cookie.as_str())
            .chain(cookies.iter().copied())
            .collect::<Vec<_>>()
            .join("; ");
        self.post("/login", Some(&cookies), &format!("{form}&csrf={token}"))
            .await
    }

    /// The login form posted from the login page.
    pub async fn post_login(&self, form: &str) -> Answer {
        self.post_login_with(form, &[]).await
    }

    /// Logs in; returns the session cookie and the session's CSRF token.
    pub async fn login(&self, name: &str, password: &str) -> (String, String) {
        let a = self
            .post_login(&format!("username={name}&password={password}&next=%2F"))
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
        let set = a.headers[header::SET_COOKIE].to_str().unwrap().to_owned();
        assert!(
            set.starts_with("copyhound_session=")
                && set.contains("HttpOnly")
                && set.contains("SameSite=Strict"),
            "{set}"
        );
        let cookie = a.cookie("copyhound_session").unwrap();
        let page = self.get("/cases", Some(&cookie)).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        (cookie, csrf_of(&page.body))
    }
}

/// The CSRF token of the first form in `html`.
pub fn csrf_of(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("a form with a CSRF token")
        + 19;
    html[at..].split('"').next().unwrap().to_owned()
}
