//! Bytes to text for a file a rights holder imports: [`ingest::charset::decode`], the same
//! decoder the crawler and `check` use (byte-order mark, declared `<meta>` charset, chardetng,
//! encoding_rs; damaged bytes keep their encoding and become U+FFFD), then the importer's
//! own refusals: no text at all, or bytes that are not text in the encoding found.

use encoding_rs::UTF_8;

use crate::{Error, Result};

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
    /// Malformed byte sequences decoded as U+FFFD.
    pub replaced: usize,
}

/// Decodes a text or HTML file.
///
/// # Errors
/// [`Error::Empty`] for no bytes (or only a byte-order mark and whitespace);
/// [`Error::Binary`] for bytes that are not text, naming the encoding they were read as.
pub fn decode(bytes: &[u8]) -> Result<Decoded> {
    if encoding_rs::Encoding::for_bom(bytes).is_none()
        && bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0)
    {
        return Err(Error::Binary("it contains NUL bytes".into()));
    }
    let decoded = ingest::charset::decode(bytes, None, None);
    if decoded.text.trim().is_empty() {
        return Err(Error::Empty);
    }
    if decoded.had_errors || decoded.encoding != UTF_8 {
        check_is_text(&decoded.text, decoded.encoding.name())?;
    }
    Ok(Decoded {
        text: decoded.text,
        encoding: decoded.encoding.name(),
        replaced: decoded.replaced,
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

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: &str = "第一回　宴桃园豪杰三结义　斩黄巾英雄首立功\n话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。\n";

    #[test]
    fn detects_gbk_big5_and_utf8() {
        let simplified = ZH.repeat(5);
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
        let err = decode(&noise).map(|d| d.encoding).unwrap_err();
        assert!(matches!(err, Error::Binary(_)), "{err}");
        assert!(err.to_string().contains("when read as"), "{err}");
    }

    #[test]
    fn damaged_files_keep_their_encoding() {
        // One stray byte between two characters, and a file cut inside its last character.
        let mut gbk = encoding_rs::GBK.encode(&ZH.repeat(4)).0.into_owned();
        gbk.insert(40, 0xFF);
        let d = decode(&gbk).unwrap();
        assert_eq!((d.encoding, d.replaced), ("GBK", 1));
        let whole = encoding_rs::GBK.encode(&ZH.repeat(4)).0.into_owned();
        let d = decode(&whole[..whole.len() - 2]).unwrap();
        assert_eq!((d.encoding, d.replaced), ("GBK", 1));
        // A UTF-8 file with one bad byte.
        let mut utf8 = ZH.repeat(4).into_bytes();
        utf8.insert(6, 0x80);
        let d = decode(&utf8).unwrap();
        assert_eq!((d.encoding, d.replaced), ("UTF-8", 1));
        assert!(d.text.contains("周末七国分争"));
    }

    #[test]
    fn html_meta_charsets_are_read() {
        let page = format!("<html><head><meta charset=\"gbk\"></head><body>{ZH}</body></html>");
        let d = decode(&encoding_rs::GBK.encode(&page).0).unwrap();
        assert_eq!(d.encoding, "GBK");
        assert!(d.text.contains("周末七国分争"));
    }
}
