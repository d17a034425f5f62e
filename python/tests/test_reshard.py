"""`xs.reshard` and `xs.ReshardPlan` against JAX on 8 CPU devices: an array placed with
`jax.device_put(x, sharding_a)`, moved with `jax.device_put(arr_a, sharding_b)`, and the raw
device buffers of both compared with the reshard of the first (issue 39)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from jax.experimental.layout import Format, Layout
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import xla_shape as xs

DEVICES = jax.devices()

# Meshes over all 8 devices, over subsets, and with device orders that are not the ids'.
MESH_DEVICES: dict[str, tuple[list[int], tuple[int, ...], tuple[str, ...]]] = {
    "8": (list(range(8)), (8,), ("x",)),
    "2x4": (list(range(8)), (2, 4), ("x", "y")),
    "4x2": (list(range(8)), (4, 2), ("x", "y")),
    "2x2x2": (list(range(8)), (2, 2, 2), ("x", "y", "z")),
    "2x4p": ([3, 2, 1, 0, 7, 6, 5, 4], (2, 4), ("x", "y")),
    "8p": ([5, 0, 7, 2, 4, 1, 6, 3], (8,), ("x",)),
    "4": ([0, 1, 2, 3], (4,), ("x",)),
    "2x2": ([0, 1, 2, 3], (2, 2), ("x", "y")),
    "4r": ([7, 5, 3, 1], (4,), ("x",)),
    "2": ([6, 2], (2,), ("x",)),
}

XLA_TYPE = {
    np.dtype(np.float32): "f32",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.int8): "s8",
    np.dtype(ml_dtypes.int4): "s4",
    np.dtype(np.float64): "f64",
}

# (mesh A, spec A, mesh B, spec B, dims, dtype): device counts that change (8 → 4 → 2 → 8),
# permuted meshes, partial and full replication, a dimension over two mesh axes, 1 to 4 dimensions.
PAIRS: list[tuple[str, tuple[Any, ...], str, tuple[Any, ...], tuple[int, ...], Any]] = [
    ("2x4", ("x", "y"), "8", ("x", None), (16, 8), np.float32),
    ("2x4", ("x", "y"), "4", (None, "x"), (16, 8), np.float32),
    ("4", ("x", None), "2", (None, "x"), (8, 6), ml_dtypes.bfloat16),
    ("2", ("x",), "8", ("x",), (16,), np.float64),
    ("8", ("x",), "4r", ("x",), (32,), ml_dtypes.int4),
    ("2x4p", ("x", "y"), "2x4", ("y", "x"), (8, 8), np.float32),
    ("8p", (None, "x"), "2x2x2", ("z", ("x", "y")), (4, 16), ml_dtypes.bfloat16),
    ("2x4", ("x", None), "2x4", (None, "y"), (6, 8), np.int8),
    ("2x4", (None, None), "4x2", ("x", "y"), (8, 6), np.float64),
    ("4x2", ("x", "y"), "8", (None, None), (8, 6), ml_dtypes.int4),
    ("2x4", (("x", "y"), None), "2x2", ("y", "x"), (8, 6), np.float32),
    ("2x2x2", ("x", "y", "z"), "2x4", (None, ("y", "x"), None), (4, 8, 6), np.float32),
    ("2x2x2", ("x", None, "y", "z"), "4", (None, None, "x"), (2, 3, 4, 6), ml_dtypes.bfloat16),
    ("8", ("x", None, None, None), "2x2x2", (None, "x", "y", "z"), (8, 2, 2, 2), np.int8),
    ("4r", ("x", None), "8p", ("x", None), (8, 4), np.float64),
    ("2x2", ("x", "y"), "2x4p", (None, "y"), (4, 8), ml_dtypes.int4),
    ("2x4", ("y", None), "2x4p", (None, ("x", "y")), (4, 16), ml_dtypes.int4),
    ("2x4", ("x",), "2x4", (), (6, 3), ml_dtypes.int4),
]


def mesh(name: str) -> Mesh:
    ids, sizes, axes = MESH_DEVICES[name]
    return Mesh(np.array([DEVICES[i] for i in ids]).reshape(sizes), axes)


def values(dtype: Any, dims: tuple[int, ...]) -> np.ndarray:
    k = np.arange(math.prod(dims))
    if np.dtype(dtype) == np.dtype(ml_dtypes.int4):
        return ((k * 5 + 3) % 16 - 8).astype(ml_dtypes.int4).reshape(dims)
    if np.dtype(dtype) == np.dtype(np.int8):
        return ((k * 37 + 11) % 256 - 128).astype(np.int8).reshape(dims)
    return (k * 0.75 - 7).astype(dtype).reshape(dims)


def shape_text(dtype: Any, dims: tuple[int, ...], major_to_minor: tuple[int, ...]) -> str:
    etype = XLA_TYPE[np.dtype(dtype)]
    m2m = ",".join(str(d) for d in reversed(major_to_minor))
    extra = ":E(4)" if etype == "s4" else ""
    return f"{etype}[{','.join(map(str, dims))}]{{{m2m}{extra}}}"


def raw_shards(arr: jax.Array, device_bytes: Any) -> dict[int, bytes]:
    """Each device buffer's bytes; the spare high nibble of an odd-length s4 buffer is padding
    the CPU client leaves undefined, cleared here (the crate writes zero bits there)."""
    out = {}
    for s in arr.addressable_shards:
        raw = device_bytes(s.data)
        if np.dtype(arr.dtype) == np.dtype(ml_dtypes.int4) and s.data.size % 2:
            raw = raw[:-1] + bytes([raw[-1] & 0x0F])
        out[s.device.id] = raw
    return out


def count(named: NamedSharding, sharding: xs.HloSharding) -> int | None:
    """The device count a sharding needs: `{replicated}` names no devices (its mesh must then be
    devices 0..n-1); a tile assignment names its own, which may be any ids."""
    return named.mesh.size if sharding.kind == "replicated" else None


def pair_id(case: tuple[Any, ...]) -> str:
    a, sa, b, sb, dims, dtype = case
    text = f"{a}{sa}-{b}{sb}-{dims}-{np.dtype(dtype).name}"
    return text.replace(" ", "").replace("'", "")


@pytest.mark.parametrize("case", PAIRS, ids=[pair_id(c) for c in PAIRS])
def test_reshard_equals_jax_device_put(case: tuple[Any, ...], device_bytes: Any) -> None:
    mesh_a, spec_a, mesh_b, spec_b, dims, dtype = case
    named_a = NamedSharding(mesh(mesh_a), P(*spec_a))
    named_b = NamedSharding(mesh(mesh_b), P(*spec_b))
    arr_a = jax.device_put(values(dtype, dims), named_a)
    arr_b = jax.device_put(arr_a, named_b)
    before, after = raw_shards(arr_a, device_bytes), raw_shards(arr_b, device_bytes)
    shape = shape_text(dtype, dims, tuple(range(len(dims))))
    sharding_a = xs.HloSharding.from_jax(named_a, len(dims))
    sharding_b = xs.HloSharding.from_jax(named_b, len(dims))
    counts = (count(named_a, sharding_a), count(named_b, sharding_b))
    ours = xs.reshard(before, shape, sharding_a, sharding_b, counts)
    assert sorted(ours) == sorted(after)
    for device, raw in after.items():
        assert ours[device].dtype == np.uint8
        assert ours[device].tobytes() == raw, f"device {device}"
    plan = xs.ReshardPlan(shape, sharding_a, sharding_b, counts)
    assert plan.sources == tuple(sorted(before))
    assert plan.targets == tuple(sorted(after))
    # Every element of every target comes from one transfer, read from a holder of its box.
    for device in plan.targets:
        got = [t for t in plan.transfers if t["target"] == device]
        assert sum(t["elements"] for t in got) == math.prod(arr_b.sharding.shard_shape(dims))
        for t in got:
            assert t["source"] in t["replicas"]
            assert t["source"] == device or device not in t["replicas"]


# Layouts (`Format`): a permuted source layout, and a target of another layout (`to_shape`). JAX
# changes a layout only between shardings of one device order (else "incompatible devices").
LAYOUT_PAIRS: list[tuple[Any, ...]] = [
    ("2x4", ("x", "y"), (1, 0), "8", ("x", None), (0, 1), (8, 16), np.float32),
    (
        "2x2x2",
        ("z", None, ("x", "y")),
        (1, 2, 0),
        "8",
        (None, "x", None),
        (0, 1, 2),
        (4, 8, 8),
        np.int8,
    ),
    ("8", (None, "x"), (0, 1), "2x4", ("y", None), (1, 0), (8, 16), ml_dtypes.bfloat16),
]


@pytest.mark.parametrize("case", LAYOUT_PAIRS)
def test_reshard_to_another_layout_equals_jax(case: tuple[Any, ...], device_bytes: Any) -> None:
    mesh_a, spec_a, m2m_a, mesh_b, spec_b, m2m_b, dims, dtype = case
    named_a = NamedSharding(mesh(mesh_a), P(*spec_a))
    named_b = NamedSharding(mesh(mesh_b), P(*spec_b))
    arr_a = jax.device_put(values(dtype, dims), Format(Layout(major_to_minor=m2m_a), named_a))
    arr_b = jax.device_put(arr_a, Format(Layout(major_to_minor=m2m_b), named_b))
    before, after = raw_shards(arr_a, device_bytes), raw_shards(arr_b, device_bytes)
    sharding_a = xs.HloSharding.from_jax(named_a, len(dims))
    sharding_b = xs.HloSharding.from_jax(named_b, len(dims))
    ours = xs.reshard(
        before,
        shape_text(dtype, dims, m2m_a),
        sharding_a,
        sharding_b,
        (count(named_a, sharding_a), count(named_b, sharding_b)),
        to_shape=shape_text(dtype, dims, m2m_b),
        threads=2,
    )
    assert {d: b.tobytes() for d, b in ours.items()} == after


def test_reshard_equals_split_of_assemble_with_tiles_and_padding() -> None:
    """Tiled and padded forms, which JAX's CPU client does not write: against split ∘ assemble."""
    shape, to_shape = "bf16[16,256]{1,0:T(8,128)(2,1)}", "bf16[16,256]{0,1}"
    a, b = "{devices=[2,2]<=[4]}", "{devices=[3,1,2]<=[6] last_tile_dim_replicate}"
    x = np.arange(16 * 256, dtype=np.uint16).astype(ml_dtypes.bfloat16).reshape(16, 256)
    global_a = xs.from_numpy(x, shape)
    shards = xs.split(global_a, shape, a, padded_to_tile=True)
    ours = xs.reshard(
        shards, shape, a, b, to_shape=to_shape, padded_to_tile=True, to_padded_to_tile=True
    )
    expected = xs.split(xs.from_numpy(x, to_shape), to_shape, b, padded_to_tile=True)
    assert {d: v.tobytes() for d, v in ours.items()} == {
        d: v.tobytes() for d, v in expected.items()
    }


def test_plan_transfers_as_data() -> None:
    rows = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    plan = xs.ReshardPlan("f32[8,4]", rows, "{devices=[4,1]4,5,6,7}")
    assert plan.sources == (0, 1, 2, 3)
    assert plan.targets == (4, 5, 6, 7)
    assert plan.source_len(0) == 64
    assert plan.target_len(7) == 32
    assert plan.transfers[1] == {
        "target": 5,
        "source": 1,
        "replicas": (0, 1),
        "global_start": (2, 0),
        "extent": (2, 4),
        "source_start": (2, 0),
        "target_start": (0, 0),
        "elements": 8,
        "bytes": 32,
    }
    x = np.arange(32, dtype=np.float32)
    shards = xs.split(x, "f32[8,4]", rows)
    only = plan.run(shards, devices=[6])
    assert list(only) == [6]
    assert only[6].view(np.float32).tolist() == x[16:24].tolist()


def test_bad_input_raises_naming_the_device() -> None:
    shape, b = "u8[4,2]", "{devices=[1,2]<=[2]}"
    a = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    shards = {d: bytes(v) for d, v in xs.split(bytes(range(8)), shape, a).items()}
    cases = [
        ({d: v for d, v in shards.items() if d != 0}, "no buffer for device 0"),
        ({**shards, 9: b"\0" * 4}, "device 9 is not in the sharding"),
        ({**shards, 2: b"\0" * 3}, "buffer of device 2 has 3 bytes, expected 4"),
        ({**shards, 3: b"\0" * 4}, "buffer of device 3 differs from its replica on device 2"),
    ]
    for given, message in cases:
        with pytest.raises(xs.Error, match=message) as raised:
            xs.reshard(given, shape, a, b)
        assert raised.value.kind == "ShardBuffer"
    with pytest.raises(xs.Error, match="dimensions\\[1\\] is 2 in the source and 3 in the target"):
        xs.reshard(shards, shape, a, b, to_shape="u8[4,3]")
    with pytest.raises(xs.Error, match="element type"):
        xs.ReshardPlan(shape, a, b, to_shape="s8[4,2]")
    with pytest.raises(xs.Error):
        xs.ReshardPlan(shape, a, "{replicated}")
    with pytest.raises(xs.Error):
        xs.ReshardPlan(shape, a, b, (4, 8))
    with pytest.raises(xs.Error, match="device 3 is not a target device"):
        xs.ReshardPlan(shape, a, b).run(shards, devices=[3])


def test_readme_resharding_block_runs() -> None:
    """The README's resharding example (8 devices to 4) runs as written."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = text.index("## Resharding a checkpoint")
    end = text.find("\n## ", start + 1)
    section = text[start:] if end < 0 else text[start:end]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md", "exec"), {})
