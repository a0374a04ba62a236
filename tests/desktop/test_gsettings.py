#!/usr/bin/env python3
"""The daemon follows the desktop's sound settings (GNOME's org.gnome.desktop.sound, through GSettings), with no
desktop: GSettings' keyfile backend (GSETTINGS_BACKEND=keyfile, the file under a private XDG_CONFIG_HOME), changed
while the daemon runs with the `gsettings` tool, as a desktop's settings panel changes dconf.

* event-sounds off: `sound.play` is answered {"voice": null, "suppressed": why}, a user's select plays nothing and
  `sound` subscribers get `sound.suppressed {name, reason}`; none is counted failed. On again: clicks play. Live.
* desktop_sounds "input-feedback": GNOME's input-feedback-sounds (default false) silences clicks too.
* desktop_sounds "ignore": the settings change nothing.
* theme-name chooses the theme of `theme:` sounds, live (two private themes, a `bell` of different lengths).

Usage: python3 tests/desktop/test_gsettings.py --daemon tabbard --sounds Sounds [case names]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig"))  # tabbardclient, pwrig
from tabbardclient import Client  # noqa: E402
from pwrig import wait_for  # noqa: E402

DAEMON = SOUNDS = None
SCHEMA = "org.gnome.desktop.sound"


class DesktopCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tabbard-gsettings-")
        run = os.path.join(self.dir, "run")
        os.mkdir(run, 0o700)
        self.env = dict(os.environ, GSETTINGS_BACKEND="keyfile", XDG_CONFIG_HOME=os.path.join(self.dir, "config"),
                        XDG_DATA_HOME=os.path.join(self.dir, "data"), XDG_RUNTIME_DIR=run)
        self.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        self.proc = None
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.assertEqual(self.proc.wait(timeout=20), 0, "tabbard exits 0 on SIGTERM")
            finally:
                if self.proc.poll() is None:
                    self.proc.kill()
                    self.proc.wait()
        self.log_file.close() if getattr(self, "log_file", None) else None
        shutil.rmtree(self.dir, ignore_errors=True)

    def gsettings(self, key, value):
        subprocess.run(["gsettings", "set", SCHEMA, key, value], env=self.env, check=True, timeout=30)

    def start(self, config=None):
        sock = os.path.join(self.dir, "sock")
        argv = [DAEMON, "--socket", sock, "--state", os.path.join(self.dir, "state.json"), "--sounds", SOUNDS,
                "--audio", "null"]
        if config is not None:
            path = os.path.join(self.dir, "config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            argv += ["--config", path]
        else:
            argv += ["--no-config"]
        self.log_path = os.path.join(self.dir, "log")
        self.log_file = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     stderr=subprocess.STDOUT)

        def up():
            self.assertIsNone(self.proc.poll(), "tabbard exited: " + self.log())
            try:
                return Client(sock, timeout=10)
            except OSError:
                return None
        c = wait_for(up, 30, "tabbard's socket")
        self.clients.append(c)
        return c

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def desktop(self, c):
        return c.call("stats.get")["audio"]["desktop"]

    def select_other(self, c):
        """A user's select of a tab other than the selected one (plays the select sound unless suppressed)."""
        st = c.call("state.get")
        items = [i["id"] for i in st["state"]["items"] if i["kind"] == "tab" and i["id"] != st["state"]["selected"]]
        return c.call("tab.select", {"tab": items[0]})


class EventSounds(DesktopCase):
    def test_event_sounds_off_silences_clicks_live_and_says_why(self):
        self.gsettings("event-sounds", "false")
        c = self.start()
        c.call("subscribe", {"topics": ["sound"]})
        r = c.call("sound.play", {"name": "click"})
        self.assertIsNone(r["voice"], r)
        self.assertIn("event-sounds", r.get("suppressed", ""), "the reply says why no sound played: %r" % r)
        self.select_other(c)
        e = c.wait_event(lambda e: e.get("method") == "sound.suppressed", 10, "sound.suppressed for the select")
        self.assertEqual(e["params"]["name"], "click", e)
        self.assertIn("event sounds are off", e["params"]["reason"], e)
        stats = c.call("stats.get")
        self.assertEqual((stats["sounds_suppressed"], stats["sounds_failed"], stats["sounds_played"]), (2, 0, 0), stats)
        self.assertFalse([e for e in c.events if e.get("method") in ("sound.played", "sound.failed")], c.events)
        # Switched on while the daemon runs: clicks play again, no restart.
        self.gsettings("event-sounds", "true")
        wait_for(lambda: self.desktop(c)["event_sounds"], 10, "the daemon to see event-sounds on")
        r = c.call("sound.play", {"name": "click"})
        self.assertIsInstance(r["voice"], int, r)
        self.assertNotIn("suppressed", r)
        c.wait_event(lambda e: e.get("method") == "sound.played" and e["params"]["voice"] == r["voice"], 10,
                     "sound.played")
        # And off again, live.
        self.gsettings("event-sounds", "false")
        wait_for(lambda: not self.desktop(c)["event_sounds"], 10, "the daemon to see event-sounds off")
        self.assertIn("suppressed", c.call("sound.play", {"name": "click"}))

    def test_ignore_policy(self):
        self.gsettings("event-sounds", "false")
        c = self.start({"desktop_sounds": "ignore"})
        r = c.call("sound.play", {"name": "click"})
        self.assertIsInstance(r["voice"], int, r)
        self.assertEqual(self.desktop(c)["policy"], "ignore")


class InputFeedback(DesktopCase):
    def test_input_feedback_policy_follows_input_feedback_sounds(self):
        c = self.start({"desktop_sounds": "input-feedback"})   # GNOME's default: input-feedback-sounds false
        r = c.call("sound.play", {"name": "click"})
        self.assertIn("input-feedback-sounds", r.get("suppressed", ""), r)
        self.gsettings("input-feedback-sounds", "true")
        wait_for(lambda: self.desktop(c)["input_feedback_sounds"], 10, "the daemon to see input-feedback-sounds on")
        self.assertIsInstance(c.call("sound.play", {"name": "click"})["voice"], int)

    def test_follow_ignores_input_feedback_sounds(self):
        c = self.start()   # desktop_sounds auto: follow (a user's daemon), input-feedback-sounds not followed
        self.assertEqual(self.desktop(c)["policy"], "follow")
        self.assertIsInstance(c.call("sound.play", {"name": "click"})["voice"], int)


class ThemeName(DesktopCase):
    def make_theme(self, name, seconds):
        d = os.path.join(self.env["XDG_DATA_HOME"], "sounds", name)
        os.makedirs(os.path.join(d, "stereo"))
        with open(os.path.join(d, "index.theme"), "w") as f:
            f.write("[Sound Theme]\nName=%s\nDirectories=stereo\n\n[stereo]\nOutputProfile=stereo\n" % name)
        subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", "-e", "signed-integer",
                        os.path.join(d, "stereo", "bell.wav"), "synth", str(seconds), "sine", "880", "vol", "0.5"],
                       check=True, timeout=30)

    def bell_frames(self, c):
        return [s["frames"] for s in c.call("sound.list")["sounds"] if s["name"] == "bell"]

    def test_theme_name_chooses_the_theme_live(self):
        self.make_theme("alpha", 0.05)
        self.make_theme("beta", 0.1)
        self.gsettings("theme-name", "'alpha'")
        c = self.start({"sound_files": {"bell": "theme:bell"}})
        # Sounds arrive as they load; the start-up load may begin before the first reading of the settings, and
        # the load that follows it then uses theme alpha.
        wait_for(lambda: self.bell_frames(c) == [2400] and not c.call("sound.list").get("loading"), 10,
                 "theme alpha's bell after start-up")
        self.gsettings("theme-name", "'beta'")
        wait_for(lambda: self.bell_frames(c) == [4800], 10, "theme beta's bell")
        self.assertEqual(self.desktop(c)["theme"], "beta")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    DAEMON, SOUNDS = os.path.abspath(a.daemon), os.path.abspath(a.sounds)
    loader = unittest.TestLoader()
    mod = sys.modules[__name__]
    suite = loader.loadTestsFromNames(a.names, mod) if a.names else loader.loadTestsFromModule(mod)
    res = unittest.TextTestRunner(verbosity=2).run(suite)
    bad = len(res.failures) + len(res.errors)
    print("%d passed, %d failed" % (res.testsRun - bad, bad))
    sys.exit(1 if bad else 0)
