//! The figures as plain text: what `copyhound stats` prints, and what a mailed digest
//! says. Tables are tab-separated, one row a line.

use std::fmt;

use crate::Stats;

impl fmt::Display for Stats {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self;
        match s.window.since {
            Some(since) => writeln!(out, "since {since} (UTC)")?,
            None => writeln!(out, "all time")?,
        }
        let d = &s.detections;
        writeln!(
            out,
            "\ndetections: {} new copies, {} matches ({} more on licensed domains)",
            d.copies_total, d.total, d.licensed_total
        )?;
        writeln!(out, "day\tnew copies\tmatches\tlicensed")?;
        for p in &d.days {
            writeln!(
                out,
                "{}\t{}\t{}\t{}",
                p.day, p.copies, p.matches, p.licensed
            )?;
        }

        writeln!(out, "\ntop sites by copied chapters")?;
        if s.top_sites.is_empty() {
            writeln!(out, "(none)")?;
        } else {
            writeln!(out, "site\tchapters\tworks\tpages")?;
            for t in &s.top_sites {
                writeln!(out, "{}\t{}\t{}\t{}", t.site, t.chapters, t.works, t.pages)?;
            }
        }

        writeln!(out, "\nexposure per work")?;
        if s.exposure.is_empty() {
            writeln!(out, "(none)")?;
        } else {
            writeln!(out, "work\tsites\tpages\tchapters copied")?;
            for w in &s.exposure {
                writeln!(
                    out,
                    "{} «{}»\t{}\t{}\t{}/{} ({:.1}%)",
                    w.work_id,
                    w.title,
                    w.sites,
                    w.pages,
                    w.chapters_copied,
                    w.chapters,
                    w.share_copied * 100.0
                )?;
            }
        }

        let f = &s.funnel;
        writeln!(out, "\ntakedown funnel (cases first seen in the window)")?;
        writeln!(
            out,
            "found {} → confirmed {} → notice sent {} → removed {}; dismissed {}",
            f.found, f.confirmed, f.notice_sent, f.removed, f.dismissed
        )?;
        let now: Vec<String> = f
            .by_status
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        writeln!(
            out,
            "now: {}",
            if now.is_empty() {
                "no cases".to_owned()
            } else {
                now.join(", ")
            }
        )?;
        match f.median_seconds_to_removal {
            Some(secs) => writeln!(
                out,
                "median first seen → removed: {} (over {} removals)",
                duration(secs),
                f.removals
            )?,
            None => writeln!(out, "median first seen → removed: no removals")?,
        }

        writeln!(
            out,
            "\nlicensed (not infringement): {} matches in the window",
            s.licensed.matches
        )?;
        for w in &s.licensed.by_work {
            writeln!(out, "{} «{}»\t{} matches", w.work_id, w.title, w.matches)?;
        }

        writeln!(out, "\ncrawl health per site")?;
        if s.crawl_health.is_empty() {
            writeln!(out, "(no crawls)")?;
        } else {
            writeln!(
                out,
                "site\tcrawls\tpages\terrors\tbytes\tpages/s\terrors by kind"
            )?;
            for h in &s.crawl_health {
                let kinds: Vec<String> = h
                    .errors_by_kind
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect();
                writeln!(
                    out,
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
                )?;
            }
        }
        Ok(())
    }
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
}
