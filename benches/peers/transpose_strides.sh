#!/usr/bin/env bash
# A transpose's destination rows a power of two apart against the same rows one line further
# apart, on 4 KiB and 2 MiB pages (benches/peers/transpose_strides.c says which and why). Needs
# gcc. `uptime` before and after; ROUNDS=N rounds per row (default 7).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p target/peers
gcc -O2 -o target/peers/transpose_strides benches/peers/transpose_strides.c
uptime
target/peers/transpose_strides
uptime
