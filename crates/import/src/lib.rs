//! Registering works: a file a rights holder hands in becomes a work in the store, cut into
//! chapters, each fingerprinted.
//!
//! This is the first stage of copyhound's flow (`register work → fingerprint → store`); the
//! CLI (`copyhound works import`), the admin UI and the API all call [`Importer`]. It has no
//! database or HTTP of its own: [`Importer::import_file`] and [`Importer::import_bytes`] take
//! any `WorkReads + WorkWrites`. It may use `ingest`, `fingerprint`, `store` and `bounds`.
//!
//! # Steps
//!
//! 1. **Format**: EPUB (zip with an EPUB mimetype, or `.epub`; [`EpubLimits`] checked while
//!    inflating, then rbook, Apache-2.0, where epub-rs is GPL-3.0), HTML (`.html`/`.htm`/
//!    `.xhtml` or a document that starts like one: [`mod@html`]), otherwise plain text.
//! 2. **Decoding** ([`decode`]): `ingest::charset::decode`, the crawler's decoder too; then
//!    the importer's refusals: NUL bytes, or more than 1% control or replacement characters
//!    in the encoding found (named in the message).
//! 3. **Splitting** ([`split`]): chapters on their headings, a table of contents at the top
//!    and the front matter kept apart. A work whose chapters hold no letter or digit is
//!    refused ([`Error::NoText`]).
//! 4. **De-duplication**: the SHA-256 of the text without whitespace ([`content_hash`]) finds
//!    a work already stored (the same novel in another encoding or with other line breaks);
//!    then nothing is fingerprinted or written.
//! 5. **Fingerprinting**: every chapter, on all cores, longest first.
//! 6. **Storing**: the work, its chapters and fingerprints through `store::WorkWrites`,
//!    which keeps the work hidden until all of it is written.
//!
//! [`ImportEvent`]s report progress; [`ImportReport::warnings`] lists what is likely a
//! mistake but imported anyway ([`ImportWarning`]: little text, one very long chapter, an
//! anti-bot challenge page by `ingest::challenge`). [`Importer::refingerprint`] fingerprints
//! a stored work again from its stored chapter texts (`works refingerprint`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use import::{ImportOptions, ImportSettings, Importer};
//! use store::{Store, StoreSettings};
//!
//! let store = Store::open("sqlite://data/copyhound.db", &StoreSettings::default()).await?;
//! let importer = Importer::new(ImportSettings::default())?;
//! let report = importer
//!     .import_file(&store, "红楼梦.txt".as_ref(), &ImportOptions::default(), &())
//!     .await?;
//! println!("work {}: {} chapters", report.work, report.chapters);
//! # Ok(()) }
//! ```

pub mod decode;
mod epub;
pub mod html;
pub mod split;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fingerprint::{ChapterFingerprint, FingerprintSettings, Fingerprinter};
use sha2::{Digest, Sha256};
use store::{
    NewChapter, NewFingerprint, NewWork, Posting, SourceFormat, WorkId, WorkInsert, WorkReads,
    WorkWrites,
};
use tracing::{info, instrument};

pub use epub::EpubLimits;
pub use ingest::html::HtmlLimits;
pub use split::{SplitSettings, Splitter};

/// What can go wrong importing a work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Nothing but whitespace in it.
    #[error("the file is empty")]
    Empty,
    /// Chapter headings, punctuation or markup, but not one letter or digit of text in any
    /// chapter: not a work (fingerprints of nothing would match nothing, or everything).
    #[error(
        "no chapter has text: found {headings} heading{} and 0 characters of text{}",
        if *headings == 1 { "" } else { "s" },
        if *symbols == 0 { String::new() } else { format!(" (only {symbols} punctuation marks and symbols)") }
    )]
    NoText {
        /// Heading lines found (table-of-contents entries included).
        headings: usize,
        /// Non-whitespace characters in the chapters that are not letters or digits.
        symbols: usize,
    },
    /// Not text in any encoding.
    #[error("the file is not text: {0}")]
    Binary(String),
    /// Larger than [`ImportLimits::max_bytes`].
    #[error("the file has {bytes} bytes, more than the limit of {max} (ImportSettings::max_bytes)")]
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// A zip archive that is not a readable EPUB.
    #[error("cannot read the epub: {0}")]
    Epub(String),
    /// An EPUB over one of [`EpubLimits`] (entries, inflated size, compression ratio).
    #[error("the epub is refused: {0}")]
    EpubLimit(String),
    /// HTML over one of the [`HtmlLimits`] (elements).
    #[error("the html is refused: {0}")]
    TooComplex(String),
    /// A heading pattern that does not compile.
    #[error("heading pattern {pattern:?} does not compile: {reason}")]
    InvalidPattern {
        /// The pattern.
        pattern: String,
        /// The regex error.
        reason: String,
    },
    /// A setting is out of range (the key is relative to [`ImportSettings`]).
    #[error("invalid import settings: {0}")]
    OutOfRange(#[from] bounds::OutOfRange),
    /// The fingerprinter could not be built (its message says why).
    #[error("{0}")]
    Settings(String),
    /// The store refused or failed.
    #[error("storing the work failed: {0}")]
    Store(store::Error),
}

/// The import crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How works are imported. The defaults suit a novel on a desktop (threads 0: one per core).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportSettings {
    /// How chapters are found.
    pub split: SplitSettings,
    /// How chapters are fingerprinted.
    pub fingerprint: FingerprintSettings,
    /// Threads that fingerprint chapters; 0 for one per core.
    pub threads: usize,
    /// What one file may cost: size, HTML shape, EPUB archive.
    pub limits: ImportLimits,
}

/// What one file may cost to import, as an operator configures it (`[import]`): its size,
/// its HTML's shape, its EPUB's archive. Everything past a bound is refused with a message
/// naming it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ImportLimits {
    /// Largest file accepted, in bytes (the whole file is held in memory while imported).
    pub max_bytes: u64,
    /// Bounds on parsing HTML and XHTML (also each EPUB document).
    pub html: HtmlLimits,
    /// Bounds on an EPUB archive, checked while inflating.
    pub epub: EpubLimits,
}

impl Default for ImportLimits {
    fn default() -> Self {
        ImportLimits {
            max_bytes: 256 * 1024 * 1024,
            html: HtmlLimits::default(),
            epub: EpubLimits::default(),
        }
    }
}

impl ImportLimits {
    /// Checks every bound; keys are relative to `[import]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad bound and what is allowed.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        bounds::at_least("max_bytes", self.max_bytes, 1)?;
        self.html.validate().map_err(|e| e.in_section("html"))?;
        self.epub.validate().map_err(|e| e.in_section("epub"))
    }
}

impl ImportSettings {
    /// Checks every value, the fingerprint settings included; keys are relative to the
    /// struct (`split.toc_min_entries`, `fingerprint.winnow_w`). [`Importer::new`] calls it.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting and what is allowed.
    pub fn validate(&self) -> Result<(), bounds::OutOfRange> {
        self.limits.validate()?;
        self.split.validate().map_err(|e| e.in_section("split"))?;
        self.fingerprint
            .validate()
            .map_err(|e| e.in_section("fingerprint"))
    }
}

/// What the caller knows about the work better than the file does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Title; default: the file's stem.
    pub title: Option<String>,
    /// Author; default: the EPUB's first creator, if any.
    pub author: Option<String>,
}

/// How an import went.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImportReport {
    /// The work in the store.
    pub work: WorkId,
    /// False when the same text was already stored (nothing was written).
    pub created: bool,
    /// Title of the stored work (for an existing work: the title given to this import).
    pub title: String,
    /// The format read.
    pub format: SourceFormat,
    /// The encoding decoded from (text and HTML).
    pub encoding: Option<String>,
    /// Malformed byte sequences (a stray byte, a file cut inside a character) decoded as
    /// U+FFFD; the rest of the text keeps its encoding.
    pub replaced: usize,
    /// Bytes of input.
    pub bytes: u64,
    /// Chapters found.
    pub chapters: usize,
    /// Characters in the chapters.
    pub chars: u64,
    /// Entries of a table of contents recognised at the top.
    pub toc_entries: usize,
    /// What about the input is likely a mistake (the import went ahead anyway).
    pub warnings: Vec<ImportWarning>,
    /// Wall time.
    pub elapsed: Duration,
}

/// One line: `imported work N «title»: C chapters, X chars (format, encoding, S s)`, or
/// `already imported: …` when the same text was stored before.
impl std::fmt::Display for ImportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.created {
            return write!(
                f,
                "already imported: work {} has the same text as «{}»",
                self.work, self.title
            );
        }
        let encoding = self
            .encoding
            .as_deref()
            .map_or_else(String::new, |e| format!(", {e}"));
        write!(
            f,
            "imported work {} «{}»: {} chapters, {} chars ({}{encoding}, {:.1} s)",
            self.work,
            self.title,
            self.chapters,
            self.chars,
            self.format.as_str(),
            self.elapsed.as_secs_f64()
        )
    }
}

/// Below this many characters of text (letters, digits and punctuation, whitespace not
/// counted) a work is likely not the whole work: a file cut short, a page saved before it
/// loaded. A short story has thousands.
pub const FEW_CHARS: usize = 200;

/// A work that is one chapter of more than this many characters (about a third of a short
/// novel) likely has chapters the splitter did not recognise.
pub const LONG_SINGLE_CHAPTER_CHARS: usize = 100_000;

/// Something about an imported file that is likely a mistake. The work is imported all the
/// same; the message says what to check or do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ImportWarning {
    /// Fewer than [`FEW_CHARS`] characters of text.
    FewChars {
        /// Characters of text in the chapters, whitespace not counted.
        chars: usize,
    },
    /// One chapter of more than [`LONG_SINGLE_CHAPTER_CHARS`] characters: no heading was
    /// recognised.
    NoHeadings {
        /// Characters in the one chapter.
        chars: usize,
    },
    /// An anti-bot challenge page (Cloudflare "Just a moment...", DDoS-Guard) rather than
    /// the work ([`ingest::challenge`]).
    Challenge,
}

impl std::fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportWarning::FewChars { chars } => write!(
                f,
                "only {chars} characters of text (fewer than {FEW_CHARS}): check that the \
                 file holds the whole work, not a page saved before it loaded or a file cut short"
            ),
            ImportWarning::NoHeadings { chars } => write!(
                f,
                "one chapter of {chars} characters: no chapter heading was recognised; if \
                 the work has chapters, give their heading pattern (`--heading REGEX`, or \
                 split.heading_patterns) and import it again"
            ),
            ImportWarning::Challenge => f.write_str(
                "this looks like an anti-bot challenge page (Cloudflare \"Just a moment...\", \
                 DDoS-Guard), not the work: save the page again once the check has passed, or \
                 import the text from another copy",
            ),
        }
    }
}

/// The warnings about a prepared work: a challenge page (in `document`, whose title is
/// `title`), else too little text; one long chapter.
fn warnings_for(
    document: &str,
    title: Option<&str>,
    chapters: &[split::SplitChapter],
) -> Vec<ImportWarning> {
    let mut warnings = Vec::new();
    let text_chars: usize = chapters
        .iter()
        .map(|c| c.body.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    if ingest::challenge::is_challenge(document, title, text_chars) {
        // A challenge page is short too; one warning says what it is.
        warnings.push(ImportWarning::Challenge);
    } else if text_chars < FEW_CHARS {
        warnings.push(ImportWarning::FewChars { chars: text_chars });
    }
    if let [only] = chapters {
        let chars = only.body.chars().count();
        if chars > LONG_SINGLE_CHAPTER_CHARS {
            warnings.push(ImportWarning::NoHeadings { chars });
        }
    }
    warnings
}

/// Steps of an import, reported as they happen (for a progress bar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportEvent {
    /// The input was decoded and split.
    Split {
        /// Chapters found.
        chapters: usize,
        /// Characters in them.
        chars: u64,
    },
    /// The same text is stored already: nothing more to do.
    AlreadyStored(WorkId),
    /// One more chapter is fingerprinted.
    Fingerprinted {
        /// Chapters done.
        done: usize,
        /// Chapters in all.
        total: usize,
    },
    /// The work is being written to the store.
    Storing,
}

/// Receives [`ImportEvent`]s, from several threads; `()` ignores them.
pub trait Progress: Send + Sync {
    /// One step happened.
    fn event(&self, event: &ImportEvent);
}

impl Progress for () {
    fn event(&self, _: &ImportEvent) {}
}

impl<F: Fn(&ImportEvent) + Send + Sync> Progress for F {
    fn event(&self, event: &ImportEvent) {
        self(event)
    }
}

/// A decoded and split work, ready to fingerprint.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The work as it will be stored, without fingerprints yet.
    pub title: String,
    /// Author, if known.
    pub author: Option<String>,
    /// See [`store::NewWork::content_hash`].
    pub content_hash: [u8; 32],
    /// The file name it came from.
    pub source_name: Option<String>,
    /// Its format.
    pub format: SourceFormat,
    /// Its encoding, for text and HTML.
    pub encoding: Option<String>,
    /// Malformed byte sequences replaced with U+FFFD while decoding.
    pub replaced: usize,
    /// Text before the first chapter.
    pub front_matter: String,
    /// Chapter titles and bodies.
    pub chapters: Vec<split::SplitChapter>,
    /// Entries of the table of contents found at the top.
    pub toc_entries: usize,
    /// What about the input is likely a mistake.
    pub warnings: Vec<ImportWarning>,
}

/// Imports works. Build once (it loads the segmentation dictionary) and share.
#[derive(Debug, Clone)]
pub struct Importer {
    fingerprinter: Arc<Fingerprinter>,
    splitter: Arc<Splitter>,
    threads: usize,
    limits: ImportLimits,
}

impl Importer {
    /// Builds an importer.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for settings [`ImportSettings::validate`] refuses,
    /// [`Error::InvalidPattern`] for a heading pattern that does not compile.
    pub fn new(settings: ImportSettings) -> Result<Self> {
        settings.validate()?;
        let fingerprinter =
            Fingerprinter::new(settings.fingerprint).map_err(|e| Error::Settings(e.to_string()))?;
        let threads = match settings.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Ok(Importer {
            fingerprinter: Arc::new(fingerprinter),
            splitter: Arc::new(Splitter::new(settings.split)?),
            threads,
            limits: settings.limits,
        })
    }

    /// Imports the file at `path`.
    ///
    /// # Errors
    /// [`Error::Read`] when the file cannot be read; see [`Importer::import_bytes`].
    pub async fn import_file<S>(
        &self,
        store: &S,
        path: &Path,
        options: &ImportOptions,
        progress: &dyn Progress,
    ) -> Result<ImportReport>
    where
        S: WorkReads + WorkWrites + Sync,
    {
        let read_error = |error| Error::Read {
            path: path.to_owned(),
            error,
        };
        let len = tokio::fs::metadata(path).await.map_err(read_error)?.len();
        if len > self.limits.max_bytes {
            return Err(Error::TooLarge {
                bytes: len,
                max: self.limits.max_bytes,
            });
        }
        let bytes = tokio::fs::read(path).await.map_err(read_error)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.import_bytes(store, &name, bytes, options, progress)
            .await
    }

    /// Imports a file's contents; `name` is its file name (the title defaults to its stem).
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::NoText`], [`Error::Binary`], [`Error::TooLarge`] or
    /// [`Error::Epub`] for input that is not a work; [`Error::Store`] when the store fails (nothing is stored then).
    #[instrument(skip_all, fields(name, bytes = bytes.len()))]
    pub async fn import_bytes<S>(
        &self,
        store: &S,
        name: &str,
        bytes: Vec<u8>,
        options: &ImportOptions,
        progress: &dyn Progress,
    ) -> Result<ImportReport>
    where
        S: WorkReads + WorkWrites + Sync,
    {
        let started = Instant::now();
        let byte_count = bytes.len() as u64;
        if byte_count > self.limits.max_bytes {
            return Err(Error::TooLarge {
                bytes: byte_count,
                max: self.limits.max_bytes,
            });
        }
        // Decoding, splitting and fingerprinting are CPU work: keep them off the runtime.
        let this = self.clone();
        let (name_owned, options_owned) = (name.to_owned(), options.clone());
        let prepared =
            tokio::task::spawn_blocking(move || this.prepare(&name_owned, &bytes, &options_owned))
                .await
                .expect("prepare does not panic")?;
        let chars: u64 = prepared
            .chapters
            .iter()
            .map(|c| c.body.chars().count() as u64)
            .sum();
        progress.event(&ImportEvent::Split {
            chapters: prepared.chapters.len(),
            chars,
        });
        let (title, format, encoding) = (
            prepared.title.clone(),
            prepared.format,
            prepared.encoding.clone(),
        );
        let (chapters, toc_entries) = (prepared.chapters.len(), prepared.toc_entries);
        let replaced = prepared.replaced;
        let warnings = prepared.warnings.clone();
        let report = |work, created| ImportReport {
            work,
            created,
            title,
            format,
            encoding,
            replaced,
            bytes: byte_count,
            chapters,
            chars,
            toc_entries,
            warnings,
            elapsed: started.elapsed(),
        };
        if let Some(existing) = store
            .work_by_content_hash(&prepared.content_hash)
            .await
            .map_err(Error::Store)?
        {
            progress.event(&ImportEvent::AlreadyStored(existing));
            info!(work = %existing, "already stored");
            return Ok(report(existing, false));
        }
        let work = self.fingerprint_work(prepared, progress).await;
        progress.event(&ImportEvent::Storing);
        let outcome = store.insert_work(&work).await.map_err(Error::Store)?;
        let (id, created) = match outcome {
            WorkInsert::Created(id) => (id, true),
            WorkInsert::Existing(id) => (id, false),
        };
        let report = report(id, created);
        info!(work = %id, created, chapters = report.chapters, chars, elapsed = ?report.elapsed, "imported");
        Ok(report)
    }

    /// Detects the format, decodes, splits and hashes: everything before fingerprinting.
    /// No I/O.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::NoText`], [`Error::Binary`] or [`Error::Epub`].
    pub fn prepare(&self, name: &str, bytes: &[u8], options: &ImportOptions) -> Result<Prepared> {
        let stem = Path::new(name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "untitled".to_owned());
        let format = detect_format(name, bytes);
        let mut replaced = 0;
        // What a challenge page would show itself in: the markup and its title, or for
        // text its first line.
        let mut markup = None;
        let (text, encoding, author, documents) = match format {
            SourceFormat::Txt => {
                let d = decode::decode(bytes)?;
                replaced = d.replaced;
                (d.text, Some(d.encoding), None, Vec::new())
            }
            SourceFormat::Html => {
                let d = decode::decode(bytes)?;
                replaced = d.replaced;
                let (page_title, text) = html::html_to_text(&d.text, &self.limits.html)?;
                markup = Some((d.text, page_title));
                (text, Some(d.encoding), None, Vec::new())
            }
            SourceFormat::Epub => {
                let e = epub::epub_to_text(bytes, &self.limits.epub, &self.limits.html)?;
                (e.documents.join("\n\n"), None, e.author, e.documents)
            }
        };
        if text.trim().is_empty() {
            // A text file of whitespace is empty; markup without text is a document with
            // nothing in it.
            return Err(match format {
                SourceFormat::Txt => Error::Empty,
                _ => Error::NoText {
                    headings: 0,
                    symbols: 0,
                },
            });
        }
        // A title or author from a file name, the API or an EPUB's metadata is shown in the
        // UI and printed by the CLI: kept without control characters or bidi overrides.
        let clean =
            |s: &str| Some(bounds::text::strip_controls(s).into_owned()).filter(|s| !s.is_empty());
        let title = options
            .title
            .as_deref()
            .and_then(clean)
            .or_else(|| clean(&stem))
            .unwrap_or_else(|| "untitled".to_owned());
        let mut split = self.splitter.split(&text);
        // An EPUB whose chapters carry no recognisable heading: one chapter per document.
        if documents.len() > 1 && split.chapters.len() == 1 && split.chapters[0].title.is_empty() {
            split.chapters = documents
                .iter()
                .map(|doc| {
                    let first = doc.lines().next().unwrap_or_default().trim();
                    let (title, body) = if first.chars().count() <= 40 {
                        (
                            first.to_owned(),
                            doc[doc.find('\n').unwrap_or(doc.len())..].trim(),
                        )
                    } else {
                        (String::new(), doc.trim())
                    };
                    split::SplitChapter {
                        title,
                        body: body.to_owned(),
                    }
                })
                .collect();
        }
        refuse_without_text(&split)?;
        let warnings = match &markup {
            Some((html, page_title)) => warnings_for(html, page_title.as_deref(), &split.chapters),
            None => warnings_for(&text, text.lines().next(), &split.chapters),
        };
        for chapter in &mut split.chapters {
            if chapter.title.is_empty() {
                chapter.title.clone_from(&title);
            }
        }
        Ok(Prepared {
            title,
            author: options
                .author
                .as_deref()
                .or(author.as_deref())
                .and_then(clean),
            content_hash: content_hash(&text),
            source_name: clean(name),
            format,
            encoding: encoding.map(str::to_owned),
            replaced,
            front_matter: split.front_matter,
            chapters: split.chapters,
            toc_entries: split.toc_entries,
            warnings,
        })
    }

    /// Fingerprints every chapter on the importer's threads.
    async fn fingerprint_work(&self, prepared: Prepared, progress: &dyn Progress) -> NewWork {
        let total = prepared.chapters.len();
        let done = Arc::new(AtomicUsize::new(0));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let this = self.clone();
        let counter = Arc::clone(&done);
        let task = tokio::task::spawn_blocking(move || {
            let bodies: Vec<&str> = prepared.chapters.iter().map(|c| c.body.as_str()).collect();
            let fingerprints = this.fingerprint_chapters(&bodies, &|| {
                let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
                let _ = tx.send(n);
            });
            (prepared, fingerprints)
        });
        while let Some(n) = rx.recv().await {
            progress.event(&ImportEvent::Fingerprinted { done: n, total });
        }
        let (prepared, fingerprints) = task.await.expect("fingerprinting does not panic");
        NewWork {
            title: prepared.title,
            author: prepared.author,
            content_hash: prepared.content_hash,
            source_name: prepared.source_name,
            source_format: prepared.format,
            source_encoding: prepared.encoding,
            front_matter: prepared.front_matter,
            chapters: prepared
                .chapters
                .into_iter()
                .zip(fingerprints)
                .map(|(c, fingerprint)| NewChapter {
                    title: c.title,
                    body: c.body,
                    fingerprint,
                })
                .collect(),
        }
    }

    /// Fingerprints chapters in parallel, longest first so that one long chapter does not
    /// finish alone at the end; results come back in chapter order.
    fn fingerprint_chapters(
        &self,
        chapters: &[&str],
        on_done: &(dyn Fn() + Sync),
    ) -> Vec<NewFingerprint> {
        let mut order: Vec<usize> = (0..chapters.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(chapters[i].len()));
        let next = AtomicUsize::new(0);
        let threads = self.threads.clamp(1, chapters.len().max(1));
        let mut results: Vec<Option<NewFingerprint>> = vec![None; chapters.len()];
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&i) = order.get(k) else {
                                return mine;
                            };
                            let fp = self.fingerprinter.fingerprint(chapters[i]);
                            mine.push((i, to_stored(&fp)));
                            on_done();
                        }
                    })
                })
                .collect();
            for w in workers {
                for (i, fp) in w.join().expect("fingerprinting does not panic") {
                    results[i] = Some(fp);
                }
            }
        });
        results
            .into_iter()
            .map(|fp| fp.expect("every chapter fingerprinted"))
            .collect()
    }
}

impl Importer {
    /// Fingerprints a stored work's chapters again, from their stored texts, with this build's
    /// normaliser, and replaces their fingerprints in the store (which logs the work as
    /// changed, so running indexes follow): a work imported before a
    /// [`fingerprint::NORMALIZER_VERSION`] change follows without a re-import. Unless `force`,
    /// a work whose every fingerprint is of this version is left alone. Returns the chapters
    /// fingerprinted (0 when left alone).
    ///
    /// # Errors
    /// [`Error::Store`] when the work is unknown or the store fails (nothing is changed then).
    #[instrument(skip_all, fields(work = %work))]
    pub async fn refingerprint<S>(&self, store: &S, work: WorkId, force: bool) -> Result<usize>
    where
        S: WorkReads + WorkWrites + store::IndexLoads + Sync,
    {
        if !force {
            let entries = store.work_index_entries(work).await.map_err(Error::Store)?;
            let chapters = store.chapters(work).await.map_err(Error::Store)?;
            let current = entries.len() == chapters.len()
                && entries
                    .iter()
                    .all(|e| e.normalizer_version == fingerprint::NORMALIZER_VERSION);
            if current {
                return Ok(0);
            }
        }
        let infos = store.chapters(work).await.map_err(Error::Store)?;
        if infos.is_empty() {
            // An unknown work lists no chapters: say which.
            store.work(work).await.map_err(Error::Store)?;
            return Ok(0);
        }
        let mut texts = Vec::with_capacity(infos.len());
        for info in &infos {
            texts.push(store.chapter(info.id).await.map_err(Error::Store)?.body);
        }
        let this = self.clone();
        let fingerprints = tokio::task::spawn_blocking(move || {
            let bodies: Vec<&str> = texts.iter().map(String::as_str).collect();
            this.fingerprint_chapters(&bodies, &|| {})
        })
        .await
        .expect("fingerprinting does not panic");
        let replaced: Vec<(store::ChapterId, NewFingerprint)> =
            infos.iter().map(|i| i.id).zip(fingerprints).collect();
        store
            .replace_fingerprints(work, &replaced)
            .await
            .map_err(Error::Store)?;
        Ok(replaced.len())
    }
}

/// Refuses a split in which no chapter has a letter or digit: headings only, or headings
/// followed by rules, dots and other punctuation.
fn refuse_without_text(split: &split::Split) -> Result<()> {
    let bodies = || split.chapters.iter().flat_map(|c| c.body.chars());
    if bodies().any(char::is_alphanumeric) {
        return Ok(());
    }
    Err(Error::NoText {
        headings: split.headings,
        symbols: bodies().filter(|c| !c.is_whitespace()).count(),
    })
}

/// The fingerprint as the store keeps it.
pub fn to_stored(fp: &ChapterFingerprint) -> NewFingerprint {
    let postings = |w: &[fingerprint::Winnow]| {
        w.iter()
            .map(|w| Posting {
                hash: w.hash,
                pos: w.pos,
            })
            .collect()
    };
    NewFingerprint {
        normalizer_version: fp.summary.normalizer_version,
        chars: fp.summary.chars,
        simhash: fp.summary.simhash,
        summary: fp.summary.to_bytes(),
        text_winnow: postings(&fp.winnow),
        pinyin_winnow: postings(&fp.pinyin_winnow),
    }
}

/// SHA-256 of the text with all whitespace removed.
pub fn content_hash(text: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for piece in text.split_whitespace() {
        hasher.update(piece.as_bytes());
    }
    hasher.finalize().into()
}

fn detect_format(name: &str, bytes: &[u8]) -> SourceFormat {
    let ext = Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext == "epub" || bytes.starts_with(b"PK\x03\x04") {
        return SourceFormat::Epub;
    }
    if matches!(ext.as_str(), "html" | "htm" | "xhtml") {
        return SourceFormat::Html;
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start_matches('\u{feff}').trim_start();
    if head.starts_with("<!doctype html") || head.starts_with("<html") {
        SourceFormat::Html
    } else {
        SourceFormat::Txt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_settings_are_refused_naming_the_key() {
        ImportSettings::default().validate().unwrap();
        let refusal = |change: fn(&mut ImportSettings)| {
            let mut s = ImportSettings::default();
            change(&mut s);
            Importer::new(s).unwrap_err().to_string()
        };
        assert_eq!(
            refusal(|s| s.limits.max_bytes = 0),
            "invalid import settings: max_bytes = 0 is out of range: must be at least 1"
        );
        assert_eq!(
            refusal(|s| s.split.toc_min_entries = 1),
            "invalid import settings: split.toc_min_entries = 1 is out of range: must be at least 2"
        );
        assert!(refusal(|s| s.split.max_heading_width = 0).contains("split.max_heading_width = 0"));
        assert_eq!(
            refusal(|s| s.fingerprint.winnow_w = 0),
            "invalid import settings: fingerprint.winnow_w = 0 is out of range: must be between 1 and 1024"
        );
        assert!(
            refusal(|s| s.fingerprint.dna.overlap = 2.0).contains("fingerprint.dna.overlap = 2")
        );
    }

    fn chapters(bodies: &[String]) -> Vec<split::SplitChapter> {
        bodies
            .iter()
            .map(|b| split::SplitChapter {
                title: String::new(),
                body: b.clone(),
            })
            .collect()
    }

    #[test]
    fn short_texts_and_long_single_chapters_are_warned_about() {
        let short = chapters(&["第一章 很短。".repeat(10)]);
        assert_eq!(
            warnings_for("", None, &short),
            vec![ImportWarning::FewChars { chars: 60 }]
        );
        // Whitespace is not text.
        let spaced = chapters(&[format!("{}{}", "字".repeat(199), " \n".repeat(500))]);
        assert_eq!(
            warnings_for("", None, &spaced),
            vec![ImportWarning::FewChars { chars: 199 }]
        );
        let enough = chapters(&["字".repeat(200)]);
        assert!(warnings_for("", None, &enough).is_empty());

        let long = "话说天下大势，分久必合，合久必分。".repeat(6000);
        let one = chapters(std::slice::from_ref(&long));
        let warnings = warnings_for(&long, None, &one);
        assert_eq!(warnings, vec![ImportWarning::NoHeadings { chars: 102_000 }]);
        assert!(
            warnings[0].to_string().contains("--heading REGEX"),
            "{}",
            warnings[0]
        );
        // The same text in two chapters: headings were found.
        let two = chapters(&[long.clone(), long]);
        assert!(warnings_for("", None, &two).is_empty());
    }

    #[test]
    fn challenge_pages_are_warned_about_once() {
        let html = r#"<html><head><title>Just a moment...</title></head><body><p>Verify you are human by completing the action below.</p></body></html>"#;
        let text = chapters(&["Verify you are human by completing the action below.".into()]);
        let warnings = warnings_for(html, Some("Just a moment..."), &text);
        assert_eq!(warnings, vec![ImportWarning::Challenge]);
        assert!(warnings[0].to_string().contains("save the page again"));
        // Saved as text, the first line is the title.
        let saved =
            "Just a moment...\nexample.com needs to review the security of your connection.";
        assert_eq!(
            warnings_for(saved, saved.lines().next(), &chapters(&[saved.into()])),
            vec![ImportWarning::Challenge]
        );
    }

    #[test]
    fn warnings_say_what_to_do() {
        let few = ImportWarning::FewChars { chars: 12 }.to_string();
        assert!(few.starts_with("only 12 characters of text"), "{few}");
        assert!(few.contains("whole work"), "{few}");
        let json = serde_json::to_value(ImportWarning::NoHeadings { chars: 5 }).unwrap();
        assert_eq!(json, serde_json::json!({"kind": "no_headings", "chars": 5}));
    }

    #[test]
    fn titles_authors_and_file_names_are_kept_without_controls_or_bidi_overrides() {
        // Issue #23: a title from a file name or the API could carry an ESC sequence that
        // drives the terminal `works list` prints to, or an override that reverses it.
        let importer = Importer::new(ImportSettings::default()).unwrap();
        let text = "第一章 开始\n".to_owned() + &"字".repeat(300);
        let options = ImportOptions {
            title: Some("Red\u{1b}[2J Book\u{202e}".into()),
            author: Some("\u{9b}31mAuthor\n".into()),
        };
        let prepared = importer
            .prepare("evil\u{202e}txt.txt", text.as_bytes(), &options)
            .unwrap();
        assert_eq!(prepared.title, "Red[2J Book");
        assert_eq!(prepared.author.as_deref(), Some("31mAuthor"));
        assert_eq!(prepared.source_name.as_deref(), Some("eviltxt.txt"));
        // The title from the file's name, when none is given, is cleaned the same way; one
        // made of control characters alone is no title.
        let prepared = importer
            .prepare(
                "\u{1b}\u{7}.txt",
                text.as_bytes(),
                &ImportOptions::default(),
            )
            .unwrap();
        assert_eq!(prepared.title, "untitled");
    }

    #[test]
    fn content_hash_ignores_whitespace_only() {
        assert_eq!(
            content_hash("第一回 甲\r\n乙 丙"),
            content_hash("第一回甲\n\n乙丙  ")
        );
        assert_ne!(content_hash("甲乙"), content_hash("乙甲"));
    }

    #[test]
    fn detects_formats_by_name_and_content() {
        assert_eq!(detect_format("a.epub", b"x"), SourceFormat::Epub);
        assert_eq!(
            detect_format("a.bin", b"PK\x03\x04rest"),
            SourceFormat::Epub
        );
        assert_eq!(detect_format("a.HTM", b"text"), SourceFormat::Html);
        assert_eq!(
            detect_format("a.txt", b"\xEF\xBB\xBF  <!DOCTYPE html><p>"),
            SourceFormat::Html
        );
        assert_eq!(detect_format("a", b"<HTML>"), SourceFormat::Html);
        assert_eq!(
            detect_format("a.txt", "第一回".as_bytes()),
            SourceFormat::Txt
        );
    }
}
