//! Destination runs written at any alignment, whole cache lines streamed (`docs/relayout.md`
//! rule 10, "Any destination alignment"): the shared store path of the kernels that write
//! contiguous destination runs in order: rows, and packed sub-byte elements.
//!
//! A kernel hands [`Lines::put`] a run of bytes and its destination offset. With ordinary stores
//! the run is copied. With streaming stores only whole, aligned cache lines are streamed: a run
//! that starts or ends inside a line leaves those bytes in a **carry** (one line of staging,
//! keyed by the offset the run ends at), and the run that continues there later completes the
//! line, which is then streamed whole. A destination 16 bytes past a line (where `malloc` and
//! numpy put large buffers) would otherwise store every 64-byte piece over two cache lines: two
//! partial lines, which a streaming store writes back piecemeal (issue 36: bf16
//! `T(8,128)(2,1)` → row-major at 0.21× memcpy on such buffers). Several runs may be in flight
//! at once (a deinterleave writes `e` rows, a walk's outer axis some more): up to [`SLOTS`]
//! carries; one that no run continues is written with ordinary stores when its slot is needed
//! and at [`Lines::finish`], which every kernel calls before it returns.
//!
//! The bytes written are those of a plain copy of every run, whatever the alignment and the
//! order of the runs: a line is streamed only when every one of its bytes came from the runs.

use super::plan::Stores;
use super::stream::{self, LINE};

/// Carries kept at once: enough for the rows of a `T(32,128)(4,1)` tile written side by side.
const SLOTS: usize = 32;

/// A free slot's `next`.
const FREE: usize = usize::MAX;

/// Bytes `from..to` of one destination line, not yet written; the line's byte `from` is the
/// destination's byte `base`, and the run that continues at `next = base + to − from` completes it.
#[derive(Debug, Clone, Copy)]
struct Carry {
    next: usize,
    base: usize,
    from: usize,
    /// When the slot was taken ([`Lines::take`]): the oldest carry is the one given up.
    stamp: u64,
    bytes: [u8; LINE],
}

const EMPTY: Carry = Carry { next: FREE, base: 0, from: 0, stamp: 0, bytes: [0; LINE] };

/// The carries of one kernel run (see the module's documentation).
pub(crate) struct Lines {
    stores: Stores,
    slots: [Carry; SLOTS],
    /// The slot [`find`](Self::find) tries first: the one after the last completed (runs in
    /// flight come round in order: a deinterleave's rows).
    hint: usize,
    /// The slot last given a run's end, tried second (one stream: its own next run).
    last: usize,
    /// The slot [`take`](Self::take) tries first: the last one freed.
    freed: usize,
    /// Slots taken so far.
    clock: u64,
}

impl Lines {
    /// No carries yet; `stores` says whether whole lines stream.
    pub(crate) fn new(stores: Stores) -> Self {
        Self { stores, slots: [EMPTY; SLOTS], hint: 0, last: 0, freed: 0, clock: 0 }
    }

    /// Writes `run` at `dst[at..]` (nothing when it does not fit: the plan never asks that).
    #[inline]
    pub(crate) fn put(&mut self, dst: &mut [u8], at: usize, run: &[u8]) {
        let Some(to) = dst.get_mut(at..at.wrapping_add(run.len())) else { return };
        // The run's position in its first line (`align_offset` may decline: then a plain copy).
        let ahead = to.as_ptr().align_offset(LINE);
        if self.stores == Stores::Plain || ahead > LINE {
            to.copy_from_slice(run);
            return;
        }
        let phase = LINE.wrapping_sub(ahead) % LINE;
        let (mut pos, mut rest) = (at, run);
        if phase != 0 {
            let (now, later) = rest.split_at(LINE.wrapping_sub(phase).min(rest.len()));
            self.head(dst, pos, phase, now);
            (pos, rest) = (pos.wrapping_add(now.len()), later);
        }
        // On a line boundary now: whole lines stream, the tail waits in a carry.
        let mut lines = rest.chunks_exact(LINE);
        for line in &mut lines {
            if let (Some(to), Ok(line)) = (line_at(dst, pos), <&[u8; LINE]>::try_from(line)) {
                if !stream::store_line(to, line) {
                    *to = *line;
                }
            }
            pos = pos.wrapping_add(LINE);
        }
        let tail = lines.remainder();
        if !tail.is_empty() {
            let slot = self.take(dst);
            if let Some(carry) = self.slots.get_mut(slot) {
                if let Some(into) = carry.bytes.get_mut(..tail.len()) {
                    into.copy_from_slice(tail);
                }
                (carry.next, carry.base, carry.from) = (pos.wrapping_add(tail.len()), pos, 0);
            }
            self.last = slot;
        }
    }

    /// The part of a run inside its first line, which it enters at byte `phase` (not 0):
    /// completes the carry that ends there, or starts one; a line completed from its first byte
    /// streams, any other reaching the line's end is written with ordinary stores.
    #[inline]
    fn head(&mut self, dst: &mut [u8], pos: usize, phase: usize, now: &[u8]) {
        let end = phase.wrapping_add(now.len());
        let slot = match self.find(pos) {
            Some(slot) => slot,
            None if end == LINE => {
                if let Some(to) = dst.get_mut(pos..pos.wrapping_add(now.len())) {
                    to.copy_from_slice(now);
                }
                return;
            }
            None => {
                let slot = self.take(dst);
                if let Some(carry) = self.slots.get_mut(slot) {
                    (carry.base, carry.from) = (pos, phase);
                }
                self.last = slot;
                slot
            }
        };
        let Some(carry) = self.slots.get_mut(slot) else { return };
        if let Some(into) = carry.bytes.get_mut(phase..end) {
            into.copy_from_slice(now);
        }
        if end == LINE {
            carry.next = FREE;
            write(dst, carry, LINE);
            self.freed = slot;
        } else {
            carry.next = pos.wrapping_add(now.len());
        }
    }

    /// The slot whose run continues at `pos`: the hint's, the last end's, else any.
    #[inline]
    fn find(&mut self, pos: usize) -> Option<usize> {
        let continues = |carries: &[Carry; SLOTS], k: usize| carries.get(k).is_some_and(|c| c.next == pos);
        let found = if continues(&self.slots, self.hint) {
            self.hint
        } else if continues(&self.slots, self.last) {
            self.last
        } else {
            (0..SLOTS).find(|&k| continues(&self.slots, k))?
        };
        self.hint = found.wrapping_add(1) % SLOTS;
        Some(found)
    }

    /// A free slot (the last freed, else any); when none is, the oldest, its carry written out
    /// (a run's last end that no run continues: a row's end whose next row was written first).
    #[inline]
    fn take(&mut self, dst: &mut [u8]) -> usize {
        let free = |carries: &[Carry; SLOTS], k: usize| carries.get(k).is_some_and(|c| c.next == FREE);
        let slot = if free(&self.slots, self.freed) {
            self.freed
        } else {
            (0..SLOTS).find(|&k| free(&self.slots, k)).unwrap_or_else(|| {
                (0..SLOTS).min_by_key(|&k| self.slots.get(k).map_or(u64::MAX, |c| c.stamp)).unwrap_or(0)
            })
        };
        self.clock = self.clock.wrapping_add(1);
        if let Some(carry) = self.slots.get_mut(slot) {
            if carry.next != FREE {
                let to = carry.from.wrapping_add(carry.next.wrapping_sub(carry.base));
                write(dst, carry, to);
            }
            // Taken: `next` is set by the caller; until then the slot is not free.
            carry.next = FREE.wrapping_sub(1);
            carry.stamp = self.clock;
        }
        slot
    }

    /// Writes every carry left with ordinary stores: the end of a kernel's run (before its
    /// store fence).
    pub(crate) fn finish(&mut self, dst: &mut [u8]) {
        for carry in &mut self.slots {
            if carry.next != FREE {
                let to = carry.from.wrapping_add(carry.next.wrapping_sub(carry.base));
                carry.next = FREE;
                write(dst, carry, to);
            }
        }
    }
}

/// Writes a carry's bytes `from..to`: a whole line (from 0 to [`LINE`]) streamed, else copied.
#[inline]
fn write(dst: &mut [u8], carry: &Carry, to: usize) {
    if carry.from == 0 && to == LINE {
        if let Some(line) = line_at(dst, carry.base) {
            if !stream::store_line(line, &carry.bytes) {
                *line = carry.bytes;
            }
        }
        return;
    }
    let len = to.saturating_sub(carry.from);
    if let (Some(into), Some(from)) =
        (dst.get_mut(carry.base..carry.base.wrapping_add(len)), carry.bytes.get(carry.from..to))
    {
        into.copy_from_slice(from);
    }
}

/// The destination line at `at`, if it is inside the buffer.
#[inline]
fn line_at(dst: &mut [u8], at: usize) -> Option<&mut [u8; LINE]> {
    dst.get_mut(at..at.checked_add(LINE)?)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::{LINE, Lines, Stores};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 8 } else { 256 }, ..ProptestConfig::default() })]

        /// Runs cut from a few destination streams, put in any interleaving at any offset from a
        /// line, give a plain copy's bytes with either stores; bytes no run covers stay as they
        /// were.
        #[test]
        fn runs_in_any_order_and_alignment_write_a_copy(
            offset in 0usize..LINE,
            streams in proptest::collection::vec((0usize..600, proptest::collection::vec(1usize..150, 1..8)), 1..40),
            order in any::<u64>(),
            streaming in any::<bool>(),
        ) {
            let len = 4096 * 4;
            let mut storage = vec![0x5Au8; len + 2 * LINE];
            let start = storage.as_ptr().align_offset(LINE) + offset;
            let source: Vec<u8> = (0..len).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
            // Each stream: consecutive runs from its start; streams laid out one after another.
            let mut runs = Vec::new();
            let mut at = 0usize;
            for (gap, lens) in &streams {
                at += gap;
                let mut pieces = Vec::new();
                for &l in lens {
                    if at + l > len { break; }
                    pieces.push((at, l));
                    at += l;
                }
                runs.push(pieces);
            }
            let mut expected = storage[start..start + len].to_vec();
            for &(a, l) in runs.iter().flatten() {
                expected[a..a + l].copy_from_slice(&source[a..a + l]);
            }
            // Round-robin over the streams, skipping by `order`'s bits.
            let dst = &mut storage[start..start + len];
            let mut lines = Lines::new(if streaming { Stores::Streaming } else { Stores::Plain });
            let mut cursor = vec![0usize; runs.len()];
            let mut bits = order;
            let mut stalled = false;
            loop {
                let mut any = false;
                for (k, pieces) in runs.iter().enumerate() {
                    bits = bits.rotate_left(1);
                    if bits & 1 == 1 && !stalled { continue; }
                    if let Some(&(a, l)) = pieces.get(cursor[k]) {
                        lines.put(dst, a, &source[a..a + l]);
                        cursor[k] += 1;
                        any = true;
                    }
                }
                if runs.iter().zip(&cursor).all(|(p, &c)| c >= p.len()) { break; }
                stalled = !any;
            }
            lines.finish(dst);
            super::stream::fence();
            prop_assert_eq!(&dst[..], &expected[..]);
        }
    }
}
