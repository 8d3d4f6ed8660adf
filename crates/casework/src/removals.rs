//! One submission file of many cases for a search engine's bulk removal programme (for the
//! channels that take no API call): one infringing URL a line, a tab, then the work it copies
//! (`https://pirate.example/book/2.html<TAB>封神演义 (许仲琳)`). Cases are read a page at a
//! time, newest first; a URL in several cases is written once, with its first case's work.

use std::collections::HashSet;
use std::io::Write;

use jobs::{Error, Result, store_err};
use serde::Serialize;
use store::{CaseCursor, CaseFilter, CaseReads, CaseStatus, Store, WorkReads};

/// Cases read a query.
const PAGE: u32 = 200;

/// What [`export_removals`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RemovalExport {
    /// Cases whose URLs were written.
    pub cases: usize,
    /// Lines written (distinct URLs).
    pub urls: usize,
}

/// A field of the file: its control characters (tabs and line ends among them) made spaces,
/// so a hostile title cannot add a line or a column, and one a spreadsheet would run as a
/// formula (`=HYPERLINK(…)`) made text as the reports' CSV does: the file is tab-separated,
/// and spreadsheets open it.
fn field(s: &str) -> String {
    let plain = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>();
    crate::reports::inert_cell(plain.trim()).into_owned()
}

/// Writes the URLs of every case in `statuses` (confirmed and notice_sent are what a
/// removal request is about) to `out`.
///
/// # Errors
/// [`Error::Write`] when `out` fails; a database failure.
pub async fn export_removals(
    store: &Store,
    statuses: &[CaseStatus],
    out: &mut impl Write,
) -> Result<RemovalExport> {
    let mut seen = HashSet::new();
    let mut written = RemovalExport { cases: 0, urls: 0 };
    let mut works = std::collections::HashMap::new();
    for &status in statuses {
        let filter = CaseFilter {
            status: Some(status),
            ..CaseFilter::default()
        };
        let mut after: Option<CaseCursor> = None;
        loop {
            let page = store
                .cases(&filter, after, PAGE)
                .await
                .map_err(store_err("listing cases"))?;
            for case in &page {
                let work = match works.get(&case.work_id) {
                    Some(w) => w,
                    None => {
                        let w = store
                            .work(case.work_id)
                            .await
                            .map_err(store_err("reading a case's work"))?;
                        let named = match w.author.as_deref().map(str::trim) {
                            Some(author) if !author.is_empty() => {
                                field(&format!("{} ({author})", w.title.trim()))
                            }
                            _ => field(&w.title),
                        };
                        works.entry(case.work_id).or_insert(named)
                    }
                };
                let matches = store
                    .case_matches(case.id)
                    .await
                    .map_err(store_err("reading a case's matches"))?;
                let mut urls: Vec<&str> = matches.iter().map(|m| m.url.as_str()).collect();
                urls.sort_unstable();
                urls.dedup();
                let mut any = false;
                for url in urls {
                    if seen.insert(url.to_owned()) {
                        writeln!(out, "{}\t{work}", field(url)).map_err(Error::Write)?;
                        written.urls += 1;
                        any = true;
                    }
                }
                written.cases += usize::from(any);
            }
            match page.last() {
                Some(last) if page.len() == PAGE as usize => after = Some(last.cursor()),
                _ => break,
            }
        }
    }
    out.flush().map_err(Error::Write)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_cannot_add_lines_or_columns() {
        assert_eq!(field("封神\t演义\r\nevil\u{1b}[2J"), "封神 演义  evil [2J");
    }

    #[test]
    fn fields_cannot_be_formulas() {
        assert_eq!(
            field("=HYPERLINK(\"http://evil.example\",\"open\")"),
            "'=HYPERLINK(\"http://evil.example\",\"open\")"
        );
        assert_eq!(field(" \t@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(
            field("https://pirate.example/2.html"),
            "https://pirate.example/2.html"
        );
    }
}
