//! Per-user alerts by mail (issue #29): each user chooses on `/account`, per kind of event
//! ([`ALERT_EVENTS`]: a new case, a reopened case, a copy back up after a notice, a failed
//! crawl), off, a mail as it happens, or the daily digest, mailed to `users.email` in their
//! language with a link to the case under `notify.public_url`.
//!
//! The handler of [`Job::Event`] (beside the webhooks' fan-out) calls [`on_event`]: the event
//! is recorded once (`store::Alerts::record_alert_event`, keyed by a hash of the event so a
//! job run again finds its row), a [`Job::SendAlert`] is queued per user who wants it at once,
//! and a digest item is kept for each user who wants the digest. The `alert-digests` schedule
//! (`notify.digest_cron`) queues [`Job::SendDigests`], which mails each user their waiting
//! items ([`send_digests`]).
//!
//! Nothing is mailed twice: a mail is recorded before the SMTP server is asked and marked
//! sent after it accepted (`store::Alerts::begin_alert_mail`, `begin_digest`,
//! `finish_alert_mail`); a refusal forgets the record, so a retry (or the next digest) sends
//! it, and a record left without an outcome by a crash stops every retry. The mail texts are
//! here, in English and Chinese, rather than in the admin UI's labels: `admin` sits above
//! this crate, and the workers that mail have no UI.

use chrono::{DateTime, Utc};
use jobs::cron_words::Language;
use jobs::{Error, Event, Job, Result, store_err};
use lettre::Message;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use sha2::Digest;
use store::{
    AlertDelivery, AlertEvent, AlertEventId, AlertStart, Alerts, CaseReads, JobQueue, NewJob,
    Schedules, Store, UserId, UserRecord, Users,
};

use crate::NotifySettings;
use crate::mail::Mailer;
use crate::mail::escape_html;

/// The events a user can be alerted of, in the order `/account` shows them.
pub const ALERT_EVENTS: [Event; 4] = [
    Event::CaseOpened,
    Event::CaseReopened,
    Event::CopyBackUp,
    Event::CrawlFailed,
];

/// The name of the schedule that queues [`Job::SendDigests`].
pub const SCHEDULE: &str = "alert-digests";

/// What [`on_event`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertsQueued {
    /// Users whose immediate alert was queued.
    pub immediate: Vec<UserId>,
    /// Users whose digest holds the event now.
    pub digest: Vec<UserId>,
}

/// The job that mails `user` their alert of `event`, one live per pair.
///
/// # Errors
/// Never in practice (the job serialises).
pub fn alert_job(user: UserId, event: AlertEventId) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::SendAlert { user, event })?
        .dedupe_key(format!("alert:{user}:{event}"))
        .max_attempts(5))
}

/// Creates (or updates) the schedule that queues the daily digests.
///
/// # Errors
/// A cron expression that does not parse (`notify.digest_cron`); a database failure.
pub async fn ensure_digest_schedule(store: &Store, notify: &NotifySettings) -> Result<()> {
    let job = NewJob::new(&Job::SendDigests)
        .map_err(store_err("encoding the digest job"))?
        .dedupe_key(SCHEDULE);
    store
        .set_schedule(SCHEDULE, &notify.digest_cron, &job)
        .await
        .map_err(store_err(
            "writing the digest schedule (notify.digest_cron)",
        ))?;
    Ok(())
}

/// A stable key of one event: the same on every run of its [`Job::Event`].
fn event_key(event: Event, at: DateTime<Utc>, data: &serde_json::Value) -> String {
    let mut h = sha2::Sha256::new();
    for part in [event.as_str(), &at.to_rfc3339(), &data.to_string()] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    crate::mail::hex(&h.finalize()[..16])
}

/// The alert half of [`Job::Event`]'s handler: records the event for the users who want it
/// and queues their immediate alerts. Nothing is done without an SMTP server, or for an
/// event no user can choose.
///
/// # Errors
/// A database failure.
pub async fn on_event(
    store: &Store,
    notify: &NotifySettings,
    event: Event,
    at: DateTime<Utc>,
    data: &serde_json::Value,
) -> Result<AlertsQueued> {
    let mut queued = AlertsQueued::default();
    if !notify.smtp.is_configured() || !ALERT_EVENTS.contains(&event) {
        return Ok(queued);
    }
    let recipients = store
        .alert_recipients(event.as_str())
        .await
        .map_err(store_err("reading who is alerted"))?;
    if recipients.is_empty() {
        return Ok(queued);
    }
    let recorded = store
        .record_alert_event(&event_key(event, at, data), event.as_str(), at, data)
        .await
        .map_err(store_err("recording an alert event"))?;
    for (user, delivery) in recipients {
        match delivery {
            AlertDelivery::Immediate => {
                let job =
                    alert_job(user.id, recorded.id).map_err(store_err("encoding an alert"))?;
                store
                    .enqueue(&job)
                    .await
                    .map_err(store_err("queueing an alert"))?;
                queued.immediate.push(user.id);
            }
            AlertDelivery::Digest => {
                store
                    .add_digest_item(user.id, recorded.id)
                    .await
                    .map_err(store_err("keeping an event for a digest"))?;
                queued.digest.push(user.id);
            }
            AlertDelivery::Off => {}
        }
    }
    Ok(queued)
}

/// The longest alert address kept (RFC 5321's limit on a path).
const MAX_EMAIL_CHARS: usize = 254;

/// Sets a user's alert address (blank clears it) and their choice per event
/// ([`ALERT_EVENTS`]; events left out stay as they are): what `/account` saves.
///
/// # Errors
/// [`Error::Refused`] for an address that is not one, or an event users cannot choose;
/// database failures.
pub async fn set_alerts(
    store: &Store,
    user: UserId,
    email: Option<&str>,
    choices: &[(Event, AlertDelivery)],
    actor: &str,
) -> Result<UserRecord> {
    let email = email.map(str::trim).filter(|e| !e.is_empty());
    if let Some(email) = email {
        let plain = email.chars().count() <= MAX_EMAIL_CHARS
            && !email.chars().any(char::is_control)
            && email.parse::<lettre::Address>().is_ok();
        if !plain {
            return Err(Error::Refused(format!(
                "{email:?} is not an email address (name@example.org)"
            )));
        }
    }
    if let Some((bad, _)) = choices.iter().find(|(e, _)| !ALERT_EVENTS.contains(e)) {
        return Err(Error::Refused(format!(
            "{} is not an event users are alerted of",
            bad.as_str()
        )));
    }
    let changes = store::UserChanges {
        email: Some(email.map(str::to_owned)),
        ..store::UserChanges::default()
    };
    let updated = store
        .update_user(user, &changes, actor)
        .await
        .map_err(store_err("saving the alert address"))?;
    let choices: Vec<(String, AlertDelivery)> = choices
        .iter()
        .map(|(e, d)| (e.as_str().to_owned(), *d))
        .collect();
    store
        .set_alert_preferences(user, &choices, actor)
        .await
        .map_err(store_err("saving the alert choices"))?;
    Ok(updated)
}

/// What a send of an alert or a digest did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertOutcome {
    /// Mailed now.
    Mailed,
    /// Mailed before: nothing now.
    AlreadySent,
    /// An earlier attempt was cut off with no outcome: not mailed again.
    Unfinished,
    /// The user is disabled or has no address now.
    NoRecipient,
}

/// Mails `user` their alert of `event` (the handler of [`Job::SendAlert`]).
///
/// # Errors
/// [`Error::Mail`] when the server did not take it (nothing is recorded, so a retry sends
/// it); [`Error::Notice`] for an address that is not one; database failures.
pub async fn send_alert(
    store: &Store,
    notify: &NotifySettings,
    mailer: &Mailer,
    user: UserId,
    event: AlertEventId,
) -> Result<AlertOutcome> {
    let user = store
        .user(user)
        .await
        .map_err(store_err("reading the user alerted"))?;
    let Some(to) = recipient(&user)? else {
        return Ok(AlertOutcome::NoRecipient);
    };
    let event = store
        .alert_event(event)
        .await
        .map_err(store_err("reading the alert's event"))?;
    let lang = language(&user);
    let line = describe(store, notify, &event, lang).await?;
    let now = Utc::now();
    let mail = match store
        .begin_alert_mail(user.id, event.id, now)
        .await
        .map_err(store_err("recording the alert mail"))?
    {
        AlertStart::Begun(mail) => mail,
        AlertStart::AlreadySent => return Ok(AlertOutcome::AlreadySent),
        AlertStart::Unfinished => return Ok(AlertOutcome::Unfinished),
    };
    let subject = format!("copyhound: {}", line.text);
    let message = compose(mailer, to, &subject, intro(lang, false), &[line], lang);
    deliver(store, mailer, mail, message).await
}

/// What [`send_digests`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DigestReport {
    /// Users mailed their digest.
    pub mailed: Vec<UserId>,
    /// Users whose digest the server did not take (their items wait), with why.
    pub failed: Vec<(UserId, String)>,
}

/// Mails each user with waiting digest items one digest of them (the handler of
/// [`Job::SendDigests`]). A user who is disabled or has no address keeps their items.
///
/// # Errors
/// Database failures; a digest the server refused is in [`DigestReport::failed`].
pub async fn send_digests(
    store: &Store,
    notify: &NotifySettings,
    mailer: &Mailer,
) -> Result<DigestReport> {
    let mut report = DigestReport::default();
    let users = store
        .users_with_digest_items()
        .await
        .map_err(store_err("reading the digests due"))?;
    for id in users {
        let user = store
            .user(id)
            .await
            .map_err(store_err("reading a digest's user"))?;
        let to = match recipient(&user) {
            Ok(Some(to)) => to,
            Ok(None) => continue,
            Err(e) => {
                report.failed.push((id, e.to_string()));
                continue;
            }
        };
        let Some((mail, events)) = store
            .begin_digest(id, Utc::now())
            .await
            .map_err(store_err("claiming a digest's events"))?
        else {
            continue;
        };
        let lang = language(&user);
        let mut lines = Vec::with_capacity(events.len());
        for event in &events {
            lines.push(describe(store, notify, event, lang).await?);
        }
        let subject = match lang {
            Language::En => format!("copyhound: daily digest, {} events", lines.len()),
            Language::Zh => format!("copyhound 每日摘要：{} 个事件", lines.len()),
        };
        let message = compose(mailer, to, &subject, intro(lang, true), &lines, lang);
        match deliver(store, mailer, mail, message).await {
            Ok(_) => report.mailed.push(id),
            Err(Error::Mail(e)) => report.failed.push((id, e.reason)),
            Err(e) => return Err(e),
        }
    }
    Ok(report)
}

/// Sends a begun mail and records the outcome: sent, or forgotten so it is sent later.
async fn deliver(
    store: &Store,
    mailer: &Mailer,
    mail: store::AlertMailId,
    message: Result<Message>,
) -> Result<AlertOutcome> {
    let sent = match message {
        Ok(message) => mailer.send(&message).await.map_err(Error::Mail),
        Err(e) => Err(e),
    };
    match sent {
        Ok(_) => {
            // Should this write fail, the record stays without an outcome: no retry mails
            // it again.
            store
                .finish_alert_mail(mail, Utc::now())
                .await
                .map_err(store_err("marking an alert mailed"))?;
            Ok(AlertOutcome::Mailed)
        }
        Err(e) => {
            store
                .release_alert_mail(mail)
                .await
                .map_err(store_err("forgetting an alert not mailed"))?;
            Err(e)
        }
    }
}

/// The user's address, `None` when they are disabled or have none.
fn recipient(user: &UserRecord) -> Result<Option<Mailbox>> {
    let Some(email) = user
        .email
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty())
    else {
        return Ok(None);
    };
    if user.disabled {
        return Ok(None);
    }
    let address = email.parse().map_err(|e| {
        Error::Notice(format!(
            "user {}'s alert address {email:?} is not an email address: {e}",
            user.username
        ))
    })?;
    Ok(Some(Mailbox::new(
        user.display_name.clone().filter(|n| !n.trim().is_empty()),
        address,
    )))
}

/// The user's language: their UI language, English when they follow the browser.
pub fn language(user: &UserRecord) -> Language {
    match user.locale.as_deref().map(str::trim) {
        Some(l) if l.to_ascii_lowercase().starts_with("zh") => Language::Zh,
        _ => Language::En,
    }
}

/// One event in a mail: a sentence and where to look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertLine {
    /// What happened, in the user's language.
    pub text: String,
    /// The admin UI's page of it, when `notify.public_url` is set.
    pub link: Option<String>,
}

/// An event in words in `lang`, with its case (work and site) when it has one.
///
/// # Errors
/// A database failure.
pub async fn describe(
    store: &Store,
    notify: &NotifySettings,
    event: &AlertEvent,
    lang: Language,
) -> Result<AlertLine> {
    let data = &event.data;
    let case = data["case"].as_i64().map(store::CaseId);
    let link = |path: String| {
        let base = notify.public_url.trim().trim_end_matches('/');
        (!base.is_empty()).then(|| format!("{base}{path}"))
    };
    let (work, site) = match case {
        Some(id) => match store.case(id).await {
            Ok(c) => (c.work_title, c.site),
            Err(store::Error::NotFound { .. }) => (String::new(), String::new()),
            Err(e) => return Err(store_err("reading an alert's case")(e)),
        },
        None => (String::new(), String::new()),
    };
    let id = case.map(|c| c.0).unwrap_or_default();
    let url = data["url"].as_str().unwrap_or_default();
    let text = match (Event::parse(&event.event), lang) {
        (Some(Event::CaseOpened), Language::En) => {
            format!("new case {id}: {work} is copied on {site}")
        }
        (Some(Event::CaseOpened), Language::Zh) => {
            format!("新案件 {id}：{site} 复制了《{work}》")
        }
        (Some(Event::CaseReopened), Language::En) => {
            format!("case {id} reopened: {work} is copied on {site} again")
        }
        (Some(Event::CaseReopened), Language::Zh) => {
            format!("案件 {id} 重新打开：{site} 再次复制了《{work}》")
        }
        (Some(Event::CopyBackUp), Language::En) => {
            format!("a copy is back up after the notice (case {id}, {work}): {url}")
        }
        (Some(Event::CopyBackUp), Language::Zh) => {
            format!("通知后副本重新上线（案件 {id}，《{work}》）：{url}")
        }
        (Some(Event::CrawlFailed), Language::En) => format!(
            "crawl {} failed: {}",
            data["crawl"],
            data["error"].as_str().unwrap_or_default()
        ),
        (Some(Event::CrawlFailed), Language::Zh) => format!(
            "抓取 {} 失败：{}",
            data["crawl"],
            data["error"].as_str().unwrap_or_default()
        ),
        (_, Language::En) => format!("{} {data}", event.event),
        (_, Language::Zh) => format!("{} {data}", event.event),
    };
    let link = match case {
        Some(id) => link(format!("/cases/{id}")),
        None => link("/jobs".to_owned()),
    };
    // One line: a title or URL with a line break cannot start a header or a paragraph.
    let text = text.replace(['\r', '\n'], " ");
    Ok(AlertLine { text, link })
}

/// The first sentence of a mail.
fn intro(lang: Language, digest: bool) -> &'static str {
    match (lang, digest) {
        (Language::En, false) => "copyhound has something to tell you:",
        (Language::En, true) => "What happened since the last digest:",
        (Language::Zh, false) => "copyhound 通知您：",
        (Language::Zh, true) => "自上次摘要以来：",
    }
}

/// The mail: text and HTML alternatives of the same lines.
fn compose(
    mailer: &Mailer,
    to: Mailbox,
    subject: &str,
    intro: &str,
    lines: &[AlertLine],
    lang: Language,
) -> Result<Message> {
    let footer = match lang {
        Language::En => {
            "You get this mail because of your alert choices in copyhound (Your account)."
        }
        Language::Zh => "您收到此邮件，是因为您在 copyhound 中的提醒设置（我的账户）。",
    };
    let mut text = format!("{intro}\n\n");
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"{}\"><body>\n<p>{}</p>\n<ul>\n",
        match lang {
            Language::En => "en",
            Language::Zh => "zh-CN",
        },
        escape_html(intro)
    );
    for line in lines {
        text.push_str(&format!("- {}\n", line.text));
        html.push_str(&format!("<li>{}", escape_html(&line.text)));
        if let Some(link) = &line.link {
            text.push_str(&format!("  {link}\n"));
            html.push_str(&format!(" <a href=\"{0}\">{0}</a>", escape_html(link)));
        }
        html.push_str("</li>\n");
    }
    text.push_str(&format!("\n-- \n{footer}\n"));
    html.push_str(&format!(
        "</ul>\n<p>{}</p>\n</body></html>\n",
        escape_html(footer)
    ));
    let subject: String = subject.chars().take(200).collect();
    Message::builder()
        .from(mailer.from().clone())
        .to(to)
        .subject(subject)
        .date(Utc::now().into())
        .multipart(
            MultiPart::alternative()
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_PLAIN)
                        .body(text),
                )
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_HTML)
                        .body(html),
                ),
        )
        .map_err(|e| Error::Notice(format!("cannot build an alert mail: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_keeps_its_key_and_another_does_not_share_it() {
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let data = serde_json::json!({"case": 7});
        let key = event_key(Event::CaseOpened, at, &data);
        assert_eq!(key, event_key(Event::CaseOpened, at, &data));
        assert_ne!(key, event_key(Event::CaseReopened, at, &data));
        assert_ne!(
            key,
            event_key(Event::CaseOpened, at, &serde_json::json!({"case": 8}))
        );
    }
}
