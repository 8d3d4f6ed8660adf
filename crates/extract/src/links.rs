//! URL normalisation: the one spelling of a page's address that its links, the frontier and
//! the crawl scope all use.
//!
//! Normalised URLs are the de-duplication key of the frontier, so two spellings of one page
//! must normalise to the same string: fragments, default ports, empty queries, parameter order,
//! session ids and tracking parameters are removed or fixed. Anything that can change which
//! page a server returns (path case, trailing slashes, other parameters) is kept.

use url::Url;

/// Query parameters that only carry a session or a tracker; dropped by [`normalize`].
/// Compared case-insensitively; a trailing `*` matches a prefix.
const DROPPED_PARAMS: &[&str] = &[
    "jsessionid",
    "phpsessid",
    "sid",
    "sessionid",
    "session_id",
    "aspsessionid*",
    "cfid",
    "cftoken",
    "utm_*",
    "fbclid",
    "gclid",
    "yclid",
    "msclkid",
    "spm",
];

/// The canonical form of an `http`/`https` URL, or `None` for other schemes.
///
/// Lower-case scheme and host, no default port, no fragment, no empty query, no
/// `;jsessionid=...` path parameter, session and tracking parameters removed and the rest
/// sorted by name (stable for repeated names). Dot segments and percent-encoding are
/// already canonical after [`Url::parse`].
pub fn normalize(url: &Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return None;
    }
    let mut url = url.clone();
    url.set_fragment(None);
    if url.username() != "" || url.password().is_some() {
        // Credentials in a discovered link are never ours to use.
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    if let Some(pos) = url.path().to_ascii_lowercase().find(";jsessionid=") {
        let path = url.path()[..pos].to_owned();
        url.set_path(&path);
    }
    if let Some(query) = url.query() {
        // Sort the raw `name=value` pieces instead of re-encoding them: a server may tell
        // `%20` from `+`, and the stored URL should be the one that was linked.
        let mut pieces: Vec<&str> = query
            .split('&')
            .filter(|p| !p.is_empty() && !is_dropped_param(p.split('=').next().unwrap_or(p)))
            .collect();
        pieces.sort_by_key(|p| p.split('=').next().unwrap_or(p));
        let query = (!pieces.is_empty()).then(|| pieces.join("&"));
        url.set_query(query.as_deref());
    }
    Some(url)
}

fn is_dropped_param(name: &str) -> bool {
    DROPPED_PARAMS.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => {
            name.len() >= prefix.len() && name[..prefix.len()].eq_ignore_ascii_case(prefix)
        }
        None => name.eq_ignore_ascii_case(p),
    })
}

/// Resolves `href` against `base` and normalises it; `None` for `javascript:`, `mailto:`,
/// pure fragments and anything unparsable.
pub fn resolve(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    normalize(&base.join(href).ok()?)
}

/// The registrable domain ("eTLD+1") of a host: `www.biquge.info` → `biquge.info`,
/// `m.example.co.uk` → `example.co.uk`. IP addresses and single-label hosts are returned
/// as they are.
pub fn registrable_domain(host: &str) -> String {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return host;
    }
    psl::domain_str(&host).map_or(host.clone(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalize(&Url::parse(s).unwrap())
            .map(String::from)
            .unwrap_or_default()
    }

    #[test]
    fn normalisation_makes_one_spelling_per_page() {
        for (input, want) in [
            (
                "HTTP://WWW.Example.COM:80/a/./b/../c.html#top",
                "http://www.example.com/a/c.html",
            ),
            ("https://example.com:443/?", "https://example.com/"),
            (
                "http://example.com/list?b=2&a=1&a=0",
                "http://example.com/list?a=1&a=0&b=2",
            ),
            (
                "http://example.com/x;jsessionid=ABC123?id=4",
                "http://example.com/x?id=4",
            ),
            (
                "http://example.com/p?PHPSESSID=9&page=2&utm_source=tw",
                "http://example.com/p?page=2",
            ),
            ("http://u:p@example.com/", "http://example.com/"),
            ("http://example.com:8080/a", "http://example.com:8080/a"),
            ("http://example.com/A/", "http://example.com/A/"),
            (
                "http://例子.测试/章节",
                "http://xn--fsqu00a.xn--0zwm56d/%E7%AB%A0%E8%8A%82",
            ),
        ] {
            assert_eq!(norm(input), want, "{input}");
        }
        assert_eq!(normalize(&Url::parse("mailto:a@b.c").unwrap()), None);
        let base = Url::parse("http://example.com/book/1/").unwrap();
        assert_eq!(
            resolve(&base, "2.html#x").unwrap().as_str(),
            "http://example.com/book/1/2.html"
        );
        assert_eq!(resolve(&base, "javascript:void(0)"), None);
        assert_eq!(resolve(&base, "#footer"), None);
    }

    #[test]
    fn registrable_domains() {
        assert_eq!(registrable_domain("www.biquge.info"), "biquge.info");
        assert_eq!(registrable_domain("m.example.co.uk"), "example.co.uk");
        assert_eq!(registrable_domain("a.b.example.com.cn"), "example.com.cn");
        assert_eq!(registrable_domain("127.0.0.1"), "127.0.0.1");
        assert_eq!(registrable_domain("localhost"), "localhost");
    }
}
