//! copyhound's admin web UI and JSON API: the pages a rights team works in (dashboard, works,
//! suspect sites, the review queue, case detail with the aligned passages, notices,
//! analytics, users, jobs, the audit log) and `/api/v1` for scripts, over the same
//! `pipeline` and `analytics` calls the CLI makes.
//!
//! It sits on top of the flow: handlers parse a request, check who is asking, call
//! `pipeline`/`analytics`/the store traits, and render an askama template (under
//! `web/templates/admin`) or JSON. Nothing here is logic the CLI also needs.
//!
//! - [`AdminState`]: the store and settings every handler shares (cheap to clone).
//! - [`router`]: every route, with the security headers and the body limit.
//! - [`openapi_json`]: the API's OpenAPI 3.1 document, also served at
//!   `/api/v1/openapi.json`.
//! - [`serve`]: runs the router on a bound listener until a shutdown future resolves, so a
//!   test binds `127.0.0.1:0` and polls for readiness; slow and idle connections are closed
//!   and their number capped.
//!
//! ```no_run
//! # async fn demo(store: store::Store) -> std::io::Result<()> {
//! let state = admin::AdminState::new(store, admin::AdminSettings::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! admin::serve(listener, state, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```
//!
//! # Inside, each module above what it uses
//!
//! | module | holds |
//! |---|---|
//! | `service` | one process serving the UI with its workers |
//! | the crate root | the router, its layers (security headers, errors framed in the page's frame) |
//! | `pages/`, `api/` | the HTML pages and the JSON API, side by side; neither imports the other. `api/common` holds the API's error shape, extractors and listing pages |
//! | `actions/` | what a page and the API both do (approve a candidate, watch or edit a site, queue an import, draft a notice, a case's evidence zip): one function each, audited |
//! | `form`, `ops` | forms refused where they were typed; `/healthz`, `/readyz`, `/metrics` |
//! | `auth`, `server`, `statics` | who is asking (sessions, roles, CSRF, client address); the hardened HTTP server; the stylesheet and scripts |
//! | `state` | what every handler shares: the store, settings, caches, the login limiter |
//! | `limiter` | login budgets per name and address, per address and per device cookie |
//! | `error` | [`WebError`], the one error every handler returns |
//! | `render`, `i18n`, `said` | the page frame, the error page, formatters and charts; the two languages; the server's own sentences said in them, values kept apart as data |
//!
//! A new operation that both a page and the API offer goes in `actions/`; a page's handler
//! and template in `pages/`, the API's handler in `api/`.

mod actions;
mod api;
mod auth;
mod error;
mod form;
mod i18n;
mod limiter;
mod ops;
mod pages;
mod render;
mod said;
mod server;
pub mod service;
mod state;
mod statics;

use std::future::Future;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware;

pub use api::openapi_json;
pub use error::WebError;
pub use i18n::{LABELS, Lang};
pub use limiter::LoginLimits;
pub use ops::{METRICS_CONTENT_TYPE, serve_ops};
pub use said::{MESSAGES, Part, Said};
pub use state::{AdminSettings, AdminState, OpsSettings, RetentionOutlook};

/// The strict policy every response carries: nothing from another origin, no inline script
/// or style (pirate page text is escaped, and even a slip could not run), no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

/// Every route of the UI and the API. Request bodies are limited to `max_form_bytes`, but
/// for the two that upload a work (`POST /works`, `POST /api/v1/works`), which may carry
/// `max_upload_bytes`.
pub fn router(state: AdminState) -> Router {
    let settings = state.settings();
    let (form, upload) = (settings.max_form_bytes, settings.max_upload_bytes);
    pages::routes(upload)
        .merge(api::routes(upload))
        .merge(statics::routes())
        .merge(ops::routes())
        .fallback(no_such_page)
        .layer(middleware::from_fn_with_state(state.clone(), framed_errors))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::reject_cross_site,
        ))
        .layer(middleware::from_fn(api::one_error_shape))
        .layer(middleware::from_fn(security_headers))
        .layer(DefaultBodyLimit::max(form))
        .with_state(state)
}

/// Serves [`router`] on `listener` until `shutdown` resolves; requests in flight finish
/// first. Connections are held to the settings' `header_read_timeout`, `request_timeout`
/// and `max_connections` (the `server` module).
///
/// # Errors
/// The listener failed.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AdminState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = server::ConnectionLimits::of(state.settings());
    server::serve(listener, router(state), &limits, shutdown).await
}

async fn security_headers(
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let fixed: [(HeaderName, &'static str); 5] = [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
        (
            HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    // Pages show evidence and who did what: never kept by a shared cache.
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// Shows a page's error inside the app's frame: with the navigation and in the language of
/// the person logged in (the handler that failed may not have known who that was), or in
/// the browser's language for a guest. API responses are JSON and pass untouched.
async fn framed_errors(
    axum::extract::State(state): axum::extract::State<crate::state::AdminState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let path = request.uri().path();
    if crate::api::is_api_path(path) || crate::server::OPS_PATHS.contains(&path) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let mut asking = axum::http::Request::new(());
    *asking.headers_mut() = parts.headers.clone();
    *asking.uri_mut() = parts.uri.clone();
    let response = next
        .run(axum::extract::Request::from_parts(parts, body))
        .await;
    let shown = match response.extensions().get::<render::ErrorShown>().cloned() {
        Some(shown) => shown.message().to_owned(),
        None if is_bare_rejection(&response) => {
            // An extractor's refusal (a malformed id in the path, a query missing a field):
            // axum writes it as plain text; it is shown as any other refusal.
            let (parts, body) = response.into_parts();
            let said = axum::body::to_bytes(body, BARE_REJECTION_BYTES)
                .await
                .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
                .unwrap_or_default();
            let message = if said.is_empty() {
                parts
                    .status
                    .canonical_reason()
                    .unwrap_or("bad request")
                    .to_owned()
            } else {
                said
            };
            let response = axum::response::Response::from_parts(parts, axum::body::Body::empty());
            return frame(&state, asking, response, &message).await;
        }
        None => return response,
    };
    frame(&state, asking, response, &shown).await
}

/// Longest rejection text read to be shown again (axum's are one line).
const BARE_REJECTION_BYTES: usize = 4096;

/// A client error axum's extractors or router answered with text of their own (or nothing),
/// not a page of ours.
fn is_bare_rejection(response: &axum::response::Response) -> bool {
    let content_type = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    response.status().is_client_error() && content_type.is_none_or(|t| t.starts_with("text/plain"))
}

/// `response`, an error page, again inside the frame of the person `asking`.
async fn frame(
    state: &crate::state::AdminState,
    asking: axum::http::Request<()>,
    response: axum::response::Response,
    message: &str,
) -> axum::response::Response {
    let (mut asking, ()) = asking.into_parts();
    use axum::extract::FromRequestParts;
    let ctx = match auth::CurrentUser::from_request_parts(&mut asking, state).await {
        Ok(user) => user.ctx(""),
        Err(_) => render::Ctx::guest(Lang::choose(None, &asking.headers)),
    };
    let (old, _) = response.into_parts();
    let mut framed = render::error_page_in(ctx, old.status, message);
    for (name, value) in &old.headers {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            framed.headers_mut().insert(name.clone(), value.clone());
        }
    }
    framed
}

/// What an address no route answers gets: the 404 page (framed by [`framed_errors`]).
async fn no_such_page(uri: axum::http::Uri) -> crate::error::WebError {
    crate::error::WebError::NotFound(format!("there is no page at {}", uri.path()))
}
