//! A font's bytes as served to the plain font (sfnt) the outline reader takes: TrueType and
//! OpenType as they are, WOFF (zlib per table) and WOFF2 (one brotli stream, `glyf`/`loca`
//! transformed) through `wuff`, with the decompression bounded here: each table's declared
//! size is charged to a budget of [`FontSettings::max_decoded_bytes`] before anything is
//! allocated, and no stream may inflate past what it declared.

use std::borrow::Cow;
use std::io::Read;

use crate::{Error, FontSettings, Result};

/// What the first four bytes say a font is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TrueType or OpenType (`\0\1\0\0`, `true`, `OTTO`) or a collection (`ttcf`).
    Sfnt,
    /// WOFF 1.0 (`wOFF`).
    Woff,
    /// WOFF 2.0 (`wOF2`).
    Woff2,
}

/// The format of `font`'s bytes, `None` when they are no font.
pub fn sniff(font: &[u8]) -> Option<Format> {
    match font.get(..4)? {
        [0, 1, 0, 0] | b"true" | b"OTTO" | b"ttcf" => Some(Format::Sfnt),
        b"wOFF" => Some(Format::Woff),
        b"wOF2" => Some(Format::Woff2),
        _ => None,
    }
}

/// `font` as a plain sfnt, within `settings`' size cap and decompression budget.
///
/// # Errors
/// [`Error::TooLarge`] past the size cap, [`Error::Bomb`] past the budget,
/// [`Error::Malformed`] for bytes that are no font or a container that does not decode.
pub fn unwrap<'a>(font: &'a [u8], settings: &FontSettings) -> Result<Cow<'a, [u8]>> {
    if font.len() as u64 > settings.max_font_bytes {
        return Err(Error::TooLarge {
            bytes: font.len() as u64,
            max: settings.max_font_bytes,
        });
    }
    let format = sniff(font).ok_or_else(|| {
        Error::Malformed("not a TrueType, OpenType, WOFF or WOFF2 file".to_owned())
    })?;
    let mut budget = Budget {
        left: settings.max_decoded_bytes,
        max: settings.max_decoded_bytes,
        over: false,
    };
    let decoded = match format {
        Format::Sfnt => return Ok(Cow::Borrowed(font)),
        Format::Woff => wuff::decompress_woff1_with_custom_z(font, &mut |data, size| {
            budget.inflate(size, flate2::read::ZlibDecoder::new(data))
        }),
        Format::Woff2 => wuff::decompress_woff2_with_custom_brotli(font, &mut |data, size| {
            budget.inflate(size, brotli::Decompressor::new(data, 4096))
        }),
    };
    if budget.over {
        return Err(Error::Bomb {
            max: settings.max_decoded_bytes,
        });
    }
    let sfnt = decoded.map_err(|_| {
        Error::Malformed(format!(
            "the {} container does not decode",
            if format == Format::Woff {
                "WOFF"
            } else {
                "WOFF2"
            }
        ))
    })?;
    if sfnt.len() as u64 > settings.max_decoded_bytes {
        return Err(Error::Bomb {
            max: settings.max_decoded_bytes,
        });
    }
    Ok(Cow::Owned(sfnt))
}

/// Decompressed bytes left to a font.
struct Budget {
    left: u64,
    max: u64,
    over: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("over the decompression budget")]
struct OverBudget;

impl Budget {
    /// Inflates `reader`, which declares `size` bytes, charging them first; a stream that
    /// gives more or fewer than it declared is refused.
    fn inflate(
        &mut self,
        size: usize,
        reader: impl Read,
    ) -> std::result::Result<Vec<u8>, Box<dyn std::error::Error>> {
        let size = size as u64;
        if size > self.left || size > self.max {
            self.over = true;
            return Err(Box::new(OverBudget));
        }
        self.left -= size;
        let mut out = Vec::with_capacity(size as usize);
        reader.take(size + 1).read_to_end(&mut out)?;
        if out.len() as u64 != size {
            return Err("a table inflated to another size than it declared".into());
        }
        Ok(out)
    }
}
