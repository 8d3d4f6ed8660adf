//! Reports export, the figures the dashboard charts, and a queued job's progress.

use std::io::Write;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use store::{CaseStatus, JobId, JobQueue, LicensedRows, ReportFilter, WorkId};
use utoipa::ToSchema;

use super::cases::Status;
use super::{ApiError, ApiPath, ApiQuery, ApiResult, ApiUser, ErrorBody};
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
            pipeline::ReportFormat::Csv,
            "text/csv; charset=utf-8",
            "csv",
        ),
        "jsonl" => (
            pipeline::ReportFormat::Jsonl,
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
    match pipeline::export_reports(state.store(), &filter, format, &mut out).await {
        Ok(_) => {}
        Err(pipeline::Error::Write(e)) if e.kind() == std::io::ErrorKind::FileTooLarge => {
            return Err(ApiError(WebError::bad(format!(
                "the export is over {} MiB: filter it (status, work) or run \
                 `copyhound reports export`",
                MAX_EXPORT_BYTES >> 20
            ))));
        }
        Err(e) => return Err(e.into()),
    }
    let mut response = out.0.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&format!("attachment; filename=\"copyhound-report.{ext}\""))
            .map_err(WebError::internal)?,
    );
    Ok(response)
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

/// The figures (their schema is written by hand: the analytics crate's types are not the
/// API's to annotate).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub(crate) struct StatsOut(analytics::Stats);

impl utoipa::PartialSchema for StatsOut {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .description(Some(
                "The figures, as `copyhound stats --json` prints them: `window`, \
                 `detections` (per day), `top_sites`, `exposure` (per work), `funnel`, \
                 `licensed`, `crawl_health`",
            ))
            .property("window", utoipa::openapi::ObjectBuilder::new())
            .property("detections", utoipa::openapi::ObjectBuilder::new())
            .property("top_sites", utoipa::openapi::ArrayBuilder::new())
            .property("exposure", utoipa::openapi::ArrayBuilder::new())
            .property("funnel", utoipa::openapi::ObjectBuilder::new())
            .property("licensed", utoipa::openapi::ObjectBuilder::new())
            .property("crawl_health", utoipa::openapi::ArrayBuilder::new())
            .required("window")
            .required("detections")
            .required("funnel")
            .into()
    }
}

impl ToSchema for StatsOut {}

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
    Ok(Json(StatsOut(stats)))
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
