//! WET files read as a stream: gzip members, each holding WARC records (Common Crawl writes
//! one record a member), of which the `conversion` records carry a page's extracted text with
//! its URL (`WARC-Target-URI`) and capture date (`WARC-Date`).
//!
//! Nothing is ever held whole: a member is inflated into a buffer of at most
//! [`WetLimits::max_record_bytes`] (a longer one is inflated to its end and thrown away,
//! counted as oversized), a corrupt member is counted and the reader looks for the next gzip
//! header, and a source that stops sending or never ends is cut by [`WetLimits::deadline`]
//! and its read timeout. Written by hand over flate2's single-member decoder rather than
//! `MultiGzDecoder`, which cannot go on after a corrupt member.

use std::io::{self, BufRead, Read};
use std::time::Instant;

use serde::Serialize;

/// The gzip magic and the deflate method byte every member starts with.
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// What one WET file may cost.
#[derive(Debug, Clone, Copy)]
pub struct WetLimits {
    /// Bytes one member may inflate to and be read; a longer member is skipped.
    pub max_record_bytes: usize,
    /// When reading the file stops, whatever is left.
    pub deadline: Option<Instant>,
}

impl Default for WetLimits {
    fn default() -> Self {
        WetLimits {
            max_record_bytes: 16 << 20,
            deadline: None,
        }
    }
}

/// A `conversion` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WetRecord {
    /// `WARC-Target-URI`.
    pub uri: String,
    /// `WARC-Date`, as written.
    pub date: String,
    /// The page's text (UTF-8; invalid bytes replaced).
    pub text: String,
}

/// What reading a WET file met.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WetCounts {
    /// gzip members read whole.
    pub members: u64,
    /// WARC records of any type.
    pub records: u64,
    /// `conversion` records handed on.
    pub conversions: u64,
    /// Bytes of text in them.
    pub text_bytes: u64,
    /// Members longer than the limit, skipped.
    pub oversized: u64,
    /// Members that did not inflate (the reader went on at the next gzip header).
    pub corrupt: u64,
    /// Records whose header or length did not parse (the rest of their member skipped).
    pub malformed: u64,
    /// Whether the file was cut: its deadline passed or its source stopped sending.
    pub cut: bool,
}

/// A buffered source that can look ahead a few bytes (to find the next gzip header after a
/// corrupt member) and that fails with [`io::ErrorKind::TimedOut`] past the deadline.
struct Source<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    deadline: Option<Instant>,
}

impl<R: Read> Source<R> {
    fn new(inner: R, deadline: Option<Instant>) -> Self {
        Source {
            inner,
            buf: vec![0; 256 << 10],
            pos: 0,
            end: 0,
            deadline,
        }
    }

    fn check_deadline(&self) -> io::Result<()> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the file's time ran out",
            ));
        }
        Ok(())
    }

    /// At least `n` bytes buffered, unless the source ends first; returns how many are.
    fn ensure(&mut self, n: usize) -> io::Result<usize> {
        while self.end - self.pos < n {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            }
            self.check_deadline()?;
            let read = self.inner.read(&mut self.buf[self.end..])?;
            if read == 0 {
                break;
            }
            self.end += read;
        }
        Ok(self.end - self.pos)
    }

    /// Skips to the next gzip header (or the end); returns whether one was found.
    fn resync(&mut self) -> io::Result<bool> {
        loop {
            if self.ensure(GZIP_MAGIC.len())? < GZIP_MAGIC.len() {
                self.pos = self.end;
                return Ok(false);
            }
            let window = &self.buf[self.pos..self.end];
            if window.starts_with(&GZIP_MAGIC) {
                return Ok(true);
            }
            // Past every byte that cannot start a header (keep a possible partial one).
            let skip = window[1..]
                .iter()
                .position(|&b| b == GZIP_MAGIC[0])
                .map_or(window.len() - (GZIP_MAGIC.len() - 1), |i| i + 1);
            self.pos += skip.max(1);
        }
    }
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Source<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.end {
            self.check_deadline()?;
            self.pos = 0;
            self.end = self.inner.read(&mut self.buf)?;
        }
        Ok(&self.buf[self.pos..self.end])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.end);
    }
}

/// Whether an error means the source is cut (deadline, a stalled connection) rather than a
/// corrupt member.
fn is_cut(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
    )
}

/// Reads the WET file `input` (gzip members of WARC records) and hands each `conversion`
/// record to `each`; returns what it met. A record `each` refuses (`Err`) ends the reading
/// with that error.
///
/// # Errors
/// `each`'s error. Corrupt, oversized and malformed input is counted, never an error; a
/// source that fails or runs out of time ends the file with [`WetCounts::cut`].
pub fn read_wet<E>(
    input: impl Read,
    limits: WetLimits,
    mut each: impl FnMut(WetRecord) -> Result<(), E>,
) -> Result<WetCounts, E> {
    let mut source = Source::new(input, limits.deadline);
    let mut counts = WetCounts::default();
    let mut member = Vec::new();
    // What the decoder inflates into before it is appended to `member`: allocated once, not
    // zeroed again for every member (a WET member is a page, a few KB).
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match source.ensure(1) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => {
                counts.cut = true;
                break;
            }
        }
        member.clear();
        let read = {
            let mut decoder = flate2::bufread::GzDecoder::new(&mut source);
            inflate_bounded(
                &mut decoder,
                &mut chunk,
                &mut member,
                limits.max_record_bytes,
            )
        };
        match read {
            Ok(true) => {
                counts.members += 1;
                parse_records(&member, &mut counts, &mut each)?;
            }
            Ok(false) => counts.oversized += 1,
            Err(e) if is_cut(&e) => {
                counts.cut = true;
                break;
            }
            Err(_) => {
                counts.corrupt += 1;
                // A header at the position the decoder failed would be found again: step
                // past one byte first.
                if source.ensure(1).is_ok_and(|n| n > 0) {
                    source.consume(1);
                }
                match source.resync() {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(_) => {
                        counts.cut = true;
                        break;
                    }
                }
            }
        }
    }
    Ok(counts)
}

/// Inflates one member into `out` (through `chunk`), at most `max` bytes; `Ok(false)` when it
/// was longer (then read to its end and dropped, so the next member starts where it should).
fn inflate_bounded(
    decoder: &mut impl Read,
    chunk: &mut [u8],
    out: &mut Vec<u8>,
    max: usize,
) -> io::Result<bool> {
    let mut fits = true;
    loop {
        let n = match decoder.read(chunk) {
            Ok(0) => return Ok(fits),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if fits && out.len() + n <= max {
            out.extend_from_slice(&chunk[..n]);
        } else if fits {
            fits = false;
            out.clear();
            out.shrink_to(64 << 10);
        }
    }
}

/// The WARC records of one inflated member.
fn parse_records<E>(
    mut rest: &[u8],
    counts: &mut WetCounts,
    each: &mut impl FnMut(WetRecord) -> Result<(), E>,
) -> Result<(), E> {
    loop {
        while let Some(r) = rest
            .strip_prefix(b"\r\n")
            .or_else(|| rest.strip_prefix(b"\n"))
        {
            rest = r;
        }
        if rest.is_empty() {
            return Ok(());
        }
        let Some((header, block_start)) = header_end(rest) else {
            counts.malformed += 1;
            return Ok(());
        };
        let Some(fields) = parse_header(&rest[..header]) else {
            counts.malformed += 1;
            return Ok(());
        };
        let Some(len) = fields.length.filter(|&l| l <= rest.len() - block_start) else {
            counts.malformed += 1;
            return Ok(());
        };
        counts.records += 1;
        let block = &rest[block_start..block_start + len];
        if fields.kind.eq_ignore_ascii_case("conversion") {
            counts.conversions += 1;
            counts.text_bytes += len as u64;
            each(WetRecord {
                uri: fields.uri,
                date: fields.date,
                text: match simdutf8::basic::from_utf8(block) {
                    Ok(text) => text.to_owned(),
                    Err(_) => String::from_utf8_lossy(block).into_owned(),
                },
            })?;
        }
        rest = &rest[block_start + len..];
    }
}

/// Where a record's header ends: (header length, where the block starts).
fn header_end(bytes: &[u8]) -> Option<(usize, usize)> {
    // Headers are small; a "header" without its blank line in 64 KiB is not one.
    let window = &bytes[..bytes.len().min(64 << 10)];
    if let Some(i) = window.windows(4).position(|w| w == b"\r\n\r\n") {
        return Some((i, i + 4));
    }
    window
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2))
}

struct Fields {
    kind: String,
    uri: String,
    date: String,
    length: Option<usize>,
}

fn parse_header(header: &[u8]) -> Option<Fields> {
    let header = std::str::from_utf8(header).ok()?;
    let mut lines = header.lines();
    if !lines.next()?.trim().starts_with("WARC/") {
        return None;
    }
    let mut fields = Fields {
        kind: String::new(),
        uri: String::new(),
        date: String::new(),
        length: None,
    };
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "warc-type" => fields.kind = value.to_owned(),
            "warc-target-uri" => fields.uri = value.trim_matches(['<', '>']).to_owned(),
            "warc-date" => fields.date = value.to_owned(),
            "content-length" => fields.length = value.parse().ok(),
            _ => {}
        }
    }
    Some(fields)
}

/// One WARC record as a gzip member, as Common Crawl writes WET files (for tests, benches and
/// generated samples).
pub fn wet_member(kind: &str, uri: &str, date: &str, text: &str) -> Vec<u8> {
    use std::io::Write as _;
    let mut record = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\n\
         WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\n\
         Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        text.len()
    )
    .into_bytes();
    record.extend_from_slice(text.as_bytes());
    record.extend_from_slice(b"\r\n\r\n");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&record).expect("writing to a Vec");
    gz.finish().expect("writing to a Vec")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8], limits: WetLimits) -> (Vec<WetRecord>, WetCounts) {
        let mut records = Vec::new();
        let counts = read_wet(bytes, limits, |r| {
            records.push(r);
            Ok::<_, ()>(())
        })
        .unwrap();
        (records, counts)
    }

    #[test]
    fn conversion_records_are_read_with_their_url_and_date() {
        let mut file = wet_member("warcinfo", "", "2026-11-01T00:00:00Z", "software: test");
        file.extend(wet_member(
            "conversion",
            "https://a.example/1",
            "2026-11-02T03:04:05Z",
            "第一章 风起\n铜铃无风自动",
        ));
        file.extend(wet_member(
            "conversion",
            "https://b.example/",
            "2026-11-03T00:00:00Z",
            "hello",
        ));
        let (records, counts) = read_all(&file, WetLimits::default());
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].uri, "https://a.example/1");
        assert_eq!(records[0].date, "2026-11-02T03:04:05Z");
        assert_eq!(records[0].text, "第一章 风起\n铜铃无风自动");
        assert_eq!(
            counts,
            WetCounts {
                members: 3,
                records: 3,
                conversions: 2,
                text_bytes: (records[0].text.len() + 5) as u64,
                ..WetCounts::default()
            }
        );
    }

    #[test]
    fn a_corrupt_member_is_skipped_and_the_next_one_read() {
        let good = wet_member("conversion", "https://a.example/", "d", "good text");
        let mut broken = wet_member("conversion", "https://b.example/", "d", &"x".repeat(5000));
        let middle = broken.len() / 2;
        for b in &mut broken[12..middle] {
            *b ^= 0x5a;
        }
        let mut file = good.clone();
        file.extend(&broken);
        file.extend(&good);
        // Garbage between members.
        file.extend(b"garbage between members");
        file.extend(&good);
        let (records, counts) = read_all(&file, WetLimits::default());
        assert_eq!(records.len(), 3, "{counts:?}");
        assert!(counts.corrupt >= 2, "{counts:?}");
        assert!(!counts.cut);
    }

    #[test]
    fn a_truncated_file_ends_with_what_was_whole() {
        let mut file = wet_member("conversion", "https://a.example/", "d", "one");
        let second = wet_member("conversion", "https://b.example/", "d", &"y".repeat(3000));
        file.extend(&second[..second.len() / 2]);
        let (records, counts) = read_all(&file, WetLimits::default());
        assert_eq!(records.len(), 1);
        assert_eq!(counts.corrupt, 1);
    }

    #[test]
    fn an_oversized_record_is_skipped_and_counted_without_being_kept() {
        let mut file = wet_member(
            "conversion",
            "https://big.example/",
            "d",
            &"z".repeat(1 << 20),
        );
        file.extend(wet_member("conversion", "https://a.example/", "d", "small"));
        let limits = WetLimits {
            max_record_bytes: 64 << 10,
            ..WetLimits::default()
        };
        let (records, counts) = read_all(&file, limits);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].uri, "https://a.example/");
        assert_eq!(counts.oversized, 1);
    }

    #[test]
    fn malformed_records_and_non_gzip_input_are_counted() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"WARC/1.0\r\nWARC-Type: conversion\r\nContent-Length: 999999\r\n\r\nshort")
            .unwrap();
        let mut file = gz.finish().unwrap();
        file.extend(wet_member("conversion", "https://a.example/", "d", "fine"));
        let (records, counts) = read_all(&file, WetLimits::default());
        assert_eq!((records.len(), counts.malformed), (1, 1));
        let (records, counts) = read_all(b"WARC/1.0\r\nplain text, not gzip", WetLimits::default());
        assert!(records.is_empty());
        assert_eq!(counts.corrupt, 1);
        let (_, counts) = read_all(b"", WetLimits::default());
        assert_eq!(counts, WetCounts::default());
    }

    #[test]
    fn a_source_that_never_ends_is_cut_at_the_deadline() {
        /// Sends one member, then zeros forever (a body that never ends).
        struct Endless(Vec<u8>);
        impl Read for Endless {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    out.fill(0);
                    return Ok(out.len());
                }
                let n = self.0.len().min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0.drain(..n);
                Ok(n)
            }
        }
        let limits = WetLimits {
            deadline: Some(Instant::now() + std::time::Duration::from_millis(200)),
            ..WetLimits::default()
        };
        let member = wet_member("conversion", "https://a.example/", "d", "before");
        let mut records = Vec::new();
        let counts = read_wet(Endless(member), limits, |r| {
            records.push(r);
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(records.len(), 1);
        assert!(counts.cut);
    }
}
