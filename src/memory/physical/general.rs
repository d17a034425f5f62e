//! The general fallback of both directions: any tiling the digit forms cannot express (`*`
//! combine dimensions, sub-tiles that add padding) replays the tiles stage by stage on a
//! scratch buffer.

use crate::memory::divisor::Divisor;
use crate::memory::extent::{to_i64, to_u64};
use crate::memory::tiling::Plan;

/// Scratch entries kept on the stack by the general path; wider expansions use the heap.
const SCRATCH: usize = 32;

#[allow(clippy::indexing_slicing)] // widest ≤ SCRATCH on that branch
fn with_scratch<R>(widest: usize, f: impl FnOnce(&mut [u64], &mut [u64]) -> R) -> R {
    if widest <= SCRATCH {
        let (mut a, mut b) = ([0u64; SCRATCH], [0u64; SCRATCH]);
        f(&mut a[..widest], &mut b[..widest])
    } else {
        f(&mut vec![0; widest], &mut vec![0; widest])
    }
}

/// The tiles of a layout, replayed per query.
#[derive(Debug)]
pub(super) struct General {
    plan: Plan,
    /// The logical dimension at each physical position, most major first.
    physical_dims: Box<[usize]>,
    /// Row-major strides of the final expanded shape.
    final_strides: Box<[u64]>,
    /// The final extents as divisors, most major first.
    final_extents: Box<[Divisor]>,
}

// Both methods get scratch buffers of `plan.widest` entries (`with_scratch`), which is what
// `Stage::apply`/`unapply` require, and every length they return or start from (the physical
// rank, a stage's output length, the final expanded rank) is at most `widest`.
impl General {
    pub(super) fn new(plan: Plan, physical_dims: Box<[usize]>, final_strides: Box<[u64]>) -> Self {
        let final_extents = plan.extents.iter().map(|&e| Divisor::new(e)).collect();
        Self { plan, physical_dims, final_strides, final_extents }
    }

    /// The slot of an index; wrapping arithmetic, exact for in-bounds indices.
    // Kept out of line so the scratch buffers never weigh on the fast paths' loops.
    #[inline(never)]
    #[allow(clippy::indexing_slicing)] // len ≤ widest == values.len(): see above
    pub(super) fn slot(&self, index: &[i64]) -> u64 {
        with_scratch(self.plan.widest, |values, scratch| {
            for (v, &d) in values.iter_mut().zip(self.physical_dims.iter()) {
                *v = to_u64(index.get(d).copied().unwrap_or(0));
            }
            let mut len = self.physical_dims.len();
            for stage in &self.plan.stages {
                len = stage.apply(values, len, scratch);
            }
            values[..len]
                .iter()
                .zip(self.final_strides.iter())
                .fold(0u64, |acc, (&v, &s)| acc.wrapping_add(v.wrapping_mul(s)))
        })
    }

    /// Needs `slot < raw_slots` and `out.len() == rank` (checked by
    /// [`PhysicalMap::index_of_slot_into`](super::PhysicalMap::index_of_slot_into)).
    // Every length is ≤ widest == values.len() (see above), and every `d` of `physical_dims` is
    // a logical dimension < rank == out.len(). `n < raw_slots ≤ i64::MAX` (invariant 1), so
    // `Divisor::div` is exact and `q · extent ≤ n`.
    #[inline(never)]
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub(super) fn index_of(&self, slot: u64, out: &mut [i64]) -> bool {
        with_scratch(self.plan.widest, |values, scratch| {
            let mut n = slot;
            let len = self.final_extents.len();
            for (v, extent) in values[..len].iter_mut().zip(self.final_extents.iter()).rev() {
                let q = extent.div(n);
                *v = n - q * extent.value;
                n = q;
            }
            let mut len = len;
            for stage in self.plan.stages.iter().rev() {
                match stage.unapply(values, len, scratch) {
                    Some(l) => len = l,
                    None => return false,
                }
            }
            for (&v, &d) in values[..len].iter().zip(self.physical_dims.iter()) {
                out[d] = to_i64(v);
            }
            true
        })
    }
}
