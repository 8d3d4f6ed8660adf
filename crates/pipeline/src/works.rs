//! Registered works as people read and change them: a listing, one work's sheet, a new
//! title or author, deletion, and fingerprints made again after an upgrade. The CLI prints
//! these; the admin UI and the API call the same functions.

use std::fmt;

use import::Importer;
use jobs::{Error, Result, store_err};
use serde::Serialize;
use store::{
    ChapterInfo, Page, Store, Work, WorkDeletion, WorkFilter, WorkId, WorkReads, WorkUpdate,
    WorkWrites,
};

/// The registered works, as `works list` shows them (a table, or a hint when there are
/// none); serialised, one object per work.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct WorkTable(pub Vec<ListedWork>);

/// One work of a [`WorkTable`].
#[derive(Debug, Serialize)]
pub struct ListedWork {
    /// The work.
    pub id: WorkId,
    /// Its title.
    pub title: String,
    /// Its author, when known.
    pub author: Option<String>,
    /// Chapters registered.
    pub chapters: u32,
    /// Characters in them.
    pub chars: u64,
}

/// Every registered work, by id.
pub async fn work_table(store: &Store) -> Result<WorkTable> {
    let works = store
        .works(&WorkFilter::All, Page::all())
        .await
        .map_err(store_err("listing works"))?;
    Ok(WorkTable(
        works
            .into_iter()
            .map(|w| ListedWork {
                id: w.id,
                title: w.title,
                author: w.author,
                chapters: w.chapters,
                chars: w.chars,
            })
            .collect(),
    ))
}

impl fmt::Display for WorkTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return writeln!(
                f,
                "no works yet: add one with `copyhound works import FILE`"
            );
        }
        writeln!(
            f,
            "{:>6}  {:>8}  {:>10}  TITLE / AUTHOR",
            "ID", "CHAPTERS", "CHARS"
        )?;
        for w in &self.0 {
            let author = w
                .author
                .as_deref()
                .map_or_else(String::new, |a| format!(" / {a}"));
            writeln!(
                f,
                "{:>6}  {:>8}  {:>10}  {}{author}",
                w.id, w.chapters, w.chars, w.title
            )?;
        }
        Ok(())
    }
}

/// One work with its chapters, as `works show` prints it.
#[derive(Debug, Serialize)]
pub struct WorkSheet {
    /// The work.
    #[serde(flatten)]
    pub work: Work,
    /// Its chapters, in order.
    pub chapter_list: Vec<ChapterInfo>,
}

/// The work `id` with its chapters ([`Error::is_not_found`] when there is none).
pub async fn work_sheet(store: &Store, id: WorkId) -> Result<WorkSheet> {
    let work = store
        .work(id)
        .await
        .map_err(store_err("reading the work"))?;
    let chapter_list = store
        .chapters(id)
        .await
        .map_err(store_err("reading the chapters"))?;
    Ok(WorkSheet { work, chapter_list })
}

impl fmt::Display for WorkSheet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let work = &self.work;
        writeln!(f, "work {}: {}", work.id, work.title)?;
        if let Some(author) = &work.author {
            writeln!(f, "author:        {author}")?;
        }
        let source = [
            work.source_name.as_deref(),
            Some(work.source_format.as_str()),
            work.source_encoding.as_deref(),
        ];
        let source: Vec<&str> = source.into_iter().flatten().collect();
        writeln!(f, "source:        {}", source.join(", "))?;
        writeln!(
            f,
            "registered:    {}",
            work.created_at.format("%Y-%m-%d %H:%M:%S UTC")
        )?;
        writeln!(f, "chapters:      {}", work.chapters)?;
        writeln!(f, "chars:         {}", work.chars)?;
        writeln!(
            f,
            "front matter:  {} chars",
            work.front_matter.chars().count()
        )?;
        let hash: String = work
            .content_hash
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        writeln!(f, "content hash:  {hash}")?;
        writeln!(f)?;
        writeln!(f, "{:>5}  {:>7}  TITLE", "#", "CHARS")?;
        for c in &self.chapter_list {
            writeln!(f, "{:>5}  {:>7}  {}", c.ordinal, c.chars, c.title)?;
        }
        Ok(())
    }
}

/// `«title» / author`, or `«title» (no author)`: a work named in a message.
pub fn work_label(title: &str, author: Option<&str>) -> String {
    match author {
        Some(author) => format!("«{title}» / {author}"),
        None => format!("«{title}» (no author)"),
    }
}

/// A new title or author given by hand; `author: Some("")` removes the author. Control
/// characters are dropped; an empty title is refused.
#[derive(Debug, Default, Clone)]
pub struct WorkEdit {
    /// The new title.
    pub title: Option<String>,
    /// The new author ("" removes it).
    pub author: Option<String>,
}

/// What [`edit_work`] did, as `work N: before → after` (or `unchanged`).
#[derive(Debug)]
pub struct WorkEdited {
    /// The work.
    pub id: WorkId,
    /// The work before and after.
    pub update: store::WorkUpdated,
}

/// Changes a work's title or author, recorded in the audit log as `actor`'s.
pub async fn edit_work(
    store: &Store,
    id: WorkId,
    edit: WorkEdit,
    actor: &str,
) -> Result<WorkEdited> {
    let clean = |s: String| bounds::text::strip_controls(&s).into_owned();
    if let Some(title) = &edit.title
        && clean(title.clone()).is_empty()
    {
        return Err(Error::Refused(format!(
            "--title {title:?} is empty: give the work a title, e.g. --title 红楼梦"
        )));
    }
    let update = WorkUpdate {
        title: edit.title.map(clean),
        author: edit
            .author
            .map(|a| Some(clean(a)).filter(|a| !a.is_empty())),
    };
    let update = store
        .update_work(id, &update, actor)
        .await
        .map_err(store_err("updating the work"))?;
    Ok(WorkEdited { id, update })
}

impl fmt::Display for WorkEdited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (before, after) = (&self.update.before, &self.update.after);
        let after_label = work_label(&after.title, after.author.as_deref());
        if self.update.changed() {
            let before_label = work_label(&before.title, before.author.as_deref());
            write!(f, "work {}: {before_label} → {after_label}", self.id)
        } else {
            write!(f, "work {} unchanged: {after_label}", self.id)
        }
    }
}

/// Deletes a work; while cases refer to it, only with `force` (they go with it). The
/// refusal says what `--force` would delete.
pub async fn delete_work(store: &Store, id: WorkId, force: bool, actor: &str) -> Result<String> {
    let work = store
        .work(id)
        .await
        .map_err(store_err("reading the work"))?;
    let outcome = store
        .delete_work_checked(id, force, actor)
        .await
        .map_err(store_err("deleting the work"))?;
    let plural = |n: u64, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    match outcome {
        WorkDeletion::Refused { cases } => Err(Error::Refused(format!(
            "work {id} «{}» has {cases} case{}: deleting it deletes {} with {} matches and \
             notices; to do that, run `copyhound works delete {id} --force`",
            work.title,
            plural(cases, "", "s"),
            plural(cases, "it", "them"),
            plural(cases, "its", "their"),
        ))),
        WorkDeletion::Deleted { work, cases } => {
            let cases = match cases {
                0 => String::new(),
                1 => " and its 1 case".to_owned(),
                n => format!(" and its {n} cases"),
            };
            Ok(format!(
                "deleted work {id} {}{cases}",
                work_label(&work.title, work.author.as_deref())
            ))
        }
    }
}

/// The id of every registered work, read a page at a time.
pub async fn all_work_ids(store: &Store) -> Result<Vec<WorkId>> {
    const PAGE: u32 = 500;
    let mut ids = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .works(
                &WorkFilter::All,
                Page {
                    after,
                    limit: Some(PAGE),
                },
            )
            .await
            .map_err(store_err("listing works"))?;
        ids.extend(page.iter().map(|w| w.id));
        match page.last() {
            Some(last) if page.len() == PAGE as usize => after = Some(last.id),
            _ => break,
        }
    }
    Ok(ids)
}

/// What [`refingerprint_work`] did to one work.
#[derive(Debug)]
pub struct Refingerprinted {
    /// The work.
    pub id: WorkId,
    /// Its title and author, as [`work_label`] writes them.
    pub label: String,
    /// Chapters fingerprinted again; 0 when the fingerprints were current.
    pub chapters: usize,
}

/// Fingerprints the work `id` again from its stored text (when its fingerprints are
/// already of this build's version, only with `force`).
pub async fn refingerprint_work(
    store: &Store,
    importer: &Importer,
    id: WorkId,
    force: bool,
) -> Result<Refingerprinted> {
    let work = store
        .work(id)
        .await
        .map_err(store_err("reading the work"))?;
    let chapters = importer
        .refingerprint(store, id, force)
        .await
        .map_err(Error::Import)?;
    Ok(Refingerprinted {
        id,
        label: work_label(&work.title, work.author.as_deref()),
        chapters,
    })
}

impl fmt::Display for Refingerprinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (id, label, version) = (self.id, &self.label, fingerprint::NORMALIZER_VERSION);
        match self.chapters {
            0 => write!(
                f,
                "work {id} {label}: fingerprints are current (version {version})"
            ),
            n => write!(
                f,
                "work {id} {label}: {n} chapters fingerprinted again (version {version})"
            ),
        }
    }
}
