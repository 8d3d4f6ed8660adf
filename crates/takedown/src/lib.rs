//! Takedown notices: drafted from a confirmed case in the rights holder's name ([`notices`]),
//! over the settings an admin changes in the UI ([`overrides`]: the rights holder, abuse
//! contacts, the template, the time zone shown), and mailed with the case's evidence
//! package, recorded before and after so nothing is sent twice ([`sending`]).
//!
//! It may use `jobs`, `casework` (the case, its re-checks started by a sent notice),
//! `evidence` (the package attached), `notification` (the SMTP client), `accounts` (a
//! message's random id) and the stage crates below; the job loop sits above.
//!
//! ```
//! let settings = takedown::NoticeSettings::default();
//! assert_eq!(settings.template, "dmca");
//! ```

pub mod notice_settings;
pub mod notices;
pub mod overrides;
pub mod sending;

pub use notice_settings::{NoticeSettings, NoticeTemplate, RightsHolder};
