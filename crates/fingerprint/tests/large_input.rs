//! A 100 MB input in one call: finishes (no quadratic behaviour) and stays under 1 GB of peak
//! heap, measured by a counting global allocator (this file is its own test binary, so the
//! allocator sees only this test).

use fingerprint::{FingerprintSettings, Fingerprinter};
use testkit::{heap_now, heap_peak, reset_peak};

#[global_allocator]
static ALLOCATOR: testkit::CountingAlloc = testkit::CountingAlloc;

#[test]
fn hundred_megabytes_in_one_call_under_one_gigabyte() {
    let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
    let sample = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sanguoyanyi_1-10.txt"),
    )
    .unwrap();
    let mut text = String::with_capacity(100 << 20);
    while text.len() + sample.len() <= 100 << 20 {
        text.push_str(&sample);
    }
    assert!(text.len() > 99 << 20);
    reset_peak();
    let before = heap_now();
    let f = fp.fingerprint(&text);
    let peak = heap_peak();
    println!(
        "100 MB: peak heap {} MB (input {} MB held before the call), {} winnowing fingerprints",
        peak >> 20,
        before >> 20,
        f.winnow.len()
    );
    assert!(peak < 1 << 30, "peak heap {} MB", peak >> 20);
    assert!(f.summary.chars > 25_000_000, "{} chars", f.summary.chars);
    // The text repeats a 142 KB sample, so it has few distinct fingerprints but many postings.
    assert!(f.winnow.len() > 100_000);
}
