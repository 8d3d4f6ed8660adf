//! The public-domain sample compiled into the binary, once: the default corpus of every
//! harness that needs novels (`bench quality`, `bench pipeline`, `bench load`; the
//! registered four are `bench fingerprint`'s default input). Sources in `data/README.md`.
//!
//! Statics, not constants: a constant's text is copied into every codegen unit that uses it
//! (the demo's texts, `pipeline::demo::SAMPLE`, were in a debug binary twice each).

use std::path::Path;

use anyhow::{Context, Result};

use crate::pirate::Corpus;

/// A novel of the sample.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Its file name under `crates/bench/data/` (and in a directory holding the sample).
    pub file: &'static str,
    /// Its text (UTF-8, chapters on heading lines).
    pub text: &'static str,
    /// Registered by the quality benches (every fourth chapter held out); the others are
    /// novels that are never registered.
    pub registered: bool,
}

impl Sample {
    /// Its title in a corpus: the file name without `.txt`.
    pub fn title(&self) -> &'static str {
        self.file.trim_end_matches(".txt")
    }
}

/// The sample, registered novels first.
pub static SAMPLE: [Sample; 6] = [
    Sample {
        file: "sanguoyanyi_1-10.txt",
        text: include_str!("../data/sanguoyanyi_1-10.txt"),
        registered: true,
    },
    Sample {
        file: "xiyouji_1-4.txt",
        text: include_str!("../data/xiyouji_1-4.txt"),
        registered: true,
    },
    Sample {
        file: "hongloumeng_hant_1-2.txt",
        text: include_str!("../data/hongloumeng_hant_1-2.txt"),
        registered: true,
    },
    Sample {
        file: "alice_1-3.txt",
        text: include_str!("../data/alice_1-3.txt"),
        registered: true,
    },
    Sample {
        file: "shuihuquanzhuan_1-2.txt",
        text: include_str!("../data/shuihuquanzhuan_1-2.txt"),
        registered: false,
    },
    Sample {
        file: "frankenstein_1-2.txt",
        text: include_str!("../data/frankenstein_1-2.txt"),
        registered: false,
    },
];

/// The sample cut into chapters of about `chapter_bytes` (see [`Corpus::add_registered`]).
pub fn sample_corpus(chapter_bytes: usize) -> Corpus {
    let mut corpus = Corpus::new();
    for sample in &SAMPLE {
        corpus.add(
            sample.title(),
            sample.text,
            sample.registered,
            chapter_bytes,
        );
    }
    corpus
}

/// The novels under `dir` ([`Corpus::load`]), or the sample when there is no `dir`, cut into
/// chapters of about `chapter_bytes`.
///
/// # Errors
/// A novel under `dir` that cannot be read.
pub fn corpus(dir: Option<&Path>, chapter_bytes: usize) -> Result<Corpus> {
    match dir {
        Some(dir) => Corpus::load(dir, chapter_bytes)
            .with_context(|| format!("while reading the corpus {}", dir.display())),
        None => Ok(sample_corpus(chapter_bytes)),
    }
}

/// A real 笔趣阁 table of contents (the extraction tests' data, `crates/extract/tests/data/html`,
/// see its README): `bench extract`'s first page, and the `biquge` layout of
/// [`crate::html`] with its chapter list replaced by a chapter.
pub static BIQUGE: &str = include_str!("../../extract/tests/data/html/biquge_info_book_toc.html");

/// Real pages of novel sites, `bench extract`'s default input: [`BIQUGE`], an anti-bot
/// challenge and a script redirect stub.
pub static PAGES: [&[u8]; 3] = [
    BIQUGE.as_bytes(),
    include_bytes!("../../extract/tests/data/html/69shuba_cloudflare_challenge.html"),
    include_bytes!("../../extract/tests/data/html/biquge_info_js_redirect_stub.html"),
];
