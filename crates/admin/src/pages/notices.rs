//! Takedown notices: drafted from a confirmed case with either template, read, downloaded,
//! marked sent (which starts the re-checks), and the re-check run on demand.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, Redirect, Response};
use serde::Deserialize;
use store::{
    AuditLog, CaseId, JobQueue, NoticeId, NoticeRecord, NoticeStatus, Notices, Rechecks, Role,
};
use takedown::NoticeTemplate;

use crate::actions::notices::{draft, edit_draft};
use crate::auth::Empty;
use crate::auth::{CsrfForm, CurrentUser};
use crate::error::{WebError, WebResult};
use crate::form::{Form, FormPost, OnField, answer};
use crate::render::{Ctx, page};
use crate::state::AdminState;

/// The notice form's refusal when the rights holder's profile is not filled in.
pub(crate) const HOLDER_FIELD: &str = "holder";

#[derive(Deserialize)]
pub(crate) struct CreateForm {
    template: String,
    to: Option<String>,
}

pub(crate) async fn create(
    State(state): State<AdminState>,
    Path(case): Path<i64>,
    FormPost(user, form, typed): FormPost<CreateForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let case = CaseId(case);
    let result = async {
        NoticeTemplate::parse(&form.template).on("template")?;
        if let Some(to) = crate::form::blank_none(form.to.clone()) {
            takedown::notice_settings::check_recipient(&to).on("to")?;
        }
        // A notice says who asks: without the rights holder's profile there is none to
        // draft, and the case page links to where it is filled in.
        let effective = state.effective().await?;
        if !effective.notices.rights_holder.missing().is_empty() {
            return Err(crate::form::Refused::label(
                HOLDER_FIELD,
                "notice.holder_missing",
            ));
        }
        draft(&state, user.actor(), case, &form.template, form.to)
            .await
            .on("to")
    }
    .await;
    answer(
        result,
        |notice| format!("/notices/{}", notice.id),
        typed,
        user.lang,
        |form| super::cases::detail_page(&state, &user, case, None, form, None),
    )
    .await
}

pub(crate) async fn recheck_now(
    State(state): State<AdminState>,
    Path(case): Path<i64>,
    CsrfForm(user, _): CsrfForm<Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let case = CaseId(case);
    if state.store().case_recheck(case).await?.is_none() {
        return Err(WebError::Conflict(format!(
            "case {case} has no notice sent: nothing to re-check"
        )));
    }
    let job = casework::rechecks::recheck_job(case)?;
    let job = state.store().enqueue(&job).await?.id();
    state
        .store()
        .record_audit(
            user.actor(),
            "case.recheck_now",
            Some("case"),
            Some(case.0),
            &serde_json::json!({}),
        )
        .await?;
    Ok(Redirect::to(&format!(
        "/cases/{case}?queued=recheck&job={job}"
    )))
}

#[derive(Template)]
#[template(path = "admin/notices.html")]
struct ListPage {
    ctx: Ctx,
    notices: Vec<NoticeRecord>,
}

impl ListPage {}

pub(crate) async fn list(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    let mut notices = state.store().notices(None).await?;
    notices.truncate(500);
    page(&ListPage {
        ctx: user.ctx("notices"),
        notices,
    })
}

#[derive(Template)]
#[template(path = "admin/notice.html")]
struct ShowPage {
    ctx: Ctx,
    notice: NoticeRecord,
    days_since: Option<i64>,
    /// The edit form as typed, when it was refused.
    form: Form,
    /// The draft was just saved.
    edited: bool,
    /// Its send was just queued.
    queued: bool,
    /// Whether an SMTP server is configured.
    mail_configured: bool,
}

impl ShowPage {
    fn is_draft(&self) -> bool {
        self.notice.status == NoticeStatus::Draft
    }

    /// The recipient is a web form: the text is pasted by hand.
    fn web_form(&self) -> bool {
        takedown::sending::is_web_form(&self.notice)
    }

    /// A draft whose recipient takes mail.
    fn mailable(&self) -> bool {
        self.is_draft() && takedown::sending::mail_recipient(&self.notice).is_ok()
    }
}

#[derive(Deserialize)]
pub(crate) struct ShowQuery {
    edited: Option<u8>,
    queued: Option<u8>,
}

pub(crate) async fn show(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
    Query(q): Query<ShowQuery>,
) -> WebResult<Html<String>> {
    show_page(
        &state,
        &user,
        NoticeId(id),
        Form::default(),
        Flash {
            edited: q.edited.is_some(),
            queued: q.queued.is_some(),
        },
    )
    .await
}

/// What the last action on the notice page did.
#[derive(Default)]
struct Flash {
    edited: bool,
    queued: bool,
}

async fn show_page(
    state: &AdminState,
    user: &CurrentUser,
    id: NoticeId,
    form: Form,
    flash: Flash,
) -> WebResult<Html<String>> {
    let notice = state.store().notice(id).await?;
    let days_since = notice
        .sent_at
        .map(|sent| (chrono::Utc::now() - sent).num_days());
    page(&ShowPage {
        ctx: user.ctx("notices"),
        notice,
        days_since,
        form,
        edited: flash.edited,
        queued: flash.queued,
        mail_configured: state.settings().mail_configured,
    })
}

#[derive(Deserialize)]
pub(crate) struct EditForm {
    #[serde(default)]
    recipient: String,
    #[serde(default)]
    body_text: String,
}

pub(crate) async fn edit(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    FormPost(user, form, typed): FormPost<EditForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let id = NoticeId(id);
    let result = edit_draft(&state, user.actor(), id, &form.recipient, &form.body_text).await;
    answer(
        result,
        |_| format!("/notices/{id}?edited=1"),
        typed,
        user.lang,
        |form| show_page(&state, &user, id, form, Flash::default()),
    )
    .await
}

#[derive(Deserialize)]
pub(crate) struct DownloadQuery {
    format: Option<String>,
}

pub(crate) async fn download(
    State(state): State<AdminState>,
    _user: CurrentUser,
    Path(id): Path<i64>,
    Query(q): Query<DownloadQuery>,
) -> WebResult<Response> {
    let notice = state.store().notice(NoticeId(id)).await?;
    let (body, content_type, ext) = match q.format.as_deref().unwrap_or("txt") {
        "txt" => (notice.body_text, "text/plain; charset=utf-8", "txt"),
        // Our own rendering (auto-escaped), served as a file to save, not a page to open
        // here.
        "html" => (notice.body_html, "text/html; charset=utf-8", "html"),
        other => {
            return Err(WebError::bad(format!("format: txt or html, not {other:?}")));
        }
    };
    Ok(crate::render::attachment(
        body,
        content_type,
        &format!("notice-{id}.{ext}"),
    ))
}

pub(crate) async fn sent(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let notice = takedown::notices::mark_sent(
        state.store(),
        &state.settings().rechecks,
        NoticeId(id),
        user.actor(),
        chrono::Utc::now(),
    )
    .await?;
    Ok(Redirect::to(&format!("/cases/{}", notice.case_id)))
}

#[derive(Deserialize)]
pub(crate) struct SendForm {
    #[serde(default)]
    again: Option<String>,
}

/// Queues the job that mails the notice (`takedown::sending::send_job`); what a web form or
/// a missing address cannot take is refused here, before anything is queued.
pub(crate) async fn send(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, form): CsrfForm<SendForm>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let id = NoticeId(id);
    if !state.settings().mail_configured {
        return Err(WebError::Conflict(
            "no SMTP server is configured: set notify.smtp.host, port, tls and from".into(),
        ));
    }
    let notice = state.store().notice(id).await?;
    if notice.status == NoticeStatus::Sent {
        return Err(WebError::Conflict(format!("notice {id} was sent already")));
    }
    takedown::sending::mail_recipient(&notice)?;
    let again = form.again.is_some();
    let job = takedown::sending::send_job(id, again)?;
    state.store().enqueue(&job).await?;
    state
        .store()
        .record_audit(
            user.actor(),
            "notice.send_queued",
            Some("notice"),
            Some(id.0),
            &serde_json::json!({ "again": again }),
        )
        .await?;
    Ok(Redirect::to(&format!("/notices/{id}?queued=1")))
}
