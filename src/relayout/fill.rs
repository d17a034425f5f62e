//! The bits a destination's padding slots receive.
//!
//! [`crate::padding`] says what legacy `padding_value` means, as a value ([`Fill`]); this module
//! encodes that value in the element type's bits. Tile padding, tail padding and the unused bits
//! of a wide slot are always zero bits, and so are `INVALID_PAD` and `UNKNOWN_PAD` (whose content
//! XLA leaves undefined): a relayout's output never depends on what the buffer held before.

use crate::error::Result;
use crate::padding::Fill;
use crate::primitive::PrimitiveType;
use crate::shape::ArrayShape;

/// A float format: exponent bits, mantissa bits, exponent bias, and whether a sign bit exists.
#[derive(Debug, Clone, Copy)]
struct Format {
    exponent: u32,
    mantissa: u32,
    bias: i64,
    signed: bool,
}

/// The format of a float type (the real part's, for a complex type).
fn format(element_type: PrimitiveType) -> Option<Format> {
    let f = |exponent, mantissa, bias| Some(Format { exponent, mantissa, bias, signed: true });
    match element_type {
        PrimitiveType::F16 => f(5, 10, 15),
        PrimitiveType::BF16 => f(8, 7, 127),
        PrimitiveType::F32 | PrimitiveType::C64 => f(8, 23, 127),
        PrimitiveType::F64 | PrimitiveType::C128 => f(11, 52, 1023),
        PrimitiveType::F8E5M2 => f(5, 2, 15),
        PrimitiveType::F8E4M3 | PrimitiveType::F8E4M3FN => f(4, 3, 7),
        PrimitiveType::F8E3M4 => f(3, 4, 3),
        PrimitiveType::F8E4M3FNUZ => f(4, 3, 8),
        PrimitiveType::F8E5M2FNUZ => f(5, 2, 16),
        PrimitiveType::F8E4M3B11FNUZ => f(4, 3, 11),
        PrimitiveType::F4E2M1FN => f(2, 1, 1),
        PrimitiveType::F6E3M2FN => f(3, 2, 3),
        PrimitiveType::F6E2M3FN => f(2, 3, 1),
        PrimitiveType::F8E8M0FNU => Some(Format { exponent: 8, mantissa: 0, bias: 127, signed: false }),
        _ => None,
    }
}

/// Encodes a normal value (exactly representable; every fill value is) or an infinity.
// The exponent and mantissa fields are at most 11 and 52 bits wide, so every shift stays below
// 64; `biased` is in 0..2^exponent for the values `padding` defines (checked by `try_from`).
#[allow(clippy::arithmetic_side_effects)]
fn encode_float(value: f64, format: Format) -> Option<u128> {
    let bits = value.to_bits();
    let sign = u128::from(bits >> 63);
    let exponent_mask = (1u128 << format.exponent) - 1;
    let magnitude = if value.is_infinite() {
        exponent_mask << format.mantissa
    } else if value == 0.0 {
        0
    } else {
        let exponent = i64::try_from((bits >> 52) & 0x7FF).ok()? - 1023;
        let biased = u128::try_from(exponent + format.bias).ok()?;
        let mantissa = u128::from((bits & ((1 << 52) - 1)) >> (52 - format.mantissa));
        (biased << format.mantissa) | mantissa
    };
    let sign_shift = format.exponent + format.mantissa;
    Some(if format.signed { magnitude | (sign << sign_shift) } else { magnitude })
}

/// The bit pattern of a fill value in `element_type` (its low `bit_width` bits), or `None` when
/// the padding is to hold zero bits.
// `bits` is a type's bit width, 1..=128: the shift below stays inside u128.
#[allow(clippy::arithmetic_side_effects, clippy::cast_sign_loss)]
pub(crate) fn pattern(fill: Fill, element_type: PrimitiveType) -> Option<u128> {
    let bits = element_type.bit_width()?;
    let mask = if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
    let float = |value: f64| format(element_type).and_then(|f| encode_float(value, f));
    let pattern = match fill {
        Fill::Bool(b) => u128::from(b),
        // Two's complement, truncated to the width (an unsigned maximum is all ones).
        Fill::Int(i) => (i as u128) & mask,
        Fill::One => float(1.0)?,
        Fill::NegInfinity => float(f64::NEG_INFINITY)?,
        Fill::Infinity => float(f64::INFINITY)?,
        Fill::MinFinite(v) | Fill::MaxFinite(v) => float(v)?,
        // Zero, and the fills whose content XLA leaves undefined (`Fill` is non-exhaustive: a
        // future value is written as zero bits until it is known).
        _ => return None,
    };
    (pattern != 0).then_some(pattern & mask)
}

/// The legacy padding pattern of a layout, when it pads some dimension with non-zero bits.
///
/// # Errors
///
/// As [`crate::padding::padding_fill`] (LOWEST/HIGHEST on a complex type, an unknown value).
pub(crate) fn legacy_pattern(shape: ArrayShape<'_>) -> Result<Option<u128>> {
    if !crate::padding::is_padded(shape) {
        return Ok(None);
    }
    Ok(pattern(crate::padding::padding_fill(shape)?, shape.element_type()))
}

#[cfg(test)]
mod tests {
    use super::pattern;
    use crate::padding::fill_for;
    use crate::primitive::PrimitiveType as T;
    use crate::proto::PaddingValue as P;

    fn bits(value: P, t: T) -> u128 {
        pattern(fill_for(value as i32, t).unwrap(), t).unwrap_or(0)
    }

    #[test]
    fn patterns_match_the_formats() {
        assert_eq!(bits(P::OnePad, T::F32), u128::from(1f32.to_bits()));
        assert_eq!(bits(P::LowestPad, T::F32), u128::from(f32::NEG_INFINITY.to_bits()));
        assert_eq!(bits(P::HighestPad, T::F64), u128::from(f64::INFINITY.to_bits()));
        assert_eq!(bits(P::OnePad, T::BF16), 0x3F80);
        assert_eq!(bits(P::OnePad, T::F16), 0x3C00);
        assert_eq!(bits(P::OnePad, T::C64), u128::from(1f32.to_bits()));
        assert_eq!(bits(P::HighestPad, T::F8E4M3FN), 0x7E);
        assert_eq!(bits(P::LowestPad, T::F8E4M3FN), 0xFE);
        assert_eq!(bits(P::HighestPad, T::F8E4M3FNUZ), 0x7F);
        assert_eq!(bits(P::LowestPad, T::F8E5M2FNUZ), 0xFF);
        assert_eq!(bits(P::HighestPad, T::F8E4M3B11FNUZ), 0x7F);
        assert_eq!(bits(P::HighestPad, T::F4E2M1FN), 0b0111);
        assert_eq!(bits(P::HighestPad, T::F6E3M2FN), 0b01_1111);
        assert_eq!(bits(P::HighestPad, T::F6E2M3FN), 0b01_1111);
        assert_eq!(bits(P::HighestPad, T::F8E8M0FNU), 0xFE);
        assert_eq!(bits(P::LowestPad, T::F8E8M0FNU), 0);
        assert_eq!(bits(P::OnePad, T::F8E8M0FNU), 127);
        assert_eq!(bits(P::LowestPad, T::S4), 0b1000);
        assert_eq!(bits(P::HighestPad, T::U64), u128::from(u64::MAX));
        assert_eq!(bits(P::LowestPad, T::S64), 1 << 63);
        assert_eq!(bits(P::OnePad, T::PRED), 1);
        assert_eq!(bits(P::ZeroPad, T::F32), 0);
    }
}
