//! The server's own sentences in the reader's language.
//!
//! The crates below the UI (the store, the crawl's checks, accounts, cases, notices) refuse
//! input with English sentences that carry data: `start url "ftp://x": give an absolute
//! http(s) url, e.g. …`. Their words are English; the data (a URL, a name, a number) is the
//! reader's own and is shown as it was written. [`MESSAGES`] is the catalogue of those
//! sentences, each an English template with `{}` where a value goes, as gettext keys a
//! message by its English; a page says a message through [`Lang::say`], which finds its
//! template, says it in the page's language and keeps the values apart ([`Said`]) so a page
//! shows them as data. A message the catalogue does not know is shown as it was written; the
//! Chinese walk of the UI's tests fails on it.

use crate::i18n::Lang;

/// The sentences the server writes that a person meets beside a form's field, on an error
/// page or in a 4xx answer: `(English template, label)`. A template holds `{}` where a value
/// goes; its label's English is the template itself, and its Chinese says the values with
/// `{}` in the same order, or `{0}`, `{1}`, … when the sentence wants another order. Order
/// matters where two templates could match: the first that matches says the message.
pub const MESSAGES: &[(&str, &str)] = &[
    // Forms of every page.
    ("a whole number, not {}", "said.whole_number"),
    ("{} {}: give a number from 1 to {}", "said.number_range"),
    ("{} {}: give at most {}", "said.number_at_most"),
    ("{} {} exceeds i32::MAX", "said.number_too_big"),
    (
        "{}: a whole number up to {}, not {}",
        "said.whole_number_up_to",
    ),
    ("there is no page at {}", "said.no_page_at"),
    ("cross-site request refused", "said.cross_site"),
    (
        "the form's security token is missing or stale: reload the page and try again",
        "said.csrf",
    ),
    (
        "the login form's security token is missing or stale: open the login page again \
         and sign in from it",
        "said.login_csrf",
    ),
    ("admins only", "said.admins_only"),
    ("this needs the {} role; {} is {}", "said.needs_role"),
    // Works.
    ("a text needs a title", "said.text_needs_title"),
    ("give the work's text or a file", "said.give_text"),
    ("the file is empty", "said.empty_file"),
    ("no work's title contains {}", "said.no_title_contains"),
    ("there is no work {}", "said.no_work"),
    ("work {} has no chapters", "said.work_no_chapters"),
    ("the title of work {} cannot be empty", "said.title_empty"),
    (
        "an update of work {} needs a new title or author",
        "said.update_needs",
    ),
    // Cases.
    (
        "a reason for dismissing: licensed, quotation, not ours or other",
        "said.dismiss_reason",
    ),
    (
        "a reason for dismissing is one of {}, not {}",
        "said.dismiss_reason_one_of",
    ),
    ("a note holds at most 2000 characters", "said.note_length"),
    ("at most 500 cases at once", "said.cases_at_once"),
    ("tick the cases to act on first", "said.tick_first"),
    (
        "case {} is {} and cannot become {}: from {} it can become {}",
        "said.case_cannot_become",
    ),
    (
        "case {} is {} now, not {}: nothing to undo",
        "said.nothing_to_undo",
    ),
    ("a {} case cannot go back to {}", "said.cannot_go_back"),
    (
        "chapter {} is not a chapter of work {}",
        "said.not_a_chapter_of",
    ),
    (
        "unknown case status {}: use one of {}",
        "said.unknown_case_status",
    ),
    // Sites and the crawl's checks.
    (
        "refused to fetch {}: it resolves to {} address {}; set \
         crawler.fetch.safety.allow_private = true (environment: \
         COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE=true; `crawl` and `check` take \
         --allow-private) or add the network to crawler.fetch.safety.allowed_networks to \
         crawl it",
        "said.address_refused",
    ),
    (
        "start url {}: {}; give an absolute http(s) url, e.g. {}",
        "said.start_url_unparsable",
    ),
    ("cron expression {} never fires: {}", "said.cron_never"),
    ("cron expression {}: {}", "said.cron"),
    (
        "start url {}: give an absolute http(s) url, e.g. {}",
        "said.start_url",
    ),
    ("start url {} has no host", "said.start_url_no_host"),
    (
        "start url {} is not on {}: add another site for another origin",
        "said.start_url_other_origin",
    ),
    (
        "invalid url {}: only http and https urls are crawled",
        "said.only_http",
    ),
    ("invalid url {}: it has no host", "said.url_no_host"),
    (
        "{} is watched already, as site {}: change it with `sites set {}`",
        "said.watched_already",
    ),
    (
        "domain {} is not a host name: give one such as example.com",
        "said.domain_not_host",
    ),
    (
        "licensed domain {} contains a space: give one host name such as example.com",
        "said.licensed_space",
    ),
    (
        "licensed domain {} is empty: give a host name such as example.com",
        "said.licensed_empty",
    ),
    (
        "no URL was found on {} yet: nothing to start its crawls from",
        "said.no_url_yet",
    ),
    (
        "{} is not a crawl status: give queued, running, done, failed or cancelled",
        "said.crawl_status",
    ),
    // Notices.
    (
        "the notice's text is empty: write what the notice says",
        "said.notice_empty",
    ),
    (
        "the notice's text is longer than {} characters",
        "said.notice_too_long",
    ),
    ("notice {} was sent already", "said.notice_sent_already"),
    (
        "notice {} was marked sent already",
        "said.notice_marked_already",
    ),
    (
        "notice {}: case {} is {}, and only a confirmed case's notice is sent",
        "said.notice_case_not_confirmed",
    ),
    (
        "case {} is {}: only a confirmed case's notice can be sent",
        "said.case_not_confirmed",
    ),
    (
        "unknown notice template {}: use dmca or cn",
        "said.unknown_template",
    ),
    (
        "{} is not an email address (name@example.org)",
        "said.not_email",
    ),
    ("{} is not an email address: {}", "said.not_email_because"),
    // Users and passwords.
    (
        "the password has {} characters: use at least {}",
        "said.password_short",
    ),
    (
        "the password has {} characters: use at most {}",
        "said.password_long",
    ),
    (
        "the password is the user name: choose one nobody could guess from it",
        "said.password_is_name",
    ),
    (
        "user name {} contains {}: use letters, digits and . _ - @ only",
        "said.username_chars",
    ),
    (
        "user name {} has {} characters: use 1 to {}",
        "said.username_length",
    ),
    (
        "user name {} is taken: choose another",
        "said.username_taken",
    ),
    (
        "user name {} looks like the existing user {}: choose a name that cannot be taken \
         for theirs",
        "said.username_look_alike",
    ),
    (
        "the password is one character repeated: choose one nobody could guess (a few \
         unrelated words make a good one)",
        "said.password_repeated",
    ),
    (
        "the password contains the name of this software, {}, which attackers try first: \
         choose another (a few unrelated words make a good one)",
        "said.password_product",
    ),
    (
        "the password is on a list of the most common passwords, which attackers try first, \
         or one of them with letters written as digits or signs: choose another (a few \
         unrelated words make a good one)",
        "said.password_common",
    ),
    (
        "{} is the last enabled admin: make another user admin first",
        "said.last_admin",
    ),
    (
        "token expiry {} is in the past: give a time to come",
        "said.token_past",
    ),
    // Webhooks and alerts.
    (
        "{} = {} is out of range: must be an http(s) URL",
        "said.must_be_http",
    ),
    ("{} = {} is out of range: {}", "said.out_of_range"),
    ("{}: off, immediate or digest", "said.alert_choice"),
    (
        "a webhook to {} exists: delete it first to change its secret",
        "said.webhook_exists",
    ),
    (
        "{} is not an event users are alerted of",
        "said.not_an_event",
    ),
    // What axum's extractors answer a malformed address, query or form with.
    (
        "Invalid URL: Cannot parse {} to a {}",
        "said.path_unparsable",
    ),
    ("Invalid URL: {}", "said.path_invalid"),
    (
        "Failed to deserialize query string: {}",
        "said.query_invalid",
    ),
    ("Failed to deserialize form body: {}", "said.form_invalid"),
    ("Bad Request", "said.bad_request"),
    ("Not Found", "said.not_found_plain"),
    ("Method Not Allowed", "said.method_not_allowed"),
    ("Payload Too Large", "said.too_large"),
    ("Unsupported Media Type", "said.unsupported_media"),
    // Last, as it matches any row the store does not hold.
    ("{} {} not found", "said.not_found"),
];

/// A message said in a page's language: words of the page's language, and values as the
/// message carried them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    parts: Vec<Part>,
}

/// A piece of a [`Said`] message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// What is shown.
    pub text: String,
    /// Whether it is a value (data as written: shown apart, never translated).
    pub value: bool,
}

impl Part {
    /// Words of the page's language.
    pub fn words(text: impl Into<String>) -> Part {
        Part {
            text: text.into(),
            value: false,
        }
    }

    /// A value, shown as data.
    pub fn value(text: impl Into<String>) -> Part {
        Part {
            text: text.into(),
            value: true,
        }
    }
}

impl Said {
    /// A message of words only (a label said before another message).
    pub fn words(text: impl Into<String>) -> Said {
        Said {
            parts: vec![Part {
                text: text.into(),
                value: false,
            }],
        }
    }

    /// A message of these pieces.
    pub fn of(parts: impl IntoIterator<Item = Part>) -> Said {
        Said {
            parts: parts.into_iter().collect(),
        }
    }

    /// A value alone (a detail a library wrote, shown as data after a label that says what
    /// went wrong).
    pub fn value(text: impl Into<String>) -> Said {
        Said {
            parts: vec![Part {
                text: text.into(),
                value: true,
            }],
        }
    }

    /// The pieces, in order, for a template to show.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// `label` (words), then `: `, then this message.
    pub fn after(mut self, label: &str) -> Said {
        let head = Part {
            text: format!("{label}{}", if self.is_empty() { "" } else { ": " }),
            value: false,
        };
        self.parts.insert(0, head);
        self
    }

    fn is_empty(&self) -> bool {
        self.parts.iter().all(|p| p.text.is_empty())
    }
}

impl From<&str> for Said {
    fn from(text: &str) -> Said {
        Said::words(text)
    }
}

impl From<String> for Said {
    fn from(text: String) -> Said {
        Said::words(text)
    }
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.parts.iter().try_for_each(|p| f.write_str(&p.text))
    }
}

/// The values of `message` when it is said by `template`, else `None`.
fn values<'m>(template: &str, message: &'m str) -> Option<Vec<&'m str>> {
    let mut pieces = template.split("{}");
    let first = pieces.next().unwrap_or_default();
    let mut rest = message.strip_prefix(first)?;
    let pieces: Vec<&str> = pieces.collect();
    let mut found = Vec::with_capacity(pieces.len());
    for (i, piece) in pieces.iter().enumerate() {
        if i + 1 == pieces.len() {
            let value = rest.strip_suffix(piece)?;
            if value.is_empty() {
                return None;
            }
            found.push(value);
            rest = "";
        } else {
            // A value is never empty: look for the words after it from its second byte on.
            let from = rest.char_indices().nth(1)?.0;
            let at = from + rest[from..].find(piece)?;
            found.push(&rest[..at]);
            rest = &rest[at + piece.len()..];
        }
    }
    rest.is_empty().then_some(found)
}

/// `said` with its holes filled from `values`: `{}` takes the next value, `{N}` the Nth, and
/// `{:prefix}` or `{N:prefix}` says the value through the label `prefix.value` when there is
/// one (a status, a role, a kind of row), each item of a `, `-list on its own.
fn fill(lang: Lang, said: &str, values: &[&str]) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut words = String::new();
    let mut next = 0;
    let mut rest = said;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        let (number, prefix) = rest[open + 1..close]
            .split_once(':')
            .unwrap_or((&rest[open + 1..close], ""));
        let index = if number.is_empty() {
            next += 1;
            Some(next - 1)
        } else {
            number.parse::<usize>().ok()
        };
        let Some(value) = index.and_then(|i| values.get(i)) else {
            words.push_str(&rest[..=close]);
            rest = &rest[close + 1..];
            continue;
        };
        words.push_str(&rest[..open]);
        rest = &rest[close + 1..];
        let named = (!prefix.is_empty())
            .then(|| {
                value
                    .split(", ")
                    .map(|item| lang.lookup(&format!("{prefix}.{item}")))
                    .collect::<Option<Vec<_>>>()
            })
            .flatten();
        if let Some(named) = named {
            words.push_str(&named.join(lang.t("said.list_separator")));
            continue;
        }
        if !words.is_empty() {
            parts.push(Part {
                text: std::mem::take(&mut words),
                value: false,
            });
        }
        parts.push(Part {
            text: (*value).to_owned(),
            value: true,
        });
    }
    words.push_str(rest);
    if !words.is_empty() {
        parts.push(Part {
            text: words,
            value: false,
        });
    }
    code_apart(parts)
}

/// `parts` with what their words hold between backticks (a setting, a command) made values,
/// shown as data, without the backticks.
fn code_apart(parts: Vec<Part>) -> Vec<Part> {
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        if part.value || !part.text.contains('`') {
            out.push(part);
            continue;
        }
        for (i, piece) in part.text.split('`').enumerate() {
            if !piece.is_empty() {
                out.push(Part {
                    text: piece.to_owned(),
                    value: i % 2 == 1,
                });
            }
        }
    }
    out
}

impl Lang {
    /// `message` in this language when [`MESSAGES`] knows it, its values kept apart.
    ///
    /// A message the catalogue does not know whole may be a known one behind what it is
    /// about (`http://127.0.0.1:9/: refused to fetch …`): up to the third `: `, what comes
    /// before is kept as a value and the rest said.
    pub fn known(self, message: &str) -> Option<Said> {
        let whole = MESSAGES.iter().find_map(|(template, key)| {
            let values = values(template, message)?;
            Some(Said {
                parts: fill(self, self.t(key), &values),
            })
        });
        whole.or_else(|| {
            message.match_indices(": ").take(3).find_map(|(at, _)| {
                let rest = &message[at + 2..];
                let said = MESSAGES.iter().find_map(|(template, key)| {
                    let values = values(template, rest)?;
                    Some(fill(self, self.t(key), &values))
                })?;
                let mut parts = vec![Part::value(&message[..at]), Part::words(": ")];
                parts.extend(said);
                Some(Said { parts })
            })
        })
    }

    /// `message` in this language: [`Lang::known`], else as it was written (as words, so
    /// that a message the catalogue misses shows up in the Chinese walk).
    pub fn say(self, message: &str) -> Said {
        self.known(message).unwrap_or_else(|| Said::words(message))
    }

    /// [`Lang::say`] as one string.
    pub fn said(self, message: &str) -> String {
        self.say(message).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_is_its_labels_english_and_is_said_in_chinese_with_as_many_values() {
        for (template, key) in MESSAGES {
            assert_eq!(Lang::En.t(key), *template, "{key}");
            let zh = Lang::Zh.t(key);
            assert_ne!(zh, *template, "{key}");
            let holes = template.matches("{}").count();
            let values: Vec<String> = (0..holes).map(|i| format!("«{i}»")).collect();
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            let said: String = fill(Lang::Zh, zh, &values)
                .iter()
                .map(|p| p.text.as_str())
                .collect();
            for v in &values {
                assert!(said.contains(v), "{key}: {zh} leaves out {v}");
            }
            // The template matches a message made from it.
            let mut message = String::new();
            for (i, piece) in template.split("{}").enumerate() {
                if i > 0 {
                    message.push_str(values[i - 1]);
                }
                message.push_str(piece);
            }
            let known = Lang::Zh.known(&message).expect(key);
            assert_eq!(known.to_string(), said, "{key}");
        }
    }

    #[test]
    fn values_are_kept_as_written_and_apart() {
        let said = Lang::Zh.say("a whole number, not \"lots\"");
        assert_eq!(said.to_string(), "须为整数，而不是 \"lots\"");
        assert_eq!(said.parts().last().unwrap().text, "\"lots\"");
        assert!(said.parts().last().unwrap().value);
        assert_eq!(
            Lang::En.said("a whole number, not \"x\""),
            "a whole number, not \"x\""
        );
        assert_eq!(Lang::Zh.said("something new"), "something new");
        assert!(!Lang::Zh.say("something new").parts()[0].value);
        let said = Lang::Zh.say(
            "start url \"ftp://x/\": give an absolute http(s) url, e.g. https://example.com/book/1/",
        );
        let values: Vec<&str> = said
            .parts()
            .iter()
            .filter(|p| p.value)
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(values, ["\"ftp://x/\"", "https://example.com/book/1/"]);
        // A known message behind what it is about.
        let said = Lang::Zh.say("http://h.example/: a whole number, not \"x\"");
        assert_eq!(
            said.to_string(),
            "http://h.example/: 须为整数，而不是 \"x\""
        );
        assert!(said.parts()[0].value);
        // What a template holds between backticks is shown as data.
        let parts = code_apart(vec![Part::words("set `a = 1` or `b`")]);
        let shown: Vec<(&str, bool)> = parts.iter().map(|p| (p.text.as_str(), p.value)).collect();
        assert_eq!(
            shown,
            [
                ("set ", false),
                ("a = 1", true),
                (" or ", false),
                ("b", true)
            ]
        );
    }

    #[test]
    fn a_message_matches_a_template_whole_or_not_at_all() {
        assert_eq!(
            values("there is no work {}", "there is no work 7"),
            Some(vec!["7"])
        );
        assert_eq!(values("there is no work {}", "there is no work "), None);
        assert_eq!(values("a {} case cannot go back to {}", "a x case"), None);
        assert_eq!(values("the file is empty", "the file is empty!"), None);
        assert_eq!(
            values("{} {}: give at most {}", "pages 9000: give at most 500"),
            Some(vec!["pages", "9000", "500"])
        );
        // Numbered holes say the values in another order.
        let parts = fill(Lang::Zh, "{1} 之后 {0}", &["a", "b"]);
        let text: String = parts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(text, "b 之后 a");
        // A brace that is not a hole is kept as written.
        let text: String = fill(Lang::Zh, "{x} {}", &["v"])
            .iter()
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(text, "{x} v");
        // A value with a label is said through it, a list item by item.
        let text: String = fill(
            Lang::Zh,
            "{:status} 或 {:status}",
            &["new", "confirmed, dismissed"],
        )
        .iter()
        .map(|p| p.text.as_str())
        .collect();
        assert_eq!(text, "待审核 或 已确认、已驳回");
        let parts = fill(Lang::Zh, "{:status}", &["someday"]);
        assert!(parts[0].value, "{parts:?}");
    }
}
