//! copyhound's storage: one API over PostgreSQL (production) and SQLite (the embedded
//! default), the schema of the whole system with its migrations, and the durable job queue.
//!
//! Every stage reads and writes here and the stages talk to each other through the queue:
//! the importer stores works with their fingerprints, the crawler stores snapshots and queues
//! match jobs, the matcher loads fingerprints into its indexes. The store may use `bounds`
//! only: it keeps what other crates hand it (fingerprint summaries, RFC 3161 tokens, job
//! payloads, crawl settings) as opaque bytes or text.
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
//! # Example
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
//!
//! # Two backends, one SQL
//!
//! [`Store`] holds one of two sqlx 0.9 pools, chosen by URL scheme (`sqlite:` or
//! `postgres:`; anything else is refused naming both). `sqlx::Any` is not used: it cannot
//! carry timestamps, booleans on SQLite or arrays (see `../shared/notes/deps.md`). Most SQL is
//! one `$N`-placeholder text run on both backends by the `read_pool!`, `write_pool!` and
//! `write_tx!` macros of `db.rs`; only the claims (`FOR UPDATE SKIP LOCKED`) and the bulk
//! posting statements (Postgres `UNNEST` arrays, SQLite multi-row `VALUES`) differ.
//!
//! - **SQLite** runs in WAL mode with one writer connection (transactions start
//!   `BEGIN IMMEDIATE`) and a reader pool, `synchronous = NORMAL`. Another process's write
//!   lock is waited out: each statement waits [`StoreSettings::sqlite_busy_timeout`], and a
//!   write refused with `SQLITE_BUSY`/`SQLITE_LOCKED` (or given no turn on the writer
//!   connection) is tried again [`StoreSettings::sqlite_busy_retries`] times with backoff: the
//!   `BEGIN IMMEDIATE` of a transaction (the only place one meets the lock in WAL mode, so its
//!   body runs once) and single autocommit statements.
//! - **Postgres** commits the machine's own writes (pages, matches, the queue, the frontier)
//!   without waiting for the WAL flush, and a person's decisions durably, in `durable_tx!`
//!   ([`StoreSettings::postgres_async_commit`] says why that is safe).
//!
//! A `Store`'s clones share a small memo of what the database told this process and stays
//! true for a while, to spare the per-page paths a statement: the heartbeat deadline of each
//! crawl run holding a host slot (read again once it has passed), and when a crawl's lost
//! frontier claims were last put back (every 500 ms while there is work to claim, and always
//! before a claim comes back empty).
//!
//! # Writes that keep rows consistent
//!
//! - A work is written hidden and made visible at once ([`WorkWrites::insert_work`]); every
//!   work insert and delete appends to the change log ([`WorkChanges`]) that running indexes
//!   follow.
//! - [`MatchWrites::record_matches`] replaces a snapshot's matches as a whole and files them
//!   in cases in the same transaction: licensed ones in none, the others in the case of
//!   (site, work), opened, widened, reopened and recounted there; each row carries a `latest`
//!   flag (the newest snapshot of its page matching its chapter). On Postgres the page row
//!   and the cases (in work order) are locked, so concurrent recordings of one page or site
//!   serialise without deadlocks. The same transaction keeps the analytics counters
//!   (`detections_daily`, `copies_daily`, `chapter_copies`), written in key order so two
//!   recordings never lock them in a cycle: [`StatsReads`] never counts `matches`.
//! - A case moves new → confirmed → notice_sent → removed, or dismissed
//!   ([`CaseStatus::next`] lists the moves a reviewer may make), with a note and an audit row
//!   in one transaction. `pages` and `chapters_matched` are counters on the case row, so a
//!   listing reads no matches.
//! - Accounts: a password change or disabling deletes the user's sessions in its
//!   transaction; the enabled admins' rows are locked before the check that refuses to
//!   demote or disable the last one; sessions and API tokens are kept as hashes.
//! - A watched site's schedule is a `job_schedules` row written in the same transaction as
//!   the site, with a per-site jitter (a tenth of the period, at most 5 min) so a thousand
//!   sites on one cron time spread out.
//!
//! # The job queue
//!
//! [`queue`] is written here rather than taken from a library (its docs say why); [`Worker`]
//! serves it, and each worker loop renews its row of `workers` while it runs
//! ([`WorkerPresence`]). [`Schedules`] are cron job templates whose next fire time moves by
//! compare-and-set in the transaction that enqueues it, so many processes enqueue each fire
//! time once.
//!
//! # Bodies on an object store
//!
//! `[storage] bodies = "db"` (the default) keeps every body in the database,
//! zstd-compressed. `"file:///path"` or `"s3://bucket/prefix"` ([`StorageSettings`],
//! [`BodyStore`]) moves them to WARC segments on an object store. The default stays `db` for
//! SQLite too: an embedded deployment is one file that `copyhound backup` copies consistently
//! while copyhound runs ([`Store::backup_to`]), and a folder of segments beside it would have
//! to be backed up apart, at the same moment, to stay consistent with it; a team whose
//! database grows by gigabytes a day runs Postgres and sets a store.
//!
//! The design is the one that stays simple under a crash, at the price of writing each body
//! to the database once before it moves:
//!
//! 1. A fetched body is stored in `snapshot_bodies` (the crawl's write path is unchanged) and
//!    is readable from there at once.
//! 2. The `body-segments` schedule (every minute, one at a time by its de-duplication key)
//!    writes segments while one is due: the waiting bodies fill one (`segment_bytes`,
//!    256 MiB), or some wait and no segment was written for `segment_age` (1 h).
//!    `copyhound storage migrate --to store` does the same on demand.
//! 3. A [`SegmentWriter`] reads the waiting bodies in SHA-256 order, 64 at a time with the
//!    snapshots that name them, checks each against its hash on blocking threads and appends
//!    it as one WARC record in a gzip member of its own to a spool file in `spool_dir`.
//!    Screenshots follow the bodies into the same spool file, as `image/png` `resource`
//!    records.
//! 4. A `body_segments` row `uploading` names the object; the file is uploaded as one object
//!    (parts of 16 MiB past that) and its size checked.
//! 5. [`UploadedSegment::commit`] points each row at (segment, offset, length), empties its
//!    bytes in the database (one `UPDATE … FROM (VALUES …)` per 500 rows) and marks the
//!    segment `sealed`, in one transaction.
//!
//! So a row points only at an object that was uploaded whole, and nothing reads a
//! half-written file. A process killed during 3 loses only its spool file (deleted on drop;
//! after a kill, a `segment-*.warc.gz.part` file that gc removes): its bodies wait in the
//! database for the next segment. Killed between 4 and 5, it leaves an object no row points
//! at and its `uploading` row, which gc deletes once it is `orphan_grace` (1 day) old. A
//! store that is down fails the job within seconds (three quick retries in the S3 client),
//! the queue runs it again, and the bodies wait in the database meanwhile. Two writers at
//! once (a worker's job and `storage migrate`) may write the same body to two segments; the
//! first commit wins (`WHERE segment_id IS NULL`) and the other record is never read.
//! Reading a body is a ranged read of its gzip member, gunzip and a SHA-256 check
//! ([`BodyBytes::Plain`]).
//!
//! What this does not do: the database still takes each body's bytes once (and frees them at
//! the segment's commit, to be reused by later rows), so its write load per page does not
//! fall. Writing records straight from the crawl to the spool file would spare that, at the
//! price of bodies readable only on the crawling machine until their segment is up.
//!
//! Other whole objects live beside the segments (the matcher index's snapshots under
//! `snapshots/`): [`BodyStore::put_file`] (one put, or a multipart upload shown only once
//! complete), [`BodyStore::list_names`], [`BodyStore::get_whole`].
//!
//! # Retention
//!
//! [`Store::gc`] (`[retention]`, `copyhound gc`, the daily `retention-gc` schedule) deletes
//! the bodies of snapshots past their time: `unmatched` (30 d) after the fetch, or, for
//! evidence (a match, a trusted timestamp, a re-check's fetch, the endpoint response that gave
//! a matched page its text), `evidence` (3 y) after the fetch and after the last copy of each
//! of its cases was seen. It walks the snapshots old enough for either limit by id, 500 a
//! transaction, read by columns alone: an `EXISTS` in that scan made Postgres hash every page
//! text and JIT-compile the query each batch, 40 minutes for 10^6 bodies; expiry is judged
//! in the transaction instead (on Postgres with `jit = off`). Segments that lost records are
//! deleted when empty and compacted when at most half live. A crawl sends no validators from
//! a snapshot whose body is gone, and `snapshots export` leaves such snapshots out.
//!
//! # Schema and migrations
//!
//! The schema of the whole system is here: `migrations/sqlite` and `migrations/postgres` at
//! the repository root, one logical change under the same timestamp and name in both,
//! embedded and applied by [`Store::migrate`] (`Store::open` runs it). Each migration's name
//! says what it adds (`…_initial`, `…_crawl_evidence`, `…_frontier`, `…_cases`,
//! `…_body_segments`, `…_retention`, …): read the folder for the list.
//!
//! On SQLite the `…_cases` migration rebuilds `cases` and `matches` (a CHECK constraint cannot
//! be altered): it is a `-- no-transaction` migration that turns foreign keys off (dropping
//! the old `cases` with enforcement on would run its ON DELETE actions), opens its own
//! transaction, creates `cases_new`, copies, drops `cases` and renames (so references keep
//! naming `cases`), continues the id sequences, and aborts if `pragma_foreign_key_check`
//! finds a dangling row; [`Store::migrate`] rolls back and turns enforcement on again after a
//! failure.
//!
//! # Tests and benchmarks
//!
//! `tests/common/conformance.rs` is one suite (every contract method, missing rows,
//! duplicates, concurrent claims, failures mid-transaction, 4 workers × 2,000 jobs, killed
//! workers, dead jobs, shutdown, schedules; the rest of `tests/common/` for cases, accounts,
//! alerts, discovery, notices, renders, sites, stats and timestamps) that
//! `tests/all/sqlite.rs` and `tests/all/postgres.rs` both run, in one test binary with the
//! others. `tests/all/postgres.rs` also kills the workers' connections mid-run;
//! `tests/all/sqlite.rs` migrates a database of the old schema through the cases rebuild.
//! Feature `testing` gives each test a fresh SQLite file or Postgres schema.
//!
//! Benchmarks: `benches/queue.rs`; `benches/segments.rs` (the segment writer, 2,000 bodies of
//! 16 KB: about 2,000 bodies/s on Postgres and 2,400 on SQLite, against 700 and 1,000 with a
//! query and an `UPDATE` a body and gzip on the runtime's thread); `benches/gc.rs`
//! (`GC_BENCH_BODIES`, 10^5 by default: 10^6 unmatched bodies in 27 s on SQLite and 60 s on
//! Postgres); `examples/case_scale.rs` fills both backends with 10^5 cases and 10^6 matches
//! and times the case listing, a case, its matches, a recording and a full report walk.

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
    CaseCursor, CaseFilter, CaseMatch, CaseReads, CaseRecord, CaseStatus, CaseWrites,
    FOUND_BY_A_CRAWL, Recorded,
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
    EvidenceReads, EvidenceWrites, NewPageText, NewSnapshot, NewWireBody, PAGE_TEXTS_AT_ONCE,
    PageText, SnapshotCursor, SnapshotRecord, StoredBody, TextFilter,
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
    WorkerReport, WorkerSeen, WorkerSettings, check_cron,
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
