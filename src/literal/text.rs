//! XLA's text of a literal, exactly as HLO text prints a constant's operand
//! (`LiteralBase::PrintWithoutShapeOneline`, and `{...}` for large constants).
//!
//! * Arrays nest one pair of braces per dimension: `{1, 0, 1}` (rank 1),
//!   `{ { 1.5, 4 }, { 3, 7 } }` (the innermost braces pad with a space unless they hold at most
//!   one element), and from rank 4 on each inner brace says where it is: `{ /*i0=1*/ …`.
//! * `pred` prints `1`/`0` inside arrays and `true`/`false` as a scalar; integers in decimal;
//!   complex values as `(re, im)`; tuples as `( a, b )`; a token as `token`.
//! * Floats as `RoundTripFpToString`: C's `%.*g` — `f32` with 6 significant digits unless that
//!   does not read back (then 9), `f64` with 15 (then 17), every other type with its
//!   `max_digits10` (`2 + ⌊(mantissa bits + 1) × 0.301⌋`: 5 for `f16`, 4 for `bf16`, 3 for
//!   `f8e4m3*`, 2 for `f8e5m2*` …). NaN is `nan` or `-nan`; for the types with infinities a
//!   payload other than the quiet bit follows in hex: `nan(0x1)`.
//! * A dynamic array prints only its elements inside its dynamic sizes.

use std::fmt::Write;

use num_complex::Complex;

use super::small_float::small_float_format;
use super::{Literal, Values};
use crate::error::Result;
use crate::primitive::{Category, PrimitiveType};

/// The operand of a constant instruction: `{...}` for a tuple or an array of more than `limit`
/// elements, when a limit is given.
pub(super) fn write_constant(out: &mut String, literal: &Literal<'_>, limit: Option<usize>) -> Result<()> {
    match (literal, limit) {
        (_, None) => write_literal(out, literal),
        (Literal::Array(array), Some(limit)) if array.element_count() <= limit => write_literal(out, literal),
        _ => {
            out.push_str("{...}");
            Ok(())
        }
    }
}

/// The whole literal on one line.
pub(super) fn write_literal(out: &mut String, literal: &Literal<'_>) -> Result<()> {
    // Tuples nest at most as deep as their validated shape (`MAX_DEPTH`).
    match literal {
        Literal::Token => out.push_str("token"),
        Literal::Tuple(tuple) => {
            out.push_str("( ");
            for (i, element) in tuple.elements().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_literal(out, element)?;
            }
            out.push_str(" )");
        }
        Literal::Array(array) => {
            let values = array.values()?;
            let bounds = array.dims();
            let sizes = array.sizes();
            let ty = array.element_type();
            write_dense(out, &bounds, &sizes, |out, linear| write_element(out, &values, ty, linear, sizes.len()));
        }
    }
    Ok(())
}

/// The nested braces of an array whose logical (row-major over `bounds`) element `linear` is
/// written by `element`; only the box `sizes` is printed. Iterative: the rank is not bounded.
#[allow(
    clippy::arithmetic_side_effects,
    reason = "invariant: indices stay below sizes ≤ bounds, whose product fits in memory"
)]
fn write_dense(out: &mut String, bounds: &[usize], sizes: &[usize], mut element: impl FnMut(&mut String, usize)) {
    let rank = sizes.len();
    if rank == 0 {
        element(out, 0);
        return;
    }
    // Row-major strides of the bounded array.
    let mut strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        let next = strides.get(d + 1).copied().unwrap_or(1) * bounds.get(d + 1).copied().unwrap_or(1);
        if let Some(s) = strides.get_mut(d) {
            *s = next;
        }
    }
    let size = |level: usize| sizes.get(level).copied().unwrap_or(0);
    // `index` holds the position at each level whose children are being printed.
    let mut index: Vec<usize> = Vec::with_capacity(rank);
    let mut linear = 0usize;
    open(out, rank, 0, size(0), &index);
    let mut descend = true;
    loop {
        if descend {
            // The brace of level `index.len()` is open and nothing is in it yet.
            let level = index.len();
            if size(level) == 0 {
                close(out, rank, level, 0);
            } else {
                index.push(0);
                if level + 1 == rank {
                    element(out, linear);
                } else {
                    open(out, rank, level + 1, size(level + 1), &index);
                    continue;
                }
            }
            descend = false;
        }
        // Step the innermost level forward, or close it.
        let Some(&i) = index.last() else { return };
        let at = index.len() - 1;
        if i + 1 < size(at) {
            if let Some(slot) = index.last_mut() {
                *slot = i + 1;
            }
            linear += strides.get(at).copied().unwrap_or(0);
            out.push_str(", ");
            if at + 1 == rank {
                element(out, linear);
            } else {
                open(out, rank, at + 1, size(at + 1), &index);
                descend = true;
            }
        } else {
            linear -= strides.get(at).copied().unwrap_or(0) * i;
            index.pop();
            close(out, rank, at, size(at));
        }
    }
}

/// The opening brace of `level` (whose dimension has `size` elements).
fn open(out: &mut String, rank: usize, level: usize, size: usize, index: &[usize]) {
    let remaining = rank.saturating_sub(level);
    if rank == 1 {
        out.push('{');
    } else if remaining == 1 {
        out.push_str(if size <= 1 { "{" } else { "{ " });
    } else if rank > 3 && !index.is_empty() && index.len() < rank {
        let at = index.len().saturating_sub(1);
        let value = index.last().copied().unwrap_or(0);
        let _ = write!(out, "{{ /*i{at}={value}*/{}", if size > 0 { " " } else { "" });
    } else {
        out.push_str("{ ");
    }
}

/// The closing brace of `level`.
fn close(out: &mut String, rank: usize, level: usize, size: usize) {
    let remaining = rank.saturating_sub(level);
    if rank == 1 {
        out.push('}');
    } else if remaining == 1 {
        out.push_str(if size <= 1 { "}" } else { " }" });
    } else {
        out.push_str(" }");
    }
}

fn write_element(out: &mut String, values: &Values, ty: PrimitiveType, i: usize, rank: usize) {
    match values {
        Values::Pred(v) => {
            let value = v.get(i).copied().unwrap_or(false);
            out.push_str(match (rank, value) {
                (0, true) => "true",
                (0, false) => "false",
                (_, true) => "1",
                (_, false) => "0",
            });
        }
        Values::S8(v) => push(out, v.get(i)),
        Values::S16(v) => push(out, v.get(i)),
        Values::S32(v) => push(out, v.get(i)),
        Values::S64(v) => push(out, v.get(i)),
        Values::U8(v) => push(out, v.get(i)),
        Values::U16(v) => push(out, v.get(i)),
        Values::U32(v) => push(out, v.get(i)),
        Values::U64(v) => push(out, v.get(i)),
        Values::F16(v) => float(
            out,
            ty,
            v.get(i).map_or(0.0, |x| f64::from(x.to_f32())),
            v.get(i).map_or(0, |x| u64::from(x.to_bits())),
        ),
        Values::BF16(v) => float(
            out,
            ty,
            v.get(i).map_or(0.0, |x| f64::from(x.to_f32())),
            v.get(i).map_or(0, |x| u64::from(x.to_bits())),
        ),
        Values::F32(v) => {
            float(out, ty, v.get(i).map_or(0.0, |&x| f64::from(x)), v.get(i).map_or(0, |x| u64::from(x.to_bits())));
        }
        Values::F64(v) => float(out, ty, v.get(i).copied().unwrap_or(0.0), v.get(i).map_or(0, |x| x.to_bits())),
        Values::C64(v) => {
            let c = v.get(i).copied().unwrap_or(Complex::new(0.0, 0.0));
            out.push('(');
            float(out, PrimitiveType::F32, f64::from(c.re), u64::from(c.re.to_bits()));
            out.push_str(", ");
            float(out, PrimitiveType::F32, f64::from(c.im), u64::from(c.im.to_bits()));
            out.push(')');
        }
        Values::C128(v) => {
            let c = v.get(i).copied().unwrap_or(Complex::new(0.0, 0.0));
            out.push('(');
            float(out, PrimitiveType::F64, c.re, c.re.to_bits());
            out.push_str(", ");
            float(out, PrimitiveType::F64, c.im, c.im.to_bits());
            out.push(')');
        }
        Values::Small(v) => {
            let x = v.get(i);
            float(out, ty, x.map_or(0.0, |x| f64::from(x.to_f32())), x.map_or(0, |x| u64::from(x.to_bits())));
        }
    }
}

fn push(out: &mut String, value: Option<&impl std::fmt::Display>) {
    if let Some(value) = value {
        let _ = write!(out, "{value}");
    }
}

/// Mantissa bits (without the implicit bit) of a floating-point type.
fn mantissa_bits(ty: PrimitiveType) -> u32 {
    match ty {
        PrimitiveType::F16 => 10,
        PrimitiveType::BF16 => 7,
        PrimitiveType::F32 => 23,
        PrimitiveType::F64 => 52,
        other => small_float_format(other).map_or(0, |f| f.mantissa_bits.unsigned_abs()),
    }
}

/// `RoundTripFpToString` of `value` (of type `ty`, bit pattern `bits`).
#[allow(clippy::arithmetic_side_effects, reason = "invariant: mantissa bits are at most 52")]
fn float(out: &mut String, ty: PrimitiveType, value: f64, bits: u64) {
    let m = mantissa_bits(ty);
    if value.is_nan() {
        out.push_str(if value.is_sign_negative() { "-nan" } else { "nan" });
        // Types with signaling NaNs (the IEEE-like ones, which have infinities) show a payload
        // other than the quiet bit.
        if ty.category() == Category::FloatWithInfinity && m > 0 {
            let payload = bits & ((1u64 << m) - 1);
            if payload != 1u64 << (m - 1) {
                let _ = write!(out, "(0x{payload:x})");
            }
        }
        return;
    }
    let text = match ty {
        PrimitiveType::F32 => {
            let short = format_g(value, 6);
            if short.parse::<f32>().ok().map(f64::from) == Some(value) { short } else { format_g(value, 9) }
        }
        PrimitiveType::F64 => {
            let short = format_g(value, 15);
            if short.parse::<f64>().ok() == Some(value) { short } else { format_g(value, 17) }
        }
        _ => format_g(value, (2 + (m + 1) * 3010 / 10000) as usize),
    };
    out.push_str(&text);
}

/// C's `printf("%.*g", precision, value)`.
#[allow(
    clippy::arithmetic_side_effects,
    reason = "invariant: precision ≤ 17 and decimal exponents of f64 are within ±400"
)]
pub(crate) fn format_g(value: f64, precision: usize) -> String {
    if value.is_infinite() {
        return if value < 0.0 { "-inf".to_owned() } else { "inf".to_owned() };
    }
    if value.is_nan() {
        return if value.is_sign_negative() { "-nan".to_owned() } else { "nan".to_owned() };
    }
    let p = precision.max(1);
    if value == 0.0 {
        return if value.is_sign_negative() { "-0".to_owned() } else { "0".to_owned() };
    }
    let scientific = format!("{value:.*e}", p - 1);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let x: i64 = exponent.parse().unwrap_or(0);
    let p = i64::try_from(p).unwrap_or(17);
    if x < -4 || x >= p {
        let mantissa = strip_zeros(mantissa);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", x.unsigned_abs())
    } else {
        let decimals = usize::try_from(p - 1 - x).unwrap_or(0);
        strip_zeros(&format!("{value:.decimals$}")).to_owned()
    }
}

/// Without trailing fractional zeros (and a trailing point), as `%g` prints.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s }
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn percent_g() {
        assert_eq!(format_g(1.6e-7, 6), "1.6e-07");
        assert_eq!(format_g(2.5e11, 6), "2.5e+11");
        assert_eq!(format_g(36.6, 6), "36.6");
        assert_eq!(format_g(4.0, 6), "4");
        assert_eq!(format_g(2.5e11, 15), "250000000000");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(123_456.7, 4), "1.235e+05");
        assert_eq!(format_g(0.125, 2), "0.12");
        assert_eq!(format_g(-0.0, 3), "-0");
        assert_eq!(format_g(1e100, 17), "1.0000000000000000e+100".replace(".0000000000000000", ""));
    }
}
