//! A page's remapped font applied to its text: when the text holds Private Use Area code
//! points and the page's `<style>` names `@font-face` sources ([`crate::css::font_sources`],
//! [`Extracted::font_sources`](crate::Extracted::font_sources)), the crawl and `check` fetch
//! the fonts under their own rules (the crawl: robots.txt, the host's politeness, the
//! fetcher's address rules and a body cap of [`FontSettings::max_font_bytes`]; `check` of a
//! file: files beside the page only) and hand the bytes here. [`decode_text`] maps the text
//! through them with the process's [`FontDecoder`] (the reference indexed once, maps cached
//! by the font's SHA-256), so that both decode the same bytes the same way.

use std::sync::Arc;

use fontmap::{FontDecoder, FontMap, FontSettings};
use url::Url;

/// The sources of a page's fonts worth fetching: none when decoding is off or the text
/// holds no PUA code point, else the first [`FontSettings::max_fonts_per_page`].
pub fn sources_to_fetch<'a>(settings: &FontSettings, text: &str, sources: &'a [Url]) -> &'a [Url] {
    if !settings.enabled || !fontmap::has_private_use(text) {
        return &[];
    }
    &sources[..sources.len().min(settings.max_fonts_per_page)]
}

/// One font of a page: where it is, and its bytes or why there are none.
pub type FetchedFont = (Url, Result<Vec<u8>, String>);

/// What [`decode_text`] made of a page's text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FontDecoding {
    /// The text with the PUA code points the fonts map replaced.
    pub text: String,
    /// Characters replaced.
    pub replaced: usize,
    /// PUA characters left in the text.
    pub left: usize,
    /// One line per font that could not be used, and why.
    pub notes: Vec<String>,
}

/// `text` mapped through `fonts` in order (the first font that maps a code point wins), with
/// `decoder`. CPU work on hostile bytes: call it on a blocking thread.
pub fn decode_text(decoder: &FontDecoder, text: &str, fonts: &[FetchedFont]) -> FontDecoding {
    let mut map = FontMap::default();
    let mut notes = Vec::new();
    for (url, bytes) in fonts {
        match bytes {
            Ok(bytes) => match decoder.decode(bytes) {
                Ok(one) => map.merge(&one),
                Err(e) => notes.push(format!("font {url}: {e}")),
            },
            Err(why) => notes.push(format!("font {url}: {why}")),
        }
    }
    let (text, replaced) = map.apply(text);
    let left = text.chars().filter(|&c| fontmap::is_private_use(c)).count();
    FontDecoding {
        text,
        replaced,
        left,
        notes,
    }
}

/// The process's decoder for `settings` ([`FontDecoder::shared`]).
pub fn decoder(settings: &FontSettings) -> Arc<FontDecoder> {
    FontDecoder::shared(settings)
}

/// Reads a font that a page read from a file names: only a `file:` URL of a regular file in
/// the page's own directory or below it, within the size cap. A page may name any path; it
/// reads none outside its folder (no `/etc/...`, no `/dev/zero`).
///
/// # Errors
/// Why the font is not read, as the note to record.
pub fn read_file_font(page: &Url, font: &Url, settings: &FontSettings) -> Result<Vec<u8>, String> {
    read_file_beside(page, font, settings.max_font_bytes)
}

/// Reads a file a page read from a file names (a font, a glyph sprite, an image): only a
/// `file:` URL of a regular file in the page's own directory or below it, of at most `max_bytes`.
///
/// # Errors
/// Why the file is not read, as the note to record.
pub fn read_file_beside(page: &Url, file: &Url, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    if file.scheme() != "file" || page.scheme() != "file" {
        return Err("not a file beside the page".to_owned());
    }
    let (Ok(page_path), Ok(file_path)) = (page.to_file_path(), file.to_file_path()) else {
        return Err("not a local path".to_owned());
    };
    let dir = page_path
        .parent()
        .and_then(|d| d.canonicalize().ok())
        .ok_or("the page's directory cannot be read")?;
    let path = file_path
        .canonicalize()
        .map_err(|e| format!("cannot be read: {e}"))?;
    if !path.starts_with(&dir) {
        return Err("outside the page's directory".to_owned());
    }
    let file = std::fs::File::open(&path).map_err(|e| format!("cannot be read: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > max_bytes {
        return Err(format!(
            "{} bytes, over the cap of {max_bytes} bytes",
            meta.len()
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_file_reads_fonts_beside_it_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let fonts = dir.path().join("fonts");
        std::fs::create_dir(&fonts).unwrap();
        std::fs::write(fonts.join("r0.woff2"), b"wOF2 bytes").unwrap();
        std::fs::write(dir.path().join("big.ttf"), vec![0u8; 5000]).unwrap();
        let page = Url::from_file_path(dir.path().join("page.html")).unwrap();
        let settings = FontSettings {
            max_font_bytes: 4096,
            ..FontSettings::default()
        };
        let read = |href: &str| read_file_font(&page, &page.join(href).unwrap(), &settings);
        assert_eq!(read("fonts/r0.woff2").unwrap(), b"wOF2 bytes");
        assert!(read("/etc/passwd").unwrap_err().contains("outside"));
        assert!(read("../../../../etc/hostname").is_err());
        assert!(read("fonts/").unwrap_err().contains("regular"));
        assert!(read("big.ttf").unwrap_err().contains("over the cap"));
        assert!(read("missing.woff2").is_err());
        let web = Url::parse("http://example.com/p.html").unwrap();
        assert!(read_file_font(&web, &page, &settings).is_err());
    }
}
