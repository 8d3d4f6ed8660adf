//! `copyhound gc`: removes the page bodies past their retention (`[retention]`) with
//! `store::Store::gc`, and prints what it removed, or with `--dry-run` what it would.

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use store::{GcReport, RetentionSettings, Store};

use super::outln;

/// Options of `gc`.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Count what would be removed; remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Remove the bodies of unmatched pages fetched longer ago than this (`30d`, `12h`; at
    /// least `1h`) instead of the `retention.unmatched` setting.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    unmatched_older_than: Option<Duration>,
}

fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let period = bounds::duration_serde::parse(text)
        .ok_or_else(|| format!("{text:?} is not a duration: use e.g. 30d, 12h, 90m"))?;
    store::check_unmatched(period).map_err(|e| e.to_string())?;
    Ok(period)
}

/// Runs `gc` on `store` with `retention`, the period overridden by the flag.
pub async fn run(store: &Store, args: GcArgs, retention: &RetentionSettings) -> Result<()> {
    let retention = match args.unmatched_older_than {
        Some(period) => retention.with_unmatched(period),
        None => retention.clone(),
    };
    let report = store
        .gc(&retention, args.dry_run)
        .await
        .context("while removing expired bodies (what was removed stays removed: run it again)")?;
    print(&report)
}

fn print(r: &GcReport) -> Result<()> {
    let verb = if r.dry_run { "would remove" } else { "removed" };
    outln!("{verb} {} bodies, {} bytes", r.bodies, r.bytes);
    outln!(
        "{verb} {} screenshots, {} bytes",
        r.screenshots,
        r.screenshot_bytes
    );
    outln!(
        "snapshots expired: {}; page texts removed: {}",
        r.snapshots,
        r.texts
    );
    outln!(
        "segments: {} deleted, {} compacted ({} records rewritten), {} bytes of objects freed",
        r.segments_deleted,
        r.segments_compacted,
        r.bodies_rewritten,
        r.segment_bytes
    );
    outln!(
        "left by interrupted writers: {} uploading segments, {} spool files",
        r.orphan_segments,
        r.spool_files
    );
    outln!(
        "{verb} {} orphan segments, {} bytes (objects no row names, older than orphan_grace)",
        r.orphan_objects,
        r.orphan_object_bytes
    );
    Ok(())
}
