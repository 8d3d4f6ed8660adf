//! Text out of an EPUB: metadata title and author, and the text of each spine document in
//! reading order (the navigation document left out).
//!
//! An EPUB is a zip archive, and a zip entry of a few KB can inflate to gigabytes. Before rbook
//! reads anything, every entry is inflated once into nothing, counting: the entry count, the
//! inflated total and each large entry's compression ratio are checked against
//! [`EpubLimits`] while inflating, so a bomb is refused after reading at most the limit.

use std::io::{Cursor, Read};

use ingest::html::HtmlLimits;
use serde::{Deserialize, Serialize};

use crate::html::html_to_text;
use crate::{Error, Result};

/// Bounds on what an EPUB may hold.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct EpubLimits {
    /// Entries in the archive at most.
    pub max_entries: usize,
    /// Bytes of all entries inflated, at most.
    pub max_inflated_bytes: u64,
    /// Largest inflated/compressed ratio of an entry that inflates to more than
    /// 1 MiB. Text and XHTML compress 3 to 10 times; bombs a thousand.
    pub max_ratio: u64,
}

/// Entries smaller than this are not held to [`EpubLimits::max_ratio`] (a small file of
/// repeated lines may compress very well and harm no one).
pub const RATIO_FLOOR: u64 = 1 << 20;

impl Default for EpubLimits {
    fn default() -> Self {
        EpubLimits {
            max_entries: 10_000,
            // A novel of ten million characters is about 60 MB of XHTML.
            max_inflated_bytes: 128 * 1024 * 1024,
            max_ratio: 100,
        }
    }
}

impl EpubLimits {
    /// Checks that every limit is at least 1.
    ///
    /// # Errors
    /// The first limit out of range, keyed by its field name.
    pub fn validate(&self) -> bounds::Check {
        bounds::at_least("max_entries", self.max_entries, 1)?;
        bounds::at_least("max_inflated_bytes", self.max_inflated_bytes, 1)?;
        bounds::at_least("max_ratio", self.max_ratio, 1)
    }
}

/// What an EPUB holds for the importer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct EpubText {
    pub title: Option<String>,
    pub author: Option<String>,
    /// Visible text of each spine document, in reading order (empty ones left out).
    pub documents: Vec<String>,
}

pub(crate) fn epub_to_text(
    bytes: &[u8],
    limits: &EpubLimits,
    html: &HtmlLimits,
) -> Result<EpubText> {
    check_archive(bytes, limits)?;
    let epub =
        rbook::Epub::read(Cursor::new(bytes.to_vec())).map_err(|e| Error::Epub(e.to_string()))?;
    let metadata = epub.metadata();
    let title = metadata
        .title()
        .map(|t| t.value().trim().to_owned())
        .filter(|t| !t.is_empty());
    let author = metadata
        .creators()
        .next()
        .map(|c| c.value().trim().to_owned())
        .filter(|a| !a.is_empty());
    let mut documents = Vec::new();
    let mut reader = epub.reader();
    while let Some(content) = reader.read_next() {
        let content = content.map_err(|e| Error::Epub(e.to_string()))?;
        // The EPUB 3 navigation document lists the chapters; it is not part of the text.
        if content.manifest_entry().properties().has_property("nav") {
            continue;
        }
        let (_, text) = html_to_text(content.content(), html)?;
        if !text.trim().is_empty() {
            documents.push(text);
        }
    }
    Ok(EpubText {
        title,
        author,
        documents,
    })
}

/// Inflates every entry into nothing, refusing the archive as soon as a limit is passed.
fn check_archive(bytes: &[u8], limits: &EpubLimits) -> Result<()> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| Error::Epub(e.to_string()))?;
    if archive.len() > limits.max_entries {
        return Err(Error::EpubLimit(format!(
            "it has {} entries, more than the limit of {} (epub.max_entries)",
            archive.len(),
            limits.max_entries
        )));
    }
    let mut total = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| Error::Epub(e.to_string()))?;
        let name = entry
            .name()
            .map_or_else(|_| format!("entry {i}"), |n| n.into_owned());
        let compressed = entry.compressed_size().max(1);
        // Never more than either limit allows, whatever the entry's header claims.
        let ratio_cap = compressed.saturating_mul(limits.max_ratio).max(RATIO_FLOOR);
        let allowed = (limits.max_inflated_bytes - total).min(ratio_cap);
        let mut inflated = 0u64;
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| Error::Epub(format!("{name}: {e}")))?;
            if n == 0 {
                break;
            }
            inflated += n as u64;
            if inflated > allowed {
                return Err(Error::EpubLimit(if allowed == ratio_cap {
                    format!(
                        "{name} inflates more than {} times its {compressed} compressed \
                         bytes (epub.max_ratio)",
                        limits.max_ratio
                    )
                } else {
                    format!(
                        "its entries inflate to more than {} bytes (epub.max_inflated_bytes)",
                        limits.max_inflated_bytes
                    )
                }));
            }
        }
        total += inflated;
    }
    Ok(())
}
