#!/usr/bin/env bash
# An f32 transpose taken apart (loads, shuffles, stores) against memcpy
# (benches/peers/transpose_parts.c says which and why). Needs gcc. `uptime` before and after;
# ROUNDS=N rounds per row (default 7).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p target/peers
gcc -O2 -o target/peers/transpose_parts benches/peers/transpose_parts.c
uptime
target/peers/transpose_parts
uptime
