//! `copyhound bench ...`: throughput figures of the hot paths, measured on this machine.
//!
//! `bench fingerprint` fingerprints every `.txt` file under a directory (default: the
//! public-domain sample compiled into the binary) split into ~8 KB chapters, once per
//! fingerprint kind and once for the whole bundle, on N threads, and prints documents and
//! megabytes (10^6 bytes of UTF-8 input) per second. The kinds are measured in turn, a pass
//! over the corpus at a time, so that a slow spell of a shared machine weighs on all of them.
//! Two rows are there for comparison: `winnow_normalized` winnows text normalised beforehand
//! (the "winnowing over the normalised text"; MB of normalised text), and
//! `jieba_cut` is jieba-rs's plain `cut` of the raw chapters, the yardstick the SimHash
//! figure is best read against on a machine whose speed varies.
//!
//! `bench match --input DIR` loads the index from `--database`, then times `check`'s pipeline
//! over every `.txt` and `.html` page under DIR (reading, decoding, extraction, candidates,
//! chapter reads from the store, verification; `--jobs` pages at once) and prints pages and
//! megabytes of main text a second.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use fingerprint::Fingerprinter;
use serde::Serialize;

use super::outln;
use settings::Settings;

/// What to measure.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Fingerprint throughput per kind and for the whole bundle.
    Fingerprint(FingerprintArgs),
    /// `check` throughput over a directory of pages, against the registered works.
    Match(MatchArgs),
    /// Recall and precision of `check` over generated pirate pages (every evasion, HTML in
    /// several layouts and encodings) and negatives, against works registered in a fresh
    /// store.
    Quality(super::quality::QualityArgs),
    /// The whole pipeline over HTTP: the quality benchmark's pages served on 127.0.0.1,
    /// crawled with no delay, matched and recorded in a fresh store; pages per second and
    /// detection.
    Pipeline(super::bench_pipeline::PipelineArgs),
    /// The matcher's start-up load from a SQLite store filled with synthetic chapters.
    Load(super::bench_load::LoadArgs),
    /// Parsing and main-text extraction of HTML pages (the crawler's per-page work after
    /// decoding), bounded by `[crawler.extract.limits]`.
    Extract(ExtractArgs),
}

/// Options of `bench extract`.
#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// Directory of HTML pages (`.html`, `.htm`; any encoding), searched recursively. Default:
    /// the real novel-site pages kept with the crawler's tests. `bench quality --out DIR`
    /// leaves thousands of pirate pages in `DIR/pages`.
    #[arg(long)]
    input: Option<PathBuf>,
    #[command(flatten)]
    measure: MeasureArgs,
}

/// How a throughput bench measures and prints.
#[derive(Debug, Args)]
pub struct MeasureArgs {
    /// Worker threads.
    #[arg(long, default_value_t = 1, value_parser = super::parse_count)]
    threads: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Minimum measuring time per kind, in seconds (every input is processed at least once).
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
}

impl MeasureArgs {
    /// Threads, JSON and seconds, once a time no measurement can use is refused (clap
    /// refuses 0 threads).
    fn checked(&self) -> Result<(usize, bool, f64)> {
        if !(self.seconds.is_finite() && self.seconds >= 0.0) {
            bail!(
                "--seconds must be a non-negative number, got {}",
                self.seconds
            );
        }
        Ok((self.threads, self.json, self.seconds))
    }
}

/// Real pages of novel sites (see the crawler's `tests/data/README.md`).
const SAMPLE_PAGES: &[&[u8]] = &[
    include_bytes!("../../../crawler/tests/data/html/biquge_info_book_toc.html"),
    include_bytes!("../../../crawler/tests/data/html/69shuba_cloudflare_challenge.html"),
    include_bytes!("../../../crawler/tests/data/html/biquge_info_js_redirect_stub.html"),
];

/// Options of `bench match`.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Directory of pages (`.txt`, `.html`, `.htm`; any encoding), searched recursively.
    #[arg(long)]
    input: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Pages checked at once; default: twice the number of cores.
    #[arg(long, value_parser = super::parse_count)]
    jobs: Option<usize>,
}

/// Options of `bench fingerprint`.
#[derive(Debug, Args)]
pub struct FingerprintArgs {
    /// Directory of `.txt` files (UTF-8), searched recursively. Default: the built-in
    /// public-domain sample (三国演义, 西游记, 红楼梦 in traditional script, Alice).
    #[arg(long)]
    input: Option<PathBuf>,
    #[command(flatten)]
    measure: MeasureArgs,
    /// Target chapter size in bytes (files are cut at line ends once a chapter reaches it).
    #[arg(long, default_value_t = 8192)]
    chapter_bytes: usize,
}

/// The built-in sample: small public-domain excerpts kept in the repository.
const SAMPLE: &[(&str, &str)] = &[
    (
        "sanguoyanyi_1-10.txt",
        include_str!("../../../fingerprint/tests/data/sanguoyanyi_1-10.txt"),
    ),
    (
        "xiyouji_1-4.txt",
        include_str!("../../../fingerprint/tests/data/xiyouji_1-4.txt"),
    ),
    (
        "hongloumeng_hant_1-2.txt",
        include_str!("../../../fingerprint/tests/data/hongloumeng_hant_1-2.txt"),
    ),
    (
        "alice_1-3.txt",
        include_str!("../../../fingerprint/tests/data/alice_1-3.txt"),
    ),
];

pub fn run(command: BenchCommand, database: &str, settings: &Settings) -> Result<()> {
    match command {
        BenchCommand::Fingerprint(args) => fingerprint(args, settings),
        BenchCommand::Match(args) => {
            tokio::runtime::Runtime::new()?.block_on(match_pages(args, database, settings))
        }
        BenchCommand::Load(args) => {
            tokio::runtime::Runtime::new()?.block_on(super::bench_load::run(args, settings))
        }
        BenchCommand::Quality(args) => {
            tokio::runtime::Runtime::new()?.block_on(super::quality::run(args, settings))
        }
        BenchCommand::Pipeline(args) => {
            tokio::runtime::Runtime::new()?.block_on(super::bench_pipeline::run(args, settings))
        }
        BenchCommand::Extract(args) => extract(args, settings),
    }
}

/// What `bench extract` measured.
#[derive(Debug, Serialize)]
struct ExtractFigures {
    pages: usize,
    bytes: usize,
    threads: usize,
    /// `ingest::html::parse_document` alone.
    parse: Throughput,
    /// The crawler's whole extraction: parse, walk, score, links, page kind.
    extract: Throughput,
}

fn extract(args: ExtractArgs, settings: &Settings) -> Result<()> {
    let (threads, json, seconds) = args.measure.checked()?;
    let raw: Vec<Vec<u8>> = match &args.input {
        None => SAMPLE_PAGES.iter().map(|p| p.to_vec()).collect(),
        Some(dir) => {
            let mut files = Vec::new();
            pipeline::check::collect_pages(dir, &mut files)?;
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
        .map(|b| crawler::charset::decode(b, None, None).text)
        .collect();
    let bytes: usize = pages.iter().map(String::len).sum();
    let extract = &settings.crawler.extract;
    let extractor = crawler::extract::Extractor::new(extract).context("building the extractor")?;
    let url = url::Url::parse("http://bench.invalid/book/1/1.html")?;
    let parse_page = |html: &str| {
        drop(black_box(ingest::html::parse_document(
            html,
            &extract.limits,
            None,
        )))
    };
    let extract_page = |html: &str| drop(black_box(extractor.extract(html, &url)));
    let jobs: [Job<'_>; 2] = [(&pages, &parse_page), (&pages, &extract_page)];
    let results = measure_interleaved(&jobs, threads, Duration::from_secs_f64(seconds));
    let figures = ExtractFigures {
        pages: pages.len(),
        bytes,
        threads,
        parse: results[0],
        extract: results[1],
    };
    if json {
        outln!("{}", serde_json::to_string(&figures)?);
        return Ok(());
    }
    outln!(
        "extracting {} pages, {:.1} MB decoded, on {} thread(s)",
        figures.pages,
        bytes as f64 / 1e6,
        threads
    );
    outln!("{:<18} {:>10} {:>10}", "kind", "pages/s", "MB/s");
    for (kind, t) in [("parse", figures.parse), ("extract", figures.extract)] {
        outln!("{:<18} {:>10.0} {:>10.1}", kind, t.docs_per_s, t.mb_per_s);
    }
    Ok(())
}

/// What `bench match` measured.
#[derive(Debug, Serialize)]
struct MatchFigures {
    chapters_indexed: usize,
    load_seconds: f64,
    pages: usize,
    main_text_bytes: usize,
    matches: usize,
    seconds: f64,
    jobs: usize,
    pages_per_second: f64,
    mb_per_second: f64,
}

async fn match_pages(args: MatchArgs, database: &str, settings: &Settings) -> Result<()> {
    let inputs = pipeline::check::expand_inputs(&[args.input.to_string_lossy().into_owned()])?;
    let store = super::open_store(database).await?;
    let result = time_matching(&store, inputs, &args, settings).await;
    store.close().await;
    let figures = result?;
    if args.json {
        outln!("{}", serde_json::to_string(&figures)?);
    } else {
        outln!(
            "index: {} chapters loaded in {:.2} s",
            figures.chapters_indexed,
            figures.load_seconds
        );
        outln!(
            "match: {} pages ({:.2} MB of main text), {} matches in {:.2} s: {:.1} pages/s, {:.2} MB/s ({} at once)",
            figures.pages,
            figures.main_text_bytes as f64 / 1e6,
            figures.matches,
            figures.seconds,
            figures.pages_per_second,
            figures.mb_per_second,
            figures.jobs
        );
    }
    Ok(())
}

async fn time_matching(
    store: &store::Store,
    inputs: Vec<String>,
    args: &MatchArgs,
    settings: &Settings,
) -> Result<MatchFigures> {
    let started = Instant::now();
    let matcher = std::sync::Arc::new(super::check::load(store, settings, true).await?);
    let load_seconds = started.elapsed().as_secs_f64();
    let chapters_indexed = matcher.index().len();
    let checker = super::check::local_checker(matcher, store, settings)?;
    let jobs = args.jobs.unwrap_or_else(super::check::default_jobs);
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
    Ok(MatchFigures {
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

/// Splits `text` into chapters of about `target` bytes, cutting only at line ends.
pub fn split_chapters(text: &str, target: usize) -> Vec<String> {
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

fn load_documents(input: Option<&Path>, chapter_bytes: usize) -> Result<Vec<String>> {
    let mut docs = Vec::new();
    match input {
        None => {
            for (_, text) in SAMPLE {
                docs.extend(split_chapters(text, chapter_bytes));
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
                    Ok(text) => docs.extend(split_chapters(text, chapter_bytes)),
                    Err(e) => eprintln!("skipping {}: {e}", path.display()),
                }
            }
        }
    }
    if docs.is_empty() {
        bail!("no text to fingerprint");
    }
    Ok(docs)
}

/// Throughput of one kind.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Throughput {
    pub docs_per_s: f64,
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
type Work<'a> = dyn Fn(&str) + Sync + 'a;

/// Documents and what to do with each.
type Job<'a> = (&'a [String], &'a Work<'a>);

/// Measures every job in turn, a whole pass over its documents at a time, round after round,
/// until each has run for at least `min_time` (and at least one pass). Interleaving means a
/// slow spell of a shared machine slows every job alike instead of whichever ran during it,
/// so the figures can be compared with one another.
fn measure_interleaved(jobs: &[Job<'_>], threads: usize, min_time: Duration) -> Vec<Throughput> {
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

/// The measured kinds: each fingerprint alone (normalisation included unless the name says
/// otherwise), the bundle, and jieba-rs's plain `cut` as a yardstick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Normalize,
    MinHash,
    SimHash,
    Winnow,
    WinnowNormalized,
    PinyinWinnow,
    Sentences,
    Dna,
    All,
    JiebaCut,
}

const KINDS: [Kind; 10] = [
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

impl Kind {
    fn name(self) -> &'static str {
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

#[derive(Debug, Serialize)]
struct Report {
    docs: usize,
    bytes: usize,
    threads: usize,
    kinds: serde_json::Map<String, serde_json::Value>,
}

fn fingerprint(args: FingerprintArgs, settings: &Settings) -> Result<()> {
    let (threads, json, seconds) = args.measure.checked()?;
    let docs = load_documents(args.input.as_deref(), args.chapter_bytes.max(1))?;
    let bytes: usize = docs.iter().map(String::len).sum();
    let fp =
        Fingerprinter::new(settings.fingerprint.clone()).context("building the fingerprinter")?;
    let normalized: Vec<String> = docs
        .iter()
        .map(|d| fingerprint::normalize_compact(d).text)
        .collect();
    let min_time = Duration::from_secs_f64(seconds);
    if !json {
        outln!(
            "fingerprinting {} documents, {:.1} MB, on {} thread(s); kinds measured in turn \
             until each has run {}s",
            docs.len(),
            bytes as f64 / 1e6,
            threads,
            seconds
        );
    }
    let fp = &fp;
    let works: Vec<Box<Work<'_>>> = KINDS
        .iter()
        .map(|&kind| Box::new(move |text: &str| kind.run(fp, text)) as Box<Work<'_>>)
        .collect();
    let jobs: Vec<Job<'_>> = KINDS
        .iter()
        .zip(&works)
        .map(|(kind, work)| {
            let input: &[String] = if kind.takes_normalized() {
                &normalized
            } else {
                &docs
            };
            (input, work.as_ref())
        })
        .collect();
    let results = measure_interleaved(&jobs, threads, min_time);
    let mut kinds = serde_json::Map::new();
    if !json {
        outln!("{:<18} {:>10} {:>10}", "kind", "docs/s", "MB/s");
    }
    for (kind, t) in KINDS.iter().zip(&results) {
        if !json {
            let note = match kind {
                Kind::WinnowNormalized => "  (MB of normalised text)",
                Kind::JiebaCut => "  (reference: jieba-rs cut alone, no fingerprint)",
                _ => "",
            };
            outln!(
                "{:<18} {:>10.0} {:>10.1}{note}",
                kind.name(),
                t.docs_per_s,
                t.mb_per_s
            );
        }
        kinds.insert(kind.name().to_string(), serde_json::to_value(t)?);
    }
    if json {
        let report = Report {
            docs: docs.len(),
            bytes,
            threads,
            kinds,
        };
        outln!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapters_cut_at_line_ends_near_the_target() {
        let text = "aaaa\nbbbb\ncccc\ndd";
        assert_eq!(split_chapters(text, 8), vec!["aaaa\nbbbb\n", "cccc\ndd"]);
        assert_eq!(split_chapters("", 8), Vec::<String>::new());
    }

    #[test]
    fn sample_splits_into_about_eight_kilobyte_chapters() {
        let docs = load_documents(None, 8192).unwrap();
        assert!(docs.len() > 30);
        let mean = docs.iter().map(String::len).sum::<usize>() / docs.len();
        // Every piece but the last of each file reaches the target.
        assert!((7000..10_000).contains(&mean), "mean chapter {mean} bytes");
        assert!(docs.iter().filter(|d| d.len() < 8192).count() <= SAMPLE.len());
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
        let results = measure_interleaved(&jobs, 1, Duration::from_millis(30));
        // Whole passes only, at least one each; the slow job ran until its time was up.
        let (ra, rb) = (
            runs_a.load(Ordering::Relaxed),
            runs_b.load(Ordering::Relaxed),
        );
        assert!(ra >= 3 && ra % 3 == 0, "{ra}");
        // At least two passes of b (one takes 10 ms of sleep, 30 ms are asked for); not three:
        // on a loaded machine a 2 ms sleep can take 3 ms and two passes fill the time.
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
