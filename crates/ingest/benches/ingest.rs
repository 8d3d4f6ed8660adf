//! Parsing and decoding hostile input: each 5 MiB document must parse in linear time (the
//! target: main-text extraction of 5 MiB of nested markup within 1 s).
//! `cargo bench -p ingest --bench ingest`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ingest::charset;
use ingest::html::{HtmlLimits, parse_document};
use testkit::hostile;

const SIZE: usize = 5 * 1024 * 1024;
const TEXT: &str = "话说天下大势，分久必合，合久必分。";

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_document");
    group.sample_size(10);
    let limits = HtmlLimits::default();
    let mut corpus = hostile::html_corpus(SIZE, TEXT);
    corpus.push(("paragraphs", format!("<p>{TEXT}</p>").repeat(SIZE / 60)));
    for (name, doc) in corpus {
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
    let mut gbk = encoding_rs::GBK
        .encode(&TEXT.repeat(SIZE / 51))
        .0
        .into_owned();
    gbk.insert(100, 0xFF);
    for (name, bytes) in [
        ("damaged_gbk", gbk),
        ("byte_soup", hostile::byte_soup(SIZE)),
    ] {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| black_box(charset::decode(black_box(&bytes), None, None)))
        });
    }
    group.finish();
}

criterion_group!(benches, parse, decode);
criterion_main!(benches);
