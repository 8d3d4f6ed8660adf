//! Bytes to text: BOM → HTTP header → `<meta>` → statistical detection. The one decoder of
//! copyhound: pages the crawler fetches, files a rights holder imports and pages `check` reads
//! all go through [`decode`], so that the same bytes always give the same text.
//!
//! A byte order mark comes first, as in the Encoding Standard's `decode` and in browsers: a BOM
//! cannot be there by accident, while headers are often set by a server that never looked at
//! the file. Then the `Content-Type` charset, the `<meta>` prescan, and chardetng.
//!
//! Chinese piracy sites serve GBK without saying so, say `gb2312` while using GBK-only
//! characters, or declare UTF-8 over GBK bytes. So the pipeline distrusts a declaration that
//! does not decode cleanly: if the declared encoding
//! yields replacement characters and the detector's guess is a multi-byte encoding (UTF-8,
//! GBK, Big5, Shift_JIS, ...) that decodes with far fewer, the guess wins and
//! [`Decoded::overridden`] keeps the declaration for the record.
//!
//! A declaration of `iso-8859-1` (windows-1252 in the Encoding Standard, like `latin1` and
//! `us-ascii`) is weaker still: it is many servers' default, and every byte string decodes
//! in it without an error, so a GBK page served with it would be read as mojibake. Over
//! non-ASCII bytes the detector is asked all the same, and its guess wins when it is a
//! multi-byte encoding in which the bytes decode cleanly, or when the declared reading is not
//! text (C1 control characters); [`Decoded::overridden`] records the declaration. Bytes
//! served with that header therefore read as they read without one, as `check` reads a file.
//!
//! Damaged input keeps its encoding. chardetng rules an encoding out on a single malformed
//! sequence, so a GBK file with one stray byte, or cut in the middle of a character, would be
//! read as windows-1252 mojibake. [`detect`] therefore takes UTF-8 with a few malformed
//! sequences (at least 16 well-formed non-ASCII characters per sequence) as UTF-8 before
//! chardetng is asked, and when chardetng falls back to a single-byte encoding, or to one
//! that does not decode cleanly, tries the legacy multi-byte encodings again: the one with
//! the fewest malformed sequences (on the same terms) that chardetng confirms on the lines
//! that decode cleanly is taken. The errors become U+FFFD and are counted in
//! [`Decoded::replaced`].
//!
//! A remapped font's page is GBK whose user-defined area decodes to Private Use Area
//! characters; chardetng alone took such pages for Big5. GBK that decodes cleanly to them is
//! therefore GBK when chardetng confirms it once they are left out.

use encoding_rs::{BIG5, EUC_JP, EUC_KR, Encoding, GBK, SHIFT_JIS, UTF_8, WINDOWS_1252};

/// How many leading bytes the `<meta>` prescan looks at. The standard says 1024; real novel
/// sites put a long `<title>`, keywords and description first, so we look further.
const META_PRESCAN_BYTES: usize = 8 * 1024;

/// Most bytes the statistical detector reads, for pages whose non-ASCII text is sparse (long
/// scripts and markup before the text).
const DETECT_BYTES: usize = 256 * 1024;

/// Non-ASCII bytes after which detection stops (see [`detect`]).
const DETECT_NON_ASCII: usize = 4096;

/// Detection feeds chardetng this many bytes at a time.
const DETECT_CHUNK: usize = 1024;

/// Where the encoding used came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CharsetSource {
    /// `Content-Type: ...; charset=...`.
    Header,
    /// A UTF-8 or UTF-16 byte order mark.
    Bom,
    /// `<meta charset>` or `<meta http-equiv="Content-Type">`.
    Meta,
    /// chardetng's guess (no declaration, or a declaration that did not decode cleanly).
    Detected,
}

impl CharsetSource {
    /// Stable lower-case name, for reports and database columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Header => "header",
            Self::Bom => "bom",
            Self::Meta => "meta",
            Self::Detected => "detected",
        }
    }
}

/// Decoded text and how it was decoded.
#[derive(Clone, Debug)]
pub struct Decoded {
    /// The text, without a BOM.
    pub text: String,
    /// The encoding used.
    pub encoding: &'static Encoding,
    /// Where it came from.
    pub source: CharsetSource,
    /// Whether malformed bytes were replaced with U+FFFD.
    pub had_errors: bool,
    /// How many U+FFFD replacement characters the text holds (malformed or truncated
    /// sequences; 0 when [`Decoded::had_errors`] is false).
    pub replaced: usize,
    /// A declared encoding that was not used because it did not decode cleanly.
    pub overridden: Option<&'static Encoding>,
}

/// Decodes an HTML (or plain-text) body.
///
/// `content_type` is the raw `Content-Type` header, `tld` the last label of the host
/// (`"cn"`, `"tw"`, `"jp"`), which sharpens the guess between GBK, Big5 and Shift_JIS.
pub fn decode(bytes: &[u8], content_type: Option<&str>, tld: Option<&str>) -> Decoded {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        return decode_with(&bytes[bom_len..], encoding, CharsetSource::Bom, None);
    }
    let declared = content_type
        .and_then(charset_from_content_type)
        .map(|e| (e, CharsetSource::Header))
        .or_else(|| prescan_meta(bytes).map(|e| (e, CharsetSource::Meta)));
    let Some((encoding, source)) = declared else {
        let encoding = detect(bytes, tld);
        return decode_with(bytes, encoding, CharsetSource::Detected, None);
    };
    let declared = decode_with(bytes, encoding, source, None);
    if encoding == WINDOWS_1252 && !bytes.is_ascii() {
        return weakly_declared(bytes, declared, tld);
    }
    if !declared.had_errors {
        return declared;
    }
    let guess = detect(bytes, tld);
    // Only a guess whose clean decode means something can overrule a declaration: any byte
    // string decodes "cleanly" as a single-byte encoding.
    if guess != encoding && !guess.is_single_byte() {
        let guessed = decode_with(bytes, guess, CharsetSource::Detected, Some(encoding));
        // A damaged page in the guessed encoding still has a few errors; the declared
        // encoding over the wrong bytes has one every few characters.
        if guessed.replaced * 4 < declared.replaced {
            return guessed;
        }
    }
    declared
}

/// A declaration of windows-1252 (what `iso-8859-1`, `latin1` and `us-ascii` name in the
/// Encoding Standard) over non-ASCII bytes: weak evidence, as it is many servers' default and
/// any byte string decodes in it without an error. The detected encoding wins when it is a
/// multi-byte encoding in which the bytes decode cleanly ([`detect`] returns one only then, or
/// for a damaged text it rescued), or when the declared decoding is not text (it holds C1
/// control characters, which windows-1252 gives only for its five undefined bytes) and the
/// detector names another encoding. The declaration is then kept in
/// [`Decoded::overridden`].
fn weakly_declared(bytes: &[u8], declared: Decoded, tld: Option<&str>) -> Decoded {
    let guess = detect(bytes, tld);
    if guess == WINDOWS_1252 {
        return declared;
    }
    let not_text = declared
        .text
        .chars()
        .any(|c| ('\u{80}'..='\u{9F}').contains(&c));
    if !guess.is_single_byte() || not_text {
        let guessed = decode_with(
            bytes,
            guess,
            CharsetSource::Detected,
            Some(declared.encoding),
        );
        // A rescued, damaged text is taken when its errors are few; otherwise a clean
        // single-byte reading of control characters is still better than a broken one.
        if guessed.replaced * RESCUE_GOOD_PER_ERROR <= guessed.text.chars().count() {
            return guessed;
        }
    }
    declared
}

fn decode_with(
    bytes: &[u8],
    encoding: &'static Encoding,
    source: CharsetSource,
    overridden: Option<&'static Encoding>,
) -> Decoded {
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    let replaced = if had_errors {
        text.matches('\u{FFFD}').count()
    } else {
        0
    };
    Decoded {
        text: text.into_owned(),
        encoding,
        source,
        had_errors,
        replaced,
        overridden,
    }
}

/// chardetng's guess for `bytes` (UTF-8 allowed), rescued from a single-byte fallback when
/// the bytes are a damaged multi-byte text (see the module docs).
///
/// Valid UTF-8 with any non-ASCII byte is UTF-8 without asking chardetng (a legacy encoding
/// almost never forms valid multi-byte UTF-8 by accident). Otherwise chardetng reads the bytes
/// in chunks until it has seen 4,096 non-ASCII bytes: about 2,000 CJK
/// characters settle the guess, and chardetng reads only a few MB/s, so feeding it a whole
/// chapter costs milliseconds per page.
pub fn detect(bytes: &[u8], tld: Option<&str>) -> &'static Encoding {
    if !bytes.is_ascii() && std::str::from_utf8(bytes).is_ok() {
        return UTF_8;
    }
    let sample = detection_sample(bytes);
    let whole = sample.len() == bytes.len();
    // UTF-8 with a few malformed sequences is damaged UTF-8: its structure cannot be met by
    // chance. Asked first, because chardetng, having ruled UTF-8 out for the one bad byte, may
    // take GBK, in which UTF-8's Chinese decodes cleanly as other characters.
    if tally(sample, whole, UTF_8).is_damaged() {
        return UTF_8;
    }
    let tld = tld
        .map(str::as_bytes)
        .filter(|t| t.iter().all(u8::is_ascii_lowercase));
    let guess = chardet(sample, whole, tld);
    if guess != GBK
        && let Some(gbk) = gbk_with_user_defined(sample, whole, tld)
    {
        return gbk;
    }
    if !guess.is_single_byte() && tally(sample, whole, guess).errors == 0 {
        return guess;
    }
    rescue(sample, whole, tld).unwrap_or(guess)
}

/// GBK when `sample` decodes cleanly in it to a text with Private Use Area characters (GBK's
/// user-defined area, where a page drawn by a remapping font has its most frequent
/// characters) and Chinese commas or full stops, that chardetng confirms once the Private Use
/// Area characters are left out: chardetng scores the user-defined bytes as unlikely and may
/// take the page for another encoding.
fn gbk_with_user_defined(
    sample: &[u8],
    whole: bool,
    tld: Option<&[u8]>,
) -> Option<&'static Encoding> {
    let is_private_use = |c: char| ('\u{E000}'..='\u{F8FF}').contains(&c);
    let t = tally(sample, whole, GBK);
    if t.errors > 0 || !t.text.chars().any(is_private_use) {
        return None;
    }
    // Chinese punctuation read as itself: Big5 text read as GBK has its commas and full stops
    // in GBK's user-defined area, where a remapping font leaves punctuation alone.
    if !t.text.contains(['，', '。']) {
        return None;
    }
    let without: String = t.text.chars().filter(|&c| !is_private_use(c)).collect();
    let probe = GBK.encode(&without).0;
    (chardet(&probe, whole, tld) == GBK).then_some(GBK)
}

/// The prefix of `bytes` detection reads: whole chunks until [`DETECT_NON_ASCII`] non-ASCII
/// bytes, at most [`DETECT_BYTES`].
fn detection_sample(bytes: &[u8]) -> &[u8] {
    let mut non_ascii = 0;
    let mut end = 0;
    for chunk in bytes[..bytes.len().min(DETECT_BYTES)].chunks(DETECT_CHUNK) {
        end += chunk.len();
        non_ascii += chunk.iter().filter(|b| !b.is_ascii()).count();
        if non_ascii >= DETECT_NON_ASCII {
            break;
        }
    }
    &bytes[..end]
}

fn chardet(sample: &[u8], whole: bool, tld: Option<&[u8]>) -> &'static Encoding {
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    let mut fed = 0;
    for chunk in sample.chunks(DETECT_CHUNK) {
        fed += chunk.len();
        // `last` only when the document really ends here; a prefix is fed without it.
        detector.feed(chunk, whole && fed == sample.len());
    }
    if sample.is_empty() {
        detector.feed(b"", whole);
    }
    detector.guess(tld, chardetng::Utf8Detection::Allow)
}

/// Legacy multi-byte encodings a damaged text is tried in, those of Chinese sites first
/// (damaged UTF-8 is recognised before chardetng is asked).
const RESCUE: [&Encoding; 5] = [GBK, BIG5, SHIFT_JIS, EUC_KR, EUC_JP];

/// Well-formed non-ASCII characters a damaged text needs per malformed sequence: fewer, and it
/// is more likely written in another encoding than damaged.
const RESCUE_GOOD_PER_ERROR: usize = 16;

/// What decoding a sample in one encoding gave.
struct Tally {
    text: String,
    /// Malformed sequences (a sequence cut by the end of a prefix is not one).
    errors: usize,
    /// Non-ASCII characters decoded, replacement characters not counted.
    good: usize,
}

impl Tally {
    /// Some malformed sequences, but few against the well-formed characters: a damaged text
    /// in this encoding rather than a text in another.
    fn is_damaged(&self) -> bool {
        self.errors > 0 && self.errors * RESCUE_GOOD_PER_ERROR <= self.good
    }
}

fn tally(sample: &[u8], whole: bool, encoding: &'static Encoding) -> Tally {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut text = String::with_capacity(
        decoder
            .max_utf8_buffer_length(sample.len())
            .unwrap_or(sample.len() * 3),
    );
    let (_, _, had_errors) = decoder.decode_to_string(sample, &mut text, whole);
    let errors = if had_errors {
        text.matches('\u{FFFD}').count()
    } else {
        0
    };
    let good = text.chars().filter(|c| !c.is_ascii()).count() - errors;
    Tally { text, errors, good }
}

/// The multi-byte encoding in which `sample` is a text with a few malformed sequences, if any:
/// the one with the fewest that chardetng confirms once they are left out.
fn rescue(sample: &[u8], whole: bool, tld: Option<&[u8]>) -> Option<&'static Encoding> {
    let mut best: Option<(usize, &'static Encoding)> = None;
    for encoding in RESCUE {
        let t = tally(sample, whole, encoding);
        if !t.is_damaged() || best.is_some_and(|(e, _)| e <= t.errors) {
            // Clean, and chardetng preferred another encoding on its statistics rather than
            // for a malformed sequence; too damaged to be this encoding at all; or no better
            // than one found already.
            continue;
        }
        // Confirmed by chardetng on the lines that decode cleanly (a stray byte inside a
        // character puts the rest of its line out of step; a line feed is never part of a
        // multi-byte character in these encodings), or on the text without its errors if no
        // line does.
        let clean_lines: Vec<u8> = sample
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_ascii() && !encoding.decode_without_bom_handling(line).1)
            .flat_map(|line| line.iter().copied().chain([b'\n']))
            .collect();
        let probe = if clean_lines.is_empty() {
            let clean: String = t.text.chars().filter(|&c| c != '\u{FFFD}').collect();
            encoding.encode(&clean).0.into_owned()
        } else {
            clean_lines
        };
        let confirmed = chardet(&probe, whole, tld) == encoding;
        if confirmed {
            best = Some((t.errors, encoding));
        }
    }
    best.map(|(_, e)| e)
}

/// The encoding named by a `Content-Type` value's `charset` parameter, if encoding_rs knows it.
pub fn charset_from_content_type(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        Encoding::for_label(
            value
                .trim()
                .trim_matches(|c| c == '"' || c == '\'')
                .as_bytes(),
        )
    })
}

/// The encoding declared by a `<meta>` tag in the first bytes of the document.
///
/// A byte-level prescan in the spirit of the HTML standard's: comments are skipped, attribute
/// values may be quoted or not, and a UTF-16 declaration means UTF-8 (the bytes in hand are
/// ASCII-compatible, or the BOM check would have caught them).
pub fn prescan_meta(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_PRESCAN_BYTES)];
    let mut i = 0;
    while let Some(off) = memchr(b'<', &head[i..]) {
        i += off;
        let rest = &head[i..];
        if rest.starts_with(b"<!--") {
            i += find(rest, b"-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        if rest.len() > 5 && rest[1..5].eq_ignore_ascii_case(b"meta") && is_attr_sep(rest[5]) {
            let end = memchr(b'>', rest).unwrap_or(rest.len());
            if let Some(encoding) = meta_charset(&rest[5..end]) {
                return Some(encoding.output_encoding());
            }
            i += end;
            continue;
        }
        i += 1;
    }
    None
}

fn meta_charset(attrs: &[u8]) -> Option<&'static Encoding> {
    let mut charset = None;
    let mut content = None;
    let mut http_equiv_content_type = false;
    for (name, value) in attributes(attrs) {
        if name.eq_ignore_ascii_case(b"charset") {
            charset = charset.or(Encoding::for_label(value));
        } else if name.eq_ignore_ascii_case(b"content") {
            content = Some(value);
        } else if name.eq_ignore_ascii_case(b"http-equiv") {
            http_equiv_content_type = value.eq_ignore_ascii_case(b"content-type");
        }
    }
    charset.or_else(|| {
        let content = content.filter(|_| http_equiv_content_type)?;
        charset_from_content_type(std::str::from_utf8(content).ok()?)
    })
}

/// Iterates `name=value` pairs of a tag's attribute text (values unquoted).
fn attributes(mut s: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    std::iter::from_fn(move || {
        loop {
            let start = s.iter().position(|&b| !is_attr_sep(b) && b != b'/')?;
            s = &s[start..];
            let name_len = s
                .iter()
                .position(|&b| is_attr_sep(b) || b == b'=' || b == b'/')
                .unwrap_or(s.len());
            let name = &s[..name_len];
            s = &s[name_len..];
            let after_ws = s.iter().position(|&b| !is_attr_sep(b)).unwrap_or(s.len());
            if s.get(after_ws) != Some(&b'=') {
                if name.is_empty() {
                    s = &s[1.min(s.len())..];
                    continue;
                }
                return Some((name, &b""[..]));
            }
            s = &s[after_ws + 1..];
            s = &s[s.iter().position(|&b| !is_attr_sep(b)).unwrap_or(s.len())..];
            let value = match s.first() {
                Some(&q @ (b'"' | b'\'')) => {
                    let end = memchr(q, &s[1..]).map_or(s.len(), |e| e + 1);
                    let v = &s[1..end];
                    s = &s[(end + 1).min(s.len())..];
                    v
                }
                _ => {
                    let end = s.iter().position(|&b| is_attr_sep(b)).unwrap_or(s.len());
                    let v = &s[..end];
                    s = &s[end..];
                    v
                }
            };
            return Some((name, value));
        }
    })
}

fn is_attr_sep(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{BIG5, GB18030, GBK, SHIFT_JIS, UTF_8, UTF_16LE, WINDOWS_1252};

    const ZH: &str =
        "第一回　灵根育孕源流出　心性修持大道生。盖闻天地之数，有十二万九千六百岁为一元。";

    fn gbk(s: &str) -> Vec<u8> {
        GBK.encode(s).0.into_owned()
    }

    #[test]
    fn gbk_with_user_defined_characters_is_gbk() {
        // A chapter whose most frequent characters are Private Use Area code points (a
        // remapping font's), in GBK without a declaration: they are GBK's user-defined area.
        let text = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。"
            .repeat(20);
        let remapped: String = text
            .chars()
            .map(|c| match c {
                '分' => '\u{E000}',
                '天' => '\u{E001}',
                '汉' => '\u{E002}',
                '，' => c,
                _ => c,
            })
            .collect();
        let bytes = GBK.encode(&remapped).0.into_owned();
        let decoded = decode(&bytes, Some("text/html"), None);
        assert_eq!(decoded.encoding, GBK);
        assert_eq!(decoded.text, remapped);
    }

    #[test]
    fn header_charset_wins_when_it_decodes_cleanly() {
        let bytes = gbk(&format!("<html><body>{ZH}</body></html>"));
        let d = decode(&bytes, Some("text/html; charset=GB2312"), None);
        assert_eq!(d.encoding, GBK);
        assert_eq!(d.source, CharsetSource::Header);
        assert!(d.text.contains(ZH) && !d.had_errors);
    }

    #[test]
    fn bom_beats_header() {
        let mut bytes = vec![0xEF, 0xBB, 0xBF];
        bytes.extend_from_slice(ZH.as_bytes());
        let d = decode(&bytes, Some("text/html; charset=gbk"), None);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Bom));
        assert_eq!(d.text, ZH);
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(ZH.encode_utf16().flat_map(u16::to_le_bytes));
        let d = decode(&utf16, Some("text/html; charset=gbk"), None);
        assert_eq!((d.encoding, d.text.as_str()), (UTF_16LE, ZH));
    }

    #[test]
    fn meta_charset_forms_are_found() {
        for head in [
            r#"<meta charset="gbk">"#,
            "<META CHARSET=gbk>",
            r#"<meta http-equiv="Content-Type" content="text/html; charset=gb2312" />"#,
            r#"<meta content='text/html; charset=GBK' http-equiv='content-type'>"#,
            r#"<!-- <meta charset="utf-8"> --><meta charset="gbk">"#,
        ] {
            let bytes = gbk(&format!(
                "<html><head>{head}<title>t</title></head><body>{ZH}</body></html>"
            ));
            let d = decode(&bytes, Some("text/html"), None);
            assert_eq!((d.encoding, d.source), (GBK, CharsetSource::Meta), "{head}");
            assert!(d.text.contains(ZH));
        }
        assert_eq!(
            prescan_meta(br#"<meta name="keywords" content="a, charset=gbk">"#),
            None
        );
        assert_eq!(prescan_meta(br#"<meta charset="utf-16">"#), Some(UTF_8));
        assert_eq!(prescan_meta(b"<metadata charset=gbk>"), None);
    }

    #[test]
    fn undeclared_gbk_big5_and_shift_jis_are_detected() {
        let page = format!("<html><body><p>{ZH}</p></body></html>");
        let d = decode(&gbk(&page), None, None);
        assert_eq!((d.encoding, d.source), (GBK, CharsetSource::Detected));
        assert!(d.text.contains(ZH) && !d.had_errors);
        let d = decode(page.as_bytes(), None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Detected));
        // A long page is judged on its first few thousand non-ASCII bytes.
        let long = gbk(&format!("<html><body>{}</body></html>", ZH.repeat(500)));
        assert_eq!(detect(&long, None), GBK);

        let hant =
            "第一回　靈根育孕源流出　心性修持大道生。蓋聞天地之數，有十二萬九千六百歲為一元。";
        let d = decode(&BIG5.encode(hant).0, Some("text/html"), Some("tw"));
        assert_eq!(d.encoding, BIG5);
        assert!(d.text.contains(hant));

        let ja = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。";
        let d = decode(&SHIFT_JIS.encode(ja).0, None, Some("jp"));
        assert_eq!(d.encoding, SHIFT_JIS);
        assert_eq!(d.text, ja);
    }

    #[test]
    fn a_lying_declaration_is_overridden_by_a_clean_guess() {
        let bytes = gbk(&format!(
            "<html><head><meta charset=utf-8></head><body>{ZH}</body></html>"
        ));
        let d = decode(&bytes, None, None);
        assert_eq!((d.encoding, d.source), (GBK, CharsetSource::Detected));
        assert_eq!(d.overridden, Some(UTF_8));
        assert!(!d.had_errors && d.text.contains(ZH));
    }

    #[test]
    fn gb18030_four_byte_sequences_decode_under_the_gbk_label() {
        let text = "𠀀𪚥，龘。";
        let bytes = GB18030.encode(text).0.into_owned();
        let d = decode(&bytes, Some("text/html; charset=gbk"), None);
        assert_eq!(d.text, text);
        assert!(!d.had_errors);
    }

    #[test]
    fn garbage_is_flagged() {
        let d = decode(
            &[0x81, 0x20, 0xFF, 0xFE, 0x81],
            Some("text/html; charset=gbk"),
            None,
        );
        assert!(d.had_errors);
        let d = decode(b"plain ascii", None, None);
        assert!(!d.had_errors);
        assert!(d.encoding == WINDOWS_1252 || d.encoding == UTF_8);
    }

    const LONG: &str = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。";

    #[test]
    fn a_stray_byte_keeps_gbk() {
        // Between two characters: one replacement character.
        let mut bytes = gbk(&LONG.repeat(3));
        bytes.insert(30, 0xFF);
        let d = decode(&bytes, None, None);
        assert_eq!((d.encoding, d.replaced), (GBK, 1));
        assert!(d.text.contains("周末七国分争"));
        // Inside a character: the rest of the line is out of step, the next lines are not.
        let mut bytes = gbk(&format!("{LONG}\n").repeat(3));
        bytes.insert(31, 0xFF);
        let d = decode(&bytes, None, None);
        assert_eq!(d.encoding, GBK);
        assert!(d.replaced <= 3, "{}", d.replaced);
        assert_eq!(d.text.lines().nth(2), Some(LONG));
    }

    #[test]
    fn a_file_cut_inside_a_character_keeps_its_encoding() {
        let bytes = gbk(LONG);
        let cut = &bytes[..bytes.len() - 1];
        let d = decode(cut, None, None);
        assert_eq!((d.encoding, d.replaced), (GBK, 1));
        let big5 = BIG5.encode("話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦。及秦滅之後，楚、漢分爭，又并入於漢。").0;
        let d = decode(&big5[..big5.len() - 1], None, Some("tw"));
        assert_eq!(d.encoding, BIG5);
        assert_eq!(d.replaced, 1);
    }

    #[test]
    fn one_bad_byte_keeps_utf8() {
        let mut bytes = LONG.as_bytes().to_vec();
        bytes.insert(30, 0xC0);
        let d = decode(&bytes, None, None);
        assert_eq!((d.encoding, d.replaced), (UTF_8, 1));
        let d = decode(&bytes[..bytes.len() - 2], None, None);
        assert_eq!(d.encoding, UTF_8);
    }

    #[test]
    fn a_lying_declaration_over_damaged_gbk_still_loses() {
        let mut bytes = gbk(&format!("<meta charset=utf-8><p>{}</p>", LONG.repeat(2)));
        bytes.insert(20 + 3 + 10, 0xFF);
        let d = decode(&bytes, None, None);
        assert_eq!((d.encoding, d.overridden), (GBK, Some(UTF_8)));
        assert_eq!(d.replaced, 1);
    }

    #[test]
    fn an_iso_8859_1_declaration_over_gbk_loses() {
        let page = format!("<html><body><p>{LONG}</p><p>{ZH}</p></body></html>");
        let bytes = gbk(&page);
        let undeclared = decode(&bytes, None, None);
        for (header, source) in [
            (
                Some("text/html; charset=iso-8859-1"),
                CharsetSource::Detected,
            ),
            (
                Some("text/html; charset=ISO-8859-1"),
                CharsetSource::Detected,
            ),
            (Some("text/html; charset=us-ascii"), CharsetSource::Detected),
            (
                Some("text/html; charset=windows-1252"),
                CharsetSource::Detected,
            ),
        ] {
            let d = decode(&bytes, header, None);
            assert_eq!((d.encoding, d.source), (GBK, source), "{header:?}");
            assert_eq!(d.overridden, Some(WINDOWS_1252));
            // The crawl (with the header) reads what `check` reads from the file.
            assert_eq!(d.text, undeclared.text);
        }
        // The same default written into the page by its template.
        let meta = gbk(&format!(
            "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"></head><body>{LONG}</body></html>"
        ));
        let d = decode(&meta, None, None);
        assert_eq!((d.encoding, d.overridden), (GBK, Some(WINDOWS_1252)));
        assert!(d.text.contains(LONG));
        // Big5 and UTF-8 under the same header.
        let hant = "話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦。及秦滅之後，楚、漢分爭，又并入於漢。";
        let d = decode(
            &BIG5.encode(hant).0,
            Some("text/html; charset=iso-8859-1"),
            Some("tw"),
        );
        assert_eq!((d.encoding, d.text.as_str()), (BIG5, hant));
        let d = decode(LONG.as_bytes(), Some("text/html; charset=iso-8859-1"), None);
        assert_eq!((d.encoding, d.text.as_str()), (UTF_8, LONG));
    }

    #[test]
    fn an_iso_8859_1_declaration_over_latin_text_stands() {
        for text in [
            "Café crème brûlée, naïve façade, à la carte. ".repeat(20),
            "Größe, Übermaß und Äpfel schmecken süß. ".repeat(20),
            "Señor, ¿dónde está la estación? Año nuevo, mañana. ".repeat(20),
            "plain ascii only".to_owned(),
        ] {
            let bytes = WINDOWS_1252.encode(&text).0.into_owned();
            let d = decode(&bytes, Some("text/html; charset=iso-8859-1"), None);
            assert_eq!(
                (d.encoding, d.source, d.overridden),
                (WINDOWS_1252, CharsetSource::Header, None),
                "{text}"
            );
            assert_eq!(d.text, text);
        }
    }

    #[test]
    fn control_characters_are_not_windows_1252_text() {
        // DOS Cyrillic puts capitals on windows-1252's undefined bytes (Б 0x81, Н 0x8D,
        // П 0x8F, Р 0x90, Э 0x9D), read there as C1 control characters.
        let ru = "Бури мглою небо кроет. Прощай, Наташа! Россия. Пушкин, Это Нева. ".repeat(10);
        let bytes = encoding_rs::IBM866.encode(&ru).0.into_owned();
        let d = decode(&bytes, Some("text/html; charset=iso-8859-1"), Some("ru"));
        assert_ne!(d.encoding, WINDOWS_1252);
        assert_eq!(d.overridden, Some(WINDOWS_1252));
        assert!(!d.text.chars().any(|c| ('\u{80}'..='\u{9F}').contains(&c)));
    }

    #[test]
    fn latin_text_stays_single_byte() {
        let text = "Café crème brûlée, naïve façade. ".repeat(20);
        let bytes = WINDOWS_1252.encode(&text).0.into_owned();
        let d = decode(&bytes, None, None);
        assert!(d.encoding.is_single_byte(), "{}", d.encoding.name());
        assert_eq!(d.replaced, 0);
    }
}
