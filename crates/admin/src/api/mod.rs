//! The JSON API under `/api/v1`, for scripts and other systems: the same works, sites,
//! crawls, cases, notices, reports and figures the pages show, over the same `pipeline`,
//! `analytics` and store calls.
//!
//! - Every call but the OpenAPI document needs `Authorization: Bearer <token>`; tokens come
//!   from `copyhound users token` or the users page, and act with their user's role.
//!   A bearer token is no ambient credential a browser sends by itself, so the API needs no
//!   CSRF token.
//! - Errors have one shape, [`ErrorBody`](common::ErrorBody): `{"error": {"code": "...", "message": "..."}}`,
//!   the code one of [`WebError::code`]'s names: the handlers' own, and (through
//!   [`one_error_shape`]) those of the method router, the body limit, the cross-site check and
//!   unknown routes, anywhere under `/api/`. The document lists every status an operation
//!   answers; those any operation may answer are added to each by [`common_responses`].
//! - Listings are pages (declared by `page_of!`): `items` and `next_cursor`, an opaque
//!   string to pass back as `cursor` (absent on the last page).
//! - A case's evidence package is `GET /api/v1/cases/{id}/evidence`, the zip the case page
//!   downloads: the files `copyhound cases evidence` writes.
//! - The OpenAPI 3.1 document, generated from these handlers, is at `/api/v1/openapi.json`.

mod candidates;
mod cases;
mod common;
mod notices;
mod reports;
mod sites;
mod works;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::WebError;
use crate::state::AdminState;
use common::{ApiError, SEND_JSON, Shaped, TOO_LARGE, shaped};

/// Where the API lives.
pub const PREFIX: &str = "/api/v1";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "copyhound API",
        description = "Works under protection, suspect sites and their crawls, infringement \
                       cases with their evidence, takedown notices, reports and figures. \
                       Authenticate with `Authorization: Bearer <token>` (`copyhound users \
                       token NAME`). Errors are `{\"error\": {\"code\", \"message\"}}`; \
                       listings are paged by the opaque `next_cursor`."
    ),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    tags(
        (name = "works", description = "Protected works"),
        (name = "sites", description = "Suspect sites, their schedules and crawls"),
        (name = "candidates", description = "Sites discovery found, waiting for review"),
        (name = "cases", description = "Infringement cases and their review"),
        (name = "notices", description = "Takedown notices and re-checks"),
        (name = "reports", description = "Exports, figures and jobs"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// The API's routes and its OpenAPI document (served at `/api/v1/openapi.json`); a work
/// uploaded in a call's body may have `upload_limit` bytes.
pub(crate) fn routes(upload_limit: usize) -> Router<AdminState> {
    let (router, doc) = api(upload_limit);
    let doc = Arc::new(
        doc.to_pretty_json()
            .expect("the OpenAPI document is plain data and always serialises"),
    );
    router.route(
        &format!("{PREFIX}/openapi.json"),
        get(move || {
            let doc = Arc::clone(&doc);
            async move {
                (
                    [(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    )],
                    doc.as_str().to_owned(),
                )
            }
        }),
    )
}

/// The routes and the document that describes them, built together so neither can list an
/// operation the other lacks.
fn api(upload_limit: usize) -> (Router<AdminState>, utoipa::openapi::OpenApi) {
    let (router, mut doc) = api_router(upload_limit).split_for_parts();
    common_responses(&mut doc);
    (router, doc)
}

fn api_router(upload_limit: usize) -> OpenApiRouter<AdminState> {
    // The upload's body holds the file as base64 (4 bytes for 3) with a title and author.
    let (schemas, paths, works) = routes!(works::list, works::register);
    let upload_body = upload_limit.div_ceil(3) * 4 + (64 << 10);
    let works = works.layer(DefaultBodyLimit::max(upload_body));
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes((schemas, paths, works))
        .routes(routes!(works::get, works::update))
        .routes(routes!(sites::list, sites::add))
        .routes(routes!(sites::get, sites::update))
        .routes(routes!(sites::crawls, sites::crawl_now))
        .routes(routes!(sites::crawl))
        .routes(routes!(candidates::list))
        .routes(routes!(candidates::approve))
        .routes(routes!(candidates::ignore))
        .routes(routes!(cases::list))
        .routes(routes!(cases::get))
        .routes(routes!(cases::set_status))
        .routes(routes!(cases::evidence))
        .routes(routes!(notices::list))
        .routes(routes!(notices::create))
        .routes(routes!(notices::get, notices::update))
        .routes(routes!(notices::sent))
        .routes(routes!(reports::export))
        .routes(routes!(reports::stats))
        .routes(routes!(reports::job))
}

/// The OpenAPI document as JSON, as served at `/api/v1/openapi.json`.
pub fn openapi_json() -> String {
    api(crate::state::AdminSettings::default().max_upload_bytes)
        .1
        .to_pretty_json()
        .expect("the OpenAPI document is plain data and always serialises")
}

/// Lists on every operation the errors that any of them may answer, whatever its handler
/// does: written once here rather than on each handler, where one would be forgotten.
fn common_responses(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    let error = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build()
    };
    for item in doc.paths.paths.values_mut() {
        for operation in operations(item) {
            let responses = &mut operation.responses.responses;
            let mut add = |status: StatusCode, description: &str| {
                responses
                    .entry(status.as_str().to_owned())
                    .or_insert_with(|| error(description).into());
            };
            add(StatusCode::UNAUTHORIZED, "No valid token");
            add(
                StatusCode::METHOD_NOT_ALLOWED,
                "This path does not take the method; `Allow` lists those it takes",
            );
            add(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server failed; the details are in its log",
            );
            if operation.request_body.is_some() {
                add(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "The body is larger than the call takes",
                );
                add(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "The body is not sent as `application/json`",
                );
            }
        }
    }
}

/// The operations of a path item, whichever methods it has.
fn operations(
    item: &mut utoipa::openapi::PathItem,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
        &mut item.query,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}

/// Whether `path` is the API's: everything under `/api/`, known routes or not.
pub(crate) fn is_api_path(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// What an address under `/api/` that no route answers gets.
fn no_such_route(path: &str) -> WebError {
    WebError::NotFound(format!(
        "there is no API route {path}: see {PREFIX}/openapi.json for those there are"
    ))
}

/// Answers every error under `/api/` in the one [`ErrorBody`](common::ErrorBody) shape, whoever answered it:
/// the handlers do already; axum's method router (405 with an empty body), the router's
/// fallback (the HTML 404 page), the cross-site check (the HTML 403 page) and any layer that
/// answers on its own (a body or rate limit) do not. The status and headers (`Allow`,
/// `Retry-After`) are kept; the pages keep their own error page.
pub(crate) async fn one_error_shape(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if !is_api_path(request.uri().path()) {
        return next.run(request).await;
    }
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error())
        || response.extensions().get::<Shaped>().is_some()
    {
        return response;
    }
    let shown = response
        .extensions()
        .get::<crate::render::ErrorShown>()
        .map(|s| s.message().to_owned());
    let (old, _) = response.into_parts();
    let header = |name: header::HeaderName| {
        old.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let error = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allow = header(header::ALLOW).unwrap_or_default();
            WebError::MethodNotAllowed(format!(
                "{method} is not allowed on {path}: it takes {allow}"
            ))
        }
        StatusCode::NOT_FOUND => no_such_route(&path),
        StatusCode::PAYLOAD_TOO_LARGE => WebError::TooLarge(shown.unwrap_or(TOO_LARGE.into())),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            WebError::UnsupportedMediaType(shown.unwrap_or(SEND_JSON.into()))
        }
        StatusCode::TOO_MANY_REQUESTS => WebError::TooManyRequests(
            header(header::RETRY_AFTER)
                .and_then(|s| s.parse().ok())
                .unwrap_or(1),
        ),
        StatusCode::UNAUTHORIZED => WebError::Unauthenticated {
            next: String::new(),
        },
        StatusCode::FORBIDDEN => WebError::Forbidden(shown.unwrap_or("forbidden".into())),
        StatusCode::CONFLICT => WebError::Conflict(shown.unwrap_or("conflict".into())),
        StatusCode::BAD_REQUEST => WebError::bad(shown.unwrap_or("bad request".into())),
        other => {
            // A status no other WebError stands for (a timeout, an unavailable service): its
            // code is its reason, in the codes' snake case.
            let reason = other.canonical_reason().unwrap_or("error").to_lowercase();
            let code = if other == StatusCode::INTERNAL_SERVER_ERROR {
                // Logged where it happened; a second log line would say nothing more.
                WebError::Internal(String::new()).code().to_owned()
            } else {
                reason.replace([' ', '-'], "_")
            };
            let message = shown.unwrap_or(reason);
            return with_headers(shaped(status, code, message), &old.headers);
        }
    };
    with_headers(ApiError(error).into_response(), &old.headers)
}

/// `response` with the headers of the answer it replaces, but for those of its own body.
fn with_headers(mut response: Response, old: &axum::http::HeaderMap) -> Response {
    for (name, value) in old {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            response.headers_mut().insert(name.clone(), value.clone());
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use axum::middleware::from_fn;
    use tower::ServiceExt;

    use super::*;

    /// A router whose routes answer as layers do, bare statuses with a text body, behind
    /// [`one_error_shape`].
    fn bare() -> Router {
        let limited = || async {
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "7")],
                "slow down",
            )
        };
        Router::new()
            .route("/api/v1/limited", get(limited))
            .route(
                "/api/v1/busy",
                get(|| async { StatusCode::SERVICE_UNAVAILABLE }),
            )
            .route(
                "/api/v1/big",
                get(|| async { (StatusCode::PAYLOAD_TOO_LARGE, "length limit exceeded") }),
            )
            .route("/page", get(limited))
            .layer(from_fn(one_error_shape))
    }

    async fn answer(path: &str) -> (StatusCode, axum::http::HeaderMap, String) {
        let request = Request::get(path).body(Body::empty()).unwrap();
        let response = bare().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        (
            parts.status,
            parts.headers,
            String::from_utf8(body.to_vec()).unwrap(),
        )
    }

    fn error(body: &str) -> (String, String) {
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        (
            v["error"]["code"].as_str().unwrap().to_owned(),
            v["error"]["message"].as_str().unwrap().to_owned(),
        )
    }

    #[tokio::test]
    async fn a_layers_bare_refusal_gets_the_one_shape_and_keeps_its_headers() {
        let (status, headers, body) = answer("/api/v1/limited").await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
        assert_eq!(headers[header::RETRY_AFTER], "7");
        let (code, message) = error(&body);
        assert_eq!(code, "rate_limited");
        assert!(message.contains("7 seconds"), "{message}");

        let (status, _, body) = answer("/api/v1/big").await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        let (code, message) = error(&body);
        assert_eq!(code, "too_large");
        assert!(message.contains("max_form_bytes"), "{message}");
    }

    #[tokio::test]
    async fn a_status_without_a_web_error_is_coded_by_its_reason() {
        let (status, _, body) = answer("/api/v1/busy").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            error(&body),
            ("service_unavailable".into(), "service unavailable".into())
        );
    }

    #[tokio::test]
    async fn pages_keep_their_answers() {
        let (status, headers, body) = answer("/page").await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(body, "slow down");
        assert_ne!(headers[header::CONTENT_TYPE], "application/json");
    }
}
