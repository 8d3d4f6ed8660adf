//! Discovery's candidate sites: domains where a search or a crawl scan found a copy, waiting
//! for a person to approve or ignore them.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use store::{CandidateStatus, Discovery};
use utoipa::ToSchema;

use super::{ApiQuery, ApiResult, ApiUser, ErrorBody};
use crate::state::AdminState;

/// Where a candidate stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
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
    /// How it was first found (`search`, `commoncrawl`, `import`).
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
