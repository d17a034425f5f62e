//! MLIR types as XLA shapes: `tensor<8x?xbf16>` is `bf16[8,?]`, `tensor<f32>` is `f32[]`,
//! `!stablehlo.token` is `token[]`, `tuple<…>` a tuple (`docs/stablehlo.md` §2). The type is
//! rewritten as XLA's shape text and read by the crate's shape parser, so layouts are filled in
//! exactly as for HLO text.

use std::fmt::Write as _;

use crate::error::HloTextProblem;
use crate::hlo::text::cursor::Failed;

use super::scan::value_end;

/// MLIR element types and XLA's names for them (`docs/stablehlo.md` §2).
const ELEMENT_TYPES: [(&str, &str); 35] = [
    ("i1", "pred"),
    ("i2", "s2"),
    ("i4", "s4"),
    ("i8", "s8"),
    ("i16", "s16"),
    ("i32", "s32"),
    ("i64", "s64"),
    ("si2", "s2"),
    ("si4", "s4"),
    ("si8", "s8"),
    ("si16", "s16"),
    ("si32", "s32"),
    ("si64", "s64"),
    ("ui2", "u2"),
    ("ui4", "u4"),
    ("ui8", "u8"),
    ("ui16", "u16"),
    ("ui32", "u32"),
    ("ui64", "u64"),
    ("f16", "f16"),
    ("bf16", "bf16"),
    ("f32", "f32"),
    ("f64", "f64"),
    ("f8E5M2", "f8e5m2"),
    ("f8E4M3", "f8e4m3"),
    ("f8E4M3FN", "f8e4m3fn"),
    ("f8E4M3FNUZ", "f8e4m3fnuz"),
    ("f8E4M3B11FNUZ", "f8e4m3b11fnuz"),
    ("f8E5M2FNUZ", "f8e5m2fnuz"),
    ("f8E3M4", "f8e3m4"),
    ("f8E8M0FNU", "f8e8m0fnu"),
    ("f6E2M3FN", "f6e2m3fn"),
    ("f6E3M2FN", "f6e3m2fn"),
    ("f4E2M1FN", "f4e2m1fn"),
    ("complex<f32>", "c64"),
];

/// XLA's name of an MLIR element type (`i4` → `s4`, `f8E4M3FN` → `f8e4m3fn`,
/// `complex<f64>` → `c128`), if XLA has it.
///
/// ```
/// use xla_shape::hlo::mlir::element_type;
/// assert_eq!(element_type("ui8"), Some("u8"));
/// assert_eq!(element_type("complex<f64>"), Some("c128"));
/// assert_eq!(element_type("index"), None);
/// ```
pub fn element_type(mlir: &str) -> Option<&'static str> {
    if mlir == "complex<f64>" {
        return Some("c128");
    }
    ELEMENT_TYPES.iter().find(|(name, _)| *name == mlir).map(|(_, xla)| *xla)
}

/// The layout an argument's attributes state (`mhlo.layout_mode`, `mhlo.memory_kind`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Stated<'a> {
    /// `mhlo.layout_mode` when it is a layout (`{0,1}`), not `default` or `auto`.
    pub(super) layout: Option<&'a str>,
    /// The memory space of `mhlo.memory_kind` (`pinned_host` is 5), when not 0.
    pub(super) memory_space: Option<u32>,
}

/// Writes the XLA shape text of the MLIR type `text` (at offset `at` of the statement) to
/// `out`; `Ok(false)` for a type XLA has no shape for (`index`, `i32` outside a tensor, …).
///
/// # Errors
///
/// A `tensor<…>` whose dimensions or bounds are not MLIR's, with its offset.
pub(super) fn xla_text(text: &str, at: usize, stated: Stated<'_>, out: &mut String) -> Result<bool, Failed> {
    if text == "!stablehlo.token" || text == "!mhlo.token" {
        out.push_str("token[]");
        return Ok(true);
    }
    if let Some(inner) = text.strip_prefix("tuple<").and_then(|t| t.strip_suffix('>')) {
        return tuple(inner, at.saturating_add(6), out);
    }
    let Some(body) = text.strip_prefix("tensor<").and_then(|t| t.strip_suffix('>')) else {
        return Ok(false);
    };
    tensor(body, at.saturating_add(7), stated, out)?;
    Ok(true)
}

/// An error at `offset` of `text` (at `at` of the statement).
fn bad(text: &str, at: usize, offset: usize, expected: &'static str) -> Failed {
    let found =
        text.get(offset..).and_then(|r| r.chars().next()).map_or("end of type".to_owned(), |c| format!("`{c}`"));
    (at.saturating_add(offset), HloTextProblem::Expected { expected, found })
}

/// The elements of `tuple<…>` (`inner`, at `at`) as `(a, b)`.
fn tuple(inner: &str, at: usize, out: &mut String) -> Result<bool, Failed> {
    out.push('(');
    let mut pos = 0usize;
    while pos < inner.len() {
        let end = value_end(inner, pos, b",").map_err(|(o, p)| (at.saturating_add(o), p))?;
        let element = inner.get(pos..end).unwrap_or("");
        let lead = element.len().saturating_sub(element.trim_start().len());
        if pos > 0 {
            out.push_str(", ");
        }
        if !xla_text(element.trim(), at.saturating_add(pos).saturating_add(lead), Stated::default(), out)? {
            return Ok(false);
        }
        pos = end.saturating_add(1);
    }
    out.push(')');
    Ok(true)
}

/// The dimensions of a tensor's `body` (`8x?x` before the element type): each size (`None` for
/// `?`), and where the element type starts.
fn dimensions(body: &str, at: usize) -> Result<(Vec<Option<u64>>, usize), Failed> {
    let bytes = body.as_bytes();
    let mut dims = Vec::new();
    let mut pos = 0usize;
    loop {
        let start = pos;
        if bytes.get(pos) == Some(&b'?') {
            pos = pos.saturating_add(1);
        } else {
            while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
                pos = pos.saturating_add(1);
            }
        }
        if pos == start || bytes.get(pos) != Some(&b'x') {
            return Ok((dims, start));
        }
        let digits = body.get(start..pos).unwrap_or("");
        if digits == "?" {
            dims.push(None);
        } else {
            let size = digits.parse::<u64>().ok().filter(|&s| i64::try_from(s).is_ok());
            dims.push(Some(size.ok_or_else(|| bad(body, at, start, "a dimension size below 2^63"))?));
        }
        pos = pos.saturating_add(1);
    }
}

/// The bounds of an encoding `#stablehlo.bounds<8, ?>` (one per dimension); none for another
/// encoding.
fn bounds(encoding: &str, rank: usize, at: usize) -> Result<Vec<Option<&str>>, Failed> {
    let mut bounds = Vec::new();
    let Some(list) = encoding.trim().strip_prefix("#stablehlo.bounds<").and_then(|e| e.strip_suffix('>')) else {
        return Ok(bounds);
    };
    for bound in list.split(',').map(str::trim) {
        if bound == "?" {
            bounds.push(None);
        } else if bound.parse::<u64>().is_ok() {
            bounds.push(Some(bound));
        } else {
            return Err(bad(encoding, at, 0, "`#stablehlo.bounds<…>` of sizes and `?`"));
        }
    }
    if bounds.len() != rank {
        return Err(bad(encoding, at, 0, "one bound per dimension"));
    }
    Ok(bounds)
}

/// `tensor<body>` (`body` at `at`) as XLA's shape text.
fn tensor(body: &str, at: usize, stated: Stated<'_>, out: &mut String) -> Result<(), Failed> {
    let (dims, pos) = dimensions(body, at)?;
    let element_end = value_end(body, pos, b",").map_err(|(o, p)| (at.saturating_add(o), p))?;
    let element = body.get(pos..element_end).unwrap_or("").trim();
    let Some(xla) = element_type(element) else {
        return Err(bad(body, at, pos, "an element type XLA has (i1, i4, ui8, bf16, f8E4M3FN, complex<f32>, …)"));
    };
    let encoding_at = element_end.saturating_add(1);
    let bounds = bounds(body.get(encoding_at..).unwrap_or(""), dims.len(), at.saturating_add(encoding_at))?;
    out.push_str(xla);
    out.push('[');
    for (i, size) in dims.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match (size, bounds.get(i).copied().flatten()) {
            (Some(size), _) => {
                let _ = write!(out, "{size}");
            }
            (None, Some(bound)) => {
                out.push_str("<=");
                out.push_str(bound);
            }
            (None, None) => out.push('?'),
        }
    }
    out.push(']');
    layout(dims.len(), stated, out);
    Ok(())
}

/// The layout the attributes state, if any: `mhlo.layout_mode`'s, with `S(n)` for the memory
/// space (on the default layout when no layout is stated).
fn layout(rank: usize, stated: Stated<'_>, out: &mut String) {
    match (stated.layout, stated.memory_space) {
        (None, None) => {}
        (Some(layout), space) => {
            let inner = layout.trim().strip_prefix('{').and_then(|l| l.strip_suffix('}')).unwrap_or(layout);
            out.push('{');
            out.push_str(inner);
            if let Some(space) = space {
                out.push_str(if inner.contains(':') { "S(" } else { ":S(" });
                let _ = write!(out, "{space})");
            }
            out.push('}');
        }
        (None, Some(space)) => {
            out.push('{');
            for i in (0..rank).rev() {
                let _ = write!(out, "{i}");
                if i > 0 {
                    out.push(',');
                }
            }
            let _ = write!(out, ":S({space})}}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xla(text: &str, stated: Stated<'_>) -> Result<Option<String>, Failed> {
        let mut out = String::new();
        Ok(xla_text(text, 0, stated, &mut out)?.then_some(out))
    }

    #[test]
    fn tensor_types_become_xla_shape_texts() {
        let none = Stated::default();
        for (mlir, shape) in [
            ("tensor<8x4xi4>", "s4[8,4]"),
            ("tensor<f32>", "f32[]"),
            ("tensor<2x2xcomplex<f32>>", "c64[2,2]"),
            ("tensor<3xcomplex<f64>>", "c128[3]"),
            ("tensor<?x4xf32>", "f32[?,4]"),
            ("tensor<?x4xbf16, #stablehlo.bounds<8, ?>>", "bf16[<=8,4]"),
            ("tensor<0xui2>", "u2[0]"),
            ("tensor<1x2x3xf8E4M3B11FNUZ>", "f8e4m3b11fnuz[1,2,3]"),
            ("!stablehlo.token", "token[]"),
            ("tuple<tensor<i1>, tuple<>, !stablehlo.token>", "(pred[], (), token[])"),
        ] {
            assert_eq!(xla(mlir, none).unwrap().as_deref(), Some(shape), "{mlir}");
        }
        assert_eq!(xla("index", none).unwrap(), None);
        assert_eq!(xla("memref<2xf32>", none).unwrap(), None);
    }

    #[test]
    fn stated_layouts_and_memory_spaces_show() {
        let layout = Stated { layout: Some("{0,1}"), memory_space: None };
        assert_eq!(xla("tensor<8x4xf32>", layout).unwrap().unwrap(), "f32[8,4]{0,1}");
        let host = Stated { layout: None, memory_space: Some(5) };
        assert_eq!(xla("tensor<8x4x2xf32>", host).unwrap().unwrap(), "f32[8,4,2]{2,1,0:S(5)}");
        let both = Stated { layout: Some("{1,0:T(2,128)}"), memory_space: Some(5) };
        assert_eq!(xla("tensor<8x4xf32>", both).unwrap().unwrap(), "f32[8,4]{1,0:T(2,128)S(5)}");
    }

    #[test]
    fn bad_tensors_are_errors() {
        let none = Stated::default();
        assert!(xla("tensor<8xindex>", none).is_err());
        assert!(xla("tensor<99999999999999999999xf32>", none).is_err());
        assert!(xla("tensor<?xf32, #stablehlo.bounds<8, 9>>", none).is_err());
        assert!(xla("tensor<?xf32, #stablehlo.bounds<x>>", none).is_err());
    }
}
