//! Moving bytes: `RelayoutPlan` (any layout to any layout, and to and from numpy's row-major
//! arrays) and `ShardBuffers` (a global buffer split into per-device buffers and back).
//!
//! Inputs are borrowed, not copied: the Python helper `xla_shape._buffers.as_bytes` views any
//! array numpy can view (numpy's own, `__array__`, the array interfaces, `__dlpack__`, the buffer
//! protocol; every dtype, ml_dtypes' too) as a 1-D `uint8` array, whose slice the kernels read
//! with the GIL released. Outputs are allocated once, uninitialized (the kernels write every byte,
//! padding included) and 64-byte aligned (`aligned_empty`), and handed to numpy as they are.
//!
//! Threads (`on_threads`): `threads=1` runs on the calling thread; `threads=N` on an N-thread pool
//! of the call's own (pools are reused, never shared by two calls at once); no `threads`, on
//! rayon's global pool, which takes concurrent callers' work side by side.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PySlice, PyTuple};
use xla_shape::relayout::{self, StridedView};
use xla_shape::sharding::{DeviceId, buffers};

use crate::errors::{IntoPyResult, binding_error};
use crate::shape::{Shape, ShapeLike};
use crate::sharding::{HloSharding, array_placement};

/// The module of the pure-Python buffer helpers.
const BUFFERS: &str = "xla_shape._buffers";

/// The alignment of every buffer the package allocates: a cache line.
const ALIGN: usize = 64;

/// A `uint8` array of `len` bytes, uninitialized, whose first byte sits on a cache line: a view
/// into `numpy.empty(len + 63)` (numpy's allocator, which reuses freed memory; numpy owns and
/// frees it). Every caller writes every byte before Python sees the array.
pub(crate) fn aligned_empty(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyArray1<u8>>> {
    let padded = len.checked_add(ALIGN - 1).ok_or_else(|| binding_error("Overflow", "buffer size overflows"))?;
    let raw = py.import("numpy")?.getattr("empty")?.call1((padded, "uint8"))?.cast_into::<PyArray1<u8>>()?;
    // The address only: nothing is read or written through the pointer.
    let address = raw.data() as usize;
    let offset = address.wrapping_neg() % ALIGN;
    let end = isize::try_from(offset + len).map_err(|_| binding_error("Overflow", "buffer size overflows"))?;
    // offset < 64.
    let view = raw.get_item(PySlice::new(py, isize::try_from(offset).unwrap_or_default(), end, 1))?;
    Ok(view.cast_into::<PyArray1<u8>>()?)
}

/// Any array numpy can view, as a 1-D `uint8` view of its bytes (no copy where its producer
/// shares its memory; `xla_shape._buffers` says when one copy is made).
pub(crate) fn as_bytes<'py>(data: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, u8>> {
    let view = data.py().import(BUFFERS)?.call_method1("as_bytes", (data,))?;
    Ok(view.cast_into::<PyArray1<u8>>()?.readonly())
}

/// A writable array or bytes-like object, as a 1-D `uint8` view of its bytes (never a copy: an
/// output written into a copy would be lost).
pub(crate) fn as_writable_bytes<'py>(out: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let view = out.py().import(BUFFERS)?.call_method1("as_writable_bytes", (out,))?;
    Ok(view.cast_into::<PyArray1<u8>>()?)
}

/// The bytes of a borrowed array (contiguous by construction: `as_bytes` and `aligned_empty`
/// make 1-D views of one buffer).
pub(crate) fn bytes_of<'a>(array: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    array.as_slice().map_err(|e| binding_error("NotContiguous", e.to_string()))
}

/// The bytes of a writable borrowed array.
pub(crate) fn bytes_of_mut<'a>(array: &'a mut PyReadwriteArray1<'_, u8>) -> PyResult<&'a mut [u8]> {
    array.as_slice_mut().map_err(|e| binding_error("NotContiguous", e.to_string()))
}

/// Idle rayon pools by thread count. A call takes one out (or builds one) and puts it back when
/// it is done, so two calls at once never share a pool: neither waits for the other's workers.
static IDLE_POOLS: Mutex<Option<HashMap<usize, Vec<rayon::ThreadPool>>>> = Mutex::new(None);

/// The most idle pools kept per thread count (the most concurrent callers that reuse theirs).
const MAX_IDLE_POOLS: usize = 8;

/// Runs `work` (GIL released by the caller) on `threads` threads: `None`, rayon's global pool
/// (one thread per core, shared by concurrent callers); `1`, the calling thread alone; `N`, an
/// `N`-thread pool this call alone uses.
pub(crate) fn on_threads<R: Send>(threads: Option<usize>, work: impl FnOnce() -> R + Send) -> PyResult<R> {
    match threads {
        None => Ok(work()),
        Some(0) => Err(binding_error("InvalidArgument", "threads must be at least 1")),
        Some(1) => Ok(relayout::on_calling_thread(work)),
        Some(n) => {
            let idle = {
                let mut pools = IDLE_POOLS.lock().unwrap_or_else(PoisonError::into_inner);
                pools.get_or_insert_with(HashMap::new).get_mut(&n).and_then(Vec::pop)
            };
            let pool = match idle {
                Some(pool) => pool,
                None => rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| binding_error("Threads", format!("cannot start {n} threads: {e}")))?,
            };
            let result = pool.install(work);
            let mut pools = IDLE_POOLS.lock().unwrap_or_else(PoisonError::into_inner);
            let idle = pools.get_or_insert_with(HashMap::new).entry(n).or_default();
            if idle.len() < MAX_IDLE_POOLS {
                idle.push(pool);
            }
            Ok(result)
        }
    }
}

/// A relayout planned once — loop order, blocking and kernels fixed — and run on many buffers,
/// as XLA's ``TransposePlan``.
///
/// >>> import xla_shape as xs
/// >>> plan = xs.RelayoutPlan("f32[2,3]{0,1}", "f32[2,3]{1,0}")
/// >>> import numpy as np
/// >>> plan.run(np.array([1, 4, 2, 5, 3, 6], np.float32)).view(np.float32)
/// array([1., 2., 3., 4., 5., 6.], dtype=float32)
#[pyclass(module = "xla_shape", frozen)]
pub struct RelayoutPlan {
    plan: relayout::RelayoutPlan,
    /// The element type, dimensions and dtype of the logical array when the destination is
    /// numpy's row-major form (`to_logical`): the output is viewed as it.
    logical: Option<Shape>,
}

impl RelayoutPlan {
    /// Runs the plan from `src` into a new aligned array, GIL released.
    fn run_new<'py>(&self, src: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let py = src.py();
        let src = as_bytes(src)?;
        let out = aligned_empty(py, self.plan.dst_len())?;
        {
            let mut dst: PyReadwriteArray1<'_, u8> = out.readwrite();
            self.run_slices(py, &src, &mut dst, threads)?;
        }
        Ok(out)
    }

    fn run_slices(
        &self,
        py: Python<'_>,
        src: &PyReadonlyArray1<'_, u8>,
        dst: &mut PyReadwriteArray1<'_, u8>,
        threads: Option<usize>,
    ) -> PyResult<()> {
        let src = bytes_of(src)?;
        let dst = bytes_of_mut(dst)?;
        let plan = &self.plan;
        py.detach(|| on_threads(threads, || plan.run(src, dst)))?.py()
    }
}

/// The row-major view numpy holds an array of `shape` in: one element per byte width, sub-byte
/// types one per byte.
fn logical_view(shape: &Shape) -> PyResult<StridedView> {
    let array = shape.array_view("a numpy array")?;
    let dims: Vec<u64> = array.dimensions().iter().map(|&d| d.unsigned_abs()).collect();
    StridedView::row_major(array.element_type(), &dims).py()
}

#[pymethods]
impl RelayoutPlan {
    /// Plans the move of an array from the layout of ``src`` to that of ``dst`` (``Shape``s or
    /// XLA's text, with the same element type and dimensions).
    #[new]
    pub fn new(src: ShapeLike, dst: ShapeLike) -> PyResult<Self> {
        let (src, dst) = (src.into_shape()?, dst.into_shape()?);
        let plan = relayout::RelayoutPlan::new(src.array_view("relayout")?, dst.array_view("relayout")?).py()?;
        Ok(Self { plan, logical: None })
    }

    /// Plans reading a buffer in ``shape``'s layout (tiled, packed, padded) into numpy's
    /// row-major array of ``shape.dtype``; ``run`` then returns that array.
    ///
    /// >>> import xla_shape as xs
    /// >>> plan = xs.RelayoutPlan.to_logical("s4[3]{0:E(4)}")
    /// >>> plan.run(bytes([0x21, 0x0f])).tolist()
    /// [1, 2, -1]
    #[staticmethod]
    pub fn to_logical(shape: ShapeLike) -> PyResult<Self> {
        let shape = shape.into_shape()?;
        let view = logical_view(&shape)?;
        let plan = relayout::RelayoutPlan::new(shape.array_view("to_numpy")?, &view).py()?;
        Ok(Self { plan, logical: Some(shape) })
    }

    /// Plans writing numpy's row-major array of ``shape.dtype`` as the bytes of ``shape``'s
    /// layout; ``run`` takes the array's bytes.
    ///
    /// >>> import xla_shape as xs
    /// >>> plan = xs.RelayoutPlan.from_logical("s4[3]{0:E(4)}")
    /// >>> bytes(plan.run(bytes([1, 2, 0x0f])))
    /// b'!\x0f'
    #[staticmethod]
    pub fn from_logical(shape: ShapeLike) -> PyResult<Self> {
        let shape = shape.into_shape()?;
        let view = logical_view(&shape)?;
        let plan = relayout::RelayoutPlan::new(&view, shape.array_view("from_numpy")?).py()?;
        Ok(Self { plan, logical: None })
    }

    /// The source buffer's length in bytes.
    #[getter]
    pub fn src_len(&self) -> usize {
        self.plan.src_len()
    }

    /// The destination buffer's length in bytes.
    #[getter]
    pub fn dst_len(&self) -> usize {
        self.plan.dst_len()
    }

    /// Moves ``src`` (any contiguous array numpy can view, of any dtype, or bytes-like object: its
    /// raw bytes) into ``out`` (a writable contiguous array or bytes-like object of ``dst_len``
    /// bytes) or, without ``out``, a new cache-line-aligned ``uint8`` array — viewed as the
    /// logical array for a ``to_logical`` plan. The GIL is released while the kernels run, on
    /// ``threads`` threads: ``1`` runs on the calling thread, ``N`` on a pool of the call's own,
    /// none on one thread per core.
    #[pyo3(signature = (src, out=None, *, threads=None))]
    pub fn run<'py>(
        &self,
        src: &Bound<'py, PyAny>,
        out: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = src.py();
        if let Some(out) = out {
            let src = as_bytes(src)?;
            {
                let view = as_writable_bytes(&out)?;
                let mut dst = view.try_readwrite().map_err(|e| binding_error("NotWritable", e.to_string()))?;
                self.run_slices(py, &src, &mut dst, threads)?;
            }
            return Ok(out);
        }
        let out = self.run_new(src, threads)?;
        match &self.logical {
            Some(shape) => {
                let dims = shape.dimensions(py)?;
                out.call_method1("view", (shape.dtype(py)?,))?.call_method1("reshape", (dims,))
            }
            None => Ok(out.into_any()),
        }
    }

    /// For benchmarks: the seconds each of ``rounds`` runs of the kernel takes from ``src`` into
    /// ``out`` (the same buffers every round), timed in Rust with the GIL released, so that the
    /// binding's own cost can be told from the kernel's.
    #[pyo3(name = "_time_run", signature = (src, out, rounds, *, threads=None))]
    pub fn time_run(
        &self,
        src: &Bound<'_, PyAny>,
        out: &Bound<'_, PyArray1<u8>>,
        rounds: usize,
        threads: Option<usize>,
    ) -> PyResult<Vec<f64>> {
        let src = as_bytes(src)?;
        let mut dst = out.try_readwrite().map_err(|e| binding_error("NotWritable", e.to_string()))?;
        let src = bytes_of(&src)?;
        let dst = bytes_of_mut(&mut dst)?;
        let plan = &self.plan;
        out.py()
            .detach(|| {
                on_threads(threads, || {
                    (0..rounds)
                        .map(|_| {
                            let start = std::time::Instant::now();
                            plan.run(src, dst).map(|()| start.elapsed().as_secs_f64())
                        })
                        .collect::<xla_shape::Result<Vec<f64>>>()
                })
            })?
            .py()
    }

    /// The plan in words: the boxes, their kernels, the loop order.
    pub fn explain(&self) -> String {
        self.plan.explain()
    }
}

/// A global array's per-device buffers under a sharding, planned once: each device's box of the
/// array as a buffer of its own, in the global shape's layout — exactly as JAX's
/// ``addressable_shards`` hold them, or padded to the sharding's tile (``padded_to_tile``) as
/// the partitioned program sees them.
///
/// >>> import xla_shape as xs
/// >>> sb = xs.ShardBuffers("f32[4,2]", "{devices=[2,1]<=[2]}")
/// >>> sb.devices, sb.shard_shape(1)
/// ((0, 1), xs.Shape('f32[2,2]{1,0}'))
#[pyclass(module = "xla_shape", frozen)]
pub struct ShardBuffers {
    buffers: buffers::ShardBuffers,
}

/// The `(device, buffer)` pairs of a mapping of device ids to buffers.
pub(crate) fn shard_arrays<'py>(shards: &Bound<'py, PyAny>) -> PyResult<Vec<(DeviceId, PyReadonlyArray1<'py, u8>)>> {
    let items = shards.call_method0("items")?;
    items
        .try_iter()?
        .map(|item| {
            let (device, data): (u64, Bound<'py, PyAny>) = item?.extract()?;
            Ok((DeviceId(device), as_bytes(&data)?))
        })
        .collect()
}

#[pymethods]
impl ShardBuffers {
    /// Plans the shard buffers of an array of ``shape`` under ``sharding`` (``HloSharding`` or
    /// text) on ``num_devices`` devices (required for ``{replicated}``).
    #[new]
    #[pyo3(signature = (shape, sharding, num_devices=None, *, padded_to_tile=false))]
    pub fn new(
        shape: ShapeLike,
        sharding: ShardingLike,
        num_devices: Option<u64>,
        padded_to_tile: bool,
    ) -> PyResult<Self> {
        let shape = shape.into_shape()?;
        let sharding = sharding.into_sharding()?;
        let placement = array_placement(&sharding, &shape, num_devices)?;
        let form =
            if padded_to_tile { buffers::ShardForm::padded_to_tile(&placement) } else { buffers::ShardForm::Exact };
        let buffers =
            buffers::ShardBuffers::from_placement(shape.array_view("shard buffers")?, &placement, &form).py()?;
        Ok(Self { buffers })
    }

    /// The devices, ascending.
    #[getter]
    pub fn devices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.buffers.devices().map(|d| d.0))
    }

    /// The global buffer's length in bytes.
    #[getter]
    pub fn global_len(&self) -> u64 {
        self.buffers.global_len()
    }

    /// The shape of ``device``'s buffer.
    pub fn shard_shape(&self, device: u64) -> PyResult<Shape> {
        self.buffers
            .shard_shape(DeviceId(device))
            .map(|buf| Shape { buf: buf.clone() })
            .ok_or_else(|| binding_error("UnknownDevice", format!("device {device} holds no shard")))
    }

    /// The length of ``device``'s buffer in bytes.
    pub fn shard_len(&self, device: u64) -> PyResult<u64> {
        self.buffers
            .shard_len(DeviceId(device))
            .ok_or_else(|| binding_error("UnknownDevice", format!("device {device} holds no shard")))
    }

    /// Each device's buffer (a new cache-line-aligned ``uint8`` array) cut from the global
    /// buffer ``data``, GIL released.
    #[pyo3(signature = (data, *, threads=None))]
    pub fn split<'py>(&self, data: &Bound<'py, PyAny>, threads: Option<usize>) -> PyResult<Bound<'py, PyDict>> {
        let py = data.py();
        let global = as_bytes(data)?;
        let out = PyDict::new(py);
        let mut arrays = Vec::new();
        for device in self.buffers.devices() {
            let len =
                usize::try_from(self.shard_len(device.0)?).map_err(|_| binding_error("Overflow", "shard too large"))?;
            let array = aligned_empty(py, len)?;
            out.set_item(device.0, &array)?;
            arrays.push((device, array));
        }
        let mut writers: Vec<(DeviceId, PyReadwriteArray1<'_, u8>)> =
            arrays.iter().map(|(d, a)| (*d, a.readwrite())).collect();
        let mut slices: Vec<(DeviceId, &mut [u8])> =
            writers.iter_mut().map(|(d, w)| Ok((*d, bytes_of_mut(w)?))).collect::<PyResult<_>>()?;
        let global = bytes_of(&global)?;
        let buffers = &self.buffers;
        py.detach(|| on_threads(threads, || buffers.split_into(global, &mut slices)))?.py()?;
        Ok(out)
    }

    /// The global buffer (a new cache-line-aligned ``uint8`` array) assembled from ``shards``, a
    /// mapping of device ids to buffers. A missing, extra or mis-sized buffer, or replicas that
    /// differ, raise an error naming the device.
    #[pyo3(signature = (shards, *, threads=None))]
    pub fn assemble<'py>(
        &self,
        shards: &Bound<'py, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let py = shards.py();
        let arrays = shard_arrays(shards)?;
        let slices: Vec<(DeviceId, &[u8])> =
            arrays.iter().map(|(d, a)| Ok((*d, bytes_of(a)?))).collect::<PyResult<_>>()?;
        let len =
            usize::try_from(self.buffers.global_len()).map_err(|_| binding_error("Overflow", "array too large"))?;
        let out = aligned_empty(py, len)?;
        {
            let mut writer = out.readwrite();
            let global = bytes_of_mut(&mut writer)?;
            let buffers = &self.buffers;
            py.detach(|| on_threads(threads, || buffers.assemble_into(slices, global)))?.py()?;
        }
        Ok(out)
    }
}

/// A sharding given as an `HloSharding` or as XLA's text.
#[derive(FromPyObject)]
pub enum ShardingLike {
    /// An `HloSharding`.
    Sharding(Py<HloSharding>),
    /// XLA's text.
    Text(String),
}

impl ShardingLike {
    pub(crate) fn into_sharding(self) -> PyResult<HloSharding> {
        match self {
            Self::Sharding(s) => Ok(s.get().clone()),
            Self::Text(text) => HloSharding::parse(&text),
        }
    }
}
