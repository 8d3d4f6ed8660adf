//! The one web error: handlers return it with `?`, and storage and pipeline errors map to a
//! status code here, once.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use jobs::chain;

/// What a request failed with, as the person asking sees it.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// Not logged in: pages send the browser to the login form, the API answers 401.
    #[error("log in first")]
    Unauthenticated {
        /// Where to come back to after logging in.
        next: String,
    },
    /// Logged in, but the role does not allow it.
    #[error("{0}")]
    Forbidden(String),
    /// No such row.
    #[error("{0}")]
    NotFound(String),
    /// Input refused; the message says what is allowed.
    #[error("{0}")]
    BadRequest(String),
    /// The move is not allowed from the current state (a case already dismissed, a notice
    /// already sent); the message says why.
    #[error("{0}")]
    Conflict(String),
    /// The route takes other methods; the message names them.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// The request's body is larger than its route takes; the message says the limit.
    #[error("{0}")]
    TooLarge(String),
    /// The body is not of the media type the route takes; the message says which it takes.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// Too many failed logins; try again later.
    #[error("too many attempts; try again in {0} seconds")]
    TooManyRequests(u64),
    /// Anything else: logged with its chain, shown without details.
    #[error("internal error")]
    Internal(String),
}

impl WebError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            WebError::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            WebError::Forbidden(_) => StatusCode::FORBIDDEN,
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Conflict(_) => StatusCode::CONFLICT,
            WebError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            WebError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            WebError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            WebError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A stable machine-readable name of the kind of error (the API's `error.code`).
    pub fn code(&self) -> &'static str {
        match self {
            WebError::Unauthenticated { .. } => "unauthenticated",
            WebError::Forbidden(_) => "forbidden",
            WebError::NotFound(_) => "not_found",
            WebError::BadRequest(_) => "bad_request",
            WebError::Conflict(_) => "conflict",
            WebError::MethodNotAllowed(_) => "method_not_allowed",
            WebError::TooLarge(_) => "too_large",
            WebError::UnsupportedMediaType(_) => "unsupported_media_type",
            WebError::TooManyRequests(_) => "rate_limited",
            WebError::Internal(_) => "internal",
        }
    }

    pub(crate) fn internal(e: impl std::fmt::Display) -> Self {
        WebError::Internal(e.to_string())
    }

    pub(crate) fn bad(message: impl Into<String>) -> Self {
        WebError::BadRequest(message.into())
    }

    /// A 400's message with `prefix` before it (the field it is about); other errors as
    /// they are.
    #[must_use]
    pub(crate) fn prefixed(self, prefix: &str) -> Self {
        match self {
            WebError::BadRequest(message) => WebError::BadRequest(format!("{prefix}{message}")),
            other => other,
        }
    }

    /// Logs an internal error with its chain; the person asking sees only the status.
    pub(crate) fn log(&self) {
        if let WebError::Internal(chain) = self {
            tracing::error!(error = %chain, "request failed");
        }
    }
}

impl From<store::Error> for WebError {
    fn from(e: store::Error) -> Self {
        match e {
            store::Error::NotFound { .. } => WebError::NotFound(e.to_string()),
            store::Error::Conflict(m) => WebError::Conflict(m),
            store::Error::InvalidInput(m) => WebError::BadRequest(m),
            other => WebError::Internal(chain(&other)),
        }
    }
}

impl From<jobs::Error> for WebError {
    fn from(e: jobs::Error) -> Self {
        if e.is_not_found() {
            return WebError::NotFound(chain(&e));
        }
        match e {
            jobs::Error::Store { source, doing } => match source {
                store::Error::Conflict(m) => WebError::Conflict(m),
                store::Error::InvalidInput(m) => WebError::BadRequest(m),
                other => WebError::Internal(format!("while {doing}: {}", chain(&other))),
            },
            jobs::Error::Notice(m) | jobs::Error::Page(m) => WebError::BadRequest(m),
            jobs::Error::Account(m) | jobs::Error::Refused(m) => WebError::BadRequest(m),
            jobs::Error::Settings(_) => WebError::BadRequest(e.to_string()),
            // What the person asked for is refused as given: settings, a URL, an address
            // the crawler will not fetch (the message names the setting that allows it).
            jobs::Error::Crawler(c)
                if matches!(
                    c.kind(),
                    crawler::ErrorKind::Config
                        | crawler::ErrorKind::InvalidUrl
                        | crawler::ErrorKind::AddressRefused
                ) =>
            {
                WebError::BadRequest(chain(&c))
            }
            other => WebError::Internal(chain(&other)),
        }
    }
}

impl From<analytics::Error> for WebError {
    fn from(e: analytics::Error) -> Self {
        match e {
            analytics::Error::InvalidSince { .. } => WebError::BadRequest(e.to_string()),
            other => WebError::Internal(chain(&other)),
        }
    }
}

impl From<askama::Error> for WebError {
    fn from(e: askama::Error) -> Self {
        WebError::Internal(format!("rendering a page: {}", chain(&e)))
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        self.log();
        if let WebError::Unauthenticated { next } = &self {
            let to = format!("/login?next={}", crate::render::urlencode(next));
            return Redirect::to(&to).into_response();
        }
        let status = self.status();
        let mut response = crate::render::error_page(status, &self.to_string());
        if let WebError::TooManyRequests(seconds) = self {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(seconds),
            );
        }
        response
    }
}

/// This crate's handler result.
pub type WebResult<T> = Result<T, WebError>;
