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
}

impl Ctx {
    pub fn new(user: &CurrentUser, nav: &'static str) -> Self {
        Ctx {
            lang: user.lang,
            user: Some(user.user.clone()),
            csrf: user.csrf.clone(),
            nav,
        }
    }

    pub fn guest(lang: Lang) -> Self {
        Ctx {
            lang,
            user: None,
            csrf: String::new(),
            nav: "",
        }
    }

    /// The label `key` in the page's language.
    pub fn t(&self, key: &str) -> &'static str {
        self.lang.t(key)
    }

    /// The label of a status (`new`, `confirmed`, ...).
    pub fn status(&self, status: &str) -> &'static str {
        self.lang.t(&format!("status.{status}"))
    }

    /// An audit entry's action (`case.confirmed`, `site.pause`, ...) in the page's
    /// language; an action without a label shows as it is stored.
    pub fn action<'a>(&self, action: &'a str) -> &'a str {
        self.named("audit", action)
    }

    /// The label `prefix.value` for a value stored in data (a target type, a role), or the
    /// value itself when it has none.
    pub fn named<'a>(&self, prefix: &str, value: &'a str) -> &'a str {
        self.lang
            .lookup(&format!("{prefix}.{value}"))
            .unwrap_or(value)
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

/// The error page: the status and the message, escaped.
pub fn error_page(status: StatusCode, message: &str) -> Response {
    let page = ErrorPage {
        ctx: Ctx::guest(Lang::En),
        status: status.as_u16(),
        message,
    };
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(_) => (status, message.to_owned()).into_response(),
    }
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
/// `n` with its thousands grouped by commas (12,345), as both languages write counts.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

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
