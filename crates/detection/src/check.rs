//! `check`'s core: local files, directories of pages or single URLs matched against the
//! registered works without crawling or recording anything. Each page is read (fetched),
//! decoded, extracted with the crawl's own rules (`[crawler.extract]`: selectors, limits,
//! time budget) and matched on a blocking thread, a bounded number at once; results come
//! back in input order whatever order they finish in. Printing is the caller's.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bounds::text::escape_controls;
use crawler::{BodyStatus, FetchRequest, FetchSettings, Fetcher};
use extract::fonts::FetchedFont;
use extract::{ExtractSettings, Extractor, PageKind, TextSource};
use jobs::{Error, Result, store_err};
use matcher::{Match, Matcher};
use serde::Serialize;
use store::{Store, WorkReads};
use url::Url;

use crate::texts::{StoreTexts, TextCache, find};

/// A checked page: its main text, what kind of page it is, the matches, and the matched
/// chapters' texts.
#[derive(Debug)]
pub struct Checked {
    /// The main text matched.
    pub text: String,
    /// What extraction made of the page: a page with no match that is a challenge, a
    /// redirect stub or empty was never a chapter.
    pub kind: PageKind,
    /// Where the text came from: the markup, an inline script that writes it, the
    /// same-site endpoint the page's script fetches it from (fetched too, for a URL), or
    /// the page's own remapped font (fetched for a URL, read from beside a file).
    pub source: TextSource,
    /// The registered chapters it copies, best first.
    pub matches: Vec<Match>,
    /// Their texts.
    pub texts: StoreTexts,
}

/// What checks pages: the index, the store for chapter texts, a fetcher for URLs and the
/// crawl's extractor.
#[derive(Clone, Debug)]
pub struct Checker {
    matcher: Arc<Matcher>,
    store: Store,
    fetcher: Fetcher,
    extractor: Arc<Extractor>,
    extract: ExtractSettings,
    texts: Arc<TextCache>,
    /// The OCR engine, when `[crawler.extract.ocr]` is on and it is installed.
    ocr: Option<Arc<dyn extract::OcrEngine>>,
}

impl Checker {
    /// A checker that fetches URLs with `fetch` (user agent, timeouts, size cap, which
    /// addresses may be reached) and reads pages with `extract`, as a crawl would.
    ///
    /// # Errors
    /// Settings the fetcher or the extractor refuse.
    pub fn new(
        matcher: Arc<Matcher>,
        store: Store,
        fetch: FetchSettings,
        extract: ExtractSettings,
    ) -> Result<Self> {
        let fetcher = Fetcher::new(fetch)?;
        let extractor = Arc::new(Extractor::new(&extract).map_err(crawler::Error::from)?);
        let ocr = extract::Tesseract::enabled(&extract.ocr).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "pages served as images will not be read");
            None
        });
        Ok(Checker {
            ocr,
            matcher,
            store,
            fetcher,
            extractor,
            extract,
            texts: Arc::default(),
        })
    }

    /// Checks `inputs`, `jobs` at once, and hands each result to `each` in input order. An
    /// input that cannot be read or fetched is an `Err` for `each`; a database failure or an
    /// error of `each` ends the run.
    ///
    /// # Errors
    /// A database failure, a panicked task, or `each`'s error.
    pub async fn run<E: From<Error>>(
        &self,
        inputs: Vec<String>,
        jobs: usize,
        mut each: impl AsyncFnMut(String, Result<Checked>) -> Result<(), E>,
    ) -> Result<(), E> {
        type Running = tokio::task::JoinHandle<Result<Result<Checked>>>;
        let mut running: VecDeque<(String, Running)> = VecDeque::new();
        let mut inputs = inputs.into_iter();
        loop {
            while running.len() < jobs.max(1) {
                let Some(input) = inputs.next() else { break };
                let task = tokio::spawn(self.clone().one(input.clone()));
                running.push_back((input, task));
            }
            let Some((input, task)) = running.pop_front() else {
                return Ok(());
            };
            let checked = task
                .await
                .map_err(|e| Error::task("checking a page", e))??;
            each(input, checked).await?;
        }
    }

    /// One input: `Ok(Err(..))` when it cannot be read, `Err` on a database failure.
    async fn one(self, input: String) -> Result<Result<Checked>> {
        let read = if is_url(&input) {
            match self.fetch(&input).await {
                Ok(read) => Some(read),
                Err(e) => return Ok(Err(e)),
            }
        } else {
            None
        };
        let runtime = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let (text, kind, source, fonts, images) = match read {
                Some(read) => read,
                None => match self.read_file(Path::new(&input)) {
                    Ok((read, page)) => {
                        let fonts = self.file_fonts(&page, &read);
                        let images = self.file_images(&page, &read);
                        (read.text, read.kind, read.source, fonts, images)
                    }
                    Err(e) => return Ok(Err(e)),
                },
            };
            let (text, source) = self.apply_fonts(text, source, &fonts);
            let (text, kind, source) = self.apply_ocr(text, kind, source, &images);
            let (matches, texts) = find(&self.matcher, &self.store, &text, &runtime, &self.texts)?;
            Ok(Ok(Checked {
                text,
                kind,
                source,
                matches,
                texts,
            }))
        })
        .await
        .map_err(|e| Error::task("checking a page", e))?
    }

    /// `text` read through the page's `fonts` as the crawl reads it
    /// ([`extract::fonts::decode_text`]), with where it came from; each font that could not
    /// be used is logged. CPU work: on a blocking thread.
    fn apply_fonts(
        &self,
        text: String,
        source: TextSource,
        fonts: &[FetchedFont],
    ) -> (String, TextSource) {
        if fonts.is_empty() {
            return (text, source);
        }
        let decoder = extract::fonts::decoder(&self.extract.fonts);
        let decoded = extract::fonts::decode_text(&decoder, &text, fonts);
        for note in &decoded.notes {
            tracing::info!(%note, "page font not used");
        }
        if decoded.replaced > 0 {
            (decoded.text, TextSource::Font)
        } else {
            (text, source)
        }
    }

    /// `text` replaced by what OCR reads from the page's `images` when that is more, as the
    /// crawl does. CPU work and subprocesses: on a blocking thread.
    fn apply_ocr(
        &self,
        text: String,
        kind: PageKind,
        source: TextSource,
        images: &[extract::ocr::FetchedImage],
    ) -> (String, PageKind, TextSource) {
        let Some(engine) = self.ocr.as_ref().filter(|_| !images.is_empty()) else {
            return (text, kind, source);
        };
        let deadline = Instant::now() + self.extract.ocr.page_budget;
        let read = extract::ocr::read_images(engine.as_ref(), &self.extract.ocr, images, deadline);
        for image in &read.images {
            if let Some(note) = &image.note {
                tracing::info!(image = %image.url, %note, "page image not read");
            }
        }
        if read.chars() > text.chars().filter(|c| !c.is_whitespace()).count() {
            (read.text, PageKind::Content, TextSource::Ocr)
        } else {
            (text, kind, source)
        }
    }

    /// The images worth reading of a page ([`extract::ocr::images_to_fetch`]), as URLs.
    fn images_wanted(&self, url: &Url, read: &PageRead) -> Vec<Url> {
        if self.ocr.is_none()
            || matches!(
                read.kind,
                PageKind::Redirect | PageKind::Index | PageKind::Challenge
            )
        {
            return Vec::new();
        }
        extract::ocr::images_to_fetch(
            &self.extract.ocr,
            url.host_str(),
            read.text.chars().count(),
            &read.images,
        )
        .map(|(_, wanted)| wanted.into_iter().map(|i| i.url.clone()).collect())
        .unwrap_or_default()
    }

    /// The images a page read from a file shows, read from beside it
    /// ([`extract::fonts::read_file_beside`]).
    fn file_images(&self, page: &Url, read: &PageRead) -> Vec<extract::ocr::FetchedImage> {
        self.images_wanted(page, read)
            .into_iter()
            .map(|url| {
                let bytes =
                    extract::fonts::read_file_beside(page, &url, self.extract.ocr.max_image_bytes);
                (url, bytes)
            })
            .collect()
    }

    /// The images at `urls`, fetched as any fetch of `check` (the fetcher's address rules)
    /// with the image body cap.
    async fn fetch_images(&self, urls: Vec<Url>) -> Vec<extract::ocr::FetchedImage> {
        let mut images = Vec::with_capacity(urls.len());
        for url in urls {
            let request = crawler::fetch::image_request(url.clone(), &self.extract.ocr);
            let bytes = match self.fetcher.fetch(&request).await {
                Ok(a)
                    if (200..300).contains(&a.status) && a.body_status == BodyStatus::Complete =>
                {
                    Ok(a.body.to_vec())
                }
                Ok(a) if (200..300).contains(&a.status) => Err(format!(
                    "not an image or over the cap of {} bytes",
                    self.extract.ocr.max_image_bytes
                )),
                Ok(a) => Err(format!("the server answered HTTP {}", a.status)),
                Err(e) => Err(format!("fetch failed: {e}")),
            };
            images.push((url, bytes));
        }
        images
    }

    /// The fonts a page read from a file names, read from beside it
    /// ([`extract::fonts::read_file_font`]).
    fn file_fonts(&self, page: &Url, read: &PageRead) -> Vec<FetchedFont> {
        extract::fonts::sources_to_fetch(&self.extract.fonts, &read.text, &read.fonts)
            .iter()
            .map(|url| {
                let bytes = extract::fonts::read_file_font(page, url, &self.extract.fonts);
                (url.clone(), bytes)
            })
            .collect()
    }

    /// The fonts at `urls`, fetched as any fetch of `check` (the fetcher's address rules)
    /// with the font body cap.
    async fn fetch_fonts(&self, urls: &[Url]) -> Vec<FetchedFont> {
        let mut fonts = Vec::with_capacity(urls.len());
        for url in urls {
            let request = crawler::fetch::font_request(url.clone(), &self.extract.fonts);
            let bytes = match self.fetcher.fetch(&request).await {
                Ok(a)
                    if (200..300).contains(&a.status) && a.body_status == BodyStatus::Complete =>
                {
                    Ok(a.body.to_vec())
                }
                Ok(a) if (200..300).contains(&a.status) => Err(format!(
                    "not a font or over the cap of {} bytes",
                    self.extract.fonts.max_font_bytes
                )),
                Ok(a) => Err(format!("the server answered HTTP {}", a.status)),
                Err(e) => Err(format!("fetch failed: {e}")),
            };
            fonts.push((url.clone(), bytes));
        }
        fonts
    }

    /// The glyph sprites at `urls`, fetched as any fetch of `check` (the fetcher's address
    /// rules) with the sprite's size cap.
    async fn fetch_sprites(&self, urls: &[Url]) -> Vec<extract::sprite::FetchedSprite> {
        let mut sprites = Vec::with_capacity(urls.len());
        for url in urls {
            let request = crawler::fetch::sprite_request(url.clone());
            let bytes = match self.fetcher.fetch(&request).await {
                Ok(a)
                    if (200..300).contains(&a.status) && a.body_status == BodyStatus::Complete =>
                {
                    Ok(a.body.to_vec())
                }
                Ok(a) if (200..300).contains(&a.status) => {
                    Err("not an SVG or over its size cap".to_owned())
                }
                Ok(a) => Err(format!("the server answered HTTP {}", a.status)),
                Err(e) => Err(format!("fetch failed: {e}")),
            };
            sprites.push((url.clone(), bytes));
        }
        sprites
    }

    /// The main text of the page at `input`, its kind, where the text came from and its
    /// fonts: when the page holds no chapter but its script names a same-site content
    /// endpoint, the endpoint is fetched too and its text taken if it is more; when its text
    /// holds Private Use Area code points, the fonts its style names are fetched.
    async fn fetch(&self, input: &str) -> Result<Fetched> {
        let url = Url::parse(input).map_err(|e| Error::Page(format!("bad url {input:?}: {e}")))?;
        let snapshot = self.fetcher.fetch(&FetchRequest::get(url)).await?;
        if !(200..300).contains(&snapshot.status) {
            return Err(Error::Page(format!(
                "the server answered HTTP {}",
                snapshot.status
            )));
        }
        let this = self.clone();
        let page = snapshot.clone();
        let snapshot_url = snapshot.final_url.clone();
        let read = tokio::task::spawn_blocking(move || {
            this.read(
                &page.body,
                page.content_type(),
                &page.final_url,
                &extract::PageAssets::default(),
            )
        })
        .await
        .map_err(|e| Error::task("reading a page", e))??;
        // Glyph sprites its style names: fetched, and the page read again with them.
        let read = if read.sprites.is_empty() {
            read
        } else {
            let sprites = self.fetch_sprites(&read.sprites).await;
            let this = self.clone();
            tokio::task::spawn_blocking(move || {
                let assets = extract::PageAssets {
                    sprites,
                    ..extract::PageAssets::default()
                };
                this.read(
                    &snapshot.body,
                    snapshot.content_type(),
                    &snapshot.final_url,
                    &assets,
                )
            })
            .await
            .map_err(|e| Error::task("reading a page", e))??
        };
        let wanted = extract::fonts::sources_to_fetch(&self.extract.fonts, &read.text, &read.fonts);
        let fonts = self.fetch_fonts(wanted).await;
        let images = self
            .fetch_images(self.images_wanted(&snapshot_url, &read))
            .await;
        let PageRead {
            text,
            kind,
            source,
            endpoint,
            ..
        } = read;
        let Some(endpoint) = endpoint else {
            return Ok((text, kind, source, fonts, images));
        };
        let request = FetchRequest {
            accept_json: true,
            accept_font: false,
            accept_svg: false,
            accept_image: false,
            ..FetchRequest::get(endpoint)
        };
        let answer = match self.fetcher.fetch(&request).await {
            Ok(a) if (200..300).contains(&a.status) => a,
            _ => return Ok((text, kind, source, fonts, images)),
        };
        let extractor = Arc::clone(&self.extractor);
        let deadline = Instant::now() + self.extract.time_budget;
        let read = tokio::task::spawn_blocking(move || {
            extract::read_endpoint(
                &extractor,
                &answer.body,
                answer.content_type(),
                &answer.final_url,
                Some(deadline),
            )
        })
        .await
        .map_err(|e| Error::task("reading a content endpoint", e))?;
        Ok(if read.text.chars().count() > text.chars().count() {
            (read.text, read.kind, read.source, fonts, images)
        } else {
            (text, kind, source, fonts, images)
        })
    }

    /// The main text of a file (`.html`/`.htm` extracted, anything else read as text),
    /// decoded from whatever encoding, as [`Checker::read`] gives it, and the file's URL.
    fn read_file(&self, path: &Path) -> Result<(PageRead, Url)> {
        let bytes = std::fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        let is_html = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
        let content_type = if is_html { "text/html" } else { "text/plain" };
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let base = Url::from_file_path(&absolute).map_err(|()| {
            Error::Page(format!("cannot make a file url of {}", absolute.display()))
        })?;
        let read = self.read(
            &bytes,
            Some(content_type),
            &base,
            &extract::PageAssets::default(),
        )?;
        // Glyph sprites the page's style names, read from beside it, and the page read again
        // with them.
        if read.sprites.is_empty() {
            return Ok((read, base));
        }
        let sprites = read
            .sprites
            .iter()
            .map(|u| (u.clone(), extract::sprite::read_file_sprite(&base, u)))
            .collect();
        let assets = extract::PageAssets {
            sprites,
            ..extract::PageAssets::default()
        };
        Ok((self.read(&bytes, Some(content_type), &base, &assets)?, base))
    }

    /// A page read as the crawl reads it, within the extraction time budget: its text, kind,
    /// where the text came from and the content endpoint its script names.
    fn read(
        &self,
        body: &[u8],
        content_type: Option<&str>,
        url: &Url,
        assets: &extract::PageAssets,
    ) -> Result<PageRead> {
        let deadline = Instant::now() + self.extract.time_budget;
        let read = extract::read_page_with(
            &self.extractor,
            body,
            content_type,
            url,
            Some(deadline),
            assets,
        );
        if let Some(exceeded) = read.exceeded() {
            return Err(Error::Page(format!("{exceeded}: the page is not read")));
        }
        let endpoint = read
            .extracted
            .as_ref()
            .and_then(|e| e.content_endpoint.clone());
        let fonts = read
            .extracted
            .as_ref()
            .map(|e| e.font_sources.clone())
            .unwrap_or_default();
        let sprites = read
            .extracted
            .as_ref()
            .map(|e| e.sprite_sources.clone())
            .unwrap_or_default();
        let images = read
            .extracted
            .as_ref()
            .map(|e| e.images.clone())
            .unwrap_or_default();
        Ok(PageRead {
            images,
            text: read.text,
            kind: read.kind,
            source: read.source,
            endpoint,
            fonts,
            sprites,
        })
    }
}

/// A page's text, kind, where the text came from, the content endpoint its script names and
/// the fonts its style names.
struct PageRead {
    text: String,
    kind: PageKind,
    source: TextSource,
    endpoint: Option<Url>,
    fonts: Vec<Url>,
    /// Glyph sprites its style names and it was not read with.
    sprites: Vec<Url>,
    /// The `<img>`s that could hold its text.
    images: Vec<extract::PageImage>,
}

/// A fetched page's text, kind and source, and the fonts and images fetched with it.
type Fetched = (
    String,
    PageKind,
    TextSource,
    Vec<FetchedFont>,
    Vec<extract::ocr::FetchedImage>,
);

fn is_url(input: &str) -> bool {
    input.starts_with("http://") || input.starts_with("https://")
}

/// `inputs` with every directory replaced by the pages under it, in path order.
///
/// # Errors
/// A directory that cannot be read or holds no page.
pub fn expand_inputs(inputs: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for input in inputs {
        if !is_url(input) && Path::new(input).is_dir() {
            let mut paths = Vec::new();
            collect_pages(Path::new(input), &mut paths)?;
            paths.sort();
            if paths.is_empty() {
                return Err(Error::Page(format!("no .txt or .html pages under {input}")));
            }
            out.extend(paths.into_iter().map(|p| p.to_string_lossy().into_owned()));
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// Every `.txt`, `.html` and `.htm` file under `dir`, recursively.
///
/// # Errors
/// A directory that cannot be read.
pub fn collect_pages(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let read_err = |source| Error::Read {
        path: dir.to_owned(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let path = entry.map_err(read_err)?.path();
        if path.is_dir() {
            collect_pages(&path, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "txt" | "html" | "htm"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// One match of a checked page as `check --json` prints it, one line each.
#[derive(Debug, Serialize)]
pub struct CheckedMatch<'a> {
    /// The input as given (a path or a URL).
    pub input: &'a str,
    /// The work copied.
    pub work_id: i64,
    /// Its title.
    pub work_title: &'a str,
    /// The chapter copied.
    pub chapter_id: i64,
    /// Its 1-based position in the work.
    pub chapter_index: u32,
    /// Its title.
    pub chapter_title: &'a str,
    /// The match's score.
    pub score: f64,
    /// Share of the chapter found on the page.
    pub coverage: f64,
    /// Share of the page that is the chapter.
    pub page_share: f64,
    /// Characters of the chapter matched.
    pub matched_chars: usize,
    /// Characters of the chapter.
    pub chapter_chars: usize,
    /// Characters of the page's text.
    pub page_chars: usize,
    /// Where the page's text came from: `markup`, `script`, `endpoint` or `font` (the
    /// page's text read through its remapped font).
    pub text_source: &'static str,
    /// The aligned passages, byte ranges in both texts.
    pub spans: &'a [matcher::AlignedSpan],
}

impl Checked {
    /// The report of this page checked as `input`: one JSON line per match with `json`,
    /// else each match with its passages (highlighted when `color`), or what the page is when
    /// nothing matched; in the text, what came from the page or the store has its control
    /// characters escaped ([`bounds::text::escape_controls`]), so the colours are the only
    /// escape sequences in it. Work titles are read once per work into `titles`.
    ///
    /// # Errors
    /// A matched work cannot be read.
    pub async fn report(
        &self,
        store: &Store,
        input: &str,
        titles: &mut HashMap<i64, String>,
        json: bool,
        color: bool,
    ) -> Result<String> {
        let mut out = String::new();
        if self.matches.is_empty() && !json {
            let _ = writeln!(
                out,
                "{}: {}",
                escape_controls(input),
                nothing_found(self.kind)
            );
        }
        for m in &self.matches {
            let Some(chapter) = self.texts.chapter(m.chapter) else {
                continue;
            };
            let work_title = match titles.get(&m.work.0) {
                Some(t) => t.clone(),
                None => {
                    let work = store
                        .work(store::WorkId(m.work.0))
                        .await
                        .map_err(store_err("reading a matched work"))?;
                    titles.insert(m.work.0, work.title.clone());
                    work.title
                }
            };
            let reported = CheckedMatch {
                input,
                work_id: m.work.0,
                work_title: &work_title,
                chapter_id: m.chapter.0,
                chapter_index: chapter.info.ordinal,
                chapter_title: &chapter.info.title,
                score: m.score,
                coverage: m.coverage,
                page_share: m.page_share,
                matched_chars: m.matched_chars,
                chapter_chars: m.chapter_chars,
                page_chars: m.page_chars,
                text_source: self.source.as_str(),
                spans: &m.spans,
            };
            if json {
                let line = serde_json::to_string(&reported).map_err(|source| Error::Encode {
                    what: "a match",
                    source,
                })?;
                let _ = writeln!(out, "{line}");
            } else {
                let _ = write_match(&mut out, &reported, m, &self.text, &chapter.body, color);
            }
        }
        Ok(out)
    }
}

/// What to say of a page's text that was not in its markup (`None` for markup).
pub fn source_note(text_source: &str) -> Option<&'static str> {
    match text_source {
        "script" => Some("text written into the page by an inline script"),
        "endpoint" => Some("text fetched by the page's script from a content endpoint of the site"),
        "canvas" => Some("text the page's script draws on a canvas, read from its drawing calls"),
        "sprite" => Some("characters shown as glyphs of an SVG sprite through the page's CSS"),
        _ => None,
    }
}

/// What a page with no match is: a chapter of no registered work, or no chapter at all.
fn nothing_found(kind: PageKind) -> &'static str {
    match kind {
        PageKind::Challenge => {
            "an anti-bot challenge page, not the chapter: no text to match (the site showed a \
             \"checking your browser\" page; fetch it in a browser and save it, or crawl it later)"
        }
        PageKind::Redirect => "a redirect stub with no text of its own: check the page it leads to",
        PageKind::Empty => "no text found on the page",
        PageKind::Index => {
            "a table of contents, not a chapter: no registered work found in its text"
        }
        PageKind::Content => "no registered work found",
    }
}

/// Characters of context shown around a passage, and of a long passage shown at each end.
const CONTEXT_CHARS: usize = 12;
const PASSAGE_END_CHARS: usize = 40;

fn write_match(
    out: &mut String,
    r: &CheckedMatch<'_>,
    m: &Match,
    page: &str,
    chapter: &str,
    color: bool,
) -> std::fmt::Result {
    writeln!(
        out,
        "{}: work {} «{}», chapter {} «{}»: score {:.2}, coverage {:.2}, {} of {} chars matched",
        escape_controls(r.input),
        r.work_id,
        escape_controls(r.work_title),
        r.chapter_index,
        escape_controls(r.chapter_title),
        r.score,
        r.coverage,
        m.matched_chars,
        m.chapter_chars
    )?;
    if let Some(said) = source_note(r.text_source) {
        writeln!(out, "  {said}")?;
    }
    for span in &m.spans {
        writeln!(
            out,
            "  page bytes {}..{} = chapter bytes {}..{} ({} chars)",
            span.page.start, span.page.end, span.chapter.start, span.chapter.end, span.chars
        )?;
        writeln!(out, "    page:    {}", excerpt(page, &span.page, color))?;
        writeln!(
            out,
            "    chapter: {}",
            excerpt(chapter, &span.chapter, color)
        )?;
    }
    Ok(())
}

/// The passage `range` of `text` on one line with a little context, its middle elided when
/// long, highlighted on a terminal.
fn excerpt(text: &str, range: &std::ops::Range<usize>, color: bool) -> String {
    let one_line =
        |s: &str| escape_controls(&s.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned();
    let before: String = {
        let head = &text[..range.start];
        let skip = head.chars().count().saturating_sub(CONTEXT_CHARS);
        head.chars().skip(skip).collect()
    };
    let after: String = text[range.end..].chars().take(CONTEXT_CHARS).collect();
    let passage = &text[range.clone()];
    let count = passage.chars().count();
    let passage = if count > 2 * PASSAGE_END_CHARS + 1 {
        let start: String = passage.chars().take(PASSAGE_END_CHARS).collect();
        let end: String = passage.chars().skip(count - PASSAGE_END_CHARS).collect();
        format!("{} … {}", one_line(&start), one_line(&end))
    } else {
        one_line(passage)
    };
    let (on, off) = if color {
        ("\x1b[1;31m", "\x1b[0m")
    } else {
        ("[", "]")
    };
    format!(
        "{}{on}{passage}{off}{}",
        one_line(&before),
        one_line(&after)
    )
}

/// Pages checked at once by default: twice the cores, so that a core whose page waits for
/// the store (or the network) has another page to work on (measured: 2 at once on 2 cores
/// left a fifth of the time idle).
pub fn default_jobs() -> usize {
    2 * cores()
}

/// The number of cores (1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}
