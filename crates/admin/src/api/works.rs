//! Works: list and search, register (an import job), one work with its chapters.

use axum::Json;
use axum::extract::State;
use base64::Engine;
use serde::{Deserialize, Serialize};
use store::{Page, Role, WorkFilter, WorkId, WorkReads};
use utoipa::ToSchema;

use super::common::{
    ApiError, ApiJson, ApiPath, ApiQuery, ApiResult, ApiUser, ErrorBody, PageQuery, Queued,
    accepted, bad_cursor,
};
use crate::actions::works::{queue_import, title_from_file_name, upload_extension};
use crate::error::WebError;
use crate::state::AdminState;

super::common::page_of!(
    /// One page of the works.
    WorkPage,
    WorkOut
);

/// A registered work.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WorkOut {
    id: i64,
    title: String,
    author: Option<String>,
    /// Chapters found when it was imported.
    chapters: u32,
    /// Characters over all chapter bodies.
    chars: u64,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl From<store::WorkSummary> for WorkOut {
    fn from(w: store::WorkSummary) -> Self {
        WorkOut {
            id: w.id.0,
            title: w.title,
            author: w.author,
            chapters: w.chapters,
            chars: w.chars,
            created_at: w.created_at,
        }
    }
}

/// A work with its chapters.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WorkDetail {
    id: i64,
    title: String,
    author: Option<String>,
    /// `txt`, `epub` or `html`.
    source_format: String,
    /// The file it was imported from, if any.
    source_name: Option<String>,
    /// SHA-256 of the normalised text, hex: the same text imported again is this work.
    content_hash: String,
    chars: u64,
    created_at: chrono::DateTime<chrono::Utc>,
    chapters: Vec<ChapterOut>,
}

/// One chapter of a work.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ChapterOut {
    id: i64,
    /// 1-based position in the work.
    index: u32,
    title: String,
    chars: u32,
}

/// `q` of the works listing.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct WorkQuery {
    /// Only works whose title contains this (at most 200 characters).
    q: Option<String>,
}

#[utoipa::path(
    operation_id = "list_works",
    get, path = "/api/v1/works", tag = "works",
    params(WorkQuery, PageQuery),
    responses(
        (status = 200, description = "Works, oldest first", body = WorkPage),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
    )
)]
pub(crate) async fn list(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiQuery(q): ApiQuery<WorkQuery>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> ApiResult<Json<WorkPage>> {
    let limit = page.limit()?;
    let after = page
        .cursor()
        .map(|c| c.parse::<WorkId>().map_err(|_| bad_cursor()))
        .transpose()?;
    let filter = match q.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        None => WorkFilter::All,
        Some(q) if q.chars().count() > 200 => {
            return Err(ApiError(WebError::bad("q: at most 200 characters")));
        }
        Some(q) => WorkFilter::TitleContains(q.to_owned()),
    };
    let works = state
        .store()
        .works(
            &filter,
            Page {
                after,
                limit: Some(limit),
            },
        )
        .await?;
    let next_cursor = (works.len() == limit as usize)
        .then(|| works.last().map(|w| w.id.to_string()))
        .flatten();
    Ok(Json(WorkPage {
        items: works.into_iter().map(WorkOut::from).collect(),
        next_cursor,
    }))
}

/// A work to register: its text, or a file's bytes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewWorkIn {
    /// Its title; from the file's name when absent.
    title: Option<String>,
    author: Option<String>,
    /// The whole text, chapters marked by their headings (`第一章`, `Chapter 1`, ...).
    text: Option<String>,
    /// Or a file: TXT (UTF-8, GBK/GB18030, Big5), EPUB or HTML.
    file: Option<FileIn>,
}

/// An uploaded file.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileIn {
    /// Its name; the extension (`.txt`, `.epub`, `.html`) says how to read it.
    name: String,
    /// Its bytes, base64 (standard alphabet, padded).
    content_base64: String,
}

#[utoipa::path(
    operation_id = "register_work",
    post, path = "/api/v1/works", tag = "works",
    request_body = NewWorkIn,
    responses(
        (status = 202, description = "Import queued; follow the job", body = Queued),
        (status = 400, description = "Refused input", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
    )
)]
pub(crate) async fn register(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiJson(work): ApiJson<NewWorkIn>,
) -> ApiResult<(axum::http::StatusCode, Json<Queued>)> {
    user.require(Role::Reviewer)?;
    let blank = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let mut title = blank(work.title);
    let (ext, bytes) = match (work.file, work.text) {
        (Some(_), Some(_)) => {
            return Err(ApiError(WebError::bad(
                "give either text or file, not both",
            )));
        }
        (Some(file), None) => {
            let ext = upload_extension(&file.name)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(file.content_base64.trim())
                .map_err(|e| WebError::bad(format!("file.content_base64: not base64: {e}")))?;
            if title.is_none() {
                title = title_from_file_name(&file.name);
            }
            (ext, bytes)
        }
        (None, Some(text)) if !text.trim().is_empty() => ("txt".to_owned(), text.into_bytes()),
        _ => return Err(ApiError(WebError::bad("give the work's text or a file"))),
    };
    if bytes.is_empty() {
        return Err(ApiError(WebError::bad("the file is empty")));
    }
    let title = title.ok_or_else(|| WebError::bad("a text needs a title"))?;
    let job = queue_import(&state, user.actor(), &ext, bytes, title, blank(work.author)).await?;
    Ok(accepted(Queued { job_id: job.0 }))
}

#[utoipa::path(
    operation_id = "get_work",
    get, path = "/api/v1/works/{id}", tag = "works",
    params(("id" = i64, Path, description = "The work's id")),
    responses(
        (status = 200, description = "The work and its chapters", body = WorkDetail),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such work", body = ErrorBody),
    )
)]
pub(crate) async fn get(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<WorkDetail>> {
    Ok(Json(work_detail(&state, WorkId(id)).await?))
}

async fn work_detail(state: &AdminState, id: WorkId) -> ApiResult<WorkDetail> {
    let work = state.store().work(id).await?;
    let chapters = state.store().chapters(id).await?;
    Ok(WorkDetail {
        id: work.id.0,
        title: work.title,
        author: work.author,
        source_format: work.source_format.as_str().to_owned(),
        source_name: work.source_name,
        content_hash: work
            .content_hash
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        chars: work.chars,
        created_at: work.created_at,
        chapters: chapters
            .into_iter()
            .map(|c| ChapterOut {
                id: c.id.0,
                index: c.ordinal,
                title: c.title,
                chars: c.chars,
            })
            .collect(),
    })
}

/// What to change of a work; absent fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkChangeIn {
    /// A new title (not empty; control characters are dropped).
    title: Option<String>,
    /// A new author; `""` removes it.
    author: Option<String>,
}

#[utoipa::path(
    operation_id = "update_work",
    patch, path = "/api/v1/works/{id}", tag = "works",
    params(("id" = i64, Path, description = "The work's id")),
    request_body = WorkChangeIn,
    responses(
        (status = 200, description = "The work as it is now", body = WorkDetail),
        (status = 400, description = "Refused input", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such work", body = ErrorBody),
    )
)]
pub(crate) async fn update(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(id): ApiPath<i64>,
    ApiJson(change): ApiJson<WorkChangeIn>,
) -> ApiResult<Json<WorkDetail>> {
    user.require(Role::Reviewer)?;
    if change.title.is_none() && change.author.is_none() {
        return Err(ApiError(WebError::bad(
            "nothing to change: give title or author",
        )));
    }
    let id = WorkId(id);
    crate::actions::works::edit_work(&state, user.actor(), id, change.title, change.author)
        .await
        .map_err(|r| ApiError(r.into_error()))?;
    Ok(Json(work_detail(&state, id).await?))
}
