//! Runs text winnowing over the bundled sample repeatedly, for profilers:
//! `perf record ./target/release/examples/winnow_loop`.

use fingerprint::{FingerprintSettings, Fingerprinter};

fn main() {
    let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let text = std::fs::read_to_string(dir.join("sanguoyanyi_1-10.txt")).unwrap();
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mut n = 0;
    for _ in 0..rounds {
        n += fp.winnow(&text).len();
    }
    println!("{n}");
}
