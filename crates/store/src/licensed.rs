//! Licensed domains: hosts allowed to publish a work (or every work). A match on such a host
//! or any of its subdomains is stored with `licensed = TRUE` and never joins a case
//! ([`crate::MatchWrites::record_matches`]). Adding or removing a domain does not touch
//! matches already stored; it applies from the next time a page is matched.

use std::future::Future;

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use tracing::instrument;

use crate::db::{durable_tx, read_pool};
use crate::ids::WorkId;
use crate::{Error, Result, Store};

/// A licensed domain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LicensedDomain {
    /// Its row id.
    pub id: i64,
    /// The domain, normalised ([`normalize_domain`]); its subdomains are licensed too.
    pub domain: String,
    /// The work it may publish; `None` for every work.
    pub work_id: Option<WorkId>,
    /// That work's title.
    pub work_title: Option<String>,
    /// Why it is licensed (a contract, a partner), as entered.
    pub note: Option<String>,
    /// When it was added.
    pub created_at: DateTime<Utc>,
}

/// The whitelist of licensed domains.
pub trait LicensedDomains {
    /// Licenses `domain` (normalised by [`normalize_domain`]) for `work`, or for every work
    /// when `None`. Adding one that exists returns it unchanged (its note too).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a domain that is empty or holds a space after
    /// normalising; [`Error::NotFound`] for a missing work.
    fn add_licensed(
        &self,
        domain: &str,
        work: Option<WorkId>,
        note: Option<&str>,
    ) -> impl Future<Output = Result<LicensedDomain>> + Send;

    /// Every licensed domain, by domain then work (global rows first).
    fn licensed_domains(&self) -> impl Future<Output = Result<Vec<LicensedDomain>>> + Send;

    /// Removes the licence of `domain` (normalised) for `work` (`None`: the global one).
    /// Returns whether there was one.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a domain [`normalize_domain`] refuses.
    fn remove_licensed(
        &self,
        domain: &str,
        work: Option<WorkId>,
    ) -> impl Future<Output = Result<bool>> + Send;

    /// Stored matches on licensed domains, of one work or of all.
    fn licensed_match_count(
        &self,
        work: Option<WorkId>,
    ) -> impl Future<Output = Result<u64>> + Send;

    /// The main texts of stored pages on domains licensed for `work` (or for every work)
    /// that do not copy `work` (no match of it): what a licensed site says besides the work
    /// itself (blurbs, excerpts, reviews), whose spans a search would find there first.
    /// Newest first, at most `limit`.
    fn licensed_page_texts(
        &self,
        work: WorkId,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<String>>> + Send;
}

/// The domain as stored: trimmed, lower-case, without `http://`/`https://`, a path, a port,
/// a leading `*.` or `.` and a trailing dot (`https://*.Example.COM./x` → `example.com`).
///
/// # Errors
/// [`Error::InvalidInput`] when nothing is left or the rest holds whitespace.
pub fn normalize_domain(input: &str) -> Result<String> {
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
    let d = strip_port(&d);
    let d = d.trim_start_matches("*.").trim_start_matches('.');
    let d = d.trim_end_matches('.');
    if d.is_empty() {
        return Err(Error::InvalidInput(format!(
            "licensed domain {input:?} is empty: give a host name such as example.com"
        )));
    }
    if d.chars().any(char::is_whitespace) {
        return Err(Error::InvalidInput(format!(
            "licensed domain {input:?} contains a space: give one host name such as example.com"
        )));
    }
    Ok(d.to_owned())
}

/// `host` without a `:port` (an IPv6 literal keeps its brackets).
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.split(':').next().unwrap_or(host)
}

/// The licensed-domain rows that cover a page's host: the host itself (lower-case, without
/// port or trailing dot) and every parent domain (`a.b.example.com` → `a.b.example.com`,
/// `b.example.com`, `example.com`, `com`). Only whole labels count, so `notexample.com` is
/// not under `example.com`.
pub(crate) fn host_suffixes(host: &str) -> Vec<String> {
    let host = strip_port(host.trim()).trim_end_matches('.').to_lowercase();
    if host.is_empty() {
        return Vec::new();
    }
    if host.starts_with('[') || host.parse::<std::net::Ipv4Addr>().is_ok() {
        return vec![host];
    }
    let mut out = vec![host.clone()];
    let mut rest = host.as_str();
    while let Some(dot) = rest.find('.') {
        rest = &rest[dot + 1..];
        if !rest.is_empty() {
            out.push(rest.to_owned());
        }
    }
    out
}

#[derive(sqlx::FromRow)]
struct LicensedRow {
    id: i64,
    domain: String,
    work_id: Option<WorkId>,
    title: Option<String>,
    note: Option<String>,
    created_at: DateTime<Utc>,
}

impl From<LicensedRow> for LicensedDomain {
    fn from(r: LicensedRow) -> Self {
        LicensedDomain {
            id: r.id,
            domain: r.domain,
            work_id: r.work_id,
            work_title: r.title,
            note: r.note,
            created_at: r.created_at,
        }
    }
}

const LICENSED_SELECT: &str = "SELECT l.id, l.domain, l.work_id, w.title, l.note, l.created_at \
     FROM licensed_domains l LEFT JOIN works w ON w.id = l.work_id";

impl LicensedDomains for Store {
    #[instrument(skip(self, note))]
    async fn add_licensed(
        &self,
        domain: &str,
        work: Option<WorkId>,
        note: Option<&str>,
    ) -> Result<LicensedDomain> {
        let domain = normalize_domain(domain)?;
        let now = Utc::now();
        let sql = format!("{LICENSED_SELECT} WHERE l.domain = $1 AND COALESCE(l.work_id, 0) = $2");
        let key = work.map_or(0, |w| w.0);
        let row: LicensedRow = durable_tx!(self, |tx| {
            if let Some(work) = work {
                let found: Option<i64> = sqlx::query_scalar("SELECT id FROM works WHERE id = $1")
                    .bind(work)
                    .fetch_optional(&mut *tx)
                    .await?;
                found.ok_or_else(|| Error::not_found("work", work))?;
            }
            // The unique index is on (domain, COALESCE(work_id, 0)): an existing row wins.
            sqlx::query(
                "INSERT INTO licensed_domains (domain, work_id, note, created_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            )
            .bind(&domain)
            .bind(work)
            .bind(note)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(&domain)
                .bind(key)
                .fetch_one(&mut *tx)
                .await?
        });
        Ok(row.into())
    }

    #[instrument(skip(self))]
    async fn licensed_domains(&self) -> Result<Vec<LicensedDomain>> {
        let sql = format!("{LICENSED_SELECT} ORDER BY l.domain, COALESCE(l.work_id, 0)");
        let rows: Vec<LicensedRow> = read_pool!(self, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .fetch_all(pool)
                .await?
        });
        Ok(rows.into_iter().map(Into::into).collect())
    }

    #[instrument(skip(self))]
    async fn remove_licensed(&self, domain: &str, work: Option<WorkId>) -> Result<bool> {
        let domain = normalize_domain(domain)?;
        let key = work.map_or(0, |w| w.0);
        let removed = durable_tx!(self, |tx| {
            sqlx::query(
                "DELETE FROM licensed_domains WHERE domain = $1 AND COALESCE(work_id, 0) = $2",
            )
            .bind(&domain)
            .bind(key)
            .execute(&mut *tx)
            .await?
            .rows_affected()
        });
        Ok(removed > 0)
    }

    #[instrument(skip(self))]
    async fn licensed_match_count(&self, work: Option<WorkId>) -> Result<u64> {
        let n: i64 = read_pool!(self, |pool| {
            match work {
                Some(work) => {
                    sqlx::query_scalar(
                        "SELECT COUNT(*) FROM matches WHERE licensed AND work_id = $1",
                    )
                    .bind(work)
                    .fetch_one(pool)
                    .await?
                }
                None => {
                    sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE licensed")
                        .fetch_one(pool)
                        .await?
                }
            }
        });
        Ok(u64::try_from(n).unwrap_or(0))
    }

    #[instrument(skip(self))]
    async fn licensed_page_texts(&self, work: WorkId, limit: u32) -> Result<Vec<String>> {
        let (domains, sites): (Vec<String>, Vec<(i64, String)>) = read_pool!(self, |pool| {
            let domains = sqlx::query_scalar(
                "SELECT domain FROM licensed_domains WHERE work_id IS NULL OR work_id = $1",
            )
            .bind(work)
            .fetch_all(pool)
            .await?;
            let sites = sqlx::query_as("SELECT id, host FROM sites ORDER BY id")
                .fetch_all(pool)
                .await?;
            (domains, sites)
        });
        let domains: HashSet<String> = domains.into_iter().collect();
        let mut texts = Vec::new();
        for (site, _) in sites
            .iter()
            .filter(|(_, host)| host_suffixes(host).iter().any(|d| domains.contains(d)))
        {
            let want = i64::from(limit).saturating_sub(texts.len() as i64);
            if want <= 0 {
                break;
            }
            let found: Vec<String> = read_pool!(self, |pool| {
                sqlx::query_scalar(
                    "SELECT pt.body FROM page_texts pt \
                     JOIN snapshots s ON s.id = pt.snapshot_id \
                     JOIN pages p ON p.id = s.page_id \
                     WHERE p.site_id = $1 AND NOT EXISTS (SELECT 1 FROM matches m \
                         WHERE m.snapshot_id = pt.snapshot_id AND m.work_id = $2) \
                     ORDER BY pt.snapshot_id DESC LIMIT $3",
                )
                .bind(site)
                .bind(work)
                .bind(want)
                .fetch_all(pool)
                .await?
            });
            texts.extend(found);
        }
        Ok(texts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_normalised() {
        for (input, want) in [
            ("example.com", "example.com"),
            ("  Example.COM.  ", "example.com"),
            ("*.example.com", "example.com"),
            ("https://www.Example.com/path/x?q#f", "www.example.com"),
            ("http://example.com:8080", "example.com"),
            (".example.com", "example.com"),
            ("例子.cn", "例子.cn"),
        ] {
            assert_eq!(normalize_domain(input).unwrap(), want, "{input}");
        }
        for bad in ["", "   ", "https://", "*.", "exa mple.com", "a.com b.com"] {
            let err = normalize_domain(bad).unwrap_err().to_string();
            assert!(err.contains("licensed domain"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn a_host_is_covered_by_itself_and_its_parent_domains_only() {
        assert_eq!(
            host_suffixes("A.b.Example.com:8443"),
            ["a.b.example.com", "b.example.com", "example.com", "com"]
        );
        assert!(!host_suffixes("notexample.com").contains(&"example.com".to_owned()));
        assert_eq!(host_suffixes("127.0.0.1:8080"), ["127.0.0.1"]);
        assert_eq!(host_suffixes("[::1]:80"), ["[::1]"]);
    }
}
