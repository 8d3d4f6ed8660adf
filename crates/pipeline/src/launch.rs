//! Crawls a person starts by hand (`copyhound crawl`): a new crawl of seed URLs or a stopped
//! one resumed, with the flags over the configured (or stored) settings, checked before
//! anything is stored; then queued for the workers, or run in this process with its pages
//! matched as they are stored. The binary parses the flags and prints; the admin UI's
//! "crawl now" goes through [`crawling::crawl_site_now`] instead.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crawler::safety::AddressPolicy;
use crawler::{CrawlSettings, HeldUrls, StoreCrawl};
use crawling::{CrawlFinish, CrawlRunner, parse_seeds};
use detection::Analyser;
use jobs::{Error, Result, store_err};
use serde::Serialize;
use store::{CrawlId, Crawls, Store};
use url::Url;

use crate::handler::Handler;
use crate::serve::{MatchDrain, MatchWorkers};

/// How long a crawl run here waits for match jobs that make no progress (another process's,
/// or ones failing and waiting to be retried) before it leaves them to the workers.
pub const MATCH_IDLE: Duration = Duration::from_secs(30);

/// What the command line changes of a crawl's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrawlOverrides {
    /// Pages fetched at most (the crawl's budget; resuming, the new budget in all).
    pub max_pages: Option<u64>,
    /// Link hops followed from a seed at most.
    pub max_depth: Option<u32>,
    /// Allow loopback, private and link-local addresses.
    pub allow_private: bool,
    /// Render every page in the headless browser (`crawler.render.enabled`).
    pub render: bool,
}

impl CrawlOverrides {
    /// These overrides over `s`.
    pub fn apply(&self, s: &mut CrawlSettings) {
        if let Some(n) = self.max_pages {
            s.max_pages = Some(n);
        }
        if let Some(d) = self.max_depth {
            s.max_depth = d;
        }
        if self.allow_private {
            s.fetch.safety.allow_private = true;
        }
        if self.render {
            s.render.enabled = true;
        }
    }
}

/// Creates a crawl of `urls` with `base` and the overrides, once the seeds, the settings and
/// the seeds' addresses are checked: bad input leaves no crawl row behind.
///
/// # Errors
/// A URL that is not absolute http(s), settings out of range (named by their full key), a
/// seed on an address the safety settings refuse or that does not resolve, a database
/// failure.
pub async fn new_crawl(
    store: &Store,
    base: &CrawlSettings,
    urls: &[String],
    overrides: &CrawlOverrides,
) -> Result<(CrawlId, CrawlSettings)> {
    let mut settings = base.clone();
    overrides.apply(&mut settings);
    let seeds = parse_seeds(urls)?;
    check_crawl(&settings, &seeds)
        .map_err(|e| Error::Refused(format!("while checking the crawl settings: {e}")))?;
    check_addresses(&seeds, &settings).await?;
    let id = StoreCrawl::create(store, &settings, &seeds).await?;
    Ok((id, settings))
}

/// A stopped crawl to resume: its stored settings with the overrides, checked against its
/// seeds; a new page budget is stored. Also who holds its URLs now (for the operator).
///
/// # Errors
/// An unknown crawl ([`Error::is_not_found`]), stored settings this build cannot read or run,
/// a database failure.
pub async fn resume_crawl(
    store: &Store,
    id: CrawlId,
    overrides: &CrawlOverrides,
) -> Result<(CrawlSettings, HeldUrls)> {
    let row = store.crawl(id).await.map_err(store_err(
        "looking up the crawl (the id `copyhound crawl` printed)",
    ))?;
    let mut settings: CrawlSettings = serde_json::from_str(&row.settings).map_err(|e| {
        Error::Refused(format!(
            "while reading the settings stored with crawl {id}: {e}"
        ))
    })?;
    overrides.apply(&mut settings);
    check_crawl(&settings, &parse_seeds(&row.seeds)?).map_err(|e| {
        Error::Refused(format!(
            "crawl {id} cannot run with the settings stored with it: {e}"
        ))
    })?;
    if overrides.max_pages.is_some() {
        store
            .set_crawl_budget(id, overrides.max_pages)
            .await
            .map_err(store_err("storing the crawl's new budget"))?;
    }
    let held = crawler::held_urls(store, id).await?;
    Ok((settings, held))
}

/// A crawl run in this process until it ends or `stop` resolves, its pages analysed as they
/// are stored (here, and by any worker serving the match queue).
#[derive(Debug)]
pub struct LocalCrawl {
    runner: CrawlRunner,
    matching: MatchWorkers,
}

impl LocalCrawl {
    /// Opens crawl `id` with `settings` and starts the match workers.
    ///
    /// # Errors
    /// An unknown crawl, settings that cannot run, a database failure.
    pub async fn open(
        store: &Store,
        id: CrawlId,
        settings: CrawlSettings,
        handler: Handler,
    ) -> Result<Self> {
        let runner = CrawlRunner::open(store, id, Some(settings)).await?;
        let matching = MatchWorkers::start(store, handler, MatchWorkers::default_concurrency());
        Ok(LocalCrawl { runner, matching })
    }

    /// The crawl being run (progress, frontier counts).
    pub fn crawl(&self) -> &StoreCrawl<Store> {
        self.runner.crawl()
    }

    /// Runs the crawl until it ends or `stop` resolves; `crawled` is called once the crawl
    /// has finished, before the match jobs are waited for (at most [`MATCH_IDLE`] without
    /// progress). The crawl's outcome comes with what matching did.
    ///
    /// # Errors
    /// The match workers failed; the crawl's own error is in the first element.
    pub async fn run(
        self,
        stop: impl Future<Output = ()>,
        crawled: impl FnOnce(&Result<CrawlFinish>),
    ) -> Result<(Result<CrawlFinish>, MatchDrain)> {
        let finish = self.runner.run(stop, true).await;
        crawled(&finish);
        let drain = self.matching.finish(MATCH_IDLE).await?;
        Ok((finish, drain))
    }
}

/// What `crawl --json` prints of a crawl run here.
#[derive(Debug, Serialize)]
pub struct CrawlSummary {
    /// The crawl.
    pub crawl_id: i64,
    /// `done`, or `queued` when stopped before the end (resume it).
    pub status: &'static str,
    /// Pages analysed by this command (the crawl's pages with text, and any other page
    /// waiting in the match queue).
    pub matched: u64,
    /// Match jobs left queued (for `copyhound worker`).
    pub match_jobs_left: u64,
    /// Pages stored by this run.
    pub pages: u64,
    /// Responses received.
    pub responses: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Bodies stored for the first time.
    pub new_bodies: u64,
    /// Bodies already stored.
    pub duplicate_bodies: u64,
    /// Failed fetches by kind.
    pub errors: BTreeMap<String, u64>,
    /// URLs skipped by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Fetches tried again.
    pub retries: u64,
    /// Frontier entries left (queued), over all runs of the crawl.
    pub queued: u64,
    /// Frontier entries finished, over all runs of the crawl.
    pub finished: u64,
    /// How long this run took.
    pub seconds: f64,
    /// The crawl's totals over all its runs, counted from what is stored.
    pub total: CrawlTotals,
}

/// A crawl's totals over all its runs (`crawls` row).
#[derive(Debug, Serialize)]
pub struct CrawlTotals {
    /// Pages fetched.
    pub pages: u64,
    /// Pages that failed.
    pub errors: u64,
    /// Bytes received.
    pub bytes: u64,
}

impl CrawlSummary {
    /// The summary of crawl `id`'s run here.
    #[must_use]
    pub fn new(id: CrawlId, finish: &CrawlFinish, drain: &MatchDrain) -> Self {
        let (r, totals) = (&finish.report, &finish.totals);
        CrawlSummary {
            crawl_id: id.0,
            status: finish.status.as_str(),
            matched: drain.matched,
            match_jobs_left: drain.left,
            pages: r.pages,
            responses: r.responses,
            bytes: r.bytes,
            new_bodies: r.new_bodies,
            duplicate_bodies: r.duplicate_bodies,
            errors: r.errors.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            skipped: r
                .skipped
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), *v))
                .collect(),
            retries: r.retries,
            queued: r.frontier.queued,
            finished: r.frontier.finished,
            seconds: r.elapsed.as_secs_f64(),
            total: CrawlTotals {
                pages: totals.pages_fetched,
                errors: totals.pages_failed,
                bytes: totals.bytes,
            },
        }
    }
}

/// The crawl's settings checked (once, with everything a crawl of `seeds` builds from them)
/// before anything is stored or queued; a value out of range is named by its full key.
fn check_crawl(s: &CrawlSettings, seeds: &[Url]) -> Result<(), String> {
    match s.check(seeds) {
        Err(crawler::Error::OutOfRange(e)) => Err(e.in_section("crawler").to_string()),
        Err(e) => Err(e.to_string()),
        Ok(()) => Ok(()),
    }
}

/// Refuses seeds on addresses the safety settings do not allow before anything is stored, so
/// the operator hears why at once rather than finding a crawl of zero pages.
async fn check_addresses(seeds: &[Url], settings: &CrawlSettings) -> Result<()> {
    let policy = AddressPolicy::new(&settings.fetch.safety);
    for seed in seeds {
        let Some(host) = seed.host_str() else {
            return Err(Error::Refused(format!(
                "invalid url {seed}: it has no host"
            )));
        };
        let port = seed.port_or_known_default().unwrap_or(80);
        let addrs = tokio::net::lookup_host((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|e| Error::Refused(format!("while resolving {host} (seed {seed}): {e}")))?;
        for addr in addrs {
            policy.check(host, addr.ip())?;
        }
    }
    Ok(())
}

/// What an operator resuming crawl `id` is told of the URLs other runs hold: those of dead
/// runs come back at once, those of live runs stay with them.
pub fn held_urls_notes(id: CrawlId, held: &HeldUrls) -> Vec<String> {
    let mut notes = Vec::new();
    if held.by_dead_runs > 0 {
        notes.push(format!(
            "note: {} urls of crawl {id} held by runs that died are crawled again",
            held.by_dead_runs
        ));
    }
    if held.by_live_runs > 0 {
        notes.push(format!(
            "note: {} urls of crawl {id} are held by {} other run(s) that were alive \
             moments ago; if they were killed, their urls come back within {} s \
             (crawler.run_dead_after)",
            held.by_live_runs,
            held.live_runs,
            held.longest_wait.as_secs_f64().ceil()
        ));
    }
    notes
}

/// A crawl run here as `crawl` prints it at the end: its status, this run's report, the
/// totals over all runs, the pages matched, and how to resume it if it stopped early.
pub fn finished_text(id: CrawlId, finish: &CrawlFinish, drain: &MatchDrain) -> String {
    let totals = &finish.totals;
    let left = if drain.left > 0 {
        format!(" ({} left queued for `copyhound worker`)", drain.left)
    } else {
        String::new()
    };
    let mut text = format!(
        "crawl {id}: {}\n{}\ncrawl {id} over all runs: {} pages, {:.1} MB, {} errors\n\
         pages matched: {}{left}\n",
        finish.status.as_str(),
        finish.report,
        totals.pages_fetched,
        totals.bytes as f64 / 1e6,
        totals.pages_failed,
        drain.matched,
    );
    if finish.status == store::CrawlStatus::Queued {
        text.push_str(&format!("resume with: copyhound crawl --resume {id}\n"));
    }
    text
}

/// A probe's crawl for discovery: run here like `crawl` runs one, its pages matched as they
/// are stored, and the match workers drained before it returns.
impl discovery::ProbeRunner for Handler {
    fn analyser(&self) -> &Arc<Analyser> {
        Handler::analyser(self)
    }

    async fn crawl_here(
        &self,
        store: &Store,
        id: CrawlId,
        settings: CrawlSettings,
    ) -> Result<Result<CrawlFinish>> {
        let local = LocalCrawl::open(store, id, settings, self.clone()).await?;
        let (finish, _drain) = local.run(std::future::pending(), |_| {}).await?;
        Ok(finish)
    }
}
