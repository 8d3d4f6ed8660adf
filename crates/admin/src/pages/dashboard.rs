//! The dashboard (new cases and the figures a team checks each morning) and the analytics
//! page (the same figures over a chosen window, in full).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

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

/// The figures counted lately, by window start and table size, reused for
/// [`crate::AdminSettings::figures_ttl`]. Counting holds the lock, so a burst of requests
/// counts once and the rest wait for its result instead of each running the same queries.
#[derive(Debug, Default)]
pub(crate) struct FiguresCache(tokio::sync::Mutex<HashMap<FiguresKey, (Instant, Arc<Stats>)>>);

/// The window's first day and the rows of the top tables.
type FiguresKey = (Option<NaiveDate>, u32);

/// Windows kept at most: the analytics page's start day is the user's to choose.
const FIGURES_KEPT: usize = 32;

/// The figures over `window` with `top` rows, from the cache while fresh.
pub(crate) async fn figures(
    state: &AdminState,
    window: &Window,
    top: u32,
) -> WebResult<Arc<Stats>> {
    figures_at(state, window, top, Instant::now()).await
}

/// [`figures`] as of `now` (a test's clock): counted then, or reused when counted less
/// than the TTL before.
async fn figures_at(
    state: &AdminState,
    window: &Window,
    top: u32,
    now: Instant,
) -> WebResult<Arc<Stats>> {
    let ttl = state.settings().figures_ttl;
    let fresh = |at: &Instant| now.saturating_duration_since(*at) < ttl;
    let mut cache = state.figures().0.lock().await;
    let key = (window.since, top);
    if let Some((at, stats)) = cache.get(&key)
        && fresh(at)
    {
        return Ok(Arc::clone(stats));
    }
    let stats = Arc::new(analytics::stats(state.store(), window, top).await?);
    if cache.len() >= FIGURES_KEPT {
        cache.retain(|_, (at, _)| fresh(at));
        if cache.len() >= FIGURES_KEPT {
            cache.clear();
        }
    }
    cache.insert(key, (now, Arc::clone(&stats)));
    Ok(stats)
}

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
    stats: Arc<Stats>,
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
    let stats = figures(&state, &window, 5).await?;
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
    stats: Arc<Stats>,
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
    let stats = figures(&state, &window, 20).await?;
    page(&AnalyticsPage {
        ctx: Ctx::new(&user, "analytics"),
        since: since.to_string(),
        bars: detection_bars(&stats),
        stats,
        chart_w: CHART_W,
        chart_h: CHART_H,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::AdminSettings;

    #[tokio::test]
    async fn figures_are_counted_once_while_fresh() {
        let db = store::testing::sqlite("admin_figures").await.unwrap();
        let state = AdminState::new(
            db.store.clone(),
            AdminSettings {
                figures_ttl: Duration::from_secs(10),
                ..AdminSettings::default()
            },
        );
        // A clock of the test's own: how long counting takes does not matter.
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let window = Window::new(None, Utc::now()).unwrap();
        let first = figures_at(&state, &window, 5, t0).await.unwrap();
        let again = figures_at(&state, &window, 5, at(9_999)).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "reused while fresh");
        let other = figures_at(&state, &window, 6, at(1)).await.unwrap();
        assert!(!Arc::ptr_eq(&first, &other), "another size is counted");
        let later = figures_at(&state, &window, 5, at(10_000)).await.unwrap();
        assert!(!Arc::ptr_eq(&first, &later), "counted again once stale");
        let after = figures_at(&state, &window, 5, at(10_001)).await.unwrap();
        assert!(
            Arc::ptr_eq(&later, &after),
            "the new count is the fresh one"
        );
    }
}
