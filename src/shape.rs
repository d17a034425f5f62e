//! Validated shape views: [`Shape`], [`ArrayShape`], [`TupleShape`], [`ProgramShape`], and the
//! owned [`ShapeBuf`].
//!
//! A view borrows a raw [`ShapeProto`] (no copy) and can only be made by validating it, so
//! everything that takes a view — linearization, sizes, printing — trusts it and never checks
//! again:
//!
//! ```text
//!   bytes ──decode──▶ proto::ShapeProto ──Shape::try_new──▶ Shape<'a> ──▶ index, sizes, text
//!                        (raw, any value)       (validates once)   (borrows, trusted)
//! ```
//!
//! A view holds these invariants (spec `validation.md`):
//! 1. the element type is a known `PrimitiveType`, and the fields present fit the kind of shape;
//! 2. nesting is at most [`crate::MAX_DEPTH`] levels;
//! 3. array dimensions are ≥ 0, or `INT64_MIN` (`?`) on a dimension marked dynamic, and the element
//!    count and byte size fit in `i64`;
//! 4. a layout, where present, is a valid dense layout for its array (a permutation in
//!    `minor_to_major`, tiles of positive sizes or `*`, legacy padding no smaller than the
//!    dimensions, no sparse fields).

use std::fmt;

pub use crate::dim::Dim;
use crate::error::{Error, Result};
use crate::layout::{Layout, MinorToMajor};
use crate::primitive::PrimitiveType;
use crate::proto::{ProgramShapeProto, ShapeProto};
use crate::validate::{LayoutMode, validate_shape, validated_result};

/// A validated shape of any kind, borrowing its proto.
///
/// ```
/// use xla_shape::{Shape, ShapeKind};
/// let tuple = xla_shape::make::make_tuple_shape(&[
///     xla_shape::make::make_shape(xla_shape::PrimitiveType::F32, &[2]).unwrap(),
/// ]).unwrap();
/// let shape: Shape<'_> = tuple.view();
/// let ShapeKind::Tuple(elements) = shape.kind() else { panic!() };
/// assert_eq!(elements.len(), 1);
/// assert_eq!(shape.to_string(), "(f32[2]{0})");
/// ```
#[derive(Clone, Copy)]
pub struct Shape<'a> {
    proto: &'a ShapeProto,
    element_type: PrimitiveType,
}

/// What a [`Shape`] is.
#[derive(Debug, Clone, Copy)]
pub enum ShapeKind<'a> {
    /// An array.
    Array(ArrayShape<'a>),
    /// A tuple of shapes.
    Tuple(TupleShape<'a>),
    /// A buffer wrapping one array (printed `b(...)`).
    Buffer(ArrayShape<'a>),
    /// `token[]`.
    Token,
    /// `opaque[]`.
    Opaque,
}

impl<'a> Shape<'a> {
    /// Validates `proto` strictly (every array must have a layout; `ShapeUtil::ValidateShape`).
    ///
    /// # Errors
    ///
    /// The first validation failure; see [`crate::validate::validate_shape`].
    pub fn try_new(proto: &'a ShapeProto) -> Result<Self> {
        validate_shape(proto, LayoutMode::Strict)?;
        Ok(Self::new_unchecked(proto))
    }

    /// Validates `proto`, accepting arrays without a layout
    /// (`ShapeUtil::ValidateShapeWithOptionalLayout`). Computations treat a missing layout as the
    /// default descending one.
    ///
    /// # Errors
    ///
    /// The first validation failure; see [`crate::validate::validate_shape`].
    pub fn try_new_optional_layout(proto: &'a ShapeProto) -> Result<Self> {
        validate_shape(proto, LayoutMode::Optional)?;
        Ok(Self::new_unchecked(proto))
    }

    /// Validates `proto` in the given mode.
    ///
    /// # Errors
    ///
    /// The first validation failure; see [`crate::validate::validate_shape`].
    pub fn try_new_with_mode(proto: &'a ShapeProto, mode: LayoutMode) -> Result<Self> {
        validate_shape(proto, mode)?;
        Ok(Self::new_unchecked(proto))
    }

    /// A view of a proto that has already been validated (a subshape of a validated shape).
    pub(crate) fn new_unchecked(proto: &'a ShapeProto) -> Self {
        let element_type = PrimitiveType::from_i32(proto.element_type).unwrap_or(PrimitiveType::TUPLE);
        Self { proto, element_type }
    }

    /// The proto this view borrows.
    pub fn proto(&self) -> &'a ShapeProto {
        self.proto
    }

    /// The element type (`TUPLE`, `TOKEN`, `OPAQUE_TYPE` and `BUFFER` for non-arrays).
    pub fn element_type(&self) -> PrimitiveType {
        self.element_type
    }

    /// What kind of shape this is.
    #[allow(clippy::indexing_slicing)] // a validated buffer has exactly one tuple shape
    pub fn kind(&self) -> ShapeKind<'a> {
        match self.element_type {
            PrimitiveType::TUPLE => ShapeKind::Tuple(TupleShape { proto: self.proto }),
            PrimitiveType::TOKEN => ShapeKind::Token,
            PrimitiveType::OPAQUE_TYPE => ShapeKind::Opaque,
            PrimitiveType::BUFFER => ShapeKind::Buffer(ArrayShape::new_unchecked(&self.proto.tuple_shapes[0])),
            element_type => ShapeKind::Array(ArrayShape { proto: self.proto, element_type }),
        }
    }

    /// The array, if this is an array shape (not a buffer).
    pub fn as_array(&self) -> Option<ArrayShape<'a>> {
        match self.kind() {
            ShapeKind::Array(array) => Some(array),
            _ => None,
        }
    }

    /// The array, if this is an array shape or a buffer (the wrapped array).
    pub fn array_or_buffer(&self) -> Option<ArrayShape<'a>> {
        match self.kind() {
            ShapeKind::Array(array) | ShapeKind::Buffer(array) => Some(array),
            _ => None,
        }
    }

    /// The tuple, if this is a tuple shape.
    pub fn as_tuple(&self) -> Option<TupleShape<'a>> {
        match self.kind() {
            ShapeKind::Tuple(tuple) => Some(tuple),
            _ => None,
        }
    }

    /// Whether this is an array (`IsArray`; buffers are not).
    pub fn is_array(&self) -> bool {
        self.element_type.is_array()
    }

    /// Whether this is a tuple.
    pub fn is_tuple(&self) -> bool {
        self.element_type == PrimitiveType::TUPLE
    }

    /// Whether this is a buffer.
    pub fn is_buffer(&self) -> bool {
        self.element_type == PrimitiveType::BUFFER
    }

    /// Whether this is a token.
    pub fn is_token(&self) -> bool {
        self.element_type == PrimitiveType::TOKEN
    }

    /// Whether this is opaque.
    pub fn is_opaque(&self) -> bool {
        self.element_type == PrimitiveType::OPAQUE_TYPE
    }

    /// The text without layouts (`ShapeUtil::HumanString`): `f32[2,3]`, `(f32[2], s32[])`.
    pub fn to_string_without_layout(&self) -> String {
        crate::text::print::shape_to_string(self.proto, false)
    }

    /// Copies the proto into an owned, validated [`ShapeBuf`].
    pub fn to_owned_shape(&self) -> ShapeBuf {
        ShapeBuf { proto: self.proto.clone() }
    }
}

impl fmt::Debug for Shape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Shape({self})")
    }
}

/// XLA's text with layouts (`ShapeUtil::HumanStringWithLayout`): `f32[2,3]{1,0}`.
impl fmt::Display for Shape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_shape(f, self.proto, true)
    }
}

/// Exact equality of the underlying protos (field by field). For XLA's semantic equality, see
/// [`crate::util`].
impl PartialEq for Shape<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.proto == other.proto
    }
}

impl Eq for Shape<'_> {}

/// A validated array shape (or the array inside a buffer), borrowing its proto.
///
/// ```
/// use xla_shape::{make, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
/// let a = s.view().as_array().unwrap();
/// assert_eq!(a.rank(), 2);
/// assert_eq!(a.dimensions(), &[2, 3]);
/// assert_eq!(a.minor_to_major().iter().map(|d| d.index()).collect::<Vec<_>>(), [0, 1]);
/// ```
#[derive(Clone, Copy)]
pub struct ArrayShape<'a> {
    proto: &'a ShapeProto,
    element_type: PrimitiveType,
}

impl<'a> ArrayShape<'a> {
    /// Validates `proto` strictly and requires it to be an array.
    ///
    /// # Errors
    ///
    /// A validation failure, or [`Error::NotAnArray`].
    pub fn try_new(proto: &'a ShapeProto) -> Result<Self> {
        Self::from_shape(Shape::try_new(proto)?)
    }

    /// Validates `proto` with an optional layout and requires it to be an array.
    ///
    /// # Errors
    ///
    /// A validation failure, or [`Error::NotAnArray`].
    pub fn try_new_optional_layout(proto: &'a ShapeProto) -> Result<Self> {
        Self::from_shape(Shape::try_new_optional_layout(proto)?)
    }

    fn from_shape(shape: Shape<'a>) -> Result<Self> {
        shape.as_array().ok_or(Error::NotAnArray {
            operation: "an array view",
            kind: crate::error::ShapeCategory::of(shape.element_type),
        })
    }

    pub(crate) fn new_unchecked(proto: &'a ShapeProto) -> Self {
        let element_type = PrimitiveType::from_i32(proto.element_type).unwrap_or(PrimitiveType::F32);
        Self { proto, element_type }
    }

    /// The proto this view borrows.
    pub fn proto(&self) -> &'a ShapeProto {
        self.proto
    }

    /// The element type.
    pub fn element_type(&self) -> PrimitiveType {
        self.element_type
    }

    /// The number of dimensions (the rank).
    pub fn rank(&self) -> usize {
        self.proto.dimensions.len()
    }

    /// The size of each dimension (the bound, for a dynamic one; `INT64_MIN` for `?`).
    pub fn dimensions(&self) -> &'a [i64] {
        &self.proto.dimensions
    }

    /// The size of one dimension.
    ///
    /// # Panics
    ///
    /// If `dim` is not below the rank.
    #[allow(clippy::indexing_slicing)] // documented: dim < rank, as for a slice
    pub fn dimension(&self, dim: Dim) -> i64 {
        self.proto.dimensions[dim.0]
    }

    /// Whether a dimension is dynamic (`<=N` or `?`).
    pub fn is_dynamic_dimension(&self, dim: Dim) -> bool {
        self.proto.is_dynamic_dimension.get(dim.0).copied().unwrap_or(false)
    }

    /// Whether a dimension is unbounded dynamic (`?`).
    pub fn is_unbounded_dimension(&self, dim: Dim) -> bool {
        self.proto.dimensions.get(dim.0) == Some(&i64::MIN)
    }

    /// Whether any dimension is dynamic.
    pub fn is_dynamic(&self) -> bool {
        self.proto.is_dynamic_dimension.iter().any(|&d| d)
    }

    /// Whether the array is a scalar (rank 0).
    pub fn is_scalar(&self) -> bool {
        self.proto.dimensions.is_empty()
    }

    /// The layout, if the proto has one.
    pub fn layout(&self) -> Option<Layout<'a>> {
        self.proto.layout.as_deref().map(Layout::new_unchecked)
    }

    /// The layout's `minor_to_major`, or the default descending order `{n-1,…,0}` when the shape
    /// has no layout (spec policy: an absent layout means the default one).
    pub fn minor_to_major(&self) -> MinorToMajor<'a> {
        match &self.proto.layout {
            Some(layout) => MinorToMajor::explicit(&layout.minor_to_major),
            None => MinorToMajor::descending(self.rank()),
        }
    }

    /// The legacy `padded_dimensions`, if the layout has them.
    pub fn padded_dimensions(&self) -> Option<&'a [i64]> {
        self.layout().and_then(|layout| layout.padded_dimensions())
    }

    /// This array as a [`Shape`].
    pub fn as_shape(&self) -> Shape<'a> {
        Shape::new_unchecked(self.proto)
    }
}

impl fmt::Debug for ArrayShape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArrayShape({self})")
    }
}

impl fmt::Display for ArrayShape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_shape(f, self.proto, true)
    }
}

/// A validated tuple shape, borrowing its proto.
#[derive(Clone, Copy)]
pub struct TupleShape<'a> {
    proto: &'a ShapeProto,
}

impl<'a> TupleShape<'a> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.proto.tuple_shapes.len()
    }

    /// Whether this is the empty tuple `()`.
    pub fn is_empty(&self) -> bool {
        self.proto.tuple_shapes.is_empty()
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Option<Shape<'a>> {
        self.proto.tuple_shapes.get(i).map(Shape::new_unchecked)
    }

    /// The elements, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Shape<'a>> + 'a {
        self.proto.tuple_shapes.iter().map(Shape::new_unchecked)
    }

    /// The proto this view borrows.
    pub fn proto(&self) -> &'a ShapeProto {
        self.proto
    }
}

/// XLA's text with layouts: `(f32[2]{0}, s32[])`.
impl fmt::Display for TupleShape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_shape(f, self.proto, true)
    }
}

impl fmt::Debug for TupleShape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TupleShape(")?;
        crate::text::print::write_shape(f, self.proto, true)?;
        f.write_str(")")
    }
}

/// A validated program shape (parameters, their names, and the result), borrowing its proto.
///
/// ```
/// use xla_shape::{proto::ProgramShapeProto, ProgramShape, make};
/// let f32_scalar = make::make_scalar_shape(xla_shape::PrimitiveType::F32).unwrap().into_proto();
/// let p = ProgramShapeProto {
///     parameters: vec![f32_scalar.clone()],
///     result: Some(f32_scalar),
///     parameter_names: vec!["x".into()],
/// };
/// let program = ProgramShape::try_new(&p).unwrap();
/// assert_eq!(program.to_string(), "(x: f32[]) -> f32[]");
/// ```
#[derive(Clone, Copy)]
pub struct ProgramShape<'a> {
    proto: &'a ProgramShapeProto,
    /// The validated result (validation rejects a program shape without one).
    result: Shape<'a>,
}

impl<'a> ProgramShape<'a> {
    /// Validates strictly: name count, then each parameter, then the result.
    ///
    /// # Errors
    ///
    /// See [`crate::validate::validate_program_shape`].
    pub fn try_new(proto: &'a ProgramShapeProto) -> Result<Self> {
        Self::try_new_with_mode(proto, LayoutMode::Strict)
    }

    /// Validates with optional layouts.
    ///
    /// # Errors
    ///
    /// See [`crate::validate::validate_program_shape`].
    pub fn try_new_optional_layout(proto: &'a ProgramShapeProto) -> Result<Self> {
        Self::try_new_with_mode(proto, LayoutMode::Optional)
    }

    fn try_new_with_mode(proto: &'a ProgramShapeProto, mode: LayoutMode) -> Result<Self> {
        let result = Shape::new_unchecked(validated_result(proto, mode)?);
        Ok(Self { proto, result })
    }

    /// The parameters, in order.
    pub fn parameters(&self) -> impl ExactSizeIterator<Item = Shape<'a>> + 'a {
        self.proto.parameters.iter().map(Shape::new_unchecked)
    }

    /// The parameter names (as many as parameters).
    pub fn parameter_names(&self) -> &'a [String] {
        &self.proto.parameter_names
    }

    /// The result shape.
    pub fn result(&self) -> Shape<'a> {
        self.result
    }

    /// The proto this view borrows.
    pub fn proto(&self) -> &'a ProgramShapeProto {
        self.proto
    }
}

impl fmt::Debug for ProgramShape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProgramShape({self})")
    }
}

/// XLA's program-shape text: `(x: f32[], y: s32[2]) -> f32[]` (no layouts).
impl fmt::Display for ProgramShape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_program_shape(f, self.proto)
    }
}

/// An owned, validated shape: a [`ShapeProto`] that is known to be valid.
///
/// Constructors ([`crate::make`]) and the text parser return this; [`ShapeBuf::view`] borrows it
/// as a [`Shape`] without validating again.
///
/// ```
/// use xla_shape::{make, PrimitiveType, ShapeBuf};
/// let s: ShapeBuf = make::make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
/// assert_eq!(s.to_string(), "f32[2,3]{1,0}");
/// let again = ShapeBuf::try_from_proto(s.clone().into_proto()).unwrap();
/// assert_eq!(again, s);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ShapeBuf {
    proto: ShapeProto,
}

impl ShapeBuf {
    /// Validates `proto` strictly and takes ownership of it.
    ///
    /// # Errors
    ///
    /// See [`crate::validate::validate_shape`].
    pub fn try_from_proto(proto: ShapeProto) -> Result<Self> {
        validate_shape(&proto, LayoutMode::Strict)?;
        Ok(Self { proto })
    }

    /// Validates `proto` with optional layouts and takes ownership of it.
    ///
    /// # Errors
    ///
    /// See [`crate::validate::validate_shape`].
    pub fn try_from_proto_optional_layout(proto: ShapeProto) -> Result<Self> {
        validate_shape(&proto, LayoutMode::Optional)?;
        Ok(Self { proto })
    }

    /// Wraps a proto the crate has just built and validated.
    pub(crate) fn from_validated(proto: ShapeProto) -> Self {
        Self { proto }
    }

    /// A borrowed view.
    pub fn view(&self) -> Shape<'_> {
        Shape::new_unchecked(&self.proto)
    }

    /// The array view, if this is an array.
    pub fn as_array(&self) -> Option<ArrayShape<'_>> {
        self.view().as_array()
    }

    /// The proto.
    pub fn proto(&self) -> &ShapeProto {
        &self.proto
    }

    /// The proto, by value.
    pub fn into_proto(self) -> ShapeProto {
        self.proto
    }
}

impl fmt::Debug for ShapeBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShapeBuf({self})")
    }
}

impl fmt::Display for ShapeBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_shape(f, &self.proto, true)
    }
}

impl TryFrom<ShapeProto> for ShapeBuf {
    type Error = Error;

    fn try_from(proto: ShapeProto) -> Result<Self> {
        Self::try_from_proto(proto)
    }
}

impl<'a> TryFrom<&'a ShapeProto> for Shape<'a> {
    type Error = Error;

    fn try_from(proto: &'a ShapeProto) -> Result<Self> {
        Self::try_new(proto)
    }
}

impl From<ShapeBuf> for ShapeProto {
    fn from(shape: ShapeBuf) -> Self {
        shape.proto
    }
}

impl AsRef<ShapeProto> for ShapeBuf {
    fn as_ref(&self) -> &ShapeProto {
        &self.proto
    }
}
