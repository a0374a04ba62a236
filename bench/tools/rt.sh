#!/usr/bin/env bash
# Round trips, one request at a time: starts SERVER pinned to CPU 0 (the floor, or a
# tabbard binary on the null sink), then 20,000 sequential requests from CPU 1
# (`tabbard-bench --round-trips`), and prints their p50 / p90 / p99 / max.
# usage: [REQUEST=select|touch] bench/tools/rt.sh floor|TABBARD_BINARY [N]
set -euo pipefail
kind=$1; n=${2:-20000}
here=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d /tmp/tabbard-rt.XXXXXX)
echo '{"max_clients":4096}' > "$d/c.json"
case $kind in
  floor) taskset -c 0 "$here/.build/bench/floor" "$d/s.sock" & ;;
  *) taskset -c 0 "$kind" --socket "$d/s.sock" --state "$d/st/state.json" --sounds "$here/Sounds" \
       --config "$d/c.json" --audio null --log-level warning >"$d/log" 2>&1 & ;;
esac
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$d"' EXIT
for _ in $(seq 100); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
sleep 0.3
echo "$kind, ${REQUEST:-select}: $(taskset -c 1 "$here/.build/release/tabbard-bench" --load "$d/s.sock" --round-trips "$n" --request "${REQUEST:-select}" | grep -i 'round trip')"
