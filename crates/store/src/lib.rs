//! copyhound's storage: one API over PostgreSQL (production) and SQLite (the embedded
//! default), the schema of the whole system with its migrations, and the durable job queue.
//!
//! Every stage reads and writes here and the stages talk to each other through the queue
//! (see `ARCHITECTURE.md`): the importer stores works with their fingerprints, the crawler
//! stores snapshots and queues match jobs, the matcher loads fingerprints into its indexes.
//!
//! - [`Store`] is the handle: [`Store::open`] picks the backend from the URL
//!   (`sqlite://…` or `postgres://…`), opens a pool and applies the embedded migrations.
//! - Small traits sized to their callers are implemented on it: [`WorkWrites`] and
//!   [`WorkReads`] for works and chapters, [`FingerprintReads`] and [`IndexLoads`] for the matcher,
//!   [`JobQueue`] and [`Schedules`] for the queue, [`EvidenceWrites`]/[`EvidenceReads`] for
//!   crawl evidence, [`Crawls`], [`CrawlFrontier`] and [`HostStates`] for shared, resumable
//!   crawls, [`MatchWrites`] (matches filed in cases in one transaction), [`CaseReads`] and
//!   [`CaseWrites`] for review, [`LicensedDomains`], [`Discovery`] for the queries, found URLs
//!   and candidate sites of discovery, [`Reports`] for exports,
//!   [`Timestamps`] for the RFC 3161 tokens of evidence, [`Renders`] for rendered fetches
//!   and their screenshots, [`AuditLog`], [`Notices`] and
//!   [`Rechecks`] for takedown notices and the re-checks that follow, [`StatsReads`] for
//!   analytics, [`Users`], [`Sessions`] and [`ApiTokens`] for the admin UI's accounts,
//!   [`Alerts`] for each user's alert choices and the alert mails sent, and [`Webhooks`] for
//!   the webhooks admins add in the UI.
//!   Code that uses the store takes `impl WorkReads` (or a generic) so a test can hand it a
//!   fake.
//! - [`Worker`] runs jobs from a queue with bounded concurrency, heartbeats, retries with
//!   backoff, dead-lettering and graceful shutdown.
//!
//! Multi-statement writes run in one transaction on both backends.
//!
//! ```no_run
//! # async fn demo() -> store::Result<()> {
//! use store::{JobQueue, NewJob, Store, StoreSettings, WorkFilter, WorkReads, Page};
//!
//! #[derive(serde::Serialize)]
//! enum Job { ImportWork { path: String } }
//!
//! let store = Store::open("sqlite://data/copyhound.db", &StoreSettings::default()).await?;
//! for work in store.works(&WorkFilter::All, Page::all()).await? {
//!     println!("{} {} ({} chapters)", work.id, work.title, work.chapters);
//! }
//! let upload = Job::ImportWork { path: "uploads/红楼梦.txt".into() };
//! store.enqueue(&NewJob::new(&upload)?.dedupe_key("import:uploads/红楼梦.txt")).await?;
//! # Ok(()) }
//! ```

mod accounts;
mod alerts;
mod audit;
mod bodies;
mod cases;
mod changes;
mod crawl;
mod db;
mod discovery;
mod error;
mod evidence;
mod ids;
mod index_load;
mod licensed;
mod matches;
mod notices;
mod ops;
mod packed;
pub mod queue;
mod renders;
mod reports;
mod retention;
mod setting_overrides;
mod sites;
mod stats;
#[cfg(feature = "testing")]
pub mod testing;
mod timestamps;
mod url;
pub mod warc;
mod webhooks;
mod works;

pub use accounts::{
    ApiTokenRecord, ApiTokens, NewUser, PasswordReset, Role, SessionRecord, Sessions, UnknownRole,
    UserChanges, UserRecord, Users, username_keys,
};
pub use alerts::{AlertDelivery, AlertEvent, AlertStart, Alerts};
pub use audit::{AuditLog, AuditRecord};
pub use bodies::{
    BodiesLocation, BodyBytes, BodyStore, BodyTotals, MoveReport, SegmentWriter, StorageSettings,
    UploadedSegment,
};
pub use cases::{
    CaseCursor, CaseFilter, CaseMatch, CaseReads, CaseRecord, CaseStatus, CaseWrites, Recorded,
};
pub use changes::{WorkChange, WorkChangeKind, WorkChanges};
pub use crawl::{
    CrawlDetail, CrawlFilter, CrawlFrontier, CrawlRecord, CrawlRunRecord, CrawlRunSummary,
    CrawlRuns, CrawlStatus, Crawls, FrontierClaim, FrontierCounts, FrontierLease, FrontierOutcome,
    FrontierRecord, HostLease, HostStateRecord, HostStates, NewCrawl, NewFrontierEntry,
};
pub use db::{MigrationStatus, Store, StoreSettings};
pub use discovery::{
    Candidate, CandidateStatus, Discovery, FoundUrl, NewQuery, QueryCount,
    normalize_candidate_domain,
};
pub use error::{Error, Result};
pub use evidence::{
    EvidenceReads, EvidenceWrites, NewPageText, NewSnapshot, NewWireBody, PageText, SnapshotCursor,
    SnapshotRecord, StoredBody, TextFilter,
};
pub use ids::{
    AlertEventId, AlertMailId, ApiTokenId, AuditId, CaseId, ChapterId, CrawlId, CrawlRunId,
    FrontierId, JobId, NoticeId, PageId, SiteId, SnapshotId, UserId, WebhookId, WorkId,
};
pub use index_load::{IndexEntry, IndexLoads};
pub use licensed::{LicensedDomain, LicensedDomains, normalize_domain};
pub use matches::{MatchReads, MatchRecord, MatchWrites, NewMatch};
pub use notices::{
    CopyCheck, CopyRecord, CopyState, NewNotice, NoticeDraftEdit, NoticeMail, NoticeRecord,
    NoticeStatus, Notices, RecheckRecord, RecheckWritten, Rechecks, SendStart,
};
pub use ops::{JobDepth, MatchTotals, OpsReads, SchemaState};
pub use queue::{
    Backoff, ClaimedJob, Enqueued, JobContext, JobError, JobFilter, JobQueue, JobRecord, JobStatus,
    Lease, NewJob, QueueCounts, Retry, Schedule, Schedules, ShutdownSignal, Worker, WorkerPresence,
    WorkerReport, WorkerSeen, WorkerSettings,
};
pub use renders::{
    NewRender, NewScreenshot, RenderRecord, Renders, ScreenshotInfo, ScreenshotToken,
};
pub use reports::{LicensedRows, ReportCursor, ReportFilter, ReportRow, Reports};
pub use retention::{
    COMPACT_BELOW, GcReport, MIN_ORPHAN_GRACE, MIN_UNMATCHED, RetentionSettings, check_unmatched,
};
pub use setting_overrides::{SettingChange, SettingOverride, SettingOverrides};
pub use sites::{
    NewSite, Site, SiteChanges, SiteSchedule, SiteSettings, SuspectSites, site_schedule_name,
};
pub use stats::{
    DayCount, FunnelCounts, RemovalTimes, SiteCopies, SiteCrawlTotals, StatsReads, WorkCopies,
};
pub use timestamps::{NewTimestamp, TimestampRecord, Timestamps};
pub use url::{BackendKind, DatabaseUrl, mask_password};
pub use webhooks::{NewWebhook, StoredWebhook, Webhooks};
pub use works::{
    Chapter, ChapterInfo, FingerprintReads, FingerprintRecord, NewChapter, NewFingerprint, NewWork,
    Page, Posting, PostingHit, PostingKind, SourceFormat, Work, WorkDeletion, WorkFilter,
    WorkInsert, WorkReads, WorkSummary, WorkTitle, WorkUpdate, WorkUpdated, WorkWrites,
};
