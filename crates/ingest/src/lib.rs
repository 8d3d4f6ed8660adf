//! Untrusted input made safe to read: bytes to text ([`charset`]) and HTML to a DOM
//! ([`html`]), each bounded in time and memory whatever the input; and what is not the text
//! it claims to be: an anti-bot challenge page ([`challenge`]).
//!
//! A leaf shared by the stages that read what other people wrote: `import` (files a rights
//! holder hands in) and `crawler` (pages a pirate site serves). Both decode with
//! [`charset::decode`], so the same bytes give the same text in either, and both parse with
//! [`html::parse_document`], so a page that is hostile to one is hostile to neither; both
//! tell a challenge page with [`challenge::is_challenge`].
//!
//! It depends on encoding_rs, chardetng, scraper/html5ever and `bounds`: no async, no HTTP,
//! no database.
//!
//! # Pieces
//!
//! - [`charset::decode`]: BOM, `Content-Type`, the `<meta>` prescan, then chardetng on a
//!   prefix; a weak or wrong declaration loses to a guess that decodes cleanly
//!   ([`charset::Decoded::overridden`] keeps it, and the crawl stores it as
//!   `page_texts.declared_encoding`), damaged multi-byte text is rescued, and
//!   [`charset::Decoded::replaced`] counts the U+FFFD left.
//! - [`html::parse_document`]: html5ever within [`html::HtmlLimits`] (attributes, depth,
//!   open formatting, elements) and a deadline. Below the limits the DOM is the standard
//!   parser's (a property test checks).
//! - [`challenge::is_challenge`]: a Cloudflare or DDoS-Guard interstitial with fewer than
//!   [`challenge::MAX_TEXT_CHARS`] characters of text; the crawler files such a page as a
//!   challenge, the importer warns.
//!
//! # Written by hand, and why
//!
//! html5ever has no limits of its own and scraper none either; the guards are the few hundred
//! lines that make them linear. The decoder's rescue is ours because chardetng disqualifies an
//! encoding on one malformed sequence, by design.
//!
//! ```
//! use ingest::{charset, html};
//!
//! let bytes = encoding_rs::GBK.encode("<p>第一章 天下大势</p>").0;
//! let decoded = charset::decode(&bytes, Some("text/html"), Some("cn"));
//! assert_eq!(decoded.encoding, encoding_rs::GBK);
//! let parsed = html::parse_document(&decoded.text, &html::HtmlLimits::default(), None);
//! assert!(parsed.exceeded.is_none());
//! ```

pub mod challenge;
pub mod charset;
pub mod html;
