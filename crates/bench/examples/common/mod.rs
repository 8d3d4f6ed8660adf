//! Shared by the examples: reading the project corpus, percentiles, settings from arguments.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use bench::Corpus;
use matcher::MatcherSettings;

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

/// The default settings with `--text-sample N` and `--pinyin-sample N` applied.
pub fn settings(args: &[String]) -> MatcherSettings {
    let mut s = MatcherSettings::default();
    s.index.text_sample = arg(args, "--text-sample", s.index.text_sample);
    s.index.pinyin_sample = arg(args, "--pinyin-sample", s.index.pinyin_sample);
    s
}
