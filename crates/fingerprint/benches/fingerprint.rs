//! Criterion benchmarks of every fingerprint kind on one ~8 KB chapter of 三国演义 and one of
//! Alice (normalisation included, as in production). `cargo bench -p fingerprint`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fingerprint::{FingerprintSettings, Fingerprinter, normalize, normalize_compact};
use std::hint::black_box;

fn chapter(file: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    for line in text.split_inclusive('\n').skip(2) {
        out.push_str(line);
        if out.len() >= 8192 {
            break;
        }
    }
    out
}

fn benches(c: &mut Criterion) {
    let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
    for (name, text) in [
        ("zh", chapter("sanguoyanyi_1-10.txt")),
        ("en", chapter("alice_1-3.txt")),
    ] {
        let mut g = c.benchmark_group(format!("fingerprint/{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function("normalize_compact", |b| {
            b.iter(|| normalize_compact(black_box(&text)))
        });
        g.bench_function("normalize_with_offsets", |b| {
            b.iter(|| normalize(black_box(&text)).char_len())
        });
        g.bench_function("minhash", |b| b.iter(|| fp.minhash(black_box(&text))));
        g.bench_function("simhash", |b| b.iter(|| fp.simhash(black_box(&text))));
        g.bench_function("winnow", |b| b.iter(|| fp.winnow(black_box(&text))));
        g.bench_function("pinyin_winnow", |b| {
            b.iter(|| fp.pinyin_winnow(black_box(&text)))
        });
        g.bench_function("sentences", |b| b.iter(|| fp.sentences(black_box(&text))));
        g.bench_function("dna", |b| b.iter(|| fp.dna(black_box(&text))));
        g.bench_function("all", |b| b.iter(|| fp.fingerprint(black_box(&text))));
        g.finish();
    }
}

criterion_group!(fingerprint_benches, benches);
criterion_main!(fingerprint_benches);
