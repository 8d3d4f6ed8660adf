//! WARC 1.1 (ISO 28500:2017) record framing, shared by the crawler's export
//! (`crawler::warc::WarcWriter` writes every record through [`encode_record`]) and the body
//! segments of an object store ([`crate::BodyStore`]), which read one record back by a ranged
//! read of its gzip member ([`decode_member`]).

use std::io::{Read, Write};

use sha2::Digest;

const CRLF: &[u8] = b"\r\n";

/// One record: its named fields (`WARC-Type`, ...) and the record block
/// (`Content-Length` bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Named fields in the order they were written.
    pub fields: Vec<(String, String)>,
    /// The record block.
    pub block: Vec<u8>,
}

impl Record {
    /// The first field called `name` (case-insensitive).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The payload: for an `application/http` block, the message body after the HTTP
    /// header; else the whole block.
    pub fn payload(&self) -> &[u8] {
        let http = self
            .field("Content-Type")
            .is_some_and(|t| t.starts_with("application/http"));
        match self.block.windows(4).position(|w| w == b"\r\n\r\n") {
            Some(end) if http => &self.block[end + 4..],
            _ => &self.block,
        }
    }
}

/// The bytes of one record: `WARC/1.1`, `fields`, then `WARC-Payload-Digest` (when `payload`
/// is given), `WARC-Block-Digest` and `Content-Length`, the block and the closing CRLF CRLF;
/// with `gzip` compressed as a gzip member of its own (the `.warc.gz` convention, so a
/// reader can start at any record).
///
/// # Errors
/// Only from the compressor (none in practice: it writes to memory).
pub fn encode_record(
    fields: &[(&str, String)],
    block: &[u8],
    payload: Option<&[u8]>,
    gzip: bool,
) -> std::io::Result<Vec<u8>> {
    let mut rec = Vec::with_capacity(block.len() + 512);
    rec.extend_from_slice(b"WARC/1.1\r\n");
    let mut field = |k: &str, v: &str| {
        rec.extend_from_slice(k.as_bytes());
        rec.extend_from_slice(b": ");
        rec.extend_from_slice(v.as_bytes());
        rec.extend_from_slice(CRLF);
    };
    for (k, v) in fields {
        field(k, v);
    }
    if let Some(payload) = payload {
        field("WARC-Payload-Digest", &labelled_digest(payload));
    }
    field("WARC-Block-Digest", &labelled_digest(block));
    field("Content-Length", &block.len().to_string());
    rec.extend_from_slice(CRLF);
    rec.extend_from_slice(block);
    rec.extend_from_slice(b"\r\n\r\n");
    if !gzip {
        return Ok(rec);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&rec)?;
    gz.finish()
}

/// Reads the one record a gzip member holds, inflating at most `max_bytes`.
///
/// # Errors
/// A message saying what is wrong: not gzip, longer than `max_bytes`, not a WARC record,
/// a block shorter than its `Content-Length`.
pub fn decode_member(member: &[u8], max_bytes: u64) -> Result<Record, String> {
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(member)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut inflated)
        .map_err(|e| format!("not a gzip member: {e}"))?;
    if inflated.len() as u64 > max_bytes {
        return Err(format!("the record inflates past {max_bytes} bytes"));
    }
    let rest = inflated
        .strip_prefix(b"WARC/1.1\r\n")
        .or_else(|| inflated.strip_prefix(b"WARC/1.0\r\n"))
        .ok_or("not a WARC/1.1 record")?;
    let head_end = rest
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("a record header without its end")?;
    let head = std::str::from_utf8(&rest[..head_end]).map_err(|_| "a non-UTF-8 record header")?;
    let mut fields = Vec::new();
    for line in head.split("\r\n") {
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("a header line without a colon: {line:?}"))?;
        fields.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let record = Record {
        fields,
        block: Vec::new(),
    };
    let len: usize = record
        .field("Content-Length")
        .and_then(|v| v.parse().ok())
        .ok_or("a record without a valid Content-Length")?;
    let body = &rest[head_end + 4..];
    if body.len() < len + 4 || &body[len..len + 4] != b"\r\n\r\n" {
        return Err(format!(
            "a block shorter than its Content-Length {len}, or not followed by CRLF CRLF"
        ));
    }
    Ok(Record {
        block: body[..len].to_vec(),
        ..record
    })
}

/// The `WARC-Target-URI` of a screenshot of the page at `url` (the `urn:view:` scheme
/// web-archiving crawlers give what a browser showed of a page).
pub fn view_uri(url: &str) -> String {
    format!("urn:view:{url}")
}

/// The `WARC-Target-URI` of text extracted from the page at `url`.
pub fn text_uri(url: &str) -> String {
    format!("urn:text:{url}")
}

/// A `WARC-Date`: UTC to the microsecond.
pub fn warc_date(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// A name-based UUID (RFC 9562 version 8) from SHA-256 of `parts`, as `<urn:uuid:…>`: the
/// same parts give the same id, so records written twice can be compared.
pub fn record_id(parts: &[&[u8]]) -> String {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    let d = h.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let x: String = b.iter().map(|v| format!("{v:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..]
    )
}

/// `sha256:` and the base32 digest of `bytes`, the form WARC tools read.
pub fn labelled_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", base32(&sha2::Sha256::digest(bytes)))
}

const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// RFC 4648 base32 with padding.
fn base32(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(5) * 8);
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let n = u64::from_be_bytes([0, 0, 0, buf[0], buf[1], buf[2], buf[3], buf[4]]);
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(B32[((n >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_matches_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ] {
            assert_eq!(base32(input.as_bytes()), want, "{input}");
        }
        assert_eq!(labelled_digest(b"").len(), "sha256:".len() + 56);
    }

    #[test]
    fn a_member_reads_back_as_its_record() {
        let block = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n<p>\xe4\xbd\xa0</p>";
        let fields = [
            ("WARC-Type", "response".to_owned()),
            (
                "Content-Type",
                "application/http;msgtype=response".to_owned(),
            ),
        ];
        let member = encode_record(&fields, block, Some(b"<p>\xe4\xbd\xa0</p>"), true).unwrap();
        let record = decode_member(&member, 1 << 20).unwrap();
        assert_eq!(record.block, block);
        assert_eq!(record.payload(), b"<p>\xe4\xbd\xa0</p>");
        assert_eq!(record.field("warc-type"), Some("response"));
        assert_eq!(
            record.field("WARC-Payload-Digest"),
            Some(labelled_digest(b"<p>\xe4\xbd\xa0</p>").as_str())
        );
        assert!(decode_member(&member, 10).unwrap_err().contains("past 10"));
        assert!(decode_member(&member[..member.len() / 2], 1 << 20).is_err());
        assert!(decode_member(b"plain", 1 << 20).is_err());
    }
}
