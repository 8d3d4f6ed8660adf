//! Suspect sites: the sites a rights team watches. A watched site is a `sites` row (one per
//! origin, the row a crawl of that origin's pages files its cases under) with a start URL,
//! its crawl settings and, when it has a schedule, a `job_schedules` row named
//! [`site_schedule_name`] written in the same transaction. The job that schedule queues is
//! the caller's (the pipeline's "crawl this site" job): the store only keeps it.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::{durable_tx, read_pool};
use crate::evidence::origin;
use crate::queue::NewJob;
use crate::queue::schedule::upsert_schedule;
use crate::{Error, Result, Store};

/// The crawl settings a watched site keeps (the rest come from the configuration).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SiteSettings {
    /// Pages fetched per crawl at most.
    pub max_pages: u32,
    /// Link hops followed from the start URL at most.
    pub max_depth: u32,
    /// Milliseconds between two fetches from the site.
    pub delay_ms: u32,
    /// Fetches from the site at once.
    pub concurrency: u32,
    /// If not empty, a URL must match one of these regular expressions.
    pub include: Vec<String>,
    /// A URL matching any of these regular expressions is left out.
    pub exclude: Vec<String>,
    /// Render every page in the headless browser (`sites add/set --render`).
    #[serde(default)]
    pub render: bool,
}

/// A site to watch ([`SuspectSites::watch_site`]).
#[derive(Debug, Clone)]
pub struct NewSite {
    /// Where its crawls start (http or https); its origin is the site.
    pub start_url: String,
    /// A name for people; the host when absent.
    pub name: Option<String>,
    /// Its crawl settings.
    pub settings: SiteSettings,
    /// Its schedule, if any.
    pub schedule: Option<SiteSchedule>,
}

/// When a site is crawled by itself, and the job that crawls it.
#[derive(Debug, Clone)]
pub struct SiteSchedule {
    /// Cron expression, UTC (five fields, or six with seconds first).
    pub cron: String,
    /// The job queued at each fire time, made from the site's id (known once the site is
    /// stored, in the same transaction).
    pub job: fn(i64) -> Result<NewJob>,
}

/// A watched site.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Site {
    /// Its row id (`sites.id`, the `site_id` of its crawls and cases).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// `scheme://host[:port]/`.
    pub base_url: String,
    /// `host[:port]`, as cases show it.
    pub host: String,
    /// Where its crawls start.
    pub start_url: String,
    /// Paused when false: its schedule does not fire.
    pub enabled: bool,
    /// Its crawl settings.
    pub settings: SiteSettings,
    /// Its cron expression, if it has a schedule.
    pub schedule: Option<String>,
    /// The schedule's next fire time (while enabled).
    pub next_crawl_at: Option<DateTime<Utc>>,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// When its settings last changed.
    pub updated_at: DateTime<Utc>,
}

/// Changes to a watched site ([`SuspectSites::update_site`]); `None` keeps a value.
#[derive(Debug, Clone, Default)]
pub struct SiteChanges {
    /// A new name.
    pub name: Option<String>,
    /// A new start URL (on the same origin).
    pub start_url: Option<String>,
    /// New crawl settings.
    pub settings: Option<SiteSettings>,
    /// `Some(None)` removes the schedule.
    pub schedule: Option<Option<SiteSchedule>>,
}

/// The `job_schedules` name of site `id`'s schedule.
pub fn site_schedule_name(id: i64) -> String {
    format!("site:{id}")
}

/// The registry of watched sites.
pub trait SuspectSites {
    /// Starts watching the origin of `site.start_url` (a site a crawl already reached becomes
    /// watched, keeping its id, so its cases stay its own).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a start URL that is not http(s) or a schedule that does not
    /// parse; [`Error::Conflict`] when the origin is watched already.
    fn watch_site(&self, site: &NewSite) -> impl Future<Output = Result<Site>> + Send;

    /// One watched site.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an id that is not a watched site.
    fn site(&self, id: i64) -> impl Future<Output = Result<Site>> + Send;

    /// Every watched site, by id.
    fn watched_sites(&self) -> impl Future<Output = Result<Vec<Site>>> + Send;

    /// Changes a watched site's name, start URL, settings or schedule.
    ///
    /// # Errors
    /// As [`SuspectSites::watch_site`]; [`Error::InvalidInput`] for a start URL on another
    /// origin; [`Error::NotFound`] for an unknown site.
    fn update_site(
        &self,
        id: i64,
        changes: &SiteChanges,
    ) -> impl Future<Output = Result<Site>> + Send;

    /// Pauses (`false`) or resumes a site: its schedule stops or starts firing.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown site.
    fn set_site_enabled(&self, id: i64, enabled: bool)
    -> impl Future<Output = Result<Site>> + Send;
}

#[derive(sqlx::FromRow)]
struct SiteRow {
    id: i64,
    name: String,
    base_url: String,
    host: String,
    start_url: Option<String>,
    enabled: bool,
    max_pages: i32,
    max_depth: i32,
    delay_ms: i32,
    concurrency: i32,
    include_patterns: String,
    exclude_patterns: String,
    render: bool,
    schedule_cron: Option<String>,
    next_run_at: Option<i64>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

fn count(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

impl TryFrom<SiteRow> for Site {
    type Error = Error;

    fn try_from(r: SiteRow) -> Result<Site> {
        let patterns = |json: &str| -> Result<Vec<String>> {
            serde_json::from_str(json).map_err(|e| {
                Error::InvalidInput(format!("site {}: stored patterns {json:?}: {e}", r.id))
            })
        };
        Ok(Site {
            settings: SiteSettings {
                max_pages: count(r.max_pages),
                max_depth: count(r.max_depth),
                delay_ms: count(r.delay_ms),
                concurrency: count(r.concurrency),
                include: patterns(&r.include_patterns)?,
                exclude: patterns(&r.exclude_patterns)?,
                render: r.render,
            },
            start_url: r.start_url.unwrap_or_else(|| r.base_url.clone()),
            next_crawl_at: if r.enabled {
                r.next_run_at.map(crate::queue::from_millis)
            } else {
                None
            },
            id: r.id,
            name: r.name,
            base_url: r.base_url,
            host: r.host,
            enabled: r.enabled,
            schedule: r.schedule_cron,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// The site columns with the schedule's next fire time.
const SELECT_SITES: &str = "SELECT s.id, s.name, s.base_url, s.host, s.start_url, s.enabled, \
     s.max_pages, s.max_depth, s.delay_ms, s.concurrency, s.include_patterns, \
     s.exclude_patterns, s.render, s.schedule_cron, j.next_run_at, s.created_at, s.updated_at \
     FROM sites s LEFT JOIN job_schedules j ON j.name = 'site:' || s.id";

/// The origin of an http(s) URL, or why it is refused.
fn checked_origin(url: &str) -> Result<(String, String)> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "start url {url:?}: give an absolute http(s) url, e.g. https://example.com/book/1/"
            ))
        })?;
    if rest.is_empty() || rest.starts_with(['/', '?', '#']) || url.contains(char::is_whitespace) {
        return Err(Error::InvalidInput(format!(
            "start url {url:?} has no host"
        )));
    }
    Ok(origin(url))
}

fn check_settings(s: &SiteSettings) -> Result<()> {
    for (what, value) in [("max pages", s.max_pages), ("concurrency", s.concurrency)] {
        if value == 0 || i32::try_from(value).is_err() {
            return Err(Error::InvalidInput(format!(
                "{what} {value}: give a number from 1 to {}",
                i32::MAX
            )));
        }
    }
    for (what, value) in [("max depth", s.max_depth), ("delay", s.delay_ms)] {
        if i32::try_from(value).is_err() {
            return Err(Error::InvalidInput(format!(
                "{what} {value}: give at most {}",
                i32::MAX
            )));
        }
    }
    Ok(())
}

/// Site `id`'s delay after each cron time: spread over a tenth of the schedule's period, at
/// most five minutes, the same for the site every time (a thousand sites on `0 3 * * *`
/// start over five minutes, not in one second).
fn site_jitter_ms(id: i64, cron: &str) -> Result<i64> {
    let parsed = crate::queue::schedule::parse_cron(cron)?;
    let first = crate::queue::schedule::next_fire(&parsed, cron, Utc::now())?;
    let second = crate::queue::schedule::next_fire(&parsed, cron, first)?;
    let spread = ((second - first).num_milliseconds() / 10).clamp(0, 300_000);
    if spread == 0 {
        return Ok(0);
    }
    // A multiplicative hash of the id, so that neighbouring ids land far apart.
    let mixed = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    Ok((mixed % spread as u64) as i64)
}

fn json(patterns: &[String]) -> String {
    serde_json::to_string(patterns).unwrap_or_else(|_| "[]".to_owned())
}

/// `$query` with a site's settings bound next, in column order (`max_pages`, `max_depth`,
/// `delay_ms`, `concurrency`, `include_patterns`, `exclude_patterns`); the values were
/// checked by [`check_settings`] to fit.
macro_rules! bind_settings {
    ($query:expr, $s:expr) => {{
        let s: &SiteSettings = $s;
        $query
            .bind(s.max_pages as i32)
            .bind(s.max_depth as i32)
            .bind(s.delay_ms as i32)
            .bind(s.concurrency as i32)
            .bind(json(&s.include))
            .bind(json(&s.exclude))
    }};
}

/// Writes (or removes) site `$id`'s schedule inside transaction `$tx`.
macro_rules! write_site_schedule {
    ($tx:expr, $id:expr, $schedule:expr, $now:expr) => {{
        let name = site_schedule_name($id);
        let schedule: Option<&SiteSchedule> = $schedule;
        match schedule {
            Some(s) => {
                let job = (s.job)($id)?;
                upsert_schedule!(&mut *$tx, &name, &s.cron, &job, $now);
                let jitter_ms = site_jitter_ms($id, &s.cron)?;
                sqlx::query(
                    "UPDATE job_schedules SET jitter_ms = $2, next_run_at = $3 WHERE name = $1",
                )
                .bind(&name)
                .bind(jitter_ms)
                .bind(crate::queue::schedule::next_jittered(
                    &s.cron, $now, jitter_ms,
                )?)
                .execute(&mut *$tx)
                .await?;
                sqlx::query("UPDATE sites SET schedule_cron = $2 WHERE id = $1")
                    .bind($id)
                    .bind(&s.cron)
                    .execute(&mut *$tx)
                    .await?;
            }
            None => {
                sqlx::query("DELETE FROM job_schedules WHERE name = $1")
                    .bind(&name)
                    .execute(&mut *$tx)
                    .await?;
                sqlx::query("UPDATE sites SET schedule_cron = NULL WHERE id = $1")
                    .bind($id)
                    .execute(&mut *$tx)
                    .await?;
            }
        }
    }};
}

impl SuspectSites for Store {
    #[instrument(skip_all, fields(url = %site.start_url))]
    async fn watch_site(&self, site: &NewSite) -> Result<Site> {
        let (base_url, host) = checked_origin(&site.start_url)?;
        check_settings(&site.settings)?;
        if let Some(s) = &site.schedule {
            crate::queue::schedule::parse_cron(&s.cron)?;
        }
        let name = site.name.clone().unwrap_or_else(|| host.clone());
        let s = &site.settings;
        let now = Utc::now();
        let id = durable_tx!(self, |tx| {
            let known: Option<(i64, bool)> =
                sqlx::query_as("SELECT id, watched FROM sites WHERE base_url = $1")
                    .bind(&base_url)
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some((id, true)) = known {
                return Err(Error::Conflict(format!(
                    "{host} is watched already, as site {id}: change it with `sites set {id}`"
                )));
            }
            let insert = sqlx::query_scalar(
                "INSERT INTO sites (name, base_url, host, start_url, watched, enabled, \
                 max_pages, max_depth, delay_ms, concurrency, include_patterns, \
                 exclude_patterns, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, TRUE, TRUE, $5, $6, $7, $8, $9, $10, $11, $11) \
                 ON CONFLICT (base_url) DO UPDATE SET name = $1, start_url = $4, watched = TRUE, \
                 enabled = TRUE, max_pages = $5, max_depth = $6, delay_ms = $7, \
                 concurrency = $8, include_patterns = $9, exclude_patterns = $10, \
                 updated_at = $11 RETURNING id",
            )
            .bind(&name)
            .bind(&base_url)
            .bind(&host)
            .bind(&site.start_url);
            let id: i64 = bind_settings!(insert, s)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
            sqlx::query("UPDATE sites SET render = $2 WHERE id = $1")
                .bind(id)
                .bind(s.render)
                .execute(&mut *tx)
                .await?;
            write_site_schedule!(tx, id, site.schedule.as_ref(), now);
            id
        });
        self.site(id).await
    }

    async fn site(&self, id: i64) -> Result<Site> {
        let sql = sqlx::AssertSqlSafe(format!("{SELECT_SITES} WHERE s.id = $1 AND s.watched"));
        let row: Option<SiteRow> = read_pool!(self, |pool| {
            sqlx::query_as(sql).bind(id).fetch_optional(pool).await?
        });
        row.ok_or_else(|| Error::not_found("site", id))?.try_into()
    }

    async fn watched_sites(&self) -> Result<Vec<Site>> {
        let sql = sqlx::AssertSqlSafe(format!("{SELECT_SITES} WHERE s.watched ORDER BY s.id"));
        let rows: Vec<SiteRow> =
            read_pool!(self, |pool| sqlx::query_as(sql).fetch_all(pool).await?);
        rows.into_iter().map(Site::try_from).collect()
    }

    #[instrument(skip(self, changes))]
    async fn update_site(&self, id: i64, changes: &SiteChanges) -> Result<Site> {
        let site = self.site(id).await?;
        if let Some(url) = &changes.start_url
            && checked_origin(url)?.0 != site.base_url
        {
            return Err(Error::InvalidInput(format!(
                "start url {url:?} is not on {}: add another site for another origin",
                site.base_url
            )));
        }
        if let Some(s) = &changes.settings {
            check_settings(s)?;
        }
        if let Some(Some(s)) = &changes.schedule {
            crate::queue::schedule::parse_cron(&s.cron)?;
        }
        let s = changes.settings.as_ref().unwrap_or(&site.settings);
        let now = Utc::now();
        durable_tx!(self, |tx| {
            let update = sqlx::query(
                "UPDATE sites SET name = $2, start_url = $3, max_pages = $4, max_depth = $5, \
                 delay_ms = $6, concurrency = $7, include_patterns = $8, exclude_patterns = $9, \
                 updated_at = $10 WHERE id = $1",
            )
            .bind(id)
            .bind(changes.name.as_ref().unwrap_or(&site.name))
            .bind(changes.start_url.as_ref().unwrap_or(&site.start_url));
            bind_settings!(update, s)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            sqlx::query("UPDATE sites SET render = $2 WHERE id = $1")
                .bind(id)
                .bind(s.render)
                .execute(&mut *tx)
                .await?;
            if let Some(schedule) = &changes.schedule {
                write_site_schedule!(tx, id, schedule.as_ref(), now);
                if !site.enabled {
                    sqlx::query("UPDATE job_schedules SET enabled = FALSE WHERE name = $1")
                        .bind(site_schedule_name(id))
                        .execute(&mut *tx)
                        .await?;
                }
            }
        });
        self.site(id).await
    }

    #[instrument(skip(self))]
    async fn set_site_enabled(&self, id: i64, enabled: bool) -> Result<Site> {
        self.site(id).await?;
        let now = Utc::now();
        durable_tx!(self, |tx| {
            sqlx::query("UPDATE sites SET enabled = $2, updated_at = $3 WHERE id = $1")
                .bind(id)
                .bind(enabled)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            // A resumed schedule fires at its next time from now, not at the ones missed.
            let schedule: Option<(String, i64)> =
                sqlx::query_as("SELECT cron, jitter_ms FROM job_schedules WHERE name = $1")
                    .bind(site_schedule_name(id))
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some((cron, jitter_ms)) = schedule {
                let next = crate::queue::schedule::next_jittered(&cron, now, jitter_ms)?;
                sqlx::query(
                    "UPDATE job_schedules SET enabled = $2, next_run_at = $3, updated_at = $4 \
                     WHERE name = $1",
                )
                .bind(site_schedule_name(id))
                .bind(enabled)
                .bind(next)
                .bind(crate::queue::millis(now))
                .execute(&mut *tx)
                .await?;
            }
        });
        self.site(id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_url_must_be_http_with_a_host() {
        assert_eq!(
            checked_origin("https://pirate.example/book/1/").unwrap(),
            (
                "https://pirate.example/".to_owned(),
                "pirate.example".to_owned()
            )
        );
        assert_eq!(
            checked_origin("http://127.0.0.1:8080/a").unwrap().1,
            "127.0.0.1:8080"
        );
        for bad in ["ftp://x/", "pirate.example", "https:///a", "https://a b/"] {
            assert!(checked_origin(bad).is_err(), "{bad}");
        }
    }
}
