//! `copyhound cases list|show|set|stamp|evidence` (what the crawls found, per site and work,
//! its trusted timestamps and its evidence package) and `copyhound licensed add|list|remove`
//! (domains whose copies are allowed).

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use store::{
    CaseFilter, CaseId, CaseReads, CaseStatus, CaseWrites, EvidenceReads, LicensedDomains, Store,
    WorkId,
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
    /// Write the case's evidence package: a WARC of every snapshot, the page texts, the
    /// aligned passages, timestamp tokens and a manifest with every file's SHA-256.
    Evidence(EvidenceArgs),
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
    let store = super::open_store(database).await?;
    let result = match command {
        CasesCommand::List(a) => list(&store, a).await,
        CasesCommand::Show(a) => show(&store, a, trust.as_ref()).await,
        CasesCommand::Set(a) => set(&store, a).await,
        CasesCommand::Stamp(a) => match &tsa {
            Some(tsa) => stamp(&store, a, tsa).await,
            None => unreachable!("a stamp command has its tsa"),
        },
        CasesCommand::Evidence(a) => evidence(&store, a).await,
    };
    store.close().await;
    result
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
    if args.json {
        outln!("{}", serde_json::to_string(&cases)?);
        return Ok(());
    }
    if cases.is_empty() {
        outln!("no cases (crawl suspect sites with `copyhound crawl URL`)");
        return Ok(());
    }
    outln!("case\tstatus\tsite\twork\tchapters\tpages\texposure\tlast seen");
    for c in &cases {
        outln!(
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
        );
    }
    Ok(())
}

async fn evidence(store: &Store, args: EvidenceArgs) -> Result<()> {
    let package = match pipeline::write_package(store, args.id, &args.out, args.force).await {
        Err(e) if e.is_not_found() => {
            bail!("there is no case {}: see `copyhound cases list`", args.id)
        }
        other => {
            other.with_context(|| format!("while writing the evidence of case {}", args.id))?
        }
    };
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
    let dossier = pipeline::case_dossier(store, args.id, trust)
        .await
        .with_context(|| {
            format!(
                "while reading case {} (see `copyhound cases list`)",
                args.id
            )
        })?;
    if args.json {
        outln!("{}", serde_json::to_string(&dossier)?);
        return Ok(());
    }
    let pipeline::CaseDossier {
        view,
        history,
        recheck,
        timestamps: stamps,
    } = &dossier;
    let c = &view.case;
    outln!(
        "case {}: {} copies work {} «{}» — {}",
        c.id,
        c.site,
        c.work_id,
        c.work_title,
        c.status
    );
    outln!(
        "first seen {}, last seen {}; {} of {} chapters ({:.1}%) on {} pages",
        c.first_seen_at.to_rfc3339(),
        c.last_seen_at.to_rfc3339(),
        c.chapters_matched,
        c.work_chapters,
        c.exposure * 100.0,
        c.pages
    );
    outln!("\nchapters:");
    for ch in &view.chapters {
        outln!(
            "  {} «{}»: coverage {:.2} over {} page(s); best {} (score {:.2}, coverage {:.2})",
            ch.chapter_index,
            ch.chapter_title,
            ch.coverage,
            ch.pages.len(),
            ch.best.url,
            ch.best.score,
            ch.best.coverage
        );
    }
    outln!("\npages:");
    for p in &view.pages {
        let chapters: Vec<String> = p.chapters.iter().map(u32::to_string).collect();
        outln!(
            "  {} (chapters {}; seen {} – {})",
            p.url,
            chapters.join(", "),
            p.first_seen.format("%Y-%m-%d"),
            p.last_seen.format("%Y-%m-%d")
        );
    }
    if let Some(r) = recheck {
        print_recheck(r)?;
    }
    outln!("\npassages (page bytes = chapter bytes):");
    for m in &view.matches {
        outln!(
            "  {} [sha256 {}] chapter {}: {}",
            m.url,
            m.snapshot_sha256,
            m.chapter_index,
            m.passages
        );
        // A page whose text a script wrote (or fetched) says so: its markup alone does not
        // show the copy.
        let text = match store.page_text(m.snapshot_id).await {
            Ok(text) => Some(text),
            Err(store::Error::NotFound { .. }) => None,
            Err(e) => return Err(e).context("while reading a page text"),
        };
        if let Some(text) = text
            && let Some(said) = pipeline::check::source_note(&text.text_source)
        {
            match text.text_snapshot {
                Some(endpoint) => outln!("    {said} (snapshot {endpoint})"),
                None => outln!("    {said}"),
            }
        }
    }
    outln!("\ntimestamps (RFC 3161):");
    print_timestamps(view, stamps)?;
    outln!("\nhistory:");
    for h in history {
        outln!(
            "  {} {} {}{}",
            h.at.to_rfc3339(),
            h.actor,
            h.action,
            h.note().map(|n| format!(": {n}")).unwrap_or_default()
        );
    }
    Ok(())
}

/// The re-checks since the case's notice: each copy's state, a copy still up with the days
/// since the notice.
pub(crate) fn print_recheck(r: &store::RecheckRecord) -> Result<()> {
    let now = chrono::Utc::now();
    let days = pipeline::rechecks::days_since_notice(r, now);
    let next = r.next_at.map_or_else(
        || "no more re-checks".to_owned(),
        |t| format!("next {}", t.format("%Y-%m-%d %H:%M UTC")),
    );
    outln!(
        "\nre-checks: notice sent {} ({days} days ago); {} done; {next}",
        r.sent_at.format("%Y-%m-%d %H:%M UTC"),
        r.checks
    );
    for c in &r.copies {
        let at = c.checked_at.format("%Y-%m-%d");
        match c.state {
            store::CopyState::Up => outln!(
                "  up       {} (checked {at}): still up {} days after the notice",
                c.url,
                pipeline::rechecks::days_since_notice(r, c.checked_at)
            ),
            store::CopyState::Removed => outln!(
                "  removed  {} since {}: {}{}",
                c.url,
                c.removed_at.unwrap_or(c.checked_at).format("%Y-%m-%d"),
                c.reason,
                c.removed_snapshot
                    .map(|s| format!(" (snapshot {s})"))
                    .unwrap_or_default()
            ),
            store::CopyState::Unknown => {
                outln!("  unknown  {} (checked {at}): {}", c.url, c.reason);
            }
        }
    }
    Ok(())
}

/// Each snapshot of the case with its tokens, verified, or "not stamped".
fn print_timestamps(
    view: &pipeline::CaseView,
    stamps: &[pipeline::SnapshotTimestamp],
) -> Result<()> {
    for (id, url) in view.snapshots() {
        let mine: Vec<_> = stamps.iter().filter(|t| t.snapshot == id).collect();
        if mine.is_empty() {
            outln!(
                "  snapshot {id} {url}: not stamped (copyhound cases stamp {})",
                view.case.id
            );
        }
        for t in mine {
            let verdict = match &t.verification {
                pipeline::Verification::Valid { chained: true, .. } => {
                    "verified, signer chains to the trusted ca".to_owned()
                }
                pipeline::Verification::Valid { signer, .. } => format!(
                    "signature verified; signer {signer} not checked against a ca \
                     (set evidence.timestamp.ca_certificates)"
                ),
                pipeline::Verification::Invalid { reason } => format!("NOT VALID: {reason}"),
            };
            outln!(
                "  snapshot {id} {url}: stamped {} by {} — {verdict}",
                t.gen_time.to_rfc3339(),
                t.tsa
            );
        }
    }
    Ok(())
}

async fn stamp(store: &Store, args: StampArgs, tsa: &timestamp::Tsa) -> Result<()> {
    let done = pipeline::stamp_case(store, tsa, args.id)
        .await
        .with_context(|| {
            format!(
                "while stamping case {} (see `copyhound cases list`)",
                args.id
            )
        })?;
    for (snapshot, at) in &done.stamped {
        outln!(
            "snapshot {snapshot}: stamped {} by {}",
            at.to_rfc3339(),
            tsa.url()
        );
    }
    for (snapshot, why) in &done.failed {
        eprintln!("snapshot {snapshot}: not stamped: {why}");
    }
    outln!(
        "case {}: {} snapshot(s) stamped, {} failed",
        args.id,
        done.stamped.len(),
        done.failed.len()
    );
    if !done.failed.is_empty() {
        bail!(
            "{} snapshot(s) of case {} could not be stamped",
            done.failed.len(),
            args.id
        );
    }
    Ok(())
}

async fn set(store: &Store, args: SetArgs) -> Result<()> {
    let case = store
        .set_case_status(args.id, args.status, "cli", args.note.as_deref())
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
pub async fn licensed(command: LicensedCommand, database: &str) -> Result<()> {
    let store = super::open_store(database).await?;
    let result = licensed_on(&store, command).await;
    store.close().await;
    result
}

async fn licensed_on(store: &Store, command: LicensedCommand) -> Result<()> {
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
            if json {
                let rows: Vec<serde_json::Value> = domains
                    .iter()
                    .map(|d| {
                        serde_json::json!({"domain": d.domain, "work_id": d.work_id,
                            "work_title": d.work_title, "note": d.note,
                            "created_at": d.created_at})
                    })
                    .collect();
                outln!("{}", serde_json::Value::Array(rows));
            } else if domains.is_empty() {
                outln!("no licensed domains");
            } else {
                for d in &domains {
                    outln!(
                        "{}\t{}\t{}",
                        d.domain,
                        match (&d.work_id, &d.work_title) {
                            (Some(w), Some(t)) => format!("work {w} «{t}»"),
                            (Some(w), None) => format!("work {w}"),
                            _ => "every work".to_owned(),
                        },
                        d.note.as_deref().unwrap_or("")
                    );
                }
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
