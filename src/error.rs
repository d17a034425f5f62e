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
/// The root of the message is the empty path, displayed as `<root>`. A path is one pointer wide
/// (the root allocates nothing), which keeps [`Error`] small on every hot path's `Result`.
///
/// ```
/// use xla_shape::error::FieldPath;
/// let path = FieldPath::root().field("tuple_shapes").index(2).field("layout");
/// assert_eq!(path.as_str(), "tuple_shapes[2].layout");
/// assert_eq!(FieldPath::root().to_string(), "<root>");
/// ```
#[derive(Clone, Default)]
#[allow(clippy::box_collection, reason = "one pointer wide: `Box<str>` would be two, and every `Result` pays for it")]
pub struct FieldPath(Option<Box<String>>);

impl FieldPath {
    /// The path of the message itself.
    pub fn root() -> Self {
        Self(None)
    }

    /// This path extended by a field name.
    #[must_use]
    pub fn field(mut self, name: &str) -> Self {
        let text = self.0.get_or_insert_with(Box::default);
        if !text.is_empty() {
            text.push('.');
        }
        text.push_str(name);
        self
    }

    /// This path extended by an element index of a repeated field.
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        use fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(self.0.get_or_insert_with(Box::default), "[{index}]");
        self
    }

    /// The path as text; empty for the root.
    pub fn as_str(&self) -> &str {
        self.0.as_deref().map_or("", String::as_str)
    }

    /// Whether this is the root path.
    pub fn is_root(&self) -> bool {
        self.as_str().is_empty()
    }
}

// By text: the root and an empty name are the same path.
impl PartialEq for FieldPath {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for FieldPath {}

impl std::hash::Hash for FieldPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldPath").field(&self.as_str()).finish()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_root() { f.write_str("<root>") } else { f.write_str(self.as_str()) }
    }
}

impl From<&str> for FieldPath {
    fn from(path: &str) -> Self {
        Self::root().field(path)
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

/// Why a shape's structure is malformed (the [`Error::MalformedStructure`] class).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StructureProblem {
    /// A tuple, token or opaque shape has `dimensions` or `is_dynamic_dimension` (XLA: "This type
    /// cannot have dimensions.").
    CannotHaveDimensions {
        /// The kind of shape: a tuple, token or opaque shape.
        kind: ShapeCategory,
    },
    /// A tuple, token or opaque shape has a layout.
    CannotHaveLayout {
        /// The kind of shape: a tuple, token or opaque shape.
        kind: ShapeCategory,
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
        /// The field.
        field: SparseField,
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

/// What kind of shape an element type makes: the categories error messages name.
///
/// ```
/// use xla_shape::{error::ShapeCategory, PrimitiveType};
/// assert_eq!(ShapeCategory::of(PrimitiveType::TUPLE), ShapeCategory::Tuple);
/// assert_eq!(ShapeCategory::Tuple.to_string(), "tuple");
/// assert_eq!(ShapeCategory::Opaque.with_article(), "opaque");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShapeCategory {
    /// An array of any element type.
    Array,
    /// A tuple.
    Tuple,
    /// A token.
    Token,
    /// An opaque shape.
    Opaque,
    /// A buffer wrapping an array.
    Buffer,
}

impl ShapeCategory {
    /// The category of shapes with this element type (every array type is [`Self::Array`]).
    pub fn of(element_type: crate::PrimitiveType) -> Self {
        use crate::PrimitiveType as T;
        match element_type {
            T::TUPLE => Self::Tuple,
            T::TOKEN => Self::Token,
            T::OPAQUE_TYPE => Self::Opaque,
            T::BUFFER => Self::Buffer,
            _ => Self::Array,
        }
    }

    /// The category as a noun phrase: "a tuple", "an array", "opaque".
    pub fn with_article(self) -> &'static str {
        match self {
            Self::Array => "an array",
            Self::Tuple => "a tuple",
            Self::Token => "a token",
            Self::Opaque => "opaque",
            Self::Buffer => "a buffer",
        }
    }
}

impl fmt::Display for ShapeCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Array => "array",
            Self::Tuple => "tuple",
            Self::Token => "token",
            Self::Opaque => "opaque",
            Self::Buffer => "buffer",
        })
    }
}

/// A layout field of the sparse era, which a dense layout must leave unset or all-dense.
///
/// ```
/// use xla_shape::error::SparseField;
/// assert_eq!(SparseField::DimLevelTypes.to_string(), "dim_level_types");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SparseField {
    /// The legacy `format`.
    Format,
    /// The legacy `max_sparse_elements`.
    MaxSparseElements,
    /// `index_primitive_type`.
    IndexPrimitiveType,
    /// `pointer_primitive_type`.
    PointerPrimitiveType,
    /// `physical_shape`.
    PhysicalShape,
    /// `dim_level_types`.
    DimLevelTypes,
    /// `dim_unique`.
    DimUnique,
    /// `dim_ordered`.
    DimOrdered,
}

impl SparseField {
    /// The field's name in the schema.
    pub fn name(self) -> &'static str {
        match self {
            Self::Format => "format",
            Self::MaxSparseElements => "max_sparse_elements",
            Self::IndexPrimitiveType => "index_primitive_type",
            Self::PointerPrimitiveType => "pointer_primitive_type",
            Self::PhysicalShape => "physical_shape",
            Self::DimLevelTypes => "dim_level_types",
            Self::DimUnique => "dim_unique",
            Self::DimOrdered => "dim_ordered",
        }
    }
}

impl fmt::Display for SparseField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The quantity that overflowed ([`Error::Overflow`]).
///
/// ```
/// use xla_shape::error::Quantity;
/// assert_eq!(Quantity::ShapeSize.to_string(), "shape size");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Quantity {
    /// The product of the dimensions.
    ElementCount,
    /// A size in bytes or bits.
    ShapeSize,
    /// The product of the legacy padded extents.
    PaddedSize,
    /// A padded extent.
    PaddedExtents,
    /// The shape expanded by tiling.
    TiledShape,
    /// A dimension merged from `*` tile entries.
    CombinedDimension,
    /// A linear index.
    LinearIndex,
    /// A tuple's table of element pointers.
    TupleIndexTable,
    /// The largest piece of a split dimension.
    SplitSize,
    /// The elements of one split piece.
    ElementsPerSplit,
    /// A byte stride.
    ByteStride,
    /// The slots of a buffer.
    StorageSlots,
    /// The bits of a buffer.
    StorageBits,
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ElementCount => "the element count (dimensions overflow)",
            Self::ShapeSize => "shape size",
            Self::PaddedSize => "padded size",
            Self::PaddedExtents => "padded extents",
            Self::TiledShape => "tiled shape",
            Self::CombinedDimension => "combined dimension",
            Self::LinearIndex => "linear index",
            Self::TupleIndexTable => "tuple index table",
            Self::SplitSize => "split size",
            Self::ElementsPerSplit => "elements per split",
            Self::ByteStride => "byte stride",
            Self::StorageSlots => "storage slots",
            Self::StorageBits => "storage bits",
        })
    }
}

/// What an out-of-range number is ([`Error::OutOfRange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RangeKind {
    /// A slot of a buffer.
    Slot,
    /// A linear index.
    LinearIndex,
}

impl fmt::Display for RangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Slot => "slot",
            Self::LinearIndex => "linear index",
        })
    }
}

/// A limit that protects the process ([`Error::LimitExceeded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The length of an input.
    InputSize,
    /// The slots a map may draw.
    MapSlots,
    /// The capacity of an output buffer.
    OutputBufferCapacity,
    /// The positions a picture shows along a grid axis (`draw::Options::max_extent`).
    DrawMaxExtent,
    /// The slices a picture shows (`draw::Options::max_slices`).
    DrawMaxSlices,
    /// The slots a picture's memory strip shows (`draw::Options::max_slots`).
    DrawMaxSlots,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InputSize => "input size",
            Self::MapSlots => "map slots",
            Self::OutputBufferCapacity => "output buffer capacity",
            Self::DrawMaxExtent => "draw max_extent",
            Self::DrawMaxSlices => "draw max_slices",
            Self::DrawMaxSlots => "draw max_slots",
        })
    }
}

/// Which bound of an element type's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Extreme {
    /// The lowest value (`LOWEST_PAD`).
    Lowest,
    /// The highest value (`HIGHEST_PAD`).
    Highest,
}

impl fmt::Display for Extreme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Lowest => "lowest",
            Self::Highest => "highest",
        })
    }
}

/// Where two shapes differ when copying a layout between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CopyMismatch {
    /// Two tuples of different lengths.
    TupleElementCount,
    /// A tuple against a non-tuple.
    Structure,
    /// Two arrays of different ranks.
    Rank,
}

impl fmt::Display for CopyMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::TupleElementCount => "tuple element count differs",
            Self::Structure => "shape structure differs",
            Self::Rank => "ranks differ",
        })
    }
}

/// Why an argument is unacceptable (the [`Error::InvalidArgument`] class).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ArgumentProblem {
    /// A negative (or unbounded) dimension where only static sizes are meaningful.
    NotStatic {
        /// The dimension size.
        size: i64,
    },
    /// Copying a layout between shapes of different structure.
    CannotCopyLayout {
        /// Where they differ.
        mismatch: CopyMismatch,
    },
    /// A dimension listed twice for deletion.
    DuplicateDimension {
        /// The dimension.
        dimension: usize,
    },
    /// A list that is not a permutation of `0..rank`.
    NotAPermutation {
        /// The list.
        permutation: Vec<usize>,
        /// The rank.
        rank: usize,
    },
    /// A transpose's dimension mapping that is not a permutation between the two ranks.
    NotADimensionMapping {
        /// The mapping.
        mapping: Vec<i64>,
        /// The input's rank.
        input_rank: usize,
        /// The output's rank.
        output_rank: usize,
    },
    /// Changing an array's element type to a type that makes no array.
    ChangeToNonArrayType {
        /// The type.
        element_type: crate::PrimitiveType,
    },
    /// An element type that makes no array, where an array is built.
    UnsupportedElementType {
        /// The type.
        element_type: crate::PrimitiveType,
    },
    /// A type without a byte width where one is needed.
    NoByteWidth {
        /// The type.
        element_type: crate::PrimitiveType,
    },
    /// A text name that is no element type.
    UnknownElementTypeName {
        /// The name given.
        name: String,
    },
    /// A linear index that falls on a legacy padding slot.
    PaddingSlot {
        /// The linear index.
        linear: i64,
        /// The first dimension whose coordinate lies in padding.
        dimension: usize,
        /// The coordinate.
        index: i64,
        /// The dimension's size.
        size: u64,
    },
    /// A `for_each_index` increment below 1 (XLA would loop forever).
    IncrementBelowOne {
        /// The dimension.
        dimension: usize,
        /// The increment.
        incr: i64,
    },
    /// A `for_each_index` window that leaves the array.
    WindowOutOfBounds {
        /// The dimension.
        dimension: usize,
        /// The window's base.
        base: i64,
        /// The window's count.
        count: i64,
        /// The dimension's size.
        size: i64,
    },
    /// `minor_to_major` and the dimensions differ in length.
    LayoutLength {
        /// Dimensions given.
        dimensions: usize,
        /// Entries of `minor_to_major`.
        layout: usize,
    },
    /// The dynamic flags and the dimensions differ in length.
    DynamicFlagCount {
        /// Flags given.
        flags: usize,
        /// Dimensions given.
        dimensions: usize,
    },
    /// Byte strides and dimensions differ in length.
    ByteStrideCount {
        /// Strides given.
        strides: usize,
        /// Dimensions given.
        dimensions: usize,
    },
    /// An output slice of the wrong length.
    OutputLength {
        /// Indices given.
        indices: usize,
        /// Output slots given.
        slots: usize,
    },
    /// A buffer shape around something other than an array.
    BufferOfNonArray,
    /// A tuple or opaque shape sized with a pointer size below 1.
    PointerSize {
        /// The pointer size.
        pointer_size: i64,
    },
    /// A picture's grid given the same dimension for its rows and its columns.
    GridDimensionTwice {
        /// The dimension.
        dimension: usize,
    },
    /// A limit option below the smallest value it accepts.
    BelowMinimum {
        /// The limit.
        limit: Limit,
        /// The value given.
        value: u64,
        /// The smallest value accepted.
        min: u64,
    },
    /// A raw `padding_value` that is no `PaddingValue`.
    UnknownPaddingValue {
        /// The raw value.
        value: i32,
    },
    /// Padding asked of an element type with no values.
    NoFillValue {
        /// The type.
        element_type: crate::PrimitiveType,
    },
    /// LOWEST or HIGHEST padding of a complex type (complex numbers have no order).
    ComplexExtreme {
        /// Which bound.
        extreme: Extreme,
        /// The type.
        element_type: crate::PrimitiveType,
    },
    /// LOWEST or HIGHEST padding of a type whose bound the crate does not know.
    UnknownExtreme {
        /// Which bound.
        extreme: Extreme,
        /// The type.
        element_type: crate::PrimitiveType,
    },
}

impl fmt::Display for ArgumentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotStatic { size } => write!(f, "is_untiled_layout needs static dimensions, found {size}"),
            Self::CannotCopyLayout { mismatch } => write!(f, "cannot copy layout from shape: {mismatch}"),
            Self::DuplicateDimension { dimension } => {
                write!(f, "dimension {dimension} is listed twice for deletion")
            }
            Self::NotAPermutation { permutation, rank } => {
                write!(f, "{permutation:?} is not a permutation of 0..{rank}")
            }
            Self::NotADimensionMapping { mapping, input_rank, output_rank } => write!(
                f,
                "dimension mapping {mapping:?} is not a permutation between ranks {input_rank} and {output_rank}"
            ),
            Self::ChangeToNonArrayType { element_type } => {
                write!(f, "cannot change the element type of an array to {element_type}")
            }
            Self::UnsupportedElementType { element_type } => {
                write!(f, "unsupported element type {element_type} for an array shape")
            }
            Self::NoByteWidth { element_type } => write!(f, "{element_type} has no byte width"),
            Self::UnknownElementTypeName { name } => write!(f, "invalid element type string: {name:?}"),
            Self::PaddingSlot { linear, dimension, index, size } => {
                write!(f, "linear index {linear} is a padding slot (dimension {dimension} is {index} of size {size})")
            }
            Self::IncrementBelowOne { dimension, incr } => {
                write!(f, "for_each_index: incr[{dimension}] is {incr}, must be at least 1")
            }
            Self::WindowOutOfBounds { dimension, base, count, size } => write!(
                f,
                "for_each_index: window base {base}, count {count} leaves dimension {dimension} of size {size}"
            ),
            Self::LayoutLength { dimensions, layout } => {
                write!(f, "dimensions size is {dimensions}, but layout size is {layout}")
            }
            Self::DynamicFlagCount { flags, dimensions } => {
                write!(f, "dynamic dimensions size {flags} did not match number of dimensions {dimensions}")
            }
            Self::ByteStrideCount { strides, dimensions } => {
                write!(f, "{strides} byte strides for {dimensions} dimensions")
            }
            Self::OutputLength { indices, slots } => write!(f, "{indices} indices but {slots} output slots"),
            Self::BufferOfNonArray => f.write_str("element_shape must be an array shape to create a buffer shape"),
            Self::PointerSize { pointer_size } => {
                write!(f, "pointer_size must be positive, found {pointer_size}")
            }
            Self::GridDimensionTwice { dimension } => write!(
                f,
                "the grid needs two different dimensions, but rows and columns are both dimension {dimension}"
            ),
            Self::BelowMinimum { limit, value, min } => write!(f, "{limit} {value} is below the minimum {min}"),
            Self::UnknownPaddingValue { value } => write!(f, "padding_value {value} has no known meaning"),
            Self::NoFillValue { element_type } => {
                write!(f, "padding has no fill value for element type {element_type}")
            }
            Self::ComplexExtreme { extreme, element_type } => {
                write!(f, "{extreme} padding is undefined for complex type {element_type}")
            }
            Self::UnknownExtreme { extreme, element_type } => {
                write!(f, "no {extreme} value is known for {element_type}")
            }
        }
    }
}

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
