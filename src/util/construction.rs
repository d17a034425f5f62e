//! Whole-shape rewrites (spec `linearization.md` §6.1): default layouts, clearing layouts and
//! tiles, changing the element type, device-to-host shapes, and the descending shape with the
//! same physical layout. The plain constructors live in [`crate::make`].

use super::dimensions::{Flags, Source, major_to_minor, rebuild};
use super::{all_leaves, finish, map_arrays};
use crate::dim::descending_minor_to_major as descending;
use crate::error::{ArgumentProblem, ShapeCategory};
use crate::error::{Error, Result};
use crate::make;
use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, ShapeProto};
use crate::shape::{ArrayShape, Shape, ShapeBuf};

/// `ShapeUtil::MakeShapeWithDescendingLayoutAndSamePhysicalLayout`: the dimensions reordered
/// into physical order (most major first) with the descending layout, so the bytes do not move.
/// Tiles, element size, tail padding alignment and memory space are carried over; dynamic flags
/// and legacy padding follow their dimensions. A buffer gives a buffer.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[128, 24, 4, 48, 48], &[2, 4, 3, 1, 0]).unwrap();
/// let d = util::make_shape_with_descending_layout_and_same_physical_layout(s.view()).unwrap();
/// assert_eq!(d.to_string(), "f32[128,24,48,48,4]{4,3,2,1,0}");
/// ```
///
/// # Errors
///
/// [`Error::NotAnArray`] for a tuple, token or opaque shape.
#[doc(alias = "MakeShapeWithDescendingLayoutAndSamePhysicalLayout")]
pub fn make_shape_with_descending_layout_and_same_physical_layout(shape: Shape<'_>) -> Result<ShapeBuf> {
    let array = shape.array_or_buffer().ok_or(Error::NotAnArray {
        operation: "make_shape_with_descending_layout_and_same_physical_layout",
        kind: ShapeCategory::of(shape.element_type()),
    })?;
    let sources: Vec<Source> = major_to_minor(array).into_iter().map(Source::Old).collect();
    let mut layout = LayoutProto { minor_to_major: descending(array.rank()), ..LayoutProto::default() };
    if let Some(old) = array.layout() {
        let old = old.proto();
        layout.tiles.clone_from(&old.tiles);
        layout.element_size_in_bits = old.element_size_in_bits;
        layout.tail_padding_alignment_in_elements = old.tail_padding_alignment_in_elements;
        layout.memory_space = old.memory_space;
    }
    let built = rebuild(array, &sources, Flags::Keep, Some(layout))?;
    if shape.is_buffer() { make::make_buffer_shape(&built) } else { Ok(built) }
}

/// `LayoutUtil::GetWithDefaultLayout`: a copy whose arrays have the default descending
/// `minor_to_major`. **Only `minor_to_major` is overwritten**: other fields of an existing layout
/// (tiles, element size, memory space, legacy padding, …) stay. An array without a layout gets a
/// new default one. Tuples are handled recursively; tokens and opaque shapes are untouched.
///
/// ```
/// use xla_shape::{make::{self, LayoutSpec}, util, PrimitiveType};
/// let s = make::make_shape_with_layout(PrimitiveType::F32, &[2, 3], &LayoutSpec::new(&[0, 1]).memory_space(1)).unwrap();
/// assert_eq!(util::with_default_layout(s.view()).unwrap().to_string(), "f32[2,3]{1,0:S(1)}");
/// ```
///
/// # Errors
///
/// None for valid input; the result is validated like every built shape.
#[doc(alias = "GetWithDefaultLayout")]
pub fn with_default_layout(shape: Shape<'_>) -> Result<ShapeBuf> {
    rewrite_arrays(shape, |array, proto| {
        let layout = proto.layout.get_or_insert_with(Box::default);
        layout.minor_to_major = descending(array.rank());
    })
}

/// `LayoutUtil::SetToDefaultLayout`: [`with_default_layout`] in place.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let mut s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
/// util::set_to_default_layout(&mut s).unwrap();
/// assert_eq!(s.to_string(), "f32[2,3]{1,0}");
/// ```
///
/// # Errors
///
/// As [`with_default_layout`]; on error `shape` is unchanged.
#[doc(alias = "SetToDefaultLayout")]
pub fn set_to_default_layout(shape: &mut ShapeBuf) -> Result<()> {
    *shape = with_default_layout(shape.view())?;
    Ok(())
}

/// `LayoutUtil::ClearLayout`: a copy without any layout, recursively.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
/// assert_eq!(util::clear_layout(s.view()).unwrap().to_string(), "f32[2,3]");
/// ```
///
/// # Errors
///
/// None for valid input; the result is validated like every built shape.
#[doc(alias = "ClearLayout")]
pub fn clear_layout(shape: Shape<'_>) -> Result<ShapeBuf> {
    rewrite_arrays(shape, |_, proto| proto.layout = None)
}

/// `LayoutUtil::ClearTiles`: a copy whose layouts have no tiles, recursively.
///
/// ```
/// use xla_shape::{make::{self, LayoutSpec}, util, PrimitiveType};
/// let s = make::make_shape_with_layout(PrimitiveType::F32, &[8, 128], &LayoutSpec::new(&[1, 0]).tiles(&[&[8, 128]])).unwrap();
/// assert_eq!(util::clear_tiles(s.view()).unwrap().to_string(), "f32[8,128]{1,0}");
/// ```
///
/// # Errors
///
/// None for valid input; the result is validated like every built shape.
#[doc(alias = "ClearTiles")]
pub fn clear_tiles(shape: Shape<'_>) -> Result<ShapeBuf> {
    rewrite_arrays(shape, |_, proto| {
        if let Some(layout) = proto.layout.as_deref_mut() {
            layout.tiles.clear();
        }
    })
}

/// `ShapeUtil::ChangeElementType`: every array (recursively) gets `element_type`. Its layout's
/// `element_size_in_bits` is cleared unless `element_type` is a sub-byte type other than PRED.
/// Tokens and opaque shapes inside a tuple are kept as they are (XLA would turn them into
/// scalars).
///
/// ```
/// use xla_shape::{make::{self, LayoutSpec}, util, PrimitiveType};
/// let s = make::make_shape_with_layout(PrimitiveType::S4, &[8], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap();
/// assert_eq!(util::change_element_type(s.view(), PrimitiveType::U4).unwrap().to_string(), "u4[8]{0:E(4)}");
/// assert_eq!(util::change_element_type(s.view(), PrimitiveType::U8).unwrap().to_string(), "u8[8]{0}");
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `element_type` is not an array type; an array whose size in
/// the new type overflows.
#[doc(alias = "ChangeElementType")]
pub fn change_element_type(shape: Shape<'_>, element_type: PrimitiveType) -> Result<ShapeBuf> {
    if !element_type.is_array() {
        return Err(Error::invalid_argument(ArgumentProblem::ChangeToNonArrayType { element_type }));
    }
    rewrite_arrays(shape, |_, proto| {
        proto.element_type = element_type.as_i32();
        if let Some(layout) = proto.layout.as_deref_mut() {
            if !element_type.is_sub_byte() {
                layout.element_size_in_bits = 0;
            }
        }
    })
}

/// `ShapeUtil::DeviceShapeToHostShape`: every layout (recursively) loses its tiles, memory space,
/// physical shape, element size, tail padding alignment (back to 1) and dynamic-shape metadata
/// prefix.
///
/// ```
/// use xla_shape::{make::{self, LayoutSpec}, util, PrimitiveType};
/// let s = make::make_shape_with_layout(PrimitiveType::S4, &[8], &LayoutSpec::new(&[0]).element_size_in_bits(4)).unwrap();
/// assert!(!util::device_shape_is_host_shape(s.view()));
/// let host = util::device_shape_to_host_shape(s.view()).unwrap();
/// assert!(util::device_shape_is_host_shape(host.view()));
/// ```
///
/// # Errors
///
/// None for valid input; the result is validated like every built shape.
#[doc(alias = "DeviceShapeToHostShape")]
pub fn device_shape_to_host_shape(shape: Shape<'_>) -> Result<ShapeBuf> {
    rewrite_arrays(shape, |_, proto| {
        if let Some(layout) = proto.layout.as_deref_mut() {
            layout.tiles.clear();
            layout.memory_space = 0;
            layout.physical_shape = None;
            layout.element_size_in_bits = 0;
            layout.tail_padding_alignment_in_elements = 1;
            layout.dynamic_shape_metadata_prefix_bytes = 0;
        }
    })
}

/// `ShapeUtil::DeviceShapeIsHostShape`: no layout (recursively) has tiles, a memory space, a
/// physical shape, an element size, a tail padding alignment other than 1 or a dynamic-shape
/// metadata prefix.
#[doc(alias = "DeviceShapeIsHostShape")]
pub fn device_shape_is_host_shape(shape: Shape<'_>) -> bool {
    all_leaves(shape, &|leaf| {
        leaf.array_or_buffer().and_then(|array| array.layout()).is_none_or(|layout| {
            let p = layout.proto();
            p.tiles.is_empty()
                && p.memory_space == 0
                && p.physical_shape.is_none()
                && p.element_size_in_bits == 0
                && layout.tail_padding_alignment_in_elements() == 1
                && p.dynamic_shape_metadata_prefix_bytes == 0
        })
    })
}

/// Copies `shape`, applying `edit` to the proto of every array (a buffer's array included).
fn rewrite_arrays(shape: Shape<'_>, edit: impl Fn(ArrayShape<'_>, &mut ShapeProto)) -> Result<ShapeBuf> {
    let proto = map_arrays(shape, &mut |array| {
        let mut proto = array.proto().clone();
        edit(array, &mut proto);
        Ok(proto)
    })?;
    finish(proto)
}
