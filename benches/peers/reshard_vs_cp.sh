#!/usr/bin/env bash
# `shards --reshard` against `cp` of the same bytes (issue 39, item 4: "1 GiB f32
# {devices=[2,4]<=[8]} → {devices=[8,1]<=[8]} and → {devices=[1,4]0,1,2,3}: ≤ 1.3× cp").
#
#   benches/peers/reshard_vs_cp.sh [SIZE_GIB] [DIR]
#   ROUNDS=5 benches/peers/reshard_vs_cp.sh 1        # the issue's case (default 5 rounds)
#   BEFORE=0 benches/peers/reshard_vs_cp.sh 1        # without the assemble-then-split baseline
#
# Generates SIZE_GIB (default 1) GiB of random bytes as `f32[N,16384]{1,0}` (N = SIZE_GIB ×
# 16384), splits it over `{devices=[2,4]<=[8]}` into 8 files (the checkpoint), reads them once so
# that the page cache holds them, then alternates, every command writing new files (the previous
# outputs removed and `sync`ed before the clock starts): `cp -r` of the 8 files (the same bytes),
# `--reshard` to `{devices=[8,1]<=[8]}`, `--reshard` to `{devices=[1,4]0,1,2,3}`, and (BEFORE=1,
# the default) the way before it, `--assemble` to a temporary global file then `--split` of it to
# `{devices=[8,1]<=[8]}`. One unmeasured round, then ROUNDS measured ones; prints each time, the
# medians, min–max and the ratios to cp's median. DIR needs about 4 × SIZE_GIB GiB free; the
# script removes its files however it ends. Plain `cp`, as a user types it (on ext4,
# `copy_file_range`): use ext4 or tmpfs, not a file system that clones.
set -euo pipefail
DIR=""
if [ $# -ge 2 ]; then
  DIR=$(cd -- "$2" 2>/dev/null && pwd) || { echo "no directory '$2'" >&2; exit 2; }
fi
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

SIZE="${1:-1}"
if ! [[ "$SIZE" =~ ^[1-9][0-9]*$ ]]; then
  echo "SIZE_GIB must be a positive integer, not '$SIZE'" >&2
  exit 2
fi
ROUNDS="${ROUNDS:-5}"
BEFORE="${BEFORE:-1}"
ROWS=$((SIZE * 16384))
SHAPE="f32[$ROWS,16384]{1,0}"
FROM='{devices=[2,4]<=[8]}'
ROWS8='{devices=[8,1]<=[8]}'
COLS4='{devices=[1,4]0,1,2,3}'

if [ -n "$DIR" ]; then
  work=$(mktemp -d "$DIR/reshard_vs_cp.XXXXXX")
else
  mkdir -p target
  work=$(mktemp -d target/reshard_vs_cp.XXXXXX)
fi
trap 'rm -rf -- "$work"' EXIT

cargo build --locked --release --features cli --bin xla-shape
BIN=target/release/xla-shape
echo "generating $SIZE GiB: $SHAPE over $FROM"
head -c "$((SIZE << 30))" /dev/urandom > "$work/global.bin"
"$BIN" shards "$SHAPE" "$FROM" --split "$work/global.bin" --out-dir "$work/in"
rm -f -- "$work/global.bin"
sync
cat "$work"/in/* > /dev/null # the page cache holds the input from here on

declare -A times=()
out="$work/out"
run() {
  local name="$1" round="$2"
  shift 2
  rm -rf -- "$out" "$work/tmp.bin"
  sync
  local start end seconds
  start=$(date +%s%N)
  "$@"
  end=$(date +%s%N)
  seconds=$(awk -v ns="$((end - start))" 'BEGIN { printf "%.3f", ns / 1e9 }')
  if [ "$round" -gt 0 ]; then
    times[$name]+="$seconds "
    echo "round $round: $name $seconds s"
  else
    echo "unmeasured round: $name $seconds s"
  fi
}
before() {
  "$BIN" shards "$SHAPE" "$FROM" --assemble "$work/in" --output "$work/tmp.bin"
  "$BIN" shards "$SHAPE" "$ROWS8" --split "$work/tmp.bin" --out-dir "$out"
}
stats() {
  tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f %.3f %.3f", m, v[1], v[NR] }'
}

uptime
for ((round = 0; round <= ROUNDS; round++)); do
  run cp "$round" cp -r -- "$work/in" "$out"
  run "reshard [8,1]" "$round" "$BIN" shards "$SHAPE" "$FROM" --reshard "$work/in" --to "$ROWS8" --out-dir "$out"
  run "reshard [1,4]0,1,2,3" "$round" "$BIN" shards "$SHAPE" "$FROM" --reshard "$work/in" --to "$COLS4" --out-dir "$out"
  if [ "$BEFORE" = 1 ]; then
    run "assemble+split [8,1]" "$round" before
  fi
done
uptime
read -r cp_median cp_min cp_max <<< "$(stats <<< "${times[cp]}")"
echo "medians of $ROUNDS rounds (min-max):"
for name in cp "reshard [8,1]" "reshard [1,4]0,1,2,3" "assemble+split [8,1]"; do
  [ -n "${times[$name]:-}" ] || continue
  read -r median min max <<< "$(stats <<< "${times[$name]}")"
  awk -v n="$name" -v m="$median" -v a="$min" -v b="$max" -v c="$cp_median" \
    'BEGIN { printf "  %-22s %.3f s (%.3f-%.3f), %.2f x cp\n", n, m, a, b, m / c }'
done
