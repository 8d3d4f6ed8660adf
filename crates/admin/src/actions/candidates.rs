//! Candidates that discovery found: approved as a watched site or ignored, audited.

use store::{AuditLog, Candidate, CrawlId, Site};

use crate::error::WebResult;
use crate::state::AdminState;

/// Approves a candidate as `copyhound discover approve` does (a watched site whose crawl of
/// the found URLs is queued) and records who did; the page and the API both approve
/// through this.
pub(crate) async fn approve_candidate(
    state: &AdminState,
    actor: &str,
    domain: &str,
    schedule: Option<&str>,
) -> WebResult<(Site, CrawlId)> {
    let (site, crawl) =
        discovery::approve(state.store(), &state.settings().crawler, domain, schedule).await?;
    state
        .store()
        .record_audit(
            actor,
            "candidate.approve",
            Some("site"),
            Some(site.id),
            &serde_json::json!({
                "domain": site.host, "schedule": site.schedule, "crawl": crawl.0,
            }),
        )
        .await?;
    Ok((site, crawl))
}

/// Ignores a domain as `copyhound discover ignore` does (never probed again) and records who
/// did; the page and the API both ignore through this.
pub(crate) async fn ignore_candidate(
    state: &AdminState,
    actor: &str,
    domain: &str,
) -> WebResult<Candidate> {
    let candidate = discovery::ignore(state.store(), domain).await?;
    state
        .store()
        .record_audit(
            actor,
            "candidate.ignore",
            None,
            None,
            &serde_json::json!({ "domain": candidate.domain }),
        )
        .await?;
    Ok(candidate)
}
