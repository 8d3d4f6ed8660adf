//! The dashboard (what set-up still lacks, new cases and the figures a team checks each
//! morning) and the analytics page (the same figures over a chosen window, in full). The
//! checklist comes from `pipeline::setup_status` and the figures from `analytics`; here
//! they are only laid out: charts as server-side SVG, numbers also as text.

use std::sync::Arc;
use std::time::Instant;

use analytics::{Stats, Window};
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Html;
use chrono::{NaiveDate, TimeDelta, Utc};
use pipeline::{BlockedSite, SetupStatus, SetupStep};
use serde::Deserialize;
use store::{CaseFilter, CaseReads, CaseRecord, CaseStatus};
use takedown::RightsHolder;

use crate::auth::CurrentUser;
use crate::error::{WebError, WebResult};
use crate::render::{ColumnChart, Ctx, bar_percents, day_label, page, pct, share};
use crate::state::AdminState;

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
    let mut cache = state.figures().lock().await;
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

/// The figures as the dashboard and the analytics page draw them.
struct Figures {
    /// New copies per day.
    chart: ColumnChart,
    /// The days with copies or matches, for the table beside the chart.
    days: Vec<DayRow>,
    /// Found → confirmed → notice sent → removed.
    funnel: Vec<FunnelRow>,
    /// Dismissed, as a share of found.
    dismissed: FunnelRow,
    /// The sites copying the most chapters.
    top_sites: Vec<TopSiteRow>,
}

struct DayRow {
    day: String,
    copies: u64,
    matches: u64,
}

struct FunnelRow {
    /// The stage's label key.
    label: &'static str,
    value: u64,
    /// The bar, as a share of the cases found.
    percent: u32,
    /// Of the cases found, and of the stage before.
    of_first: String,
    of_before: Option<String>,
}

struct TopSiteRow {
    site: String,
    chapters: u64,
    works: u64,
    pages: u64,
    percent: u32,
}

impl Figures {
    /// No case found yet: the funnel has nothing to show.
    fn funnel_empty(&self) -> bool {
        self.funnel.first().is_none_or(|f| f.value == 0)
    }

    fn new(stats: &Stats) -> Figures {
        let days = &stats.detections.days;
        let series: Vec<(String, u64)> =
            days.iter().map(|d| (day_label(d.day), d.copies)).collect();
        let f = &stats.funnel;
        let stages = [
            ("chart.found", f.found),
            ("status.confirmed", f.confirmed),
            ("status.notice_sent", f.notice_sent),
            ("status.removed", f.removed),
        ];
        let bars = bar_percents(&stages.map(|(_, v)| v), Some(f.found));
        let funnel = stages
            .iter()
            .zip(bars)
            .enumerate()
            .map(|(i, (&(label, value), percent))| FunnelRow {
                label,
                value,
                percent,
                of_first: share(value, f.found),
                of_before: i
                    .checked_sub(1)
                    .map(|before| share(value, stages[before].1)),
            })
            .collect();
        let dismissed = FunnelRow {
            label: "status.dismissed",
            value: f.dismissed,
            percent: bar_percents(&[f.dismissed], Some(f.found))[0],
            of_first: share(f.dismissed, f.found),
            of_before: None,
        };
        let top: Vec<u64> = stats.top_sites.iter().map(|t| t.chapters).collect();
        let top_sites = stats
            .top_sites
            .iter()
            .zip(bar_percents(&top, None))
            .map(|(t, percent)| TopSiteRow {
                site: t.site.clone(),
                chapters: t.chapters,
                works: t.works,
                pages: t.pages,
                percent,
            })
            .collect();
        let mut chart = ColumnChart::new(&series);
        if days.last().map(|d| d.day) == Some(chrono::Utc::now().date_naive())
            && chart.columns.len() == days.len()
        {
            chart.mark_today();
        }
        Figures {
            chart,
            days: days
                .iter()
                .rev()
                .filter(|d| d.copies > 0 || d.matches > 0)
                .map(|d| DayRow {
                    day: d.day.to_string(),
                    copies: d.copies,
                    matches: d.matches,
                })
                .collect(),
            funnel,
            dismissed,
            top_sites,
        }
    }
}

/// One item of the setup checklist, as the dashboard shows it: what to do (`checklist.KEY`),
/// how (`checklist.KEY_hint`), and where.
struct Todo {
    key: &'static str,
    /// The page where it is done, if there is one for this user.
    href: Option<&'static str>,
    /// Settings or commands to name.
    codes: Vec<String>,
    /// The sites it is about.
    sites: Vec<BlockedSite>,
    /// When a worker was last seen, for the worker step.
    seen: Option<String>,
}

impl Todo {
    fn title(&self) -> String {
        format!("checklist.{}", self.key)
    }
    fn hint(&self) -> String {
        format!("checklist.{}_hint", self.key)
    }
}

/// The rights holder the checklist asks for: the settings file's, with what an admin saved
/// on the settings page over it.
async fn rights_holder(state: &AdminState) -> WebResult<RightsHolder> {
    let effective =
        takedown::overrides::effective(state.store(), &state.settings().notices).await?;
    Ok(effective.notices.rights_holder)
}

fn todos(status: SetupStatus, ctx: &Ctx) -> Vec<Todo> {
    let todo = |key, href| Todo {
        key,
        href,
        codes: Vec::new(),
        sites: Vec::new(),
        seen: None,
    };
    status
        .steps
        .into_iter()
        .map(|step| match step {
            SetupStep::RegisterWork => todo("work", Some("/works")),
            SetupStep::AddSite => todo("site", Some("/sites")),
            SetupStep::SetRightsHolder { missing } => Todo {
                codes: missing.into_iter().map(str::to_owned).collect(),
                ..todo("rights_holder", Some("/settings"))
            },
            SetupStep::StartWorker { last_seen } => Todo {
                codes: vec!["copyhound worker".to_owned()],
                seen: Some(last_seen.map_or_else(
                    || ctx.t("checklist.worker_never").to_owned(),
                    |at| format!("{} {}", ctx.t("checklist.worker_seen"), ctx.when(&at)),
                )),
                ..todo("worker", ctx.is_admin().then_some("/jobs"))
            },
            SetupStep::AllowPrivate { sites } => Todo {
                codes: vec![
                    "crawler.fetch.safety.allow_private = true".to_owned(),
                    "crawler.fetch.safety.allowed_networks".to_owned(),
                ],
                sites,
                ..todo("private", None)
            },
        })
        .collect()
}

#[derive(Template)]
#[template(path = "admin/dashboard.html")]
struct DashboardPage {
    ctx: Ctx,
    todos: Vec<Todo>,
    new_cases: Vec<CaseRecord>,
    stats: Arc<Stats>,
    figures: Figures,
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
    let holder = rights_holder(&state).await?;
    let setup =
        pipeline::setup_status(state.store(), &state.settings().crawler, &holder, now).await?;
    let filter = CaseFilter {
        status: Some(CaseStatus::New),
        ..CaseFilter::default()
    };
    let new_cases = state.store().cases(&filter, None, 10).await?;
    let ctx = user.ctx("dashboard");
    page(&DashboardPage {
        todos: todos(setup, &ctx),
        ctx,
        figures: Figures::new(&stats),
        new_cases,
        stats,
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
    figures: Figures,
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
    let since = match crate::form::blank_none(q.since) {
        Some(s) => NaiveDate::parse_from_str(&s, "%Y-%m-%d")
            .map_err(|_| WebError::bad(format!("since: a date as YYYY-MM-DD, not {s:?}")))?,
        None => now.date_naive() - TimeDelta::days(29),
    };
    let window = Window::new(Some(since), now)?;
    let stats = figures(&state, &window, 20).await?;
    page(&AnalyticsPage {
        ctx: user.ctx("analytics"),
        since: since.to_string(),
        figures: Figures::new(&stats),
        stats,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::state::AdminSettings;

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
