//! `bench match`: the throughput of `check`'s pipeline over pages on disk, against the works
//! registered in a store: reading, decoding, extraction, candidates, chapter reads from the
//! store, verification, some pages at once.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use detection::{Checker, LoadReport, load_matcher};
use extract::ExtractSettings;
use fingerprint::{FingerprintSettings, Fingerprinter};
use matcher::{Matcher, MatcherSettings};
use serde::Serialize;
use store::Store;

use crate::{Progress, Sections};

/// The index over every chapter registered in `store`, as `check` and the workers load it,
/// and what the load counted.
///
/// # Errors
/// Settings the fingerprinter refuses, a store failure.
pub async fn load_index(
    store: &Store,
    fingerprint: &FingerprintSettings,
    matcher: &MatcherSettings,
) -> Result<(Matcher, LoadReport)> {
    let fingerprinter = Fingerprinter::new(fingerprint.clone())
        .context("while setting up the fingerprinter ([fingerprint] settings)")?;
    load_matcher(store, matcher.clone(), Arc::new(fingerprinter))
        .await
        .map_err(|e| anyhow::anyhow!("{}", jobs::chain(&e)))
}

/// Says to `progress` how many chapters a load left out, if any.
pub(crate) fn warn_skipped(loaded: &LoadReport, progress: Progress<'_>) {
    if loaded.skipped > 0 {
        progress(&format!(
            "warning: {} chapters left out of the index (fingerprinted by another version: \
             delete and re-import their works)",
            loaded.skipped
        ));
    }
}

/// A checker of local pages: default fetch settings (nothing is fetched), the configured
/// extraction.
///
/// # Errors
/// Settings the extractor refuses.
pub fn checker(matcher: Arc<Matcher>, store: &Store, extract: &ExtractSettings) -> Result<Checker> {
    Ok(Checker::new(
        matcher,
        store.clone(),
        crawler::FetchSettings::default(),
        extract.clone(),
    )?)
}

/// What `bench match` measured.
#[derive(Debug, Clone, Serialize)]
pub struct MatchReport {
    /// Chapters in the index.
    pub chapters_indexed: usize,
    /// Seconds the index took to load.
    pub load_seconds: f64,
    /// Pages checked.
    pub pages: usize,
    /// Bytes of their main text.
    pub main_text_bytes: usize,
    /// Matches reported.
    pub matches: usize,
    /// Seconds the checks took.
    pub seconds: f64,
    /// Pages checked at once.
    pub jobs: usize,
    /// Pages a second.
    pub pages_per_second: f64,
    /// Megabytes (10^6 bytes) of main text a second.
    pub mb_per_second: f64,
}

/// Loads the index from `store`, then times `check`'s pipeline over `inputs` (files, as
/// `detection::check::expand_inputs` lists them), `jobs` pages at once, with `sections`.
///
/// # Errors
/// A page that cannot be read, settings refused, a store failure.
pub async fn run(
    store: &Store,
    inputs: Vec<String>,
    jobs: usize,
    sections: &Sections<'_>,
    progress: Progress<'_>,
) -> Result<MatchReport> {
    let started = Instant::now();
    let (matcher, loaded) = load_index(store, sections.fingerprint, sections.matcher).await?;
    warn_skipped(&loaded, progress);
    let matcher = Arc::new(matcher);
    let load_seconds = started.elapsed().as_secs_f64();
    let chapters_indexed = matcher.index().len();
    let checker = checker(matcher, store, &sections.crawler.extract)?;
    let (pages, mut bytes, mut matches) = (inputs.len(), 0, 0);
    let started = Instant::now();
    checker
        .run::<anyhow::Error>(inputs, jobs, async |input, checked| {
            let checked = checked.with_context(|| format!("while reading {input}"))?;
            bytes += checked.text.len();
            matches += checked.matches.len();
            Ok(())
        })
        .await?;
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    Ok(MatchReport {
        chapters_indexed,
        load_seconds,
        pages,
        main_text_bytes: bytes,
        matches,
        seconds,
        jobs,
        pages_per_second: pages as f64 / seconds,
        mb_per_second: bytes as f64 / 1e6 / seconds,
    })
}
