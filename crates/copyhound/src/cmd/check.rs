//! `copyhound check PATH|DIR|URL...`: match local files, directories of pages or single pages
//! on the web against the registered works, without crawling or recording anything.
//!
//! Pages are checked on all cores (`--jobs`, default twice the number of cores): each page is read,
//! decoded, extracted, fingerprinted and verified on a blocking thread, a bounded number at
//! once, and the results are printed in input order (directories in path order), whatever
//! order they finish in. A summary line with pages per second goes to stderr at the end.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use crawler::PageKind;
use fingerprint::Fingerprinter;
use matcher::{AlignedSpan, Match, Matcher};
use pipeline::check::expand_inputs;
use pipeline::{Checked, Checker, load_matcher};
use serde::Serialize;
use store::{Store, WorkReads};

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
    /// Where the page's text came from: `markup`, `script` or `endpoint`.
    text_source: &'static str,
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
    let (matcher, loaded) = load_matcher(store, settings.matcher.clone(), fingerprinter)
        .await
        .map_err(|e| anyhow::anyhow!("{}", pipeline::chain(&e)))?;
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
    let color = !args.json && super::use_color(std::io::stdout().is_terminal());
    let mut titles: HashMap<i64, String> = HashMap::new();
    let mut fetch = settings.crawler.fetch.clone();
    fetch.safety.allow_private |= args.allow_private;
    let checker = Checker::new(
        Arc::clone(&matcher),
        store.clone(),
        fetch,
        settings.crawler.extract.clone(),
    )
    .context("while setting up the checker ([crawler.fetch] and [crawler.extract] settings)")?;
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let started = Instant::now();
    let (mut failed, mut pages, mut matches) = (0, 0, 0);
    let total = inputs.len();
    checker
        .run::<anyhow::Error>(inputs, jobs, async |input, checked| {
            let checked = match checked {
                Ok(checked) => checked,
                Err(e) => {
                    failed += 1;
                    eprintln!("error: {input}: {}", pipeline::chain(&e));
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
        writeln!(out, "{input}: {}", nothing_found(checked.kind))?;
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
            text_source: checked.source.as_str(),
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

/// What to say of a page's text that was not in its markup (`None` for markup).
pub(crate) fn source_note(text_source: &str) -> Option<&'static str> {
    match text_source {
        "script" => Some("text written into the page by an inline script"),
        "endpoint" => Some("text fetched by the page's script from a content endpoint of the site"),
        _ => None,
    }
}

/// What a page with no match is: a chapter of no registered work, or no chapter at all.
fn nothing_found(kind: PageKind) -> &'static str {
    match kind {
        PageKind::Challenge => {
            "an anti-bot challenge page, not the chapter: no text to match (the site showed a \
             \"checking your browser\" page; fetch it in a browser and save it, or crawl it later)"
        }
        PageKind::Redirect => "a redirect stub with no text of its own: check the page it leads to",
        PageKind::Empty => "no text found on the page",
        PageKind::Index => {
            "a table of contents, not a chapter: no registered work found in its text"
        }
        PageKind::Content => "no registered work found",
    }
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
    if let Some(said) = source_note(r.text_source) {
        writeln!(out, "  {said}")?;
    }
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
