//! Identifiers: the store's ids of works and chapters, and the index's own compact key.

use serde::{Deserialize, Serialize};

/// A registered chapter, as the store identifies it (its row id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChapterId(pub i64);

/// A registered work (a novel, an article series), as the store identifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkId(pub i64);

/// The index's compact key of a chapter: a dense `u32` that every posting stores instead of
/// the store's 64-bit [`ChapterId`].
///
/// A key is valid while its chapter is in the index. After the chapter is removed (or replaced)
/// the key is retired, and it may be given to another chapter once a compaction has purged every
/// posting that still names it; never keep keys across updates, keep [`ChapterId`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChapterKey(pub(crate) u32);

impl ChapterKey {
    /// The key as an index into per-chapter arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for ChapterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "chapter {}", self.0)
    }
}

impl std::fmt::Display for WorkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "work {}", self.0)
    }
}
