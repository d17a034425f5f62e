//! Planning: from two resolved endpoints to a list of boxes, each a strided copy with its
//! kernel picked once (the design of XLA's `TransposePlan`, extended to nested tiles, partial
//! tiles, sub-byte elements and negative strides).
//!
//! 1. **Common digits.** Each logical dimension is split into the digits both sides need (the
//!    union of their tile weights, which must form one mixed-radix chain), each with a stride
//!    per side.
//! 2. **Boxes.** A partial tile makes the index space of a dimension a union of boxes:
//!    `[0, D)` splits into `⌊D/w_k⌋` whole top digits, then the top digit fixed at `⌊D/w_k⌋`
//!    with `[0, D mod w_k)` below, recursively. The cartesian product over dimensions gives the
//!    boxes; every box is a plain strided copy.
//! 3. **Normalization** per box: drop extent-1 axes, order the axes by destination stride
//!    (writes go forward through memory), coalesce neighbours contiguous on both sides.
//! 4. **Kernel**: whole rows when the innermost axis is contiguous on both sides, a blocked 2-D
//!    transpose when the source-minor and destination-minor axes differ, sub-byte pack/unpack,
//!    else element by element.
//!
//! Layouts that are not mixed-radix (`*`, sub-tiles that add padding) fall back to the general
//! path: every element's two offsets through [`crate::physical::PhysicalMap`].

use super::StorePolicy;
use super::endpoint::{DimDigit, Resolved};
use crate::error::{Error, FieldPath, Result};
use crate::memory::extent::to_i64;

/// The most boxes a plan keeps; more (many partial tiles in many dimensions) use the general
/// path.
const MAX_BOXES: usize = 1 << 12;

/// One axis of a box: its extent and its stride on each side (bits, or bytes once a box is in
/// byte units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Axis {
    pub extent: u64,
    pub src: i64,
    pub dst: i64,
}

/// How a box moves its elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// The innermost axis is contiguous on both sides: copy it as one slice per row.
    Rows,
    /// Axis `src_minor` is contiguous in the source, the innermost axis in the destination:
    /// a cache-blocked 2-D transpose, an odometer over the other axes.
    Transpose { src_minor: usize, order: Order },
    /// Rows of `bytes` (2, 4, 8 or 16) contiguous on both sides (the innermost axis) moved as
    /// the elements of a transpose of the other axes (`src_minor`, `order` as for
    /// [`Kernel::Transpose`] on them).
    Wide { src_minor: usize, order: Order, bytes: usize },
    /// `bits`-bit elements (1, 2 or 4), packed in the source, one per byte in the destination
    /// (innermost axis).
    Unpack { bits: u32 },
    /// `bits`-bit elements (1, 2 or 4), one per byte in the source, packed in the destination.
    Pack { bits: u32 },
    /// `bits`-bit elements held along the source's rows (`rows`: one per byte, or packed),
    /// packed in the destination across source rows: the innermost axis steps through the rows
    /// of a tile's `(m,1)` sub-tile (destination stride `bits`), whose `m · bits / 8` bytes per
    /// column the axis before it (one source element, one such group) lays side by side: `s4`
    /// `T(8,128)(8,1)E(4)`, `(2,1)E(4)`, …
    PackRows { bits: u32, rows: RowElements },
    /// The inverse of [`Kernel::PackRows`]: packed across rows in the source, held along the
    /// destination's rows as `rows` says (the same two innermost axes, strides swapped).
    UnpackRows { bits: u32, rows: RowElements },
    /// Anything else: element by element along the innermost axis.
    Elements,
}

/// How the side of an across-rows kernel that holds whole rows ([`Kernel::PackRows`]' source,
/// [`Kernel::UnpackRows`]' destination) holds their elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowElements {
    /// One per byte, the value in its low bits (numpy's and `ml_dtypes`' `int4`).
    Bytes,
    /// Packed along the row, `8 / bits` to a byte, low bits first: the dense `{1,0:E(4)}` of
    /// XLA's CPU and GPU runtimes.
    Packed,
}

/// A strided box: element `k` (a multi-index over `axes`) moves from `src + Σ k·axis.src` to
/// `dst + Σ k·axis.dst`. Axes are ordered outermost first; the last is the innermost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub src: i64,
    pub dst: i64,
    pub axes: Box<[Axis]>,
    pub kernel: Kernel,
}

/// How elements are moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Whole bytes: both slots are `width` bytes and hold nothing but the value. Box offsets
    /// and strides are in bytes.
    Bytes { width: usize },
    /// Bits: offsets and strides in bits; the low `value` bits of the source slot go to the
    /// destination slot of `dst_slot` bits, the rest of it zero.
    Bits { value: u32, dst_slot: u64 },
}

/// The order in which a transpose visits its micro-tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Bands of destination-minor columns ([`band_width`]), the source-minor axis
    /// stepping by tiles inside each: the destination is written as forward streams.
    Bands,
    /// Streaming stores only: `src_minor` is the last of the outer axes and the bands are one
    /// micro-tile wide, so each band reads its source rows from end to end; the lines written,
    /// whole and without being read, may come in any order.
    SourceRuns,
    /// Bands, with the axis just before `src_minor` fused into the micro-tile's rows: the
    /// source-minor axis is shorter than a micro-tile and that axis continues it in the source
    /// (its source stride is the source-minor extent in elements), so a micro-tile reads whole
    /// source lines and writes up to `M` destination lines addressed through both axes.
    Fused,
    /// Bands, with the axis just after `src_minor` fused into the micro-tile's columns: the
    /// innermost axis is shorter than a micro-tile and that axis continues it in the destination
    /// (its destination stride is the innermost extent in elements), the two together whole
    /// micro-tiles of columns, so a micro-tile reads `M` source lines wherever the two axes put
    /// them and writes whole destination lines ([`fuse_columns`]).
    FusedColumns,
}

/// How the byte kernels write whole destination lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stores {
    /// Ordinary stores: the lines stay in cache for whoever reads the destination next.
    Plain,
    /// Non-temporal stores (`stream.rs`) where a line is aligned: the destination is far
    /// larger than the caches, and writing a line need not read it first.
    Streaming,
    /// [`Stores::Streaming`] for a box of rows that are all whole destination lines, ordinary
    /// stores for any other: the plans of short rows ([`MIN_STREAMED_ROW`]) under
    /// [`StorePolicy::Auto`], which stream only where they can walk in source order
    /// (`kernel::rows`).
    WholeLines,
}

impl Stores {
    /// What `policy` means for a destination of `len` bytes on this target.
    fn resolve(policy: StorePolicy, len: u64) -> Self {
        let streaming = match policy {
            StorePolicy::Auto => len >= super::stream::MIN_STREAM_BYTES,
            StorePolicy::Cached => false,
            StorePolicy::Streaming => true,
        };
        if streaming && super::stream::available() { Self::Streaming } else { Self::Plain }
    }
}

/// What a plan does.
#[derive(Debug, Clone)]
pub(crate) enum Strategy {
    /// Same bytes on both sides: one copy.
    Identity { stores: Stores },
    /// The boxes, in bytes or bits.
    Boxes { unit: Unit, blocks: Box<[Block]>, stores: Stores },
    /// Element by element through both sides' offset functions.
    General { unit: Unit },
}

/// Boxes [`Strategy::explain`] lists one by one; the rest are counted.
const EXPLAINED_BOXES: usize = 16;

impl Strategy {
    /// What the plan decided, for people: the strategy, the stores, and each box's axes (extent,
    /// source and destination strides, outermost first) and kernel.
    pub(crate) fn explain(&self, out: &mut impl std::fmt::Write) -> std::fmt::Result {
        let stores = |s: Stores| match s {
            Stores::Plain => "ordinary stores",
            Stores::Streaming => "streaming stores",
            Stores::WholeLines => "streaming stores where a box's rows are whole lines, else ordinary stores",
        };
        let unit = |u: Unit| match u {
            Unit::Bytes { width } => format!("whole elements of {width} bytes, strides in bytes"),
            Unit::Bits { value, dst_slot } => {
                format!("bits ({value} value bits into {dst_slot}-bit slots), strides in bits")
            }
        };
        match self {
            Self::Identity { stores: s } => writeln!(out, "identity: one copy of the buffer, {}", stores(*s)),
            Self::General { unit: u } => {
                writeln!(out, "general: element by element through both offset functions; {}", unit(*u))
            }
            Self::Boxes { unit: u, blocks, stores: s } => {
                writeln!(out, "{} box(es); {}; {}", blocks.len(), unit(*u), stores(*s))?;
                for (k, block) in blocks.iter().enumerate().take(EXPLAINED_BOXES) {
                    write!(out, "box {k} at source {}, destination {}: axes", block.src, block.dst)?;
                    for axis in &block.axes {
                        write!(out, " {}×({}, {})", axis.extent, axis.src, axis.dst)?;
                    }
                    let kernel = match block.kernel {
                        Kernel::Rows => "rows: the innermost axis copied as one run".to_owned(),
                        Kernel::Transpose { src_minor, order: Order::Bands } => format!(
                            "transpose of axis {src_minor} (source-minor) and the innermost axis, 64-byte micro-tiles \
                             in bands of {}{}{}",
                            band_text(block, src_minor, None),
                            ahead_text(block, src_minor),
                            staged_text(
                                block,
                                src_minor,
                                bands_ask_ahead(&block.axes, src_minor, block.axes.last().map_or(0, |a| a.dst))
                            )
                        ),
                        Kernel::Transpose { src_minor, order: Order::Fused } => format!(
                            "transpose of axes {} and {src_minor} (fused: together contiguous in the source, \
                             the micro-tile's rows) and the innermost axis, 64-byte micro-tiles in bands of {}",
                            src_minor.wrapping_sub(1),
                            band_text(block, src_minor, src_minor.checked_sub(1))
                        ),
                        Kernel::Transpose { src_minor, order: Order::FusedColumns } => format!(
                            "transpose of axis {src_minor} (source-minor) and the innermost axis fused with axis {} \
                             (together contiguous in the destination, the micro-tile's columns), 64-byte micro-tiles \
                             storing whole destination lines",
                            src_minor.wrapping_add(1)
                        ),
                        Kernel::Transpose { src_minor, order: Order::SourceRuns } => format!(
                            "transpose of axis {src_minor} (source-minor) and the innermost axis, 64-byte micro-tiles \
                             in source order (streamed lines){}{}",
                            if block.axes.get(src_minor).is_some_and(|a| asks_ahead(a.extent)) {
                                ", each band's source asked for one band ahead"
                            } else {
                                ""
                            },
                            staged_text(
                                block,
                                src_minor,
                                block.axes.get(src_minor).is_some_and(|a| asks_ahead(a.extent))
                            )
                        ),
                        Kernel::Wide { src_minor, order, bytes } => format!(
                            "rows of {bytes} bytes moved as elements of a transpose of axis {src_minor} \
                             (source-minor) and the innermost other axis ({order:?})"
                        ),
                        Kernel::Unpack { bits } => format!("unpack {bits}-bit elements"),
                        Kernel::Pack { bits } => format!("pack {bits}-bit elements"),
                        Kernel::PackRows { bits, rows: RowElements::Bytes } => {
                            format!("pack {bits}-bit elements across the innermost axis's rows, a column at a time")
                        }
                        Kernel::PackRows { bits, rows: RowElements::Packed } => format!(
                            "repack {bits}-bit elements packed along rows across the innermost axis's rows, a column \
                             at a time"
                        ),
                        Kernel::UnpackRows { bits, rows: RowElements::Bytes } => {
                            format!("unpack {bits}-bit elements packed across the innermost axis's rows")
                        }
                        Kernel::UnpackRows { bits, rows: RowElements::Packed } => {
                            format!("repack {bits}-bit elements packed across the innermost axis's rows along rows")
                        }
                        Kernel::Elements => "element by element along the innermost axis".to_owned(),
                    };
                    writeln!(out, "; {kernel}")?;
                }
                if let Some(more) = blocks.len().checked_sub(EXPLAINED_BOXES).filter(|&m| m > 0) {
                    writeln!(out, "… and {more} more box(es)")?;
                }
                Ok(())
            }
        }
    }
}

fn overflow() -> Error {
    Error::Overflow { path: FieldPath::root().field("relayout"), what: crate::error::Quantity::BufferOffset }
}

/// The unit of a pair of sides.
pub(crate) fn unit(src: &Resolved, dst: &Resolved) -> Unit {
    let bytes = src.slot_bits == src.value_bits
        && dst.slot_bits == dst.value_bits
        && src.slot_bits == dst.slot_bits
        && src.slot_bits % 8 == 0;
    match usize::try_from(src.slot_bits / 8) {
        Ok(width) if bytes => Unit::Bytes { width },
        // value_bits ≤ 128 (the widest container is 16 bytes).
        _ => Unit::Bits {
            value: u32::try_from(src.value_bits.min(dst.value_bits)).unwrap_or(128),
            dst_slot: dst.slot_bits,
        },
    }
}

/// The box a plan moves ([`super::Window`]); the whole arrays for `RelayoutPlan::new`.
/// Element `I` (`I < extent`) moves from the source's `src + I` to the destination's `dst + I`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub extent: Box<[u64]>,
    pub src: Box<[u64]>,
    pub dst: Box<[u64]>,
}

impl Span {
    /// The whole of `bounds`, from zero on both sides.
    pub fn whole(bounds: &[u64]) -> Self {
        let zeros: Box<[u64]> = vec![0; bounds.len()].into();
        Self { extent: bounds.into(), src: zeros.clone(), dst: zeros }
    }

    /// Whether the span is all of a side of `bounds` whose starts are `starts`.
    pub fn covers(&self, starts: &[u64], bounds: &[u64]) -> bool {
        starts.iter().all(|&s| s == 0) && *self.extent == *bounds
    }
}

/// Picks the strategy.
pub(crate) fn strategy(src: &Resolved, dst: &Resolved, span: &Span, policy: StorePolicy) -> Result<Strategy> {
    let unit = unit(src, dst);
    let (Some(a), Some(b)) = (&src.digits, &dst.digits) else { return Ok(Strategy::General { unit }) };
    let Some(blocks) = boxes(span, a, b, src.base, dst.base)? else { return Ok(Strategy::General { unit }) };
    let stores = Stores::resolve(policy, dst.len);
    let blocks: Vec<Block> = match unit {
        Unit::Bytes { width } => {
            let mut out = Vec::with_capacity(blocks.len());
            for block in blocks {
                out.push(finish(to_bytes(&block), i64::try_from(width).map_err(|_| overflow())?, stores));
            }
            out
        }
        Unit::Bits { value, dst_slot } => {
            blocks.into_iter().map(|b| finish_bits(b, value, src.slot_bits, dst_slot)).collect()
        }
    };
    let identity = matches!(unit, Unit::Bytes { width } if identical(&blocks, width, src, dst));
    let stores = match unit {
        Unit::Bytes { width } if policy == StorePolicy::Auto && !identity && short_rows(&blocks, width) => {
            if stores == Stores::Streaming { Stores::WholeLines } else { Stores::Plain }
        }
        Unit::Bits { .. } if policy == StorePolicy::Auto && unpacks_only(&blocks) => Stores::Plain,
        _ => stores,
    };
    Ok(if identity { Strategy::Identity { stores } } else { Strategy::Boxes { unit, blocks: blocks.into(), stores } })
}

/// Whether every box is a dense unpack ([`Kernel::Unpack`]: packed elements into one byte each,
/// both sides in order), which [`StorePolicy::Auto`] writes with ordinary stores: streamed,
/// `s2` and `s4` unpacks of 64 MiB out measured 0.6–0.9× memcpy on this project's machine,
/// with ordinary stores 1.1–1.3 (`docs/relayout.md` rule 10, "Dense unpacks").
fn unpacks_only(blocks: &[Block]) -> bool {
    !blocks.is_empty() && blocks.iter().all(|b| matches!(b.kernel, Kernel::Unpack { .. }))
}

/// Rows shorter than this (bytes) stream under [`StorePolicy::Auto`] only where they are whole
/// destination lines ([`Stores::WholeLines`]).
const MIN_STREAMED_ROW: u64 = 4096;

/// Whether every box copies rows shorter than [`MIN_STREAMED_ROW`]: runs of a few lines (r4's
/// 256-byte rows, `T(8,128)` f32's 512-byte tile rows). Rows that are whole destination lines
/// walk in source order and stream faster than memcpy (`docs/relayout.md` rule 10, "Rows in
/// source order"); any other walks in destination order, where streaming short rows was 1.5–1.9×
/// slower than ordinary stores on this project's machine (`plan` against `plan_cached` in
/// `benches/relayout.rs`; 2026-11-24, and 1.7× again 2026-11-28 on `Vec`s). Transposes and one
/// long copy keep streaming: it won there in every measurement.
fn short_rows(blocks: &[Block], width: usize) -> bool {
    let width = crate::memory::extent::len_u64(width);
    !blocks.is_empty()
        && blocks.iter().all(|b| {
            b.kernel == Kernel::Rows
                && b.axes.last().map_or(width, |inner| inner.extent.saturating_mul(width)) < MIN_STREAMED_ROW
        })
}

/// Whether the plan is one copy of the whole buffer onto an equally long one.
fn identical(blocks: &[Block], width: usize, src: &Resolved, dst: &Resolved) -> bool {
    let [block] = blocks else { return false };
    let total = block.axes.iter().try_fold(1u64, |acc, a| acc.checked_mul(a.extent));
    let contiguous = match &*block.axes {
        [] => true,
        [axis] => u64::try_from(axis.src).ok() == u64::try_from(width).ok() && axis.src == axis.dst,
        _ => false,
    };
    contiguous
        && block.src == 0
        && block.dst == 0
        && src.exact
        && dst.exact
        && src.len == dst.len
        && dst.prefill == super::endpoint::Prefill::None
        && total.and_then(|t| t.checked_mul(u64::try_from(width).ok()?)) == Some(dst.len)
}

/// Bits → bytes (every offset and stride of a byte-unit plan is a multiple of 8).
fn to_bytes(block: &Block) -> Block {
    Block {
        src: block.src / 8,
        dst: block.dst / 8,
        axes: block.axes.iter().map(|a| Axis { extent: a.extent, src: a.src / 8, dst: a.dst / 8 }).collect(),
        kernel: block.kernel,
    }
}

/// Normalizes a box and picks its kernel (`width` is the element's byte width, 0 in bits).
fn finish(block: Block, width: i64, stores: Stores) -> Block {
    let mut axes = normalize(block.axes.into_vec());
    let kernel = match axes.last() {
        Some(inner) if width > 0 && inner.src == width && inner.dst == width => {
            widen(&mut axes, width, stores).unwrap_or(Kernel::Rows)
        }
        Some(inner) if width > 0 && inner.dst == width => match axes.iter().position(|a| a.src == width) {
            Some(src_minor) => transpose(&mut axes, src_minor, width, stores),
            None => Kernel::Elements,
        },
        _ => Kernel::Elements,
    };
    Block { src: block.src, dst: block.dst, axes: axes.into(), kernel }
}

/// The transpose of `axes` (the innermost contiguous in the destination, `src_minor` in the
/// source) for elements of `width` bytes: the tile order, and the axes reordered for it.
fn transpose(axes: &mut Vec<Axis>, src_minor: usize, width: i64, stores: Stores) -> Kernel {
    // Streaming stores do not care in which order destination lines are written, so
    // the source-minor axis goes innermost of the outer axes: the source is read in
    // long runs, the slow side of a transpose when stores do not read lines first.
    // Unless a band of destination rows is long ([`long_rows`]): then bands write whole
    // runs of each destination row.
    if stores == Stores::Streaming && whole_tiles(axes, src_minor, width) && !long_rows(axes, width) {
        let last = axes.len().saturating_sub(2);
        let minor = axes.remove(src_minor);
        axes.insert(last, minor);
        return Kernel::Transpose { src_minor: last, order: Order::SourceRuns };
    }
    if interleaving(axes, src_minor, width) {
        // Each micro-tile reads or writes one contiguous run of the short axis's
        // extent: visiting the outer axes in source order reads the source from end to
        // end (a bf16 `(2,1)` tile row by tile row) where destination order would read
        // it in strided passes.
        // Streamed, an interleave keeps destination order instead: its runs then follow
        // each other, so that whole lines stream at any alignment (`lines.rs`); unless one
        // pass of the axis outside its rows reads too many source pages ([`crosses_pages`]).
        let last = axes.len().saturating_sub(1);
        let in_source_order = deinterleaves(axes, src_minor, width) || stores == Stores::Plain || crosses_pages(axes);
        if let Some(outer) = axes.get_mut(..last).filter(|_| in_source_order) {
            source_order(outer);
        }
        let src_minor = axes.iter().position(|a| a.src == width).unwrap_or(src_minor);
        return Kernel::Transpose { src_minor, order: Order::Bands };
    }
    let (src_minor, order) = if let Some(src_minor) = fuse_columns(axes, src_minor, width) {
        (src_minor, Order::FusedColumns)
    } else if let Some(src_minor) = fuse(axes, src_minor, width, stores) {
        (src_minor, Order::Fused)
    } else {
        return Kernel::Transpose { src_minor, order: Order::Bands };
    };
    // Streamed, the fused transposes visit the axes outside their three in source order
    // (largest source stride first), as the source-order walk does: whole lines go out in any
    // order, and the source is read in runs instead of in passes. `f32[128,64,32,16,4]`
    // row-major → `{1,3,0,2,4}` (fused rows) 0.32 → 0.80–0.86 of memcpy on a page, `{2,0,1,3,4}`
    // → row-major (fused columns) 0.22 → 0.61–0.63 (one program; `docs/relayout.md`, "Speed").
    let others = if order == Order::Fused { src_minor.saturating_sub(1) } else { src_minor };
    if stores == Stores::Streaming
        && let Some(outer) = axes.get_mut(..others)
    {
        source_order(outer);
    }
    Kernel::Transpose { src_minor, order }
}

/// Puts `axes` in source order, the largest source stride (in absolute value) first, a stable
/// sort: the order in which the walks that read their source in runs visit their outer axes (the
/// (de)interleaves' and the fused transposes' here, `kernel::source_order_rows`' rows).
pub(crate) fn source_order(axes: &mut [Axis]) {
    axes.sort_by_key(|a| core::cmp::Reverse(a.src.unsigned_abs()));
}

/// [`Order::FusedColumns`]: when the innermost axis is shorter than a micro-tile (`M` elements,
/// one [`LINE`](super::stream::LINE)), another outer axis than the source-minor one continues it
/// in the destination (destination stride = its extent × `width`), their extents' product is a
/// whole number of micro-tiles, and the source-minor axis spans at least one micro-tile and steps
/// past the fused columns in the destination: moves the source-minor axis and that axis just
/// before the innermost one, in that order, and returns the source-minor axis's new position.
///
/// `f32[128,128,64,4,4]{2,4,1,3,0}` → row-major is the case: its innermost axis has 4 elements,
/// so each micro-tile of the plain transpose stored 16-byte pieces of 16 lines, each line
/// completed by three other micro-tiles a source plane away (0.16–0.26 of memcpy); fused with the
/// axis outside it (4 more, 16 bytes apart in the destination), a micro-tile stores 16 whole
/// lines, 1 KiB in a row (`docs/relayout.md`, "Speed").
fn fuse_columns(axes: &mut Vec<Axis>, src_minor: usize, width: i64) -> Option<usize> {
    let line = i64::try_from(super::stream::LINE).ok()?;
    let tile = u64::try_from(line.checked_div(width)?).ok()?;
    let minor = *axes.get(src_minor)?;
    let inner = *axes.last()?;
    let span = i64::try_from(inner.extent).ok()?.checked_mul(width)?;
    if inner.extent >= tile || minor.extent < tile {
        return None;
    }
    let last = axes.len().checked_sub(1)?;
    let outside = axes.iter().enumerate().position(|(k, a)| k != src_minor && k != last && a.dst == span)?;
    let columns = axes.get(outside)?.extent.checked_mul(inner.extent)?;
    let columns_bytes = i64::try_from(columns).ok()?.checked_mul(width)?;
    if columns.checked_rem(tile) != Some(0) || minor.dst < columns_bytes {
        return None;
    }
    // The source-minor axis, then the continuing one, just outside the innermost.
    move_before_innermost(axes, (src_minor, outside))
}

/// Moves the outer axes `first` and `second` (two different indices, neither the innermost
/// axis) to just before the innermost axis, in that order, the others keeping theirs; returns
/// `first`'s new position. The fused orders' one way of putting their pair innermost
/// ([`fuse`], [`fuse_columns`]).
fn move_before_innermost(axes: &mut Vec<Axis>, (first, second): (usize, usize)) -> Option<usize> {
    let a = *axes.get(first)?;
    let b = *axes.get(second)?;
    let (high, low) = if first > second { (first, second) } else { (second, first) };
    axes.remove(high);
    axes.remove(low);
    let at = axes.len().checked_sub(1)?;
    axes.insert(at, b);
    axes.insert(at, a);
    Some(at)
}

/// Rows of 2 to 16 bytes (a power of two: the innermost axis contiguous on both sides) whose
/// other axes make a transpose of such wide elements: [`Kernel::Wide`], the transpose of the
/// outer axes with each row one element (the tiled transpose `{0,1:T(8,128)(2,1)}` of a
/// row-major bf16 array: its 4-byte rows are `(2,1)` sub-tiles' pairs, one `f32`-wide element
/// each). `None` (the axes as they were) when the outer axes are no transpose.
fn widen(axes: &mut Vec<Axis>, width: i64, stores: Stores) -> Option<Kernel> {
    let (&inner, outer) = axes.split_last()?;
    let wide = i64::try_from(inner.extent).ok()?.checked_mul(width)?;
    if !matches!(wide, 2 | 4 | 8 | 16) || outer.last()?.dst != wide {
        return None;
    }
    let src_minor = outer.iter().position(|a| a.src == wide)?;
    let mut reduced = outer.to_vec();
    let Kernel::Transpose { src_minor, order } = transpose(&mut reduced, src_minor, wide, stores) else {
        return None;
    };
    reduced.push(inner);
    *axes = reduced;
    Some(Kernel::Wide { src_minor, order, bytes: usize::try_from(wide).ok()? })
}

/// Whether a transpose's source-minor and innermost axes both span at least one micro-tile
/// (one [`LINE`](super::stream::LINE) of elements): the tiles whose source order the streaming walk improves. Shorter axes go through
/// the (de)interleaving paths, which keep the cached order.
fn whole_tiles(axes: &[Axis], src_minor: usize, width: i64) -> bool {
    let line = i64::try_from(super::stream::LINE).unwrap_or(i64::MAX);
    let tile = u64::try_from(line.checked_div(width).unwrap_or(0)).unwrap_or(0);
    let long = |axis: Option<&Axis>| axis.is_some_and(|a| a.extent >= tile);
    long(axes.get(src_minor)) && long(axes.last())
}

/// Destination-minor columns per band of a transpose ([`Order::Bands`], `kernel.rs`) of
/// `width`-byte elements: 512, at most 2 KiB of destination row. Each column is a source row the
/// band reads (one page each with 4 KiB pages, so they stay within the second-level TLB). Measured
/// on the project's Zen 5 machine (issue 36, docs/relayout.md rule 10, one thread, memcpy /
/// xla-shape): `f32` fastest in 2 KiB (512 columns); `u8[8192,8192]` 0.21–0.25 in its source
/// order (which it kept while bands were 2 KiB: 2048 columns, 1.4× slower still) and 0.28–0.37 in
/// 512 bytes; `bf16[4096,8192]` on `Vec`s 0.27–0.31 in 2 KiB and 0.34–0.39 in 1 KiB (on pages
/// within the spread); `u64` in 4 KiB (512 columns) up to 1.4× slower than in 2 KiB. Narrowed by
/// [`band_columns`].
pub(crate) const fn band_width(width: u64) -> u64 {
    match BAND_BYTES.checked_div(width) {
        Some(columns) if columns < BAND_COLUMNS => columns,
        _ => BAND_COLUMNS,
    }
}

/// The most columns of a band ([`band_width`]).
const BAND_COLUMNS: u64 = 512;

/// The most bytes of destination row of a band ([`band_width`]).
const BAND_BYTES: u64 = 2048;

/// What `--explain` says of a band of the transpose `block` (axes in bytes) with the source-minor
/// axis `src_minor` (and the fused axis outside it): its [`band_width`] and bytes, and the
/// narrowed columns of [`band_columns`] when the whole box's rows call for them (on a source on
/// a line and off one).
fn band_text(block: &Block, src_minor: usize, fused: Option<usize>) -> String {
    let (Some(minor), Some(inner)) = (block.axes.get(src_minor), block.axes.last()) else {
        return format!("{BAND_COLUMNS} columns");
    };
    let outside = fused.and_then(|f| block.axes.get(f)).map_or(1, |a| a.extent);
    let width = inner.dst.unsigned_abs();
    let band = band_width(width);
    let rows = minor.extent.saturating_mul(outside).saturating_mul(width);
    let on_line = band_columns(band, width, (rows, inner.src), minor.dst, false);
    let off_line = band_columns(band, width, (rows, inner.src), minor.dst, true);
    let bytes = |columns: u64| columns.saturating_mul(width);
    if off_line == on_line {
        return format!("{} bytes of destination row", bytes(on_line));
    }
    format!(
        "{} bytes of destination row ({} where the source runs straddle cache lines: the source rows are a multiple of {} KiB apart)",
        bytes(on_line),
        bytes(off_line),
        NARROWED_STRIDE >> 10
    )
}

/// A band's columns (source rows) lie a multiple of this many bytes apart for [`band_columns`]
/// to narrow it.
const NARROWED_STRIDE: u64 = 16 << 10;

/// A narrowed band's bytes of destination row ([`band_columns`]) from a source whose runs start
/// on a cache line.
const ALIASED_BAND_BYTES: u64 = 256;

/// The same from a source whose runs straddle lines.
const STRADDLING_BAND_BYTES: u64 = 128;

/// A band reads at least this many bytes of each of its source rows for [`band_columns`] to
/// narrow it.
const NARROWED_ROW_BYTES: u64 = 4 << 10;

/// Elements this wide or wider read their bands [`WIDE_BAND_ROWS`] source rows at a time
/// ([`band_columns`]).
const WIDE_ELEMENT: u64 = 8;

/// The most source rows (columns) of a band of elements of [`WIDE_ELEMENT`] bytes or more: one
/// `u64` micro-tile, 64 bytes of destination row. A band's tile-row reads one line of each of
/// its source rows, all the rows in step, and on the Zen 4 machine (issue 36, docs/relayout.md,
/// "A band's source rows in step") more than about 16 rows in step read 2–3× slower than 8 or
/// 12: 64 MiB from rows 16 KiB apart, loads alone, took 3.8–4.3 ms in steps of 4–12 rows, 5.4
/// of 16, 9.5 of 32 and 11.9–12.5 of 64 or 128 (`benches/peers/rows_in_step.c`). A
/// `u64` micro-tile takes 8 rows (`f32` 16, `bf16` 32, `u8` 64: theirs cannot be this narrow).
/// In bands of 8 rows `u64[2048,4096]{0,1}` → `{1,0}` took 8.6–9.2 ms per 64 MiB where the
/// narrowed bands of 32 rows (256 bytes) took 19.3–25.4, and `u64[1024,8192]` (source rows 8
/// KiB apart) 12.7–13.9 ms against 30.4–31.4 in its bands of 256 rows (one program, medians
/// of 7 runs, processes alternated).
const WIDE_BAND_ROWS: u64 = 8;

/// Whether a transpose's strip (`kernel::Walk::strip`: the whole micro-tiles of a band whose
/// innermost axis is contiguous in the destination) of `width`-byte elements, its source runs
/// (rows) `stride` bytes apart, stages each micro-tile: copies its `M` runs (64 of `u8`, 32 of
/// `bf16`) whole into a buffer of `M` lines side by side and transposes from there. Elements
/// of at most [`STAGED_ELEMENT`] bytes, when the walk asks nothing ahead of its own
/// (`asks_ahead` false: long rows, [`asks_ahead`]) or the runs crowd the first-level cache's
/// sets ([`crowds_sets`]). A staged tile of a walk that asks nothing ahead asks for its runs'
/// lines [`STAGE_AHEAD`] tile-rows on, into the second-level cache (`prefetcht1`).
///
/// A micro-tile reads each run in four 16-byte lanes, one block of lanes at a time. From rows
/// a power of two bytes apart (8 KiB for `u8[8192,8192]` and `bf16[4096,8192]`) its runs all
/// fall in one set of the first-level cache, whose 8 ways hold 8 of them, so most lanes were
/// read again from the second level: on the Zen 4 machine (issue 36, docs/relayout.md, "Staged
/// micro-tiles") the loads and shuffles of a `u8` transpose took 14.3–16.4 ms per 64 MiB in
/// the caches from rows 8 KiB apart and 3.4–3.9 from rows one line further apart
/// (`benches/peers/byte_transpose.c`, three runs). Staged, each line is read once; asked for
/// ahead, the misses overlap the transposes before them. Staging alone was slower there
/// (22.2–24.7 ms against the plain transpose's 21.0–22.2), and asking ahead alone was no faster
/// in the kernel; both, 13.4–14.2 ms. In the bench (four sets of 3–5 alternated runs),
/// `t2d_u8` went from 0.33–0.41 of memcpy to 0.48–0.77 and `t2d_bf16` from 0.46–0.54 to
/// 0.60–0.77 (docs/relayout.md); `u8[8192,8256]` and `u8[4096,16448]` (rows not a power of
/// two apart) gained as much, `bf16[4096,8256]` neither gained nor lost. In the caches, with
/// short uncrowded rows that the walk asks ahead for (`RELAYOUT_CASES=cache`, rows 256 bytes
/// apart), staging cost `bf16` 0.24 of memcpy → 0.17–0.21 and `u8` 0.15 → 0.12–0.13, hence not
/// there. `f32` (16 runs, `f32[4096,4096]`) ran 12.0–15.9 ms per 64 MiB staged against
/// 11.3–13.5.
pub(crate) fn stages(width: u64, stride: i64, asks_ahead: bool) -> bool {
    match LINE_BYTES.checked_div(width) {
        Some(runs) => width <= STAGED_ELEMENT && (!asks_ahead || crowds_sets(runs, stride)),
        None => false,
    }
}

/// The widest elements whose micro-tiles [`stages`] stages.
const STAGED_ELEMENT: u64 = 2;

/// Whether more than [`WAYS`] of `runs` lines `stride` bytes apart (each run's first line) fall
/// in one set of the first-level data cache, whose sets repeat every [`SET_SPAN`] bytes: lines
/// a multiple of 4 KiB apart share a set, and so, nearly, do lines a little more or less than a
/// multiple of 4 KiB / k apart (818 bytes: every fifth run 6 bytes back). Counted run by run.
pub(crate) fn crowds_sets(runs: u64, stride: i64) -> bool {
    let mut in_set = [0u64; SETS];
    let span = i64::try_from(SET_SPAN).unwrap_or(i64::MAX);
    let step = stride.rem_euclid(span).unsigned_abs();
    let mut offset = 0u64;
    for _ in 0..runs {
        let set = usize::try_from(offset.checked_div(LINE_BYTES).unwrap_or(0)).unwrap_or(0);
        if let Some(lines) = in_set.get_mut(set) {
            *lines = lines.saturating_add(1);
            if *lines > WAYS {
                return true;
            }
        }
        offset = offset.wrapping_add(step).checked_rem(SET_SPAN).unwrap_or(0);
    }
    false
}

/// The bytes after which the first-level data cache's sets repeat: every x86-64 first-level
/// data cache indexes its 64 sets by the page offset (32 KiB of 8 ways, 48 KiB of 12).
const SET_SPAN: u64 = 4096;

/// The first-level data cache's sets: [`SET_SPAN`] over 64-byte lines.
const SETS: usize = 64;

/// The lines a first-level cache set holds, at the fewest (8 on the Zen 4 machine and most
/// x86-64 cores).
const WAYS: u64 = 8;

/// A cache line's bytes, as a `u64`.
const LINE_BYTES: u64 = super::stream::LINE as u64;

/// Rows per block of a transpose's strip (`kernel::Walk::run`) of `width`-byte elements with
/// `rows` rows to walk, `dst_row` bytes apart in the destination: every band walks one block
/// before the next block starts. A block is a page of each source run ([`PAGE_BYTES`] / `width`
/// rows: `f32` 1024) when there are more rows than that and they span at least
/// [`BLOCKED_SPAN`] of destination; all of them otherwise. Walked whole by every band, long
/// rows far apart have each band touch one page of every destination row and come back to it a
/// band later, after all the others; in blocks, after a block's rows (why that order is faster
/// on 4 KiB pages is not shown: the project's VM has no hardware counters). On the project's
/// Zen 4 machine (issue 36, docs/relayout.md "Speed", "Blocks of rows and far destination
/// rows"), buffers in 4 KiB pages, one program, four alternated processes each:
/// `f32[8192,16384]{0,1}` → `{1,0}` (512 MiB) 168–192 ms → 133–158, `f32[16384,8192]` 102–137
/// → 82–110. At 64 MiB the blocks gained nothing and `u64[2048,4096]` on `Vec`s lost (the
/// bench, alternated runs: 0.89 → 0.75–0.76 of memcpy twice), hence the span.
pub(crate) fn row_block(width: u64, rows: u64, dst_row: i64) -> u64 {
    let span = rows.saturating_mul(dst_row.unsigned_abs());
    PAGE_BYTES.checked_div(width).filter(|&block| block > 0 && rows > block && span >= BLOCKED_SPAN).unwrap_or(rows)
}

/// The destination bytes a strip's rows span for [`row_block`] to cut them into blocks: 256
/// MiB, between the 64 MiB transposes that gained nothing and the 512 MiB ones that gained (none
/// measured between). 64 KiB in the crate's unit tests, so that
/// `relayout::tests::blocks_of_rows_match_the_reference` walks blocks on arrays of a few hundred
/// KiB.
const BLOCKED_SPAN: u64 = if cfg!(test) { 64 << 10 } else { 256 << 20 };

/// A page of memory, the smallest (4 KiB on x86-64 and most `aarch64` systems).
const PAGE_BYTES: u64 = 4096;

/// How many tile-rows on a staged micro-tile asks for its runs ([`stages`]): that many lines
/// further along each run. In the kernel (a build taking the distance from the environment, one
/// program, 7 rounds each, 2026-11-30) `u8[8192,8192]` ran at 0.36 / 0.47–0.49 / 0.39 / 0.42 of
/// memcpy 1 / 2 / 3 / 4 tile-rows on, `bf16[4096,8192]` at 0.60 / 0.65–0.76 / 0.60 / 0.65.
pub(crate) const STAGE_AHEAD: u64 = 2;

/// The columns of a band of [`Order::Bands`] or [`Order::Fused`] (`band`, [`band_width`])
/// of `width`-byte elements that reads `row_bytes` of each column's source
/// row, the rows `stride` bytes apart, each run starting off a cache line when `straddles` (a
/// source 16 bytes past a line: a `Vec`, a numpy array). When the band reads at least 4 KiB of
/// each row and the rows are a nonzero multiple of 16 KiB apart, it narrows to 128 bytes of
/// destination row (`f32`: 32 columns) if the runs straddle lines and to 256 bytes (`f32`: 64
/// columns) if they start on lines. The lines such a band keeps in flight, one or two per
/// column (a straddling micro-tile leaves the second line of every run for the next tile-row),
/// all fall in the same few cache sets; and a wide band reads 512 source rows at once, each on
/// pages of its own. On the Zen 5 machine (issue 36, docs/relayout.md rule 10), one thread, memcpy /
/// xla-shape, medians of three alternated bench runs: `f32[8192,2048]{0,1}` → `{1,0}` (rows 32
/// KiB apart) from a source 16 bytes past a line 0.30–0.36 in bands of 512 columns, 0.47–0.49
/// in 32; `f32[16384,4096]` (64 KiB) from a source on a line 0.21–0.22 in 512 columns, 0.43–0.46
/// in 64. Rows 16 and 32 KiB apart narrowed on 2026-11-29, a day the wide bands ran at
/// 0.22–0.39 (`f32[4096,4096]` on a page 0.28–0.30 wide, 0.49–0.51 narrowed; rows 32 KiB
/// apart 0.29 → 0.53, two threads 0.33 → 0.40); on a day they ran at 0.56–0.60, the narrowed
/// bands measured 0.43–0.50 (`f32[4096,4096]`, one program). Narrowed, the worse day is the
/// better one. Rows 8 KiB apart (`u8[8192,8192]`, `bf16[4096,8192]`) gained nothing narrowed,
/// and parts of a few lines per row lost (the command line's, from a mapped file: 1.3×
/// slower), hence the 16 and 4 KiB.
///
/// A band on a line whose destination rows (`dst_row` bytes apart) are at least
/// [`FAR_ROWS`] apart while its source rows are closer than that is 512 bytes
/// ([`FAR_ROWS_BAND_BYTES`]): in blocks of rows ([`row_block`]) with 256-byte bands,
/// `f32[8192,16384]{0,1}` → `{1,0}` (512 MiB, source rows 32 KiB apart, destination rows 64 KiB)
/// on `Vec`s in 4 KiB pages took 140–143 ms on one thread, in 512-byte bands 93–119 (median
/// 96; the bench, three alternated runs, issue 36, docs/relayout.md "Speed", "Blocks of rows
/// and far destination rows"; on 2 MiB pages no slower); `f32[4096,32768]` (source rows 16 KiB apart, destination 128 KiB) 123–132 → 85–90 in one
/// program. Source rows 64 KiB apart lost in 512-byte bands whatever the destination's
/// (`f32[16384,8192]` 83–89 → 160–171 ms, `f32[16384,16384]` 269–272 → 447–453), and rows 16
/// or 32 KiB apart on both sides gained nothing (`f32[4096,4096]`, `f32[8192,8192]`).
///
/// Elements of 8 bytes or more read at most [`WIDE_BAND_ROWS`] source rows per band, narrowed or
/// not.
pub(crate) fn band_columns(
    band: u64,
    width: u64,
    (row_bytes, stride): (u64, i64),
    dst_row: i64,
    straddles: bool,
) -> u64 {
    let band = if width >= WIDE_ELEMENT { band.min(WIDE_BAND_ROWS) } else { band };
    if !narrowed(row_bytes, stride) {
        return band;
    }
    let far = dst_row.unsigned_abs() >= FAR_ROWS && stride.unsigned_abs() < FAR_ROWS;
    let bytes = match (straddles, far) {
        (true, _) => STRADDLING_BAND_BYTES,
        (false, true) => FAR_ROWS_BAND_BYTES,
        (false, false) => ALIASED_BAND_BYTES,
    };
    band.min(bytes.checked_div(width).unwrap_or(band))
}

/// How far apart destination rows must be, and source rows must not be, for a narrowed band's
/// [`FAR_ROWS_BAND_BYTES`] ([`band_columns`]).
const FAR_ROWS: u64 = 64 << 10;

/// A narrowed band's bytes of destination row on a line when the destination rows are
/// [`FAR_ROWS`] apart or more and the source rows are not ([`band_columns`]).
const FAR_ROWS_BAND_BYTES: u64 = 512;

/// Whether a band that reads `row_bytes` of each source row, the rows `stride` bytes apart,
/// narrows ([`band_columns`]): at least 4 KiB of each, the rows a nonzero multiple of 16 KiB
/// apart. Such a transpose's strip also starts on the source's lines (`kernel::Walk::run`),
/// since a straddling run's second line falls in the same few cache sets as every other
/// column's: `f32[4096,4096]` from a source 16 bytes past a line 18.7–21.6 ms per 64 MiB,
/// 15.7–16.1 from one on a line (one program, 2026-11-29). Elsewhere the rows before the
/// first line would only cost their tiles: `bf16[4096,8192]` (rows 8 KiB apart) ran as fast
/// from either source, and r3 (`f32[256,256,256]`, rows of 1 KiB) 0.54 → 0.49 of memcpy with its
/// 16 rows of 256 through the general tiles.
pub(crate) fn narrowed(row_bytes: u64, stride: i64) -> bool {
    let stride = stride.unsigned_abs();
    stride != 0 && stride.checked_rem(NARROWED_STRIDE) == Some(0) && row_bytes >= NARROWED_ROW_BYTES
}

/// Whether a streamed transpose walks bands ([`Order::Bands`]) rather than its source in order:
/// when its destination rows (the innermost axis) hold a whole band ([`band_width`]), each
/// tile-row of a band then writes a run of the band's 512 bytes to 2 KiB into each of 8–64
/// destination rows, where the source order writes one line to each of thousands. Measured on the project's Zen 5 machine
/// (issue 36, docs/relayout.md): t2d, r3, the bf16 and u64 transposes 1.1–1.7× faster, `u8`
/// 1.2–1.3× (in bands of 2 KiB it was slower than in the source order); NCHW → NHWC (rows of
/// 64 `f32`) keeps the source order.
fn long_rows(axes: &[Axis], width: i64) -> bool {
    axes.last().is_some_and(|inner| inner.extent >= band_width(width.unsigned_abs()))
}

/// Whether a transpose (de)interleaves: the source-minor axis is shorter than a micro-tile and
/// the innermost axis continues it in the source (a deinterleave: bf16 `(2,1)` sub-tiles read
/// out into rows), or the innermost axis is shorter than a micro-tile and the source-minor axis
/// continues it in the destination (an interleave: rows into `(2,1)` sub-tiles). `kernel.rs`
/// moves whole lines of both in registers.
fn interleaving(axes: &[Axis], src_minor: usize, width: i64) -> bool {
    let (Some(&minor), Some(&inner)) = (axes.get(src_minor), axes.last()) else { return false };
    deinterleaves(axes, src_minor, width) || short_run(inner, (inner.dst, minor.dst), width)
}

/// Whether an interleave's walk in destination order (`axes`: the innermost axis, the row axis
/// before it, the axis that steps the runs before that) reads more than [`PASS_PAGES`] source
/// pages in one pass of that step axis: each of the innermost axis's source rows, one page per step
/// (or fewer when steps share a page). Then it walks the source in order instead: from
/// `f32[64,2048,16,8]{2,0,1,3}` → row-major (8 rows × 2048 steps a page apart: 16 384 pages a
/// pass, each read for one line and left until the next pass), 0.30–0.53 of memcpy in destination
/// order, 0.76–0.80 in source order; with 8 steps (64 pages) the destination's order was faster,
/// with 64 (512 pages) about as fast (`docs/relayout.md`, "Speed").
fn crosses_pages(axes: &[Axis]) -> bool {
    let (Some(inner), Some(step)) = (axes.last(), axes.len().checked_sub(3).and_then(|k| axes.get(k))) else {
        return false;
    };
    let per_row = step.extent.saturating_mul(step.src.unsigned_abs()).div_ceil(PAGE).min(step.extent);
    per_row.saturating_mul(inner.extent) > PASS_PAGES
}

/// A page of the source, for [`crosses_pages`] (4 KiB: where large pages back a buffer, fewer are read).
const PAGE: u64 = 4096;

/// The most source pages one pass of a streamed interleave's step axis reads in destination
/// order ([`crosses_pages`]): between the 512 measured about even with the source's order and the
/// 2048 measured 2.3× slower, a third of the Zen 4's second-level TLB (3072 entries).
const PASS_PAGES: u64 = 1024;

/// Whether a transpose of `axes` deinterleaves ([`interleaving`]'s source side): its
/// source-minor axis is short and the innermost axis continues it in the source ([`short_run`]).
fn deinterleaves(axes: &[Axis], src_minor: usize, width: i64) -> bool {
    axes.get(src_minor).zip(axes.last()).is_some_and(|(&minor, inner)| short_run(minor, (minor.src, inner.src), width))
}

/// Whether `short`, shorter than one micro-tile (one [`LINE`](super::stream::LINE) of
/// `width`-byte elements), and another axis make one contiguous run on one side: there, `short`'s
/// stride (`short_stride`) is one element and the other's (`long_stride`) is `short`'s extent in
/// elements. The (de)interleaving transposes (`kernel.rs`), the source side for a deinterleave,
/// the destination side for an interleave.
pub(crate) fn short_run(short: Axis, (short_stride, long_stride): (i64, i64), width: i64) -> bool {
    let line = i64::try_from(super::stream::LINE).unwrap_or(i64::MAX);
    let tile = u64::try_from(line.checked_div(width).unwrap_or(0)).unwrap_or(0);
    short.extent < tile
        && short_stride == width
        && i64::try_from(short.extent).ok().and_then(|e| e.checked_mul(width)) == Some(long_stride)
}

/// Whether a transpose asks for its source ahead ([`Order::SourceRuns`]: each band's source
/// runs one band ahead; [`Order::Bands`]: in each tile-row, the micro-tile [`AHEAD_LINES`] on,
/// unless it (de)interleaves, [`bands_ask_ahead`]): when a band's source, `M` runs of `rows` elements (`rows` lines of 64 bytes whatever the
/// width), is at most [`PREFETCH_BAND_BYTES`]. Such rows end before the hardware's prefetchers
/// have learnt them (r3's are 1 KiB, 16 lines), so each band would otherwise start by waiting
/// for memory; and a part of the command line's output (a few source lines from each of many
/// pages) has its page walks started early. Longer rows are the prefetchers' own work.
pub(crate) fn asks_ahead(rows: u64) -> bool {
    rows.saturating_mul(super::stream::LINE as u64) <= PREFETCH_BAND_BYTES
}

/// In [`Order::Bands`], when [`asks_ahead`] says so, each tile-row asks for the source runs of
/// the micro-tile this many source lines on (a micro-tile reads one line of each of its `M`
/// runs: `f32` two tiles on, `bf16` and `u8` the next). Measured on the Zen 5 machine (issue
/// 36, docs/relayout.md rule 10 and "Speed"), one thread, memcpy / xla-shape: r3
/// `f32[256,256,256]{2,1,0}` → `{1,0,2}` in the bench 0.34–0.39 → 0.53–0.56 on pages and
/// 0.37–0.39 → 0.42–0.47 on `Vec`s; in one program, `Vec`s on a line and 16 bytes past one,
/// 0.38 → 0.52 and 0.40 → 0.52. 32 lines ahead was as fast as 64 or 128 or faster; rows of 1024
/// elements or more gained nothing or lost (the hardware's prefetchers have them).
pub(crate) const AHEAD_LINES: u64 = 32;

/// Whether a transpose in [`Order::Bands`] of `axes` (the innermost contiguous in the
/// destination, `src_minor` in the source; elements of `width` bytes) asks for its source
/// [`AHEAD_LINES`] on: when [`asks_ahead`] says so and it does not (de)interleave
/// ([`interleaving`]: those walk whole rows of sub-tiles). The kernel's walk and `--explain`
/// both ask here.
pub(crate) fn bands_ask_ahead(axes: &[Axis], src_minor: usize, width: i64) -> bool {
    axes.get(src_minor).is_some_and(|minor| asks_ahead(minor.extent)) && !interleaving(axes, src_minor, width)
}

/// What `--explain` adds for a transpose (`block`'s axes in bytes, `src_minor` its source-minor
/// axis) whose micro-tiles are staged ([`stages`]), and whether they ask for their source
/// [`STAGE_AHEAD`] tile-rows on: when the walk does not ask ahead itself (`asks`).
fn staged_text(block: &Block, src_minor: usize, asks: bool) -> String {
    let Some(inner) = block.axes.last() else { return String::new() };
    let width = inner.dst;
    // Only the strips stage: the source-minor axis the last before the innermost, and no
    // (de)interleave.
    let strips = src_minor.checked_add(2) == Some(block.axes.len()) && !interleaving(&block.axes, src_minor, width);
    if width == 0 || !strips || !stages(width.unsigned_abs(), inner.src, asks) {
        return String::new();
    }
    let far = if asks { String::new() } else { format!(", asking for its source {STAGE_AHEAD} tile-rows on") };
    format!("; each micro-tile staged (its source runs copied whole first){far}")
}

/// What `--explain` adds for a transpose in bands (`block`'s axes in bytes, `src_minor` its
/// source-minor axis) whose walk asks for its source ahead ([`bands_ask_ahead`]).
fn ahead_text(block: &Block, src_minor: usize) -> String {
    let width = block.axes.last().map_or(0, |inner| inner.dst);
    if bands_ask_ahead(&block.axes, src_minor, width) {
        format!(", each micro-tile's source asked for {AHEAD_LINES} lines ahead")
    } else {
        String::new()
    }
}

/// The largest band [`asks_ahead`] fetches the next one for (rows of 512 elements): of 16, 32
/// and 64 KiB, 32 was the fastest on r3 at 512 MiB (rows of 512 elements: 62–64 ms → 52–54 ms
/// on one thread), 64 no faster.
const PREFETCH_BAND_BYTES: u64 = 32 << 10;

/// [`Order::Fused`]: when another outer axis continues the source-minor axis in the source
/// (source stride = its extent × `width`), moves that axis and then the source-minor one just
/// before the innermost axis and returns the source-minor axis's new position. Not when the
/// innermost axis is itself the continuation (the deinterleaving path) or shorter than a
/// micro-tile (`M` elements, one [`LINE`](super::stream::LINE): the interleaving path).
///
/// The source-minor axis may be short (`[128,128,64,4,4]` → `{2,4,1,3,0}`, the bench's r5: 4
/// elements, fused rows fill whole micro-tiles) or, streamed, long: `f32[128,64,32,16,4]{0,1,4,3,2}` →
/// row-major, whose source-minor axis (128) the next one continues, had each tile-row of a plain
/// transpose read 64 bytes of every 512-byte source run, 0.15 of memcpy on `Vec`s; fused, 0.65
/// (`docs/relayout.md`, "Speed").
fn fuse(axes: &mut Vec<Axis>, src_minor: usize, width: i64, stores: Stores) -> Option<usize> {
    let line = i64::try_from(super::stream::LINE).ok()?;
    let tile = u64::try_from(line.checked_div(width)?).ok()?;
    let minor = *axes.get(src_minor)?;
    let inner = *axes.last()?;
    let span = i64::try_from(minor.extent).ok()?.checked_mul(width)?;
    // A long source-minor axis only when the plan streams: its reason is the source read in
    // runs, as the other axes' source order (below, `transpose`); ordinary stores keep the
    // destination's order (and `u8` and bf16 their staged strips, `Walk::strip`).
    if (minor.extent >= tile && stores != Stores::Streaming) || inner.extent < tile || inner.src == span {
        return None;
    }
    let last = axes.len().checked_sub(1)?;
    let outside = axes.iter().enumerate().position(|(k, a)| k != src_minor && k != last && a.src == span)?;
    axes.get(outside)?.extent.checked_mul(minor.extent)?;
    // The pair goes innermost among the outer axes, the source-minor one last: each combination
    // of the other axes then moves all its fused rows, whole runs of the source, before the
    // next. Where the pair stayed where the destination's order put it, a source-minor axis
    // major in the destination made the pair outermost, and each tile-row of fused rows swept
    // the whole source for a quarter of its lines (`f32[128,64,32,16,4]` row-major →
    // `{1,3,0,2,4}`: 0.10–0.13 of memcpy; `docs/relayout.md`, "Speed").
    move_before_innermost(axes, (outside, src_minor))?.checked_add(1)
}

/// Normalizes a box in bits and picks its kernel.
fn finish_bits(block: Block, value: u32, src_slot: u64, dst_slot: u64) -> Block {
    let mut axes = normalize(block.axes.into_vec());
    // Elements of 1, 2 or 4 bits packed on one side (slots of their own width), one per byte on
    // the other, contiguous on both along the innermost axis.
    let bits = u64::from(value);
    // The widths `pack.rs` has kernels for.
    let packed = matches!(value, 1 | 2 | 4);
    let kernel = match axes.last().copied() {
        Some(inner) if packed && (src_slot, dst_slot) == (bits, 8) && (inner.src, inner.dst) == (to_i64(bits), 8) => {
            Kernel::Unpack { bits: value }
        }
        Some(inner) if packed && (src_slot, dst_slot) == (8, bits) && (inner.src, inner.dst) == (8, to_i64(bits)) => {
            Kernel::Pack { bits: value }
        }
        _ if packed && (src_slot, dst_slot) == (8, bits) && across(&mut axes, (bits, 8), true) => {
            Kernel::PackRows { bits: value, rows: RowElements::Bytes }
        }
        _ if packed && (src_slot, dst_slot) == (bits, 8) && across(&mut axes, (bits, 8), false) => {
            Kernel::UnpackRows { bits: value, rows: RowElements::Bytes }
        }
        // Packed on both sides: along the rows on one, across them on the other.
        _ if packed && (src_slot, dst_slot) == (bits, bits) && across(&mut axes, (bits, bits), true) => {
            Kernel::PackRows { bits: value, rows: RowElements::Packed }
        }
        _ if packed && (src_slot, dst_slot) == (bits, bits) && across(&mut axes, (bits, bits), false) => {
            Kernel::UnpackRows { bits: value, rows: RowElements::Packed }
        }
        _ => Kernel::Elements,
    };
    Block { src: block.src, dst: block.dst, axes: axes.into(), kernel }
}

/// Whether `axes` pack (`pack`) or unpack `bits`-bit elements across rows ([`Kernel::PackRows`]):
/// an axis of `m` elements one slot apart on the packed side, `m · bits` a whole 1, 2 or 4 bytes,
/// and an axis stepping one slot of the other side (`slot`: 8, a byte, or `bits`, packed along
/// the rows) and those `m · bits` on the packed one. If so, they become the two innermost axes,
/// the rows innermost.
fn across(axes: &mut Vec<Axis>, (bits, slot): (u64, u64), pack: bool) -> bool {
    let (bits, slot) = (to_i64(bits), to_i64(slot));
    let packed = |a: &Axis| if pack { a.dst } else { a.src };
    let along = |a: &Axis| if pack { a.src } else { a.dst };
    let rows = axes.iter().position(|a| {
        packed(a) == bits && i64::try_from(a.extent).is_ok_and(|e| group_bytes(e.saturating_mul(bits)).is_some())
    });
    let Some(rows) = rows else { return false };
    let group = i64::try_from(axes.get(rows).map_or(0, |a| a.extent)).unwrap_or(0).saturating_mul(bits);
    let Some(cols) = axes.iter().position(|a| along(a) == slot && packed(a) == group) else { return false };
    if rows == cols {
        return false;
    }
    let (row_axis, col_axis) = (axes.remove(rows), axes.remove(if cols > rows { cols.wrapping_sub(1) } else { cols }));
    axes.extend([col_axis, row_axis]);
    true
}

/// The bytes of a column's group packed across rows ([`Kernel::PackRows`]) of `bits` bits in
/// all: 1, 2 or 4 (a byte, a half-word, a 32-bit word), else `None`.
pub(crate) fn group_bytes(bits: i64) -> Option<usize> {
    match bits {
        8 => Some(1),
        16 => Some(2),
        32 => Some(4),
        _ => None,
    }
}

/// Drops extent-1 axes, orders by destination stride (largest first), coalesces.
pub(crate) fn normalize(mut axes: Vec<Axis>) -> Vec<Axis> {
    axes.retain(|a| a.extent != 1);
    axes.sort_by(|x, y| {
        y.dst.unsigned_abs().cmp(&x.dst.unsigned_abs()).then(y.src.unsigned_abs().cmp(&x.src.unsigned_abs()))
    });
    let mut out: Vec<Axis> = Vec::with_capacity(axes.len());
    for axis in axes {
        if let Some(outer) = out.last_mut() {
            let joins = |o: i64, i: i64| i64::try_from(axis.extent).ok().and_then(|e| i.checked_mul(e)) == Some(o);
            if joins(outer.src, axis.src) && joins(outer.dst, axis.dst) {
                if let Some(extent) = outer.extent.checked_mul(axis.extent) {
                    *outer = Axis { extent, src: axis.src, dst: axis.dst };
                    continue;
                }
            }
        }
        out.push(axis);
    }
    // The last axis is the innermost; prefer one contiguous in the destination there, then in
    // the source (sorting by |dst| already put the smallest destination stride last).
    out
}

/// One piece of a dimension's index range: a fixed offset per side and the digits that vary.
#[derive(Debug, Clone)]
struct Piece {
    src: i64,
    dst: i64,
    axes: Vec<Axis>,
}

/// The common digits of one dimension: weights and (src, dst) strides, or `None` when the two
/// chains do not refine into one.
fn common_digits(a: &[DimDigit], b: &[DimDigit]) -> Option<Vec<(u64, i64, i64)>> {
    let mut weights: Vec<u64> = a.iter().chain(b).map(|d| d.weight).collect();
    weights.sort_unstable();
    weights.dedup();
    if weights.windows(2).any(|w| matches!(w, [x, y] if y.checked_rem(*x) != Some(0))) {
        return None;
    }
    let stride = |chain: &[DimDigit], u: u64| -> Option<i64> {
        // The side's digit with the largest weight ≤ u; an empty chain (extent ≤ 1) moves 0.
        let Some(d) = chain.iter().rev().find(|d| d.weight <= u) else { return Some(0) };
        d.stride.checked_mul(i64::try_from(u.checked_div(d.weight)?).ok()?)
    };
    weights.iter().map(|&u| Some((u, stride(a, u)?, stride(b, u)?))).collect()
}

/// The offsets of logical index `g` through the common digits, on the source and destination
/// sides.
fn offset_of(g: u64, digits: &[(u64, i64, i64)], side: fn(&(u64, i64, i64)) -> i64) -> Option<i64> {
    let mut total = 0i64;
    for (k, digit) in digits.iter().enumerate() {
        let q = g.checked_div(digit.0)?;
        let value = match digits.get(k.wrapping_add(1)) {
            Some(next) => q.checked_rem(next.0.checked_div(digit.0)?)?,
            None => q,
        };
        total = total.checked_add(i64::try_from(value).ok()?.checked_mul(side(digit))?)?;
    }
    Some(total)
}

/// The pieces of the index range `[0, extent)` of one dimension whose element `i` is logical
/// index `src_start + i` in the source and `dst_start + i` in the destination: greedily, from
/// `i = 0`, the coarsest digit aligned on both sides that fits, as many of it as stay inside one
/// unit of the next digit on both sides. With both starts 0 this is `⌊extent / w_k⌋` whole top
/// digits, then the rest below, recursively. Returns `false` when the pieces pass `MAX_BOXES`
/// (starts that cut tiles everywhere): the general path is then cheaper.
fn pieces(
    extent: u64,
    (src_start, dst_start): (u64, u64),
    digits: &[(u64, i64, i64)],
    out: &mut Vec<Piece>,
) -> Result<bool> {
    if digits.first().is_none_or(|d| d.0 != 1) {
        return Err(overflow());
    }
    let mut i = 0u64;
    while i < extent {
        if out.len() >= MAX_BOXES {
            return Ok(false);
        }
        let rest = extent.checked_sub(i).ok_or_else(overflow)?;
        let gs = src_start.checked_add(i).ok_or_else(overflow)?;
        let gd = dst_start.checked_add(i).ok_or_else(overflow)?;
        // Weights divide one another, so the aligned levels are a prefix; level 0 (weight 1)
        // always is.
        let level = digits
            .iter()
            .take_while(|&&(w, _, _)| w <= rest && gs.checked_rem(w) == Some(0) && gd.checked_rem(w) == Some(0))
            .count()
            .saturating_sub(1);
        let &(weight, s, d) = digits.get(level).ok_or_else(overflow)?;
        let mut count = rest.checked_div(weight).ok_or_else(overflow)?;
        if let Some(&(next, _, _)) = digits.get(level.wrapping_add(1)) {
            // Both starts are multiples of `weight`, which divides `next`: room ≥ 1.
            let room = |g: u64| next.checked_sub(g.checked_rem(next)?)?.checked_div(weight);
            count = count.min(room(gs).ok_or_else(overflow)?).min(room(gd).ok_or_else(overflow)?);
        }
        let mut axes: Vec<Axis> = digits
            .get(..level)
            .ok_or_else(overflow)?
            .iter()
            .zip(digits.get(1..=level).ok_or_else(overflow)?)
            .map(|(&(w, s, d), &(next, _, _))| Some(Axis { extent: next.checked_div(w)?, src: s, dst: d }))
            .collect::<Option<_>>()
            .ok_or_else(overflow)?;
        axes.push(Axis { extent: count, src: s, dst: d });
        out.push(Piece {
            src: offset_of(gs, digits, |d| d.1).ok_or_else(overflow)?,
            dst: offset_of(gd, digits, |d| d.2).ok_or_else(overflow)?,
            axes,
        });
        i = i.checked_add(count.checked_mul(weight).ok_or_else(overflow)?).ok_or_else(overflow)?;
    }
    Ok(true)
}

/// The boxes of a mixed-radix pair, or `None` when the digits do not refine or the boxes are
/// too many.
fn boxes(
    span: &Span,
    a: &[Box<[DimDigit]>],
    b: &[Box<[DimDigit]>],
    mut src: i64,
    mut dst: i64,
) -> Result<Option<Vec<Block>>> {
    if span.extent.contains(&0) {
        return Ok(Some(Vec::new()));
    }
    let mut per_dim: Vec<Vec<Piece>> = Vec::with_capacity(span.extent.len());
    for (d, (da, db)) in a.iter().zip(b).enumerate() {
        let (Some(&extent), Some(&os), Some(&od)) = (span.extent.get(d), span.src.get(d), span.dst.get(d)) else {
            return Err(overflow());
        };
        if extent <= 1 {
            // One index: the window's start, a fixed offset on each side.
            src = src.checked_add(super::endpoint::digit_offset(os, da)).ok_or_else(overflow)?;
            dst = dst.checked_add(super::endpoint::digit_offset(od, db)).ok_or_else(overflow)?;
            continue;
        }
        let Some(digits) = common_digits(da, db) else { return Ok(None) };
        let mut list = Vec::new();
        if !pieces(extent, (os, od), &digits, &mut list)? {
            return Ok(None);
        }
        per_dim.push(list);
    }
    let count = per_dim.iter().try_fold(1usize, |acc, p| acc.checked_mul(p.len()));
    if count.is_none_or(|c| c > MAX_BOXES) {
        return Ok(None);
    }
    let mut blocks = vec![Block { src, dst, axes: Box::default(), kernel: Kernel::Elements }];
    for list in &per_dim {
        let mut next = Vec::with_capacity(blocks.len().saturating_mul(list.len()));
        for block in &blocks {
            for piece in list {
                let mut axes = block.axes.to_vec();
                axes.extend_from_slice(&piece.axes);
                next.push(Block {
                    src: block.src.checked_add(piece.src).ok_or_else(overflow)?,
                    dst: block.dst.checked_add(piece.dst).ok_or_else(overflow)?,
                    axes: axes.into(),
                    kernel: Kernel::Elements,
                });
            }
        }
        blocks = next;
    }
    Ok(Some(blocks))
}

#[cfg(test)]
mod tests {
    use super::{Axis, Kernel, Order, Stores, crosses_pages, crowds_sets, normalize, transpose};
    use proptest::prelude::*;

    /// A streamed interleave keeps the destination's order unless one pass of its step axis reads
    /// more than `PASS_PAGES` source pages; with ordinary stores it walks the source in order.
    #[test]
    fn interleaves_crossing_many_pages_walk_the_source_in_order() {
        let ax = |extent, src, dst| Axis { extent, src, dst };
        // `f32[64,2048,16,8]{2,0,1,3}` → row-major in bytes: 8 rows 8 MiB apart, 2048 steps a
        // page apart (16 384 pages a pass); `f32[2048,64,16,8]`: 64 steps (512 pages).
        let far = vec![ax(64, 64, 1 << 20), ax(2048, 4096, 512), ax(16, 4, 32), ax(8, 8 << 20, 4)];
        let near = vec![ax(2048, 64, 32768), ax(64, 131_072, 512), ax(16, 4, 32), ax(8, 8 << 20, 4)];
        assert!(crosses_pages(&far));
        assert!(!crosses_pages(&near));
        for (axes, stores, source_order) in
            [(&far, Stores::Streaming, true), (&near, Stores::Streaming, false), (&near, Stores::Plain, true)]
        {
            let mut walked = axes.clone();
            let kernel = transpose(&mut walked, 2, 4, stores);
            assert_eq!(kernel, Kernel::Transpose { src_minor: 2, order: Order::Bands });
            let first = if source_order { axes[1] } else { axes[0] };
            assert_eq!(walked[0], first, "{stores:?}");
            assert_eq!(walked[2..], axes[2..]);
        }
    }

    #[test]
    fn coalesces_axes_contiguous_on_both_sides() {
        let axes = vec![
            Axis { extent: 4, src: 12, dst: 12 },
            Axis { extent: 1, src: 99, dst: 7 },
            Axis { extent: 3, src: 4, dst: 4 },
        ];
        assert_eq!(normalize(axes), [Axis { extent: 12, src: 4, dst: 4 }]);
        let transposed = vec![Axis { extent: 4, src: 4, dst: 12 }, Axis { extent: 3, src: 16, dst: 4 }];
        assert_eq!(normalize(transposed.clone()), transposed);
    }

    /// The most of `runs` lines, `stride` bytes apart from offset 0, that fall in one set of a
    /// first-level cache of 64 sets of 64-byte lines indexed by the page offset, counted line by
    /// line.
    fn most_in_a_set(runs: u64, stride: i64) -> u64 {
        let mut sets = [0u64; 64];
        for r in 0..runs {
            let offset = (i128::from(r) * i128::from(stride)).rem_euclid(4096);
            sets[usize::try_from(offset / 64).unwrap()] += 1;
        }
        sets.into_iter().max().unwrap()
    }

    proptest! {
        /// `crowds_sets` says whether more than 8 of a micro-tile's runs (4–64 of them) share a
        /// set, as counting them does, for any stride: whole lines apart (a dense row's bytes)
        /// or not, forwards or backwards.
        #[test]
        fn crowded_sets_are_counted(k in 2u32..=6, lines in -70_000i64..70_000, part in 0i64..64, whole in any::<bool>()) {
            let runs = 1u64 << k;
            let stride = lines * 64 + if whole { 0 } else { part };
            prop_assert_eq!(crowds_sets(runs, stride), most_in_a_set(runs, stride) > 8, "{} runs {} apart", runs, stride);
        }
    }

    /// The strides that matter: rows a power of two bytes apart crowd `u8`'s 64 runs from 1 KiB
    /// and `bf16`'s 32 from 2 KiB (`stages`).
    #[test]
    fn rows_a_power_of_two_apart_crowd_from_1_and_2_kib() {
        for shift in 6..24 {
            let stride = 1i64 << shift;
            assert_eq!(crowds_sets(64, stride), shift >= 10, "u8, {stride}");
            assert_eq!(crowds_sets(32, stride), shift >= 11, "bf16, {stride}");
            assert!(!crowds_sets(64, stride + 64), "u8, {stride} + 64");
        }
    }
}
