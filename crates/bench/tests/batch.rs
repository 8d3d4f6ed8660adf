//! Batch mode (`matcher::BatchQuery`) gives the same candidates, and after verification the
//! same matches, as page-at-a-time matching against an index of the same chapters: on pirate
//! pages of every kind and negatives, with chapters removed from the index (and so not
//! streamed), a chapter registered twice (a page that matches several chapters), an empty
//! page, an empty batch, and a key cap low enough that most keys are skipped.

mod common;

use bench::pirate_pages;
use bench::quality::fingerprint_all;
use common::{corpus, fingerprinter};
use fingerprint::ChapterFingerprint;
use matcher::{
    BatchQuery, Candidate, ChapterEntry, ChapterId, IndexBuilder, Matcher, MatcherSettings,
    MemorySource, WorkId,
};

/// A candidate without its key (an index key page-at-a-time, a batch slot in batch mode).
fn comparable(c: &Candidate) -> (ChapterId, WorkId, usize, String) {
    (
        c.chapter,
        c.work,
        c.chapter_chars,
        format!("{:?}", c.evidence),
    )
}

struct Registered {
    id: ChapterId,
    work: WorkId,
    fingerprint: ChapterFingerprint,
    text: String,
}

/// Checks batch == page-at-a-time under `settings`; returns (pages with a candidate, pages
/// with several matches, matches, candidates).
fn compare(settings: MatcherSettings) -> (usize, usize, usize, usize) {
    let corpus = corpus();
    let fps = fingerprint_all(&corpus.registered, &fingerprinter(), 2);
    let mut registered: Vec<Registered> = corpus
        .registered
        .iter()
        .zip(fps)
        .map(|(c, fp)| Registered {
            id: c.id,
            work: c.work,
            fingerprint: fp,
            text: c.text.clone(),
        })
        .collect();
    // A chapter registered twice, under another work: pages copying it match both.
    let twin = Registered {
        id: ChapterId(1_000_000),
        work: WorkId(1_000),
        fingerprint: registered[3].fingerprint.clone(),
        text: registered[3].text.clone(),
    };
    registered.push(twin);
    let mut builder = IndexBuilder::new(settings.index.clone()).unwrap();
    let mut source = MemorySource::new();
    for r in &registered {
        builder
            .add(&ChapterEntry::new(r.id, r.work, &r.fingerprint))
            .unwrap();
        source.insert(r.id, r.text.clone());
    }
    let mut index = builder.build();
    // Removed after the build: one chapter, then a whole work (the last registered one).
    let removed_chapter = registered[1].id;
    let removed_work = registered[registered.len() - 2].work;
    assert!(index.remove(removed_chapter));
    assert!(index.remove_work(removed_work) > 0);
    let matcher = Matcher::new(settings.clone(), fingerprinter(), index).unwrap();

    let mut texts: Vec<String> = pirate_pages(&corpus, 3, 11)
        .into_iter()
        .map(|p| p.text)
        .collect();
    // The twin chapter copied verbatim: two chapters near its SimHash.
    texts.push(registered[3].text.clone());
    texts.push(String::new());
    texts.push("今天天气很好，我们一起去公园散步吧，然后去吃饭。".to_string());
    let pages: Vec<_> = texts.iter().map(|t| matcher.page(t)).collect();

    let mut batch = matcher.batch(&pages).unwrap();
    for r in &registered {
        if r.id != removed_chapter && r.work != removed_work {
            batch
                .add(&ChapterEntry::new(r.id, r.work, &r.fingerprint))
                .unwrap();
        }
    }
    assert_eq!(batch.chapters(), matcher.index().len());
    let batched = batch.finish();
    assert_eq!(batched.len(), pages.len());

    let (mut with_candidates, mut several, mut matches, mut candidates) = (0, 0, 0, 0);
    for (i, (page, batch_candidates)) in pages.iter().zip(batched).enumerate() {
        let single = matcher.candidates(page).unwrap();
        assert_eq!(
            single.iter().map(comparable).collect::<Vec<_>>(),
            batch_candidates.iter().map(comparable).collect::<Vec<_>>(),
            "candidates of page {i}"
        );
        for c in &batch_candidates {
            assert!(c.chapter != removed_chapter && c.work != removed_work);
        }
        with_candidates += usize::from(!single.is_empty());
        candidates += single.len();
        let one = matcher.verify_candidates(page, single, &source).unwrap();
        let other = matcher
            .verify_candidates(page, batch_candidates, &source)
            .unwrap();
        assert_eq!(one, other, "matches of page {i}");
        assert_eq!(one, matcher.check_page(page, &source).unwrap());
        several += usize::from(one.len() > 1);
        matches += one.len();
    }
    (with_candidates, several, matches, candidates)
}

#[test]
fn batch_mode_finds_what_page_at_a_time_finds() {
    let (with_candidates, several, matches, _) = compare(MatcherSettings::default());
    println!(
        "{with_candidates} pages with candidates, {several} with several matches, {matches} matches"
    );
    assert!(with_candidates > 20, "{with_candidates}");
    assert!(several > 0, "no page matched several chapters");
    assert!(matches > 20, "{matches}");
}

#[test]
fn batch_mode_applies_the_key_cap_as_the_index_does() {
    // A cap of 1 chapter a key: the twin chapter's keys (held by two chapters), a novel's
    // recurring names and common grams are all skipped, and the candidates change.
    let (.., all) = compare(MatcherSettings::default());
    let mut settings = MatcherSettings::default();
    settings.candidates.max_key_postings = 1;
    let (with_candidates, _, matches, capped) = compare(settings);
    assert!(
        with_candidates > 10 && matches > 10,
        "{with_candidates} {matches}"
    );
    assert_ne!(
        capped, all,
        "the cap changed no candidate: the test cannot see it"
    );
}

#[test]
fn an_empty_batch_and_a_batch_without_chapters() {
    let settings = MatcherSettings::default();
    let corpus = corpus();
    let c = &corpus.registered[0];
    let fp = fingerprinter().fingerprint(&c.text);
    let mut empty = BatchQuery::new(&settings, &[]).unwrap();
    empty.add(&ChapterEntry::new(c.id, c.work, &fp)).unwrap();
    assert!(matches!(
        empty.add(&ChapterEntry::new(c.id, c.work, &fp)),
        Err(matcher::Error::Conflict(_))
    ));
    assert_eq!(empty.chapters(), 1);
    assert!(empty.finish().is_empty());

    let index = IndexBuilder::new(settings.index.clone()).unwrap().build();
    let matcher = Matcher::new(settings, fingerprinter(), index).unwrap();
    let pages = [matcher.page(&c.text)];
    let nothing = matcher.batch(&pages).unwrap().finish();
    assert_eq!(nothing, vec![Vec::<Candidate>::new()]);
}
