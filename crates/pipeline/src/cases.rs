//! A case as a reviewer reads it: its chapters, each with the best match and the combined
//! coverage of every page of the site that holds part of it (a chapter split over three
//! pages shows as one chapter copied, not three weak matches; a page holding two chapters
//! counts for both), and its pages.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use store::{CaseId, CaseMatch, CaseReads, CaseRecord, ChapterId, Store};

use crate::error::{Result, store_err};

/// One chapter of a case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseChapter {
    /// The chapter.
    pub chapter_id: ChapterId,
    /// Its 1-based position in the work.
    pub chapter_index: u32,
    /// Its title.
    pub chapter_title: String,
    /// Share of the chapter found on the site, over all its pages (the union of the copied
    /// passages), 0..1.
    pub coverage: f64,
    /// The best single match (highest coverage).
    pub best: CaseMatch,
    /// Pages of the site holding part of the chapter.
    pub pages: Vec<String>,
}

/// One page of a case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CasePage {
    /// The URL fetched.
    pub url: String,
    /// First and last fetch that matched.
    pub first_seen: chrono::DateTime<chrono::Utc>,
    /// Last fetch that matched.
    pub last_seen: chrono::DateTime<chrono::Utc>,
    /// Chapters (1-based indexes) it holds.
    pub chapters: Vec<u32>,
}

/// A case with its chapters and pages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseView {
    /// The case row.
    pub case: CaseRecord,
    /// Its chapters, in work order.
    pub chapters: Vec<CaseChapter>,
    /// Its pages, by URL.
    pub pages: Vec<CasePage>,
    /// Every match, for the passages.
    pub matches: Vec<CaseMatch>,
}

impl CaseView {
    /// The case's snapshots (each fetch that matched), by id, with the URL fetched.
    pub fn snapshots(&self) -> Vec<(store::SnapshotId, &str)> {
        let mut snapshots: Vec<(store::SnapshotId, &str)> = self
            .matches
            .iter()
            .map(|m| (m.snapshot_id, m.url.as_str()))
            .collect();
        snapshots.sort_unstable();
        snapshots.dedup_by_key(|(id, _)| *id);
        snapshots
    }
}

/// A copied passage as the matcher stores it (byte ranges in page and chapter).
#[derive(Debug, Clone, Deserialize)]
struct Span {
    chapter: std::ops::Range<usize>,
    chars: usize,
}

/// Reads case `id` with its chapters' combined coverage.
///
/// # Errors
/// [`crate::Error::is_not_found`] for an unknown case; a database failure.
pub async fn case_view(store: &Store, id: CaseId) -> Result<CaseView> {
    let case = store
        .case(id)
        .await
        .map_err(store_err("reading the case"))?;
    let matches = store
        .case_matches(id)
        .await
        .map_err(store_err("reading the case's matches"))?;
    let mut by_chapter: BTreeMap<(u32, ChapterId), Vec<&CaseMatch>> = BTreeMap::new();
    let mut by_page: BTreeMap<&str, Vec<&CaseMatch>> = BTreeMap::new();
    for m in &matches {
        by_chapter
            .entry((m.chapter_index, m.chapter_id))
            .or_default()
            .push(m);
        by_page.entry(m.url.as_str()).or_default().push(m);
    }
    let chapters = by_chapter
        .into_iter()
        .filter_map(|((index, chapter_id), ms)| {
            let best = ms.iter().max_by(|a, b| a.coverage.total_cmp(&b.coverage))?;
            let mut pages: Vec<String> = ms.iter().map(|m| m.url.clone()).collect();
            pages.sort();
            pages.dedup();
            Some(CaseChapter {
                chapter_id,
                chapter_index: index,
                chapter_title: best.chapter_title.clone(),
                coverage: combined_coverage(&ms).max(best.coverage),
                best: (*best).clone(),
                pages,
            })
        })
        .collect();
    let pages = by_page
        .into_iter()
        .map(|(url, ms)| {
            let mut chapters: Vec<u32> = ms.iter().map(|m| m.chapter_index).collect();
            chapters.sort_unstable();
            chapters.dedup();
            CasePage {
                url: url.to_owned(),
                first_seen: ms.iter().map(|m| m.fetched_at).min().unwrap_or_default(),
                last_seen: ms.iter().map(|m| m.fetched_at).max().unwrap_or_default(),
                chapters,
            }
        })
        .collect();
    Ok(CaseView {
        case,
        chapters,
        pages,
        matches,
    })
}

/// The share of a chapter its matches cover together: the copied passages' chapter ranges
/// merged, each passage counting its matched characters for the part of its range no
/// earlier passage covered, over the chapter's characters.
pub fn combined_coverage(matches: &[&CaseMatch]) -> f64 {
    let Some(chapter_chars) = matches.iter().map(|m| m.chapter_chars).max() else {
        return 0.0;
    };
    if chapter_chars == 0 {
        return 0.0;
    }
    let mut spans: Vec<Span> = matches
        .iter()
        .filter_map(|m| serde_json::from_str::<Vec<Span>>(&m.passages).ok())
        .flatten()
        .filter(|s| s.chapter.end > s.chapter.start)
        .collect();
    spans.sort_by_key(|s| (s.chapter.start, s.chapter.end));
    let mut covered_to = 0usize;
    let mut chars = 0.0;
    for s in &spans {
        let len = (s.chapter.end - s.chapter.start) as f64;
        let fresh = s
            .chapter
            .end
            .saturating_sub(s.chapter.start.max(covered_to)) as f64;
        chars += s.chars as f64 * fresh / len;
        covered_to = covered_to.max(s.chapter.end);
    }
    (chars / f64::from(chapter_chars)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(spans: &str, chapter_chars: u32) -> CaseMatch {
        CaseMatch {
            match_id: 1,
            snapshot_id: store::SnapshotId(1),
            page_id: store::PageId(1),
            url: "http://x/1".into(),
            final_url: "http://x/1".into(),
            fetched_at: chrono::Utc::now(),
            snapshot_sha256: String::new(),
            chapter_id: ChapterId(1),
            chapter_index: 1,
            chapter_title: "第一回".into(),
            score: 1.0,
            coverage: 0.3,
            page_share: 1.0,
            matched_chars: 300,
            chapter_chars,
            page_chars: 300,
            passages: spans.into(),
        }
    }

    #[test]
    fn three_pages_of_a_split_chapter_cover_it_together() {
        let (a, b, c) = (
            m(
                r#"[{"page":{"start":0,"end":900},"chapter":{"start":0,"end":900},"chars":300}]"#,
                900,
            ),
            m(
                r#"[{"page":{"start":0,"end":900},"chapter":{"start":900,"end":1800},"chars":300}]"#,
                900,
            ),
            m(
                r#"[{"page":{"start":0,"end":900},"chapter":{"start":1800,"end":2700},"chars":300}]"#,
                900,
            ),
        );
        assert!((combined_coverage(&[&a]) - 1.0 / 3.0).abs() < 1e-9);
        assert!((combined_coverage(&[&a, &b, &c]) - 1.0).abs() < 1e-9);
        // The same passage twice (a page fetched twice) counts once.
        assert!((combined_coverage(&[&a, &a]) - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn overlapping_pages_count_the_overlap_once_and_bad_json_is_skipped() {
        let a = m(
            r#"[{"page":{"start":0,"end":10},"chapter":{"start":0,"end":600},"chars":200}]"#,
            300,
        );
        let b = m(
            r#"[{"page":{"start":0,"end":10},"chapter":{"start":300,"end":900},"chars":200}]"#,
            300,
        );
        let bad = m("not json", 300);
        let got = combined_coverage(&[&a, &b, &bad]);
        assert!((got - 1.0).abs() < 1e-9, "{got}");
        assert_eq!(combined_coverage(&[]), 0.0);
    }
}

/// Everything a reviewer reads of one case: the case with its chapters and pages, its
/// history, its re-checks, its snapshots' timestamps. Read at once by `cases show` and the
/// case's page.
#[derive(Debug, Clone, Serialize)]
pub struct CaseDossier {
    /// The case, its chapters, pages and matches.
    #[serde(flatten)]
    pub view: CaseView,
    /// What happened to it, oldest first.
    pub history: Vec<store::AuditRecord>,
    /// The re-checks since its notice, if one was sent.
    pub recheck: Option<store::RecheckRecord>,
    /// The trusted timestamps of its snapshots, verified against `trust` where given.
    pub timestamps: Vec<crate::SnapshotTimestamp>,
}

/// Reads case `id`'s dossier, its parts concurrently.
///
/// # Errors
/// An unknown case ([`crate::Error::is_not_found`]), a database failure.
pub async fn case_dossier(
    store: &Store,
    id: CaseId,
    trust: Option<&timestamp::Trust>,
) -> Result<CaseDossier> {
    let (view, history, recheck, timestamps) = tokio::try_join!(
        case_view(store, id),
        async {
            store
                .case_history(id)
                .await
                .map_err(store_err("reading the case's history"))
        },
        async {
            store::Rechecks::case_recheck(store, id)
                .await
                .map_err(store_err("reading the case's re-checks"))
        },
        crate::case_timestamps(store, id, trust),
    )?;
    Ok(CaseDossier {
        view,
        history,
        recheck,
        timestamps,
    })
}
