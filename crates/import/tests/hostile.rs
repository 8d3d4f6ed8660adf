//! Files written to make the importer fail: deep and bomb-like HTML, EPUB archives that
//! inflate without end or hold too much, damaged encodings (`tests/data/hostile/`) and
//! binary soup. Each gives a work or a clear error, in bounded time, and never a crash.

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

use import::{
    EpubLimits, Error, HtmlLimits, ImportLimits, ImportOptions, ImportSettings, Importer, Prepared,
};
use testkit::hostile;

/// One importer for the whole test binary: building it loads jieba's dictionary.
fn importer() -> &'static Importer {
    static IMPORTER: OnceLock<Importer> = OnceLock::new();
    IMPORTER.get_or_init(|| Importer::new(ImportSettings::default()).unwrap())
}

/// An importer with other limits (a new one: the shared one keeps the defaults).
fn importer_with(limits: ImportLimits) -> Importer {
    Importer::new(ImportSettings {
        limits,
        ..ImportSettings::default()
    })
    .unwrap()
}

fn hostile_file(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/hostile")
            .join(name),
    )
    .unwrap()
}

fn prepare(importer: &Importer, name: &str, bytes: &[u8]) -> import::Result<Prepared> {
    importer.prepare(name, bytes, &ImportOptions::default())
}

fn text_of(p: &Prepared) -> String {
    p.chapters.iter().map(|c| c.body.as_str()).collect()
}

const CHAPTER: &str = "第一回 宴桃园豪杰三结义\n话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。\n第二回 张翼德怒鞭督邮\n且说董卓字仲颖，陇西临洮人也，官拜河东太守，自来骄傲。";

#[test]
fn deeply_nested_html_is_imported_without_overflowing() {
    // 17,000 levels stopped the old recursive walk; 200,000 are 2.2 MB.
    for depth in [17_000, 200_000] {
        let html = hostile::nested("div", depth, &CHAPTER.replace('\n', "<br>"));
        let p = prepare(importer(), "nested.html", html.as_bytes()).unwrap();
        assert_eq!(p.chapters.len(), 2, "depth {depth}");
        assert!(text_of(&p).contains("周末七国分争"));
    }
}

#[test]
fn every_hostile_html_document_gives_a_work_or_a_clear_error() {
    let inner = CHAPTER.replace('\n', "<br>");
    for (name, doc) in hostile::html_corpus(5 * 1024 * 1024, &inner) {
        match prepare(importer(), &format!("{name}.html"), doc.as_bytes()) {
            Ok(p) => assert!(!p.chapters.is_empty(), "{name}"),
            Err(e @ (Error::TooComplex(_) | Error::Empty | Error::NoText { .. })) => {
                assert!(!e.to_string().is_empty(), "{name}")
            }
            Err(e) => panic!("{name}: unexpected {e}"),
        }
    }
}

#[test]
fn an_element_bomb_is_refused_naming_the_limit() {
    let importer = importer_with(ImportLimits {
        html: HtmlLimits {
            max_elements: 10_000,
            ..HtmlLimits::default()
        },
        ..ImportLimits::default()
    });
    let err = prepare(
        &importer,
        "bomb.html",
        hostile::elements(1 << 20).as_bytes(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::TooComplex(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "the html is refused: the page has more than 10000 elements (limit max_elements)"
    );
}

fn xhtml_chapter(out: &mut dyn Write) {
    write!(
        out,
        "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>c</title></head><body><p>{}</p></body></html>",
        CHAPTER.replace('\n', "</p><p>")
    )
    .unwrap();
}

#[test]
fn an_epub_inflating_to_a_gibibyte_is_refused_while_inflating() {
    // A chapter of 1 GiB of one repeated paragraph: about a megabyte on disk.
    let bomb = common::epub_bomb();
    assert!(bomb.len() < 8 << 20, "{} bytes", bomb.len());
    let err = prepare(importer(), "bomb.epub", &bomb).unwrap_err();
    assert!(matches!(err, Error::EpubLimit(_)), "{err}");
    // Whichever limit comes first: the ratio (100) or the inflated total (128 MiB).
    let message = err.to_string();
    assert!(
        message.contains("epub.max_ratio") || message.contains("epub.max_inflated_bytes"),
        "{message}"
    );
}

#[test]
fn epub_entry_count_and_inflated_total_are_limits() {
    let importer = importer_with(ImportLimits {
        epub: EpubLimits {
            max_entries: 20,
            max_inflated_bytes: 1 << 20,
            ..EpubLimits::default()
        },
        ..ImportLimits::default()
    });
    let many = common::epub(xhtml_chapter, 30, 10);
    let err = prepare(&importer, "many.epub", &many).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the epub is refused: it has 34 entries, more than the limit of 20 (epub.max_entries)"
    );
    let large = common::epub(xhtml_chapter, 5, 300 * 1024);
    let err = prepare(&importer, "large.epub", &large).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the epub is refused: its entries inflate to more than 1048576 bytes \
         (epub.max_inflated_bytes)"
    );
    let ratio = importer_with(ImportLimits {
        epub: EpubLimits {
            max_ratio: 10,
            ..EpubLimits::default()
        },
        ..ImportLimits::default()
    });
    let repetitive = common::epub(
        |out| {
            xhtml_chapter(out);
            out.write_all(" ".repeat(4 << 20).as_bytes()).unwrap();
        },
        0,
        0,
    );
    let err = prepare(&ratio, "ratio.epub", &repetitive).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("the epub is refused: OEBPS/c0.xhtml inflates more than 10 times"),
        "{err}"
    );
    // Within the limits the same book is read.
    let fine = common::epub(xhtml_chapter, 2, 1024);
    let p = prepare(&importer, "fine.epub", &fine).unwrap();
    assert!(text_of(&p).contains("周末七国分争"));
}

#[test]
fn a_truncated_or_garbled_archive_is_a_clear_error() {
    let good = common::epub(xhtml_chapter, 0, 0);
    for (name, bytes) in [
        ("cut.epub", good[..good.len() / 2].to_vec()),
        ("soup.epub", {
            let mut b = b"PK\x03\x04".to_vec();
            b.extend(hostile::byte_soup(4096));
            b
        }),
    ] {
        let err = prepare(importer(), name, &bytes).unwrap_err();
        assert!(matches!(err, Error::Epub(_)), "{name}: {err}");
    }
}

#[test]
fn damaged_encodings_keep_their_encoding_and_count_the_damage() {
    for (file, encoding, phrase) in [
        ("gbk_stray_byte.txt", "GBK", "老残游记"),
        ("gbk_cut_in_a_character.txt", "GBK", "老残游记"),
        ("utf8_bad_byte.txt", "UTF-8", "老残游记"),
        ("big5_stray_byte.txt", "Big5", "此開卷第一回也"),
    ] {
        let bytes = hostile_file(file);
        let p = prepare(importer(), file, &bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(p.encoding.as_deref(), Some(encoding), "{file}");
        assert!(
            (1..=3).contains(&p.replaced),
            "{file}: {} replaced",
            p.replaced
        );
        let all = format!("{}{}", p.front_matter, text_of(&p));
        assert!(all.contains(phrase), "{file}");
    }
}

#[test]
fn binary_soup_is_refused_naming_what_is_wrong() {
    let soup = hostile_file("soup.bin");
    let err = prepare(importer(), "soup.txt", &soup).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the file is not text: it contains NUL bytes"
    );
    // Without NULs: the encoding it was read as is named.
    let no_nul: Vec<u8> = soup.iter().map(|b| b | 1).collect();
    let err = prepare(importer(), "soup.txt", &no_nul).unwrap_err();
    assert!(matches!(err, Error::Binary(_)), "{err}");
    assert!(err.to_string().contains("when read as"), "{err}");
}
