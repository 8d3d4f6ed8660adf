//! Reports export, the figures the dashboard charts, and a queued job's progress.

use std::collections::BTreeMap;
use std::io::Write;

use axum::Json;
use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use store::{CaseStatus, JobId, JobQueue, LicensedRows, ReportFilter, WorkId};
use utoipa::ToSchema;

use super::cases::Status;
use super::common::{ApiError, ApiPath, ApiQuery, ApiResult, ApiUser, ErrorBody};
use crate::error::WebError;
use crate::state::AdminState;

/// Which matches to export, and how.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ExportQuery {
    /// `csv` (default) or `jsonl`.
    format: Option<String>,
    /// Only matches whose case is in this status.
    status: Option<Status>,
    /// Only matches of this work.
    work: Option<i64>,
    /// Licensed matches: `exclude` (default), `include` or `only`.
    licensed: Option<String>,
}

/// The largest export answered in one response; beyond it, `copyhound reports export`
/// streams to a file.
const MAX_EXPORT_BYTES: usize = 256 << 20;

/// A `Vec` that refuses to grow past a limit, so one export cannot take the server's memory.
struct Capped(Vec<u8>);

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_EXPORT_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "export too large",
            ));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[utoipa::path(
    operation_id = "export_reports",
    get, path = "/api/v1/reports", tag = "reports",
    params(ExportQuery),
    responses(
        (status = 200, description = "Every selected match: one row per (page, chapter) with scores, offsets and evidence hashes",
         content((String = "text/csv"), (String = "application/x-ndjson"))),
        (status = 400, description = "Bad query, or an export over 256 MiB (use `copyhound reports export`)", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
    )
)]
pub(crate) async fn export(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiQuery(q): ApiQuery<ExportQuery>,
) -> ApiResult<Response> {
    let (format, content_type, ext) = match q.format.as_deref().unwrap_or("csv") {
        "csv" => (
            casework::ReportFormat::Csv,
            "text/csv; charset=utf-8",
            "csv",
        ),
        "jsonl" => (
            casework::ReportFormat::Jsonl,
            "application/x-ndjson",
            "jsonl",
        ),
        other => {
            return Err(ApiError(WebError::bad(format!(
                "format: csv or jsonl, not {other:?}"
            ))));
        }
    };
    let licensed = match q.licensed.as_deref().unwrap_or("exclude") {
        "exclude" => LicensedRows::Exclude,
        "include" => LicensedRows::Include,
        "only" => LicensedRows::Only,
        other => {
            return Err(ApiError(WebError::bad(format!(
                "licensed: exclude, include or only, not {other:?}"
            ))));
        }
    };
    let filter = ReportFilter {
        status: q.status.map(CaseStatus::from),
        work: q.work.map(WorkId),
        licensed,
    };
    let mut out = Capped(Vec::new());
    match casework::export_reports(state.store(), &filter, format, &mut out).await {
        Ok(_) => {}
        Err(jobs::Error::Write(e)) if e.kind() == std::io::ErrorKind::FileTooLarge => {
            return Err(ApiError(WebError::bad(format!(
                "the export is over {} MiB: filter it (status, work) or run \
                 `copyhound reports export`",
                MAX_EXPORT_BYTES >> 20
            ))));
        }
        Err(e) => return Err(e.into()),
    }
    Ok(crate::render::attachment(
        out.0,
        content_type,
        &format!("copyhound-report.{ext}"),
    ))
}

/// The window and size of the figures.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct StatsQuery {
    /// Count from this UTC day (`YYYY-MM-DD`); all time when absent.
    since: Option<chrono::NaiveDate>,
    /// Rows of the top-sites and exposure tables, 1 to 100 (default 10).
    top: Option<u32>,
}

/// Every figure, as `copyhound stats --json` prints it and the dashboard charts it.
///
/// The API's own types, field for field those of `analytics::Stats`: a generated client gets
/// a class for each part, and a change in the analytics crate does not change the API's
/// contract unseen (the conversions below stop compiling).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct StatsOut {
    window: WindowOut,
    detections: DetectionsOut,
    /// The sites copying the most chapters.
    top_sites: Vec<TopSiteOut>,
    /// The works copied the most, as they stand now.
    exposure: Vec<WorkExposureOut>,
    funnel: FunnelOut,
    licensed: LicensedOut,
    /// Crawls per site.
    crawl_health: Vec<CrawlHealthOut>,
}

/// The time the time-based figures cover.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WindowOut {
    /// The first UTC day covered; all time when null.
    since: Option<chrono::NaiveDate>,
    /// When the figures were computed.
    now: chrono::DateTime<chrono::Utc>,
}

/// Matches per day, every day of the window present.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DetectionsOut {
    /// One point per day, oldest first.
    days: Vec<DayPointOut>,
    /// Matches off licensed domains over the window.
    total: u64,
    /// Matches on licensed domains over the window.
    licensed_total: u64,
    /// New copies off licensed domains over the window.
    copies_total: u64,
}

/// One day of the detections chart.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DayPointOut {
    /// The UTC day the copies were fetched.
    day: chrono::NaiveDate,
    /// Matches off licensed domains (each re-fetch of a page counts again).
    matches: u64,
    /// Matches on licensed domains.
    licensed: u64,
    /// New copies off licensed domains: (page, chapter) pairs first matched this day.
    copies: u64,
}

/// A site among those copying the most.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TopSiteOut {
    site_id: i64,
    /// Its host.
    site: String,
    /// Chapters it copies, over its cases.
    chapters: u64,
    /// Works it copies.
    works: u64,
    /// Its pages with copies.
    pages: u64,
}

/// How exposed a work is.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WorkExposureOut {
    work_id: i64,
    title: String,
    /// Sites copying it.
    sites: u64,
    /// Pages copying it.
    pages: u64,
    /// Chapters it has.
    chapters: u64,
    /// Distinct chapters copied somewhere.
    chapters_copied: u64,
    /// `chapters_copied / chapters`, 0 to 1.
    share_copied: f64,
}

/// Cases first seen in the window and how far review took them, each step counting the
/// cases that ever reached it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FunnelOut {
    found: u64,
    confirmed: u64,
    notice_sent: u64,
    removed: u64,
    dismissed: u64,
    /// Cases by the status they have now.
    by_status: BTreeMap<String, u64>,
    /// Median seconds from the first copy seen to the first removal over the removed
    /// cases; null when none was removed.
    median_seconds_to_removal: Option<i64>,
    /// How many removals that median is over.
    removals: u64,
}

/// Matches on licensed domains: allowed copies, reported apart.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LicensedOut {
    /// Licensed matches in the window.
    matches: u64,
    /// Licensed matches per work (all time).
    by_work: Vec<LicensedWorkOut>,
}

/// A work's licensed matches.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LicensedWorkOut {
    work_id: i64,
    title: String,
    matches: u64,
}

/// A site's crawls in the window.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CrawlHealthOut {
    site_id: i64,
    /// Its host.
    site: String,
    /// Crawls created in the window.
    crawls: u64,
    /// Pages whose text was stored.
    pages: u64,
    /// Entries that failed for good or ended with an HTTP error status.
    errors: u64,
    /// `errors / (pages + errors)`, 0 to 1.
    error_rate: f64,
    /// The failures by kind (`timeout`, `http_404`, ...).
    errors_by_kind: BTreeMap<String, u64>,
    /// Body bytes fetched.
    bytes: u64,
    /// Pages per second over the time the crawls ran; null before any started.
    pages_per_second: Option<f64>,
}

impl From<analytics::Stats> for StatsOut {
    fn from(s: analytics::Stats) -> Self {
        StatsOut {
            window: WindowOut {
                since: s.window.since,
                now: s.window.now,
            },
            detections: DetectionsOut {
                days: s
                    .detections
                    .days
                    .into_iter()
                    .map(|d| DayPointOut {
                        day: d.day,
                        matches: d.matches,
                        licensed: d.licensed,
                        copies: d.copies,
                    })
                    .collect(),
                total: s.detections.total,
                licensed_total: s.detections.licensed_total,
                copies_total: s.detections.copies_total,
            },
            top_sites: s
                .top_sites
                .into_iter()
                .map(|t| TopSiteOut {
                    site_id: t.site_id.0,
                    site: t.site,
                    chapters: t.chapters,
                    works: t.works,
                    pages: t.pages,
                })
                .collect(),
            exposure: s
                .exposure
                .into_iter()
                .map(|w| WorkExposureOut {
                    work_id: w.work_id.0,
                    title: w.title,
                    sites: w.sites,
                    pages: w.pages,
                    chapters: w.chapters,
                    chapters_copied: w.chapters_copied,
                    share_copied: w.share_copied,
                })
                .collect(),
            funnel: FunnelOut {
                found: s.funnel.found,
                confirmed: s.funnel.confirmed,
                notice_sent: s.funnel.notice_sent,
                removed: s.funnel.removed,
                dismissed: s.funnel.dismissed,
                by_status: s
                    .funnel
                    .by_status
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
                median_seconds_to_removal: s.funnel.median_seconds_to_removal,
                removals: s.funnel.removals,
            },
            licensed: LicensedOut {
                matches: s.licensed.matches,
                by_work: s
                    .licensed
                    .by_work
                    .into_iter()
                    .map(|w| LicensedWorkOut {
                        work_id: w.work_id.0,
                        title: w.title,
                        matches: w.matches,
                    })
                    .collect(),
            },
            crawl_health: s
                .crawl_health
                .into_iter()
                .map(|c| CrawlHealthOut {
                    site_id: c.site_id.0,
                    site: c.site,
                    crawls: c.crawls,
                    pages: c.pages,
                    errors: c.errors,
                    error_rate: c.error_rate,
                    errors_by_kind: c.errors_by_kind,
                    bytes: c.bytes,
                    pages_per_second: c.pages_per_second,
                })
                .collect(),
        }
    }
}

#[utoipa::path(
    operation_id = "get_stats",
    get, path = "/api/v1/stats", tag = "reports",
    params(StatsQuery),
    responses(
        (status = 200, description = "The figures", body = StatsOut),
        (status = 400, description = "Bad query", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
    )
)]
pub(crate) async fn stats(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiQuery(q): ApiQuery<StatsQuery>,
) -> ApiResult<Json<StatsOut>> {
    let top = match q.top {
        None => 10,
        Some(n @ 1..=100) => n,
        Some(n) => return Err(ApiError(WebError::bad(format!("top: 1 to 100, not {n}")))),
    };
    let window = analytics::Window::new(q.since, chrono::Utc::now())?;
    let stats = analytics::stats(state.store(), &window, top).await?;
    Ok(Json(stats.into()))
}

/// A queued job: an import, a crawl, a re-check.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct JobOut {
    id: i64,
    /// What it does (`ImportWork`, `CrawlSite`, ...).
    kind: String,
    /// `queued`, `running`, `done` or `dead` (failed on every attempt).
    status: String,
    attempts: u32,
    max_attempts: u32,
    /// The last failed attempt's error.
    last_error: Option<String>,
    created_at: chrono::DateTime<chrono::Utc>,
    finished_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[utoipa::path(
    operation_id = "get_job",
    get, path = "/api/v1/jobs/{id}", tag = "reports",
    params(("id" = i64, Path, description = "The job's id")),
    responses(
        (status = 200, description = "The job", body = JobOut),
        (status = 400, description = "Bad id", body = ErrorBody),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 404, description = "No such job", body = ErrorBody),
    )
)]
pub(crate) async fn job(
    State(state): State<AdminState>,
    _user: ApiUser,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<JobOut>> {
    let job = state.store().job(JobId(id)).await?;
    Ok(Json(JobOut {
        id: job.id.0,
        kind: job.kind,
        status: job.status.as_str().to_owned(),
        attempts: job.attempts,
        max_attempts: job.max_attempts,
        last_error: job.last_error,
        created_at: job.created_at,
        finished_at: job.finished_at,
    }))
}
