//! [`Secret`]: a setting that must not be shown (a token, a password).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a secret shows instead of its value, wherever it is printed or serialized.
pub const MASK: &str = "********";

/// A secret setting. It reads like a string from a settings file or a `…_FILE` variable, but
/// `Debug`, `Display` and `Serialize` all write [`MASK`], so neither a log line nor
/// `copyhound config` can show it; [`Secret::expose`] is the one way to the value.
///
/// ```
/// let token = bounds::Secret::new("s3cr3t");
/// assert_eq!(format!("{token:?} {token}"), "******** ********");
/// assert_eq!(token.expose(), "s3cr3t");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`, and [`remember`]s it so that [`mask_known`] masks it in any text.
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        remember(&value);
        Secret(value)
    }

    /// The value itself, for the one place that compares or sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the value is empty (an unset secret written as `""`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `text` with each secret's value, wherever it occurs, replaced by [`MASK`]: the one mask
/// for a message, log line or error that may quote what a secret went into (an object
/// store's error answer echoes the access key it was sent, a URL carries a key). `Debug`,
/// `Display` and `Serialize` of a [`Secret`] mask the setting itself; this masks its value
/// in anyone else's text.
///
/// ```
/// let key = bounds::Secret::new("AKIA-S3CR3T");
/// assert_eq!(
///     bounds::mask_secrets("denied: <AWSAccessKeyId>AKIA-S3CR3T</AWSAccessKeyId>", [&key]),
///     "denied: <AWSAccessKeyId>********</AWSAccessKeyId>"
/// );
/// ```
pub fn mask_secrets<'a>(text: &str, secrets: impl IntoIterator<Item = &'a Secret>) -> String {
    let mut values: Vec<&str> = secrets
        .into_iter()
        .map(Secret::expose)
        .filter(|v| !v.is_empty())
        .collect();
    // Longest first: a secret that holds another is masked whole, not around it.
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    let mut shown = text.to_owned();
    for value in values {
        if shown.contains(value) {
            shown = shown.replace(value, MASK);
        }
    }
    shown
}

/// Values shorter than this are not [`remember`]ed: masking every `key` or `1234` in a log
/// would hide more than it protects, and a value that short is no secret anyway.
pub const MIN_REMEMBERED_LEN: usize = 6;

/// At most this many values are remembered (settings, webhook secrets and provider keys are
/// a handful; the bound keeps a process that reads secrets in a loop from growing).
const MAX_REMEMBERED: usize = 4096;

/// Every secret value this process has read, longest first: what [`mask_known`] masks.
static REMEMBERED: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Remembers `value` as a secret of this process, so that [`mask_known`] masks it in every
/// log line, error and report. Each [`Secret`] made or read calls this; call it for a
/// secret that lives in another shape (the password of a database URL).
pub fn remember(value: &str) {
    if value.chars().count() < MIN_REMEMBERED_LEN {
        return;
    }
    let known = |list: &Vec<String>| list.iter().any(|v| v == value);
    match REMEMBERED.read() {
        Ok(list) if !known(&list) => {}
        _ => return,
    }
    let Ok(mut list) = REMEMBERED.write() else {
        return;
    };
    if known(&list) || list.len() >= MAX_REMEMBERED {
        return;
    }
    // Longest first: a secret that holds another is masked whole, not around it.
    let at = list.partition_point(|v| v.len() >= value.len());
    list.insert(at, value.to_owned());
}

/// `text` with every secret this process has read ([`remember`]) replaced by [`MASK`]: the
/// one mask that log lines, `doctor`'s findings and the errors a command prints go through,
/// so that a secret quoted by whatever it went into (a URL, a server's answer, a path) is
/// never shown.
///
/// ```
/// let token = bounds::Secret::new("tok-0123456789");
/// assert_eq!(
///     bounds::mask_known("GET /feed?token=tok-0123456789 refused"),
///     "GET /feed?token=******** refused"
/// );
/// # drop(token);
/// ```
pub fn mask_known(text: &str) -> std::borrow::Cow<'_, str> {
    let Ok(list) = REMEMBERED.read() else {
        return std::borrow::Cow::Borrowed(text);
    };
    if !list.iter().any(|v| text.contains(v.as_str())) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = text.to_owned();
    for value in list.iter() {
        if shown.contains(value.as_str()) {
            shown = shown.replace(value.as_str(), MASK);
        }
    }
    std::borrow::Cow::Owned(shown)
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(MASK)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_made_or_read_is_masked_in_any_text() {
        let made = Secret::new("made-0123456789");
        let read: Secret = serde_json::from_str("\"read-9876543210\"").unwrap();
        let text = "GET /?a=made-0123456789&b=read-9876543210 refused";
        assert_eq!(mask_known(text), "GET /?a=********&b=******** refused");
        assert_eq!(made.expose(), "made-0123456789");
        assert_eq!(read.expose(), "read-9876543210");
        // Text without a secret comes back as it was, not copied.
        assert!(matches!(
            mask_known("nothing to hide"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_secret_holding_another_is_masked_whole_and_short_values_are_not_remembered() {
        remember("inner-secret");
        remember("outer-inner-secret-x");
        assert_eq!(mask_known("[outer-inner-secret-x]"), "[********]");
        assert_eq!(mask_known("(inner-secret)"), "(********)");
        let _short = Secret::new("key");
        assert_eq!(mask_known("the key was refused"), "the key was refused");
    }
}
