//! Works: an upload kept and its import queued, and a work's title and author changed.

use store::{AuditLog, JobQueue, NewJob, Page, WorkFilter, WorkId, WorkReads, WorkSummary};

use crate::error::{WebError, WebResult};
use crate::form::{OnField, Refused};
use crate::state::AdminState;

/// The file types the importer reads, by extension.
/// The file name extensions a work may be uploaded with, lower-case.
pub(crate) const EXTENSIONS: [&str; 4] = ["txt", "epub", "html", "htm"];

/// The format of an uploaded file, from its name's extension (lower-cased).
pub(crate) fn upload_extension(filename: &str) -> WebResult<String> {
    std::path::Path::new(filename)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .filter(|e| EXTENSIONS.contains(&e.as_str()))
        .ok_or_else(|| WebError::bad(format!("{filename:?}: upload a .txt, .epub or .html file")))
}

/// A title from an uploaded file's name, when none was given.
pub(crate) fn title_from_file_name(filename: &str) -> Option<String> {
    std::path::Path::new(filename)
        .file_stem()
        .and_then(|s| s.to_str())
        .map(|s| s.chars().take(MAX_NAME_CHARS).collect())
}

/// Characters a title or an author may have.
const MAX_NAME_CHARS: usize = 200;

/// Keeps an uploaded work (`bytes`, read as `ext`) in the upload folder under a name of our
/// own, queues its import job and records who did it; the pages and the API both register
/// works through this.
pub(crate) async fn queue_import(
    state: &AdminState,
    actor: &str,
    ext: &str,
    bytes: Vec<u8>,
    title: String,
    author: Option<String>,
) -> WebResult<store::JobId> {
    // Shown in every page and printed by the CLI: no control characters or bidi overrides
    // (the importer cleans them too; the audit row below keeps the title as stored).
    let title = bounds::text::strip_controls(&title).into_owned();
    let author = author
        .map(|a| bounds::text::strip_controls(&a).into_owned())
        .filter(|a| !a.is_empty());
    if title.is_empty() {
        return Err(WebError::bad(
            "the title is empty once control characters are removed: give one",
        ));
    }
    if title.chars().count() > MAX_NAME_CHARS
        || author
            .as_ref()
            .is_some_and(|a| a.chars().count() > MAX_NAME_CHARS)
    {
        return Err(WebError::bad(format!(
            "title and author: at most {MAX_NAME_CHARS} characters each"
        )));
    }
    if !EXTENSIONS.contains(&ext) {
        return Err(WebError::bad(format!(
            "{ext:?}: a work is a .txt, .epub or .html file"
        )));
    }
    let dir = state.settings().upload_dir.clone();
    // Our own name for the file: the uploader's is never a path on this machine.
    let path = dir.join(format!(
        "{}-{}.{ext}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S"),
        accounts::random_token(8)
    ));
    let written = path.clone();
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dir)?;
        std::fs::write(&written, bytes)
    })
    .await
    .map_err(WebError::internal)?
    .map_err(|e| WebError::Internal(format!("cannot keep the upload: {e}")))?;
    let job = jobs::Job::ImportWork {
        path,
        title: Some(title.clone()),
        author,
        delete_file: true,
    };
    let job = NewJob::new(&job)?.max_attempts(3);
    let enqueued = state.store().enqueue(&job).await?;
    state
        .store()
        .record_audit(
            actor,
            "work.upload",
            None,
            None,
            &serde_json::json!({ "title": title, "job": enqueued.id() }),
        )
        .await?;
    Ok(enqueued.id())
}

/// Changes a work's title and author as `copyhound works set` does (`pipeline::works::
/// edit_work`, audited); the pages and the API both edit works through this. A blank
/// author removes it.
pub(crate) async fn edit_work(
    state: &AdminState,
    actor: &str,
    id: WorkId,
    title: Option<String>,
    author: Option<String>,
) -> Result<pipeline::works::WorkEdited, Refused> {
    if let Some(title) = &title
        && bounds::text::strip_controls(title).trim().is_empty()
    {
        return Err(Refused::label("title", "form.required"));
    }
    for (field, value) in [("title", &title), ("author", &author)] {
        if value
            .as_ref()
            .is_some_and(|v| v.chars().count() > MAX_NAME_CHARS)
        {
            return Err(WebError::bad(format!(
                "at most {MAX_NAME_CHARS} characters"
            )))
            .on(field);
        }
    }
    let edit = pipeline::works::WorkEdit {
        title: title.map(|t| t.trim().to_owned()),
        author: author.map(|a| a.trim().to_owned()),
    };
    Ok(pipeline::works::edit_work(state.store(), id, edit, actor).await?)
}

/// Titles offered as a work field's suggestions (`<datalist>`), the first registered first.
pub(crate) const SUGGESTED_TITLES: u32 = 500;

/// The works a work field suggests.
pub(crate) async fn suggestions(state: &AdminState) -> WebResult<Vec<WorkSummary>> {
    Ok(state
        .store()
        .works(
            &WorkFilter::All,
            Page {
                after: None,
                limit: Some(SUGGESTED_TITLES),
            },
        )
        .await?)
}

/// The work a person named in a form or a filter: its id (`12`, `#12`), its title, or a part
/// of its title that only one work has. `None` for a blank field.
///
/// # Errors
/// A 400 naming what was typed when no work, or more than one, has it.
pub(crate) async fn named_work(
    state: &AdminState,
    typed: Option<&str>,
) -> WebResult<Option<WorkId>> {
    let Some(typed) = typed.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if let Ok(id) = typed.trim_start_matches('#').parse::<WorkId>() {
        return match state.store().work(id).await {
            Ok(_) => Ok(Some(id)),
            Err(store::Error::NotFound { .. }) => {
                Err(WebError::bad(format!("there is no work {id}")))
            }
            Err(e) => Err(e.into()),
        };
    }
    let found = state
        .store()
        .works(
            &WorkFilter::TitleContains(typed.to_owned()),
            Page {
                after: None,
                limit: Some(20),
            },
        )
        .await?;
    let exact: Vec<&WorkSummary> = found.iter().filter(|w| w.title == typed).collect();
    if let [one] = exact.as_slice() {
        return Ok(Some(one.id));
    }
    match found.as_slice() {
        [one] => Ok(Some(one.id)),
        [] => Err(WebError::bad(format!("no work's title contains {typed:?}"))),
        many => {
            let named: Vec<String> = many
                .iter()
                .take(5)
                .map(|w| format!("#{} {}", w.id, w.title))
                .collect();
            Err(WebError::bad(format!(
                "{typed:?} is in the titles of several works ({}{}): give the whole title or the id",
                named.join(", "),
                if many.len() > 5 { ", …" } else { "" }
            )))
        }
    }
}
