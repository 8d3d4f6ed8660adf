//! Fingerprints a directory of `.txt` files (cut into ~8 KB chapters) over and over with the
//! whole bundle, or with SimHash alone: a steady loop to profile (`perf record`,
//! `valgrind --tool=callgrind`).
//! `cargo run --release -p fingerprint --example bundle_loop -- ../shared/corpus/zh 5 [simhash]`

mod common;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "../shared/corpus/zh".into());
    let rounds: usize = args.next().map_or(3, |s| s.parse().expect("rounds"));
    let simhash_only = args.next().is_some_and(|k| k == "simhash");
    let docs = common::chapters(&dir);
    let fp = fingerprint::Fingerprinter::new(Default::default()).unwrap();
    let mb = docs.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    for _ in 0..rounds {
        let start = std::time::Instant::now();
        let n: u64 = docs
            .iter()
            .map(|d| {
                if simhash_only {
                    fp.simhash(d).count_ones().into()
                } else {
                    fp.fingerprint(d).winnow.len() as u64
                }
            })
            .sum();
        println!("{:.1} MB/s ({n})", mb / start.elapsed().as_secs_f64());
    }
}
