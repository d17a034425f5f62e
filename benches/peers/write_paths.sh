#!/usr/bin/env bash
# Ways of writing a new 1 GiB file against `cp` of the same input (benches/peers/write_paths.rs
# says what each mode does), alternated: the measurement behind `OutFile`'s bounded writes and
# preallocation and behind not writing through a mapping of the output (docs/relayout.md "The
# command line").
#
#   benches/peers/write_paths.sh            # 7 rounds (ROUNDS=N for more), 6 GiB touched first
#
# The input is 1 GiB of random bytes in a temporary directory under target/, read once to warm
# the page cache; 6 GiB are written and deleted first (this VM is slow on a page's first use).
# Every output is removed and `sync`ed before the clock starts. Prints per mode the median
# [min–max] and the ratio of medians to `cp`'s; `uptime` before and after.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS="${ROUNDS:-7}"
mkdir -p target
rustc -O --edition 2021 benches/peers/write_paths.rs -o target/write_paths
DIR=$(mktemp -d target/write-paths.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
head -c $((1 << 30)) /dev/urandom > "$DIR/in.bin"
head -c $((6 << 30)) /dev/zero > "$DIR/touch.bin"
rm -f "$DIR/touch.bin"
sync
cat "$DIR/in.bin" > /dev/null
MODES=("write 16777216" "write 16777216 131072" "fwrite 16777216 131072" "map" "mappop" "fmap")
declare -A times
uptime
for ((r = 0; r <= ROUNDS; r++)); do
  rm -f "$DIR/out.bin"; sync
  s=$(date +%s%N); cp "$DIR/in.bin" "$DIR/out.bin"; e=$(date +%s%N)
  [ "$r" -gt 0 ] && times[cp]+="$(awk -v n=$((e - s)) 'BEGIN { printf "%.3f", n / 1e9 }') "
  for mode in "${MODES[@]}"; do
    rm -f "$DIR/out.bin"; sync
    read -ra words <<< "$mode"
    t=$(target/write_paths "${words[0]}" "$DIR/in.bin" "$DIR/out.bin" "${words[@]:1}" | cut -d' ' -f2)
    [ "$r" -gt 0 ] && times[$mode]+="$t "
  done
done
uptime
stat() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f [%.3f–%.3f]", m, a[1], a[NR] }'; }
cp_m=$(stat <<< "${times[cp]}" | cut -d' ' -f1)
echo "cp: $(stat <<< "${times[cp]}")"
for mode in "${MODES[@]}"; do
  m=$(stat <<< "${times[$mode]}")
  echo "$mode: $m  $(awk -v a="${m%% *}" -v b="$cp_m" 'BEGIN { printf "%.2f× cp", a / b }')"
done
