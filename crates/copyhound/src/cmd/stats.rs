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
pub async fn run(args: StatsArgs, database: &str) -> Result<()> {
    let window = analytics::Window::new(args.since, Utc::now()).context("--since")?;
    let store = super::open_store(database).await?;
    let result = analytics::stats(&store, &window, args.top).await;
    store.close().await;
    let stats = result?;
    if args.json {
        outln!("{}", serde_json::to_string(&stats)?);
    } else {
        print(&stats)?;
    }
    Ok(())
}

fn print(s: &analytics::Stats) -> Result<()> {
    match s.window.since {
        Some(since) => outln!("since {since} (UTC)"),
        None => outln!("all time"),
    }
    let d = &s.detections;
    outln!(
        "\ndetections: {} matches ({} more on licensed domains)",
        d.total,
        d.licensed_total
    );
    outln!("day\tmatches\tlicensed");
    for p in &d.days {
        outln!("{}\t{}\t{}", p.day, p.matches, p.licensed);
    }

    outln!("\ntop sites by copied chapters");
    if s.top_sites.is_empty() {
        outln!("(none)");
    } else {
        outln!("site\tchapters\tworks\tpages");
        for t in &s.top_sites {
            outln!("{}\t{}\t{}\t{}", t.site, t.chapters, t.works, t.pages);
        }
    }

    outln!("\nexposure per work");
    if s.exposure.is_empty() {
        outln!("(none)");
    } else {
        outln!("work\tsites\tpages\tchapters copied");
        for w in &s.exposure {
            outln!(
                "{} «{}»\t{}\t{}\t{}/{} ({:.1}%)",
                w.work_id,
                w.title,
                w.sites,
                w.pages,
                w.chapters_copied,
                w.chapters,
                w.share_copied * 100.0
            );
        }
    }

    let f = &s.funnel;
    outln!("\ntakedown funnel (cases first seen in the window)");
    outln!(
        "found {} → confirmed {} → notice sent {} → removed {}; dismissed {}",
        f.found,
        f.confirmed,
        f.notice_sent,
        f.removed,
        f.dismissed
    );
    let now: Vec<String> = f
        .by_status
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    outln!(
        "now: {}",
        if now.is_empty() {
            "no cases".to_owned()
        } else {
            now.join(", ")
        }
    );
    match f.median_seconds_to_removal {
        Some(secs) => outln!(
            "median first seen → removed: {} (over {} removals)",
            duration(secs),
            f.removals
        ),
        None => outln!("median first seen → removed: no removals"),
    }

    outln!(
        "\nlicensed (not infringement): {} matches in the window",
        s.licensed.matches
    );
    for w in &s.licensed.by_work {
        outln!("{} «{}»\t{} matches", w.work_id, w.title, w.matches);
    }

    outln!("\ncrawl health per site");
    if s.crawl_health.is_empty() {
        outln!("(no crawls)");
    } else {
        outln!("site\tcrawls\tpages\terrors\tbytes\tpages/s\terrors by kind");
        for h in &s.crawl_health {
            let kinds: Vec<String> = h
                .errors_by_kind
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            outln!(
                "{}\t{}\t{}\t{} ({:.1}%)\t{}\t{}\t{}",
                h.site,
                h.crawls,
                h.pages,
                h.errors,
                h.error_rate * 100.0,
                h.bytes,
                h.pages_per_second
                    .map_or_else(|| "-".to_owned(), |p| format!("{p:.1}")),
                kinds.join(", ")
            );
        }
    }
    Ok(())
}

/// `secs` as days, hours and minutes.
fn duration(secs: i64) -> String {
    let secs = secs.max(0);
    let (days, hours, minutes) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60);
    if days > 0 {
        format!("{days} d {hours} h")
    } else if hours > 0 {
        format!("{hours} h {minutes} min")
    } else {
        format!("{minutes} min {} s", secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_the_largest_units() {
        assert_eq!(duration(42), "0 min 42 s");
        assert_eq!(duration(3 * 3600 + 5 * 60), "3 h 5 min");
        assert_eq!(duration(2 * 86_400 + 7 * 3600 + 59), "2 d 7 h");
        assert_eq!(duration(-5), "0 min 0 s");
    }

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
