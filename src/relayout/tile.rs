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

use super::stream::LINE;

/// Bytes of one lane (an SSE2 register).
const LANE: usize = 16;

/// Lanes per line: a tile has this many blocks per side.
const BLOCKS: usize = LINE / LANE;

/// A lane.
type Lane = [u8; LANE];

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

/// Transposes one block in place: lane `r` holds `B` elements of run `r`; afterwards lane `c`
/// holds element `c` of every run.
#[inline]
// `k < B / 2` and `B / 2 + k < B`, `2k + 1 < B`: every index is below the array's length `B`
// (a constant once monomorphized; the loops unroll completely).
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn block<const N: usize, const B: usize>(lanes: &mut [Lane; B]) {
    let mut round = 1;
    while round < B {
        let before = *lanes;
        for k in 0..B / 2 {
            (lanes[2 * k], lanes[2 * k + 1]) = zip::<N>(before[k], before[B / 2 + k]);
        }
        round *= 2;
    }
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

#[cfg(test)]
mod tests {
    use super::{LINE, transpose};
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
    }

    proptest! {
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
