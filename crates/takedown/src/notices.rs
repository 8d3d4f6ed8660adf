//! Takedown notices: a document rendered from a confirmed case with one of two templates —
//! `dmca` (the elements of 17 U.S.C. § 512(c)(3)) and `cn` (those of
//! 《信息网络传播权保护条例》第十四条) — naming the rights holder, the work, each infringing URL
//! with the chapters it copies and the SHA-256 and fetch time of each snapshot that shows it.
//!
//! The templates are askama files under `web/templates/notices/` (`<name>.txt` and
//! `<name>.html`), compiled into the binary; a rights team edits them and rebuilds. A notice
//! is stored as rendered, so what was sent is what `notices show` prints later. It is mailed
//! by [`crate::sending`], or sent by hand (a web form) and then [`mark_sent`] records that it
//! went out; either starts the case's re-checks ([`casework::rechecks`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use askama::Template;
use casework::rechecks::{RecheckSettings, ensure_recheck_schedule};
use chrono::{DateTime, Utc};
use jobs::{Error, Result, store_err};
use serde::Serialize;
use store::{CaseId, CaseReads, NewNotice, NoticeId, NoticeRecord, Notices, Store, WorkReads};

use crate::notice_settings::{NoticeSettings, NoticeTemplate, RightsHolder, check_recipient};

/// A chapter a URL copies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoticeChapter {
    /// Its 1-based position in the work.
    pub index: u32,
    /// Its title.
    pub title: String,
}

/// One stored fetch of an infringing URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoticeEvidence {
    /// The snapshot.
    pub snapshot: i64,
    /// SHA-256 of the body as fetched, lower-case hex.
    pub sha256: String,
    /// When it was fetched, in the notices' time zone (`2026-11-25 01:02:03 UTC`,
    /// `2026-11-25 09:02:03 +08:00`).
    pub fetched_at: String,
}

/// One infringing URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoticeCopy {
    /// The URL.
    pub url: String,
    /// The chapters it copies, in work order.
    pub chapters: Vec<NoticeChapter>,
    /// The snapshots that show it, oldest first.
    pub evidence: Vec<NoticeEvidence>,
}

/// Where to send a notice, and how copyhound knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recipient {
    /// An email address or a URL (a web form).
    pub address: String,
    /// Where it came from (`--to`, `configured abuse contact`, `https://…/security.txt`).
    pub source: String,
}

/// What a notice template renders: everything comes from the case, the work and the
/// rights holder's profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoticeDocument {
    /// The template.
    pub template: NoticeTemplate,
    /// The case.
    pub case: CaseId,
    /// The date written on the notice (`2026-11-25`), in the notices' time zone.
    pub date: String,
    /// Who it speaks for.
    pub rights_holder: RightsHolder,
    /// Where it goes, if known.
    pub recipient: Option<Recipient>,
    /// The work's title.
    pub work_title: String,
    /// Its author, if recorded.
    pub work_author: Option<String>,
    /// Chapters the work has.
    pub work_chapters: u32,
    /// Chapters copied on the site.
    pub chapters_copied: u32,
    /// The site's host.
    pub site: String,
    /// Each infringing URL, in URL order.
    pub copies: Vec<NoticeCopy>,
}

impl NoticeDocument {
    /// The subject line.
    pub fn subject(&self) -> String {
        match self.template {
            NoticeTemplate::Dmca => format!(
                "DMCA notice of copyright infringement: \"{}\" copied on {}",
                self.work_title, self.site
            ),
            NoticeTemplate::Cn => format!("侵权通知书：《{}》（{}）", self.work_title, self.site),
        }
    }

    /// The recipient's address, or a blank to fill in.
    pub fn to(&self) -> &str {
        self.recipient.as_ref().map_or("", |r| r.address.as_str())
    }
}

/// A URL's chapters (index → title) and snapshots ((fetch time, id) → SHA-256).
type UrlMatches<'a> = (
    BTreeMap<u32, &'a str>,
    BTreeMap<(DateTime<Utc>, i64), &'a str>,
);

/// Reads what a notice of `case` says, without rendering or storing it.
///
/// # Errors
/// [`jobs::Error::is_not_found`] for an unknown case; [`Error::Notice`] when the rights
/// holder's profile lacks an element the law asks for (naming the settings to fill in); a
/// database failure.
pub async fn notice_document(
    store: &Store,
    settings: &NoticeSettings,
    case: CaseId,
    template: NoticeTemplate,
    recipient: Option<Recipient>,
    now: DateTime<Utc>,
) -> Result<NoticeDocument> {
    let settings = &crate::overrides::effective(store, settings).await?.notices;
    let facts = read_case(store, settings, case).await?;
    Ok(compose(facts, settings, template, recipient, now))
}

/// What a notice of a case is made from: the case, its work and its matches.
struct CaseFacts {
    record: store::CaseRecord,
    work: store::Work,
    matches: Vec<store::CaseMatch>,
}

/// Reads a case's [`CaseFacts`], once the profile is known to be complete.
async fn read_case(store: &Store, settings: &NoticeSettings, case: CaseId) -> Result<CaseFacts> {
    let missing = settings.rights_holder.missing();
    if !missing.is_empty() {
        return Err(Error::Notice(format!(
            "the rights holder's profile is incomplete: set {} on the admin UI's settings \
             page (/settings), in the config file or in the \
             COPYHOUND_NOTICES__RIGHTS_HOLDER__* environment variables",
            missing.join(", ")
        )));
    }
    let record = store
        .case(case)
        .await
        .map_err(store_err("reading the case"))?;
    let work = store
        .work(record.work_id)
        .await
        .map_err(store_err("reading the case's work"))?;
    let matches = store
        .case_matches(case)
        .await
        .map_err(store_err("reading the case's matches"))?;
    Ok(CaseFacts {
        record,
        work,
        matches,
    })
}

/// The notice document of a case's facts.
fn compose(
    facts: CaseFacts,
    settings: &NoticeSettings,
    template: NoticeTemplate,
    recipient: Option<Recipient>,
    now: DateTime<Utc>,
) -> NoticeDocument {
    let CaseFacts {
        record,
        work,
        matches,
    } = facts;
    let case = record.id;
    let mut by_url: BTreeMap<&str, UrlMatches<'_>> = BTreeMap::new();
    for m in &matches {
        let (chapters, evidence) = by_url.entry(m.url.as_str()).or_default();
        chapters.insert(m.chapter_index, m.chapter_title.as_str());
        evidence.insert((m.fetched_at, m.snapshot_id.0), m.snapshot_sha256.as_str());
    }
    let copied: BTreeSet<u32> = matches.iter().map(|m| m.chapter_index).collect();
    let zone = crate::notice_settings::zone(&settings.time_zone);
    let when = |t| crate::notice_settings::local_time(t, &zone, true);
    NoticeDocument {
        template,
        case,
        date: crate::notice_settings::local_date(now, &zone),
        rights_holder: settings.rights_holder.clone(),
        recipient,
        work_title: work.title,
        work_author: work.author,
        work_chapters: record.work_chapters,
        chapters_copied: u32::try_from(copied.len()).unwrap_or(u32::MAX),
        site: record.site,
        copies: by_url
            .into_iter()
            .map(|(url, (chapters, evidence))| NoticeCopy {
                url: url.to_owned(),
                chapters: chapters
                    .into_iter()
                    .map(|(index, title)| NoticeChapter {
                        index,
                        title: title.to_owned(),
                    })
                    .collect(),
                evidence: evidence
                    .into_iter()
                    .map(|((at, snapshot), sha)| NoticeEvidence {
                        snapshot,
                        sha256: sha.to_owned(),
                        fetched_at: when(at),
                    })
                    .collect(),
            })
            .collect(),
    }
}

#[derive(Template)]
#[template(path = "notices/dmca.txt")]
struct DmcaText<'a> {
    d: &'a NoticeDocument,
}

#[derive(Template)]
#[template(path = "notices/dmca.html")]
struct DmcaHtml<'a> {
    d: &'a NoticeDocument,
}

#[derive(Template)]
#[template(path = "notices/cn.txt")]
struct CnText<'a> {
    d: &'a NoticeDocument,
}

#[derive(Template)]
#[template(path = "notices/cn.html")]
struct CnHtml<'a> {
    d: &'a NoticeDocument,
}

/// A rendered notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The subject line.
    pub subject: String,
    /// Plain text.
    pub text: String,
    /// An HTML document (every value escaped: URLs and titles come from pirate pages).
    pub html: String,
}

/// Renders `doc` with its template, as text and as HTML.
///
/// # Errors
/// [`Error::Render`] when a template fails.
pub fn render(doc: &NoticeDocument) -> Result<Rendered> {
    let (text, html) = match doc.template {
        NoticeTemplate::Dmca => (DmcaText { d: doc }.render(), DmcaHtml { d: doc }.render()),
        NoticeTemplate::Cn => (CnText { d: doc }.render(), CnHtml { d: doc }.render()),
    };
    Ok(Rendered {
        subject: doc.subject(),
        text: text.map_err(Error::Render)?,
        html: html.map_err(Error::Render)?,
    })
}

/// The abuse contact configured for `host` (or a parent domain of it).
pub fn configured_contact(settings: &NoticeSettings, host: &str) -> Option<Recipient> {
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    let mut suffix = host.as_str();
    loop {
        if let Some((key, address)) = settings
            .abuse_contacts
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(suffix))
        {
            return Some(Recipient {
                address: address.clone(),
                source: format!("configured abuse contact for {key}"),
            });
        }
        suffix = suffix.split_once('.')?.1;
    }
}

/// The contact a `security.txt` (RFC 9116) names: its first `mailto:` contact, else its
/// first `https:` one. Reads at most the first 64 KiB and 200 lines.
pub fn security_txt_contact(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let contacts: Vec<&str> = text
        .lines()
        .take(200)
        .filter_map(|line| {
            let (field, value) = line.split_once(':')?;
            field
                .trim()
                .eq_ignore_ascii_case("contact")
                .then(|| value.trim())
        })
        .filter(|v| !v.is_empty() && !v.chars().any(char::is_control))
        .collect();
    if let Some(mail) = contacts.iter().find_map(|c| {
        c.get(..7)
            .filter(|p| p.eq_ignore_ascii_case("mailto:"))
            .map(|_| &c[7..])
    }) {
        return Some(mail.to_owned());
    }
    contacts
        .iter()
        .find(|c| c.starts_with("https://"))
        .map(|c| (*c).to_owned())
}

/// Where to send a notice about `site_url`'s host: the configured abuse contact, else the
/// site's `security.txt` contact (`/.well-known/security.txt`, then `/security.txt`), fetched
/// with `fetcher` (its address rules apply). `None` when neither is known.
pub async fn suggest_recipient(
    settings: &NoticeSettings,
    fetcher: Option<&crawler::Fetcher>,
    site_url: &url::Url,
) -> Option<Recipient> {
    let host = site_url.host_str()?;
    if let Some(r) = configured_contact(settings, host) {
        return Some(r);
    }
    let fetcher = fetcher.filter(|_| settings.security_txt)?;
    for path in ["/.well-known/security.txt", "/security.txt"] {
        let Ok(url) = site_url.join(path) else {
            continue;
        };
        let Ok(snapshot) = fetcher
            .fetch(&crawler::FetchRequest::get(url.clone()))
            .await
        else {
            continue;
        };
        let plain = snapshot
            .media_type()
            .is_some_and(|m| m.eq_ignore_ascii_case("text/plain"));
        if snapshot.status == 200
            && plain
            && let Some(address) = security_txt_contact(&snapshot.body)
        {
            return Some(Recipient {
                address,
                source: url.to_string(),
            });
        }
    }
    None
}

/// Drafts a notice of `case` with `template` and stores it: the recipient is `to`, else the
/// one [`suggest_recipient`] finds (none is fine: the notice says where to write it).
///
/// # Errors
/// [`Error::Notice`] for a bad recipient or an incomplete profile; a store conflict
/// ([`store::Error::Conflict`]) when the case is not confirmed; a database failure.
pub async fn create_notice(
    store: &Store,
    settings: &NoticeSettings,
    fetcher: Option<&crawler::Fetcher>,
    case: CaseId,
    template: NoticeTemplate,
    to: Option<&str>,
    actor: &str,
) -> Result<NoticeRecord> {
    let given = to.map(check_recipient).transpose()?;
    let settings = &crate::overrides::effective(store, settings).await?.notices;
    let facts = read_case(store, settings, case).await?;
    let recipient = match given {
        Some(address) => Some(Recipient {
            address,
            source: "given".to_owned(),
        }),
        None => match facts
            .matches
            .iter()
            .find_map(|m| url::Url::parse(&m.url).ok())
        {
            Some(url) => suggest_recipient(settings, fetcher, &url).await,
            None => None,
        },
    };
    let doc = compose(facts, settings, template, recipient, Utc::now());
    let rendered = render(&doc)?;
    store
        .create_notice(
            &NewNotice {
                case,
                template: template.as_str().to_owned(),
                recipient: doc.to().to_owned(),
                subject: rendered.subject,
                body_text: rendered.text,
                body_html: rendered.html,
            },
            actor,
        )
        .await
        .map_err(store_err("storing the notice"))
}

/// The most characters a notice's text may have when edited by hand.
pub const MAX_NOTICE_CHARS: usize = 200_000;

/// Changes draft `id`'s recipient (blank: none known yet) and text, written by hand; its
/// HTML version becomes that text, escaped, so both say the same. Audited as `actor`'s.
///
/// # Errors
/// [`Error::Notice`] for a bad recipient or an empty or too long text; a store conflict
/// once the notice was marked sent (what went out is kept as it went);
/// [`jobs::Error::is_not_found`] for an unknown notice.
pub async fn edit_draft(
    store: &Store,
    id: NoticeId,
    recipient: &str,
    text: &str,
    actor: &str,
) -> Result<NoticeRecord> {
    let recipient = if recipient.trim().is_empty() {
        String::new()
    } else {
        check_recipient(recipient)?
    };
    let text = text.replace("\r\n", "\n");
    if text.trim().is_empty() {
        return Err(Error::Notice(
            "the notice's text is empty: write what the notice says".into(),
        ));
    }
    if text.chars().count() > MAX_NOTICE_CHARS {
        return Err(Error::Notice(format!(
            "the notice's text is longer than {MAX_NOTICE_CHARS} characters"
        )));
    }
    let edit = store::NoticeDraftEdit {
        recipient,
        body_html: text_as_html(&text)?,
        body_text: text,
    };
    store
        .edit_notice_draft(id, &edit, actor)
        .await
        .map_err(store_err("editing the notice"))
}

/// A notice's text written by hand, as an HTML document of its own (askama escapes it).
#[derive(Template)]
#[template(
    source = "<!doctype html>\n<html><head><meta charset=\"utf-8\"></head><body>\n<pre style=\"white-space: pre-wrap\">{{ text }}</pre>\n</body></html>\n",
    ext = "html"
)]
struct EditedHtml<'a> {
    text: &'a str,
}

fn text_as_html(text: &str) -> Result<String> {
    EditedHtml { text }.render().map_err(Error::Render)
}

/// Records that notice `id` went out now: its case becomes `notice_sent` and the case's
/// re-checks start, the first after `rechecks.first_interval` (the schedule that runs due
/// re-checks is created if missing). The webhooks hear `notice.sent` as for a mailed notice.
///
/// # Errors
/// A store conflict when the notice was sent already or its case is no longer confirmed;
/// [`jobs::Error::is_not_found`] for an unknown notice; a database failure.
pub async fn mark_sent(
    store: &Store,
    rechecks: &RecheckSettings,
    id: NoticeId,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<NoticeRecord> {
    let first = now + rechecks.interval_after(now, now);
    let notice = store
        .mark_notice_sent(id, actor, now, first)
        .await
        .map_err(store_err("marking the notice sent"))?;
    ensure_recheck_schedule(store, rechecks).await?;
    emit_sent(store, &notice).await?;
    Ok(notice)
}

/// Queues the `notice.sent` event of a notice just marked sent, by hand or mailed.
pub(crate) async fn emit_sent(store: &Store, notice: &NoticeRecord) -> Result<()> {
    let data = serde_json::json!({
        "notice": notice.id.0, "case": notice.case_id.0, "recipient": notice.recipient,
        "message_id": notice.message_id, "sha256": notice.sent_sha256,
    });
    jobs::emit(store, jobs::Event::NoticeSent, data).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_text_is_escaped_in_its_html() {
        let html = text_as_html("权利人 <script>alert('x')</script> & co").unwrap();
        assert!(
            html.contains("权利人 &#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62; &#38; co"),
            "{html}"
        );
        assert!(!html.contains("<script>"));
    }

    #[test]
    fn security_txt_prefers_an_email_contact() {
        let body = b"# security.txt\nExpires: 2027-01-01T00:00:00Z\nContact: https://host.example/report\n\
                     contact: MAILTO:abuse@host.example\nContact: mailto:second@host.example\n";
        assert_eq!(
            security_txt_contact(body).as_deref(),
            Some("abuse@host.example")
        );
        assert_eq!(
            security_txt_contact(b"Contact: https://host.example/form\r\n").as_deref(),
            Some("https://host.example/form")
        );
        assert_eq!(security_txt_contact(b"Contact: ftp://x\n"), None);
        assert_eq!(security_txt_contact(b"\xff\xfe\x00garbage"), None);
        // A contact after the first 200 lines is not read.
        let mut long = "x\n".repeat(300);
        long.push_str("Contact: mailto:late@host.example\n");
        assert_eq!(security_txt_contact(long.as_bytes()), None);
    }

    #[test]
    fn configured_contacts_match_the_host_and_its_parents() {
        let mut settings = NoticeSettings::default();
        settings
            .abuse_contacts
            .insert("Pirate.example".into(), "abuse@hoster.example".into());
        let found = configured_contact(&settings, "www.pirate.example:8080").unwrap();
        assert_eq!(found.address, "abuse@hoster.example");
        assert!(configured_contact(&settings, "notpirate.example").is_none());
        assert!(configured_contact(&settings, "example").is_none());
    }

    #[test]
    fn recipients_are_an_email_or_a_form_url() {
        assert_eq!(
            check_recipient(" abuse@x.example ").unwrap(),
            "abuse@x.example"
        );
        assert!(check_recipient("https://x.example/dmca").is_ok());
        for bad in [
            "",
            "nobody",
            "a@b",
            "abuse@x.example\nBcc: y@z.example",
            "ftp://x",
        ] {
            assert!(check_recipient(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn templates_parse_by_name_and_the_profile_names_what_is_missing() {
        assert_eq!(NoticeTemplate::parse(" CN ").unwrap(), NoticeTemplate::Cn);
        let err = NoticeTemplate::parse("gdpr").unwrap_err().to_string();
        assert!(err.contains("dmca or cn"), "{err}");
        let holder = RightsHolder {
            name: "某出版社".into(),
            email: "legal@press.example".into(),
            ..RightsHolder::default()
        };
        assert_eq!(
            holder.missing(),
            [
                "notices.rights_holder.address",
                "notices.rights_holder.signatory"
            ]
        );
    }
}

/// Where a notice goes, or what to do when no address is known.
pub fn recipient_label(n: &NoticeRecord) -> &str {
    if n.recipient.is_empty() {
        "(no address known: fill it in)"
    } else {
        &n.recipient
    }
}

/// Notices as `notices list` prints them, newest first, or a hint when there are none.
#[derive(Debug)]
pub struct NoticeTable<'a>(pub &'a [NoticeRecord]);

impl fmt::Display for NoticeTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            writeln!(
                f,
                "no notices yet: draft one with `copyhound notices create CASE`"
            )?;
        }
        for n in self.0 {
            let sent = n.sent_at.map_or_else(
                || "draft".to_owned(),
                |t| format!("sent {}", t.format("%Y-%m-%d %H:%M UTC")),
            );
            writeln!(
                f,
                "{:>5}  case {:<5} {:<5} {:<22} to {}  {}",
                n.id,
                n.case_id,
                n.template,
                sent,
                recipient_label(n),
                n.subject
            )?;
        }
        Ok(())
    }
}

/// What `notices create` says of a notice it drafted: where it goes and what to do next.
pub fn drafted_text(n: &NoticeRecord) -> String {
    format!(
        "notice {id} drafted from case {} ({} template), to {}\n\
         read it with `copyhound notices show {id}`; once sent, run `copyhound notices \
         mark-sent {id}`\n",
        n.case_id,
        n.template,
        recipient_label(n),
        id = n.id,
    )
}
