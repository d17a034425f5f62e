//! Resharding (`docs/shard-buffers.md` §9): the per-device buffers of an array under one
//! sharding turned into its per-device buffers under another, without a global buffer.
//!
//! Both sides are [`ShardBuffers`] plans of the same element type and dimensions (layouts,
//! device sets, device counts and shard forms may differ). For every target device the plan
//! lists the copies it needs: each distinct source box that overlaps the target's box gives one
//! [`Transfer`] — the source device read (one of the box's replicas, named), the overlap's place
//! in the global array, in the source shard and in the target shard. Each transfer is a
//! [`RelayoutPlan::window`] from the source shard's shape to the target shard's, planned once,
//! so tiles, sub-byte packing, legacy padding and a different target layout all move in the
//! one pass; where both shards are dense in the same order ([`ReshardPlan::byte_runs`]) a
//! target is a list of contiguous byte copies, adjacent ones merged.
//!
//! ```text
//!  source shard s ──window(s ∩ t)──▶ target shard t      (one Transfer per overlapping pair)
//! ```

use std::collections::BTreeMap;
use std::iter::Peekable;
use std::ops::Range;

use crate::Result;
use crate::error::ShardBufferProblem;
use crate::relayout::{RelayoutPlan, StorePolicy, Window};

use super::buffers::{BoxPlan, ShardBuffers, len_u64, problem};
use super::device::DeviceId;
use super::runs::{ByteRuns, Dense};
use super::stream::check_range;

/// One overlap of a target box and a source box, planned once.
#[derive(Debug, Clone)]
struct Piece {
    /// The source plan's box.
    source_box: usize,
    /// Where the overlap starts in the global array.
    global_start: Vec<u64>,
    /// Its size, per dimension.
    extent: Vec<u64>,
    /// Where it starts in the source shard.
    source_start: Vec<u64>,
    /// Where it starts in the target shard.
    target_start: Vec<u64>,
    /// Source shard → target shard.
    plan: RelayoutPlan,
}

/// The plan of a reshard: for every device of the target sharding, the copies that make its
/// buffer from the source sharding's buffers.
///
/// ```
/// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, reshard::ReshardPlan, DeviceId, HloSharding};
/// use xla_shape::ShapeBuf;
/// let shape: ShapeBuf = "s8[4,4]".parse()?;
/// let array = shape.as_array().expect("array");
/// let plan_of = |text: &str| -> xla_shape::Result<ShardBuffers> {
///     let sharding: HloSharding = text.parse()?;
///     ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)
/// };
/// // 2×2 blocks on 4 devices → row halves on devices 1 and 0.
/// let plan = ReshardPlan::new(plan_of("{devices=[2,2]<=[4]}")?, plan_of("{devices=[2,1]1,0}")?)?;
/// let global: Vec<u8> = (0..16).collect();
/// let before = plan.source().split(&global)?;
/// let after = plan.run(before.iter().map(|(d, b)| (*d, b.as_slice())))?;
/// assert_eq!(after, plan.target().split(&global)?);
/// let into_1: Vec<_> = plan.transfers_to(DeviceId(1))?.map(|t| t.source).collect();
/// assert_eq!(into_1, [DeviceId(0), DeviceId(1)]); // the top-left and top-right blocks
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReshardPlan {
    from: ShardBuffers,
    to: ShardBuffers,
    /// Per target box (indexed as `to.boxes`), the overlaps with the source boxes.
    pieces: Vec<Vec<Piece>>,
    /// Per target device: the source device read for each piece of its box.
    reads: BTreeMap<DeviceId, Vec<DeviceId>>,
}

/// One copy of a reshard: the elements of the box `global_start + [0, extent)` of the array,
/// read from `source`'s buffer at `source_start` and written to `target`'s at `target_start`.
///
/// ```
/// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, reshard::ReshardPlan, DeviceId, HloSharding};
/// use xla_shape::ShapeBuf;
/// let shape: ShapeBuf = "f32[8]".parse()?;
/// let array = shape.as_array().expect("array");
/// let from: HloSharding = "{devices=[2,2]<=[4] last_tile_dim_replicate}".parse()?; // halves, twice
/// let to: HloSharding = "{devices=[4]<=[4]}".parse()?; // quarters
/// let plan = ReshardPlan::new(
///     ShardBuffers::from_placement(array, &from.placement(&array, None)?, &ShardForm::Exact)?,
///     ShardBuffers::from_placement(array, &to.placement(&array, None)?, &ShardForm::Exact)?,
/// )?;
/// let t = plan.transfers_to(DeviceId(3))?.next().expect("one transfer");
/// assert_eq!((t.source, t.replicas), (DeviceId(3), &[DeviceId(2), DeviceId(3)][..])); // its own replica
/// assert_eq!((t.global_start, t.source_start, t.target_start, t.extent), (&[6][..], &[2][..], &[0][..], &[2][..]));
/// assert_eq!((t.elements, t.bytes), (2, 8));
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer<'p> {
    /// The device whose buffer is written.
    pub target: DeviceId,
    /// The device whose buffer is read: one of `replicas` (the target itself when it holds one,
    /// else the replicas in turn).
    pub source: DeviceId,
    /// Every source device holding this box, ascending.
    pub replicas: &'p [DeviceId],
    /// Where the box starts in the global array, per dimension.
    pub global_start: &'p [u64],
    /// Its size, per dimension.
    pub extent: &'p [u64],
    /// Where it starts in the source device's shard.
    pub source_start: &'p [u64],
    /// Where it starts in the target device's shard.
    pub target_start: &'p [u64],
    /// Its elements.
    pub elements: u64,
    /// Its elements' bytes in the source layout (elements × element bits, rounded up).
    pub bytes: u64,
}

/// The intersection of two boxes, `None` when it is empty.
fn overlap(a: &BoxPlan, b: &BoxPlan) -> Option<(Vec<u64>, Vec<u64>)> {
    let mut start = Vec::with_capacity(a.start.len());
    let mut extent = Vec::with_capacity(a.start.len());
    for (((&sa, &ea), &sb), &eb) in a.start.iter().zip(&a.extent).zip(&b.start).zip(&b.extent) {
        let lo = sa.max(sb);
        let hi = sa.checked_add(ea)?.min(sb.checked_add(eb)?);
        if hi <= lo {
            return None;
        }
        start.push(lo);
        extent.push(hi.wrapping_sub(lo));
    }
    Some((start, extent))
}

/// `a − b` per dimension (`a ≥ b`, as an overlap's start is within each box).
fn minus(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| x.saturating_sub(y)).collect()
}

/// The box's shard shape as an array (a shard shape is always one).
fn shard_array(b: &BoxPlan) -> Result<crate::ArrayShape<'_>> {
    b.shape.as_array().ok_or(crate::Error::NotAnArray {
        operation: "reshard",
        kind: crate::error::ShapeCategory::of(b.shape.view().element_type()),
    })
}

impl ReshardPlan {
    /// Plans the reshard from the buffers of `from` to those of `to`: every overlap of a target
    /// box with a source box (empty boxes have none) is planned once as a relayout window, and
    /// each target device reads each overlap from one of the source box's replicas — itself if
    /// it holds one, else the replicas in turn, so that reads spread over them.
    ///
    /// # Errors
    ///
    /// [`Error::ShardBuffer`](crate::Error::ShardBuffer) with
    /// [`ShardBufferProblem::ReshardElementType`], [`ShardBufferProblem::ReshardRank`] or
    /// [`ShardBufferProblem::ReshardDimension`] when the two plans' global shapes differ in
    /// element type or dimensions; the errors of [`RelayoutPlan::window`].
    pub fn new(from: ShardBuffers, to: ShardBuffers) -> Result<Self> {
        if from.element_type != to.element_type {
            return Err(problem(ShardBufferProblem::ReshardElementType {
                from: from.element_type,
                to: to.element_type,
            }));
        }
        if from.bounds.len() != to.bounds.len() {
            return Err(problem(ShardBufferProblem::ReshardRank { from: from.bounds.len(), to: to.bounds.len() }));
        }
        if let Some((dimension, (&f, &t))) = from.bounds.iter().zip(&to.bounds).enumerate().find(|(_, (f, t))| f != t) {
            return Err(problem(ShardBufferProblem::ReshardDimension { dimension, from: f, to: t }));
        }
        let mut pieces = Vec::with_capacity(to.boxes.len());
        for target in &to.boxes {
            let mut list = Vec::new();
            for (source_box, source) in from.boxes.iter().enumerate() {
                let Some((global_start, extent)) = overlap(target, source) else { continue };
                let source_start = minus(&global_start, &source.start);
                let target_start = minus(&global_start, &target.start);
                let plan = RelayoutPlan::window(
                    shard_array(source)?,
                    shard_array(target)?,
                    Window { src_start: &source_start, dst_start: &target_start, extent: &extent },
                    StorePolicy::Auto,
                )?;
                list.push(Piece { source_box, global_start, extent, source_start, target_start, plan });
            }
            pieces.push(list);
        }
        let mut turns = vec![0usize; from.boxes.len()];
        let mut reads = BTreeMap::new();
        for (&device, &k) in &to.devices {
            let chosen = pieces
                .get(k)
                .map(|list| {
                    list.iter()
                        .map(|p| {
                            let holders = from.boxes.get(p.source_box).map_or(&[][..], |b| b.devices.as_slice());
                            if holders.contains(&device) {
                                return device;
                            }
                            let turn = turns.get_mut(p.source_box);
                            let i = turn.as_deref().copied().unwrap_or(0);
                            if let Some(t) = turn {
                                *t = t.wrapping_add(1);
                            }
                            holders.get(i.checked_rem(holders.len()).unwrap_or(0)).copied().unwrap_or(device)
                        })
                        .collect()
                })
                .unwrap_or_default();
            reads.insert(device, chosen);
        }
        Ok(Self { from, to, pieces, reads })
    }

    /// The source side: its devices, shard shapes and lengths, its split and assembly.
    pub fn source(&self) -> &ShardBuffers {
        &self.from
    }

    /// The target side.
    pub fn target(&self) -> &ShardBuffers {
        &self.to
    }

    /// The target box of `device` with its pieces and the source read for each.
    fn target_of(&self, device: DeviceId) -> Result<(&BoxPlan, &[Piece], &[DeviceId])> {
        let unknown = || problem(ShardBufferProblem::UnknownDevice { device: device.0 });
        let &k = self.to.devices.get(&device).ok_or_else(unknown)?;
        let b = self.to.boxes.get(k).ok_or_else(unknown)?;
        let pieces = self.pieces.get(k).map_or(&[][..], Vec::as_slice);
        let reads = self.reads.get(&device).map_or(&[][..], Vec::as_slice);
        Ok((b, pieces, reads))
    }

    /// The transfers that make `device`'s buffer, in the order of the source boxes.
    ///
    /// # Errors
    ///
    /// [`ShardBufferProblem::UnknownDevice`] for a device the target sharding does not name.
    pub fn transfers_to(&self, device: DeviceId) -> Result<impl ExactSizeIterator<Item = Transfer<'_>> + '_> {
        let (_, pieces, reads) = self.target_of(device)?;
        let bits = self.from.element_bits;
        Ok(pieces.iter().zip(reads).map(move |(p, &source)| {
            let elements = p.extent.iter().fold(1u64, |acc, &e| acc.saturating_mul(e));
            Transfer {
                target: device,
                source,
                replicas: self.from.boxes.get(p.source_box).map_or(&[][..], |b| b.devices.as_slice()),
                global_start: &p.global_start,
                extent: &p.extent,
                source_start: &p.source_start,
                target_start: &p.target_start,
                elements,
                bytes: elements.saturating_mul(bits).div_ceil(8),
            }
        }))
    }

    /// Every transfer, by ascending target device.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, reshard::ReshardPlan, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let shape: ShapeBuf = "f32[8,8]".parse()?;
    /// let array = shape.as_array().expect("array");
    /// let side = |text: &str| -> xla_shape::Result<ShardBuffers> {
    ///     let sharding: HloSharding = text.parse()?;
    ///     ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)
    /// };
    /// let plan = ReshardPlan::new(side("{devices=[2,4]<=[8]}")?, side("{devices=[8,1]<=[8]}")?)?;
    /// assert_eq!(plan.transfers().count(), 32); // each row of 8 from four column blocks
    /// assert!(plan.transfers().all(|t| t.bytes == 8));
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn transfers(&self) -> impl Iterator<Item = Transfer<'_>> + '_ {
        self.to.devices.keys().flat_map(move |&device| self.transfers_to(device).into_iter().flatten())
    }

    /// Checks a set of source buffers once — every source device exactly once, each its shard's
    /// length, replicas equal in their elements (as [`ShardBuffers::assemble`] checks them) —
    /// for targets made in parts ([`ReshardSources::target_range`]).
    ///
    /// # Errors
    ///
    /// As [`ShardBuffers::assemble`].
    pub fn sources<'b>(
        &self,
        shards: impl IntoIterator<Item = (DeviceId, &'b [u8])>,
    ) -> Result<ReshardSources<'_, 'b>> {
        Ok(ReshardSources { plan: self, shards: self.from.collect(shards)? })
    }

    /// Every target device's buffer, by ascending device id, from the source buffers (checked
    /// as [`sources`](Self::sources) checks them). With the `rayon` feature the targets are made
    /// in parallel.
    ///
    /// # Errors
    ///
    /// As [`sources`](Self::sources).
    pub fn run<'b>(&self, shards: impl IntoIterator<Item = (DeviceId, &'b [u8])>) -> Result<Vec<(DeviceId, Vec<u8>)>> {
        let sources = self.sources(shards)?;
        let mut out: Vec<(DeviceId, Vec<u8>)> = self
            .to
            .devices()
            .map(|d| (d, vec![0u8; usize::try_from(self.to.shard_len(d).unwrap_or(0)).unwrap_or(usize::MAX)]))
            .collect();
        let mut views: Vec<(DeviceId, &mut [u8])> = out.iter_mut().map(|(d, b)| (*d, b.as_mut_slice())).collect();
        sources.targets_into(&mut views)?;
        Ok(out)
    }

    /// [`run`](Self::run) into caller-provided buffers: any targets, each once, each its shard's
    /// length (a host makes only its own devices' buffers).
    ///
    /// # Errors
    ///
    /// As [`sources`](Self::sources); [`ShardBufferProblem::UnknownDevice`],
    /// [`ShardBufferProblem::DuplicateDevice`] or [`ShardBufferProblem::Length`] for the
    /// targets. Nothing is written then.
    pub fn run_into<'b>(
        &self,
        shards: impl IntoIterator<Item = (DeviceId, &'b [u8])>,
        targets: &mut [(DeviceId, &mut [u8])],
    ) -> Result<()> {
        self.sources(shards)?.targets_into(targets)
    }

    /// The target's buffer as byte copies from the source buffers, when the target shard and
    /// every source shard it reads are dense (no tiles, no legacy padding, whole-byte elements,
    /// no tail padding) in the same dimension order and the copies cover the target end to end
    /// (not padded to a tile): each [`ReshardRun`] copies `len` bytes from `source_offset` of the
    /// source's buffer to `target_offset` of the target's, in the target's order, adjacent runs
    /// merged. `None` otherwise, or for a device the target sharding does not name. Lazy: its
    /// state is one pair of counters per transfer.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, reshard::{ReshardPlan, ReshardRun}, DeviceId, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let shape: ShapeBuf = "u8[4,4]".parse()?;
    /// let array = shape.as_array().expect("array");
    /// let side = |text: &str| -> xla_shape::Result<ShardBuffers> {
    ///     let sharding: HloSharding = text.parse()?;
    ///     ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)
    /// };
    /// // Column halves → row halves: device 0's rows 0..2 are two runs of 2 bytes from each half.
    /// let plan = ReshardPlan::new(side("{devices=[1,2]<=[2]}")?, side("{devices=[2,1]<=[2]}")?)?;
    /// let runs: Vec<ReshardRun> = plan.byte_runs(DeviceId(0)).expect("dense").collect();
    /// let run = |source, source_offset, target_offset| ReshardRun { source: DeviceId(source), source_offset, target_offset, len: 2 };
    /// assert_eq!(runs, [run(0, 0, 0), run(1, 0, 2), run(0, 2, 4), run(1, 2, 6)]);
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn byte_runs(&self, device: DeviceId) -> Option<ReshardRuns> {
        let (target, pieces, reads) = self.target_of(device).ok()?;
        let target_len = self.to.shard_len(device)?;
        if !target.whole {
            return None;
        }
        let target_dense = dense_of(target)?;
        let order: Vec<crate::Dim> = target.shape.as_array()?.minor_to_major().iter().collect();
        let mut pending = Vec::with_capacity(pieces.len());
        let mut min_len = u64::MAX;
        for (p, &source) in pieces.iter().zip(reads) {
            let b = self.from.boxes.get(p.source_box)?;
            if !b.shape.as_array()?.minor_to_major().iter().eq(order.iter().copied()) {
                return None;
            }
            let src = ByteRuns::new(&dense_of(b)?, &p.source_start, &p.extent)?;
            let dst = ByteRuns::new(&target_dense, &p.target_start, &p.extent)?;
            min_len = min_len.min(src.run_len()).min(dst.run_len());
            pending.push(Paired { source, src, dst, at_src: None, at_dst: None }.peekable());
        }
        let runs = ReshardRuns { pending, held: None, min_len };
        // The runs must tile the target buffer end to end (a first pass, which holds nothing).
        let mut at = 0u64;
        for run in runs.clone() {
            if run.target_offset != at {
                return None;
            }
            at = at.checked_add(run.len)?;
        }
        (at == target_len).then_some(runs)
    }
}

/// The dense form of a box's shard shape.
fn dense_of(b: &BoxPlan) -> Option<Dense> {
    let array = b.shape.as_array()?;
    let bounds = crate::memory::extent::bounds(array, "reshard").ok()?;
    Dense::of(array, &bounds).ok().flatten()
}

/// One contiguous copy of a reshard ([`ReshardPlan::byte_runs`]).
///
/// ```
/// use xla_shape::sharding::{reshard::ReshardRun, DeviceId};
/// let run = ReshardRun { source: DeviceId(2), source_offset: 64, target_offset: 0, len: 32 };
/// assert_eq!(run.source_offset + run.len, 96);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReshardRun {
    /// The device whose buffer is read.
    pub source: DeviceId,
    /// Where the run starts in the source buffer.
    pub source_offset: u64,
    /// Where it starts in the target buffer.
    pub target_offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// One transfer's source runs and target runs cut to their common pieces: both walk the same
/// box in the same dimension order, so their bytes correspond one to one.
#[derive(Debug, Clone)]
struct Paired {
    source: DeviceId,
    src: ByteRuns,
    dst: ByteRuns,
    /// The current source run: its next offset and the bytes left.
    at_src: Option<(u64, u64)>,
    at_dst: Option<(u64, u64)>,
}

impl Iterator for Paired {
    type Item = ReshardRun;

    fn next(&mut self) -> Option<ReshardRun> {
        let refill = |at: &mut Option<(u64, u64)>, runs: &mut ByteRuns| {
            if at.is_none_or(|(_, left)| left == 0) {
                *at = runs.next().map(|r| (r.global, r.len));
            }
        };
        refill(&mut self.at_src, &mut self.src);
        refill(&mut self.at_dst, &mut self.dst);
        let ((s, sl), (d, dl)) = (self.at_src?, self.at_dst?);
        let len = sl.min(dl);
        if len == 0 {
            return None;
        }
        self.at_src = Some((s.saturating_add(len), sl.wrapping_sub(len)));
        self.at_dst = Some((d.saturating_add(len), dl.wrapping_sub(len)));
        Some(ReshardRun { source: self.source, source_offset: s, target_offset: d, len })
    }
}

/// A target's byte copies in the target's order ([`ReshardPlan::byte_runs`]).
#[derive(Debug, Clone)]
pub struct ReshardRuns {
    pending: Vec<Peekable<Paired>>,
    /// A run being extended by the ones that continue it in both buffers.
    held: Option<ReshardRun>,
    /// The shortest run before merging.
    min_len: u64,
}

impl ReshardRuns {
    /// The shortest run (before adjacent runs are merged; `u64::MAX` for a target without
    /// transfers): a caller choosing between copying runs and relaying out parts looks at it.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, reshard::ReshardPlan, DeviceId, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let shape: ShapeBuf = "f32[8,8]".parse()?;
    /// let array = shape.as_array().expect("array");
    /// let side = |text: &str| -> xla_shape::Result<ShardBuffers> {
    ///     let sharding: HloSharding = text.parse()?;
    ///     ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)
    /// };
    /// let plan = ReshardPlan::new(side("{devices=[1,2]<=[2]}")?, side("{devices=[2,1]<=[2]}")?)?;
    /// assert_eq!(plan.byte_runs(DeviceId(0)).expect("dense").min_len(), 16); // half rows
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn min_len(&self) -> u64 {
        self.min_len
    }

    /// The next run of any transfer, by target offset.
    fn next_unmerged(&mut self) -> Option<ReshardRun> {
        let (_, best) = self
            .pending
            .iter_mut()
            .enumerate()
            .filter_map(|(i, runs)| runs.peek().map(|run| (run.target_offset, i)))
            .min()?;
        self.pending.get_mut(best)?.next()
    }
}

impl Iterator for ReshardRuns {
    type Item = ReshardRun;

    fn next(&mut self) -> Option<ReshardRun> {
        let mut run = match self.held.take() {
            Some(run) => run,
            None => self.next_unmerged()?,
        };
        while let Some(next) = self.next_unmerged() {
            let continues = next.source == run.source
                && run.source_offset.checked_add(run.len) == Some(next.source_offset)
                && run.target_offset.checked_add(run.len) == Some(next.target_offset);
            if let (true, Some(len)) = (continues, run.len.checked_add(next.len)) {
                run.len = len;
            } else {
                self.held = Some(next);
                break;
            }
        }
        Some(run)
    }
}

/// A checked set of source buffers ([`ReshardPlan::sources`]), from which target buffers are
/// made whole or a range at a time.
///
/// ```
/// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, reshard::ReshardPlan, DeviceId, HloSharding};
/// use xla_shape::ShapeBuf;
/// let shape: ShapeBuf = "u8[4,6]".parse()?;
/// let array = shape.as_array().expect("array");
/// let side = |text: &str, form: ShardForm| -> xla_shape::Result<ShardBuffers> {
///     let sharding: HloSharding = text.parse()?;
///     ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &form)
/// };
/// let plan = ReshardPlan::new(side("{devices=[1,4]<=[4]}", ShardForm::Exact)?, side("{devices=[4,1]<=[4]}", ShardForm::Exact)?)?;
/// let global: Vec<u8> = (0..24).collect();
/// let before = plan.source().split(&global)?;
/// let sources = plan.sources(before.iter().map(|(d, b)| (*d, b.as_slice())))?;
/// let mut row = [0u8; 6];
/// sources.target_range(DeviceId(2), &mut row[..4], 0..4)?;
/// sources.target_range(DeviceId(2), &mut row[4..], 4..6)?;
/// assert_eq!(row, [12, 13, 14, 15, 16, 17]);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReshardSources<'p, 'b> {
    plan: &'p ReshardPlan,
    shards: BTreeMap<DeviceId, &'b [u8]>,
}

impl ReshardSources<'_, '_> {
    /// The source buffer of `device` (checked present by [`ReshardPlan::sources`]).
    fn source(&self, device: DeviceId) -> Result<&[u8]> {
        self.shards.get(&device).copied().ok_or_else(|| problem(ShardBufferProblem::Missing { device: device.0 }))
    }

    /// Makes `device`'s whole buffer in `out` (its shard's length): padding, then every
    /// transfer's elements.
    ///
    /// # Errors
    ///
    /// [`ShardBufferProblem::UnknownDevice`] for a device the target sharding does not name,
    /// [`ShardBufferProblem::Length`] when `out` is not its shard's length; nothing is written
    /// then.
    pub fn target_into(&self, device: DeviceId, out: &mut [u8]) -> Result<()> {
        let (b, pieces, reads) = self.plan.target_of(device)?;
        let expected = len_u64(b.split.dst_len());
        if len_u64(out.len()) != expected {
            return Err(problem(ShardBufferProblem::Length { device: device.0, expected, actual: len_u64(out.len()) }));
        }
        if !b.whole {
            out.fill(0);
        }
        b.split.fill_padding(out)?;
        for (p, &source) in pieces.iter().zip(reads) {
            p.plan.run(self.source(source)?, out)?;
        }
        Ok(())
    }

    /// Bytes `range` of `device`'s buffer into `out` (`range.len()` bytes): a target made part
    /// by part in bounded memory. Parts that tile the buffer give
    /// [`ReshardPlan::run`]'s bytes. No allocation.
    ///
    /// # Errors
    ///
    /// [`ShardBufferProblem::UnknownDevice`] for a device the target sharding does not name;
    /// [`Error::Relayout`](crate::Error::Relayout) with
    /// [`RelayoutProblem::Range`](crate::error::RelayoutProblem::Range) when `range` is not inside
    /// its buffer and [`RelayoutProblem::BufferLength`](crate::error::RelayoutProblem::BufferLength)
    /// when `out` is not `range.len()` bytes. Nothing is written then.
    pub fn target_range(&self, device: DeviceId, out: &mut [u8], range: Range<usize>) -> Result<()> {
        let (b, pieces, reads) = self.plan.target_of(device)?;
        check_range(b.split.dst_len(), out.len(), &range)?;
        b.split.fill_part(out, range.start);
        for (p, &source) in pieces.iter().zip(reads) {
            p.plan.run_range(self.source(source)?, out, range.clone())?;
        }
        Ok(())
    }

    /// Every given target made (each checked first: known, given once, its length).
    fn targets_into(&self, targets: &mut [(DeviceId, &mut [u8])]) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for (device, buf) in targets.iter() {
            let Some(expected) = self.plan.to.shard_len(*device) else {
                return Err(problem(ShardBufferProblem::UnknownDevice { device: device.0 }));
            };
            if !seen.insert(*device) {
                return Err(problem(ShardBufferProblem::DuplicateDevice { device: device.0 }));
            }
            if expected != len_u64(buf.len()) {
                return Err(problem(ShardBufferProblem::Length {
                    device: device.0,
                    expected,
                    actual: len_u64(buf.len()),
                }));
            }
        }
        #[cfg(feature = "rayon")]
        {
            use rayon::prelude::*;
            targets.par_iter_mut().try_for_each(|(device, buf)| self.target_into(*device, buf))
        }
        #[cfg(not(feature = "rayon"))]
        {
            targets.iter_mut().try_for_each(|(device, buf)| self.target_into(*device, buf))
        }
    }
}
