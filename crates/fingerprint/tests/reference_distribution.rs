//! Measures the pinyin-initial distribution that `dna::REFERENCE_DISTRIBUTION` holds.
//! Ignored by default: it reads the shared corpus beside the checkout
//! (`cargo test -p fingerprint --release --test reference_distribution -- --ignored --nocapture`).

use fingerprint::{normalize_compact, pinyin};

#[test]
#[ignore = "reads ../shared/corpus; run by hand when the reference is re-derived"]
fn measure_reference_distribution() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/zh");
    let mut counts = [0u64; 26];
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).unwrap();
        for c in normalize_compact(&text).text.chars() {
            if pinyin::syllable(c).is_some()
                && let Some(l) = pinyin::initial(c)
            {
                counts[(l - b'a') as usize] += 1;
            }
        }
    }
    let total: u64 = counts.iter().sum();
    let probs: Vec<String> = counts
        .iter()
        .map(|&c| format!("{:.6}", c as f64 / total as f64))
        .collect();
    println!("total {total}\n[{}]", probs.join(", "));
}
