//! Throughput of each stage of the SimHash path (normalise, space, cut, weigh, hash) over a
//! directory of UTF-8 `.txt` files cut into ~8 KB chapters. A profiling aid:
//! `cargo run --release -p fingerprint --example simhash_stages -- ../shared/corpus/zh`.

mod common;

use std::time::Instant;

use fingerprint::{FingerprintSettings, Fingerprinter, normalize_compact};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/corpus/zh".into());
    let docs = common::chapters(&dir);
    let mb = docs.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
    let stage = |name: &str, f: &dyn Fn(&str) -> usize| {
        let start = Instant::now();
        let n: usize = docs.iter().map(|d| f(d)).sum();
        println!(
            "{name:<28} {:>8.1} MB/s  ({n})",
            mb / start.elapsed().as_secs_f64()
        );
    };
    stage("reference: jieba cut (raw)", &|d| {
        fingerprint::segment::jieba().cut(d, false).len()
    });
    stage("normalize", &|d| normalize_compact(d).chars);
    stage("normalize + spaced", &|d| {
        normalize_compact(d).spaced().len()
    });
    stage("... + cut into words", &|d| {
        fp.segmenter().words(&normalize_compact(d).spaced()).len()
    });
    stage("... + tf-idf weights", &|d| {
        let mut n = 0;
        fp.segmenter()
            .for_each_term(&normalize_compact(d).spaced(), |_, _, _, _| n += 1);
        n
    });
    stage("simhash (all of it)", &|d| {
        fp.simhash(d).count_ones() as usize
    });
    std::thread::scope(|s| {
        s.spawn(|| {
            stage("simhash on a spawned thread", &|d| {
                fp.simhash(d).count_ones() as usize
            })
        });
    });
}
