//! `copyhound reports export`: every (page, chapter) match as JSON lines or CSV, written by
//! [`casework::export_reports`] to standard output or a file.

use std::path::PathBuf;

use anyhow::{Context, Result};
use casework::{ReportFormat, export_reports};
use clap::{Args, Subcommand, ValueEnum};
use store::{CaseStatus, LicensedRows, ReportFilter, WorkId};

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

/// Runs a `reports` subcommand.
pub async fn run(store: &store::Store, command: ReportsCommand) -> Result<()> {
    let ReportsCommand::Export(args) = command;
    let count = export(store, &args).await?;
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
    let format = match args.format {
        Format::Jsonl => ReportFormat::Jsonl,
        Format::Csv => ReportFormat::Csv,
    };
    let written = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("while creating {}", path.display()))?;
            export_reports(store, &filter, format, file).await
        }
        None => export_reports(store, &filter, format, std::io::stdout().lock()).await,
    };
    match written {
        Err(jobs::Error::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Err(super::StdoutClosed.into())
        }
        other => Ok(other?),
    }
}
