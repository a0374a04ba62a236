#!/usr/bin/env python3
"""The click at the sink (docs/PERFORMANCE.md): request → the click's first frame consumed by the null sink of a
private headless PipeWire (rig/rig.sh, WirePlumber, pipewire-pulse), read by pwmonitor on the
sink's monitor with graph-cycle times (CLOCK_MONOTONIC). Request time = just before send() (tabbard, caclick's
ca_context_play) or just before the client process is spawned (aplay, paplay, pactl play-sample).

For each server configuration (the default quantum; min-quantum 1024) it calibrates the probe with a native
stream (pwmonitor --calibrate: the residual must be 0), then measures, one after the other:
  tabbard steady (a click every 150–500 ms, the stream running), tabbard after idle (gaps of 3.1–3.5 s; 30 of them, 8 with --quick),
  aplay -D rig click.wav, paplay click.wav, pactl play-sample (cached), libcanberra (caclick: one context,
  cached sample), the last two also with the click after 40 ms of silence (onset − 40 ms; Bench.padded) — and, at the default quantum only, tabbard steady through PulseAudio's ALSA plugin
  (--alsa-device rig_pulse: `type pulse` against pipewire-pulse).
Every tabbard click is also checked bit-exact in the capture. Writes JSON (--out) and prints a table.
Figures, not pass/fail: exits 0 whenever the measurements ran."""

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "rig"))  # pwrig, tabbardclient
from pwrig import Daemon, Monitor, Rig, any_blind, click_at, damage_kind, wait_for, wav_frames  # noqa: E402
from tabbardclient import Client  # noqa: E402


# Leading silence of the padded click for the cached-sample rows (Bench.padded): more than the ~10 ms the
# unlinked sample stream loses, and the probe's 30 ms of silence before an onset.
PAD_MS = 40


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def dist(ms):
    if not ms:
        return {"count": 0}
    s = sorted(ms)

    def q(x):
        return round(s[min(len(s) - 1, int(round((len(s) - 1) * x)))], 2)
    return {"count": len(s), "p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99), "max_ms": round(s[-1], 2)}


def progress(msg):
    print("sinkbench: " + msg, file=sys.stderr, flush=True)


class Bench:
    def __init__(self, a):
        self.a = a
        self.sounds = os.path.abspath(a.sounds)
        self.wav = os.path.join(self.sounds, "click.wav")
        self.ref = [(f[0], f[0]) for f in wav_frames(self.wav)]
        self.tmp = tempfile.mkdtemp(prefix="sinkbench-")

    def events(self, mon, n, spacing, request, heard_timeout=2.0, start=0):
        """n events: request() → (t0 ns, finish callable or None); the onset after t0 is the event's arrival.
        The next event starts `spacing` seconds (random in the range) after the previous request, and never
        before the previous click has passed the sink."""
        lat, missed = [], 0
        self.heard = []                           # the events' onsets (ns, frame in the dump)
        self.heard_events = []                    # which event (0…n-1) each onset belongs to
        self.requested = []                       # each event's request time (ns)
        nxt = max(now_ns(), start)
        for k in range(n):
            if k == 5 and missed == 5:
                return lat, missed + (n - k)      # not heard at all: do not wait out every event
            wait_for(lambda: now_ns() >= nxt, 10, "the next event time", step=0.001)
            t0, finish = request()
            self.requested.append(t0)
            o = mon.wait_onset(t0, heard_timeout) if t0 is not None else None
            if finish:
                finish()
            if o is None:
                missed += 1
                nxt = now_ns()
            else:
                lat.append((o[0] - t0) / 1e6)
                self.heard.append(o)
                self.heard_events.append(k)
                nxt = max(o[0] + 60_000_000, t0 + int(random.uniform(*spacing) * 1e9))
        return lat, missed

    def tabbard(self, rig, label, n, spacing, device="rig"):
        raw = os.path.join(rig.dir, label + ".raw")
        if self.a.passive_monitor:
            # Nothing else keeps the graph running: a passive monitor only sees cycles some stream runs, so
            # it is started while the daemon plays (it is ready at its first captured cycle).
            d = Daemon(self.a.daemon, self.sounds, rig, ["--audio", "alsa", "--alsa-device", device], config=self.daemon_config())
            self.started.append(d)
            c = Client(d.socket)
            # Two independent passive probes (docs/PERFORMANCE.md, "Two probes"): a click damaged at one
            # only is that probe's loss; damaged at both, the sink's.
            box = {}
            raw2 = os.path.join(rig.dir, label + "-2.raw")
            ths = [threading.Thread(target=lambda k=k, r=r: box.setdefault(k, Monitor(self.a.monitor, rig, raw=r,
                                                                                    extra=["--passive"] + self.probe_rt())))
                   for k, r in (("m", raw), ("m2", raw2))]
            for th in ths:
                th.start()
            sent = 0
            while any(th.is_alive() for th in ths):
                c.reply(c.send("sound.play", {"name": "click"})[0])
                sent += 1
                for th in ths:
                    th.join(0.1)
            mon, mon2 = box["m"], box["m2"]
            self.started += [mon, mon2]
            # The start-up clicks may still wait for the engine's settle (stats say "idle" meanwhile) and then
            # play together. Wait until the engine has played (or reported) every one and the stream has
            # stopped, so that neither the warm-up click joins them nor the limiter's release after their sum
            # scales the measured clicks.
            def done():
                e = c.call("stats.get")["audio"]["engine"]
                return e.get("voices_played", 0) + e.get("voices_failed", 0) >= sent and e.get("state") == "idle"
            wait_for(done, 60, "the start-up clicks to be played and the stream to stop")
        else:
            mon = Monitor(self.a.monitor, rig, raw=raw)
            self.started.append(mon)
            # A second, independent probe: a click that one probe alone has damaged is that probe's loss
            # (docs/PERFORMANCE.md, "Two probes"), not the sink's.
            mon2 = Monitor(self.a.monitor, rig, raw=os.path.join(rig.dir, label + "-2.raw"))
            self.started.append(mon2)
            d = Daemon(self.a.daemon, self.sounds, rig, ["--audio", "alsa", "--alsa-device", device], config=self.daemon_config())
            self.started.append(d)
            c = Client(d.socket)
        c.call("subscribe")   # sound.failed: is every damaged or lost click reported?
        # Warm-up (not counted): clicks until one is heard — the first one after the stream opens can be lost
        # (the stream runs before WirePlumber links it); how many were lost is recorded.
        warmup_lost = 0
        while True:
            _, t0 = c.send("sound.play", {"name": "click"})
            c.reply(_)
            if mon.wait_onset(t0, 2.0):
                break
            warmup_lost += 1
            if warmup_lost == 5:
                raise RuntimeError("5 clicks in a row not heard at the sink")
        start = mon.onsets[-1][0] + 60_000_000
        if spacing[0] > 3:
            # After idle: the first event too comes after the idle stop (with --idle-stop-ms longer than the
            # gaps, after the warm-up click's standby), then each one 3.1–3.5 s after the previous.
            stopped = "idle" if (self.a.idle_stop_ms or 2000) < spacing[0] * 1000 else "standby"
            wait_for(lambda: c.call("stats.get")["audio"]["engine"].get("state") == stopped, 60, stopped)
            start = now_ns()

        asked = []                                # each event's voice (None: refused)

        def req():
            rid, t0 = c.send("sound.play", {"name": "click"})
            asked.append(c.reply(rid).get("result", {}).get("voice"))
            return t0, None
        lat, missed = self.events(mon, n, spacing, req, start=start)
        engine = c.call("stats.get")["audio"]["engine"]
        for _ in range(10):                       # reports of the last clicks (the engine sends them as they end)
            c.pump(0.1)
        failed = {e["params"].get("voice") for e in c.events if e.get("method") == "sound.failed"}
        c.close()
        d.stop()
        closing = mon.stop()
        mon2.stop()
        s = mon.samples()
        # Intact: the measured events' clicks (not the warm-up's), each bit-exact and followed by silence.
        # Unchecked: a passive capture ends with the graph, so the last click's trailing silence may not be in
        # it; and a click that differs where the probe missed cycles (its dump has silence there, whatever the
        # sink played) says nothing about the sink.
        unchecked, probe_missed, probe_alone, damage, unreported = 0, 0, 0, [], 0
        heard_voices = {asked[k] for k in self.heard_events}
        for (o_ns, fr), k in zip(self.heard, self.heard_events):
            why = click_at(s, fr, self.ref, 480)
            if why == "the capture ends before the click does":
                unchecked += 1
            elif why and mon.missed(fr, len(self.ref) + 480):
                unchecked += 1
                probe_missed += 1
            elif why and self.intact_at(mon2, o_ns):
                probe_alone += 1                  # intact at the other probe: the sink played it whole
            elif why:
                damage.append("%s (%s; %s; at the second probe: %s)" % (why, damage_kind(s, fr, self.ref), level_vs(s, fr, self.ref),
                                                                       self.second_view(mon2, o_ns)))
                unreported += asked[k] not in failed
        intact = len(self.heard) - len(damage) - unchecked
        # Not heard at the first probe: heard at the second (that probe's loss), or not at all, reported or not.
        heard_second = set()
        if True:
            for k, t0 in enumerate(self.requested):
                t1 = self.requested[k + 1] if k + 1 < len(self.requested) else float("inf")
                if k not in self.heard_events and t0 is not None and any(t0 <= o[0] < t1 for o in mon2.onsets):
                    heard_second.add(asked[k])
        # Not heard and not reported: while a probe missed cycles, it cannot tell (blind; the tests' pwrig.judge
        # says the same); otherwise the sink never had the click and nobody was told.
        monitors = [mon, mon2]
        lost_unreported, lost_blind = 0, 0
        for k, v in enumerate(asked):
            if v is None or v in heard_voices or v in heard_second or v in failed:
                continue
            t0 = self.requested[k]
            t1 = self.requested[k + 1] if k + 1 < len(self.requested) else float("inf")
            if t0 is not None and any_blind(monitors, t0, t1):
                lost_blind += 1
            else:
                lost_unreported += 1
        os.unlink(mon.raw)
        os.unlink(mon2.raw)
        keys = ("latency_p50_us", "latency_p99_us", "frames_ahead_p50", "frames_ahead_max", "xruns", "period_frames",
                "buffer_frames")
        # Each measured click's latency (ms), and whether the probe timed it across a gap (its first buffer
        # after missed cycles: the cycle's start derived from the next one's).
        gapped = {int(l.split()[1]) for l in mon.lines if l.startswith("onset") and "after-gap" in l}
        per_click = [[round(ms, 3), o[0] in gapped] for ms, o in zip(lat, self.heard)]
        return dict(dist(lat), per_click=per_click, missed=missed, warmup_lost=warmup_lost, intact=intact, unchecked=unchecked, clicks=len(self.heard), onsets=len(mon.onsets),
                    damaged=len(damage), holes=sum(1 for d in damage if d.endswith("(hole)")),
                    damaged_unreported=unreported, not_heard_unreported=lost_unreported, not_heard_blind=lost_blind,
                    sound_failed=len(failed & set(asked)), probe_missed=probe_missed, probe_alone=probe_alone,
                    heard_at_second_only=len(heard_second),
                    first_damage=damage[0] if damage else None, damages=damage, after_gap=mon.after_gap, gaps=len(mon.gaps),
                    quantum=self.quantum(closing),
                    daemon={k: engine.get(k) for k in keys})

    def probe_rt(self):
        """--probe-realtime: the passive probe's main loop at SCHED_FIFO, so that the probe does not lose the
        graph restart's first cycle itself (and hold the sink back a cycle) — what nothing else playing means."""
        return ["--realtime", str(self.a.probe_realtime)] if self.a.probe_realtime else []

    def second_view(self, mon, onset_ns):
        """What the other probe has where one probe found a click damaged (for the damage list)."""
        o = [x for x in mon.onsets if abs(x[0] - onset_ns) < 1_000_000]
        if not o:
            return "no onset within 1 ms"
        s = mon.samples()
        return "%s, %s" % (click_at(s, o[0][1], self.ref, 480) or "intact", level_vs(s, o[0][1], self.ref))

    def intact_at(self, mon, onset_ns):
        """Whether probe mon has the click whose onset was at onset_ns bit-exact (its own onset within 1 ms)."""
        o = [x for x in mon.onsets if abs(x[0] - onset_ns) < 1_000_000]
        return bool(o) and click_at(mon.samples(), o[0][1], self.ref, 480) is None

    def daemon_config(self):
        """tabbard's config file for the run: only what --idle-stop-ms sets (None: no file, the defaults)."""
        return {"idle_stop_ms": self.a.idle_stop_ms} if self.a.idle_stop_ms is not None else None

    @staticmethod
    def quantum(lines):
        for l in lines:
            p = l.split()
            if p[:1] == ["cycles"] and len(p) >= 5:
                return [int(p[3]), int(p[4])]
        return None

    def spawned(self, rig, argv, n, pad_ms=0):
        mon = Monitor(self.a.monitor, rig)
        env = rig.child_env()

        def req():
            t0 = now_ns()
            p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            return t0, lambda: p.wait(timeout=20)
        lat, missed = self.events(mon, n, (0.15, 0.5), req, heard_timeout=3.0)
        return dict(dist([x - pad_ms for x in lat]), missed=missed, quantum=self.quantum(mon.stop()),
                    **({"leading_silence_ms": pad_ms} if pad_ms else {}))

    def padded(self):
        """click.wav with PAD_MS of silence before it (see the cached-sample rows): the sample stream of
        pipewire-pulse 0.3.65 starts playing before WirePlumber links it, and on this machine the first
        ~10 ms are consumed into nothing — a 12 ms click is then not heard at all. With the pad, what is
        lost is silence, and the click's onset minus the pad is when the stream's first frame reached the
        sink's graph: what is heard where linking wins that race."""
        path = os.path.join(self.tmp, "padded-click.wav")
        if not os.path.exists(path):
            import wave
            with wave.open(self.wav, "rb") as r, wave.open(path, "wb") as w:
                w.setnchannels(r.getnchannels())
                w.setsampwidth(r.getsampwidth())
                w.setframerate(r.getframerate())
                w.writeframes(b"\0" * (r.getnchannels() * r.getsampwidth() * r.getframerate() * PAD_MS // 1000))
                w.writeframes(r.readframes(r.getnframes()))
        return path

    def canberra(self, rig, n, pad_ms=0):
        mon = Monitor(self.a.monitor, rig)
        env = rig.child_env()
        env["CANBERRA_DRIVER"] = "pulse"
        p = subprocess.Popen([self.a.caclick, self.padded() if pad_ms else self.wav], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, bufsize=1)
        first = p.stdout.readline().strip()
        if first != "ready":
            mon.stop()
            p.kill()
            return {"count": 0, "error": first or "caclick exited"}

        def req():
            p.stdin.write("\n")
            p.stdin.flush()
            r = p.stdout.readline().split()
            return (int(r[1]) if r[:1] == ["t"] else None), None
        lat, missed = self.events(mon, n, (0.15, 0.5), req)
        p.stdin.close()
        p.wait(timeout=10)
        return dict(dist([x - pad_ms for x in lat]), missed=missed, quantum=self.quantum(mon.stop()),
                    **({"leading_silence_ms": pad_ms} if pad_ms else {}))

    def subject(self, out, key, what, fn, *args):
        if self.a.only and key not in self.a.only.split(","):
            return
        progress(what)
        self.started = []   # what a subject started (daemon, probe): stopped if it fails half-way
        try:
            out[key] = fn(*args)
        except Exception as e:  # one subject failing must not cost the others' figures
            out[key] = {"count": 0, "error": str(e)}
            progress("%s failed: %s" % (key, e))
            for p in reversed(self.started):
                p.stop()

    def config(self, name, options):
        q = self.a.quick
        rig = Rig(self.a.rig, options, base=self.tmp).start()
        out = {"rig_options": list(options)}
        try:
            progress("%s: calibration (a native stream, 20 impulses at known frames)" % name)
            try:
                cal = subprocess.run([self.a.monitor, "--calibrate", "20"], env=rig.child_env(), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, text=True, timeout=60).stdout.split("\n")
            except subprocess.TimeoutExpired:   # a calibration that did not finish costs no figures
                cal = []
                progress("%s: calibration did not finish in 60 s" % name)
            for l in cal:
                p = l.split()
                if p[:1] == ["calibration"] and len(p) == 6:
                    out["calibration"] = {"impulses": int(p[1]), "residual_ns_min": int(p[3]),
                                          "residual_ns_p50": int(p[4]), "residual_ns_max": int(p[5])}
            n = self.a.events or (20 if q else 60)
            self.subject(out, "tabbard_steady", "%s: tabbard steady, %d clicks 150–500 ms apart" % (name, n),
                         self.tabbard, rig, "steady", n, (0.15, 0.5))
            n_idle = self.a.events or (8 if q else 30)
            self.subject(out, "tabbard_idle", "%s: tabbard after idle, %d clicks 3.1–3.5 s apart" % (name, n_idle),
                         self.tabbard, rig, "idle", n_idle, (3.1, 3.5))
            n = self.a.events or (15 if q else 50)
            self.subject(out, "aplay", "%s: aplay -D rig, %d runs" % (name, n),
                         self.spawned, rig, ["aplay", "-q", "-D", "rig", self.wav], n)
            self.subject(out, "paplay", "%s: paplay, %d runs" % (name, n), self.spawned, rig, ["paplay", self.wav], n)
            if not self.a.only or "pactl_play_sample" in self.a.only:
                subprocess.run(["pactl", "upload-sample", self.wav, "tabbard-bench-click"], env=rig.child_env(),
                               check=True, timeout=20)
                subprocess.run(["pactl", "upload-sample", self.padded(), "tabbard-bench-padded"], env=rig.child_env(),
                               check=True, timeout=20)
            self.subject(out, "pactl_play_sample", "%s: pactl play-sample (cached), %d runs" % (name, n),
                         self.spawned, rig, ["pactl", "play-sample", "tabbard-bench-click"], n)
            self.subject(out, "pactl_play_sample_padded", "%s: pactl play-sample, click after %d ms of silence, %d runs"
                         % (name, PAD_MS, n), self.spawned, rig, ["pactl", "play-sample", "tabbard-bench-padded"], n, PAD_MS)
            self.subject(out, "canberra", "%s: libcanberra (one context, cached sample), %d clicks" % (name, n),
                         self.canberra, rig, n)
            self.subject(out, "canberra_padded", "%s: libcanberra, click after %d ms of silence, %d clicks" % (name, PAD_MS, n),
                         self.canberra, rig, n, PAD_MS)
            if not options:
                n = self.a.events or (20 if q else 60)
                self.subject(out, "tabbard_steady_pulse_plugin",
                             "%s: tabbard steady through PulseAudio's ALSA plugin (rig_pulse), %d clicks" % (name, n),
                             self.tabbard, rig, "pulse", n, (0.15, 0.5), "rig_pulse")
        finally:
            rig.stop()
        return out

    def run(self):
        res = {"what": "request → first frame consumed by the null sink (graph cycle start + offset / 48 kHz), ms",
               "idle_stop_ms": self.a.idle_stop_ms if self.a.idle_stop_ms is not None else "default",
               "monitor": "passive (the graph runs only while a client plays)" if self.a.passive_monitor
               else "active (the probe keeps the graph running, as another playing stream would)",
               "pipewire": subprocess.run(["pipewire", "--version"], stdout=subprocess.PIPE, text=True).stdout.split("\n")[-2:-1],
               "configs": {}}
        try:
            if "default" in self.a.configs.split(","):
                res["configs"]["default"] = self.config("default quantum", [])
            if "min_quantum_1024" in self.a.configs.split(","):
                res["configs"]["min_quantum_1024"] = self.config("min-quantum 1024", ["--min-quantum", "1024"])
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return res


def table(res):
    rows = []
    names = [("tabbard_steady", "tabbard, steady (150–500 ms apart)"), ("tabbard_idle", "tabbard, after idle (> 3 s)"),
             ("aplay", "aplay -D rig click.wav"), ("paplay", "paplay click.wav"),
             ("pactl_play_sample", "pactl play-sample (cached)"),
             ("pactl_play_sample_padded", "pactl play-sample, padded (onset − pad)"),
             ("canberra", "libcanberra (cached)"), ("canberra_padded", "libcanberra, padded (onset − pad)"),
             ("tabbard_steady_pulse_plugin", "tabbard, steady, via PulseAudio's ALSA plugin")]
    for cname, c in res["configs"].items():
        cal = c.get("calibration", {})
        rows.append("%s — calibration residual %s ns (%s impulses)" % (cname, cal.get("residual_ns_p50", "?"),
                                                                   cal.get("impulses", 0)))
        for key, label in names:
            d = c.get(key)
            if not d:
                continue
            extra = ""
            if "intact" in d:
                extra = "  intact %d/%d, xruns %s, daemon p50 %s µs" % (d["intact"], d["clicks"], d["daemon"]["xruns"],
                                                                       d["daemon"]["latency_p50_us"])
                if d.get("unchecked"):
                    extra += " (%d unchecked: %d where the probe missed cycles, the rest where the capture ended first)" % (
                        d["unchecked"], d.get("probe_missed", 0))
                if d.get("probe_alone"):
                    extra += ", %d damaged at one probe only (intact at the other: that probe's loss)" % d["probe_alone"]
                if d.get("damaged"):
                    extra += ", damaged %d (%d holes), %d of them without sound.failed" % (
                        d["damaged"], d.get("holes", 0), d.get("damaged_unreported", 0))
                if d.get("heard_at_second_only"):
                    extra += ", %d heard at the second probe only" % d["heard_at_second_only"]
                if d.get("not_heard_unreported"):
                    extra += ", %d not heard and not reported" % d["not_heard_unreported"]
                if d.get("not_heard_blind"):
                    extra += ", %d not heard and not reported while a probe missed cycles (cannot tell)" % d["not_heard_blind"]
                if d.get("after_gap"):
                    extra += ", %d onsets timed across a gap" % d["after_gap"]
            rows.append("  %-48s n=%-3s p50 %6s  p90 %6s  p99 %6s ms  quantum %s  missed %s%s" % (
                label, d.get("count"), d.get("p50_ms", "-"), d.get("p90_ms", "-"), d.get("p99_ms", "-"),
                d.get("quantum"), d.get("missed", "-"), extra))
    return "\n".join(rows)


def level_vs(samples, frame, ref):
    """The captured click's RMS against the reference's (dB), and where they first differ: what a damaged click is."""
    n = min(len(ref), len(samples) // 2 - frame)
    if n <= 0:
        return "nothing captured"
    got = sum(samples[(frame + i) * 2] ** 2 + samples[(frame + i) * 2 + 1] ** 2 for i in range(n))
    exp = sum(l * l + r * r for l, r in ref[:n]) or 1
    first = next((i for i in range(n) if (samples[(frame + i) * 2], samples[(frame + i) * 2 + 1]) != ref[i]), None)
    return "level %+.2f dB, first different frame %s" % (10 * math.log10(max(got, 1) / exp), first)


def main():
    ap = argparse.ArgumentParser()
    for k in ("daemon", "sounds", "rig", "monitor", "caclick"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--only", help="comma-separated subjects (tabbard_steady,tabbard_idle,aplay,paplay,"
                    "pactl_play_sample,pactl_play_sample_padded,canberra,canberra_padded,tabbard_steady_pulse_plugin); default all")
    ap.add_argument("--events", type=int, default=0, help="events per subject (default 60/30/50, --quick fewer)")
    ap.add_argument("--passive-monitor", action="store_true",
                    help="the probe does not keep the graph running (nothing else plays: the graph stops when tabbard's stream does)")
    ap.add_argument("--probe-realtime", type=int, default=0, metavar="PRIO",
                    help="with --passive-monitor: the probe's main loop at SCHED_FIFO PRIO (pwmonitor --realtime)")
    ap.add_argument("--configs", default="default,min_quantum_1024", help="which server configurations")
    ap.add_argument("--idle-stop-ms", type=int, help="tabbard's idle_stop_ms (default: its default, 2000); above "
                    "3500 the after-idle clicks find the stream still in standby")
    a = ap.parse_args()
    res = Bench(a).run()
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=2)
    print(table(res))


if __name__ == "__main__":
    main()
