//! Takedown notices: list, draft from a confirmed case with either template, read, mark
//! sent (which starts the case's re-checks).

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use store::{CaseId, NoticeId, Notices, Role};
use utoipa::ToSchema;

use super::common::{ApiJson, ApiPath, ApiQuery, ApiResult, ApiUser, ErrorBody, created};
use crate::actions::notices::draft;
use crate::state::AdminState;

/// A takedown notice, as rendered when it was drafted.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct NoticeOut {
    id: i64,
    case_id: i64,
    /// `dmca` or `cn`.
    template: String,
    /// Where it is to be sent (an email address or a form's URL), or where to find one.
    recipient: String,
    subject: String,
    /// `draft` or `sent`.
    status: String,
    created_by: String,
    created_at: chrono::DateTime<chrono::Utc>,
    sent_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The notice as plain text.
    body_text: String,
    /// The notice as an HTML document (escaped; to save, not to embed).
    body_html: String,
}

impl From<store::NoticeRecord> for NoticeOut {
    fn from(n: store::NoticeRecord) -> Self {
        NoticeOut {
            id: n.id.0,
            case_id: n.case_id.0,
            template: n.template,
            recipient: n.recipient,
            subject: n.subject,
            status: n.status.as_str().to_owned(),
            created_by: n.created_by,
            created_at: n.created_at,
            sent_at: n.sent_at,
            body_text: n.body_text,
            body_html: n.body_html,
        }
    }
}

/// Which notices to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct NoticeQuery {
    /// Only this case's notices.
    case: Option<i64>,
}

#[utoipa::path(
    operation_id = "list_notices",
    get, path = "/api/v1/notices", tag = "notices",
    params(NoticeQuery),
    responses(
        (status = 200, description = "Notices, newest first (at most 500)", body = Vec<NoticeOut>),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
    )
)]
pub(crate) async fn list(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiQuery(q): ApiQuery<NoticeQuery>,
) -> ApiResult<Json<Vec<NoticeOut>>> {
    let mut notices = state.store().notices(q.case.map(CaseId)).await?;
    notices.truncate(500);
    Ok(Json(notices.into_iter().map(NoticeOut::from).collect()))
}

/// A notice to draft.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewNoticeIn {
    /// `dmca` (17 U.S.C. § 512(c)(3)) or `cn` (《信息网络传播权保护条例》第十四条).
    template: String,
    /// The recipient (an email address or an http(s) form URL); else the abuse contact
    /// configured for the host.
    to: Option<String>,
}

#[utoipa::path(
    operation_id = "create_notice",
    post, path = "/api/v1/cases/{id}/notices", tag = "notices",
    params(("id" = i64, Path, description = "The case's id (confirmed)")),
    request_body = NewNoticeIn,
    responses(
        (status = 201, description = "The drafted notice", body = NoticeOut),
        (status = 400, description = "Refused input, or an incomplete rights-holder profile", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such case", body = ErrorBody),
        (status = 409, description = "The case is not confirmed", body = ErrorBody),
    )
)]
pub(crate) async fn create(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(case): ApiPath<i64>,
    ApiJson(new): ApiJson<NewNoticeIn>,
) -> ApiResult<(axum::http::StatusCode, Json<NoticeOut>)> {
    user.require(Role::Reviewer)?;
    let notice = draft(&state, user.actor(), CaseId(case), &new.template, new.to).await?;
    Ok(created(NoticeOut::from(notice)))
}

#[utoipa::path(
    operation_id = "get_notice",
    get, path = "/api/v1/notices/{id}", tag = "notices",
    params(("id" = i64, Path, description = "The notice's id")),
    responses(
        (status = 200, description = "The notice", body = NoticeOut),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such notice", body = ErrorBody),
    )
)]
pub(crate) async fn get(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<NoticeOut>> {
    Ok(Json(state.store().notice(NoticeId(id)).await?.into()))
}

#[utoipa::path(
    operation_id = "mark_notice_sent",
    post, path = "/api/v1/notices/{id}/sent", tag = "notices",
    params(("id" = i64, Path, description = "The notice's id")),
    responses(
        (status = 200, description = "Marked sent; the case's copies are re-checked from now on", body = NoticeOut),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such notice", body = ErrorBody),
        (status = 409, description = "Sent already", body = ErrorBody),
    )
)]
pub(crate) async fn sent(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<NoticeOut>> {
    user.require(Role::Reviewer)?;
    let notice = takedown::notices::mark_sent(
        state.store(),
        &state.settings().rechecks,
        NoticeId(id),
        user.actor(),
        chrono::Utc::now(),
    )
    .await?;
    Ok(Json(notice.into()))
}

/// A draft's new recipient and text; absent fields keep their value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoticeChangeIn {
    /// Where it is to be sent: an email address or a form's URL; `""` when not known yet.
    recipient: Option<String>,
    /// The notice as plain text; its HTML version becomes this text, escaped.
    body_text: Option<String>,
}

#[utoipa::path(
    operation_id = "update_notice",
    patch, path = "/api/v1/notices/{id}", tag = "notices",
    params(("id" = i64, Path, description = "The notice's id")),
    request_body = NoticeChangeIn,
    responses(
        (status = 200, description = "The draft as it is now", body = NoticeOut),
        (status = 400, description = "Refused input", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "Needs the reviewer role", body = ErrorBody),
        (status = 404, description = "No such notice", body = ErrorBody),
        (status = 409, description = "Marked sent: a sent notice is kept as it went", body = ErrorBody),
    )
)]
pub(crate) async fn update(
    State(state): State<AdminState>,
    user: ApiUser,
    ApiPath(id): ApiPath<i64>,
    ApiJson(change): ApiJson<NoticeChangeIn>,
) -> ApiResult<Json<NoticeOut>> {
    user.require(Role::Reviewer)?;
    let id = NoticeId(id);
    let notice = state.store().notice(id).await?;
    let recipient = change.recipient.unwrap_or(notice.recipient);
    let text = change.body_text.unwrap_or(notice.body_text);
    let edited = crate::actions::notices::edit_draft(&state, user.actor(), id, &recipient, &text)
        .await
        .map_err(|r| super::common::ApiError(r.into_error()))?;
    Ok(Json(edited.into()))
}
