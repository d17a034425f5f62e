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

mod hlo_text;
mod io;
mod kind;
mod literal;
mod path;
mod problem;
mod relayout;
mod shard_buffer;
mod sharding;
mod wire;

pub use hlo_text::{HloTextError, HloTextProblem};
pub use io::{FileError, FileOperation};
pub use kind::{Limit, Quantity, RangeKind, ShapeCategory, SparseField};
pub use literal::{LiteralError, LiteralProblem};
pub use path::FieldPath;
pub use problem::{ArgumentProblem, CopyMismatch, Extreme, LayoutProblem, StructureProblem};
pub use relayout::{RelayoutProblem, RelayoutSide};
pub use shard_buffer::ShardBufferProblem;
pub use sharding::{AxisList, NamedShardingProblem, ShardingError, ShardingProblem};
pub use wire::{NonCanonicalKind, WireType};

/// Bytes that are not a valid protobuf encoding ([`Error::Decode`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The message type being decoded, e.g. `"ShapeProto"`.
    pub message: &'static str,
    /// What the decoder found.
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid protobuf encoding of {}: {}", self.message, self.reason)
    }
}

/// A shape or layout string the parser rejects ([`Error::Parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset of the failing token in the input.
    pub position: usize,
    /// What the parser expected.
    pub expected: String,
    /// What it found.
    pub found: String,
    /// The input, shortened around the failing position if it is long.
    pub input: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "parse error at byte {}: expected {}, found {} in `{}`",
            self.position, self.expected, self.found, self.input
        )
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
    #[error("{0}")]
    Decode(Box<DecodeError>),

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
        problem: Box<StructureProblem>,
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
        /// What overflowed.
        what: Quantity,
    },

    /// Strict validation: an array shape has no layout.
    #[error("shape {shape} does not have a layout (at {path})")]
    MissingLayout {
        /// The shape.
        path: FieldPath,
        /// The shape, printed without layout.
        shape: Box<str>,
    },

    /// A malformed dense layout.
    #[error("invalid layout at {path}: {problem}")]
    InvalidLayout {
        /// The offending field.
        path: FieldPath,
        /// What is wrong.
        problem: Box<LayoutProblem>,
    },

    /// A sparse-only field is set. The crate supports dense layouts only.
    #[error("sparse layouts are not supported: {field} = {value} at {path}, but the shape is not a sparse array")]
    SparseUnsupported {
        /// The offending field.
        path: FieldPath,
        /// The field.
        field: SparseField,
        /// The raw value (1 for a present `physical_shape`, 0 for a `false` flag).
        value: i64,
    },

    /// A shape or layout string does not follow XLA's grammar, or XLA would reject it.
    #[error("{0}")]
    Parse(Box<ParseError>),

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
        /// What the value is.
        what: RangeKind,
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
    InvalidArgument(Box<ArgumentProblem>),

    /// The operation needs an array, but the shape is a tuple, token or opaque.
    #[error("{operation} needs an array shape, but the shape is {}", kind.with_article())]
    NotAnArray {
        /// The operation.
        operation: &'static str,
        /// The kind of shape found.
        kind: ShapeCategory,
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

    /// A sharding XLA would refuse, or one that does not fit the shape it is checked against
    /// (boxed: keeps `Error` small).
    #[error("invalid sharding at {}: {}", .0.path, .0.problem)]
    Sharding(Box<ShardingError>),
    /// HLO text that does not follow XLA's grammar (boxed: keeps `Error` small). Displays as
    /// `line:column: problem`, then the line and a caret.
    #[error("{0}")]
    HloText(Box<HloTextError>),

    /// An input exceeds a limit that protects the process.
    #[error("{limit} limit exceeded: {value} is more than {max}")]
    LimitExceeded {
        /// The limit.
        limit: Limit,
        /// The value found.
        value: u64,
        /// The maximum allowed.
        max: u64,
    },

    /// Shard buffers that do not fit their sharding: missing, unknown or duplicate devices,
    /// wrong lengths, replicas that differ (boxed: keeps `Error` small).
    #[error("shard buffers: {0}")]
    ShardBuffer(Box<ShardBufferProblem>),

    /// A module file could not be opened or read (`hlo::module::Module::open`; boxed: keeps
    /// `Error` small).
    #[error("{0}")]
    File(Box<FileError>),
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
    /// An [`Error::Decode`] of `message`.
    pub fn decode(message: &'static str, reason: impl Into<String>) -> Self {
        Self::Decode(Box::new(DecodeError { message, reason: reason.into() }))
    }

    /// An [`Error::Overflow`] of `what` at `path`.
    pub fn overflow(path: FieldPath, what: Quantity) -> Self {
        Self::Overflow { path, what }
    }

    /// An [`Error::InvalidLayout`] at `path`.
    pub fn invalid_layout(path: FieldPath, problem: LayoutProblem) -> Self {
        Self::InvalidLayout { path, problem: Box::new(problem) }
    }

    /// An [`Error::MalformedStructure`] at `path`.
    pub fn malformed(path: FieldPath, problem: StructureProblem) -> Self {
        Self::MalformedStructure { path, problem: Box::new(problem) }
    }

    /// An [`Error::Sharding`] at `path`.
    pub fn sharding(path: FieldPath, problem: ShardingProblem) -> Self {
        Self::Sharding(Box::new(ShardingError { path, problem }))
    }

    /// An [`Error::InvalidArgument`].
    pub fn invalid_argument(problem: ArgumentProblem) -> Self {
        Self::InvalidArgument(Box::new(problem))
    }

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
            Self::Sharding(error) => Some(&error.path),
            _ => None,
        }
    }
}

/// Raw `element_type` values: the failing conversion is an [`Error`], so it lives here rather
/// than in `primitive`, which stays below this module.
impl TryFrom<i32> for crate::PrimitiveType {
    type Error = Error;

    /// Fails with [`Error::InvalidElementType`] for 0 and unknown values.
    fn try_from(value: i32) -> Result<Self, Error> {
        Self::from_i32(value).ok_or(Error::InvalidElementType { path: FieldPath::root(), value })
    }
}

/// XLA's `StringToPrimitiveType` ([`PrimitiveType::from_name`](crate::PrimitiveType::from_name)):
/// exact, case-sensitive text names. `tuple` and `buffer` are accepted here, though the shape
/// grammar never uses them as types.
impl std::str::FromStr for crate::PrimitiveType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Self::from_name(s)
            .ok_or_else(|| Error::invalid_argument(ArgumentProblem::UnknownElementTypeName { name: s.to_owned() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `Result` of the crate carries an `Error`; rare large payloads are boxed so that the
    /// hot paths pay for at most four words.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn error_is_at_most_32_bytes() {
        assert!(size_of::<Error>() <= 32, "{}", size_of::<Error>());
        assert_eq!(size_of::<FieldPath>(), 8);
    }

    #[test]
    fn root_and_empty_paths_are_equal() {
        assert_eq!(FieldPath::root(), FieldPath::from(""));
        assert_eq!(FieldPath::from("a").field("b").index(1).as_str(), "a.b[1]");
    }
}
