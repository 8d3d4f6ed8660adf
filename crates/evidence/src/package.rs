//! A case's evidence package: one folder a rights team hands to a lawyer or a host, that an
//! archivist can check with standard tools.
//!
//! [`write_package`] writes into a folder:
//!
//! | file | holds |
//! |---|---|
//! | `case.warc.gz` | a `warcinfo` record, then every snapshot of the case (redirect hops, request as sent, response as served, metadata; for a revisit, a `revisit` record after the capture it confirms), one gzip member per record |
//! | `texts/<snapshot>.txt` | the main text extracted from each page (UTF-8) |
//! | `screenshots/<snapshot>.png` | the page as a headless browser showed it, when it was rendered (also in the WARC file, as a `resource` record concurrent to the page's response) |
//! | `passages.json` | per chapter, every page's aligned passages with both texts' excerpts |
//! | `timestamps/<snapshot>.tsr` | a trusted timestamp token per stamped snapshot |
//! | `timestamps/screenshot-<snapshot>.tsr` | a trusted timestamp token over a screenshot's SHA-256, when stamped |
//! | `README.txt` | how to verify the package |
//! | `manifest.json` | the case, the work, the tool version, the time written, the snapshots and every file above with its SHA-256 and size |
//!
//! A revisit (a re-fetch the server answered `304 Not Modified`) is evidence that the copy
//! was still there, of the body an earlier capture holds: the WARC file has that capture's
//! `response` and the revisit's `revisit` record pointing at it, the manifest lists the
//! revisit with no body digest of its own, `revisit_of` naming the capture and
//! `unchanged_since` saying `unchanged since <date> (server said 304)`, and its text (read
//! from the capture's body) with `text_from` naming the capture. Its token covers the
//! capture's SHA-256, stamped at the revisit's time.
//!
//! Nothing is written when a file of the package exists already, unless `force` is set.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use casework::cases::{CaseView, case_view};
use chrono::{DateTime, SecondsFormat, Utc};
use jobs::{Error, Result, store_err};
use serde::Serialize;
use sha2::Digest;
use store::{
    CaseId, CaseMatch, ChapterId, EvidenceReads, Renders, SnapshotId, SnapshotRecord, Store,
    Timestamps, WorkReads,
};

/// The WARC file's name in the package.
pub const WARC_FILE: &str = "case.warc.gz";
/// The manifest's name in the package.
pub const MANIFEST_FILE: &str = "manifest.json";

/// A trusted timestamp token (RFC 3161 `TimeStampResp`, DER) over one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimestampToken {
    /// The snapshot it stamps.
    pub snapshot: SnapshotId,
    /// The token as the authority returned it.
    pub der: Vec<u8>,
}

/// One file of a written package, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackageFile {
    /// Path inside the package folder, `/`-separated.
    pub path: String,
    /// SHA-256 of its bytes, lower-case hex.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What [`write_package`] wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Package {
    /// The folder.
    pub dir: PathBuf,
    /// Snapshots in the WARC file.
    pub snapshots: usize,
    /// The files the manifest lists (every file but the manifest itself), in writing order.
    pub files: Vec<PackageFile>,
    /// SHA-256 of `manifest.json`, lower-case hex: the one digest that vouches for the rest.
    pub manifest_sha256: String,
}

/// One snapshot as the manifest lists it.
#[derive(Debug, Clone, Serialize)]
struct ManifestSnapshot {
    id: SnapshotId,
    url: String,
    final_url: String,
    status: u16,
    fetched_at: DateTime<Utc>,
    /// The decoded body's SHA-256 (what matches and cases name); none for a revisit, whose
    /// evidence is the body of the capture it confirms.
    #[serde(skip_serializing_if = "Option::is_none")]
    body_sha256: Option<String>,
    /// The body as served, when kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    wire_sha256: Option<String>,
    /// The SHA-256 its timestamp token covers: `body_sha256`, or for a revisit the
    /// confirmed capture's.
    evidence_sha256: String,
    /// Its `response` record in the WARC file (for a revisit, its `revisit` record).
    warc_record_id: String,
    /// For a revisit: the capture it confirms unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    revisit_of: Option<ManifestCapture>,
    /// For a revisit: `unchanged since <date> (server said 304)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    unchanged_since: Option<String>,
    /// Its page text, when one was extracted.
    text: Option<String>,
    /// The snapshot whose body the text was read from, when not its own (a revisit's).
    #[serde(skip_serializing_if = "Option::is_none")]
    text_from: Option<SnapshotId>,
    /// Its timestamp token, when there is one.
    timestamp: Option<String>,
    /// Its screenshot, when the page was rendered.
    screenshot: Option<ManifestScreenshot>,
}

/// The capture a revisit confirms, as the manifest names it.
#[derive(Debug, Clone, Serialize)]
struct ManifestCapture {
    snapshot: SnapshotId,
    fetched_at: DateTime<Utc>,
    body_sha256: String,
    /// Its `response` record in the WARC file.
    warc_record_id: String,
}

/// What the package says of a revisit whose capture was fetched at `since`.
pub fn unchanged_since(since: DateTime<Utc>) -> String {
    format!(
        "unchanged since {} (server said 304)",
        since.to_rfc3339_opts(SecondsFormat::Secs, true)
    )
}

/// A screenshot as the manifest lists it.
#[derive(Debug, Clone, Serialize)]
struct ManifestScreenshot {
    path: String,
    sha256: String,
    width: u32,
    height: u32,
    rendered_at: DateTime<Utc>,
    /// Its `resource` record in the WARC file.
    warc_record_id: String,
    /// Its RFC 3161 token over `sha256`, when stamped.
    timestamp: Option<String>,
}

#[derive(Serialize)]
struct Manifest<'a> {
    format: &'static str,
    tool: Tool,
    written_at: String,
    case: &'a store::CaseRecord,
    work: WorkSummary,
    snapshots: Vec<ManifestSnapshot>,
    files: &'a [PackageFile],
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct WorkSummary {
    id: store::WorkId,
    title: String,
    author: Option<String>,
}

/// The evidence package of case `case` as one zip file in memory (what the admin UI
/// downloads and a mailed notice attaches), written through a temporary folder.
///
/// Writing it gzips every snapshot into the WARC file, writes files and deflates the zip:
/// seconds of CPU and disk for a large case. It all runs on a blocking thread, so that the
/// runtime's workers go on serving requests and other jobs meanwhile, whoever calls it.
///
/// # Errors
/// As [`write_package`]; [`Error::WriteFile`] when the temporary folder or the zip fails.
pub async fn package_zip(store: &Store, case: CaseId) -> Result<Vec<u8>> {
    let store = store.clone();
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(zip_here(&store, case)))
        .await
        .map_err(|e| Error::task("writing the evidence package", e))?
}

/// [`package_zip`] on the thread it is called on.
async fn zip_here(store: &Store, case: CaseId) -> Result<Vec<u8>> {
    let dir = tempfile::tempdir().map_err(|source| Error::WriteFile {
        path: std::env::temp_dir(),
        source,
    })?;
    let out = dir.path().join("package");
    write_package(store, case, &out, false).await?;
    let zip = zip_dir(&out).map_err(|source| Error::WriteFile { path: out, source })?;
    drop(dir);
    Ok(zip)
}

/// Every file under `dir`, deflated, by its path under `dir`, in name order.
fn zip_dir(dir: &Path) -> std::io::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&folder)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::path);
        for entry in entries {
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(dir)
                .map_err(std::io::Error::other)?
                .to_string_lossy()
                .replace('\\', "/");
            zip.start_file(name, options)
                .map_err(std::io::Error::other)?;
            zip.write_all(&std::fs::read(&path)?)?;
        }
    }
    Ok(zip.finish().map_err(std::io::Error::other)?.into_inner())
}

/// Writes the evidence package of case `case` into `dir` (created if missing).
///
/// Each snapshot's RFC 3161 token, when it has one, is included as it was received (the
/// first token of a snapshot stamped by several authorities).
///
/// # Errors
/// [`Error::Exists`] when a file of the package is in `dir` already and `force` is not set
/// (checked before anything is written); [`jobs::Error::is_not_found`] for an unknown case;
/// [`Error::WriteFile`] when the folder cannot be written; store and evidence failures.
pub async fn write_package(
    store: &Store,
    case: CaseId,
    dir: &Path,
    force: bool,
) -> Result<Package> {
    let view = case_view(store, case).await?;
    let work = store
        .work(view.case.work_id)
        .await
        .map_err(store_err("reading the case's work"))?;
    let ids: Vec<SnapshotId> = view.snapshots().into_iter().map(|(id, _)| id).collect();

    let mut texts = Vec::new();
    for &id in &ids {
        match store.page_text(id).await {
            Ok(text) => texts.push((id, text.body)),
            Err(store::Error::NotFound { .. }) => {}
            Err(e) => return Err(store_err("reading a page text")(e)),
        }
    }
    let mut tokens: Vec<TimestampToken> = Vec::new();
    for r in store
        .case_timestamps(case)
        .await
        .map_err(store_err("reading the case's timestamp tokens"))?
    {
        // Only a token over the snapshot's evidence: one stored before revisits were kept
        // as such covers a 304's empty body, which proves nothing.
        if ids.contains(&r.snapshot)
            && !tokens.iter().any(|t| t.snapshot == r.snapshot)
            && timestamp::verify(&r.token, &r.sha256, None, None).is_ok()
        {
            tokens.push(TimestampToken {
                snapshot: r.snapshot,
                der: r.token,
            });
        }
    }
    let passages = passages(store, &view, &texts).await?;
    let mut shots = Vec::new();
    let mut shot_tokens = Vec::new();
    for &id in &ids {
        if let Some(render) = store
            .latest_screenshot(id)
            .await
            .map_err(store_err("reading a screenshot"))?
        {
            if let Some(info) = &render.screenshot
                && let Some(token) = store
                    .screenshot_token(&info.sha256)
                    .await
                    .map_err(store_err("reading a screenshot's token"))?
            {
                shot_tokens.push((id, token.token));
            }
            shots.push(render);
        }
    }

    let mut planned: Vec<String> = vec![WARC_FILE.to_owned()];
    planned.extend(texts.iter().map(|(id, _)| text_path(*id)));
    planned.extend(shots.iter().map(|r| screenshot_path(r.snapshot)));
    planned.push("passages.json".to_owned());
    planned.extend(tokens.iter().map(|t| token_path(t.snapshot)));
    planned.extend(shot_tokens.iter().map(|(id, _)| screenshot_token_path(*id)));
    planned.push("README.txt".to_owned());
    planned.push(MANIFEST_FILE.to_owned());
    if !force && let Some(path) = planned.iter().map(|p| dir.join(p)).find(|p| p.exists()) {
        return Err(Error::Exists(path));
    }
    for sub in ["texts", "timestamps", "screenshots"] {
        let sub = dir.join(sub);
        std::fs::create_dir_all(&sub).map_err(|source| Error::WriteFile { path: sub, source })?;
    }

    let mut files = Vec::new();
    let (warc_file, written, shot_files) = write_warc(store, &view, &ids, &shots, dir).await?;
    files.push(warc_file);
    files.extend(shot_files.iter().map(|(_, file, _)| file.clone()));
    for (id, text) in &texts {
        files.push(write_file(dir, &text_path(*id), text.as_bytes())?);
    }
    let json = serde_json::to_vec_pretty(&passages).map_err(|source| Error::Encode {
        what: "the aligned passages",
        source,
    })?;
    files.push(write_file(dir, "passages.json", &json)?);
    for t in &tokens {
        files.push(write_file(dir, &token_path(t.snapshot), &t.der)?);
    }
    for (id, der) in &shot_tokens {
        files.push(write_file(dir, &screenshot_token_path(*id), der)?);
    }
    files.push(write_file(dir, "README.txt", readme(&view).as_bytes())?);

    let mut snapshots = Vec::with_capacity(ids.len());
    for Written {
        row,
        record: record_id,
        capture,
    } in written
    {
        let id = row.id;
        let text = texts.iter().any(|(t, _)| *t == id).then(|| text_path(id));
        let (body_sha256, wire_sha256, evidence_sha256) = match &capture {
            Some(c) => (None, None, c.body_sha256.clone()),
            None => (
                Some(hex(&row.sha256)),
                row.wire_sha256.map(|d| hex(&d)),
                hex(&row.sha256),
            ),
        };
        snapshots.push(ManifestSnapshot {
            id,
            url: row.url,
            final_url: row.final_url,
            status: row.status,
            fetched_at: row.fetched_at,
            body_sha256,
            wire_sha256,
            evidence_sha256,
            warc_record_id: record_id,
            unchanged_since: capture.as_ref().map(|c| unchanged_since(c.fetched_at)),
            text_from: capture
                .as_ref()
                .filter(|_| text.is_some())
                .map(|c| c.snapshot),
            revisit_of: capture,
            text,
            timestamp: tokens
                .iter()
                .any(|t| t.snapshot == id)
                .then(|| token_path(id)),
            screenshot: shot_files
                .iter()
                .find(|(render, _, _)| render.snapshot == id)
                .map(|(render, file, record)| ManifestScreenshot {
                    path: file.path.clone(),
                    sha256: file.sha256.clone(),
                    width: render.screenshot.as_ref().map_or(0, |s| s.width),
                    height: render.screenshot.as_ref().map_or(0, |s| s.height),
                    rendered_at: render.rendered_at,
                    warc_record_id: record.clone(),
                    timestamp: shot_tokens
                        .iter()
                        .any(|(t, _)| *t == id)
                        .then(|| screenshot_token_path(id)),
                }),
        });
    }
    let manifest = Manifest {
        format: "copyhound-evidence/1",
        tool: Tool {
            name: "copyhound",
            version: env!("CARGO_PKG_VERSION"),
        },
        written_at: Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
        case: &view.case,
        work: WorkSummary {
            id: work.id,
            title: work.title,
            author: work.author,
        },
        snapshots,
        files: &files,
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|source| Error::Encode {
        what: "the manifest",
        source,
    })?;
    let manifest_file = write_file(dir, MANIFEST_FILE, &json)?;
    Ok(Package {
        dir: dir.to_owned(),
        snapshots: ids.len(),
        files,
        manifest_sha256: manifest_file.sha256,
    })
}

fn text_path(id: SnapshotId) -> String {
    format!("texts/{id}.txt")
}

fn screenshot_path(id: SnapshotId) -> String {
    format!("screenshots/{id}.png")
}

fn screenshot_token_path(id: SnapshotId) -> String {
    format!("timestamps/screenshot-{id}.tsr")
}

fn token_path(id: SnapshotId) -> String {
    format!("timestamps/{id}.tsr")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A `Write` that hashes and counts what passes through.
struct Hashing<W> {
    inner: W,
    hasher: sha2::Sha256,
    bytes: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W> Hashing<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: sha2::Sha256::new(),
            bytes: 0,
        }
    }

    fn finish(self, path: &str) -> (W, PackageFile) {
        let file = PackageFile {
            path: path.to_owned(),
            sha256: hex(&self.hasher.finalize()),
            bytes: self.bytes,
        };
        (self.inner, file)
    }
}

fn write_file(dir: &Path, rel: &str, bytes: &[u8]) -> Result<PackageFile> {
    let path = dir.join(rel);
    std::fs::write(&path, bytes).map_err(|source| Error::WriteFile { path, source })?;
    let mut h = Hashing::new(std::io::sink());
    h.write_all(bytes).expect("a sink takes every byte");
    Ok(h.finish(rel).1)
}

/// One snapshot of the case as written to the WARC file.
struct Written {
    row: SnapshotRecord,
    /// Its `response` (or `revisit`) record id.
    record: String,
    /// For a revisit: the capture it confirms.
    capture: Option<ManifestCapture>,
}

/// Streams the case's snapshots into `case.warc.gz` in `dir`, one snapshot's bodies in memory
/// at a time, each rendered page's screenshot after its response as a `resource` record of
/// `urn:view:<page URL>` (and written to `screenshots/<snapshot>.png`), a revisit after the
/// capture it confirms (written first when it is not the case's own); returns the WARC file,
/// each snapshot as [`Written`] in `ids` order, and each screenshot's render, file and record
/// id.
async fn write_warc(
    store: &Store,
    view: &CaseView,
    ids: &[SnapshotId],
    shots: &[store::RenderRecord],
    dir: &Path,
) -> Result<(
    PackageFile,
    Vec<Written>,
    Vec<(store::RenderRecord, PackageFile, String)>,
)> {
    let path = dir.join(WARC_FILE);
    let failed = |source| Error::WriteFile {
        path: path.clone(),
        source,
    };
    let file = std::fs::File::create(&path).map_err(failed)?;
    let mut warc = crawler::WarcWriter::new_gzip(Hashing::new(std::io::BufWriter::new(file)));
    let case = view.case.id.to_string();
    warc.write_warcinfo(
        WARC_FILE,
        &[
            ("description", "copyhound case evidence"),
            ("copyhound-case", &case),
            ("copyhound-site", &view.case.site),
            ("copyhound-work", &view.case.work_title),
        ],
    )?;
    let mut rows: Vec<Written> = Vec::with_capacity(ids.len());
    let mut shot_files = Vec::with_capacity(shots.len());
    // Captures written so far, by id, with their response record: a capture that revisits
    // of the case confirm is written once, before the first of them.
    let mut captures: Vec<(SnapshotId, crawler::warc::RecordId)> = Vec::new();
    for &id in ids {
        let row = store
            .snapshot(id)
            .await
            .map_err(store_err("reading a snapshot"))?;
        let mut capture = None;
        if let Some(of) = row.revisit_of {
            let confirmed = store
                .snapshot(of)
                .await
                .map_err(store_err("reading the capture a revisit confirms"))?;
            let record = match captures.iter().find(|(c, _)| *c == of) {
                Some((_, record)) => record.clone(),
                None if confirmed.body_removed_at.is_none() => {
                    let written =
                        crate::warc_export::write_stored(store, &mut warc, &confirmed).await?;
                    captures.push((of, written.response.clone()));
                    written.response
                }
                // gc removed its bodies: the revisit still names its record.
                None => {
                    crawler::warc::Revisited::without_payload(
                        &confirmed.final_url,
                        confirmed.fetched_at,
                        crawler::Sha256(confirmed.sha256),
                    )
                    .record
                }
            };
            capture = Some(ManifestCapture {
                snapshot: of,
                fetched_at: confirmed.fetched_at,
                body_sha256: hex(&confirmed.sha256),
                warc_record_id: record.as_str().to_owned(),
            });
        }
        // A snapshot of the case written already, as the capture an earlier revisit confirms.
        let response = match captures.iter().find(|(c, _)| *c == id) {
            Some((_, record)) => record.clone(),
            None => {
                let written = crate::warc_export::write_stored(store, &mut warc, &row).await?;
                captures.push((id, written.response.clone()));
                written.response
            }
        };
        if let Some(render) = shots.iter().find(|r| r.snapshot == id)
            && let Some(info) = &render.screenshot
            && let Some(png) = store
                .screenshot_png(&info.sha256)
                .await
                .map_err(store_err("reading a screenshot"))?
        {
            let record = warc.write_resource(
                &crawler::warc::view_uri(&render.final_url),
                render.rendered_at,
                "image/png",
                &png,
                Some(&response),
            )?;
            let file = write_file(dir, &screenshot_path(id), &png)?;
            shot_files.push((render.clone(), file, record.as_str().to_owned()));
        }
        rows.push(Written {
            row,
            record: response.as_str().to_owned(),
            capture,
        });
    }
    let hashing = warc.finish()?;
    let (out, file) = hashing.finish(WARC_FILE);
    out.into_inner()
        .map_err(|e| failed(e.into_error()))?
        .sync_all()
        .map_err(failed)?;
    Ok((file, rows, shot_files))
}

/// One aligned passage with both texts' excerpts.
#[derive(Debug, Clone, Serialize)]
struct PassageOut {
    /// Byte range in the page text (`texts/<snapshot>.txt`).
    page: std::ops::Range<usize>,
    /// Byte range in the chapter's text as registered.
    chapter: std::ops::Range<usize>,
    /// Matched normalised characters.
    chars: usize,
    page_text: Option<String>,
    chapter_text: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct PageMatch {
    snapshot: SnapshotId,
    url: String,
    fetched_at: DateTime<Utc>,
    score: f64,
    coverage: f64,
    passages: Vec<PassageOut>,
}

#[derive(Debug, Clone, Serialize)]
struct ChapterPassages {
    chapter_id: ChapterId,
    chapter_index: u32,
    chapter_title: String,
    coverage: f64,
    pages: Vec<PageMatch>,
}

#[derive(serde::Deserialize)]
struct Span {
    page: std::ops::Range<usize>,
    chapter: std::ops::Range<usize>,
    chars: usize,
}

async fn passages(
    store: &Store,
    view: &CaseView,
    texts: &[(SnapshotId, String)],
) -> Result<Vec<ChapterPassages>> {
    let mut by_chapter: BTreeMap<ChapterId, Vec<&CaseMatch>> = BTreeMap::new();
    for m in &view.matches {
        by_chapter.entry(m.chapter_id).or_default().push(m);
    }
    let mut out = Vec::with_capacity(view.chapters.len());
    for chapter in &view.chapters {
        let body = store
            .chapter(chapter.chapter_id)
            .await
            .map_err(store_err("reading a chapter"))?
            .body;
        let mut pages = Vec::new();
        for m in by_chapter.remove(&chapter.chapter_id).unwrap_or_default() {
            let page = texts
                .iter()
                .find(|(id, _)| *id == m.snapshot_id)
                .map(|(_, t)| t.as_str());
            // Passages the matcher wrote; a row it could not parse has none to show.
            let spans: Vec<Span> = serde_json::from_str(&m.passages).unwrap_or_default();
            pages.push(PageMatch {
                snapshot: m.snapshot_id,
                url: m.url.clone(),
                fetched_at: m.fetched_at,
                score: m.score,
                coverage: m.coverage,
                passages: spans
                    .into_iter()
                    .map(|s| PassageOut {
                        page_text: page.and_then(|t| t.get(s.page.clone())).map(str::to_owned),
                        chapter_text: body.get(s.chapter.clone()).map(str::to_owned),
                        page: s.page,
                        chapter: s.chapter,
                        chars: s.chars,
                    })
                    .collect(),
            });
        }
        out.push(ChapterPassages {
            chapter_id: chapter.chapter_id,
            chapter_index: chapter.chapter_index,
            chapter_title: chapter.chapter_title.clone(),
            coverage: chapter.coverage,
            pages,
        });
    }
    Ok(out)
}

fn readme(view: &CaseView) -> String {
    format!(
        "copyhound evidence package: case {case}, {work} on {site}\n\
         \n\
         manifest.json lists every other file with its SHA-256 and size; keep the SHA-256 of\n\
         manifest.json itself with the package's record (copyhound prints it when it writes\n\
         the package).\n\
         \n\
         To verify:\n\
         \n\
         1. Each file against the manifest, e.g. `sha256sum texts/1.txt` (or\n\
            `python3 -c \"import hashlib,json; m=json.load(open('manifest.json'));\n\
            print(all(hashlib.sha256(open(f['path'],'rb').read()).hexdigest()==f['sha256']\n\
            for f in m['files']))\"`).\n\
         2. The WARC file (ISO 28500, WARC 1.1) with a standard reader, e.g.\n\
            `pip install warcio; python3 -m warcio.cli check -v case.warc.gz`: every record's\n\
            WARC-Block-Digest and WARC-Payload-Digest (SHA-256, base32) is checked.\n\
            A response record holds the bytes as the server sent them, Content-Encoding\n\
            (gzip, br, ...) still applied; its request record holds the request line and\n\
            headers as sent. The metadata record after it gives body-sha256, the SHA-256 of\n\
            the body with Content-Encoding removed: the hash the case's matches name and the\n\
            manifest lists as body_sha256. A response record with a WARC-Copyhound-Warning\n\
            field was fetched before the bytes as served were kept: its payload is the\n\
            decoded body.\n\
         3. texts/<snapshot>.txt is the main text extracted from a page; passages.json gives,\n\
            per chapter of the work, the passages of each page aligned with the chapter as\n\
            byte ranges of both texts, with the text of each.\n\
         4. timestamps/<snapshot>.tsr, when present, is an RFC 3161 timestamp token (a CMS\n\
            ContentInfo) over the snapshot's evidence_sha256 (its body_sha256; see 6 for a\n\
            revisit). `openssl ts -reply -token_in -in FILE -text` shows it;\n\
            `openssl ts -verify -token_in -in FILE -digest EVIDENCE_SHA256\n\
            -CAfile TSA_CA.pem` checks it against the authority's certificate.\n\
         5. screenshots/<snapshot>.png, when present, is the page as a headless Chromium showed\n\
            it (full page, height capped), taken when the page was rendered; the WARC file holds\n\
            the same bytes as a resource record whose WARC-Concurrent-To names the page's\n\
            response record, and the manifest gives its SHA-256 and when it was rendered;\n\
            timestamps/screenshot-<snapshot>.tsr, when present, is an RFC 3161 token over that\n\
            SHA-256 (checked as in 4, with -digest SCREENSHOT_SHA256). Its WARC-Target-URI is\n\
            urn:view:<page URL>, so a replay tool shows the page, not the screenshot.\n\
         6. A snapshot with revisit_of in the manifest is a re-fetch the server answered\n\
            304 Not Modified: the copy was still there, unchanged since the capture it names\n\
            (\"unchanged since <date> (server said 304)\"). It has no body of its own: the WARC\n\
            file holds it as a revisit record (profile server-not-modified) whose\n\
            WARC-Refers-To names that capture's response record, its text was read from that\n\
            capture's body (text_from), and its token covers evidence_sha256, the capture's\n\
            body SHA-256, stamped at the time of the revisit.\n",
        case = view.case.id,
        work = view.case.work_title,
        site = view.case.site,
    )
}
