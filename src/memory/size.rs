//! Sizes and strides (spec `linearization.md` §5).
//!
//! Two families, which agree for untiled, unpadded layouts without tail padding or splits:
//!
//! | function | tiles | element size | tail padding | legacy padding |
//! |---|---|---|---|---|
//! | [`byte_size_of_elements`], [`byte_size_of`] (XLA) | ignored | yes | ignored | `Π P` (crate extension) |
//! | [`array_size`] (XLA `ArraySize`) | tile 0 only | yes | only when tiled | `Π P` when untiled |
//! | [`array_data_size`] (XLA `ArrayDataSize`) | tile 0 only, none at rank 1 | yes | ignored | ignored |
//! | [`unpacked_byte_strides`], [`byte_strides`], [`crate::index::dimension_stride`] (XLA) | ignored | ignored | ignored | `P` (crate extension) |
//! | [`storage_slots`], [`storage_bytes`] (crate) | all, nested | yes | always | yes |
//!
//! `storage_*` describe the full physical model of [`crate::physical::PhysicalMap`]: every slot
//! it hands out is below [`storage_slots`]. They differ from XLA's [`array_size`] when an untiled
//! layout has tail padding (XLA ignores it there), when a sub-tile adds padding (XLA assumes it
//! does not: `f32[8,256]{1,0:T(8,128)(3,1)}` stores 2304 slots = 9216 bytes, while `array_size`
//! says 8192), and when split configs are present (`array_size` uses the largest split).

use crate::error::{ArgumentProblem, Quantity, ShapeCategory};
use crate::error::{Error, FieldPath, Result};
use crate::layout::Tile;
use crate::memory::extent::{bounds, extents, to_u64};
use crate::memory::physical::PhysicalMap;
use crate::memory::tiling::Plan;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dim, Shape, ShapeKind};

pub use crate::memory::extent::element_size_in_bits;

fn product(values: impl IntoIterator<Item = u64>, what: Quantity) -> Result<u64> {
    values.into_iter().try_fold(1u64, u64::checked_mul).ok_or_else(|| Error::overflow(FieldPath::root(), what))
}

fn fits(value: u64, what: Quantity) -> Result<i64> {
    i64::try_from(value).map_err(|_| Error::overflow(FieldPath::root(), what))
}

/// The number of elements (`ShapeUtil::ElementsIn`): `Π D`, using the bounds of dynamic
/// dimensions; 1 for a scalar.
///
/// ```
/// use xla_shape::{make::make_shape, size, PrimitiveType};
/// let n = |dims: &[i64]| size::elements_in(make_shape(PrimitiveType::S32, dims).unwrap().as_array().unwrap()).unwrap();
/// assert_eq!((n(&[]), n(&[3, 0, 5]), n(&[13, 17])), (1, 0, 221));
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`] for a `?` dimension.
pub fn elements_in(shape: ArrayShape<'_>) -> Result<i64> {
    fits(product(bounds(shape, "elements_in")?, Quantity::ElementCount)?, Quantity::ElementCount)
}

/// Bytes per element of a type (`ShapeUtil::ByteSizeOfPrimitiveType`); `None` for tuple, token,
/// opaque and buffer.
///
/// ```
/// use xla_shape::{size::byte_size_of_primitive_type, PrimitiveType};
/// assert_eq!(byte_size_of_primitive_type(PrimitiveType::C64), Some(8));
/// assert_eq!(byte_size_of_primitive_type(PrimitiveType::TUPLE), None);
/// ```
pub fn byte_size_of_primitive_type(element_type: PrimitiveType) -> Option<i64> {
    element_type.byte_width().map(i64::from)
}

/// `ceil(count × bits / 8)`, checked, as `i64`.
fn bytes_for(count: u64, shape: ArrayShape<'_>) -> Result<i64> {
    let bits = count
        .checked_mul(element_size_in_bits(shape))
        .ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::ShapeSize))?;
    fits(bits.div_ceil(8), Quantity::ShapeSize)
}

/// XLA's `ShapeUtil::ByteSizeOfElements`: `ceil(N × E / 8)` with `E` the element size in bits.
/// **Ignores tiles and tail padding**, exactly as XLA does. Crate extension: with legacy
/// `padded_dimensions`, `N = Π P` (legacy `ByteSizeOf`).
///
/// ```
/// use xla_shape::{make::{make_shape, make_shape_with_layout, LayoutSpec}, proto::PaddingValue, size, PrimitiveType};
/// assert_eq!(size::byte_size_of_elements(make_shape(PrimitiveType::F64, &[10, 20]).unwrap().as_array().unwrap()).unwrap(), 1600);
/// let padded = make_shape_with_layout(PrimitiveType::F32, &[10, 20],
///     &LayoutSpec::new(&[1, 0]).padded_dimensions(&[15, 21], PaddingValue::ZeroPad)).unwrap();
/// assert_eq!(size::byte_size_of_elements(padded.as_array().unwrap()).unwrap(), 1260);
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`]; [`Error::Overflow`].
pub fn byte_size_of_elements(shape: ArrayShape<'_>) -> Result<i64> {
    bytes_for(product(extents(shape, "byte_size_of_elements")?, Quantity::ShapeSize)?, shape)
}

/// XLA's `ShapeUtil::ByteSizeOf`: an array (or buffer) is [`byte_size_of_elements`]; a tuple is
/// its index table, `pointer_size × element count`; a token is 0; an opaque value is
/// `pointer_size`.
///
/// ```
/// use xla_shape::{make::*, size, PrimitiveType};
/// let t = make_tuple_shape(&[make_scalar_shape(PrimitiveType::F32).unwrap(), make_token_shape()]).unwrap();
/// assert_eq!(size::byte_size_of(t.view(), 8).unwrap(), 16);
/// assert_eq!(size::byte_size_of(make_token_shape().view(), 8).unwrap(), 0);
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when a tuple or opaque shape is given `pointer_size ≤ 0` (XLA:
/// CHECK); the errors of [`byte_size_of_elements`].
pub fn byte_size_of(shape: Shape<'_>, pointer_size: i64) -> Result<i64> {
    let require_pointer = || {
        if pointer_size > 0 {
            Ok(pointer_size)
        } else {
            Err(Error::invalid_argument(ArgumentProblem::PointerSize { pointer_size }))
        }
    };
    match shape.kind() {
        ShapeKind::Array(array) | ShapeKind::Buffer(array) => byte_size_of_elements(array),
        ShapeKind::Tuple(tuple) => require_pointer()?
            .checked_mul(
                i64::try_from(tuple.len())
                    .map_err(|_| Error::overflow(FieldPath::root(), Quantity::TupleIndexTable))?,
            )
            .ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::TupleIndexTable)),
        ShapeKind::Token => Ok(0),
        ShapeKind::Opaque => require_pointer(),
    }
}

/// XLA's `ShapeUtil::ByteSizeOfElementsRecursive`: the sum of [`byte_size_of_elements`] over
/// every array (and buffer) leaf; tokens count 0.
///
/// ```
/// use xla_shape::{make::*, size, PrimitiveType};
/// let t = make_tuple_shape(&[make_shape(PrimitiveType::S32, &[16, 32, 64]).unwrap(),
///                            make_shape(PrimitiveType::S8, &[16, 32, 64]).unwrap()]).unwrap();
/// assert_eq!(size::byte_size_of_elements_recursive(t.view()).unwrap(), 163_840);
/// ```
///
/// # Errors
///
/// [`Error::NotAnArray`] for an opaque leaf (XLA: CHECK); the errors of
/// [`byte_size_of_elements`].
pub fn byte_size_of_elements_recursive(shape: Shape<'_>) -> Result<i64> {
    match shape.kind() {
        ShapeKind::Array(array) | ShapeKind::Buffer(array) => byte_size_of_elements(array),
        // Validation bounds the depth (MAX_DEPTH), so the recursion is bounded too.
        ShapeKind::Tuple(tuple) => tuple.iter().try_fold(0i64, |acc, element| {
            acc.checked_add(byte_size_of_elements_recursive(element)?)
                .ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::ShapeSize))
        }),
        ShapeKind::Token => Ok(0),
        ShapeKind::Opaque => {
            Err(Error::NotAnArray { operation: "byte_size_of_elements_recursive", kind: ShapeCategory::Opaque })
        }
    }
}

/// The sizes of the physical dimensions, most major first, each replaced by `size(d)`.
fn physical_sizes(shape: ArrayShape<'_>, size: impl Fn(Dim) -> Result<u64>) -> Result<Vec<u64>> {
    shape.minor_to_major().iter().rev().map(size).collect()
}

/// The first tile of a tiled layout.
fn first_tile(shape: ArrayShape<'_>) -> Option<Tile<'_>> {
    shape.layout().and_then(|l| l.tiles().next())
}

/// XLA's `ShapeUtil::ArraySize`, exactly. Untiled: [`byte_size_of_elements`] (no tail padding).
/// Tiled: only tile 0 is used — each of the `r` most minor physical dimensions (its
/// [`max_split_size`]; 1 beyond the rank) is rounded up to its tile size, the others multiply
/// in unchanged — then the count is rounded up to the tail alignment. Sub-tiles are assumed to
/// add no padding, as in XLA (see [`storage_bytes`] for the full model). Crate rule: a `*` in
/// tile 0 first merges as in spec §4.1 (XLA computes garbage there).
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, size, PrimitiveType};
/// let t = make_shape_with_layout(PrimitiveType::F32, &[3, 5], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]])).unwrap();
/// assert_eq!(size::array_size(t.as_array().unwrap()).unwrap(), 96);
/// let tail = make_shape_with_layout(PrimitiveType::F32, &[5], &LayoutSpec::new(&[0]).tail_padding_alignment_in_elements(8)).unwrap();
/// assert_eq!(size::array_size(tail.as_array().unwrap()).unwrap(), 20); // untiled: tail padding ignored
/// ```
///
/// # Errors
///
/// [`Error::InvalidLayout`] for a trailing `*` in tile 0; the errors of [`max_split_size`];
/// [`Error::Overflow`].
pub fn array_size(shape: ArrayShape<'_>) -> Result<i64> {
    let Some(tile) = first_tile(shape) else { return byte_size_of_elements(shape) };
    let sizes = physical_sizes(shape, |d| max_split_size(shape, d).map(to_u64))?;
    // Π (prefix ++ ceil(s/t) ++ t) = Π prefix · Π roundup(s, t): XLA's count after merging.
    let count = Plan::new(&sizes, [tile])?.raw_slots()?;
    let alignment = shape.layout().map_or(1, |l| l.tail_padding_alignment_in_elements());
    let count = count
        .div_ceil(alignment)
        .checked_mul(alignment)
        .ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::ShapeSize))?;
    bytes_for(count, shape)
}

/// XLA's `ShapeUtil::ArrayDataSize`: the bytes up to and including the last element, by XLA's
/// top-tile `LayoutUtil::LinearIndex` of `{D-1, …}` (rank 1: the index itself, tiles ignored).
/// Zero elements give 0. Crate rule: a `*` in tile 0 merges first, as in [`array_size`].
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, size, PrimitiveType};
/// let t = make_shape_with_layout(PrimitiveType::F32, &[3, 5], &LayoutSpec::new(&[1, 0]).tiles(&[&[2, 2]])).unwrap();
/// assert_eq!(size::array_data_size(t.as_array().unwrap()).unwrap(), 84); // (20 + 1) × 4
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`]; [`Error::InvalidLayout`] for a trailing `*` in tile 0;
/// [`Error::Overflow`].
pub fn array_data_size(shape: ArrayShape<'_>) -> Result<i64> {
    let bounds = bounds(shape, "array_data_size")?;
    if bounds.contains(&0) {
        return Ok(0);
    }
    // The slots up to and including the last element: its linear index + 1.
    let count = match (bounds.as_slice(), first_tile(shape)) {
        ([], _) => 1,
        ([d], _) => *d,
        (_, None) => product(bounds.iter().copied(), Quantity::ElementCount)?,
        (_, Some(tile)) => top_tile_linear_index_of_last(shape, tile, &bounds)?
            .checked_add(1)
            .ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::LinearIndex))?,
    };
    bytes_for(count, shape)
}

/// XLA's `LayoutUtil::LinearIndex` of the last element, tile 0 only, after merging `*`.
// Called with bounds of a non-empty array (no 0), one per dimension: every extent (merged or
// rank-extended) is ≥ 1, so `extent - 1` does not underflow; tile sizes are validated ≥ 1;
// `stage.offset ≤ sizes.len()` (Plan::new). The products and sums are checked.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn top_tile_linear_index_of_last(shape: ArrayShape<'_>, tile: Tile<'_>, bounds: &[u64]) -> Result<u64> {
    let sizes = physical_sizes(shape, |d| Ok(bounds[d.index()]))?;
    let plan = Plan::new(&sizes, [tile])?;
    let Some(stage) = plan.stages.first() else { return Ok(0) };
    let checked =
        |a: u64, b: u64| a.checked_mul(b).ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::LinearIndex));
    let add =
        |a: u64, b: u64| a.checked_add(b).ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::LinearIndex));
    let mut tile_multiplier = product(stage.groups.iter().map(|g| g.tile), Quantity::LinearIndex)?;
    let mut within = 1u64;
    let mut linear = 0u64;
    for group in stage.groups.iter().rev() {
        let (extent, t) = (group.extent, group.tile);
        let e = extent - 1;
        linear = add(linear, add(checked(tile_multiplier, e / t)?, checked(within, e % t)?)?)?;
        tile_multiplier = checked(tile_multiplier, extent.div_ceil(t))?;
        within = checked(within, t)?;
    }
    // The untouched prefix, most minor first (after rank extension there is none).
    for &extent in sizes[..stage.offset].iter().rev() {
        linear = add(linear, checked(extent - 1, tile_multiplier)?)?;
        tile_multiplier = checked(tile_multiplier, extent)?;
    }
    Ok(linear)
}

/// The crate's full physical slot count (spec §5): `roundup(raw_slots, tail alignment)`, with
/// `raw_slots` = `Π D`, `Π P` (legacy padding) or the product of the nested-tiled expanded
/// shape. Every slot of [`crate::physical::PhysicalMap`] is below it. Unlike [`array_size`] it
/// counts sub-tile padding and always applies tail padding.
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, size, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::F32, &[8, 256],
///     &LayoutSpec::new(&[1, 0]).tiles(&[&[8, 128], &[3, 1]])).unwrap();
/// assert_eq!(size::storage_slots(s.as_array().unwrap()).unwrap(), 2304);
/// assert_eq!(size::storage_bytes(s.as_array().unwrap()).unwrap(), 9216);
/// assert_eq!(size::array_size(s.as_array().unwrap()).unwrap(), 8192);
/// ```
///
/// # Errors
///
/// As [`PhysicalMap::new`].
pub fn storage_slots(shape: ArrayShape<'_>) -> Result<u64> {
    Ok(PhysicalMap::new(shape)?.storage_slots())
}

/// `ceil(storage_slots × bits_per_slot / 8)`: the bytes of the full physical buffer.
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, size, PrimitiveType};
/// // Three 4-bit elements, tail-padded to 4 slots: 16 bits.
/// let s = make_shape_with_layout(PrimitiveType::S4, &[3],
///     &LayoutSpec::new(&[0]).element_size_in_bits(4).tail_padding_alignment_in_elements(4))?;
/// assert_eq!(size::storage_bytes(s.as_array().expect("an array"))?, 2);
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// As [`PhysicalMap::new`].
pub fn storage_bytes(shape: ArrayShape<'_>) -> Result<u64> {
    Ok(PhysicalMap::new(shape)?.storage_bytes())
}

/// XLA's `LayoutUtil::MaxSplitSize`: the largest piece of logical dimension `dim` under the
/// first split config whose physical dimension (`Major(layout, config.dimension)`) is `dim`;
/// the dimension's size when no config splits it.
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, size, Dim, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::F32, &[150, 200, 100],
///     &LayoutSpec::new(&[0, 1, 2]).split_config(0, &[30]).split_config(1, &[40, 130])).unwrap();
/// let a = s.as_array().unwrap();
/// assert_eq!([0, 1, 2].map(|d| size::max_split_size(a, Dim(d)).unwrap()), [150, 90, 70]);
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`] for `dim` beyond the rank; [`Error::UnboundedDimension`];
/// [`Error::Overflow`].
pub fn max_split_size(shape: ArrayShape<'_>, dim: Dim) -> Result<i64> {
    let rank = shape.rank();
    let size = *shape
        .dimensions()
        .get(dim.index())
        .ok_or(Error::DimensionOutOfRange { dimension: i64::try_from(dim.index()).unwrap_or(i64::MAX), rank })?;
    if size == i64::MIN {
        return Err(Error::UnboundedDimension { operation: "max_split_size", dimension: dim.index() });
    }
    let m2m = shape.minor_to_major();
    // Validation guarantees every split dimension is a physical dimension of the shape.
    let splits = shape.layout().map(|l| l.split_configs()).unwrap_or_default();
    let config = splits.iter().find(|c| usize::try_from(c.dimension).is_ok_and(|p| p < rank && m2m.major(p) == dim));
    if let Some(config) = config {
        let mut largest = 0i64;
        let mut last = 0i64;
        for &index in config.split_indices.iter().chain(std::iter::once(&size)) {
            largest = largest
                .max(index.checked_sub(last).ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::SplitSize))?);
            last = index;
        }
        return Ok(largest);
    }
    Ok(size)
}

/// XLA's `LayoutUtil::MaxElementsInPerSplit`: the product of [`max_split_size`] over every
/// dimension.
///
/// # Errors
///
/// As [`max_split_size`]; [`Error::Overflow`].
pub fn max_elements_in_per_split(shape: ArrayShape<'_>) -> Result<i64> {
    (0..shape.rank()).try_fold(1i64, |acc, d| {
        acc.checked_mul(max_split_size(shape, Dim(d))?)
            .ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::ElementsPerSplit))
    })
}

/// XLA's `ShapeUtil::UnpackedByteStrides`: the byte stride of each logical dimension, from the
/// type's byte width and `minor_to_major`. Ignores tiles and `element_size_in_bits`, as XLA
/// does; crate extension: legacy padded extents `P` replace the dimensions.
///
/// ```
/// use xla_shape::{make::make_shape, size, PrimitiveType};
/// let s = make_shape(PrimitiveType::F32, &[3, 5, 7]).unwrap();
/// assert_eq!(size::unpacked_byte_strides(s.as_array().unwrap()).unwrap(), [140, 28, 4]);
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`]; [`Error::Overflow`].
#[allow(clippy::indexing_slicing)] // d < rank == strides.len() == extents.len()
pub fn unpacked_byte_strides(shape: ArrayShape<'_>) -> Result<Vec<i64>> {
    let extents = extents(shape, "unpacked_byte_strides")?;
    let mut strides = vec![0i64; shape.rank()];
    let mut s = u64::from(shape.element_type().byte_width().unwrap_or(0));
    for d in shape.minor_to_major().iter() {
        strides[d.index()] = fits(s, Quantity::ByteStride)?;
        s = s
            .checked_mul(extents[d.index()])
            .ok_or_else(|| Error::overflow(FieldPath::root(), Quantity::ByteStride))?;
    }
    Ok(strides)
}

/// XLA's `ShapeUtil::ByteStrides`: `None` when `element_size_in_bits` is not a multiple of 8,
/// else [`unpacked_byte_strides`]. XLA quirk kept: a multiple of 8 (e.g. `pred` with `E(32)`)
/// is otherwise ignored and the strides still use the type's byte width.
///
/// ```
/// use xla_shape::{make::{make_shape_with_layout, LayoutSpec}, size, PrimitiveType};
/// let s = make_shape_with_layout(PrimitiveType::S4, &[10, 20], &LayoutSpec::new(&[1, 0]).element_size_in_bits(4)).unwrap();
/// assert_eq!(size::byte_strides(s.as_array().unwrap()).unwrap(), None);
/// ```
///
/// # Errors
///
/// As [`unpacked_byte_strides`].
pub fn byte_strides(shape: ArrayShape<'_>) -> Result<Option<Vec<i64>>> {
    if shape.layout().is_some_and(|l| l.element_size_in_bits() % 8 != 0) {
        return Ok(None);
    }
    unpacked_byte_strides(shape).map(Some)
}

/// XLA's `LayoutUtil::ByteStridesIsMajorToMinor`: whether `byte_strides` are the dense
/// row-major strides of `dims` for `element_type` (the last stride is the byte width, each
/// earlier one the next times its dimension).
///
/// ```
/// use xla_shape::{size::byte_strides_is_major_to_minor, PrimitiveType};
/// assert!(byte_strides_is_major_to_minor(&[3960, 440, 44, 4], &[8, 9, 10, 11], PrimitiveType::F32).unwrap());
/// assert!(!byte_strides_is_major_to_minor(&[1880, 440, 44, 4], &[8, 9, 10, 11], PrimitiveType::F32).unwrap());
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the lengths differ (XLA: CHECK) or the type is not an array
/// type.
pub fn byte_strides_is_major_to_minor(byte_strides: &[i64], dims: &[i64], element_type: PrimitiveType) -> Result<bool> {
    if byte_strides.len() != dims.len() {
        return Err(Error::invalid_argument(ArgumentProblem::ByteStrideCount {
            strides: byte_strides.len(),
            dimensions: dims.len(),
        }));
    }
    let mut stride = byte_size_of_primitive_type(element_type)
        .ok_or_else(|| Error::invalid_argument(ArgumentProblem::NoByteWidth { element_type }))?;
    for (&s, &d) in byte_strides.iter().zip(dims).rev() {
        if s != stride {
            return Ok(false);
        }
        // A stride that overflows cannot equal any i64 stride further out.
        let Some(next) = stride.checked_mul(d) else { return Ok(false) };
        stride = next;
    }
    Ok(true)
}
