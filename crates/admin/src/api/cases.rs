//! Cases: the review queue with its filters, one case with its chapters, passages, pages,
//! snapshots and re-check state, and setting its status.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use store::{CaseFilter, CaseId, CaseReads, CaseStatus, CaseWrites, Rechecks, Role, WorkId};
use utoipa::ToSchema;

use super::common::{
    ApiError, ApiJson, ApiPath, ApiQuery, ApiResult, ApiUser, ErrorBody, PageQuery, bad_cursor,
};
use crate::actions::cases::{format_cursor, parse_cursor};
use crate::error::WebError;
use crate::state::AdminState;

/// Where review of a case stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// Found, not reviewed yet.
    New,
    /// A reviewer confirmed the copy.
    Confirmed,
    /// A takedown notice went out.
    NoticeSent,
    /// Every copy is gone.
    Removed,
    /// Not infringing.
    Dismissed,
}

impl From<CaseStatus> for Status {
    fn from(s: CaseStatus) -> Self {
        match s {
            CaseStatus::New => Status::New,
            CaseStatus::Confirmed => Status::Confirmed,
            CaseStatus::NoticeSent => Status::NoticeSent,
            CaseStatus::Removed => Status::Removed,
            CaseStatus::Dismissed => Status::Dismissed,
        }
    }
}

impl From<Status> for CaseStatus {
    fn from(s: Status) -> Self {
        match s {
            Status::New => CaseStatus::New,
            Status::Confirmed => CaseStatus::Confirmed,
            Status::NoticeSent => CaseStatus::NoticeSent,
            Status::Removed => CaseStatus::Removed,
            Status::Dismissed => CaseStatus::Dismissed,
        }
    }
}

super::common::page_of!(
    /// One page of the review queue.
    CasePage,
    CaseOut
);

/// A case: one site copying one work.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CaseOut {
    id: i64,
    status: Status,
    site_id: i64,
    /// The site's host.
    site: String,
    work_id: i64,
    work_title: String,
    /// Fetch time of the earliest snapshot that matched.
    first_seen_at: chrono::DateTime<chrono::Utc>,
    /// Fetch time of the latest snapshot that matched.
    last_seen_at: chrono::DateTime<chrono::Utc>,
    status_changed_at: chrono::DateTime<chrono::Utc>,
    review_note: Option<String>,
    /// Pages of the site holding a copy.
    pages: u32,
    /// Chapters of the work copied.
    chapters_matched: u32,
    work_chapters: u32,
    /// `chapters_matched / work_chapters`, 0 to 1.
    exposure: f64,
}

impl From<store::CaseRecord> for CaseOut {
    fn from(c: store::CaseRecord) -> Self {
        CaseOut {
            id: c.id.0,
            status: c.status.into(),
            site_id: c.site_id.0,
            site: c.site,
            work_id: c.work_id.0,
            work_title: c.work_title,
            first_seen_at: c.first_seen_at,
            last_seen_at: c.last_seen_at,
            status_changed_at: c.status_changed_at,
            review_note: c.review_note,
            pages: c.pages,
            chapters_matched: c.chapters_matched,
            work_chapters: c.work_chapters,
            exposure: c.exposure,
        }
    }
}

/// The review queue's filters.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct CaseQuery {
    /// Only cases in this status (all when absent).
    status: Option<Status>,
    /// Only cases of this work.
    work: Option<i64>,
    /// Only cases on this host.
    site: Option<String>,
    /// Only cases with at least this share of the work's chapters copied, 0 to 1.
    min_exposure: Option<f64>,
}

#[utoipa::path(
    operation_id = "list_cases",
    get, path = "/api/v1/cases", tag = "cases",
    params(CaseQuery, PageQuery),
    responses(
        (status = 200, description = "Cases, latest seen first", body = CasePage),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
    )
)]
pub(crate) async fn list(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiQuery(q): ApiQuery<CaseQuery>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> ApiResult<Json<CasePage>> {
    let limit = page.limit()?;
    let cursor = page
        .cursor()
        .map(|c| parse_cursor(c).ok_or_else(bad_cursor))
        .transpose()?;
    if let Some(e) = q.min_exposure.filter(|e| !(0.0..=1.0).contains(e)) {
        return Err(ApiError(WebError::bad(format!(
            "min_exposure: a share from 0 to 1, not {e}"
        ))));
    }
    let filter = CaseFilter {
        status: q.status.map(CaseStatus::from),
        work: q.work.map(WorkId),
        site: q
            .site
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
        min_exposure: q.min_exposure,
    };
    let cases = state.store().cases(&filter, cursor, limit).await?;
    let next_cursor = (cases.len() == limit as usize)
        .then(|| cases.last().map(|c| format_cursor(&c.cursor())))
        .flatten();
    Ok(Json(CasePage {
        items: cases.into_iter().map(CaseOut::from).collect(),
        next_cursor,
    }))
}

/// A case with everything a reviewer reads.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CaseDetail {
    case: CaseOut,
    /// The chapters copied, in work order.
    chapters: Vec<CaseChapterOut>,
    /// The site's pages holding copies.
    pages: Vec<CasePageOut>,
    /// Every fetch that matched: the evidence.
    snapshots: Vec<SnapshotOut>,
    /// After a notice: how each copy stands.
    recheck: Option<RecheckOut>,
}

/// A chapter of a case.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CaseChapterOut {
    chapter_id: i64,
    /// 1-based position in the work.
    index: u32,
    title: String,
    /// Share of the chapter found on the site over all its pages, 0 to 1.
    coverage: f64,
    /// The best single match's score, 0 to 1.
    score: f64,
    /// The page of the best match.
    url: String,
    /// Its snapshot (`/snapshots/{id}/text` is the page text the offsets point into).
    snapshot_id: i64,
    /// Copied passages of the best match.
    passages: Vec<PassageOut>,
}

/// A copied passage: UTF-8 byte ranges into the snapshot's page text and the chapter body.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PassageOut {
    page: ByteRange,
    chapter: ByteRange,
    /// Characters copied.
    chars: usize,
}

/// A range of UTF-8 byte offsets, `start` included, `end` not.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ByteRange {
    start: usize,
    end: usize,
}

impl From<std::ops::Range<usize>> for ByteRange {
    fn from(r: std::ops::Range<usize>) -> Self {
        ByteRange {
            start: r.start,
            end: r.end,
        }
    }
}

/// A passage as the matcher stores it.
#[derive(Deserialize)]
struct Span {
    page: std::ops::Range<usize>,
    chapter: std::ops::Range<usize>,
    #[serde(default)]
    chars: usize,
}

/// The passages of a match; a row that does not parse shows none rather than failing the
/// whole case.
fn passages(stored: &str) -> Vec<PassageOut> {
    serde_json::from_str::<Vec<Span>>(stored)
        .unwrap_or_default()
        .into_iter()
        .map(|s| PassageOut {
            page: s.page.into(),
            chapter: s.chapter.into(),
            chars: s.chars,
        })
        .collect()
}

/// A page of a case.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CasePageOut {
    url: String,
    first_seen: chrono::DateTime<chrono::Utc>,
    last_seen: chrono::DateTime<chrono::Utc>,
    /// The chapters (1-based indexes) it holds.
    chapters: Vec<u32>,
}

/// A stored fetch: the response's SHA-256 and time.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SnapshotOut {
    id: i64,
    url: String,
    fetched_at: chrono::DateTime<chrono::Utc>,
    /// SHA-256 of the body, hex.
    sha256: String,
}

/// The re-checks after a notice.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RecheckOut {
    notice_sent_at: chrono::DateTime<chrono::Utc>,
    /// Days since the notice went out.
    days_since_notice: i64,
    checks: u32,
    last_checked_at: Option<chrono::DateTime<chrono::Utc>>,
    next_at: Option<chrono::DateTime<chrono::Utc>>,
    copies: Vec<CopyOut>,
}

/// How one copy stands.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CopyOut {
    url: String,
    /// `up`, `removed` or `unknown`.
    state: String,
    /// Why, for people.
    reason: String,
    checked_at: chrono::DateTime<chrono::Utc>,
    removed_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The snapshot that showed it gone: the evidence of removal.
    removed_snapshot: Option<i64>,
}

#[utoipa::path(
    operation_id = "get_case",
    get, path = "/api/v1/cases/{id}", tag = "cases",
    params(("id" = i64, Path, description = "The case's id")),
    responses(
        (status = 200, description = "The case", body = CaseDetail),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such case", body = ErrorBody),
    )
)]
pub(crate) async fn get(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<CaseDetail>> {
    let id = CaseId(id);
    let view = casework::case_view(state.store(), id).await?;
    let snapshots = view
        .snapshots()
        .into_iter()
        .filter_map(|(snapshot, url)| {
            let m = view.matches.iter().find(|m| m.snapshot_id == snapshot)?;
            Some(SnapshotOut {
                id: snapshot.0,
                url: url.to_owned(),
                fetched_at: m.fetched_at,
                sha256: m.snapshot_sha256.clone(),
            })
        })
        .collect();
    let now = chrono::Utc::now();
    let recheck = state.store().case_recheck(id).await?.map(|r| RecheckOut {
        days_since_notice: casework::rechecks::days_since_notice(&r, now),
        notice_sent_at: r.sent_at,
        checks: r.checks,
        last_checked_at: r.last_checked_at,
        next_at: r.next_at,
        copies: r
            .copies
            .into_iter()
            .map(|c| CopyOut {
                url: c.url,
                state: c.state.as_str().to_owned(),
                reason: c.reason,
                checked_at: c.checked_at,
                removed_at: c.removed_at,
                removed_snapshot: c.removed_snapshot.map(|s| s.0),
            })
            .collect(),
    });
    let chapters = view
        .chapters
        .iter()
        .map(|c| CaseChapterOut {
            chapter_id: c.chapter_id.0,
            index: c.chapter_index,
            title: c.chapter_title.clone(),
            coverage: c.coverage,
            score: c.best.score,
            url: c.best.url.clone(),
            snapshot_id: c.best.snapshot_id.0,
            passages: passages(&c.best.passages),
        })
        .collect();
    let pages = view
        .pages
        .iter()
        .map(|p| CasePageOut {
            url: p.url.clone(),
            first_seen: p.first_seen,
            last_seen: p.last_seen,
            chapters: p.chapters.clone(),
        })
        .collect();
    Ok(Json(CaseDetail {
        case: view.case.into(),
        chapters,
        pages,
        snapshots,
        recheck,
    }))
}

/// A review decision.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusIn {
    status: Status,
    /// Why, for the history (at most 2000 characters).
    note: Option<String>,
    /// Why a case is dismissed: `licensed`, `quotation`, `not_ours` or `other`; written first
    /// in the history's note.
    reason: Option<String>,
}

#[utoipa::path(
    operation_id = "set_case_status",
    post, path = "/api/v1/cases/{id}/status", tag = "cases",
    params(("id" = i64, Path, description = "The case's id")),
    request_body = StatusIn,
    responses(
        (status = 200, description = "The case as it is now", body = CaseOut),
        (status = 400, description = "Refused input", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such case", body = ErrorBody),
        (status = 409, description = "Not a move allowed from the case's status", body = ErrorBody),
    )
)]
pub(crate) async fn set_status(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(id): ApiPath<i64>,
    ApiJson(change): ApiJson<StatusIn>,
) -> ApiResult<Json<CaseOut>> {
    user.require(Role::Reviewer)?;
    let note = change
        .note
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty());
    if note.as_ref().is_some_and(|n| n.chars().count() > 2000) {
        return Err(ApiError(WebError::bad("note: at most 2000 characters")));
    }
    let reason = change
        .reason
        .as_deref()
        .map(casework::review::DismissReason::parse)
        .transpose()
        .map_err(WebError::from)?;
    let note = casework::review::decision_note(reason, note.as_deref());
    let id = CaseId(id);
    state
        .store()
        .set_case_status(id, change.status.into(), user.actor(), note.as_deref())
        .await?;
    Ok(Json(state.store().case(id).await?.into()))
}

#[utoipa::path(
    operation_id = "get_case_evidence",
    get, path = "/api/v1/cases/{id}/evidence", tag = "cases",
    params(("id" = i64, Path, description = "The case's id")),
    responses(
        (status = 200, description = "The case's evidence package as a zip: the files \
          `copyhound cases evidence` writes (the WARC file, the page texts, screenshots, \
          passages, timestamp tokens, README and manifest), each with its SHA-256 in \
          `manifest.json`", content_type = "application/zip"),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 404, description = "No such case", body = ErrorBody),
    )
)]
pub(crate) async fn evidence(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<axum::response::Response> {
    Ok(crate::actions::cases::evidence_zip(&state, CaseId(id)).await?)
}
