//! Helpers shared by copyhound's tests, examples and benchmarks; never a dependency of a
//! shipped crate.
//!
//! [`CountingAlloc`] is a global allocator that counts the bytes live on the heap and their
//! peak, so a test or an example can measure the memory a call needs. Install it in its own
//! binary (an integration-test file or an example) so that it sees nothing else:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: testkit::CountingAlloc = testkit::CountingAlloc;
//!
//! fn main() {
//!     let baseline = testkit::heap_now();
//!     testkit::reset_peak();
//!     let buffer = vec![0u8; 1 << 20];
//!     assert!(testkit::heap_peak() - baseline >= 1 << 20);
//!     drop(buffer);
//! }
//! ```
//!
//! The counts are process-wide: concurrent threads add to the same figures.
//!
//! # The rest, by module
//!
//! - [`english`]: the English words left in a page that should be in another language.
//! - [`hostile`]: the documents a pirate site or an upload may use to stop a parser (nested
//!   markup, attribute and element bombs, reopened formatting, byte soup).
//! - [`warcio`]: `warcio check`, the archivists' reader, run on a WARC file a test wrote.
//! - `fonts` (feature `fonts`; also a dependency of `bench`, for its pirate fonts): remapped
//!   fonts built as a subsetter builds them (a reference font's glyphs copied under Private
//!   Use Area code points with write-fonts, WOFF2 by ttf2woff2), the reference font's path
//!   (loudly missing under `CI=true`), a font rescaled to another em and a WOFF2 bomb.
//! - `images` (feature `images`): chapters drawn into PNG and JPEG images in a real font,
//!   grey grounds and faint watermarks, photograph-like images, and hostile images (a pixel
//!   bomb's header, animated GIFs) for the OCR stage.
//! - `tsa` (feature `tsa`): a local RFC 3161 time-stamping authority on the `openssl` CLI
//!   behind axum.
//! - `hold` (feature `hold`): a gate for a test's HTTP server that answers a number of
//!   requests and holds the rest until the test releases them, so a test stops or kills a
//!   crawl part-way at a point it chooses.
//!
//! Tools a test needs but cannot build (openssl, warcio, the reference font) are skipped
//! loudly when missing, and fail the run under `CI=true`.

pub mod english;
#[cfg(feature = "fonts")]
pub mod fonts;
#[cfg(feature = "hold")]
pub mod hold;
pub mod hostile;
#[cfg(feature = "images")]
pub mod images;
#[cfg(feature = "tsa")]
pub mod tsa;
pub mod warcio;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes and their peak (see the crate docs).
pub struct CountingAlloc;

/// Bytes allocated and not yet freed, as requested by callers (allocator overhead aside).
pub fn heap_now() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// The most [`heap_now`] has been since the last [`reset_peak`] (or the start).
pub fn heap_peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Starts a new peak measurement from what is live now.
pub fn reset_peak() {
    PEAK.store(CURRENT.load(Ordering::Relaxed), Ordering::Relaxed);
}

fn grew(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    CURRENT.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the
// `GlobalAlloc` contract; the only addition is counting sizes in atomics, which neither
// allocates nor panics.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` are passed on as they are.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and the caller's guarantees for `new_size`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static ALLOCATOR: CountingAlloc = CountingAlloc;

    #[test]
    fn counts_live_bytes_and_the_peak() {
        // Other test threads may allocate meanwhile, so allow slack rather than equality.
        let before = heap_now();
        reset_peak();
        let big = vec![0u8; 8 << 20];
        assert!(
            heap_now() >= before + (8 << 20) - (1 << 20),
            "{} {}",
            heap_now(),
            before
        );
        drop(big);
        assert!(heap_now() < before + (1 << 20), "{} {}", heap_now(), before);
        assert!(heap_peak() >= before + (8 << 20));
        let mut grown = Vec::<u8>::with_capacity(1 << 20);
        grown.reserve_exact(4 << 20);
        assert!(heap_now() >= before + (4 << 20));
        grown.shrink_to(0);
        assert!(heap_now() < before + (1 << 20));
    }
}
