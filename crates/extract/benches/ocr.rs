//! OCR of a chapter served as images (issue #46's target: 3,000 characters read in at most
//! 3 s on one core): the characters drawn in WenQuanYi Micro Hei at 18 px into one tall PNG,
//! read by Tesseract (`OMP_THREAD_LIMIT=1`). Before timing, it prints the character error
//! rate of the variants pirates serve (clean PNG, JPEG at quality 45, a faint watermark, 16 px),
//! each read once.
//!
//! `cargo bench -p extract --bench ocr` (needs `tesseract-ocr`, `tesseract-ocr-chi-sim` and
//! `fonts-wqy-microhei`; skipped loudly without them).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use extract::ocr::read_images;
use extract::{OcrSettings, Tesseract};
use testkit::images as draw;
use url::Url;

/// `chars` characters of the sample chapters, paragraphs kept.
fn chapter(chars: usize) -> String {
    let mut out = String::new();
    for name in ["sanguoyanyi_01", "sanguoyanyi_02", "xiyouji_01"] {
        let path = format!("{}/tests/data/zh/{name}.txt", env!("CARGO_MANIFEST_DIR"));
        for line in std::fs::read_to_string(path).unwrap().lines().skip(1) {
            let line = line.trim();
            if out.chars().filter(|c| *c != '\n').count() + line.chars().count() > chars {
                return out;
            }
            if !line.is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn ocr(c: &mut Criterion) {
    let Some(font) = draw::font() else { return };
    let settings = OcrSettings::default();
    let engine = match Tesseract::probe(&settings) {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("skipped: no tesseract ({e})");
            return;
        }
    };
    let url = Url::parse("http://pirate.test/1.png").unwrap();
    let read = |bytes: Vec<u8>| {
        let images = vec![(url.clone(), Ok(bytes))];
        let deadline = Instant::now() + Duration::from_secs(120);
        read_images(&engine, &settings, &images, deadline)
    };
    let text = chapter(3000);
    let plain = draw::Style::default();
    let marked = draw::Style {
        watermark: Some("盗版小说网 www.daoban.test".into()),
        background: 228,
        ..draw::Style::default()
    };
    let small = draw::Style {
        px: 16.0,
        ..draw::Style::default()
    };
    let clean = draw::render(&font, &text, &plain).unwrap();
    let variants = [
        ("clean png", draw::png(&clean)),
        ("jpeg q45", draw::jpeg(&clean, 45)),
        (
            "watermark png",
            draw::png(&draw::render(&font, &text, &marked).unwrap()),
        ),
        (
            "16 px png",
            draw::png(&draw::render(&font, &text, &small).unwrap()),
        ),
    ];
    for (name, bytes) in &variants {
        let started = Instant::now();
        let got = read(bytes.clone());
        eprintln!(
            "ocr {name}: {} characters, character error {:.4}, {:.2} s",
            text.chars().filter(|c| !c.is_whitespace()).count(),
            testkit::images::character_error_rate(&text, &got.text),
            started.elapsed().as_secs_f64()
        );
    }
    let mut group = c.benchmark_group("ocr");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(40));
    group.bench_function("3000 characters, one tall png", |b| {
        b.iter(|| black_box(read(variants[0].1.clone())))
    });
    group.finish();
}

criterion::criterion_group!(benches, ocr);
criterion::criterion_main!(benches);
