//! A case's life once the match stage has opened it: the case as people read it
//! ([`cases`]), its review (confirm, dismiss, undo, the passages side by side: [`review`]),
//! the re-checks after its notice until every copy is gone ([`rechecks`]), the trusted
//! timestamps of its evidence ([`timestamps`]), and the reports and removal lists exported
//! from the cases ([`reports`], [`removals`]).
//!
//! It may use `jobs`, the match stage (`detection`: the texts a review compares, the
//! analyser a re-check matches with) and the stage crates below them. The evidence package,
//! notices and the job loop sit above it.
//!
//! ```no_run
//! # async fn demo(store: store::Store) -> jobs::Result<()> {
//! let view = casework::case_view(&store, store::CaseId(1)).await?;
//! println!("{} chapter(s)", view.chapters.len());
//! # Ok(()) }
//! ```

pub mod cases;
pub mod rechecks;
pub mod removals;
pub mod reports;
pub mod review;
pub mod timestamps;

pub use cases::{CaseChapter, CaseDossier, CasePage, CaseView, case_dossier, case_view};
pub use rechecks::{RecheckReport, RecheckSettings, Rechecker};
pub use reports::{ReportFormat, export_reports};
pub use timestamps::{EvidenceSettings, SnapshotTimestamp, Verification, case_timestamps};
