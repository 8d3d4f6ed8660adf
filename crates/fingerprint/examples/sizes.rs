//! Serialised sizes of the fingerprint bundle for ~8 KB chapters of the bundled sample:
//! `cargo run --release -p fingerprint --example sizes`.

use fingerprint::{FingerprintSettings, Fingerprinter};

fn main() {
    let fp = Fingerprinter::new(FingerprintSettings::default()).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for file in [
        "sanguoyanyi_1-10.txt",
        "xiyouji_1-4.txt",
        "hongloumeng_hant_1-2.txt",
        "alice_1-3.txt",
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let (mut n, mut summary, mut full, mut winnow, mut pinyin, mut bytes) = (0, 0, 0, 0, 0, 0);
        let mut chapter = String::new();
        for line in text.split_inclusive('\n') {
            chapter.push_str(line);
            if chapter.len() >= 8192 {
                let f = fp.fingerprint(&chapter);
                n += 1;
                bytes += chapter.len();
                summary += f.summary.to_bytes().len();
                full += f.to_bytes().len();
                winnow += f.winnow.len();
                pinyin += f.pinyin_winnow.len();
                chapter.clear();
            }
        }
        println!(
            "{file:<26} {n:>3} chapters of {:>5} B: summary {:>4} B, full {:>5} B, {:>4} text + {:>4} pinyin winnowing fingerprints",
            bytes / n,
            summary / n,
            full / n,
            winnow / n,
            pinyin / n
        );
    }
}
