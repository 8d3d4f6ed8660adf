//! Text out of an EPUB: metadata title and author, and the text of each spine document in
//! reading order (the navigation document left out).

use std::io::Cursor;

use crate::html::html_to_text;
use crate::{Error, Result};

/// What an EPUB holds for the importer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct EpubText {
    pub title: Option<String>,
    pub author: Option<String>,
    /// Visible text of each spine document, in reading order (empty ones left out).
    pub documents: Vec<String>,
}

pub(crate) fn epub_to_text(bytes: &[u8]) -> Result<EpubText> {
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
        let (_, text) = html_to_text(content.content());
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
