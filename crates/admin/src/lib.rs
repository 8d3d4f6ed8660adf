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

mod api;
mod auth;
mod error;
mod form;
mod i18n;
mod ops;
mod pages;
mod render;
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
pub use auth::LoginLimits;
pub use error::WebError;
pub use i18n::{LABELS, Lang};
pub use ops::{METRICS_CONTENT_TYPE, OpsSettings, RetentionOutlook, serve_ops};
pub use state::{AdminSettings, AdminState};

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
        .fallback(render::no_such_page)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            render::framed_errors,
        ))
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
