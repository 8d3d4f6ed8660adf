//! Suspect sites crawled on their schedules: watching a site (its settings checked as a
//! crawl would check them), its crawl job, and the crawl that job runs.
//!
//! Two crawls of one site never overlap: the schedule's job and "crawl now" share one
//! de-duplication key, so at most one site job is queued or running, and the job resumes the
//! site's unfinished crawl (after a crash or a shutdown) instead of starting another.

use std::time::Duration;

use chrono::{DateTime, Utc};
use crawler::{CrawlSettings, StoreCrawl};
use jobs::{Error, Job, Result, store_err};
use store::{
    CrawlDetail, CrawlFilter, CrawlId, Crawls, Enqueued, JobId, JobQueue, JobStatus, NewJob,
    NewSite, Site, SiteSchedule, SiteSettings, Store, SuspectSites, site_schedule_name,
};
use url::Url;

/// The job that crawls site `site`: queued by its schedule and by [`crawl_site_now`], with one
/// de-duplication key for both (`schedule:site:ID`).
///
/// # Errors
/// Never in practice (the job serialises).
pub fn site_job(site: i64) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::CrawlSite { site })?
        .dedupe_key(site_job_key(site))
        .max_attempts(3))
}

fn site_job_key(site: i64) -> String {
    format!("schedule:{}", site_schedule_name(site))
}

/// Whether job `job` is a crawl of `site` still waiting for a worker or running. Until a
/// worker starts it, the site has no crawl to show for it: a page that just queued it asks
/// this to show it is on its way. An unknown job, or another site's, is `false`.
///
/// # Errors
/// A database failure.
pub async fn site_job_live(store: &Store, site: i64, job: JobId) -> Result<bool> {
    let job = match store.job(job).await {
        Ok(job) => job,
        Err(store::Error::NotFound { .. }) => return Ok(false),
        Err(e) => return Err(store_err("reading the site's crawl job")(e)),
    };
    Ok(
        job.dedupe_key.as_deref() == Some(site_job_key(site).as_str())
            && matches!(job.status, JobStatus::Queued | JobStatus::Running),
    )
}

/// A site's schedule on `cron` (UTC), queueing [`site_job`].
pub fn site_schedule(cron: &str) -> SiteSchedule {
    SiteSchedule {
        cron: cron.to_owned(),
        job: site_job,
    }
}

/// The crawler settings of a site's crawls: `base` (the configuration) with the site's own
/// budget, depth, delay, concurrency and URL patterns.
pub fn site_crawl_settings(base: &CrawlSettings, site: &SiteSettings) -> CrawlSettings {
    let mut s = base.clone();
    s.max_pages = Some(u64::from(site.max_pages));
    s.max_depth = site.max_depth;
    s.politeness.delay = Duration::from_millis(u64::from(site.delay_ms));
    s.politeness.per_host_concurrency = site.concurrency;
    s.scope.include.clone_from(&site.include);
    s.scope.exclude.clone_from(&site.exclude);
    // A site marked render renders every page; the configuration may render all sites.
    s.render.enabled |= site.render;
    s
}

/// Checks that a crawl of `start_url` with `settings` over `base` can run (the URL, the
/// patterns, the ranges), as the crawl itself would, before anything is stored.
///
/// # Errors
/// [`Error::Crawler`] naming what is wrong.
pub fn check_site(base: &CrawlSettings, start_url: &str, settings: &SiteSettings) -> Result<()> {
    checked_start_url(base, start_url, settings).map(drop)
}

/// [`check_site`], returning the start URL as parsed: stored so, `http://2130706433/` is
/// `http://127.0.0.1/`, one site, as the crawl's pages will name it.
fn checked_start_url(
    base: &CrawlSettings,
    start_url: &str,
    settings: &SiteSettings,
) -> Result<Url> {
    let url = parse_start_url(start_url)?;
    check_literal_address(base, &url)?;
    site_crawl_settings(base, settings).check(std::slice::from_ref(&url))?;
    Ok(url)
}

/// Refuses a start URL whose host is an address the crawler would refuse to fetch, saying
/// which setting allows it. A host name is looked up by [`watch_site`]
/// ([`check_resolved_address`]).
fn check_literal_address(base: &CrawlSettings, url: &Url) -> Result<()> {
    crawler::safety::AddressPolicy::new(&base.fetch.safety).check_literal(url)?;
    Ok(())
}

/// Refuses a start URL whose host name resolves only to addresses the crawler would refuse
/// (a name pointing at 127.0.0.1), as [`check_literal_address`] does for one written as an
/// address: the crawl would fail on every page. A name that does not resolve (yet) is
/// accepted; each fetch checks where it points then.
async fn check_resolved_address(base: &CrawlSettings, url: &Url) -> Result<()> {
    let Some(url::Host::Domain(host)) = url.host() else {
        return Ok(());
    };
    match crawler::AddressPolicy::new(&base.fetch.safety)
        .resolve(host)
        .await
    {
        Err(refused @ crawler::Error::AddressRefused { .. }) => Err(refused.into()),
        Ok(_) | Err(_) => Ok(()),
    }
}

/// Why the crawler's address policy in `base` refuses a stored site's start URL (a
/// loopback or private address written as its host), or `None` when it does not: a site
/// added while the policy allowed it stops being crawled when the policy changes.
pub fn address_refused(base: &CrawlSettings, start_url: &str) -> Option<String> {
    let url = Url::parse(start_url).ok()?;
    check_literal_address(base, &url)
        .err()
        .map(|e| e.to_string())
}

fn parse_start_url(start_url: &str) -> Result<Url> {
    let url = Url::parse(start_url).map_err(|e| {
        Error::Page(format!(
            "start url {start_url:?}: {e}; give an absolute http(s) url, e.g. \
             https://example.com/book/1/"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(Error::Page(format!(
            "start url {start_url:?}: give an absolute http(s) url, e.g. https://example.com/book/1/"
        )));
    }
    Ok(url)
}

/// Starts watching a site, its settings checked over `base` first.
///
/// # Errors
/// As [`check_site`]; the store's refusals ([`store::Error::Conflict`] for a site watched
/// already, [`store::Error::InvalidInput`] for a bad schedule).
pub async fn watch_site(store: &Store, base: &CrawlSettings, site: &NewSite) -> Result<Site> {
    let url = checked_start_url(base, &site.start_url, &site.settings)?;
    check_resolved_address(base, &url).await?;
    let site = NewSite {
        start_url: url.into(),
        ..site.clone()
    };
    store
        .watch_site(&site)
        .await
        .map_err(store_err("watching the site"))
}

/// A new site's crawl settings when nothing else is given: the configured crawler's (a
/// crawl without a page limit gets 1000 pages a run).
pub fn default_site_settings(base: &CrawlSettings) -> SiteSettings {
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    SiteSettings {
        max_pages: base.max_pages.map_or(1000, clamp),
        max_depth: base.max_depth,
        delay_ms: clamp(u64::try_from(base.politeness.delay.as_millis()).unwrap_or(u64::MAX)),
        concurrency: base.politeness.per_host_concurrency,
        include: Vec::new(),
        exclude: Vec::new(),
        render: false,
    }
}

/// Queues a crawl of `site` now. [`Enqueued::Duplicate`] when its crawl is queued or running
/// already (scheduled or asked for), which then stays the only one.
///
/// # Errors
/// An unknown site ([`Error::is_not_found`]), a database failure.
pub async fn crawl_site_now(store: &Store, site: i64) -> Result<Enqueued> {
    store
        .site(site)
        .await
        .map_err(store_err("reading the site"))?;
    let job = site_job(site).map_err(store_err("queueing the site's crawl"))?;
    store
        .enqueue(&job)
        .await
        .map_err(store_err("queueing the site's crawl"))
}

/// The crawl a run of `site` works on: its unfinished crawl (`queued` or `running`) if there
/// is one, resumed with the settings stored with it, or else a new crawl from the site's
/// start URL with [`site_crawl_settings`]. Returns the crawl and whether it was resumed.
///
/// # Errors
/// An unknown or unwatched site ([`Error::is_not_found`]), settings that cannot run, a
/// database failure.
pub async fn site_crawl(
    store: &Store,
    base: &CrawlSettings,
    site: i64,
) -> Result<(CrawlId, CrawlSettings, bool)> {
    let site = store
        .site(site)
        .await
        .map_err(store_err("reading the site"))?;
    let unfinished = store
        .crawls(&CrawlFilter::Unfinished(site.id), None, 1)
        .await
        .map_err(store_err("looking for the site's unfinished crawl"))?;
    if let Some(crawl) = unfinished.first() {
        let settings = StoreCrawl::stored_settings(store, crawl.id).await?;
        return Ok((crawl.id, settings, true));
    }
    let url = parse_start_url(&site.start_url)?;
    let settings = site_crawl_settings(base, &site.settings);
    // Checks the settings against the seed before it stores anything; a crawl another
    // process started meanwhile (a worker's job and `sites crawl` at once) is resumed.
    let (id, created) = StoreCrawl::create_unless_unfinished(store, &settings, &[url]).await?;
    if !created {
        let settings = StoreCrawl::stored_settings(store, id).await?;
        return Ok((id, settings, true));
    }
    Ok((id, settings, false))
}

/// One crawl of a site, as its history shows it (`sites show`, the admin UI's site page).
#[derive(Debug, Clone, serde::Serialize)]
pub struct SiteCrawl {
    /// The crawl's id.
    pub id: i64,
    /// `queued`, `running`, `done`, `failed` or `cancelled`.
    pub status: &'static str,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Distinct URLs whose text was stored.
    pub pages: u64,
    /// Frontier entries still to fetch (progress while it runs).
    pub queued: u64,
    /// Entries that failed for good or ended with an HTTP error status.
    pub errors: u64,
    /// Those failures by kind.
    pub errors_by_kind: std::collections::BTreeMap<String, u64>,
    pub bytes: u64,
    /// Pages per second from start to finish (or to now while it runs).
    pub pages_per_second: Option<f64>,
    /// Matches found on its pages.
    pub matches: u64,
    /// The cases its matches were filed in.
    pub cases: Vec<i64>,
}

impl SiteCrawl {
    fn new(d: CrawlDetail) -> Self {
        let c = &d.crawl;
        let seconds = c
            .started_at
            .map(|s| (c.finished_at.unwrap_or_else(Utc::now) - s).num_milliseconds() as f64 / 1e3);
        SiteCrawl {
            id: c.id.0,
            status: c.status.as_str(),
            started_at: c.started_at,
            finished_at: c.finished_at,
            pages: c.pages_fetched,
            queued: d.frontier.queued + d.frontier.claimed,
            errors: c.pages_failed,
            bytes: c.bytes,
            pages_per_second: seconds
                .filter(|s| *s > 0.0)
                .map(|s| (c.pages_fetched as f64 / s * 10.0).round() / 10.0),
            matches: d.matches,
            errors_by_kind: d.errors,
            cases: d.cases,
        }
    }
}

/// The site's `limit` newest crawls, newest first, each counted afresh from what is stored
/// (so a running crawl shows how far it has got).
///
/// # Errors
/// A database failure.
pub async fn site_history(store: &Store, site: i64, limit: u32) -> Result<Vec<SiteCrawl>> {
    let crawls = store
        .crawls(&CrawlFilter::Site(site), None, limit)
        .await
        .map_err(store_err("listing the site's crawls"))?;
    let mut history = Vec::with_capacity(crawls.len());
    for c in crawls {
        let detail = store
            .crawl_detail(c.id)
            .await
            .map_err(store_err("reading a crawl of the site"))?;
        history.push(SiteCrawl::new(detail));
    }
    Ok(history)
}

/// One crawl's progress, counted afresh from what is stored (so a running crawl shows how
/// far it has got), as [`site_history`] shows each crawl.
///
/// # Errors
/// [`jobs::Error::is_not_found`] for an unknown crawl; a database failure.
pub async fn crawl_progress(store: &Store, crawl: store::CrawlId) -> Result<SiteCrawl> {
    let detail = store
        .crawl_detail(crawl)
        .await
        .map_err(store_err("reading the crawl"))?;
    Ok(SiteCrawl::new(detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SiteSettings {
        SiteSettings {
            max_pages: 7,
            max_depth: 2,
            delay_ms: 1500,
            concurrency: 3,
            include: vec!["/book/".into()],
            exclude: vec!["\\?page=".into()],
            render: false,
        }
    }

    #[test]
    fn a_sites_settings_override_the_configured_ones_and_nothing_else() {
        let base = CrawlSettings::default();
        let s = site_crawl_settings(&base, &settings());
        assert_eq!(s.max_pages, Some(7));
        assert_eq!(s.max_depth, 2);
        assert_eq!(s.politeness.delay, Duration::from_millis(1500));
        assert_eq!(s.politeness.per_host_concurrency, 3);
        assert_eq!(s.scope.include, vec!["/book/".to_owned()]);
        assert_eq!(s.scope.exclude, vec!["\\?page=".to_owned()]);
        assert_eq!(
            s.fetch.safety.allow_private,
            base.fetch.safety.allow_private
        );
        assert_eq!(s.max_attempts, base.max_attempts);
    }

    #[test]
    fn a_site_on_an_address_the_crawler_refuses_is_refused_in_every_spelling() {
        let base = CrawlSettings::default();
        for url in [
            "http://127.0.0.1/",
            "http://0x7f000001/",
            "http://2130706433/",
            "http://127.1/",
            "http://0177.0.0.1:8080/book/",
            "http://localhost/",
            "http://books.localhost/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://169.254.169.254/latest/",
            "http://[::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            let err = check_site(&base, url, &settings()).unwrap_err().to_string();
            assert!(
                err.contains("allow_private") && err.contains("allowed_networks"),
                "{url}: {err}"
            );
        }
        check_site(&base, "http://93.184.215.14/", &settings()).unwrap();
        let mut allowed = base.clone();
        allowed.fetch.safety.allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
        check_site(&allowed, "http://2130706433/", &settings()).unwrap();
        check_site(&allowed, "http://10.1.2.3/", &settings()).unwrap_err();
        allowed.fetch.safety.allow_private = true;
        check_site(&allowed, "http://10.1.2.3/", &settings()).unwrap();
    }

    #[test]
    fn a_site_is_checked_as_its_crawl_would_be() {
        let base = CrawlSettings::default();
        check_site(&base, "https://pirate.example/book/", &settings()).unwrap();
        let bad_pattern = SiteSettings {
            include: vec!["(".into()],
            ..settings()
        };
        let err = check_site(&base, "https://pirate.example/", &bad_pattern).unwrap_err();
        assert!(matches!(err, Error::Crawler(_)), "{err}");
        for url in ["ftp://pirate.example/", "pirate.example/book", "https://"] {
            assert!(check_site(&base, url, &settings()).is_err(), "{url}");
        }
    }

    #[test]
    fn the_schedule_and_crawl_now_share_one_key() {
        let job = site_job(42).unwrap();
        let scheduled = (site_schedule("0 3 * * *").job)(42).unwrap();
        assert_eq!(format!("{job:?}"), format!("{scheduled:?}"));
        assert!(format!("{job:?}").contains("schedule:site:42"));
    }
}

/// Changes to a site's crawl settings, each `None` keeping the value it changes: what the
/// command line's and the forms' fields give.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteSettingsChange {
    /// Pages fetched per crawl at most.
    pub max_pages: Option<u32>,
    /// Link hops followed from the start URL at most.
    pub max_depth: Option<u32>,
    /// Milliseconds between two fetches from the site.
    pub delay_ms: Option<u32>,
    /// Fetches from the site at once.
    pub concurrency: Option<u32>,
    /// New include patterns (an empty list removes them).
    pub include: Option<Vec<String>>,
    /// New exclude patterns (an empty list removes them).
    pub exclude: Option<Vec<String>>,
    /// Render every page in the headless browser, or not.
    pub render: Option<bool>,
}

impl SiteSettingsChange {
    /// `settings` with these changes.
    #[must_use]
    pub fn applied_to(&self, settings: &SiteSettings) -> SiteSettings {
        SiteSettings {
            max_pages: self.max_pages.unwrap_or(settings.max_pages),
            max_depth: self.max_depth.unwrap_or(settings.max_depth),
            delay_ms: self.delay_ms.unwrap_or(settings.delay_ms),
            concurrency: self.concurrency.unwrap_or(settings.concurrency),
            include: self
                .include
                .clone()
                .unwrap_or_else(|| settings.include.clone()),
            exclude: self
                .exclude
                .clone()
                .unwrap_or_else(|| settings.exclude.clone()),
            render: self.render.unwrap_or(settings.render),
        }
    }

    /// A new site's settings: these changes over [`default_site_settings`].
    #[must_use]
    pub fn new_site(&self, base: &CrawlSettings) -> SiteSettings {
        self.applied_to(&default_site_settings(base))
    }
}

/// What to change of a watched site; `None` keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteEdit {
    /// A new name.
    pub name: Option<String>,
    /// A new start URL, on the same origin.
    pub start_url: Option<String>,
    /// Its crawl settings.
    pub settings: SiteSettingsChange,
    /// A new schedule (cron, UTC); `Some(None)` removes it.
    pub schedule: Option<Option<String>>,
}

/// Changes watched site `id`, the new settings checked over `base` as a crawl would check
/// them before anything is stored.
///
/// # Errors
/// An unknown site ([`Error::is_not_found`]), settings a crawl would refuse (as
/// [`check_site`]), the store's refusals (a start URL on another origin, a bad schedule).
pub async fn edit_site(
    store: &Store,
    base: &CrawlSettings,
    id: i64,
    edit: &SiteEdit,
) -> Result<Site> {
    let site = store
        .site(id)
        .await
        .map_err(store_err("reading the site"))?;
    let settings = edit.settings.applied_to(&site.settings);
    let start_url = edit.start_url.as_deref().unwrap_or(&site.start_url);
    let url = checked_start_url(base, start_url, &settings)?;
    let changes = store::SiteChanges {
        name: edit.name.clone(),
        start_url: edit.start_url.is_some().then(|| url.into()),
        settings: Some(settings),
        schedule: edit
            .schedule
            .as_ref()
            .map(|cron| cron.as_deref().map(site_schedule)),
    };
    store
        .update_site(id, &changes)
        .await
        .map_err(store_err("changing the site"))
}

#[cfg(test)]
mod edit_tests {
    use super::*;

    #[test]
    fn a_change_keeps_what_it_does_not_name() {
        let base = SiteSettings {
            max_pages: 10,
            max_depth: 2,
            delay_ms: 500,
            concurrency: 1,
            include: vec!["/book/".to_owned()],
            exclude: vec!["/ads/".to_owned()],
            render: false,
        };
        assert_eq!(SiteSettingsChange::default().applied_to(&base), base);
        let change = SiteSettingsChange {
            max_pages: Some(20),
            include: Some(Vec::new()),
            ..SiteSettingsChange::default()
        };
        let changed = change.applied_to(&base);
        assert_eq!(changed.max_pages, 20);
        assert!(changed.include.is_empty());
        assert_eq!(changed.exclude, base.exclude);
        assert_eq!(changed.delay_ms, 500);
    }
}

/// What a site's schedule says next, as messages end: `; next crawl TIME (CRON)`,
/// `; schedule CRON paused` or `; no schedule`.
pub fn schedule_note(site: &Site) -> String {
    match (&site.schedule, site.next_crawl_at) {
        (Some(cron), Some(at)) => format!(
            "; next crawl {} ({cron})",
            at.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        (Some(cron), None) => format!("; schedule {cron} paused"),
        _ => "; no schedule".to_owned(),
    }
}

/// The watched sites as `sites list` prints them, or a hint when there are none.
#[derive(Debug)]
pub struct SiteTable<'a>(pub &'a [Site]);

impl std::fmt::Display for SiteTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return writeln!(
                f,
                "no watched sites: add one with `copyhound sites add URL`"
            );
        }
        writeln!(f, "id\tstate\tschedule\tnext crawl\tname\tstart url")?;
        for s in self.0 {
            let next = s.next_crawl_at.map_or("-".to_owned(), |t| {
                t.format("%Y-%m-%d %H:%M:%S").to_string()
            });
            writeln!(
                f,
                "{}\t{}\t{}\t{next}\t{}\t{}",
                s.id,
                if s.enabled { "active" } else { "paused" },
                s.schedule.as_deref().unwrap_or("-"),
                s.name,
                s.start_url
            )?;
        }
        Ok(())
    }
}

/// A site with its recent crawls, as `sites show` prints it; serialised, the site's fields
/// and `crawls`.
#[derive(Debug, serde::Serialize)]
pub struct SiteSheet {
    /// The site.
    #[serde(flatten)]
    pub site: Site,
    /// Its newest crawls, newest first.
    pub crawls: Vec<SiteCrawl>,
}

/// Site `id` with its `limit` newest crawls ([`Error::is_not_found`] for an unknown site).
pub async fn site_sheet(store: &Store, id: i64, limit: u32) -> Result<SiteSheet> {
    let site = store
        .site(id)
        .await
        .map_err(store_err("reading the site"))?;
    let crawls = site_history(store, id, limit).await?;
    Ok(SiteSheet { site, crawls })
}

impl std::fmt::Display for SiteSheet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let site = &self.site;
        let s = &site.settings;
        writeln!(f, "site {}: {}", site.id, site.name)?;
        writeln!(f, "  start url   {}", site.start_url)?;
        let state = if site.enabled { "active" } else { "paused" };
        writeln!(f, "  state       {state}{}", schedule_note(site))?;
        if let Some(cron) = &site.schedule {
            let words = jobs::cron_words::cron_in_words(cron, jobs::cron_words::Language::En);
            writeln!(f, "  schedule    {words}")?;
        }
        writeln!(
            f,
            "  settings    {} pages, depth {}, {} ms between fetches, {} at once",
            s.max_pages, s.max_depth, s.delay_ms, s.concurrency
        )?;
        for (what, patterns) in [("include", &s.include), ("exclude", &s.exclude)] {
            if !patterns.is_empty() {
                writeln!(f, "  {what:<11} {}", patterns.join("  "))?;
            }
        }
        if self.crawls.is_empty() {
            return writeln!(f, "  no crawls yet: `copyhound sites crawl {}`", site.id);
        }
        writeln!(f, "  crawls (newest first):")?;
        for c in &self.crawls {
            writeln!(f, "    {c}")?;
        }
        Ok(())
    }
}

/// One line: `crawl ID STATUS STARTED: N pages, E errors (by kind), B bytes, …, cases …`.
impl std::fmt::Display for SiteCrawl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self;
        let joined = |parts: Vec<String>, sep: &str| parts.join(sep);
        let errors = joined(
            c.errors_by_kind
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect(),
            ", ",
        );
        let started = c
            .started_at
            .map_or("-".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string());
        write!(
            f,
            "crawl {} {} {started}: {} pages",
            c.id, c.status, c.pages
        )?;
        if c.queued > 0 {
            write!(f, " ({} to go)", c.queued)?;
        }
        write!(f, ", {} errors", c.errors)?;
        if !errors.is_empty() {
            write!(f, " ({errors})")?;
        }
        write!(f, ", {} bytes", c.bytes)?;
        if let Some(p) = c.pages_per_second {
            write!(f, ", {p} pages/s")?;
        }
        let cases = if c.cases.is_empty() {
            "none".to_owned()
        } else {
            joined(c.cases.iter().map(i64::to_string).collect(), " ")
        };
        write!(f, ", {} matches, cases {cases}", c.matches)
    }
}

/// Pauses (`enabled: false`) or resumes a site's schedule; what `sites pause|resume`
/// says of it.
pub async fn set_site_enabled(store: &Store, id: i64, enabled: bool) -> Result<String> {
    let site = store
        .set_site_enabled(id, enabled)
        .await
        .map_err(store_err("changing the site"))?;
    Ok(if enabled {
        format!(
            "site {} ({}) resumed{}",
            site.id,
            site.name,
            schedule_note(&site)
        )
    } else {
        format!("site {} ({}) paused", site.id, site.name)
    })
}

/// What `sites crawl --enqueue` says of the crawl job of site `id`, as text or (`json`)
/// one object.
pub fn queued_crawl_text(id: i64, queued: &Enqueued, json: bool) -> String {
    let (job, new) = match queued {
        Enqueued::New(job) => (job, true),
        Enqueued::Duplicate(job) => (job, false),
    };
    if json {
        serde_json::json!({"site": id, "job": job.0, "already_queued": !new}).to_string()
    } else if new {
        format!("crawl of site {id} queued (job {job}); run `copyhound worker` to crawl it")
    } else {
        format!("site {id} already has a crawl queued or running (job {job})")
    }
}
