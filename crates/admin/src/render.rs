//! Rendering: the context every page's layout reads, one helper from a template to `Html`,
//! the error page, and the small formatters templates call.

use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, Utc};
use store::{Role, UserRecord};

use crate::auth::CurrentUser;
use crate::error::WebResult;
use crate::i18n::Lang;

/// What the layout (`admin/base.html`) needs: the language, who is logged in, the CSRF
/// token for the logout form and the menu entry to highlight.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The page's language.
    pub lang: Lang,
    /// Who is logged in (none on the login page).
    pub user: Option<UserRecord>,
    /// The session's CSRF token.
    pub csrf: String,
    /// The menu entry of this page (`cases`, `works`, ...).
    pub nav: &'static str,
    /// The time zone times are shown in ([`Ctx::when`]).
    pub zone: jiff::tz::TimeZone,
}

impl Ctx {
    pub fn new(user: &CurrentUser, nav: &'static str) -> Self {
        Ctx {
            lang: user.lang,
            user: Some(user.user.clone()),
            csrf: user.csrf.clone(),
            nav,
            zone: user.zone.clone(),
        }
    }

    pub fn guest(lang: Lang) -> Self {
        Ctx {
            lang,
            user: None,
            csrf: String::new(),
            nav: "",
            zone: jiff::tz::TimeZone::UTC,
        }
    }

    /// A time in the time zone of the settings (`notices.time_zone`), to the minute:
    /// `{{ ctx.when(case.first_seen_at) }}`. In UTC `2026-11-27 14:05 UTC`, elsewhere with
    /// the offset, `2026-11-27 22:05 +08:00`.
    pub fn when(&self, t: &DateTime<Utc>) -> String {
        pipeline::overrides::local_time(*t, &self.zone, false)
    }

    /// An optional time as [`Ctx::when`] writes it, or a dash.
    pub fn when_opt(&self, t: &Option<DateTime<Utc>>) -> String {
        t.as_ref().map_or_else(|| "–".to_owned(), |t| self.when(t))
    }

    /// The label `key` in the page's language.
    pub fn t(&self, key: &str) -> &'static str {
        self.lang.t(key)
    }

    /// The label of a status (`new`, `confirmed`, ...).
    pub fn status(&self, status: &str) -> &'static str {
        self.lang.t(&format!("status.{status}"))
    }

    pub fn can_review(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.role >= Role::Reviewer)
    }

    pub fn is_admin(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.role >= Role::Admin)
    }

    /// The CSS class of a menu entry.
    pub fn nav_class(&self, entry: &str) -> &'static str {
        if self.nav == entry { "active" } else { "" }
    }
}

/// Renders a page.
pub fn page(template: &impl Template) -> WebResult<Html<String>> {
    Ok(Html(template.render()?))
}

#[derive(Template)]
#[template(path = "admin/error.html")]
struct ErrorPage<'a> {
    ctx: Ctx,
    status: u16,
    message: &'a str,
}

impl ErrorPage<'_> {
    /// The heading's label: what this status means to the person reading.
    fn title(&self) -> &'static str {
        self.ctx.t(match self.status {
            403 => "error.forbidden",
            404 => "error.not_found",
            _ => "error.title",
        })
    }
}

/// An error page a handler answered with: what [`framed_errors`] shows again inside the
/// app's frame when the person asking is logged in.
#[derive(Debug, Clone)]
pub(crate) struct ErrorShown {
    message: String,
}

/// The error page: the status and the message, escaped, in `ctx`'s frame.
pub fn error_page_in(ctx: Ctx, status: StatusCode, message: &str) -> Response {
    let page = ErrorPage {
        ctx,
        status: status.as_u16(),
        message,
    };
    let mut response = match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(_) => (status, message.to_owned()).into_response(),
    };
    response.extensions_mut().insert(ErrorShown {
        message: message.to_owned(),
    });
    response
}

/// The error page without a user (a guest's, or before [`framed_errors`] frames it).
pub fn error_page(status: StatusCode, message: &str) -> Response {
    error_page_in(Ctx::guest(Lang::En), status, message)
}

/// Shows a page's error inside the app's frame: with the navigation and in the language of
/// the person logged in (the handler that failed may not have known who that was), or in
/// the browser's language for a guest. API responses are JSON and pass untouched.
pub(crate) async fn framed_errors(
    axum::extract::State(state): axum::extract::State<crate::state::AdminState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if request.uri().path().starts_with(crate::api::PREFIX) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let mut asking = axum::http::Request::new(());
    *asking.headers_mut() = parts.headers.clone();
    *asking.uri_mut() = parts.uri.clone();
    let response = next
        .run(axum::extract::Request::from_parts(parts, body))
        .await;
    let Some(shown) = response.extensions().get::<ErrorShown>().cloned() else {
        return response;
    };
    let (mut asking, ()) = asking.into_parts();
    use axum::extract::FromRequestParts;
    let ctx = match CurrentUser::from_request_parts(&mut asking, &state).await {
        Ok(user) => Ctx::new(&user, ""),
        Err(_) => Ctx::guest(Lang::choose(None, &asking.headers)),
    };
    let (old, _) = response.into_parts();
    let mut framed = error_page_in(ctx, old.status, &shown.message);
    for (name, value) in &old.headers {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            framed.headers_mut().insert(name.clone(), value.clone());
        }
    }
    framed
}

/// What an address no route answers gets: the 404 page (framed by [`framed_errors`]).
pub(crate) async fn no_such_page(uri: axum::http::Uri) -> crate::error::WebError {
    crate::error::WebError::NotFound(format!("there is no page at {}", uri.path()))
}

/// `s` percent-encoded for a query string value.
pub fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A time as the UI shows it: minutes, UTC.
pub fn when(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// An optional time, or a dash.
pub fn when_opt(t: &Option<DateTime<Utc>>) -> String {
    t.as_ref().map_or_else(|| "–".to_owned(), when)
}

/// A share 0..1 as a whole percentage.
pub fn pct(share: &f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// One bar of a server-side SVG bar chart, in the chart's own coordinates.
#[derive(Debug, Clone)]
pub struct Bar {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    pub label: String,
    pub value: u64,
}

/// Bars for `values` in a `width` × `height` box (value 0 draws no bar; the tallest fills
/// the height).
pub fn bars(values: &[(String, u64)], width: u32, height: u32) -> Vec<Bar> {
    let max = values.iter().map(|(_, v)| *v).max().unwrap_or(0).max(1);
    let n = u32::try_from(values.len()).unwrap_or(u32::MAX).max(1);
    let slot = (width / n).max(1);
    values
        .iter()
        .enumerate()
        .map(|(i, (label, value))| {
            let h = u32::try_from(u64::from(height) * value / max).unwrap_or(height);
            Bar {
                x: u32::try_from(i).unwrap_or(0) * slot,
                y: height - h,
                width: slot.saturating_sub(1).max(1),
                height: h,
                label: label.clone(),
                value: *value,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_fill_the_box_by_the_largest_value() {
        let b = bars(
            &[("a".into(), 0), ("b".into(), 5), ("c".into(), 10)],
            300,
            100,
        );
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].height, b[1].height, b[2].height), (0, 50, 100));
        assert_eq!((b[1].x, b[2].x, b[2].y), (100, 200, 0));
        assert!(bars(&[], 300, 100).is_empty());
    }

    #[test]
    fn the_error_page_escapes_its_message() {
        let response = error_page(StatusCode::BAD_REQUEST, "<script>alert(1)</script>");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
}
