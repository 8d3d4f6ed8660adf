//! Fetching one URL into a [`Snapshot`]: timeouts, a body cap enforced while streaming,
//! redirects followed by hand (each hop re-checked by the safety guard), content-type
//! filtering and conditional requests.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use chrono::Utc;
use fontmap::FontSettings;
use reqwest::header::{self, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use url::{Host, Url};

use reqwest::cookie::{CookieStore, Jar};

use crate::coding::{self, DecodeLimits};
use crate::error::{Error, Result, TimeoutPhase};
use crate::safety::{AddressPolicy, GuardedResolver, ResolveFailure, SafetySettings};
use crate::snapshot::{
    BodyStatus, RedirectHop, Sha256, Snapshot, Wire, media_type, request_version,
};

/// The codings offered in `Accept-Encoding`: all that [`crate::coding`] undoes. Set on
/// every request by hand, as is every other header but `Host` (see
/// [`Fetcher::request_headers`]), so the recorded request is the one sent.
const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";

/// Wire bodies up to this size are decoded on the fetching task; larger ones on a blocking
/// thread.
const DECODE_INLINE_BYTES: usize = 64 * 1024;

/// Fetch settings.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct FetchSettings {
    /// Product token in the User-Agent and the agent robots.txt groups are matched against.
    pub agent: String,
    /// Where site operators learn who we are and how to reach us; part of the User-Agent.
    pub contact_url: String,
    /// TCP and TLS set-up.
    #[serde(with = "crate::duration_serde")]
    pub connect_timeout: Duration,
    /// Longest silence while reading; a slow-drip server that trickles bytes is cut by `timeout`.
    #[serde(with = "crate::duration_serde")]
    pub read_timeout: Duration,
    /// The whole fetch: every redirect hop and the body.
    #[serde(with = "crate::duration_serde")]
    pub timeout: Duration,
    /// Bytes of body kept; the rest is not read and the snapshot is marked truncated.
    pub max_body_bytes: u64,
    /// Bytes a body may decode to once its `Content-Encoding` is undone; more is refused
    /// as a decompression bomb.
    pub max_decoded_bytes: u64,
    /// Decoded bytes allowed per wire byte, checked once a body passes 1 MiB decoded.
    pub max_decoding_ratio: u64,
    /// Redirects followed before giving up.
    pub max_redirects: usize,
    /// Media types whose bodies are downloaded; others are recorded with headers only.
    /// A response without `Content-Type` is downloaded and judged by its bytes.
    pub accept_types: Vec<String>,
    /// `Accept-Language` sent with each request.
    pub accept_language: String,
    /// Keep cookies between requests of this fetcher (gets through simple cookie gates; the
    /// `Cookie` header sent is in the recorded request headers).
    pub cookies: bool,
    /// Which addresses may be connected to.
    pub safety: SafetySettings,
}

impl Default for FetchSettings {
    fn default() -> Self {
        Self {
            agent: "copyhound".to_owned(),
            contact_url: "https://example.invalid/copyhound/crawler".to_owned(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(20),
            timeout: Duration::from_secs(60),
            max_body_bytes: 5 * 1024 * 1024,
            // Room for a 5 MiB wire body of markup, which gzip shrinks three to tenfold;
            // a legitimate page decoding past 16 MiB is not one a reader would open.
            max_decoded_bytes: 16 * 1024 * 1024,
            // HTML compresses up to about 20:1; 50 leaves room and stops a bomb (1000:1
            // for gzip, far more for br and zstd) after 50 times its size.
            max_decoding_ratio: 50,
            max_redirects: 10,
            accept_types: [
                "text/html",
                "application/xhtml+xml",
                "text/plain",
                "application/xml",
                "text/xml",
            ]
            .map(str::to_owned)
            .to_vec(),
            accept_language: "zh-CN,zh;q=0.9,en;q=0.8".to_owned(),
            cookies: true,
            safety: SafetySettings::default(),
        }
    }
}

impl FetchSettings {
    /// Checks the timeouts and limits; keys are relative to `[crawler.fetch]`.
    /// (`agent` and `contact_url` are checked by [`Fetcher::new`], which builds the header.)
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and what is allowed.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        bounds::at_least("connect_timeout", self.connect_timeout, bounds::MIN_TIMEOUT)?;
        bounds::at_least("read_timeout", self.read_timeout, bounds::MIN_TIMEOUT)?;
        bounds::at_least("timeout", self.timeout, bounds::MIN_TIMEOUT)?;
        bounds::at_least("max_body_bytes", self.max_body_bytes, 1)?;
        bounds::at_least("max_decoded_bytes", self.max_decoded_bytes, 1)?;
        bounds::at_least("max_decoding_ratio", self.max_decoding_ratio, 1)
    }
}

/// Validators from an earlier fetch, sent as `If-None-Match` / `If-Modified-Since`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Validators {
    /// The validators a snapshot offers, if any.
    pub fn from_snapshot(snapshot: &Snapshot) -> Option<Self> {
        let v = Self {
            etag: snapshot.etag().map(str::to_owned),
            last_modified: snapshot.last_modified().map(str::to_owned),
        };
        (v.etag.is_some() || v.last_modified.is_some()).then_some(v)
    }
}

/// One fetch to make.
#[derive(Clone, Debug)]
pub struct FetchRequest {
    /// The URL.
    pub url: Url,
    /// Validators for a conditional re-fetch (only sent to the first hop).
    pub validators: Option<Validators>,
    /// A body cap for this request instead of `max_body_bytes` (robots.txt uses its own).
    pub max_body_bytes: Option<u64>,
    /// Download a JSON body too (`application/json` and `+json` types), beside the
    /// configured `accept_types`: a page's content endpoint answers in JSON.
    pub accept_json: bool,
    /// Download a font body too (`font/*` and the older `application/font-*`,
    /// `application/x-font-*` and `application/octet-stream` labels servers give fonts): a
    /// page's `@font-face` ([`extract::fonts`]).
    pub accept_font: bool,
    /// Download an SVG body too (`image/svg+xml`): a page's glyph sprite
    /// ([`extract::sprite`]).
    pub accept_svg: bool,
    /// Download an image body too (`image/*` and `application/octet-stream`): a page's
    /// images read by OCR ([`extract::ocr`]).
    pub accept_image: bool,
}

impl FetchRequest {
    /// A plain GET of `url`.
    pub fn get(url: Url) -> Self {
        Self {
            url,
            validators: None,
            max_body_bytes: None,
            accept_json: false,
            accept_font: false,
            accept_svg: false,
            accept_image: false,
        }
    }
}

/// Whether a response's media type may be a font: `font/*`, the older `application/font-*`
/// and `application/x-font-*`, `application/vnd.ms-opentype`, and `application/octet-stream`,
/// which many servers give any binary file.
pub fn is_font_type(media_type: &str) -> bool {
    media_type.starts_with("font/")
        || media_type.starts_with("application/font-")
        || media_type.starts_with("application/x-font-")
        || matches!(
            media_type,
            "application/vnd.ms-opentype" | "application/octet-stream"
        )
}

/// The request for a page's font ([`extract::fonts`]): a font body accepted, capped at
/// `max_font_bytes`.
pub fn font_request(url: Url, settings: &FontSettings) -> FetchRequest {
    FetchRequest {
        max_body_bytes: Some(settings.max_font_bytes),
        accept_font: true,
        ..FetchRequest::get(url)
    }
}

/// The request for a page's glyph sprite ([`extract::sprite`]): an SVG body accepted, capped
/// at [`extract::sprite::MAX_SVG_BYTES`].
pub fn sprite_request(url: Url) -> FetchRequest {
    FetchRequest {
        max_body_bytes: Some(extract::sprite::MAX_SVG_BYTES as u64),
        accept_svg: true,
        ..FetchRequest::get(url)
    }
}

/// Whether a response's media type may be an image: `image/*`, or `application/octet-stream`,
/// which many servers give any binary file (the image's own bytes say what it is).
pub fn is_image_type(media_type: &str) -> bool {
    media_type.starts_with("image/") || media_type == "application/octet-stream"
}

/// The request for a page's image ([`extract::ocr`]): an image body accepted, capped at
/// `max_image_bytes`.
pub fn image_request(url: Url, settings: &extract::OcrSettings) -> FetchRequest {
    FetchRequest {
        max_body_bytes: Some(settings.max_image_bytes),
        accept_image: true,
        ..FetchRequest::get(url)
    }
}

/// The HTTP client with the crawler's rules built in. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Fetcher {
    client: reqwest::Client,
    settings: Arc<FetchSettings>,
    policy: Arc<AddressPolicy>,
    user_agent: HeaderValue,
    /// Cookies kept between requests, read before each one so the `Cookie` header is set
    /// (and recorded) by us rather than added by the client.
    cookies: Option<Arc<Jar>>,
}

impl Fetcher {
    /// Builds the client.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`] for timeouts or limits [`FetchSettings::validate`] refuses;
    /// [`Error::InvalidSetting`] for an agent token that is not a product token, a contact
    /// URL that is not http(s), or a client that cannot be built (no TLS roots).
    pub fn new(settings: FetchSettings) -> Result<Self> {
        settings.validate().map_err(|e| e.in_section("fetch"))?;
        if settings.agent.is_empty()
            || !settings
                .agent
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(Error::InvalidSetting {
                name: "fetch.agent",
                value: settings.agent.clone(),
                reason: "use letters, digits, '-' and '_' only (it is matched against robots.txt)"
                    .to_owned(),
            });
        }
        let contact_ok =
            Url::parse(&settings.contact_url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
        if !contact_ok {
            return Err(Error::InvalidSetting {
                name: "fetch.contact_url",
                value: settings.contact_url.clone(),
                reason: "must be an http(s) url where site operators can reach us".to_owned(),
            });
        }
        let ua = format!(
            "Mozilla/5.0 (compatible; {}/{}; +{})",
            settings.agent,
            env!("CARGO_PKG_VERSION"),
            settings.contact_url
        );
        let user_agent = HeaderValue::from_str(&ua).map_err(|e| Error::InvalidSetting {
            name: "fetch.contact_url",
            value: settings.contact_url.clone(),
            reason: e.to_string(),
        })?;
        let policy = Arc::new(AddressPolicy::new(&settings.safety));
        let cookies = settings.cookies.then(|| Arc::new(Jar::default()));
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // Bodies are kept as served; `coding::decode` undoes Content-Encoding, bounded.
            .no_gzip()
            .no_brotli()
            .no_deflate()
            .no_zstd()
            // A proxy would connect on our behalf and bypass the address checks.
            .no_proxy()
            .dns_resolver(GuardedResolver::new(Arc::clone(&policy)))
            .connect_timeout(settings.connect_timeout)
            .read_timeout(settings.read_timeout)
            .referer(false)
            .pool_max_idle_per_host(8);
        if let Some(jar) = &cookies {
            builder = builder.cookie_provider(Arc::clone(jar));
        }
        let client = builder.build().map_err(|e| Error::InvalidSetting {
            name: "fetch",
            value: "http client".to_owned(),
            reason: error_chain(&e),
        })?;
        Ok(Self {
            client,
            settings: Arc::new(settings),
            policy,
            user_agent,
            cookies,
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// The User-Agent header sent.
    pub fn user_agent(&self) -> &str {
        self.user_agent.to_str().unwrap_or_default()
    }

    /// Fetches `request.url`, following redirects.
    ///
    /// A response with any status is a success: 404s and 500s are evidence too.
    ///
    /// # Errors
    ///
    /// [`Error::AddressRefused`] (first hop or any redirect), [`Error::Dns`],
    /// [`Error::Timeout`], [`Error::Connect`], [`Error::Transport`], redirect errors
    /// ([`Error::TooManyRedirects`], [`Error::RedirectLoop`], [`Error::BadRedirect`]) and
    /// [`Error::UnsupportedScheme`].
    #[tracing::instrument(skip_all, fields(url = %request.url))]
    pub async fn fetch(&self, request: &FetchRequest) -> Result<Snapshot> {
        let started = Instant::now();
        match tokio::time::timeout(self.settings.timeout, self.fetch_hops(request, started)).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout {
                url: request.url.to_string(),
                phase: TimeoutPhase::Total,
                after: self.settings.timeout,
            }),
        }
    }

    /// POSTs `body` to `url` with `headers` (a webhook's delivery) and returns the status.
    /// The URL passes the same address rules as a fetch (an IP literal here, every resolved
    /// address in the resolver), redirects are not followed (a 3xx is returned as it is, so
    /// a hook cannot bounce us to an address we would refuse), and the response body is
    /// not read.
    ///
    /// # Errors
    /// As [`Fetcher::fetch`], but for redirects.
    #[tracing::instrument(skip_all, fields(url = %url, bytes = body.len()))]
    pub async fn post(&self, url: &Url, headers: HeaderMap, body: Vec<u8>) -> Result<u16> {
        self.check_target(url)?;
        let mut sent = headers;
        sent.insert(header::USER_AGENT, self.user_agent.clone());
        let request = self
            .client
            .post(url.clone())
            .headers(sent)
            .body(body)
            .send();
        match tokio::time::timeout(self.settings.timeout, request).await {
            Ok(Ok(response)) => Ok(response.status().as_u16()),
            Ok(Err(e)) => Err(self.classify(e, url)),
            Err(_) => Err(Error::Timeout {
                url: url.to_string(),
                phase: TimeoutPhase::Total,
                after: self.settings.timeout,
            }),
        }
    }

    async fn fetch_hops(&self, request: &FetchRequest, started: Instant) -> Result<Snapshot> {
        let mut url = request.url.clone();
        url.set_fragment(None);
        let mut visited = HashSet::from([url.clone()]);
        let mut redirects = Vec::new();
        loop {
            self.check_target(&url)?;
            let validators = if redirects.is_empty() {
                request.validators.as_ref()
            } else {
                None
            };
            let sent = self.request_headers(validators, &url);
            let mut response = self
                .client
                .get(url.clone())
                .headers(sent.clone())
                .send()
                .await
                .map_err(|e| self.classify(e, &url))?;
            let fetched_at = Utc::now();
            let status = response.status().as_u16();
            let location = response.headers().get(header::LOCATION).cloned();
            if let (true, Some(location)) =
                (matches!(status, 301 | 302 | 303 | 307 | 308), location)
            {
                let bad = || Error::BadRedirect {
                    url: url.to_string(),
                    location: String::from_utf8_lossy(location.as_bytes()).into_owned(),
                };
                let mut target = location
                    .to_str()
                    .ok()
                    .and_then(|l| url.join(l.trim()).ok())
                    .ok_or_else(bad)?;
                target.set_fragment(None);
                redirects.push(RedirectHop {
                    url: url.clone(),
                    status,
                    headers: response.headers().clone(),
                    fetched_at,
                    remote_addr: response.remote_addr(),
                });
                if redirects.len() > self.settings.max_redirects {
                    return Err(Error::TooManyRedirects {
                        url: request.url.to_string(),
                        limit: self.settings.max_redirects,
                    });
                }
                if !visited.insert(target.clone()) {
                    return Err(Error::RedirectLoop {
                        url: url.to_string(),
                        target: target.to_string(),
                    });
                }
                tracing::debug!(from = %url, to = %target, status, "redirect");
                url = target;
                continue;
            }

            let limit = request
                .max_body_bytes
                .unwrap_or(self.settings.max_body_bytes);
            let accepted = media_type(response.headers()).is_none_or(|m| {
                self.settings.accept_types.contains(&m)
                    || (request.accept_json && (m == "application/json" || m.ends_with("+json")))
                    || (request.accept_font && is_font_type(&m))
                    || (request.accept_svg && m == "image/svg+xml")
                    || (request.accept_image && is_image_type(&m))
            });
            let (wire, body_status) = if accepted {
                read_capped(&mut response, limit)
                    .await
                    .map_err(|e| self.classify(e, &url))?
            } else {
                (Bytes::new(), BodyStatus::NotDownloaded)
            };
            if body_status == BodyStatus::Truncated {
                tracing::info!(url = %url, limit, "body cut off at the size limit");
            }
            let (body, wire) = self
                .decode_body(&url, response.headers(), wire, body_status)
                .await?;
            let http_version = version_str(response.version());
            let mut request_headers = sent;
            // hyper adds `Host` last on an HTTP/1 connection (HTTP/2 sends `:authority`).
            if request_version(http_version) == "HTTP/1.1"
                && let Ok(host) = HeaderValue::from_str(&host_header(&url))
            {
                request_headers.insert(header::HOST, host);
            }
            return Ok(Snapshot {
                request_url: request.url.clone(),
                final_url: url,
                redirects,
                status,
                http_version,
                headers: response.headers().clone(),
                request_headers,
                sha256: Sha256::of(&body),
                body,
                wire,
                body_status,
                fetched_at,
                elapsed: started.elapsed(),
                remote_addr: response.remote_addr(),
            });
        }
    }

    /// The entity of a response read as served: `Content-Encoding` undone within
    /// `max_decoded_bytes` and `max_decoding_ratio`, the wire bytes kept beside it.
    async fn decode_body(
        &self,
        url: &Url,
        headers: &HeaderMap,
        wire: Bytes,
        status: BodyStatus,
    ) -> Result<(Bytes, Wire)> {
        if status == BodyStatus::NotDownloaded {
            return Ok((wire, Wire::Identity));
        }
        let codings = coding::codings(url.as_str(), headers)?;
        if codings.is_empty() {
            return Ok((wire, Wire::Identity));
        }
        let limits = DecodeLimits {
            max_bytes: self.settings.max_decoded_bytes,
            max_ratio: self.settings.max_decoding_ratio,
        };
        let complete = status == BodyStatus::Complete;
        // Inflating up to max_decoded_bytes is CPU work: past a small body it runs on a
        // blocking thread, so a bomb being refused does not hold up the other fetches.
        let (body, wire) = if wire.len() <= DECODE_INLINE_BYTES {
            let body = coding::decode(url.as_str(), &codings, &wire, complete, limits)?;
            (body, wire)
        } else {
            let at = url.to_string();
            tokio::task::spawn_blocking(move || {
                let body = coding::decode(&at, &codings, &wire, complete, limits);
                body.map(|b| (b, wire))
            })
            .await
            .map_err(|e| Error::ContentCoding {
                url: url.to_string(),
                coding: "content-encoding".to_owned(),
                reason: format!("decoding stopped: {e}"),
            })??
        };
        Ok((
            Bytes::from(body),
            Wire::Encoded {
                sha256: Sha256::of(&wire),
                bytes: wire,
            },
        ))
    }

    /// Scheme and IP-literal checks; names are checked after DNS by the resolver.
    fn check_target(&self, url: &Url) -> Result<()> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::UnsupportedScheme {
                url: url.to_string(),
                scheme: url.scheme().to_owned(),
            });
        }
        match url.host() {
            Some(Host::Ipv4(ip)) => self.policy.check(&ip.to_string(), ip.into()),
            Some(Host::Ipv6(ip)) => self.policy.check(&ip.to_string(), ip.into()),
            Some(Host::Domain(_)) => Ok(()),
            None => Err(Error::invalid_url(url.as_str(), "no host")),
        }
    }

    /// Every header of a request to `url` but `Host`: set here so that reqwest adds none of
    /// its own (it adds `Accept`, `Accept-Encoding` and `Cookie` only when missing), and the
    /// recorded request is what went over the wire. hyper then adds `Host` on HTTP/1.
    fn request_headers(&self, validators: Option<&Validators>, url: &Url) -> HeaderMap {
        let mut h = HeaderMap::with_capacity(8);
        h.insert(header::USER_AGENT, self.user_agent.clone());
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static(
                "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5",
            ),
        );
        if let Ok(lang) = HeaderValue::from_str(&self.settings.accept_language) {
            h.insert(header::ACCEPT_LANGUAGE, lang);
        }
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static(ACCEPT_ENCODING),
        );
        if let Some(cookie) = self.cookies.as_ref().and_then(|jar| jar.cookies(url)) {
            h.insert(header::COOKIE, cookie);
        }
        if let Some(v) = validators {
            if let Some(etag) = v
                .etag
                .as_deref()
                .and_then(|e| HeaderValue::from_str(e).ok())
            {
                h.insert(header::IF_NONE_MATCH, etag);
            }
            if let Some(lm) = v
                .last_modified
                .as_deref()
                .and_then(|e| HeaderValue::from_str(e).ok())
            {
                h.insert(header::IF_MODIFIED_SINCE, lm);
            }
        }
        h
    }

    fn classify(&self, e: reqwest::Error, url: &Url) -> Error {
        classify(
            e,
            url.to_string(),
            self.settings.connect_timeout,
            self.settings.read_timeout,
        )
    }
}

/// A client's error as ours: the resolver's refusal found in its chain, else a timeout (of
/// `connect` or `read`), a failed connection or a broken transfer of `url`.
pub(crate) fn classify(e: reqwest::Error, url: String, connect: Duration, read: Duration) -> Error {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = source {
        if let Some(failure) = s.downcast_ref::<ResolveFailure>() {
            return failure.clone().into();
        }
        source = s.source();
    }
    if e.is_timeout() {
        let (phase, after) = if e.is_connect() {
            (TimeoutPhase::Connect, connect)
        } else {
            (TimeoutPhase::Read, read)
        };
        return Error::Timeout { url, phase, after };
    }
    let reason = error_chain(&e);
    if e.is_connect() {
        Error::Connect { url, reason }
    } else {
        Error::Transport { url, reason }
    }
}

async fn read_capped(
    response: &mut reqwest::Response,
    limit: u64,
) -> reqwest::Result<(Bytes, BodyStatus)> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let hint = response.content_length().map_or(16 * 1024, |n| n as usize);
    let mut body = BytesMut::with_capacity(hint.min(limit).min(1024 * 1024));
    while let Some(chunk) = response.chunk().await? {
        let room = limit - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            // Dropping the response closes the connection; the rest is never read.
            return Ok((body.freeze(), BodyStatus::Truncated));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body.freeze(), BodyStatus::Complete))
}

fn host_header(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

fn version_str(v: reqwest::Version) -> &'static str {
    match v {
        reqwest::Version::HTTP_09 => "HTTP/0.9",
        reqwest::Version::HTTP_10 => "HTTP/1.0",
        reqwest::Version::HTTP_2 => "HTTP/2",
        reqwest::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// The error's sources joined by `": "`, skipping reqwest's own top line (it repeats the URL).
pub(crate) fn error_chain(e: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join(": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_validated() {
        let bad_agent = FetchSettings {
            agent: "copy hound".into(),
            ..FetchSettings::default()
        };
        assert!(matches!(
            Fetcher::new(bad_agent),
            Err(Error::InvalidSetting {
                name: "fetch.agent",
                ..
            })
        ));
        let bad_contact = FetchSettings {
            contact_url: "mailto:me@example.com".into(),
            ..FetchSettings::default()
        };
        assert!(Fetcher::new(bad_contact).is_err());
        let f = Fetcher::new(FetchSettings::default()).unwrap();
        assert!(
            f.user_agent()
                .starts_with("Mozilla/5.0 (compatible; copyhound/")
        );
        assert!(
            f.user_agent()
                .contains("+https://example.invalid/copyhound/crawler")
        );
    }

    #[tokio::test]
    async fn refuses_private_literals_and_other_schemes_without_connecting() {
        let f = Fetcher::new(FetchSettings::default()).unwrap();
        for url in [
            "http://127.0.0.1:9/",
            "http://[::1]:9/",
            "http://169.254.169.254/latest/meta-data/",
            "http://0.0.0.0:9/",
        ] {
            let err = f
                .fetch(&FetchRequest::get(Url::parse(url).unwrap()))
                .await
                .unwrap_err();
            assert!(matches!(err, Error::AddressRefused { .. }), "{url}: {err}");
        }
        let err = f
            .fetch(&FetchRequest::get(
                Url::parse("ftp://example.com/").unwrap(),
            ))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::UnsupportedScheme { .. }));
    }
}
