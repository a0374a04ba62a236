#!/usr/bin/env python3
"""How often PipeWire's plugin meets the start race, and that the daemon answers it (docs/AUDIO.md, "The start
race"): N clicks, each from standby (SPACING ms apart, longer than a click and its run-out), through the rig's
PipeWire; then the engine's `start_races`, `xruns` and `voices_failed`, and the daemon's debug lines for each
underrun it took for the race or for a real one. A figure, not a test: the race needs the plugin's cycle to read
the stream's state just as it starts, which nothing here can cause.

    python3 bench/sink/startraces.py --daemon .build/debug/tabbard --rig tests/pipewire/rig.sh [--clicks 400]
        [--spacing-ms 60] [-- RIG OPTIONS, e.g. --force-quantum 256]
"""

import argparse
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "pipewire"))
from pwrig import Client, Daemon, Rig, wait_for  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--daemon", required=True)
ap.add_argument("--rig", required=True)
ap.add_argument("--sounds", default=os.path.join(HERE, "..", "..", "Sounds"))
ap.add_argument("--clicks", type=int, default=400)
ap.add_argument("--spacing-ms", type=float, default=60)
ap.add_argument("rig_options", nargs="*")
a = ap.parse_args()

rig = Rig(a.rig, a.rig_options).start()
d = Daemon(a.daemon, a.sounds, rig, ["--alsa-device", "rig", "--audio", "alsa", "--log-level", "debug"])
c = Client(d.socket)
try:
    def engine():
        return c.call("stats.get")["audio"]["engine"]
    c.call("sound.play", {"name": "click"})
    wait_for(lambda: engine()["standbys"] >= 1, 10, "the first click's standby")   # settled, pull learned
    for _ in range(a.clicks):
        c.call("sound.play", {"name": "click"})
        time.sleep(a.spacing_ms / 1000)   # pacing of the clicks, not a wait for a result
    wait_for(lambda: engine()["state"] == "standby", 10, "the last click's standby")
    e = engine()
    print({k: e[k] for k in ("pull_frames", "stream_starts", "standbys", "voices_played", "voices_failed",
                             "xruns", "run_out_xruns", "start_races")})
    for line in d.log().splitlines():
        if "flagged an underrun" in line or "Sound failed" in line:
            print(line)
finally:
    c.close()
    d.stop()
    rig.stop()
    shutil.rmtree(rig.dir, ignore_errors=True)
