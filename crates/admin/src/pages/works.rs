//! Works: the list with search, registering one (an uploaded TXT/EPUB/HTML file or pasted
//! text, imported by a job whose progress the list shows), and a work's detail.

use askama::Template;
use axum::extract::{Multipart, Path, Query, State};
use axum::response::{Html, Redirect, Response};
use serde::Deserialize;
use store::{
    AuditLog, CaseFilter, CaseReads, CaseRecord, ChapterInfo, JobFilter, JobQueue, JobRecord,
    JobStatus, Page, Role, Work, WorkFilter, WorkId, WorkReads, WorkSummary,
};

use crate::actions::works::{edit_work, queue_import, title_from_file_name, upload_extension};
use crate::auth::{CsrfForm, CurrentUser, check_csrf};
use crate::error::{WebError, WebResult};
use crate::form::{Form, FormPost, OnField, Refused, answer};
use crate::pages::queued::Queued;
use crate::render::{Ctx, page, pct};
use crate::state::AdminState;

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    q: Option<String>,
    after: Option<i64>,
}

#[derive(Template)]
#[template(path = "admin/works.html")]
struct ListPage {
    ctx: Ctx,
    works: Vec<WorkSummary>,
    imports: Vec<JobRecord>,
    q: String,
    next: Option<WorkId>,
    /// The register form as typed, when it was refused.
    form: Form,
}

impl ListPage {
    fn enc(&self, s: &str) -> String {
        crate::render::urlencode(s)
    }
}

pub(crate) async fn list(
    State(state): State<AdminState>,
    user: CurrentUser,
    Query(query): Query<ListQuery>,
) -> WebResult<Html<String>> {
    list_page(&state, &user, query, Form::default()).await
}

async fn list_page(
    state: &AdminState,
    user: &CurrentUser,
    query: ListQuery,
    form: Form,
) -> WebResult<Html<String>> {
    let q = crate::form::blank_none(query.q).unwrap_or_default();
    if q.chars().count() > 200 {
        return Err(WebError::bad("search: at most 200 characters"));
    }
    let filter = if q.is_empty() {
        WorkFilter::All
    } else {
        WorkFilter::TitleContains(q.clone())
    };
    let limit = state.settings().page_size;
    let works = state
        .store()
        .works(
            &filter,
            Page {
                after: query.after.map(WorkId),
                limit: Some(limit),
            },
        )
        .await?;
    let next = (works.len() == limit as usize)
        .then(|| works.last().map(|w| w.id))
        .flatten();
    // Imports still to run, running, or failed for good: their progress.
    let mut imports = Vec::new();
    for status in [JobStatus::Running, JobStatus::Queued, JobStatus::Dead] {
        let jobs = state
            .store()
            .jobs(
                &JobFilter::Status(status),
                Page {
                    after: None,
                    limit: Some(200),
                },
            )
            .await?;
        imports.extend(jobs.into_iter().filter(|j| j.kind == "ImportWork"));
    }
    imports.truncate(20);
    page(&ListPage {
        ctx: user.ctx("works"),
        works,
        imports,
        q,
        next,
        form,
    })
}

pub(crate) async fn register(
    State(state): State<AdminState>,
    user: CurrentUser,
    form: Multipart,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let mut typed = Vec::new();
    let result = upload(&state, &user, form, &mut typed).await;
    let typed = Form::with_values(typed.iter().map(|(n, v)| (*n, v.as_str())));
    let query = ListQuery {
        q: None,
        after: None,
    };
    answer(
        result,
        |()| "/works?queued=1".to_owned(),
        typed,
        user.lang,
        |form| list_page(&state, &user, query, form),
    )
    .await
}

/// Reads the register form and queues the import; what was typed (title, author, text) is
/// put in `typed` as it is read, for the form to show again when it is refused.
async fn upload(
    state: &AdminState,
    user: &CurrentUser,
    mut form: Multipart,
    typed: &mut Vec<(&'static str, String)>,
) -> Result<(), Refused> {
    let mut csrf = String::new();
    let mut title = None;
    let mut author = None;
    let mut file: Option<(String, axum::body::Bytes)> = None;
    let mut text = None;
    while let Some(field) = form
        .next_field()
        .await
        .map_err(|e| upload_error(state, &e))?
    {
        let name = field.name().unwrap_or_default().to_owned();
        match name.as_str() {
            "file" => {
                let filename = field.file_name().unwrap_or_default().to_owned();
                let bytes = field.bytes().await.map_err(|e| upload_error(state, &e))?;
                if !bytes.is_empty() {
                    file = Some((filename, bytes));
                }
            }
            _ => {
                let value = field
                    .text()
                    .await
                    .map_err(|e| match upload_error(state, &e) {
                        WebError::BadRequest(_) => {
                            WebError::bad(format!("bad form field {name}: {e}"))
                        }
                        too_large => too_large,
                    })?;
                match name.as_str() {
                    "csrf" => csrf = value,
                    "title" => {
                        typed.push(("title", value.clone()));
                        title = crate::form::blank_none(Some(value));
                    }
                    "author" => {
                        typed.push(("author", value.clone()));
                        author = crate::form::blank_none(Some(value));
                    }
                    "text" => {
                        typed.push(("text", value.clone()));
                        text = crate::form::blank_none(Some(value));
                    }
                    _ => {}
                }
            }
        }
    }
    // Checked after reading the whole form: a multipart body has no order guarantee.
    check_csrf(user, &csrf)?;
    let (ext, bytes) = match (file, text) {
        (Some((filename, bytes)), _) => {
            let ext = upload_extension(&filename).on("file")?;
            // A title from the file's name when none was typed.
            if title.is_none() {
                title = title_from_file_name(&filename);
            }
            (ext, bytes.to_vec())
        }
        (None, Some(text)) => ("txt".to_owned(), text.into_bytes()),
        (None, None) => return Err(Refused::label("file", "form.file_or_text")),
    };
    let title = title.ok_or_else(|| Refused::label("title", "form.required"))?;
    queue_import(state, user.actor(), &ext, bytes, title, author)
        .await
        .on("title")?;
    Ok(())
}

/// A multipart error as the person uploading should read it: past the upload limit a 413
/// saying the limit (multer's own words were "Error parsing multipart/form-data request").
fn upload_error(state: &AdminState, e: &axum::extract::multipart::MultipartError) -> WebError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        crate::auth::too_large(state.settings().max_upload_bytes, "an upload")
    } else {
        WebError::bad(format!("bad upload: {}", e.body_text()))
    }
}

#[derive(Template)]
#[template(path = "admin/work.html")]
struct DetailPage {
    ctx: Ctx,
    work: Work,
    chapters: Vec<ChapterInfo>,
    cases: Vec<CaseRecord>,
    /// The edit form as typed, when it was refused.
    form: Form,
    /// The title and author were just saved.
    edited: bool,
    /// The search "Search for copies now" just queued.
    queued: Option<Queued>,
    /// A search provider is configured: the search button is offered.
    can_search: bool,
}

impl DetailPage {
    fn author(&self) -> &str {
        self.work.author.as_deref().unwrap_or_default()
    }
    fn pct(&self, share: &f64) -> String {
        pct(share)
    }
}

#[derive(Deserialize)]
pub(crate) struct DetailQuery {
    edited: Option<u8>,
    /// "Search for copies now": `discover` and its job.
    queued: Option<String>,
    job: Option<i64>,
}

pub(crate) async fn detail(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
    Query(query): Query<DetailQuery>,
) -> WebResult<Html<String>> {
    let edited = query.edited.is_some();
    let queued = Queued::read(&state, query.queued.as_deref(), query.job).await?;
    detail_page(&state, &user, WorkId(id), Form::default(), edited, queued).await
}

/// "Search for copies now": the work's rare phrases sent to the default search provider
/// by a worker ([`store::Job`] `DiscoverWork`, as the `discovery` schedule queues it), within
/// the day's budgets; the page follows the job.
pub(crate) async fn discover_now(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<crate::auth::Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let work = state.store().work(WorkId(id)).await?;
    let discovery = &state.settings().discovery;
    discovery
        .provider(None)
        .map_err(|e| WebError::Conflict(e.to_string()))?;
    let job = discovery::discover_work_job(work.id)?;
    let job = state.store().enqueue(&job).await?.id();
    state
        .store()
        .record_audit(
            user.actor(),
            "work.discover",
            Some("work"),
            Some(work.id.0),
            &serde_json::json!({ "job": job.0 }),
        )
        .await?;
    Ok(Redirect::to(&format!(
        "/works/{}?queued=discover&job={job}",
        work.id
    )))
}

async fn detail_page(
    state: &AdminState,
    user: &CurrentUser,
    id: WorkId,
    form: Form,
    edited: bool,
    queued: Option<Queued>,
) -> WebResult<Html<String>> {
    let work = state.store().work(id).await?;
    let mut chapters = state.store().chapters(id).await?;
    chapters.truncate(500);
    let filter = CaseFilter {
        work: Some(id),
        ..CaseFilter::default()
    };
    let cases = state.store().cases(&filter, None, 100).await?;
    page(&DetailPage {
        ctx: user.ctx("works"),
        work,
        chapters,
        cases,
        form,
        edited,
        queued,
        can_search: state.settings().discovery.provider(None).is_ok(),
    })
}

#[derive(Deserialize)]
pub(crate) struct EditForm {
    title: Option<String>,
    author: Option<String>,
}

pub(crate) async fn edit(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    FormPost(user, form, typed): FormPost<EditForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let id = WorkId(id);
    let result = edit_work(&state, user.actor(), id, form.title, form.author).await;
    answer(
        result,
        |_| format!("/works/{id}?edited=1"),
        typed,
        user.lang,
        |form| detail_page(&state, &user, id, form, false, None),
    )
    .await
}
