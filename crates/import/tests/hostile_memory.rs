//! Peak heap while refusing a 1 GiB EPUB bomb and reading 200,000 nested `<div>`s: far below
//! the 300 MB a hostile file may cost. One test, so that nothing else runs in this binary
//! while it measures.

mod common;

use import::{ImportOptions, ImportSettings, Importer};

#[global_allocator]
static ALLOCATOR: testkit::CountingAlloc = testkit::CountingAlloc;

const LIMIT: usize = 300 * 1000 * 1000;

#[test]
fn hostile_files_cost_little_memory() {
    let importer = Importer::new(ImportSettings::default()).unwrap();
    let bomb = common::epub_bomb();
    let nested =
        testkit::hostile::nested("div", 200_000, "第一回 深处<br>话说天下大势，分久必合。");
    for (name, bytes) in [("bomb.epub", &bomb[..]), ("nested.html", nested.as_bytes())] {
        let baseline = testkit::heap_now();
        testkit::reset_peak();
        let result = importer.prepare(name, bytes, &ImportOptions::default());
        let peak = testkit::heap_peak() - baseline;
        println!(
            "{name}: {} MB peak, ok: {}",
            peak / 1_000_000,
            result.is_ok()
        );
        assert!(peak < LIMIT, "{name}: {peak} bytes");
    }
}
