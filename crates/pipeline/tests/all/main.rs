//! The pipeline's integration tests, one binary: `common` (works, pirate pages, the SMTP server)
//! is compiled once, and the build links one binary instead of one a file.

#[path = "../common/mod.rs"]
mod common;

mod alerts;
mod analyse;
mod bodies;
mod discovery;
mod gc;
mod notices;
mod overrides;
mod rematch;
mod revisits;
mod sending;
mod setup;
mod shards;
mod snapshot;
mod webhooks;
