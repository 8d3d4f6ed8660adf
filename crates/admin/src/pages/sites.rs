//! Suspect sites: the list, adding one with its schedule and crawl limits, a site's crawl
//! history with "crawl now" and pause/resume, and the licensed domains.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, Redirect, Response};
use crawling::SiteCrawl;
use serde::Deserialize;
use store::{
    AuditLog, JobId, LicensedDomain, LicensedDomains, Role, Site, SiteSettings, SuspectSites,
    WorkSummary,
};

use crate::actions::sites::{SiteLimits, edit_site, queue_crawl, set_site_enabled, watch};
use crate::auth::{CsrfForm, CurrentUser};
use crate::error::{WebError, WebResult};
use crate::form::{Form, FormPost, OnField, Refused, answer};
use crate::render::{Ctx, page};
use crate::state::AdminState;

#[derive(Template)]
#[template(path = "admin/sites.html")]
struct ListPage {
    ctx: Ctx,
    sites: Vec<Site>,
    licensed: Vec<LicensedDomain>,
    defaults: SiteSettings,
    /// Titles the licensed-domain form's work field suggests.
    works: Vec<WorkSummary>,
    /// The add-site or licensed-domain form as typed, when it was refused.
    form: Form,
}

impl ListPage {}

pub(crate) async fn list(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    list_page(&state, &user, Form::default()).await
}

async fn list_page(state: &AdminState, user: &CurrentUser, form: Form) -> WebResult<Html<String>> {
    page(&ListPage {
        ctx: user.ctx("sites"),
        sites: state.store().watched_sites().await?,
        licensed: state.store().licensed_domains().await?,
        defaults: crawling::sites::default_site_settings(&state.settings().crawler),
        works: crate::actions::works::suggestions(state).await?,
        form,
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
fn number(field: &'static str, value: Option<String>) -> Result<Option<u32>, Refused> {
    crate::form::blank_none(value)
        .map(|v| {
            v.parse::<u32>()
                .map_err(|_| WebError::bad(format!("a whole number, not {v:?}")))
                .on(field)
        })
        .transpose()
}

/// The field of the site forms a refusal of the store, the crawler or [`watch`](crate::actions::sites::watch)'s limits
/// is about, by what its message names (a refusal that names its field keeps it).
fn site_field(refused: Refused) -> Refused {
    let (WebError::BadRequest(message) | WebError::Conflict(message)) = &refused.error else {
        return refused;
    };
    if refused.field != crate::form::WHOLE_FORM {
        return refused;
    }
    let field = [
        ("max. pages", "max_pages"),
        ("max. depth", "max_depth"),
        ("delay", "delay_ms"),
        ("concurrency", "concurrency"),
        ("cron", "schedule"),
        ("schedule", "schedule"),
        ("include", "include"),
        ("exclude", "exclude"),
    ]
    .into_iter()
    .find(|(needle, _)| message.contains(needle))
    .map_or("start_url", |(_, field)| field);
    Refused { field, ..refused }
}

/// Pattern lines of a textarea, blank lines dropped.
fn patterns(text: Option<String>) -> Vec<String> {
    text.unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

pub(crate) async fn add(
    State(state): State<AdminState>,
    FormPost(user, form, typed): FormPost<AddForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let result = add_site(&state, &user, form).await;
    crate::form::answer_all(
        result,
        |site| format!("/sites/{}", site.id),
        typed,
        user.lang,
        |form| list_page(&state, &user, form),
    )
    .await
}

/// Checks every field of the add-site form, reporting all it refuses at once, then watches
/// the site.
async fn add_site(
    state: &AdminState,
    user: &CurrentUser,
    form: AddForm,
) -> Result<Site, Vec<Refused>> {
    let mut refused = Refusals::default();
    let limits = SiteLimits {
        max_pages: refused.number("max_pages", form.max_pages),
        max_depth: refused.number("max_depth", form.max_depth),
        delay_ms: refused.number("delay_ms", form.delay_ms),
        concurrency: refused.number("concurrency", form.concurrency),
    };
    let schedule = crate::form::blank_none(form.schedule);
    refused.schedule(schedule.as_deref());
    let crawler = &state.settings().crawler;
    let settings = crate::actions::sites::site_settings(state, &limits).unwrap_or_else(|out| {
        for (field, e) in out {
            refused.0.push(Refused::new(field, e));
        }
        crawling::sites::default_site_settings(crawler)
    });
    refused.crawl(crawler, &form.start_url, &settings);
    refused.into_result()?;
    watch(
        state,
        user.actor(),
        &form.start_url,
        crate::form::blank_none(form.name),
        schedule,
        limits,
    )
    .await
    .map_err(Refusals::whole_form)
}

/// What the site forms refuse, field by field, to report at once.
#[derive(Default)]
struct Refusals(Vec<Refused>);

impl Refusals {
    /// A number field: blank is none; not a whole number is refused beside it.
    fn number(&mut self, field: &'static str, value: Option<String>) -> Option<u32> {
        number(field, value).unwrap_or_else(|r| {
            self.0.push(r);
            None
        })
    }

    /// A schedule that does not parse or never fires, refused beside its field.
    fn schedule(&mut self, cron: Option<&str>) {
        if let Some(Err(e)) = cron.map(store::check_cron) {
            self.0.push(Refused::new("schedule", e));
        }
    }

    /// What a crawl of `url` with `settings` would refuse (the URL, a pattern, a range),
    /// beside the field its message names.
    fn crawl(&mut self, crawler: &crawler::CrawlSettings, url: &str, settings: &SiteSettings) {
        if let Err(e) = crawling::sites::check_site(crawler, url, settings) {
            self.0.push(Refusals::field_of(WebError::from(e)));
        }
    }

    /// A refusal of the whole form, beside the field its message names.
    fn field_of(error: WebError) -> Refused {
        site_field(Refused::new(crate::form::WHOLE_FORM, error))
    }

    /// One refusal, the form's answer.
    fn whole_form(error: WebError) -> Vec<Refused> {
        vec![Refusals::field_of(error)]
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Nothing refused, or all of it.
    fn into_result(self) -> Result<(), Vec<Refused>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct EditForm {
    name: Option<String>,
    start_url: Option<String>,
    schedule: Option<String>,
    max_pages: Option<String>,
    max_depth: Option<String>,
    delay_ms: Option<String>,
    concurrency: Option<String>,
    include: Option<String>,
    exclude: Option<String>,
    /// The render checkbox (sent only when ticked) and the hidden field that says the form
    /// showed it, so an unticked box turns rendering off.
    render: Option<String>,
    render_shown: Option<String>,
}

pub(crate) async fn edit(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    FormPost(user, form, typed): FormPost<EditForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let result = edit_checked(&state, &user, id, form).await;
    crate::form::answer_all(
        result,
        |_| format!("/sites/{id}?edited=1"),
        typed,
        user.lang,
        |form| detail_page(&state, &user, id, None, form, false),
    )
    .await
}

/// Checks the edit form field by field, reporting every field it refuses at once (with the
/// first refusal a crawl would give of the rest), then changes the site.
async fn edit_checked(
    state: &AdminState,
    user: &CurrentUser,
    id: i64,
    form: EditForm,
) -> Result<Site, Vec<Refused>> {
    let mut refused = Refusals::default();
    let edit = crawling::sites::SiteEdit {
        name: crate::form::blank_none(form.name),
        start_url: crate::form::blank_none(form.start_url),
        settings: crawling::sites::SiteSettingsChange {
            max_pages: refused.number("max_pages", form.max_pages),
            max_depth: refused.number("max_depth", form.max_depth),
            delay_ms: refused.number("delay_ms", form.delay_ms),
            concurrency: refused.number("concurrency", form.concurrency),
            include: form.include.is_some().then(|| patterns(form.include)),
            exclude: form.exclude.is_some().then(|| patterns(form.exclude)),
            render: form.render_shown.is_some().then_some(form.render.is_some()),
        },
        schedule: form.schedule.map(|c| crate::form::blank_none(Some(c))),
    };
    refused.schedule(edit.schedule.as_ref().and_then(Option::as_deref));
    if !refused.is_empty() {
        // What a crawl would refuse of the rest, said with them.
        if let Ok(site) = state.store().site(id).await {
            let settings = edit.settings.applied_to(&site.settings);
            let url = edit.start_url.as_deref().unwrap_or(&site.start_url);
            refused.crawl(&state.settings().crawler, url, &settings);
        }
        refused.into_result()?;
    }
    edit_site(state, user.actor(), id, &edit)
        .await
        .map_err(Refusals::whole_form)
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
    /// The edit form as typed, when it was refused.
    form: Form,
    /// The site's settings were just saved.
    edited: bool,
}

impl DetailPage {
    /// Include or exclude patterns, one a line, as the edit form shows them.
    fn lines(&self, patterns: &[String]) -> String {
        patterns.join("\n")
    }
}

#[derive(Deserialize)]
pub(crate) struct DetailQuery {
    /// The crawl job "crawl now" just queued.
    job: Option<JobId>,
    /// The edit form was just saved.
    edited: Option<u8>,
}

pub(crate) async fn detail(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
    Query(query): Query<DetailQuery>,
) -> WebResult<Html<String>> {
    let edited = query.edited.is_some();
    detail_page(&state, &user, id, query.job, Form::default(), edited).await
}

async fn detail_page(
    state: &AdminState,
    user: &CurrentUser,
    id: i64,
    job: Option<JobId>,
    form: Form,
    edited: bool,
) -> WebResult<Html<String>> {
    let site = state.store().site(id).await?;
    let crawls = crawling::site_history(state.store(), id, 20).await?;
    let mut running = crawls
        .iter()
        .any(|c| matches!(c.status, "queued" | "running"));
    // A crawl job no worker has started yet has no crawl row: without this the page showed
    // nothing after "crawl now" and never reloaded to show the crawl once it began.
    let waiting = match job {
        Some(job) if !running => crawling::site_job_live(state.store(), id, job).await?,
        _ => false,
    };
    running |= waiting;
    page(&DetailPage {
        ctx: user.ctx("sites"),
        site,
        crawls,
        running,
        waiting,
        form,
        edited,
    })
}

pub(crate) async fn crawl_now(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<crate::auth::Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let job = queue_crawl(&state, user.actor(), id).await?;
    Ok(Redirect::to(&format!("/sites/{id}?job={job}")))
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
    FormPost(user, form, typed): FormPost<LicensedForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let result = change_licensed(&state, &user, form).await;
    answer(
        result,
        |()| "/sites".to_owned(),
        typed,
        user.lang,
        |form| list_page(&state, &user, form),
    )
    .await
}

async fn change_licensed(
    state: &AdminState,
    user: &CurrentUser,
    form: LicensedForm,
) -> Result<(), Refused> {
    // An unknown work is a typing error here, not a missing page.
    let work = crate::actions::works::named_work(state, form.work.as_deref())
        .await
        .on("work")?;
    let note = crate::form::blank_none(form.note);
    let action = if form.remove.is_some() {
        state
            .store()
            .remove_licensed(&form.domain, work)
            .await
            .on("domain")?;
        "licensed.remove"
    } else {
        state
            .store()
            .add_licensed(&form.domain, work, note.as_deref())
            .await
            .on("domain")?;
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
    Ok(())
}
