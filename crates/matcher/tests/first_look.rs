//! The first look of a scan ([`FirstLook`]) gives [`Matcher::may_match`]'s answer on every
//! page: copies of registered chapters whole, cut, spaced out, in traditional characters or
//! stitched into other text, other novels, English, noise, and pages after the index gained
//! a chapter.

mod common;

use common::{data, fingerprinter};
use fingerprint::hash::fmix64;
use matcher::{ChapterEntry, ChapterId, FirstLook, IndexBuilder, Matcher, MatcherSettings, WorkId};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

/// Chapters of a bundled text: the pieces between chapter headings ("第…回" lines).
fn chapters(name: &str) -> Vec<String> {
    data(name)
        .split("\n第")
        .map(str::to_owned)
        .filter(|c| c.chars().count() > 300)
        .collect()
}

/// A matcher over 三国演义 1–10 and Alice 1–3.
fn matcher() -> Matcher {
    let f = fingerprinter();
    let settings = MatcherSettings::default();
    let mut builder = IndexBuilder::new(settings.index.clone()).unwrap();
    let mut id = 0;
    for (work, name) in [(1, "sanguoyanyi_1-10.txt"), (2, "alice_1-3.txt")] {
        for chapter in chapters(name) {
            id += 1;
            let fp = f.fingerprint(&chapter);
            builder
                .add(&ChapterEntry::new(ChapterId(id), WorkId(work), &fp))
                .unwrap();
        }
    }
    Matcher::new(settings, f, builder.build()).unwrap()
}

/// The texts pages are cut from: registered and unregistered, both scripts, English.
fn sources() -> Vec<String> {
    [
        "sanguoyanyi_1-10.txt",
        "xiyouji_1-4.txt",
        "hongloumeng_hant_1-2.txt",
        "shuihuquanzhuan_1-2.txt",
        "alice_1-3.txt",
        "frankenstein_1-2.txt",
    ]
    .iter()
    .map(|n| data(n))
    .collect()
}

/// A page made by `seed`: one to three slices of the sources (1 to 3,000 characters), each
/// as it is, spaced out, or with its Latin letters in full-width forms, between adverts.
fn page(sources: &[String], seed: u64) -> String {
    let mut r = seed;
    let mut next = |n: usize| {
        r = fmix64(r.wrapping_add(0x9E37_79B9_7F4A_7C15));
        (r % n.max(1) as u64) as usize
    };
    let mut page = String::new();
    for _ in 0..1 + next(3) {
        let text: Vec<char> = sources[next(sources.len())].chars().collect();
        let len = 1 + next(3000);
        let start = next(text.len().saturating_sub(len));
        let slice = &text[start..(start + len).min(text.len())];
        match next(4) {
            0 => page.extend(slice.iter().flat_map(|&c| [c, ' '])),
            1 => page.extend(slice.iter().map(|&c| match c {
                'a'..='z' => char::from_u32(c as u32 - 'a' as u32 + 'Ａ' as u32).unwrap(),
                other => other,
            })),
            _ => page.extend(slice),
        }
        page.push_str("\n广告：最新章节请访问 www.example.com\n");
    }
    page
}

#[test]
fn the_first_look_answers_as_may_match_does() {
    let matcher = matcher();
    let mut look = FirstLook::new(&matcher);
    assert!(look.is_filtering(), "a small index is summarised");
    let sources = sources();
    let (mut yes, mut no) = (0, 0);
    for seed in 0..400 {
        let page = page(&sources, seed);
        let exact = matcher.may_match(&page).unwrap();
        assert_eq!(
            look.may_match(&matcher, &page).unwrap(),
            exact,
            "page {seed}: {page:.200}"
        );
        if exact {
            yes += 1;
        } else {
            no += 1;
        }
    }
    // Both answers were asked for many times.
    assert!(yes > 50 && no > 50, "{yes} may match, {no} may not");
}

proptest! {
    #![proptest_config(Config {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x6669_7273),
        failure_persistence: None,
        ..Config::default()
    })]

    /// Any text, strange characters included: the same answer.
    #[test]
    fn any_text_gets_may_matchs_answer(
        text in "[a-z ,.\n天下大势分久必合後來說話ＡＢ１e\u{0301}\u{1100}\u{1161}한ﬁ①😀𠀀\u{200B}]{0,400}",
        cut in 0usize..2000,
    ) {
        let matcher = matcher_once();
        let mut look = FirstLook::new(matcher);
        // Half the cases carry a registered passage, so that both paths are taken.
        let registered: String = data("sanguoyanyi_1-10.txt").chars().skip(cut).take(120).collect();
        for page in [text.clone(), format!("{text}{registered}{text}")] {
            prop_assert_eq!(
                look.may_match(matcher, &page).unwrap(),
                matcher.may_match(&page).unwrap()
            );
        }
    }
}

fn matcher_once() -> &'static Matcher {
    static M: std::sync::OnceLock<Matcher> = std::sync::OnceLock::new();
    M.get_or_init(matcher)
}

/// A chapter added after the first look was made is seen: the look follows the index.
#[test]
fn the_first_look_follows_chapters_added_to_the_index() {
    let mut matcher = matcher();
    let mut look = FirstLook::new(&matcher);
    let journey = chapters("xiyouji_1-4.txt").remove(0);
    let copy: String = journey.chars().skip(200).take(1500).collect();
    assert!(!look.may_match(&matcher, &copy).unwrap());
    let fp = fingerprinter().fingerprint(&journey);
    matcher
        .index_mut()
        .add(&ChapterEntry::new(ChapterId(1000), WorkId(3), &fp))
        .unwrap();
    assert!(matcher.may_match(&copy).unwrap());
    assert!(look.may_match(&matcher, &copy).unwrap());
}
