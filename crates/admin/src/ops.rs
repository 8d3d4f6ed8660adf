//! What operators and orchestrators ask a running copyhound, without logging in:
//!
//! - `GET /healthz`: the process is up and serving (a liveness probe; touches nothing).
//! - `GET /readyz`: it can do its work: the database answers, its schema is this build's
//!   migrations exactly, and the matcher index is loaded (when this process runs match jobs).
//!   503 with the failing check named otherwise, as JSON.
//! - `GET /metrics`: Prometheus figures (OpenMetrics text). Counts every process shares are
//!   read from the store at scrape time, a few cheap queries over pre-aggregated counters:
//!   pages fetched, bytes, fetch errors by kind (`crawls` rows; a running crawl counted from
//!   its frontier), matches (`detections_daily`), cases by status (the `cases_funnel`
//!   covering index), jobs not done by queue, kind and state, and how long each queue's
//!   oldest due job has waited (the queue's latency). What only this process knows
//!   comes from it: job durations by kind ([`jobs::metrics`]) and the matcher index's
//!   size. With [`OpsSettings::metrics_token`] set, `/metrics` wants
//!   `Authorization: Bearer TOKEN`; without it, keep the port internal.
//!
//! `copyhound worker --metrics-listen` serves these three alone ([`serve_ops`]).

use std::future::Future;
use std::sync::atomic::AtomicU64;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use store::{CaseStatus, OpsReads, StatsReads};

use crate::state::{AdminSettings, AdminState, OpsSettings};

/// The media type of the figures.
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub(crate) fn routes() -> Router<AdminState> {
    let [health, ready, metrics_path] = crate::server::OPS_PATHS;
    Router::new()
        .route(health, get(healthz))
        .route(ready, get(readyz))
        .route(metrics_path, get(metrics))
}

/// Serves the operations endpoints alone on `listener` until `shutdown` resolves (a worker
/// process's probes and figures).
///
/// # Errors
/// The listener failed.
pub async fn serve_ops(
    listener: tokio::net::TcpListener,
    store: store::Store,
    ops: OpsSettings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = AdminState::new(
        store,
        AdminSettings {
            ops,
            ..AdminSettings::default()
        },
    );
    let limits = crate::server::ConnectionLimits::of(state.settings());
    crate::server::serve(listener, routes().with_state(state), &limits, shutdown).await
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// One readiness check: its name and what was found (`Err`: why it failed).
type Check = (&'static str, Result<String, String>);

async fn readyz(State(state): State<AdminState>) -> Response {
    let store = state.store();
    let mut checks: Vec<Check> = Vec::new();
    let reachable = store.ping().await;
    checks.push((
        "database",
        reachable
            .as_ref()
            .map(|_| format!("{} reachable", store.kind()))
            .map_err(|e| format!("{e}")),
    ));
    if reachable.is_ok() {
        let schema = match store.schema_state().await {
            Ok(s) if s.is_current() => Ok(format!("{} migrations applied", store.kind())),
            Ok(s) if !s.unknown.is_empty() => Err(format!(
                "the database has migrations this build does not know ({:?}): run the \
                 newer copyhound",
                s.unknown
            )),
            Ok(s) => Err(format!(
                "{} migrations pending: run `copyhound migrate`",
                s.pending.len()
            )),
            Err(e) => Err(format!("{e}")),
        };
        checks.push(("migrations", schema));
    }
    if let Some(analyser) = &state.settings().ops.analyser {
        checks.push((
            "index",
            match analyser.loaded() {
                Some(live) => Ok(format!("{} chapters loaded", live.matcher().index().len())),
                None => Err("the matcher index is loading".to_owned()),
            },
        ));
    }
    let ready = checks.iter().all(|(_, r)| r.is_ok());
    let body = serde_json::json!({
        "ready": ready,
        "checks": checks
            .iter()
            .map(|(name, r)| {
                let (ok, detail) = match r {
                    Ok(d) => (true, d),
                    Err(d) => (false, d),
                };
                (name.to_string(), serde_json::json!({ "ok": ok, "detail": detail }))
            })
            .collect::<serde_json::Map<_, _>>(),
    });
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

/// Whether `headers` bear the configured token (always, when none is configured).
fn authorized(ops: &OpsSettings, headers: &HeaderMap) -> bool {
    let Some(token) = ops.metrics_token.as_ref().filter(|t| !t.is_empty()) else {
        return true;
    };
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|given| {
            crate::auth::constant_time_eq(given.trim().as_bytes(), token.expose().as_bytes())
        })
}

async fn metrics(State(state): State<AdminState>, headers: HeaderMap) -> Response {
    let ops = &state.settings().ops;
    if !authorized(ops, &headers) {
        let mut response =
            (StatusCode::UNAUTHORIZED, "a bearer token is required\n").into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"copyhound metrics\""),
        );
        return response;
    }
    match gather(&state).await {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(METRICS_CONTENT_TYPE),
            )],
            text,
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "cannot gather the metrics");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot read the figures from the database: {e}\n"),
            )
                .into_response()
        }
    }
}

/// A label set of one label.
type One = [(&'static str, String); 1];

/// `u64` counts as the gauges' `i64`, saturating.
fn gauge_value(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Every figure as OpenMetrics text.
async fn gather(state: &AdminState) -> Result<String, store::Error> {
    let store = state.store();
    let crawls = store.crawl_totals(None, chrono::Utc::now()).await?;
    let cases = store.case_funnel(None).await?;
    let matches = store.match_totals().await?;
    let jobs = store.job_depth().await?;
    let waits = store.queue_wait(chrono::Utc::now()).await?;

    let mut registry = Registry::default();
    registry.register(
        "copyhound_build",
        "The running copyhound",
        Info::new([("version", env!("CARGO_PKG_VERSION"))]),
    );

    let pages = Counter::<u64>::default();
    let bytes = Counter::<u64>::default();
    let errors = Family::<One, Counter>::default();
    for site in &crawls {
        pages.inc_by(site.pages);
        bytes.inc_by(site.bytes);
        for (kind, n) in &site.errors_by_kind {
            errors.get_or_create(&[("kind", kind.clone())]).inc_by(*n);
        }
    }
    registry.register(
        "copyhound_pages_fetched",
        "Pages fetched and stored by every crawl (distinct URLs per crawl)",
        pages,
    );
    registry.register_with_unit(
        "copyhound_fetched",
        "Response body bytes stored by every crawl",
        Unit::Bytes,
        bytes,
    );
    registry.register(
        "copyhound_fetch_errors",
        "Fetches that failed for good or answered 400 or more, by kind",
        errors,
    );

    let found = Family::<One, Counter>::default();
    found
        .get_or_create(&[("licensed", "false".to_owned())])
        .inc_by(matches.matches);
    found
        .get_or_create(&[("licensed", "true".to_owned())])
        .inc_by(matches.licensed);
    registry.register(
        "copyhound_matches",
        "Matches of a page with a registered chapter, on licensed domains apart",
        found,
    );

    let stored = store.body_totals().await?;
    let bodies = Family::<One, Gauge>::default();
    let body_bytes = Family::<One, Gauge>::default();
    for (place, n, b) in [
        ("db", stored.db_bodies, stored.db_bytes),
        ("store", stored.store_bodies, stored.store_bytes),
    ] {
        let label = [("where", place.to_owned())];
        bodies.get_or_create(&label).set(gauge_value(n));
        body_bytes.get_or_create(&label).set(gauge_value(b));
    }
    registry.register(
        "copyhound_stored_bodies",
        "Page bodies kept, each once, in the database or in segments on the object store",
        bodies,
    );
    let kinds = Family::<One, Gauge>::default();
    for (kind, b) in [
        ("bodies_db", stored.db_bytes),
        ("screenshots_db", stored.screenshot_bytes),
        ("segments_live", stored.segment_live_bytes),
        (
            "segments_dead",
            stored
                .segment_bytes
                .saturating_sub(stored.segment_live_bytes),
        ),
    ] {
        kinds
            .get_or_create(&[("kind", kind.to_owned())])
            .set(gauge_value(b));
    }
    registry.register_with_unit(
        "copyhound_storage",
        "Bytes kept by kind: page bodies and screenshots in the database (uncompressed), segment \
         objects' records still pointed to and dead ones (until gc deletes or compacts them)",
        Unit::Bytes,
        kinds,
    );
    if let Some(r) = state
        .settings()
        .ops
        .retention
        .as_ref()
        .and_then(|outlook| outlook.report(store))
    {
        let frees = Family::<One, Gauge>::default();
        for (what, n) in [
            ("bodies", r.bodies),
            ("body_bytes", r.bytes),
            ("screenshots", r.screenshots),
            ("screenshot_bytes", r.screenshot_bytes),
            ("segments", r.segments_deleted + r.orphan_segments),
            ("segments_compacted", r.segments_compacted),
            ("segment_bytes", r.segment_bytes),
            ("orphan_objects", r.orphan_objects),
            ("orphan_object_bytes", r.orphan_object_bytes),
            ("texts", r.texts),
        ] {
            frees
                .get_or_create(&[("what", what.to_owned())])
                .set(gauge_value(n));
        }
        registry.register(
            "copyhound_retention_removable",
            "What gc would remove under [retention] at its last dry run (run in the background, \
             again when 10 minutes old): bodies, screenshots and their bytes, segments deleted \
             or compacted and their object bytes, orphan segment objects and their bytes, page \
             texts",
            frees,
        );
    }
    registry.register_with_unit(
        "copyhound_stored_body",
        "Uncompressed bytes of the page bodies kept, in the database or on the object store",
        Unit::Bytes,
        body_bytes,
    );

    let by_status = Family::<One, Gauge>::default();
    for status in CaseStatus::ALL {
        let n = cases.by_status.get(status.as_str()).copied().unwrap_or(0);
        by_status
            .get_or_create(&[("status", status.as_str().to_owned())])
            .set(gauge_value(n));
    }
    registry.register("copyhound_cases", "Cases by their status now", by_status);

    let depth = Family::<[(&'static str, String); 3], Gauge>::default();
    for row in jobs {
        depth
            .get_or_create(&[
                ("queue", row.queue),
                ("kind", row.kind),
                ("status", row.status),
            ])
            .set(gauge_value(row.jobs));
    }
    registry.register(
        "copyhound_jobs",
        "Jobs not done (queued, running, dead), by queue, kind and state",
        depth,
    );

    let wait = Family::<One, Gauge<f64, AtomicU64>>::default();
    for (queue, waited) in waits {
        wait.get_or_create(&[("queue", queue)])
            .set(waited.as_secs_f64());
    }
    registry.register_with_unit(
        "copyhound_queue_wait",
        "How long the job due longest in each queue has waited for a worker",
        Unit::Seconds,
        wait,
    );

    jobs::metrics::job_metrics().register(&mut registry);

    if let Some(analyser) = &state.settings().ops.analyser {
        let loaded = Gauge::<i64>::default();
        let chapters = Gauge::<i64>::default();
        let memory = Gauge::<i64>::default();
        if let Some(live) = analyser.loaded() {
            let stats = live.matcher().index().stats();
            loaded.set(1);
            chapters.set(gauge_value(stats.chapters as u64));
            memory.set(gauge_value(stats.memory.total() as u64));
        }
        registry.register(
            "copyhound_index_loaded",
            "1 once this process's matcher index is loaded",
            loaded,
        );
        registry.register(
            "copyhound_index_chapters",
            "Chapters in this process's matcher index",
            chapters,
        );
        registry.register_with_unit(
            "copyhound_index_memory",
            "Heap held by this process's matcher index",
            Unit::Bytes,
            memory,
        );
        // Which works the index holds: `K/N` for `worker --shard K/N`, `0/1` for all.
        let shard = Family::<One, Gauge>::default();
        shard
            .get_or_create(&[("shard", analyser.shard().to_string())])
            .set(1);
        registry.register(
            "copyhound_index_shard",
            "The shard of the works this process's matcher index holds (K/N; 0/1: all)",
            shard,
        );
    }

    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)
        .expect("writing to a String cannot fail");
    Ok(text)
}
