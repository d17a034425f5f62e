"""`xs.reshard` against `jax.device_put(arr_a, sharding_b)`, `xs.assemble` + `xs.split` and a
numpy copy of the same bytes, in one run (issue 39, item 4).

    target/py-venv/bin/python python/bench/reshard.py [--rounds 5] [--size 8192]

The case: `f32[S,S]` (S = 8192: 256 MiB) placed by `jax.device_put` with `P('x', 'y')` on a 2x4
mesh of 8 CPU devices, moved to `P('x')` on the 8 devices. The source buffers are the devices'
own (`addressable_shards`, read as numpy arrays once). Per round, in turn:

* ``np.copy``: one copy of the 256 MiB global array (the memory bandwidth's reference);
* ``jax.device_put``: `jax.device_put(arr_a, sharding_b)`, until ready;
* ``xs.reshard``: the 8 source buffers to the 8 target buffers (new arrays), every thread;
* ``assemble+split``: `xs.assemble` of the sources, then `xs.split` of the global buffer.

Medians over ``--rounds`` rounds after one warm-up, with min and max; the results are checked
equal to JAX's buffers. The process's peak anonymous memory (`VmHWM` is resident, so this
reads `RssAnon` before and after) is printed too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import xla_shape as xs


def rss_anon_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()
    s = args.size
    devices = np.array(jax.devices())
    a = NamedSharding(Mesh(devices.reshape(2, 4), ("x", "y")), P("x", "y"))
    b = NamedSharding(Mesh(devices, ("x",)), P("x"))
    x = np.arange(s * s, dtype=np.float32).reshape(s, s)
    arr_a = jax.device_put(x, a)
    arr_a.block_until_ready()
    shards = {sh.device.id: np.asarray(sh.data) for sh in arr_a.addressable_shards}
    shape = f"f32[{s},{s}]"
    ha, hb = xs.HloSharding.from_jax(a, 2), xs.HloSharding.from_jax(b, 2)
    expected = {
        sh.device.id: np.asarray(sh.data).tobytes()
        for sh in jax.device_put(arr_a, b).addressable_shards
    }
    got = xs.reshard(shards, shape, ha, hb)
    assert {d: v.tobytes() for d, v in got.items()} == expected
    del got
    runs: dict[str, Callable[[], Any]] = {
        "np.copy": lambda: np.copy(x),
        "jax.device_put": lambda: jax.device_put(arr_a, b).block_until_ready(),
        "xs.reshard": lambda: xs.reshard(shards, shape, ha, hb),
        "assemble+split": lambda: xs.split(xs.assemble(shards, shape, ha), shape, hb),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(args.rounds + 1):
        for name, run in runs.items():
            t = timed(run)
            if r > 0:
                times[name].append(t)
    mib = s * s * 4 >> 20
    print(f"f32[{s},{s}] ({mib} MiB), P('x','y') on 2x4 -> P('x') on 8; {args.rounds} rounds")
    print(f"load: {os.getloadavg()}")
    base = statistics.median(times["np.copy"])
    for name, ts in times.items():
        m = statistics.median(ts)
        spread = f"({min(ts) * 1e3:.1f}-{max(ts) * 1e3:.1f})"
        print(f"  {name:16} {m * 1e3:8.1f} ms  {spread}  {m / base:.2f}x np.copy")
    print(f"RssAnon at the end: {rss_anon_kb()} kB")


if __name__ == "__main__":
    main()
