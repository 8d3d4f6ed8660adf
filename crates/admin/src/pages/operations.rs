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

/// One thing an audit entry's details hold, in the page's language.
pub(crate) struct Detail {
    /// What it is: its label, or its key as written when there is none.
    key: String,
    /// Whether the key is data (a setting's name inside `settings`), shown as such.
    key_is_data: bool,
    /// Its value: a label (yes, no, a status) or the data as written.
    value: String,
    /// Whether the value is data.
    value_is_data: bool,
}

impl AuditPage {
    /// An entry's details as labelled pairs: nested objects (`before`, `after`, a title's
    /// `old` and `new`) flattened with their path, lists joined, yes and no and statuses in
    /// the page's language, everything else as written.
    fn details(&self, r: &AuditRecord) -> Vec<Detail> {
        let lang = self.ctx.lang;
        let mut out = Vec::new();
        let serde_json::Value::Object(map) = &r.details else {
            if !r.details.is_null() {
                out.push(Detail {
                    key: String::new(),
                    key_is_data: false,
                    value: r.details.to_string(),
                    value_is_data: true,
                });
            }
            return out;
        };
        // (path said so far, whether any of it is data, the object): objects nest a few
        // levels at most, walked without recursion.
        let mut todo = vec![(String::new(), false, map)];
        while let Some((path, path_is_data, map)) = todo.pop() {
            let mut nested = Vec::new();
            for (key, value) in map {
                let label = lang.lookup(&format!("detail.{key}"));
                let said = label.unwrap_or(key);
                let key_is_data = path_is_data || (label.is_none() && !path.is_empty());
                let key_path = if path.is_empty() {
                    said.to_owned()
                } else {
                    format!("{path} › {said}")
                };
                match value {
                    serde_json::Value::Object(inner) => {
                        // A setting's names are data: the crawl's keys, not words.
                        nested.push((key_path, key_is_data || key == "settings", inner));
                    }
                    other => {
                        let (value, value_is_data) = detail_value(lang, key, other);
                        out.push(Detail {
                            key: key_path,
                            key_is_data,
                            value,
                            value_is_data,
                        });
                    }
                }
            }
            todo.extend(nested.into_iter().rev());
        }
        out
    }
}

/// A detail's value in `lang`: yes and no, a status (`from`, `to`), a role, a word the
/// store writes (`changed`) said; anything else as written (data).
fn detail_value(lang: crate::i18n::Lang, key: &str, value: &serde_json::Value) -> (String, bool) {
    use serde_json::Value;
    match value {
        Value::Bool(b) => (lang.t(&format!("detail_value.{b}")).to_owned(), false),
        Value::Null => ("—".to_owned(), false),
        Value::String(s) => {
            let prefix = match key {
                "from" | "to" => "status",
                "role" => "role",
                _ => "detail_value",
            };
            match lang.lookup(&format!("{prefix}.{s}")) {
                Some(said) => (said.to_owned(), false),
                None => (s.clone(), true),
            }
        }
        Value::Array(items) => (
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
            true,
        ),
        Value::Number(n) => (n.to_string(), true),
        Value::Object(_) => (value.to_string(), true),
    }
}

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
