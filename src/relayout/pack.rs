//! Sub-byte elements packed `8 / BITS` to a byte (`E(4)`, `E(2)`, `E(1)`; low bits first, as
//! XLA's CPU runtime packs them) ↔ one element per byte (its low `BITS` bits, the rest zero):
//! `docs/relayout.md` rule 9's pack and unpack kernels.
//!
//! Whole bytes go 16 packed bytes at a time through SSE2 (through `safe_arch`, the x86-64
//! baseline): packing is a tree of rounds, each joining neighbouring bytes of `S` bits into one
//! of `2S` (`b0 | b1 << S`: one shift, one mask, one `packuswb` per 16 bytes); unpacking is the
//! same tree run backwards (a mask, a shift, one `punpcklbw`/`punpckhbw` pair). Where an
//! element shares its byte with another run's (a run starting or ending inside a byte), it is
//! written alone, in bits. The destination's whole bytes go through [`Lines`]: whole lines
//! streamed at any alignment when the plan streams.

use super::kernel::{odometer, write_bits};
use super::lines::Lines;
use super::plan::Axis;
use super::stream::LINE;
use crate::memory::extent::{len_u64, to_i64};

/// Packed bytes per block of the staging buffer: a few lines, so that [`Lines`] streams them.
const BLOCK: usize = 256;

/// One byte per element → `BITS`-bit elements packed. The innermost axis has source stride 8
/// bits and destination stride `BITS` bits; `s` and `d` are bit offsets.
// `BITS` is 1, 2 or 4 (the plan's `finish_bits`): `8 / BITS` and `8 - BITS` are small and positive; `% 8` and
// `/ 8` of unsigned offsets cannot fail; counts only grow up to the run's length (`done ≤ whole`).
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn pack<const BITS: u32>(src: &[u8], (dst, lines): (&mut [u8], &mut Lines), s: i64, d: i64, axes: &[Axis]) {
    let Some((inner, outer)) = axes.split_last() else { return };
    let per = usize::try_from(8 / BITS).unwrap_or(1);
    let mask = u8::MAX >> (8 - BITS);
    odometer(outer, s, d, &mut |s, d| {
        let (Ok(s), Ok(d), Ok(mut n)) = (usize::try_from(s), u64::try_from(d), usize::try_from(inner.extent)) else {
            return;
        };
        let (mut s, mut d) = (s / 8, d);
        // Elements sharing their first byte with what comes before.
        while d % 8 != 0 && n > 0 {
            let value = src.get(s).copied().unwrap_or(0) & mask;
            write_bits(dst, to_i64(d), u64::from(BITS), u128::from(value));
            (s, d, n) = (s.wrapping_add(1), d.wrapping_add(u64::from(BITS)), n.wrapping_sub(1));
        }
        let Ok(mut to) = usize::try_from(d / 8) else { return };
        let whole = n / per;
        let mut block = [0u8; BLOCK];
        let mut done = 0;
        while done < whole {
            let count = (whole - done).min(BLOCK);
            let (Some(from), Some(out)) = (src.get(s..s.wrapping_add(count.wrapping_mul(per))), block.get_mut(..count))
            else {
                return;
            };
            pack_bytes::<BITS>(from, out);
            lines.put(dst, to, out);
            (s, to, done) = (s.wrapping_add(count.wrapping_mul(per)), to.wrapping_add(count), done.wrapping_add(count));
        }
        // Elements sharing their last byte with what comes after.
        let mut d = u64::try_from(to).unwrap_or(0).wrapping_mul(8);
        for _ in 0..n % per {
            let value = src.get(s).copied().unwrap_or(0) & mask;
            write_bits(dst, to_i64(d), u64::from(BITS), u128::from(value));
            (s, d) = (s.wrapping_add(1), d.wrapping_add(u64::from(BITS)));
        }
    });
}

/// `BITS`-bit elements packed → one per byte, the bits above the value zero. The innermost axis
/// has source stride `BITS` bits and destination stride 8 bits; `s` and `d` are bit offsets.
// `BITS` is 1, 2 or 4 (the plan's `finish_bits`): `8 / BITS` and `8 - BITS` are small and positive; `% 8` and
// `/ 8` of unsigned offsets cannot fail; counts only grow up to the run's length (`done ≤ whole`).
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn unpack<const BITS: u32>(
    src: &[u8],
    (dst, lines): (&mut [u8], &mut Lines),
    s: i64,
    d: i64,
    axes: &[Axis],
) {
    let Some((inner, outer)) = axes.split_last() else { return };
    let per = usize::try_from(8 / BITS).unwrap_or(1);
    let mask = u8::MAX >> (8 - BITS);
    odometer(outer, s, d, &mut |s, d| {
        let (Ok(mut s), Ok(d), Ok(mut n)) = (u64::try_from(s), usize::try_from(d), usize::try_from(inner.extent))
        else {
            return;
        };
        let mut to = d / 8;
        // Elements sharing their first byte with what comes before.
        while s % 8 != 0 && n > 0 {
            let byte = usize::try_from(s / 8).ok().and_then(|b| src.get(b)).copied().unwrap_or(0);
            lines.put(dst, to, &[(byte >> (s % 8)) & mask]);
            (s, to, n) = (s.wrapping_add(u64::from(BITS)), to.wrapping_add(1), n.wrapping_sub(1));
        }
        let Ok(mut from) = usize::try_from(s / 8) else { return };
        let whole = n / per;
        let mut block = [0u8; BLOCK];
        let step = BLOCK / per;
        let mut done = 0;
        while done < whole {
            let count = (whole - done).min(step);
            let (Some(packed), Some(out)) =
                (src.get(from..from.wrapping_add(count)), block.get_mut(..count.wrapping_mul(per)))
            else {
                return;
            };
            unpack_bytes::<BITS>(packed, out);
            lines.put(dst, to, out);
            (from, to, done) =
                (from.wrapping_add(count), to.wrapping_add(count.wrapping_mul(per)), done.wrapping_add(count));
        }
        // Elements sharing their last byte with what comes after.
        let byte = src.get(from).copied().unwrap_or(0);
        for k in 0..n % per {
            let shift = u32::try_from(k).unwrap_or(0).wrapping_mul(BITS);
            lines.put(dst, to, &[byte.checked_shr(shift).unwrap_or(0) & mask]);
            to = to.wrapping_add(1);
        }
    });
}

/// Columns per block of [`pack_rows`] and [`unpack_rows`]: one line of each row.
const COLS: usize = 256;

/// The most packed bytes per column [`pack_rows`] and [`unpack_rows`] take (a 32-bit word: `s4`
/// `(8,1)`, `s2` `(16,1)`, `s1` `(32,1)`).
const GROUP: usize = 4;

/// A box packed across rows, as [`pack_rows`] (`pack`) and [`unpack_rows`] read it: the axes
/// outside, the columns and the rows (the two innermost), `per` elements per packed byte, `group`
/// packed bytes per column, `row` bytes between rows on the unpacked side, `n` columns.
struct Across<'a> {
    outer: &'a [Axis],
    cols: &'a Axis,
    rows: &'a Axis,
    per: usize,
    group: usize,
    row: usize,
    n: usize,
}

impl<'a> Across<'a> {
    /// `None` (element by element) unless the rows make whole groups of 1 to [`GROUP`] bytes one
    /// slot apart on the packed side, whole bytes apart on the other, and the columns one byte on
    /// the unpacked side and one group on the packed one: a window may have cut the rows short.
    fn new<const BITS: u32>(axes: &'a [Axis], pack: bool) -> Option<Self> {
        let [outer @ .., cols, rows] = axes else { return None };
        let per = usize::try_from(8u32.checked_div(BITS)?).ok()?;
        let (m, n) = (usize::try_from(rows.extent).ok()?, usize::try_from(cols.extent).ok()?);
        let group = super::plan::group_bytes(i64::try_from(m).ok()?.checked_mul(i64::from(BITS))?)?;
        // (column stride unpacked, column stride packed, row stride packed, row stride unpacked)
        let strides =
            if pack { (cols.src, cols.dst, rows.dst, rows.src) } else { (cols.dst, cols.src, rows.src, rows.dst) };
        let row = usize::try_from(strides.3).ok()?;
        let whole = (strides.0, strides.1, strides.2) == (8, to_i64(len_u64(group.checked_mul(8)?)), i64::from(BITS));
        (whole && group <= GROUP && row % 8 == 0).then_some(Self { outer, cols, rows, per, group, row: row / 8, n })
    }
}

/// One byte per element → `BITS`-bit elements packed across source rows ([`Kernel::PackRows`](super::plan::Kernel::PackRows)):
/// the innermost axis (`rows`) steps through `m` source rows, one `BITS`-bit slot apart in the
/// destination, and the axis before it (`cols`) one source byte and one group of `m · BITS / 8`
/// destination bytes. A column's group holds its `m` rows' elements in order, the first in the
/// lowest bits. `s` and `d` are bit offsets; a position that does not start on a byte goes
/// element by element.
// `BITS` is 1, 2 or 4 (the plan's `finish_bits`) and the group 1, 2 or 4 bytes (`plan::across`):
// `8 / BITS`, shifts and indices below `COLS · GROUP` are small; offsets are those of a planned
// box, inside the buffers (each source and destination access is still checked); `p < group ≤
// GROUP` and `c < count ≤ COLS` index the staging arrays.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
pub(crate) fn pack_rows<const BITS: u32>(
    src: &[u8],
    (dst, lines): (&mut [u8], &mut Lines),
    s: i64,
    d: i64,
    axes: &[Axis],
) {
    let Some(Across { outer, cols, rows, per, group, row, n }) = Across::new::<BITS>(axes, true) else {
        return super::kernel::bits(src, dst, s, d, axes, BITS, u64::from(BITS));
    };
    let mask = u8::MAX >> (8 - BITS);
    odometer(outer, s, d, &mut |s, d| {
        let (Ok(s), Ok(d)) = (usize::try_from(s), usize::try_from(d)) else { return };
        if s % 8 != 0 || d % 8 != 0 {
            return super::kernel::bits(
                src,
                dst,
                to_i64(len_u64(s)),
                to_i64(len_u64(d)),
                &[*cols, *rows],
                BITS,
                u64::from(BITS),
            );
        }
        let (s, d) = (s / 8, d / 8);
        let mut c0 = 0;
        while c0 < n {
            let count = (n - c0).min(COLS);
            // Byte `p` of each column's group, for every column of the block.
            let mut bytes = [[0u8; COLS]; GROUP];
            for (p, out) in bytes.iter_mut().take(group).enumerate() {
                for q in 0..per {
                    let at = s + (p * per + q) * row + c0;
                    let Some(from) = src.get(at..at + count) else { return };
                    let shift = u32::try_from(q).unwrap_or(0) * BITS;
                    for (o, &e) in out.iter_mut().zip(from) {
                        *o |= (e & mask) << shift;
                    }
                }
            }
            let mut block = [0u8; COLS * GROUP];
            // Whole lines of columns interleaved in registers (`tile.rs`), the rest one by one.
            let shuffled = if group == 1 {
                block[..count].copy_from_slice(&bytes[0][..count]);
                count
            } else {
                let bases = [0, COLS, 2 * COLS, 3 * COLS];
                let whole = count / LINE;
                let flat = bytes.as_flattened();
                let moved = super::tile::interleave_runs::<1>(
                    flat,
                    (&bases[..group], whole),
                    (&mut block, 0),
                    (1, 0, 0),
                    super::plan::Stores::Plain,
                );
                if moved { whole * LINE } else { 0 }
            };
            for (c, column) in block.chunks_exact_mut(group).take(count).enumerate().skip(shuffled) {
                for (p, byte) in column.iter_mut().enumerate() {
                    *byte = bytes[p][c];
                }
            }
            lines.put(dst, d + c0 * group, &block[..count * group]);
            c0 += count;
        }
    });
}

/// `BITS`-bit elements packed across rows → one per byte ([`Kernel::UnpackRows`](super::plan::Kernel::UnpackRows)),
/// the inverse of [`pack_rows`]: the same two innermost axes with the sides swapped (`rows` one
/// slot apart in the source, a destination row apart; `cols` one group in the source, one byte in
/// the destination). The bits above the value zero.
// As for `pack_rows`.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
pub(crate) fn unpack_rows<const BITS: u32>(
    src: &[u8],
    (dst, lines): (&mut [u8], &mut Lines),
    s: i64,
    d: i64,
    axes: &[Axis],
) {
    let Some(Across { outer, cols, rows, per, group, row, n }) = Across::new::<BITS>(axes, false) else {
        return super::kernel::bits(src, dst, s, d, axes, BITS, 8);
    };
    let mask = u8::MAX >> (8 - BITS);
    odometer(outer, s, d, &mut |s, d| {
        let (Ok(s), Ok(d)) = (usize::try_from(s), usize::try_from(d)) else { return };
        if s % 8 != 0 || d % 8 != 0 {
            return super::kernel::bits(src, dst, to_i64(len_u64(s)), to_i64(len_u64(d)), &[*cols, *rows], BITS, 8);
        }
        let (s, d) = (s / 8, d / 8);
        let mut c0 = 0;
        while c0 < n {
            let count = (n - c0).min(COLS);
            let at = s + c0 * group;
            let Some(from) = src.get(at..at + count * group) else { return };
            // Byte `p` of each column's group, for every column of the block: whole lines of
            // columns deinterleaved in registers (`tile.rs`), the rest one by one.
            let mut bytes = [[0u8; COLS]; GROUP];
            let shuffled = if group == 1 {
                bytes[0][..count].copy_from_slice(from);
                count
            } else {
                let rows = [0, COLS, 2 * COLS, 3 * COLS];
                let whole = count / LINE;
                let flat = bytes.as_flattened_mut();
                let moved = super::tile::deinterleave_runs::<1>(
                    &from[..whole * LINE * group],
                    &rows[..group],
                    flat,
                    super::plan::Stores::Plain,
                );
                moved * LINE
            };
            for (c, column) in from.chunks_exact(group).enumerate().skip(shuffled) {
                for (p, &byte) in column.iter().enumerate() {
                    bytes[p][c] = byte;
                }
            }
            for (p, packed) in bytes.iter().take(group).enumerate() {
                for q in 0..per {
                    let shift = u32::try_from(q).unwrap_or(0) * BITS;
                    let mut out = [0u8; COLS];
                    for (o, &b) in out.iter_mut().zip(packed) {
                        *o = (b >> shift) & mask;
                    }
                    lines.put(dst, d + (p * per + q) * row + c0, &out[..count]);
                }
            }
            c0 += count;
        }
    });
}

/// Packs `out.len() · 8 / BITS` bytes of `src` (exactly that many), the low `BITS` bits of each,
/// into `out`.
// `BITS` is 1, 2 or 4 (the plan's `finish_bits`): `8 / BITS` and `8 - BITS` are small and positive; `% 8` and
// `/ 8` of unsigned offsets cannot fail; counts only grow up to the run's length (`done ≤ whole`).
#[allow(clippy::arithmetic_side_effects)]
#[inline]
fn pack_bytes<const BITS: u32>(src: &[u8], out: &mut [u8]) {
    let per = usize::try_from(8 / BITS).unwrap_or(1);
    let mut whole: usize = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let mut outs = out.chunks_exact_mut(16);
        for (out, from) in (&mut outs).zip(src.chunks_exact(16 * per)) {
            if let Ok(out) = <&mut [u8; 16]>::try_from(out) {
                *out = simd::pack::<BITS>(from);
            }
            whole += 16;
        }
    }
    let mask = u8::MAX >> (8 - BITS);
    let tails = out.get_mut(whole..).unwrap_or_default().iter_mut();
    for (byte, group) in tails.zip(src.get(whole.wrapping_mul(per)..).unwrap_or_default().chunks_exact(per)) {
        *byte = group.iter().rev().fold(0u8, |acc, &e| acc.checked_shl(BITS).unwrap_or(0) | (e & mask));
    }
}

/// Unpacks `src` into `out` (`src.len() · 8 / BITS` bytes, one element each).
// `BITS` is 1, 2 or 4 (the plan's `finish_bits`): `8 / BITS` and `8 - BITS` are small and positive; `% 8` and
// `/ 8` of unsigned offsets cannot fail; counts only grow up to the run's length (`done ≤ whole`).
#[allow(clippy::arithmetic_side_effects)]
#[inline]
fn unpack_bytes<const BITS: u32>(src: &[u8], out: &mut [u8]) {
    let per = usize::try_from(8 / BITS).unwrap_or(1);
    let mut whole: usize = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let mut outs = out.chunks_exact_mut(16 * per);
        for (out, from) in (&mut outs).zip(src.chunks_exact(16)) {
            if let Ok(from) = <&[u8; 16]>::try_from(from) {
                simd::unpack::<BITS>(from, out);
            }
            whole += 16;
        }
    }
    let mask = u8::MAX >> (8 - BITS);
    let groups = out.get_mut(whole.wrapping_mul(per)..).unwrap_or_default().chunks_exact_mut(per);
    for (group, &byte) in groups.zip(src.get(whole..).unwrap_or_default()) {
        for (k, e) in (0u32..).zip(group.iter_mut()) {
            *e = byte.checked_shr(k.wrapping_mul(BITS)).unwrap_or(0) & mask;
        }
    }
}

/// The SSE2 rounds (x86-64 baseline, through `safe_arch`).
#[cfg(target_arch = "x86_64")]
mod simd {
    use safe_arch::{
        m128i, pack_i16_to_u8_m128i, set_splat_i8_m128i, set_splat_i16_m128i, shr_imm_u16_m128i, unpack_high_i8_m128i,
        unpack_low_i8_m128i,
    };

    /// Bytes of `S` bits, `b0 | b1 << S` for each pair: 16 bytes of `2S` bits from 32.
    #[inline]
    fn join<const S: u32>(a: m128i, b: m128i) -> m128i {
        let low = set_splat_i16_m128i(0x00FF);
        let half = |v: m128i| {
            let shifted = match S {
                1 => shr_imm_u16_m128i::<7>(v),
                2 => shr_imm_u16_m128i::<6>(v),
                _ => shr_imm_u16_m128i::<4>(v),
            };
            (v | shifted) & low
        };
        pack_i16_to_u8_m128i(half(a), half(b))
    }

    /// Bytes of `2S` bits split into their low and high `S` bits, in order: 32 bytes from 16.
    #[inline]
    fn split<const S: u32>(v: m128i) -> (m128i, m128i) {
        let mask = set_splat_i8_m128i(match S {
            1 => 0x01,
            2 => 0x03,
            _ => 0x0F,
        });
        let high = match S {
            1 => shr_imm_u16_m128i::<1>(v),
            2 => shr_imm_u16_m128i::<2>(v),
            _ => shr_imm_u16_m128i::<4>(v),
        };
        let (lo, hi) = (v & mask, high & mask);
        (unpack_low_i8_m128i(lo, hi), unpack_high_i8_m128i(lo, hi))
    }

    /// 16 bytes of `8 / BITS · 16` (`src`'s length).
    #[inline]
    // `k < 8`, `2k + 1 < 8`, `j < n ≤ 8`: every index is inside the eight lanes.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub(super) fn pack<const BITS: u32>(src: &[u8]) -> [u8; 16] {
        let mask = set_splat_i8_m128i(i8::try_from(u8::MAX >> (8 - BITS)).unwrap_or(-1));
        let mut lanes = [m128i::default(); 8];
        let mut n = 0;
        for (lane, chunk) in lanes.iter_mut().zip(src.chunks_exact(16)) {
            if let Ok(chunk) = <[u8; 16]>::try_from(chunk) {
                *lane = m128i::from(chunk) & mask;
            }
            n += 1;
        }
        let mut bits = BITS;
        while n > 1 {
            for k in 0..n / 2 {
                lanes[k] = match bits {
                    1 => join::<1>(lanes[2 * k], lanes[2 * k + 1]),
                    2 => join::<2>(lanes[2 * k], lanes[2 * k + 1]),
                    _ => join::<4>(lanes[2 * k], lanes[2 * k + 1]),
                };
            }
            n /= 2;
            bits *= 2;
        }
        lanes[0].into()
    }

    /// 16 packed bytes into `out` (`8 / BITS · 16` bytes).
    #[inline]
    // `k < n ≤ 4`, `2k + 1 < 8`: every index is inside the eight lanes.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub(super) fn unpack<const BITS: u32>(src: &[u8; 16], out: &mut [u8]) {
        let mut lanes = [m128i::default(); 8];
        lanes[0] = m128i::from(*src);
        let (mut n, mut bits) = (1, 4);
        while bits >= BITS {
            for k in (0..n).rev() {
                (lanes[2 * k], lanes[2 * k + 1]) = match bits {
                    1 => split::<1>(lanes[k]),
                    2 => split::<2>(lanes[k]),
                    _ => split::<4>(lanes[k]),
                };
            }
            n *= 2;
            bits /= 2;
        }
        for (chunk, lane) in out.chunks_exact_mut(16).zip(lanes) {
            chunk.copy_from_slice(&<[u8; 16]>::from(lane));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{pack_bytes, unpack_bytes};
    use proptest::prelude::*;

    /// The definition: element `i` in bits `(i mod per) · BITS ..` of byte `i div per`.
    fn reference<const BITS: u32>(elements: &[u8]) -> Vec<u8> {
        let per = 8 / BITS as usize;
        let mask = u8::MAX >> (8 - BITS);
        elements
            .chunks(per)
            .map(|group| {
                group
                    .iter()
                    .enumerate()
                    .fold(0u8, |acc, (k, &e)| acc | ((e & mask) << (u32::try_from(k).unwrap() * BITS)))
            })
            .collect()
    }

    fn check<const BITS: u32>(bytes: &[u8]) -> Result<(), TestCaseError> {
        let per = 8 / BITS as usize;
        let elements = &bytes[..bytes.len() / per * per];
        let mut packed = vec![0xA5u8; elements.len() / per];
        pack_bytes::<BITS>(elements, &mut packed);
        prop_assert_eq!(&packed, &reference::<BITS>(elements), "pack, {} bits", BITS);
        let mut back = vec![0xA5u8; elements.len()];
        unpack_bytes::<BITS>(&packed, &mut back);
        let mask = u8::MAX >> (8 - BITS);
        let low: Vec<u8> = elements.iter().map(|e| e & mask).collect();
        prop_assert_eq!(back, low, "unpack, {} bits", BITS);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 8 } else { 256 }, ..ProptestConfig::default() })]

        /// Every whole 16-byte block through the registers and every ragged end, against the
        /// definition, both ways.
        #[test]
        fn pack_and_unpack_as_defined(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            check::<4>(&bytes)?;
            check::<2>(&bytes)?;
            check::<1>(&bytes)?;
        }
    }
}
