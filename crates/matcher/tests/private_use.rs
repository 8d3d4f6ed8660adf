//! Pages whose `@font-face` draws Private Use Area code points as the letters they replace
//! (issue #27): verification and alignment take those code points as wildcards.

mod common;

use matcher::{
    Candidate, ChapterEntry, ChapterId, IndexBuilder, Matcher, MatcherSettings, MemorySource,
    WorkId, is_private_use,
};

/// `text` with the most frequent letters and Han characters replaced, each by its own Private
/// Use Area code point, until `share` of them are (as a remapping font does: every occurrence
/// of a character becomes the same code point).
fn remap(text: &str, share: f64) -> String {
    let mut counts: std::collections::HashMap<char, usize> = Default::default();
    let mut total = 0;
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        *counts.entry(c).or_default() += 1;
        total += 1;
    }
    let mut by_count: Vec<(char, usize)> = counts.into_iter().collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut map = std::collections::HashMap::new();
    let mut covered = 0;
    for (i, (c, n)) in by_count.into_iter().enumerate() {
        if covered as f64 >= share * total as f64 {
            break;
        }
        map.insert(c, char::from_u32(0xE000 + i as u32).unwrap());
        covered += n;
    }
    text.chars().map(|c| *map.get(&c).unwrap_or(&c)).collect()
}

/// A matcher over `chapter` alone, and the candidate it makes of it (as the index finds it
/// for the chapter itself); verification is asked directly, whether or not the index would
/// find the chapter for a remapped page.
fn matcher(chapter: &str) -> (Matcher, Candidate) {
    let settings = MatcherSettings::default();
    let f = common::fingerprinter();
    let mut builder = IndexBuilder::new(settings.index.clone()).unwrap();
    let fp = f.fingerprint(chapter);
    builder
        .add(&ChapterEntry::new(ChapterId(1), WorkId(1), &fp))
        .unwrap();
    let m = Matcher::new(settings, f, builder.build()).unwrap();
    let candidate = m.candidates(&m.page(chapter)).unwrap().remove(0);
    (m, candidate)
}

/// The first chapter of a bundled text.
fn chapter(file: &str, chars: usize) -> String {
    common::data(file).chars().take(chars).collect()
}

#[test]
fn a_remapped_copy_aligns_with_its_chapter() {
    for (file, share) in [
        ("sanguoyanyi_1-10.txt", 0.10),
        ("sanguoyanyi_1-10.txt", 0.25),
        ("alice_1-3.txt", 0.10),
        ("alice_1-3.txt", 0.25),
    ] {
        let text = chapter(file, 4000);
        let (m, candidate) = matcher(&text);
        let page = format!(
            "首页 > 小说 > 第一回\n{}\n上一章 目录 下一章",
            remap(&text, share)
        );
        assert!(page.chars().any(is_private_use));
        let prepared = m.page(&page);
        let v = m.verify(&prepared, &candidate, &text);
        let r = v.result();
        assert!(
            r.coverage >= 0.95,
            "{file} at {share}: coverage {:.3}",
            r.coverage
        );
        // The spans point into the page as served, Private Use Area characters and all.
        let span = &r.spans[0];
        assert!(page.is_char_boundary(span.page.start) && page.is_char_boundary(span.page.end));
        assert!(page[span.page.clone()].chars().any(is_private_use));
        assert!(r.identical_chars < r.matched_chars);
    }
}

#[test]
fn wildcards_do_not_make_another_chapter_match() {
    let copied = chapter("sanguoyanyi_1-10.txt", 3000);
    let other = chapter("xiyouji_1-4.txt", 3000);
    let (m, candidate) = matcher(&other);
    let page = remap(&copied, 0.25);
    let v = m.verify(&m.page(&page), &candidate, &other);
    assert!(v.result().coverage < 0.05, "{:.3}", v.result().coverage);
    let english = remap(&chapter("alice_1-3.txt", 3000), 0.25);
    let other = chapter("frankenstein_1-2.txt", 3000);
    let (m, candidate) = matcher(&other);
    let v = m.verify(&m.page(&english), &candidate, &other);
    assert!(v.result().coverage < 0.05, "{:.3}", v.result().coverage);
}

#[test]
fn a_page_of_private_use_characters_only_matches_nothing() {
    let text = chapter("sanguoyanyi_1-10.txt", 3000);
    let (m, candidate) = matcher(&text);
    let page = remap(&text, 1.0);
    let v = m.verify(&m.page(&page), &candidate, &text);
    assert_eq!(v.result().matched_chars, 0);
    // And the end-to-end check finds nothing in it either.
    let source = MemorySource::new();
    assert!(m.check(&page, &source).unwrap().is_empty());
}

#[test]
fn a_page_without_private_use_characters_verifies_as_before() {
    let text = chapter("alice_1-3.txt", 3000);
    let (m, candidate) = matcher(&text);
    let v = m.verify(&m.page(&text), &candidate, &text);
    assert_eq!(v.result().coverage, 1.0);
    assert_eq!(v.result().identical_chars, v.result().matched_chars);
    let first = text.find(char::is_alphanumeric).unwrap();
    assert_eq!(v.result().spans[0].page.start, first);
}
