"""What the tests on the real sound path share (tests/pipewire/test_pipewire.py runs them): the paths, the
timeouts, and RigCase — a private PipeWire rig (rig/rig.sh), two probes on the sink's monitor, a daemon and its
clients, each stopped by its PID when the case ends."""

import os
import shutil
import time
import unittest

from pwrig import Daemon, Monitor, Rig, judge, run_tests, wait_for, wav_frames  # noqa: F401 (rig/, on the path: test_pipewire.py)
from tabbardclient import Client

class P:
    """The paths every case needs, set by main() from the command line."""
    daemon = sounds = rig = monitor = None

CLICKS = 23                 # the count (0 of 23 intact at min-quantum 1024 before the fix)
HEARD_TIMEOUT = 3.0         # s for a click to reach the sink (they take ~15 ms; generous for a loaded machine)
FAILED_TIMEOUT = 10.0       # s for a click that was not heard to be reported with sound.failed
SILENCE_AFTER = 480         # frames of silence that must follow a click at the sink (10 ms)


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def expected_click():
    """click.wav as the daemon renders one click: mono → both channels, gain 1, limiter idle."""
    return [(f[0], f[0]) for f in wav_frames(os.path.join(P.sounds, "click.wav"))]


def after_click(onset_ns):
    """Waits until the clock is past the end of a click that reached the sink at onset_ns plus the probe's
    separating silence (30 ms), so the next click is a separate onset."""
    wait_for(lambda: now_ns() > onset_ns + 60_000_000, 5, "the previous click to pass the sink", step=0.005)


class RigCase(unittest.TestCase):
    RIG_OPTIONS = ()

    def setUp(self):
        self.rig = Rig(P.rig, self.RIG_OPTIONS)
        self.daemon = None
        self.monitor = None
        self.second = None        # a second, independent probe: what only one probe sees is the probe's (judge)
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        if self.daemon is not None:
            rc = self.daemon.stop()
            self.assertEqual(rc, 0, "tabbard did not exit 0 on SIGTERM; its log:\n" + self.daemon.log()[-3000:])
        for m in (self.monitor, self.second):
            if m is not None:
                m.stop()
        self.rig.stop()
        if not os.environ.get("KEEP_RIG"):   # KEEP_RIG=1 keeps the logs and the capture for a look
            shutil.rmtree(self.rig.dir, ignore_errors=True)
            if self.daemon is not None:
                shutil.rmtree(self.daemon.dir, ignore_errors=True)

    def start_rig(self):
        self.rig.start()
        self.monitor = Monitor(P.monitor, self.rig, raw=os.path.join(self.rig.dir, "capture.raw"))
        self.second = Monitor(P.monitor, self.rig, raw=os.path.join(self.rig.dir, "capture2.raw"))

    def heard(self, t0, timeout=HEARD_TIMEOUT):
        """The first onset at or after t0 at either probe, or None after timeout seconds."""
        try:
            return wait_for(lambda: next(iter(self.monitor.onsets_after(t0) + self.second.onsets_after(t0)), None),
                            timeout, "an onset", step=0.002)
        except TimeoutError:
            return None

    def judged(self, asked):
        """Stops both probes and judges every click requested at the times in asked: {verdict: [(k, detail)]}."""
        self.monitor.stop()
        self.second.stop()
        ref, out = expected_click(), {}
        for k, t0 in enumerate(asked):
            t1 = asked[k + 1] if k + 1 < len(asked) else float("inf")
            verdict, _, detail = judge((self.monitor, self.second), t0, t1, ref, SILENCE_AFTER)
            out.setdefault(verdict, []).append((k, detail))
        return out

    def start_daemon(self, *args, device="rig"):
        self.daemon = Daemon(P.daemon, P.sounds, self.rig, ["--alsa-device", device] + list(args))
        c = Client(self.daemon.socket)
        self.clients.append(c)
        return c

    def play_clicks(self, c, where):
        """CLICKS clicks, each once the previous one has passed the sink; returns (request times ns, voices)."""
        asked, voices = [], []
        for _ in range(CLICKS):
            voice, t0 = self.play(c)
            self.assertIsNotNone(voice, "sound.play was refused " + where)
            asked.append(t0)
            voices.append(voice)
            o = self.heard(t0)
            if o is not None:
                after_click(o[0])
        return asked, voices

    def play(self, c):
        """sound.play click; returns (voice or None when refused, request time ns)."""
        rid, t0 = c.send("sound.play", {"name": "click"})
        m = c.reply(rid)
        return (m["result"]["voice"] if "result" in m else None), t0


def main(module):
    """Parses --daemon, --sounds, --rig, --monitor and the case names; runs those cases of module."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--rig", required=True)
    ap.add_argument("--monitor", required=True)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    P.daemon, P.sounds, P.rig, P.monitor = (os.path.abspath(a.daemon), os.path.abspath(a.sounds),
                                            os.path.abspath(a.rig), os.path.abspath(a.monitor))
    run_tests(module, a.names)
