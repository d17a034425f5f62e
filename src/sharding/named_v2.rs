//! A named sharding as the tile-assignment ("V2") sharding XLA's `HloSharding::V3ToV2Sharding`
//! makes of it (`docs/sharding.md` §9.4): the dimensions' axes become data dimensions, manual and
//! unreduced axes subgroup dimensions of those types, every other axis (or the rest of a split
//! axis) one replicated subgroup; the mesh's devices are reshaped to the axes' pieces, transposed
//! to that order and reshaped to the tile dimensions; `Subgroup` canonicalizes the result.

use crate::error::Result;
use crate::proto::OpMetadata;

use super::canonical;
use super::iota::Iota;
use super::model::{HloSharding, ShardingKind, SubgroupType};
use super::named::{AxisRef, Mesh, NamedSharding, SubAxis};
use super::tile_assignment::TileAssignment;

impl HloSharding {
    /// XLA's `v3_to_v2_sharding`: a named sharding as the equivalent tile-assignment sharding
    /// (a tuple element by element); any other sharding as it is.
    ///
    /// # Errors
    ///
    /// None for a validated sharding; the `Result` covers arithmetic the validation bounds.
    ///
    /// ```
    /// use xla_shape::sharding::HloSharding;
    /// let named: HloSharding = r#"{mesh["x"=2,"y"=4], [{"y"}, {"x"}]}"#.parse()?;
    /// assert_eq!(named.to_v2()?.to_string(), "{devices=[4,2]<=[2,4]T(1,0)}");
    /// let maximal: HloSharding = "{maximal_mesh[device_id=5]}".parse()?;
    /// assert_eq!(maximal.to_v2()?.to_string(), "{maximal device=5}");
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn to_v2(&self) -> Result<HloSharding> {
        match &self.kind {
            ShardingKind::Named(named) => Ok(v3_to_v2(named, self.metadata.clone())),
            ShardingKind::Tuple(elements) => {
                Ok(HloSharding::tuple(elements.iter().map(Self::to_v2).collect::<Result<Vec<_>>>()?))
            }
            _ => Ok(self.clone()),
        }
    }
}

/// The conversion, for a validated named sharding.
pub(crate) fn v3_to_v2(named: &NamedSharding, metadata: Vec<OpMetadata>) -> HloSharding {
    let devices = match &named.mesh {
        Mesh::Maximal(device) => return HloSharding::of(ShardingKind::Maximal(*device), metadata),
        Mesh::Empty => return HloSharding::of(ShardingKind::Replicated, metadata),
        Mesh::Axes { devices, .. } => devices,
    };
    if named.dims.iter().all(|d| d.axes.is_empty()) && named.unreduced.is_empty() && named.manual.is_empty() {
        return HloSharding::of(ShardingKind::Replicated, metadata);
    }
    let mesh = &named.mesh;
    // Where each used axis goes in the transposed order: dimensions' axes first, then manual,
    // then unreduced axes. An axis of size 1 has no piece (`ordered_pieces`) and so no place:
    // XLA counts it and writes past its permutation (undefined behaviour that happens to give
    // the answer skipping it gives).
    let mut tile_dims: Vec<i64> = Vec::with_capacity(named.dims.len().saturating_add(3));
    let mut placed: Vec<(AxisRef, usize)> = Vec::new();
    for dim in &named.dims {
        tile_dims.push(size_of(&dim.axes, mesh));
        place(&dim.axes, mesh, &mut placed);
    }
    let mut types = Vec::with_capacity(3);
    for (axes, ty) in [(&named.manual, SubgroupType::Manual), (&named.unreduced, SubgroupType::Unreduced)] {
        if axes.is_empty() {
            continue;
        }
        types.push(ty);
        tile_dims.push(size_of(axes, mesh));
        place(axes, mesh, &mut placed);
    }
    let pieces = ordered_pieces(named);
    let mut reshape_dims = Vec::with_capacity(pieces.len());
    let mut perm = vec![0usize; pieces.len()];
    let mut next_replicated = placed.len();
    let mut replicated_size = 1i64;
    for (i, piece) in pieces.iter().enumerate() {
        let size = piece.size(mesh);
        reshape_dims.push(size);
        let slot = if let Some(&(_, position)) = placed.iter().find(|(axis, _)| same_piece(*axis, *piece, mesh)) {
            position
        } else {
            replicated_size = replicated_size.saturating_mul(size);
            next_replicated = next_replicated.saturating_add(1);
            next_replicated.saturating_sub(1)
        };
        if let Some(p) = perm.get_mut(slot) {
            *p = i;
        }
    }
    if replicated_size > 1 {
        tile_dims.push(replicated_size);
        types.push(SubgroupType::Replicated);
    }
    if types.is_empty() && tile_dims.iter().all(|&d| d == 1) {
        return HloSharding::of(ShardingKind::Replicated, metadata);
    }
    if reshape_dims.is_empty() {
        // Every axis has size 1: XLA's iota canonicalizes to `<=[1]`.
        reshape_dims.push(1);
        perm.push(0);
    }
    let tiles = if Mesh::simple_iota(devices) {
        TileAssignment::Iota(Iota::canonical(tile_dims, reshape_dims, perm))
    } else {
        devices.reshape(reshape_dims).transpose(&perm).reshape(tile_dims)
    };
    if types.is_empty() { canonical::tile(tiles, metadata) } else { canonical::subgroup(tiles, &types, metadata) }
}

/// The product of the axes' sizes (bounded by the mesh's device count, which validation
/// bounds).
fn size_of(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axes.iter().fold(1i64, |acc, a| acc.saturating_mul(a.size(mesh)))
}

fn place(axes: &[AxisRef], mesh: &Mesh, placed: &mut Vec<(AxisRef, usize)>) {
    for &axis in axes {
        if axis.size(mesh) > 1 {
            placed.push((axis, placed.len()));
        }
    }
}

/// Two references to the same part of an axis (a whole axis equals its only piece).
fn same_piece(a: AxisRef, b: AxisRef, mesh: &Mesh) -> bool {
    a.index == b.index && a.size(mesh) == b.size(mesh) && pre_size(a) == pre_size(b)
}

fn pre_size(axis: AxisRef) -> i64 {
    axis.sub.map_or(1, |s| s.pre_size)
}

/// XLA's `GetOrderedAxisRefs`: every mesh axis in order, cut at every sub-axis boundary the
/// sharding uses.
fn ordered_pieces(named: &NamedSharding) -> Vec<AxisRef> {
    let mesh = &named.mesh;
    let used = named
        .dims
        .iter()
        .flat_map(|d| d.axes.iter())
        .chain(&named.replicated)
        .chain(&named.unreduced)
        .chain(&named.manual);
    let mut cuts: Vec<Vec<i64>> = mesh.axis_sizes().iter().map(|&size| vec![1, size]).collect();
    for axis in used {
        if let (Some(sub), Some(list)) = (axis.sub, cuts.get_mut(axis.index)) {
            list.push(sub.pre_size);
            list.push(sub.pre_size.saturating_mul(sub.size));
        }
    }
    let mut pieces = Vec::new();
    for (index, mut list) in cuts.into_iter().enumerate() {
        list.sort_unstable();
        list.dedup();
        if list.len() == 2 {
            pieces.push(AxisRef { index, sub: None });
            continue;
        }
        for pair in list.windows(2) {
            if let [pre_size, next] = *pair {
                pieces.push(AxisRef {
                    index,
                    sub: Some(SubAxis { pre_size, size: next.checked_div(pre_size).unwrap_or(1) }),
                });
            }
        }
    }
    pieces
}
