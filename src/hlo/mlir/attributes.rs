//! Attribute dictionaries (`{sdy.sharding = #sdy.sharding<…>, jax.result_info = "result"}`):
//! the entries the reader interprets, each value skipped by its bracket structure otherwise.

use std::ops::Range;

use crate::error::HloTextProblem;
use crate::hlo::text::cursor::{Cursor, Failed};

use super::scan::value_end;

/// The sharding an argument or result carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardingAttribute {
    /// `sdy.sharding = #sdy.sharding<…>`, the value as written (convert it with
    /// [`crate::sharding::shardy::to_hlo_sharding`] over the module's meshes).
    Shardy(String),
    /// `mhlo.sharding = "{…}"`, the string unescaped (XLA's `HloSharding` text).
    Hlo(String),
}

/// The attributes of one function argument or result that the reader interprets
/// (`docs/stablehlo.md` §3); every other entry is skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueAttributes {
    /// `sdy.sharding` or `mhlo.sharding` (the later one if both).
    pub sharding: Option<ShardingAttribute>,
    /// `mhlo.layout_mode`: `default`, `auto`, or a layout (`{0,1}`).
    pub layout_mode: Option<String>,
    /// `mhlo.memory_kind`: `device`, `pinned_host`, `unpinned_host`, ….
    pub memory_kind: Option<String>,
    /// `jax.result_info`: the result's path in the Python value (`result[0]`).
    pub result_info: Option<String>,
    /// `tf.aliasing_output`: the result this parameter's buffer is donated to.
    pub aliasing_output: Option<i64>,
    /// `jax.buffer_donor = true`: the buffer is donated, to no result in particular.
    pub buffer_donor: bool,
}

/// An MLIR string's text (`"…"` at `range`, quotes included) with its escapes undone: `\\`,
/// `\"`, `\n`, `\t` and two hex digits (`\0A`).
pub(super) fn unescape(text: &str, range: Range<usize>) -> Result<String, Failed> {
    let quoted = text.get(range.start.saturating_add(1)..range.end.saturating_sub(1)).unwrap_or("");
    if !quoted.contains('\\') {
        return Ok(quoted.to_owned());
    }
    let bytes = quoted.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0usize;
    let bad = |at: usize| {
        (
            range.start.saturating_add(1).saturating_add(at),
            HloTextProblem::Expected {
                expected: "an MLIR string escape (`\\\\`, `\\\"`, `\\n`, `\\t`, `\\XX`)",
                found: "another".to_owned(),
            },
        )
    };
    while let Some(&b) = bytes.get(i) {
        if b != b'\\' {
            out.push(b);
            i = i.saturating_add(1);
            continue;
        }
        let next = bytes.get(i.saturating_add(1)).copied().ok_or_else(|| bad(i))?;
        let (byte, used) = match next {
            b'\\' | b'"' => (next, 2),
            b'n' => (b'\n', 2),
            b't' => (b'\t', 2),
            _ => {
                let hex = quoted.get(i.saturating_add(1)..i.saturating_add(3)).ok_or_else(|| bad(i))?;
                (u8::from_str_radix(hex, 16).map_err(|_| bad(i))?, 3)
            }
        };
        out.push(byte);
        i = i.saturating_add(used);
    }
    String::from_utf8(out).map_err(|_| bad(0))
}

/// The dictionary `{…}` at `cursor` (which is at its `{`), read into `out`.
pub(super) fn dictionary(cursor: &mut Cursor<'_>, out: &mut ValueAttributes) -> Result<(), Failed> {
    let text = cursor.text;
    cursor.expect(b'{', "`{` to start an attribute dictionary")?;
    loop {
        if cursor.eat(b'}') {
            return Ok(());
        }
        cursor.skip_trivia();
        let key_start = cursor.pos;
        let key = if text.as_bytes().get(key_start) == Some(&b'"') {
            let range = cursor.string()?;
            text.get(range).unwrap_or("")
        } else {
            cursor.word().ok_or_else(|| cursor.expected("an attribute name"))?
        };
        let value = if cursor.eat(b'=') {
            cursor.skip_trivia();
            let start = cursor.pos;
            let end = value_end(text, start, b",}")?;
            cursor.pos = end;
            Some(start..text.get(start..end).map_or(end, |v| start.saturating_add(v.trim_end().len())))
        } else {
            None
        };
        if let Some(range) = value {
            interpret(text, key, range, out)?;
        }
        if !cursor.eat(b',') {
            cursor.expect(b'}', "`,` or `}` in an attribute dictionary")?;
            return Ok(());
        }
    }
}

/// Keeps the entry `key = text[range]` if the reader interprets it.
fn interpret(text: &str, key: &str, range: Range<usize>, out: &mut ValueAttributes) -> Result<(), Failed> {
    let value = text.get(range.clone()).unwrap_or("");
    let string = |range: Range<usize>| -> Result<String, Failed> {
        if value.starts_with('"') && value.ends_with('"') && value.len() >= 2 {
            unescape(text, range)
        } else {
            Err((range.start, HloTextProblem::Expected { expected: "a string", found: quote(value) }))
        }
    };
    match key {
        "sdy.sharding" => out.sharding = Some(ShardingAttribute::Shardy(value.to_owned())),
        "mhlo.sharding" => out.sharding = Some(ShardingAttribute::Hlo(string(range)?)),
        "mhlo.layout_mode" => out.layout_mode = Some(string(range)?),
        "mhlo.memory_kind" => out.memory_kind = Some(string(range)?),
        "jax.result_info" => out.result_info = Some(string(range)?),
        "tf.aliasing_output" => {
            // `0 : i32`.
            let number = value.split(':').next().unwrap_or("").trim();
            out.aliasing_output = Some(number.parse::<i64>().map_err(|_| {
                (range.start, HloTextProblem::Expected { expected: "an integer (`0 : i32`)", found: quote(value) })
            })?);
        }
        "jax.buffer_donor" => out.buffer_donor = value == "true",
        _ => {}
    }
    Ok(())
}

/// A value quoted for an error, cut at 48 characters.
fn quote(value: &str) -> String {
    let cut: String = value.chars().take(48).collect();
    if cut.len() < value.len() { format!("`{cut}…`") } else { format!("`{cut}`") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ValueAttributes, Failed> {
        let mut out = ValueAttributes::default();
        dictionary(&mut Cursor::new(text), &mut out)?;
        Ok(out)
    }

    #[test]
    fn known_entries_are_read_and_others_skipped() {
        let attributes = read(
            r#"{jax.buffer_donor = true, mhlo.layout_mode = "{0,1}", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>, x.y = {a = [1, 2], b = affine_map<(d0) -> (d0)>}, "quoted key" = 1, unit, tf.aliasing_output = 2 : i32, jax.result_info = "result[\"a\"]"}"#,
        )
        .unwrap();
        assert!(attributes.buffer_donor);
        assert_eq!(attributes.layout_mode.as_deref(), Some("{0,1}"));
        assert_eq!(attributes.sharding, Some(ShardingAttribute::Shardy(r#"#sdy.sharding<@mesh, [{"x"}, {}]>"#.into())));
        assert_eq!(attributes.aliasing_output, Some(2));
        assert_eq!(attributes.result_info.as_deref(), Some(r#"result["a"]"#));
        let attributes = read(r#"{mhlo.sharding = "{devices=[2,1]0,1}", mhlo.memory_kind = "pinned_host"}"#).unwrap();
        assert_eq!(attributes.sharding, Some(ShardingAttribute::Hlo("{devices=[2,1]0,1}".into())));
        assert_eq!(attributes.memory_kind.as_deref(), Some("pinned_host"));
        assert_eq!(read("{}").unwrap(), ValueAttributes::default());
    }

    #[test]
    fn escapes_are_undone_and_bad_ones_refused() {
        let text = r#""a\0Ab\\c\"d""#;
        assert_eq!(unescape(text, 0..text.len()).unwrap(), "a\nb\\c\"d");
        let text = r#""a\zz""#;
        assert!(unescape(text, 0..text.len()).is_err());
        assert!(read("{mhlo.sharding = 3}").is_err());
        assert!(read("{tf.aliasing_output = x}").is_err());
        assert!(read("{a = (]}").is_err());
        assert!(read("{a = 1").is_err());
    }
}
