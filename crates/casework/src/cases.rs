//! A case as a reviewer reads it: its chapters, each with the best match and the combined
//! coverage of every page of the site that holds part of it (a chapter split over three
//! pages shows as one chapter copied, not three weak matches; a page holding two chapters
//! counts for both), and its pages.

use std::collections::BTreeMap;
use std::fmt;

use jobs::{Result, store_err};
use serde::{Deserialize, Serialize};
use store::{CaseId, CaseMatch, CaseReads, CaseRecord, ChapterId, Store};

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
/// [`jobs::Error::is_not_found`] for an unknown case; a database failure.
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

/// A match of chapter 1 (`chapter_chars` long) on snapshot `snapshot`, with the passages
/// `spans` as the matcher stores them: for the tests of this crate.
#[cfg(test)]
pub(crate) fn sample_match(snapshot: i64, spans: &str, chapter_chars: u32) -> CaseMatch {
    CaseMatch {
        match_id: snapshot,
        snapshot_id: store::SnapshotId(snapshot),
        page_id: store::PageId(snapshot),
        url: format!("http://x/{snapshot}"),
        final_url: format!("http://x/{snapshot}"),
        fetched_at: chrono::Utc::now(),
        snapshot_sha256: String::new(),
        revisit_of: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn m(spans: &str, chapter_chars: u32) -> CaseMatch {
        sample_match(1, spans, chapter_chars)
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
    pub timestamps: Vec<crate::timestamps::SnapshotTimestamp>,
}

/// Reads case `id`'s dossier, its parts concurrently.
///
/// # Errors
/// An unknown case ([`jobs::Error::is_not_found`]), a database failure.
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
        crate::timestamps::case_timestamps(store, id, trust),
    )?;
    Ok(CaseDossier {
        view,
        history,
        recheck,
        timestamps,
    })
}

/// Cases as `cases list` prints them: one tab-separated line each under a header, or a
/// hint when there are none; serialised, the case rows.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct CaseTable(pub Vec<CaseRecord>);

impl fmt::Display for CaseTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return writeln!(
                f,
                "no cases (crawl suspect sites with `copyhound crawl URL`)"
            );
        }
        writeln!(
            f,
            "case\tstatus\tsite\twork\tchapters\tpages\texposure\tlast seen"
        )?;
        for c in &self.0 {
            writeln!(
                f,
                "{}\t{}\t{}\t{} «{}»\t{}/{}\t{}\t{:.1}%\t{}",
                c.id,
                c.status,
                c.site,
                c.work_id,
                c.work_title,
                c.chapters_matched,
                c.work_chapters,
                c.pages,
                c.exposure * 100.0,
                c.last_seen_at.format("%Y-%m-%d %H:%M")
            )?;
        }
        Ok(())
    }
}

/// A [`CaseDossier`] as `cases show` prints it, with what each matched page's text was
/// made from when that was not its markup (a script, a content endpoint).
#[derive(Debug)]
pub struct CaseSheet<'a> {
    /// The dossier.
    pub dossier: &'a CaseDossier,
    /// For each match of the dossier's view, in order: the note on its text's source and
    /// the snapshot the text came from, if another.
    pub sources: Vec<Option<(&'static str, Option<store::SnapshotId>)>>,
}

/// The dossier with the source of each matched page's text, read from the store.
pub async fn case_sheet<'a>(store: &Store, dossier: &'a CaseDossier) -> Result<CaseSheet<'a>> {
    // A page matching several chapters is one snapshot: its text is read once.
    let mut by_snapshot = BTreeMap::new();
    for m in &dossier.view.matches {
        if by_snapshot.contains_key(&m.snapshot_id) {
            continue;
        }
        let source = match store::EvidenceReads::page_text(store, m.snapshot_id).await {
            Ok(t) => {
                detection::check::source_note(&t.text_source).map(|note| (note, t.text_snapshot))
            }
            Err(store::Error::NotFound { .. }) => None,
            Err(e) => return Err(store_err("reading a page text")(e)),
        };
        by_snapshot.insert(m.snapshot_id, source);
    }
    let sources = dossier
        .view
        .matches
        .iter()
        .map(|m| by_snapshot[&m.snapshot_id])
        .collect();
    Ok(CaseSheet { dossier, sources })
}

impl fmt::Display for CaseSheet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let CaseDossier {
            view,
            history,
            recheck,
            timestamps,
        } = self.dossier;
        let c = &view.case;
        writeln!(
            f,
            "case {}: {} copies work {} «{}» — {}",
            c.id, c.site, c.work_id, c.work_title, c.status
        )?;
        writeln!(
            f,
            "first seen {}, last seen {}; {} of {} chapters ({:.1}%) on {} pages",
            c.first_seen_at.to_rfc3339(),
            c.last_seen_at.to_rfc3339(),
            c.chapters_matched,
            c.work_chapters,
            c.exposure * 100.0,
            c.pages
        )?;
        writeln!(f, "\nchapters:")?;
        for ch in &view.chapters {
            writeln!(
                f,
                "  {} «{}»: coverage {:.2} over {} page(s); best {} (score {:.2}, coverage {:.2})",
                ch.chapter_index,
                ch.chapter_title,
                ch.coverage,
                ch.pages.len(),
                ch.best.url,
                ch.best.score,
                ch.best.coverage
            )?;
        }
        writeln!(f, "\npages:")?;
        for p in &view.pages {
            let chapters: Vec<String> = p.chapters.iter().map(u32::to_string).collect();
            writeln!(
                f,
                "  {} (chapters {}; seen {} – {})",
                p.url,
                chapters.join(", "),
                p.first_seen.format("%Y-%m-%d"),
                p.last_seen.format("%Y-%m-%d")
            )?;
        }
        if let Some(r) = recheck {
            write!(f, "\n{}", crate::rechecks::RecheckSheet::now(r))?;
        }
        writeln!(f, "\npassages (page bytes = chapter bytes):")?;
        for (m, source) in view.matches.iter().zip(&self.sources) {
            writeln!(
                f,
                "  {} [sha256 {}] chapter {}: {}",
                m.url, m.snapshot_sha256, m.chapter_index, m.passages
            )?;
            // A page whose text a script wrote (or fetched) says so: its markup alone does
            // not show the copy.
            match source {
                Some((said, Some(endpoint))) => writeln!(f, "    {said} (snapshot {endpoint})")?,
                Some((said, None)) => writeln!(f, "    {said}")?,
                None => {}
            }
        }
        writeln!(f, "\ntimestamps (RFC 3161):")?;
        write_timestamps(f, view, timestamps)?;
        writeln!(f, "\nhistory:")?;
        for h in history {
            writeln!(
                f,
                "  {} {} {}{}",
                h.at.to_rfc3339(),
                h.actor,
                h.action,
                h.note().map(|n| format!(": {n}")).unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

/// Each snapshot of the case with its tokens, verified, or "not stamped".
fn write_timestamps(
    f: &mut fmt::Formatter<'_>,
    view: &CaseView,
    stamps: &[crate::timestamps::SnapshotTimestamp],
) -> fmt::Result {
    for (id, url) in view.snapshots() {
        let mine: Vec<_> = stamps.iter().filter(|t| t.snapshot == id).collect();
        if mine.is_empty() {
            writeln!(
                f,
                "  snapshot {id} {url}: not stamped (copyhound cases stamp {})",
                view.case.id
            )?;
        }
        for t in mine {
            let verdict = match &t.verification {
                crate::timestamps::Verification::Valid { chained: true, .. } => {
                    "verified, signer chains to the trusted ca".to_owned()
                }
                crate::timestamps::Verification::Valid { signer, .. } => format!(
                    "signature verified; signer {signer} not checked against a ca \
                     (set evidence.timestamp.ca_certificates)"
                ),
                crate::timestamps::Verification::Invalid { reason } => {
                    format!("NOT VALID: {reason}")
                }
            };
            writeln!(
                f,
                "  snapshot {id} {url}: stamped {} by {} — {verdict}",
                t.gen_time.to_rfc3339(),
                t.tsa
            )?;
        }
    }
    Ok(())
}

/// The licensed domains as `licensed list` prints them: domain, work, note (or a line
/// saying there are none); serialised, one object per domain without its row id.
#[derive(Debug)]
pub struct LicensedTable<'a>(pub &'a [store::LicensedDomain]);

impl Serialize for LicensedTable<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Row<'a> {
            domain: &'a str,
            work_id: Option<store::WorkId>,
            work_title: Option<&'a str>,
            note: Option<&'a str>,
            created_at: chrono::DateTime<chrono::Utc>,
        }
        serializer.collect_seq(self.0.iter().map(|d| Row {
            domain: &d.domain,
            work_id: d.work_id,
            work_title: d.work_title.as_deref(),
            note: d.note.as_deref(),
            created_at: d.created_at,
        }))
    }
}

impl fmt::Display for LicensedTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            writeln!(f, "no licensed domains")?;
        }
        for d in self.0 {
            let work = match (&d.work_id, &d.work_title) {
                (Some(w), Some(t)) => format!("work {w} «{t}»"),
                (Some(w), None) => format!("work {w}"),
                _ => "every work".to_owned(),
            };
            writeln!(
                f,
                "{}\t{work}\t{}",
                d.domain,
                d.note.as_deref().unwrap_or("")
            )?;
        }
        Ok(())
    }
}
