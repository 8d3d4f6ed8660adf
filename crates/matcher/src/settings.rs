//! [`MatcherSettings`]: every tunable of the indexes, candidate lookup, alignment and
//! reporting, each with a documented default.

use serde::{Deserialize, Serialize};

/// All settings of the matcher. Every field has a default (see each struct); loading a
/// partial configuration fills in the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatcherSettings {
    /// What the in-memory indexes hold.
    pub index: IndexSettings,
    /// How index hits become the candidates that are verified.
    pub candidates: CandidateSettings,
    /// How a candidate chapter is aligned with the page.
    pub align: AlignSettings,
    /// Which verified chapters are reported as matches.
    pub report: ReportSettings,
}

/// Settings of the [`Index`](crate::Index). Changing any of them needs a rebuild from the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IndexSettings {
    /// Largest SimHash Hamming distance (bits of 64) the permuted tables find. Default 3.
    pub simhash_max_distance: u32,
    /// Number of chapters the SimHash table layout is planned for; the layout follows the
    /// actual count once that is larger. Default 1,000,000.
    pub expected_chapters: usize,
    /// MinHash LSH bands. Default 20.
    pub lsh_bands: usize,
    /// MinHash values per LSH band. Default 5. With 20 × 5 a pair of Jaccard similarity `s`
    /// becomes a candidate with probability `1-(1-s^5)^20`: 0.999 at s = 0.8, 0.90 at 0.64
    /// (5% of characters edited), 0.47 at 0.5, 0.0016 at 0.2; the curve is steepest at
    /// `(1/20)^(1/5)` ≈ 0.55.
    pub lsh_rows: usize,
    /// One in this many text winnowing fingerprints is indexed (those whose low 32 hash bits are
    /// divisible by it). Default 2. Pages are sampled the same way, so a copied passage of `L`
    /// characters still meets about `L · 2/(w+1) / text_sample` postings (w = 30: one per 31
    /// characters); the sampled-out detail is recomputed by verification. The memory this
    /// saves against the shortest passage still found is measured in the
    /// [index docs](crate::index#memory-and-sampling).
    pub text_sample: u32,
    /// One in this many pinyin winnowing fingerprints is indexed. Default 2.
    pub pinyin_sample: u32,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            simhash_max_distance: 3,
            expected_chapters: 1_000_000,
            lsh_bands: 20,
            lsh_rows: 5,
            text_sample: 2,
            pinyin_sample: 2,
        }
    }
}

/// Settings of candidate lookup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CandidateSettings {
    /// At most this many candidates are verified per page, strongest evidence first.
    /// Default 16 (a page that merges more chapters than that is rare).
    pub max_candidates: usize,
    /// A chapter found only through winnowing postings needs this many distinct shared
    /// fingerprints (text and pinyin together) to be a candidate. Default 3.
    pub min_posting_hits: u32,
    /// A fingerprint shared by more chapters than this is skipped at query time: it is common
    /// phrasing, not evidence of copying, and its long posting list would dominate latency.
    /// Default 2000.
    pub max_key_postings: usize,
    /// A fingerprint shared by more than this share of all chapters (but at least
    /// [`MIN_KEY_POSTINGS`]) is skipped too. Default 0.001 (1,000 chapters of a million). The
    /// fingerprints of a copied chapter are its own (shared by it and its copies); common
    /// five-letter grams of English ("ofthe", "andth") and a novel's recurring names would
    /// otherwise give every chapter of the same language or novel dozens of hits and crowd the
    /// real candidates out.
    pub max_key_share: f64,
}

/// The fewest postings a fingerprint may have before [`CandidateSettings::max_key_share`]
/// skips it (small indexes would otherwise skip everything shared).
pub const MIN_KEY_POSTINGS: usize = 32;

impl CandidateSettings {
    /// The posting-list length above which a fingerprint is skipped, for an index of
    /// `chapters` chapters.
    pub fn key_postings_cap(&self, chapters: usize) -> usize {
        let relative = (chapters as f64 * self.max_key_share).ceil() as usize;
        self.max_key_postings.min(relative.max(MIN_KEY_POSTINGS))
    }
}

impl Default for CandidateSettings {
    fn default() -> Self {
        CandidateSettings {
            max_candidates: 16,
            min_posting_hits: 3,
            max_key_postings: 2000,
            max_key_share: 0.001,
        }
    }
}

/// Settings of passage alignment (see [`align`](crate::align)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AlignSettings {
    /// Length (normalised characters) of the pinyin-symbol grams that seed the alignment.
    /// Default 8: long enough that unrelated Chinese text rarely shares one, short enough that
    /// most stretches between edits at a 5% rate still hold one.
    pub k: usize,
    /// Exact runs closer than this (normalised characters, on both sides) are merged into one
    /// passage. Default 24: edits leave gaps of a few characters; injected ads are longer.
    pub max_gap: usize,
    /// A passage with fewer matched characters than this is dropped as chance agreement.
    /// Default 24.
    pub min_passage_chars: usize,
}

impl Default for AlignSettings {
    fn default() -> Self {
        AlignSettings {
            k: 8,
            max_gap: 24,
            min_passage_chars: 24,
        }
    }
}

/// When a verified chapter is reported as a [`Match`](crate::Match). A chapter is reported when
/// its matched characters reach `min_matched_chars` **and** either its coverage reaches
/// `min_coverage` or its page share reaches `min_page_share`. Together these ignore short
/// quotations (a few sentences quoted in a longer page) and still catch partial copies and
/// chapters split over several pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportSettings {
    /// Minimum matched normalised characters. Default 300 (about 15 Chinese sentences, or 60
    /// English words).
    pub min_matched_chars: usize,
    /// Minimum share of the chapter's normalised characters found in the page. Default 0.1.
    pub min_coverage: f64,
    /// Minimum share of the page's normalised characters that belong to the chapter (for a
    /// chapter split over many pages, each page holds a small part of it). Default 0.5.
    pub min_page_share: f64,
}

impl Default for ReportSettings {
    fn default() -> Self {
        ReportSettings {
            min_matched_chars: 300,
            min_coverage: 0.1,
            min_page_share: 0.5,
        }
    }
}

impl MatcherSettings {
    /// Checks every value; keys are relative to `[matcher]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and its allowed range.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        self.index.validate().map_err(|e| e.in_section("index"))?;
        self.candidates
            .validate()
            .map_err(|e| e.in_section("candidates"))?;
        self.align.validate().map_err(|e| e.in_section("align"))?;
        self.report.validate().map_err(|e| e.in_section("report"))
    }
}

impl IndexSettings {
    /// Checks every value; keys are relative to `[matcher.index]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and its allowed range.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::between("simhash_max_distance", self.simhash_max_distance, 0, 8)?;
        bounds::at_least("expected_chapters", self.expected_chapters, 1)?;
        bounds::at_least("lsh_bands", self.lsh_bands, 1)?;
        bounds::at_least("lsh_rows", self.lsh_rows, 1)?;
        let values = self.lsh_bands.saturating_mul(self.lsh_rows);
        if values > 4096 {
            return Err(bounds::OutOfRange::new(
                "lsh_bands",
                self.lsh_bands.to_string(),
                format!(
                    "lsh_bands × lsh_rows must be at most 4096 (here {} × {} = {values})",
                    self.lsh_bands, self.lsh_rows
                ),
            ));
        }
        bounds::at_least("text_sample", self.text_sample, 1)?;
        bounds::at_least("pinyin_sample", self.pinyin_sample, 1)
    }
}

impl CandidateSettings {
    fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::at_least("max_candidates", self.max_candidates, 1)?;
        bounds::at_least("min_posting_hits", self.min_posting_hits, 1)?;
        bounds::at_least("max_key_postings", self.max_key_postings, 1)?;
        bounds::fraction("max_key_share", self.max_key_share)
    }
}

impl AlignSettings {
    fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::between("k", self.k, 2, 64)?;
        bounds::at_least("min_passage_chars", self.min_passage_chars, 1)
    }
}

impl ReportSettings {
    fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::at_least("min_matched_chars", self.min_matched_chars, 1)?;
        bounds::fraction("min_coverage", self.min_coverage)?;
        bounds::fraction("min_page_share", self.min_page_share)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_partial_config_fills_in() {
        MatcherSettings::default().validate().unwrap();
        let s: MatcherSettings =
            serde_json::from_str(r#"{"report": {"min_matched_chars": 500}}"#).unwrap();
        assert_eq!(s.report.min_matched_chars, 500);
        assert_eq!(
            s.report.min_coverage,
            ReportSettings::default().min_coverage
        );
        assert_eq!(s.index, IndexSettings::default());
    }

    #[test]
    fn bad_values_are_named() {
        let mut s = MatcherSettings::default();
        s.align.k = 1;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "align.k = 1 is out of range: must be between 2 and 64"
        );
        let mut s = MatcherSettings::default();
        s.report.min_coverage = 1.5;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "report.min_coverage = 1.5 is out of range: must be between 0 and 1"
        );
        let mut s = MatcherSettings::default();
        s.candidates.max_key_share = -0.1;
        assert_eq!(s.validate().unwrap_err().key(), "candidates.max_key_share");
        let mut s = MatcherSettings::default();
        s.index.lsh_rows = 0;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "index.lsh_rows = 0 is out of range: must be at least 1"
        );
        let mut s = MatcherSettings::default();
        s.index.lsh_bands = 1000;
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("lsh_bands × lsh_rows must be at most 4096 (here 1000 × 5 = 5000)")
        );
        // Through the matcher's own error, as `Index` and `Matcher` report it.
        let mut s = MatcherSettings::default();
        s.report.min_matched_chars = 0;
        let err = crate::Error::from(s.validate().unwrap_err());
        assert_eq!(
            err.to_string(),
            "invalid matcher settings: report.min_matched_chars = 0 is out of range: must be at least 1"
        );
    }
}
