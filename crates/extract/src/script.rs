//! Chapter text that a page's inline scripts write: a bounded scanner over the script source
//! that decodes string literals and follows where they go, without running any JavaScript.
//!
//! Pirate sites (and sites that keep scrapers away) serve an empty `<div id="content">` and
//! fill it from an inline script: a string literal (raw, or all `\uXXXX` escapes) assigned to
//! `innerHTML` or passed to `document.write`, often cut into pieces joined with `+` or built up
//! in a variable. [`scan`] finds those writes and returns what they write, and the URL of a
//! same-page JSON or text endpoint when the script fetches the content instead
//! (`fetch("/api/chapter/1.json")`, `$.get(...)`, `$.ajax({url: ...})`, `xhr.open("GET", ...)`,
//! `$("#content").load(...)`).
//!
//! # What it understands
//!
//! - string literals in `'`, `"` and `` ` `` (a template's `${...}` parts are dropped), with
//!   every JavaScript escape (`\n`, `\xHH`, `\uHHHH`, `\u{H...}`, line continuations); a lone
//!   surrogate (`\uD800`) becomes U+FFFD;
//! - expressions of literals, numbers, parentheses and variables joined by `+`;
//! - variables: `var s = expr`, `s = expr`, `s += expr` (a variable's value is what the script
//!   gave it last, in source order; branches and functions are not told apart);
//! - sinks: `.innerHTML`/`.outerHTML` (HTML) and `.innerText`/`.textContent` (text) assigned or
//!   appended to, `document.write(...)`/`writeln`, jQuery's `.html(...)`, `.append(...)`,
//!   `.prepend(...)`, and `.insertAdjacentHTML(where, ...)`.
//!
//! # Why not a JavaScript engine
//!
//! QuickJS (`rquickjs`) would run any script, but every page would then need a sandboxed
//! engine with a DOM shim, a memory cap and an interrupt handler, a C dependency, and some
//! milliseconds per page; and a script that reads the DOM or the clock fails in a shim anyway.
//! What pirate pages do is write literals: a scanner linear in the script, with no allocation
//! beyond the text it decodes, covers that and cannot be made to loop.
//!
//! # Bounds
//!
//! One pass over at most [`MAX_SCRIPT_BYTES`] of script; at most [`MAX_WRITTEN_BYTES`] of
//! written text; and at most [`MAX_WORK_BYTES`] of string copying in all (a million
//! `s = s + "x"` would otherwise copy quadratically), after which the scan stops evaluating.
//! A string that never ends ends with the script; an unterminated `'`/`"` string ends at its
//! line.

use std::collections::HashMap;
use std::time::Instant;

/// Script source read per page (the rest is ignored).
pub const MAX_SCRIPT_BYTES: usize = 8 * 1024 * 1024;
/// Text the scripts may write, in bytes: far above a chapter, far below a hostile page.
pub const MAX_WRITTEN_BYTES: usize = 2 * 1024 * 1024;
/// Bytes copied while evaluating expressions, in all.
pub const MAX_WORK_BYTES: usize = 16 * 1024 * 1024;
/// Variables remembered per page.
const MAX_VARIABLES: usize = 4096;
/// Endpoint URLs longer than this are not URLs a page fetches its chapter from.
const MAX_URL_BYTES: usize = 2048;

/// What the scripts of a page write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The HTML the scripts write, in source order (text written as text is escaped, its line
    /// breaks made `<br>`s).
    pub html: String,
    /// Same-page requests for content: the URLs (as written, not yet resolved) the scripts
    /// fetch with `fetch`, jQuery or `XMLHttpRequest`, in source order.
    pub endpoints: Vec<String>,
    /// Whether a bound stopped the scan before the end.
    pub truncated: bool,
}

/// Scans inline script source (several scripts may be joined; each should end with a
/// newline). See the [module docs](self).
pub fn scan(source: &str) -> Written {
    scan_by(source, None)
}

/// [`scan`], stopping at `deadline` (what was found by then is returned, `truncated`).
pub fn scan_by(source: &str, deadline: Option<Instant>) -> Written {
    let mut source = source;
    let mut truncated = false;
    if source.len() > MAX_SCRIPT_BYTES {
        let mut end = MAX_SCRIPT_BYTES;
        while !source.is_char_boundary(end) {
            end -= 1;
        }
        source = &source[..end];
        truncated = true;
    }
    let mut eval = Eval::default();
    let mut lexer = Lexer::new(source);
    let mut tokens = 0u32;
    while let Some(tok) = lexer.next_token() {
        if !eval.feed(tok) {
            truncated = true;
            break;
        }
        tokens = tokens.wrapping_add(1);
        if tokens.is_multiple_of(1 << 14) && deadline.is_some_and(|d| Instant::now() >= d) {
            truncated = true;
            break;
        }
    }
    eval.end();
    Written {
        html: eval.html,
        endpoints: eval.endpoints,
        truncated: truncated || eval.exhausted,
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    /// A string literal: its raw content between the quotes, and the quote.
    Str(&'a str, u8),
    Ident(&'a str),
    Num(&'a str),
    Punct(&'a str),
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// Whether a `/` here would start a regular expression (no value before it).
    regex_allowed: bool,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Lexer {
            src,
            pos: 0,
            regex_allowed: true,
        }
    }

    fn next_token(&mut self) -> Option<Tok<'a>> {
        let b = self.src.as_bytes();
        loop {
            let c = *b.get(self.pos)?;
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C => self.pos += 1,
                b'/' if b.get(self.pos + 1) == Some(&b'/') => self.skip_line(),
                b'/' if b.get(self.pos + 1) == Some(&b'*') => {
                    self.pos = self.src[self.pos + 2..]
                        .find("*/")
                        .map_or(b.len(), |i| self.pos + 2 + i + 2);
                }
                b'<' if self.src[self.pos..].starts_with("<!--") => self.skip_line(),
                b'-' if self.regex_allowed && self.src[self.pos..].starts_with("-->") => {
                    self.skip_line()
                }
                b'/' if self.regex_allowed => self.skip_regex(),
                b'\'' | b'"' => return Some(self.string(c)),
                b'`' => return Some(self.template()),
                b'0'..=b'9' => {
                    let start = self.pos;
                    while b
                        .get(self.pos)
                        .is_some_and(|d| d.is_ascii_alphanumeric() || *d == b'.' || *d == b'_')
                    {
                        self.pos += 1;
                    }
                    self.regex_allowed = false;
                    return Some(Tok::Num(&self.src[start..self.pos]));
                }
                _ if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 => {
                    let start = self.pos;
                    let rest = &self.src[self.pos..];
                    let len = rest
                        .char_indices()
                        .find(|&(_, ch)| !(ch.is_alphanumeric() || ch == '_' || ch == '$'))
                        .map_or(rest.len(), |(i, _)| i);
                    if len == 0 {
                        // A non-ASCII character that is not a letter: punctuation to us.
                        let ch = rest.chars().next()?;
                        self.pos += ch.len_utf8();
                        self.regex_allowed = true;
                        return Some(Tok::Punct(&self.src[start..self.pos]));
                    }
                    self.pos += len;
                    let word = &self.src[start..self.pos];
                    self.regex_allowed = matches!(
                        word,
                        "return"
                            | "typeof"
                            | "case"
                            | "do"
                            | "else"
                            | "in"
                            | "of"
                            | "new"
                            | "delete"
                            | "void"
                            | "throw"
                    );
                    return Some(Tok::Ident(word));
                }
                _ => {
                    let start = self.pos;
                    let rest = &b[self.pos..];
                    let len = if rest.starts_with(b"+=") || rest.starts_with(b"++") {
                        2
                    } else if rest.starts_with(b"===") || rest.starts_with(b"!==") {
                        3
                    } else if rest.starts_with(b"==") || rest.starts_with(b"=>") {
                        2
                    } else {
                        1
                    };
                    self.pos += len;
                    let p = &self.src[start..self.pos];
                    self.regex_allowed = !matches!(p, ")" | "]" | "}" | "++");
                    return Some(Tok::Punct(p));
                }
            }
        }
    }

    fn skip_line(&mut self) {
        self.pos = self.src[self.pos..]
            .find('\n')
            .map_or(self.src.len(), |i| self.pos + i);
    }

    /// Skips a regular expression literal (to its closing `/` outside a class, or the line's
    /// end when it has none), and its flags.
    fn skip_regex(&mut self) {
        let b = self.src.as_bytes();
        let mut i = self.pos + 1;
        let mut class = false;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => {
                    i += 1;
                    break;
                }
                b'\n' => break,
                _ => {}
            }
            i += 1;
        }
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        self.pos = i.min(b.len());
        self.regex_allowed = false;
    }

    /// A `'` or `"` string: to the closing quote, or to an unescaped line end.
    fn string(&mut self, quote: u8) -> Tok<'a> {
        let b = self.src.as_bytes();
        let start = self.pos + 1;
        let mut i = start;
        let end;
        loop {
            match b.get(i) {
                None => {
                    end = b.len();
                    self.pos = b.len();
                    break;
                }
                Some(b'\\') => i += 2,
                Some(&c) if c == quote => {
                    end = i;
                    self.pos = i + 1;
                    break;
                }
                Some(b'\n') => {
                    end = i;
                    self.pos = i;
                    break;
                }
                Some(_) => i += 1,
            }
        }
        let end = end.min(b.len());
        self.regex_allowed = false;
        Tok::Str(self.src.get(start..end).unwrap_or(""), quote)
    }

    /// A template literal: to the closing backtick, skipping `${...}` (with nested braces).
    fn template(&mut self) -> Tok<'a> {
        let b = self.src.as_bytes();
        let start = self.pos + 1;
        let mut i = start;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 1,
                b'$' if depth == 0 && b.get(i + 1) == Some(&b'{') => {
                    depth = 1;
                    i += 1;
                }
                b'{' if depth > 0 => depth += 1,
                b'}' if depth > 0 => depth -= 1,
                b'`' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let end = i.min(b.len());
        self.pos = (end + 1).min(b.len());
        self.regex_allowed = false;
        Tok::Str(self.src.get(start..end).unwrap_or(""), b'`')
    }
}

/// Appends the decoded value of a literal's raw content to `out`, up to `limit` bytes of
/// `out`; returns the bytes added. Escapes are JavaScript's; a broken escape stands for the
/// characters after the backslash; a lone surrogate becomes U+FFFD.
fn decode_literal(raw: &str, quote: u8, out: &mut String, limit: usize) -> usize {
    let before = out.len();
    let b = raw.as_bytes();
    let mut i = 0;
    let mut template_depth = 0usize;
    while i < b.len() && out.len() < limit {
        let c = b[i];
        if quote == b'`' {
            if template_depth > 0 {
                match c {
                    b'{' => template_depth += 1,
                    b'}' => template_depth -= 1,
                    _ => {}
                }
                i += 1;
                continue;
            }
            if c == b'$' && b.get(i + 1) == Some(&b'{') {
                template_depth = 1;
                i += 2;
                continue;
            }
        }
        if c != b'\\' {
            // Copy the run up to the next backslash (or template part) at once.
            let run_end = b[i..]
                .iter()
                .position(|&x| x == b'\\' || (quote == b'`' && x == b'$'))
                .map_or(b.len(), |p| i + p.max(1));
            let mut end = run_end.min(i + (limit - out.len()));
            while !raw.is_char_boundary(end) {
                end -= 1;
            }
            if end <= i {
                break;
            }
            out.push_str(&raw[i..end]);
            i = end;
            continue;
        }
        let Some(&e) = b.get(i + 1) else {
            break;
        };
        i += 2;
        match e {
            b'n' => out.push('\n'),
            b't' => out.push('\t'),
            b'r' => out.push('\r'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'v' => out.push('\u{b}'),
            b'0' if !b.get(i).is_some_and(u8::is_ascii_digit) => out.push('\0'),
            b'\r' => {
                if b.get(i) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => {}
            b'x' => match hex(b, i, 2) {
                Some(v) => {
                    out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
                    i += 2;
                }
                None => out.push('x'),
            },
            b'u' => {
                let (unit, len) = if b.get(i) == Some(&b'{') {
                    match b[i + 1..].iter().take(8).position(|&x| x == b'}') {
                        Some(n) if n > 0 => (hex(b, i + 1, n), n + 2),
                        _ => (None, 0),
                    }
                } else {
                    (hex(b, i, 4), 4)
                };
                let Some(unit) = unit else {
                    out.push('u');
                    continue;
                };
                i += len;
                if (0xD800..0xDC00).contains(&unit)
                    && b.get(i) == Some(&b'\\')
                    && b.get(i + 1) == Some(&b'u')
                    && let Some(low) = hex(b, i + 2, 4)
                    && (0xDC00..0xE000).contains(&low)
                {
                    i += 6;
                    let cp = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                } else {
                    out.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
                }
            }
            _ => {
                // `\'`, `\"`, `\\`, `\/` and any other character stand for themselves.
                let rest = &raw[i - 1..];
                if let Some(ch) = rest.chars().next() {
                    out.push(ch);
                    i += ch.len_utf8() - 1;
                }
            }
        }
    }
    if out.len() > limit {
        let mut end = limit;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    out.len() - before
}

/// `n` hex digits at `b[at..]` (at most 6, so at most U+FFFFFF; `char::from_u32` refuses
/// what is past U+10FFFF).
fn hex(b: &[u8], at: usize, n: usize) -> Option<u32> {
    if n == 0 || n > 6 {
        return None;
    }
    let digits = b.get(at..at + n)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + char::from(d).to_digit(16)?;
    }
    Some(v)
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/// Where an expression's value goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target<'a> {
    Html,
    Text,
    Assign(&'a str),
    Append(&'a str),
    Endpoint,
}

/// An expression being read: `term (+ term)*`.
struct Expr<'a> {
    target: Target<'a>,
    value: String,
    /// Whether a term is wanted next (else `+` or the end).
    expect_term: bool,
    /// Open parentheses inside the expression.
    depth: usize,
    /// Arguments to pass over before the one that is written (`insertAdjacentHTML`'s first).
    skip_args: u8,
    /// A term that is not a literal or known variable was met.
    unknown: bool,
    terms: usize,
    /// For `open(method, url)`: whether the method passed over was `GET` or `POST` (a
    /// `window.open(url, "_blank")` names no endpoint).
    method_ok: bool,
}

#[derive(Default)]
struct Eval<'a> {
    vars: HashMap<&'a str, String>,
    html: String,
    endpoints: Vec<String>,
    expr: Option<Expr<'a>>,
    /// The last three tokens outside expressions, newest last.
    recent: [Option<Tok<'a>>; 3],
    /// Whether `ajax` was seen (then `url:` names an endpoint).
    ajax: bool,
    work: usize,
    exhausted: bool,
}

const HTML_PROPERTIES: &[&str] = &["innerHTML", "outerHTML"];
const TEXT_PROPERTIES: &[&str] = &["innerText", "textContent"];
const HTML_CALLS: &[&str] = &["write", "writeln", "html", "append", "prepend"];
const FETCH_METHODS: &[&str] = &["get", "getJSON", "post", "load", "ajax"];

impl<'a> Eval<'a> {
    /// Takes one token; `false` once the work budget is spent.
    fn feed(&mut self, tok: Tok<'a>) -> bool {
        if self.exhausted {
            return false;
        }
        // A token that ends an expression may start the next pattern.
        if self.expr.is_some() && self.continue_expr(tok) {
            return !self.exhausted;
        }
        self.statement(tok);
        !self.exhausted
    }

    fn end(&mut self) {
        self.finish_expr();
    }

    fn push_recent(&mut self, tok: Tok<'a>) {
        self.recent.rotate_left(1);
        self.recent[2] = Some(tok);
    }

    /// A token outside any expression: does it start one?
    fn statement(&mut self, tok: Tok<'a>) {
        let [r0, r1, r2] = self.recent;
        let start = |target, skip_args| Expr {
            target,
            value: String::new(),
            expect_term: true,
            depth: 0,
            skip_args,
            unknown: false,
            terms: 0,
            method_ok: skip_args == 0,
        };
        match tok {
            Tok::Punct(op @ ("=" | "+=")) => {
                let append = op == "+=";
                match (r1, r2) {
                    (Some(Tok::Punct(".")), Some(Tok::Ident(p)))
                        if HTML_PROPERTIES.contains(&p) =>
                    {
                        self.expr = Some(start(Target::Html, 0));
                    }
                    (Some(Tok::Punct(".")), Some(Tok::Ident(p)))
                        if TEXT_PROPERTIES.contains(&p) =>
                    {
                        self.expr = Some(start(Target::Text, 0));
                    }
                    (r1, Some(Tok::Ident(name))) if r1 != Some(Tok::Punct(".")) => {
                        let target = if append {
                            Target::Append(name)
                        } else {
                            Target::Assign(name)
                        };
                        self.expr = Some(start(target, 0));
                    }
                    _ => {}
                }
            }
            Tok::Punct("(") => match (r0, r1, r2) {
                (_, Some(Tok::Punct(".")), Some(Tok::Ident(f))) if HTML_CALLS.contains(&f) => {
                    self.expr = Some(start(Target::Html, 0));
                }
                (_, Some(Tok::Punct(".")), Some(Tok::Ident("insertAdjacentHTML"))) => {
                    self.expr = Some(start(Target::Html, 1));
                }
                (_, r1, Some(Tok::Ident("fetch"))) if r1 != Some(Tok::Punct(".")) => {
                    self.expr = Some(start(Target::Endpoint, 0));
                }
                (
                    Some(Tok::Ident("window" | "self")),
                    Some(Tok::Punct(".")),
                    Some(Tok::Ident("fetch")),
                ) => {
                    self.expr = Some(start(Target::Endpoint, 0));
                }
                (Some(Tok::Ident(obj)), Some(Tok::Punct(".")), Some(Tok::Ident(m)))
                    if FETCH_METHODS.contains(&m) && is_request_object(obj) =>
                {
                    if m == "ajax" {
                        self.ajax = true;
                    }
                    self.expr = Some(start(Target::Endpoint, 0));
                }
                (Some(Tok::Punct(")")), Some(Tok::Punct(".")), Some(Tok::Ident("load"))) => {
                    self.expr = Some(start(Target::Endpoint, 0));
                }
                (_, Some(Tok::Punct(".")), Some(Tok::Ident("open"))) => {
                    // xhr.open("GET", url): the URL is the second argument.
                    self.expr = Some(start(Target::Endpoint, 1));
                }
                _ => {}
            },
            Tok::Punct(":") if self.ajax => {
                if matches!(r2, Some(Tok::Ident("url")) | Some(Tok::Str("url", _))) {
                    self.expr = Some(start(Target::Endpoint, 0));
                }
            }
            Tok::Ident("ajax") => self.ajax = true,
            _ => {}
        }
        self.push_recent(tok);
    }

    /// A token inside an expression; `false` when it ended the expression (and was not
    /// consumed).
    fn continue_expr(&mut self, tok: Tok<'a>) -> bool {
        let Some(expr) = self.expr.as_mut() else {
            return false;
        };
        if expr.skip_args > 0 {
            match tok {
                Tok::Punct("(") => expr.depth += 1,
                Tok::Punct(")") if expr.depth == 0 => {
                    self.expr = None;
                    self.push_recent(tok);
                    return true;
                }
                Tok::Punct(")") => expr.depth -= 1,
                Tok::Punct(",") if expr.depth == 0 => expr.skip_args -= 1,
                Tok::Str(raw, _)
                    if raw.eq_ignore_ascii_case("get") || raw.eq_ignore_ascii_case("post") =>
                {
                    expr.method_ok = true;
                }
                _ => {}
            }
            return true;
        }
        if expr.expect_term {
            match tok {
                Tok::Str(raw, quote) => {
                    let room = MAX_WRITTEN_BYTES.saturating_sub(expr.value.len());
                    let budget = room.min(MAX_WORK_BYTES.saturating_sub(self.work));
                    let limit = expr.value.len() + budget;
                    let added = decode_literal(raw, quote, &mut expr.value, limit);
                    self.work += added.max(1);
                    if self.work >= MAX_WORK_BYTES {
                        self.exhausted = true;
                    }
                }
                Tok::Num(n) => expr.value.push_str(n),
                Tok::Ident(name) => match self.vars.get(name) {
                    Some(v) => {
                        let take = v
                            .len()
                            .min(MAX_WRITTEN_BYTES.saturating_sub(expr.value.len()));
                        let mut end = take;
                        while !v.is_char_boundary(end) {
                            end -= 1;
                        }
                        expr.value.push_str(&v[..end]);
                        self.work += end.max(1);
                        if self.work >= MAX_WORK_BYTES {
                            self.exhausted = true;
                        }
                    }
                    None => expr.unknown = true,
                },
                Tok::Punct("(") => {
                    expr.depth += 1;
                    return true;
                }
                _ => {
                    expr.unknown = true;
                    self.finish_expr();
                    return false;
                }
            }
            expr.terms += 1;
            expr.expect_term = false;
            return true;
        }
        match tok {
            Tok::Punct("+") => {
                expr.expect_term = true;
                true
            }
            Tok::Punct(")") if expr.depth > 0 => {
                expr.depth -= 1;
                true
            }
            _ => {
                self.finish_expr();
                false
            }
        }
    }

    fn finish_expr(&mut self) {
        let Some(expr) = self.expr.take() else {
            return;
        };
        if expr.terms == 0 {
            return;
        }
        if matches!(expr.target, Target::Html | Target::Text) && expr.value.is_empty() {
            return;
        }
        match expr.target {
            Target::Html => self.write(&expr.value),
            Target::Text => {
                let escaped = expr
                    .value
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace('\n', "<br>");
                self.write(&escaped);
            }
            Target::Assign(name) => {
                if self.vars.len() < MAX_VARIABLES || self.vars.contains_key(name) {
                    self.vars.insert(name, expr.value);
                }
            }
            Target::Append(name) => {
                if let Some(v) = self.vars.get_mut(name) {
                    let room = MAX_WRITTEN_BYTES.saturating_sub(v.len());
                    let mut end = expr.value.len().min(room);
                    while !expr.value.is_char_boundary(end) {
                        end -= 1;
                    }
                    v.push_str(&expr.value[..end]);
                } else if self.vars.len() < MAX_VARIABLES {
                    self.vars.insert(name, expr.value);
                }
            }
            Target::Endpoint => {
                let url = expr.value.trim();
                if expr.method_ok && !expr.unknown && !url.is_empty() && url.len() <= MAX_URL_BYTES
                {
                    self.endpoints.push(url.to_owned());
                }
            }
        }
    }

    fn write(&mut self, html: &str) {
        let room = MAX_WRITTEN_BYTES.saturating_sub(self.html.len());
        let mut end = html.len().min(room);
        while !html.is_char_boundary(end) {
            end -= 1;
        }
        self.html.push_str(&html[..end]);
        self.html.push('\n');
    }
}

/// Objects whose `get`/`post`/`ajax`/... request a URL: jQuery, axios and the like.
fn is_request_object(name: &str) -> bool {
    matches!(
        name,
        "$" | "jQuery" | "axios" | "http" | "request" | "superagent"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(src: &str) -> String {
        scan(src).html
    }

    #[test]
    fn literals_written_to_the_page() {
        assert_eq!(
            html(r#"document.getElementById("content").innerHTML = "第一段<br>第二段";"#),
            "第一段<br>第二段\n"
        );
        assert_eq!(
            html("document.write('<p>a</p>'); document.writeln(\"<p>b</p>\")"),
            "<p>a</p>\n<p>b</p>\n"
        );
        assert_eq!(html("$('#content').html(\"<p>x</p>\");"), "<p>x</p>\n");
        assert_eq!(
            html("el.insertAdjacentHTML('beforeend', '<p>y</p>');"),
            "<p>y</p>\n"
        );
        assert_eq!(html("el.textContent = 'a < b\\nc';"), "a &lt; b<br>c\n");
    }

    #[test]
    fn escapes_are_decoded() {
        assert_eq!(
            html(r#"c.innerHTML = "\u7b2c\u4e00\u7ae0\x41\u{1F600}\n\t\'\"\\\/";"#),
            "第一章A😀\n\t'\"\\/\n"
        );
        // Surrogate pairs join; lone surrogates and broken escapes do not break the scan.
        assert_eq!(
            html(r#"c.innerHTML = "\uD83D\uDE00|\uD800|\uDC00x|\u12|\xZ|\u{110000}";"#),
            "😀|\u{FFFD}|\u{FFFD}x|u12|xZ|\u{FFFD}\n"
        );
        // A line continuation joins lines.
        assert_eq!(html("c.innerHTML = 'a\\\nb';"), "ab\n");
    }

    #[test]
    fn pieces_and_variables_are_joined() {
        assert_eq!(
            html(
                "var s = '<p>' + \"天下\" + ('大' + '势') + 1 + '</p>';\ns += '<p>二</p>';\nd.innerHTML = s + '<p>三</p>';"
            ),
            "<p>天下大势1</p><p>二</p><p>三</p>\n"
        );
        // An unknown variable is left out, the literals around it are kept.
        assert_eq!(html("d.innerHTML = '<p>' + x + '</p>';"), "<p></p>\n");
        // Templates keep their text, not their `${}` parts.
        assert_eq!(html("d.innerHTML = `<p>a${x + {}.y}b</p>`;"), "<p>ab</p>\n");
    }

    #[test]
    fn comments_regexes_and_other_writes_are_not_text() {
        let src = r#"
            // d.innerHTML = "no";
            /* d.innerHTML = "no"; */
            var re = /innerHTML = "no"/g;
            var ad = "not written";
            if (a / 2 > 1) { d.innerHTML = "yes"; }
            x.src = "/img.png"; location.href = "/next";
        "#;
        assert_eq!(html(src), "yes\n");
    }

    #[test]
    fn endpoints_are_found() {
        let w = scan(
            r##"
            fetch("/api/chapter/1.json").then(r => r.json());
            $.get('/ajax/content?id=' + '7', function (d) {});
            $.ajax({type: "GET", url: "/ajax/2.txt", success: f});
            xhr.open("GET", "/api/3.json", true);
            window.open("/popup.html", "_blank");
            $("#content").load("/part/4.html");
            fetch(base + "/x");
        "##,
        );
        assert_eq!(
            w.endpoints,
            [
                "/api/chapter/1.json",
                "/ajax/content?id=7",
                "/ajax/2.txt",
                "/api/3.json",
                "/part/4.html"
            ]
        );
        assert!(w.html.is_empty());
    }

    #[test]
    fn hostile_scripts_stay_bounded() {
        // A megabyte-long literal is written up to the cap.
        let long = format!("d.innerHTML = \"{}\";", "字".repeat(1_000_000));
        let w = scan(&long);
        assert!(w.html.len() <= MAX_WRITTEN_BYTES + 1 && w.html.len() > 2_000_000);
        // Millions of `+`, quadratic self-concatenation, a string and a comment that never end.
        let plus = format!("d.innerHTML = 'a'{};", " + 'b'".repeat(1_000_000));
        let w = scan(&plus);
        assert_eq!(w.html.len(), 1_000_002);
        // Past the script cap the rest is not read.
        let w = scan(&format!("d.innerHTML = 'a'{};", " + 'b'".repeat(2_000_000)));
        assert!(w.truncated && w.html.len() < MAX_SCRIPT_BYTES / 5);
        let quadratic = format!(
            "var s = 'xxxxxxxxxx';{}d.innerHTML = s;",
            "s = s + s + 'y';".repeat(200_000)
        );
        let w = scan(&quadratic);
        assert!(w.truncated);
        for src in [
            "d.innerHTML = \"abc",
            "d.innerHTML = `abc${",
            "/* d.innerHTML = 'x'",
            "d.innerHTML = '\\",
            "d.innerHTML = '\\u",
            "d.innerHTML = (((((",
            "d.innerHTML = \"\\uD800",
        ] {
            let _ = scan(src);
        }
        assert_eq!(html("d.innerHTML = \"abc"), "abc\n");
        // Many variables: the map stays small.
        let vars: String = (0..100_000).map(|i| format!("var v{i} = 'x';")).collect();
        let w = scan(&format!("{vars}d.innerHTML = v1 + v99999;"));
        assert_eq!(w.html, "x\n");
    }
}
