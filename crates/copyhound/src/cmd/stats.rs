//! `copyhound stats [--since DATE] [--json]`: the figures of [`analytics::stats`] — detections
//! per day, top sites, exposure per work, the takedown funnel, licensed matches apart and
//! crawl health — as text tables or one JSON object.

use anyhow::{Context, Result};
use chrono::{NaiveDate, Utc};
use clap::Args;

use super::outln;

/// Options of `stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only detections, cases and crawls from this UTC day on (YYYY-MM-DD). Default: all time.
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    since: Option<NaiveDate>,
    /// Rows of the top sites and exposure tables.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    top: u32,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
}

/// A day from the command line.
fn parse_date(s: &str) -> std::result::Result<NaiveDate, String> {
    s.trim()
        .parse::<NaiveDate>()
        .map_err(|e| format!("{s:?} is not a date ({e}): give one like 2026-11-01"))
}

/// Runs `stats`.
pub async fn run(store: &store::Store, args: StatsArgs) -> Result<()> {
    let window = analytics::Window::new(args.since, Utc::now()).context("--since")?;
    let stats = analytics::stats(store, &window, args.top).await?;
    if args.json {
        outln!("{}", serde_json::to_string(&stats)?);
    } else {
        super::write_stdout(&stats.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_or_say_what_to_give() {
        assert_eq!(
            parse_date(" 2026-11-01 ").unwrap(),
            NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()
        );
        let err = parse_date("yesterday").unwrap_err();
        assert!(
            err.contains("\"yesterday\"") && err.contains("2026-11-01"),
            "{err}"
        );
    }
}
