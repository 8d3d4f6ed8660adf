//! The admin UI's and API's integration tests, one binary: `common` (a store with users and a case,
//! the router driven in-process) is compiled once, and the build links one binary instead of
//! one a file.

#[path = "../common/mod.rs"]
mod common;

mod api;
mod candidates;
mod case_page;
mod chinese;
mod connections;
mod ops;
mod pages;
mod security;
mod settings;
mod webhooks;
