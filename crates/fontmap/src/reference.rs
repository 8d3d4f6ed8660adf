//! The reference fonts' outlines, indexed once: every character of a reference font's `cmap`
//! (PUA and control characters left out) drawn and hashed.

use std::collections::HashMap;
use std::path::PathBuf;

use skrifa::{FontRef, GlyphId};

use crate::outline::{Face, GRID, Outline};
use crate::{Error, Result, is_private_use};

/// Largest point distance, in [`GRID`] units (1/4096 em), at which two outlines with the same
/// commands are the same glyph: 16 units is 0.4% of the em, more than any rounding of an em
/// size change and far less than the stroke detail that tells two Han characters apart.
const TOLERANCE: i32 = (GRID as i32) / 256;

/// Glyphs of one shape compared with a page glyph before giving up.
const MAX_CANDIDATES: usize = 256;

/// One reference font.
struct Indexed {
    bytes: Vec<u8>,
    /// Exact outline hash → character.
    exact: HashMap<u64, char>,
    /// Commands hash → glyphs with those commands and their characters.
    shapes: HashMap<u64, Vec<(GlyphId, char)>>,
    /// Advance widths of the space and the ideographic space.
    spaces: Vec<(i32, char)>,
    glyphs: usize,
}

/// The reference fonts, indexed.
pub struct Reference {
    fonts: Vec<Indexed>,
}

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reference")
            .field("fonts", &self.fonts.len())
            .field("glyphs", &self.glyphs())
            .finish()
    }
}

/// Which of two characters drawn by one outline a decoded page should read: a character of
/// its own before a compatibility form (Kangxi radicals, CJK compatibility ideographs, which
/// fonts draw with the unified ideograph's glyph), then the lower code point.
fn preferred(a: char, b: char) -> char {
    let compat = |c: char| matches!(c as u32, 0x2E80..=0x2FDF | 0x3200..=0x33FF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F);
    if (compat(a), a) <= (compat(b), b) {
        a
    } else {
        b
    }
}

impl Reference {
    /// Reads and indexes the fonts at `paths` (the first face of a collection); paths that
    /// do not exist are skipped.
    ///
    /// # Errors
    /// [`Error::NoReference`] when none could be read, naming each path's problem.
    pub fn load(paths: &[PathBuf]) -> Result<Self> {
        let mut fonts = Vec::new();
        let mut problems = Vec::new();
        for path in paths {
            match std::fs::read(path) {
                Ok(bytes) => match Self::index(bytes) {
                    Ok(indexed) => fonts.push(indexed),
                    Err(e) => problems.push(format!("{}: {e}", path.display())),
                },
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
        if fonts.is_empty() {
            if problems.is_empty() {
                problems.push("none configured".to_owned());
            }
            return Err(Error::NoReference(problems.join("; ")));
        }
        Ok(Reference { fonts })
    }

    /// A reference of one font's bytes (the first face of a collection).
    ///
    /// # Errors
    /// [`Error::Malformed`] for bytes the outline reader refuses.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        Ok(Reference {
            fonts: vec![Self::index(bytes)?],
        })
    }

    fn index(bytes: Vec<u8>) -> Result<Indexed> {
        let font = FontRef::from_index(&bytes, 0)
            .map_err(|e| Error::Malformed(format!("table directory: {e}")))?;
        let face = Face::new(&font, u32::from(u16::MAX))?;
        let mut by_glyph: HashMap<GlyphId, char> = HashMap::new();
        for (code, glyph) in face.charmap().mappings() {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            if is_private_use(c) || c.is_control() {
                continue;
            }
            by_glyph
                .entry(glyph)
                .and_modify(|had| *had = preferred(*had, c))
                .or_insert(c);
        }
        let mut glyphs: Vec<(GlyphId, char)> = by_glyph.into_iter().collect();
        glyphs.sort_unstable_by_key(|(g, _)| g.to_u32());
        let mut exact: HashMap<u64, char> = HashMap::with_capacity(glyphs.len());
        let mut shapes: HashMap<u64, Vec<(GlyphId, char)>> = HashMap::new();
        let mut spaces = Vec::new();
        for &(glyph, c) in &glyphs {
            let Some(outline) = face.outline(glyph) else {
                continue;
            };
            if outline.is_empty() {
                if c == ' ' || c == '\u{3000}' {
                    spaces.push((outline.advance, c));
                }
                continue;
            }
            exact
                .entry(outline.exact_hash())
                .and_modify(|had| *had = preferred(*had, c))
                .or_insert(c);
            shapes
                .entry(outline.shape_hash())
                .or_default()
                .push((glyph, c));
        }
        Ok(Indexed {
            glyphs: glyphs.len(),
            bytes,
            exact,
            shapes,
            spaces,
        })
    }

    /// Characters indexed over all reference fonts.
    pub fn glyphs(&self) -> usize {
        self.fonts.iter().map(|f| f.glyphs).sum()
    }

    /// An estimate of the heap the index holds: the fonts' bytes and the hash tables.
    pub fn heap_bytes(&self) -> usize {
        self.fonts
            .iter()
            .map(|f| {
                f.bytes.len()
                    + f.exact.capacity() * (8 + 4 + 8)
                    + f.shapes.capacity() * (8 + 24 + 8)
                    + f.shapes.values().map(|v| v.capacity() * 8).sum::<usize>()
            })
            .sum()
    }

    /// The character whose reference glyph `outline` draws, and whether the outline was the
    /// same point for point (`false`: the same commands within the tolerance).
    pub fn find(&self, outline: &Outline) -> Option<(char, bool)> {
        if outline.is_empty() {
            // A blank glyph: the space whose advance is nearest.
            return self
                .fonts
                .iter()
                .flat_map(|f| &f.spaces)
                .min_by_key(|(advance, _)| (advance - outline.advance).abs())
                .map(|&(_, c)| (c, false));
        }
        let exact = outline.exact_hash();
        if let Some(&c) = self.fonts.iter().find_map(|f| f.exact.get(&exact)) {
            return Some((c, true));
        }
        let shape = outline.shape_hash();
        let mut best: Option<(i32, char)> = None;
        for f in &self.fonts {
            let Some(candidates) = f.shapes.get(&shape) else {
                continue;
            };
            let Ok(font) = FontRef::from_index(&f.bytes, 0) else {
                continue;
            };
            let Ok(face) = Face::new(&font, u32::from(u16::MAX)) else {
                continue;
            };
            // Simple shapes (a box, a bar) are shared by many glyphs: a bounded look.
            for &(glyph, c) in candidates.iter().take(MAX_CANDIDATES) {
                let Some(d) = face.outline(glyph).and_then(|o| o.distance(outline)) else {
                    continue;
                };
                if d <= TOLERANCE && best.is_none_or(|(bd, bc)| (d, c) < (bd, bc)) {
                    best = Some((d, c));
                }
            }
        }
        best.map(|(_, c)| (c, false))
    }
}
