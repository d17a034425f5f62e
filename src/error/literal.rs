//! The problems of a `LiteralProto` ([`super::Error::Literal`]).

use std::fmt;

use super::FieldPath;

/// Why a `LiteralProto` does not hold the values its shape describes (the [`super::Error::Literal`]
/// class). Counts are in elements for repeated fields and in bytes for `bytes` fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LiteralProblem {
    /// The literal has no `shape` (XLA: "`LiteralProto` has no shape").
    MissingShape,
    /// The shape holds an opaque or buffer shape, which has no values (XLA: "Literal shape cannot
    /// include `OPAQUE_TYPE` sub-shape").
    NoValues {
        /// The kind of shape: `"opaque"` or `"buffer"`.
        kind: &'static str,
    },
    /// A tuple literal has the wrong number of `tuple_literals` (XLA: "Expected N tuple elements
    /// in `LiteralProto`, has M").
    TupleCount {
        /// Elements of the tuple shape.
        expected: usize,
        /// Entries of `tuple_literals`.
        actual: usize,
    },
    /// An element of `tuple_literals` has a shape other than the tuple shape's element.
    ShapeMismatch {
        /// The element's own shape.
        found: String,
        /// The tuple shape's element.
        expected: String,
    },
    /// The field of the element type holds the wrong number of values (XLA: "Expected N elements
    /// in `LiteralProto` repeated field, has M").
    ValueCount {
        /// The field, e.g. `"f32s"`.
        field: &'static str,
        /// Values (or bytes) the shape needs.
        expected: u64,
        /// Values (or bytes) present.
        actual: u64,
    },
    /// A value field other than the element type's holds values.
    UnexpectedField {
        /// The field, e.g. `"s32s"`.
        field: &'static str,
        /// The element type of the shape (its text name; `error` does not depend on `primitive`).
        element_type: &'static str,
    },
    /// A sub-byte integer's byte holds a value outside its type's range.
    ValueOutOfRange {
        /// The element type's text name.
        element_type: &'static str,
        /// The element's index in the field (physical order).
        index: u64,
        /// The byte.
        byte: u8,
    },
    /// `sparse_indices` is set; sparse literals are not supported (XLA: "Sparse literals are not
    /// supported").
    Sparse,
    /// `dynamic_sizes` does not have one entry per dimension of a dynamic array, or is set on a
    /// static one.
    DynamicSizesCount {
        /// Entries expected (the rank, or 0 for a static array).
        expected: usize,
        /// Entries present.
        actual: usize,
    },
    /// A dynamic size is negative, above its dimension's bound, or differs from a static
    /// dimension's size.
    DynamicSize {
        /// The dimension.
        dimension: usize,
        /// The size given.
        size: i32,
        /// The dimension's size (the bound, if dynamic).
        bound: i64,
    },
    /// An array has an unbounded dynamic dimension (`?`), so no number of values fits it.
    Unbounded {
        /// The dimension.
        dimension: usize,
    },
    /// Values were given for a shape of another element type, or in the wrong number.
    ValuesMismatch {
        /// The element type of the shape (text name).
        element_type: &'static str,
        /// What the values are, e.g. `"f32"`, `"4 values"`.
        values: String,
    },
}

impl fmt::Display for LiteralProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingShape => f.write_str("literalproto has no shape"),
            Self::NoValues { kind } => write!(f, "literal shape cannot include a {kind} sub-shape"),
            Self::TupleCount { expected, actual } => {
                write!(f, "expected {expected} tuple elements in literalproto, has {actual}")
            }
            Self::ShapeMismatch { found, expected } => {
                write!(f, "tuple element has shape {found}, but the tuple shape says {expected}")
            }
            Self::ValueCount { field, expected, actual } => {
                write!(f, "expected {expected} elements in literalproto field {field}, has {actual}")
            }
            Self::UnexpectedField { field, element_type } => {
                write!(f, "field {field} holds values, but the element type is {element_type}")
            }
            Self::ValueOutOfRange { element_type, index, byte } => {
                write!(f, "byte {byte:#04x} of element {index} is out of range for {element_type}")
            }
            Self::Sparse => f.write_str("sparse literals are not supported (sparse_indices is set)"),
            Self::DynamicSizesCount { expected, actual } => {
                write!(f, "expected {expected} dynamic sizes, has {actual}")
            }
            Self::DynamicSize { dimension, size, bound } => {
                write!(f, "dynamic size {size} of dimension {dimension} is outside 0..={bound}")
            }
            Self::Unbounded { dimension } => {
                write!(f, "dimension {dimension} is unbounded dynamic (?), so a literal cannot hold it")
            }
            Self::ValuesMismatch { element_type, values } => {
                write!(f, "{values} do not fit an array of {element_type}")
            }
        }
    }
}

/// A literal problem and where it sits (boxed in [`super::Error::Literal`] to keep `Error` small).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LiteralError {
    /// The literal or field, e.g. `tuple_literals[1].f32s`.
    pub path: FieldPath,
    /// What is wrong.
    pub problem: LiteralProblem,
}
