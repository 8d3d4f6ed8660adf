//! Throughput of the per-document hot paths, measured on this machine: fingerprinting
//! (`bench fingerprint`, [`FingerprintBench`]) and HTML parsing and main-text extraction
//! (`bench extract`, [`extract`](fn@extract)).
//!
//! `bench fingerprint` fingerprints every `.txt` file under a directory (default: the
//! sample's registered novels) split into ~8 KB chapters, once per fingerprint kind and once
//! for the whole bundle, on N threads: documents and megabytes per second. Two rows are there
//! for comparison: `winnow_normalized` winnows text normalised beforehand (MB of normalised
//! text), and `jieba_cut` is jieba-rs's plain `cut` of the raw chapters, the yardstick the
//! SimHash figure is best read against on a machine whose speed varies.
//!
//! The kinds of work are measured in turn, a whole pass over the documents at a time, round
//! after round ([`measure_interleaved`]), so that a slow spell of a shared machine weighs on
//! all of them alike. A megabyte is 10^6 bytes of UTF-8 input.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use extract::{ExtractSettings, Extractor};
use fingerprint::{FingerprintSettings, Fingerprinter};
use serde::{Serialize, Serializer};

use crate::Progress;
use crate::samples::{PAGES, SAMPLE};

/// Throughput of one kind.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Throughput {
    /// Documents (pages) a second.
    pub docs_per_s: f64,
    /// Megabytes (10^6 bytes) of input a second.
    pub mb_per_s: f64,
}

/// Documents, bytes and time of some passes over the documents.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    docs: usize,
    bytes: usize,
    time: Duration,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.docs += other.docs;
        self.bytes += other.bytes;
        self.time += other.time;
    }

    fn throughput(&self) -> Throughput {
        let secs = self.time.as_secs_f64().max(1e-9);
        Throughput {
            docs_per_s: self.docs as f64 / secs,
            mb_per_s: self.bytes as f64 / 1e6 / secs,
        }
    }
}

/// Runs `work` once over every document of `docs` on `threads` threads.
fn pass(docs: &[String], threads: usize, work: &(dyn Fn(&str) + Sync)) -> Tally {
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    let (docs_done, bytes) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let (mut count, mut bytes) = (0usize, 0usize);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(doc) = docs.get(i) else { break };
                        work(doc);
                        count += 1;
                        bytes += doc.len();
                    }
                    (count, bytes)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .fold((0, 0), |(c, b), (c2, b2)| (c + c2, b + b2))
    });
    Tally {
        docs: docs_done,
        bytes,
        time: start.elapsed(),
    }
}

/// Work done on one document.
pub type Work<'a> = dyn Fn(&str) + Sync + 'a;

/// Documents and what to do with each.
pub type Job<'a> = (&'a [String], &'a Work<'a>);

/// Measures every job in turn, a whole pass over its documents at a time, round after round,
/// until each has run for at least `min_time` (and at least one pass). Interleaving means a
/// slow spell of a shared machine slows every job alike instead of whichever ran during it,
/// so the figures can be compared with one another. One figure per job, in order.
pub fn measure_interleaved(
    jobs: &[Job<'_>],
    threads: usize,
    min_time: Duration,
) -> Vec<Throughput> {
    let mut tallies = vec![Tally::default(); jobs.len()];
    loop {
        let mut ran = false;
        for ((docs, work), tally) in jobs.iter().zip(&mut tallies) {
            if tally.docs == 0 || tally.time < min_time {
                tally.add(pass(docs, threads, *work));
                ran = true;
            }
        }
        if !ran {
            return tallies.iter().map(Tally::throughput).collect();
        }
    }
}

/// Splits `text` into chapters of about `target` bytes, cutting only at line ends.
pub fn split_at_lines(text: &str, target: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        current.push_str(line);
        if current.len() >= target {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

fn collect_txt(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("reading directory {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            collect_txt(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "txt") {
            out.push(path);
        }
    }
    Ok(())
}

/// The `.txt` files under `input` (or the sample's registered novels) cut into chapters of
/// about `chapter_bytes`; a file that is not UTF-8 is skipped, saying so to `progress`.
fn load_documents(
    input: Option<&Path>,
    chapter_bytes: usize,
    progress: Progress<'_>,
) -> Result<Vec<String>> {
    let mut docs = Vec::new();
    match input {
        None => {
            for sample in SAMPLE.iter().filter(|s| s.registered) {
                docs.extend(split_at_lines(sample.text, chapter_bytes));
            }
        }
        Some(dir) => {
            let mut files = Vec::new();
            collect_txt(dir, &mut files)?;
            files.sort();
            if files.is_empty() {
                bail!("no .txt files under {}", dir.display());
            }
            for path in files {
                let bytes =
                    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
                match fingerprint::decode_utf8(&bytes) {
                    Ok(text) => docs.extend(split_at_lines(text, chapter_bytes)),
                    Err(e) => progress(&format!("skipping {}: {e}", path.display())),
                }
            }
        }
    }
    if docs.is_empty() {
        bail!("no text to fingerprint");
    }
    Ok(docs)
}

/// The kinds `bench fingerprint` measures: each fingerprint alone (normalisation included
/// unless the name says otherwise), the bundle, and jieba-rs's plain `cut` as a yardstick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `fingerprint::normalize_compact`.
    Normalize,
    /// The MinHash signature.
    MinHash,
    /// The SimHash.
    SimHash,
    /// Winnowing of the text.
    Winnow,
    /// Winnowing of text normalised beforehand (MB of normalised text).
    WinnowNormalized,
    /// Winnowing of the pinyin stream.
    PinyinWinnow,
    /// The longest sentences.
    Sentences,
    /// Pinyin DNA.
    Dna,
    /// The whole bundle, `Fingerprinter::fingerprint`.
    All,
    /// jieba-rs's `cut` alone, no fingerprint: the yardstick the SimHash figure is best read
    /// against on a machine whose speed varies.
    JiebaCut,
}

impl Kind {
    /// Every kind, in the order they are measured and printed.
    pub const ALL: [Kind; 10] = [
        Kind::Normalize,
        Kind::MinHash,
        Kind::SimHash,
        Kind::Winnow,
        Kind::WinnowNormalized,
        Kind::PinyinWinnow,
        Kind::Sentences,
        Kind::Dna,
        Kind::All,
        Kind::JiebaCut,
    ];

    /// Its name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Normalize => "normalize",
            Kind::MinHash => "minhash",
            Kind::SimHash => "simhash",
            Kind::Winnow => "winnow",
            Kind::WinnowNormalized => "winnow_normalized",
            Kind::PinyinWinnow => "pinyin_winnow",
            Kind::Sentences => "sentences",
            Kind::Dna => "dna",
            Kind::All => "all",
            Kind::JiebaCut => "jieba_cut",
        }
    }

    /// Whether the kind reads the normalised text (and counts its bytes) instead of the
    /// documents as they are.
    fn takes_normalized(self) -> bool {
        self == Kind::WinnowNormalized
    }

    fn run(self, fp: &Fingerprinter, text: &str) {
        let s = fp.settings();
        match self {
            Kind::Normalize => drop(black_box(fingerprint::normalize_compact(text))),
            Kind::MinHash => drop(black_box(fp.minhash(text))),
            Kind::SimHash => drop(black_box(fp.simhash(text))),
            Kind::Winnow => drop(black_box(fp.winnow(text))),
            Kind::WinnowNormalized => drop(black_box(fingerprint::winnow::winnow_text(
                text, s.winnow_k, s.winnow_w,
            ))),
            Kind::PinyinWinnow => drop(black_box(fp.pinyin_winnow(text))),
            Kind::Sentences => drop(black_box(fp.sentences(text))),
            Kind::Dna => drop(black_box(fp.dna(text))),
            Kind::All => drop(black_box(fp.fingerprint(text))),
            Kind::JiebaCut => drop(black_box(fingerprint::segment::jieba().cut(text, false))),
        }
    }
}

/// `bench fingerprint`: documents read and cut, ready to be measured.
#[derive(Debug)]
pub struct FingerprintBench {
    docs: Vec<String>,
    normalized: Vec<String>,
    fingerprinter: Fingerprinter,
}

/// What `bench fingerprint` measured.
#[derive(Debug, Clone, Serialize)]
pub struct FingerprintReport {
    /// Documents (chapters) measured.
    pub docs: usize,
    /// Their bytes.
    pub bytes: usize,
    /// Threads they were measured on.
    pub threads: usize,
    /// Each kind's throughput, in [`Kind::ALL`] order; a JSON object by name.
    #[serde(serialize_with = "kinds_object")]
    pub kinds: Vec<(Kind, Throughput)>,
}

/// The kinds as the JSON object `bench fingerprint --json` has always printed: a
/// `serde_json::Map`, whose key order (sorted, or as inserted when a dependency turns on
/// serde_json's `preserve_order`) is the one earlier runs printed.
fn kinds_object<S: Serializer>(kinds: &[(Kind, Throughput)], s: S) -> Result<S::Ok, S::Error> {
    let mut map = serde_json::Map::new();
    for (kind, t) in kinds {
        let value = serde_json::to_value(t).map_err(serde::ser::Error::custom)?;
        map.insert(kind.name().to_string(), value);
    }
    map.serialize(s)
}

impl FingerprintBench {
    /// Every `.txt` file under `input` (UTF-8, searched recursively; default: the sample's
    /// registered novels) cut at line ends into chapters of about `chapter_bytes`, and the
    /// fingerprinter of `settings`. A file that is not UTF-8 is skipped, saying so to
    /// `progress`.
    ///
    /// # Errors
    /// A directory or file that cannot be read, no text at all, or settings the
    /// fingerprinter refuses.
    pub fn new(
        input: Option<&Path>,
        chapter_bytes: usize,
        settings: &FingerprintSettings,
        progress: Progress<'_>,
    ) -> Result<Self> {
        let docs = load_documents(input, chapter_bytes.max(1), progress)?;
        let fingerprinter =
            Fingerprinter::new(settings.clone()).context("building the fingerprinter")?;
        let normalized = docs
            .iter()
            .map(|d| fingerprint::normalize_compact(d).text)
            .collect();
        Ok(FingerprintBench {
            docs,
            normalized,
            fingerprinter,
        })
    }

    /// Documents to fingerprint.
    pub fn docs(&self) -> usize {
        self.docs.len()
    }

    /// Their bytes.
    pub fn bytes(&self) -> usize {
        self.docs.iter().map(String::len).sum()
    }

    /// Measures every [`Kind`] on `threads` threads, in turn, until each has run for
    /// `min_time` (and over every document at least once).
    pub fn run(&self, threads: usize, min_time: Duration) -> FingerprintReport {
        let fp = &self.fingerprinter;
        let works: Vec<Box<Work<'_>>> = Kind::ALL
            .iter()
            .map(|&kind| Box::new(move |text: &str| kind.run(fp, text)) as Box<Work<'_>>)
            .collect();
        let jobs: Vec<Job<'_>> = Kind::ALL
            .iter()
            .zip(&works)
            .map(|(kind, work)| {
                let input: &[String] = if kind.takes_normalized() {
                    &self.normalized
                } else {
                    &self.docs
                };
                (input, work.as_ref())
            })
            .collect();
        let results = measure_interleaved(&jobs, threads, min_time);
        FingerprintReport {
            docs: self.docs(),
            bytes: self.bytes(),
            threads,
            kinds: Kind::ALL.into_iter().zip(results).collect(),
        }
    }
}

/// What `bench extract` measured.
#[derive(Debug, Clone, Serialize)]
pub struct ExtractReport {
    /// Pages.
    pub pages: usize,
    /// Their bytes once decoded.
    pub bytes: usize,
    /// Threads.
    pub threads: usize,
    /// `ingest::html::parse_document` alone.
    pub parse: Throughput,
    /// The crawler's whole extraction: parse, walk, score, links, page kind.
    pub extract: Throughput,
}

/// `bench extract`: parses, then extracts the main text of, every `.html`/`.htm` page under
/// `input` (any encoding, searched recursively; default: [`PAGES`]) with `settings`, on
/// `threads` threads, each until it has run `min_time`.
///
/// # Errors
/// A directory or page that cannot be read, no page at all, settings the extractor refuses.
pub fn extract(
    input: Option<&Path>,
    settings: &ExtractSettings,
    threads: usize,
    min_time: Duration,
) -> Result<ExtractReport> {
    let raw: Vec<Vec<u8>> = match input {
        None => PAGES.iter().map(|p| p.to_vec()).collect(),
        Some(dir) => {
            let mut files = Vec::new();
            detection::check::collect_pages(dir, &mut files)?;
            files.retain(|f| {
                f.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                    e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm")
                })
            });
            files.sort();
            files
                .iter()
                .map(|f| std::fs::read(f).with_context(|| format!("reading {}", f.display())))
                .collect::<Result<_>>()?
        }
    };
    if raw.is_empty() {
        bail!("no .html pages to extract");
    }
    let pages: Vec<String> = raw
        .iter()
        .map(|b| extract::charset::decode(b, None, None).text)
        .collect();
    let bytes: usize = pages.iter().map(String::len).sum();
    let extractor = Extractor::new(settings).context("building the extractor")?;
    let url = url::Url::parse("http://bench.invalid/book/1/1.html")?;
    let parse_page = |html: &str| {
        drop(black_box(ingest::html::parse_document(
            html,
            &settings.limits,
            None,
        )))
    };
    let extract_page = |html: &str| drop(black_box(extractor.extract(html, &url)));
    let jobs: [Job<'_>; 2] = [(&pages, &parse_page), (&pages, &extract_page)];
    let results = measure_interleaved(&jobs, threads, min_time);
    Ok(ExtractReport {
        pages: pages.len(),
        bytes,
        threads,
        parse: results[0],
        extract: results[1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapters_cut_at_line_ends_near_the_target() {
        let text = "aaaa\nbbbb\ncccc\ndd";
        assert_eq!(split_at_lines(text, 8), vec!["aaaa\nbbbb\n", "cccc\ndd"]);
        assert_eq!(split_at_lines("", 8), Vec::<String>::new());
    }

    #[test]
    fn sample_splits_into_about_eight_kilobyte_chapters() {
        let docs = load_documents(None, 8192, &|_| {}).unwrap();
        assert!(docs.len() > 30);
        let mean = docs.iter().map(String::len).sum::<usize>() / docs.len();
        // Every piece but the last of each file reaches the target.
        assert!((7000..10_000).contains(&mean), "mean chapter {mean} bytes");
        let files = SAMPLE.iter().filter(|s| s.registered).count();
        assert!(docs.iter().filter(|d| d.len() < 8192).count() <= files);
    }

    #[test]
    fn a_pass_does_every_document_once() {
        let docs: Vec<String> = (0..10).map(|i| "x".repeat(i + 1)).collect();
        let seen = AtomicUsize::new(0);
        let t = pass(&docs, 2, &|d: &str| {
            seen.fetch_add(d.len(), Ordering::Relaxed);
        });
        assert_eq!(seen.load(Ordering::Relaxed), 55);
        assert_eq!((t.docs, t.bytes), (10, 55));
    }

    #[test]
    fn interleaved_measuring_runs_every_job_for_its_time() {
        let a: Vec<String> = vec!["aaaa".into(); 3];
        let b: Vec<String> = vec!["b".into(); 5];
        let (runs_a, runs_b) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let work_a = |_: &str| {
            runs_a.fetch_add(1, Ordering::Relaxed);
        };
        let work_b = |_: &str| {
            runs_b.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(2));
        };
        let jobs: [Job<'_>; 2] = [(&a, &work_a), (&b, &work_b)];
        let results = measure_interleaved(&jobs, 1, Duration::from_millis(100));
        // Whole passes only, at least one each; the slow job ran until its time was up.
        let (ra, rb) = (
            runs_a.load(Ordering::Relaxed),
            runs_b.load(Ordering::Relaxed),
        );
        assert!(ra >= 3 && ra % 3 == 0, "{ra}");
        // At least two passes of b (one takes 10 ms of sleep, 100 ms are asked for: one pass
        // fills the time only if ten 2 ms sleeps overrun tenfold); no upper bound, a loaded
        // machine's sleeps overrun.
        assert!(rb >= 10 && rb % 5 == 0, "{rb}");
        // b does at most 500 documents a second (2 ms each).
        assert!(results[1].docs_per_s <= 500.0, "{:?}", results[1]);
        assert!(results[0].mb_per_s > results[1].mb_per_s);
        // With no minimum time, exactly one pass each.
        runs_a.store(0, Ordering::Relaxed);
        measure_interleaved(&jobs, 1, Duration::ZERO);
        assert_eq!(runs_a.load(Ordering::Relaxed), 3);
    }
}
