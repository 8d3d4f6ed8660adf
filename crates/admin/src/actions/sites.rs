//! Suspect sites: watched with their limits, edited, crawled now, paused and resumed, each
//! audited.

use store::{AuditLog, NewSite, Site, SiteSettings, SuspectSites};

use crate::error::{WebError, WebResult};
use crate::state::AdminState;

/// A site's crawl limits as given; `None` takes the configured default.
#[derive(Debug, Default)]
pub(crate) struct SiteLimits {
    pub max_pages: Option<u32>,
    pub max_depth: Option<u32>,
    pub delay_ms: Option<u32>,
    pub concurrency: Option<u32>,
}

fn limit(field: &str, value: Option<u32>, default: u32, max: u32) -> WebResult<u32> {
    match value {
        None => Ok(default),
        Some(n) if n <= max => Ok(n),
        Some(n) => Err(WebError::bad(format!(
            "{field}: a whole number up to {max}, not {n}"
        ))),
    }
}

/// A new site's crawl settings: the configured defaults with `limits` over them. Every
/// limit out of range is reported, with the form field it came from (`max_pages`, ...).
pub(crate) fn site_settings(
    state: &AdminState,
    limits: &SiteLimits,
) -> Result<SiteSettings, Vec<(&'static str, WebError)>> {
    let base = crawling::sites::default_site_settings(&state.settings().crawler);
    let mut refused = Vec::new();
    let mut checked = |field: &'static str, label: &str, value: Option<u32>, default, max| {
        limit(label, value, default, max).unwrap_or_else(|e| {
            refused.push((field, e));
            default
        })
    };
    let settings = SiteSettings {
        max_pages: checked(
            "max_pages",
            "max. pages",
            limits.max_pages,
            base.max_pages,
            1_000_000,
        ),
        max_depth: checked(
            "max_depth",
            "max. depth",
            limits.max_depth,
            base.max_depth,
            100,
        ),
        delay_ms: checked("delay_ms", "delay", limits.delay_ms, base.delay_ms, 600_000),
        concurrency: checked(
            "concurrency",
            "concurrency",
            limits.concurrency,
            base.concurrency,
            64,
        ),
        ..base
    };
    if refused.is_empty() {
        Ok(settings)
    } else {
        Err(refused)
    }
}

/// Starts watching a site with its schedule and limits (checked as a crawl would check
/// them) and records who did; the pages and the API both add sites through this.
pub(crate) async fn watch(
    state: &AdminState,
    actor: &str,
    start_url: &str,
    name: Option<String>,
    schedule: Option<String>,
    limits: SiteLimits,
) -> WebResult<Site> {
    let settings = site_settings(state, &limits).map_err(|mut all| all.remove(0).1)?;
    let site = NewSite {
        start_url: start_url.trim().to_owned(),
        name,
        settings,
        schedule: schedule.as_deref().map(crawling::site_schedule),
    };
    let site = crawling::watch_site(state.store(), &state.settings().crawler, &site).await?;
    state
        .store()
        .record_audit(
            actor,
            "site.watch",
            Some("site"),
            Some(site.id),
            &serde_json::json!({ "start_url": site.start_url, "schedule": site.schedule }),
        )
        .await?;
    Ok(site)
}

/// Changes a watched site as `copyhound sites set` does (`crawling::sites::edit_site`) and
/// records who did, with the site before and after; the pages and the API both edit sites
/// through this.
pub(crate) async fn edit_site(
    state: &AdminState,
    actor: &str,
    id: i64,
    edit: &crawling::sites::SiteEdit,
) -> WebResult<Site> {
    let before = state.store().site(id).await?;
    let site =
        crawling::sites::edit_site(state.store(), &state.settings().crawler, id, edit).await?;
    let summary = |s: &Site| {
        serde_json::json!({
            "name": s.name, "start_url": s.start_url, "schedule": s.schedule,
            "settings": s.settings,
        })
    };
    state
        .store()
        .record_audit(
            actor,
            "site.edit",
            Some("site"),
            Some(id),
            &serde_json::json!({ "before": summary(&before), "after": summary(&site) }),
        )
        .await?;
    Ok(site)
}

/// Queues a crawl of the site now (its unfinished crawl resumes) and records who asked.
pub(crate) async fn queue_crawl(
    state: &AdminState,
    actor: &str,
    id: i64,
) -> WebResult<store::JobId> {
    let enqueued = crawling::crawl_site_now(state.store(), id).await?;
    state
        .store()
        .record_audit(
            actor,
            "site.crawl_now",
            Some("site"),
            Some(id),
            &serde_json::json!({ "job": enqueued.id() }),
        )
        .await?;
    Ok(enqueued.id())
}

/// Pauses (its schedule stops firing) or resumes a site and records who did.
pub(crate) async fn set_site_enabled(
    state: &AdminState,
    actor: &str,
    id: i64,
    enabled: bool,
) -> WebResult<Site> {
    let site = state.store().set_site_enabled(id, enabled).await?;
    state
        .store()
        .record_audit(
            actor,
            if enabled { "site.resume" } else { "site.pause" },
            Some("site"),
            Some(id),
            &serde_json::json!({}),
        )
        .await?;
    Ok(site)
}
