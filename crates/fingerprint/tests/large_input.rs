//! A 100 MB input in one call: finishes (no quadratic behaviour) and stays under 1 GB of peak
//! heap, measured by a counting global allocator (this file is its own test binary, so the
//! allocator sees only this test).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use fingerprint::{FingerprintSettings, Fingerprinter};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: delegates to the system allocator and only counts sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size > layout.size() {
                let grow = new_size - layout.size();
                let now = CURRENT.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

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
    PEAK.store(CURRENT.load(Ordering::Relaxed), Ordering::Relaxed);
    let before = CURRENT.load(Ordering::Relaxed);
    let f = fp.fingerprint(&text);
    let peak = PEAK.load(Ordering::Relaxed);
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
