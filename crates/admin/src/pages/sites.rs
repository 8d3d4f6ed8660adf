//! Suspect sites: the list, adding one with its schedule and crawl limits, a site's crawl
//! history with "crawl now" and pause/resume, and the licensed domains.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, Redirect};
use pipeline::SiteCrawl;
use serde::Deserialize;
use store::{
    AuditLog, JobId, LicensedDomain, LicensedDomains, NewSite, Role, Site, SiteSettings,
    SuspectSites, WorkId,
};

use crate::auth::{CsrfForm, CurrentUser};
use crate::error::{WebError, WebResult};
use crate::render::{Ctx, page, when_opt};
use crate::state::AdminState;

#[derive(Template)]
#[template(path = "admin/sites.html")]
struct ListPage {
    ctx: Ctx,
    sites: Vec<Site>,
    licensed: Vec<LicensedDomain>,
    defaults: SiteSettings,
}

impl ListPage {
    fn when_opt(&self, t: &Option<chrono::DateTime<chrono::Utc>>) -> String {
        when_opt(t)
    }
}

pub(crate) async fn list(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    page(&ListPage {
        ctx: Ctx::new(&user, "sites"),
        sites: state.store().watched_sites().await?,
        licensed: state.store().licensed_domains().await?,
        defaults: pipeline::sites::default_site_settings(&state.settings().crawler),
    })
}

#[derive(Deserialize)]
pub(crate) struct AddForm {
    start_url: String,
    name: Option<String>,
    schedule: Option<String>,
    max_pages: Option<String>,
    max_depth: Option<String>,
    delay_ms: Option<String>,
    concurrency: Option<String>,
}

/// A form's number field: blank is none.
fn number(field: &str, value: Option<String>) -> WebResult<Option<u32>> {
    super::blank_none(value)
        .map(|v| {
            v.parse::<u32>()
                .map_err(|_| WebError::bad(format!("{field}: a whole number, not {v:?}")))
        })
        .transpose()
}

/// A site's crawl limits as given; `None` takes the configured default.
#[derive(Debug, Default)]
pub(crate) struct SiteLimits {
    pub max_pages: Option<u32>,
    pub max_depth: Option<u32>,
    pub delay_ms: Option<u32>,
    pub concurrency: Option<u32>,
}

fn limit(field: &str, value: Option<u32>, default: u32, max: u32) -> WebResult<u32> {
    match value {
        None => Ok(default),
        Some(n) if n <= max => Ok(n),
        Some(n) => Err(WebError::bad(format!(
            "{field}: a whole number up to {max}, not {n}"
        ))),
    }
}

/// Starts watching a site with its schedule and limits (checked as a crawl would check
/// them) and records who did; the pages and the API both add sites through this.
pub(crate) async fn watch(
    state: &AdminState,
    actor: &str,
    start_url: &str,
    name: Option<String>,
    schedule: Option<String>,
    limits: SiteLimits,
) -> WebResult<Site> {
    let base = pipeline::sites::default_site_settings(&state.settings().crawler);
    let settings = SiteSettings {
        max_pages: limit("max. pages", limits.max_pages, base.max_pages, 1_000_000)?,
        max_depth: limit("max. depth", limits.max_depth, base.max_depth, 100)?,
        delay_ms: limit("delay", limits.delay_ms, base.delay_ms, 600_000)?,
        concurrency: limit("concurrency", limits.concurrency, base.concurrency, 64)?,
        ..base
    };
    let site = NewSite {
        start_url: start_url.trim().to_owned(),
        name,
        settings,
        schedule: schedule.as_deref().map(pipeline::site_schedule),
    };
    let site = pipeline::watch_site(state.store(), &state.settings().crawler, &site).await?;
    state
        .store()
        .record_audit(
            actor,
            "site.watch",
            Some("site"),
            Some(site.id),
            &serde_json::json!({ "start_url": site.start_url, "schedule": site.schedule }),
        )
        .await?;
    Ok(site)
}

pub(crate) async fn add(
    State(state): State<AdminState>,
    CsrfForm(user, form): CsrfForm<AddForm>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let limits = SiteLimits {
        max_pages: number("max. pages", form.max_pages)?,
        max_depth: number("max. depth", form.max_depth)?,
        delay_ms: number("delay", form.delay_ms)?,
        concurrency: number("concurrency", form.concurrency)?,
    };
    let site = watch(
        &state,
        user.actor(),
        &form.start_url,
        super::blank_none(form.name),
        super::blank_none(form.schedule),
        limits,
    )
    .await?;
    Ok(Redirect::to(&format!("/sites/{}", site.id)))
}

#[derive(Template)]
#[template(path = "admin/site.html")]
struct DetailPage {
    ctx: Ctx,
    site: Site,
    crawls: Vec<SiteCrawl>,
    running: bool,
    /// A crawl job is queued and no worker has started it yet.
    waiting: bool,
}

impl DetailPage {
    fn when_opt(&self, t: &Option<chrono::DateTime<chrono::Utc>>) -> String {
        when_opt(t)
    }
}

#[derive(Deserialize)]
pub(crate) struct DetailQuery {
    /// The crawl job "crawl now" just queued.
    job: Option<JobId>,
}

pub(crate) async fn detail(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
    Query(query): Query<DetailQuery>,
) -> WebResult<Html<String>> {
    let site = state.store().site(id).await?;
    let crawls = pipeline::site_history(state.store(), id, 20).await?;
    let mut running = crawls
        .iter()
        .any(|c| matches!(c.status, "queued" | "running"));
    // A crawl job no worker has started yet has no crawl row: without this the page showed
    // nothing after "crawl now" and never reloaded to show the crawl once it began.
    let waiting = match query.job {
        Some(job) if !running => pipeline::site_job_live(state.store(), id, job).await?,
        _ => false,
    };
    running |= waiting;
    page(&DetailPage {
        ctx: Ctx::new(&user, "sites"),
        site,
        crawls,
        running,
        waiting,
    })
}

/// Queues a crawl of the site now (its unfinished crawl resumes) and records who asked.
pub(crate) async fn queue_crawl(
    state: &AdminState,
    actor: &str,
    id: i64,
) -> WebResult<store::JobId> {
    let enqueued = pipeline::crawl_site_now(state.store(), id).await?;
    state
        .store()
        .record_audit(
            actor,
            "site.crawl_now",
            Some("site"),
            Some(id),
            &serde_json::json!({ "job": enqueued.id() }),
        )
        .await?;
    Ok(enqueued.id())
}

pub(crate) async fn crawl_now(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<super::accounts::Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let job = queue_crawl(&state, user.actor(), id).await?;
    Ok(Redirect::to(&format!("/sites/{id}?job={job}")))
}

/// Pauses (its schedule stops firing) or resumes a site and records who did.
pub(crate) async fn set_site_enabled(
    state: &AdminState,
    actor: &str,
    id: i64,
    enabled: bool,
) -> WebResult<Site> {
    let site = state.store().set_site_enabled(id, enabled).await?;
    state
        .store()
        .record_audit(
            actor,
            if enabled { "site.resume" } else { "site.pause" },
            Some("site"),
            Some(id),
            &serde_json::json!({}),
        )
        .await?;
    Ok(site)
}

#[derive(Deserialize)]
pub(crate) struct EnabledForm {
    enabled: String,
}

pub(crate) async fn set_enabled(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, form): CsrfForm<EnabledForm>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    set_site_enabled(&state, user.actor(), id, form.enabled == "true").await?;
    Ok(Redirect::to(&format!("/sites/{id}")))
}

#[derive(Deserialize)]
pub(crate) struct LicensedForm {
    domain: String,
    work: Option<String>,
    note: Option<String>,
    remove: Option<String>,
}

pub(crate) async fn licensed(
    State(state): State<AdminState>,
    CsrfForm(user, form): CsrfForm<LicensedForm>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let work = match super::blank_none(form.work) {
        Some(w) => Some(
            w.parse::<WorkId>()
                .map_err(|_| WebError::bad(format!("work: a work id, not {w:?}")))?,
        ),
        None => None,
    };
    let note = super::blank_none(form.note);
    let action = if form.remove.is_some() {
        state.store().remove_licensed(&form.domain, work).await?;
        "licensed.remove"
    } else {
        state
            .store()
            .add_licensed(&form.domain, work, note.as_deref())
            .await?;
        "licensed.add"
    };
    state
        .store()
        .record_audit(
            user.actor(),
            action,
            None,
            None,
            &serde_json::json!({ "domain": form.domain.trim(), "work": work }),
        )
        .await?;
    Ok(Redirect::to("/sites"))
}
