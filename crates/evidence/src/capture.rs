//! Screenshots of a case's pages taken when a reviewer asks ("take a screenshot now" on the
//! case page, [`Job::CaptureCase`], `copyhound cases capture ID`): each page of the case,
//! its newest snapshot's final URL, rendered now in the headless browser under the crawl's
//! address rules, and stored as a render of that snapshot (with the time it was taken), so
//! the case page, the evidence package and the case's WARC show it. With a time-stamping
//! authority each screenshot is stamped as soon as it is stored, as snapshots are.

use std::sync::Arc;

use casework::cases::case_view;
use casework::timestamps::{Stamped, stamp_hash, stamp_screenshot};
use chrono::{DateTime, Utc};
use jobs::{Error, Job, Result, chain, store_err};
use store::{CaseId, JobQueue, Renders, SnapshotId, Store, Timestamps};
use timestamp::Tsa;

/// What [`capture_case`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CaptureSummary {
    /// Pages of the case (one snapshot each, the newest).
    pub pages: usize,
    /// Screenshots stored.
    pub captured: usize,
    /// Screenshots stamped by the time-stamping authority.
    pub stamped: usize,
    /// Screenshots stored that the authority did not stamp, with why.
    pub unstamped: Vec<(SnapshotId, String)>,
    /// Pages that could not be rendered, with why.
    pub failed: Vec<(SnapshotId, String)>,
}

/// The job that captures case `case` (one queued at a time per case).
///
/// # Errors
/// Never in practice (the job serialises).
pub fn capture_job(case: CaseId) -> store::Result<store::NewJob> {
    Ok(store::NewJob::new(&Job::CaptureCase { case })?
        .dedupe_key(format!("capture:case:{case}"))
        .max_attempts(2))
}

/// Queues [`Job::CaptureCase`] for `case`; its job (the one already queued, if any).
///
/// # Errors
/// The store's.
pub async fn queue_capture(store: &Store, case: CaseId) -> Result<store::JobId> {
    let job = capture_job(case).map_err(store_err("queueing a capture"))?;
    store
        .enqueue(&job)
        .await
        .map(store::Enqueued::id)
        .map_err(store_err("queueing a capture"))
}

/// Renders each page of case `case` now, with a screenshot, and stores what it showed;
/// with `tsa`, stamps each screenshot stored (a stamp that fails is counted in
/// [`CaptureSummary::unstamped`], the screenshot kept).
///
/// # Errors
/// Rendering unavailable (naming the packages to install), an unknown case, store failures;
/// a page the browser could not render is counted in [`CaptureSummary::failed`] instead.
pub async fn capture_case(
    store: &Store,
    settings: &crawler::CrawlSettings,
    tsa: Option<&timestamp::Tsa>,
    case: CaseId,
) -> Result<CaptureSummary> {
    let view = case_view(store, case).await?;
    let renderer = crawler::Renderer::new(settings.render.clone())?;
    let extractor =
        Arc::new(extract::Extractor::new(&settings.extract).map_err(crawler::Error::from)?);
    let policy = Arc::new(crawler::AddressPolicy::new(&settings.fetch.safety));
    // The newest snapshot of each page.
    let mut newest: Vec<(SnapshotId, String)> = Vec::new();
    for m in &view.matches {
        match newest.iter_mut().find(|(_, url)| *url == m.url) {
            Some(entry) if entry.0 < m.snapshot_id => entry.0 = m.snapshot_id,
            Some(_) => {}
            None => newest.push((m.snapshot_id, m.url.clone())),
        }
    }
    let mut summary = CaptureSummary {
        pages: newest.len(),
        ..CaptureSummary::default()
    };
    for (snapshot, url) in newest {
        let Ok(target) = url::Url::parse(&url) else {
            summary.failed.push((snapshot, format!("not a url: {url}")));
            continue;
        };
        let request = crawler::RenderRequest {
            url: target,
            policy: Arc::clone(&policy),
            allow_url: None,
            screenshot: true,
        };
        match renderer.render_again_if_failed(&extractor, request).await {
            Ok(mut rendered) => {
                let page = rendered.to_store(crawler::SnapshotId(snapshot.0 as u64));
                let shot = page.screenshot.is_some();
                let row = crawler::new_render(page)?;
                store
                    .insert_render(&row)
                    .await
                    .map_err(store_err("storing a screenshot"))?;
                if shot {
                    summary.captured += 1;
                    if let Some(tsa) = tsa {
                        match stamp_screenshot(store, tsa, snapshot).await {
                            Ok(Some(Stamped::New(_) | Stamped::Already)) => summary.stamped += 1,
                            Ok(_) => {}
                            Err(e @ Error::Timestamp { .. }) => {
                                summary.unstamped.push((snapshot, chain(&e)));
                            }
                            Err(e) => return Err(e),
                        }
                    }
                } else {
                    summary
                        .failed
                        .push((snapshot, "the screenshot was over its byte cap".to_owned()));
                }
            }
            Err(e) => summary.failed.push((snapshot, e.to_string())),
        }
    }
    tracing::info!(%case, pages = summary.pages, captured = summary.captured, stamped = summary.stamped, "case captured");
    Ok(summary)
}

/// What [`stamp_case`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaseStamps {
    /// Snapshots stamped now, with the stamped time.
    pub stamped: Vec<(SnapshotId, DateTime<Utc>)>,
    /// Screenshots stamped now, by their snapshot, with the stamped time.
    pub screenshots: Vec<(SnapshotId, DateTime<Utc>)>,
    /// Snapshots the TSA could not stamp, with why (the others were still tried).
    pub failed: Vec<(SnapshotId, String)>,
}

impl CaseStamps {
    /// What `cases stamp` prints: each snapshot stamped by the TSA at `tsa`, then the
    /// counts (the failures, with why, are the caller's to show).
    pub fn text(&self, case: CaseId, tsa: &str) -> String {
        let mut text = String::new();
        for (snapshot, at) in &self.stamped {
            text.push_str(&format!(
                "snapshot {snapshot}: stamped {} by {tsa}\n",
                at.to_rfc3339()
            ));
        }
        for (snapshot, at) in &self.screenshots {
            text.push_str(&format!(
                "snapshot {snapshot}: screenshot stamped {} by {tsa}\n",
                at.to_rfc3339()
            ));
        }
        text.push_str(&format!(
            "case {case}: {} snapshot(s) and {} screenshot(s) stamped, {} failed\n",
            self.stamped.len(),
            self.screenshots.len(),
            self.failed.len()
        ));
        text
    }
}

/// Stamps every snapshot of case `case` that has no token from `tsa` yet, one at a time,
/// and every newest screenshot of its snapshots that has none (`cases stamp`). One
/// failure is recorded and the rest still tried.
///
/// # Errors
/// [`Error::is_not_found`] for an unknown case; a database failure.
pub async fn stamp_case(store: &Store, tsa: &Tsa, case: CaseId) -> Result<CaseStamps> {
    let todo = store
        .unstamped_case_snapshots(case, tsa.url())
        .await
        .map_err(store_err("listing the case's unstamped snapshots"))?;
    let mut out = CaseStamps::default();
    for (snapshot, sha256) in todo {
        match stamp_hash(store, tsa, snapshot, &sha256).await {
            Ok(Stamped::New(at)) => out.stamped.push((snapshot, at)),
            Ok(Stamped::Already | Stamped::Empty) => {}
            Err(e @ Error::Timestamp { .. }) => out.failed.push((snapshot, chain(&e))),
            Err(e) => return Err(e),
        }
    }
    // The case's screenshots too (a screenshot may be newer than its snapshot's token).
    let view = case_view(store, case).await?;
    for (snapshot, _) in view.snapshots() {
        match stamp_screenshot(store, tsa, snapshot).await {
            Ok(Some(Stamped::New(at))) => out.screenshots.push((snapshot, at)),
            Ok(_) => {}
            Err(e @ Error::Timestamp { .. }) => out.failed.push((snapshot, chain(&e))),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
