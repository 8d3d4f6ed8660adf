//! For admins: the queue (failed and dead jobs with their errors, and a retry button) and
//! the audit log.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{Html, Redirect};
use serde::Deserialize;
use store::{
    AuditId, AuditLog, AuditRecord, JobFilter, JobId, JobQueue, JobRecord, JobStatus, Page,
    QueueCounts, Role,
};

use crate::auth::{CsrfForm, CurrentUser};
use crate::error::WebResult;
use crate::render::{Ctx, page};
use crate::state::AdminState;

#[derive(Template)]
#[template(path = "admin/jobs.html")]
struct JobsPage {
    ctx: Ctx,
    counts: Vec<QueueCounts>,
    dead: Vec<JobRecord>,
    failing: Vec<JobRecord>,
}

impl JobsPage {
    /// An error as stored can be long (a chain of causes): the first part is enough here.
    fn short(&self, e: &str) -> String {
        e.chars().take(300).collect()
    }
}

pub(crate) async fn jobs(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    user.require(Role::Admin)?;
    let page_of = |limit| Page {
        after: None,
        limit: Some(limit),
    };
    let mut dead = state
        .store()
        .jobs(&JobFilter::Status(JobStatus::Dead), page_of(500))
        .await?;
    dead.reverse();
    dead.truncate(100);
    // Queued again after a failed attempt: still to run, with the error that sent it back.
    let failing = state
        .store()
        .jobs(&JobFilter::Status(JobStatus::Queued), page_of(500))
        .await?
        .into_iter()
        .filter(|j| j.last_error.is_some())
        .take(100)
        .collect();
    page(&JobsPage {
        ctx: user.ctx("jobs"),
        counts: state.store().counts().await?,
        dead,
        failing,
    })
}

pub(crate) async fn retry(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<crate::auth::Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Admin)?;
    state.store().retry_dead(JobId(id)).await?;
    state
        .store()
        .record_audit(
            user.actor(),
            "job.retry",
            Some("job"),
            Some(id),
            &serde_json::json!({}),
        )
        .await?;
    Ok(Redirect::to("/jobs"))
}

#[derive(Deserialize)]
pub(crate) struct AuditQuery {
    before: Option<i64>,
}

#[derive(Template)]
#[template(path = "admin/audit.html")]
struct AuditPage {
    ctx: Ctx,
    rows: Vec<AuditRecord>,
    next: Option<AuditId>,
}

impl AuditPage {}

pub(crate) async fn audit(
    State(state): State<AdminState>,
    user: CurrentUser,
    Query(q): Query<AuditQuery>,
) -> WebResult<Html<String>> {
    user.require(Role::Admin)?;
    let limit = state.settings().page_size * 2;
    let rows = state
        .store()
        .recent_audit(q.before.map(AuditId), limit)
        .await?;
    let next = (rows.len() == limit as usize)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    page(&AuditPage {
        ctx: user.ctx("audit"),
        rows,
        next,
    })
}
