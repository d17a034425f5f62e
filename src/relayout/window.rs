//! A part of the destination computed alone ([`RelayoutPlan::run_range`](super::RelayoutPlan::run_range)):
//! the bytes `lo..hi` of what `run` writes, into a buffer of `hi − lo` bytes, so that a
//! destination larger than memory is produced block by block, in order.
//!
//! Each box is cut to the part. If the box lies inside, it runs whole with its kernel; if it
//! lies outside, it is skipped. Otherwise its axis with the largest destination stride is split:
//! the indices whose sub-boxes lie inside run as one box (that axis restricted, same kernel), and
//! each index whose sub-box straddles an end (at most two when the sub-boxes do not interleave,
//! as in every layout) is cut again without that axis. An element that straddles an end writes
//! only its bytes (bits) inside. Every element's destination bits are written by exactly the
//! parts that hold them, so parts that tile the destination give `run`'s bytes.
//!
//! ```text
//!   box (axes by destination stride)      part lo..hi
//!   ┌───────────────┐ k = 0              ─ ─ ─ ─ ─ ─ lo
//!   │ straddles     │ k = 1  → cut again without this axis
//!   │ inside        │ k = 2 ┐
//!   │ inside        │ k = 3 ┘ → one box, this axis restricted to 2..4
//!   │ straddles     │ k = 4  → cut again
//!   └───────────────┘ k = 5              ─ ─ ─ ─ ─ ─ hi
//! ```

use super::endpoint::Resolved;
use super::exec;
use super::plan::{Axis, Kernel, Order, Span, Stores, Strategy, Unit};
use crate::memory::extent::{len_u64, to_i64};
use crate::physical::Slot;

/// Boxes with up to this many axes are cut on the stack.
const STACK_AXES: usize = 32;

/// What stays fixed while one part is cut: offsets in the plan's unit (bytes or bits).
struct Cut<'a> {
    unit: Unit,
    stores: Stores,
    src: &'a [u8],
    /// The part, `[lo, hi)`.
    lo: i128,
    hi: i128,
    /// The bytes or bits one destination element occupies.
    size: i128,
}

/// Moves the elements of the part `lo..lo + dst.len()` of the destination into `dst` (already
/// prefilled).
pub(crate) fn execute(
    strategy: &Strategy,
    (src_side, dst_side): (&Resolved, &Resolved),
    (span, windowed): (&Span, bool),
    src: &[u8],
    dst: &mut [u8],
    lo: u64,
) {
    let len = len_u64(dst.len());
    match strategy {
        Strategy::Identity { stores } => {
            super::kernel::rows(src, dst, to_i64(lo), 0, &[], dst.len(), *stores);
        }
        Strategy::Boxes { unit, blocks, stores } => {
            // Bit plans count in bits; the part's offsets fit in i64 (the buffer's bits do).
            let (scale, size) = match *unit {
                Unit::Bytes { width } => (1, i128::from(len_u64(width))),
                Unit::Bits { dst_slot, .. } => (8, i128::from(dst_slot)),
            };
            // Below 2^67: no overflow in i128.
            #[allow(clippy::arithmetic_side_effects)]
            let cut = Cut {
                unit: *unit,
                stores: *stores,
                src,
                lo: i128::from(lo) * scale,
                hi: (i128::from(lo) + i128::from(len)) * scale,
                size,
            };
            for block in blocks {
                cut.clip(block.kernel, block.src, block.dst, &block.axes, dst);
            }
        }
        // The destination's slots of the part map back to source indices only when both sides
        // are the whole arrays; a window walks its span, writing what falls inside the part.
        Strategy::General { unit } => match &dst_side.map {
            Some(map) if !windowed => by_slots(*unit, src_side, dst_side, map, src, dst, lo),
            _ => exec::general(*unit, (src_side, dst_side), span, src, dst, lo),
        },
    }
}

/// The span `[low, high)` of a box's destination elements relative to its offset.
fn reach(axes: &[Axis], size: i128) -> (i128, i128) {
    let (mut low, mut high) = (0i128, size);
    for axis in axes {
        // |stride| < 2^63 and extent − 1 < 2^64: the product fits in i128; sums of a rank's
        // worth of them too.
        #[allow(clippy::arithmetic_side_effects)]
        let span = i128::from(axis.dst) * i128::from(axis.extent.saturating_sub(1));
        if span < 0 {
            low = low.saturating_add(span);
        } else {
            high = high.saturating_add(span);
        }
    }
    (low, high)
}

/// `⌊a / b⌋` and `⌈a / b⌉` for `b > 0`.
fn floor_div(a: i128, b: i128) -> i128 {
    a.checked_div_euclid(b).unwrap_or(0)
}

fn ceil_div(a: i128, b: i128) -> i128 {
    floor_div(a.saturating_add(b).saturating_sub(1), b)
}

/// The kernel of a box once axis `p` (of `len`) is fixed at one index.
fn without(kernel: Kernel, p: usize, len: usize) -> Kernel {
    let last = p.wrapping_add(1) == len;
    match kernel {
        Kernel::Rows | Kernel::Unpack { .. } | Kernel::Pack { .. } if last => Kernel::Elements,
        // Either of the rows and columns fixed: element by element.
        Kernel::PackRows { .. } | Kernel::UnpackRows { .. } if p.saturating_add(2) >= len => Kernel::Elements,
        // A wide transpose cut: element by element (only the boxes astride a part's ends).
        Kernel::Wide { .. } => Kernel::Elements,
        Kernel::Transpose { src_minor, .. } if last || p == src_minor => Kernel::Elements,
        // The fused axis fixed: a plain transpose of the source-minor axis, one place in.
        Kernel::Transpose { src_minor, order: Order::Fused } if p.wrapping_add(1) == src_minor => {
            Kernel::Transpose { src_minor: p, order: Order::Bands }
        }
        // The axis fused into the columns fixed: a plain transpose.
        Kernel::Transpose { src_minor, order: Order::FusedColumns } if p == src_minor.wrapping_add(1) => {
            Kernel::Transpose { src_minor, order: Order::Bands }
        }
        Kernel::Transpose { src_minor, order } if p < src_minor => {
            Kernel::Transpose { src_minor: src_minor.wrapping_sub(1), order }
        }
        other => other,
    }
}

impl Cut<'_> {
    /// The part of one box (offsets `s`, `d` in the plan's unit, `d` absolute).
    // Offsets, strides and extents come from i64 and u64 values (below 2^64 in magnitude), and
    // spans are sums of a rank's worth of their products: the i128 sums and differences below
    // stay far from overflow; divisions are by a non-zero stride.
    #[allow(clippy::arithmetic_side_effects)]
    fn clip(&self, kernel: Kernel, s: i64, d: i64, axes: &[Axis], dst: &mut [u8]) {
        let (low, high) = reach(axes, self.size);
        let d128 = i128::from(d);
        let (first, end) = (d128.saturating_add(low), d128.saturating_add(high));
        if end <= self.lo || first >= self.hi {
            return;
        }
        let relative = i64::try_from(d128.saturating_sub(self.lo)).unwrap_or(i64::MAX);
        if first >= self.lo && end <= self.hi {
            exec::run_box(self.how(kernel), (s, relative), axes, self.src, dst);
            return;
        }
        // The axis with the largest destination stride: its sub-boxes are ordered in the
        // destination.
        let widest = axes.iter().enumerate().filter(|(_, a)| a.extent > 1).max_by_key(|(_, a)| a.dst.unsigned_abs());
        let Some((at, &split)) = widest else {
            // One element astride an end (every axis has extent 1).
            exec::element_part(self.unit, self.src, dst, self.bits(s), self.bits(relative));
            return;
        };
        let one = Axis { extent: 1, src: 0, dst: 0 };
        let (mut stack, mut heap) = ([one; STACK_AXES], Vec::new());
        let rest = exec::stack_or_heap(&mut stack, &mut heap, axes.len().saturating_sub(1), one);
        for (slot, a) in rest.iter_mut().zip(axes.iter().enumerate().filter(|&(k, _)| k != at).map(|(_, a)| a)) {
            *slot = *a;
        }
        let (rl, rh) = reach(rest, self.size);
        let (lo, hi, stride) = (self.lo - d128, self.hi - d128, i128::from(split.dst));
        let extent = i128::from(split.extent);
        // Sub-box k spans [k·stride + rl, k·stride + rh) relative to `d`: the indices that meet the part
        // and those inside it.
        let (meet, inside) = match stride {
            t if t > 0 => {
                ((floor_div(lo - rh, t) + 1, ceil_div(hi - rl, t) - 1), (ceil_div(lo - rl, t), floor_div(hi - rh, t)))
            }
            t if t < 0 => (
                (floor_div(rl - hi, -t) + 1, ceil_div(rh - lo, -t) - 1),
                (ceil_div(rh - hi, -t), floor_div(rl - lo, -t)),
            ),
            _ => ((0, extent - 1), (1, 0)),
        };
        let clamp = |(first, last): (i128, i128)| (first.max(0), last.min(extent - 1));
        let (meet, inside) = (clamp(meet), clamp(inside));
        let step = |k: i128, by: i64| -> i64 { i64::try_from(k.saturating_mul(i128::from(by))).unwrap_or(i64::MAX) };
        if inside.0 <= inside.1 {
            let (mut restricted, mut heap) = ([one; STACK_AXES], Vec::new());
            let cut = exec::stack_or_heap(&mut restricted, &mut heap, axes.len(), one);
            cut.copy_from_slice(axes);
            let count = u64::try_from(inside.1 - inside.0 + 1).unwrap_or(0);
            if let Some(a) = cut.get_mut(at) {
                a.extent = count;
            }
            let (s0, d0) =
                (s.wrapping_add(step(inside.0, split.src)), relative.wrapping_add(step(inside.0, split.dst)));
            exec::run_box(self.how(kernel), (s0, d0), cut, self.src, dst);
        }
        let edge = without(kernel, at, axes.len());
        let mut k = meet.0;
        while k <= meet.1 {
            if k == inside.0 && inside.0 <= inside.1 {
                k = inside.1 + 1;
                continue;
            }
            self.clip(edge, s.wrapping_add(step(k, split.src)), d.wrapping_add(step(k, split.dst)), rest, dst);
            k += 1;
        }
    }

    fn how(&self, kernel: Kernel) -> exec::How {
        exec::How { unit: self.unit, stores: self.stores, kernel }
    }

    /// An offset in the plan's unit as bits (what [`exec::element_part`] takes).
    fn bits(&self, offset: i64) -> i64 {
        match self.unit {
            Unit::Bytes { .. } => offset.saturating_mul(8),
            Unit::Bits { .. } => offset,
        }
    }
}

/// The general path for a layout destination: the destination's slots in the part, each
/// through the inverse map to its element (padding slots are already prefilled).
fn by_slots(
    unit: Unit,
    a: &Resolved,
    b: &Resolved,
    map: &crate::physical::PhysicalMap,
    src: &[u8],
    dst: &mut [u8],
    lo: u64,
) {
    let (mut stack, mut heap) = ([0i64; STACK_AXES], Vec::new());
    let index = exec::stack_or_heap(&mut stack, &mut heap, b.bounds.len(), 0);
    let slot = b.slot_bits.max(1);
    let (start, end) = (lo.saturating_mul(8), lo.saturating_add(len_u64(dst.len())).saturating_mul(8));
    let (first, last) = (start.checked_div(slot).unwrap_or(0), end.div_ceil(slot).min(map.storage_slots()));
    for k in first..last {
        if map.index_of_slot_into(Slot(k), index) == Ok(true) {
            let d = to_i64(k.saturating_mul(slot)).saturating_sub(to_i64(start));
            exec::element_part(unit, src, dst, a.bit_offset(index), d);
        }
    }
}
