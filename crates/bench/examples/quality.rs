//! The evasion-quality benchmark: registers public-domain novels from the project corpus,
//! makes pirate pages with every disguise (and negatives), checks them all and prints the
//! recall/precision table per case.
//!
//! ```sh
//! cargo run --release -p bench --example quality -- [--corpus DIR] [--per-case N] \
//!     [--threads N] [--chapter-bytes N] [--seed N] [--failures N] [--text-sample N] [--pinyin-sample N]
//! ```
//!
//! `--excerpts` prints instead how short a copied passage (hidden in another chapter, verbatim
//! or edited) is still found, the figure that winnowing sampling trades for memory.
//!
//! `--corpus` defaults to `../shared/corpus` beside the workspace; the run is skipped with a
//! message when it is absent.

mod common;

use std::sync::Arc;
use std::time::Instant;

use bench::pirate::excerpt_pages;
use bench::quality::{evaluate, register};
use bench::{Case, pirate_pages};
use common::{arg, corpus_dir, load_corpus, settings};
use fingerprint::{FingerprintSettings, Fingerprinter};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = corpus_dir(&args) else { return };
    let per_case: usize = arg(&args, "--per-case", 200);
    let threads: usize = arg(&args, "--threads", 2);
    let chapter_bytes: usize = arg(&args, "--chapter-bytes", 12_000);
    let seed: u64 = arg(&args, "--seed", 1);
    let show_failures: usize = arg(&args, "--failures", 20);

    let corpus = load_corpus(&dir, chapter_bytes);
    let started = Instant::now();
    let fingerprinter = Arc::new(Fingerprinter::new(FingerprintSettings::default()).unwrap());
    let matcher_fingerprinter = Arc::clone(&fingerprinter);
    let (matcher, source) = register(&corpus, fingerprinter, settings(&args), threads).unwrap();
    println!(
        "registered {} chapters ({} held out, {} foreign) in {:.1} s",
        corpus.registered.len(),
        corpus.held_out.len(),
        corpus.foreign.len(),
        started.elapsed().as_secs_f64()
    );
    if args.iter().any(|a| a == "--excerpts") {
        // How short a copied passage is still found: lenient report thresholds, so what is
        // measured is candidate lookup and alignment.
        let mut lenient = settings(&args);
        lenient.report.min_matched_chars = 100;
        lenient.report.min_coverage = 0.0;
        lenient.report.min_page_share = 0.0;
        let fingerprinter = Arc::clone(&matcher_fingerprinter);
        let (lenient, source) = register(&corpus, fingerprinter, lenient, threads).unwrap();
        println!("| excerpt (normalised chars) | found, verbatim | found, 3-5% edited |");
        println!("|---:|---:|---:|");
        for chars in [100, 150, 200, 300, 450, 600, 900] {
            let mut row = format!("| {chars} |");
            for edited in [false, true] {
                let pages = excerpt_pages(&corpus, chars, edited, per_case, seed);
                let r = evaluate(&lenient, &source, &pages, threads).unwrap();
                row += &format!(" {:.3} |", r.stats(Case::Partial).recall());
            }
            println!("{row}");
        }
        return;
    }
    let pages = pirate_pages(&corpus, per_case, seed);
    let bytes: usize = pages.iter().map(|p| p.text.len()).sum();
    println!(
        "{} pages, {:.1} KB on average, {} cases\n",
        pages.len(),
        bytes as f64 / pages.len().max(1) as f64 / 1000.0,
        Case::ALL.len()
    );
    let report = evaluate(&matcher, &source, &pages, threads).unwrap();
    println!("{report}");
    if !report.failures.is_empty() {
        println!("failures ({} in all):", report.failures.len());
        for f in report.failures.iter().take(show_failures) {
            println!("- {f}");
        }
    }
}
