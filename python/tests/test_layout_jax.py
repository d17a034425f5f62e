"""`to_numpy` and `from_numpy` against buffers JAX lays out: `jax.device_put` with a `Format`
layout on one CPU device, the device buffer read raw, the logical values from `np.asarray`.

The CPU client honours `major_to_minor` and packs `s4` two per byte (low nibble first); tiles
it reports but does not apply (the bytes stay untiled), so the shapes here say the layout the
bytes are in: the reported one without tiles, with `E(4)` for `s4`."""

from __future__ import annotations

import math
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from jax.experimental.layout import Format, Layout
from jax.sharding import SingleDeviceSharding

import xla_shape as xs

DTYPES = {
    "f32": np.float32,
    "bf16": ml_dtypes.bfloat16,
    "s8": np.int8,
    "s4": ml_dtypes.int4,
    "u8": np.uint8,
    "f16": np.float16,
    "s32": np.int32,
    "f64": np.float64,
    "pred": np.bool_,
}


def values(etype: str, dims: tuple[int, ...]) -> np.ndarray:
    k = np.arange(math.prod(dims))
    dtype = DTYPES[etype]
    if etype == "s4":
        return ((k * 7 + 3) % 16 - 8).astype(dtype).reshape(dims)
    if etype in ("s8", "u8"):
        return ((k * 37 + 11) % 256).astype(np.uint8).view(dtype).reshape(dims)
    if etype == "pred":
        return ((k * 7) % 3 == 0).reshape(dims)
    return (k * 0.5 - 9).astype(dtype).reshape(dims)


CASES: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
for etype in ["f32", "bf16", "s8", "s4"]:
    CASES += [
        (etype, (5, 7), (0, 1)),
        (etype, (5, 7), (1, 0)),
        (etype, (3, 4, 5), (0, 1, 2)),
        (etype, (3, 4, 5), (2, 0, 1)),
        (etype, (3, 4, 5), (1, 2, 0)),
        (etype, (3, 4, 5), (2, 1, 0)),
        (etype, (2, 3, 1), (0, 2, 1)),
        (etype, (9,), (0,)),
    ]
CASES += [
    ("u8", (4, 6), (1, 0)),
    ("f16", (3, 2, 4), (1, 0, 2)),
    ("s32", (6, 2), (1, 0)),
    ("f64", (2, 5, 3), (2, 1, 0)),
    ("pred", (3, 7), (1, 0)),
]


def without_pad_nibble(raw: bytes, etype: str, count: int) -> bytes:
    """s4 with an odd element count: the last byte's high nibble is padding, which the device
    leaves undefined (seen nonzero), so it is not compared."""
    if etype == "s4" and count % 2:
        return raw[:-1] + bytes([raw[-1] & 0x0F])
    return raw


def placed(
    etype: str, x: np.ndarray, major_to_minor: tuple[int, ...], tiling: Any = None
) -> jax.Array:
    target = Format(
        Layout(major_to_minor=major_to_minor, tiling=tiling), SingleDeviceSharding(jax.devices()[2])
    )
    return jax.device_put(x, target)


def bytes_shape(etype: str, arr: jax.Array) -> xs.Shape:
    """The shape of the bytes: the reported layout without its tiles, `E(4)` for s4."""
    layout = arr.format.layout
    m2m = ",".join(str(d) for d in reversed(layout.major_to_minor))
    extra = ":E(4)" if etype == "s4" else ""
    return xs.Shape.parse(f"{etype}[{','.join(map(str, arr.shape))}]{{{m2m}{extra}}}")


@pytest.mark.parametrize(("etype", "dims", "m2m"), CASES)
def test_to_numpy_of_device_buffers(
    etype: str,
    dims: tuple[int, ...],
    m2m: tuple[int, ...],
    device_bytes: Any,
) -> None:
    x = values(etype, dims)
    arr = placed(etype, x, m2m)
    assert tuple(arr.format.layout.major_to_minor) == m2m
    shape = bytes_shape(etype, arr)
    raw = device_bytes(arr)
    assert len(raw) == shape.storage_bytes
    out = xs.to_numpy(raw, shape)
    expected = np.asarray(arr)
    assert out.dtype == expected.dtype == x.dtype
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out, x)
    # and back: the same raw bytes
    back = xs.from_numpy(expected, shape)
    assert back.dtype == np.uint8
    assert back.ndim == 1
    raw = without_pad_nibble(raw, etype, x.size)
    assert back.tobytes() == raw
    # a relayout from numpy's row-major bytes gives the device bytes too
    row_major = shape.with_layout(
        "{"
        + ",".join(str(d) for d in reversed(range(len(dims))))
        + (":E(4)}" if etype == "s4" else "}")
    )
    assert xs.relayout(xs.from_numpy(x, row_major), row_major, shape).tobytes() == raw


@pytest.mark.parametrize(
    ("etype", "dims", "m2m", "tiling"),
    [
        ("f32", (8, 8), (0, 1), ((2, 2),)),
        ("bf16", (16, 8), (1, 0), ((8, 128), (2, 1))),
        ("s8", (5, 7), (0, 1), ((4, 4),)),
    ],
)
def test_tiles_are_reported_not_applied(
    etype: str,
    dims: tuple[int, ...],
    m2m: tuple[int, ...],
    tiling: Any,
    device_bytes: Any,
) -> None:
    """Tiled `Format`s: the reported layout parses to the same tiles, but the CPU buffer's bytes
    are the untiled layout's (what `to_numpy` of the untiled shape reads)."""
    x = values(etype, dims)
    arr = placed(etype, x, m2m, tiling)
    reported = xs.Layout.parse(arr._pjrt_layout._xla_layout().to_string())
    assert reported.tiles == tuple(tuple(t) for t in tiling)
    assert reported.major_to_minor == m2m
    shape = bytes_shape(etype, arr)
    assert not shape.layout.is_tiled
    np.testing.assert_array_equal(xs.to_numpy(device_bytes(arr), shape), x)
    tiled = shape.with_layout(reported)
    assert tiled.storage_bytes == arr.on_device_size_in_bytes()


def test_to_numpy_reads_jax_arrays_as_any_buffer(device_bytes: Any) -> None:
    x = values("bf16", (4, 6))
    arr = placed("bf16", x, (1, 0))
    raw = device_bytes(arr)
    shape = bytes_shape("bf16", arr)
    for form in (raw, bytearray(raw), memoryview(raw), np.frombuffer(raw, np.uint8)):
        np.testing.assert_array_equal(xs.to_numpy(form, shape), x)
    # a row-major ml_dtypes array read as the bytes of a transposed layout
    transposed = np.ascontiguousarray(x.T)
    np.testing.assert_array_equal(xs.to_numpy(transposed, shape), x)


def test_int4_against_device_packing(device_bytes: Any) -> None:
    """Odd element counts: the last byte's high nibble is padding."""
    for dims in [(7,), (3, 5), (1, 1)]:
        x = values("s4", dims)
        arr = jax.device_put(x, jax.devices()[0])
        raw = device_bytes(arr)
        assert len(raw) == (math.prod(dims) + 1) // 2
        shape = xs.Shape.array(
            ml_dtypes.int4, dims, xs.Layout.from_major_to_minor(range(len(dims)))
        )
        shape = shape.with_layout(str(shape.layout)[:-1] + ":E(4)}")
        np.testing.assert_array_equal(xs.to_numpy(raw, shape), x)
        assert xs.from_numpy(x, shape).tobytes() == without_pad_nibble(raw, "s4", x.size)
