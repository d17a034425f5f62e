"""`HloModule` on a generated HLO text module of about 100 MB (the module of
`benches/hlo_text.rs`: computations of 10 000 instructions with XLA's metadata), beside the
command line's listing of the same file.

Each measurement runs in a process of its own, so its peak resident memory (`ru_maxrss`) is its
own: `load` (`HloModule.load(path)`), `shapes` (load, then `shapes()`: the time of `shapes()`
alone), `entries` (load, then `for entry in module.entries()`), and `cli` (`xla-shape hlo FILE`
to /dev/null, when `--cli` names the binary). Medians and spread of `--runs` runs.

    python bench/hlo.py --megabytes 100 --runs 3 --cli ../target/release/xla-shape
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SHAPES = [
    "f32[128,256]{1,0}",
    "bf16[8,128,256]{2,1,0:T(8,128)(2,1)}",
    "(f32[2]{0}, s32[])",
    "pred[]",
]
OPCODES = ["add", "fusion", "tuple", "compare"]


def generate(path: pathlib.Path, megabytes: int) -> int:
    """Writes the module; returns its instruction count."""
    target = megabytes << 20
    written = computation = instructions = 0
    with path.open("w") as out:
        out.write(
            "HloModule big, is_scheduled=true, "
            "entry_computation_layout={(f32[128,256]{1,0})->pred[]}\n\n"
        )
        while written < target:
            entry = "ENTRY " if written + 2_000_000 >= target else ""
            lines = [f"{entry}%computation.{computation} (p.0: f32[128,256]) -> pred[] {{"]
            lines.append("  %p.0 = f32[128,256]{1,0} parameter(0)")
            for i in range(10_000):
                shape, opcode = SHAPES[i % 4], OPCODES[i % 4]
                root = "ROOT " if i == 9_999 else ""
                lines.append(
                    f"  {root}%{opcode}.{i} = {shape} {opcode}(%p.0, %p.0), "
                    f'metadata={{op_type="{opcode}" op_name="jit(f)/{opcode}" '
                    f'source_file="programs.py" source_line={i}}}'
                )
            body = "\n".join(lines) + "\n}\n\n"
            out.write(body)
            written += len(body)
            computation += 1
            instructions += 10_001
    return instructions


def phase(name: str, path: str, binary: str | None) -> dict[str, float]:
    """One measurement, in this process (the CLI's in a child of it, its peak its own)."""
    if name == "cli":
        assert binary is not None
        start = time.perf_counter()
        with open(os.devnull, "w") as sink:
            subprocess.run([binary, "hlo", path], check=True, stdout=sink)
        seconds = time.perf_counter() - start
        return {
            "cli": seconds,
            "max_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        }
    import xla_shape as xs

    start = time.perf_counter()
    module = xs.HloModule.load(path)
    loaded = time.perf_counter()
    out = {"load": loaded - start}
    if name == "shapes":
        shapes = module.shapes()
        out["shapes"] = time.perf_counter() - loaded
        out["count"] = len(shapes)
    elif name == "entries":
        count = sum(1 for _ in module.entries())
        out["entries"] = time.perf_counter() - loaded
        out["count"] = count
    out["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_phase(name: str, path: pathlib.Path, binary: str | None) -> dict[str, float]:
    command = [sys.executable, __file__, "--phase", name, str(path)]
    result = subprocess.run(
        [*command, "--cli", binary] if binary else command,
        check=True,
        capture_output=True,
        text=True,
    )
    measured: dict[str, float] = json.loads(result.stdout)
    return measured


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cli", help="the xla-shape binary, to time its listing beside")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("path", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.path, args.cli)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "big.txt"
        instructions = generate(path, args.megabytes)
        size = path.stat().st_size
        print(f"module: {size / 1e6:.1f} MB, {instructions} instructions; load {os.getloadavg()}")
        rows: dict[str, list[float]] = {}
        for _ in range(args.runs):
            for name in (
                ("cli", "load", "shapes", "entries") if args.cli else ("load", "shapes", "entries")
            ):
                measured = run_phase(name, path, args.cli)
                rss = measured["max_rss_mib"]
                if name in ("cli", "load"):
                    rows.setdefault(f"{name} (s)", []).append(measured[name])
                    rows.setdefault(f"{name} max RSS (MiB)", []).append(rss)
                else:
                    rows.setdefault(f"{name}() (s)", []).append(measured[name])
                    rows.setdefault(f"load + {name}() max RSS (MiB)", []).append(rss)
        for name, values in rows.items():
            print(f"{name:32} {summary(values)}")
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
