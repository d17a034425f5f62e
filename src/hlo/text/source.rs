//! Statements out of a `BufRead`: one line, or the lines an open bracket joins, in a buffer of
//! at most the reader's limit, with what is needed to turn a byte offset into a line and column.
//! HLO text and StableHLO MLIR text (`hlo::mlir`) share it; they differ only in where a
//! statement ends ([`Grammar`]).

use std::io::{BufRead, ErrorKind};

use super::cursor::byte_class;
use super::find::Finder;
use crate::error::{Error, HloTextError, HloTextProblem};

/// The longest stretch of a line an error quotes on each side of its column.
const QUOTE_SIDE: usize = 80;

/// The bytes the bracket scan stops at outside strings and comments; every other byte is
/// skipped in runs.
const SPECIAL: [bool; 256] = byte_class(&SPECIAL_SET);

/// [`SPECIAL`]'s bytes (`=` thrice: both sets have eleven).
const SPECIAL_SET: [u8; 11] = *b"\"()[]{}/===";

/// The bytes MLIR's scan stops at: the brackets of both structures (`<>` count only for the
/// type separator) and `:`. (`=` matters to HLO's statement ends only.)
const MLIR_SPECIAL: [bool; 256] = byte_class(&MLIR_SET);

/// [`MLIR_SPECIAL`]'s bytes.
const MLIR_SET: [u8; 11] = *b"\"()[]{}<>/:";

/// The most brackets [`Separator`] follows (deeper statements are left to `hlo::mlir`'s own scan).
const SEPARATOR_NESTING: u32 = 64;

/// The first `\n` in `bytes`, eight bytes at a time (the zero-byte test of "Bit Twiddling
/// Hacks" on the bytes xor `\n`: exact for whether a word holds one).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0usize;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ NEWLINES;
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            return chunk.iter().position(|&b| b == b'\n').map(|at| offset.saturating_add(at));
        }
        offset = offset.saturating_add(8);
    }
    chunks.remainder().iter().position(|&b| b == b'\n').map(|at| offset.saturating_add(at))
}

/// Whose statements a [`Source`] cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::hlo) enum Grammar {
    /// HLO text: a computation header ends at the `{` its body opens; other open brackets join
    /// lines.
    Hlo,
    /// MLIR text: a line that ends with `{` (a region or a body opens) ends its statement, so
    /// a region's operations are statements of their own.
    Mlir,
}

/// MLIR's type separator, found by the statement cut's own scan so that `hlo::mlir` need not scan
/// the statement again: the last `:` outside `()`, `[]`, `{}`, `<>` (a `>` after `-` is an arrow)
/// and strings, the bracket structure `hlo::mlir::scan` reads. Only what that scan would find
/// without failing is kept: a statement with a comment, a string that does not end on its line,
/// brackets that do not pair, left open or nest deeper than [`SEPARATOR_NESTING`] is `unsure`,
/// and the reader scans it itself (and finds the error, if there is one). A closing bracket that
/// nothing opened is stepped over, as the reader's scan does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Separator {
    /// The open brackets, two bits each (`(`, `[`, `{`, `<`), the innermost lowest.
    open: u128,
    depth: u32,
    /// The offset of the last `:` outside brackets so far.
    last: Option<usize>,
    unsure: bool,
}

impl Separator {
    /// Two bits for an opening bracket.
    fn kind(b: u8) -> u128 {
        match b {
            b'(' => 0,
            b'[' => 1,
            b'{' => 2,
            _ => 3,
        }
    }

    fn open(&mut self, b: u8) {
        if self.depth >= SEPARATOR_NESTING {
            self.unsure = true;
            return;
        }
        self.open = (self.open << 2) | Self::kind(b);
        self.depth = self.depth.saturating_add(1);
    }

    fn close(&mut self, b: u8) {
        if self.depth == 0 {
            return;
        }
        let want = match b {
            b')' => 0,
            b']' => 1,
            b'}' => 2,
            _ => 3,
        };
        if self.open & 3 != want {
            self.unsure = true;
        }
        self.open >>= 2;
        self.depth = self.depth.saturating_sub(1);
    }

    /// The separator, if the scan is sure of it.
    fn found(&self) -> TypeSeparator {
        match (self.unsure || self.depth > 0, self.last) {
            (true, _) => TypeSeparator::Unsure,
            (false, None) => TypeSeparator::Absent,
            (false, Some(at)) => TypeSeparator::At(at),
        }
    }
}

/// MLIR's type separator as the statement cut found it ([`Statement::separator`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::hlo) enum TypeSeparator {
    /// The cut's scan cannot be sure (or the text is HLO's): the reader scans the statement
    /// itself.
    #[default]
    Unsure,
    /// There is no `:` outside brackets.
    Absent,
    /// The last `:` outside brackets is at this offset.
    At(usize),
}

/// What kind of statement the bracket scan saw, to decide where a statement ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Scan {
    /// Open brackets (`(`, `[`, `{`) minus closed ones, outside strings and comments.
    depth: i64,
    /// Inside a `/* … */` comment.
    in_comment: bool,
    /// An `=` was seen at depth 0 (an instruction or an attribute list, not a computation
    /// header).
    assignment: bool,
    /// The last line's last byte that is not whitespace (before a `//` comment) is a `{`.
    ends_with_brace: bool,
    /// MLIR only: the type separator.
    separator: Separator,
}

impl Scan {
    /// Scans one more line (the newline between lines is implied) as `grammar` reads it; `base`
    /// is the line's offset in the statement.
    fn line(&mut self, line: &[u8], grammar: Grammar, base: usize) {
        match grammar {
            Grammar::Hlo => self.scan::<false>(line, base),
            Grammar::Mlir => self.scan::<true>(line, base),
        }
    }

    /// One line, one pass. A string ends on its line: XLA and MLIR escape newlines. HLO's scan
    /// notes `=`; MLIR's follows the [`Separator`] instead.
    #[allow(clippy::indexing_slicing, reason = "invariant: `i` and `at` are positions found in `line`")]
    fn scan<const MLIR: bool>(&mut self, line: &[u8], base: usize) {
        let (special, set) = if MLIR { (&MLIR_SPECIAL, &MLIR_SET) } else { (&SPECIAL, &SPECIAL_SET) };
        let mut finder = Finder::new(line, set, special);
        let mut i = 0;
        let mut end = line.len();
        let mut in_string = false;
        while i < line.len() {
            let rest = &line[i..];
            if self.in_comment {
                match rest.windows(2).position(|w| w == b"*/") {
                    Some(at) => {
                        self.in_comment = false;
                        i = i.saturating_add(at).saturating_add(2);
                    }
                    None => i = line.len(),
                }
                continue;
            }
            if in_string {
                match rest.iter().position(|&b| b == b'"' || b == b'\\') {
                    Some(at) if rest[at] == b'\\' => i = i.saturating_add(at).saturating_add(2),
                    Some(at) => {
                        in_string = false;
                        i = i.saturating_add(at).saturating_add(1);
                    }
                    None => i = line.len(),
                }
                continue;
            }
            let Some(here) = finder.next(i) else { break };
            let next = line.get(here.saturating_add(1)).copied();
            i = here.saturating_add(1);
            match line[here] {
                b'"' => in_string = true,
                b'/' if next == Some(b'*') => {
                    self.in_comment = true;
                    self.separator.unsure = true;
                    i = i.saturating_add(1);
                }
                b'/' if next == Some(b'/') => {
                    self.separator.unsure = true;
                    end = i.saturating_sub(1);
                    break;
                }
                b @ (b'(' | b'[' | b'{') => {
                    self.depth = self.depth.saturating_add(1);
                    if MLIR {
                        self.separator.open(b);
                    }
                }
                b @ (b')' | b']' | b'}') => {
                    self.depth = self.depth.saturating_sub(1);
                    if MLIR {
                        self.separator.close(b);
                    }
                }
                b'<' => self.separator.open(b'<'),
                b'>' if here > 0 && line[here.saturating_sub(1)] == b'-' => {}
                b'>' => self.separator.close(b'>'),
                b':' if self.separator.depth == 0 => self.separator.last = Some(base.saturating_add(here)),
                b'=' if self.depth == 0 => self.assignment = true,
                _ => {}
            }
        }
        if in_string {
            // MLIR's scan fails here, or (after a `\`) reads on into the next line.
            self.separator.unsure = true;
        }
        self.ends_with_brace = !in_string && line[..end.min(line.len())].trim_ascii_end().last() == Some(&b'{');
    }

    /// Whether the statement is complete after this line.
    fn complete(&self, grammar: Grammar) -> bool {
        if self.in_comment {
            return false;
        }
        if grammar == Grammar::Mlir {
            return self.depth <= 0 || self.ends_with_brace;
        }
        // A computation header (`ENTRY %main (…) -> … {`) ends with the brace its body opens.
        self.depth <= 0 || (self.depth == 1 && self.ends_with_brace && !self.assignment)
    }
}

/// A statement's text and where its lines start.
#[derive(Debug, Default)]
pub(in crate::hlo) struct Statement {
    /// The statement's lines, joined by `\n` (no `\r`, no final newline), checked UTF-8.
    text: String,
    /// The byte offset of each line in `text`.
    starts: Vec<usize>,
    /// The line number of the first line, from 1.
    first_line: u64,
    /// Open brackets minus closed ones over the statement (outside strings and comments).
    depth: i64,
    /// MLIR's type separator, when the scan is sure of it ([`Separator`]).
    separator: TypeSeparator,
}

impl Statement {
    /// The text.
    pub(in crate::hlo) fn text(&self) -> &str {
        &self.text
    }

    /// Open brackets (`(`, `[`, `{`) minus closed ones over the statement, outside strings and
    /// comments: how much deeper the text after it is nested.
    pub(in crate::hlo) fn depth(&self) -> i64 {
        self.depth
    }

    /// MLIR text: the offset of the last `:` outside brackets (`()[]{}<>`, a `>` after `-` not
    /// closing one) and strings, which `hlo::mlir`'s own scan would find from any offset where
    /// no bracket is open; [`TypeSeparator::Unsure`] when the statement cut's scan cannot be
    /// sure (a comment, an unpaired bracket, a string that does not end on its line, deep
    /// nesting) and the reader must scan the statement itself. Always `Unsure` for HLO text.
    pub(in crate::hlo) fn separator(&self) -> TypeSeparator {
        self.separator
    }

    /// An error at byte `offset` of the statement.
    pub(in crate::hlo) fn error(&self, offset: usize, problem: HloTextProblem) -> Error {
        let line_index = self.starts.partition_point(|&start| start <= offset).saturating_sub(1);
        let start = self.starts.get(line_index).copied().unwrap_or(0);
        let end = self.starts.get(line_index.saturating_add(1)).map_or(self.text.len(), |&s| s.saturating_sub(1));
        let line = self.text.get(start..end).unwrap_or_default();
        let within = offset.saturating_sub(start).min(line.len());
        let column = line.get(..within).map_or(within, |head| head.chars().count());
        let (source_line, caret) = quote(line, column);
        let number = self.first_line.saturating_add(u64::try_from(line_index).unwrap_or(u64::MAX));
        Error::HloText(Box::new(HloTextError {
            line: number,
            column: u64::try_from(column).unwrap_or(u64::MAX).saturating_add(1),
            problem,
            source_line,
            caret,
        }))
    }
}

/// The line cut to [`QUOTE_SIDE`] characters on each side of `column`, and the caret's place in
/// it.
fn quote(line: &str, column: usize) -> (String, usize) {
    let chars: Vec<char> = line.chars().collect();
    let from = column.saturating_sub(QUOTE_SIDE);
    let to = column.saturating_add(QUOTE_SIDE).min(chars.len());
    let mut out = String::new();
    let mut caret = column.saturating_sub(from);
    if from > 0 {
        out.push('…');
        caret = caret.saturating_add(1);
    }
    out.extend(chars.get(from..to).unwrap_or_default());
    if to < chars.len() {
        out.push('…');
    }
    (out, caret)
}

/// Reads statements from `R`, one at a time, into one reused buffer.
pub(in crate::hlo) struct Source<R> {
    reader: R,
    max: usize,
    grammar: Grammar,
    /// Lines read so far.
    lines: u64,
    /// The statement being read, before its UTF-8 check (the buffer of the last statement's
    /// text, reused).
    bytes: Vec<u8>,
    pub(in crate::hlo) statement: Statement,
}

impl<R: BufRead> Source<R> {
    pub(in crate::hlo) fn new(reader: R, max: usize) -> Self {
        Self::with_grammar(reader, max, Grammar::Hlo)
    }

    /// A source cutting statements as `grammar` ends them.
    pub(in crate::hlo) fn with_grammar(reader: R, max: usize, grammar: Grammar) -> Self {
        Self { reader, max, grammar, lines: 0, bytes: Vec::new(), statement: Statement::default() }
    }

    /// An error on the line after the last one read (the end of the input).
    pub(in crate::hlo) fn error_at_end(&self, problem: HloTextProblem) -> Error {
        Error::HloText(Box::new(HloTextError {
            line: self.lines.saturating_add(1),
            column: 1,
            problem,
            source_line: String::new(),
            caret: 0,
        }))
    }

    /// Appends one line (without its newline and a `\r` before it) to the statement; false at
    /// the end of the input.
    fn read_line(&mut self) -> Result<bool, Error> {
        let mut any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => return Err(self.error_at_end(HloTextProblem::Read(error.kind()))),
            };
            if available.is_empty() {
                break;
            }
            any = true;
            let (chunk, used, done) = match find_newline(available) {
                Some(at) => (available.get(..at).unwrap_or_default(), at.saturating_add(1), true),
                None => (available, available.len(), false),
            };
            let total = self.bytes.len().saturating_add(chunk.len());
            if total > self.max {
                // The error is on the line being read, the one after the last complete one.
                let max = u64::try_from(self.max).unwrap_or(u64::MAX);
                return Err(self.error_at_end(HloTextProblem::StatementTooLong { max }));
            }
            self.bytes.extend_from_slice(chunk);
            self.reader.consume(used);
            if done {
                break;
            }
        }
        if !any {
            return Ok(false);
        }
        if self.bytes.last() == Some(&b'\r') {
            self.bytes.pop();
        }
        self.lines = self.lines.saturating_add(1);
        Ok(true)
    }

    /// The next statement that is not blank; `None` at the end of the input.
    ///
    /// # Errors
    ///
    /// [`HloTextProblem::StatementTooLong`], [`HloTextProblem::NotUtf8`],
    /// [`HloTextProblem::Read`], and [`HloTextProblem::UnexpectedEnd`] when the input ends
    /// inside an open bracket, string or comment.
    pub(in crate::hlo) fn next(&mut self) -> Result<Option<&Statement>, Error> {
        loop {
            self.bytes = std::mem::take(&mut self.statement.text).into_bytes();
            self.bytes.clear();
            self.statement.starts.clear();
            self.statement.starts.push(0);
            self.statement.first_line = self.lines.saturating_add(1);
            let mut scan = Scan::default();
            if !self.read_line()? {
                return Ok(None);
            }
            scan.line(&self.bytes, self.grammar, 0);
            while !scan.complete(self.grammar) {
                let start = self.bytes.len();
                if start >= self.max {
                    let max = u64::try_from(self.max).unwrap_or(u64::MAX);
                    return Err(self.error_at_end(HloTextProblem::StatementTooLong { max }));
                }
                self.bytes.push(b'\n');
                self.statement.starts.push(start.saturating_add(1));
                if !self.read_line()? {
                    let inside = if scan.in_comment { "a comment" } else { "an open bracket" };
                    return Err(self.error_at_end(HloTextProblem::UnexpectedEnd { inside }));
                }
                if let Some(line) = self.bytes.get(start.saturating_add(1)..) {
                    scan.line(line, self.grammar, start.saturating_add(1));
                }
            }
            self.statement.depth = scan.depth;
            self.statement.separator = match self.grammar {
                Grammar::Hlo => TypeSeparator::Unsure,
                Grammar::Mlir => scan.separator.found(),
            };
            // The statement is checked once, whole: no line is copied again.
            match String::from_utf8(std::mem::take(&mut self.bytes)) {
                Ok(text) => self.statement.text = text,
                Err(error) => {
                    let valid = error.utf8_error().valid_up_to();
                    self.statement.text = String::from_utf8_lossy(error.as_bytes()).into_owned();
                    return Err(self.statement.error(valid, HloTextProblem::NotUtf8));
                }
            }
            // Blank when only whitespace: the ASCII indentation skipped byte by byte, then
            // `trim_start` tells (at the first byte that is not ASCII whitespace).
            let text = self.statement.text();
            let indent = text.bytes().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'));
            if indent.and_then(|at| text.get(at..)).is_some_and(|rest| !rest.trim_start().is_empty()) {
                return Ok(Some(&self.statement));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statements(text: &str, max: usize) -> Result<Vec<String>, Error> {
        let mut source = Source::new(text.as_bytes(), max);
        let mut out = Vec::new();
        while let Some(statement) = source.next()? {
            out.push(statement.text().to_owned());
        }
        Ok(out)
    }

    #[test]
    fn newlines_are_found_in_every_position() {
        for len in 0..20 {
            for at in 0..=len {
                let mut bytes = vec![b'x'; len];
                if at < len {
                    bytes[at] = b'\n';
                    bytes.push(b'\n');
                }
                let expected = bytes.iter().position(|&b| b == b'\n');
                assert_eq!(find_newline(&bytes), expected, "{len} {at}");
            }
        }
        assert_eq!(find_newline(b"\x8a\x0b\n"), Some(2)); // no false positive on high bytes
    }

    #[test]
    fn lines_join_while_a_bracket_is_open() {
        let text = "HloModule m\n\nENTRY %e (a: f32[]) -> f32[] {\n  %x = f32[2]{0} constant({\n 1,\n 2 })\r\n}\n";
        assert_eq!(
            statements(text, 1000).unwrap(),
            ["HloModule m", "ENTRY %e (a: f32[]) -> f32[] {", "  %x = f32[2]{0} constant({\n 1,\n 2 })", "}"]
        );
        // Brackets in strings and comments do not count.
        let text = "x = f32[] p(), a=\"{(\\\"\", b=/* { */ 1 // {\ny";
        assert_eq!(statements(text, 1000).unwrap(), ["x = f32[] p(), a=\"{(\\\"\", b=/* { */ 1 // {", "y"]);
    }

    #[test]
    fn limits_and_errors_have_positions() {
        let Err(Error::HloText(error)) = statements("a\nbbbbbbbbbb\n", 4) else { panic!("limit") };
        assert_eq!((error.line, error.problem.clone()), (2, HloTextProblem::StatementTooLong { max: 4 }));
        let mut source = Source::new(&b"a\n  b\xff\n"[..], 100);
        assert!(source.next().is_ok());
        let Err(Error::HloText(error)) = source.next() else { panic!("utf-8") };
        assert_eq!((error.line, error.column, error.problem.clone()), (2, 4, HloTextProblem::NotUtf8));
        let Err(Error::HloText(error)) = statements("x = f32[] c({1,\n", 100) else { panic!("end") };
        assert_eq!(error.problem, HloTextProblem::UnexpectedEnd { inside: "an open bracket" });
    }
}
