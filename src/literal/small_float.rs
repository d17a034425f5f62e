//! The 8-, 6- and 4-bit floating-point types, decoded from their bit patterns.
//!
//! No maintained Rust crate covers all eleven of XLA's small float types (`float8` has two of
//! them), so this is the small table the formats' definitions give (`ml_dtypes`, the OCP FP8 and
//! MX specifications):
//!
//! | type | exponent | mantissa | bias | infinities | NaN |
//! |---|---|---|---|---|---|
//! | `f8e5m2` | 5 | 2 | 15 | yes | exponent all ones, mantissa ≠ 0 |
//! | `f8e4m3` | 4 | 3 | 7 | yes | exponent all ones, mantissa ≠ 0 |
//! | `f8e3m4` | 3 | 4 | 3 | yes | exponent all ones, mantissa ≠ 0 |
//! | `f8e4m3fn` | 4 | 3 | 7 | no | `S.1111.111` |
//! | `f8e4m3fnuz` | 4 | 3 | 8 | no | `0x80` only (no −0) |
//! | `f8e4m3b11fnuz` | 4 | 3 | 11 | no | `0x80` only |
//! | `f8e5m2fnuz` | 5 | 2 | 16 | no | `0x80` only |
//! | `f4e2m1fn` | 2 | 1 | 1 | no | none |
//! | `f6e3m2fn` | 3 | 2 | 3 | no | none |
//! | `f6e2m3fn` | 2 | 3 | 1 | no | none |
//! | `f8e8m0fnu` | 8 | 0 | 127 | no | `0xff`; no sign, no zero, no subnormals |
//!
//! Every value of these types is exactly an `f32`.

use std::fmt;

use crate::primitive::PrimitiveType;

/// Where a type keeps its NaNs (and whether it has infinities).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    /// IEEE-like: the all-ones exponent holds ±infinity (mantissa 0) and NaNs.
    Ieee,
    /// Finite: only `S.1…1.1…1` is NaN.
    AllOnesNan,
    /// Finite, unsigned zero: only the negative-zero pattern (`0x80`) is NaN.
    NegativeZeroNan,
    /// Finite, no NaN at all.
    Finite,
    /// `f8e8m0fnu`: `0xff` is NaN.
    E8M0,
}

/// The parameters of one small float type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Format {
    exponent_bits: i32,
    pub(crate) mantissa_bits: i32,
    bias: i32,
    special: Special,
}

#[allow(clippy::unnecessary_wraps, reason = "invariant: the table's non-float arms are None")]
const fn format(exponent_bits: i32, mantissa_bits: i32, bias: i32, special: Special) -> Option<Format> {
    Some(Format { exponent_bits, mantissa_bits, bias, special })
}

/// The format of a small float type; `None` for every other type.
pub(crate) const fn small_float_format(ty: PrimitiveType) -> Option<Format> {
    use PrimitiveType as T;
    match ty {
        T::F8E5M2 => format(5, 2, 15, Special::Ieee),
        T::F8E4M3 => format(4, 3, 7, Special::Ieee),
        T::F8E3M4 => format(3, 4, 3, Special::Ieee),
        T::F8E4M3FN => format(4, 3, 7, Special::AllOnesNan),
        T::F8E4M3FNUZ => format(4, 3, 8, Special::NegativeZeroNan),
        T::F8E4M3B11FNUZ => format(4, 3, 11, Special::NegativeZeroNan),
        T::F8E5M2FNUZ => format(5, 2, 16, Special::NegativeZeroNan),
        T::F4E2M1FN => format(2, 1, 1, Special::Finite),
        T::F6E3M2FN => format(3, 2, 3, Special::Finite),
        T::F6E2M3FN => format(2, 3, 1, Special::Finite),
        T::F8E8M0FNU => format(8, 0, 127, Special::E8M0),
        _ => None,
    }
}

impl Format {
    /// Bits a value uses (the rest of its byte is zero).
    #[allow(clippy::arithmetic_side_effects, reason = "invariant: at most 8 bits in all")]
    pub(crate) const fn bits(self) -> u32 {
        let sign = if matches!(self.special, Special::E8M0) { 0 } else { 1 };
        (self.exponent_bits + self.mantissa_bits + sign).unsigned_abs()
    }

    /// The value of a bit pattern (its low [`bits`](Self::bits) bits).
    #[allow(clippy::arithmetic_side_effects, reason = "invariant: shifts and sums of at most 8 bits")]
    fn decode(self, bits: u8) -> f32 {
        let signed = !matches!(self.special, Special::E8M0);
        let (e, m) = (self.exponent_bits, self.mantissa_bits);
        let bits = i32::from(bits);
        let negative = signed && (bits >> (e + m)) & 1 == 1;
        let exponent = (bits >> m) & ((1 << e) - 1);
        let mantissa = bits & ((1 << m) - 1);
        let max_exponent = (1i32 << e) - 1;
        let max_mantissa = (1i32 << m) - 1;
        let nan = match self.special {
            Special::Ieee => exponent == max_exponent && mantissa != 0,
            Special::AllOnesNan => exponent == max_exponent && mantissa == max_mantissa,
            Special::NegativeZeroNan => negative && exponent == 0 && mantissa == 0,
            Special::Finite => false,
            Special::E8M0 => bits == 0xff,
        };
        let magnitude = if nan {
            f32::NAN
        } else if matches!(self.special, Special::Ieee) && exponent == max_exponent {
            f32::INFINITY
        } else if exponent == 0 && m > 0 {
            // Subnormal: mantissa × 2^(1 − bias − m).
            pow2_f32(1 - self.bias - m) * small_integer(mantissa)
        } else {
            pow2_f32(exponent - self.bias - m) * small_integer((1 << m) + mantissa)
        };
        if negative { -magnitude } else { magnitude }
    }
}

/// An integer below 32 (a significand of these formats), exactly.
fn small_integer(x: i32) -> f32 {
    u8::try_from(x).map_or(f32::NAN, f32::from)
}

/// 2^k for the exponents these formats reach (−137 … 128), exactly.
#[allow(clippy::arithmetic_side_effects, reason = "invariant: |k| ≤ 137")]
fn pow2_f32(k: i32) -> f32 {
    // Two steps keep each factor a normal f32 even for 2^-137; the product of two powers of two
    // is exact.
    let half = k / 2;
    normal_pow2_f32(half) * normal_pow2_f32(k - half)
}

/// 2^k for a normal f32 exponent (−126 … 127), from its bits: `powi`'s precision is not
/// guaranteed (Miri rounds it differently from the native one).
#[allow(clippy::arithmetic_side_effects, reason = "invariant: |k| ≤ 69")]
fn normal_pow2_f32(k: i32) -> f32 {
    u32::try_from(k + 127).map_or(f32::NAN, |biased| f32::from_bits(biased << 23))
}

/// A value of one of the small float types (`f8e5m2`, `f8e4m3fn`, …, `f4e2m1fn`, `f6e2m3fn`,
/// `f8e8m0fnu`): its type and bit pattern.
///
/// ```
/// use xla_shape::{literal::SmallFloat, PrimitiveType};
/// let x = SmallFloat::new(PrimitiveType::F8E4M3FN, 0x38).unwrap();
/// assert_eq!(x.to_f32(), 1.0);
/// assert!(SmallFloat::new(PrimitiveType::F8E4M3FN, 0x7f).unwrap().to_f32().is_nan());
/// assert_eq!(SmallFloat::new(PrimitiveType::F4E2M1FN, 0x0f).unwrap().to_f32(), -6.0);
/// assert!(SmallFloat::new(PrimitiveType::F4E2M1FN, 0x10).is_none()); // 4 bits only
/// assert!(SmallFloat::new(PrimitiveType::F32, 0).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SmallFloat {
    element_type: PrimitiveType,
    bits: u8,
}

impl SmallFloat {
    /// The value of `ty` with bit pattern `bits`; `None` if `ty` is not a small float type or
    /// `bits` has bits set above the type's width.
    pub fn new(ty: PrimitiveType, bits: u8) -> Option<Self> {
        let format = small_float_format(ty)?;
        (u32::from(bits) >> format.bits() == 0).then_some(Self { element_type: ty, bits })
    }

    /// The element type.
    pub fn element_type(self) -> PrimitiveType {
        self.element_type
    }

    /// The bit pattern.
    pub fn to_bits(self) -> u8 {
        self.bits
    }

    /// The value, exactly (every value of these types is an `f32`).
    pub fn to_f32(self) -> f32 {
        small_float_format(self.element_type).map_or(f32::NAN, |format| format.decode(self.bits))
    }
}

impl fmt::Display for SmallFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_f32().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pattern against an independent reading of each format's definition.
    #[test]
    #[allow(clippy::float_cmp, reason = "every value of these formats is exact")]
    fn known_values() {
        use PrimitiveType as T;
        let v = |ty, bits| SmallFloat::new(ty, bits).unwrap().to_f32();
        assert_eq!(v(T::F8E5M2, 0x3c), 1.0);
        assert_eq!(v(T::F8E5M2, 0x7b), 57344.0);
        assert_eq!(v(T::F8E5M2, 0x01), 2f32.powi(-16));
        assert_eq!(v(T::F8E5M2, 0x7c), f32::INFINITY);
        assert!(v(T::F8E5M2, 0x7d).is_nan());
        assert_eq!(v(T::F8E4M3, 0x77), 240.0);
        assert_eq!(v(T::F8E4M3, 0x78), f32::INFINITY);
        assert_eq!(v(T::F8E4M3FN, 0x7e), 448.0);
        assert!(v(T::F8E4M3FN, 0xff).is_nan() && v(T::F8E4M3FN, 0xff).is_sign_negative());
        assert_eq!(v(T::F8E4M3FN, 0x78), 256.0);
        assert_eq!(v(T::F8E4M3FNUZ, 0x7f), 240.0);
        assert!(v(T::F8E4M3FNUZ, 0x80).is_nan());
        assert_eq!(v(T::F8E4M3B11FNUZ, 0x7f), 30.0);
        assert_eq!(v(T::F8E5M2FNUZ, 0x7f), 57344.0);
        assert_eq!(v(T::F8E3M4, 0x6f), 15.5);
        assert_eq!(v(T::F4E2M1FN, 0x07), 6.0);
        assert_eq!(v(T::F4E2M1FN, 0x01), 0.5);
        assert_eq!(v(T::F6E3M2FN, 0x1f), 28.0);
        assert_eq!(v(T::F6E2M3FN, 0x1f), 7.5);
        assert_eq!(v(T::F6E2M3FN, 0x01), 0.125);
        assert_eq!(v(T::F8E8M0FNU, 0x7f), 1.0);
        assert_eq!(v(T::F8E8M0FNU, 0x00), 2f32.powi(-127));
        assert_eq!(v(T::F8E8M0FNU, 0xfe), 2f32.powi(127));
        assert!(v(T::F8E8M0FNU, 0xff).is_nan());
    }
}
