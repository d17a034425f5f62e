#!/usr/bin/env bash
# The relayout table of docs/relayout.md: the criterion bench (memcpy, xla-shape on one thread and
# on all, ndarray, strided-perm, naive), the one-and-two-thread groups at 512 MiB (with memcpy and
# strided-perm on one and two threads), the alignment groups (destinations off a page and in
# Vecs), issue 36's users' buffers and the same layouts in the caches, then numpy on the same
# cases, then the tables. With RUNS=N the whole sequence runs N times and the table gives, per cell, the
# median over the runs with the spread [min–max], of each time and of each ratio.
#
#   benches/peers/run_relayout.sh                       # venv in target/peers/venv
#   PEERS_VENV=../peers-venv benches/peers/run_relayout.sh   # a venv elsewhere
#   benches/peers/run_relayout.sh r3                    # criterion's filter: some cases only
#   RUNS=3 benches/peers/run_relayout.sh                # three runs, one table
#   TIMES='--warm-up-time 0.1 --measurement-time 0.2' benches/peers/run_relayout.sh  # a smoke run
#   ONLY=users RUNS=3 benches/peers/run_relayout.sh      # issue 36's users' buffers table alone
#   ONLY=cache RUNS=3 benches/peers/run_relayout.sh      # the same layouts in the caches alone
#
# Each run K is saved as target/peers/run-K.json (criterion's medians written during that run,
# numpy's results, `uptime` before and after); `benches/peers/relayout_table.py --runs
# target/peers/run-*.json` prints the table again. Needs python3 and, the first time, network
# access to the Python package index (numpy and ml_dtypes, pinned in
# benches/peers/requirements.txt). Quiet machine: the figures are medians of short runs, and
# another process's load shows in them (each run's `uptime` is printed with the table).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

RUNS="${RUNS:-1}"
if ! [[ "$RUNS" =~ ^[1-9][0-9]*$ ]]; then
  echo "RUNS must be a positive integer, not '$RUNS'" >&2
  exit 2
fi
# Criterion's times of every bench (the figures of docs/relayout.md use the default).
read -ra times <<< "${TIMES:---warm-up-time 1 --measurement-time 3}"
VENV="${PEERS_VENV:-target/peers/venv}"
PY="${PYTHON:-$(command -v python3)}"
if [ "${ONLY:-}" = users ] || [ "${ONLY:-}" = cache ]; then
  # No numpy in these tables: the table script needs only the standard library.
  TABLE_PY="$PY"
else
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  "$VENV/bin/pip" install --quiet -r benches/peers/requirements.txt
  TABLE_PY="$VENV/bin/python"
fi

mkdir -p target/peers
rm -f target/peers/run-*.json target/peers/numpy-*.json
saved=()
for ((k = 1; k <= RUNS; k++)); do
  echo "== run $k of $RUNS"
  # Criterion's results written from now on belong to this run (by mtime).
  since=$(date +%s.%N)
  before=$(uptime)
  echo "$before"
  if [ "${ONLY:-}" = users ] || [ "${ONLY:-}" = cache ]; then
    # Issue 36's cases on Vecs 16 bytes past a line beside page-aligned maps, memcpy beside each
    # (cache: the same layouts at about 128 KiB, in the caches).
    RELAYOUT_CASES="$ONLY" cargo bench --bench relayout --features rayon -- "${times[@]}" "$@"
    after=$(uptime)
    echo "$after"
    "$TABLE_PY" benches/peers/relayout_table.py --save "target/peers/run-$k.json" --since "$since" \
      --uptime "before: $before" --uptime "after: $after" target/criterion
    saved+=("target/peers/run-$k.json")
    continue
  fi
  cargo bench --bench relayout --features rayon -- "${times[@]}" "$@"
  # One and two threads on t2d and r3 at 512 MiB (the lines under the table), with memcpy and
  # strided-perm on as many threads.
  RELAYOUT_CASES=threads cargo bench --bench relayout --features rayon -- "${times[@]}"
  # The destination at a page, 4, 16 and 64 bytes past one, and in Vecs (the alignment table).
  RELAYOUT_CASES=align cargo bench --bench relayout --features rayon -- "${times[@]}" "$@"
  # Issue 36's cases on users' buffers (Vecs 16 bytes past a line) beside page-aligned maps.
  RELAYOUT_CASES=users cargo bench --bench relayout --features rayon -- "${times[@]}" "$@"
  # The same layouts at about 128 KiB, in the caches: what each kernel's instructions give.
  RELAYOUT_CASES=cache cargo bench --bench relayout --features rayon -- "${times[@]}" "$@"
  "$VENV/bin/python" benches/peers/relayout_numpy.py --out "target/peers/numpy-$k.json"
  after=$(uptime)
  echo "$after"
  "$VENV/bin/python" benches/peers/relayout_table.py --save "target/peers/run-$k.json" --since "$since" \
    --uptime "before: $before" --uptime "after: $after" target/criterion "target/peers/numpy-$k.json"
  saved+=("target/peers/run-$k.json")
done
if [ -f "target/peers/numpy-$RUNS.json" ]; then
  cp "target/peers/numpy-$RUNS.json" target/peers/numpy.json
fi
"$TABLE_PY" benches/peers/relayout_table.py --runs "${saved[@]}"
