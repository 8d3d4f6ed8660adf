//! The command line's integration tests, one binary: `common` (running the binary on a store)
//! and `browser` (a WebDriver session on Chromium) are compiled once, and the build links one
//! binary instead of one a file.

#[path = "../browser/mod.rs"]
mod browser;
#[path = "../common/mod.rs"]
mod common;

mod bench_cli;
mod cases_cli;
mod check_cli;
mod crawl_cli;
mod crawl_kill;
mod demo_cli;
mod deploy;
mod detection_cli;
mod e2e_browser;
mod e2e_dashboard;
mod e2e_settings;
mod evidence_cli;
mod gc_cli;
mod notices_cli;
mod ops_cli;
mod quality_cli;
mod render_cli;
mod serve_cli;
mod settings_cli;
mod sites_cli;
mod snapshots_cli;
mod stats_cli;
mod storage_cli;
mod users_cli;
mod worker_kill;
mod works_cli;
