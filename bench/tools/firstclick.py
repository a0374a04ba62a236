#!/usr/bin/env python3
"""The first click after the daemon opens its device, at the sink of a private PipeWire.

For each run: start the rig's PipeWire, start tabbard on it (--audio alsa --alsa-device rig), and as
soon as its socket answers ask for a click; the figure is request → the click's onset at the null
sink's monitor (pwmonitor, as sinkbench measures it). A click requested then arrives while the
audio thread is still measuring the freshly opened device (`settle`). Also, with no click at all,
the daemon's context switches per second while it sits idle after start-up (all its threads, the
plugin's included: /proc/PID/task/*/status), 1–6 s after its socket answered.

usage: bench/tools/firstclick.py --daemon BIN --sounds DIR --rig tests/pipewire/rig.sh
                                 --monitor .build/bench/pwmonitor [--runs N] [--rig-option ...]
"""
import argparse
import glob
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "pipewire"))
from pwrig import Client, Daemon, Monitor, Rig, wait_for  # noqa: E402


def switches(pid):
    total = 0
    for st in glob.glob("/proc/%d/task/*/status" % pid):
        try:
            with open(st) as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split(":")[1])
        except OSError:
            pass
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--rig", required=True)
    ap.add_argument("--monitor", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rig-option", action="append", default=[])
    a = ap.parse_args()
    lat, missing, idle = [], 0, []
    for i in range(a.runs):
        rig = Rig(os.path.abspath(a.rig), a.rig_option).start()
        mon = Monitor(os.path.abspath(a.monitor), rig)
        d = Daemon(os.path.abspath(a.daemon), os.path.abspath(a.sounds), rig,
                   ["--audio", "alsa", "--alsa-device", "rig", "--log-level", "debug"])
        try:
            c = Client(d.socket)
            if i % 2 == 0:
                rid, t0 = c.send("sound.play", {"name": "click"})
                c.reply(rid)
                o = mon.wait_onset(t0, 5)
                if o is None:
                    missing += 1
                else:
                    lat.append((o[0] - t0) / 1e6)
            else:
                time.sleep(1)   # a benchmark's settling time, not a test's wait
                s0, t0 = switches(d.proc.pid), time.monotonic()
                time.sleep(5)
                idle.append((switches(d.proc.pid) - s0) / (time.monotonic() - t0))
            c.close()
        finally:
            d.stop()
            mon.stop()
            rig.stop()
            shutil.rmtree(rig.dir, ignore_errors=True)
            shutil.rmtree(d.dir, ignore_errors=True)
    if lat:
        lat.sort()
        print("first click at the sink (ms): n=%d missing=%d p50=%.2f max=%.2f all=%s"
              % (len(lat), missing, statistics.median(lat), lat[-1], " ".join("%.1f" % x for x in lat)))
    if idle:
        print("idle after start-up, context switches/s (all threads): %s" % " ".join("%.1f" % x for x in idle))


if __name__ == "__main__":
    main()
