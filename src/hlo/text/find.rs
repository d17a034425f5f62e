//! Finding the next byte of a small set in a line, 16 bytes at a time: the statement cut's scan
//! (`source.rs`) stops at a bracket, quote or separator every few bytes of MLIR text, and a
//! byte-at-a-time table lookup between them cost more than the rest of the reader.
//!
//! A [`Finder`] keeps the last block's mask (one bit per byte of the set), so the stops within
//! one block cost a shift and a `trailing_zeros`, not another scan. On x86-64 the mask is one
//! `pcmpeqb` per byte of the set and `pmovmskb` (SSE2, the x86-64 baseline); elsewhere it is
//! built from the byte table, which gives the same bits.

/// The bytes of a block.
const BLOCK: usize = 16;

/// The bit of each byte of `block` that is one of `set` (`class` is the same set as a table).
#[cfg(target_arch = "x86_64")]
#[inline]
fn mask<const N: usize>(block: [u8; BLOCK], set: &[u8; N], _class: &[bool; 256]) -> u32 {
    use safe_arch::{cmp_eq_mask_i8_m128i, m128i, move_mask_i8_m128i, set_splat_i8_m128i};
    let bytes = m128i::from(block);
    let mut any = m128i::default();
    for &b in set {
        any |= cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(i8::from_ne_bytes([b])));
    }
    // The mask has 16 bits: the sign bits of the 16 bytes.
    u32::from_ne_bytes(move_mask_i8_m128i(any).to_ne_bytes())
}

/// The bit of each byte of `block` that is in `class`.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn mask<const N: usize>(block: [u8; BLOCK], _set: &[u8; N], class: &[bool; 256]) -> u32 {
    block
        .iter()
        .enumerate()
        .fold(0u32, |mask, (i, &b)| if super::cursor::is_in(class, b) { mask | (1 << i) } else { mask })
}

/// Finds the bytes of one set in one line, remembering the last block's mask.
#[derive(Debug)]
pub(super) struct Finder<'a, const N: usize> {
    line: &'a [u8],
    set: &'a [u8; N],
    class: &'a [bool; 256],
    /// Where the last block starts, and its mask (`start == usize::MAX`: none yet).
    start: usize,
    bits: u32,
}

impl<'a, const N: usize> Finder<'a, N> {
    /// A finder of the bytes of `set` (`class`: the same bytes as a table) in `line`.
    pub(super) fn new(line: &'a [u8], set: &'a [u8; N], class: &'a [bool; 256]) -> Self {
        Self { line, set, class, start: usize::MAX, bits: 0 }
    }

    /// The offset of the first byte of the set at or after `from`.
    #[inline]
    pub(super) fn next(&mut self, from: usize) -> Option<usize> {
        let mut from = from;
        loop {
            if let Some(within) = from.checked_sub(self.start).filter(|&d| d < BLOCK) {
                let bits = self.bits >> within;
                if bits != 0 {
                    return from.checked_add(usize::try_from(bits.trailing_zeros()).unwrap_or(BLOCK));
                }
                from = self.start.saturating_add(BLOCK);
            }
            let Some(block) = from.checked_add(BLOCK).and_then(|end| self.line.get(from..end)) else {
                let rest = self.line.get(from..).unwrap_or_default();
                return rest
                    .iter()
                    .position(|&b| super::cursor::is_in(self.class, b))
                    .map(|at| from.saturating_add(at));
            };
            let mut bytes = [0u8; BLOCK];
            bytes.copy_from_slice(block);
            self.start = from;
            self.bits = mask(bytes, self.set, self.class);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::text::cursor::{byte_class, is_in};
    use proptest::prelude::*;

    const SET: [u8; 4] = *b"(<:\"";
    const CLASS: [bool; 256] = byte_class(&SET);

    proptest! {
        /// From any offset, the finder stops where a byte-by-byte search does.
        #[test]
        fn the_finder_stops_where_a_byte_search_does(line in "[a(<:\"é ]{0,70}", froms in proptest::collection::vec(0usize..80, 0..12)) {
            let bytes = line.as_bytes();
            let mut finder = Finder::new(bytes, &SET, &CLASS);
            let mut froms = froms;
            froms.sort_unstable();
            for from in froms {
                let expected = bytes.get(from..).and_then(|r| r.iter().position(|&b| is_in(&CLASS, b))).map(|at| from + at);
                prop_assert_eq!(finder.next(from), expected);
            }
        }
    }
}
