//! `NamedShardingProto` ⇄ [`NamedSharding`] (`docs/sharding.md` §9.3): jaxlib 0.10.2's
//! `NamedSharding::FromProto` / `ToProto` and `Mesh::FromProto` / `ToProto`, byte for byte, with
//! every input XLA aborts on refused.

use crate::error::{AxisList, FieldPath, NamedShardingProblem, Result, ShardingProblem};
use crate::proto::axis_ref_proto::SubAxis as SubAxisProto;
use crate::proto::mesh_proto::{IotaTransform, MeshAxis};
use crate::proto::named_sharding_proto::DimensionSharding;
use crate::proto::{AxisRefProto, MeshProto, NamedShardingProto, OpMetadata};

use super::build::device_i64;
use super::device::DeviceId;
use super::model::{HloSharding, ShardingKind};
use super::named::{AxisRef, DimSharding, Mesh, MeshOrder, NamedSharding, axis_ref, mesh_of, named_error};
use super::tile_assignment::TileAssignment;

/// XLA's `HloSharding::FromProto` of an `OpSharding` whose `named_sharding` is set: every other
/// field of the `OpSharding` is ignored, as XLA ignores it.
pub(crate) fn named_from_proto(proto: &NamedShardingProto, path: &FieldPath) -> Result<HloSharding> {
    if !proto.tuple_shardings.is_empty() {
        return Err(named_error(path.clone().field("tuple_shardings"), NamedShardingProblem::ReservedTupleField));
    }
    let mesh_path = path.clone().field("mesh");
    let empty = MeshProto::default();
    let mesh = mesh_from_proto(proto.mesh.as_ref().unwrap_or(&empty), &mesh_path)?;
    let dims = proto
        .dim_shardings
        .iter()
        .enumerate()
        .map(|(i, dim)| {
            let at = path.clone().field("dim_shardings").index(i).field("axes");
            Ok(DimSharding { axes: axes_from_proto(&dim.axes, &at)?, closed: dim.is_closed })
        })
        .collect::<Result<Vec<_>>>()?;
    let list = |name: &str, axes: &[AxisRefProto]| axes_from_proto(axes, &path.clone().field(name));
    let replicated = list("replicated_axes", &proto.replicated_axes)?;
    let unreduced = list("unreduced_axes", &proto.unreduced_axes)?;
    let manual = list("manual_axes", &proto.manual_axes)?;
    let at = |list: AxisList| {
        path.clone().field(match list {
            AxisList::Dimension => "dim_shardings",
            AxisList::Replicated => "replicated_axes",
            AxisList::Unreduced => "unreduced_axes",
            AxisList::Manual => "manual_axes",
        })
    };
    let named = NamedSharding::new(mesh, dims, replicated, unreduced, manual, &at)?;
    Ok(HloSharding::of(ShardingKind::Named(named), proto.metadata.clone()))
}

fn axes_from_proto(axes: &[AxisRefProto], path: &FieldPath) -> Result<Vec<AxisRef>> {
    axes.iter()
        .enumerate()
        .map(|(i, a)| {
            axis_ref(a.mesh_axis_index, a.sub_axis_info.map(|s| (s.pre_size, s.size)), &path.clone().index(i))
        })
        .collect()
}

/// XLA's `Mesh::FromProto`: no axes is the empty mesh (no devices) or a maximal mesh (one);
/// otherwise the axes with an iota order, an iota transform, or a device list.
fn mesh_from_proto(proto: &MeshProto, path: &FieldPath) -> Result<Mesh> {
    let ids = &proto.device_ids;
    if proto.axes.is_empty() {
        return match ids[..] {
            [] => Ok(Mesh::Empty),
            [device] => u64::try_from(device).map(|d| Mesh::Maximal(DeviceId(d))).map_err(|_| {
                crate::error::Error::sharding(
                    path.clone().field("device_ids").index(0),
                    ShardingProblem::NegativeDevice { device },
                )
            }),
            _ => Err(named_error(
                path.clone().field("device_ids"),
                NamedShardingProblem::MaximalMeshDeviceCount { count: ids.len() },
            )),
        };
    }
    let names = proto.axes.iter().map(|a| a.name.clone()).collect();
    let sizes: Vec<i64> = proto.axes.iter().map(|a| a.size).collect();
    let order = match &proto.iota_transform {
        Some(_) if !ids.is_empty() => {
            return Err(named_error(path.clone(), NamedShardingProblem::IotaTransformAndDeviceIds));
        }
        // jaxlib reads an empty transform as none.
        Some(t) if !t.reshape_dims.is_empty() => {
            if t.transpose_perm.len() != t.reshape_dims.len() {
                return Err(crate::error::Error::sharding(
                    path.clone().field("iota_transform").field("transpose_perm"),
                    ShardingProblem::PermLength { reshape_dims: t.reshape_dims.len(), perm: t.transpose_perm.len() },
                ));
            }
            MeshOrder::Transform { reshape_dims: &t.reshape_dims, perm: &t.transpose_perm }
        }
        _ if ids.is_empty() => MeshOrder::Iota,
        _ => MeshOrder::List(ids),
    };
    mesh_of(names, &sizes, &order, path)
}

/// XLA's `NamedSharding::ToProto` (metadata inside it, field 6).
pub(crate) fn named_to_proto(named: &NamedSharding, metadata: &[OpMetadata]) -> NamedShardingProto {
    let axes = |list: &[AxisRef]| list.iter().map(|&a| axis_to_proto(a)).collect::<Vec<_>>();
    NamedShardingProto {
        tuple_shardings: Vec::new(),
        mesh: Some(mesh_to_proto(&named.mesh)),
        dim_shardings: named
            .dims
            .iter()
            .map(|d| DimensionSharding { axes: axes(&d.axes), is_closed: d.closed })
            .collect(),
        replicated_axes: axes(&named.replicated),
        unreduced_axes: axes(&named.unreduced),
        metadata: metadata.to_vec(),
        manual_axes: axes(&named.manual),
    }
}

fn axis_to_proto(axis: AxisRef) -> AxisRefProto {
    AxisRefProto {
        mesh_axis_index: i64::try_from(axis.index).unwrap_or(i64::MAX),
        sub_axis_info: axis.sub.map(|s| SubAxisProto { pre_size: s.pre_size, size: s.size }),
    }
}

/// XLA's `Mesh::ToProto`: nothing for the devices of a simple iota, the transform of any other
/// iota, the list otherwise.
fn mesh_to_proto(mesh: &Mesh) -> MeshProto {
    match mesh {
        Mesh::Empty => MeshProto::default(),
        Mesh::Maximal(device) => MeshProto { device_ids: vec![device_i64(*device)], ..MeshProto::default() },
        Mesh::Axes { names, devices } => {
            let axes = names
                .iter()
                .zip(devices.dimensions())
                .map(|(name, &size)| MeshAxis { name: name.clone(), size })
                .collect();
            let mut proto = MeshProto { axes, ..MeshProto::default() };
            match devices {
                _ if Mesh::simple_iota(devices) => {}
                TileAssignment::Iota(iota) => {
                    proto.iota_transform = Some(IotaTransform {
                        reshape_dims: iota.reshape_dims().to_vec(),
                        transpose_perm: iota
                            .transpose_perm()
                            .iter()
                            .map(|&p| i64::try_from(p).unwrap_or(i64::MAX))
                            .collect(),
                    });
                }
                TileAssignment::Explicit { devices, .. } => {
                    proto.device_ids = devices.iter().map(|&d| device_i64(d)).collect();
                }
            }
            proto
        }
    }
}
