//! Mail over SMTP (`[notify.smtp]`): the one place copyhound talks to a mail server, for
//! notices ([`crate::sending`]) and `copyhound notify test`.
//!
//! [`Mailer`] wraps lettre's async SMTP client: plain, STARTTLS (required, never
//! opportunistic) or TLS from the first byte, rustls with the system's roots plus an optional
//! `ca_certificates`, and one deadline (`timeout`) over the whole exchange: lettre's own timeout covers
//! only the connect, so a server that accepts the connection and never answers would hold a
//! send forever. A message is formatted once and the same bytes are hashed and sent
//! ([`Mailer::send`]), so the SHA-256 recorded is of what the server received.
//!
//! Whether a message went out is the server's final reply to it: a send that fails anywhere
//! (refused, timed out, connection dropped) is reported as not sent. A server that took the
//! message and then failed to answer is the one case that can send it twice; a notice keeps
//! its `Message-ID` across attempts so the copies say they are one message.

use std::path::PathBuf;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::error::{Error, Result};

/// How the connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmtpTls {
    /// No TLS: only for a relay on the same host or network (port 25).
    None,
    /// Plain at first, then `STARTTLS`, which the server must offer (port 587).
    Starttls,
    /// TLS from the first byte (port 465).
    Tls,
}

/// The SMTP server (`[notify.smtp]`). With no `host`, copyhound mails nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SmtpSettings {
    /// The server's host name (also the name its certificate must carry); empty: no mail.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// `none`, `starttls` or `tls`.
    pub tls: SmtpTls,
    /// The user to log in as; empty: no login.
    pub user: String,
    /// The password, a secret (`COPYHOUND_NOTIFY__SMTP__PASSWORD_FILE`).
    pub password: Option<bounds::Secret>,
    /// The sender of alerts and test mail, and the envelope sender of notices (which are
    /// from the rights holder): `copyhound <alerts@press.example>`.
    pub from: String,
    /// How long one whole exchange with the server may take, connection to final reply.
    #[serde(with = "bounds::duration_serde")]
    pub timeout: Duration,
    /// A PEM file of certificates trusted besides the system's (a company's own CA).
    pub ca_certificates: Option<PathBuf>,
}

impl Default for SmtpSettings {
    fn default() -> Self {
        SmtpSettings {
            host: String::new(),
            port: 587,
            tls: SmtpTls::Starttls,
            user: String::new(),
            password: None,
            from: String::new(),
            timeout: Duration::from_secs(30),
            ca_certificates: None,
        }
    }
}

impl SmtpSettings {
    /// Whether a server is configured.
    pub fn is_configured(&self) -> bool {
        !self.host.trim().is_empty()
    }

    /// Checks the port, the timeout and the sender.
    ///
    /// # Errors
    /// The first value out of range, by its key.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        if self.port == 0 {
            return Err(bounds::OutOfRange::new(
                "port",
                "0",
                "must be a port, 1 to 65535",
            ));
        }
        if self.timeout.is_zero() {
            return Err(bounds::OutOfRange::new(
                "timeout",
                "0s",
                "must be longer than zero",
            ));
        }
        if !self.from.trim().is_empty() && self.from.parse::<Mailbox>().is_err() {
            return Err(bounds::OutOfRange::new(
                "from",
                &self.from,
                "must be an address (alerts@press.example) or a name and an address \
                 (copyhound <alerts@press.example>)",
            ));
        }
        if self.is_configured() && self.from.trim().is_empty() {
            return Err(bounds::OutOfRange::new(
                "from",
                "\"\"",
                "must be set when notify.smtp.host is: mail needs a sender",
            ));
        }
        Ok(())
    }
}

/// Mail settings (`[notify]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NotifySettings {
    /// The SMTP server.
    pub smtp: SmtpSettings,
    /// The largest evidence package (zipped) attached to a notice, bytes; a larger one is
    /// linked instead (see `share_dir`).
    pub max_attachment_bytes: u64,
    /// Where a package too large to attach is written for the recipient to download; the
    /// folder must be served at `share_url`. Unset: such a notice is not mailed.
    pub share_dir: Option<PathBuf>,
    /// The public URL `share_dir` is served at (`https://files.press.example/evidence`).
    pub share_url: String,
    /// Signed webhooks (`[[notify.webhooks]]`), each with its URL, secret and events.
    pub webhooks: Vec<crate::webhooks::WebhookSettings>,
    /// Where the admin UI is reached (`https://copyhound.press.example`): alerts link to a
    /// case under it. Empty: alerts name the case without a link.
    pub public_url: String,
    /// When the daily digests of alerts are mailed (cron, UTC).
    pub digest_cron: String,
}

impl Default for NotifySettings {
    fn default() -> Self {
        NotifySettings {
            smtp: SmtpSettings::default(),
            // Most mail servers refuse messages over 20-25 MB, and base64 adds a third.
            max_attachment_bytes: 10 * 1024 * 1024,
            share_dir: None,
            share_url: String::new(),
            webhooks: Vec::new(),
            public_url: String::new(),
            digest_cron: "0 7 * * *".to_owned(),
        }
    }
}

impl NotifySettings {
    /// Checks the SMTP settings, the share folder's URL and each webhook.
    ///
    /// # Errors
    /// The first value out of range, by its key.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        self.smtp.validate().map_err(|e| e.in_section("smtp"))?;
        let url_ok = self.share_url.is_empty()
            || url::Url::parse(&self.share_url)
                .is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.host().is_some());
        if !url_ok {
            return Err(bounds::OutOfRange::new(
                "share_url",
                &self.share_url,
                "must be an http(s) URL",
            ));
        }
        if self.share_dir.is_some() == self.share_url.is_empty() {
            return Err(bounds::OutOfRange::new(
                "share_url",
                &self.share_url,
                "share_dir and share_url are set together: the folder and where it is served",
            ));
        }
        let public_ok = self.public_url.is_empty()
            || url::Url::parse(&self.public_url)
                .is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.host().is_some());
        if !public_ok {
            return Err(bounds::OutOfRange::new(
                "public_url",
                &self.public_url,
                "must be the admin UI's http(s) URL",
            ));
        }
        for (i, hook) in self.webhooks.iter().enumerate() {
            hook.validate()
                .map_err(|e| e.in_section(&format!("webhooks[{i}]")))?;
        }
        Ok(())
    }
}

/// What the server said when it took a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The server's reply (`250 2.0.0 Ok: queued as 4F2A`).
    pub reply: String,
    /// SHA-256 of the message as the server received it (its bytes and the final line end),
    /// lower-case hex.
    pub sha256: String,
}

/// Why a message did not go out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct NotSent {
    /// In words, with the server's reply when there was one.
    pub reason: String,
    /// The server refused for good (a 5xx reply): sending again will not help.
    pub permanent: bool,
}

/// A connection to the configured SMTP server, opened per message.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    timeout: Duration,
    from: Mailbox,
    server: String,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// A mailer for `settings`.
    ///
    /// # Errors
    /// [`Error::Notice`] when no server is configured, the sender is not an address, or the
    /// `ca_certificates` cannot be read as PEM certificates.
    pub fn new(settings: &SmtpSettings) -> Result<Self> {
        if !settings.is_configured() {
            return Err(Error::Notice(
                "no SMTP server is configured: set notify.smtp.host, port, tls and from (or \
                 COPYHOUND_NOTIFY__SMTP__HOST ...)"
                    .into(),
            ));
        }
        let from: Mailbox = settings.from.parse().map_err(|e| {
            Error::Notice(format!(
                "notify.smtp.from {:?} is not an address: {e}",
                settings.from
            ))
        })?;
        let host = settings.host.trim();
        let mut builder =
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host).port(settings.port);
        if settings.tls != SmtpTls::None {
            let mut params = TlsParameters::builder(host.to_owned());
            if let Some(path) = &settings.ca_certificates {
                let pem = std::fs::read(path).map_err(|e| {
                    Error::Notice(format!(
                        "notify.smtp.ca_certificates {} cannot be read: {e}",
                        path.display()
                    ))
                })?;
                let cert = Certificate::from_pem(&pem).map_err(|e| {
                    Error::Notice(format!(
                        "notify.smtp.ca_certificates {} is not a PEM certificate: {e}",
                        path.display()
                    ))
                })?;
                params = params.add_root_certificate(cert);
            }
            let params = params
                .build()
                .map_err(|e| Error::Notice(format!("cannot set up TLS for {host}: {e}")))?;
            builder = builder.tls(match settings.tls {
                SmtpTls::Starttls => Tls::Required(params),
                _ => Tls::Wrapper(params),
            });
        }
        if !settings.user.is_empty() {
            let password = settings
                .password
                .as_ref()
                .map(|p| p.expose().to_owned())
                .unwrap_or_default();
            builder = builder.credentials(Credentials::new(settings.user.clone(), password));
        }
        Ok(Mailer {
            transport: builder.timeout(Some(settings.timeout)).build(),
            timeout: settings.timeout,
            from,
            server: format!("{host}:{}", settings.port),
        })
    }

    /// The configured sender.
    pub fn from(&self) -> &Mailbox {
        &self.from
    }

    /// Sends `message` as formatted once: the bytes hashed are the bytes sent.
    ///
    /// # Errors
    /// [`NotSent`] when the server refused it, did not answer within the timeout, or the
    /// connection failed or dropped before the server's final reply.
    pub async fn send(&self, message: &Message) -> std::result::Result<Accepted, NotSent> {
        let bytes = message.formatted();
        // What the server receives is these bytes and the line end lettre writes before the
        // final `.` line: the message as a server (or a mail client saving it as .eml) keeps
        // it, so that is what is hashed.
        let mut digest = sha2::Sha256::new();
        digest.update(&bytes);
        digest.update(b"\r\n");
        let sha256 = hex(&digest.finalize());
        let sent = tokio::time::timeout(
            self.timeout,
            self.transport.send_raw(message.envelope(), &bytes),
        )
        .await;
        match sent {
            Ok(Ok(response)) => Ok(Accepted {
                reply: format!(
                    "{} {}",
                    response.code(),
                    response.message().collect::<Vec<_>>().join(" ")
                ),
                sha256,
            }),
            Ok(Err(e)) => Err(NotSent {
                reason: format!(
                    "the SMTP server {} did not take the message: {}",
                    self.server,
                    crate::job::chain(&e)
                ),
                permanent: e.is_permanent(),
            }),
            Err(_) => Err(self.no_answer()),
        }
    }

    /// Opens a connection to the server the way a send does (TLS, login) and closes it,
    /// sending nothing (`doctor`).
    ///
    /// # Errors
    /// [`NotSent`] naming what failed: the connection, TLS, the login, or no answer within
    /// the timeout.
    pub async fn check(&self) -> std::result::Result<(), NotSent> {
        match tokio::time::timeout(self.timeout, self.transport.test_connection()).await {
            Ok(Ok(true)) => Ok(()),
            Ok(Ok(false)) => Err(NotSent {
                reason: format!("the SMTP server {} closed the connection", self.server),
                permanent: false,
            }),
            Ok(Err(e)) => Err(NotSent {
                reason: format!(
                    "cannot talk to the SMTP server {}: {}",
                    self.server,
                    crate::job::chain(&e)
                ),
                permanent: e.is_permanent(),
            }),
            Err(_) => Err(self.no_answer()),
        }
    }

    /// The server, `host:port`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The server let the timeout pass.
    fn no_answer(&self) -> NotSent {
        NotSent {
            reason: format!(
                "the SMTP server {} did not answer within {:?} (notify.smtp.timeout)",
                self.server, self.timeout
            ),
            permanent: false,
        }
    }

    /// Mails a short test message from the configured sender to `to` (`notify test`).
    ///
    /// # Errors
    /// [`Error::Notice`] for an address that is not one; [`Error::Mail`] when the server did
    /// not take it.
    pub async fn send_test(&self, to: &str) -> Result<Accepted> {
        let to: Mailbox = to
            .parse()
            .map_err(|e| Error::Notice(format!("{to:?} is not an email address: {e}")))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject("copyhound: test message")
            .header(lettre::message::header::ContentType::TEXT_PLAIN)
            .body(format!(
                "This is a test message from copyhound, sent through {}.\n\
                 If you read it, notices and alerts can be mailed.\n",
                self.server
            ))
            .map_err(|e| Error::Notice(format!("cannot build the test message: {e}")))?;
        self.send(&message).await.map_err(Error::Mail)
    }
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_need_a_sender_with_a_host_and_a_shared_folder_with_its_url() {
        let mut s = NotifySettings::default();
        s.validate().unwrap();
        s.smtp.host = "smtp.press.example".into();
        let err = s.validate().unwrap_err().to_string();
        assert!(err.contains("smtp.from"), "{err}");
        s.smtp.from = "not an address".into();
        assert!(s.validate().is_err());
        s.smtp.from = "copyhound <alerts@press.example>".into();
        s.validate().unwrap();
        s.share_url = "https://files.press.example/evidence".into();
        let err = s.validate().unwrap_err().to_string();
        assert!(err.contains("share_dir"), "{err}");
        s.share_dir = Some(PathBuf::from("/srv/evidence"));
        s.validate().unwrap();
        s.share_url = "ftp://files.press.example/".into();
        assert!(s.validate().is_err());
    }

    #[test]
    fn the_password_never_shows() {
        let s = SmtpSettings {
            password: Some(bounds::Secret::new("hunter2-hunter2")),
            ..SmtpSettings::default()
        };
        let shown = format!("{s:?} {}", serde_json::to_string(&s).unwrap());
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn no_host_is_no_mailer() {
        let err = Mailer::new(&SmtpSettings::default()).unwrap_err();
        assert!(err.to_string().contains("notify.smtp.host"), "{err}");
    }
}
