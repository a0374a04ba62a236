"""The cases through PulseAudio's ALSA plugin (rig_pulse → pipewire-pulse); run by test_pipewire.py."""

import os
import signal
import time

from pwrig import sched, wait_for  # (rig/, on the path: test_pipewire.py)
from rigcase import CLICKS, FAILED_TIMEOUT, HEARD_TIMEOUT, RigCase, after_click


class PulsePlugin(RigCase):
    """PulseAudio's ALSA plugin against pipewire-pulse (docs/DESKTOP.md, "PulseAudio's ALSA plugin"): the server
    plays a quantum of silence whenever it holds less than a quantum, keeps what it holds, and the plugin
    ignores that underflow — a refill a cycle late put 256 silent frames into a click (frame 256 of 576, then
    the rest), 17 of 60 clicks in one loaded run, none reported. The engine keeps 16 ms more queued there, so
    a click reaches the server in one write. Without it this fails on a loaded machine (on an idle one the
    refill is rarely late: the deterministic check is PulseTests in Tests/TabBarAudioTests)."""

    def test_no_click_gets_a_hole_and_none_is_lost_unreported(self):
        self.start_rig()
        c = self.start_daemon("--audio", "alsa", device="rig_pulse")
        # Every refill reaches the server through the plugin's libpulse main loop (threaded-ml): it runs like
        # the audio thread (a late refill is what puts a hole in a sound).
        pid = self.daemon.proc.pid
        audio = self.daemon.audio_thread()
        self.assertIn(audio[0], (1, 2), "the audio thread is not realtime (%s): the rig runs as root" % (audio,))
        try:
            wait_for(lambda: sched(pid, "threaded-ml") == [audio], 10, "the plugin's thread to be raised")
        except TimeoutError:
            pass          # said by the assertion
        self.assertEqual(sched(pid, "threaded-ml"), [audio], "the plugin's thread(s), the audio thread %s (policy, "
                         "priority); log:\n%s" % (audio, self.daemon.log()[-2000:]))
        c.call("subscribe")
        asked, voices = self.play_clicks(c, "through PulseAudio's plugin")
        engine = c.call("stats.get")["audio"]["engine"]
        v = self.judged(asked)
        for k, _ in v.get("unheard", []):
            c.wait_event(lambda e: e.get("method") == "sound.failed" and e["params"].get("voice") == voices[k],
                         FAILED_TIMEOUT, "sound.failed for voice %s, accepted and never heard" % voices[k])
        checked = len(v.get("intact", [])) + len(v.get("hole", [])) + len(v.get("lost", []))
        self.assertGreaterEqual(checked, CLICKS // 2, "too few clicks checked: the probes missed cycles in %s"
                                % (v.get("unchecked", []) + v.get("blind", [])))
        self.assertEqual(v.get("hole", []), [], "silence inserted into clicks at the sink (both probes; daemon "
                         "xruns %s)" % engine.get("xruns"))
        # Frames missing at the sink without a hole, seen by both probes where neither missed a cycle: none was
        # seen in issue 12's runs once two probes judged (the one-probe losses were the probe's: judge).
        self.assertEqual(v.get("lost", []), [], "clicks with frames missing at the sink (both probes)")


class PulseNoSessionManager(RigCase):
    """PulseAudio's ALSA plugin waits, with no deadline, until pipewire-pulse says a new stream is ready, which it
    does only once a session manager has linked it (AUDIO.md). Before AlsaBounded, with no session manager the
    daemon never came up (its open did not return), and with WirePlumber killed while it ran, its audio thread
    hung in the reopen and SIGTERM logged "Stopping" and never "Stopped"."""

    def refused_with_reason(self, c):
        rid, _ = c.send("sound.play", {"name": "click"})
        m = c.reply(rid)
        if "error" not in m:
            return None
        return m["error"].get("message", "")

    def test_no_session_manager_at_start(self):
        self.rig.start("--no-wireplumber")
        c = self.start_daemon("--audio", "alsa", device="rig_pulse")   # comes up (within Daemon's 30 s)
        why = wait_for(lambda: self.refused_with_reason(c), 30, "sound.play refused as unavailable")
        self.assertIn("session manager", why, "the reason says what is true: %r" % why)
        # tearDown: SIGTERM stops it (exit 0 within 20 s)

    def test_session_manager_killed_while_playing(self):
        self.start_rig()
        c = self.start_daemon("--audio", "alsa", device="rig_pulse")
        c.call("subscribe")
        voice, t0 = self.play(c)
        self.assertIsNotNone(self.monitor.wait_onset(t0, HEARD_TIMEOUT), "a click before WirePlumber goes")
        wp = self.rig.pid("wireplumber")
        self.assertIsNotNone(wp, "the rig records WirePlumber's PID")
        # A click in flight as WirePlumber goes: the stream stops taking data (its node leaves the graph, DESKTOP.md
        # "What is left" (4)), so it is heard, or still queued and reported by the stream-progress check.
        accepted = [self.play(c)]
        os.kill(wp, signal.SIGKILL)
        wait_for(lambda: not os.path.exists("/proc/%d" % wp) or open("/proc/%d/stat" % wp).read().split()[2] == "Z",
                 10, "WirePlumber to be gone")
        # Soon clicks are refused with the reason; every one accepted meanwhile is heard or reported.
        deadline = time.monotonic() + 60
        why = None
        while why is None:
            self.assertLess(time.monotonic() - deadline, 0, "clicks still accepted 60 s after WirePlumber went")
            rid, t0 = c.send("sound.play", {"name": "click"})
            m = c.reply(rid)
            if "error" in m:
                why = m["error"].get("message", "")
                break
            accepted.append((m["result"]["voice"], t0))
            o = self.heard(t0)
            if o is not None:
                after_click(o[0])
        self.assertIn("session manager", why, "the reason says what is true: %r" % why)
        for k, (voice, t0) in enumerate(accepted):
            t1 = accepted[k + 1][1] if k + 1 < len(accepted) else float("inf")
            if voice is None or any(t0 <= o[0] < t1 for m in (self.monitor, self.second) for o in m.onsets_after(t0)):
                continue
            c.wait_event(lambda e: e.get("method") == "sound.failed" and e["params"].get("voice") == voice,
                         FAILED_TIMEOUT, "sound.failed for voice %s, accepted as WirePlumber went and never heard"
                         % voice)
        # tearDown: SIGTERM stops it (exit 0 within 20 s) although a call into the plugin is still waiting
