#!/usr/bin/env bash
# The command line's transpose against its own identity copy of the same file, to /dev/null
# (issue 31: "the 1 GiB transpose to /dev/null on one thread ≤ 1.6× the identity copy, all
# threads ≥ 1.6× one thread"): what the per-part path costs beyond moving the bytes.
#
#   benches/peers/cli_vs_identity.sh [DIR]             # 1 GiB in a temporary directory under target/
#   ROUNDS=7 benches/peers/cli_vs_identity.sh          # 7 measured rounds (default 5)
#   OTHER=../old/target/release/xla-shape benches/peers/cli_vs_identity.sh   # a second binary too
#
# Generates 1 GiB of random bytes (`f32[16384,16384]`), reads it once to warm the page cache,
# then alternates, each round: the identity (`{1,0}` → `{1,0}`) and the transpose (`{1,0}` →
# `{0,1}`) with `--threads 1`, then both with every core (no `--threads`), with this checkout's
# release build (feature `cli`, `rayon`), and with OTHER's when given; one unmeasured round
# first. Prints every time, then per command the median and [min–max] over the rounds and the
# medians' ratios (transpose / identity, one thread / all threads). The script removes its
# files when it ends, however it ends.
set -euo pipefail
DIR=""
if [ $# -ge 1 ]; then
  DIR=$(cd -- "$1" 2>/dev/null && pwd) || { echo "no directory '$1'" >&2; exit 2; }
fi
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS="${ROUNDS:-5}"
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
  echo "ROUNDS must be a positive integer, not '$ROUNDS'" >&2
  exit 2
fi
cargo build --quiet --release --features cli,rayon
BINS=("this=$PWD/target/release/xla-shape")
if [ -n "${OTHER:-}" ]; then
  BINS+=("other=$(cd -- "$(dirname -- "$OTHER")" && pwd)/$(basename -- "$OTHER")")
fi
made=""
if [ -z "$DIR" ]; then
  mkdir -p target
  DIR=$(mktemp -d "$PWD/target/cli-vs-identity.XXXXXX")
  made=$DIR
fi
cleanup() { rm -f "$DIR/in.bin"; if [ -n "$made" ]; then rm -rf "$made"; fi; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
head -c $((1 << 30)) /dev/urandom > "$DIR/in.bin"
cat "$DIR/in.bin" > /dev/null
FROM='f32[16384,16384]{1,0}'
declare -A times
run() { # NAME BIN THREADS TO
  local s e
  s=$(date +%s%N)
  local threads=()
  [ "$3" = all ] || threads=(--threads "$3")
  "$2" relayout "${threads[@]}" "$FROM" "$4" "$DIR/in.bin" -o /dev/null
  e=$(date +%s%N)
  echo "scale=3; ($e - $s) / 1000000000" | bc
}
echo "$(uptime)"
for ((r = 0; r <= ROUNDS; r++)); do
  line="round $r:"
  for bin in "${BINS[@]}"; do
    name=${bin%%=*} path=${bin#*=}
    for threads in 1 all; do
      for what in identity transpose; do
        to='f32[16384,16384]{1,0}'
        [ "$what" = transpose ] && to='f32[16384,16384]{0,1}'
        t=$(run "$name" "$path" "$threads" "$to")
        key="$name $what threads=$threads"
        line+=" $key $t;"
        if [ "$r" -gt 0 ]; then times[$key]+="$t "; fi
      done
    done
  done
  if [ "$r" -eq 0 ]; then echo "$line (unmeasured)"; else echo "$line"; fi
done
echo "$(uptime)"
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f [%.3f–%.3f]", m, a[1], a[NR]}'; }
declare -A med
for key in "${!times[@]}"; do
  m=$(echo "${times[$key]}" | median)
  med[$key]=${m%% *}
  echo "$key: $m s"
done | sort
for bin in "${BINS[@]}"; do
  name=${bin%%=*}
  for key in "${!times[@]}"; do med[$key]=$(echo "${times[$key]}" | median | cut -d' ' -f1); done
  for threads in 1 all; do
    echo "$name threads=$threads: transpose / identity $(echo "scale=2; ${med[$name transpose threads=$threads]} / ${med[$name identity threads=$threads]}" | bc)"
  done
  echo "$name transpose: one thread / all threads $(echo "scale=2; ${med[$name transpose threads=1]} / ${med[$name transpose threads=all]}" | bc)"
done
