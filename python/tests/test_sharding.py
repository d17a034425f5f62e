"""Shardings, device slices and shard buffers against JAX on 8 CPU devices: `NamedSharding`s on
meshes 8, 2x4 and 2x2x2 placed with `jax.device_put`, the device buffers read raw."""

from __future__ import annotations

import itertools
import math
import pickle
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from jax._src.lib import xla_client as xc
from jax.experimental.layout import Format, Layout
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import xla_shape as xs

# (mesh, spec, dims): splits of one and two dimensions, a dimension over two mesh axes (both
# orders), partial and full replication.
SPECS: list[tuple[str, tuple[Any, ...], tuple[int, ...]]] = [
    ("8", ("x", None), (8, 6)),
    ("8", (None, "x"), (3, 16)),
    ("8", (), (4, 2)),
    ("2x4", ("x", "y"), (4, 8)),
    ("2x4", ("y", "x"), (8, 4)),
    ("2x4", (None, "y"), (6, 8)),
    ("2x4", ("x", None), (4, 6)),
    ("2x4", (("x", "y"), None), (8, 6)),
    ("2x4", (("y", "x"),), (16,)),
    ("2x4", (None, None), (3, 5)),
    ("2x2x2", ("x", "y", "z"), (4, 6, 4)),
    ("2x2x2", ("z", None, ("x", "y")), (4, 2, 8)),
    ("2x2x2", (None, "y", None), (6, 4, 3)),
    ("2x2x2", (("z", "x"), "y"), (4, 6)),
    ("2x2x2", ("y",), (2, 3, 2)),
    # empty arrays and a scalar
    ("2x4", ("x", "y"), (0, 8)),
    ("2x4", (None, "y"), (2, 0)),
    ("2x4", (), ()),
]

DTYPES = [np.float32, ml_dtypes.bfloat16, np.int8, ml_dtypes.int4, np.float64]
XLA_TYPE = {
    np.dtype(np.float32): "f32",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.int8): "s8",
    np.dtype(ml_dtypes.int4): "s4",
    np.dtype(np.float64): "f64",
}


def spec_id(case: tuple[str, tuple[Any, ...], tuple[int, ...]]) -> str:
    mesh, spec, dims = case
    return f"{mesh}-{spec}-{dims}".replace(" ", "").replace("'", "")


def values(dtype: Any, dims: tuple[int, ...]) -> np.ndarray:
    """Distinct values (as far as the type allows) in every position."""
    k = np.arange(math.prod(dims))
    if np.dtype(dtype) == np.dtype(ml_dtypes.int4):
        return ((k * 5 + 3) % 16 - 8).astype(ml_dtypes.int4).reshape(dims)
    if np.dtype(dtype) == np.dtype(np.int8):
        return ((k * 37 + 11) % 256 - 128).astype(np.int8).reshape(dims)
    return (k * 0.75 - 7).astype(dtype).reshape(dims)


def pack_nibbles(x: np.ndarray) -> bytes:
    """Row-major int4 values packed two per byte, low nibble first (by hand)."""
    nibbles = x.astype(np.int8).ravel().view(np.uint8) & 0x0F
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8).tobytes()


def physical(x: np.ndarray, major_to_minor: tuple[int, ...]) -> bytes:
    """The bytes of ``x`` laid out untiled in ``major_to_minor`` order (int4 packed)."""
    moved = np.ascontiguousarray(np.transpose(x, major_to_minor))
    if x.dtype == np.dtype(ml_dtypes.int4):
        return pack_nibbles(moved)
    return moved.tobytes()


def shape_text(dtype: Any, dims: tuple[int, ...], major_to_minor: tuple[int, ...]) -> str:
    etype = XLA_TYPE[np.dtype(dtype)]
    m2m = ",".join(str(d) for d in reversed(major_to_minor))
    extra = ":E(4)" if etype == "s4" else ""
    return f"{etype}[{','.join(map(str, dims))}]{{{m2m}{extra}}}" if dims else f"{etype}[]"


def shard_bytes(arr: jax.Array, device_bytes: Any) -> bytes:
    """A device buffer's bytes; for packed s4 with an odd element count the last byte's high
    nibble is padding, which the CPU client leaves undefined (seen to differ between replicas),
    so it is cleared here (see test_assemble_ignores_padding_bits)."""
    raw = device_bytes(arr)
    if np.dtype(arr.dtype) == np.dtype(ml_dtypes.int4) and arr.size % 2:
        raw = raw[:-1] + bytes([raw[-1] & 0x0F])
    return raw


def jax_map(named: NamedSharding, dims: tuple[int, ...]) -> dict[int, tuple[slice, ...]]:
    return {d.id: idx for d, idx in named.devices_indices_map(dims).items()}


@pytest.mark.parametrize("case", SPECS, ids=[spec_id(c) for c in SPECS])
def test_sharding_and_slices_equal_jax(
    case: tuple[str, tuple[Any, ...], tuple[int, ...]], meshes: dict[str, Mesh]
) -> None:
    mesh_name, spec, dims = case
    mesh = meshes[mesh_name]
    named = NamedSharding(mesh, P(*spec))
    ndim = len(dims)
    xla = named._to_xla_hlo_sharding(ndim)
    ours = xs.HloSharding.from_jax(named, ndim)
    assert str(ours) == str(xla)
    assert ours.to_proto() == xla.to_proto().SerializeToString()
    sizes, axes = tuple(mesh.axis_sizes), tuple(mesh.axis_names)
    assert xs.HloSharding.from_named(mesh, spec, ndim) == ours
    assert xs.HloSharding.from_named(dict(zip(axes, sizes, strict=True)), spec, ndim) == ours
    assert xs.HloSharding.from_named(list(zip(axes, sizes, strict=True)), spec, ndim) == ours
    expected = jax_map(named, dims)
    n = mesh.size  # the program's device count: a `{replicated}` text does not carry it
    assert ours.devices_indices_map(dims, n) == expected
    assert ours.devices_indices_map(shape_text(np.float32, dims, tuple(range(ndim))), n) == expected
    # the tile each device holds, the replicas, the holders of an index
    tile = tuple(
        (s.stop - s.start) if s.start is not None else dims[k] for k, s in enumerate(expected[0])
    )
    assert ours.tile_shape(dims, n) == tile == tuple(named.shard_shape(dims))
    if 0 in dims:
        return  # (an empty array's boxes are all empty: replicas and holders are moot)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for device, idx in sorted(expected.items()):
        groups.setdefault(tuple((s.start, s.stop) for s in idx), []).append(device)
    assert ours.replica_groups(dims, n) == sorted(tuple(g) for g in groups.values())
    last = tuple(d - 1 for d in dims)
    holders = tuple(
        sorted(
            d
            for d, idx in expected.items()
            if all(s.start is None or s.start <= i < s.stop for s, i in zip(idx, last, strict=True))
        )
    )
    assert ours.devices_holding(dims, last, n) == holders


CASES = [(c, d) for c in SPECS for d in DTYPES]


@pytest.mark.parametrize(
    ("case", "dtype"), CASES, ids=[f"{spec_id(c)}-{np.dtype(d).name}" for c, d in CASES]
)
def test_split_and_assemble_equal_device_buffers(
    case: tuple[str, tuple[Any, ...], tuple[int, ...]],
    dtype: Any,
    meshes: dict[str, Mesh],
    device_bytes: Any,
) -> None:
    mesh_name, spec, dims = case
    named = NamedSharding(meshes[mesh_name], P(*spec))
    x = values(dtype, dims)
    placed = jax.device_put(x, named)
    row_major = tuple(range(len(dims)))
    shape = shape_text(dtype, dims, row_major)
    global_bytes = physical(x, row_major)
    if np.dtype(dtype) != np.dtype(ml_dtypes.int4):
        assert global_bytes == np.ascontiguousarray(x).tobytes()
    sharding = xs.HloSharding.from_jax(named, len(dims))
    n = named.mesh.size
    shards = xs.split(global_bytes, shape, sharding, n)
    device_buffers = {
        s.device.id: shard_bytes(s.data, device_bytes) for s in placed.addressable_shards
    }
    assert sorted(shards) == sorted(device_buffers)
    for device, raw in device_buffers.items():
        assert shards[device].dtype == np.uint8
        assert shards[device].tobytes() == raw, f"device {device}"
    assembled = xs.assemble(device_buffers, shape, sharding, n)
    assert assembled.tobytes() == global_bytes
    buffers = xs.ShardBuffers(shape, sharding, n)
    assert buffers.devices == tuple(sorted(device_buffers))
    assert buffers.global_len == len(global_bytes)
    for s in placed.addressable_shards:
        assert buffers.shard_shape(s.device.id).dimensions == tuple(s.data.shape)
        assert buffers.shard_len(s.device.id) == len(device_buffers[s.device.id])
        # each shard's logical values, read back with its own shape
        logical = xs.to_numpy(device_buffers[s.device.id], buffers.shard_shape(s.device.id))
        np.testing.assert_array_equal(logical, np.asarray(s.data))


# Placements with permuted layouts (`Format`): the shards keep the global layout.
LAYOUT_CASES = [
    ("2x4", ("x", "y"), (4, 8), np.float32, (1, 0)),
    ("2x4", ("x", "y"), (4, 8), ml_dtypes.int4, (1, 0)),
    ("2x2x2", ("z", None, ("x", "y")), (4, 2, 8), np.float32, (1, 2, 0)),
    ("2x2x2", (None, "y", None), (6, 4, 3), np.int8, (2, 0, 1)),
    ("2x4", ("x", "y", None), (2, 4, 3), np.float64, (0, 2, 1)),
    ("8", ("x", None), (8, 6), ml_dtypes.bfloat16, (1, 0)),
]


@pytest.mark.parametrize(("mesh_name", "spec", "dims", "dtype", "m2m"), LAYOUT_CASES)
def test_split_with_layouts_equals_device_buffers(
    mesh_name: str,
    spec: tuple[Any, ...],
    dims: tuple[int, ...],
    dtype: Any,
    m2m: tuple[int, ...],
    meshes: dict[str, Mesh],
    device_bytes: Any,
) -> None:
    named = NamedSharding(meshes[mesh_name], P(*spec))
    x = values(dtype, dims)
    placed = jax.device_put(x, Format(Layout(major_to_minor=m2m), named))
    shape = shape_text(dtype, dims, m2m)
    global_bytes = physical(x, m2m)
    sharding = xs.HloSharding.from_jax(named, len(dims))
    shards = xs.split(global_bytes, shape, sharding)
    device_buffers = {
        s.device.id: shard_bytes(s.data, device_bytes) for s in placed.addressable_shards
    }
    assert {d: b.tobytes() for d, b in shards.items()} == device_buffers
    assert xs.assemble(device_buffers, shape, sharding).tobytes() == global_bytes


def test_assemble_accepts_any_buffers(meshes: dict[str, Mesh], device_bytes: Any) -> None:
    named = NamedSharding(meshes["2x4"], P("x", "y"))
    x = values(np.float32, (4, 8))
    placed = jax.device_put(x, named)
    raw = {s.device.id: device_bytes(s.data) for s in placed.addressable_shards}
    shape = "f32[4,8]"
    forms = [
        raw,
        {d: bytearray(b) for d, b in raw.items()},
        {d: memoryview(b) for d, b in raw.items()},
        {d: np.asarray(s.data) for d, s in ((s.device.id, s) for s in placed.addressable_shards)},
    ]
    for form in forms:
        out = xs.assemble(form, shape, "{devices=[2,4]<=[8]}")
        assert out.tobytes() == x.tobytes()
    out = xs.ShardBuffers(shape, xs.HloSharding.from_jax(named, 2)).assemble(raw, threads=2)
    assert out.tobytes() == x.tobytes()


# ---- assemble's refusals ---------------------------------------------------------------------


@pytest.fixture
def placed_2x4_rows(
    meshes: dict[str, Mesh], device_bytes: Any
) -> tuple[dict[int, bytes], str, str]:
    """f32[4,6] over 2x4 with rows split over x, replicated over y."""
    named = NamedSharding(meshes["2x4"], P("x", None))
    placed = jax.device_put(values(np.float32, (4, 6)), named)
    raw = {s.device.id: device_bytes(s.data) for s in placed.addressable_shards}
    return raw, "f32[4,6]", str(named._to_xla_hlo_sharding(2))


def test_assemble_missing_buffer(placed_2x4_rows: tuple[dict[int, bytes], str, str]) -> None:
    raw, shape, sharding = placed_2x4_rows
    del raw[5]
    with pytest.raises(xs.Error, match=r"\b5\b") as info:
        xs.assemble(raw, shape, sharding)
    assert "no buffer" in str(info.value)


def test_assemble_extra_buffer(placed_2x4_rows: tuple[dict[int, bytes], str, str]) -> None:
    raw, shape, sharding = placed_2x4_rows
    raw[8] = raw[0]
    with pytest.raises(xs.Error, match=r"\b8\b"):
        xs.assemble(raw, shape, sharding)


def test_assemble_mis_sized_buffer(placed_2x4_rows: tuple[dict[int, bytes], str, str]) -> None:
    raw, shape, sharding = placed_2x4_rows
    raw[3] = raw[3][:-1]
    with pytest.raises(xs.Error, match=r"\b3\b"):
        xs.assemble(raw, shape, sharding)
    raw[3] = raw[2] + b"\x00"
    with pytest.raises(xs.Error, match=r"\b3\b"):
        xs.assemble(raw, shape, sharding)


def test_assemble_differing_replicas(placed_2x4_rows: tuple[dict[int, bytes], str, str]) -> None:
    raw, shape, sharding = placed_2x4_rows
    changed = bytearray(raw[6])
    changed[7] ^= 0x40
    raw[6] = bytes(changed)
    with pytest.raises(xs.Error, match=r"\b6\b") as info:
        xs.assemble(raw, shape, sharding)
    # device 6's box is device 4's (x=1): the lowest device of the box is named too
    assert "4" in str(info.value)


def test_assemble_ignores_padding_bits() -> None:
    """Replicas that hold the same elements are equal, whatever their padding bits: JAX's CPU
    client leaves the high nibble of an odd-length packed s4 buffer undefined (observed: 0x1d on
    one replica, 0x0d on the others, for `jax.device_put` of an s4[3,5] with a `Format` layout
    replicated over 8 devices), so assembling real buffers must not compare it."""
    shape = "s4[3]{0:E(4)}"
    shards = {0: bytes([0x21, 0x03]), 1: bytes([0x21, 0x53])}
    out = xs.assemble(shards, shape, "{replicated}", 2)
    assert xs.to_numpy(out, shape).tolist() == [1, 2, 3]


def test_assemble_still_compares_elements() -> None:
    shards = {0: bytes([0x21, 0x03]), 1: bytes([0x21, 0x04])}
    with pytest.raises(xs.Error, match=r"\b1\b"):
        xs.assemble(shards, "s4[3]{0:E(4)}", "{replicated}", 2)


def test_split_refuses_a_wrong_global_length() -> None:
    with pytest.raises(xs.Error) as info:
        xs.split(b"\x00" * 95, "f32[4,6]", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
    assert "95" in str(info.value) or "96" in str(info.value)


def test_shard_buffers_unknown_device() -> None:
    buffers = xs.ShardBuffers("f32[4,2]", "{devices=[2,1]<=[2]}")
    with pytest.raises(xs.Error) as info:
        buffers.shard_shape(7)
    assert "7" in str(info.value)
    with pytest.raises(xs.Error):
        buffers.shard_len(7)


def test_replicated_needs_num_devices() -> None:
    with pytest.raises(xs.Error):
        xs.split(np.zeros(4, np.float32), "f32[4]", "{replicated}")
    shards = xs.split(np.arange(4, dtype=np.float32), "f32[4]", "{replicated}", 3)
    assert sorted(shards) == [0, 1, 2]
    assert all(b.tobytes() == np.arange(4, dtype=np.float32).tobytes() for b in shards.values())
    assert xs.HloSharding.parse("{replicated}").devices_indices_map((4,), 3) == {
        d: (slice(None),) for d in range(3)
    }


# ---- sharding text and bytes against XLA's HloSharding ----------------------------------------

SHARDING_TEXTS = [
    "{replicated}",
    "{maximal device=3}",
    "{manual}",
    "{devices=[2,4]<=[8]}",
    "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
    "{devices=[4,2]<=[2,4]T(1,0)}",
    "{devices=[2,2,2]<=[2,2,2]T(2,0,1)}",
    "{devices=[2,2]3,1,2,0}",
    "{devices=[2,1,2]0,3,1,2 last_tile_dim_replicate}",
    "{devices=[2,2,2]<=[8] last_tile_dims={manual}}",
    "{devices=[1,2,2,2]<=[8] last_tile_dims={manual, replicated}}",
    "{{replicated}, {devices=[2]<=[2]}, {maximal device=0}}",
    "{unknown}",
    # XLA's named (V3) shardings: a mesh and the axes of each dimension.
    '{mesh["x"=2,"y"=4], [{"y"}, {"x"}]}',
    '{mesh["x"=2,"y"=4], [{"x"}, {}]}',
    '{mesh["x"=2,"y"=2,"z"=2], [{"z", "x"}, {}, {"y"}]}',
    '{mesh["a"=8], [{}, {"a"}]}',
    "{maximal_mesh[device_id=5]}",
]


@pytest.mark.parametrize("text", SHARDING_TEXTS)
def test_sharding_text_and_bytes_equal_xla(text: str) -> None:
    xla = xc.HloSharding.from_string(text)
    ours = xs.HloSharding.parse(text)
    assert str(ours) == str(xla)
    xla_bytes = xla.to_proto().SerializeToString()
    assert ours.to_proto() == xla_bytes
    assert xs.HloSharding.from_proto(xla_bytes) == ours
    assert pickle.loads(pickle.dumps(ours)) == ours
    if ours.kind == "named":
        assert str(ours.to_v2()) == str(xla.v3_to_v2_sharding())
        return
    if ours.kind == "tuple":
        assert ours.tuple_elements is not None
        assert [str(e) for e in ours.tuple_elements] == [str(e) for e in xla.tuple_elements()]
        return
    assert ours.tuple_elements is None
    if xla.is_tiled():
        assert ours.kind == "tiled"
        assert ours.tile_assignment_devices == tuple(xla.tile_assignment_devices())
        assert ours.replicate_on_last_tile_dim == xla.replicate_on_last_tile_dim()
    elif xla.is_replicated():
        assert ours.kind == "replicated"
    elif xla.is_maximal():
        assert ours.kind == "maximal"
        assert ours.device == 3
    elif xla.is_manual():
        assert ours.kind == "manual"


# (XLA's `is_tiled` holds for tuple and named shardings too, whose tile assignment CHECK-fails in
# XLA.)
TILED_TEXTS = [
    t
    for t in SHARDING_TEXTS
    if not t.startswith(("{{", "{mesh", "{maximal_mesh"))
    and xc.HloSharding.from_string(t).is_tiled()
]


@pytest.mark.parametrize("text", TILED_TEXTS)
def test_tile_assignment_dimensions_equal_xla(text: str) -> None:
    """XLA's tile assignment dimensions include the replicated and manual subgroup dimensions
    (their product is the device count, as `tile_assignment_devices` lists them)."""
    xla = xc.HloSharding.from_string(text)
    ours = xs.HloSharding.parse(text)
    assert ours.tile_assignment_dimensions == tuple(xla.tile_assignment_dimensions())
    assert ours.tile_assignment_devices is not None
    assert math.prod(ours.tile_assignment_dimensions) == len(ours.tile_assignment_devices)


@pytest.mark.parametrize(
    "text", ["{devices=[2,2]<=[3]}", "{devices=[2]0,0}", "{maximal}", "{devices="]
)
def test_bad_sharding_text(text: str) -> None:
    with pytest.raises(xs.Error) as info:
        xs.HloSharding.parse(text)
    assert isinstance(info.value, xs.ParseError | xs.ValidationError)
    assert info.value.kind


def test_from_named_errors() -> None:
    with pytest.raises(xs.Error):
        xs.HloSharding.from_named({"x": 2}, ("x", None, None), 2)
    with pytest.raises(xs.Error):
        xs.HloSharding.from_named({"x": 2}, ("q",), 1)
    with pytest.raises(xs.Error):
        xs.HloSharding.from_named({"x": 2}, (3,), 1)


PERMUTED = [3, 2, 1, 0, 7, 6, 5, 4]


@pytest.mark.parametrize("spec", [("x", "y"), ("y",), (None, "x")])
def test_from_named_on_a_permuted_mesh(spec: tuple[Any, ...], device_bytes: Any) -> None:
    """A mesh whose devices are not in id order: `from_named` takes the mesh's device ids, so its
    slices are keyed by the ids JAX's `devices_indices_map` uses."""
    mesh = Mesh(np.array(jax.devices())[PERMUTED].reshape(2, 4), ("x", "y"))
    named = NamedSharding(mesh, P(*spec))
    ours = xs.HloSharding.from_named(mesh, spec, 2)
    assert ours.devices_indices_map((4, 8)) == jax_map(named, (4, 8))
    explicit = xs.HloSharding.from_named({"x": 2, "y": 4}, spec, 2, device_ids=PERMUTED)
    assert explicit == ours
    x = values(np.float32, (4, 8))
    placed = jax.device_put(x, named)
    raw = {s.device.id: device_bytes(s.data) for s in placed.addressable_shards}
    shards = xs.split(x, "f32[4,8]", ours)
    assert {d: b.tobytes() for d, b in shards.items()} == raw


@pytest.mark.parametrize("spec", [("x", "y"), ("y",), (None, "x")])
def test_from_jax_on_a_permuted_mesh(spec: tuple[Any, ...], device_bytes: Any) -> None:
    """`from_jax` of a NamedSharding on a permuted mesh: its slices and shards must be keyed by
    device id as JAX's `devices_indices_map` and `addressable_shards` are. (XLA's
    `_to_xla_hlo_sharding` numbers the mesh's positions, not device ids: `{devices=[2,4]<=[8]}`
    for this mesh, whose position 0 is device 3.)"""
    mesh = Mesh(np.array(jax.devices())[PERMUTED].reshape(2, 4), ("x", "y"))
    named = NamedSharding(mesh, P(*spec))
    ours = xs.HloSharding.from_jax(named, 2)
    assert ours.devices_indices_map((4, 8)) == jax_map(named, (4, 8))
    x = values(np.float32, (4, 8))
    placed = jax.device_put(x, named)
    raw = {s.device.id: device_bytes(s.data) for s in placed.addressable_shards}
    shards = xs.split(x, "f32[4,8]", ours)
    assert {d: b.tobytes() for d, b in shards.items()} == raw


# ---- uneven shardings: JAX refuses them; an independent reference ----------------------------


def reference_map(
    tiles: tuple[int, ...], devices: tuple[int, ...], replicate_last: bool, dims: tuple[int, ...]
) -> dict[int, tuple[slice, ...]]:
    """XLA's rule written out: dimension k is cut in tiles of ceil(n / tiles[k]); the tile at
    position i holds [min(i * size, n), min((i + 1) * size, n)); devices with an empty box hold
    nothing; dimensions with one tile are `slice(None)`."""
    out = {}
    data_tiles = tiles[:-1] if replicate_last else tiles
    for position, device in zip(
        itertools.product(*(range(t) for t in tiles)), devices, strict=True
    ):
        box = []
        for k, n in enumerate(dims):
            size = -(-n // data_tiles[k])
            box.append((min(position[k] * size, n), min((position[k] + 1) * size, n)))
        if any(stop == start for start, stop in box):
            continue
        out[device] = tuple(
            slice(None) if data_tiles[k] == 1 else slice(start, stop)
            for k, (start, stop) in enumerate(box)
        )
    return out


UNEVEN = [
    ("{devices=[2,4]<=[8]}", (5, 7)),
    ("{devices=[4]<=[4]}", (5,)),
    ("{devices=[8]<=[8]}", (3,)),
    ("{devices=[4,1,2]<=[8] last_tile_dim_replicate}", (6, 3)),
    ("{devices=[2,2,2]<=[2,2,2]T(2,0,1)}", (3, 5, 1)),
    ("{devices=[3,2]<=[6]}", (7, 3)),
    ("{devices=[2,3]5,4,3,2,1,0}", (1, 4)),
]


@pytest.mark.parametrize(("text", "dims"), UNEVEN)
def test_uneven_slices(text: str, dims: tuple[int, ...]) -> None:
    sharding = xs.HloSharding.parse(text)
    xla = xc.HloSharding.from_string(text)
    tiles = tuple(xla.tile_assignment_dimensions())
    devices = tuple(xla.tile_assignment_devices())
    expected = reference_map(tiles, devices, xla.replicate_on_last_tile_dim(), dims)
    got = sharding.devices_indices_map(dims)
    assert got == expected
    # every element is held by exactly one device of each replica set
    replicas = tiles[-1] if xla.replicate_on_last_tile_dim() else 1
    count = np.zeros(dims, np.int64)
    for idx in got.values():
        count[idx] += 1
    assert (count == replicas).all()
    # the same slices from the shards: split then assemble is the identity
    x = np.arange(math.prod(dims), dtype=np.int16).reshape(dims)
    shape = f"s16[{','.join(map(str, dims))}]"
    shards = xs.split(x, shape, sharding)
    for device, idx in got.items():
        assert shards[device].view(np.int16).tolist() == x[idx].ravel().tolist()
    assert xs.assemble(shards, shape, sharding).tobytes() == x.tobytes()
    # padded to the tile: each buffer is a whole tile, the box at its origin, zeros past it
    tile = sharding.tile_shape(dims)
    padded = xs.split(x, shape, sharding, padded_to_tile=True)
    for device, idx in got.items():
        buf = padded[device].view(np.int16).reshape(tile)
        box = x[idx]
        region = tuple(slice(0, n) for n in box.shape)
        np.testing.assert_array_equal(buf[region], box)
        rest = buf.copy()
        rest[region] = 0
        assert not rest.any()
    assert xs.assemble(padded, shape, sharding, padded_to_tile=True).tobytes() == x.tobytes()


def test_mesh_over_some_devices(device_bytes: Any) -> None:
    """A mesh of devices 4..7: JAX's slices and shards are keyed by those ids; `from_named`
    (which reads the mesh's device ids) and `from_jax` must key them the same way."""
    mesh = Mesh(np.array(jax.devices()[4:]).reshape(2, 2), ("x", "y"))
    named = NamedSharding(mesh, P("x", "y"))
    expected = jax_map(named, (2, 4))
    assert sorted(expected) == [4, 5, 6, 7]
    x = values(np.float32, (2, 4))
    placed = jax.device_put(x, named)
    raw = {s.device.id: device_bytes(s.data) for s in placed.addressable_shards}
    from_named = xs.HloSharding.from_named(mesh, ("x", "y"), 2)
    assert from_named.devices_indices_map((2, 4)) == expected
    assert {d: b.tobytes() for d, b in xs.split(x, "f32[2,4]", from_named).items()} == raw
    from_jax = xs.HloSharding.from_jax(named, 2)
    assert from_jax.devices_indices_map((2, 4)) == expected


def test_named_sharding_places_as_its_v2_form() -> None:
    named = xs.HloSharding.parse('{mesh["x"=2,"y"=4], [{"y"}, {"x"}]}')
    assert named.devices_indices_map((8, 4)) == named.to_v2().devices_indices_map((8, 4))
    global_bytes = np.arange(32, dtype=np.float32).reshape(8, 4)
    shards = xs.split(global_bytes, "f32[8,4]", named)
    assert (xs.assemble(shards, "f32[8,4]", named.to_v2()) == xs.as_bytes(global_bytes)).all()
