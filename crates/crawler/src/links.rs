//! Link discovery: crawl scope, trap resistance and sitemaps, over URLs normalised by
//! [`extract::links`] (the frontier's de-duplication key).

use std::collections::HashSet;
use std::io::Read;

use extract::links::registrable_domain;
use regex::RegexSet;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{Error, Result};

/// Which URLs belong to a crawl.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct ScopeSettings {
    /// Stay on the seeds' registrable domains (`true`, the default) or only on the seeds'
    /// exact hosts (`false`).
    pub same_registrable_domain: bool,
    /// Extra domains (registrable, or exact hosts) that are in scope, e.g. a mirror.
    pub extra_domains: Vec<String>,
    /// If not empty, a URL must match one of these regular expressions (on the normalised URL).
    pub include: Vec<String>,
    /// A URL matching any of these regular expressions is out of scope.
    pub exclude: Vec<String>,
    /// Longer URLs are refused: generated URLs that grow without end are a classic trap.
    pub max_url_len: usize,
    /// More path segments than this are refused.
    pub max_path_segments: usize,
    /// More query parameters than this are refused (faceted search, calendars).
    pub max_query_params: usize,
    /// A path segment repeated more often than this (`/a/b/a/b/a/b`) marks a relative-link
    /// loop and is refused.
    pub max_repeated_segment: usize,
}

impl Default for ScopeSettings {
    fn default() -> Self {
        Self {
            same_registrable_domain: true,
            extra_domains: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            max_url_len: 1024,
            max_path_segments: 16,
            max_query_params: 8,
            max_repeated_segment: 2,
        }
    }
}

impl ScopeSettings {
    /// Checks the trap limits; keys are relative to `[crawler.scope]`. `max_path_segments` and
    /// `max_query_params` may be 0 (no paths below the root, no queries).
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and what is allowed.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        bounds::at_least("max_url_len", self.max_url_len, 1)?;
        // 0 would refuse every path that has a segment at all.
        bounds::at_least("max_repeated_segment", self.max_repeated_segment, 1)
    }
}

/// Why a URL is not crawled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rejection {
    /// Not `http`/`https`.
    Scheme,
    /// Another site.
    OtherDomain,
    /// Matches an `exclude` pattern.
    Excluded,
    /// Matches no `include` pattern.
    NotIncluded,
    /// Too long, too deep, too many parameters or repeating segments: a likely trap.
    TrapShape,
}

impl Rejection {
    /// Stable lower-case name, for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheme => "scheme",
            Self::OtherDomain => "other_domain",
            Self::Excluded => "excluded",
            Self::NotIncluded => "not_included",
            Self::TrapShape => "trap_shape",
        }
    }
}

/// Compiled [`ScopeSettings`] for one crawl.
#[derive(Clone, Debug)]
pub struct Scope {
    domains: HashSet<String>,
    hosts: HashSet<String>,
    same_registrable_domain: bool,
    include: RegexSet,
    exclude: RegexSet,
    settings: ScopeSettings,
}

impl Scope {
    /// The scope of a crawl starting at `seeds`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidPattern`] if an include or exclude pattern is not a valid regex.
    pub fn new(seeds: &[Url], settings: &ScopeSettings) -> Result<Self> {
        let compile = |what: &'static str, patterns: &[String]| {
            RegexSet::new(patterns).map_err(|e| Error::InvalidPattern {
                what,
                pattern: patterns.join(" | "),
                reason: e.to_string(),
            })
        };
        let mut hosts: HashSet<String> = seeds
            .iter()
            .filter_map(|u| u.host_str().map(str::to_ascii_lowercase))
            .collect();
        hosts.extend(
            settings
                .extra_domains
                .iter()
                .map(|d| d.to_ascii_lowercase()),
        );
        let domains = hosts.iter().map(|h| registrable_domain(h)).collect();
        Ok(Self {
            domains,
            hosts,
            same_registrable_domain: settings.same_registrable_domain,
            include: compile("scope include pattern", &settings.include)?,
            exclude: compile("scope exclude pattern", &settings.exclude)?,
            settings: settings.clone(),
        })
    }

    /// Whether the crawl follows `url` (which should be normalised).
    ///
    /// # Errors
    ///
    /// The [`Rejection`] that keeps it out.
    pub fn check(&self, url: &Url) -> Result<(), Rejection> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Rejection::Scheme);
        }
        let host = url.host_str().unwrap_or_default();
        let on_site = self.hosts.contains(host)
            || (self.same_registrable_domain && self.domains.contains(&registrable_domain(host)));
        if !on_site {
            return Err(Rejection::OtherDomain);
        }
        if self.exclude.is_match(url.as_str()) {
            return Err(Rejection::Excluded);
        }
        if !self.include.is_empty() && !self.include.is_match(url.as_str()) {
            return Err(Rejection::NotIncluded);
        }
        if self.looks_like_trap(url) {
            return Err(Rejection::TrapShape);
        }
        Ok(())
    }

    fn looks_like_trap(&self, url: &Url) -> bool {
        let s = &self.settings;
        if url.as_str().len() > s.max_url_len {
            return true;
        }
        let segments: Vec<&str> = url
            .path_segments()
            .map(|it| it.filter(|seg| !seg.is_empty()).collect())
            .unwrap_or_default();
        if segments.len() > s.max_path_segments {
            return true;
        }
        if url.query_pairs().count() > s.max_query_params {
            return true;
        }
        let mut counts = std::collections::HashMap::new();
        segments.iter().any(|seg| {
            let n = counts.entry(*seg).or_insert(0usize);
            *n += 1;
            *n > s.max_repeated_segment
        })
    }
}

/// What a sitemap file lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sitemap {
    /// Page URLs (`<urlset><url><loc>`).
    pub pages: Vec<String>,
    /// Further sitemaps (`<sitemapindex><sitemap><loc>`).
    pub sitemaps: Vec<String>,
}

/// The protocol's limit of URLs per sitemap file.
pub const SITEMAP_MAX_URLS: usize = 50_000;

/// The protocol's limit of a sitemap file's uncompressed size.
pub const SITEMAP_MAX_BYTES: usize = 50 * 1024 * 1024;

/// Parses a `sitemap.xml` (or `.xml.gz`, recognised by its gzip magic bytes).
///
/// A tolerant scanner for `<loc>` elements, since real sitemaps are often not well-formed
/// XML; at most [`SITEMAP_MAX_URLS`] entries are returned.
pub fn parse_sitemap(bytes: &[u8]) -> Sitemap {
    let inflated;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut gz = flate2::read::GzDecoder::new(bytes).take(SITEMAP_MAX_BYTES as u64);
        if gz.read_to_end(&mut out).is_err() {
            return Sitemap::default();
        }
        inflated = out;
        &inflated[..]
    } else {
        bytes
    };
    let text = String::from_utf8_lossy(bytes);
    let is_index = text
        .find("<sitemapindex")
        .is_some_and(|i| text.find("<urlset").is_none_or(|j| i < j));
    let mut sitemap = Sitemap::default();
    let list = if is_index {
        &mut sitemap.sitemaps
    } else {
        &mut sitemap.pages
    };
    let mut rest: &str = &text;
    while let Some(open) = find_ci(rest, "<loc") {
        rest = &rest[open + 4..];
        // Only whitespace may stand before the `>` (`<location>` is not `<loc>`). Looking for
        // the next `>` first would cost the rest of the file for every `<loc` without one.
        let Some(after) = rest.trim_start().strip_prefix('>') else {
            continue;
        };
        rest = after;
        let Some(close) = find_ci(rest, "</loc") else {
            break;
        };
        let raw = rest[..close].trim();
        let raw = raw
            .strip_prefix("<![CDATA[")
            .and_then(|r| r.strip_suffix("]]>"))
            .unwrap_or(raw);
        let loc = unescape_xml(raw.trim());
        if !loc.is_empty() {
            list.push(loc);
            if list.len() >= SITEMAP_MAX_URLS {
                break;
            }
        }
        rest = &rest[close..];
    }
    sitemap
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    hay.as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn unescape_xml(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#38;", "&")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_rules() {
        let seed = Url::parse("https://www.novel.example.com/book/1/").unwrap();
        let settings = ScopeSettings {
            exclude: vec![r"/login".into(), r"\.(jpg|png)$".into()],
            ..ScopeSettings::default()
        };
        let scope = Scope::new(&[seed], &settings).unwrap();
        let check = |s: &str| scope.check(&Url::parse(s).unwrap());
        assert_eq!(check("https://m.novel.example.com/book/1/2.html"), Ok(()));
        assert_eq!(
            check("https://other.example.org/"),
            Err(Rejection::OtherDomain)
        );
        assert_eq!(
            check("https://www.novel.example.com/login?x=1"),
            Err(Rejection::Excluded)
        );
        assert_eq!(
            check("https://www.novel.example.com/c.jpg"),
            Err(Rejection::Excluded)
        );
        assert_eq!(
            check("ftp://www.novel.example.com/"),
            Err(Rejection::Scheme)
        );
        assert_eq!(
            check("https://www.novel.example.com/a/b/a/b/a/b"),
            Err(Rejection::TrapShape)
        );
        let long = format!("https://www.novel.example.com/{}", "x".repeat(2000));
        assert_eq!(check(&long), Err(Rejection::TrapShape));
        assert_eq!(
            check("https://www.novel.example.com/s?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9"),
            Err(Rejection::TrapShape)
        );

        let exact = Scope::new(
            &[Url::parse("https://www.novel.example.com/").unwrap()],
            &ScopeSettings {
                same_registrable_domain: false,
                include: vec!["/book/".into()],
                ..ScopeSettings::default()
            },
        )
        .unwrap();
        assert_eq!(
            exact.check(&Url::parse("https://m.novel.example.com/book/1").unwrap()),
            Err(Rejection::OtherDomain)
        );
        assert_eq!(
            exact.check(&Url::parse("https://www.novel.example.com/top").unwrap()),
            Err(Rejection::NotIncluded)
        );
        let bad = ScopeSettings {
            include: vec!["(".into()],
            ..ScopeSettings::default()
        };
        assert!(matches!(
            Scope::new(&[], &bad),
            Err(Error::InvalidPattern { .. })
        ));
    }

    #[test]
    fn sitemaps_plain_index_and_gzip() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://example.com/a?x=1&amp;y=2</loc><lastmod>2024-01-01</lastmod></url>
  <url><loc> <![CDATA[http://example.com/b]]> </loc></url>
  <url><location>nope</location><LOC>http://example.com/c</LOC></url>
</urlset>"#;
        let s = parse_sitemap(xml.as_bytes());
        assert_eq!(
            s.pages,
            [
                "http://example.com/a?x=1&y=2",
                "http://example.com/b",
                "http://example.com/c"
            ]
        );
        assert!(s.sitemaps.is_empty());

        let index = r#"<sitemapindex><sitemap><loc>http://example.com/s1.xml</loc></sitemap></sitemapindex>"#;
        assert_eq!(
            parse_sitemap(index.as_bytes()).sitemaps,
            ["http://example.com/s1.xml"]
        );

        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, xml.as_bytes()).unwrap();
        assert_eq!(parse_sitemap(&gz.finish().unwrap()).pages.len(), 3);
        assert_eq!(parse_sitemap(b"\x1f\x8bgarbage"), Sitemap::default());
    }
}
