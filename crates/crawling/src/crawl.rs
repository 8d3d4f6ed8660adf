//! A crawl's life in one place: a runner of a stored crawl is opened (its pages' texts queue
//! their match jobs as they are stored), run until its frontier is done or it is told to
//! stop, and the crawl's status follows — `running` while it runs, `done` when nothing is
//! left to fetch, `queued` when it was stopped with work left (resumable), `failed` on an
//! error. `copyhound crawl` and the workers' crawl jobs both go through here.

use std::future::Future;

use crawler::{CrawlReport, CrawlSettings, StoreCrawl};
use store::{CrawlFrontier, CrawlId, CrawlRecord, CrawlRuns, CrawlStatus, Crawls, Store};

use jobs::{Error, Job, Result, match_follow_up, store_err};
use store::JobQueue;
use url::Url;

/// How a runner ended.
#[derive(Debug)]
pub struct CrawlFinish {
    /// What this runner did.
    pub report: CrawlReport,
    /// The crawl's status after it.
    pub status: CrawlStatus,
    /// Whether it was stopped before the end (the crawl resumes later).
    pub stopped: bool,
    /// The crawl's row after it, with its totals over all runs.
    pub totals: CrawlRecord,
}

/// One runner of a stored crawl.
#[derive(Clone)]
pub struct CrawlRunner {
    store: Store,
    id: CrawlId,
    crawl: StoreCrawl<Store>,
}

impl std::fmt::Debug for CrawlRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlRunner").field("id", &self.id).finish()
    }
}

impl CrawlRunner {
    /// A new run of crawl `id` with `settings` (the stored ones when `None`); its pages queue
    /// their match jobs.
    ///
    /// # Errors
    /// An unknown crawl ([`Error::is_not_found`]), settings that cannot run, a database
    /// failure.
    pub async fn open(store: &Store, id: CrawlId, settings: Option<CrawlSettings>) -> Result<Self> {
        let settings = match settings {
            Some(s) => s,
            None => StoreCrawl::stored_settings(store, id).await?,
        };
        let crawl =
            StoreCrawl::open_then(store.clone(), id, settings, Some(match_follow_up())).await?;
        Ok(CrawlRunner {
            store: store.clone(),
            id,
            crawl,
        })
    }

    /// The crawl being run (progress, frontier counts).
    pub fn crawl(&self) -> &StoreCrawl<Store> {
        &self.crawl
    }

    /// Runs until the frontier is done or `stop` resolves (then the pages in flight finish
    /// and the claimed URLs go back), and sets the crawl's status. On an error the crawl is
    /// marked `failed` when `fail_on_error` (the last attempt), `queued` otherwise.
    ///
    /// # Errors
    /// The crawl's error (after the status was set), or a database failure setting it.
    pub async fn run(
        &self,
        stop: impl Future<Output = ()>,
        fail_on_error: bool,
    ) -> Result<CrawlFinish> {
        self.store
            .set_crawl_status(self.id, CrawlStatus::Running, None)
            .await
            .map_err(store_err("marking the crawl running"))?;
        let run = self.crawl.run_to_end();
        let mut run = std::pin::pin!(run);
        let mut stop = std::pin::pin!(stop);
        let mut stopped = false;
        let result = loop {
            tokio::select! {
                r = &mut run => break r,
                () = &mut stop, if !stopped => {
                    stopped = true;
                    self.crawl.stop();
                }
            }
        };
        let report = match result {
            Ok(report) => report,
            Err(e) => {
                let (status, message) = if fail_on_error {
                    (CrawlStatus::Failed, Some(format!("{e}")))
                } else {
                    (CrawlStatus::Queued, None)
                };
                if let Err(set) = self
                    .store
                    .set_crawl_status(self.id, status, message.as_deref())
                    .await
                {
                    tracing::warn!(crawl = %self.id, error = %set, "crawl status not set");
                }
                return Err(Error::Crawler(e));
            }
        };
        let status = self.status_after(stopped).await?;
        self.store
            .set_crawl_status(self.id, status, None)
            .await
            .map_err(store_err("setting the crawl's status"))?;
        let totals = self
            .store
            .crawl(self.id)
            .await
            .map_err(store_err("reading the crawl's totals"))?;
        Ok(CrawlFinish {
            report,
            status,
            stopped,
            totals,
        })
    }

    /// The crawl's status once this runner stopped: `running` while other live runners
    /// still hold URLs (the last of them decides); otherwise `done` when the runner ran out
    /// of work (frontier exhausted or page budget spent) or nothing is left, `queued` when it
    /// was stopped with work left.
    async fn status_after(&self, stopped: bool) -> Result<CrawlStatus> {
        let others_alive = self
            .store
            .crawl_runs(self.id)
            .await
            .map_err(store_err("reading the crawl's runs"))?
            .iter()
            .any(|r| r.alive && r.claims > 0);
        if others_alive {
            return Ok(CrawlStatus::Running);
        }
        if !stopped {
            return Ok(CrawlStatus::Done);
        }
        let counts = self
            .store
            .frontier_counts(self.id)
            .await
            .map_err(store_err("counting the crawl's frontier"))?;
        Ok(if counts.queued + counts.claimed == 0 {
            CrawlStatus::Done
        } else {
            CrawlStatus::Queued
        })
    }
}

/// Queues `runners` runner jobs of crawl `id` for the workers.
///
/// # Errors
/// A database failure.
pub async fn queue_crawl(store: &Store, id: CrawlId, runners: u32) -> Result<()> {
    for runner in 0..runners {
        let job = Job::crawl_runner(id, runner).map_err(store_err("encoding the crawl job"))?;
        store
            .enqueue(&job)
            .await
            .map_err(store_err("queueing the crawl"))?;
    }
    Ok(())
}

/// Seeds as absolute http(s) URLs.
///
/// # Errors
/// A URL that does not parse, or of another scheme.
pub fn parse_seeds(urls: &[String]) -> Result<Vec<Url>> {
    urls.iter()
        .map(|u| {
            let url = Url::parse(u).map_err(|e| {
                Error::Refused(format!(
                    "invalid url {u:?}: give absolute http(s) urls, e.g. \
                     https://example.com/book/1/: {e}"
                ))
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(Error::Refused(format!(
                    "invalid url {u:?}: only http and https urls are crawled"
                )));
            }
            Ok(url)
        })
        .collect()
}
