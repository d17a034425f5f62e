"""Python threads side by side: two threads each relaying out their own 16 MiB buffer, against
one thread doing both, in one run.

    target/py-venv/bin/python python/bench/threads.py [--rounds 15] [--mib 16] [--repeat 4]

On a machine other processes load, ``chrt -f 10`` before it holds them off for the few seconds
of the run (two threads cannot go faster than one without two free cores).

Each round times, interleaved (the contenders in turn, starting one further each round):

* ``one thread``: the calling thread runs ``repeat`` calls on buffer A, then ``repeat`` on B;
* ``two threads``: thread 1 runs ``repeat`` calls on A while thread 2 runs ``repeat`` on B,
  both released together by a barrier; the time is from the release until both are done.

for each way of calling: ``plan.run(x, out=own, threads=1)`` (each thread its own output),
``plan.run(x, threads=1)`` (a new output each call), and, as the machine's reference, numpy's
``np.copyto`` of the same buffers. The speedup is
one thread's median over two threads' (2.0 on two idle cores; 1.0 when the calls queue behind
each other). The last column tells the two apart on a loaded machine: each calling thread's CPU
time (``time.thread_time``) over the two-thread round's wall time, near 1 when the calls run on
the calling threads at once, near 0 when they wait for a pool's worker. The machine's load
average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import threading
import time
from collections.abc import Callable

import numpy as np

import xla_shape as xs


def one_thread(work: list[Callable[[], object]], repeat: int) -> float:
    start = time.perf_counter()
    for run in work:
        for _ in range(repeat):
            run()
    return time.perf_counter() - start


#: Per contender, the CPU seconds each calling thread spent in its calls (``time.thread_time``):
#: work done on the calling thread counts, work handed to a pool's worker does not.
CPU: dict[str, list[float]] = {}


def two_threads(work: list[Callable[[], object]], repeat: int, name: str = "") -> float:
    barrier = threading.Barrier(len(work) + 1)

    def body(run: Callable[[], object]) -> None:
        barrier.wait()
        start = time.thread_time()
        for _ in range(repeat):
            run()
        CPU.setdefault(name, []).append(time.thread_time() - start)

    threads = [threading.Thread(target=body, args=(run,)) for run in work]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--mib", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=4, help="calls per thread per round")
    args = parser.parse_args()
    n = int((args.mib * 2**20 // 4) ** 0.5)
    src, dst = f"f32[{n},{n}]{{1,0}}", f"f32[{n},{n}]{{0,1}}"
    plan = xs.RelayoutPlan(src, dst)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((n, n), dtype=np.float32) for _ in range(2)]
    outs = [plan.run(x) for x in inputs]
    copies = [np.empty_like(x) for x in inputs]
    for x, out in zip(inputs, outs, strict=True):
        assert (out.view(np.float32).reshape(n, n) == x.T).all()

    def bind(k: int, how: str) -> Callable[[], object]:
        x, out, copy = inputs[k], outs[k], copies[k]
        if how == "plan.run(out=own, threads=1)":
            return lambda: plan.run(x, out=out, threads=1)
        if how == "plan.run(threads=1)":
            return lambda: plan.run(x, threads=1)
        return lambda: np.copyto(copy, x)

    hows = ["plan.run(out=own, threads=1)", "plan.run(threads=1)", "numpy copyto"]
    runs: dict[tuple[str, str], Callable[[], float]] = {}
    for how in hows:
        work = [bind(0, how), bind(1, how)]
        runs[(how, "one thread")] = lambda w=work: one_thread(w, args.repeat)
        runs[(how, "two threads")] = lambda w=work, h=how: two_threads(w, args.repeat, h)
    times: dict[tuple[str, str], list[float]] = {key: [] for key in runs}
    keys = list(runs)
    load_before = os.getloadavg()
    for k in range(args.rounds + 1):
        for key in keys[k % len(keys) :] + keys[: k % len(keys)]:
            t = runs[key]()
            if k > 0:  # the first round warms up
                times[key].append(t)
    load = ", ".join(f"{a:.2f}->{b:.2f}" for a, b in zip(load_before, os.getloadavg(), strict=True))
    print(
        f"{platform.machine()}, {os.cpu_count()} cpus, load average {load}; "
        f"{args.mib} MiB f32 transpose ({n}x{n}), {args.repeat} calls per thread, "
        f"{args.rounds} rounds: median [min-max] ms per round"
    )
    print(
        "| calls | one thread | two threads | speedup (median) | speedup range "
        "| calling thread's CPU / its share of wall (median) |"
    )
    print("|---|---|---|---|---|---|")
    for how in hows:
        one, two = times[(how, "one thread")], times[(how, "two threads")]
        m1, m2 = statistics.median(one), statistics.median(two)
        cell1 = f"{m1 * 1e3:.1f} [{min(one) * 1e3:.1f}-{max(one) * 1e3:.1f}]"
        cell2 = f"{m2 * 1e3:.1f} [{min(two) * 1e3:.1f}-{max(two) * 1e3:.1f}]"
        spread = f"{min(one) / max(two):.2f}-{max(one) / min(two):.2f}"
        # Each thread's CPU time against the two-thread round's wall time: near 1 when the
        # calls run on the calling threads side by side, near 0 when they wait for a pool.
        cpu = statistics.median(CPU[how]) / m2
        print(f"| {how} | {cell1} | {cell2} | {m1 / m2:.2f}x | {spread} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
