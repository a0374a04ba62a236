#!/usr/bin/env python3
"""The click as the desktop sees it, on the real path (a private PipeWire 0.3.65 + WirePlumber + pipewire-pulse:
rig/rig.sh), through PipeWire's ALSA plugin (`default`, as pipewire-alsa makes it, and the `pipewire` PCM named
directly) and PulseAudio's (`pulse`, via pipewire-pulse). Run by `make test-desktop` with a venv holding pulsectl.

* StreamProperties: the stream a mixer lists (`pw-dump`, `pactl list sink-inputs`) is tabbard's with the event
  role — `media.role` Notification / `event`, restored as `sink-input-by-media-role:event` — its application name,
  id and icon, and on PipeWire's plugin `media.name` "tabbard: tab clicks"; `stream_properties` and
  `TABBARD_INSTANCE` change the name.
* AlertVolume: the event role's volume set to 50 % as GNOME Settings sets it (module-stream-restore's
  `sink-input-by-media-role:event`, written with libpulse's ext-stream-restore through pulsectl) makes the click at
  the sink's monitor 18 dB quieter (18.06 ± 1), from the stream the daemon makes after its next idle stop; muting
  alerts leaves nothing at the sink while the daemon reports the click played. Through both plugins.
* GraphRestart: with nothing else playing (two *passive* probes), each click after an idle stop restarts the graph
  on a stream the daemon made anew; every such click is intact in what the sink wrote to its device (the rig's sink
  an ALSA `file` PCM: rig.sh --file-sink), or reported with sound.failed — issue 38's rare damaged after-idle click
  (a cycle the stream missed, which the daemon finds in the plugin's snd_pcm_delay: docs/AUDIO.md).

Usage: python3 tests/pipewire/test_desktop.py --daemon tabbard --sounds Sounds --rig rig/rig.sh \\
    --monitor .build/rig/pwmonitor [case names]
"""

import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig"))  # pwrig, tabbardclient
from pwrig import Daemon, FileProbe, Monitor, click_at, judge, wait_for  # noqa: E402
from rigcase import HEARD_TIMEOUT, P, SILENCE_AFTER, RigCase, after_click, expected_click, main  # noqa: E402
import threading  # noqa: E402

import pulsectl  # noqa: E402  (PyPI; make desktop-deps)

EVENT_KEY = "sink-input-by-media-role:event"


def streams(rig):
    """Each playback stream as (pw-dump's properties, pactl's properties)."""
    env = rig.child_env()
    # pw-dump prints a second array when objects change while it dumps (a stream being made): the first is whole.
    out = subprocess.run(["pw-dump"], env=env, check=True, stdout=subprocess.PIPE, timeout=30).stdout.decode()
    nodes = json.JSONDecoder().raw_decode(out.lstrip())[0]
    pw = [o["info"]["props"] for o in nodes
          if o.get("type") == "PipeWire:Interface:Node" and o.get("info", {}).get("props", {}).get("media.class")
          == "Stream/Output/Audio"]
    out = subprocess.run(["pactl", "--format=json", "list", "sink-inputs"], env=env, check=True, stdout=subprocess.PIPE,
                         timeout=30).stdout
    pa = [s["properties"] for s in json.loads(out)]
    return pw, pa


def level_db(monitor, onset_frame):
    """The click's RMS level at the sink (dBFS), over its length from its onset."""
    s, n = monitor.samples(), len(expected_click())
    k0, k1 = onset_frame * 2, min((onset_frame + n) * 2, len(monitor.samples()))
    acc = sum(s[k] * s[k] for k in range(k0, k1))
    return 10 * math.log10(acc / max(k1 - k0, 1) / 32768.0 ** 2) if acc else -math.inf


class StreamProperties(RigCase):
    def stream_of(self):
        """The daemon's stream as (pw-dump props, pactl props), once both list it (the rig's only playback stream:
        the probes capture)."""
        def find():
            pw, pa = streams(self.rig)
            self.assertLessEqual(max(len(pw), len(pa)), 1, "one playback stream on the rig: %s %s" % (pw, pa))
            return (pw[0], pa[0]) if pw and pa else None
        return wait_for(find, 30, "the daemon's stream in pw-dump and pactl", step=0.2)

    def check(self, device, name="tabbard", media_name="tabbard: tab clicks", config=None, env=None):
        self.daemon = Daemon(P.daemon, P.sounds, self.rig, ["--audio", "alsa", "--alsa-device", device],
                             config=config, extra_env=env)
        pw, pa = self.stream_of()
        where = "through %s: pw-dump %s; pactl %s" % (device, pw, pa)
        self.assertEqual(pw.get("media.role"), "Notification", where)
        self.assertEqual(pa.get("media.role"), "event", where)
        self.assertEqual(pa.get("module-stream-restore.id"), EVENT_KEY, where)
        for props in (pw, pa):
            self.assertEqual(props.get("application.name"), name, where)
            self.assertEqual(props.get("application.id"), "tabbard", where)
        self.assertEqual(pa.get("application.icon_name"), "audio-x-generic", where)
        if media_name is not None:
            self.assertEqual(pw.get("media.name"), media_name, where)
            self.assertEqual(pa.get("media.name"), media_name, where)

    def test_pipewire_alsa_default(self):
        self.start_rig()
        self.check("default")

    def test_pipewire_pcm_named(self):
        self.start_rig()
        self.check("pipewire")

    def test_pulse_plugin(self):
        """PulseAudio's plugin names its stream itself ("ALSA Playback"): the rest is tabbard's."""
        self.start_rig()
        self.check("pulse", media_name=None)

    def test_configured_and_instance_names(self):
        self.start_rig()
        self.check("default", name="tabbard@mail", env={"TABBARD_INSTANCE": "mail"})
        self.assertEqual(self.daemon.stop(), 0, "the first daemon did not exit 0 on SIGTERM")
        shutil.rmtree(self.daemon.dir, ignore_errors=True)
        self.daemon = None
        wait_for(lambda: not streams(self.rig)[1], 30, "the first daemon's stream to go")
        self.check("pulse", name="Mail tabs", media_name=None,
                   config={"stream_properties": {"application.name": "Mail tabs"}})


class AlertVolume(RigCase):
    """The desktop's alert volume (GNOME Settings' "Alert volume", KDE's notification sounds) is module-stream-restore's
    entry for the event role. PipeWire applies it when a stream is made: the daemon makes its stream anew at each idle
    stop, so the click after the next pause plays at the new volume."""

    def set_alert(self, volume, mute=False):
        """Writes the event role's entry as GNOME does (ext-stream-restore, one channel) and reads it back."""
        with pulsectl.Pulse("tabbard-test", server=self.rig.env["PULSE_SERVER"]) as pulse:
            pulse.stream_restore_write(pulsectl.PulseExtStreamRestoreInfo(
                EVENT_KEY, volume=pulsectl.PulseVolumeInfo(volume, 1), channel_list=["mono"], mute=mute),
                mode="merge", apply_immediately=True)

            def written():
                e = [x for x in pulse.stream_restore_list() if x.name == EVENT_KEY]
                return e and abs(e[0].volume.value_flat - volume) < 0.01 and bool(e[0].mute) == mute
            wait_for(written, 10, "the event role's volume to read back as written", step=0.05)

    def reopens(self, c):
        return c.call("stats.get")["audio"]["engine"]["idle_reopens"]

    def click(self, c):
        """Plays a click; returns (voice, onset or None)."""
        voice, t0 = self.play(c)
        self.assertIsNotNone(voice, "sound.play was refused")
        o = self.monitor.wait_onset(t0, HEARD_TIMEOUT)
        if o is not None:
            after_click(o[0])
        return voice, o

    def after_pause(self, c, volume, mute=False):
        """The click from a stream made after now: a first click, the idle stop after it (the stream made anew),
        the desktop's entry applied to that stream (WirePlumber sets it on a new node a moment after it appears, as a
        person's next click would find it), then the click measured: (voice, onset)."""
        n = self.reopens(c)
        self.click(c)
        wait_for(lambda: self.reopens(c) > n, 30, "the stream to be made anew after the idle stop", step=0.05)

        def applied():
            with pulsectl.Pulse("tabbard-test", server=self.rig.env["PULSE_SERVER"]) as pulse:
                return any(bool(si.mute) == mute and abs(si.volume.value_flat - volume) < 0.01
                           for si in pulse.sink_input_list())
        wait_for(applied, 30, "the event role's volume %.2f%s on the new stream" % (volume, ", muted" if mute else ""),
                 step=0.05)
        return self.click(c)

    def run_case(self, device):
        self.start_rig()
        self.second.stop()
        self.second = None
        c = self.start_daemon("--audio", "alsa", "--config", self.config_file(), device=device)
        c.call("subscribe", {"topics": ["sound"]})
        _, full = self.click(c)   # no entry for the event role yet: 100 %
        wait_for(lambda: self.reopens(c) >= 1, 30, "the idle stop after the first click", step=0.05)
        self.assertIsNotNone(full, "the click at 100 %% was heard through %s" % device)
        self.set_alert(0.5)
        _, half = self.after_pause(c, 0.5)
        self.assertIsNotNone(half, "the click at 50 %% was heard through %s" % device)
        self.set_alert(0.5, mute=True)
        voice, muted = self.after_pause(c, 0.5, mute=True)
        c.wait_event(lambda e: e.get("method") == "sound.played" and e["params"].get("voice") == voice, 10,
                     "sound.played for the muted click")
        self.monitor.stop()
        a, b = level_db(self.monitor, full[1]), level_db(self.monitor, half[1])
        print("\n  %s: the click at 100 %% %.2f dBFS, at the event role's 50 %% %.2f dBFS: %.2f dB quieter"
              % (device, a, b, a - b), file=sys.stderr)
        self.assertAlmostEqual(a - b, 18.06, delta=1.0, msg="through %s the click at the event role's 50 %% is %.2f dB "
                               "quieter (%.2f → %.2f dBFS); 50 %% on the desktop's slider is 18.06 dB" % (device, a - b, a, b))
        self.assertIsNone(muted, "with alerts muted a click reached the sink through %s" % device)

    def config_file(self):
        path = os.path.join(self.rig.dir, "tabbard.json")
        with open(path, "w") as f:
            json.dump({"idle_stop_ms": 300}, f)   # a pause of 0.3 s makes the stream anew (default 2 s)
        return path

    def test_through_pipewire_alsa(self):
        self.run_case("default")

    def test_through_pulse_plugin(self):
        self.run_case("pulse")


class GraphRestart(RigCase):
    """Nothing else plays: the probes are passive (pwmonitor --passive), so the graph stops with tabbard's stream at
    each idle stop and the next click starts it again, on the stream the daemon made anew after the stop. Every such
    click must reach the sink's device intact or be reported with sound.failed.

    Two probes that do not share a failure: the sink is an ALSA device whose every frame alsa-lib writes to a file
    (rig.sh --file-sink; FileProbe), what the sink played, outside PipeWire's scheduling; and two passive probes on
    its monitor, which are clients of the graph and can both miss its first cycles after a restart (the driver
    completes a cycle without a late client). The file decides; the monitors' verdicts are printed beside it.
    GRAPH_RESTARTS=N sets the number of clicks (10), GRAPH_RESTARTS_IDLE_MS the daemon's idle_stop_ms (300),
    GRAPH_RESTARTS_RIG more options of rig.sh (e.g. "--min-quantum 1024"),
    GRAPH_RESTARTS_VERBOSE=1 prints every click's verdicts (docs/AUDIO.md, "A click that restarts the graph"),
    GRAPH_RESTARTS_STOPS=SEED stops this test's daemon (SIGSTOP) for 2-6 ms every 20-90 ms at times drawn from SEED,
    so that its PipeWire data thread misses the driver's cycle: holes made on purpose, for the detector to report."""
    RIG_OPTIONS = ("--file-sink",) + tuple(os.environ.get("GRAPH_RESTARTS_RIG", "").split())
    CLICKS = int(os.environ.get("GRAPH_RESTARTS", "10"))

    def sink_state(self):
        out = subprocess.run(["pactl", "list", "short", "sinks"], env=self.rig.child_env(), check=True,
                             stdout=subprocess.PIPE, text=True, timeout=30).stdout
        return next((l.split("\t")[4] for l in out.splitlines() if "tabbard_rig_sink" in l), None)

    def stopped(self, probe):
        """The graph stopped (nothing else plays) and the device drained: the sink's output no longer grows."""
        wait_for(lambda: self.sink_state() != "RUNNING", 30, "the graph to stop (nothing else plays)", step=0.05)
        last = [None]

        def still():
            m = probe.mark()
            same, last[0] = m == last[0], m
            return same
        wait_for(still, 10, "the sink's output to stop growing", step=0.05)
        return probe.mark()

    @staticmethod
    def probe_verdict(m, t0, t1, ref):
        """One monitor probe alone: intact, damaged (where it missed no cycle), unchecked (it missed cycles there),
        missed (no onset: it was blind then) or unheard."""
        o = [x for x in m.onsets if t0 <= x[0] < t1]
        if not o:
            return "missed" if m.blind(t0, min(t1, t0 + 3_000_000_000)) else "unheard"
        fr = o[0][1]
        if click_at(m.samples(), fr, ref, SILENCE_AFTER) is None:
            return "intact"
        return "unchecked" if m.missed(fr, len(ref) + SILENCE_AFTER) else "damaged"

    def stop_now_and_then(self, proc, rnd):
        """Stops `proc` (this test's daemon) for 2-6 ms every 20-90 ms until the test ends."""
        done = threading.Event()
        self.addCleanup(done.set)

        def run():
            while not done.wait(rnd.uniform(0.02, 0.09)) and proc.poll() is None:
                proc.send_signal(signal.SIGSTOP)
                time.sleep(rnd.uniform(0.002, 0.006))
                proc.send_signal(signal.SIGCONT)
        threading.Thread(target=run, daemon=True).start()

    def test_clicks_that_restart_the_graph_are_intact_or_reported(self):
        self.rig.start()
        probe = FileProbe(self.rig)
        path = os.path.join(self.rig.dir, "tabbard.json")
        with open(path, "w") as f:
            json.dump({"idle_stop_ms": int(os.environ.get("GRAPH_RESTARTS_IDLE_MS", "300"))}, f)
        c = self.start_daemon("--audio", "alsa", "--config", path, device="default")
        c.call("subscribe", {"topics": ["sound"]})
        if os.environ.get("GRAPH_RESTARTS_STOPS"):
            self.stop_now_and_then(self.daemon.proc, random.Random(int(os.environ["GRAPH_RESTARTS_STOPS"])))
        # A passive probe is ready at its first captured cycle: clicks run the graph while both start.
        box = {}
        ths = [threading.Thread(target=lambda k=k: box.setdefault(k, Monitor(
            P.monitor, self.rig, raw=os.path.join(self.rig.dir, "capture%d.raw" % k), extra=["--passive", "--realtime", "83"])))
            for k in (1, 2)]
        for th in ths:
            th.start()
        while any(th.is_alive() for th in ths):
            self.play(c)
            for th in ths:
                th.join(0.1)
        self.monitor, self.second = box[1], box[2]
        engine = lambda: c.call("stats.get")["audio"]["engine"]  # noqa: E731
        asked, voices, marks, wall = [], [], [], []
        n = 0   # streams made anew before the last click was asked for: the next click waits for one more
        for k in range(self.CLICKS):
            wait_for(lambda: engine()["idle_reopens"] > n and engine()["state"] == "idle", 30,
                     "the stream made anew after the idle stop", step=0.05)
            marks.append(self.stopped(probe))
            time.sleep((k % 5) * 0.07)   # the click at several phases after the stop (a phase, not a wait)
            wall.append(time.strftime("%H:%M:%S", time.gmtime()) + ".%03d" % (time.time() % 1 * 1000))
            n = engine()["idle_reopens"]
            voice, t0 = self.play(c)
            self.assertIsNotNone(voice, "sound.play was refused")
            asked.append(t0)
            voices.append(voice)
            o = self.heard(t0)
            if o is not None:
                after_click(o[0])
        wait_for(lambda: engine()["state"] == "idle", 30, "the last click to end")
        marks.append(self.stopped(probe))
        c.pump(0.2)
        failed = {e["params"].get("voice") for e in c.events if e.get("method") == "sound.failed"}
        played = {e["params"].get("voice") for e in c.events if e.get("method") == "sound.played"}
        self.monitor.stop()
        self.second.stop()
        ref, out, rows = expected_click(), probe.samples(), []
        for k, t0 in enumerate(asked):
            t1 = asked[k + 1] if k + 1 < len(asked) else float("inf")
            fv, fdetail = FileProbe.verdict(out, marks[k], marks[k + 1], ref, SILENCE_AFTER)
            both, _, mdetail = judge((self.monitor, self.second), t0, t1, ref, SILENCE_AFTER)
            rows.append((fv, self.probe_verdict(self.monitor, t0, t1, ref),
                         self.probe_verdict(self.second, t0, t1, ref), both, voices[k] in played, voices[k] in failed))
            # cycles PipeWire's profiler says the driver completed without a stream (not a probe) near this click
            without = sorted({((ns - t0) // 1000, name, st) for m in (self.monitor, self.second)
                              for ns, _, st, name in m.incomplete
                              if t0 - 5_000_000 <= ns < min(t1, t0 + 100_000_000) and not name.startswith("pwmonitor")})
            if fv != "intact" or both != "intact" or os.environ.get("GRAPH_RESTARTS_VERBOSE"):
                print("\n  click %d (asked at %s UTC): sink wrote %s (%s); monitors %s %s, judged together %s (%s); "
                      "cycles completed without a stream (us after the request, node, status) %s; %s" % (
                    k, wall[k], fv, fdetail, rows[-1][1], rows[-1][2], both, mdetail, without,
                    "sound.failed" if rows[-1][5] else "sound.played" if rows[-1][4] else "no event"), file=sys.stderr)
        def count(col):
            return {v: [r[col] for r in rows].count(v) for v in sorted(set(r[col] for r in rows))}
        print("\n  %d clicks after a graph restart: the sink wrote %s; monitor 1 %s; monitor 2 %s; the monitors judged "
              "together %s; sound.played %d, sound.failed %d; engine %s" % (
                  len(rows), count(0), count(1), count(2), count(3), sum(r[4] for r in rows), sum(r[5] for r in rows),
                  {k: v for k, v in engine().items() if k in ("xruns", "run_out_xruns", "start_races", "stalls")}),
              file=sys.stderr)
        for k, r in enumerate(rows):
            if r[0] != "intact":
                self.assertTrue(r[5], "click %d after a graph restart: %s in what the sink wrote, not reported with "
                                "sound.failed" % (k, r[0]))
            else:
                self.assertFalse(r[5], "click %d was intact at the sink and reported failed" % k)
        self.assertEqual(len(rows), self.CLICKS)


if __name__ == "__main__":
    main(sys.modules[__name__])
