//! `bench index`: the matcher's in-memory index at scale — its bytes a chapter, the time the
//! store loader takes to build it, page latency and recall against it.
//!
//! The corpus (default: the sample compiled in) is cut into chapters and fingerprinted; its
//! registered chapters are indexed under their own ids, and the index is filled up to the
//! number of chapters asked for with synthetic variants of them ([`synthetic_variant`]: the
//! same number of fingerprints of every kind, hashes of their own but for the phrasing several
//! real chapters share; a few microseconds each, so a million are made in seconds).
//!
//! **Load** runs [`detection::load_matcher`], the start-up load of `check` and the workers, over
//! an in-memory [`IndexLoads`] that hands out the synthetic chapters' stored form (summary
//! bytes and postings, as the store returns them) a page at a time. The time it spends making
//! those pages is subtracted, so `load_s_store` is the loader's decoding, adding and building,
//! without the database query and the store's unpacking of the postings blob (`bench load`
//! times those too, from SQLite, at sizes a store can be filled to in a bench).
//!
//! **Bytes** are the heap the built index holds, part by part ([`matcher::MemoryUsage`],
//! allocated capacities; `examples/scale.rs index` checks the sum against a counting
//! allocator).
//!
//! **Pages** are the pirate pages of [`crate::pirate`] made from the registered chapters (every
//! evasion and the negatives). Each is checked `repeat` times on one thread and its fastest
//! run kept (other processes of a shared machine otherwise make the tail); then all of them
//! are checked on `threads` threads for recall (over evasion pages) and precision.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fingerprint::{ChapterFingerprint, Fingerprinter};
use matcher::{ChapterId, MemorySource, WorkId};
use serde::Serialize;
use store::{IndexEntry, IndexLoads, Page};

use crate::pirate_pages;
use crate::quality::{evaluate, fingerprint_all};
use crate::synthetic::{SYNTHETIC_STRIDE, SyntheticSource, common_hashes, synthetic_variant};
use crate::{Progress, Sections};

/// Options of `bench index`.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Chapters in the index: the registered chapters of the corpus, then synthetic variants.
    pub chapters: usize,
    /// Novels (`None`: the sample compiled in).
    pub corpus: Option<PathBuf>,
    /// Novels are cut into chapters of about this many bytes.
    pub chapter_bytes: usize,
    /// Pirate pages per case.
    pub pages_per_case: usize,
    /// Seed of the page generator.
    pub seed: u64,
    /// Runs of each page for the latency; the fastest is kept.
    pub repeat: usize,
    /// Threads that fingerprint the corpus and check the pages for recall.
    pub threads: usize,
}

/// Bytes a chapter of each part of the index.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PartBytes {
    /// Per-chapter metadata and the id map.
    pub chapters: f64,
    /// SimHash permuted tables.
    pub simhash: f64,
    /// MinHash LSH buckets.
    pub lsh: f64,
    /// The map of longest sentences.
    pub sentences: f64,
    /// Text winnowing postings.
    pub text: f64,
    /// Pinyin winnowing postings.
    pub pinyin: f64,
}

/// What `bench index` measured.
#[derive(Debug, Clone, Serialize)]
pub struct IndexFigures {
    /// Chapters in the index.
    pub chapters: usize,
    /// Heap bytes the index holds, a chapter.
    pub bytes_per_chapter: f64,
    /// The same, part by part.
    pub parts: PartBytes,
    /// Postings a chapter in the text and pinyin tables (what most of the bytes are).
    pub postings_per_chapter: f64,
    /// Seconds the store loader took to decode the stored fingerprints and build the index
    /// (see the [module docs](self): no database query).
    pub load_s_store: f64,
    /// Seconds a worker takes to load the same index from its snapshot file
    /// (`detection::snapshot::read_newest`: the file read, its SHA-256 checked, the tables
    /// copied out), the file just written (so in the page cache).
    pub load_s_snapshot: f64,
    /// Bytes of the snapshot file.
    pub snapshot_bytes: u64,
    /// Pages checked.
    pub pages: usize,
    /// 99th percentile of a page's check on one thread (fastest of `repeat` runs), ms.
    pub page_p99_ms: f64,
    /// Median of the same, ms.
    pub page_p50_ms: f64,
    /// Share of evasion pages whose copied chapter was reported.
    pub recall: f64,
    /// Share of reported matches that are right, over all pages.
    pub precision: f64,
}

/// Builds the index of `options.chapters` chapters with the store loader, then measures it.
///
/// # Errors
/// Settings refused, a corpus that cannot be read or has no registered chapter, fewer
/// chapters asked for than the corpus registers, a failed check.
pub async fn run(
    options: &IndexOptions,
    sections: &Sections<'_>,
    progress: Progress<'_>,
) -> Result<IndexFigures> {
    let corpus = crate::samples::corpus(options.corpus.as_deref(), options.chapter_bytes)?;
    if corpus.registered.is_empty() {
        bail!("the corpus has no registered chapter");
    }
    if options.chapters < corpus.registered.len() {
        bail!(
            "--chapters {} is fewer than the {} registered chapters of the corpus",
            options.chapters,
            corpus.registered.len()
        );
    }
    let fingerprinter = Arc::new(
        Fingerprinter::new(sections.fingerprint.clone())
            .context("while setting up the fingerprinter ([fingerprint] settings)")?,
    );
    let bases = fingerprint_all(&corpus.registered, &fingerprinter, options.threads);
    let real: Vec<(ChapterId, WorkId)> = corpus.registered.iter().map(|c| (c.id, c.work)).collect();
    let source = SyntheticChapters::new(real, bases, options.chapters)?;
    progress(&format!(
        "{} real chapters fingerprinted; loading {} chapters",
        source.bases.len(),
        options.chapters
    ));

    let started = Instant::now();
    let (mut matcher, report) =
        detection::load_matcher(&source, sections.matcher.clone(), fingerprinter)
            .await
            .map_err(|e| anyhow::anyhow!("{}", jobs::chain(&e)))?;
    let load = started.elapsed().saturating_sub(source.synthesis());
    if report.skipped > 0 || report.chapters != options.chapters {
        bail!(
            "the loader indexed {} of {} chapters ({} skipped)",
            report.chapters,
            options.chapters,
            report.skipped
        );
    }
    let stats = matcher.index().stats();
    let m = stats.memory;
    let per = |b: usize| b as f64 / stats.chapters as f64;
    progress(&format!(
        "loaded in {:.1} s; {:.0} bytes a chapter",
        load.as_secs_f64(),
        per(m.total())
    ));

    let (load_snapshot, snapshot_bytes) = load_from_snapshot(&mut matcher).await?;
    progress(&format!(
        "{snapshot_bytes} bytes of snapshot loaded in {:.2} s",
        load_snapshot.as_secs_f64()
    ));

    let mut texts = MemorySource::new();
    for c in &corpus.registered {
        texts.insert(c.id, c.text.clone());
    }
    let texts = SyntheticSource { bases: texts };
    let pages = pirate_pages(&corpus, options.pages_per_case, options.seed);
    let mut times = Vec::with_capacity(pages.len());
    for p in &pages {
        let mut best = Duration::MAX;
        for _ in 0..options.repeat.max(1) {
            let t = Instant::now();
            std::hint::black_box(matcher.check(&p.text, &texts)?);
            best = best.min(t.elapsed());
        }
        times.push(best);
    }
    times.sort_unstable();
    let quality = evaluate(&matcher, &texts, &pages, options.threads)?;
    Ok(IndexFigures {
        chapters: stats.chapters,
        bytes_per_chapter: per(m.total()),
        parts: PartBytes {
            chapters: per(m.chapters),
            simhash: per(m.simhash),
            lsh: per(m.lsh),
            sentences: per(m.sentences),
            text: per(m.text),
            pinyin: per(m.pinyin),
        },
        postings_per_chapter: per(stats.text_postings + stats.pinyin_postings),
        load_s_store: load.as_secs_f64(),
        load_s_snapshot: load_snapshot.as_secs_f64(),
        snapshot_bytes,
        pages: pages.len(),
        page_p99_ms: millis(quantile(&times, 0.99)),
        page_p50_ms: millis(quantile(&times, 0.5)),
        recall: quality.evasions().recall(),
        precision: quality.all().precision(),
    })
}

/// Writes the index as a snapshot file and times how long a worker takes to load it;
/// checks that the loaded index holds the same chapters and postings.
async fn load_from_snapshot(matcher: &mut matcher::Matcher) -> Result<(Duration, u64)> {
    let dir = tempfile::tempdir().context("while creating a folder for the snapshot")?;
    let bytes = matcher.index_mut().to_snapshot(0);
    let size = bytes.len() as u64;
    std::fs::write(dir.path().join("index-0.snap"), &bytes)
        .context("while writing the snapshot")?;
    drop(bytes);
    let place = detection::SnapshotPlace::Path(dir.path().to_owned());
    let started = Instant::now();
    let loaded = detection::snapshot::read_newest(&place, matcher.index().settings())
        .await
        .map_err(|e| anyhow::anyhow!("{}", jobs::chain(&e)))?
        .context("the snapshot just written is not there")?;
    let took = started.elapsed();
    let (a, b) = (matcher.index().stats(), loaded.index.stats());
    let counts = |s: &matcher::IndexStats| {
        (
            s.chapters,
            s.lsh_postings,
            s.sentence_postings,
            s.text_postings,
            s.pinyin_postings,
        )
    };
    if counts(&a) != counts(&b) {
        bail!("the index read from its snapshot differs: {b:?} against {a:?}");
    }
    Ok((took, size))
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The `q`-quantile (0..=1) of sorted durations (zero when there are none).
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The stored form of the corpus's registered chapters and of their synthetic variants, made
/// on demand, as an [`IndexLoads`] store. Chapter `i` (from 0) is variant `i / bases` of base
/// `i % bases` (bases by ascending id), with id `variant · SYNTHETIC_STRIDE + base id` (the
/// base's own id for variant 0) and the base's work, so ids ascend with `i`.
struct SyntheticChapters {
    /// Real chapters by ascending id, and their fingerprints.
    ids: Vec<(ChapterId, WorkId)>,
    bases: Vec<ChapterFingerprint>,
    common: std::collections::HashSet<u64>,
    chapters: usize,
    /// Time spent making entries, which the load's timing leaves out.
    synthesis: Mutex<Duration>,
}

impl SyntheticChapters {
    fn new(
        real: Vec<(ChapterId, WorkId)>,
        bases: Vec<ChapterFingerprint>,
        chapters: usize,
    ) -> Result<Self> {
        let mut both: Vec<_> = real.into_iter().zip(bases).collect();
        both.sort_unstable_by_key(|((id, _), _)| *id);
        if both
            .iter()
            .any(|((id, _), _)| !(0..SYNTHETIC_STRIDE).contains(&id.0))
        {
            bail!("corpus chapter ids must lie in 0..2^32");
        }
        let (ids, bases): (Vec<_>, Vec<_>) = both.into_iter().unzip();
        let common = common_hashes(&bases);
        Ok(SyntheticChapters {
            ids,
            bases,
            common,
            chapters,
            synthesis: Mutex::new(Duration::ZERO),
        })
    }

    fn synthesis(&self) -> Duration {
        *self.synthesis.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The position of the first chapter whose id is above `after`.
    fn position_after(&self, after: Option<store::ChapterId>) -> usize {
        let Some(after) = after else { return 0 };
        let (variant, base) = (
            after.0.div_euclid(SYNTHETIC_STRIDE),
            after.0.rem_euclid(SYNTHETIC_STRIDE),
        );
        if variant < 0 {
            return 0;
        }
        let within = self.ids.partition_point(|(id, _)| id.0 <= base);
        (variant as usize)
            .saturating_mul(self.ids.len())
            .saturating_add(within)
            .min(self.chapters)
    }

    /// The stored entry of chapter `i`.
    fn entry(&self, i: usize) -> IndexEntry {
        let (variant, base) = (i / self.bases.len(), i % self.bases.len());
        let (id, work) = self.ids[base];
        let made;
        let fp = if variant == 0 {
            &self.bases[base]
        } else {
            made = synthetic_variant(&self.bases[base], variant as u64, &self.common);
            &made
        };
        // Stored as the importer stores a chapter's fingerprint.
        let stored = import::to_stored(fp);
        IndexEntry {
            chapter_id: store::ChapterId(variant as i64 * SYNTHETIC_STRIDE + id.0),
            work_id: store::WorkId(work.0),
            normalizer_version: stored.normalizer_version,
            summary: stored.summary,
            text_winnow: stored.text_winnow,
            pinyin_winnow: stored.pinyin_winnow,
        }
    }

    fn timed<T>(&self, make: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = make();
        *self.synthesis.lock().unwrap_or_else(|e| e.into_inner()) += t.elapsed();
        out
    }
}

impl IndexLoads for SyntheticChapters {
    async fn index_entries(&self, page: Page<store::ChapterId>) -> store::Result<Vec<IndexEntry>> {
        Ok(self.timed(|| {
            let start = self.position_after(page.after);
            let limit = page.limit.map_or(usize::MAX, |l| l as usize);
            let end = start.saturating_add(limit).min(self.chapters);
            (start..end).map(|i| self.entry(i)).collect()
        }))
    }

    async fn work_index_entries(&self, work: store::WorkId) -> store::Result<Vec<IndexEntry>> {
        Ok(self.timed(|| {
            (0..self.chapters)
                .filter(|&i| self.ids[i % self.ids.len()].1.0 == work.0)
                .map(|i| self.entry(i))
                .collect()
        }))
    }

    async fn index_size(&self) -> store::Result<u64> {
        Ok(self.chapters as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprints(n: usize) -> Vec<ChapterFingerprint> {
        let f = Fingerprinter::new(fingerprint::FingerprintSettings::default()).unwrap();
        (0..n)
            .map(|i| f.fingerprint(&format!("第{i}章。话说天下大势，分久必合，合久必分。")))
            .collect()
    }

    #[test]
    fn pages_of_synthetic_chapters_ascend_and_resume_after_any_id() {
        let real = vec![
            (ChapterId(7), WorkId(1)),
            (ChapterId(3), WorkId(1)),
            (ChapterId(5), WorkId(2)),
        ];
        let source = SyntheticChapters::new(real, fingerprints(3), 8).unwrap();
        let all: Vec<i64> = (0..8).map(|i| source.entry(i).chapter_id.0).collect();
        let s = SYNTHETIC_STRIDE;
        assert_eq!(
            all,
            vec![3, 5, 7, s + 3, s + 5, s + 7, 2 * s + 3, 2 * s + 5]
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut after = None;
        let mut read = Vec::new();
        loop {
            let page = rt
                .block_on(source.index_entries(Page {
                    after,
                    limit: Some(3),
                }))
                .unwrap();
            read.extend(page.iter().map(|e| e.chapter_id.0));
            after = page.last().map(|e| e.chapter_id);
            if page.len() < 3 {
                break;
            }
        }
        assert_eq!(read, all);
        // After an id between two chapters, and after the last one.
        assert_eq!(source.position_after(Some(store::ChapterId(4))), 1);
        assert_eq!(source.position_after(Some(store::ChapterId(s + 6))), 5);
        assert_eq!(source.position_after(Some(store::ChapterId(3 * s))), 8);
        let work2: Vec<i64> = rt
            .block_on(source.work_index_entries(store::WorkId(2)))
            .unwrap()
            .iter()
            .map(|e| e.chapter_id.0)
            .collect();
        assert_eq!(work2, vec![5, s + 5, 2 * s + 5]);
        assert!(source.synthesis() > Duration::ZERO);
    }
}
