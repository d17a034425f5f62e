//! Element types: XLA's `PrimitiveType`, with the text names, bit widths and categories XLA uses.
//!
//! The generated `proto::PrimitiveType` exists too, but prost renames its variants (`Bf16`,
//! `F8e4m3fn`) and its getters silently map unknown values to `Invalid`. This hand-written enum is
//! built from the raw `i32` only, so an unknown value is an error that carries the number.

use std::fmt;

/// What kind of values a [`PrimitiveType`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// `pred`.
    Boolean,
    /// `s1` … `s64`.
    SignedInteger,
    /// `u1` … `u64`.
    UnsignedInteger,
    /// Floating point with infinities (`f16`, `f32`, `f64`, `bf16`, `f8e5m2`, `f8e4m3`, `f8e3m4`).
    FloatWithInfinity,
    /// Floating point without infinities (`f8e4m3fn`, the FNUZ types, the MX types).
    FiniteFloat,
    /// `c64`, `c128`.
    Complex,
    /// `tuple`.
    Tuple,
    /// `opaque`.
    Opaque,
    /// `token`.
    Token,
    /// `buffer`.
    Buffer,
}

macro_rules! primitive_types {
    ($( $(#[$doc:meta])* $variant:ident = $value:literal, $name:literal, $bits:literal, $category:ident; )*) => {
        /// An XLA element type (`PrimitiveType` in `xla_data.proto`), excluding the invalid value 0.
        ///
        /// Array types have a bit width; `Tuple`, `Opaque`, `Token` and `Buffer` describe
        /// non-array shapes. The text names are XLA's (`f32`, `bf16`, `opaque`, …).
        ///
        /// ```
        /// use xla_shape::PrimitiveType;
        /// let t = PrimitiveType::try_from(16).unwrap();
        /// assert_eq!(t, PrimitiveType::BF16);
        /// assert_eq!(t.name(), "bf16");
        /// assert_eq!(t.byte_width(), Some(2));
        /// assert_eq!("s4".parse::<PrimitiveType>().unwrap().bit_width(), Some(4));
        /// assert!(PrimitiveType::try_from(99).is_err());
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        #[allow(clippy::upper_case_acronyms, non_camel_case_types)]
        pub enum PrimitiveType {
            $( $(#[$doc])* $variant = $value, )*
        }

        impl PrimitiveType {
            /// Every element type, in proto-number order.
            pub const ALL: &'static [PrimitiveType] = &[$(PrimitiveType::$variant),*];

            /// The element type with this proto number, or `None` for 0 and unknown numbers.
            pub const fn from_i32(value: i32) -> Option<Self> {
                match value {
                    $( $value => Some(Self::$variant), )*
                    _ => None,
                }
            }

            /// XLA's text name (`primitive_util::LowercasePrimitiveTypeName`).
            pub const fn name(self) -> &'static str {
                match self { $( Self::$variant => $name, )* }
            }

            /// Bits per element (`primitive_util::BitWidth`); `None` for non-array types.
            pub const fn bit_width(self) -> Option<u32> {
                match self { $( Self::$variant => if $bits == 0 { None } else { Some($bits) }, )* }
            }

            /// What kind of values the type holds.
            pub const fn category(self) -> Category {
                match self { $( Self::$variant => Category::$category, )* }
            }
        }
    };
}

primitive_types! {
    /// Boolean; one bit of information, stored in a byte unless a layout packs it.
    PRED = 1, "pred", 1, Boolean;
    /// 8-bit signed integer.
    S8 = 2, "s8", 8, SignedInteger;
    /// 16-bit signed integer.
    S16 = 3, "s16", 16, SignedInteger;
    /// 32-bit signed integer.
    S32 = 4, "s32", 32, SignedInteger;
    /// 64-bit signed integer.
    S64 = 5, "s64", 64, SignedInteger;
    /// 8-bit unsigned integer.
    U8 = 6, "u8", 8, UnsignedInteger;
    /// 16-bit unsigned integer.
    U16 = 7, "u16", 16, UnsignedInteger;
    /// 32-bit unsigned integer.
    U32 = 8, "u32", 32, UnsignedInteger;
    /// 64-bit unsigned integer.
    U64 = 9, "u64", 64, UnsignedInteger;
    /// IEEE half precision.
    F16 = 10, "f16", 16, FloatWithInfinity;
    /// IEEE single precision.
    F32 = 11, "f32", 32, FloatWithInfinity;
    /// IEEE double precision.
    F64 = 12, "f64", 64, FloatWithInfinity;
    /// A tuple of shapes.
    TUPLE = 13, "tuple", 0, Tuple;
    /// An opaque handle (`OPAQUE_TYPE` in the proto, `opaque` in text).
    OPAQUE_TYPE = 14, "opaque", 0, Opaque;
    /// Complex number of two f32.
    C64 = 15, "c64", 64, Complex;
    /// bfloat16.
    BF16 = 16, "bf16", 16, FloatWithInfinity;
    /// An ordering token.
    TOKEN = 17, "token", 0, Token;
    /// Complex number of two f64.
    C128 = 18, "c128", 128, Complex;
    /// 8-bit float, 5 exponent and 2 mantissa bits.
    F8E5M2 = 19, "f8e5m2", 8, FloatWithInfinity;
    /// 8-bit float, 4 exponent and 3 mantissa bits, finite only.
    F8E4M3FN = 20, "f8e4m3fn", 8, FiniteFloat;
    /// 4-bit signed integer.
    S4 = 21, "s4", 4, SignedInteger;
    /// 4-bit unsigned integer.
    U4 = 22, "u4", 4, UnsignedInteger;
    /// 8-bit float, 4 exponent and 3 mantissa bits, exponent bias 11, finite, unsigned zero.
    F8E4M3B11FNUZ = 23, "f8e4m3b11fnuz", 8, FiniteFloat;
    /// 8-bit float, 5 exponent and 2 mantissa bits, finite, unsigned zero.
    F8E5M2FNUZ = 24, "f8e5m2fnuz", 8, FiniteFloat;
    /// 8-bit float, 4 exponent and 3 mantissa bits, finite, unsigned zero.
    F8E4M3FNUZ = 25, "f8e4m3fnuz", 8, FiniteFloat;
    /// 2-bit signed integer.
    S2 = 26, "s2", 2, SignedInteger;
    /// 2-bit unsigned integer.
    U2 = 27, "u2", 2, UnsignedInteger;
    /// 8-bit IEEE-style float, 4 exponent and 3 mantissa bits.
    F8E4M3 = 28, "f8e4m3", 8, FloatWithInfinity;
    /// 8-bit IEEE-style float, 3 exponent and 4 mantissa bits.
    F8E3M4 = 29, "f8e3m4", 8, FloatWithInfinity;
    /// 1-bit signed integer.
    S1 = 30, "s1", 1, SignedInteger;
    /// 1-bit unsigned integer.
    U1 = 31, "u1", 1, UnsignedInteger;
    /// MX 4-bit float, 2 exponent and 1 mantissa bit, finite only.
    F4E2M1FN = 32, "f4e2m1fn", 4, FiniteFloat;
    /// MX 8-bit scale: exponent only, no zero, no sign.
    F8E8M0FNU = 33, "f8e8m0fnu", 8, FiniteFloat;
    /// A buffer wrapping one array shape.
    BUFFER = 34, "buffer", 0, Buffer;
    /// MX 6-bit float, 3 exponent and 2 mantissa bits, finite only.
    F6E3M2FN = 35, "f6e3m2fn", 6, FiniteFloat;
    /// MX 6-bit float, 2 exponent and 3 mantissa bits, finite only.
    F6E2M3FN = 36, "f6e2m3fn", 6, FiniteFloat;
}

impl PrimitiveType {
    /// The proto number.
    pub const fn as_i32(self) -> i32 {
        self as i32
    }

    /// Bytes per element (`ShapeUtil::ByteSizeOfPrimitiveType`): the bit width rounded up to
    /// whole bytes, so every sub-byte type takes 1. `None` for non-array types.
    pub const fn byte_width(self) -> Option<u32> {
        match self.bit_width() {
            Some(bits) => Some(bits.div_ceil(8)),
            None => None,
        }
    }

    /// Whether shapes of this type are arrays (`IsArrayType`): everything but tuple, opaque,
    /// token and buffer.
    pub const fn is_array(self) -> bool {
        self.bit_width().is_some()
    }

    /// Whether this is an array type narrower than a byte, other than PRED
    /// (`IsSubByteNonPredType`): s1, s2, s4, u1, u2, u4, f4e2m1fn and the F6 types.
    pub const fn is_sub_byte(self) -> bool {
        match self.bit_width() {
            Some(bits) => bits < 8 && !matches!(self, Self::PRED),
            None => false,
        }
    }

    /// Signed or unsigned integer.
    pub const fn is_integral(self) -> bool {
        matches!(self.category(), Category::SignedInteger | Category::UnsignedInteger)
    }

    /// Signed integer.
    pub const fn is_signed_integral(self) -> bool {
        matches!(self.category(), Category::SignedInteger)
    }

    /// Unsigned integer.
    pub const fn is_unsigned_integral(self) -> bool {
        matches!(self.category(), Category::UnsignedInteger)
    }

    /// Real floating point (with or without infinities).
    pub const fn is_floating_point(self) -> bool {
        matches!(self.category(), Category::FloatWithInfinity | Category::FiniteFloat)
    }

    /// Complex.
    pub const fn is_complex(self) -> bool {
        matches!(self.category(), Category::Complex)
    }

    /// The type with this text name (XLA's `StringToPrimitiveType`: exact and case-sensitive),
    /// `tuple` and `buffer` included. The one name look-up: `FromStr` and the text parser use
    /// it.
    ///
    /// ```
    /// use xla_shape::PrimitiveType;
    /// assert_eq!(PrimitiveType::from_name("bf16"), Some(PrimitiveType::BF16));
    /// assert_eq!(PrimitiveType::from_name("BF16"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// The generated prost enum value.
    pub fn to_proto(self) -> crate::proto::PrimitiveType {
        // Every hand-written value exists in the vendored schema (checked by the schema test).
        crate::proto::PrimitiveType::try_from(self.as_i32()).unwrap_or_default()
    }
}

impl From<PrimitiveType> for i32 {
    fn from(t: PrimitiveType) -> i32 {
        t.as_i32()
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_spec() {
        assert_eq!(PrimitiveType::ALL.len(), 36);
        for (i, t) in PrimitiveType::ALL.iter().enumerate() {
            assert_eq!(t.as_i32(), i32::try_from(i).unwrap() + 1, "{t:?} is out of order");
            assert_eq!(PrimitiveType::from_i32(t.as_i32()), Some(*t));
            assert_eq!(t.name().parse::<PrimitiveType>().unwrap(), *t);
        }
        assert_eq!(PrimitiveType::from_i32(0), None);
        assert_eq!(PrimitiveType::from_i32(37), None);
        assert_eq!(PrimitiveType::from_i32(-1), None);
    }

    #[test]
    fn string_to_primitive_type() {
        // vectors.md group 36.
        for (s, t) in [
            ("f32", PrimitiveType::F32),
            ("tuple", PrimitiveType::TUPLE),
            ("pred", PrimitiveType::PRED),
            ("s32", PrimitiveType::S32),
            ("opaque", PrimitiveType::OPAQUE_TYPE),
            ("f6e3m2fn", PrimitiveType::F6E3M2FN),
            ("f6e2m3fn", PrimitiveType::F6E2M3FN),
        ] {
            assert_eq!(s.parse::<PrimitiveType>().unwrap(), t);
        }
        for bad in ["F32", "Pred", "preD", "opaque_type", "primitive_type_invalid", ""] {
            let err = bad.parse::<PrimitiveType>().unwrap_err();
            assert!(err.to_string().contains("invalid element type string"), "{err}");
        }
    }

    #[test]
    fn widths_and_categories() {
        use PrimitiveType as T;
        assert_eq!(T::F32.byte_width(), Some(4));
        assert_eq!(T::F64.byte_width(), Some(8));
        assert_eq!(T::C64.byte_width(), Some(8));
        assert_eq!(T::C128.byte_width(), Some(16));
        assert_eq!(T::PRED.bit_width(), Some(1));
        assert_eq!(T::PRED.byte_width(), Some(1));
        assert_eq!(T::F6E2M3FN.bit_width(), Some(6));
        assert_eq!(T::F6E2M3FN.byte_width(), Some(1));
        assert_eq!(T::TUPLE.byte_width(), None);
        assert_eq!(T::TOKEN.bit_width(), None);
        let sub_byte: Vec<_> = T::ALL.iter().filter(|t| t.is_sub_byte()).map(|t| t.name()).collect();
        assert_eq!(sub_byte, ["s4", "u4", "s2", "u2", "s1", "u1", "f4e2m1fn", "f6e3m2fn", "f6e2m3fn"]);
        let with_inf: Vec<_> =
            T::ALL.iter().filter(|t| t.category() == Category::FloatWithInfinity).map(|t| t.name()).collect();
        assert_eq!(with_inf, ["f16", "f32", "f64", "bf16", "f8e5m2", "f8e4m3", "f8e3m4"]);
        assert!(!T::BUFFER.is_array() && !T::OPAQUE_TYPE.is_array() && T::PRED.is_array());
        assert_eq!(T::BF16.to_proto(), crate::proto::PrimitiveType::Bf16);
    }
}
