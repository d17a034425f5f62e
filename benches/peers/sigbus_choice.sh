#!/usr/bin/env bash
# The measurement behind the SIGBUS design (docs/relayout.md rule 22): the 1 GiB transpose on one
# thread, its input mapped (and watched for truncation), against `--no-mmap` (one `read` of the
# whole input first) and against the floor of a `pread` path (benches/peers/pread_runs.rs: the
# parts' source runs read, nothing transposed).
#
#   benches/peers/sigbus_choice.sh            # 5 alternated rounds (ROUNDS=N for more)
#
# Release build, feature `cli`; the input is 1 GiB of pseudo-random bytes in a temporary directory
# under target/, read once to warm the page cache, removed when the script ends.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS="${ROUNDS:-5}"
cargo build --quiet --release --locked --features cli
rustc -O --edition 2021 benches/peers/pread_runs.rs -o target/pread_runs
DIR=$(mktemp -d target/sigbus-choice.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
head -c $((1 << 30)) /dev/urandom > "$DIR/in.bin"
cat "$DIR/in.bin" > /dev/null
BIN=target/release/xla-shape
ARGS=(relayout --threads 1 'f32[16384,16384]{1,0}' 'f32[16384,16384]{0,1}' "$DIR/in.bin" -o /dev/null)
seconds() { local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N); echo "$e - $s" | bc; }
for round in $(seq 0 "$ROUNDS"); do
  mapped=$(seconds "$BIN" "${ARGS[@]}")
  read_whole=$(seconds "$BIN" "${ARGS[@]}" --no-mmap)
  pread=$(target/pread_runs "$DIR/in.bin" 2>/dev/null)
  # Round 0 warms up and is not printed.
  [ "$round" -gt 0 ] && printf 'round %d: mapped %.3f s, --no-mmap %.3f s, pread runs alone %.3f s\n' \
    "$round" "$mapped" "$read_whole" "$pread"
done
