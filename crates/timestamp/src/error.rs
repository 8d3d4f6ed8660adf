//! The crate's one error type.

use std::path::PathBuf;

/// What stamping or verifying can fail with, split by what a caller does about it: retry an
/// exchange that failed ([`Error::Timeout`], [`Error::Fetch`], [`Error::Status`]), fix the
/// settings ([`Error::Trust`]), or give up on an answer that will not change
/// ([`Error::Rejected`], [`Error::Malformed`], [`Error::Invalid`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The TSA did not answer in time (`evidence.timestamp.timeout`).
    #[error(
        "time-stamping authority {url} did not answer in time (raise evidence.timestamp.timeout)"
    )]
    Timeout {
        /// The TSA.
        url: String,
    },
    /// The TSA could not be reached or the exchange broke off.
    #[error("cannot reach time-stamping authority {url}")]
    Fetch {
        /// The TSA.
        url: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },
    /// The TSA answered with an HTTP error.
    #[error("time-stamping authority {url} answered http {status}")]
    Status {
        /// The TSA.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The response is larger than we read.
    #[error("time-stamp response over {limit} bytes refused")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The bytes are not a time-stamp response or token.
    #[error("malformed {0}")]
    Malformed(String),
    /// The TSA refused to stamp.
    #[error(
        "the time-stamping authority refused the request: {status}{}",
        detail(text, failure)
    )]
    Rejected {
        /// The PKI status (`rejection`, `waiting`, ...).
        status: String,
        /// The TSA's own text, if it gave one.
        text: String,
        /// The failure-info bits set (`badAlg`, `systemFailure`, ...).
        failure: Vec<String>,
    },
    /// The token does not prove what it should: the reason.
    #[error("time-stamp token refused: {0}")]
    Invalid(String),
    /// The trusted CA certificate (`evidence.timestamp.ca_certificates`) cannot be used.
    #[error("cannot use the trusted ca certificate {} (evidence.timestamp.ca_certificates): {reason}", path.display())]
    Trust {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The system gave no randomness for the nonce.
    #[error("cannot draw a random nonce: {0}")]
    Random(String),
}

impl Error {
    /// Whether asking again later may succeed: the exchange failed, the answer was cut or
    /// garbled, or the TSA said it is busy or failing (`waiting`, `timeNotAvailable`,
    /// `systemFailure`). A refused token, a bad CA file or a request the TSA will never grant
    /// is not.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Timeout { .. } | Error::Fetch { .. } | Error::Malformed(_) => true,
            Error::Status { status, .. } => *status >= 500 || *status == 429,
            Error::Rejected {
                status, failure, ..
            } => {
                status == "waiting"
                    || failure
                        .iter()
                        .any(|f| f == "timeNotAvailable" || f == "systemFailure")
            }
            Error::TooLarge { .. } | Error::Invalid(_) | Error::Trust { .. } | Error::Random(_) => {
                false
            }
        }
    }
}

fn detail(text: &str, failure: &[String]) -> String {
    let mut out = String::new();
    if !text.is_empty() {
        out.push_str(&format!(" ({text})"));
    }
    if !failure.is_empty() {
        out.push_str(&format!(" [{}]", failure.join(", ")));
    }
    out
}

/// This crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
