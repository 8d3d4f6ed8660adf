//! Discovery: finding the sites nobody has named yet, as candidates a person approves.
//!
//! A work's chapters give query phrases ([`phrases`]: rare, exact spans, away from the first
//! lines, none shared with another registered work), a search provider ([`providers`]) is
//! asked for each within the day's budgets (per work, per provider) with its answers cached
//! ([`DiscoverySettings::cache_ttl`]) and its errors and quota answers counted, never retried
//! in a loop. Every URL found is probed as a crawl of those URLs alone (depth 0), so the
//! crawler's rules hold (robots.txt, politeness, address safety) and the pages are matched as
//! crawled pages are: a match opens its case. A domain with a match becomes a
//! [`store::Candidate`]; licensed and ignored domains are never probed.
//! [`approve`] makes a candidate a watched site with its found URLs crawled, [`ignore`] shuts
//! it out.
//!
//! Nothing here crawls the open web by itself: it fetches only the URLs a provider returned
//! for the work's own phrases, and follows no link from them.
//!
//! It may use `jobs`, the match stage (`detection`), `crawling` (a probe's crawl, a candidate
//! made a watched site) and the stage crates below them. A probe's crawl is run here, its
//! pages matched as they are stored, by the job loop above ([`ProbeRunner`], which
//! `pipeline::Handler` implements): discovery does not import the loop back.

pub mod cdx;
pub mod phrases;
mod probe;
pub mod providers;
mod records;
mod schedule;
pub mod wet;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use crawler::{CrawlSettings, StoreCrawl};
use crawling::CrawlFinish;
use detection::Analyser;
use jobs::{Error, Result, store_err};
use serde::{Deserialize, Serialize};
use store::{
    Candidate, CandidateStatus, CrawlId, Discovery, FoundUrl, LicensedDomains, NewQuery, Page,
    Store, SuspectSites, WorkFilter, WorkId, WorkReads,
};
use url::Url;

pub use cdx::CdxSettings;
pub use phrases::{Phrase, PhraseSettings, SharedSpans, select_phrases};
pub use probe::{DomainProbe, domains_to_probe, probe_domain, probe_job, queue_probes};
pub use providers::{Hit, ProviderError, ProviderKind, ProviderSettings};
pub use schedule::{
    DueSearches, SCHEDULE, discover_work_job, enqueue_due_searches, ensure_discovery_schedule,
    queue_wet_scans, scan_wet_job,
};

/// What discovery needs of the job loop above it (`pipeline::Handler`, in the workers and
/// the CLI alike): the match stage, and a probe's crawl run in this process with its pages
/// matched as they are stored.
pub trait ProbeRunner: Clone + Send + Sync {
    /// The match stage a scan's records are matched with.
    fn analyser(&self) -> &Arc<Analyser>;

    /// Runs stored crawl `id` with `settings` here until its frontier is done, its pages
    /// matched as they are stored; the crawl's own outcome is the inner result.
    ///
    /// # Errors
    /// An unknown crawl, settings that cannot run, the match workers failing.
    fn crawl_here(
        &self,
        store: &Store,
        id: CrawlId,
        settings: CrawlSettings,
    ) -> impl Future<Output = Result<Result<CrawlFinish>>> + Send;
}

/// Discovery's settings (`[discovery]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiscoverySettings {
    /// How query phrases are cut (`[discovery.phrases]`).
    pub phrases: PhraseSettings,
    /// The provider `discover search` uses without `--provider` (the only one configured,
    /// when this one is not).
    pub default_provider: String,
    /// Queries one work may send per day (UTC), over all providers.
    pub queries_per_work_per_day: u32,
    /// How long a provider's answer to a phrase is reused instead of asking again.
    #[serde(with = "bounds::duration_serde")]
    pub cache_ttl: Duration,
    /// URLs probed per run at most (the crawl's page budget).
    pub max_probe_urls: u32,
    /// The search providers, by name (`[discovery.providers.NAME]`).
    pub providers: BTreeMap<String, ProviderSettings>,
    /// When the `discovery` schedule queues the searches due (cron, UTC): works never
    /// searched first, then the longest unsearched, as many as the default provider's day
    /// budget leaves room for. Empty: no schedule (`discover search` by hand only).
    pub schedule: String,
    /// Common Crawl's CDX index, which lists a probed domain's URLs (`[discovery.cdx]`).
    pub cdx: CdxSettings,
    /// How a WET scan matches its records ([`WetOptions::mode`]): `auto`, `page` or `batch`.
    pub wet_mode: matcher::ModeChoice,
    /// Records a WET scan's batch holds at most ([`WetOptions::batch_records`]).
    pub wet_batch_records: usize,
}

impl Default for DiscoverySettings {
    fn default() -> Self {
        DiscoverySettings {
            phrases: PhraseSettings::default(),
            default_provider: "searxng".to_owned(),
            queries_per_work_per_day: 20,
            cache_ttl: Duration::from_secs(72 * 3600),
            max_probe_urls: 200,
            providers: BTreeMap::new(),
            // Hourly, off the hour: the day's budget, not the schedule, bounds the queries;
            // an hourly look spreads them over the day as works are added.
            schedule: "17 * * * *".to_owned(),
            cdx: CdxSettings::default(),
            wet_mode: matcher::ModeChoice::Auto,
            wet_batch_records: detection::DEFAULT_BATCH_PAGES,
        }
    }
}

impl DiscoverySettings {
    /// Checks every value, each provider's too.
    ///
    /// # Errors
    /// A value out of range, named by its key under `[discovery]`'s sections.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        self.phrases
            .validate()
            .map_err(|e| e.in_section("phrases"))?;
        bounds::between("wet_batch_records", self.wet_batch_records, 1, 1_000_000)?;
        bounds::between(
            "queries_per_work_per_day",
            self.queries_per_work_per_day,
            0,
            100_000,
        )?;
        bounds::between(
            "cache_ttl",
            self.cache_ttl,
            Duration::ZERO,
            Duration::from_secs(366 * 24 * 3600),
        )?;
        bounds::between("max_probe_urls", self.max_probe_urls, 1, 100_000)?;
        self.cdx.validate().map_err(|e| e.in_section("cdx"))?;
        for (name, provider) in &self.providers {
            provider
                .validate()
                .map_err(|e| e.in_section(name).in_section("providers"))?;
        }
        Ok(())
    }

    /// The provider named `name` (the default one when `None`).
    ///
    /// # Errors
    /// [`Error::Refused`] naming the configured providers.
    pub fn provider(&self, name: Option<&str>) -> Result<(&str, &ProviderSettings)> {
        // Not named: the default provider, or the only one configured when the default is
        // not (a Brave key alone needs no `default_provider`).
        let name = match (name, self.providers.len()) {
            (Some(name), _) => name,
            (None, 1) if !self.providers.contains_key(&self.default_provider) => self
                .providers
                .keys()
                .next()
                .map_or(self.default_provider.as_str(), String::as_str),
            (None, _) => &self.default_provider,
        };
        self.providers
            .get_key_value(name)
            .map(|(k, v)| (k.as_str(), v))
            .ok_or_else(|| {
                let known: Vec<&str> = self.providers.keys().map(String::as_str).collect();
                Error::Refused(format!(
                    "no search provider named {name:?} is configured ({}); add \
                     [discovery.providers.{name}] with kind, endpoint and key",
                    if known.is_empty() {
                        "none is".to_owned()
                    } else {
                        format!("configured: {}", known.join(", "))
                    }
                ))
            })
    }
}

/// What `discover search` is asked to do.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The work whose phrases are sent.
    pub work: WorkId,
    /// The provider (the default one when `None`).
    pub provider: Option<String>,
    /// At most this many queries sent this run (within the day's budgets).
    pub max_queries: Option<u32>,
    /// Let the provider's requests and the probe reach loopback and private addresses
    /// (tests, a lab; a SearXNG on this machine).
    pub allow_private: bool,
}

/// What a run of discovery did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchReport {
    /// The provider asked.
    pub provider: String,
    /// Phrases selected (after shared spans were dropped).
    pub phrases: usize,
    /// Phrases dropped because another work or a licensed page holds them.
    pub shared: usize,
    /// Queries sent.
    pub sent: u32,
    /// Phrases answered from the cache.
    pub cached: u32,
    /// Quota answers (the run stopped asking at the first).
    pub quota: u32,
    /// Other failed queries.
    pub errors: u32,
    /// The last error or quota message.
    pub last_error: Option<String>,
    /// Whether the day's budget ended the run before the phrases did.
    pub budget_spent: bool,
    /// Whether the run's own cap (`max_queries`) ended it before the phrases or the day's
    /// budget did.
    pub cap_reached: bool,
    /// Distinct URLs the provider returned.
    pub urls: usize,
    /// URLs left out: on a licensed, ignored or watched domain, not http(s), or refused by
    /// the address rules.
    pub skipped: usize,
    /// URLs probed (fetched and matched).
    pub probed: usize,
    /// The crawl that probed them.
    pub crawl: Option<store::CrawlId>,
    /// Domains with a match: the candidates, new or known.
    pub candidates: Vec<Candidate>,
}

/// The HTTP client an API (a search provider, the CDX index) is asked with: the crawler's
/// agent and address rules, every request bounded by `timeout`, redirects as `redirects`
/// (a provider's key stays on its host).
fn api_client(
    crawl: &CrawlSettings,
    timeout: Duration,
    redirects: crawler::outbound::Redirects,
) -> Result<crawler::outbound::Outbound> {
    use crawler::outbound::{Outbound, OutboundSettings};
    Outbound::new(&OutboundSettings {
        connect_timeout: timeout,
        timeout: Some(timeout),
        redirects,
        ..OutboundSettings::new(&crawl.fetch.safety, &agent(crawl))
    })
    .map_err(|e| Error::Refused(format!("cannot set up the HTTP client: {e}")))
}

/// The `User-Agent` of discovery's requests: the crawler's agent and our version.
fn agent(crawl: &CrawlSettings) -> String {
    format!("{}/{}", crawl.fetch.agent, env!("CARGO_PKG_VERSION"))
}

/// The start of the UTC day of `now`: the budgets' day.
pub fn day_start(now: DateTime<Utc>) -> DateTime<Utc> {
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .map_or(now, |d| d.and_utc())
}

/// The `host[:port]` of an http(s) URL, as sites and candidates key it.
pub fn url_domain(url: &Url) -> Option<String> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.to_lowercase();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// The query phrases of a work, best first: each chapter's best phrase in chapter order, then
/// each chapter's second, and so on, with phrases other works hold dropped. Returns the
/// phrases and how many were dropped as shared.
///
/// # Errors
/// A database failure, an unknown work.
pub async fn work_phrases(
    store: &Store,
    work: WorkId,
    settings: &PhraseSettings,
) -> Result<(Vec<Phrase>, usize)> {
    let chapters = store
        .chapters(work)
        .await
        .map_err(store_err("reading the work's chapters"))?;
    let mut per_chapter = Vec::with_capacity(chapters.len());
    for info in &chapters {
        let chapter = store
            .chapter(info.id)
            .await
            .map_err(store_err("reading a chapter"))?;
        per_chapter.push(select_phrases(&chapter.body, settings));
    }
    let mut phrases = Vec::new();
    let mut seen = BTreeSet::new();
    for round in 0.. {
        let mut any = false;
        for chapter in &per_chapter {
            if let Some(p) = chapter.get(round) {
                any = true;
                if seen.insert(p.text.clone()) {
                    phrases.push(p.clone());
                }
            }
        }
        if !any {
            break;
        }
    }
    // Other registered works: a phrase one of them holds finds that work's copies first.
    let mut shared = SharedSpans::new(phrases.iter().map(|p| p.text.as_str()));
    let works = store
        .works(&WorkFilter::All, Page::all())
        .await
        .map_err(store_err("listing the works"))?;
    for other in works.iter().filter(|w| w.id != work) {
        let chapters = store
            .chapters(other.id)
            .await
            .map_err(store_err("reading another work's chapters"))?;
        for info in chapters {
            let chapter = store
                .chapter(info.id)
                .await
                .map_err(store_err("reading another work's chapter"))?;
            shared.scan(&chapter.body);
        }
    }
    // Licensed domains' own pages besides the work (blurbs, excerpts): a search for a span
    // they hold finds them first, and they are never candidates.
    for text in store
        .licensed_page_texts(work, LICENSED_PAGES_SCANNED)
        .await
        .map_err(store_err("reading licensed domains' pages"))?
    {
        shared.scan(&text);
    }
    let dropped = shared.shared_count();
    let kept = phrases
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !shared.is_shared(*i))
        .map(|(_, p)| p)
        .collect();
    Ok((kept, dropped))
}

/// The newest pages of licensed domains read for shared spans, at most.
const LICENSED_PAGES_SCANNED: u32 = 2_000;

/// Runs discovery for one work now: phrases, queries within the budgets, the URLs probed by
/// a crawl run here (its pages matched), and the domains with a match made candidates.
///
/// # Errors
/// An unknown work or provider, a database failure, the probe's crawl failing to start.
/// A provider's failures are counted in the report, not returned.
pub async fn search_work(
    store: &Store,
    settings: &DiscoverySettings,
    crawl: &CrawlSettings,
    handler: impl ProbeRunner,
    options: &SearchOptions,
) -> Result<SearchReport> {
    let (name, provider) = settings.provider(options.provider.as_deref())?;
    store
        .work(options.work)
        .await
        .map_err(store_err("reading the work (see `copyhound works list`)"))?;
    let (phrases, shared) = work_phrases(store, options.work, &settings.phrases).await?;
    let mut report = SearchReport {
        provider: name.to_owned(),
        phrases: phrases.len(),
        shared,
        ..SearchReport::default()
    };
    let now = Utc::now();
    let today = day_start(now);
    let sent_work = store
        .queries_sent(today, None, Some(options.work))
        .await
        .map_err(store_err("counting today's queries of the work"))?;
    let sent_provider = store
        .queries_sent(today, Some(name), None)
        .await
        .map_err(store_err("counting today's queries of the provider"))?;
    // The day's budgets, and this run's own cap (`--max-queries`): the report says which
    // one stopped it.
    let mut budget = u64::from(settings.queries_per_work_per_day)
        .saturating_sub(sent_work)
        .min(u64::from(provider.queries_per_day).saturating_sub(sent_provider));
    let mut run_cap = options.max_queries.map_or(u64::MAX, u64::from);
    let cache_since =
        now - chrono::Duration::from_std(settings.cache_ttl).unwrap_or(chrono::Duration::zero());
    let last_asked: HashMap<String, DateTime<Utc>> = store
        .last_asked(name, options.work)
        .await
        .map_err(store_err("reading when the work's phrases were sent"))?
        .into_iter()
        .collect();
    let phrases = rotate(phrases, &last_asked);
    let mut api_crawl = crawl.clone();
    api_crawl.fetch.safety.allow_private |= options.allow_private;
    let client = api_client(
        &api_crawl,
        provider.timeout,
        crawler::outbound::Redirects::SameHost,
    )?;
    let mut found: Vec<(String, Option<WorkId>)> = Vec::new();
    for phrase in &phrases {
        let asked = last_asked.get(&phrase.text);
        if asked.is_some_and(|&at| at >= cache_since)
            && let Some(hits) = store
                .cached_hits(name, &phrase.text, cache_since)
                .await
                .map_err(store_err("reading the query cache"))?
        {
            report.cached += 1;
            found.extend(hits.into_iter().map(|u| (u, Some(options.work))));
            continue;
        }
        if budget == 0 {
            // The phrases sent most recently come last: their cached answers are still read.
            report.budget_spent = true;
            continue;
        }
        if run_cap == 0 {
            report.cap_reached = true;
            continue;
        }
        budget -= 1;
        run_cap -= 1;
        report.sent += 1;
        let answer = providers::search(&client, provider, &phrase.text).await;
        let (outcome, message, urls) = match &answer {
            Ok(hits) => ("ok", None, hits.iter().map(|h| h.url.clone()).collect()),
            Err(e) => (e.outcome(), Some(e.to_string()), Vec::new()),
        };
        store
            .record_query(&NewQuery {
                provider: name,
                query: &phrase.text,
                work: Some(options.work),
                outcome,
                message: message.as_deref(),
                hits: &urls,
            })
            .await
            .map_err(store_err("logging a query"))?;
        match answer {
            Ok(_) => found.extend(urls.into_iter().map(|u| (u, Some(options.work)))),
            Err(e) => {
                tracing::warn!(provider = name, error = %e, "search provider failed");
                report.last_error = message;
                if matches!(e, ProviderError::Quota { .. }) {
                    report.quota += 1;
                    // Never asked again in a loop: the rest of the day's phrases wait.
                    break;
                }
                report.errors += 1;
            }
        }
    }
    let found_by = format!("search:{name}");
    let probe = probe_urls(
        store,
        settings,
        crawl,
        handler,
        &found,
        &found_by,
        options.allow_private,
    )
    .await?;
    store
        .mark_work_searched(options.work, Utc::now())
        .await
        .map_err(store_err("recording the work's search"))?;
    report.urls = probe.urls;
    report.skipped = probe.skipped;
    report.probed = probe.probed;
    report.crawl = probe.crawl;
    report.candidates = probe.candidates;
    Ok(report)
}

/// `phrases` (best first) in the order a run sends them: the ones never sent to the provider
/// first, best first, then the ones sent longest ago. A work with more phrases than a day's
/// budget thus covers all its chapters over the days instead of asking its first phrases again
/// once their cached answers expire.
fn rotate(phrases: Vec<Phrase>, last_asked: &HashMap<String, DateTime<Utc>>) -> Vec<Phrase> {
    let mut phrases = phrases;
    // Stable: ties (never sent) keep their rank.
    phrases.sort_by_key(|p| last_asked.get(&p.text).copied());
    phrases
}

/// What probing found URLs did.
#[derive(Debug, Default)]
pub(crate) struct Probe {
    urls: usize,
    skipped: usize,
    probed: usize,
    crawl: Option<store::CrawlId>,
    candidates: Vec<Candidate>,
    /// Domains of the found URLs left out as licensed, ignored or watched.
    left_out: BTreeSet<String>,
}

/// Stores `found` URLs, fetches the ones on domains that may be probed with one crawl of
/// depth 0 run here (its pages matched as it goes) and makes the domains with a copy
/// candidates found by `found_by`.
pub(crate) async fn probe_urls(
    store: &Store,
    settings: &DiscoverySettings,
    base: &CrawlSettings,
    handler: impl ProbeRunner,
    found: &[(String, Option<WorkId>)],
    found_by: &str,
    allow_private: bool,
) -> Result<Probe> {
    let mut crawl_settings = base.clone();
    // The found URLs alone: no link followed, no sitemap read (a sitemap fetch would take a
    // found URL's place in the page budget).
    crawl_settings.max_depth = 0;
    crawl_settings.follow_sitemaps = false;
    if allow_private {
        crawl_settings.fetch.safety.allow_private = true;
    }
    let watched: BTreeSet<String> = store
        .watched_sites()
        .await
        .map_err(store_err("listing the watched sites"))?
        .into_iter()
        .map(|s| s.host.to_lowercase())
        .collect();
    let mut probe = Probe::default();
    let mut seeds: Vec<Url> = Vec::new();
    let mut rows = Vec::new();
    let mut seen = BTreeSet::new();
    let mut excluded: BTreeMap<String, bool> = BTreeMap::new();
    for (raw, work) in found {
        if !seen.insert(raw.clone()) {
            continue;
        }
        probe.urls += 1;
        let Some((url, domain)) = Url::parse(raw)
            .ok()
            .and_then(|u| url_domain(&u).map(|d| (u, d)))
        else {
            probe.skipped += 1;
            continue;
        };
        let is_excluded = match excluded.get(&domain) {
            Some(&e) => e,
            None => {
                let e = watched.contains(&domain)
                    || store
                        .host_excluded(&domain)
                        .await
                        .map_err(store_err("checking licensed and ignored domains"))?;
                excluded.insert(domain.clone(), e);
                e
            }
        };
        if is_excluded || crawling::sites::address_refused(&crawl_settings, url.as_str()).is_some()
        {
            probe.skipped += 1;
            continue;
        }
        rows.push(FoundUrl {
            domain: domain.clone(),
            url: url.to_string(),
            found_by: found_by.to_owned(),
            work: *work,
        });
        if seeds.len() < settings.max_probe_urls as usize {
            seeds.push(url);
        }
    }
    store
        .add_found_urls(&rows)
        .await
        .map_err(store_err("storing the found URLs"))?;
    probe.left_out = excluded
        .into_iter()
        .filter_map(|(domain, out)| out.then_some(domain))
        .collect();
    if seeds.is_empty() {
        return Ok(probe);
    }
    probe.probed = seeds.len();
    crawl_settings.max_pages = Some(seeds.len() as u64);
    let id = StoreCrawl::create(store, &crawl_settings, &seeds).await?;
    probe.crawl = Some(id);
    let finish = handler.crawl_here(store, id, crawl_settings).await?;
    if let Err(e) = finish {
        tracing::warn!(crawl = %id, error = %e, "the probe's crawl failed");
    }
    let domains: BTreeSet<&str> = rows.iter().map(|r| r.domain.as_str()).collect();
    for domain in domains {
        let copies = store
            .host_copies(domain)
            .await
            .map_err(store_err("counting a domain's copies"))?;
        if copies > 0 {
            let candidate = store
                .add_candidate(domain, found_by)
                .await
                .map_err(store_err("recording a candidate"))?;
            probe.candidates.push(candidate);
        }
    }
    Ok(probe)
}

/// Approves a candidate: its domain becomes a watched site (the first URL found there its
/// start URL, `schedule` its cron schedule), and a crawl of every URL found there is queued
/// for the workers. Returns the site and the queued crawl.
///
/// # Errors
/// An unknown candidate, one with no URL found (an imported domain not probed yet: crawl
/// it with `copyhound crawl` first), the store refusing the site (bad schedule).
pub async fn approve(
    store: &Store,
    base: &CrawlSettings,
    domain: &str,
    schedule: Option<&str>,
) -> Result<(store::Site, store::CrawlId)> {
    let candidate = store.candidate(domain).await.map_err(store_err(
        "reading the candidate (see `copyhound discover candidates`)",
    ))?;
    let urls = store
        .found_urls(&candidate.domain)
        .await
        .map_err(store_err("reading the candidate's URLs"))?;
    let seeds = crawling::parse_seeds(&urls)?;
    let Some(first) = seeds.first() else {
        return Err(Error::Refused(format!(
            "no URL was found on {} yet: nothing to start its crawls from",
            candidate.domain
        )));
    };
    let site = crawling::sites::watch_site(
        store,
        base,
        &store::NewSite {
            start_url: first.to_string(),
            name: None,
            settings: crawling::sites::default_site_settings(base),
            schedule: schedule.map(crawling::sites::site_schedule),
        },
    )
    .await?;
    let mut settings = crawling::sites::site_crawl_settings(base, &site.settings);
    settings.max_pages = Some(settings.max_pages.unwrap_or(1000).max(seeds.len() as u64));
    let id = StoreCrawl::create(store, &settings, &seeds).await?;
    crawling::queue_crawl(store, id, 1).await?;
    store
        .set_candidate_status(
            &candidate.domain,
            CandidateStatus::Approved,
            Some(site.id),
            &candidate.found_by,
        )
        .await
        .map_err(store_err("approving the candidate"))?;
    Ok((site, id))
}

/// Ignores a domain: never probed again, and no candidate (a domain not seen yet is
/// recorded as ignored, by hand).
///
/// # Errors
/// A domain that is no host name, a database failure.
pub async fn ignore(store: &Store, domain: &str) -> Result<Candidate> {
    store
        .set_candidate_status(domain, CandidateStatus::Ignored, None, "manual")
        .await
        .map_err(store_err("ignoring the domain"))
}

/// What [`import_domains`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DomainImport {
    /// Domains that became candidates.
    pub added: usize,
    /// Domains that were candidates (or ignored) already.
    pub known: usize,
    /// Lines that name no domain, with their line numbers.
    pub refused: Vec<(usize, String)>,
}

/// Adds the domains of a seed list as candidates to probe (found by `import`): one domain
/// (or URL) per line, or a CSV whose first column holds them; blank lines, `#` comments and a
/// header row are skipped.
///
/// # Errors
/// A database failure.
pub async fn import_domains(store: &Store, text: &str) -> Result<DomainImport> {
    let mut report = DomainImport::default();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let first = line
            .split([',', ';', '\t'])
            .next()
            .unwrap_or_default()
            .trim()
            .trim_matches('"');
        if i == 0
            && matches!(
                first.to_lowercase().as_str(),
                "domain" | "host" | "url" | "site"
            )
        {
            continue;
        }
        let domain = match store::normalize_candidate_domain(first) {
            Ok(d) if d.contains('.') || d.contains(':') => d,
            _ => {
                report
                    .refused
                    .push((i + 1, bounds::text::escape_controls(line).into_owned()));
                continue;
            }
        };
        if !seen.insert(domain.clone()) {
            continue;
        }
        let known = store
            .candidate(&domain)
            .await
            .map(Some)
            .or_else(|e| match e {
                store::Error::NotFound { .. } => Ok(None),
                e => Err(e),
            })
            .map_err(store_err("reading a candidate"))?;
        if known.is_some() {
            report.known += 1;
            continue;
        }
        store
            .add_candidate(&domain, "import")
            .await
            .map_err(store_err("adding a candidate"))?;
        report.added += 1;
    }
    Ok(report)
}

/// A work's query phrases as `discover phrases` prints them: each with its rarity, then how
/// many were left out as shared ([`work_phrases`]).
#[derive(Debug)]
pub struct PhraseTable<'a> {
    /// The phrases kept, rarest first.
    pub phrases: &'a [Phrase],
    /// How many were left out.
    pub shared: usize,
}

impl std::fmt::Display for PhraseTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for p in self.phrases {
            writeln!(
                f,
                "{:>6.2}  \"{}\"",
                p.rarity,
                bounds::text::escape_controls(&p.text)
            )?;
        }
        writeln!(
            f,
            "{} phrases; {} left out (another work or a licensed domain's page holds them)",
            self.phrases.len(),
            self.shared
        )
    }
}

/// Today's queries (UTC) by provider and outcome ([`Discovery::query_counts`]).
///
/// # Errors
/// A database failure.
pub async fn queries_today(store: &Store) -> Result<Vec<store::QueryCount>> {
    let now = chrono::Utc::now();
    let today = now
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .map_or(now, |d| d.and_utc());
    store
        .query_counts(today)
        .await
        .map_err(store_err("counting today's queries"))
}

/// Query counts as `discover queries` prints them.
#[derive(Debug)]
pub struct QueryTable<'a>(pub &'a [store::QueryCount]);

impl std::fmt::Display for QueryTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return writeln!(f, "no queries sent today");
        }
        writeln!(
            f,
            "{:<16} {:<6} {:>6}  last message",
            "provider", "outcome", "count"
        )?;
        for c in self.0 {
            writeln!(
                f,
                "{:<16} {:<6} {:>6}  {}",
                bounds::text::escape_controls(&c.provider),
                c.outcome,
                c.count,
                bounds::text::escape_controls(c.last_message.as_deref().unwrap_or(""))
            )?;
        }
        Ok(())
    }
}

/// Candidates as `discover candidates` prints them.
#[derive(Debug)]
pub struct CandidateTable<'a>(pub &'a [Candidate]);

impl std::fmt::Display for CandidateTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return writeln!(
                f,
                "no candidates (run `copyhound discover search --work ID`, or import a list \
                 with `copyhound discover import-domains FILE`)"
            );
        }
        writeln!(
            f,
            "{:<32} {:<9} {:>6} {:>6} {:>6} {:>8}  {:<16} first seen",
            "domain", "status", "urls", "pages", "works", "chapters", "found by"
        )?;
        for c in self.0 {
            writeln!(
                f,
                "{:<32} {:<9} {:>6} {:>6} {:>6} {:>8}  {:<16} {}",
                bounds::text::escape_controls(&c.domain),
                c.status.as_str(),
                c.urls,
                c.pages,
                c.works,
                c.chapters,
                bounds::text::escape_controls(&c.found_by),
                c.first_seen_at.format("%Y-%m-%d %H:%M")
            )?;
        }
        Ok(())
    }
}

impl std::fmt::Display for SearchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} phrases ({} left out: another work or a licensed page holds them); {} sent to {}, \
             {} from the cache",
            self.phrases, self.shared, self.sent, self.provider, self.cached
        )?;
        if self.quota > 0 || self.errors > 0 {
            writeln!(
                f,
                "{} quota answers, {} errors; last: {}",
                self.quota,
                self.errors,
                self.last_error.as_deref().unwrap_or("-")
            )?;
        }
        if self.budget_spent {
            writeln!(
                f,
                "today's budget is spent (discovery.queries_per_work_per_day, the provider's \
                 queries_per_day); the rest waits for tomorrow"
            )?;
        } else if self.cap_reached {
            writeln!(
                f,
                "this run's --max-queries was reached; today's budget has room left: run \
                 again for the rest"
            )?;
        }
        write!(
            f,
            "{} URLs found, {} left out, {} fetched",
            self.urls, self.skipped, self.probed
        )?;
        match self.crawl {
            Some(id) => writeln!(f, " (crawl {id})")?,
            None => writeln!(f)?,
        }
        if self.candidates.is_empty() {
            writeln!(f, "no domain with a copy")
        } else {
            write!(f, "{}", CandidateTable(&self.candidates))
        }
    }
}

/// What `discover commoncrawl` is asked to do.
#[derive(Debug, Clone)]
pub struct WetOptions {
    /// WET files: paths or http(s) URLs.
    pub inputs: Vec<String>,
    /// Let the downloads and the probe reach loopback and private addresses.
    pub allow_private: bool,
    /// What one file may cost: the longest record read, and the time a whole file may take
    /// (a file that never ends is cut there).
    pub max_record_bytes: usize,
    /// See [`WetOptions::max_record_bytes`].
    pub file_timeout: Duration,
    /// Longest silence while downloading a file.
    pub read_timeout: Duration,
    /// How records are matched: against the loaded index one at a time (`page`), held in
    /// batches with the stored fingerprints streamed past each and no index loaded (`batch`),
    /// or past the first look, each batch of the records that pass as the sizes make cheaper
    /// (`auto`); see `discovery/records.rs`.
    pub mode: matcher::ModeChoice,
    /// Records a batch holds at most.
    pub batch_records: usize,
}

impl Default for WetOptions {
    fn default() -> Self {
        WetOptions {
            inputs: Vec::new(),
            allow_private: false,
            max_record_bytes: wet::WetLimits::default().max_record_bytes,
            file_timeout: Duration::from_secs(4 * 3600),
            read_timeout: Duration::from_secs(60),
            mode: matcher::ModeChoice::Auto,
            batch_records: detection::DEFAULT_BATCH_PAGES,
        }
    }
}

impl WetOptions {
    /// The options of a scan of `inputs` as `[discovery]` configures it (its mode and batch
    /// size), the rest as [`WetOptions::default`].
    pub fn from_settings(settings: &DiscoverySettings, inputs: Vec<String>) -> Self {
        WetOptions {
            inputs,
            mode: settings.wet_mode,
            batch_records: settings.wet_batch_records,
            ..WetOptions::default()
        }
    }
}

/// A WET record whose text copies a registered work.
#[derive(Debug, Clone, Serialize)]
pub struct WetHit {
    /// The record's URL.
    pub url: String,
    /// Its capture date (`WARC-Date`).
    pub date: String,
    /// The works it copies.
    pub works: Vec<i64>,
}

/// One WET file that could not be read at all.
#[derive(Debug, Clone, Serialize)]
pub struct WetFailure {
    /// The path or URL.
    pub input: String,
    /// Why.
    pub error: String,
}

/// What scanning WET files did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WetReport {
    /// Files read (whole or cut).
    pub files: usize,
    /// Files that could not be opened.
    pub failed: Vec<WetFailure>,
    /// What the files held, summed (corrupt, oversized and cut ones counted).
    pub counts: wet::WetCounts,
    /// Files cut (deadline, a stalled download).
    pub cut: usize,
    /// Records whose text copies a work.
    pub hits: Vec<WetHit>,
    /// Batches of records matched in batch mode (the stored fingerprints streamed past each).
    pub batches: usize,
    /// Distinct URLs of those records.
    pub urls: usize,
    /// URLs left out (licensed, ignored, watched, refused addresses).
    pub skipped: usize,
    /// URLs fetched and matched live.
    pub probed: usize,
    /// The crawl that fetched them.
    pub crawl: Option<store::CrawlId>,
    /// Domains with a live copy: the candidates.
    pub candidates: Vec<Candidate>,
    /// Domains whose Common Crawl record copies a work but whose live copy was not found
    /// (the fetch failed, the name is gone, the page changed): kept as candidates found by
    /// [`ARCHIVE_ONLY`] with the capture's day, since pirate sites move and the lead is
    /// worth keeping.
    pub leads: Vec<Candidate>,
}

/// How a candidate seen in Common Crawl but not reachable live is found:
/// `commoncrawl_archive:YYYY-MM-DD`, the day of the capture.
pub const ARCHIVE_ONLY: &str = "commoncrawl_archive";

/// A blocking reader over a download's chunks, handed over by an async task: a silence of
/// `read_timeout` is [`std::io::ErrorKind::TimedOut`].
struct ChunkReader {
    chunks: std::sync::mpsc::Receiver<std::io::Result<bytes::Bytes>>,
    current: bytes::Bytes,
    read_timeout: Duration,
}

impl std::io::Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.recv_timeout(self.read_timeout) {
                Ok(chunk) => self.current = chunk?,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the download stalled",
                    ));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(0),
            }
        }
        let n = self.current.len().min(out.len());
        out[..n].copy_from_slice(&self.current[..n]);
        self.current = self.current.slice(n..);
        Ok(n)
    }
}

/// Opens a WET input: a file, or a download streamed in chunks (the address rules of
/// `crawl` apply to its host).
async fn open_wet(
    input: &str,
    crawl: &CrawlSettings,
    options: &WetOptions,
) -> std::result::Result<Box<dyn std::io::Read + Send>, String> {
    if !(input.starts_with("http://") || input.starts_with("https://")) {
        return std::fs::File::open(input)
            .map(|f| Box::new(f) as Box<dyn std::io::Read + Send>)
            .map_err(|e| e.to_string());
    }
    use crawler::outbound::{Outbound, OutboundSettings, Redirects};
    let client = Outbound::new(&OutboundSettings {
        connect_timeout: crawl.fetch.connect_timeout,
        read_timeout: Some(options.read_timeout),
        redirects: Redirects::Checked,
        ..OutboundSettings::new(&crawl.fetch.safety, &agent(crawl))
    })
    .map_err(|e| e.to_string())?;
    let mut response = client
        .send(client.client().get(input))
        .await
        .map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("{input} answered {}", response.status()));
    }
    let url = response.url().clone();
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    tokio::spawn(async move {
        loop {
            let next = match response.chunk().await {
                Ok(Some(chunk)) => Ok(chunk),
                Ok(None) => break,
                Err(e) => Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    client.read_error(e, &url).to_string(),
                )),
            };
            let failed = next.is_err();
            // The reader gone (cut at its deadline) ends the download; a full channel
            // waits on a blocking thread, not on the runtime.
            let tx = tx.clone();
            let sent = tokio::task::spawn_blocking(move || tx.send(next)).await;
            if failed || !matches!(sent, Ok(Ok(()))) {
                break;
            }
        }
    });
    Ok(Box::new(ChunkReader {
        chunks: rx,
        current: bytes::Bytes::new(),
        read_timeout: options.read_timeout,
    }))
}

/// Scans WET files: every `conversion` record's text matched against the registered works
/// as it streams by, the URLs of records with a copy probed live (fetched under the
/// crawler's rules and matched, as [`search_work`]'s are), and the domains with a live copy
/// made candidates found by `commoncrawl`. Each file is read on its own (one file, one
/// job): a file that cannot be opened is reported and the others read.
///
/// # Errors
/// A database failure; the probe's crawl failing to start.
pub async fn scan_commoncrawl(
    store: &Store,
    settings: &DiscoverySettings,
    crawl: &CrawlSettings,
    handler: impl ProbeRunner,
    options: &WetOptions,
) -> Result<WetReport> {
    let mut crawl_settings = crawl.clone();
    if options.allow_private {
        crawl_settings.fetch.safety.allow_private = true;
    }
    let analyser = handler.analyser();
    // Batch mode reads the records without an index: the stored fingerprints are streamed
    // past each batch.
    let live = if options.mode == matcher::ModeChoice::Batch {
        None
    } else {
        let live = Arc::clone(analyser.index().await?);
        live.refresh(store).await?;
        Some(live)
    };
    let pages = Arc::new(analyser.page_matcher().await?);
    let texts = Arc::new(detection::TextCache::default());
    let mut report = WetReport::default();
    for input in &options.inputs {
        let reader = match open_wet(input, &crawl_settings, options).await {
            Ok(r) => r,
            Err(error) => {
                report.failed.push(WetFailure {
                    input: input.clone(),
                    error,
                });
                continue;
            }
        };
        let limits = wet::WetLimits {
            max_record_bytes: options.max_record_bytes,
            deadline: Some(std::time::Instant::now() + options.file_timeout),
        };
        let mut records = records::RecordMatcher::new(
            options.mode,
            live.clone(),
            Arc::clone(&pages),
            options.batch_records,
            store.clone(),
            analyser.shard(),
            tokio::runtime::Handle::current(),
            Arc::clone(&texts),
        );
        let (counts, records) = tokio::task::spawn_blocking(move || {
            let counts = wet::read_wet(reader, limits, |record| records.take(record))?;
            // What was read before a cut is matched too.
            records.flush()?;
            Ok::<_, Error>((counts, records))
        })
        .await
        .map_err(|e| Error::task("scanning a WET file", e))??;
        report.batches += records.batches;
        let hits = records.hits;
        report.files += 1;
        report.cut += usize::from(counts.cut);
        add_counts(&mut report.counts, &counts);
        report.hits.extend(hits);
    }
    let found: Vec<(String, Option<WorkId>)> = report
        .hits
        .iter()
        .map(|h| (h.url.clone(), h.works.first().map(|&w| WorkId(w))))
        .collect();
    let probe = probe_urls(
        store,
        settings,
        &crawl_settings,
        handler,
        &found,
        "commoncrawl",
        options.allow_private,
    )
    .await?;
    report.urls = probe.urls;
    report.skipped = probe.skipped;
    report.probed = probe.probed;
    report.crawl = probe.crawl;
    report.candidates = probe.candidates;
    report.leads = keep_leads(
        store,
        &crawl_settings,
        &report.hits,
        &report.candidates,
        &probe.left_out,
    )
    .await?;
    Ok(report)
}

/// The domains of `hits` that are not among the live `candidates`, made candidates found
/// by [`ARCHIVE_ONLY`] with their capture's day; the domains the probe `left_out` (licensed,
/// ignored, watched) and refused addresses stay out, as they stayed out of the probe.
async fn keep_leads(
    store: &Store,
    crawl: &CrawlSettings,
    hits: &[WetHit],
    candidates: &[Candidate],
    left_out: &BTreeSet<String>,
) -> Result<Vec<Candidate>> {
    let live: BTreeSet<&str> = candidates.iter().map(|c| c.domain.as_str()).collect();
    let mut leads: Vec<Candidate> = Vec::new();
    for hit in hits {
        let Some(domain) = Url::parse(&hit.url).ok().and_then(|u| url_domain(&u)) else {
            continue;
        };
        if live.contains(domain.as_str())
            || left_out.contains(&domain)
            || leads.iter().any(|c| c.domain == domain)
            || crawling::sites::address_refused(crawl, &hit.url).is_some()
        {
            continue;
        }
        let day = hit.date.get(..10).unwrap_or(&hit.date);
        let lead = store
            .add_candidate(&domain, &format!("{ARCHIVE_ONLY}:{day}"))
            .await
            .map_err(store_err("recording a candidate"))?;
        leads.push(lead);
    }
    Ok(leads)
}

fn add_counts(sum: &mut wet::WetCounts, c: &wet::WetCounts) {
    sum.members += c.members;
    sum.records += c.records;
    sum.conversions += c.conversions;
    sum.text_bytes += c.text_bytes;
    sum.oversized += c.oversized;
    sum.corrupt += c.corrupt;
    sum.malformed += c.malformed;
    sum.cut |= c.cut;
}

/// The WET files of a crawl's `wet.paths.gz` (a gzip list of paths under
/// `https://data.commoncrawl.org/`, or absolute URLs), this shard's share: line `i` belongs
/// to shard `i mod N` of `K/N`, so N workers on as many machines split a crawl's segment
/// list without talking to each other.
///
/// # Errors
/// A list that cannot be read, is not gzip or is larger than 64 MiB inflated.
pub async fn segment_list(
    source: &str,
    crawl: &CrawlSettings,
    shard: bounds::Shard,
    allow_private: bool,
) -> Result<Vec<String>> {
    let mut crawl = crawl.clone();
    crawl.fetch.safety.allow_private |= allow_private;
    let options = WetOptions {
        allow_private,
        ..WetOptions::default()
    };
    let reader = open_wet(source, &crawl, &options)
        .await
        .map_err(|e| Error::Refused(format!("cannot read the segment list {source}: {e}")))?;
    let source_name = source.to_owned();
    let text = tokio::task::spawn_blocking(move || {
        use std::io::Read as _;
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(reader)
            .take(64 << 20)
            .read_to_string(&mut text)
            .map(|_| text)
            .map_err(|e| {
                Error::Refused(format!(
                    "the segment list {source_name} is not a gzip list of paths: {e}"
                ))
            })
    })
    .await
    .map_err(|e| Error::task("reading a segment list", e))??;
    let (index, shards) = (shard.index() as usize, shard.count() as usize);
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
        .filter(|(i, _)| i % shards == index)
        .map(|(_, l)| {
            if l.starts_with("http://") || l.starts_with("https://") {
                l.to_owned()
            } else {
                format!("https://data.commoncrawl.org/{}", l.trim_start_matches('/'))
            }
        })
        .collect())
}

impl std::fmt::Display for WetReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.counts;
        writeln!(
            f,
            "{} files read ({} cut, {} failed): {} records, {} conversions, {:.1} MB of text",
            self.files,
            self.cut,
            self.failed.len(),
            c.records,
            c.conversions,
            c.text_bytes as f64 / 1e6
        )?;
        if c.corrupt + c.oversized + c.malformed > 0 {
            writeln!(
                f,
                "skipped: {} corrupt members, {} oversized, {} malformed records",
                c.corrupt, c.oversized, c.malformed
            )?;
        }
        if self.batches > 0 {
            writeln!(
                f,
                "{} batches of records matched in batch mode (the registered chapters streamed past each)",
                self.batches
            )?;
        }
        for failure in &self.failed {
            writeln!(
                f,
                "failed: {}: {}",
                bounds::text::escape_controls(&failure.input),
                bounds::text::escape_controls(&failure.error)
            )?;
        }
        writeln!(
            f,
            "{} records copy a work; {} URLs, {} left out, {} fetched",
            self.hits.len(),
            self.urls,
            self.skipped,
            self.probed
        )?;
        if self.candidates.is_empty() {
            writeln!(f, "no domain with a live copy")?;
        } else {
            write!(f, "{}", CandidateTable(&self.candidates))?;
        }
        for lead in &self.leads {
            let day = lead.found_by.split_once(':').map_or("", |(_, day)| day);
            writeln!(
                f,
                "{}: seen in Common Crawl on {day}, not reachable now; kept as a candidate",
                lead.domain
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phrase(text: &str, rarity: f64) -> Phrase {
        Phrase {
            text: text.to_owned(),
            offset: 0,
            rarity,
        }
    }

    #[test]
    fn the_only_provider_configured_is_the_default() {
        let mut s = DiscoverySettings::default();
        s.providers.insert(
            "brave".into(),
            ProviderSettings::new(ProviderKind::Brave, None, Some("k")),
        );
        assert_eq!(s.provider(None).unwrap().0, "brave");
        assert!(s.provider(Some("searxng")).is_err());
        // Two configured and the default is neither: name one.
        s.providers.insert(
            "serp".into(),
            ProviderSettings::new(ProviderKind::Brave, None, Some("k")),
        );
        let err = s.provider(None).unwrap_err().to_string();
        assert!(err.contains("brave, serp"), "{err}");
        // The default, when configured, wins.
        s.providers.insert(
            "searxng".into(),
            ProviderSettings::new(ProviderKind::Searxng, None, None),
        );
        assert_eq!(s.provider(None).unwrap().0, "searxng");
    }

    #[test]
    fn a_run_stopped_by_its_own_cap_does_not_blame_the_day() {
        let capped = SearchReport {
            cap_reached: true,
            ..SearchReport::default()
        };
        let said = capped.to_string();
        assert!(said.contains("--max-queries was reached"), "{said}");
        assert!(!said.contains("today's budget is spent"), "{said}");
        let spent = SearchReport {
            budget_spent: true,
            cap_reached: true,
            ..SearchReport::default()
        };
        assert!(spent.to_string().contains("today's budget is spent"));
    }

    #[test]
    fn phrases_never_sent_go_first_then_the_longest_unsent() {
        let now = Utc::now();
        let phrases = vec![
            phrase("a", 5.0),
            phrase("b", 4.0),
            phrase("c", 3.0),
            phrase("d", 2.0),
            phrase("e", 1.0),
        ];
        let asked = HashMap::from([
            ("a".to_owned(), now),
            ("b".to_owned(), now - chrono::Duration::days(3)),
            ("d".to_owned(), now - chrono::Duration::days(1)),
        ]);
        let order: Vec<String> = rotate(phrases, &asked)
            .into_iter()
            .map(|p| p.text)
            .collect();
        assert_eq!(order, ["c", "e", "b", "d", "a"]);
    }
}
