//! The `[notify]` settings: the SMTP server, where a package too large to mail is shared, the
//! webhooks, the admin UI's public URL alerts link to, and when digests go out.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::mail::SmtpSettings;
use crate::webhooks::WebhookSettings;

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
    pub webhooks: Vec<WebhookSettings>,
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
}
