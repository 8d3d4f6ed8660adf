//! Who is asking: the session cookie (server-side sessions in the store), the role a route
//! needs, the CSRF token every form carries, and the limit on failed logins.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;
use serde::de::DeserializeOwned;
use store::{Role, UserRecord};

use crate::error::{WebError, WebResult};
use crate::i18n::Lang;
use crate::state::AdminState;

/// The session cookie's name; with `Secure` cookies the `__Host-` prefix also pins it to
/// this host and path `/` (a sibling subdomain cannot plant one).
pub(crate) fn cookie_name(secure: bool) -> &'static str {
    if secure {
        "__Host-copyhound_session"
    } else {
        "copyhound_session"
    }
}

/// The `Set-Cookie` value that starts (or, with `max_age` 0, ends) a session.
pub(crate) fn session_cookie(state: &AdminState, value: &str, max_age: Duration) -> String {
    let secure = state.settings().secure_cookies;
    format!(
        "{}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        cookie_name(secure),
        max_age.as_secs(),
        if secure { "; Secure" } else { "" }
    )
}

fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The logged-in person behind a page request, with the language their pages speak in.
#[derive(Debug, Clone)]
pub struct CurrentUser {
    /// The account.
    pub user: UserRecord,
    /// The session's CSRF token, put in every form.
    pub csrf: String,
    /// The language of their pages.
    pub lang: Lang,
}

impl CurrentUser {
    /// Refuses unless the user's role is at least `role`.
    pub fn require(&self, role: Role) -> WebResult<()> {
        if self.user.role >= role {
            Ok(())
        } else {
            Err(WebError::Forbidden(format!(
                "this needs the {role} role; {} is {}",
                self.user.username, self.user.role
            )))
        }
    }

    /// The name the audit log records.
    pub fn actor(&self) -> &str {
        &self.user.username
    }
}

impl FromRequestParts<AdminState> for CurrentUser {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, state: &AdminState) -> WebResult<Self> {
        if let Some(user) = parts.extensions.get::<CurrentUser>() {
            return Ok(user.clone());
        }
        let next = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let name = cookie_name(state.settings().secure_cookies);
        let Some(value) = cookie(parts, name) else {
            return Err(WebError::Unauthenticated { next });
        };
        let Some(session) = pipeline::accounts::session(state.store(), value).await? else {
            return Err(WebError::Unauthenticated { next });
        };
        let lang = Lang::choose(session.user.locale.as_deref(), &parts.headers);
        let current = CurrentUser {
            user: session.user,
            csrf: session.csrf_token,
            lang,
        };
        parts.extensions.insert(current.clone());
        Ok(current)
    }
}

/// A form posted by a logged-in user: its `csrf` field must equal the session's token,
/// compared in constant time, or nothing happens.
pub struct CsrfForm<T>(pub CurrentUser, pub T);

#[derive(serde::Deserialize)]
struct CsrfField {
    #[serde(default)]
    csrf: String,
}

impl<T: DeserializeOwned + Send> FromRequest<AdminState> for CsrfForm<T> {
    type Rejection = WebError;

    async fn from_request(request: Request, state: &AdminState) -> WebResult<Self> {
        let (mut parts, body) = request.into_parts();
        let user = CurrentUser::from_request_parts(&mut parts, state).await?;
        let bytes = axum::body::to_bytes(body, state.settings().max_upload_bytes)
            .await
            .map_err(|e| WebError::bad(format!("cannot read the form: {e}")))?;
        let token: CsrfField = serde_urlencoded_form(&bytes)?;
        check_csrf(&user, &token.csrf)?;
        let form = serde_urlencoded_form(&bytes)?;
        Ok(CsrfForm(user, form))
    }
}

/// Refuses unless `token` is the session's CSRF token.
pub(crate) fn check_csrf(user: &CurrentUser, token: &str) -> WebResult<()> {
    if constant_time_eq(token.as_bytes(), user.csrf.as_bytes()) && !token.is_empty() {
        Ok(())
    } else {
        Err(WebError::Forbidden(
            "the form's security token is missing or stale: reload the page and try again".into(),
        ))
    }
}

fn serde_urlencoded_form<T: DeserializeOwned>(bytes: &[u8]) -> WebResult<T> {
    serde_urlencoded::from_bytes(bytes).map_err(|e| WebError::bad(format!("bad form: {e}")))
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Refuses a state-changing request another site's page made the browser send
/// (`Sec-Fetch-Site: cross-site`, or an `Origin` that is not this host): a second wall
/// behind the CSRF tokens and the `SameSite=Strict` cookie.
pub(crate) async fn reject_cross_site(
    State(_state): State<AdminState>,
    request: Request,
    next: Next,
) -> Response {
    use axum::response::IntoResponse;
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let cross = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "cross-site");
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let foreign_origin = headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .and_then(|o| url::Url::parse(o).ok())
        .zip(host)
        .is_some_and(|(origin, host)| {
            let origin_host = match origin.port() {
                Some(port) => format!("{}:{port}", origin.host_str().unwrap_or_default()),
                None => origin.host_str().unwrap_or_default().to_owned(),
            };
            !origin_host.eq_ignore_ascii_case(host)
        });
    // An API call with a bearer token carries no ambient credential: another site cannot
    // make a browser send one.
    let bearer = headers
        .get(header::AUTHORIZATION)
        .is_some_and(|v| v.as_bytes().starts_with(b"Bearer "));
    if (cross || foreign_origin) && !bearer {
        return WebError::Forbidden("cross-site request refused".into()).into_response();
    }
    next.run(request).await
}

/// How many failed logins are let through before the next must wait.
#[derive(Debug, Clone)]
pub struct LoginLimits {
    /// Failures allowed per user name within `window`.
    pub per_user: u32,
    /// Failures allowed per client address within `window` (over all names).
    pub per_address: u32,
    /// The window the failures are counted over.
    pub window: Duration,
}

impl Default for LoginLimits {
    fn default() -> Self {
        LoginLimits {
            per_user: 5,
            per_address: 20,
            window: Duration::from_secs(15 * 60),
        }
    }
}

/// Failed logins counted per user name and per address, in memory: an attacker cannot grow
/// it past `MAX_KEYS` (old entries go first), and a restart forgives, which a lock-out in the
/// database would not (a locked admin could not log in to undo it).
#[derive(Debug)]
pub(crate) struct LoginLimiter {
    limits: LoginLimits,
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

const MAX_KEYS: usize = 100_000;

impl LoginLimiter {
    pub(crate) fn new(limits: LoginLimits) -> Self {
        LoginLimiter {
            limits,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn keys(username: &str, address: Option<IpAddr>) -> [(String, bool); 2] {
        [
            (format!("user:{}", username.to_lowercase()), true),
            (
                format!("addr:{}", address.map_or("-".into(), |a| a.to_string())),
                false,
            ),
        ]
    }

    /// `Err` with the seconds to wait when either limit is reached.
    pub(crate) fn check(&self, username: &str, address: Option<IpAddr>) -> WebResult<()> {
        let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        for (key, per_user) in Self::keys(username, address) {
            let limit = if per_user {
                self.limits.per_user
            } else {
                self.limits.per_address
            };
            if let Some((count, since)) = failures.get(&key) {
                let elapsed = since.elapsed();
                if *count >= limit && elapsed < self.limits.window {
                    return Err(WebError::TooManyRequests(
                        (self.limits.window - elapsed).as_secs().max(1),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn failed(&self, username: &str, address: Option<IpAddr>) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if failures.len() >= MAX_KEYS {
            let window = self.limits.window;
            failures.retain(|_, (_, since)| since.elapsed() < window);
            if failures.len() >= MAX_KEYS {
                failures.clear();
            }
        }
        for (key, _) in Self::keys(username, address) {
            let entry = failures.entry(key).or_insert((0, Instant::now()));
            if entry.1.elapsed() >= self.limits.window {
                *entry = (0, Instant::now());
            }
            entry.0 += 1;
        }
    }

    pub(crate) fn succeeded(&self, username: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        failures.remove(&format!("user:{}", username.to_lowercase()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_past_the_limit_wait_and_success_forgives_the_name() {
        let limiter = LoginLimiter::new(LoginLimits {
            per_user: 2,
            per_address: 3,
            window: Duration::from_secs(60),
        });
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        limiter.failed("Admin", Some(a));
        assert!(limiter.check("admin", Some(a)).is_ok());
        limiter.failed("admin", Some(b));
        assert!(matches!(
            limiter.check("admin", Some(a)),
            Err(WebError::TooManyRequests(s)) if s > 0
        ));
        assert!(limiter.check("other", Some(a)).is_ok());
        limiter.failed("x", Some(a));
        limiter.failed("y", Some(a));
        assert!(limiter.check("other", Some(a)).is_err(), "per address");
        limiter.succeeded("ADMIN");
        assert!(limiter.check("admin", Some(b)).is_ok());
    }

    #[test]
    fn csrf_tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
