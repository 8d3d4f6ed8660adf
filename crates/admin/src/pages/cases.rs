//! The review queue and a case's detail: the aligned passages side by side, the snapshots
//! with their hashes and timestamps, the history, and the review actions.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use pipeline::{CaseView, SnapshotTimestamp, Verification};
use serde::Deserialize;
use store::{
    AuditRecord, CaseCursor, CaseFilter, CaseId, CaseReads, CaseRecord, CaseStatus, CaseWrites,
    ChapterId, EvidenceReads, NoticeRecord, Notices, RecheckRecord, Rechecks, Role, SnapshotId,
    WorkId,
};

use crate::auth::{CsrfForm, CurrentUser};
use crate::error::{WebError, WebResult};
use crate::render::{Ctx, page, pct, when, when_opt};
use crate::state::AdminState;

/// The queue's filters as they come in the query string.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct QueueQuery {
    status: Option<String>,
    work: Option<String>,
    site: Option<String>,
    min_exposure: Option<String>,
    after: Option<String>,
}

impl QueueQuery {
    fn filter(&self) -> WebResult<CaseFilter> {
        let status = match self.status.as_deref().map(str::trim) {
            None => Some(CaseStatus::New),
            Some("" | "all") => None,
            Some(s) => Some(CaseStatus::parse(s).map_err(WebError::from)?),
        };
        let work = match self.work.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(w) => Some(
                w.parse::<WorkId>()
                    .map_err(|_| WebError::bad(format!("work: a work id, not {w:?}")))?,
            ),
        };
        let min_exposure = match self.min_exposure.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(p) => Some(
                p.parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .ok_or_else(|| WebError::bad("min. exposure: a percentage from 0 to 100"))?
                    / 100.0,
            ),
        };
        Ok(CaseFilter {
            status,
            work,
            site: super::blank_none(self.site.clone()),
            min_exposure,
        })
    }

    fn cursor(&self) -> WebResult<Option<CaseCursor>> {
        let Some(after) = super::blank_none(self.after.clone()) else {
            return Ok(None);
        };
        parse_cursor(&after)
            .map(Some)
            .ok_or_else(|| WebError::bad("after: a cursor from a previous page"))
    }

    /// The query string of the page after `last`.
    fn next(&self, last: &CaseRecord) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        q.append_pair("status", self.status.as_deref().unwrap_or("new"));
        for (k, v) in [
            ("work", &self.work),
            ("site", &self.site),
            ("min_exposure", &self.min_exposure),
        ] {
            if let Some(v) = v {
                q.append_pair(k, v);
            }
        }
        q.append_pair("after", &format_cursor(&last.cursor()));
        q.finish()
    }
}

/// A listing cursor as text: `<last_seen_at RFC 3339>,<id>`.
pub(crate) fn format_cursor(c: &CaseCursor) -> String {
    format!("{},{}", c.last_seen_at.to_rfc3339(), c.id)
}

pub(crate) fn parse_cursor(s: &str) -> Option<CaseCursor> {
    let (at, id) = s.rsplit_once(',')?;
    Some(CaseCursor {
        last_seen_at: chrono::DateTime::parse_from_rfc3339(at).ok()?.to_utc(),
        id: id.parse().ok()?,
    })
}

#[derive(Template)]
#[template(path = "admin/cases.html")]
struct QueuePage {
    ctx: Ctx,
    cases: Vec<CaseRecord>,
    statuses: &'static [CaseStatus],
    status: String,
    work: String,
    site: String,
    min_exposure: String,
    next: Option<String>,
}

impl QueuePage {
    fn when(&self, t: &chrono::DateTime<chrono::Utc>) -> String {
        when(t)
    }
    fn pct(&self, share: &f64) -> String {
        pct(share)
    }
}

pub(crate) async fn queue(
    State(state): State<AdminState>,
    user: CurrentUser,
    Query(q): Query<QueueQuery>,
) -> WebResult<Html<String>> {
    let filter = q.filter()?;
    let limit = state.settings().page_size;
    let cases = state.store().cases(&filter, q.cursor()?, limit).await?;
    let next = (cases.len() == limit as usize)
        .then(|| cases.last().map(|c| q.next(c)))
        .flatten();
    page(&QueuePage {
        ctx: Ctx::new(&user, "cases"),
        statuses: &CaseStatus::ALL,
        status: filter.status.map_or("all", CaseStatus::as_str).to_owned(),
        work: q.work.clone().unwrap_or_default(),
        site: q.site.clone().unwrap_or_default(),
        min_exposure: q.min_exposure.clone().unwrap_or_default(),
        cases,
        next,
    })
}

/// The bulk form: `ids` repeated, `action`, `csrf`, and where to go back to.
pub(crate) async fn bulk(
    State(state): State<AdminState>,
    CsrfForm(user, fields): CsrfForm<Vec<(String, String)>>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let status = match field("action") {
        Some("confirm") => CaseStatus::Confirmed,
        Some("dismiss") => CaseStatus::Dismissed,
        other => {
            return Err(WebError::bad(format!(
                "action: confirm or dismiss, not {other:?}"
            )));
        }
    };
    let ids = fields
        .iter()
        .filter(|(k, _)| k == "ids")
        .map(|(_, v)| v.parse::<CaseId>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| WebError::bad("ids: case ids"))?;
    if ids.len() > 500 {
        return Err(WebError::bad("at most 500 cases at once"));
    }
    let note = field("note").map(str::trim).filter(|n| !n.is_empty());
    for id in ids {
        state
            .store()
            .set_case_status(id, status, user.actor(), note)
            .await?;
    }
    let back = field("back")
        .filter(|b| b.starts_with("/cases") && !b.starts_with("//"))
        .unwrap_or("/cases");
    Ok(Redirect::to(back))
}

/// One side of an aligned passage: the text before, the copied part, the text after.
#[derive(Debug, Clone, Default)]
pub(crate) struct Excerpt {
    pub before: String,
    pub marked: String,
    pub after: String,
}

/// Characters of context around a passage, and the longest marked part shown (a whole
/// chapter copied is one passage; the page stays small).
const CONTEXT_CHARS: usize = 60;
const MARKED_CHARS: usize = 600;

/// `range` of `text` (byte offsets, as the matcher stores them) with context; an
/// out-of-range or split-character range shows nothing rather than panicking.
pub(crate) fn excerpt(text: &str, range: &std::ops::Range<usize>) -> Option<Excerpt> {
    let marked = text.get(range.clone())?;
    let before: String = {
        let head = &text[..range.start];
        let n = head.chars().count();
        head.chars().skip(n.saturating_sub(CONTEXT_CHARS)).collect()
    };
    let after: String = text[range.end..].chars().take(CONTEXT_CHARS).collect();
    let count = marked.chars().count();
    let marked = if count > MARKED_CHARS {
        let head: String = marked.chars().take(MARKED_CHARS / 2).collect();
        let tail: String = marked.chars().skip(count - MARKED_CHARS / 2).collect();
        format!("{head} … {tail}")
    } else {
        marked.to_owned()
    };
    Some(Excerpt {
        before,
        marked,
        after,
    })
}

#[derive(Deserialize)]
struct Span {
    page: std::ops::Range<usize>,
    chapter: std::ops::Range<usize>,
    chars: usize,
}

/// A chapter of the case as the detail page shows it.
pub(crate) struct ChapterPanel {
    pub index: u32,
    pub title: String,
    pub coverage: f64,
    pub score: f64,
    pub url: String,
    pub snapshot: SnapshotId,
    pub passages: Vec<(Excerpt, Excerpt, usize)>,
    pub more: usize,
}

/// Chapters with passages shown in full; the rest are listed with their figures.
const PANELS: usize = 20;
const PASSAGES_PER_CHAPTER: usize = 4;

async fn panels(state: &AdminState, view: &CaseView) -> WebResult<Vec<ChapterPanel>> {
    let shown = &view.chapters[..view.chapters.len().min(PANELS)];
    let ids: Vec<ChapterId> = shown.iter().map(|c| c.chapter_id).collect();
    let bodies = pipeline::chapters(state.store(), ids, state.texts()).await?;
    // Each page's text once: a page holding two chapters is the best match of both.
    let mut pages: std::collections::HashMap<SnapshotId, String> = Default::default();
    for chapter in shown {
        let snapshot = chapter.best.snapshot_id;
        if let std::collections::hash_map::Entry::Vacant(slot) = pages.entry(snapshot) {
            slot.insert(state.store().page_text(snapshot).await?.body);
        }
    }
    let mut out = Vec::new();
    for chapter in shown {
        let best = &chapter.best;
        let spans: Vec<Span> = serde_json::from_str(&best.passages).unwrap_or_default();
        let page_text = &pages[&best.snapshot_id];
        let body = bodies
            .get(&chapter.chapter_id)
            .map_or("", |c| c.body.as_str());
        let passages = spans
            .iter()
            .take(PASSAGES_PER_CHAPTER)
            .filter_map(|s| {
                Some((
                    excerpt(page_text, &s.page)?,
                    excerpt(body, &s.chapter)?,
                    s.chars,
                ))
            })
            .collect();
        out.push(ChapterPanel {
            index: chapter.chapter_index,
            title: chapter.chapter_title.clone(),
            coverage: chapter.coverage,
            score: best.score,
            url: best.url.clone(),
            snapshot: best.snapshot_id,
            passages,
            more: spans.len().saturating_sub(PASSAGES_PER_CHAPTER),
        });
    }
    Ok(out)
}

pub(crate) struct SnapshotRow {
    pub id: SnapshotId,
    pub url: String,
    pub fetched_at: String,
    pub sha256: String,
    pub stamp: Option<String>,
    pub stamp_ok: bool,
}

#[derive(Template)]
#[template(path = "admin/case.html")]
struct CasePage {
    ctx: Ctx,
    case: CaseRecord,
    panels: Vec<ChapterPanel>,
    more_chapters: Vec<(u32, String, f64)>,
    snapshots: Vec<SnapshotRow>,
    history: Vec<AuditRecord>,
    next: &'static [CaseStatus],
    notices: Vec<NoticeRecord>,
    recheck: Option<RecheckRecord>,
    days_since_notice: Option<i64>,
}

impl CasePage {
    fn when(&self, t: &chrono::DateTime<chrono::Utc>) -> String {
        when(t)
    }
    fn when_opt(&self, t: &Option<chrono::DateTime<chrono::Utc>>) -> String {
        when_opt(t)
    }
    fn pct(&self, share: &f64) -> String {
        pct(share)
    }
}

/// Snapshots listed on the page at most (a case re-crawled for months has many).
const SNAPSHOTS_SHOWN: usize = 50;

pub(crate) async fn detail(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
) -> WebResult<Html<String>> {
    let id = CaseId(id);
    let view = pipeline::case_view(state.store(), id).await?;
    // The reads that do not depend on each other go out together: the page waits for the
    // slowest, not for their sum.
    let (panels, stamps, recheck, history, notices) = tokio::try_join!(
        panels(&state, &view),
        async { Ok::<_, WebError>(pipeline::case_timestamps(state.store(), id, None).await?) },
        async { Ok::<_, WebError>(state.store().case_recheck(id).await?) },
        async { Ok::<_, WebError>(state.store().case_history(id).await?) },
        async { Ok::<_, WebError>(state.store().notices(Some(id)).await?) },
    )?;
    let more_chapters = view
        .chapters
        .iter()
        .skip(PANELS)
        .map(|c| (c.chapter_index, c.chapter_title.clone(), c.coverage))
        .collect();
    let mut snapshots: Vec<SnapshotRow> = Vec::new();
    for (snapshot, url) in view.snapshots().into_iter().rev().take(SNAPSHOTS_SHOWN) {
        let m = view.matches.iter().find(|m| m.snapshot_id == snapshot);
        let stamp: Option<&SnapshotTimestamp> = stamps.iter().find(|s| s.snapshot == snapshot);
        snapshots.push(SnapshotRow {
            id: snapshot,
            url: url.to_owned(),
            fetched_at: m.map(|m| when(&m.fetched_at)).unwrap_or_default(),
            sha256: m.map(|m| m.snapshot_sha256.clone()).unwrap_or_default(),
            stamp: stamp.map(|s| format!("{} · {}", when(&s.gen_time), s.tsa)),
            stamp_ok: stamp.is_some_and(|s| matches!(s.verification, Verification::Valid { .. })),
        });
    }
    let days_since_notice = recheck
        .as_ref()
        .map(|r| pipeline::rechecks::days_since_notice(r, chrono::Utc::now()));
    page(&CasePage {
        ctx: Ctx::new(&user, "cases"),
        next: view.case.status.next(),
        history,
        notices,
        case: view.case,
        panels,
        more_chapters,
        snapshots,
        recheck,
        days_since_notice,
    })
}

#[derive(Deserialize)]
pub(crate) struct StatusForm {
    status: String,
    note: Option<String>,
}

pub(crate) async fn set_status(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, form): CsrfForm<StatusForm>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let status = CaseStatus::parse(&form.status)?;
    let note = super::blank_none(form.note);
    if note.as_ref().is_some_and(|n| n.chars().count() > 2000) {
        return Err(WebError::bad("a note holds at most 2000 characters"));
    }
    state
        .store()
        .set_case_status(CaseId(id), status, user.actor(), note.as_deref())
        .await?;
    Ok(Redirect::to(&format!("/cases/{id}")))
}

/// The most a stored body may grow to when decompressed for download (the crawler's own
/// limit on a decoded body).
const MAX_BODY: usize = 64 << 20;

pub(crate) async fn snapshot_raw(
    State(state): State<AdminState>,
    _user: CurrentUser,
    Path(id): Path<i64>,
) -> WebResult<Response> {
    let snapshot = state.store().snapshot(SnapshotId(id)).await?;
    let stored = state
        .store()
        .body(&snapshot.sha256)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("snapshot {id} has no stored body")))?;
    let bytes =
        tokio::task::spawn_blocking(move || crawler::snapshot::decompress(&stored.zstd, MAX_BODY))
            .await
            .map_err(WebError::internal)?
            .map_err(WebError::internal)?;
    let sha = hex(&snapshot.sha256);
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&format!(
            "attachment; filename=\"snapshot-{id}-{}.bin\"",
            &sha[..16]
        ))
        .map_err(WebError::internal)?,
    );
    headers.insert(
        "x-content-sha256",
        HeaderValue::from_str(&sha).map_err(WebError::internal)?,
    );
    Ok(response)
}

pub(crate) async fn snapshot_text(
    State(state): State<AdminState>,
    _user: CurrentUser,
    Path(id): Path<i64>,
) -> WebResult<Response> {
    let text = state.store().page_text(SnapshotId(id)).await?;
    let mut response = text.body.into_response();
    // Plain text, never sniffed as HTML: the page's words, not its markup.
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    Ok(response)
}

pub(crate) async fn evidence(
    State(state): State<AdminState>,
    _user: CurrentUser,
    Path(id): Path<i64>,
) -> WebResult<Response> {
    let id = CaseId(id);
    let dir = tempfile::tempdir().map_err(WebError::internal)?;
    let out = dir.path().join("package");
    pipeline::write_package(state.store(), id, &out, false).await?;
    let zip = tokio::task::spawn_blocking(move || zip_dir(&out))
        .await
        .map_err(WebError::internal)?
        .map_err(WebError::internal)?;
    drop(dir);
    let mut response = zip.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&format!("attachment; filename=\"case-{id}-evidence.zip\""))
            .map_err(WebError::internal)?,
    );
    Ok(response)
}

/// Every file under `dir`, stored (they are hashed in the manifest as written; the WARC is
/// compressed already).
fn zip_dir(dir: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&folder)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::path);
        for entry in entries {
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(dir)
                .map_err(std::io::Error::other)?
                .to_string_lossy()
                .replace('\\', "/");
            zip.start_file(name, options)
                .map_err(std::io::Error::other)?;
            zip.write_all(&std::fs::read(&path)?)?;
        }
    }
    Ok(zip.finish().map_err(std::io::Error::other)?.into_inner())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_keep_context_and_refuse_bad_ranges() {
        let text = "前文".repeat(50) + "被复制的段落" + &"后文".repeat(50);
        let start = "前文".repeat(50).len();
        let range = start..start + "被复制的段落".len();
        let e = excerpt(&text, &range).unwrap();
        assert_eq!(e.marked, "被复制的段落");
        assert_eq!(e.before.chars().count(), CONTEXT_CHARS);
        assert_eq!(e.after.chars().count(), CONTEXT_CHARS);
        // Inside a character, or past the end: nothing, no panic.
        assert!(excerpt(&text, &(1..4)).is_none());
        assert!(excerpt(&text, &(0..text.len() + 1)).is_none());
        let long = "字".repeat(5000);
        let e = excerpt(&long, &(0..long.len())).unwrap();
        assert!(e.marked.chars().count() <= MARKED_CHARS + 3);
    }

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let c = CaseCursor {
            last_seen_at: chrono::Utc::now(),
            id: CaseId(42),
        };
        assert_eq!(parse_cursor(&format_cursor(&c)), Some(c));
        assert_eq!(parse_cursor("nonsense"), None);
        assert_eq!(parse_cursor("2026-01-01T00:00:00Z,x"), None);
    }
}
