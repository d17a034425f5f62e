//! Named ("V3") shardings: XLA's `NamedSharding` over a `Mesh` of named axes
//! (`docs/sharding.md` §9). A value exists only once every check of jaxlib 0.10.2's
//! `Mesh::FromProto`, `Mesh::ValidateMesh`, `AxisRef` and `VerifyNamedSharding` held (each one
//! aborts XLA's process; here it is a [`NamedShardingProblem`]), plus the crate's stricter rules
//! (§9.2), so printing, encoding and the V2 conversion never fail.

use crate::error::{AxisList, Error, FieldPath, NamedShardingProblem, Result, ShardingProblem};

use super::MAX_SHARDING_DEVICES;
use super::device::DeviceId;
use super::iota::Iota;
use super::tile_assignment::TileAssignment;

/// A mesh: named axes and the device at each mesh position, or one device alone.
///
/// ```
/// use xla_shape::sharding::{HloSharding, ShardingKind};
/// let sharding: HloSharding = r#"{mesh["x"=2,"y"=4], device_ids=([4,2]T(1,0)), [{"x"}]}"#.parse()?;
/// let ShardingKind::Named(named) = sharding.kind() else { unreachable!() };
/// assert_eq!(named.mesh().axis_names().collect::<Vec<_>>(), ["x", "y"]);
/// assert_eq!(named.mesh().axis_sizes(), [2, 4]);
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Mesh {
    /// `mesh[]`: no axes and no devices.
    Empty,
    /// `maximal_mesh[device_id=D]`: one device, no axes.
    Maximal(DeviceId),
    /// Named axes; the device array has the axis sizes as dimensions (an iota, or listed).
    Axes {
        /// The axis names, in order.
        names: Vec<String>,
        /// The devices over the axes (`dimensions()` are the axis sizes).
        devices: TileAssignment,
    },
}

impl Mesh {
    /// The axis names (none for an empty or maximal mesh).
    pub fn axis_names(&self) -> impl Iterator<Item = &str> {
        let names: &[String] = match self {
            Self::Axes { names, .. } => names,
            Self::Empty | Self::Maximal(_) => &[],
        };
        names.iter().map(String::as_str)
    }

    /// The axis sizes.
    pub fn axis_sizes(&self) -> &[i64] {
        match self {
            Self::Axes { devices, .. } => devices.dimensions(),
            Self::Empty | Self::Maximal(_) => &[],
        }
    }

    /// The size of axis `index` (1 past the end, which validated values never ask).
    fn axis_size(&self, index: usize) -> i64 {
        self.axis_sizes().get(index).copied().unwrap_or(1)
    }

    /// Whether the devices are `iota(N)` in mesh order (XLA's "simple iota": nothing printed or
    /// written for them).
    pub(crate) fn simple_iota(devices: &TileAssignment) -> bool {
        devices.iota().is_some_and(|iota| iota.reshape_dims().len() == 1)
    }
}

/// A sub-axis: the factor of size `size` after the first `pre_size` of an axis' factorization
/// (`'y':(2)2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubAxis {
    /// The product of the factors before it.
    pub pre_size: i64,
    /// Its size.
    pub size: i64,
}

/// One mesh axis, or a sub-axis of it, by the axis' index in the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AxisRef {
    /// The mesh axis.
    pub index: usize,
    /// The part of it, or `None` for the whole axis.
    pub sub: Option<SubAxis>,
}

impl AxisRef {
    /// The sub-axis's size, or the axis' size.
    pub(crate) fn size(self, mesh: &Mesh) -> i64 {
        self.sub.map_or_else(|| mesh.axis_size(self.index), |s| s.size)
    }

    /// `(pre_size, pre_size · size)` within the axis.
    fn bounds(self, mesh: &Mesh) -> (i64, i64) {
        match self.sub {
            Some(s) => (s.pre_size, s.pre_size.saturating_mul(s.size)),
            None => (1, mesh.axis_size(self.index)),
        }
    }

    /// XLA's `CanMerge`: two sub-axes of one axis, the second right after the first.
    fn can_merge(self, next: Self) -> bool {
        match (self.sub, next.sub) {
            (Some(a), Some(b)) => self.index == next.index && a.pre_size.saturating_mul(a.size) == b.pre_size,
            _ => false,
        }
    }

    /// XLA's `CanCoexistWithoutOverlap` for two references to the same axis.
    fn coexists(self, other: Self, mesh: &Mesh) -> bool {
        if self.index != other.index {
            return true;
        }
        if self.sub.is_none() || other.sub.is_none() {
            return false;
        }
        let (a, a_next) = self.bounds(mesh);
        let (b, b_next) = other.bounds(mesh);
        if a_next > b && b_next > a {
            return false;
        }
        let max_pre = a.max(b);
        let min_next = a_next.min(b_next);
        max_pre.checked_rem(min_next) == Some(0)
    }

    /// XLA's `CompareAxisRefs` key: index, pre-size, size.
    fn order_key(self, mesh: &Mesh) -> (usize, i64, i64) {
        (self.index, self.bounds(mesh).0, self.size(mesh))
    }
}

/// The axes one array dimension is split over, major to minor, and whether it is closed to
/// further sharding (`{'x', 'y'}`, or `{'x', ?}` when open).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DimSharding {
    /// The axes.
    pub axes: Vec<AxisRef>,
    /// `false` for an open dimension (`?`).
    pub closed: bool,
}

/// XLA's `NamedSharding`: a mesh, the axes of each dimension, and the replicated, unreduced and
/// manual axes. Dimension lists are kept as given (jaxlib 0.10.2 prints `[{}, {}]`).
///
/// ```
/// use xla_shape::sharding::HloSharding;
/// let sharding: HloSharding = r#"{mesh["x"=2,"y"=4], [{"x"}, {}]}"#.parse()?;
/// assert_eq!(sharding.to_string(), "{mesh['x'=2,'y'=4], [{'x'}, {}]}");
/// assert_eq!(sharding.to_v2()?.to_string(), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
/// # Ok::<(), xla_shape::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedSharding {
    pub(crate) mesh: Mesh,
    pub(crate) dims: Vec<DimSharding>,
    pub(crate) replicated: Vec<AxisRef>,
    pub(crate) unreduced: Vec<AxisRef>,
    pub(crate) manual: Vec<AxisRef>,
}

impl NamedSharding {
    /// The mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// The dimension shardings, as given.
    pub fn dim_shardings(&self) -> &[DimSharding] {
        &self.dims
    }

    /// `replicated={…}`.
    pub fn replicated_axes(&self) -> &[AxisRef] {
        &self.replicated
    }

    /// `unreduced={…}`.
    pub fn unreduced_axes(&self) -> &[AxisRef] {
        &self.unreduced
    }

    /// `manual={…}`.
    pub fn manual_axes(&self) -> &[AxisRef] {
        &self.manual
    }

    /// Whether `axes` is non-empty and its sizes multiply to the mesh's device count (jaxlib
    /// 0.10.2's test for printing `unreduced` / `manual` alone).
    pub(crate) fn covers_mesh(&self, axes: &[AxisRef]) -> bool {
        let product = |sizes: &mut dyn Iterator<Item = i64>| sizes.fold(1i64, i64::saturating_mul);
        !axes.is_empty()
            && product(&mut axes.iter().map(|a| a.size(&self.mesh)))
                == product(&mut self.mesh.axis_sizes().iter().copied())
    }

    /// Checks the parts in XLA's order (`VerifyNamedSharding`); `at` names where each list sits
    /// (proto fields, or the root for text).
    pub(crate) fn new(
        mesh: Mesh,
        dims: Vec<DimSharding>,
        replicated: Vec<AxisRef>,
        unreduced: Vec<AxisRef>,
        manual: Vec<AxisRef>,
        at: &dyn Fn(AxisList) -> FieldPath,
    ) -> Result<Self> {
        let named = Self { mesh, dims, replicated, unreduced, manual };
        let mut seen: Vec<AxisRef> = Vec::new();
        for dim in &named.dims {
            named.track(&dim.axes, AxisList::Dimension, &mut seen, at)?;
        }
        for (list, axes) in [
            (AxisList::Replicated, &named.replicated),
            (AxisList::Unreduced, &named.unreduced),
            (AxisList::Manual, &named.manual),
        ] {
            if axes.windows(2).any(|w| matches!(w, [a, b] if a.order_key(&named.mesh) > b.order_key(&named.mesh))) {
                return Err(named_error(at(list), NamedShardingProblem::UnsortedAxes { list }));
            }
            named.track(axes, list, &mut seen, at)?;
        }
        // Only empty lists are left on a maximal mesh (any axis failed above, as in XLA).
        if matches!(named.mesh, Mesh::Maximal(_)) && !named.dims.is_empty() {
            return Err(named_error(at(AxisList::Dimension), NamedShardingProblem::MaximalMeshWithDimensions));
        }
        Ok(named)
    }

    /// XLA's `VerifyAndTrack` over one list, then its neighbours' `CanMerge`.
    fn track(
        &self,
        axes: &[AxisRef],
        list: AxisList,
        seen: &mut Vec<AxisRef>,
        at: &dyn Fn(AxisList) -> FieldPath,
    ) -> Result<()> {
        let fail = |problem| Err(named_error(at(list), problem));
        for (i, &axis) in axes.iter().enumerate() {
            let count = self.mesh.axis_sizes().len();
            if axis.index >= count {
                return fail(NamedShardingProblem::AxisIndexOutOfRange {
                    index: i64::try_from(axis.index).unwrap_or(i64::MAX),
                    axes: count,
                });
            }
            if let Some(sub) = axis.sub {
                let axis_size = self.mesh.axis_size(axis.index);
                let next_pre_size = sub.pre_size.saturating_mul(sub.size);
                if axis_size.checked_rem(next_pre_size) != Some(0) {
                    return fail(NamedShardingProblem::SubAxisNotDividing { next_pre_size, axis_size });
                }
                if sub.size >= axis_size {
                    return fail(NamedShardingProblem::SubAxisTooLarge { size: sub.size, axis_size });
                }
            }
            if seen.iter().any(|&other| !axis.coexists(other, &self.mesh)) {
                return fail(NamedShardingProblem::AxesOverlap { axis: i64::try_from(axis.index).unwrap_or(i64::MAX) });
            }
            seen.push(axis);
            if i.checked_sub(1).and_then(|p| axes.get(p)).is_some_and(|&prev| prev.can_merge(axis)) {
                return fail(NamedShardingProblem::MergeableAxes { list });
            }
        }
        Ok(())
    }
}

pub(crate) fn named_error(path: FieldPath, problem: NamedShardingProblem) -> Error {
    Error::sharding(path, ShardingProblem::Named(problem))
}

/// An axis reference from raw parts: XLA's `AxisRef` constructor checks (`pre_size >= 1`,
/// `size > 1`) and a non-negative index.
pub(crate) fn axis_ref(index: i64, sub: Option<(i64, i64)>, path: &FieldPath) -> Result<AxisRef> {
    let index = usize::try_from(index)
        .map_err(|_| named_error(path.clone(), NamedShardingProblem::AxisIndexOutOfRange { index, axes: 0 }))?;
    let sub = match sub {
        None => None,
        Some((pre_size, size)) if pre_size >= 1 && size > 1 => Some(SubAxis { pre_size, size }),
        Some((pre_size, size)) => {
            return Err(named_error(path.clone(), NamedShardingProblem::SubAxisBounds { pre_size, size }));
        }
    };
    Ok(AxisRef { index, sub })
}

/// The device order of a mesh with axes.
pub(crate) enum MeshOrder<'a> {
    /// `iota(N)` in mesh order.
    Iota,
    /// `iota(N)` reshaped and transposed.
    Transform { reshape_dims: &'a [i64], perm: &'a [i64] },
    /// Listed.
    List(&'a [i64]),
}

/// A mesh with axes from raw parts, checked in the order of XLA's `Mesh::FromProto` and
/// `ValidateMesh`.
pub(crate) fn mesh_of(names: Vec<String>, sizes: &[i64], order: &MeshOrder<'_>, path: &FieldPath) -> Result<Mesh> {
    for (axis, &size) in sizes.iter().enumerate() {
        if size <= 0 {
            return Err(named_error(path.clone(), NamedShardingProblem::NonPositiveAxisSize { axis, size }));
        }
    }
    let count = sizes.iter().fold(1u64, |acc, &s| acc.saturating_mul(s.unsigned_abs()));
    if count > MAX_SHARDING_DEVICES {
        return Err(Error::sharding(
            path.clone(),
            ShardingProblem::TooManyDevices { count, max: MAX_SHARDING_DEVICES },
        ));
    }
    let devices = match *order {
        MeshOrder::Iota => TileAssignment::Iota(Iota::canonical(sizes.to_vec(), vec![count_i64(count)], vec![0])),
        MeshOrder::Transform { reshape_dims, perm } => {
            let transform = path.clone().field("iota_transform");
            let paths = super::build::TilePaths {
                dims: path.clone().field("axes"),
                devices: path.clone().field("device_ids"),
                reshape_dims: transform.clone().field("reshape_dims"),
                perm: transform.field("transpose_perm"),
            };
            super::build::build_iota(sizes, reshape_dims, perm, &paths)?
        }
        MeshOrder::List(ids) => {
            if ids.len() as u64 != count {
                return Err(named_error(
                    path.clone(),
                    NamedShardingProblem::DeviceIdCount { ids: ids.len(), mesh: count },
                ));
            }
            TileAssignment::Explicit { dims: sizes.to_vec(), devices: Vec::new() }
        }
    };
    for (i, name) in names.iter().enumerate() {
        if names.get(..i).is_some_and(|before| before.contains(name)) {
            return Err(named_error(path.clone(), NamedShardingProblem::DuplicateAxisName { name: name.clone() }));
        }
    }
    let devices = match (order, devices) {
        (MeshOrder::List(ids), TileAssignment::Explicit { dims, .. }) => {
            TileAssignment::Explicit { dims, devices: permutation_of_iota(ids, path)? }
        }
        (_, devices) => devices,
    };
    Ok(Mesh::Axes { names, devices })
}

fn count_i64(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// XLA's `ValidateMesh` on a listed device order: non-negative, not `0, 1, 2, …`, a permutation.
fn permutation_of_iota(ids: &[i64], path: &FieldPath) -> Result<Vec<DeviceId>> {
    let mut devices = Vec::with_capacity(ids.len());
    for &id in ids {
        let device = u64::try_from(id)
            .map_err(|_| named_error(path.clone(), NamedShardingProblem::NegativeDeviceId { device: id }))?;
        devices.push(DeviceId(device));
    }
    if devices.iter().zip(0u64..).all(|(d, i)| d.0 == i) {
        return Err(named_error(path.clone(), NamedShardingProblem::IotaDeviceList));
    }
    let mut seen = vec![false; devices.len()];
    for d in &devices {
        match usize::try_from(d.0).ok().and_then(|i| seen.get_mut(i)) {
            Some(slot) if !*slot => *slot = true,
            _ => return Err(named_error(path.clone(), NamedShardingProblem::NotAPermutationOfIota)),
        }
    }
    Ok(devices)
}
