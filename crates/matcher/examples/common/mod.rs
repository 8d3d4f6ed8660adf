//! Shared by the examples: reading the project corpus, a counting allocator, percentiles.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use matcher::MatcherSettings;
use matcher::quality::Corpus;

/// The value after `name` on the command line, parsed, or `default`.
pub fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} does not take {v}"))
        })
        .unwrap_or(default)
}

/// `--corpus DIR`, or `../shared/corpus` beside the workspace; `None` (after saying so) when
/// it is absent.
pub fn corpus_dir(args: &[String]) -> Option<PathBuf> {
    let dir = args
        .iter()
        .position(|a| a == "--corpus")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    if dir.join("zh").is_dir() {
        Some(dir)
    } else {
        println!(
            "skipped: no corpus at {} (pass --corpus DIR)",
            dir.display()
        );
        None
    }
}

/// The corpus under `dir` (see [`Corpus::load`]) cut into chapters of about `chapter_bytes`.
pub fn load_corpus(dir: &Path, chapter_bytes: usize) -> Corpus {
    Corpus::load(dir, chapter_bytes).unwrap_or_else(|e| panic!("{e}"))
}

/// The `q`-quantile (0..=1) of sorted durations.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Counts live and peak heap bytes of the process it is installed in.
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Live heap bytes.
pub fn heap_now() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// Peak heap bytes since the last [`reset_peak`].
pub fn heap_peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Starts a new peak measurement from the live bytes.
pub fn reset_peak() {
    PEAK.store(heap_now(), Ordering::Relaxed);
}

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

/// The default settings with `--text-sample N` and `--pinyin-sample N` applied.
pub fn settings(args: &[String]) -> MatcherSettings {
    let mut s = MatcherSettings::default();
    s.index.text_sample = arg(args, "--text-sample", s.index.text_sample);
    s.index.pinyin_sample = arg(args, "--pinyin-sample", s.index.pinyin_sample);
    s
}
