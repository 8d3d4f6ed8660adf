//! Peak heap while parsing and decoding each hostile document at the crawler's 5 MiB body cap:
//! at most 300 MB each (the input itself included). One test, so that nothing else runs in
//! this binary while it measures.

use ingest::charset;
use ingest::html::{HtmlLimits, parse_document};
use testkit::hostile;

#[global_allocator]
static ALLOCATOR: testkit::CountingAlloc = testkit::CountingAlloc;

const SIZE: usize = 5 * 1024 * 1024;
const LIMIT: usize = 300 * 1000 * 1000;

#[test]
fn every_hostile_document_stays_within_300_mb() {
    let text = "话说天下大势，分久必合，合久必分。";
    let limits = HtmlLimits::default();
    for (name, doc) in hostile::html_corpus(SIZE, text) {
        let baseline = testkit::heap_now();
        testkit::reset_peak();
        let parsed = parse_document(&doc, &limits, None);
        let nodes = parsed.html.tree.nodes().count();
        drop(parsed);
        let peak = testkit::heap_peak() - baseline;
        println!("{name}: {} MB peak, {nodes} nodes", peak / 1_000_000);
        assert!(peak + doc.len() < LIMIT, "{name}: {peak} bytes");
    }
    let soup = hostile::byte_soup(SIZE);
    let baseline = testkit::heap_now();
    testkit::reset_peak();
    let decoded = charset::decode(&soup, None, None);
    drop(decoded);
    let peak = testkit::heap_peak() - baseline;
    println!("byte soup: {} MB peak", peak / 1_000_000);
    assert!(peak + soup.len() < LIMIT, "byte soup: {peak} bytes");
}
