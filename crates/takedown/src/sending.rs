//! A takedown notice mailed by copyhound (`notices send`, the notice page's Send button
//! through [`Job::SendNotice`]): to its recipient, from the rights holder, the notice's text
//! with its HTML as the alternative, the case's evidence package attached as a zip (or, past
//! `notify.max_attachment_bytes`, written to `notify.share_dir` and linked).
//!
//! Nothing is sent twice. [`send_notice`] records the attempt and its `Message-ID` before it
//! talks to the server ([`store::Notices::begin_notice_send`]); the server's acceptance marks
//! the notice sent with the SHA-256 of the bytes sent and the reply, which starts the case's
//! re-checks ([`store::Notices::mark_notice_mailed`]); a refusal, a timeout or a dropped
//! connection leaves a draft saying why ([`store::Notices::fail_notice_send`]). A job run
//! again after its worker died finds the notice sent (and sends nothing), or finds an attempt
//! with no outcome and refuses, naming the Message-ID, until a person looks at the sent mail
//! and marks it sent or asks for it again (`again`, which keeps the Message-ID).
//!
//! A notice whose recipient is a web form's URL is not mailed: the form takes the text
//! (`notices show`), and the notice is marked sent by hand.

use casework::rechecks::{RecheckSettings, ensure_recheck_schedule};
use chrono::{DateTime, Utc};
use jobs::{Error, Job, Result, store_err};
use lettre::Message;
use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use notification::NotifySettings;
use notification::mail::{Mailer, escape_html};
use serde::Serialize;
use store::{
    CaseReads, CaseStatus, NewJob, NoticeId, NoticeMail, NoticeRecord, Notices, SendStart, Store,
};

use crate::NoticeSettings;

/// How the evidence package went with the notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "how")]
pub enum EvidenceSent {
    /// Attached as `case-<id>-evidence.zip`.
    Attached {
        /// The zip's size.
        bytes: u64,
    },
    /// Too large to attach: written to the share folder and linked.
    Linked {
        /// Where the recipient downloads it.
        url: String,
        /// The zip's size.
        bytes: u64,
    },
}

/// What [`send_notice`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentNotice {
    /// The notice as it now stands (sent).
    pub notice: NoticeRecord,
    /// It was sent before this call (nothing was mailed now).
    pub already_sent: bool,
    /// How the evidence went, when it was mailed now.
    pub evidence: Option<EvidenceSent>,
}

/// What a notice needs to be mailed.
#[derive(Debug, Clone, Copy)]
pub struct SendSettings<'a> {
    /// The rights holder (its effective values, the UI's saved ones over the file's, are
    /// read at send time).
    pub notices: &'a NoticeSettings,
    /// The attachment's limit and the share folder.
    pub notify: &'a NotifySettings,
    /// When the re-checks start once it is sent.
    pub rechecks: &'a RecheckSettings,
}

/// The job that mails notice `id` (the notice page's Send button): one per notice queued or
/// running at a time; retried with backoff while the server is unreachable or answers 4xx.
///
/// # Errors
/// Never in practice (the job serialises).
pub fn send_job(id: NoticeId, again: bool) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::SendNotice { notice: id, again })?
        .dedupe_key(format!("notice:send:{id}"))
        .max_attempts(5))
}

/// Mails notice `id` with `mailer`, as `actor`, and records it (see the module docs).
/// `again` sends a notice whose earlier attempt was cut off with no outcome recorded.
///
/// # Errors
/// [`Error::Notice`] when the notice cannot be mailed as it is (no recipient, a web form, no
/// rights holder's address, a package too large with no share folder); a store conflict when
/// its case is not confirmed or an earlier attempt has no outcome and `again` is not set;
/// [`Error::Mail`] when the server did not take it (the reason is recorded on the notice);
/// [`jobs::Error::is_not_found`] for an unknown notice; evidence and database failures.
pub async fn send_notice(
    store: &Store,
    settings: SendSettings<'_>,
    mailer: &Mailer,
    id: NoticeId,
    again: bool,
    actor: &str,
) -> Result<SentNotice> {
    let notice = store
        .notice(id)
        .await
        .map_err(store_err("reading the notice"))?;
    if notice.sent_at.is_some() {
        return Ok(SentNotice {
            notice,
            already_sent: true,
            evidence: None,
        });
    }
    let to = mail_recipient(&notice)?;
    let effective = crate::overrides::effective(store, settings.notices).await?;
    let from = rights_holder_mailbox(&effective.notices)?;
    let case = store
        .case(notice.case_id)
        .await
        .map_err(store_err("reading the notice's case"))?;
    if !matches!(case.status, CaseStatus::Confirmed | CaseStatus::NoticeSent) {
        return Err(Error::Notice(format!(
            "notice {id}: case {} is {}, and only a confirmed case's notice is sent",
            case.id, case.status
        )));
    }
    let zip = evidence::package::package_zip(store, notice.case_id).await?;
    let evidence = evidence_part(settings.notify, &notice, zip)?;

    let now = Utc::now();
    let candidate = message_id(&notice, &from);
    let notice = match store
        .begin_notice_send(id, &candidate, now, again, actor)
        .await
        .map_err(store_err("recording the attempt to send the notice"))?
    {
        SendStart::Begun(n) => n,
        SendStart::AlreadySent(notice) => {
            return Ok(SentNotice {
                notice,
                already_sent: true,
                evidence: None,
            });
        }
    };
    let message = match compose(&notice, mailer, from, to, &evidence, now) {
        Ok(m) => m,
        Err(e) => {
            record_failure(store, id, &e.to_string(), actor).await?;
            return Err(e);
        }
    };
    match mailer.send(&message).await {
        Ok(accepted) => {
            let mail = NoticeMail {
                sha256: accepted.sha256,
                reply: accepted.reply,
            };
            // Marked sent at the server's acceptance. Should this write fail, the attempt
            // stays recorded without an outcome, so no retry mails it again.
            let first = now + settings.rechecks.interval_after(now, now);
            let notice = store
                .mark_notice_mailed(id, &mail, actor, now, first)
                .await
                .map_err(store_err("marking the mailed notice sent"))?;
            ensure_recheck_schedule(store, settings.rechecks).await?;
            // Always queued: webhooks stored in the UI may take it.
            crate::notices::emit_sent(store, &notice).await?;
            Ok(SentNotice {
                notice,
                already_sent: false,
                evidence: Some(evidence.sent),
            })
        }
        Err(not_sent) => {
            record_failure(store, id, &not_sent.reason, actor).await?;
            Err(Error::Mail(not_sent))
        }
    }
}

async fn record_failure(store: &Store, id: NoticeId, reason: &str, actor: &str) -> Result<()> {
    store
        .fail_notice_send(id, reason, actor)
        .await
        .map(drop)
        .map_err(store_err("recording why the notice was not sent"))
}

/// The notice's recipient as a mailbox, or why it cannot be mailed (none known, a web
/// form, not an address).
///
/// # Errors
/// [`Error::Notice`] saying which, and what to do instead.
pub fn mail_recipient(notice: &NoticeRecord) -> Result<Mailbox> {
    let to = notice.recipient.trim();
    if is_web_form(notice) {
        return Err(Error::Notice(format!(
            "notice {id} goes to a web form ({to}), which takes no mail: paste its text \
             (`copyhound notices show {id}`) into the form, then mark it sent",
            id = notice.id
        )));
    }
    if to.is_empty() {
        return Err(Error::Notice(format!(
            "notice {} has no recipient: fill in the abuse contact's address on the notice \
             page first",
            notice.id
        )));
    }
    to.parse().map_err(|e| {
        Error::Notice(format!(
            "notice {}: its recipient {to:?} is not an email address: {e}",
            notice.id
        ))
    })
}

/// Whether the notice's recipient is a web form's URL (the notice stays manual).
pub fn is_web_form(notice: &NoticeRecord) -> bool {
    let to = notice.recipient.trim();
    to.starts_with("https://") || to.starts_with("http://")
}

fn rights_holder_mailbox(settings: &NoticeSettings) -> Result<Mailbox> {
    let holder = &settings.rights_holder;
    let address = holder.email.trim().parse().map_err(|e| {
        Error::Notice(format!(
            "the rights holder's address {:?} (notices.rights_holder.email) is not an email \
             address, and notices are mailed from it: {e}",
            holder.email
        ))
    })?;
    let name = holder.name.trim();
    Ok(Mailbox::new(
        (!name.is_empty()).then(|| name.to_owned()),
        address,
    ))
}

/// A new Message-ID: the notice, a random part and the rights holder's domain.
fn message_id(notice: &NoticeRecord, from: &Mailbox) -> String {
    format!(
        "notice-{}.{}@{}",
        notice.id,
        accounts::random_token(12),
        from.email.domain()
    )
}

/// The evidence as it goes with the mail.
struct EvidencePart {
    sent: EvidenceSent,
    /// The zip, when attached.
    zip: Option<Vec<u8>>,
}

fn evidence_part(
    settings: &NotifySettings,
    notice: &NoticeRecord,
    zip: Vec<u8>,
) -> Result<EvidencePart> {
    let bytes = zip.len() as u64;
    if bytes <= settings.max_attachment_bytes {
        return Ok(EvidencePart {
            sent: EvidenceSent::Attached { bytes },
            zip: Some(zip),
        });
    }
    let Some(dir) = &settings.share_dir else {
        return Err(Error::Notice(format!(
            "notice {}: the evidence package is {bytes} bytes, over \
             notify.max_attachment_bytes ({}), and no notify.share_dir is set to link it from: \
             set notify.share_dir and notify.share_url, or raise the limit",
            notice.id, settings.max_attachment_bytes
        )));
    };
    // An unguessable name: the link is the recipient's only key to the package.
    let name = format!("case-{}-{}.zip", notice.case_id, accounts::random_token(16));
    let path = dir.join(&name);
    std::fs::create_dir_all(dir)
        .and_then(|()| {
            use std::io::Write;
            let mut file = std::fs::File::create_new(&path)?;
            file.write_all(&zip)?;
            file.sync_all()
        })
        .map_err(|source| Error::WriteFile {
            path: path.clone(),
            source,
        })?;
    Ok(EvidencePart {
        sent: EvidenceSent::Linked {
            url: format!("{}/{name}", settings.share_url.trim_end_matches('/')),
            bytes,
        },
        zip: None,
    })
}

/// The message: the notice's text and HTML as alternatives, the package attached or linked.
fn compose(
    notice: &NoticeRecord,
    mailer: &Mailer,
    from: Mailbox,
    to: Mailbox,
    evidence: &EvidencePart,
    now: DateTime<Utc>,
) -> Result<Message> {
    let message_id = notice
        .message_id
        .as_deref()
        .ok_or_else(|| Error::Notice(format!("notice {}: no Message-ID recorded", notice.id)))?;
    let mut text = notice.body_text.clone();
    let mut html = notice.body_html.clone();
    if let EvidenceSent::Linked { url, bytes } = &evidence.sent {
        let line = format!("Evidence package (zip, {bytes} bytes): {url}");
        text = format!("{}\n\n{line}\n", text.trim_end());
        let para = format!("<p>{}</p>\n", escape_html(&line));
        html = match html.rfind("</body>") {
            Some(at) => format!("{}{para}{}", &html[..at], &html[at..]),
            None => format!("{html}{para}"),
        };
    }
    let body = MultiPart::alternative()
        .singlepart(
            SinglePart::builder()
                .header(ContentType::TEXT_PLAIN)
                .body(text),
        )
        .singlepart(
            SinglePart::builder()
                .header(ContentType::TEXT_HTML)
                .body(html),
        );
    let body = match &evidence.zip {
        Some(zip) => MultiPart::mixed().multipart(body).singlepart(
            Attachment::new(format!("case-{}-evidence.zip", notice.case_id)).body(
                zip.clone(),
                ContentType::parse("application/zip").map_err(|e| Error::Notice(e.to_string()))?,
            ),
        ),
        None => body,
    };
    let mut builder = Message::builder()
        .from(from.clone())
        .to(to)
        .subject(notice.subject.clone())
        .message_id(Some(format!("<{message_id}>")))
        .date(now.into());
    // Sent from the rights holder through the configured server: the server's sender is
    // the envelope's (bounces go there) and the Sender header says who transmitted it.
    if mailer.from().email != from.email {
        builder = builder.sender(mailer.from().clone());
    }
    builder
        .multipart(body)
        .map_err(|e| Error::Notice(format!("notice {}: cannot build the mail: {e}", notice.id)))
}

/// What `notices send` says of a send: what went where, its Message-ID and SHA-256.
pub fn sent_text(sent: &SentNotice) -> String {
    let n = &sent.notice;
    if sent.already_sent {
        return format!(
            "notice {} was sent already{}; nothing was mailed\n",
            n.id,
            n.sent_at
                .map(|t| format!(" ({})", t.format("%Y-%m-%d %H:%M UTC")))
                .unwrap_or_default()
        );
    }
    let evidence = match &sent.evidence {
        Some(EvidenceSent::Attached { bytes }) => {
            format!("evidence package attached ({bytes} bytes)")
        }
        Some(EvidenceSent::Linked { url, bytes }) => {
            format!("evidence package linked ({bytes} bytes): {url}")
        }
        None => "no evidence package".to_owned(),
    };
    format!(
        "notice {id} mailed to {to}; case {case} is notice_sent and its copies are re-checked\n\
         {evidence}\nMessage-ID <{mid}>\nsha256 {sha}\nserver: {reply}\n",
        id = n.id,
        to = n.recipient,
        case = n.case_id,
        mid = n.message_id.as_deref().unwrap_or(""),
        sha = n.sent_sha256.as_deref().unwrap_or(""),
        reply = n.smtp_reply.as_deref().unwrap_or(""),
    )
}
