//! WET scanning, the hot path of `discover commoncrawl`: `wet/scan` reads a generated WET
//! file (gzip members of `conversion` records of Chinese text that copies nothing) and looks
//! every record up in a matcher over registered chapters as the scan does before it verifies
//! a candidate (the first look, `matcher::FirstLook`, then the full fingerprint and the
//! candidates of the records it lets through); `wet/scan_large_index` does the same over
//! 2,000 chapters more, past the size where the first look's filters help;
//! `wet/scan_english` scans English records (most of a real crawl) past the same Chinese
//! chapters: one byte a character, so three times the characters a byte of Chinese has;
//! `wet/read` is the reading alone. Throughput is WET text bytes per second on one core.
//! `cargo bench -p discovery --bench wet`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use discovery::wet::{WetLimits, read_wet, wet_member};
use fingerprint::{FingerprintSettings, Fingerprinter};
use matcher::{ChapterEntry, ChapterId, FirstLook, IndexBuilder, Matcher, MatcherSettings, WorkId};

/// Registered: 封神演义 1–3.
const WORK: &str = include_str!("../../import/tests/data/fengshenyanyi_hant_1-3.txt");
/// The innocent web: 老残游记 1–2, cut into page-sized records.
const WEB: &str = include_str!("../../import/tests/data/laocanyouji_toc_1-2.txt");
/// The innocent English web: Alice's Adventures in Wonderland 1–2.
const WEB_EN: &str = include_str!("../../import/tests/data/alice_toc_1-2.txt");

/// A matcher over 封神演义 1–3 and, when `synthetic > 0`, that many chapters more of 3,000
/// characters drawn at random from its characters (a catalogue too large for the first
/// look's filters: the scan then pays for `Matcher::may_match` on every record).
fn build_matcher(synthetic: usize) -> Matcher {
    let settings = MatcherSettings::default();
    let fingerprinter = Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap());
    let mut builder = IndexBuilder::new(settings.index.clone()).unwrap();
    let mut chapters: Vec<String> = WORK
        .split("\n第")
        .filter(|c| c.chars().count() > 200)
        .map(str::to_owned)
        .collect();
    let alphabet: Vec<char> = WORK.chars().filter(|c| !c.is_whitespace()).collect();
    let mut state = 0x5EED_u64;
    for _ in 0..synthetic {
        chapters.push(
            (0..3000)
                .map(|_| {
                    state = fingerprint::hash::fmix64(state.wrapping_add(1));
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect(),
        );
    }
    let prints: Vec<_> = chapters
        .iter()
        .map(|c| fingerprinter.fingerprint(c))
        .collect();
    for (i, fp) in prints.iter().enumerate() {
        builder
            .add(&ChapterEntry::new(ChapterId(i as i64 + 1), WorkId(1), fp))
            .unwrap();
    }
    Matcher::new(settings, fingerprinter, builder.build()).unwrap()
}

/// About 8 MB of WET text: records of 700–2,100 characters of innocent `web` text (2–6 KB of
/// Chinese).
fn wet_file(web: &str) -> (Vec<u8>, u64) {
    let chars: Vec<char> = web.chars().collect();
    let mut file = Vec::new();
    let mut text_bytes = 0u64;
    let mut at = 0;
    let mut i = 0;
    while text_bytes < 8 << 20 {
        let len = 700 + (i * 397) % 1400;
        let text: String = (0..len).map(|k| chars[(at + k) % chars.len()]).collect();
        at = (at + len) % chars.len();
        text_bytes += text.len() as u64;
        file.extend(wet_member(
            "conversion",
            &format!("https://site{i}.example/page"),
            "2026-11-01T00:00:00Z",
            &text,
        ));
        i += 1;
    }
    (file, text_bytes)
}

fn wet(c: &mut Criterion) {
    let matcher = build_matcher(0);
    let large = build_matcher(2_000);
    assert!(FirstLook::new(&matcher).is_filtering() && !FirstLook::new(&large).is_filtering());
    let (file, text_bytes) = wet_file(WEB);
    let (english, english_bytes) = wet_file(WEB_EN);
    let mut group = c.benchmark_group("wet");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text_bytes));
    group.bench_function("read", |b| {
        b.iter(|| {
            read_wet(&file[..], WetLimits::default(), |r| {
                black_box(r.text.len());
                Ok::<_, ()>(())
            })
            .unwrap()
        })
    });
    for (name, matcher, file, bytes) in [
        ("scan", &matcher, &file, text_bytes),
        ("scan_large_index", &large, &file, text_bytes),
        ("scan_english", &matcher, &english, english_bytes),
    ] {
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut candidates = 0;
                let mut look = FirstLook::new(matcher);
                read_wet(&file[..], WetLimits::default(), |r| {
                    if look.may_match(matcher, &r.text).unwrap() {
                        let page = matcher.page(&r.text);
                        candidates += matcher.candidates(&page).unwrap().len();
                    }
                    Ok::<_, ()>(())
                })
                .unwrap();
                black_box(candidates)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, wet);
criterion_main!(benches);
