//! Execution: check the buffers, prefill the destination's padding, run the boxes. No
//! allocation (except a rank-long index on the general path for ranks above 32).

use super::endpoint::{Prefill, Resolved};
use super::kernel;
use super::lines::Lines;
use super::pack;
use super::plan::{Axis, Kernel, Span, Stores, Strategy, Unit};
use crate::error::{Error, RelayoutProblem, RelayoutSide, Result};
use crate::memory::extent::{len_u64, to_i64, to_u64};

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
    prefill_part(dst, buf, 0);
}

/// [`prefill`] of a part: `buf` holds the destination's bytes `lo..lo + buf.len()`.
pub(crate) fn prefill_part(dst: &Resolved, buf: &mut [u8], lo: u64) {
    match dst.prefill {
        Prefill::None => {}
        Prefill::Zero => buf.fill(0),
        Prefill::Pattern { pattern, raw_slots } => {
            buf.fill(0);
            if dst.slot_bits % 8 == 0 && dst.slot_bits == dst.value_bits {
                // Whole-byte slots: the pattern's bytes, little-endian, repeated from slot 0,
                // so the part starts `lo mod width` bytes into one.
                let width = dst.slot_bits / 8;
                let bytes = pattern.to_le_bytes();
                let (Some(one), Some(phase)) =
                    (usize::try_from(width).ok().and_then(|w| bytes.get(..w)), lo.checked_rem(width))
                else {
                    return;
                };
                let mut line = [0u8; 32];
                for (k, b) in line.iter_mut().enumerate().take(one.len()) {
                    let at = usize::try_from(phase).unwrap_or(0).wrapping_add(k).checked_rem(one.len()).unwrap_or(0);
                    *b = one.get(at).copied().unwrap_or(0);
                }
                let end = raw_slots.saturating_mul(width).saturating_sub(lo);
                let end = usize::try_from(end).unwrap_or(usize::MAX).min(buf.len());
                if let (Some(region), Some(line)) = (buf.get_mut(..end), line.get(..one.len())) {
                    for chunk in region.chunks_mut(line.len().max(1)) {
                        if let Some(part) = line.get(..chunk.len()) {
                            chunk.copy_from_slice(part);
                        }
                    }
                }
            } else {
                let slot = dst.slot_bits;
                let (start, end) = (lo.saturating_mul(8), lo.saturating_add(len_u64(buf.len())).saturating_mul(8));
                let first = start.checked_div(slot).unwrap_or(0);
                let last = end.div_ceil(slot.max(1)).min(raw_slots);
                for k in first..last {
                    let offset = to_i64(k.wrapping_mul(slot)).wrapping_sub(to_i64(start));
                    kernel::write_bits_clipped(buf, offset, slot, pattern);
                }
            }
        }
    }
}

/// Moves every element.
pub(crate) fn execute(strategy: &Strategy, sides: (&Resolved, &Resolved), span: &Span, src: &[u8], dst: &mut [u8]) {
    match strategy {
        Strategy::Identity { stores } => {
            let len = dst.len();
            kernel::rows(src, dst, 0, 0, &[], len, *stores);
        }
        Strategy::Boxes { unit, blocks, stores } => {
            for block in blocks {
                let how = How { unit: *unit, stores: *stores, kernel: block.kernel };
                run_box(how, (block.src, block.dst), &block.axes, src, dst);
            }
        }
        Strategy::General { unit } => general(*unit, sides, span, src, dst, 0),
    }
}

/// How a box's elements move: the plan's unit and stores, and the box's kernel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct How {
    pub unit: Unit,
    pub stores: Stores,
    pub kernel: Kernel,
}

/// One box (`offsets`: its source and destination offsets), split over rayon's pool when it is
/// large (feature `rayon`).
pub(crate) fn run_box(how: How, offsets: (i64, i64), axes: &[Axis], src: &[u8], dst: &mut [u8]) {
    #[cfg(feature = "rayon")]
    if parallel::run_box(how, offsets, axes, src, dst) {
        return;
    }
    run_kernel(how, offsets, axes, src, dst);
}

/// A box's kernel on the calling thread.
fn run_kernel(How { unit, stores, kernel }: How, (s, d): (i64, i64), axes: &[Axis], src: &[u8], dst: &mut [u8]) {
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
        (Unit::Bytes { .. }, Kernel::Wide { src_minor, order, bytes }) => {
            // The innermost axis is one element of `bytes`.
            let outer = axes.split_last().map_or(axes, |(_, outer)| outer);
            let tile = (src_minor, order);
            match bytes {
                2 => kernel::transpose::<2>(src, dst, (s, d), outer, tile, stores),
                4 => kernel::transpose::<4>(src, dst, (s, d), outer, tile, stores),
                8 => kernel::transpose::<8>(src, dst, (s, d), outer, tile, stores),
                _ => kernel::transpose::<16>(src, dst, (s, d), outer, tile, stores),
            }
        }
        (Unit::Bytes { width }, _) => match width {
            1 => kernel::elements::<1>(src, dst, s, d, axes),
            2 => kernel::elements::<2>(src, dst, s, d, axes),
            4 => kernel::elements::<4>(src, dst, s, d, axes),
            8 => kernel::elements::<8>(src, dst, s, d, axes),
            16 => kernel::elements::<16>(src, dst, s, d, axes),
            _ => kernel::elements_dyn(src, dst, s, d, axes, width),
        },
        (
            Unit::Bits { .. },
            Kernel::Unpack { bits }
            | Kernel::Pack { bits }
            | Kernel::PackRows { bits, .. }
            | Kernel::UnpackRows { bits, .. },
        ) => {
            // Whole destination lines stream at any alignment (`lines.rs`).
            let mut lines = Lines::new(stores);
            let out = (&mut *dst, &mut lines);
            match (kernel, bits) {
                (Kernel::PackRows { rows, .. }, 1) => pack::pack_rows::<1>(src, out, s, d, axes, rows),
                (Kernel::PackRows { rows, .. }, 2) => pack::pack_rows::<2>(src, out, s, d, axes, rows),
                (Kernel::PackRows { rows, .. }, _) => pack::pack_rows::<4>(src, out, s, d, axes, rows),
                (Kernel::UnpackRows { rows, .. }, 1) => pack::unpack_rows::<1>(src, out, s, d, axes, rows),
                (Kernel::UnpackRows { rows, .. }, 2) => pack::unpack_rows::<2>(src, out, s, d, axes, rows),
                (Kernel::UnpackRows { rows, .. }, _) => pack::unpack_rows::<4>(src, out, s, d, axes, rows),
                (Kernel::Unpack { .. }, 1) => pack::unpack::<1>(src, out, s, d, axes),
                (Kernel::Unpack { .. }, 2) => pack::unpack::<2>(src, out, s, d, axes),
                (Kernel::Unpack { .. }, _) => pack::unpack::<4>(src, out, s, d, axes),
                (_, 1) => pack::pack::<1>(src, out, s, d, axes),
                (_, 2) => pack::pack::<2>(src, out, s, d, axes),
                _ => pack::pack::<4>(src, out, s, d, axes),
            }
            lines.finish(dst);
            if stores == Stores::Streaming {
                super::stream::fence();
            }
        }
        (Unit::Bits { value, dst_slot }, _) => kernel::bits(src, dst, s, d, axes, value, dst_slot),
    }
}

/// `len` items equal to `fill` (as `stack` holds them), on the stack when it is long enough,
/// else in `heap`: scratch space that allocates only for ranks beyond the stack's.
pub(crate) fn stack_or_heap<'a, T: Copy>(stack: &'a mut [T], heap: &'a mut Vec<T>, len: usize, fill: T) -> &'a mut [T] {
    if let Some(s) = stack.get_mut(..len) {
        s
    } else {
        heap.resize(len, fill);
        heap
    }
}

/// Ranks up to this use stack indices.
const STACK_RANK: usize = 32;

/// Element by element over the span, through both sides' offset functions; `dst` holds the
/// destination's bytes `lo..lo + dst.len()` and gets the parts of the elements inside them
/// (`lo = 0` and the whole buffer for [`run`](super::RelayoutPlan::run)). A whole-array plan
/// is the span from zero over the bounds, so this is the one general path of every plan.
pub(crate) fn general(unit: Unit, (a, b): (&Resolved, &Resolved), span: &Span, src: &[u8], dst: &mut [u8], lo: u64) {
    let rank = span.extent.len();
    if span.extent.contains(&0) {
        return;
    }
    // The window-relative index and the two sides' logical indices, stepped together.
    let (mut stack, mut heap) = ([0i64; 3 * STACK_RANK], Vec::new());
    let all = stack_or_heap(&mut stack, &mut heap, rank.saturating_mul(3), 0);
    let (index, rest) = all.split_at_mut(rank);
    let (at_src, at_dst) = rest.split_at_mut(rank);
    for ((s, d), (&os, &od)) in at_src.iter_mut().zip(at_dst.iter_mut()).zip(span.src.iter().zip(span.dst.iter())) {
        *s = to_i64(os);
        *d = to_i64(od);
    }
    let start = to_i64(lo.saturating_mul(8));
    loop {
        let (s, d) = (a.bit_offset(at_src), b.bit_offset(at_dst).wrapping_sub(start));
        element_part(unit, src, dst, s, d);
        // The odometer, last dimension fastest; the sides' indices follow the window's.
        let mut carried = true;
        let steps = index.iter_mut().zip(at_src.iter_mut()).zip(at_dst.iter_mut()).zip(span.extent.iter());
        for (((i, si), di), &bound) in steps.rev() {
            *i = i.wrapping_add(1);
            *si = si.wrapping_add(1);
            *di = di.wrapping_add(1);
            if to_u64(*i) < bound {
                carried = false;
                break;
            }
            *si = si.wrapping_sub(*i);
            *di = di.wrapping_sub(*i);
            *i = 0;
        }
        if carried {
            return;
        }
    }
}

/// One element from bit offset `s` of `src` to bit offset `d` of `dst` (negative, or past its
/// end, for an element outside it): the bytes or bits of it that fall inside `dst`.
pub(crate) fn element_part(unit: Unit, src: &[u8], dst: &mut [u8], s: i64, d: i64) {
    match unit {
        Unit::Bytes { width } => {
            // Whole-byte plans have byte-aligned offsets on both sides.
            let (s, d) = (s.div_euclid(8), d.div_euclid(8));
            let end = d.saturating_add(to_i64(len_u64(width)));
            let (from, to) = (d.max(0), end.min(to_i64(len_u64(dst.len()))));
            if from >= to {
                return;
            }
            let skip = from.wrapping_sub(d);
            let len = usize::try_from(to.wrapping_sub(from)).unwrap_or(0);
            kernel::copy_run(src, dst, s.wrapping_add(skip), from, len);
        }
        Unit::Bits { value, dst_slot } => {
            let bits = kernel::read_bits(src, s, value) & kernel::low_mask(value);
            kernel::write_bits_clipped(dst, d, dst_slot, bits);
        }
    }
}

/// Feature `rayon`: a box's outermost axis cut into pieces whose destination bytes are disjoint
/// slices of the buffer (`par_chunks_mut`), run on rayon's pool. Safe Rust proves the pieces
/// independent: each owns its slice.
#[cfg(feature = "rayon")]
mod parallel {
    use rayon::prelude::*;

    use super::{Axis, How, Unit, run_kernel};

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
    pub(super) fn run_box(how: How, (s, d): (i64, i64), axes: &[Axis], src: &[u8], dst: &mut [u8]) -> bool {
        let Unit::Bytes { width } = how.unit else { return false };
        if !crate::relayout::threads::parallel() {
            return false;
        }
        let Some((outer, rest)) = axes.split_first() else { return false };
        let threads = u64::try_from(rayon::current_num_threads()).unwrap_or(1);
        let (Ok(row), Ok(start)) = (u64::try_from(outer.dst), usize::try_from(d)) else { return false };
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
        // One piece per thread: when the outer axis is the source-minor one (a transpose),
        // each piece reads its share of every source row, and smaller shares read the source
        // in smaller strided pieces. r3 at 512 MiB on two threads (benches/relayout.rs): four
        // pieces per thread 1.13× one thread, two 1.0×, one 1.48×; t2d 1.97×, 1.92×, 2.16×.
        let per = outer.extent.div_ceil(threads).div_ceil(ALIGN) * ALIGN;
        let Ok(chunk) = usize::try_from(per * row) else { return false };
        let end = dst.len().min(start.saturating_add(usize::try_from(outer.extent * row).unwrap_or(usize::MAX)));
        let Some(region) = dst.get_mut(start..end) else { return false };
        region.par_chunks_mut(chunk).enumerate().for_each(|(k, piece)| {
            let first = u64::try_from(k).unwrap_or(0) * per;
            let mut axes = [Axis { extent: 1, src: 0, dst: 0 }; MAX_AXES];
            axes[0] = Axis { extent: per.min(outer.extent - first), ..*outer };
            axes[1..=rest.len()].copy_from_slice(rest);
            let s = s + crate::memory::extent::to_i64(first) * outer.src;
            run_kernel(how, (s, 0), &axes[..=rest.len()], src, piece);
        });
        true
    }
}
