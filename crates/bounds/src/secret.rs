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
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
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
        String::deserialize(deserializer).map(Secret)
    }
}
