//! copyhound beside the peers people use today, on the same texts in one run (issue #31,
//! point 6): MinHash signatures on one thread, against gaoya (Python, a Rust core; PyPI
//! `gaoya`).
//!
//! `cargo bench -p fingerprint --bench peers -- [TEXTS]` cuts the test corpus (Chinese and
//! English novels, `tests/data`) into texts of about 3,000 characters (TEXTS of them,
//! default 1,500, repeating the corpus as needed), then times, best of five (the runs
//! alternate, so a burst of other work on the machine slows one run, not one side):
//!
//! - gaoya: `MinHashStringIndex.insert_document` per text, one at a time (character
//!   shingles, 32-bit values, 20 bands of 5: its shingling, hashing, signature and bands);
//! - copyhound: [`Fingerprinter::minhash`] per text (normalisation, 5-character shingles, a
//!   signature of 128 values) and its 20 LSH band keys into a map: the same work and more
//!   (normalisation, 28 more values).
//!
//! It prints both throughputs in MB/s of UTF-8 text and the ratio. Without `python3` and
//! gaoya (`pip install gaoya`) it says so and measures copyhound alone.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use fingerprint::{FingerprintSettings, Fingerprinter};

const BANDS: usize = 20;
const ROWS: usize = 5;
const RUNS: usize = 5;

fn texts(count: usize) -> Vec<String> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut chunks = Vec::new();
    for file in [
        "sanguoyanyi_1-10.txt",
        "xiyouji_1-4.txt",
        "hongloumeng_hant_1-2.txt",
        "alice_1-3.txt",
    ] {
        let text = std::fs::read_to_string(data.join(file)).expect("the bench corpus");
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(3_000) {
            chunks.push(chunk.iter().collect::<String>());
        }
    }
    chunks.iter().cycle().take(count).cloned().collect()
}

/// Seconds of one run of copyhound's signatures and band keys.
fn copyhound(fp: &Fingerprinter, texts: &[String]) -> f64 {
    let mut index: HashMap<u64, Vec<u32>> = HashMap::new();
    let start = Instant::now();
    for (i, text) in texts.iter().enumerate() {
        let signature = fp.minhash(black_box(text));
        for key in signature.band_keys(BANDS, ROWS) {
            index.entry(key).or_default().push(i as u32);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    black_box(index.len());
    seconds
}

/// Seconds `f` took.
fn timed(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

/// Seconds of one run of gaoya's script on the texts in `input`, and gaoya's version, or why
/// it did not run.
fn gaoya(input: &Path) -> Result<(f64, String), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/gaoya_minhash.py");
    let k = FingerprintSettings::default().shingle_k.to_string();
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(input)
        .args([k, BANDS.to_string(), ROWS.to_string(), "1".to_owned()])
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
    }
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("gaoya's report: {e}"))?;
    let seconds = report["seconds"]
        .as_f64()
        .ok_or("no seconds in gaoya's report")?;
    Ok((seconds, report["gaoya"].as_str().unwrap_or("?").to_owned()))
}

fn main() {
    let count = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_500usize);
    let texts = texts(count);
    let bytes: usize = texts.iter().map(String::len).sum();
    let mb = bytes as f64 / 1e6;
    println!(
        "MinHash on one thread: {} texts, {:.1} MB of UTF-8 text (Chinese and English), \
         {BANDS} bands of {ROWS}",
        texts.len(),
        mb
    );
    // Runs alternate, and each side keeps its best: a burst of other work on the machine
    // slows one run, not one side.
    let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("texts.json");
    std::fs::write(&input, serde_json::to_vec(&texts).unwrap()).unwrap();
    let compact: Vec<String> = texts
        .iter()
        .map(|t| fingerprint::normalize_compact(t).text)
        .collect();
    let (mut ours, mut theirs) = (f64::MAX, Ok((f64::MAX, String::new())));
    let (mut normalising, mut signing) = (f64::MAX, f64::MAX);
    let settings = fp.settings();
    let minhasher = fingerprint::MinHasher::new(settings.minhash_values, settings.minhash_seed);
    for _ in 0..RUNS {
        ours = ours.min(copyhound(&fp, &texts));
        normalising = normalising.min(timed(|| {
            for t in &texts {
                black_box(fingerprint::normalize_compact(black_box(t)));
            }
        }));
        signing = signing.min(timed(|| {
            for t in &compact {
                let mut b = minhasher.builder();
                fingerprint::shingle::for_each_char_shingle(
                    black_box(t),
                    settings.shingle_k,
                    |_, h| b.add(h),
                );
                black_box(b.finish());
            }
        }));
        if let Ok((best, _)) = &theirs {
            theirs = gaoya(&input).map(|(s, v)| (s.min(*best), v));
        }
    }
    println!(
        "copyhound  {:>8.1} MB/s  {:>9.0} texts/s  (normalisation, 128 values, band keys)",
        mb / ours,
        texts.len() as f64 / ours
    );
    println!(
        "  of which normalisation {:.1} MB/s, shingles and signature {:.1} MB/s (apart)",
        mb / normalising,
        mb / signing
    );
    match theirs {
        Ok((theirs, version)) => {
            println!(
                "gaoya {version:<5}{:>8.1} MB/s  {:>9.0} texts/s  (insert_document, {} values)",
                mb / theirs,
                texts.len() as f64 / theirs,
                BANDS * ROWS
            );
            println!("copyhound / gaoya: {:.1}x", theirs / ours);
        }
        Err(why) => println!("gaoya did not run (pip install gaoya): {why}"),
    }
}
