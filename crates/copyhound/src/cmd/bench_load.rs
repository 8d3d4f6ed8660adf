//! `copyhound bench load`: the matcher's start-up load from a real store at scale.
//!
//! Fills a SQLite store (`--db`, kept between runs so a large one is filled once) up to
//! `--chapters` chapters, then times `load_matcher` — the load `check` and the workers do —
//! from it. The chapters are synthesised as `matcher`'s `scale` example does: the corpus
//! (default: the sample compiled in) is cut into chapters of about `--chapter-bytes` and
//! fingerprinted, and every stored chapter is a variant of one of them
//! (`matcher::quality::synthetic_variant`: the same number of fingerprints of every kind at
//! the same positions, hashes of its own but for the phrasing several real chapters share).
//! Their bodies are a short placeholder: the load reads fingerprints and postings only.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use fingerprint::Fingerprinter;
use matcher::quality::{Corpus, common_hashes, fingerprint_all, synthetic_variant};
use serde::Serialize;
use store::{
    NewChapter, NewWork, Page, SourceFormat, Store, StoreSettings, WorkFilter, WorkReads,
    WorkWrites,
};

use super::outln;
use settings::Settings;

/// Options of `bench load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Chapters the store holds when the load is timed (it is filled up to this).
    #[arg(long, default_value_t = 100_000)]
    chapters: usize,
    /// The SQLite file to fill and load from (created; kept, so later runs only top it up).
    #[arg(long, default_value = "data/bench-load.db")]
    db: PathBuf,
    /// Novels the synthetic chapters are variants of (as `bench quality --corpus`). Default:
    /// the sample compiled in.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Novels are cut into chapters of about this many bytes.
    #[arg(long, default_value_t = 8192)]
    chapter_bytes: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Chapters per synthetic work (one transaction each).
const PER_WORK: usize = 1000;

#[derive(Debug, Serialize)]
struct LoadFigures {
    chapters_stored: usize,
    chapters_added: usize,
    fill_seconds: f64,
    chapters_loaded: usize,
    skipped: usize,
    load_seconds: f64,
    chapters_per_second: f64,
    /// Resident memory after the load (Linux; 0 elsewhere), MiB.
    rss_mib: f64,
    db_bytes: u64,
}

/// Runs the benchmark.
pub async fn run(args: LoadArgs, settings: &Settings) -> Result<()> {
    if let Some(dir) = args.db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let url = format!("sqlite://{}", args.db.display());
    let store = Store::open(&url, &StoreSettings::default())
        .await
        .with_context(|| format!("while opening {url}"))?;
    let result = bench(&args, settings, &store).await;
    store.close().await;
    let mut figures = result?;
    figures.db_bytes = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", args.db.display())).ok())
        .map(|m| m.len())
        .sum();
    if args.json {
        outln!("{}", serde_json::to_string(&figures)?);
    } else {
        outln!(
            "store: {} chapters ({} added in {:.1} s), {:.2} GB on disk",
            figures.chapters_stored,
            figures.chapters_added,
            figures.fill_seconds,
            figures.db_bytes as f64 / 1e9
        );
        outln!(
            "load: {} chapters ({} skipped) in {:.2} s: {:.0} chapters/s; resident memory {:.0} MiB",
            figures.chapters_loaded,
            figures.skipped,
            figures.load_seconds,
            figures.chapters_per_second,
            figures.rss_mib
        );
    }
    Ok(())
}

async fn bench(args: &LoadArgs, settings: &Settings, store: &Store) -> Result<LoadFigures> {
    let stored: usize = store
        .works(&WorkFilter::All, Page::all())
        .await?
        .iter()
        .map(|w| w.chapters as usize)
        .sum();
    let started = Instant::now();
    let added = if stored < args.chapters {
        fill(args, settings, store, stored).await?
    } else {
        0
    };
    let fill_seconds = started.elapsed().as_secs_f64();
    let fingerprinter = Arc::new(
        Fingerprinter::new(settings.fingerprint.clone())
            .context("while setting up the fingerprinter ([fingerprint] settings)")?,
    );
    let started = Instant::now();
    let (matcher, report) =
        pipeline::load_matcher(store, settings.matcher.clone(), fingerprinter).await?;
    let load_seconds = started.elapsed().as_secs_f64();
    let rss_mib = rss_mib();
    drop(matcher);
    Ok(LoadFigures {
        chapters_stored: stored + added,
        chapters_added: added,
        fill_seconds,
        chapters_loaded: report.chapters,
        skipped: report.skipped,
        load_seconds,
        chapters_per_second: report.chapters as f64 / load_seconds.max(1e-9),
        rss_mib,
        db_bytes: 0,
    })
}

/// Adds synthetic chapters after the `stored` ones up to `args.chapters`; returns how many.
async fn fill(args: &LoadArgs, settings: &Settings, store: &Store, stored: usize) -> Result<usize> {
    let corpus = match &args.corpus {
        Some(dir) => Corpus::load(dir, args.chapter_bytes)
            .with_context(|| format!("while reading the corpus {}", dir.display()))?,
        None => super::quality::sample_corpus(args.chapter_bytes),
    };
    let chapters: Vec<_> = corpus
        .registered
        .into_iter()
        .chain(corpus.held_out)
        .chain(corpus.foreign)
        .collect();
    if chapters.is_empty() {
        bail!("the corpus has no chapters");
    }
    let fingerprinter = Fingerprinter::new(settings.fingerprint.clone())
        .context("while setting up the fingerprinter ([fingerprint] settings)")?;
    let bases = fingerprint_all(&chapters, &fingerprinter, super::check::cores());
    let common = common_hashes(&bases);
    let mut next = stored;
    while next < args.chapters {
        let end = (next + PER_WORK).min(args.chapters);
        let new_chapters = (next..end)
            .map(|i| {
                // Variant numbers from 1: variant 0 would be the real chapter itself.
                let (variant, base) = (i / bases.len() + 1, i % bases.len());
                let fp = synthetic_variant(&bases[base], variant as u64, &common);
                NewChapter {
                    title: format!("synthetic chapter {i}"),
                    body: format!("synthetic variant {variant} of chapter {base}"),
                    fingerprint: import::to_stored(&fp),
                }
            })
            .collect();
        let work = NewWork {
            title: format!("synthetic chapters {next}..{end}"),
            author: None,
            content_hash: import::content_hash(&format!("bench load: chapters {next}..{end}")),
            source_name: None,
            source_format: SourceFormat::Txt,
            source_encoding: None,
            front_matter: String::new(),
            chapters: new_chapters,
        };
        store
            .insert_work(&work)
            .await
            .context("while storing synthetic chapters")?;
        next = end;
        if next % 50_000 < PER_WORK && !args.json {
            eprintln!("filled {next} of {} chapters", args.chapters);
        }
    }
    Ok(next - stored)
}

/// Resident set size of this process in MiB (Linux), or 0.
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
