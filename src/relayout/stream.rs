//! Streaming (non-temporal) stores of whole destination cache lines: the crate's one `unsafe`
//! module (issue 14 allows it for a kernel measured ≥ 1.5× faster than the safe one).
//!
//! A relayout whose destination is much larger than the caches writes every destination line
//! once. A plain store first reads the line it writes (a read for ownership), so a transpose
//! that writes lines in scattered order moves three lines per line of output and stalls on
//! each; a non-temporal store writes the whole line without reading it and without evicting
//! anything useful. Measured on the project's machine (`benches/relayout.rs`, `t2d/huge`, one
//! thread, same group): 34.3 ms with plain stores (`plan_cached`), 7.9 ms with these, memcpy
//! 4.8 ms (docs/relayout.md, "Speed").
//!
//! Only x86-64 has them here: `_mm_stream_si128` (SSE2, part of the x86-64 baseline, so the
//! compiler may emit it in any function). A plan still asks the CPU ([`available`], once, when
//! it is built) and plans ordinary stores if the answer is no. Elsewhere [`available`] is false
//! and [`store_line`] declines, so the callers' safe stores run.
//!
//! Under Miri (`cfg(miri)`, `tools/miri`) the streaming path runs too, but its one instruction
//! cannot: `_mm_stream_si128` is inline assembly and `_mm_sfence` a call Miri has no shim for.
//! There [`store_line`] writes the same 16-byte-aligned pointer with `_mm_store_si128`, the
//! aligned ordinary store with the same preconditions (16 writable bytes, 16-byte aligned), which
//! Miri checks, and [`fence`] does nothing (ordinary stores need no fence). So Miri checks every
//! line the kernels stream (its bounds, its alignment, its borrow) and the streaming walks of the
//! callers; what it cannot check is the weak ordering of the real non-temporal stores, which
//! [`fence`] at the end of each kernel run covers.
//!
//! The contract is small on purpose: [`store_line`] writes one [`LINE`] into a bounds-checked
//! `&mut [u8; LINE]` or declines (returns `false`), [`store_lanes`] writes a piece of a line
//! into a bounds-checked `&mut [u8]` (its 16-byte-aligned lanes streamed, the rest stored
//! normally), and [`fence`] orders the streamed stores before anything the caller does next.
//! Everything else in `relayout` stays safe code.
#![allow(unsafe_code)]

/// A cache line, the unit every streaming store writes whole (and the transpose's micro-tile
/// rows: `M` elements of `N` bytes make one).
pub(crate) const LINE: usize = 64;

/// A 16-byte lane, an SSE2 register: the unit the kernels shuffle, and the step of the offsets
/// past a line ([`past_line`]) that `malloc` and numpy give large buffers.
pub(crate) const LANE: usize = 16;

/// How many bytes past a cache line `bytes` starts (`0..LINE`), or `None` where the address
/// cannot be known (`align_offset` declines, as under Miri's symbolic alignment): callers then
/// store normally.
#[inline]
pub(crate) fn past_line(bytes: &[u8]) -> Option<usize> {
    let ahead = bytes.as_ptr().align_offset(LINE);
    (ahead < LINE).then(|| LINE.wrapping_sub(ahead) % LINE)
}

/// Destinations at least this large (bytes) stream their lines: far beyond the 2 MiB
/// second-level cache of one core, so the lines would be evicted before anyone read them.
pub(crate) const MIN_STREAM_BYTES: u64 = 1 << 24;

/// Whether this build and this CPU can stream (x86-64 with SSE2; under Miri, the aligned stores
/// that stand in for the streaming ones): asked once per plan.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("sse2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Writes `line` to `to` with non-temporal stores; `false` (nothing written) when `to` is not
/// 16-byte aligned or the target has no streaming stores. The caller then stores normally.
#[inline]
pub(crate) fn store_line(to: &mut [u8; LINE], line: &[u8; LINE]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__m128i;
        #[cfg(miri)]
        use core::arch::x86_64::_mm_store_si128 as store;
        #[cfg(not(miri))]
        use core::arch::x86_64::_mm_stream_si128 as store;
        if to.as_ptr().align_offset(16) != 0 {
            return false;
        }
        let parts: &[[u8; 16]; 4] = bytemuck::cast_ref(line);
        for (chunk, part) in to.chunks_exact_mut(16).zip(parts) {
            let value: __m128i = bytemuck::cast(*part);
            // The cast is aligned: `to` starts on a 16-byte boundary (checked above) and every
            // chunk starts a multiple of 16 bytes after it.
            #[allow(clippy::cast_ptr_alignment)]
            let address = chunk.as_mut_ptr().cast::<__m128i>();
            // SAFETY: `address` points to the 16 writable bytes of `chunk`, part of the
            // exclusive borrow `to`, live for this call, and is 16-byte aligned, as `movntdq`
            // (and, under Miri, `movdqa`) requires. SSE2, the instructions' only feature, is
            // enabled on every x86-64 target.
            unsafe { store(address, value) };
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (to, line);
        false
    }
}

/// Writes `part` into `to` (as long): each 16-byte lane of `to` that starts on a 16-byte
/// boundary with non-temporal stores, the bytes before the first such lane and after the last
/// with ordinary ones (all of them where the target has no streaming stores). The pieces of
/// lines that two passes of a kernel share (a wrapped transpose's seam, `kernel.rs`): stored
/// normally, each piece first reads its line (a read for ownership) and stalls on it.
#[inline]
pub(crate) fn store_lanes(to: &mut [u8], part: &[u8]) {
    let lead = to.as_ptr().align_offset(LANE);
    if to.len() != part.len() || !available() || lead >= to.len() {
        let len = to.len().min(part.len());
        if let (Some(to), Some(part)) = (to.get_mut(..len), part.get(..len)) {
            to.copy_from_slice(part);
        }
        return;
    }
    let (head, rest) = to.split_at_mut(lead);
    let (from_head, from_rest) = part.split_at(lead);
    head.copy_from_slice(from_head);
    let mut lanes = rest.chunks_exact_mut(LANE);
    let mut from = from_rest.chunks_exact(LANE);
    for (lane, from) in (&mut lanes).zip(&mut from) {
        // Every chunk is a whole lane (`chunks_exact`).
        if let (Some(lane), Some(from)) = (lane.first_chunk_mut::<LANE>(), from.first_chunk::<LANE>()) {
            store_lane(lane, from);
        }
    }
    lanes.into_remainder().copy_from_slice(from.remainder());
}

/// One 16-byte-aligned lane of [`store_lanes`], streamed (under Miri, an aligned ordinary store).
#[inline]
fn store_lane(to: &mut [u8; LANE], lane: &[u8; LANE]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__m128i;
        #[cfg(miri)]
        use core::arch::x86_64::_mm_store_si128 as store;
        #[cfg(not(miri))]
        use core::arch::x86_64::_mm_stream_si128 as store;
        if to.as_ptr().align_offset(LANE) != 0 {
            *to = *lane;
            return;
        }
        let value: __m128i = bytemuck::cast(*lane);
        // The cast is aligned: `to` starts on a 16-byte boundary (checked above).
        #[allow(clippy::cast_ptr_alignment)]
        let address = to.as_mut_ptr().cast::<__m128i>();
        // SAFETY: `address` points to the 16 writable bytes of `to`, an exclusive borrow live
        // for this call, and is 16-byte aligned, as `movntdq` (and, under Miri, `movdqa`)
        // requires. SSE2, the instructions' only feature, is enabled on every x86-64 target.
        unsafe { store(address, value) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *to = *lane;
    }
}

/// Orders every streamed store before the stores and loads that follow (non-temporal stores are
/// weakly ordered): called once at the end of each kernel run that streamed. Nothing under Miri,
/// whose stand-in stores are ordinary ones.
#[inline]
pub(crate) fn fence() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        // SAFETY: `sfence` has no operands and no preconditions beyond SSE, which every x86-64
        // CPU has.
        unsafe { core::arch::x86_64::_mm_sfence() };
    }
}

#[cfg(test)]
mod tests {
    use super::store_line;

    #[test]
    fn an_aligned_line_is_written_and_an_unaligned_one_declined() {
        // 16-byte aligned storage: an array of u128 viewed as bytes.
        let mut storage = [0u128; 5];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
        let line: [u8; 64] = core::array::from_fn(|k| u8::try_from(k).unwrap_or(0));
        let aligned: &mut [u8; 64] = (&mut bytes[..64]).try_into().unwrap();
        if super::available() {
            assert!(store_line(aligned, &line));
            super::fence();
            assert_eq!(&bytes[..64], &line[..]);
            let unaligned: &mut [u8; 64] = (&mut bytes[1..65]).try_into().unwrap();
            assert!(!store_line(unaligned, &line));
        } else {
            assert!(!store_line(aligned, &line));
        }
    }

    /// A part at every offset from a 16-byte boundary and of every length up to a line and a
    /// half: exactly its bytes are written, its aligned lanes streamed and its ends stored
    /// normally (under Miri, which checks each store's bounds and alignment, too).
    #[test]
    fn parts_at_every_offset_write_exactly_themselves() {
        let part: Vec<u8> = (1..=96).collect();
        for at in 0..48 {
            for len in 0..=96 {
                let mut storage = [0u128; 10];
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
                super::store_lanes(&mut bytes[at..at + len], &part[..len]);
                super::fence();
                let expected: Vec<u8> =
                    (0..160).map(|k| if (at..at + len).contains(&k) { part[k - at] } else { 0 }).collect();
                assert_eq!(bytes, &expected[..], "at {at}, {len} bytes");
            }
        }
    }

    /// At every offset of a line from a 16-byte boundary, up to the buffer's last line: an
    /// aligned line is written whole and nothing else is, an unaligned one leaves every byte as
    /// it was (under Miri, which checks each store's bounds and alignment, too).
    #[test]
    fn lines_at_every_offset_write_exactly_themselves_or_nothing() {
        let mut storage = [0u128; 9];
        let len = core::mem::size_of_val(&storage);
        let line: [u8; 64] = core::array::from_fn(|k| u8::try_from(k + 1).unwrap_or(0));
        for at in 0..=len - 64 {
            storage = [0u128; 9];
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
            let to: &mut [u8; 64] = (&mut bytes[at..at + 64]).try_into().unwrap();
            let written = store_line(to, &line);
            super::fence();
            assert_eq!(written, super::available() && at % 16 == 0, "at {at}");
            let expected: Vec<u8> =
                (0..len).map(|k| if written && (at..at + 64).contains(&k) { line[k - at] } else { 0 }).collect();
            assert_eq!(bytes, &expected[..], "at {at}");
        }
    }
}
