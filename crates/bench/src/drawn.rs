//! Pirate pages that serve no text (issue #46): the chapter drawn on a `<canvas>` by an inline
//! script, or shown glyph by glyph through a CSS sprite.
//!
//! Canvas pages (`canvas-lines`, `canvas-chunks`): an inline script decodes the chapter and
//! draws it with `fillText` a row at a time, or in chunks of 3–7 characters drawn in a
//! shuffled order at their places; the text is held as char codes, XORed char codes (a key per
//! page), deltas between char codes, or base64 of its UTF-8, chosen per page. A decoy is drawn
//! on a canvas never attached to the page.
//!
//! Sprite pages (`sprite-data-uri`, `sprite-file`): most characters of the chapter are empty
//! `<span>`s whose class (random names per page) places a glyph of an SVG sprite of `<text>`
//! rows (decoy glyphs in every row, never shown); the SVG is a `data:` URI (base64 or
//! percent-encoded) in the page's `<style>`, or a file beside the page (`sprites/sN.svg`).

use std::collections::HashMap;

use base64::Engine as _;

/// A small deterministic generator, seeded per page.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        fingerprint::hash::fmix64(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// How a canvas page holds its text.
const ENCODINGS: [&str; 4] = ["charcodes", "xor", "deltas", "base64"];

/// Characters a canvas row holds.
fn wrap(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let cjk = chars.iter().filter(|c| **c as u32 >= 0x2E80).count() * 2 > chars.len();
    if cjk {
        return chars.chunks(36).map(|c| c.iter().collect()).collect();
    }
    let mut rows = vec![String::new()];
    for word in line.split_inclusive(' ') {
        let last = rows.last_mut().expect("never empty");
        if !last.is_empty() && last.chars().count() + word.chars().count() > 70 {
            rows.push(String::new());
        }
        rows.last_mut().expect("never empty").push_str(word);
    }
    rows
}

/// The `<canvas>` and `<script>` of a canvas page drawing `lines` (plain text), and the
/// layout's name. `seed` varies the encoding, the key and the chunks.
pub fn canvas_page(lines: &[String], chunks: bool, seed: u64) -> (String, &'static str) {
    let mut mix = Mix(seed);
    let encoding = ENCODINGS[mix.below(ENCODINGS.len())];
    let key = 1 + mix.below(0x7FFF) as u32;
    // Each draw: (x, y, text), in reading order first.
    let mut draws: Vec<(usize, usize, String)> = Vec::new();
    let mut row = 0;
    for line in lines {
        for text in wrap(line) {
            let y = 30 + row * 28;
            row += 1;
            if !chunks {
                draws.push((10, y, text));
                continue;
            }
            let chars: Vec<char> = text.chars().collect();
            let mut at = 0;
            while at < chars.len() {
                let n = (3 + mix.below(5)).min(chars.len() - at);
                let piece: String = chars[at..at + n].iter().collect();
                draws.push((10 + at * 18, y, piece));
                at += n;
            }
        }
    }
    if chunks {
        mix.shuffle(&mut draws);
    }
    let encode = |text: &str| -> String {
        let units: Vec<u32> = text.encode_utf16().map(u32::from).collect();
        match encoding {
            "charcodes" => format!("[{}]", join(units.iter())),
            "xor" => format!("[{}]", join(units.iter().map(|u| u ^ key))),
            "deltas" => {
                let mut last = 0i64;
                let deltas = units.iter().map(|&u| {
                    let d = i64::from(u) - last;
                    last = i64::from(u);
                    d
                });
                format!("[{}]", join(deltas))
            }
            _ => format!(
                "\"{}\"",
                base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
            ),
        }
    };
    let decode = match encoding {
        "charcodes" => "function (p) { return String.fromCharCode.apply(null, p); }".to_owned(),
        "xor" => format!(
            "function (p) {{ var s = ''; for (var i = 0; i < p.length; i++) s += String.fromCharCode(p[i] ^ {key}); return s; }}"
        ),
        "deltas" => "function (p) { var s = '', c = 0; for (var i = 0; i < p.length; i++) { c += p[i]; s += String.fromCharCode(c); } return s; }".to_owned(),
        _ => "function (p) { return decodeURIComponent(escape(atob(p))); }".to_owned(),
    };
    let data: Vec<String> = draws
        .iter()
        .map(|(x, y, text)| format!("[{x},{y},{}]", encode(text)))
        .collect();
    let height = 60 + row * 28;
    let html = format!(
        "<div id=\"content\"><canvas id=\"cv{seed}\" width=\"900\" height=\"{height}\">您的浏览器不支持 canvas</canvas></div>\n\
         <script>(function () {{\n\
         var decode = {decode};\n\
         var data = [{}];\n\
         var ctx = document.getElementById(\"cv{seed}\").getContext(\"2d\");\n\
         ctx.font = \"18px serif\"; ctx.fillStyle = \"#222\"; ctx.textBaseline = \"alphabetic\";\n\
         for (var i = 0; i < data.length; i++) {{ ctx.fillText(decode(data[i][2]), data[i][0], data[i][1]); }}\n\
         var decoy = document.createElement(\"canvas\").getContext(\"2d\");\n\
         decoy.fillText(\"本站防盗：请勿复制\", 0, 20);\n\
         }})();</script>",
        data.join(",\n")
    );
    (
        html,
        if chunks {
            "canvas-chunks"
        } else {
            "canvas-lines"
        },
    )
}

fn join<T: ToString>(items: impl Iterator<Item = T>) -> String {
    items.map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

/// A sprite page's parts: the `<style>`, the content `<div>`, and the SVG when it is a file.
pub struct SpritePage {
    pub style: String,
    pub body: String,
    /// The sprite's SVG, to be written at `href` beside the page (`None`: in the style).
    pub file: Option<String>,
    pub layout: &'static str,
}

/// A sprite page of `lines` (plain text); `file_href` names the SVG file beside the page (else
/// the SVG is a `data:` URI). `seed` varies class names, glyph order, decoys and encoding.
pub fn sprite_page(lines: &[String], file_href: Option<&str>, seed: u64) -> SpritePage {
    const SIZE: usize = 16;
    const PER_ROW: usize = 32;
    let mut mix = Mix(seed);
    let mut alphabet: Vec<char> = lines
        .iter()
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_whitespace() && !matches!(c, '<' | '>' | '&'))
        .collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    mix.shuffle(&mut alphabet);
    const DECOYS: &str = "的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长";
    let decoys: Vec<char> = DECOYS.chars().collect();
    let prefix: String = (0..3)
        .map(|_| (b'a' + mix.below(26) as u8) as char)
        .collect();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"{}\" height=\"{}\"><style>text {{ font-family: serif; font-size: {SIZE}px; fill: #333; }}</style>",
        PER_ROW * 2 * SIZE,
        (alphabet.len() / PER_ROW + 2) * 40
    );
    let mut style = String::new();
    let mut class_of: HashMap<char, String> = HashMap::new();
    let x_lists = mix.below(2) == 0;
    for (r, row) in alphabet.chunks(PER_ROW).enumerate() {
        let y = 30 + r * 40 + mix.below(6);
        // The row's slots: its glyphs, with decoys between them.
        let mut slots: Vec<(char, bool)> = Vec::new();
        for &c in row {
            while mix.below(4) == 0 {
                slots.push((decoys[mix.below(decoys.len())], false));
            }
            slots.push((c, true));
        }
        let xs: Vec<usize> = if x_lists {
            // Uneven spacing, given glyph by glyph.
            let mut x = 0;
            slots
                .iter()
                .map(|_| {
                    let at = x;
                    x += SIZE + mix.below(8);
                    at
                })
                .collect()
        } else {
            (0..slots.len()).map(|i| i * SIZE).collect()
        };
        let text: String = slots.iter().map(|(c, _)| xml_escape(*c)).collect();
        if x_lists {
            svg.push_str(&format!(
                "<text x=\"{}\" y=\"{y}\">{text}</text>",
                join(xs.iter())
            ));
        } else {
            svg.push_str(&format!("<text x=\"0\" y=\"{y}\">{text}</text>"));
        }
        for (i, (c, real)) in slots.iter().enumerate() {
            if !real {
                continue;
            }
            let name = loop {
                let name: String = std::iter::once(prefix.clone())
                    .chain((0..5).map(|_| ((b'a' + mix.below(26) as u8) as char).to_string()))
                    .collect();
                if !class_of.values().any(|n| *n == name) {
                    break name;
                }
            };
            // The box's top a little above the glyph's top.
            let top = y - SIZE + 1 - mix.below(3);
            style.push_str(&format!(
                ".{name}{{background:-{}.0px -{top}.0px;}}\n",
                xs[i]
            ));
            class_of.insert(*c, name);
        }
    }
    svg.push_str("</svg>");
    let (image, file, layout) = match file_href {
        Some(href) => (format!("\"{href}\""), Some(svg), "sprite-file"),
        None if mix.below(2) == 0 => (
            format!(
                "\"data:image/svg+xml;base64,{}\"",
                base64::engine::general_purpose::STANDARD.encode(svg.as_bytes())
            ),
            None,
            "sprite-data-uri",
        ),
        None => (
            format!("data:image/svg+xml;charset=utf-8,{}", percent(&svg)),
            None,
            "sprite-data-uri",
        ),
    };
    let style = format!(
        "span[class^=\"{prefix}\"]{{width:{SIZE}px;height:{}px;margin-top:-4px;display:inline-block;vertical-align:middle;background-image:url({image});background-repeat:no-repeat;}}\n{style}",
        SIZE + 4
    );
    let mut body = String::from("<div id=\"content\">");
    for line in lines {
        body.push_str("<p>");
        for c in line.chars() {
            match class_of.get(&c) {
                // Some characters stay text, as on the real pages.
                Some(name) if mix.below(8) != 0 => {
                    body.push_str(&format!("<span class=\"{name}\"></span>"));
                }
                _ => body.push_str(&html_escape(c)),
            }
        }
        body.push_str("</p>\n");
    }
    body.push_str("</div>");
    SpritePage {
        style,
        body,
        file,
        layout,
    }
}

fn xml_escape(c: char) -> String {
    match c {
        '<' => "&lt;".into(),
        '>' => "&gt;".into(),
        '&' => "&amp;".into(),
        c => c.to_string(),
    }
}

fn html_escape(c: char) -> String {
    xml_escape(c)
}

/// Percent-encoding of everything but unreserved ASCII, as a `data:` URI in an unquoted
/// `url()` needs.
fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/' | b'=' | b':')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
