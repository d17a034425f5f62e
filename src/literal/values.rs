//! The values of an array literal in logical order, whatever its element type.

use half::{bf16, f16};
use num_complex::Complex;

use super::{ArrayLiteral, SmallFloat};
use crate::error::Result;
use crate::primitive::PrimitiveType;

/// The values of an array, in logical (row-major) order, as the Rust type of its element type
/// (see the table in [`crate::literal`]). Sub-byte integers are widened to `i8`/`u8`.
///
/// ```
/// use xla_shape::{literal::{self, Literal, Values}, make, PrimitiveType};
/// let shape = make::make_shape(PrimitiveType::PRED, &[3])?;
/// let proto = literal::make_array_literal(shape.as_array().expect("array"), &[true, false, true])?;
/// let values = Literal::try_new(&proto)?.as_array().expect("array").values()?;
/// assert_eq!(values, Values::Pred(vec![true, false, true]));
/// assert_eq!(values.len(), 3);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Values {
    /// `pred`.
    Pred(Vec<bool>),
    /// `s8`, `s4`, `s2`, `s1`.
    S8(Vec<i8>),
    /// `s16`.
    S16(Vec<i16>),
    /// `s32`.
    S32(Vec<i32>),
    /// `s64`.
    S64(Vec<i64>),
    /// `u8`, `u4`, `u2`, `u1`.
    U8(Vec<u8>),
    /// `u16`.
    U16(Vec<u16>),
    /// `u32`.
    U32(Vec<u32>),
    /// `u64`.
    U64(Vec<u64>),
    /// `f16`.
    F16(Vec<f16>),
    /// `bf16`.
    BF16(Vec<bf16>),
    /// `f32`.
    F32(Vec<f32>),
    /// `f64`.
    F64(Vec<f64>),
    /// `c64`.
    C64(Vec<Complex<f32>>),
    /// `c128`.
    C128(Vec<Complex<f64>>),
    /// The 8-, 6- and 4-bit float types.
    Small(Vec<SmallFloat>),
}

impl Values {
    /// Reads every value of `array` (whose element type decides the variant).
    pub(crate) fn read(array: &ArrayLiteral<'_>) -> Result<Self> {
        use PrimitiveType as T;
        Ok(match array.element_type() {
            T::PRED => Self::Pred(array.to_vec()?),
            T::S8 | T::S4 | T::S2 | T::S1 => Self::S8(array.to_vec()?),
            T::S16 => Self::S16(array.to_vec()?),
            T::S32 => Self::S32(array.to_vec()?),
            T::S64 => Self::S64(array.to_vec()?),
            T::U8 | T::U4 | T::U2 | T::U1 => Self::U8(array.to_vec()?),
            T::U16 => Self::U16(array.to_vec()?),
            T::U32 => Self::U32(array.to_vec()?),
            T::U64 => Self::U64(array.to_vec()?),
            T::F16 => Self::F16(array.to_vec()?),
            T::BF16 => Self::BF16(array.to_vec()?),
            T::F32 => Self::F32(array.to_vec()?),
            T::F64 => Self::F64(array.to_vec()?),
            T::C64 => Self::C64(array.to_vec()?),
            T::C128 => Self::C128(array.to_vec()?),
            _ => Self::Small(read_small(array)?),
        })
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        match self {
            Self::Pred(v) => v.len(),
            Self::S8(v) => v.len(),
            Self::S16(v) => v.len(),
            Self::S32(v) => v.len(),
            Self::S64(v) => v.len(),
            Self::U8(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::U64(v) => v.len(),
            Self::F16(v) => v.len(),
            Self::BF16(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
            Self::C64(v) => v.len(),
            Self::C128(v) => v.len(),
            Self::Small(v) => v.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `SmallFloat` has no `Default`; start from the type's zero pattern.
fn read_small(array: &ArrayLiteral<'_>) -> Result<Vec<SmallFloat>> {
    let Some(zero) = SmallFloat::new(array.element_type(), 0) else { return Ok(Vec::new()) };
    let mut out = vec![zero; array.element_count()];
    array.copy_into(&mut out)?;
    Ok(out)
}
