//! Glyph outlines as comparable values: drawn unhinted at the font's own units by skrifa
//! (composite glyphs resolved, CFF charstrings run within skrifa's own stack and nesting
//! limits), every coordinate scaled to [`GRID`](crate::GRID) units per em and rounded.

use skrifa::instance::{LocationRef, Size};
use skrifa::outline::{DrawSettings, OutlinePen};
use skrifa::raw::TableProvider;
use skrifa::{FontRef, GlyphId, MetadataProvider};
use xxhash_rust::xxh3::xxh3_64;

use crate::{Error, Result};

/// Units per em that outlines are compared in: fine enough that two glyphs of one font never
/// fall together, and every em size that divides it (1000 does not; 1024, 2048 do) maps
/// exactly.
pub const GRID: f32 = 4096.0;

/// Path commands one glyph may draw; a CJK glyph draws a few hundred.
const MAX_COMMANDS: usize = 4096;

/// One glyph's outline: its commands and their points in [`GRID`](crate::GRID) units, and its advance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// One byte per command: `M`, `L`, `Q`, `C`, `Z`.
    pub commands: Vec<u8>,
    /// The commands' points, x then y, in order.
    pub points: Vec<i32>,
    /// The advance width in [`GRID`](crate::GRID) units.
    pub advance: i32,
}

impl Outline {
    /// Hash of the commands and points: equal for the same glyph data in fonts of any em
    /// size that divides [`GRID`](crate::GRID).
    pub fn exact_hash(&self) -> u64 {
        let mut bytes = Vec::with_capacity(self.commands.len() + self.points.len() * 4);
        bytes.extend_from_slice(&self.commands);
        for p in &self.points {
            bytes.extend_from_slice(&p.to_le_bytes());
        }
        xxh3_64(&bytes)
    }

    /// Hash of the commands alone: the glyphs a tolerant comparison looks among.
    pub fn shape_hash(&self) -> u64 {
        xxh3_64(&self.commands)
    }

    /// Whether the glyph draws nothing (a space).
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// The largest distance between two outlines' corresponding points, in [`GRID`](crate::GRID) units;
    /// `None` when their commands differ.
    pub fn distance(&self, other: &Outline) -> Option<i32> {
        if self.commands != other.commands || self.points.len() != other.points.len() {
            return None;
        }
        Some(
            self.points
                .iter()
                .zip(&other.points)
                .map(|(a, b)| (a - b).abs())
                .max()
                .unwrap_or(0),
        )
    }
}

/// Collects a glyph's path, scaled, up to [`MAX_COMMANDS`].
struct Pen {
    scale: f32,
    outline: Outline,
    overflow: bool,
}

impl Pen {
    fn push(&mut self, command: u8, points: &[f32]) {
        if self.outline.commands.len() >= MAX_COMMANDS {
            self.overflow = true;
            return;
        }
        self.outline.commands.push(command);
        for &v in points {
            // A NaN or an infinity (a hostile CFF charstring) becomes 0 or the i32 bound.
            self.outline.points.push((v * self.scale).round() as i32);
        }
    }
}

impl OutlinePen for Pen {
    fn move_to(&mut self, x: f32, y: f32) {
        self.push(b'M', &[x, y]);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        self.push(b'L', &[x, y]);
    }
    fn quad_to(&mut self, cx0: f32, cy0: f32, x: f32, y: f32) {
        self.push(b'Q', &[cx0, cy0, x, y]);
    }
    fn curve_to(&mut self, cx0: f32, cy0: f32, cx1: f32, cy1: f32, x: f32, y: f32) {
        self.push(b'C', &[cx0, cy0, cx1, cy1, x, y]);
    }
    fn close(&mut self) {
        self.push(b'Z', &[]);
    }
}

/// A font opened for drawing: its em size checked, its glyph count under a cap.
pub(crate) struct Face<'a> {
    font: FontRef<'a>,
    glyphs: skrifa::OutlineGlyphCollection<'a>,
    scale: f32,
    metrics: skrifa::metrics::GlyphMetrics<'a>,
}

impl<'a> Face<'a> {
    /// `font` with at most `max_glyphs` glyphs.
    ///
    /// # Errors
    /// [`Error::Malformed`] without a readable `head` or `maxp` or with an em size outside
    /// 16..=16384 (the OpenType range), [`Error::TooMany`] past `max_glyphs`.
    pub(crate) fn new(font: &FontRef<'a>, max_glyphs: u32) -> Result<Self> {
        let head = font
            .head()
            .map_err(|e| Error::Malformed(format!("head table: {e}")))?;
        let maxp = font
            .maxp()
            .map_err(|e| Error::Malformed(format!("maxp table: {e}")))?;
        let count = u32::from(maxp.num_glyphs());
        if count > max_glyphs {
            return Err(Error::TooMany {
                what: "glyphs",
                count: u64::from(count),
                max: u64::from(max_glyphs),
            });
        }
        let upem = head.units_per_em();
        if !(16..=16384).contains(&upem) {
            return Err(Error::Malformed(format!("units per em {upem}")));
        }
        Ok(Face {
            font: font.clone(),
            glyphs: font.outline_glyphs(),
            scale: GRID / f32::from(upem),
            metrics: font.glyph_metrics(Size::unscaled(), LocationRef::default()),
        })
    }

    pub(crate) fn charmap(&self) -> skrifa::charmap::Charmap<'a> {
        self.font.charmap()
    }

    /// The outline of `glyph`; `None` when it cannot be drawn or draws too much.
    pub(crate) fn outline(&self, glyph: GlyphId) -> Option<Outline> {
        let drawn = self.glyphs.get(glyph)?;
        let mut pen = Pen {
            scale: self.scale,
            outline: Outline::default(),
            overflow: false,
        };
        let settings = DrawSettings::unhinted(Size::unscaled(), LocationRef::default());
        drawn.draw(settings, &mut pen).ok()?;
        if pen.overflow {
            return None;
        }
        let advance = self.metrics.advance_width(glyph).unwrap_or(0.0);
        pen.outline.advance = (advance * self.scale).round() as i32;
        Some(pen.outline)
    }
}
