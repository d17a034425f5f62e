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
use super::stream::{self, LANE, LINE, past_line};

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

    /// Whether whole lines stream (else every run is copied).
    pub(crate) fn streams(&self) -> bool {
        self.stores != Stores::Plain
    }

    /// Writes `run` at `dst[at..]` (nothing when it does not fit: the plan never asks that).
    #[inline]
    pub(crate) fn put(&mut self, dst: &mut [u8], at: usize, run: &[u8]) {
        let Some(to) = dst.get_mut(at..at.wrapping_add(run.len())) else { return };
        // The run's position in its first line (unknown: a plain copy).
        let phase = match past_line(to) {
            Some(phase) if self.stores != Stores::Plain => phase,
            _ => {
                to.copy_from_slice(run);
                return;
            }
        };
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

/// Lanes in a line.
const LANES: usize = LINE / LANE;

/// Rows [`RowLines`] keeps a carry for: those of a `T(32,128)(4,1)` tile, side by side.
pub(crate) const ROW_SLOTS: usize = 32;

/// Whole lines of rows written side by side a line at a time (a tile's deinterleaved rows,
/// `tile::deinterleave_runs`; the short runs of sub-byte rows unpacked across rows,
/// `pack::unpack_rows`), into a destination whose rows start the same whole number of
/// 16-byte lanes past a line: `malloc`'s and numpy's 16 bytes. A kernel hands [`RowLines::put`]
/// each 64-byte piece of a row with the row's **slot** (its place among the rows side by side);
/// the lanes that spill into the row's next line wait in the slot, the row's next piece
/// completes that line, and it streams whole. The slot keeps its carry across calls, so the
/// rows of one tile continue in the next tile along them (the transpose's walk keeps one
/// `RowLines` for its whole run). A piece that does not continue its slot's carry writes that
/// carry, and its own first lanes, with ordinary stores: a row's two ends. Unlike [`Lines`],
/// nothing is searched and every copy is of whole lanes, so no load waits on a store of another
/// size (a `Lines` carry built of 48- and 16-byte pieces took `s8` `T(32,128)(4,1)` → row-major
/// into a `Vec` from 13.5–16.6 ms to 18–21 ms per 64 MiB).
///
/// Each slot's carry is a cache line of its own ([`LineAligned`]): packed 48 bytes apart, the
/// carries fell wherever the struct did (the stack of the thread that runs the kernel), and bf16
/// `T(8,128)(2,1)` → row-major at 512 MiB into a `Vec` took 160–210 ms on a rayon worker against
/// 48–58 on the calling thread, the same code and buffers (memcpy 42–52 ms); aligned, 48–56 on
/// the worker (`docs/relayout.md`, "Speed").
pub(crate) struct RowLines {
    /// How many lanes past a line every row starts (1–3); 0: nothing kept yet.
    past: usize,
    /// Where each slot's row continues ([`FREE`]: nothing kept).
    next: [usize; ROW_SLOTS],
    /// Each slot's last `past` lanes, which belong at `next − past · LANE ..`.
    kept: [LineAligned<[[u8; LANE]; LANES - 1]>; ROW_SLOTS],
}

/// `T` starting on a cache line, and so on lines of its own: each of [`RowLines`]' carries, and
/// a transpose's staged micro-tile (`kernel::Walk::strip`), whose lines would otherwise fall
/// wherever the stack frame put them, most across two cache lines (`docs/relayout.md`,
/// "Speed", "The kernels' own lines on cache lines").
#[derive(Clone, Copy)]
#[repr(align(64))]
pub(crate) struct LineAligned<T>(pub(crate) T);

/// The alignment above is [`LINE`]'s (a `repr` takes only a literal).
const _: () = assert!(align_of::<LineAligned<u8>>() == LINE);

impl RowLines {
    /// Nothing kept.
    pub(crate) fn new() -> Self {
        Self { past: 0, next: [FREE; ROW_SLOTS], kept: [LineAligned([[0; LANE]; LANES - 1]); ROW_SLOTS] }
    }

    /// The lanes past a line of a destination offset `at`: `Some(1 ..= 3)` when [`put`](Self::put)
    /// streams there, `None` on a line (store it whole) or off a lane.
    pub(crate) fn lanes_past(dst: &[u8], at: usize) -> Option<usize> {
        let past = past_line(dst.get(at..)?)?;
        (past % LANE == 0 && past > 0).then_some(past / LANE)
    }

    /// Rows `past` lanes past a line from here on (from [`lanes_past`](Self::lanes_past)):
    /// carries kept for another offset are written out first.
    pub(crate) fn begin(&mut self, dst: &mut [u8], past: usize) {
        if past != self.past {
            self.finish(dst);
            self.past = past;
        }
    }

    /// Writes `line` at `dst[at..]` (nothing when it does not fit), the next piece of the row in
    /// `slot` (below [`ROW_SLOTS`]; another is stored normally), `at` the offset of
    /// [`begin`](Self::begin)'s lanes past a line.
    #[inline]
    pub(crate) fn put(&mut self, dst: &mut [u8], slot: usize, at: usize, line: &[u8; LINE]) {
        match self.past {
            1 => self.put_past::<1>(dst, slot, at, line),
            2 => self.put_past::<2>(dst, slot, at, line),
            3 => self.put_past::<3>(dst, slot, at, line),
            _ => {
                if let Some(to) = line_at(dst, at) {
                    *to = *line;
                }
            }
        }
    }

    /// [`put`](Self::put) for rows `C` lanes past a line.
    #[inline]
    fn put_past<const C: usize>(&mut self, dst: &mut [u8], slot: usize, at: usize, line: &[u8; LINE]) {
        let lanes: &[[u8; LANE]; LANES] = bytemuck::cast_ref(line);
        let (Some(next), Some(kept)) = (self.next.get_mut(slot), self.kept.get_mut(slot).map(|kept| &mut kept.0))
        else {
            if let Some(to) = line_at(dst, at) {
                *to = *line;
            }
            return;
        };
        // `C` is 1, 2 or 3 ([`put`](Self::put)): the splits are inside the arrays.
        let head = const { LANES - C };
        let (kept, lanes) = (kept.split_at_mut(C).0, lanes.split_at(head));
        if *next == at {
            // The line from `C` lanes before `at`: the kept lanes, then this piece's first.
            let mut whole = [[0u8; LANE]; LANES];
            let (head, tail) = whole.split_at_mut(C);
            head.copy_from_slice(kept);
            tail.copy_from_slice(lanes.0);
            if let Some(to) = line_at(dst, at.wrapping_sub(C.wrapping_mul(LANE))) {
                let whole: &[u8; LINE] = bytemuck::cast_ref(&whole);
                if !stream::store_line(to, whole) {
                    *to = *whole;
                }
            }
        } else {
            write_kept(dst, *next, kept);
            if let Some(to) = dst.get_mut(at..at.wrapping_add(head.wrapping_mul(LANE))) {
                to.copy_from_slice(bytemuck::cast_slice(lanes.0));
            }
        }
        kept.copy_from_slice(lanes.1);
        *next = at.wrapping_add(LINE);
    }

    /// Writes every carry left with ordinary stores: the end of a kernel's run (before its store
    /// fence).
    pub(crate) fn finish(&mut self, dst: &mut [u8]) {
        let past = self.past.min(LANES - 1);
        for (next, kept) in self.next.iter_mut().zip(self.kept.iter().map(|kept| &kept.0)) {
            write_kept(dst, *next, kept.get(..past).unwrap_or_default());
            *next = FREE;
        }
    }
}

/// Writes a slot's kept lanes, which end at `next` ([`FREE`]: nothing kept).
fn write_kept(dst: &mut [u8], next: usize, kept: &[[u8; LANE]]) {
    let len = kept.len().wrapping_mul(LANE);
    if next != FREE
        && let Some(to) = next.checked_sub(len).and_then(|from| dst.get_mut(from..next))
    {
        to.copy_from_slice(bytemuck::cast_slice(kept));
    }
}

/// The destination line at `at`, if it is inside the buffer.
#[inline]
fn line_at(dst: &mut [u8], at: usize) -> Option<&mut [u8; LINE]> {
    dst.get_mut(at..at.checked_add(LINE)?)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::{LINE, Lines, ROW_SLOTS, RowLines, Stores};
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

        /// Rows of whole lines `past` lanes past a line, their pieces put in any interleaving,
        /// each row under a slot that may change from piece to piece (a row may also sit in a
        /// slot beyond [`ROW_SLOTS`]): a plain copy of every piece, and no other byte written.
        #[test]
        fn row_pieces_in_any_order_and_slot_write_a_copy(
            past in 0usize..4,
            rows in proptest::collection::vec((1usize..5, 0usize..ROW_SLOTS + 2, any::<bool>()), 1..12),
            order in proptest::collection::vec(any::<u8>(), 64),
        ) {
            let stride = 6 * LINE;
            let len = rows.len() * stride;
            let mut storage = vec![0x5Au8; len + 2 * LINE];
            let start = storage.as_ptr().align_offset(LINE) + 16 * past;
            let source: Vec<u8> = (0..len).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
            let mut expected = storage[start..start + len].to_vec();
            for (r, &(lines, _, _)) in rows.iter().enumerate() {
                let at = r * stride + LINE;
                expected[at..at + lines * LINE].copy_from_slice(&source[at..at + lines * LINE]);
            }
            let dst = &mut storage[start..start + len];
            let mut carries = RowLines::new();
            if let Some(lanes) = RowLines::lanes_past(dst, LINE) {
                carries.begin(dst, lanes);
            }
            let mut next = vec![0usize; rows.len()];
            let mut picks = order.iter().cycle();
            while next.iter().zip(&rows).any(|(&n, &(lines, _, _))| n < lines) {
                // The picked row, or the first with pieces left when it has none.
                let pick = usize::from(*picks.next().unwrap()) % rows.len();
                let pick = if next[pick] < rows[pick].0 { pick } else { (0..rows.len()).find(|&r| next[r] < rows[r].0).unwrap() };
                let (_, slot, moves) = rows[pick];
                let at = pick * stride + LINE + next[pick] * LINE;
                let slot = if moves && next[pick] % 2 == 1 { (slot + 1) % (ROW_SLOTS + 2) } else { slot };
                carries.put(dst, slot, at, source[at..at + LINE].try_into().unwrap());
                next[pick] += 1;
            }
            carries.finish(dst);
            super::stream::fence();
            prop_assert_eq!(&dst[..], &expected[..]);
        }
    }
}
