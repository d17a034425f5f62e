//! Relayout: move a host buffer from one layout to another (rules: `docs/relayout.md`).
//!
//! A [`RelayoutPlan`] is built once from two endpoints — validated array shapes
//! ([`ArrayShape`](crate::ArrayShape), any layout the crate validates) or [`StridedView`]s — with
//! the same element type and dimensions, and run many times. Running writes the destination
//! buffer completely (its padding too), allocates nothing, and never panics.
//!
//! ```text
//!   endpoint ──Resolved──▶ digits per dimension ──┐
//!   endpoint ──Resolved──▶ digits per dimension ──┴─▶ boxes ─▶ normalize ─▶ kernel per box
//!                                (no common digits: element by element through PhysicalMap)
//! ```
//!
//! | file | owns |
//! |---|---|
//! | `endpoint` | [`Endpoint`], [`StridedView`], each side's digits, buffer length and padding |
//! | `fill` | the legacy `padding_value` as bits of the element type |
//! | `plan` | common digits, partial-tile boxes, normalization, the kernel of each box |
//! | `kernel` | rows, blocked 2-D transpose, element loops, sub-byte pack/unpack |
//! | `pack` | sub-byte elements packed ↔ one per byte (SSE2) |
//! | `lines` | destination runs at any alignment: whole lines streamed, the ends of runs carried until the next run completes them (`Lines`; `RowLines` for a deinterleave's rows side by side, shifted by whole lanes) |
//! | `stream` | non-temporal stores of whole lines (x86-64; the crate's one `unsafe` module) |
//! | `exec` | buffer checks, padding prefill, running a plan (element by element over its span when no kernel applies, [`Window`]s too) |
//! | `window` | one part of the destination alone ([`RelayoutPlan::run_range`]) |
//! | `threads` | where the kernels run: rayon's pool, or the calling thread ([`on_calling_thread`]) |
//!
//! ```
//! use xla_shape::{relayout::RelayoutPlan, ShapeBuf};
//! let src: ShapeBuf = "f32[2,3]{0,1}".parse()?; // column-major
//! let dst: ShapeBuf = "f32[2,3]{1,0}".parse()?; // row-major
//! let plan = RelayoutPlan::new(src.as_array().expect("array"), dst.as_array().expect("array"))?;
//! let column_major: Vec<u8> = [1f32, 4., 2., 5., 3., 6.].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let mut row_major = vec![0u8; plan.dst_len()];
//! plan.run(&column_major, &mut row_major)?;
//! let values: Vec<f32> = row_major.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
//! assert_eq!(values, [1., 2., 3., 4., 5., 6.]);
//! # Ok::<(), xla_shape::Error>(())
//! ```

mod buffer;
mod endpoint;
mod exec;
mod fill;
mod kernel;
mod lines;
mod pack;
mod plan;
mod stream;
pub(crate) mod threads;
mod tile;
mod window;

pub use buffer::LineBuffer;
pub use endpoint::{Endpoint, StridedView};
pub use threads::on_calling_thread;

use crate::error::{Error, RelayoutProblem, RelayoutSide, Result};
use crate::memory::extent::len_u64;
use endpoint::Resolved;
use plan::{Span, Strategy};

/// How a plan writes the destination's whole cache lines. The bytes written are the same
/// whichever is chosen; only where they are left differs.
///
/// ```
/// use xla_shape::relayout::StorePolicy;
/// assert_eq!(StorePolicy::default(), StorePolicy::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StorePolicy {
    /// Streaming for destinations of at least 16 MiB, far past one core's caches; cached below.
    /// A plan that only copies rows shorter than 4 KiB streams them where they are whole cache
    /// lines (then in source order), else copies them cached; a plan that only unpacks sub-byte
    /// elements into one byte each, in order, stores them cached, which measured faster, and so
    /// does one that only reads sub-tiles out into at most 8 rows side by side (bf16 or `s8`
    /// under `T(8,128)(2,1)` or `(4,1)`; `docs/relayout.md` rule 10).
    #[default]
    Auto,
    /// Ordinary stores: the destination stays in cache for a reader that follows at once.
    Cached,
    /// Non-temporal stores for every aligned whole line, whatever the size (x86-64; elsewhere
    /// the same as `Cached`). Rows and transposes stream; the transpose then reads the source
    /// in order and writes lines in any order, which only streaming stores make cheap, and so do
    /// rows whose lengths and destination strides are whole lines.
    Streaming,
}

/// A relayout from one endpoint to another, planned once: the loop order, the coalesced
/// dimensions, the block sizes and the kernels are fixed by [`RelayoutPlan::new`];
/// [`run`](RelayoutPlan::run) only moves bytes.
#[derive(Debug, Clone)]
pub struct RelayoutPlan {
    src: Resolved,
    dst: Resolved,
    span: Span,
    /// The span covers the whole destination: `run` fills its padding too.
    whole_dst: bool,
    /// The span is not both whole arrays: the element-by-element path starts at its corners.
    windowed: bool,
    strategy: Strategy,
}

/// A box of an array moved by [`RelayoutPlan::window`]: element `I` (`I < extent`, per
/// dimension) moves from the source's logical index `src_start + I` to the destination's
/// `dst_start + I`.
///
/// ```
/// use xla_shape::relayout::Window;
/// // Rows 2..4 and columns 0..3 of a source, to the origin of the destination.
/// let window = Window { src_start: &[2, 0], dst_start: &[0, 0], extent: &[2, 3] };
/// assert_eq!(window.extent, [2, 3]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window<'w> {
    /// Where the box starts in the source array, per dimension.
    pub src_start: &'w [u64],
    /// Where it starts in the destination array, per dimension.
    pub dst_start: &'w [u64],
    /// Its size, per dimension.
    pub extent: &'w [u64],
}

fn problem(p: RelayoutProblem) -> Error {
    Error::Relayout(Box::new(p))
}

impl RelayoutPlan {
    /// Plans the move of an array from `src` to `dst`, with [`StorePolicy::Auto`]: destinations
    /// of 16 MiB and more get streaming stores on x86-64 ([`with_stores`](Self::with_stores)
    /// chooses otherwise).
    ///
    /// # Errors
    ///
    /// [`Error::Relayout`] when the element types, ranks or dimensions (bounds, for dynamic
    /// dimensions) differ ([`RelayoutProblem::ElementType`], [`RelayoutProblem::Rank`],
    /// [`RelayoutProblem::Dimension`]) or when a strided destination overlaps itself
    /// ([`RelayoutProblem::Overlap`]); the errors of [`crate::PhysicalMap::new`] for a layout
    /// (unbounded dimensions, overflow); [`Error::InvalidArgument`] for a legacy padding value
    /// without meaning for the type (LOWEST on a complex type).
    pub fn new<'a, 'b>(src: impl Into<Endpoint<'a>>, dst: impl Into<Endpoint<'b>>) -> Result<Self> {
        Self::with_stores(src, dst, StorePolicy::Auto)
    }

    /// [`new`](Self::new), choosing how whole destination lines are written.
    ///
    /// ```
    /// use xla_shape::{relayout::{RelayoutPlan, StorePolicy}, ShapeBuf};
    /// let (src, dst): (ShapeBuf, ShapeBuf) = ("f32[64,64]{0,1}".parse()?, "f32[64,64]{1,0}".parse()?);
    /// let (a, b) = (src.as_array().expect("array"), dst.as_array().expect("array"));
    /// let input: Vec<u8> = (0..16384u32).map(|k| (k % 251) as u8).collect();
    /// let cached = RelayoutPlan::with_stores(a, b, StorePolicy::Cached)?.run_to_vec(&input)?;
    /// let streamed = RelayoutPlan::with_stores(a, b, StorePolicy::Streaming)?.run_to_vec(&input)?;
    /// assert_eq!(cached, streamed); // the same bytes either way
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_stores<'a, 'b>(
        src: impl Into<Endpoint<'a>>,
        dst: impl Into<Endpoint<'b>>,
        stores: StorePolicy,
    ) -> Result<Self> {
        let src = Resolved::new(src.into())?;
        let dst = Resolved::new(dst.into())?;
        check_pair(&src, &dst)?;
        if let Some((dimension, (&s, &d))) =
            src.bounds.iter().zip(dst.bounds.iter()).enumerate().find(|(_, (s, d))| s != d)
        {
            return Err(problem(RelayoutProblem::Dimension { dimension, source: s, destination: d }));
        }
        let span = Span::whole(&src.bounds);
        Self::finish(src, dst, span, stores)
    }

    /// What the plan decided, for people (`xla-shape relayout --explain`): one copy, element by
    /// element, or the boxes with their axes (extent × (source stride, destination stride),
    /// outermost first), each box's kernel, and whether whole lines are streamed.
    ///
    /// ```
    /// use xla_shape::{relayout::RelayoutPlan, ShapeBuf};
    /// let (src, dst): (ShapeBuf, ShapeBuf) = ("f32[64,32]{0,1}".parse()?, "f32[64,32]{1,0}".parse()?);
    /// let plan = RelayoutPlan::new(src.as_array().expect("array"), dst.as_array().expect("array"))?;
    /// let explained = plan.explain();
    /// assert!(explained.starts_with("1 box(es); whole elements of 4 bytes"), "{explained}");
    /// assert!(explained.contains("axes 64×(4, 128) 32×(256, 4); transpose of axis 0"), "{explained}");
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn explain(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.strategy.explain(&mut out);
        out
    }

    /// Plans the move of one box of `src` into `dst` ([`Window`]): how a sharded array's
    /// per-device buffers are cut from the global buffer and put back (`docs/relayout.md` rule
    /// 20). Both endpoints keep their own dimensions; the box must fit in each. Starts that cut
    /// tiles give more boxes (one per partial tile on either side), and past a limit the
    /// element-by-element path.
    ///
    /// [`run`](Self::run) writes the box's elements only, and fills the destination's padding
    /// first when the box is the whole destination; otherwise the bytes outside the box are
    /// left as they were ([`fill_padding`](Self::fill_padding) writes the padding of a
    /// destination assembled from several boxes).
    ///
    /// ```
    /// use xla_shape::{relayout::{RelayoutPlan, StorePolicy, Window}, ShapeBuf};
    /// let global: ShapeBuf = "s8[4,6]{1,0}".parse()?;
    /// let shard: ShapeBuf = "s8[2,3]{0,1}".parse()?; // a column-major shard
    /// let window = Window { src_start: &[2, 3], dst_start: &[0, 0], extent: &[2, 3] };
    /// let plan = RelayoutPlan::window(global.as_array().expect("array"), shard.as_array().expect("array"), window, StorePolicy::Auto)?;
    /// let bytes: Vec<u8> = (0..24).collect();
    /// assert_eq!(plan.run_to_vec(&bytes)?, [15, 21, 16, 22, 17, 23]);
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), except that the dimensions may differ; [`Error::Relayout`] with
    /// [`RelayoutProblem::WindowRank`] when a window's list does not have the arrays' rank and
    /// [`RelayoutProblem::Window`] when the box passes an endpoint's bound.
    pub fn window<'a, 'b>(
        src: impl Into<Endpoint<'a>>,
        dst: impl Into<Endpoint<'b>>,
        window: Window<'_>,
        stores: StorePolicy,
    ) -> Result<Self> {
        let src = Resolved::new(src.into())?;
        let dst = Resolved::new(dst.into())?;
        check_pair(&src, &dst)?;
        let rank = src.bounds.len();
        for actual in [window.src_start.len(), window.dst_start.len(), window.extent.len()] {
            if actual != rank {
                return Err(problem(RelayoutProblem::WindowRank { rank, actual }));
            }
        }
        for (side, resolved, starts) in
            [(RelayoutSide::Source, &src, window.src_start), (RelayoutSide::Destination, &dst, window.dst_start)]
        {
            let sides = resolved.bounds.iter().zip(starts).zip(window.extent);
            for (dimension, ((&bound, &start), &extent)) in sides.enumerate() {
                if start.checked_add(extent).is_none_or(|end| end > bound) {
                    return Err(problem(RelayoutProblem::Window { side, dimension, start, extent, bound }));
                }
            }
        }
        let span = Span { extent: window.extent.into(), src: window.src_start.into(), dst: window.dst_start.into() };
        Self::finish(src, dst, span, stores)
    }

    fn finish(src: Resolved, dst: Resolved, span: Span, stores: StorePolicy) -> Result<Self> {
        check_overlap(&dst)?;
        let strategy = plan::strategy(&src, &dst, &span, stores)?;
        let whole_dst = span.covers(&span.dst, &dst.bounds);
        let windowed = !(whole_dst && span.covers(&span.src, &src.bounds));
        Ok(Self { src, dst, span, whole_dst, windowed, strategy })
    }
}

/// Element types and ranks must agree.
fn check_pair(src: &Resolved, dst: &Resolved) -> Result<()> {
    if src.element_type != dst.element_type {
        return Err(problem(RelayoutProblem::ElementType { source: src.element_type, destination: dst.element_type }));
    }
    if src.bounds.len() != dst.bounds.len() {
        return Err(problem(RelayoutProblem::Rank { source: src.bounds.len(), destination: dst.bounds.len() }));
    }
    Ok(())
}

impl RelayoutPlan {
    /// The source buffer's length in bytes: exact for a layout, the minimum for a view.
    pub fn src_len(&self) -> usize {
        usize::try_from(self.src.len).unwrap_or(usize::MAX)
    }

    /// The destination buffer's length in bytes: exact for a layout, the minimum for a view.
    pub fn dst_len(&self) -> usize {
        usize::try_from(self.dst.len).unwrap_or(usize::MAX)
    }

    /// Moves every element of `src` to its place in `dst` and fills `dst`'s padding (legacy
    /// `padding_value`, tile, tail and sub-byte padding; see `docs/relayout.md`). A strided
    /// destination's bytes between its elements are left as they were. No allocation.
    ///
    /// # Errors
    ///
    /// [`Error::Relayout`] with [`RelayoutProblem::BufferLength`] when a buffer's length is
    /// not its endpoint's byte size (shorter than a view's
    /// [`min_buffer_len`](StridedView::min_buffer_len)); nothing is written then.
    pub fn run(&self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        exec::check_len(&self.src, RelayoutSide::Source, src.len())?;
        exec::check_len(&self.dst, RelayoutSide::Destination, dst.len())?;
        if self.whole_dst {
            exec::prefill(&self.dst, dst);
        }
        exec::execute(&self.strategy, (&self.src, &self.dst), &self.span, src, dst);
        Ok(())
    }

    /// Writes the destination's padding as [`run`](Self::run) does before the elements of a
    /// plan that covers the whole destination: zero bits, or the legacy padding pattern, over
    /// the whole buffer (elements' slots included, which the elements then overwrite); a
    /// destination without padding bits is left as it is. A buffer assembled from
    /// [`window`](Self::window) plans is filled once, then each window run into it.
    ///
    /// # Errors
    ///
    /// [`Error::Relayout`] with [`RelayoutProblem::BufferLength`] when `dst`'s length is not
    /// the destination's byte size.
    pub fn fill_padding(&self, dst: &mut [u8]) -> Result<()> {
        exec::check_len(&self.dst, RelayoutSide::Destination, dst.len())?;
        exec::prefill(&self.dst, dst);
        Ok(())
    }

    /// Zero bits, then [`fill_padding`](Self::fill_padding), over a part: `dst` holds the
    /// destination's bytes `start..start + dst.len()` (checked by the caller against
    /// [`dst_len`](Self::dst_len)) and ends as those bytes of a zeroed buffer after
    /// `fill_padding`. The shard buffers' parts (`sharding::stream`) start from it: their
    /// windows write only the elements of a box.
    pub(crate) fn fill_part(&self, dst: &mut [u8], start: usize) {
        dst.fill(0);
        exec::prefill_part(&self.dst, dst, len_u64(start));
    }

    /// The bytes `range` of what [`run`](Self::run) writes, into `dst` (`range.len()` bytes
    /// long): a destination produced part by part, in bounded memory, in any order. Parts that
    /// tile `0..dst_len()` hold `run`'s bytes; bytes `run` leaves as they were (between a
    /// strided destination's elements) are left as they were in `dst`. Each part costs its own
    /// share of the work, plus a cut of each box at the part's two ends. No allocation (boxes
    /// of more than 32 axes aside).
    ///
    /// ```
    /// use xla_shape::{relayout::RelayoutPlan, ShapeBuf};
    /// let (src, dst): (ShapeBuf, ShapeBuf) = ("f32[64,64]{0,1}".parse()?, "f32[64,64]{1,0}".parse()?);
    /// let plan = RelayoutPlan::new(src.as_array().expect("array"), dst.as_array().expect("array"))?;
    /// let input: Vec<u8> = (0..16384u32).map(|k| (k % 251) as u8).collect();
    /// let whole = plan.run_to_vec(&input)?;
    /// let mut part = vec![0u8; 1000];
    /// for start in (0..plan.dst_len()).step_by(1000) {
    ///     let end = (start + 1000).min(plan.dst_len());
    ///     plan.run_range(&input, &mut part[..end - start], start..end)?;
    ///     assert_eq!(part[..end - start], whole[start..end]);
    /// }
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`RelayoutProblem::BufferLength`] when `src` is not the source's length or `dst` not
    /// `range.len()` bytes, [`RelayoutProblem::Range`] when `range` is not inside
    /// `0..dst_len()`; nothing is written then.
    pub fn run_range(&self, src: &[u8], dst: &mut [u8], range: std::ops::Range<usize>) -> Result<()> {
        exec::check_len(&self.src, RelayoutSide::Source, src.len())?;
        let (start, end) = (len_u64(range.start), len_u64(range.end));
        if start > end || end > self.dst.len {
            return Err(problem(RelayoutProblem::Range { start, end, len: self.dst.len }));
        }
        let expected = end.wrapping_sub(start);
        if len_u64(dst.len()) != expected {
            return Err(problem(RelayoutProblem::BufferLength {
                side: RelayoutSide::Destination,
                expected,
                actual: len_u64(dst.len()),
            }));
        }
        if self.whole_dst {
            exec::prefill_part(&self.dst, dst, start);
        }
        window::execute(&self.strategy, (&self.src, &self.dst), (&self.span, self.windowed), src, dst, start);
        Ok(())
    }

    /// [`run`](Self::run) into a new buffer of [`dst_len`](Self::dst_len) bytes.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub fn run_to_vec(&self, src: &[u8]) -> Result<Vec<u8>> {
        exec::check_len(&self.src, RelayoutSide::Source, src.len())?;
        let mut out = vec![0u8; self.dst_len()];
        self.run(src, &mut out)?;
        Ok(out)
    }
}

#[cfg(feature = "bytemuck")]
impl RelayoutPlan {
    /// [`run`](Self::run) over typed buffers of plain element types (feature `bytemuck`): `f32`
    /// for `f32`, `u16` or `half::bf16` for `bf16`, `u8` for packed sub-byte data, … The
    /// lengths are checked in bytes, as by `run`.
    ///
    /// ```
    /// use xla_shape::{relayout::RelayoutPlan, ShapeBuf};
    /// let (src, dst): (ShapeBuf, ShapeBuf) = ("f32[2,2]{0,1}".parse()?, "f32[2,2]{1,0}".parse()?);
    /// let plan = RelayoutPlan::new(src.as_array().expect("array"), dst.as_array().expect("array"))?;
    /// let mut out = [0f32; 4];
    /// plan.run_typed(&[1f32, 3., 2., 4.], &mut out)?;
    /// assert_eq!(out, [1., 2., 3., 4.]);
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub fn run_typed<T: bytemuck::Pod, U: bytemuck::Pod>(&self, src: &[T], dst: &mut [U]) -> Result<()> {
        self.run(bytemuck::cast_slice(src), bytemuck::cast_slice_mut(dst))
    }
}

/// A strided destination must not write two elements to the same bytes: with its dimensions
/// ordered by |stride|, each stride must pass the span of the ones inside it.
fn check_overlap(dst: &Resolved) -> Result<()> {
    let Some(strides) = &dst.view_strides else { return Ok(()) };
    if dst.bounds.contains(&0) {
        return Ok(());
    }
    let width = i128::from(u32::try_from(dst.slot_bits / 8).unwrap_or(u32::MAX));
    let mut dims: Vec<(usize, i64, u64)> = strides
        .iter()
        .zip(dst.bounds.iter())
        .enumerate()
        .filter(|(_, (_, b))| **b > 1)
        .map(|(d, (&s, &b))| (d, s, b))
        .collect();
    dims.sort_by_key(|&(_, s, _)| s.unsigned_abs());
    let mut span = width;
    for (dimension, stride, bound) in dims {
        let magnitude = i128::from(stride.unsigned_abs());
        if magnitude < span {
            return Err(problem(RelayoutProblem::Overlap { dimension, stride }));
        }
        // bound − 1 < 2^64 and |stride| < 2^64: the product fits in i128, the sum too.
        #[allow(clippy::arithmetic_side_effects)]
        {
            span += magnitude * (i128::from(bound) - 1);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::RelayoutPlan;
    use super::plan::{Kernel, Order, RowElements, Stores, Strategy};
    use crate::shape::ShapeBuf;

    fn plan(a: &str, b: &str) -> RelayoutPlan {
        let (a, b): (ShapeBuf, ShapeBuf) = (a.parse().unwrap(), b.parse().unwrap());
        RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap()
    }

    fn kernels(p: &RelayoutPlan) -> Vec<Kernel> {
        match &p.strategy {
            Strategy::Boxes { blocks, .. } => blocks.iter().map(|b| b.kernel).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_case_gets_its_fast_path() {
        assert!(matches!(plan("f32[64,32]{1,0}", "f32[64,32]{1,0}").strategy, Strategy::Identity { .. }));
        // Size-1 dimensions do not matter to identity.
        assert!(matches!(plan("f32[64,1,32]{2,1,0}", "f32[64,1,32]{1,2,0}").strategy, Strategy::Identity { .. }));
        assert_eq!(
            kernels(&plan("f32[64,32]{0,1}", "f32[64,32]{1,0}")),
            [Kernel::Transpose { src_minor: 0, order: Order::Bands }]
        );
        // NCHW → NHWC keeps nothing contiguous but C-blocks: a transpose with an odometer.
        assert!(matches!(
            kernels(&plan("f32[2,3,4,5]{3,2,1,0}", "f32[2,3,4,5]{1,3,2,0}"))[..],
            [Kernel::Transpose { .. }]
        ));
        // Short source-minor axis (4) continued in the source by the next one (4): fused rows.
        assert_eq!(
            kernels(&plan("f32[2,3,64,4,4]{4,3,2,1,0}", "f32[2,3,64,4,4]{2,4,1,3,0}")),
            [Kernel::Transpose { src_minor: 3, order: Order::Fused }]
        );
        // The way back: the short innermost axis (4) continued in the destination by the next
        // one (4), the two the micro-tile's 16 columns.
        assert_eq!(
            kernels(&plan("f32[2,3,64,4,4]{2,4,1,3,0}", "f32[2,3,64,4,4]{4,3,2,1,0}")),
            [Kernel::Transpose { src_minor: 2, order: Order::FusedColumns }]
        );
        // The minor dimension kept: rows.
        assert_eq!(kernels(&plan("f32[2,3,4,5]{3,2,1,0}", "f32[2,3,4,5]{3,1,2,0}")), [Kernel::Rows]);
        // Whole tiles move as rows of 128 elements.
        assert_eq!(kernels(&plan("f32[16,256]{1,0:T(8,128)}", "f32[16,256]{1,0}")), [Kernel::Rows]);
        // Partial tiles: one box per piece.
        assert_eq!(kernels(&plan("f32[10,130]{1,0:T(8,128)}", "f32[10,130]{1,0}")).len(), 4);
        assert_eq!(kernels(&plan("s4[64]{0:E(4)}", "s4[64]{0}")), [Kernel::Unpack { bits: 4 }]);
        assert_eq!(kernels(&plan("s4[64]{0}", "s4[64]{0:E(4)}")), [Kernel::Pack { bits: 4 }]);
        assert_eq!(kernels(&plan("u2[64]{0:E(2)}", "u2[64]{0}")), [Kernel::Unpack { bits: 2 }]);
        // A tiled transpose: the (2,1) sub-tiles' pairs (4 bytes, contiguous on both sides)
        // moved as the elements of a fused transpose.
        assert!(matches!(
            kernels(&plan("bf16[256,64]{1,0}", "bf16[256,64]{0,1:T(8,128)(2,1)}"))[..],
            [Kernel::Wide { bytes: 4, order: Order::Fused, .. }]
        ));
        assert_eq!(kernels(&plan("s2[64]{0}", "s2[64]{0:E(2)}")), [Kernel::Pack { bits: 2 }]);
        // int4 under TPU tiles: 8 rows' nibbles make each column's 32-bit word.
        let t = "s4[16,256]{1,0:T(8,128)(8,1)E(4)}";
        assert_eq!(kernels(&plan("s4[16,256]{1,0}", t)), [Kernel::PackRows { bits: 4, rows: RowElements::Bytes }]);
        assert_eq!(kernels(&plan(t, "s4[16,256]{1,0}")), [Kernel::UnpackRows { bits: 4, rows: RowElements::Bytes }]);
        // Packed along rows (XLA's CPU and GPU int4) ↔ across them (its TPU int4).
        let rows = RowElements::Packed;
        assert_eq!(kernels(&plan("s4[16,256]{1,0:E(4)}", t)), [Kernel::PackRows { bits: 4, rows }]);
        assert_eq!(kernels(&plan(t, "s4[16,256]{1,0:E(4)}")), [Kernel::UnpackRows { bits: 4, rows }]);
        assert_eq!(
            kernels(&plan("u2[16,256]{1,0}", "u2[16,256]{1,0:T(8,128)(4,1)E(2)}")),
            [Kernel::PackRows { bits: 2, rows: RowElements::Bytes }]
        );
        // A combine dimension is not a mixed-radix refinement: the general path.
        assert!(matches!(plan("f32[4,6]{1,0:T(*,2)}", "f32[4,6]{1,0}").strategy, Strategy::General { .. }));
    }

    /// `Auto` streams destinations of 16 MiB and more, except plans that only copy rows shorter
    /// than 4 KiB, which stream where their rows are whole lines, and dense unpacks, which store
    /// normally; an explicit policy is obeyed.
    #[test]
    fn auto_streams_all_but_short_rows_and_unpacks() {
        let stores = |p: &RelayoutPlan| match &p.strategy {
            Strategy::Boxes { stores, .. } | Strategy::Identity { stores } => *stores,
            other @ Strategy::General { .. } => panic!("{other:?}"),
        };
        // The same under `StorePolicy::Streaming`.
        let forced = |src: &str, dst: &str| {
            let (a, b): (ShapeBuf, ShapeBuf) = (src.parse().unwrap(), dst.parse().unwrap());
            let policy = super::StorePolicy::Streaming;
            stores(&RelayoutPlan::with_stores(a.as_array().unwrap(), b.as_array().unwrap(), policy).unwrap())
        };
        // Where this target cannot stream, every plan stores plainly.
        let streaming = if super::stream::available() { Stores::Streaming } else { Stores::Plain };
        assert_eq!(stores(&plan("f32[4096,4096]{0,1}", "f32[4096,4096]{1,0}")), streaming);
        assert_eq!(stores(&plan("f32[4096,4096]{1,0}", "f32[4096,4096]{1,0}")), streaming);
        // Rows of 256 and 512 bytes (r4, whole `T(8,128)` tile rows): streamed only where they
        // are whole destination lines.
        let whole_lines = if super::stream::available() { Stores::WholeLines } else { Stores::Plain };
        assert_eq!(stores(&plan("f32[64,64,64,64]{3,2,1,0}", "f32[64,64,64,64]{3,1,2,0}")), whole_lines);
        assert_eq!(stores(&plan("f32[4096,4096]{1,0:T(8,128)}", "f32[4096,4096]{1,0}")), whole_lines);
        // Rows of 4 KiB.
        assert_eq!(stores(&plan("f32[64,64,1024]{2,1,0}", "f32[64,64,1024]{2,0,1}")), streaming);
        assert_eq!(forced("f32[64,64,64,64]{3,2,1,0}", "f32[64,64,64,64]{3,1,2,0}"), streaming);
        // Dense unpacks of 64 MiB out, in order and under tiles: ordinary stores, unless asked.
        assert_eq!(stores(&plan("s4[67108864]{0:E(4)}", "s4[67108864]{0}")), Stores::Plain);
        assert_eq!(stores(&plan("u2[8192,8192]{1,0:T(8,128)E(2)}", "u2[8192,8192]{1,0}")), Stores::Plain);
        assert_eq!(forced("s4[67108864]{0:E(4)}", "s4[67108864]{0}"), streaming);
        // Packs, and unpacks across a tile's rows, stream.
        assert_eq!(stores(&plan("s4[134217728]{0}", "s4[134217728]{0:E(4)}")), streaming);
        assert_eq!(stores(&plan("s4[8192,8192]{1,0:T(8,128)(8,1)E(4)}", "s4[8192,8192]{1,0}")), streaming);
        // Deinterleaves of 8, 16 or 32 rows side by side, and the interleaves back, streamed.
        assert_eq!(stores(&plan("s8[8192,8192]{1,0:T(8,128)(4,1)}", "s8[8192,8192]{1,0}")), streaming);
        assert_eq!(stores(&plan("bf16[4096,8192]{1,0:T(8,128)(2,1)}", "bf16[4096,8192]{1,0}")), streaming);
        assert_eq!(stores(&plan("s8[8192,8192]{1,0:T(32,128)(4,1)}", "s8[8192,8192]{1,0}")), streaming);
        assert_eq!(stores(&plan("bf16[4096,8192]{1,0:T(16,128)(2,1)}", "bf16[4096,8192]{1,0}")), streaming);
        assert_eq!(stores(&plan("s8[8192,8192]{1,0}", "s8[8192,8192]{1,0:T(8,128)(4,1)}")), streaming);
        assert_eq!(forced("s8[8192,8192]{1,0:T(8,128)(4,1)}", "s8[8192,8192]{1,0}"), streaming);
    }

    /// 2-D transposes whose strips have more rows than a block (`plan::row_block`; in the unit
    /// tests blocks start at 64 KiB of destination rows): every band walks one block before the
    /// next, the last block ragged or whole, from a source and into a destination on a line and
    /// 16 bytes past one, with either stores, whole and in two parts: the element-by-element
    /// copy's bytes.
    #[test]
    fn blocks_of_rows_match_the_reference() {
        use super::StorePolicy;
        // Element type, width, rows (source-minor), columns: f64 two blocks of 512 and 76 rows,
        // two whole blocks; f32 two of 1024 and 52; c128 two of 256 and 88. Under Miri one block
        // of 256 `c128` rows and 8 more (66 KiB).
        let cases: &[(&str, usize, usize, usize)] = if cfg!(miri) {
            &[("c128", 16, 264, 16)]
        } else {
            &[("f64", 8, 1100, 48), ("f64", 8, 1024, 16), ("f32", 4, 2100, 64), ("c128", 16, 600, 8)]
        };
        for &(t, width, rows, cols) in cases {
            let (a, b): (ShapeBuf, ShapeBuf) = (
                format!("{t}[{rows},{cols}]{{0,1}}").parse().unwrap(),
                format!("{t}[{rows},{cols}]{{1,0}}").parse().unwrap(),
            );
            let len = rows * cols * width;
            let input: Vec<u8> = (0..len).map(|k| u8::try_from(k * 7 % 251).unwrap()).collect();
            let mut expected = vec![0u8; len];
            for (i, j) in (0..rows).flat_map(|i| (0..cols).map(move |j| (i, j))) {
                let (s, d) = ((j * rows + i) * width, (i * cols + j) * width);
                expected[d..d + width].copy_from_slice(&input[s..s + width]);
            }
            for policy in [StorePolicy::Cached, StorePolicy::Streaming] {
                let plan = RelayoutPlan::with_stores(a.as_array().unwrap(), b.as_array().unwrap(), policy).unwrap();
                let offsets: &[(usize, usize)] = if cfg!(miri) { &[(16, 16)] } else { &[(0, 0), (16, 16), (0, 16)] };
                for &(src_offset, dst_offset) in offsets {
                    let mut placed = vec![0u8; len + 128];
                    let start = placed.as_ptr().align_offset(64) + src_offset;
                    placed[start..start + len].copy_from_slice(&input);
                    let src = &placed[start..start + len];
                    let mut out = vec![0u8; len + 128];
                    let at = out.as_ptr().align_offset(64) + dst_offset;
                    plan.run(src, &mut out[at..at + len]).unwrap();
                    assert!(
                        out[at..at + len] == expected[..],
                        "{t}[{rows},{cols}] {policy:?} +{src_offset} +{dst_offset}"
                    );
                    let half = len / 2;
                    for range in [0..half, half..len] {
                        let mut part = vec![0u8; range.len() + 128];
                        let at = part.as_ptr().align_offset(64) + dst_offset;
                        let n = range.len();
                        plan.run_range(src, &mut part[at..at + n], range.clone()).unwrap();
                        assert!(part[at..at + n] == expected[range.clone()], "{t}[{rows},{cols}] part {range:?}");
                    }
                }
            }
        }
    }

    /// A 3-D rotation whose rows (48 elements) are short: with streaming stores it takes the
    /// source-order walk that asks for the next band's source runs ahead (`Walk::prefetch`),
    /// and its bytes are the element-by-element copy's.
    #[test]
    fn short_source_runs_asked_for_ahead_match_the_reference() {
        let (a, b): (ShapeBuf, ShapeBuf) =
            ("f32[4,32,48]{2,1,0}".parse().unwrap(), "f32[4,32,48]{1,0,2}".parse().unwrap());
        let plan =
            RelayoutPlan::with_stores(a.as_array().unwrap(), b.as_array().unwrap(), super::StorePolicy::Streaming)
                .unwrap();
        // Without streaming stores (targets other than x86-64) the plan keeps bands.
        if super::stream::available() {
            assert!(matches!(kernels(&plan)[..], [Kernel::Transpose { order: Order::SourceRuns, .. }]));
        }
        let src: Vec<u8> = (0..4 * 32 * 48 * 4).map(|k: usize| u8::try_from(k % 251).unwrap()).collect();
        let out = plan.run_to_vec(&src).unwrap();
        // {1,0,2}: dimension 2 major, then 0, then 1 minor.
        for (i, j, k) in (0..4).flat_map(|i| (0..32).flat_map(move |j| (0..48).map(move |k| (i, j, k)))) {
            let (s, d) = (((i * 32 + j) * 48 + k) * 4, ((k * 4 + i) * 32 + j) * 4);
            assert_eq!(out[d..d + 4], src[s..s + 4], "element ({i}, {j}, {k})");
        }
    }
}
