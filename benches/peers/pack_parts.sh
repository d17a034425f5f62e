#!/usr/bin/env bash
# The int4 pack under TPU tiles taken apart (loads, arithmetic, stores) against memcpy
# (benches/peers/pack_parts.c says which and why). Needs gcc. `uptime` before and after;
# ROUNDS=N rounds per row (default 7).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p target/peers
gcc -O2 -o target/peers/pack_parts benches/peers/pack_parts.c
uptime
target/peers/pack_parts
uptime
