#!/usr/bin/env bash
# The memory access patterns of a transpose, alone, against memcpy (benches/peers/access_patterns.c
# says which and why). Needs gcc. `uptime` before and after; ROUNDS=N rounds per pattern (default 7).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p target/peers
gcc -O2 -o target/peers/access_patterns benches/peers/access_patterns.c
uptime
target/peers/access_patterns
uptime
