#!/usr/bin/env bash
# System calls of the state loop's thread under pipelined load: starts TABBARD_BINARY
# pinned to CPU 0, attaches `strace -c` to its main thread only (not the audio thread,
# not the compaction helper), drives 2 s of pipelined load (64 in flight, one client)
# from CLIENT_CPU, and prints each call's count and the loop turns (epoll_wait) they
# were made in.
# usage: [REQUEST=select|touch] bench/tools/syscalls.sh TABBARD_BINARY [CLIENT_CPU]
set -euo pipefail
bin=$1; ccpu=${2:-1}
here=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d /tmp/tabbard-sys.XXXXXX)
echo '{"max_clients":4096}' > "$d/c.json"
taskset -c 0 "$bin" --socket "$d/s.sock" --state "$d/st/state.json" --sounds "$here/Sounds" \
  --config "$d/c.json" --audio null --log-level warning >"$d/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$d"' EXIT
for _ in $(seq 100); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
sleep 0.3
strace -c -o "$d/strace.txt" -p "$pid" &
spid=$!
sleep 0.5
taskset -c "$ccpu" "$here/.build/release/tabbard-bench" --load "$d/s.sock" --seconds 2 --clients 1 --request "${REQUEST:-select}"
kill -INT $spid; wait $spid || true
awk 'NR > 2 && $NF != "total" && $NF != "syscall" && $4 ~ /^[0-9]+$/ { print $4, $NF }' "$d/strace.txt" | sort -rn | head -12
