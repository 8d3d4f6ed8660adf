//! The stylesheet, script and icon, compiled into the binary so one file runs the UI.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AdminState;

const FILES: &[(&str, &str, &[u8])] = &[
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("../../../web/static/app.css"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../../web/static/app.js"),
    ),
    // Linked from every page: without it a browser asks for /favicon.ico on each one and
    // logs the 404.
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../../../web/static/favicon.svg"),
    ),
];

pub(crate) fn routes() -> Router<AdminState> {
    Router::new().route("/static/{file}", get(file))
}

async fn file(Path(name): Path<String>) -> Response {
    let Some((_, content_type, body)) = FILES.iter().find(|(n, _, _)| *n == name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut response = (*body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // An hour: files change only with the binary, and a restart is rare.
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}
