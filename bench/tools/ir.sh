#!/usr/bin/env bash
# Instructions per request (deterministic, unlike timings): runs TABBARD_BINARY under
# callgrind, collecting only inside Server.run (the state loop), drives pipelined
# tab.select load at it, and prints total instructions / requests served.
# usage: [REQUEST=select|touch] bench/tools/ir.sh TABBARD_BINARY [SECONDS]
#        ROUND_TRIPS=N bench/tools/ir.sh …   N sequential round trips (after N/10 more
#          to warm up) instead: each request is a loop turn of its own, so the figure
#          includes the loop's per-turn work
set -euo pipefail
bin=$1; secs=${2:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d /tmp/tabbard-ir.XXXXXX)
echo '{"max_clients":4096}' > "$d/c.json"
valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" --collect-atstart=no \
  --toggle-collect='$s12TabBarServer0C0C3runs5Int32VyF' \
  "$bin" --socket "$d/s.sock" --state "$d/st/state.json" --sounds "$here/Sounds" \
  --config "$d/c.json" --audio null --log-level warning >"$d/log" 2>&1 &
pid=$!
trap 'rm -rf "$d"' EXIT
for _ in $(seq 600); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
sleep 1
if [ -n "${ROUND_TRIPS:-}" ]; then
  "$here/.build/release/tabbard-bench" --load "$d/s.sock" --round-trips "$ROUND_TRIPS" --request "${REQUEST:-select}" >/dev/null
  sent=$((ROUND_TRIPS + ROUND_TRIPS / 10))
else
  out=$("$here/.build/release/tabbard-bench" --load "$d/s.sock" --seconds "$secs" --clients "${CLIENTS:-1}" --request "${REQUEST:-select}")
  sent=$(echo "$out" | sed -n 's/.*(\([0-9]*\) sent).*/\1/p')
fi
kill -TERM $pid; wait $pid || true
total=$(callgrind_annotate "$d/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
echo "requests: $sent  instructions in the state loop: $total  per request: $((total / sent))"
[ -n "${KEEP:-}" ] && cp "$d/cg.out" "${KEEP}" || true
