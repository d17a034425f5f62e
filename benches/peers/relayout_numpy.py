#!/usr/bin/env python3
"""numpy on the cases of benches/relayout.rs, same sizes, one thread.

Each case is a row-major source of `dims` (the source's physical order) whose destination is
`np.ascontiguousarray(a.transpose(perm))`, exactly the strided copy the criterion bench gives
its ndarray and naive baselines. Two timings per case: `ascontiguousarray` (a new array each
time, as a numpy user writes it; numpy advises huge pages for large allocations on Linux) and
`copyto` into a preallocated array (the criterion benches' conditions: the destination reused).
Medians of `--runs` runs (after one warm-up) are written as JSON.

    benches/peers/relayout_numpy.py --out target/peers/numpy.json [--runs 10] [--cases t2d,r3]
"""

import argparse
import json
import os
import statistics
import time

# Single-threaded numpy: no BLAS is involved, but keep any threaded helper to one core.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

# name, source physical dims (row-major), destination order, element type: benches/relayout.rs.
CASES = [
    ("t2d", [4096, 4096], [1, 0], np.float32),
    ("r3", [256, 256, 256], [2, 0, 1], np.float32),
    ("nchw_nhwc", [16, 64, 128, 128], [0, 2, 3, 1], np.float32),
    ("nchw_nhwc_odd", [16, 64, 124, 132], [0, 2, 3, 1], np.float32),
    ("r4", [64, 64, 64, 64], [0, 2, 1, 3], np.float32),
    ("r5", [128, 128, 64, 4, 4], [0, 3, 1, 4, 2], np.float32),
    ("identical", [4096, 4096], [0, 1], np.float32),
    ("f32_t8x128_to_rm", [512, 32, 8, 128], [0, 2, 1, 3], np.float32),
    ("f32_rm_to_t8x128", [512, 8, 32, 128], [0, 2, 1, 3], np.float32),
    ("bf16_t8x128x2_to_rm", [512, 64, 4, 128, 2], [0, 2, 4, 1, 3], ml_dtypes.bfloat16),
    ("bf16_rm_to_t8x128x2", [512, 4, 2, 64, 128], [0, 3, 1, 4, 2], ml_dtypes.bfloat16),
]


def median_ns(fn, runs):
    fn()  # warm-up: page faults of the source, code paths
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times)


def s4_cases(runs):
    """Packed int4 (two per byte, low nibble first) <-> one per byte, 2^25 elements."""
    n = 1 << 25
    packed = (np.arange(n // 2, dtype=np.uint32) % 251).astype(np.uint8)
    unpacked = np.empty(n, dtype=np.uint8)

    def unpack():
        unpacked[0::2] = packed & 0xF
        unpacked[1::2] = packed >> 4

    out = np.empty(n // 2, dtype=np.uint8)

    def pack():
        np.bitwise_or(unpacked[0::2] & 0xF, unpacked[1::2] << 4, out=out)

    return {
        "s4_unpack": {"bytes": n, "copyto": median_ns(unpack, runs)},
        "s4_pack": {"bytes": n // 2, "copyto": median_ns(pack, runs)},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join("target", "peers", "numpy.json"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cases", default="", help="comma-separated names (default: all)")
    args = parser.parse_args()
    wanted = set(filter(None, args.cases.split(",")))
    results = {}
    for name, dims, perm, dtype in CASES:
        if wanted and name not in wanted:
            continue
        nbytes = int(np.prod(dims)) * np.dtype(dtype).itemsize
        a = (np.arange(nbytes, dtype=np.uint32) % 251).astype(np.uint8).view(dtype).reshape(dims)
        view = a.transpose(perm)
        out = np.empty(view.shape, dtype=dtype)
        np.copyto(out, view)
        assert np.array_equal(out.view(np.uint8), np.ascontiguousarray(view).view(np.uint8))
        # An already contiguous view (the identical case) is returned as it is: no copy, no time.
        copies = np.ascontiguousarray(view) is not view
        results[name] = {
            "bytes": out.nbytes,
            "ascontiguousarray": median_ns(lambda: np.ascontiguousarray(view), args.runs) if copies else None,
            "copyto": median_ns(lambda: np.copyto(out, view), args.runs),
        }
        contiguous = results[name]["ascontiguousarray"]
        print(f"{name}: {results[name]['copyto'] / 1e6:.2f} ms copyto, "
              + (f"{contiguous / 1e6:.2f} ms ascontiguousarray" if copies else "ascontiguousarray: no copy"),
              flush=True)
    if not wanted or "s4" in wanted:
        results.update(s4_cases(args.runs))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__, "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
