//! Who is asking: the session cookie (server-side sessions in the store), the role a route
//! needs, the CSRF token every form carries (the login form's before any session), the
//! client's address behind trusted proxies, and the cookies of the login limit (whose
//! budgets the `limiter` module counts).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde::de::DeserializeOwned;
use store::{Role, UserRecord};

use crate::error::{WebError, WebResult};
use crate::i18n::Lang;
use crate::render::Ctx;
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

/// The device cookie's name (see [`LoginLimiter`](crate::limiter::LoginLimiter)).
fn device_cookie_name(secure: bool) -> &'static str {
    if secure {
        "__Host-copyhound_device"
    } else {
        "copyhound_device"
    }
}

/// The login form's token cookie's name (see [`LoginLimiter::login_token`](crate::limiter::LoginLimiter::login_token)).
fn login_cookie_name(secure: bool) -> &'static str {
    if secure {
        "__Host-copyhound_login"
    } else {
        "copyhound_login"
    }
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Strict, path `/`, `Secure` when configured.
fn set_cookie(state: &AdminState, name: &str, value: &str, max_age: Duration) -> String {
    let secure = state.settings().secure_cookies;
    format!(
        "{name}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        max_age.as_secs(),
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that starts (or, with `max_age` 0, ends) a session.
pub(crate) fn session_cookie(state: &AdminState, value: &str, max_age: Duration) -> String {
    let name = cookie_name(state.settings().secure_cookies);
    set_cookie(state, name, value, max_age)
}

/// How long a browser keeps its device cookie: it only ever widens its owner's login budget.
const DEVICE_COOKIE_AGE: Duration = Duration::from_secs(365 * 24 * 3600);

/// The `Set-Cookie` value of a device cookie for `username`.
pub(crate) fn device_cookie(state: &AdminState, username: &str) -> String {
    let name = device_cookie_name(state.settings().secure_cookies);
    let value = state.limiter().device_token(username);
    set_cookie(state, name, &value, DEVICE_COOKIE_AGE)
}

/// How long a login form's token is good for: the time a person may leave the form open.
const LOGIN_TOKEN_AGE: Duration = Duration::from_secs(24 * 3600);

/// The token the login form carries, and the `Set-Cookie` value that holds the same: the
/// browser's own when it has a good one (two tabs keep working), else a new one.
pub(crate) fn login_token(state: &AdminState, headers: &HeaderMap) -> (String, Option<String>) {
    let name = login_cookie_name(state.settings().secure_cookies);
    let limiter = state.limiter();
    match cookie(headers, name).filter(|t| limiter.verify_login_token(t)) {
        Some(token) => (token.to_owned(), None),
        None => {
            let token = limiter.login_token();
            let set = set_cookie(state, name, &token, LOGIN_TOKEN_AGE);
            (token, Some(set))
        }
    }
}

/// Refuses a login whose form does not carry the token its cookie holds, signed by this
/// server (a signed double-submit cookie, OWASP's defence against login CSRF: another site
/// cannot read the cookie to copy it into its form, nor plant one it made up).
pub(crate) fn check_login_token(
    state: &AdminState,
    headers: &HeaderMap,
    sent: &str,
) -> WebResult<()> {
    let name = login_cookie_name(state.settings().secure_cookies);
    match cookie(headers, name) {
        Some(held)
            if !sent.is_empty()
                && constant_time_eq(held.as_bytes(), sent.as_bytes())
                && state.limiter().verify_login_token(held) =>
        {
            Ok(())
        }
        _ => Err(WebError::Forbidden(
            "the login form's security token is missing or stale: open the login page again \
             and sign in from it"
                .into(),
        )),
    }
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The session cookie's value in `headers`, if any.
pub(crate) fn session_cookie_value<'a>(
    state: &AdminState,
    headers: &'a HeaderMap,
) -> Option<&'a str> {
    cookie(headers, cookie_name(state.settings().secure_cookies))
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
    /// The time zone their pages show times in (the settings' `notices.time_zone`).
    pub zone: jiff::tz::TimeZone,
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

    /// The frame of this person's pages: their language, name, CSRF token and time zone,
    /// with `nav` the menu entry to highlight.
    pub fn ctx(&self, nav: &'static str) -> Ctx {
        Ctx {
            lang: self.lang,
            user: Some(self.user.clone()),
            csrf: self.csrf.clone(),
            nav,
            zone: self.zone.clone(),
        }
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
        let Some(value) = session_cookie_value(state, &parts.headers) else {
            return Err(WebError::Unauthenticated { next });
        };
        let idle = state.settings().session_idle_timeout;
        let Some(session) = accounts::session(state.store(), value, idle).await? else {
            return Err(WebError::Unauthenticated { next });
        };
        let lang = Lang::choose(session.user.locale.as_deref(), &parts.headers);
        let current = CurrentUser {
            user: session.user,
            csrf: session.csrf_token,
            lang,
            zone: state.zone().await?,
        };
        parts.extensions.insert(current.clone());
        Ok(current)
    }
}

/// A request body within the route's limit (`max_form_bytes`, or `max_upload_bytes` on the
/// upload route); a longer one is refused 413 before more of it is read.
pub(crate) async fn body_bytes(request: Request, state: &AdminState) -> WebResult<Bytes> {
    Bytes::from_request(request, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large(state.settings().max_form_bytes, "a form")
        } else {
            WebError::bad(format!("cannot read the form: {}", e.body_text()))
        }
    })
}

/// The refusal of a body over `limit` bytes, naming what it was (`"a form"` or
/// `"an upload"`) and the setting that allows more.
pub(crate) fn too_large(limit: usize, what: &str) -> WebError {
    let key = if what == "an upload" {
        "max_upload_bytes"
    } else {
        "max_form_bytes"
    };
    let amount = if limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else if limit.is_multiple_of(1 << 10) {
        format!("{} KiB", limit >> 10)
    } else {
        format!("{limit} bytes")
    };
    WebError::TooLarge(format!(
        "{what} may be at most {amount} ([server] {key}); this one is larger"
    ))
}

/// A form posted without a session (the login form), read within the form limit.
pub struct PlainForm<T>(pub T);

impl<T: DeserializeOwned + Send> FromRequest<AdminState> for PlainForm<T> {
    type Rejection = WebError;

    async fn from_request(request: Request, state: &AdminState) -> WebResult<Self> {
        let bytes = body_bytes(request, state).await?;
        Ok(PlainForm(serde_urlencoded_form(&bytes)?))
    }
}

/// A form posted by a logged-in user: its `csrf` field must equal the session's token,
/// compared in constant time, or nothing happens.
pub struct CsrfForm<T>(pub CurrentUser, pub T);

/// A form of no fields but its CSRF token (a button that posts).
#[derive(serde::Deserialize)]
pub(crate) struct Empty {}

#[derive(serde::Deserialize)]
struct CsrfField {
    #[serde(default)]
    csrf: String,
}

impl<T: DeserializeOwned + Send> CsrfForm<T> {
    /// The user, the form and its body as sent, once the token is checked.
    pub(crate) async fn read(
        request: Request,
        state: &AdminState,
    ) -> WebResult<(CurrentUser, T, Bytes)> {
        let (mut parts, body) = request.into_parts();
        let user = CurrentUser::from_request_parts(&mut parts, state).await?;
        let bytes = body_bytes(Request::from_parts(parts, body), state).await?;
        let token: CsrfField = serde_urlencoded_form(&bytes)?;
        check_csrf(&user, &token.csrf)?;
        let form = serde_urlencoded_form(&bytes)?;
        Ok((user, form, bytes))
    }
}

impl<T: DeserializeOwned + Send> FromRequest<AdminState> for CsrfForm<T> {
    type Rejection = WebError;

    async fn from_request(request: Request, state: &AdminState) -> WebResult<Self> {
        let (user, form, _) = Self::read(request, state).await?;
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

/// Refuses a state-changing request another site's page made the browser send: a second
/// wall behind the CSRF tokens and the `SameSite=Strict` cookies. Refused are
/// `Sec-Fetch-Site: cross-site`, an `Origin` that is not this host (the `Host` header, or on
/// HTTP/2 the `:authority`, which arrives as the URI's), `Origin: null` (what a sandboxed
/// frame, a `data:` page or a redirect across sites sends), and an `Origin` when the request
/// names no host at all to compare it with (HTTP/1.0).
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
    // An API call with a bearer token carries no ambient credential: another site cannot
    // make a browser send one.
    let bearer = headers
        .get(header::AUTHORIZATION)
        .is_some_and(|v| v.as_bytes().starts_with(b"Bearer "));
    if !bearer && is_cross_site(headers, request.uri()) {
        return WebError::Forbidden("cross-site request refused".into()).into_response();
    }
    next.run(request).await
}

fn is_cross_site(headers: &HeaderMap, uri: &axum::http::Uri) -> bool {
    let cross = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "cross-site");
    let Some(origin) = headers.get(header::ORIGIN) else {
        return cross;
    };
    let Some(origin) = origin
        .to_str()
        .ok()
        .filter(|o| !o.eq_ignore_ascii_case("null"))
        .and_then(|o| url::Url::parse(o).ok())
    else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| uri.authority().map(|a| a.as_str().to_owned()));
    let Some(host) = host else {
        return true;
    };
    let origin_host = match origin.port() {
        Some(port) => format!("{}:{port}", origin.host_str().unwrap_or_default()),
        None => origin.host_str().unwrap_or_default().to_owned(),
    };
    cross || !origin_host.eq_ignore_ascii_case(&host)
}

/// The client's address: the peer's, or, when the peer is one of the trusted proxies, the
/// address the proxies' `X-Forwarded-For` (else `Forwarded`) says they served: read from the
/// right, the first that is not itself a trusted proxy. Entries to its left were written by
/// the client and are never believed.
pub(crate) struct ClientAddr(pub Option<IpAddr>);

impl FromRequestParts<AdminState> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AdminState,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        Ok(ClientAddr(peer.map(|peer| {
            client_ip(peer, &parts.headers, &state.settings().trusted_proxies)
        })))
    }
}

fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[ipnet::IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let hops = forwarded_hops(headers);
    let mut client = peer;
    for hop in hops.iter().rev() {
        match hop {
            Some(ip) if is_trusted(ip) => client = *ip,
            Some(ip) => return *ip,
            // An entry that is no address ("unknown", an obfuscated name): nothing to its
            // left can be told apart, so the last proxy stands for the client.
            None => return client,
        }
    }
    client
}

/// The addresses a proxy chain reports, leftmost (the client's claim) first: from
/// `X-Forwarded-For`, the header proxies write most, else from the `for=` of `Forwarded`
/// (RFC 7239). `None` for an entry that is no address.
fn forwarded_hops(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let values = |name| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let xff = values(header::HeaderName::from_static("x-forwarded-for"));
    if !xff.is_empty() {
        return xff.iter().map(|v| parse_node(v)).collect();
    }
    values(header::FORWARDED)
        .iter()
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (key, value) = pair.trim().split_once('=')?;
                key.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| parse_node(value.trim().trim_matches('"')))
            })
        })
        .collect()
}

/// An address as proxies write it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`,
/// `[2001:db8::1]:4711`.
fn parse_node(node: &str) -> Option<IpAddr> {
    node.parse::<IpAddr>()
        .ok()
        .or_else(|| node.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| {
            node.strip_prefix('[')
                .and_then(|rest| rest.split_once(']'))
                .and_then(|(ip, _)| ip.parse().ok())
        })
}

/// The device cookie in `headers`, if any (checked against the user name by the limiter).
pub(crate) fn device_cookie_value<'a>(
    state: &AdminState,
    headers: &'a HeaderMap,
) -> Option<&'a str> {
    cookie(headers, device_cookie_name(state.settings().secure_cookies))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_the_first_untrusted_hop_from_the_right() {
        let trusted: Vec<ipnet::IpNet> =
            vec!["10.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.append(*k, v.parse().unwrap());
            }
            h
        };
        let spoofed = headers(&[("x-forwarded-for", "6.6.6.6, 203.0.113.9, 10.0.0.2")]);
        // A peer that is no proxy: its headers are not believed.
        assert_eq!(
            client_ip(ip("198.51.100.1"), &spoofed, &trusted),
            ip("198.51.100.1")
        );
        // Through two proxies: the client's own claim (6.6.6.6) is skipped.
        assert_eq!(
            client_ip(ip("10.0.0.1"), &spoofed, &trusted),
            ip("203.0.113.9")
        );
        // Two headers are one list.
        let split = headers(&[
            ("x-forwarded-for", "6.6.6.6"),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(
            client_ip(ip("10.0.0.1"), &split, &trusted),
            ip("203.0.113.9")
        );
        // RFC 7239, with ports, quotes and IPv6.
        let forwarded = headers(&[(
            "forwarded",
            "for=6.6.6.6;proto=https, For=\"[2001:db8::17]:4711\";by=10.0.0.1",
        )]);
        assert_eq!(
            client_ip(ip("::1"), &forwarded, &trusted),
            ip("2001:db8::17")
        );
        let with_port = headers(&[("forwarded", "for=\"192.0.2.60:8080\"")]);
        assert_eq!(client_ip(ip("::1"), &with_port, &trusted), ip("192.0.2.60"));
        // Nothing said, or nothing but proxies, or an entry that is no address: the last
        // proxy stands for the client.
        assert_eq!(
            client_ip(ip("10.0.0.1"), &HeaderMap::new(), &trusted),
            ip("10.0.0.1")
        );
        let proxies = headers(&[("x-forwarded-for", "10.1.1.1, 10.0.0.2")]);
        assert_eq!(
            client_ip(ip("10.0.0.1"), &proxies, &trusted),
            ip("10.1.1.1")
        );
        let unknown = headers(&[("x-forwarded-for", "203.0.113.9, unknown, 10.0.0.2")]);
        assert_eq!(
            client_ip(ip("10.0.0.1"), &unknown, &trusted),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn origins_must_name_this_host() {
        let check = |origin: Option<&str>, host: Option<&str>, uri: &str| {
            let mut h = HeaderMap::new();
            if let Some(o) = origin {
                h.insert(header::ORIGIN, o.parse().unwrap());
            }
            if let Some(host) = host {
                h.insert(header::HOST, host.parse().unwrap());
            }
            is_cross_site(&h, &uri.parse().unwrap())
        };
        assert!(!check(
            Some("http://localhost:8080"),
            Some("localhost:8080"),
            "/login"
        ));
        assert!(
            !check(None, Some("localhost"), "/login"),
            "no Origin: the tokens decide"
        );
        assert!(check(
            Some("https://evil.example"),
            Some("localhost"),
            "/login"
        ));
        assert!(
            check(Some("null"), Some("localhost"), "/login"),
            "Origin: null"
        );
        // HTTP/2: no Host, the :authority is the URI's.
        assert!(!check(
            Some("https://copyhound.example"),
            None,
            "https://copyhound.example/login"
        ));
        assert!(check(
            Some("https://evil.example"),
            None,
            "https://copyhound.example/login"
        ));
        // HTTP/1.0 with no Host: nothing to compare an Origin with.
        assert!(check(Some("https://copyhound.example"), None, "/login"));
    }

    #[test]
    fn csrf_tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
