//! Range checks of settings, shared by every crate that owns a `…Settings` struct.
//!
//! Each crate checks its own settings where their defaults live (`validate(&self)`); this leaf
//! only says how a bad value is reported, so that the binary, the admin UI and tests all get
//! one shape: the key (a dotted path, relative to the struct checked), the value and what is
//! allowed. A struct that holds another prefixes the inner key with
//! [`OutOfRange::in_section`], so the binary ends up with full paths such as
//! `crawler.fetch.timeout`.
//!
//! The rest is what every crate shares about settings and text, with no dependency of ours:
//!
//! - [`duration_serde`]: durations the way settings files write them (`"30s"`).
//! - [`Secret`]: a setting whose `Debug`, `Display` and `Serialize` write [`MASK`]; each one
//!   made or read is [`remember`]ed, and [`mask_known`] masks every value remembered in any
//!   text: the one mask that log lines, `doctor`'s findings and printed errors go through
//!   ([`mask_secrets`] masks a given few);
//!   [`mask_url_password`]: a URL shown with `***` for its password (`store`'s database URLs,
//!   `copyhound config`'s URL settings).
//! - [`parse_count`]: a count of 1 or more typed on a command line.
//! - [`Shard`]: a spec `K/N` and the hash that puts a work in a shard of the matcher's index.
//! - [`text`]: stored text safe to store and to print: [`text::strip_controls`] takes control
//!   characters and bidi overrides out of a title or name before it is stored, and
//!   [`text::escape_controls`] shows each as `\uXXXX` where stored text is printed.
//!
//! ```
//! use std::time::Duration;
//!
//! let timeout = Duration::ZERO;
//! let err = bounds::at_least("timeout", timeout, Duration::from_millis(1))
//!     .map_err(|e| e.in_section("fetch"))
//!     .unwrap_err();
//! assert_eq!(err.to_string(), "fetch.timeout = 0s is out of range: must be at least 1ms");
//! ```

use std::time::Duration;

pub mod duration_serde;
mod secret;
mod shard;
pub mod text;
mod url;

pub use secret::{MASK, MIN_REMEMBERED_LEN, Secret, mask_known, mask_secrets, remember};
pub use shard::Shard;
pub use url::mask_url_password;

/// A setting whose value is not allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value} is out of range: {allowed}")]
pub struct OutOfRange {
    key: String,
    value: String,
    allowed: String,
    /// The other key of a rule between two (`backoff_max` must be at least `backoff_base`).
    against: Option<String>,
}

/// The result of a check.
pub type Check = Result<(), OutOfRange>;

impl OutOfRange {
    /// `key` (dotted) has `value`; `allowed` says what would do ("must be at least 1").
    pub fn new(
        key: impl Into<String>,
        value: impl Into<String>,
        allowed: impl Into<String>,
    ) -> Self {
        OutOfRange {
            key: key.into(),
            value: value.into(),
            allowed: allowed.into(),
            against: None,
        }
    }

    /// The same error, from a rule that compares the key with `other` (a key of the same
    /// section): the value may be fine and `other` the one that was changed.
    #[must_use]
    pub fn against(mut self, other: &str) -> Self {
        self.against = Some(other.to_owned());
        self
    }

    /// The same error one level up: `section.key`.
    #[must_use]
    pub fn in_section(mut self, section: &str) -> Self {
        self.key = format!("{section}.{}", self.key);
        if let Some(other) = &mut self.against {
            *other = format!("{section}.{other}");
        }
        self
    }

    /// The other key of a rule between two keys, dotted like [`key`](Self::key).
    pub fn against_key(&self) -> Option<&str> {
        self.against.as_deref()
    }

    /// The dotted key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The bad value as written in messages.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// What is allowed ("must be at least 1ms").
    pub fn allowed(&self) -> &str {
        &self.allowed
    }
}

/// A value a setting may have, shown the way settings files write it.
pub trait Bounded: PartialOrd + Copy {
    /// As written in a settings file (`30s` for a duration).
    fn show(self) -> String;
}

macro_rules! bounded_by_display {
    ($($t:ty),*) => {$(
        impl Bounded for $t {
            fn show(self) -> String {
                self.to_string()
            }
        }
    )*};
}
bounded_by_display!(u8, u16, u32, u64, usize, i32, i64, f64);

impl Bounded for Duration {
    /// Whole seconds as `30s`, whole milliseconds as `1500ms`, anything finer as Rust prints it.
    fn show(self) -> String {
        if self.subsec_nanos() == 0 {
            format!("{}s", self.as_secs())
        } else if self.subsec_nanos().is_multiple_of(1_000_000) {
            format!("{}ms", self.as_millis())
        } else {
            format!("{self:?}")
        }
    }
}

/// `value` must be `min` or more.
///
/// # Errors
/// [`OutOfRange`] naming `key`, the value and `min`.
pub fn at_least<T: Bounded>(key: &str, value: T, min: T) -> Check {
    if value >= min {
        Ok(())
    } else {
        Err(OutOfRange::new(
            key,
            value.show(),
            format!("must be at least {}", min.show()),
        ))
    }
}

/// `value` must lie in `min ..= max` (a NaN never does).
///
/// # Errors
/// [`OutOfRange`] naming `key`, the value and the range.
pub fn between<T: Bounded>(key: &str, value: T, min: T, max: T) -> Check {
    if value >= min && value <= max {
        Ok(())
    } else {
        Err(OutOfRange::new(
            key,
            value.show(),
            format!("must be between {} and {}", min.show(), max.show()),
        ))
    }
}

/// `value` must be a fraction, `0 ..= 1`.
///
/// # Errors
/// [`OutOfRange`] naming `key` and the value.
pub fn fraction(key: &str, value: f64) -> Check {
    between(key, value, 0.0, 1.0)
}

/// The shortest timeout, lease or cache lifetime a setting may have: zero would make every
/// fetch time out, every lease expire at once or every cached answer stale.
pub const MIN_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(1);

/// A count typed by a person that must be at least 1 (jobs, threads, workers), for a
/// command-line flag; the error says what to give.
///
/// # Errors
/// Not a whole number, or 0.
pub fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "{s:?} is not a count: give a whole number, 1 or more"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_key_the_value_and_the_range() {
        let e = at_least("max_pages", 0u64, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "max_pages = 0 is out of range: must be at least 1"
        );
        let e = between("k", 70usize, 1, 64)
            .unwrap_err()
            .in_section("align")
            .in_section("matcher");
        assert_eq!(
            e.to_string(),
            "matcher.align.k = 70 is out of range: must be between 1 and 64"
        );
        assert_eq!((e.key(), e.value()), ("matcher.align.k", "70"));
        assert_eq!(e.allowed(), "must be between 1 and 64");
    }

    #[test]
    fn edges_pass_and_nan_fails() {
        at_least("a", 1u32, 1).unwrap();
        between("b", 64usize, 1, 64).unwrap();
        fraction("c", 0.0).unwrap();
        fraction("c", 1.0).unwrap();
        assert!(fraction("c", 1.01).is_err());
        assert!(fraction("c", -0.5).is_err());
        assert!(fraction("c", f64::NAN).is_err());
    }

    #[test]
    fn durations_read_as_in_settings_files() {
        let e = at_least("timeout", Duration::ZERO, Duration::from_millis(1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "timeout = 0s is out of range: must be at least 1ms"
        );
        assert_eq!(Duration::from_millis(1500).show(), "1500ms");
        assert_eq!(Duration::from_micros(5).show(), "5µs");
        at_least("t", Duration::from_millis(1), Duration::from_millis(1)).unwrap();
    }
}
