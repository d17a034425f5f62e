//! Legacy padding (2017–2018 XLA; spec `linearization.md` §3): `padded_dimensions` and
//! `padding_value`.
//!
//! A padded layout stores the array as if it had the padded extents `P` (one per logical
//! dimension, padding at the end of each), with the same `minor_to_major`:
//!
//! ```text
//!   a b c        padded to [3,5],        a b c 0 0
//!   d e f        minor_to_major {0,1}    d e f 0 0    memory: a d 0 b e 0 c f 0 0 0 0 0 0 0
//!                                        0 0 0 0 0
//! ```
//!
//! `slot = Σ_k I[L[k]] · Π_{m<k} P[L[m]]`, the buffer holds `Π P` slots, and a slot whose
//! coordinates fall outside the logical dimensions is padding
//! ([`crate::physical::PhysicalMap::index_of_slot`] gives `None`). XLA's own `IndexUtil` never
//! implemented this; the crate goes beyond it. Validation guarantees `P[d] ≥ D[d]`, no tiles
//! alongside padding, and no unbounded dimension.

use crate::error::{ArgumentProblem, Extreme};
use crate::error::{Error, Result};
use crate::primitive::{Category, PrimitiveType};
use crate::proto::PaddingValue;
use crate::shape::ArrayShape;

use super::extent::{extents, to_i64};

/// Whether the layout pads some dimension beyond its size (legacy `LayoutUtil::IsPadded`).
/// Padding equal to the dimensions is a no-op and does not count.
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, padding, proto::PaddingValue, PrimitiveType};
/// let spec = |p: &[i64]| LayoutSpec::new(&[2, 1, 0]).padded_dimensions(p, PaddingValue::ZeroPad);
/// let same = make_shape_with_layout(PrimitiveType::F32, &[2, 3, 4], &spec(&[2, 3, 4])).unwrap();
/// let more = make_shape_with_layout(PrimitiveType::F32, &[2, 3, 4], &spec(&[2, 14, 42])).unwrap();
/// assert!(!padding::is_padded(same.as_array().unwrap()));
/// assert!(padding::is_padded(more.as_array().unwrap()));
/// ```
pub fn is_padded(shape: ArrayShape<'_>) -> bool {
    shape.padded_dimensions().is_some_and(|p| p != shape.dimensions())
}

/// The extent of each logical dimension in memory: `padded_dimensions` when the layout has
/// them, otherwise the dimensions (bounds for dynamic ones).
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, padding, proto::PaddingValue, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::F32, &[2, 3],
///     &LayoutSpec::new(&[0, 1]).padded_dimensions(&[3, 5], PaddingValue::ZeroPad)).unwrap();
/// assert_eq!(padding::padded_extents(s.as_array().unwrap()).unwrap(), [3, 5]);
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`] for a `?` dimension.
pub fn padded_extents(shape: ArrayShape<'_>) -> Result<Vec<i64>> {
    Ok(extents(shape, "padded_extents")?.into_iter().map(to_i64).collect())
}

/// What a padding slot holds (spec §3.3): the *intended* fill value of a legacy
/// `padding_value`, symbolically. The crate never writes memory.
///
/// "Lowest" and "highest" follow XLA's reduction-identity convention (`LiteralUtil::MinValue` /
/// `MaxValue`): ±∞ for float types with infinities, the finite extremes otherwise.
///
/// ```
/// use xla_shape::{padding::{fill_for, Fill}, proto::PaddingValue, PrimitiveType};
/// assert_eq!(fill_for(PaddingValue::LowestPad as i32, PrimitiveType::S8).unwrap(), Fill::Int(-128));
/// assert_eq!(fill_for(PaddingValue::LowestPad as i32, PrimitiveType::F32).unwrap(), Fill::NegInfinity);
/// assert_eq!(fill_for(PaddingValue::HighestPad as i32, PrimitiveType::F6E2M3FN).unwrap(), Fill::MaxFinite(7.5));
/// assert!(fill_for(PaddingValue::LowestPad as i32, PrimitiveType::C64).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Fill {
    /// `INVALID_PAD` (0): not specified; the content is undefined.
    Unspecified,
    /// `UNKNOWN_PAD` (5): anything, for example NaN.
    Anything,
    /// A `pred` value.
    Bool(bool),
    /// An integer value (exact for every signed and unsigned width).
    Int(i128),
    /// +0.0 for floats, 0+0i for complex.
    Zero,
    /// F8E8M0FNU's "zero": it has no zero, so XLA's zero is the all-zero bit pattern, 2^-127.
    ZeroBitPattern,
    /// 1.0 for floats, 1+0i for complex.
    One,
    /// −∞.
    NegInfinity,
    /// +∞.
    Infinity,
    /// The most negative finite value of a float type without infinities (for F8E8M0FNU, which
    /// has no negatives, its smallest value 2^-127). Exact in `f64`.
    MinFinite(f64),
    /// The largest finite value of a float type without infinities. Exact in `f64`.
    MaxFinite(f64),
}

impl Fill {
    /// The value as an `f64`, where it is a number (`Unspecified` and `Anything` are not).
    /// Complex zero and one give their real part.
    ///
    /// ```
    /// use xla_shape::padding::Fill;
    /// assert_eq!(Fill::ZeroBitPattern.as_f64(), Some(2f64.powi(-127)));
    /// assert_eq!(Fill::Unspecified.as_f64(), None);
    /// ```
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Self::Unspecified | Self::Anything => None,
            Self::Bool(b) => Some(f64::from(u8::from(b))),
            #[allow(clippy::cast_precision_loss)] // integer extremes up to 2^64 are exact powers of two or near them
            Self::Int(i) => Some(i as f64),
            Self::Zero => Some(0.0),
            Self::ZeroBitPattern => Some(TWO_POW_MINUS_127),
            Self::One => Some(1.0),
            Self::NegInfinity => Some(f64::NEG_INFINITY),
            Self::Infinity => Some(f64::INFINITY),
            Self::MinFinite(v) | Self::MaxFinite(v) => Some(v),
        }
    }
}

/// The padding fill of an array's layout (`padding_value`; no layout means `INVALID_PAD`).
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, padding, proto::PaddingValue, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::U8, &[2],
///     &LayoutSpec::new(&[0]).padded_dimensions(&[4], PaddingValue::HighestPad)).unwrap();
/// assert_eq!(padding::padding_fill(s.as_array().unwrap()).unwrap(), padding::Fill::Int(255));
/// ```
///
/// # Errors
///
/// As [`fill_for`].
pub fn padding_fill(shape: ArrayShape<'_>) -> Result<Fill> {
    fill_for(shape.layout().map_or(0, |l| l.padding_value()), shape.element_type())
}

/// The meaning of a raw `padding_value` for an element type (spec §3.3 table).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a raw value that is not a `PaddingValue`, for LOWEST/HIGHEST
/// on a complex type (complex numbers have no order), and for a non-array element type.
// `bits` is an integer type's width where it is shifted by: 1..=64 (`bit_width` is never
// `Some(0)`), so `bits - 1` does not underflow and every shift and sum stays inside `i128`.
#[allow(clippy::arithmetic_side_effects)]
pub fn fill_for(padding_value: i32, element_type: PrimitiveType) -> Result<Fill> {
    let value = PaddingValue::try_from(padding_value)
        .map_err(|_| Error::invalid_argument(ArgumentProblem::UnknownPaddingValue { value: padding_value }))?;
    let Some(bits) = element_type.bit_width() else {
        return Err(Error::invalid_argument(ArgumentProblem::NoFillValue { element_type }));
    };
    let category = element_type.category();
    let undefined = |extreme| Err(Error::invalid_argument(ArgumentProblem::ComplexExtreme { extreme, element_type }));
    Ok(match (value, category) {
        (PaddingValue::InvalidPad, _) => Fill::Unspecified,
        (PaddingValue::UnknownPad, _) => Fill::Anything,
        (PaddingValue::ZeroPad | PaddingValue::LowestPad, Category::Boolean) => Fill::Bool(false),
        (PaddingValue::OnePad | PaddingValue::HighestPad, Category::Boolean) => Fill::Bool(true),
        (PaddingValue::ZeroPad, Category::SignedInteger | Category::UnsignedInteger)
        | (PaddingValue::LowestPad, Category::UnsignedInteger) => Fill::Int(0),
        (PaddingValue::OnePad, Category::SignedInteger | Category::UnsignedInteger) => Fill::Int(1),
        (PaddingValue::ZeroPad, _) if element_type == PrimitiveType::F8E8M0FNU => Fill::ZeroBitPattern,
        (PaddingValue::ZeroPad, _) => Fill::Zero,
        (PaddingValue::OnePad, _) => Fill::One,
        (PaddingValue::LowestPad, Category::Complex) => return undefined(Extreme::Lowest),
        (PaddingValue::HighestPad, Category::Complex) => return undefined(Extreme::Highest),
        (PaddingValue::LowestPad, Category::SignedInteger) => Fill::Int(-(1i128 << (bits - 1))),
        (PaddingValue::HighestPad, Category::SignedInteger) => Fill::Int((1i128 << (bits - 1)) - 1),
        (PaddingValue::HighestPad, Category::UnsignedInteger) => Fill::Int((1i128 << bits) - 1),
        (PaddingValue::LowestPad, Category::FloatWithInfinity) => Fill::NegInfinity,
        (PaddingValue::HighestPad, Category::FloatWithInfinity) => Fill::Infinity,
        (PaddingValue::LowestPad, _) => match finite_extremes(element_type) {
            Some((lowest, _)) => Fill::MinFinite(lowest),
            None => {
                return Err(Error::invalid_argument(ArgumentProblem::UnknownExtreme {
                    extreme: Extreme::Lowest,
                    element_type,
                }));
            }
        },
        (PaddingValue::HighestPad, _) => match finite_extremes(element_type) {
            Some((_, highest)) => Fill::MaxFinite(highest),
            None => {
                return Err(Error::invalid_argument(ArgumentProblem::UnknownExtreme {
                    extreme: Extreme::Highest,
                    element_type,
                }));
            }
        },
    })
}

/// 2^-127, the smallest `f8e8m0fnu` value (its all-zero bit pattern), exactly: from its bits,
/// because `powi`'s precision is not guaranteed (under Miri `2f64.powi(127)` came out below 2^127
/// and was encoded as 0xFD).
const TWO_POW_MINUS_127: f64 = f64::from_bits(0x3800_0000_0000_0000);
/// 2^127, the largest `f8e8m0fnu` value, exactly (as [`TWO_POW_MINUS_127`]).
const TWO_POW_127: f64 = f64::from_bits(0x47E0_0000_0000_0000);

/// (lowest, highest) finite values of the float types without infinities, from the formats'
/// definitions (`ml_dtypes` / OCP MX).
fn finite_extremes(element_type: PrimitiveType) -> Option<(f64, f64)> {
    let max = match element_type {
        PrimitiveType::F8E4M3FN => 448.0,
        PrimitiveType::F8E4M3FNUZ => 240.0,
        PrimitiveType::F8E5M2FNUZ => 57344.0,
        PrimitiveType::F8E4M3B11FNUZ => 30.0,
        PrimitiveType::F4E2M1FN => 6.0,
        PrimitiveType::F6E3M2FN => 28.0,
        PrimitiveType::F6E2M3FN => 7.5,
        // No negatives: the smallest value is the all-zero exponent.
        PrimitiveType::F8E8M0FNU => return Some((TWO_POW_MINUS_127, TWO_POW_127)),
        _ => return None,
    };
    Some((-max, max))
}

#[cfg(test)]
mod tests {
    use super::{Fill, PaddingValue, PrimitiveType, fill_for};

    /// `f8e8m0fnu`'s extremes are exactly 2^-127 and 2^127 (found by Miri, whose `powi` rounds
    /// differently from the native one: the highest pad was encoded as 0xFD instead of 0xFE).
    #[test]
    fn e8m0_extremes_are_exact_powers_of_two() {
        let t = PrimitiveType::F8E8M0FNU;
        let highest = fill_for(PaddingValue::HighestPad as i32, t).unwrap();
        assert!(matches!(highest, Fill::MaxFinite(v) if v.to_bits() == 0x47E0_0000_0000_0000), "{highest:?}");
        let lowest = fill_for(PaddingValue::LowestPad as i32, t).unwrap();
        assert!(matches!(lowest, Fill::MinFinite(v) if v.to_bits() == 0x3800_0000_0000_0000), "{lowest:?}");
        assert_eq!(Fill::ZeroBitPattern.as_f64().map(f64::to_bits), Some(0x3800_0000_0000_0000));
    }
}
