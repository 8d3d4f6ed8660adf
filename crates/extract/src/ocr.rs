//! Text read from a page's images: pirates serve a chapter as one tall picture or a few
//! "screens" of it, drawn in a CJK font on a grey ground, with the `alt` text empty or a
//! slogan. The page's markup then says next to nothing, and only the pixels hold the chapter.
//!
//! This module decides, reads and assembles; it never fetches. The crawl:
//!
//! 1. asks [`images_to_fetch`] whether a page's images are worth reading: only when its text is
//!    thin ([`OcrSettings::thin_text_chars`]) and it shows images that could hold text (not an
//!    icon by its declared size), or when its site is listed in [`OcrSettings::sites`]; never
//!    for a page whose text is already there;
//! 2. fetches those images under its own rules (robots.txt, the host's politeness, address
//!    safety, a body cap of [`OcrSettings::max_image_bytes`]), as it does a page's fonts;
//! 3. hands the bytes to [`read_images`] on a blocking thread: each image is decoded within
//!    pixel and allocation limits ([`decode_image`]: PNG, JPEG, GIF's first frame, WebP),
//!    kept only if it looks like text ([`looks_like_text`], a grey-level and edge test far
//!    cheaper than OCR), cut into strips between lines of text ([`strips`]) and read by the
//!    [`OcrEngine`] within the page's time budget.
//!
//! The engine is a trait: [`Tesseract`] runs the `tesseract` program (Debian's
//! `tesseract-ocr` with `tesseract-ocr-chi-sim`) as a subprocess per strip, fed a PGM on
//! stdin, read back as TSV (words, boxes, confidences), killed when it overruns its timeout,
//! so no hostile image can crash or hang the crawl. A subprocess rather than bindings:
//! `leptess`/`tesseract` need libclang at build time and share our address space with
//! leptonica's decoders; PP-OCR's ONNX models (PyPI `rapidocr`) read better but need an ONNX
//! runtime we cannot build offline and ~3x the CPU a page (see the crate's measurements in
//! the bench's `quality` images row).
//!
//! What [`read_images`] returns keeps each image's SHA-256, size, and every line's box and
//! confidence beside the text, so the evidence can hold the image with what was read from it.

use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use image::{GrayImage, ImageFormat, ImageReader, Limits};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

use crate::error::{Error, Result};

/// `[crawler.extract.ocr]`: whether, when and within what limits a page's images are read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct OcrSettings {
    /// Read images at all (a crawl also needs the engine installed: without it, OCR is off
    /// and the crawl says so once).
    pub enabled: bool,
    /// The `tesseract` program to run (a name looked up on `PATH`, or a path).
    pub program: PathBuf,
    /// Tesseract's languages (`-l`): `chi_sim` reads simplified Chinese with Latin letters
    /// and digits; `chi_sim+eng` read our generated pages worse (the English model takes
    /// over whole lines of Chinese).
    pub languages: String,
    /// Tesseract's page segmentation mode (`--psm`): 6, one uniform block of text, fits a
    /// screen of a chapter; 4 (one column of lines of different sizes) is the other choice.
    pub page_segmentation: u8,
    /// Hosts whose pages' images are always read, their text thin or not (a host names
    /// itself and its subdomains): sites known to serve chapters as images.
    pub sites: Vec<String>,
    /// A page with fewer characters of main text than this is "thin": its images are read
    /// when it shows any that could hold text.
    pub thin_text_chars: usize,
    /// Images of one page read at most, in page order.
    pub max_images: usize,
    /// Bytes of one image fetched at most.
    pub max_image_bytes: u64,
    /// Width of an image decoded at most, in pixels.
    pub max_width: u32,
    /// Height of an image decoded at most, in pixels (a chapter as one tall image of 20 px
    /// lines is about 12,000 px).
    pub max_height: u32,
    /// Pixels of an image decoded at most (width × height).
    pub max_pixels: u64,
    /// Height of one strip handed to the engine, in pixels (before scaling).
    pub strip_height: u32,
    /// Lines read with a mean confidence below this (0–100) are left out of the text (a
    /// faint watermark read as junk), kept in the result.
    pub min_confidence: u8,
    /// Time one strip may take in the engine before it is killed.
    #[serde(with = "crate::duration_serde")]
    pub strip_timeout: Duration,
    /// Time all of one page's images may take; what is left is not read.
    #[serde(with = "crate::duration_serde")]
    pub page_budget: Duration,
}

impl Default for OcrSettings {
    fn default() -> Self {
        OcrSettings {
            enabled: true,
            program: PathBuf::from("tesseract"),
            languages: "chi_sim".to_owned(),
            page_segmentation: 6,
            sites: Vec::new(),
            // A chapter is thousands of characters; a page of images carries a title, a
            // slogan and navigation: a few dozen to a couple of hundred.
            thin_text_chars: 300,
            max_images: 24,
            max_image_bytes: 8 * 1024 * 1024,
            max_width: 4096,
            max_height: 32_768,
            // 40 Mpx: a tall 1,200 × 32,000 chapter; 40 MB of grey, 160 MB of RGBA at most.
            max_pixels: 40_000_000,
            strip_height: 1600,
            min_confidence: 40,
            strip_timeout: Duration::from_secs(20),
            page_budget: Duration::from_secs(60),
        }
    }
}

impl OcrSettings {
    /// Checks every limit.
    ///
    /// # Errors
    /// The first setting out of range, keyed relative to this section.
    pub fn validate(&self) -> bounds::Check {
        bounds::between("page_segmentation", self.page_segmentation, 3, 13)?;
        bounds::at_least("max_images", self.max_images, 1)?;
        bounds::at_least("max_image_bytes", self.max_image_bytes, 1024)?;
        bounds::between("max_width", self.max_width, 16, 65_535)?;
        bounds::between("max_height", self.max_height, 16, 1_000_000)?;
        bounds::at_least("max_pixels", self.max_pixels, 256)?;
        bounds::between("strip_height", self.strip_height, 64, 10_000)?;
        bounds::between("min_confidence", self.min_confidence, 0, 100)?;
        bounds::at_least("strip_timeout", self.strip_timeout, bounds::MIN_TIMEOUT)?;
        bounds::at_least("page_budget", self.page_budget, bounds::MIN_TIMEOUT)
    }

    /// Whether `host` is one of [`OcrSettings::sites`] or below one.
    pub fn site_listed(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.sites.iter().any(|s| {
            let s = s.trim_end_matches('.').to_ascii_lowercase();
            host == s || host.strip_suffix(&s).is_some_and(|p| p.ends_with('.'))
        })
    }
}

/// An `<img>` of a page, as its markup declares it ([`crate::Extracted::images`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageImage {
    /// Its source (`src`, or a lazy loader's `data-src`/`data-original`), resolved.
    pub url: Url,
    /// Its `alt` text, whitespace collapsed.
    pub alt: String,
    /// Its `width` attribute in pixels, when it gives one.
    pub width: Option<u32>,
    /// Its `height` attribute in pixels, when it gives one.
    pub height: Option<u32>,
}

impl PageImage {
    /// Whether its declared size rules out a screen of text: an icon, a logo, a button.
    fn too_small(&self) -> bool {
        self.width.is_some_and(|w| w < MIN_SIDE) || self.height.is_some_and(|h| h < MIN_SIDE)
    }
}

/// Sides below this many pixels hold no screen of text (icons, buttons, spacers).
const MIN_SIDE: u32 = 48;

/// Why a page's images are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The page's site is listed in [`OcrSettings::sites`].
    Site,
    /// The page's text is thin and it shows images that could hold text.
    ThinText,
}

/// The images of a page worth reading, and why: `None` when OCR is off, when the page's text
/// is already there (at least [`OcrSettings::thin_text_chars`] characters, on a site not
/// listed), or when it shows no image that could hold text. At most
/// [`OcrSettings::max_images`], in page order, each URL once.
pub fn images_to_fetch<'a>(
    settings: &OcrSettings,
    host: Option<&str>,
    text_chars: usize,
    images: &'a [PageImage],
) -> Option<(Trigger, Vec<&'a PageImage>)> {
    if !settings.enabled {
        return None;
    }
    let trigger = if host.is_some_and(|h| settings.site_listed(h)) {
        Trigger::Site
    } else if text_chars < settings.thin_text_chars {
        Trigger::ThinText
    } else {
        return None;
    };
    let mut seen = std::collections::HashSet::new();
    let wanted: Vec<&PageImage> = images
        .iter()
        .filter(|i| !i.too_small() && seen.insert(i.url.as_str()))
        .take(settings.max_images)
        .collect();
    (!wanted.is_empty()).then_some((trigger, wanted))
}

/// One image of a page: where it is, and its bytes or why there are none.
pub type FetchedImage = (Url, std::result::Result<Vec<u8>, String>);

/// One line of text the engine read, in the image's pixels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OcrLine {
    /// The line's text (CJK characters joined without spaces).
    pub text: String,
    /// Its box in the whole image (not the strip): left, top, width, height, in pixels.
    pub bbox: [u32; 4],
    /// The engine's mean confidence over its words, 0–100.
    pub confidence: f32,
}

/// What one image gave.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageText {
    /// Where it was fetched from.
    pub url: Url,
    /// SHA-256 of its bytes, lower-case hex (empty when no bytes were fetched).
    pub sha256: String,
    /// Its size in pixels (0 × 0 when it was not decoded).
    pub width: u32,
    pub height: u32,
    /// The lines read, top to bottom.
    pub lines: Vec<OcrLine>,
    /// Why nothing (or not all of it) was read: not fetched, not an image, over a limit, not
    /// text-like, the engine failed or the page's budget ran out.
    pub note: Option<String>,
}

impl ImageText {
    /// The text read: lines of at least `min_confidence`, joined.
    pub fn text(&self, min_confidence: u8) -> String {
        let mut out = String::new();
        for line in self
            .lines
            .iter()
            .filter(|l| l.confidence >= f32::from(min_confidence))
        {
            push_joined(&mut out, &line.text);
        }
        out
    }
}

/// What [`read_images`] read from a page's images.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageOcr {
    /// The text of all images in page order, one paragraph per image.
    pub text: String,
    /// Each image, read or not.
    pub images: Vec<ImageText>,
    /// The engine's name and languages (`tesseract chi_sim`).
    pub engine: String,
}

impl PageOcr {
    /// Characters of text read.
    pub fn chars(&self) -> usize {
        self.text.chars().filter(|c| !c.is_whitespace()).count()
    }
}

/// Reads `images` (in page order) with `engine` until `deadline`: each decoded within the
/// limits of `settings`, kept when it looks like text, cut into strips and read. An image
/// that fails says why in its [`ImageText::note`]; the rest are read. CPU work and
/// subprocesses: call it on a blocking thread.
pub fn read_images(
    engine: &dyn OcrEngine,
    settings: &OcrSettings,
    images: &[FetchedImage],
    deadline: Instant,
) -> PageOcr {
    let mut out = PageOcr {
        engine: engine.name(),
        ..PageOcr::default()
    };
    for (url, bytes) in images {
        let mut image = ImageText {
            url: url.clone(),
            sha256: String::new(),
            width: 0,
            height: 0,
            lines: Vec::new(),
            note: None,
        };
        match bytes {
            Err(why) => image.note = Some(why.clone()),
            Ok(bytes) => {
                image.sha256 = sha256_hex(bytes);
                if let Err(e) = read_one(engine, settings, bytes, deadline, &mut image) {
                    image.note = Some(e.to_string());
                }
            }
        }
        let text = image.text(settings.min_confidence);
        if !text.is_empty() {
            if !out.text.is_empty() {
                out.text.push('\n');
            }
            out.text.push_str(&text);
        }
        out.images.push(image);
    }
    out
}

fn read_one(
    engine: &dyn OcrEngine,
    settings: &OcrSettings,
    bytes: &[u8],
    deadline: Instant,
    image: &mut ImageText,
) -> Result<()> {
    let gray = decode_image(bytes, settings)?;
    (image.width, image.height) = gray.dimensions();
    looks_like_text(&gray).map_err(|reason| Error::NotText { reason })?;
    for (top, strip) in strips(&gray, settings.strip_height) {
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::OcrTimeout {
                after: settings.page_budget,
            });
        }
        let budget = settings.strip_timeout.min(deadline - now);
        // Read as drawn: on our pages of 16–20 px text, doubling the strip first changed the
        // character error by under a point either way and cost a quarter more time.
        for mut line in engine.recognize(&strip, budget)? {
            line.bbox[1] += top;
            image.lines.push(line);
        }
    }
    Ok(())
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for b in digest.iter() {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

/// Appends `next` to `out`, with a space only between two Latin letters or digits (Chinese
/// is written without spaces; a line break inside a word of Latin text is a space).
fn push_joined(out: &mut String, next: &str) {
    let next = next.trim();
    if next.is_empty() {
        return;
    }
    if out
        .chars()
        .next_back()
        .zip(next.chars().next())
        .is_some_and(|(a, b)| a.is_ascii_alphanumeric() && b.is_ascii_alphanumeric())
    {
        out.push(' ');
    }
    out.push_str(next);
}

/// Decodes an image's bytes to grey levels within the limits of `settings`: only PNG, JPEG,
/// GIF (its first frame) and WebP, told apart by their bytes (never by a `Content-Type`);
/// width, height and pixels are checked from the header before anything is allocated, and
/// the decoder itself runs under the same limits and an allocation cap.
///
/// # Errors
/// [`Error::ImageRefused`] saying why: not an image of those formats, over a limit, or
/// bytes that do not decode (truncated, corrupt).
pub fn decode_image(bytes: &[u8], settings: &OcrSettings) -> Result<GrayImage> {
    let refused = |reason: String| Error::ImageRefused { reason };
    let reader = |limits: Limits| -> Result<ImageReader<Cursor<&[u8]>>> {
        let mut r = ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| refused(format!("unreadable: {e}")))?;
        match r.format() {
            Some(ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP) => {}
            Some(other) => return Err(refused(format!("{other:?} images are not read"))),
            None => return Err(refused("not an image (PNG, JPEG, GIF or WebP)".to_owned())),
        }
        r.limits(limits);
        Ok(r)
    };
    let mut limits = Limits::default();
    limits.max_image_width = Some(settings.max_width);
    limits.max_image_height = Some(settings.max_height);
    // The decoder's buffers: RGBA at 4 bytes a pixel, plus its own working memory.
    limits.max_alloc = Some(settings.max_pixels.saturating_mul(4) + (16 << 20));
    // The header is read without the size limits, so a refusal names the size.
    let mut header = Limits::default();
    header.max_alloc = limits.max_alloc;
    let (width, height) = reader(header)?
        .into_dimensions()
        .map_err(|e| refused(format!("header does not decode: {e}")))?;
    if width == 0 || height == 0 {
        return Err(refused("an empty image".to_owned()));
    }
    if width > settings.max_width || height > settings.max_height {
        return Err(refused(format!(
            "{width} × {height} px is over the limit of {} × {} px",
            settings.max_width, settings.max_height
        )));
    }
    if u64::from(width) * u64::from(height) > settings.max_pixels {
        return Err(refused(format!(
            "{width} × {height} px is over the limit of {} pixels",
            settings.max_pixels
        )));
    }
    let decoded = reader(limits)?
        .decode()
        .map_err(|e| refused(format!("does not decode: {e}")))?;
    Ok(decoded.into_luma8())
}

/// Whether a decoded image looks like text on a plain ground, before any OCR: most of its
/// pixels near one background level, a small share of "ink" far from it, and sharp edges
/// neither absent (a blank or a gradient) nor everywhere (a photograph, noise). Reads at most
/// about a million pixels (a sample of rows), so it costs a few milliseconds.
///
/// # Errors
/// Why the image is not text-like, with the figure that failed.
pub fn looks_like_text(img: &GrayImage) -> std::result::Result<(), String> {
    let (w, h) = img.dimensions();
    if w < MIN_SIDE || h < MIN_SIDE / 2 {
        return Err(format!("{w} × {h} px is too small to hold text"));
    }
    let step = ((u64::from(w) * u64::from(h) / 1_000_000) as u32).max(1);
    let mut hist = [0u64; 256];
    let (mut edges, mut pairs) = (0u64, 0u64);
    for y in (0..h).step_by(step as usize) {
        let mut prev = img.get_pixel(0, y)[0];
        for x in 0..w {
            let v = img.get_pixel(x, y)[0];
            hist[v as usize] += 1;
            if x > 0 {
                pairs += 1;
                if v.abs_diff(prev) > 40 {
                    edges += 1;
                }
            }
            prev = v;
        }
    }
    let total: u64 = hist.iter().sum();
    // The background: the most common level, with its neighbours (JPEG noise, dithering).
    let bg = (0..256).max_by_key(|&i| hist[i]).unwrap_or(0);
    let near = |d: usize| -> u64 {
        hist[bg.saturating_sub(d)..=(bg + d).min(255)]
            .iter()
            .sum::<u64>()
    };
    let background = near(24) as f64 / total as f64;
    let ink = 1.0 - near(64) as f64 / total as f64;
    let edge = edges as f64 / pairs.max(1) as f64;
    if background < 0.5 {
        return Err(format!(
            "no plain ground: {:.0}% of pixels near its commonest grey level",
            background * 100.0
        ));
    }
    if !(0.003..=0.4).contains(&ink) {
        return Err(format!(
            "{:.1}% of pixels stand out from the ground (text: 0.3–40%)",
            ink * 100.0
        ));
    }
    if !(0.002..=0.3).contains(&edge) {
        return Err(format!("{:.1}% sharp edges (text: 0.2–30%)", edge * 100.0));
    }
    Ok(())
}

/// `img` cut into strips of at most `height` rows, each ending on the row with the least ink
/// in the strip's last quarter (between two lines of text, not through one), with the top of
/// each strip in the image.
pub fn strips(img: &GrayImage, height: u32) -> Vec<(u32, GrayImage)> {
    let (w, h) = img.dimensions();
    if h <= height {
        return vec![(0, img.clone())];
    }
    let bg = {
        let mut hist = [0u32; 256];
        for p in img.pixels().step_by(7) {
            hist[p[0] as usize] += 1;
        }
        (0..256).max_by_key(|&i| hist[i]).unwrap_or(0) as u8
    };
    let ink = |y: u32| -> u32 {
        (0..w)
            .filter(|&x| img.get_pixel(x, y)[0].abs_diff(bg) > 64)
            .count() as u32
    };
    let mut out = Vec::new();
    let mut top = 0;
    while top < h {
        let end = if h - top <= height {
            h
        } else {
            let from = top + height * 3 / 4;
            let to = top + height;
            // The strip ends with the emptiest row, so no line of text is cut.
            (from..to)
                .min_by_key(|&y| (ink(y), to - y))
                .map_or(to, |y| y + 1)
        };
        out.push((
            top,
            image::imageops::crop_imm(img, 0, top, w, end - top).to_image(),
        ));
        top = end;
    }
    out
}

/// An OCR engine: a strip of grey pixels in, lines of text with boxes and confidences out.
/// Implementations must end within `timeout` whatever the pixels, and never take the process
/// down with them.
pub trait OcrEngine: Send + Sync + std::fmt::Debug {
    /// The engine and its languages, as the result records it (`tesseract chi_sim`).
    fn name(&self) -> String;

    /// Reads `strip`, within `timeout`.
    ///
    /// # Errors
    /// [`Error::OcrTimeout`] past `timeout`; [`Error::OcrFailed`] when the engine fails.
    fn recognize(&self, strip: &GrayImage, timeout: Duration) -> Result<Vec<OcrLine>>;
}

/// Tesseract, run as the `tesseract` program: one subprocess per strip, the strip as a PGM on
/// its stdin, TSV on its stdout, one OpenMP thread (`OMP_THREAD_LIMIT=1`: the crawl runs
/// pages in parallel, and threads cost more than they gain on a strip), killed on overrun.
#[derive(Clone, Debug)]
pub struct Tesseract {
    program: PathBuf,
    languages: String,
    psm: u8,
}

/// Bytes of TSV one strip may write; Tesseract writes about 60 bytes a word.
const MAX_TSV_BYTES: u64 = 4 << 20;

impl Tesseract {
    /// The engine of `settings`, checked: the program runs and has every language of
    /// [`OcrSettings::languages`].
    ///
    /// # Errors
    /// [`Error::OcrUnavailable`] saying what to install or set.
    pub fn probe(settings: &OcrSettings) -> Result<Self> {
        let unavailable = |reason: String| Error::OcrUnavailable {
            program: settings.program.display().to_string(),
            reason,
        };
        let out = Command::new(&settings.program)
            .arg("--list-langs")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| unavailable(format!("does not run: {e}")))?;
        if !out.status.success() {
            return Err(unavailable(format!("--list-langs failed: {}", out.status)));
        }
        // Tesseract 5 lists to stdout, 4 to stderr.
        let listed = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let have: Vec<&str> = listed.lines().map(str::trim).collect();
        for lang in settings.languages.split('+') {
            if !have.contains(&lang) {
                return Err(unavailable(format!("has no {lang:?} language data")));
            }
        }
        Ok(Tesseract {
            program: settings.program.clone(),
            languages: settings.languages.clone(),
            psm: settings.page_segmentation,
        })
    }
}

impl Tesseract {
    /// [`Tesseract::probe`] once per process and program, languages and mode: a crawl is
    /// built per site and run, and the answer does not change while the process runs.
    ///
    /// # Errors
    /// As [`Tesseract::probe`] (the first answer, kept).
    pub fn shared(settings: &OcrSettings) -> Result<std::sync::Arc<Tesseract>> {
        type Probed = std::result::Result<std::sync::Arc<Tesseract>, (String, String)>;
        static PROBED: std::sync::Mutex<BTreeMap<(PathBuf, String, u8), Probed>> =
            std::sync::Mutex::new(BTreeMap::new());
        let key = (
            settings.program.clone(),
            settings.languages.clone(),
            settings.page_segmentation,
        );
        let mut probed = PROBED.lock().unwrap_or_else(|e| e.into_inner());
        let answer = probed.entry(key).or_insert_with(|| {
            Tesseract::probe(settings)
                .map(std::sync::Arc::new)
                .map_err(|e| match e {
                    Error::OcrUnavailable { program, reason } => (program, reason),
                    other => (settings.program.display().to_string(), other.to_string()),
                })
        });
        answer
            .clone()
            .map_err(|(program, reason)| Error::OcrUnavailable { program, reason })
    }

    /// The engine a crawl or `check` reads images with: none when OCR is off
    /// (`enabled = false`), else [`Tesseract::shared`].
    ///
    /// # Errors
    /// As [`Tesseract::probe`], when OCR is on and Tesseract cannot run: the caller says so
    /// once and reads no images.
    pub fn enabled(settings: &OcrSettings) -> Result<Option<std::sync::Arc<dyn OcrEngine>>> {
        if !settings.enabled {
            return Ok(None);
        }
        let engine: std::sync::Arc<dyn OcrEngine> = Tesseract::shared(settings)?;
        Ok(Some(engine))
    }
}

impl OcrEngine for Tesseract {
    fn name(&self) -> String {
        format!("tesseract {}", self.languages)
    }

    fn recognize(&self, strip: &GrayImage, timeout: Duration) -> Result<Vec<OcrLine>> {
        let failed = |reason: String| Error::OcrFailed { reason };
        let started = Instant::now();
        let mut child = Command::new(&self.program)
            .args(["stdin", "stdout", "--psm"])
            .arg(self.psm.to_string())
            .args(["-l", &self.languages, "tsv"])
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("{} does not run: {e}", self.program.display())))?;
        let (w, h) = strip.dimensions();
        let mut pgm = format!("P5\n{w} {h}\n255\n").into_bytes();
        pgm.extend_from_slice(strip.as_raw());
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let writer = std::thread::spawn(move || stdin.write_all(&pgm));
        let stdout = child.stdout.take().expect("stdout is piped");
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout
                .take(MAX_TSV_BYTES)
                .read_to_end(&mut out)
                .map(|_| out)
        });
        let stderr = child.stderr.take().expect("stderr is piped");
        let errors = std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = stderr.take(8192).read_to_end(&mut out);
            out
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if started.elapsed() >= timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(Error::OcrTimeout { after: timeout });
                }
                // Polled, not waited on: std has no wait with a timeout, and a strip takes
                // hundreds of milliseconds, so 5 ms of latency is noise.
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(failed(format!("waiting for it: {e}")));
                }
            }
        };
        let _ = writer.join();
        let tsv = reader.join();
        let stderr = errors.join().unwrap_or_default();
        let status = status?;
        if !status.success() {
            let says = String::from_utf8_lossy(&stderr);
            let says = says.lines().last().unwrap_or("").trim();
            return Err(failed(format!("exited with {status}: {says}")));
        }
        let tsv = match tsv {
            Ok(Ok(tsv)) => tsv,
            _ => return Err(failed("its output could not be read".to_owned())),
        };
        Ok(parse_tsv(&String::from_utf8_lossy(&tsv)))
    }
}

/// Tesseract's TSV (`level page block par line word left top width height conf text`) as
/// lines: the words of each (block, paragraph, line) joined, boxes united, confidences
/// averaged. Rows that are not words, or have no text, are skipped.
pub fn parse_tsv(tsv: &str) -> Vec<OcrLine> {
    struct Acc {
        text: String,
        bbox: [u32; 4],
        conf: f32,
        words: u32,
    }
    let mut lines: BTreeMap<(u32, u32, u32, u32), Acc> = BTreeMap::new();
    for row in tsv.lines() {
        let f: Vec<&str> = row.split('\t').collect();
        if f.len() < 12 || f[0] != "5" {
            continue;
        }
        let n = |i: usize| f[i].trim().parse::<u32>().unwrap_or(0);
        let conf = f[10].trim().parse::<f32>().unwrap_or(-1.0);
        let text = f[11].trim();
        if text.is_empty() || conf < 0.0 {
            continue;
        }
        let key = (n(1), n(2), n(3), n(4));
        let (l, t, w, h) = (n(6), n(7), n(8), n(9));
        let acc = lines.entry(key).or_insert(Acc {
            text: String::new(),
            bbox: [l, t, 0, 0],
            conf: 0.0,
            words: 0,
        });
        push_joined(&mut acc.text, text);
        let [al, at, aw, ah] = acc.bbox;
        let (r, b) = ((al + aw).max(l + w), (at + ah).max(t + h));
        let (nl, nt) = (al.min(l), at.min(t));
        acc.bbox = [nl, nt, r - nl, b - nt];
        acc.conf += conf;
        acc.words += 1;
    }
    lines
        .into_values()
        .map(|a| OcrLine {
            text: a.text,
            bbox: a.bbox,
            confidence: a.conf / a.words as f32,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use testkit::images as draw;

    fn img(src: &str, w: Option<u32>, h: Option<u32>) -> PageImage {
        PageImage {
            url: Url::parse("http://pirate.test/")
                .unwrap()
                .join(src)
                .unwrap(),
            alt: String::new(),
            width: w,
            height: h,
        }
    }

    #[test]
    fn images_are_read_only_on_a_thin_page_or_a_listed_site() {
        let settings = OcrSettings {
            sites: vec!["img-novels.test".into()],
            ..OcrSettings::default()
        };
        let images = [
            img("/logo.png", Some(32), Some(32)),
            img("/c/1-1.png", Some(720), None),
            img("/c/1-2.png", None, None),
            img("/c/1-1.png", Some(720), None),
        ];
        let (trigger, wanted) =
            images_to_fetch(&settings, Some("pirate.test"), 40, &images).unwrap();
        assert_eq!(trigger, Trigger::ThinText);
        let urls: Vec<&str> = wanted.iter().map(|i| i.url.path()).collect();
        assert_eq!(
            urls,
            ["/c/1-1.png", "/c/1-2.png"],
            "icons and repeats left out"
        );
        // Text already there: never read.
        assert!(images_to_fetch(&settings, Some("pirate.test"), 3000, &images).is_none());
        // A listed site (or its subdomain) is read whatever its text.
        for host in ["img-novels.test", "m.img-novels.test"] {
            let (t, _) = images_to_fetch(&settings, Some(host), 3000, &images).unwrap();
            assert_eq!(t, Trigger::Site);
        }
        assert!(!settings.site_listed("notimg-novels.test"));
        // No image that could hold text, OCR off, or capped.
        assert!(images_to_fetch(&settings, None, 0, &images[..1]).is_none());
        let off = OcrSettings {
            enabled: false,
            ..settings.clone()
        };
        assert!(images_to_fetch(&off, None, 0, &images).is_none());
        let one = OcrSettings {
            max_images: 1,
            ..settings
        };
        assert_eq!(images_to_fetch(&one, None, 0, &images).unwrap().1.len(), 1);
    }

    #[test]
    fn tsv_words_become_lines_with_boxes_and_confidence() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   1\t1\t0\t0\t0\t0\t0\t0\t800\t600\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t10\t20\t40\t30\t96.5\t话说\n\
                   5\t1\t1\t1\t1\t2\t52\t18\t60\t34\t93.5\t天下\n\
                   5\t1\t1\t1\t2\t1\t10\t60\t30\t20\t80\tHello\n\
                   5\t1\t1\t1\t2\t2\t45\t60\t30\t20\t60\tworld\n\
                   5\t1\t1\t1\t3\t1\t10\t90\t30\t20\t-1\t \n";
        let lines = parse_tsv(tsv);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].text, "话说天下");
        assert_eq!(lines[0].bbox, [10, 18, 102, 34]);
        assert!((lines[0].confidence - 95.0).abs() < 1e-3);
        assert_eq!(lines[1].text, "Hello world");
        let image = ImageText {
            url: Url::parse("http://x.test/a.png").unwrap(),
            sha256: String::new(),
            width: 1,
            height: 1,
            lines,
            note: None,
        };
        assert_eq!(image.text(50), "话说天下Hello world");
        assert_eq!(image.text(90), "话说天下");
    }

    fn small() -> OcrSettings {
        OcrSettings {
            max_height: 32_768,
            ..OcrSettings::default()
        }
    }

    #[test]
    fn hostile_images_are_refused_with_a_reason_before_they_are_decoded() {
        let s = small();
        let started = Instant::now();
        let bomb = decode_image(&draw::png_header(100_000, 100_000), &s).unwrap_err();
        assert!(
            bomb.to_string()
                .contains("100000 × 100000 px is over the limit"),
            "{bomb}"
        );
        let wide = decode_image(&draw::png_header(4000, 20_000), &s).unwrap_err();
        assert!(wide.to_string().contains("pixels"), "{wide}");
        let tall = draw::png(&GrayImage::from_pixel(100, 100_000, image::Luma([255])));
        let tall = decode_image(&tall, &s).unwrap_err();
        assert!(tall.to_string().contains("100 × 100000 px"), "{tall}");
        // A header that promises rows its data does not hold.
        let short = decode_image(&draw::png_header(600, 800), &s).unwrap_err();
        assert!(short.to_string().contains("does not decode"), "{short}");
        let page = draw::png(&draw::photo(300, 200, 7));
        for cut in [8, 40, page.len() / 2] {
            let e = decode_image(&page[..cut], &s).unwrap_err();
            assert!(matches!(e, Error::ImageRefused { .. }), "{e}");
        }
        let jpeg = draw::jpeg(&draw::photo(300, 200, 7), 80);
        // A cut JPEG decodes to what its bytes hold (the decoder fills the rest), or not at
        // all: either way it ends, at its declared size.
        match decode_image(&jpeg[..jpeg.len() / 3], &s) {
            Ok(img) => assert_eq!(img.dimensions(), (300, 200)),
            Err(e) => assert!(matches!(e, Error::ImageRefused { .. }), "{e}"),
        }
        for stray in [
            &b""[..],
            b"GIF89a",
            b"<html>not an image</html>",
            &[0xff; 64],
        ] {
            let e = decode_image(stray, &s).unwrap_err();
            assert!(matches!(e, Error::ImageRefused { .. }), "{e}");
        }
        let bmp = b"BM\x3e\0\0\0\0\0\0\0\x3e\0\0\0\x28\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
        assert!(
            decode_image(bmp, &s)
                .unwrap_err()
                .to_string()
                .contains("not")
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn an_animated_gif_gives_its_first_frame() {
        let a = GrayImage::from_pixel(64, 40, image::Luma([10]));
        let b = GrayImage::from_pixel(64, 40, image::Luma([250]));
        let gif = draw::animated_gif(&[a, b]);
        let first = decode_image(&gif, &small()).unwrap();
        assert_eq!(first.dimensions(), (64, 40));
        assert!(first.pixels().all(|p| p[0] < 40));
    }

    fn chapter() -> String {
        let text = include_str!("../tests/data/zh/xiyouji_01.txt");
        text.lines()
            .map(str::trim)
            .filter(|l| l.chars().count() > 20)
            .skip(2)
            .take(4)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn text_looks_like_text_and_a_photo_or_a_blank_does_not() {
        let Some(font) = draw::font() else { return };
        let style = draw::Style {
            watermark: Some("盗版小说网 www.daoban.test".into()),
            ..draw::Style::default()
        };
        let page = draw::render(&font, &chapter(), &style).unwrap();
        looks_like_text(&page).unwrap();
        let jpeg = decode_image(&draw::jpeg(&page, 40), &small()).unwrap();
        looks_like_text(&jpeg).unwrap();
        let photo = looks_like_text(&draw::photo(640, 480, 3)).unwrap_err();
        assert!(
            photo.contains("ground") || photo.contains("edges"),
            "{photo}"
        );
        let blank = GrayImage::from_pixel(640, 480, image::Luma([230]));
        assert!(looks_like_text(&blank).unwrap_err().contains("stand out"));
    }

    #[test]
    fn tall_images_are_cut_between_lines() {
        let Some(font) = draw::font() else { return };
        let text = chapter().repeat(3);
        let page = draw::render(&font, &text, &draw::Style::default()).unwrap();
        assert!(page.height() > 1200, "{}", page.height());
        let cut = strips(&page, 400);
        assert!(cut.len() >= 3);
        let mut expected_top = 0;
        for (top, strip) in &cut {
            assert_eq!(*top, expected_top);
            assert!(strip.height() <= 400);
            expected_top += strip.height();
            // The cut row holds no ink: no line of text is split.
            let last = strip.height() - 1;
            let inked = (0..strip.width())
                .filter(|&x| strip.get_pixel(x, last)[0].abs_diff(232) > 64)
                .count();
            assert_eq!(inked, 0, "strip at {top} cut through a line");
        }
        assert_eq!(expected_top, page.height());
    }

    /// An engine that says what it was given.
    #[derive(Debug)]
    struct Echo;

    impl OcrEngine for Echo {
        fn name(&self) -> String {
            "echo".into()
        }
        fn recognize(&self, strip: &GrayImage, _: Duration) -> Result<Vec<OcrLine>> {
            let (w, h) = strip.dimensions();
            Ok(vec![OcrLine {
                text: format!("{w}x{h}"),
                bbox: [0, 0, w, h],
                confidence: 90.0,
            }])
        }
    }

    #[test]
    fn a_page_keeps_each_image_hash_and_note_and_reads_the_rest() {
        let Some(font) = draw::font() else { return };
        let page = draw::render(&font, &chapter(), &draw::Style::default()).unwrap();
        let png = draw::png(&page);
        let url = |p: &str| Url::parse("http://pirate.test/").unwrap().join(p).unwrap();
        let images = vec![
            (url("/1.png"), Ok(png.clone())),
            (url("/2.png"), Err("robots.txt denies it".to_owned())),
            (url("/3.png"), Ok(draw::png(&draw::photo(400, 300, 1)))),
            (url("/4.png"), Ok(draw::png_header(100_000, 100_000))),
        ];
        let far = Instant::now() + Duration::from_secs(60);
        let read = read_images(&Echo, &OcrSettings::default(), &images, far);
        assert_eq!(read.engine, "echo");
        assert_eq!(read.images.len(), 4);
        let first = &read.images[0];
        assert_eq!(first.sha256, sha256_hex(&png));
        assert_eq!(first.sha256.len(), 64);
        assert_eq!((first.width, first.height), page.dimensions());
        assert!(first.note.is_none());
        assert_eq!(first.lines[0].bbox[2], page.width());
        assert_eq!(read.text, format!("{}x{}", page.width(), page.height()));
        assert_eq!(read.images[1].note.as_deref(), Some("robots.txt denies it"));
        assert!(
            read.images[2]
                .note
                .as_ref()
                .unwrap()
                .contains("does not look like text")
        );
        assert!(
            read.images[3]
                .note
                .as_ref()
                .unwrap()
                .contains("over the limit")
        );
        // A spent budget reads nothing more, and says so.
        let spent = read_images(&Echo, &OcrSettings::default(), &images[..1], Instant::now());
        assert!(spent.text.is_empty());
        assert!(spent.images[0].note.as_ref().unwrap().contains("stopped"));
    }

    /// The engine, or a loud skip (a failure under `CI=true`, where `.ci/run` installs it).
    fn tesseract() -> Option<Tesseract> {
        match Tesseract::probe(&OcrSettings::default()) {
            Ok(t) => Some(t),
            Err(e) => {
                assert!(std::env::var("CI").as_deref() != Ok("true"), "{e}");
                eprintln!("skipped: no tesseract ({e})");
                None
            }
        }
    }

    #[test]
    fn tesseract_reads_a_watermarked_jpeg_screen_of_a_chapter() {
        let (Some(font), Some(engine)) = (draw::font(), tesseract()) else {
            return;
        };
        let text = chapter();
        let style = draw::Style {
            px: 17.0,
            background: 225,
            watermark: Some("盗版小说网 www.daoban.test".into()),
            ..draw::Style::default()
        };
        let page = draw::render(&font, &text, &style).unwrap();
        let images = vec![(
            Url::parse("http://pirate.test/1.jpg").unwrap(),
            Ok(draw::jpeg(&page, 50)),
        )];
        let deadline = Instant::now() + Duration::from_secs(60);
        let read = read_images(&engine, &OcrSettings::default(), &images, deadline);
        assert!(read.images[0].note.is_none(), "{:?}", read.images[0].note);
        let error = testkit::images::character_error_rate(&text, &read.text);
        eprintln!(
            "character error {error:.4} over {} characters",
            text.chars().count()
        );
        assert!(error < 0.1, "character error {error:.3}: {}", read.text);
        let line = &read.images[0].lines[0];
        assert!(line.confidence > 50.0 && line.bbox[1] < 60, "{line:?}");
    }

    #[cfg(unix)]
    #[test]
    fn an_engine_that_hangs_is_killed_at_its_timeout() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("tesseract");
        // Reads nothing and never answers, as an engine stuck on a hostile image would.
        std::fs::write(&program, "#!/bin/sh\nexec sleep 60\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let engine = Tesseract {
            program,
            languages: "chi_sim".into(),
            psm: 6,
        };
        let strip = GrayImage::from_pixel(800, 600, image::Luma([200]));
        let started = Instant::now();
        let e = engine
            .recognize(&strip, Duration::from_millis(300))
            .unwrap_err();
        assert!(matches!(e, Error::OcrTimeout { .. }), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let missing = OcrSettings {
            program: dir.path().join("no-such-program"),
            ..OcrSettings::default()
        };
        let e = Tesseract::probe(&missing).unwrap_err();
        assert!(e.to_string().contains("install tesseract-ocr"), "{e}");
    }
}
