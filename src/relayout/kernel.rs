//! The kernels: what moves the elements of one box. All safe code: slices are reached with
//! `get`, so an offset the plan got wrong would skip an element (and the property tests would
//! see it), never read or write outside a buffer.
//!
//! Offsets are `i64` (strides may be negative); the plan guarantees that every element's offset
//! is inside its buffer.

use super::plan::Axis;

/// Side of the square block the 2-D transpose works on, in elements: 64 × 64 elements of up to
/// 16 bytes stay within a core's L1 and L2 on both sides.
const BLOCK: u64 = 64;

/// An offset as a slice position (`None` for a negative one, which the plan never produces).
#[inline]
fn at(offset: i64) -> Option<usize> {
    usize::try_from(offset).ok()
}

/// `base + k · stride`, wrapping (exact for every element of a planned box).
#[inline]
fn step(base: i64, k: u64, stride: i64) -> i64 {
    base.wrapping_add(crate::memory::extent::to_i64(k).wrapping_mul(stride))
}

/// Calls `f(src, dst)` at every position of `axes` (outermost first), starting at `(src, dst)`.
/// Recursion depth is the number of axes; no allocation.
pub(crate) fn odometer(axes: &[Axis], src: i64, dst: i64, f: &mut impl FnMut(i64, i64)) {
    match axes.split_first() {
        None => f(src, dst),
        Some((outer, rest)) => {
            for k in 0..outer.extent {
                odometer(rest, step(src, k, outer.src), step(dst, k, outer.dst), f);
            }
        }
    }
}

/// Copies `len` bytes.
#[inline]
pub(crate) fn copy_run(src: &[u8], dst: &mut [u8], s: i64, d: i64, len: usize) {
    let (Some(s), Some(d)) = (at(s), at(d)) else { return };
    if let (Some(from), Some(to)) = (src.get(s..s.wrapping_add(len)), dst.get_mut(d..d.wrapping_add(len))) {
        to.copy_from_slice(from);
    }
}

/// Copies one element of `N` bytes.
#[inline]
fn copy_one<const N: usize>(src: &[u8], dst: &mut [u8], s: i64, d: i64) {
    let (Some(s), Some(d)) = (at(s), at(d)) else { return };
    if let (Some(from), Some(to)) = (src.get(s..s.wrapping_add(N)), dst.get_mut(d..d.wrapping_add(N))) {
        to.copy_from_slice(from);
    }
}

/// Element by element along the innermost axis.
pub(crate) fn elements<const N: usize>(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis]) {
    let Some((inner, outer)) = axes.split_last() else {
        copy_one::<N>(src, dst, s, d);
        return;
    };
    odometer(outer, s, d, &mut |s, d| {
        for k in 0..inner.extent {
            copy_one::<N>(src, dst, step(s, k, inner.src), step(d, k, inner.dst));
        }
    });
}

/// Element by element for a width known only at run time.
pub(crate) fn elements_dyn(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis], width: usize) {
    let Some((inner, outer)) = axes.split_last() else {
        copy_run(src, dst, s, d, width);
        return;
    };
    odometer(outer, s, d, &mut |s, d| {
        for k in 0..inner.extent {
            copy_run(src, dst, step(s, k, inner.src), step(d, k, inner.dst), width);
        }
    });
}

/// Whole rows: the innermost axis is contiguous on both sides.
pub(crate) fn rows(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis], width: usize) {
    let Some((inner, outer)) = axes.split_last() else {
        copy_run(src, dst, s, d, width);
        return;
    };
    let len = usize::try_from(inner.extent).unwrap_or(0).wrapping_mul(width);
    odometer(outer, s, d, &mut |s, d| copy_run(src, dst, s, d, len));
}

/// The blocked 2-D transpose: `axes[src_minor]` is contiguous in the source, the last axis in
/// the destination; the other axes run an odometer around it.
pub(crate) fn transpose<const N: usize>(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis], src_minor: usize) {
    let Some((&inner, outer)) = axes.split_last() else { return };
    let Some(&minor) = outer.get(src_minor) else { return };
    // The outer axes without the source-minor one: at most as many as the box has (no
    // allocation: the odometer skips it by running it with extent 1).
    let mut run = |s: i64, d: i64| {
        let mut i0 = 0;
        while i0 < minor.extent {
            let i1 = minor.extent.min(i0.saturating_add(BLOCK));
            let mut j0 = 0;
            while j0 < inner.extent {
                let j1 = inner.extent.min(j0.saturating_add(BLOCK));
                block::<N>(src, dst, s, d, (i0, i1, minor), (j0, j1, inner));
                j0 = j1;
            }
            i0 = i1;
        }
    };
    odometer_skipping(outer, src_minor, s, d, &mut run);
}

/// One block: rows `i0..i1` of the source-minor axis, columns `j0..j1` of the destination-minor
/// one. Each destination row is written forward, reading the source down a column.
#[inline]
fn block<const N: usize>(src: &[u8], dst: &mut [u8], s: i64, d: i64, rows: (u64, u64, Axis), cols: (u64, u64, Axis)) {
    let (i0, i1, minor) = rows;
    let (j0, j1, inner) = cols;
    let count = usize::try_from(j1.wrapping_sub(j0)).unwrap_or(0);
    for i in i0..i1 {
        let src_row = step(step(s, i, minor.src), j0, inner.src);
        let dst_row = step(step(d, i, minor.dst), j0, inner.dst);
        let Some(start) = at(dst_row) else { continue };
        let Some(out) = dst.get_mut(start..start.wrapping_add(count.wrapping_mul(N))) else { continue };
        let mut from = src_row;
        for chunk in out.chunks_exact_mut(N) {
            if let Some(value) = at(from).and_then(|f| src.get(f..f.wrapping_add(N))) {
                chunk.copy_from_slice(value);
            }
            from = from.wrapping_add(inner.src);
        }
    }
}

/// [`odometer`] over `axes` with axis `skip` held at 0.
fn odometer_skipping(axes: &[Axis], skip: usize, src: i64, dst: i64, f: &mut impl FnMut(i64, i64)) {
    match axes.split_first() {
        None => f(src, dst),
        Some((_, rest)) if skip == 0 => odometer_skipping(rest, usize::MAX, src, dst, f),
        Some((outer, rest)) => {
            for k in 0..outer.extent {
                odometer_skipping(rest, skip.wrapping_sub(1), step(src, k, outer.src), step(dst, k, outer.dst), f);
            }
        }
    }
}

/// The low `bits` bits set.
#[inline]
pub(crate) fn low_mask(bits: u32) -> u128 {
    u128::MAX.checked_shr(128u32.saturating_sub(bits)).filter(|_| bits > 0).unwrap_or(0)
}

/// Reads `bits` (≤ 128) bits at bit offset `offset`, low bits first.
#[inline]
// `shift < 8` and `take ≤ 8 − shift`, `take ≤ bits − got` (so `got ≤ bits` throughout).
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn read_bits(buf: &[u8], offset: i64, bits: u32) -> u128 {
    let Ok(offset) = u64::try_from(offset) else { return 0 };
    let mut value = 0u128;
    let mut got = 0u32;
    let mut pos = offset;
    while got < bits {
        let Some(&byte) = usize::try_from(pos / 8).ok().and_then(|b| buf.get(b)) else { break };
        // `pos % 8` is below 8; `take` is at least 1 and at most 8 − shift.
        let shift = u32::try_from(pos % 8).unwrap_or(0);
        let take = (8 - shift).min(bits - got);
        let part = (u128::from(byte) >> shift) & ((1u128 << take) - 1);
        value |= part << got;
        got += take;
        pos = pos.wrapping_add(u64::from(take));
    }
    value
}

/// Writes `value` into the `slot` bits at bit offset `offset` (bits beyond 128 are zero),
/// keeping the other bits of the bytes it touches.
#[inline]
// `shift < 8`, `1 ≤ take ≤ 8 − shift` and `take ≤ slot − done`: the mask fits a byte.
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn write_bits(buf: &mut [u8], offset: i64, slot: u64, value: u128) {
    let Ok(offset) = u64::try_from(offset) else { return };
    let mut done = 0u64;
    let mut pos = offset;
    while done < slot {
        let Some(byte) = usize::try_from(pos / 8).ok().and_then(|b| buf.get_mut(b)) else { break };
        let shift = pos % 8;
        let take = (8 - shift).min(slot - done);
        let mask = u8::try_from(((1u16 << take) - 1) << shift).unwrap_or(u8::MAX);
        let part = if done < 128 { u8::try_from((value >> done) & ((1u128 << take) - 1)).unwrap_or(0) } else { 0 };
        *byte = (*byte & !mask) | (part << shift);
        done += take;
        pos = pos.wrapping_add(take);
    }
}

/// Element by element in bits.
pub(crate) fn bits(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis], value: u32, slot: u64) {
    let mask = low_mask(value);
    let Some((inner, outer)) = axes.split_last() else {
        write_bits(dst, d, slot, read_bits(src, s, value) & mask);
        return;
    };
    odometer(outer, s, d, &mut |s, d| {
        for k in 0..inner.extent {
            write_bits(dst, step(d, k, inner.dst), slot, read_bits(src, step(s, k, inner.src), value) & mask);
        }
    });
}

/// 4-bit elements packed two per byte (low nibble first) → one per byte, high nibble zero. The
/// innermost axis has source stride 4 bits and destination stride 8 bits.
pub(crate) fn unpack_nibbles(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis]) {
    let Some((inner, outer)) = axes.split_last() else { return };
    odometer(outer, s, d, &mut |s, d| {
        let (Ok(s), Ok(d)) = (u64::try_from(s), u64::try_from(d)) else { return };
        let mut n = inner.extent;
        let (mut s, mut d) = (s, d / 8);
        if s % 8 == 4 && n > 0 {
            put(dst, d, get(src, s / 8) >> 4);
            (s, d, n) = (s.wrapping_add(4), d.wrapping_add(1), n.wrapping_sub(1));
        }
        let (Some(from), Some(to)) = (to_usize(s / 8), to_usize(d)) else { return };
        let pairs = to_usize(n / 2).unwrap_or(0);
        if let (Some(packed), Some(out)) =
            (src.get(from..from.wrapping_add(pairs)), dst.get_mut(to..to.wrapping_add(pairs.wrapping_mul(2))))
        {
            for (&byte, two) in packed.iter().zip(out.chunks_exact_mut(2)) {
                two.copy_from_slice(&[byte & 0xF, byte >> 4]);
            }
        }
        if n % 2 == 1 {
            let last = u64::try_from(pairs).unwrap_or(0);
            put(dst, d.wrapping_add(last.wrapping_mul(2)), get(src, (s / 8).wrapping_add(last)) & 0xF);
        }
    });
}

/// One byte per element (its low nibble) → 4-bit elements packed two per byte. The innermost
/// axis has source stride 8 bits and destination stride 4 bits.
pub(crate) fn pack_nibbles(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis]) {
    let Some((inner, outer)) = axes.split_last() else { return };
    odometer(outer, s, d, &mut |s, d| {
        let (Ok(s), Ok(d)) = (u64::try_from(s), u64::try_from(d)) else { return };
        let mut n = inner.extent;
        let (mut s, mut d) = (s / 8, d);
        if d % 8 == 4 && n > 0 {
            write_bits(dst, crate::memory::extent::to_i64(d), 4, u128::from(get(src, s) & 0xF));
            (s, d, n) = (s.wrapping_add(1), d.wrapping_add(4), n.wrapping_sub(1));
        }
        let (Some(from), Some(to)) = (to_usize(s), to_usize(d / 8)) else { return };
        let pairs = to_usize(n / 2).unwrap_or(0);
        if let (Some(bytes), Some(out)) =
            (src.get(from..from.wrapping_add(pairs.wrapping_mul(2))), dst.get_mut(to..to.wrapping_add(pairs)))
        {
            for (two, o) in bytes.chunks_exact(2).zip(out.iter_mut()) {
                if let [lo, hi] = *two {
                    *o = (lo & 0xF) | (hi << 4);
                }
            }
        }
        if n % 2 == 1 {
            let last = u64::try_from(pairs).unwrap_or(0);
            let at = d.wrapping_add(last.wrapping_mul(8));
            write_bits(
                dst,
                crate::memory::extent::to_i64(at),
                4,
                u128::from(get(src, s.wrapping_add(last.wrapping_mul(2))) & 0xF),
            );
        }
    });
}

fn to_usize(v: u64) -> Option<usize> {
    usize::try_from(v).ok()
}

fn get(buf: &[u8], at: u64) -> u8 {
    to_usize(at).and_then(|a| buf.get(a)).copied().unwrap_or(0)
}

fn put(buf: &mut [u8], at: u64, value: u8) {
    if let Some(b) = to_usize(at).and_then(|a| buf.get_mut(a)) {
        *b = value;
    }
}
