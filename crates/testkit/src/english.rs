//! English words left in a page that should be in another language.
//!
//! A Chinese page of the admin UI may still hold Latin letters that are data: a URL, a host,
//! an address, a quoted value, a key, a number. [`english_words`] leaves those out and returns
//! what is left that reads as English: runs of four or more ASCII letters, outside quotes,
//! in a token without the marks of data (`.`, `/`, `:`, `@`, `=`, `_`, `#`, digits), that
//! are not one of the names a page may show as they are ([`NAMES`]).

/// Names shown as they are in every language: the product, the seeded users of the tests,
/// and standards and formats known by their English acronyms.
pub const NAMES: &[&str] = &[
    "copyhound",
    "admin",
    "alice",
    "rita",
    "cron",
    "dmca",
    "http",
    "https",
    "html",
    "json",
    "smtp",
    "warc",
    "utc",
    "Common",
    "Crawl",
];

/// The English words of `text` (see the module's docs), in order, each once.
pub fn english_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut quoted = false;
    let mut unquoted = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            '“' | '「' | '《' => quoted = true,
            '”' | '」' | '》' => quoted = false,
            _ if !quoted => unquoted.push(c),
            _ => {}
        }
    }
    for token in unquoted.split(|c: char| c.is_whitespace() || !c.is_ascii()) {
        if token
            .chars()
            .any(|c| ".:/@=_#".contains(c) || c.is_ascii_digit())
        {
            continue;
        }
        for run in token.split(|c: char| !c.is_ascii_alphabetic()) {
            if run.len() >= 4
                && !NAMES.iter().any(|n| n.eq_ignore_ascii_case(run))
                && !words.iter().any(|w| w == run)
            {
                words.push(run.to_owned());
            }
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_left_out_and_english_is_found() {
        assert!(english_words("须为整数，而不是 \"lots\"").is_empty());
        assert!(english_words("起始网址 https://example.com/book/1/ 无效").is_empty());
        assert!(english_words("找不到案件 99999999；发往 abuse@host.example").is_empty());
        assert!(english_words("cron 表达式 “every day” 无法解析").is_empty());
        assert_eq!(
            english_words("未被接受: the password is on a list"),
            ["password", "list"]
        );
        assert_eq!(
            english_words("Unknown time zone Unknown"),
            ["Unknown", "time", "zone"]
        );
    }
}
