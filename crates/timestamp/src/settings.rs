//! `[evidence.timestamp]`: which TSA stamps evidence, the CA it must chain to, how long to
//! wait for it.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Trusted-timestamp settings. Stamping is off while `url` is unset.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct TimestampSettings {
    /// The TSA's URL (http or https), which RFC 3161 queries are POSTed to; `None` turns
    /// stamping off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The path of a PEM file of CA certificates the TSA's signer must chain to; without it
    /// a token's signature is checked but not who signed it. (Not `ca_file`: a `..._FILE`
    /// environment variable reads a setting's value from a file.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_certificates: Option<PathBuf>,
    /// How long one exchange with the TSA may take (connect included).
    #[serde(with = "bounds::duration_serde")]
    pub timeout: Duration,
}

impl Default for TimestampSettings {
    fn default() -> Self {
        TimestampSettings {
            url: None,
            ca_certificates: None,
            timeout: Duration::from_secs(30),
        }
    }
}

impl TimestampSettings {
    /// Refuses a zero timeout and a URL that is not http(s).
    ///
    /// # Errors
    /// The first bad value, its key relative to this section.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::at_least("timeout", self.timeout, Duration::from_millis(1))?;
        if let Some(url) = &self.url {
            let scheme_ok = ["http://", "https://"]
                .iter()
                .any(|s| url.len() > s.len() && url[..s.len()].eq_ignore_ascii_case(s));
            if !scheme_ok {
                return Err(bounds::OutOfRange::new(
                    "url",
                    url.clone(),
                    "must be an http:// or https:// URL",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_and_urls_must_be_http() {
        let s = TimestampSettings::default();
        assert!(s.url.is_none());
        s.validate().unwrap();
        let bad = TimestampSettings {
            url: Some("ftp://tsa.example/".into()),
            ..s.clone()
        };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "url = ftp://tsa.example/ is out of range: must be an http:// or https:// URL"
        );
        let zero = TimestampSettings {
            timeout: Duration::ZERO,
            ..s
        };
        assert_eq!(zero.validate().unwrap_err().key(), "timeout");
    }
}
