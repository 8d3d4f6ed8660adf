//! The first look of a scan alone, without reading WET files: `wet/scan_english`'s hot path
//! in a binary small enough to profile under `valgrind --tool=callgrind` or `perf` (the
//! pipeline's bench builds a catalogue of 2,000 chapters first).
//!
//! `cargo run --release -p matcher --example first_look_scan -- english 20` scans about
//! 8 MB of English pages (Alice, Frankenstein) 20 times past the chapters of 三国演义 1–10;
//! `chinese` scans 红楼梦 and 西游记 instead. Prints the pages that may match and MiB/s.

use std::sync::Arc;
use std::time::Instant;

use fingerprint::{FingerprintSettings, Fingerprinter};
use matcher::{ChapterEntry, ChapterId, FirstLook, IndexBuilder, Matcher, MatcherSettings, WorkId};

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Pages of 700–2,100 characters cut from `sources`, about 8 MB in all.
fn pages(sources: &[&str]) -> Vec<String> {
    let chars: Vec<char> = sources
        .iter()
        .flat_map(|s| data(s).chars().collect::<Vec<_>>())
        .collect();
    let (mut pages, mut bytes, mut at) = (Vec::new(), 0, 0);
    while bytes < 8 << 20 {
        let len = 700 + (pages.len() * 397) % 1400;
        let page: String = (0..len).map(|k| chars[(at + k) % chars.len()]).collect();
        at = (at + len) % chars.len();
        bytes += page.len();
        pages.push(page);
    }
    pages
}

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "english".into());
    let rounds: usize = args.next().map_or(10, |n| n.parse().expect("rounds"));
    let fingerprinter = Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap());
    let settings = MatcherSettings::default();
    let mut builder = IndexBuilder::new(settings.index.clone()).unwrap();
    let chapters = data("sanguoyanyi_1-10.txt");
    for (i, chapter) in chapters
        .split("\n第")
        .filter(|c| c.chars().count() > 300)
        .enumerate()
    {
        let fp = fingerprinter.fingerprint(chapter);
        builder
            .add(&ChapterEntry::new(ChapterId(i as i64 + 1), WorkId(1), &fp))
            .unwrap();
    }
    let matcher = Matcher::new(settings, fingerprinter, builder.build()).unwrap();
    let pages = match kind.as_str() {
        "english" => pages(&["alice_1-3.txt", "frankenstein_1-2.txt"]),
        "chinese" => pages(&["hongloumeng_hant_1-2.txt", "xiyouji_1-4.txt"]),
        other => panic!("{other}: english or chinese"),
    };
    let bytes: usize = pages.iter().map(String::len).sum();
    let mut look = FirstLook::new(&matcher);
    assert!(look.is_filtering());
    let started = Instant::now();
    let mut may = 0;
    for _ in 0..rounds {
        for page in &pages {
            may += usize::from(look.may_match(&matcher, page).unwrap());
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{kind}: {} pages × {rounds}, {may} may match, {:.1} MiB/s",
        pages.len(),
        (bytes * rounds) as f64 / seconds / (1 << 20) as f64
    );
}
