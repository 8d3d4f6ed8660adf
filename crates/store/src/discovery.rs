//! Discovery: the queries sent to search providers (their answers cached, their outcomes
//! counted for the day's budgets and the error figures), the URLs providers and scans found
//! per domain, and candidate sites, which a person approves (the site becomes watched) or
//! ignores (its URLs are never fetched again). A candidate's pages, works and chapters are
//! counted on each read from the latest non-licensed matches on its host's pages, so they
//! follow re-crawls and new works without being written twice.

use std::future::Future;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::{durable_tx, read_pool, write_tx};
use crate::ids::WorkId;
use crate::licensed::host_suffixes;
use crate::{Error, Result, Store};

/// A query sent to a provider, as logged ([`Discovery::record_query`]).
#[derive(Debug, Clone)]
pub struct NewQuery<'a> {
    /// The configured provider's name.
    pub provider: &'a str,
    /// The phrase sent.
    pub query: &'a str,
    /// The work it was taken from.
    pub work: Option<WorkId>,
    /// `ok`, `quota` or `error`.
    pub outcome: &'a str,
    /// What the provider said when not ok.
    pub message: Option<&'a str>,
    /// The URLs it returned.
    pub hits: &'a [String],
}

/// Queries of one provider with one outcome ([`Discovery::query_counts`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct QueryCount {
    /// The provider's name.
    pub provider: String,
    /// `ok`, `quota` or `error`.
    pub outcome: String,
    /// How many.
    pub count: u64,
    /// The newest message among them (for `quota` and `error`).
    pub last_message: Option<String>,
}

/// A URL found for a domain ([`Discovery::add_found_urls`]).
#[derive(Debug, Clone)]
pub struct FoundUrl {
    /// `host[:port]`, as [`crate::Site::host`] has it.
    pub domain: String,
    /// The URL.
    pub url: String,
    /// How it was found: `search:NAME`, `commoncrawl`, `import`, `probe`.
    pub found_by: String,
    /// The work whose phrase or text found it.
    pub work: Option<WorkId>,
}

/// Where a candidate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CandidateStatus {
    /// Waiting for a person.
    New,
    /// A watched site now.
    Approved,
    /// Never fetched again.
    Ignored,
}

impl CandidateStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            CandidateStatus::New => "new",
            CandidateStatus::Approved => "approved",
            CandidateStatus::Ignored => "ignored",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "new" => Ok(CandidateStatus::New),
            "approved" => Ok(CandidateStatus::Approved),
            "ignored" => Ok(CandidateStatus::Ignored),
            other => Err(Error::InvalidInput(format!(
                "unknown candidate status {other:?} in the database"
            ))),
        }
    }
}

/// A candidate site.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Candidate {
    /// Its row id.
    pub id: i64,
    /// `host[:port]`.
    pub domain: String,
    /// Where it stands.
    pub status: CandidateStatus,
    /// How it was first found.
    pub found_by: String,
    /// The watched site it became (once approved).
    pub site_id: Option<i64>,
    /// URLs found on it.
    pub urls: u64,
    /// Its pages whose latest snapshot copies a registered chapter (licensed ones aside).
    pub pages: u64,
    /// Works copied there.
    pub works: u64,
    /// Chapters copied there.
    pub chapters: u64,
    /// When it was first found.
    pub first_seen_at: DateTime<Utc>,
    /// When its status last changed.
    pub updated_at: DateTime<Utc>,
    /// When its domain was last probed (home page and listed URLs fetched and matched).
    pub probed_at: Option<DateTime<Utc>>,
}

/// Discovery's tables.
pub trait Discovery {
    /// Logs a query sent to a provider and its outcome.
    fn record_query(&self, query: &NewQuery<'_>) -> impl Future<Output = Result<()>> + Send;

    /// The URLs `provider` returned for `query` in its newest successful answer since `since`
    /// (the cache), or `None`.
    fn cached_hits(
        &self,
        provider: &str,
        query: &str,
        since: DateTime<Utc>,
    ) -> impl Future<Output = Result<Option<Vec<String>>>> + Send;

    /// When each query of `work` was last sent to `provider`, whatever the answer: the
    /// rotation of a work's phrases, which sends the ones never sent first.
    fn last_asked(
        &self,
        provider: &str,
        work: WorkId,
    ) -> impl Future<Output = Result<Vec<(String, DateTime<Utc>)>>> + Send;

    /// Queries sent since `since`, of `provider` and of `work` when given (the budgets).
    fn queries_sent(
        &self,
        since: DateTime<Utc>,
        provider: Option<&str>,
        work: Option<WorkId>,
    ) -> impl Future<Output = Result<u64>> + Send;

    /// Queries sent since `since` by provider and outcome, with the newest message of each.
    fn query_counts(
        &self,
        since: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<QueryCount>>> + Send;

    /// Stores found URLs (a URL found again keeps its first finder); returns how many are new.
    fn add_found_urls(&self, urls: &[FoundUrl]) -> impl Future<Output = Result<u64>> + Send;

    /// The URLs found on `domain`, in the order they were found.
    fn found_urls(&self, domain: &str) -> impl Future<Output = Result<Vec<String>>> + Send;

    /// Makes `domain` a candidate found by `found_by` unless it is one already (whatever its
    /// status); returns it.
    fn add_candidate(
        &self,
        domain: &str,
        found_by: &str,
    ) -> impl Future<Output = Result<Candidate>> + Send;

    /// One candidate.
    ///
    /// # Errors
    /// [`Error::NotFound`] for a domain that is no candidate.
    fn candidate(&self, domain: &str) -> impl Future<Output = Result<Candidate>> + Send;

    /// Candidates with `status` (every one when `None`), most pages first, then by domain.
    fn candidates(
        &self,
        status: Option<CandidateStatus>,
    ) -> impl Future<Output = Result<Vec<Candidate>>> + Send;

    /// Sets a candidate's status (and the watched site it became). Ignoring a domain that is
    /// no candidate yet makes it one, found by `found_by`, so it is never probed.
    ///
    /// # Errors
    /// [`Error::NotFound`] when approving a domain that is no candidate.
    fn set_candidate_status(
        &self,
        domain: &str,
        status: CandidateStatus,
        site: Option<i64>,
        found_by: &str,
    ) -> impl Future<Output = Result<Candidate>> + Send;

    /// Pages on `host` whose latest snapshot copies a registered chapter, licensed matches
    /// aside: what makes a probed domain a candidate.
    fn host_copies(&self, host: &str) -> impl Future<Output = Result<u64>> + Send;

    /// Whether URLs on `host` are never probed: an ignored or approved candidate (an
    /// approved one is watched: its own crawls read it), or a licensed domain or one under it.
    fn host_excluded(&self, host: &str) -> impl Future<Output = Result<bool>> + Send;

    /// Records that `domain` was probed at `at`.
    ///
    /// # Errors
    /// [`Error::NotFound`] for a domain that is no candidate.
    fn mark_probed(
        &self,
        domain: &str,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Records that a search of `work` was queued at `at` (the schedule's).
    fn mark_work_queued(
        &self,
        work: WorkId,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Records that `work` was searched at `at`.
    fn mark_work_searched(
        &self,
        work: WorkId,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Works whose search was queued since `since` and has not run since: each may still
    /// spend its share of the day's budget.
    fn searches_pending(&self, since: DateTime<Utc>) -> impl Future<Output = Result<u64>> + Send;

    /// At most `limit` works due a search: none searched since `since`, none queued since
    /// `since` and still waiting; works never searched first (by id), then the longest
    /// unsearched.
    fn works_due_search(
        &self,
        since: DateTime<Utc>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<WorkId>>> + Send;
}

/// The domain as candidates key it: `host[:port]`, trimmed and lower-case.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty domain or one with whitespace or a path.
pub fn normalize_candidate_domain(input: &str) -> Result<String> {
    let mut d = input.trim().to_lowercase();
    for scheme in ["https://", "http://"] {
        if let Some(rest) = d.strip_prefix(scheme) {
            d = rest.to_owned();
            break;
        }
    }
    if let Some(end) = d.find(['/', '?', '#']) {
        d.truncate(end);
    }
    let d = d.trim_end_matches('.').to_owned();
    // A host name (letters of any script, for IDNs), an IPv4 or bracketed IPv6 address, and
    // a port: nothing that markup, a shell or a CSV reader would read as its own.
    if d.is_empty()
        || !d
            .chars()
            .all(|c| c.is_alphanumeric() || "-._:[]".contains(c))
    {
        return Err(Error::InvalidInput(format!(
            "domain {input:?} is not a host name: give one such as example.com"
        )));
    }
    Ok(d)
}

#[derive(sqlx::FromRow)]
struct CandidateRow {
    id: i64,
    domain: String,
    status: String,
    found_by: String,
    site_id: Option<i64>,
    first_seen_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    probed_at: Option<DateTime<Utc>>,
    urls: i64,
    pages: i64,
    works: i64,
    chapters: i64,
}

impl TryFrom<CandidateRow> for Candidate {
    type Error = Error;
    fn try_from(r: CandidateRow) -> Result<Self> {
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Ok(Candidate {
            id: r.id,
            domain: r.domain,
            status: CandidateStatus::parse(&r.status)?,
            found_by: r.found_by,
            site_id: r.site_id,
            urls: count(r.urls),
            pages: count(r.pages),
            works: count(r.works),
            chapters: count(r.chapters),
            first_seen_at: r.first_seen_at,
            updated_at: r.updated_at,
            probed_at: r.probed_at,
        })
    }
}

/// A candidate with its counts; `{where}` filters `c`.
const CANDIDATE_SELECT: &str = "SELECT c.id, c.domain, c.status, c.found_by, c.site_id, \
     c.first_seen_at, c.updated_at, c.probed_at, \
     (SELECT COUNT(*) FROM discovery_urls u WHERE u.domain = c.domain) AS urls, \
     (SELECT COUNT(DISTINCT m.page_id) FROM matches m JOIN pages p ON p.id = m.page_id \
        JOIN sites s ON s.id = p.site_id \
        WHERE s.host = c.domain AND m.latest AND NOT m.licensed) AS pages, \
     (SELECT COUNT(DISTINCT m.work_id) FROM matches m JOIN pages p ON p.id = m.page_id \
        JOIN sites s ON s.id = p.site_id \
        WHERE s.host = c.domain AND m.latest AND NOT m.licensed) AS works, \
     (SELECT COUNT(DISTINCT m.chapter_id) FROM matches m JOIN pages p ON p.id = m.page_id \
        JOIN sites s ON s.id = p.site_id \
        WHERE s.host = c.domain AND m.latest AND NOT m.licensed) AS chapters \
     FROM discovery_candidates c";

impl Store {
    async fn candidate_row(&self, domain: &str) -> Result<Option<Candidate>> {
        let sql = format!("{CANDIDATE_SELECT} WHERE c.domain = $1");
        let row: Option<CandidateRow> = read_pool!(self, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                .bind(domain)
                .fetch_optional(pool)
                .await?
        });
        row.map(Candidate::try_from).transpose()
    }

    /// Runs `sql`, an upsert of one of a work's times in `discovery_works`.
    async fn set_work_time(
        &self,
        sql: &'static str,
        work: WorkId,
        at: DateTime<Utc>,
    ) -> Result<()> {
        write_tx!(self, |tx| {
            sqlx::query(sql)
                .bind(work)
                .bind(at)
                .execute(&mut *tx)
                .await?;
        });
        Ok(())
    }
}

impl Discovery for Store {
    #[instrument(skip_all, fields(provider = query.provider, outcome = query.outcome))]
    async fn record_query(&self, query: &NewQuery<'_>) -> Result<()> {
        let hits = serde_json::to_string(query.hits)
            .map_err(|e| Error::InvalidInput(format!("found URLs that cannot be stored: {e}")))?;
        write_tx!(self, |tx| {
            sqlx::query(
                "INSERT INTO discovery_queries (provider, query, work_id, outcome, message, hits, \
                 asked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(query.provider)
            .bind(query.query)
            .bind(query.work)
            .bind(query.outcome)
            .bind(query.message)
            .bind(&hits)
            .bind(Utc::now())
            .execute(&mut *tx)
            .await?;
        });
        Ok(())
    }

    #[instrument(skip(self, query))]
    async fn cached_hits(
        &self,
        provider: &str,
        query: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<Vec<String>>> {
        let hits: Option<String> = read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT hits FROM discovery_queries WHERE provider = $1 AND query = $2 \
                 AND outcome = 'ok' AND asked_at >= $3 ORDER BY asked_at DESC, id DESC LIMIT 1",
            )
            .bind(provider)
            .bind(query)
            .bind(since)
            .fetch_optional(pool)
            .await?
        });
        hits.map(|h| {
            serde_json::from_str(&h)
                .map_err(|e| Error::InvalidInput(format!("stored hits are not a JSON list: {e}")))
        })
        .transpose()
    }

    #[instrument(skip(self))]
    async fn last_asked(
        &self,
        provider: &str,
        work: WorkId,
    ) -> Result<Vec<(String, DateTime<Utc>)>> {
        Ok(read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT query, MAX(asked_at) FROM discovery_queries \
                 WHERE work_id = $1 AND provider = $2 GROUP BY query",
            )
            .bind(work)
            .bind(provider)
            .fetch_all(pool)
            .await?
        }))
    }

    #[instrument(skip(self))]
    async fn queries_sent(
        &self,
        since: DateTime<Utc>,
        provider: Option<&str>,
        work: Option<WorkId>,
    ) -> Result<u64> {
        let n: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT COUNT(*) FROM discovery_queries WHERE asked_at >= $1 \
                 AND ($2 IS NULL OR provider = $2) AND ($3 IS NULL OR work_id = $3)",
            )
            .bind(since)
            .bind(provider)
            .bind(work)
            .fetch_one(pool)
            .await?
        });
        Ok(u64::try_from(n).unwrap_or(0))
    }

    #[instrument(skip(self))]
    async fn query_counts(&self, since: DateTime<Utc>) -> Result<Vec<QueryCount>> {
        let rows: Vec<(String, String, i64, Option<String>)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT q.provider, q.outcome, COUNT(*), \
                 (SELECT l.message FROM discovery_queries l WHERE l.provider = q.provider \
                  AND l.outcome = q.outcome AND l.asked_at >= $1 \
                  ORDER BY l.asked_at DESC, l.id DESC LIMIT 1) \
                 FROM discovery_queries q WHERE q.asked_at >= $1 \
                 GROUP BY q.provider, q.outcome ORDER BY q.provider, q.outcome",
            )
            .bind(since)
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(provider, outcome, count, last_message)| QueryCount {
                provider,
                outcome,
                count: u64::try_from(count).unwrap_or(0),
                last_message,
            })
            .collect())
    }

    #[instrument(skip_all, fields(urls = urls.len()))]
    async fn add_found_urls(&self, urls: &[FoundUrl]) -> Result<u64> {
        if urls.is_empty() {
            return Ok(0);
        }
        let now = Utc::now();
        let added = write_tx!(self, |tx| {
            let mut added = 0;
            for u in urls {
                added += sqlx::query(
                    "INSERT INTO discovery_urls (domain, url, found_by, work_id, found_at) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (domain, url) DO NOTHING",
                )
                .bind(&u.domain)
                .bind(&u.url)
                .bind(&u.found_by)
                .bind(u.work)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            }
            added
        });
        Ok(added)
    }

    #[instrument(skip(self))]
    async fn found_urls(&self, domain: &str) -> Result<Vec<String>> {
        Ok(read_pool!(self, |pool| {
            sqlx::query_scalar("SELECT url FROM discovery_urls WHERE domain = $1 ORDER BY id")
                .bind(domain)
                .fetch_all(pool)
                .await?
        }))
    }

    #[instrument(skip(self))]
    async fn add_candidate(&self, domain: &str, found_by: &str) -> Result<Candidate> {
        let domain = normalize_candidate_domain(domain)?;
        let now = Utc::now();
        write_tx!(self, |tx| {
            sqlx::query(
                "INSERT INTO discovery_candidates (domain, status, found_by, first_seen_at, \
                 updated_at) VALUES ($1, 'new', $2, $3, $3) ON CONFLICT (domain) DO NOTHING",
            )
            .bind(&domain)
            .bind(found_by)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        });
        self.candidate(&domain).await
    }

    #[instrument(skip(self))]
    async fn candidate(&self, domain: &str) -> Result<Candidate> {
        let domain = normalize_candidate_domain(domain)?;
        self.candidate_row(&domain)
            .await?
            .ok_or_else(|| Error::not_found("candidate", &domain))
    }

    #[instrument(skip(self))]
    async fn candidates(&self, status: Option<CandidateStatus>) -> Result<Vec<Candidate>> {
        let sql = format!(
            "SELECT * FROM ({CANDIDATE_SELECT} WHERE ($1 IS NULL OR c.status = $1)) AS k \
             ORDER BY k.pages DESC, k.domain"
        );
        let rows: Vec<CandidateRow> = read_pool!(self, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
                .bind(status.map(CandidateStatus::as_str))
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(Candidate::try_from).collect()
    }

    #[instrument(skip(self))]
    async fn set_candidate_status(
        &self,
        domain: &str,
        status: CandidateStatus,
        site: Option<i64>,
        found_by: &str,
    ) -> Result<Candidate> {
        let domain = normalize_candidate_domain(domain)?;
        let now = Utc::now();
        let changed = durable_tx!(self, |tx| {
            if status == CandidateStatus::Ignored {
                sqlx::query(
                    "INSERT INTO discovery_candidates (domain, status, found_by, first_seen_at, \
                     updated_at) VALUES ($1, 'new', $2, $3, $3) ON CONFLICT (domain) DO NOTHING",
                )
                .bind(&domain)
                .bind(found_by)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query(
                "UPDATE discovery_candidates SET status = $2, site_id = COALESCE($3, site_id), \
                 updated_at = $4 WHERE domain = $1",
            )
            .bind(&domain)
            .bind(status.as_str())
            .bind(site)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected()
        });
        if changed == 0 {
            return Err(Error::not_found("candidate", &domain));
        }
        self.candidate(&domain).await
    }

    #[instrument(skip(self))]
    async fn host_copies(&self, host: &str) -> Result<u64> {
        let domain = normalize_candidate_domain(host)?;
        let n: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT COUNT(DISTINCT m.page_id) FROM matches m JOIN pages p ON p.id = m.page_id \
                 JOIN sites s ON s.id = p.site_id \
                 WHERE s.host = $1 AND m.latest AND NOT m.licensed",
            )
            .bind(&domain)
            .fetch_one(pool)
            .await?
        });
        Ok(u64::try_from(n).unwrap_or(0))
    }

    #[instrument(skip(self))]
    async fn host_excluded(&self, host: &str) -> Result<bool> {
        let domain = normalize_candidate_domain(host)?;
        let suffixes = host_suffixes(&domain);
        // COUNT(*) rather than `SELECT 1`: a bare 1 is INT4 on Postgres and INTEGER on SQLite.
        let (excluded, licensed): (i64, i64) = read_pool!(self, |pool| {
            let excluded: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM discovery_candidates WHERE domain = $1 AND status <> 'new'",
            )
            .bind(&domain)
            .fetch_one(pool)
            .await?;
            let mut licensed = 0;
            for suffix in &suffixes {
                licensed += sqlx::query_scalar::<_, i64>(
                    "SELECT COUNT(*) FROM licensed_domains WHERE domain = $1",
                )
                .bind(suffix)
                .fetch_one(pool)
                .await?;
                if licensed > 0 {
                    break;
                }
            }
            (excluded, licensed)
        });
        Ok(excluded > 0 || licensed > 0)
    }

    #[instrument(skip(self))]
    async fn mark_probed(&self, domain: &str, at: DateTime<Utc>) -> Result<()> {
        let domain = normalize_candidate_domain(domain)?;
        let changed = write_tx!(self, |tx| {
            sqlx::query("UPDATE discovery_candidates SET probed_at = $2 WHERE domain = $1")
                .bind(&domain)
                .bind(at)
                .execute(&mut *tx)
                .await?
                .rows_affected()
        });
        if changed == 0 {
            return Err(Error::not_found("candidate", &domain));
        }
        Ok(())
    }

    #[instrument(skip(self))]
    async fn mark_work_queued(&self, work: WorkId, at: DateTime<Utc>) -> Result<()> {
        self.set_work_time(
            "INSERT INTO discovery_works (work_id, queued_at) VALUES ($1, $2) \
             ON CONFLICT (work_id) DO UPDATE SET queued_at = excluded.queued_at",
            work,
            at,
        )
        .await
    }

    #[instrument(skip(self))]
    async fn mark_work_searched(&self, work: WorkId, at: DateTime<Utc>) -> Result<()> {
        self.set_work_time(
            "INSERT INTO discovery_works (work_id, searched_at) VALUES ($1, $2) \
             ON CONFLICT (work_id) DO UPDATE SET searched_at = excluded.searched_at",
            work,
            at,
        )
        .await
    }

    #[instrument(skip(self))]
    async fn searches_pending(&self, since: DateTime<Utc>) -> Result<u64> {
        let n: i64 = read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT COUNT(*) FROM discovery_works WHERE queued_at >= $1 \
                 AND (searched_at IS NULL OR searched_at < queued_at)",
            )
            .bind(since)
            .fetch_one(pool)
            .await?
        });
        Ok(u64::try_from(n).unwrap_or(0))
    }

    #[instrument(skip(self))]
    async fn works_due_search(&self, since: DateTime<Utc>, limit: u32) -> Result<Vec<WorkId>> {
        let ids: Vec<i64> = read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT w.id FROM works w LEFT JOIN discovery_works d ON d.work_id = w.id \
                 WHERE (d.searched_at IS NULL OR d.searched_at < $1) \
                 AND NOT (d.queued_at IS NOT NULL AND d.queued_at >= $1 \
                          AND (d.searched_at IS NULL OR d.searched_at < d.queued_at)) \
                 ORDER BY CASE WHEN d.searched_at IS NULL THEN 0 ELSE 1 END, d.searched_at, w.id \
                 LIMIT $2",
            )
            .bind(since)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        });
        Ok(ids.into_iter().map(WorkId).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_domains_keep_the_port_and_drop_the_rest() {
        assert_eq!(
            normalize_candidate_domain(" HTTP://Pirate.Example:8080/x?y ").unwrap(),
            "pirate.example:8080"
        );
        assert_eq!(
            normalize_candidate_domain("pirate.example.").unwrap(),
            "pirate.example"
        );
        for bad in ["", " ", "http://", "a b.com"] {
            assert!(normalize_candidate_domain(bad).is_err(), "{bad:?}");
        }
    }
}
