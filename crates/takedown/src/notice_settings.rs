//! The notice settings (`[notices]`) as the settings file gives them: who the notices speak
//! for, the default template, the abuse contacts and the time zone notices and the UI write
//! times in; with the checks a value given by hand passes. Below both [`crate::notices`],
//! which drafts with them, and [`crate::overrides`], which lays the UI's values over them.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use jobs::{Error, Result};
use serde::{Deserialize, Serialize};

/// Who the notices speak for (`[notices.rights_holder]`): the elements both laws ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RightsHolder {
    /// The rights holder's name (a person or a company).
    pub name: String,
    /// Postal address.
    pub address: String,
    /// Email address.
    pub email: String,
    /// Telephone number.
    pub phone: String,
    /// The person who signs the notices on the rights holder's behalf.
    pub signatory: String,
}

impl RightsHolder {
    /// The settings still empty that every notice needs, by their keys.
    pub fn missing(&self) -> Vec<&'static str> {
        [
            ("notices.rights_holder.name", &self.name),
            ("notices.rights_holder.address", &self.address),
            ("notices.rights_holder.email", &self.email),
            ("notices.rights_holder.signatory", &self.signatory),
        ]
        .into_iter()
        .filter(|(_, v)| v.trim().is_empty())
        .map(|(k, _)| k)
        .collect()
    }
}

/// Notice settings (`[notices]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NoticeSettings {
    /// The rights holder's profile.
    pub rights_holder: RightsHolder,
    /// The template used when none is named: `dmca` or `cn`.
    pub template: String,
    /// Abuse contacts by host: a key matches the host and its subdomains
    /// (`"pirate.example" = "abuse@hoster.example"`). Checked before `security.txt`.
    pub abuse_contacts: BTreeMap<String, String>,
    /// Whether a notice without `--to` looks for the site's `security.txt` contact.
    pub security_txt: bool,
    /// The time zone (an IANA name) notices write their date and fetch times in, and the
    /// admin UI shows times in.
    pub time_zone: String,
}

impl Default for NoticeSettings {
    fn default() -> Self {
        NoticeSettings {
            rights_holder: RightsHolder::default(),
            template: NoticeTemplate::Dmca.as_str().to_owned(),
            abuse_contacts: BTreeMap::new(),
            security_txt: true,
            time_zone: "UTC".to_owned(),
        }
    }
}

impl NoticeSettings {
    /// Checks the default template's name.
    ///
    /// # Errors
    /// An unknown template, by its key.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        NoticeTemplate::parse(&self.template).map_err(|_| {
            bounds::OutOfRange::new("template", &self.template, "must be dmca or cn")
        })?;
        time_zone(&self.time_zone).map(drop).map_err(|_| {
            bounds::OutOfRange::new(
                "time_zone",
                &self.time_zone,
                "must be an IANA time zone name (UTC, Asia/Shanghai)",
            )
        })
    }
}

/// A notice template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeTemplate {
    /// English, the elements of 17 U.S.C. § 512(c)(3).
    Dmca,
    /// Chinese, the elements of 《信息网络传播权保护条例》第十四条.
    Cn,
}

impl NoticeTemplate {
    /// Every template.
    pub const ALL: [NoticeTemplate; 2] = [NoticeTemplate::Dmca, NoticeTemplate::Cn];

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeTemplate::Dmca => "dmca",
            NoticeTemplate::Cn => "cn",
        }
    }

    /// The template named `s` (case-insensitive).
    ///
    /// # Errors
    /// [`Error::Notice`] naming the templates there are.
    pub fn parse(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| Error::Notice(format!("unknown notice template {s:?}: use dmca or cn")))
    }
}

impl fmt::Display for NoticeTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks a recipient given by hand: an email address or an http(s) URL, one line.
///
/// # Errors
/// [`Error::Notice`] saying what is wrong.
pub fn check_recipient(to: &str) -> Result<String> {
    let to = to.trim();
    let url = to.starts_with("https://") || to.starts_with("http://");
    let email = !url
        && to
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'));
    if to.chars().any(char::is_control) || to.chars().count() > 320 || !(url || email) {
        return Err(Error::Notice(format!(
            "recipient {to:?}: give an email address (abuse@host.example) or the URL of a \
             takedown form"
        )));
    }
    Ok(to.to_owned())
}

/// The canonical IANA name of the time zone `name` (case-insensitive: `asia/shanghai` is
/// `Asia/Shanghai`).
///
/// # Errors
/// What to give instead.
pub fn time_zone(name: &str) -> std::result::Result<String, String> {
    let name = name.trim();
    let zone = (!name.is_empty() && name.len() <= 64)
        .then(|| jiff::tz::TimeZone::get(name).ok())
        .flatten();
    match zone.as_ref().and_then(jiff::tz::TimeZone::iana_name) {
        Some(canonical) => Ok(canonical.to_owned()),
        None => Err(format!(
            "unknown time zone {name:?}: give an IANA name such as UTC, Asia/Shanghai or \
             America/New_York"
        )),
    }
}

/// The time zone named `name`, or UTC when no zone has that name (a name from the settings,
/// which [`time_zone`] checked when they were loaded or saved).
pub fn zone(name: &str) -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::get(name).unwrap_or(jiff::tz::TimeZone::UTC)
}

/// `t` as the UI and notices write it in `zone`, to the minute (or the second): in UTC
/// `2026-11-27 14:05 UTC`, elsewhere with the offset, `2026-11-27 22:05 +08:00`.
pub fn local_time(t: DateTime<Utc>, zone: &jiff::tz::TimeZone, seconds: bool) -> String {
    let time = if seconds { "%H:%M:%S" } else { "%H:%M" };
    let Ok(at) = jiff::Timestamp::from_millisecond(t.timestamp_millis()) else {
        return t.format(&format!("%Y-%m-%d {time} UTC")).to_string();
    };
    if zone.iana_name() == Some("UTC") {
        return at
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .strftime(&format!("%Y-%m-%d {time} UTC"))
            .to_string();
    }
    at.to_zoned_datetime(zone.clone())
        .strftime(&format!("%Y-%m-%d {time} %:z"))
        .to_string()
}

/// The date of `t` in `zone` (`2026-11-27`).
pub fn local_date(t: DateTime<Utc>, zone: &jiff::tz::TimeZone) -> String {
    local_time(t, zone, false)
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_owned()
}
