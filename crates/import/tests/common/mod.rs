//! Shared by the import tests: the package files every EPUB the tests build starts with, and
//! hostile EPUBs.
#![allow(dead_code)]

use std::io::{Seek, Write};

use zip::write::SimpleFileOptions;

/// Writes the mimetype (first and stored), the container and an EPUB 3 package document with
/// `manifest` items and `spine` itemrefs (XML fragments), title 老残游记 by 刘鹗.
pub fn epub_package<W: Write + Seek>(zip: &mut zip::ZipWriter<W>, manifest: &str, spine: &str) {
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated = SimpleFileOptions::default();
    zip.start_file("mimetype", stored).unwrap();
    zip.write_all(b"application/epub+zip").unwrap();
    zip.start_file("META-INF/container.xml", deflated).unwrap();
    zip.write_all(
        br#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#,
    )
    .unwrap();
    zip.start_file("OEBPS/content.opf", deflated).unwrap();
    write!(
        zip,
        r#"<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:0e6f1c2a-copyhound-test</dc:identifier><dc:title>老残游记</dc:title><dc:creator>刘鹗</dc:creator><dc:language>zh</dc:language><meta property="dcterms:modified">2026-11-21T00:00:00Z</meta></metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#
    )
    .unwrap();
}

/// An EPUB of one chapter, `OEBPS/c0.xhtml`, written by `chapter`; then `extra` more entries
/// of `extra_bytes` each.
pub fn epub(chapter: impl FnOnce(&mut dyn Write), extra: usize, extra_bytes: usize) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    epub_package(
        &mut zip,
        r#"<item id="c0" href="c0.xhtml" media-type="application/xhtml+xml"/>"#,
        r#"<itemref idref="c0"/>"#,
    );
    let deflated = SimpleFileOptions::default().large_file(true);
    zip.start_file("OEBPS/c0.xhtml", deflated).unwrap();
    chapter(&mut zip);
    for i in 0..extra {
        zip.start_file(format!("OEBPS/img{i}.bin"), deflated)
            .unwrap();
        zip.write_all(&testkit::hostile::byte_soup(extra_bytes))
            .unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// An EPUB whose one chapter inflates to 1 GiB of one repeated paragraph: about a megabyte
/// on disk.
pub fn epub_bomb() -> Vec<u8> {
    epub(
        |out| {
            out.write_all(b"<html><body>").unwrap();
            let block = "<p>啊啊啊啊啊啊啊啊</p>".repeat(4096);
            for _ in 0..(1usize << 30) / block.len() {
                out.write_all(block.as_bytes()).unwrap();
            }
            out.write_all(b"</body></html>").unwrap();
        },
        0,
        0,
    )
}
