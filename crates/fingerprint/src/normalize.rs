//! Text normalisation with an offset map back to the original text.
//!
//! Every fingerprint in this crate works on *normalised* text, so that the disguises pirates
//! use cheaply (full-width letters, traditional characters, extra spaces and punctuation,
//! zero-width characters, upper case) do not change it. The pipeline, per character:
//!
//! 1. NFKC (compatibility decomposition, then canonical composition): `Ａ１` → `A1`, `①` → `1`,
//!    `ﬁ` → `fi`, CJK compatibility ideographs → unified ones.
//! 2. Lower-casing (full Unicode lower case, which covers Latin, Greek, Cyrillic, ...).
//! 3. Traditional → simplified Chinese, character by character, with the tables of the
//!    maintained pure-Rust converter [`zhconv`] (`zh-Hans`). Phrase-level rules are not applied:
//!    a 1:1 character mapping keeps every normalised character tied to one source character,
//!    which the offset map and evidence highlighting rely on.
//! 4. Only letters and digits are kept (Unicode `Alphabetic` or `Numeric`). Whitespace,
//!    punctuation, symbols (emoji included), zero-width and control characters are dropped; a run
//!    of dropped characters is remembered as a *break* so that word segmentation can still see
//!    where words and sentences ended.
//! 5. Look-alike letters fold into the Latin letter or digit they imitate: Cyrillic and Greek
//!    `а е о р с х у і ν` become `a e o p c x y i v`, by the Unicode TR39 confusable skeletons
//!    of [`unicode_security`] (a letter whose skeleton is one ASCII letter or digit). ASCII
//!    itself and the Chinese, Japanese and Korean blocks are left alone. One character still
//!    maps to one, so the offset map is untouched; and since folding is part of the per-character
//!    table, it costs the hot path nothing.
//!
//! The work is done once per Basic Multilingual Plane character into a 256 KiB lookup table
//! (built lazily on first use, ~50 ms), so normalising is one table lookup per character. Only
//! characters that combine with their neighbours under NFKC (combining marks, the second half
//! of canonical compositions, Hangul vowel and trailing jamo), characters outside the BMP and
//! characters that expand to several output characters take a slower exact path.
//!
//! # Example
//!
//! ```
//! let n = fingerprint::normalize("第一回　後來，ＡＢＣ！");
//! assert_eq!(n.text(), "第一回后来abc");
//! // "后" came from "後" at byte 12 of the original.
//! assert_eq!(n.original_range(3..4), 12..15);
//! ```

use std::ops::Range;
use std::sync::LazyLock;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::{canonical_combining_class, decompose_canonical};

/// Table entry: the character is dropped (whitespace, punctuation, symbols, controls).
const DROP: u32 = 0xD800;
/// Table entry: the character expands to several output characters; take the exact path.
const MULTI: u32 = 0xD801;
/// Table entry: the character may combine with the character before it under NFKC.
const JOINER: u32 = 0xD802;

/// The longest run (in bytes of normalised text, 4096 Chinese characters) handed to word
/// segmentation without a space: an artificial break bounds the memory of dictionary lookups
/// on text without punctuation, or whose breaks all fall between Han characters.
pub const MAX_SEGMENT_BYTES: usize = 3 * 4096;

/// Per BMP character: the one character it normalises to, or [`DROP`], [`MULTI`] or
/// [`JOINER`] (surrogate code points, which are never characters). `u16` entries keep the
/// table at 128 KiB, half what `u32` would take from the cache the segmenter needs; the rare
/// character that normalises to one outside the BMP is [`MULTI`].
static TABLE: LazyLock<Box<[u16]>> = LazyLock::new(build_table);

/// Characters with canonical combining class 0 that still compose with the preceding
/// character (the second element of a canonical composition, e.g. some Indic vowel signs).
static STARTER_JOINERS: LazyLock<Vec<char>> = LazyLock::new(|| {
    let mut joiners = Vec::new();
    for cp in 0..=0x10FFFFu32 {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        let mut parts = [None; 4];
        let mut n = 0;
        decompose_canonical(c, |d| {
            if n < parts.len() {
                parts[n] = Some(d);
            }
            n += 1;
        });
        if n == 2
            && let (Some(_), Some(second)) = (parts[0], parts[1])
            && canonical_combining_class(second) == 0
        {
            joiners.push(second);
        }
    }
    joiners.sort_unstable();
    joiners.dedup();
    joiners
});

fn is_joiner(c: char) -> bool {
    canonical_combining_class(c) != 0
        || ('\u{1161}'..='\u{1175}').contains(&c)
        || ('\u{11A8}'..='\u{11C2}').contains(&c)
        || STARTER_JOINERS.binary_search(&c).is_ok()
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// Traditional → simplified for one character, from zhconv's `zh-Hans` tables.
fn to_simplified(c: char) -> char {
    if !is_cjk(c) {
        return c;
    }
    let mut buf = [0u8; 4];
    let converted = zhconv::zhconv(c.encode_utf8(&mut buf), zhconv::Variant::ZhHans);
    let mut chars = converted.chars();
    match (chars.next(), chars.next()) {
        (Some(s), None) => s,
        _ => c,
    }
}

/// Steps 2–5 of the pipeline for one character that is already in NFKC form.
fn fold(c: char, out: &mut impl FnMut(char)) {
    for lower in c.to_lowercase() {
        let simplified = to_simplified(lower);
        if simplified.is_alphanumeric() {
            out(look_alike(simplified));
        }
    }
}

/// Whether `c` may be folded into a Latin letter or digit as a look-alike (step 5): not ASCII
/// itself (so `0`/`o`, `1`/`l` and `m`/`rn`, which TR39 counts as confusable, stay apart), and
/// not in a Chinese, Japanese or Korean block, whose characters are never a disguise for Latin
/// letters (`〇`, a Chinese numeral, has the skeleton `O`).
fn may_look_alike(c: char) -> bool {
    !c.is_ascii()
        && !matches!(c as u32,
            0x1100..=0x11FF         // Hangul jamo
            | 0x2E80..=0x9FFF       // radicals, CJK symbols, kana, bopomofo, ext. A, unified
            | 0xAC00..=0xD7FF       // Hangul syllables
            | 0xF900..=0xFAFF       // CJK compatibility ideographs
            | 0xFE30..=0xFE4F       // CJK compatibility forms
            | 0xFF00..=0xFFEF       // half- and full-width forms (NFKC already folds them)
            | 0x1_6FE0..=0x1_B2FF   // Tangut, Khitan, kana supplements, Nüshu
            | 0x2_0000..=0x3_FFFF) // CJK extensions B and later
}

/// The ASCII letter or digit (lower case) whose TR39 confusable skeleton `c` has, if the
/// skeleton is that one character.
fn latin_prototype(c: char) -> Option<char> {
    let mut buf = [0u8; 4];
    let mut skeleton = unicode_security::skeleton(c.encode_utf8(&mut buf));
    match (skeleton.next(), skeleton.next()) {
        (Some(p), None) if p.is_ascii_alphanumeric() && p != c => Some(p.to_ascii_lowercase()),
        _ => None,
    }
}

/// Look-alikes of Latin letters and digits, sorted: every lower-case (or caseless) letter or
/// digit outside ASCII and the CJK blocks whose skeleton is one ASCII letter or digit, or,
/// failing that, whose single upper-case form's skeleton is (Cyrillic `в` folds like `В` to
/// `b`, so that case folding stays consistent: upper and lower case fold to one letter).
/// About a thousand entries, found once over all code points by `unicode-security`'s
/// `skeleton`.
static LOOK_ALIKES: LazyLock<Vec<(char, char)>> = LazyLock::new(|| {
    let mut map = Vec::new();
    for cp in 0x80..=0x10FFFFu32 {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        if !c.is_alphanumeric() || !may_look_alike(c) {
            continue;
        }
        let mut lower = c.to_lowercase();
        if (lower.next(), lower.next()) != (Some(c), None) {
            continue; // an upper-case letter: it is lower-cased before the look-up
        }
        let prototype = latin_prototype(c).or_else(|| {
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(u), None) if u != c => latin_prototype(u),
                _ => None,
            }
        });
        if let Some(p) = prototype {
            map.push((c, p));
        }
    }
    map
});

/// Step 5 for one lower-cased character: its Latin prototype if it is a look-alike, else
/// itself.
fn look_alike(c: char) -> char {
    if !may_look_alike(c) {
        return c;
    }
    LOOK_ALIKES
        .binary_search_by_key(&c, |&(from, _)| from)
        .map_or(c, |i| LOOK_ALIKES[i].1)
}

fn build_table() -> Box<[u16]> {
    let mut table = vec![DROP as u16; 0x1_0000].into_boxed_slice();
    let mut buf = String::new();
    for cp in 0..0x1_0000u32 {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        if is_joiner(c) {
            table[cp as usize] = JOINER as u16;
            continue;
        }
        buf.clear();
        buf.push(c);
        let mut outputs = [None; 2];
        let mut n = 0;
        for nc in buf.nfkc() {
            fold(nc, &mut |o| {
                if n < 2 {
                    outputs[n] = Some(o);
                }
                n += 1;
            });
        }
        table[cp as usize] = match (n, outputs[0]) {
            (0, _) => DROP as u16,
            (1, Some(o)) => u16::try_from(o as u32).unwrap_or(MULTI as u16),
            _ => MULTI as u16,
        };
    }
    table
}

/// The exact path for a cluster of source characters (a starter and the characters that
/// combine with it, or one character outside the fast table).
fn normalize_cluster(cluster: &str, out: &mut impl FnMut(char)) {
    for nc in cluster.nfkc() {
        fold(nc, out);
    }
}

/// Makes sure the lookup tables are built, so that the first timed or latency-sensitive call
/// does not pay for it (about 50 ms in a release build).
pub fn warm_up() {
    LazyLock::force(&TABLE);
    LazyLock::force(&STARTER_JOINERS);
    LazyLock::force(&LOOK_ALIKES);
    LazyLock::force(&ASCII);
}

/// Where normalised output goes. Implemented by [`Normalized`] (text, offsets and breaks) and
/// by the compact buffer used on the fingerprinting hot path (no offsets).
trait Sink {
    fn push(&mut self, c: char, source: u32);
    fn mark_break(&mut self);
    /// Removes the output produced since `len_bytes` / `len_chars` (used when a combining
    /// character turns out to belong to the previous cluster).
    fn truncate(&mut self, len_bytes: usize, len_chars: usize);
    fn len_bytes(&self) -> usize;
    fn len_chars(&self) -> usize;
}

fn run<S: Sink>(text: &str, sink: &mut S) {
    let table: &[u16] = &TABLE;
    // The previous starter: its byte offset in `text`, and the output length before it.
    let mut prev: Option<(usize, usize, usize)> = None;
    let mut iter = text.char_indices().peekable();
    while let Some((pos, c)) = iter.next() {
        let entry = if (c as u32) < 0x1_0000 {
            u32::from(table[c as usize])
        } else {
            MULTI
        };
        match entry {
            DROP => {
                sink.mark_break();
                prev = None;
            }
            JOINER => {
                // Re-run the previous starter (if it touches this character) together with
                // every combining character that follows, through exact NFKC.
                let (start, before_bytes, before_chars) = match prev {
                    Some(p) => p,
                    None => (pos, sink.len_bytes(), sink.len_chars()),
                };
                sink.truncate(before_bytes, before_chars);
                let mut end = pos + c.len_utf8();
                while let Some(&(next_pos, next)) = iter.peek() {
                    if is_joiner(next) {
                        end = next_pos + next.len_utf8();
                        iter.next();
                    } else {
                        break;
                    }
                }
                let source = start as u32;
                normalize_cluster(&text[start..end], &mut |o| sink.push(o, source));
                prev = Some((start, before_bytes, before_chars));
            }
            MULTI => {
                let before = (pos, sink.len_bytes(), sink.len_chars());
                let source = pos as u32;
                normalize_cluster(&text[pos..pos + c.len_utf8()], &mut |o| {
                    sink.push(o, source)
                });
                prev = Some(before);
            }
            mapped => {
                let before = (pos, sink.len_bytes(), sink.len_chars());
                let o = char::from_u32(mapped).unwrap_or(c);
                sink.push(o, pos as u32);
                prev = Some(before);
            }
        }
    }
}

/// The character starting at byte `i` of valid UTF-8 `bytes`, and its length in bytes.
#[inline(always)]
fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let b0 = u32::from(bytes[i]);
    let cont = |k: usize| u32::from(bytes[i + k]) & 0x3F;
    if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | cont(1), 2)
    } else if b0 < 0xF0 {
        (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            ((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    }
}

/// The character starting at byte `pos` of valid UTF-8 `bytes`, its length, and its entry
/// in the per-character `table` ([`MULTI`] outside the Basic Multilingual Plane).
#[inline(always)]
fn entry_at(table: &[u16], bytes: &[u8], pos: usize) -> (u32, usize, u32) {
    let (c, len) = decode(bytes, pos);
    let entry = if c < 0x1_0000 {
        u32::from(table[c as usize])
    } else {
        MULTI
    };
    (c, len, entry)
}

/// Where the run of combining characters that starts at byte `end` of `bytes` ends.
fn joiners_end(bytes: &[u8], mut end: usize) -> usize {
    while end < bytes.len() {
        let (next, next_len) = decode(bytes, end);
        if !char::from_u32(next).is_some_and(is_joiner) {
            break;
        }
        end += next_len;
    }
    end
}

/// [`run`] for [`Compact`], the fingerprinting hot path, with the same output (a property test
/// checks). Most characters normalise to themselves (Chinese text, lower-case Latin): those
/// are not pushed one by one but copied a run at a time when a character that changes, or a
/// dropped one, ends the run; and UTF-8 is decoded by hand from the bytes, the lead byte
/// deciding the length, without the validity checks a `&str` makes unnecessary.
fn run_compact(text: &str, out: &mut Compact) {
    let table: &[u16] = &TABLE;
    let bytes = text.as_bytes();
    let mut pos = 0;
    // The pending run of characters that normalise to themselves: where it starts in `text`,
    // how many characters it holds, and where its last character starts.
    let mut run_start = 0;
    let mut run_chars = 0;
    let mut run_last = 0;
    // The previous starter, as in `run`: its byte offset in `text`, and the output length
    // (bytes, characters) before it. While a run is pending its last character is the
    // previous starter, worked out only when a character that is not its own normal form
    // needs it: the identity path stays three register updates.
    let mut prev: Option<(usize, usize, usize)> = None;
    while pos < bytes.len() {
        let (c, len, entry) = entry_at(table, bytes, pos);
        if entry == c {
            run_last = pos;
            run_chars += 1;
            pos += len;
            continue;
        }
        if run_chars > 0 {
            prev = Some((
                run_last,
                out.text.len() + (run_last - run_start),
                out.chars + run_chars - 1,
            ));
        }
        out.text.push_str(&text[run_start..pos]);
        out.chars += run_chars;
        run_chars = 0;
        match entry {
            DROP => {
                out.mark_break();
                prev = None;
                pos += len;
            }
            JOINER => {
                let (start, before_bytes, before_chars) =
                    prev.unwrap_or((pos, out.len_bytes(), out.len_chars()));
                out.truncate(before_bytes, before_chars);
                let end = joiners_end(bytes, pos + len);
                normalize_cluster(&text[start..end], &mut |o| out.push(o, 0));
                prev = Some((start, before_bytes, before_chars));
                pos = end;
            }
            MULTI => {
                prev = Some((pos, out.len_bytes(), out.len_chars()));
                normalize_cluster(&text[pos..pos + len], &mut |o| out.push(o, 0));
                pos += len;
            }
            mapped => {
                prev = Some((pos, out.len_bytes(), out.len_chars()));
                out.push(char::from_u32(mapped).unwrap_or('\u{FFFD}'), 0);
                pos += len;
            }
        }
        run_start = pos;
    }
    out.text.push_str(&text[run_start..]);
    out.chars += run_chars;
}

/// The characters of `normalize_compact(text).text` as numbers (`c as u64`), appended to
/// `out`: the form a pass that only hashes them wants, without writing the normalised text
/// and decoding it again ([`crate::Fingerprinter::scan_grams`]). Equal to the compact path
/// (a property test checks).
pub fn normalize_chars_into(text: &str, out: &mut Vec<u64>) {
    out.reserve(text.len() / 3);
    let table: &[u16] = &TABLE;
    let ascii: &[u8; 128] = &ASCII;
    let bytes = text.as_bytes();
    // As in `run`: the previous starter's byte offset in `text` and the output length before
    // it, for a combining character that re-runs it.
    let mut prev: Option<(usize, usize)> = None;
    let mut pos = 0;
    while pos < bytes.len() {
        if bytes[pos].is_ascii() {
            let end = ascii_run(bytes, pos, ascii, out);
            // The run's last character is the previous starter, unless it was dropped.
            let last = bytes[end - 1];
            prev = (ascii[usize::from(last)] != 0).then(|| (end - 1, out.len() - 1));
            pos = end;
            continue;
        }
        let (_, len, entry) = entry_at(table, bytes, pos);
        match entry {
            DROP => prev = None,
            JOINER => {
                let from = prev.unwrap_or((pos, out.len()));
                pos = rerun_joined(text, from, pos + len, out);
                prev = Some(from);
                continue;
            }
            MULTI => {
                prev = Some((pos, out.len()));
                expand(&text[pos..pos + len], out);
            }
            mapped => {
                prev = Some((pos, out.len()));
                out.push(u64::from(mapped));
            }
        }
        pos += len;
    }
}

/// Per ASCII character: the one character it normalises to (itself, or its lower case), or 0
/// where it is dropped. Every ASCII entry of [`TABLE`] is one of those (a test checks; the
/// table's construction asserts it).
static ASCII: LazyLock<[u8; 128]> = LazyLock::new(|| {
    let table: &[u16] = &TABLE;
    std::array::from_fn(|b| match u32::from(table[b]) {
        DROP => 0,
        mapped if mapped < 0x80 && mapped != 0 => mapped as u8,
        other => panic!("ASCII {b:#x} normalises to {other:#x}, outside ASCII"),
    })
});

/// [`normalize_chars_into`] of the run of ASCII characters that starts at byte `from` of
/// `bytes`, appended to `out`; returns where the run ends. Without a branch a character: on
/// English text, where a space or a comma ends every few letters, which characters are
/// dropped is a pattern a branch predictor keeps losing. Every character's entry is
/// appended, then the dropped ones (0) are squeezed out in place, each entry written where
/// the count of kept ones says.
fn ascii_run(bytes: &[u8], from: usize, ascii: &[u8; 128], out: &mut Vec<u64>) -> usize {
    let run = &bytes[from..];
    let run = &run[..run.iter().position(|b| !b.is_ascii()).unwrap_or(run.len())];
    let start = out.len();
    out.extend(run.iter().map(|&b| u64::from(ascii[usize::from(b & 0x7F)])));
    let written = &mut out[start..];
    let mut kept = 0;
    for i in 0..written.len() {
        let c = written[i];
        written[kept] = c;
        kept += usize::from(c != 0);
    }
    out.truncate(start + kept);
    from + run.len()
}

/// [`normalize_chars_into`]'s combining path, out of its loop so that the loop keeps its
/// state in registers: drops the output since `from.1`, re-normalises the source from
/// `from.0` through the joiners after `end`, and returns where the next character starts.
#[cold]
#[inline(never)]
fn rerun_joined(text: &str, from: (usize, usize), end: usize, out: &mut Vec<u64>) -> usize {
    let bytes = text.as_bytes();
    out.truncate(from.1);
    let end = joiners_end(bytes, end);
    expand(&text[from.0..end], out);
    end
}

/// The exact path of [`normalize_chars_into`] for one cluster.
#[cold]
#[inline(never)]
fn expand(cluster: &str, out: &mut Vec<u64>) {
    normalize_cluster(cluster, &mut |o| out.push(o as u64));
}

/// Normalised text together with the map back to the original text.
///
/// Positions into the normalised text are **character** indices (not bytes), because every
/// fingerprint in this crate counts characters. Positions into the original are **byte**
/// offsets, ready for slicing the original `&str`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized<'a> {
    original: &'a str,
    compact: Compact,
    /// For each normalised character, the byte offset in `original` of the character (or
    /// combining cluster) it came from. Non-decreasing.
    offsets: Vec<u32>,
}

impl Sink for Normalized<'_> {
    #[inline]
    fn push(&mut self, c: char, source: u32) {
        self.compact.push(c, source);
        self.offsets.push(source);
    }
    #[inline]
    fn mark_break(&mut self) {
        self.compact.mark_break();
    }
    fn truncate(&mut self, len_bytes: usize, len_chars: usize) {
        self.compact.truncate(len_bytes, len_chars);
        self.offsets.truncate(len_chars);
    }
    #[inline]
    fn len_bytes(&self) -> usize {
        self.compact.len_bytes()
    }
    #[inline]
    fn len_chars(&self) -> usize {
        self.compact.len_chars()
    }
}

impl<'a> Normalized<'a> {
    /// The original text this was normalised from.
    pub fn original(&self) -> &'a str {
        self.original
    }

    /// The normalised text.
    pub fn text(&self) -> &str {
        &self.compact.text
    }

    /// Number of characters in the normalised text.
    pub fn char_len(&self) -> usize {
        self.compact.chars
    }

    /// The normalised text and its breaks, as the fingerprinting functions take them.
    pub fn compact(&self) -> &Compact {
        &self.compact
    }

    /// Byte offset in the original text of the source of normalised character `index`.
    ///
    /// # Panics
    /// If `index >= self.char_len()`.
    pub fn original_offset(&self, index: usize) -> usize {
        self.offsets[index] as usize
    }

    /// Byte offsets (into the normalised text) where dropped characters (spaces, punctuation,
    /// ...) stood. Word segmentation uses them as boundaries.
    pub fn breaks(&self) -> &[u32] {
        &self.compact.breaks
    }

    /// Maps a range of normalised **character** indices to the byte range of the original
    /// text it came from: from the start of the first source character to the end of the last
    /// one (dropped characters between them are included, dropped characters around them are
    /// not). An empty range maps to an empty range at the position of `chars.start`.
    ///
    /// # Panics
    /// If the range is out of bounds or reversed.
    pub fn original_range(&self, chars: Range<usize>) -> Range<usize> {
        assert!(
            chars.start <= chars.end && chars.end <= self.char_len(),
            "range {chars:?} out of bounds for {} normalised chars",
            self.char_len()
        );
        if chars.is_empty() {
            let at = self
                .offsets
                .get(chars.start)
                .map_or(self.original.len(), |&o| o as usize);
            return at..at;
        }
        let start = self.offsets[chars.start] as usize;
        let last = self.offsets[chars.end - 1] as usize;
        start..self.source_end(last)
    }

    /// The end of the source cluster that starts at byte `start` of the original.
    fn source_end(&self, start: usize) -> usize {
        let rest = &self.original[start..];
        let mut chars = rest.char_indices();
        let Some((_, first)) = chars.next() else {
            return start;
        };
        let mut end = start + first.len_utf8();
        for (i, c) in chars {
            if !is_joiner(c) {
                break;
            }
            end = start + i + c.len_utf8();
        }
        end
    }

    /// Maps a byte offset in the normalised text to its character index (the number of
    /// normalised characters before it).
    pub fn char_index_of_byte(&self, byte: usize) -> usize {
        self.text()[..byte].chars().count()
    }

    /// Consumes the value and returns the normalised text.
    pub fn into_text(self) -> String {
        self.compact.text
    }
}

/// Normalises `text` and keeps the offset map back to it. See the [module docs](self).
pub fn normalize(text: &str) -> Normalized<'_> {
    let mut n = Normalized {
        original: text,
        compact: Compact {
            text: String::with_capacity(text.len()),
            ..Compact::default()
        },
        offsets: Vec::with_capacity(text.len() / 2),
    };
    run(text, &mut n);
    n
}

/// Normalised text without the offset map: the form the fingerprinting hot path uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Compact {
    /// The normalised text.
    pub text: String,
    /// Byte offsets into `text` where dropped characters stood.
    pub breaks: Vec<u32>,
    /// Number of characters in `text`.
    pub chars: usize,
}

impl Sink for Compact {
    #[inline]
    fn push(&mut self, c: char, _source: u32) {
        self.text.push(c);
        self.chars += 1;
    }
    #[inline]
    fn mark_break(&mut self) {
        let at = self.text.len() as u32;
        if self.breaks.last() != Some(&at) {
            self.breaks.push(at);
        }
    }
    fn truncate(&mut self, len_bytes: usize, len_chars: usize) {
        self.text.truncate(len_bytes);
        self.chars = len_chars;
        while self.breaks.last().is_some_and(|&b| b as usize > len_bytes) {
            self.breaks.pop();
        }
    }
    #[inline]
    fn len_bytes(&self) -> usize {
        self.text.len()
    }
    #[inline]
    fn len_chars(&self) -> usize {
        self.chars
    }
}

impl Compact {
    /// Normalises `text` into this buffer, replacing what it held (the allocation is reused).
    pub fn fill(&mut self, text: &str) {
        self.text.clear();
        self.breaks.clear();
        self.chars = 0;
        self.text.reserve(text.len());
        run_compact(text, self);
    }

    /// The normalised text with a single space at every break that separates words, the
    /// input word segmentation expects. A break between two Han characters is left out:
    /// Chinese is written without spaces, so a space or symbol there says nothing about words
    /// (pirates insert them to dodge matching) and the segmenter finds the words itself.
    /// A space is also inserted whenever [`MAX_SEGMENT_BYTES`] pass without one.
    pub fn spaced(&self) -> String {
        let text = &self.text;
        let mut out = String::with_capacity(text.len() + self.breaks.len() + 1);
        // Bytes written since the last space: bounds the blocks handed to the segmenter.
        let mut run = 0usize;
        let mut last = 0usize;
        for &b in &self.breaks {
            let b = b as usize;
            if b == 0 || b >= text.len() {
                continue;
            }
            push_capped(&mut out, &text[last..b], &mut run);
            let before = text[..b].chars().next_back();
            let after = text[b..].chars().next();
            if let (Some(p), Some(c)) = (before, after)
                && !(is_han(p) && is_han(c))
            {
                out.push(' ');
                run = 0;
            }
            last = b;
        }
        push_capped(&mut out, &text[last..], &mut run);
        out
    }
}

/// Appends `segment`, inserting a space whenever the run without one would exceed
/// [`MAX_SEGMENT_BYTES`]. The common case (the run stays short) is one copy.
fn push_capped(out: &mut String, segment: &str, run: &mut usize) {
    if *run + segment.len() <= MAX_SEGMENT_BYTES {
        out.push_str(segment);
        *run += segment.len();
        return;
    }
    for c in segment.chars() {
        if *run + c.len_utf8() > MAX_SEGMENT_BYTES {
            out.push(' ');
            *run = 0;
        }
        out.push(c);
        *run += c.len_utf8();
    }
}

/// Whether `c` is a Han character (CJK unified ideographs, extension A and the astral
/// extensions).
pub fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0x20000..=0x3134F)
}

/// Normalises `text` without keeping offsets. Equal to `normalize(text).text()`.
pub fn normalize_compact(text: &str) -> Compact {
    let mut c = Compact::default();
    c.fill(text);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_and_case() {
        assert_eq!(
            normalize("ＨＥＬＬＯ，Ｗｏｒｌｄ！１２３").text(),
            "helloworld123"
        );
    }

    #[test]
    fn traditional_to_simplified() {
        assert_eq!(normalize("後來他們說話").text(), "后来他们说话");
        assert_eq!(
            normalize("話說天下大勢，分久必合").text(),
            normalize("话说天下大势，分久必合").text()
        );
    }

    #[test]
    fn drops_whitespace_punctuation_zero_width_controls_and_emoji() {
        let n = normalize(" 第\u{200B}一\u{FEFF}回\t\r\n「甲」😀乙\u{0007}！");
        assert_eq!(n.text(), "第一回甲乙");
    }

    #[test]
    fn breaks_mark_dropped_runs_once() {
        let n = normalize("ab, cd!!ef");
        assert_eq!(n.text(), "abcdef");
        assert_eq!(n.breaks(), &[2, 4]);
    }

    #[test]
    fn combining_sequences_compose() {
        // "é" precomposed and decomposed normalise the same.
        assert_eq!(normalize("Caf\u{e9}").text(), "café");
        assert_eq!(normalize("Cafe\u{301}").text(), "café");
        let n = normalize("xe\u{301}y");
        assert_eq!(n.original_range(1..2), 1..4);
        // Hangul jamo compose into a syllable.
        assert_eq!(normalize("\u{1100}\u{1161}").text(), "\u{AC00}");
        // A stray combining mark at the start is dropped, not kept.
        assert_eq!(normalize("\u{301}a").text(), "a");
    }

    #[test]
    fn multi_char_expansions() {
        assert_eq!(normalize("ﬁne ①").text(), "fine1");
        let n = normalize("ﬁx");
        assert_eq!(n.char_len(), 3);
        assert_eq!(n.original_range(0..2), 0..3);
        assert_eq!(n.original_range(2..3), 3..4);
    }

    #[test]
    fn offsets_point_back_to_the_source() {
        let original = "话说，天下大势！";
        let n = normalize(original);
        assert_eq!(n.text(), "话说天下大势");
        let r = n.original_range(2..6);
        assert_eq!(&original[r], "天下大势");
        let r = n.original_range(0..6);
        assert_eq!(&original[r], "话说，天下大势");
        assert_eq!(n.original_range(3..3), 12..12);
    }

    #[test]
    fn empty_and_punctuation_only() {
        assert_eq!(normalize("").char_len(), 0);
        assert_eq!(normalize("，。！？……  \n").char_len(), 0);
    }

    #[test]
    fn compact_matches_normalized() {
        let s = "第一回　宴桃園豪傑三結義，斬黃巾英雄首立功。Chapter ONE: Ｔｅｓｔ ﬁ é";
        let c = normalize_compact(s);
        let n = normalize(s);
        assert_eq!(c.text, n.text());
        assert_eq!(c.breaks, n.breaks());
        assert_eq!(c.chars, n.char_len());
    }

    #[test]
    fn spaced_form_separates_words() {
        let c = normalize_compact("Hello, world! 你好。再见 Bye");
        assert_eq!(c.spaced(), "hello world 你好再见 bye");
        let c = normalize_compact("天 下，大*势");
        assert_eq!(c.spaced(), "天下大势");
    }

    #[test]
    fn spaced_form_caps_unbroken_runs() {
        let text = "天下，大势".repeat(10_000);
        let spaced = normalize_compact(&text).spaced();
        let longest = spaced.split(' ').map(str::len).max().unwrap();
        assert!(longest <= MAX_SEGMENT_BYTES, "{longest}");
        assert!(longest > MAX_SEGMENT_BYTES - 8);
        assert_eq!(spaced.replace(' ', ""), normalize_compact(&text).text);
    }

    #[test]
    fn look_alike_letters_fold_into_latin() {
        let plain = "Alice was beginning to get very tired of sitting by her sister";
        // Cyrillic а е о р с х у і and Greek ο ν swapped in, some in upper case.
        let disguised = "Аlicе wаs bеginning tο gеt νеry tirеd оf sіttіng by hеr sіstеr";
        assert_ne!(plain, disguised);
        assert_eq!(normalize(disguised).text(), normalize(plain).text());
        assert_eq!(normalize_compact("рахсуо").text, "paxcyo");
        // Upper and lower case of a Cyrillic letter fold alike.
        assert_eq!(normalize("В").text(), normalize("в").text());
        // One character for one: the offsets still point at the look-alikes.
        let n = normalize("sаt");
        assert_eq!(n.text(), "sat");
        assert_eq!(n.original_range(1..2), 1..3);
        assert_eq!(n.original_range(2..3), 3..4);
    }

    #[test]
    fn look_alike_folding_leaves_ascii_and_cjk_alone() {
        // TR39 calls 0/O, 1/l and m/rn confusable: ASCII is never folded.
        assert_eq!(normalize("0O 1l m rn").text(), "0o1lmrn");
        // 〇 (a Chinese numeral) has the skeleton "O"; Chinese text stays as it is.
        assert_eq!(normalize("二〇二四年，口ロ").text(), "二〇二四年口ロ");
        assert_eq!(look_alike('〇'), '〇');
        // Accented letters keep their accents (their skeletons are two characters).
        assert_eq!(normalize("café naïve").text(), "cafénaïve");
        assert!(LOOK_ALIKES.len() > 100, "{}", LOOK_ALIKES.len());
        assert!(LOOK_ALIKES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(
            LOOK_ALIKES
                .iter()
                .all(|&(_, to)| to.is_ascii_alphanumeric())
        );
    }

    #[test]
    fn ascii_entries_are_ascii_or_dropped() {
        // Building the fast path's table asserts it; upper case folds, punctuation drops.
        let ascii = &*ASCII;
        assert_eq!(ascii[usize::from(b'Q')], b'q');
        assert_eq!(ascii[usize::from(b'7')], b'7');
        assert_eq!(ascii[usize::from(b' ')], 0);
        assert_eq!(ascii[usize::from(b',')], 0);
        let mut chars = Vec::new();
        normalize_chars_into("Hi, Bob!e\u{301} x", &mut chars);
        let expected: Vec<u64> = "hibobéx".chars().map(|c| c as u64).collect();
        assert_eq!(chars, expected);
    }

    #[test]
    fn astral_characters() {
        // CJK Extension B is kept; emoji and other symbols are dropped.
        assert_eq!(normalize("𠀀😀𝐀").text(), "𠀀a");
    }
}
