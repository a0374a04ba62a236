#!/usr/bin/env python3
"""What a playback stream shows when the session manager dies under it (docs/AUDIO.md, "PulseAudio's ALSA plugin",
"What is left" (4)): a private rig (tests/pipewire/rig.sh), pcmwatch writing silence to DEVICE (rig: PipeWire's ALSA
plugin, rig_pulse: PulseAudio's), WirePlumber killed (SIGKILL, its PID from the rig) 1.5 s in; prints pcmwatch's lines
around the kill and the graph's nodes and links afterwards (pw-dump).

    cc -O2 -o .build/bench/pcmwatch bench/sink/pcmwatch.c -lasound
    python3 bench/sink/unlinked.py .build/bench/pcmwatch rig_pulse
"""
import json
import os
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "pipewire"))
from pwrig import Rig  # noqa: E402


def main():
    watch, dev = sys.argv[1], sys.argv[2]
    extra = sys.argv[3:]          # WAIT_MS: nothing written until then, then one click-sized burst
    rig = Rig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "pipewire", "rig.sh")).start()
    p = None
    try:
        p = subprocess.Popen([watch, dev, "4"] + extra, env=rig.child_env(), stdout=subprocess.PIPE, text=True)
        t0, lines, killed = time.monotonic(), [], None
        while time.monotonic() - t0 < 6:
            r, _, _ = select.select([p.stdout], [], [], 0.1)
            if r:
                line = p.stdout.readline()
                if not line:
                    break
                lines.append(line.strip())
            if killed is None and time.monotonic() - t0 > 1.5:
                os.kill(rig.pid("wireplumber"), signal.SIGKILL)
                killed = len(lines)
                lines.append("---- WirePlumber killed at %.1f ms" % ((time.monotonic() - t0) * 1000))
        print("\n".join(lines[max(0, killed - 4):killed + 8]))
        burst = [i for i, l in enumerate(lines) if " burst " in l]
        if burst:
            print("...\n" + "\n".join(lines[max(0, burst[0] - 2):burst[0] + 8]))
        print("...\n" + "\n".join(lines[-3:]))
        objs = json.loads(subprocess.run(["pw-dump"], env=rig.child_env(), capture_output=True, text=True).stdout)
        print("links", sum(1 for o in objs if o.get("type") == "PipeWire:Interface:Link"), "nodes",
              [o["info"]["props"].get("node.name") for o in objs if o.get("type") == "PipeWire:Interface:Node"])
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        rig.stop()


if __name__ == "__main__":
    main()
