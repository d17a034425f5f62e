//! Forward: multi-index → slot. One variant per form a compiled layout can take, each carrying
//! exactly what its arithmetic reads.

use std::sync::Arc;

use crate::memory::divisor::Divisor;
use crate::memory::extent::{to_u64, to_usize};
use crate::memory::slot::Slot;

use super::general::General;

/// One non-top digit of a logical index: `q = x / radix`, contributes `(x − q·radix)·stride`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    pub(super) radix: Divisor,
    pub(super) stride: u64,
}

/// How an index becomes a slot.
#[derive(Debug, Clone)]
pub(super) enum Forward {
    /// No tiles (plain or legacy padded), or tiles that leave every index entry whole:
    /// `slot = Σ I[d] · strides[d]`.
    Strided { strides: Box<[u64]> },
    /// Tiles that only refine each logical index into mixed-radix digits (no `*`, every
    /// sub-tile divides what it splits; this covers XLA's `(8,128)`, `(8,128)(2,1)`, …):
    /// `steps[ranges[d]]` are dimension d's lower digits, `top_strides[d]` its top digit's stride.
    Digits { ranges: Box<[(usize, usize)]>, steps: Box<[Step]>, top_strides: Box<[u64]> },
    /// The `Digits` case with small dimensions: each dimension's contribution precomputed,
    /// `slot = Σ offsets[starts[d] + I[d]]` — as cheap as `Strided`.
    Table { starts: Box<[usize]>, offsets: Box<[u64]> },
    /// Anything else (`*`, sub-tiles that add padding): replays the tiles.
    General(Arc<General>),
}

impl Forward {
    /// The slot of an index, with wrapping arithmetic: exact for in-bounds indices (invariant
    /// 2 of [`PhysicalMap`](super::PhysicalMap)), unspecified but panic-free otherwise.
    #[inline]
    pub(super) fn slot(&self, index: &[i64]) -> u64 {
        match self {
            Self::Strided { strides } => {
                index.iter().zip(strides.iter()).fold(0u64, |acc, (&i, &s)| acc.wrapping_add(to_u64(i).wrapping_mul(s)))
            }
            Self::Digits { ranges, steps, top_strides } => digits_slot(ranges, steps, top_strides, index),
            Self::Table { starts, offsets } => table_slot(starts, offsets, index),
            Self::General(general) => general.slot(index),
        }
    }

    /// The batch work: the per-dimension data copied into fixed `N` arrays, then
    /// [`batch_loop`] with the slot arithmetic of the form. With `CHECK`, returns whether every
    /// index was in bounds (`out` is then valid); without, `true`.
    #[inline]
    pub(super) fn batch<const N: usize, const CHECK: bool>(
        &self,
        raw_slots: u64,
        bounds: &[u64],
        indices: &[[i64; N]],
        out: &mut [Slot],
    ) -> bool {
        let last = fixed::<u64, N>(bounds).map(|b| b.wrapping_sub(1));
        match self {
            // Every stride and every in-bounds entry is below 2^32 when the slots are: then
            // 32×32→64-bit products, which vectorize (`pmuludq`). An entry that loses bits is
            // out of bounds (flagged, or promised away). The sum wraps: out-of-bounds entries
            // (computed before the check reports them) can push it past 2^64.
            Self::Strided { strides } if u32::try_from(raw_slots).is_ok() => {
                let strides = fixed::<u64, N>(strides);
                batch_loop::<N, CHECK>(indices, out, last, move |index| {
                    index.iter().zip(&strides).fold(0u64, |acc, (&i, &s)| acc.wrapping_add(mul_low_u32(to_u64(i), s)))
                })
            }
            Self::Strided { strides } => {
                let strides = fixed::<u64, N>(strides);
                batch_loop::<N, CHECK>(indices, out, last, move |index| {
                    index.iter().zip(&strides).fold(0u64, |acc, (&i, &s)| acc.wrapping_add(to_u64(i).wrapping_mul(s)))
                })
            }
            Self::Table { starts, offsets } => {
                // Dimension d's own entries: a look-up past them reads nothing and adds 0.
                let tables: [&[u64]; N] = std::array::from_fn(|d| {
                    let start = starts.get(d).copied().unwrap_or(0);
                    let len = last.get(d).map_or(0, |&l| to_usize(l.wrapping_add(1)));
                    offsets.get(start..start.saturating_add(len)).unwrap_or_default()
                });
                batch_loop::<N, CHECK>(indices, out, last, move |index| {
                    index.iter().zip(&tables).fold(0u64, |acc, (&i, table)| {
                        acc.wrapping_add(table.get(to_usize(to_u64(i))).copied().unwrap_or(0))
                    })
                })
            }
            Self::Digits { .. } | Self::General(_) => {
                batch_loop::<N, CHECK>(indices, out, last, |index| self.slot(index))
            }
        }
    }
}

/// The mixed-radix forward map: each index entry split into its digits, each digit scaled by its
/// stride. Wrapping arithmetic: exact for in-bounds input (invariant 2), panic-free otherwise.
#[inline]
pub(super) fn digits_slot(ranges: &[(usize, usize)], steps: &[Step], top_strides: &[u64], index: &[i64]) -> u64 {
    let mut slot = 0u64;
    for ((&i, &(start, end)), &top) in index.iter().zip(ranges).zip(top_strides) {
        let mut x = to_u64(i);
        for step in steps.get(start..end).unwrap_or_default() {
            let q = step.radix.div(x);
            let digit = x.wrapping_sub(q.wrapping_mul(step.radix.value));
            slot = slot.wrapping_add(digit.wrapping_mul(step.stride));
            x = q;
        }
        slot = slot.wrapping_add(x.wrapping_mul(top));
    }
    slot
}

/// The table forward map. An out-of-range entry reads no table entry and adds 0.
#[inline]
fn table_slot(starts: &[usize], offsets: &[u64], index: &[i64]) -> u64 {
    index.iter().zip(starts).fold(0u64, |acc, (&i, &start)| {
        let k = start.wrapping_add(usize::try_from(i).unwrap_or(usize::MAX));
        acc.wrapping_add(offsets.get(k).copied().unwrap_or(0))
    })
}

/// The batch loop: `out[k] = slot(indices[k])`, and with `CHECK` the bounds check of every
/// entry riding along branch-free (`last[d] = bound[d] − 1`, wrapping). Out of line, so the
/// per-dimension arrays arrive as plain values the vectorizer keeps in registers. Returns
/// whether no entry was out of bounds (always `true` without `CHECK`).
#[inline(never)]
fn batch_loop<const N: usize, const CHECK: bool>(
    indices: &[[i64; N]],
    out: &mut [Slot],
    last: [u64; N],
    slot: impl Fn(&[i64; N]) -> u64,
) -> bool {
    let mut flags = [0u64; N];
    for (index, o) in indices.iter().zip(out.iter_mut()) {
        if CHECK {
            flag_out_of_bounds(&mut flags, index, &last);
        }
        *o = Slot(slot(index));
    }
    none_flagged(&flags)
}

/// Flags, lane by lane, the entries of `index` outside `0 ≤ i < last + 1`: the top bit of
/// `i | (last − i)` (wrapping) is set exactly for those. A negative `i` sets it itself; for
/// `0 ≤ i < 2^63`, `last − i` wraps to at least `2^63` exactly when `i > last`, and a bound of 0
/// makes `last = 2^64 − 1`, which flags every `i`. Lane-wise ORs keep the check branch-free and
/// let it vectorize.
#[inline]
fn flag_out_of_bounds<const N: usize>(flags: &mut [u64; N], index: &[i64; N], last: &[u64; N]) {
    for ((flag, &i), &l) in flags.iter_mut().zip(index).zip(last) {
        *flag |= to_u64(i) | l.wrapping_sub(to_u64(i));
    }
}

/// Whether no lane of [`flag_out_of_bounds`] flagged an entry.
#[inline]
fn none_flagged<const N: usize>(flags: &[u64; N]) -> bool {
    flags.iter().fold(0, |acc, &f| acc | f) >> 63 == 0
}

/// The low 32 bits of a value, widened back.
#[inline]
const fn low_u32(value: u64) -> u64 {
    value & 0xFFFF_FFFF
}

/// The product of the low 32 bits of two values.
#[inline]
#[allow(clippy::arithmetic_side_effects)] // both factors are below 2^32, so the product fits in u64
const fn mul_low_u32(a: u64, b: u64) -> u64 {
    low_u32(a) * low_u32(b)
}

/// A per-dimension slice as a fixed array (zeros if it is shorter; callers check the length).
fn fixed<T: Copy + Default, const N: usize>(values: &[T]) -> [T; N] {
    values.get(..N).and_then(|v| <[T; N]>::try_from(v).ok()).unwrap_or([T::default(); N])
}

#[cfg(test)]
mod tests {
    use super::{flag_out_of_bounds, none_flagged};

    #[test]
    fn branch_free_bounds_flags_match_the_comparison() {
        let edges =
            [i64::MIN, i64::MIN + 1, -2, -1, 0, 1, 2, 3, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, i64::MAX - 1, i64::MAX];
        for &bound in &[0i64, 1, 2, 3, 1 << 32, i64::MAX - 1, i64::MAX] {
            let last = [u64::try_from(bound).unwrap().wrapping_sub(1)];
            for &i in &edges {
                let mut flags = [0u64];
                flag_out_of_bounds(&mut flags, &[i], &last);
                assert_eq!(none_flagged(&flags), (0..bound).contains(&i), "{i} in 0..{bound}");
            }
        }
    }
}
