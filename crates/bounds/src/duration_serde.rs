//! Durations in settings files: `"1500ms"`, `"30s"`, `"5m"`, `"2h"`, `"1d"`, `"2w"`, `"3y"`
//! (a year is 365 days: retention periods are written in years), or a bare number of seconds
//! (`2`, `0.5`). Every crate's settings read their durations through this, as
//! `#[serde(with = "bounds::duration_serde")]`, so a file writes them one way everywhere.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

/// Reads a duration written as [`parse`] reads it, or a bare number of seconds.
///
/// # Errors
/// A text [`parse`] refuses, or a negative or overflowing number.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Secs(f64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Secs(s) => Duration::try_from_secs_f64(s)
            .map_err(|e| D::Error::custom(format!("invalid duration {s}: {e}"))),
        Raw::Text(t) => parse(&t).ok_or_else(|| {
            D::Error::custom(format!(
                "invalid duration {t:?}: use a number with ms, s, m, h, d, w or y, e.g. \"30s\""
            ))
        }),
    }
}

/// Writes whole seconds as `"30s"`, anything else as milliseconds (`"1500ms"`), which
/// [`deserialize`] reads back (sub-millisecond parts are dropped).
///
/// # Errors
/// The serializer's.
pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    if d.subsec_nanos() == 0 {
        s.serialize_str(&format!("{}s", d.as_secs()))
    } else {
        s.serialize_str(&format!("{}ms", d.as_millis()))
    }
}

/// A duration as a person writes it in a settings file: in the largest unit that divides it
/// (`"3y"`, `"30d"`, `"2h"`, `"90s"`, `"1500ms"`), which [`parse`] reads back.
pub fn short(d: Duration) -> String {
    const UNITS: [(u64, &str); 5] = [
        (365 * 86_400, "y"),
        (86_400, "d"),
        (3600, "h"),
        (60, "m"),
        (1, "s"),
    ];
    if d.subsec_nanos() != 0 || d.is_zero() {
        return format!("{}ms", d.as_millis());
    }
    let secs = d.as_secs();
    let (size, unit) = UNITS
        .into_iter()
        .find(|(size, _)| secs.is_multiple_of(*size))
        .unwrap_or((1, "s"));
    format!("{}{unit}", secs / size)
}

/// Parses `"250ms"`, `"30s"`, `"5m"`, `"2h"`, `"1d"`, `"2w"`, `"3y"` (365 days a year) or a
/// bare number of seconds.
pub fn parse(text: &str) -> Option<Duration> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        "w" => n * 7.0 * 86_400.0,
        "y" => n * 365.0 * 86_400.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse("1d"), Some(Duration::from_secs(86_400)));
        assert_eq!(parse("2w"), Some(Duration::from_secs(14 * 86_400)));
        assert_eq!(parse("3y"), Some(Duration::from_secs(3 * 365 * 86_400)));
        assert_eq!(parse("soon"), None);
        assert_eq!(parse("5 weeks"), None);
    }

    #[test]
    fn short_is_the_largest_unit_that_divides() {
        for (text, d) in [
            ("3y", Duration::from_secs(3 * 365 * 86_400)),
            ("30d", Duration::from_secs(30 * 86_400)),
            ("25h", Duration::from_secs(25 * 3600)),
            ("90s", Duration::from_secs(90)),
            ("1500ms", Duration::from_millis(1500)),
            ("0ms", Duration::ZERO),
        ] {
            assert_eq!(short(d), text);
            assert_eq!(parse(text), Some(d));
        }
    }
}
