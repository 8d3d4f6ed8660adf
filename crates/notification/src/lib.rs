//! Telling people what happened: mail over SMTP, each user's alerts of events and signed
//! webhooks. Where something happens, the domains queue a `jobs::Job::Event` ([`jobs::emit`]);
//! `pipeline`'s handler hands each event to [`alerts::on_event`] and [`webhooks::fan_out`],
//! and runs their deliveries.
//!
//! - [`mail`]: the one SMTP client ([`Mailer`]); a notice's mail is built by
//!   `takedown::sending` above. [`NotifySettings`]: the `[notify]` settings.
//! - [`alerts`]: each user's alerts by mail, at once or in a daily digest, in their language.
//! - [`webhooks`]: signed webhooks, configured or added by admins, delivered through the
//!   crawler's fetcher and address rules.
//!
//! It may use `jobs`, `store` and `crawler` (its fetcher and address rules); nothing of the
//! domains that emit events.
//!
//! ```
//! let settings = notification::NotifySettings::default();
//! assert!(settings.webhooks.is_empty());
//! ```

pub mod alerts;
pub mod mail;
mod notify_settings;
pub mod webhooks;

pub use mail::{Mailer, SmtpSettings, SmtpTls};
pub use notify_settings::NotifySettings;
