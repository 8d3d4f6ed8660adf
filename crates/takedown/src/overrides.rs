//! The settings an admin changes in the UI, over the settings file's: the rights holder's
//! profile, the abuse contacts, the default notice template and the time zone times are
//! shown in. The file (and `COPYHOUND_NOTICES__…` variables) gives the first values; a value
//! saved in the UI overrides its key (`store::SettingOverrides`), and clearing it goes back to
//! the file's. Every save is checked here and audited by the store in its transaction.
//!
//! Whoever drafts a notice (the UI, the API, `notices create`) reads the effective values
//! through [`effective`], which [`crate::notices::create_notice`] calls itself.
//!
//! ```no_run
//! # async fn demo(store: store::Store, file: takedown::NoticeSettings) -> jobs::Result<()> {
//! let form = [("notices.time_zone".to_owned(), "Asia/Shanghai".to_owned())];
//! takedown::overrides::save(&store, &file, &form, "alice").await?;
//! let now = takedown::overrides::effective(&store, &file).await?;
//! assert_eq!(now.notices.time_zone, "Asia/Shanghai");
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use jobs::{Error, Problem, Refusal, Result, store_err};
use serde::Serialize;
use store::{SettingChange, SettingOverride, SettingOverrides, Store};

use crate::notice_settings::{NoticeSettings, NoticeTemplate, check_recipient, time_zone};

/// Every key the UI may change, in the order the settings page shows them.
pub const KEYS: [&str; 8] = [
    "notices.rights_holder.name",
    "notices.rights_holder.address",
    "notices.rights_holder.email",
    "notices.rights_holder.phone",
    "notices.rights_holder.signatory",
    "notices.template",
    "notices.abuse_contacts",
    "notices.time_zone",
];

/// The most characters a one-line value may have.
const MAX_CHARS: usize = 500;
/// The most abuse contacts a save may list.
const MAX_CONTACTS: usize = 1000;

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Source {
    /// The settings file (or its environment variables, or the built-in default).
    File,
    /// Saved in the UI.
    Saved {
        /// By whom.
        by: String,
        /// When.
        at: DateTime<Utc>,
    },
}

/// One setting as the settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field {
    /// Its key.
    pub key: &'static str,
    /// The value in effect, as text (abuse contacts one `host = address` a line).
    pub value: String,
    /// The settings file's value, what clearing the field goes back to.
    pub file_value: String,
    /// Where [`Field::value`] comes from.
    pub source: Source,
}

/// The settings in effect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effective {
    /// The notice settings with every saved value applied.
    pub notices: NoticeSettings,
    /// Each key of [`KEYS`] with its value and where it comes from.
    pub fields: Vec<Field>,
}

impl Effective {
    /// The field of `key`.
    pub fn field(&self, key: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.key == key)
    }
}

/// Reads the saved values and applies them over `file`.
///
/// # Errors
/// A database failure.
pub async fn effective(store: &Store, file: &NoticeSettings) -> Result<Effective> {
    let saved = store
        .setting_overrides()
        .await
        .map_err(store_err("reading the settings saved in the UI"))?;
    Ok(apply(file, &saved))
}

/// `file` with `saved` applied. A saved value this build refuses (a time zone another tz
/// database knew) is skipped with a warning: the file's value stands.
pub fn apply(file: &NoticeSettings, saved: &[SettingOverride]) -> Effective {
    let mut notices = file.clone();
    let mut sources: BTreeMap<&str, Source> = BTreeMap::new();
    for o in saved {
        let Some(key) = KEYS.iter().copied().find(|k| *k == o.key) else {
            tracing::warn!(key = %o.key, "a saved setting this build does not know is ignored");
            continue;
        };
        match check(key, &o.value) {
            Ok(value) => {
                set(&mut notices, key, value);
                sources.insert(
                    key,
                    Source::Saved {
                        by: o.updated_by.clone(),
                        at: o.updated_at,
                    },
                );
            }
            Err(refusal) => {
                tracing::warn!(key, problem = %refusal.message, "saved setting ignored")
            }
        }
    }
    let fields = KEYS
        .iter()
        .map(|&key| Field {
            key,
            value: text_of(&notices, key),
            file_value: text_of(file, key),
            source: sources.remove(key).unwrap_or(Source::File),
        })
        .collect();
    Effective { notices, fields }
}

/// The value of `key` in `settings` as the form shows it.
pub fn text_of(settings: &NoticeSettings, key: &str) -> String {
    let holder = &settings.rights_holder;
    match key {
        "notices.rights_holder.name" => holder.name.clone(),
        "notices.rights_holder.address" => holder.address.clone(),
        "notices.rights_holder.email" => holder.email.clone(),
        "notices.rights_holder.phone" => holder.phone.clone(),
        "notices.rights_holder.signatory" => holder.signatory.clone(),
        "notices.template" => settings.template.clone(),
        "notices.abuse_contacts" => settings
            .abuse_contacts
            .iter()
            .map(|(host, address)| format!("{host} = {address}\n"))
            .collect(),
        "notices.time_zone" => settings.time_zone.clone(),
        _ => String::new(),
    }
}

/// Sets `key` of `settings` to a value [`check`] returned.
fn set(settings: &mut NoticeSettings, key: &str, value: String) {
    let holder = &mut settings.rights_holder;
    match key {
        "notices.rights_holder.name" => holder.name = value,
        "notices.rights_holder.address" => holder.address = value,
        "notices.rights_holder.email" => holder.email = value,
        "notices.rights_holder.phone" => holder.phone = value,
        "notices.rights_holder.signatory" => holder.signatory = value,
        "notices.template" => settings.template = value,
        "notices.abuse_contacts" => settings.abuse_contacts = contacts(&value),
        "notices.time_zone" => settings.time_zone = value,
        _ => {}
    }
}

/// `host = address` lines as a map (lines [`check`] passed).
fn contacts(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(host, address)| (host.trim().to_owned(), address.trim().to_owned()))
        .collect()
}

/// `value` of `key` checked and normalised (trimmed; a template or time zone by its
/// canonical name; contacts one `host = address` a line, hosts lower-case, sorted).
///
/// # Errors
/// A [`Refusal`] saying what is wrong.
pub fn check(key: &str, value: &str) -> std::result::Result<String, Refusal> {
    let value = value.trim();
    let refuse = |problem, message: String| Err(Refusal::new(key, problem, message));
    // Line breaks only between contacts; no bidi override anywhere (a name that reads
    // backwards on the notice).
    let lines_ok = |text: &str| {
        text.lines()
            .all(|l| bounds::text::strip_controls(l).as_ref() == l)
    };
    let one_line = !value.contains(['\n', '\r']);
    if !lines_ok(value) || (key != "notices.abuse_contacts" && !one_line) {
        return refuse(
            Problem::ControlCharacter,
            "one line without control characters or bidi overrides".into(),
        );
    }
    if key != "notices.abuse_contacts" && value.chars().count() > MAX_CHARS {
        return refuse(Problem::TooLong, format!("at most {MAX_CHARS} characters"));
    }
    if value.is_empty() && key != "notices.template" && key != "notices.time_zone" {
        return Ok(String::new());
    }
    match key {
        "notices.rights_holder.name"
        | "notices.rights_holder.address"
        | "notices.rights_holder.signatory" => Ok(value.to_owned()),
        "notices.rights_holder.email" => match check_recipient(value) {
            Ok(v) if !v.starts_with("http") => Ok(v),
            _ => refuse(
                Problem::NotAnEmail,
                format!("{value:?} is not an email address (legal@press.example)"),
            ),
        },
        "notices.rights_holder.phone" => {
            let digits = value.chars().filter(char::is_ascii_digit).count();
            let allowed = |c: char| c.is_ascii_digit() || " +-().".contains(c);
            if digits >= 3 && value.chars().all(allowed) {
                Ok(value.to_owned())
            } else {
                refuse(
                    Problem::NotAPhoneNumber,
                    format!("{value:?} is not a telephone number (+86 10 1234 5678)"),
                )
            }
        }
        "notices.template" => match NoticeTemplate::parse(value) {
            Ok(t) => Ok(t.as_str().to_owned()),
            Err(_) => refuse(
                Problem::UnknownTemplate,
                format!("unknown template {value:?}: dmca or cn"),
            ),
        },
        "notices.time_zone" => {
            time_zone(value).map_err(|message| Refusal::new(key, Problem::UnknownTimeZone, message))
        }
        "notices.abuse_contacts" => {
            check_contacts(value).map_err(|message| Refusal::new(key, Problem::BadContact, message))
        }
        other => refuse(
            Problem::UnknownKey,
            format!(
                "{other} cannot be changed here; the keys are {}",
                KEYS.join(", ")
            ),
        ),
    }
}

fn check_contacts(text: &str) -> std::result::Result<String, String> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if out.len() == MAX_CONTACTS {
            return Err(format!("at most {MAX_CONTACTS} contacts"));
        }
        let bad = || format!("line {}: write host = address, not {line:?}", n + 1);
        let (host, address) = line.split_once('=').ok_or_else(bad)?;
        let host = store::normalize_domain(host).map_err(|_| bad())?;
        let address = check_recipient(address).map_err(|e| format!("line {}: {e}", n + 1))?;
        out.insert(host, address);
    }
    Ok(out
        .into_iter()
        .map(|(host, address)| format!("{host} = {address}\n"))
        .collect())
}

/// Checks the values of a settings form (key → text as typed; keys not given keep their
/// value) and saves them: a value equal to the file's, or blank, clears the key's override.
/// Returns the keys that changed; audited as `actor`'s.
///
/// # Errors
/// [`Error::Settings`] listing every refused value (nothing is saved then); a database
/// failure.
pub async fn save(
    store: &Store,
    file: &NoticeSettings,
    form: &[(String, String)],
    actor: &str,
) -> Result<Vec<String>> {
    let mut changes = Vec::new();
    let mut refusals = Vec::new();
    for (key, typed) in form {
        match check(key, typed) {
            Ok(value) => {
                let file_value = check(key, &text_of(file, key)).unwrap_or_default();
                let cleared = value.is_empty() || value == file_value;
                changes.push(SettingChange {
                    key: key.clone(),
                    value: (!cleared).then_some(value),
                });
            }
            Err(refusal) => refusals.push(refusal),
        }
    }
    if !refusals.is_empty() {
        return Err(Error::Settings(refusals));
    }
    store
        .save_setting_overrides(&changes, actor)
        .await
        .map_err(store_err("saving the settings"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notice_settings::{local_date, local_time, zone};

    fn saved(key: &str, value: &str) -> SettingOverride {
        SettingOverride {
            key: key.into(),
            value: value.into(),
            updated_at: Utc::now(),
            updated_by: "alice".into(),
        }
    }

    #[test]
    fn saved_values_override_the_file_and_say_so() {
        let mut file = NoticeSettings::default();
        file.rights_holder.name = "File Press".into();
        file.rights_holder.email = "legal@file.example".into();
        let effective = apply(
            &file,
            &[
                saved("notices.rights_holder.name", "示例出版社"),
                saved("notices.time_zone", "Asia/Shanghai"),
                saved(
                    "notices.abuse_contacts",
                    "pirate.example = abuse@host.example\n",
                ),
                // From another build: skipped, the file's value stands.
                saved("notices.template", "gdpr"),
                saved("no.such.key", "x"),
            ],
        );
        let n = &effective.notices;
        assert_eq!(n.rights_holder.name, "示例出版社");
        assert_eq!(n.rights_holder.email, "legal@file.example");
        assert_eq!(n.time_zone, "Asia/Shanghai");
        assert_eq!(n.template, "dmca");
        assert_eq!(n.abuse_contacts["pirate.example"], "abuse@host.example");
        let name = effective.field("notices.rights_holder.name").unwrap();
        assert!(matches!(&name.source, Source::Saved { by, .. } if by == "alice"));
        assert_eq!(name.file_value, "File Press");
        let email = effective.field("notices.rights_holder.email").unwrap();
        assert_eq!(email.source, Source::File);
        assert_eq!(
            effective.field("notices.template").unwrap().source,
            Source::File
        );
        assert_eq!(effective.fields.len(), KEYS.len());
    }

    #[test]
    fn times_are_written_in_the_zone_with_its_offset() {
        let t = DateTime::parse_from_rfc3339("2026-11-27T16:05:09Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(local_time(t, &zone("UTC"), false), "2026-11-27 16:05 UTC");
        assert_eq!(
            local_time(t, &zone("Asia/Shanghai"), true),
            "2026-11-28 00:05:09 +08:00"
        );
        assert_eq!(local_date(t, &zone("Asia/Shanghai")), "2026-11-28");
        assert_eq!(
            local_time(t, &zone("America/New_York"), false),
            "2026-11-27 11:05 -05:00"
        );
        // An unknown name falls back to UTC rather than failing a page.
        assert_eq!(
            local_time(t, &zone("Mars/Olympus"), false),
            "2026-11-27 16:05 UTC"
        );
    }

    #[test]
    fn values_are_checked_and_normalised() {
        assert_eq!(
            check("notices.time_zone", " asia/shanghai ").unwrap(),
            "Asia/Shanghai"
        );
        assert_eq!(check("notices.time_zone", "UTC").unwrap(), "UTC");
        assert_eq!(check("notices.template", "CN").unwrap(), "cn");
        assert_eq!(
            check(
                "notices.abuse_contacts",
                "# hosts\nWWW.Pirate.example = abuse@h.example\n\nb.example=https://b.example/dmca\n"
            )
            .unwrap(),
            "b.example = https://b.example/dmca\nwww.pirate.example = abuse@h.example\n"
        );
        assert_eq!(check("notices.rights_holder.name", "  ").unwrap(), "");
        for (key, value, problem) in [
            (
                "notices.time_zone",
                "Mars/Olympus",
                Problem::UnknownTimeZone,
            ),
            ("notices.time_zone", "", Problem::UnknownTimeZone),
            (
                "notices.time_zone",
                "../../etc/passwd",
                Problem::UnknownTimeZone,
            ),
            ("notices.template", "gdpr", Problem::UnknownTemplate),
            ("notices.rights_holder.email", "nobody", Problem::NotAnEmail),
            (
                "notices.rights_holder.email",
                "https://x.example",
                Problem::NotAnEmail,
            ),
            (
                "notices.rights_holder.phone",
                "call me",
                Problem::NotAPhoneNumber,
            ),
            (
                "notices.rights_holder.name",
                "a\nBcc: x",
                Problem::ControlCharacter,
            ),
            (
                "notices.rights_holder.name",
                "\u{202e}",
                Problem::ControlCharacter,
            ),
            (
                "notices.abuse_contacts",
                "pirate.example abuse@x.example",
                Problem::BadContact,
            ),
            (
                "notices.abuse_contacts",
                "p.example = not an address",
                Problem::BadContact,
            ),
            ("server.listen", "0.0.0.0:80", Problem::UnknownKey),
        ] {
            let refused = check(key, value).unwrap_err();
            assert_eq!(refused.problem, problem, "{key} = {value:?}: {refused:?}");
        }
        let long = "长".repeat(MAX_CHARS + 1);
        assert_eq!(
            check("notices.rights_holder.address", &long)
                .unwrap_err()
                .problem,
            Problem::TooLong
        );
        let many = "a.example = x@y.example\n".repeat(3)
            + &(0..=MAX_CONTACTS)
                .map(|i| format!("h{i}.example = x@y.example\n"))
                .collect::<String>();
        assert!(check("notices.abuse_contacts", &many).is_err());
    }
}
