//! Bytes to text: byte-order mark, then chardetng's guess, then encoding_rs. Binary input
//! is refused rather than decoded into garbage.

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, UTF_8};

use crate::{Error, Result};

/// How many bytes chardetng reads: a guess between GBK and Big5 is settled long before.
const DETECT_BYTES: usize = 1 << 20;
/// How many bytes are looked at for NULs and control characters.
const SNIFF_BYTES: usize = 64 * 1024;
/// Share of replacement or control characters above which decoded text is not text.
const MAX_BAD_SHARE: f64 = 0.01;

/// Text and the encoding it was decoded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text, byte-order mark removed.
    pub text: String,
    /// The encoding's WHATWG name ("UTF-8", "GBK", "Big5", "UTF-16LE", ...). GB18030 input
    /// reports "GBK", whose decoder is the GB18030 superset.
    pub encoding: &'static str,
}

/// Decodes a text file.
///
/// # Errors
/// [`Error::Empty`] for no bytes (or only a byte-order mark and whitespace);
/// [`Error::Binary`] for bytes that are not text in any encoding.
pub fn decode(bytes: &[u8]) -> Result<Decoded> {
    decode_with_hint(bytes, None)
}

/// Decodes with a declared encoding (an HTML `<meta charset>`) tried after the byte-order
/// mark and before detection.
pub(crate) fn decode_with_hint(
    bytes: &[u8],
    declared: Option<&'static Encoding>,
) -> Result<Decoded> {
    let (encoding, bom) = match Encoding::for_bom(bytes) {
        Some((enc, len)) => (enc, len),
        None => {
            if bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) {
                return Err(Error::Binary("it contains NUL bytes".into()));
            }
            let enc = match declared {
                Some(enc) => enc,
                None if std::str::from_utf8(bytes).is_ok() => UTF_8,
                None => {
                    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
                    let head = &bytes[..bytes.len().min(DETECT_BYTES)];
                    detector.feed(head, head.len() == bytes.len());
                    detector.guess(None, Utf8Detection::Allow)
                }
            };
            (enc, 0)
        }
    };
    let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom..]);
    if text.trim().is_empty() {
        return Err(Error::Empty);
    }
    if had_errors || encoding != UTF_8 {
        check_is_text(&text, encoding.name())?;
    }
    Ok(Decoded {
        text: text.into_owned(),
        encoding: encoding.name(),
    })
}

/// Refuses decoded text with many replacement or control characters.
fn check_is_text(text: &str, encoding: &str) -> Result<()> {
    let sample: Vec<char> = text.chars().take(SNIFF_BYTES).collect();
    let bad = sample
        .iter()
        .filter(|&&c| {
            c == '\u{FFFD}' || (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}'))
        })
        .count();
    if bad as f64 > MAX_BAD_SHARE * sample.len() as f64 {
        return Err(Error::Binary(format!(
            "{bad} of its first {} characters are not text when read as {encoding}",
            sample.len()
        )));
    }
    Ok(())
}

/// The encoding an HTML document declares in `<meta charset>` or `http-equiv`, from its
/// first kilobytes.
pub(crate) fn declared_html_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let label: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    Encoding::for_label(label.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_gbk_big5_and_utf8() {
        let simplified = "第一回　宴桃园豪杰三结义　斩黄巾英雄首立功\n话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。".repeat(5);
        let traditional = "第一回　宴桃園豪傑三結義　斬黃巾英雄首立功\n話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦。".repeat(5);
        let (gbk, _, _) = encoding_rs::GBK.encode(&simplified);
        let (big5, _, _) = encoding_rs::BIG5.encode(&traditional);
        let d = decode(&gbk).unwrap();
        assert_eq!((d.encoding, d.text.as_str()), ("GBK", simplified.as_str()));
        let d = decode(&big5).unwrap();
        assert_eq!(
            (d.encoding, d.text.as_str()),
            ("Big5", traditional.as_str())
        );
        let d = decode(simplified.as_bytes()).unwrap();
        assert_eq!(d.encoding, "UTF-8");
    }

    #[test]
    fn strips_byte_order_marks() {
        let mut utf8 = b"\xEF\xBB\xBF".to_vec();
        utf8.extend_from_slice("第一章".as_bytes());
        assert_eq!(decode(&utf8).unwrap().text, "第一章");
        let mut utf16: Vec<u8> = vec![0xFF, 0xFE];
        utf16.extend("第一章 abc".encode_utf16().flat_map(|u| u.to_le_bytes()));
        let d = decode(&utf16).unwrap();
        assert_eq!((d.encoding, d.text.as_str()), ("UTF-16LE", "第一章 abc"));
    }

    #[test]
    fn refuses_empty_and_binary_input() {
        assert!(matches!(decode(b""), Err(Error::Empty)));
        assert!(matches!(decode(b"\xEF\xBB\xBF \n\t"), Err(Error::Empty)));
        assert!(matches!(
            decode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Err(Error::Binary(_))
        ));
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 1)
            .collect();
        assert!(
            matches!(decode(&noise), Err(Error::Binary(_))),
            "{:?}",
            decode(&noise).map(|d| d.encoding)
        );
    }

    #[test]
    fn reads_declared_html_charsets() {
        assert_eq!(
            declared_html_charset(b"<html><head><meta charset=\"gbk\">"),
            Some(encoding_rs::GBK)
        );
        assert_eq!(
            declared_html_charset(
                b"<meta http-equiv=Content-Type content='text/html; charset=big5'>"
            ),
            Some(encoding_rs::BIG5)
        );
        assert_eq!(declared_html_charset(b"<html><body>"), None);
    }
}
