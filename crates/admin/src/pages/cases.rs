//! The review queue and a case's detail: the aligned passages side by side, the snapshots
//! with their hashes and timestamps, the history, and the review actions.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use casework::review::{self, Disguise, DismissReason, ReviewLimits, ReviewPage};
use casework::{SnapshotTimestamp, Verification};
use serde::Deserialize;
use store::{
    AuditLog, AuditRecord, CaseCursor, CaseFilter, CaseId, CaseReads, CaseRecord, CaseStatus,
    CaseWrites, ChapterId, EvidenceReads, NoticeRecord, Notices, RecheckRecord, Rechecks, Renders,
    Role, SnapshotId,
};

use crate::actions::cases::{evidence_zip, format_cursor, parse_cursor};
use crate::auth::{CsrfForm, CurrentUser};
use crate::error::{WebError, WebResult};
use crate::form::{Form, FormPost, OnField, Refused, WHOLE_FORM, answer};
use crate::pages::queued::Queued;
use crate::render::{Ctx, grouped, page, pct};
use crate::said::{Part, Said};
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
    async fn filter(&self, state: &AdminState) -> WebResult<CaseFilter> {
        let status = match self.status.as_deref().map(str::trim) {
            None => Some(CaseStatus::New),
            Some("" | "all") => None,
            Some(s) => Some(CaseStatus::parse(s).map_err(WebError::from)?),
        };
        let work = crate::actions::works::named_work(state, self.work.as_deref())
            .await
            .map_err(|e| e.prefixed("work: "))?;
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
            site: crate::form::blank_none(self.site.clone()),
            min_exposure,
        })
    }

    fn cursor(&self) -> WebResult<Option<CaseCursor>> {
        let Some(after) = crate::form::blank_none(self.after.clone()) else {
            return Ok(None);
        };
        parse_cursor(&after)
            .map(Some)
            .ok_or_else(|| WebError::bad("after: a cursor from a previous page"))
    }

    /// The query string of these filters, starting after the cursor `after` when given.
    fn query(&self, after: Option<&str>) -> String {
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
        if let Some(after) = after {
            q.append_pair("after", after);
        }
        q.finish()
    }

    /// The query string of the page after `last`.
    fn next(&self, last: &CaseRecord) -> String {
        self.query(Some(&format_cursor(&last.cursor())))
    }
}

#[derive(Template)]
#[template(path = "admin/cases.html")]
struct QueuePage {
    ctx: Ctx,
    cases: Vec<CaseRecord>,
    statuses: &'static [CaseStatus],
    status: String,
    work: String,
    /// Titles the work filter suggests.
    works: Vec<store::WorkSummary>,
    site: String,
    min_exposure: String,
    /// This queue's address, where the bulk form comes back to.
    back: String,
    next: Option<String>,
    reasons: &'static [DismissReason],
    /// The bulk form as typed, when it was refused.
    form: Form,
    /// The cases the refused bulk form had ticked.
    ticked: Vec<CaseId>,
}

impl QueuePage {
    fn is_ticked(&self, id: &CaseId) -> bool {
        self.ticked.contains(id)
    }
    fn reason_key(&self, r: &DismissReason) -> &'static str {
        reason_key(*r)
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
    queue_page(&state, &user, &q, Form::default(), Vec::new()).await
}

/// The queue as `q` filters it; `form` is the bulk form as typed when it was refused, with
/// the cases it had ticked.
async fn queue_page(
    state: &AdminState,
    user: &CurrentUser,
    q: &QueueQuery,
    form: Form,
    ticked: Vec<CaseId>,
) -> WebResult<Html<String>> {
    let filter = q.filter(state).await?;
    let limit = state.settings().page_size;
    let cases = state.store().cases(&filter, q.cursor()?, limit).await?;
    let next = (cases.len() == limit as usize)
        .then(|| cases.last().map(|c| q.next(c)))
        .flatten();
    page(&QueuePage {
        ctx: user.ctx("cases"),
        statuses: &CaseStatus::ALL,
        status: filter.status.map_or("all", CaseStatus::as_str).to_owned(),
        work: q.work.clone().unwrap_or_default(),
        works: crate::actions::works::suggestions(state).await?,
        site: q.site.clone().unwrap_or_default(),
        min_exposure: q.min_exposure.clone().unwrap_or_default(),
        back: format!("/cases?{}", q.query(q.after.as_deref())),
        cases,
        next,
        reasons: &DismissReason::ALL,
        form,
        ticked,
    })
}

/// The bulk form: `ids` repeated, `action`, `csrf`, and where to go back to (`back`, the
/// queue's address). A refusal (no reason to dismiss with) answers on that queue, with the
/// cases that were ticked still ticked.
pub(crate) async fn bulk(
    State(state): State<AdminState>,
    CsrfForm(user, fields): CsrfForm<Vec<(String, String)>>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let back = field("back")
        .filter(|b| b.starts_with("/cases") && !b.starts_with("//"))
        .unwrap_or("/cases")
        .to_owned();
    let ticked: Vec<CaseId> = fields
        .iter()
        .filter(|(k, _)| k == "ids")
        .filter_map(|(_, v)| v.parse::<CaseId>().ok())
        .collect();
    match decide_many(&state, &user, &fields).await {
        Ok(()) => Ok(Redirect::to(&back).into_response()),
        Err(refused) => {
            let typed = Form::with_values(
                fields
                    .iter()
                    .filter(|(k, _)| k == "note" || k == "reason")
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            );
            let form = typed.refused(refused, user.lang)?;
            let uri: axum::http::Uri = back.parse().unwrap_or_else(|_| "/cases".parse().unwrap());
            let Query(q) = Query::<QueueQuery>::try_from_uri(&uri)
                .unwrap_or_else(|_| Query(QueueQuery::default()));
            crate::form::refused_page(queue_page(&state, &user, &q, form, ticked).await)
        }
    }
}

/// Sets the status of every case the bulk form ticked.
async fn decide_many(
    state: &AdminState,
    user: &CurrentUser,
    fields: &[(String, String)],
) -> Result<(), Refused> {
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
            return Err(Refused::new(
                WHOLE_FORM,
                WebError::bad(format!("action: confirm or dismiss, not {other:?}")),
            ));
        }
    };
    let ids = fields
        .iter()
        .filter(|(k, _)| k == "ids")
        .map(|(_, v)| v.parse::<CaseId>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| WebError::bad("ids: case ids"))
        .on(WHOLE_FORM)?;
    if ids.is_empty() {
        return Err(Refused::new(
            WHOLE_FORM,
            WebError::bad("tick the cases to act on first"),
        ));
    }
    if ids.len() > 500 {
        return Err(Refused::new(
            WHOLE_FORM,
            WebError::bad("at most 500 cases at once"),
        ));
    }
    let reason = dismiss_reason(status, field("reason")).on("reason")?;
    let note = review::decision_note(reason, field("note"));
    for id in ids {
        state
            .store()
            .set_case_status(id, status, user.actor(), note.as_deref())
            .await
            .on(WHOLE_FORM)?;
    }
    Ok(())
}

/// The case page's chapters: each with its combined coverage over the site's pages.
pub(crate) struct ChapterRow {
    pub index: u32,
    pub title: String,
    pub coverage: f64,
    pub pages: usize,
}

pub(crate) struct SnapshotRow {
    pub id: SnapshotId,
    pub url: String,
    pub fetched_at: String,
    pub sha256: String,
    pub stamp: Option<String>,
    pub stamp_ok: bool,
    /// When its newest screenshot was taken, if it has one.
    pub screenshot: Option<String>,
    /// For a revisit (the server said 304): when the capture it confirms was fetched.
    pub unchanged_since: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/case.html")]
struct CasePage {
    ctx: Ctx,
    case: CaseRecord,
    pages: Vec<ReviewPage>,
    chapters: Vec<ChapterRow>,
    snapshots: Vec<SnapshotRow>,
    reasons: &'static [DismissReason],
    undo: Option<Undo>,
    next_case: Option<CaseId>,
    history: Vec<AuditRecord>,
    next: &'static [CaseStatus],
    notices: Vec<NoticeRecord>,
    recheck: Option<RecheckRecord>,
    days_since_notice: Option<i64>,
    /// Snapshots with a screenshot.
    shots: Vec<SnapshotId>,
    /// The review and notice forms as typed, with what was refused (empty when not posted).
    form: Form,
    /// The notice template the draft form starts on (the settings' `notices.template`).
    template: String,
    /// The re-check or capture a button just queued.
    queued: Option<Queued>,
    /// The rights holder's profile is not filled in: no notice can be drafted yet.
    holder_missing: bool,
}

impl CasePage {
    fn has_shot(&self, snapshot: &SnapshotId) -> bool {
        self.shots.contains(snapshot)
    }
    fn count<T: Copy + TryInto<u64>>(&self, n: &T) -> String {
        grouped((*n).try_into().unwrap_or(u64::MAX))
    }
    fn disguise_key(&self, d: &Disguise) -> &'static str {
        disguise_key(*d)
    }
    fn reason_key(&self, r: &DismissReason) -> &'static str {
        reason_key(*r)
    }
    /// A history entry's note in the page's language: a dismissal's reason, and the notes
    /// copyhound writes itself; a reviewer's own words as written (data).
    fn note(&self, h: &AuditRecord) -> Said {
        let Some(note) = h.note() else {
            return Said::words("");
        };
        let t = |key: &str| self.ctx.t(key);
        let (head, rest) = note.split_once(": ").unwrap_or((note, ""));
        if h.action == "case.dismissed"
            && let Ok(reason) = DismissReason::parse(head)
        {
            let label = t(reason_key(reason));
            return if rest.is_empty() {
                Said::words(label)
            } else {
                Said::value(rest).after(label)
            };
        }
        // The notes the store and the pipeline write (`store::notices`, `store::cases`,
        // `casework::review::undo`).
        if note == "undo" {
            return Said::words(t("history.undo"));
        }
        if let Some(id) = note
            .strip_prefix("notice ")
            .and_then(|n| n.strip_suffix(" sent"))
        {
            return Said::of([
                Part::words(t("history.notice_sent")),
                Part::value(format!(" #{id}")),
            ]);
        }
        if let Some(list) = note
            .strip_prefix("every copy is gone (re-check; evidence: snapshot ")
            .and_then(|n| n.strip_suffix(')'))
        {
            return Said::of([
                Part::words(t("history.all_gone")),
                Part::value(format!(" #{list}")),
            ]);
        }
        for (prefix, key) in [
            ("copy found at ", "history.copy_found"),
            ("the copy was found again at ", "history.found_again"),
            ("new chapter copied at ", "history.new_chapter"),
        ] {
            if let Some(url) = note.strip_prefix(prefix) {
                return Said::of([Part::words(format!("{} ", t(key))), Part::value(url)]);
            }
        }
        Said::value(note)
    }
    fn pct(&self, share: &f64) -> String {
        pct(share)
    }
}

/// The label of a reason for dismissing.
fn reason_key(r: DismissReason) -> &'static str {
    match r {
        DismissReason::Licensed => "case.reason.licensed",
        DismissReason::Quotation => "case.reason.quotation",
        DismissReason::NotOurs => "case.reason.not_ours",
        DismissReason::Other => "case.reason.other",
    }
}

/// The label of a disguise.
pub(crate) fn disguise_key(d: Disguise) -> &'static str {
    match d {
        Disguise::Traditional => "disguise.traditional",
        Disguise::Homophones => "disguise.homophones",
        Disguise::LookAlike => "disguise.look_alike",
        Disguise::RemappedFont => "disguise.remapped_font",
        Disguise::Inserted => "disguise.inserted",
        Disguise::Edited => "disguise.edited",
        Disguise::Script => "disguise.script",
        Disguise::Split => "disguise.split",
        Disguise::Merged => "disguise.merged",
        Disguise::WrongCharset => "disguise.wrong_charset",
    }
}

/// Snapshots listed on the page at most (a case re-crawled for months has many).
const SNAPSHOTS_SHOWN: usize = 50;

/// What the page after a decision says, with the button that takes it back.
#[derive(Debug)]
pub(crate) struct Undo {
    /// The case decided.
    case: CaseId,
    /// Its status now.
    to: CaseStatus,
    /// Its status before.
    from: CaseStatus,
}

/// The detail page's query: after a decision, which one (for the undo message).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct DetailQuery {
    case: Option<String>,
    to: Option<String>,
    from: Option<String>,
    /// What "Re-check now" or "Take a screenshot now" queued: `recheck` or `capture`, and
    /// its job.
    queued: Option<String>,
    job: Option<i64>,
}

impl DetailQuery {
    /// The decision to offer undoing: one whose status may go back.
    fn undo(&self) -> Option<Undo> {
        let undo = Undo {
            case: CaseId(self.case.as_deref()?.parse().ok()?),
            to: CaseStatus::parse(self.to.as_deref()?).ok()?,
            from: CaseStatus::parse(self.from.as_deref()?).ok()?,
        };
        undo.to.can_become(undo.from).then_some(undo)
    }
}

pub(crate) async fn detail(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
    Query(q): Query<DetailQuery>,
) -> WebResult<Html<String>> {
    let queued = Queued::read(&state, q.queued.as_deref(), q.job).await?;
    detail_page(&state, &user, CaseId(id), q.undo(), Form::default(), queued).await
}

/// The case page; `form` is what its review or notice form typed when it was refused.
pub(crate) async fn detail_page(
    state: &AdminState,
    user: &CurrentUser,
    id: CaseId,
    undo: Option<Undo>,
    form: Form,
    queued: Option<Queued>,
) -> WebResult<Html<String>> {
    let view = casework::case_view(state.store(), id).await?;
    // The reads that do not depend on each other go out together: the page waits for the
    // slowest, not for their sum.
    let (pages, stamps, recheck, history, notices, next_case) = tokio::try_join!(
        async {
            Ok::<_, WebError>(
                review::review_pages(state.store(), &view, state.texts(), ReviewLimits::default())
                    .await?,
            )
        },
        async { Ok::<_, WebError>(casework::case_timestamps(state.store(), id, None).await?) },
        async { Ok::<_, WebError>(state.store().case_recheck(id).await?) },
        async { Ok::<_, WebError>(state.store().case_history(id).await?) },
        async { Ok::<_, WebError>(state.store().notices(Some(id)).await?) },
        async { Ok::<_, WebError>(review::next_in_queue(state.store(), &view.case).await?) },
    )?;
    let chapters = view
        .chapters
        .iter()
        .map(|c| ChapterRow {
            index: c.chapter_index,
            title: c.chapter_title.clone(),
            coverage: c.coverage,
            pages: c.pages.len(),
        })
        .collect();
    let ctx = user.ctx("cases");
    let mut snapshots: Vec<SnapshotRow> = Vec::new();
    let mut shots = Vec::new();
    for (snapshot, url) in view.snapshots().into_iter().rev().take(SNAPSHOTS_SHOWN) {
        let shot = state.store().latest_screenshot(snapshot).await?;
        if shot.is_some() {
            shots.push(snapshot);
        }
        let m = view.matches.iter().find(|m| m.snapshot_id == snapshot);
        let stamp: Option<&SnapshotTimestamp> = stamps.iter().find(|s| s.snapshot == snapshot);
        snapshots.push(SnapshotRow {
            id: snapshot,
            url: url.to_owned(),
            fetched_at: m.map(|m| ctx.when(&m.fetched_at)).unwrap_or_default(),
            sha256: m.map(|m| m.snapshot_sha256.clone()).unwrap_or_default(),
            stamp: stamp.map(|s| format!("{} · {}", ctx.when(&s.gen_time), s.tsa)),
            stamp_ok: stamp.is_some_and(|s| matches!(s.verification, Verification::Valid { .. })),
            screenshot: shot.map(|r| ctx.when(&r.rendered_at)),
            unchanged_since: m.and_then(|m| m.revisit_of).map(|(_, at)| ctx.when(&at)),
        });
    }
    let days_since_notice = recheck
        .as_ref()
        .map(|r| casework::rechecks::days_since_notice(r, chrono::Utc::now()));
    let effective = state.effective().await?;
    page(&CasePage {
        ctx,
        next: view.case.status.next(),
        history,
        notices,
        case: view.case,
        pages,
        chapters,
        snapshots,
        reasons: &DismissReason::ALL,
        undo,
        next_case: next_case.filter(|n| *n != id),
        recheck,
        days_since_notice,
        shots,
        form,
        template: effective.notices.template.clone(),
        holder_missing: !effective.notices.rights_holder.missing().is_empty(),
        queued,
    })
}

/// The reason a form gives for dismissing; dismissing without one is refused.
fn dismiss_reason(status: CaseStatus, reason: Option<&str>) -> WebResult<Option<DismissReason>> {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => Ok(Some(DismissReason::parse(r)?)),
        None if status == CaseStatus::Dismissed => Err(WebError::bad(
            "a reason for dismissing: licensed, quotation, not ours or other",
        )),
        None => Ok(None),
    }
}

#[derive(Deserialize)]
pub(crate) struct StatusForm {
    status: String,
    note: Option<String>,
    reason: Option<String>,
}

/// The status form's query: `then=next` (confirm and next) goes on to the next case of the
/// queue.
#[derive(Deserialize)]
pub(crate) struct ThenQuery {
    then: Option<String>,
}

pub(crate) async fn set_status(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    Query(then): Query<ThenQuery>,
    FormPost(user, form, typed): FormPost<StatusForm>,
) -> WebResult<Response> {
    user.require(Role::Reviewer)?;
    let id = CaseId(id);
    let result = decide(&state, &user, id, then, form).await;
    answer(
        result,
        |to| to,
        typed,
        user.lang,
        |form| detail_page(&state, &user, id, None, form, None),
    )
    .await
}

/// Sets the case's status as the review form asks; returns the page to go to.
async fn decide(
    state: &AdminState,
    user: &CurrentUser,
    id: CaseId,
    then: ThenQuery,
    form: StatusForm,
) -> Result<String, Refused> {
    let status = CaseStatus::parse(&form.status).on("status")?;
    let note = crate::form::blank_none(form.note);
    if note.as_ref().is_some_and(|n| n.chars().count() > 2000) {
        return Err(Refused::new(
            "note",
            WebError::bad("a note holds at most 2000 characters"),
        ));
    }
    let reason = dismiss_reason(status, form.reason.as_deref()).on("reason")?;
    let before = state.store().case(id).await?;
    let next = if then.then.as_deref() == Some("next") {
        review::next_in_queue(state.store(), &before).await?
    } else {
        None
    };
    let note = review::decision_note(reason, note.as_deref());
    state
        .store()
        .set_case_status(id, status, user.actor(), note.as_deref())
        .await
        .on(WHOLE_FORM)?;
    let done = format!(
        "case={}&to={}&from={}",
        id,
        status.as_str(),
        before.status.as_str()
    );
    Ok(match next {
        Some(next) => format!("/cases/{next}?{done}"),
        None => format!("/cases/{id}?{done}"),
    })
}

#[derive(Deserialize)]
pub(crate) struct UndoForm {
    to: String,
    from: String,
}

/// Takes a decision back (the button in the message after it).
pub(crate) async fn undo(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, form): CsrfForm<UndoForm>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let (now, before) = (CaseStatus::parse(&form.to)?, CaseStatus::parse(&form.from)?);
    review::undo(state.store(), CaseId(id), now, before, user.actor()).await?;
    Ok(Redirect::to(&format!("/cases/{id}")))
}

/// The query of the "whole chapter" view: a snapshot of the case and a chapter it copies.
#[derive(Deserialize)]
pub(crate) struct CompareQuery {
    snapshot: i64,
    chapter: i64,
}

#[derive(Template)]
#[template(path = "admin/compare.html")]
struct ComparePage {
    ctx: Ctx,
    case: CaseRecord,
    url: String,
    snapshot: SnapshotId,
    chapter: String,
    whole: review::WholeComparison,
}

/// The longest page text the whole-chapter view compares (characters); a longer page is
/// shown up to there.
const WHOLE_CHARS: usize = 200_000;

impl ComparePage {
    fn disguise_key(&self, d: &Disguise) -> &'static str {
        disguise_key(*d)
    }
}

/// A page's whole text beside the whole chapter it copies, every passage compared.
pub(crate) async fn compare(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
    Query(q): Query<CompareQuery>,
) -> WebResult<Html<String>> {
    let view = casework::case_view(state.store(), CaseId(id)).await?;
    let m = view
        .matches
        .iter()
        .find(|m| m.snapshot_id == SnapshotId(q.snapshot) && m.chapter_id == ChapterId(q.chapter))
        .ok_or_else(|| {
            WebError::NotFound(format!(
                "case {id} has no match of chapter {} on snapshot {}",
                q.chapter, q.snapshot
            ))
        })?
        .clone();
    let page_text = state.store().page_text(m.snapshot_id).await?.body;
    let chapter = detection::chapters(state.store(), [m.chapter_id], state.texts())
        .await?
        .remove(&m.chapter_id)
        .ok_or_else(|| WebError::NotFound(format!("chapter {} is no longer stored", q.chapter)))?;
    let spans = review::spans(&m.passages);
    let whole = tokio::task::spawn_blocking(move || {
        let page_text = cut_chars(&page_text, WHOLE_CHARS);
        let body = cut_chars(&chapter.body, WHOLE_CHARS);
        review::compare_whole(page_text, body, &spans)
    })
    .await
    .map_err(WebError::internal)?;
    page(&ComparePage {
        ctx: user.ctx("cases"),
        case: view.case,
        url: m.final_url,
        snapshot: m.snapshot_id,
        chapter: format!("{}. {}", m.chapter_index, m.chapter_title),
        whole,
    })
}

/// The first `max` characters of `text`.
fn cut_chars(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(i, _)| &text[..i])
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
        tokio::task::spawn_blocking(move || crawler::snapshot::stored_bytes(stored, MAX_BODY))
            .await
            .map_err(WebError::internal)?
            .map_err(WebError::internal)?;
    let sha = hex(&snapshot.sha256);
    let mut response = crate::render::attachment(
        bytes,
        "application/octet-stream",
        &format!("snapshot-{id}-{}.bin", &sha[..16]),
    );
    response.headers_mut().insert(
        "x-content-sha256",
        HeaderValue::from_str(&sha).map_err(WebError::internal)?,
    );
    Ok(response)
}

/// A snapshot's newest screenshot, as a PNG.
pub(crate) async fn snapshot_screenshot(
    State(state): State<AdminState>,
    _user: CurrentUser,
    Path(id): Path<i64>,
) -> WebResult<Response> {
    let missing = || WebError::NotFound(format!("snapshot {id} has no screenshot"));
    let render = state
        .store()
        .latest_screenshot(SnapshotId(id))
        .await?
        .ok_or_else(missing)?;
    let info = render.screenshot.ok_or_else(missing)?;
    let png = state
        .store()
        .screenshot_png(&info.sha256)
        .await?
        .ok_or_else(missing)?;
    let mut response = png.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
    headers.insert(
        "x-content-sha256",
        HeaderValue::from_str(&hex(&info.sha256)).map_err(WebError::internal)?,
    );
    Ok(response)
}

/// "Take a screenshot now": each page of the case rendered by a worker.
pub(crate) async fn capture(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<crate::auth::Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Reviewer)?;
    let case = state.store().case(CaseId(id)).await?;
    let job = evidence::queue_capture(state.store(), case.id).await?;
    state
        .store()
        .record_audit(
            user.actor(),
            "case.capture",
            Some("case"),
            Some(case.id.0),
            &serde_json::json!({}),
        )
        .await?;
    Ok(Redirect::to(&format!(
        "/cases/{}?queued=capture&job={job}",
        case.id
    )))
}

#[derive(Template)]
#[template(path = "admin/snapshot.html")]
struct SnapshotPage {
    ctx: Ctx,
    text: store::PageText,
}

/// A snapshot's sanitised text as a page: long lines wrap (Chinese has no spaces to break
/// at), with the navigation and links to the plain text and the raw bytes.
pub(crate) async fn snapshot_page(
    State(state): State<AdminState>,
    user: CurrentUser,
    Path(id): Path<i64>,
) -> WebResult<Html<String>> {
    let text = state.store().page_text(SnapshotId(id)).await?;
    page(&SnapshotPage {
        ctx: user.ctx("cases"),
        text,
    })
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
    evidence_zip(&state, CaseId(id)).await
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
