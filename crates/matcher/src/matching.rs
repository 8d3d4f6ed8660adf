//! The query pipeline: page → candidates → verification → selection → [`Match`]es.

use std::ops::Range;
use std::sync::Arc;

use crate::confusable::alignment_symbol;
use fingerprint::normalize::Compact;
use fingerprint::sentences::{sentence_hash, split_sentences};
use fingerprint::{ChapterFingerprint, Fingerprinter, Normalized, normalize};
use serde::Serialize;

use crate::align::{Alignment, align};
use crate::batch::BatchQuery;
use crate::index::{Candidate, Evidence, Index, Probe};
use crate::settings::MatcherSettings;
use crate::source::ChapterSource;
use crate::{ChapterId, Error, Result, WorkId};

/// A page prepared for matching: its normalised text with the offset map, its pinyin symbols,
/// its fingerprints and the hashes of all its sentences. Prepare once, then ask for candidates
/// and verify them.
///
/// Private Use Area characters ([`is_private_use`]), which normalisation drops, stay in the
/// sequence that verification aligns, as wildcards: a page whose `@font-face` draws them as
/// the letters they replace shows the chapter, and each one stands in the place of a letter.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    normalized: Normalized<'a>,
    /// The normalised characters, with the page's Private Use Area characters in their places.
    chars: Vec<char>,
    /// Their pinyin symbols, [`WILDCARD`] for a Private Use Area character.
    symbols: Vec<u32>,
    /// When the page holds Private Use Area characters: the byte range in the original text of
    /// each of `chars` (else [`Normalized::original_range`] maps positions).
    origins: Option<Vec<(u32, u32)>>,
    /// Distinct Private Use Area characters on the page (as many characters of the text as
    /// the font remaps).
    private_use: usize,
    fingerprint: ChapterFingerprint,
    sentence_hashes: Vec<u64>,
}

/// The alignment symbol of a Private Use Area character of a page, and of the characters of a
/// chapter it is taken to replace (see [`Matcher::verify`]). Above every pinyin symbol.
pub const WILDCARD: u32 = u32::MAX - 1;

/// Whether `c` is in a Private Use Area (U+E000–U+F8FF, planes 15 and 16): code points with no
/// meaning of their own, which a page's font may draw as any letter.
pub fn is_private_use(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF | 0xF_0000..=0xF_FFFD | 0x10_0000..=0x10_FFFD)
}

/// The normalised characters of `normalized` with the original's Private Use Area characters
/// inserted where they stand, each one's original byte range, and how many distinct ones there
/// are; `None` when there are none, or more of them than of other characters (no text).
#[allow(clippy::type_complexity)]
fn with_private_use(normalized: &Normalized<'_>) -> Option<(Vec<char>, Vec<(u32, u32)>, usize)> {
    let original = normalized.original();
    let pua: Vec<(usize, char)> = original
        .char_indices()
        .filter(|&(_, c)| is_private_use(c))
        .collect();
    if pua.is_empty() || pua.len() > normalized.char_len() {
        return None;
    }
    let mut distinct: Vec<char> = pua.iter().map(|&(_, c)| c).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut chars = Vec::with_capacity(normalized.char_len() + pua.len());
    let mut origins = Vec::with_capacity(chars.capacity());
    let mut pua = pua.into_iter().peekable();
    for (i, c) in normalized.text().chars().enumerate() {
        let at = normalized.original_range(i..i + 1);
        while let Some(&(b, p)) = pua.peek()
            && b < at.start
        {
            chars.push(p);
            origins.push((b as u32, (b + p.len_utf8()) as u32));
            pua.next();
        }
        chars.push(c);
        origins.push((at.start as u32, at.end as u32));
    }
    for (b, p) in pua {
        chars.push(p);
        origins.push((b as u32, (b + p.len_utf8()) as u32));
    }
    Some((chars, origins, distinct.len()))
}

impl<'a> Page<'a> {
    /// Prepares `text` (the page's main text, decoded).
    pub fn new(text: &'a str, fingerprinter: &Fingerprinter) -> Self {
        let normalized = normalize(text);
        let fingerprint = fingerprinter.fingerprint_normalized(text, normalized.compact());
        Page::from_parts(normalized, fingerprinter, fingerprint)
    }

    /// Prepares `text` whose fingerprint was already computed (by the analysis stage) with the
    /// same fingerprint settings as `fingerprinter`'s.
    pub fn with_fingerprint(
        text: &'a str,
        fingerprinter: &Fingerprinter,
        fingerprint: ChapterFingerprint,
    ) -> Self {
        Page::from_parts(normalize(text), fingerprinter, fingerprint)
    }

    fn from_parts(
        normalized: Normalized<'a>,
        fingerprinter: &Fingerprinter,
        fingerprint: ChapterFingerprint,
    ) -> Self {
        let (chars, origins, private_use) = match with_private_use(&normalized) {
            Some((chars, origins, distinct)) => (chars, Some(origins), distinct),
            None => (normalized.text().chars().collect(), None, 0),
        };
        let symbols = chars
            .iter()
            .map(|&c| {
                if is_private_use(c) {
                    WILDCARD
                } else {
                    alignment_symbol(c)
                }
            })
            .collect();
        let min_chars = fingerprinter.settings().sentence_min_chars.max(1);
        let mut buf = Compact::default();
        let mut sentence_hashes = Vec::new();
        for (_, sentence) in split_sentences(normalized.original()) {
            buf.fill(sentence);
            if buf.chars >= min_chars {
                sentence_hashes.push(sentence_hash(&buf.text));
            }
        }
        Page {
            normalized,
            chars,
            symbols,
            origins,
            private_use,
            fingerprint,
            sentence_hashes,
        }
    }

    /// The page's original text.
    pub fn text(&self) -> &'a str {
        self.normalized.original()
    }

    /// The normalised text and its offset map.
    pub fn normalized(&self) -> &Normalized<'a> {
        &self.normalized
    }

    /// Normalised characters, Private Use Area characters included.
    pub fn chars(&self) -> usize {
        self.chars.len()
    }

    /// The byte range in the original text of `chars`, a range of [`Page::chars`]'s positions.
    fn original_range(&self, chars: Range<usize>) -> Range<usize> {
        match &self.origins {
            None => self.normalized.original_range(chars),
            Some(origins) if chars.is_empty() => {
                let at = origins
                    .get(chars.start)
                    .map_or(self.normalized.original().len(), |o| o.0 as usize);
                at..at
            }
            Some(origins) => origins[chars.start].0 as usize..origins[chars.end - 1].1 as usize,
        }
    }

    /// The page's fingerprints.
    pub fn fingerprint(&self) -> &ChapterFingerprint {
        &self.fingerprint
    }

    /// The hashes of every sentence long enough to be one of a chapter's longest.
    pub fn sentence_hashes(&self) -> &[u64] {
        &self.sentence_hashes
    }
}

/// A copied passage: a range of the page and the range of the chapter it reproduces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlignedSpan {
    /// Byte range in the page's original text (a UTF-8 boundary at both ends).
    pub page: Range<usize>,
    /// Byte range in the chapter's original text, as the [`ChapterSource`] returned it.
    pub chapter: Range<usize>,
    /// Matched normalised characters inside the span (characters in gaps between exact runs,
    /// such as edited ones, are not counted).
    pub chars: usize,
}

/// A registered chapter found in a page.
///
/// All character counts are **normalised** characters (letters and digits after NFKC, case
/// folding and traditional → simplified; no spaces or punctuation). Matched characters are
/// those inside exact runs of the alignment, compared as pinyin symbols, so a homophone
/// substitute counts as matched and `identical_chars` tells how many are the very same
/// character.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// The chapter.
    pub chapter: ChapterId,
    /// Its work.
    pub work: WorkId,
    /// The share of the **shorter** of the two texts that is aligned to the other (the overlap
    /// coefficient of the aligned characters, `matched / min(page, chapter)`), in `[0, 1]`:
    /// 1.0 when the whole chapter is in the page (with ads around it, or merged with other
    /// chapters) or the whole page is taken from the chapter (one page of a split chapter);
    /// about 0.9 for a copy with 5% of its characters edited; small for a short quotation.
    pub score: f64,
    /// Containment of the chapter in the page: `matched / chapter`, in `[0, 1]`. A page that
    /// holds part of the chapter reports that part's share.
    pub coverage: f64,
    /// Share of the page that is this chapter: `matched / page`, in `[0, 1]`.
    pub page_share: f64,
    /// Matched characters.
    pub matched_chars: usize,
    /// Matched characters that are identical in both texts (the rest are homophones).
    pub identical_chars: usize,
    /// Characters of the chapter.
    pub chapter_chars: usize,
    /// Characters of the page.
    pub page_chars: usize,
    /// The copied passages in page order (and chapter order), merged across small gaps.
    pub spans: Vec<AlignedSpan>,
    /// What the indexes found before verification.
    pub evidence: Evidence,
}

/// The result of verifying one candidate, before the report thresholds apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    result: Match,
    /// Normalised page character ranges of the alignment's exact runs.
    page_runs: Vec<Range<u32>>,
}

impl Verification {
    /// The measured match (it may fall below the report thresholds).
    pub fn result(&self) -> &Match {
        &self.result
    }

    /// Consumes the verification and returns the match.
    pub fn into_match(self) -> Match {
        self.result
    }
}

/// Finds the registered chapters that a page copies. Holds the fingerprinter, the index and
/// the settings; queries take `&self` and may run on many threads.
#[derive(Debug)]
pub struct Matcher {
    settings: MatcherSettings,
    fingerprinter: Arc<Fingerprinter>,
    index: Index,
}

fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

impl Matcher {
    /// A matcher over `index`, which must have been built with `settings.index`. Chapter
    /// fingerprints in the index must come from the same fingerprint settings as
    /// `fingerprinter`'s, which computes the pages'.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if a setting is out of range; [`Error::InvalidSettings`] if the LSH
    /// bands need more MinHash values than the fingerprinter makes, or the index was built with
    /// other index settings.
    pub fn new(
        settings: MatcherSettings,
        fingerprinter: Arc<Fingerprinter>,
        index: Index,
    ) -> Result<Self> {
        settings.validate()?;
        let values = fingerprinter.settings().minhash_values;
        let needed = settings.index.lsh_bands * settings.index.lsh_rows;
        if values < needed {
            return Err(Error::InvalidSettings(format!(
                "index.lsh_bands × index.lsh_rows = {needed} exceeds the fingerprints' {values} minhash values"
            )));
        }
        if index.settings() != &settings.index {
            return Err(Error::InvalidSettings(
                "the index was built with other index settings; rebuild it from the store"
                    .to_string(),
            ));
        }
        Ok(Matcher {
            settings,
            fingerprinter,
            index,
        })
    }

    /// A matcher over no chapters: it prepares and verifies pages, and its
    /// [`Matcher::batch`] indexes them for the chapters to be streamed past (batch mode),
    /// without an index of the chapters in memory.
    ///
    /// # Errors
    /// As [`Matcher::new`].
    pub fn without_chapters(
        settings: MatcherSettings,
        fingerprinter: Arc<Fingerprinter>,
    ) -> Result<Self> {
        let index = crate::IndexBuilder::new(settings.index.clone())?.build();
        Matcher::new(settings, fingerprinter, index)
    }

    /// The settings in use.
    pub fn settings(&self) -> &MatcherSettings {
        &self.settings
    }

    /// The fingerprinter that prepares pages.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// The index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The index, for updates.
    pub fn index_mut(&mut self) -> &mut Index {
        &mut self.index
    }

    /// Prepares a page.
    pub fn page<'a>(&self, text: &'a str) -> Page<'a> {
        Page::new(text, &self.fingerprinter)
    }

    /// Whether `text` can be a copy of a registered chapter at all: a cheap first look for
    /// scans of many pages that are nearly all innocent (a Common Crawl WET file). It
    /// normalises the text and takes its MinHash and winnowing in one pass (no word
    /// segmentation, no sentences) and asks the indexes whether any of its LSH bands or
    /// sampled winnowing keys is a live chapter's. `false` leaves out only pages that could be
    /// candidates through SimHash or the sentence map alone, which a copy long enough to
    /// verify never is; `true` says nothing yet: [`Matcher::page`] and
    /// [`Matcher::candidates`] decide. A scan asks a [`crate::FirstLook`], which gives the
    /// same answer faster while the index is small.
    ///
    /// # Errors
    /// [`Error::IncompatibleFingerprint`] if the fingerprint settings give a MinHash shorter
    /// than the LSH bands.
    pub fn may_match(&self, text: &str) -> Result<bool> {
        self.may_match_with(text, &mut fingerprint::ScanBuffers::default())
    }

    /// [`Matcher::may_match`] with buffers reused from page to page.
    ///
    /// # Errors
    /// As [`Matcher::may_match`].
    pub fn may_match_with(
        &self,
        text: &str,
        buffers: &mut fingerprint::ScanBuffers,
    ) -> Result<bool> {
        let grams = self.fingerprinter.grams_of_text(text, buffers);
        let probe = Probe::of_grams(self.index.settings(), &grams)?;
        Ok(self.index.any_posting(&probe, &self.settings.candidates))
    }

    /// The chapters worth verifying for `page`, strongest evidence first; see
    /// [`Index::candidates`].
    ///
    /// # Errors
    /// [`Error::IncompatibleFingerprint`] if the page's fingerprint (given to
    /// [`Page::with_fingerprint`]) comes from another normaliser version or has too short a
    /// MinHash for the LSH bands.
    pub fn candidates(&self, page: &Page<'_>) -> Result<Vec<Candidate>> {
        Ok(self
            .index
            .candidates(&self.probe(page)?, &self.settings.candidates))
    }

    /// The keys `page` is looked up by: what [`Matcher::candidates`] asks the index, and what
    /// a [`BatchQuery`] indexes the page by.
    ///
    /// # Errors
    /// As [`Matcher::candidates`].
    pub fn probe(&self, page: &Page<'_>) -> Result<Probe> {
        let fp = &page.fingerprint;
        Probe::new(
            &self.settings.index,
            &fp.summary,
            &page.sentence_hashes,
            &fp.winnow,
            &fp.pinyin_winnow,
        )
    }

    /// A [`BatchQuery`] over `pages`, to stream the registered chapters past (batch mode:
    /// see [`crate::batch`]). The matcher's own index is not read: a matcher for batch mode
    /// can hold an empty one.
    ///
    /// # Errors
    /// As [`Matcher::candidates`], for any of the pages.
    pub fn batch(&self, pages: &[Page<'_>]) -> Result<BatchQuery> {
        let probes = pages
            .iter()
            .map(|p| self.probe(p))
            .collect::<Result<Vec<_>>>()?;
        BatchQuery::new(&self.settings, &probes)
    }

    /// Aligns `page` with the candidate's chapter text and measures the match. Pure
    /// computation: the caller fetched `chapter_text` (see [`ChapterSource`]).
    ///
    /// On a page with Private Use Area characters, the chapter's characters they replace are
    /// wildcards too: a remapping font draws one code point for every occurrence of one
    /// character, so the `n` distinct code points stand for the `n` characters most frequent
    /// in the chapter among those the page shows far less often than its share of the chapter
    /// would (usually never).
    pub fn verify(
        &self,
        page: &Page<'_>,
        candidate: &Candidate,
        chapter_text: &str,
    ) -> Verification {
        let chapter = normalize(chapter_text);
        let chapter_chars: Vec<char> = chapter.text().chars().collect();
        let mut chapter_symbols: Vec<u32> =
            chapter_chars.iter().map(|&c| alignment_symbol(c)).collect();
        if page.private_use > 0 {
            let wild = remapped(&page.chars, &chapter_chars, page.private_use);
            for (s, c) in chapter_symbols.iter_mut().zip(&chapter_chars) {
                if wild.contains(c) {
                    *s = WILDCARD;
                }
            }
        }
        let alignment: Alignment = align(&page.symbols, &chapter_symbols, &self.settings.align);
        let matched = alignment.matched();
        let identical = alignment
            .runs
            .iter()
            .map(|r| {
                let p = &page.chars[r.page as usize..(r.page + r.len) as usize];
                let c = &chapter_chars[r.chapter as usize..(r.chapter + r.len) as usize];
                p.iter().zip(c).filter(|(a, b)| a == b).count()
            })
            .sum();
        let spans = alignment
            .passages
            .iter()
            .map(|p| AlignedSpan {
                page: page.original_range(p.page.clone()),
                chapter: chapter.original_range(p.chapter.clone()),
                chars: p.matched,
            })
            .collect();
        let (page_len, chapter_len) = (page.chars.len(), chapter_chars.len());
        Verification {
            result: Match {
                chapter: candidate.chapter,
                work: candidate.work,
                score: ratio(matched, page_len.min(chapter_len)),
                coverage: ratio(matched, chapter_len),
                page_share: ratio(matched, page_len),
                matched_chars: matched,
                identical_chars: identical,
                chapter_chars: chapter_len,
                page_chars: page_len,
                spans,
                evidence: candidate.evidence,
            },
            page_runs: alignment
                .runs
                .iter()
                .map(|r| r.page..r.page + r.len)
                .collect(),
        }
    }

    /// Whether a verified match meets the report thresholds on its own.
    fn reportable(&self, m: &Match) -> bool {
        let r = &self.settings.report;
        m.matched_chars >= r.min_matched_chars
            && (m.coverage >= r.min_coverage || m.page_share >= r.min_page_share)
    }

    /// The matches to report among `verified`, best first.
    ///
    /// A verification is reported when it meets the [report
    /// thresholds](crate::settings::ReportSettings) **and** the page text it matched is not
    /// mostly explained by a better match: verifications are taken by matched characters
    /// (descending), each claims the page characters of its exact runs, and a later one is
    /// dropped when fewer than `min_matched_chars`, or less than half, of its matched page
    /// characters are still unclaimed. So a passage that two registered chapters share (a poem
    /// quoted in both, a chapter registered twice) is attributed once, to the chapter that
    /// explains more of the page.
    pub fn select(&self, page: &Page<'_>, mut verified: Vec<Verification>) -> Vec<Match> {
        verified.sort_by(|a, b| {
            b.result
                .matched_chars
                .cmp(&a.result.matched_chars)
                .then(a.result.chapter.cmp(&b.result.chapter))
        });
        let mut claimed = vec![false; page.chars.len()];
        let mut out = Vec::new();
        for v in verified {
            if !self.reportable(&v.result) {
                continue;
            }
            let unclaimed: usize = v
                .page_runs
                .iter()
                .map(|r| {
                    claimed[r.start as usize..r.end as usize]
                        .iter()
                        .filter(|c| !**c)
                        .count()
                })
                .sum();
            if unclaimed < self.settings.report.min_matched_chars
                || unclaimed * 2 < v.result.matched_chars
            {
                continue;
            }
            for r in &v.page_runs {
                claimed[r.start as usize..r.end as usize].fill(true);
            }
            out.push(v.result);
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chapter.cmp(&b.chapter)));
        out
    }

    /// Matches `page` against the registered chapters, reading candidate texts from `source`.
    ///
    /// # Errors
    /// [`Error::Source`] if `source` fails to read a candidate's text;
    /// [`Error::IncompatibleFingerprint`] as [`Matcher::candidates`].
    pub fn check_page(
        &self,
        page: &Page<'_>,
        source: &(impl ChapterSource + ?Sized),
    ) -> Result<Vec<Match>> {
        self.verify_candidates(page, self.candidates(page)?, source)
    }

    /// Verifies `candidates` of `page` (from [`Matcher::candidates`] or a [`BatchQuery`]),
    /// reading their texts from `source`, and selects the matches to report.
    ///
    /// # Errors
    /// [`Error::Source`] if `source` fails to read a candidate's text.
    pub fn verify_candidates(
        &self,
        page: &Page<'_>,
        candidates: Vec<Candidate>,
        source: &(impl ChapterSource + ?Sized),
    ) -> Result<Vec<Match>> {
        let mut verified = Vec::new();
        for candidate in candidates {
            let text = source
                .chapter_text(candidate.chapter)
                .map_err(|source| Error::Source {
                    chapter: candidate.chapter,
                    source,
                })?;
            if let Some(text) = text {
                verified.push(self.verify(page, &candidate, &text));
            }
        }
        Ok(self.select(page, verified))
    }

    /// Prepares `text` and matches it; see [`Matcher::check_page`].
    ///
    /// # Errors
    /// [`Error::Source`] if `source` fails to read a candidate's text.
    pub fn check(&self, text: &str, source: &(impl ChapterSource + ?Sized)) -> Result<Vec<Match>> {
        self.check_page(&self.page(text), source)
    }
}

/// The `n` characters of `chapter` that a page of `page` characters replaced by Private Use
/// Area ones: the most frequent in the chapter (ties to the lower code point) among those the
/// page shows less than a quarter as often as its share of the chapter would (not at all,
/// usually; a remapped `e` still shows where the page has `E`, which normalises to it).
fn remapped(page: &[char], chapter: &[char], n: usize) -> foldhash::HashSet<char> {
    let mut shown: foldhash::HashMap<char, usize> = foldhash::HashMap::default();
    for &c in page {
        *shown.entry(c).or_default() += 1;
    }
    let mut counts: foldhash::HashMap<char, usize> = foldhash::HashMap::default();
    for &c in chapter {
        *counts.entry(c).or_default() += 1;
    }
    // The page's share of the chapter, at most all of it (a page may hold more chapters).
    let share = (page.len() as f64 / chapter.len().max(1) as f64).min(1.0);
    let mut missing: Vec<(char, usize)> = counts
        .into_iter()
        .filter(|&(c, n)| (shown.get(&c).copied().unwrap_or(0) as f64) * 4.0 < n as f64 * share)
        .collect();
    missing.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    missing.truncate(n);
    missing.into_iter().map(|(c, _)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IndexSettings, MemorySource};
    use fingerprint::FingerprintSettings;

    fn fingerprinter(minhash_values: usize) -> Arc<Fingerprinter> {
        Arc::new(
            Fingerprinter::new(FingerprintSettings {
                minhash_values,
                ..FingerprintSettings::default()
            })
            .unwrap(),
        )
    }

    #[test]
    fn settings_that_cannot_work_are_refused() {
        let settings = MatcherSettings::default();
        let index = Index::new(settings.index.clone()).unwrap();
        let err = Matcher::new(settings.clone(), fingerprinter(64), index.clone()).unwrap_err();
        assert!(err.to_string().contains("64 minhash values"), "{err}");
        let other = Index::new(IndexSettings {
            lsh_bands: 10,
            ..IndexSettings::default()
        })
        .unwrap();
        assert!(Matcher::new(settings, fingerprinter(128), other).is_err());
    }

    #[test]
    fn a_page_fingerprint_of_another_version_is_an_error() {
        let f = fingerprinter(128);
        let settings = MatcherSettings::default();
        let m = Matcher::new(
            settings.clone(),
            f.clone(),
            Index::new(settings.index).unwrap(),
        )
        .unwrap();
        let text = "天下大势，分久必合，合久必分。";
        let mut old = f.fingerprint(text);
        old.summary.normalizer_version += 1;
        let page = Page::with_fingerprint(text, &f, old);
        assert!(matches!(
            m.check_page(&page, &MemorySource::new()),
            Err(Error::IncompatibleFingerprint(_))
        ));
    }
}
