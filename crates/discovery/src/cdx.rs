//! Common Crawl's CDX index API as a provider of a suspect domain's URLs: what a crawl
//! captured on the domain, so that probing it reads more than its home page.
//!
//! A request is `GET {endpoint}?url=DOMAIN/*&output=json&limit=N`, the endpoint one crawl's
//! index (`https://index.commoncrawl.org/CC-MAIN-2026-44-index`, the list of crawls at
//! `https://index.commoncrawl.org/collinfo.json`); the answer has one JSON object a line
//! (`urlkey`, `timestamp`, `url`, `mime`, `mime-detected`, `status`, `digest`, `length`,
//! `offset`, `filename`, ...), <https://index.commoncrawl.org/> and
//! <https://pywb.readthedocs.io/en/latest/manual/cdxserver_api.html>. A domain with no
//! capture is answered 404 (`{"message": "No Captures found for: ..."}`): no URL, no
//! error. Captures that were no page (a redirect, an error, an image) are left out, and each
//! URL is listed once. The answer is read up to [`CdxSettings::max_response_bytes`] within
//! [`CdxSettings::timeout`]; a 429 or 503 is a [`ProviderError::Quota`] (the index asks
//! clients to slow down that way), never retried here.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::providers::{ProviderError, error_message, send_bounded, with_query};

/// Where and how the CDX index is asked (`[discovery.cdx]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CdxSettings {
    /// One crawl's index, e.g. `https://index.commoncrawl.org/CC-MAIN-2026-44-index`; empty:
    /// probes read the home page alone.
    pub endpoint: String,
    /// Captures asked for per domain (`limit`).
    pub limit: u32,
    /// The whole request, answer read included.
    #[serde(with = "bounds::duration_serde")]
    pub timeout: Duration,
    /// Bytes of an answer read at most; a longer answer is an error.
    pub max_response_bytes: u64,
}

impl Default for CdxSettings {
    fn default() -> Self {
        CdxSettings {
            endpoint: String::new(),
            limit: 200,
            // The public index answers a domain query in seconds, slower under load.
            timeout: Duration::from_secs(60),
            // A capture line is about 500 bytes: 200 of them are 100 KB.
            max_response_bytes: 4 << 20,
        }
    }
}

impl CdxSettings {
    /// Checks the ranges and the endpoint.
    ///
    /// # Errors
    /// A value out of range, named by its key (the caller adds the section).
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::between("limit", self.limit, 1, 100_000)?;
        bounds::between(
            "timeout",
            self.timeout,
            bounds::MIN_TIMEOUT,
            Duration::from_secs(600),
        )?;
        bounds::between("max_response_bytes", self.max_response_bytes, 1024, 1 << 30)?;
        if !self.endpoint.is_empty()
            && !url::Url::parse(&self.endpoint)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
        {
            return Err(bounds::OutOfRange::new(
                "endpoint",
                self.endpoint.clone(),
                "must be an absolute http or https URL (a crawl's index, \
                 https://index.commoncrawl.org/CC-MAIN-YYYY-WW-index), or empty"
                    .to_owned(),
            ));
        }
        Ok(())
    }

    /// Whether an index is configured.
    pub fn enabled(&self) -> bool {
        !self.endpoint.is_empty()
    }
}

/// One line of the index's answer (the fields read; the others are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Capture {
    /// The captured URL.
    pub url: String,
    /// When, `YYYYMMDDhhmmss`.
    #[serde(default)]
    pub timestamp: String,
    /// The HTTP status, as a string (`"200"`); absent for some records.
    #[serde(default)]
    pub status: Option<String>,
    /// The Content-Type the server sent.
    #[serde(default)]
    pub mime: Option<String>,
    /// The type Common Crawl detected.
    #[serde(default, rename = "mime-detected")]
    pub mime_detected: Option<String>,
}

impl Capture {
    /// Whether the capture was a page: status 200 and an HTML or text type (or none given).
    pub fn is_page(&self) -> bool {
        let ok = self.status.as_deref().is_none_or(|s| s == "200");
        let mime = self
            .mime_detected
            .as_deref()
            .or(self.mime.as_deref())
            .unwrap_or("text/html")
            .to_ascii_lowercase();
        ok && (mime.starts_with("text/html")
            || mime.starts_with("application/xhtml")
            || mime.starts_with("text/plain"))
    }
}

/// The index's answer of `status`: its pages' URLs, each once, in the index's order.
///
/// # Errors
/// A quota or error answer, or a line that is not a capture.
pub fn parse(status: u16, body: &[u8]) -> Result<Vec<String>, ProviderError> {
    match status {
        200 => {}
        404 => return Ok(Vec::new()),
        429 | 503 => {
            return Err(ProviderError::Quota {
                status,
                message: error_message(body),
            });
        }
        _ => {
            return Err(ProviderError::Refused {
                status,
                message: error_message(body),
            });
        }
    }
    let text = std::str::from_utf8(body)
        .map_err(|e| ProviderError::Parse(format!("the answer is not UTF-8: {e}")))?;
    let mut seen = BTreeSet::new();
    let mut urls = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let capture: Capture = serde_json::from_str(line)
            .map_err(|e| ProviderError::Parse(format!("line {}: {e}", i + 1)))?;
        if capture.is_page() && seen.insert(capture.url.clone()) {
            urls.push(capture.url);
        }
    }
    Ok(urls)
}

/// The URLs of pages the index holds on `domain` (`host[:port]`; every path under it).
///
/// # Errors
/// [`ProviderError`]: quota, an error answer, no answer, or an unreadable one.
pub async fn domain_urls(
    client: &crawler::outbound::Outbound,
    settings: &CdxSettings,
    domain: &str,
) -> Result<Vec<String>, ProviderError> {
    let limit = settings.limit.to_string();
    let pattern = format!("{domain}/*");
    let url = with_query(
        &settings.endpoint,
        &[
            ("url", pattern.as_str()),
            ("output", "json"),
            ("limit", limit.as_str()),
        ],
    );
    let (status, body) = send_bounded(
        client,
        client.client().get(url),
        settings.max_response_bytes,
        settings.timeout,
    )
    .await?;
    parse(status, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as index.commoncrawl.org answers them (a page, its redirect, an image, the page
    /// captured again).
    const ANSWER: &str = r#"{"urlkey": "example,pirate)/book/2.html", "timestamp": "20261102100000", "url": "https://pirate.example/book/2.html", "mime": "text/html", "mime-detected": "text/html", "status": "200", "digest": "AAAA", "length": "9000", "offset": "123", "filename": "crawl-data/CC-MAIN-2026-44/segments/1/warc/x.warc.gz", "languages": "zho", "encoding": "UTF-8"}
{"urlkey": "example,pirate)/", "timestamp": "20261102100001", "url": "http://pirate.example/", "mime": "text/html", "mime-detected": "text/html", "status": "301", "digest": "BBBB", "length": "500", "offset": "456", "filename": "crawl-data/x.warc.gz", "redirect": "https://pirate.example/"}
{"urlkey": "example,pirate)/cover.jpg", "timestamp": "20261102100002", "url": "https://pirate.example/cover.jpg", "mime": "image/jpeg", "mime-detected": "image/jpeg", "status": "200", "digest": "CCCC", "length": "20000", "offset": "789", "filename": "crawl-data/x.warc.gz"}
{"urlkey": "example,pirate)/book/2.html", "timestamp": "20261103100000", "url": "https://pirate.example/book/2.html", "mime": "text/html", "mime-detected": "text/html", "status": "200", "digest": "AAAA", "length": "9000", "offset": "999", "filename": "crawl-data/y.warc.gz"}
"#;

    #[test]
    fn pages_are_listed_once_and_the_rest_left_out() {
        assert_eq!(
            parse(200, ANSWER.as_bytes()).unwrap(),
            ["https://pirate.example/book/2.html"]
        );
    }

    #[test]
    fn no_capture_is_no_url_and_a_slow_down_is_a_quota() {
        let none = br#"{"message": "No Captures found for: nothing.example/*"}"#;
        assert_eq!(parse(404, none).unwrap(), Vec::<String>::new());
        assert!(matches!(
            parse(503, b"Please reduce your request rate."),
            Err(ProviderError::Quota { status: 503, .. })
        ));
        assert!(matches!(
            parse(400, br#"{"error": "bad query"}"#),
            Err(ProviderError::Refused { status: 400, .. })
        ));
        assert!(matches!(
            parse(200, b"<html>not the index</html>"),
            Err(ProviderError::Parse(_))
        ));
    }
}
