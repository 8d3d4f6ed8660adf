//! The findings as records, one per (page, chapter) match, as JSON lines or CSV: what
//! `copyhound reports export` prints and what an admin UI offers for download. The rows are
//! read a page at a time, so an export of millions of matches keeps memory flat.

use std::io::Write;

use jobs::{Error, Result, store_err};
use serde::Serialize;
use store::{CaseStatus, ReportFilter, ReportRow, Reports, Store};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row (spans as a JSON column).
    Csv,
}

/// One exported record.
#[derive(Debug, Serialize)]
struct Record<'a> {
    url: &'a str,
    site: &'a str,
    work_id: i64,
    work_title: &'a str,
    chapter_index: u32,
    chapter_title: &'a str,
    score: f64,
    coverage: f64,
    matched_chars: u32,
    case_id: Option<i64>,
    case_status: Option<&'static str>,
    first_seen: String,
    last_seen: String,
    snapshot_sha256: &'a str,
    licensed: bool,
    /// Where the page's text came from: `markup`, `script` (written by an inline script) or
    /// `endpoint` (fetched by its script from the site).
    text_source: &'a str,
    /// Page and chapter byte ranges of the copied passages (JSON).
    spans: serde_json::Value,
}

impl<'a> Record<'a> {
    fn new(r: &'a ReportRow) -> Self {
        Record {
            url: &r.url,
            site: &r.site,
            work_id: r.work_id.0,
            work_title: &r.work_title,
            chapter_index: r.chapter_index,
            chapter_title: &r.chapter_title,
            score: r.score,
            coverage: r.coverage,
            matched_chars: r.matched_chars,
            case_id: r.case_id.map(|c| c.0),
            case_status: r.case_status.map(CaseStatus::as_str),
            first_seen: r.first_seen.to_rfc3339(),
            last_seen: r.last_seen.to_rfc3339(),
            snapshot_sha256: &r.snapshot_sha256,
            licensed: r.licensed,
            text_source: &r.text_source,
            spans: serde_json::from_str(&r.passages).unwrap_or(serde_json::Value::Null),
        }
    }

    /// The CSV row, in the order of [`CSV_HEADER`].
    fn csv_row(&self) -> [String; 17] {
        [
            self.url.to_owned(),
            self.site.to_owned(),
            self.work_id.to_string(),
            self.work_title.to_owned(),
            self.chapter_index.to_string(),
            self.chapter_title.to_owned(),
            format!("{:.4}", self.score),
            format!("{:.4}", self.coverage),
            self.matched_chars.to_string(),
            self.case_id.map(|c| c.to_string()).unwrap_or_default(),
            self.case_status.unwrap_or("").to_owned(),
            self.first_seen.clone(),
            self.last_seen.clone(),
            self.snapshot_sha256.to_owned(),
            self.licensed.to_string(),
            self.text_source.to_owned(),
            self.spans.to_string(),
        ]
    }
}

/// The CSV header, in the order of the record's fields.
pub const CSV_HEADER: [&str; 17] = [
    "url",
    "site",
    "work_id",
    "work_title",
    "chapter_index",
    "chapter_title",
    "score",
    "coverage",
    "matched_chars",
    "case_id",
    "case_status",
    "first_seen",
    "last_seen",
    "snapshot_sha256",
    "licensed",
    "text_source",
    "spans",
];

/// Rows read per query.
const BATCH: u32 = 1000;

/// Where records go, in one format.
enum Sink<W: Write> {
    Csv(Box<csv::Writer<W>>),
    /// The output and a line's buffer: a record is serialised into the buffer and then
    /// written, so that a write error reaches the caller as the I/O error it is (a closed
    /// pipe stays one) rather than wrapped in a serialisation error.
    Jsonl(std::io::BufWriter<W>, Vec<u8>),
}

impl<W: Write> Sink<W> {
    fn new(format: ReportFormat, out: W) -> std::io::Result<Self> {
        Ok(match format {
            ReportFormat::Csv => {
                let mut w = csv::Writer::from_writer(out);
                w.write_record(CSV_HEADER).map_err(csv_io)?;
                Sink::Csv(Box::new(w))
            }
            ReportFormat::Jsonl => Sink::Jsonl(std::io::BufWriter::new(out), Vec::new()),
        })
    }

    fn write(&mut self, record: &Record<'_>) -> std::io::Result<()> {
        match self {
            Sink::Csv(w) => w
                .write_record(
                    record
                        .csv_row()
                        .iter()
                        .map(|cell| inert_cell(cell).into_owned()),
                )
                .map_err(csv_io),
            Sink::Jsonl(out, line) => {
                line.clear();
                serde_json::to_writer(&mut *line, record).map_err(std::io::Error::other)?;
                line.push(b'\n');
                out.write_all(line)
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Csv(w) => w.flush(),
            Sink::Jsonl(out, _) => out.flush(),
        }
    }
}

/// Writes every match `filter` selects to `out` as `format`, a page of rows at a time;
/// returns how many records were written.
///
/// # Errors
/// [`Error::Store`] when the matches cannot be read, [`Error::Write`] when `out` fails (its
/// kind is [`std::io::ErrorKind::BrokenPipe`] when the reader went away).
pub async fn export_reports<W: Write>(
    store: &Store,
    filter: &ReportFilter,
    format: ReportFormat,
    out: W,
) -> Result<u64> {
    let mut sink = Sink::new(format, out).map_err(Error::Write)?;
    let (mut after, mut count) = (None, 0u64);
    loop {
        let rows = store
            .report_rows(filter, after, BATCH)
            .await
            .map_err(store_err("reading the matches"))?;
        for row in &rows {
            sink.write(&Record::new(row)).map_err(Error::Write)?;
            count += 1;
        }
        after = rows.last().map(ReportRow::cursor);
        if rows.len() < BATCH as usize {
            break;
        }
    }
    sink.flush().map_err(Error::Write)?;
    Ok(count)
}

/// A cell a spreadsheet will not run: one that starts with `=`, `+`, `-`, `@`, a tab or a
/// carriage return is a formula to Excel and LibreOffice (`=HYPERLINK(...)` in a crawled
/// page's title), so it gets a leading `'`, which they show as text (OWASP "CSV injection").
/// No number this export writes is negative, so no number is changed.
pub(crate) fn inert_cell(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

/// A CSV writer's error as the I/O error it wraps (a record of strings cannot fail to
/// serialise).
fn csv_io(e: csv::Error) -> std::io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => std::io::Error::other(format!("{other:?}")),
    }
}
