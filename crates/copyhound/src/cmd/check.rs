//! `copyhound check PATH|URL...`: match local files or single pages against the registered
//! works, without crawling or recording anything.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use crawler::{FetchRequest, FetchSettings, Fetcher};
use fingerprint::Fingerprinter;
use matcher::{AlignedSpan, Match};
use serde::Serialize;
use store::{Store, WorkReads};
use url::Url;

use crate::matching::{find, load_matcher};
use crate::settings::Settings;

/// Options of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files (`.txt`, or `.html`/`.htm` whose main text is extracted; any encoding) or
    /// http(s) URLs of single pages.
    #[arg(required = true, value_name = "PATH|URL")]
    inputs: Vec<String>,
    /// Print one JSON object per match and line.
    #[arg(long)]
    json: bool,
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

async fn check(store: &Store, args: CheckArgs, settings: &Settings) -> Result<()> {
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
    if loaded.chapters == 0 && !args.json {
        eprintln!("warning: no works registered yet: add some with `copyhound works import FILE`");
    }
    let color = !args.json && std::io::stdout().is_terminal();
    let mut fetcher = None;
    let mut titles: HashMap<i64, String> = HashMap::new();
    let mut failed = 0;
    for input in &args.inputs {
        let text = match read_input(input, &mut fetcher).await {
            Ok(text) => text,
            Err(e) => {
                failed += 1;
                eprintln!("error: {input}: {e:#}");
                continue;
            }
        };
        let (matches, texts) = find(&matcher, store, &text).await?;
        if matches.is_empty() && !args.json {
            println!("{input}: no registered work found");
        }
        for m in &matches {
            let Some(chapter) = texts.chapter(m.chapter) else {
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
            if args.json {
                println!("{}", serde_json::to_string(&reported)?);
            } else {
                print_match(&reported, m, &text, &chapter.body, color);
            }
        }
    }
    if failed > 0 {
        bail!("{failed} of {} inputs could not be read", args.inputs.len());
    }
    Ok(())
}

/// The main text of a file or URL, decoded.
pub(crate) async fn read_input(input: &str, fetcher: &mut Option<Fetcher>) -> Result<String> {
    if input.starts_with("http://") || input.starts_with("https://") {
        let url = Url::parse(input).with_context(|| format!("bad URL {input:?}"))?;
        if fetcher.is_none() {
            *fetcher = Some(
                Fetcher::new(FetchSettings::default()).context("while setting up the fetcher")?,
            );
        }
        let fetcher = fetcher.as_ref().expect("set above");
        let snapshot = fetcher
            .fetch(&FetchRequest::get(url))
            .await
            .context("while fetching")?;
        if !(200..300).contains(&snapshot.status) {
            bail!("the server answered HTTP {}", snapshot.status);
        }
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
        return Ok(if html {
            main_text(&decoded.text, &snapshot.final_url)
        } else {
            decoded.text
        });
    }
    let path = Path::new(input);
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
    Ok(main_text(&decoded.text, &base))
}

fn main_text(html: &str, url: &Url) -> String {
    crawler::extract::extract(html, url).paragraphs.join("\n")
}

/// Characters of context shown around a passage, and of a long passage shown at each end.
const CONTEXT_CHARS: usize = 12;
const PASSAGE_END_CHARS: usize = 40;

fn print_match(r: &Reported<'_>, m: &Match, page: &str, chapter: &str, color: bool) {
    println!(
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
    );
    for span in &m.spans {
        println!(
            "  page bytes {}..{} = chapter bytes {}..{} ({} chars)",
            span.page.start, span.page.end, span.chapter.start, span.chapter.end, span.chars
        );
        println!("    page:    {}", excerpt(page, &span.page, color));
        println!("    chapter: {}", excerpt(chapter, &span.chapter, color));
    }
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
