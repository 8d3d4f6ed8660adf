//! Helpers shared by the fingerprint integration tests.
#![allow(dead_code)]

use fingerprint::hash::fmix64;

/// Test data bundled with the crate (see `tests/data/README.md`).
pub fn data(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Splits a Chinese novel into chapters at lines starting with 第…回.
pub fn chapters(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start_matches(['\u{3000}', ' ']);
        if t.starts_with('第') && t.chars().take(8).any(|c| c == '回') {
            out.push(String::new());
        }
        if let Some(ch) = out.last_mut() {
            ch.push_str(line);
            ch.push('\n');
        }
    }
    out
}

/// A tiny deterministic generator (no `rand` needed, same values everywhere).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        fmix64(self.0)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Replaces `fraction` of the Han characters of `text` by random common Han characters.
pub fn edit_chars(text: &str, fraction: f64, seed: u64) -> String {
    let mut rng = Rng(seed);
    text.chars()
        .map(|c| {
            let han = ('\u{4E00}'..='\u{9FFF}').contains(&c);
            if han && (rng.next() % 10_000) as f64 / 10_000.0 < fraction {
                char::from_u32(0x4E00 + rng.below(3000) as u32).unwrap()
            } else {
                c
            }
        })
        .collect()
}
