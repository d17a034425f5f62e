//! Logical dimensions (spec `linearization.md` §6.2): dimension numbers with Python-style negatives,
//! dimension letters, true rank, and the operations that delete, insert, permute and reorder
//! logical dimensions while keeping the layout consistent.

use super::{End, finish, to_i64};
use crate::error::ArgumentProblem;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::proto::{LayoutProto, ShapeProto};
use crate::shape::{ArrayShape, Dim, ShapeBuf};

/// `ShapeUtil::GetDimensionNumber`: a dimension number where a negative one counts from the end,
/// as in Python (`-1` is the last dimension).
///
/// ```
/// use xla_shape::{make, util, Dim, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[5, 6, 7]).unwrap();
/// let a = s.as_array().unwrap();
/// assert_eq!(util::get_dimension_number(a, -1).unwrap(), Dim(2));
/// assert!(util::get_dimension_number(a, 3).is_err());
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] unless the normalized number is in `0..rank` (XLA CHECK-fails on
/// a negative result and does not check the upper bound).
#[doc(alias = "GetDimensionNumber")]
pub fn get_dimension_number(array: ArrayShape<'_>, dimension: i64) -> Result<Dim> {
    normalize_dimension(array.rank(), dimension).ok_or(Error::DimensionOutOfRange { dimension, rank: array.rank() })
}

fn normalize_dimension(rank: usize, dimension: i64) -> Option<Dim> {
    let normalized = if dimension < 0 { dimension.checked_add(to_i64(rank))? } else { dimension };
    usize::try_from(normalized).ok().filter(|&d| d < rank).map(Dim)
}

/// `ShapeUtil::GetDimension`: the size of a dimension given as in [`get_dimension_number`]. For
/// `[A×B×C]`, dimension `-1` has size C and `-2` has size B.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
/// assert_eq!(util::get_dimension(s.as_array().unwrap(), -2).unwrap(), 2);
/// ```
///
/// # Errors
///
/// As [`get_dimension_number`].
#[doc(alias = "GetDimension")]
#[allow(clippy::indexing_slicing)] // get_dimension_number returned d < rank
pub fn get_dimension(array: ArrayShape<'_>, dimension: i64) -> Result<i64> {
    let Dim(d) = get_dimension_number(array, dimension)?;
    Ok(array.dimensions()[d])
}

/// The letter XLA's documents give a dimension of a rank 2, 3 or 4 array: `y, x` / `z, y, x` /
/// `p, z, y, x`. Negative dimensions count from the end. Other ranks, and dimensions out of range,
/// have no letter.
///
/// ```
/// use xla_shape::util::dimension_letter;
/// assert_eq!(dimension_letter(4, 0), Some('p'));
/// assert_eq!(dimension_letter(3, -1), Some('x'));
/// assert_eq!(dimension_letter(5, 0), None);
/// ```
#[allow(clippy::arithmetic_side_effects)] // rank is 2..=4 and d < rank
pub fn dimension_letter(rank: usize, dimension: i64) -> Option<char> {
    const LETTERS: [char; 4] = ['p', 'z', 'y', 'x'];
    if !(2..=4).contains(&rank) {
        return None;
    }
    let Dim(d) = normalize_dimension(rank, dimension)?;
    LETTERS.get(4 - rank + d).copied()
}

/// The number of dimensions (`shape.dimensions().size()`; the seeds' "rank").
#[doc(alias = "Rank")]
#[doc(alias = "num_dimensions")]
pub fn rank(array: ArrayShape<'_>) -> usize {
    array.rank()
}

/// `ShapeUtil::TrueNumDimensions`: the number of dimensions whose size is not 1.
///
/// This follows XLA's code, which counts zero-sized dimensions: `f32[3,0,1]` → 2. **The seed
/// documents define the true rank as the number of dimensions "which have a size greater than
/// 1"**, which would give 1 there; the two agree whenever no dimension is 0.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[2, 1, 1]).unwrap();
/// assert_eq!(util::true_num_dimensions(s.as_array().unwrap()), 1);
/// let z = make::make_shape(PrimitiveType::F32, &[3, 0, 1]).unwrap();
/// assert_eq!(util::true_num_dimensions(z.as_array().unwrap()), 2);
/// ```
#[doc(alias = "TrueNumDimensions")]
#[doc(alias = "TrueRank")]
pub fn true_num_dimensions(array: ArrayShape<'_>) -> usize {
    array.dimensions().iter().filter(|&&d| d != 1).count()
}

/// `ShapeUtil::HasDegenerateDimensions`: whether some dimension has size 1.
#[doc(alias = "HasDegenerateDimensions")]
pub fn has_degenerate_dimensions(array: ArrayShape<'_>) -> bool {
    array.dimensions().contains(&1)
}

/// `ShapeUtil::DropDegenerateDimensions`: deletes every dimension of size 1, adjusting the layout
/// as [`delete_dimensions`] does.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[1, 3, 1, 4], &[0, 1, 2, 3]).unwrap();
/// assert_eq!(util::drop_degenerate_dimensions(s.as_array().unwrap()).unwrap().to_string(), "f32[3,4]{0,1}");
/// ```
///
/// # Errors
///
/// None for valid input; the result is validated like every built shape.
#[doc(alias = "DropDegenerateDimensions")]
pub fn drop_degenerate_dimensions(array: ArrayShape<'_>) -> Result<ShapeBuf> {
    let degenerate: Vec<Dim> =
        array.dimensions().iter().enumerate().filter(|&(_, &d)| d == 1).map(|(i, _)| Dim(i)).collect();
    delete_dimensions(&degenerate, array)
}

/// `ShapeUtil::DeleteDimension`: removes one logical dimension. See [`delete_dimensions`].
///
/// # Errors
///
/// As [`delete_dimensions`].
#[doc(alias = "DeleteDimension")]
pub fn delete_dimension(dimension: Dim, array: ArrayShape<'_>) -> Result<ShapeBuf> {
    delete_dimensions(&[dimension], array)
}

/// `ShapeUtil::DeleteDimensions`: removes logical dimensions (in any order) with their dynamic
/// flags. In the layout, each is removed from `minor_to_major` and the larger entries are
/// renumbered, keeping the relative order; every other layout field is kept (tiles too, as in
/// XLA), and legacy padding loses the same entries.
///
/// ```
/// use xla_shape::{make, util, Dim, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[5, 3, 2, 7, 9], &[2, 0, 1, 4, 3]).unwrap();
/// let r = util::delete_dimensions(&[Dim(3), Dim(1), Dim(2)], s.as_array().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "f32[5,9]{0,1}");
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] for a dimension not below the rank; [`Error::InvalidArgument`]
/// for a dimension listed twice.
#[doc(alias = "DeleteDimensions")]
// d < rank for every logical dimension of a validated shape; `kept` counts at most rank.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub fn delete_dimensions(dimensions: &[Dim], array: ArrayShape<'_>) -> Result<ShapeBuf> {
    let rank = array.rank();
    let mut deleted = vec![false; rank];
    for &Dim(d) in dimensions {
        let slot = deleted.get_mut(d).ok_or(Error::DimensionOutOfRange { dimension: to_i64(d), rank })?;
        if std::mem::replace(slot, true) {
            return Err(Error::invalid_argument(ArgumentProblem::DuplicateDimension { dimension: d }));
        }
    }
    // new_number[d] = d minus the deleted dimensions below it.
    let mut new_number = Vec::with_capacity(rank);
    let mut kept = 0;
    for &gone in &deleted {
        new_number.push(kept);
        kept += usize::from(!gone);
    }
    let sources: Vec<Source> = (0..rank).filter(|&d| !deleted[d]).map(Source::Old).collect();
    let m2m = array.minor_to_major().iter().filter(|&Dim(d)| !deleted[d]).map(|Dim(d)| to_i64(new_number[d])).collect();
    rebuild(array, &sources, Flags::Keep, edited(array, m2m))
}

/// `ShapeUtil::AppendMajorDimension`: adds a dimension of size `bound` after the last one and
/// makes it the most major in the layout (`minor_to_major` gets `n` appended). Every other field
/// is kept (XLA edits the shape in place).
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[10, 20, 30], &[0, 2, 1]).unwrap();
/// assert_eq!(util::append_major_dimension(40, s.as_array().unwrap()).unwrap().to_string(), "f32[10,20,30,40]{0,2,1,3}");
/// ```
///
/// # Errors
///
/// A bound XLA rejects (negative, or a size overflow).
#[doc(alias = "AppendMajorDimension")]
pub fn append_major_dimension(bound: i64, array: ArrayShape<'_>) -> Result<ShapeBuf> {
    append_dimension(bound, array, End::Major)
}

/// `ShapeUtil::AppendMinorDimension`: adds a dimension of size `bound` after the last one and
/// makes it the most minor in the layout (`minor_to_major` = `{n} ++ old`). Every other field is
/// kept.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[10, 20, 30], &[0, 2, 1]).unwrap();
/// assert_eq!(util::append_minor_dimension(40, s.as_array().unwrap()).unwrap().to_string(), "f32[10,20,30,40]{3,0,2,1}");
/// ```
///
/// # Errors
///
/// A bound XLA rejects (negative, or a size overflow).
#[doc(alias = "AppendMinorDimension")]
pub fn append_minor_dimension(bound: i64, array: ArrayShape<'_>) -> Result<ShapeBuf> {
    append_dimension(bound, array, End::Minor)
}

/// Appends logical dimension `n` and puts it at `end` of `minor_to_major`, editing in place.
fn append_dimension(bound: i64, array: ArrayShape<'_>, end: End) -> Result<ShapeBuf> {
    let n = array.rank();
    let mut sources: Vec<Source> = (0..n).map(Source::Old).collect();
    sources.push(Source::New(bound));
    let order = array.minor_to_major();
    let old = order.iter().map(|Dim(d)| to_i64(d));
    let new = std::iter::once(to_i64(n));
    let m2m = match end {
        End::Major => old.chain(new).collect(),
        End::Minor => new.chain(old).collect(),
    };
    rebuild(array, &sources, Flags::Keep, edited(array, m2m))
}

/// `ShapeUtil::PrependMajorDimension`: a new dimension 0 of size `bound`, most major in the
/// layout (`minor_to_major` = old entries + 1, then 0).
///
/// **XLA quirk, kept:** XLA builds a fresh shape, so the result is static (dynamic flags dropped;
/// an unbounded `?` dimension, on which XLA would crash, stays `?`) and its layout has only
/// `minor_to_major` (plus the legacy padding, by the crate rule).
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[10, 20, 30], &[0, 2, 1]).unwrap();
/// assert_eq!(util::prepend_major_dimension(40, s.as_array().unwrap()).unwrap().to_string(), "f32[40,10,20,30]{1,3,2,0}");
/// ```
///
/// # Errors
///
/// A bound XLA rejects (negative, or a size overflow).
#[doc(alias = "PrependMajorDimension")]
#[allow(clippy::arithmetic_side_effects)] // d < rank, a slice length
pub fn prepend_major_dimension(bound: i64, array: ArrayShape<'_>) -> Result<ShapeBuf> {
    let mut sources = vec![Source::New(bound)];
    sources.extend((0..array.rank()).map(Source::Old));
    let mut m2m: Vec<i64> = array.minor_to_major().iter().map(|Dim(d)| to_i64(d + 1)).collect();
    m2m.push(0);
    rebuild(array, &sources, Flags::Fresh, fresh(array, m2m))
}

/// `ShapeUtil::InsertDimensionAtIndex`: [`insert_dimensions_at_index`] with one bound.
///
/// # Errors
///
/// As [`insert_dimensions_at_index`].
#[doc(alias = "InsertDimensionAtIndex")]
pub fn insert_dimension_at_index(array: ArrayShape<'_>, index: usize, bound: i64) -> Result<ShapeBuf> {
    insert_dimensions_at_index(array, index, &[bound])
}

/// `ShapeUtil::InsertDimensionsAtIndex`: inserts dimensions of sizes `bounds` before logical
/// dimension `index` (`0 ≤ index ≤ rank`). In `minor_to_major`, entries `≥ index` shift up; the
/// new dimensions go right after (more major than) the old dimension `index`, in the order
/// `index+k-1 … index`, or become the most minor when `index == rank`.
///
/// **XLA quirk, kept:** XLA builds a fresh shape, so the result is static (dynamic flags dropped;
/// an unbounded `?` dimension, on which XLA would crash, stays `?`) and its layout has only
/// `minor_to_major` (plus the legacy padding, by the crate rule).
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[10, 20, 30], &[0, 2, 1]).unwrap();
/// let r = util::insert_dimensions_at_index(s.as_array().unwrap(), 1, &[40, 50]).unwrap();
/// assert_eq!(r.to_string(), "f32[10,40,50,20,30]{0,4,3,2,1}");
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] for `index > rank` (XLA: CHECK); a bound XLA rejects.
#[doc(alias = "InsertDimensionsAtIndex")]
#[allow(clippy::arithmetic_side_effects)] // sums of two slice lengths (index ≤ rank, k = bounds.len())
pub fn insert_dimensions_at_index(array: ArrayShape<'_>, index: usize, bounds: &[i64]) -> Result<ShapeBuf> {
    let n = array.rank();
    if index > n {
        return Err(Error::DimensionOutOfRange { dimension: to_i64(index), rank: n });
    }
    let k = bounds.len();
    let mut sources: Vec<Source> = (0..index).map(Source::Old).collect();
    sources.extend(bounds.iter().map(|&b| Source::New(b)));
    sources.extend((index..n).map(Source::Old));
    let new_dims = (index..index + k).rev().map(to_i64);
    let mut m2m = Vec::with_capacity(n + k);
    if index == n {
        m2m.extend(new_dims.clone());
    }
    for Dim(d) in array.minor_to_major().iter() {
        m2m.push(to_i64(if d >= index { d + k } else { d }));
        if d == index {
            m2m.extend(new_dims.clone());
        }
    }
    rebuild(array, &sources, Flags::Fresh, fresh(array, m2m))
}

/// `ShapeUtil::PermuteDimensions`: dimension `i` of the result is dimension `permutation[i]` of
/// `array` (dynamic flags too). With a layout, `minor_to_major[i]` becomes
/// `inverse(permutation)[minor_to_major[i]]`, so the transpose is a bitcast; every other layout
/// field is kept (tiles included, as in XLA).
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[10, 100, 1000]).unwrap();
/// assert_eq!(util::permute_dimensions(&[1, 2, 0], s.as_array().unwrap()).unwrap().to_string(), "f32[100,1000,10]{1,0,2}");
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `permutation` is not a permutation of `0..rank`.
#[doc(alias = "PermuteDimensions")]
#[allow(clippy::indexing_slicing)] // inverse_permutation checked a permutation of 0..rank; d < rank
pub fn permute_dimensions(permutation: &[usize], array: ArrayShape<'_>) -> Result<ShapeBuf> {
    let inverse = inverse_permutation(permutation, array.rank())?;
    let sources: Vec<Source> = permutation.iter().map(|&d| Source::Old(d)).collect();
    let m2m = array.minor_to_major().iter().map(|Dim(d)| to_i64(inverse[d])).collect();
    rebuild(array, &sources, Flags::Keep, edited(array, m2m))
}

/// `ShapeUtil::PermuteDimensionsIgnoringLayout`: permutes the dimensions as
/// [`permute_dimensions`] does and copies the layout unchanged (legacy padding follows its
/// dimensions, by the crate rule).
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape(PrimitiveType::F32, &[10, 100, 1000]).unwrap();
/// let r = util::permute_dimensions_ignoring_layout(&[1, 2, 0], s.as_array().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "f32[100,1000,10]{2,1,0}");
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `permutation` is not a permutation of `0..rank`.
#[doc(alias = "PermuteDimensionsIgnoringLayout")]
pub fn permute_dimensions_ignoring_layout(permutation: &[usize], array: ArrayShape<'_>) -> Result<ShapeBuf> {
    inverse_permutation(permutation, array.rank())?;
    let sources: Vec<Source> = permutation.iter().map(|&d| Source::Old(d)).collect();
    rebuild(array, &sources, Flags::Keep, edited(array, array.minor_to_major().to_vec()))
}

/// `ShapeUtil::ReorderLogicalDimensions`: dimension `i` of the result is dimension
/// `permutation[i]` of `array`; the layout is copied with **each `minor_to_major` entry `d`
/// replaced by `permutation[d]`**.
///
/// That mapping is XLA's as the specification records it (a spec'd parity quirk): it keeps the
/// physical order only when `permutation` is its own inverse. [`permute_dimensions`] is the
/// layout-preserving operation.
///
/// ```
/// use xla_shape::{make, util, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[16, 3, 12, 17], &[1, 2, 0, 3]).unwrap();
/// let r = util::reorder_logical_dimensions(s.as_array().unwrap(), &[0, 2, 1, 3]).unwrap();
/// assert_eq!(r.to_string(), "f32[16,12,3,17]{2,1,0,3}");
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `permutation` is not a permutation of `0..rank`.
#[doc(alias = "ReorderLogicalDimensions")]
#[allow(clippy::indexing_slicing)] // inverse_permutation checked a permutation of 0..rank; d < rank
pub fn reorder_logical_dimensions(array: ArrayShape<'_>, permutation: &[usize]) -> Result<ShapeBuf> {
    inverse_permutation(permutation, array.rank())?;
    let sources: Vec<Source> = permutation.iter().map(|&d| Source::Old(d)).collect();
    let m2m = array.minor_to_major().iter().map(|Dim(d)| to_i64(permutation[d])).collect();
    rebuild(array, &sources, Flags::Keep, edited(array, m2m))
}

/// `ShapeUtil::IsEffectivelyMostMajorDimension`: walking the dimensions from the most major,
/// `dimension` is reached before any other dimension whose size is not 1. False for a dimension
/// that is not below the rank, as in XLA.
///
/// ```
/// use xla_shape::{make, util, Dim, PrimitiveType};
/// let s = make::make_shape_with_dense_layout(PrimitiveType::F32, &[1, 1, 16, 1, 279], &[4, 0, 1, 2, 3]).unwrap();
/// assert!(util::is_effectively_most_major_dimension(s.as_array().unwrap(), Dim(2)));
/// ```
#[doc(alias = "IsEffectivelyMostMajorDimension")]
#[allow(clippy::indexing_slicing)] // minor_to_major of a validated shape holds dimensions < rank
pub fn is_effectively_most_major_dimension(array: ArrayShape<'_>, dimension: Dim) -> bool {
    for Dim(major) in array.minor_to_major().iter().rev() {
        if major == dimension.0 {
            return true;
        }
        if array.dimensions()[major] != 1 {
            return false;
        }
    }
    false
}

/// The inverse of `permutation`, checked to be a permutation of `0..rank`.
pub(super) fn inverse_permutation(permutation: &[usize], rank: usize) -> Result<Vec<usize>> {
    let mut inverse = vec![usize::MAX; rank];
    let valid = permutation.len() == rank
        && permutation
            .iter()
            .enumerate()
            .all(|(i, &p)| inverse.get_mut(p).is_some_and(|slot| std::mem::replace(slot, i) == usize::MAX));
    if valid {
        Ok(inverse)
    } else {
        Err(Error::invalid_argument(ArgumentProblem::NotAPermutation { permutation: permutation.to_vec(), rank }))
    }
}

/// Where a dimension of a rebuilt array comes from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source {
    /// Dimension `d` of the original array (size, dynamic flag, legacy padding).
    Old(usize),
    /// A new static dimension of this size (padded to itself).
    New(i64),
}

/// What happens to the dynamic flags of the dimensions that are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flags {
    /// They move with their dimensions.
    Keep,
    /// A fresh shape: every dimension is static except the unbounded ones, which stay `?` (as
    /// [`crate::make::make_shape`] marks them; XLA would crash on them).
    Fresh,
}

/// The array's layout with a new `minor_to_major` and every other field kept (XLA edits the
/// layout in place). `None` without a layout.
pub(super) fn edited(array: ArrayShape<'_>, minor_to_major: Vec<i64>) -> Option<LayoutProto> {
    array.layout().map(|layout| LayoutProto { minor_to_major, ..layout.proto().clone() })
}

/// A fresh layout with only `minor_to_major` (XLA builds a new shape). `None` without a layout.
pub(super) fn fresh(array: ArrayShape<'_>, minor_to_major: Vec<i64>) -> Option<LayoutProto> {
    array.layout().map(|_| LayoutProto { minor_to_major, ..LayoutProto::default() })
}

/// Builds the array whose dimension `i` comes from `sources[i]`, with `layout` (already holding
/// its new `minor_to_major`). The per-dimension lists of the layout are rebuilt from the
/// original: legacy `padded_dimensions` always (crate rule), the all-dense sparse-era lists when
/// `layout` kept them.
pub(super) fn rebuild(
    array: ArrayShape<'_>,
    sources: &[Source],
    flags: Flags,
    layout: Option<LayoutProto>,
) -> Result<ShapeBuf> {
    let dimensions = array.dimensions();
    let layout = layout.map(|mut layout| {
        remap_dimension_lists(array.layout(), &mut layout, sources);
        Box::new(layout)
    });
    finish(ShapeProto {
        element_type: array.element_type().as_i32(),
        dimensions: remap(dimensions, sources, |b| b),
        tuple_shapes: Vec::new(),
        layout,
        is_dynamic_dimension: match flags {
            Flags::Keep => {
                sources.iter().map(|s| matches!(*s, Source::Old(d) if array.is_dynamic_dimension(Dim(d)))).collect()
            }
            Flags::Fresh => remap(dimensions, sources, |b| b).iter().map(|&d| d == i64::MIN).collect(),
        },
    })
}

/// Rebuilds the per-logical-dimension lists of `layout` for the new dimension order.
pub(super) fn remap_dimension_lists(original: Option<Layout<'_>>, layout: &mut LayoutProto, sources: &[Source]) {
    if let Some(padded) = original.and_then(|l| l.padded_dimensions()) {
        layout.padded_dimensions = remap(padded, sources, |bound| bound);
        layout.padding_value = original.map_or(0, |l| l.padding_value());
    }
    if !layout.dim_level_types.is_empty() {
        layout.dim_level_types = remap(&layout.dim_level_types, sources, |_| 0);
    }
    if !layout.dim_unique.is_empty() {
        layout.dim_unique = remap(&layout.dim_unique, sources, |_| true);
    }
    if !layout.dim_ordered.is_empty() {
        layout.dim_ordered = remap(&layout.dim_ordered, sources, |_| true);
    }
}

/// `list` reordered by `sources`; a new dimension of size `b` gets `new(b)`.
fn remap<T: Copy>(list: &[T], sources: &[Source], new: impl Fn(i64) -> T) -> Vec<T> {
    sources
        .iter()
        .filter_map(|s| match *s {
            Source::Old(d) => list.get(d).copied(),
            Source::New(b) => Some(new(b)),
        })
        .collect()
}

/// The logical dimension at each physical position, most major first.
pub(super) fn major_to_minor(array: ArrayShape<'_>) -> Vec<usize> {
    array.minor_to_major().iter().rev().map(|Dim(d)| d).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize() {
        assert_eq!(normalize_dimension(3, -3), Some(Dim(0)));
        assert_eq!(normalize_dimension(3, -4), None);
        assert_eq!(normalize_dimension(3, i64::MIN), None);
        assert_eq!(normalize_dimension(0, 0), None);
    }

    #[test]
    fn inverse() {
        assert_eq!(inverse_permutation(&[1, 2, 0], 3).unwrap(), [2, 0, 1]);
        assert!(inverse_permutation(&[1, 1, 0], 3).is_err());
        assert!(inverse_permutation(&[0, 1], 3).is_err());
        assert!(inverse_permutation(&[0, 3, 1], 3).is_err());
    }
}
