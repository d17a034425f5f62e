//! Constructors (`ShapeUtil::Make*`, `LayoutUtil::Make*`): validated shapes and layouts in XLA's
//! own form, so their bytes equal the bytes XLA writes.
//!
//! XLA's form (spec `schema.md` §4): an array carries `is_dynamic_dimension` for every dimension,
//! and a layout carries `tail_padding_alignment_in_elements` (1 unless set).
//!
//! Array constructors validate strictly (they always set a layout); tuple and buffer constructors
//! validate with optional layouts, like XLA's `MakeValidatedTupleShape`, so their elements may be
//! arrays without a layout. Everything they return is within [`crate::MAX_DEPTH`].
//!
//! ```
//! use xla_shape::{make, PrimitiveType};
//! // The seed documents' `ShapeUtil::MakeShape(F32, {A, B, C, D})`.
//! let s = make::make_shape(PrimitiveType::F32, &[2, 3, 4, 5]).unwrap();
//! assert_eq!(s.to_string(), "f32[2,3,4,5]{3,2,1,0}");
//! ```

use crate::dim::descending_minor_to_major;
use crate::error::ArgumentProblem;
use crate::error::{Error, FieldPath, LayoutProblem, Result};
use crate::layout::LayoutBuf;
use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, ShapeProto, SplitConfigProto, TileProto};
use crate::shape::ShapeBuf;
use crate::validate::{LayoutMode, validate_layout, validate_shape};

/// The parts of a dense layout, for [`make_shape_with_layout`] and [`LayoutSpec::build`]
/// (`LayoutUtil::MakeLayout`). Unset parts take XLA's defaults.
///
/// ```
/// use xla_shape::make::LayoutSpec;
/// let layout = LayoutSpec::new(&[1, 0]).tiles(&[&[8, 128]]).element_size_in_bits(4).build().unwrap();
/// assert_eq!(layout.to_string(), "{1,0:T(8,128)E(4)}");
/// assert!(LayoutSpec::new(&[0]).tail_padding_alignment_in_elements(0).build().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutSpec {
    proto: LayoutProto,
}

impl LayoutSpec {
    /// A layout with this `minor_to_major` and nothing else.
    pub fn new(minor_to_major: &[i64]) -> Self {
        Self {
            proto: LayoutProto {
                minor_to_major: minor_to_major.to_vec(),
                tail_padding_alignment_in_elements: 1,
                ..LayoutProto::default()
            },
        }
    }

    /// Tiles, applied in order (`i64::MIN` is the combine dimension `*`).
    #[must_use]
    pub fn tiles(mut self, tiles: &[&[i64]]) -> Self {
        self.proto.tiles = tiles.iter().map(|t| TileProto { dimensions: t.to_vec() }).collect();
        self
    }

    /// `tail_padding_alignment_in_elements` (must be ≥ 1).
    #[must_use]
    pub fn tail_padding_alignment_in_elements(mut self, alignment: i64) -> Self {
        self.proto.tail_padding_alignment_in_elements = alignment;
        self
    }

    /// `element_size_in_bits` (0 = the element type's own size).
    #[must_use]
    pub fn element_size_in_bits(mut self, bits: i64) -> Self {
        self.proto.element_size_in_bits = bits;
        self
    }

    /// `memory_space`.
    #[must_use]
    pub fn memory_space(mut self, memory_space: i64) -> Self {
        self.proto.memory_space = memory_space;
        self
    }

    /// Appends a split config: physical `dimension` split at `split_indices`.
    #[must_use]
    pub fn split_config(mut self, dimension: i64, split_indices: &[i64]) -> Self {
        self.proto.split_configs.push(SplitConfigProto { dimension, split_indices: split_indices.to_vec() });
        self
    }

    /// Legacy padding: the padded extent of each logical dimension and what the padding holds
    /// (a `proto::PaddingValue` number).
    #[must_use]
    pub fn padded_dimensions(mut self, padded: &[i64], padding_value: crate::proto::PaddingValue) -> Self {
        self.proto.padded_dimensions = padded.to_vec();
        self.proto.padding_value = padding_value as i32;
        self
    }

    /// `LayoutUtil::MakeLayout`: checks what XLA's constructor checks (where XLA aborts, this
    /// returns an error), then the standalone layout rules (spec `validation.md` §1.5). Paths in
    /// errors are relative to the layout.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLayout`] for a tail alignment below 1 (XLA: CHECK failure), a tile entry
    /// that is neither positive nor `*` (XLA: fatal for a negative one), and any other standalone
    /// validation failure ([`Error::InvalidLayout`], [`Error::SparseUnsupported`]).
    pub fn build(self) -> Result<LayoutBuf> {
        self.check_tail_padding(FieldPath::root())?;
        validate_layout(&self.proto)?;
        Ok(LayoutBuf::from_validated(self.proto))
    }

    /// The one `MakeLayout` rule stricter than validation, which reads 0 as 1.
    fn check_tail_padding(&self, layout_path: FieldPath) -> Result<()> {
        let value = self.proto.tail_padding_alignment_in_elements;
        if value < 1 {
            return Err(Error::invalid_layout(
                layout_path.field("tail_padding_alignment_in_elements"),
                LayoutProblem::TailPadding { value },
            ));
        }
        Ok(())
    }
}

fn require_array_type(element_type: PrimitiveType) -> Result<()> {
    if element_type.is_array() {
        Ok(())
    } else {
        Err(Error::invalid_argument(ArgumentProblem::UnsupportedElementType { element_type }))
    }
}

/// `MakeValidatedShape`: an array with the default descending layout `{n-1,…,0}` (row-major at
/// rank 2). The dimensions are taken in order: `make_shape(F32, &[a, b, c, d])` has dimensions
/// `[a, b, c, d]`. Every `INT64_MIN` dimension is marked dynamic (`?`); the others are static.
///
/// ```
/// use xla_shape::{make::make_shape, Error, PrimitiveType};
/// assert_eq!(make_shape(PrimitiveType::F32, &[i64::MIN, 784]).unwrap().to_string(), "f32[?,784]{1,0}");
/// let err = make_shape(PrimitiveType::F32, &[-1]).unwrap_err();
/// assert!(matches!(err, Error::InvalidDimension { index: 0, size: -1, .. }));
/// assert!(err.to_string().contains("invalid dimension size"));
/// ```
///
/// # Errors
///
/// As [`make_shape_dynamic`].
pub fn make_shape(element_type: PrimitiveType, dimensions: &[i64]) -> Result<ShapeBuf> {
    let dynamic = dimensions.iter().map(|&d| d == i64::MIN).collect::<Vec<_>>();
    make_shape_dynamic(element_type, dimensions, &dynamic)
}

/// `MakeShapeWithDescendingLayout`: the same as [`make_shape`].
///
/// # Errors
///
/// As [`make_shape_dynamic`].
pub fn make_shape_with_descending_layout(element_type: PrimitiveType, dimensions: &[i64]) -> Result<ShapeBuf> {
    make_shape(element_type, dimensions)
}

/// `MakeValidatedShape` with dynamic flags: `<=N` for a dynamic bounded dimension, `?` for a
/// dynamic `INT64_MIN`. The layout is the default descending one.
///
/// ```
/// use xla_shape::{make::make_shape_dynamic, PrimitiveType};
/// let s = make_shape_dynamic(PrimitiveType::F32, &[23, 44, 55], &[true, false, true]).unwrap();
/// assert_eq!(s.view().to_string_without_layout(), "f32[<=23,44,<=55]");
/// let err = make_shape_dynamic(PrimitiveType::F32, &[2, 3], &[true]).unwrap_err();
/// assert!(err.to_string().contains("dynamic dimensions size 1 did not match number of dimensions 2"));
/// ```
///
/// # Errors
///
/// * [`Error::InvalidArgument`] when the flag count differs from the dimension count, or the
///   element type is not an array type ("unsupported element type");
/// * [`Error::InvalidDimension`] for a negative dimension, or `INT64_MIN` on a static one (XLA:
///   "Invalid dimension size");
/// * [`Error::Overflow`] when the element count or byte size does not fit in `i64`.
pub fn make_shape_dynamic(element_type: PrimitiveType, dimensions: &[i64], dynamic: &[bool]) -> Result<ShapeBuf> {
    let proto = unlaid_array(element_type, dimensions, dynamic)?;
    with_layout(proto, LayoutSpec::new(&descending_minor_to_major(dimensions.len())).proto)
}

/// `MakeValidatedShapeWithDenseLayout` with only `minor_to_major`.
///
/// ```
/// use xla_shape::{make::make_shape_with_dense_layout, PrimitiveType};
/// let s = make_shape_with_dense_layout(PrimitiveType::F32, &[123, 456], &[0, 1]).unwrap();
/// assert_eq!(s.to_string(), "f32[123,456]{0,1}");
/// ```
///
/// # Errors
///
/// As [`make_shape_with_layout`].
pub fn make_shape_with_dense_layout(
    element_type: PrimitiveType,
    dimensions: &[i64],
    minor_to_major: &[i64],
) -> Result<ShapeBuf> {
    make_shape_with_layout(element_type, dimensions, &LayoutSpec::new(minor_to_major))
}

/// `MakeValidatedShapeWithDenseLayout`: an array with the given layout. An element size equal
/// to 8 × the type's byte width is normalized to 0, as XLA does; any other value is kept.
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::S4, &[8], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap();
/// assert_eq!(s.to_string(), "s4[8]{0:E(4)}");
/// let f = make_shape_with_layout(PrimitiveType::F32, &[8], &LayoutSpec::new(&[0]).element_size_in_bits(32)).unwrap();
/// assert_eq!(f.to_string(), "f32[8]{0}");
/// ```
///
/// # Errors
///
/// In XLA's order:
/// * [`Error::InvalidArgument`] when `minor_to_major` and the dimensions differ in length
///   ("dimensions size is 2, but layout size is 1"), or the element type is not an array type
///   ("unsupported element type");
/// * the errors of [`make_shape_dynamic`] for the dimensions;
/// * [`Error::InvalidLayout`] for a tail padding alignment below 1;
/// * then any strict validation failure ([`Error::InvalidLayout`], [`Error::SparseUnsupported`]),
///   with paths under `layout`.
pub fn make_shape_with_layout(
    element_type: PrimitiveType,
    dimensions: &[i64],
    layout: &LayoutSpec,
) -> Result<ShapeBuf> {
    if layout.proto.minor_to_major.len() != dimensions.len() {
        return Err(Error::invalid_argument(ArgumentProblem::LayoutLength {
            dimensions: dimensions.len(),
            layout: layout.proto.minor_to_major.len(),
        }));
    }
    let dynamic = dimensions.iter().map(|&d| d == i64::MIN).collect::<Vec<_>>();
    let proto = unlaid_array(element_type, dimensions, &dynamic)?;
    // Everything else in the layout is checked by strict validation, with paths in the shape.
    layout.check_tail_padding(FieldPath::root().field("layout"))?;
    let mut layout = layout.proto.clone();
    let own_bits = element_type.byte_width().map_or(0, |bytes| i64::from(bytes).saturating_mul(8));
    if layout.element_size_in_bits == own_bits {
        layout.element_size_in_bits = 0;
    }
    with_layout(proto, layout)
}

/// The array without a layout, after XLA's `MakeValidatedShape` checks (flag count, element
/// type, dimensions, size).
fn unlaid_array(element_type: PrimitiveType, dimensions: &[i64], dynamic: &[bool]) -> Result<ShapeProto> {
    if dynamic.len() != dimensions.len() {
        return Err(Error::invalid_argument(ArgumentProblem::DynamicFlagCount {
            flags: dynamic.len(),
            dimensions: dimensions.len(),
        }));
    }
    require_array_type(element_type)?;
    let proto = ShapeProto {
        element_type: element_type.as_i32(),
        dimensions: dimensions.to_vec(),
        tuple_shapes: Vec::new(),
        layout: None,
        is_dynamic_dimension: dynamic.to_vec(),
    };
    validate_shape(&proto, LayoutMode::Optional)?;
    Ok(proto)
}

/// Attaches `layout` and validates strictly.
fn with_layout(mut proto: ShapeProto, layout: LayoutProto) -> Result<ShapeBuf> {
    proto.layout = Some(Box::new(layout));
    validate_shape(&proto, LayoutMode::Strict)?;
    Ok(ShapeBuf::from_validated(proto))
}

/// `MakeScalarShape`: rank 0, layout `{}`.
///
/// ```
/// use xla_shape::{make::make_scalar_shape, PrimitiveType};
/// assert_eq!(make_scalar_shape(PrimitiveType::F32).unwrap().to_string(), "f32[]");
/// ```
///
/// # Errors
///
/// A non-array element type.
pub fn make_scalar_shape(element_type: PrimitiveType) -> Result<ShapeBuf> {
    make_shape(element_type, &[])
}

/// `MakeValidatedTupleShape`: a tuple, validated with optional layouts.
///
/// ```
/// use xla_shape::{make::*, PrimitiveType};
/// let t = make_tuple_shape(&[make_shape(PrimitiveType::F32, &[2]).unwrap(), make_scalar_shape(PrimitiveType::S32).unwrap()]).unwrap();
/// assert_eq!(t.to_string(), "(f32[2]{0}, s32[])");
/// ```
///
/// # Errors
///
/// [`Error::TooDeep`] when the result would nest deeper than [`crate::MAX_DEPTH`].
pub fn make_tuple_shape(elements: &[ShapeBuf]) -> Result<ShapeBuf> {
    let proto = ShapeProto {
        element_type: PrimitiveType::TUPLE.as_i32(),
        tuple_shapes: elements.iter().map(|e| e.proto().clone()).collect(),
        ..ShapeProto::default()
    };
    validate_shape(&proto, LayoutMode::Optional)?;
    Ok(ShapeBuf::from_validated(proto))
}

/// `MakeMaybeTupleShape`: a single element unchanged, otherwise a tuple.
///
/// ```
/// use xla_shape::{make, PrimitiveType};
/// let x = make::make_shape(PrimitiveType::F32, &[2])?;
/// assert_eq!(make::make_maybe_tuple_shape(&[x.clone()])?.to_string(), "f32[2]{0}");
/// assert_eq!(make::make_maybe_tuple_shape(&[x.clone(), x])?.to_string(), "(f32[2]{0}, f32[2]{0})");
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// As [`make_tuple_shape`].
pub fn make_maybe_tuple_shape(elements: &[ShapeBuf]) -> Result<ShapeBuf> {
    match elements {
        [single] => Ok(single.clone()),
        _ => make_tuple_shape(elements),
    }
}

/// `MakeNil`: the empty tuple `()`.
///
/// ```
/// assert_eq!(xla_shape::make::make_nil().to_string(), "()");
/// ```
pub fn make_nil() -> ShapeBuf {
    non_array(PrimitiveType::TUPLE)
}

/// `MakeTokenShape`: `token[]`.
///
/// ```
/// assert_eq!(xla_shape::make::make_token_shape().to_string(), "token[]");
/// ```
pub fn make_token_shape() -> ShapeBuf {
    non_array(PrimitiveType::TOKEN)
}

/// `MakeOpaqueShape`: `opaque[]`.
///
/// ```
/// assert_eq!(xla_shape::make::make_opaque_shape().to_string(), "opaque[]");
/// ```
pub fn make_opaque_shape() -> ShapeBuf {
    non_array(PrimitiveType::OPAQUE_TYPE)
}

fn non_array(element_type: PrimitiveType) -> ShapeBuf {
    ShapeBuf::from_validated(ShapeProto { element_type: element_type.as_i32(), ..ShapeProto::default() })
}

/// `MakeValidatedBufferShape`: a buffer wrapping one array, printed `b(...)`. The array keeps its
/// layout (or its lack of one).
///
/// ```
/// use xla_shape::{make::*, PrimitiveType};
/// let b = make_buffer_shape(&make_shape(PrimitiveType::S32, &[3, 4]).unwrap()).unwrap();
/// assert_eq!(b.to_string(), "b(s32[3,4]{1,0})");
/// assert!(make_buffer_shape(&make_nil()).is_err());
/// assert!(make_buffer_shape(&b).is_err()); // a buffer is not an array
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `array` is not an array shape (XLA: "`element_shape` must be
/// an array shape to create a buffer shape").
pub fn make_buffer_shape(array: &ShapeBuf) -> Result<ShapeBuf> {
    if !array.view().is_array() {
        return Err(Error::invalid_argument(ArgumentProblem::BufferOfNonArray));
    }
    let proto = ShapeProto {
        element_type: PrimitiveType::BUFFER.as_i32(),
        tuple_shapes: vec![array.proto().clone()],
        ..ShapeProto::default()
    };
    validate_shape(&proto, LayoutMode::Optional)?;
    Ok(ShapeBuf::from_validated(proto))
}

/// `MakeBufferShape(element_type, dimensions)`: a buffer wrapping [`make_shape`]`(element_type,
/// dimensions)`.
///
/// ```
/// use xla_shape::{make::make_buffer_shape_from_dimensions, PrimitiveType};
/// let b = make_buffer_shape_from_dimensions(PrimitiveType::F32, &[8, 16]).unwrap();
/// assert_eq!(b.to_string(), "b(f32[8,16]{1,0})");
/// ```
///
/// # Errors
///
/// As [`make_shape`].
pub fn make_buffer_shape_from_dimensions(element_type: PrimitiveType, dimensions: &[i64]) -> Result<ShapeBuf> {
    make_buffer_shape(&make_shape(element_type, dimensions)?)
}

/// `LayoutUtil::MakeDescendingLayout`: `{n-1,…,0}`, the default (row-major at rank 2).
///
/// ```
/// assert_eq!(xla_shape::make::make_descending_layout(3).to_string(), "{2,1,0}");
/// assert_eq!(xla_shape::make::make_descending_layout(0).to_string(), "{}");
/// ```
pub fn make_descending_layout(rank: usize) -> LayoutBuf {
    LayoutBuf::from_validated(LayoutSpec::new(&descending_minor_to_major(rank)).proto)
}

/// `LayoutUtil::MakeAscendingLayout`: `{0,…,n-1}` (column-major at rank 2).
///
/// ```
/// assert_eq!(xla_shape::make::make_ascending_layout(5).to_string(), "{0,1,2,3,4}");
/// ```
pub fn make_ascending_layout(rank: usize) -> LayoutBuf {
    let mut m2m = descending_minor_to_major(rank);
    m2m.reverse();
    LayoutBuf::from_validated(LayoutSpec::new(&m2m).proto)
}

/// `LayoutUtil::MakeLayout` with only `minor_to_major`; use [`LayoutSpec`] for the other fields.
///
/// ```
/// let l = xla_shape::make::make_layout(&[0, 1]).unwrap();
/// assert_eq!(l.to_string(), "{0,1}");
/// assert_eq!(l.proto().tail_padding_alignment_in_elements, 1);
/// assert!(xla_shape::make::make_layout(&[1, 1]).is_err());
/// ```
///
/// # Errors
///
/// As [`LayoutSpec::build`]: [`Error::InvalidLayout`] for negative or duplicate entries.
pub fn make_layout(minor_to_major: &[i64]) -> Result<LayoutBuf> {
    LayoutSpec::new(minor_to_major).build()
}

/// `LayoutUtil::MakeLayoutFromMajorToMinor`: the reverse of the given major-to-minor order.
///
/// ```
/// let l = xla_shape::make::make_layout_from_major_to_minor(&[0, 1, 2]).unwrap();
/// assert_eq!(l.to_string(), "{2,1,0}");
/// ```
///
/// # Errors
///
/// [`Error::InvalidLayout`] for negative or duplicate entries.
pub fn make_layout_from_major_to_minor(major_to_minor: &[i64]) -> Result<LayoutBuf> {
    let mut m2m = major_to_minor.to_vec();
    m2m.reverse();
    LayoutSpec::new(&m2m).build()
}

/// A legacy padded layout (2017–2018 XLA): `minor_to_major`, the padded extent of each logical
/// dimension, and the padding value.
///
/// ```
/// use xla_shape::{make::make_padded_layout, proto::PaddingValue};
/// let l = make_padded_layout(&[0, 1], &[3, 5], PaddingValue::ZeroPad).unwrap();
/// assert_eq!(l.view().padded_dimensions(), Some(&[3, 5][..]));
/// assert_eq!(l.to_string(), "{0,1}"); // XLA text never shows padding
/// ```
///
/// # Errors
///
/// Standalone layout validation failures.
pub fn make_padded_layout(
    minor_to_major: &[i64],
    padded: &[i64],
    padding_value: crate::proto::PaddingValue,
) -> Result<LayoutBuf> {
    LayoutSpec::new(minor_to_major).padded_dimensions(padded, padding_value).build()
}
