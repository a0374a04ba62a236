#!/usr/bin/env python3
"""The rule tests/pipewire judges clicks by (pwrig.judge), tested with no rig: probes with no process behind them.

Usage: python3 tests/pipewire/test_judge.py [unittest names]. The last line is "N passed, N failed"; exit 1 on any
failure.
"""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig"))  # pwrig
from pwrig import FileProbe, Monitor, judge, run_tests  # noqa: E402
from test_pipewire import SILENCE_AFTER  # noqa: E402


def expected_click():
    """A click as the daemon renders one (the same sound on both channels): any non-silent frames serve the rule;
    these have no zero frame, so that a dropped span always shows."""
    return [(v, v) for v in ((k * 37) % 2000 + 1 for k in range(960))]


def FakeProbe(onsets, samples, gap_spans=()):
    """A Monitor with no process behind it: its onsets (ns, frame), its dump, the frames where it missed cycles."""
    m = Monitor.__new__(Monitor)
    m.onsets, m._samples, m.gap_spans, m.lock = list(onsets), samples, list(gap_spans), threading.Lock()
    return m


class TwoProbes(unittest.TestCase):
    """pwrig.judge, the rule the real-path tests and sinkbench judge clicks by (no rig needed). What was seen in
    issue 12's runs: one probe's dump lacked frames 256–511 of a click, with no gap reported, while a second probe
    at the same sink had it intact — a probe's loss, which a single probe counted as a click damaged at the sink."""

    def dump(self, click, at=1000, drop=None):
        """A stereo dump with the click at frame `at` (drop: (first, n) frames of it missing, the rest moved up)."""
        frames = [(0, 0)] * at + list(click)
        if drop is not None:
            first, n = drop
            frames = frames[:at + first] + frames[at + first + n:]
        frames += [(0, 0)] * 2000
        a = [x for f in frames for x in f]
        return a

    def test_a_quantum_one_probe_alone_lacks_is_the_probe_s(self):
        click = expected_click()
        whole = FakeProbe([(5_000, 1000)], self.dump(click))
        lacking = FakeProbe([(5_000, 1000)], self.dump(click, drop=(256, 256)))
        verdict, onset, detail = judge((lacking, whole), 0, 10_000, click, SILENCE_AFTER)
        self.assertEqual((verdict, onset), ("intact", 5_000))
        self.assertIn("a probe alone", detail)

    def test_damage_both_probes_see_is_the_sink_s(self):
        click = expected_click()
        a = FakeProbe([(5_000, 1000)], self.dump(click, drop=(256, 256)))
        b = FakeProbe([(5_000, 1000)], self.dump(click, drop=(256, 256)))
        self.assertEqual(judge((a, b), 0, 10_000, click, SILENCE_AFTER)[0], "lost")

    def test_damage_where_a_probe_missed_cycles_is_not_judged(self):
        click = expected_click()
        a = FakeProbe([(5_000, 1000)], self.dump(click, drop=(256, 256)), gap_spans=[(1256, 256)])
        b = FakeProbe([(5_000, 1000)], self.dump(click, drop=(256, 256)), gap_spans=[(1300, 256)])
        self.assertEqual(judge((a, b), 0, 10_000, click, SILENCE_AFTER)[0], "unchecked")
        self.assertEqual(judge((a,), 0, 10_000, click, SILENCE_AFTER)[0], "unchecked")

    def test_the_same_damage_at_a_probe_that_missed_cycles_confirms_it(self):
        """Under heavy load (a real underrun) both probes had a click with silence at frame 384, one of them
        where it also missed cycles: the same first difference in both is the sink's."""
        click = expected_click()
        hole = [(0, 0)] * 128
        a = FakeProbe([(5_000, 1000)], self.dump(click[:384] + hole + click[384:]))
        b = FakeProbe([(5_000, 1000)], self.dump(click[:384] + hole + click[384:]), gap_spans=[(1600, 256)])
        self.assertEqual(judge((a, b), 0, 10_000, click, SILENCE_AFTER)[0], "hole")
        other = FakeProbe([(5_000, 1000)], self.dump(click, drop=(0, 256)), gap_spans=[(1000, 0)])
        self.assertEqual(judge((a, other), 0, 10_000, click, SILENCE_AFTER)[0], "unchecked")

    def test_unheard_unless_a_probe_was_blind(self):
        click = expected_click()
        # Requested at 0 and not heard; the probes heard the next click at 1 s, 48,000 frames into their dumps.
        later = [(1_000_000_000, 48_000)]
        quiet = FakeProbe(later, self.dump(click, at=48_000))
        self.assertEqual(judge((quiet, quiet), 0, 500_000_000, click, SILENCE_AFTER)[0], "unheard")
        blind = FakeProbe(later, self.dump(click, at=48_000), gap_spans=[(2_000, 4096)])
        self.assertEqual(judge((quiet, blind), 0, 500_000_000, click, SILENCE_AFTER)[0], "blind")
        elsewhere = FakeProbe(later, self.dump(click, at=48_000), gap_spans=[(40_000, 256)])
        self.assertEqual(judge((quiet, elsewhere), 0, 500_000_000, click, SILENCE_AFTER)[0], "unheard",
                         "a gap after the click's window does not excuse it")


class SinkOutput(unittest.TestCase):
    """FileProbe.verdict: one click in what the sink wrote to its device (rig.sh --file-sink) between two marks."""

    def out(self, frames):
        return [x for f in frames for x in f]

    def test_intact_damaged_and_lost(self):
        click = expected_click()
        lead = [(0, 0)] * 300
        tail = [(0, 0)] * 2000
        v = lambda frames: FileProbe.verdict(self.out(frames), 100, len(frames), click, SILENCE_AFTER)  # noqa: E731
        self.assertEqual(v(lead + click + tail), ("intact", None))
        verdict, why = v(lead + click[128:] + tail)                       # the first cycle's 128 frames never written
        self.assertEqual(verdict, "lost")
        self.assertIn("first sound is click frame 128", why)
        verdict, why = v(lead + click[:256] + [(0, 0)] * 128 + click[256:] + tail)   # a silent cycle inside it
        self.assertEqual(verdict, "hole")
        self.assertIn("first sound is click frame 0", why)
        verdict, why = v(lead + tail)
        self.assertEqual(verdict, "lost")
        self.assertIn("no sound", why)
        verdict, why = v(lead + click + [(0, 0)] * 100 + click + tail)       # the next click in this one's span
        self.assertEqual(verdict, "damaged")
        self.assertIn("after the click's end", why)

    def test_only_its_span_counts(self):
        """The click before the mark (frame 100 here) is the previous one's: a span from the mark on ends where the
        sink's output ends."""
        click = expected_click()
        frames = [(0, 0)] * 10 + click[:50] + [(0, 0)] * 200 + click + [(0, 0)] * 600
        self.assertEqual(FileProbe.verdict(self.out(frames), 100, 10 ** 9, click, SILENCE_AFTER), ("intact", None))


if __name__ == "__main__":
    run_tests(sys.modules[__name__], sys.argv[1:])
