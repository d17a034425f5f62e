"""Arrays as JAX users hold them, of every dtype JAX has, taken as they are wherever a buffer is
taken; ``__dlpack__`` producers; arrays not on the host; ``Shape.from_jax`` against the layouts
of XLA's compiled modules; concurrent callers on their own threads."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from jax.experimental.layout import Format, Layout
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import xla_shape as xs

# Every dtype JAX 0.10.2 creates arrays of on CPU (its float6 types it refuses: "Invalid XLA
# PrimitiveType").
JAX_DTYPES: list[Any] = [
    jnp.bool_,
    jnp.int1,
    jnp.int2,
    jnp.int4,
    jnp.int8,
    jnp.int16,
    jnp.int32,
    jnp.int64,
    jnp.uint1,
    jnp.uint2,
    jnp.uint4,
    jnp.uint8,
    jnp.uint16,
    jnp.uint32,
    jnp.uint64,
    jnp.float16,
    jnp.bfloat16,
    jnp.float32,
    jnp.float64,
    jnp.complex64,
    jnp.complex128,
    jnp.float8_e5m2,
    jnp.float8_e4m3fn,
    jnp.float8_e4m3b11fnuz,
    jnp.float8_e5m2fnuz,
    jnp.float8_e4m3fnuz,
    jnp.float8_e4m3,
    jnp.float8_e3m4,
    jnp.float8_e8m0fnu,
    jnp.float4_e2m1fn,
]

#: Stored packed on the device: numpy's view of them (one element per byte) is a copy.
SUB_BYTE = {"int1", "int2", "int4", "uint1", "uint2", "uint4", "float4_e2m1fn"}

IDS = [np.dtype(d).name for d in JAX_DTYPES]


def values(dtype: Any, dims: tuple[int, ...]) -> npt.NDArray[Any]:
    """Distinct small values every dtype holds (0 and 1 for the one- and two-bit types)."""
    n = int(np.prod(dims))
    bits = 2 if np.dtype(dtype).name in ("int1", "uint1", "int2", "uint2", "bool") else 8
    raw = (np.arange(n) * 3 + 1) % bits
    if np.dtype(dtype) == np.dtype(ml_dtypes.float8_e8m0fnu):
        raw = 2.0 ** (np.arange(n) % 5)  # powers of two only
    return raw.astype(np.float32).astype(dtype).reshape(dims)


def logical_bytes(x: Any) -> bytes:
    """The bytes numpy holds ``x``'s logical values in (row-major, one element per byte for the
    sub-byte types): the independent reference."""
    return np.ascontiguousarray(np.asarray(x)).tobytes()


@pytest.mark.parametrize("dtype", JAX_DTYPES, ids=IDS)
def test_assemble_takes_jax_shards_as_they_are(dtype: Any, mesh8: Mesh) -> None:
    dims = (16, 4)
    named = NamedSharding(mesh8, P("x"))
    x = jax.device_put(values(dtype, dims), named)
    shape = xs.Shape.array(np.dtype(x.dtype), dims)
    sharding = xs.HloSharding.from_jax(named, 2)
    shards = {s.device.id: s.data for s in x.addressable_shards}
    out = xs.assemble(shards, shape, sharding)
    assert out.tobytes() == logical_bytes(x)
    planned = xs.ShardBuffers(shape, sharding).assemble(shards, threads=1)
    assert planned.tobytes() == logical_bytes(x)
    # The other way: a jax.Array as the global buffer, its shards as JAX holds them.
    pieces = xs.split(x, shape, sharding)
    assert {d: b.tobytes() for d, b in pieces.items()} == {
        s.device.id: logical_bytes(s.data) for s in x.addressable_shards
    }


@pytest.mark.parametrize("dtype", JAX_DTYPES, ids=IDS)
def test_relayout_and_numpy_take_jax_arrays(dtype: Any) -> None:
    a = values(dtype, (8, 6))
    x = jax.device_put(a)
    shape = xs.Shape.array(np.dtype(x.dtype), (8, 6))
    column_major = shape.with_layout("{0,1}")
    moved = xs.relayout(x, shape, column_major, threads=1)
    assert moved.tobytes() == np.asfortranarray(a).tobytes(order="F")
    assert xs.RelayoutPlan(shape, column_major).run(x).tobytes() == moved.tobytes()
    back = xs.to_numpy(moved, column_major)
    assert back.dtype == a.dtype
    assert back.tobytes() == a.tobytes()
    assert xs.to_numpy(x, shape).tobytes() == a.tobytes()
    assert xs.from_numpy(x, column_major).tobytes() == moved.tobytes()


@pytest.mark.parametrize("dtype", JAX_DTYPES, ids=IDS)
def test_jax_arrays_are_viewed_in_place(dtype: Any) -> None:
    """A single-device CPU jax.Array of a byte-wide dtype (bf16, the float8s included) is read
    where it lies; a sub-byte one is unpacked by JAX, once (the documented copy)."""
    x = jax.device_put(values(dtype, (64, 8)))
    x.block_until_ready()
    view = xs.as_bytes(x)
    assert view.tobytes() == logical_bytes(x)
    in_place = view.ctypes.data == x.unsafe_buffer_pointer()
    assert in_place == (np.dtype(x.dtype).name not in SUB_BYTE)


class DLPackOnly:
    """A producer with ``__dlpack__`` and nothing else numpy reads."""

    def __init__(self, array: npt.NDArray[Any], device: tuple[int, int] = (1, 0)) -> None:
        self._array = array
        self._device = device

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


def test_dlpack_producer_is_read_in_place() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = xs.as_bytes(DLPackOnly(a))
    assert view.ctypes.data == a.ctypes.data
    out = xs.relayout(DLPackOnly(a), "f32[4,6]{1,0}", "f32[4,6]{0,1}")
    assert out.view(np.float32).tolist() == a.T.ravel().tolist()
    assert xs.from_numpy(DLPackOnly(a), "f32[4,6]{0,1}").tobytes() == out.tobytes()


class OnDevice(DLPackOnly):
    """An array in a GPU's memory, as torch and jax describe one."""

    device = "cuda:1"

    def __array__(self, *args: Any, **kwargs: Any) -> npt.NDArray[Any]:
        raise AssertionError("the bytes of a device array must not be asked for")


def test_array_on_a_device_is_refused_naming_it() -> None:
    arr = OnDevice(np.zeros(4, np.float32), device=(2, 1))
    with pytest.raises(xs.Error, match=r"on device cuda:1, not in host memory") as info:
        xs.relayout(arr, "f32[4]", "f32[4]")
    assert info.value.kind == "NotOnHost"
    with pytest.raises(xs.Error, match="on device cuda:1"):
        xs.assemble({0: arr}, "f32[4]", "{replicated}", 1)
    # Without a `device` attribute: DLPack's name of the device type.
    with pytest.raises(xs.Error, match=r"on device ROCm:3"):
        xs.as_bytes(DLPackOnly(np.zeros(4, np.float32), device=(10, 3)))


def test_what_numpy_cannot_view_is_refused() -> None:
    with pytest.raises(xs.Error, match=r"expected an array or a bytes-like object .* got int"):
        xs.as_bytes(3)
    with pytest.raises(xs.Error, match="holds Python objects"):
        xs.as_bytes(np.array([object()]))


def test_out_takes_writable_arrays_and_buffers() -> None:
    plan = xs.RelayoutPlan("f32[2,3]{0,1}", "f32[2,3]{1,0}")
    src = np.array([1, 4, 2, 5, 3, 6], np.float32)
    expected = np.arange(1, 7, dtype=np.float32)
    typed = np.zeros((2, 3), np.float32)
    assert plan.run(src, typed) is typed
    assert typed.ravel().tolist() == expected.tolist()
    raw = bytearray(24)
    assert plan.run(src, raw) is raw
    assert np.frombuffer(raw, np.float32).tolist() == expected.tolist()
    with pytest.raises(xs.Error, match="read-only") as info:
        plan.run(src, jnp.zeros(6, jnp.float32))
    assert info.value.kind == "NotWritable"
    with pytest.raises(xs.Error, match="read-only"):
        plan.run(src, b"\0" * 24)


@pytest.mark.parametrize("threads", [None, 1, 2, 3])
def test_concurrent_callers_each_get_their_own_result(threads: int | None) -> None:
    """Callers on threads of their own, with every ``threads`` setting, at once: each result is
    its own input moved (1 MiB and more, so the kernels split their work where they may)."""
    plan = xs.RelayoutPlan("u8[1024,2048]{0,1}", "u8[1024,2048]{1,0}")
    inputs = [
        np.full(plan.src_len, k, np.uint8) + np.arange(plan.src_len, dtype=np.uint8)
        for k in range(8)
    ]

    def run(k: int) -> bool:
        expected = inputs[k].reshape(2048, 1024).T.ravel()
        out = plan.run(inputs[k], threads=threads)
        return bool(np.array_equal(out, expected))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(run, range(8)))


def compiled_parameter(x: Any) -> xs.Shape:
    """The shape of parameter 0 in XLA's compiled module of the identity on ``x``."""
    text = jax.jit(lambda a: a).lower(x).compile().as_text()
    line = next(line for line in text.splitlines() if "parameter(0)" in line)
    match = re.search(r"= (\S+\[[^\]]*\](?:\{[^}]*\})?) parameter\(0\)", line)
    assert match, line
    return xs.Shape.parse(match.group(1))


@pytest.mark.parametrize("dtype", JAX_DTYPES, ids=IDS)
@pytest.mark.parametrize("dims", [(), (5,), (4, 6), (2, 3, 4)])
def test_from_jax_equals_the_compiled_parameter(dtype: Any, dims: tuple[int, ...]) -> None:
    x = jax.device_put(values(dtype, dims))
    ours = xs.Shape.from_jax(x)
    if np.dtype(dtype).name in ("int1", "uint1"):
        # JAX 0.10.2 holds them packed (PJRT names the buffer s1[8,6]{1,0:E(1)}) but compiles
        # them as pred and refuses its own buffers: no compiled module to compare with.
        assert ours.layout is not None
        assert ours.layout.element_size_in_bits == 1
    else:
        assert ours == compiled_parameter(x)
        assert str(ours) == str(compiled_parameter(x))
    assert ours.dimensions == dims
    layout = x.format.layout
    assert ours.layout is not None
    assert ours.layout.major_to_minor == tuple(layout.major_to_minor)
    assert ours.layout.tiles == tuple(tuple(t) for t in layout.tiling)


def test_from_jax_of_a_sharded_array_is_the_global_shape(mesh8: Mesh) -> None:
    x = jax.device_put(values(jnp.bfloat16, (16, 4)), NamedSharding(mesh8, P("x")))
    assert xs.Shape.from_jax(x) == xs.Shape.parse("bf16[16,4]{1,0}")


def test_from_jax_of_a_shape_dtype_struct() -> None:
    spec = jax.ShapeDtypeStruct((8, 128), jnp.float8_e4m3fn)
    assert str(xs.Shape.from_jax(spec)) == "f8e4m3fn[8,128]{1,0}"
    # No layout reported: XLA's default one, as Shape.array makes it (no element size).
    packed = jax.ShapeDtypeStruct((3, 5), jnp.int4)
    assert xs.Shape.from_jax(packed) == xs.Shape.array("s4", (3, 5))
    assert str(xs.Shape.from_jax(packed)) == "s4[3,5]{1,0}"


class Reported:
    """What JAX reports of an array on a TPU: a tiled layout (``x.format.layout``)."""

    def __init__(self, dims: tuple[int, ...], dtype: Any, layout: Any) -> None:
        self.shape, self.dtype = dims, np.dtype(dtype)
        self.format = Format(layout, jax.sharding.SingleDeviceSharding(jax.devices()[0]))


@pytest.mark.parametrize(
    ("dims", "dtype", "major_to_minor", "tiling", "bits", "text"),
    [
        ((16, 256), jnp.float32, (0, 1), ((8, 128),), 0, "f32[16,256]{1,0:T(8,128)}"),
        ((16, 256), jnp.bfloat16, (0, 1), ((8, 128), (2, 1)), 0, "bf16[16,256]{1,0:T(8,128)(2,1)}"),
        ((256, 16), jnp.int4, (1, 0), ((8, 128), (4, 1)), 4, "s4[256,16]{0,1:T(8,128)(4,1)E(4)}"),
        ((7,), jnp.int8, (0,), ((1024,),), 0, "s8[7]{0:T(1024)}"),
    ],
)
def test_from_jax_of_tiled_layouts_equals_the_crates_text(
    dims: tuple[int, ...],
    dtype: Any,
    major_to_minor: tuple[int, ...],
    tiling: tuple[tuple[int, ...], ...],
    bits: int,
    text: str,
) -> None:
    layout = Layout(
        major_to_minor=major_to_minor, tiling=tiling, sub_byte_element_size_in_bits=bits
    )
    shape = xs.Shape.from_jax(Reported(dims, dtype, layout))
    assert shape == xs.Shape.parse(text)
    assert str(shape) == text
    # What a TPU user asks of their own array: where an element lies.
    assert shape.byte_offset([0] * len(dims)) == 0
