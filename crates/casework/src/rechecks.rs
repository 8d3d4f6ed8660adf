//! Re-checks: once a case's notice is sent, each copy (a page of the case) is fetched again
//! when due — daily for the first two weeks, then weekly, by default — and every fetch is
//! stored as a snapshot. A copy is gone when its page answers 404 or 410, no longer holds
//! the copied chapters, or its host no longer resolves (on two checks in a row: one resolver
//! hiccup proves nothing); the snapshot that showed it is the evidence. When every copy of a
//! case is gone the case becomes `removed`. A fetch that cannot tell (a timeout, a server
//! error, an anti-bot page) changes nothing and the copy is tried again next time. A copy
//! that comes back later, at any URL of the site, reopens the case through the match stage.
//!
//! One schedule (`rechecks`) queues [`Job::RechecksDue`], which queues one
//! [`Job::Recheck`] per due case; the times come from the store, so a test moves a clock
//! instead of sleeping.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use crawler::{
    CrawlSettings, ErrorKind, FetchRequest, Fetcher, PageRecord, SnapshotSink, StoreSink,
};
use detection::Analyser;
use extract::{ExtractSettings, Extractor, PageKind};
use jobs::{Error, Job, Result, store_err};
use serde::{Deserialize, Serialize};
use store::{
    CaseId, CaseReads, CopyCheck, CopyState, JobQueue, NewJob, PageId, RecheckRecord,
    RecheckWritten, Rechecks, Schedules, SnapshotId, Store,
};
use url::Url;

/// Who the audit log names for what re-checks do.
pub const ACTOR: &str = "recheck";

/// The schedule that queues due re-checks.
pub const SCHEDULE: &str = "rechecks";

/// When re-checks run (`[rechecks]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecheckSettings {
    /// Time between re-checks at first.
    #[serde(with = "bounds::duration_serde")]
    pub first_interval: Duration,
    /// How long after the notice re-checks keep `first_interval`.
    #[serde(with = "bounds::duration_serde")]
    pub first_period: Duration,
    /// Time between re-checks after that, until every copy is gone.
    #[serde(with = "bounds::duration_serde")]
    pub then_interval: Duration,
    /// Consecutive checks on which a copy's host must fail to resolve before the copy
    /// counts as gone.
    pub dns_failures: u32,
    /// When the `rechecks` schedule looks for due re-checks (cron, UTC).
    pub cron: String,
}

impl Default for RecheckSettings {
    fn default() -> Self {
        RecheckSettings {
            first_interval: Duration::from_secs(24 * 3600),
            first_period: Duration::from_secs(14 * 24 * 3600),
            then_interval: Duration::from_secs(7 * 24 * 3600),
            dns_failures: 2,
            cron: "*/15 * * * *".to_owned(),
        }
    }
}

impl RecheckSettings {
    /// Checks the ranges.
    ///
    /// # Errors
    /// The first value out of range, by its key.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        let minute = Duration::from_secs(60);
        let year = Duration::from_secs(366 * 24 * 3600);
        bounds::between("first_interval", self.first_interval, minute, year)?;
        bounds::between("first_period", self.first_period, Duration::ZERO, year)?;
        bounds::between("then_interval", self.then_interval, minute, year)?;
        bounds::between("dns_failures", self.dns_failures, 1, 100)
    }

    /// Time from a re-check at `now` to the next, for a notice sent at `sent_at`.
    pub fn interval_after(&self, sent_at: DateTime<Utc>, now: DateTime<Utc>) -> chrono::Duration {
        let age = (now - sent_at).to_std().unwrap_or_default();
        let interval = if age < self.first_period {
            self.first_interval
        } else {
            self.then_interval
        };
        chrono::Duration::from_std(interval).unwrap_or(chrono::Duration::days(1))
    }
}

/// Whole days from the notice to `at` (what "still up N days after the notice" says).
pub fn days_since_notice(recheck: &RecheckRecord, at: DateTime<Utc>) -> i64 {
    (at - recheck.sent_at).num_days().max(0)
}

/// The re-checks since a case's notice as `cases show` prints them: each copy's state, a
/// copy still up with the days since the notice.
#[derive(Debug)]
pub struct RecheckSheet<'a> {
    /// The re-checks.
    pub recheck: &'a RecheckRecord,
    /// What "days ago" counts to.
    pub now: DateTime<Utc>,
}

impl<'a> RecheckSheet<'a> {
    /// The sheet as of now.
    pub fn now(recheck: &'a RecheckRecord) -> Self {
        RecheckSheet {
            recheck,
            now: Utc::now(),
        }
    }
}

impl std::fmt::Display for RecheckSheet<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.recheck;
        let days = days_since_notice(r, self.now);
        let next = r.next_at.map_or_else(
            || "no more re-checks".to_owned(),
            |t| format!("next {}", t.format("%Y-%m-%d %H:%M UTC")),
        );
        writeln!(
            f,
            "re-checks: notice sent {} ({days} days ago); {} done; {next}",
            r.sent_at.format("%Y-%m-%d %H:%M UTC"),
            r.checks
        )?;
        for c in &r.copies {
            let at = c.checked_at.format("%Y-%m-%d");
            match c.state {
                CopyState::Up => writeln!(
                    f,
                    "  up       {} (checked {at}): still up {} days after the notice",
                    c.url,
                    days_since_notice(r, c.checked_at)
                )?,
                CopyState::Removed => writeln!(
                    f,
                    "  removed  {} since {}: {}{}",
                    c.url,
                    c.removed_at.unwrap_or(c.checked_at).format("%Y-%m-%d"),
                    c.reason,
                    c.removed_snapshot
                        .map(|s| format!(" (snapshot {s})"))
                        .unwrap_or_default()
                )?,
                CopyState::Unknown => {
                    writeln!(f, "  unknown  {} (checked {at}): {}", c.url, c.reason)?;
                }
            }
        }
        Ok(())
    }
}

/// The copies as [`RecheckSheet`] shows them, then what became of the case.
impl std::fmt::Display for RecheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.written.recheck;
        write!(f, "{}", RecheckSheet::now(r))?;
        if self.written.case_removed {
            writeln!(
                f,
                "case {}: every copy is gone; the case is removed",
                r.case
            )?;
        } else if r.next_at.is_none() {
            writeln!(
                f,
                "case {} is no longer notice_sent: its re-checks stopped",
                r.case
            )?;
        }
        Ok(())
    }
}

/// The job that re-checks `case` now, one live per case.
///
/// # Errors
/// Never in practice (the job serialises).
pub fn recheck_job(case: CaseId) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::Recheck { case })?
        .dedupe_key(format!("recheck:case:{case}"))
        .max_attempts(3))
}

/// Creates (or updates) the schedule that queues due re-checks.
///
/// # Errors
/// A cron expression that does not parse; a database failure.
pub async fn ensure_recheck_schedule(store: &Store, settings: &RecheckSettings) -> Result<()> {
    let job = NewJob::new(&Job::RechecksDue)
        .map_err(store_err("encoding the re-check job"))?
        .dedupe_key(SCHEDULE);
    store
        .set_schedule(SCHEDULE, &settings.cron, &job)
        .await
        .map_err(store_err("writing the re-check schedule"))?;
    Ok(())
}

/// Queues a [`Job::Recheck`] for every case due at `now` (a case already queued is not
/// queued twice). Returns the cases due.
///
/// # Errors
/// A database failure.
pub async fn enqueue_due_rechecks(store: &Store, now: DateTime<Utc>) -> Result<Vec<CaseId>> {
    let due = store
        .due_rechecks(now, 10_000)
        .await
        .map_err(store_err("reading due re-checks"))?;
    for case in &due {
        let job = recheck_job(*case).map_err(store_err("encoding the re-check job"))?;
        store
            .enqueue(&job)
            .await
            .map_err(store_err("queueing a re-check"))?;
    }
    Ok(due)
}

/// What one re-check did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecheckReport {
    /// What was recorded, the copies' states and the case's.
    #[serde(flatten)]
    pub written: RecheckWritten,
}

impl RecheckReport {
    /// Copies still up, with the whole days from the notice to their check.
    pub fn still_up(&self) -> Vec<(&str, i64)> {
        let r = &self.written.recheck;
        r.copies
            .iter()
            .filter(|c| c.state == CopyState::Up)
            .map(|c| (c.url.as_str(), days_since_notice(r, c.checked_at)))
            .collect()
    }
}

/// Fetches a case's copies again and records what it saw.
#[derive(Debug, Clone)]
pub struct Rechecker {
    store: Store,
    analyser: Arc<Analyser>,
    fetcher: Fetcher,
    extractor: Arc<Extractor>,
    extract: ExtractSettings,
    settings: RecheckSettings,
    /// The deployment's index shards ([`Rechecker::with_shards`]).
    shards: u32,
}

impl Rechecker {
    /// A re-checker fetching as a crawl with `crawl` would (user agent, timeouts, size cap,
    /// the addresses it may reach, extraction rules) and matching with `analyser`.
    ///
    /// # Errors
    /// Settings the fetcher or the extractor refuse.
    pub fn new(
        store: Store,
        analyser: Arc<Analyser>,
        crawl: &CrawlSettings,
        settings: RecheckSettings,
    ) -> Result<Self> {
        Ok(Rechecker {
            store,
            analyser,
            fetcher: Fetcher::new(crawl.fetch.clone())?,
            extractor: Arc::new(Extractor::new(&crawl.extract).map_err(crawler::Error::from)?),
            extract: crawl.extract.clone(),
            settings,
            shards: 1,
        })
    }

    /// The re-checker of a deployment whose index is split into `shards` shards (`[index]
    /// shards`). Above 1, and with an analyser that holds every work (a worker without
    /// `--shard`, which loads no index), a copy is judged against the case's work alone
    /// ([`Analyser::copies_work`]) and the page's match job is queued, so that the shard
    /// workers record its matches: no worker loads the whole catalogue to re-check a case.
    #[must_use]
    pub fn with_shards(mut self, shards: u32) -> Self {
        self.shards = shards.max(1);
        self
    }

    /// Re-checks `case` at `now`: fetches each copy once, stores what answered, matches it,
    /// and records the copies' states, the case's removal when every copy is gone, and the
    /// next re-check.
    ///
    /// # Errors
    /// [`jobs::Error::is_not_found`] when no notice of the case was sent; a database
    /// failure (nothing is recorded then, and the job runs again).
    pub async fn recheck(&self, case: CaseId, now: DateTime<Utc>) -> Result<RecheckReport> {
        let before = self
            .store
            .case_recheck(case)
            .await
            .map_err(store_err("reading the case's re-checks"))?
            .ok_or_else(|| Error::Store {
                doing: "reading the case's re-checks",
                source: store::Error::NotFound {
                    what: "notice sent for case",
                    key: case.to_string(),
                },
            })?;
        let row = self
            .store
            .case(case)
            .await
            .map_err(store_err("reading the case"))?;
        // Every re-check fetches every copy, whatever the case's status: one asked for on a
        // removed case shows whether the copies are still gone (a copy found again reopens
        // the case through its match, as a crawl's would).
        let work = row.work_id;
        let previous: BTreeMap<PageId, u32> = before
            .copies
            .iter()
            .map(|c| (c.page, c.dns_failures))
            .collect();
        let mut checks = Vec::new();
        for (page, url) in self.copies(case).await? {
            let failures = previous.get(&page).copied().unwrap_or(0);
            checks.push(self.check((case, work), page, url, failures).await?);
        }
        let next = now + self.settings.interval_after(before.sent_at, now);
        let written = self
            .store
            .record_recheck(case, &checks, now, Some(next), ACTOR)
            .await
            .map_err(store_err("recording the re-check"))?;
        // The snapshots that show a copy gone are evidence too: stamped like those of the
        // matches (a copy still up was matched, and its snapshot queued, by the analyser).
        if self.analyser.stamps() {
            for copy in &written.recheck.copies {
                if let Some(snapshot) = copy
                    .removed_snapshot
                    .filter(|_| written.newly_removed.contains(&copy.page))
                {
                    let job =
                        jobs::stamp_job(snapshot).map_err(store_err("encoding the stamp job"))?;
                    self.store
                        .enqueue(&job)
                        .await
                        .map_err(store_err("queueing the stamp of a removal"))?;
                }
            }
        }
        if self.analyser.emits() {
            use jobs::{Event, emit};
            for copy in written
                .recheck
                .copies
                .iter()
                .filter(|c| written.back_up.contains(&c.page))
            {
                let data = serde_json::json!({
                    "case": case.0, "page": copy.page.0, "url": copy.url,
                    "snapshot": copy.snapshot.map(|s| s.0),
                });
                emit(&self.store, Event::CopyBackUp, data).await?;
            }
            if written.case_removed {
                emit(
                    &self.store,
                    Event::CaseRemoved,
                    serde_json::json!({ "case": case.0 }),
                )
                .await?;
            }
        }
        tracing::info!(%case, copies = checks.len(), removed = written.case_removed,
                       "case re-checked");
        Ok(RecheckReport { written })
    }

    /// The case's pages and the URL to fetch for each (its latest fetch's).
    async fn copies(&self, case: CaseId) -> Result<Vec<(PageId, String)>> {
        let matches = self
            .store
            .case_matches(case)
            .await
            .map_err(store_err("reading the case's matches"))?;
        let mut latest: BTreeMap<PageId, (DateTime<Utc>, String)> = BTreeMap::new();
        for m in matches {
            let entry = latest
                .entry(m.page_id)
                .or_insert((m.fetched_at, m.url.clone()));
            if m.fetched_at > entry.0 {
                *entry = (m.fetched_at, m.url);
            }
        }
        Ok(latest.into_iter().map(|(p, (_, u))| (p, u)).collect())
    }

    /// One copy: fetched, stored, matched, judged.
    async fn check(
        &self,
        (case, work): (CaseId, store::WorkId),
        page: PageId,
        url: String,
        dns_failures: u32,
    ) -> Result<CopyCheck> {
        let judged = |state, reason: String, snapshot, dns_failures| CopyCheck {
            page,
            url: url.clone(),
            state,
            reason,
            snapshot,
            dns_failures,
        };
        let parsed = match Url::parse(&url) {
            Ok(u) => u,
            Err(e) => {
                return Ok(judged(CopyState::Unknown, format!("bad url: {e}"), None, 0));
            }
        };
        let snapshot = match self.fetcher.fetch(&FetchRequest::get(parsed)).await {
            Ok(s) => s,
            Err(e) if e.kind() == ErrorKind::Dns => {
                let failures = dns_failures.saturating_add(1);
                return Ok(if failures >= self.settings.dns_failures {
                    judged(
                        CopyState::Removed,
                        format!("the host no longer resolves ({failures} checks in a row)"),
                        None,
                        failures,
                    )
                } else {
                    judged(
                        CopyState::Unknown,
                        format!(
                            "the host did not resolve ({failures} of {} checks)",
                            self.settings.dns_failures
                        ),
                        None,
                        failures,
                    )
                });
            }
            Err(e) if e.kind() == ErrorKind::Store => return Err(e.into()),
            Err(e) => {
                return Ok(judged(
                    CopyState::Unknown,
                    format!("{}: {e}", e.kind()),
                    None,
                    0,
                ));
            }
        };
        let sink = StoreSink::new(self.store.clone());
        let stored = sink.store_snapshot(&snapshot).await?;
        let id = SnapshotId(i64::try_from(stored.id.0).unwrap_or(i64::MAX));
        let status = snapshot.status;
        if matches!(status, 404 | 410) {
            return Ok(judged(
                CopyState::Removed,
                format!("HTTP {status}"),
                Some(id),
                0,
            ));
        }
        if !(200..300).contains(&status) {
            return Ok(judged(
                CopyState::Unknown,
                format!("HTTP {status}"),
                Some(id),
                0,
            ));
        }
        let extractor = Arc::clone(&self.extractor);
        let deadline = Instant::now() + self.extract.time_budget;
        let body = snapshot.body.clone();
        let content_type = snapshot.content_type().map(str::to_owned);
        let final_url = snapshot.final_url.clone();
        let read = tokio::task::spawn_blocking(move || {
            extract::read_page(
                &extractor,
                &body,
                content_type.as_deref(),
                &final_url,
                Some(deadline),
            )
        })
        .await
        .map_err(|e| Error::task("reading a re-checked page", e))?;
        if let Some(exceeded) = read.exceeded() {
            return Ok(judged(
                CopyState::Unknown,
                format!("{exceeded}: the page is not read"),
                Some(id),
                0,
            ));
        }
        match read.kind {
            PageKind::Challenge => {
                return Ok(judged(
                    CopyState::Unknown,
                    "an anti-bot challenge page".to_owned(),
                    Some(id),
                    0,
                ));
            }
            PageKind::Redirect => {
                return Ok(judged(
                    CopyState::Unknown,
                    "a page that redirects by script or meta refresh".to_owned(),
                    Some(id),
                    0,
                ));
            }
            _ => {}
        }
        let extracted = read.extracted.as_ref();
        sink.store_page(PageRecord {
            url: snapshot.request_url.clone(),
            final_url: snapshot.final_url.clone(),
            snapshot: stored.id,
            depth: 0,
            chain: None,
            kind: read.kind,
            title: extracted.and_then(|e| e.title.clone()),
            chapter_title: extracted.and_then(|e| e.chapter_title.clone()),
            text: read.text,
            encoding: read.decoded.encoding.name(),
            decode_errors: read.decoded.had_errors,
            not_modified: false,
            fetched_at: snapshot.fetched_at,
            source: read.source,
            text_snapshot: None,
            declared_encoding: read.decoded.overridden.map(|e| e.name()),
        })
        .await?;
        let up = if self.shards > 1 && self.analyser.shard().is_all() {
            // The shard workers record the page's matches (its job fans out to them); this
            // worker holds no index and judges the copy by the case's work alone.
            let up = self.analyser.copies_work(id, work).await?;
            let job = jobs::match_job(id).map_err(store_err("making a match job"))?;
            self.store
                .enqueue(&job)
                .await
                .map_err(store_err("queueing the re-checked page's match job"))?;
            up
        } else {
            self.analyser.analyse(id).await?.cases.contains(&case)
        };
        Ok(if up {
            judged(
                CopyState::Up,
                "the page still holds the copied text".to_owned(),
                Some(id),
                0,
            )
        } else {
            judged(
                CopyState::Removed,
                "the page no longer holds the copied chapters".to_owned(),
                Some(id),
                0,
            )
        })
    }
}
