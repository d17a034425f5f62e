"""Property tests (hypothesis) of relayout round trips over tiled and sub-byte layouts, which the
CPU client cannot lay out; and the physical bytes against a reference written here from XLA's
tiled-layout rules (`tiled_layout.md`): permute to physical order, apply each tile to the last
entries of the current shape (partial tiles padded with zeros), linearize row-major, pack
sub-byte elements low bits first."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import xla_shape as xs

# element type -> (numpy dtype, bits per element in memory: E(n) for the sub-byte types)
TYPES: dict[str, tuple[Any, int]] = {
    "f32": (np.float32, 0),
    "bf16": (ml_dtypes.bfloat16, 0),
    "s8": (np.int8, 0),
    "s4": (ml_dtypes.int4, 4),
    "u4": (ml_dtypes.uint4, 4),
    "s2": (ml_dtypes.int2, 2),
    "pred": (np.bool_, 0),
    "f8e4m3fn": (ml_dtypes.float8_e4m3fn, 0),
    "f16": (np.float16, 0),
}

TILINGS: list[tuple[tuple[int, ...], ...]] = [
    (),
    ((2, 1),),
    ((4, 2),),
    ((8, 128),),
    ((8, 128), (2, 1)),
    ((8, 128), (4, 1)),
    ((128,),),
    ((2,),),
    ((4, 2), (2, 1)),
    ((3, 5),),
]

SETTINGS = settings(max_examples=50, deadline=None)


def random_values(etype: str, dims: tuple[int, ...], seed: int) -> np.ndarray:
    """Random values of every bit pattern the type's numpy dtype holds canonically (NaNs
    included: the comparisons are bitwise)."""
    rng = np.random.default_rng(seed)
    dtype, bits = TYPES[etype]
    n = math.prod(dims)
    if etype == "pred":
        return rng.integers(0, 2, n).astype(np.bool_).reshape(dims)
    if bits:
        info = ml_dtypes.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max) + 1, n).astype(dtype).reshape(dims)
    itemsize = np.dtype(dtype).itemsize
    raw = rng.integers(0, 256, n * itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(dims)


def layout_text(m2m: tuple[int, ...], tiles: tuple[tuple[int, ...], ...], bits: int) -> str:
    attrs = "".join("(" + ",".join(map(str, t)) + ")" for t in tiles)
    attrs = ("T" + attrs if attrs else "") + (f"E({bits})" if bits else "")
    return "{" + ",".join(map(str, m2m)) + (":" + attrs if attrs else "") + "}"


def make_shape(etype: str, dims: tuple[int, ...], m2m: tuple[int, ...], tiles: Any) -> xs.Shape:
    bits = TYPES[etype][1]
    return xs.Shape.parse(f"{etype}[{','.join(map(str, dims))}]{layout_text(m2m, tiles, bits)}")


def unsigned(x: np.ndarray, bits: int) -> np.ndarray:
    """The values' memory bits as unsigned integers (the low ``bits`` for sub-byte types)."""
    if bits:
        return x.view(np.uint8) & np.uint8((1 << bits) - 1)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def reference_bytes(
    x: np.ndarray, m2m: tuple[int, ...], tiles: tuple[tuple[int, ...], ...], bits: int
) -> bytes:
    a = unsigned(np.ascontiguousarray(x), bits)
    a = np.transpose(a, tuple(reversed(m2m)))  # physical order, most major first
    for tile in tiles:
        k = len(tile)
        if k > a.ndim:  # rank extension
            a = a.reshape((1,) * (k - a.ndim) + a.shape)
        lead = a.shape[: a.ndim - k]
        sizes = a.shape[a.ndim - k :]
        padded = [-(-s // t) * t for s, t in zip(sizes, tile, strict=True)]
        a = np.pad(
            a, [(0, 0)] * len(lead) + [(0, p - s) for p, s in zip(padded, sizes, strict=True)]
        )
        a = a.reshape(
            lead + tuple(v for p, t in zip(padded, tile, strict=True) for v in (p // t, t))
        )
        n = len(lead)
        a = a.transpose(
            list(range(n)) + [n + 2 * i for i in range(k)] + [n + 2 * i + 1 for i in range(k)]
        )
    flat = np.ascontiguousarray(a).ravel()
    if not bits:
        return flat.tobytes()
    per = 8 // bits
    flat = np.concatenate([flat, np.zeros(-flat.size % per, np.uint8)]).reshape(-1, per)
    packed = np.zeros(flat.shape[0], np.uint8)
    for j in range(per):
        packed |= (flat[:, j] << (j * bits)).astype(np.uint8)
    return packed.tobytes()


@st.composite
def layouts(draw: st.DrawFn, rank: int) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    m2m = tuple(draw(st.permutations(range(rank))))
    tiles = draw(st.sampled_from(TILINGS))
    return m2m, tiles


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    etype = draw(st.sampled_from(sorted(TYPES)))
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    first = draw(layouts(rank))
    second = draw(layouts(rank))
    seed = draw(st.integers(0, 2**32 - 1))
    return {"etype": etype, "dims": dims, "first": first, "second": second, "seed": seed}


@SETTINGS
@given(cases())
def test_from_numpy_then_to_numpy(case: dict[str, Any]) -> None:
    etype, dims, (m2m, tiles) = case["etype"], case["dims"], case["first"]
    shape = make_shape(etype, dims, m2m, tiles)
    x = random_values(etype, dims, case["seed"])
    physical = xs.from_numpy(x, shape)
    assert physical.dtype == np.uint8
    assert physical.size == shape.storage_bytes
    back = xs.to_numpy(physical, shape)
    assert back.dtype == x.dtype
    assert back.shape == x.shape
    assert back.tobytes() == x.tobytes()


@SETTINGS
@given(cases())
def test_physical_bytes_equal_the_reference(case: dict[str, Any]) -> None:
    etype, dims, (m2m, tiles) = case["etype"], case["dims"], case["first"]
    shape = make_shape(etype, dims, m2m, tiles)
    x = random_values(etype, dims, case["seed"])
    expected = reference_bytes(x, m2m, tiles, TYPES[etype][1])
    assert shape.storage_bytes == len(expected)
    assert xs.from_numpy(x, shape).tobytes() == expected
    assert xs.to_numpy(expected, shape).tobytes() == x.tobytes()


@SETTINGS
@given(cases())
def test_relayout_round_trip(case: dict[str, Any]) -> None:
    etype, dims = case["etype"], case["dims"]
    s1 = make_shape(etype, dims, *case["first"])
    s2 = make_shape(etype, dims, *case["second"])
    x = random_values(etype, dims, case["seed"])
    b = xs.from_numpy(x, s1)
    there = xs.relayout(b, s1, s2)
    assert there.size == s2.storage_bytes
    assert xs.relayout(there, s2, s1).tobytes() == b.tobytes()
    assert xs.to_numpy(there, s2).tobytes() == x.tobytes()
    # the same from a plan, into a caller's buffer
    plan = xs.RelayoutPlan(s1, s2)
    assert (plan.src_len, plan.dst_len) == (s1.storage_bytes, s2.storage_bytes)
    out = np.full(plan.dst_len, 0xAB, np.uint8)
    assert plan.run(b, out) is out
    assert out.tobytes() == there.tobytes()
    assert there.tobytes() == xs.from_numpy(x, s2).tobytes()


@SETTINGS
@given(
    st.sampled_from(["f32", "bf16", "s8", "f16", "pred", "f8e4m3fn"]),
    st.integers(1, 4).flatmap(
        lambda r: st.tuples(
            st.lists(st.integers(0, 7), min_size=r, max_size=r).map(tuple),
            st.permutations(range(r)).map(tuple),
        )
    ),
    st.integers(0, 2**32 - 1),
)
def test_untiled_bytes_are_the_transpose(
    etype: str, dims_and_m2m: tuple[tuple[int, ...], tuple[int, ...]], seed: int
) -> None:
    """An untiled layout's bytes are numpy's transpose to ``major_to_minor`` (zero-sized
    dimensions included)."""
    dims, m2m = dims_and_m2m
    shape = make_shape(etype, dims, m2m, ())
    x = random_values(etype, dims, seed)
    major_to_minor = tuple(reversed(m2m))
    assert shape.layout is not None
    assert shape.layout.major_to_minor == major_to_minor
    expected = np.transpose(x, major_to_minor).tobytes()
    assert xs.from_numpy(x, shape).tobytes() == expected
    assert xs.to_numpy(expected, shape).tobytes() == x.tobytes()
    row_major = make_shape(etype, dims, tuple(reversed(range(len(dims)))), ())
    assert xs.relayout(x, row_major, shape).tobytes() == expected


@SETTINGS
@given(cases(), st.sampled_from([1, 2, 3]))
def test_threads_do_not_change_the_bytes(case: dict[str, Any], threads: int) -> None:
    etype, dims = case["etype"], case["dims"]
    s1 = make_shape(etype, dims, *case["first"])
    s2 = make_shape(etype, dims, *case["second"])
    b = xs.from_numpy(random_values(etype, dims, case["seed"]), s1)
    assert xs.relayout(b, s1, s2, threads=threads).tobytes() == xs.relayout(b, s1, s2).tobytes()


def test_reference_matches_the_worked_example() -> None:
    """`f32[3,5]{1,0:T(2,2)}`: element (2,3) is slot 17 (tiled_layout.md), 24 slots in all."""
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    ref = np.frombuffer(reference_bytes(x, (1, 0), ((2, 2),), 0), np.float32)
    assert ref.size == 24
    assert ref[17] == x[2, 3]
    shape = xs.Shape.parse("f32[3,5]{1,0:T(2,2)}")
    assert shape.slot((2, 3)) == 17
    assert xs.from_numpy(x, shape).tobytes() == ref.tobytes()


NOTABLE = [
    ("bf16", (8, 256), (1, 0), ((8, 128), (2, 1))),
    ("bf16", (13, 130), (0, 1), ((8, 128), (2, 1))),
    ("bf16", (2, 8, 128), (2, 1, 0), ((8, 128), (2, 1))),
    ("bf16", (2048,), (0,), ((1024,), (128,), (2, 1))),
    ("f32", (100,), (0,), ((8, 128),)),
    ("f32", (9, 3, 130), (2, 0, 1), ((8, 128),)),
    ("s8", (33, 129), (1, 0), ((8, 128), (4, 1))),
    ("s4", (17, 130), (1, 0), ((8, 128), (2, 1))),
    ("u4", (5, 7), (0, 1), ()),
    ("s2", (3, 5, 7), (1, 2, 0), ((4, 2),)),
    ("f8e4m3fn", (16, 256), (1, 0), ((8, 128), (4, 1))),
    ("pred", (9, 5), (0, 1), ((8, 128),)),
]


def test_notable_layouts_equal_the_reference() -> None:
    for etype, dims, m2m, tiles in NOTABLE:
        shape = make_shape(etype, dims, m2m, tiles)
        x = random_values(etype, dims, seed=sum(dims))
        expected = reference_bytes(x, m2m, tiles, TYPES[etype][1])
        assert shape.storage_bytes == len(expected), str(shape)
        physical = xs.from_numpy(x, shape)
        assert physical.tobytes() == expected, str(shape)
        assert xs.to_numpy(physical, shape).tobytes() == x.tobytes(), str(shape)
        row_major = make_shape(etype, dims, tuple(reversed(range(len(dims)))), ())
        there = xs.relayout(xs.from_numpy(x, row_major), row_major, shape)
        assert there.tobytes() == expected, str(shape)


@SETTINGS
@given(cases(), st.sampled_from([2, 3, 4, 64]))
def test_tail_padding(case: dict[str, Any], alignment: int) -> None:
    """`L(a)`: the slot count rounded up to a multiple of ``a``, the extra slots zero."""
    etype, dims, (m2m, tiles) = case["etype"], case["dims"], case["first"]
    bits = TYPES[etype][1]
    text = layout_text(m2m, tiles, bits)
    padded_text = text[:-1] + ("" if ":" in text else ":")
    # XLA's attribute order: T, L, E
    if "E(" in padded_text:
        padded_text = padded_text.replace("E(", f"L({alignment})E(")
    else:
        padded_text += f"L({alignment})"
    shape = xs.Shape.parse(f"{etype}[{','.join(map(str, dims))}]{padded_text}}}")
    assert shape.layout is not None
    assert shape.layout.tail_padding_alignment_in_elements == alignment
    x = random_values(etype, dims, case["seed"])
    plain = reference_bytes(x, m2m, tiles, bits)
    width = bits or np.dtype(TYPES[etype][0]).itemsize * 8
    slots = math.prod(reference_shape(dims, m2m, tiles))
    assert len(plain) == -(-slots * width // 8)
    padded_slots = -(-slots // alignment) * alignment
    expected_len = -(-padded_slots * width // 8)
    assert shape.storage_bytes == expected_len
    physical = xs.from_numpy(x, shape)
    assert physical.tobytes() == plain + bytes(expected_len - len(plain))
    assert xs.to_numpy(physical, shape).tobytes() == x.tobytes()


def reference_shape(
    dims: tuple[int, ...], m2m: tuple[int, ...], tiles: tuple[tuple[int, ...], ...]
) -> tuple[int, ...]:
    """The final shape of the tiling (its product is the slot count)."""
    shape = tuple(dims[d] for d in reversed(m2m))
    for tile in tiles:
        k = len(tile)
        if k > len(shape):
            shape = (1,) * (k - len(shape)) + shape
        lead, sizes = shape[: len(shape) - k], shape[len(shape) - k :]
        shape = lead + tuple(-(-s // t) for s, t in zip(sizes, tile, strict=True)) + tile
    return shape
