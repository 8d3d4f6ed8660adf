//! Cases: the listing's cursor as text and a case's evidence package as a zip download.

use axum::response::Response;
use store::{CaseCursor, CaseId};

use crate::error::WebResult;
use crate::state::AdminState;

/// A listing cursor as text: `<last_seen_at RFC 3339>,<id>`.
pub(crate) fn format_cursor(c: &CaseCursor) -> String {
    format!("{},{}", c.last_seen_at.to_rfc3339(), c.id)
}

pub(crate) fn parse_cursor(s: &str) -> Option<CaseCursor> {
    let (at, id) = s.rsplit_once(',')?;
    Some(CaseCursor {
        last_seen_at: chrono::DateTime::parse_from_rfc3339(at).ok()?.to_utc(),
        id: id.parse().ok()?,
    })
}

/// The evidence package of case `id` as a zip download: what the case page's link and
/// `GET /api/v1/cases/{id}/evidence` answer, the package `copyhound cases evidence` writes.
pub(crate) async fn evidence_zip(state: &AdminState, id: CaseId) -> WebResult<Response> {
    // Written on a blocking thread (`package_zip`): the runtime goes on serving meanwhile.
    let zip = evidence::package::package_zip(state.store(), id).await?;
    Ok(crate::render::attachment(
        zip,
        "application/zip",
        &format!("case-{id}-evidence.zip"),
    ))
}
