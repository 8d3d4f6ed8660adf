//! Registered works, their chapters, and the chapters' fingerprints and winnowing postings.
//!
//! The store keeps fingerprints as the `fingerprint` crate hands them over (a summary blob,
//! the SimHash and the winnowing postings) without depending on that crate: the summary is
//! opaque bytes here, decoded by whoever reads it (`FingerprintSummary::from_bytes`).

use std::future::Future;
use std::sync::{Arc, LazyLock};

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};
use tracing::instrument;

use crate::changes::{LogChange, WorkChangeKind};
use crate::db::{durable_tx, read_pool, write_pool, write_tx};
use crate::ids::{ChapterId, WorkId};
use crate::packed;
use crate::{Error, Result, Store};

/// The file format a work was imported from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceFormat {
    /// Plain text.
    Txt,
    /// EPUB 2 or 3.
    Epub,
    /// An HTML page.
    Html,
}

impl SourceFormat {
    /// The name kept in `works.source_format`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::Txt => "txt",
            SourceFormat::Epub => "epub",
            SourceFormat::Html => "html",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "txt" => Ok(SourceFormat::Txt),
            "epub" => Ok(SourceFormat::Epub),
            "html" => Ok(SourceFormat::Html),
            other => Err(Error::InvalidInput(format!(
                "unknown source format {other:?} in the database"
            ))),
        }
    }
}

/// A work to register, with every chapter and its fingerprint: written in one transaction.
#[derive(Debug, Clone)]
pub struct NewWork {
    /// Display title.
    pub title: String,
    /// Author, when known.
    pub author: Option<String>,
    /// SHA-256 of the work's text with all whitespace removed; a second work with the same
    /// hash is not inserted (see [`WorkInsert::Existing`]).
    pub content_hash: [u8; 32],
    /// Where the text came from: a file name, an upload name.
    pub source_name: Option<String>,
    /// The format it came in.
    pub source_format: SourceFormat,
    /// The character encoding it was decoded from ("UTF-8", "GBK", "Big5"), when text.
    pub source_encoding: Option<String>,
    /// Text before the first chapter (title page, preface, table of contents).
    pub front_matter: String,
    /// Chapters in reading order; ordinals are assigned 1, 2, ... in this order.
    pub chapters: Vec<NewChapter>,
}

/// A chapter to register.
#[derive(Debug, Clone)]
pub struct NewChapter {
    /// The heading ("第一回　灵根育孕源流出", "Chapter 3"), or the work title for a work
    /// without headings.
    pub title: String,
    /// The chapter's text, heading excluded.
    pub body: String,
    /// Its fingerprint.
    pub fingerprint: NewFingerprint,
}

/// A chapter fingerprint as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFingerprint {
    /// `fingerprint::NORMALIZER_VERSION` when it was computed.
    pub normalizer_version: u32,
    /// Characters of normalised text it covers.
    pub chars: u32,
    /// The 64-bit SimHash (stored bit-cast to a signed BIGINT).
    pub simhash: u64,
    /// `FingerprintSummary::to_bytes`.
    pub summary: Vec<u8>,
    /// Winnowing fingerprints of the normalised text.
    pub text_winnow: Vec<Posting>,
    /// Winnowing fingerprints of the pinyin stream.
    pub pinyin_winnow: Vec<Posting>,
}

/// One winnowing fingerprint: a k-gram hash and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Posting {
    /// The k-gram hash.
    pub hash: u64,
    /// Char offset of the k-gram in the chapter's normalised text (or pinyin stream).
    pub pos: u32,
}

/// Which stream a winnowing posting was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PostingKind {
    /// The normalised text.
    Text,
    /// The pinyin stream (homophone substitution).
    Pinyin,
}

impl PostingKind {
    pub(crate) fn code(self) -> i16 {
        match self {
            PostingKind::Text => 0,
            PostingKind::Pinyin => 1,
        }
    }
}

/// The outcome of [`WorkWrites::insert_work`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", content = "id", rename_all = "lowercase")]
pub enum WorkInsert {
    /// The work was new and is now stored.
    Created(WorkId),
    /// A work with the same content hash was already stored; nothing was written.
    Existing(WorkId),
}

impl WorkInsert {
    /// The stored work's id either way.
    pub fn id(self) -> WorkId {
        match self {
            WorkInsert::Created(id) | WorkInsert::Existing(id) => id,
        }
    }
}

/// A registered work.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Work {
    /// Its id.
    pub id: WorkId,
    /// Display title.
    pub title: String,
    /// Author, when known.
    pub author: Option<String>,
    /// See [`NewWork::content_hash`] (serialised as hex).
    #[serde(serialize_with = "hex")]
    pub content_hash: [u8; 32],
    /// See [`NewWork::source_name`].
    pub source_name: Option<String>,
    /// See [`NewWork::source_format`].
    pub source_format: SourceFormat,
    /// See [`NewWork::source_encoding`].
    pub source_encoding: Option<String>,
    /// See [`NewWork::front_matter`].
    pub front_matter: String,
    /// How many chapters.
    pub chapters: u32,
    /// Characters (Unicode scalar values) over all chapter bodies.
    pub chars: u64,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
}

fn hex<S: serde::Serializer>(bytes: &[u8; 32], s: S) -> std::result::Result<S::Ok, S::Error> {
    let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    s.serialize_str(&text)
}

/// A work in a list: no front matter.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkSummary {
    /// Its id.
    pub id: WorkId,
    /// Display title.
    pub title: String,
    /// Author, when known.
    pub author: Option<String>,
    /// How many chapters.
    pub chapters: u32,
    /// Characters over all chapter bodies.
    pub chars: u64,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
}

/// A chapter without its text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChapterInfo {
    /// Its id.
    pub id: ChapterId,
    /// The work it belongs to.
    pub work_id: WorkId,
    /// 1-based position in the work.
    pub ordinal: u32,
    /// Heading.
    pub title: String,
    /// Characters in the body.
    pub chars: u32,
}

/// A chapter with its text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Chapter {
    /// Everything but the text.
    #[serde(flatten)]
    pub info: ChapterInfo,
    /// The text, heading excluded.
    pub body: String,
}

/// A stored chapter fingerprint, for loading the matcher's indexes.
#[derive(Debug, Clone, PartialEq)]
pub struct FingerprintRecord {
    /// The chapter.
    pub chapter_id: ChapterId,
    /// Its work.
    pub work_id: WorkId,
    /// See [`NewFingerprint::normalizer_version`].
    pub normalizer_version: u32,
    /// See [`NewFingerprint::chars`].
    pub chars: u32,
    /// See [`NewFingerprint::simhash`].
    pub simhash: u64,
    /// See [`NewFingerprint::summary`].
    pub summary: Vec<u8>,
}

/// A posting found by hash: which chapter holds the k-gram, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PostingHit {
    /// The chapter.
    pub chapter_id: ChapterId,
    /// The k-gram hash.
    pub hash: u64,
    /// Char offset in the chapter's stream.
    pub pos: u32,
}

/// Which works [`WorkReads::works`] lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WorkFilter {
    /// Every work.
    #[default]
    All,
    /// Works whose title contains the text (ASCII letters match in either case).
    TitleContains(String),
    /// Works by exactly this author.
    Author(String),
}

/// Keyset pagination: rows after an id, at most `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page<Id> {
    /// Start after this id (ids ascend); `None` starts at the first row.
    pub after: Option<Id>,
    /// At most this many rows; `None` for all.
    pub limit: Option<u32>,
}

impl<Id> Page<Id> {
    /// Every row.
    pub fn all() -> Self {
        Page {
            after: None,
            limit: None,
        }
    }

    /// The first `limit` rows.
    pub fn first(limit: u32) -> Self {
        Page {
            after: None,
            limit: Some(limit),
        }
    }

    fn limit_i64(&self) -> i64 {
        self.limit.map_or(i64::MAX, i64::from)
    }
}

/// Writes of works, for the importer.
pub trait WorkWrites {
    /// Stores a work with its chapters and their fingerprints, unless a work with the same
    /// content hash exists. The work is written hidden, its chapters in transactions of about
    /// 1 MB of text, and made visible with its change-log row in one last transaction: no read
    /// sees it before. An import abandoned by a killed process is removed by the next
    /// ([`StoreSettings::abandoned_import_after`](crate::StoreSettings)); a concurrent import
    /// of the same text waits for the first.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a work without chapters or a posting offset beyond
    /// `i32::MAX`; [`Error::Backend`] when the database fails (nothing is written then).
    fn insert_work(&self, work: &NewWork) -> impl Future<Output = Result<WorkInsert>> + Send;

    /// Deletes a work with its chapters, fingerprints, postings, matches and cases.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such work.
    fn delete_work(&self, id: WorkId) -> impl Future<Output = Result<()>> + Send;

    /// Changes a work's title and author as `update` says and, when that changes anything,
    /// records it in `audit_log` (action `work.update` by `actor`, details
    /// `{"title": {"old": …, "new": …}}` and/or the same for `"author"`), in one transaction.
    /// A title is trimmed; an author that is empty after trimming is removed.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when `update` names no field or the title is empty;
    /// [`Error::NotFound`] for an unknown work (or one still being imported).
    fn update_work(
        &self,
        id: WorkId,
        update: &WorkUpdate,
        actor: &str,
    ) -> impl Future<Output = Result<WorkUpdated>> + Send;

    /// Deletes a work as [`WorkWrites::delete_work`] does, unless `cases` rows refer to it
    /// and `force` is false; a deletion is recorded in `audit_log` (action `work.delete` by
    /// `actor`, details: title, author, chapters, the cases deleted with it) in the same
    /// transaction. The count and the delete see the same rows: no case is opened between.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown work (or one still being imported).
    fn delete_work_checked(
        &self,
        id: WorkId,
        force: bool,
        actor: &str,
    ) -> impl Future<Output = Result<WorkDeletion>> + Send;

    /// Replaces the fingerprints (summaries and postings) of a work's chapters with
    /// `fingerprints` (chapter id, new fingerprint), and logs the work as added again so that
    /// running indexes replace its entries, in one transaction: after a normaliser change,
    /// a work follows without a re-import. Chapters not named keep theirs.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown work (or one still being imported);
    /// [`Error::InvalidInput`] for a chapter that is not the work's.
    fn replace_fingerprints(
        &self,
        work: WorkId,
        fingerprints: &[(ChapterId, NewFingerprint)],
    ) -> impl Future<Output = Result<()>> + Send;
}

/// A change to a work's title and author ([`WorkWrites::update_work`]); `None` leaves a
/// field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkUpdate {
    /// The new title (trimmed; must not be empty).
    pub title: Option<String>,
    /// The new author; `Some(None)`, or a name that is empty after trimming, removes it.
    pub author: Option<Option<String>>,
}

/// A work's title and author.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WorkTitle {
    /// Display title.
    pub title: String,
    /// Author, when known.
    pub author: Option<String>,
}

/// What [`WorkWrites::update_work`] did: the title and author before and after (equal when
/// the update changed nothing, and then nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WorkUpdated {
    /// As they were.
    pub before: WorkTitle,
    /// As they are now.
    pub after: WorkTitle,
}

impl WorkUpdated {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.before != self.after
    }
}

/// How [`WorkWrites::delete_work_checked`] went.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum WorkDeletion {
    /// The work is gone, with its chapters, matches and these many cases.
    Deleted {
        /// Its title and author.
        work: WorkTitle,
        /// Cases that referred to it, deleted with it.
        cases: u64,
    },
    /// Nothing was deleted: these many cases refer to the work and `force` was false.
    Refused {
        /// Cases that refer to it.
        cases: u64,
    },
}

/// Reads of works and chapters, for the CLI, the admin UI and the matcher's verification.
pub trait WorkReads {
    /// One work.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such work.
    fn work(&self, id: WorkId) -> impl Future<Output = Result<Work>> + Send;

    /// The work with this content hash, if one is stored.
    fn work_by_content_hash(
        &self,
        hash: &[u8; 32],
    ) -> impl Future<Output = Result<Option<WorkId>>> + Send;

    /// Works matching the filter, by ascending id.
    fn works(
        &self,
        filter: &WorkFilter,
        page: Page<WorkId>,
    ) -> impl Future<Output = Result<Vec<WorkSummary>>> + Send;

    /// The chapters of a work in order, without their text (empty for an unknown work).
    fn chapters(&self, work: WorkId) -> impl Future<Output = Result<Vec<ChapterInfo>>> + Send;

    /// One chapter with its text.
    ///
    /// # Errors
    /// [`Error::NotFound`] when there is no such chapter.
    fn chapter(&self, id: ChapterId) -> impl Future<Output = Result<Chapter>> + Send;
}

/// Reads of fingerprints and postings, for the matcher.
pub trait FingerprintReads {
    /// Fingerprints by ascending chapter id, a page at a time (load an index with
    /// `after = last id seen` until a short page comes back).
    fn fingerprints(
        &self,
        page: Page<ChapterId>,
    ) -> impl Future<Output = Result<Vec<FingerprintRecord>>> + Send;

    /// Every stored posting whose hash is among `hashes`.
    fn postings_with_hashes(
        &self,
        kind: PostingKind,
        hashes: &[u64],
    ) -> impl Future<Output = Result<Vec<PostingHit>>> + Send;

    /// A chapter's postings, by position.
    fn chapter_postings(
        &self,
        chapter: ChapterId,
        kind: PostingKind,
    ) -> impl Future<Output = Result<Vec<Posting>>> + Send;
}

/// Rows per multi-row INSERT of postings on SQLite: 2 + 2×2000 parameters, well under
/// SQLite's 32,766. Each statement costs a round trip to sqlx's SQLite thread, so bigger
/// batches matter there.
const SQLITE_POSTINGS_PER_INSERT: usize = 2000;

/// Hashes per lookup statement (one parameter each on SQLite; an array on Postgres).
const HASHES_PER_LOOKUP: usize = 1000;

fn to_i32(what: &str, n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::InvalidInput(format!("{what} {n} exceeds i32::MAX")))
}

fn sqlite_postings_insert(rows: usize) -> String {
    let mut sql = String::with_capacity(40 + rows * 16);
    sql.push_str("INSERT INTO winnow_postings (chapter_id, kind, hash, pos) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        let p = 3 + 2 * i;
        sql.push_str(&format!("($1,$2,${p},${})", p + 1));
    }
    sql
}

/// The full-batch INSERT, built once and shared so sqlx can cache its prepared statement.
static SQLITE_POSTINGS_FULL: LazyLock<Arc<str>> =
    LazyLock::new(|| sqlite_postings_insert(SQLITE_POSTINGS_PER_INSERT).into());

fn sqlite_in_list(first_param: usize, n: usize) -> String {
    (first_param..first_param + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(",")
}

const WORK_COLUMNS: &str = "id, title, author, content_hash, source_name, source_format, \
     source_encoding, front_matter, chapter_count, chars, created_at";

fn work_from_row<R: Row>(row: &R) -> Result<Work>
where
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i32: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Vec<u8>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> DateTime<Utc>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let hash: Vec<u8> = row.try_get("content_hash")?;
    let format: String = row.try_get("source_format")?;
    Ok(Work {
        id: WorkId(row.try_get("id")?),
        title: row.try_get("title")?,
        author: row.try_get("author")?,
        content_hash: hash.try_into().map_err(|h: Vec<u8>| {
            Error::InvalidInput(format!("content hash of {} bytes in the database", h.len()))
        })?,
        source_name: row.try_get("source_name")?,
        source_format: SourceFormat::parse(&format)?,
        source_encoding: row.try_get("source_encoding")?,
        front_matter: row.try_get("front_matter")?,
        chapters: u32::try_from(row.try_get::<i32, _>("chapter_count")?).unwrap_or(0),
        chars: u64::try_from(row.try_get::<i64, _>("chars")?).unwrap_or(0),
        created_at: row.try_get("created_at")?,
    })
}

#[derive(sqlx::FromRow)]
struct WorkSummaryRow {
    id: WorkId,
    title: String,
    author: Option<String>,
    chapter_count: i32,
    chars: i64,
    created_at: DateTime<Utc>,
}

impl From<WorkSummaryRow> for WorkSummary {
    fn from(r: WorkSummaryRow) -> Self {
        WorkSummary {
            id: r.id,
            title: r.title,
            author: r.author,
            chapters: u32::try_from(r.chapter_count).unwrap_or(0),
            chars: u64::try_from(r.chars).unwrap_or(0),
            created_at: r.created_at,
        }
    }
}

#[derive(sqlx::FromRow)]
struct ChapterInfoRow {
    id: ChapterId,
    work_id: WorkId,
    ordinal: i32,
    title: String,
    chars: i32,
}

impl From<ChapterInfoRow> for ChapterInfo {
    fn from(r: ChapterInfoRow) -> Self {
        ChapterInfo {
            id: r.id,
            work_id: r.work_id,
            ordinal: u32::try_from(r.ordinal).unwrap_or(0),
            title: r.title,
            chars: u32::try_from(r.chars).unwrap_or(0),
        }
    }
}

#[derive(sqlx::FromRow)]
struct FingerprintRow {
    chapter_id: ChapterId,
    work_id: WorkId,
    normalizer_version: i32,
    chars: i32,
    simhash: i64,
    summary: Vec<u8>,
}

impl From<FingerprintRow> for FingerprintRecord {
    fn from(r: FingerprintRow) -> Self {
        FingerprintRecord {
            chapter_id: r.chapter_id,
            work_id: r.work_id,
            normalizer_version: r.normalizer_version as u32,
            chars: r.chars as u32,
            simhash: r.simhash as u64,
            summary: r.summary,
        }
    }
}

/// Checks what the database would refuse half-way through the transaction; returns each
/// chapter's length in chars.
fn validate(work: &NewWork) -> Result<Vec<i32>> {
    if work.chapters.is_empty() {
        return Err(Error::InvalidInput(format!(
            "work {:?} has no chapters",
            work.title
        )));
    }
    to_i32("chapter count", work.chapters.len())?;
    let mut lengths = Vec::with_capacity(work.chapters.len());
    for ch in &work.chapters {
        lengths.push(to_i32("chapter length", ch.body.chars().count())?);
        for p in ch
            .fingerprint
            .text_winnow
            .iter()
            .chain(&ch.fingerprint.pinyin_winnow)
        {
            to_i32("posting offset", p.pos as usize)?;
        }
        to_i32("fingerprint chars", ch.fingerprint.chars as usize)?;
        to_i32(
            "normalizer version",
            ch.fingerprint.normalizer_version as usize,
        )?;
    }
    Ok(lengths)
}

/// Appends an `audit_log` row about a work on a transaction of either backend. Until the
/// audit module has its own helpers, work writes that an operator makes record themselves.
macro_rules! insert_audit {
    ($conn:expr, $actor:expr, $action:expr, $work:expr, $details:expr) => {
        sqlx::query(
            "INSERT INTO audit_log (actor, action, target_type, target_id, details) \
             VALUES ($1, $2, 'work', $3, $4)",
        )
        .bind($actor)
        .bind($action)
        .bind($work.0)
        .bind($details.to_string())
        .execute($conn)
        .await?
    };
}

impl WorkWrites for Store {
    #[instrument(skip_all, fields(title = %work.title, chapters = work.chapters.len()))]
    async fn insert_work(&self, work: &NewWork) -> Result<WorkInsert> {
        let lengths = validate(work)?;
        let chars: i64 = lengths.iter().map(|&n| i64::from(n)).sum();
        let hash = work.content_hash.to_vec();
        let chapter_count = work.chapters.len() as i32;
        // The work row first, hidden (importing_since set): nothing reads it until the last
        // batch is in.
        // The same text imported by another caller right now: wait for it to finish (or be
        // abandoned), then answer as if it had been stored before.
        let id = loop {
            // `Err`: stored before, with this id.
            let begun: std::result::Result<Option<i64>, WorkId> = write_tx!(self, |tx| {
                let now = unix_ms();
                // Imports abandoned by a killed process (StoreSettings::abandoned_import_after).
                let abandoned_ms = self.abandoned_import_after.as_millis() as i64;
                sqlx::query("DELETE FROM works WHERE importing_since < $1")
                    .bind(now - abandoned_ms)
                    .execute(&mut *tx)
                    .await?;
                let existing: Option<(i64, Option<i64>)> =
                    sqlx::query_as("SELECT id, importing_since FROM works WHERE content_hash = $1")
                        .bind(&hash)
                        .fetch_optional(&mut *tx)
                        .await?;
                match existing {
                    Some((id, None)) => Err(WorkId(id)),
                    Some((_, Some(_))) => Ok(None),
                    // A concurrent insert of the same text (Postgres, read committed) makes
                    // this one do nothing: the next round waits for it.
                    None => Ok(sqlx::query_scalar(
                        "INSERT INTO works (title, author, content_hash, source_name, \
                             source_format, source_encoding, front_matter, chapter_count, \
                             chars, importing_since) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                             ON CONFLICT (content_hash) DO NOTHING RETURNING id",
                    )
                    .bind(&work.title)
                    .bind(&work.author)
                    .bind(&hash)
                    .bind(&work.source_name)
                    .bind(work.source_format.as_str())
                    .bind(&work.source_encoding)
                    .bind(&work.front_matter)
                    .bind(chapter_count)
                    .bind(chars)
                    .bind(now)
                    .fetch_optional(&mut *tx)
                    .await?),
                }
            });
            match begun {
                Err(existing) => return Ok(WorkInsert::Existing(existing)),
                Ok(Some(id)) => break id,
                Ok(None) => self.wait_for_import(&hash).await?,
            }
        };
        let id = WorkId(id);
        match self.insert_batches(id.0, work, &lengths).await {
            Ok(()) => Ok(WorkInsert::Created(id)),
            Err(e) => {
                // Best effort: a row left behind is removed by the next import anyway.
                if let Err(cleanup) = self.remove_pending(id.0).await {
                    tracing::warn!(work = %id, error = %cleanup, "could not remove a failed import");
                }
                Err(e)
            }
        }
    }

    #[instrument(skip_all, fields(work = %id))]
    async fn delete_work(&self, id: WorkId) -> Result<()> {
        durable_tx!(self, |tx| {
            let deleted = sqlx::query("DELETE FROM works WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            Error::found(deleted, "work", id)?;
            tx.log_change(id.0, WorkChangeKind::Removed).await?;
            Ok(())
        })
    }

    #[instrument(skip_all, fields(work = %work, chapters = fingerprints.len()))]
    async fn replace_fingerprints(
        &self,
        work: WorkId,
        fingerprints: &[(ChapterId, NewFingerprint)],
    ) -> Result<()> {
        let ids: Vec<i64> = fingerprints.iter().map(|(c, _)| c.0).collect();
        let chapters: Vec<NewChapter> = fingerprints
            .iter()
            .map(|(_, fp)| NewChapter {
                title: String::new(),
                body: String::new(),
                fingerprint: fp.clone(),
            })
            .collect();
        durable_tx!(self, |tx| {
            let visible: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM works WHERE id = $1 AND importing_since IS NULL",
            )
            .bind(work)
            .fetch_optional(&mut *tx)
            .await?;
            if visible.is_none() {
                return Err(Error::not_found("work", work));
            }
            let owned: Vec<i64> = sqlx::query_scalar("SELECT id FROM chapters WHERE work_id = $1")
                .bind(work)
                .fetch_all(&mut *tx)
                .await?;
            if let Some(stranger) = ids.iter().find(|id| !owned.contains(id)) {
                return Err(Error::InvalidInput(format!(
                    "chapter {stranger} is not a chapter of work {work}"
                )));
            }
            for id in &ids {
                sqlx::query("DELETE FROM winnow_postings WHERE chapter_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM fingerprints WHERE chapter_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            for range in chunks_by_bytes(&chapters, IMPORT_BATCH_BYTES) {
                tx.insert_fingerprints(&ids[range.clone()], &chapters[range.clone()])
                    .await?;
                tx.insert_postings(&ids[range.clone()], &chapters[range])
                    .await?;
            }
            tx.log_change(work.0, WorkChangeKind::Added).await?;
            Ok(())
        })
    }

    #[instrument(skip_all, fields(work = %id))]
    async fn update_work(
        &self,
        id: WorkId,
        update: &WorkUpdate,
        actor: &str,
    ) -> Result<WorkUpdated> {
        if update.title.is_none() && update.author.is_none() {
            return Err(Error::InvalidInput(format!(
                "an update of work {id} needs a new title or author"
            )));
        }
        let title = update.title.as_deref().map(str::trim);
        if title == Some("") {
            return Err(Error::InvalidInput(format!(
                "the title of work {id} cannot be empty"
            )));
        }
        let author = update.author.as_ref().map(|a| {
            a.as_deref()
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned)
        });
        let select = self.lock_work_sql("title, author");
        durable_tx!(self, |tx| {
            let before: Option<(String, Option<String>)> = sqlx::query_as(AssertSqlSafe(select))
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            let (old_title, old_author) = before.ok_or_else(|| Error::not_found("work", id))?;
            let before = WorkTitle {
                title: old_title,
                author: old_author,
            };
            let after = WorkTitle {
                title: title.map_or_else(|| before.title.clone(), str::to_owned),
                author: author.clone().unwrap_or_else(|| before.author.clone()),
            };
            if before != after {
                sqlx::query(
                    "UPDATE works SET title = $2, author = $3, updated_at = $4 WHERE id = $1",
                )
                .bind(id)
                .bind(&after.title)
                .bind(&after.author)
                .bind(Utc::now())
                .execute(&mut *tx)
                .await?;
                let mut details = serde_json::Map::new();
                if before.title != after.title {
                    details.insert(
                        "title".into(),
                        serde_json::json!({"old": before.title, "new": after.title}),
                    );
                }
                if before.author != after.author {
                    details.insert(
                        "author".into(),
                        serde_json::json!({"old": before.author, "new": after.author}),
                    );
                }
                insert_audit!(
                    &mut *tx,
                    actor,
                    "work.update",
                    id,
                    serde_json::Value::Object(details)
                );
            }
            Ok(WorkUpdated { before, after })
        })
    }

    #[instrument(skip_all, fields(work = %id, force))]
    async fn delete_work_checked(
        &self,
        id: WorkId,
        force: bool,
        actor: &str,
    ) -> Result<WorkDeletion> {
        let select = self.lock_work_sql("title, author, chapter_count");
        durable_tx!(self, |tx| {
            let work: Option<(String, Option<String>, i32)> = sqlx::query_as(AssertSqlSafe(select))
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            let (title, author, chapters) = work.ok_or_else(|| Error::not_found("work", id))?;
            let cases: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM cases WHERE work_id = $1")
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
            let cases = cases.max(0) as u64;
            if cases > 0 && !force {
                // Nothing written: the commit only ends the lock.
                Ok(WorkDeletion::Refused { cases })
            } else {
                sqlx::query("DELETE FROM works WHERE id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                tx.log_change(id.0, WorkChangeKind::Removed).await?;
                let details = serde_json::json!({
                    "title": title,
                    "author": author,
                    "chapters": chapters,
                    "cases": cases,
                    "forced": force && cases > 0,
                });
                insert_audit!(&mut *tx, actor, "work.delete", id, details);
                Ok(WorkDeletion::Deleted {
                    work: WorkTitle { title, author },
                    cases,
                })
            }
        })
    }
}

impl Store {
    /// `SELECT columns` of a visible work by id (`$1`), locking its row to the end of the
    /// transaction on Postgres (SQLite's one writer needs no lock): a case inserted
    /// meanwhile waits for the lock on the work it refers to.
    fn lock_work_sql(&self, columns: &str) -> String {
        let lock = match self.backend {
            crate::db::Backend::Postgres(_) => " FOR UPDATE",
            crate::db::Backend::Sqlite { .. } => "",
        };
        format!("SELECT {columns} FROM works WHERE id = $1 AND importing_since IS NULL{lock}")
    }
}

/// Chapter text written per transaction of an import: about a second of work, so that other
/// writers (a crawl, another import) get the SQLite write lock between batches.
const IMPORT_BATCH_BYTES: usize = 1 << 20;

/// The pause between two batches of an import on SQLite (see [`Store::insert_batches`]).
const SQLITE_BATCH_PAUSE: std::time::Duration = std::time::Duration::from_millis(120);

fn unix_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Store {
    /// Writes a pending work's chapters, fingerprints and postings in batches of
    /// [`IMPORT_BATCH_BYTES`], then makes it visible and logs it, in one last transaction.
    async fn insert_batches(&self, work_id: i64, work: &NewWork, lengths: &[i32]) -> Result<()> {
        let batches = chunks_by_bytes(&work.chapters, IMPORT_BATCH_BYTES);
        let of = batches.len();
        for (number, range) in (1..).zip(batches) {
            let chapters = &work.chapters[range.clone()];
            let first_ordinal = range.start as i32 + 1;
            write_tx!(self, |tx| {
                let ids = tx
                    .insert_chapters(work_id, chapters, &lengths[range.clone()], first_ordinal)
                    .await?;
                tx.insert_fingerprints(&ids, chapters).await?;
                tx.insert_postings(&ids, chapters).await?;
                sqlx::query("UPDATE works SET importing_since = $1 WHERE id = $2")
                    .bind(unix_ms())
                    .bind(work_id)
                    .execute(&mut *tx)
                    .await?;
                Ok::<_, Error>(())
            })?;
            self.import_batch_written(work_id, number, of).await;
            // SQLite does not queue writers: one waiting for the lock polls it (every 100 ms
            // at most), and would lose every race to the next batch without this pause.
            if matches!(self.backend, crate::db::Backend::Sqlite { .. }) {
                tokio::time::sleep(SQLITE_BATCH_PAUSE).await;
            }
        }
        durable_tx!(self, |tx| {
            let shown = sqlx::query(
                "UPDATE works SET importing_since = NULL \
                 WHERE id = $1 AND importing_since IS NOT NULL",
            )
            .bind(work_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if shown != 1 {
                return Err(Error::Conflict(format!(
                    "work {work_id} was removed while it was being imported"
                )));
            }
            tx.log_change(work_id, WorkChangeKind::Added).await?;
            Ok(())
        })
    }

    /// Runs the test's hook after batch `number` of `of` of an import is committed (feature
    /// `testing`, [`crate::testing::ImportBatchHook`]).
    #[cfg(feature = "testing")]
    async fn import_batch_written(&self, work_id: i64, number: usize, of: usize) {
        if let Some(hook) = &self.import_batch_hook {
            let work = WorkId(work_id);
            hook(crate::testing::ImportBatch { work, number, of }).await;
        }
    }

    /// Without the `testing` feature there is no hook.
    #[cfg(not(feature = "testing"))]
    async fn import_batch_written(&self, _work_id: i64, _number: usize, _of: usize) {}

    /// Waits, reading only (the write lock stays with the import), until the pending import
    /// of the text with `hash` is complete, gone, or old enough to count as abandoned.
    async fn wait_for_import(&self, hash: &[u8]) -> Result<()> {
        let abandoned_ms = self.abandoned_import_after.as_millis() as i64;
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let since: Option<Option<i64>> = read_pool!(self, |pool| {
                sqlx::query_scalar("SELECT importing_since FROM works WHERE content_hash = $1")
                    .bind(hash)
                    .fetch_optional(pool)
                    .await?
            });
            match since {
                Some(Some(since)) if since >= unix_ms() - abandoned_ms => {}
                _ => return Ok(()),
            }
        }
    }

    /// Removes a pending work (chapters, fingerprints and postings go with it).
    async fn remove_pending(&self, work_id: i64) -> Result<()> {
        write_pool!(self, |pool| {
            sqlx::query("DELETE FROM works WHERE id = $1 AND importing_since IS NOT NULL")
                .bind(work_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}

/// The statements of a work's bulk write and of posting lookups, per backend.
///
/// Postgres gets few large statements (one `UNNEST` of arrays per table and chunk): each
/// statement is a round trip, and sqlx 0.9.0 does not set `TCP_NODELAY`, so a large
/// statement also waits ~40 ms for a delayed ACK (launchbadge/sqlx#4335). SQLite runs in
/// process, where many small prepared statements are cheap but parameters are limited.
trait BulkSql {
    /// Inserts the chapters (ordinals `first_ordinal`, `first_ordinal + 1`, ...); returns
    /// their ids in order.
    fn insert_chapters(
        &mut self,
        work_id: i64,
        chapters: &[NewChapter],
        lengths: &[i32],
        first_ordinal: i32,
    ) -> impl Future<Output = Result<Vec<i64>>> + Send;

    /// Inserts the chapters' fingerprint summaries, each with its postings packed
    /// (`crate::packed`) for the index load.
    fn insert_fingerprints(
        &mut self,
        ids: &[i64],
        chapters: &[NewChapter],
    ) -> impl Future<Output = Result<()>> + Send;

    /// Inserts the chapters' postings of both kinds.
    fn insert_postings(
        &mut self,
        ids: &[i64],
        chapters: &[NewChapter],
    ) -> impl Future<Output = Result<()>> + Send;

    fn lookup_postings(
        &mut self,
        kind: PostingKind,
        hashes: &[u64],
    ) -> impl Future<Output = Result<Vec<PostingHit>>> + Send;
}

/// Most chapter text per Postgres INSERT, in bytes: bounds the size of one message.
const PG_CHAPTER_BYTES_PER_INSERT: usize = 8 << 20;
/// Most postings per Postgres INSERT (four arrays of this length).
const PG_POSTINGS_PER_INSERT: usize = 250_000;

/// Splits `chapters` into runs whose bodies hold at most `max_bytes` (at least one each).
fn chunks_by_bytes(chapters: &[NewChapter], max_bytes: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, c) in chapters.iter().enumerate() {
        if i > start && bytes + c.body.len() > max_bytes {
            out.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += c.body.len();
    }
    if start < chapters.len() {
        out.push(start..chapters.len());
    }
    out
}

impl BulkSql for sqlx::PgConnection {
    async fn insert_chapters(
        &mut self,
        work_id: i64,
        chapters: &[NewChapter],
        lengths: &[i32],
        first_ordinal: i32,
    ) -> Result<Vec<i64>> {
        let mut ids = Vec::with_capacity(chapters.len());
        for range in chunks_by_bytes(chapters, PG_CHAPTER_BYTES_PER_INSERT) {
            let ordinals: Vec<i32> = range.clone().map(|i| i as i32 + first_ordinal).collect();
            let titles: Vec<&str> = chapters[range.clone()]
                .iter()
                .map(|c| c.title.as_str())
                .collect();
            let bodies: Vec<&str> = chapters[range.clone()]
                .iter()
                .map(|c| c.body.as_str())
                .collect();
            let mut rows: Vec<(i64, i32)> = sqlx::query_as(
                "INSERT INTO chapters (work_id, ordinal, title, body, chars) \
                 SELECT $1, o, t, b, c \
                 FROM UNNEST($2::INTEGER[], $3::TEXT[], $4::TEXT[], $5::INTEGER[]) AS u (o, t, b, c) \
                 RETURNING id, ordinal",
            )
            .bind(work_id)
            .bind(ordinals)
            .bind(titles)
            .bind(bodies)
            .bind(&lengths[range])
            .fetch_all(&mut *self)
            .await?;
            rows.sort_by_key(|&(_, ordinal)| ordinal);
            ids.extend(rows.into_iter().map(|(id, _)| id));
        }
        Ok(ids)
    }

    async fn insert_fingerprints(&mut self, ids: &[i64], chapters: &[NewChapter]) -> Result<()> {
        let fps = || chapters.iter().map(|c| &c.fingerprint);
        let versions: Vec<i32> = fps().map(|f| f.normalizer_version as i32).collect();
        let chars: Vec<i32> = fps().map(|f| f.chars as i32).collect();
        let simhashes: Vec<i64> = fps().map(|f| f.simhash as i64).collect();
        let summaries: Vec<&[u8]> = fps().map(|f| f.summary.as_slice()).collect();
        let packed: Vec<Vec<u8>> = fps()
            .map(|f| packed::encode(&f.text_winnow, &f.pinyin_winnow))
            .collect();
        sqlx::query(
            "INSERT INTO fingerprints (chapter_id, normalizer_version, chars, simhash, summary, \
             postings) SELECT * FROM UNNEST($1::BIGINT[], $2::INTEGER[], $3::INTEGER[], \
             $4::BIGINT[], $5::BYTEA[], $6::BYTEA[])",
        )
        .bind(ids)
        .bind(versions)
        .bind(chars)
        .bind(simhashes)
        .bind(summaries)
        .bind(packed)
        .execute(&mut *self)
        .await?;
        Ok(())
    }

    async fn insert_postings(&mut self, ids: &[i64], chapters: &[NewChapter]) -> Result<()> {
        let rows = chapters.iter().zip(ids).flat_map(|(c, &id)| {
            let fp = &c.fingerprint;
            let text = fp
                .text_winnow
                .iter()
                .map(move |p| (id, PostingKind::Text, p));
            let pinyin = fp
                .pinyin_winnow
                .iter()
                .map(move |p| (id, PostingKind::Pinyin, p));
            text.chain(pinyin)
        });
        let rows: Vec<(i64, PostingKind, &Posting)> = rows.collect();
        for chunk in rows.chunks(PG_POSTINGS_PER_INSERT) {
            let chapter_ids: Vec<i64> = chunk.iter().map(|r| r.0).collect();
            let kinds: Vec<i16> = chunk.iter().map(|r| r.1.code()).collect();
            let hashes: Vec<i64> = chunk.iter().map(|r| r.2.hash as i64).collect();
            let positions: Vec<i32> = chunk.iter().map(|r| r.2.pos as i32).collect();
            sqlx::query(
                "INSERT INTO winnow_postings (chapter_id, kind, hash, pos) \
                 SELECT * FROM UNNEST($1::BIGINT[], $2::SMALLINT[], $3::BIGINT[], $4::INTEGER[])",
            )
            .bind(chapter_ids)
            .bind(kinds)
            .bind(hashes)
            .bind(positions)
            .execute(&mut *self)
            .await?;
        }
        Ok(())
    }

    async fn lookup_postings(
        &mut self,
        kind: PostingKind,
        hashes: &[u64],
    ) -> Result<Vec<PostingHit>> {
        let mut hits = Vec::new();
        for chunk in hashes.chunks(HASHES_PER_LOOKUP) {
            let keys: Vec<i64> = chunk.iter().map(|&h| h as i64).collect();
            let rows: Vec<(ChapterId, i64, i32)> = sqlx::query_as(
                "SELECT chapter_id, hash, pos FROM winnow_postings \
                 WHERE kind = $1 AND hash = ANY($2)",
            )
            .bind(kind.code())
            .bind(keys)
            .fetch_all(&mut *self)
            .await?;
            hits.extend(rows.into_iter().map(hit));
        }
        Ok(hits)
    }
}

impl BulkSql for sqlx::SqliteConnection {
    async fn insert_chapters(
        &mut self,
        work_id: i64,
        chapters: &[NewChapter],
        lengths: &[i32],
        first_ordinal: i32,
    ) -> Result<Vec<i64>> {
        let mut ids = Vec::with_capacity(chapters.len());
        for (i, (ch, &len)) in chapters.iter().zip(lengths).enumerate() {
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO chapters (work_id, ordinal, title, body, chars) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
            )
            .bind(work_id)
            .bind(i as i32 + first_ordinal)
            .bind(&ch.title)
            .bind(&ch.body)
            .bind(len)
            .fetch_one(&mut *self)
            .await?;
            ids.push(id);
        }
        Ok(ids)
    }

    async fn insert_fingerprints(&mut self, ids: &[i64], chapters: &[NewChapter]) -> Result<()> {
        for (&id, ch) in ids.iter().zip(chapters) {
            let fp = &ch.fingerprint;
            sqlx::query(
                "INSERT INTO fingerprints (chapter_id, normalizer_version, chars, simhash, \
                 summary, postings) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(id)
            .bind(fp.normalizer_version as i32)
            .bind(fp.chars as i32)
            .bind(fp.simhash as i64)
            .bind(&fp.summary)
            .bind(packed::encode(&fp.text_winnow, &fp.pinyin_winnow))
            .execute(&mut *self)
            .await?;
        }
        Ok(())
    }

    async fn insert_postings(&mut self, ids: &[i64], chapters: &[NewChapter]) -> Result<()> {
        for (&id, ch) in ids.iter().zip(chapters) {
            let fp = &ch.fingerprint;
            for (kind, postings) in [
                (PostingKind::Text, &fp.text_winnow),
                (PostingKind::Pinyin, &fp.pinyin_winnow),
            ] {
                for batch in postings.chunks(SQLITE_POSTINGS_PER_INSERT) {
                    let sql: Arc<str> = if batch.len() == SQLITE_POSTINGS_PER_INSERT {
                        SQLITE_POSTINGS_FULL.clone()
                    } else {
                        sqlite_postings_insert(batch.len()).into()
                    };
                    let mut query = sqlx::query(AssertSqlSafe(sql)).bind(id).bind(kind.code());
                    for p in batch {
                        query = query.bind(p.hash as i64).bind(p.pos as i32);
                    }
                    query.execute(&mut *self).await?;
                }
            }
        }
        Ok(())
    }

    async fn lookup_postings(
        &mut self,
        kind: PostingKind,
        hashes: &[u64],
    ) -> Result<Vec<PostingHit>> {
        let mut hits = Vec::new();
        for chunk in hashes.chunks(HASHES_PER_LOOKUP) {
            let sql = format!(
                "SELECT chapter_id, hash, pos FROM winnow_postings \
                 WHERE kind = $1 AND hash IN ({})",
                sqlite_in_list(2, chunk.len())
            );
            let mut query = sqlx::query_as(AssertSqlSafe(sql)).bind(kind.code());
            for &h in chunk {
                query = query.bind(h as i64);
            }
            let rows: Vec<(ChapterId, i64, i32)> = query.fetch_all(&mut *self).await?;
            hits.extend(rows.into_iter().map(hit));
        }
        Ok(hits)
    }
}

fn hit((chapter_id, hash, pos): (ChapterId, i64, i32)) -> PostingHit {
    PostingHit {
        chapter_id,
        hash: hash as u64,
        pos: pos as u32,
    }
}

/// Escapes `%`, `_` and `\` for a LIKE pattern with `ESCAPE '\'`.
fn like_contains(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

impl WorkReads for Store {
    #[instrument(skip_all, fields(work = %id))]
    async fn work(&self, id: WorkId) -> Result<Work> {
        let sql = AssertSqlSafe(format!(
            "SELECT {WORK_COLUMNS} FROM works WHERE id = $1 AND importing_since IS NULL"
        ));
        read_pool!(self, |pool| {
            match sqlx::query(sql).bind(id).fetch_optional(pool).await? {
                Some(row) => work_from_row(&row),
                None => Err(Error::not_found("work", id)),
            }
        })
    }

    async fn work_by_content_hash(&self, hash: &[u8; 32]) -> Result<Option<WorkId>> {
        Ok(read_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT id FROM works WHERE content_hash = $1 AND importing_since IS NULL",
            )
            .bind(hash.as_slice())
            .fetch_optional(pool)
            .await?
        }))
    }

    #[instrument(skip_all, fields(filter = ?filter))]
    async fn works(&self, filter: &WorkFilter, page: Page<WorkId>) -> Result<Vec<WorkSummary>> {
        const COLUMNS: &str = "SELECT id, title, author, chapter_count, chars, created_at \
                               FROM works WHERE id > $1 AND importing_since IS NULL";
        const TAIL: &str = "ORDER BY id LIMIT $2";
        let (condition, arg) = match filter {
            WorkFilter::All => ("", None),
            WorkFilter::TitleContains(t) => (
                "AND lower(title) LIKE lower($3) ESCAPE '\\'",
                Some(like_contains(t)),
            ),
            WorkFilter::Author(a) => ("AND author = $3", Some(a.clone())),
        };
        let sql = format!("{COLUMNS} {condition} {TAIL}");
        let after = page.after.map_or(0, |id| id.0);
        let rows: Vec<WorkSummaryRow> = read_pool!(self, |pool| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql))
                .bind(after)
                .bind(page.limit_i64());
            if let Some(arg) = &arg {
                q = q.bind(arg);
            }
            q.fetch_all(pool).await?
        });
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn chapters(&self, work: WorkId) -> Result<Vec<ChapterInfo>> {
        let rows: Vec<ChapterInfoRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT id, work_id, ordinal, title, chars FROM chapters \
                 WHERE work_id = $1 ORDER BY ordinal",
            )
            .bind(work)
            .fetch_all(pool)
            .await?
        });
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn chapter(&self, id: ChapterId) -> Result<Chapter> {
        let row = read_pool!(self, |pool| {
            sqlx::query(
                "SELECT id, work_id, ordinal, title, chars, body FROM chapters WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(pool)
            .await?
            .map(|row| -> Result<Chapter> {
                let info: ChapterInfoRow = sqlx::FromRow::from_row(&row)?;
                Ok(Chapter {
                    info: info.into(),
                    body: row.try_get("body")?,
                })
            })
        });
        row.ok_or_else(|| Error::not_found("chapter", id))?
    }
}

impl FingerprintReads for Store {
    async fn fingerprints(&self, page: Page<ChapterId>) -> Result<Vec<FingerprintRecord>> {
        let after = page.after.map_or(0, |id| id.0);
        let rows: Vec<FingerprintRow> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT f.chapter_id, c.work_id, f.normalizer_version, f.chars, f.simhash, \
                 f.summary FROM fingerprints f JOIN chapters c ON c.id = f.chapter_id \
                 JOIN works w ON w.id = c.work_id AND w.importing_since IS NULL \
                 WHERE f.chapter_id > $1 ORDER BY f.chapter_id LIMIT $2",
            )
            .bind(after)
            .bind(page.limit_i64())
            .fetch_all(pool)
            .await?
        });
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn postings_with_hashes(
        &self,
        kind: PostingKind,
        hashes: &[u64],
    ) -> Result<Vec<PostingHit>> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        read_pool!(self, |pool| {
            let mut conn = pool.acquire().await?;
            conn.lookup_postings(kind, hashes).await
        })
    }

    async fn chapter_postings(
        &self,
        chapter: ChapterId,
        kind: PostingKind,
    ) -> Result<Vec<Posting>> {
        let rows: Vec<(i64, i32)> = read_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT hash, pos FROM winnow_postings WHERE chapter_id = $1 AND kind = $2 \
                 ORDER BY pos, hash",
            )
            .bind(chapter)
            .bind(kind.code())
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(hash, pos)| Posting {
                hash: hash as u64,
                pos: pos as u32,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter(bytes: usize) -> NewChapter {
        NewChapter {
            title: String::new(),
            body: "x".repeat(bytes),
            fingerprint: NewFingerprint {
                normalizer_version: 1,
                chars: 0,
                simhash: 0,
                summary: Vec::new(),
                text_winnow: Vec::new(),
                pinyin_winnow: Vec::new(),
            },
        }
    }

    #[test]
    fn chapter_chunks_hold_at_most_the_byte_budget_but_at_least_one_chapter() {
        let chapters: Vec<NewChapter> = [4, 4, 3, 10, 1, 1].into_iter().map(chapter).collect();
        assert_eq!(chunks_by_bytes(&chapters, 8), [0..2, 2..3, 3..4, 4..6]);
        let all = chunks_by_bytes(&chapters, 100);
        assert_eq!((all.len(), all[0].clone()), (1, 0..6));
        assert!(chunks_by_bytes(&[], 8).is_empty());
    }

    #[test]
    fn sqlite_postings_insert_reuses_the_chapter_and_kind_parameters() {
        assert_eq!(
            sqlite_postings_insert(2),
            "INSERT INTO winnow_postings (chapter_id, kind, hash, pos) VALUES ($1,$2,$3,$4),($1,$2,$5,$6)"
        );
    }
}
