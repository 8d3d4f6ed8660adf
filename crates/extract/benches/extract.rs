//! Decoding and main-text extraction per page: an ordinary GBK chapter page, the real
//! 687-chapter index page, and hostile pages at the 5 MiB body cap.
//!
//! `cargo bench -p extract --bench extract` (release build).

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use extract::charset;

fn extraction(c: &mut Criterion) {
    let ch = common::zh_chapter("sanguoyanyi_02");
    let nav = common::Nav {
        prev: "/book/1/1.html".into(),
        toc: "/book/1/".into(),
        next: "/book/1/3.html".into(),
        next_label: "下一章",
    };
    let page = common::div_br_page("book/1", &ch.title, &ch.paragraphs, &nav, None, None);
    let bytes = common::gbk(&page);
    let url = url::Url::parse("http://x.example/book/1/2.html").unwrap();
    let mut group = c.benchmark_group("page");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("decode gbk (no charset)", |b| {
        b.iter(|| black_box(charset::decode(black_box(&bytes), Some("text/html"), None)))
    });
    let text = charset::decode(&bytes, None, None).text;
    group.bench_function("extract div+br chapter", |b| {
        b.iter(|| black_box(extract::extract(black_box(&text), &url)))
    });
    let toc = common::data("html/biquge_info_book_toc.html");
    group.throughput(Throughput::Bytes(toc.len() as u64));
    group.bench_function("extract real 687-chapter index page", |b| {
        b.iter(|| black_box(extract::extract(black_box(&toc), &url)))
    });
    group.finish();

    // Main-text extraction of hostile pages at the 5 MiB body cap: linear, ≤ 1 s each.
    let mut group = c.benchmark_group("hostile page");
    group.sample_size(10);
    for (name, doc) in testkit::hostile::html_corpus(5 * 1024 * 1024, &ch.paragraphs.join("<br>")) {
        group.throughput(Throughput::Bytes(doc.len() as u64));
        group.bench_function(format!("extract {name}"), |b| {
            b.iter(|| black_box(extract::extract(black_box(&doc), &url)))
        });
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    extraction(&mut c);
    c.final_summary();
}
