//! Discovery's candidate sites: domains where a search or a crawl scan found a copy, waiting
//! for a person to approve (a watched site) or ignore them, through the functions the
//! candidates page calls.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use store::{CandidateStatus, Discovery, Role};
use utoipa::ToSchema;

use super::common::{ApiJson, ApiPath, ApiQuery, ApiResult, ApiUser, ErrorBody, created};
use crate::actions::candidates::{approve_candidate, ignore_candidate};
use crate::state::AdminState;

/// Where a candidate stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
// Named apart from the cases' `Status` in the document's schemas, which it would replace.
#[schema(as = CandidateStatus)]
pub(crate) enum Status {
    /// Waiting for a person.
    New,
    /// A watched site now.
    Approved,
    /// Never fetched again.
    Ignored,
}

impl From<CandidateStatus> for Status {
    fn from(s: CandidateStatus) -> Self {
        match s {
            CandidateStatus::New => Status::New,
            CandidateStatus::Approved => Status::Approved,
            CandidateStatus::Ignored => Status::Ignored,
        }
    }
}

impl From<Status> for CandidateStatus {
    fn from(s: Status) -> Self {
        match s {
            Status::New => CandidateStatus::New,
            Status::Approved => CandidateStatus::Approved,
            Status::Ignored => CandidateStatus::Ignored,
        }
    }
}

/// A candidate site.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CandidateOut {
    /// `host[:port]`.
    domain: String,
    status: Status,
    /// How it was first found (`search:NAME`, `commoncrawl`, `import`, `probe`).
    found_by: String,
    /// The watched site it became, once approved.
    site_id: Option<i64>,
    /// URLs found on it.
    urls: u64,
    /// Its pages copying a registered chapter.
    pages: u64,
    /// Works copied there.
    works: u64,
    /// Chapters copied there.
    chapters: u64,
    first_seen_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
    /// When its home page and listed URLs were last fetched (`discover probe`).
    probed_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl From<store::Candidate> for CandidateOut {
    fn from(c: store::Candidate) -> Self {
        CandidateOut {
            domain: c.domain,
            status: c.status.into(),
            found_by: c.found_by,
            site_id: c.site_id,
            urls: c.urls,
            pages: c.pages,
            works: c.works,
            chapters: c.chapters,
            first_seen_at: c.first_seen_at,
            updated_at: c.updated_at,
            probed_at: c.probed_at,
        }
    }
}

/// The candidates' filter.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct CandidateQuery {
    /// Only candidates in this status (all when absent).
    status: Option<Status>,
}

#[utoipa::path(
    operation_id = "list_candidates",
    get, path = "/api/v1/candidates", tag = "candidates",
    params(CandidateQuery),
    responses(
        (status = 200, description = "Candidate sites, as the store orders them", body = Vec<CandidateOut>),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
    )
)]
pub(crate) async fn list(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiQuery(q): ApiQuery<CandidateQuery>,
) -> ApiResult<Json<Vec<CandidateOut>>> {
    // Candidates are domains a person reviews: hundreds, not millions; one read, unpaged.
    let found = state
        .store()
        .candidates(q.status.map(CandidateStatus::from))
        .await?;
    Ok(Json(found.into_iter().map(CandidateOut::from).collect()))
}

/// How to watch an approved candidate.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApproveIn {
    /// Cron expression in UTC (`0 3 * * *`); none crawls it only on demand.
    schedule: Option<String>,
}

/// An approved candidate: the watched site it became and the crawl of its found URLs.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ApprovedOut {
    /// The candidate, now approved.
    candidate: CandidateOut,
    /// The watched site (`/api/v1/sites/{id}`).
    site_id: i64,
    /// The crawl of the URLs found there, queued for the workers (`/api/v1/crawls/{id}`).
    crawl_id: i64,
}

#[utoipa::path(
    operation_id = "approve_candidate",
    post, path = "/api/v1/candidates/{domain}/approve", tag = "candidates",
    params(("domain" = String, Path, description = "The candidate's `host[:port]`")),
    request_body = ApproveIn,
    responses(
        (status = 201, description = "Watched now; a crawl of its found URLs is queued", body = ApprovedOut),
        (status = 400, description = "Refused input: a bad schedule, no URL found there yet", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such candidate", body = ErrorBody),
        (status = 409, description = "Its origin is watched already", body = ErrorBody),
    )
)]
pub(crate) async fn approve(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(domain): ApiPath<String>,
    ApiJson(body): ApiJson<ApproveIn>,
) -> ApiResult<(axum::http::StatusCode, Json<ApprovedOut>)> {
    user.require(Role::Reviewer)?;
    let schedule = body
        .schedule
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    let (site, crawl) =
        approve_candidate(&state, user.actor(), &domain, schedule.as_deref()).await?;
    let candidate = state.store().candidate(&site.host).await?;
    Ok(created(ApprovedOut {
        candidate: candidate.into(),
        site_id: site.id,
        crawl_id: crawl.0,
    }))
}

#[utoipa::path(
    operation_id = "ignore_candidate",
    post, path = "/api/v1/candidates/{domain}/ignore", tag = "candidates",
    params(("domain" = String, Path, description = "The domain, a candidate or not yet (`host[:port]`)")),
    responses(
        (status = 200, description = "Ignored: never probed again", body = CandidateOut),
        (status = 400, description = "Not a host name", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
    )
)]
pub(crate) async fn ignore(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(domain): ApiPath<String>,
) -> ApiResult<Json<CandidateOut>> {
    user.require(Role::Reviewer)?;
    Ok(Json(
        ignore_candidate(&state, user.actor(), &domain)
            .await?
            .into(),
    ))
}
