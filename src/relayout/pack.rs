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
//!
//! Packed across rows (`s4` `T(8,128)(8,1)E(4)`: each column's 32-bit word holds 8 rows), 16
//! columns of every row go through the registers together: packing ors `8 / BITS` rows into each
//! byte of the column's group and interleaves the group's bytes; unpacking narrows the groups
//! with packs and cuts each row's bits out with a shift and a mask.

use super::kernel::{odometer, write_bits};
use super::lines::{Lines, RowLines};
use super::plan::{Axis, RowElements};
use super::stream::{LANE, LINE};
use crate::memory::extent::{len_u64, to_i64};

/// Bytes per block of [`unpack`]'s staging buffer (one element each): a few lines, so that
/// [`Lines`] streams them.
const BLOCK: usize = 256;

/// Packed bytes per block of [`pack`]'s staging buffer: 32 lines, so that [`Lines`]' work at
/// each block's ends (a destination off a line carries a part line across blocks) is spread
/// over more of them. From 256 bytes, `s4` packed into a `Vec` 16 bytes past a line went from
/// 0.44 to 0.51–0.54 of memcpy (`docs/relayout.md`, "Packs in longer blocks"); [`unpack`]'s
/// blocks measured slower at this length and keep [`BLOCK`].
const PACK_BLOCK: usize = 2048;

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
        let mut block = [0u8; PACK_BLOCK];
        let mut done = 0;
        while done < whole {
            let count = (whole - done).min(PACK_BLOCK);
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

/// Bytes of each source row per block of [`pack_rows`] (four lines: as many columns, or `8 /
/// BITS` times as many from rows packed along themselves), packed and handed to [`Lines`] at
/// once. Rows packed along themselves once took one line per block, which cost `s2` into
/// `T(16,128)(16,1)E(2)` 10 % (`docs/relayout.md`, "Sub-byte packs across rows, the Zen 4
/// machine").
const PACK_COLS: usize = 256;

/// Columns per block of [`unpack_rows`]: each destination row's run of a block is handed to
/// [`Lines`] at once, and on a destination off a line each run's first and last line go through
/// its carries (issue 36, `s4[8192,8192]` out of `T(8,128)(8,1)E(4)` into a `Vec`, 5 runs per
/// timing: 34–38 ms with 256 columns and 24–28 ms with 1024 (six timings each), 26–28 ms with 2048
/// (three); on a page 19–21 ms with 256 and 1024, 20–24 ms with 2048, three timings each).
const UNPACK_COLS: usize = 1024;

/// The longest run of a destination row per block (bytes) that [`unpack_rows`] writes through
/// [`RowLines`] when the rows are off a line by whole lanes (a `Vec`, a numpy array) and every
/// run is whole lines: each 64-byte piece shifted by lanes into the lines it straddles, the spill
/// kept per row, instead of [`Lines`]' search, carry copies and bookkeeping per run (issue 36,
/// one program alternating both in each process, three processes, 2026-11-30): `s2[8192,8192]`
/// out of `T(16,128)(16,1)E(2)` into `{1,0:E(2)}` (runs of 256 bytes) 16 bytes past a line
/// 3.98 / 6.76 / 6.01 ms → 3.03 / 5.87 / 5.02, 32 bytes past 4.29 / 4.04 / 7.12 → 3.09 / 3.50
/// / 5.64 (memcpy 1.6–2.5). Longer runs keep `Lines`, whose cost per run is spread over more
/// lines: `s4` into bytes (runs of 1 KiB) took 6.60–7.07 ms through `Lines` and 7.43–8.23
/// through `RowLines`, `s4` packed along rows (512 bytes) 4.61–9.47 and 4.44–8.68.
const SHORT_RUN: usize = 4 * LINE;

/// The most packed bytes per column [`pack_rows`] and [`unpack_rows`] take (a 32-bit word: `s4`
/// `(8,1)`, `s2` `(16,1)`, `s1` `(32,1)`).
const GROUP: usize = 4;

/// The most unpacked rows one group holds: 32 bits of `s1`.
const ROWS: usize = 32;

/// One row of [`unpack_rows`]' block: [`UNPACK_COLS`] columns, in lanes (the block has one per
/// row of the group, at most [`ROWS`]: 32 KiB, on the heap).
type StageRow = [[u8; LANE]; UNPACK_COLS / LANE];

/// How far ahead of its block [`pack_rows`] asks for each source row, in bytes. Its 8 (`s4`) to 32
/// (`s1`) rows are read a lane at a time, more streams than the hardware's prefetchers follow
/// (issue 36, `s4[8192,8192]` into `T(8,128)(8,1)E(4)`, 5 runs per timing, three timings each:
/// 512 bytes ahead 18.7–20.2 ms, 1 KiB 16.8–17.9, 1.5 KiB 17.1–18.4, 2 KiB 17.9–18.6; memcpy of
/// the output 8.3–9.4 ms; `docs/relayout.md`, "Sub-byte"). Asked into the second level
/// (`prefetcht1`): on the Zen 4 machine, into the first it cost the 8- and 16-row packs 9–27 %,
/// where the second level costs them nothing and still gains the 32 rows of `s1` 9 %
/// (`docs/relayout.md`, "Sub-byte packs across rows, the Zen 4 machine").
const AHEAD: usize = 1024;

/// A box packed across rows, as [`pack_rows`] (`pack`) and [`unpack_rows`] read it: the axes
/// outside, the columns and the rows (the two innermost), `per` elements per packed byte, `group`
/// packed bytes per column, `row` bytes between rows on the side that holds whole rows, `n`
/// columns, and how that side holds them (`along`).
struct Across<'a> {
    outer: &'a [Axis],
    cols: &'a Axis,
    rows: &'a Axis,
    per: usize,
    group: usize,
    row: usize,
    n: usize,
    along: RowElements,
}

impl<'a> Across<'a> {
    /// `None` (element by element) unless the rows make whole groups of 1 to [`GROUP`] bytes one
    /// slot apart on the packed side, whole bytes apart on the other, and the columns one element
    /// on the side of whole rows (a byte, or a slot of `along`'s packed rows, which must then be
    /// whole bytes long) and one group on the packed one: a window may have cut the rows short.
    fn new<const BITS: u32>(axes: &'a [Axis], pack: bool, along: RowElements) -> Option<Self> {
        let [outer @ .., cols, rows] = axes else { return None };
        let per = usize::try_from(8u32.checked_div(BITS)?).ok()?;
        let (m, n) = (usize::try_from(rows.extent).ok()?, usize::try_from(cols.extent).ok()?);
        let group = super::plan::group_bytes(i64::try_from(m).ok()?.checked_mul(i64::from(BITS))?)?;
        // (column stride along rows, column stride packed, row stride packed, row stride along)
        let strides =
            if pack { (cols.src, cols.dst, rows.dst, rows.src) } else { (cols.dst, cols.src, rows.src, rows.dst) };
        let row = usize::try_from(strides.3).ok()?;
        let whole = (strides.0, strides.1, strides.2)
            == (to_i64(slot::<BITS>(along)), to_i64(len_u64(group.checked_mul(8)?)), i64::from(BITS));
        let whole_bytes = along == RowElements::Bytes || n.checked_rem(per) == Some(0);
        (whole && whole_bytes && group <= GROUP && m <= ROWS && row % 8 == 0).then_some(Self {
            outer,
            cols,
            rows,
            per,
            group,
            row: row / 8,
            n,
            along,
        })
    }

    /// Bytes of a row's `columns` on the side of whole rows.
    fn row_bytes(&self, columns: usize) -> usize {
        match self.along {
            RowElements::Bytes => columns,
            RowElements::Packed => columns.checked_div(self.per).unwrap_or(0),
        }
    }
}

/// The byte offsets of bit offsets `s` and `d` that both start a byte; `None` otherwise (the
/// across-rows kernels then go element by element).
fn whole_bytes(s: i64, d: i64) -> Option<(usize, usize)> {
    let (s, d) = (usize::try_from(s).ok()?, usize::try_from(d).ok()?);
    (s % 8 == 0 && d % 8 == 0).then_some((s / 8, d / 8))
}

/// One byte per element → `BITS`-bit elements packed across source rows ([`Kernel::PackRows`](super::plan::Kernel::PackRows)):
/// the innermost axis (`rows`) steps through `m` source rows, one `BITS`-bit slot apart in the
/// destination, and the axis before it (`cols`) one source byte and one group of `m · BITS / 8`
/// destination bytes. A column's group holds its `m` rows' elements in order, the first in the
/// lowest bits. `s` and `d` are bit offsets; a position that does not start on a byte goes
/// element by element.
///
/// Each block of [`PACK_COLS`] bytes of its `m` rows reads them a [`LANE`] at a time, straight into the
/// registers: `8 / BITS` rows make each byte of the group (a mask, a shift, an or), and the
/// group's bytes are interleaved ([`zip_bytes`](super::tile::zip_bytes)) into the block's packed
/// bytes, which [`Lines`] writes (streamed where the plan streams).
pub(crate) fn pack_rows<const BITS: u32>(
    src: &[u8],
    out: (&mut [u8], &mut Lines),
    s: i64,
    d: i64,
    axes: &[Axis],
    along: RowElements,
) {
    match along {
        RowElements::Bytes => pack_rows_of::<BITS, false>(src, out, s, d, axes),
        RowElements::Packed => pack_rows_of::<BITS, true>(src, out, s, d, axes),
    }
}

/// [`pack_rows`] compiled for one [`RowElements`] (`PACKED`), so that each has its own loop.
// `BITS` is 1, 2 or 4 (the plan's `finish_bits`) and the group 1, 2 or 4 bytes (`plan::across`):
// `8 / BITS`, shifts and indices below `PACK_COLS · GROUP · 8` are small; offsets are those of a planned
// box, inside the buffers (each source and destination access is still checked); `r < m ≤ ROWS`,
// `p < group ≤ GROUP` and `c < count ≤ PACK_COLS · 8` index the staging arrays.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
fn pack_rows_of<const BITS: u32, const PACKED: bool>(
    src: &[u8],
    (dst, lines): (&mut [u8], &mut Lines),
    s: i64,
    d: i64,
    axes: &[Axis],
) {
    let along = if PACKED { RowElements::Packed } else { RowElements::Bytes };
    let Some(across) = Across::new::<BITS>(axes, true, along) else {
        return super::kernel::bits(src, dst, s, d, axes, BITS, u64::from(BITS));
    };
    let Across { outer, cols, rows, per, group, row, n, .. } = across;
    let (m, mask) = (per * group, u8::MAX >> (8 - BITS));
    // Four lines of each source row per block: `PACK_COLS` columns of bytes, or `PACK_COLS` bytes
    // of `per` packed columns each.
    let block_cols = if PACKED { PACK_COLS * per } else { PACK_COLS };
    let mut block = [0u8; PACK_COLS * GROUP * 8];
    odometer(outer, s, d, &mut |s, d| {
        let Some((s, d)) = whole_bytes(s, d) else {
            return super::kernel::bits(src, dst, s, d, &[*cols, *rows], BITS, u64::from(BITS));
        };
        // Each row's `n` columns and what follows them (asked for ahead), once for the box.
        let mut whole: [&[u8]; ROWS] = [&[]; ROWS];
        for (r, whole) in whole.iter_mut().take(m).enumerate() {
            let Some(rest) = src.get(s + r * row..).filter(|rest| rest.len() >= across.row_bytes(n)) else { return };
            *whole = rest;
        }
        let mut c0 = 0;
        while c0 < n {
            let count = (n - c0).min(block_cols);
            // The block's bytes of each source row (whole bytes: `count` is a multiple of `per`
            // when the rows are packed, `Across::new`).
            let (at, bytes) = (across.row_bytes(c0), across.row_bytes(count));
            let mut from: [&[u8]; ROWS] = [&[]; ROWS];
            for (from, whole) in from.iter_mut().zip(&whole).take(m) {
                *from = whole.get(at..at + bytes).unwrap_or_default();
                for line in (0..bytes).step_by(LINE) {
                    super::tile::prefetch(whole, at + AHEAD + line, super::tile::Level::Second);
                }
            }
            let out = &mut block[..count * group];
            let done = pack_lanes::<BITS, PACKED>(&from, m, out);
            // Row `r`'s element at column `c` of the block.
            let element = |r: usize, c: usize| match along {
                RowElements::Bytes => from[r].get(c).copied().unwrap_or(0),
                RowElements::Packed => {
                    from[r].get(c / per).copied().unwrap_or(0) >> (u32::try_from(c % per).unwrap_or(0) * BITS)
                }
            };
            // Columns short of a lane (all of them off x86-64), one by one.
            for c in done..count {
                for p in 0..group {
                    let bits = (0..per).fold(0u8, |acc, q| {
                        acc | (element(p * per + q, c) & mask) << (u32::try_from(q).unwrap_or(0) * BITS)
                    });
                    out[c * group + p] = bits;
                }
            }
            lines.put(dst, d + c0 * group, out);
            c0 += count;
        }
    });
}

/// [`pack_rows`]' whole lanes of a block, in registers: the first `m` of `rows` (one element per
/// byte, or packed along themselves: `PACKED`) packed across them into `out`; returns the columns
/// done (none off x86-64).
#[cfg(target_arch = "x86_64")]
fn pack_lanes<const BITS: u32, const PACKED: bool>(rows: &[&[u8]; ROWS], m: usize, out: &mut [u8]) -> usize {
    fn rows_of<const BITS: u32, const M: usize, const PACKED: bool>(rows: &[&[u8]; ROWS], out: &mut [u8]) -> usize {
        let Some(rows) = rows.first_chunk::<M>() else { return 0 };
        if PACKED { simd::pack_across_packed::<BITS, M>(rows, out) } else { simd::pack_across::<BITS, M>(rows, out) }
    }
    match m {
        2 => rows_of::<BITS, 2, PACKED>(rows, out),
        4 => rows_of::<BITS, 4, PACKED>(rows, out),
        8 => rows_of::<BITS, 8, PACKED>(rows, out),
        16 => rows_of::<BITS, 16, PACKED>(rows, out),
        _ => rows_of::<BITS, ROWS, PACKED>(rows, out),
    }
}

/// No registers off x86-64: [`pack_rows`] packs every column one by one.
#[cfg(not(target_arch = "x86_64"))]
fn pack_lanes<const BITS: u32, const PACKED: bool>(_rows: &[&[u8]; ROWS], _m: usize, _out: &mut [u8]) -> usize {
    0
}

/// `BITS`-bit elements packed across rows → one per byte ([`Kernel::UnpackRows`](super::plan::Kernel::UnpackRows)),
/// the inverse of [`pack_rows`]: the same two innermost axes with the sides swapped (`rows` one
/// slot apart in the source, a destination row apart; `cols` one group in the source, one byte in
/// the destination). The bits above the value zero. Each block of [`UNPACK_COLS`] columns is split a
/// [`LANE`] at a time into its `m` rows (in registers: narrowing packs, then a shift and a mask
/// per row), which [`Lines`] writes, a run of each row at a time.
pub(crate) fn unpack_rows<const BITS: u32>(
    src: &[u8],
    out: (&mut [u8], &mut Lines),
    s: i64,
    d: i64,
    axes: &[Axis],
    along: RowElements,
) {
    match along {
        RowElements::Bytes => unpack_rows_of::<BITS, false>(src, out, s, d, axes),
        RowElements::Packed => unpack_rows_of::<BITS, true>(src, out, s, d, axes),
    }
}

/// [`unpack_rows`] compiled for one [`RowElements`] (`PACKED`), so that each has its own loop.
// As for `pack_rows_of`.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
fn unpack_rows_of<const BITS: u32, const PACKED: bool>(
    src: &[u8],
    (dst, lines): (&mut [u8], &mut Lines),
    s: i64,
    d: i64,
    axes: &[Axis],
) {
    let along = if PACKED { RowElements::Packed } else { RowElements::Bytes };
    let Some(across) = Across::new::<BITS>(axes, false, along) else {
        return super::kernel::bits(src, dst, s, d, axes, BITS, slot::<BITS>(along));
    };
    let Across { outer, cols, rows, per, group, row, n, .. } = across;
    let (m, mask) = (per * group, u8::MAX >> (8 - BITS));
    // Each destination row's run of a block: a byte per column, or packed along the row.
    let mut stage: Vec<StageRow> = vec![[[0u8; LANE]; UNPACK_COLS / LANE]; m];
    // Rows whole lines apart whose every run is whole lines and short ([`SHORT_RUN`]): off a
    // line by whole lanes, their runs go through `RowLines` (a slot per row of the group).
    let whole_runs = [UNPACK_COLS, n % UNPACK_COLS].iter().all(|&c| across.row_bytes(c) % LINE == 0)
        && across.row_bytes(UNPACK_COLS) <= SHORT_RUN;
    let mut by_rows =
        (lines.streams() && whole_runs && row % LINE == 0 && m <= super::lines::ROW_SLOTS).then(RowLines::new);
    odometer(outer, s, d, &mut |s, d| {
        let Some((s, d)) = whole_bytes(s, d) else {
            if let Some(by_rows) = by_rows.as_mut() {
                by_rows.finish(dst);
            }
            return super::kernel::bits(src, dst, s, d, &[*cols, *rows], BITS, slot::<BITS>(along));
        };
        let mut carried = match (by_rows.as_mut(), RowLines::lanes_past(dst, d)) {
            (Some(by_rows), Some(past)) => {
                by_rows.begin(dst, past);
                Some(by_rows)
            }
            _ => None,
        };
        let mut c0 = 0;
        while c0 < n {
            let count = (n - c0).min(UNPACK_COLS);
            let at = s + c0 * group;
            let Some(from) = src.get(at..at + count * group) else { return };
            let done = unpack_lanes::<BITS, PACKED>(from, m, &mut stage);
            // Columns short of a lane (all of them off x86-64), one by one.
            for c in done..count {
                for p in 0..group {
                    for q in 0..per {
                        let shift = u32::try_from(q).unwrap_or(0) * BITS;
                        let value = (from[c * group + p] >> shift) & mask;
                        let run = stage[p * per + q].as_flattened_mut();
                        match along {
                            RowElements::Bytes => run[c] = value,
                            RowElements::Packed => {
                                let slot = u32::try_from(c % per).unwrap_or(0) * BITS;
                                run[c / per] = (run[c / per] & !(mask << slot)) | value << slot;
                            }
                        }
                    }
                }
            }
            for (r, out) in stage.iter().enumerate() {
                let at = d + r * row + across.row_bytes(c0);
                let run = &out.as_flattened()[..across.row_bytes(count)];
                match carried.as_deref_mut() {
                    Some(by_rows) => {
                        for (k, piece) in run.chunks_exact(LINE).enumerate() {
                            if let Ok(piece) = <&[u8; LINE]>::try_from(piece) {
                                by_rows.put(dst, r, at + k * LINE, piece);
                            }
                        }
                    }
                    None => lines.put(dst, at, run),
                }
            }
            c0 += count;
        }
    });
    if let Some(by_rows) = by_rows.as_mut() {
        by_rows.finish(dst);
    }
}

/// The slot, in bits, of an element on the side of whole rows: a byte, or packed along the rows
/// (the destination slot of [`unpack_rows`]' elements).
fn slot<const BITS: u32>(along: RowElements) -> u64 {
    match along {
        RowElements::Bytes => 8,
        RowElements::Packed => u64::from(BITS),
    }
}

/// [`unpack_rows`]' whole lanes of a block, in registers: `src` split into the first `m` rows of
/// `stage` (one element per byte, or packed along themselves: `PACKED`); returns the columns done
/// (none off x86-64).
#[cfg(target_arch = "x86_64")]
fn unpack_lanes<const BITS: u32, const PACKED: bool>(src: &[u8], m: usize, stage: &mut [StageRow]) -> usize {
    fn rows_of<const BITS: u32, const M: usize, const PACKED: bool>(src: &[u8], stage: &mut [StageRow]) -> usize {
        if PACKED {
            simd::unpack_across_packed::<BITS, M>(src, stage)
        } else {
            simd::unpack_across::<BITS, M>(src, stage)
        }
    }
    match m {
        2 => rows_of::<BITS, 2, PACKED>(src, stage),
        4 => rows_of::<BITS, 4, PACKED>(src, stage),
        8 => rows_of::<BITS, 8, PACKED>(src, stage),
        16 => rows_of::<BITS, 16, PACKED>(src, stage),
        _ => rows_of::<BITS, ROWS, PACKED>(src, stage),
    }
}

/// No registers off x86-64: [`unpack_rows`] splits every column one by one.
#[cfg(not(target_arch = "x86_64"))]
fn unpack_lanes<const BITS: u32, const PACKED: bool>(_src: &[u8], _m: usize, _stage: &mut [StageRow]) -> usize {
    0
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
        load_unaligned_m128i, m128i, pack_i16_to_u8_m128i, pack_i32_to_i16_m128i, set_splat_i8_m128i,
        set_splat_i16_m128i, shl_all_u16_m128i, shl_imm_u32_m128i, shr_all_u16_m128i, shr_imm_i32_m128i,
        shr_imm_u16_m128i, unpack_high_i8_m128i, unpack_low_i8_m128i,
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

    /// [`super::pack_rows`]' whole lanes (16 columns of each of the `M` rows; the rows are
    /// equally long): packed into `out`, `G = M · BITS / 8` bytes per column. Byte `p` of each
    /// column's group ors rows `p · 8 / BITS ..` in place (a mask and a shift each, `psllw` of values
    /// that stay within their byte), then the `G` bytes are interleaved (`zip_bytes`). Returns
    /// the columns done.
    #[inline]
    // `r < M` indexes `rows`, `r / per < G ≤ 4` the groups' bytes; `k` stays below `lanes`,
    // the length every row is cut to; the shifts are below 8.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub(super) fn pack_across<const BITS: u32, const M: usize>(rows: &[&[u8]; M], out: &mut [u8]) -> usize {
        let per = (8 / BITS) as usize;
        let g = M / per;
        let lanes = rows.iter().map(|r| r.len()).min().unwrap_or(0).min(out.len() / g) / 16;
        let mask = set_splat_i8_m128i(i8::try_from(u8::MAX >> (8 - BITS)).unwrap_or(-1));
        let mut cut: [&[[u8; 16]]; M] = [&[]; M];
        for (cut, row) in cut.iter_mut().zip(rows) {
            let Some(Ok(whole)) = row.get(..lanes * 16).map(bytemuck::try_cast_slice::<u8, [u8; 16]>) else { return 0 };
            *cut = whole;
        }
        for (k, out) in out.chunks_exact_mut(g * 16).enumerate().take(lanes) {
            let mut bytes = [m128i::default(); 4];
            for (r, row) in cut.iter().enumerate() {
                let shift = m128i::from([u64::try_from(r % per).unwrap_or(0) * u64::from(BITS), 0]);
                bytes[r / per] |= shl_all_u16_m128i(load_unaligned_m128i(&row[k]) & mask, shift);
            }
            let mut groups = bytes.map(<[u8; 16]>::from);
            match g {
                1 => {}
                2 => super::super::tile::zip_bytes::<2>(groups.first_chunk_mut::<2>().unwrap_or(&mut [[0; 16]; 2])),
                _ => super::super::tile::zip_bytes::<4>(&mut groups),
            }
            out.copy_from_slice(&groups.as_flattened()[..g * 16]);
        }
        lanes * 16
    }

    /// 16 columns packed across `M` rows (`G = M · BITS / 8` bytes each, `G` lanes: column `c`'s
    /// group at bytes `c · G ..` of the lanes read as one sequence) split into the `M` rows, a lane
    /// each, given to `emit` in order. Groups of 4 bytes are first narrowed to their low and high
    /// 16 bits (`psrad`/`packssdw` keep a 16-bit pattern exactly), groups of 2 then to each row's
    /// bits (a shift, a mask, `packuswb` of values that fit a byte): packs, not byte shuffles,
    /// which the compiler would rewrite into longer sequences of word shuffles.
    #[inline]
    // `r < M`; the shifts are below 16 (`r · BITS` within a 16-bit half).
    #[allow(clippy::arithmetic_side_effects)]
    fn split_rows<const BITS: u32, const M: usize>(lanes: &[[u8; 16]], mut emit: impl FnMut(usize, [u8; 16])) {
        let mask = u16::MAX >> (16 - BITS);
        let byte_mask = set_splat_i16_m128i(i16::try_from(mask).unwrap_or(0));
        let shift = |r: usize| m128i::from([u64::try_from(r).unwrap_or(0) * u64::from(BITS), 0]);
        let lane = |k: usize| lanes.get(k).map_or(m128i::default(), |l| m128i::from(*l));
        // Rows from two registers of 8 16-bit groups (columns 0–7, 8–15), `first` the first row's index.
        let mut halves = |(a, b): (m128i, m128i), rows: core::ops::Range<usize>, first: usize| {
            for r in rows {
                let row = |v: m128i| shr_all_u16_m128i(v, shift(r - first)) & byte_mask;
                emit(r, pack_i16_to_u8_m128i(row(a), row(b)).into());
            }
        };
        match M * BITS as usize / 8 {
            1 => {
                let (x, low) = (lane(0), set_splat_i8_m128i(i8::try_from(mask).unwrap_or(-1)));
                for r in 0..M {
                    emit(r, (shr_all_u16_m128i(x, shift(r)) & low).into());
                }
            }
            2 => halves((lane(0), lane(1)), 0..M, 0),
            _ => {
                let low = |a: m128i, b: m128i| {
                    let sign = |v: m128i| shr_imm_i32_m128i::<16>(shl_imm_u32_m128i::<16>(v));
                    pack_i32_to_i16_m128i(sign(a), sign(b))
                };
                let high =
                    |a: m128i, b: m128i| pack_i32_to_i16_m128i(shr_imm_i32_m128i::<16>(a), shr_imm_i32_m128i::<16>(b));
                let (x0, x1, x2, x3) = (lane(0), lane(1), lane(2), lane(3));
                halves((low(x0, x1), low(x2, x3)), 0..M / 2, 0);
                halves((high(x0, x1), high(x2, x3)), M / 2..M, M / 2);
            }
        }
    }

    /// [`super::unpack_rows`]' whole lanes: the whole lanes of 16 columns of `src` (`G = M · BITS
    /// / 8` bytes per column) split into the first `M` rows of `stage` ([`split_rows`]), from
    /// column 0. Returns the columns done.
    #[inline]
    // `r < M ≤ stage.len()` (checked first) and `k < UNPACK_COLS / 16` (the `take`) index `stage`.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub(super) fn unpack_across<const BITS: u32, const M: usize>(src: &[u8], stage: &mut [super::StageRow]) -> usize {
        let g = M * BITS as usize / 8;
        let mut done = 0;
        if stage.len() < M {
            return 0;
        }
        for (k, chunk) in src.chunks_exact(g * 16).enumerate().take(super::UNPACK_COLS / 16) {
            let Ok(lanes) = bytemuck::try_cast_slice::<u8, [u8; 16]>(chunk) else { break };
            split_rows::<BITS, M>(lanes, |r, lane| stage[r][k] = lane);
            done += 16;
        }
        done
    }

    /// Transposes each group of `8 / BITS` lanes in place as a square of `BITS`-bit fields, byte
    /// by byte: field `k` of byte `b` of lane `q` (of a group) trades places with field `q` of
    /// byte `b` of lane `k`. Rows packed along themselves (lane `q` a row's bytes, field `k` its
    /// column `b · per + k`) become each column's byte of the rows (lane `q` column `b · per + q`'s
    /// fields), and back: the square's transpose is its own inverse. `log2(8 / BITS)` rounds of
    /// swapped half-blocks between lanes `d` apart (a delta swap each: two shifts, a mask and three
    /// xors, `psllw`/`psrlw` of bits that the mask keeps within their byte; inlined, so that the
    /// lanes stay in registers).
    // Left to itself LLVM called it with the lanes in memory (issue 36: `s2` into
    // `T(16,128)(16,1)E(2)` 3.6–4.1 ms inlined against 4.2–4.5 called).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    // `q + d < per ≤ 8` within each group of `per` lanes, `M` a multiple of `per`: every index
    // is below `M`; the shifts are below 8.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    fn transpose_fields<const BITS: u32, const M: usize>(lanes: &mut [m128i; M]) {
        let per = (8 / BITS) as usize;
        let mut h = 4u32;
        while h >= BITS {
            let d = (h / BITS) as usize;
            // The low `h` bits of every `2h`-bit block.
            let low = set_splat_i8_m128i(match h {
                4 => 0x0F,
                2 => 0x33,
                _ => 0x55,
            });
            let shift = m128i::from([u64::from(h), 0]);
            for first in (0..M).step_by(per) {
                for q in (first..first + per).filter(|q| (q - first) & d == 0) {
                    // A delta swap: the high `h` bits of `x`'s blocks trade with the low of `y`'s.
                    let (x, y) = (lanes[q], lanes[q + d]);
                    let swapped = (shr_all_u16_m128i(x, shift) ^ y) & low;
                    lanes[q] = x ^ shl_all_u16_m128i(swapped, shift);
                    lanes[q + d] = y ^ swapped;
                }
            }
            h /= 2;
        }
    }

    /// [`super::pack_rows`]' whole lanes from rows packed along themselves (16 packed bytes, `16
    /// · 8 / BITS` columns, of each of the `M` rows at a time): [`transpose_fields`] makes each
    /// lane a column's byte of its group, and the `M` lanes are interleaved (`zip_bytes`) into
    /// `out`, `G = M · BITS / 8` bytes per column. Returns the columns done.
    #[inline]
    // `k` stays below `lanes`, the packed length every row is cut to; `q · G + p < M`.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub(super) fn pack_across_packed<const BITS: u32, const M: usize>(rows: &[&[u8]; M], out: &mut [u8]) -> usize {
        let per = (8 / BITS) as usize;
        let g = M / per;
        if g * per != M {
            return 0;
        }
        let lanes = rows.iter().map(|r| r.len()).min().unwrap_or(0).min(out.len() / M) / 16;
        let mut cut: [&[[u8; 16]]; M] = [&[]; M];
        for (cut, row) in cut.iter_mut().zip(rows) {
            let Some(Ok(whole)) = row.get(..lanes * 16).map(bytemuck::try_cast_slice::<u8, [u8; 16]>) else { return 0 };
            *cut = whole;
        }
        for (k, out) in out.chunks_exact_mut(M * 16).enumerate().take(lanes) {
            let mut fields: [m128i; M] = core::array::from_fn(|r| load_unaligned_m128i(&cut[r][k]));
            transpose_fields::<BITS, M>(&mut fields);
            // Lane `p · per + q` holds byte `p` of columns `b · per + q`: in the output, column
            // `b · per + q`'s byte `p` is byte `b` of lane `q · G + p`, zipped.
            let mut columns: [[u8; 16]; M] = core::array::from_fn(|i| fields[(i % g) * per + i / g].into());
            super::super::tile::zip_bytes::<M>(&mut columns);
            out.copy_from_slice(columns.as_flattened());
        }
        lanes * 16 * per
    }

    /// The inverse of [`pack_across_packed`] for [`super::unpack_rows`]: the whole lanes of `src`
    /// (`16 · M` bytes, `16 · 8 / BITS` columns, at a time) split into the `M` rows packed along
    /// themselves, row `r`'s 16 bytes of each step into `stage[r]` from its start. Returns the
    /// columns done.
    #[inline]
    // `r < M ≤ stage.len()` (checked first) and `k < UNPACK_COLS / 16` (the `take`) index
    // `stage`; `q · G + p < M`.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    pub(super) fn unpack_across_packed<const BITS: u32, const M: usize>(
        src: &[u8],
        stage: &mut [super::StageRow],
    ) -> usize {
        let per = (8 / BITS) as usize;
        let g = M / per;
        if stage.len() < M || g * per != M {
            return 0;
        }
        let mut done = 0;
        for (k, chunk) in src.chunks_exact(M * 16).enumerate().take(super::UNPACK_COLS / 16) {
            let Ok(lanes) = bytemuck::try_cast_slice::<u8, [u8; 16]>(chunk) else { break };
            let mut columns: [[u8; 16]; M] = core::array::from_fn(|i| lanes[i]);
            super::super::tile::unzip_bytes::<M>(&mut columns);
            let mut fields: [m128i; M] = core::array::from_fn(|r| m128i::from(columns[(r % per) * g + r / per]));
            transpose_fields::<BITS, M>(&mut fields);
            for (r, lane) in fields.into_iter().enumerate() {
                stage[r][k] = lane.into();
            }
            done += 16 * per;
        }
        done
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
