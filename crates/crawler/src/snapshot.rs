//! Evidence: one fetched response, kept verbatim.
//!
//! A [`Snapshot`] is what the fetcher returns and what a [`SnapshotSink`](crate::SnapshotSink)
//! stores: the body bytes as served ([`Wire`]) and as decoded (content-coding removed, what
//! extraction reads), the decoded body's SHA-256, the request and final URL, every redirect
//! hop, the status, both header sets as sent and received, and the time. Bodies are stored
//! zstd-compressed ([`compress`]) and once per SHA-256; headers are stored as their
//! wire-format block ([`encode_headers`]).

use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use sha2::Digest;
use url::Url;

use crate::error::{Error, Result};

/// zstd level for snapshot bodies: level 3 compresses a 20 KB chapter page to about a quarter
/// at well over 100 MB/s on one core, so it never limits a crawl; higher levels gain a few
/// percent for several times the CPU.
pub const ZSTD_LEVEL: i32 = 3;

/// A SHA-256 digest, shown and parsed as 64 lower-case hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256(pub [u8; 32]);

impl Sha256 {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(sha2::Sha256::digest(bytes).into())
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Display for Sha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sha256({self})")
    }
}

impl FromStr for Sha256 {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::InvalidSetting {
            name: "sha256",
            value: s.to_owned(),
            reason: "expected 64 hex digits".to_owned(),
        };
        if s.len() != 64 || !s.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Self(out))
    }
}

/// Whether [`Snapshot::body`] is the whole body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BodyStatus {
    /// The whole body was read.
    Complete,
    /// The body was cut off at `fetch.max_body_bytes`; the bytes kept are its first part.
    Truncated,
    /// The body was not downloaded: the content type is not one the crawler reads
    /// (`fetch.accept_types`). Headers and status are still evidence.
    NotDownloaded,
}

impl BodyStatus {
    /// Stable lower-case name, for database columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Truncated => "truncated",
            Self::NotDownloaded => "not_downloaded",
        }
    }
}

impl FromStr for BodyStatus {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "complete" => Ok(Self::Complete),
            "truncated" => Ok(Self::Truncated),
            "not_downloaded" => Ok(Self::NotDownloaded),
            other => Err(Error::InvalidSetting {
                name: "body_status",
                value: other.to_owned(),
                reason: "expected complete, truncated or not_downloaded".to_owned(),
            }),
        }
    }
}

/// One redirect response on the way to the final URL.
#[derive(Clone, Debug)]
pub struct RedirectHop {
    /// The URL that answered with a redirect.
    pub url: Url,
    /// Its status (301, 302, 303, 307 or 308).
    pub status: u16,
    /// Its headers, `Location` included.
    pub headers: HeaderMap,
    /// When the redirect response arrived.
    pub fetched_at: DateTime<Utc>,
    /// The peer address, when the connection reported one.
    pub remote_addr: Option<SocketAddr>,
}

/// The body of a response as it came over the wire, beside the decoded [`Snapshot::body`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    /// No content-coding: the bytes served are [`Snapshot::body`].
    Identity,
    /// Content-coded: the bytes served (`Content-Encoding` still applied) and their SHA-256.
    Encoded { bytes: Bytes, sha256: Sha256 },
    /// Fetched before the bytes as served were kept: only the decoded body exists, and the
    /// HTTP client had dropped `Content-Encoding` and `Content-Length` from the headers.
    NotRecorded,
}

/// The HTTP version a request went out in, from its response's: hyper writes `HTTP/1.1` on
/// every HTTP/1 connection (a `HTTP/1.0` server still got a 1.1 request); HTTP/2 and 3 are
/// the same both ways.
pub fn request_version(response_version: &str) -> &'static str {
    match response_version {
        "HTTP/2" => "HTTP/2",
        "HTTP/3" => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// One fetched response, kept as evidence.
///
/// Invariant: `sha256 == Sha256::of(&body)`. The body is the entity after content-coding
/// (gzip, br, deflate, zstd) was removed by [`crate::coding`]; `headers` are as served
/// (`Content-Encoding` and `Content-Length` describe [`Snapshot::wire`], not `body`).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The URL asked for.
    pub request_url: Url,
    /// The URL that answered after all redirects.
    pub final_url: Url,
    /// Each redirect on the way, in order.
    pub redirects: Vec<RedirectHop>,
    /// HTTP status of the final response.
    pub status: u16,
    /// The HTTP version of the final response, like `HTTP/1.1`.
    pub http_version: &'static str,
    /// Response headers of the final response.
    pub headers: HeaderMap,
    /// The request headers of the final request as sent, in order (`Host`, which hyper adds
    /// last on HTTP/1, included).
    pub request_headers: HeaderMap,
    /// The decoded body bytes (see [`BodyStatus`]).
    pub body: Bytes,
    /// The body as served, when it differs from `body`.
    pub wire: Wire,
    /// Whether `body` is complete.
    pub body_status: BodyStatus,
    /// SHA-256 of `body`.
    pub sha256: Sha256,
    /// When the final response's headers arrived.
    pub fetched_at: DateTime<Utc>,
    /// Time from the first request to the end of the body.
    pub elapsed: Duration,
    /// The peer address of the final response.
    pub remote_addr: Option<SocketAddr>,
}

impl Snapshot {
    /// The media type of the final response, lower-case without parameters
    /// (`"text/html"`), if the server sent one.
    pub fn media_type(&self) -> Option<String> {
        media_type(&self.headers)
    }

    /// The raw `Content-Type` header value.
    pub fn content_type(&self) -> Option<&str> {
        header_str(&self.headers, header::CONTENT_TYPE)
    }

    /// The `ETag` to send as `If-None-Match` next time.
    pub fn etag(&self) -> Option<&str> {
        header_str(&self.headers, header::ETAG)
    }

    /// The `Last-Modified` to send as `If-Modified-Since` next time.
    pub fn last_modified(&self) -> Option<&str> {
        header_str(&self.headers, header::LAST_MODIFIED)
    }

    /// How long the server asked us to wait (`Retry-After`, seconds or an HTTP date),
    /// measured from the fetch time.
    pub fn retry_after(&self) -> Option<Duration> {
        retry_after(&self.headers, self.fetched_at)
    }

    /// The body bytes as served, if they were kept.
    pub fn wire_bytes(&self) -> Option<&Bytes> {
        match &self.wire {
            Wire::Identity => Some(&self.body),
            Wire::Encoded { bytes, .. } => Some(bytes),
            Wire::NotRecorded => None,
        }
    }

    /// SHA-256 of [`Snapshot::wire_bytes`].
    pub fn wire_sha256(&self) -> Option<Sha256> {
        match &self.wire {
            Wire::Identity => Some(self.sha256),
            Wire::Encoded { sha256, .. } => Some(*sha256),
            Wire::NotRecorded => None,
        }
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

pub(crate) fn header_str(headers: &HeaderMap, name: HeaderName) -> Option<&str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

pub(crate) fn media_type(headers: &HeaderMap) -> Option<String> {
    let ct = header_str(headers, header::CONTENT_TYPE)?;
    let essence = ct.split(';').next()?.trim().to_ascii_lowercase();
    (!essence.is_empty()).then_some(essence)
}

/// Parses `Retry-After` (delta-seconds or an HTTP date) relative to `now`.
pub fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let value = header_str(headers, header::RETRY_AFTER)?;
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

/// Compresses a body for storage (zstd, [`ZSTD_LEVEL`]).
///
/// # Errors
///
/// [`Error::Io`] if zstd fails, which only happens when out of memory.
pub fn compress(body: &[u8]) -> Result<Vec<u8>> {
    zstd::bulk::compress(body, ZSTD_LEVEL).map_err(|source| Error::Io {
        doing: "compressing a snapshot body",
        source,
    })
}

/// Decompresses a stored body, refusing to grow beyond `max_len` bytes.
///
/// # Errors
///
/// [`Error::CorruptEvidence`] if the bytes are not a zstd frame or decompress to more than
/// `max_len` bytes.
pub fn decompress(stored: &[u8], max_len: usize) -> Result<Vec<u8>> {
    zstd::bulk::decompress(stored, max_len).map_err(|e| Error::CorruptEvidence {
        reason: format!("{e} (limit {max_len} bytes)"),
    })
}

/// The bytes of a body the store gave back: zstd from the database inflated within
/// `max_len`, or the bytes a segment held (the store checked their hash).
///
/// # Errors
///
/// [`Error::CorruptEvidence`] when zstd bytes do not inflate within `max_len`, or a
/// segment's are longer.
pub fn stored_bytes(stored: store::StoredBody, max_len: usize) -> Result<Vec<u8>> {
    match stored.bytes {
        store::BodyBytes::Zstd(zstd) => decompress(&zstd, max_len),
        store::BodyBytes::Plain(bytes) if bytes.len() <= max_len => Ok(bytes),
        store::BodyBytes::Plain(bytes) => Err(Error::CorruptEvidence {
            reason: format!("a body of {} bytes (limit {max_len} bytes)", bytes.len()),
        }),
    }
}

/// Writes headers in wire format, `name: value\r\n` each, in the map's order; values are
/// kept as bytes. This is the form stored in the database and written into WARC records.
pub fn encode_headers(headers: &HeaderMap) -> Vec<u8> {
    let mut out = Vec::with_capacity(headers.len() * 32);
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Parses what [`encode_headers`] wrote (also accepts bare `\n` line ends).
///
/// # Errors
///
/// [`Error::CorruptEvidence`] on a line that is not `name: value` or holds an invalid name.
pub fn decode_headers(block: &[u8]) -> Result<HeaderMap> {
    let mut headers = HeaderMap::new();
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let bad = || Error::CorruptEvidence {
            reason: format!("bad header line {:?}", String::from_utf8_lossy(line)),
        };
        let colon = line.iter().position(|&b| b == b':').ok_or_else(bad)?;
        let name = HeaderName::from_bytes(&line[..colon]).map_err(|_| bad())?;
        let value = line[colon + 1..].trim_ascii();
        headers.append(name, HeaderValue::from_bytes(value).map_err(|_| bad())?);
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_hex_round_trip() {
        let d = Sha256::of(b"abc");
        assert_eq!(
            d.to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.to_string().parse::<Sha256>().unwrap(), d);
        assert!("xyz".parse::<Sha256>().is_err());
    }

    #[test]
    fn zstd_round_trip_and_bound() {
        let body = "第一回　灵根育孕源流出。".repeat(500);
        let stored = compress(body.as_bytes()).unwrap();
        assert!(stored.len() < body.len() / 10);
        assert_eq!(decompress(&stored, body.len()).unwrap(), body.as_bytes());
        assert!(matches!(
            decompress(&stored, 100),
            Err(Error::CorruptEvidence { .. })
        ));
        assert!(decompress(b"not zstd", 100).is_err());
    }

    #[test]
    fn headers_round_trip_with_non_utf8_values() {
        let mut h = HeaderMap::new();
        h.append(
            "content-type",
            HeaderValue::from_static("text/html; charset=gbk"),
        );
        h.append("set-cookie", HeaderValue::from_static("a=1"));
        h.append("set-cookie", HeaderValue::from_static("b=2"));
        h.append(
            "content-disposition",
            HeaderValue::from_bytes(b"attachment; filename=\xb5\xda1.txt").unwrap(),
        );
        let block = encode_headers(&h);
        assert!(block.starts_with(b"content-type: text/html; charset=gbk\r\n"));
        assert_eq!(decode_headers(&block).unwrap(), h);
        assert!(decode_headers(b"no colon here").is_err());
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = DateTime::parse_from_rfc3339("2015-10-21T07:28:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut h = HeaderMap::new();
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("120"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(120)));
        h.insert(
            header::RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:29:30 GMT"),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(90)));
        h.insert(
            header::RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:00:00 GMT"),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
    }

    #[test]
    fn body_status_names_round_trip() {
        for s in [
            BodyStatus::Complete,
            BodyStatus::Truncated,
            BodyStatus::NotDownloaded,
        ] {
            assert_eq!(s.as_str().parse::<BodyStatus>().unwrap(), s);
        }
    }
}
