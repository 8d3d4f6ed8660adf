//! Evidence kept and handed over: a case's evidence package ([`package`]: WARC, texts,
//! passages, timestamp tokens, manifest), the stored crawl evidence as one WARC file
//! ([`warc_export`]), screenshots and tokens taken for a case now ([`capture`]), and the page
//! bodies moved into WARC segments and collected past their retention ([`bodies`]).
//!
//! It may use `jobs`, `casework` (the case a package is of, the timestamps it holds) and the
//! stage crates below them; notices (which attach the package) and the job loop sit above.
//!
//! ```no_run
//! # async fn demo(store: store::Store) -> jobs::Result<()> {
//! let zip: Vec<u8> = evidence::package_zip(&store, store::CaseId(1)).await?;
//! # Ok(()) }
//! ```

pub mod bodies;
pub mod capture;
pub mod package;
pub mod warc_export;

pub use capture::{CaptureSummary, CaseStamps, capture_case, queue_capture, stamp_case};
pub use package::{Package, TimestampToken, WARC_FILE, package_zip, write_package};
