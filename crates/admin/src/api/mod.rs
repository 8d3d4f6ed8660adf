//! The JSON API under `/api/v1`, for scripts and other systems: the same works, sites,
//! crawls, cases, notices, reports and figures the pages show, over the same `pipeline`,
//! `analytics` and store calls.
//!
//! - Every call but the OpenAPI document needs `Authorization: Bearer <token>`; tokens come
//!   from `copyhound users token` or the users page, and act with their user's role.
//!   A bearer token is no ambient credential a browser sends by itself, so the API needs no
//!   CSRF token.
//! - Errors have one shape, [`ErrorBody`]: `{"error": {"code": "...", "message": "..."}}`,
//!   the code one of [`WebError::code`]'s names.
//! - Listings are pages of [`Paged`]: `items` and `next_cursor`, an opaque string to pass
//!   back as `cursor` (absent on the last page).
//! - The OpenAPI 3.1 document, generated from these handlers, is at `/api/v1/openapi.json`.

mod candidates;
mod cases;
mod notices;
mod reports;
mod sites;
mod works;

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use store::{Role, UserRecord};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::WebError;
use crate::state::AdminState;

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
    let (router, doc) = api_router(upload_limit).split_for_parts();
    let doc = Arc::new(
        doc.to_pretty_json()
            .expect("the OpenAPI document is plain data and always serialises"),
    );
    router
        .route(
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
        .route(&format!("{PREFIX}/{{*rest}}"), any(unknown_route))
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
    api_router(crate::AdminSettings::default().max_upload_bytes)
        .into_openapi()
        .to_pretty_json()
        .expect("the OpenAPI document is plain data and always serialises")
}

async fn unknown_route() -> ApiError {
    ApiError(WebError::NotFound(
        "no such API route: see /api/v1/openapi.json".into(),
    ))
}

/// Every error the API answers with.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorDetail {
    /// Stable: `unauthenticated`, `forbidden`, `not_found`, `bad_request`, `conflict`,
    /// `too_large`, `rate_limited` or `internal`.
    code: String,
    /// For people: what was wrong and what is allowed.
    message: String,
}

/// A failed API call: a [`WebError`] answered as JSON.
#[derive(Debug)]
pub(crate) struct ApiError(pub WebError);

impl<E: Into<WebError>> From<E> for ApiError {
    fn from(e: E) -> Self {
        ApiError(e.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let error = self.0;
        error.log();
        let message = match &error {
            WebError::Unauthenticated { .. } => "send `Authorization: Bearer <token>` with a \
                token from `copyhound users token NAME` or the users page; this one is \
                missing, unknown, revoked or expired"
                .to_owned(),
            other => other.to_string(),
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: error.code().to_owned(),
                message,
            },
        };
        let mut response = (error.status(), Json(body)).into_response();
        let headers = response.headers_mut();
        match error {
            WebError::Unauthenticated { .. } => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"copyhound\""),
                );
            }
            WebError::TooManyRequests(seconds) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            _ => {}
        }
        response
    }
}

/// This module's handler result.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

/// A JSON request body; a body that does not parse is a JSON `bad_request`.
pub(crate) struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> ApiResult<Self> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(ApiJson(value)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError(WebError::TooLarge(
                    "the body is larger than this call takes: a call at most [server] \
                     max_form_bytes, an upload's file at most max_upload_bytes"
                        .into(),
                )))
            }
            Err(e) => Err(ApiError(WebError::bad(json_rejection(&e)))),
        }
    }
}

fn json_rejection(e: &JsonRejection) -> String {
    match e {
        JsonRejection::MissingJsonContentType(_) => {
            "send the body as JSON with `Content-Type: application/json`".into()
        }
        other => format!("bad JSON body: {}", other.body_text()),
    }
}

/// A query string; one that does not parse is a JSON `bad_request`.
pub(crate) struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> ApiResult<Self> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(ApiQuery(value)),
            Err(e) => Err(ApiError(WebError::bad(query_rejection(&e)))),
        }
    }
}

fn query_rejection(e: &QueryRejection) -> String {
    format!("bad query string: {}", e.body_text())
}

/// A path parameter; one that does not parse (`/cases/abc`) is a JSON `bad_request`.
pub(crate) struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> ApiResult<Self> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(ApiPath(value)),
            Err(e) => Err(ApiError(WebError::bad(format!(
                "bad path: {}",
                e.body_text()
            )))),
        }
    }
}

/// Who is calling: the user behind the bearer token.
#[derive(Debug, Clone)]
pub(crate) struct ApiUser {
    user: UserRecord,
    actor: String,
}

impl ApiUser {
    /// Refuses unless the token's user has at least `role`.
    pub(crate) fn require(&self, role: Role) -> ApiResult<()> {
        if self.user.role >= role {
            Ok(())
        } else {
            Err(ApiError(WebError::Forbidden(format!(
                "this needs the {role} role; the token's user {} is {}",
                self.user.username, self.user.role
            ))))
        }
    }

    /// The name the audit log records: the user and which of their tokens.
    pub(crate) fn actor(&self) -> &str {
        &self.actor
    }
}

impl FromRequestParts<AdminState> for ApiUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AdminState) -> ApiResult<Self> {
        let unauthenticated = || {
            ApiError(WebError::Unauthenticated {
                next: String::new(),
            })
        };
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty() && t.len() <= 200)
            .ok_or_else(unauthenticated)?;
        let (record, user) = pipeline::accounts::api_token(state.store(), token)
            .await?
            .ok_or_else(unauthenticated)?;
        Ok(ApiUser {
            actor: format!("{} (api-token:{})", user.username, record.prefix),
            user,
        })
    }
}

/// One page of a listing.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Paged<T: ToSchema> {
    /// The rows of this page.
    pub items: Vec<T>,
    /// Pass as `cursor` to get the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// How many rows a page holds when `limit` is not given, and at most.
const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 500;

/// `cursor` and `limit` of a listing's query string.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
    /// Rows per page, 1 to 500 (default 50).
    limit: Option<u32>,
}

impl PageQuery {
    fn limit(&self) -> ApiResult<u32> {
        match self.limit {
            None => Ok(DEFAULT_LIMIT),
            Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
            Some(n) => Err(ApiError(WebError::bad(format!(
                "limit: 1 to {MAX_LIMIT}, not {n}"
            )))),
        }
    }

    fn cursor(&self) -> Option<&str> {
        self.cursor
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
    }
}

fn bad_cursor() -> ApiError {
    ApiError(WebError::bad(
        "cursor: pass back the next_cursor of a previous page",
    ))
}

/// A job queued by a call (an import, a crawl, a re-check).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Queued {
    /// The job; follow it at `/api/v1/jobs/{id}`.
    pub job_id: i64,
}

fn accepted<T: Serialize>(body: T) -> (StatusCode, Json<T>) {
    (StatusCode::ACCEPTED, Json(body))
}

fn created<T: Serialize>(body: T) -> (StatusCode, Json<T>) {
    (StatusCode::CREATED, Json(body))
}
