//! Helpers shared by the matcher's integration tests: the bundled texts and one
//! fingerprinter. (Pirate pages and quality scores are the `bench` crate's, tested there.)
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use fingerprint::{FingerprintSettings, Fingerprinter};

/// Test data bundled with the crate (see `tests/data/README.md`).
pub fn data(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// One fingerprinter for the whole test binary (it loads jieba's dictionary).
pub fn fingerprinter() -> Arc<Fingerprinter> {
    static F: OnceLock<Arc<Fingerprinter>> = OnceLock::new();
    F.get_or_init(|| Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap()))
        .clone()
}
