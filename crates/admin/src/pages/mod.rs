//! The UI's pages: each module parses its requests, calls `pipeline`/`analytics`/the store,
//! and renders its templates under `web/templates/admin`.

mod accounts;
pub(crate) mod candidates;
pub(crate) mod cases;
pub(crate) mod dashboard;
pub(crate) mod notices;
mod operations;
pub(crate) mod queued;
mod settings;
pub(crate) mod sites;
mod webhooks;
pub(crate) mod works;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

use crate::state::AdminState;

/// Every page route; the work upload's body may be `upload_limit` bytes.
pub(crate) fn routes(upload_limit: usize) -> Router<AdminState> {
    Router::new()
        .route("/login", get(accounts::login_form).post(accounts::login))
        .route("/logout", post(accounts::logout))
        .route("/account", get(settings::account))
        .route("/account/password", post(settings::change_password))
        .route("/account/language", post(accounts::set_language))
        .route("/account/alerts", post(settings::save_alerts))
        .route(
            "/settings",
            get(settings::settings).post(settings::save_settings),
        )
        .route("/", get(dashboard::dashboard))
        .route("/analytics", get(dashboard::analytics))
        .route("/cases", get(cases::queue))
        .route("/cases/bulk", post(cases::bulk))
        .route("/cases/{id}", get(cases::detail))
        .route("/cases/{id}/status", post(cases::set_status))
        .route("/cases/{id}/undo", post(cases::undo))
        .route("/cases/{id}/compare", get(cases::compare))
        .route("/cases/{id}/evidence.zip", get(cases::evidence))
        .route("/cases/{id}/notices", post(notices::create))
        .route("/cases/{id}/recheck", post(notices::recheck_now))
        .route("/cases/{id}/capture", post(cases::capture))
        .route("/snapshots/{id}/raw", get(cases::snapshot_raw))
        .route(
            "/snapshots/{id}/screenshot.png",
            get(cases::snapshot_screenshot),
        )
        .route("/snapshots/{id}", get(cases::snapshot_page))
        .route("/snapshots/{id}/text", get(cases::snapshot_text))
        .route("/notices", get(notices::list))
        .route("/notices/{id}", get(notices::show).post(notices::edit))
        .route("/notices/{id}/download", get(notices::download))
        .route("/notices/{id}/sent", post(notices::sent))
        .route("/notices/{id}/send", post(notices::send))
        .route(
            "/works",
            get(works::list)
                .post(works::register)
                .layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route("/works/{id}", get(works::detail).post(works::edit))
        .route("/works/{id}/discover", post(works::discover_now))
        .route("/sites", get(sites::list).post(sites::add))
        .route("/sites/{id}", get(sites::detail).post(sites::edit))
        .route("/sites/{id}/crawl", post(sites::crawl_now))
        .route("/sites/{id}/enabled", post(sites::set_enabled))
        .route("/licensed", post(sites::licensed))
        .route("/candidates", get(candidates::list))
        .route("/candidates/{domain}", get(candidates::detail))
        .route("/candidates/{domain}/approve", post(candidates::approve))
        .route("/candidates/{domain}/ignore", post(candidates::ignore))
        .route("/users", get(accounts::users).post(accounts::add_user))
        .route("/users/{id}", post(accounts::update_user))
        .route("/users/{id}/tokens", post(accounts::issue_token))
        .route("/tokens/{id}/revoke", post(accounts::revoke_token))
        .route("/webhooks", get(webhooks::list).post(webhooks::add))
        .route("/webhooks/{id}/enabled", post(webhooks::set_enabled))
        .route("/webhooks/{id}/delete", post(webhooks::delete))
        .route("/webhooks/{id}/test", post(webhooks::test))
        .route("/jobs", get(operations::jobs))
        .route("/jobs/{id}/retry", post(operations::retry))
        .route("/audit", get(operations::audit))
}
