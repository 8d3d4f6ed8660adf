//! [`ChapterSource`]: where verification gets a candidate chapter's original text. The index
//! keeps no text; the store implements this trait, tests and benchmarks use [`MemorySource`].

use std::borrow::Cow;

use foldhash::HashMap;

use crate::ChapterId;

/// The error a [`ChapterSource`] reports (a database error, an I/O error, ...).
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// Gives the original text of a registered chapter, exactly as it was fingerprinted (the byte
/// offsets of [`AlignedSpan::chapter`](crate::AlignedSpan::chapter) point into it).
///
/// Asynchronous stores can skip this trait: take the candidates from
/// [`Matcher::candidates`](crate::Matcher::candidates), fetch their texts in one query, then
/// call [`Matcher::verify`](crate::Matcher::verify) and [`Matcher::select`](crate::Matcher::select).
pub trait ChapterSource {
    /// The text of `chapter`, or `None` if the chapter no longer exists (it was removed after
    /// the index was loaded; the candidate is skipped).
    ///
    /// # Errors
    /// Whatever prevented reading the text; the query fails with
    /// [`Error::Source`](crate::Error::Source).
    fn chapter_text(&self, chapter: ChapterId) -> Result<Option<Cow<'_, str>>, SourceError>;
}

impl<S: ChapterSource + ?Sized> ChapterSource for &S {
    fn chapter_text(&self, chapter: ChapterId) -> Result<Option<Cow<'_, str>>, SourceError> {
        (**self).chapter_text(chapter)
    }
}

/// Chapter texts held in memory.
#[derive(Debug, Clone, Default)]
pub struct MemorySource {
    texts: HashMap<ChapterId, String>,
}

impl MemorySource {
    /// An empty source.
    pub fn new() -> Self {
        MemorySource::default()
    }

    /// Stores (or replaces) the text of `chapter`.
    pub fn insert(&mut self, chapter: ChapterId, text: impl Into<String>) {
        self.texts.insert(chapter, text.into());
    }

    /// Forgets `chapter`.
    pub fn remove(&mut self, chapter: ChapterId) -> Option<String> {
        self.texts.remove(&chapter)
    }

    /// The text of `chapter`.
    pub fn get(&self, chapter: ChapterId) -> Option<&str> {
        self.texts.get(&chapter).map(String::as_str)
    }

    /// Number of chapters held.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// Whether no chapter is held.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

impl ChapterSource for MemorySource {
    fn chapter_text(&self, chapter: ChapterId) -> Result<Option<Cow<'_, str>>, SourceError> {
        Ok(self.get(chapter).map(Cow::Borrowed))
    }
}
