//! The one handler that runs the jobs, above the stages it dispatches to. The store keeps the
//! queue's mechanics (claims, leases, retries); what a [`Job`] means is decided here. Only the
//! serving code imports this module: the stages queue jobs through `job`.

use std::path::Path;
use std::sync::Arc;

use casework::rechecks::{RecheckSettings, Rechecker, enqueue_due_rechecks};
use casework::timestamps::stamp_snapshot;
use crawling::CrawlRunner;
use crawling::sites::site_crawl;
use detection::Analyser;
use import::{ImportOptions, Importer};
use jobs::{Error, Job, chain};
use store::{CrawlId, JobContext, JobError, JobQueue, SnapshotId, Store};

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
    rechecks: RecheckSettings,
    /// Built by the first re-check from `crawler` and `rechecks`.
    rechecker: Arc<std::sync::OnceLock<Rechecker>>,
    /// The configured time-stamping authority, if any.
    tsa: Option<Arc<timestamp::Tsa>>,
    /// The rights holder and the mail settings notices are sent with, and the webhooks.
    mail: Option<Arc<(takedown::NoticeSettings, notification::NotifySettings)>>,
    /// Built by the first webhook delivery from `crawler`'s fetch settings.
    poster: Arc<std::sync::OnceLock<crawler::Fetcher>>,
    /// Discovery's settings: the providers and budgets its jobs search with.
    discovery: Option<Arc<discovery::DiscoverySettings>>,
    /// How long bodies are kept: what [`Job::Gc`] removes.
    retention: store::RetentionSettings,
    /// The index's shards in this deployment (`[index] shards`): above 1, a
    /// [`Job::MatchSnapshot`] fans out to one [`Job::MatchShard`] per shard.
    shards: u32,
}

impl Handler {
    /// A handler over `store`.
    pub fn new(store: Store, importer: Importer, analyser: Arc<Analyser>) -> Self {
        Handler {
            store,
            importer,
            analyser,
            crawler: None,
            rechecks: RecheckSettings::default(),
            rechecker: Arc::default(),
            tsa: None,
            mail: None,
            poster: Arc::default(),
            discovery: None,
            retention: store::RetentionSettings::default(),
            shards: 1,
        }
    }

    /// The handler of a deployment whose index is split into `shards` shards (`[index]
    /// shards`): a [`Job::MatchSnapshot`] then queues one [`Job::MatchShard`] per shard,
    /// each on its shard's queue ([`jobs::shard_queue`]), instead of matching. 1 (the
    /// default; 0 is read as 1) matches the page here, with the whole index.
    #[must_use]
    pub fn with_shards(mut self, shards: u32) -> Self {
        self.shards = shards.max(1);
        self
    }

    /// The index's shards in this deployment ([`Handler::with_shards`]).
    pub fn shards(&self) -> u32 {
        self.shards
    }

    /// The handler with the retention periods [`Job::Gc`] removes bodies by (the defaults
    /// without it).
    #[must_use]
    pub fn with_retention(mut self, retention: store::RetentionSettings) -> Self {
        self.retention = retention;
        self
    }

    /// The handler with discovery's settings, which [`Job::DiscoverWork`],
    /// [`Job::DiscoveryDue`], [`Job::ScanWet`] and [`Job::ProbeDomain`] run with (without them
    /// such a job fails for good, saying so).
    #[must_use]
    pub fn with_discovery(mut self, settings: discovery::DiscoverySettings) -> Self {
        self.discovery = Some(Arc::new(settings));
        self
    }

    /// The handler with the rights holder and the SMTP server that [`Job::SendNotice`]
    /// mails notices with (without them such a job fails for good, saying so).
    #[must_use]
    pub fn with_mail(
        mut self,
        notices: takedown::NoticeSettings,
        notify: notification::NotifySettings,
    ) -> Self {
        self.mail = Some(Arc::new((notices, notify)));
        self
    }

    /// The handler with the configured re-check intervals (the defaults otherwise).
    #[must_use]
    pub fn with_rechecks(mut self, settings: RecheckSettings) -> Self {
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
        self.poster = Arc::default();
        self
    }

    /// The importer, with the fingerprint parameters the analyser matches with.
    pub fn importer(&self) -> &Importer {
        &self.importer
    }

    /// Queues the [`Job::MatchShard`] of `snapshot` for every shard.
    async fn match_shards(&self, snapshot: SnapshotId) -> Result<(), JobError> {
        use store::JobQueue;
        for k in 0..self.shards {
            let shard = bounds::Shard::new(k, self.shards).expect("k < shards");
            let job = jobs::match_shard_job(snapshot, shard)
                .map_err(|e| JobError::permanent(chain(&e)))?;
            self.store
                .enqueue(&job)
                .await
                .map_err(|e| JobError::retry(chain(&e)))?;
        }
        Ok(())
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
            // Idempotent: each shard job is keyed and queued once while it waits.
            Job::MatchSnapshot { snapshot } if self.shards > 1 => self.match_shards(snapshot).await,
            // Idempotent: the snapshot's matches are replaced as a whole.
            Job::MatchSnapshot { snapshot } => match self.analyser.analyse(snapshot).await {
                Ok(_) => Ok(()),
                Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
                Err(e) => Err(JobError::retry(chain(&e))),
            },
            // Idempotent: the shard's matches of the snapshot are replaced as a whole.
            Job::MatchShard {
                snapshot,
                shard,
                shards,
            } => {
                let mine = self.analyser.shard();
                if bounds::Shard::new(shard, shards) != Some(mine) {
                    return Err(JobError::permanent(format!(
                        "a job of shard {shard}/{shards} reached a worker holding shard {mine} \
                         (serve queue {} with `worker --shard {shard}/{shards}`)",
                        jobs::shard_queue(bounds::Shard::new(shard, shards).unwrap_or(mine)),
                    )));
                }
                match self.analyser.analyse(snapshot).await {
                    Ok(_) => Ok(()),
                    Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
                    Err(e) => Err(JobError::retry(chain(&e))),
                }
            }
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
            Job::RechecksDue => match enqueue_due_rechecks(&self.store, chrono::Utc::now()).await {
                Ok(_) => Ok(()),
                Err(e) => Err(JobError::retry(chain(&e))),
            },
            Job::Recheck { case } => self.recheck(case).await,
            Job::StampSnapshot { snapshot } => self.stamp(snapshot).await,
            // Idempotent enough: a second run adds a newer screenshot of each page.
            Job::CaptureCase { case } => {
                let Some(settings) = &self.crawler else {
                    return Err(JobError::permanent(
                        "this worker has no crawler settings to render with",
                    ));
                };
                let tsa = self.tsa.as_deref();
                match evidence::capture::capture_case(&self.store, settings, tsa, case).await {
                    // A screenshot the authority could not stamp now is stamped by the
                    // snapshot's stamp job, which a busy or down authority gets retried.
                    Ok(summary) => {
                        for (snapshot, _) in &summary.unstamped {
                            let job = jobs::stamp_job(*snapshot)
                                .map_err(|e| JobError::retry(e.to_string()))?;
                            self.store
                                .enqueue(&job)
                                .await
                                .map_err(|e| JobError::retry(e.to_string()))?;
                        }
                        Ok(())
                    }
                    Err(e @ Error::Crawler(crawler::Error::RenderUnavailable { .. })) => {
                        Err(JobError::permanent(chain(&e)))
                    }
                    Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
                    Err(e) => Err(JobError::retry(chain(&e))),
                }
            }
            Job::SendNotice { notice, again } => self.send_notice(notice, again).await,
            Job::Event { event, at, data } => self.fan_out(event, at, &data).await,
            Job::SendAlert { user, event } => self.send_alert(user, event).await,
            Job::SendDigests => self.send_digests().await,
            // Nothing is lost when it fails: the bodies stay in the database, readable,
            // and the queue runs it again.
            Job::WriteSegments => match self.store.write_due_segments().await {
                Ok(report) => {
                    if report.segments > 0 {
                        tracing::info!(
                            bodies = report.bodies,
                            bytes = report.bytes,
                            segments = report.segments,
                            "bodies moved to segments"
                        );
                    }
                    Ok(())
                }
                Err(e) => Err(JobError::retry(chain(&e))),
            },
            // What it deleted stays deleted when it fails half-way; the next run goes on.
            Job::Gc => match self.store.gc(&self.retention, false).await {
                Ok(report) => {
                    tracing::info!(
                        bodies = report.bodies,
                        bytes = report.bytes,
                        segments_deleted = report.segments_deleted,
                        segments_compacted = report.segments_compacted,
                        "expired bodies removed"
                    );
                    Ok(())
                }
                Err(e) => Err(JobError::retry(chain(&e))),
            },
            Job::DeliverWebhook {
                url,
                id,
                event,
                at,
                data,
            } => self.deliver(&url, &id, event, at, &data).await,
            Job::DiscoveryDue
            | Job::DiscoverWork { .. }
            | Job::ScanWet { .. }
            | Job::ProbeDomain { .. } => self.discover(job).await,
        }
    }

    /// Runs a discovery job. Each is idempotent: a search sends only what the day's budgets
    /// and the cache leave, a scan or a probe records the same candidates again.
    async fn discover(&self, job: Job) -> Result<(), JobError> {
        let (Some(settings), Some(crawl)) = (&self.discovery, &self.crawler) else {
            return Err(JobError::permanent(
                "this worker was started without discovery and crawler settings, so it cannot \
                 run a discovery job",
            ));
        };
        let result = match job {
            Job::DiscoveryDue => {
                discovery::enqueue_due_searches(&self.store, settings, chrono::Utc::now())
                    .await
                    .map(drop)
            }
            Job::DiscoverWork { work } => {
                let options = discovery::SearchOptions {
                    work,
                    provider: None,
                    max_queries: None,
                    allow_private: false,
                };
                discovery::search_work(&self.store, settings, crawl, self.clone(), &options)
                    .await
                    .map(|report| {
                        tracing::info!(work = %work, sent = report.sent, cached = report.cached,
                                       candidates = report.candidates.len(), "work searched");
                    })
            }
            Job::ScanWet { url_or_path } => {
                let options =
                    discovery::WetOptions::from_settings(settings, vec![url_or_path.clone()]);
                match discovery::scan_commoncrawl(
                    &self.store,
                    settings,
                    crawl,
                    self.clone(),
                    &options,
                )
                .await
                {
                    // A file that could not be opened (a download refused or cut off) is
                    // tried again; the queue's attempts bound how often.
                    Ok(report) if !report.failed.is_empty() => {
                        return Err(JobError::retry(format!(
                            "cannot read {url_or_path}: {}",
                            report.failed[0].error
                        )));
                    }
                    Ok(report) => {
                        tracing::info!(file = %url_or_path, hits = report.hits.len(),
                                       candidates = report.candidates.len(), "WET file scanned");
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            Job::ProbeDomain { domain } => {
                discovery::probe_domain(&self.store, settings, crawl, self.clone(), &domain, false)
                    .await
                    .map(drop)
            }
            _ => return Err(JobError::permanent("not a discovery job")),
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
            Err(e @ Error::Refused(_)) => Err(JobError::permanent(chain(&e))),
            Err(e) => Err(JobError::retry(chain(&e))),
        }
    }

    /// The mail settings (`[notify]`), when the handler has them.
    pub fn notify(&self) -> Option<&notification::NotifySettings> {
        self.mail.as_deref().map(|m| &m.1)
    }

    /// An event: one delivery queued per webhook (configured or stored) that takes it, one
    /// alert per user who wants it at once, a digest item per user who wants a digest. Each
    /// part is idempotent, so the job may run again.
    async fn fan_out(
        &self,
        event: jobs::Event,
        at: chrono::DateTime<chrono::Utc>,
        data: &serde_json::Value,
    ) -> Result<(), JobError> {
        let retry = |e: Error| JobError::retry(chain(&e));
        let configured = self.notify().map_or(&[][..], |n| &n.webhooks[..]);
        let hooks = notification::webhooks::all_webhooks(&self.store, configured)
            .await
            .map_err(retry)?;
        notification::webhooks::fan_out(&self.store, &hooks, event, at, data)
            .await
            .map_err(retry)?;
        if let Some(notify) = self.notify() {
            notification::alerts::on_event(&self.store, notify, event, at, data)
                .await
                .map_err(retry)?;
        }
        Ok(())
    }

    /// The mailer of alerts, or why there is none (for good).
    fn alert_mailer(
        &self,
    ) -> Result<(&notification::NotifySettings, notification::mail::Mailer), JobError> {
        let Some(notify) = self.notify() else {
            return Err(JobError::permanent(
                "this worker was started without mail settings, so it cannot mail an alert",
            ));
        };
        let mailer = notification::mail::Mailer::new(&notify.smtp)
            .map_err(|e| JobError::permanent(chain(&e)))?;
        Ok((notify, mailer))
    }

    /// Mails one alert: a server that is down or answers 4xx is tried again with backoff.
    async fn send_alert(
        &self,
        user: store::UserId,
        event: store::AlertEventId,
    ) -> Result<(), JobError> {
        let (notify, mailer) = self.alert_mailer()?;
        match notification::alerts::send_alert(&self.store, notify, &mailer, user, event).await {
            Ok(outcome) => {
                tracing::info!(%user, %event, ?outcome, "alert");
                Ok(())
            }
            Err(Error::Mail(e)) if !e.permanent => Err(JobError::retry(e.reason)),
            Err(e @ (Error::Mail(_) | Error::Notice(_))) => Err(JobError::permanent(chain(&e))),
            Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
            Err(e) => Err(JobError::retry(chain(&e))),
        }
    }

    /// Mails the daily digests; a digest the server did not take waits for the job's retry
    /// (the others are marked sent and not mailed again).
    async fn send_digests(&self) -> Result<(), JobError> {
        let (notify, mailer) = self.alert_mailer()?;
        match notification::alerts::send_digests(&self.store, notify, &mailer).await {
            Ok(report) if report.failed.is_empty() => {
                tracing::info!(mailed = report.mailed.len(), "alert digests");
                Ok(())
            }
            Ok(report) => Err(JobError::retry(format!(
                "{} digests mailed, {} not: {}",
                report.mailed.len(),
                report.failed.len(),
                report
                    .failed
                    .iter()
                    .map(|(user, why)| format!("user {user}: {why}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ))),
            Err(e) => Err(JobError::retry(chain(&e))),
        }
    }

    /// POSTs one webhook delivery through the crawler's fetcher (its address rules apply).
    async fn deliver(
        &self,
        url: &str,
        id: &str,
        event: jobs::Event,
        at: chrono::DateTime<chrono::Utc>,
        data: &serde_json::Value,
    ) -> Result<(), JobError> {
        let (Some(mail), Some(crawl)) = (&self.mail, &self.crawler) else {
            return Err(JobError::permanent(
                "this worker was started without mail and crawler settings, so it cannot \
                 deliver a webhook",
            ));
        };
        let fetcher = match self.poster.get() {
            Some(f) => f,
            None => {
                let built = crawler::Fetcher::new(crawl.fetch.clone())
                    .map_err(|e| JobError::permanent(chain(&e)))?;
                self.poster.get_or_init(|| built)
            }
        };
        let hooks = notification::webhooks::all_webhooks(&self.store, &mail.1.webhooks)
            .await
            .map_err(|e| JobError::retry(chain(&e)))?;
        let delivery = (url, id, event, at, data);
        match notification::webhooks::deliver(fetcher, &hooks, delivery, chrono::Utc::now()).await {
            Ok(_) => Ok(()),
            Err(e) if e.permanent => Err(JobError::permanent(e.reason)),
            Err(e) => Err(JobError::retry(e.reason)),
        }
    }

    /// Mails a notice: a server that is down or answers 4xx is tried again with backoff; a
    /// refusal (5xx), a notice that cannot be mailed as it is, or an earlier attempt with no
    /// outcome is not (the notice page says why).
    async fn send_notice(&self, id: store::NoticeId, again: bool) -> Result<(), JobError> {
        let Some(mail) = &self.mail else {
            return Err(JobError::permanent(
                "this worker was started without mail settings, so it cannot send a notice",
            ));
        };
        let (notices, notify) = mail.as_ref();
        let mailer = notification::mail::Mailer::new(&notify.smtp)
            .map_err(|e| JobError::permanent(chain(&e)))?;
        let settings = takedown::sending::SendSettings {
            notices,
            notify,
            rechecks: &self.rechecks,
        };
        match takedown::sending::send_notice(&self.store, settings, &mailer, id, again, "worker")
            .await
        {
            Ok(_) => Ok(()),
            Err(Error::Mail(e)) if !e.permanent => Err(JobError::retry(e.reason)),
            Err(
                e @ (Error::Mail(_)
                | Error::Notice(_)
                | Error::Store {
                    source: store::Error::Conflict(_) | store::Error::NotFound { .. },
                    ..
                }),
            ) => Err(JobError::permanent(chain(&e))),
            Err(e) => Err(JobError::retry(chain(&e))),
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
                let built = Rechecker::new(
                    self.store.clone(),
                    Arc::clone(&self.analyser),
                    crawl,
                    self.rechecks.clone(),
                )
                .map_err(|e| JobError::permanent(chain(&e)))?
                .with_shards(self.shards);
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
        let stamped = match stamp_snapshot(&self.store, tsa, snapshot).await {
            Ok(_) => casework::timestamps::stamp_screenshot(&self.store, tsa, snapshot)
                .await
                .map(drop),
            Err(e) => Err(e),
        };
        match stamped {
            Ok(()) => Ok(()),
            Err(e) if e.is_not_found() => Err(JobError::permanent(chain(&e))),
            Err(e @ Error::Timestamp { .. }) => match &e {
                Error::Timestamp { source, .. } if source.is_transient() => {
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
        let (id, _, resumed) = match site_crawl(&self.store, base, site).await {
            Ok(c) => c,
            Err(e) if e.is_not_found() => {
                return Err(JobError::permanent(format!("site {site} is not watched")));
            }
            Err(e @ (Error::Store { .. } | Error::Crawler(crawler::Error::Store { .. }))) => {
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
            Err(e @ Error::Crawler(crawler::Error::Store { .. })) => {
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
            Err(e) => {
                // The last attempt marked the crawl failed: webhooks hear of it.
                if last_attempt && self.analyser.emits() {
                    let data = serde_json::json!({
                        "crawl": id.0, "runner": runner, "error": chain(&e),
                    });
                    if let Err(emit) = jobs::emit(&self.store, jobs::Event::CrawlFailed, data).await
                    {
                        tracing::warn!(crawl = %id, error = %emit, "crawl.failed not queued");
                    }
                }
                Err(JobError::retry(chain(&e)))
            }
        }
    }
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
