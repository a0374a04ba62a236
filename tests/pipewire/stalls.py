#!/usr/bin/env python3
"""Stalls every CPU at once, now and then: what a VM's stolen time does to the sound server and the daemon
(a debugging aid for the PipeWire tests, not part of them).

Usage (as root; one process per CPU, each pinned, all with the same seed and start so that they stall
together; stop them by PID):
    S=$(python3 -c 'import time; print(time.monotonic() + 1)')
    for c in 0 1; do taskset -c $c chrt -f 99 python3 tests/pipewire/stalls.py --seed 7 --start $S & done

Every 20-200 ms (--gap) each process spins 3-12 ms (--spin) at SCHED_FIFO 99, above the audio thread (83)
and PipeWire's data loop, from the same absolute times (CLOCK_MONOTONIC is shared by every process).
With it, tests/pipewire Quantum256 showed the click cut at the end of its first write that the CI machine
(about 11.6 % stolen) showed and this quiet one never did (docs/AUDIO.md, "A short sound's first write
holds all of it").
"""

import argparse
import random
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--start", type=float, required=True, help="CLOCK_MONOTONIC seconds of the schedule's start")
    ap.add_argument("--gap", type=float, nargs=2, default=[0.02, 0.2], metavar=("MIN", "MAX"))
    ap.add_argument("--spin", type=float, nargs=2, default=[0.003, 0.012], metavar=("MIN", "MAX"))
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    t = a.start
    while True:
        t += rnd.uniform(*a.gap)
        end = t + rnd.uniform(*a.spin)
        d = t - time.monotonic()
        if d > 0:
            time.sleep(d)
        while time.monotonic() < end:
            pass
        t = end


if __name__ == "__main__":
    main()
