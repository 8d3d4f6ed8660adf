//! `copyhound cases list|show|set|evidence` (what the crawls found, per site and work, and
//! its evidence package) and `copyhound licensed add|list|remove` (domains whose copies are
//! allowed).

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use store::{
    CaseFilter, CaseId, CaseReads, CaseStatus, CaseWrites, LicensedDomains, Store, WorkId,
};

use super::outln;

/// `cases` subcommands.
#[derive(Debug, Subcommand)]
pub enum CasesCommand {
    /// List cases, most recently seen first.
    List(ListArgs),
    /// One case: its chapters with their combined coverage, pages and passages.
    Show(ShowArgs),
    /// Move a case to another status (new, confirmed, notice_sent, removed, dismissed).
    Set(SetArgs),
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
pub async fn run(command: CasesCommand, database: &str) -> Result<()> {
    let store = super::open_store(database).await?;
    let result = match command {
        CasesCommand::List(a) => list(&store, a).await,
        CasesCommand::Show(a) => show(&store, a).await,
        CasesCommand::Set(a) => set(&store, a).await,
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
    // Timestamp tokens join the package once the timestamping stage keeps them.
    let tokens: &[pipeline::TimestampToken] = &[];
    let package = match pipeline::write_package(store, args.id, &args.out, args.force, tokens).await
    {
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

async fn show(store: &Store, args: ShowArgs) -> Result<()> {
    let view = pipeline::case_view(store, args.id).await.with_context(|| {
        format!(
            "while reading case {} (see `copyhound cases list`)",
            args.id
        )
    })?;
    let history = store.case_history(args.id).await?;
    if args.json {
        let mut value = serde_json::to_value(&view)?;
        value["history"] = serde_json::to_value(&history)?;
        outln!("{value}");
        return Ok(());
    }
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
    outln!("\npassages (page bytes = chapter bytes):");
    for m in &view.matches {
        outln!(
            "  {} [sha256 {}] chapter {}: {}",
            m.url,
            m.snapshot_sha256,
            m.chapter_index,
            m.passages
        );
    }
    outln!("\nhistory:");
    for h in &history {
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
