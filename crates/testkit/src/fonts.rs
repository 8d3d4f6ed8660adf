//! Remapped fonts as pirate sites make them: a subset of a reference font whose `cmap` maps
//! Private Use Area code points to the glyphs of the characters they stand for, as TrueType
//! ([`remapped_font`]) or WOFF2 ([`woff2`]), and the system's reference font
//! ([`reference_font`]).
//!
//! The glyphs are copied as they are (points, flags, composite components renumbered), as a
//! subsetter such as fontTools' does, so their outlines are the reference's point for point.

use std::collections::BTreeMap;
use std::path::PathBuf;

use write_fonts::FontBuilder;
use write_fonts::from_obj::ToOwnedTable;
use write_fonts::read::{FontRef, TableProvider};
use write_fonts::tables::cmap::Cmap;
use write_fonts::tables::glyf::{GlyfLocaBuilder, Glyph};
use write_fonts::tables::hmtx::{Hmtx, LongMetric};
use write_fonts::tables::post::Post;
use write_fonts::types::GlyphId;

/// WenQuanYi Micro Hei, Debian's `fonts-wqy-microhei` (Apache-2.0 or GPLv3 with the font
/// exception), which `.ci/run` installs.
pub const WQY_MICROHEI: &str = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc";

/// The reference font's path, `None` when it is not installed.
///
/// # Panics
/// When it is missing and `CI=true`: CI installs it, so a missing font there is a broken
/// set-up, not a test to skip.
pub fn reference_font() -> Option<PathBuf> {
    let path = PathBuf::from(WQY_MICROHEI);
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{WQY_MICROHEI} is missing under CI=true: .ci/run installs fonts-wqy-microhei"
    );
    eprintln!("skipped: {WQY_MICROHEI} is missing (apt-get install fonts-wqy-microhei)");
    None
}

/// A TrueType font of `reference`'s glyphs (the first face of a collection) in which each
/// `(pua, original)` pair maps `pua` to the glyph of `original`; originals the reference
/// lacks are left out.
///
/// # Errors
/// A reference that cannot be read, or the font cannot be written, with the reason.
pub fn remapped_font(reference: &[u8], pairs: &[(char, char)]) -> Result<Vec<u8>, String> {
    let font = FontRef::from_index(reference, 0).map_err(|e| e.to_string())?;
    let cmap = font.cmap().map_err(|e| e.to_string())?;
    let glyf = font.glyf().map_err(|e| e.to_string())?;
    let loca = font.loca(None).map_err(|e| e.to_string())?;
    let hmtx = font.hmtx().map_err(|e| e.to_string())?;
    // Old glyph id → new, .notdef first; components follow their composites.
    let mut order: Vec<GlyphId> = vec![GlyphId::NOTDEF];
    let mut new_id: BTreeMap<GlyphId, GlyphId> =
        BTreeMap::from([(GlyphId::NOTDEF, GlyphId::NOTDEF)]);
    let mut mappings = Vec::new();
    for &(pua, original) in pairs {
        let Some(old) = cmap.map_codepoint(original) else {
            continue;
        };
        let mut pending = vec![old];
        while let Some(g) = pending.pop() {
            if new_id.contains_key(&g) {
                continue;
            }
            new_id.insert(g, GlyphId::new(order.len() as u32));
            order.push(g);
            if let Ok(Some(write_fonts::read::tables::glyf::Glyph::Composite(c))) =
                loca.get_glyf(g, &glyf)
            {
                pending.extend(c.components().map(|c| c.glyph));
            }
        }
        mappings.push((pua, new_id[&old]));
    }
    let mut glyphs = GlyfLocaBuilder::new();
    let mut metrics = Vec::with_capacity(order.len());
    for &old in &order {
        let glyph: Glyph = match loca.get_glyf(old, &glyf).map_err(|e| e.to_string())? {
            Some(g) => g.to_owned_table(),
            None => Glyph::Empty,
        };
        let glyph = match glyph {
            Glyph::Composite(mut c) => {
                for component in c.components_mut() {
                    component.glyph = new_id[&component.glyph];
                }
                Glyph::Composite(c)
            }
            other => other,
        };
        glyphs.add_glyph(&glyph).map_err(|e| e.to_string())?;
        metrics.push(LongMetric::new(
            hmtx.advance(old).unwrap_or(0),
            hmtx.side_bearing(old).unwrap_or(0),
        ));
    }
    let (glyf, loca, loca_format) = glyphs.build();
    let mut head: write_fonts::tables::head::Head =
        font.head().map_err(|e| e.to_string())?.to_owned_table();
    head.index_to_loc_format = loca_format as i16;
    let mut maxp: write_fonts::tables::maxp::Maxp =
        font.maxp().map_err(|e| e.to_string())?.to_owned_table();
    maxp.num_glyphs = order.len() as u16;
    let mut hhea: write_fonts::tables::hhea::Hhea =
        font.hhea().map_err(|e| e.to_string())?.to_owned_table();
    hhea.number_of_h_metrics = order.len() as u16;
    let names: Vec<String> = (0..order.len())
        .map(|i| {
            if i == 0 {
                ".notdef".to_owned()
            } else {
                format!("g{i}")
            }
        })
        .collect();
    let post = Post::new_v2(names.iter().map(String::as_str));
    let cmap = Cmap::from_mappings(mappings).map_err(|e| e.to_string())?;
    let mut builder = FontBuilder::new();
    builder
        .add_table(&head)
        .and_then(|b| b.add_table(&maxp))
        .and_then(|b| b.add_table(&hhea))
        .and_then(|b| b.add_table(&Hmtx::new(metrics, Vec::new())))
        .and_then(|b| b.add_table(&glyf))
        .and_then(|b| b.add_table(&loca))
        .and_then(|b| b.add_table(&cmap))
        .and_then(|b| b.add_table(&post))
        .map_err(|e| e.to_string())?;
    for tag in [b"OS/2", b"name"] {
        let tag = write_fonts::types::Tag::new(tag);
        if let Some(data) = font.table_data(tag) {
            builder.add_raw(tag, data.as_bytes().to_vec());
        }
    }
    Ok(builder.build())
}

/// `ttf` as WOFF2 (glyf/loca transformed, brotli), as web fonts are served.
///
/// # Errors
/// A font the encoder refuses, with the reason.
pub fn woff2(ttf: &[u8]) -> Result<Vec<u8>, String> {
    // Quality 5: a page's font in milliseconds; 11 takes a second a font for a few percent.
    ttf2woff2::encode(ttf, ttf2woff2::BrotliQuality::from(5)).map_err(|e| e.to_string())
}

/// `ttf` (a [`remapped_font`]) with its simple glyphs' points and advances scaled to
/// `units_per_em`, rounded to whole units, as a font redrawn at another em size is.
///
/// # Errors
/// A font that cannot be read or written, with the reason.
pub fn rescaled(ttf: &[u8], units_per_em: u16) -> Result<Vec<u8>, String> {
    let font = FontRef::new(ttf).map_err(|e| e.to_string())?;
    let head_in = font.head().map_err(|e| e.to_string())?;
    let scale = f64::from(units_per_em) / f64::from(head_in.units_per_em());
    let round = |v: i16| (f64::from(v) * scale).round() as i16;
    let glyf = font.glyf().map_err(|e| e.to_string())?;
    let loca = font.loca(None).map_err(|e| e.to_string())?;
    let hmtx = font.hmtx().map_err(|e| e.to_string())?;
    let count = font.maxp().map_err(|e| e.to_string())?.num_glyphs();
    let mut glyphs = GlyfLocaBuilder::new();
    let mut metrics = Vec::new();
    for id in 0..u32::from(count) {
        let id = GlyphId::new(id);
        let glyph: Glyph = match loca.get_glyf(id, &glyf).map_err(|e| e.to_string())? {
            Some(g) => g.to_owned_table(),
            None => Glyph::Empty,
        };
        let glyph = match glyph {
            Glyph::Simple(mut g) => {
                for contour in &mut g.contours {
                    let points: Vec<_> = contour
                        .iter()
                        .map(|p| {
                            let mut p = *p;
                            p.x = round(p.x);
                            p.y = round(p.y);
                            p
                        })
                        .collect();
                    *contour = points.into();
                }
                g.recompute_bounding_box();
                Glyph::Simple(g)
            }
            other => other,
        };
        glyphs.add_glyph(&glyph).map_err(|e| e.to_string())?;
        metrics.push(LongMetric::new(
            (f64::from(hmtx.advance(id).unwrap_or(0)) * scale).round() as u16,
            round(hmtx.side_bearing(id).unwrap_or(0)),
        ));
    }
    let (glyf, loca, loca_format) = glyphs.build();
    let mut head: write_fonts::tables::head::Head = head_in.to_owned_table();
    head.units_per_em = units_per_em;
    head.index_to_loc_format = loca_format as i16;
    let mut hhea: write_fonts::tables::hhea::Hhea =
        font.hhea().map_err(|e| e.to_string())?.to_owned_table();
    hhea.number_of_h_metrics = count;
    let mut builder = FontBuilder::new();
    builder
        .add_table(&head)
        .and_then(|b| b.add_table(&hhea))
        .and_then(|b| b.add_table(&Hmtx::new(metrics, Vec::new())))
        .and_then(|b| b.add_table(&glyf))
        .and_then(|b| b.add_table(&loca))
        .map_err(|e| e.to_string())?;
    builder.copy_missing_tables(font);
    Ok(builder.build())
}

/// A WOFF2 file whose one table (`head`) declares `declared` bytes, with `compressed` bytes
/// of junk for its brotli stream: a decompression bomb as its header tells it.
pub fn woff2_bomb(declared: u32, compressed: usize) -> Vec<u8> {
    let mut directory = vec![1u8]; // head, null transform
    let mut base128 = Vec::new();
    let mut v = declared;
    loop {
        base128.push((v & 0x7f) as u8);
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    base128.reverse();
    let last = base128.len() - 1;
    for (i, b) in base128.iter_mut().enumerate() {
        if i != last {
            *b |= 0x80;
        }
    }
    directory.extend(base128);
    let header_len = 48 + directory.len();
    let padded = (header_len + compressed).div_ceil(4) * 4;
    let mut out = Vec::with_capacity(padded);
    out.extend_from_slice(b"wOF2");
    out.extend_from_slice(&0x0001_0000u32.to_be_bytes());
    out.extend_from_slice(&(padded as u32).to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes()); // numTables
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&(declared.saturating_add(28)).to_be_bytes()); // totalSfntSize
    out.extend_from_slice(&(compressed as u32).to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&[0u8; 20]); // no metadata, no private data
    out.extend_from_slice(&directory);
    out.extend(std::iter::repeat_n(0xA5u8, compressed));
    out.resize(padded, 0);
    out
}
