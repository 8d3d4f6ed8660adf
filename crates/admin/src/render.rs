//! Rendering: the context every page's layout reads, one helper from a template to `Html`,
//! the error page, and the small formatters templates call.

use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, NaiveDate, Utc};
use store::{Role, UserRecord};

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
        takedown::notice_settings::local_time(*t, &self.zone, false)
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

    /// How a candidate was found, in the page's language: `search:brave` is the search
    /// label and the provider's name (a name is not translated).
    pub fn found_by(&self, found_by: &str) -> String {
        match found_by.split_once(':') {
            Some((how, provider)) => format!("{} {provider}", self.named("found_by", how)),
            None => self.named("found_by", found_by).to_owned(),
        }
    }

    pub fn can_review(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.role >= Role::Reviewer)
    }

    pub fn is_admin(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.role >= Role::Admin)
    }

    /// `n` with its digits grouped by three (`12,345`), in both languages: CLDR's decimal
    /// pattern for Chinese groups by three with commas too, and figures in a column or on a
    /// chart's axis read best in one grouping; 万 suits prose, not a table.
    pub fn num<T: Copy + Into<u64>>(&self, n: &T) -> String {
        grouped((*n).into())
    }

    /// `n` and its unit, singular or plural (`1 work`, `3 works`; `3 部作品`): `unit` names
    /// the labels `count.<unit>.one` and `count.<unit>.other`.
    pub fn count(&self, n: &u64, unit: &str) -> String {
        format!("{} {}", grouped(*n), self.unit(n, unit))
    }

    /// The unit alone, singular or plural for `n`, when the figure is shown apart.
    pub fn unit(&self, n: &u64, unit: &str) -> &'static str {
        let form = if *n == 1 { "one" } else { "other" };
        self.t(&format!("count.{unit}.{form}"))
    }

    /// A cron schedule in words in the page's language.
    pub fn cron(&self, expr: &str) -> String {
        let lang = match self.lang {
            Lang::En => jobs::cron_words::Language::En,
            Lang::Zh => jobs::cron_words::Language::Zh,
        };
        let words = jobs::cron_words::cron_in_words(expr, lang);
        match self.local_time_of(expr) {
            Some(local) => match self.lang {
                Lang::En => format!("{words} ({local})"),
                Lang::Zh => format!("{words}，即 {local}"),
            },
            None => words,
        }
    }

    /// A schedule's time of day in this page's time zone (`11:00 +08:00`), when the zone is
    /// not UTC and the words would still be true of it: a schedule on named days is left
    /// alone when the shift moves it to another day.
    fn local_time_of(&self, expr: &str) -> Option<String> {
        let (hour, minute, every_day) = jobs::cron_words::time_of_day(expr)?;
        let now = jiff::Timestamp::now();
        if self.zone.to_offset(now) == jiff::tz::Offset::UTC {
            return None;
        }
        let today = now.to_zoned_datetime(jiff::tz::TimeZone::UTC).date();
        let fire = today
            .at(i8::try_from(hour).ok()?, i8::try_from(minute).ok()?, 0, 0)
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .ok()?;
        let local = fire.with_time_zone(self.zone.clone());
        (every_day || local.date() == today).then(|| local.strftime("%H:%M %:z").to_string())
    }

    /// The CSS class of a menu entry.
    pub fn nav_class(&self, entry: &str) -> &'static str {
        if self.nav == entry { "active" } else { "" }
    }
}

/// Renders a page; a template that fails is the caller's error (`WebError`'s internal).
pub fn page<E: From<askama::Error>>(template: &impl Template) -> Result<Html<String>, E> {
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
    /// The message in the page's language, its values apart ([`crate::said`]).
    fn said(&self) -> crate::said::Said {
        self.ctx.lang.say(self.message)
    }

    /// The heading's label: what this status means to the person reading.
    fn title(&self) -> &'static str {
        self.ctx.t(match self.status {
            403 => "error.forbidden",
            404 => "error.not_found",
            _ => "error.title",
        })
    }
}

/// An error page a handler answered with: what the router's error layer shows again inside the
/// app's frame when the person asking is logged in.
#[derive(Debug, Clone)]
pub(crate) struct ErrorShown {
    message: String,
}

impl ErrorShown {
    /// The message the page shows.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
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

/// The error page without a user (a guest's, or before the router's error layer frames it).
pub fn error_page(status: StatusCode, message: &str) -> Response {
    error_page_in(Ctx::guest(Lang::En), status, message)
}

/// `body` as a file to save: its media type, and the name a browser saves it under (ASCII
/// names of our own making; one that is no header value downloads unnamed).
pub(crate) fn attachment(
    body: impl IntoResponse,
    content_type: &'static str,
    filename: &str,
) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static(content_type),
    );
    headers.insert(
        axum::http::header::CONTENT_DISPOSITION,
        axum::http::HeaderValue::from_str(&format!("attachment; filename=\"{filename}\""))
            .unwrap_or(axum::http::HeaderValue::from_static("attachment")),
    );
    response
}

/// `s` percent-encoded for a query string value.
pub fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A share 0..1 as a whole percentage.
pub fn pct(share: &f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// `n` with its digits grouped by three with commas: `12,345`.
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

/// A day as a chart's axis names it.
pub fn day_label(day: NaiveDate) -> String {
    day.format("%m-%d").to_string()
}

/// A column chart drawn on the server as SVG, in its own coordinates (the `viewBox`): one
/// column per value over a labelled x axis, a y axis with round ticks, and each value over
/// its column where there is room for it. It scales to the width of its box.
#[derive(Debug, Clone)]
pub struct ColumnChart {
    /// The plot's width in units (each written as a percentage of the chart's width, so the
    /// chart fills any width while its text keeps the page's size) and its height in CSS
    /// pixels.
    pub width: u32,
    pub height: u32,
    /// Where the plot's left edge (the y axis) and its baseline (the x axis) are.
    pub left: u32,
    pub base: u32,
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The y axis's ticks, from 0 up.
    pub y_ticks: Vec<Tick>,
    /// The x axis's labels.
    pub x_labels: Vec<Tick>,
}

/// One column of a [`ColumnChart`].
#[derive(Debug, Clone)]
pub struct Column {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    /// What it counts (a day).
    pub label: String,
    pub value: u64,
    /// Whether its value is written over it (when it fits), and where.
    pub show_value: bool,
    pub value_x: u32,
    pub value_y: u32,
    /// The column of today (drawn apart, labelled "today").
    pub today: bool,
}

/// A label on an axis at `at` (x for the x axis, y for the y axis), anchored `anchor`.
#[derive(Debug, Clone)]
pub struct Tick {
    pub at: u32,
    pub label: String,
    pub anchor: &'static str,
    /// A label to show in the page's language instead (`chart.today`).
    pub key: Option<&'static str>,
}

/// The plot's units across (a month of columns with their values; a unit is about 0.85 px
/// on a 390 px phone) and the chart's height in CSS pixels (`svg.chart` in app.css).
const CHART_W: u32 = 400;
const CHART_H: u32 = 190;
/// Room for the y axis's labels, the x axis's labels and the tallest column's value.
const AXIS_LEFT: u32 = 40;
const AXIS_BOTTOM: u32 = 18;
const VALUE_ROOM: u32 = 14;
/// The widths, in `viewBox` units, of a digit and a comma at the chart's font size (10).
const DIGIT_W: u32 = 6;
/// Labels the x axis has at most.
const X_LABELS: usize = 6;
/// Columns at most: three units each, so each shows as a column of its own.
const MAX_COLUMNS: usize = ((CHART_W - AXIS_LEFT - 2) / 3) as usize;

impl ColumnChart {
    /// A chart of `values` (label, value) in order. More values than the plot has room for
    /// (a year of days) are summed in runs, each column labelled `first – last`.
    pub fn new(values: &[(String, u64)]) -> ColumnChart {
        let runs;
        let values = if values.len() > MAX_COLUMNS {
            runs = summed_runs(values, values.len().div_ceil(MAX_COLUMNS));
            &runs[..]
        } else {
            values
        };
        let base = CHART_H - AXIS_BOTTOM;
        let plot_h = base - VALUE_ROOM;
        let plot_w = CHART_W - AXIS_LEFT - 2;
        let (step, top) = nice_scale(values.iter().map(|(_, v)| *v).max().unwrap_or(0));
        let n = u32::try_from(values.len()).unwrap_or(u32::MAX).max(1);
        let slot = (plot_w / n).max(1);
        let gap = if slot >= 4 { slot / 6 + 1 } else { 0 };
        let columns = values
            .iter()
            .enumerate()
            .map(|(i, (label, value))| {
                let h = scaled(plot_h, *value, top);
                let x = AXIS_LEFT + 1 + u32::try_from(i).unwrap_or(0) * slot;
                let text = grouped(*value);
                let fits = *value > 0 && text_width(&text) <= slot + gap;
                Column {
                    x: x + gap / 2,
                    y: base - h,
                    width: slot.saturating_sub(gap).max(1),
                    height: h,
                    label: label.clone(),
                    value: *value,
                    show_value: fits,
                    value_x: x + slot / 2,
                    value_y: base - h - 3,
                    today: false,
                }
            })
            .collect();
        let y_ticks = (0u64..)
            .map_while(|k| k.checked_mul(step))
            .take_while(|v| *v <= top)
            .map(|v| Tick {
                at: base - scaled(plot_h, v, top),
                label: grouped(v),
                anchor: "end",
                key: None,
            })
            .collect();
        let every = values.len().div_ceil(X_LABELS).max(1);
        let x_labels = values
            .iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0)
            .map(|(i, (label, _))| {
                let x = AXIS_LEFT + 1 + u32::try_from(i).unwrap_or(0) * slot + slot / 2;
                let half = text_width(label) / 2;
                let anchor = if x < AXIS_LEFT + half {
                    "start"
                } else if x + half > CHART_W {
                    "end"
                } else {
                    "middle"
                };
                Tick {
                    at: x,
                    label: label.clone(),
                    anchor,
                    key: None,
                }
            })
            .collect();
        ColumnChart {
            width: CHART_W,
            height: CHART_H,
            left: AXIS_LEFT,
            base,
            columns,
            y_ticks,
            x_labels,
        }
    }
}

impl ColumnChart {
    /// `units` of the plot's width as a percentage of the chart's (`12.50%`).
    pub fn x(&self, units: &u32) -> String {
        format!(
            "{:.2}%",
            f64::from(*units) * 100.0 / f64::from(self.width.max(1))
        )
    }

    /// Whether no column has a value (nothing to draw: the page says what will appear).
    pub fn is_empty(&self) -> bool {
        self.columns.iter().all(|c| c.value == 0)
    }

    /// Marks the last column as today's and labels it so, in place of an x label too close
    /// to it.
    pub fn mark_today(&mut self) {
        let Some(last) = self.columns.last_mut() else {
            return;
        };
        last.today = true;
        let at = last.value_x;
        // Room for "today" beside the label before it.
        self.x_labels
            .retain(|t| at.abs_diff(t.at) > TODAY_ROOM || t.key.is_some());
        self.x_labels.push(Tick {
            at,
            label: String::new(),
            anchor: "end",
            key: Some("chart.today"),
        });
    }
}

/// Units kept clear on either side of today's label.
const TODAY_ROOM: u32 = 44;

/// `value` of `top` as a share of `height` (u128: no value overflows it).
fn scaled(height: u32, value: u64, top: u64) -> u32 {
    let h = u128::from(height) * u128::from(value) / u128::from(top.max(1));
    u32::try_from(h).unwrap_or(height).min(height)
}

/// `values` summed in runs of `run`, each labelled by its first and last label.
fn summed_runs(values: &[(String, u64)], run: usize) -> Vec<(String, u64)> {
    values
        .chunks(run.max(1))
        .map(|chunk| {
            let first = &chunk[0].0;
            let last = &chunk[chunk.len() - 1].0;
            let label = if chunk.len() == 1 {
                first.clone()
            } else {
                format!("{first} – {last}")
            };
            let sum = chunk.iter().fold(0u64, |a, (_, v)| a.saturating_add(*v));
            (label, sum)
        })
        .collect()
}

/// About how wide `text` is at the chart's font size.
fn text_width(text: &str) -> u32 {
    u32::try_from(text.chars().count())
        .unwrap_or(u32::MAX)
        .saturating_mul(DIGIT_W)
}

/// A round step (1, 2 or 5 times a power of ten) and the axis's top (a multiple of it, at
/// least `max` and at least one step) for at most four steps up to `max`.
fn nice_scale(max: u64) -> (u64, u64) {
    let rough = max.div_ceil(4).max(1);
    let mut power = 1u64;
    let step = loop {
        if let Some(step) = [1, 2, 5]
            .into_iter()
            .map(|m: u64| m.saturating_mul(power))
            .find(|s| *s >= rough)
        {
            break step;
        }
        power = power.saturating_mul(10);
    };
    (step, max.div_ceil(step).max(1).saturating_mul(step))
}

/// The lengths of horizontal bars for `values`, as whole percentages (0 to 100, rounded up
/// so that any value shows) of `whole`, or of the largest value when `None`: drawn as SVG
/// `rect`s whose width is a percentage, so no inline style is needed.
pub fn bar_percents(values: &[u64], whole: Option<u64>) -> Vec<u32> {
    let whole = whole
        .unwrap_or_else(|| values.iter().copied().max().unwrap_or(0))
        .max(1);
    values
        .iter()
        .map(|value| {
            let part = u128::from(*value.min(&whole)) * 100;
            u32::try_from(part.div_ceil(u128::from(whole))).unwrap_or(100)
        })
        .collect()
}

/// `part` as a whole percentage of `whole` (`–` when `whole` is 0).
pub fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        pct(&(part as f64 / whole as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_three() {
        let got: Vec<String> = [0, 7, 999, 1_000, 12_345, 1_234_567, u64::MAX]
            .into_iter()
            .map(grouped)
            .collect();
        assert_eq!(
            got,
            [
                "0",
                "7",
                "999",
                "1,000",
                "12,345",
                "1,234,567",
                "18,446,744,073,709,551,615"
            ]
        );
    }

    #[test]
    fn schedules_are_also_said_in_the_page_time_zone() {
        let utc = Ctx::guest(Lang::En);
        assert_eq!(utc.cron("0 3 * * *"), "every day at 03:00 UTC");
        let mut shanghai = Ctx::guest(Lang::Zh);
        shanghai.zone = jiff::tz::TimeZone::get("Asia/Shanghai").unwrap();
        assert_eq!(
            shanghai.cron("0 3 * * *"),
            "每天 03:00（UTC），即 11:00 +08:00"
        );
        // 20:00 UTC on weekdays is the next day in Shanghai: its days would not be true.
        assert_eq!(shanghai.cron("0 20 * * 1-5"), "工作日 20:00（UTC）");
        assert_eq!(
            shanghai.cron("0 9 * * 1-5"),
            "工作日 09:00（UTC），即 17:00 +08:00"
        );
        assert_eq!(shanghai.cron("*/15 * * * *"), "每 15 分钟");
    }

    #[test]
    fn data_values_are_said_in_the_page_language() {
        let zh = Ctx::guest(Lang::Zh);
        assert_eq!(zh.found_by("search:brave"), "搜索引擎 brave");
        assert_eq!(zh.found_by("commoncrawl"), "Common Crawl 存档");
        assert_eq!(zh.found_by("something-new"), "something-new");
        assert_eq!(zh.named("crawl", "done"), "完成");
        assert_eq!(zh.named("source", "markup"), "页面源码");
        assert_eq!(zh.named("actor", "pipeline"), "系统（检测）");
        assert_eq!(zh.named("actor", "alice"), "alice");
    }

    #[test]
    fn counts_say_one_work_and_two_works() {
        let en = Ctx::guest(Lang::En);
        assert_eq!(en.count(&1, "works"), "1 work");
        assert_eq!(en.count(&0, "works"), "0 works");
        assert_eq!(en.count(&12_000, "pages"), "12,000 pages");
        assert_eq!(en.unit(&1, "chapters"), "chapter");
        let zh = Ctx::guest(Lang::Zh);
        assert_eq!(zh.count(&1, "works"), "1 部作品");
        assert_eq!(zh.count(&3, "pages"), "3 个页面");
    }

    #[test]
    fn today_is_labelled_and_positions_are_shares_of_the_width() {
        let values: Vec<(String, u64)> = (0..30)
            .map(|d| (format!("11-{:02}", d + 1), u64::from(d % 4 == 0)))
            .collect();
        let mut c = ColumnChart::new(&values);
        assert!(!c.is_empty());
        c.mark_today();
        assert!(c.columns.last().unwrap().today);
        assert_eq!(c.columns.iter().filter(|c| c.today).count(), 1);
        let today = c.x_labels.last().unwrap();
        assert_eq!(today.key, Some("chart.today"));
        // No other label crowds it.
        assert!(
            c.x_labels[..c.x_labels.len() - 1]
                .iter()
                .all(|t| today.at.abs_diff(t.at) > TODAY_ROOM)
        );
        assert_eq!(c.x(&0), "0.00%");
        assert_eq!(c.x(&CHART_W), "100.00%");
        assert_eq!(c.x(&(CHART_W / 4)), "25.00%");
        let zeros: Vec<(String, u64)> = (0..30).map(|d| (d.to_string(), 0)).collect();
        assert!(ColumnChart::new(&zeros).is_empty());
    }

    #[test]
    fn scales_are_round_and_cover_the_largest_value() {
        assert_eq!(nice_scale(0), (1, 1));
        assert_eq!(nice_scale(3), (1, 3));
        assert_eq!(nice_scale(33), (10, 40));
        assert_eq!(nice_scale(40), (10, 40));
        assert_eq!(nice_scale(41), (20, 60));
        assert_eq!(nice_scale(12_345), (5_000, 15_000));
        let (step, top) = nice_scale(u64::MAX / 200);
        assert!(top >= u64::MAX / 200 && top / step <= 5);
    }

    #[test]
    fn columns_fill_the_plot_by_the_axis_top_with_values_where_they_fit() {
        let values: Vec<(String, u64)> = (0..30)
            .map(|d| (format!("11-{:02}", d + 1), if d == 29 { 33 } else { d % 3 }))
            .collect();
        let c = ColumnChart::new(&values);
        assert_eq!(c.columns.len(), 30);
        // The axis goes to 40 in steps of 10: 33 is 33/40 of the plot's height.
        let labels: Vec<&str> = c.y_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "10", "20", "30", "40"]);
        let plot_h = c.base - c.y_ticks.last().unwrap().at;
        let last = c.columns.last().unwrap();
        assert_eq!(last.height, plot_h * 33 / 40);
        assert_eq!(last.y + last.height, c.base);
        // Every column inside the box, none overlapping the next.
        for pair in c.columns.windows(2) {
            assert!(pair[0].x + pair[0].width <= pair[1].x);
        }
        assert!(last.x + last.width <= c.width);
        assert!(c.columns[0].x > c.left);
        // Two digits fit over a month's columns; a zero is not written.
        assert!(last.show_value);
        assert!(!c.columns[0].show_value);
        // Six labels at most along the x axis, the first one the first day, all inside.
        assert!(c.x_labels.len() <= 6 && c.x_labels[0].label == "11-01");
        assert_eq!(c.x_labels[0].anchor, "start");
        // A value too wide for its column is left to the tooltip and the table.
        let wide = ColumnChart::new(&[("a".to_owned(), 1_234_567), ("b".to_owned(), 0)]);
        assert!(wide.columns[0].show_value, "two columns leave room");
        // A year of days: summed in runs of four days, every column in the box.
        let crowded: Vec<(String, u64)> = (0..365).map(|d| (d.to_string(), 1_000)).collect();
        let c = ColumnChart::new(&crowded);
        assert_eq!(c.columns.len(), 92);
        assert_eq!(
            (c.columns[0].label.as_str(), c.columns[0].value),
            ("0 – 3", 4_000)
        );
        assert_eq!(
            (c.columns[91].label.as_str(), c.columns[91].value),
            ("364", 1_000)
        );
        assert!(c.columns.iter().all(|c| !c.show_value));
        assert!(c.columns.iter().all(|col| col.x + col.width <= c.width));
        // The largest count there can be still draws inside the box.
        let huge = ColumnChart::new(&[("a".to_owned(), u64::MAX), ("b".to_owned(), 1)]);
        assert_eq!(huge.columns[0].y + huge.columns[0].height, huge.base);
        assert!(huge.columns[0].y > 0, "room above for its value");
        // No values: an empty plot with an axis.
        let empty = ColumnChart::new(&[]);
        assert!(empty.columns.is_empty() && empty.y_ticks.len() == 2);
    }

    #[test]
    fn bars_are_shares_of_the_whole_or_the_largest() {
        assert_eq!(bar_percents(&[50, 200, 0], None), [25, 100, 0]);
        assert_eq!(
            bar_percents(&[3, 1], Some(3)),
            [100, 34],
            "rounded up so it shows"
        );
        assert_eq!(bar_percents(&[9], Some(0)), [100]);
        assert_eq!(bar_percents(&[u64::MAX, 1], None), [100, 1]);
        assert_eq!(share(1, 4), "25%");
        assert_eq!(share(1, 0), "–");
    }

    #[test]
    fn the_error_page_escapes_its_message() {
        let response = error_page(StatusCode::BAD_REQUEST, "<script>alert(1)</script>");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
}
