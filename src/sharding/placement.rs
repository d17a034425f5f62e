//! Where each device's data is (`docs/sharding.md` §5): for an array shape and a sharding, the
//! tile shape (`HloSharding::TileShape`), each device's tile index and `[start, limit)` per
//! dimension (`TileOffsetForDevice` / `TileLimitForDevice`), the devices that replicate a tile,
//! and the inverse (which devices hold an element).
//!
//! A [`Placement`] is computed once (one pass over an explicit device list, `O(rank)` for an
//! iota); a [`Shard`] is a device and a position, and every range is computed on request, so
//! iterating 4096 devices allocates nothing.

use std::ops::Range;

use crate::error::{Error, FieldPath, Result, ShardingProblem};
use crate::{ArrayShape, Dim};

use super::arith::{product, strides};
use super::device::DeviceId;
use super::model::{HloSharding, ShardingKind};
use super::tile_assignment::TileAssignment;

fn err(problem: ShardingProblem) -> Error {
    Error::sharding(FieldPath::root(), problem)
}

/// What the devices hold.
#[derive(Debug, Clone)]
enum Form {
    /// Every device holds the whole array.
    Replicated,
    /// One device holds the whole array.
    Maximal(DeviceId),
    /// Tiles: the tile-assignment array, its row-major strides and the replicas per tile.
    Tiled { tile_assignment: TileAssignment, strides: Vec<u64>, replication: u64 },
}

/// The devices of a placement, in increasing id order.
#[derive(Debug, Clone)]
enum Devices {
    /// Devices `0..n`.
    Range(u64),
    /// One device only.
    Single(DeviceId),
    /// An explicit tile assignment's devices with their positions, sorted by id.
    Listed(Vec<(DeviceId, u64)>),
}

/// Where every device's data is, for one array shape and one sharding.
///
/// ```
/// use xla_shape::{sharding::{DeviceId, HloSharding}, text, Dim};
/// let shape = text::parse_shape("f32[10,4]")?;
/// let sharding: HloSharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}".parse()?;
/// let placement = sharding.placement(&shape.as_array().expect("array"), None)?;
/// assert_eq!(placement.tile_shape(), [3, 4]);
/// let shard = placement.shard(DeviceId(7))?;
/// assert_eq!((shard.start(Dim(0)), shard.limit(Dim(0))), (9, 10)); // the short last tile
/// let group: Vec<u64> = shard.replica_group().map(|d| d.0).collect();
/// assert_eq!(group, [6, 7]);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Placement {
    dims: Vec<i64>,
    /// `dims` as the bounds of an index check.
    bounds: Vec<u64>,
    tile_shape: Vec<i64>,
    tiles: Vec<i64>,
    form: Form,
    devices: Devices,
}

impl HloSharding {
    /// Where each device's data is for an array of `shape` (dynamic dimensions at their bound).
    ///
    /// `num_devices` is the device count of the program: required for `{replicated}` (which
    /// devices exist is not in the sharding); for a tiled sharding it is checked as XLA's
    /// `Validate(shape, num_devices)` does, and without it the devices are the tile
    /// assignment's; for `{maximal device=D}` without it the only device is `D`.
    ///
    /// # Errors
    ///
    /// [`Error::Sharding`]: a tuple, manual, unknown or unreduced sharding; a rank that differs
    /// from the tile assignment's data rank; a single-device tiling; device ids outside
    /// `0..num_devices` or a device count other than `num_devices`; `num_devices` of 0, or
    /// missing for `{replicated}`.
    pub fn placement(&self, shape: &ArrayShape<'_>, num_devices: Option<u64>) -> Result<Placement> {
        Placement::new(self, shape.dimensions(), num_devices)
    }
}

impl Placement {
    /// The placement of an array with dimensions `dims` (see [`HloSharding::placement`]).
    ///
    /// # Errors
    ///
    /// As [`HloSharding::placement`]; a negative dimension is [`Error::InvalidDimension`].
    pub fn new(sharding: &HloSharding, dims: &[i64], num_devices: Option<u64>) -> Result<Self> {
        if let Some((index, &size)) = dims.iter().enumerate().find(|(_, d)| **d < 0) {
            return Err(Error::InvalidDimension {
                path: FieldPath::root().field("dimensions").index(index),
                index,
                size,
            });
        }
        if num_devices == Some(0) {
            return Err(err(ShardingProblem::NoDevices));
        }
        let bounds: Vec<u64> = dims.iter().map(|d| d.unsigned_abs()).collect();
        let whole = |form: Form, devices: Devices| Self {
            bounds: bounds.clone(),
            dims: dims.to_vec(),
            tile_shape: dims.to_vec(),
            tiles: vec![1; dims.len()],
            form,
            devices,
        };
        match &sharding.kind {
            ShardingKind::Replicated => {
                let n = num_devices.ok_or_else(|| err(ShardingProblem::DeviceCountRequired))?;
                Ok(whole(Form::Replicated, Devices::Range(n)))
            }
            ShardingKind::Maximal(device) => {
                let devices = match num_devices {
                    None => Devices::Single(*device),
                    Some(n) if device.0 < n => Devices::Range(n),
                    Some(n) => {
                        return Err(err(ShardingProblem::DeviceOutOfRange {
                            device: super::build::device_i64(*device),
                            num_devices: n,
                        }));
                    }
                };
                Ok(whole(Form::Maximal(*device), devices))
            }
            ShardingKind::Manual => Err(err(ShardingProblem::NoPlacement { kind: "manual" })),
            ShardingKind::Unknown => Err(err(ShardingProblem::NoPlacement { kind: "unknown" })),
            ShardingKind::Unreduced => Err(err(ShardingProblem::NoPlacement { kind: "unreduced" })),
            ShardingKind::Tuple(_) => Err(err(ShardingProblem::NotAnArraySharding)),
            ShardingKind::Named(named) => Self::new(&super::named_v2::v3_to_v2(named, Vec::new()), dims, num_devices),
            ShardingKind::Tiled(tiled) => {
                let tile_assignment = &tiled.tile_assignment;
                let count = tile_assignment.num_elements();
                if count == 1 {
                    return Err(err(ShardingProblem::SingleDeviceTiled));
                }
                if dims.len() != tiled.data_rank() {
                    return Err(err(ShardingProblem::RankMismatch {
                        shape_rank: dims.len(),
                        data_rank: tiled.data_rank(),
                    }));
                }
                let devices = tiled_devices(tile_assignment, num_devices)?;
                let counts = tiled.tiles().to_vec();
                let tile_shape = dims.iter().zip(&counts).map(|(&d, &t)| ceil_div(d, t)).collect();
                let replication = product(tile_assignment.dimensions().get(tiled.data_rank()..).unwrap_or_default());
                Ok(Self {
                    bounds,
                    dims: dims.to_vec(),
                    tile_shape,
                    tiles: counts,
                    form: Form::Tiled {
                        strides: strides(tile_assignment.dimensions()),
                        tile_assignment: tile_assignment.clone(),
                        replication,
                    },
                    devices,
                })
            }
        }
    }

    /// The array's dimensions.
    pub fn dimensions(&self) -> &[i64] {
        &self.dims
    }

    /// XLA's `TileShape`: each sharded dimension divided by its tile count, rounded up.
    pub fn tile_shape(&self) -> &[i64] {
        &self.tile_shape
    }

    /// The number of tiles along each dimension (1 for replicated and maximal).
    pub fn tiles(&self) -> &[i64] {
        &self.tiles
    }

    /// The number of devices.
    pub fn num_devices(&self) -> u64 {
        match &self.devices {
            Devices::Range(n) => *n,
            Devices::Single(_) => 1,
            Devices::Listed(list) => list.len() as u64,
        }
    }

    /// The devices that hold each tile (the product of the subgroup dimensions; every device
    /// for `{replicated}`, one for `{maximal}`).
    pub fn replication(&self) -> u64 {
        match &self.form {
            Form::Replicated => self.num_devices(),
            Form::Maximal(_) => 1,
            Form::Tiled { replication, .. } => *replication,
        }
    }

    /// The shard of `device`.
    ///
    /// # Errors
    ///
    /// [`Error::Sharding`] ([`ShardingProblem::DeviceOutOfRange`]) if the placement has no such
    /// device.
    pub fn shard(&self, device: DeviceId) -> Result<Shard<'_>> {
        let known = match &self.devices {
            Devices::Range(n) => device.0 < *n,
            Devices::Single(d) => *d == device,
            Devices::Listed(list) => list.binary_search_by_key(&device, |&(d, _)| d).is_ok(),
        };
        if !known {
            return Err(err(ShardingProblem::DeviceOutOfRange {
                device: super::build::device_i64(device),
                num_devices: self.num_devices(),
            }));
        }
        Ok(Shard { placement: self, device, position: self.position_of(device) })
    }

    /// Every device's shard, by increasing device id.
    pub fn shards(&self) -> Shards<'_> {
        let count = usize::try_from(self.num_devices()).unwrap_or(usize::MAX);
        Shards { placement: self, next: 0, end: count }
    }

    /// The devices that hold the element at multi-index `index` (each appears once; in
    /// tile-assignment order, not sorted).
    ///
    /// # Errors
    ///
    /// [`Error::IndexRank`] or [`Error::IndexOutOfBounds`] for an index outside the array.
    pub fn devices_holding(&self, index: &[i64]) -> Result<Holders<'_>> {
        crate::memory::extent::check_index(&self.bounds, index)?;
        Ok(match &self.form {
            Form::Replicated => Holders { placement: self, base: 0, next: 0, end: self.num_devices() },
            Form::Maximal(device) => Holders { placement: self, base: device.0, next: 0, end: 1 },
            Form::Tiled { strides, replication, .. } => {
                let base = index
                    .iter()
                    .zip(&self.tile_shape)
                    .zip(strides)
                    .map(|((&i, &t), &s)| i.checked_div(t).unwrap_or(0).unsigned_abs().saturating_mul(s))
                    .fold(0u64, u64::saturating_add);
                Holders { placement: self, base, next: 0, end: *replication }
            }
        })
    }

    /// The tile-assignment position of `device`, if it holds data.
    fn position_of(&self, device: DeviceId) -> Option<u64> {
        match &self.form {
            Form::Replicated => Some(0),
            Form::Maximal(holder) => (*holder == device).then_some(0),
            Form::Tiled { tile_assignment, .. } => match (&self.devices, tile_assignment) {
                (Devices::Listed(list), _) => {
                    list.binary_search_by_key(&device, |&(d, _)| d).ok().and_then(|i| list.get(i)).map(|&(_, p)| p)
                }
                (_, TileAssignment::Iota(iota)) => iota.position_of(device),
                (_, TileAssignment::Explicit { .. }) => None,
            },
        }
    }

    /// The device at the `k`-th place of the id order.
    fn device_by_rank(&self, k: u64) -> DeviceId {
        match &self.devices {
            Devices::Range(_) => DeviceId(k),
            Devices::Single(d) => *d,
            Devices::Listed(list) => usize::try_from(k).ok().and_then(|i| list.get(i)).map_or(DeviceId(0), |&(d, _)| d),
        }
    }
}

/// The devices of a tiled sharding, checked against `num_devices` as XLA's `ValidateNonTuple`.
fn tiled_devices(tile_assignment: &TileAssignment, num_devices: Option<u64>) -> Result<Devices> {
    let count = tile_assignment.num_elements();
    match tile_assignment {
        TileAssignment::Iota(_) => match num_devices {
            Some(n) if n != count => Err(err(ShardingProblem::WrongDeviceCount { expected: n, actual: count })),
            _ => Ok(Devices::Range(count)),
        },
        TileAssignment::Explicit { devices, .. } => {
            if let Some(n) = num_devices {
                if let Some(&d) = devices.iter().find(|d| d.0 >= n) {
                    return Err(err(ShardingProblem::DeviceOutOfRange {
                        device: super::build::device_i64(d),
                        num_devices: n,
                    }));
                }
                if n != count {
                    return Err(err(ShardingProblem::WrongDeviceCount { expected: n, actual: count }));
                }
            }
            let mut list: Vec<(DeviceId, u64)> = devices.iter().copied().zip(0u64..).collect();
            list.sort_unstable();
            Ok(Devices::Listed(list))
        }
    }
}

/// `ceil(dim / tiles)` for validated values (`tiles` positive).
fn ceil_div(dim: i64, tiles: i64) -> i64 {
    if tiles <= 0 {
        return dim;
    }
    dim.checked_div(tiles).unwrap_or(0).saturating_add(i64::from(dim.checked_rem(tiles).unwrap_or(0) != 0))
}

/// One device's part of the array: its tile index and `[start, limit)` in every dimension,
/// computed on request.
#[derive(Debug, Clone, Copy)]
pub struct Shard<'p> {
    placement: &'p Placement,
    device: DeviceId,
    /// The position in the tile-assignment array, `None` for a device that holds nothing.
    position: Option<u64>,
}

impl<'p> Shard<'p> {
    /// The device.
    pub fn device(&self) -> DeviceId {
        self.device
    }

    /// Whether the device holds any data (a maximal sharding's other devices do not).
    pub fn holds_data(&self) -> bool {
        self.position.is_some()
    }

    /// The tile index along dimension `dim` (XLA's `TileIndexForDevice`).
    pub fn tile_index(&self, dim: Dim) -> i64 {
        match (&self.placement.form, self.position) {
            (Form::Tiled { strides, .. }, Some(position)) => {
                let stride = strides.get(dim.0).copied().unwrap_or(1).max(1);
                let tiles = self.placement.tiles.get(dim.0).copied().unwrap_or(1).unsigned_abs().max(1);
                let index = position.checked_div(stride).and_then(|q| q.checked_rem(tiles)).unwrap_or(0);
                i64::try_from(index).unwrap_or(i64::MAX)
            }
            _ => 0,
        }
    }

    /// The first index along `dim` (XLA's `TileOffsetForDevice`, clamped to the dimension).
    pub fn start(&self, dim: Dim) -> i64 {
        if self.position.is_none() {
            return 0;
        }
        let size = self.placement.dims.get(dim.0).copied().unwrap_or(0);
        let tile = self.placement.tile_shape.get(dim.0).copied().unwrap_or(0);
        self.tile_index(dim).saturating_mul(tile).min(size)
    }

    /// One past the last index along `dim` (XLA's `TileLimitForDevice`); equal to
    /// [`Self::start`] for a tile past the end of an uneven dimension.
    pub fn limit(&self, dim: Dim) -> i64 {
        if self.position.is_none() {
            return 0;
        }
        let size = self.placement.dims.get(dim.0).copied().unwrap_or(0);
        let tile = self.placement.tile_shape.get(dim.0).copied().unwrap_or(0);
        self.tile_index(dim).saturating_add(1).saturating_mul(tile).min(size)
    }

    /// `[start, limit)` of every dimension.
    pub fn ranges(&self) -> impl ExactSizeIterator<Item = Range<i64>> + '_ {
        (0..self.placement.dims.len()).map(|d| self.start(Dim(d))..self.limit(Dim(d)))
    }

    /// The tile index of every dimension.
    pub fn tile_indices(&self) -> impl ExactSizeIterator<Item = i64> + '_ {
        (0..self.placement.dims.len()).map(|d| self.tile_index(Dim(d)))
    }

    /// The number of elements the device holds.
    pub fn element_count(&self) -> u64 {
        self.ranges().map(|r| r.end.saturating_sub(r.start).unsigned_abs()).fold(1, u64::saturating_mul)
    }

    /// The devices holding the same data, this one included, in tile-assignment order (empty
    /// for a device that holds nothing).
    pub fn replica_group(&self) -> Holders<'p> {
        let placement = self.placement;
        match (&placement.form, self.position) {
            (_, None) => Holders { placement, base: 0, next: 0, end: 0 },
            (Form::Replicated, _) => Holders { placement, base: 0, next: 0, end: placement.num_devices() },
            (Form::Maximal(device), _) => Holders { placement, base: device.0, next: 0, end: 1 },
            (Form::Tiled { replication, .. }, Some(position)) => {
                let replication = (*replication).max(1);
                let base = position.saturating_sub(position.checked_rem(replication).unwrap_or(0));
                Holders { placement, base, next: 0, end: replication }
            }
        }
    }

    /// The device's place in its replica group (0 for the first replica).
    pub fn replica_index(&self) -> u64 {
        match (&self.placement.form, self.position) {
            (Form::Tiled { replication, .. }, Some(position)) => position.checked_rem(*replication).unwrap_or(0),
            (Form::Replicated, _) => self.device.0,
            _ => 0,
        }
    }
}

/// The shards of a placement by increasing device id ([`Placement::shards`]).
#[derive(Debug, Clone)]
pub struct Shards<'p> {
    placement: &'p Placement,
    next: usize,
    end: usize,
}

impl<'p> Iterator for Shards<'p> {
    type Item = Shard<'p>;

    fn next(&mut self) -> Option<Shard<'p>> {
        if self.next >= self.end {
            return None;
        }
        let device = self.placement.device_by_rank(self.next as u64);
        self.next = self.next.saturating_add(1);
        Some(Shard { placement: self.placement, device, position: self.placement.position_of(device) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.end.saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Shards<'_> {}

/// Devices that hold one tile ([`Shard::replica_group`], [`Placement::devices_holding`]).
#[derive(Debug, Clone)]
pub struct Holders<'p> {
    placement: &'p Placement,
    /// The first tile-assignment position (tiled), the first device (replicated) or the device
    /// (maximal).
    base: u64,
    next: u64,
    end: u64,
}

impl Iterator for Holders<'_> {
    type Item = DeviceId;

    fn next(&mut self) -> Option<DeviceId> {
        if self.next >= self.end {
            return None;
        }
        let k = self.next;
        self.next = self.next.saturating_add(1);
        Some(match &self.placement.form {
            Form::Replicated => self.placement.device_by_rank(k),
            Form::Maximal(device) => *device,
            Form::Tiled { tile_assignment, .. } => {
                tile_assignment.device_at(self.base.saturating_add(k)).unwrap_or(DeviceId(0))
            }
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.end.saturating_sub(self.next)).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Holders<'_> {}
