//! `HloSharding`: XLA's sharding (the crate's `xla_shape::sharding::HloSharding`) and where each
//! device's data is (`Placement`), with the slices JAX's `devices_indices_map` gives.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PySlice, PyTuple};
use xla_shape::draw::label::join;
use xla_shape::proto::OpSharding;
use xla_shape::sharding::{self, DeviceId, Placement, ShardingKind, shardy};

use crate::errors::{IntoPyResult, binding_error};
use crate::shape::{Shape, ShapeLike};

/// An XLA ``HloSharding``: which devices hold which slice of an array.
///
/// ``str()`` is XLA's text and ``to_proto()`` XLA's ``OpSharding`` bytes.
///
/// >>> import xla_shape as xs
/// >>> s = xs.HloSharding.parse("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
/// >>> s.devices_indices_map((4, 6))[5]
/// (slice(2, 4, None), slice(None, None, None))
#[pyclass(module = "xla_shape", frozen, eq, hash, str, from_py_object)]
#[derive(Clone, PartialEq)]
pub struct HloSharding {
    pub(crate) inner: sharding::HloSharding,
}

impl Hash for HloSharding {
    fn hash<H: Hasher>(&self, state: &mut H) {
        xla_shape::encode(&self.inner.to_proto()).hash(state);
    }
}

impl std::fmt::Display for HloSharding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

/// An array given by its shape, or (as JAX's ``devices_indices_map`` takes it) its dimensions.
#[derive(FromPyObject)]
pub enum ArrayLike {
    /// Dimensions.
    Dims(Vec<i64>),
    /// A shape (``Shape`` or text).
    Shape(ShapeLike),
}

impl ArrayLike {
    fn dims(self) -> PyResult<Vec<i64>> {
        match self {
            Self::Dims(dims) => Ok(dims),
            Self::Shape(shape) => Ok(shape.into_shape()?.array_view("a sharding's placement")?.dimensions().to_vec()),
        }
    }
}

impl HloSharding {
    /// The placement of an array of `array` over `num_devices`.
    pub(crate) fn placement(&self, array: ArrayLike, num_devices: Option<u64>) -> PyResult<Placement> {
        Placement::new(&self.inner, &array.dims()?, num_devices).py()
    }
}

/// A slice per dimension of a device's box, as JAX writes it: ``slice(start, stop)``, and
/// ``slice(None)`` for a dimension the sharding does not split.
fn slices<'py>(py: Python<'py>, placement: &Placement, shard: &sharding::Shard<'_>) -> PyResult<Bound<'py, PyTuple>> {
    let slice = py.get_type::<PySlice>();
    let slices = shard
        .ranges()
        .zip(placement.tiles())
        .map(
            |(range, &tiles)| {
                if tiles == 1 { slice.call1((py.None(),)) } else { slice.call1((range.start, range.end)) }
            },
        )
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, slices)
}

/// A device id as the proto's `int64`.
fn signed(id: u64) -> PyResult<i64> {
    i64::try_from(id).map_err(|_| binding_error("DeviceAssignment", format!("device id {id} does not fit in int64")))
}

/// `sharding`'s proto with each device position `p` replaced by `ids[p]` (iota tile assignments
/// written out as device lists).
fn with_device_ids(sharding: &sharding::HloSharding, ids: &[u64]) -> PyResult<OpSharding> {
    let id = |DeviceId(position): DeviceId| {
        usize::try_from(position).ok().and_then(|p| ids.get(p)).copied().ok_or_else(|| {
            binding_error(
                "DeviceAssignment",
                format!("device position {position} is outside the sharding's {} devices", ids.len()),
            )
        })
    };
    let mut proto = sharding.to_proto();
    match sharding.kind() {
        ShardingKind::Tuple(elements) => {
            proto.tuple_shardings = elements.iter().map(|e| with_device_ids(e, ids)).collect::<PyResult<_>>()?;
        }
        ShardingKind::Maximal(device) => proto.tile_assignment_devices = vec![signed(id(*device)?)?],
        ShardingKind::Tiled(tiled) => {
            proto.tile_assignment_devices =
                tiled.tile_assignment().devices().map(|d| signed(id(d)?)).collect::<PyResult<_>>()?;
            proto.iota_reshape_dims.clear();
            proto.iota_transpose_perm.clear();
        }
        _ => {}
    }
    Ok(proto)
}

/// The Shardy text of a mesh axis name.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The axes of one `PartitionSpec` entry: `None`, a name, or a sequence of names.
fn spec_axes(entry: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if entry.is_none() {
        Ok(Vec::new())
    } else if let Ok(name) = entry.extract::<String>() {
        Ok(vec![name])
    } else {
        entry.extract::<Vec<String>>().map_err(|_| {
            binding_error(
                "PartitionSpec",
                format!("a partition spec entry must be None, an axis name or a tuple of names, not {entry}"),
            )
        })
    }
}

/// A mesh's axes (name, size) and, when it lists them, its device ids.
type MeshAxes = (Vec<(String, i64)>, Option<Vec<i64>>);

/// A mesh's axes and device ids: a `jax.sharding.Mesh`, a mapping of axis names to sizes, or a
/// sequence of `(name, size)` pairs.
fn mesh_axes(mesh: &Bound<'_, PyAny>) -> PyResult<MeshAxes> {
    if mesh.hasattr("axis_names")? && mesh.hasattr("device_ids")? {
        let names: Vec<String> = mesh.getattr("axis_names")?.extract()?;
        let sizes: Vec<i64> = mesh.getattr("axis_sizes")?.extract()?;
        let ids: Vec<i64> = mesh.getattr("device_ids")?.call_method0("ravel")?.call_method0("tolist")?.extract()?;
        return Ok((names.into_iter().zip(sizes).collect(), Some(ids)));
    }
    if let Ok(mapping) = mesh.cast::<PyDict>() {
        return Ok((mapping.iter().map(|(k, v)| Ok((k.extract()?, v.extract()?))).collect::<PyResult<_>>()?, None));
    }
    Ok((mesh.extract()?, None))
}

#[pymethods]
impl HloSharding {
    /// Parses XLA's sharding text (``{devices=[2,2]<=[4]}``, ``{replicated}``, ``{maximal
    /// device=3}``, tuples) and validates it.
    #[staticmethod]
    pub fn parse(text: &str) -> PyResult<Self> {
        Ok(Self { inner: sharding::parse(text).py()? })
    }

    /// Decodes XLA's serialized ``OpSharding`` strictly and validates it.
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.HloSharding.from_proto(xs.HloSharding.parse("{maximal device=3}").to_proto())
    /// xs.HloSharding('{maximal device=3}')
    #[staticmethod]
    pub fn from_proto(data: &[u8]) -> PyResult<Self> {
        let proto: OpSharding = xla_shape::decode(data).py()?;
        Ok(Self { inner: sharding::HloSharding::from_proto(&proto).py()? })
    }

    /// The sharding XLA makes of a JAX sharding for an array of ``ndim`` dimensions (any
    /// ``jax.sharding.Sharding``: ``NamedSharding``, ``SingleDeviceSharding``, …), with JAX's
    /// device ids: XLA's sharding numbers devices by their position in the sharding's device
    /// assignment, which a mesh may order differently.
    #[staticmethod]
    pub fn from_jax(sharding: &Bound<'_, PyAny>, ndim: usize) -> PyResult<Self> {
        let hlo = sharding.call_method1("_to_xla_hlo_sharding", (ndim,))?;
        let by_position = Self::parse(&hlo.str()?.to_cow()?)?;
        let ids: Vec<u64> = sharding
            .getattr("_device_assignment")?
            .try_iter()?
            .map(|device| device?.getattr("id")?.extract())
            .collect::<PyResult<_>>()?;
        if ids.iter().enumerate().all(|(i, &d)| u64::try_from(i) == Ok(d)) {
            return Ok(by_position);
        }
        let proto = with_device_ids(&by_position.inner, &ids)?;
        Ok(Self { inner: sharding::HloSharding::from_proto(&proto).py()? })
    }

    /// The sharding of a ``NamedSharding``-style description, without JAX: a mesh (a
    /// ``jax.sharding.Mesh``, a mapping of axis names to sizes, or ``(name, size)`` pairs), a
    /// partition spec (one entry per leading dimension: ``None``, an axis name, or a tuple of
    /// names) and the array's rank. The conversion is XLA's Shardy export.
    ///
    /// >>> import xla_shape as xs
    /// >>> str(xs.HloSharding.from_named({"x": 2, "y": 4}, ("x", None), 2))
    /// '{devices=[2,1,4]<=[8] last_tile_dim_replicate}'
    #[staticmethod]
    #[pyo3(signature = (mesh, spec, ndim, device_ids=None))]
    pub fn from_named(
        mesh: &Bound<'_, PyAny>,
        spec: &Bound<'_, PyAny>,
        ndim: usize,
        device_ids: Option<Vec<i64>>,
    ) -> PyResult<Self> {
        let (axes, mesh_ids) = mesh_axes(mesh)?;
        let ids = device_ids.or(mesh_ids).filter(|ids| ids.iter().enumerate().any(|(i, &d)| i64::try_from(i) != Ok(d)));
        let mut entries = spec.try_iter()?.map(|e| spec_axes(&e?)).collect::<PyResult<Vec<_>>>()?;
        if entries.len() > ndim {
            return Err(binding_error(
                "PartitionSpec",
                format!("the partition spec has {} entries, more than the array's {ndim} dimensions", entries.len()),
            ));
        }
        entries.resize(ndim, Vec::new());
        let axes_text = axes.iter().map(|(n, s)| format!("{}={s}", quoted(n))).collect::<Vec<_>>().join(", ");
        let ids_text = ids.map(|ids| format!(", device_ids=[{}]", join(&ids))).unwrap_or_default();
        let meshes = shardy::parse_meshes(&format!("{{mesh = #sdy.mesh<[{axes_text}]{ids_text}>}}")).py()?;
        let dims = entries
            .iter()
            .map(|axes| format!("{{{}}}", axes.iter().map(|a| quoted(a)).collect::<Vec<_>>().join(", ")))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Self { inner: shardy::to_hlo_sharding(&format!("#sdy.sharding<@mesh, [{dims}]>"), &meshes).py()? })
    }

    /// XLA's bytes of the sharding (``OpSharding``).
    pub fn to_proto<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &xla_shape::encode(&self.inner.to_proto()))
    }

    fn __repr__(&self) -> String {
        format!("xs.HloSharding('{}')", self.inner)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let from_proto = py.get_type::<Self>().getattr("from_proto")?;
        Ok((from_proto, (slf.get().to_proto(py),)))
    }

    /// ``"replicated"``, ``"maximal"``, ``"tiled"``, ``"manual"``, ``"unknown"``,
    /// ``"unreduced"`` or ``"tuple"``.
    #[getter]
    pub fn kind(&self) -> &'static str {
        match self.inner.kind() {
            ShardingKind::Replicated => "replicated",
            ShardingKind::Maximal(_) => "maximal",
            ShardingKind::Tiled(_) => "tiled",
            ShardingKind::Manual => "manual",
            ShardingKind::Unknown => "unknown",
            ShardingKind::Unreduced => "unreduced",
            ShardingKind::Tuple(_) => "tuple",
        }
    }

    /// The element shardings of a tuple sharding (``None`` otherwise).
    #[getter]
    pub fn tuple_elements<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.inner
            .tuple_elements()
            .map(|elements| PyTuple::new(py, elements.iter().map(|e| Self { inner: e.clone() })))
            .transpose()
    }

    /// The device of a ``{maximal device=D}`` sharding (``None`` otherwise).
    #[getter]
    pub fn device(&self) -> Option<u64> {
        match self.inner.kind() {
            ShardingKind::Maximal(DeviceId(d)) => Some(*d),
            _ => None,
        }
    }

    /// The device ids of the tile assignment in row-major order (``None`` unless tiled).
    #[getter]
    pub fn tile_assignment_devices<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(tiled) = self.inner.as_tiled() else { return Ok(None) };
        Some(PyTuple::new(py, tiled.tile_assignment().devices().map(|d| d.0))).transpose()
    }

    /// The tile assignment's dimensions (``None`` unless tiled).
    #[getter]
    pub fn tile_assignment_dimensions<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.inner.as_tiled().map(|tiled| PyTuple::new(py, tiled.tile_assignment().dimensions())).transpose()
    }

    /// Whether the last tile dimension replicates (``last_tile_dim_replicate``).
    #[getter]
    pub fn replicate_on_last_tile_dim(&self) -> bool {
        self.inner.as_tiled().is_some_and(sharding::TiledSharding::replicate_on_last_tile_dim)
    }

    /// The devices holding data of an array (its shape, or its dimensions), each with the
    /// slice per dimension it holds — the same slices as JAX's
    /// ``Sharding.devices_indices_map``, keyed by device id. Devices of an uneven sharding that
    /// hold nothing are left out. ``num_devices`` is the program's device count (required for
    /// ``{replicated}``).
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.HloSharding.parse("{devices=[4]<=[4]}").devices_indices_map((5,))
    /// {0: (slice(0, 2, None),), 1: (slice(2, 4, None),), 2: (slice(4, 5, None),)}
    #[pyo3(signature = (shape, num_devices=None))]
    pub fn devices_indices_map<'py>(
        &self,
        py: Python<'py>,
        shape: ArrayLike,
        num_devices: Option<u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let placement = self.placement(shape, num_devices)?;
        let out = PyDict::new(py);
        // Uneven shardings leave some devices an empty box: they hold nothing (unless the
        // whole array is empty, where JAX lists every device with its empty slices).
        let empty_array = placement.dimensions().contains(&0);
        for shard in placement.shards().filter(|s| s.holds_data() && (empty_array || s.element_count() > 0)) {
            out.set_item(shard.device().0, slices(py, &placement, &shard)?)?;
        }
        Ok(out)
    }

    /// The shape of one tile: each dimension divided by its tile count, rounded up (what the
    /// partitioned program sees on each device).
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.HloSharding.parse("{devices=[4,2]<=[8]}").tile_shape((10, 6))
    /// (3, 3)
    #[pyo3(signature = (shape, num_devices=None))]
    pub fn tile_shape<'py>(
        &self,
        py: Python<'py>,
        shape: ArrayLike,
        num_devices: Option<u64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.placement(shape, num_devices)?.tile_shape())
    }

    /// The groups of devices holding the same slice (replicas), each sorted, ordered by their
    /// first device.
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.HloSharding.parse("{devices=[2,2]<=[4] last_tile_dim_replicate}").replica_groups((4,))
    /// [(0, 1), (2, 3)]
    #[pyo3(signature = (shape, num_devices=None))]
    pub fn replica_groups<'py>(
        &self,
        py: Python<'py>,
        shape: ArrayLike,
        num_devices: Option<u64>,
    ) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let placement = self.placement(shape, num_devices)?;
        let groups: BTreeSet<Vec<u64>> = placement
            .shards()
            .map(|shard| {
                let mut group: Vec<u64> = shard.replica_group().map(|d| d.0).collect();
                group.sort_unstable();
                group
            })
            .collect();
        groups.into_iter().map(|g| PyTuple::new(py, g)).collect()
    }

    /// The devices holding element ``index`` of the array, in ascending order.
    ///
    /// >>> import xla_shape as xs
    /// >>> xs.HloSharding.parse("{devices=[2,2]<=[4]}").devices_holding((5, 8), (4, 7))
    /// (3,)
    #[pyo3(signature = (shape, index, num_devices=None))]
    pub fn devices_holding<'py>(
        &self,
        py: Python<'py>,
        shape: ArrayLike,
        index: Vec<i64>,
        num_devices: Option<u64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let placement = self.placement(shape, num_devices)?;
        let mut devices: Vec<u64> = placement.devices_holding(&index).py()?.map(|d| d.0).collect();
        devices.sort_unstable();
        PyTuple::new(py, devices)
    }
}

/// A shape's placement check for the data functions: the shape's array view.
pub(crate) fn array_placement(sharding: &HloSharding, shape: &Shape, num_devices: Option<u64>) -> PyResult<Placement> {
    sharding.inner.placement(&shape.array_view("a sharding's placement")?, num_devices).py()
}
