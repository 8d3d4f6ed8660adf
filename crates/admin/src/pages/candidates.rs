//! Discovery's candidate sites: the list by status, a candidate's counts and found URLs, and
//! approving (a watched site, optionally on a schedule) or ignoring it. The API approves and
//! ignores through the same two functions, which call what `copyhound discover approve` and
//! `discover ignore` call.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, Redirect, Response};
use serde::Deserialize;
use store::{Candidate, CandidateStatus, Discovery, Role};

use crate::actions::candidates::{approve_candidate, ignore_candidate};
use crate::auth::{CsrfForm, CurrentUser};
use crate::error::{WebError, WebResult};
use crate::form::{Form, FormPost, Refused, WHOLE_FORM, answer};
use crate::render::{Ctx, page, urlencode};
use crate::state::AdminState;

/// Found URLs a candidate's page lists at most: a Common Crawl scan may find thousands on
/// one domain, and the first few show what was found.
const SHOWN_URLS: usize = 200;

/// A configured search provider and what it sent today.
pub(crate) struct ProviderRow {
    pub name: String,
    pub kind: &'static str,
    /// `discover search` (and a work's "Search for copies") uses it without being told.
    pub default: bool,
    pub sent_today: u64,
    pub per_day: u32,
}

/// The providers configured, the default one marked, with today's queries (UTC day).
pub(crate) async fn providers(state: &AdminState) -> WebResult<Vec<ProviderRow>> {
    let settings = &state.settings().discovery;
    let default = settings
        .provider(None)
        .ok()
        .map(|(name, _)| name.to_owned());
    let today = discovery::day_start(chrono::Utc::now());
    let mut rows = Vec::new();
    for (name, provider) in &settings.providers {
        rows.push(ProviderRow {
            name: name.clone(),
            kind: provider.kind.as_str(),
            default: default.as_deref() == Some(name.as_str()),
            sent_today: state.store().queries_sent(today, Some(name), None).await?,
            per_day: provider.queries_per_day,
        });
    }
    Ok(rows)
}

/// A candidate as a row links to it.
struct Row {
    candidate: Candidate,
    /// `/candidates/DOMAIN`, the domain percent-encoded.
    href: String,
}

fn href(domain: &str) -> String {
    format!("/candidates/{}", urlencode(domain))
}

#[derive(Template)]
#[template(path = "admin/candidates.html")]
struct ListPage {
    ctx: Ctx,
    rows: Vec<Row>,
    /// The status shown (`new`, `approved`, `ignored` or `all`).
    status: &'static str,
    /// The search providers configured, with today's queries.
    providers: Vec<ProviderRow>,
    /// Queries one work may send a day, over all providers.
    per_work_per_day: u32,
}

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    status: Option<String>,
}

/// A status filter as the list's links write it; `all` is none.
fn status_filter(s: Option<&str>) -> WebResult<(&'static str, Option<CandidateStatus>)> {
    match s.unwrap_or("new") {
        "new" => Ok(("new", Some(CandidateStatus::New))),
        "approved" => Ok(("approved", Some(CandidateStatus::Approved))),
        "ignored" => Ok(("ignored", Some(CandidateStatus::Ignored))),
        "all" => Ok(("all", None)),
        other => Err(WebError::bad(format!(
            "status: new, approved, ignored or all, not {other:?}"
        ))),
    }
}

pub(crate) async fn list(
    State(state): State<AdminState>,
    user: CurrentUser,
    Query(query): Query<ListQuery>,
) -> WebResult<Html<String>> {
    let (status, filter) = status_filter(query.status.as_deref())?;
    let rows = state
        .store()
        .candidates(filter)
        .await?
        .into_iter()
        .map(|candidate| Row {
            href: href(&candidate.domain),
            candidate,
        })
        .collect();
    page(&ListPage {
        ctx: user.ctx("candidates"),
        rows,
        status,
        providers: providers(&state).await?,
        per_work_per_day: state.settings().discovery.queries_per_work_per_day,
    })
}

#[derive(Template)]
#[template(path = "admin/candidate.html")]
struct DetailPage {
    ctx: Ctx,
    candidate: Candidate,
    /// `/candidates/DOMAIN`, where its forms post.
    href: String,
    /// The first [`SHOWN_URLS`] URLs found on it.
    urls: Vec<String>,
    /// How many more were found.
    more_urls: u64,
    /// The approve form as typed, when it was refused.
    form: Form,
}

pub(crate) async fn detail(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(domain): Path<String>,
) -> WebResult<Html<String>> {
    detail_page(&state, &user, &domain, Form::default()).await
}

async fn detail_page(
    state: &AdminState,
    user: &CurrentUser,
    domain: &str,
    form: Form,
) -> WebResult<Html<String>> {
    let candidate = state.store().candidate(domain).await?;
    let mut urls = state.store().found_urls(&candidate.domain).await?;
    let more_urls = urls.len().saturating_sub(SHOWN_URLS) as u64;
    urls.truncate(SHOWN_URLS);
    page(&DetailPage {
        ctx: user.ctx("candidates"),
        href: href(&candidate.domain),
        candidate,
        urls,
        more_urls,
        form,
    })
}

#[derive(Deserialize)]
pub(crate) struct ApproveForm {
    schedule: Option<String>,
}

pub(crate) async fn approve(
    State(state): State<AdminState>,
    Path(domain): Path<String>,
    FormPost(user, form, typed): FormPost<ApproveForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let schedule = crate::form::blank_none(form.schedule);
    let result = approve_candidate(&state, user.actor(), &domain, schedule.as_deref())
        .await
        .map_err(|error| {
            // A schedule that does not parse is the one field's; the rest (no URL found
            // yet, the site watched already) is the form's.
            let field = match &error {
                WebError::BadRequest(m) if m.contains("cron") || m.contains("schedule") => {
                    "schedule"
                }
                _ => WHOLE_FORM,
            };
            Refused::new(field, error)
        });
    answer(
        result,
        |(site, _)| format!("/sites/{}", site.id),
        typed,
        user.lang,
        |form| detail_page(&state, &user, &domain, form),
    )
    .await
}

pub(crate) async fn ignore(
    State(state): State<AdminState>,
    Path(domain): Path<String>,
    CsrfForm(user, _): CsrfForm<crate::auth::Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    ignore_candidate(&state, user.actor(), &domain).await?;
    Ok(Redirect::to("/candidates"))
}
