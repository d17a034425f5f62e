//! Shard buffers in parts (`docs/shard-buffers.md` §5): the split and the assembly of a
//! [`ShardBuffers`] plan produced a range of bytes at a time, so that a global array larger than
//! memory is split or assembled in bounded memory (the command line's `shards --split` and
//! `--assemble`), and the byte runs that a dense layout reduces them to.
//!
//! * [`ShardBuffers::split_range`]: bytes `range` of one device's shard buffer, cut from the
//!   global buffer; parts that tile the shard give [`ShardBuffers::split`]'s bytes.
//! * [`ShardBuffers::sources`] checks a set of shard buffers once (devices, lengths, replicas,
//!   the last compared a chunk at a time), then [`ShardSources::assemble_range`] gives bytes
//!   `range` of the global buffer; parts that tile it give [`ShardBuffers::assemble`]'s bytes.
//! * [`ShardBuffers::byte_runs`]: where the global layout is dense (no tiles, no legacy or tail
//!   padding, whole-byte elements), each device's exact shard is a sequence of contiguous byte
//!   runs of the global buffer, in the shard's order; copying them (`copy_file_range`,
//!   `memcpy`, a `write` from a mapping) is the whole split, and in the global order the whole
//!   assembly. Computed lazily: an iterator with state of the array's rank, nothing
//!   proportional to the array.
//!
//! Every part is a [`RelayoutPlan::run_range`] of the box's window plans, so tiled, sub-byte and
//! legacy-padded layouts keep the relayout engine's rules; nothing here restates them.
//!
//! ```text
//!  global  ├──run──┤       ├──run──┤       ├──run──┤        (device d's box, rows of a {1,0} array)
//!  shard d ├──run──┼──run──┼──run──┤                         (its buffer: the runs end to end)
//! ```

use std::collections::BTreeMap;
use std::ops::Range;

use crate::Result;
use crate::error::{Error, RelayoutProblem, RelayoutSide, ShardBufferProblem};
use crate::relayout::RelayoutPlan;
use crate::shape::ArrayShape;

use super::buffers::{BoxPlan, ShardBuffers, len_u64, problem};
use super::device::DeviceId;

/// Bytes compared at a time when two replicas differ somewhere and their padding bits must be
/// zeroed before they are compared again (two buffers of this size, only then).
pub(super) const REPLICA_CHUNK: usize = 1 << 20;

/// A dense global layout: each logical dimension's byte stride, the dimensions from minor to
/// major, their bounds and the element's width in bytes.
#[derive(Debug, Clone)]
pub(super) struct Dense {
    strides: Vec<u64>,
    order: Vec<usize>,
    bounds: Vec<u64>,
    width: u64,
}

impl Dense {
    /// The dense form of `global` (`bounds`: its dimensions' bounds), or `None` when its layout
    /// has tiles, legacy padding, sub-byte or otherwise sized elements or tail padding: its byte
    /// size must be exactly elements × the type's byte width.
    pub(super) fn of(global: ArrayShape<'_>, bounds: &[u64]) -> Result<Option<Self>> {
        if let Some(layout) = global.layout() {
            if layout.tiles().len() != 0 || layout.padded_dimensions().is_some() {
                return Ok(None);
            }
        }
        let Some(width) = global.element_type().byte_width().map(u64::from).filter(|&w| w > 0) else {
            return Ok(None);
        };
        let Some(strides) = crate::memory::size::byte_strides(global)? else { return Ok(None) };
        let storage = crate::memory::size::storage_bytes(global)?;
        let elements = bounds.iter().try_fold(1u64, |acc, &b| acc.checked_mul(b));
        if elements.and_then(|e| e.checked_mul(width)) != Some(storage) {
            return Ok(None);
        }
        let Ok(strides) = strides.into_iter().map(u64::try_from).collect::<std::result::Result<Vec<u64>, _>>() else {
            return Ok(None);
        };
        let order = global.minor_to_major().iter().map(crate::Dim::index).collect();
        Ok(Some(Self { strides, order, bounds: bounds.to_vec(), width }))
    }
}

/// One contiguous piece of a shard: `len` bytes at byte `global` of the global buffer and at
/// byte `shard` of the shard buffer.
///
/// ```
/// use xla_shape::sharding::stream::ByteRun;
/// let run = ByteRun { global: 64, shard: 0, len: 32 };
/// assert_eq!(run.global + run.len, 96);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteRun {
    /// Where the run starts in the global buffer.
    pub global: u64,
    /// Where it starts in the shard buffer.
    pub shard: u64,
    /// Its length in bytes (the same for every run of a shard).
    pub len: u64,
}

/// The byte runs of one device's shard ([`ShardBuffers::byte_runs`]), in the shard's order (the
/// `shard` offsets are `0, len, 2·len, …`), which is also ascending in the global buffer.
///
/// ```
/// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, stream::ByteRun, DeviceId, HloSharding};
/// use xla_shape::ShapeBuf;
/// let global: ShapeBuf = "u8[4,6]{1,0}".parse()?;
/// let array = global.as_array().expect("array");
/// let sharding: HloSharding = "{devices=[1,2]<=[2]}".parse()?; // column halves
/// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
/// let runs: Vec<ByteRun> = plan.byte_runs(DeviceId(1)).expect("dense").collect();
/// assert_eq!(runs[..2], [ByteRun { global: 3, shard: 0, len: 3 }, ByteRun { global: 9, shard: 3, len: 3 }]);
/// assert_eq!(runs.len(), 4);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ByteRuns {
    /// Each run's length.
    len: u64,
    /// Where the box's first run starts in the global buffer.
    base: u64,
    /// The dimensions outside a run, minor first: (extent, global byte stride).
    outer: Vec<(u64, u64)>,
    /// The position in `outer`.
    index: Vec<u64>,
    /// The next run's shard offset.
    shard: u64,
    /// Runs left.
    left: u64,
}

impl ByteRuns {
    fn new(dense: &Dense, b: &BoxPlan) -> Option<Self> {
        let mut len = dense.width;
        let mut k = 0;
        // The run covers the minor dimensions while each is whole, and the first one that is not.
        while let Some(&d) = dense.order.get(k) {
            len = len.checked_mul(*b.extent.get(d)?)?;
            k = k.checked_add(1)?;
            if b.extent.get(d) != dense.bounds.get(d) {
                break;
            }
        }
        let outer: Vec<(u64, u64)> = dense
            .order
            .get(k..)?
            .iter()
            .map(|&d| Some((*b.extent.get(d)?, *dense.strides.get(d)?)))
            .collect::<Option<_>>()?;
        let base = b
            .start
            .iter()
            .zip(&dense.strides)
            .try_fold(0u64, |acc, (&s, &stride)| acc.checked_add(s.checked_mul(stride)?))?;
        let count = outer.iter().try_fold(1u64, |acc, &(e, _)| acc.checked_mul(e))?;
        let left = if len == 0 { 0 } else { count };
        Some(Self { len, base, index: vec![0; outer.len()], outer, shard: 0, left })
    }

    /// Each run's length in bytes.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, DeviceId, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let global: ShapeBuf = "f32[8,4]{1,0}".parse()?;
    /// let array = global.as_array().expect("array");
    /// let sharding: HloSharding = "{devices=[4,1]<=[4]}".parse()?; // two whole rows each
    /// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
    /// let runs = plan.byte_runs(DeviceId(2)).expect("dense");
    /// assert_eq!((runs.run_len(), runs.count()), (32, 1));
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn run_len(&self) -> u64 {
        self.len
    }
}

impl Iterator for ByteRuns {
    type Item = ByteRun;

    fn next(&mut self) -> Option<ByteRun> {
        if self.left == 0 {
            return None;
        }
        let global = self
            .index
            .iter()
            .zip(&self.outer)
            .try_fold(self.base, |acc, (&i, &(_, stride))| acc.checked_add(i.checked_mul(stride)?))?;
        let run = ByteRun { global, shard: self.shard, len: self.len };
        self.left = self.left.saturating_sub(1);
        self.shard = self.shard.saturating_add(self.len);
        for (i, &(extent, _)) in self.index.iter_mut().zip(&self.outer) {
            *i = i.saturating_add(1);
            if *i < extent {
                break;
            }
            *i = 0;
        }
        Some(run)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.left).ok();
        (left.unwrap_or(usize::MAX), left)
    }
}

/// `range` must lie in `0..len` and `out` be as long as it.
fn check_range(len: usize, out: usize, range: &Range<usize>) -> Result<()> {
    let (start, end) = (len_u64(range.start), len_u64(range.end));
    if start > end || end > len_u64(len) {
        return Err(Error::Relayout(Box::new(RelayoutProblem::Range { start, end, len: len_u64(len) })));
    }
    let expected = end.wrapping_sub(start);
    if len_u64(out) != expected {
        return Err(Error::Relayout(Box::new(RelayoutProblem::BufferLength {
            side: RelayoutSide::Destination,
            expected,
            actual: len_u64(out),
        })));
    }
    Ok(())
}

impl ShardBuffers {
    fn box_of(&self, device: DeviceId) -> Result<&BoxPlan> {
        self.devices
            .get(&device)
            .and_then(|&k| self.boxes.get(k))
            .ok_or_else(|| problem(ShardBufferProblem::UnknownDevice { device: device.0 }))
    }

    /// The devices of each distinct box, each group ascending: replicas are in one group (the
    /// lowest device's buffer is the one assembled), and the groups in the order of their boxes.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, DeviceId, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let global: ShapeBuf = "f32[8,4]".parse()?;
    /// let array = global.as_array().expect("array");
    /// let sharding: HloSharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}".parse()?;
    /// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
    /// let groups: Vec<&[DeviceId]> = plan.replica_groups().collect();
    /// assert_eq!(groups, [&[DeviceId(0), DeviceId(1)][..], &[DeviceId(2), DeviceId(3)][..]]);
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn replica_groups(&self) -> impl ExactSizeIterator<Item = &[DeviceId]> + '_ {
        self.boxes.iter().map(|b| b.devices.as_slice())
    }

    /// Bytes `range` of `device`'s shard buffer, cut from `global`, into `out` (`range.len()`
    /// bytes): a shard produced part by part in bounded memory. Parts that tile
    /// `0..shard_len(device)` give [`split`](Self::split)'s bytes for the device, padding
    /// included. No allocation.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, DeviceId, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let global: ShapeBuf = "u8[4,6]{0,1}".parse()?;
    /// let array = global.as_array().expect("array");
    /// let sharding: HloSharding = "{devices=[2,2]<=[4]}".parse()?;
    /// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
    /// let bytes: Vec<u8> = (0..24).collect();
    /// let whole = plan.split(&bytes)?;
    /// let mut part = [0u8; 4];
    /// for (device, shard) in &whole {
    ///     for start in (0..shard.len()).step_by(4) {
    ///         let end = (start + 4).min(shard.len());
    ///         plan.split_range(*device, &bytes, &mut part[..end - start], start..end)?;
    ///         assert_eq!(part[..end - start], shard[start..end]);
    ///     }
    /// }
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ShardBuffer`] with [`ShardBufferProblem::GlobalLength`] for `global`'s length,
    /// [`ShardBufferProblem::UnknownDevice`] for a device without a range; [`Error::Relayout`]
    /// with [`RelayoutProblem::Range`] when `range` is not inside the shard and
    /// [`RelayoutProblem::BufferLength`] when `out` is not `range.len()` bytes. Nothing is
    /// written then.
    pub fn split_range(&self, device: DeviceId, global: &[u8], out: &mut [u8], range: Range<usize>) -> Result<()> {
        self.check_global(global.len())?;
        let b = self.box_of(device)?;
        check_range(b.split.dst_len(), out.len(), &range)?;
        if !b.whole {
            b.split.fill_part(out, range.start);
        }
        b.split.run_range(global, out, range)
    }

    /// The byte runs of `device`'s shard ([`ByteRuns`]): `None` unless the global layout is
    /// dense (no tiles, no legacy `padded_dimensions`, whole-byte elements, no tail padding: its
    /// byte size is elements × byte width) and the shard is exact (not padded to a tile larger
    /// than its box), or for a device without a range. Copying each run's `len` bytes from
    /// `global` in the global buffer to `shard` in the shard buffer is the split; the reverse is
    /// the assembly.
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, DeviceId, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let global: ShapeBuf = "s8[4,6]{0,1}".parse()?;
    /// let array = global.as_array().expect("array");
    /// let sharding: HloSharding = "{devices=[2,2]<=[4]}".parse()?;
    /// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
    /// let bytes: Vec<u8> = (0..24).collect();
    /// for (device, shard) in plan.split(&bytes)? {
    ///     let mut copied = vec![0u8; shard.len()];
    ///     for run in plan.byte_runs(device).expect("dense") {
    ///         let (g, s, n) = (run.global as usize, run.shard as usize, run.len as usize);
    ///         copied[s..s + n].copy_from_slice(&bytes[g..g + n]);
    ///     }
    ///     assert_eq!(copied, shard);
    /// }
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn byte_runs(&self, device: DeviceId) -> Option<ByteRuns> {
        let b = self.box_of(device).ok()?;
        if !b.whole {
            return None;
        }
        ByteRuns::new(self.dense.as_ref()?, b)
    }

    /// Checks a set of shard buffers for assembly by parts: every device of the plan exactly
    /// once, each buffer its shard's length, replicas equal in their elements (compared as
    /// [`assemble`](Self::assemble) compares them, a chunk at a time).
    ///
    /// ```
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, HloSharding};
    /// use xla_shape::ShapeBuf;
    /// let global: ShapeBuf = "u8[4,6]{1,0}".parse()?;
    /// let array = global.as_array().expect("array");
    /// let sharding: HloSharding = "{devices=[1,2,2]<=[4] last_tile_dim_replicate}".parse()?;
    /// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
    /// let bytes: Vec<u8> = (0..24).collect();
    /// let shards = plan.split(&bytes)?;
    /// let sources = plan.sources(shards.iter().map(|(d, b)| (*d, b.as_slice())))?;
    /// let mut back = vec![0u8; 24];
    /// for start in (0..24).step_by(5) {
    ///     let end = (start + 5).min(24);
    ///     sources.assemble_range(&mut back[start..end], start..end)?;
    /// }
    /// assert_eq!(back, bytes);
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`assemble`](Self::assemble).
    pub fn sources<'b>(&self, shards: impl IntoIterator<Item = (DeviceId, &'b [u8])>) -> Result<ShardSources<'_, 'b>> {
        Ok(ShardSources { plan: self, shards: self.collect(shards)? })
    }

    /// Every box's replicas against its lowest device's buffer, `chunk` bytes at a time.
    pub(super) fn check_replicas(&self, shards: &BTreeMap<DeviceId, &[u8]>, chunk: usize) -> Result<()> {
        for b in &self.boxes {
            let Some((&first, rest)) = b.devices.split_first() else { continue };
            let Some(&reference) = shards.get(&first) else { continue };
            let mut canonical = None;
            for &device in rest {
                let Some(&other) = shards.get(&device) else { continue };
                if let Some(byte) = replica_difference(b, (reference, other), chunk, &mut canonical)? {
                    return Err(problem(ShardBufferProblem::ReplicaMismatch {
                        device: device.0,
                        replica_of: first.0,
                        byte: len_u64(byte),
                    }));
                }
            }
        }
        Ok(())
    }
}

/// The box's identity relayout and two chunk buffers, made when two replicas first differ.
type Canonical = Option<(RelayoutPlan, Vec<u8>, Vec<u8>)>;

/// The first byte at which two replicas of box `b` differ in their elements, if any. Padding
/// bits do not count: JAX's CPU client leaves the spare nibble of an odd-length `s4` buffer
/// undefined, so replicas may differ there. Chunks with equal bytes are equal; a chunk that
/// differs is copied from both through the box's identity relayout ([`RelayoutPlan::run_range`],
/// which writes the elements and zeroes every padding bit) and those copies are compared.
fn replica_difference(
    b: &BoxPlan,
    (reference, other): (&[u8], &[u8]),
    chunk: usize,
    canonical: &mut Canonical,
) -> Result<Option<usize>> {
    let chunk = chunk.max(1);
    let len = reference.len().min(other.len());
    let mut start = 0usize;
    while start < len {
        let end = len.min(start.saturating_add(chunk));
        let (Some(x), Some(y)) = (reference.get(start..end), other.get(start..end)) else { break };
        if x != y {
            let Some(shard) = b.shape.as_array() else {
                return Ok(x.iter().zip(y).position(|(p, q)| p != q).map(|p| start.saturating_add(p)));
            };
            if canonical.is_none() {
                let size = chunk.min(len);
                *canonical = Some((RelayoutPlan::new(shard, shard)?, vec![0u8; size], vec![0u8; size]));
            }
            if let Some((plan, lhs, rhs)) = canonical.as_mut() {
                let n = end.saturating_sub(start);
                let (Some(lhs), Some(rhs)) = (lhs.get_mut(..n), rhs.get_mut(..n)) else { break };
                plan.run_range(reference, lhs, start..end)?;
                plan.run_range(other, rhs, start..end)?;
                if let Some(p) = lhs.iter().zip(rhs.iter()).position(|(p, q)| p != q) {
                    return Ok(Some(start.saturating_add(p)));
                }
            }
        }
        start = end;
    }
    Ok(None)
}

/// A checked set of shard buffers ([`ShardBuffers::sources`]), assembled a range at a time.
///
/// ```
/// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, HloSharding};
/// use xla_shape::ShapeBuf;
/// let global: ShapeBuf = "u8[2,2]{1,0}".parse()?;
/// let array = global.as_array().expect("array");
/// let sharding: HloSharding = "{devices=[2,1]<=[2]}".parse()?;
/// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
/// let shards = plan.split(&[1, 2, 3, 4])?;
/// let sources = plan.sources(shards.iter().map(|(d, b)| (*d, b.as_slice())))?;
/// let mut tail = [0u8; 2];
/// sources.assemble_range(&mut tail, 2..4)?;
/// assert_eq!(tail, [3, 4]);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ShardSources<'p, 'b> {
    plan: &'p ShardBuffers,
    shards: BTreeMap<DeviceId, &'b [u8]>,
}

impl ShardSources<'_, '_> {
    /// Bytes `range` of the global buffer [`ShardBuffers::assemble`] builds, into `out`
    /// (`range.len()` bytes): its padding, then every distinct box's elements that fall in the
    /// range, from the box's lowest device. Parts that tile `0..global_len()` give `assemble`'s
    /// bytes. No allocation.
    ///
    /// # Errors
    ///
    /// [`Error::Relayout`] with [`RelayoutProblem::Range`] when `range` is not inside the
    /// global buffer and [`RelayoutProblem::BufferLength`] when `out` is not `range.len()`
    /// bytes; nothing is written then.
    pub fn assemble_range(&self, out: &mut [u8], range: Range<usize>) -> Result<()> {
        check_range(self.plan.global_fill.dst_len(), out.len(), &range)?;
        self.plan.global_fill.fill_part(out, range.start);
        for b in &self.plan.boxes {
            let Some(bytes) = b.devices.first().and_then(|d| self.shards.get(d)) else { continue };
            b.assemble.run_range(bytes, out, range.clone())?;
        }
        Ok(())
    }
}
