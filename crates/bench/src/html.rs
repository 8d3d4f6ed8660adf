//! Pirate pages as the files a pirate site serves: HTML in several layouts and encodings.
//!
//! Layouts: `div-br` (`<div id="content">` with `<br>` line breaks, the classic novel-site
//! page), `p-article` (`<article>` of `<p>`), `table` (the text in a table cell, old
//! sites), `biquge` (a real 笔趣阁 page, `extract/tests/data/html/biquge_info_book_toc.html`,
//! with its chapter list replaced by the chapter). Script-written pages have layouts of
//! their own, an empty `<div id="content">` filled by an inline script: `script-escaped` (the
//! chapter's HTML as `\uXXXX` literals cut into pieces joined with `+=`, assigned to
//! `innerHTML`), `script-write` (`document.write` of raw `'<p>...</p>' +` pieces) and, when
//! the pages are served (`bench pipeline`), `json-endpoint` (the script fetches the chapter
//! from `N.json`). Script-built pages (#27) are filled by scripts that compute the text at
//! load time: `script-atob` (`atob` of the UTF-8 bytes in base64, through
//! `decodeURIComponent(escape(...))`), `script-charcodes` (`String.fromCharCode` over arrays
//! of char codes), `script-reversed` (the text reversed, `split('').reverse().join('')`) and
//! `script-hostile` (char codes, then a script that never ends, recurses without end, builds a
//! huge string or rewrites the prototypes the page's own script used). CSS-ordered pages
//! shuffle the chapter's paragraphs (`css-paragraphs`) or half-sentences (`css-phrases`) in the
//! markup and order them with flexbox `order` classes. Pages of a remapped font carry an
//! `@font-face` for their content, its font written beside them (`fonts/rN.woff2`); GBK pages of `GBK as iso-8859-1` declare `iso-8859-1`.
//! Pages of a chapter as images (`images-tall`, `images-screens`) show it drawn into one tall
//! image or 2–4 screens written beside them (`images/iN-K.png` or `.jpg`, see [`ImageStyle`]),
//! their own text a title, an empty or slogan `alt` and a line of site chrome.
//! Encodings, by page: simplified Chinese in
//! UTF-8, GBK with and without a meta charset, and GB18030; traditional Chinese in Big5 with
//! and without a meta charset, and UTF-8; English in UTF-8 and windows-1252. Characters an
//! encoding lacks become numeric character references, as browsers do when submitting forms.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine as _;
use encoding_rs::{BIG5, Encoding, GB18030, GBK, UTF_8, WINDOWS_1252};
use matcher::ChapterId;
use serde::Serialize;

use crate::pirate::{Case, PiratePage, is_chinese};
use crate::samples::BIQUGE;

/// A file-name-safe name of `case`.
fn slug(case: Case) -> String {
    let mut s: String = case
        .name()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').to_string()
}

/// One line of `expected.jsonl`.
#[derive(Debug, Serialize)]
struct Expected<'a> {
    file: String,
    case: &'static str,
    layout: &'static str,
    encoding: &'static str,
    meta_charset: bool,
    /// Store ids of the chapters the page copies.
    chapter_ids: Vec<i64>,
    origin: &'a str,
}

/// Writes every page as an HTML file under `out/pages/<case>/` and `out/expected.jsonl`;
/// the paths, in page order. With `fonts` (a reference font's bytes), each remapped-font page
/// gets its font, built from the reference's glyphs, at [`font_path`]. With `endpoints`, some script-written pages fetch their text
/// from `N.json` beside them (N the page's place in `pages`), written as the HTML file's
/// path with the extension `json`: a server must serve it at that URL. `ids` maps the
/// chapters a page copies to the store ids `expected.jsonl` names.
///
/// # Errors
/// A file that cannot be written.
pub fn write_pages(
    pages: &[PiratePage],
    ids: &HashMap<ChapterId, i64>,
    out: &Path,
    endpoints: bool,
    fonts: Option<&[u8]>,
) -> Result<Vec<PathBuf>> {
    let mut expected = std::io::BufWriter::new(
        std::fs::File::create(out.join("expected.jsonl"))
            .with_context(|| format!("while writing {}", out.display()))?,
    );
    let mut paths = Vec::with_capacity(pages.len());
    let mut per_case: HashMap<Case, usize> = HashMap::new();
    for (at, page) in pages.iter().enumerate() {
        let n = per_case.entry(page.case).or_default();
        let rendered = render(page, *n, endpoints.then_some(at));
        let dir = out.join("pages").join(slug(page.case));
        std::fs::create_dir_all(&dir)?;
        if page.case.is_images()
            && let Some(font) = fonts
        {
            write_images(page, font, &dir, *n)?;
        }
        if let Some(reference) = fonts.filter(|_| page.case == Case::FontRemap) {
            let path = font_path(&dir, *n);
            std::fs::create_dir_all(dir.join("fonts"))?;
            let font = testkit::fonts::remapped_font(reference, &page.remapped)
                .and_then(|ttf| testkit::fonts::woff2(&ttf))
                .map_err(|e| anyhow::anyhow!("while making the font of {}: {e}", page.origin))?;
            std::fs::write(&path, font)
                .with_context(|| format!("while writing {}", path.display()))?;
        }
        let name = format!(
            "{:04}-{}-{}{}.html",
            n,
            rendered.layout,
            rendered.encoding.name().to_ascii_lowercase(),
            if rendered.meta { "" } else { "-nometa" }
        );
        *n += 1;
        let path = dir.join(&name);
        std::fs::write(&path, &rendered.bytes)
            .with_context(|| format!("while writing {}", path.display()))?;
        if let Some(svg) = &rendered.sprite {
            let path = sprite_path(&dir, *n - 1);
            std::fs::create_dir_all(dir.join("sprites"))?;
            std::fs::write(&path, svg)
                .with_context(|| format!("while writing {}", path.display()))?;
        }
        if let Some(json) = &rendered.endpoint {
            let json_path = path.with_extension("json");
            std::fs::write(&json_path, json)
                .with_context(|| format!("while writing {}", json_path.display()))?;
        }
        let line = Expected {
            file: path
                .strip_prefix(out)
                .unwrap_or(&path)
                .display()
                .to_string(),
            case: page.case.name(),
            layout: rendered.layout,
            encoding: rendered.encoding.name(),
            meta_charset: rendered.meta,
            chapter_ids: page
                .expected
                .iter()
                .filter_map(|c| ids.get(c))
                .copied()
                .collect(),
            origin: &page.origin,
        };
        writeln!(expected, "{}", serde_json::to_string(&line)?)?;
        paths.push(path);
    }
    expected.flush()?;
    Ok(paths)
}

/// The bytes of the first of `settings`' reference fonts that can be read: what the fonts of
/// remapped-font pages are built from, as the decoder reads them with; `None` when none can.
pub fn reference_font(settings: &extract::FontSettings) -> Option<Vec<u8>> {
    settings
        .reference_fonts
        .iter()
        .find_map(|path| std::fs::read(path).ok())
}

/// Where the font of the remapped-font page number `n` (of its case) is written: `fonts/rN.woff2`
/// beside the page, the URL its `@font-face` names relative to it.
pub fn font_path(dir: &Path, n: usize) -> PathBuf {
    dir.join("fonts").join(format!("r{n}.woff2"))
}

/// How page number `n` of an images case draws its chapter: the variations pirate sites
/// serve, rotated with `n` so that a few pages cover them all.
#[derive(Debug, Clone)]
pub struct ImageStyle {
    /// Images the chapter is cut into (1: one tall image).
    pub count: usize,
    /// JPEG at this quality, else PNG.
    pub jpeg: Option<u8>,
    /// What is drawn and how.
    pub draw: testkit::images::Style,
    /// The images' `alt`: empty or a slogan.
    pub alt: &'static str,
}

impl ImageStyle {
    /// The style of page number `n` of its case.
    pub fn of(n: usize) -> Self {
        const SLOGANS: [&str; 3] = ["", "最新章节请收藏本站", "手机阅读请访问 m.daoban.test"];
        ImageStyle {
            count: [1, 3, 2, 4][n % 4],
            jpeg: [None, Some(70), Some(45)][n % 3],
            draw: testkit::images::Style {
                px: [18.0, 16.0, 20.0, 17.0, 19.0][n % 5],
                background: [236, 224, 245, 230][n % 4],
                ink: [34, 20, 60][n % 3],
                watermark: (n % 2 == 1).then(|| "盗版小说网 www.daoban.test".to_owned()),
                ..testkit::images::Style::default()
            },
            alt: SLOGANS[n % SLOGANS.len()],
        }
    }

    /// The file name of image `k` of page `n` of `case`, relative to the page's directory
    /// (the photograph of a negative's page is `k` = `photo`). Unique across both images
    /// cases, so that a site serving every page from one folder serves each page's own.
    pub fn file(&self, case: Case, n: usize, k: &str) -> String {
        let ext = if self.jpeg.is_some() || k == "photo" {
            "jpg"
        } else {
            "png"
        };
        let prefix = if case == Case::Images { "i" } else { "o" };
        format!("images/{prefix}{n}-{k}.{ext}")
    }
}

/// `text`'s lines in `count` runs of about equal length, one per image.
fn screens(text: &str, count: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let total: usize = lines.iter().map(|l| l.chars().count()).sum();
    let per = total.div_ceil(count.max(1)).max(1);
    let mut out = vec![String::new()];
    let mut in_last = 0;
    for line in lines {
        if in_last >= per && out.len() < count {
            out.push(String::new());
            in_last = 0;
        }
        let last = out.last_mut().expect("one run at least");
        last.push_str(line);
        last.push('\n');
        in_last += line.chars().count();
    }
    out
}

/// Draws page `n`'s chapter into its images beside it ([`ImageStyle`]), in `font`; a
/// negative's page gets a photograph too.
fn write_images(page: &PiratePage, font: &[u8], dir: &Path, n: usize) -> Result<()> {
    let style = ImageStyle::of(n);
    std::fs::create_dir_all(dir.join("images"))?;
    for (k, text) in screens(&page.text, style.count).iter().enumerate() {
        let img = testkit::images::render(font, text, &style.draw)
            .map_err(|e| anyhow::anyhow!("while drawing {}: {e}", page.origin))?;
        let bytes = match style.jpeg {
            Some(q) => testkit::images::jpeg(&img, q),
            None => testkit::images::png(&img),
        };
        let path = dir.join(style.file(page.case, n, &k.to_string()));
        std::fs::write(&path, bytes)
            .with_context(|| format!("while writing {}", path.display()))?;
    }
    if page.case == Case::ImagesOtherNovel {
        let photo = testkit::images::jpeg(&testkit::images::photo(640, 420, n as u64 + 1), 80);
        let path = dir.join(style.file(page.case, n, "photo"));
        std::fs::write(&path, photo)
            .with_context(|| format!("while writing {}", path.display()))?;
    }
    Ok(())
}

/// The page of a chapter as images: a title, the images, a slogan and navigation.
fn images_page(page: &PiratePage, n: usize, title: &str, nav: &str) -> String {
    let style = ImageStyle::of(n);
    let mut imgs: String = (0..screens(&page.text, style.count).len())
        .map(|k| {
            format!(
                "<img src=\"{}\" alt=\"{}\" style=\"max-width:100%\"><br>\n",
                style.file(page.case, n, &k.to_string()),
                style.alt
            )
        })
        .collect();
    if page.case == Case::ImagesOtherNovel {
        let photo = style.file(page.case, n, "photo");
        imgs.push_str(&format!("<img src=\"{photo}\" alt=\"\">\n"));
    }
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}_盗版小说网</title></head><body>\n\
         <div class=\"nav\">{nav}</div>\n<div class=\"bookname\"><h1>{title}</h1></div>\n\
         <div id=\"content\">\n{imgs}</div>\n<p>本章内容以图片显示，请耐心等待加载。</p>\n\
         <div class=\"bottem\">{nav}</div>\n</body></html>\n"
    )
}

/// A page as a file.
struct Rendered {
    bytes: Vec<u8>,
    layout: &'static str,
    encoding: &'static Encoding,
    meta: bool,
    /// The JSON the page's script fetches (`json-endpoint` layout).
    endpoint: Option<String>,
    /// The SVG sprite the page's style names (`sprite-file` layout), at [`sprite_path`].
    sprite: Option<String>,
}

/// Where the sprite of the glyph-sprite page number `n` (of its case) is written:
/// `sprites/sN.svg` beside the page, the URL its style names relative to it.
pub fn sprite_path(dir: &Path, n: usize) -> PathBuf {
    dir.join("sprites").join(format!("s{n}.svg"))
}

const LAYOUTS: [&str; 4] = ["div-br", "p-article", "table", "biquge"];
/// Layouts of script-built pages.
const BUILT_LAYOUTS: [&str; 4] = [
    "script-atob",
    "script-charcodes",
    "script-reversed",
    "script-hostile",
];
/// Layouts of canvas and glyph-sprite pages ([`crate::drawn`]).
const CANVAS_LAYOUTS: [&str; 2] = ["canvas-lines", "canvas-chunks"];
const SPRITE_LAYOUTS: [&str; 2] = ["sprite-data-uri", "sprite-file"];
/// Layouts of CSS-ordered pages.
const CSS_LAYOUTS: [&str; 2] = ["css-paragraphs", "css-phrases"];
/// Layouts of script-written pages; the last only when the page is served with its endpoint.
const SCRIPT_LAYOUTS: [&str; 3] = ["script-escaped", "script-write", "json-endpoint"];

/// Renders page number `n` of its case: layout and encoding rotate with `n`, so that a case
/// of eight pages already has every layout and every encoding of its script. `served_as` is
/// the page's number on a served site (`N.json` is its endpoint), `None` for files.
fn render(page: &PiratePage, n: usize, served_as: Option<usize>) -> Rendered {
    let chinese = is_chinese(&page.text);
    let options: &[(&'static Encoding, bool)] = if !chinese {
        &[(UTF_8, true), (WINDOWS_1252, true), (UTF_8, false)]
    } else if zhconv::is_hans(&page.text) {
        &[(UTF_8, true), (GBK, true), (GBK, false), (GB18030, true)]
    } else {
        &[(BIG5, true), (BIG5, false), (UTF_8, true)]
    };
    let script_layouts = if served_as.is_some() { 3 } else { 2 };
    let layout = match page.case {
        Case::Images | Case::ImagesOtherNovel if ImageStyle::of(n).count == 1 => "images-tall",
        Case::Images | Case::ImagesOtherNovel => "images-screens",
        Case::Script => SCRIPT_LAYOUTS[n % script_layouts],
        Case::ScriptBuilt => BUILT_LAYOUTS[n % BUILT_LAYOUTS.len()],
        Case::CssOrder => CSS_LAYOUTS[n % CSS_LAYOUTS.len()],
        Case::Canvas => CANVAS_LAYOUTS[n % CANVAS_LAYOUTS.len()],
        Case::Sprite => SPRITE_LAYOUTS[n % SPRITE_LAYOUTS.len()],
        _ => LAYOUTS[n % LAYOUTS.len()],
    };
    // Shifted by one every round of layouts, so that each layout meets every encoding.
    let (encoding, meta) = if page.case == Case::Latin1Gbk {
        (GBK, true)
    } else if page.case.is_images() {
        (UTF_8, true)
    } else {
        options[(n + n / LAYOUTS.len()) % options.len()]
    };
    let lines: Vec<String> = page
        .text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(escape)
        .collect();
    let title = lines.first().cloned().unwrap_or_default();
    let label = if encoding == WINDOWS_1252 || page.case == Case::Latin1Gbk {
        "iso-8859-1"
    } else {
        encoding.name()
    };
    let meta_tag = if meta {
        format!("<meta http-equiv=\"Content-Type\" content=\"text/html; charset={label}\">")
    } else {
        String::new()
    };
    let (home, prev, toc, next) = if chinese {
        ("首页", "上一章", "目录", "下一章")
    } else {
        ("Home", "Previous", "Contents", "Next")
    };
    let nav = format!(
        "<a href=\"/\">{home}</a> <a href=\"prev.html\">{prev}</a> <a href=\"./\">{toc}</a> <a href=\"next.html\">{next}</a>"
    );
    let mut endpoint = None;
    let mut sprite = None;
    let raw: Vec<String> = page
        .text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    // Per page: the encoding of a canvas's text, a sprite's class names and glyph order.
    let seed = fingerprint::hash::fmix64(n as u64 ^ (page.text.len() as u64) << 20);
    let html = match layout {
        "canvas-lines" | "canvas-chunks" => {
            let (body, _) = crate::drawn::canvas_page(&raw, layout == "canvas-chunks", seed);
            format!(
                "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
                 <div class=\"nav\">{nav}</div>\n{body}\n\
                 <div class=\"bottem\">{nav}</div>\n</body></html>\n"
            )
        }
        "sprite-data-uri" | "sprite-file" => {
            let href = format!("sprites/s{n}.svg");
            let href = (layout == "sprite-file").then_some(href.as_str());
            let made = crate::drawn::sprite_page(&raw, href, seed);
            sprite = made.file;
            format!(
                "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title><style>{}</style></head><body>\n\
                 <div class=\"nav\">{nav}</div>\n{}\n\
                 <div class=\"bottem\">{nav}</div>\n</body></html>\n",
                made.style, made.body
            )
        }
        "images-tall" | "images-screens" => images_page(page, n, &title, &nav),
        "script-atob" | "script-charcodes" | "script-reversed" | "script-hostile" => {
            let script = built_script(layout, &lines, n);
            format!(
                "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
                 <div class=\"nav\">{nav}</div>\n<div class=\"bookname\"><h1>{title}</h1></div>\n\
                 <div id=\"content\"></div>\n{script}\n\
                 <div class=\"bottem\">{nav}</div>\n</body></html>\n"
            )
        }
        "css-paragraphs" | "css-phrases" => {
            let (style, body) = css_ordered(layout, &lines, n);
            format!(
                "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title><style>{style}</style></head><body>\n\
                 <div class=\"nav\">{nav}</div>\n<div class=\"bookname\"><h1>{title}</h1></div>\n\
                 {body}\n<div class=\"bottem\">{nav}</div>\n</body></html>\n"
            )
        }
        "script-escaped" | "script-write" | "json-endpoint" => {
            let (script, json) = content_script(layout, &lines, served_as);
            endpoint = json;
            format!(
                "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
                 <div class=\"nav\">{nav}</div>\n<div class=\"bookname\"><h1>{title}</h1></div>\n\
                 <div id=\"content\"></div>\n<script>{script}</script>\n\
                 <div class=\"bottem\">{nav}</div>\n</body></html>\n"
            )
        }
        "div-br" => format!(
            "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
             <div class=\"nav\">{nav}</div>\n<div class=\"bookname\"><h1>{title}</h1></div>\n\
             <div id=\"content\">&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br /></div>\n\
             <div class=\"bottem\">{nav}</div>\n</body></html>\n",
            lines.join("<br /><br />\n&nbsp;&nbsp;&nbsp;&nbsp;")
        ),
        "p-article" => format!(
            "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
             <header><nav>{nav}</nav></header>\n<main><article class=\"chapter\"><h1>{title}</h1>\n<p>{}</p>\n</article></main>\n\
             <footer><nav>{nav}</nav><p>&copy; 2024</p></footer>\n</body></html>\n",
            lines.join("</p>\n<p>")
        ),
        "table" => format!(
            "<html><head>{meta_tag}<title>{title}</title></head><body>\n\
             <table width=\"100%\" border=\"0\"><tr><td class=\"nav\">{nav}</td></tr>\n\
             <tr><td class=\"title\"><b>{title}</b></td></tr>\n\
             <tr><td id=\"text\">{}</td></tr>\n<tr><td class=\"nav\">{nav}</td></tr></table>\n</body></html>\n",
            lines.join("<br>\n")
        ),
        _ => biquge(&meta_tag, &title, &lines),
    };
    let html = if page.case == Case::FontRemap {
        // The font that draws the Private Use Area code points as the characters they replace
        // (`font_path`, relative to the page).
        let font = format!(
            "<style>@font-face {{ font-family: \"r{n}\"; src: url(\"fonts/r{n}.woff2\") format(\"woff2\"); }}\n\
             #content, article, td {{ font-family: \"r{n}\", serif; }}</style></head>"
        );
        html.replacen("</head>", &font, 1)
    } else {
        html
    };
    let (bytes, _, _) = encoding.encode(&html);
    Rendered {
        bytes: bytes.into_owned(),
        layout,
        encoding,
        meta,
        endpoint,
        sprite,
    }
}

/// The inline script that fills `<div id="content">` with `lines` (HTML-escaped) in a
/// script layout, and the JSON it fetches (`json-endpoint`, from `N.json`).
fn content_script(
    layout: &str,
    lines: &[String],
    served_as: Option<usize>,
) -> (String, Option<String>) {
    let html = lines.join("<br /><br />\n");
    match layout {
        "script-escaped" => {
            // All \uXXXX escapes, in four pieces cut between escapes.
            let escaped: Vec<String> = html.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
            let per = escaped.len().div_ceil(4).max(1);
            let mut script = String::from("var c = \"\";\n");
            for piece in escaped.chunks(per) {
                script += &format!("c += \"{}\";\n", piece.concat());
            }
            script += "document.getElementById(\"content\").innerHTML = c;";
            (script, None)
        }
        "script-write" => {
            let pieces: Vec<String> = lines
                .iter()
                .map(|l| format!("'<p>{}</p>'", l.replace('\\', "\\\\").replace('\'', "\\'")))
                .collect();
            (format!("document.write({});", pieces.join(" +\n")), None)
        }
        _ => {
            let n = served_as.unwrap_or(0);
            let plain: Vec<String> = lines
                .iter()
                .map(|l| {
                    l.replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&amp;", "&")
                })
                .collect();
            let json = serde_json::json!({"code": 0, "data": {"content": plain}}).to_string();
            (
                format!(
                    "$.getJSON(\"{n}.json\", function (d) {{ $(\"#content\").html(d.data.content.join(\"<br>\")); }});"
                ),
                Some(json),
            )
        }
    }
}

/// A small deterministic permutation of `0..len` (the same for the same `seed`).
fn shuffled(len: usize, seed: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut x = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..len).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    order
}

/// The `<style>` and the content of a CSS-ordered page: the items (paragraphs, or the
/// half-sentences of each paragraph, cut after `，`, `。`, `,`, `;` or `.`) shuffled in the
/// markup, each with a class that puts it back in its place.
fn css_ordered(layout: &str, lines: &[String], seed: usize) -> (String, String) {
    let mut style = String::from(
        ".content{display:flex;flex-direction:column}.line{display:flex;flex-wrap:wrap}",
    );
    let items = |n: usize, seed: usize, make: &dyn Fn(usize) -> String| -> String {
        shuffled(n, seed).into_iter().map(make).collect()
    };
    let body = if layout == "css-paragraphs" {
        for i in 0..lines.len() {
            style += &format!(".o{i}{{order:{i}}}");
        }
        let inner = items(lines.len(), seed, &|i| {
            format!("<p class=\"o{i}\">{}</p>", lines[i])
        });
        format!("<div id=\"content\" class=\"content\">{inner}</div>")
    } else {
        let mut most = 0;
        let mut inner = String::new();
        for (k, line) in lines.iter().enumerate() {
            let parts: Vec<&str> = line.split_inclusive(['，', '。', ',', ';', '.']).collect();
            most = most.max(parts.len());
            let spans = items(parts.len(), seed + k, &|i| {
                format!("<span class=\"h{i}\">{}</span>", parts[i])
            });
            inner += &format!("<div class=\"line\">{spans}</div>");
        }
        for i in 0..most {
            style += &format!(".h{i}{{order:{i}}}");
        }
        format!("<div id=\"content\" class=\"content\">{inner}</div>")
    };
    (style, body)
}

/// The `<script>` elements of a script-built page (see the module docs).
fn built_script(layout: &str, lines: &[String], n: usize) -> String {
    let html = lines.join("<br /><br />\n");
    let codes = |s: &str| -> String {
        s.encode_utf16()
            .map(|u| u.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match layout {
        "script-atob" => format!(
            "<script>var d = \"{}\";\ndocument.getElementById(\"content\").innerHTML = decodeURIComponent(escape(atob(d)));</script>",
            base64::engine::general_purpose::STANDARD.encode(html.as_bytes())
        ),
        "script-reversed" => {
            // Reversed by UTF-16 unit, as `split('')` cuts, and written as \u escapes.
            let units: Vec<u16> = html.encode_utf16().collect();
            let reversed: String = units.iter().rev().map(|u| format!("\\u{u:04x}")).collect();
            format!(
                "<script>var s = \"{reversed}\";\nvar el = document.querySelector(\"#content\");\nel.innerHTML = s.split('').reverse().join('');</script>"
            )
        }
        _ => {
            // Char codes in pieces, joined at load time.
            let pieces: Vec<String> = lines
                .iter()
                .map(|l| format!("[{}]", codes(&format!("<p>{l}</p>"))))
                .collect();
            let build = format!(
                "<script>var parts = [{}];\nvar out = \"\";\nfor (var i = 0; i < parts.length; i++) {{ out += String.fromCharCode.apply(null, parts[i]); }}\ndocument.getElementById(\"content\").innerHTML = out;</script>",
                pieces.join(",\n")
            );
            if layout == "script-charcodes" {
                return build;
            }
            const HOSTILE: [&str; 5] = [
                "while (true) {}",
                "(function f() { return f() + 1; })();",
                "var s = \"x\"; while (true) { s += s; }",
                "Object.defineProperty(Object.prototype, \"innerHTML\", { set: function () { throw 1; } }); String.prototype.split = function () { return []; }; Array.prototype.join = null; document.getElementById = null;",
                "var a = []; for (;;) { a.push(new Array(1e6).join(\"z\")); }",
            ];
            format!(
                "{build}\n<script>{}</script>",
                HOSTILE[n / BUILT_LAYOUTS.len() % HOSTILE.len()]
            )
        }
    }
}

/// The 笔趣阁 page with its chapter list replaced by the chapter, its title by the page's,
/// and its meta charset by `meta_tag`.
fn biquge(meta_tag: &str, title: &str, lines: &[String]) -> String {
    let content = format!(
        "<div id=\"content\">&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br /></div>",
        lines.join("<br /><br />\n&nbsp;&nbsp;&nbsp;&nbsp;")
    );
    let list_start = BIQUGE.find("<div id=\"list\">").unwrap_or(0);
    let list_end = BIQUGE[list_start..]
        .find("</dl>\n</div>")
        .map_or(list_start, |i| list_start + i + "</dl>\n</div>".len());
    let page = format!("{}{content}{}", &BIQUGE[..list_start], &BIQUGE[list_end..]);
    let (title_start, title_end) = (
        page.find("<title>").unwrap_or(0),
        page.find("</title>").unwrap_or(0),
    );
    let page = if title_start < title_end {
        format!(
            "{}<title>{title}{}",
            &page[..title_start],
            &page[title_end..]
        )
    } else {
        page
    };
    page.replace(
        "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-8\"/>",
        meta_tag,
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
