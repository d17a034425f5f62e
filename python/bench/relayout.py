"""The package's relayout against the kernel it calls, numpy and JAX, in one run.

    target/py-venv/bin/python python/bench/relayout.py [--rounds 7] [--sizes 64,1024]
        [--cases f32,narrow,tpu,int4] [--threads N] [--json F] [--quick]
    target/py-venv/bin/python python/bench/relayout.py --summary F

Cases, by ``--cases`` group (default all four):

* ``f32`` (issue 30): an f32 transpose of each ``--sizes`` MiB (row-major -> column-major);
* ``narrow`` (issue 36, the ``t2d_u8`` and ``t2d_bf16`` cases of ``RELAYOUT_CASES=users``), 64 MiB:
  the transposes of a ``uint8[8192,8192]`` and an ``ml_dtypes.bfloat16[4096,8192]`` array;
* ``tpu`` (issue 36, the TPU tiles of ``benches/relayout.rs``'s ``RELAYOUT_CASES=users``, with
  ``s8`` under ``T(8,128)(4,1)`` and ``T(32,128)(4,1)``), 64 MiB:
  bf16 row-major -> ``T(8,128)(2,1)`` and back, ``T(8,128)(2,1)`` -> ``T(16,128)(2,1)``, the tiled
  transpose ``{1,0}`` -> ``{0,1:T(8,128)(2,1)}``, f32 row-major -> ``T(8,128)`` and back;
* ``int4`` (issue 36, the sub-byte cases of the same list): ``s4`` and ``s2`` of 2^26 elements,
  pack (``{0}`` -> ``{0:E(4)}`` / ``{0:E(2)}``; 32 / 16 MiB out) and unpack (64 MiB out). The
  unpacked side is an ``ml_dtypes.int4`` / ``int2`` array, one element per byte (how ml_dtypes
  and the package hold them: the value's two's-complement nibble in the low bits). Also ``s4``
  ``[8192,8192]`` row-major -> ``{1,0:T(8,128)(8,1)E(4)}`` (int4 under TPU tiles: each column's
  32-bit word holds 8 rows' nibbles; 32 MiB out) and back, and the same tiles to and from
  ``{1,0:E(4)}`` (packed along the rows, as JAX's CPU client holds int4; 32 MiB each way).

For each, on an ordinary numpy array (its buffer where numpy's allocator puts it: 16 bytes past a
cache line for large arrays), median seconds over ``--rounds`` rounds after one warm-up round,
with min and max, of:

The contenders run once each round, in an order shuffled per round, so that all see the same
machine and none always follows the same one.

* ``kernel``: the Rust kernel on the same source and a preallocated, cache-line-aligned
  destination (as the package allocates its outputs), timed in Rust
  (``RelayoutPlan._time_run``): no Python, no allocation;
* ``plan.run(out=)``: the same through the binding (argument checks, GIL release);
* ``xs.relayout``: the whole call (plan, a new cache-line-aligned output, its page faults);
* ``numpy``: numpy's own way, allocating its result as ``xs.relayout`` does:
  ``np.ascontiguousarray(a.T)``; for tiles the reshape/transpose that makes or unmakes them (one
  transpose between ``T(8,128)(2,1)`` and ``T(16,128)(2,1)``); for packing
  ``(v[0::2] & 0xF) | (v[1::2] << 4)`` on strided views of the bytes (``s2``: four views, shifts
  0, 2, 4, 6; the first element in the low bits, as XLA packs); for unpacking a new array and one
  strided assignment per nibble (``out[0::2] = p & 0xF; out[1::2] = p >> 4``);
* ``jax``: ``jax.device_put`` with a ``Format`` of the destination layout on a CPU device, until
  ready, for the f32 transposes. The CPU client takes a tiled ``Format`` (``tiling=((8, 128),
  (2, 1))``) and reports it on the array, but its buffer holds the row-major bytes (jaxlib 0.10.2,
  checked byte for byte): it cannot make tiles, so the ``tpu`` rows have none. For sub-byte
  types the CPU client stores ``int4``/``int2`` arrays packed (as ``E(4)`` / ``E(2)``, checked
  byte for byte), so: pack is ``jax.device_put`` of the ml_dtypes array until
  ready; unpack is ``np.asarray`` of a packed ``jax.Array`` (made before the timer, a new one each
  round: ``jax.Array`` caches its numpy value), jax's copy of its packed buffer to one element per
  byte on the host;
* ``kernel, numpy's out``: the kernel into a destination numpy allocated (16 bytes past a cache
  line), which issue 31 tracks and issue 36 measures (both buffers where numpy puts them);
* ``memcpy``: ``np.copyto`` of the output's number of bytes between two numpy arrays allocated
  once, the machine's copy speed in the same run.

``--threads N`` runs the kernel, ``plan.run(out=)`` and ``xs.relayout`` on N threads (default the
package's: one per core); memcpy and numpy run on one. Issue 36's targets are one thread against
one-thread memcpy: ``--threads 1``.

``xs.relayout / plan.run(out=)`` is the cost of a new output against a used one (issue 38: at
most 1.2x at 16 and 64 MiB, ``--sizes 16,64``).

Every result is checked equal to the package's. Each cell shows the time's ratio to the kernel
(lower is faster than it for nothing; the goal is the Python calls within 1.1x of it). The last
columns are issue 36's: memcpy time over kernel time (higher is faster; 0.8 the tiles' target,
0.5 the sub-byte one) into the package's output and into numpy's, and memcpy's own speed in GB/s
of output bytes, without which a ratio means little.

``--json F`` appends the run's rows as one JSON line to F; ``--summary F`` reads such lines (one
per run) and prints, per case, the median over the runs of each run's median ratio [min-max] and
memcpy's GB/s likewise, then the same of each run's fastest round (under another session's memory
traffic a round takes either the machine's own time or about twice it, and a median of 11 rounds
lands on either; the fastest round is the machine's own).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import ml_dtypes
import numpy as np
from jax.experimental.layout import Format, Layout
from jax.sharding import SingleDeviceSharding

import xla_shape as xs

#: ``--quick``: the package's contenders and memcpy only.
QUICK = False

#: The ``--cases`` groups.
GROUPS = ("f32", "narrow", "tpu", "int4")

#: A JAX contender: what it makes (the output's bytes, to check) and one timed run of it.
Jax = tuple[Callable[[], np.ndarray], Callable[[], float]]


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def interleaved(runs: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each round runs every contender once, in an order shuffled for the round, so that all
    see the same machine; the first round is a warm-up (page faults of reused buffers, plans).
    Each contender's seconds, round by round."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for k in range(rounds + 1):
        # A new order each round (seeded: the same in every run), so that no contender always
        # follows the same one. Rotating one order kept every neighbour: the kernel always
        # followed jax, and ran its u8 transpose in 21-22 ms where the same call from Python
        # into the same buffers, next in turn, took 12.6-12.9 (14.2 against 13.9 with jax left
        # out; issue 36, 2026-11-30). What jax's device_put leaves behind is not established.
        for name in random.Random(k).sample(names, len(names)):
            t = runs[name]()
            if k > 0:
                times[name].append(t)
    return times


def tiles_numpy(x: np.ndarray, rows: int = 8, sub: int = 2) -> np.ndarray:
    """Row-major [R, C] -> T(rows,128)(sub,1): rows x 128 tiles, in each groups of ``sub`` rows
    interleaved (bf16 T(8,128)(2,1) by default; s8 T(8,128)(4,1), T(32,128)(4,1))."""
    r, c = x.shape
    grouped = x.reshape(r // rows, rows // sub, sub, c // 128, 128)
    return np.ascontiguousarray(grouped.transpose(0, 3, 1, 4, 2))


def untiles_numpy(x: np.ndarray, r: int, c: int, rows: int = 8, sub: int = 2) -> np.ndarray:
    """T(rows,128)(sub,1) of [r, c] (any shape of its bytes) -> row-major [r, c]."""
    tiles = x.reshape(r // rows, c // 128, rows // sub, 128, sub)
    return np.ascontiguousarray(tiles.transpose(0, 2, 4, 1, 3)).reshape(r, c)


def retile_numpy(x: np.ndarray, r: int, c: int) -> np.ndarray:
    """bf16 T(8,128)(2,1) -> T(16,128)(2,1) of [r, c]: a 16-row tile is two 8-row tiles of the
    same columns, one after the other, so one transpose of the tile indices."""
    tiles = x.reshape(r // 16, 2, c // 128, 4, 128, 2)
    return np.ascontiguousarray(tiles.transpose(0, 2, 1, 3, 4, 5))


def f32_tiles_numpy(x: np.ndarray) -> np.ndarray:
    """f32 row-major [R, C] -> T(8,128)."""
    r, c = x.shape
    return np.ascontiguousarray(x.reshape(r // 8, 8, c // 128, 128).transpose(0, 2, 1, 3))


def f32_untiles_numpy(x: np.ndarray, r: int, c: int) -> np.ndarray:
    """f32 T(8,128) of [r, c] -> row-major [r, c]."""
    tiles = x.reshape(r // 8, c // 128, 8, 128)
    return np.ascontiguousarray(tiles.transpose(0, 2, 1, 3)).reshape(r, c)


def pack_numpy(x: np.ndarray, bits: int) -> np.ndarray:
    """One element a byte (ml_dtypes int4/int2) -> ``8 // bits`` a byte, the first in the low
    bits."""
    v = x.view(np.uint8)
    per = 8 // bits
    mask = (1 << bits) - 1
    packed = v[0::per] & mask
    for k in range(1, per):
        part = v[k::per] << (k * bits) if k == per - 1 else (v[k::per] & mask) << (k * bits)
        packed |= part
    return packed


def pack_tiles_numpy(x: np.ndarray, r: int, c: int) -> np.ndarray:
    """``s4[r, c]`` row-major (ml_dtypes int4, one a byte) -> ``T(8,128)(8,1)E(4)``: a band of 8
    rows is one row of tiles, whose 32-bit words run along the columns, row ``k`` of the band in
    bits ``4k ..`` of each."""
    v = x.view(np.uint8).reshape(r // 8, 8, c) & np.uint8(0xF)
    words = np.zeros((r // 8, c), np.uint32)
    for k in range(8):
        words |= v[:, k, :].astype(np.uint32) << np.uint32(4 * k)
    return words.view(np.uint8).reshape(-1)


def unpack_tiles_numpy(p: np.ndarray, r: int, c: int) -> np.ndarray:
    """The inverse of :func:`pack_tiles_numpy`."""
    words = p.view(np.uint32).reshape(r // 8, 1, c)
    shifts = (np.arange(8, dtype=np.uint32) * np.uint32(4)).reshape(1, 8, 1)
    return ((words >> shifts) & np.uint32(0xF)).astype(np.uint8).reshape(r, c).view(ml_dtypes.int4)


def unpack_numpy(p: np.ndarray, bits: int, dtype: Any) -> np.ndarray:
    """``8 // bits`` elements a byte, the first in the low bits -> one a byte (ml_dtypes)."""
    per = 8 // bits
    mask = (1 << bits) - 1
    out = np.empty(p.size * per, np.uint8)
    out[0::per] = p & mask
    for k in range(1, per):
        out[k::per] = (p >> (k * bits)) & mask if k < per - 1 else p >> (k * bits)
    return out.view(dtype)


def device_bytes(a: jax.Array, n: int) -> np.ndarray:
    """The first ``n`` bytes of a CPU ``jax.Array``'s device buffer, as it lays them out."""
    return np.frombuffer(ctypes.string_at(a.unsafe_buffer_pointer(), n), np.uint8)


def jax_format(x: np.ndarray, major_to_minor: tuple[int, ...]) -> Jax:
    """``jax.device_put`` of ``x`` with a ``Format`` of ``major_to_minor``, until ready."""
    fmt = Format(Layout(major_to_minor=major_to_minor), SingleDeviceSharding(jax.devices()[0]))
    return (
        lambda: device_bytes(jax.device_put(x, fmt).block_until_ready(), x.nbytes),
        lambda: timed(lambda: jax.device_put(x, fmt).block_until_ready()),
    )


def jax_pack(x: np.ndarray, packed_len: int) -> Jax:
    """``jax.device_put`` of an int4/int2 array: the CPU client stores it packed."""
    return (
        lambda: device_bytes(jax.device_put(x).block_until_ready(), packed_len),
        lambda: timed(lambda: jax.device_put(x).block_until_ready()),
    )


def jax_unpack(logical: np.ndarray, packed: np.ndarray) -> Jax:
    """``np.asarray`` of a packed int4/int2 ``jax.Array`` holding ``logical`` (whose device bytes
    are ``packed``, checked): a new one each round, made before the timer."""

    def fresh() -> jax.Array:
        a: jax.Array = jax.device_put(logical).block_until_ready()
        return a

    assert (device_bytes(fresh(), packed.nbytes) == packed).all()

    def run() -> float:
        a = fresh()
        return timed(lambda: np.asarray(a))

    return (lambda: np.asarray(fresh()).view(np.uint8), run)


def case(
    name: str,
    x: np.ndarray,
    src: str,
    dst: str,
    rounds: int,
    numpy_fn: Callable[[np.ndarray], np.ndarray],
    jax_run: Jax | None,
    threads: int | None,
) -> dict[str, Any]:
    plan = xs.RelayoutPlan(src, dst)
    expected = xs.relayout(x, src, dst, threads=threads)
    out = plan.run(x)  # a destination as the package allocates it: cache-line aligned
    numpy_out = np.empty(plan.dst_len, np.uint8)  # as numpy allocates it
    # memcpy of the output's bytes, between two arrays as numpy allocates them, touched once.
    copy_src = np.ones(plan.dst_len, np.uint8)
    copy = np.zeros(plan.dst_len, np.uint8)
    row: dict[str, Any] = {
        "case": name,
        "bytes": x.nbytes,
        "out_bytes": plan.dst_len,
        "threads": threads,
        "src_offset_in_line": x.ctypes.data % 64,
        "numpy_out_offset_in_line": numpy_out.ctypes.data % 64,
    }
    assert (np.ascontiguousarray(numpy_fn(x)).reshape(-1).view(np.uint8) == expected).all()
    # The binding's benchmark hook (private, so not in the stubs).
    time_run: Callable[..., list[float]] = plan._time_run  # type: ignore[attr-defined]
    runs: dict[str, Callable[[], float]] = {
        "kernel": lambda: time_run(x, out, 1, threads=threads)[0],
        "plan.run(out=)": lambda: timed(lambda: plan.run(x, out=out, threads=threads)),
        "xs.relayout": lambda: timed(lambda: xs.relayout(x, src, dst, threads=threads)),
        "numpy": lambda: timed(lambda: numpy_fn(x)),
        "kernel, numpy's out": lambda: time_run(x, numpy_out, 1, threads=threads)[0],
        "memcpy": lambda: timed(lambda: np.copyto(copy, copy_src)),
    }
    assert (out == expected).all()
    time_run(x, numpy_out, 1, threads=threads)
    assert (numpy_out == expected).all()
    if jax_run is not None:
        made, run = jax_run
        assert (made() == expected).all()
        runs["jax"] = run
    if QUICK:
        runs = {
            k: v
            for k, v in runs.items()
            if k in ("kernel", "plan.run(out=)", "xs.relayout", "memcpy")
        }
    times = interleaved(runs, rounds)
    row.update({who: (statistics.median(t), min(t), max(t)) for who, t in times.items()})
    row["times"] = times  # round by round, for the --json record
    return row


def f32_cases(args: argparse.Namespace, rng: np.random.Generator) -> list[dict[str, Any]]:
    rows = []
    for mib in (int(s) for s in args.sizes.split(",")):
        n = int((mib * 2**20 // 4) ** 0.5)
        a = rng.standard_normal((n, n), dtype=np.float32)
        rows.append(
            case(
                f"f32 transpose {mib} MiB",
                a,
                f"f32[{n},{n}]{{1,0}}",
                f"f32[{n},{n}]{{0,1}}",
                args.rounds if mib <= 256 else max(3, args.rounds // 2),
                lambda x: np.ascontiguousarray(x.T),
                jax_format(a, (1, 0)),
                args.threads,
            )
        )
        del a
    return rows


def narrow_cases(args: argparse.Namespace, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The transposes of narrow elements, 64 MiB each: ``u8`` and ``bf16`` (the element of most
    JAX weights), row-major -> column-major, against numpy's and ``jax.device_put``'s."""
    arrays = (
        ("u8", rng.integers(0, 256, (8192, 8192), dtype=np.uint8)),
        ("bf16", rng.standard_normal((4096, 8192), dtype=np.float32).astype(ml_dtypes.bfloat16)),
    )
    rows = []
    for t, a in arrays:
        r, c = a.shape
        rows.append(
            case(
                f"{t} transpose 64 MiB",
                a,
                f"{t}[{r},{c}]{{1,0}}",
                f"{t}[{r},{c}]{{0,1}}",
                args.rounds,
                lambda x: np.ascontiguousarray(x.T),
                jax_format(a, (1, 0)),
                args.threads,
            )
        )
    return rows


def tpu_cases(args: argparse.Namespace, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The TPU tiles of ``RELAYOUT_CASES=users``, 64 MiB each; every source a numpy array as
    numpy allocates it (the tiled ones copied out of the package's output into one)."""
    r, c = 4096, 8192
    rm, t8 = f"bf16[{r},{c}]{{1,0}}", f"bf16[{r},{c}]{{1,0:T(8,128)(2,1)}}"
    t16 = f"bf16[{r},{c}]{{1,0:T(16,128)(2,1)}}"
    b = rng.standard_normal((r, c), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b_t8 = np.array(xs.relayout(b, rm, t8).view(ml_dtypes.bfloat16))
    f = rng.standard_normal((4096, 4096), dtype=np.float32)
    f_rm, f_t = "f32[4096,4096]{1,0}", "f32[4096,4096]{1,0:T(8,128)}"
    f_tiled = np.array(xs.relayout(f, f_rm, f_t).view(np.float32))
    specs: list[tuple[str, np.ndarray, str, str, Callable[[np.ndarray], np.ndarray]]] = [
        ("bf16 rm -> T(8,128)(2,1)", b, rm, t8, tiles_numpy),
        ("bf16 T(8,128)(2,1) -> rm", b_t8, t8, rm, lambda x: untiles_numpy(x, r, c)),
        ("bf16 T(8,128)(2,1) -> T(16,128)(2,1)", b_t8, t8, t16, lambda x: retile_numpy(x, r, c)),
        (
            "bf16 rm -> {0,1:T(8,128)(2,1)}",
            b,
            rm,
            f"bf16[{r},{c}]{{0,1:T(8,128)(2,1)}}",
            lambda x: tiles_numpy(x.T),
        ),
        ("f32 rm -> T(8,128)", f, f_rm, f_t, f32_tiles_numpy),
        ("f32 T(8,128) -> rm", f_tiled, f_t, f_rm, lambda x: f32_untiles_numpy(x, 4096, 4096)),
    ]
    # int8 under TPU tiles: T(8,128)(4,1), and T(32,128)(4,1), the large tiles of 8-bit types
    # on newer TPUs.
    q = rng.integers(-128, 128, size=(8192, 8192), dtype=np.int8)
    q_rm = "s8[8192,8192]{1,0}"
    for rows in (8, 32):
        q_t = f"s8[8192,8192]{{1,0:T({rows},128)(4,1)}}"
        q_tiled = np.array(xs.relayout(q, q_rm, q_t).view(np.int8))
        specs += [
            (f"s8 rm -> T({rows},128)(4,1)", q, q_rm, q_t, lambda x, n=rows: tiles_numpy(x, n, 4)),
            (
                f"s8 T({rows},128)(4,1) -> rm",
                q_tiled,
                q_t,
                q_rm,
                lambda x, n=rows: untiles_numpy(x, 8192, 8192, n, 4),
            ),
        ]
    return [
        case(name, x, src, dst, args.rounds, fn, None, args.threads)
        for name, x, src, dst, fn in specs
    ]


def int4_cases(args: argparse.Namespace, rng: np.random.Generator) -> list[dict[str, Any]]:
    """``s4`` and ``s2`` pack and unpack, 2^26 elements; the packed sources are numpy arrays as
    numpy allocates them."""
    n = 2**26
    rows = []
    for bits, dtype, et in ((4, ml_dtypes.int4, "s4"), (2, ml_dtypes.int2, "s2")):
        # Every bit pattern ml_dtypes holds for the type: the value's two's complement in the
        # low bits of the byte.
        logical = rng.integers(0, 1 << bits, n, dtype=np.uint8).view(dtype)
        dense, packed_shape = f"{et}[{n}]{{0}}", f"{et}[{n}]{{0:E({bits})}}"
        packed = np.array(xs.relayout(logical, dense, packed_shape))
        rows.append(
            case(
                f"{et} pack",
                logical,
                dense,
                packed_shape,
                args.rounds,
                functools.partial(pack_numpy, bits=bits),
                jax_pack(logical, packed.nbytes),
                args.threads,
            )
        )
        rows.append(
            case(
                f"{et} unpack",
                packed,
                packed_shape,
                dense,
                args.rounds,
                functools.partial(unpack_numpy, bits=bits, dtype=dtype),
                jax_unpack(logical, packed),
                args.threads,
            )
        )
        del logical, packed
    # int4 under TPU tiles (no JAX contender: its CPU client cannot make tiles).
    r = c = 8192
    logical = rng.integers(0, 16, (r, c), dtype=np.uint8).view(ml_dtypes.int4)
    rm, tiled = f"s4[{r},{c}]{{1,0}}", f"s4[{r},{c}]{{1,0:T(8,128)(8,1)E(4)}}"
    packed = np.array(xs.relayout(logical, rm, tiled))
    rows.append(
        case(
            "s4 rm -> T(8,128)(8,1)E(4)",
            logical,
            rm,
            tiled,
            args.rounds,
            lambda x: pack_tiles_numpy(x, r, c),
            None,
            args.threads,
        )
    )
    rows.append(
        case(
            "s4 T(8,128)(8,1)E(4) -> rm",
            packed,
            tiled,
            rm,
            args.rounds,
            lambda x: unpack_tiles_numpy(x, r, c),
            None,
            args.threads,
        )
    )
    # jax's CPU int4 (packed along the rows, E(4)) <-> the same under TPU tiles.
    dense = f"s4[{r},{c}]{{1,0:E(4)}}"
    along = np.array(xs.relayout(logical, rm, dense))
    rows.append(
        case(
            "s4 E(4) -> T(8,128)(8,1)E(4)",
            along,
            dense,
            tiled,
            args.rounds,
            lambda x: pack_tiles_numpy(unpack_numpy(x, 4, ml_dtypes.int4).reshape(r, c), r, c),
            None,
            args.threads,
        )
    )
    rows.append(
        case(
            "s4 T(8,128)(8,1)E(4) -> E(4)",
            packed,
            tiled,
            dense,
            args.rounds,
            lambda x: pack_numpy(unpack_tiles_numpy(x, r, c).reshape(-1), 4),
            None,
            args.threads,
        )
    )
    return rows


COLUMNS = [
    "kernel",
    "plan.run(out=)",
    "xs.relayout",
    "numpy",
    "jax",
    "kernel, numpy's out",
    "memcpy",
]


def print_table(rows: list[dict[str, Any]]) -> None:
    head = " | ".join(COLUMNS)
    print(
        f"| case | out MiB | {head} | xs.relayout / plan.run(out=) | memcpy / kernel "
        "| memcpy / kernel, numpy's out | memcpy GB/s |"
    )
    print("|---|---|" + "---|" * (len(COLUMNS) + 4))
    for row in rows:
        k = row["kernel"][0]
        cells = []
        for c in COLUMNS:
            if c not in row:
                cells.append("n/a")
                continue
            med, lo, hi = row[c]
            cells.append(f"{med * 1e3:.1f} ms [{lo * 1e3:.1f}-{hi * 1e3:.1f}] ({med / k:.2f}x)")
        cells.append(f"{row['xs.relayout'][0] / row['plan.run(out=)'][0]:.2f}x")
        memcpy = row["memcpy"][0]
        cells.append(f"{memcpy / k:.2f}")
        numpy_out = row.get("kernel, numpy's out")
        cells.append(f"{memcpy / numpy_out[0]:.2f}" if numpy_out else "n/a")
        cells.append(f"{row['out_bytes'] / memcpy / 1e9:.1f}")
        mib = row["out_bytes"] / 2**20
        print(
            f"| {row['case']} (src +{row['src_offset_in_line']}) | {mib:g} | "
            + " | ".join(cells)
            + " |"
        )


def spread(values: list[float], fmt: str) -> str:
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def print_summary(path: str) -> None:
    """Per case over the runs in ``path`` (``--json`` lines): the median of the runs' median
    ratios [min-max], and memcpy's GB/s likewise; then the same of each run's fastest round."""
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    loads = ", ".join(f"{run['load'][0]:.2f}" for run in runs)
    threads = sorted({str(row["threads"]) for run in runs for row in run["rows"]})
    print(f"{len(runs)} runs, threads {threads}, 1-minute load average at each run's end: {loads}")
    names: list[str] = []
    by_case: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        for row in run["rows"]:
            if row["case"] not in by_case:
                names.append(row["case"])
            by_case.setdefault(row["case"], []).append(row)
    contenders = ["kernel", "kernel, numpy's out", "plan.run(out=)", "xs.relayout", "numpy", "jax"]
    # Medians, then each run's fastest round: under another session's memory traffic a round's
    # time is either the machine's own or about twice it, and the median lands on either.
    for stat, title in ((0, "median of rounds"), (1, "fastest round")):
        print(f"\nratio memcpy time / contender time ({title}), median of the runs [min-max]")
        print(
            "| case | out MiB | memcpy GB/s | "
            + " | ".join(f"memcpy / {c}" for c in contenders)
            + " |"
        )
        print("|---|---|---|" + "---|" * len(contenders))
        for name in names:
            rows = by_case[name]
            cells = [spread([r["out_bytes"] / r["memcpy"][stat] / 1e9 for r in rows], ".1f")]
            for c in contenders:
                if all(c in r for r in rows):
                    cells.append(spread([r["memcpy"][stat] / r[c][stat] for r in rows], ".2f"))
                else:
                    cells.append("n/a")
            mib = rows[0]["out_bytes"] / 2**20
            offsets = "/".join(sorted({f"+{r['src_offset_in_line']}" for r in rows}))
            print(f"| {name} (src {offsets}) | {mib:g} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", default="64,1024", help="f32 transpose sizes in MiB")
    parser.add_argument(
        "--cases", default=",".join(GROUPS), help=f"case groups, comma-separated: {GROUPS}"
    )
    parser.add_argument("--threads", type=int, help="the package's threads (default one per core)")
    parser.add_argument("--json", help="append the rows as one JSON line to this file")
    parser.add_argument("--summary", help="print the summary of the --json runs in this file")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="only the kernel, plan.run(out=), xs.relayout and memcpy (many rounds cheaply)",
    )
    args = parser.parse_args()
    if args.summary:
        print_summary(args.summary)
        return
    groups = args.cases.split(",")
    if unknown := set(groups) - set(GROUPS):
        parser.error(f"unknown case groups {sorted(unknown)}: expected some of {GROUPS}")
    global QUICK
    QUICK = args.quick
    rng = np.random.default_rng(0)
    makers = {"f32": f32_cases, "narrow": narrow_cases, "tpu": tpu_cases, "int4": int4_cases}
    rows = [row for group in GROUPS if group in groups for row in makers[group](args, rng)]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    threads = args.threads or f"default ({os.cpu_count()})"
    print(f"{platform.machine()}, {os.cpu_count()} cpus, threads {threads}, load average {load}")
    print_table(rows)
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps({"load": os.getloadavg(), "time": time.time(), "rows": rows}) + "\n")


if __name__ == "__main__":
    main()
