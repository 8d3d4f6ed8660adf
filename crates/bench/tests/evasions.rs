//! End-to-end: pirate pages made from the sample's public-domain chapters with every
//! disguise, and negatives (other chapters of the same novel, other novels, short quotations),
//! through `Matcher::check`. What the matcher promises on real text belongs here.

mod common;

use std::sync::OnceLock;

use bench::quality::{QualityReport, evaluate};
use bench::{Case, Corpus, PiratePage, pirate_pages};
use common::{corpus, data, fingerprinter, matcher};
use fingerprint::normalize;
use fingerprint::pinyin::symbol;
use matcher::{
    ChapterEntry, ChapterId, IndexBuilder, Matcher, MatcherSettings, MemorySource, WorkId,
};

struct Fixture {
    corpus: Corpus,
    matcher: Matcher,
    source: MemorySource,
    pages: Vec<PiratePage>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let corpus = corpus();
        let (matcher, source) = matcher(&corpus, MatcherSettings::default());
        let pages = pirate_pages(&corpus, 10, 7);
        Fixture {
            corpus,
            matcher,
            source,
            pages,
        }
    })
}

fn report() -> &'static QualityReport {
    static R: OnceLock<QualityReport> = OnceLock::new();
    R.get_or_init(|| {
        let f = fixture();
        let r = evaluate(&f.matcher, &f.source, &f.pages, 2).unwrap();
        println!("{r}");
        for failure in &r.failures {
            println!("- {failure}");
        }
        r
    })
}

#[test]
fn the_bundled_corpus_has_every_case() {
    let f = fixture();
    assert!(
        f.corpus.registered.len() >= 12,
        "{}",
        f.corpus.registered.len()
    );
    assert!(!f.corpus.held_out.is_empty() && !f.corpus.foreign.is_empty());
    for case in Case::ALL {
        let n = f.pages.iter().filter(|p| p.case == case).count();
        assert_eq!(n, 10, "{case:?} has {n} pages");
    }
}

#[test]
fn every_evasion_is_caught_and_attributed_to_the_right_chapter() {
    let r = report();
    for case in Case::ALL.into_iter().filter(|c| c.is_evasion()) {
        let s = r.stats(case);
        assert_eq!(s.recall(), 1.0, "{case:?}: {s:?}\n{:#?}", r.failures);
        assert_eq!(s.precision(), 1.0, "{case:?}: {s:?}\n{:#?}", r.failures);
    }
}

#[test]
fn negatives_report_nothing() {
    let r = report();
    for case in [Case::OtherChapter, Case::OtherNovel, Case::Quotation] {
        let s = r.stats(case);
        assert_eq!(s.reported, 0, "{case:?}: {s:?}\n{:#?}", r.failures);
    }
}

/// The first look of a WET scan (`Matcher::may_match`, and `FirstLook`, which answers the
/// same) turns away no page the matcher finds a copy in, whatever its disguise, and does turn
/// away the pages of novels nobody registered.
#[test]
fn the_first_look_keeps_every_page_the_matcher_matches() {
    let f = fixture();
    let mut look = matcher::FirstLook::new(&f.matcher);
    let (mut kept, mut turned_away) = (0, 0);
    for p in &f.pages {
        let found = f.matcher.check(&p.text, &f.source).unwrap();
        let may = f.matcher.may_match(&p.text).unwrap();
        // The scan's faster first look answers the same.
        assert_eq!(
            look.may_match(&f.matcher, &p.text).unwrap(),
            may,
            "{:?}",
            p.case
        );
        assert!(
            may || found.is_empty(),
            "{:?} {}: matched {:?} but turned away",
            p.case,
            p.origin,
            found.iter().map(|m| m.chapter).collect::<Vec<_>>()
        );
        if p.case == Case::OtherNovel {
            if may {
                kept += 1;
            } else {
                turned_away += 1;
            }
        }
    }
    assert!(
        turned_away > kept,
        "other novels: {turned_away} turned away, {kept} kept for the full look"
    );
}

/// Symbols (pinyin of Han characters, letters themselves) of a text's normalised form.
fn symbols(text: &str) -> Vec<u32> {
    normalize(text).text().chars().map(symbol).collect()
}

/// Symbols of a page's text as verification aligns them: Private Use Area characters (a
/// remapping font's), which normalisation drops, kept in place as [`matcher::WILDCARD`].
fn page_symbols(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut piece = String::new();
    for c in text.chars() {
        if matcher::is_private_use(c) {
            out.extend(symbols(&piece));
            piece.clear();
            out.push(matcher::WILDCARD);
        } else {
            piece.push(c);
        }
    }
    out.extend(symbols(&piece));
    out
}

/// Whether two symbols agree, a wildcard agreeing with anything.
fn agree(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || *x == matcher::WILDCARD)
}

#[test]
fn spans_point_at_the_same_text_in_both_documents() {
    let f = fixture();
    let mut checked = 0;
    for p in f.pages.iter().filter(|p| p.case.is_evasion()) {
        let matches = f.matcher.check(&p.text, &f.source).unwrap();
        for m in &matches {
            let chapter = f.source.get(m.chapter).unwrap();
            for span in &m.spans {
                let (a, b) = (&p.text[span.page.clone()], &chapter[span.chapter.clone()]);
                let (sa, sb) = (page_symbols(a), symbols(b));
                // Both ends of a span are exact runs: the first and last 8 symbols agree (a
                // remapped font's characters with whatever they stand for).
                assert!(agree(&sa[..8], &sb[..8]), "{:?}: {:?}", p.case, p.origin);
                assert!(
                    agree(&sa[sa.len() - 8..], &sb[sb.len() - 8..]),
                    "{:?}: {:?}",
                    p.case,
                    p.origin
                );
                if matches!(
                    p.case,
                    Case::Verbatim
                        | Case::Split
                        | Case::Partial
                        | Case::Merged
                        | Case::LookAlike
                        | Case::Script
                ) {
                    assert_eq!(normalize(a).text(), normalize(b).text(), "{:?}", p.case);
                }
                assert!(span.chars <= sa.len().min(sb.len()));
                checked += 1;
            }
        }
    }
    assert!(checked > 80, "{checked} spans");
}

#[test]
fn coverage_and_page_share_measure_what_was_copied() {
    let f = fixture();
    for p in &f.pages {
        let matches = f.matcher.check(&p.text, &f.source).unwrap();
        for m in &matches {
            assert!((0.0..=1.0).contains(&m.coverage) && (0.0..=1.0).contains(&m.page_share));
            assert!(m.identical_chars <= m.matched_chars);
            let (lo, hi) = match p.case {
                Case::Verbatim
                | Case::Ads
                | Case::Merged
                | Case::LookAlike
                | Case::Script
                | Case::ScriptBuilt
                | Case::CssOrder
                | Case::Latin1Gbk => (0.99, 1.0),
                // Every character is there, a quarter of them as wildcards.
                Case::FontRemap => (0.95, 1.0),
                Case::Traditional | Case::Homophones => (0.97, 1.0),
                Case::Edits => (0.75, 0.99),
                // 30-60% of the sentences (a sentence is at most a few per cent of a chapter).
                Case::Partial => (0.25, 0.7),
                Case::Split => (0.15, 0.7),
                _ => continue,
            };
            assert!(
                (lo..=hi).contains(&m.coverage),
                "{:?} {}: coverage {}",
                p.case,
                p.origin,
                m.coverage
            );
            if p.case == Case::Split || p.case == Case::Partial {
                assert!(
                    m.page_share > 0.8,
                    "{:?}: page share {}",
                    p.case,
                    m.page_share
                );
            }
            if p.case == Case::Homophones {
                assert!(
                    m.identical_chars < m.matched_chars,
                    "no homophone was aligned"
                );
            }
        }
    }
}

#[test]
fn quotations_are_ignored_because_of_the_thresholds() {
    // The same quotation pages, with the thresholds lowered below a quote's length, report the
    // quoted chapter: the thresholds, not a blind spot, keep them out. (A quote shorter than
    // one winnowing window, 34 characters, may share no fingerprint at all.)
    let f = fixture();
    let mut settings = MatcherSettings::default();
    settings.candidates.min_posting_hits = 1;
    settings.report.min_matched_chars = 10;
    settings.report.min_coverage = 0.0;
    let (lenient, source) = matcher(&f.corpus, settings);
    let quotes: Vec<&PiratePage> = f
        .pages
        .iter()
        .filter(|p| p.case == Case::Quotation)
        .collect();
    let mut found = 0;
    for p in &quotes {
        assert!(f.matcher.check(&p.text, &f.source).unwrap().is_empty());
        found += usize::from(!lenient.check(&p.text, &source).unwrap().is_empty());
    }
    println!(
        "lenient settings found {found} of {} quotations",
        quotes.len()
    );
    assert!(found * 2 >= quotes.len(), "{found} of {}", quotes.len());
}

#[test]
fn a_chapter_registered_twice_is_attributed_once() {
    let text = data("xiyouji_1-4.txt");
    let chapter: String = text
        .lines()
        .skip(2)
        .take(40)
        .map(|l| format!("{l}\n"))
        .collect();
    let fp = fingerprinter().fingerprint(&chapter);
    let mut builder = IndexBuilder::new(MatcherSettings::default().index).unwrap();
    let mut source = MemorySource::new();
    for id in [1, 2] {
        builder
            .add(&ChapterEntry::new(ChapterId(id), WorkId(id), &fp))
            .unwrap();
        source.insert(ChapterId(id), chapter.clone());
    }
    let m = Matcher::new(MatcherSettings::default(), fingerprinter(), builder.build()).unwrap();
    let found = m.check(&format!("广告\n{chapter}\n广告"), &source).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].chapter, ChapterId(1));
}

#[test]
fn remapped_font_pages_read_back_through_their_own_font() {
    let Some(reference) = testkit::fonts::reference_font() else {
        return;
    };
    let reference = std::fs::read(reference).unwrap();
    let f = fixture();
    let decoder = extract::fonts::decoder(&extract::FontSettings::default());
    let mut read = 0;
    for p in f.pages.iter().filter(|p| p.case == Case::FontRemap) {
        assert!(!p.remapped.is_empty(), "{}", p.origin);
        // The font the bench serves beside the page, as the crawl and `check` read it.
        let font = testkit::fonts::remapped_font(&reference, &p.remapped)
            .and_then(|ttf| testkit::fonts::woff2(&ttf))
            .unwrap();
        let url = url::Url::parse("http://pirate.example/fonts/r0.woff2").unwrap();
        let decoded = extract::fonts::decode_text(&decoder, &p.text, &[(url, Ok(font))]);
        assert_eq!(decoded.notes, Vec::<String>::new(), "{}", p.origin);
        assert_eq!(decoded.left, 0, "{}: PUA characters left", p.origin);
        let original: String = p
            .text
            .chars()
            .map(|c| p.remapped.iter().find(|r| r.0 == c).map_or(c, |r| r.1))
            .collect();
        assert_eq!(decoded.text, original, "{}", p.origin);
        // Read back, the page is the chapter again: found whole.
        let matches = f.matcher.check(&decoded.text, &f.source).unwrap();
        assert!(
            matches
                .iter()
                .any(|m| p.expected.contains(&m.chapter) && m.coverage >= 0.99),
            "{}",
            p.origin
        );
        read += 1;
    }
    assert_eq!(read, 10);
}
