//! Screenshots of a case's pages taken when a reviewer asks ("take a screenshot now" on the
//! case page, [`Job::CaptureCase`], `copyhound cases capture ID`): each page of the case,
//! its newest snapshot's final URL, rendered now in the headless browser under the crawl's
//! address rules, and stored as a render of that snapshot (with the time it was taken), so
//! the case page, the evidence package and the case's WARC show it. With a time-stamping
//! authority each screenshot is stamped as soon as it is stored, as snapshots are.

use std::sync::Arc;

use store::{CaseId, JobQueue, Renders, SnapshotId, Store};

use crate::cases::case_view;
use crate::error::{Error, Result, store_err};
use crate::job::{Job, chain};
use crate::timestamps::{Stamped, stamp_screenshot};

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

/// Queues [`Job::CaptureCase`] for `case`.
///
/// # Errors
/// The store's.
pub async fn queue_capture(store: &Store, case: CaseId) -> Result<()> {
    let job = capture_job(case).map_err(store_err("queueing a capture"))?;
    store
        .enqueue(&job)
        .await
        .map(drop)
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
    let extractor = Arc::new(crawler::Extractor::new(&settings.extract)?);
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
        match renderer.render(&extractor, request).await {
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
