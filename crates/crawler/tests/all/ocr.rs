//! A chapter served as images, crawled from a real HTTP server on 127.0.0.1: the page's text
//! is thin, so its images are fetched under the crawl's rules (robots.txt, each a snapshot)
//! and read by OCR; a page whose text is there never has its images fetched.

use crate::common;
use crate::fonts::Site;

use std::collections::HashMap;
use std::sync::Arc;

use crawler::{Crawl, CrawlSettings};
use extract::{OcrSettings, PageKind, Tesseract, TextSource};
use testkit::images as draw;

/// The engine is installed, or the test is skipped loudly (a failure under `CI=true`).
fn tesseract_installed() -> bool {
    match Tesseract::probe(&OcrSettings::default()) {
        Ok(_) => true,
        Err(e) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{e}");
            eprintln!("skipped: no tesseract ({e})");
            false
        }
    }
}

#[tokio::test]
async fn a_chapter_served_as_images_is_read_by_ocr_within_the_crawl_rules() {
    let Some(font) = draw::font() else { return };
    if !tesseract_installed() {
        return;
    }
    // The start of the sample's first chapter, as two screens: a PNG and a watermarked JPEG.
    let chapter: String = common::book()[0].text().chars().take(700).collect();
    let half = chapter.char_indices().nth(350).unwrap().0;
    let (one, two) = chapter.split_at(half);
    let style = draw::Style {
        background: 236,
        ..draw::Style::default()
    };
    let screen1 = draw::png(&draw::render(&font, one, &style).unwrap());
    let marked = draw::Style {
        px: 17.0,
        watermark: Some("盗版小说网 www.daoban.test".into()),
        ..style
    };
    let screen2 = draw::jpeg(&draw::render(&font, two, &marked).unwrap(), 60);
    let images_page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第一回_盗版小说网</title></head>\
         <body><div class=\"nav\"><a href=\"/\"><img src=\"/logo.png\" width=\"120\" height=\"40\"></a></div>\
         <h1>第一回</h1><div id=\"content\"><img src=\"img/1-1.png\" alt=\"\">\
         <img src=\"img/1-2.jpg\" alt=\"最新网址请收藏\"><img src=\"/private/3.png\" alt=\"\"></div>\
         <p>本站域名 daoban.test，请收藏。</p></body></html>";
    let text_page = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第二回</title></head>\
         <body><div id=\"content\"><p>{}</p><img src=\"img/2-1.png\" alt=\"插图\"></div></body></html>",
        common::book()[1].text().replace('\n', "</p><p>")
    );
    let site = Site {
        bodies: Arc::new(HashMap::from([
            (
                "/robots.txt".to_owned(),
                (
                    "text/plain",
                    b"User-agent: *\nDisallow: /private/\n".to_vec(),
                ),
            ),
            (
                "/book/1.html".to_owned(),
                ("text/html", images_page.as_bytes().to_vec()),
            ),
            ("/book/img/1-1.png".to_owned(), ("image/png", screen1)),
            ("/book/img/1-2.jpg".to_owned(), ("image/jpeg", screen2)),
            ("/private/3.png".to_owned(), ("image/png", Vec::new())),
            ("/logo.png".to_owned(), ("image/png", Vec::new())),
            (
                "/book/2.html".to_owned(),
                ("text/html", text_page.into_bytes()),
            ),
            ("/book/img/2-1.png".to_owned(), ("image/png", Vec::new())),
        ])),
        ..Site::default()
    };
    let addr = site.clone().serve("127.0.0.1").await;
    let url = |p: &str| url::Url::parse(&format!("http://{addr}{p}")).unwrap();
    let settings = CrawlSettings {
        max_depth: 0,
        ..common::local_crawl_settings()
    };
    let crawl = Crawl::in_memory(settings, vec![url("/book/1.html"), url("/book/2.html")]).unwrap();
    let report = crawl.run().await.unwrap();
    let pages = crawl.sink().pages();

    let read = pages.iter().find(|p| p.url == url("/book/1.html")).unwrap();
    assert_eq!(read.kind, PageKind::Content);
    assert_eq!(read.source, TextSource::Ocr);
    let error = testkit::images::character_error_rate(&chapter, &read.text);
    assert!(error < 0.1, "character error {error:.3}: {}", read.text);
    assert_eq!(report.ocr_images, 2, "{report}");
    // Each screen is evidence: its response is a snapshot of the crawl.
    let snapshots = crawl.sink().snapshots();
    for path in ["/book/img/1-1.png", "/book/img/1-2.jpg"] {
        assert_eq!(site.hits(path), 1, "{path}");
        assert!(snapshots.iter().any(|s| s.final_url == url(path)), "{path}");
    }
    // robots.txt's rule holds for images; a linked logo is no chapter.
    assert_eq!(site.hits("/private/3.png"), 0);
    assert_eq!(site.hits("/logo.png"), 0);

    // A page whose text is there never has its images read.
    let text = pages.iter().find(|p| p.url == url("/book/2.html")).unwrap();
    assert_eq!(text.source, TextSource::Markup);
    assert_eq!(site.hits("/book/img/2-1.png"), 0);
}
