//! `copyhound check PATH|DIR|URL...`: match local files, directories of pages or single pages
//! on the web against the registered works, without crawling or recording anything.
//!
//! Pages are checked on all cores (`--jobs`, default twice the number of cores): each page is read,
//! decoded, extracted, fingerprinted and verified on a blocking thread, a bounded number at
//! once, and the results are printed in input order (directories in path order), whatever
//! order they finish in. A summary line with pages per second goes to stderr at the end.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use detection::check::expand_inputs;
use detection::{Checker, load_matcher};
use fingerprint::Fingerprinter;
use matcher::Matcher;
use store::Store;

use settings::Settings;

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
    #[arg(long, value_parser = bounds::parse_count)]
    jobs: Option<usize>,
}

/// The index over every registered chapter, with warnings about what was left out.
pub(crate) async fn load(store: &Store, settings: &Settings, quiet: bool) -> Result<Matcher> {
    let fingerprinter = Arc::new(
        Fingerprinter::new(settings.fingerprint.clone())
            .context("while setting up the fingerprinter ([fingerprint] settings)")?,
    );
    let (matcher, loaded) = load_matcher(store, settings.matcher.clone(), fingerprinter)
        .await
        .map_err(|e| anyhow::anyhow!("{}", jobs::chain(&e)))?;
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

/// Runs `check`.
pub async fn run(store: &Store, args: CheckArgs, settings: &Settings) -> Result<()> {
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
    let jobs = args.jobs.unwrap_or_else(detection::check::default_jobs);
    let started = Instant::now();
    let (mut failed, mut pages, mut matches) = (0, 0, 0);
    let total = inputs.len();
    checker
        .run::<anyhow::Error>(inputs, jobs, async |input, checked| {
            let checked = match checked {
                Ok(checked) => checked,
                Err(e) => {
                    failed += 1;
                    eprintln!("error: {input}: {}", jobs::chain(&e));
                    return Ok(());
                }
            };
            pages += 1;
            matches += checked.matches.len();
            let report = checked
                .report(store, &input, &mut titles, args.json, color)
                .await?;
            if args.json {
                super::write_stdout(&report)
            } else {
                // Its colours are ours; what came from the page or the store is escaped.
                super::write_stdout_styled(&report)
            }
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
