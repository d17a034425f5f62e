//! Layout queries and edits (spec `linearization.md` §6.3): physical positions, monotonic
//! layouts, moving a dimension to the major or minor end, layout presence, element sizes, memory
//! spaces, the untiled check, and copying or comparing the layouts of two shapes.

use super::equality::LayoutEqual;
use super::{End, all_leaves, any_leaf, finish, map_arrays, to_i64, to_usize, wrap};
use crate::depth::Depth;
use crate::error::{ArgumentProblem, CopyMismatch, Quantity, ShapeCategory};
use crate::error::{Error, FieldPath, LayoutProblem, Result};
use crate::layout::{Layout, LayoutBuf, MinorToMajor, Tile};
use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, ShapeProto};
use crate::shape::{ArrayShape, Dim, Shape, ShapeBuf, ShapeKind};
use crate::validate::validate_layout_for_shape;

/// `LayoutUtil::Minor`: the logical dimension at minor position `position` (0 = most minor).
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] unless `position` is below the rank (XLA: CHECK).
#[doc(alias = "Minor")]
pub fn minor(layout: Layout<'_>, position: usize) -> Result<Dim> {
    let m2m = layout.minor_to_major();
    m2m.get(position)
        .map(|&d| Dim(to_usize(d)))
        .ok_or(Error::DimensionOutOfRange { dimension: to_i64(position), rank: m2m.len() })
}

/// `LayoutUtil::Major`: the logical dimension at physical position `position` (0 = most major).
///
/// ```
/// use xla_shape::{make, util, Dim};
/// let l = make::make_layout_from_major_to_minor(&[1, 0, 2]).unwrap(); // m2m {2,0,1}
/// assert_eq!(util::major(l.view(), 0).unwrap(), Dim(1));
/// assert_eq!(util::minor(l.view(), 0).unwrap(), Dim(2));
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] unless `position` is below the rank (XLA: CHECK).
#[doc(alias = "Major")]
pub fn major(layout: Layout<'_>, position: usize) -> Result<Dim> {
    let n = layout.minor_to_major().len();
    let minor_position = n
        .checked_sub(1)
        .and_then(|last| last.checked_sub(position))
        .ok_or(Error::DimensionOutOfRange { dimension: to_i64(position), rank: n })?;
    minor(layout, minor_position)
}

/// `LayoutUtil::MakeLogicalToPhysical`: for each logical dimension, its physical position
/// (0 = most major).
///
/// ```
/// use xla_shape::{make, util};
/// let l = make::make_layout_from_major_to_minor(&[1, 0, 2]).unwrap(); // m2m {2,0,1}
/// assert_eq!(util::make_logical_to_physical(l.view()), [1, 0, 2]);
/// ```
#[doc(alias = "MakeLogicalToPhysical")]
#[allow(clippy::arithmetic_side_effects)] // k enumerates minor_to_major, so k < n
pub fn make_logical_to_physical(layout: Layout<'_>) -> Vec<usize> {
    let m2m = layout.minor_to_major();
    let n = m2m.len();
    let mut logical_to_physical = vec![0; n];
    for (k, &d) in m2m.iter().enumerate() {
        // A standalone layout may skip numbers (e.g. {5}); such entries have no slot here.
        if let Some(slot) = logical_to_physical.get_mut(to_usize(d)) {
            *slot = n - 1 - k;
        }
    }
    logical_to_physical
}

/// `LayoutUtil::IsMonotonicWithDim0Major`: `minor_to_major` is non-increasing ("dim 0 is major",
/// row-major at rank 2, the default).
///
/// ```
/// use xla_shape::{make, util};
/// assert!(util::is_monotonic_with_dim0_major(make::make_descending_layout(2).view()));
/// assert!(util::is_monotonic_with_dim0_minor(make::make_ascending_layout(2).view()));
/// ```
#[doc(alias = "IsMonotonicWithDim0Major")]
pub fn is_monotonic_with_dim0_major(layout: Layout<'_>) -> bool {
    layout.minor_to_major().is_sorted_by(|a, b| a >= b)
}

/// `LayoutUtil::IsMonotonicWithDim0Minor`: `minor_to_major` is non-decreasing ("dim 0 is minor",
/// column-major at rank 2).
#[doc(alias = "IsMonotonicWithDim0Minor")]
pub fn is_monotonic_with_dim0_minor(layout: Layout<'_>) -> bool {
    layout.minor_to_major().is_sorted()
}

/// Whether the array's layout is the descending `{n-1,…,0}`; true for an array without a layout,
/// which means that layout.
#[doc(alias = "HasDescendingLayout")]
pub fn has_descending_layout(array: ArrayShape<'_>) -> bool {
    array.layout().is_none_or(is_monotonic_with_dim0_major)
}

/// Whether the array's layout is the ascending `{0,…,n-1}` (false for an array of rank ≥ 2
/// without a layout, which means the descending one).
#[doc(alias = "HasAscendingLayout")]
pub fn has_ascending_layout(array: ArrayShape<'_>) -> bool {
    array.minor_to_major().iter().is_sorted()
}

/// `LayoutUtil::MoveDimToMajor`: `dimension` moved to the end (most major) of `minor_to_major`;
/// every other field is kept.
///
/// ```
/// use xla_shape::{make, util, Dim};
/// let l = make::make_descending_layout(3);
/// assert_eq!(util::move_dim_to_major(l.view(), Dim(1)).unwrap().to_string(), "{2,0,1}");
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] when `dimension` is not in `minor_to_major`.
#[doc(alias = "MoveDimToMajor")]
pub fn move_dim_to_major(layout: Layout<'_>, dimension: Dim) -> Result<LayoutBuf> {
    let m2m = moved(layout.order(), dimension, End::Major)?;
    finish_layout(LayoutProto { minor_to_major: m2m, ..layout.proto().clone() })
}

/// `LayoutUtil::MoveDimToMinor`: `dimension` moved to the start (most minor) of `minor_to_major`;
/// every other field is kept.
///
/// ```
/// use xla_shape::{make, util, Dim};
/// let l = make::make_layout_from_major_to_minor(&[1, 3, 0, 2]).unwrap(); // m2m {2,0,3,1}
/// assert_eq!(util::move_dim_to_minor(l.view(), Dim(3)).unwrap().to_string(), "{3,2,0,1}");
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] when `dimension` is not in `minor_to_major`.
#[doc(alias = "MoveDimToMinor")]
pub fn move_dim_to_minor(layout: Layout<'_>, dimension: Dim) -> Result<LayoutBuf> {
    let m2m = moved(layout.order(), dimension, End::Minor)?;
    finish_layout(LayoutProto { minor_to_major: m2m, ..layout.proto().clone() })
}

/// `ShapeUtil::MoveDimToMajor`: for every array (tuple leaves included), `dimension` moved to
/// the most major position, starting from the default layout when the array has none. As in
/// XLA, the new layout has only `minor_to_major` (`LayoutUtil::MakeLayout`), so tiles and the
/// other fields are dropped.
///
/// ```
/// use xla_shape::{make, util, Dim, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[10, 10, 10], &[0, 2, 1]).unwrap();
/// assert_eq!(util::move_dim_to_major_in_shape(s.view(), Dim(0)).unwrap().to_string(), "f32[10,10,10]{2,1,0}");
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] when an array's rank is not above `dimension`.
#[doc(alias = "MoveDimToMajor")]
pub fn move_dim_to_major_in_shape(shape: Shape<'_>, dimension: Dim) -> Result<ShapeBuf> {
    move_in_shape(shape, dimension, End::Major)
}

/// [`move_dim_to_major_in_shape`] towards the most minor position.
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] when an array's rank is not above `dimension`.
#[doc(alias = "MoveDimToMinor")]
pub fn move_dim_to_minor_in_shape(shape: Shape<'_>, dimension: Dim) -> Result<ShapeBuf> {
    move_in_shape(shape, dimension, End::Minor)
}

fn moved(order: MinorToMajor<'_>, dimension: Dim, end: End) -> Result<Vec<i64>> {
    if !order.iter().any(|d| d == dimension) {
        return Err(Error::DimensionOutOfRange { dimension: to_i64(dimension.0), rank: order.len() });
    }
    let others = order.iter().filter(|&d| d != dimension).map(|Dim(d)| to_i64(d));
    let moved = std::iter::once(to_i64(dimension.0));
    Ok(match end {
        End::Major => others.chain(moved).collect(),
        End::Minor => moved.chain(others).collect(),
    })
}

fn move_in_shape(shape: Shape<'_>, dimension: Dim, end: End) -> Result<ShapeBuf> {
    let proto = map_arrays(shape, &mut |array| {
        let m2m = moved(array.minor_to_major(), dimension, end)?;
        let layout = LayoutProto { minor_to_major: m2m, ..LayoutProto::default() };
        Ok(ShapeProto { layout: Some(Box::new(layout)), ..array.proto().clone() })
    })?;
    finish(proto)
}

fn finish_layout(mut proto: LayoutProto) -> Result<LayoutBuf> {
    crate::codec::to_xla_form(&mut proto)?;
    LayoutBuf::try_from_proto(proto)
}

/// `LayoutUtil::AreDimensionsConsecutive`: the physical positions of `dimensions` form one
/// consecutive run, in any order.
///
/// ```
/// use xla_shape::{make, util, Dim};
/// let l = make::make_layout_from_major_to_minor(&[1, 0, 2]).unwrap(); // m2m {2,0,1}
/// assert!(util::are_dimensions_consecutive(l.view(), &[Dim(2), Dim(0)]).unwrap());
/// assert!(!util::are_dimensions_consecutive(l.view(), &[Dim(2), Dim(1)]).unwrap());
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] for a dimension that is not in `minor_to_major`.
#[doc(alias = "AreDimensionsConsecutive")]
pub fn are_dimensions_consecutive(layout: Layout<'_>, dimensions: &[Dim]) -> Result<bool> {
    let m2m = layout.minor_to_major();
    let mut positions = dimensions
        .iter()
        .map(|&Dim(d)| {
            m2m.iter()
                .position(|&e| e == to_i64(d))
                .ok_or(Error::DimensionOutOfRange { dimension: to_i64(d), rank: m2m.len() })
        })
        .collect::<Result<Vec<_>>>()?;
    positions.sort_unstable();
    Ok(positions.windows(2).all(|w| matches!(w, [a, b] if a.checked_add(1) == Some(*b))))
}

/// `LayoutUtil::HasLayout`: every array (or buffer) in the shape has a layout. True for the empty
/// tuple, tokens and opaque shapes.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[2]).unwrap();
/// assert!(util::has_layout(s.view()));
/// assert!(!util::has_layout(util::clear_layout(s.view()).unwrap().view()));
/// ```
#[doc(alias = "HasLayout")]
pub fn has_layout(shape: Shape<'_>) -> bool {
    all_leaves(shape, &|leaf| leaf.array_or_buffer().is_none_or(|array| array.layout().is_some()))
}

/// `LayoutUtil::HasAnyLayout`: some leaf is an array (or buffer) with a layout, or a token or
/// opaque shape. False for the empty tuple.
#[doc(alias = "HasAnyLayout")]
pub fn has_any_layout(shape: Shape<'_>) -> bool {
    any_leaf(shape, &|leaf| leaf.array_or_buffer().is_none_or(|array| array.layout().is_some()))
}

/// `LayoutUtil::HasCustomElementSizeInBits`: some array in the shape has a layout with
/// `element_size_in_bits` other than 0.
///
/// ```
/// use xla_shape::{make::{self, LayoutSpec}, util, PrimitiveType};
/// let s = make::make_shape_with_layout(PrimitiveType::F32, &[1, 2], &LayoutSpec::new(&[1, 0]).element_size_in_bits(32)).unwrap();
/// assert!(!util::has_custom_element_size_in_bits(s.view())); // 32 = the f32 width, normalized to 0
/// ```
#[doc(alias = "HasCustomElementSizeInBits")]
pub fn has_custom_element_size_in_bits(shape: Shape<'_>) -> bool {
    any_leaf(shape, &|leaf| {
        leaf.array_or_buffer().and_then(|array| array.layout()).is_some_and(|layout| layout.element_size_in_bits() != 0)
    })
}

/// `LayoutUtil::MemorySpace`: the memory space of an array's (or buffer's) layout, or 0 without a
/// layout and for other shapes. Known values: 1 = the generic fast space (`S(1)`, VMEM on TPU),
/// 5 = host, 6 = unpinned host.
#[doc(alias = "MemorySpace")]
pub fn memory_space(shape: Shape<'_>) -> i64 {
    shape.array_or_buffer().and_then(|array| array.layout()).map_or(0, |layout| layout.memory_space())
}

/// `LayoutUtil::IsUntiledLayout`: a conservative check that tiling `physical_dimensions` (most
/// major first) with `tiles` does not change the order of the elements. Every tile must divide
/// the dimensions it applies to, and within a tile, once an entry other than 1 has been seen
/// (major → minor) every later outer count must be 1. A tile wider than the shape acts as if the
/// missing major dimensions had size 1 (XLA CHECK-fails); a `*` merges its dimension into the
/// next more minor one first.
///
/// ```
/// use xla_shape::{layout::Tile, util::is_untiled_layout};
/// let t = [Tile::try_new(&[8, 128]).unwrap()];
/// assert!(is_untiled_layout(t, &[24, 128]).unwrap());
/// assert!(!is_untiled_layout(t, &[2, 3, 4]).unwrap());
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a negative (or unbounded) dimension; [`Error::InvalidLayout`]
/// for a `*` in the most minor tile position; [`Error::Overflow`] when merging overflows.
#[doc(alias = "IsUntiledLayout")]
// Lengths: `shape` is extended to at least the tile rank first. Division: validated tile entries
// are positive once `combine` removed the `*` entries.
#[allow(clippy::arithmetic_side_effects)]
pub fn is_untiled_layout<'a>(tiles: impl IntoIterator<Item = Tile<'a>>, physical_dimensions: &[i64]) -> Result<bool> {
    if let Some(&d) = physical_dimensions.iter().find(|&&d| d < 0) {
        return Err(Error::invalid_argument(ArgumentProblem::NotStatic { size: d }));
    }
    let mut shape = physical_dimensions.to_vec();
    for tile in tiles {
        let mut tile_sizes = tile.dimensions().to_vec();
        if tile_sizes.len() > shape.len() {
            let mut extended = vec![1; tile_sizes.len() - shape.len()];
            extended.append(&mut shape);
            shape = extended;
        }
        let mut sizes = shape.split_off(shape.len() - tile_sizes.len());
        combine(&mut sizes, &mut tile_sizes)?;
        let mut seen_non_unit = false;
        for (&size, &t) in sizes.iter().zip(&tile_sizes) {
            if size % t != 0 || (seen_non_unit && size / t != 1) {
                return Ok(false);
            }
            seen_non_unit |= t != 1;
        }
        shape.extend(sizes.iter().zip(&tile_sizes).map(|(&size, &t)| size / t));
        shape.extend(tile_sizes);
    }
    Ok(true)
}

/// Merges each `*` entry's dimension into the next more minor one (spec §4.1 step 4).
// `sizes` and `tile` have the same length, and `k + 1` is checked against it before use.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn combine(sizes: &mut Vec<i64>, tile: &mut Vec<i64>) -> Result<()> {
    let mut k = 0;
    while k < tile.len() {
        if tile[k] != i64::MIN {
            k += 1;
            continue;
        }
        if k + 1 == tile.len() {
            return Err(Error::invalid_layout(FieldPath::root().field("tiles"), LayoutProblem::TrailingCombine));
        }
        sizes[k + 1] = sizes[k]
            .checked_mul(sizes[k + 1])
            .ok_or(Error::Overflow { path: FieldPath::root().field("tiles"), what: Quantity::CombinedDimension })?;
        sizes.remove(k);
        tile.remove(k);
    }
    Ok(())
}

/// The array with `layout` (XLA: `*shape.mutable_layout() = layout`), checked against it
/// (`LayoutUtil::ValidateLayoutForShape`).
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
/// let l = make::make_ascending_layout(2);
/// assert_eq!(util::with_layout(s.as_array().unwrap(), l.view()).unwrap().to_string(), "f32[2,3]{0,1}");
/// let bad = xla_shape::make::make_layout_from_major_to_minor(&[3, 2, 1, 0]).unwrap();
/// assert!(util::with_layout(s.as_array().unwrap(), bad.view()).is_err());
/// ```
///
/// # Errors
///
/// [`Error::InvalidLayout`] and the other layout errors of validation.
pub fn with_layout(array: ArrayShape<'_>, layout: Layout<'_>) -> Result<ShapeBuf> {
    finish(array_with_layout(array, layout)?)
}

fn array_with_layout(array: ArrayShape<'_>, layout: Layout<'_>) -> Result<ShapeProto> {
    validate_layout_for_shape(layout.proto(), array.proto())?;
    Ok(ShapeProto { layout: Some(Box::new(layout.proto().clone())), ..array.proto().clone() })
}

/// `LayoutUtil::CopyLayoutBetweenShapes`: `dst` with the layouts of `src`, recursively. Where
/// `src` has no layout, `dst`'s is cleared.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let src = make::make_shape_with_dense_layout(PrimitiveType::F32, &[123, 42, 7], &[2, 0, 1]).unwrap();
/// let dst = make::make_shape(PrimitiveType::F32, &[2, 3, 5]).unwrap();
/// assert_eq!(util::copy_layout_between_shapes(src.view(), dst.view()).unwrap().to_string(), "f32[2,3,5]{2,0,1}");
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] "cannot copy layout from shape: …" when the tuple structure, a
/// tuple's element count or an array's rank differs; [`Error::NotAnArray`] when a layout would
/// land on a token or opaque shape; then the layout errors of validation.
#[doc(alias = "CopyLayoutBetweenShapes")]
pub fn copy_layout_between_shapes(src: Shape<'_>, dst: Shape<'_>) -> Result<ShapeBuf> {
    finish(copy_at(src, dst, Depth::ROOT)?)
}

fn cannot_copy(mismatch: CopyMismatch) -> Error {
    Error::invalid_argument(ArgumentProblem::CannotCopyLayout { mismatch })
}

fn copy_at(src: Shape<'_>, dst: Shape<'_>, depth: Depth) -> Result<ShapeProto> {
    depth.check(FieldPath::root)?;
    match (src.as_tuple(), dst.as_tuple()) {
        (Some(s), Some(d)) => {
            if s.len() != d.len() {
                return Err(cannot_copy(CopyMismatch::TupleElementCount));
            }
            let elements = s.iter().zip(d.iter()).map(|(s, d)| copy_at(s, d, depth.enter())).collect::<Result<_>>()?;
            Ok(wrap(PrimitiveType::TUPLE, elements))
        }
        (None, None) => copy_leaf(src, dst),
        _ => Err(cannot_copy(CopyMismatch::Structure)),
    }
}

fn copy_leaf(src: Shape<'_>, dst: Shape<'_>) -> Result<ShapeProto> {
    let source = src.array_or_buffer();
    let copied = |array: ArrayShape<'_>| match source.and_then(|s| s.layout().map(|l| (s, l))) {
        Some((s, layout)) => {
            if s.rank() != array.rank() {
                return Err(cannot_copy(CopyMismatch::Rank));
            }
            array_with_layout(array, layout)
        }
        None => Ok(ShapeProto { layout: None, ..array.proto().clone() }),
    };
    match dst.kind() {
        ShapeKind::Array(array) => copied(array),
        ShapeKind::Buffer(array) => Ok(wrap(PrimitiveType::BUFFER, vec![copied(array)?])),
        _ if source.and_then(|s| s.layout()).is_some() => Err(Error::NotAnArray {
            operation: "copy_layout_between_shapes",
            kind: ShapeCategory::of(dst.element_type()),
        }),
        _ => Ok(dst.proto().clone()),
    }
}

/// `LayoutUtil::LayoutsInShapesEqual`: the shapes have the same tuple structure, and every pair of
/// arrays has the same rank and either no layouts or equal layouts ([`LayoutEqual`] defaults).
/// Other leaves compare equal.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let a = make::make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
/// let b = make::make_shape(PrimitiveType::S8, &[7, 9]).unwrap();
/// assert!(util::layouts_in_shapes_equal(a.view(), b.view()));
/// ```
#[doc(alias = "LayoutsInShapesEqual")]
pub fn layouts_in_shapes_equal(lhs: Shape<'_>, rhs: Shape<'_>) -> bool {
    layouts_equal_at(lhs, rhs, Depth::ROOT)
}

fn layouts_equal_at(lhs: Shape<'_>, rhs: Shape<'_>, depth: Depth) -> bool {
    if depth.exceeded() {
        return false;
    }
    if let Some(l) = lhs.as_tuple() {
        return rhs.as_tuple().is_some_and(|r| {
            l.len() == r.len() && l.iter().zip(r.iter()).all(|(l, r)| layouts_equal_at(l, r, depth.enter()))
        });
    }
    let Some(l) = lhs.array_or_buffer() else { return true };
    rhs.array_or_buffer().is_some_and(|r| {
        l.rank() == r.rank()
            && match (l.layout(), r.layout()) {
                (None, None) => true,
                (Some(a), Some(b)) => LayoutEqual::new().equal(a, b),
                _ => false,
            }
    })
}
