//! Rust types for the values of each element type, and their little-endian byte forms.
//!
//! | element type | Rust type |
//! |---|---|
//! | `pred` | `bool` |
//! | `s8`, `s4`, `s2`, `s1` | `i8` |
//! | `u8`, `u4`, `u2`, `u1` | `u8` |
//! | `s16` … `s64`, `u16` … `u64` | `i16` … `i64`, `u16` … `u64` |
//! | `f16`, `bf16` | [`half::f16`], [`half::bf16`] |
//! | `f32`, `f64` | `f32`, `f64` |
//! | `c64`, `c128` | [`num_complex::Complex<f32>`], [`num_complex::Complex<f64>`] |
//! | the 8-, 6- and 4-bit floats | [`SmallFloat`] |
//!
//! Every element is moved as its little-endian bytes (the form of the `LiteralProto` field, one
//! byte per sub-byte element); [`Element`] converts those bytes to and from the Rust type.

use half::{bf16, f16};
use num_complex::Complex;

use super::small_float::{SmallFloat, small_float_format};
use crate::primitive::PrimitiveType;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that holds the values of some element types exactly (see the table in
/// [`crate::literal`]). Sealed: implemented for the types of that table only.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// Whether this type holds the values of `ty`.
    ///
    /// ```
    /// use xla_shape::{literal::Element, PrimitiveType};
    /// assert!(<i8 as Element>::holds(PrimitiveType::S4));
    /// assert!(!<f32 as Element>::holds(PrimitiveType::BF16));
    /// ```
    fn holds(ty: PrimitiveType) -> bool;

    /// Bytes per element in the field's little-endian form.
    #[doc(hidden)]
    fn width() -> usize;

    /// The values of `bytes` (`width()` little-endian bytes each, for an element type this type
    /// holds, already validated), into `out`.
    #[doc(hidden)]
    fn decode(bytes: &[u8], ty: PrimitiveType, out: &mut [Self]);

    /// The little-endian bytes of `values` as elements of `ty`.
    #[doc(hidden)]
    fn encode(values: &[Self], ty: PrimitiveType, out: &mut Vec<u8>);

    /// `out` as its bytes, when its memory is exactly the field's little-endian form (so values
    /// are moved without a conversion pass).
    #[doc(hidden)]
    fn as_field_bytes(out: &mut [Self]) -> Option<&mut [u8]>;
}

/// Types whose memory is their little-endian field form on a little-endian machine, with their
/// conversions from and to those bytes.
macro_rules! plain_element {
    ($t:ty, $width:literal, [$($ty:ident),*], $from:expr, $to:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            fn holds(ty: PrimitiveType) -> bool {
                matches!(ty, $(PrimitiveType::$ty)|*)
            }
            fn width() -> usize {
                $width
            }
            fn decode(bytes: &[u8], _: PrimitiveType, out: &mut [Self]) {
                let from: fn([u8; $width]) -> $t = $from;
                for (value, chunk) in out.iter_mut().zip(bytes.chunks_exact($width)) {
                    let mut le = [0u8; $width];
                    le.copy_from_slice(chunk);
                    *value = from(le);
                }
            }
            fn encode(values: &[Self], _: PrimitiveType, out: &mut Vec<u8>) {
                let to: fn($t) -> [u8; $width] = $to;
                if cfg!(target_endian = "little") {
                    out.extend_from_slice(bytemuck::cast_slice(values));
                } else {
                    out.extend(values.iter().flat_map(|&v| to(v)));
                }
            }
            fn as_field_bytes(out: &mut [Self]) -> Option<&mut [u8]> {
                cfg!(target_endian = "little").then(|| bytemuck::cast_slice_mut(out))
            }
        }
    };
    ($t:ty, $width:literal, [$($ty:ident),*]) => {
        plain_element!($t, $width, [$($ty),*], <$t>::from_le_bytes, <$t>::to_le_bytes);
    };
}

plain_element!(i16, 2, [S16]);
plain_element!(i32, 4, [S32]);
plain_element!(i64, 8, [S64]);
plain_element!(u16, 2, [U16]);
plain_element!(u32, 4, [U32]);
plain_element!(u64, 8, [U64]);
plain_element!(f16, 2, [F16]);
plain_element!(bf16, 2, [BF16]);
plain_element!(f32, 4, [F32]);
plain_element!(f64, 8, [F64]);
plain_element!(Complex<f32>, 8, [C64], complex32_from_le, complex32_to_le);
plain_element!(Complex<f64>, 16, [C128], complex64_from_le, complex64_to_le);

/// `(re, im)` as two little-endian `f32`s.
fn complex32_from_le(b: [u8; 8]) -> Complex<f32> {
    let [r0, r1, r2, r3, i0, i1, i2, i3] = b;
    Complex::new(f32::from_le_bytes([r0, r1, r2, r3]), f32::from_le_bytes([i0, i1, i2, i3]))
}

fn complex32_to_le(c: Complex<f32>) -> [u8; 8] {
    let ([r0, r1, r2, r3], [i0, i1, i2, i3]) = (c.re.to_le_bytes(), c.im.to_le_bytes());
    [r0, r1, r2, r3, i0, i1, i2, i3]
}

/// `(re, im)` as two little-endian `f64`s.
fn complex64_from_le(b: [u8; 16]) -> Complex<f64> {
    let mut re = [0u8; 8];
    let mut im = [0u8; 8];
    re.copy_from_slice(b.get(..8).unwrap_or(&[0; 8]));
    im.copy_from_slice(b.get(8..).unwrap_or(&[0; 8]));
    Complex::new(f64::from_le_bytes(re), f64::from_le_bytes(im))
}

fn complex64_to_le(c: Complex<f64>) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (slot, byte) in out.iter_mut().zip(c.re.to_le_bytes().into_iter().chain(c.im.to_le_bytes())) {
        *slot = byte;
    }
    out
}

/// The bits a sub-byte integer type uses, if it is one.
pub(crate) fn sub_byte_bits(ty: PrimitiveType) -> Option<u32> {
    ty.bit_width().filter(|_| ty.is_integral() && ty.is_sub_byte())
}

impl sealed::Sealed for i8 {}
impl Element for i8 {
    fn holds(ty: PrimitiveType) -> bool {
        matches!(ty, PrimitiveType::S8 | PrimitiveType::S4 | PrimitiveType::S2 | PrimitiveType::S1)
    }
    fn width() -> usize {
        1
    }
    fn decode(bytes: &[u8], ty: PrimitiveType, out: &mut [Self]) {
        // Sub-byte values sit in the low bits; shifting them to the top and back sign-extends.
        let shift = sub_byte_bits(ty).map_or(0, |bits| 8u32.saturating_sub(bits));
        for (value, &byte) in out.iter_mut().zip(bytes) {
            *value = i8::from_le_bytes([byte << shift]) >> shift;
        }
    }
    fn encode(values: &[Self], ty: PrimitiveType, out: &mut Vec<u8>) {
        let mask = sub_byte_bits(ty).map_or(0xff, |bits| u8::MAX >> 8u32.saturating_sub(bits));
        out.extend(values.iter().map(|v| v.to_le_bytes()[0] & mask));
    }
    fn as_field_bytes(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
}

impl sealed::Sealed for u8 {}
impl Element for u8 {
    fn holds(ty: PrimitiveType) -> bool {
        matches!(ty, PrimitiveType::U8 | PrimitiveType::U4 | PrimitiveType::U2 | PrimitiveType::U1)
    }
    fn width() -> usize {
        1
    }
    fn decode(bytes: &[u8], _: PrimitiveType, out: &mut [Self]) {
        out.copy_from_slice(bytes);
    }
    fn encode(values: &[Self], ty: PrimitiveType, out: &mut Vec<u8>) {
        let mask = sub_byte_bits(ty).map_or(0xff, |bits| u8::MAX >> 8u32.saturating_sub(bits));
        out.extend(values.iter().map(|v| v & mask));
    }
    fn as_field_bytes(out: &mut [Self]) -> Option<&mut [u8]> {
        Some(out)
    }
}

impl sealed::Sealed for bool {}
impl Element for bool {
    fn holds(ty: PrimitiveType) -> bool {
        ty == PrimitiveType::PRED
    }
    fn width() -> usize {
        1
    }
    fn decode(bytes: &[u8], _: PrimitiveType, out: &mut [Self]) {
        for (value, &byte) in out.iter_mut().zip(bytes) {
            *value = byte != 0;
        }
    }
    fn encode(values: &[Self], _: PrimitiveType, out: &mut Vec<u8>) {
        out.extend(values.iter().map(|&v| u8::from(v)));
    }
    fn as_field_bytes(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
}

impl sealed::Sealed for SmallFloat {}
impl Element for SmallFloat {
    fn holds(ty: PrimitiveType) -> bool {
        small_float_format(ty).is_some()
    }
    fn width() -> usize {
        1
    }
    fn decode(bytes: &[u8], ty: PrimitiveType, out: &mut [Self]) {
        for (value, &byte) in out.iter_mut().zip(bytes) {
            // Validation checked the width of every pattern; a wider byte cannot reach here.
            if let Some(small) = SmallFloat::new(ty, byte) {
                *value = small;
            }
        }
    }
    fn encode(values: &[Self], _: PrimitiveType, out: &mut Vec<u8>) {
        out.extend(values.iter().map(|v| v.to_bits()));
    }
    fn as_field_bytes(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
}
