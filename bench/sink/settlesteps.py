#!/usr/bin/env python3
"""What the engine's settle (docs/AUDIO.md, "Settle") read at each start-up: a private rig (tests/pipewire/rig.sh,
no pipewire-pulse; --rig-option to pass its options, e.g. --min-quantum 1024), tabbard started N times at
--log-level debug, a click sent as soon as its socket answers (so that the settle is cut short as soon as the
steps tell the pull), and for each start-up its `audio settle steps=` line, `pull_frames` and `xruns`. A pull
that is not the server's quantum (1024 at min-quantum 1024) is a misread; a summary counts them.

  python3 bench/sink/settlesteps.py --daemon .build/release/tabbard --sounds Sounds --rig tests/pipewire/rig.sh \\
    --runs 60 --rig-option=--min-quantum --rig-option=1024
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "pipewire"))
from pwrig import Client, Daemon, Rig, wait_for  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    for k in ("daemon", "sounds", "rig"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--rig-option", action="append", default=[])
    a = ap.parse_args()
    rig = Rig(a.rig)
    rig.start(*(a.rig_option + ["--no-pulse"]))
    pulls = {}
    try:
        for k in range(a.runs):
            d = Daemon(a.daemon, os.path.abspath(a.sounds), rig,
                       ["--audio", "alsa", "--alsa-device", "rig", "--log-level", "debug"])
            try:
                c = Client(d.socket)
                c.call("sound.play", {"name": "click"})
                try:
                    wait_for(lambda: "audio settle steps=" in d.log(), 10, "the settle")
                except TimeoutError:
                    pass
                time.sleep(0.3)                      # the click played (or cut) by now
                e = c.call("stats.get")["audio"]["engine"]
                c.close()
            finally:
                d.stop()
            steps = [l.split("audio ", 1)[-1] for l in d.log().splitlines() if "audio settle steps=" in l]
            pulls[e.get("pull_frames")] = pulls.get(e.get("pull_frames"), 0) + 1
            print("%3d pull %s xruns %s  %s" % (k, e.get("pull_frames"), e.get("xruns"), steps[0] if steps else "(no settle line)"),
                  flush=True)
    finally:
        rig.stop()
    print("pull_frames over %d start-ups: %s" % (a.runs, ", ".join("%s ×%d" % kv for kv in sorted(pulls.items(), key=str))))


if __name__ == "__main__":
    main()
