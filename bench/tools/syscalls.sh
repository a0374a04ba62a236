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
. "$here/bench/tools/pinned.sh" sys
sleep 0.3
strace -c -o "$d/strace.txt" -p "$pid" &
spid=$!
sleep 0.5
taskset -c "$ccpu" "$here/.build/release/tabbard-bench" --load "$d/s.sock" --seconds 2 --clients 1 --request "${REQUEST:-select}"
kill -INT $spid; wait $spid || true
awk 'NR > 2 && $NF != "total" && $NF != "syscall" && $4 ~ /^[0-9]+$/ { print $4, $NF }' "$d/strace.txt" | sort -rn | head -12
