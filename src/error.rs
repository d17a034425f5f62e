//! The crate's one error type.
//!
//! Every failure — bytes that are not a valid protobuf, a field the schema does not know, a shape
//! XLA would reject, a malformed shape string, an index out of bounds — is an [`Error`]. Variants
//! carry the numbers that explain the failure and, where the failure sits inside a message, the
//! [`FieldPath`] of the offending field (`tuple_shapes[2].layout.minor_to_major[1]`).
//!
//! Messages are lowercase and contain the key phrase of XLA's own wording ("does not have a
//! layout", "duplicate values", "invalid tiles", …) so they can be matched against XLA logs.

use std::fmt;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The path of a field inside a message, written as XLA users read it:
/// `tuple_shapes[2].layout.minor_to_major[1]`, `parameters[0].dimensions[1]`, `result`.
///
/// The root of the message is the empty path, displayed as `<root>`.
///
/// ```
/// use xla_shape::error::FieldPath;
/// let path = FieldPath::root().field("tuple_shapes").index(2).field("layout");
/// assert_eq!(path.as_str(), "tuple_shapes[2].layout");
/// assert_eq!(FieldPath::root().to_string(), "<root>");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(String);

impl FieldPath {
    /// The path of the message itself.
    pub fn root() -> Self {
        Self(String::new())
    }

    /// This path extended by a field name.
    #[must_use]
    pub fn field(mut self, name: &str) -> Self {
        if !self.0.is_empty() {
            self.0.push('.');
        }
        self.0.push_str(name);
        self
    }

    /// This path extended by an element index of a repeated field.
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        use fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(self.0, "[{index}]");
        self
    }

    /// The path as text; empty for the root.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root path.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() { f.write_str("<root>") } else { f.write_str(&self.0) }
    }
}

impl From<&str> for FieldPath {
    fn from(path: &str) -> Self {
        Self(path.to_owned())
    }
}

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

/// Why a `LiteralProto` does not hold the values its shape describes (the [`Error::Literal`]
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

/// A literal problem and where it sits (boxed in [`Error::Literal`] to keep `Error` small).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LiteralError {
    /// The literal or field, e.g. `tuple_literals[1].f32s`.
    pub path: FieldPath,
    /// What is wrong.
    pub problem: LiteralProblem,
}

/// Why a shape's structure is malformed (the [`Error::MalformedStructure`] class).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StructureProblem {
    /// A tuple, token or opaque shape has `dimensions` or `is_dynamic_dimension` (XLA: "This type
    /// cannot have dimensions.").
    CannotHaveDimensions {
        /// The kind of shape: `"tuple"`, `"token"` or `"opaque"`.
        kind: &'static str,
    },
    /// A tuple, token or opaque shape has a layout.
    CannotHaveLayout {
        /// The kind of shape: `"tuple"`, `"token"` or `"opaque"`.
        kind: &'static str,
    },
    /// An array, token or opaque shape has `tuple_shapes`.
    NonTupleHasTupleShapes,
    /// `is_dynamic_dimension` is non-empty and its length differs from `dimensions`.
    DynamicCountMismatch {
        /// Entries in `is_dynamic_dimension`.
        dynamic: usize,
        /// Entries in `dimensions`.
        dimensions: usize,
    },
    /// A BUFFER node carries its own dimensions or layout (they belong to `tuple_shapes[0]`).
    BufferHasOwnFields,
    /// A BUFFER does not wrap exactly one shape.
    BufferArity {
        /// Entries in `tuple_shapes`.
        count: usize,
    },
    /// A BUFFER wraps something other than an array.
    BufferNotArray {
        /// The raw element type of the wrapped shape.
        element_type: i32,
    },
    /// A program shape's `parameter_names` and `parameters` differ in length.
    ParameterNameCount {
        /// Entries in `parameters`.
        parameters: usize,
        /// Entries in `parameter_names`.
        names: usize,
    },
}

impl fmt::Display for StructureProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CannotHaveDimensions { kind } => {
                write!(f, "this type cannot have dimensions ({kind} shape)")
            }
            Self::CannotHaveLayout { kind } => write!(f, "a {kind} shape should not have a layout"),
            Self::NonTupleHasTupleShapes => f.write_str("non-tuple type contains tuple_shapes"),
            Self::DynamicCountMismatch { dynamic, dimensions } => write!(
                f,
                "number of is_dynamic_dimension fields ({dynamic}) does not match number of \
                 dimension fields ({dimensions})"
            ),
            Self::BufferHasOwnFields => {
                f.write_str("a buffer shape keeps its dimensions and layout in tuple_shapes[0]")
            }
            Self::BufferArity { count } => {
                write!(f, "buffer shape must have exactly one tuple shape, found {count}")
            }
            Self::BufferNotArray { element_type } => {
                write!(f, "buffer shape must have array shape, found element type {element_type}")
            }
            Self::ParameterNameCount { parameters, names } => write!(
                f,
                "program shape has different numbers of parameters and parameter names: \
                 {parameters} vs {names}"
            ),
        }
    }
}

/// Why a dense layout is invalid (the [`Error::InvalidLayout`] class).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LayoutProblem {
    /// `minor_to_major` has the wrong number of entries.
    MinorToMajorLength {
        /// Entries in `minor_to_major`.
        len: usize,
        /// Dimensions of the shape.
        rank: usize,
    },
    /// A `minor_to_major` entry is not a dimension number of the shape.
    MinorToMajorOutOfBounds {
        /// The entry.
        value: i64,
    },
    /// A `minor_to_major` entry appears twice.
    MinorToMajorDuplicate {
        /// The entry.
        value: i64,
    },
    /// A sparse-era per-dimension list (`dim_level_types`, `dim_unique`, `dim_ordered`) has the
    /// wrong number of entries.
    ListLength {
        /// The field name.
        field: &'static str,
        /// Entries in the field.
        len: usize,
        /// Dimensions of the shape.
        rank: usize,
    },
    /// A `dim_level_types` entry that is not a `DimLevelType`.
    InvalidLevelType {
        /// The raw value.
        value: i32,
    },
    /// The legacy `format` is not `INVALID_FORMAT` (absent), `DENSE` or `SPARSE`.
    InvalidFormat {
        /// The raw value.
        value: i32,
    },
    /// `tail_padding_alignment_in_elements` is negative.
    TailPadding {
        /// The value.
        value: i64,
    },
    /// A tile has no dimensions.
    EmptyTile,
    /// A tile dimension is 0, or negative but not the combine dimension `*` (`INT64_MIN`).
    TileDimension {
        /// The value.
        value: i64,
    },
    /// A combine dimension `*` in the most minor tile position: there is nothing to combine into.
    TrailingCombine,
    /// `element_size_in_bits` is negative.
    NegativeElementSize {
        /// The value.
        value: i64,
    },
    /// Legacy `padded_dimensions` together with tiles (no XLA ever wrote both).
    PaddingWithTiles,
    /// Legacy `padded_dimensions` has the wrong number of entries.
    PaddedCount {
        /// Entries in `padded_dimensions`.
        count: usize,
        /// Dimensions of the shape.
        rank: usize,
    },
    /// Legacy padding on an unbounded dynamic dimension.
    PaddedUnbounded {
        /// The logical dimension.
        dimension: usize,
    },
    /// A split config names a physical dimension the shape does not have.
    SplitConfigDimension {
        /// The physical dimension.
        dimension: i64,
    },
    /// A padded extent smaller than its dimension.
    PaddingTooSmall {
        /// The logical dimension.
        dimension: usize,
        /// The padded extent.
        padded: i64,
        /// The dimension size.
        size: i64,
    },
}

impl fmt::Display for LayoutProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MinorToMajorLength { len, rank } => {
                write!(f, "layout minor_to_major field contains {len} elements, but shape has {rank} dimensions")
            }
            Self::MinorToMajorOutOfBounds { value } => {
                write!(f, "layout minor_to_major field has out-of-bounds value: {value}")
            }
            Self::MinorToMajorDuplicate { value } => {
                write!(f, "layout minor_to_major field has duplicate values: {value}")
            }
            Self::ListLength { field, len, rank } => {
                write!(f, "layout {field} field contains {len} elements, but shape has {rank} dimensions")
            }
            Self::InvalidLevelType { value } => {
                write!(f, "layout dim_level_types has invalid level encoding {value}")
            }
            Self::InvalidFormat { value } => write!(f, "layout has an invalid format ({value})"),
            Self::TailPadding { value } => {
                write!(f, "layout tail_padding_alignment_in_elements field is <= 0: {{{value}}}")
            }
            Self::EmptyTile => f.write_str("layout has invalid tiles: a tile has no dimensions"),
            Self::TileDimension { value } => write!(
                f,
                "layout has invalid tiles: tile dimension must be positive or * (`INT64_MIN`), \
                 found {value}"
            ),
            Self::TrailingCombine => f.write_str(
                "layout has invalid tiles: a combine dimension (*) in the most minor tile \
                 position has nothing to combine into",
            ),
            Self::NegativeElementSize { value } => {
                write!(f, "layout element_size_in_bits field is negative: {value}")
            }
            Self::PaddingWithTiles => f.write_str("padded_dimensions cannot be combined with tiles"),
            Self::PaddedCount { count, rank } => {
                write!(f, "layout has {count} padded dimensions, but shape is rank {rank}")
            }
            Self::PaddedUnbounded { dimension } => {
                write!(f, "dimension {dimension} is unbounded dynamic and cannot be padded")
            }
            Self::SplitConfigDimension { dimension } => {
                write!(f, "split config has out-of-bounds physical dimension: {dimension}")
            }
            Self::PaddingTooSmall { dimension, padded, size } => write!(
                f,
                "for dimension {dimension}, dimension padding ({padded}) is smaller than the \
                 dimension size ({size}) of the shape"
            ),
        }
    }
}

/// Every error the crate returns.
///
/// The enum is `#[non_exhaustive]`: match the classes you handle and keep a wildcard arm.
///
/// ```
/// use xla_shape::{Error, PrimitiveType, make};
/// let err = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[1, 1]).unwrap_err();
/// assert!(matches!(err, Error::InvalidLayout { .. }));
/// assert!(err.to_string().contains("duplicate values"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a valid protobuf encoding of the message (including prost's limit of
    /// 100 nested messages).
    #[error("invalid protobuf encoding of {message}: {reason}")]
    Decode {
        /// The message type being decoded, e.g. `"ShapeProto"`.
        message: &'static str,
        /// What the decoder found.
        reason: String,
    },

    /// The bytes contain a field the schema does not define; prost would drop it silently.
    #[error("unknown field {field_number} ({wire_type}) at {path}")]
    UnknownField {
        /// The message holding the field.
        path: FieldPath,
        /// The field number.
        field_number: u32,
        /// The wire type of the field.
        wire_type: WireType,
    },

    /// The bytes are valid but not canonically encoded, so re-encoding would change them.
    #[error("non-canonical encoding of field {field_number} at {path}: {kind}")]
    NonCanonical {
        /// The field.
        path: FieldPath,
        /// The field number.
        field_number: u32,
        /// What is not canonical.
        kind: NonCanonicalKind,
    },

    /// Shapes nest deeper than the limit ([`crate::MAX_DEPTH`]).
    #[error("shape nesting depth exceeds the limit of {limit} at {path}")]
    TooDeep {
        /// The first shape beyond the limit.
        path: FieldPath,
        /// The limit.
        limit: usize,
    },

    /// `element_type` is 0 or not a known `PrimitiveType`, or not allowed where it appears.
    #[error("invalid element type {value} at {path}")]
    InvalidElementType {
        /// The field.
        path: FieldPath,
        /// The raw value.
        value: i32,
    },

    /// Fields that do not belong to this kind of shape, or an inconsistent structure.
    #[error("malformed shape at {path}: {problem}")]
    MalformedStructure {
        /// The shape or field.
        path: FieldPath,
        /// What is wrong.
        problem: StructureProblem,
    },

    /// A negative dimension size, or `INT64_MIN` (unbounded) on a static dimension.
    #[error("{}", invalid_dimension_message(path, *index, *size))]
    InvalidDimension {
        /// The `dimensions` entry.
        path: FieldPath,
        /// The dimension number.
        index: usize,
        /// The size.
        size: i64,
    },

    /// An element count, size, stride or offset does not fit in 64 bits.
    #[error("overflow at {path}: {what} may overflow int64_t")]
    Overflow {
        /// Where the overflow happened.
        path: FieldPath,
        /// What overflowed, e.g. `"the element count (dimensions overflow)"`, `"shape size"` or
        /// `"padded size"`.
        what: &'static str,
    },

    /// Strict validation: an array shape has no layout.
    #[error("shape {shape} does not have a layout (at {path})")]
    MissingLayout {
        /// The shape.
        path: FieldPath,
        /// The shape, printed without layout.
        shape: String,
    },

    /// A malformed dense layout.
    #[error("invalid layout at {path}: {problem}")]
    InvalidLayout {
        /// The offending field.
        path: FieldPath,
        /// What is wrong.
        problem: LayoutProblem,
    },

    /// A sparse-only field is set. The crate supports dense layouts only.
    #[error("sparse layouts are not supported: {field} = {value} at {path}, but the shape is not a sparse array")]
    SparseUnsupported {
        /// The offending field.
        path: FieldPath,
        /// The field name, e.g. `"index_primitive_type"`.
        field: &'static str,
        /// The raw value (1 for a present `physical_shape`, 0 for a `false` flag).
        value: i64,
    },

    /// A shape or layout string does not follow XLA's grammar, or XLA would reject it.
    #[error("parse error at byte {position}: expected {expected}, found {found} in `{input}`")]
    Parse {
        /// Byte offset of the failing token in the input.
        position: usize,
        /// What the parser expected.
        expected: String,
        /// What it found.
        found: String,
        /// The input, shortened around the failing position if it is long.
        input: String,
    },

    /// A multi-index has the wrong length for the shape.
    #[error("index has {actual} entries, but the shape has {expected} dimensions")]
    IndexRank {
        /// Dimensions of the shape.
        expected: usize,
        /// Entries in the index.
        actual: usize,
    },

    /// A multi-index entry is negative or not below its dimension's size.
    #[error("index {index} is out of bounds for dimension {dimension} of size {bound}")]
    IndexOutOfBounds {
        /// The dimension.
        dimension: usize,
        /// The index entry.
        index: i64,
        /// The dimension's size.
        bound: i64,
    },

    /// A linear index or slot is not below its range.
    #[error("{what} {value} is out of range 0..{bound}")]
    OutOfRange {
        /// What the value is, e.g. `"slot"` or `"linear index"`.
        what: &'static str,
        /// The value.
        value: i64,
        /// The exclusive upper bound.
        bound: i64,
    },

    /// A dimension number is not a dimension of the shape.
    #[error("dimension {dimension} is out of range for a shape of rank {rank}")]
    DimensionOutOfRange {
        /// The dimension number as given (possibly negative).
        dimension: i64,
        /// The rank.
        rank: usize,
    },

    /// An argument that the operation cannot accept.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The operation needs an array, but the shape is a tuple, token or opaque.
    #[error("{operation} needs an array shape, but the shape is {kind}")]
    NotAnArray {
        /// The operation.
        operation: &'static str,
        /// The kind of shape found: `"a tuple"`, `"a token"`, `"opaque"`.
        kind: &'static str,
    },

    /// The operation needs sizes, but a dimension is unbounded dynamic (`?`).
    #[error("dimension {dimension} is unbounded dynamic (?), so {operation} is undefined")]
    UnboundedDimension {
        /// The operation.
        operation: &'static str,
        /// The dimension.
        dimension: usize,
    },

    /// A `LiteralProto` does not hold the values its shape describes.
    #[error("invalid literal at {}: {}", .0.path, .0.problem)]
    Literal(Box<LiteralError>),

    /// A relayout's endpoints do not describe the same array, or a buffer or strided view does
    /// not fit (boxed: keeps `Error` small).
    #[error("relayout: {0}")]
    Relayout(Box<RelayoutProblem>),

    /// An input exceeds a limit that protects the process.
    #[error("{limit} limit exceeded: {value} is more than {max}")]
    LimitExceeded {
        /// The limit, e.g. `"input size"`.
        limit: &'static str,
        /// The value found.
        value: u64,
        /// The maximum allowed.
        max: u64,
    },
}

/// Carries both XLA wordings: the constructors' "Invalid dimension size" and the validator's
/// "Negative dimension at index".
fn invalid_dimension_message(path: &FieldPath, index: usize, size: i64) -> String {
    if size == i64::MIN {
        format!(
            "invalid dimension size {size}, is_dynamic=false at {path}: only dynamic dimensions may be \
             unbounded (?)"
        )
    } else {
        format!("invalid dimension size {size} at {path}: negative dimension at index {index}: {size}")
    }
}

impl Error {
    /// The field path the error points at, if it points into a message.
    ///
    /// ```
    /// use xla_shape::{proto, Shape};
    /// let p = proto::ShapeProto { element_type: 11, dimensions: vec![2, -1], ..Default::default() };
    /// let err = Shape::try_new_optional_layout(&p).unwrap_err();
    /// assert_eq!(err.path().unwrap().as_str(), "dimensions[1]");
    /// ```
    pub fn path(&self) -> Option<&FieldPath> {
        match self {
            Self::UnknownField { path, .. }
            | Self::NonCanonical { path, .. }
            | Self::TooDeep { path, .. }
            | Self::InvalidElementType { path, .. }
            | Self::MalformedStructure { path, .. }
            | Self::InvalidDimension { path, .. }
            | Self::Overflow { path, .. }
            | Self::MissingLayout { path, .. }
            | Self::InvalidLayout { path, .. }
            | Self::SparseUnsupported { path, .. } => Some(path),
            Self::Literal(error) => Some(&error.path),
            _ => None,
        }
    }
}

/// Which buffer of a relayout a [`RelayoutProblem`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelayoutSide {
    /// The buffer read from.
    Source,
    /// The buffer written to.
    Destination,
}

impl fmt::Display for RelayoutSide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Source => "source",
            Self::Destination => "destination",
        })
    }
}

/// Why a relayout cannot be planned or run ([`Error::Relayout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RelayoutProblem {
    /// The two endpoints hold different element types.
    ElementType {
        /// The source's element type.
        source: crate::primitive::PrimitiveType,
        /// The destination's element type.
        destination: crate::primitive::PrimitiveType,
    },
    /// The two endpoints have different ranks.
    Rank {
        /// The source's rank.
        source: usize,
        /// The destination's rank.
        destination: usize,
    },
    /// A dimension (its bound, for a dynamic one) differs between the endpoints.
    Dimension {
        /// The logical dimension.
        dimension: usize,
        /// Its size in the source.
        source: u64,
        /// Its size in the destination.
        destination: u64,
    },
    /// A buffer's length is not its endpoint's physical byte size.
    BufferLength {
        /// Which buffer.
        side: RelayoutSide,
        /// The bytes the endpoint needs.
        expected: u64,
        /// The buffer's length.
        actual: u64,
    },
    /// A strided view has a different number of strides than dimensions.
    StrideCount {
        /// The number of dimensions.
        dimensions: usize,
        /// The number of strides.
        strides: usize,
    },
    /// A strided view reaches bytes before the start of its buffer.
    BeforeBuffer {
        /// The lowest byte offset an element starts at (negative; saturated at `i64::MIN`).
        first: i64,
    },
    /// A strided destination would write two elements to overlapping bytes.
    Overlap {
        /// The logical dimension whose stride is too small for the dimensions inside it.
        dimension: usize,
        /// Its byte stride.
        stride: i64,
    },
    /// A strided view of an element type without a whole number of bytes per element slot.
    NotByteAddressable {
        /// The element type.
        element_type: crate::primitive::PrimitiveType,
    },
}

impl fmt::Display for RelayoutProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ElementType { source, destination } => {
                write!(f, "element types differ: source {source}, destination {destination}")
            }
            Self::Rank { source, destination } => {
                write!(f, "ranks differ: source {source}, destination {destination}")
            }
            Self::Dimension { dimension, source, destination } => {
                write!(f, "dimensions[{dimension}] differs: source {source}, destination {destination}")
            }
            Self::BufferLength { side, expected, actual } => {
                write!(f, "{side} buffer has {actual} bytes, expected {expected}")
            }
            Self::StrideCount { dimensions, strides } => {
                write!(f, "strided view has {strides} byte_strides for {dimensions} dimensions")
            }
            Self::BeforeBuffer { first } => {
                write!(f, "strided view reaches byte {first}, before the start of its buffer")
            }
            Self::Overlap { dimension, stride } => write!(
                f,
                "destination view overlaps itself: byte_strides[{dimension}] = {stride} is smaller \
                 than the elements inside it"
            ),
            Self::NotByteAddressable { element_type } => {
                write!(f, "a strided view of {element_type} needs whole bytes per element")
            }
        }
    }
}
