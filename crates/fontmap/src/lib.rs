//! Remapped web fonts read back.
//!
//! Pirate sites disguise a copied chapter with a font of their own: the page's HTML holds
//! Private Use Area (PUA) code points where its most frequent characters should be, and the
//! page's `@font-face` draws each of those code points with the glyph of the character it
//! replaces. A reader sees the chapter; a crawler that reads the HTML sees holes. This crate
//! takes such a font's bytes and gives back, for each PUA code point of its `cmap`, the
//! character whose glyph it draws, by finding the same outline in a reference font (a CJK
//! font on the system, such as WenQuanYi Micro Hei or Noto Sans CJK).
//!
//! In copyhound's flow it sits under `crawler` (a leaf, like `ingest`): the crawl and
//! `check` fetch a page's font under their own rules and hand its bytes here. It may use
//! `bounds` only, and has no async, HTTP or HTML, so its tests build in seconds.
//!
//! # Pieces
//!
//! - [`sfnt`]: a font's bytes (TrueType/OpenType, a collection, WOFF, WOFF2) to the plain
//!   font, within a size cap and a decompression budget.
//! - [`Outline`]: a glyph drawn unhinted by skrifa, its points scaled to 1/4096 em; an exact
//!   hash and a shape hash (the commands alone).
//! - [`Reference`]: the reference fonts' outlines indexed once: exact hash → character, shape
//!   hash → glyphs (34,587 glyphs of WenQuanYi Micro Hei in 86 ms, about 8 MiB).
//! - [`decode`]: a page font's PUA code points → characters: exact outline first, else the
//!   same commands within 1/256 em; caps on glyphs, `cmap` entries, PUA code points and time.
//! - [`FontDecoder`]: one per process and settings ([`FontDecoder::shared`]), the reference
//!   loaded lazily, the maps cached by the font's SHA-256 (failures too).
//! - [`FontSettings`]: `[crawler.extract.fonts]`, the reference fonts, the caps and the time
//!   budget.
//!
//! Pirates subset a standard font, so the glyph a PUA code point draws is, point for point,
//! the reference's glyph of the character (the exact hash); a font that scaled its outlines
//! to another em size lands within the tolerance of the shape match.
//!
//! # Example
//!
//! ```no_run
//! use fontmap::{FontDecoder, FontSettings};
//!
//! let decoder = FontDecoder::shared(&FontSettings::default());
//! let font = std::fs::read("r3.woff2").unwrap();
//! let map = decoder.decode(&font).unwrap();
//! let (text, replaced) = map.apply("\u{E000}说\u{E001}下");
//! println!("{text} ({replaced} characters decoded)");
//! ```

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod outline;
mod reference;
pub mod sfnt;

pub use outline::{GRID, Outline};
pub use reference::Reference;

/// What went wrong with a font; every case says why in its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The font's bytes are over [`FontSettings::max_font_bytes`].
    #[error("font of {bytes} bytes is over the cap of {max} bytes")]
    TooLarge {
        /// Bytes of the font.
        bytes: u64,
        /// The cap.
        max: u64,
    },
    /// WOFF/WOFF2 tables that would decompress past [`FontSettings::max_decoded_bytes`].
    #[error("font would decompress to more than {max} bytes")]
    Bomb {
        /// The cap.
        max: u64,
    },
    /// Not a font, or tables that cannot be read.
    #[error("malformed font: {0}")]
    Malformed(String),
    /// More glyphs or PUA code points than a page font needs.
    #[error("font has {count} {what}, over the cap of {max}")]
    TooMany {
        /// What was counted.
        what: &'static str,
        /// How many.
        count: u64,
        /// The cap.
        max: u64,
    },
    /// The decoding ran out of [`FontSettings::time_budget`].
    #[error("font decoding took longer than {0:?}")]
    Deadline(Duration),
    /// No reference font could be read.
    #[error(
        "no reference font could be read ({0}); install fonts-wqy-microhei or set [crawler.extract.fonts] reference_fonts"
    )]
    NoReference(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How page fonts are read: `[crawler.extract.fonts]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct FontSettings {
    /// Whether a page's PUA characters are decoded through its `@font-face` at all.
    pub enabled: bool,
    /// Reference fonts (TrueType/OpenType files or collections; a collection's first face),
    /// tried in order; files that do not exist are skipped.
    pub reference_fonts: Vec<PathBuf>,
    /// Bytes a page font may have as served (the fetch cap for it too).
    pub max_font_bytes: u64,
    /// Bytes a WOFF/WOFF2 font may decompress to.
    pub max_decoded_bytes: u64,
    /// Glyphs a page font may have.
    pub max_glyphs: u32,
    /// PUA code points a page font may map.
    pub max_code_points: u32,
    /// Fonts read per page (its `@font-face` sources in order).
    pub max_fonts_per_page: usize,
    /// Time one font's decoding may take.
    #[serde(with = "bounds::duration_serde")]
    pub time_budget: Duration,
    /// Fonts whose maps are kept in memory (by SHA-256).
    pub cache_entries: usize,
}

impl Default for FontSettings {
    fn default() -> Self {
        FontSettings {
            enabled: true,
            reference_fonts: vec![
                PathBuf::from("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
                PathBuf::from("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
            ],
            // A subset CJK web font is tens to hundreds of KiB; a whole CJK font is 5-20 MiB
            // and no pirate page ships one.
            max_font_bytes: 4 << 20,
            max_decoded_bytes: 32 << 20,
            // TrueType counts glyphs in 16 bits: the cap is below that, for the time a font
            // of every glyph would take.
            max_glyphs: 40_000,
            // The BMP's PUA has 6,400 code points; a page that remaps more is not a page font.
            max_code_points: 8_192,
            max_fonts_per_page: 4,
            // Drawing and hashing a few thousand glyphs takes tens of milliseconds.
            time_budget: Duration::from_secs(2),
            cache_entries: 256,
        }
    }
}

impl FontSettings {
    /// Checks that every limit is usable.
    ///
    /// # Errors
    /// The first setting out of range, keyed relative to this section.
    pub fn validate(&self) -> bounds::Check {
        bounds::at_least("max_font_bytes", self.max_font_bytes, 1024)?;
        bounds::at_least("max_decoded_bytes", self.max_decoded_bytes, 1024)?;
        bounds::between("max_glyphs", self.max_glyphs, 1, 65_535)?;
        bounds::at_least("max_code_points", self.max_code_points, 1)?;
        bounds::at_least("max_fonts_per_page", self.max_fonts_per_page, 1)?;
        bounds::at_least("time_budget", self.time_budget, Duration::from_millis(1))?;
        bounds::at_least("cache_entries", self.cache_entries, 1)
    }
}

/// Whether `c` is a Private Use Area code point (the BMP's and planes 15 and 16).
pub fn is_private_use(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// Whether `text` holds a Private Use Area code point.
pub fn has_private_use(text: &str) -> bool {
    text.chars().any(is_private_use)
}

/// A page font's PUA code points and the characters their glyphs draw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FontMap {
    /// PUA code point → the character whose outline it draws.
    pub chars: BTreeMap<char, char>,
    /// PUA code points of the font whose outline no reference glyph has.
    pub unresolved: usize,
    /// Of `chars`, those found by the tolerant shape match rather than the exact outline.
    pub by_shape: usize,
}

impl FontMap {
    /// `text` with every PUA code point this map knows replaced, and how many were.
    pub fn apply(&self, text: &str) -> (String, usize) {
        let mut replaced = 0;
        let out = text
            .chars()
            .map(|c| match self.chars.get(&c) {
                Some(&to) => {
                    replaced += 1;
                    to
                }
                None => c,
            })
            .collect();
        (out, replaced)
    }

    /// Adds the entries of `other` this map lacks (the first font of a page wins).
    pub fn merge(&mut self, other: &FontMap) {
        for (&from, &to) in &other.chars {
            self.chars.entry(from).or_insert(to);
        }
        self.unresolved += other.unresolved;
        self.by_shape += other.by_shape;
    }
}

/// Maps `font`'s PUA code points to characters through `reference` (see the [crate
/// docs](crate)). CPU work on hostile bytes, bounded by `settings`: run it off an async
/// runtime.
///
/// # Errors
/// [`Error::TooLarge`], [`Error::Bomb`], [`Error::Malformed`], [`Error::TooMany`] or
/// [`Error::Deadline`], each saying why.
pub fn decode(font: &[u8], reference: &Reference, settings: &FontSettings) -> Result<FontMap> {
    let deadline = Instant::now() + settings.time_budget;
    let sfnt = sfnt::unwrap(font, settings)?;
    let font = skrifa::FontRef::from_index(&sfnt, 0)
        .map_err(|e| Error::Malformed(format!("table directory: {e}")))?;
    let face = outline::Face::new(&font, settings.max_glyphs)?;
    let mut pua = Vec::new();
    // Format 12/13 groups may claim millions of code points: the walk stops once it has
    // seen more than a font of max_glyphs could map honestly.
    let max_seen = u64::from(settings.max_glyphs) * 4;
    for (seen, (code, glyph)) in face.charmap().mappings().enumerate() {
        if seen as u64 >= max_seen {
            return Err(Error::TooMany {
                what: "cmap entries",
                count: seen as u64,
                max: max_seen,
            });
        }
        if let Some(c) = char::from_u32(code).filter(|&c| is_private_use(c)) {
            pua.push((c, glyph));
            if pua.len() as u64 > u64::from(settings.max_code_points) {
                return Err(Error::TooMany {
                    what: "PUA code points",
                    count: pua.len() as u64,
                    max: u64::from(settings.max_code_points),
                });
            }
        }
    }
    let mut map = FontMap::default();
    for (c, glyph) in pua {
        if Instant::now() > deadline {
            return Err(Error::Deadline(settings.time_budget));
        }
        let Some(drawn) = face.outline(glyph) else {
            map.unresolved += 1;
            continue;
        };
        match reference.find(&drawn) {
            Some((to, exact)) => {
                map.chars.insert(c, to);
                map.by_shape += usize::from(!exact);
            }
            None => map.unresolved += 1,
        }
    }
    Ok(map)
}

/// The SHA-256 of a font's bytes, the key its map is cached under.
pub fn font_hash(font: &[u8]) -> [u8; 32] {
    Sha256::digest(font).into()
}

/// The reference index, loaded once on first use, and the maps of the fonts decoded so far
/// (by SHA-256, the oldest dropped past [`FontSettings::cache_entries`]; a font that failed
/// is remembered with its reason, so a page's bad font is not read again for each page).
#[derive(Debug)]
pub struct FontDecoder {
    settings: FontSettings,
    reference: OnceLock<Result<Arc<Reference>>>,
    cache: Mutex<Cache>,
}

#[derive(Debug, Default)]
struct Cache {
    maps: HashMap<[u8; 32], Result<Arc<FontMap>>>,
    order: VecDeque<[u8; 32]>,
}

impl FontDecoder {
    /// A decoder with `settings`, its reference not loaded yet.
    pub fn new(settings: FontSettings) -> Self {
        FontDecoder {
            settings,
            reference: OnceLock::new(),
            cache: Mutex::default(),
        }
    }

    /// The process's decoder for `settings`: the reference fonts are indexed once per
    /// process, however many crawls, checks and workers use them.
    pub fn shared(settings: &FontSettings) -> Arc<FontDecoder> {
        static SHARED: Mutex<Vec<Arc<FontDecoder>>> = Mutex::new(Vec::new());
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = shared.iter().find(|d| &d.settings == settings) {
            return Arc::clone(d);
        }
        let d = Arc::new(FontDecoder::new(settings.clone()));
        shared.push(Arc::clone(&d));
        d
    }

    /// The settings.
    pub fn settings(&self) -> &FontSettings {
        &self.settings
    }

    /// The reference index, loaded (and timed, in the log) on first use.
    ///
    /// # Errors
    /// [`Error::NoReference`] when no reference font could be read.
    pub fn reference(&self) -> Result<Arc<Reference>> {
        self.reference
            .get_or_init(|| {
                let started = Instant::now();
                let loaded = Reference::load(&self.settings.reference_fonts).map(Arc::new);
                if let Ok(r) = &loaded {
                    tracing::info!(
                        glyphs = r.glyphs(),
                        bytes = r.heap_bytes(),
                        ms = started.elapsed().as_millis() as u64,
                        "reference fonts indexed"
                    );
                }
                loaded
            })
            .clone()
    }

    /// The map of `font`, from the cache or decoded now (CPU work: call it off an async
    /// runtime).
    ///
    /// # Errors
    /// What [`decode`] or [`FontDecoder::reference`] refuse.
    pub fn decode(&self, font: &[u8]) -> Result<Arc<FontMap>> {
        if font.len() as u64 > self.settings.max_font_bytes {
            return Err(Error::TooLarge {
                bytes: font.len() as u64,
                max: self.settings.max_font_bytes,
            });
        }
        let key = font_hash(font);
        if let Some(hit) = self.lock().maps.get(&key) {
            return hit.clone();
        }
        let reference = self.reference()?;
        let decoded = decode(font, &reference, &self.settings).map(Arc::new);
        let mut cache = self.lock();
        if !cache.maps.contains_key(&key) {
            while cache.order.len() >= self.settings.cache_entries {
                if let Some(old) = cache.order.pop_front() {
                    cache.maps.remove(&old);
                }
            }
            cache.order.push_back(key);
            cache.maps.insert(key, decoded.clone());
        }
        decoded
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}
