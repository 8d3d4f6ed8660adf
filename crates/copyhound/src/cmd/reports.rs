//! `copyhound reports export`: every (page, chapter) match as JSON lines or CSV, streamed a
//! page of rows at a time so an export of millions of matches keeps memory flat.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use store::{CaseStatus, LicensedRows, ReportFilter, ReportRow, Reports, WorkId};

/// `reports` subcommands.
#[derive(Debug, Subcommand)]
pub enum ReportsCommand {
    /// Export one record per (page, chapter) match.
    Export(ExportArgs),
}

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row (spans as a JSON column).
    Csv,
}

/// Options of `reports export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: Format,
    /// Only matches in cases of this status.
    #[arg(long, value_name = "STATUS", value_parser = super::cases::parse_status)]
    status: Option<CaseStatus>,
    /// Only matches of this work.
    #[arg(long, value_name = "ID")]
    work: Option<WorkId>,
    /// Leave out the matches on licensed domains (kept by default, marked `licensed`).
    #[arg(long)]
    no_licensed: bool,
    /// Write here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
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
            spans: serde_json::from_str(&r.passages).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// Rows read per query.
const BATCH: u32 = 1000;

/// Runs a `reports` subcommand.
pub async fn run(command: ReportsCommand, database: &str) -> Result<()> {
    let ReportsCommand::Export(args) = command;
    let store = super::open_store(database).await?;
    let result = export(&store, &args).await;
    store.close().await;
    let count = result?;
    eprintln!(
        "{count} records exported{}",
        args.out
            .as_ref()
            .map(|p| format!(" to {}", p.display()))
            .unwrap_or_default()
    );
    Ok(())
}

async fn export(store: &store::Store, args: &ExportArgs) -> Result<u64> {
    let filter = ReportFilter {
        status: args.status,
        work: args.work,
        licensed: if args.no_licensed {
            LicensedRows::Exclude
        } else {
            LicensedRows::Include
        },
    };
    let sink: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("while creating {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let (mut csv, mut jsonl) = match args.format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(sink);
            w.write_record(CSV_HEADER).map_err(csv_io)?;
            (Some(w), None)
        }
        Format::Jsonl => (None, Some(std::io::BufWriter::new(sink))),
    };
    let (mut after, mut count) = (None, 0u64);
    loop {
        let rows = store
            .report_rows(&filter, after, BATCH)
            .await
            .context("while reading the matches")?;
        for row in &rows {
            let record = Record::new(row);
            let written = match &mut csv {
                Some(w) => {
                    let spans = record.spans.to_string();
                    w.write_record([
                        record.url,
                        record.site,
                        &record.work_id.to_string(),
                        record.work_title,
                        &record.chapter_index.to_string(),
                        record.chapter_title,
                        &format!("{:.4}", record.score),
                        &format!("{:.4}", record.coverage),
                        &record.matched_chars.to_string(),
                        &record.case_id.map(|c| c.to_string()).unwrap_or_default(),
                        record.case_status.unwrap_or(""),
                        &record.first_seen,
                        &record.last_seen,
                        record.snapshot_sha256,
                        if record.licensed { "true" } else { "false" },
                        &spans,
                    ])
                    .map_err(csv_io)
                }
                None => match &mut jsonl {
                    Some(out) => serde_json::to_writer(&mut *out, &record)
                        .map_err(std::io::Error::other)
                        .and_then(|()| out.write_all(b"\n")),
                    None => Ok(()),
                },
            };
            match written {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Err(super::StdoutClosed.into());
                }
                other => other.context("while writing the export")?,
            }
            count += 1;
        }
        after = rows.last().map(ReportRow::cursor);
        if rows.len() < BATCH as usize {
            break;
        }
    }
    let flushed = match (&mut csv, &mut jsonl) {
        (Some(w), _) => w.flush(),
        (_, Some(out)) => out.flush(),
        _ => Ok(()),
    };
    match flushed {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(super::StdoutClosed.into()),
        other => {
            other.context("while writing the export")?;
            Ok(count)
        }
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

/// The CSV header, in the order of the record's fields.
pub const CSV_HEADER: [&str; 16] = [
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
    "spans",
];
