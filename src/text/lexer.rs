//! The tokenizer: the part of XLA's `hlo_lexer.cc` that shape and layout text uses.
//!
//! Tokens are produced on demand, one at a time, so a syntax error stops the work at the failing
//! token and the whole input is never held as a token list. Whitespace (space, `\t`, `\n`, `\r`)
//! and comments (`/* … */`, `// …` to the end of the line) separate tokens and are skipped.

use std::fmt;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind<'a> {
    /// `-?[0-9]+`, fitting in `i64` (leading zeros allowed, no `+`).
    Int(i64),
    /// `[a-zA-Z_][a-zA-Z0-9_.-]*`: type names, attribute letters, the buffer marker `b`.
    Ident(&'a str),
    /// An identifier immediately followed by `:` or `=`: an instruction or attribute name in HLO
    /// text, which no shape contains.
    Name(&'a str),
    LSquare,
    RSquare,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Comma,
    Colon,
    Star,
    Hash,
    Plus,
    Tilde,
    Question,
    /// `<=` (one token; `< =` is not one).
    Leq,
    Eof,
    /// Text that is no token of the shape grammar; the reason says what it looked like.
    Invalid(&'static str),
}

/// A token and the byte range of its text in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    pub(crate) kind: Kind<'a>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The lexer state is a position in the input: copying it is a free lookahead.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lexer<'a> {
    input: &'a str,
    pos: usize,
}

fn is_identifier_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

// Invariant: `pos` never exceeds `input.len()` and always sits on a character boundary. It only
// moves past ASCII bytes just read, to the end of a `find`, or over one whole `char`, so the
// additions cannot overflow (a `str` is at most `isize::MAX` bytes) and every slice is in bounds.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
impl<'a> Lexer<'a> {
    pub(crate) fn new(input: &'a str) -> Self {
        Self { input, pos: 0 }
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.input.as_bytes().get(at).copied()
    }

    /// Skips whitespace and comments. An unterminated `/*` comment or a lone `/` is returned as
    /// an invalid token.
    fn skip_trivia(&mut self) -> Option<Token<'a>> {
        loop {
            match self.byte(self.pos) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') => match self.byte(self.pos + 1) {
                    Some(b'*') => {
                        let Some(offset) = self.input[self.pos + 2..].find("*/") else {
                            let start = self.pos;
                            self.pos = self.input.len();
                            return Some(Token {
                                kind: Kind::Invalid("an unterminated comment"),
                                start,
                                end: start + 2,
                            });
                        };
                        self.pos += 2 + offset + 2;
                    }
                    Some(b'/') => {
                        let rest = &self.input.as_bytes()[self.pos..];
                        self.pos += rest.iter().position(|&b| b == b'\n' || b == b'\r').unwrap_or(rest.len());
                    }
                    _ => {
                        let start = self.pos;
                        self.pos += 1;
                        return Some(Token { kind: Kind::Invalid("a lone `/`"), start, end: start + 1 });
                    }
                },
                _ => return None,
            }
        }
    }

    /// The next token; [`Kind::Eof`] forever at the end.
    pub(crate) fn next_token(&mut self) -> Token<'a> {
        if let Some(invalid) = self.skip_trivia() {
            return invalid;
        }
        let start = self.pos;
        let Some(first) = self.byte(start) else {
            return Token { kind: Kind::Eof, start, end: start };
        };
        let punctuation = match first {
            b'[' => Some(Kind::LSquare),
            b']' => Some(Kind::RSquare),
            b'{' => Some(Kind::LBrace),
            b'}' => Some(Kind::RBrace),
            b'(' => Some(Kind::LParen),
            b')' => Some(Kind::RParen),
            b',' => Some(Kind::Comma),
            b':' => Some(Kind::Colon),
            b'*' => Some(Kind::Star),
            b'#' => Some(Kind::Hash),
            b'+' => Some(Kind::Plus),
            b'~' => Some(Kind::Tilde),
            b'?' => Some(Kind::Question),
            _ => None,
        };
        let kind = if let Some(kind) = punctuation {
            self.pos += 1;
            kind
        } else if first == b'<' && self.byte(start + 1) == Some(b'=') {
            self.pos += 2;
            Kind::Leq
        } else if first.is_ascii_digit() || first == b'-' {
            self.number()
        } else if first.is_ascii_alphabetic() || first == b'_' {
            self.identifier()
        } else {
            // Step over one whole character so that token ends stay on character boundaries.
            self.pos += self.input[start..].chars().next().map_or(1, char::len_utf8);
            Kind::Invalid("an unexpected character")
        };
        Token { kind, start, end: self.pos }
    }

    /// A string between double or single quotes at the next token (the attribute values of
    /// sharding metadata, `op_name="jit(f)/add"`, and the axis names of named shardings,
    /// `'x'`; XLA's lexer takes both quotes), with the escapes `\\ \" \' \n \t \r` resolved.
    /// `Err` holds the position of the problem: no string there, an unknown escape, or no
    /// closing quote.
    pub(crate) fn string_literal(&mut self) -> Result<(String, usize), usize> {
        if self.skip_trivia().is_some() {
            return Err(self.pos);
        }
        let start = self.pos;
        let Some(quote @ (b'"' | b'\'')) = self.byte(start) else {
            return Err(start);
        };
        let quote = char::from(quote);
        let mut out = String::new();
        let mut chars = self.input[start + 1..].char_indices();
        while let Some((offset, c)) = chars.next() {
            match c {
                c if c == quote => {
                    self.pos = start + 1 + offset + 1;
                    return Ok((out, start));
                }
                '\\' => match chars.next() {
                    Some((_, '\\')) => out.push('\\'),
                    Some((_, '"')) => out.push('"'),
                    Some((_, '\'')) => out.push('\''),
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, 'r')) => out.push('\r'),
                    _ => return Err(start + 1 + offset),
                },
                c => out.push(c),
            }
        }
        Err(start)
    }

    /// Consumes `byte` if it is the next character after whitespace and comments (the `=` of
    /// `'x'=2`, which is no token of the shape grammar).
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        if self.skip_trivia().is_none() && self.byte(self.pos) == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// `-?[0-9]+`. Number-like text the shape grammar has no use for (`1.5`, `1e3`, `2x3`,
    /// `1_2`, `->`) becomes one invalid token.
    fn number(&mut self) -> Kind<'a> {
        let start = self.pos;
        let bytes = self.input.as_bytes();
        let mut end = start + usize::from(bytes[start] == b'-');
        let digits_start = end;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        if end == digits_start {
            self.pos = end.max(start + 1);
            return Kind::Invalid("a `-` without digits");
        }
        if bytes.get(end).is_some_and(|&b| is_identifier_char(b)) {
            while bytes.get(end).is_some_and(|&b| is_identifier_char(b)) {
                end += 1;
            }
            self.pos = end;
            return Kind::Invalid("a number that is not an integer");
        }
        self.pos = end;
        match self.input[start..end].parse::<i64>() {
            Ok(value) => Kind::Int(value),
            Err(_) => Kind::Invalid("an integer that does not fit in 64 bits"),
        }
    }

    fn identifier(&mut self) -> Kind<'a> {
        let start = self.pos;
        let bytes = self.input.as_bytes();
        let mut end = start + 1;
        while bytes.get(end).is_some_and(|&b| is_identifier_char(b)) {
            end += 1;
        }
        let text = &self.input[start..end];
        if matches!(bytes.get(end), Some(b':' | b'=')) {
            self.pos = end + 1;
            return Kind::Name(text);
        }
        self.pos = end;
        Kind::Ident(text)
    }
}

/// How a token is quoted in an error message: `` `f32` ``, "end of input".
pub(crate) struct Found<'a, 'b> {
    pub(crate) token: &'b Token<'a>,
    pub(crate) input: &'a str,
}

/// The longest token quoted whole in an error; a longer one (a 10 MB identifier or number) is
/// cut and ends in `…`, so an error message never grows with the input.
const FOUND_LIMIT: usize = 48;

impl fmt::Display for Found<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.input.get(self.token.start..self.token.end).unwrap_or("");
        let cut = (0..=whole.len().min(FOUND_LIMIT)).rev().find(|&i| whole.is_char_boundary(i)).unwrap_or(0);
        let (text, ellipsis) = match whole.get(..cut) {
            Some(head) if cut < whole.len() => (head, "…"),
            _ => (whole, ""),
        };
        let text = format_args!("{text}{ellipsis}");
        match self.token.kind {
            Kind::Eof => f.write_str("end of input"),
            Kind::Invalid(what) => write!(f, "{what} `{text}`"),
            _ => write!(f, "`{text}`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(input: &str) -> Vec<Kind<'_>> {
        let mut lexer = Lexer::new(input);
        let mut out = Vec::new();
        loop {
            let token = lexer.next_token();
            out.push(token.kind);
            if matches!(token.kind, Kind::Eof | Kind::Invalid(_)) {
                return out;
            }
        }
    }

    #[test]
    fn tokens_of_a_shape() {
        // text-format.md §1.
        assert_eq!(
            kinds("f32[<=2,?]{1,0:T(2,*)}"),
            [
                Kind::Ident("f32"),
                Kind::LSquare,
                Kind::Leq,
                Kind::Int(2),
                Kind::Comma,
                Kind::Question,
                Kind::RSquare,
                Kind::LBrace,
                Kind::Int(1),
                Kind::Comma,
                Kind::Int(0),
                Kind::Colon,
                Kind::Ident("T"),
                Kind::LParen,
                Kind::Int(2),
                Kind::Comma,
                Kind::Star,
                Kind::RParen,
                Kind::RBrace,
                Kind::Eof,
            ]
        );
        assert_eq!(kinds(" /* c */ 007 // x\n-9223372036854775808"), [Kind::Int(7), Kind::Int(i64::MIN), Kind::Eof]);
        assert_eq!(kinds("SC#+~"), [Kind::Ident("SC"), Kind::Hash, Kind::Plus, Kind::Tilde, Kind::Eof]);
        assert_eq!(kinds("x: y="), [Kind::Name("x"), Kind::Name("y"), Kind::Eof]);
    }

    #[test]
    fn invalid_tokens() {
        for (input, what) in [
            ("1.5", "a number that is not an integer"),
            ("1e3", "a number that is not an integer"),
            ("2x3", "a number that is not an integer"),
            ("1_2", "a number that is not an integer"),
            ("9223372036854775808", "an integer that does not fit in 64 bits"),
            ("+1", "a `+`"),
            ("-", "a `-` without digits"),
            ("/* open", "an unterminated comment"),
            ("/", "a lone `/`"),
            ("< =", "an unexpected character"),
            ("é", "an unexpected character"),
        ] {
            let found = kinds(input);
            let last = *found.last().unwrap();
            if what == "a `+`" {
                assert_eq!(found[0], Kind::Plus, "{input}");
            } else {
                assert_eq!(last, Kind::Invalid(what), "{input}");
            }
        }
    }
}
