//! `OpSharding` ⇄ [`HloSharding`]: XLA's `HloSharding::FromProto` with every check XLA makes and
//! every case XLA aborts on or leaves undefined refused (`docs/sharding.md` §2.1), and
//! `HloSharding::ToProto` byte for byte (`docs/sharding.md` §4).

use crate::depth::Depth;
use crate::error::{Error, FieldPath, Result, ShardingProblem};
use crate::proto::OpSharding;

use super::build::{TilePaths, build_explicit, build_iota, device_i64, device_id};
use super::canonical;
use super::model::{HloSharding, ShardGroup, ShardGroupKind, ShardingKind, SubgroupType};
use super::tile_assignment::TileAssignment;

/// `OpSharding.Type` values.
pub(crate) mod ty {
    pub const REPLICATED: i32 = 0;
    pub const MAXIMAL: i32 = 1;
    pub const TUPLE: i32 = 2;
    pub const OTHER: i32 = 3;
    pub const MANUAL: i32 = 4;
    pub const UNKNOWN: i32 = 5;
    pub const UNREDUCED: i32 = 6;
}

fn err(path: FieldPath, problem: ShardingProblem) -> Error {
    Error::sharding(path, problem)
}

impl HloSharding {
    /// XLA's `HloSharding::FromProto`, strictly: the sharding an `OpSharding` describes, in the
    /// canonical form XLA builds (`docs/sharding.md` §2.1).
    ///
    /// # Errors
    ///
    /// [`Error::Sharding`] with the field's path for everything XLA refuses (a maximal sharding
    /// without exactly one device, metadata on a tuple, products that differ, an iota that also
    /// lists devices) and everything it aborts on or leaves undefined (non-positive dimensions,
    /// a `iota_transpose_perm` that is not a permutation, negative or duplicate devices, unknown
    /// types); [`Error::TooDeep`] for tuples nested beyond [`crate::MAX_DEPTH`]. A set
    /// `named_sharding` is a named sharding (every other field ignored, as XLA ignores them),
    /// refused with [`ShardingProblem::Named`] where XLA refuses or aborts (`docs/sharding.md`
    /// §9.2).
    ///
    /// ```
    /// use xla_shape::{proto::OpSharding, sharding::HloSharding};
    /// let proto: OpSharding = xla_shape::decode(&[0x08, 0x01, 0x22, 0x01, 0x03][..])?;
    /// assert_eq!(HloSharding::from_proto(&proto)?.to_string(), "{maximal device=3}");
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn from_proto(proto: &OpSharding) -> Result<Self> {
        from_proto_at(proto, &FieldPath::root(), Depth::ROOT)
    }

    /// XLA's `HloSharding::ToProto`: the `OpSharding` XLA writes for this sharding (an iota's
    /// perm written even when it is `[0]`; metadata kept).
    ///
    /// ```
    /// use xla_shape::sharding::HloSharding;
    /// let sharding: HloSharding = "{devices=[2,2]0,2,1,3}".parse()?;
    /// let bytes = xla_shape::encode(&sharding.to_proto());
    /// assert_eq!(bytes, [0x08, 0x03, 0x1a, 0x02, 0x02, 0x02, 0x22, 0x04, 0x00, 0x02, 0x01, 0x03]);
    /// # Ok::<(), xla_shape::Error>(())
    /// ```
    pub fn to_proto(&self) -> OpSharding {
        let mut proto = OpSharding::default();
        if let ShardingKind::Named(named) = &self.kind {
            proto.named_sharding = Some(super::named_proto::named_to_proto(named, &self.metadata));
            return proto;
        }
        if let ShardingKind::Tuple(elements) = &self.kind {
            proto.r#type = ty::TUPLE;
            proto.tuple_shardings = elements.iter().map(Self::to_proto).collect();
            return proto;
        }
        proto.metadata.clone_from(&self.metadata);
        proto.r#type = match &self.kind {
            ShardingKind::Replicated | ShardingKind::Tuple(_) | ShardingKind::Named(_) => ty::REPLICATED,
            ShardingKind::Manual => ty::MANUAL,
            ShardingKind::Unknown => ty::UNKNOWN,
            ShardingKind::Unreduced => ty::UNREDUCED,
            ShardingKind::Maximal(device) => {
                proto.tile_assignment_devices = vec![device_i64(*device)];
                ty::MAXIMAL
            }
            ShardingKind::Tiled(tiled) => {
                match &tiled.tile_assignment {
                    TileAssignment::Iota(iota) => {
                        proto.iota_reshape_dims = iota.reshape_dims().to_vec();
                        proto.iota_transpose_perm =
                            iota.transpose_perm().iter().map(|&p| i32::try_from(p).unwrap_or(i32::MAX)).collect();
                    }
                    TileAssignment::Explicit { devices, .. } => {
                        proto.tile_assignment_devices = devices.iter().map(|&d| device_i64(d)).collect();
                    }
                }
                proto.replicate_on_last_tile_dim = tiled.replicate_on_last_tile_dim;
                proto.last_tile_dims = tiled.subgroup_types.iter().map(|t| t.proto_type()).collect();
                proto.tile_assignment_dimensions = tiled.tile_assignment.dimensions().to_vec();
                ty::OTHER
            }
        };
        if let Some(group) = self.shard_group {
            proto.is_shard_group = true;
            proto.shard_group_id = group.id;
            proto.shard_group_type = match group.kind {
                ShardGroupKind::As => 0,
                ShardGroupKind::Like => 1,
            };
        }
        proto
    }
}

fn from_proto_at(proto: &OpSharding, path: &FieldPath, depth: Depth) -> Result<HloSharding> {
    depth.check(|| path.clone())?;
    if let Some(named) = &proto.named_sharding {
        return super::named_proto::named_from_proto(named, &path.clone().field("named_sharding"));
    }
    let metadata = proto.metadata.clone();
    let sharding = match proto.r#type {
        ty::TUPLE => {
            if !metadata.is_empty() {
                return Err(err(path.clone().field("metadata"), ShardingProblem::TupleMetadata));
            }
            let elements = proto
                .tuple_shardings
                .iter()
                .enumerate()
                .map(|(i, element)| {
                    let at = path.clone().field("tuple_shardings").index(i);
                    if element.r#type == ty::TUPLE {
                        return Err(err(at, ShardingProblem::NestedTuple));
                    }
                    from_proto_at(element, &at, depth.enter())
                })
                .collect::<Result<Vec<_>>>()?;
            HloSharding::tuple(elements)
        }
        ty::REPLICATED => HloSharding::of(ShardingKind::Replicated, metadata),
        ty::MANUAL => HloSharding::of(ShardingKind::Manual, metadata),
        ty::UNREDUCED => HloSharding::of(ShardingKind::Unreduced, metadata),
        ty::UNKNOWN => HloSharding::of(ShardingKind::Unknown, metadata),
        ty::MAXIMAL => {
            let [device] = proto.tile_assignment_devices[..] else {
                return Err(err(
                    path.clone().field("tile_assignment_devices"),
                    ShardingProblem::MaximalDeviceCount { count: proto.tile_assignment_devices.len() },
                ));
            };
            let device = device_id(device, &path.clone().field("tile_assignment_devices").index(0))?;
            HloSharding::of(ShardingKind::Maximal(device), metadata)
        }
        ty::OTHER => tiled_from_proto(proto, path, metadata)?,
        value => return Err(err(path.clone().field("type"), ShardingProblem::UnknownType { value })),
    };
    Ok(sharding.with_shard_group(proto.is_shard_group.then_some(ShardGroup {
        id: proto.shard_group_id,
        kind: if proto.shard_group_type == 0 { ShardGroupKind::As } else { ShardGroupKind::Like },
    })))
}

fn tiled_from_proto(
    proto: &OpSharding,
    path: &FieldPath,
    metadata: Vec<crate::proto::OpMetadata>,
) -> Result<HloSharding> {
    let iota = !proto.iota_reshape_dims.is_empty();
    let devices = &proto.tile_assignment_devices;
    if iota != devices.is_empty() {
        return Err(err(
            path.clone().field("tile_assignment_devices"),
            ShardingProblem::TileAssignmentForm { devices: devices.len(), reshape_dims: proto.iota_reshape_dims.len() },
        ));
    }
    if iota && proto.iota_transpose_perm.len() != proto.iota_reshape_dims.len() {
        return Err(err(
            path.clone().field("iota_transpose_perm"),
            ShardingProblem::PermLength {
                reshape_dims: proto.iota_reshape_dims.len(),
                perm: proto.iota_transpose_perm.len(),
            },
        ));
    }
    // One device: XLA's `FromProto` returns `{replicated}` before looking at anything else.
    if (iota && proto.iota_reshape_dims.iter().all(|&d| d == 1)) || (!iota && devices.len() == 1) {
        return Ok(HloSharding::of(ShardingKind::Replicated, metadata));
    }
    if proto.tile_assignment_dimensions.is_empty() {
        return Err(err(path.clone().field("tile_assignment_dimensions"), ShardingProblem::NoTileDimensions));
    }
    let perm: Vec<i64> = proto.iota_transpose_perm.iter().map(|&p| i64::from(p)).collect();
    let tiles = if iota {
        build_iota(&proto.tile_assignment_dimensions, &proto.iota_reshape_dims, &perm, &TilePaths::proto(path))?
    } else {
        build_explicit(&proto.tile_assignment_dimensions, devices, &TilePaths::proto(path))?
    };
    let types = proto
        .last_tile_dims
        .iter()
        .enumerate()
        .map(|(i, &value)| {
            SubgroupType::from_proto_type(value).ok_or_else(|| {
                err(path.clone().field("last_tile_dims").index(i), ShardingProblem::InvalidSubgroupType { value })
            })
        })
        .collect::<Result<Vec<_>>>()?;
    subgroups(tiles, &types, proto.replicate_on_last_tile_dim, metadata, &path.clone().field("last_tile_dims"))
}

/// Applies the subgroup fields the way XLA's `FromProto` and parser do.
pub(crate) fn subgroups(
    tiles: TileAssignment,
    types: &[SubgroupType],
    replicate_on_last_tile_dim: bool,
    metadata: Vec<crate::proto::OpMetadata>,
    path: &FieldPath,
) -> Result<HloSharding> {
    if !types.is_empty() && replicate_on_last_tile_dim {
        return Err(err(path.clone(), ShardingProblem::SubgroupsWithReplicateOnLastTileDim));
    }
    let rank = tiles.dimensions().len();
    let subgroup_rank = if replicate_on_last_tile_dim { 1 } else { types.len() };
    if subgroup_rank > rank {
        return Err(err(
            path.clone(),
            ShardingProblem::TooManySubgroups { subgroups: subgroup_rank, dimensions: rank },
        ));
    }
    Ok(if replicate_on_last_tile_dim {
        canonical::partial_tile(tiles, metadata)
    } else {
        canonical::subgroup(tiles, types, metadata)
    })
}
