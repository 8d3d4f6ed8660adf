//! WARC 1.1 (ISO 28500:2017) export of snapshots, and a reader to check what was written.
//!
//! Each [`Snapshot`] becomes, in order: one `response` record per redirect hop, a `request`
//! record, the `response` record and a `metadata` record that refers to it. Digests are
//! SHA-256 in base32 (`sha256:...`), the convention WARC tools read. Records can be written
//! plain or each as its own gzip member (the `.warc.gz` convention, so a reader can seek to
//! any record).
//!
//! A `response` record holds the body as it came over the wire ([`Snapshot::wire`]) under
//! the headers as served, `Content-Encoding` intact, so `WARC-Payload-Digest` is the digest of
//! the bytes the server sent; the `request` record holds the request line and headers as sent.
//! The metadata record gives the decoded body's SHA-256, the one the rest of copyhound uses.
//!
//! What is not verbatim, by necessity: `Transfer-Encoding` is dropped because the HTTP client
//! removes the chunked framing as it reads; redirect hops carry headers only (their small
//! bodies are not kept; they are marked `WARC-Truncated: unspecified`). A snapshot stored
//! before the bytes as served were kept ([`Wire::NotRecorded`]) is written with its decoded
//! body, `Content-Encoding` and `Content-Length` removed from its HTTP header so header and
//! payload agree, and a `WARC-Copyhound-Warning` field saying so (WARC 1.1 allows extension
//! fields; readers ignore them).
//!
//! A snapshot that is a revisit (a `304 Not Modified` answer to a conditional re-fetch,
//! [`WarcWriter::write_revisit`]) is written with a `revisit` record instead of its
//! `response`: profile [`SERVER_NOT_MODIFIED`], the HTTP header as received and no payload,
//! `WARC-Refers-To`, `WARC-Refers-To-Target-URI` and `WARC-Refers-To-Date` naming the
//! `response` record of the capture it confirms and `WARC-Payload-Digest` that capture's (as
//! warcio writes revisits), so a replay tool shows that capture's page at the revisit's time.
//!
//! Screenshots and other things derived from a page are `resource` records under a URI of
//! their own ([`view_uri`]: `urn:view:<page URL>`; [`text_uri`]: `urn:text:<page URL>`),
//! concurrent to the page's response, as web-archiving crawlers write them: under the page's
//! own URL a replay tool would take the newest of them for the page.

use std::io::{BufRead, BufReader, Read, Write};

use chrono::Utc;
use reqwest::header::{self, HeaderMap};
use store::warc::warc_date;

use crate::error::{Error, Result};
use crate::snapshot::{BodyStatus, Sha256, Snapshot, Wire, encode_headers, request_version};

/// `WARC-Profile` of a revisit that a `304 Not Modified` answered (WARC 1.1, 6.7.3).
pub const SERVER_NOT_MODIFIED: &str = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

/// The URIs of what is derived from a page (the store's, which body segments use too).
pub use store::warc::{text_uri, view_uri};

/// The capture a revisit confirms, as its `response` record was (or would be) written by
/// [`WarcWriter::write_snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revisited {
    /// Its `WARC-Target-URI` (the final URL).
    pub target_uri: String,
    /// When it was fetched (its `WARC-Date`).
    pub date: chrono::DateTime<Utc>,
    /// Its `response` record's id.
    pub record: RecordId,
    /// Its decoded body's SHA-256 (what the rest of copyhound names it by).
    pub body_sha256: Sha256,
    /// Its `WARC-Payload-Digest`, when its bytes as served could be read.
    pub payload_digest: Option<String>,
}

impl Revisited {
    /// The capture `snap`, with the payload digest of its response record.
    pub fn of(snap: &Snapshot) -> Self {
        let payload = snap.wire_bytes().unwrap_or(&snap.body);
        Self {
            payload_digest: Some(labelled_digest(payload)),
            ..Self::without_payload(snap.final_url.as_str(), snap.fetched_at, snap.sha256)
        }
    }

    /// A capture known only by its final URL, time and body hash (its bodies no longer
    /// readable): the revisit still names its record.
    pub fn without_payload(
        final_url: &str,
        fetched_at: chrono::DateTime<Utc>,
        body_sha256: Sha256,
    ) -> Self {
        Self {
            target_uri: final_url.to_owned(),
            date: fetched_at,
            record: capture_id("response", final_url, fetched_at, body_sha256),
            body_sha256,
            payload_digest: None,
        }
    }
}

/// The id [`WarcWriter::write_snapshot`] gives a capture's record of `kind`: derived from
/// what the capture is, so a revisit can name its capture's record in any file.
fn capture_id(
    kind: &str,
    url: &str,
    fetched_at: chrono::DateTime<Utc>,
    sha256: Sha256,
) -> RecordId {
    RecordId::derive(&[
        kind.as_bytes(),
        url.as_bytes(),
        warc_date(fetched_at).as_bytes(),
        sha256.to_string().as_bytes(),
    ])
}

/// The field that marks a response record whose payload is a decoded body (see the module
/// docs).
pub const WARNING_FIELD: &str = "WARC-Copyhound-Warning";

const CRLF: &[u8] = b"\r\n";

/// A WARC record id, `<urn:uuid:...>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordId(String);

impl RecordId {
    /// A name-based UUID (RFC 9562 version 8) from SHA-256 of `parts`: exporting the same
    /// snapshot twice gives the same ids, so exports can be compared and deduplicated.
    fn derive(parts: &[&[u8]]) -> Self {
        Self(store::warc::record_id(parts))
    }

    /// The id as written, angle brackets included.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The records written for one snapshot.
#[derive(Clone, Debug)]
pub struct WrittenSnapshot {
    pub redirects: Vec<RecordId>,
    pub request: RecordId,
    pub response: RecordId,
    pub metadata: RecordId,
}

/// Writes WARC records to any `Write` (a file, a `Vec<u8>`, an HTTP response body).
pub struct WarcWriter<W: Write> {
    out: W,
    gzip: bool,
    warcinfo: Option<RecordId>,
    bytes_written: u64,
}

impl<W: Write> WarcWriter<W> {
    /// A writer of uncompressed records.
    pub fn new(out: W) -> Self {
        Self {
            out,
            gzip: false,
            warcinfo: None,
            bytes_written: 0,
        }
    }

    /// A writer that compresses each record as its own gzip member (`.warc.gz`).
    pub fn new_gzip(out: W) -> Self {
        Self {
            gzip: true,
            ..Self::new(out)
        }
    }

    /// Writes the `warcinfo` record that opens a file; later records point to it.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when writing fails.
    pub fn write_warcinfo(&mut self, filename: &str, fields: &[(&str, &str)]) -> Result<RecordId> {
        let now = Utc::now();
        let mut block = Vec::new();
        let software = concat!("copyhound-crawler/", env!("CARGO_PKG_VERSION"));
        for (k, v) in [
            ("software", software),
            ("format", "WARC File Format 1.1"),
            (
                "conformsTo",
                "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            ),
        ]
        .into_iter()
        .chain(fields.iter().copied())
        {
            block.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        let id = RecordId::derive(&[b"warcinfo", filename.as_bytes(), warc_date(now).as_bytes()]);
        let headers = vec![
            ("WARC-Type", "warcinfo".to_owned()),
            ("WARC-Record-ID", id.0.clone()),
            ("WARC-Date", warc_date(now)),
            ("WARC-Filename", filename.to_owned()),
            ("Content-Type", "application/warc-fields".to_owned()),
        ];
        self.write_record(headers, &block, None)?;
        self.warcinfo = Some(id.clone());
        Ok(id)
    }

    /// Writes the records for one snapshot (see the module docs for which).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when writing fails.
    pub fn write_snapshot(&mut self, snap: &Snapshot) -> Result<WrittenSnapshot> {
        self.write_capture(snap, None)
    }

    /// Writes the records for a snapshot that confirms the capture `of` unchanged (the
    /// server said `304 Not Modified`): as [`WarcWriter::write_snapshot`], but a `revisit`
    /// record in place of the `response` (see the module docs);
    /// [`WrittenSnapshot::response`] is its id.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when writing fails.
    pub fn write_revisit(&mut self, snap: &Snapshot, of: &Revisited) -> Result<WrittenSnapshot> {
        self.write_capture(snap, Some(of))
    }

    fn write_capture(
        &mut self,
        snap: &Snapshot,
        of: Option<&Revisited>,
    ) -> Result<WrittenSnapshot> {
        let date = warc_date(snap.fetched_at);
        let id = |kind: &str, url: &str| capture_id(kind, url, snap.fetched_at, snap.sha256);

        let mut redirects = Vec::with_capacity(snap.redirects.len());
        for hop in &snap.redirects {
            let rid = id("redirect", hop.url.as_str());
            let block = http_response_head(snap.http_version, hop.status, &hop.headers);
            let mut headers = vec![
                ("WARC-Type", "response".to_owned()),
                ("WARC-Record-ID", rid.0.clone()),
                ("WARC-Date", warc_date(hop.fetched_at)),
                ("WARC-Target-URI", hop.url.to_string()),
            ];
            if let Some(addr) = hop.remote_addr {
                headers.push(("WARC-IP-Address", addr.ip().to_string()));
            }
            headers.push(("WARC-Truncated", "unspecified".to_owned()));
            headers.push((
                "Content-Type",
                "application/http;msgtype=response".to_owned(),
            ));
            self.write_record(headers, &block, Some(&[]))?;
            redirects.push(rid);
        }

        let response = id(
            if of.is_some() { "revisit" } else { "response" },
            snap.final_url.as_str(),
        );
        let request = id("request", snap.final_url.as_str());
        let metadata = id("metadata", snap.final_url.as_str());

        let req_block = http_request_head(snap);
        let headers = vec![
            ("WARC-Type", "request".to_owned()),
            ("WARC-Record-ID", request.0.clone()),
            ("WARC-Date", date.clone()),
            ("WARC-Target-URI", snap.final_url.to_string()),
            ("WARC-Concurrent-To", response.0.clone()),
            (
                "Content-Type",
                "application/http;msgtype=request".to_owned(),
            ),
        ];
        self.write_record(headers, &req_block, Some(&[]))?;

        let mut headers = vec![
            (
                "WARC-Type",
                if of.is_some() { "revisit" } else { "response" }.to_owned(),
            ),
            ("WARC-Record-ID", response.0.clone()),
            ("WARC-Date", date.clone()),
            ("WARC-Target-URI", snap.final_url.to_string()),
        ];
        if let Some(addr) = snap.remote_addr {
            headers.push(("WARC-IP-Address", addr.ip().to_string()));
        }
        let mut fields = format!(
            "request-url: {}\r\nbody-status: {}\r\nbody-sha256: {}\r\nfetch-duration-ms: {}\r\n",
            snap.request_url,
            snap.body_status.as_str(),
            snap.sha256,
            snap.elapsed.as_millis()
        );
        if let Some(of) = of {
            // The header as received and nothing else: a 304 has no payload, and the
            // payload digest is the confirmed capture's, which the replay is of.
            headers.extend([
                ("WARC-Profile", SERVER_NOT_MODIFIED.to_owned()),
                ("WARC-Refers-To", of.record.0.clone()),
                ("WARC-Refers-To-Target-URI", of.target_uri.clone()),
                ("WARC-Refers-To-Date", warc_date(of.date)),
            ]);
            if let Some(digest) = &of.payload_digest {
                headers.push(("WARC-Payload-Digest", digest.clone()));
            }
            headers.push((
                "Content-Type",
                "application/http;msgtype=response".to_owned(),
            ));
            let block = http_response_head(snap.http_version, snap.status, &snap.headers);
            self.write_record(headers, &block, None)?;
            fields.push_str(&format!(
                "revisit-of-sha256: {}\r\nrevisit-of-date: {}\r\n",
                of.body_sha256,
                warc_date(of.date)
            ));
        } else {
            let (payload, served_headers, warning) = match snap.wire_bytes() {
                Some(wire) => (wire, std::borrow::Cow::Borrowed(&snap.headers), None),
                None => {
                    let mut h = snap.headers.clone();
                    h.remove(header::CONTENT_ENCODING);
                    h.remove(header::CONTENT_LENGTH);
                    let note = "payload is the body with content-coding removed; the bytes as \
                                served were not kept when this snapshot was fetched";
                    (&snap.body, std::borrow::Cow::Owned(h), Some(note))
                }
            };
            let mut block = http_response_head(snap.http_version, snap.status, &served_headers);
            block.extend_from_slice(payload);
            if let Some(note) = warning {
                headers.push((WARNING_FIELD, note.to_owned()));
            }
            match snap.body_status {
                BodyStatus::Complete => {}
                BodyStatus::Truncated => headers.push(("WARC-Truncated", "length".to_owned())),
                BodyStatus::NotDownloaded => {
                    headers.push(("WARC-Truncated", "unspecified".to_owned()))
                }
            }
            headers.push((
                "Content-Type",
                "application/http;msgtype=response".to_owned(),
            ));
            self.write_record(headers, &block, Some(&payload[..]))?;
        }

        match &snap.wire {
            Wire::Identity => fields.push_str("wire-bytes: identity (the decoded body)\r\n"),
            Wire::Encoded { sha256, bytes } => fields.push_str(&format!(
                "wire-sha256: {sha256}\r\nwire-length: {}\r\n",
                bytes.len()
            )),
            Wire::NotRecorded => fields.push_str("wire-bytes: not recorded\r\n"),
        }
        for hop in &snap.redirects {
            fields.push_str(&format!("redirect: {} {}\r\n", hop.status, hop.url));
        }
        let headers = vec![
            ("WARC-Type", "metadata".to_owned()),
            ("WARC-Record-ID", metadata.0.clone()),
            ("WARC-Date", date),
            ("WARC-Target-URI", snap.final_url.to_string()),
            ("WARC-Refers-To", response.0.clone()),
            ("Content-Type", "application/warc-fields".to_owned()),
        ];
        self.write_record(headers, fields.as_bytes(), None)?;

        Ok(WrittenSnapshot {
            redirects,
            request,
            response,
            metadata,
        })
    }

    /// Writes a `resource` record: `block` (a screenshot's PNG, say, of media type
    /// `content_type`) made of the page at `target` at `date`, concurrent to the record
    /// `concurrent_to` (the page's `response`).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when writing fails.
    pub fn write_resource(
        &mut self,
        target: &str,
        date: chrono::DateTime<Utc>,
        content_type: &str,
        block: &[u8],
        concurrent_to: Option<&RecordId>,
    ) -> Result<RecordId> {
        let when = warc_date(date);
        let id = RecordId::derive(&[
            b"resource",
            target.as_bytes(),
            when.as_bytes(),
            labelled_digest(block).as_bytes(),
        ]);
        let mut headers = vec![
            ("WARC-Type", "resource".to_owned()),
            ("WARC-Record-ID", id.0.clone()),
            ("WARC-Date", when),
            ("WARC-Target-URI", target.to_owned()),
        ];
        if let Some(to) = concurrent_to {
            headers.push(("WARC-Concurrent-To", to.0.clone()));
        }
        headers.push(("Content-Type", content_type.to_owned()));
        self.write_record(headers, block, Some(block))?;
        Ok(id)
    }

    /// Bytes written so far (compressed size for gzip writers).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Flushes and returns the inner writer.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when flushing fails.
    pub fn finish(mut self) -> Result<W> {
        self.out.flush().map_err(io("flushing a warc file"))?;
        Ok(self.out)
    }

    fn write_record(
        &mut self,
        mut fields: Vec<(&str, String)>,
        block: &[u8],
        payload: Option<&[u8]>,
    ) -> Result<()> {
        if let Some(info) = &self.warcinfo
            && !fields
                .iter()
                .any(|(k, v)| *k == "WARC-Type" && v == "warcinfo")
        {
            fields.push(("WARC-Warcinfo-ID", info.0.clone()));
        }
        let rec = store::warc::encode_record(&fields, block, payload, self.gzip)
            .map_err(io("compressing a warc record"))?;
        self.out
            .write_all(&rec)
            .map_err(io("writing a warc record"))?;
        let written = rec.len();
        self.bytes_written += written as u64;
        Ok(())
    }
}

fn io(doing: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { doing, source }
}

fn http_response_head(version: &str, status: u16, headers: &HeaderMap) -> Vec<u8> {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut kept = headers.clone();
    kept.remove(header::TRANSFER_ENCODING);
    let mut out = format!("{version} {status} {reason}\r\n").into_bytes();
    out.extend_from_slice(&encode_headers(&kept));
    out.extend_from_slice(CRLF);
    out
}

fn http_request_head(snap: &Snapshot) -> Vec<u8> {
    let url = &snap.final_url;
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let version = request_version(snap.http_version);
    let mut out = format!("GET {target} {version}\r\n").into_bytes();
    out.extend_from_slice(&encode_headers(&snap.request_headers));
    out.extend_from_slice(CRLF);
    out
}

/// `sha256:` and the base32 digest of `bytes` (the store's, which body segments use too).
pub use store::warc::labelled_digest;

/// One record read back from a WARC file.
#[derive(Clone, Debug)]
pub struct WarcRecord {
    /// `WARC/1.1` or `WARC/1.0`.
    pub version: String,
    /// Named fields in file order.
    pub fields: Vec<(String, String)>,
    /// The record block (`Content-Length` bytes).
    pub block: Vec<u8>,
}

impl WarcRecord {
    /// The first field called `name` (case-insensitive).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `WARC-Type`.
    pub fn record_type(&self) -> Option<&str> {
        self.field("WARC-Type")
    }

    /// For `application/http` records: the message body after the HTTP header.
    pub fn http_payload(&self) -> Option<&[u8]> {
        if !self.field("Content-Type")?.starts_with("application/http") {
            return None;
        }
        let end = self.block.windows(4).position(|w| w == b"\r\n\r\n")?;
        Some(&self.block[end + 4..])
    }

    /// Checks `WARC-Block-Digest` and, where present, `WARC-Payload-Digest`.
    ///
    /// # Errors
    ///
    /// [`Error::Warc`] naming the digest that does not match.
    pub fn verify_digests(&self) -> Result<()> {
        let check = |field: &str, bytes: &[u8]| -> Result<()> {
            match self.field(field) {
                Some(want) if want != labelled_digest(bytes) => Err(Error::Warc {
                    offset: 0,
                    reason: format!(
                        "{field} {want} does not match the content of {}",
                        self.field("WARC-Record-ID").unwrap_or("?")
                    ),
                }),
                _ => Ok(()),
            }
        };
        check("WARC-Block-Digest", &self.block)?;
        // A revisit's payload digest is its capture's, whose payload is elsewhere.
        if self.record_type() != Some("revisit")
            && let Some(payload) = self.http_payload()
        {
            check("WARC-Payload-Digest", payload)?;
        }
        Ok(())
    }
}

/// Reads records from a WARC file, plain or gzip (detected from the first bytes).
pub struct WarcReader {
    inner: Box<dyn BufRead>,
    offset: u64,
}

impl WarcReader {
    /// A reader over `input`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the first bytes cannot be read.
    pub fn new(input: impl Read + 'static) -> Result<Self> {
        let mut buffered = BufReader::new(input);
        let head = buffered.fill_buf().map_err(io("reading a warc file"))?;
        let inner: Box<dyn BufRead> = if head.starts_with(&[0x1f, 0x8b]) {
            Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(
                buffered,
            )))
        } else {
            Box::new(buffered)
        };
        Ok(Self { inner, offset: 0 })
    }

    fn malformed(&self, reason: impl Into<String>) -> Error {
        Error::Warc {
            offset: self.offset,
            reason: reason.into(),
        }
    }

    fn read_line(&mut self) -> Result<Option<Vec<u8>>> {
        let mut line = Vec::new();
        let n = self
            .inner
            .read_until(b'\n', &mut line)
            .map_err(io("reading a warc file"))?;
        if n == 0 {
            return Ok(None);
        }
        self.offset += n as u64;
        if line.ends_with(b"\r\n") {
            line.truncate(line.len() - 2);
        } else if line.ends_with(b"\n") {
            line.truncate(line.len() - 1);
        }
        Ok(Some(line))
    }

    fn next_record(&mut self) -> Result<Option<WarcRecord>> {
        let version = loop {
            match self.read_line()? {
                None => return Ok(None),
                Some(l) if l.is_empty() => continue,
                Some(l) => break l,
            }
        };
        let start = self.offset;
        if !version.starts_with(b"WARC/") {
            return Err(self.malformed(format!(
                "expected a WARC/ version line, found {:?}",
                String::from_utf8_lossy(&version[..version.len().min(40)])
            )));
        }
        let mut fields = Vec::new();
        loop {
            let line = self
                .read_line()?
                .ok_or_else(|| self.malformed("end of file inside record header"))?;
            if line.is_empty() {
                break;
            }
            let text =
                String::from_utf8(line).map_err(|_| self.malformed("non-utf-8 header field"))?;
            let (k, v) = text
                .split_once(':')
                .ok_or_else(|| self.malformed(format!("header line without a colon: {text:?}")))?;
            fields.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        let len: usize = fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("Content-Length"))
            .and_then(|(_, v)| v.parse().ok())
            .ok_or_else(|| self.malformed("record without a valid Content-Length"))?;
        let mut block = vec![0u8; len];
        self.inner.read_exact(&mut block).map_err(|_| Error::Warc {
            offset: start,
            reason: format!("block shorter than its Content-Length {len}"),
        })?;
        self.offset += len as u64;
        let mut tail = [0u8; 4];
        self.inner
            .read_exact(&mut tail)
            .map_err(|_| self.malformed("record not followed by CRLF CRLF"))?;
        if &tail != b"\r\n\r\n" {
            return Err(self.malformed("record not followed by CRLF CRLF"));
        }
        self.offset += 4;
        Ok(Some(WarcRecord {
            version: String::from_utf8_lossy(&version).into_owned(),
            fields,
            block,
        }))
    }
}

impl Iterator for WarcReader {
    type Item = Result<WarcRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_ids_are_stable_uuid_v8() {
        let a = RecordId::derive(&[b"x", b"y"]);
        assert_eq!(a, RecordId::derive(&[b"x", b"y"]));
        assert_ne!(a, RecordId::derive(&[b"xy"]));
        let s = a.as_str();
        assert!(
            s.starts_with("<urn:uuid:") && s.ends_with('>') && s.len() == 47,
            "{s}"
        );
        assert_eq!(&s[24..25], "8");
    }

    #[test]
    fn reader_rejects_broken_input() {
        let err = WarcReader::new(&b"HTTP/1.1 200 OK\r\n\r\n"[..])
            .unwrap()
            .next()
            .unwrap()
            .unwrap_err();
        assert!(
            err.to_string().contains("expected a WARC/ version line"),
            "{err}"
        );
        let short = b"WARC/1.1\r\nContent-Length: 10\r\n\r\nabc";
        assert!(
            WarcReader::new(&short[..])
                .unwrap()
                .next()
                .unwrap()
                .is_err()
        );
        let no_len = b"WARC/1.1\r\nWARC-Type: resource\r\n\r\n\r\n\r\n";
        assert!(
            WarcReader::new(&no_len[..])
                .unwrap()
                .next()
                .unwrap()
                .is_err()
        );
    }
}
