//! MLIR text's bracket structure: how far one value runs, skipped by its brackets (`()`, `[]`,
//! `{}`, `<>`) and quoted strings, so attributes the reader does not interpret never break it.
//!
//! A `>` right after `-` is the arrow of a function type or an affine map (`(d0) -> (d0)`), not a
//! closing bracket. Strings are `"…"` with `\` escapes and end on their line (MLIR escapes
//! newlines).

use crate::error::HloTextProblem;
use crate::hlo::text::cursor::{Failed, byte_class, is_in, skip_string as string_end};

/// The bytes [`value_end`] stops at.
const SPECIAL: [bool; 256] = byte_class(b"\"()[]{}<>,:");

/// The most brackets a value may nest (deeper text is refused, not recursed into).
pub(super) const MAX_NESTING: usize = 256;

/// The bracket that closes `open`.
const fn closing(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        b'<' => b'>',
        _ => b'}',
    }
}

/// A closing bracket as an error names it.
fn quoted(close: u8) -> &'static str {
    match close {
        b')' => "`)`",
        b']' => "`]`",
        b'>' => "`>`",
        _ => "`}`",
    }
}

/// What the text holds at `at`, quoted for an error.
fn found(text: &str, at: usize) -> String {
    text.get(at..)
        .and_then(|rest| rest.chars().next())
        .map_or_else(|| "end of statement".to_owned(), |c| format!("`{c}`"))
}

/// Where a value starting at `from` ends: the first byte of `stops` outside brackets and
/// strings, or a closing bracket no bracket of the value opened, or the end of the text.
/// Brackets inside must pair up and strings end.
///
/// # Errors
///
/// A closing bracket that does not match the open one, a string that does not end, brackets
/// left open at the end, or more than [`MAX_NESTING`] open brackets.
pub(super) fn value_end(text: &str, from: usize, stops: &[u8]) -> Result<usize, Failed> {
    let bytes = text.as_bytes();
    let mut open = [0u8; MAX_NESTING];
    let mut depth = 0usize;
    let mut i = from;
    loop {
        let Some(at) = bytes.get(i..).and_then(|rest| rest.iter().position(|&b| is_in(&SPECIAL, b))) else {
            i = bytes.len();
            break;
        };
        i = i.saturating_add(at);
        let b = bytes.get(i).copied().unwrap_or(b',');
        if depth == 0 && stops.contains(&b) {
            return Ok(i);
        }
        match b {
            b'"' => {
                let end = string_end(bytes, i).ok_or_else(|| {
                    (i, HloTextProblem::Expected { expected: "a closing `\"`", found: "end of line".to_owned() })
                })?;
                i = end;
                continue;
            }
            b'(' | b'[' | b'{' | b'<' => {
                let slot = open.get_mut(depth).ok_or_else(|| {
                    (i, HloTextProblem::Expected { expected: "at most 256 nested brackets", found: found(text, i) })
                })?;
                *slot = b;
                depth = depth.saturating_add(1);
            }
            b'>' if i > 0 && bytes.get(i.saturating_sub(1)) == Some(&b'-') => {}
            b')' | b']' | b'}' | b'>' => {
                if depth == 0 {
                    return Ok(i);
                }
                depth = depth.saturating_sub(1);
                let want = closing(open.get(depth).copied().unwrap_or(b'('));
                if b != want {
                    return Err((i, HloTextProblem::Expected { expected: quoted(want), found: found(text, i) }));
                }
            }
            _ => {}
        }
        i = i.saturating_add(1);
    }
    if depth > 0 {
        let want = closing(open.get(depth.saturating_sub(1)).copied().unwrap_or(b'('));
        return Err((i, HloTextProblem::Expected { expected: quoted(want), found: found(text, i) }));
    }
    Ok(i)
}

/// The offset of the last `:` of `text[from..]` outside brackets and strings (the type
/// separator of an operation), if any.
///
/// # Errors
///
/// As [`value_end`].
pub(super) fn last_colon(text: &str, from: usize) -> Result<Option<usize>, Failed> {
    let mut i = from;
    let mut last = None;
    loop {
        let end = value_end(text, i, b":")?;
        match text.as_bytes().get(end) {
            Some(b':') => {
                last = Some(end);
                i = end.saturating_add(1);
            }
            // A closing bracket nothing opened (`})` closing a region): step over it.
            Some(_) => i = end.saturating_add(1),
            None => return Ok(last),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An independent reference for [`value_end`]: a stack of open brackets, one byte at a time.
    /// `Some(end)` where the scan would stop, `None` where it would fail.
    fn reference(text: &str, stops: &[u8]) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut stack: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if stack.is_empty() && stops.contains(&b) {
                return Some(i);
            }
            match b {
                b'"' => {
                    i += 1;
                    loop {
                        match bytes.get(i) {
                            None | Some(b'\n') => return None,
                            Some(b'\\') => i += 2,
                            Some(b'"') => break,
                            Some(_) => i += 1,
                        }
                    }
                }
                b'(' | b'[' | b'{' | b'<' => {
                    if stack.len() == MAX_NESTING {
                        return None;
                    }
                    stack.push(b);
                }
                b'>' if i > 0 && bytes[i - 1] == b'-' => {}
                b')' | b']' | b'}' | b'>' => match stack.pop() {
                    None => return Some(i),
                    Some(open) if closing(open) == b => {}
                    Some(_) => return None,
                },
                _ => {}
            }
            i += 1;
        }
        stack.is_empty().then_some(bytes.len())
    }

    proptest! {
        /// The skipper never panics, agrees with the reference on where a value ends and on
        /// which texts it refuses, and what it skips is balanced.
        #[test]
        fn the_skipper_agrees_with_a_bracket_stack(text in "[()\\[\\]{}<>\"\\\\,:a\\- \n]{0,40}") {
            let got = value_end(&text, 0, b",").ok();
            prop_assert_eq!(got, reference(&text, b","));
            if let Some(end) = got {
                prop_assert_eq!(reference(&text[..end], b""), Some(end));
            }
            let _ = last_colon(&text, 0);
        }
    }

    use crate::hlo::text::source::TypeSeparator::{self, Absent, At, Unsure};

    /// The type separator the statement cut finds (`Statement::separator`) for each statement
    /// of `text`, beside what [`last_colon`] finds from its first byte.
    fn separators(text: &str) -> Vec<(TypeSeparator, Result<Option<usize>, Failed>)> {
        use crate::hlo::text::source::{Grammar, Source};
        let mut source = Source::with_grammar(text.as_bytes(), 1 << 16, Grammar::Mlir);
        let mut out = Vec::new();
        while let Ok(Some(statement)) = source.next() {
            out.push((statement.separator(), last_colon(statement.text(), 0)));
        }
        out
    }

    proptest! {
        /// Where the statement cut is sure of the type separator, the reader's own scan finds the
        /// same one and does not fail.
        #[test]
        fn the_cut_finds_the_separator_last_colon_finds(text in "[()\\[\\]{}<>\"\\\\,:a\\-/* \n]{0,60}") {
            for (found, scanned) in separators(&text) {
                match found {
                    Unsure => {}
                    Absent => prop_assert_eq!(scanned, Ok(None)),
                    At(at) => prop_assert_eq!(scanned, Ok(Some(at))),
                }
            }
        }
    }

    #[test]
    fn the_cut_is_sure_of_plain_statements_only() {
        let text = "%0 = stablehlo.add %a, %b : tensor<f32> loc(\"a\":1:2)\n\
                    %1 = f {a = affine_map<(d0) -> (d0)>} : (tensor<f32>) -> tensor<2xf32>\n\
                    }) : tensor<i32>\n\
                    stablehlo.return %x\n\
                    %2 = g (] : tensor<f32>\n\
                    %3 = g : tensor<f32> // c\n\
                    %4 = g \"a : tensor<f32>\n";
        let found: Vec<_> = separators(text).into_iter().map(|(found, _)| found).collect();
        assert_eq!(found, [At(26), At(38), At(3), Absent, Unsure, Unsure, Unsure]);
        let deep = format!("{}x{} : t", "(".repeat(70), ")".repeat(70));
        assert_eq!(separators(&deep)[0], (Unsure, Ok(Some(142))));
    }

    #[test]
    fn values_skip_nested_brackets_and_strings() {
        let text = r#"#sdy.sharding<@mesh, [{"x", "y"}, {}]>, b = "a,\">", c"#;
        let end = value_end(text, 0, b",").unwrap();
        assert_eq!(&text[..end], r#"#sdy.sharding<@mesh, [{"x", "y"}, {}]>"#);
        let next = value_end(text, end + 1, b",").unwrap();
        assert_eq!(&text[end + 1..next], r#" b = "a,\">""#);
        assert_eq!(value_end("affine_map<(d0) -> (d0)>, x", 0, b","), Ok(24));
        assert_eq!(value_end("a) b", 0, b","), Ok(1));
    }

    #[test]
    fn mismatched_brackets_and_open_strings_are_errors() {
        let (at, problem) = value_end("<(]>", 0, b",").unwrap_err();
        assert_eq!(at, 2);
        assert_eq!(problem, HloTextProblem::Expected { expected: "`)`", found: "`]`".into() });
        assert!(value_end("\"open", 0, b",").is_err());
        assert!(value_end("{a", 0, b",").is_err());
        assert!(value_end(&"<".repeat(MAX_NESTING + 1), 0, b",").is_err());
    }

    #[test]
    fn the_type_separator_is_the_last_colon_outside_brackets() {
        let text = r#"%0 = stablehlo.custom_call @f(%a) {api = 2 : i32, s = "a:b"} : (tensor<f32>) -> tensor<f32>"#;
        let at = last_colon(text, 0).unwrap().unwrap();
        assert_eq!(&text[at..], ": (tensor<f32>) -> tensor<f32>");
        let text = "}) : (tensor<i32>) -> tensor<2xf32> loc(\"a\":1:2)";
        assert_eq!(&text[last_colon(text, 0).unwrap().unwrap()..][..6], ": (ten");
        assert_eq!(last_colon("stablehlo.return %x", 0), Ok(None));
    }
}
