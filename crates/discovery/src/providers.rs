//! Search providers: where query phrases are sent, each behind [`SearchApi`] with its own
//! request and response types and its limits.
//!
//! - [`ProviderKind::Searxng`]: a self-hosted SearXNG, its JSON API (`/search?q=…&format=json`,
//!   <https://docs.searxng.org/dev/search_api.html>); the default, needs no key.
//! - [`ProviderKind::Brave`]: the Brave Search API (`GET /res/v1/web/search`, key in
//!   `X-Subscription-Token`, <https://api-dashboard.search.brave.com/app/documentation/web-search/get-started>).
//! - [`ProviderKind::Baidu`]: Baidu Qianfan's web search (百度搜索, `POST
//!   /v2/ai_search/web_search`, `Authorization: Bearer` key,
//!   <https://ai.baidu.com/ai-doc/AppBuilder/pmaxd1hvy>).
//! - [`ProviderKind::Serpapi`]: SerpApi's Google engine (`GET /search.json?engine=google`,
//!   `api_key` parameter, <https://serpapi.com/search-api>, errors
//!   <https://serpapi.com/api-status-and-error-codes>).
//!
//! Bing's Web Search API was retired on 2025-08-11 and has no module; Google's Custom Search
//! JSON API is closed to new customers and ends on 2027-01-01, so it has none either.
//!
//! Every query is one exact phrase in double quotes. An answer is read up to
//! [`ProviderSettings::max_response_bytes`] within [`ProviderSettings::timeout`]; a quota
//! answer (HTTP 429 or 402, or a body that says the quota or searches ran out) is
//! [`ProviderError::Quota`], never retried here: the caller counts it and stops asking that
//! provider for the day.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// SearXNG's JSON API (self-hosted).
    Searxng,
    /// The Brave Search API.
    Brave,
    /// Baidu Qianfan web search.
    Baidu,
    /// SerpApi (Google).
    Serpapi,
}

impl ProviderKind {
    /// The name settings and the database use.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Searxng => "searxng",
            ProviderKind::Brave => "brave",
            ProviderKind::Baidu => "baidu",
            ProviderKind::Serpapi => "serpapi",
        }
    }

    /// The public endpoint when none is configured (SearXNG has none: it is self-hosted).
    pub fn default_endpoint(self) -> Option<&'static str> {
        match self {
            ProviderKind::Searxng => None,
            ProviderKind::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            ProviderKind::Baidu => Some("https://qianfan.baidubce.com/v2/ai_search/web_search"),
            ProviderKind::Serpapi => Some("https://serpapi.com/search.json"),
        }
    }

    /// Whether the API refuses requests without a key.
    pub fn needs_key(self) -> bool {
        !matches!(self, ProviderKind::Searxng)
    }

    fn api(self) -> &'static dyn SearchApi {
        match self {
            ProviderKind::Searxng => &Searxng,
            ProviderKind::Brave => &Brave,
            ProviderKind::Baidu => &Baidu,
            ProviderKind::Serpapi => &Serpapi,
        }
    }
}

/// One configured provider (`[discovery.providers.NAME]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// The API it speaks.
    pub kind: ProviderKind,
    /// Where requests go: for SearXNG the instance's base URL (`/search` is added), for the
    /// others the full API URL (their public one when absent).
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The API key (a secret: set it with `COPYHOUND_DISCOVERY__PROVIDERS__NAME__KEY_FILE`).
    #[serde(default)]
    pub key: Option<bounds::Secret>,
    /// Results asked for per query (providers cap it: Brave 20, Baidu 50).
    #[serde(default = "default_results")]
    pub results: u32,
    /// Queries this provider may be sent per day (UTC), over all works.
    #[serde(default = "default_queries_per_day")]
    pub queries_per_day: u32,
    /// The whole request, answer read included.
    #[serde(default = "default_timeout", with = "bounds::duration_serde")]
    pub timeout: Duration,
    /// Bytes of an answer read at most; a longer answer is an error.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: u64,
}

fn default_results() -> u32 {
    20
}
fn default_queries_per_day() -> u32 {
    100
}
fn default_timeout() -> Duration {
    Duration::from_secs(20)
}
fn default_max_response_bytes() -> u64 {
    4 << 20
}

impl ProviderSettings {
    /// A provider of `kind` at `endpoint` with the default limits.
    pub fn new(kind: ProviderKind, endpoint: Option<String>, key: Option<&str>) -> Self {
        ProviderSettings {
            kind,
            endpoint,
            key: key.map(bounds::Secret::new),
            results: default_results(),
            queries_per_day: default_queries_per_day(),
            timeout: default_timeout(),
            max_response_bytes: default_max_response_bytes(),
        }
    }

    /// Checks the ranges, the endpoint and the key.
    ///
    /// # Errors
    /// A value out of range, named by its key (the caller adds the section).
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::between("results", self.results, 1, 100)?;
        bounds::between("queries_per_day", self.queries_per_day, 0, 1_000_000)?;
        bounds::between(
            "timeout",
            self.timeout,
            bounds::MIN_TIMEOUT,
            Duration::from_secs(600),
        )?;
        bounds::between("max_response_bytes", self.max_response_bytes, 1024, 1 << 30)?;
        match self.endpoint() {
            Some(url)
                if url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https")) => {}
            Some(url) => {
                return Err(bounds::OutOfRange::new(
                    "endpoint",
                    url.to_owned(),
                    "must be an absolute http or https URL".to_owned(),
                ));
            }
            None => {
                return Err(bounds::OutOfRange::new(
                    "endpoint",
                    String::new(),
                    "must be set: the SearXNG instance's base URL".to_owned(),
                ));
            }
        }
        if self.kind.needs_key() && self.key.as_ref().is_none_or(bounds::Secret::is_empty) {
            return Err(bounds::OutOfRange::new(
                "key",
                String::new(),
                format!(
                    "must be set for a {} provider (`key`, or a file named by `key_file`)",
                    self.kind.as_str()
                ),
            ));
        }
        Ok(())
    }

    /// The endpoint used: the configured one, or the kind's public one.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint
            .as_deref()
            .or_else(|| self.kind.default_endpoint())
    }

    fn key(&self) -> &str {
        self.key.as_ref().map_or("", bounds::Secret::expose)
    }
}

/// A result a provider returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// The page's URL.
    pub url: String,
    /// Its title, as the provider gave it (may be empty).
    pub title: String,
}

/// Why a query got no results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The provider says the quota or rate limit is used up: stop asking it today.
    #[error("quota exceeded ({status}): {message}")]
    Quota {
        /// The HTTP status.
        status: u16,
        /// What the provider said.
        message: String,
    },
    /// The provider answered with an error.
    #[error("provider answered {status}: {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// What the provider said.
        message: String,
    },
    /// The request did not get an answer (connection, timeout, an answer too long).
    #[error("request failed: {0}")]
    Transport(String),
    /// The answer was not in the provider's format.
    #[error("unreadable answer: {0}")]
    Parse(String),
}

impl ProviderError {
    /// `quota` or `error`, as the query log stores it.
    pub fn outcome(&self) -> &'static str {
        match self {
            ProviderError::Quota { .. } => "quota",
            _ => "error",
        }
    }
}

/// The API of one provider: how a query becomes a request and an answer becomes hits.
pub trait SearchApi: Sync {
    /// The request for `query` (already an exact phrase in double quotes).
    fn request(
        &self,
        client: &reqwest::Client,
        settings: &ProviderSettings,
        query: &str,
    ) -> reqwest::RequestBuilder;

    /// The hits of a successful answer, or the error an answer (of any status) carries.
    ///
    /// # Errors
    /// An error or quota answer, or one that is not in the provider's format.
    fn parse(&self, status: u16, body: &[u8]) -> Result<Vec<Hit>, ProviderError>;
}

/// The query sent for `phrase`: the phrase as one exact phrase, in double quotes (a phrase
/// never contains one, see [`super::phrases`]).
pub fn exact_query(phrase: &str) -> String {
    format!("\"{}\"", phrase.replace('"', ""))
}

/// Sends `phrase` to the provider and reads its answer, bounded in time and size; never
/// retries.
///
/// # Errors
/// [`ProviderError`]: quota, an error answer, no answer, or an unreadable one.
pub async fn search(
    client: &crawler::outbound::Outbound,
    settings: &ProviderSettings,
    phrase: &str,
) -> Result<Vec<Hit>, ProviderError> {
    let api = settings.kind.api();
    let query = exact_query(phrase);
    let (status, body) = send_bounded(
        client,
        api.request(client.client(), settings, &query),
        settings.max_response_bytes,
        settings.timeout,
    )
    .await?;
    if matches!(status, 402 | 429) {
        return Err(ProviderError::Quota {
            status,
            message: error_message(&body),
        });
    }
    match api.parse(status, &body) {
        Err(ProviderError::Refused { status, message }) if says_quota(&message) => {
            Err(ProviderError::Quota { status, message })
        }
        other => other,
    }
}

/// Sends `request` through `client` (the crawler's address rules) and reads its answer's
/// status and body, at most `max_bytes` within `timeout` (the whole exchange); never retries.
///
/// # Errors
/// [`ProviderError::Transport`]: no answer, a refused address or redirect, or an answer
/// longer than `max_bytes`.
pub(super) async fn send_bounded(
    client: &crawler::outbound::Outbound,
    request: reqwest::RequestBuilder,
    max_bytes: u64,
    timeout: Duration,
) -> Result<(u16, Vec<u8>), ProviderError> {
    let asked = async {
        let mut response = client
            .send(request)
            .await
            .map_err(|e| ProviderError::Transport(e.to_string()))?;
        let status = response.status().as_u16();
        let url = response.url().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ProviderError::Transport(client.read_error(e, &url).to_string()))?
        {
            if body.len() as u64 + chunk.len() as u64 > max_bytes {
                return Err(ProviderError::Transport(format!(
                    "the answer is longer than max_response_bytes ({max_bytes})"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body))
    };
    tokio::time::timeout(timeout, asked)
        .await
        .map_err(|_| ProviderError::Transport(format!("no answer within {timeout:?}")))?
}

/// Whether an error message says a quota, a rate limit or the searches ran out (English
/// and Chinese wordings the providers use).
fn says_quota(message: &str) -> bool {
    let lower = message.to_lowercase();
    [
        "quota",
        "rate limit",
        "ratelimit",
        "run out of searches",
        "have run out",
        "too many requests",
        "额度",
        "限流",
        "超限",
        "qps",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// The message of an error answer: a JSON `error`, `message` or `error.detail`, else the
/// first 200 characters of the body.
pub(super) fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(json) = serde_json::from_slice::<Value>(body) {
        for pointer in ["/error/detail", "/error/message", "/error", "/message"] {
            if let Some(Value::String(s)) = json.pointer(pointer) {
                return bounds::text::escape_controls(s).chars().take(300).collect();
            }
        }
    }
    bounds::text::escape_controls(&text)
        .chars()
        .take(200)
        .collect()
}

/// `base` with `pairs` appended to its query, form-encoded (an endpoint that does not parse
/// is sent as it is, and the request fails saying so).
pub(super) fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    match url::Url::parse(base) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(pairs);
            url.into()
        }
        Err(_) => base.to_owned(),
    }
}

fn json(body: &[u8]) -> Result<Value, ProviderError> {
    serde_json::from_slice(body).map_err(|e| ProviderError::Parse(e.to_string()))
}

/// The `url` (or `link`) string fields of the objects in the array at `pointer`; entries
/// without one are skipped.
fn hits_at(json: &Value, pointer: &str, url_key: &str) -> Result<Vec<Hit>, ProviderError> {
    let Some(items) = json.pointer(pointer) else {
        return Ok(Vec::new());
    };
    let items = items
        .as_array()
        .ok_or_else(|| ProviderError::Parse(format!("{pointer} is not an array")))?;
    Ok(items
        .iter()
        .filter_map(|item| {
            let url = item.get(url_key)?.as_str()?;
            Some(Hit {
                url: url.to_owned(),
                title: item
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            })
        })
        .collect())
}

fn refused(status: u16, body: &[u8]) -> ProviderError {
    ProviderError::Refused {
        status,
        message: error_message(body),
    }
}

/// SearXNG: `GET {endpoint}/search?q=…&format=json`; results in `results[].url`. The JSON
/// format must be enabled in the instance's `settings.yml` (`search.formats`), else it
/// answers 403.
struct Searxng;

impl SearchApi for Searxng {
    fn request(
        &self,
        client: &reqwest::Client,
        settings: &ProviderSettings,
        query: &str,
    ) -> reqwest::RequestBuilder {
        let base = settings
            .endpoint()
            .unwrap_or_default()
            .trim_end_matches('/');
        let url = if base.ends_with("/search") {
            base.to_owned()
        } else {
            format!("{base}/search")
        };
        let mut request = client
            .get(with_query(
                &url,
                &[("q", query), ("format", "json"), ("pageno", "1")],
            ))
            .header("Accept", "application/json");
        // An instance behind a proxy that wants a token gets it as a bearer token.
        if !settings.key().is_empty() {
            request = request.bearer_auth(settings.key());
        }
        request
    }

    fn parse(&self, status: u16, body: &[u8]) -> Result<Vec<Hit>, ProviderError> {
        if status != 200 {
            return Err(refused(status, body));
        }
        hits_at(&json(body)?, "/results", "url")
    }
}

/// Brave: `GET {endpoint}?q=…&count=N` with `X-Subscription-Token`; results in
/// `web.results[].url`; errors as `{"type": "ErrorResponse", "error": {"detail": …}}`.
struct Brave;

impl SearchApi for Brave {
    fn request(
        &self,
        client: &reqwest::Client,
        settings: &ProviderSettings,
        query: &str,
    ) -> reqwest::RequestBuilder {
        client
            .get(with_query(
                settings.endpoint().unwrap_or_default(),
                &[
                    ("q", query),
                    ("count", &settings.results.min(20).to_string()),
                ],
            ))
            .header("Accept", "application/json")
            .header("X-Subscription-Token", settings.key())
    }

    fn parse(&self, status: u16, body: &[u8]) -> Result<Vec<Hit>, ProviderError> {
        if status != 200 {
            return Err(refused(status, body));
        }
        hits_at(&json(body)?, "/web/results", "url")
    }
}

/// Baidu Qianfan: `POST {endpoint}` with a bearer key and a JSON body (the query as the one
/// user message, `search_source` `baidu_search_v2`, web results only); results in
/// `references[].url`; errors as `{"code": …, "message": …}`, with HTTP 200 too.
struct Baidu;

impl SearchApi for Baidu {
    fn request(
        &self,
        client: &reqwest::Client,
        settings: &ProviderSettings,
        query: &str,
    ) -> reqwest::RequestBuilder {
        let body = serde_json::json!({
            "messages": [{"role": "user", "content": query}],
            "search_source": "baidu_search_v2",
            "resource_type_filter": [{"type": "web", "top_k": settings.results.min(50)}],
        });
        client
            .post(settings.endpoint().unwrap_or_default())
            .bearer_auth(settings.key())
            .header("Content-Type", "application/json")
            .body(body.to_string())
    }

    fn parse(&self, status: u16, body: &[u8]) -> Result<Vec<Hit>, ProviderError> {
        let parsed = json(body);
        if let Ok(json) = &parsed
            && json.get("references").is_none()
            && let Some(code) = json.get("code").filter(|c| !c.is_null())
        {
            let message = json
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Err(ProviderError::Refused {
                status,
                message: bounds::text::escape_controls(&format!("{code}: {message}")).into_owned(),
            });
        }
        if status != 200 {
            return Err(refused(status, body));
        }
        hits_at(&parsed?, "/references", "url")
    }
}

/// SerpApi: `GET {endpoint}?engine=google&q=…&num=N&api_key=…`; results in
/// `organic_results[].link`; errors as `{"error": …}` (429 when the searches ran out).
struct Serpapi;

impl SearchApi for Serpapi {
    fn request(
        &self,
        client: &reqwest::Client,
        settings: &ProviderSettings,
        query: &str,
    ) -> reqwest::RequestBuilder {
        client
            .get(with_query(
                settings.endpoint().unwrap_or_default(),
                &[
                    ("engine", "google"),
                    ("q", query),
                    ("num", &settings.results.to_string()),
                    ("api_key", settings.key()),
                ],
            ))
            .header("Accept", "application/json")
    }

    fn parse(&self, status: u16, body: &[u8]) -> Result<Vec<Hit>, ProviderError> {
        let parsed = json(body);
        if let Ok(json) = &parsed
            && let Some(Value::String(error)) = json.get("error")
            // "Google hasn't returned any results" is an empty success, not an error.
            && !error.contains("hasn't returned any results")
        {
            return Err(ProviderError::Refused {
                status,
                message: bounds::text::escape_controls(error).into_owned(),
            });
        }
        if status != 200 {
            return Err(refused(status, body));
        }
        hits_at(&parsed?, "/organic_results", "link")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_queries_are_quoted_once() {
        assert_eq!(exact_query("铜铃无风自动"), "\"铜铃无风自动\"");
        assert_eq!(exact_query("a \"b\" c"), "\"a b c\"");
    }

    #[test]
    fn quota_wordings_are_recognised() {
        assert!(says_quota("Your account has run out of searches."));
        assert!(says_quota("Request rate limit exceeded for plan"));
        assert!(says_quota("216xxx: 今日免费额度已用完"));
        assert!(!says_quota("Invalid API key"));
    }

    #[test]
    fn settings_need_an_endpoint_and_a_key_where_the_api_does() {
        let searxng = ProviderSettings::new(ProviderKind::Searxng, None, None);
        assert_eq!(searxng.validate().unwrap_err().key(), "endpoint");
        let searxng = ProviderSettings::new(
            ProviderKind::Searxng,
            Some("http://127.0.0.1:8888".into()),
            None,
        );
        assert!(searxng.validate().is_ok());
        let brave = ProviderSettings::new(ProviderKind::Brave, None, None);
        assert_eq!(brave.validate().unwrap_err().key(), "key");
        let brave = ProviderSettings::new(ProviderKind::Brave, None, Some("k"));
        assert!(brave.validate().is_ok());
        assert_eq!(
            brave.endpoint(),
            Some("https://api.search.brave.com/res/v1/web/search")
        );
        let bad = ProviderSettings::new(ProviderKind::Serpapi, Some("ftp://x".into()), Some("k"));
        assert_eq!(bad.validate().unwrap_err().key(), "endpoint");
    }

    #[test]
    fn malformed_answers_are_parse_errors_not_panics() {
        for kind in [
            ProviderKind::Searxng,
            ProviderKind::Brave,
            ProviderKind::Baidu,
            ProviderKind::Serpapi,
        ] {
            let api = kind.api();
            assert!(matches!(
                api.parse(200, b"<html>"),
                Err(ProviderError::Parse(_))
            ));
            assert!(api.parse(200, b"{}").unwrap().is_empty());
            assert!(matches!(
                api.parse(200, br#"{"results": 1, "web": {"results": "x"}, "references": {}, "organic_results": 2}"#),
                Err(ProviderError::Parse(_))
            ));
        }
    }
}
