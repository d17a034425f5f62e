//! Shard buffers (`docs/shard-buffers.md`): a global buffer, in any layout the crate validates,
//! split into one buffer per device, and the per-device buffers assembled back.
//!
//! Each device holds a box of the global array, `[start, limit)` per dimension (a sharding's
//! device ranges). Its buffer is that box as an array of its own — the shard shape — in the
//! global shape's layout:
//!
//! * [`ShardForm::Exact`] (the default): the shard shape's dimensions are `limit − start`, as
//!   JAX's `addressable_shards` hold them;
//! * [`ShardForm::PaddedToTile`]: they are the sharding's tile shape, as the SPMD-partitioned
//!   program sees them; the elements past `limit − start` are padding (zero bits, rule 6 of
//!   `docs/relayout.md`).
//!
//! Both directions are [`RelayoutPlan::window`]s of the relayout engine, planned once per
//! distinct box in [`ShardBuffers::new`], so tiled, sub-byte and legacy-padded layouts move
//! with the engine's kernels. Devices with equal boxes are replicas: the split gives each the
//! same bytes, the assembly takes the lowest device's buffer and checks the others equal it.
//!
//! ```text
//!  global buffer ──window(start, extent)──▶ shard buffer of device d   (split, per distinct box)
//!  global buffer ◀──window(start, extent)── shard buffer of device d   (assemble)
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::Result;
use crate::error::{Error, ShardBufferProblem};
use crate::proto::ShapeProto;
use crate::relayout::{RelayoutPlan, StorePolicy, Window};
use crate::shape::{ArrayShape, ShapeBuf};

use super::device::DeviceId;
use super::placement::Placement;

/// One device's box of the global array: `[start[d], limit[d])` in each dimension `d`.
///
/// ```
/// use xla_shape::sharding::{buffers::ShardRange, DeviceId};
/// let range = ShardRange::new(DeviceId(5), vec![2, 0], vec![4, 3]);
/// assert_eq!(range.extent().collect::<Vec<_>>(), [2, 3]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardRange {
    /// The device id.
    pub device: DeviceId,
    /// The first index of the box, per dimension.
    pub start: Vec<u64>,
    /// One past the last index, per dimension (`start ≤ limit`; equal for an empty box).
    pub limit: Vec<u64>,
}

impl ShardRange {
    /// The box `[start, limit)` of `device`.
    pub fn new(device: DeviceId, start: Vec<u64>, limit: Vec<u64>) -> Self {
        Self { device, start, limit }
    }

    /// `limit − start` per dimension (0 where the limit is below the start).
    pub fn extent(&self) -> impl Iterator<Item = u64> + '_ {
        self.start.iter().zip(&self.limit).map(|(&s, &l)| l.saturating_sub(s))
    }
}

/// How a shard's buffer is shaped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ShardForm {
    /// The box's own dimensions (`limit − start`), as JAX's `addressable_shards` hold them.
    #[default]
    Exact,
    /// The given tile shape (a sharding's `TileShape`), the box at its origin and the rest
    /// padding, as the SPMD-partitioned program sees each device's buffer.
    PaddedToTile(Vec<u64>),
}

/// The plans of one distinct box: the shard shape and the two window relayouts.
#[derive(Debug, Clone)]
pub(super) struct BoxPlan {
    pub(super) shape: ShapeBuf,
    /// Global → shard.
    pub(super) split: RelayoutPlan,
    /// Shard → global.
    pub(super) assemble: RelayoutPlan,
    /// The shard shape's dimensions equal the box's: the split writes every byte of the shard.
    pub(super) whole: bool,
    /// The devices holding this box, ascending.
    pub(super) devices: Vec<DeviceId>,
    /// Where the box starts in the global array, per dimension.
    pub(super) start: Vec<u64>,
    /// Its size, per dimension.
    pub(super) extent: Vec<u64>,
}

/// Split and assembly of one global shape over a set of device boxes, planned once.
///
/// ```
/// use xla_shape::sharding::{buffers::{ShardBuffers, ShardForm}, DeviceId, HloSharding};
/// use xla_shape::ShapeBuf;
/// // s8[2,4], column-major, split into two column halves held by devices 0 and 1.
/// let global: ShapeBuf = "s8[2,4]{0,1}".parse()?;
/// let array = global.as_array().expect("array");
/// let sharding: HloSharding = "{devices=[1,2]0,1}".parse()?;
/// let plan = ShardBuffers::from_placement(array, &sharding.placement(&array, None)?, &ShardForm::Exact)?;
/// let bytes = [0u8, 4, 1, 5, 2, 6, 3, 7]; // element (i, j) = 4i + j, column-major
/// let shards = plan.split(&bytes)?;
/// assert_eq!(shards, [(DeviceId(0), vec![0, 4, 1, 5]), (DeviceId(1), vec![2, 6, 3, 7])]);
/// let back = plan.assemble(shards.iter().map(|(d, b)| (*d, b.as_slice())))?;
/// assert_eq!(back, bytes);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ShardBuffers {
    pub(super) global_len: u64,
    /// Fills the global buffer's padding before the shards are assembled into it.
    pub(super) global_fill: RelayoutPlan,
    pub(super) boxes: Vec<BoxPlan>,
    /// Device → index into `boxes`.
    pub(super) devices: BTreeMap<DeviceId, usize>,
    /// The global layout's byte strides when it is dense (`stream.rs`: byte runs).
    pub(super) dense: Option<super::runs::Dense>,
    /// The global shape's element type and dimensions (bounds), which a reshard's two plans
    /// must share (`reshard.rs`).
    pub(super) element_type: crate::PrimitiveType,
    pub(super) bounds: Vec<u64>,
    /// The bits of one element in the global layout.
    pub(super) element_bits: u64,
}

pub(super) fn problem(p: ShardBufferProblem) -> Error {
    Error::ShardBuffer(Box::new(p))
}

pub(super) fn len_u64(len: usize) -> u64 {
    u64::try_from(len).unwrap_or(u64::MAX)
}

/// The shard shape: the global shape with `dims` as its dimensions (bounds, for dynamic ones)
/// and the same layout, less legacy `padded_dimensions` (sized for the global dimensions).
fn shard_shape(global: ArrayShape<'_>, dims: &[u64]) -> Result<ShapeBuf> {
    let mut proto: ShapeProto = global.proto().clone();
    proto.dimensions = dims.iter().map(|&d| crate::memory::extent::to_i64(d)).collect();
    if let Some(layout) = proto.layout.as_mut() {
        layout.padded_dimensions.clear();
    }
    ShapeBuf::try_from_proto(proto)
}

impl ShardForm {
    /// Padded to `placement`'s tile shape (XLA's `TileShape`).
    pub fn padded_to_tile(placement: &Placement) -> Self {
        Self::PaddedToTile(placement.tile_shape().iter().map(|&t| t.unsigned_abs()).collect())
    }
}

impl ShardBuffers {
    /// Plans the split of `global` over every device of `placement` (a sharding's device ranges
    /// for this shape): devices that hold nothing (a maximal sharding's others, tiles past the
    /// end of an uneven dimension) get empty boxes.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_placement(global: ArrayShape<'_>, placement: &Placement, form: &ShardForm) -> Result<Self> {
        let ranges: Vec<ShardRange> = placement
            .shards()
            .map(|shard| {
                let (start, limit) = shard.ranges().map(|r| (r.start.unsigned_abs(), r.end.unsigned_abs())).unzip();
                ShardRange::new(shard.device(), start, limit)
            })
            .collect();
        Self::new(global, &ranges, form)
    }

    /// Plans the split of `global` into the devices' boxes and their assembly. Replicas (devices
    /// with equal boxes) share one plan.
    ///
    /// # Errors
    ///
    /// [`Error::ShardBuffer`] when a range does not have the array's rank
    /// ([`ShardBufferProblem::RangeRank`]), is not inside the array
    /// ([`ShardBufferProblem::RangeOutOfBounds`]), a device is given twice
    /// ([`ShardBufferProblem::DuplicateDevice`]), or a padded form's tile is smaller than a box
    /// ([`ShardBufferProblem::TileTooSmall`]); the errors of [`RelayoutPlan::window`]
    /// (unbounded dimensions, overflow).
    pub fn new<'r>(
        global: ArrayShape<'_>,
        ranges: impl IntoIterator<Item = &'r ShardRange>,
        form: &ShardForm,
    ) -> Result<Self> {
        let global_fill = RelayoutPlan::new(global, global)?;
        let bounds = crate::memory::extent::bounds(global, "sharding")?;
        let rank = bounds.len();
        let mut by_box: BTreeMap<(&[u64], &[u64]), Vec<DeviceId>> = BTreeMap::new();
        let mut seen = BTreeSet::new();
        for range in ranges {
            let device = range.device;
            if !seen.insert(device) {
                return Err(problem(ShardBufferProblem::DuplicateDevice { device: device.0 }));
            }
            for actual in [range.start.len(), range.limit.len()] {
                if actual != rank {
                    return Err(problem(ShardBufferProblem::RangeRank { device: device.0, rank, actual }));
                }
            }
            for (dimension, ((&start, &limit), &size)) in range.start.iter().zip(&range.limit).zip(&bounds).enumerate()
            {
                if start > limit || limit > size {
                    return Err(problem(ShardBufferProblem::RangeOutOfBounds {
                        device: device.0,
                        dimension,
                        start,
                        limit,
                        size,
                    }));
                }
            }
            by_box.entry((&range.start, &range.limit)).or_default().push(device);
        }
        let mut boxes = Vec::with_capacity(by_box.len());
        let mut devices = BTreeMap::new();
        for ((start, limit), mut holders) in by_box {
            holders.sort_unstable();
            let extent: Vec<u64> = start.iter().zip(limit).map(|(&s, &l)| l.saturating_sub(s)).collect();
            let first = holders.first().map_or(0, |d| d.0);
            let dims = match form {
                ShardForm::Exact => extent.clone(),
                ShardForm::PaddedToTile(tile) => {
                    if tile.len() != rank {
                        return Err(problem(ShardBufferProblem::RangeRank { device: first, rank, actual: tile.len() }));
                    }
                    for (dimension, (&t, &e)) in tile.iter().zip(&extent).enumerate() {
                        if t < e {
                            return Err(problem(ShardBufferProblem::TileTooSmall {
                                device: first,
                                dimension,
                                tile: t,
                                extent: e,
                            }));
                        }
                    }
                    tile.clone()
                }
            };
            let shape = shard_shape(global, &dims)?;
            let zeros = vec![0u64; rank];
            let shard = shape.as_array().ok_or(Error::NotAnArray {
                operation: "shard buffers",
                kind: crate::error::ShapeCategory::of(global.element_type()),
            })?;
            let split = RelayoutPlan::window(
                global,
                shard,
                Window { src_start: start, dst_start: &zeros, extent: &extent },
                StorePolicy::Auto,
            )?;
            let assemble = RelayoutPlan::window(
                shard,
                global,
                Window { src_start: &zeros, dst_start: start, extent: &extent },
                StorePolicy::Auto,
            )?;
            let index = boxes.len();
            for &device in &holders {
                devices.insert(device, index);
            }
            boxes.push(BoxPlan {
                whole: dims == extent,
                shape,
                split,
                assemble,
                devices: holders,
                start: start.to_vec(),
                extent,
            });
        }
        let dense = super::runs::Dense::of(global, &bounds)?;
        Ok(Self {
            global_len: len_u64(global_fill.dst_len()),
            global_fill,
            boxes,
            devices,
            dense,
            element_type: global.element_type(),
            bounds,
            element_bits: crate::memory::extent::element_size_in_bits(global),
        })
    }

    /// The global buffer's byte size.
    pub fn global_len(&self) -> u64 {
        self.global_len
    }

    /// The devices, ascending.
    pub fn devices(&self) -> impl ExactSizeIterator<Item = DeviceId> + '_ {
        self.devices.keys().copied()
    }

    /// The shard shape of `device` (the global layout over the box's or the tile's dimensions),
    /// or `None` for a device without a range.
    pub fn shard_shape(&self, device: DeviceId) -> Option<&ShapeBuf> {
        self.devices.get(&device).and_then(|&k| self.boxes.get(k)).map(|b| &b.shape)
    }

    /// The byte size of `device`'s shard buffer, or `None` for a device without a range.
    pub fn shard_len(&self, device: DeviceId) -> Option<u64> {
        self.devices.get(&device).and_then(|&k| self.boxes.get(k)).map(|b| len_u64(b.split.dst_len()))
    }

    /// Splits `global` into one buffer per device, in ascending device order. With the `rayon`
    /// feature the distinct boxes are cut in parallel (and each large one in parallel again).
    ///
    /// # Errors
    ///
    /// [`Error::ShardBuffer`] with [`ShardBufferProblem::GlobalLength`] when `global`'s length is
    /// not the global shape's byte size.
    pub fn split(&self, global: &[u8]) -> Result<Vec<(DeviceId, Vec<u8>)>> {
        self.check_global(global.len())?;
        let cut = |b: &BoxPlan| -> Result<Vec<u8>> {
            let mut out = vec![0u8; b.split.dst_len()];
            Self::cut(b, global, &mut out)?;
            Ok(out)
        };
        #[cfg(feature = "rayon")]
        let pieces: Vec<Vec<u8>> = if crate::relayout::threads::parallel() {
            use rayon::prelude::*;
            self.boxes.par_iter().map(cut).collect::<Result<_>>()?
        } else {
            self.boxes.iter().map(cut).collect::<Result<_>>()?
        };
        #[cfg(not(feature = "rayon"))]
        let pieces: Vec<Vec<u8>> = self.boxes.iter().map(cut).collect::<Result<_>>()?;
        // Each box's buffer goes to its last device (by id) and is copied for the others only.
        let mut pieces: Vec<Option<Vec<u8>>> = pieces.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(self.devices.len());
        for (&device, &k) in &self.devices {
            let last = self.boxes.get(k).and_then(|b| b.devices.last()) == Some(&device);
            let bytes = match pieces.get_mut(k) {
                Some(slot) if last => slot.take(),
                Some(slot) => slot.clone(),
                None => None,
            };
            out.extend(bytes.map(|b| (device, b)));
        }
        Ok(out)
    }

    /// Cuts one box into `out` (its padding, for a padded form, first).
    fn cut(b: &BoxPlan, global: &[u8], out: &mut [u8]) -> Result<()> {
        if !b.whole {
            out.fill(0);
            b.split.fill_padding(out)?;
        }
        b.split.run(global, out)
    }

    /// Splits `global` into caller-provided buffers, one per device of the plan (any order).
    ///
    /// # Errors
    ///
    /// As [`split`](Self::split), and the errors of [`assemble`](Self::assemble) for the
    /// buffers' devices and lengths (missing, unknown, duplicate, wrongly sized); nothing is
    /// written then.
    pub fn split_into(&self, global: &[u8], shards: &mut [(DeviceId, &mut [u8])]) -> Result<()> {
        self.check_global(global.len())?;
        self.check_shards(shards.iter().map(|(d, b)| (*d, b.len())))?;
        #[cfg(feature = "rayon")]
        if crate::relayout::threads::parallel() {
            use rayon::prelude::*;
            return shards.par_iter_mut().try_for_each(|(device, buf)| self.cut_device(*device, global, buf));
        }
        shards.iter_mut().try_for_each(|(device, buf)| self.cut_device(*device, global, buf))
    }

    fn cut_device(&self, device: DeviceId, global: &[u8], buf: &mut [u8]) -> Result<()> {
        match self.devices.get(&device).and_then(|&k| self.boxes.get(k)) {
            Some(b) => Self::cut(b, global, buf),
            None => Err(problem(ShardBufferProblem::UnknownDevice { device: device.0 })),
        }
    }

    pub(super) fn check_global(&self, len: usize) -> Result<()> {
        if len_u64(len) == self.global_len {
            Ok(())
        } else {
            Err(problem(ShardBufferProblem::GlobalLength { expected: self.global_len, actual: len_u64(len) }))
        }
    }

    /// Every device of the plan exactly once, each with its shard's length.
    fn check_shards(&self, shards: impl Iterator<Item = (DeviceId, usize)>) -> Result<()> {
        let mut seen = BTreeSet::new();
        for (device, len) in shards {
            let Some(expected) = self.shard_len(device) else {
                return Err(problem(ShardBufferProblem::UnknownDevice { device: device.0 }));
            };
            if !seen.insert(device) {
                return Err(problem(ShardBufferProblem::DuplicateDevice { device: device.0 }));
            }
            if expected != len_u64(len) {
                return Err(problem(ShardBufferProblem::Length { device: device.0, expected, actual: len_u64(len) }));
            }
        }
        match self.devices.keys().find(|d| !seen.contains(d)) {
            Some(&device) => Err(problem(ShardBufferProblem::Missing { device: device.0 })),
            None => Ok(()),
        }
    }

    /// Assembles the global buffer from one buffer per device. Every buffer is checked (devices,
    /// lengths, replicas byte for byte, padding included) before the global buffer is
    /// allocated.
    ///
    /// # Errors
    ///
    /// [`Error::ShardBuffer`]: [`ShardBufferProblem::Missing`] for a device of the plan without a
    /// buffer, [`ShardBufferProblem::UnknownDevice`] for a buffer of another device,
    /// [`ShardBufferProblem::DuplicateDevice`], [`ShardBufferProblem::Length`] for a buffer that
    /// is not its shard shape's byte size, [`ShardBufferProblem::ReplicaMismatch`] when replicas
    /// differ.
    pub fn assemble<'b>(&self, shards: impl IntoIterator<Item = (DeviceId, &'b [u8])>) -> Result<Vec<u8>> {
        let shards: BTreeMap<DeviceId, &[u8]> = self.collect(shards)?;
        let mut out = vec![0u8; self.global_fill.dst_len()];
        self.assemble_checked(&shards, &mut out)?;
        Ok(out)
    }

    /// [`assemble`](Self::assemble) into a caller-provided global buffer.
    ///
    /// # Errors
    ///
    /// As [`assemble`](Self::assemble), and [`ShardBufferProblem::GlobalLength`] for `global`.
    pub fn assemble_into<'b>(
        &self,
        shards: impl IntoIterator<Item = (DeviceId, &'b [u8])>,
        global: &mut [u8],
    ) -> Result<()> {
        self.check_global(global.len())?;
        let shards = self.collect(shards)?;
        self.assemble_checked(&shards, global)
    }

    pub(super) fn collect<'b>(
        &self,
        shards: impl IntoIterator<Item = (DeviceId, &'b [u8])>,
    ) -> Result<BTreeMap<DeviceId, &'b [u8]>> {
        let mut map = BTreeMap::new();
        for (device, bytes) in shards {
            if !self.devices.contains_key(&device) {
                return Err(problem(ShardBufferProblem::UnknownDevice { device: device.0 }));
            }
            if map.insert(device, bytes).is_some() {
                return Err(problem(ShardBufferProblem::DuplicateDevice { device: device.0 }));
            }
        }
        self.check_shards(map.iter().map(|(&d, b)| (d, b.len())))?;
        self.check_replicas(&map, REPLICA_CHUNK)?;
        Ok(map)
    }

    /// Every box's replicas against its lowest device's buffer, `chunk` bytes at a time.
    fn check_replicas(&self, shards: &BTreeMap<DeviceId, &[u8]>, chunk: usize) -> Result<()> {
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

    /// Runs every box's assembly (buffers already checked).
    fn assemble_checked(&self, shards: &BTreeMap<DeviceId, &[u8]>, global: &mut [u8]) -> Result<()> {
        self.global_fill.fill_padding(global)?;
        for b in &self.boxes {
            let Some(bytes) = b.devices.first().and_then(|d| shards.get(d)) else { continue };
            b.assemble.run(bytes, global)?;
        }
        Ok(())
    }
}

/// Bytes compared at a time when two replicas differ somewhere and their padding bits must be
/// zeroed before they are compared again (two buffers of this size, only then).
const REPLICA_CHUNK: usize = 1 << 20;

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
