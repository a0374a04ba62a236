# Sourced by bench/tools/ab.sh and syscalls.sh: starts tabbard ($bin) pinned to CPU 0 on the
# null sink in a fresh directory ($d, named after $1), sets $pid, stops it and removes $d on
# exit, and returns once its socket is there. Needs $bin and $here.
d=$(mktemp -d "/tmp/tabbard-$1.XXXXXX")
echo '{"max_clients":4096}' > "$d/c.json"
taskset -c 0 "$bin" --socket "$d/s.sock" --state "$d/st/state.json" --sounds "$here/Sounds" \
  --config "$d/c.json" --audio null --log-level warning >"$d/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$d"' EXIT
for _ in $(seq 100); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
