//! A case as a decision screen: every page of the case as a row (its link, when it was seen,
//! how much of it is copied, which disguises it uses) with its copied passages beside the
//! chapter, the characters that differ inside a passage marked.
//!
//! Passages are compared on the fingerprints' normalised text ([`fingerprint::normalize()`]),
//! so a character written in traditional script or as a look-alike letter is the same
//! character written differently ([`Mark::Variant`]), while 曹操 → 曹孟德 is an edit
//! ([`Mark::Changed`] and [`Mark::Extra`]), not copied text. The diff is `similar`'s Myers
//! diff over normalised characters, with a deadline: a hostile page gets a coarser diff,
//! never a slow one.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::time::{Duration, Instant};

use detection::texts::TextCache;
use jobs::{Result, store_err};
use serde::{Deserialize, Serialize};
use similar::{Algorithm, DiffOp};
use store::{CaseMatch, ChapterId, EvidenceReads, SnapshotId, Store};

use crate::cases::CaseView;

/// A way a page disguises what it copied, as the case page lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Disguise {
    /// Han characters written in the other script (traditional for simplified, or back).
    Traditional,
    /// Han characters replaced by others read the same (homophones).
    Homophones,
    /// Latin letters replaced by Cyrillic or Greek ones that look the same, or full-width.
    LookAlike,
    /// Characters replaced by Private Use Area code points a page font draws.
    RemappedFont,
    /// Text (ads, site notes) inserted inside the copied passages.
    Inserted,
    /// Words changed or left out inside the copied passages.
    Edited,
    /// The text was written by the page's scripts, not its markup.
    Script,
    /// A part of a chapter whose other parts are on other pages of the case (a chapter
    /// copied whole on several pages is not split).
    Split,
    /// Several chapters on one page.
    Merged,
    /// A charset label that did not fit the bytes.
    WrongCharset,
}

impl Disguise {
    /// Every disguise, in the order the page lists them.
    pub const ALL: [Disguise; 10] = [
        Disguise::Traditional,
        Disguise::Homophones,
        Disguise::LookAlike,
        Disguise::RemappedFont,
        Disguise::Inserted,
        Disguise::Edited,
        Disguise::Script,
        Disguise::Split,
        Disguise::Merged,
        Disguise::WrongCharset,
    ];

    /// Its stable name (the API's, and the UI's label key after `disguise.`).
    pub fn as_str(self) -> &'static str {
        match self {
            Disguise::Traditional => "traditional",
            Disguise::Homophones => "homophones",
            Disguise::LookAlike => "look_alike",
            Disguise::RemappedFont => "remapped_font",
            Disguise::Inserted => "inserted",
            Disguise::Edited => "edited",
            Disguise::Script => "script",
            Disguise::Split => "split",
            Disguise::Merged => "merged",
            Disguise::WrongCharset => "wrong_charset",
        }
    }
}

/// What a stretch of a compared passage is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Outside the copied passages.
    Plain,
    /// Copied as it stands (punctuation and spaces inside a passage included).
    Copied,
    /// The same characters written differently (traditional script, look-alike letters).
    Variant,
    /// Characters replaced by others.
    Changed,
    /// On the page: text inserted into the passage; in the chapter: text the page left out.
    Extra,
}

impl Mark {
    /// Its stable name (the class the UI marks it with).
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Plain => "plain",
            Mark::Copied => "copied",
            Mark::Variant => "variant",
            Mark::Changed => "changed",
            Mark::Extra => "extra",
        }
    }
}

/// A run of text with one mark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// What it is.
    pub mark: Mark,
    /// The text, as the page or chapter has it.
    pub text: String,
}

/// Segments of one side, joined as they are pushed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Segments(pub Vec<Segment>);

impl Segments {
    fn push(&mut self, mark: Mark, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.0.last_mut() {
            Some(last) if last.mark == mark => last.text.push_str(text),
            _ => self.0.push(Segment {
                mark,
                text: text.to_owned(),
            }),
        }
    }

    fn extend(&mut self, other: Segments) {
        for s in other.0 {
            self.push(s.mark, &s.text);
        }
    }

    /// Its characters.
    pub fn chars(&self) -> usize {
        self.0.iter().map(|s| s.text.chars().count()).sum()
    }

    /// `max` characters from character `skip` on.
    fn window(self, skip: usize, max: usize) -> Segments {
        let mut out = Segments::default();
        let (mut skip, mut left) = (skip, max);
        for s in self.0 {
            if left == 0 {
                break;
            }
            let n = s.text.chars().count();
            if n <= skip {
                skip -= n;
                continue;
            }
            let text: String = s.text.chars().skip(skip).take(left).collect();
            left -= text.chars().count();
            skip = 0;
            out.push(s.mark, &text);
        }
        out
    }

    /// The index (in characters) of the first character that is neither copied as it
    /// stands nor plain.
    fn first_difference(&self) -> Option<usize> {
        let mut at = 0;
        for s in &self.0 {
            if !matches!(s.mark, Mark::Copied | Mark::Plain) {
                return Some(at);
            }
            at += s.text.chars().count();
        }
        None
    }
}

/// A copied passage beside its chapter's, characters marked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The page's side.
    pub page: Segments,
    /// The chapter's side.
    pub chapter: Segments,
    /// The disguises seen in it ([`DiffCounts::disguises`] of `counts`).
    pub disguises: BTreeSet<Disguise>,
    /// How many characters each kind of difference touched.
    pub counts: DiffCounts,
    /// Whether the diff ran out of time and is coarser than it could be.
    pub coarse: bool,
}

/// The fewest same-reading replacements that make a page's homophones.
pub const MIN_HOMOPHONES: usize = 3;

/// How many characters of compared passages each kind of difference touched: what a
/// page's disguises are judged from, summed over its passages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DiffCounts {
    /// Han characters written in the other script: the same character after normalising,
    /// or the chapter's word as converted to the other script (干净 → 乾淨, where 乾 alone
    /// is a character of its own).
    pub script: usize,
    /// Letters written as look-alikes of another alphabet, or full-width.
    pub look_alike: usize,
    /// Characters replaced one for one by others read the same.
    pub homophone: usize,
    /// Characters drawn by a remapped font.
    pub remapped: usize,
    /// Characters inserted in runs of [`INSERTED_RUN`] or more (ads, site notes).
    pub inserted: usize,
    /// Characters otherwise changed, put in or left out.
    pub edited: usize,
}

impl DiffCounts {
    fn add(&mut self, other: &DiffCounts) {
        self.script += other.script;
        self.look_alike += other.look_alike;
        self.homophone += other.homophone;
        self.remapped += other.remapped;
        self.inserted += other.inserted;
        self.edited += other.edited;
    }

    /// The disguises these differences show. Replacing characters by others of the same
    /// reading is homophones only when there are [`MIN_HOMOPHONES`] such replacements or
    /// more, and at least as many as the other edits: among random edits, some replacements
    /// share a reading by chance (most syllables are shared by dozens of characters), and
    /// those make no homophone page.
    pub fn disguises(&self) -> BTreeSet<Disguise> {
        let homophones = self.homophone >= MIN_HOMOPHONES && self.homophone >= self.edited;
        let edited = self.edited + if homophones { 0 } else { self.homophone };
        [
            (Disguise::Traditional, self.script > 0),
            (Disguise::LookAlike, self.look_alike > 0),
            (Disguise::Homophones, homophones),
            (Disguise::RemappedFont, self.remapped > 0),
            (Disguise::Inserted, self.inserted > 0),
            (Disguise::Edited, edited > 0),
        ]
        .into_iter()
        .filter_map(|(d, seen)| seen.then_some(d))
        .collect()
    }
}

/// The time one passage's diff may take before it settles for a coarser one.
pub const DIFF_BUDGET: Duration = Duration::from_millis(100);

/// The most characters a difference at either end of a passage may have and still be
/// taken for the passage's edge a little off rather than a disguise.
const EDGE_NOISE: usize = 2;

/// The shortest run of inserted characters that counts as inserted text (an ad) rather
/// than an edit.
pub const INSERTED_RUN: usize = 6;

/// Compares a copied passage of a page with the chapter's passage it copies: both sides
/// marked, and the disguises the differences show. The diff gives up refining after
/// `budget` (see [`Comparison::coarse`]).
pub fn compare(page: &str, chapter: &str, budget: Duration) -> Comparison {
    // Normalising drops Private Use Area characters; a remapped font's stand-ins are kept
    // as a character of the same length, so that they line up with what they replace.
    let stand_ins: String = page
        .chars()
        .map(|c| if is_private_use(c) { PUA_STAND_IN } else { c })
        .collect();
    let (np, nc) = (
        fingerprint::normalize(&stand_ins),
        fingerprint::normalize(chapter),
    );
    let pc: Vec<char> = np.text().chars().collect();
    let remapped: Vec<bool> = (0..pc.len())
        .map(|i| {
            page[np.original_range(i..i + 1)]
                .chars()
                .any(is_private_use)
        })
        .collect();
    let cc: Vec<char> = nc.text().chars().collect();
    let deadline = Instant::now() + budget;
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, &cc, &pc, Some(deadline));
    let coarse = Instant::now() >= deadline;
    let mut page_marks = vec![Mark::Copied; pc.len()];
    let mut chapter_marks = vec![Mark::Copied; cc.len()];
    let mut counts = DiffCounts::default();
    // A difference of a character or two at either end of a passage is where the matcher's
    // passage begins or ends a little off the copy (a heading's 第 beside the text's 帝):
    // marked, but no evidence of a disguise.
    let at_an_end = |(o, old_len): (usize, usize), (n, new_len): (usize, usize)| {
        old_len.max(new_len) <= EDGE_NOISE
            && ((o == 0 && n == 0) || (o + old_len == cc.len() && n + new_len == pc.len()))
    };
    let source = |n: &fingerprint::Normalized<'_>, text: &str, i: usize| -> String {
        text[n.original_range(i..i + 1)].to_owned()
    };
    for op in ops {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    let (o, n) = (old_index + k, new_index + k);
                    let (was, is) = (source(&nc, chapter, o), source(&np, page, n));
                    if was == is {
                        continue;
                    }
                    match variant(&is) {
                        Some(Disguise::Traditional) => counts.script += 1,
                        Some(_) => counts.look_alike += 1,
                        None => continue,
                    }
                    page_marks[n] = Mark::Variant;
                    chapter_marks[o] = Mark::Variant;
                }
            }
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => {
                chapter_marks[old_index..old_index + old_len].fill(Mark::Extra);
                if !at_an_end((old_index, old_len), (new_index, 0)) {
                    counts.edited += old_len;
                }
            }
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => {
                page_marks[new_index..new_index + new_len].fill(Mark::Extra);
                if new_len >= INSERTED_RUN {
                    counts.inserted += new_len;
                } else if !at_an_end((old_index, 0), (new_index, new_len)) {
                    counts.edited += new_len;
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                chapter_marks[old_index..old_index + old_len].fill(Mark::Changed);
                page_marks[new_index..new_index + new_len].fill(Mark::Changed);
                if remapped[new_index..new_index + new_len].contains(&true) {
                    counts.remapped += new_len;
                    continue;
                }
                if at_an_end((old_index, old_len), (new_index, new_len)) {
                    continue;
                }
                if old_len != new_len {
                    counts.edited += old_len.max(new_len);
                    continue;
                }
                for k in 0..old_len {
                    let (o, n) = (old_index + k, new_index + k);
                    if in_other_script((chapter, &nc), o, (page, &np), n) {
                        counts.script += 1;
                        chapter_marks[o] = Mark::Variant;
                        page_marks[n] = Mark::Variant;
                    } else if homophone(cc[o], pc[n]) {
                        counts.homophone += 1;
                    } else {
                        counts.edited += 1;
                    }
                }
            }
        }
    }
    Comparison {
        page: marked(page, &np, &page_marks),
        chapter: marked(chapter, &nc, &chapter_marks),
        disguises: counts.disguises(),
        counts,
        coarse,
    }
}

/// What writing a character as `is` is, when both normalise to the same one; `None` when
/// it is no disguise (upper and lower case).
fn variant(is: &str) -> Option<Disguise> {
    let first = is.chars().next()?;
    if fingerprint::normalize::is_han(first) {
        Some(Disguise::Traditional)
    } else if !first.is_ascii() {
        Some(Disguise::LookAlike)
    } else {
        None
    }
}

/// Characters either side of a replaced one that the script check converts with it: the
/// converters' rules are words of a few characters.
const SCRIPT_CONTEXT: usize = 3;

/// Whether the page's normalised character `n` is the chapter's character `o` as its words
/// are written in the other script. Normalising converts one character at a time, so a
/// character whose conversion depends on its word stays itself: 干 is 乾 in 乾淨 but 幹 in
/// 幹部, and 乾 alone is a character of its own; such a page looks edited, or homophones
/// where the two share a reading, unless the chapter's words around it are converted
/// whole.
fn in_other_script(
    (chapter, nc): (&str, &fingerprint::Normalized<'_>),
    o: usize,
    (page, np): (&str, &fingerprint::Normalized<'_>),
    n: usize,
) -> bool {
    let Some(is) = page[np.original_range(n..n + 1)].chars().next() else {
        return false;
    };
    if !fingerprint::normalize::is_han(is) {
        return false;
    }
    let from = o.saturating_sub(SCRIPT_CONTEXT);
    let to = (o + 1 + SCRIPT_CONTEXT).min(nc.char_len());
    let words = nc.original_range(from..to);
    let before = chapter[words.start..nc.original_range(o..o + 1).start]
        .chars()
        .count();
    let words = &chapter[words];
    [zhconv::Variant::ZhHant, zhconv::Variant::ZhHans]
        .into_iter()
        .any(|script| {
            let converted = zhconv::zhconv(words, script);
            // The converters write Han characters one for one: the character at the same
            // place is the replaced one's conversion.
            converted.chars().count() == words.chars().count()
                && converted.chars().nth(before) == Some(is)
        })
}

/// Whether two normalised Han characters are read the same.
fn homophone(a: char, b: char) -> bool {
    fingerprint::pinyin::syllable(a).is_some_and(|s| fingerprint::pinyin::syllable(b) == Some(s))
}

/// What a page's Private Use Area character stands as in the diff: a Han character of the
/// same UTF-8 length (the offsets of the page's text stay valid), which normalising keeps.
const PUA_STAND_IN: char = '〇';

fn is_private_use(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// `text` as segments: each normalised character's source with its mark, what
/// normalisation dropped (punctuation, spaces) as copied unless both its neighbours are
/// marked alike.
fn marked(text: &str, n: &fingerprint::Normalized<'_>, marks: &[Mark]) -> Segments {
    let mut out = Segments::default();
    let mut at = 0;
    let mut before = None;
    for (i, mark) in marks.iter().enumerate() {
        let r = n.original_range(i..i + 1);
        if r.end <= at {
            // A second character of one that normalised to several (ﬁ → fi).
            continue;
        }
        // Punctuation between two characters marked alike is theirs (an inserted ad's
        // brackets); elsewhere it is copied.
        let gap = if before == Some(*mark) {
            *mark
        } else {
            Mark::Copied
        };
        out.push(gap, &text[at..r.start.max(at)]);
        before = Some(*mark);
        out.push(*mark, &text[r.start.max(at)..r.end]);
        at = r.end;
    }
    out.push(Mark::Copied, &text[at..]);
    out
}

/// A copied passage as the matcher stores it: byte ranges of the page's text and the
/// chapter, and the characters matched.
#[derive(Debug, Clone, Deserialize)]
pub struct Span {
    /// In the page's main text.
    pub page: Range<usize>,
    /// In the chapter.
    pub chapter: Range<usize>,
    /// Characters matched.
    pub chars: usize,
}

/// The passages of a match, as stored; none when the JSON is not the matcher's.
pub fn spans(passages: &str) -> Vec<Span> {
    serde_json::from_str(passages).unwrap_or_default()
}

/// One passage shown on the case page: a little context each side, the passage compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Passage {
    /// The page's text just before the passage.
    pub page_before: String,
    /// The chapter's text just before it.
    pub chapter_before: String,
    /// The passage, compared (cut to the case page's length).
    pub comparison: Comparison,
    /// The page's text just after it.
    pub page_after: String,
    /// The chapter's text just after it.
    pub chapter_after: String,
    /// Characters matched.
    pub chars: usize,
    /// Characters of the passage's page side before the part shown (when its first
    /// difference lies further in than the case page shows, the part shown starts a little
    /// before it).
    pub page_skipped: usize,
    /// The same on the chapter's side.
    pub chapter_skipped: usize,
    /// Characters of the passage (page side) after the part shown.
    pub hidden: usize,
}

/// A chapter copied on a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageChapter {
    /// The chapter.
    pub chapter_id: ChapterId,
    /// Its 1-based position in the work.
    pub index: u32,
    /// Its title.
    pub title: String,
    /// Share of the chapter on this page, 0..1.
    pub coverage: f64,
    /// The matcher's score, 0..1.
    pub score: f64,
    /// Its passages, in page order (at most [`ReviewLimits::passages`]).
    pub passages: Vec<Passage>,
    /// Passages not shown.
    pub more: usize,
}

/// One page (URL) of a case: a row of the decision screen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewPage {
    /// The URL fetched.
    pub url: String,
    /// The URL after redirects.
    pub final_url: String,
    /// The first fetch that matched.
    pub first_seen: chrono::DateTime<chrono::Utc>,
    /// The last.
    pub last_seen: chrono::DateTime<chrono::Utc>,
    /// Its latest snapshot that matched.
    pub snapshot: SnapshotId,
    /// Characters of the page's main text copied from the work (its latest snapshot).
    pub copied_chars: u64,
    /// Characters of the page's main text.
    pub page_chars: u64,
    /// `copied_chars / page_chars`, 0..1.
    pub share: f64,
    /// What its text was made from (`markup`, `script`, `endpoint`).
    pub text_source: String,
    /// The disguises seen on it.
    pub disguises: Vec<Disguise>,
    /// The chapters it copies, in work order, with their passages when the page shows them.
    pub chapters: Vec<PageChapter>,
}

/// How much the case page shows.
#[derive(Debug, Clone, Copy)]
pub struct ReviewLimits {
    /// Pages whose passages are read and compared; the rest are rows only.
    pub pages: usize,
    /// Passages per chapter and page.
    pub passages: usize,
    /// Characters of a passage shown per side.
    pub chars: usize,
    /// Characters of context each side of a passage.
    pub context: usize,
}

impl Default for ReviewLimits {
    fn default() -> Self {
        ReviewLimits {
            pages: 20,
            passages: 3,
            chars: 400,
            context: 40,
        }
    }
}

/// The pages of a case as rows, newest sighting first, each with its passages beside
/// the chapter's (for the first [`ReviewLimits::pages`]). Texts are read once per snapshot
/// and chapter; the comparing runs off the async runtime.
///
/// # Errors
/// A database failure.
pub async fn review_pages(
    store: &Store,
    view: &CaseView,
    cache: &TextCache,
    limits: ReviewLimits,
) -> Result<Vec<ReviewPage>> {
    // Each URL's latest snapshot, and its matches.
    let mut latest: HashMap<&str, (&CaseMatch, chrono::DateTime<chrono::Utc>)> = HashMap::new();
    for m in &view.matches {
        let entry = latest.entry(m.url.as_str()).or_insert((m, m.fetched_at));
        entry.1 = entry.1.min(m.fetched_at);
        if (m.fetched_at, m.snapshot_id) > (entry.0.fetched_at, entry.0.snapshot_id) {
            entry.0 = m;
        }
    }
    let mut rows: Vec<(&CaseMatch, chrono::DateTime<chrono::Utc>)> = latest.into_values().collect();
    rows.sort_by(|a, b| (b.0.fetched_at, &b.0.url).cmp(&(a.0.fetched_at, &a.0.url)));
    // The parts of chapters on the pages: a page holding a part of a chapter whose other
    // parts are on other pages is a split page (a chapter copied whole on several pages is
    // not split).
    let snapshots: BTreeSet<SnapshotId> = rows.iter().map(|(m, _)| m.snapshot_id).collect();
    let parts = ChapterParts::of(
        view.matches
            .iter()
            .filter(|m| snapshots.contains(&m.snapshot_id)),
    );
    let shown: Vec<SnapshotId> = rows
        .iter()
        .take(limits.pages)
        .map(|(m, _)| m.snapshot_id)
        .collect();
    let chapter_ids: BTreeSet<ChapterId> = view
        .matches
        .iter()
        .filter(|m| shown.contains(&m.snapshot_id))
        .map(|m| m.chapter_id)
        .collect();
    let bodies = detection::chapters(store, chapter_ids, cache).await?;
    // Every page's text in one query (a case of many pages made one round trip a page).
    let wanted: Vec<SnapshotId> = rows.iter().map(|(m, _)| m.snapshot_id).collect();
    let mut texts: HashMap<SnapshotId, store::PageText> = store
        .page_texts(&wanted)
        .await
        .map_err(store_err("reading the pages' texts"))?
        .into_iter()
        .map(|t| (t.snapshot, t))
        .collect();
    // A text that is not there is the same error it was when read alone.
    for id in &wanted {
        if !texts.contains_key(id) {
            let text = store
                .page_text(*id)
                .await
                .map_err(store_err("reading a page's text"))?;
            texts.insert(*id, text);
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    for (latest, first_seen) in rows {
        let text = &texts[&latest.snapshot_id];
        let mut matches: Vec<&CaseMatch> = view
            .matches
            .iter()
            .filter(|m| m.snapshot_id == latest.snapshot_id)
            .collect();
        matches.sort_by_key(|m| m.chapter_index);
        let mut disguises: BTreeSet<Disguise> = BTreeSet::new();
        if text.text_source != "markup" {
            disguises.insert(Disguise::Script);
        }
        if text.declared_encoding.is_some() {
            disguises.insert(Disguise::WrongCharset);
        }
        if matches.len() > 1 {
            disguises.insert(Disguise::Merged);
        }
        if matches.iter().any(|m| parts.is_split(m)) {
            disguises.insert(Disguise::Split);
        }
        let mut counts = DiffCounts::default();
        let compare_here = shown.contains(&latest.snapshot_id);
        let mut chapters = Vec::with_capacity(matches.len());
        for m in &matches {
            let spans = spans(&m.passages);
            let passages = match bodies.get(&m.chapter_id) {
                Some(chapter) if compare_here => {
                    let (page, chapter) = (text.body.clone(), chapter.body.clone());
                    let spans: Vec<Span> = spans.iter().take(limits.passages).cloned().collect();
                    tokio::task::spawn_blocking(move || {
                        spans
                            .iter()
                            .filter_map(|s| passage(&page, &chapter, s, limits))
                            .collect::<Vec<_>>()
                    })
                    .await
                    .map_err(|e| jobs::Error::task("comparing passages", e))?
                }
                _ => Vec::new(),
            };
            for p in &passages {
                counts.add(&p.comparison.counts);
            }
            chapters.push(PageChapter {
                chapter_id: m.chapter_id,
                index: m.chapter_index,
                title: m.chapter_title.clone(),
                coverage: m.coverage,
                score: m.score,
                more: spans.len().saturating_sub(passages.len()),
                passages,
            });
        }
        counts.inserted += matches
            .iter()
            .map(|m| inserted_between(&text.body, &spans(&m.passages)))
            .sum::<usize>();
        disguises.extend(counts.disguises());
        let copied_chars: u64 = matches.iter().map(|m| u64::from(m.matched_chars)).sum();
        let page_chars = u64::from(latest.page_chars).max(1);
        out.push(ReviewPage {
            url: latest.url.clone(),
            final_url: latest.final_url.clone(),
            first_seen,
            last_seen: latest.fetched_at,
            snapshot: latest.snapshot_id,
            copied_chars,
            page_chars: u64::from(latest.page_chars),
            share: (copied_chars as f64 / page_chars as f64).min(1.0),
            text_source: text.text_source.clone(),
            disguises: disguises.into_iter().collect(),
            chapters,
        });
    }
    Ok(out)
}

/// Bytes of chapter between two passages that still make them one run of the chapter
/// (a line break, a punctuation mark or two the passages left out).
const CONTIGUOUS_CHAPTER: usize = 12;

/// Characters of text the page put between passages that follow one another in the
/// chapter: an ad or a site's note inserted into the copy (runs of [`INSERTED_RUN`] or
/// more letters and digits). The passages themselves break where such text stands, so the
/// diff of each passage never sees it.
fn inserted_between(page: &str, spans: &[Span]) -> usize {
    let mut by_page: Vec<&Span> = spans.iter().collect();
    by_page.sort_by_key(|s| s.page.start);
    by_page
        .windows(2)
        .filter(|w| {
            w[1].chapter.start >= w[0].chapter.end.saturating_sub(CONTIGUOUS_CHAPTER)
                && w[1].chapter.start.saturating_sub(w[0].chapter.end) <= CONTIGUOUS_CHAPTER
        })
        .filter_map(|w| page.get(w[0].page.end..w[1].page.start))
        .map(|gap| gap.chars().filter(|c| c.is_alphanumeric()).count())
        .filter(|&n| n >= INSERTED_RUN)
        .sum()
}

/// A match below this coverage holds a part of its chapter, not the whole.
const PART_OF_CHAPTER: f64 = 0.8;

/// The parts of chapters that the pages of a case hold: for each chapter, the pages that
/// hold only a part of it, with the chapter's byte ranges each part covers.
struct ChapterParts(HashMap<ChapterId, Vec<PagePart>>);

/// A page holding a part of a chapter, and the chapter's byte ranges it covers.
type PagePart = (SnapshotId, Vec<Range<usize>>);

impl ChapterParts {
    fn of<'a>(matches: impl Iterator<Item = &'a CaseMatch>) -> Self {
        let mut parts: HashMap<ChapterId, Vec<PagePart>> = HashMap::new();
        for m in matches.filter(|m| m.coverage < PART_OF_CHAPTER) {
            let ranges = merged(spans(&m.passages).into_iter().map(|s| s.chapter).collect());
            parts
                .entry(m.chapter_id)
                .or_default()
                .push((m.snapshot_id, ranges));
        }
        ChapterParts(parts)
    }

    /// Whether `m`'s page holds a part of its chapter whose other parts are on other pages:
    /// another page holds a part of the chapter that is mostly not this page's.
    fn is_split(&self, m: &CaseMatch) -> bool {
        let Some(parts) = self.0.get(&m.chapter_id) else {
            return false;
        };
        let Some((_, mine)) = parts.iter().find(|(s, _)| *s == m.snapshot_id) else {
            return false;
        };
        parts.iter().any(|(other, theirs)| {
            *other != m.snapshot_id
                && 2 * overlap(mine, theirs) < covered(mine).min(covered(theirs))
        })
    }
}

/// `ranges` sorted, overlapping and touching ones joined.
fn merged(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.retain(|r| !r.is_empty());
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Bytes the joined ranges cover.
fn covered(ranges: &[Range<usize>]) -> usize {
    ranges.iter().map(|r| r.len()).sum()
}

/// Bytes two lists of joined ranges have in common.
fn overlap(a: &[Range<usize>], b: &[Range<usize>]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (&a[i], &b[j]);
        common += x.end.min(y.end).saturating_sub(x.start.max(y.start));
        if x.end <= y.end {
            i += 1;
        } else {
            j += 1;
        }
    }
    common
}

/// One stored passage of `page` and `chapter`, compared and cut to the limits; `None` for a
/// range that is not on a character boundary of its text.
fn passage(page: &str, chapter: &str, span: &Span, limits: ReviewLimits) -> Option<Passage> {
    let (p, c) = (
        page.get(span.page.clone())?,
        chapter.get(span.chapter.clone())?,
    );
    let comparison = compare(p, c, DIFF_BUDGET);
    let total = comparison.page.chars();
    // Where the shown part starts: at the passage's start, unless its first difference
    // would not be shown; then a little before that difference, so the reviewer sees it.
    let start = |side: &Segments| {
        side.first_difference()
            .filter(|&at| at + limits.context > limits.chars)
            .map_or(0, |at| at.saturating_sub(limits.context))
    };
    let (page_skipped, chapter_skipped) = (start(&comparison.page), start(&comparison.chapter));
    let comparison = Comparison {
        page: comparison.page.window(page_skipped, limits.chars),
        chapter: comparison.chapter.window(chapter_skipped, limits.chars),
        ..comparison
    };
    Some(Passage {
        page_before: tail(&page[..span.page.start], limits.context),
        chapter_before: tail(&chapter[..span.chapter.start], limits.context),
        page_after: page[span.page.end..].chars().take(limits.context).collect(),
        chapter_after: chapter[span.chapter.end..]
            .chars()
            .take(limits.context)
            .collect(),
        chars: span.chars,
        hidden: total.saturating_sub(page_skipped + limits.chars),
        page_skipped,
        chapter_skipped,
        comparison,
    })
}

fn tail(text: &str, chars: usize) -> String {
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(chars)).collect()
}

/// A page's whole text beside a whole chapter, every copied passage compared, the rest
/// plain: the case page's "whole chapter" view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WholeComparison {
    /// The page's main text.
    pub page: Segments,
    /// The chapter.
    pub chapter: Segments,
    /// The disguises seen.
    pub disguises: BTreeSet<Disguise>,
}

/// Compares all of `page` with all of `chapter` along `spans` (passages that overlap one
/// before them are left plain). CPU work: call it off the async runtime.
pub fn compare_whole(page: &str, chapter: &str, spans: &[Span]) -> WholeComparison {
    let mut compared: Vec<(&Span, Comparison)> = spans
        .iter()
        .filter_map(|s| {
            let (p, c) = (page.get(s.page.clone())?, chapter.get(s.chapter.clone())?);
            Some((s, compare(p, c, DIFF_BUDGET)))
        })
        .collect();
    let mut counts = DiffCounts::default();
    for (_, c) in &compared {
        counts.add(&c.counts);
    }
    let disguises = counts.disguises();
    compared.sort_by_key(|(s, _)| s.page.start);
    let page_side = along(
        page,
        compared.iter().map(|(s, c)| (s.page.clone(), &c.page)),
    );
    compared.sort_by_key(|(s, _)| s.chapter.start);
    let chapter_side = along(
        chapter,
        compared
            .iter()
            .map(|(s, c)| (s.chapter.clone(), &c.chapter)),
    );
    WholeComparison {
        page: page_side,
        chapter: chapter_side,
        disguises,
    }
}

/// `text` with each range (ascending) replaced by its segments, plain between them.
fn along<'a>(text: &str, parts: impl Iterator<Item = (Range<usize>, &'a Segments)>) -> Segments {
    let mut out = Segments::default();
    let mut at = 0;
    for (range, segments) in parts {
        if range.start < at {
            continue;
        }
        out.push(Mark::Plain, &text[at..range.start]);
        out.extend(segments.clone());
        at = range.end;
    }
    out.push(Mark::Plain, &text[at..]);
    out
}

/// Why a reviewer dismissed a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DismissReason {
    /// The site is licensed to publish the work.
    Licensed,
    /// A quotation (fair use, a review).
    Quotation,
    /// Not the rights holder's text.
    NotOurs,
    /// Another reason (the note says which).
    Other,
}

impl DismissReason {
    /// Every reason, in the order the form offers them.
    pub const ALL: [DismissReason; 4] = [
        DismissReason::Licensed,
        DismissReason::Quotation,
        DismissReason::NotOurs,
        DismissReason::Other,
    ];

    /// Its stable name, as the history's note starts with it.
    pub fn as_str(self) -> &'static str {
        match self {
            DismissReason::Licensed => "licensed",
            DismissReason::Quotation => "quotation",
            DismissReason::NotOurs => "not_ours",
            DismissReason::Other => "other",
        }
    }

    /// The reason named `name`.
    ///
    /// # Errors
    /// [`jobs::Error::Refused`] naming the reasons.
    pub fn parse(name: &str) -> Result<DismissReason> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == name.trim())
            .ok_or_else(|| {
                jobs::Error::Refused(format!(
                    "a reason for dismissing is one of {}, not {name:?}",
                    Self::ALL.map(DismissReason::as_str).join(", ")
                ))
            })
    }
}

/// The note a decision leaves in the case's history: the dismissal's reason first.
pub fn decision_note(reason: Option<DismissReason>, note: Option<&str>) -> Option<String> {
    match (reason, note.map(str::trim).filter(|n| !n.is_empty())) {
        (Some(r), Some(n)) => Some(format!("{}: {n}", r.as_str())),
        (Some(r), None) => Some(r.as_str().to_owned()),
        (None, n) => n.map(str::to_owned),
    }
}

/// Takes back a decision: case `id`, now `now`, goes back to `before`, with `undo` in its
/// history.
///
/// # Errors
/// [`jobs::Error::Refused`] when the case is no longer `now` (someone acted since) or cannot
/// go back to `before`; [`jobs::Error::is_not_found`] for an unknown case; a database failure.
pub async fn undo(
    store: &Store,
    id: store::CaseId,
    now: store::CaseStatus,
    before: store::CaseStatus,
    actor: &str,
) -> Result<store::CaseRecord> {
    use store::{CaseReads, CaseWrites};
    let case = store
        .case(id)
        .await
        .map_err(store_err("reading the case"))?;
    if case.status != now {
        return Err(jobs::Error::Refused(format!(
            "case {id} is {} now, not {now}: nothing to undo",
            case.status
        )));
    }
    if !now.can_become(before) {
        return Err(jobs::Error::Refused(format!(
            "a {now} case cannot go back to {before}"
        )));
    }
    store
        .set_case_status(id, before, actor, Some("undo"))
        .await
        .map_err(store_err("undoing the decision"))
}

/// The next `new` case in the review queue's order after `case` (the queue lists the
/// newest sightings first), for "confirm and next".
///
/// # Errors
/// A database failure.
pub async fn next_in_queue(
    store: &Store,
    case: &store::CaseRecord,
) -> Result<Option<store::CaseId>> {
    use store::CaseReads;
    let filter = store::CaseFilter {
        status: Some(store::CaseStatus::New),
        ..Default::default()
    };
    let next = store
        .cases(&filter, Some(case.cursor()), 1)
        .await
        .map_err(store_err("reading the review queue"))?;
    Ok(next.first().map(|c| c.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(s: &Segments, mark: Mark) -> String {
        s.0.iter()
            .filter(|x| x.mark == mark)
            .map(|x| x.text.as_str())
            .collect::<Vec<_>>()
            .join("|")
    }

    fn joined(s: &Segments) -> String {
        s.0.iter().map(|x| x.text.as_str()).collect()
    }

    #[test]
    fn dismissals_note_their_reason_first() {
        assert_eq!(
            decision_note(Some(DismissReason::NotOurs), Some(" a fan's summary ")).as_deref(),
            Some("not_ours: a fan's summary")
        );
        assert_eq!(
            decision_note(Some(DismissReason::Licensed), Some("")).as_deref(),
            Some("licensed")
        );
        assert_eq!(
            decision_note(None, Some("checked")).as_deref(),
            Some("checked")
        );
        assert_eq!(
            DismissReason::parse("quotation").unwrap(),
            DismissReason::Quotation
        );
        let refused = DismissReason::parse("bored").unwrap_err().to_string();
        assert!(
            refused.contains("licensed, quotation, not_ours, other"),
            "{refused}"
        );
    }

    #[test]
    fn an_edit_inside_a_copy_is_marked_not_copied() {
        let chapter = "却说曹操引兵追赶，直到江边。";
        let page = "却说曹孟德引兵追赶，直到江边。";
        let c = compare(page, chapter, DIFF_BUDGET);
        assert_eq!(side(&c.page, Mark::Changed), "孟德");
        assert_eq!(side(&c.chapter, Mark::Changed), "操");
        assert_eq!(side(&c.page, Mark::Copied), "却说曹|引兵追赶，直到江边。");
        assert!(c.disguises.contains(&Disguise::Edited));
        // Nothing is lost or reordered on either side.
        assert_eq!(joined(&c.page), page);
        assert_eq!(joined(&c.chapter), chapter);
    }

    #[test]
    fn disguises_are_named() {
        let c = compare("後來他們說話", "后来他们说话", DIFF_BUDGET);
        assert_eq!(c.disguises, BTreeSet::from([Disguise::Traditional]));
        assert_eq!(side(&c.page, Mark::Variant), "後來|們說話");

        let c = compare("Tоm sаid", "Tom said", DIFF_BUDGET);
        assert_eq!(c.disguises, BTreeSet::from([Disguise::LookAlike]));

        let c = compare(
            "他说画很快乐，我门一启走八",
            "他说话很快乐，我们一起走吧",
            DIFF_BUDGET,
        );
        assert_eq!(
            c.disguises,
            BTreeSet::from([Disguise::Homophones]),
            "{:?}",
            c.counts
        );

        let c = compare("他\u{E000}话很快乐", "他说话很快乐", DIFF_BUDGET);
        assert_eq!(c.disguises, BTreeSet::from([Disguise::RemappedFont]));

        let page = "他说话【广告】注册即送888元很快乐";
        let c = compare(page, "他说话很快乐", DIFF_BUDGET);
        assert_eq!(c.disguises, BTreeSet::from([Disguise::Inserted]));
        assert_eq!(side(&c.page, Mark::Extra), "广告】注册即送888元");

        // Case and punctuation are no disguise.
        let c = compare("THE END, he said.", "The end he said", DIFF_BUDGET);
        assert!(c.disguises.is_empty(), "{:?}", c.disguises);
    }

    #[test]
    fn words_converted_to_the_other_script_are_traditional_not_homophones_or_edits() {
        // 乾 alone is a character of its own (qián), so normalising keeps it; in 乾淨 it is
        // 干 written in traditional script.
        let c = compare(
            "他把衣服洗得乾乾淨淨。",
            "他把衣服洗得干干净净。",
            DIFF_BUDGET,
        );
        assert_eq!(
            c.disguises,
            BTreeSet::from([Disguise::Traditional]),
            "{:?}",
            c.counts
        );
        assert_eq!(c.counts.homophone + c.counts.edited, 0, "{:?}", c.counts);
        assert_eq!(side(&c.page, Mark::Changed), "");
    }

    #[test]
    fn a_few_replacements_that_share_a_reading_among_edits_make_no_homophones() {
        let counts = DiffCounts {
            homophone: 5,
            edited: 40,
            ..DiffCounts::default()
        };
        assert_eq!(counts.disguises(), BTreeSet::from([Disguise::Edited]));
        let counts = DiffCounts {
            homophone: MIN_HOMOPHONES - 1,
            ..DiffCounts::default()
        };
        assert_eq!(counts.disguises(), BTreeSet::from([Disguise::Edited]));
        let counts = DiffCounts {
            homophone: 60,
            edited: 3,
            ..DiffCounts::default()
        };
        assert_eq!(
            counts.disguises(),
            BTreeSet::from([Disguise::Homophones, Disguise::Edited])
        );
        let counts = DiffCounts {
            script: 300,
            ..DiffCounts::default()
        };
        assert_eq!(counts.disguises(), BTreeSet::from([Disguise::Traditional]));
        assert!(DiffCounts::default().disguises().is_empty());
    }

    /// A match of chapter 1 on snapshot `snapshot` covering the byte ranges `(start, end)` of its 1,000.
    fn part(snapshot: i64, ranges: &[(usize, usize)]) -> CaseMatch {
        let ranges: Vec<Range<usize>> = ranges.iter().map(|&(a, b)| a..b).collect();
        let passages: Vec<serde_json::Value> = ranges
            .iter()
            .map(|r| {
                serde_json::json!({
                    "page": {"start": 0, "end": r.len()},
                    "chapter": {"start": r.start, "end": r.end},
                    "chars": r.len() / 3,
                })
            })
            .collect();
        CaseMatch {
            coverage: ranges.iter().map(|r| r.len()).sum::<usize>() as f64 / 1000.0,
            ..crate::cases::sample_match(snapshot, &serde_json::to_string(&passages).unwrap(), 333)
        }
    }

    #[test]
    fn a_page_is_split_when_other_pages_hold_the_other_parts_of_its_chapter() {
        let whole = [part(1, &[(0, 1000)]), part(2, &[(0, 980)])];
        let (first, second, again) = (
            part(3, &[(0, 400), (420, 500)]),
            part(4, &[(500, 1000)]),
            part(5, &[(0, 450)]),
        );
        let matches: Vec<CaseMatch> = whole
            .iter()
            .chain([&first, &second, &again])
            .cloned()
            .collect();
        let parts = ChapterParts::of(matches.iter());
        assert!(parts.is_split(&first) && parts.is_split(&second));
        // The first half again: split too, since the second half is on another page.
        assert!(parts.is_split(&again));
        assert!(!whole.iter().any(|m| parts.is_split(m)), "whole copies");
        // A part beside whole copies only, or beside a page holding the same part: no split.
        let parts = ChapterParts::of(whole.iter().chain([&first]));
        assert!(!parts.is_split(&first));
        let parts = ChapterParts::of([&first, &again].into_iter());
        assert!(!parts.is_split(&first) && !parts.is_split(&again));
    }

    #[test]
    fn a_cut_keeps_the_first_characters_and_whole_compares_keep_all_text() {
        let chapter = "第一句话。第二句话。第三句话。";
        let page = format!("导航{}广告", "第一句话。第二句活。第三句话。");
        let start = "导航".len();
        let spans = [Span {
            page: start..start + "第一句话。第二句活。第三句话。".len(),
            chapter: 0..chapter.len(),
            chars: 12,
        }];
        let w = compare_whole(&page, chapter, &spans);
        assert_eq!(joined(&w.page), page);
        assert_eq!(joined(&w.chapter), chapter);
        assert_eq!(side(&w.page, Mark::Plain), "导航|广告");
        assert_eq!(side(&w.page, Mark::Changed), "活");
        let cut = w.page.window(0, 3);
        assert_eq!(joined(&cut), "导航第");
        // A range off a character boundary is left out, never a panic.
        let bad = [Span {
            page: 1..4,
            chapter: 0..3,
            chars: 1,
        }];
        assert_eq!(joined(&compare_whole(&page, chapter, &bad).page), page);
    }

    #[test]
    fn the_part_shown_starts_before_the_first_difference() {
        let chapter = "天".repeat(1000) + "曹操" + &"地".repeat(200);
        let page = "天".repeat(1000) + "曹孟德" + &"地".repeat(200);
        let limits = ReviewLimits::default();
        let span = Span {
            page: 0..page.len(),
            chapter: 0..chapter.len(),
            chars: 1200,
        };
        let p = passage(&page, &chapter, &span, limits).unwrap();
        // 天×1000 and 曹 are copied; 操 → 孟德 is the first difference.
        assert_eq!(p.page_skipped, 1001 - limits.context);
        assert_eq!(p.chapter_skipped, 1001 - limits.context);
        assert_eq!(side(&p.comparison.page, Mark::Changed), "孟德");
        assert_eq!(side(&p.comparison.chapter, Mark::Changed), "操");
        assert_eq!(
            p.page_skipped + p.comparison.page.chars() + p.hidden,
            page.chars().count()
        );
        // A difference near the start: shown from the start.
        let near = passage(
            &page[3 * 990..],
            &chapter[3 * 990..],
            &Span {
                page: 0..page.len() - 3 * 990,
                chapter: 0..chapter.len() - 3 * 990,
                chars: 200,
            },
            limits,
        )
        .unwrap();
        assert_eq!((near.page_skipped, near.chapter_skipped), (0, 0));
    }

    #[test]
    fn a_hostile_pair_ends_within_its_budget() {
        // Two unrelated texts of 200,000 characters: the worst case of a Myers diff.
        let a: String = (0..200_000u64)
            .map(|i| char::from_u32(0x4E00 + ((i * 7919) % 20000) as u32).unwrap())
            .collect();
        let b: String = (0..200_000u64)
            .map(|i| char::from_u32(0x4E00 + ((i * 104_729) % 20000) as u32).unwrap())
            .collect();
        // The deadline bounds the search (a full Myers diff of these would run for hours);
        // building the result is linear.
        let c = compare(&a, &b, Duration::from_millis(50));
        assert!(c.coarse);
        assert_eq!(joined(&c.page), a);
        assert_eq!(joined(&c.chapter), b);
    }
}
