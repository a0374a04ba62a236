#!/usr/bin/env python3
"""Stops the running process whose executable is BINARY with SIGSTOP for 2-6 ms every 20-90 ms (seeded), for
SECONDS: its PipeWire data thread then misses the driver's cycle, as in the rare hole of docs/AUDIO.md ("A click that
restarts the graph"). Run it beside GraphRestart: python3 bench/sink/stops.py BINARY SECONDS SEED"""
import os, random, signal, sys, time
binary, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
me = os.getuid()
def find():
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            if os.readlink("/proc/%s/exe" % p) == binary: return int(p)
        except OSError: pass
    return None
end = time.monotonic() + seconds
pid, n = None, 0
while time.monotonic() < end:
    if pid is None or not os.path.exists("/proc/%d" % pid):
        pid = find()
        if pid is None: time.sleep(0.2); continue
    time.sleep(rnd.uniform(0.02, 0.09))
    try:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(rnd.uniform(0.002, 0.006))
    finally:
        try: os.kill(pid, signal.SIGCONT)
        except ProcessLookupError: pid = None
    n += 1
print("stops", n, file=sys.stderr)
