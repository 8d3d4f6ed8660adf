//! The jobs where the stages meet, and the one handler that runs them. The store keeps the
//! queue's mechanics (claims, leases, retries); what a job means is decided here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use import::{ImportOptions, Importer};
use store::{CrawlId, JobContext, JobError, SnapshotId, Store};

use crate::analyse::Analyser;
use crate::crawl::CrawlRunner;

/// The jobs copyhound runs, named by what they do (the variant name is the job's `kind` in
/// the queue). Every handler is idempotent: a job whose worker died runs again.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Job {
    /// Import a work from a file the server can read (an admin UI upload).
    ImportWork {
        /// The file.
        path: PathBuf,
        /// Title; the file stem when absent.
        title: Option<String>,
        /// Author.
        author: Option<String>,
        /// The file is an upload kept for this job alone: it is deleted when the job ends,
        /// imported or refused for good (a bomb too), so the upload folder does not grow.
        /// Absent (false) in jobs queued before uploads were deleted.
        #[serde(default)]
        delete_file: bool,
    },
    /// Run a stored crawl (`crawls` row) over its shared frontier until the frontier is done.
    /// Several jobs of one crawl (different `runner`s) crawl it together, each page fetched
    /// once; a job that runs again resumes the crawl where it stopped.
    Crawl {
        /// The crawl.
        crawl_id: CrawlId,
        /// Which of the crawl's parallel runners this is (0-based); part of the job's
        /// de-duplication key, so each runner is queued once.
        #[serde(default)]
        runner: u32,
    },
    /// Crawl a watched site (`sites` row): its unfinished crawl if one is left, else a new
    /// crawl from its start URL with its settings ([`crate::sites::site_crawl`]). Queued by
    /// the site's schedule and by "crawl now", one at a time per site.
    CrawlSite {
        /// The site.
        site: i64,
    },
    /// Match a stored page's main text (its `page_texts` row) against the registered works
    /// and store the result as the snapshot's matches (replacing an earlier result).
    MatchSnapshot {
        /// The fetched page.
        snapshot: SnapshotId,
    },
    /// Queue a [`Job::Recheck`] for every case whose re-check is due (the `rechecks`
    /// schedule's job).
    RechecksDue,
    /// Fetch a case's copies again after its notice was sent and record which are gone
    /// ([`crate::Rechecker::recheck`]).
    Recheck {
        /// The case.
        case: store::CaseId,
    },
    /// Stamp a snapshot's SHA-256 at the configured time-stamping authority (RFC 3161) and
    /// store the token; nothing is asked when the snapshot already has a token from it.
    /// Queued by the match stage for each snapshot that becomes evidence of a case.
    StampSnapshot {
        /// The snapshot.
        snapshot: SnapshotId,
    },
}

impl Job {
    /// The job `copyhound crawl --enqueue` queues for runner `runner` of crawl `crawl_id`.
    ///
    /// # Errors
    /// Never in practice (the job serialises).
    pub fn crawl_runner(crawl_id: CrawlId, runner: u32) -> store::Result<store::NewJob> {
        Ok(store::NewJob::new(&Job::Crawl { crawl_id, runner })?
            .dedupe_key(format!("crawl:{crawl_id}:{runner}"))
            .max_attempts(3))
    }
}

/// What the handler runs jobs with: the store, the importer (its fingerprint settings are
/// the matcher's too) and the analyser with its live index. One per worker process.
#[derive(Debug, Clone)]
pub struct Handler {
    store: Store,
    importer: Importer,
    analyser: Arc<Analyser>,
    /// The configured crawler settings, which a site's crawl starts from.
    crawler: Option<Arc<crawler::CrawlSettings>>,
    /// When re-checks run.
    rechecks: crate::RecheckSettings,
    /// Built by the first re-check from `crawler` and `rechecks`.
    rechecker: Arc<std::sync::OnceLock<crate::Rechecker>>,
    /// The configured time-stamping authority, if any.
    tsa: Option<Arc<timestamp::Tsa>>,
}

impl Handler {
    /// A handler over `store`.
    pub fn new(store: Store, importer: Importer, analyser: Arc<Analyser>) -> Self {
        Handler {
            store,
            importer,
            analyser,
            crawler: None,
            rechecks: crate::RecheckSettings::default(),
            rechecker: Arc::default(),
            tsa: None,
        }
    }

    /// The handler with the configured re-check intervals (the defaults otherwise).
    #[must_use]
    pub fn with_rechecks(mut self, settings: crate::RecheckSettings) -> Self {
        self.rechecks = settings;
        self.rechecker = Arc::default();
        self
    }

    /// The handler with the configured time-stamping authority, which [`Job::StampSnapshot`]
    /// asks (without it such a job fails for good, saying so).
    #[must_use]
    pub fn with_tsa(mut self, tsa: timestamp::Tsa) -> Self {
        self.tsa = Some(Arc::new(tsa));
        self
    }

    /// The handler with the configured crawler settings, which watched sites' crawls start
    /// from (without them a [`Job::CrawlSite`] fails for good, saying so).
    #[must_use]
    pub fn with_crawler(mut self, settings: crawler::CrawlSettings) -> Self {
        self.crawler = Some(Arc::new(settings));
        self.rechecker = Arc::default();
        self
    }

    /// The importer, with the fingerprint parameters the analyser matches with.
    pub fn importer(&self) -> &Importer {
        &self.importer
    }

    /// The analyser, whose index a worker refreshes between jobs.
    pub fn analyser(&self) -> &Arc<Analyser> {
        &self.analyser
    }

    /// Runs one job. Errors say whether a retry can help ([`JobError::permanent`] when it
    /// cannot, [`JobError::interrupted`] when a shutdown stopped it).
    ///
    /// # Errors
    /// The job's failure, for the worker to retry or bury.
    pub async fn handle(&self, job: Job, ctx: JobContext) -> Result<(), JobError> {
        match job {
            // Idempotent: the snapshot's matches are replaced as a whole.
            Job::MatchSnapshot { snapshot } => match self.analyser.analyse(snapshot).await {
                Ok(_) => Ok(()),
                Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
                Err(e) => Err(JobError::retry(chain(&e))),
            },
            // Idempotent: a second run finds the work by its content hash and writes nothing.
            Job::ImportWork {
                path,
                title,
                author,
                delete_file,
            } => {
                let options = ImportOptions { title, author };
                let result = match self
                    .importer
                    .import_file(&self.store, Path::new(&path), &options, &())
                    .await
                {
                    Ok(report) => {
                        // Imported all the same, as `works import` does; the log says what
                        // about the file is likely a mistake, as its terminal output would.
                        for warning in &report.warnings {
                            tracing::warn!(work = %report.work, path = %path.display(), "{warning}");
                        }
                        Ok(())
                    }
                    Err(e @ (import::Error::Store(_) | import::Error::Read { .. })) => {
                        Err(e.into())
                    }
                    // The file is not a work: retrying will not change that.
                    Err(e) => Err(JobError::permanent(e.to_string())),
                };
                let ended = match &result {
                    Ok(()) => true,
                    Err(e) => e.is_permanent() || ctx.lease.attempt >= ctx.max_attempts,
                };
                if delete_file && ended {
                    delete_upload(&path).await;
                }
                result
            }
            Job::Crawl { crawl_id, runner } => self.crawl(crawl_id, runner, ctx).await,
            Job::CrawlSite { site } => self.crawl_site(site, ctx).await,
            Job::RechecksDue => {
                match crate::rechecks::enqueue_due_rechecks(&self.store, chrono::Utc::now()).await {
                    Ok(_) => Ok(()),
                    Err(e) => Err(JobError::retry(chain(&e))),
                }
            }
            Job::Recheck { case } => self.recheck(case).await,
            Job::StampSnapshot { snapshot } => self.stamp(snapshot).await,
        }
    }

    /// Re-checks a case's copies now.
    async fn recheck(&self, case: store::CaseId) -> Result<(), JobError> {
        let Some(crawl) = &self.crawler else {
            return Err(JobError::permanent(
                "this worker was started without crawler settings, so it cannot re-check a case",
            ));
        };
        // One re-checker (its HTTP client and connection pool, its extractor) serves every
        // re-check this worker runs.
        let rechecker = match self.rechecker.get() {
            Some(r) => r,
            None => {
                let built = crate::Rechecker::new(
                    self.store.clone(),
                    Arc::clone(&self.analyser),
                    crawl,
                    self.rechecks.clone(),
                )
                .map_err(|e| JobError::permanent(chain(&e)))?;
                self.rechecker.get_or_init(|| built)
            }
        };
        match rechecker.recheck(case, chrono::Utc::now()).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
            Err(e) => Err(JobError::retry(chain(&e))),
        }
    }

    /// Stamps a snapshot; a TSA that is down or busy is asked again later, a token that
    /// fails verification is not.
    async fn stamp(&self, snapshot: SnapshotId) -> Result<(), JobError> {
        let Some(tsa) = &self.tsa else {
            return Err(JobError::permanent(
                "this worker has no time-stamping authority (set evidence.timestamp.url, \
                 COPYHOUND_EVIDENCE__TIMESTAMP__URL), so it cannot stamp",
            ));
        };
        match crate::timestamps::stamp_snapshot(&self.store, tsa, snapshot).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
            Err(e @ crate::Error::Timestamp { .. }) => match &e {
                crate::Error::Timestamp { source, .. } if source.is_transient() => {
                    Err(JobError::retry(chain(&e)))
                }
                _ => Err(JobError::permanent(chain(&e))),
            },
            Err(e) => Err(JobError::retry(chain(&e))),
        }
    }

    /// Crawls a watched site: resumes its unfinished crawl or starts one, then runs it as a
    /// [`Job::Crawl`] runner.
    async fn crawl_site(&self, site: i64, ctx: JobContext) -> Result<(), JobError> {
        let Some(base) = &self.crawler else {
            return Err(JobError::permanent(
                "this worker was started without crawler settings, so it cannot crawl a site",
            ));
        };
        let (id, _, resumed) = match crate::sites::site_crawl(&self.store, base, site).await {
            Ok(c) => c,
            Err(e) if e.is_not_found() => {
                return Err(JobError::permanent(format!("site {site} is not watched")));
            }
            Err(
                e @ (crate::Error::Store { .. }
                | crate::Error::Crawler(crawler::Error::Store { .. })),
            ) => {
                return Err(JobError::retry(chain(&e)));
            }
            Err(e) => {
                return Err(JobError::permanent(format!(
                    "site {site} cannot be crawled: {}",
                    chain(&e)
                )));
            }
        };
        tracing::info!(site, crawl = %id, resumed, "site crawl");
        self.crawl(id, 0, ctx).await
    }

    /// Runs one runner of a stored crawl to the end of its shared frontier. The worker renews
    /// the job's lease while it runs; if this worker dies, the job runs again and resumes the
    /// crawl (the entries it held come back once its crawl run misses its heartbeats for
    /// `crawler.run_dead_after`; the other runners of the crawl keep theirs).
    async fn crawl(&self, id: CrawlId, runner: u32, ctx: JobContext) -> Result<(), JobError> {
        let crawl = match CrawlRunner::open(&self.store, id, None).await {
            Ok(c) => c,
            Err(e) if e.is_not_found() => {
                return Err(JobError::permanent(format!("crawl {id} does not exist")));
            }
            Err(e @ crate::Error::Crawler(crawler::Error::Store { .. })) => {
                return Err(JobError::retry(chain(&e)));
            }
            Err(e) => {
                return Err(JobError::permanent(format!(
                    "crawl {id} cannot run: {}",
                    chain(&e)
                )));
            }
        };
        tracing::info!(crawl = %id, runner, attempt = ctx.lease.attempt, "crawl runner started");
        // On the worker's shutdown the crawl stops after the pages in flight; the URLs it had
        // claimed go back to the frontier and the job back to the queue, to resume later.
        let last_attempt = ctx.lease.attempt >= ctx.max_attempts;
        let stop = ctx.shutdown.clone();
        match crawl
            .run(async move { stop.requested().await }, last_attempt)
            .await
        {
            Ok(finish) if finish.stopped => {
                tracing::info!(crawl = %id, runner, pages = finish.report.pages, "crawl runner stopped");
                Err(JobError::interrupted(format!(
                    "crawl {id} stopped for a worker shutdown after {} pages",
                    finish.report.pages
                )))
            }
            Ok(finish) => {
                tracing::info!(crawl = %id, runner, pages = finish.report.pages,
                               status = finish.status.as_str(), "crawl runner finished");
                Ok(())
            }
            Err(e) => Err(JobError::retry(chain(&e))),
        }
    }
}

/// An error with its causes, on one line (what a job's `last_error` shows).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// Deletes an uploaded file whose import job has ended. One already gone is fine (the job ran
/// again after a worker died); any other failure is logged, since the job's outcome stands.
async fn delete_upload(path: &Path) {
    match tokio::fs::remove_file(path).await {
        Ok(()) => tracing::debug!(path = %path.display(), "upload deleted"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(path = %path.display(), error = %e, "cannot delete an upload"),
    }
}
