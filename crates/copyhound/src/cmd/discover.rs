//! `copyhound discover`: finding sites nobody has named yet. A work's rare phrases go to a
//! search provider, the URLs found are fetched under the crawler's rules and matched, and the
//! domains with a copy become candidates a person approves (a watched site) or ignores.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use discovery::{CandidateTable, SearchOptions};
use store::{CandidateStatus, Discovery, Store, WorkId};

use super::outln;
use settings::Settings;

/// `discover` subcommands.
#[derive(Debug, Subcommand)]
pub enum DiscoverCommand {
    /// Send a work's query phrases to a search provider now, fetch what it finds and list the
    /// domains with a copy.
    Search(SearchArgs),
    /// Scan Common Crawl WET files (paths or URLs, read as streams) for copies; the URLs of
    /// records with a copy are fetched and matched live, their domains made candidates.
    Commoncrawl(CommoncrawlArgs),
    /// The query phrases of a work, best first (nothing is sent).
    Phrases {
        /// The work's id (`works list`).
        #[arg(long)]
        work: i64,
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// The candidate sites, most pages with copies first.
    Candidates {
        /// Only candidates with this status: new, approved or ignored.
        #[arg(long, value_parser = parse_status)]
        status: Option<CandidateStatus>,
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Watch a candidate: a watched site whose crawl starts from the URLs found there.
    Approve {
        /// The candidate's domain (`host` or `host:port`).
        domain: String,
        /// Crawl it on this cron schedule (UTC), e.g. "0 3 * * *".
        #[arg(long, value_name = "CRON")]
        schedule: Option<String>,
    },
    /// Never probe a domain again (whether or not it is a candidate).
    Ignore {
        /// The domain.
        domain: String,
    },
    /// Fetch a domain's home page and the URLs Common Crawl's CDX index lists on it
    /// (`discovery.cdx.endpoint`) and match them; without DOMAIN, every new candidate never
    /// probed (imported domains).
    Probe {
        /// The domain (`host` or `host:port`).
        domain: Option<String>,
        /// Queue one job per domain for `copyhound worker` instead of probing here.
        #[arg(long)]
        queue: bool,
        /// Let the fetches reach loopback and private addresses.
        #[arg(long)]
        allow_private: bool,
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Add the domains of a list (one a line, or CSV with the domain first) as candidates.
    ImportDomains {
        /// The file.
        file: std::path::PathBuf,
    },
    /// Queries sent today per provider and outcome (ok, quota, error), with the last error.
    Queries {
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
}

/// `discover search` flags.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The work whose phrases are sent.
    #[arg(long)]
    work: i64,
    /// The provider (`[discovery.providers.NAME]`; default: `discovery.default_provider`).
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// Send at most N queries this run (within the day's budgets).
    #[arg(long, value_name = "N")]
    max_queries: Option<u32>,
    /// Let the fetches reach loopback and private addresses.
    #[arg(long)]
    allow_private: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// `discover commoncrawl` flags.
#[derive(Debug, Args)]
pub struct CommoncrawlArgs {
    /// WET files: paths or http(s) URLs (repeatable).
    #[arg(
        long = "wet",
        value_name = "PATH_OR_URL",
        required_unless_present = "segment_list"
    )]
    wet: Vec<String>,
    /// A crawl's `wet.paths.gz` (path or URL): its files are scanned too.
    #[arg(long, value_name = "URL")]
    segment_list: Option<String>,
    /// This worker's share of the segment list, `I/N` (0-based): line k is scanned by the
    /// worker with I = k mod N, so N machines split a crawl.
    #[arg(long, value_name = "I/N", default_value = "0/1")]
    shard: bounds::Shard,
    /// Skip records longer than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    max_record_bytes: usize,
    /// Cut a file (one that never ends, a stalled download) after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 4 * 3600)]
    file_timeout: u64,
    /// How records are matched: `page` (each record that passes the first look, against the
    /// loaded index), `batch` (no index loaded: records held in batches and the registered
    /// chapters streamed past each) or `auto` (the first look, then the cheaper way for the
    /// records that pass). Default: `[discovery] wet_mode`.
    #[arg(long, value_name = "MODE")]
    mode: Option<matcher::ModeChoice>,
    /// Records a batch holds at most. Default: `[discovery] wet_batch_records`.
    #[arg(long, value_name = "N", value_parser = bounds::parse_count)]
    batch_records: Option<usize>,
    /// Let downloads and fetches reach loopback and private addresses.
    #[arg(long)]
    allow_private: bool,
    /// Queue one job per WET file for `copyhound worker` instead of scanning here.
    #[arg(long)]
    queue: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn parse_status(s: &str) -> Result<CandidateStatus, String> {
    match s {
        "new" => Ok(CandidateStatus::New),
        "approved" => Ok(CandidateStatus::Approved),
        "ignored" => Ok(CandidateStatus::Ignored),
        other => Err(format!("{other:?}: give new, approved or ignored")),
    }
}

pub async fn run(store: &Store, command: DiscoverCommand, settings: &Settings) -> Result<()> {
    match command {
        DiscoverCommand::Search(a) => {
            let options = SearchOptions {
                work: WorkId(a.work),
                provider: a.provider,
                max_queries: a.max_queries,
                allow_private: a.allow_private,
            };
            let report = discovery::search_work(
                store,
                &settings.discovery,
                &settings.crawler,
                settings.handler(store)?,
                &options,
            )
            .await
            .with_context(|| format!("while discovering copies of work {}", a.work))?;
            if a.json {
                outln!("{}", serde_json::to_string(&report)?);
            } else {
                super::write_stdout(&report.to_string())?;
            }
        }
        DiscoverCommand::Commoncrawl(a) => {
            let mut inputs = a.wet;
            if let Some(list) = &a.segment_list {
                inputs.extend(
                    discovery::segment_list(list, &settings.crawler, a.shard, a.allow_private)
                        .await?,
                );
            }
            if a.queue {
                let new = discovery::queue_wet_scans(store, &inputs).await?;
                outln!(
                    "{new} WET files queued for `copyhound worker` ({} queued already)",
                    inputs.len() - new
                );
                return Ok(());
            }
            let configured = discovery::WetOptions::from_settings(&settings.discovery, inputs);
            let options = discovery::WetOptions {
                allow_private: a.allow_private,
                max_record_bytes: a.max_record_bytes,
                file_timeout: std::time::Duration::from_secs(a.file_timeout.max(1)),
                mode: a.mode.unwrap_or(configured.mode),
                batch_records: a.batch_records.unwrap_or(configured.batch_records),
                ..configured
            };
            let report = discovery::scan_commoncrawl(
                store,
                &settings.discovery,
                &settings.crawler,
                settings.handler(store)?,
                &options,
            )
            .await
            .context("while scanning WET files")?;
            if a.json {
                outln!("{}", serde_json::to_string(&report)?);
            } else {
                super::write_stdout(&report.to_string())?;
            }
        }
        DiscoverCommand::Phrases { work, json } => {
            let (phrases, shared) =
                discovery::work_phrases(store, WorkId(work), &settings.discovery.phrases).await?;
            if json {
                outln!("{}", serde_json::to_string(&phrases)?);
            } else {
                let table = discovery::PhraseTable {
                    phrases: &phrases,
                    shared,
                };
                super::write_stdout(&table.to_string())?;
            }
        }
        DiscoverCommand::Candidates { status, json } => {
            let candidates = store.candidates(status).await?;
            if json {
                outln!("{}", serde_json::to_string(&candidates)?);
            } else {
                super::write_stdout(&CandidateTable(&candidates).to_string())?;
            }
        }
        DiscoverCommand::Approve { domain, schedule } => {
            let (site, crawl) =
                discovery::approve(store, &settings.crawler, &domain, schedule.as_deref()).await?;
            outln!(
                "{} is watched as site {} ({}); crawl {crawl} of the URLs found there is queued \
                 for `copyhound worker`",
                site.host,
                site.id,
                crawling::sites::schedule_note(&site)
            );
        }
        DiscoverCommand::Ignore { domain } => {
            let candidate = discovery::ignore(store, &domain).await?;
            outln!("{} is ignored: it is never probed again", candidate.domain);
        }
        DiscoverCommand::Probe {
            domain,
            queue,
            allow_private,
            json,
        } => {
            let domains = match domain {
                Some(d) => vec![d],
                None => discovery::domains_to_probe(store).await?,
            };
            if queue {
                let new = discovery::queue_probes(store, &domains).await?;
                outln!("{new} domains queued for `copyhound worker` to probe");
                return Ok(());
            }
            let handler = settings.handler(store)?;
            let mut reports = Vec::with_capacity(domains.len());
            for d in &domains {
                let report = discovery::probe_domain(
                    store,
                    &settings.discovery,
                    &settings.crawler,
                    handler.clone(),
                    d,
                    allow_private,
                )
                .await
                .with_context(|| format!("while probing {d}"))?;
                if !json {
                    super::write_stdout(&report.to_string())?;
                }
                reports.push(report);
            }
            if json {
                outln!("{}", serde_json::to_string(&reports)?);
            } else if reports.is_empty() {
                outln!(
                    "no domain to probe (import a list with `copyhound discover import-domains FILE`)"
                );
            }
        }
        DiscoverCommand::ImportDomains { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("while reading {}", file.display()))?;
            let report = discovery::import_domains(store, &text).await?;
            for (line, text) in &report.refused {
                eprintln!("{}:{line}: no domain in {text:?}", file.display());
            }
            outln!(
                "{} domains added as candidates, {} known already, {} lines refused",
                report.added,
                report.known,
                report.refused.len()
            );
        }
        DiscoverCommand::Queries { json } => {
            let counts = discovery::queries_today(store).await?;
            if json {
                outln!("{}", serde_json::to_string(&counts)?);
            } else {
                super::write_stdout(&discovery::QueryTable(&counts).to_string())?;
            }
        }
    }
    Ok(())
}
