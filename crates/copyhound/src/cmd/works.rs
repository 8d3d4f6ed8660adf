//! `copyhound works ...`: register the works under protection and look at them.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use import::{ImportEvent, ImportOptions};
use indicatif::{ProgressBar, ProgressStyle};
use pipeline::works;
use store::{Store, WorkId};

use super::outln;
use settings::Settings;

/// What to do with works.
#[derive(Debug, Subcommand)]
pub enum WorksCommand {
    /// Import works from TXT (UTF-8, GBK/GB18030, Big5: detected), EPUB or HTML files.
    Import(ImportArgs),
    /// List the registered works.
    List(ListArgs),
    /// Show one work and its chapters.
    Show(ShowArgs),
    /// Change a work's title or author (recorded in the audit log).
    Set(SetArgs),
    /// Delete a work with its chapters and fingerprints (refused while cases refer to it,
    /// unless --force).
    Delete(DeleteArgs),
    /// Fingerprint stored works again from their stored texts, after an upgrade that
    /// changed normalisation (the index reads only this build's fingerprint version): no
    /// re-import, and running workers pick the new fingerprints up.
    Refingerprint(RefingerprintArgs),
}

/// Options of `works refingerprint`.
#[derive(Debug, Args)]
pub struct RefingerprintArgs {
    /// The works (see `works list`).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    ids: Vec<WorkId>,
    /// Every work.
    #[arg(long)]
    all: bool,
    /// Fingerprint works whose fingerprints are already of this build's version too.
    #[arg(long)]
    force: bool,
    /// Threads that fingerprint chapters (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

/// Options of `works import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import, one work each.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Title (default: the file's stem). Only with a single PATH.
    #[arg(long)]
    title: Option<String>,
    /// Author (default: the EPUB's author, if any).
    #[arg(long)]
    author: Option<String>,
    /// Another chapter heading pattern (a regex on a trimmed line; may name groups `num`
    /// and `unit`), tried after the built-in Chinese and English ones. Repeatable.
    #[arg(long = "heading", value_name = "REGEX")]
    headings: Vec<String>,
    /// Threads that fingerprint chapters (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

/// Options of `works list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of {id, title, author, chapters, chars}.
    #[arg(long)]
    json: bool,
}

/// Options of `works show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The work's id (see `works list`).
    id: WorkId,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Options of `works set`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args(["title", "author"])))]
pub struct SetArgs {
    /// The work's id (see `works list`).
    id: WorkId,
    /// The new title.
    #[arg(long)]
    title: Option<String>,
    /// The new author; an empty one ("") removes it.
    #[arg(long)]
    author: Option<String>,
}

/// Options of `works delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The work's id (see `works list`).
    id: WorkId,
    /// Delete it even though cases refer to it: they are deleted with it, with their
    /// matches and notices.
    #[arg(long)]
    force: bool,
}

/// Who the audit log says made a change from the command line.
const ACTOR: &str = "cli";

/// Runs a `works` subcommand against the database at `database`.
pub async fn run(store: &Store, command: WorksCommand, settings: &Settings) -> Result<()> {
    match command {
        WorksCommand::Import(args) => import(store, args, settings).await,
        WorksCommand::List(args) => list(store, args).await,
        WorksCommand::Show(args) => show(store, args).await,
        WorksCommand::Set(args) => set(store, args).await,
        WorksCommand::Delete(args) => delete(store, args).await,
        WorksCommand::Refingerprint(args) => refingerprint(store, args, settings).await,
    }
}

async fn import(store: &Store, args: ImportArgs, settings: &Settings) -> Result<()> {
    if args.title.is_some() && args.paths.len() > 1 {
        bail!(
            "--title names one work, but {} files were given: import them one at a time",
            args.paths.len()
        );
    }
    let importer = settings.importer(args.threads, args.headings)?;
    let options = ImportOptions {
        title: args.title,
        author: args.author,
    };
    let mut failed = 0;
    for path in &args.paths {
        let progress = Progress::new(path);
        let outcome = importer
            .import_file(store, path, &options, &|e: &ImportEvent| progress.event(e))
            .await;
        progress.finish();
        match outcome {
            Ok(report) => {
                for warning in &report.warnings {
                    eprintln!("warning: {}: {warning}", path.display());
                }
                outln!("{report}");
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {}: {e}", path.display());
            }
        }
    }
    if failed > 0 {
        bail!("{failed} of {} files were not imported", args.paths.len());
    }
    Ok(())
}

/// A progress bar on a terminal, plain lines otherwise (both on stderr).
struct Progress {
    bar: Option<ProgressBar>,
    name: String,
}

impl Progress {
    fn new(path: &std::path::Path) -> Self {
        let name = path.display().to_string();
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner().with_message(format!("reading {name}"));
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        Progress { bar, name }
    }

    fn event(&self, event: &ImportEvent) {
        let Some(bar) = &self.bar else {
            match event {
                ImportEvent::Split { chapters, chars } => {
                    eprintln!("{}: {chapters} chapters, {chars} chars", self.name);
                }
                ImportEvent::Storing => eprintln!("{}: storing", self.name),
                ImportEvent::AlreadyStored(_) | ImportEvent::Fingerprinted { .. } => {}
            }
            return;
        };
        match event {
            ImportEvent::Split { chapters, .. } => {
                bar.set_style(
                    ProgressStyle::with_template(
                        "{msg} [{bar:30}] {pos}/{len} chapters ({elapsed})",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                );
                bar.set_length(*chapters as u64);
                bar.set_message(format!("fingerprinting {}", self.name));
            }
            ImportEvent::Fingerprinted { done, .. } => bar.set_position(*done as u64),
            ImportEvent::Storing => bar.set_message(format!("storing {}", self.name)),
            ImportEvent::AlreadyStored(_) => {}
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

async fn list(store: &Store, args: ListArgs) -> Result<()> {
    let table = works::work_table(store).await?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&table)?);
    } else {
        outln!("{}", table.to_string().trim_end());
    }
    Ok(())
}

/// "there is no work ID", when a pipeline error says the work does not exist.
fn no_work(id: WorkId) -> impl FnOnce(jobs::Error) -> anyhow::Error {
    super::or_missing(move || format!("there is no work {id}: see `copyhound works list`"))
}

async fn show(store: &Store, args: ShowArgs) -> Result<()> {
    let sheet = works::work_sheet(store, args.id)
        .await
        .map_err(no_work(args.id))?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&sheet)?);
    } else {
        outln!("{}", sheet.to_string().trim_end());
    }
    Ok(())
}

async fn set(store: &Store, args: SetArgs) -> Result<()> {
    let edit = works::WorkEdit {
        title: args.title,
        author: args.author,
    };
    let edited = works::edit_work(store, args.id, edit, ACTOR)
        .await
        .map_err(no_work(args.id))?;
    outln!("{edited}");
    Ok(())
}

async fn refingerprint(store: &Store, args: RefingerprintArgs, settings: &Settings) -> Result<()> {
    let importer = settings.importer(args.threads, Vec::new())?;
    let ids = if args.all {
        works::all_work_ids(store).await?
    } else {
        args.ids
    };
    let (mut redone, mut current) = (0, 0);
    for id in ids {
        let done = works::refingerprint_work(store, &importer, id, args.force)
            .await
            .map_err(no_work(id))?;
        if done.chapters == 0 {
            current += 1;
        } else {
            redone += 1;
        }
        outln!("{done}");
    }
    outln!("{redone} works refingerprinted, {current} already current");
    Ok(())
}

async fn delete(store: &Store, args: DeleteArgs) -> Result<()> {
    let done = works::delete_work(store, args.id, args.force, ACTOR)
        .await
        .map_err(no_work(args.id))?;
    outln!("{done}");
    Ok(())
}
