//! The small enums errors carry instead of strings: which kind of shape, which sparse field,
//! which quantity overflowed, what was out of range, which limit.

use std::fmt;

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

/// The quantity that overflowed ([`Error::Overflow`](crate::Error::Overflow)).
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

/// What an out-of-range number is ([`Error::OutOfRange`](crate::Error::OutOfRange)).
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

/// A limit that protects the process ([`Error::LimitExceeded`](crate::Error::LimitExceeded)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The length of an input.
    InputSize,
    /// The slots a map may draw.
    MapSlots,
    /// The capacity of an output buffer.
    OutputBufferCapacity,
    /// One shape inside serialized HLO (`hlo::MAX_SHAPE_BYTES`).
    HloShapeSize,
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
            Self::HloShapeSize => "shape size in an HLO module",
            Self::DrawMaxExtent => "draw max_extent",
            Self::DrawMaxSlices => "draw max_slices",
            Self::DrawMaxSlots => "draw max_slots",
        })
    }
}
