//! Importing real public-domain files end to end into a store: encodings, tables of
//! contents, EPUB, HTML, bad input and a 20 MB novel (on SQLite; one case on Postgres too).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

mod common;

use import::{Error, ImportEvent, ImportOptions, ImportSettings, Importer};
use store::testing::TestDb;
use store::{FingerprintReads, Page, SourceFormat, WorkFilter, WorkReads};

fn data(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

/// One importer for the whole test binary: building it loads jieba's dictionary.
fn importer() -> &'static Importer {
    static IMPORTER: OnceLock<Importer> = OnceLock::new();
    IMPORTER.get_or_init(|| Importer::new(ImportSettings::default()).unwrap())
}

async fn sqlite() -> TestDb {
    store::testing::sqlite("import").await.unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect()
}

async fn chapter_titles(db: &TestDb, work: store::WorkId) -> Vec<String> {
    let chapters = db.store.chapters(work).await.unwrap();
    chapters.into_iter().map(|c| c.title).collect()
}

async fn assert_nothing_stored(db: &TestDb) {
    let works = db.store.works(&WorkFilter::All, Page::all()).await.unwrap();
    assert!(works.is_empty(), "{works:?}");
}

async fn import(db: &TestDb, path: &Path) -> import::Result<import::ImportReport> {
    importer()
        .import_file(&db.store, path, &ImportOptions::default(), &())
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gbk_copy_is_decoded_split_past_its_contents_and_found_again() {
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let original = data("laocanyouji_toc_1-2.txt");
    let (gbk, _, unmappable) = encoding_rs::GBK.encode(&original);
    assert!(!unmappable);
    let path = write(dir.path(), "老残游记.txt", &gbk);

    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let progress = move |e: &ImportEvent| seen.lock().unwrap().push(e.clone());
    let report = importer()
        .import_file(
            &db.store,
            &path,
            &ImportOptions {
                title: None,
                author: Some("刘鹗".into()),
            },
            &progress,
        )
        .await
        .unwrap();
    assert!(report.created);
    assert_eq!(report.title, "老残游记");
    assert_eq!(report.encoding.as_deref(), Some("GBK"));
    assert_eq!(report.format, SourceFormat::Txt);
    assert_eq!((report.chapters, report.toc_entries), (2, 20));
    let events = events.lock().unwrap().clone();
    assert!(matches!(events[0], ImportEvent::Split { chapters: 2, .. }));
    assert!(events.contains(&ImportEvent::Fingerprinted { done: 2, total: 2 }));
    assert_eq!(events.last(), Some(&ImportEvent::Storing));

    let work = db.store.work(report.work).await.unwrap();
    assert_eq!(work.author.as_deref(), Some("刘鹗"));
    assert_eq!(work.source_encoding.as_deref(), Some("GBK"));
    assert!(work.front_matter.starts_with("老残游记"));
    assert!(work.front_matter.contains("第二十回"));
    let chapters = db.store.chapters(report.work).await.unwrap();
    assert_eq!(
        squash(&chapters[0].title),
        "第一回土不制水历年成患风能鼓浪到处可危"
    );
    assert!(chapters[1].title.starts_with("第二回"));
    let first = db.store.chapter(chapters[0].id).await.unwrap();
    assert!(
        first.body.starts_with("话说山东登州府东门外有一座大山"),
        "{}",
        &first.body[..60]
    );
    assert!(first.body.trim_end().ends_with("且听下回分解。"));
    // Every chapter has its fingerprint and postings.
    let fps = db.store.fingerprints(Page::all()).await.unwrap();
    assert_eq!(fps.len(), 2);
    assert!(fps.iter().all(|f| f.chars > 1000 && !f.summary.is_empty()));
    let summary = fingerprint::FingerprintSummary::from_bytes(&fps[0].summary).unwrap();
    assert_eq!(summary.simhash, fps[0].simhash);
    assert_eq!(summary.normalizer_version, fingerprint::NORMALIZER_VERSION);

    // The UTF-8 original, with other line breaks, is the same work.
    let crlf = original.replace('\n', "\r\n");
    let again = import(&db, &write(dir.path(), "laocan-utf8.txt", crlf.as_bytes()))
        .await
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.work, report.work);
    assert_eq!(
        db.store
            .works(&WorkFilter::All, Page::all())
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big5_copy_of_traditional_text_is_decoded() {
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let original = data("hongloumeng_hant_1-2.txt");
    let (big5, _, _) = encoding_rs::BIG5.encode(&original);
    let report = import(&db, &write(dir.path(), "紅樓夢.txt", &big5))
        .await
        .unwrap();
    assert_eq!(report.encoding.as_deref(), Some("Big5"));
    assert_eq!(report.chapters, 2);
    let chapters = db.store.chapters(report.work).await.unwrap();
    assert!(chapters[0].title.starts_with("第一回"));
    assert!(chapters[1].title.starts_with("第二回"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn english_chapters_and_run_on_chinese_headings() {
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let alice = import(
        &db,
        &write(
            dir.path(),
            "alice.txt",
            data("alice_toc_1-2.txt").as_bytes(),
        ),
    )
    .await
    .unwrap();
    assert_eq!((alice.chapters, alice.toc_entries), (2, 12));
    let titles = chapter_titles(&db, alice.work).await;
    assert_eq!(
        titles,
        [
            "CHAPTER I. Down the Rabbit-Hole",
            "CHAPTER II. The Pool of Tears"
        ]
    );

    let fengshen = data("fengshenyanyi_hant_1-3.txt");
    let report = import(&db, &write(dir.path(), "封神演義.txt", fengshen.as_bytes()))
        .await
        .unwrap();
    assert_eq!(report.chapters, 3);
    let chapters = db.store.chapters(report.work).await.unwrap();
    assert_eq!(chapters[0].title, "第一回紂王女媧宮進香古風一首");
}

/// A minimal EPUB 3: mimetype first and stored, container, package, a navigation document
/// in the spine listing all 20 chapters of 老残游记, and the two chapters of the excerpt.
fn build_epub(with_headings: bool) -> Vec<u8> {
    build_epub_with(with_headings, true)
}

/// [`build_epub`], with or without the chapters' paragraphs.
fn build_epub_with(with_headings: bool, with_text: bool) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let text = data("laocanyouji_toc_1-2.txt");
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let toc: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with('第'))
        .take(20)
        .collect();
    let body_at = |prefix: &str| {
        lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with(prefix))
            .nth(1)
            .unwrap()
            .0
    };
    let (one, two) = (body_at("第一回"), body_at("第二回"));
    let chapters = [
        (lines[one], &lines[one + 1..two]),
        (lines[two], &lines[two + 1..]),
    ];
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let xhtml = |title: &str, body: String| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" \
             xmlns:epub=\"http://www.idpf.org/2007/ops\"><head><title>{}</title></head><body>{body}</body></html>",
            esc(title)
        )
    };
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default();
    let mut manifest = String::from(
        r#"<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>"#,
    );
    let mut spine = String::from(r#"<itemref idref="nav"/>"#);
    for i in 0..chapters.len() {
        manifest.push_str(&format!(
            r#"<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>"#
        ));
        spine.push_str(&format!(r#"<itemref idref="c{i}"/>"#));
    }
    common::epub_package(&mut zip, &manifest, &spine);
    let nav_items: String = toc
        .iter()
        .map(|t| format!("<li><a href=\"c0.xhtml\">{}</a></li>", esc(t)))
        .collect();
    zip.start_file("OEBPS/nav.xhtml", deflated).unwrap();
    let nav = format!("<nav epub:type=\"toc\"><h1>目录</h1><ol>{nav_items}</ol></nav>");
    zip.write_all(xhtml("目录", nav).as_bytes()).unwrap();
    for (i, (heading, body)) in chapters.iter().enumerate() {
        let paragraphs: String = body
            .iter()
            .filter(|l| with_text && !l.is_empty())
            .map(|l| format!("<p>{}</p>", esc(l)))
            .collect();
        let head = if with_headings {
            format!("<h1>{}</h1>", esc(heading))
        } else {
            format!("<h1>Part {}</h1>", i + 1)
        };
        zip.start_file(format!("OEBPS/c{i}.xhtml"), deflated)
            .unwrap();
        zip.write_all(xhtml(heading, format!("{head}{paragraphs}")).as_bytes())
            .unwrap();
    }
    zip.finish().unwrap().into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epub_built_by_the_test_is_imported() {
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let report = import(&db, &write(dir.path(), "laocan.epub", &build_epub(true)))
        .await
        .unwrap();
    assert_eq!(report.format, SourceFormat::Epub);
    // The navigation document is not text of the book: no contents, no front matter.
    assert_eq!((report.chapters, report.toc_entries), (2, 0));
    let work = db.store.work(report.work).await.unwrap();
    assert_eq!(work.title, "laocan");
    assert_eq!(work.front_matter, "");
    assert_eq!(work.author.as_deref(), Some("刘鹗"));
    let chapters = db.store.chapters(report.work).await.unwrap();
    assert_eq!(
        squash(&chapters[0].title),
        "第一回土不制水历年成患风能鼓浪到处可危"
    );
    let body = db.store.chapter(chapters[1].id).await.unwrap().body;
    assert!(body.starts_with("话说老残"), "{}", &body[..40]);

    // The same book under another file name is found again.
    let again = import(&db, &write(dir.path(), "copy.epub", &build_epub(true)))
        .await
        .unwrap();
    assert!(!again.created);

    // Without recognisable headings, each spine document is a chapter.
    let report = import(&db, &write(dir.path(), "parts.epub", &build_epub(false)))
        .await
        .unwrap();
    let titles = chapter_titles(&db, report.work).await;
    assert_eq!(titles, ["Part 1", "Part 2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gbk_html_page_with_a_declared_charset_is_imported() {
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let html = "<!DOCTYPE html><html><head><meta charset=\"gbk\"><title>三国演义</title>\
                <script>var ad = '第九十九回';</script></head><body><div id=\"content\">\
                <h2>第一回　宴桃园豪杰三结义</h2><p>话说天下大势，分久必合，合久必分。</p>\
                <h2>第二回　张翼德怒鞭督邮</h2><p>且说董卓字仲颖。</p></div></body></html>";
    let (gbk, _, _) = encoding_rs::GBK.encode(html);
    let report = import(&db, &write(dir.path(), "sanguo.html", &gbk))
        .await
        .unwrap();
    assert_eq!(report.format, SourceFormat::Html);
    assert_eq!(report.encoding.as_deref(), Some("GBK"));
    assert_eq!(report.chapters, 2);
    let chapters = db.store.chapters(report.work).await.unwrap();
    assert_eq!(chapters[0].title, "第一回 宴桃园豪杰三结义");
    let body = db.store.chapter(chapters[0].id).await.unwrap().body;
    assert_eq!(body, "话说天下大势，分久必合，合久必分。");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_a_clear_error() {
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let err = import(&db, &write(dir.path(), "empty.txt", b""))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Empty), "{err:?}");
    let err = import(
        &db,
        &write(dir.path(), "blank.txt", b"\xEF\xBB\xBF \r\n \t\n"),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::Empty), "{err:?}");
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend((0..5000u32).map(|i| (i * 7919 % 251) as u8));
    let err = import(&db, &write(dir.path(), "cover.txt", &png))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Binary(_)), "{err:?}");
    assert!(err.to_string().contains("not text"), "{err}");
    let err = import(
        &db,
        &write(dir.path(), "broken.epub", b"PK\x03\x04 not really"),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::Epub(_)), "{err:?}");
    let missing = dir.path().join("missing.txt");
    let err = import(&db, &missing).await.unwrap_err();
    assert!(matches!(err, Error::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("missing.txt"), "{err}");
    assert_nothing_stored(&db).await;

    // No heading at all: one chapter, titled after the work.
    let prose =
        "聊齋志異卷一考城隍予姊丈之祖宋公，諱燾，邑廪生。一日病臥，見吏人持牒，牽白顛馬來。"
            .repeat(40);
    let report = import(&db, &write(dir.path(), "聊齋.txt", prose.as_bytes()))
        .await
        .unwrap();
    assert_eq!(report.chapters, 1);
    let chapters = db.store.chapters(report.work).await.unwrap();
    assert_eq!(chapters[0].title, "聊齋");
    assert_eq!(chapters[0].chars as usize, prose.chars().count());
}

fn hostile(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/hostile")
            .join(name),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chapters_without_text_are_refused_not_stored() {
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let refused = |name: &'static str, bytes: Vec<u8>| {
        let path = write(dir.path(), name, &bytes);
        let db = &db;
        async move { import(db, &path).await.unwrap_err() }
    };

    let err = refused("headings.txt", hostile("headings_only.txt")).await;
    assert!(
        matches!(
            err,
            Error::NoText {
                headings: 12,
                symbols: 0
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no chapter has text: found 12 headings and 0 characters of text"
    );

    let err = refused("rules.txt", hostile("headings_and_rules.txt")).await;
    assert_eq!(
        err.to_string(),
        "no chapter has text: found 3 headings and 0 characters of text \
         (only 15 punctuation marks and symbols)"
    );

    let err = refused("contents.html", hostile("headings_only.html")).await;
    assert!(matches!(err, Error::NoText { headings: 3, .. }), "{err:?}");

    // Markup with no text at all is a document without a work in it, not an empty file.
    let err = refused(
        "cover.html",
        b"<html><head><title>\xe5\xb0\x81\xe9\x9d\xa2</title></head><body><img src=c.png></body></html>"
            .to_vec(),
    )
    .await;
    assert_eq!(
        err.to_string(),
        "no chapter has text: found 0 headings and 0 characters of text"
    );

    // An EPUB whose chapter documents hold their headings and nothing else.
    let err = refused("bare.epub", build_epub_with(true, false)).await;
    assert!(matches!(err, Error::NoText { headings: 2, .. }), "{err:?}");
    let err = refused("parts.epub", build_epub_with(false, false)).await;
    assert!(matches!(err, Error::NoText { .. }), "{err:?}");

    // Punctuation alone, without a heading.
    let err = refused("dots.txt", "……\n。。。\n* * *\n".as_bytes().to_vec()).await;
    assert!(
        matches!(
            err,
            Error::NoText {
                headings: 0,
                symbols: 8
            }
        ),
        "{err:?}"
    );

    assert_nothing_stored(&db).await;

    // One heading and one sentence is a (tiny) work. (A short line without a full stop would
    // be the heading's subtitle, leaving no text.)
    let report = import(
        &db,
        &write(dir.path(), "one.txt", "第一章\n\n甲乙。\n".as_bytes()),
    )
    .await
    .unwrap();
    assert_eq!((report.chapters, report.chars), (1, 3));
}

/// About 20 MB of Chinese: the excerpt's two chapters repeated under new headings.
fn twenty_megabyte_novel() -> (String, usize) {
    let sample = data("laocanyouji_toc_1-2.txt");
    // The body of 第一回 alone: a 回 heading inside would rightly count as a chapter.
    let body: String = sample
        .lines()
        .skip_while(|l| !l.starts_with("话说山东"))
        .take_while(|l| !l.starts_with("第二回"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut novel = String::with_capacity(21 << 20);
    let mut n = 0;
    while novel.len() < 20 << 20 {
        n += 1;
        novel.push_str(&format!("第{n}章 第{n}次重复\n\n{body}\n\n"));
    }
    (novel, n)
}

/// Imports the 20 MB novel (crossing the Postgres statement chunks: 8 MB of chapter text,
/// 250,000 postings) and imports it again.
async fn twenty_megabytes(db: &TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let (novel, chapters) = twenty_megabyte_novel();
    let path = write(dir.path(), "big.txt", novel.as_bytes());
    let report = import(db, &path).await.unwrap();
    eprintln!(
        "20 MB novel into {}: {} chapters, {} chars in {:?} ({:.1} MB/min)",
        db.kind(),
        report.chapters,
        report.chars,
        report.elapsed,
        novel.len() as f64 / 1e6 / report.elapsed.as_secs_f64() * 60.0
    );
    assert_eq!(report.chapters, chapters);
    let work = db.store.work(report.work).await.unwrap();
    assert_eq!(work.chapters as usize, chapters);
    let stored = db.store.chapters(report.work).await.unwrap();
    assert!(
        stored
            .iter()
            .enumerate()
            .all(|(i, c)| c.ordinal as usize == i + 1)
    );
    assert_eq!(
        stored[chapters - 1].title,
        format!("第{chapters}章 第{chapters}次重复")
    );
    assert_eq!(
        db.store.fingerprints(Page::all()).await.unwrap().len(),
        chapters
    );
    let again = import(db, &path).await.unwrap();
    assert!(!again.created);
    assert!(
        again.elapsed < report.elapsed / 4,
        "re-import skips fingerprinting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twenty_megabyte_novel_is_imported_and_recognised_again() {
    twenty_megabytes(&sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twenty_megabyte_novel_goes_into_postgres_in_chunks() {
    let test = "a_twenty_megabyte_novel_goes_into_postgres_in_chunks";
    if let Some(db) = store::testing::postgres(test).await {
        twenty_megabytes(&db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_into_postgres_too() {
    let Some(db) = store::testing::postgres("imports_into_postgres_too").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let original = data("laocanyouji_toc_1-2.txt");
    let (gbk, _, _) = encoding_rs::GBK.encode(&original);
    let report = import(&db, &write(dir.path(), "老残游记.txt", &gbk))
        .await
        .unwrap();
    assert_eq!((report.chapters, report.created), (2, true));
    assert_eq!(db.store.fingerprints(Page::all()).await.unwrap().len(), 2);
    let again = import(&db, &write(dir.path(), "again.txt", &gbk))
        .await
        .unwrap();
    assert_eq!((again.work, again.created), (report.work, false));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_of_an_older_normaliser_is_refingerprinted_from_its_stored_text() {
    use store::{IndexLoads, WorkWrites};
    let db = sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let text = data("alice_toc_1-2.txt");
    let report = import(&db, &write(dir.path(), "alice.txt", text.as_bytes()))
        .await
        .unwrap();
    let work = report.work;
    let fresh = db.store.work_index_entries(work).await.unwrap();
    // A fingerprint of this version is left alone unless forced.
    assert_eq!(
        importer()
            .refingerprint(&db.store, work, false)
            .await
            .unwrap(),
        0
    );

    // Make the stored fingerprints look like an older normaliser's, as after an upgrade.
    let stale: Vec<_> = db
        .store
        .chapters(work)
        .await
        .unwrap()
        .iter()
        .map(|c| {
            let fp = store::NewFingerprint {
                normalizer_version: fingerprint::NORMALIZER_VERSION - 1,
                chars: 1,
                simhash: 1,
                summary: vec![0; 8],
                text_winnow: Vec::new(),
                pinyin_winnow: Vec::new(),
            };
            (c.id, fp)
        })
        .collect();
    db.store.replace_fingerprints(work, &stale).await.unwrap();
    assert!(
        db.store
            .work_index_entries(work)
            .await
            .unwrap()
            .iter()
            .all(|e| e.normalizer_version < fingerprint::NORMALIZER_VERSION)
    );

    let redone = importer()
        .refingerprint(&db.store, work, false)
        .await
        .unwrap();
    assert_eq!(redone, stale.len());
    // The same fingerprints as a fresh import's.
    assert_eq!(db.store.work_index_entries(work).await.unwrap(), fresh);
    assert_eq!(
        importer()
            .refingerprint(&db.store, work, true)
            .await
            .unwrap(),
        stale.len()
    );
    assert!(matches!(
        importer()
            .refingerprint(&db.store, store::WorkId(4242), true)
            .await
            .unwrap_err(),
        Error::Store(store::Error::NotFound { .. })
    ));
}
