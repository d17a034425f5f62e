"""What the functions take and give: buffers of every kind (never copied), aligned uint8 results,
thread counts, the errors of bad buffers; and no input that crashes (random and mutated bytes and
text give results or an `xs.Error`, never a panic or anything else)."""

from __future__ import annotations

import pathlib
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xla_shape as xs

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "hlo_text"

X = np.arange(6, dtype=np.float32).reshape(2, 3)
X_COLUMN_MAJOR = np.ascontiguousarray(X.T).tobytes()  # f32[2,3]{0,1}


@pytest.mark.parametrize(
    "data",
    [
        X.tobytes(),
        bytearray(X.tobytes()),
        memoryview(X.tobytes()),
        X,
        X.ravel(),
        X.view(np.uint8),
        X.view(np.int32),
        np.frombuffer(X.tobytes(), np.uint8).reshape(4, 6),
    ],
    ids=["bytes", "bytearray", "memoryview", "array", "flat", "uint8", "int32", "uint8-2d"],
)
def test_buffers_of_every_kind(data: Any) -> None:
    out = xs.relayout(data, "f32[2,3]{1,0}", "f32[2,3]{0,1}")
    assert out.tobytes() == X_COLUMN_MAJOR
    np.testing.assert_array_equal(xs.to_numpy(data, "f32[2,3]"), X)


def test_fortran_arrays_are_read_in_memory_order() -> None:
    f = np.asfortranarray(X)
    assert not f.flags.c_contiguous
    # the memory of a Fortran array is the column-major layout
    np.testing.assert_array_equal(xs.to_numpy(f, "f32[2,3]{0,1}"), X)
    assert xs.relayout(f, "f32[2,3]{0,1}", "f32[2,3]{1,0}").tobytes() == X.tobytes()
    # from_numpy takes the logical array, whatever its memory order
    assert xs.from_numpy(f, "f32[2,3]{1,0}").tobytes() == X.tobytes()
    assert xs.from_numpy(X[:, ::-1][:, ::-1], "f32[2,3]{0,1}").tobytes() == X_COLUMN_MAJOR


def test_ml_dtypes_arrays() -> None:
    b = (np.arange(12) - 6).astype(ml_dtypes.bfloat16).reshape(3, 4)
    out = xs.relayout(b, "bf16[3,4]{1,0}", "bf16[3,4]{0,1}")
    assert out.tobytes() == np.ascontiguousarray(b.T).tobytes()
    i4 = np.array([[1, -2, 3], [-8, 7, 0]], ml_dtypes.int4)
    packed = xs.from_numpy(i4, "s4[2,3]{1,0:E(4)}")
    assert packed.tobytes() == bytes([0xE1, 0x83, 0x07])
    np.testing.assert_array_equal(xs.to_numpy(packed, "s4[2,3]{1,0:E(4)}"), i4)
    # an ml_dtypes array as a source of raw bytes: one element per byte
    np.testing.assert_array_equal(xs.to_numpy(i4, "s4[2,3]{1,0}"), i4)


@pytest.mark.parametrize(
    "data",
    [
        X[:, ::2],
        X.T.copy()[::2],
        np.arange(12, dtype=np.float32)[::2],
        memoryview(X.tobytes())[::2],
        [0.0] * 6,
        6,
        "abcdef",
        None,
    ],
    ids=["strided", "rows", "every-other", "memoryview-strided", "list", "int", "str", "none"],
)
def test_not_a_buffer(data: Any) -> None:
    with pytest.raises(xs.Error):
        xs.relayout(data, "f32[3]", "f32[3]")
    with pytest.raises(xs.Error):
        xs.as_bytes(data)


def test_python_errors_have_a_kind() -> None:
    """Every error carries ``kind`` (the package's promise), the ones raised by the Python layer
    too."""
    with pytest.raises(xs.Error) as info:
        xs.relayout(X[:, ::2], "f32[2,2]", "f32[2,2]")
    assert isinstance(info.value.kind, str)
    with pytest.raises(xs.Error) as info:
        xs.from_numpy(X.astype(np.float64), "f32[2,3]")
    assert isinstance(info.value.kind, str)
    with pytest.raises(xs.Error) as info:
        xs.from_numpy(X, "f32[3,2]")
    assert isinstance(info.value.kind, str)


@pytest.mark.parametrize("length", [0, 23, 25, 48])
def test_wrong_length_is_a_relayout_error(length: int) -> None:
    with pytest.raises(xs.Error) as info:
        xs.relayout(bytes(length), "f32[2,3]", "f32[2,3]{0,1}")
    assert info.value.kind == "Relayout"
    assert str(length) in str(info.value)
    assert "24" in str(info.value)
    with pytest.raises(xs.Error) as info:
        xs.to_numpy(bytes(length), "f32[2,3]")
    assert info.value.kind == "Relayout"


def test_mismatched_shapes() -> None:
    for src, dst in [("f32[2,3]", "f32[3,2]"), ("f32[2,3]", "bf16[2,3]"), ("f32[6]", "f32[2,3]")]:
        with pytest.raises(xs.Error) as info:
            xs.relayout(X, src, dst)
        assert info.value.kind == "Relayout"
    with pytest.raises(xs.Error):
        xs.from_numpy(X.astype(np.float64), "f32[2,3]")
    with pytest.raises(xs.Error):
        xs.from_numpy(X, "f32[3,2]")
    with pytest.raises(xs.Error) as info:
        xs.to_numpy(X, "(f32[2,3])")
    assert info.value.kind == "NotAnArray"
    with pytest.raises(xs.ParseError):
        xs.relayout(X, "f32[2,3", "f32[2,3]")


def test_plan_output_buffer() -> None:
    plan = xs.RelayoutPlan("f32[2,3]", "f32[2,3]{0,1}")
    out = np.zeros(24, np.uint8)
    assert plan.run(X, out) is out
    assert out.tobytes() == X_COLUMN_MAJOR
    with pytest.raises(xs.Error) as info:
        plan.run(X, np.zeros(23, np.uint8))
    assert info.value.kind == "Relayout"
    read_only = np.zeros(24, np.uint8)
    read_only.flags.writeable = False
    with pytest.raises(xs.Error):
        plan.run(X, read_only)
    with pytest.raises(xs.Error):
        plan.run(X, np.zeros(48, np.uint8)[::2])
    assert "box" in plan.explain()


def aligned(a: np.ndarray) -> bool:
    return a.ctypes.data % 64 == 0


def test_results_are_aligned_uint8() -> None:
    results = [
        xs.relayout(X, "f32[2,3]", "f32[2,3]{0,1}"),
        xs.relayout(X, "f32[2,3]", "f32[2,3]{0,1}", threads=1),
        xs.from_numpy(X, "f32[2,3]{1,0:T(2,2)}"),
        xs.RelayoutPlan("f32[2,3]", "f32[2,3]").run(X),
        xs.assemble({0: X[:1], 1: X[1:]}, "f32[2,3]", "{devices=[2,1]<=[2]}"),
        *xs.split(X, "f32[2,3]", "{devices=[2,1]<=[2]}").values(),
        *xs.ShardBuffers("f32[2,3]", "{devices=[1,3]<=[3]}").split(X).values(),
    ]
    for r in results:
        assert r.dtype == np.uint8
        assert r.ndim == 1
        assert r.flags.c_contiguous
        assert r.flags.writeable
        assert aligned(r)
    logical = xs.to_numpy(xs.from_numpy(X, "f32[2,3]{0,1}"), "f32[2,3]{0,1}")
    assert logical.dtype == np.float32
    assert aligned(logical)
    # many sizes: the alignment does not depend on where numpy's allocation landed
    for n in range(1, 40):
        assert aligned(xs.relayout(bytes(n), f"u8[{n}]", f"u8[{n}]"))


def test_threads() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**16, (96, 80, 33), dtype=np.uint16).view(ml_dtypes.bfloat16)
    src, dst = "bf16[96,80,33]{2,1,0}", "bf16[96,80,33]{0,2,1:T(8,128)(2,1)}"
    one = xs.relayout(a, src, dst, threads=1)
    two = xs.relayout(a, src, dst, threads=2)
    assert one.tobytes() == two.tobytes()
    assert one.tobytes() == xs.relayout(a, src, dst).tobytes()
    for threads in (1, 2):
        assert xs.to_numpy(one, dst, threads=threads).tobytes() == a.tobytes()
        assert xs.from_numpy(a, dst, threads=threads).tobytes() == one.tobytes()
    with pytest.raises(xs.Error) as info:
        xs.relayout(a, src, dst, threads=0)
    assert info.value.kind == "InvalidArgument"
    with pytest.raises(xs.Error):
        xs.split(X, "f32[2,3]", "{devices=[2,1]<=[2]}", threads=0)
    with pytest.raises(OverflowError):
        xs.relayout(a, src, dst, threads=-1)


def test_concurrent_calls_from_python_threads() -> None:
    """The kernels run with the GIL released: calls from several Python threads at once give
    the bytes each gives alone."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((64, 48, 40)).astype(np.float32) for _ in range(6)]
    src, dst = "f32[64,48,40]{2,1,0}", "f32[64,48,40]{0,2,1:T(8,128)}"
    alone = [xs.relayout(a, src, dst, threads=1).tobytes() for a in arrays]
    with ThreadPoolExecutor(max_workers=3) as pool:
        together = list(pool.map(lambda a: xs.relayout(a, src, dst).tobytes(), arrays * 3))
    assert together == alone * 3
    with ThreadPoolExecutor(max_workers=3) as pool:
        back = list(pool.map(lambda b: xs.to_numpy(b, dst), alone))
    for a, b in zip(arrays, back, strict=True):
        assert a.tobytes() == b.tobytes()


def test_as_bytes_shares_memory() -> None:
    arrays = [
        X,
        np.asfortranarray(X),
        np.arange(10, dtype=np.int16),
        np.zeros((3, 4), ml_dtypes.bfloat16),
        np.zeros(5, ml_dtypes.int4),
        np.zeros((2, 2), ml_dtypes.float8_e4m3fn),
        np.zeros(0, np.float32),
    ]
    for a in arrays:
        view = xs.as_bytes(a)
        assert view.dtype == np.uint8
        assert view.ndim == 1
        assert view.size == a.nbytes
        if a.size:
            assert np.shares_memory(view, a)
    data = bytearray(b"abcd")
    view = xs.as_bytes(data)
    data[0] = ord("z")
    assert view[0] == ord("z")


def test_large_input_is_not_copied() -> None:
    """A 16 MiB transpose: the result is numpy's, and the only new memory numpy allocates is the
    result itself (a copy of the input would double it)."""
    a = np.arange(2048 * 2048, dtype=np.float32).reshape(2048, 2048)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        out = xs.relayout(a, "f32[2048,2048]{1,0}", "f32[2048,2048]{0,1}")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # numpy's allocations are traced (the result's 16 MiB are seen), and nothing more
    assert peak - before >= a.nbytes
    assert peak - before < a.nbytes * 1.25
    np.testing.assert_array_equal(out.view(np.float32).reshape(2048, 2048), a.T)


# ---- no input crashes ---------------------------------------------------------------------------


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def only_errors(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Calls and returns the result; an exception other than `xs.Error` fails the test (a
    panic surfaces as pyo3's `PanicException`, a BaseException)."""
    error: xs.Error | None = None
    try:
        return call(*args, **kwargs)
    except xs.Error as e:
        error = e
    assert isinstance(error.kind, str)
    assert error.kind
    assert str(error)
    return None


SEEDS = [
    xs.Shape.parse("bf16[8,256]{1,0:T(8,128)(2,1)}").to_proto(),
    xs.Shape.parse("(f32[2,<=3]{0,1}, s4[5]{0:E(4)}, token[])").to_proto(),
    xs.Layout.parse("{0,1:T(8,128)(2,1)L(4)E(16)S(5)}").to_proto(),
    xs.HloSharding.parse("{devices=[2,1,4]<=[2,4]T(1,0) last_tile_dim_replicate}").to_proto(),
    xs.HloSharding.parse("{{maximal device=3}, {devices=[2]0,1}}").to_proto(),
]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert"]))
        k = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[k] ^= draw(st.integers(1, 255))
        elif op == "cut":
            del data[k : k + draw(st.integers(1, 8))]
        else:
            data[k:k] = draw(st.binary(min_size=1, max_size=4))
    return bytes(data)


@FUZZ
@given(st.one_of(st.binary(max_size=64), mutated(SEEDS)))
def test_proto_bytes_never_crash(data: bytes) -> None:
    shape = only_errors(xs.Shape.from_proto, data)
    if shape is not None:
        assert xs.Shape.from_proto(shape.to_proto()) == shape
        only_errors(lambda: (str(shape), shape.byte_size, shape.describe()))
        if shape.is_array:
            only_errors(lambda: shape.storage_bytes)
    layout = only_errors(xs.Layout.from_proto, data)
    if layout is not None:
        assert xs.Layout.from_proto(layout.to_proto()) == layout
    sharding = only_errors(xs.HloSharding.from_proto, data)
    if sharding is not None:
        assert xs.HloSharding.from_proto(sharding.to_proto()) == sharding
        only_errors(sharding.devices_indices_map, (4, 6), 8)


@FUZZ
@given(st.text(alphabet="fsbu0123468[]{}(),:TELS*<=x ptredkn", max_size=40))
def test_text_never_crashes(text: str) -> None:
    shape = only_errors(xs.Shape.parse, text)
    if shape is not None:
        assert xs.Shape.parse(str(shape)) == shape
    layout = only_errors(xs.Layout.parse, text)
    if layout is not None:
        assert xs.Layout.parse(str(layout)) == layout
    sharding = only_errors(xs.HloSharding.parse, text)
    if sharding is not None:
        assert xs.HloSharding.parse(str(sharding)) == sharding


MODULE_SEEDS = [p.read_bytes() for p in sorted(FIXTURES.glob("*.pb")) if p.stat().st_size < 8192]
MODULE_SEEDS = MODULE_SEEDS[:6]
TEXT_SEEDS = [p.read_bytes()[:3000] for p in sorted(FIXTURES.glob("*.lowered.txt"))][:4]


def test_fuzz_seeds_are_there() -> None:
    assert len(MODULE_SEEDS) >= 3
    assert len(TEXT_SEEDS) >= 3


@FUZZ
@given(
    st.one_of(st.binary(max_size=64), mutated(MODULE_SEEDS)),
    st.sampled_from([None, "proto", "hlo_proto", "snapshot"]),
)
def test_module_bytes_never_crash(data: bytes, form: str | None) -> None:
    module = only_errors(xs.HloModule.load, data, form)
    if module is not None:
        only_errors(module.constants)
        only_errors(module.arguments)
        only_errors(module.result)
        only_errors(lambda: module.entry_computation_layout)
        assert isinstance(module.shapes(), list)


@FUZZ
@given(mutated(TEXT_SEEDS))
def test_module_text_never_crashes(data: bytes) -> None:
    module = only_errors(xs.HloModule.load, data, "text")
    if module is not None:
        only_errors(module.constants)
        only_errors(lambda: module.entry_computation_layout)
