//! `copyhound bench quality`: the evasion-quality benchmark run through `check`.
//!
//! The pirate pages of `matcher::quality` (every evasion, and the negatives) are rendered as
//! HTML files in several layouts and encodings, the source works are registered in a fresh
//! SQLite store, and the exact pipeline of `copyhound check DIR` (file read, charset
//! detection, main-text extraction, index loaded from the store, candidates, chapter texts
//! from the store, verification) runs over the files. The table per case counts pages,
//! page-level recall, matches, precision and right-chapter attribution.
//!
//! Layouts: `div-br` (`<div id="content">` with `<br>` line breaks, the classic novel-site
//! page), `p-article` (`<article>` of `<p>`), `table` (the text in a table cell, old
//! sites), `biquge` (a real 笔趣阁 page, `crawler/tests/data/html/biquge_info_book_toc.html`,
//! with its chapter list replaced by the chapter). Script-written pages have layouts of
//! their own, an empty `<div id="content">` filled by an inline script: `script-escaped` (the
//! chapter's HTML as `\uXXXX` literals cut into pieces joined with `+=`, assigned to
//! `innerHTML`), `script-write` (`document.write` of raw `'<p>...</p>' +` pieces) and, in
//! `bench pipeline` only (it needs a server), `json-endpoint` (the script fetches the chapter
//! from `N.json`). Encodings, by page: simplified Chinese in
//! UTF-8, GBK with and without a meta charset, and GB18030; traditional Chinese in Big5 with
//! and without a meta charset, and UTF-8; English in UTF-8 and windows-1252. Characters an
//! encoding lacks become numeric character references, as browsers do when submitting forms.
//!
//! With `--out DIR` the pages (`DIR/pages/<case>/...`), what each page copies
//! (`DIR/expected.jsonl`) and the store (`DIR/quality.db`) are kept, so that
//! `copyhound --database sqlite://DIR/quality.db check DIR/pages` can be run over them.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use encoding_rs::{BIG5, Encoding, GB18030, GBK, UTF_8, WINDOWS_1252};
use fingerprint::Fingerprinter;
use matcher::ChapterId;
use matcher::quality::{Case, Corpus, PiratePage, QualityReport, fingerprint_all, pirate_pages};
use serde::Serialize;
use store::{NewChapter, NewWork, SourceFormat, Store, StoreSettings, WorkReads, WorkWrites};

use super::{outln, write_stdout};
use settings::Settings;

/// Options of `bench quality`.
#[derive(Debug, Args)]
pub struct QualityArgs {
    /// Novels: the project corpus (a directory with `zh/` and `en/`, e.g. `../shared/corpus`)
    /// or a directory holding the repository's sample. Default: the sample compiled in
    /// (三国演义 1–10, 西游记 1–4, 红楼梦 1–2 traditional, Alice 1–3 registered; 水浒全传 1–2
    /// and Frankenstein 1–2 not).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Pages per case (fewer when the corpus has too few chapters of the kind).
    #[arg(long, default_value_t = 50)]
    pages: usize,
    /// Seed of the page generator (the same seed makes the same pages).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Novels are cut into chapters of about this many bytes.
    #[arg(long, default_value_t = 12_000)]
    chapter_bytes: usize,
    /// Keep the pages, `expected.jsonl` and the store (`quality.db`) in this directory
    /// (created; pages and store of an earlier run are replaced). Default: a temporary one.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Pages checked at once; default: twice the number of cores.
    #[arg(long)]
    jobs: Option<usize>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Failed pages listed after the table.
    #[arg(long, default_value_t = 20)]
    failures: usize,
}

/// The sample compiled in (public domain; see `crates/matcher/tests/data/README.md`).
const SAMPLE: &[(&str, &str, bool)] = &[
    (
        "sanguoyanyi_1-10",
        include_str!("../../../matcher/tests/data/sanguoyanyi_1-10.txt"),
        true,
    ),
    (
        "xiyouji_1-4",
        include_str!("../../../matcher/tests/data/xiyouji_1-4.txt"),
        true,
    ),
    (
        "hongloumeng_hant_1-2",
        include_str!("../../../matcher/tests/data/hongloumeng_hant_1-2.txt"),
        true,
    ),
    (
        "alice_1-3",
        include_str!("../../../matcher/tests/data/alice_1-3.txt"),
        true,
    ),
    (
        "shuihuquanzhuan_1-2",
        include_str!("../../../matcher/tests/data/shuihuquanzhuan_1-2.txt"),
        false,
    ),
    (
        "frankenstein_1-2",
        include_str!("../../../matcher/tests/data/frankenstein_1-2.txt"),
        false,
    ),
];

/// The sample compiled in, cut into chapters of about `chapter_bytes`.
pub(crate) fn sample_corpus(chapter_bytes: usize) -> Corpus {
    let mut corpus = Corpus::new();
    for (title, text, registered) in SAMPLE {
        if *registered {
            corpus.add_registered(title, text, chapter_bytes);
        } else {
            corpus.add_foreign(title, text, chapter_bytes);
        }
    }
    corpus
}

/// A real novel-site page whose chapter list is replaced by the chapter.
const BIQUGE: &str = include_str!("../../../crawler/tests/data/html/biquge_info_book_toc.html");

/// One row of the JSON output.
#[derive(Debug, Serialize)]
struct CaseRow {
    case: &'static str,
    evasion: bool,
    pages: usize,
    recall: f64,
    pages_with_matches: usize,
    matches: usize,
    precision: f64,
    right_chapter: f64,
    /// Mean coverage of the right matches.
    coverage: f64,
    /// Least coverage of the right matches.
    coverage_min: f64,
}

/// The JSON output.
#[derive(Debug, Serialize)]
struct QualityFigures {
    chapters_registered: usize,
    pages: usize,
    cases: Vec<CaseRow>,
    recall: f64,
    precision: f64,
    right_chapter: f64,
    negative_pages_with_matches: usize,
    missed_targets: Vec<String>,
    seconds: f64,
    pages_per_second: f64,
    out: Option<PathBuf>,
}

/// Runs the benchmark.
pub async fn run(args: QualityArgs, settings: &Settings) -> Result<()> {
    let corpus = match &args.corpus {
        Some(dir) => Corpus::load(dir, args.chapter_bytes)
            .with_context(|| format!("while reading the corpus {}", dir.display()))?,
        None => sample_corpus(args.chapter_bytes),
    };
    if corpus.registered.is_empty() {
        bail!("the corpus has no chapters to register");
    }
    let temp;
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::tempdir().context("while making a temporary directory")?;
            temp.path().to_path_buf()
        }
    };
    let pages_dir = out.join("pages");
    let db_path = out.join("quality.db");
    if pages_dir.exists() {
        std::fs::remove_dir_all(&pages_dir)
            .with_context(|| format!("while removing {}", pages_dir.display()))?;
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db_path.display()));
    }
    std::fs::create_dir_all(&pages_dir)
        .with_context(|| format!("while creating {}", pages_dir.display()))?;
    let database = format!("sqlite://{}", db_path.display());
    let store = Store::open(&database, &StoreSettings::default())
        .await
        .with_context(|| format!("while opening {database}"))?;
    let result = bench(&args, settings, &corpus, &store, &out).await;
    store.close().await;
    let (report, registered, rendered) = result?;
    print(&args, &report, registered, &rendered)
}

/// Registers the corpus, writes the pages, checks them: the report, the chapters
/// registered and the pages written (path, page).
async fn bench(
    args: &QualityArgs,
    settings: &Settings,
    corpus: &Corpus,
    store: &Store,
    out: &Path,
) -> Result<(QualityReport, usize, Vec<PathBuf>)> {
    let jobs = args.jobs.unwrap_or_else(super::check::default_jobs);
    let ids = register(corpus, settings, store, jobs).await?;
    let by_store: HashMap<i64, ChapterId> = ids.iter().map(|(c, s)| (*s, *c)).collect();
    let pages = pirate_pages(corpus, args.pages, args.seed);
    let paths = write_pages(&pages, &ids, out, false)?;
    let started = Instant::now();
    let matcher = Arc::new(super::check::load(store, settings, true).await?);
    let checker = super::check::local_checker(matcher, store, settings)?;
    let inputs = paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let mut reported: Vec<Vec<(ChapterId, f64)>> = Vec::with_capacity(pages.len());
    checker
        .run::<anyhow::Error>(inputs, jobs, async |input, checked| {
            let checked = checked.with_context(|| format!("while reading {input}"))?;
            // A chapter the corpus does not know stays in as an id no page expects.
            reported.push(
                checked
                    .matches
                    .iter()
                    .map(|m| {
                        let chapter = by_store.get(&m.chapter.0).copied().unwrap_or(ChapterId(-1));
                        (chapter, m.coverage)
                    })
                    .collect(),
            );
            Ok(())
        })
        .await?;
    let seconds = started.elapsed().as_secs_f64();
    let report = matcher::quality::score(&pages, &reported, seconds, jobs);
    Ok((report, ids.len(), paths))
}

/// Fingerprints the registered chapters and stores them, one work per novel: corpus id →
/// store id of each chapter.
pub(crate) async fn register(
    corpus: &Corpus,
    settings: &Settings,
    store: &Store,
    threads: usize,
) -> Result<HashMap<ChapterId, i64>> {
    let fingerprinter = Fingerprinter::new(settings.fingerprint.clone())
        .context("while setting up the fingerprinter ([fingerprint] settings)")?;
    let fingerprints = fingerprint_all(&corpus.registered, &fingerprinter, threads);
    let mut ids = HashMap::new();
    let mut start = 0;
    while start < corpus.registered.len() {
        let work = corpus.registered[start].work;
        let end = start
            + corpus.registered[start..]
                .iter()
                .take_while(|c| c.work == work)
                .count();
        let chapters = &corpus.registered[start..end];
        let text: String = chapters.iter().map(|c| c.text.as_str()).collect();
        let new = NewWork {
            title: chapters[0].work_title.clone(),
            author: None,
            content_hash: import::content_hash(&text),
            source_name: Some(format!("{}.txt", chapters[0].work_title)),
            source_format: SourceFormat::Txt,
            source_encoding: Some("UTF-8".into()),
            front_matter: String::new(),
            chapters: chapters
                .iter()
                .zip(&fingerprints[start..end])
                .map(|(c, fp)| NewChapter {
                    title: c.title.clone(),
                    body: c.text.clone(),
                    fingerprint: import::to_stored(fp),
                })
                .collect(),
        };
        let work_id = store
            .insert_work(&new)
            .await
            .context("while registering a work")?
            .id();
        let stored = store.chapters(work_id).await?;
        for (c, s) in chapters.iter().zip(&stored) {
            ids.insert(c.id, s.id.0);
        }
        start = end;
    }
    Ok(ids)
}

/// A file-name-safe name of `case`.
fn slug(case: Case) -> String {
    let mut s: String = case
        .name()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').to_string()
}

/// One line of `expected.jsonl`.
#[derive(Debug, Serialize)]
struct Expected<'a> {
    file: String,
    case: &'static str,
    layout: &'static str,
    encoding: &'static str,
    meta_charset: bool,
    /// Store ids of the chapters the page copies.
    chapter_ids: Vec<i64>,
    origin: &'a str,
}

/// Writes every page as an HTML file under `out/pages/<case>/` and `out/expected.jsonl`;
/// the paths, in page order. With `endpoints`, some script-written pages fetch their text
/// from `N.json` beside them (N the page's place in `pages`), written as the HTML file's
/// path with the extension `json`: a server must serve it at that URL.
pub(crate) fn write_pages(
    pages: &[PiratePage],
    ids: &HashMap<ChapterId, i64>,
    out: &Path,
    endpoints: bool,
) -> Result<Vec<PathBuf>> {
    let mut expected = std::io::BufWriter::new(
        std::fs::File::create(out.join("expected.jsonl"))
            .with_context(|| format!("while writing {}", out.display()))?,
    );
    let mut paths = Vec::with_capacity(pages.len());
    let mut per_case: HashMap<Case, usize> = HashMap::new();
    for (at, page) in pages.iter().enumerate() {
        let n = per_case.entry(page.case).or_default();
        let rendered = render(page, *n, endpoints.then_some(at));
        let dir = out.join("pages").join(slug(page.case));
        std::fs::create_dir_all(&dir)?;
        let name = format!(
            "{:04}-{}-{}{}.html",
            n,
            rendered.layout,
            rendered.encoding.name().to_ascii_lowercase(),
            if rendered.meta { "" } else { "-nometa" }
        );
        *n += 1;
        let path = dir.join(&name);
        std::fs::write(&path, &rendered.bytes)
            .with_context(|| format!("while writing {}", path.display()))?;
        if let Some(json) = &rendered.endpoint {
            let json_path = path.with_extension("json");
            std::fs::write(&json_path, json)
                .with_context(|| format!("while writing {}", json_path.display()))?;
        }
        let line = Expected {
            file: path
                .strip_prefix(out)
                .unwrap_or(&path)
                .display()
                .to_string(),
            case: page.case.name(),
            layout: rendered.layout,
            encoding: rendered.encoding.name(),
            meta_charset: rendered.meta,
            chapter_ids: page
                .expected
                .iter()
                .filter_map(|c| ids.get(c))
                .copied()
                .collect(),
            origin: &page.origin,
        };
        writeln!(expected, "{}", serde_json::to_string(&line)?)?;
        paths.push(path);
    }
    expected.flush()?;
    Ok(paths)
}

/// A page as a file.
struct Rendered {
    bytes: Vec<u8>,
    layout: &'static str,
    encoding: &'static Encoding,
    meta: bool,
    /// The JSON the page's script fetches (`json-endpoint` layout).
    endpoint: Option<String>,
}

const LAYOUTS: [&str; 4] = ["div-br", "p-article", "table", "biquge"];
/// Layouts of script-written pages; the last only when the page is served with its endpoint.
const SCRIPT_LAYOUTS: [&str; 3] = ["script-escaped", "script-write", "json-endpoint"];

/// Renders page number `n` of its case: layout and encoding rotate with `n`, so that a case
/// of eight pages already has every layout and every encoding of its script. `served_as` is
/// the page's number on a served site (`N.json` is its endpoint), `None` for files.
fn render(page: &PiratePage, n: usize, served_as: Option<usize>) -> Rendered {
    let chinese = is_chinese(&page.text);
    let options: &[(&'static Encoding, bool)] = if !chinese {
        &[(UTF_8, true), (WINDOWS_1252, true), (UTF_8, false)]
    } else if zhconv::is_hans(&page.text) {
        &[(UTF_8, true), (GBK, true), (GBK, false), (GB18030, true)]
    } else {
        &[(BIG5, true), (BIG5, false), (UTF_8, true)]
    };
    let script_layouts = if served_as.is_some() { 3 } else { 2 };
    let layout = if page.case == Case::Script {
        SCRIPT_LAYOUTS[n % script_layouts]
    } else {
        LAYOUTS[n % LAYOUTS.len()]
    };
    // Shifted by one every round of layouts, so that each layout meets every encoding.
    let (encoding, meta) = options[(n + n / LAYOUTS.len()) % options.len()];
    let lines: Vec<String> = page
        .text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(escape)
        .collect();
    let title = lines.first().cloned().unwrap_or_default();
    let label = if encoding == WINDOWS_1252 {
        "iso-8859-1"
    } else {
        encoding.name()
    };
    let meta_tag = if meta {
        format!("<meta http-equiv=\"Content-Type\" content=\"text/html; charset={label}\">")
    } else {
        String::new()
    };
    let (home, prev, toc, next) = if chinese {
        ("首页", "上一章", "目录", "下一章")
    } else {
        ("Home", "Previous", "Contents", "Next")
    };
    let nav = format!(
        "<a href=\"/\">{home}</a> <a href=\"prev.html\">{prev}</a> <a href=\"./\">{toc}</a> <a href=\"next.html\">{next}</a>"
    );
    let mut endpoint = None;
    let html = match layout {
        "script-escaped" | "script-write" | "json-endpoint" => {
            let (script, json) = content_script(layout, &lines, served_as);
            endpoint = json;
            format!(
                "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
                 <div class=\"nav\">{nav}</div>\n<div class=\"bookname\"><h1>{title}</h1></div>\n\
                 <div id=\"content\"></div>\n<script>{script}</script>\n\
                 <div class=\"bottem\">{nav}</div>\n</body></html>\n"
            )
        }
        "div-br" => format!(
            "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
             <div class=\"nav\">{nav}</div>\n<div class=\"bookname\"><h1>{title}</h1></div>\n\
             <div id=\"content\">&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br /></div>\n\
             <div class=\"bottem\">{nav}</div>\n</body></html>\n",
            lines.join("<br /><br />\n&nbsp;&nbsp;&nbsp;&nbsp;")
        ),
        "p-article" => format!(
            "<!DOCTYPE html>\n<html><head>{meta_tag}<title>{title}</title></head><body>\n\
             <header><nav>{nav}</nav></header>\n<main><article class=\"chapter\"><h1>{title}</h1>\n<p>{}</p>\n</article></main>\n\
             <footer><nav>{nav}</nav><p>&copy; 2024</p></footer>\n</body></html>\n",
            lines.join("</p>\n<p>")
        ),
        "table" => format!(
            "<html><head>{meta_tag}<title>{title}</title></head><body>\n\
             <table width=\"100%\" border=\"0\"><tr><td class=\"nav\">{nav}</td></tr>\n\
             <tr><td class=\"title\"><b>{title}</b></td></tr>\n\
             <tr><td id=\"text\">{}</td></tr>\n<tr><td class=\"nav\">{nav}</td></tr></table>\n</body></html>\n",
            lines.join("<br>\n")
        ),
        _ => biquge(&meta_tag, &title, &lines),
    };
    let (bytes, _, _) = encoding.encode(&html);
    Rendered {
        bytes: bytes.into_owned(),
        layout,
        encoding,
        meta,
        endpoint,
    }
}

/// The inline script that fills `<div id="content">` with `lines` (HTML-escaped) in a
/// script layout, and the JSON it fetches (`json-endpoint`, from `N.json`).
fn content_script(
    layout: &str,
    lines: &[String],
    served_as: Option<usize>,
) -> (String, Option<String>) {
    let html = lines.join("<br /><br />\n");
    match layout {
        "script-escaped" => {
            // All \uXXXX escapes, in four pieces cut between escapes.
            let escaped: Vec<String> = html.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
            let per = escaped.len().div_ceil(4).max(1);
            let mut script = String::from("var c = \"\";\n");
            for piece in escaped.chunks(per) {
                script += &format!("c += \"{}\";\n", piece.concat());
            }
            script += "document.getElementById(\"content\").innerHTML = c;";
            (script, None)
        }
        "script-write" => {
            let pieces: Vec<String> = lines
                .iter()
                .map(|l| format!("'<p>{}</p>'", l.replace('\\', "\\\\").replace('\'', "\\'")))
                .collect();
            (format!("document.write({});", pieces.join(" +\n")), None)
        }
        _ => {
            let n = served_as.unwrap_or(0);
            let plain: Vec<String> = lines
                .iter()
                .map(|l| {
                    l.replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&amp;", "&")
                })
                .collect();
            let json = serde_json::json!({"code": 0, "data": {"content": plain}}).to_string();
            (
                format!(
                    "$.getJSON(\"{n}.json\", function (d) {{ $(\"#content\").html(d.data.content.join(\"<br>\")); }});"
                ),
                Some(json),
            )
        }
    }
}

/// The 笔趣阁 page with its chapter list replaced by the chapter, its title by the page's,
/// and its meta charset by `meta_tag`.
fn biquge(meta_tag: &str, title: &str, lines: &[String]) -> String {
    let content = format!(
        "<div id=\"content\">&nbsp;&nbsp;&nbsp;&nbsp;{}<br /><br /></div>",
        lines.join("<br /><br />\n&nbsp;&nbsp;&nbsp;&nbsp;")
    );
    let list_start = BIQUGE.find("<div id=\"list\">").unwrap_or(0);
    let list_end = BIQUGE[list_start..]
        .find("</dl>\n</div>")
        .map_or(list_start, |i| list_start + i + "</dl>\n</div>".len());
    let page = format!("{}{content}{}", &BIQUGE[..list_start], &BIQUGE[list_end..]);
    let (title_start, title_end) = (
        page.find("<title>").unwrap_or(0),
        page.find("</title>").unwrap_or(0),
    );
    let page = if title_start < title_end {
        format!(
            "{}<title>{title}{}",
            &page[..title_start],
            &page[title_end..]
        )
    } else {
        page
    };
    page.replace(
        "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-8\"/>",
        meta_tag,
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn is_chinese(text: &str) -> bool {
    let (mut han, mut all) = (0, 0);
    for c in text.chars().filter(|c| c.is_alphanumeric()).take(2000) {
        all += 1;
        han += usize::from(('\u{4E00}'..='\u{9FFF}').contains(&c));
    }
    han * 2 > all
}

fn print(
    args: &QualityArgs,
    report: &QualityReport,
    registered: usize,
    paths: &[PathBuf],
) -> Result<()> {
    let missed = report.missed_targets();
    let (evasions, all) = (report.evasions(), report.all());
    let negatives_matched: usize = report
        .cases
        .iter()
        .filter(|(c, _)| !c.is_evasion())
        .map(|(_, s)| s.pages_with_matches)
        .sum();
    if args.json {
        let figures = QualityFigures {
            chapters_registered: registered,
            pages: paths.len(),
            cases: report
                .cases
                .iter()
                .map(|(c, s)| CaseRow {
                    case: c.name(),
                    evasion: c.is_evasion(),
                    pages: s.pages,
                    recall: s.recall(),
                    pages_with_matches: s.pages_with_matches,
                    matches: s.reported,
                    precision: s.precision(),
                    right_chapter: s.right_chapter(),
                    coverage: s.coverage(),
                    coverage_min: s.coverage_min,
                })
                .collect(),
            recall: evasions.recall(),
            precision: all.precision(),
            right_chapter: all.right_chapter(),
            negative_pages_with_matches: negatives_matched,
            missed_targets: missed,
            seconds: report.seconds,
            pages_per_second: report.pages_per_second(),
            out: args.out.clone(),
        };
        outln!("{}", serde_json::to_string(&figures)?);
        return Ok(());
    }
    outln!(
        "{registered} chapters registered; {} HTML pages through `check`\n",
        paths.len()
    );
    write_stdout(&report.to_string())?;
    if missed.is_empty() {
        outln!(
            "\ntargets met: recall ≥ 0.98 overall and ≥ 0.95 per evasion, precision ≥ 0.99, no quotation reported, right chapters"
        );
    } else {
        outln!("\ntargets missed:");
        for m in &missed {
            outln!("- {m}");
        }
    }
    if !report.failures.is_empty() {
        outln!("\nfailures ({} in all):", report.failures.len());
        for f in report.failures.iter().take(args.failures) {
            outln!("- {f}");
        }
    }
    if let Some(out) = &args.out {
        outln!(
            "\npages in {0}/pages; check them again with\n  copyhound --database sqlite://{0}/quality.db check {0}/pages",
            out.display()
        );
    }
    Ok(())
}
