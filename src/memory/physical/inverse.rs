//! Inverse: slot → multi-index (or padding). One variant per form, each carrying exactly what
//! its decoding reads.

use std::sync::Arc;

use crate::memory::divisor::Divisor;
use crate::memory::extent::{to_i64, to_u64};

use super::general::General;

/// One digit of a slot, most minor first, and where it goes in the multi-index.
///
/// Digit `k` is `q_k − extent_k · q_{k+1}` with `q_k = slot / Π_{j<k} extent_j`: every quotient
/// comes straight from the slot (`above` divides by `Π_{j≤k} extent_j`), so the digits do not
/// wait on one another as a chain of divisions would. Exact because
/// `⌊⌊s/a⌋/b⌋ = ⌊s/(a·b)⌋` and [`Divisor`] is exact below 2^63, which every slot is
/// (invariant 1). The digit lands branch-free:
/// `index[dim] = (index[dim] & keep) + digit × weight`.
#[derive(Debug, Clone, Copy)]
pub(super) struct SlotDigit {
    pub(super) above: Divisor,
    pub(super) extent: u64,
    pub(super) dim: usize,
    pub(super) weight: u64,
    /// 0 for the first digit of a dimension (it sets the entry, so nothing clears the index
    /// beforehand), all ones for the later ones (they add).
    pub(super) keep: i64,
    /// All ones for a rank-extension digit (an element has 0 there; `weight` is 0), else 0.
    pub(super) phantom: u64,
}

impl SlotDigit {
    /// Whether the digit is a whole index entry: weight 1, the only digit of its dimension, not
    /// a rank extension.
    pub(super) fn is_whole(&self) -> bool {
        self.weight == 1 && self.keep == 0 && self.phantom == 0
    }
}

/// How a slot below `raw_slots` becomes an index. `digits` are the slot's digits, most minor
/// first, without the extent-1 ones (always 0); `unwritten` are the dimensions no digit writes
/// (every digit of theirs has extent 1), which are 0 in every element.
#[derive(Debug, Clone)]
pub(super) enum Inverse {
    /// Untiled and unpadded, every dimension has a digit: every slot is an element, decoded
    /// straight into the index.
    Direct { digits: Box<[SlotDigit]> },
    /// Every digit a whole entry and every slot an element, with some dimensions of size 1.
    Whole { digits: Box<[SlotDigit]>, unwritten: Box<[usize]> },
    /// Every digit a whole entry, but the stored extents exceed the dimensions (legacy padding,
    /// or tiles wider than the array): a decoded index may lie in the padding.
    Padded { digits: Box<[SlotDigit]>, unwritten: Box<[usize]> },
    /// Tiles as mixed-radix digits: digits add into their entries with weights, rank-extension
    /// digits must be 0, and a decoded index may lie in the padding.
    Mixed { digits: Box<[SlotDigit]>, unwritten: Box<[usize]> },
    /// Anything else: replays the tiles backwards.
    General(Arc<General>),
}

impl Inverse {
    /// Decodes `n < raw_slots` into `out` (`out.len()` is the rank); `false` for a padding slot
    /// (`out` is then unspecified). The direct form inline, the others out of line.
    #[inline]
    pub(super) fn index_of(&self, n: u64, out: &mut [i64], bounds: &[u64]) -> bool {
        match self {
            Self::Direct { digits } => {
                decode::<true>(digits, n, out);
                true
            }
            _ => self.index_of_out_of_line(n, out, bounds),
        }
    }

    #[inline(never)]
    fn index_of_out_of_line(&self, n: u64, out: &mut [i64], bounds: &[u64]) -> bool {
        let in_bounds = |out: &[i64]| out.iter().zip(bounds).all(|(&i, &b)| to_u64(i) < b);
        match self {
            Self::Direct { digits } => {
                decode::<true>(digits, n, out);
                true
            }
            Self::Whole { digits, unwritten } => {
                zero(unwritten, out);
                decode::<true>(digits, n, out);
                true
            }
            Self::Padded { digits, unwritten } => {
                zero(unwritten, out);
                decode::<true>(digits, n, out);
                in_bounds(out)
            }
            Self::Mixed { digits, unwritten } => {
                zero(unwritten, out);
                decode::<false>(digits, n, out) == 0 && in_bounds(out)
            }
            Self::General(general) => general.index_of(n, out),
        }
    }
}

fn zero(dimensions: &[usize], out: &mut [i64]) {
    for &d in dimensions {
        if let Some(entry) = out.get_mut(d) {
            *entry = 0;
        }
    }
}

/// Writes the slot digits of `n < raw_slots` into the index; returns the non-zero bits of
/// rank-extension digits (0 for an element). `WHOLE`: every digit is a whole entry of its own
/// dimension ([`SlotDigit::is_whole`]).
#[inline]
// `n < raw_slots ≤ i64::MAX` (invariant 1): `Divisor::div` is exact, so `above` is
// `below / extent` and `below − above · extent` is the remainder, no overflow, no underflow.
#[allow(clippy::arithmetic_side_effects)]
fn decode<const WHOLE: bool>(digits: &[SlotDigit], n: u64, out: &mut [i64]) -> u64 {
    let put = |out: &mut [i64], digit: &SlotDigit, value: u64| {
        if WHOLE {
            if let Some(entry) = out.get_mut(digit.dim) {
                *entry = to_i64(value);
            }
            return 0;
        }
        if let Some(entry) = out.get_mut(digit.dim) {
            // A sum beyond i64::MAX wraps negative and fails the caller's bounds check.
            *entry = (*entry & digit.keep).wrapping_add(to_i64(value.wrapping_mul(digit.weight)));
        }
        value & digit.phantom
    };
    let Some((top, lower)) = digits.split_last() else { return 0 };
    let (mut below, mut stray) = (n, 0);
    for digit in lower {
        let above = digit.above.div(n);
        stray |= put(out, digit, below - above * digit.extent);
        below = above;
    }
    // n < raw_slots: what is left is below the top extent.
    stray | put(out, top, below)
}
