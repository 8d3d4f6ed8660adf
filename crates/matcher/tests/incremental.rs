//! Incremental updates: an index changed by any sequence of adds, replacements, removals and
//! compactions answers every query exactly like an index built from scratch over the chapters
//! it holds at the end.

mod common;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use common::{data, fingerprinter};
use fingerprint::ChapterFingerprint;
use matcher::index::Probe;
use matcher::{
    CandidateSettings, ChapterEntry, ChapterId, Index, IndexBuilder, IndexSettings, WorkId,
};
use proptest::prelude::*;

/// Fingerprints of 48 pieces of ~1.2 KB (24 of 三国演义, 24 of Alice) and their probes.
fn pieces() -> &'static Vec<(ChapterFingerprint, Probe)> {
    static P: OnceLock<Vec<(ChapterFingerprint, Probe)>> = OnceLock::new();
    P.get_or_init(|| {
        let settings = IndexSettings::default();
        let mut out = Vec::new();
        for name in ["sanguoyanyi_1-10.txt", "alice_1-3.txt"] {
            let text = data(name);
            let mut piece = String::new();
            let stop = out.len() + 24;
            for line in text.split_inclusive('\n') {
                piece.push_str(line);
                if piece.len() >= 1200 {
                    let fp = fingerprinter().fingerprint(&piece);
                    let probe = Probe::new(
                        &settings,
                        &fp.summary,
                        &fp.summary.sentences.hashes,
                        &fp.winnow,
                        &fp.pinyin_winnow,
                    )
                    .unwrap();
                    out.push((fp, probe));
                    piece.clear();
                }
                if out.len() == stop {
                    break;
                }
            }
        }
        out
    })
}

#[derive(Debug, Clone)]
enum Op {
    /// Add (or replace) chapter `id` of work `id % 3` with piece `piece`.
    Add {
        id: i64,
        piece: usize,
    },
    Remove {
        id: i64,
    },
    RemoveWork {
        work: i64,
    },
    Compact,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0i64..30, 0usize..48).prop_map(|(id, piece)| Op::Add { id, piece }),
        2 => (0i64..30).prop_map(|id| Op::Remove { id }),
        1 => (0i64..3).prop_map(|work| Op::RemoveWork { work }),
        1 => Just(Op::Compact),
    ]
}

fn entry(id: i64, piece: usize) -> ChapterEntry<'static> {
    ChapterEntry::new(ChapterId(id), WorkId(id % 3), &pieces()[piece].0)
}

/// What a query returns, without the keys (which depend on the order of updates).
fn answers(index: &Index) -> Vec<Vec<(i64, i64, usize, String)>> {
    let settings = CandidateSettings::default();
    pieces()
        .iter()
        .map(|(_, probe)| {
            index
                .candidates(probe, &settings)
                .into_iter()
                .map(|c| {
                    (
                        c.chapter.0,
                        c.work.0,
                        c.chapter_chars,
                        format!("{:?}", c.evidence),
                    )
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn updates_equal_a_rebuild(ops in prop::collection::vec(op(), 1..80)) {
        let mut index = Index::new(IndexSettings::default()).unwrap();
        let mut model: BTreeMap<i64, usize> = BTreeMap::new();
        for op in &ops {
            match *op {
                Op::Add { id, piece } => {
                    index.add(&entry(id, piece)).unwrap();
                    model.insert(id, piece);
                }
                Op::Remove { id } => {
                    prop_assert_eq!(index.remove(ChapterId(id)), model.remove(&id).is_some());
                }
                Op::RemoveWork { work } => {
                    let before = model.len();
                    model.retain(|id, _| id % 3 != work);
                    prop_assert_eq!(index.remove_work(WorkId(work)), before - model.len());
                }
                Op::Compact => index.compact(),
            }
            prop_assert_eq!(index.len(), model.len());
        }
        let mut builder = IndexBuilder::new(IndexSettings::default()).unwrap();
        for (&id, &piece) in &model {
            builder.add(&entry(id, piece)).unwrap();
        }
        let rebuilt = builder.build();
        prop_assert_eq!(answers(&index), answers(&rebuilt));
        index.compact();
        prop_assert_eq!(answers(&index), answers(&rebuilt));
        let (a, b) = (index.stats(), rebuilt.stats());
        prop_assert_eq!(
            (a.chapters, a.retired, a.text_postings, a.pinyin_postings, a.lsh_postings),
            (b.chapters, b.retired, b.text_postings, b.pinyin_postings, b.lsh_postings)
        );
    }
}
