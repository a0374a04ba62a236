#!/usr/bin/env python3
"""The Python client's round trip beside tabbard-bench's raw client (a figure, not a test).

Starts a daemon (--no-config --audio null, a private socket and state), then, alternately in
ROUNDS rounds so both see the same machine: tabbard-bench --load SOCKET --round-trips N --request
select (its raw client: a prebuilt request line, the reply read to its newline), and N sequential
`Client.select(index=k % 2, source="program")` calls of the tabbard package (the requests
tabbard-bench sends: tabs 0 and 1 in turn, silent) (typed helper → JSON encode → send → read → JSON
decode → result dict), each call timed. Also a raw-socket loop in Python (bytes out, bytes in
to the newline, no JSON), to show what the package adds over Python's own socket calls.

Usage: bench_roundtrip.py --daemon PATH --sounds DIR [--bench PATH] [--n N] [--rounds R]
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import tabbard


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p))]


def python_client(path, n):
    times = []
    with tabbard.Client(path) as c:
        for i in range(200):
            c.select(index=i % 2, source="program")
        for i in range(n):
            t0 = time.perf_counter_ns()
            c.select(index=i % 2, source="program")
            times.append((time.perf_counter_ns() - t0) / 1000)
    return times


def raw_python(path, n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    buf = b""
    while b"\n" not in buf:
        buf += s.recv(65536)
    buf = buf[buf.index(b"\n") + 1:]
    lines = [b'{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0,"source":"program"}}\n',
             b'{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":1,"source":"program"}}\n']
    times = []
    for i in range(n + 200):
        t0 = time.perf_counter_ns()
        s.sendall(lines[i % 2])
        while b"\n" not in buf:
            buf += s.recv(65536)
        buf = buf[buf.index(b"\n") + 1:]
        if i >= 200:
            times.append((time.perf_counter_ns() - t0) / 1000)
    s.close()
    return times


def bench_raw(bench, daemon, path, n):
    out = subprocess.run([bench, "--daemon", daemon, "--load", path, "--round-trips", str(n), "--request", "select"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    vals = re.findall(r"(p50|p90|p99) ([\d.]+) (ns|µs|ms|s)\b", out)
    if len(vals) != 3:
        raise SystemExit(f"tabbard-bench printed: {out!r}")
    scale = {"ns": 0.001, "µs": 1.0, "ms": 1000.0, "s": 1e6}
    return tuple(float(v) * scale[u] for _, v, u in vals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--bench", default=None, help="tabbard-bench (default: next to the daemon)")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=0, help="the CPU the daemon is pinned to (-1: none)")
    ap.add_argument("--client-cpu", type=int, default=1, help="the CPU every client runs on (-1: none)")
    a = ap.parse_args()
    if a.client_cpu >= 0:
        os.sched_setaffinity(0, {a.client_cpu})  # tabbard-bench inherits it
    bench = a.bench or os.path.join(os.path.dirname(a.daemon), "tabbard-bench")
    tmp = tempfile.mkdtemp(prefix="tabbard-pybench-")
    path = os.path.join(tmp, "s")
    log = open(os.path.join(tmp, "log"), "w")
    pin = ["taskset", "-c", str(a.server_cpu)] if a.server_cpu >= 0 else []
    d = subprocess.Popen(pin + [a.daemon, "--no-config", "--socket", path, "--state", os.path.join(tmp, "state.json"),
                          "--audio", "null", "--sounds", a.sounds], stdout=log, stderr=log)
    try:
        for _ in range(500):
            try:
                tabbard.Client(path).close()
                break
            except tabbard.ConnectError:
                time.sleep(0.01)
        raw, py, rawpy = [], [], []
        for r in range(a.rounds):
            if os.path.exists(bench):
                raw.append(bench_raw(bench, a.daemon, path, a.n))
            t = python_client(path, a.n)
            py.append((pct(t, 0.5), pct(t, 0.9), pct(t, 0.99)))
            t = raw_python(path, a.n)
            rawpy.append((pct(t, 0.5), pct(t, 0.9), pct(t, 0.99)))
        where = f"daemon on CPU {a.server_cpu}, clients on CPU {a.client_cpu}" if a.server_cpu >= 0 else "unpinned"
        print(f"{a.n} sequential tab.select round trips per run, {a.rounds} runs ({where}), medians of the runs (µs):")
        print(f"{'client':<42}{'p50':>8}{'p90':>8}{'p99':>8}")

        def row(name, runs):
            print(f"{name:<42}" + "".join(f"{statistics.median(x[i] for x in runs):8.1f}" for i in range(3)))
        if raw:
            row("tabbard-bench (raw client, Swift)", raw)
        row("tabbard.Client.select (Python)", py)
        row("raw socket loop (Python, no JSON)", rawpy)
        if raw:
            ratio = statistics.median(x[0] for x in py) / statistics.median(x[0] for x in raw)
            print(f"Python client p50 / raw client p50 = {ratio:.2f}")
    finally:
        d.terminate()
        d.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
