#!/usr/bin/env python3
"""Why a click after idle misses the restarted graph's first cycle (docs/PERFORMANCE.md, "The click after
idle: the first cycle"). Exploration, not pass/fail: a private rig (tests/pipewire/rig.sh, no pipewire-pulse),
tabbard on PipeWire's ALSA plugin with a short idle_stop_ms, a passive probe (nothing else plays: the graph
stops with tabbard's stream and restarts with the next click), and PipeWire's own debug log in both processes
(PIPEWIRE_DEBUG: the server's pw.node, the client's pw.node and alsa.pcm, with their CLOCK_MONOTONIC_RAW
timestamps). For every click it prints, in ms after the request:

  write    the plugin's start callback (snd_pcm_start from inside the click's snd_pcm_writei)
  client   tabbard's node RUNNING in tabbard's own process ("(ALSA Playback-0) idle -> running": logged after
           the node's trigger eventfd was cleared and put back in the plugin's data loop, do_node_add)
  sink     the null sink RUNNING in the server ("(tabbard_rig_sink-N) idle -> running": logged just after its
           Start, which arms its timer at once: the restarted graph's first cycle begins here)
  onset    the click's first frame at the sink (the probe)
  cycle    "first" when onset − sink < half a quantum (the onset is its cycle's start), else "later"

and a summary crossing "client before sink" with "first cycle". PipeWire 0.3.65's server starts the sink once
the client has answered the ping that follows its Start command, but the client completes that Start (and puts
its node back in its data loop, clearing the eventfd) only in a later turn of its main loop: when the server
wins, its first trigger is read away and the node runs only in the next cycle.

  python3 bench/sink/idletrace.py --daemon .build/release/tabbard --sounds Sounds --rig tests/pipewire/rig.sh \\
    --monitor .build/bench/pwmonitor [--clicks 40] [--keep DIR]
"""

import argparse
import json
import os
import random
import re
import shutil
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "pipewire"))
from pwrig import Client, Daemon, Monitor, Rig, wait_for  # noqa: E402

LINE = re.compile(r"\[\w\]\[(\d+)\.(\d+)\]\s*\S+\s*\|\s*\[[^\]]*\]\s*(.*)")


def raw_minus_mono():
    """CLOCK_MONOTONIC_RAW (PipeWire's log timestamps) minus CLOCK_MONOTONIC (the probe's and our times), ns."""
    a = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    r = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    b = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    return r - (a + b) // 2


def events(path, patterns):
    """(mono-raw ns, name) for each log line matching one of patterns {name: regex}."""
    out = []
    try:
        f = open(path, errors="replace")
    except OSError:
        return out
    with f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            for name, rx in patterns.items():
                if rx.search(line):
                    out.append((int(m.group(1)) * 1_000_000_000 + int(m.group(2)) * 1000, name))
    return out


def first_after(evs, name, t, limit):
    for ts, n in evs:
        if n == name and t <= ts <= t + limit:
            return ts
    return None


def set_thread(pid, comm, how):
    """Experiment: the scheduling of the daemon's thread named comm (by its TID)."""
    kind, value = how.split(":")
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().strip() != comm:
                continue
        if kind == "fifo":
            os.sched_setscheduler(int(tid), os.SCHED_FIFO, os.sched_param(int(value)))
        else:
            os.setpriority(os.PRIO_PROCESS, int(tid), int(value))
        print("thread %s (%s): %s" % (tid, comm, how), file=sys.stderr)
        return
    raise RuntimeError("no thread %s in %d" % (comm, pid))


def main():
    ap = argparse.ArgumentParser()
    for k in ("daemon", "sounds", "rig", "monitor"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--clicks", type=int, default=40)
    ap.add_argument("--idle-stop-ms", type=int, default=300)
    ap.add_argument("--keep", help="copy the logs and the per-click table (JSON) here")
    ap.add_argument("--json", action="store_true", help="print the per-click table as JSON")
    ap.add_argument("--plugin-thread", help="experiment: set the plugin's main-loop thread (alsa-pipewire) in the "
                    "daemon to fifo:PRIO or nice:N once the daemon is up")
    a = ap.parse_args()

    os.environ["PIPEWIRE_DEBUG"] = "pw.node:D"      # the servers inherit it (rig.sh spawns them with env)
    rig = Rig(a.rig)
    try:
        rig.start("--no-pulse")
    finally:
        del os.environ["PIPEWIRE_DEBUG"]
    client_log = os.path.join(rig.dir, "tabbard-pipewire.log")
    started = []
    rows = []
    try:
        base = dict(rig.env)
        rig.env = dict(base, PIPEWIRE_DEBUG="pw.node:D,alsa.pcm:D", PIPEWIRE_LOG=client_log)
        d = Daemon(a.daemon, os.path.abspath(a.sounds), rig, ["--audio", "alsa", "--alsa-device", "rig"],
                   config={"idle_stop_ms": a.idle_stop_ms})
        rig.env = base
        started.append(d)
        if a.plugin_thread:
            set_thread(d.proc.pid, "alsa-pipewire", a.plugin_thread)
        c = Client(d.socket)
        # A passive probe sees only cycles some stream runs: start it while the daemon plays.
        box = {}
        th = threading.Thread(target=lambda: box.setdefault("m", Monitor(a.monitor, rig, extra=["--passive"])))
        th.start()
        while th.is_alive():
            c.reply(c.send("sound.play", {"name": "click"})[0])
            th.join(0.2)
        mon = box["m"]
        started.append(mon)

        def idle():
            return c.call("stats.get")["audio"]["engine"].get("state") == "idle"
        off = raw_minus_mono()
        reqs = []
        for _ in range(a.clicks):
            wait_for(idle, 30, "the idle stop")
            time.sleep(0.3 + random.random() * 0.4)
            rid, t0 = c.send("sound.play", {"name": "click"})
            c.reply(rid)
            o = mon.wait_onset(t0, 2.0)
            reqs.append((t0, o[0] if o else None))
        off_end = raw_minus_mono()
        c.close()
        d.stop()
        started.remove(d)
        mon.stop()
        started.remove(mon)

        # node_update_state(RUNNING) logs "start node" just before it puts the node in its data loop
        # (do_node_add) and "X -> running" after; in the server, before and after the sink's Start.
        cli = events(client_log, {"write": re.compile(r"snd_pcm_pipewire_start\(\)\] 0x[0-9a-f]+: start$"),
                                  "client0": re.compile(r"node_update_state\(\)\] 0x[0-9a-f]+: start node"),
                                  "client": re.compile(r"\(ALSA Playback-\d+\) idle -> running")})
        srv = events(os.path.join(rig.dir, "log", "pipewire.log"),
                     {"sink0": re.compile(r"node_update_state\(\)\] 0x[0-9a-f]+: start node driving:1 driver:1"),
                      "sink": re.compile(r"\(tabbard_rig_sink-\d+\) (idle|suspended) -> running"),
                      "slow": re.compile(r"\(ALSA Playback-\d+\) client too slow")})
        for t0, onset in reqs:
            r0 = t0 + off                                  # the request on the log's clock
            w = first_after(cli, "write", r0, 50_000_000)
            cl0 = first_after(cli, "client0", r0, 50_000_000)
            cl = first_after(cli, "client", r0, 50_000_000)
            sk0 = first_after(srv, "sink0", r0, 50_000_000)
            sk = first_after(srv, "sink", r0, 50_000_000)
            slow = first_after(srv, "slow", r0, 20_000_000)

            def ms(x):
                return None if x is None else round((x - r0) / 1e6, 3)
            row = dict(write=ms(w), client_from=ms(cl0), client=ms(cl), sink_from=ms(sk0), sink=ms(sk), onset=None if onset is None else round((onset - t0) / 1e6, 3),
                       too_slow=slow is not None)
            if row["onset"] is not None and row["sink"] is not None:
                # the onset is its cycle's start: ≈ sink when in the first cycle, one quantum later when not
                row["cycle"] = "first" if row["onset"] - row["sink"] < 0.5 * 128 / 48 else "later"
            if None not in (cl0, cl, sk0, sk):
                # the client's do_node_add lies in [client_from, client], the sink's first cycle starts just
                # after sink_from (its Start arms its timer at once)
                row["order"] = ("client first" if cl < sk0 else "sink first" if cl0 > sk else "overlap")
            rows.append(row)
        result = dict(clicks=rows, clock_offset_ns=[off, off_end])
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            shutil.copy(client_log, os.path.join(a.keep, "tabbard-pipewire.log"))
            shutil.copy(os.path.join(rig.dir, "log", "pipewire.log"), os.path.join(a.keep, "pipewire.log"))
            with open(os.path.join(a.keep, "clicks.json"), "w") as f:
                json.dump(result, f, indent=1)
    finally:
        for p in started:
            p.stop()
        rig.stop()

    if a.json:
        json.dump(result, sys.stdout, indent=1)
        return
    print("%5s %7s %15s %15s %7s  %-6s %-13s %s" % ("click", "write", "client", "sink", "onset", "cycle", "order",
                                                    "server: tabbard's node too slow"))
    cross = {}
    for k, r in enumerate(rows):
        print("%5d %7s %7s–%-7s %7s–%-7s %7s  %-6s %-13s %s" % (
            k, r["write"], r["client_from"], r["client"], r["sink_from"], r["sink"], r["onset"], r.get("cycle", "?"),
            r.get("order", "?"), "yes" if r["too_slow"] else ""))
        if "order" in r and "cycle" in r:
            key = (r["order"], r["cycle"])
            cross[key] = cross.get(key, 0) + 1
    print("ms after the request; summary (which was RUNNING first, the onset's cycle):")
    for key in sorted(cross):
        print("  %-13s %-6s %3d" % (key[0], key[1], cross[key]))


if __name__ == "__main__":
    main()
