//! Checked tile assignments from raw parts, shared by the proto reader, the text parser and the
//! named shardings' meshes: positive dimensions, equal products within `i64`, permutations,
//! non-negative unique devices (`docs/sharding.md` §2.1, §2.3). A leaf of the sharding modules:
//! it knows nothing of `HloSharding`.

use crate::error::{Error, FieldPath, Result, ShardingProblem};

use super::arith::checked_product;
use super::device::DeviceId;
use super::iota::Iota;
use super::tile_assignment::TileAssignment;

fn err(path: FieldPath, problem: ShardingProblem) -> Error {
    Error::sharding(path, problem)
}

/// A validated device id as XLA stores it.
pub(crate) fn device_i64(device: DeviceId) -> i64 {
    i64::try_from(device.0).unwrap_or(i64::MAX)
}

/// The field paths tile-assignment errors point at (proto fields, or one text position).
pub(crate) struct TilePaths {
    pub dims: FieldPath,
    pub devices: FieldPath,
    pub reshape_dims: FieldPath,
    pub perm: FieldPath,
}

impl TilePaths {
    /// Text has no fields: errors point at the root (the parser adds the position).
    pub(crate) fn text() -> Self {
        let root = FieldPath::root();
        Self { dims: root.clone(), devices: root.clone(), reshape_dims: root.clone(), perm: root }
    }

    pub(crate) fn proto(path: &FieldPath) -> Self {
        Self {
            dims: path.clone().field("tile_assignment_dimensions"),
            devices: path.clone().field("tile_assignment_devices"),
            reshape_dims: path.clone().field("iota_reshape_dims"),
            perm: path.clone().field("iota_transpose_perm"),
        }
    }
}

pub(crate) fn device_id(device: i64, path: &FieldPath) -> Result<DeviceId> {
    u64::try_from(device).map(DeviceId).map_err(|_| err(path.clone(), ShardingProblem::NegativeDevice { device }))
}

/// A checked iota tile assignment: positive dimensions, equal products within `i64`, a
/// permutation; canonicalized as XLA's `TileAssignment(dims, reshape_dims, perm)`.
pub(crate) fn build_iota(
    dims: &[i64],
    reshape_dims: &[i64],
    perm: &[i64],
    paths: &TilePaths,
) -> Result<TileAssignment> {
    let tiles = checked_product(dims, &paths.dims)?;
    let devices = checked_product(reshape_dims, &paths.reshape_dims)?;
    if tiles != devices {
        return Err(err(paths.dims.clone(), ShardingProblem::DeviceCountMismatch { tiles, devices }));
    }
    let mut seen = vec![false; perm.len()];
    let mut checked = Vec::with_capacity(perm.len());
    for (index, &value) in perm.iter().enumerate() {
        let slot = usize::try_from(value).ok().filter(|&p| p < perm.len());
        match slot.and_then(|p| seen.get_mut(p).map(|s| (p, s))) {
            Some((p, s)) if !*s => {
                *s = true;
                checked.push(p);
            }
            _ => return Err(err(paths.perm.clone().index(index), ShardingProblem::NotAPermutation { index, value })),
        }
    }
    Ok(TileAssignment::Iota(Iota::canonical(dims.to_vec(), reshape_dims.to_vec(), checked)))
}

/// A checked explicit tile assignment: positive dimensions whose product is the device count,
/// devices non-negative and unique.
pub(crate) fn build_explicit(dims: &[i64], devices: &[i64], paths: &TilePaths) -> Result<TileAssignment> {
    let tiles = checked_product(dims, &paths.dims)?;
    let count = devices.len() as u64;
    if tiles != count {
        return Err(err(paths.dims.clone(), ShardingProblem::DeviceCountMismatch { tiles, devices: count }));
    }
    let mut ids = Vec::with_capacity(devices.len());
    for (i, &d) in devices.iter().enumerate() {
        ids.push(device_id(d, &paths.devices.clone().index(i))?);
    }
    let mut sorted: Vec<(DeviceId, usize)> = ids.iter().copied().zip(0..).collect();
    sorted.sort_unstable();
    for pair in sorted.windows(2) {
        if let [(a, _), (b, at)] = pair {
            if a == b {
                return Err(err(
                    paths.devices.clone().index(*at),
                    ShardingProblem::DuplicateDevice { device: device_i64(*a) },
                ));
            }
        }
    }
    Ok(TileAssignment::Explicit { dims: dims.to_vec(), devices: ids })
}
