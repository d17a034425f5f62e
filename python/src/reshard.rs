//! `ReshardPlan`: an array's per-device buffers under one sharding moved to its per-device
//! buffers under another, without a global buffer (`docs/shard-buffers.md` §9).

use numpy::{PyArray1, PyArrayMethods, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use xla_shape::sharding::{DeviceId, buffers, reshard};

use crate::data::{ShardingLike, aligned_empty, bytes_of, bytes_of_mut, on_threads, shard_arrays};
use crate::errors::{IntoPyResult, binding_error};
use crate::shape::{Shape, ShapeLike};
use crate::sharding::array_placement;

/// The device counts of the two sides: one for both, or a pair ``(source, target)``.
#[derive(FromPyObject)]
pub enum DeviceCounts {
    /// The same count for both sides.
    Both(u64),
    /// Each side's count (``None``: the sharding's own devices).
    Each(Option<u64>, Option<u64>),
}

/// The plan of a reshard: for every device of the target sharding, the copies (``transfers``)
/// that make its buffer from the source sharding's buffers, each read from one replica of its
/// source box. Both sides share the element type and dimensions; device sets, device counts,
/// layouts (``to_shape``) and shard forms may differ.
///
/// >>> import xla_shape as xs
/// >>> plan = xs.ReshardPlan("f32[8,4]", "{devices=[2,2]<=[4]}", "{devices=[4,1]<=[4]}")
/// >>> plan.sources, plan.targets
/// ((0, 1, 2, 3), (0, 1, 2, 3))
/// >>> [(t["source"], t["target_start"]) for t in plan.transfers if t["target"] == 1]
/// [(0, (0, 0)), (1, (0, 2))]
#[pyclass(module = "xla_shape", frozen)]
pub struct ReshardPlan {
    plan: reshard::ReshardPlan,
}

/// One side's shard buffers.
fn side(
    shape: &Shape,
    sharding: ShardingLike,
    num_devices: Option<u64>,
    padded: bool,
) -> PyResult<buffers::ShardBuffers> {
    let sharding = sharding.into_sharding()?;
    let placement = array_placement(&sharding, shape, num_devices)?;
    let form = if padded { buffers::ShardForm::padded_to_tile(&placement) } else { buffers::ShardForm::Exact };
    buffers::ShardBuffers::from_placement(shape.array_view("reshard")?, &placement, &form).py()
}

fn tuple<'py>(py: Python<'py>, values: &[u64]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, values)
}

#[pymethods]
impl ReshardPlan {
    /// Plans the reshard of an array of ``shape`` (its layout is the source buffers') from
    /// ``from_sharding`` to ``to_sharding`` (``HloSharding``s or XLA's text). ``num_devices``
    /// is the program's device count (required for ``{replicated}``): one count for both sides
    /// or a pair ``(source, target)``. ``to_shape`` gives the target buffers another layout of
    /// the same element type and dimensions (default: ``shape``); ``padded_to_tile`` and
    /// ``to_padded_to_tile`` pad each side's buffers to its sharding's tile.
    #[new]
    #[pyo3(signature = (shape, from_sharding, to_sharding, num_devices=None, *, to_shape=None, padded_to_tile=false, to_padded_to_tile=false))]
    #[allow(clippy::too_many_arguments, reason = "Python's keyword arguments")]
    pub fn new(
        shape: ShapeLike,
        from_sharding: ShardingLike,
        to_sharding: ShardingLike,
        num_devices: Option<DeviceCounts>,
        to_shape: Option<ShapeLike>,
        padded_to_tile: bool,
        to_padded_to_tile: bool,
    ) -> PyResult<Self> {
        let shape = shape.into_shape()?;
        let to_shape = match to_shape {
            Some(s) => s.into_shape()?,
            None => shape.clone(),
        };
        let (from_count, to_count) = match num_devices {
            None => (None, None),
            Some(DeviceCounts::Both(n)) => (Some(n), Some(n)),
            Some(DeviceCounts::Each(a, b)) => (a, b),
        };
        let from = side(&shape, from_sharding, from_count, padded_to_tile)?;
        let to = side(&to_shape, to_sharding, to_count, to_padded_to_tile)?;
        Ok(Self { plan: reshard::ReshardPlan::new(from, to).py()? })
    }

    /// The source devices, ascending.
    #[getter]
    pub fn sources<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.plan.source().devices().map(|d| d.0))
    }

    /// The target devices, ascending.
    #[getter]
    pub fn targets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.plan.target().devices().map(|d| d.0))
    }

    /// The length of source ``device``'s buffer in bytes.
    pub fn source_len(&self, device: u64) -> PyResult<u64> {
        self.plan
            .source()
            .shard_len(DeviceId(device))
            .ok_or_else(|| binding_error("UnknownDevice", format!("device {device} is not a source device")))
    }

    /// The length of target ``device``'s buffer in bytes.
    pub fn target_len(&self, device: u64) -> PyResult<u64> {
        self.plan
            .target()
            .shard_len(DeviceId(device))
            .ok_or_else(|| binding_error("UnknownDevice", format!("device {device} is not a target device")))
    }

    /// Every copy, by ascending target: a dict with ``target``, ``source`` (the device read),
    /// ``replicas`` (every source device holding the box), ``global_start``, ``extent``,
    /// ``source_start`` and ``target_start`` (where the box is in the source and the target
    /// buffers' shards), ``elements`` and ``bytes``.
    #[getter]
    pub fn transfers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for t in self.plan.transfers() {
            let item = PyDict::new(py);
            item.set_item("target", t.target.0)?;
            item.set_item("source", t.source.0)?;
            item.set_item("replicas", PyTuple::new(py, t.replicas.iter().map(|d| d.0))?)?;
            item.set_item("global_start", tuple(py, t.global_start)?)?;
            item.set_item("extent", tuple(py, t.extent)?)?;
            item.set_item("source_start", tuple(py, t.source_start)?)?;
            item.set_item("target_start", tuple(py, t.target_start)?)?;
            item.set_item("elements", t.elements)?;
            item.set_item("bytes", t.bytes)?;
            list.append(item)?;
        }
        Ok(list)
    }

    /// The target buffers (new cache-line-aligned ``uint8`` arrays, by device id) made from
    /// ``shards``, a mapping of source device ids to buffers, GIL released, on ``threads``
    /// threads (default: one per core). A missing, extra or mis-sized buffer, or replicas that
    /// differ, raise an error naming the device; ``devices`` limits the targets made.
    #[pyo3(signature = (shards, *, devices=None, threads=None))]
    pub fn run<'py>(
        &self,
        shards: &Bound<'py, PyAny>,
        devices: Option<Vec<u64>>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = shards.py();
        let arrays = shard_arrays(shards)?;
        let inputs: Vec<(DeviceId, &[u8])> =
            arrays.iter().map(|(d, a)| Ok((*d, bytes_of(a)?))).collect::<PyResult<_>>()?;
        let wanted: Vec<DeviceId> = match devices {
            Some(list) => list.into_iter().map(DeviceId).collect(),
            None => self.plan.target().devices().collect(),
        };
        let out = PyDict::new(py);
        let mut made: Vec<(DeviceId, Bound<'py, PyArray1<u8>>)> = Vec::with_capacity(wanted.len());
        for device in wanted {
            let len = usize::try_from(self.target_len(device.0)?)
                .map_err(|_| binding_error("Overflow", "target buffer too large"))?;
            let array = aligned_empty(py, len)?;
            made.push((device, array));
        }
        {
            let mut writers: Vec<(DeviceId, PyReadwriteArray1<'_, u8>)> =
                made.iter().map(|(d, a)| (*d, a.readwrite())).collect();
            let mut slices: Vec<(DeviceId, &mut [u8])> =
                writers.iter_mut().map(|(d, w)| Ok((*d, bytes_of_mut(w)?))).collect::<PyResult<_>>()?;
            let plan = &self.plan;
            py.detach(|| on_threads(threads, || plan.run_into(inputs, &mut slices)))?.py()?;
        }
        for (device, array) in made {
            out.set_item(device.0, array)?;
        }
        Ok(out)
    }
}
