//! The crawler's integration tests, one binary: `common` (the fixture server, local crawl
//! settings) is compiled once, and the build links one binary instead of one a file.

#[path = "../common/mod.rs"]
mod common;

mod crawl;
mod drawn;
mod fetch;
mod fonts;
mod hostile;
mod ocr;
mod properties;
mod render;
mod render_isolation;
mod store_crawl;
mod store_sink;
