//! HTTP content-coding removed by hand, so the bytes as served stay evidence.
//!
//! The HTTP client is told not to decompress: a response is kept exactly as it came over
//! the wire, and [`decode`] turns it into the entity the rest of the crawler reads (charset
//! detection, extraction, the body SHA-256). Codings are `gzip` (`x-gzip`), `deflate` (zlib,
//! or raw deflate as some servers send), `br`, `zstd` and `identity`, stacked in any order
//! (`Content-Encoding: gzip, br` is undone br first). Anything else is refused.
//!
//! Pirate sites write these bodies, so decoding is bounded: output beyond
//! [`DecodeLimits::max_bytes`], or beyond [`DecodeLimits::max_ratio`] times the wire size, is
//! refused with [`Error::ContentCoding`] as soon as it is produced, never allocated in full.

use std::io::Read;

use reqwest::header::{self, HeaderMap};

use crate::error::{Error, Result};

/// Output below this size is never refused for its ratio: a short page of repeated
/// markup legitimately compresses a hundredfold.
const RATIO_FLOOR: u64 = 1024 * 1024;

/// zstd window allowed, as a power of two: 8 MiB, what RFC 9659 lets an HTTP recipient
/// insist on; a frame asking for more would make the decoder allocate that much.
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

/// How far a body may grow while its content-coding is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Decoded bytes allowed.
    pub max_bytes: u64,
    /// Decoded bytes allowed per wire byte (checked once the output passes 1 MiB).
    pub max_ratio: u64,
}

/// One content-coding the crawler can undo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    /// The token as registered (`gzip`, `deflate`, `br`, `zstd`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Deflate => "deflate",
            Self::Brotli => "br",
            Self::Zstd => "zstd",
        }
    }
}

/// The codings of `headers`' `Content-Encoding` fields in the order they were applied,
/// `identity` left out.
///
/// # Errors
/// [`Error::ContentCoding`] naming a coding the crawler cannot undo (`compress`, unknown
/// tokens, a value that is not text).
pub fn codings(url: &str, headers: &HeaderMap) -> Result<Vec<Coding>> {
    let mut out = Vec::new();
    for value in headers.get_all(header::CONTENT_ENCODING) {
        let text = value.to_str().map_err(|_| refused(url, "?", "not ascii"))?;
        for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            out.push(match token.to_ascii_lowercase().as_str() {
                "identity" => continue,
                "gzip" | "x-gzip" => Coding::Gzip,
                "deflate" => Coding::Deflate,
                "br" => Coding::Brotli,
                "zstd" => Coding::Zstd,
                _ => {
                    return Err(refused(
                        url,
                        token,
                        "not a content-coding the crawler decodes",
                    ));
                }
            });
        }
    }
    Ok(out)
}

/// Undoes `codings` (as [`codings`] lists them) on `wire`.
///
/// `complete` says whether `wire` is the whole body: a body cut at the size cap decodes to
/// the prefix its bytes hold; a complete body that ends early or is corrupt is refused.
///
/// # Errors
/// [`Error::ContentCoding`] for a corrupt or truncated stream, or output over `limits`.
pub fn decode(
    url: &str,
    codings: &[Coding],
    wire: &[u8],
    complete: bool,
    limits: DecodeLimits,
) -> Result<Vec<u8>> {
    let Some(outer) = codings.last() else {
        return Ok(wire.to_vec());
    };
    let mut reader: Box<dyn Read + '_> = Box::new(wire);
    for &coding in codings.iter().rev() {
        reader = decoder(reader, coding, url)?;
    }
    let cap = limits.max_bytes.min(
        limits
            .max_ratio
            .saturating_mul(wire.len() as u64)
            .max(RATIO_FLOOR),
    );
    let mut out = Vec::with_capacity((wire.len() * 4).min(cap as usize));
    // One byte past the cap tells "exactly at the cap" from "over it".
    let read = reader.take(cap + 1).read_to_end(&mut out);
    match read {
        Ok(_) if out.len() as u64 > cap => Err(refused(
            url,
            outer.as_str(),
            &over_limit(cap, limits, wire.len()),
        )),
        Ok(_) => Ok(out),
        Err(_) if !complete => Ok(out),
        Err(e) => Err(refused(url, outer.as_str(), &e.to_string())),
    }
}

fn over_limit(cap: u64, limits: DecodeLimits, wire: usize) -> String {
    if cap < limits.max_bytes {
        format!(
            "decodes to more than {} times its {wire} bytes; refused as a decompression bomb",
            limits.max_ratio
        )
    } else {
        format!(
            "decodes to more than {cap} bytes (fetch.max_decoded_bytes); refused as a \
             decompression bomb"
        )
    }
}

fn decoder<'a>(inner: Box<dyn Read + 'a>, coding: Coding, url: &str) -> Result<Box<dyn Read + 'a>> {
    Ok(match coding {
        Coding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(inner)),
        Coding::Deflate => {
            // RFC 9110 deflate is zlib-wrapped; some servers send raw deflate. A zlib
            // header is two bytes whose big-endian value is a multiple of 31 with method 8.
            let mut inner = std::io::BufReader::new(inner);
            let head = std::io::BufRead::fill_buf(&mut inner)
                .map_err(|e| refused(url, "deflate", &e.to_string()))?;
            let zlib = head.len() >= 2
                && head[0] & 0x0f == 8
                && ((u16::from(head[0]) << 8) | u16::from(head[1])) % 31 == 0;
            if zlib {
                Box::new(flate2::bufread::ZlibDecoder::new(inner))
            } else {
                Box::new(flate2::bufread::DeflateDecoder::new(inner))
            }
        }
        Coding::Brotli => Box::new(brotli::Decompressor::new(inner, 8 * 1024)),
        Coding::Zstd => {
            let mut d = zstd::stream::read::Decoder::new(inner)
                .map_err(|e| refused(url, "zstd", &e.to_string()))?;
            d.window_log_max(ZSTD_WINDOW_LOG_MAX)
                .map_err(|e| refused(url, "zstd", &e.to_string()))?;
            Box::new(d)
        }
    })
}

fn refused(url: &str, coding: &str, reason: &str) -> Error {
    Error::ContentCoding {
        url: url.to_owned(),
        coding: coding.to_owned(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use reqwest::header::HeaderValue;

    use super::*;

    const LIMITS: DecodeLimits = DecodeLimits {
        max_bytes: 4 * 1024 * 1024,
        max_ratio: 50,
    };

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    }

    fn br(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        brotli::BrotliCompress(&mut &data[..], &mut out, &Default::default()).unwrap();
        out
    }

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        h
    }

    #[test]
    fn each_coding_and_a_stack_round_trip() {
        let page = "<p>第一回　宴桃园豪杰三结义</p>".repeat(200);
        let z = zstd::bulk::compress(page.as_bytes(), 3).unwrap();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        zlib.write_all(page.as_bytes()).unwrap();
        let zlib = zlib.finish().unwrap();
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        raw.write_all(page.as_bytes()).unwrap();
        let raw = raw.finish().unwrap();
        for (value, wire) in [
            ("gzip", gzip(page.as_bytes())),
            ("x-gzip", gzip(page.as_bytes())),
            ("br", br(page.as_bytes())),
            ("zstd", z),
            ("deflate", zlib),
            ("deflate", raw),
            ("identity", page.as_bytes().to_vec()),
            // Applied gzip first, then br: undone br first.
            ("gzip, br", br(&gzip(page.as_bytes()))),
            ("Identity, GZIP", gzip(page.as_bytes())),
        ] {
            let codings = codings("http://x/", &headers(value)).unwrap();
            let got = decode("http://x/", &codings, &wire, true, LIMITS).unwrap();
            assert_eq!(got, page.as_bytes(), "{value}");
        }
        // Two header fields stack like one comma-separated list.
        let mut h = headers("gzip");
        h.append(header::CONTENT_ENCODING, HeaderValue::from_static("br"));
        assert_eq!(
            codings("http://x/", &h).unwrap(),
            [Coding::Gzip, Coding::Brotli]
        );
    }

    #[test]
    fn unknown_codings_are_refused_by_name() {
        for value in ["compress", "x-snappy", "gzip, rot13"] {
            let err = codings("http://x/a", &headers(value)).unwrap_err();
            assert!(matches!(err, Error::ContentCoding { .. }), "{value}");
            let msg = err.to_string();
            assert!(msg.contains("http://x/a"), "{msg}");
            assert!(
                ["compress", "x-snappy", "rot13"]
                    .iter()
                    .any(|t| msg.contains(t)),
                "{msg}"
            );
        }
    }

    #[test]
    fn bombs_are_refused_before_they_are_allocated() {
        // 64 MiB of one byte: about 64 KiB of gzip, 50 bytes of brotli.
        let zeros = vec![0u8; 64 * 1024 * 1024];
        for (coding, wire) in [(Coding::Gzip, gzip(&zeros)), (Coding::Brotli, br(&zeros))] {
            let err = decode("http://x/bomb", &[coding], &wire, true, LIMITS).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains("decompression bomb"), "{msg}");
            assert!(msg.contains(coding.as_str()), "{msg}");
        }
        // Under the ratio floor nothing is refused for its ratio alone...
        let small = gzip(&zeros[..512 * 1024]);
        assert_eq!(
            decode("http://x/", &[Coding::Gzip], &small, true, LIMITS)
                .unwrap()
                .len(),
            512 * 1024
        );
        // ...and the size cap holds whatever the ratio allows.
        let tight = DecodeLimits {
            max_bytes: 100_000,
            max_ratio: u64::MAX,
        };
        let err = decode("http://x/", &[Coding::Gzip], &small, true, tight).unwrap_err();
        assert!(err.to_string().contains("more than 100000 bytes"), "{err}");
    }

    #[test]
    fn truncated_streams_fail_when_complete_and_give_the_prefix_when_cut() {
        let page = "<p>第二回　张翼德怒鞭督邮</p>".repeat(2000);
        let wire = gzip(page.as_bytes());
        let cut = &wire[..wire.len() / 2];
        let err = decode("http://x/", &[Coding::Gzip], cut, true, LIMITS).unwrap_err();
        assert!(matches!(err, Error::ContentCoding { .. }), "{err}");
        let prefix = decode("http://x/", &[Coding::Gzip], cut, false, LIMITS).unwrap();
        assert!(!prefix.is_empty() && prefix.len() < page.len());
        assert!(page.as_bytes().starts_with(&prefix));
        let err = decode("http://x/", &[Coding::Brotli], b"not brotli", true, LIMITS);
        assert!(err.is_err());
        let err = decode("http://x/", &[Coding::Zstd], b"not zstd", true, LIMITS);
        assert!(err.is_err());
    }
}
