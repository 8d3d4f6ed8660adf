//! `copyhound check PATH|DIR|URL...`: match local files, directories of pages or single pages
//! on the web against the registered works, without crawling or recording anything.
//!
//! Pages are checked on all cores (`--jobs`, default twice the number of cores): each page is read,
//! decoded, extracted, fingerprinted and verified on a blocking thread, a bounded number at
//! once, and the results are printed in input order (directories in path order), whatever
//! order they finish in. A summary line with pages per second goes to stderr at the end.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use crawler::{FetchRequest, FetchSettings, Fetcher};
use fingerprint::Fingerprinter;
use matcher::{AlignedSpan, Match, Matcher};
use serde::Serialize;
use store::{Store, WorkReads};
use url::Url;

use crate::matching::{StoreTexts, TextCache, find, load_matcher};
use crate::settings::Settings;

/// Options of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files (`.txt`, or `.html`/`.htm` whose main text is extracted; any encoding),
    /// directories (every such file under them, recursively) or http(s) URLs of single pages.
    #[arg(required = true, value_name = "PATH|DIR|URL")]
    inputs: Vec<String>,
    /// Print one JSON object per match and line.
    #[arg(long)]
    json: bool,
    /// Let URLs reach loopback and private addresses (a server on this machine or the local
    /// network); refused by default, as the crawler refuses them (also
    /// `[crawler.fetch.safety] allow_private`).
    #[arg(long)]
    allow_private: bool,
    /// Pages checked at once; default: twice the number of cores.
    #[arg(long, value_parser = super::parse_count)]
    jobs: Option<usize>,
}

/// One line of `check --json`.
#[derive(Debug, Serialize)]
struct Reported<'a> {
    input: &'a str,
    work_id: i64,
    work_title: &'a str,
    chapter_id: i64,
    /// 1-based.
    chapter_index: u32,
    chapter_title: &'a str,
    score: f64,
    coverage: f64,
    page_share: f64,
    matched_chars: usize,
    chapter_chars: usize,
    page_chars: usize,
    spans: &'a [AlignedSpan],
}

/// Runs `check` against the database at `database`.
pub async fn run(args: CheckArgs, database: &str, settings: &Settings) -> Result<()> {
    let store = super::open_store(database).await?;
    let result = check(&store, args, settings).await;
    store.close().await;
    result
}

/// The index over every registered chapter, with warnings about what was left out.
pub(crate) async fn load(store: &Store, settings: &Settings, quiet: bool) -> Result<Matcher> {
    let fingerprinter = Arc::new(
        Fingerprinter::new(settings.fingerprint.clone())
            .context("while setting up the fingerprinter ([fingerprint] settings)")?,
    );
    let (matcher, loaded) = load_matcher(store, settings.matcher.clone(), fingerprinter).await?;
    if loaded.skipped > 0 {
        eprintln!(
            "warning: {} chapters left out of the index (fingerprinted by another version: \
             delete and re-import their works)",
            loaded.skipped
        );
    }
    if loaded.chapters == 0 && !quiet {
        eprintln!("warning: no works registered yet: add some with `copyhound works import FILE`");
    }
    Ok(matcher)
}

async fn check(store: &Store, args: CheckArgs, settings: &Settings) -> Result<()> {
    let matcher = Arc::new(load(store, settings, args.json).await?);
    let inputs = expand_inputs(&args.inputs)?;
    let color = !args.json && std::io::stdout().is_terminal();
    let mut titles: HashMap<i64, String> = HashMap::new();
    let mut fetch = settings.crawler.fetch.clone();
    fetch.safety.allow_private |= args.allow_private;
    let checker = Checker::new(Arc::clone(&matcher), store.clone(), fetch)?;
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let started = Instant::now();
    let (mut failed, mut pages, mut matches) = (0, 0, 0);
    let total = inputs.len();
    checker
        .run(inputs, jobs, async |input, checked| {
            let checked = match checked {
                Ok(checked) => checked,
                Err(e) => {
                    failed += 1;
                    eprintln!("error: {input}: {e:#}");
                    return Ok(());
                }
            };
            pages += 1;
            matches += checked.matches.len();
            print_checked(store, &input, &checked, &mut titles, args.json, color).await
        })
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "checked {pages} pages in {seconds:.2} s ({:.0} pages/s, {jobs} at once): {matches} matches",
        pages as f64 / seconds.max(1e-9)
    );
    if failed > 0 {
        bail!("{failed} of {total} inputs could not be read");
    }
    Ok(())
}

async fn print_checked(
    store: &Store,
    input: &str,
    checked: &Checked,
    titles: &mut HashMap<i64, String>,
    json: bool,
    color: bool,
) -> Result<()> {
    let mut out = String::new();
    if checked.matches.is_empty() && !json {
        writeln!(out, "{input}: no registered work found")?;
    }
    for m in &checked.matches {
        let Some(chapter) = checked.texts.chapter(m.chapter) else {
            continue;
        };
        let work_title = match titles.get(&m.work.0) {
            Some(t) => t.clone(),
            None => {
                let work = store
                    .work(store::WorkId(m.work.0))
                    .await
                    .context("while reading a matched work")?;
                titles.insert(m.work.0, work.title.clone());
                work.title
            }
        };
        let reported = Reported {
            input,
            work_id: m.work.0,
            work_title: &work_title,
            chapter_id: m.chapter.0,
            chapter_index: chapter.info.ordinal,
            chapter_title: &chapter.info.title,
            score: m.score,
            coverage: m.coverage,
            page_share: m.page_share,
            matched_chars: m.matched_chars,
            chapter_chars: m.chapter_chars,
            page_chars: m.page_chars,
            spans: &m.spans,
        };
        if json {
            writeln!(out, "{}", serde_json::to_string(&reported)?)?;
        } else {
            write_match(&mut out, &reported, m, &checked.text, &chapter.body, color)?;
        }
    }
    super::write_stdout(&out)
}

/// Pages checked at once by default: twice the cores, so that a core whose page waits for
/// the store (or the network) has another page to work on (measured: 2 at once on 2 cores
/// left a fifth of the time idle).
pub(crate) fn default_jobs() -> usize {
    2 * cores()
}

/// The number of cores (1 when unknown).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

fn is_url(input: &str) -> bool {
    input.starts_with("http://") || input.starts_with("https://")
}

/// `inputs` with every directory replaced by the pages under it, in path order.
pub(crate) fn expand_inputs(inputs: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for input in inputs {
        if !is_url(input) && Path::new(input).is_dir() {
            let mut paths = Vec::new();
            collect_pages(Path::new(input), &mut paths)?;
            paths.sort();
            if paths.is_empty() {
                bail!("no .txt or .html pages under {input}");
            }
            out.extend(paths.into_iter().map(|p| p.to_string_lossy().into_owned()));
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// Every `.txt`, `.html` and `.htm` file under `dir`, recursively.
pub(crate) fn collect_pages(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect_pages(&path, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "txt" | "html" | "htm"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// A checked page: its main text, the matches, and the matched chapters' texts.
pub(crate) struct Checked {
    pub text: String,
    pub matches: Vec<Match>,
    pub texts: StoreTexts,
}

/// What checks pages: the index, the store for chapter texts, a fetcher for URLs.
#[derive(Clone)]
pub(crate) struct Checker {
    matcher: Arc<Matcher>,
    store: Store,
    fetcher: Fetcher,
    texts: Arc<TextCache>,
}

impl Checker {
    /// A checker that fetches URLs with `fetch` (the `[crawler.fetch]` settings: user agent,
    /// timeouts, size cap, which addresses may be reached).
    pub(crate) fn new(matcher: Arc<Matcher>, store: Store, fetch: FetchSettings) -> Result<Self> {
        let fetcher = Fetcher::new(fetch).context("while setting up the fetcher")?;
        Ok(Checker {
            matcher,
            store,
            fetcher,
            texts: Arc::default(),
        })
    }

    /// Checks `inputs`, `jobs` at once, and hands each result to `each` in input order. An
    /// input that cannot be read or fetched is an `Err` for `each`; a database failure or an
    /// error of `each` ends the run.
    pub(crate) async fn run(
        &self,
        inputs: Vec<String>,
        jobs: usize,
        mut each: impl AsyncFnMut(String, Result<Checked>) -> Result<()>,
    ) -> Result<()> {
        type Running = tokio::task::JoinHandle<Result<Result<Checked>>>;
        let mut running: VecDeque<(String, Running)> = VecDeque::new();
        let mut inputs = inputs.into_iter();
        loop {
            while running.len() < jobs.max(1) {
                let Some(input) = inputs.next() else { break };
                let task = tokio::spawn(self.clone().one(input.clone()));
                running.push_back((input, task));
            }
            let Some((input, task)) = running.pop_front() else {
                return Ok(());
            };
            let checked = task
                .await
                .map_err(|e| anyhow!("checking {input} failed: {e}"))??;
            each(input, checked).await?;
        }
    }

    /// One input: `Ok(Err(..))` when it cannot be read, `Err` on a database failure.
    async fn one(self, input: String) -> Result<Result<Checked>> {
        let fetched = if is_url(&input) {
            match self.fetch(&input).await {
                Ok(text) => Some(text),
                Err(e) => return Ok(Err(e)),
            }
        } else {
            None
        };
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let text = match fetched {
                Some(text) => text,
                None => match read_file(Path::new(&input)) {
                    Ok(text) => text,
                    Err(e) => return Ok(Err(e)),
                },
            };
            let (matches, texts) = find(&self.matcher, &self.store, &text, &runtime, &self.texts)?;
            Ok(Ok(Checked {
                text,
                matches,
                texts,
            }))
        })
        .await
        .map_err(|e| anyhow!("checking a page failed: {e}"))?
    }

    /// The main text of the page at `input`, decoded.
    async fn fetch(&self, input: &str) -> Result<String> {
        let url = Url::parse(input).with_context(|| format!("bad URL {input:?}"))?;
        let snapshot = self
            .fetcher
            .fetch(&FetchRequest::get(url))
            .await
            .context("while fetching")?;
        if !(200..300).contains(&snapshot.status) {
            bail!("the server answered HTTP {}", snapshot.status);
        }
        // Decoding and extraction are CPU work on hostile bytes: off the runtime.
        tokio::task::spawn_blocking(move || {
            let tld = snapshot
                .final_url
                .host_str()
                .and_then(|h| h.rsplit('.').next())
                .map(str::to_owned);
            let decoded =
                crawler::charset::decode(&snapshot.body, snapshot.content_type(), tld.as_deref());
            let html = snapshot
                .media_type()
                .is_none_or(|t| t.contains("html") || t.contains("xml"));
            if html {
                main_text(&decoded.text, &snapshot.final_url)
            } else {
                Ok(decoded.text)
            }
        })
        .await
        .map_err(|e| anyhow!("reading the page failed: {e}"))?
    }
}

/// The main text of a file (`.html`/`.htm`: extracted), decoded from whatever encoding.
pub(crate) fn read_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let decoded = crawler::charset::decode(&bytes, None, None);
    let is_html = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
    if !is_html {
        return Ok(decoded.text);
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let base = Url::from_file_path(&absolute)
        .map_err(|()| anyhow!("cannot make a file URL of {}", absolute.display()))?;
    main_text(&decoded.text, &base)
}

/// The page's main text, or an error naming the parsing limit it broke.
fn main_text(html: &str, url: &Url) -> Result<String> {
    let extracted = crawler::extract::extract(html, url);
    if let Some(exceeded) = extracted.exceeded {
        bail!("{exceeded}: the page is not read");
    }
    Ok(extracted.paragraphs.join("\n"))
}

/// Characters of context shown around a passage, and of a long passage shown at each end.
const CONTEXT_CHARS: usize = 12;
const PASSAGE_END_CHARS: usize = 40;

fn write_match(
    out: &mut String,
    r: &Reported<'_>,
    m: &Match,
    page: &str,
    chapter: &str,
    color: bool,
) -> std::fmt::Result {
    writeln!(
        out,
        "{}: work {} «{}», chapter {} «{}»: score {:.2}, coverage {:.2}, {} of {} chars matched",
        r.input,
        r.work_id,
        r.work_title,
        r.chapter_index,
        r.chapter_title,
        r.score,
        r.coverage,
        m.matched_chars,
        m.chapter_chars
    )?;
    for span in &m.spans {
        writeln!(
            out,
            "  page bytes {}..{} = chapter bytes {}..{} ({} chars)",
            span.page.start, span.page.end, span.chapter.start, span.chapter.end, span.chars
        )?;
        writeln!(out, "    page:    {}", excerpt(page, &span.page, color))?;
        writeln!(
            out,
            "    chapter: {}",
            excerpt(chapter, &span.chapter, color)
        )?;
    }
    Ok(())
}

/// The passage `range` of `text` on one line with a little context, its middle elided when
/// long, highlighted on a terminal.
fn excerpt(text: &str, range: &std::ops::Range<usize>, color: bool) -> String {
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let before: String = {
        let head = &text[..range.start];
        let skip = head.chars().count().saturating_sub(CONTEXT_CHARS);
        head.chars().skip(skip).collect()
    };
    let after: String = text[range.end..].chars().take(CONTEXT_CHARS).collect();
    let passage = &text[range.clone()];
    let count = passage.chars().count();
    let passage = if count > 2 * PASSAGE_END_CHARS + 1 {
        let start: String = passage.chars().take(PASSAGE_END_CHARS).collect();
        let end: String = passage.chars().skip(count - PASSAGE_END_CHARS).collect();
        format!("{} … {}", one_line(&start), one_line(&end))
    } else {
        one_line(passage)
    };
    let (on, off) = if color {
        ("\x1b[1;31m", "\x1b[0m")
    } else {
        ("[", "]")
    };
    format!(
        "{}{on}{passage}{off}{}",
        one_line(&before),
        one_line(&after)
    )
}
