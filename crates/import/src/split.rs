//! Splitting a work's text into chapters on their headings. Plain text logic, no I/O.
//!
//! A heading is a line (leading and trailing whitespace ignored) that matches one of the
//! heading patterns: by default Chinese `第…章/回/节/卷/集/部/篇` with Chinese or Arabic
//! numerals, and English `Chapter N` / `CHAPTER IV` / `Chapter Twenty-One`. On top of the
//! patterns, three rules keep body text from being taken for headings and tables of contents
//! for chapters:
//!
//! 1. **Numbering.** A candidate whose number goes backwards within its unit ("第四回中…" in
//!    the body of 第五回) is not a heading, unless it restarts at 1 (a new volume, or the
//!    body after a table of contents). A line wider than `max_heading_width` is a heading
//!    only if it continues the numbering (skipping at most two numbers): that is a heading
//!    with its text run on (a file whose line breaks were lost), whose title is cut at the
//!    first punctuation.
//! 2. **Table of contents.** At least `toc_min_entries` headings in a row at the top with
//!    next to no text between them, up to a heading that repeats the first entry's number,
//!    are a table of contents: they (and a preface after them) go to the front matter.
//! 3. **Volume lines.** A heading with an empty body ("第一卷" right before "第一章") is
//!    folded into the title of the heading after it.
//!
//! A bare heading ("CHAPTER I.", "第三回") takes the next line as its subtitle when that
//! line is short and does not end like a sentence (rules like `-----` and captions like
//! `[Illustration]` in between are passed over). Text before the first chapter is front
//! matter; a text with no heading at all is one chapter.

use std::collections::HashMap;

use regex::Regex;

use crate::{Error, Result};

/// Chinese headings: 第 + numeral + unit. `num` and `unit` are what the numbering rule reads.
pub const CHINESE_HEADING: &str = r"^第(?P<num>[0-9０-９零〇一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟]{1,9})(?P<unit>[章回节節卷集部篇])";

/// English headings: "Chapter" + Arabic, Roman or spelled-out number.
pub const ENGLISH_HEADING: &str = r"(?i)^chapter\s+(?P<num>[0-9]{1,4}|[ivxlcdm]{1,8}|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)\b";

/// How [`Splitter`] finds chapters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitSettings {
    /// Regular expressions tried in order on each trimmed line; the first that matches makes
    /// the line a heading candidate. A pattern may name a group `num` (the chapter number:
    /// Arabic, Chinese, Roman or English words) and a group `unit` (chapters and volumes
    /// number apart); without `num` the numbering rule does not apply to it.
    pub heading_patterns: Vec<String>,
    /// Widest heading line, in columns (a CJK character counts two, as on a terminal);
    /// see the numbering rule. Widths rather than chars, so that one limit fits
    /// "第一回　甄士隐梦幻识通灵　贾雨村风尘怀闺秀" and "CHAPTER III.   A Caucus-Race and a Long Tale".
    pub max_heading_width: usize,
    /// Fewest entries that make a table of contents.
    pub toc_min_entries: usize,
    /// Most non-whitespace chars between two table-of-contents entries (a wrapped entry's
    /// second line, a page number). Generous: the restart of the numbering is what tells a
    /// table of contents from short chapters.
    pub toc_max_gap_chars: usize,
}

impl Default for SplitSettings {
    fn default() -> Self {
        SplitSettings {
            heading_patterns: vec![CHINESE_HEADING.to_owned(), ENGLISH_HEADING.to_owned()],
            max_heading_width: 80,
            toc_min_entries: 3,
            toc_max_gap_chars: 80,
        }
    }
}

impl SplitSettings {
    /// Checks the numbers (patterns are checked by [`Splitter::new`], which compiles them).
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] for a `max_heading_width` of 0 (no line would be a heading) or
    /// a `toc_min_entries` below 2 (a table of contents is told apart by its numbering
    /// coming round again, which takes two entries).
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        bounds::at_least("max_heading_width", self.max_heading_width, 1)?;
        bounds::at_least("toc_min_entries", self.toc_min_entries, 2)
    }
}

/// A work's text cut into front matter and chapters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Split {
    /// Text before the first chapter (title page, preface, table of contents), trimmed.
    pub front_matter: String,
    /// Chapters in order; never empty for a text with any non-whitespace character.
    pub chapters: Vec<SplitChapter>,
    /// Entries of the table of contents found at the top (0 when none).
    pub toc_entries: usize,
    /// Heading lines found, table-of-contents entries included (a work whose headings carry
    /// no text between them is told apart from an empty file by this).
    pub headings: usize,
}

/// One chapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitChapter {
    /// The heading (with its subtitle), or empty for a text without headings.
    pub title: String,
    /// The text after the heading, trimmed.
    pub body: String,
}

/// Splits texts into chapters; build once, use for many texts.
#[derive(Debug, Clone)]
pub struct Splitter {
    patterns: Vec<Regex>,
    settings: SplitSettings,
}

/// A line that matched a heading pattern.
#[derive(Debug, Clone)]
struct Candidate {
    /// Byte range of the whole line (newline included) in the text.
    line: std::ops::Range<usize>,
    /// Where the body starts: after the line, or after the title of a run-on heading.
    body_start: usize,
    title: String,
    /// Pattern index and unit: numbering runs per key.
    unit: (usize, String),
    number: Option<u32>,
    long: bool,
}

impl Splitter {
    /// Compiles the heading patterns.
    ///
    /// # Errors
    /// [`Error::InvalidPattern`] naming a pattern that does not compile.
    pub fn new(settings: SplitSettings) -> Result<Self> {
        let patterns = settings
            .heading_patterns
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|e| Error::InvalidPattern {
                    pattern: p.clone(),
                    reason: e.to_string(),
                })
            })
            .collect::<Result<_>>()?;
        Ok(Splitter { patterns, settings })
    }

    /// Cuts `text` into front matter and chapters.
    pub fn split(&self, text: &str) -> Split {
        let candidates = self.candidates(text);
        let mut headings = self.numbered(candidates);
        let heading_count = headings.len();
        let toc_entries = self.table_of_contents(text, &headings);
        let front_end = headings
            .get(toc_entries)
            .map_or(text.len(), |h| h.line.start);
        let front_matter = if headings.len() > toc_entries {
            text[..front_end].trim().to_owned()
        } else {
            String::new()
        };
        headings.drain(..toc_entries);

        let mut chapters: Vec<SplitChapter> = Vec::with_capacity(headings.len());
        let mut pending_title: Option<String> = None;
        for (i, h) in headings.iter().enumerate() {
            let body_end = headings.get(i + 1).map_or(text.len(), |n| n.line.start);
            let body = &text[h.body_start.min(body_end)..body_end];
            let mut title = h.title.clone();
            let mut body = body;
            if h.body_start == h.line.end
                && is_bare(&title)
                && let Some((subtitle, rest)) = self.subtitle(body)
            {
                title = format!("{title} {subtitle}");
                body = rest;
            }
            if let Some(prefix) = pending_title.take() {
                title = format!("{prefix} {title}");
            }
            let body = body.trim();
            if body.is_empty() && i + 1 < headings.len() {
                pending_title = Some(title);
                continue;
            }
            chapters.push(SplitChapter {
                title,
                body: body.to_owned(),
            });
        }
        if chapters.is_empty() && !text.trim().is_empty() {
            return Split {
                front_matter: String::new(),
                chapters: vec![SplitChapter {
                    title: String::new(),
                    body: text.trim().to_owned(),
                }],
                toc_entries: 0,
                headings: 0,
            };
        }
        Split {
            front_matter,
            chapters,
            toc_entries,
            headings: heading_count,
        }
    }

    fn candidates(&self, text: &str) -> Vec<Candidate> {
        let mut out = Vec::new();
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            let lead = line.len() - line.trim_start().len();
            for (index, pattern) in self.patterns.iter().enumerate() {
                let Some(caps) = pattern.captures(trimmed) else {
                    continue;
                };
                let long = width(trimmed) > self.settings.max_heading_width;
                let (title, body_start) = if long {
                    let cut = run_on_title_end(trimmed, caps.get(0).map_or(0, |m| m.end()));
                    (trimmed[..cut].to_owned(), start + lead + cut)
                } else {
                    (trimmed.to_owned(), offset)
                };
                out.push(Candidate {
                    line: start..offset,
                    body_start,
                    title,
                    unit: (
                        index,
                        caps.name("unit").map_or("", |m| m.as_str()).to_owned(),
                    ),
                    number: caps.name("num").and_then(|m| parse_number(m.as_str())),
                    long,
                });
                break;
            }
        }
        out
    }

    /// The numbering rule: drops candidates whose numbers do not fit their sequence.
    fn numbered(&self, candidates: Vec<Candidate>) -> Vec<Candidate> {
        let mut last: HashMap<(usize, String), u32> = HashMap::new();
        let mut out = Vec::with_capacity(candidates.len());
        for c in candidates {
            let keep = match (c.number, last.get(&c.unit)) {
                (None, _) => !c.long,
                (Some(n), None) => !c.long || n == 1,
                // Short lines may skip up to 10 numbers (a damaged file), run-on lines 2.
                (Some(n), Some(&prev)) => {
                    let max_skip = if c.long { 2 } else { 10 };
                    (n > prev && n <= prev + 1 + max_skip) || (!c.long && n == 1)
                }
            };
            if keep {
                if let Some(n) = c.number {
                    last.insert(c.unit.clone(), n);
                }
                out.push(c);
            }
        }
        out
    }

    /// The table-of-contents rule: how many leading headings form one. The contents end
    /// where the first entry's number comes round again; every entry before that must be
    /// followed by next to no text.
    fn table_of_contents(&self, text: &str, headings: &[Candidate]) -> usize {
        let Some(first) = headings.first() else {
            return 0;
        };
        let Some(restart) = headings
            .iter()
            .skip(1)
            .position(|h| h.unit == first.unit && h.number.is_some() && h.number == first.number)
        else {
            return 0;
        };
        let entries = restart + 1;
        let dense = headings[..entries].windows(2).all(|pair| {
            let gap = &text[pair[0].body_start..pair[1].line.start];
            non_space_chars(gap) <= self.settings.toc_max_gap_chars
        });
        if entries >= self.settings.toc_min_entries && dense {
            entries
        } else {
            0
        }
    }

    /// The first line of `body`, when it reads as a subtitle; and the body after it.
    fn subtitle<'a>(&self, body: &'a str) -> Option<(&'a str, &'a str)> {
        let mut offset = 0;
        for line in body.split_inclusive('\n') {
            offset += line.len();
            let t = line.trim();
            let caption = t.starts_with('[') && t.ends_with(']');
            if t.is_empty() || caption || t.chars().all(|c| !c.is_alphanumeric()) {
                continue;
            }
            // Question and exclamation marks end titles too ("Who Stole the Tarts?").
            let sentence_end = t.ends_with(['。', '…', '”', '」', '.', ':', '：', ',', '，']);
            let short = width(t) <= self.settings.max_heading_width / 2;
            let heading_like = self.patterns.iter().any(|p| p.is_match(t));
            return (short && !sentence_end && !heading_like).then(|| (t, &body[offset..]));
        }
        None
    }
}

/// Whether a heading is only its marker ("第三回", "CHAPTER I."), with no title text.
fn is_bare(title: &str) -> bool {
    let rest: String = title
        .split_whitespace()
        .skip(usize::from(title.is_ascii()))
        .collect();
    let rest = rest.trim_matches(|c: char| !c.is_alphanumeric());
    if title.is_ascii() {
        // "CHAPTER I." → rest "I": a numeral only.
        parse_number(rest).is_some() || rest.is_empty()
    } else {
        // "第三回" → nothing after the unit character.
        title
            .char_indices()
            .find(|&(_, c)| "章回节節卷集部篇".contains(c))
            .is_some_and(|(i, c)| title[i + c.len_utf8()..].trim().is_empty())
    }
}

/// Where the title of a run-on heading ends: at the first punctuation after the marker
/// (punctuation right after it, as in "CHAPTER 1. Loomings", does not count), at most 30
/// chars in. Spaces do not end it: Chinese titles separate their halves with them.
fn run_on_title_end(line: &str, marker_end: usize) -> usize {
    const MAX_TITLE_CHARS: usize = 30;
    let mut end = marker_end;
    for (count, (i, c)) in line[marker_end..].char_indices().enumerate() {
        if count >= MAX_TITLE_CHARS || (count > 1 && is_punctuation(c)) {
            return marker_end + line[marker_end..marker_end + i].trim_end().len();
        }
        end = marker_end + i + c.len_utf8();
    }
    end
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            c,
            '，' | '。'
                | '：'
                | '；'
                | '！'
                | '？'
                | '、'
                | '「'
                | '」'
                | '『'
                | '』'
                | '《'
                | '》'
                | '（'
                | '）'
                | '“'
                | '”'
                | '‘'
                | '’'
                | '…'
                | '—'
                | '．'
        )
}

/// Display width in columns: East Asian wide and full-width characters count two.
fn width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let wide = matches!(c as u32,
                0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF
                | 0x4E00..=0x9FFF | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
                | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x3FFFD);
            if wide { 2 } else { 1 }
        })
        .sum()
}

fn non_space_chars(s: &str) -> usize {
    s.chars().filter(|c| !c.is_whitespace()).count()
}

/// Reads a chapter number: Arabic (ASCII or full-width), Chinese, Roman or English words.
pub fn parse_number(s: &str) -> Option<u32> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.chars()
        .all(|c| c.is_ascii_digit() || ('０'..='９').contains(&c))
    {
        return s.chars().try_fold(0u32, |acc, c| {
            let d = c.to_digit(10).or_else(|| Some(c as u32 - '０' as u32))?;
            acc.checked_mul(10)?.checked_add(d)
        });
    }
    parse_chinese(s)
        .or_else(|| parse_roman(s))
        .or_else(|| parse_english(s))
}

fn chinese_digit(c: char) -> Option<u32> {
    Some(match c {
        '零' | '〇' => 0,
        '一' | '壹' => 1,
        '二' | '两' | '贰' => 2,
        '三' | '叁' => 3,
        '四' | '肆' => 4,
        '五' | '伍' => 5,
        '六' | '陆' => 6,
        '七' | '柒' => 7,
        '八' | '捌' => 8,
        '九' | '玖' => 9,
        _ => return None,
    })
}

fn chinese_unit(c: char) -> Option<u32> {
    Some(match c {
        '十' | '拾' => 10,
        '百' | '佰' => 100,
        '千' | '仟' => 1000,
        _ => return None,
    })
}

fn parse_chinese(s: &str) -> Option<u32> {
    // Digit by digit ("一〇一") when there is no unit character.
    if s.chars().all(|c| chinese_digit(c).is_some()) {
        return s.chars().try_fold(0u32, |acc, c| {
            acc.checked_mul(10)?.checked_add(chinese_digit(c)?)
        });
    }
    let (mut total, mut section, mut digit) = (0u32, 0u32, None::<u32>);
    for c in s.chars() {
        if let Some(d) = chinese_digit(c) {
            digit = Some(d);
        } else if let Some(u) = chinese_unit(c) {
            // "十二" reads as 一十二.
            section += digit.take().unwrap_or(1) * u;
        } else if c == '万' {
            total += (section + digit.take().unwrap_or(0)) * 10_000;
            section = 0;
        } else {
            return None;
        }
    }
    Some(total + section + digit.unwrap_or(0))
}

fn parse_roman(s: &str) -> Option<u32> {
    let value = |c: char| match c.to_ascii_uppercase() {
        'I' => Some(1),
        'V' => Some(5),
        'X' => Some(10),
        'L' => Some(50),
        'C' => Some(100),
        'D' => Some(500),
        'M' => Some(1000),
        _ => None,
    };
    let values: Vec<u32> = s.chars().map(value).collect::<Option<_>>()?;
    let mut total = 0;
    for (i, &v) in values.iter().enumerate() {
        if values.get(i + 1).is_some_and(|&next| next > v) {
            total -= v as i64;
        } else {
            total += v as i64;
        }
    }
    u32::try_from(total).ok().filter(|&n| n > 0)
}

fn parse_english(s: &str) -> Option<u32> {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    let lower = s.to_ascii_lowercase();
    let mut total = 0;
    for word in lower.split(['-', ' ']).filter(|w| !w.is_empty()) {
        if let Some(n) = ONES.iter().position(|&w| w == word) {
            total += n as u32;
        } else if let Some(n) = TENS.iter().position(|&w| w == word) {
            total += 20 + 10 * n as u32;
        } else {
            return None;
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Split {
        Splitter::new(SplitSettings::default()).unwrap().split(text)
    }

    fn titles(s: &Split) -> Vec<&str> {
        s.chapters.iter().map(|c| c.title.as_str()).collect()
    }

    #[test]
    fn reads_chinese_roman_arabic_and_english_numbers() {
        for (s, n) in [
            ("一", 1),
            ("十", 10),
            ("十二", 12),
            ("二十", 20),
            ("一百二十", 120),
            ("一百零一", 101),
            ("两千零三", 2003),
            ("一〇一", 101),
            ("壹佰贰拾", 120),
            ("三万", 30_000),
            ("12", 12),
            ("１２", 12),
            ("IV", 4),
            ("xii", 12),
            ("MCMXC", 1990),
            ("Twenty-One", 21),
            ("seven", 7),
        ] {
            assert_eq!(parse_number(s), Some(n), "{s}");
        }
        assert_eq!(parse_number("第"), None);
        assert_eq!(parse_number("abc"), None);
    }

    #[test]
    fn splits_chinese_chapters_keeping_the_front_matter_apart() {
        let text = "红楼梦\n曹雪芹 著\n\n第一回　甄士隐梦幻识通灵\n此开卷第一回也。\n\n第二回　贾夫人仙逝扬州城\n却说封肃。\n第十回 金寡妇贪利权受辱\n话说。\n";
        let s = split(text);
        assert_eq!(s.front_matter, "红楼梦\n曹雪芹 著");
        assert_eq!(
            titles(&s),
            [
                "第一回　甄士隐梦幻识通灵",
                "第二回　贾夫人仙逝扬州城",
                "第十回 金寡妇贪利权受辱"
            ]
        );
        assert_eq!(s.chapters[0].body, "此开卷第一回也。");
        assert_eq!(s.chapters[2].body, "话说。");
        assert_eq!(s.toc_entries, 0);
    }

    #[test]
    fn a_table_of_contents_is_front_matter() {
        let text = "老残游记\n\n第一回　土不制水\n第二回　历山山下\n第三回　金线东来\n\n\
                    第一回　土不制水\n\n话说山东登州府。\n\n第二回　历山山下\n\n话说老残。\n\n\
                    第三回　金线东来\n\n话说。\n";
        let s = split(text);
        assert_eq!(s.toc_entries, 3);
        assert_eq!(
            titles(&s),
            ["第一回　土不制水", "第二回　历山山下", "第三回　金线东来"]
        );
        assert_eq!(s.chapters[0].body, "话说山东登州府。");
        assert!(s.front_matter.starts_with("老残游记"));
        assert!(s.front_matter.ends_with("第三回　金线东来"));
    }

    #[test]
    fn short_chapters_without_a_repeat_are_not_a_table_of_contents() {
        let s = split("第一章 一\n短。\n第二章 二\n短。\n第三章 三\n短。\n第四章 四\n短。\n");
        assert_eq!(s.toc_entries, 0);
        assert_eq!(s.chapters.len(), 4);
    }

    #[test]
    fn a_backward_number_in_the_body_is_not_a_heading() {
        let s = split(
            "第四回\n正文。\n第五回\n游幻境\n\n第四回中既將薛家母子在榮府內寄居等事略已表明，此回則暫不能寫矣．\n",
        );
        assert_eq!(titles(&s), ["第四回", "第五回 游幻境"]);
        assert!(s.chapters[1].body.starts_with("第四回中既將"));
    }

    #[test]
    fn run_on_headings_of_a_file_without_line_breaks_are_cut_at_punctuation() {
        let s = split(
            "封神演義\n\n第一回紂王女媧宮進香古風一首：混沌初分盤古先，太極兩儀四象懸。子天丑地人寅出，避除獸患有巢賢。\n\n\
             第二回冀州侯蘇護反商詩曰：文王不是詩人，文王不是詩人，文王不是詩人，文王不是詩人。\n",
        );
        assert_eq!(
            titles(&s),
            ["第一回紂王女媧宮進香古風一首", "第二回冀州侯蘇護反商詩曰"]
        );
        assert!(s.chapters[0].body.starts_with("：混沌初分盤古先"));
        // A long line that does not continue the numbering is body text.
        let s = split(
            "第一回 起\n正文。\n第五回這一行很長很長很長很長很長很長很長很長很長很長很長很長很長很長很長很長很長很長很長很長很長。\n",
        );
        assert_eq!(s.chapters.len(), 1);
    }

    #[test]
    fn english_chapters_take_their_subtitle_and_skip_the_contents() {
        let text = "Alice's Adventures in Wonderland\n\nContents\n\n CHAPTER I.     Down the Rabbit-Hole\n CHAPTER II.    The Pool of Tears\n CHAPTER III.   A Caucus-Race\n\n\nCHAPTER I.\nDown the Rabbit-Hole\n\nAlice was beginning to get very tired.\n\nCHAPTER II.\nThe Pool of Tears\n\n“Curiouser and curiouser!” cried Alice.\n\nCHAPTER III.\nA Caucus-Race\n\nThey were indeed a queer-looking party.\n";
        let s = split(text);
        assert_eq!(s.toc_entries, 3);
        assert_eq!(
            titles(&s),
            [
                "CHAPTER I. Down the Rabbit-Hole",
                "CHAPTER II. The Pool of Tears",
                "CHAPTER III. A Caucus-Race"
            ]
        );
        assert_eq!(s.chapters[0].body, "Alice was beginning to get very tired.");
        let s = split(
            "Chapter 1\n\nIt is a truth universally acknowledged, that a single man.\n\nChapter 2\n\nMr. Bennet.\n",
        );
        assert_eq!(titles(&s), ["Chapter 1", "Chapter 2"]);
    }

    #[test]
    fn a_volume_line_folds_into_the_next_title() {
        let s = split(
            "第一卷 风起\n\n第一章 少年\n正文一。\n第二章 出山\n正文二。\n第二卷 云涌\n第一章 入城\n正文三。\n",
        );
        assert_eq!(
            titles(&s),
            [
                "第一卷 风起 第一章 少年",
                "第二章 出山",
                "第二卷 云涌 第一章 入城"
            ]
        );
    }

    #[test]
    fn a_text_without_headings_is_one_chapter() {
        let s = split("  聊齋志異卷一考城隍予姊丈之祖宋公，諱燾，邑廪生。  \n");
        assert_eq!(s.chapters.len(), 1);
        assert_eq!(s.chapters[0].title, "");
        assert_eq!(
            s.chapters[0].body,
            "聊齋志異卷一考城隍予姊丈之祖宋公，諱燾，邑廪生。"
        );
        assert!(s.front_matter.is_empty());
        assert!(split(" \n\n").chapters.is_empty());
    }

    #[test]
    fn patterns_are_configurable() {
        let settings = SplitSettings {
            heading_patterns: vec![r"^(?P<num>[IVXLC]+)\.\s+[A-Z]".to_owned()],
            ..SplitSettings::default()
        };
        let s = Splitter::new(settings)
            .unwrap()
            .split("I. A SCANDAL IN BOHEMIA\n\nTo Sherlock Holmes.\n\nII. THE RED-HEADED LEAGUE\n\nI had called.\n");
        assert_eq!(
            titles(&s),
            ["I. A SCANDAL IN BOHEMIA", "II. THE RED-HEADED LEAGUE"]
        );
        let bad = Splitter::new(SplitSettings {
            heading_patterns: vec!["(unclosed".to_owned()],
            ..SplitSettings::default()
        });
        assert!(matches!(bad, Err(Error::InvalidPattern { .. })));
    }
}
