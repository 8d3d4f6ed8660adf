//! Pirate pages: public-domain novels cut into chapters ([`Corpus`]) and made into the pages
//! pirates publish, with each disguise they use, beside negatives that must not match.
//!
//! A [`Corpus`] holds novels cut into chapters ([`split_chapters`]). Of a *registered* novel,
//! every fourth chapter is held out (not registered), so pages made from it are "other chapter
//! of the same novel" negatives; *foreign* novels are never registered. [`pirate_pages`] makes
//! the pages of every [`Case`]; [`crate::quality`] scores what a matcher reports for them. It
//! does no I/O but [`Corpus::load`]; the same seed makes the same pages on every machine.
//!
//! | case | page |
//! |---|---|
//! | verbatim | the chapter in site chrome (breadcrumbs, title, navigation, footer) |
//! | ads | the chapter with an ad line after every 2–4 paragraphs, and in chrome |
//! | traditional | the chapter converted to the other script (simplified ↔ traditional, zhconv, phrase level) |
//! | homophones | 10% of the Han characters replaced by another character of the same toneless pinyin |
//! | edits | 3–5% of the letters and Han characters substituted (half of the edits), deleted or followed by an inserted random character |
//! | split | the chapter cut into 2–4 pages at sentence ends; each page must report the chapter |
//! | merged | 2–3 consecutive chapters on one page; all must be reported |
//! | partial | a contiguous 30–60% of the chapter |
//! | look-alike letters | an English chapter with half of its Latin letters that have a Cyrillic or Greek look-alike (`а е о р с х у і`, `А В Е К М Н О Р С Т Х`, `ο ν`) swapped for it |
//! | script-written | the chapter as it is; [`crate::html`] renders its pages with an empty content element that an inline script fills (`\uXXXX` literals, pieces joined by `+`, `innerHTML` or `document.write`) or fetches from a JSON endpoint |
//! | script-built | the chapter as it is; [`crate::html`] renders its pages with an empty content element that inline scripts build at load time (`atob` of base64, `String.fromCharCode` over char codes, a reversed string `split('').reverse().join('')`), some followed by a hostile script (an endless loop, unbounded recursion, a huge string, prototype tricks) |
//! | CSS order | the chapter as it is; [`crate::html`] shuffles its paragraphs, or its half-sentences, in the markup and puts them back in order with flexbox `order` classes of the page's `<style>` |
//! | remapped font | the most frequent letters and Han characters, 10–25% of them, each replaced by its own Private Use Area code point, as a page whose `@font-face` draws them as the originals does |
//! | GBK as iso-8859-1 | a simplified Chinese chapter as it is; [`crate::html`] writes it in GBK declared as `iso-8859-1`, a server's classic default |
//! | other chapter | a held-out chapter of a registered novel (negative) |
//! | other novel | a chapter of a foreign novel (negative) |
//! | quotation | a held-out or foreign chapter quoting 1–3 sentences (at most 150 characters) of a registered chapter (negative) |
//! | chapter as images | a simplified Chinese chapter as it is; [`crate::html`] draws it into one tall image or 2–4 screens (PNG or JPEG, 16–20 px, grey grounds, some with a faint watermark) beside a page whose own text is a title and a slogan, read back by OCR |
//! | other text as images | a held-out or foreign simplified Chinese chapter drawn the same way, beside a photograph (negative) |

use std::path::{Path, PathBuf};

use fingerprint::hash::fmix64;
use fingerprint::normalize_compact;
use fingerprint::pinyin::symbol;
use fingerprint::sentences::split_sentences;
use foldhash::HashMap;
use matcher::{ChapterId, WorkId};

use crate::samples::SAMPLE;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusChapter {
    /// Its id (also for held-out and foreign chapters, which are never registered).
    pub id: ChapterId,
    /// Its novel.
    pub work: WorkId,
    /// The novel's title.
    pub work_title: String,
    /// Position in the novel, from 1.
    pub index: usize,
    /// The chapter's title (its heading line).
    pub title: String,
    /// The chapter's text, heading included.
    pub text: String,
}

impl CorpusChapter {
    /// Whether most of the text is Han characters.
    pub fn is_chinese(&self) -> bool {
        is_chinese(&self.text)
    }
}

/// Whether most of the first 2,000 letters and digits of `text` are Han characters.
pub(crate) fn is_chinese(text: &str) -> bool {
    let (mut han, mut all) = (0, 0);
    for c in text.chars().filter(|c| c.is_alphanumeric()).take(2000) {
        all += 1;
        han += usize::from(is_han(c));
    }
    han * 2 > all
}

fn is_han(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c)
}

/// Whether `line` is a chapter heading: `第…回` in Chinese, `CHAPTER …` / `Chapter …` in
/// English.
fn is_heading(line: &str) -> bool {
    let t = line.trim_start_matches(['\u{3000}', ' ', '\t']);
    (t.starts_with('第') && t.chars().take(12).any(|c| c == '回'))
        || t.starts_with("CHAPTER ")
        || t.starts_with("Chapter ")
}

/// Cuts a novel into chapters at heading lines (`第…回` in Chinese, `CHAPTER …` or
/// `Chapter …` in English; the title is the line's first 24 characters): text before the
/// first heading
/// and pieces with fewer than 500 normalised characters (tables of contents) are dropped, and a
/// chapter longer than `max_bytes` is cut at sentence ends into parts of about `max_bytes`
/// ("title (2)", ...). A text without headings is cut the same way as one long chapter.
/// Returns `(title, text)` pairs.
pub fn split_chapters(text: &str, max_bytes: usize) -> Vec<(String, String)> {
    let mut pieces: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if is_heading(line) {
            // Some sources hold a whole chapter on its heading's line: keep the title short.
            let title: String = line.trim().chars().take(24).collect();
            pieces.push((title, String::new()));
        }
        if let Some((_, body)) = pieces.last_mut() {
            body.push_str(line);
        }
    }
    if pieces.is_empty() {
        pieces.push((String::new(), text.to_string()));
    }
    let mut out = Vec::new();
    for (title, body) in pieces {
        if normalize_compact(&body).chars < 500 {
            continue;
        }
        let parts = cut(&body, max_bytes);
        let n = parts.len();
        for (i, part) in parts.into_iter().enumerate() {
            let title = if n == 1 {
                title.clone()
            } else {
                format!("{title} ({})", i + 1)
            };
            out.push((title, part));
        }
    }
    out
}

/// Cuts `text` at sentence ends into parts of at least `target` bytes (the last one may be
/// shorter, but not below a third of `target`: a shorter tail joins the previous part).
fn cut(text: &str, target: usize) -> Vec<String> {
    let mut parts: Vec<String> = vec![String::new()];
    for (_, sentence) in split_sentences(text) {
        let last = parts.last_mut().expect("parts is never empty");
        last.push_str(sentence);
        if last.len() >= target {
            parts.push(String::new());
        }
    }
    let tail = parts.pop().unwrap_or_default();
    match parts.last_mut() {
        Some(last) if tail.len() < target / 3 => last.push_str(&tail),
        _ => parts.push(tail),
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// The novels a quality run uses; see the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    /// Chapters to register.
    pub registered: Vec<CorpusChapter>,
    /// Chapters of registered novels that are not registered.
    pub held_out: Vec<CorpusChapter>,
    /// Chapters of novels that are not registered at all.
    pub foreign: Vec<CorpusChapter>,
    next_chapter: i64,
    next_work: i64,
}

/// Of a registered novel, chapters whose index (from 1) is a multiple of this are held out.
pub const HOLD_OUT_EVERY: usize = 4;

impl Corpus {
    /// An empty corpus.
    pub fn new() -> Self {
        Corpus::default()
    }

    fn chapters(&mut self, title: &str, text: &str, max_bytes: usize) -> Vec<CorpusChapter> {
        self.next_work += 1;
        let work = WorkId(self.next_work);
        split_chapters(text, max_bytes)
            .into_iter()
            .enumerate()
            .map(|(i, (chapter_title, body))| {
                self.next_chapter += 1;
                CorpusChapter {
                    id: ChapterId(self.next_chapter),
                    work,
                    work_title: title.to_string(),
                    index: i + 1,
                    title: chapter_title,
                    text: body,
                }
            })
            .collect()
    }

    /// Adds a novel to register (but for every [`HOLD_OUT_EVERY`]th chapter); see
    /// [`split_chapters`] for `max_bytes`.
    pub fn add_registered(&mut self, title: &str, text: &str, max_bytes: usize) {
        for c in self.chapters(title, text, max_bytes) {
            if c.index.is_multiple_of(HOLD_OUT_EVERY) {
                self.held_out.push(c);
            } else {
                self.registered.push(c);
            }
        }
    }

    /// Adds a novel that is not registered.
    pub fn add_foreign(&mut self, title: &str, text: &str, max_bytes: usize) {
        let chapters = self.chapters(title, text, max_bytes);
        self.foreign.extend(chapters);
    }

    /// Every chapter, registered or not, by id.
    pub fn chapter(&self, id: ChapterId) -> Option<&CorpusChapter> {
        self.registered
            .iter()
            .chain(&self.held_out)
            .chain(&self.foreign)
            .find(|c| c.id == id)
    }
}

/// Registered novels of the project corpus (`../shared/corpus`, paths under it; every fourth
/// chapter held out). `zh/hongloumeng_hant.txt` is left out: another edition of a registered
/// novel is neither a copy nor a stranger.
pub const REGISTERED: &[&str] = &[
    "zh/sanguoyanyi.txt",
    "zh/xiyouji.txt",
    "zh/hongloumeng.txt",
    "zh/shuihuquanzhuan.txt",
    "zh/laocanyouji.txt",
    "zh/rulinwaishi_hant.txt",
    "zh/jinghuayuan_hant.txt",
    "en/pride_and_prejudice.txt",
    "en/alice_in_wonderland.txt",
    "en/moby_dick.txt",
];

/// Novels of the project corpus that are never registered (negatives).
pub const FOREIGN: &[&str] = &[
    "zh/fengshenyanyi_hant.txt",
    "zh/liaozhaizhiyi_hant.txt",
    "en/frankenstein.txt",
    "en/adventures_of_sherlock_holmes.txt",
];

impl Corpus {
    /// Adds a novel: to register ([`Corpus::add_registered`]) or not ([`Corpus::add_foreign`]).
    pub fn add(&mut self, title: &str, text: &str, registered: bool, max_bytes: usize) {
        if registered {
            self.add_registered(title, text, max_bytes);
        } else {
            self.add_foreign(title, text, max_bytes);
        }
    }

    /// The novels under `dir` cut into chapters of about `chapter_bytes`: the project corpus
    /// ([`REGISTERED`], [`FOREIGN`]) when `dir` has a `zh` folder, else the repository's
    /// sample (the files of [`crate::samples::SAMPLE`]). A novel's title is its path without
    /// `.txt`.
    ///
    /// # Errors
    /// A novel that cannot be read (as UTF-8).
    pub fn load(dir: &Path, chapter_bytes: usize) -> std::io::Result<Corpus> {
        let files: Vec<(&str, bool)> = if dir.join("zh").is_dir() {
            let registered = REGISTERED.iter().map(|f| (*f, true));
            registered
                .chain(FOREIGN.iter().map(|f| (*f, false)))
                .collect()
        } else {
            SAMPLE.iter().map(|s| (s.file, s.registered)).collect()
        };
        let mut novels = Vec::new();
        for (file, registered) in files {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                std::io::Error::new(e.kind(), format!("reading {}: {e}", path.display()))
            })?;
            novels.push((file.trim_end_matches(".txt").to_string(), text, registered));
        }
        let mut corpus = Corpus::new();
        for (title, text, registered) in novels {
            corpus.add(&title, &text, registered, chapter_bytes);
        }
        Ok(corpus)
    }
}

/// Which pirate pages a run makes: the novels, how they are cut, how many pages of each
/// case, from which seed.
#[derive(Debug, Clone)]
pub struct PageOptions {
    /// Novels: the project corpus or a directory holding the sample ([`Corpus::load`]);
    /// `None` for the sample compiled in.
    pub corpus: Option<PathBuf>,
    /// Pages per case (fewer when the corpus has too few chapters of the kind).
    pub per_case: usize,
    /// Seed of the page generator (the same seed makes the same pages).
    pub seed: u64,
    /// Novels are cut into chapters of about this many bytes.
    pub chapter_bytes: usize,
}

impl PageOptions {
    /// The novels, cut ([`crate::samples::corpus`]).
    ///
    /// # Errors
    /// A novel that cannot be read.
    pub fn corpus(&self) -> anyhow::Result<Corpus> {
        crate::samples::corpus(self.corpus.as_deref(), self.chapter_bytes)
    }

    /// The pages of `corpus` ([`pirate_pages`]).
    pub fn pages(&self, corpus: &Corpus) -> Vec<PiratePage> {
        pirate_pages(corpus, self.per_case, self.seed)
    }
}

/// What a pirate page does (or, for negatives, what it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Case {
    /// The chapter as it is, in site chrome.
    Verbatim,
    /// Ads injected between paragraphs.
    Ads,
    /// Converted to the other Chinese script.
    Traditional,
    /// Homophones swapped in.
    Homophones,
    /// 3–5% of the characters edited.
    Edits,
    /// One of 2–4 pages of the chapter.
    Split,
    /// 2–3 chapters on one page.
    Merged,
    /// 30–60% of the chapter.
    Partial,
    /// Latin letters swapped for Cyrillic or Greek look-alikes (English chapters).
    LookAlike,
    /// The chapter written into the page by a script (the text is verbatim here; the HTML
    /// rendering decides how the script writes it).
    Script,
    /// The chapter built by scripts at load time (the HTML rendering decides how).
    ScriptBuilt,
    /// Paragraphs or half-sentences shuffled in the markup, put in order by CSS `order`.
    CssOrder,
    /// The most frequent characters replaced by Private Use Area code points.
    FontRemap,
    /// A GBK page declared as `iso-8859-1` (simplified Chinese chapters).
    Latin1Gbk,
    /// The chapter drawn on a `<canvas>` by a script, by rows or in shuffled chunks, its text
    /// encoded in the script ([`crate::drawn`]).
    Canvas,
    /// The characters shown as glyphs of an SVG sprite through CSS backgrounds
    /// ([`crate::drawn`]).
    Sprite,
    /// Negative: a held-out chapter of a registered novel.
    OtherChapter,
    /// Negative: a chapter of a novel that is not registered.
    OtherNovel,
    /// Negative: an unregistered chapter quoting a few sentences of a registered one.
    Quotation,
    /// The chapter drawn into images (one tall image or 2–4 screens, PNG or JPEG, 16–20 px
    /// on grey grounds, some with a faint watermark), the page's own text a title and a
    /// slogan: read by OCR (simplified Chinese chapters; the HTML rendering draws them).
    Images,
    /// Negative: an unregistered chapter (held out, or of a novel that is not registered)
    /// drawn into images, beside a photograph.
    ImagesOtherNovel,
}

impl Case {
    /// Every case, evasions first.
    pub const ALL: [Case; 21] = [
        Case::Verbatim,
        Case::Ads,
        Case::Traditional,
        Case::Homophones,
        Case::Edits,
        Case::Split,
        Case::Merged,
        Case::Partial,
        Case::LookAlike,
        Case::Script,
        Case::ScriptBuilt,
        Case::CssOrder,
        Case::FontRemap,
        Case::Latin1Gbk,
        Case::Canvas,
        Case::Sprite,
        Case::Images,
        Case::OtherChapter,
        Case::OtherNovel,
        Case::Quotation,
        Case::ImagesOtherNovel,
    ];

    /// The case's name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Case::Verbatim => "verbatim",
            Case::Ads => "ads injected",
            Case::Traditional => "traditional script",
            Case::Homophones => "homophones",
            Case::Edits => "3-5% char edits",
            Case::Split => "split over pages",
            Case::Merged => "merged chapters",
            Case::Partial => "partial copy",
            Case::LookAlike => "look-alike letters",
            Case::Script => "script-written",
            Case::ScriptBuilt => "script-built",
            Case::CssOrder => "CSS order",
            Case::FontRemap => "remapped font",
            Case::Latin1Gbk => "GBK as iso-8859-1",
            Case::Canvas => "canvas",
            Case::Sprite => "glyph sprite",
            Case::OtherChapter => "neg: other chapter",
            Case::OtherNovel => "neg: other novel",
            Case::Quotation => "neg: quotation",
            Case::Images => "chapter as images",
            Case::ImagesOtherNovel => "neg: other text as images",
        }
    }

    /// The case's number in the page generator's seed: its place in the list before later
    /// cases were added, so that adding a case leaves the pages of the others as they were.
    fn seed_no(self) -> u64 {
        match self {
            Case::Verbatim => 0,
            Case::Ads => 1,
            Case::Traditional => 2,
            Case::Homophones => 3,
            Case::Edits => 4,
            Case::Split => 5,
            Case::Merged => 6,
            Case::Partial => 7,
            Case::OtherChapter => 8,
            Case::OtherNovel => 9,
            Case::Quotation => 10,
            Case::LookAlike => 11,
            Case::Script => 12,
            Case::ScriptBuilt => 13,
            Case::CssOrder => 14,
            Case::FontRemap => 15,
            Case::Latin1Gbk => 16,
            Case::Canvas => 17,
            Case::Sprite => 18,
            Case::Images => 19,
            Case::ImagesOtherNovel => 20,
        }
    }

    /// Whether pages of this case copy registered chapters (else they are negatives).
    pub fn is_evasion(self) -> bool {
        !matches!(
            self,
            Case::OtherChapter | Case::OtherNovel | Case::Quotation | Case::ImagesOtherNovel
        )
    }

    /// Whether pages of this case hold their text in images ([`crate::html`] draws them).
    pub fn is_images(self) -> bool {
        matches!(self, Case::Images | Case::ImagesOtherNovel)
    }
}

/// A generated page and what a perfect matcher reports for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiratePage {
    /// How it was made.
    pub case: Case,
    /// The page's main text.
    pub text: String,
    /// The registered chapters it copies (empty for negatives).
    pub expected: Vec<ChapterId>,
    /// Which chapters it was made from, for failure reports.
    pub origin: String,
    /// For a remapped font's page: each Private Use Area code point of the text and the
    /// character its font draws (what the page's `@font-face` must map).
    pub remapped: Vec<(char, char)>,
}

/// A small deterministic generator (the same pages on every machine).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        fmix64(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) < p * (1u64 << 53) as f64
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const ZH_ADS: &[&str] = &[
    "【本站首发】最新章节请访问 www.biquge{n}.com 免费阅读！",
    "手机用户请浏览 m.xs{n}.net 阅读，更优质的阅读体验。",
    "一秒记住【笔趣阁 www.bqg{n}.cc】，精彩小说无弹窗免费阅读！",
    "天才一秒记住本站地址：顶点小说网，最快更新，无广告！",
    "喜欢本书请收藏本站，您的支持是我们最大的动力！",
    "（本章未完，请点击下一页继续阅读）",
    "推荐一个追书神器，换源App，书源多，更新快，下载地址 app{n}.com",
];
const EN_ADS: &[&str] = &[
    "Read the latest chapters for free at www.novel{n}.com!",
    "Support us by turning off your ad blocker. Thank you!",
    "Visit novelhub{n}.net for the fastest updates, no ads.",
    "Bookmark this site and never miss a chapter.",
    "(This chapter is not finished, click next page to continue reading)",
];

fn ad(chinese: bool, rng: &mut Rng) -> String {
    let ads = if chinese { ZH_ADS } else { EN_ADS };
    rng.pick(ads).replace("{n}", &rng.range(1, 99).to_string())
}

/// Site chrome around a page body.
fn chrome(chapter: &CorpusChapter, body: &str, rng: &mut Rng) -> String {
    let n = rng.range(1, 99);
    if chapter.is_chinese() {
        format!(
            "首页 > 小说{n}网 > {} > {}\n{}\n作者：佚名　　更新时间：2024-0{}-1{}\n{body}\n上一章 ← 章节目录 → 下一章\n本站所有小说均来自网友上传，如有侵权请联系删除。\n",
            chapter.work_title,
            chapter.title,
            chapter.title,
            rng.range(1, 9),
            rng.range(0, 9)
        )
    } else {
        format!(
            "Home > Free Novels {n} > {} > {}\n{}\n{body}\nPrevious | Table of Contents | Next\nAll books on this site are uploaded by users.\n",
            chapter.work_title, chapter.title, chapter.title
        )
    }
}

/// Characters of the registered Chinese text grouped by pinyin symbol (homophones), and the
/// common Han characters (for random edits).
#[derive(Debug)]
struct CharTables {
    homophones: HashMap<char, Vec<char>>,
    common_han: Vec<char>,
}

impl CharTables {
    fn new(chapters: &[CorpusChapter]) -> Self {
        let mut freq: HashMap<char, usize> = HashMap::default();
        for c in chapters.iter().filter(|c| c.is_chinese()) {
            for ch in c.text.chars().filter(|&ch| is_han(ch)) {
                *freq.entry(ch).or_default() += 1;
            }
        }
        // Characters seen at least 5 times: pirates substitute ordinary characters.
        let mut common: Vec<(char, usize)> = freq.into_iter().filter(|&(_, n)| n >= 5).collect();
        common.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut by_symbol: HashMap<u32, Vec<char>> = HashMap::default();
        for &(ch, _) in &common {
            by_symbol.entry(symbol(ch)).or_default().push(ch);
        }
        let mut homophones = HashMap::default();
        for group in by_symbol.values().filter(|g| g.len() >= 2) {
            for &ch in group {
                let others: Vec<char> = group.iter().copied().filter(|&o| o != ch).collect();
                homophones.insert(ch, others);
            }
        }
        CharTables {
            homophones,
            common_han: common.iter().take(2000).map(|&(c, _)| c).collect(),
        }
    }
}

fn homophones(text: &str, tables: &CharTables, rng: &mut Rng) -> String {
    text.chars()
        .map(|c| match tables.homophones.get(&c) {
            Some(others) if rng.chance(0.10) => *rng.pick(others),
            _ => c,
        })
        .collect()
}

fn edits(text: &str, chinese: bool, tables: &CharTables, rng: &mut Rng) -> String {
    let rate = 0.03 + 0.02 * rng.below(1001) as f64 / 1000.0;
    let random = |rng: &mut Rng| {
        if chinese && !tables.common_han.is_empty() {
            *rng.pick(&tables.common_han)
        } else {
            char::from(b'a' + rng.below(26) as u8)
        }
    };
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !c.is_alphanumeric() || !rng.chance(rate) {
            out.push(c);
            continue;
        }
        match rng.below(4) {
            0 | 1 => out.push(random(rng)),
            2 => {}
            _ => {
                out.push(c);
                out.push(random(rng));
            }
        }
    }
    out
}

/// Latin letters and their Cyrillic or Greek look-alikes.
const LOOK_ALIKES: &[(char, char)] = &[
    ('a', 'а'),
    ('e', 'е'),
    ('o', 'о'),
    ('p', 'р'),
    ('c', 'с'),
    ('x', 'х'),
    ('y', 'у'),
    ('i', 'і'),
    ('v', 'ν'),
    ('A', 'А'),
    ('B', 'В'),
    ('E', 'Е'),
    ('K', 'К'),
    ('M', 'М'),
    ('H', 'Н'),
    ('O', 'Ο'),
    ('P', 'Р'),
    ('C', 'С'),
    ('T', 'Т'),
    ('X', 'Х'),
];

/// Half of the letters that have a look-alike swapped for it.
fn look_alikes(text: &str, rng: &mut Rng) -> String {
    text.chars()
        .map(
            |c| match LOOK_ALIKES.iter().find(|(latin, _)| *latin == c) {
                Some(&(_, fake)) if rng.chance(0.5) => fake,
                _ => c,
            },
        )
        .collect()
}

/// First Private Use Area code point a remapped font uses.
const PUA_START: u32 = 0xE000;

/// `text` with its most frequent letters and Han characters (ties to the lower code point)
/// each replaced by its own Private Use Area code point, until at least `share` of the letters
/// and Han characters are: what a page shows through a font whose glyphs for those code points
/// are the originals'. Every occurrence of a character gets the same code point.
pub fn remap_font(text: &str, share: f64) -> String {
    remap_font_with_map(text, share).0
}

/// [`remap_font`], with each PUA code point used and the character it replaces, in code point
/// order.
pub fn remap_font_with_map(text: &str, share: f64) -> (String, Vec<(char, char)>) {
    let mut counts: HashMap<char, usize> = HashMap::default();
    let mut total = 0usize;
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        *counts.entry(c).or_default() += 1;
        total += 1;
    }
    let mut by_count: Vec<(char, usize)> = counts.into_iter().collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut map: HashMap<char, char> = HashMap::default();
    let mut covered = 0usize;
    for (c, n) in by_count {
        if covered as f64 >= share * total as f64 {
            break;
        }
        let pua = char::from_u32(PUA_START + map.len() as u32).expect("in the Private Use Area");
        map.insert(c, pua);
        covered += n;
    }
    let remapped = text.chars().map(|c| *map.get(&c).unwrap_or(&c)).collect();
    let mut pairs: Vec<(char, char)> = map.into_iter().map(|(c, pua)| (pua, c)).collect();
    pairs.sort_unstable();
    (remapped, pairs)
}

fn with_ads(text: &str, chinese: bool, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(text.len() + 1024);
    let mut until_ad = rng.range(2, 4);
    for line in text.split_inclusive('\n') {
        out.push_str(line);
        if line.trim().is_empty() {
            continue;
        }
        until_ad -= 1;
        if until_ad == 0 {
            out.push_str(&ad(chinese, rng));
            out.push('\n');
            until_ad = rng.range(2, 4);
        }
    }
    out
}

fn other_script(text: &str) -> String {
    let target = if zhconv::is_hans(text) {
        zhconv::Variant::ZhHant
    } else {
        zhconv::Variant::ZhHans
    };
    zhconv::zhconv(text, target)
}

/// Sentences of `text` with their byte ranges.
fn sentences(text: &str) -> Vec<std::ops::Range<usize>> {
    split_sentences(text)
        .map(|(at, s)| at..at + s.len())
        .collect()
}

/// Normalised characters of `text`.
fn chars(text: &str) -> usize {
    normalize_compact(text).chars
}

/// Makes `per_case` pages of every [`Case`] (fewer where the corpus has too few chapters of
/// the kind: Chinese ones for traditional script and homophones, long ones for splits and
/// partial copies); see the [module docs](self). Deterministic for a given `seed`.
pub fn pirate_pages(corpus: &Corpus, per_case: usize, seed: u64) -> Vec<PiratePage> {
    let tables = CharTables::new(&corpus.registered);
    let mut out = Vec::new();
    for case in Case::ALL {
        let mut rng = Rng(seed ^ fmix64(case.seed_no() + 1));
        let before = out.len();
        // Bounded: a corpus without any eligible chapter makes no page of the case.
        for _ in 0..per_case * 20 {
            if out.len() - before >= per_case {
                break;
            }
            out.extend(make(corpus, case, &tables, &mut rng));
        }
        out.truncate(before + per_case);
    }
    out
}

/// One attempt at pages of `case` (several for a split chapter, none if the random chapter
/// does not fit the case).
fn make(corpus: &Corpus, case: Case, tables: &CharTables, rng: &mut Rng) -> Vec<PiratePage> {
    let page = |case, text, expected: Vec<ChapterId>, origin: String| PiratePage {
        remapped: Vec::new(),
        case,
        text,
        expected,
        origin,
    };
    let origin = |c: &CorpusChapter| format!("{} #{} {}", c.work_title, c.index, c.title);
    let negatives: Vec<&CorpusChapter> = corpus.held_out.iter().chain(&corpus.foreign).collect();
    match case {
        // Drawn as it is: what OCR reads is the chapter, the page's chrome is its markup.
        // Simplified Chinese only: the engine's default model (chi_sim).
        Case::Images | Case::ImagesOtherNovel => {
            let simplified = |c: &&CorpusChapter| c.is_chinese() && zhconv::is_hans(&c.text);
            let pool: Vec<&CorpusChapter> = if case == Case::Images {
                corpus.registered.iter().filter(simplified).collect()
            } else {
                negatives.iter().copied().filter(simplified).collect()
            };
            if pool.is_empty() {
                return Vec::new();
            }
            let c = *rng.pick(&pool);
            let expected = if case == Case::Images {
                vec![c.id]
            } else {
                Vec::new()
            };
            vec![page(case, c.text.clone(), expected, origin(c))]
        }
        Case::OtherChapter | Case::OtherNovel => {
            let pool = if case == Case::OtherChapter {
                &corpus.held_out
            } else {
                &corpus.foreign
            };
            if pool.is_empty() {
                return Vec::new();
            }
            let c = rng.pick(pool);
            vec![page(case, chrome(c, &c.text, rng), Vec::new(), origin(c))]
        }
        Case::Quotation => {
            if negatives.is_empty() || corpus.registered.is_empty() {
                return Vec::new();
            }
            let host = *rng.pick(&negatives);
            let quoted = rng.pick(&corpus.registered);
            let s = sentences(&quoted.text);
            let (first, want) = (rng.below(s.len()), rng.range(1, 3));
            let mut quote = String::new();
            for r in s.iter().skip(first).take(want) {
                let next = &quoted.text[r.clone()];
                if !quote.is_empty() && chars(&quote) + chars(next) > 150 {
                    break;
                }
                quote.push_str(next.trim());
            }
            if chars(&quote) < 10 || chars(&quote) > 150 {
                return Vec::new();
            }
            let lines: Vec<&str> = host.text.split_inclusive('\n').collect();
            let at = rng.range(1, lines.len().max(2) - 1);
            let (open, close) = if host.is_chinese() {
                ("正如书中所写：“", "”\n")
            } else {
                ("As the book says: \"", "\"\n")
            };
            let body = format!(
                "{}{open}{quote}{close}{}",
                lines[..at].concat(),
                lines[at..].concat()
            );
            let o = format!("{} quoting {}", origin(host), origin(quoted));
            vec![page(case, chrome(host, &body, rng), Vec::new(), o)]
        }
        Case::Merged => {
            if corpus.registered.len() < 2 {
                return Vec::new();
            }
            let first = rng.below(corpus.registered.len() - 1);
            let n = rng.range(2, 3);
            let group: Vec<&CorpusChapter> = corpus.registered[first..]
                .iter()
                .take(n)
                .take_while(|c| c.work == corpus.registered[first].work)
                .collect();
            if group.len() < 2 {
                return Vec::new();
            }
            let body: String = group.iter().map(|c| c.text.as_str()).collect();
            let titles: Vec<String> = group.iter().map(|c| origin(c)).collect();
            vec![page(
                case,
                chrome(group[0], &body, rng),
                group.iter().map(|c| c.id).collect(),
                titles.join(" + "),
            )]
        }
        _ => {
            if corpus.registered.is_empty() {
                return Vec::new();
            }
            let c = rng.pick(&corpus.registered);
            let chinese = c.is_chinese();
            let one = |text: String, rng: &mut Rng| {
                vec![page(case, chrome(c, &text, rng), vec![c.id], origin(c))]
            };
            match case {
                Case::Verbatim => one(c.text.clone(), rng),
                Case::Ads => {
                    let t = with_ads(&c.text, chinese, rng);
                    one(t, rng)
                }
                Case::Traditional if chinese => one(other_script(&c.text), rng),
                Case::LookAlike if !chinese => {
                    let t = look_alikes(&c.text, rng);
                    one(t, rng)
                }
                Case::Script | Case::ScriptBuilt | Case::CssOrder | Case::Canvas | Case::Sprite => {
                    one(c.text.clone(), rng)
                }
                Case::Latin1Gbk if chinese && zhconv::is_hans(&c.text) => one(c.text.clone(), rng),
                Case::FontRemap => {
                    let share = rng.range(10, 25) as f64 / 100.0;
                    let (text, remapped) = remap_font_with_map(&c.text, share);
                    let mut pages = one(text, rng);
                    for p in &mut pages {
                        p.remapped.clone_from(&remapped);
                    }
                    pages
                }
                Case::Homophones if chinese => {
                    let t = homophones(&c.text, tables, rng);
                    one(t, rng)
                }
                Case::Edits => {
                    let t = edits(&c.text, chinese, tables, rng);
                    one(t, rng)
                }
                Case::Split => split(c, rng)
                    .into_iter()
                    .enumerate()
                    .map(|(i, (text, n))| {
                        let o = format!("{} page {}/{n}", origin(c), i + 1);
                        page(case, text, vec![c.id], o)
                    })
                    .collect(),
                Case::Partial => {
                    let s = sentences(&c.text);
                    let share = rng.range(30, 60) as f64 / 100.0;
                    let want = (s.len() as f64 * share).ceil() as usize;
                    let start = rng.below(s.len().saturating_sub(want) + 1);
                    let Some(last) = s.get((start + want).min(s.len()) - 1) else {
                        return Vec::new();
                    };
                    let text = c.text[s[start].start..last.end].to_string();
                    if chars(&text) < 600 {
                        return Vec::new();
                    }
                    one(text, rng)
                }
                _ => Vec::new(),
            }
        }
    }
}

/// Pages that hide an excerpt of about `chars` normalised characters of a registered chapter
/// (whole sentences, with 3–5% of its characters edited if `edited`) in the middle of a
/// foreign chapter: the measure of how short a copied passage the indexes still find, which
/// is what winnowing sampling trades for memory. Each page expects the excerpt's chapter.
pub fn excerpt_pages(
    corpus: &Corpus,
    chars_wanted: usize,
    edited: bool,
    count: usize,
    seed: u64,
) -> Vec<PiratePage> {
    let tables = CharTables::new(&corpus.registered);
    let mut rng = Rng(seed ^ fmix64(chars_wanted as u64) ^ u64::from(edited));
    let mut out = Vec::new();
    if corpus.registered.is_empty() || corpus.foreign.is_empty() {
        return out;
    }
    for _ in 0..count * 20 {
        if out.len() == count {
            break;
        }
        let (c, host) = (rng.pick(&corpus.registered), rng.pick(&corpus.foreign));
        let s = sentences(&c.text);
        let first = rng.below(s.len());
        let mut excerpt = String::new();
        for r in &s[first..] {
            if chars(&excerpt) >= chars_wanted {
                break;
            }
            excerpt.push_str(&c.text[r.clone()]);
        }
        if chars(&excerpt) < chars_wanted {
            continue;
        }
        if edited {
            excerpt = edits(&excerpt, c.is_chinese(), &tables, &mut rng);
        }
        let lines: Vec<&str> = host.text.split_inclusive('\n').collect();
        let at = lines.len() / 2;
        let body = format!(
            "{}{excerpt}\n{}",
            lines[..at].concat(),
            lines[at..].concat()
        );
        out.push(PiratePage {
            remapped: Vec::new(),
            case: Case::Partial,
            text: chrome(host, &body, &mut rng),
            expected: vec![c.id],
            origin: format!(
                "{} #{} ({chars_wanted} chars) in {}",
                c.work_title, c.index, host.work_title
            ),
        });
    }
    out
}

/// The pages of a chapter cut into 2–4 parts of at least 600 normalised characters, each in
/// chrome with its page number: `(page text, number of pages)`.
fn split(c: &CorpusChapter, rng: &mut Rng) -> Vec<(String, usize)> {
    let total = chars(&c.text);
    let n = rng.range(2, 4).min(total / 600);
    if n < 2 {
        return Vec::new();
    }
    let s = sentences(&c.text);
    let per = total / n;
    let mut parts: Vec<String> = vec![String::new()];
    for r in &s {
        let last = parts.last_mut().expect("parts is never empty");
        last.push_str(&c.text[r.clone()]);
        if parts.len() < n && chars(parts.last().expect("non-empty")) >= per {
            parts.push(String::new());
        }
    }
    // A short tail (the sentences left after the last full part) joins the part before it.
    if parts.len() >= 2 && chars(parts.last().expect("non-empty")) < per / 2 {
        let tail = parts.pop().expect("non-empty");
        parts.last_mut().expect("non-empty").push_str(&tail);
    }
    let count = parts.len();
    if count < 2 {
        return Vec::new();
    }
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let body = format!("{p}\n（第{}/{count}页）\n", i + 1);
            (chrome(c, &body, rng), count)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chapters_are_cut_at_headings_and_long_ones_in_parts() {
        let body = "天下大势，分久必合，合久必分。".repeat(60);
        let text = format!(
            "目录\n第一回 甲\n第二回 乙\n\n第一回 甲\n{body}\n第二回 乙\n{body}{body}{body}\n"
        );
        let chapters = split_chapters(&text, 4000);
        let titles: Vec<&str> = chapters.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, vec!["第一回 甲", "第二回 乙 (1)", "第二回 乙 (2)"]);
        assert!(chapters[1].1.starts_with("第二回 乙"));
        assert!(chapters.iter().all(|(_, t)| t.len() < 6000));
    }

    #[test]
    fn evasions_change_what_they_should() {
        let mut rng = Rng(1);
        let c = CorpusChapter {
            id: ChapterId(1),
            work: WorkId(1),
            work_title: "三国演义".into(),
            index: 1,
            title: "第一回".into(),
            text: "话说天下大势，分久必合，合久必分。他在做事，她再作诗，它在那里。\n".repeat(80),
        };
        let tables = CharTables::new(std::slice::from_ref(&c));
        let h = homophones(&c.text, &tables, &mut rng);
        assert_eq!(h.chars().count(), c.text.chars().count());
        assert!(h != c.text, "no homophone was swapped in");
        let same_sound = h
            .chars()
            .zip(c.text.chars())
            .all(|(a, b)| symbol(a) == symbol(b));
        assert!(same_sound);
        let e = edits(&c.text, true, &tables, &mut rng);
        let changed = e
            .chars()
            .zip(c.text.chars())
            .filter(|(a, b)| a != b)
            .count();
        assert!(changed > 0);
        assert_eq!(
            normalize_compact(&other_script(&c.text)).text,
            normalize_compact(&c.text).text
        );
        assert!(with_ads(&c.text, true, &mut rng).len() > c.text.len());
        let parts = split(&c, &mut rng);
        assert!(parts.len() >= 2 && parts.iter().all(|(_, n)| *n == parts.len()));
        let remapped = remap_font(&c.text, 0.25);
        let letters = c.text.chars().filter(|c| c.is_alphanumeric()).count();
        let pua = remapped
            .chars()
            .filter(|&c| (0xE000..=0xF8FF).contains(&(c as u32)))
            .count();
        assert_eq!(remapped.chars().count(), c.text.chars().count());
        assert!(
            pua * 4 >= letters && pua * 2 < letters,
            "{pua} of {letters}"
        );
    }
}
