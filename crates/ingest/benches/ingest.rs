//! Parsing and decoding hostile input: each 5 MiB document must parse in linear time.
//! `cargo bench -p ingest`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ingest::charset;
use ingest::html::{HtmlLimits, parse_document};

const SIZE: usize = 5 * 1024 * 1024;

fn fill(unit: &str) -> String {
    unit.repeat(SIZE / unit.len())
}

/// The hostile documents: name and markup, about 5 MiB each.
fn hostile() -> Vec<(&'static str, String)> {
    let half = |open: &str, close: &str| {
        let n = SIZE / 2 / open.len();
        format!("{}text{}", open.repeat(n), close.repeat(n))
    };
    let attrs: String = (0..SIZE / 8).map(|i| format!(" a{i}=1")).collect();
    vec![
        ("nested_div", half("<div>", "</div>")),
        ("nested_span", half("<span>", "</span>")),
        ("unclosed_div", fill("<div>")),
        ("attributes", format!("<p{attrs}>x</p>")),
        (
            "reopened_formatting",
            format!(
                "{}{}",
                (0..100).map(|i| format!("<b id={i}>")).collect::<String>(),
                fill("</p><p>x")
            ),
        ),
        (
            "stray_end_tags",
            format!("{}{}", "<span>".repeat(200), fill("</i>")),
        ),
        ("table_soup", fill("<table><tr><td>")),
        ("paragraphs", fill("<p>第一章的文字。</p>")),
    ]
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_document");
    group.sample_size(10);
    let limits = HtmlLimits::default();
    for (name, doc) in hostile() {
        group.throughput(Throughput::Bytes(doc.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| black_box(parse_document(black_box(&doc), &limits, None)))
        });
    }
    group.finish();
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    group.sample_size(10);
    let text = "话说天下大势，分久必合，合久必分。".repeat(SIZE / 51);
    let mut gbk = encoding_rs::GBK.encode(&text).0.into_owned();
    gbk.insert(100, 0xFF);
    let soup: Vec<u8> = (0..SIZE as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for (name, bytes) in [("damaged_gbk", gbk), ("byte_soup", soup)] {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| black_box(charset::decode(black_box(&bytes), None, None)))
        });
    }
    group.finish();
}

criterion_group!(benches, parse, decode);
criterion_main!(benches);
