//! `copyhound works ...`: register the works under protection and look at them.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use import::{ImportEvent, ImportOptions, ImportReport, ImportSettings, Importer, SplitSettings};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use store::{Page, Store, WorkDeletion, WorkFilter, WorkId, WorkReads, WorkUpdate, WorkWrites};

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
pub async fn run(command: WorksCommand, database: &str, settings: &Settings) -> Result<()> {
    let store = super::open_store(database).await?;
    let result = match command {
        WorksCommand::Import(args) => import(&store, args, settings).await,
        WorksCommand::List(args) => list(&store, args).await,
        WorksCommand::Show(args) => show(&store, args).await,
        WorksCommand::Set(args) => set(&store, args).await,
        WorksCommand::Delete(args) => delete(&store, args).await,
        WorksCommand::Refingerprint(args) => refingerprint(&store, args, settings).await,
    };
    store.close().await;
    result
}

async fn import(store: &Store, args: ImportArgs, settings: &Settings) -> Result<()> {
    if args.title.is_some() && args.paths.len() > 1 {
        bail!(
            "--title names one work, but {} files were given: import them one at a time",
            args.paths.len()
        );
    }
    let mut split = SplitSettings::default();
    split.heading_patterns.extend(args.headings);
    // The configured fingerprint parameters: the matcher compares with the same ones.
    let importer = Importer::new(ImportSettings {
        split,
        fingerprint: settings.fingerprint.clone(),
        threads: args.threads,
        limits: settings.import.clone(),
    })
    .context("while setting up the importer")?;
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
                outln!("{}", describe(&report));
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

fn describe(r: &ImportReport) -> String {
    let encoding = r
        .encoding
        .as_deref()
        .map_or_else(String::new, |e| format!(", {e}"));
    if r.created {
        format!(
            "imported work {} «{}»: {} chapters, {} chars ({}{encoding}, {:.1} s)",
            r.work,
            r.title,
            r.chapters,
            r.chars,
            r.format.as_str(),
            r.elapsed.as_secs_f64()
        )
    } else {
        format!(
            "already imported: work {} has the same text as «{}»",
            r.work, r.title
        )
    }
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

/// One line of `works list --json`.
#[derive(Debug, Serialize)]
struct ListedWork {
    id: WorkId,
    title: String,
    author: Option<String>,
    chapters: u32,
    chars: u64,
}

async fn list(store: &Store, args: ListArgs) -> Result<()> {
    let works = store
        .works(&WorkFilter::All, Page::all())
        .await
        .context("while listing works")?;
    if args.json {
        let listed: Vec<ListedWork> = works
            .into_iter()
            .map(|w| ListedWork {
                id: w.id,
                title: w.title,
                author: w.author,
                chapters: w.chapters,
                chars: w.chars,
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(());
    }
    if works.is_empty() {
        outln!("no works yet: add one with `copyhound works import FILE`");
        return Ok(());
    }
    outln!(
        "{:>6}  {:>8}  {:>10}  TITLE / AUTHOR",
        "ID",
        "CHAPTERS",
        "CHARS"
    );
    for w in works {
        let author = w.author.map_or_else(String::new, |a| format!(" / {a}"));
        outln!(
            "{:>6}  {:>8}  {:>10}  {}{author}",
            w.id,
            w.chapters,
            w.chars,
            w.title
        );
    }
    Ok(())
}

async fn show(store: &Store, args: ShowArgs) -> Result<()> {
    let work = match store.work(args.id).await {
        Err(store::Error::NotFound { .. }) => {
            bail!("there is no work {}: see `copyhound works list`", args.id)
        }
        other => other.context("while reading the work")?,
    };
    let chapters = store
        .chapters(work.id)
        .await
        .context("while reading the chapters")?;
    if args.json {
        #[derive(Serialize)]
        struct Shown<'a> {
            #[serde(flatten)]
            work: &'a store::Work,
            chapter_list: &'a [store::ChapterInfo],
        }
        let shown = Shown {
            work: &work,
            chapter_list: &chapters,
        };
        outln!("{}", serde_json::to_string_pretty(&shown)?);
        return Ok(());
    }
    outln!("work {}: {}", work.id, work.title);
    if let Some(author) = &work.author {
        outln!("author:        {author}");
    }
    let source = [
        work.source_name.as_deref(),
        Some(work.source_format.as_str()),
        work.source_encoding.as_deref(),
    ];
    let source: Vec<&str> = source.into_iter().flatten().collect();
    outln!("source:        {}", source.join(", "));
    outln!(
        "registered:    {}",
        work.created_at.format("%Y-%m-%d %H:%M:%S UTC")
    );
    outln!("chapters:      {}", work.chapters);
    outln!("chars:         {}", work.chars);
    outln!("front matter:  {} chars", work.front_matter.chars().count());
    let hash: String = work
        .content_hash
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    outln!("content hash:  {hash}");
    outln!();
    outln!("{:>5}  {:>7}  TITLE", "#", "CHARS");
    for c in &chapters {
        outln!("{:>5}  {:>7}  {}", c.ordinal, c.chars, c.title);
    }
    Ok(())
}

/// The work for a message, or the message a missing work gets.
async fn existing_work(store: &Store, id: WorkId) -> Result<store::Work> {
    match store.work(id).await {
        Err(store::Error::NotFound { .. }) => {
            bail!("there is no work {id}: see `copyhound works list`")
        }
        other => Ok(other.context("while reading the work")?),
    }
}

/// `«title» / author`, or `«title»`.
fn label(title: &str, author: Option<&str>) -> String {
    match author {
        Some(author) => format!("«{title}» / {author}"),
        None => format!("«{title}» (no author)"),
    }
}

async fn set(store: &Store, args: SetArgs) -> Result<()> {
    let clean = |s: String| bounds::text::strip_controls(&s).into_owned();
    if let Some(title) = &args.title
        && clean(title.clone()).is_empty()
    {
        bail!("--title {title:?} is empty: give the work a title, e.g. --title 红楼梦");
    }
    let update = WorkUpdate {
        title: args.title.map(clean),
        author: args
            .author
            .map(|a| Some(clean(a)).filter(|a| !a.is_empty())),
    };
    let updated = match store.update_work(args.id, &update, ACTOR).await {
        Err(store::Error::NotFound { .. }) => {
            bail!("there is no work {}: see `copyhound works list`", args.id)
        }
        other => other.with_context(|| format!("while updating work {}", args.id))?,
    };
    let (before, after) = (&updated.before, &updated.after);
    if updated.changed() {
        outln!(
            "work {}: {} → {}",
            args.id,
            label(&before.title, before.author.as_deref()),
            label(&after.title, after.author.as_deref())
        );
    } else {
        outln!(
            "work {} unchanged: {}",
            args.id,
            label(&after.title, after.author.as_deref())
        );
    }
    Ok(())
}

async fn refingerprint(store: &Store, args: RefingerprintArgs, settings: &Settings) -> Result<()> {
    let importer = Importer::new(ImportSettings {
        split: SplitSettings::default(),
        fingerprint: settings.fingerprint.clone(),
        threads: args.threads,
        limits: settings.import.clone(),
    })
    .context("while setting up the fingerprinter")?;
    let ids = if args.all {
        let mut ids = Vec::new();
        let mut after = None;
        loop {
            let page = store
                .works(
                    &WorkFilter::All,
                    Page {
                        after,
                        limit: Some(500),
                    },
                )
                .await
                .context("while listing works")?;
            ids.extend(page.iter().map(|w| w.id));
            match page.last() {
                Some(last) if page.len() == 500 => after = Some(last.id),
                _ => break,
            }
        }
        ids
    } else {
        args.ids
    };
    let (mut redone, mut current) = (0, 0);
    for id in ids {
        let work = existing_work(store, id).await?;
        let chapters = importer
            .refingerprint(store, id, args.force)
            .await
            .with_context(|| format!("while refingerprinting work {id}"))?;
        if chapters == 0 {
            current += 1;
            outln!(
                "work {id} {}: fingerprints are current (version {})",
                label(&work.title, work.author.as_deref()),
                fingerprint::NORMALIZER_VERSION
            );
        } else {
            redone += 1;
            outln!(
                "work {id} {}: {chapters} chapters fingerprinted again (version {})",
                label(&work.title, work.author.as_deref()),
                fingerprint::NORMALIZER_VERSION
            );
        }
    }
    outln!("{redone} works refingerprinted, {current} already current");
    Ok(())
}

async fn delete(store: &Store, args: DeleteArgs) -> Result<()> {
    let work = existing_work(store, args.id).await?;
    let outcome = match store.delete_work_checked(args.id, args.force, ACTOR).await {
        Err(store::Error::NotFound { .. }) => {
            bail!("there is no work {}: see `copyhound works list`", args.id)
        }
        other => other.with_context(|| format!("while deleting work {}", args.id))?,
    };
    match outcome {
        WorkDeletion::Refused { cases } => bail!(
            "work {} «{}» has {cases} case{}: deleting it deletes {} with {} matches and \
             notices; to do that, run `copyhound works delete {} --force`",
            args.id,
            work.title,
            if cases == 1 { "" } else { "s" },
            if cases == 1 { "it" } else { "them" },
            if cases == 1 { "its" } else { "their" },
            args.id
        ),
        WorkDeletion::Deleted { work, cases } => {
            let cases = match cases {
                0 => String::new(),
                1 => " and its 1 case".to_owned(),
                n => format!(" and its {n} cases"),
            };
            outln!(
                "deleted work {} {}{cases}",
                args.id,
                label(&work.title, work.author.as_deref())
            );
        }
    }
    Ok(())
}
