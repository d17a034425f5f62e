#!/usr/bin/env python3
"""One table from one run or several: criterion's medians for benches/relayout.rs and numpy's.

    benches/peers/relayout_table.py [target/criterion] [target/peers/numpy.json]
    benches/peers/relayout_table.py --save target/peers/run-1.json [--since EPOCH] \\
        [--uptime TEXT]... target/criterion target/peers/numpy-1.json
    benches/peers/relayout_table.py --runs target/peers/run-1.json target/peers/run-2.json ...

The first form prints the table of the results in place (one run). `--save` extracts one run
instead: criterion's medians (only the results written at or after `--since`, seconds since the
epoch, so that a filtered run does not pick up an older run's groups), numpy's JSON and the
`uptime` lines, into one JSON file. `--runs` prints one table over the saved runs.

The table is Markdown for docs/relayout.md: per case the median time of memcpy (same bytes),
xla-shape on one thread (`plan`), on all threads (`plan_all_threads`), ndarray, numpy
(`ascontiguousarray`, and `copyto` into a reused array) and the naive loop, each with its ratio
to memcpy (memcpy's time over its own: 1.0 is memcpy's speed, higher is faster). Over several
runs a cell is the median over the runs of the time, and of the ratio computed within each run,
each followed by its spread [min–max]. Then the thread scaling at 512 MiB (1 → 2 threads, t2d
and r3) and each run's `uptime`.

Self-check (a fake criterion tree, two runs): `python3 -m doctest benches/peers/relayout_table.py`.
"""

import argparse
import json
import os
import statistics
import sys

COLUMNS = [
    ("memcpy", "memcpy"),
    ("plan", "xla-shape 1 thread"),
    ("plan_all_threads", "xla-shape all threads"),
    ("ndarray", "ndarray"),
    ("strided_perm", "strided-perm"),
    ("numpy", "numpy"),
    ("numpy_copyto", "numpy copyto"),
    ("naive", "naive"),
]

# The groups of `RELAYOUT_CASES=threads`: one line each, 1 → 2 threads.
THREADS = [("t2d", "relayout/t2d_512MiB_threads"), ("r3", "relayout/r3_512MiB_threads")]

# The destinations of `RELAYOUT_CASES=align` (`relayout/align/CASE/PLACEMENT`), in table order.
PLACEMENTS = ["page", "page+4", "page+16", "page+64", "page+1", "page+17", "vec"]


def criterion(root, since=None):
    """{group: {function: median ns}} from every `new/` result under `root` (written at or after
    `since`, seconds since the epoch, when given).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     fake_result(root, "relayout/t2d", "plan", 8e6)
    ...     fake_result(root, "relayout/t2d_512MiB_threads", "plan", 90e6, "1")
    ...     criterion(root) == {"relayout/t2d": {"plan": 8e6},
    ...                         "relayout/t2d_512MiB_threads": {"plan/1": 90e6}}
    ...     criterion(root, since=os.path.getmtime(root) + 10)
    True
    {}
    """
    out = {}
    for dirpath, _, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        estimates = os.path.join(dirpath, "estimates.json")
        if since is not None and os.path.getmtime(estimates) < since:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(estimates) as f:
            median = json.load(f)["median"]["point_estimate"]
        function = bench["function_id"] or ""
        if bench.get("value_str"):
            function = f"{function}/{bench['value_str']}"
        out.setdefault(bench["group_id"], {})[function] = median
    return out


def fake_result(root, group, function, median, value=None):
    """Writes one criterion result as criterion does (`group/function[/value]/new/`), for the
    self-checks."""
    directory = os.path.join(root, *group.split("/"), function, *([value] if value else []), "new")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "benchmark.json"), "w") as f:
        json.dump({"group_id": group, "function_id": function, "value_str": value}, f)
    with open(os.path.join(directory, "estimates.json"), "w") as f:
        json.dump({"median": {"point_estimate": median}}, f)


def throughputs(root):
    """{group: bytes} from criterion's `throughput` of every `new/` result under `root`."""
    out = {}
    for dirpath, _, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        bytes_ = (bench.get("throughput") or {}).get("Bytes")
        if bytes_:
            out[bench["group_id"]] = bytes_
    return out


def load_run(root, numpy_path, since=None, uptime=()):
    """One run: criterion's medians, numpy's results (empty when the file is missing), the
    `uptime` lines and each group's output bytes."""
    numpy = {}
    if numpy_path and os.path.exists(numpy_path):
        with open(numpy_path) as f:
            numpy = json.load(f)
    return {"criterion": criterion(root, since), "numpy": numpy, "uptime": list(uptime),
            "bytes": throughputs(root)}


def case_times(run, group):
    """{column: median ns or a string} of one group of one run, numpy's included."""
    times = dict(run["criterion"][group])
    peer = run["numpy"].get("cases", {}).get(group.split("/")[1], {})
    if "ascontiguousarray" in peer:
        # None: numpy returned the array itself (already contiguous), no copy to time.
        times["numpy"] = peer["ascontiguousarray"] if peer["ascontiguousarray"] is not None else "no copy"
    if "copyto" in peer:
        times["numpy_copyto"] = peer["copyto"]
    return times


def spread(values, digits):
    """The median of `values`, with [min–max] when there are several.

    >>> spread([3.0], 2)
    '3.00'
    >>> spread([3.0, 1.0, 2.5], 2)
    '2.50 [1.00–3.00]'
    """
    text = f"{statistics.median(values):.{digits}f}"
    if len(values) > 1:
        text += f" [{min(values):.{digits}f}–{max(values):.{digits}f}]"
    return text


def cell(runs_times, key):
    """One cell: the time in ms and its ratio to memcpy, each a median over the runs that have
    it (with the spread when there are several).

    >>> cell([{"memcpy": 5e6, "plan": 10e6}], "plan")
    '10.00 (0.50)'
    >>> cell([{"memcpy": 5e6, "plan": 10e6}, {"memcpy": 6e6, "plan": 8e6}], "plan")
    '9.00 [8.00–10.00] (0.62 [0.50–0.75])'
    >>> cell([{"memcpy": 5e6, "numpy": "no copy"}], "numpy")
    'no copy'
    >>> cell([{"memcpy": 5e6}], "naive")
    '–'
    """
    values = [t[key] for t in runs_times if key in t]
    if not values:
        return "–"
    if any(isinstance(v, str) for v in values):
        return next(v for v in values if isinstance(v, str))
    text = spread([v / 1e6 for v in values], 2)
    ratios = [t["memcpy"] / t[key] for t in runs_times if t.get(key) and t.get("memcpy")]
    if ratios:
        text += f" ({spread(ratios, 2)})"
    return text


def table(runs):
    """The table, the thread scaling lines and the runs' `uptime`, as lines.

    >>> import tempfile
    >>> runs = []
    >>> for k, (memcpy, plan, one, two) in enumerate([(5e6, 10e6, 90e6, 50e6), (6e6, 8e6, 100e6, 50e6)]):
    ...     with tempfile.TemporaryDirectory() as root:
    ...         fake_result(root, "relayout/r3", "memcpy", memcpy)
    ...         fake_result(root, "relayout/r3", "plan", plan)
    ...         for threads, t in [("1", one), ("2", two)]:
    ...             fake_result(root, "relayout/r3_512MiB_threads", "plan", t, threads)
    ...         numpy = os.path.join(root, "numpy.json")
    ...         with open(numpy, "w") as f:
    ...             json.dump({"numpy": "2.4.6", "ml_dtypes": "0.6.0",
    ...                        "cases": {"r3": {"ascontiguousarray": 20e6, "copyto": 12e6}}}, f)
    ...         runs.append(load_run(root, numpy, uptime=[f"load {k}"]))
    >>> print("\\n".join(table(runs)))  # doctest: +NORMALIZE_WHITESPACE
    numpy 2.4.6, ml_dtypes 0.6.0; 2 runs; each cell: median ms [min–max] (× memcpy [min–max])
    <BLANKLINE>
    | case | memcpy | xla-shape 1 thread | xla-shape all threads | ndarray | strided-perm | numpy | numpy copyto | naive |
    |---|---|---|---|---|---|---|---|---|
    | r3 | 5.50 [5.00–6.00] (1.00 [1.00–1.00]) | 9.00 [8.00–10.00] (0.62 [0.50–0.75]) | – | – | – | 20.00 [20.00–20.00] (0.28 [0.25–0.30]) | 12.00 [12.00–12.00] (0.46 [0.42–0.50]) | – |
    <BLANKLINE>
    r3 at 512 MiB, huge pages: 1 thread 95.0 [90.0–100.0] ms, 2 threads 50.0 [50.0–50.0] ms (1.90 [1.80–2.00]×)
    <BLANKLINE>
    run 1: load 0
    run 2: load 1
    """
    versions = next((r["numpy"] for r in runs if r["numpy"]), {})
    several = len(runs) > 1
    header = f"numpy {versions.get('numpy', '?')}, ml_dtypes {versions.get('ml_dtypes', '?')}; "
    if several:
        header += f"{len(runs)} runs; each cell: median ms [min–max] (× memcpy [min–max])"
    else:
        header += "each cell: median ms (× memcpy)"
    lines = [header, ""]
    groups = sorted({g for r in runs for g in r["criterion"]
                     if g.startswith("relayout/") and "threads" not in g
                     and not g.startswith(("relayout/align/", "relayout/users/", "relayout/cache/"))})
    if groups:
        lines.append("| case | " + " | ".join(title for _, title in COLUMNS) + " |")
        lines.append("|---|" + "---|" * len(COLUMNS))
    for group in groups:
        runs_times = [case_times(r, group) for r in runs if group in r["criterion"]]
        cells = [cell(runs_times, key) for key, _ in COLUMNS]
        lines.append(f"| {group.removeprefix('relayout/')} | " + " | ".join(cells) + " |")
    scaling = []
    for case, group in THREADS:
        pairs = [(r["criterion"][group].get("plan/1"), r["criterion"][group].get("plan/2"))
                 for r in runs if group in r["criterion"]]
        pairs = [(one, two) for one, two in pairs if one and two]
        if pairs:
            ones, twos = [one / 1e6 for one, _ in pairs], [two / 1e6 for _, two in pairs]
            ratios = [one / two for one, two in pairs]
            scaling.append(f"{case} at 512 MiB, huge pages: 1 thread {spread(ones, 1)} ms, "
                           f"2 threads {spread(twos, 1)} ms ({spread(ratios, 2)}×)")
    if scaling:
        lines += [""] + scaling
    for case, group in THREADS:
        baselines = [(r["criterion"][group].get("memcpy/1"), r["criterion"][group].get("memcpy/2"))
                     for r in runs if group in r["criterion"]]
        if not any(one and two for one, two in baselines):
            continue
        parts = []
        for threads in ("1", "2"):
            for key, title in (("plan", "xla-shape"), ("strided_perm", "strided-perm")):
                ratios = [r["criterion"][group][f"memcpy/{threads}"] / r["criterion"][group][f"{key}/{threads}"]
                          for r in runs if group in r["criterion"]
                          and r["criterion"][group].get(f"{key}/{threads}") and r["criterion"][group].get(f"memcpy/{threads}")]
                if ratios:
                    parts.append(f"{title} {threads} thread(s) {spread(ratios, 2)}× memcpy on {threads}")
        lines.append(f"{case} at 512 MiB against memcpy on as many threads: " + "; ".join(parts))
    lines += alignment(runs)
    lines += users(runs)
    lines += users(runs, "cache")
    uptimes = [(k, u) for k, r in enumerate(runs, 1) for u in r["uptime"]]
    if uptimes:
        lines.append("")
        lines += [f"run {k}: {u.strip()}" if several else f"uptime: {u.strip()}" for k, u in uptimes]
    return lines


def alignment(runs):
    """The alignment table (`RELAYOUT_CASES=align`): per case and destination, xla-shape's and
    strided-perm's ratios to memcpy into the same destination, one thread.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     for place, plan in [("page", 10e6), ("page+16", 11e6)]:
    ...         fake_result(root, f"relayout/align/t2d/{place}", "memcpy", 5e6)
    ...         fake_result(root, f"relayout/align/t2d/{place}", "plan", plan)
    ...         fake_result(root, f"relayout/align/t2d/{place}", "strided_perm", 20e6)
    ...     print("\\n".join(alignment([load_run(root, None)])))  # doctest: +NORMALIZE_WHITESPACE
    <BLANKLINE>
    Destination alignment, one thread: xla-shape × memcpy into the same destination (strided-perm × memcpy)
    <BLANKLINE>
    | case | page | page+16 |
    |---|---|---|
    | t2d | 0.50 (0.25) | 0.45 (0.25) |
    """
    found = {}
    for r in runs:
        for group in r["criterion"]:
            if group.startswith("relayout/align/"):
                case, place = group.removeprefix("relayout/align/").split("/", 1)
                found.setdefault(case, set()).add(place)
    if not found:
        return []
    places = [p for p in PLACEMENTS if any(p in ps for ps in found.values())]
    lines = ["", "Destination alignment, one thread: xla-shape × memcpy into the same destination "
             "(strided-perm × memcpy)", ""]
    lines.append("| case | " + " | ".join(places) + " |")
    lines.append("|---|" + "---|" * len(places))
    for case in sorted(found):
        cells = []
        for place in places:
            group = f"relayout/align/{case}/{place}"
            times = [r["criterion"][group] for r in runs if group in r["criterion"]]
            text = []
            for key in ("plan", "strided_perm"):
                ratios = [t["memcpy"] / t[key] for t in times if t.get(key) and t.get("memcpy")]
                text.append(spread(ratios, 2) if ratios else "–")
            cells.append(f"{text[0]} ({text[1]})" if times else "–")
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    return lines


def users(runs, prefix="users"):
    """Issue 36's table (`RELAYOUT_CASES=users`): per case, on page-aligned maps and on `Vec`s 16
    bytes past a line, xla-shape's ratio to memcpy of the same output bytes into the same
    destination (one thread), with memcpy's own speed in GB/s (output bytes over its median
    time), each a median over the runs with its spread. With `prefix="cache"`, the same layouts
    small enough to stay in the caches (`RELAYOUT_CASES=cache`), with xla-shape's own speed in
    GB/s instead: what its instructions give.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     for place, plan in [("page", 10e6), ("vec", 8e6)]:
    ...         fake_result(root, "relayout/users/t2d", "memcpy", 5e6, place)
    ...         fake_result(root, "relayout/users/t2d", "plan", plan, place)
    ...         fake_result(root, "relayout/cache/t2d", "memcpy", 5e3, place)
    ...         fake_result(root, "relayout/cache/t2d", "plan", plan / 1e3, place)
    ...     run = load_run(root, None)
    ...     run["bytes"] = {"relayout/users/t2d": 64 << 20, "relayout/cache/t2d": 128 << 10}
    ...     print("\\n".join(users([run]) + users([run], "cache")))  # doctest: +NORMALIZE_WHITESPACE
    <BLANKLINE>
    Users' buffers, one thread: xla-shape × memcpy of the same output bytes (memcpy GB/s)
    <BLANKLINE>
    | case | page | Vec +16 |
    |---|---|---|
    | t2d | 0.50 (13.4) | 0.62 (13.4) |
    <BLANKLINE>
    In the caches, one thread: xla-shape × memcpy of the same output bytes (xla-shape GB/s)
    <BLANKLINE>
    | case | page | Vec +16 |
    |---|---|---|
    | t2d | 0.50 (13.1) | 0.62 (16.4) |
    """
    head = f"relayout/{prefix}/"
    cases = sorted({g.removeprefix(head) for r in runs for g in r["criterion"] if g.startswith(head)})
    if not cases:
        return []
    timed = "plan" if prefix == "cache" else "memcpy"
    title = ("In the caches, one thread: xla-shape × memcpy of the same output bytes (xla-shape GB/s)"
             if prefix == "cache" else
             "Users' buffers, one thread: xla-shape × memcpy of the same output bytes (memcpy GB/s)")
    lines = ["", title, "", "| case | page | Vec +16 |", "|---|---|---|"]
    for case in cases:
        group = head + case
        cells = []
        for place in ("page", "vec"):
            times = [(r["criterion"][group], r.get("bytes", {}).get(group)) for r in runs if group in r["criterion"]]
            ratios = [t[f"memcpy/{place}"] / t[f"plan/{place}"] for t, _ in times
                      if t.get(f"memcpy/{place}") and t.get(f"plan/{place}")]
            speeds = [n / t[f"{timed}/{place}"] for t, n in times if n and t.get(f"{timed}/{place}")]
            text = spread(ratios, 2) if ratios else "–"
            if speeds:
                text += f" ({spread(speeds, 1)})"
            cells.append(text)
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", metavar="RUN_JSON", help="write this run's results to RUN_JSON, print nothing")
    parser.add_argument("--since", type=float, help="with --save: only criterion results written since (epoch s)")
    parser.add_argument("--uptime", action="append", default=[], help="with --save: an `uptime` line (repeatable)")
    parser.add_argument("--runs", nargs="+", metavar="RUN_JSON", help="one table over runs saved with --save")
    parser.add_argument("paths", nargs="*", help="[criterion directory] [numpy JSON]")
    args = parser.parse_args()
    if args.runs:
        if args.save or args.paths:
            parser.error("--runs takes saved runs only")
        runs = []
        for path in args.runs:
            with open(path) as f:
                runs.append(json.load(f))
    else:
        if len(args.paths) > 2:
            parser.error("at most a criterion directory and a numpy JSON")
        root = args.paths[0] if args.paths else os.path.join("target", "criterion")
        numpy = args.paths[1] if len(args.paths) > 1 else os.path.join("target", "peers", "numpy.json")
        runs = [load_run(root, numpy, args.since, args.uptime)]
        if args.save:
            os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
            with open(args.save, "w") as f:
                json.dump(runs[0], f, indent=1)
            return
    print("\n".join(table(runs)))


if __name__ == "__main__":
    sys.exit(main())
