//! Logical (row-major) order ⇄ a literal's physical order.
//!
//! A literal's buffer is dense and untiled, in the order of its layout's `minor_to_major` (XLA's
//! `Literal` indexes it with `IndexUtil`, which ignores tiles and element sizes). Moving between
//! that order and row-major is a permutation of whole elements of `width` bytes.
//!
//! The common case — a default (descending) layout, or one that differs from it only in the
//! position of size-1 dimensions — is one `copy_from_slice`. Every other order goes through the
//! relayout engine ([`crate::relayout::RelayoutPlan`]), with a stand-in element type of the same
//! width (the engine moves whole elements; what they mean does not matter here).

use crate::error::{Error, Result, ShapeCategory};
use crate::make::make_shape_with_dense_layout;
use crate::primitive::PrimitiveType;
use crate::relayout::RelayoutPlan;

/// Whether the physical order is already row-major: the dimensions of size > 1, read from most
/// major to most minor, are in increasing order.
fn is_row_major(dims: &[usize], minor_to_major: &[usize]) -> bool {
    let mut previous: Option<usize> = None;
    for &d in minor_to_major.iter().rev() {
        if dims.get(d).copied().unwrap_or(0) <= 1 {
            continue;
        }
        if previous.is_some_and(|p| p > d) {
            return false;
        }
        previous = Some(d);
    }
    true
}

/// The stand-in element type of `width` bytes (a field's element width: 1, 2, 4, 8 or 16):
/// relayout moves whole elements, whatever they mean. Another width would give a buffer of the
/// wrong length, which the plan's run reports.
fn element_of_width(width: usize) -> PrimitiveType {
    match width {
        2 => PrimitiveType::U16,
        4 => PrimitiveType::U32,
        8 => PrimitiveType::U64,
        16 => PrimitiveType::C128,
        _ => PrimitiveType::U8,
    }
}

/// The relayout from one dense, untiled order of `dims` to another.
fn plan(dims: &[usize], width: usize, from: &[i64], to: &[i64]) -> Result<RelayoutPlan> {
    let ty = element_of_width(width);
    let dims: Vec<i64> = dims.iter().map(|&d| i64::try_from(d).unwrap_or(i64::MAX)).collect();
    let source = make_shape_with_dense_layout(ty, &dims, from)?;
    let destination = make_shape_with_dense_layout(ty, &dims, to)?;
    let (Some(source), Some(destination)) = (source.as_array(), destination.as_array()) else {
        return Err(Error::NotAnArray { operation: "literal relayout", kind: ShapeCategory::Tuple });
    };
    RelayoutPlan::new(source, destination)
}

/// Which way elements move.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// Physical source, row-major destination.
    ToLogical,
    /// Row-major source, physical destination.
    ToPhysical,
}

/// Copies the elements of `src` (physical order) into `dst` in row-major order. Both hold
/// `Π dims` elements of `width` bytes; `minor_to_major` is a permutation of the dimensions.
///
/// # Errors
///
/// The relayout engine's, should a plan not fit (a validated literal always does).
pub(crate) fn to_logical(
    dims: &[usize],
    minor_to_major: &[usize],
    width: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    permute(dims, minor_to_major, width, src, dst, Direction::ToLogical)
}

/// The inverse of [`to_logical`]: row-major `src` into physical `dst`.
///
/// # Errors
///
/// As [`to_logical`].
pub(crate) fn to_physical(
    dims: &[usize],
    minor_to_major: &[usize],
    width: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    permute(dims, minor_to_major, width, src, dst, Direction::ToPhysical)
}

fn permute(
    dims: &[usize],
    minor_to_major: &[usize],
    width: usize,
    src: &[u8],
    dst: &mut [u8],
    direction: Direction,
) -> Result<()> {
    if is_row_major(dims, minor_to_major) && src.len() == dst.len() {
        // The common case, without planning: one copy.
        dst.copy_from_slice(src);
        return Ok(());
    }
    let physical: Vec<i64> = minor_to_major.iter().map(|&d| i64::try_from(d).unwrap_or(i64::MAX)).collect();
    let row_major: Vec<i64> = (0..dims.len()).rev().map(|d| i64::try_from(d).unwrap_or(i64::MAX)).collect();
    let plan = match direction {
        Direction::ToLogical => plan(dims, width, &physical, &row_major)?,
        Direction::ToPhysical => plan(dims, width, &row_major, &physical)?,
    };
    plan.run(src, dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_major_2x3() {
        // f32[2,3]{0,1} holding a d b e c f (one-byte stand-ins).
        let physical = *b"adbecf";
        let mut logical = [0u8; 6];
        to_logical(&[2, 3], &[0, 1], 1, &physical, &mut logical).unwrap();
        assert_eq!(&logical, b"abcdef");
        let mut back = [0u8; 6];
        to_physical(&[2, 3], &[0, 1], 1, &logical, &mut back).unwrap();
        assert_eq!(back, physical);
    }

    #[test]
    fn row_major_detection_ignores_unit_dimensions() {
        assert!(is_row_major(&[2, 1, 3], &[2, 0, 1]));
        assert!(!is_row_major(&[2, 1, 3], &[0, 2, 1]));
        assert!(is_row_major(&[], &[]));
    }
}
