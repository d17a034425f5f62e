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
//! The runs themselves are computed in `runs.rs` (a leaf, from `size::byte_strides`). Every part
//! is a [`RelayoutPlan::run_range`](crate::relayout::RelayoutPlan::run_range) of the box's window plans, so tiled, sub-byte and
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

use super::buffers::{BoxPlan, ShardBuffers, len_u64, problem};
use super::device::DeviceId;
pub use super::runs::{ByteRun, ByteRuns};

/// `range` must lie in `0..len` and `out` be as long as it.
pub(super) fn check_range(len: usize, out: usize, range: &Range<usize>) -> Result<()> {
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
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, HloSharding};
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
    /// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, HloSharding};
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
        ByteRuns::new(self.dense.as_ref()?, &b.start, &b.extent)
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
