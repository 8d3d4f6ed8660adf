//! `bench load`: the matcher's start-up load from a real store at scale.
//!
//! Fills a SQLite store (kept between runs so a large one is filled once) up to a number of
//! chapters, then times `detection::load_matcher` — the load `check` and the workers do —
//! from it. The chapters are synthesised as `examples/scale.rs` does: the corpus (default:
//! the sample compiled in) is cut into chapters and fingerprinted, and every stored chapter
//! is a variant of one of them ([`synthetic_variant`]: the same number of fingerprints of
//! every kind at the same positions, hashes of its own but for the phrasing several real
//! chapters share). Their bodies are a short placeholder: the load reads fingerprints and
//! postings only.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use fingerprint::Fingerprinter;
use serde::Serialize;
use store::{
    NewChapter, NewWork, Page, SourceFormat, Store, StoreSettings, WorkFilter, WorkReads,
    WorkWrites,
};

use crate::matching::load_index;
use crate::quality::fingerprint_all;
use crate::synthetic::{common_hashes, synthetic_variant};
use crate::{Progress, Sections};

/// Options of `bench load`.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Chapters the store holds when the load is timed (it is filled up to this).
    pub chapters: usize,
    /// The SQLite file to fill and load from (created; kept, so later runs only top it up).
    pub db: PathBuf,
    /// Novels the synthetic chapters are variants of (`None`: the sample compiled in).
    pub corpus: Option<PathBuf>,
    /// Novels are cut into chapters of about this many bytes.
    pub chapter_bytes: usize,
    /// Threads that fingerprint the corpus.
    pub threads: usize,
}

/// Chapters per synthetic work (one transaction each).
const PER_WORK: usize = 1000;

/// What `bench load` measured.
#[derive(Debug, Clone, Serialize)]
pub struct LoadFigures {
    /// Chapters in the store.
    pub chapters_stored: usize,
    /// Chapters this run added.
    pub chapters_added: usize,
    /// Seconds the adding took.
    pub fill_seconds: f64,
    /// Chapters the load put in the index.
    pub chapters_loaded: usize,
    /// Chapters the load left out (another fingerprint version).
    pub skipped: usize,
    /// Seconds the load took.
    pub load_seconds: f64,
    /// Chapters loaded a second.
    pub chapters_per_second: f64,
    /// Resident memory after the load (Linux; 0 elsewhere), MiB.
    pub rss_mib: f64,
    /// The store's size on disk (the file and its write-ahead log), bytes.
    pub db_bytes: u64,
}

/// Fills `options.db` up to `options.chapters` chapters, then times the load with
/// `sections`; progress of a long fill goes to `progress`.
///
/// # Errors
/// A store that cannot be created or opened, a corpus that cannot be read or is empty,
/// settings refused.
pub async fn run(
    options: &LoadOptions,
    sections: &Sections<'_>,
    progress: Progress<'_>,
) -> Result<LoadFigures> {
    if let Some(dir) = options.db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let url = format!("sqlite://{}", options.db.display());
    let store = Store::open(&url, &StoreSettings::default())
        .await
        .with_context(|| format!("while opening {url}"))?;
    let result = fill_and_load(options, sections, &store, progress).await;
    store.close().await;
    let mut figures = result?;
    figures.db_bytes = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", options.db.display())).ok())
        .map(|m| m.len())
        .sum();
    Ok(figures)
}

async fn fill_and_load(
    options: &LoadOptions,
    sections: &Sections<'_>,
    store: &Store,
    progress: Progress<'_>,
) -> Result<LoadFigures> {
    let stored: usize = store
        .works(&WorkFilter::All, Page::all())
        .await?
        .iter()
        .map(|w| w.chapters as usize)
        .sum();
    let started = Instant::now();
    let added = if stored < options.chapters {
        fill(options, sections, store, stored, progress).await?
    } else {
        0
    };
    let fill_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let (matcher, report) = load_index(store, sections.fingerprint, sections.matcher).await?;
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

/// Adds synthetic chapters after the `stored` ones up to `options.chapters`; returns how
/// many.
async fn fill(
    options: &LoadOptions,
    sections: &Sections<'_>,
    store: &Store,
    stored: usize,
    progress: Progress<'_>,
) -> Result<usize> {
    let corpus = crate::samples::corpus(options.corpus.as_deref(), options.chapter_bytes)?;
    let chapters: Vec<_> = corpus
        .registered
        .into_iter()
        .chain(corpus.held_out)
        .chain(corpus.foreign)
        .collect();
    if chapters.is_empty() {
        bail!("the corpus has no chapters");
    }
    let fingerprinter = Fingerprinter::new(sections.fingerprint.clone())
        .context("while setting up the fingerprinter ([fingerprint] settings)")?;
    let bases = fingerprint_all(&chapters, &fingerprinter, options.threads);
    let common = common_hashes(&bases);
    let mut next = stored;
    while next < options.chapters {
        let end = (next + PER_WORK).min(options.chapters);
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
        if next % 50_000 < PER_WORK {
            progress(&format!("filled {next} of {} chapters", options.chapters));
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
