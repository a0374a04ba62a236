#!/usr/bin/env bash
# Where a server's time per request goes: starts SERVER pinned to CPU 0, drives
# pipelined tab.select load (64 in flight per client) from CLIENT_CPU for 2 s, and
# prints the rate and the server's user and system CPU time per request (utime and
# stime of /proc/PID/stat, all its threads).
# usage: bench/tools/cpu.sh floor|floor+journal|floor+overwrite|floor+ring|floor+mmap|TABBARD_BINARY [CLIENT_CPU] [CLIENTS]
#        STATE_DIR=/dev/shm/x bench/tools/cpu.sh …   puts tabbard's state elsewhere (tmpfs: no fsync)
#        ROUND_TRIPS=20000 bench/tools/cpu.sh floor|TABBARD_BINARY 1   sequential round trips
#          instead (one request at a time from CLIENT_CPU): p50 / p90 / p99 / max
#        BENCH=PATH bench/tools/cpu.sh …   drives the load with that tabbard-bench build (default:
#          .build/release/tabbard-bench), e.g. to compare two versions of the bench's clients
set -euo pipefail
kind=$1; ccpu=${2:-0}; clients=${3:-1}
here=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH:-$here/.build/release/tabbard-bench}
d=$(mktemp -d /tmp/tabbard-cpu.XXXXXX)
state=${STATE_DIR:-$d/st}
mkdir -p "$state"
echo '{"max_clients":4096}' > "$d/c.json"
case $kind in
  floor) taskset -c 0 "$here/.build/bench/floor" "$d/s.sock" & ;;
  floor+journal) taskset -c 0 "$here/.build/bench/floor" --journal "$state/journal" "$d/s.sock" & ;;
  floor+overwrite) taskset -c 0 "$here/.build/bench/floor" --journal-overwrite "$state/journal" "$d/s.sock" & ;;
  floor+ring) taskset -c 0 "$here/.build/bench/floor" --journal-ring "$state/journal" "$d/s.sock" & ;;
  floor+mmap) taskset -c 0 "$here/.build/bench/floor" --journal-mmap "$state/journal" "$d/s.sock" & ;;
  *) taskset -c 0 "$kind" --socket "$d/s.sock" --state "$state/state.json" --sounds "$here/Sounds" \
       --config "$d/c.json" --audio null --log-level warning >"$d/log" 2>&1 & ;;
esac
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$d"; if [ -n "${STATE_DIR:-}" ]; then rm -rf "$STATE_DIR"; fi' EXIT
for _ in $(seq 100); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
sleep 0.3
if [ -n "${ROUND_TRIPS:-}" ]; then
  echo "$kind, ${REQUEST:-select}, client CPU $ccpu: $(taskset -c "$ccpu" "$bench" --load "$d/s.sock" --round-trips "$ROUND_TRIPS" --request "${REQUEST:-select}" | grep -i 'round trip')"
  exit 0
fi
tick=$(getconf CLK_TCK)
read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
out=$(taskset -c "$ccpu" "$bench" --load "$d/s.sock" --seconds 2 --clients "$clients" --request "${REQUEST:-select}")
read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
sent=$(echo "$out" | sed -n 's/.*(\([0-9]*\) sent).*/\1/p')
ns() { echo $(( ($1) * 1000000000 / tick / sent )); }
echo "$kind, client CPU $ccpu × $clients: $out; server per request: user $(ns "$u1 - $u0") ns, system $(ns "$s1 - $s0") ns"
