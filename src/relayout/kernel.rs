//! The kernels: what moves the elements of one box. All safe code: slices are reached with
//! `get`, so an offset the plan got wrong would skip an element (and the property tests would
//! see it), never read or write outside a buffer.
//!
//! Offsets are `i64` (strides may be negative); the plan guarantees that every element's offset
//! is inside its buffer.

use super::lines::{LineAligned, Lines, RowLines};
use super::plan::{
    AHEAD_LINES, Axis, Order, STAGE_AHEAD, Stores, asks_ahead, band_columns, band_width, bands_ask_ahead, narrowed,
    row_block, short_run, source_order, stages,
};
use super::stream::{self, LINE};
use super::tile::{self, ZERO_LINE};
use crate::memory::extent::{len_u64, to_i64};

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

/// Whole rows: the innermost axis is contiguous on both sides (no axis: one run of `width`
/// bytes).
pub(crate) fn rows(src: &[u8], dst: &mut [u8], s: i64, d: i64, axes: &[Axis], width: usize, stores: Stores) {
    let (len, outer) = match axes.split_last() {
        Some((inner, outer)) => (usize::try_from(inner.extent).unwrap_or(0).wrapping_mul(width), outer),
        None => (width, axes),
    };
    let phase = if stores == Stores::Plain { None } else { line_rows(dst, d, outer, len) };
    match (stores, phase) {
        (Stores::Streaming | Stores::WholeLines, Some(phase)) => source_order_rows(src, dst, (s, d), outer, len, phase),
        (Stores::Plain | Stores::WholeLines, _) => odometer(outer, s, d, &mut |s, d| copy_run(src, dst, s, d, len)),
        (Stores::Streaming, None) => {
            // Whole lines stream at any alignment; a row's ends wait for the next row
            // (`lines.rs`).
            let mut lines = Lines::new(stores);
            odometer(outer, s, d, &mut |s, d| {
                if let (Some(s), Some(d)) = (at(s), at(d)) {
                    if let Some(from) = src.get(s..s.wrapping_add(len)) {
                        lines.put(dst, d, from);
                    }
                }
            });
            lines.finish(dst);
            stream::fence();
        }
    }
}

/// Where every row of a rows walk (`outer` axes, rows of `len` bytes, the first at `dst[d..]`)
/// starts in its first destination line, when that is the same for every row: the length and
/// every destination stride are whole lines. `None` otherwise.
fn line_rows(dst: &[u8], d: i64, outer: &[Axis], len: usize) -> Option<usize> {
    let line = to_i64(len_u64(LINE));
    if len % LINE != 0 || len == 0 || !outer.iter().all(|a| a.dst.checked_rem(line) == Some(0)) {
        return None;
    }
    let ahead = at(d).and_then(|d| dst.get(d..)).map(|rest| rest.as_ptr().align_offset(LINE))?;
    let phase = LINE.wrapping_sub(ahead) % LINE;
    (ahead < LINE && (phase == 0 || len >= MIN_JOINED_ROW)).then_some(phase)
}

/// Rows shorter than this (bytes) that start inside a line keep the destination order: with
/// one line in two made from two rows ([`source_order_rows`]), 128-byte rows (`f32`
/// `T(8,32)`) measured 0.50× memcpy in source order against 0.57× cached in destination order;
/// 256-byte rows (r4) 1.14× against 0.57×.
const MIN_JOINED_ROW: usize = 256;

/// Rows whose length and destination strides are whole lines, the first starting `phase` bytes
/// into its line, walked in **source** order, every destination line streamed whole (rule 10,
/// "Rows in source order"): the source is read in address order. A line astride two rows
/// (`phase` > 0) is made by the second row from both rows' source bytes when the first is the
/// row before it along the axis that continues rows in the destination (its stride is one
/// row); where no row comes before or after along that axis, a row's partial line is copied with
/// ordinary stores.
fn source_order_rows(src: &[u8], dst: &mut [u8], (s, d): (i64, i64), outer: &[Axis], len: usize, phase: usize) {
    let mut order = outer.to_vec();
    source_order(&mut order);
    let run = to_i64(len_u64(len));
    let (before, rest) = order.split_at(order.iter().position(|a| a.dst == run).unwrap_or(order.len()));
    let row = LineRow { src, len, phase };
    match rest.split_first() {
        Some((next, after)) => odometer(before, s, d, &mut |s, d| {
            for j in 0..next.extent {
                let before = (j > 0).then_some(next.src);
                let last = j.wrapping_add(1) == next.extent;
                odometer(after, step(s, j, next.src), step(d, j, next.dst), &mut |s, d| {
                    row.put(dst, (s, d), before.map(|back| s.wrapping_sub(back)), last);
                });
            }
        }),
        None => odometer(&order, s, d, &mut |s, d| row.put(dst, (s, d), None, true)),
    }
    stream::fence();
}

/// One row of [`source_order_rows`].
struct LineRow<'a> {
    src: &'a [u8],
    len: usize,
    phase: usize,
}

impl LineRow<'_> {
    /// The row at `(s, d)`: its first line made with the row before it in the destination,
    /// whose source is at `before`, else copied; its whole lines streamed; its last `phase` bytes
    /// copied when it is the `last` (no row after it makes their line).
    #[inline]
    fn put(&self, dst: &mut [u8], (s, d): (i64, i64), before: Option<i64>, last: bool) {
        let (Some(s), Some(d)) = (at(s), at(d)) else { return };
        let Some(from) = self.src.get(s..s.wrapping_add(self.len)) else { return };
        let (phase, head) = (self.phase, LINE.wrapping_sub(self.phase) % LINE);
        if head > 0 {
            let joined = before.and_then(at).and_then(|b| {
                let tail = self.src.get(b.wrapping_add(self.len).wrapping_sub(phase)..b.wrapping_add(self.len))?;
                let to = line_at(dst, to_i64(len_u64(d.checked_sub(phase)?)))?;
                let mut line = [0u8; LINE];
                line.get_mut(..phase)?.copy_from_slice(tail);
                line.get_mut(phase..)?.copy_from_slice(from.get(..head)?);
                put_line(to, &line, Stores::Streaming);
                Some(())
            });
            if joined.is_none() {
                copy_bytes(dst, d, from.get(..head).unwrap_or_default());
            }
        }
        let body = from.get(head..).unwrap_or_default();
        let mut lines = body.chunks_exact(LINE);
        let mut at_line = d.wrapping_add(head);
        for line in &mut lines {
            if let (Some(to), Ok(line)) = (line_at(dst, to_i64(len_u64(at_line))), <&[u8; LINE]>::try_from(line)) {
                put_line(to, line, Stores::Streaming);
            }
            at_line = at_line.wrapping_add(LINE);
        }
        if last {
            copy_bytes(dst, at_line, lines.remainder());
        }
    }
}

/// Copies `bytes` to `dst[at..]` with ordinary stores (nothing when they do not fit).
#[inline]
fn copy_bytes(dst: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(to) = dst.get_mut(at..at.wrapping_add(bytes.len())) {
        to.copy_from_slice(bytes);
    }
}

/// One destination line: streamed where the stores and the line allow it, else an ordinary copy
/// (fixed-size, so the compiler moves it inline).
#[inline]
fn put_line(to: &mut [u8; LINE], from: &[u8; LINE], stores: Stores) {
    if stores == Stores::Streaming && stream::store_line(to, from) {
        return;
    }
    *to = *from;
}

/// Part of a line (`to` as long as `from`), its aligned lanes streamed when `stores` streams
/// ([`stream::store_lanes`]).
fn put_part(to: &mut [u8], from: &[u8], stores: Stores) {
    if stores == Stores::Streaming {
        stream::store_lanes(to, from);
    } else {
        to.copy_from_slice(from);
    }
}

/// The blocked 2-D transpose: `axes[src_minor]` is contiguous in the source, the last axis in
/// the destination. Both are cut into blocks of one cache line (`M` elements); the odometer runs
/// over every axis in destination order with the source-minor axis stepping by blocks, so the
/// destination is written as `M` forward streams and every line on both sides is touched once.
/// In [`Order::SourceRuns`] the band is one micro-tile wide (the plan has put the source-minor
/// axis last among the outer axes). In [`Order::Fused`] the axis before the source-minor one
/// continues it in the source: the two make one row axis of `extent × extent` rows, cut into
/// micro-tiles of `M` rows whose destination lines are addressed through both axes. In
/// [`Order::FusedColumns`] the axis after the source-minor one continues the innermost axis in the
/// destination: the two make the micro-tiles' columns ([`Walk::fused_columns`]).
pub(crate) fn transpose<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    (s, d): (i64, i64),
    axes: &[Axis],
    (src_minor, order): (usize, Order),
    stores: Stores,
) where
    Bytes<N>: Width,
{
    let Some((&inner, outer)) = axes.split_last() else { return };
    let Some(&minor) = outer.get(src_minor) else { return };
    let band = match order {
        Order::Bands | Order::Fused | Order::FusedColumns => band_width(N as u64),
        Order::SourceRuns => 1,
    };
    // The fused axis, while it still continues the source-minor one (a part of the box,
    // `run_range`, may have cut the source-minor axis short: then a plain transpose).
    let fused = match order {
        Order::Fused => src_minor
            .checked_sub(1)
            .and_then(|p| outer.get(p))
            .filter(|outside| Some(outside.src) == minor.src.checked_mul(crate::memory::extent::to_i64(minor.extent)))
            .copied(),
        Order::Bands | Order::SourceRuns | Order::FusedColumns => None,
    };
    let short = short_axis::<N>((minor, inner), fused);
    let ahead = match order {
        Order::SourceRuns if asks_ahead(minor.extent) => Ahead::NextBand,
        Order::Bands if bands_ask_ahead(axes, src_minor, to_i64(len_u64(N))) => {
            Ahead::Columns(AHEAD_LINES.max(<Bytes<N> as Width>::M as u64))
        }
        Order::SourceRuns | Order::Bands | Order::Fused | Order::FusedColumns => Ahead::Off,
    };
    let rows_wrap = short == Short::Neither && src_minor.checked_add(1) == Some(outer.len());
    let wrap = if rows_wrap && wraps::<N>(minor, inner) { lead::<N>(dst, d) } else { 0 };
    let staged = stages(len_u64(N), inner.src, ahead != Ahead::Off);
    let lines = core::cell::RefCell::new(RowLines::new());
    let columns = order == Order::FusedColumns;
    let seams = match fused {
        Some(outside) if stores == Stores::Streaming && far_seams::<N>((minor, inner), outside) => Stores::Streaming,
        _ => Stores::Plain,
    };
    let walk =
        Walk { src, pair: (minor, inner), fused, columns, short, band, stores, seams, ahead, wrap, staged, lines };
    walk.run::<N>(dst, outer, src_minor, s, d, Band::default());
    walk.lines.borrow_mut().finish(dst);
    if stores == Stores::Streaming {
        stream::fence();
    }
}

/// The output of one walk over the fused rows ([`Order::Fused`]) at which a wrapping walk streams
/// the pieces of its groups' seams ([`Seam`], [`stream::store_lanes`]): a piece shares its line
/// with another group's piece, moved at least one whole walk earlier or later. Measured (issue 36,
/// `docs/relayout.md`): bf16 row-major → `{0,1:T(8,128)(2,1)}` into a destination 16 bytes past
/// a line, streamed against stored normally, from 0.44–0.65 to 0.53–0.77 of memcpy for walks of
/// 128 KiB to 2 MiB, and from 0.22–0.27 to 0.18–0.21 for walks of 8–32 KiB, whose shared lines
/// are still in the caches when their second piece comes.
const FAR_SEAMS: u64 = 128 << 10;

/// Whether a fused walk's output reaches [`FAR_SEAMS`]: the fused rows (`outside` by the
/// source-minor axis) by the innermost axis, `N` bytes each.
fn far_seams<const N: usize>((minor, inner): (Axis, Axis), outside: Axis) -> bool {
    [minor.extent, inner.extent, len_u64(N)]
        .into_iter()
        .try_fold(outside.extent, u64::checked_mul)
        .is_none_or(|bytes| bytes >= FAR_SEAMS)
}

/// The destination offsets of the fused rows `first ..` ([`Order::Fused`]), one per entry of
/// `offsets`: row `r` is element `r mod e` of the source-minor axis `minor` (extent `e`) and
/// `r div e` of the axis `outside` it.
fn fused_offsets(first: u64, (minor, outside): (Axis, Axis), offsets: &mut [i64]) {
    for (r, offset) in (first..).zip(offsets) {
        let (outer, within) = (r.checked_div(minor.extent).unwrap_or(0), r.checked_rem(minor.extent).unwrap_or(0));
        *offset = step(step(0, outer, outside.dst), within, minor.dst);
    }
}

/// The column after the last whole micro-tile of `m` columns from `j0` that ends by `end`: where
/// a strip's whole tiles stop and its ragged columns start.
fn whole_tiles_end(j0: u64, end: u64, m: u64) -> u64 {
    j0.saturating_add(end.saturating_sub(j0).checked_div(m).unwrap_or(0).saturating_mul(m))
}

/// The elements from `buffer[offset]` to the first cache-line boundary (0 when `offset` is on
/// one, or when the boundary falls inside an element).
/// - In the destination, the destination-minor columns before its first line: a destination 16
///   bytes past a line (where `malloc` and numpy put large buffers) would otherwise split every
///   line a micro-tile stores over two cache lines: two partial lines per store, and streamed
///   partial lines are written back piecemeal (2.2–3× slower, `docs/relayout.md`, "Speed").
/// - In the source, the source-minor rows before its first line ([`Walk::run`]): the strips'
///   runs then start on lines instead of each straddling two.
fn lead<const N: usize>(buffer: &[u8], offset: i64) -> u64 {
    let bytes = at(offset).and_then(|t| buffer.get(t..)).map_or(0, |rest| rest.as_ptr().align_offset(LINE));
    // `align_offset` may decline (usize::MAX): then no lead, which only costs speed.
    match (bytes.checked_div(N), bytes.checked_rem(N)) {
        (Some(columns), Some(0)) if bytes < LINE => len_u64(columns),
        _ => 0,
    }
}

/// Where the band that starts at column `j0` ends: the [`lead`] columns (those before the
/// destination's first line boundary) are a band of their own, every other band is `width`
/// columns, and none goes past `extent`. The transposes' bands and a long deinterleave's.
fn band_end(j0: u64, lead: u64, width: u64, extent: u64) -> u64 {
    extent.min(if j0 < lead { lead } else { j0.saturating_add(width) })
}

/// Whether a transpose's destination rows follow each other, each a whole number of lines: the
/// destination-minor axis is contiguous and the source-minor axis steps one row of it (as in
/// NCHW → NHWC and every dense 2-D transpose). Then, on a destination that starts off a line,
/// the micro-tiles are shifted by the [`lead`] so that each stores whole lines, the last tile of
/// a row wrapping into the next row's first columns ([`Walk::wrap`], [`Seam`]).
fn wraps<const N: usize>(minor: Axis, inner: Axis) -> bool {
    let row = inner.extent.checked_mul(len_u64(N));
    inner.dst == to_i64(len_u64(N))
        && row.and_then(|r| i64::try_from(r).ok()) == Some(minor.dst)
        && row.and_then(|r| r.checked_rem(len_u64(LINE))) == Some(0)
}

/// What stays fixed along the transpose's odometer (see [`transpose`]).
struct Walk<'a> {
    src: &'a [u8],
    /// The source-minor axis and the innermost (destination-minor) axis.
    pair: (Axis, Axis),
    /// [`Order::Fused`]: the axis just outside the source-minor one, which continues it in the
    /// source (its source stride is the source-minor axis's extent in elements).
    fused: Option<Axis>,
    /// [`Order::FusedColumns`]: the axis after the source-minor one continues the innermost one in
    /// the destination, and whole tile-rows go through [`Walk::fused_columns`].
    columns: bool,
    /// Whether one of the pair is a short axis inside a contiguous run.
    short: Short,
    /// Destination-minor columns per band, at least one micro-tile.
    band: u64,
    stores: Stores,
    /// How the pieces of a fused walk's group seams are stored ([`FAR_SEAMS`]).
    seams: Stores,
    /// What source the walk asks for ahead of its micro-tiles ([`asks_ahead`]).
    ahead: Ahead,
    /// The rows wrap ([`wraps`]) by this many columns (0: they do not): the micro-tiles start
    /// at column `wrap` of each row, on a destination line, and the last one of a row takes
    /// its last columns and the next row's first `wrap`. The first row's first columns are moved
    /// on their own ([`Walk::head`]), and the last row's last tile stops at the row's end. Fused
    /// rows follow each other `e` at a time: the line of each group's last row is cut at the
    /// seam and its columns past it stored at the next group's first row ([`Seam`]).
    wrap: u64,
    /// Whether the strip stages its micro-tiles ([`plan::stages`](super::plan::stages)).
    staged: bool,
    /// The carries of the deinterleaves' lines into a destination off a line (`lines.rs`),
    /// kept across tiles: a row's lines continue in the next tile along it.
    lines: core::cell::RefCell<RowLines>,
}

/// What source a transpose's walk asks for ahead (`prefetcht0`, a hint that reads nothing), when
/// its rows are short enough ([`asks_ahead`]) that they end before the hardware's prefetchers
/// have learnt them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ahead {
    /// Nothing: long rows are the hardware's prefetchers' own work.
    Off,
    /// [`Order::SourceRuns`]: each band's (one micro-tile's) source runs, one band ahead.
    NextBand,
    /// [`Order::Bands`]: in each tile-row, the source runs of the micro-tile this many columns
    /// on ([`AHEAD_LINES`], at least the next micro-tile), each run's last line.
    Columns(u64),
}

/// One row of micro-tiles: rows `first .. first + rows` of the row axis (the source-minor axis,
/// or the fused pair) by the destination-minor columns `j0 .. j1`.
#[derive(Debug, Clone, Copy, Default)]
struct Band {
    first: u64,
    rows: u64,
    j0: u64,
    j1: u64,
    /// Whether the rows end the row axis (a wrapping walk's last row has no next row).
    last: bool,
}

impl Walk<'_> {
    /// The odometer over `outer`; once it has passed the source-minor axis, `band` is the row of
    /// micro-tiles to move.
    fn run<const N: usize>(&self, dst: &mut [u8], outer: &[Axis], src_minor: usize, s: i64, d: i64, band: Band)
    where
        Bytes<N>: Width,
    {
        let Some((axis, rest)) = outer.split_first() else {
            self.tiles::<N>(dst, (s, d), band);
            return;
        };
        let next = src_minor.wrapping_sub(1);
        // The row axis: the source-minor axis alone (offsets stepped here), or fused with the
        // axis before it (this one; rows addressed in `tiles`, so the offsets stay put).
        let rows = match self.fused {
            Some(outside) if src_minor == 1 => {
                let Some((_, after)) = rest.split_first() else { return };
                Some((outside.extent.saturating_mul(self.pair.0.extent), after, next.wrapping_sub(1), false))
            }
            None if src_minor == 0 => Some((axis.extent, rest, next, true)),
            _ => None,
        };
        if let Some((total, after, next, stepped)) = rows {
            let m = <Bytes<N> as Width>::M as u64;
            // Rows per call: a micro-tile's, or all of them when they make one destination run.
            let per = if self.short == Short::Destination { total.max(1) } else { m };
            let inner = self.pair.1.extent;
            // The strips store whole destination lines: the innermost axis must be contiguous there.
            let strips = after.is_empty() && self.short == Short::Neither && self.pair.1.dst == to_i64(len_u64(N));
            // Where the band narrows (`plan::narrowed`: source rows a multiple of 16 KiB apart),
            // the strip's runs start on source lines: the rows before the source's first line
            // move on their own (`lead_rows`), through `Walk::tiles`, and the strip starts after
            // them. From a source 16 bytes past a line (a `Vec`, a numpy array) every run would
            // otherwise straddle two lines. Rows follow each other in the source, fused or not.
            let row_bytes = total.saturating_mul(len_u64(N));
            let lead_rows =
                if strips && narrowed(row_bytes, self.pair.1.src) { lead::<N>(self.src, s).min(total) } else { 0 };
            // Every run of the strip starts as far past a line as the first: its rows are a
            // multiple of 64 bytes apart whenever `band_columns` narrows.
            let straddles = at(step(s, lead_rows, self.pair.0.src))
                .and_then(|o| self.src.get(o..))
                .is_some_and(|rest| rest.as_ptr().align_offset(LINE) != 0);
            let source = (row_bytes, self.pair.1.src);
            let width = band_columns(self.band, len_u64(N), source, self.pair.0.dst, straddles).max(m);
            // Bands start where the destination's lines do, so every whole micro-tile stores
            // whole lines: the columns before the first line boundary make a band of their own
            // (unless the rows wrap, `Walk::wrap`: then every row's first columns end the row
            // before it, and only the first row's are moved on their own).
            let lead = match (self.short, self.wrap) {
                (Short::Neither, 0) if !self.columns => lead::<N>(dst, d),
                _ => 0,
            };
            if self.wrap > 0 && stepped {
                self.head::<N>(dst, s, d);
            }
            // The rows in blocks (`plan::row_block`), every band through one block before the
            // next block starts; one block of every row where the strip is not stepped.
            let block = if strips && stepped && self.fused.is_none() {
                row_block(len_u64(N), total.saturating_sub(lead_rows), axis.dst)
            } else {
                total
            };
            let mut from = lead_rows;
            loop {
                let end = if total.saturating_sub(from) <= block { total } else { from.saturating_add(block) };
                let mut j0 = 0;
                while j0 < inner {
                    let j1 = band_end(j0, lead, width, inner);
                    if lead_rows > 0 && from == lead_rows {
                        let band = Band { first: 0, rows: lead_rows, j0, j1, last: lead_rows >= total };
                        self.run::<N>(dst, after, next, s, d, band);
                    }
                    let mut i = from;
                    if strips {
                        i = match self.fused {
                            None if stepped => {
                                let at = (step(s, from, axis.src), step(d, from, axis.dst));
                                let rows = (total.wrapping_sub(from), end.wrapping_sub(from));
                                from.wrapping_add(self.strip::<N>(dst, at, axis, rows, (j0, j1)))
                            }
                            Some(outside) if !stepped => {
                                self.fused_strip::<N>(dst, (s, d), outside, (from, total), (j0, j1))
                            }
                            _ => i,
                        };
                    }
                    while i < end {
                        let rows = per.min(end.wrapping_sub(i));
                        if self.ahead == Ahead::NextBand && stepped && after.is_empty() {
                            self.prefetch::<N>(s, axis, i, j1);
                        }
                        let (s, d, first) =
                            if stepped { (step(s, i, axis.src), step(d, i, axis.dst), 0) } else { (s, d, i) };
                        let last = i.saturating_add(rows) >= total;
                        let whole = self.columns && stepped && rows == m && (j0, j1) == (0, inner);
                        if !(whole
                            && after.first().is_some_and(|&outside| self.fused_columns::<N>(dst, (s, d), outside)))
                        {
                            self.run::<N>(dst, after, next, s, d, Band { first, rows, j0, j1, last });
                        }
                        i = i.wrapping_add(per);
                    }
                    j0 = j1;
                }
                if end >= total {
                    break;
                }
                from = end;
            }
        } else if let ([row_axis], Short::Destination | Short::Source, None) = (rest, self.short, self.fused) {
            self.interleaved_axis::<N>(dst, (axis, row_axis), s, d);
        } else {
            for k in 0..axis.extent {
                self.run::<N>(dst, rest, next, step(s, k, axis.src), step(d, k, axis.dst), band);
            }
        }
    }

    /// The axis just outside a (de)interleave's row axis (the short one, at most a micro-tile's
    /// rows): each step is what [`Walk::run`]'s rows branch would do, one (de)interleave of every
    /// row, by bands of the innermost axis for a deinterleave; whole groups of lines, the whole
    /// axis in one call.
    fn interleaved_axis<const N: usize>(&self, dst: &mut [u8], (axis, row_axis): (&Axis, &Axis), s: i64, d: i64)
    where
        Bytes<N>: Width,
    {
        let (minor, inner) = self.pair;
        let width = self.band.max(<Bytes<N> as Width>::M as u64);
        // An interleave whose rows are whole groups of lines: the whole axis in one call.
        let m = <Bytes<N> as Width>::M as u64;
        let steps = (usize::try_from(axis.extent), usize::try_from(axis.src), usize::try_from(axis.dst));
        if let (Short::Destination, Some(groups), (Ok(count), Ok(src_step), Ok(dst_step))) =
            (self.short, row_axis.extent.checked_div(m).filter(|g| g.checked_mul(m) == Some(row_axis.extent)), steps)
            && let Ok(groups) = usize::try_from(groups)
            && groups > 0
            && interleave_lines::<N>(self.src, dst, (s, d), inner, groups, (count, src_step, dst_step), self.stores)
        {
            return;
        }
        // A deinterleave whose rows are whole groups of lines, in one band: likewise.
        let line = len_u64(LINE);
        let row_lines = inner.extent.checked_mul(len_u64(N)).and_then(|bytes| {
            bytes.checked_div(line).filter(|lines| lines.checked_mul(line) == Some(bytes) && inner.extent <= width)
        });
        if let (Short::Source, Some(groups), (Ok(count), Ok(src_step), Ok(dst_step))) = (self.short, row_lines, steps)
            && let (Ok(groups), Ok(span), Some(from)) = (usize::try_from(groups), usize::try_from(minor.extent), at(s))
            && groups > 0
            && row_axis.extent == minor.extent
            && deinterleave_lines::<N>(
                self.src,
                dst,
                (from, d),
                (minor, span),
                groups,
                (count, src_step, dst_step),
                (self.stores, &mut self.lines.borrow_mut()),
            )
        {
            return;
        }
        for k in 0..axis.extent {
            let at = (step(s, k, axis.src), step(d, k, axis.dst));
            if self.short == Short::Destination {
                interleave::<N>(self.src, dst, at, inner, row_axis.extent, self.stores);
                continue;
            }
            // Rows that all start as far past a line (their stride whole lines) and stream:
            // the columns before the first line boundary make a band of their own, so that every
            // other band's whole lines are the destination's and stream as they are, where rows
            // off a line went through `RowLines`' lane shifts.
            let lead = match self.stores {
                Stores::Plain => 0,
                _ if minor.dst.checked_rem(to_i64(len_u64(LINE))) == Some(0) => lead::<N>(dst, at.1),
                _ => 0,
            };
            let mut j0 = 0;
            while j0 < inner.extent {
                let j1 = band_end(j0, lead, width, inner.extent);
                let band = Band { first: 0, rows: row_axis.extent, j0, j1, last: true };
                deinterleave::<N>(self.src, dst, at, (minor, inner), band, (self.stores, &mut self.lines.borrow_mut()));
                j0 = j1;
            }
        }
    }

    /// The transposes' hot loop: every whole micro-tile of the band `j0 .. j1` on the stepped
    /// row axis `rows` (the source-minor axis, the last outer one), of whose `total` rows left
    /// (from `(s, d)` on) it takes at most the first `stop` (a block, `plan::row_block`), all
    /// whole tile-rows but, when rows wrap, the last of the axis (whose seam may be cut:
    /// [`Walk::tiles`] takes it, as it takes a ragged end of rows or columns).
    /// Each tile's runs and lines are addressed from the band's offsets and moved in registers
    /// straight into whole destination lines ([`Width::whole`]), without [`micro_tile`]'s
    /// general cases; `u8` and `bf16` tiles through a staging buffer first, where
    /// `plan::stages` says so. The caller has checked that the innermost axis is contiguous in
    /// the destination. Returns the first row it left.
    ///
    /// Never inlined: inlined into [`Walk::run`], whose rows branch grew with the source's lead
    /// rows, r3 (whose path that did not change) ran 0.51 of memcpy against 0.54 before (seven
    /// alternated timings, one program, 2026-11-29); out of line, 0.52–0.59 against 0.51–0.57 (five
    /// timings at each of two destination offsets).
    #[inline(never)]
    fn strip<const N: usize>(
        &self,
        dst: &mut [u8],
        (s, d): (i64, i64),
        rows: &Axis,
        (total, stop): (u64, u64),
        (j0, j1): (u64, u64),
    ) -> u64
    where
        Bytes<N>: Width,
    {
        // Unstaged tiles with every stride positive: the loop below without its per-run offset
        // arithmetic.
        if !self.staged
            && let Some(done) = self.direct_strip::<N>(dst, (s, d), rows, (total, stop), (j0, j1))
        {
            return done;
        }
        let m = <Bytes<N> as Width>::M as u64;
        let inner = self.pair.1;
        let ragged = whole_tiles_end(j0, j1, m);
        // Narrow elements' tiles may be staged (`Walk::staged`): their runs copied whole into
        // `staged`, a micro-tile's lines side by side on cache lines, and the transpose reads
        // them there. On lines: the staged transposes ran faster in the alternated bench runs
        // (`users`, 64 MiB, one thread, four runs of 3–5 rounds, 2026-11-30; one tie), `u8[8192,8192]`
        // 0.57–0.68 → 0.68–0.76 of memcpy on pages and 0.56–0.59 → 0.63–0.67 on `Vec`s,
        // `bf16[4096,8192]` 0.73–0.82 → 0.82–0.93 and 0.68–0.76 → 0.79–0.82 (the runs' medians).
        // Only here: every micro-tile's lines on cache lines (`micro_tile`'s too) gained nothing
        // elsewhere in those runs, and the tiled transpose moved 0.95 → 0.81, inside its spread
        // between processes (0.47–0.99).
        let staged_tiles = self.staged;
        let mut staged = LineAligned(<Bytes<N> as Width>::lines());
        // How far along its run a staged tile asks for its source (`plan::STAGE_AHEAD` tile-rows).
        let far = STAGE_AHEAD.saturating_mul(m);
        let mut i: u64 = 0;
        // Without wrapped rows the last tile-row has no seam to cut: the strip takes it too.
        while i.checked_add(m).is_some_and(|end| end <= stop && (end < total || (end == total && self.wrap == 0))) {
            if self.ahead == Ahead::NextBand {
                self.prefetch::<N>(s, rows, i, j1);
            }
            // A staged tile asks for its runs `far` on while the rows axis has them, unless the
            // walk asks ahead otherwise.
            let asks_far = staged_tiles
                && self.ahead == Ahead::Off
                && i.checked_add(far).and_then(|f| f.checked_add(m)).is_some_and(|end| end <= total);
            let (si, di) = (step(s, i, rows.src), step(d, i, rows.dst));
            let mut column0 = j0;
            while column0 < ragged {
                if let Ahead::Columns(ahead) = self.ahead {
                    self.prefetch::<N>(s, rows, i, column0.saturating_add(ahead));
                }
                let column = column0.saturating_add(self.wrap);
                let (from, to) = (step(si, column, inner.src), step(di, column, inner.dst));
                let line = |k: usize| at(step(to, len_u64(k), rows.dst));
                if staged_tiles {
                    let lines = staged.0.as_mut();
                    if asks_far {
                        for r in 0..lines.len() {
                            if let Some(offset) = at(step(self.run_offset(from, (column, rows.src), r), far, rows.src))
                            {
                                tile::prefetch(self.src, offset, tile::Level::Second);
                            }
                        }
                    }
                    for (r, staged_line) in lines.iter_mut().enumerate() {
                        *staged_line = *self.wrapped_run(from, (column, rows.src), r);
                    }
                    // Opaque to the optimizer, which would otherwise read the source lines
                    // straight into the transpose again and drop the copy.
                    let lines: &[[u8; LINE]] = core::hint::black_box(staged.0.as_ref());
                    let runs = <Bytes<N> as Width>::runs(|r| lines.get(r).unwrap_or(&ZERO_LINE));
                    <Bytes<N> as Width>::whole(&runs, dst, line, self.stores);
                } else {
                    let runs = <Bytes<N> as Width>::runs(|r| self.wrapped_run(from, (column, rows.src), r));
                    <Bytes<N> as Width>::whole(&runs, dst, line, self.stores);
                }
                column0 = column0.wrapping_add(m);
            }
            if ragged < j1 {
                self.tiles::<N>(dst, (si, di), Band { first: 0, rows: m, j0: ragged, j1, last: false });
            }
            i = i.wrapping_add(m);
        }
        i
    }

    /// [`strip`](Self::strip) for unstaged tiles when every stride of the pair is positive
    /// (`None` otherwise): the same tiles in the same order, each tile-row's and each column
    /// group's offsets stepped from the last instead of computed per run and per line, in a
    /// function of its own:
    /// `f32[4096,4096]{0,1}` → `{1,0}` on a line, one program alternating both, three processes,
    /// 9.5–9.7 ms per 64 MiB against 11.2–12.4 through the general loop (issue 36,
    /// docs/relayout.md "Speed", "A leaner strip").
    #[inline(never)]
    fn direct_strip<const N: usize>(
        &self,
        dst: &mut [u8],
        (s, d): (i64, i64),
        rows: &Axis,
        (total, stop): (u64, u64),
        (j0, j1): (u64, u64),
    ) -> Option<u64>
    where
        Bytes<N>: Width,
    {
        let m = <Bytes<N> as Width>::M as u64;
        let inner = self.pair.1;
        let ragged = whole_tiles_end(j0, j1, m);
        let positive = |stride: i64| usize::try_from(stride).ok();
        let (row_src, row_dst) = (positive(rows.src)?, positive(rows.dst)?);
        let (run_src, run_dst) = (positive(inner.src)?, positive(inner.dst)?);
        // The first tile-row's first runs and lines, from the band's first column (wrapping
        // walks start `wrap` columns on, `Walk::wrap`).
        let first = j0.checked_add(self.wrap)?;
        let (mut from_row, mut to_row) = (at(step(s, first, inner.src))?, at(step(d, first, inner.dst))?);
        // A run at or past its row's end is the next row's first columns: this many bytes on
        // from where it would be (negative, as a wrapping offset).
        let extent = usize::try_from(inner.extent).ok()?;
        let back = row_src.wrapping_sub(run_src.wrapping_mul(extent));
        let per = <Bytes<N> as Width>::M;
        let (tile_src, tile_dst) = (per.checked_mul(row_src)?, per.checked_mul(row_dst)?);
        let (group_src, group_dst) = (per.checked_mul(run_src)?, per.checked_mul(run_dst)?);
        let mut i: u64 = 0;
        // Without wrapped rows the last tile-row has no seam to cut: the strip takes it too.
        while i.checked_add(m).is_some_and(|end| end <= stop && (end < total || (end == total && self.wrap == 0))) {
            if self.ahead == Ahead::NextBand {
                self.prefetch::<N>(s, rows, i, j1);
            }
            let (mut from, mut to) = (from_row, to_row);
            let mut column0 = j0;
            while column0 < ragged {
                if let Ahead::Columns(ahead) = self.ahead {
                    self.prefetch::<N>(s, rows, i, column0.saturating_add(ahead));
                }
                // Runs `wraps ..` are the next row's (a wrapped tile's seam).
                let wraps = inner.extent.saturating_sub(column0.saturating_add(self.wrap));
                let runs = <Bytes<N> as Width>::runs(|r| {
                    let run = from.wrapping_add(r.wrapping_mul(run_src));
                    let run = if len_u64(r) >= wraps { run.wrapping_add(back) } else { run };
                    src_line(self.src, run).unwrap_or(&ZERO_LINE)
                });
                <Bytes<N> as Width>::whole(&runs, dst, |k| Some(to.wrapping_add(k.wrapping_mul(row_dst))), self.stores);
                (from, to) = (from.wrapping_add(group_src), to.wrapping_add(group_dst));
                column0 = column0.wrapping_add(m);
            }
            if ragged < j1 {
                let (si, di) = (step(s, i, rows.src), step(d, i, rows.dst));
                self.tiles::<N>(dst, (si, di), Band { first: 0, rows: m, j0: ragged, j1, last: false });
            }
            (from_row, to_row) = (from_row.wrapping_add(tile_src), to_row.wrapping_add(tile_dst));
            i = i.wrapping_add(m);
        }
        Some(i)
    }

    /// One tile-row of [`Order::FusedColumns`] (at `(s, d)`, `M` rows of the source-minor axis):
    /// the innermost axis (extent `e`) and `outside`, which continues it in the destination, make
    /// `e × outside.extent` contiguous destination columns, cut into micro-tiles of `M`; column
    /// `c` is element `c mod e` of the innermost axis and `c div e` of `outside`, its run (`M`
    /// elements along the source-minor axis) wherever the two axes put it in the source. Each
    /// micro-tile stores `M` whole destination lines; into a destination whose lines start whole
    /// lanes past a cache line (a `Vec`, a numpy array) through the walk's [`RowLines`], one slot
    /// per line of a tile, or one for all when each tile is one destination run (the lines of
    /// a tile one line apart, one tile per row), so that the lines of consecutive tiles complete
    /// each other and stream whole. Returns `false`, having written nothing, when `outside` does
    /// not continue the innermost axis in whole micro-tiles (a part of the box, `run_range`, may
    /// have cut it).
    fn fused_columns<const N: usize>(&self, dst: &mut [u8], (s, d): (i64, i64), outside: Axis) -> bool
    where
        Bytes<N>: Width,
    {
        let m = <Bytes<N> as Width>::M as u64;
        let (minor, inner) = self.pair;
        let columns = inner.extent.saturating_mul(outside.extent);
        if inner.extent == 0 || outside.dst != step(0, inner.extent, inner.dst) || columns.checked_rem(m) != Some(0) {
            return false;
        }
        let line = to_i64(len_u64(LINE));
        let carried = self.stores == Stores::Streaming && minor.dst.checked_rem(line) == Some(0);
        let one_run = columns == m && minor.dst == line;
        let mut c0 = 0;
        while c0 < columns {
            let runs = <Bytes<N> as Width>::runs(|r| {
                let column = c0.saturating_add(len_u64(r));
                let (along, within) =
                    (column.checked_div(inner.extent).unwrap_or(0), column.checked_rem(inner.extent).unwrap_or(0));
                at(step(step(s, along, outside.src), within, inner.src))
                    .and_then(|f| src_line(self.src, f))
                    .unwrap_or(&ZERO_LINE)
            });
            let to = step(d, c0, inner.dst);
            match at(to).and_then(|t| RowLines::lanes_past(dst, t)) {
                Some(past) if carried => {
                    let mut lines = self.lines.borrow_mut();
                    lines.begin(dst, past);
                    <Bytes<N> as Width>::transpose(&runs, |k, piece| {
                        if let Some(t) = at(step(to, len_u64(k), minor.dst)) {
                            lines.put(dst, if one_run { 0 } else { k }, t, piece);
                        }
                    });
                }
                _ => <Bytes<N> as Width>::whole(&runs, dst, |k| at(step(to, len_u64(k), minor.dst)), self.stores),
            }
            c0 = c0.saturating_add(m);
        }
        true
    }

    /// [`strip`](Self::strip) for fused rows ([`Order::Fused`]; the tiled transpose
    /// `{0,1:T(8,128)(2,1)}` of a row-major array): row `r` is element `r mod e` of the
    /// source-minor axis and `r div e` of `outside`, so a micro-tile's runs are contiguous in the
    /// source and its lines land at two-level addresses, computed once per tile-row. Whole
    /// tile-rows. In a wrapping walk ([`Walk::wrap`]) the tile that crosses each row's seam, the
    /// ragged columns and a last partial tile-row go through [`Walk::tiles`]: a group's last
    /// row's line is cut at the seam, its columns past it the next group's first row's first
    /// ([`Seam`]), so only the walk's first row has its first columns moved on their own
    /// ([`Walk::head`]). Starts at row `first` (the caller
    /// has moved the rows before the source's first line, [`Walk::run`]); returns the first row
    /// it left.
    fn fused_strip<const N: usize>(
        &self,
        dst: &mut [u8],
        (s, d): (i64, i64),
        outside: Axis,
        (first, total): (u64, u64),
        (j0, j1): (u64, u64),
    ) -> u64
    where
        Bytes<N>: Width,
    {
        let m = <Bytes<N> as Width>::M as u64;
        let (minor, inner) = self.pair;
        // Whole micro-tiles; when rows wrap, those before the one that crosses a row's seam.
        let ragged = whole_tiles_end(j0, j1.min(inner.extent.saturating_sub(self.wrap)), m);
        // The tile-row's lines' destination offsets (the first `M` entries).
        let mut lines = <Bytes<N> as Width>::offsets();
        let mut i: u64 = first;
        while i.checked_add(m).is_some_and(|end| end <= total) {
            let rows = lines.as_mut().get_mut(..<Bytes<N> as Width>::M).unwrap_or_default();
            fused_offsets(i, (minor, outside), rows);
            let si = step(s, i, minor.src);
            let last = i.saturating_add(m) >= total;
            // `tiles` moves the first row's head itself when it takes every tile here.
            if self.wrap > 0 && j0 == 0 && i == 0 && ragged > j0 {
                self.head::<N>(dst, si, d.wrapping_add(rows.first().copied().unwrap_or(0)));
            }
            let mut column = j0;
            while column < ragged {
                let shifted = column.saturating_add(self.wrap);
                let (from, to) = (step(si, shifted, inner.src), step(d, shifted, inner.dst));
                let runs = <Bytes<N> as Width>::runs(|r| {
                    at(step(from, len_u64(r), inner.src)).and_then(|f| src_line(self.src, f)).unwrap_or(&ZERO_LINE)
                });
                let line = |k: usize| lines.as_ref().get(k).and_then(|&row| at(row.wrapping_add(to)));
                <Bytes<N> as Width>::whole(&runs, dst, line, self.stores);
                column = column.wrapping_add(m);
            }
            if ragged < j1 {
                self.tiles::<N>(dst, (s, d), Band { first: i, rows: m, j0: ragged, j1, last });
            }
            i = i.wrapping_add(m);
        }
        i
    }

    /// Run `r` of the micro-tile whose first run starts at source offset `from`, column `column`
    /// of its row (shifted by [`Walk::wrap`]), the rows `next_row` bytes apart in the source:
    /// runs past the row's last column (a wrapped tile's seam) are the next row's first columns.
    /// A run outside the source reads as zeros (a planned box has none).
    #[inline]
    fn wrapped_run(&self, from: i64, (column, next_row): (u64, i64), r: usize) -> &[u8; LINE] {
        at(self.run_offset(from, (column, next_row), r)).and_then(|f| src_line(self.src, f)).unwrap_or(&ZERO_LINE)
    }

    /// The source offset of [`wrapped_run`](Self::wrapped_run)'s run `r`.
    #[inline]
    fn run_offset(&self, from: i64, (column, next_row): (u64, i64), r: usize) -> i64 {
        let inner = self.pair.1;
        let offset = step(from, len_u64(r), inner.src);
        if len_u64(r) >= inner.extent.saturating_sub(column) {
            offset.wrapping_add(next_row.wrapping_sub(inner.src.wrapping_mul(to_i64(inner.extent))))
        } else {
            offset
        }
    }

    /// Asks for the source runs of the micro-tile at row `i` and columns `next ..` (the next
    /// band's, or the one [`Ahead::Columns`] on), when [`asks_ahead`] said so for the walk: the
    /// line of each run's first byte, or under [`Ahead::Columns`] of its last byte. A run off a
    /// line spans two lines, and the tile-row before it has read the first (its own runs'
    /// second lines).
    fn prefetch<const N: usize>(&self, s: i64, rows: &Axis, i: u64, next: u64)
    where
        Bytes<N>: Width,
    {
        let m = <Bytes<N> as Width>::M as u64;
        let inner = self.pair.1;
        if next >= inner.extent {
            return;
        }
        // A wrapping walk's tiles start `wrap` columns on.
        let base = step(step(s, i, rows.src), next.saturating_add(self.wrap), inner.src);
        let last = matches!(self.ahead, Ahead::Columns(_));
        for j in 0..m.min(inner.extent.wrapping_sub(next)) {
            if let Some(offset) = at(step(base, j, inner.src)) {
                tile::prefetch(
                    self.src,
                    if last { offset.saturating_add(LINE - 1) } else { offset },
                    tile::Level::First,
                );
            }
        }
    }

    /// One row of micro-tiles: `rows` elements of the source-minor axis by the band `j0..j1` of
    /// the destination-minor axis; whole destination lines through a micro-tile, the ragged end
    /// of the band element by element, unless a [`Short`] axis makes it a (de)interleave. With a
    /// fused axis (`outside`), row `r` is element `r mod e` of the source-minor axis (extent
    /// `e`) and `r div e` of the axis outside it: contiguous in the source, at two-level
    /// addresses in the destination.
    #[inline]
    fn tiles<const N: usize>(&self, dst: &mut [u8], (s, d): (i64, i64), Band { first, rows, j0, j1, last }: Band)
    where
        Bytes<N>: Width,
    {
        let (src, ((minor, inner), outside), stores) = (self.src, (self.pair, self.fused), self.stores);
        match self.short {
            Short::Source => {
                let band = Band { first, rows, j0, j1, last };
                return deinterleave::<N>(
                    src,
                    dst,
                    (s, d),
                    (minor, inner),
                    band,
                    (stores, &mut self.lines.borrow_mut()),
                );
            }
            Short::Destination if j0 == 0 => return interleave::<N>(src, dst, (s, d), inner, rows, stores),
            Short::Destination | Short::Neither => {}
        }
        let height = usize::try_from(rows).unwrap_or(0).min(LINE);
        // Rows are contiguous in the source, fused or not.
        let s = step(s, first, minor.src);
        let Some(outside) = outside else {
            let rows = (height, Strided(minor.dst));
            let wrap = Wrap { shift: self.wrap, next_row: minor.src, last, group: (0, 0), pieces: Stores::Plain };
            return row_of_tiles::<N>(src, dst, (s, d), (minor, inner), rows, (j0, j1, wrap), stores);
        };
        // Each fused row's destination offset, once for the band, and the next row's (where a
        // wrapped tile's group-ending line puts its columns past the seam, [`Seam`]).
        let mut offsets = <Bytes<N> as Width>::offsets();
        let offsets = offsets.as_mut().get_mut(..=height).unwrap_or_default();
        fused_offsets(first, (minor, outside), offsets);
        // A wrapping walk moves the first row's first columns on their own.
        if self.wrap > 0 && j0 == 0 && first == 0 {
            self.head::<N>(dst, s, d.wrapping_add(offsets.first().copied().unwrap_or(0)));
        }
        let listed = Listed(offsets);
        let wrap =
            Wrap { shift: self.wrap, next_row: minor.src, last, group: (minor.extent, first), pieces: self.seams };
        row_of_tiles::<N>(src, dst, (s, d), (minor, inner), (height, listed), (j0, j1, wrap), stores);
    }

    /// A wrapping walk's first row's first [`wrap`](Walk::wrap) columns, element by element:
    /// the one part of a row no wrapped micro-tile stores.
    fn head<const N: usize>(&self, dst: &mut [u8], s: i64, d: i64) {
        let inner = self.pair.1;
        for k in 0..self.wrap {
            copy_one::<N>(self.src, dst, step(s, k, inner.src), step(d, k, inner.dst));
        }
    }
}

/// Deinterleaves: the short source-minor axis (`e < M` elements) and the innermost axis make
/// one contiguous source run, read out into `e` destination rows (bf16 `(2,1)` sub-tiles →
/// rows). Whole lines of every row in registers (`tile.rs`), `e` source lines at a time; the
/// rest element by element.
fn deinterleave<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    (s, d): (i64, i64),
    (minor, inner): (Axis, Axis),
    Band { rows, j0, j1, .. }: Band,
    stores: (Stores, &mut RowLines),
) {
    let count = usize::try_from(j1.wrapping_sub(j0)).unwrap_or(0);
    let span = usize::try_from(minor.extent).unwrap_or(1);
    let (from, to) = (step(s, j0, inner.src), step(d, j0, inner.dst));
    let Some(run) = at(from).and_then(|f| src.get(f..f.wrapping_add(count.wrapping_mul(span).wrapping_mul(N)))) else {
        return;
    };
    let row_at = |r: usize, column: usize| step(to, len_u64(r), minor.dst).wrapping_add(to_i64(len_u64(column)));
    // Whole lines of every row in registers (`tile.rs`), `span` source lines at a time.
    let mut done = 0;
    let groups = count.wrapping_mul(N) / LINE;
    if rows == minor.extent
        && let Some(from) = at(from)
        && deinterleave_lines::<N>(src, dst, (from, to), (minor, span), groups, (1, 0, 0), stores)
    {
        done = groups.wrapping_mul(LINE);
    }
    // The rest element by element.
    for r in 0..usize::try_from(rows).unwrap_or(0) {
        let row = at(row_at(r, done))
            .and_then(|t| dst.get_mut(t..t.wrapping_add(count.wrapping_mul(N).saturating_sub(done))));
        let skip = r.wrapping_mul(N);
        if let Some(row) = row {
            let groups = run.chunks_exact(span.wrapping_mul(N)).skip(done.checked_div(N).unwrap_or(0));
            for (out, group) in row.chunks_exact_mut(N).zip(groups) {
                if let Some(value) = group.get(skip..skip.wrapping_add(N)) {
                    out.copy_from_slice(value);
                }
            }
        }
    }
}

/// The whole groups of lines of [`deinterleave`] (`groups` of them from the source run at byte
/// `from`, into the `span` rows of the short axis `minor` from destination offset `to`), `count`
/// times, the source and destination stepping by `src_step` and `dst_step` bytes each time
/// (`tile::deinterleave_runs`); `false` (nothing written) when the registers do not take the
/// rows or a line is outside a buffer.
fn deinterleave_lines<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    (from, to): (usize, i64),
    (minor, span): (Axis, usize),
    groups: usize,
    repeats: (usize, usize, usize),
    stores: (Stores, &mut RowLines),
) -> bool {
    let starts = row_starts(to, minor.dst, span);
    starts
        .as_ref()
        .and_then(|starts| starts.get(..span))
        .is_some_and(|starts| tile::deinterleave_runs::<N>((src, from, groups), starts, dst, repeats, stores))
}

/// The offsets of `span` rows `stride` bytes apart from `base`, the first `span` of the array:
/// `None` when there are more than [`MAX_SPAN`] or one is outside the address range.
fn row_starts(base: i64, stride: i64, span: usize) -> Option<[usize; MAX_SPAN]> {
    let mut starts = [0usize; MAX_SPAN];
    let found = span <= MAX_SPAN
        && starts
            .iter_mut()
            .take(span)
            .enumerate()
            .all(|(r, start)| at(step(base, len_u64(r), stride)).map(|t| *start = t).is_some());
    found.then_some(starts)
}

/// Interleaves: the short innermost axis (`e < M` elements) and the source-minor axis make one
/// contiguous destination run, into which `e` source rows of `rows` elements are interleaved
/// (rows → bf16 `(2,1)` sub-tiles), all at once. Whole lines of every source row in registers
/// (`tile.rs`); the rest element by element.
fn interleave<const N: usize>(src: &[u8], dst: &mut [u8], (s, d): (i64, i64), inner: Axis, rows: u64, stores: Stores)
where
    Bytes<N>: Width,
{
    let span = usize::try_from(inner.extent).unwrap_or(0);
    let height = usize::try_from(rows).unwrap_or(0);
    let source_row = |j: usize, column: usize| at(step(s, len_u64(j), inner.src))?.checked_add(column);
    let m = <Bytes<N> as Width>::M;
    // Whole lines of every source row, interleaved in registers (`tile.rs`).
    let mut done: usize = 0;
    let groups = height.checked_div(m).unwrap_or(0);
    if groups > 0 && interleave_lines::<N>(src, dst, (s, d), inner, groups, (1, 0, 0), stores) {
        done = groups.wrapping_mul(m);
    }
    // The rest element by element.
    let (skip_src, skip_dst) = (done.wrapping_mul(N), done.wrapping_mul(span).wrapping_mul(N));
    let left = height.saturating_sub(done);
    let run_at = at(d).map(|t| t.wrapping_add(skip_dst));
    let Some(run) = run_at.and_then(|t| dst.get_mut(t..t.wrapping_add(left.wrapping_mul(span).wrapping_mul(N)))) else {
        return;
    };
    for j in 0..span {
        let row = source_row(j, skip_src).and_then(|f| src.get(f..f.wrapping_add(left.wrapping_mul(N))));
        let Some(row) = row else { continue };
        let skip = j.wrapping_mul(N);
        for (group, value) in run.chunks_exact_mut(span.wrapping_mul(N)).zip(row.chunks_exact(N)) {
            if let Some(out) = group.get_mut(skip..skip.wrapping_add(N)) {
                out.copy_from_slice(value);
            }
        }
    }
}

/// The whole groups of lines of [`interleave`], `count` times, the source and destination
/// stepping by `src_step` and `dst_step` bytes each time (`tile::interleave_runs`); `false`
/// (nothing written) when the registers do not take the rows or a line is outside a buffer.
fn interleave_lines<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    (s, d): (i64, i64),
    inner: Axis,
    groups: usize,
    (count, src_step, dst_step): (usize, usize, usize),
    stores: Stores,
) -> bool {
    let span = usize::try_from(inner.extent).unwrap_or(usize::MAX);
    let bases = row_starts(s, inner.src, span);
    match (at(d), bases.as_ref().and_then(|bases| bases.get(..span))) {
        (Some(out), Some(bases)) => {
            tile::interleave_runs::<N>(src, (bases, groups), (dst, out), (count, src_step, dst_step), stores)
        }
        _ => false,
    }
}

/// Which of a transpose's pair is a short axis inside a contiguous run, once per walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Short {
    /// Neither: micro-tiles.
    Neither,
    /// The source-minor axis is shorter than a micro-tile and the innermost axis continues it
    /// in the source: one contiguous source run per band, [`deinterleave`]d (bf16 `(2,1)`
    /// sub-tiles → rows).
    Source,
    /// The innermost (destination-minor) axis is shorter than a micro-tile and the source-minor
    /// axis continues it in the destination: one contiguous destination run, [`interleave`]d
    /// (rows → bf16 `(2,1)` sub-tiles). The walk hands it all rows of the source-minor axis at
    /// once.
    Destination,
}

/// [`Short`] for the pair `(minor, inner)` (not fused: `outside` is `None`), by the plan's rule
/// ([`short_run`]).
fn short_axis<const N: usize>((minor, inner): (Axis, Axis), outside: Option<Axis>) -> Short {
    let width = to_i64(len_u64(N));
    if outside.is_some() {
        Short::Neither
    } else if short_run(minor, (minor.src, inner.src), width) {
        Short::Source
    } else if short_run(inner, (inner.dst, minor.dst), width) {
        Short::Destination
    } else {
        Short::Neither
    }
}

/// Where row `i` of a micro-tile goes, relative to the tile's destination offset.
trait RowAt: Copy {
    fn at(self, i: usize) -> i64;
}

/// Rows one stride apart (the source-minor axis alone).
#[derive(Clone, Copy)]
struct Strided(i64);

impl RowAt for Strided {
    #[inline]
    fn at(self, i: usize) -> i64 {
        self.0.wrapping_mul(i64::try_from(i).unwrap_or(0))
    }
}

/// Rows at listed offsets (fused axes).
#[derive(Clone, Copy)]
struct Listed<'a>(&'a [i64]);

impl RowAt for Listed<'_> {
    #[inline]
    fn at(self, i: usize) -> i64 {
        self.0.get(i).copied().unwrap_or(0)
    }
}

/// How a band's rows wrap ([`Walk::wrap`]).
#[derive(Debug, Clone, Copy)]
struct Wrap {
    /// The columns the micro-tiles are shifted by (0: no wrap).
    shift: u64,
    /// The source-minor axis's source stride: one row on.
    next_row: i64,
    /// Whether the rows end the row axis.
    last: bool,
    /// Fused rows: `(e, first)`, rows follow each other `e` at a time and the band's first row
    /// is row `first` of the fused axis (`(0, 0)`: every row follows the one before).
    group: (u64, u64),
    /// How the pieces of the lines cut at the seam are stored ([`FAR_SEAMS`]).
    pieces: Stores,
}

/// The micro-tiles of one band: `height` rows placed by `rows`, columns `j0 .. j1`, shifted by
/// `wrap.shift` columns when the rows wrap ([`Walk::wrap`]).
#[inline]
fn row_of_tiles<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    (s, d): (i64, i64),
    (minor, inner): (Axis, Axis),
    (height, rows): (usize, impl RowAt),
    (j0, j1, wrap): (u64, u64, Wrap),
    stores: Stores,
) where
    Bytes<N>: Width,
{
    let m = <Bytes<N> as Width>::M as u64;
    let mut j = j0;
    while j < j1 {
        let width = m.min(j1.wrapping_sub(j));
        let column = j.saturating_add(wrap.shift);
        let (from, to) = (step(s, column, inner.src), step(d, column, inner.dst));
        if inner.dst == to_i64(len_u64(N)) || width == m {
            // Destination lines (whole ones when `width == m`, else their first `width`
            // elements); a short row axis fills the first `height` of them. Columns past the
            // row's end are the next row's first ones.
            let width = usize::try_from(width).unwrap_or(0);
            let seam = if wrap.shift == 0 {
                Seam::NONE
            } else {
                let at = usize::try_from(inner.extent.saturating_sub(column)).unwrap_or(usize::MAX);
                let delta = wrap.next_row.wrapping_sub(inner.src.wrapping_mul(to_i64(inner.extent)));
                let back = step(0, column, inner.dst);
                Seam { at, delta, last: wrap.last, group: wrap.group, back, pieces: wrap.pieces }
            };
            micro_tile::<N>(src, dst, (from, to), inner.src, (height, width, rows), seam, stores);
        } else {
            for i in 0..height {
                let row_to = to.wrapping_add(rows.at(i));
                for k in 0..width {
                    copy_one::<N>(
                        src,
                        dst,
                        step(step(from, len_u64(i), minor.src), k, inner.src),
                        step(row_to, k, inner.dst),
                    );
                }
            }
        }
        j = j.wrapping_add(m);
    }
}

/// An element width the transpose has a micro-tile for: `M` elements make a [`LINE`] (at
/// least 4), the tile is `M` source runs by `M` destination lines.
pub(crate) trait Width {
    /// `M` lines: a partial tile's source runs, zero-padded.
    type Lines: AsRef<[[u8; LINE]]> + AsMut<[[u8; LINE]]>;
    /// `M` references to source runs.
    type Runs<'a>: AsRef<[&'a [u8; LINE]]>;
    /// Elements per side of the micro-tile.
    const M: usize;
    /// A zeroed tile.
    fn lines() -> Self::Lines;
    /// `M + 1` offsets, zeroed: a tile's rows' destination offsets and the next row's.
    type Offsets: AsRef<[i64]> + AsMut<[i64]>;
    /// Zeroed [`Offsets`](Self::Offsets).
    fn offsets() -> Self::Offsets;
    /// `run(j)` for every `j < M`.
    fn runs<'a>(run: impl FnMut(usize) -> &'a [u8; LINE]) -> Self::Runs<'a>;
    /// `emit(i, line)` for each destination line `i` in order (`tile.rs`).
    fn transpose(runs: &Self::Runs<'_>, emit: impl FnMut(usize, &[u8; LINE]));
    /// The whole tile into `dst`, line `i` at byte `line(i)` (`tile.rs`).
    fn whole(runs: &Self::Runs<'_>, dst: &mut [u8], line: impl Fn(usize) -> Option<usize>, stores: Stores);
    /// [`whole`](Self::whole), with `rest(dst, i, line)` for each line `i` whose `line(i)` is
    /// `None` (`tile.rs`).
    fn split(
        runs: &Self::Runs<'_>,
        dst: &mut [u8],
        line: impl Fn(usize) -> Option<usize>,
        stores: Stores,
        rest: impl FnMut(&mut [u8], usize, &[u8; LINE]),
    );
}

/// The width `N` bytes, as a type.
pub(crate) struct Bytes<const N: usize>;

macro_rules! width {
    ($($n:literal => $m:literal, $b:literal;)*) => {$(
        impl Width for Bytes<$n> {
            type Lines = [[u8; LINE]; $m];
            type Runs<'a> = [&'a [u8; LINE]; $m];
            const M: usize = $m;
            #[inline(always)]
            fn lines() -> Self::Lines {
                [[0; LINE]; $m]
            }
            type Offsets = [i64; $m + 1];
            #[inline(always)]
            fn offsets() -> Self::Offsets {
                [0; $m + 1]
            }
            #[inline(always)]
            fn runs<'a>(run: impl FnMut(usize) -> &'a [u8; LINE]) -> Self::Runs<'a> {
                core::array::from_fn(run)
            }
            #[inline(always)]
            fn transpose(runs: &Self::Runs<'_>, emit: impl FnMut(usize, &[u8; LINE])) {
                super::tile::transpose::<$n, $m, $b>(runs, emit);
            }
            #[inline(always)]
            fn whole(runs: &Self::Runs<'_>, dst: &mut [u8], line: impl Fn(usize) -> Option<usize>, stores: Stores) {
                Self::split(runs, dst, line, stores, |_, _, _| {});
            }
            #[inline(always)]
            fn split(
                runs: &Self::Runs<'_>,
                dst: &mut [u8],
                line: impl Fn(usize) -> Option<usize>,
                stores: Stores,
                rest: impl FnMut(&mut [u8], usize, &[u8; LINE]),
            ) {
                #[cfg(target_arch = "x86_64")]
                super::tile::transpose_lanes::<$n, $m, $b>(runs, dst, line, stores, rest);
                #[cfg(not(target_arch = "x86_64"))]
                {
                    let mut rest = rest;
                    super::tile::transpose::<$n, $m, $b>(runs, |i, from| match line(i) {
                        Some(t) => {
                            if let Some(to) = line_at(dst, to_i64(len_u64(t))) {
                                put_line(to, from, stores);
                            }
                        }
                        None => rest(dst, i, from),
                    });
                }
            }
        }
    )*};
}
// Width => elements per line, elements per 16-byte lane.
width! {
    1 => 64, 16;
    2 => 32, 8;
    4 => 16, 4;
    8 => 8, 2;
    16 => 4, 1;
}

/// The most rows [`tile::interleave_runs`] and [`tile::deinterleave_runs`] take (16 one-byte
/// elements to a lane).
const MAX_SPAN: usize = 16;

/// The source line at byte `f`, if it is inside the buffer.
#[inline]
fn src_line(src: &[u8], f: usize) -> Option<&[u8; LINE]> {
    src.get(f..)?.first_chunk::<LINE>()
}

/// The destination line at `offset`, if it is inside the buffer.
#[inline]
fn line_at(dst: &mut [u8], offset: i64) -> Option<&mut [u8; LINE]> {
    let t = at(offset)?;
    dst.get_mut(t..t.checked_add(LINE)?)?.try_into().ok()
}

/// The columns of a wrapped micro-tile ([`Walk::wrap`]) that belong to the next row: runs
/// `at..` start `delta` bytes further in the source (one row on, back to its first columns);
/// when the rows end the row axis (`last`), the last row has no next row and its line stops
/// at run `at`, as does the last row of each group of fused rows ([`Wrap::group`]).
#[derive(Debug, Clone, Copy)]
struct Seam {
    at: usize,
    delta: i64,
    last: bool,
    group: (u64, u64),
    /// The destination bytes from a row's first column to the tile's first: a group's last row
    /// puts its line's columns past the seam at the next row's first columns (`d − back` plus
    /// that row's offset), which no other tile stores.
    back: i64,
    /// How the pieces of the lines cut here are stored ([`FAR_SEAMS`]).
    pieces: Stores,
}

impl Seam {
    /// No wrapped columns.
    const NONE: Self = Self { at: usize::MAX, delta: 0, last: false, group: (0, 0), back: 0, pieces: Stores::Plain };

    /// The rows of a tile of `height ≤ 64` rows that have no next row in the destination, bit
    /// `i` for row `i`: each group's last, and the tile's last when the rows end there. Once per
    /// tile, with one division.
    fn cuts(self, height: usize) -> u64 {
        let (e, first) = self.group;
        let mut cuts = if self.last { row_bit(height.wrapping_sub(1)) } else { 0 };
        if let Some(phase) = first.checked_rem(e) {
            // Row `i` ends its group when `first + i ≡ e − 1 (mod e)`.
            let mut i = e.wrapping_sub(1).wrapping_sub(phase);
            while let Some(row) = usize::try_from(i).ok().filter(|&row| row < height) {
                cuts |= row_bit(row);
                i = i.saturating_add(e);
            }
        }
        cuts
    }
}

/// Row `i`'s bit in a tile's mask of rows ([`Seam::cuts`]; 0 past 63).
fn row_bit(i: usize) -> u64 {
    u32::try_from(i).ok().and_then(|i| 1u64.checked_shl(i)).unwrap_or(0)
}

/// One micro-tile: source run `j` (`height ≤ M` elements contiguous along the row axis) starts
/// at `s + j · src_stride` (plus `seam.delta` from run `seam.at` on), for `j < width ≤ M`;
/// destination run `i` (`width` elements contiguous: one [`LINE`] when `width = M`) at
/// `d + rows.at(i)`. The tile is transposed in registers (`tile.rs`) and its first `height`
/// lines stored: whole, or their first `width` elements (or `seam.at`, for a last row with no
/// next one) with ordinary stores (the ragged columns of a band, [`lead`]); a group's last row
/// puts its columns past the seam at the next row's first ([`Seam`]), those pieces stored as
/// `seam.pieces` says. A short tile's runs are first copied into a zero-padded tile, as is a
/// tile whose last row has no next row where the source ends before its runs past the seam.
#[inline]
fn micro_tile<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    (s, d): (i64, i64),
    src_stride: i64,
    (height, width, rows): (usize, usize, impl RowAt),
    seam: Seam,
    stores: Stores,
) where
    Bytes<N>: Width,
{
    let m = <Bytes<N> as Width>::M;
    let (height, width) = (height.min(m), width.min(m));
    // A last row whose line would run into a next row: its line stops at the seam.
    let cut = seam.last && seam.at < width;
    let run_at = |j: usize| {
        let offset = s.wrapping_add(src_stride.wrapping_mul(i64::try_from(j).unwrap_or(0)));
        let offset = if j >= seam.at { offset.wrapping_add(seam.delta) } else { offset };
        if j < width { at(offset) } else { None }
    };
    // The rows cut at the seam.
    let cuts = if seam.at < width { seam.cuts(height) } else { 0 };
    let emit = |dst: &mut [u8], i: usize, line: &[u8; LINE]| {
        if i >= height {
            return;
        }
        let cut = seam.at < width && cuts & row_bit(i) != 0;
        let columns = if cut { seam.at } else { width };
        let bytes = columns.wrapping_mul(N);
        if columns == m {
            if let Some(to) = line_at(dst, d.wrapping_add(rows.at(i))) {
                put_line(to, line, stores);
            }
        } else if let (Some(to), Some(part)) =
            (at(d.wrapping_add(rows.at(i))).and_then(|t| dst.get_mut(t..t.wrapping_add(bytes))), line.get(..bytes))
        {
            put_part(to, part, if cut { seam.pieces } else { Stores::Plain });
        }
        // A group's last row that has a next row: its columns past the seam are that row's first.
        if cut && !(seam.last && i.wrapping_add(1) == height) {
            let head = d.wrapping_sub(seam.back).wrapping_add(rows.at(i.wrapping_add(1)));
            let part = line.get(bytes..width.wrapping_mul(N)).unwrap_or_default();
            if let Some(to) = at(head).and_then(|t| dst.get_mut(t..t.checked_add(part.len())?)) {
                put_part(to, part, seam.pieces);
            }
        }
    };
    // A tile cut at the seam reads its runs whole where the source holds them: past the seam,
    // their last element is the next row's, which the cut line does not store.
    let whole_runs = height == m && (!cut || (0..width).all(|j| run_at(j).and_then(|f| src_line(src, f)).is_some()));
    if whole_runs {
        let runs = <Bytes<N> as Width>::runs(|j| run_at(j).and_then(|f| src_line(src, f)).unwrap_or(&ZERO_LINE));
        // Whole lines straight into the destination lines; those cut at a seam (a group's last
        // row's, the last row's) through `emit`.
        if width == m {
            let whole =
                |i: usize| (seam.at >= m || cuts & row_bit(i) == 0).then(|| at(d.wrapping_add(rows.at(i)))).flatten();
            <Bytes<N> as Width>::split(&runs, dst, whole, stores, emit);
        } else {
            <Bytes<N> as Width>::transpose(&runs, |i, line| emit(dst, i, line));
        }
    } else {
        let mut tile = <Bytes<N> as Width>::lines();
        for (j, run) in tile.as_mut().iter_mut().enumerate() {
            // A run past the seam of a cut tile has no element for the last row.
            let len = N.wrapping_mul(if cut && j >= seam.at { height.saturating_sub(1) } else { height });
            if let (Some(from), Some(into)) =
                (run_at(j).and_then(|f| src.get(f..f.wrapping_add(len))), run.get_mut(..len))
            {
                into.copy_from_slice(from);
            }
        }
        let lines = tile.as_ref();
        let runs = <Bytes<N> as Width>::runs(|j| lines.get(j).unwrap_or(&ZERO_LINE));
        <Bytes<N> as Width>::transpose(&runs, |i, line| emit(dst, i, line));
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

/// [`write_bits`] of an element that may start before `buf` (negative `offset`) or end after
/// it: only its bits inside `buf` are written.
#[inline]
pub(crate) fn write_bits_clipped(buf: &mut [u8], offset: i64, slot: u64, value: u128) {
    if offset >= 0 {
        write_bits(buf, offset, slot, value);
        return;
    }
    let skip = offset.unsigned_abs();
    if skip < slot {
        let rest = u32::try_from(skip).ok().and_then(|k| value.checked_shr(k)).unwrap_or(0);
        write_bits(buf, 0, slot.wrapping_sub(skip), rest);
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
