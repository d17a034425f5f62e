//! Logical (row-major) order ⇄ a literal's physical order.
//!
//! A literal's buffer is dense and untiled, in the order of its layout's `minor_to_major` (XLA's
//! `Literal` indexes it with `IndexUtil`, which ignores tiles and element sizes). Moving between
//! that order and row-major is a permutation of whole elements of `width` bytes.
//!
//! The common case — a default (descending) layout, or one that differs from it only in the
//! position of size-1 dimensions — is one `copy_from_slice`. Otherwise each row of the
//! destination is gathered with the source stride of the innermost logical dimension
//! (contiguous rows are copied whole), the outer dimensions advanced by an odometer.

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

/// The physical stride, in elements, of each logical dimension.
#[allow(
    clippy::arithmetic_side_effects,
    reason = "invariant: strides are suffix products of an element count that fits in memory"
)]
fn physical_strides(dims: &[usize], minor_to_major: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut stride = 1;
    for &d in minor_to_major {
        if let Some(slot) = strides.get_mut(d) {
            *slot = stride;
        }
        stride *= dims.get(d).copied().unwrap_or(1);
    }
    strides
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
pub(crate) fn to_logical(dims: &[usize], minor_to_major: &[usize], width: usize, src: &[u8], dst: &mut [u8]) {
    permute(dims, minor_to_major, width, src, dst, Direction::ToLogical);
}

/// The inverse of [`to_logical`]: row-major `src` into physical `dst`.
pub(crate) fn to_physical(dims: &[usize], minor_to_major: &[usize], width: usize, src: &[u8], dst: &mut [u8]) {
    permute(dims, minor_to_major, width, src, dst, Direction::ToPhysical);
}

#[allow(
    clippy::arithmetic_side_effects,
    reason = "invariant: every offset is below the element count times width, the length of both buffers"
)]
fn permute(dims: &[usize], minor_to_major: &[usize], width: usize, src: &[u8], dst: &mut [u8], direction: Direction) {
    if src.len() != dst.len() {
        return;
    }
    if is_row_major(dims, minor_to_major) || src.is_empty() {
        dst.copy_from_slice(src);
        return;
    }
    let strides = physical_strides(dims, minor_to_major);
    let Some((&inner, outer_dims)) = dims.split_last() else {
        dst.copy_from_slice(src);
        return;
    };
    let inner_stride = strides.last().copied().unwrap_or(1);
    let mut index = vec![0usize; outer_dims.len()];
    let mut physical = 0usize; // element offset of the current row's first element
    let mut logical = 0usize;
    loop {
        for i in 0..inner {
            let (p, l) = ((physical + i * inner_stride) * width, (logical + i) * width);
            let (from, to) = match direction {
                Direction::ToLogical => (p, l),
                Direction::ToPhysical => (l, p),
            };
            if let (Some(s), Some(d)) = (src.get(from..from + width), dst.get_mut(to..to + width)) {
                d.copy_from_slice(s);
            }
        }
        logical += inner;
        // Odometer over the outer dimensions, most minor (last) first.
        let mut d = outer_dims.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            let stride = strides.get(d).copied().unwrap_or(0);
            let (Some(i), Some(&size)) = (index.get_mut(d), outer_dims.get(d)) else { return };
            *i += 1;
            physical += stride;
            if *i < size {
                break;
            }
            physical -= stride * size;
            *i = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_major_2x3() {
        // f32[2,3]{0,1} holding a d b e c f (one-byte stand-ins).
        let physical = *b"adbecf";
        let mut logical = [0u8; 6];
        to_logical(&[2, 3], &[0, 1], 1, &physical, &mut logical);
        assert_eq!(&logical, b"abcdef");
        let mut back = [0u8; 6];
        to_physical(&[2, 3], &[0, 1], 1, &logical, &mut back);
        assert_eq!(back, physical);
    }

    #[test]
    fn row_major_detection_ignores_unit_dimensions() {
        assert!(is_row_major(&[2, 1, 3], &[2, 0, 1]));
        assert!(!is_row_major(&[2, 1, 3], &[0, 2, 1]));
        assert!(is_row_major(&[], &[]));
    }
}
