#!/usr/bin/env bash
# The command line against `cp` on the same file (issue 25: "the CLI converting a 2 GiB file runs
# within 1.5× of `cp` of the same file, page cache warm"; issue 36: `relayout -o` at ≤ 1.2× `cp`,
# `shards --split`/`--assemble` of `[2,4]` at ≤ 1.2×, tiled layouts at ≤ 1.5×, 1 GiB, medians of 7
# alternated rounds).
#
#   benches/peers/cli_vs_cp.sh [SIZE_GIB] [DIR]
#   benches/peers/cli_vs_cp.sh 1                     # 1 GiB in a temporary directory under target/
#   benches/peers/cli_vs_cp.sh 4 ../scratch          # 4 GiB in ../scratch (it must exist)
#   ROUNDS=5 benches/peers/cli_vs_cp.sh 1            # 5 measured rounds (default 7)
#   SHARDS=0 benches/peers/cli_vs_cp.sh 1            # relayout only
#   TOUCH_GIB=0 benches/peers/cli_vs_cp.sh 1         # no memory touch first (default 6 GiB)
#   OLD_BIN=/tmp/xla-shape-before benches/peers/cli_vs_cp.sh 1   # also another build's relayouts,
#                                                    # alternated with this one's (an A/B)
#
# Generates a SIZE_GIB (default 1) GiB file of random bytes, then writes and deletes TOUCH_GIB
# GiB (default 6: this VM is several times slower on a page's first use), reads the input once to
# warm the page cache, then alternates, each round: `cp IN OUT`; `xla-shape relayout
# 'f32[N,32768]{0,1}' 'f32[N,32768]{1,0}' IN --output OUT` (N = SIZE_GIB × 8192); the same
# with `--output /dev/null` (the transposing alone, for what the file's writing adds); and unless
# SHARDS=0, `xla-shape shards S '{devices=[2,4]<=[8]}' --split IN --out-dir D` and `--assemble`
# (from a directory split before the rounds) for S = `f32[M,16384]{1,0}` (dense: byte runs of
# 16 KiB) and S = `f32[M,16384]{1,0:T(8,128)}` (tiled: through parts), M = SIZE_GIB × 16384.
# Release build, feature `cli`, every core; one unmeasured round, then ROUNDS measured rounds
# (default 7), each time printed, then per command the median [min–max] and the medians' ratio
# to `cp`'s, and the fastest rounds' ratios. Every command writes a new file: the previous output
# is removed and `sync`ed before the clock starts (on ext4, replacing an existing file starts its
# write-back; without `sync` one round's write-back is charged to the next). `uptime` is printed
# before and after. DIR needs about 6 × SIZE_GIB GiB free. The script removes its files when it
# ends, however it ends (and DIR too when it made it). Plain `cp`, as a user types it: on ext4 it
# copies in the kernel (`copy_file_range`); on a file system that clones (Btrfs, XFS with
# reflinks) it copies nothing and the comparison means nothing: use ext4 or tmpfs.
set -euo pipefail
DIR=""
if [ $# -ge 2 ]; then
  # Relative to the caller's directory, before the cd below.
  DIR=$(cd -- "$2" 2>/dev/null && pwd) || { echo "no directory '$2'" >&2; exit 2; }
fi
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

SIZE="${1:-1}"
if ! [[ "$SIZE" =~ ^[1-9][0-9]*$ ]]; then
  echo "SIZE_GIB must be a positive integer, not '$SIZE'" >&2
  exit 2
fi
ROUNDS="${ROUNDS:-7}"
SHARDS="${SHARDS:-1}"
TOUCH_GIB="${TOUCH_GIB:-6}"
if ! [[ "$TOUCH_GIB" =~ ^[0-9]+$ ]]; then
  echo "TOUCH_GIB must be a whole number, not '$TOUCH_GIB'" >&2
  exit 2
fi
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
  echo "ROUNDS must be a positive integer, not '$ROUNDS'" >&2
  exit 2
fi
ROWS=$((SIZE * 8192))
FROM="f32[$ROWS,32768]{0,1}"
TO="f32[$ROWS,32768]{1,0}"
DENSE="f32[$((SIZE * 16384)),16384]{1,0}"
TILED="f32[$((SIZE * 16384)),16384]{1,0:T(8,128)}"
SHARDING='{devices=[2,4]<=[8]}'

if [ -n "$DIR" ]; then
  work=$(mktemp -d "$DIR/cli_vs_cp.XXXXXX")
else
  mkdir -p target
  work=$(mktemp -d target/cli_vs_cp.XXXXXX)
fi
trap 'rm -rf -- "$work"' EXIT

cargo build --release --features cli --bin xla-shape
BIN=target/release/xla-shape
input="$work/in.bin"
output="$work/out.bin"
outdir="$work/split"

echo "generating $SIZE GiB: $FROM"
head -c "$((SIZE << 30))" /dev/urandom > "$input"
if [ "$TOUCH_GIB" -gt 0 ]; then
  echo "touching $TOUCH_GIB GiB of memory (written and deleted)"
  head -c "$((TOUCH_GIB << 30))" /dev/zero > "$work/touch.bin"
  rm -f -- "$work/touch.bin"
fi
if [ "$SHARDS" != 0 ]; then
  "$BIN" shards "$DENSE" "$SHARDING" --split "$input" --out-dir "$work/dense"
  "$BIN" shards "$TILED" "$SHARDING" --split "$input" --out-dir "$work/tiled"
  cat "$work"/dense/* "$work"/tiled/* > /dev/null
fi
sync
cat "$input" > /dev/null # the page cache holds the input from here on

# One timed command writing $output anew: prints and records the seconds.
declare -A times=()
run() {
  local name="$1" round="$2"
  shift 2
  rm -rf -- "$output" "$outdir"
  sync
  local start end
  start=$(date +%s%N)
  "$@"
  end=$(date +%s%N)
  local seconds
  seconds=$(awk -v ns="$((end - start))" 'BEGIN { printf "%.3f", ns / 1e9 }')
  if [ "$round" -gt 0 ]; then
    times[$name]+="$seconds "
    echo "round $round: $name $seconds s"
  else
    echo "unmeasured round: $name $seconds s"
  fi
}

median() {
  tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

names=(cp xla-shape "xla-shape /dev/null")
if [ -n "${OLD_BIN:-}" ]; then
  names+=(old "old /dev/null")
fi
uptime
for ((round = 0; round <= ROUNDS; round++)); do
  run cp "$round" cp -- "$input" "$output"
  run xla-shape "$round" "$BIN" relayout "$FROM" "$TO" "$input" --output "$output"
  run "xla-shape /dev/null" "$round" "$BIN" relayout "$FROM" "$TO" "$input" --output /dev/null
  if [ -n "${OLD_BIN:-}" ]; then
    run old "$round" "$OLD_BIN" relayout "$FROM" "$TO" "$input" --output "$output"
    run "old /dev/null" "$round" "$OLD_BIN" relayout "$FROM" "$TO" "$input" --output /dev/null
  fi
  if [ "$SHARDS" != 0 ]; then
    run "split [2,4]" "$round" "$BIN" shards "$DENSE" "$SHARDING" --split "$input" --out-dir "$outdir"
    run "assemble [2,4]" "$round" "$BIN" shards "$DENSE" "$SHARDING" --assemble "$work/dense" --output "$output"
    run "split [2,4] tiled" "$round" "$BIN" shards "$TILED" "$SHARDING" --split "$input" --out-dir "$outdir"
    run "assemble [2,4] tiled" "$round" "$BIN" shards "$TILED" "$SHARDING" --assemble "$work/tiled" --output "$output"
  fi
done
uptime
if [ "$SHARDS" != 0 ]; then
  names+=("split [2,4]" "assemble [2,4]" "split [2,4] tiled" "assemble [2,4] tiled")
fi
cp_median=$(median <<< "${times[cp]}")
# The fastest rounds too: on a VM whose host reclaims the guest's free memory, the kernel's copy
# into new page-cache pages is sometimes several times slower, for `cp` and the tool alike.
cp_min=$(tr ' ' '\n' <<< "${times[cp]}" | grep . | sort -g | head -1)
echo "medians of $ROUNDS rounds [min–max], ratio of medians to cp's, ratio of fastest rounds:"
for name in "${names[@]}"; do
  m=$(median <<< "${times[$name]}")
  lo=$(tr ' ' '\n' <<< "${times[$name]}" | grep . | sort -g | head -1)
  hi=$(tr ' ' '\n' <<< "${times[$name]}" | grep . | sort -g | tail -1)
  awk -v n="$name" -v m="$m" -v lo="$lo" -v hi="$hi" -v c="$cp_median" -v cl="$cp_min" \
    'BEGIN { printf "%-22s %.3f s [%.3f–%.3f]  %.2f× cp  (fastest %.2f×)\n", n, m, lo, hi, m / c, lo / cl }'
done
