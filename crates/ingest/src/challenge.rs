//! Anti-bot challenge pages: what a site behind Cloudflare, DDoS-Guard and the like serves
//! instead of the page asked for ("Just a moment...", "Checking your browser before
//! accessing"). The crawler records such a page as a challenge rather than as content, and
//! the importer warns when a file handed in is one (a page saved before the check passed).
//!
//! ```
//! use ingest::challenge::is_challenge;
//!
//! let page = "<html><head><title>Just a moment...</title></head><body></body></html>";
//! assert!(is_challenge(page, Some("Just a moment..."), 0));
//! // The same markers on a page with a chapter's worth of text: content.
//! assert!(!is_challenge(page, Some("Just a moment..."), 5_000));
//! ```

/// A page with at least this many characters of main text is content, whatever markers it
/// carries: Cloudflare adds its `challenge-platform` script to ordinary pages too, while a
/// real challenge page has a sentence or two.
pub const MAX_TEXT_CHARS: usize = 1000;

/// Page titles only challenge pages have.
const CHALLENGE_TITLES: &[&str] = &[
    "Just a moment...",
    "Attention Required! | Cloudflare",
    "DDoS-Guard",
];

/// Strings in the markup (or the text) of challenge pages.
const CHALLENGE_MARKERS: &[&str] = &[
    "/cdn-cgi/challenge-platform/",
    "cf-browser-verification",
    "_cf_chl_opt",
    "cf_chl_",
    "Checking your browser before accessing",
    "Attention Required! | Cloudflare",
    "DDoS protection by",
    "ddos-guard",
    "Verify you are human",
];

/// Whether a document is an anti-bot challenge rather than content: its `title` (trimmed;
/// for plain text, its first line) is a challenge's, or `document` (markup or text) holds a
/// challenge script or phrase, and it has fewer than [`MAX_TEXT_CHARS`] characters of main
/// text (`text_chars`, in chars, however the caller counts its main text).
pub fn is_challenge(document: &str, title: Option<&str>, text_chars: usize) -> bool {
    if text_chars >= MAX_TEXT_CHARS {
        return false;
    }
    title.is_some_and(|t| CHALLENGE_TITLES.contains(&t.trim()))
        || CHALLENGE_MARKERS.iter().any(|m| document.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloudflare_and_ddos_guard_pages_are_challenges() {
        let cf = r#"<html><head><title>Just a moment...</title></head><body><p>Verify you are human by completing the action below.</p></body></html>"#;
        assert!(is_challenge(cf, Some("Just a moment..."), 52));
        assert!(is_challenge(cf, None, 52));
        assert!(is_challenge(
            "<script src=\"https://ddos-guard.net/x.js\"></script>",
            None,
            0
        ));
        assert!(is_challenge("", Some(" DDoS-Guard "), 0));
        // Saved as text: the first line is the title.
        let text = "Just a moment...\nexample.com needs to review the security of your connection";
        assert!(is_challenge(text, text.lines().next(), 70));
    }

    #[test]
    fn pages_with_text_or_without_markers_are_content() {
        let chapter = "话说天下大势，分久必合，合久必分。".repeat(100);
        let with_script = format!(
            "<html><head><script src=\"/cdn-cgi/challenge-platform/scripts/jsd/main.js\"></script></head><body><p>{chapter}</p></body></html>"
        );
        assert!(!is_challenge(
            &with_script,
            Some("第一回"),
            chapter.chars().count()
        ));
        assert!(!is_challenge(
            "<html><body><p>短</p></body></html>",
            Some("第一回"),
            1
        ));
    }
}
