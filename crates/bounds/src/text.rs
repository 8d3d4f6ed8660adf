//! Text from outside (a file name, an API field, a crawled page) made safe to keep and to
//! print: no control characters and no bidirectional formatting characters.
//!
//! A control character in a title can move a terminal's cursor, recolour it or rewrite what
//! was printed before it (an ESC sequence, a CR); a bidi override (U+202E) shows a name
//! reversed, so `moc.elpmaxe` reads as `example.com` (the "Trojan Source" trick). Titles and
//! names are stored with [`strip_controls`]; the CLI prints stored text through
//! [`escape_controls`], which shows each such character as `\uXXXX`.
//!
//! ```
//! use bounds::text::{escape_controls, strip_controls};
//!
//! assert_eq!(strip_controls("Red\u{1b}[31m Book\u{202e}"), "Red[31m Book");
//! assert_eq!(escape_controls("a\u{1b}[2Jb\n"), "a\\u001b[2Jb\n");
//! ```

use std::borrow::Cow;

/// Whether `c` is a control character (C0, DEL or C1), a bidirectional formatting character
/// (embeddings, overrides, isolates and the implicit marks) or a line or paragraph
/// separator: the characters that change how the text around them is shown.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' // ARABIC LETTER MARK
                | '\u{200e}' // LEFT-TO-RIGHT MARK
                | '\u{200f}' // RIGHT-TO-LEFT MARK
                | '\u{202a}'..='\u{202e}' // LRE RLE PDF LRO RLO
                | '\u{2066}'..='\u{2069}' // LRI RLI FSI PDI
                | '\u{2028}' // LINE SEPARATOR
                | '\u{2029}' // PARAGRAPH SEPARATOR
        )
}

/// `text` as a one-line name to store: every character [`is_unsafe`] says changes the
/// display is dropped, except that line breaks and tabs become a space (so words they parted
/// stay apart); the result is trimmed. Borrowed when nothing changes.
pub fn strip_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) && text.trim() == text {
        return Cow::Borrowed(text);
    }
    let kept: String = text
        .chars()
        .filter_map(|c| {
            if !is_unsafe(c) {
                Some(c)
            } else if c.is_whitespace() {
                Some(' ')
            } else {
                None
            }
        })
        .collect();
    Cow::Owned(kept.trim().to_owned())
}

/// `text` as it may be written to a terminal: each character [`is_unsafe`] says changes the
/// display, but a line feed or a tab, is shown as `\uXXXX` (every such character is in the
/// Basic Multilingual Plane), so an ESC sequence in a stored title prints as text and does
/// nothing. Inside a JSON string `\uXXXX` is the same character, so JSON stays valid and means
/// the same. Borrowed when nothing changes.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let shown = |c: char| c == '\n' || c == '\t' || !is_unsafe(c);
    if text.chars().all(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_their_letters_and_lose_what_moves_the_display() {
        assert!(matches!(strip_controls("封神演义"), Cow::Borrowed(_)));
        assert_eq!(strip_controls("  padded "), "padded");
        assert_eq!(strip_controls("a\tb\r\nc"), "a b  c");
        assert_eq!(strip_controls("\u{1b}]0;owned\u{7}title"), "]0;ownedtitle");
        assert_eq!(strip_controls("evil\u{202e}txt.exe"), "eviltxt.exe");
        assert_eq!(strip_controls("x\u{2066}y\u{2069}\u{9b}2Jz"), "xy2Jz");
        assert_eq!(strip_controls("para\u{2029}graph"), "para graph");
        // Joiners and variation selectors are part of how scripts and emoji are written.
        assert_eq!(strip_controls("👩\u{200d}💻"), "👩\u{200d}💻");
    }

    #[test]
    fn printing_shows_each_control_as_an_escape_and_keeps_lines() {
        assert!(matches!(escape_controls("plain\tline\n"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("\u{1b}[2J\rover\u{7f}\u{9b}\u{202e}"),
            "\\u001b[2J\\u000dover\\u007f\\u009b\\u202e"
        );
    }
}
