//! Mail over SMTP (`[notify.smtp]`): the one place copyhound talks to a mail server, for
//! notices (`takedown::sending`) and `copyhound notify test`.
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

use jobs::{Error, NotSent, Result};

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

/// What the server said when it took a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The server's reply (`250 2.0.0 Ok: queued as 4F2A`).
    pub reply: String,
    /// SHA-256 of the message as the server received it (its bytes and the final line end),
    /// lower-case hex.
    pub sha256: String,
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
                    jobs::chain(&e)
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
                    jobs::chain(&e)
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

/// `s` safe inside HTML text and attribute values.
pub fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
