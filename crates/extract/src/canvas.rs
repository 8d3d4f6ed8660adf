//! Text a page draws on a `<canvas>` instead of writing it: each `fillText`/`strokeText` call
//! recorded (by the rendered fetch's script in the browser, or by the sandbox's canvas in
//! [`crate::js`]), put in the order a reader sees it, and put in the page where the canvas
//! sits.
//!
//! Pirate pages draw a chapter line by line, or in chunks drawn in a shuffled order at their
//! right places; the order of the calls says nothing, their positions everything. [`order`]
//! sorts each canvas's calls into lines (by `y`, calls whose baselines lie within a tolerance
//! of a line's first being on that line) and each line by `x`; [`insert`] turns each drawn
//! canvas of a parsed page into a block holding those lines, so the walk reads them like any
//! other text. Both paths share these two functions: the browser and the sandbox only record.
//!
//! Bounds: [`MAX_CALLS`] calls and [`MAX_CHARS`] characters per page are read; the rest are
//! dropped (a page drawing a million calls is no chapter, and costs one sort of the bound).

use ego_tree::NodeId;
use scraper::node::{Element, Text};
use scraper::{Html, Node};
use serde::{Deserialize, Serialize};

/// Draw calls read per page at most.
pub const MAX_CALLS: usize = 50_000;
/// Characters of drawn text read per page at most.
pub const MAX_CHARS: usize = 200_000;

/// The default canvas font is `10px sans-serif`.
const DEFAULT_FONT_PX: f64 = 10.0;

/// One `fillText` or `strokeText` call, where it lands on its canvas.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DrawCall {
    /// The canvas drawn on: its place among the document's `<canvas>` elements in document
    /// order, or `None` for a canvas a script created and attached (read at the end of the
    /// body).
    pub canvas: Option<usize>,
    /// The text drawn.
    pub text: String,
    /// Where, in canvas pixels, after the context's transform.
    pub x: f64,
    pub y: f64,
    /// The font's size in pixels (scaled by the transform); 0 when unknown.
    pub size: f64,
}

/// A canvas's text in reading order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Drawing {
    /// As [`DrawCall::canvas`].
    pub canvas: Option<usize>,
    /// Its lines, top to bottom, each read left to right.
    pub lines: Vec<String>,
}

impl Drawing {
    /// Characters drawn (line breaks not counted).
    pub fn chars(&self) -> usize {
        self.lines.iter().map(|l| l.chars().count()).sum()
    }
}

/// The calls of each canvas in reading order: lines by `y` (a call within half a font size
/// of a line's first baseline is on that line), each line by `x`, ties in call order.
/// Canvases come in document order, created ones last. Calls past [`MAX_CALLS`] or
/// [`MAX_CHARS`], with no visible character, or at a non-finite position are dropped.
pub fn order(calls: &[DrawCall]) -> Vec<Drawing> {
    let mut kept: Vec<(usize, &DrawCall)> = Vec::new();
    let mut chars = 0usize;
    for (seq, call) in calls.iter().take(MAX_CALLS).enumerate() {
        if !(call.x.is_finite() && call.y.is_finite()) || call.text.trim().is_empty() {
            continue;
        }
        let n = call.text.chars().count();
        if chars + n > MAX_CHARS {
            break;
        }
        chars += n;
        kept.push((seq, call));
    }
    // Document order of canvases, created ones (None) after them.
    let key = |c: Option<usize>| c.map_or((1, 0), |i| (0, i));
    kept.sort_by(|a, b| {
        key(a.1.canvas)
            .cmp(&key(b.1.canvas))
            .then(a.1.y.total_cmp(&b.1.y))
            .then(a.1.x.total_cmp(&b.1.x))
            .then(a.0.cmp(&b.0))
    });
    let mut out: Vec<Drawing> = Vec::new();
    let mut start = 0;
    while start < kept.len() {
        let canvas = kept[start].1.canvas;
        let end = start
            + kept[start..]
                .iter()
                .take_while(|(_, c)| c.canvas == canvas)
                .count();
        out.push(Drawing {
            canvas,
            lines: lines(&kept[start..end]),
        });
        start = end;
    }
    out
}

/// One canvas's calls (sorted by `y`, then `x`) cut into lines.
fn lines(calls: &[(usize, &DrawCall)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut line: Vec<(usize, &DrawCall)> = Vec::new();
    let mut line_y = f64::NAN;
    let mut tolerance = 0.0;
    let flush = |line: &mut Vec<(usize, &DrawCall)>, out: &mut Vec<String>| {
        line.sort_by(|a, b| a.1.x.total_cmp(&b.1.x).then(a.0.cmp(&b.0)));
        let text: String = line.iter().map(|(_, c)| c.text.as_str()).collect();
        let text = text.trim();
        if !text.is_empty() {
            out.push(text.to_owned());
        }
        line.clear();
    };
    for &(seq, call) in calls {
        if line.is_empty() || call.y - line_y > tolerance {
            flush(&mut line, &mut out);
            line_y = call.y;
            let size = if call.size > 0.0 && call.size.is_finite() {
                call.size
            } else {
                DEFAULT_FONT_PX
            };
            // Half a font size: lines are at least a font size apart, while chunks of one
            // line share a baseline (or jitter by a pixel or two).
            tolerance = size * 0.5;
        }
        line.push((seq, call));
    }
    flush(&mut line, &mut out);
    out
}

/// What [`insert`] put into a page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inserted {
    /// Canvases replaced by their text.
    pub canvases: usize,
    /// Characters put in.
    pub chars: usize,
}

/// Replaces each drawn `<canvas>` of `doc` (numbered in document order) by a `<div>` of its
/// lines, one `<p>` each; drawings of created canvases go at the end of the `<body>`.
pub fn insert(doc: &mut Html, drawings: &[Drawing]) -> Inserted {
    let mut done = Inserted::default();
    if drawings.iter().all(|d| d.lines.is_empty()) {
        return done;
    }
    let canvases: Vec<NodeId> = doc
        .tree
        .root()
        .descendants()
        .filter(|n| matches!(n.value(), Node::Element(e) if e.name() == "canvas"))
        .map(|n| n.id())
        .collect();
    let body = doc
        .tree
        .root()
        .descendants()
        .find(|n| matches!(n.value(), Node::Element(e) if e.name() == "body"))
        .map(|n| n.id());
    for drawing in drawings.iter().filter(|d| !d.lines.is_empty()) {
        let target = match drawing.canvas {
            Some(i) => match canvases.get(i) {
                Some(&id) => {
                    if let Some(mut node) = doc.tree.get_mut(id)
                        && let Node::Element(el) = node.value()
                    {
                        el.name = name("div");
                    }
                    id
                }
                None => continue,
            },
            None => match body {
                Some(body) => {
                    let Some(mut node) = doc.tree.get_mut(body) else {
                        continue;
                    };
                    node.append(Node::Element(Element::new(name("div"), Vec::new())))
                        .id()
                }
                None => continue,
            },
        };
        let Some(mut node) = doc.tree.get_mut(target) else {
            continue;
        };
        // The canvas's fallback content is what a browser that draws does not show.
        while let Some(mut child) = node.first_child() {
            child.detach();
        }
        for line in &drawing.lines {
            let mut p = node.append(Node::Element(Element::new(name("p"), Vec::new())));
            p.append(Node::Text(Text {
                text: line.as_str().into(),
            }));
        }
        done.canvases += 1;
        done.chars += drawing.chars();
    }
    done
}

fn name(tag: &str) -> html5ever::QualName {
    html5ever::QualName::new(None, html5ever::ns!(html), html5ever::LocalName::from(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(canvas: Option<usize>, text: &str, x: f64, y: f64) -> DrawCall {
        DrawCall {
            canvas,
            text: text.into(),
            x,
            y,
            size: 16.0,
        }
    }

    #[test]
    fn shuffled_chunks_are_read_in_lines_then_left_to_right() {
        let calls = vec![
            call(Some(0), "合久必分。", 80.0, 20.0),
            call(Some(0), "周末七国", 0.0, 41.0),
            call(Some(0), "话说天下", 0.0, 20.0),
            call(Some(0), "分争。", 64.0, 40.0),
            call(Some(0), "大势，", 64.0, 21.0),
        ];
        let d = order(&calls);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].lines, ["话说天下大势，合久必分。", "周末七国分争。"]);
    }

    #[test]
    fn canvases_keep_document_order_and_created_ones_come_last() {
        let calls = vec![
            call(None, "三", 0.0, 0.0),
            call(Some(1), "二", 0.0, 0.0),
            call(Some(0), "一", 0.0, 99.0),
            call(Some(0), " ", 0.0, 9.0),
            call(Some(0), "x", f64::NAN, 9.0),
        ];
        let d = order(&calls);
        let canvases: Vec<_> = d.iter().map(|d| d.canvas).collect();
        assert_eq!(canvases, [Some(0), Some(1), None]);
        assert_eq!(d[0].lines, ["一"]);
    }

    #[test]
    fn a_million_calls_cost_one_bounded_sort() {
        let calls: Vec<DrawCall> = (0..1_000_000)
            .map(|i| {
                call(
                    Some(0),
                    "字",
                    (i % 40) as f64 * 16.0,
                    (i / 40) as f64 * 20.0,
                )
            })
            .collect();
        let d = order(&calls);
        assert!(d[0].chars() <= MAX_CALLS.min(MAX_CHARS));
        assert_eq!(d[0].lines.len(), MAX_CALLS / 40);
        let long = vec![call(Some(0), &"字".repeat(MAX_CHARS + 1), 0.0, 0.0)];
        assert!(order(&long).is_empty());
    }

    #[test]
    fn drawn_canvases_become_text_where_they_sit() {
        let mut doc = Html::parse_document(
            "<body><div id=content><canvas id=c>请升级浏览器</canvas></div><canvas></canvas></body>",
        );
        let drawings = order(&[
            call(Some(0), "第二行", 0.0, 40.0),
            call(Some(0), "第一行", 0.0, 20.0),
            call(None, "末尾", 0.0, 0.0),
        ]);
        let done = insert(&mut doc, &drawings);
        assert_eq!(
            done,
            Inserted {
                canvases: 2,
                chars: 8
            }
        );
        let html = doc.root_element().html();
        assert!(
            html.contains(r#"<div id="content"><div id="c"><p>第一行</p><p>第二行</p></div></div><canvas></canvas><div><p>末尾</p></div>"#),
            "{html}"
        );
        // A drawing of a canvas the page does not have is dropped.
        let mut doc = Html::parse_document("<body></body>");
        let done = insert(&mut doc, &order(&[call(Some(3), "x", 0.0, 0.0)]));
        assert_eq!(done.canvases, 0);
    }
}
