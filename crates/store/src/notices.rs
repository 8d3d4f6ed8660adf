//! Takedown notices and the re-checks that follow them.
//!
//! A notice ([`Notices`]) is a document rendered from a case and stored as rendered (plain
//! text and HTML), so what was sent is what the store shows later. Marking it sent moves a
//! confirmed case to `notice_sent` and starts the case's re-checks ([`Rechecks`]): the
//! pipeline fetches each copy (a page of the case) again when the re-check is due and
//! records here what it saw; when every copy is gone the case becomes `removed`, in the
//! same transaction. What a fetch means (gone, still up, cannot tell) is the pipeline's
//! call; the store keeps the states and the schedule.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::audit::insert_audit;
use crate::cases::{CaseStatus, CaseTx};
use crate::db::{durable_tx, read_pool};
use crate::ids::{CaseId, NoticeId, PageId, SnapshotId};
use crate::queue::{from_millis, millis};
use crate::{Error, Result, Store};

/// Where a notice stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeStatus {
    /// Rendered, not sent yet.
    Draft,
    /// Sent: mailed by copyhound and accepted by the SMTP server, or marked sent by a person
    /// who sent it another way.
    Sent,
}

impl NoticeStatus {
    /// The name kept in `notices.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeStatus::Draft => "draft",
            NoticeStatus::Sent => "sent",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "draft" => Ok(NoticeStatus::Draft),
            "sent" => Ok(NoticeStatus::Sent),
            other => Err(Error::InvalidInput(format!(
                "unknown notice status {other:?}"
            ))),
        }
    }
}

impl fmt::Display for NoticeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rendered notice to store.
#[derive(Debug, Clone)]
pub struct NewNotice {
    /// The case it is about.
    pub case: CaseId,
    /// The template it was rendered with (`dmca`, `cn`).
    pub template: String,
    /// Where it is to be sent (an email address or a web form's URL; empty when unknown).
    pub recipient: String,
    /// Its subject line.
    pub subject: String,
    /// The notice as plain text.
    pub body_text: String,
    /// The notice as an HTML document.
    pub body_html: String,
}

/// A stored notice.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NoticeRecord {
    /// Its id.
    pub id: NoticeId,
    /// The case.
    pub case_id: CaseId,
    /// The template it was rendered with.
    pub template: String,
    /// Where it is to be sent.
    pub recipient: String,
    /// Its subject line.
    pub subject: String,
    /// Plain text.
    pub body_text: String,
    /// HTML.
    pub body_html: String,
    /// Draft or sent.
    pub status: NoticeStatus,
    /// Who drafted it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// When it was marked sent.
    pub sent_at: Option<DateTime<Utc>>,
    /// The `Message-ID` of its mail (without angle brackets), written before the first
    /// attempt to send it and kept for every later one, so a copy that arrived twice says
    /// it is the same message.
    pub message_id: Option<String>,
    /// When an attempt to mail it began that has no outcome recorded yet (a send under way,
    /// or one cut off by a crash).
    pub sending_since: Option<DateTime<Utc>>,
    /// Why the last attempt to mail it failed (cleared once it is sent).
    pub send_error: Option<String>,
    /// SHA-256 (lower-case hex) of the message as handed to the SMTP server, once accepted.
    pub sent_sha256: Option<String>,
    /// The SMTP server's reply to the message, once accepted.
    pub smtp_reply: Option<String>,
}

/// What the SMTP server accepted, recorded on the notice ([`Notices::mark_notice_mailed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeMail {
    /// SHA-256 (lower-case hex) of the message's bytes as sent.
    pub sha256: String,
    /// The server's reply.
    pub reply: String,
}

/// What [`Notices::begin_notice_send`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum SendStart {
    /// The attempt is recorded: send the notice with the record's `message_id`.
    Begun(NoticeRecord),
    /// The notice was sent already (by an earlier attempt or by hand): send nothing.
    AlreadySent(NoticeRecord),
}

/// Notices: drafted from a case, listed, marked sent.
pub trait Notices {
    /// Stores a rendered notice as a draft; `actor` is who drafted it (audited).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown case; [`Error::Conflict`] when the case is not
    /// confirmed (or already `notice_sent`): a notice is about a copy a reviewer confirmed.
    fn create_notice(
        &self,
        notice: &NewNotice,
        actor: &str,
    ) -> impl Future<Output = Result<NoticeRecord>> + Send;

    /// One notice.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such notice.
    fn notice(&self, id: NoticeId) -> impl Future<Output = Result<NoticeRecord>> + Send;

    /// Notices, newest first: all, or those of one case.
    fn notices(
        &self,
        case: Option<CaseId>,
    ) -> impl Future<Output = Result<Vec<NoticeRecord>>> + Send;

    /// Marks a draft sent at `sent_at`, in one transaction: a confirmed case becomes
    /// `notice_sent` (a case already there stays), and the case's re-checks start, the first
    /// due at `first_recheck` (a later notice for the same case restarts them). Audited.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown notice; [`Error::Conflict`] when it was marked sent
    /// already, or its case is no longer confirmed.
    fn mark_notice_sent(
        &self,
        id: NoticeId,
        actor: &str,
        sent_at: DateTime<Utc>,
        first_recheck: DateTime<Utc>,
    ) -> impl Future<Output = Result<NoticeRecord>> + Send;

    /// Changes a draft's recipient and text (`body_html` is the text as the HTML version
    /// shows it), in one transaction with a `notice.edit` audit row naming what changed.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown notice; [`Error::Conflict`] once it was marked
    /// sent: what went out is kept as it went.
    fn edit_notice_draft(
        &self,
        id: NoticeId,
        edit: &NoticeDraftEdit,
        actor: &str,
    ) -> impl Future<Output = Result<NoticeRecord>> + Send;

    /// Records, before anything is sent, that draft `id` is about to be mailed at `now`: its
    /// `message_id` becomes `message_id` unless an earlier attempt chose one (that one is
    /// kept), `sending_since` becomes `now` and the last error is cleared. Audited.
    ///
    /// A notice already sent is [`SendStart::AlreadySent`], not an error: a job run again
    /// after its worker died finds the send done and sends nothing.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown notice; [`Error::Conflict`] when an earlier attempt
    /// has no outcome recorded (it was cut off: the server may have the message) and `again`
    /// is not set, naming its Message-ID.
    fn begin_notice_send(
        &self,
        id: NoticeId,
        message_id: &str,
        now: DateTime<Utc>,
        again: bool,
        actor: &str,
    ) -> impl Future<Output = Result<SendStart>> + Send;

    /// Records that the attempt begun by [`Notices::begin_notice_send`] failed for `reason`
    /// (the server refused, stalled or dropped the connection): the notice stays a draft with
    /// `send_error` set and no attempt under way. Audited.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown notice; [`Error::Conflict`] when it was sent.
    fn fail_notice_send(
        &self,
        id: NoticeId,
        reason: &str,
        actor: &str,
    ) -> impl Future<Output = Result<NoticeRecord>> + Send;

    /// [`Notices::mark_notice_sent`] for a notice the SMTP server accepted: also records what
    /// went out (`mail`) and ends the attempt, in the same transaction.
    ///
    /// # Errors
    /// As [`Notices::mark_notice_sent`].
    fn mark_notice_mailed(
        &self,
        id: NoticeId,
        mail: &NoticeMail,
        actor: &str,
        sent_at: DateTime<Utc>,
        first_recheck: DateTime<Utc>,
    ) -> impl Future<Output = Result<NoticeRecord>> + Send;
}

/// A draft's new recipient and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeDraftEdit {
    /// Where it is to be sent (empty when unknown).
    pub recipient: String,
    /// The notice as plain text.
    pub body_text: String,
    /// The notice as an HTML document.
    pub body_html: String,
}

/// What the last fetch of a copy showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyState {
    /// The page still serves the copied text.
    Up,
    /// The copy is gone (404 or 410, the page no longer holds the chapters, the host no
    /// longer resolves).
    Removed,
    /// The fetch could not tell (a timeout, a server error, a challenge page).
    Unknown,
}

impl CopyState {
    /// The name kept in `recheck_copies.state`.
    pub fn as_str(self) -> &'static str {
        match self {
            CopyState::Up => "up",
            CopyState::Removed => "removed",
            CopyState::Unknown => "unknown",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "up" => Ok(CopyState::Up),
            "removed" => Ok(CopyState::Removed),
            "unknown" => Ok(CopyState::Unknown),
            other => Err(Error::InvalidInput(format!("unknown copy state {other:?}"))),
        }
    }
}

impl fmt::Display for CopyState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One copy's re-check, to record.
#[derive(Debug, Clone)]
pub struct CopyCheck {
    /// The page of the case.
    pub page: PageId,
    /// The URL fetched.
    pub url: String,
    /// What the fetch showed.
    pub state: CopyState,
    /// Why, in words (`HTTP 404`, `the page no longer holds the copied chapters`).
    pub reason: String,
    /// The snapshot of the fetch, when something answered.
    pub snapshot: Option<SnapshotId>,
    /// Consecutive checks on which the host did not resolve, this one included.
    pub dns_failures: u32,
}

/// A copy as its last re-check left it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CopyRecord {
    /// The page.
    pub page: PageId,
    /// Its URL.
    pub url: String,
    /// What the last fetch showed.
    pub state: CopyState,
    /// Why.
    pub reason: String,
    /// The snapshot of the last fetch.
    pub snapshot: Option<SnapshotId>,
    /// When it was checked.
    pub checked_at: DateTime<Utc>,
    /// Consecutive checks on which its host did not resolve.
    pub dns_failures: u32,
    /// When it was first seen gone (kept while it stays gone).
    pub removed_at: Option<DateTime<Utc>>,
    /// The snapshot that showed it gone, the evidence of the removal.
    pub removed_snapshot: Option<SnapshotId>,
}

/// A case's re-checks.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecheckRecord {
    /// The case.
    pub case: CaseId,
    /// The notice whose sending started them.
    pub notice: Option<NoticeId>,
    /// When that notice went out.
    pub sent_at: DateTime<Utc>,
    /// When the next re-check is due (`None` once they stopped).
    pub next_at: Option<DateTime<Utc>>,
    /// Re-checks done.
    pub checks: u32,
    /// When the last one ran.
    pub last_checked_at: Option<DateTime<Utc>>,
    /// Each copy checked, by page id.
    pub copies: Vec<CopyRecord>,
}

/// What recording a re-check did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecheckWritten {
    /// The case's re-checks as they now stand.
    pub recheck: RecheckRecord,
    /// Copies this re-check found gone that were not gone before.
    pub newly_removed: Vec<PageId>,
    /// Copies found up again after they were gone.
    pub back_up: Vec<PageId>,
    /// Whether the case became `removed` (every copy gone).
    pub case_removed: bool,
}

/// The re-check schedule and what each re-check saw.
pub trait Rechecks {
    /// The case's re-checks, `None` when no notice of it was marked sent.
    fn case_recheck(
        &self,
        case: CaseId,
    ) -> impl Future<Output = Result<Option<RecheckRecord>>> + Send;

    /// Cases in `notice_sent` whose re-check is due at `now`, most overdue first, at most
    /// `limit`.
    fn due_rechecks(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<CaseId>>> + Send;

    /// Records a re-check of `case` at `checked_at`, in one transaction: each copy's state;
    /// when every page of the case is gone, the case becomes `removed` (audited, the removing
    /// snapshots named) and its re-checks stop; else the next is due at `next_at`. A case no
    /// longer in `notice_sent` (reopened, or moved back by a reviewer) stops its re-checks.
    ///
    /// # Errors
    /// [`Error::NotFound`] when no notice of the case was marked sent.
    fn record_recheck(
        &self,
        case: CaseId,
        copies: &[CopyCheck],
        checked_at: DateTime<Utc>,
        next_at: Option<DateTime<Utc>>,
        actor: &str,
    ) -> impl Future<Output = Result<RecheckWritten>> + Send;
}

#[derive(sqlx::FromRow)]
struct NoticeRow {
    id: NoticeId,
    case_id: CaseId,
    template: String,
    recipient: String,
    subject: String,
    body: String,
    body_html: String,
    status: String,
    created_by_name: String,
    created_at: DateTime<Utc>,
    sent_at: Option<DateTime<Utc>>,
    message_id: Option<String>,
    sending_since: Option<DateTime<Utc>>,
    send_error: Option<String>,
    sent_sha256: Option<String>,
    smtp_reply: Option<String>,
}

impl TryFrom<NoticeRow> for NoticeRecord {
    type Error = Error;
    fn try_from(r: NoticeRow) -> Result<Self> {
        Ok(NoticeRecord {
            id: r.id,
            case_id: r.case_id,
            template: r.template,
            recipient: r.recipient,
            subject: r.subject,
            body_text: r.body,
            body_html: r.body_html,
            status: NoticeStatus::parse(&r.status)?,
            created_by: r.created_by_name,
            created_at: r.created_at,
            sent_at: r.sent_at,
            message_id: r.message_id,
            sending_since: r.sending_since,
            send_error: r.send_error,
            sent_sha256: r.sent_sha256,
            smtp_reply: r.smtp_reply,
        })
    }
}

const SELECT_NOTICES: &str = "SELECT id, case_id, template, recipient, subject, body, body_html, \
     status, created_by_name, created_at, sent_at, message_id, sending_since, send_error, \
     sent_sha256, smtp_reply FROM notices";

#[derive(sqlx::FromRow)]
struct CopyRow {
    page_id: PageId,
    url: String,
    state: String,
    reason: String,
    snapshot_id: Option<SnapshotId>,
    checked_at: DateTime<Utc>,
    dns_failures: i32,
    removed_at: Option<DateTime<Utc>>,
    removed_snapshot_id: Option<SnapshotId>,
}

impl TryFrom<CopyRow> for CopyRecord {
    type Error = Error;
    fn try_from(r: CopyRow) -> Result<Self> {
        Ok(CopyRecord {
            page: r.page_id,
            url: r.url,
            state: CopyState::parse(&r.state)?,
            reason: r.reason,
            snapshot: r.snapshot_id,
            checked_at: r.checked_at,
            dns_failures: u32::try_from(r.dns_failures).unwrap_or(0),
            removed_at: r.removed_at,
            removed_snapshot: r.removed_snapshot_id,
        })
    }
}

/// `(notice_id, sent_at, next_at, checks, last_checked_at)` of a case's re-checks.
type RecheckRow = (
    Option<NoticeId>,
    DateTime<Utc>,
    Option<i64>,
    i32,
    Option<DateTime<Utc>>,
);

/// A case's status, its row locked until the transaction ends on Postgres (an update that
/// changes nothing takes the lock on both backends; SQLite has one writer anyway).
macro_rules! lock_case_status {
    ($tx:expr, $case:expr) => {{
        let case: CaseId = $case;
        let status: Option<String> = sqlx::query_scalar(
            "UPDATE cases SET updated_at = updated_at WHERE id = $1 RETURNING status",
        )
        .bind(case)
        .fetch_optional(&mut *$tx)
        .await?;
        CaseStatus::parse(&status.ok_or_else(|| Error::not_found("case", case))?)?
    }};
}

impl Notices for Store {
    #[instrument(skip_all, fields(case = %notice.case, template = %notice.template))]
    async fn create_notice(&self, notice: &NewNotice, actor: &str) -> Result<NoticeRecord> {
        let now = Utc::now();
        let id: i64 = durable_tx!(self, |tx| {
            let status = lock_case_status!(tx, notice.case);
            if !matches!(status, CaseStatus::Confirmed | CaseStatus::NoticeSent) {
                return Err(Error::Conflict(format!(
                    "case {} is {status}: a notice is drafted for a confirmed case, so confirm \
                     it first",
                    notice.case
                )));
            }
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO notices (case_id, template, recipient, subject, body, body_html, \
                 status, created_by_name, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'draft', $7, $8) RETURNING id",
            )
            .bind(notice.case)
            .bind(&notice.template)
            .bind(&notice.recipient)
            .bind(&notice.subject)
            .bind(&notice.body_text)
            .bind(&notice.body_html)
            .bind(actor)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            let details = serde_json::json!({
                "case": notice.case.0, "template": notice.template, "recipient": notice.recipient,
            });
            insert_audit!(
                &mut *tx,
                actor,
                "notice.create",
                Some("notice"),
                Some(id),
                &details,
                now
            );
            id
        });
        self.notice(NoticeId(id)).await
    }

    async fn notice(&self, id: NoticeId) -> Result<NoticeRecord> {
        let sql = sqlx::AssertSqlSafe(format!("{SELECT_NOTICES} WHERE id = $1"));
        let row: Option<NoticeRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql).bind(id).fetch_optional(pool).await?
        });
        row.ok_or_else(|| Error::not_found("notice", id))?
            .try_into()
    }

    async fn notices(&self, case: Option<CaseId>) -> Result<Vec<NoticeRecord>> {
        let sql = sqlx::AssertSqlSafe(format!(
            "{SELECT_NOTICES} WHERE ($1 IS NULL OR case_id = $1) ORDER BY id DESC"
        ));
        let rows: Vec<NoticeRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql)
                .bind(case.map(|c| c.0))
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(NoticeRecord::try_from).collect()
    }

    #[instrument(skip(self, actor))]
    async fn mark_notice_sent(
        &self,
        id: NoticeId,
        actor: &str,
        sent_at: DateTime<Utc>,
        first_recheck: DateTime<Utc>,
    ) -> Result<NoticeRecord> {
        self.mark_sent(id, None, actor, sent_at, first_recheck)
            .await
    }

    #[instrument(skip(self, mail, actor))]
    async fn mark_notice_mailed(
        &self,
        id: NoticeId,
        mail: &NoticeMail,
        actor: &str,
        sent_at: DateTime<Utc>,
        first_recheck: DateTime<Utc>,
    ) -> Result<NoticeRecord> {
        self.mark_sent(id, Some(mail), actor, sent_at, first_recheck)
            .await
    }

    #[instrument(skip(self, message_id, actor))]
    async fn begin_notice_send(
        &self,
        id: NoticeId,
        message_id: &str,
        now: DateTime<Utc>,
        again: bool,
        actor: &str,
    ) -> Result<SendStart> {
        let begun = durable_tx!(self, |tx| {
            let row: Option<(String, Option<String>, Option<DateTime<Utc>>)> = sqlx::query_as(
                "UPDATE notices SET status = status WHERE id = $1 \
                 RETURNING status, message_id, sending_since",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let (status, known_id, since) = row.ok_or_else(|| Error::not_found("notice", id))?;
            if NoticeStatus::parse(&status)? == NoticeStatus::Sent {
                false
            } else {
                if let (Some(since), false) = (since, again) {
                    return Err(Error::Conflict(format!(
                        "notice {id}: an attempt to mail it (Message-ID <{}>) began at {} and \
                         has no outcome recorded, so the SMTP server may have it; look for it \
                         in the sent mail, then mark it sent or send it again (which keeps the \
                         Message-ID, so a second copy shows as the same message)",
                        known_id.as_deref().unwrap_or("?"),
                        since.format("%Y-%m-%d %H:%M:%S UTC"),
                    )));
                }
                let message_id = known_id.unwrap_or_else(|| message_id.to_owned());
                sqlx::query(
                    "UPDATE notices SET message_id = $2, sending_since = $3, send_error = NULL \
                     WHERE id = $1",
                )
                .bind(id)
                .bind(&message_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                let details = serde_json::json!({ "message_id": message_id, "again": again });
                insert_audit!(
                    &mut *tx,
                    actor,
                    "notice.send",
                    Some("notice"),
                    Some(id.0),
                    &details,
                    now
                );
                true
            }
        });
        let notice = self.notice(id).await?;
        Ok(if begun {
            SendStart::Begun(notice)
        } else {
            SendStart::AlreadySent(notice)
        })
    }

    #[instrument(skip(self, reason, actor))]
    async fn fail_notice_send(
        &self,
        id: NoticeId,
        reason: &str,
        actor: &str,
    ) -> Result<NoticeRecord> {
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let status: Option<String> = sqlx::query_scalar(
                "UPDATE notices SET status = status WHERE id = $1 RETURNING status",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let status = status.ok_or_else(|| Error::not_found("notice", id))?;
            if NoticeStatus::parse(&status)? == NoticeStatus::Sent {
                return Err(Error::Conflict(format!(
                    "notice {id} was sent: a failed attempt cannot be recorded on it"
                )));
            }
            sqlx::query("UPDATE notices SET sending_since = NULL, send_error = $2 WHERE id = $1")
                .bind(id)
                .bind(reason)
                .execute(&mut *tx)
                .await?;
            let details = serde_json::json!({ "error": reason });
            insert_audit!(
                &mut *tx,
                actor,
                "notice.send_failed",
                Some("notice"),
                Some(id.0),
                &details,
                now
            );
        });
        self.notice(id).await
    }

    #[instrument(skip(self, edit, actor))]
    async fn edit_notice_draft(
        &self,
        id: NoticeId,
        edit: &NoticeDraftEdit,
        actor: &str,
    ) -> Result<NoticeRecord> {
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let notice: Option<(String, String, String)> = sqlx::query_as(
                "UPDATE notices SET status = status WHERE id = $1 \
                 RETURNING status, recipient, body",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let (status, recipient, body) = notice.ok_or_else(|| Error::not_found("notice", id))?;
            if NoticeStatus::parse(&status)? == NoticeStatus::Sent {
                return Err(Error::Conflict(format!(
                    "notice {id} was marked sent: what went out is kept as it went; draft a \
                     new notice to say something else"
                )));
            }
            sqlx::query(
                "UPDATE notices SET recipient = $2, body = $3, body_html = $4 WHERE id = $1",
            )
            .bind(id)
            .bind(&edit.recipient)
            .bind(&edit.body_text)
            .bind(&edit.body_html)
            .execute(&mut *tx)
            .await?;
            let details = serde_json::json!({
                "recipient": { "before": recipient, "after": edit.recipient },
                "text_changed": body != edit.body_text,
            });
            insert_audit!(
                &mut *tx,
                actor,
                "notice.edit",
                Some("notice"),
                Some(id.0),
                &details,
                now
            );
        });
        self.notice(id).await
    }
}

impl Store {
    /// [`Notices::mark_notice_sent`], with what the SMTP server accepted when it was mailed.
    async fn mark_sent(
        &self,
        id: NoticeId,
        mail: Option<&NoticeMail>,
        actor: &str,
        sent_at: DateTime<Utc>,
        first_recheck: DateTime<Utc>,
    ) -> Result<NoticeRecord> {
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let notice: Option<(CaseId, String)> = sqlx::query_as(
                "UPDATE notices SET status = status WHERE id = $1 RETURNING case_id, status",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let (case, status) = notice.ok_or_else(|| Error::not_found("notice", id))?;
            if NoticeStatus::parse(&status)? == NoticeStatus::Sent {
                return Err(Error::Conflict(format!(
                    "notice {id} was marked sent already"
                )));
            }
            match lock_case_status!(tx, case) {
                CaseStatus::Confirmed => {
                    let note = format!("notice {id} sent");
                    tx.set_status(case, CaseStatus::NoticeSent, actor, Some(&note))
                        .await?;
                }
                CaseStatus::NoticeSent => {}
                other => {
                    return Err(Error::Conflict(format!(
                        "case {case} is {other}: only a confirmed case's notice can be sent"
                    )));
                }
            }
            // A person marking it sent settles an attempt cut off mid-send too.
            sqlx::query(
                "UPDATE notices SET status = 'sent', sent_at = $2, sending_since = NULL, \
                 send_error = NULL, sent_sha256 = COALESCE($3, sent_sha256), \
                 smtp_reply = COALESCE($4, smtp_reply) WHERE id = $1",
            )
            .bind(id)
            .bind(sent_at)
            .bind(mail.map(|m| m.sha256.as_str()))
            .bind(mail.map(|m| m.reply.as_str()))
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO case_rechecks (case_id, notice_id, sent_at, next_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (case_id) DO UPDATE SET \
                 notice_id = $2, sent_at = $3, next_at = $4",
            )
            .bind(case)
            .bind(id)
            .bind(sent_at)
            .bind(millis(first_recheck))
            .execute(&mut *tx)
            .await?;
            let details = serde_json::json!({
                "case": case.0, "sent_at": sent_at, "first_recheck": first_recheck,
                "mailed": mail.is_some(),
                "sha256": mail.map(|m| m.sha256.as_str()),
            });
            insert_audit!(
                &mut *tx,
                actor,
                "notice.sent",
                Some("notice"),
                Some(id.0),
                &details,
                now
            );
        });
        self.notice(id).await
    }

    async fn copies(&self, case: CaseId) -> Result<Vec<CopyRecord>> {
        let rows: Vec<CopyRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT page_id, url, state, reason, snapshot_id, checked_at, dns_failures, \
                 removed_at, removed_snapshot_id FROM recheck_copies WHERE case_id = $1 \
                 ORDER BY page_id",
            )
            .bind(case)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(CopyRecord::try_from).collect()
    }
}

/// Writes one copy's check; returns its state before (`None` when it was never checked).
macro_rules! write_copy {
    ($tx:expr, $case:expr, $copy:expr, $at:expr) => {{
        let copy: &CopyCheck = $copy;
        let before: Option<String> = sqlx::query_scalar(
            "SELECT state FROM recheck_copies WHERE case_id = $1 AND page_id = $2",
        )
        .bind($case)
        .bind(copy.page)
        .fetch_optional(&mut *$tx)
        .await?;
        let removed = copy.state == CopyState::Removed;
        // A copy that stays gone keeps the time and snapshot that first showed it gone.
        sqlx::query(
            "INSERT INTO recheck_copies (case_id, page_id, url, state, reason, snapshot_id, \
             checked_at, dns_failures, removed_at, removed_snapshot_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, \
                     CASE WHEN $9 THEN $7 END, CASE WHEN $9 THEN $6 END) \
             ON CONFLICT (case_id, page_id) DO UPDATE SET url = $3, state = $4, reason = $5, \
             snapshot_id = $6, checked_at = $7, dns_failures = $8, \
             removed_at = CASE WHEN NOT $9 THEN NULL \
                 WHEN recheck_copies.state = 'removed' THEN recheck_copies.removed_at \
                 ELSE $7 END, \
             removed_snapshot_id = CASE WHEN NOT $9 THEN NULL \
                 WHEN recheck_copies.state = 'removed' THEN recheck_copies.removed_snapshot_id \
                 ELSE $6 END",
        )
        .bind($case)
        .bind(copy.page)
        .bind(&copy.url)
        .bind(copy.state.as_str())
        .bind(&copy.reason)
        .bind(copy.snapshot)
        .bind($at)
        .bind(i32::try_from(copy.dns_failures).unwrap_or(i32::MAX))
        .bind(removed)
        .execute(&mut *$tx)
        .await?;
        before
    }};
}

/// The body of [`Rechecks::record_recheck`] on one backend's transaction.
macro_rules! record_recheck_tx {
    ($tx:expr, $case:expr, $copies:expr, $at:expr, $next_at:expr, $actor:expr) => {{
        let case: CaseId = $case;
        let known: Option<i64> =
            sqlx::query_scalar("SELECT case_id FROM case_rechecks WHERE case_id = $1")
                .bind(case)
                .fetch_optional(&mut *$tx)
                .await?;
        if known.is_none() {
            return Err(Error::not_found("notice sent for case", case));
        }
        let status = lock_case_status!($tx, case);
        let mut newly_removed = Vec::new();
        let mut back_up = Vec::new();
        for copy in $copies {
            let before = write_copy!($tx, case, copy, $at);
            let was_removed = before.as_deref() == Some("removed");
            match copy.state {
                CopyState::Removed if !was_removed => newly_removed.push(copy.page),
                CopyState::Up if was_removed => back_up.push(copy.page),
                _ => {}
            }
        }
        // Pages of the case with no copy row saying it is gone.
        let pages: Vec<(PageId, String, Option<SnapshotId>)> = sqlx::query_as(
            "SELECT DISTINCT m.page_id, c.state, c.removed_snapshot_id FROM matches m \
             LEFT JOIN recheck_copies c ON c.case_id = m.case_id AND c.page_id = m.page_id \
             WHERE m.case_id = $1",
        )
        .bind(case)
        .fetch_all(&mut *$tx)
        .await
        .map(|rows: Vec<(PageId, Option<String>, Option<SnapshotId>)>| {
            rows.into_iter()
                .map(|(p, s, snap)| (p, s.unwrap_or_default(), snap))
                .collect()
        })?;
        let all_gone = !pages.is_empty() && pages.iter().all(|(_, s, _)| s == "removed");
        let mut case_removed = false;
        let mut next: Option<i64> = $next_at.map(millis);
        if status != CaseStatus::NoticeSent {
            next = None;
        } else if all_gone {
            let evidence: BTreeSet<i64> = pages
                .iter()
                .filter_map(|(_, _, s)| s.map(|s| s.0))
                .collect();
            let note = format!(
                "every copy is gone (re-check; evidence: snapshot {})",
                evidence
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            $tx.set_status(case, CaseStatus::Removed, $actor, Some(&note))
                .await?;
            case_removed = true;
            next = None;
        }
        sqlx::query(
            "UPDATE case_rechecks SET checks = checks + 1, last_checked_at = $2, next_at = $3 \
             WHERE case_id = $1",
        )
        .bind(case)
        .bind($at)
        .bind(next)
        .execute(&mut *$tx)
        .await?;
        (newly_removed, back_up, case_removed)
    }};
}

impl Rechecks for Store {
    async fn case_recheck(&self, case: CaseId) -> Result<Option<RecheckRecord>> {
        let row: Option<RecheckRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT notice_id, sent_at, next_at, checks, last_checked_at \
                 FROM case_rechecks WHERE case_id = $1",
            )
            .bind(case)
            .fetch_optional(pool)
            .await?
        });
        let Some((notice, sent_at, next_at, checks, last_checked_at)) = row else {
            return Ok(None);
        };
        Ok(Some(RecheckRecord {
            case,
            notice,
            sent_at,
            next_at: next_at.map(from_millis),
            checks: u32::try_from(checks).unwrap_or(0),
            last_checked_at,
            copies: self.copies(case).await?,
        }))
    }

    async fn due_rechecks(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<CaseId>> {
        read_pool!(self, |pool| {
            Ok(sqlx::query_scalar(
                "SELECT r.case_id FROM case_rechecks r JOIN cases c ON c.id = r.case_id \
                 WHERE r.next_at IS NOT NULL AND r.next_at <= $1 AND c.status = 'notice_sent' \
                 ORDER BY r.next_at, r.case_id LIMIT $2",
            )
            .bind(millis(now))
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?)
        })
    }

    #[instrument(skip(self, copies, actor), fields(copies = copies.len()))]
    async fn record_recheck(
        &self,
        case: CaseId,
        copies: &[CopyCheck],
        checked_at: DateTime<Utc>,
        next_at: Option<DateTime<Utc>>,
        actor: &str,
    ) -> Result<RecheckWritten> {
        let (newly_removed, back_up, case_removed) = durable_tx!(self, |tx| {
            record_recheck_tx!(tx, case, copies, checked_at, next_at, actor)
        });
        let recheck = self
            .case_recheck(case)
            .await?
            .ok_or_else(|| Error::not_found("re-check of case", case))?;
        Ok(RecheckWritten {
            recheck,
            newly_removed,
            back_up,
            case_removed,
        })
    }
}
