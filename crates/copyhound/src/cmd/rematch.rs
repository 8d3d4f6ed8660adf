//! `copyhound rematch [--site HOST] [--since DATE] [--mode auto|page|batch]`: match stored
//! pages again, so pages fetched before a work was registered are checked against it.

use anyhow::{Context, Result, bail};
use chrono::{DateTime, NaiveDate, Utc};
use clap::Args;
use matcher::ModeChoice;
use pipeline::RematchOptions;
use store::TextFilter;

use super::outln;
use settings::Settings;

/// Options of `rematch`.
#[derive(Debug, Args)]
pub struct RematchArgs {
    /// Only pages of this host, with its port if the site has one (as `cases list` shows it).
    #[arg(long, value_name = "HOST")]
    site: Option<String>,
    /// Only pages fetched on or after this date (YYYY-MM-DD, UTC) or time (RFC 3339).
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    since: Option<DateTime<Utc>>,
    /// Queue the pages for `copyhound worker` instead of matching them now.
    #[arg(long)]
    enqueue: bool,
    /// `page`: each page against the index of every chapter; `batch`: the registered
    /// chapters streamed past a batch of pages, no index loaded; `auto`: whichever the sizes
    /// make cheaper.
    #[arg(long, value_name = "MODE", default_value = "auto")]
    mode: ModeChoice,
    /// Pages a batch holds at most (batch mode).
    #[arg(long, value_name = "N", default_value_t = detection::DEFAULT_BATCH_PAGES,
          value_parser = bounds::parse_count)]
    batch_pages: usize,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

/// A `--since` value: a date (midnight UTC) or an RFC 3339 time.
fn parse_since(s: &str) -> std::result::Result<DateTime<Utc>, String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| format!("{s:?} is not a date: give YYYY-MM-DD or an RFC 3339 time"))
}

/// Runs `rematch`.
pub async fn run(store: &store::Store, args: RematchArgs, settings: &Settings) -> Result<()> {
    if let Some(site) = &args.site
        && (site.is_empty() || site.contains(['/', ' ']))
    {
        bail!(
            "--site {site:?} is not a host: give one as `cases list` shows it, e.g. www.example.com \
             or 127.0.0.1:8080"
        );
    }
    let filter = TextFilter {
        site: args.site.clone(),
        since: args.since,
    };
    let options = RematchOptions {
        mode: args.mode,
        batch_pages: args.batch_pages,
        enqueue: args.enqueue,
        ..RematchOptions::default()
    };
    if !args.enqueue && !args.json {
        eprintln!("matching the stored pages{}…", describe(&args));
    }
    let handler = settings.handler(store)?;
    let summary = pipeline::rematch(store, handler, &filter, &options)
        .await
        .context("while matching the stored pages again")?;
    if args.json {
        outln!("{}", serde_json::to_string(&summary)?);
    } else {
        super::write_stdout(&summary.text(&describe(&args)))?;
    }
    Ok(())
}

fn describe(args: &RematchArgs) -> String {
    let mut out = String::new();
    if let Some(site) = &args.site {
        out.push_str(&format!(" on {site}"));
    }
    if let Some(since) = args.since {
        out.push_str(&format!(" fetched since {}", since.to_rfc3339()));
    }
    out
}
