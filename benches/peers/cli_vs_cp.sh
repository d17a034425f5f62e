#!/usr/bin/env bash
# The command line against `cp` on the same file (issue 25: "the CLI converting a 2 GiB file runs
# within 1.5× of `cp` of the same file, page cache warm").
#
#   benches/peers/cli_vs_cp.sh [SIZE_GIB] [DIR]
#   benches/peers/cli_vs_cp.sh 2                     # 2 GiB in a temporary directory under target/
#   benches/peers/cli_vs_cp.sh 4 ../scratch          # 4 GiB in ../scratch (it must exist)
#   ROUNDS=5 benches/peers/cli_vs_cp.sh 2            # 5 measured rounds (default 3)
#
# Generates a SIZE_GIB (default 2) GiB file of random f32 bytes, `f32[N,32768]{0,1}` with
# N = SIZE_GIB × 8192, reads it once to warm the page cache, then alternates
# `cp IN OUT` and `xla-shape relayout 'f32[N,32768]{0,1}' 'f32[N,32768]{1,0}' IN
# --output OUT` (release build, feature `cli`, every core): one unmeasured round, then ROUNDS
# measured rounds (default 3), each time printed, then the medians and their ratio, and the
# fastest rounds and theirs. Every command writes a new file:
# the previous output is removed and `sync`ed before the clock starts (on ext4, replacing an
# existing file starts its write-back). DIR needs about 3 × SIZE_GIB GiB free. The script removes
# its files when it ends, however it ends (and DIR too when it made it). Plain `cp`, as a user
# types it: on ext4 it copies in the kernel (`copy_file_range`); on a file system that clones
# (Btrfs, XFS with reflinks) it copies nothing and the comparison means nothing: use ext4 or tmpfs.
set -euo pipefail
DIR=""
if [ $# -ge 2 ]; then
  # Relative to the caller's directory, before the cd below.
  DIR=$(cd -- "$2" 2>/dev/null && pwd) || { echo "no directory '$2'" >&2; exit 2; }
fi
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

SIZE="${1:-2}"
if ! [[ "$SIZE" =~ ^[1-9][0-9]*$ ]]; then
  echo "SIZE_GIB must be a positive integer, not '$SIZE'" >&2
  exit 2
fi
ROUNDS="${ROUNDS:-3}"
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
  echo "ROUNDS must be a positive integer, not '$ROUNDS'" >&2
  exit 2
fi
ROWS=$((SIZE * 8192))
FROM="f32[$ROWS,32768]{0,1}"
TO="f32[$ROWS,32768]{1,0}"

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

echo "generating $SIZE GiB: $FROM"
head -c "$((SIZE << 30))" /dev/urandom > "$input"
sync
cat "$input" > /dev/null # the page cache holds the input from here on

# One timed command writing $output anew: prints and records the seconds.
declare -A times=()
run() {
  local name="$1" round="$2"
  shift 2
  rm -f -- "$output"
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

uptime
for ((round = 0; round <= ROUNDS; round++)); do
  run cp "$round" cp -- "$input" "$output"
  run xla-shape "$round" "$BIN" relayout "$FROM" "$TO" "$input" --output "$output"
done
uptime
cp_median=$(median <<< "${times[cp]}")
cli_median=$(median <<< "${times[xla-shape]}")
echo "medians of $ROUNDS rounds: cp $cp_median s (${times[cp]% }), xla-shape relayout $cli_median s (${times[xla-shape]% })"
awk -v a="$cli_median" -v b="$cp_median" 'BEGIN { printf "xla-shape relayout / cp = %.2f\n", a / b }'
# The fastest rounds too: on a VM whose host reclaims the guest's free memory, the kernel's copy
# into new page-cache pages is sometimes several times slower, for `cp` and the tool alike.
cp_min=$(tr ' ' '\n' <<< "${times[cp]}" | grep . | sort -g | head -1)
cli_min=$(tr ' ' '\n' <<< "${times[xla-shape]}" | grep . | sort -g | head -1)
awk -v a="$cli_min" -v b="$cp_min" 'BEGIN { printf "fastest rounds: cp %.3f s, xla-shape relayout %.3f s, ratio %.2f\n", b, a, a / b }'
