//! Probing a domain: a candidate imported from a seed list (or any domain named by hand) has
//! no page yet. Its home page, over HTTPS and plain HTTP, and the URLs Common Crawl's CDX
//! index holds on it ([`super::cdx`], when an index is configured) are fetched by one crawl
//! of depth 0 under the crawler's rules (robots.txt, politeness, the address policy), at
//! most [`super::cdx::CdxSettings::limit`] of the index's plus the two home pages, and
//! matched as crawled pages are: a copy opens its case, and the domain becomes (or stays) a
//! candidate whose pages with a copy are counted from those matches; the URLs fetched are
//! its found URLs, so approving it crawls them.

use chrono::Utc;
use crawler::CrawlSettings;
use jobs::{Error, Job, Result, store_err};
use serde::Serialize;
use store::{Candidate, CandidateStatus, Discovery, JobQueue, NewJob, Store};

use super::{DiscoverySettings, ProbeRunner, api_client, cdx, probe_urls, url_domain};

/// What probing a domain did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DomainProbe {
    /// The domain (`host[:port]`).
    pub domain: String,
    /// URLs the CDX index listed on it (pages only).
    pub cdx_urls: usize,
    /// Why the index could not be asked, when it could not.
    pub cdx_error: Option<String>,
    /// URLs fetched.
    pub probed: usize,
    /// URLs left out (refused by the address rules).
    pub skipped: usize,
    /// The crawl that fetched them.
    pub crawl: Option<store::CrawlId>,
    /// The candidate, when the domain has a copy (or was one already).
    pub candidate: Option<Candidate>,
}

/// The job that probes `domain` (de-duplication key `probe:DOMAIN`).
///
/// # Errors
/// Never in practice (the job serialises).
pub fn probe_job(domain: &str) -> store::Result<NewJob> {
    Ok(NewJob::new(&Job::ProbeDomain {
        domain: domain.to_owned(),
    })?
    .dedupe_key(format!("probe:{domain}"))
    .max_attempts(3))
}

/// Probes `domain` now: its home pages and the URLs the CDX index lists, fetched and
/// matched; a domain with a copy becomes a candidate found by `probe` (a candidate already
/// keeps how it was found), the URLs fetched its found URLs.
///
/// # Errors
/// A domain that is no host name, or one ignored, approved or licensed (never probed); a
/// database failure; the crawl failing to start.
pub async fn probe_domain(
    store: &Store,
    settings: &DiscoverySettings,
    crawl: &CrawlSettings,
    handler: impl ProbeRunner,
    domain: &str,
    allow_private: bool,
) -> Result<DomainProbe> {
    let domain =
        store::normalize_candidate_domain(domain).map_err(store_err("reading the domain"))?;
    if store
        .host_excluded(&domain)
        .await
        .map_err(store_err("checking licensed and ignored domains"))?
    {
        return Err(Error::Refused(format!(
            "{domain} is ignored, approved (watched: crawl it with `copyhound sites crawl`) or \
             licensed: it is not probed"
        )));
    }
    let mut report = DomainProbe {
        domain: domain.clone(),
        ..DomainProbe::default()
    };
    let mut urls: Vec<String> = Vec::new();
    if settings.cdx.enabled() {
        let mut api_crawl = crawl.clone();
        api_crawl.fetch.safety.allow_private |= allow_private;
        let client = api_client(
            &api_crawl,
            settings.cdx.timeout,
            crawler::outbound::Redirects::Checked,
        )?;
        match cdx::domain_urls(&client, &settings.cdx, &domain).await {
            Ok(listed) => {
                // The index's answer for `domain/*` is the domain's own; a URL elsewhere is
                // not fetched on its word.
                urls.extend(listed.into_iter().filter(|u| {
                    url::Url::parse(u)
                        .ok()
                        .and_then(|u| url_domain(&u))
                        .is_some_and(|d| d == domain)
                }));
                report.cdx_urls = urls.len();
            }
            Err(e) => {
                tracing::warn!(domain = %domain, error = %e, "the CDX index failed");
                report.cdx_error = Some(e.to_string());
            }
        }
    }
    // The index's pages first: approving the domain starts its crawl at the first URL found.
    urls.push(format!("https://{domain}/"));
    urls.push(format!("http://{domain}/"));
    let found: Vec<(String, Option<store::WorkId>)> = urls.into_iter().map(|u| (u, None)).collect();
    let probe = probe_urls(
        store,
        settings,
        crawl,
        handler,
        &found,
        "probe",
        allow_private,
    )
    .await?;
    report.probed = probe.probed;
    report.skipped = probe.skipped;
    report.crawl = probe.crawl;
    match store.mark_probed(&domain, Utc::now()).await {
        Ok(()) => {
            report.candidate = Some(
                store
                    .candidate(&domain)
                    .await
                    .map_err(store_err("reading the candidate"))?,
            );
        }
        Err(store::Error::NotFound { .. }) => {}
        Err(e) => return Err(store_err("recording the probe")(e)),
    }
    Ok(report)
}

/// New candidates never probed: imported domains waiting for their first look.
///
/// # Errors
/// A database failure.
pub async fn domains_to_probe(store: &Store) -> Result<Vec<String>> {
    Ok(store
        .candidates(Some(CandidateStatus::New))
        .await
        .map_err(store_err("listing the candidates"))?
        .into_iter()
        .filter(|c| c.probed_at.is_none())
        .map(|c| c.domain)
        .collect())
}

/// Queues a [`Job::ProbeDomain`] per domain for the workers; returns how many are new.
///
/// # Errors
/// A database failure.
pub async fn queue_probes(store: &Store, domains: &[String]) -> Result<usize> {
    let mut new = 0;
    for domain in domains {
        let domain =
            store::normalize_candidate_domain(domain).map_err(store_err("reading the domain"))?;
        let job = probe_job(&domain).map_err(store_err("encoding the probe job"))?;
        let queued = store
            .enqueue(&job)
            .await
            .map_err(store_err("queueing a probe"))?;
        new += usize::from(matches!(queued, store::Enqueued::New(_)));
    }
    Ok(new)
}

impl std::fmt::Display for DomainProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let domain = bounds::text::escape_controls(&self.domain);
        write!(f, "{domain}: {} URLs fetched", self.probed)?;
        if self.cdx_urls > 0 {
            write!(f, " ({} listed by the CDX index)", self.cdx_urls)?;
        }
        if self.skipped > 0 {
            write!(f, ", {} refused by the address rules", self.skipped)?;
        }
        if let Some(id) = self.crawl {
            write!(f, " (crawl {id})")?;
        }
        writeln!(f)?;
        if let Some(e) = &self.cdx_error {
            writeln!(
                f,
                "  the CDX index failed: {}",
                bounds::text::escape_controls(e)
            )?;
        }
        match &self.candidate {
            Some(c) if c.pages > 0 => writeln!(
                f,
                "  a candidate: {} pages with a copy of {} works ({} chapters)",
                c.pages, c.works, c.chapters
            ),
            Some(_) => writeln!(f, "  no copy found; still a candidate to review"),
            None => writeln!(f, "  no copy found"),
        }
    }
}
