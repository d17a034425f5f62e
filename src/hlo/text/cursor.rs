//! A cursor over one statement: the few tokens of HLO text's outer grammar (names, `=`, `,`,
//! integers, strings) and values skipped by their bracket structure. Shapes are handed to the
//! shape parser (`crate::text`), never tokenized here.

use std::ops::Range;

use crate::error::HloTextProblem;

/// The longest token quoted whole in an error.
const FOUND_LIMIT: usize = 48;

/// A position in a statement.
#[derive(Debug, Clone, Copy)]
pub(in crate::hlo) struct Cursor<'a> {
    pub(in crate::hlo) text: &'a str,
    pub(in crate::hlo) pos: usize,
}

/// A problem at a byte offset of the statement.
pub(in crate::hlo) type Failed = (usize, HloTextProblem);

/// The bytes of a name: `[A-Za-z0-9_.-]`.
const NAME: [bool; 256] = byte_class(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");

fn is_name_byte(b: u8) -> bool {
    is_in(&NAME, b)
}

impl<'a> Cursor<'a> {
    pub(in crate::hlo) fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    /// Skips whitespace and comments (`/* … */`, `// …` to the end of the line).
    #[inline]
    pub(in crate::hlo) fn skip_trivia(&mut self) {
        // Most tokens follow one another with nothing between them.
        if self.byte().is_some_and(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'/')) {
            return;
        }
        self.skip_trivia_slow();
    }

    /// [`skip_trivia`](Self::skip_trivia) where there is trivia to skip.
    fn skip_trivia_slow(&mut self) {
        loop {
            match self.byte() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos = self.pos.saturating_add(1),
                Some(b'/') if self.rest().starts_with("/*") => {
                    let end = self
                        .rest()
                        .get(2..)
                        .and_then(|r| r.find("*/"))
                        .map_or(self.text.len(), |at| self.pos.saturating_add(at).saturating_add(4));
                    self.pos = end.min(self.text.len());
                }
                Some(b'/') if self.rest().starts_with("//") => {
                    self.pos = self.rest().find('\n').map_or(self.text.len(), |at| self.pos.saturating_add(at));
                }
                _ => return,
            }
        }
    }

    /// At the end of the statement (after trivia).
    pub(in crate::hlo) fn at_end(&mut self) -> bool {
        self.skip_trivia();
        self.pos >= self.text.len()
    }

    /// What the cursor is at, quoted for an error.
    pub(in crate::hlo) fn found(&self) -> String {
        let rest = self.rest();
        if rest.is_empty() {
            return "end of statement".to_owned();
        }
        let token_len = rest.bytes().position(|b| !is_name_byte(b)).unwrap_or(rest.len()).max(1);
        let cut = (1..=token_len.min(FOUND_LIMIT)).rev().find(|&i| rest.is_char_boundary(i)).unwrap_or(0);
        let cut = if cut == 0 { rest.chars().next().map_or(0, char::len_utf8) } else { cut };
        let ellipsis = if cut < token_len { "…" } else { "" };
        format!("`{}{ellipsis}`", rest.get(..cut).unwrap_or(""))
    }

    /// "expects `expected`" at the current token.
    pub(in crate::hlo) fn expected(&self, expected: &'static str) -> Failed {
        (self.pos, HloTextProblem::Expected { expected, found: self.found() })
    }

    /// Consumes `b` (after trivia) or fails.
    pub(in crate::hlo) fn expect(&mut self, b: u8, expected: &'static str) -> Result<(), Failed> {
        if self.eat(b) { Ok(()) } else { Err(self.expected(expected)) }
    }

    /// Consumes `b` after trivia if it is there.
    pub(in crate::hlo) fn eat(&mut self, b: u8) -> bool {
        self.skip_trivia();
        if self.byte() == Some(b) {
            self.pos = self.pos.saturating_add(1);
            true
        } else {
            false
        }
    }

    /// A word `[A-Za-z0-9_.-]+` after trivia, or `None` (nothing consumed).
    pub(in crate::hlo) fn word(&mut self) -> Option<&'a str> {
        self.skip_trivia();
        let rest = self.rest();
        let len = rest.bytes().position(|b| !is_name_byte(b)).unwrap_or(rest.len());
        if len == 0 {
            return None;
        }
        self.pos = self.pos.saturating_add(len);
        rest.get(..len)
    }

    /// Consumes `keyword` if the next word is exactly it.
    pub(in crate::hlo) fn keyword(&mut self, keyword: &str) -> bool {
        let saved = *self;
        if self.word() == Some(keyword) {
            return true;
        }
        *self = saved;
        false
    }

    /// A name: a word, optionally after `%` (returned without it).
    pub(in crate::hlo) fn name(&mut self, expected: &'static str) -> Result<&'a str, Failed> {
        let saved = *self;
        let percent = self.eat(b'%');
        if let Some(word) = self.word() {
            return Ok(word);
        }
        if percent {
            self.pos = saved.pos;
            self.skip_trivia();
        }
        Err(self.expected(expected))
    }

    /// The text from here to the end of one value: up to a `,` at bracket depth 0, or the
    /// closing bracket of an enclosing group, or the end; brackets must pair up and strings end.
    /// Returns its range, trimmed of surrounding whitespace.
    pub(in crate::hlo) fn value(&mut self) -> Result<Range<usize>, Failed> {
        self.skip_trivia();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        // The open brackets; most values nest a few levels, so no allocation below 32.
        let mut shallow = [0u8; 32];
        let mut deep: Vec<u8> = Vec::new();
        let mut depth = 0usize;
        let mut i = self.pos;
        loop {
            let Some(at) = bytes.get(i..).and_then(|rest| rest.iter().position(|&b| is_in(&VALUE_SPECIAL, b))) else {
                i = bytes.len();
                break;
            };
            i = i.saturating_add(at);
            let b = bytes.get(i).copied().unwrap_or(b',');
            match b {
                b'"' => {
                    i = skip_string(bytes, i).ok_or_else(|| unterminated(i))?;
                    continue;
                }
                b'/' if bytes.get(i.saturating_add(1)) == Some(&b'*') => {
                    i = self
                        .text
                        .get(i.saturating_add(2)..)
                        .and_then(|r| r.find("*/"))
                        .map_or(bytes.len(), |at| i.saturating_add(at).saturating_add(4));
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    match shallow.get_mut(depth) {
                        Some(slot) => *slot = b,
                        None => deep.push(b),
                    }
                    depth = depth.saturating_add(1);
                }
                b')' | b']' | b'}' => {
                    if depth == 0 {
                        break;
                    }
                    depth = depth.saturating_sub(1);
                    let open = shallow.get(depth).copied().or_else(|| deep.pop()).unwrap_or(b'(');
                    let want = closing(open);
                    if b != want {
                        self.pos = i;
                        return Err((i, HloTextProblem::Expected { expected: quoted(want), found: self.found() }));
                    }
                }
                b',' if depth == 0 => break,
                _ => {}
            }
            i = i.saturating_add(1);
        }
        if depth > 0 {
            let open = if depth > shallow.len() {
                deep.last().copied()
            } else {
                shallow.get(depth.saturating_sub(1)).copied()
            };
            self.pos = bytes.len();
            return Err(self.expected(quoted(closing(open.unwrap_or(b'(')))));
        }
        self.pos = i;
        let raw = self.text.get(start..i).unwrap_or("");
        let end = start.saturating_add(raw.trim_end().len());
        Ok(start..end)
    }

    /// After an opening bracket: the text up to its closing `close`, which is consumed.
    pub(in crate::hlo) fn group(&mut self, close: u8, expected: &'static str) -> Result<Range<usize>, Failed> {
        let mut range = self.value()?;
        // A `,` at depth 0 is part of a group: keep going to the closing bracket.
        while self.byte() == Some(b',') {
            self.pos = self.pos.saturating_add(1);
            range.end = self.value()?.end.max(range.end);
        }
        if self.byte() != Some(close) {
            return Err(self.expected(expected));
        }
        self.pos = self.pos.saturating_add(1);
        Ok(range)
    }

    /// Consumes `->` after trivia, or fails.
    pub(in crate::hlo) fn arrow(&mut self, expected: &'static str) -> Result<(), Failed> {
        self.skip_trivia();
        if !self.rest().starts_with("->") {
            return Err(self.expected(expected));
        }
        self.pos = self.pos.saturating_add(2);
        self.skip_trivia();
        Ok(())
    }

    /// A decimal integer (optionally negative).
    pub(in crate::hlo) fn integer(&mut self, expected: &'static str) -> Result<i64, Failed> {
        self.skip_trivia();
        let saved = self.pos;
        let rest = self.rest();
        let len = rest.bytes().enumerate().take_while(|&(i, b)| b.is_ascii_digit() || (i == 0 && b == b'-')).count();
        if let Some(value) = rest.get(..len).and_then(|digits| digits.parse::<i64>().ok()) {
            self.pos = self.pos.saturating_add(len);
            return Ok(value);
        }
        self.pos = saved;
        Err(self.expected(expected))
    }

    /// A `"…"` string (escapes kept as written); its range without the quotes.
    pub(in crate::hlo) fn string(&mut self) -> Result<Range<usize>, Failed> {
        self.skip_trivia();
        if self.byte() != Some(b'"') {
            return Err(self.expected("a string"));
        }
        let start = self.pos;
        let end = skip_string(self.text.as_bytes(), start).ok_or_else(|| unterminated(start))?;
        self.pos = end;
        Ok(start.saturating_add(1)..end.saturating_sub(1))
    }
}

/// A table of 256 flags, set for the bytes of `special`: the bytes a scan stops at, so it can
/// jump over runs of the others.
#[allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "invariant: a byte indexes 256 entries; `i` stays below `special.len()`"
)]
pub(in crate::hlo) const fn byte_class(special: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    table
}

/// Whether `b` is in `class`.
#[allow(clippy::indexing_slicing, reason = "invariant: a byte indexes 256 entries")]
pub(in crate::hlo) fn is_in(class: &[bool; 256], b: u8) -> bool {
    class[usize::from(b)]
}

/// The bytes [`Cursor::value`] stops at.
const VALUE_SPECIAL: [bool; 256] = byte_class(b"\"/()[]{},");

/// The bracket that closes `open`.
fn closing(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// A closing bracket as the grammar names it.
fn quoted(close: u8) -> &'static str {
    match close {
        b')' => "`)`",
        b']' => "`]`",
        _ => "`}`",
    }
}

/// A string at `open` that does not end on its line (built only on failure: the message is
/// allocated).
fn unterminated(open: usize) -> Failed {
    (open, HloTextProblem::Expected { expected: "a closing `\"`", found: "end of line".to_owned() })
}

/// The offset after the string that starts at `open` (a `"`); `None` if it does not end on its
/// line.
pub(in crate::hlo) fn skip_string(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open.saturating_add(1);
    loop {
        match bytes.get(i)? {
            b'\\' => i = i.saturating_add(2),
            b'"' => return Some(i.saturating_add(1)),
            b'\n' => return None,
            _ => i = i.saturating_add(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_end_at_a_comma_outside_brackets_and_strings() {
        let text = r#"a={x=(1,2), y="a,\"}"}, b=[1, {2}], c"#;
        let mut cursor = Cursor::new(text);
        assert_eq!(cursor.word(), Some("a"));
        assert!(cursor.eat(b'='));
        let range = cursor.value().unwrap();
        assert_eq!(&text[range], r#"{x=(1,2), y="a,\"}"}"#);
        assert!(cursor.eat(b','));
        assert_eq!(cursor.word(), Some("b"));
        assert!(cursor.eat(b'='));
        assert_eq!(&text[cursor.value().unwrap()], "[1, {2}]");
    }

    #[test]
    fn mismatched_brackets_are_errors() {
        let mut cursor = Cursor::new("{(]}");
        let (at, problem) = cursor.value().unwrap_err();
        assert_eq!(at, 2);
        assert_eq!(problem, HloTextProblem::Expected { expected: "`)`", found: "`]`".into() });
        assert!(Cursor::new("{a").value().is_err());
        assert!(Cursor::new("\"open").value().is_err());
    }
}
