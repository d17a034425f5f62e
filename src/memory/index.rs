//! XLA's `IndexUtil` (spec `linearization.md` §1): multi-index ⇄ linear index, dimension
//! strides, bounds, comparison, bumping, and iteration in layout or logical order.
//!
//! These are the *XLA-parity untiled* functions: they look only at the dimensions `D`, the
//! layout's `minor_to_major` `L` and (crate extension) the legacy `padded_dimensions` `P`. **They
//! ignore tiles, `element_size_in_bits`, tail padding and split configs, exactly as XLA does.**
//! For where an element really lives in a tiled buffer, use [`crate::physical::PhysicalMap`].
//! For a layout without tiles or padding both agree.
//!
//! ```text
//!   linear(I) = Σ_k I[L[k]] · Π_{m<k} P[L[m]]        (P = D when not padded)
//!
//!   f32[2,3]{0,1}:  a b c   →  memory  a d b e c f     (dimension 0 fastest)
//!                   d e f
//! ```
//!
//! A shape without a layout uses the default descending layout `{n-1,…,0}` (spec §2). Indices
//! are `i64`, as in XLA; negative entries are out of bounds (DV-13: XLA's `IndexInBounds`
//! accepts them).

use crate::error::{ArgumentProblem, Quantity, RangeKind};
use std::cmp::Ordering;

use crate::error::{Error, FieldPath, Result};
use crate::memory::extent::{bounds, check_index, extents, to_i64, to_u64};
use crate::shape::{ArrayShape, Dim};

/// `D`, `P` and the layout order of an array, for the untiled functions.
struct Untiled {
    bounds: Vec<u64>,
    extents: Vec<u64>,
    /// Logical dimensions, most minor first.
    order: Vec<usize>,
}

impl Untiled {
    fn new(shape: ArrayShape<'_>, operation: &'static str) -> Result<Self> {
        Ok(Self {
            bounds: bounds(shape, operation)?,
            extents: extents(shape, operation)?,
            order: shape.minor_to_major().iter().map(Dim::index).collect(),
        })
    }
}

/// The one overflow of this file: a linear index or stride beyond `i64`.
const LINEAR_OVERFLOW: fn() -> Error = || Error::overflow(FieldPath::root(), Quantity::LinearIndex);

/// XLA's `IndexUtil::MultidimensionalIndexToLinearIndex`: `Σ_k I[L[k]] · Π_{m<k} P[L[m]]`.
/// Tiles are ignored (see the module docs); legacy padding uses the padded extents.
///
/// ```
/// use xla_shape::{index, make::make_shape_with_dense_layout, PrimitiveType};
/// let col = make_shape_with_dense_layout(PrimitiveType::F32, &[10, 20], &[0, 1]).unwrap();
/// let row = make_shape_with_dense_layout(PrimitiveType::F32, &[10, 20], &[1, 0]).unwrap();
/// assert_eq!(index::multidimensional_index_to_linear_index(col.as_array().unwrap(), &[3, 5]).unwrap(), 53);
/// assert_eq!(index::multidimensional_index_to_linear_index(row.as_array().unwrap(), &[3, 5]).unwrap(), 65);
/// ```
///
/// # Errors
///
/// [`Error::IndexRank`], [`Error::IndexOutOfBounds`] (negative entries included),
/// [`Error::UnboundedDimension`].
#[allow(clippy::indexing_slicing)] // d < rank == index.len() (check_index) == extents.len(): validated minor_to_major
pub fn multidimensional_index_to_linear_index(shape: ArrayShape<'_>, index: &[i64]) -> Result<i64> {
    let u = Untiled::new(shape, "multidimensional_index_to_linear_index")?;
    check_index(&u.bounds, index)?;
    let (mut linear, mut scale) = (0u64, 1u64);
    for &d in &u.order {
        linear = scale.checked_mul(to_u64(index[d])).and_then(|v| v.checked_add(linear)).ok_or_else(LINEAR_OVERFLOW)?;
        scale = scale.checked_mul(u.extents[d]).ok_or_else(LINEAR_OVERFLOW)?;
    }
    i64::try_from(linear).map_err(|_| LINEAR_OVERFLOW())
}

/// XLA's `IndexUtil::LinearIndexToMultidimensionalIndex`, the inverse of
/// [`multidimensional_index_to_linear_index`].
///
/// ```
/// use xla_shape::{index, make::make_shape_with_dense_layout, PrimitiveType};
/// let s = make_shape_with_dense_layout(PrimitiveType::F32, &[10, 20], &[0, 1]).unwrap();
/// assert_eq!(index::linear_index_to_multidimensional_index(s.as_array().unwrap(), 53).unwrap(), [3, 5]);
/// ```
///
/// # Errors
///
/// [`Error::OutOfRange`] unless `0 ≤ linear < Π P` (so always for a zero-element array);
/// [`Error::InvalidArgument`] when a legacy padded layout puts padding at `linear`;
/// [`Error::UnboundedDimension`].
// d < rank == out.len() == extents.len() (validated minor_to_major); no extent is 0 past the
// range check, so `%` and `/` cannot fail.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub fn linear_index_to_multidimensional_index(shape: ArrayShape<'_>, linear: i64) -> Result<Vec<i64>> {
    let u = Untiled::new(shape, "linear_index_to_multidimensional_index")?;
    let total = u.extents.iter().try_fold(1u64, |acc, &e| acc.checked_mul(e)).ok_or_else(LINEAR_OVERFLOW)?;
    if to_u64(linear) >= total {
        return Err(Error::OutOfRange { what: RangeKind::LinearIndex, value: linear, bound: to_i64(total) });
    }
    let mut out = vec![0i64; u.order.len()];
    let mut rest = to_u64(linear);
    for &d in &u.order {
        // Extents are ≥ 1 here: their product exceeds `linear` ≥ 0.
        out[d] = to_i64(rest % u.extents[d]);
        rest /= u.extents[d];
    }
    if let Some((d, (&i, &bound))) = out.iter().zip(&u.bounds).enumerate().find(|&(_, (&i, &b))| to_u64(i) >= b) {
        return Err(Error::invalid_argument(ArgumentProblem::PaddingSlot {
            linear,
            dimension: d,
            index: i,
            size: bound,
        }));
    }
    Ok(out)
}

/// XLA's `IndexUtil::GetDimensionStride`: how far the linear index moves when `dim` grows by
/// one — the product of the extents of the dimensions more minor than `dim` (padded extents for
/// a legacy padded layout). Tiles are ignored.
///
/// ```
/// use xla_shape::{index, make::make_shape, Dim, PrimitiveType};
/// let s = make_shape(PrimitiveType::F32, &[5, 8, 10, 4]).unwrap();
/// let strides: Vec<i64> = (0..4).map(|d| index::dimension_stride(s.as_array().unwrap(), Dim(d)).unwrap()).collect();
/// assert_eq!(strides, [320, 40, 4, 1]);
/// ```
///
/// # Errors
///
/// [`Error::DimensionOutOfRange`], [`Error::UnboundedDimension`].
#[allow(clippy::indexing_slicing)] // d < rank == extents.len(): validated minor_to_major
pub fn dimension_stride(shape: ArrayShape<'_>, dim: Dim) -> Result<i64> {
    let u = Untiled::new(shape, "dimension_stride")?;
    if dim.index() >= u.order.len() {
        return Err(Error::DimensionOutOfRange {
            dimension: i64::try_from(dim.index()).unwrap_or(i64::MAX),
            rank: u.order.len(),
        });
    }
    let mut stride = 1u64;
    for &d in u.order.iter().take_while(|&&d| d != dim.index()) {
        stride = stride.checked_mul(u.extents[d]).ok_or_else(LINEAR_OVERFLOW)?;
    }
    i64::try_from(stride).map_err(|_| LINEAR_OVERFLOW())
}

/// XLA's `IndexUtil::IndexInBounds`: `index.len()` is the rank and `0 ≤ index[d] < D[d]`.
/// **Divergence DV-13:** negative entries are out of bounds (XLA accepts them). An unbounded
/// dimension has no valid index.
///
/// ```
/// use xla_shape::{index::index_in_bounds, make::make_shape, PrimitiveType};
/// let s = make_shape(PrimitiveType::F32, &[2, 3]).unwrap();
/// let a = s.as_array().unwrap();
/// assert!(index_in_bounds(a, &[1, 2]));
/// assert!(!index_in_bounds(a, &[2, 0]) && !index_in_bounds(a, &[1]) && !index_in_bounds(a, &[-1, 0]));
/// ```
pub fn index_in_bounds(shape: ArrayShape<'_>, index: &[i64]) -> bool {
    bounds(shape, "index_in_bounds").is_ok_and(|bounds| check_index(&bounds, index).is_ok())
}

/// XLA's `IndexUtil::CompareIndices`: lexicographic from position 0, with the code's sign —
/// `Less` ⇔ XLA's −1 ⇔ `lhs < rhs` (the upstream header comment says the opposite; the code
/// rules).
///
/// ```
/// use std::cmp::Ordering;
/// use xla_shape::index::compare_indices;
/// assert_eq!(compare_indices(&[1, 2], &[1, 3]).unwrap(), Ordering::Less);
/// assert_eq!(compare_indices(&[2, 0], &[1, 9]).unwrap(), Ordering::Greater);
/// assert!(compare_indices(&[1], &[1, 2]).is_err());
/// ```
///
/// # Errors
///
/// [`Error::IndexRank`] when the lengths differ (XLA: CHECK).
pub fn compare_indices(lhs: &[i64], rhs: &[i64]) -> Result<Ordering> {
    if lhs.len() != rhs.len() {
        return Err(Error::IndexRank { expected: lhs.len(), actual: rhs.len() });
    }
    Ok(lhs.cmp(rhs))
}

/// XLA's `IndexUtil::BumpIndices`: advances `index` to the next index in **logical row-major
/// order** (the last dimension fastest; the layout is ignored). Returns `false`, leaving `index`
/// unchanged, at the last index (and always for a scalar).
///
/// ```
/// use xla_shape::{index::bump_indices, make::make_shape, PrimitiveType};
/// let s = make_shape(PrimitiveType::S32, &[2, 2]).unwrap();
/// let mut i = [0, 0];
/// assert!(bump_indices(s.as_array().unwrap(), &mut i).unwrap());
/// assert_eq!(i, [0, 1]);
/// let mut last = [1, 1];
/// assert!(!bump_indices(s.as_array().unwrap(), &mut last).unwrap());
/// assert_eq!(last, [1, 1]);
/// ```
///
/// # Errors
///
/// [`Error::IndexRank`] or [`Error::IndexOutOfBounds`] when `index` is not a valid index;
/// [`Error::UnboundedDimension`].
pub fn bump_indices(shape: ArrayShape<'_>, index: &mut [i64]) -> Result<bool> {
    let window = Window::whole(shape, Order::Logical, "bump_indices")?;
    check_index(&window.end.iter().map(|&e| to_u64(e)).collect::<Vec<_>>(), index)?;
    Ok(window.advance(index, 0))
}

/// Which dimension moves fastest when walking all indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// `minor_to_major[0]` fastest (memory order of an untiled layout).
    Layout,
    /// The last logical dimension fastest (row-major; `BumpIndices`).
    Logical,
}

/// A box of indices walked as an odometer: `base[d] ≤ i < end[d]` in steps of `incr[d]`, the
/// dimensions turning over in `order` (fastest first).
#[derive(Debug, Clone)]
struct Window {
    order: Vec<usize>,
    base: Vec<i64>,
    end: Vec<i64>,
    incr: Vec<i64>,
}

impl Window {
    fn whole(shape: ArrayShape<'_>, order: Order, operation: &'static str) -> Result<Self> {
        let end: Vec<i64> = bounds(shape, operation)?.into_iter().map(to_i64).collect();
        let n = end.len();
        let order = match order {
            Order::Layout => shape.minor_to_major().iter().map(Dim::index).collect(),
            Order::Logical => (0..n).rev().collect(),
        };
        Ok(Self { order, base: vec![0; n], end, incr: vec![1; n] })
    }

    /// Moves `index` to the next position, turning dimensions from `order[from]` on; `false`
    /// (and `index` unchanged) when every one of them is at its last position.
    ///
    /// Needs `index.len() == rank`; every caller checked it (`bump_indices`) or built `index`
    /// from `base` (`try_for_each_index`, `Indices`).
    // `order` is a permutation of 0..rank (validated minor_to_major, or 0..n reversed) and
    // `base`, `end`, `incr` hold one entry per dimension, so every `d` indexes them and `index`;
    // `k < rest.len()` (position). `index[d] + incr[d] < end[d]` was just checked without
    // overflow (saturating), so the increment cannot overflow.
    #[inline]
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    fn advance(&self, index: &mut [i64], from: usize) -> bool {
        let rest = self.order.get(from..).unwrap_or_default();
        let Some(k) = rest.iter().position(|&d| index[d].saturating_add(self.incr[d]) < self.end[d]) else {
            return false;
        };
        let d = rest[k];
        index[d] += self.incr[d];
        for &d in &rest[..k] {
            index[d] = self.base[d];
        }
        true
    }
}

/// XLA's `ShapeUtil::ForEachIndex`: calls `visit` for every index of the window
/// `base[d] ≤ i[d] < base[d] + count[d]` (stepping by `incr[d]`), in **layout order**:
/// `minor_to_major[0]` moves fastest. `visit` returns `false` to stop early.
///
/// * `count[d] == 0` pins dimension `d` at `base[d]` (XLA: "the given dimension is fixed, but we
///   still iterate over the others") — it does not mean "no iterations".
/// * A zero-element array is never visited, whatever the window; a scalar is visited once with
///   the empty index.
///
/// ```
/// use xla_shape::{index::for_each_index, make::make_shape_with_dense_layout, PrimitiveType};
/// let s = make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
/// let mut seen = vec![];
/// for_each_index(s.as_array().unwrap(), &[0, 0], &[2, 3], &[1, 1], |i| { seen.push(i.to_vec()); true }).unwrap();
/// assert_eq!(seen, [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]);
/// ```
///
/// # Errors
///
/// [`Error::IndexRank`] when `base`, `count` or `incr` is not rank long; [`Error::InvalidArgument`]
/// for an `incr` below 1 (XLA loops forever) or a window that leaves the array (negative base or
/// count, `base + count > D`, or `base ≥ D` with count 0; XLA does not check);
/// [`Error::UnboundedDimension`].
pub fn for_each_index(
    shape: ArrayShape<'_>,
    base: &[i64],
    count: &[i64],
    incr: &[i64],
    mut visit: impl FnMut(&[i64]) -> bool,
) -> Result<()> {
    try_for_each_index(shape, base, count, incr, |index| Ok::<_, Error>(visit(index)))
}

/// [`for_each_index`] with a fallible visitor (XLA's `ForEachIndexWithStatus`): the first error
/// stops the walk and is returned.
///
/// ```
/// use xla_shape::{index::try_for_each_index, make::make_shape, Error, PrimitiveType};
/// let s = make_shape(PrimitiveType::F32, &[4, 16]).unwrap();
/// let mut calls = 0;
/// let result = try_for_each_index(s.as_array().unwrap(), &[0, 0], &[4, 16], &[1, 1], |_| {
///     calls += 1;
///     if calls == 5 { Err(Error::IndexRank { expected: 0, actual: 0 }) } else { Ok(true) }
/// });
/// assert!(result.is_err());
/// assert_eq!(calls, 5);
/// ```
///
/// # Errors
///
/// As [`for_each_index`], plus whatever `visit` returns.
// `fast = order[0] < rank`, the length of `base`, `end`, `incr` and `index` (a clone of `base`).
#[allow(clippy::indexing_slicing)]
pub fn try_for_each_index<E: From<Error>>(
    shape: ArrayShape<'_>,
    base: &[i64],
    count: &[i64],
    incr: &[i64],
    mut visit: impl FnMut(&[i64]) -> Result<bool, E>,
) -> Result<(), E> {
    let Some(window) = window(shape, base, count, incr)? else { return Ok(()) };
    let mut index = window.base.clone();
    let Some(&fast) = window.order.first() else {
        visit(&index)?;
        return Ok(());
    };
    let (start, end) = (window.base[fast], window.end[fast]);
    // incr ≥ 1 was checked; a step beyond usize leaves one position per sweep.
    let step = usize::try_from(window.incr[fast]).unwrap_or(usize::MAX);
    loop {
        // The fastest dimension in a tight counted loop; the odometer only turns between
        // sweeps.
        for i in (start..end).step_by(step) {
            index[fast] = i;
            if !visit(&index)? {
                return Ok(());
            }
        }
        index[fast] = start;
        if !window.advance(&mut index, 1) {
            return Ok(());
        }
    }
}

/// Checks a `for_each_index` window; `None` for a zero-element array.
fn window(shape: ArrayShape<'_>, base: &[i64], count: &[i64], incr: &[i64]) -> Result<Option<Window>> {
    let mut window = Window::whole(shape, Order::Layout, "for_each_index")?;
    let n = window.end.len();
    for arg in [base, count, incr] {
        if arg.len() != n {
            return Err(Error::IndexRank { expected: n, actual: arg.len() });
        }
    }
    if let Some((d, s)) = incr.iter().enumerate().find(|&(_, &s)| s < 1) {
        return Err(Error::invalid_argument(ArgumentProblem::IncrementBelowOne { dimension: d, incr: *s }));
    }
    if window.end.contains(&0) {
        return Ok(None);
    }
    for (d, ((&b, &c), window_end)) in base.iter().zip(count).zip(window.end.iter_mut()).enumerate() {
        let size = *window_end;
        // `count == 0` pins the dimension: one position, at `base`.
        let end = b.checked_add(c.max(1));
        if b < 0 || c < 0 || end.is_none_or(|e| e > size) {
            return Err(Error::invalid_argument(ArgumentProblem::WindowOutOfBounds {
                dimension: d,
                base: b,
                count: c,
                size,
            }));
        }
        *window_end = end.unwrap_or(size);
    }
    window.base = base.to_vec();
    window.incr = incr.to_vec();
    Ok(Some(window))
}

/// Every index of an array, one after the other, in layout order or in logical (row-major)
/// order.
///
/// [`next_index`](Self::next_index) lends the current index without allocating; the
/// [`Iterator`] implementation copies each into a `Vec`.
///
/// ```
/// use xla_shape::{index::Indices, make::make_shape_with_dense_layout, PrimitiveType};
/// let s = make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
/// let layout: Vec<Vec<i64>> = Indices::in_layout_order(s.as_array().unwrap()).unwrap().collect();
/// assert_eq!(layout, [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]);
/// let mut logical = Indices::in_logical_order(s.as_array().unwrap()).unwrap();
/// assert_eq!(logical.next_index(), Some(&[0, 0][..]));
/// assert_eq!(logical.next_index(), Some(&[0, 1][..]));
/// ```
#[derive(Debug, Clone)]
pub struct Indices {
    window: Window,
    current: Vec<i64>,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Fresh,
    Running,
    Done,
}

impl Indices {
    /// All indices, `minor_to_major[0]` fastest (the memory order of an untiled layout).
    ///
    /// # Errors
    ///
    /// [`Error::UnboundedDimension`].
    pub fn in_layout_order(shape: ArrayShape<'_>) -> Result<Self> {
        Ok(Self::new(Window::whole(shape, Order::Layout, "indices")?))
    }

    /// All indices in logical row-major order (the last dimension fastest), the order of
    /// [`bump_indices`].
    ///
    /// # Errors
    ///
    /// [`Error::UnboundedDimension`].
    pub fn in_logical_order(shape: ArrayShape<'_>) -> Result<Self> {
        Ok(Self::new(Window::whole(shape, Order::Logical, "indices")?))
    }

    fn new(window: Window) -> Self {
        let state = if window.end.contains(&0) { State::Done } else { State::Fresh };
        Self { current: window.base.clone(), window, state }
    }

    /// The next index, lent without allocating; `None` after the last.
    pub fn next_index(&mut self) -> Option<&[i64]> {
        match self.state {
            State::Fresh => self.state = State::Running,
            State::Running if self.window.advance(&mut self.current, 0) => {}
            State::Running | State::Done => {
                self.state = State::Done;
                return None;
            }
        }
        Some(&self.current)
    }
}

impl Iterator for Indices {
    type Item = Vec<i64>;

    fn next(&mut self) -> Option<Vec<i64>> {
        self.next_index().map(<[i64]>::to_vec)
    }
}
