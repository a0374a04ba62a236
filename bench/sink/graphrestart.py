"""Clicks that restart the graph (issue 38's damaged after-idle click; docs/DESKTOP.md, "A click that restarts the
graph"): N clicks through `default`, each once tabbard's stream has stopped and the rig's sink is no longer RUNNING,
judged by two passive probes (pwmonitor --passive --realtime 83); prints each click's verdict, latency, whether it
was reported (sound.failed), and for a click not intact what each probe has (its gaps and `late at` lines near it).

    N=60 IDLE_MS=2000 .build/desktop-venv/bin/python bench/sink/graphrestart.py .build/release/tabbard

Needs the rig (make pipewire-deps, .build/rig/pwmonitor); figures, not pass/fail."""
import json, os, sys, threading, subprocess, time
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
for d in ("rig", "tests/pipewire", "bench/sink"):
    sys.path.insert(0, os.path.join(ROOT, d))
from pwrig import Monitor, judge, wait_for, click_at, damage_kind
import rigcase
from rigcase import P, RigCase, after_click, expected_click, SILENCE_AFTER
from sinkbench import level_vs
import unittest

N = int(os.environ.get("N", "60"))
IDLE = int(os.environ.get("IDLE_MS", "2000"))

class Inv(RigCase):
    def sink_state(self):
        out = subprocess.run(["pactl", "list", "short", "sinks"], env=self.rig.child_env(), check=True, stdout=subprocess.PIPE, text=True, timeout=30).stdout
        return next((l.split("\t")[4] for l in out.splitlines() if "tabbard_rig_sink" in l), None)
    def test_run(self):
        self.rig.start()
        path = os.path.join(self.rig.dir, "t.json")
        with open(path, "w") as f:
            json.dump({"idle_stop_ms": IDLE}, f)
        c = self.start_daemon("--audio", "alsa", "--config", path, device="default")
        c.call("subscribe", {"topics": ["sound"]})
        box = {}
        ths = [threading.Thread(target=lambda k=k: box.setdefault(k, Monitor(P.monitor, self.rig, raw=os.path.join(self.rig.dir, "c%d.raw" % k), extra=["--passive", "--realtime", "83"]))) for k in (1, 2)]
        for t in ths: t.start()
        while any(t.is_alive() for t in ths):
            self.play(c)
            for t in ths: t.join(0.1)
        self.monitor, self.second = box[1], box[2]
        eng = lambda: c.call("stats.get")["audio"]["engine"]
        asked, voices = [], []
        for k in range(N):
            wait_for(lambda: eng()["state"] == "idle", 60, "idle", step=0.05)
            wait_for(lambda: self.sink_state() != "RUNNING", 30, "graph stopped", step=0.05)
            time.sleep(0.2 + (k % 7) * 0.13)   # the click at several phases after the stop (seeded by k)
            v, t0 = self.play(c); asked.append(t0); voices.append(v)
            o = self.heard(t0)
            if o is not None: after_click(o[0])
        wait_for(lambda: eng()["state"] == "idle", 60, "end")
        c.pump(0.3)
        e = eng()
        failed = {x["params"].get("voice") for x in c.events if x.get("method") == "sound.failed"}
        self.monitor.stop(); self.second.stop()
        ref = expected_click(); res = {}
        for k, t0 in enumerate(asked):
            t1 = asked[k + 1] if k + 1 < len(asked) else float("inf")
            verdict, on, detail = judge((self.monitor, self.second), t0, t1, ref, SILENCE_AFTER)
            res[verdict] = res.get(verdict, 0) + 1
            lat = (on - t0) / 1e6 if on else None
            extra = ""
            if verdict != "intact":
                for m in (self.monitor, self.second):
                    o = [x for x in m.onsets if t0 <= x[0] < t1]
                    if o:
                        fr = o[0][1]
                        near = [l for l in m.lines if (l.startswith("gap") or l.startswith("late")) and abs(int(l.split()[-1]) - fr) < 4096]
                        extra += " | probe: onset frame %d %s %s %s; %s" % (fr, click_at(m.samples(), fr, ref, SILENCE_AFTER), damage_kind(m.samples(), fr, ref), level_vs(m.samples(), fr, ref), near)
            print("click %2d %-9s lat %s failed=%s %s %s" % (k, verdict, "%.2f" % lat if lat else "-", voices[k] in failed, detail or "", extra), file=sys.stderr)
        print("SUMMARY", res, "xruns", e.get("xruns"), "idle_reopens", e.get("idle_reopens"), "sound.failed", len(failed & set(voices)), file=sys.stderr)

P.daemon = os.path.abspath(sys.argv[1])
P.sounds, P.rig, P.monitor = (os.path.join(ROOT, p) for p in ("Sounds", "rig/rig.sh", ".build/rig/pwmonitor"))
unittest.main(argv=["x", "Inv"], verbosity=1)
