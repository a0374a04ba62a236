#!/usr/bin/env bash
# Before/after figures for one hot-path change: starts the given tabbard pinned to
# CPU 0, drives pipelined tab.select load (1 client × 64 in flight) from CPU 1 and
# from CPU 0, RUNS times each, and prints every rate plus sequential round trips.
# usage: bench/tools/ab.sh TABBARD_BINARY [RUNS]
set -euo pipefail
bin=$1; runs=${2:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
benchbin=$here/.build/release/tabbard-bench
. "$here/bench/tools/pinned.sh" ab
sleep 0.2
for cpu in 1 0; do
  for _ in $(seq "$runs"); do
    printf 'client cpu %s: ' "$cpu"; taskset -c "$cpu" "$benchbin" --load "$d/s.sock" --seconds 2
  done
  printf 'client cpu %s, 8 clients: ' "$cpu"; taskset -c "$cpu" "$benchbin" --load "$d/s.sock" --clients 8 --seconds 2
done
