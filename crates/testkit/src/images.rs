//! Chapters drawn into images as pirate sites serve them, and hostile images.
//!
//! [`render`] lays a text out in lines of a real font (WenQuanYi Micro Hei, see
//! [`WQY_MICROHEI`]) at 16–20 px on a grey ground, with an optional faint
//! rotated watermark repeated down the image; glyph outlines come from skrifa and are filled
//! with ab_glyph's coverage rasteriser (anti-aliased, as a browser draws them). [`png`] and
//! [`jpeg`] encode the result; [`photo`] is a photograph-like image of no text; [`png_header`],
//! [`animated_gif`] and friends are what an image guard must survive.

use std::io::Cursor;

use ab_glyph_rasterizer::{Rasterizer, point};
use image::{GrayImage, Luma};
use skrifa::instance::{LocationRef, Size};
use skrifa::outline::{DrawSettings, OutlinePen};
use skrifa::{FontRef, MetadataProvider};

/// WenQuanYi Micro Hei, Debian's `fonts-wqy-microhei`, which `.ci/run` installs.
pub const WQY_MICROHEI: &str = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc";

/// The bytes of [`WQY_MICROHEI`], `None` (with a loud "skipped") when it is not installed.
///
/// # Panics
/// When it is missing and `CI=true`: CI installs it.
pub fn font() -> Option<Vec<u8>> {
    if let Ok(bytes) = std::fs::read(WQY_MICROHEI) {
        return Some(bytes);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{WQY_MICROHEI} is missing under CI=true: .ci/run installs fonts-wqy-microhei"
    );
    eprintln!("skipped: no {WQY_MICROHEI} (apt-get install fonts-wqy-microhei)");
    None
}

/// How a chapter is drawn.
#[derive(Clone, Debug)]
pub struct Style {
    /// Font size in pixels (the em).
    pub px: f32,
    /// Image width in pixels.
    pub width: u32,
    /// Margin around the text, in pixels.
    pub margin: u32,
    /// Pixels between two lines.
    pub line_gap: u32,
    /// The ground's grey level.
    pub background: u8,
    /// The text's grey level.
    pub ink: u8,
    /// A watermark drawn faintly, rotated, every 360 px down the image.
    pub watermark: Option<String>,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            px: 18.0,
            width: 720,
            margin: 24,
            line_gap: 10,
            background: 232,
            ink: 34,
            watermark: None,
        }
    }
}

struct Pen<'r> {
    raster: &'r mut Rasterizer,
    /// Where the glyph's origin lands, in raster pixels (y down).
    x: f32,
    y: f32,
    /// Rotation (cos, sin) about the origin.
    rot: (f32, f32),
    start: (f32, f32),
    last: (f32, f32),
}

impl Pen<'_> {
    fn at(&self, x: f32, y: f32) -> ab_glyph_rasterizer::Point {
        let (c, s) = self.rot;
        point(self.x + x * c - y * s, self.y - (x * s + y * c))
    }
}

impl OutlinePen for Pen<'_> {
    fn move_to(&mut self, x: f32, y: f32) {
        self.start = (x, y);
        self.last = (x, y);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        let (a, b) = (self.at(self.last.0, self.last.1), self.at(x, y));
        self.raster.draw_line(a, b);
        self.last = (x, y);
    }
    fn quad_to(&mut self, cx0: f32, cy0: f32, x: f32, y: f32) {
        let (a, c, b) = (
            self.at(self.last.0, self.last.1),
            self.at(cx0, cy0),
            self.at(x, y),
        );
        self.raster.draw_quad(a, c, b);
        self.last = (x, y);
    }
    fn curve_to(&mut self, cx0: f32, cy0: f32, cx1: f32, cy1: f32, x: f32, y: f32) {
        let (a, c0, c1, b) = (
            self.at(self.last.0, self.last.1),
            self.at(cx0, cy0),
            self.at(cx1, cy1),
            self.at(x, y),
        );
        self.raster.draw_cubic(a, c0, c1, b);
        self.last = (x, y);
    }
    fn close(&mut self) {
        if self.last != self.start {
            self.line_to(self.start.0, self.start.1);
        }
    }
}

/// A font face ready to draw at one size.
struct Face<'a> {
    font: FontRef<'a>,
    size: Size,
}

impl<'a> Face<'a> {
    fn new(font: &'a [u8], px: f32) -> Result<Self, String> {
        let font = FontRef::from_index(font, 0).map_err(|e| e.to_string())?;
        Ok(Face {
            font,
            size: Size::new(px),
        })
    }

    fn advance(&self, c: char) -> f32 {
        let Some(g) = self.font.charmap().map(c) else {
            return self.size.ppem().unwrap_or(16.0) / 2.0;
        };
        self.font
            .glyph_metrics(self.size, LocationRef::default())
            .advance_width(g)
            .unwrap_or(0.0)
    }

    /// Draws `c` with its origin at (`x`, `y`) of `raster`, rotated by `rot`.
    fn draw(&self, raster: &mut Rasterizer, c: char, x: f32, y: f32, rot: (f32, f32)) {
        let Some(g) = self.font.charmap().map(c) else {
            return;
        };
        let Some(glyph) = self.font.outline_glyphs().get(g) else {
            return;
        };
        let mut pen = Pen {
            raster,
            x,
            y,
            rot,
            start: (0.0, 0.0),
            last: (0.0, 0.0),
        };
        let _ = glyph.draw(
            DrawSettings::unhinted(self.size, LocationRef::default()),
            &mut pen,
        );
    }
}

/// `text` laid out in lines of `style.width` (each `\n` a new paragraph, indented by two
/// characters) and drawn in `font` (a TrueType font or collection's first face).
///
/// # Errors
/// A font that does not open.
pub fn render(font: &[u8], text: &str, style: &Style) -> Result<GrayImage, String> {
    let face = Face::new(font, style.px)?;
    let usable = (style.width - 2 * style.margin) as f32;
    let indent = face.advance('中') * 2.0;
    let mut lines: Vec<Vec<(char, f32)>> = Vec::new();
    for para in text.split('\n').map(str::trim).filter(|p| !p.is_empty()) {
        let mut line = Vec::new();
        let mut x = indent;
        for c in para.chars() {
            let adv = face.advance(c);
            if x + adv > usable && !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                x = 0.0;
            }
            line.push((c, x));
            x += adv;
        }
        lines.push(line);
    }
    let line_h = style.px.ceil() as u32 + style.line_gap;
    let height = 2 * style.margin + line_h * lines.len().max(1) as u32;
    let mut img = GrayImage::from_pixel(style.width, height, Luma([style.background]));
    if let Some(mark) = &style.watermark {
        watermark(&mut img, font, mark, style)?;
    }
    let ascent = style.px * 0.86;
    for (i, line) in lines.iter().enumerate() {
        let top = style.margin + line_h * i as u32;
        let mut raster = Rasterizer::new(style.width as usize, line_h as usize);
        for &(c, x) in line {
            face.draw(
                &mut raster,
                c,
                style.margin as f32 + x,
                ascent + style.line_gap as f32 / 2.0,
                (1.0, 0.0),
            );
        }
        blend(&mut img, &raster, top, style.ink, 1.0);
    }
    Ok(img)
}

/// Blends a raster's coverage onto `img` from row `top`, towards `ink` at `alpha`.
fn blend(img: &mut GrayImage, raster: &Rasterizer, top: u32, ink: u8, alpha: f32) {
    let (w, h) = img.dimensions();
    raster.for_each_pixel_2d(|x, y, cov| {
        let y = top + y;
        if x >= w || y >= h || cov <= 0.0 {
            return;
        }
        let a = cov.min(1.0) * alpha;
        let p = img.get_pixel_mut(x, y);
        p[0] = (f32::from(p[0]) * (1.0 - a) + f32::from(ink) * a).round() as u8;
    });
}

/// A faint watermark: `mark` at three times the text's size, rotated 30°, every 360 px.
fn watermark(img: &mut GrayImage, font: &[u8], mark: &str, style: &Style) -> Result<(), String> {
    let px = style.px * 2.2;
    let face = Face::new(font, px)?;
    let tile = 360u32;
    let (s, c) = 30f32.to_radians().sin_cos();
    let mut raster = Rasterizer::new(img.width() as usize, tile as usize);
    let mut x = 0.0;
    for ch in mark.chars() {
        // Along the rotated baseline from the tile's lower left.
        let (ox, oy) = (style.margin as f32 + x * c, tile as f32 * 0.8 - x * s);
        face.draw(&mut raster, ch, ox, oy, (c, s));
        x += face.advance(ch);
    }
    let mut top = 0;
    while top < img.height() {
        blend(img, &raster, top, 0, 0.12);
        top += tile;
    }
    Ok(())
}

/// `img` as PNG.
pub fn png(img: &GrayImage) -> Vec<u8> {
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .expect("PNG encodes");
    out
}

/// `img` as JPEG at `quality` (1–100): lower is blockier.
pub fn jpeg(img: &GrayImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(img)
        .expect("JPEG encodes");
    out
}

/// A photograph-like image of no text: smooth shading under heavy grain, from `seed`.
pub fn photo(width: u32, height: u32, seed: u64) -> GrayImage {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (fx, fy) = (
        (next() % 7 + 2) as f32 / width as f32,
        (next() % 5 + 2) as f32 / height as f32,
    );
    GrayImage::from_fn(width, height, |x, y| {
        let shade = 128.0
            + 70.0 * ((x as f32 * fx * 6.3).sin() * (y as f32 * fy * 6.3).cos())
            + (next() % 121) as f32
            - 60.0;
        Luma([shade.clamp(0.0, 255.0) as u8])
    })
}

/// A PNG whose header declares `width` × `height` pixels of 8-bit grey, followed by a few
/// rows of real data and a proper end: a decompression bomb's header with none of its body.
pub fn png_header(width: u32, height: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib_stored(&[0u8; 1024]));
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// `data` (at most 65,535 bytes) as a zlib stream of one stored block.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let len = data.len() as u16;
    let mut out = vec![0x78, 0x01, 0x01];
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

/// An animated GIF of `frames` (each a grey image of one size), as pirates serve a chapter
/// that pages itself.
pub fn animated_gif(frames: &[GrayImage]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = image::codecs::gif::GifEncoder::new(&mut out);
        enc.set_repeat(image::codecs::gif::Repeat::Infinite)
            .expect("GIF repeat");
        let frames = frames.iter().map(|f| {
            let rgba = image::DynamicImage::ImageLuma8(f.clone()).into_rgba8();
            image::Frame::new(rgba)
        });
        enc.encode_frames(frames).expect("GIF encodes");
    }
    out
}

/// Character error rate of `read` against `reference`: the Levenshtein distance over
/// characters divided by the reference's length, whitespace left out (how OCR is scored).
pub fn character_error_rate(reference: &str, read: &str) -> f64 {
    let a: Vec<char> = reference.chars().filter(|c| !c.is_whitespace()).collect();
    let b: Vec<char> = read.chars().filter(|c| !c.is_whitespace()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j + 1] + 1)
                .min(cur[j] + 1)
                .min(prev[j] + usize::from(ca != cb));
        }
        prev = cur;
    }
    prev[b.len()] as f64 / a.len().max(1) as f64
}
