//! The crate's one error type.

/// What building an [`Extractor`](crate::Extractor) can fail with: extraction itself never
/// fails (hostile markup gives less text, or none).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configured CSS selector (a site's content selector) does not parse.
    #[error("invalid {what} {pattern:?}: {reason}")]
    InvalidPattern {
        what: &'static str,
        pattern: String,
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
