//! The dashboard (new cases and the figures a team checks each morning) and the analytics
//! page (the same figures over a chosen window, in full).

use analytics::{Stats, Window};
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Html;
use chrono::{NaiveDate, TimeDelta, Utc};
use serde::Deserialize;
use store::{CaseFilter, CaseReads, CaseRecord, CaseStatus};

use crate::auth::CurrentUser;
use crate::error::{WebError, WebResult};
use crate::render::{Bar, Ctx, bars, page, pct};
use crate::state::AdminState;

/// The detections chart's box, in SVG units.
const CHART_W: u32 = 600;
const CHART_H: u32 = 120;

fn detection_bars(stats: &Stats) -> Vec<Bar> {
    let values: Vec<(String, u64)> = stats
        .detections
        .days
        .iter()
        .map(|d| (d.day.format("%m-%d").to_string(), d.matches))
        .collect();
    bars(&values, CHART_W, CHART_H)
}

#[derive(Template)]
#[template(path = "admin/dashboard.html")]
struct DashboardPage {
    ctx: Ctx,
    new_cases: Vec<CaseRecord>,
    stats: Stats,
    bars: Vec<Bar>,
    chart_w: u32,
    chart_h: u32,
}

impl DashboardPage {
    fn pct(&self, share: &f64) -> String {
        pct(share)
    }
}

pub(crate) async fn dashboard(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    let now = Utc::now();
    let window = Window::new(Some(now.date_naive() - TimeDelta::days(29)), now)?;
    let stats = analytics::stats(state.store(), &window, 5).await?;
    let filter = CaseFilter {
        status: Some(CaseStatus::New),
        ..CaseFilter::default()
    };
    let new_cases = state.store().cases(&filter, None, 10).await?;
    page(&DashboardPage {
        ctx: Ctx::new(&user, "dashboard"),
        bars: detection_bars(&stats),
        new_cases,
        stats,
        chart_w: CHART_W,
        chart_h: CHART_H,
    })
}

#[derive(Deserialize)]
pub(crate) struct AnalyticsQuery {
    since: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/analytics.html")]
struct AnalyticsPage {
    ctx: Ctx,
    since: String,
    stats: Stats,
    bars: Vec<Bar>,
    chart_w: u32,
    chart_h: u32,
}

impl AnalyticsPage {
    fn pct(&self, share: &f64) -> String {
        pct(share)
    }
    fn days(&self, seconds: &Option<i64>) -> String {
        seconds.map_or_else(|| "–".to_owned(), |s| format!("{:.1}", s as f64 / 86_400.0))
    }
}

pub(crate) async fn analytics(
    State(state): State<AdminState>,
    user: CurrentUser,
    Query(q): Query<AnalyticsQuery>,
) -> WebResult<Html<String>> {
    let now = Utc::now();
    let since = match super::blank_none(q.since) {
        Some(s) => NaiveDate::parse_from_str(&s, "%Y-%m-%d")
            .map_err(|_| WebError::bad(format!("since: a date as YYYY-MM-DD, not {s:?}")))?,
        None => now.date_naive() - TimeDelta::days(29),
    };
    let window = Window::new(Some(since), now)?;
    let stats = analytics::stats(state.store(), &window, 20).await?;
    page(&AnalyticsPage {
        ctx: Ctx::new(&user, "analytics"),
        since: since.to_string(),
        bars: detection_bars(&stats),
        stats,
        chart_w: CHART_W,
        chart_h: CHART_H,
    })
}
