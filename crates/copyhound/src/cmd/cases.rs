//! `copyhound cases list|show|set|stamp|capture|evidence` (what the crawls found, per site and
//! work, its trusted timestamps, screenshots of its pages and its evidence package) and `copyhound licensed add|list|remove`
//! (domains whose copies are allowed).

use anyhow::{Context, Result, bail};
use casework::review::{DismissReason, decision_note};
use clap::{Args, Subcommand};
use store::{
    CaseFilter, CaseId, CaseReads, CaseStatus, CaseWrites, LicensedDomains, Store, WorkId,
};

use super::outln;
use settings::Settings;

/// `cases` subcommands.
#[derive(Debug, Subcommand)]
pub enum CasesCommand {
    /// List cases, most recently seen first.
    List(ListArgs),
    /// One case: its chapters with their combined coverage, pages and passages.
    Show(ShowArgs),
    /// Move a case to another status (new, confirmed, notice_sent, removed, dismissed).
    Set(SetArgs),
    /// Have the configured time-stamping authority (evidence.timestamp.url) stamp every
    /// snapshot of a case it has not stamped yet (RFC 3161).
    Stamp(StampArgs),
    /// Render each page of the case now in a headless Chromium and store its screenshot
    /// (shown on the case page, put in the evidence package).
    Capture(CaptureArgs),
    /// Write the case's evidence package: a WARC of every snapshot, the page texts, the
    /// aligned passages, timestamp tokens and a manifest with every file's SHA-256.
    Evidence(EvidenceArgs),
    /// Write one submission file for a search engine's bulk removal programme: each URL of
    /// the confirmed and notice_sent cases (or those of --status), a tab, the work.
    Removals(RemovalsArgs),
}

/// Options of `cases removals`.
#[derive(Debug, Args)]
pub struct RemovalsArgs {
    /// Cases in these statuses [default: confirmed and notice_sent].
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    status: Vec<CaseStatus>,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
}

/// Options of `cases evidence`.
#[derive(Debug, Args)]
pub struct EvidenceArgs {
    /// The case (see `cases list`).
    id: CaseId,
    /// The folder to write (created if missing).
    #[arg(long, value_name = "DIR")]
    out: std::path::PathBuf,
    /// Overwrite the files of an earlier package in DIR.
    #[arg(long)]
    force: bool,
}

/// Options of `cases stamp`.
#[derive(Debug, Args)]
pub struct StampArgs {
    /// The case.
    id: CaseId,
}

/// Options of `cases capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The case.
    id: CaseId,
    /// Allow loopback, private and link-local addresses (a local test site); refused otherwise.
    #[arg(long)]
    allow_private: bool,
}

/// Options of `cases list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only cases in this status.
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    status: Option<CaseStatus>,
    /// Only cases of this work.
    #[arg(long, value_name = "ID")]
    work: Option<WorkId>,
    /// Only cases on this host.
    #[arg(long, value_name = "HOST")]
    site: Option<String>,
    /// Cases listed at most.
    #[arg(long, default_value_t = 100)]
    limit: u32,
    /// Print a JSON array.
    #[arg(long)]
    json: bool,
}

/// Options of `cases show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The case (see `cases list`).
    id: CaseId,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Options of `cases set`.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// The case.
    id: CaseId,
    /// The new status.
    #[arg(value_parser = parse_status)]
    status: CaseStatus,
    /// Why (kept in the case's history).
    #[arg(long)]
    note: Option<String>,
    /// Why a case is dismissed: licensed, quotation, not_ours or other.
    #[arg(long, value_parser = |s: &str| DismissReason::parse(s).map_err(|e| e.to_string()))]
    reason: Option<DismissReason>,
}

/// A case status from the command line.
pub fn parse_status(s: &str) -> std::result::Result<CaseStatus, String> {
    s.parse::<CaseStatus>().map_err(|e| e.to_string())
}

/// Runs a `cases` subcommand.
pub async fn run(command: CasesCommand, database: &str, settings: &Settings) -> Result<()> {
    let timestamps = &settings.evidence.timestamp;
    // Before the store: a bad CA file or a missing TSA is a settings error, said first.
    let tsa = match &command {
        CasesCommand::Stamp(_) => Some(timestamp::Tsa::from_settings(timestamps)?.context(
            "no time-stamping authority configured: set evidence.timestamp.url \
                 (COPYHOUND_EVIDENCE__TIMESTAMP__URL)",
        )?),
        // A capture stamps its screenshots when an authority is configured.
        CasesCommand::Capture(_) => timestamp::Tsa::from_settings(timestamps)?,
        _ => None,
    };
    let trust = match &command {
        CasesCommand::Show(_) => timestamps
            .ca_certificates
            .as_deref()
            .map(timestamp::Trust::load)
            .transpose()?,
        _ => None,
    };
    super::on_store(database, async |store| match command {
        CasesCommand::List(a) => list(store, a).await,
        CasesCommand::Show(a) => show(store, a, trust.as_ref()).await,
        CasesCommand::Set(a) => set(store, a).await,
        CasesCommand::Stamp(a) => match &tsa {
            Some(tsa) => stamp(store, a, tsa).await,
            None => unreachable!("a stamp command has its tsa"),
        },
        CasesCommand::Evidence(a) => evidence(store, a).await,
        CasesCommand::Capture(a) => capture(store, a, settings, tsa.as_ref()).await,
        CasesCommand::Removals(a) => removals(store, a).await,
    })
    .await
}

async fn removals(store: &Store, args: RemovalsArgs) -> Result<()> {
    let statuses = if args.status.is_empty() {
        vec![CaseStatus::Confirmed, CaseStatus::NoticeSent]
    } else {
        args.status
    };
    let written = match &args.out {
        Some(path) => {
            let mut file = std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("while creating {}", path.display()))?,
            );
            let written = casework::removals::export_removals(store, &statuses, &mut file).await?;
            eprintln!(
                "wrote {} URLs of {} cases to {}",
                written.urls,
                written.cases,
                path.display()
            );
            Ok(written)
        }
        None => {
            casework::removals::export_removals(store, &statuses, &mut std::io::stdout().lock())
                .await
        }
    };
    match written {
        Err(jobs::Error::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Err(super::StdoutClosed.into())
        }
        other => other.map(drop).map_err(Into::into),
    }
}

async fn list(store: &Store, args: ListArgs) -> Result<()> {
    let filter = CaseFilter {
        status: args.status,
        work: args.work,
        site: args.site.map(|s| s.to_ascii_lowercase()),
        min_exposure: None,
    };
    let cases = store
        .cases(&filter, None, args.limit)
        .await
        .context("while listing cases")?;
    let table = casework::cases::CaseTable(cases);
    if args.json {
        outln!("{}", serde_json::to_string(&table)?);
    } else {
        super::write_stdout(&table.to_string())?;
    }
    Ok(())
}

async fn evidence(store: &Store, args: EvidenceArgs) -> Result<()> {
    let package = evidence::write_package(store, args.id, &args.out, args.force)
        .await
        .map_err(super::or_missing(|| {
            format!("there is no case {}: see `copyhound cases list`", args.id)
        }))
        .with_context(|| format!("while writing the evidence of case {}", args.id))?;
    let bytes: u64 = package.files.iter().map(|f| f.bytes).sum();
    outln!(
        "wrote the evidence of case {} to {}: {} snapshots, {} files ({bytes} bytes)",
        args.id,
        package.dir.display(),
        package.snapshots,
        package.files.len() + 1,
    );
    outln!("manifest.json sha256 {}", package.manifest_sha256);
    Ok(())
}

async fn show(store: &Store, args: ShowArgs, trust: Option<&timestamp::Trust>) -> Result<()> {
    let reading = || {
        format!(
            "while reading case {} (see `copyhound cases list`)",
            args.id
        )
    };
    let dossier = casework::case_dossier(store, args.id, trust)
        .await
        .with_context(reading)?;
    if args.json {
        outln!("{}", serde_json::to_string(&dossier)?);
        return Ok(());
    }
    let sheet = casework::cases::case_sheet(store, &dossier)
        .await
        .with_context(reading)?;
    super::write_stdout(&sheet.to_string())
}

async fn stamp(store: &Store, args: StampArgs, tsa: &timestamp::Tsa) -> Result<()> {
    let done = evidence::stamp_case(store, tsa, args.id)
        .await
        .with_context(|| {
            format!(
                "while stamping case {} (see `copyhound cases list`)",
                args.id
            )
        })?;
    for (snapshot, why) in &done.failed {
        eprintln!("snapshot {snapshot}: not stamped: {why}");
    }
    super::write_stdout(&done.text(args.id, tsa.url()))?;
    if !done.failed.is_empty() {
        bail!(
            "{} snapshot(s) of case {} could not be stamped",
            done.failed.len(),
            args.id
        );
    }
    Ok(())
}

async fn capture(
    store: &Store,
    args: CaptureArgs,
    settings: &Settings,
    tsa: Option<&timestamp::Tsa>,
) -> Result<()> {
    let mut crawl = settings.crawler.clone();
    if args.allow_private {
        crawl.fetch.safety.allow_private = true;
    }
    let done = evidence::capture_case(store, &crawl, tsa, args.id)
        .await
        .with_context(|| format!("while capturing case {}", args.id))?;
    for (snapshot, why) in &done.failed {
        eprintln!("snapshot {snapshot}: no screenshot: {why}");
    }
    for (snapshot, why) in &done.unstamped {
        eprintln!("snapshot {snapshot}: screenshot not stamped: {why}");
    }
    outln!(
        "case {}: {} of {} page(s) captured, {} screenshot(s) stamped",
        args.id,
        done.captured,
        done.pages,
        done.stamped
    );
    if !done.failed.is_empty() {
        bail!(
            "{} page(s) of case {} could not be captured",
            done.failed.len(),
            args.id
        );
    }
    if !done.unstamped.is_empty() {
        bail!(
            "{} screenshot(s) of case {} could not be stamped: run `copyhound cases stamp {}` \
             when the time-stamping authority answers",
            done.unstamped.len(),
            args.id,
            args.id
        );
    }
    Ok(())
}

async fn set(store: &Store, args: SetArgs) -> Result<()> {
    let note = decision_note(args.reason, args.note.as_deref());
    let case = store
        .set_case_status(args.id, args.status, "cli", note.as_deref())
        .await
        .with_context(|| format!("while moving case {} to {}", args.id, args.status))?;
    outln!("case {} is now {}", case.id, case.status);
    Ok(())
}

/// `licensed` subcommands.
#[derive(Debug, Subcommand)]
pub enum LicensedCommand {
    /// Allow copies on DOMAIN and its subdomains (of every work, or of --work ID).
    Add(LicensedArgs),
    /// List the licensed domains.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a licensed domain.
    Remove(LicensedArgs),
}

/// A domain and the work it is licensed for.
#[derive(Debug, Args)]
pub struct LicensedArgs {
    /// The domain (e.g. example.com; subdomains included).
    domain: String,
    /// Only for this work (default: every work).
    #[arg(long, value_name = "ID")]
    work: Option<WorkId>,
    /// A note (the licence, the contact).
    #[arg(long)]
    note: Option<String>,
}

/// Runs a `licensed` subcommand.
pub async fn licensed(store: &Store, command: LicensedCommand) -> Result<()> {
    match command {
        LicensedCommand::Add(a) => {
            let added = store
                .add_licensed(&a.domain, a.work, a.note.as_deref())
                .await
                .with_context(|| format!("while licensing {}", a.domain))?;
            outln!(
                "licensed {} for {} (matches recorded from now on; `copyhound rematch --site HOST` re-files stored ones)",
                added.domain,
                added
                    .work_id
                    .map_or("every work".to_owned(), |w| format!("work {w}"))
            );
        }
        LicensedCommand::List { json } => {
            let domains = store.licensed_domains().await?;
            let table = casework::cases::LicensedTable(&domains);
            if json {
                outln!("{}", serde_json::to_string(&table)?);
            } else {
                super::write_stdout(&table.to_string())?;
            }
        }
        LicensedCommand::Remove(a) => {
            if !store.remove_licensed(&a.domain, a.work).await? {
                bail!(
                    "{} is not licensed{}: see `copyhound licensed list`",
                    a.domain,
                    a.work.map(|w| format!(" for work {w}")).unwrap_or_default()
                );
            }
            outln!("{} is no longer licensed", a.domain);
        }
    }
    Ok(())
}
