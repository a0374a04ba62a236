#!/usr/bin/env python3
"""Sounds loaded without stalling anyone (docs/SOUNDS.md, "Loading off the state loop"; issue 38's targets).

Starts tabbard (--audio null) on a sound directory with a notify socket of its own and
WATCHDOG_USEC, and measures, on the real clock:
  - start: from spawn to the first ping answered, and to the sounds all loaded;
  - sound.reload, then SIGHUP: while each runs, a ping every 2 ms on another connection
    (worst and p99 reply time), and how long the reload took;
  - the watchdog: the longest gap between two WATCHDOG=1 pings over the whole run, against
    the interval it pings at (half of WATCHDOG_USEC).
With --limit-file it also makes the largest files the documented limits allow (29.9 s,
384 kHz, 8 channels, 16-bit: a 184 MB WAV, and a FLAC of unknown length; in a temporary
directory) and measures each one's load time and the daemon's peak memory (VmHWM) against
the same daemon with no sounds.

  python3 bench/sounds/loadbench.py --daemon .build/release/tabbard \
      --sounds /usr/share/sounds/lomiri/ringtones [--limit-file] [--runs 3]

A daemon without sound.list's `loading` (before issue 38) is taken as loaded once it answers.
"""
import argparse
import re
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

WATCHDOG_USEC = 1_000_000  # pings every 0.5 s


class Notify:
    """The service manager's side of NOTIFY_SOCKET: collects WATCHDOG=1 times."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.pings = []
        self.done = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        self.sock.settimeout(0.2)
        while not self.done:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            if b"WATCHDOG=1" in data:
                self.pings.append(time.monotonic())

    def worst_gap(self):
        gaps = [b - a for a, b in zip(self.pings, self.pings[1:])]
        return max(gaps) if gaps else float("nan")


class Client:
    def __init__(self, path, deadline=30):
        end = time.monotonic() + deadline
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > end:
                    raise
                time.sleep(0.0005)
        self.f = self.s.makefile("rb")
        self.f.readline()  # hello
        self.id = 0

    def send(self, method, params=None):
        self.id += 1
        self.s.sendall((json.dumps({"id": self.id, "method": method, "params": params or {}}) + "\n").encode())
        return self.id

    def reply(self, want):
        while True:
            m = json.loads(self.f.readline())
            if m.get("id") == want:
                return m

    def call(self, method, params=None):
        return self.reply(self.send(method, params))


def loading(c):
    return c.call("sound.list")["result"].get("loading", False)


PINGER = r"""
import json, os, select, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rb"); f.readline()
print("ready", flush=True)
times = []; k = 0
while not select.select([sys.stdin], [], [], 0)[0]:
    k += 1
    t = time.monotonic()
    s.sendall(b'{"id":%d,"method":"ping"}\n' % k)
    f.readline()
    times.append(time.monotonic() - t)
    time.sleep(0.002)
print(json.dumps(times))
"""


def pings_while(sock, busy, start=lambda: None):
    """Pings every 2 ms on a connection of its own, from `start()` while busy() is true: the
    reply times (s). The pinger is a process of its own with one thread, connected before
    `start()`: this script's other threads (and Python's GIL) do not delay its replies."""
    p = subprocess.Popen([sys.executable, "-c", PINGER, sock], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdout.readline()  # connected, hello read
    start()
    while busy():
        time.sleep(0.005)
    out, _ = p.communicate(b"stop")
    return json.loads(out)


def summary(times):
    if not times:
        return "no ping fell inside"
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return f"{len(times)} pings, p50 {statistics.median(times) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, worst {times[-1] * 1000:.2f} ms"


def cpu_waited_us():
    """The kernel's CPU pressure (PSI): µs some task waited for a CPU, since boot (None without PSI)."""
    try:
        with open("/proc/pressure/cpu") as f:
            return int(f.readline().split("total=")[1])
    except (OSError, IndexError, ValueError):
        return None


def vm_hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_once(daemon, sounds, work):
    sock = os.path.join(work, "s")
    notify = Notify(os.path.join(work, "notify"))
    env = dict(os.environ, NOTIFY_SOCKET=os.path.join(work, "notify"), WATCHDOG_USEC=str(WATCHDOG_USEC))
    env.pop("TABBARD_SOCKET", None)
    log = open(os.path.join(work, "log"), "w")
    t0 = time.monotonic()
    waited0 = cpu_waited_us()
    p = subprocess.Popen([daemon, "--no-config", "--socket", sock, "--state", os.path.join(work, "state.json"),
                          "--sounds", sounds, "--audio", "null"], stderr=log, env=env)
    out = {}
    try:
        a = Client(sock)
        a.call("ping")
        out["first ping"] = (time.monotonic() - t0) * 1000
        while loading(a):
            time.sleep(0.005)
        out["loaded"] = time.monotonic() - t0
        b = Client(sock)
        # The same pings with nothing loading: what the machine gives anyway.
        t = time.monotonic()
        out["idle pings"] = pings_while(sock, lambda: time.monotonic() - t < 1.5)
        # sound.reload on A; pings on another connection meanwhile.
        state = {"busy": True}

        def wait_reload():
            a.reply(want)
            state["busy"] = False

        def reload():
            nonlocal want, t, th
            t = time.monotonic()
            want = a.send("sound.reload")
            th = threading.Thread(target=wait_reload)
            th.start()
        want, t, th = 0, 0.0, None
        out["reload pings"] = pings_while(sock, lambda: state["busy"], start=reload)
        th.join()
        out["reload"] = time.monotonic() - t
        # SIGHUP: the sounds reload while `loading` is true.
        hup = {"seen": False, "t": 0.0}

        def sighup():
            hup["t"] = time.monotonic()
            p.send_signal(signal.SIGHUP)

        def sighup_running():
            t = hup["t"]
            if time.monotonic() - t > 120:
                return False
            busy = loading(b)
            hup["seen"] = hup["seen"] or busy
            return busy or (not hup["seen"] and time.monotonic() - t < 2)
        out["sighup pings"] = pings_while(sock, sighup_running, start=sighup)
        out["sighup"] = time.monotonic() - hup["t"]
        out["watchdog gap"] = notify.worst_gap()
        out["rss MB"] = vm_hwm(p.pid)
        waited = cpu_waited_us()
        out["cpu pressure"] = (waited - waited0) / 1e4 / (time.monotonic() - t0) if waited is not None else float("nan")
    finally:
        p.terminate()
        p.wait(timeout=30)
        notify.done = True
        log.close()
    # What each swap of a loaded bank cost the loop, as the daemon logs it.
    with open(os.path.join(work, "log")) as f:
        out["swaps us"] = [int(m) for m in re.findall(r"swap_us=(\d+)", f.read())]
    return out


def limit_file(daemon, work):
    """The largest files the limits allow (29.9 s, 384 kHz, 8 channels): a WAV (183.7 MB), and the same
    as FLAC written to a pipe (its length unknown to libsndfile, so the result grows as it is read):
    each one's load time and the daemon's peak memory, and a daemon with no sounds for reference."""
    make = {
        "WAV": "sox -R -r 384000 -n -c 8 -b 16 '{path}.wav' synth 29.9 pinknoise vol 0.5",
        "FLAC, length unknown": "sox -R -r 384000 -n -c 8 -b 16 -t flac - synth 29.9 pinknoise vol 0.5 | cat > '{path}.flac'",
    }
    os.makedirs(os.path.join(work, "empty"), exist_ok=True)
    res = {}
    for label in ["no sounds"] + list(make):
        sounds = os.path.join(work, "empty")
        if label in make:
            sounds = tempfile.mkdtemp(dir=work)
            # Bounded by ulimit -f (KB) in case sox runs away.
            subprocess.run(["sh", "-c", "ulimit -f 400000; " + make[label].format(path=os.path.join(sounds, "limit"))],
                           check=True, stderr=subprocess.DEVNULL)
        w = tempfile.mkdtemp(dir=work)
        sock = os.path.join(w, "s")
        t0 = time.monotonic()
        p = subprocess.Popen([daemon, "--no-config", "--socket", sock, "--state", os.path.join(w, "state.json"),
                              "--sounds", sounds, "--audio", "null"], stderr=subprocess.DEVNULL)
        try:
            c = Client(sock)
            while loading(c):
                time.sleep(0.01)
            res[label] = (time.monotonic() - t0, vm_hwm(p.pid), len(c.call("sound.list")["result"]["sounds"]))
        finally:
            p.terminate()
            p.wait(timeout=30)
        if label in make:
            shutil.rmtree(sounds)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--limit-file", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tabbard-loadbench-") as work:
        print(f"{args.daemon} --sounds {args.sounds}, watchdog pings due every {WATCHDOG_USEC / 2e6:.2f} s")
        for k in range(args.runs):
            w = tempfile.mkdtemp(dir=work)
            o = run_once(args.daemon, args.sounds, w)
            print(f"run {k + 1}: first ping {o['first ping']:.1f} ms after spawn; all loaded {o['loaded']:.2f} s; "
                  f"peak RSS {o['rss MB']:.1f} MB")
            print(f"  idle 1.50 s: {summary(o['idle pings'])}")
            print(f"  sound.reload {o['reload']:.2f} s: {summary(o['reload pings'])}")
            print(f"  SIGHUP {o['sighup']:.2f} s: {summary(o['sighup pings'])}")
            print(f"  the swaps on the loop (start-up, sound.reload, SIGHUP): {', '.join(str(u) for u in o['swaps us'])} µs")
            print(f"  the machine: some task waited for a CPU {o['cpu pressure']:.0f} % of the run (PSI)")
            print(f"  watchdog: longest gap between pings {o['watchdog gap']:.3f} s (due every {WATCHDOG_USEC / 2e6:.2f} s)")
        if args.limit_file:
            r = limit_file(args.daemon, work)
            t0, m0, _ = r.pop("no sounds")
            for label, (t1, m1, n1) in r.items():
                print(f"limit file (29.9 s, 384 kHz, 8 ch; {label}): loaded={n1} in {t1:.2f} s from spawn "
                      f"(no sounds: {t0:.2f} s); peak RSS {m1:.1f} MB (no sounds: {m0:.1f} MB, +{m1 - m0:.1f} MB)")

if __name__ == "__main__":
    sys.exit(main())
