//! Bitcast predicates (spec `linearization.md` §6.5): whether a transpose or a reshape leaves
//! every element where it was, so it can be a bitcast.
//!
//! As in XLA, **tiles are ignored**: physical positions are the untiled
//! [`crate::index::multidimensional_index_to_linear_index`] (legacy padded extents included,
//! crate extension). A shape without a layout uses the default descending layout, where XLA
//! CHECK-fails.

use crate::error::ArgumentProblem;
use crate::error::{Error, Result};
use crate::index::multidimensional_index_to_linear_index;
use crate::memory::extent::to_i64;
use crate::shape::{ArrayShape, Dim};
use crate::size::elements_in;
use crate::util::equal_ignoring_element_type;

/// XLA's `ShapeUtil::TransposeIsBitcast`: whether transposing `input` into `output` by
/// `dimension_mapping` (output dimension `i` is input dimension `mapping[i]`) keeps memory
/// order: `mapping[output.m2m[i]] == input.m2m[i]` for every `i`, and the element types match
/// unless ignored.
///
/// ```
/// use xla_shape::{bitcast::transpose_is_bitcast, make::make_shape_with_dense_layout, PrimitiveType};
/// let a = make_shape_with_dense_layout(PrimitiveType::F32, &[10, 5], &[1, 0]).unwrap();
/// let b = make_shape_with_dense_layout(PrimitiveType::F16, &[5, 10], &[0, 1]).unwrap();
/// let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
/// assert!(transpose_is_bitcast(a, b, &[1, 0], true).unwrap());
/// assert!(!transpose_is_bitcast(a, b, &[1, 0], false).unwrap());
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the ranks differ or `dimension_mapping` is not a permutation
/// of the dimensions (XLA: CHECK).
pub fn transpose_is_bitcast(
    input: ArrayShape<'_>,
    output: ArrayShape<'_>,
    dimension_mapping: &[i64],
    ignore_element_type: bool,
) -> Result<bool> {
    let n = input.rank();
    let mut seen = vec![false; n];
    let is_permutation = output.rank() == n
        && dimension_mapping.len() == n
        && dimension_mapping.iter().all(|&d| {
            usize::try_from(d).ok().and_then(|d| seen.get_mut(d)).is_some_and(|s| !std::mem::replace(s, true))
        });
    if !is_permutation {
        return Err(Error::invalid_argument(ArgumentProblem::NotADimensionMapping {
            mapping: dimension_mapping.to_vec(),
            input_rank: n,
            output_rank: output.rank(),
        }));
    }
    if !ignore_element_type && input.element_type() != output.element_type() {
        return Ok(false);
    }
    let mapping = |d: Dim| dimension_mapping.get(d.index()).copied();
    let identity = |d: Dim| Some(to_i64(d.index() as u64));
    Ok(output.minor_to_major().iter().map(mapping).eq(input.minor_to_major().iter().map(identity)))
}

/// XLA's `ShapeUtil::ReshapeIsBitcast`: whether reshaping `input` into `output` keeps every
/// element's (untiled) physical position. Equal element counts are required (a count of 0 is
/// always a bitcast); then every "unit index" of each side (a single 1 in a dimension of size
/// at least 2) must land at the same physical offset as the element at the same logical
/// row-major position on the other side.
///
/// ```
/// use xla_shape::{bitcast::reshape_is_bitcast, make::make_shape_with_dense_layout, PrimitiveType};
/// let s = |dims: &[i64], m2m: &[i64]| make_shape_with_dense_layout(PrimitiveType::F32, dims, m2m).unwrap();
/// let (a, b) = (s(&[3, 2, 2], &[1, 0, 2]), s(&[6, 2], &[0, 1]));
/// assert!(reshape_is_bitcast(a.as_array().unwrap(), b.as_array().unwrap(), false).unwrap());
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`].
pub fn reshape_is_bitcast(input: ArrayShape<'_>, output: ArrayShape<'_>, ignore_element_type: bool) -> Result<bool> {
    if !ignore_element_type && input.element_type() != output.element_type() {
        return Ok(false);
    }
    let count = elements_in(input)?;
    if count != elements_in(output)? {
        return Ok(false);
    }
    if count == 0 {
        return Ok(true);
    }
    Ok(unit_indices_stay(input, output)? && unit_indices_stay(output, input)?)
}

/// Every unit index of `from` sits at the same physical offset as the element of `to` at the
/// same logical (row-major) position.
// Called only by `reshape_is_bitcast`, once both element counts are equal, bounded and non-zero:
// every dimension of `to` is then ≥ 1 and `rest` stays in 0..count (no division by zero, no
// overflow); `dim < dims.len() == unit.len()`, so `dim + 1` is a valid slice start.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn unit_indices_stay(from: ArrayShape<'_>, to: ArrayShape<'_>) -> Result<bool> {
    let dims = from.dimensions();
    for (dim, _) in dims.iter().enumerate().filter(|&(_, &size)| size > 1) {
        let mut unit = vec![0i64; dims.len()];
        unit[dim] = 1;
        // Row-major position of the unit index: the product of the later dimensions (< count).
        let logical: i64 = dims[dim + 1..].iter().product();
        let mut rest = logical;
        let mut target = vec![0i64; to.rank()];
        for (t, &d) in target.iter_mut().zip(to.dimensions()).rev() {
            *t = rest % d;
            rest /= d;
        }
        if multidimensional_index_to_linear_index(from, &unit)? != multidimensional_index_to_linear_index(to, &target)?
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// XLA's `ShapeUtil::IsReshapeOrTransposeBitcast`: element types match (unless ignored), and
/// `a` and `b` are equal ignoring the element type, or [`reshape_is_bitcast`] holds, or the
/// transpose deduced from both layouts maps `a`'s dimensions onto `b`'s and
/// [`transpose_is_bitcast`] holds.
///
/// ```
/// use xla_shape::{bitcast::is_reshape_or_transpose_bitcast, make::make_shape_with_dense_layout, PrimitiveType};
/// let a = make_shape_with_dense_layout(PrimitiveType::F32, &[10, 5], &[1, 0]).unwrap();
/// let b = make_shape_with_dense_layout(PrimitiveType::F32, &[5, 10], &[0, 1]).unwrap();
/// assert!(is_reshape_or_transpose_bitcast(a.as_array().unwrap(), b.as_array().unwrap(), false).unwrap());
/// ```
///
/// # Errors
///
/// [`Error::UnboundedDimension`].
pub fn is_reshape_or_transpose_bitcast(
    a: ArrayShape<'_>,
    b: ArrayShape<'_>,
    ignore_element_type: bool,
) -> Result<bool> {
    if !ignore_element_type && a.element_type() != b.element_type() {
        return Ok(false);
    }
    if equal_ignoring_element_type(a.as_shape(), b.as_shape()) || reshape_is_bitcast(a, b, true)? {
        return Ok(true);
    }
    match deduce_transpose_dimensions_for_bitcast(a, b) {
        Some(perm) => transpose_is_bitcast(b, a, &perm, true),
        None => Ok(false),
    }
}

/// XLA's `ShapeUtil::DeduceTransposeDimensionsForBitcast`: the permutation
/// `perm[i] = input.m2m[inverse(output.m2m)[i]]`, if it maps the input dimensions onto the
/// output's.
#[allow(clippy::indexing_slicing)] // both minor_to_major are validated permutations of 0..n
fn deduce_transpose_dimensions_for_bitcast(input: ArrayShape<'_>, output: ArrayShape<'_>) -> Option<Vec<i64>> {
    let n = input.rank();
    if output.rank() != n {
        return None;
    }
    let (in_m2m, out_m2m) = (input.minor_to_major(), output.minor_to_major());
    let mut inverse = vec![0usize; n];
    for (k, d) in out_m2m.iter().enumerate() {
        inverse[d.index()] = k;
    }
    let perm: Vec<usize> = inverse.iter().map(|&k| in_m2m.minor(k).index()).collect();
    let permuted = perm.iter().map(|&p| input.dimensions()[p]);
    permuted.eq(output.dimensions().iter().copied()).then(|| perm.iter().map(|&p| to_i64(p as u64)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::make::make_shape_with_dense_layout;
    use crate::primitive::PrimitiveType;

    #[test]
    fn deduce_transpose_dimensions() {
        // Upstream shape_util_test DeduceTransposeDimensionsForBitcast (+ Negative).
        let s = |dims: &[i64], m2m: &[i64]| make_shape_with_dense_layout(PrimitiveType::F32, dims, m2m).unwrap();
        let (a, b, c) = (s(&[5, 3], &[1, 0]), s(&[3, 5], &[0, 1]), s(&[3, 5], &[1, 0]));
        let (a, b, c) = (a.as_array().unwrap(), b.as_array().unwrap(), c.as_array().unwrap());
        assert_eq!(deduce_transpose_dimensions_for_bitcast(a, b), Some(vec![1, 0]));
        assert_eq!(deduce_transpose_dimensions_for_bitcast(a, c), None);
    }
}
