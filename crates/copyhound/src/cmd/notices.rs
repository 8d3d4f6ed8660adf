//! `copyhound notices`: takedown notices drafted from confirmed cases, mailed through the
//! configured SMTP server (`send`) or marked sent by hand, and the re-checks that follow
//! until every copy is gone.

use anyhow::{Context, Result};
use chrono::Utc;
use clap::{Subcommand, ValueEnum};
use store::{CaseId, NoticeId, Notices, Rechecks, Store};
use takedown::{NoticeTemplate, notices};

use super::outln;
use settings::Settings;

/// `notices` subcommands.
#[derive(Debug, Subcommand)]
pub enum NoticesCommand {
    /// Draft a notice from a confirmed case, with the rights holder's profile from the
    /// settings (`[notices.rights_holder]`).
    Create {
        /// The case (`cases list --status confirmed`).
        case: CaseId,
        /// dmca (17 U.S.C. § 512(c)(3), English) or cn (《信息网络传播权保护条例》第十四条)
        /// [default: notices.template].
        #[arg(long)]
        template: Option<String>,
        /// Where it goes: an email address or a takedown form's URL (default: the configured
        /// abuse contact of the host, else the site's security.txt contact).
        #[arg(long, value_name = "ADDRESS")]
        to: Option<String>,
        /// Print the stored notice as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The notices, newest first.
    List {
        /// Only this case's.
        #[arg(long, value_name = "ID")]
        case: Option<CaseId>,
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// A notice as it was drafted, to send.
    Show {
        /// The notice.
        id: NoticeId,
        /// text, or an HTML document.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Mail a notice to its recipient from the rights holder's address, with the case's
    /// evidence package, through the SMTP server of notify.smtp; once the server accepts it
    /// the notice is marked sent (its Message-ID and SHA-256 recorded) and re-checks start.
    Send {
        /// The notice.
        id: NoticeId,
        /// Send it although an earlier attempt was cut off with no outcome recorded (look
        /// in the sent mail first: the server may have it).
        #[arg(long)]
        again: bool,
        /// Print the result as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Record that a notice went out another way (a web form, a mail client): its case
    /// becomes notice_sent and re-checks start.
    MarkSent {
        /// The notice.
        id: NoticeId,
    },
    /// Re-check a case's copies now (the workers do it on schedule).
    Recheck {
        /// The case.
        case: CaseId,
        /// Print the result as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// How `notices show` prints.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// Plain text with its To and Subject lines.
    Text,
    /// An HTML document.
    Html,
}

/// Runs a `notices` subcommand.
pub async fn run(store: &Store, command: NoticesCommand, settings: &Settings) -> Result<()> {
    match command {
        NoticesCommand::Create {
            case,
            template,
            to,
            json,
        } => {
            let template =
                NoticeTemplate::parse(template.as_deref().unwrap_or(&settings.notices.template))?;
            let fetcher = crawler::Fetcher::new(settings.crawler.fetch.clone())
                .context("while setting up the fetcher for security.txt")?;
            let notice = notices::create_notice(
                store,
                &settings.notices,
                Some(&fetcher),
                case,
                template,
                to.as_deref(),
                "cli",
            )
            .await
            .with_context(|| format!("while drafting a notice of case {case}"))?;
            if json {
                outln!("{}", serde_json::to_string(&notice)?);
            } else {
                super::write_stdout(&notices::drafted_text(&notice))?;
            }
            Ok(())
        }
        NoticesCommand::List { case, json } => {
            let list = store.notices(case).await?;
            if json {
                outln!("{}", serde_json::to_string(&list)?);
            } else {
                super::write_stdout(&notices::NoticeTable(&list).to_string())?;
            }
            Ok(())
        }
        NoticesCommand::Show { id, format } => {
            let notice = store.notice(id).await.with_context(|| {
                format!("while reading notice {id} (see `copyhound notices list`)")
            })?;
            match format {
                Format::Text => super::write_stdout(&notice.body_text),
                Format::Html => super::write_stdout(&notice.body_html),
            }
        }
        NoticesCommand::Send { id, again, json } => {
            let mailer = notification::Mailer::new(&settings.notify.smtp)?;
            let sent = takedown::sending::send_notice(
                store,
                takedown::sending::SendSettings {
                    notices: &settings.notices,
                    notify: &settings.notify,
                    rechecks: &settings.rechecks,
                },
                &mailer,
                id,
                again,
                "cli",
            )
            .await
            .with_context(|| format!("while sending notice {id}"))?;
            if json {
                outln!("{}", serde_json::to_string(&sent)?);
            } else {
                super::write_stdout(&takedown::sending::sent_text(&sent))?;
            }
            Ok(())
        }
        NoticesCommand::MarkSent { id } => {
            let notice = notices::mark_sent(store, &settings.rechecks, id, "cli", Utc::now())
                .await
                .with_context(|| format!("while marking notice {id} sent"))?;
            let first = store
                .case_recheck(notice.case_id)
                .await?
                .and_then(|r| r.next_at)
                .map_or_else(String::new, |t| {
                    format!(" from {}", t.format("%Y-%m-%d %H:%M UTC"))
                });
            outln!(
                "notice {} marked sent; case {} is notice_sent and its copies are re-checked{first}",
                notice.id,
                notice.case_id,
            );
            Ok(())
        }
        NoticesCommand::Recheck { case, json } => {
            let rechecker = settings.rechecker(store)?;
            let report = rechecker
                .recheck(case, Utc::now())
                .await
                .with_context(|| format!("while re-checking case {case}"))?;
            if json {
                outln!("{}", serde_json::to_string(&report)?);
            } else {
                super::write_stdout(&format!("\n{report}"))?;
            }
            Ok(())
        }
    }
}
