//! The transpose's micro-tile in registers: `M` source runs of one [`LINE`] each in, `M`
//! destination lines out, element `i` of run `j` becoming element `j` of line `i` (elements of
//! `N` bytes, `M · N = LINE`).
//!
//! The tile is cut into 4 × 4 blocks of one 16-byte lane per row (`B = 16 / N` elements, so
//! `M = 4 · B` for every width). A block is transposed in `log2(B)` rounds of the same perfect
//! shuffle: lane `2i` of the next round interleaves the low halves of lanes `i` and `i + B/2`,
//! lane `2i + 1` their high halves, in elements of `N` bytes. After `log2(B)` rounds element
//! `c` of lane `r` has moved to element `r` of lane `c`. Written on 16-byte arrays, each
//! interleave is one `punpckl*`/`punpckh*` instruction once inlined (SSE2, the x86-64 baseline;
//! `zip2`-style on other targets), so the tile costs about one instruction per element where
//! element-by-element gathering costs several: the kernel stays memory-bound instead of
//! instruction-bound (`docs/relayout.md`, "Speed").
//!
//! The same round over `S` lanes rotates the index of every element of the `S · 16` bytes left
//! by one bit ([`shuffle`]): `log2(16 / N)` rounds deinterleave `S` rows interleaved element by
//! element (bf16 `(2,1)` sub-tiles read out into rows, [`deinterleave_runs`]), `log2(S)` rounds
//! interleave them ([`interleave_runs`]).

use super::lines::RowLines;
use super::stream::{LANE, LINE, past_line};

/// A line of zeros: the run of a source offset the plan never produces.
pub(crate) static ZERO_LINE: [u8; LINE] = [0; LINE];

/// Lanes per line: a tile has this many blocks per side.
const BLOCKS: usize = LINE / LANE;

/// A lane.
type Lane = [u8; LANE];

/// The caches a [`prefetch`] fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// All of them (`prefetcht0`): lines wanted within the next few micro-tiles.
    First,
    /// The second level and beyond (`prefetcht1`): lines asked for further ahead, which the
    /// first level would evict before their use (`plan::STAGE_AHEAD`), or among many streams
    /// whose `prefetcht0`s would stall the loads (`pack::AHEAD`, [`AHEAD_RUNS`]).
    Second,
}

/// Asks for the cache line holding `buf[at]` ahead of its use, into the caches of `level` (SSE,
/// the x86-64 baseline); a hint only: nothing is read, a line the caches already hold costs
/// nothing, and an offset outside `buf` asks for nothing.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn prefetch(buf: &[u8], at: usize, level: Level) {
    if let Some(byte) = buf.get(at) {
        match level {
            Level::First => safe_arch::prefetch_t0(byte),
            Level::Second => safe_arch::prefetch_t1(byte),
        }
    }
}

/// No prefetch hint on this target.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(crate) fn prefetch(_buf: &[u8], _at: usize, _level: Level) {}

/// Interleaves `N`-byte elements: the low halves of `a` and `b` (`a0 b0 a1 b1 …`) and their high
/// halves: one `punpckl*` and one `punpckh*` (SSE2, the x86-64 baseline).
#[cfg(target_arch = "x86_64")]
#[inline]
fn zip<const N: usize>(a: Lane, b: Lane) -> (Lane, Lane) {
    use safe_arch::{
        m128i, unpack_high_i8_m128i, unpack_high_i16_m128i, unpack_high_i32_m128i, unpack_high_i64_m128i,
        unpack_low_i8_m128i, unpack_low_i16_m128i, unpack_low_i32_m128i, unpack_low_i64_m128i,
    };
    let (a, b) = (m128i::from(a), m128i::from(b));
    let (lo, hi) = match N {
        1 => (unpack_low_i8_m128i(a, b), unpack_high_i8_m128i(a, b)),
        2 => (unpack_low_i16_m128i(a, b), unpack_high_i16_m128i(a, b)),
        4 => (unpack_low_i32_m128i(a, b), unpack_high_i32_m128i(a, b)),
        _ => (unpack_low_i64_m128i(a, b), unpack_high_i64_m128i(a, b)),
    };
    (lo.into(), hi.into())
}

/// Interleaves `N`-byte elements: the low halves of `a` and `b` (`a0 b0 a1 b1 …`) and their high
/// halves, element by element (targets without SSE2; the compiler's vectorizer may still find
/// the `zip1`/`zip2` it is).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn zip<const N: usize>(a: Lane, b: Lane) -> (Lane, Lane) {
    let mut lo = [0u8; LANE];
    let mut hi = [0u8; LANE];
    let (a_lo, a_hi) = a.split_at(LANE / 2);
    let (b_lo, b_hi) = b.split_at(LANE / 2);
    for (out, x, y) in [(&mut lo, a_lo, b_lo), (&mut hi, a_hi, b_hi)] {
        for ((pair, x), y) in out.chunks_exact_mut(2 * N).zip(x.chunks_exact(N)).zip(y.chunks_exact(N)) {
            let (first, second) = pair.split_at_mut(N);
            first.copy_from_slice(x);
            second.copy_from_slice(y);
        }
    }
    (lo, hi)
}

/// `rounds` rounds of the perfect shuffle over `S` lanes: lanes `2k` and `2k + 1` of the next
/// round interleave lanes `k` and `S/2 + k`. Read as one sequence of `S · B` elements, lane after
/// lane, a round rotates every element's index left by one bit (of `log2(S · B)`): the index
/// `(lane, element)` becomes `(lane mod S/2, element, lane div S/2)`. So `log2(B)` rounds move
/// the element part to the top (a transpose when `S = B`, a deinterleave by `S` otherwise) and
/// `log2(S)` rounds move the lane part to the bottom (an interleave of `S` rows).
#[inline]
// `k < S / 2` and `S / 2 + k < S`, `2k + 1 < S`: every index is below the array's length `S`
// (a constant once monomorphized; the loops unroll completely).
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn shuffle<const N: usize, const S: usize>(lanes: &mut [Lane; S], rounds: u32) {
    for _ in 0..rounds {
        let before = *lanes;
        for k in 0..S / 2 {
            (lanes[2 * k], lanes[2 * k + 1]) = zip::<N>(before[k], before[S / 2 + k]);
        }
    }
}

/// Rounds of [`shuffle`] that transpose a block of `B` lanes, or deinterleave `S` of them:
/// `log2(B)`, `B = 16 / N` elements per lane.
const fn element_bits<const N: usize>() -> u32 {
    match LANE.checked_div(N) {
        Some(b) => b.trailing_zeros(),
        None => 0,
    }
}

/// Interleaves `S` lanes byte by byte, in place: byte `c` of lane `r` becomes byte `c · S + r` of
/// the lanes read as one sequence (`log2(S)` rounds of [`shuffle`]): the packed groups of
/// [`pack_rows`](super::pack::pack_rows), `S` bytes per column.
#[inline]
pub(crate) fn zip_bytes<const S: usize>(lanes: &mut [[u8; LANE]; S]) {
    shuffle::<1, S>(lanes, S.trailing_zeros());
}

/// The inverse of [`zip_bytes`]: byte `c · S + r` of the lanes read as one sequence becomes byte
/// `c` of lane `r` (4 more rounds of [`shuffle`] complete the rotation of the `log2(16 · S)`
/// index bits that `zip_bytes` began).
#[inline]
pub(crate) fn unzip_bytes<const S: usize>(lanes: &mut [[u8; LANE]; S]) {
    shuffle::<1, S>(lanes, LANE.trailing_zeros());
}

/// Transposes one block in place: lane `r` holds `B` elements of run `r`; afterwards lane `c`
/// holds element `c` of every run.
#[inline]
fn block<const N: usize, const B: usize>(lanes: &mut [Lane; B]) {
    shuffle::<N, B>(lanes, element_bits::<N>());
}

/// Transposes the tile: `emit(i, line)` receives line `i`, element `i` of every run (`runs[j]`
/// giving element `j`), for `i` in order.
#[inline]
// `jb, ib < BLOCKS`, `r, c < B`, `M = B · BLOCKS` (asserted at compile time): every index is in
// bounds, and the loops unroll completely.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub(crate) fn transpose<const N: usize, const M: usize, const B: usize>(
    runs: &[&[u8; LINE]; M],
    mut emit: impl FnMut(usize, &[u8; LINE]),
) {
    const {
        assert!(N * M == LINE && N * B == LANE && M == B * BLOCKS);
    }
    for ib in 0..BLOCKS {
        // Lines ib·B .. ib·B + B: lane jb of line c is lane c of block (jb, ib) transposed.
        let mut assembled = [[[0u8; LANE]; BLOCKS]; B];
        for jb in 0..BLOCKS {
            // Block (jb, ib): lane r is lane ib of run jb·B + r.
            let mut lanes = [[0u8; LANE]; B];
            for (r, lane) in lanes.iter_mut().enumerate() {
                let run: &[Lane; BLOCKS] = bytemuck::cast_ref(runs[jb * B + r]);
                *lane = run[ib];
            }
            block::<N, B>(&mut lanes);
            for (c, lane) in lanes.into_iter().enumerate() {
                assembled[c][jb] = lane;
            }
        }
        for (c, line) in assembled.iter().enumerate() {
            emit(ib * B + c, bytemuck::cast_ref(line));
        }
    }
}

/// [`transpose`] with every lane an SSE2 register from load to store: line `i` goes to
/// `dst[line(i)..][..LINE]` (skipped when the line is not inside `dst`; given to `rest(dst, i,
/// line)` when `line(i)` is `None`), for `i` in order, streamed where `stores` asks and the
/// line allows. The whole tiles of the transposes' strips (`kernel::Walk::strip`): no byte arrays between the registers and the
/// lines, and no emitter deciding per line how much of it to store.
#[cfg(target_arch = "x86_64")]
#[inline]
// `jb, ib < BLOCKS`, `r, c < B`, `M = B · BLOCKS` (asserted at compile time): every index is in
// bounds, and the loops unroll completely.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub(crate) fn transpose_lanes<const N: usize, const M: usize, const B: usize>(
    runs: &[&[u8; LINE]; M],
    dst: &mut [u8],
    line: impl Fn(usize) -> Option<usize>,
    stores: super::plan::Stores,
    mut rest: impl FnMut(&mut [u8], usize, &[u8; LINE]),
) {
    use safe_arch::m128i;
    const {
        assert!(N * M == LINE && N * B == LANE && M == B * BLOCKS);
    }
    for ib in 0..BLOCKS {
        let mut assembled = [[m128i::default(); BLOCKS]; B];
        for jb in 0..BLOCKS {
            let mut lanes: [m128i; B] = core::array::from_fn(|r| {
                let run: &[Lane; BLOCKS] = bytemuck::cast_ref(runs[jb * B + r]);
                m128i::from(run[ib])
            });
            for _ in 0..element_bits::<N>() {
                let before = lanes;
                for k in 0..B / 2 {
                    (lanes[2 * k], lanes[2 * k + 1]) = zip_m128::<N>(before[k], before[B / 2 + k]);
                }
            }
            for (c, lane) in lanes.into_iter().enumerate() {
                assembled[c][jb] = lane;
            }
        }
        for (c, lanes) in assembled.iter().enumerate() {
            let bytes: &[u8; LINE] = bytemuck::cast_ref(lanes);
            let Some(t) = line(ib * B + c) else {
                rest(dst, ib * B + c, bytes);
                continue;
            };
            if let Some(to) = dst.get_mut(t..).and_then(|tail| tail.first_chunk_mut::<LINE>()) {
                if stores == super::plan::Stores::Plain || !super::stream::store_line(to, bytes) {
                    *to = *bytes;
                }
            }
        }
    }
}

/// [`zip`] on registers.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn zip_m128<const N: usize>(a: safe_arch::m128i, b: safe_arch::m128i) -> (safe_arch::m128i, safe_arch::m128i) {
    use safe_arch::{
        unpack_high_i8_m128i, unpack_high_i16_m128i, unpack_high_i32_m128i, unpack_high_i64_m128i, unpack_low_i8_m128i,
        unpack_low_i16_m128i, unpack_low_i32_m128i, unpack_low_i64_m128i,
    };
    match N {
        1 => (unpack_low_i8_m128i(a, b), unpack_high_i8_m128i(a, b)),
        2 => (unpack_low_i16_m128i(a, b), unpack_high_i16_m128i(a, b)),
        4 => (unpack_low_i32_m128i(a, b), unpack_high_i32_m128i(a, b)),
        _ => (unpack_low_i64_m128i(a, b), unpack_high_i64_m128i(a, b)),
    }
}

/// How far along each destination row [`deinterleave_runs`] asks for the lines it will store
/// normally (ordinary stores asked for, or rows off a line that [`RowLines`] does not take),
/// when it writes more than [`ASKED_ROWS`] rows side by side: 512 bytes, four
/// `T(32,128)(4,1)` tiles of `s8` on (issue 36: `s8[8192,8192]` out of those tiles into a
/// destination 16 bytes past a line, stored normally, one program, five timings each,
/// 0.52–0.57× memcpy without, 0.61–0.86 with; 384 and 768 bytes measured the same, 1 KiB no
/// better in two timings).
const DST_AHEAD: usize = 512;

/// The most destination rows side by side that [`deinterleave_runs`] leaves the hardware's
/// prefetchers to read for its ordinary stores: with 8 or 16 rows asking [`DST_AHEAD`] on was
/// slower or no faster (`s8` `T(16,128)(4,1)` off a line 0.72–0.74 → 0.63–0.69, `s8`
/// `T(8,128)(4,1)` 0.70–0.78 → 0.59–0.76, bf16 `T(16,128)(2,1)` 0.83–0.89 → 0.78–0.97), with 32
/// faster. Each store of a line the caches do not hold first reads it (a read for ownership);
/// many rows written a little at a time are more streams than the prefetchers follow, so those
/// reads wait on memory one by one.
const ASKED_ROWS: usize = 16;

/// Deinterleaves `S = rows.len()` rows of `N`-byte elements, streamed where `stores` asks,
/// `count` times (rows that start 16, 32 or 48 bytes past a line stream through `lines`, whose
/// carries the next call along the same rows continues, when every row starts as far past one
/// and the `S · count` rows have a slot each; the caller writes what `lines` keeps with
/// [`RowLines::finish`]): for repeat `k < count`, `src[from + k · src_step..]` holds `groups` groups of
/// `S` lines, each the rows' next `LINE / N` columns interleaved element by element (element `i`
/// of a group, read as one sequence, belongs to row `i mod S` at column `i div S`); group `t`'s
/// line of row `r` goes to `dst[rows[r] + k · dst_step + t · LINE..][..LINE]`. The bf16 `(2,1)`
/// sub-tile (pairs of rows) read out into rows is `S = 2`, `N = 2`; NHWC → NCHW with 16 `u8`
/// channels `S = 16`, `N = 1`. Returns `false`, having written nothing, unless `S` is a power of
/// two with `2 ≤ S ≤ 16`, the elements are narrower than a lane (`N < 16`), and every line read
/// and written is inside its buffer: one call for a whole axis of deinterleaves (a tile's `(2,1)`
/// sub-tiles), each repeat's lines checked once. [`unzip`]'s `log2(16 / N)` rounds of
/// [`shuffle`] deinterleave `S` lanes whatever `S · N` (until 2026-12-01 only rows that fit one
/// lane went through the registers, and those of 8 or more rows were gathered through memory:
/// NHWC → NCHW with 8 `u8` channels 0.23–0.27 of memcpy, 0.79–1.04 now; `docs/relayout.md`,
/// "Speed").
pub(crate) fn deinterleave_runs<const N: usize>(
    (src, from, groups): (&[u8], usize, usize),
    rows: &[usize],
    dst: &mut [u8],
    (count, src_step, dst_step): (usize, usize, usize),
    (stores, lines): (super::plan::Stores, &mut RowLines),
) -> bool {
    // `r < S` (the array's length), `S · LINE` a small constant, `t · LINE` below the checked
    // `groups · LINE` and `k · step` below the checked last repeat's: no index is out of bounds
    // and nothing overflows (a line asked for ahead lies at most `DST_AHEAD + LINE` bytes past
    // the checked end, an address `prefetch` only asks for when it is inside `dst`).
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    fn runs<const N: usize, const S: usize>(
        (src, from, groups): (&[u8], usize, usize),
        rows: &[usize],
        dst: &mut [u8],
        (count, src_step, dst_step): (usize, usize, usize),
        (stores, lines): (super::plan::Stores, &mut RowLines),
    ) -> bool {
        let Ok(rows) = <&[usize; S]>::try_from(rows) else { return false };
        let Some(len) = groups.checked_mul(LINE) else { return false };
        let Some(run) = len.checked_mul(S) else { return false };
        let Some(last) = count.checked_sub(1) else { return true };
        let (Some(src_last), Some(dst_last)) = (last.checked_mul(src_step), last.checked_mul(dst_step)) else {
            return false;
        };
        let reads = from.checked_add(src_last).and_then(|b| b.checked_add(run)).is_some_and(|end| end <= src.len());
        let writes = rows
            .iter()
            .all(|&r| r.checked_add(dst_last).and_then(|b| b.checked_add(len)).is_some_and(|end| end <= dst.len()));
        if !reads || !writes {
            return false;
        }
        // Many rows stored normally: each row's lines `DST_AHEAD` bytes on are asked for first
        // (a separate instance, so that the others' loop stays as it was).
        let many = S * count > ASKED_ROWS;
        // Rows off a line: whole lines through the carries (`RowLines`) when every row of every
        // repeat starts as many lanes past one and each has a slot; else stored normally, asked
        // for ahead.
        let streams = stores != super::plan::Stores::Plain;
        let past = rows.iter().map(|&r| RowLines::lanes_past(dst, r)).reduce(|a, b| a.filter(|_| a == b));
        let carried = match past {
            Some(Some(past)) if streams && S * count <= super::lines::ROW_SLOTS && dst_step % LINE == 0 => {
                lines.begin(dst, past);
                Some(lines)
            }
            _ => None,
        };
        let off = rows.iter().any(|&r| past_line(&dst[r..]) != Some(0));
        let ahead = many && (!streams || off && carried.is_none());
        // Each way of storing its own instance, so that the others' loop stays as it was.
        let through_lines = carried.is_some();
        let args = ((src, from, run, groups), rows, dst, (count, src_step, dst_step), (stores, carried));
        match (ahead, through_lines) {
            (true, _) => repeats::<N, S, true, false>(args.0, args.1, args.2, args.3, args.4),
            (false, true) => repeats::<N, S, false, true>(args.0, args.1, args.2, args.3, args.4),
            (false, false) => repeats::<N, S, false, false>(args.0, args.1, args.2, args.3, args.4),
        }
    }
    // The indices as in `runs`, which checked them (`run = S · groups · LINE`).
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    #[inline]
    fn repeats<const N: usize, const S: usize, const AHEAD: bool, const CARRY: bool>(
        (src, from, run, groups): (&[u8], usize, usize, usize),
        rows: &[usize; S],
        dst: &mut [u8],
        (count, src_step, dst_step): (usize, usize, usize),
        (stores, mut carried): (super::plan::Stores, Option<&mut RowLines>),
    ) -> bool {
        for k in 0..count {
            let (source, out) = (&src[from + k * src_step..][..run], k * dst_step);
            if AHEAD {
                for &r in rows {
                    for q in 0..=groups {
                        prefetch(dst, r + out + DST_AHEAD + q * LINE, Level::First);
                    }
                }
            }
            for (t, group) in source.chunks_exact(S * LINE).enumerate() {
                let Ok(group_lines) = bytemuck::try_cast_slice::<u8, [u8; LINE]>(group) else { return false };
                let Ok(group_lines) = <&[[u8; LINE]; S]>::try_from(group_lines) else { return false };
                // Rows off a line: the group's lines first, then each through the carries,
                // which stream the lines each piece completes with its row's next. Not from
                // inside `unzip`: a call there (`RowLines::put` is not always inlined) makes the
                // compiler keep the lanes in flight on the stack across it (no vector register
                // survives a call), which took `s8` `T(8,128)(4,1)` → row-major into a numpy
                // array (the Python extension's build) from 8.6 to 16.8 ms per 64 MiB.
                if CARRY && let Some(lines) = carried.as_deref_mut() {
                    let mut pieces = [[0u8; LINE]; S];
                    unzip::<N, S>(group_lines, |r, line| pieces[r] = *line);
                    for (r, piece) in pieces.iter().enumerate() {
                        lines.put(dst, k * S + r, rows[r] + out + t * LINE, piece);
                    }
                    continue;
                }
                unzip::<N, S>(group_lines, |r, line| {
                    let at = rows[r] + out + t * LINE;
                    if let Some(to) = dst.get_mut(at..at + LINE).and_then(<[u8]>::first_chunk_mut::<LINE>) {
                        // Streamed only where it is a whole cache line: one 16 bytes past a line
                        // would stream two partial lines, each completed by another call
                        // (docs/relayout.md rule 10: bf16 `(2,1)` into a `Vec` 0.42–0.48×
                        // memcpy so, 0.77–0.90 stored normally).
                        let whole = to.as_ptr().addr() % LINE == 0;
                        if stores == super::plan::Stores::Plain || !whole || !super::stream::store_line(to, line) {
                            *to = *line;
                        }
                    }
                });
            }
        }
        true
    }
    if N >= LANE {
        return false;
    }
    let args = ((src, from, groups), rows, dst, (count, src_step, dst_step), (stores, lines));
    match rows.len() {
        2 => runs::<N, 2>(args.0, args.1, args.2, args.3, args.4),
        4 => runs::<N, 4>(args.0, args.1, args.2, args.3, args.4),
        8 => runs::<N, 8>(args.0, args.1, args.2, args.3, args.4),
        16 => runs::<N, 16>(args.0, args.1, args.2, args.3, args.4),
        _ => false,
    }
}

/// How far ahead [`interleave_runs`] asks for each source row, in runs of its length: 512 bytes
/// for `u8` `T(32,128)(4,1)`'s 128-byte runs, 1 KiB for bf16 `T(8,128)(2,1)`'s 256 (issue 36:
/// row-major → those tiles went from 0.5–0.7× memcpy to 0.9–1.0×; 2 and 8 runs ahead were slower).
/// Asked into the second-level cache ([`Level::Second`]): on the Zen 4 machine the interleaves
/// of 8 to 32 rows took 7–47 % less time so than with `prefetcht0` (one program, the two
/// alternated inside each process, 2026-11-30: `s8` row-major → `T(32,128)(4,1)` 10.1–14.6
/// ms → 5.5–10.0 per 64 MiB, bf16 → `T(16,128)(2,1)` 7.0–8.4 → 4.5–6.4; 8 runs ahead into the
/// second level measured between the two).
const AHEAD_RUNS: usize = 4;

/// Interleaves rows of `N`-byte elements, the inverse of [`deinterleave_runs`] (element `c · S + r`
/// of the interleaved sequence is column `c` of row `r`), over whole groups of lines, streamed
/// where `stores` asks, `count` times: for repeat `k < count` and group `t < groups`, the lines at
/// `bases[j] + k · src_step + t · LINE` of `src` (`S = bases.len()` rows) interleaved into the `S`
/// lines at `out + k · dst_step + t · S · LINE` of `dst`. Returns `false`, having written
/// nothing, unless `S` is a power of two with `2 ≤ S ≤ 16`, the elements are narrower than a lane
/// (`N < 16`), and every line read and written is inside its buffer: the interleaving
/// transposes' hot loop (row-major → bf16 `(2,1)` tiles, NCHW → NHWC with 2 to 16 channels), one
/// call for a whole axis of (de)interleaves, each repeat's lines checked once. The `S` rows need
/// not fit a lane: [`zip_rows`]' `log2(S)` rounds of [`shuffle`] rotate the index bits of `S`
/// lanes whatever their width (8 `f32` rows: 0.57–0.59 of memcpy element by element until
/// 2026-12-01, 0.99–1.01 so; `docs/relayout.md`, "Speed").
pub(crate) fn interleave_runs<const N: usize>(
    src: &[u8],
    (bases, groups): (&[usize], usize),
    (dst, out): (&mut [u8], usize),
    (count, src_step, dst_step): (usize, usize, usize),
    stores: super::plan::Stores,
) -> bool {
    // `j < S` (the array's length), `S · LINE` a small constant, `t · LINE` below the checked
    // `groups · LINE` and `k · step` below the checked last repeat's: no index is out of bounds
    // and nothing overflows.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    fn runs<const N: usize, const S: usize>(
        src: &[u8],
        (bases, groups): (&[usize], usize),
        (dst, out): (&mut [u8], usize),
        (count, src_step, dst_step): (usize, usize, usize),
        stores: super::plan::Stores,
    ) -> bool {
        let Ok(bases) = <&[usize; S]>::try_from(bases) else { return false };
        let Some(len) = groups.checked_mul(LINE) else { return false };
        let Some(last) = count.checked_sub(1) else { return true };
        let (Some(src_last), Some(dst_last)) = (last.checked_mul(src_step), last.checked_mul(dst_step)) else {
            return false;
        };
        let reads = bases
            .iter()
            .all(|&b| b.checked_add(src_last).and_then(|b| b.checked_add(len)).is_some_and(|end| end <= src.len()));
        let writes = S
            .checked_mul(len)
            .and_then(|total| out.checked_add(dst_last)?.checked_add(total))
            .is_some_and(|end| end <= dst.len());
        if !reads || !writes {
            return false;
        }
        for k in 0..count {
            // Each row's run `AHEAD_RUNS` runs on is asked for now (`S` rows read a few lines at
            // a time are more streams than the hardware's prefetchers follow).
            for &base in bases {
                let next = base + k * src_step + AHEAD_RUNS * len;
                for t in 0..groups {
                    prefetch(src, next + t * LINE, Level::Second);
                }
            }
            let rows: [&[u8]; S] = core::array::from_fn(|j| &src[bases[j] + k * src_step..][..len]);
            let at = out + k * dst_step;
            for (t, group) in dst[at..at + S * len].chunks_exact_mut(S * LINE).enumerate() {
                let lines: [&[u8; LINE]; S] =
                    core::array::from_fn(|j| rows[j][t * LINE..].first_chunk::<LINE>().unwrap_or(&ZERO_LINE));
                let mut outs = group.chunks_exact_mut(LINE);
                zip_rows::<N, S>(&lines, |_, line| {
                    if let Some(to) = outs.next().and_then(<[u8]>::first_chunk_mut::<LINE>) {
                        if stores == super::plan::Stores::Plain || !super::stream::store_line(to, line) {
                            *to = *line;
                        }
                    }
                });
            }
        }
        true
    }
    if N >= LANE {
        return false;
    }
    let args = (src, (bases, groups), (dst, out), (count, src_step, dst_step), stores);
    match bases.len() {
        2 => runs::<N, 2>(args.0, args.1, args.2, args.3, args.4),
        4 => runs::<N, 4>(args.0, args.1, args.2, args.3, args.4),
        8 => runs::<N, 8>(args.0, args.1, args.2, args.3, args.4),
        16 => runs::<N, 16>(args.0, args.1, args.2, args.3, args.4),
        _ => false,
    }
}

/// [`deinterleave_runs`]' group of `S` rows: lane group `g` (source lanes `g·S .. g·S + S`, contiguous) is
/// shuffled `log2(B)` rounds, after which its lane `r` holds `B` consecutive columns of row `r`:
/// lane `g` of output line `r`.
#[inline]
// `g < BLOCKS`, `t, r < S`, and `src` holds `S · BLOCKS` lanes: every index is in bounds.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn unzip<const N: usize, const S: usize>(src: &[[u8; LINE]; S], mut emit: impl FnMut(usize, &[u8; LINE])) {
    let flat: &[Lane] = bytemuck::cast_slice(src.as_slice());
    // Up to 4 rows (16 lanes, the registers' number) every group is shuffled first and each
    // line gathered from them. With more, the groups held so were copied through memory
    // (`memmove`): each group's lane `r` goes straight to its place in line `r` instead (NHWC →
    // NCHW with 8 or 16 `u8` channels: 0.20–0.27 of memcpy gathered, 0.67–1.04 so; the `s8`
    // `(4,1)` tile's 4 rows measured 12 % slower so than gathered; `docs/relayout.md`, "Speed").
    if S <= 4 {
        let groups: [[Lane; S]; BLOCKS] = core::array::from_fn(|g| {
            let mut lanes: [Lane; S] = core::array::from_fn(|t| flat[g * S + t]);
            shuffle::<N, S>(&mut lanes, element_bits::<N>());
            lanes
        });
        for r in 0..S {
            let line: [Lane; BLOCKS] = groups.map(|lanes| lanes[r]);
            emit(r, bytemuck::cast_ref(&line));
        }
        return;
    }
    let mut out = [[[0u8; LANE]; BLOCKS]; S];
    for g in 0..BLOCKS {
        let mut lanes: [Lane; S] = core::array::from_fn(|t| flat[g * S + t]);
        shuffle::<N, S>(&mut lanes, element_bits::<N>());
        for (line, lane) in out.iter_mut().zip(lanes) {
            line[g] = lane;
        }
    }
    for (r, line) in out.iter().enumerate() {
        emit(r, bytemuck::cast_ref(line));
    }
}

/// [`interleave_runs`]' group of `S` rows: lane `g` of every row (`B` columns of each) is
/// shuffled `log2(S)` rounds, after which the `S` lanes hold those columns interleaved: lanes
/// `g·S .. g·S + S` of the output, read as one sequence.
#[inline]
// `g < BLOCKS`, `r < S`, `k = q·BLOCKS + b < S · BLOCKS`: every index is in bounds.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn zip_rows<const N: usize, const S: usize>(rows: &[&[u8; LINE]; S], mut emit: impl FnMut(usize, &[u8; LINE])) {
    // At least a line's lanes per group: group `g` is output lines `g · S/BLOCKS ..`, emitted
    // as each group is shuffled (16 rows' 64 lanes held at once were copied through memory).
    if S >= BLOCKS {
        for g in 0..BLOCKS {
            let mut lanes: [Lane; S] =
                core::array::from_fn(|r| bytemuck::cast_ref::<[u8; LINE], [Lane; BLOCKS]>(rows[r])[g]);
            shuffle::<N, S>(&mut lanes, S.trailing_zeros());
            for (i, line) in lanes.chunks_exact(BLOCKS).enumerate() {
                if let Ok(line) = <&[Lane; BLOCKS]>::try_from(line) {
                    emit(g * (S / BLOCKS) + i, bytemuck::cast_ref(line));
                }
            }
        }
        return;
    }
    let groups: [[Lane; S]; BLOCKS] = core::array::from_fn(|g| {
        let mut lanes: [Lane; S] =
            core::array::from_fn(|r| bytemuck::cast_ref::<[u8; LINE], [Lane; BLOCKS]>(rows[r])[g]);
        shuffle::<N, S>(&mut lanes, S.trailing_zeros());
        lanes
    });
    for q in 0..S {
        let line: [Lane; BLOCKS] = core::array::from_fn(|b| {
            let k = q * BLOCKS + b;
            groups[k / S][k % S]
        });
        emit(q, bytemuck::cast_ref(&line));
    }
}

#[cfg(test)]
mod tests {
    use super::{LINE, deinterleave_runs, interleave_runs, transpose};
    use crate::relayout::lines::RowLines;
    use crate::relayout::plan::Stores;
    use proptest::prelude::*;

    /// The definition, element by element.
    fn reference<const N: usize, const M: usize>(runs: &[[u8; LINE]; M]) -> [[u8; LINE]; M] {
        let mut out = [[0u8; LINE]; M];
        for (i, line) in out.iter_mut().enumerate() {
            for (j, run) in runs.iter().enumerate() {
                line[j * N..(j + 1) * N].copy_from_slice(&run[i * N..(i + 1) * N]);
            }
        }
        out
    }

    fn check<const N: usize, const M: usize, const B: usize>(bytes: &[u8]) {
        let mut runs = [[0u8; LINE]; M];
        for (run, chunk) in runs.iter_mut().zip(bytes.chunks_exact(LINE)) {
            run.copy_from_slice(chunk);
        }
        let mut out = [[0xA5u8; LINE]; M];
        let refs: [&[u8; LINE]; M] = core::array::from_fn(|j| &runs[j]);
        let mut next = 0;
        transpose::<N, M, B>(&refs, |i, line| {
            assert_eq!(i, next, "lines in order");
            next += 1;
            out[i] = *line;
        });
        assert_eq!(next, M);
        assert_eq!(out, reference::<N, M>(&runs), "width {N}");
        // The register path, into lines `LINE + 16` bytes apart past an odd start (streamed
        // where 16-byte aligned, else ordinary stores), the bytes between left alone.
        #[cfg(target_arch = "x86_64")]
        for stores in [super::super::plan::Stores::Plain, super::super::plan::Stores::Streaming] {
            let mut dst = vec![0x5Au8; 3 + M * (LINE + 16)];
            super::transpose_lanes::<N, M, B>(&refs, &mut dst, |i| Some(3 + i * (LINE + 16)), stores, |_, _, _| {});
            super::super::stream::fence();
            for (i, line) in reference::<N, M>(&runs).iter().enumerate() {
                let at = 3 + i * (LINE + 16);
                assert_eq!(&dst[at..at + LINE], line, "width {N}, line {i}");
                assert!(dst[at + LINE..at + LINE + 16].iter().all(|&b| b == 0x5A), "width {N}, after line {i}");
            }
            let mut aligned = vec![0u128; M * LINE / 16];
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut aligned);
            super::transpose_lanes::<N, M, B>(&refs, bytes, |i| Some(i * LINE), stores, |_, _, _| {});
            super::super::stream::fence();
            assert_eq!(bytes, reference::<N, M>(&runs).as_flattened(), "width {N}, aligned");
        }
    }

    /// Row `r` of `S` rows interleaved element by element in `flat`: its element `c` is element
    /// `c · S + r` of `flat`.
    fn row_of<const N: usize>(flat: &[u8], rows: usize, r: usize) -> Vec<u8> {
        flat.chunks_exact(N).skip(r).step_by(rows).flatten().copied().collect()
    }

    /// Deinterleaves `S = lines.len() / LINE` rows and interleaves them back, both checked
    /// element by element against [`row_of`]; or, for `S` the registers do not take (not a power
    /// of two, or 16-byte elements), checks that both decline without emitting.
    fn check_rows<const N: usize>(bytes: &[u8], rows: usize) {
        let lines: Vec<[u8; LINE]> = bytes.chunks_exact(LINE).take(rows).map(|c| c.try_into().unwrap()).collect();
        let flat: Vec<u8> = lines.iter().flatten().copied().collect();
        let fits = rows.is_power_of_two() && rows >= 2 && N < 16;
        // Out into rows `LINE + 16` bytes apart, 3 bytes past a 16-byte boundary (ordinary
        // stores), and `LINE` apart on one (streamed where the target streams).
        let mut out = vec![[0xA5u8; LINE]; rows];
        for (stores, offset, gap) in [(Stores::Plain, 3, 16), (Stores::Streaming, 0, 0)] {
            let mut storage = vec![0u128; (rows * (LINE + gap) + 32) / 16];
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
            bytes.fill(0x5A);
            let starts: Vec<usize> = (0..rows).map(|r| offset + r * (LINE + gap)).collect();
            let mut lines = RowLines::new();
            let moved = deinterleave_runs::<N>((&flat, 0, 1), &starts, bytes, (1, 0, 0), (stores, &mut lines));
            lines.finish(bytes);
            crate::relayout::stream::fence();
            assert_eq!(moved, fits, "width {N}, {rows} rows");
            if !fits {
                assert!(bytes.iter().all(|&b| b == 0x5A), "declined, yet wrote");
                continue;
            }
            for (r, &start) in starts.iter().enumerate() {
                out[r].copy_from_slice(&bytes[start..start + LINE]);
                assert!(bytes[start + LINE..start + LINE + gap].iter().all(|&b| b == 0x5A), "wrote between rows");
            }
        }
        let bases: Vec<usize> = (0..rows).map(|r| r * LINE).collect();
        if !fits {
            let mut untouched = vec![0x5Au8; rows * LINE];
            assert!(!interleave_runs::<N>(&flat, (&bases, 1), (&mut untouched, 0), (1, 0, 0), Stores::Plain));
            assert!(untouched.iter().all(|&b| b == 0x5A), "declined, yet wrote");
            return;
        }
        for (r, line) in out.iter().enumerate() {
            assert_eq!(line.to_vec(), row_of::<N>(&flat, rows, r), "width {N}, {rows} rows, row {r}");
        }
        // Back, from the rows laid out one after another (the definition's, `row_of`), into a
        // destination 3 bytes past a 16-byte boundary (ordinary stores) and on one (streamed
        // where the target streams).
        let deinterleaved: Vec<u8> = (0..rows).flat_map(|r| row_of::<N>(&flat, rows, r)).collect();
        for (stores, offset) in [(Stores::Plain, 3), (Stores::Streaming, 0), (Stores::Streaming, 3)] {
            let mut storage = vec![0u128; (rows * LINE + 32) / 16];
            let back: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
            back.fill(0x5A);
            assert!(interleave_runs::<N>(&deinterleaved, (&bases, 1), (&mut *back, offset), (1, 0, 0), stores));
            crate::relayout::stream::fence();
            assert_eq!(
                &back[offset..offset + rows * LINE],
                &flat[..],
                "interleave undoes deinterleave: width {N}, {rows} rows"
            );
            assert!(back[..offset].iter().chain(&back[offset + rows * LINE..]).all(|&b| b == 0x5A), "wrote outside");
        }
    }

    /// Under Miri (the safe path's check, CONTRIBUTING.md) a few cases: each is thousands of
    /// interpreted shuffles.
    fn config() -> ProptestConfig {
        ProptestConfig { cases: if cfg!(miri) { 8 } else { 256 }, ..ProptestConfig::default() }
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn rows_deinterleave_and_interleave_as_defined(
            bytes in proptest::collection::vec(any::<u8>(), 16 * 64),
            rows in 1usize..=16,
        ) {
            check_rows::<1>(&bytes, rows);
            check_rows::<2>(&bytes, rows);
            check_rows::<4>(&bytes, rows);
            check_rows::<8>(&bytes, rows);
            check_rows::<16>(&bytes, rows);
        }

        /// A tile's groups of 4 rows deinterleaved at once (`count` repeats, `4 · count` rows side
        /// by side: more than `ASKED_ROWS` asks for each row's lines ahead), into rows `offset`
        /// bytes past a line whose last one ends the destination, with either stores; in two
        /// calls, the second continuing the first's rows (the next tile along them) with the same
        /// carries (`RowLines`), which rows a whole number of lines apart at 16, 32 or 48 bytes
        /// past a line stream through.
        #[test]
        fn many_rows_side_by_side_deinterleave_as_defined(
            bytes in proptest::collection::vec(any::<u8>(), 8 * 4 * 4 * LINE),
            count in 1usize..=8,
            offset in prop_oneof![Just(16usize), Just(32), Just(48), 0usize..64],
            (groups, first) in (1usize..=4).prop_flat_map(|g| (Just(g), 0..=g)),
            gap in prop_oneof![Just(0usize), 0usize..3],
        ) {
            let span = 4;
            let run = span * groups * LINE;
            let row = groups * LINE + gap * 16;
            for stores in [Stores::Plain, Stores::Streaming] {
                let mut storage = vec![0u128; (offset + span * count * row).div_ceil(16)];
                let dst: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
                let end = offset + span * count * row;
                let dst = &mut dst[..end];
                dst.fill(0x5A);
                let mut lines = RowLines::new();
                for (from, groups) in [(0, first), (first, groups - first)] {
                    let starts: Vec<usize> = (0..span).map(|r| offset + r * row + from * LINE).collect();
                    let source = (&bytes[..], from * span * LINE, groups);
                    let moved = deinterleave_runs::<1>(source, &starts, dst, (count, run, span * row), (stores, &mut lines));
                    prop_assert!(moved);
                }
                lines.finish(dst);
                crate::relayout::stream::fence();
                for k in 0..count {
                    for r in 0..span {
                        let at = offset + (k * span + r) * row;
                        let expected = row_of::<1>(&bytes[k * run..(k + 1) * run], span, r);
                        prop_assert_eq!(&dst[at..at + groups * LINE], &expected[..], "{:?}, repeat {}, row {}", stores, k, r);
                        prop_assert!(dst[at + groups * LINE..at + row].iter().all(|&b| b == 0x5A), "wrote between rows");
                    }
                }
                prop_assert!(dst[..offset].iter().all(|&b| b == 0x5A), "wrote before the rows");
            }
        }

        #[test]
        fn every_width_transposes_as_defined(bytes in proptest::collection::vec(any::<u8>(), 64 * 64)) {
            check::<1, 64, 16>(&bytes);
            check::<2, 32, 8>(&bytes);
            check::<4, 16, 4>(&bytes);
            check::<8, 8, 2>(&bytes);
            check::<16, 4, 1>(&bytes);
        }
    }
}
