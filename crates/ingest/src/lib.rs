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
