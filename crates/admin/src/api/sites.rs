//! Suspect sites: list, add with a schedule and crawl limits, pause/resume, crawl now, and
//! the crawls with their progress.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use store::{Role, SuspectSites};
use utoipa::ToSchema;

use super::common::{
    ApiError, ApiJson, ApiPath, ApiQuery, ApiResult, ApiUser, ErrorBody, PageQuery, Queued,
    accepted, bad_cursor, created,
};
use crate::actions::sites::{SiteLimits, edit_site, queue_crawl, set_site_enabled, watch};
use crate::error::WebError;
use crate::state::AdminState;

super::common::page_of!(
    /// One page of the watched sites.
    SitePage,
    SiteOut
);

/// A watched site.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SiteOut {
    id: i64,
    name: String,
    /// `host[:port]`, as cases name the site.
    host: String,
    /// Where its crawls start.
    start_url: String,
    /// Paused when false: its schedule does not fire.
    enabled: bool,
    /// Cron expression (UTC), if it is crawled on a schedule.
    schedule: Option<String>,
    /// When its schedule fires next.
    next_crawl_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Pages fetched per crawl at most.
    max_pages: u32,
    /// Link hops from the start URL at most.
    max_depth: u32,
    /// Milliseconds between two fetches from the site.
    delay_ms: u32,
    /// Fetches from the site at once.
    concurrency: u32,
    /// Every page rendered in the headless browser.
    render: bool,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl From<store::Site> for SiteOut {
    fn from(s: store::Site) -> Self {
        SiteOut {
            id: s.id,
            name: s.name,
            host: s.host,
            start_url: s.start_url,
            enabled: s.enabled,
            schedule: s.schedule,
            next_crawl_at: s.next_crawl_at,
            max_pages: s.settings.max_pages,
            max_depth: s.settings.max_depth,
            delay_ms: s.settings.delay_ms,
            concurrency: s.settings.concurrency,
            render: s.settings.render,
            created_at: s.created_at,
        }
    }
}

#[utoipa::path(
    operation_id = "list_sites",
    get, path = "/api/v1/sites", tag = "sites",
    params(PageQuery),
    responses(
        (status = 200, description = "Watched sites, by id", body = SitePage),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
    )
)]
pub(crate) async fn list(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> ApiResult<Json<SitePage>> {
    let limit = page.limit()? as usize;
    let after = page
        .cursor()
        .map(|c| c.parse::<i64>().map_err(|_| bad_cursor()))
        .transpose()?;
    // A team watches hundreds of sites, not millions: one read, paged here.
    let mut sites = state.store().watched_sites().await?;
    sites.sort_by_key(|s| s.id);
    let rest: Vec<store::Site> = sites
        .into_iter()
        .filter(|s| after.is_none_or(|a| s.id > a))
        .collect();
    let next_cursor = (rest.len() > limit).then(|| rest[limit - 1].id.to_string());
    Ok(Json(SitePage {
        items: rest.into_iter().take(limit).map(SiteOut::from).collect(),
        next_cursor,
    }))
}

/// A site to watch.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewSiteIn {
    /// Where its crawls start (http or https); its origin is the site.
    start_url: String,
    /// A name for people; the host when absent.
    name: Option<String>,
    /// Cron expression in UTC (`0 3 * * *`); none crawls it only on demand.
    schedule: Option<String>,
    /// Pages per crawl, up to 1,000,000 (default from the settings).
    max_pages: Option<u32>,
    /// Link hops, up to 100.
    max_depth: Option<u32>,
    /// Milliseconds between fetches, up to 600,000.
    delay_ms: Option<u32>,
    /// Fetches at once, up to 64.
    concurrency: Option<u32>,
}

#[utoipa::path(
    operation_id = "add_site",
    post, path = "/api/v1/sites", tag = "sites",
    request_body = NewSiteIn,
    responses(
        (status = 201, description = "Now watched", body = SiteOut),
        (status = 400, description = "Refused input", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 409, description = "The origin is watched already", body = ErrorBody),
    )
)]
pub(crate) async fn add(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiJson(site): ApiJson<NewSiteIn>,
) -> ApiResult<(axum::http::StatusCode, Json<SiteOut>)> {
    user.require(Role::Reviewer)?;
    let blank = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let site = watch(
        &state,
        user.actor(),
        &site.start_url,
        blank(site.name),
        blank(site.schedule),
        SiteLimits {
            max_pages: site.max_pages,
            max_depth: site.max_depth,
            delay_ms: site.delay_ms,
            concurrency: site.concurrency,
        },
    )
    .await?;
    Ok(created(SiteOut::from(site)))
}

#[utoipa::path(
    operation_id = "get_site",
    get, path = "/api/v1/sites/{id}", tag = "sites",
    params(("id" = i64, Path, description = "The site's id")),
    responses(
        (status = 200, description = "The site", body = SiteOut),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such watched site", body = ErrorBody),
    )
)]
pub(crate) async fn get(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<SiteOut>> {
    Ok(Json(state.store().site(id).await?.into()))
}

/// What to change of a site.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SiteChangeIn {
    /// `false` pauses the site (its schedule stops firing), `true` resumes it.
    enabled: Option<bool>,
    /// A new name.
    name: Option<String>,
    /// A new start URL, on the same origin.
    start_url: Option<String>,
    /// A new schedule (cron, UTC); `""` removes it.
    schedule: Option<String>,
    /// Pages fetched per crawl at most.
    max_pages: Option<u32>,
    /// Link hops followed from the start URL at most.
    max_depth: Option<u32>,
    /// Milliseconds between two fetches from the site.
    delay_ms: Option<u32>,
    /// Fetches from the site at once.
    concurrency: Option<u32>,
    /// Include patterns (an empty list removes them).
    include: Option<Vec<String>>,
    /// Exclude patterns (an empty list removes them).
    exclude: Option<Vec<String>>,
    /// Render every page in the headless browser.
    render: Option<bool>,
}

#[utoipa::path(
    operation_id = "update_site",
    patch, path = "/api/v1/sites/{id}", tag = "sites",
    params(("id" = i64, Path, description = "The site's id")),
    request_body = SiteChangeIn,
    responses(
        (status = 200, description = "The site as it is now", body = SiteOut),
        (status = 400, description = "Refused input", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such watched site", body = ErrorBody),
    )
)]
pub(crate) async fn update(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(id): ApiPath<i64>,
    ApiJson(change): ApiJson<SiteChangeIn>,
) -> ApiResult<Json<SiteOut>> {
    user.require(Role::Reviewer)?;
    let edit = crawling::sites::SiteEdit {
        name: change.name,
        start_url: change.start_url,
        settings: crawling::sites::SiteSettingsChange {
            max_pages: change.max_pages,
            max_depth: change.max_depth,
            delay_ms: change.delay_ms,
            concurrency: change.concurrency,
            include: change.include,
            exclude: change.exclude,
            render: change.render,
        },
        schedule: change
            .schedule
            .map(|c| Some(c.trim().to_owned()).filter(|c| !c.is_empty())),
    };
    let mut site = None;
    if edit != crawling::sites::SiteEdit::default() {
        site = Some(edit_site(&state, user.actor(), id, &edit).await?);
    }
    if let Some(enabled) = change.enabled {
        site = Some(set_site_enabled(&state, user.actor(), id, enabled).await?);
    }
    match site {
        Some(site) => Ok(Json(site.into())),
        None => Err(ApiError(WebError::bad(
            "nothing to change: give enabled, name, start_url, schedule, max_pages, \
             max_depth, delay_ms, concurrency, include or exclude",
        ))),
    }
}

/// A crawl and how far it has got.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CrawlOut {
    id: i64,
    /// `queued`, `running`, `done`, `failed` or `cancelled`.
    status: String,
    started_at: Option<chrono::DateTime<chrono::Utc>>,
    finished_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Distinct URLs whose text was stored.
    pages: u64,
    /// URLs still to fetch (the progress while it runs).
    queued: u64,
    /// Pages that failed for good or answered an HTTP error.
    errors: u64,
    /// Those failures by kind (`timeout`, `http_404`, ...).
    errors_by_kind: std::collections::BTreeMap<String, u64>,
    bytes: u64,
    pages_per_second: Option<f64>,
    /// Matches found on its pages.
    matches: u64,
    /// The cases those matches were filed in.
    cases: Vec<i64>,
}

impl From<crawling::SiteCrawl> for CrawlOut {
    fn from(c: crawling::SiteCrawl) -> Self {
        CrawlOut {
            id: c.id,
            status: c.status.to_owned(),
            started_at: c.started_at,
            finished_at: c.finished_at,
            pages: c.pages,
            queued: c.queued,
            errors: c.errors,
            errors_by_kind: c.errors_by_kind,
            bytes: c.bytes,
            pages_per_second: c.pages_per_second,
            matches: c.matches,
            cases: c.cases,
        }
    }
}

/// How many of a site's crawls to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct CrawlsQuery {
    /// The newest this many, 1 to 100 (default 20).
    limit: Option<u32>,
}

#[utoipa::path(
    operation_id = "list_site_crawls",
    get, path = "/api/v1/sites/{id}/crawls", tag = "sites",
    params(("id" = i64, Path, description = "The site's id"), CrawlsQuery),
    responses(
        (status = 200, description = "The site's newest crawls, newest first", body = Vec<CrawlOut>),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such watched site", body = ErrorBody),
    )
)]
pub(crate) async fn crawls(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<CrawlsQuery>,
) -> ApiResult<Json<Vec<CrawlOut>>> {
    let limit = match q.limit {
        None => 20,
        Some(n @ 1..=100) => n,
        Some(n) => return Err(ApiError(WebError::bad(format!("limit: 1 to 100, not {n}")))),
    };
    state.store().site(id).await?;
    let history = crawling::site_history(state.store(), id, limit).await?;
    Ok(Json(history.into_iter().map(CrawlOut::from).collect()))
}

#[utoipa::path(
    operation_id = "crawl_site_now",
    post, path = "/api/v1/sites/{id}/crawls", tag = "sites",
    params(("id" = i64, Path, description = "The site's id")),
    responses(
        (status = 202, description = "A crawl is queued (or the unfinished one resumes)", body = Queued),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such watched site", body = ErrorBody),
    )
)]
pub(crate) async fn crawl_now(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<(axum::http::StatusCode, Json<Queued>)> {
    user.require(Role::Reviewer)?;
    let job = queue_crawl(&state, user.actor(), id).await?;
    Ok(accepted(Queued { job_id: job.0 }))
}

#[utoipa::path(
    operation_id = "get_crawl",
    get, path = "/api/v1/crawls/{id}", tag = "sites",
    params(("id" = i64, Path, description = "The crawl's id")),
    responses(
        (status = 200, description = "The crawl's progress", body = CrawlOut),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such crawl", body = ErrorBody),
    )
)]
pub(crate) async fn crawl(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<CrawlOut>> {
    let progress = crawling::crawl_progress(state.store(), store::CrawlId(id)).await?;
    Ok(Json(progress.into()))
}
