//! What every API handler shares: the one error shape ([`ErrorBody`], [`ApiError`]), the
//! extractors that answer in it ([`ApiJson`], [`ApiQuery`], [`ApiPath`], [`ApiUser`]), the
//! pages of a listing (`page_of!`, [`PageQuery`]) and the answers to a call that queues or
//! creates something.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use store::{Role, UserRecord};
use utoipa::ToSchema;

use crate::error::WebError;
use crate::state::AdminState;

/// What the JSON extractor says of a body over the route's limit.
pub(crate) const TOO_LARGE: &str = "the body is larger than this call takes: a call at most [server] \
                         max_form_bytes, an upload's file at most max_upload_bytes";

/// What the JSON extractor says of a body sent as another media type.
pub(crate) const SEND_JSON: &str = "send the body as JSON with `Content-Type: application/json`";

/// Marks a response as an [`ErrorBody`] already, so that the API's error layer leaves it be.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shaped;

/// An [`ErrorBody`] answer.
pub(crate) fn shaped(status: StatusCode, code: String, message: String) -> Response {
    let body = ErrorBody {
        error: ErrorDetail { code, message },
    };
    let mut response = (status, Json(body)).into_response();
    response.extensions_mut().insert(Shaped);
    response
}

/// Every error the API answers with.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorDetail {
    /// Stable: `unauthenticated`, `forbidden`, `not_found`, `method_not_allowed`,
    /// `bad_request`, `conflict`, `too_large`, `unsupported_media_type`, `rate_limited` or
    /// `internal`; for a status none of these stands for, its reason in snake case
    /// (`service_unavailable`).
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
        let mut response = shaped(error.status(), error.code().to_owned(), message);
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
                Err(ApiError(WebError::TooLarge(TOO_LARGE.into())))
            }
            Err(JsonRejection::MissingJsonContentType(_)) => {
                Err(ApiError(WebError::UnsupportedMediaType(SEND_JSON.into())))
            }
            Err(e) => Err(ApiError(WebError::bad(format!(
                "bad JSON body: {}",
                e.body_text()
            )))),
        }
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

pub(crate) fn query_rejection(e: &QueryRejection) -> String {
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
        let (record, user) = accounts::api_token(state.store(), token)
            .await?
            .ok_or_else(unauthenticated)?;
        Ok(ApiUser {
            actor: format!("{} (api-token:{})", user.username, record.prefix),
            user,
        })
    }
}

/// Declares the page type of a listing, `items` and `next_cursor`: a component of its own
/// per listing rather than a generic `Paged<T>`, whose schema utoipa writes with `T`'s schema
/// inlined (a generated client would get a second class for each item type).
macro_rules! page_of {
    ($(#[$doc:meta])* $page:ident, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug, serde::Serialize, utoipa::ToSchema)]
        pub(crate) struct $page {
            /// The rows of this page.
            pub items: Vec<$item>,
            /// Pass as `cursor` to get the next page; absent on the last page.
            #[serde(skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<String>,
        }
    };
}
pub(crate) use page_of;

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
    pub(crate) fn limit(&self) -> ApiResult<u32> {
        match self.limit {
            None => Ok(DEFAULT_LIMIT),
            Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
            Some(n) => Err(ApiError(WebError::bad(format!(
                "limit: 1 to {MAX_LIMIT}, not {n}"
            )))),
        }
    }

    pub(crate) fn cursor(&self) -> Option<&str> {
        self.cursor
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
    }
}

pub(crate) fn bad_cursor() -> ApiError {
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

pub(crate) fn accepted<T: Serialize>(body: T) -> (StatusCode, Json<T>) {
    (StatusCode::ACCEPTED, Json(body))
}

pub(crate) fn created<T: Serialize>(body: T) -> (StatusCode, Json<T>) {
    (StatusCode::CREATED, Json(body))
}
