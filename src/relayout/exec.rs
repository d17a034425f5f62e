//! Execution: check the buffers, prefill the destination's padding, run the boxes. No
//! allocation (except a rank-long index on the general path for ranks above 32).

use super::endpoint::{Prefill, Resolved};
use super::kernel;
use super::plan::{Block, Kernel, Stores, Strategy, Unit};
use crate::error::{Error, RelayoutProblem, RelayoutSide, Result};

/// Checks a buffer's length against its side: exact for a layout, at least for a view.
pub(crate) fn check_len(side: &Resolved, which: RelayoutSide, len: usize) -> Result<()> {
    let actual = u64::try_from(len).unwrap_or(u64::MAX);
    let ok = if side.exact { actual == side.len } else { actual >= side.len };
    if ok {
        Ok(())
    } else {
        Err(Error::Relayout(Box::new(RelayoutProblem::BufferLength { side: which, expected: side.len, actual })))
    }
}

/// Writes the destination's padding before the elements.
pub(crate) fn prefill(dst: &Resolved, buf: &mut [u8]) {
    match dst.prefill {
        Prefill::None => {}
        Prefill::Zero => buf.fill(0),
        Prefill::Pattern { pattern, raw_slots } => {
            buf.fill(0);
            if dst.slot_bits % 8 == 0 && dst.slot_bits == dst.value_bits {
                // Whole-byte slots: the pattern's bytes, little-endian, repeated.
                let width = usize::try_from(dst.slot_bits / 8).unwrap_or(0);
                let bytes = pattern.to_le_bytes();
                let (Some(one), Ok(slots)) = (bytes.get(..width), usize::try_from(raw_slots)) else { return };
                let end = slots.saturating_mul(width).min(buf.len());
                if let Some(region) = buf.get_mut(..end) {
                    for chunk in region.chunks_exact_mut(width.max(1)) {
                        chunk.copy_from_slice(one);
                    }
                }
            } else {
                let slot = dst.slot_bits;
                for k in 0..raw_slots {
                    let offset = crate::memory::extent::to_i64(k.wrapping_mul(slot));
                    kernel::write_bits(buf, offset, slot, pattern);
                }
            }
        }
    }
}

/// Moves every element.
pub(crate) fn execute(strategy: &Strategy, src_side: &Resolved, dst_side: &Resolved, src: &[u8], dst: &mut [u8]) {
    match strategy {
        Strategy::Identity { stores } => {
            let len = dst.len();
            kernel::rows(src, dst, 0, 0, &[], len, *stores);
        }
        Strategy::Boxes { unit, blocks, stores } => {
            for block in blocks {
                #[cfg(feature = "rayon")]
                if parallel::run_block(*unit, *stores, block, src, dst) {
                    continue;
                }
                run_block(*unit, *stores, block, src, dst);
            }
        }
        Strategy::General { unit } => general(*unit, src_side, dst_side, src, dst),
    }
}

/// One box with its kernel.
pub(crate) fn run_block(unit: Unit, stores: Stores, block: &Block, src: &[u8], dst: &mut [u8]) {
    run_kernel(unit, stores, block.kernel, (block.src, block.dst), &block.axes, src, dst);
}

/// A kernel on a box given by its parts (`(s, d)`: the box's source and destination offsets).
fn run_kernel(
    unit: Unit,
    stores: Stores,
    kernel: Kernel,
    (s, d): (i64, i64),
    axes: &[super::plan::Axis],
    src: &[u8],
    dst: &mut [u8],
) {
    match (unit, kernel) {
        (Unit::Bytes { width }, Kernel::Rows) => kernel::rows(src, dst, s, d, axes, width, stores),
        (Unit::Bytes { width }, Kernel::Transpose { src_minor, order }) => match width {
            1 => kernel::transpose::<1>(src, dst, (s, d), axes, (src_minor, order), stores),
            2 => kernel::transpose::<2>(src, dst, (s, d), axes, (src_minor, order), stores),
            4 => kernel::transpose::<4>(src, dst, (s, d), axes, (src_minor, order), stores),
            8 => kernel::transpose::<8>(src, dst, (s, d), axes, (src_minor, order), stores),
            16 => kernel::transpose::<16>(src, dst, (s, d), axes, (src_minor, order), stores),
            _ => kernel::elements_dyn(src, dst, s, d, axes, width),
        },
        (Unit::Bytes { width }, _) => match width {
            1 => kernel::elements::<1>(src, dst, s, d, axes),
            2 => kernel::elements::<2>(src, dst, s, d, axes),
            4 => kernel::elements::<4>(src, dst, s, d, axes),
            8 => kernel::elements::<8>(src, dst, s, d, axes),
            16 => kernel::elements::<16>(src, dst, s, d, axes),
            _ => kernel::elements_dyn(src, dst, s, d, axes, width),
        },
        (Unit::Bits { .. }, Kernel::Unpack) => kernel::unpack_nibbles(src, dst, s, d, axes),
        (Unit::Bits { .. }, Kernel::Pack) => kernel::pack_nibbles(src, dst, s, d, axes),
        (Unit::Bits { value, dst_slot }, _) => kernel::bits(src, dst, s, d, axes, value, dst_slot),
    }
}

/// Ranks up to this use a stack index on the general path.
const STACK_RANK: usize = 32;

/// Element by element over the logical index space.
fn general(unit: Unit, a: &Resolved, b: &Resolved, src: &[u8], dst: &mut [u8]) {
    let rank = a.bounds.len();
    if a.bounds.contains(&0) {
        return;
    }
    let mut stack = [0i64; STACK_RANK];
    let mut heap = Vec::new();
    let index: &mut [i64] = if let Some(s) = stack.get_mut(..rank) {
        s
    } else {
        heap.resize(rank, 0);
        &mut heap
    };
    loop {
        let (s, d) = (a.bit_offset(index), b.bit_offset(index));
        match unit {
            Unit::Bytes { width } => kernel::copy_run(src, dst, s / 8, d / 8, width),
            Unit::Bits { value, dst_slot } => {
                kernel::write_bits(dst, d, dst_slot, kernel::read_bits(src, s, value) & kernel::low_mask(value));
            }
        }
        // The odometer, last dimension fastest.
        let mut carried = true;
        for (i, &bound) in index.iter_mut().zip(a.bounds.iter()).rev() {
            *i = i.wrapping_add(1);
            if crate::memory::extent::to_u64(*i) < bound {
                carried = false;
                break;
            }
            *i = 0;
        }
        if carried {
            return;
        }
    }
}

/// Feature `rayon`: a box's outermost axis cut into pieces whose destination bytes are disjoint
/// slices of the buffer (`par_chunks_mut`), run on rayon's pool. Safe Rust proves the pieces
/// independent: each owns its slice.
#[cfg(feature = "rayon")]
mod parallel {
    use rayon::prelude::*;

    use super::{Block, Stores, Unit, run_kernel};
    use crate::relayout::plan::Axis;

    /// Boxes moving fewer bytes than this run on the calling thread.
    const MIN_PARALLEL_BYTES: u64 = 1 << 20;
    /// The most axes a piece keeps on the stack.
    const MAX_AXES: usize = 16;
    /// Pieces are whole multiples of this many outer indices (a multiple of every micro-tile).
    const ALIGN: u64 = 64;

    /// Runs the box in parallel if it splits; returns whether it did.
    // Offsets and extents are those of a planned box: every element's bytes are inside the
    // buffer, so the products and sums below stay within the buffer's length; `rest.len()` is
    // below MAX_AXES (checked), so the piece's axes fit the stack array.
    #[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
    pub(super) fn run_block(unit: Unit, stores: Stores, block: &Block, src: &[u8], dst: &mut [u8]) -> bool {
        let Unit::Bytes { width } = unit else { return false };
        let Some((outer, rest)) = block.axes.split_first() else { return false };
        let threads = u64::try_from(rayon::current_num_threads()).unwrap_or(1);
        let (Ok(row), Ok(start)) = (u64::try_from(outer.dst), usize::try_from(block.dst)) else { return false };
        if threads < 2
            || rest.len() >= MAX_AXES
            || row == 0
            || outer.extent < 2
            || row * outer.extent < MIN_PARALLEL_BYTES
        {
            return false;
        }
        // Every element of one outer index must land in its own `row` bytes.
        let (mut low, mut high) = (0i64, i64::try_from(width).unwrap_or(i64::MAX));
        for axis in rest {
            let reach = axis.dst * crate::memory::extent::to_i64(axis.extent - 1);
            if reach < 0 { low += reach } else { high += reach }
        }
        if low < 0 || high > outer.dst {
            return false;
        }
        let per = outer.extent.div_ceil(threads * 4).div_ceil(ALIGN) * ALIGN;
        let Ok(chunk) = usize::try_from(per * row) else { return false };
        let end = dst.len().min(start.saturating_add(usize::try_from(outer.extent * row).unwrap_or(usize::MAX)));
        let Some(region) = dst.get_mut(start..end) else { return false };
        region.par_chunks_mut(chunk).enumerate().for_each(|(k, piece)| {
            let first = u64::try_from(k).unwrap_or(0) * per;
            let mut axes = [Axis { extent: 1, src: 0, dst: 0 }; MAX_AXES];
            axes[0] = Axis { extent: per.min(outer.extent - first), ..*outer };
            axes[1..=rest.len()].copy_from_slice(rest);
            let s = block.src + crate::memory::extent::to_i64(first) * outer.src;
            run_kernel(unit, stores, block.kernel, (s, 0), &axes[..=rest.len()], src, piece);
        });
        true
    }
}
