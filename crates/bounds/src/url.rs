//! [`mask_url_password`]: a URL as it may be shown, its password hidden.

/// Replaces the password in `scheme://user:password@host/...` and in a `password=` query
/// parameter with `***`, whatever the scheme: for logs, messages and `copyhound config`
/// about any URL (a database, a time-stamping authority, a proxy). Text without either is
/// returned as it is.
///
/// ```
/// assert_eq!(
///     bounds::mask_url_password("https://stamp:hunter2@tsa.example/tsr"),
///     "https://stamp:***@tsa.example/tsr"
/// );
/// assert_eq!(bounds::mask_url_password("https://tsa.example/"), "https://tsa.example/");
/// ```
pub fn mask_url_password(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let rest = scheme_end + 3;
        let authority_end = out[rest..]
            .find(['/', '?', '#'])
            .map_or(out.len(), |i| rest + i);
        // The last `@` ends the user information: a password may hold an `@` of its own.
        if let Some(at) = out[rest..authority_end].rfind('@') {
            let userinfo = &out[rest..rest + at];
            if let Some(colon) = userinfo.find(':') {
                out.replace_range(rest + colon + 1..rest + at, "***");
            }
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let masked: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_owned(),
            })
            .collect();
        out = format!("{head}{}", masked.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::mask_url_password;

    #[test]
    fn passwords_are_masked_wherever_a_url_holds_one() {
        for (url, shown) in [
            ("mysql://root:hunter2@h/db", "mysql://root:***@h/db"),
            (
                "https://u:p@ss@tsa.example/tsr",
                "https://u:***@tsa.example/tsr",
            ),
            (
                "http://u:pw@proxy.example:3128",
                "http://u:***@proxy.example:3128",
            ),
            ("http://u:pw@h#frag@x", "http://u:***@h#frag@x"),
            (
                "postgres://h/db?user=u&password=pw",
                "postgres://h/db?user=u&password=***",
            ),
            ("http://user@h/", "http://user@h/"),
            ("https://tsa.example/a@b", "https://tsa.example/a@b"),
            ("no url at all", "no url at all"),
        ] {
            assert_eq!(mask_url_password(url), shown, "{url}");
        }
    }
}
