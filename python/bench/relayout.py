"""The package's relayout against the kernel it calls, numpy and JAX, in one run.

    target/py-venv/bin/python python/bench/relayout.py [--rounds 7] [--sizes 64,1024] [--json F]
        [--quick]

Cases (issue 30): an f32 transpose of 64 MiB and of 1 GiB (row-major -> column-major), and a bf16
row-major -> TPU ``T(8,128)(2,1)`` tile relayout of 64 MiB. For each, on an ordinary numpy
array (its buffer where numpy's allocator puts it: 16 bytes past a cache line for large arrays),
median seconds over ``--rounds`` rounds after one warm-up round, with min and max, of:

The contenders run in turn within each round (interleaved), so that all see the same machine.

* ``kernel``: the Rust kernel on the same source and a preallocated, cache-line-aligned
  destination (as the package allocates its outputs), timed in Rust
  (``RelayoutPlan._time_run``): no Python, no allocation;
* ``plan.run(out=)``: the same through the binding (argument checks, GIL release);
* ``xs.relayout``: the whole call (plan, a new cache-line-aligned output, its page faults);
* ``numpy``: ``np.ascontiguousarray(a.T)``, or for the tiles the reshape/transpose that makes
  them;
* ``jax.device_put``: with a ``Format`` of the destination layout on a CPU device, until ready
  (the CPU client lays tiles out untiled, so it has no tile row);
* ``kernel, numpy's out``: the kernel into a destination numpy allocated (16 bytes past a cache
  line), which issue 31 tracks;
* ``memcpy``: ``np.copyto`` of the source into a preallocated array of its size, the machine's
  copy speed in the same run.

``xs.relayout / plan.run(out=)`` is the cost of a new output against a used one (issue 38: at
most 1.2x at 16 and 64 MiB, ``--sizes 16,64``).

Every result is checked equal to the package's. Ratios are to the kernel (lower is faster than
it for nothing; the goal is the Python calls within 1.1x of it) and to numpy.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
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


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def interleaved(
    runs: dict[str, Callable[[], float]], rounds: int
) -> dict[str, tuple[float, float, float]]:
    """Each round runs every contender once, in turn (starting one further each round), so
    that all see the same machine; the first round is a warm-up (page faults of reused buffers,
    plans). Median, min, max."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for k in range(rounds + 1):
        # Each round starts with the next contender: none always follows the same one (a
        # 1 GiB allocation freed just before, say).
        for name in names[k % len(names) :] + names[: k % len(names)]:
            t = runs[name]()
            if k > 0:
                times[name].append(t)
    return {name: (statistics.median(t), min(t), max(t)) for name, t in times.items()}


def tiles_numpy(x: np.ndarray) -> np.ndarray:
    """bf16 row-major [R, C] -> T(8,128)(2,1): 8x128 tiles, in each pairs of rows interleaved."""
    r, c = x.shape
    return np.ascontiguousarray(x.reshape(r // 8, 4, 2, c // 128, 128).transpose(0, 3, 1, 4, 2))


def case(
    name: str, x: np.ndarray, src: str, dst: str, rounds: int, numpy_fn: Any, jax_m2m: Any
) -> dict[str, Any]:
    plan = xs.RelayoutPlan(src, dst)
    expected = xs.relayout(x, src, dst)
    out = plan.run(x)  # a destination as the package allocates it: cache-line aligned
    numpy_out = np.empty(plan.dst_len, np.uint8)  # as numpy allocates it
    copy = np.empty_like(x)
    row: dict[str, Any] = {
        "case": name,
        "bytes": x.nbytes,
        "src_offset_in_line": x.ctypes.data % 64,
        "numpy_out_offset_in_line": numpy_out.ctypes.data % 64,
    }
    assert (numpy_fn(x).reshape(-1).view(np.uint8) == expected).all()
    runs: dict[str, Callable[[], float]] = {
        "kernel": lambda: plan._time_run(x, out, 1)[0],
        "plan.run(out=)": lambda: timed(lambda: plan.run(x, out=out)),
        "xs.relayout": lambda: timed(lambda: xs.relayout(x, src, dst)),
        "numpy": lambda: timed(lambda: numpy_fn(x)),
        "kernel, numpy's out": lambda: plan._time_run(x, numpy_out, 1)[0],
        "memcpy": lambda: timed(lambda: np.copyto(copy, x)),
    }
    assert (out == expected).all()
    if jax_m2m is not None:
        fmt = Format(Layout(major_to_minor=jax_m2m), SingleDeviceSharding(jax.devices()[0]))
        put = jax.device_put(x, fmt).block_until_ready()
        raw = np.frombuffer(ctypes.string_at(put.unsafe_buffer_pointer(), x.nbytes), np.uint8)
        assert (raw == expected).all()
        del put
        runs["jax.device_put"] = lambda: timed(lambda: jax.device_put(x, fmt).block_until_ready())
    if QUICK:
        runs = {
            k: v
            for k, v in runs.items()
            if k in ("kernel", "plan.run(out=)", "xs.relayout", "memcpy")
        }
    row.update(interleaved(runs, rounds))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", default="64,1024", help="f32 transpose sizes in MiB")
    parser.add_argument("--json", help="append the rows as one JSON line to this file")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="only the kernel, plan.run(out=), xs.relayout and memcpy (many rounds cheaply)",
    )
    args = parser.parse_args()
    global QUICK
    QUICK = args.quick
    rng = np.random.default_rng(0)
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
                (1, 0),
            )
        )
        del a
    b = rng.standard_normal((4096, 8192), dtype=np.float32).astype(ml_dtypes.bfloat16)
    rows.append(
        case(
            "bf16 rm -> T(8,128)(2,1) 64 MiB",
            b,
            "bf16[4096,8192]{1,0}",
            "bf16[4096,8192]{1,0:T(8,128)(2,1)}",
            args.rounds,
            tiles_numpy,
            None,
        )
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{platform.machine()}, {os.cpu_count()} cpus, load average {load}")
    columns = [
        "kernel",
        "plan.run(out=)",
        "xs.relayout",
        "numpy",
        "jax.device_put",
        "kernel, numpy's out",
        "memcpy",
    ]
    print("| case | " + " | ".join(columns) + " | xs.relayout / plan.run(out=) |")
    print("|---|" + "---|" * (len(columns) + 1))
    for row in rows:
        k = row["kernel"][0]
        cells = []
        for c in columns:
            if c not in row:
                cells.append("n/a")
                continue
            med, lo, hi = row[c]
            cells.append(f"{med * 1e3:.1f} ms [{lo * 1e3:.1f}-{hi * 1e3:.1f}] ({med / k:.2f}x)")
        fresh = row["xs.relayout"][0] / row["plan.run(out=)"][0]
        cells.append(f"{fresh:.2f}x")
        print(f"| {row['case']} (src +{row['src_offset_in_line']}) | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps({"load": os.getloadavg(), "rows": rows}) + "\n")


if __name__ == "__main__":
    main()
