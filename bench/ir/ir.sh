#!/usr/bin/env bash
# Instructions per request (deterministic, unlike timings): runs TABBARD_BINARY under
# callgrind, collecting only inside Server.run (the state loop), drives pipelined
# tab.select load at it, and prints total instructions / requests served.
# usage: [REQUEST=select|touch] bench/ir/ir.sh TABBARD_BINARY [SECONDS]   (make bench runs both)
#        ROUND_TRIPS=N bench/ir/ir.sh …   N sequential round trips (after N/10 more
#          to warm up) instead: each request is a loop turn of its own, so the figure
#          includes the loop's per-turn work
#        SUBSCRIBED=1 bench/ir/ir.sh …     with one more client subscribed to every
#          topic (as a front end is), reading its events: the figure then includes
#          building, encoding and sending each change's events
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
# (On any exit, the daemon under callgrind goes too: a failed step must not leave it running.)
trap '[ -z "$pid" ] || kill -TERM $pid 2>/dev/null || true; rm -rf "$d"' EXIT
for _ in $(seq 600); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
sleep 1
if [ -n "${SUBSCRIBED:-}" ]; then
  python3 - "$d/s.sock" > "$d/sub.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe"}\n')
f = s.makefile('rb')
line = f.readline()
while b'"id":1,' not in line: line = f.readline()  # (the hello comes first)
assert b'"result"' in line, line
print("subscribed", flush=True)
while f.read1(1 << 16): pass
PY
  sub=$!
  for _ in $(seq 200); do grep -q subscribed "$d/sub.log" && break; [ -e /proc/$sub ] || break; sleep 0.05; done
  grep -q subscribed "$d/sub.log" || { cat "$d/sub.log" >&2; echo "ir.sh: the subscriber did not subscribe" >&2; kill $pid; wait $pid; exit 1; }
fi
if [ -n "${ROUND_TRIPS:-}" ]; then
  "$here/.build/release/tabbard-bench" --load "$d/s.sock" --round-trips "$ROUND_TRIPS" --request "${REQUEST:-select}" >/dev/null
  sent=$((ROUND_TRIPS + ROUND_TRIPS / 10))
else
  out=$("$here/.build/release/tabbard-bench" --load "$d/s.sock" --seconds "$secs" --clients "${CLIENTS:-1}" --request "${REQUEST:-select}")
  sent=$(echo "$out" | sed -n 's/.*(\([0-9]*\) sent).*/\1/p')
fi
kill -TERM $pid; wait $pid || true
pid=  # (reaped: the trap must not signal a PID that may be reused)
[ -n "${sub:-}" ] && { wait $sub || true; }
total=$(callgrind_annotate "$d/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
echo "requests: $sent  instructions in the state loop: $total  per request: $((total / sent))"
[ -n "${KEEP:-}" ] && cp "$d/cg.out" "${KEEP}" || true
