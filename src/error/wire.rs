//! What the wire scanner reports: wire types and non-canonical encodings.

use std::fmt;

/// A protobuf wire type, as found in a field key.
///
/// ```
/// use xla_shape::error::WireType;
/// assert_eq!(WireType::from_raw(2), WireType::Len);
/// assert_eq!(WireType::Len.to_string(), "length-delimited");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WireType {
    /// 0: a varint.
    Varint,
    /// 1: eight bytes.
    Fixed64,
    /// 2: a length-delimited byte string (messages, strings, packed repeated fields).
    Len,
    /// 3: start of a group (deprecated).
    StartGroup,
    /// 4: end of a group (deprecated).
    EndGroup,
    /// 5: four bytes.
    Fixed32,
    /// 6 or 7: not a wire type.
    Invalid(u8),
}

impl WireType {
    /// The wire type for the low three bits of a field key.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            0 => Self::Varint,
            1 => Self::Fixed64,
            2 => Self::Len,
            3 => Self::StartGroup,
            4 => Self::EndGroup,
            5 => Self::Fixed32,
            other => Self::Invalid(other),
        }
    }

    /// The raw three-bit value.
    pub fn raw(self) -> u8 {
        match self {
            Self::Varint => 0,
            Self::Fixed64 => 1,
            Self::Len => 2,
            Self::StartGroup => 3,
            Self::EndGroup => 4,
            Self::Fixed32 => 5,
            Self::Invalid(raw) => raw,
        }
    }
}

impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Varint => f.write_str("varint"),
            Self::Fixed64 => f.write_str("fixed64"),
            Self::Len => f.write_str("length-delimited"),
            Self::StartGroup => f.write_str("start-group"),
            Self::EndGroup => f.write_str("end-group"),
            Self::Fixed32 => f.write_str("fixed32"),
            Self::Invalid(raw) => write!(f, "invalid wire type {raw}"),
        }
    }
}

/// How a field's encoding differs from the canonical protobuf encoding (the one C++ protobuf and
/// prost write). Such input decodes, but re-encoding it gives different bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NonCanonicalKind {
    /// A repeated scalar field written unpacked (one key per element).
    Unpacked,
    /// A singular scalar written with its default value (0, false), which proto3 omits.
    ExplicitDefault,
    /// A varint written with more bytes than needed.
    OverlongVarint,
    /// A field that appears after a field with a higher number.
    OutOfOrder,
    /// A singular field that appears more than once (the last one wins).
    Repeated,
    /// A packed repeated field with no elements, which the canonical encoding omits.
    EmptyPacked,
    /// A repeated field split over several records where the canonical encoding has one run: a
    /// repeated field interrupted by another field, or a packed field written as several records.
    Split,
    /// A varint too wide for its field's type: an `int32` or enum value outside the 32-bit range
    /// (decoders truncate it), or a `bool` other than 0 or 1 (decoders read it as `true`).
    ValueOutOfRange,
}

impl fmt::Display for NonCanonicalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unpacked => "repeated scalar field is not packed",
            Self::ExplicitDefault => "default value is encoded explicitly",
            Self::OverlongVarint => "varint is longer than necessary",
            Self::OutOfOrder => "field appears out of field-number order",
            Self::Repeated => "singular field appears more than once",
            Self::EmptyPacked => "packed field has no elements",
            Self::Split => "repeated field is split into several runs",
            Self::ValueOutOfRange => "varint value is out of range for the field's type",
        })
    }
}
