"""Helpers for the real sound path (tests/pipewire, tests/rtkit, bench/sink): the private PipeWire of rig.sh, the
at-the-sink probe pwmonitor (pwmonitor/, built by the Makefile into .build/rig/pwmonitor), a tabbard daemon pointed
at the rig. The client of its socket is tabbardclient.py, beside this file. Python 3 stdlib only.

Nothing here sleeps for a fixed time: every wait is for a condition, with a deadline."""

import array
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import wave

from tabbardclient import Client, ProtocolError

RATE = 48000


def wait_for(cond, timeout, what, step=0.02):
    """Polls cond() until it returns something truthy (returned), or raises at the deadline."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= end:
            raise TimeoutError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(step)


def terminate(proc, timeout=20):
    """SIGTERM to a child we started, SIGKILL if it has not exited after timeout seconds; its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def run_tests(module, names):
    """Runs the unittest cases of module (all, or those named), prints "N passed, M failed", exits 1 on any failure."""
    loader = unittest.TestLoader()
    suite = loader.loadTestsFromNames(names, module) if names else loader.loadTestsFromModule(module)
    res = unittest.TextTestRunner(verbosity=2).run(suite)
    bad = len(res.failures) + len(res.errors)
    print("%d passed, %d failed" % (res.testsRun - bad, bad))
    sys.exit(1 if bad else 0)


def sched(pid, comm):
    """(policy, realtime priority) of each thread of pid named comm, from /proc/PID/task/TID/stat."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read()
        except OSError:
            continue      # a thread that just ended
        if st[st.index("(") + 1:st.rindex(")")] == comm:
            f = st[st.rindex(")") + 2:].split()
            out.append((int(f[38]), int(f[37])))   # fields 41 (policy) and 40 (rt_priority) of proc(5)
    return out


class Rig:
    """A private headless PipeWire (rig.sh) in its own directory. `user` (a uid): the
    servers run as that user (the directory is theirs), the way a desktop user's do."""

    def __init__(self, script, options=(), base=None, user=None):
        self.script = script
        self.options = list(options)
        self.dir = tempfile.mkdtemp(prefix="pwrig-", dir=base)
        self.prefix = []
        if user is not None:
            os.chown(self.dir, user, user)
            os.chmod(self.dir, 0o755)
            self.prefix = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups",
                           "env", "HOME=/nonexistent"]
            # The user may not reach the checkout (a clone in a 0700 directory: exit 126); the
            # rig's own directory is theirs. (rig.sh needs no file beside it.)
            self.script = os.path.join(self.dir, "rig.sh")
            shutil.copy(script, self.script)
            os.chmod(self.script, 0o755)
        self.env = self._run("env")

    def _run(self, cmd, *extra):
        out = subprocess.run(self.prefix + ["bash", self.script, cmd, self.dir] + list(extra), check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        env = {}
        for line in out.stdout.splitlines():
            if line.startswith("export ") and "=" in line:
                k, v = line[len("export "):].split("=", 1)
                env[k] = v.strip("'")
        return env

    def start(self, *options):
        self.env = self._run("start", *(list(options) or self.options))
        return self

    def stop(self):
        subprocess.run(self.prefix + ["bash", self.script, "stop", self.dir], timeout=60)

    def pid(self, name):
        """The PID `start` recorded for NAME (pipewire, wireplumber, pipewire-pulse, dbus), or None."""
        try:
            with open(os.path.join(self.dir, "pids")) as f:
                for line in f:
                    p = line.split()
                    if len(p) == 3 and p[2] == name:
                        return int(p[0])
        except OSError:
            pass
        return None

    def child_env(self, base=None):
        e = dict(os.environ if base is None else base)
        e.update(self.env)
        return e

    def log(self, name):
        try:
            with open(os.path.join(self.dir, "log", name + ".log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""


class Monitor:
    """pwmonitor on the rig's sink: onsets (CLOCK_MONOTONIC ns, frame in the dump) as they happen,
    the captured samples in `raw` (S16_LE stereo) once stopped."""

    LATE_SPAN = 1024      # frames after a `late at` frame that may lack a cycle (up to a 1024-frame quantum)

    def __init__(self, binary, rig, raw=None, extra=()):
        self.raw = raw
        argv = [binary] + (["--raw", raw] if raw else []) + list(extra)
        self.proc = subprocess.Popen(argv, env=rig.child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.onsets = []      # (ns, frame)
        self.gaps = []
        self.gap_spans = []   # (first frame in the dump, frames): cycles the probe missed, silence in the dump
        self.after_gap = 0    # onsets in the first buffer after a gap (their cycle's time derived from it)
        self.late = []        # dump frames near which PipeWire completed a cycle without this probe (late.c)
        self.incomplete = []  # (cycle ns, node id, status, name): another follower the driver completed a cycle without
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        wait_for(lambda: self.ready or self.proc.poll() is not None, 30, "the monitor stream to capture")
        if not self.ready:
            raise RuntimeError("pwmonitor exited: " + self.proc.stderr.read())

    @property
    def watching(self):
        """Whether the probe follows PipeWire's profiler, i.e. reports its late cycles (late.c)."""
        with self.lock:
            return "watching profiler" in self.lines

    @property
    def ready(self):
        with self.lock:
            return any(l.startswith("ready") for l in self.lines)

    def _read(self):
        for line in self.proc.stdout:
            parts = line.split()
            with self.lock:
                self.lines.append(line.strip())
                if parts[:1] == ["onset"]:
                    self.onsets.append((int(parts[1]), int(parts[2])))
                    if "after-gap" in parts[3:]:
                        self.after_gap += 1
                elif parts[:1] == ["gap"]:
                    self.gaps.append(int(parts[1]))
                    if len(parts) >= 4 and parts[2] == "at":
                        self.gap_spans.append((int(parts[3]), int(parts[1])))
                elif parts[:1] == ["incomplete"] and len(parts) >= 5:
                    self.incomplete.append((int(parts[1]), int(parts[2]), int(parts[3]), " ".join(parts[4:])))
                elif parts[:2] == ["late", "at"] and len(parts) >= 3:
                    # a cycle PipeWire completed without this probe (pwmonitor/late.c): the buffers from
                    # that frame on may lack a cycle of the sink's output, with nothing in the dump to show it
                    self.late.append(int(parts[2]))
                    self.gap_spans.append((int(parts[2]), self.LATE_SPAN))

    def onsets_after(self, t0):
        with self.lock:
            return [o for o in self.onsets if o[0] >= t0]

    def wait_onset(self, t0, timeout):
        """The first onset at or after t0 (ns), or None after timeout seconds."""
        try:
            return wait_for(lambda: (self.onsets_after(t0) or [None])[0], timeout, "an onset", step=0.002)
        except TimeoutError:
            return None

    def stop(self):
        """Ends the capture (stdin closes), completes the dump; returns the closing lines."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=10)
        return self.lines

    def missed(self, frame, n):
        """Whether the probe missed a cycle in dump frames [frame, frame + n), or right before frame (an onset
        found just after a gap may be a click whose head the probe did not see). The dump has silence there:
        a difference from the expected click in such a span says nothing about the sink."""
        with self.lock:
            return any(at < frame + n and at + m >= frame for at, m in self.gap_spans)

    def samples(self):
        """The dump as an array of int16, interleaved stereo."""
        if getattr(self, "_samples", None) is None:
            a = array.array("h")
            with open(self.raw, "rb") as f:
                a.frombytes(f.read())
            self._samples = a
        return self._samples

    def frame_at(self, ns):
        """The dump frame that CLOCK_MONOTONIC time ns falls on, from the onset nearest to it in time (the dump
        keeps the driver's timeline: missed cycles are filled with silence), or None without any onset."""
        with self.lock:
            if not self.onsets:
                return None
            o_ns, o_fr = min(self.onsets, key=lambda o: abs(o[0] - ns))
        return max(0, o_fr + (ns - o_ns) * RATE // 1_000_000_000)

    def blind(self, t0, t1):
        """Whether the probe missed cycles between times t0 and t1 (ns), or cannot tell."""
        f0, f1 = self.frame_at(t0), self.frame_at(t1)
        if f0 is None or f1 is None:
            return True
        return self.missed(f0, max(0, f1 - f0))


class FileProbe:
    """What the rig's sink wrote to its device (rig.sh --file-sink): every frame PipeWire handed the ALSA sink, appended
    by alsa-lib's `file` PCM to DIR/sink.raw (raw S16_LE stereo), and to sink.raw.0001, .0002, … each time the server
    reopens the device (WirePlumber suspends an idle sink after 5 s). A probe outside PipeWire's scheduling: it cannot
    miss a cycle the sink played, and it has no timeline — the sink writes only while the graph runs, so a click is
    found by where the output stood when it was asked for (`mark`, taken while the graph is stopped: the device is then
    drained, alsa-lib writes out what it held on `snd_pcm_drop`)."""

    def __init__(self, rig):
        self.dir = rig.dir

    def files(self):
        names = [n for n in os.listdir(self.dir) if n == "sink.raw" or n.startswith("sink.raw.")]
        return sorted(names, key=lambda n: 0 if n == "sink.raw" else int(n.rsplit(".", 1)[1]))

    def mark(self):
        """The sink's output so far, in frames (all files)."""
        return sum(os.path.getsize(os.path.join(self.dir, n)) for n in self.files()) // 4

    def samples(self):
        """Everything the sink wrote, as an array of int16, interleaved stereo."""
        a = array.array("h")
        for n in self.files():
            with open(os.path.join(self.dir, n), "rb") as f:
                b = f.read()
            a.frombytes(b[:len(b) // 4 * 4])
        return a

    @staticmethod
    def verdict(samples, f0, f1, expected_stereo, silence_after):
        """One click in the sink's output between frames f0 and f1 (what it wrote from the click's request to the
        next's): ('intact', None) — bit-exact and followed by silence; ('lost', why) — no sound there at all; else
        (damage_kind or 'damaged', a sentence: where it differs, how many of its first frames are missing, its
        level against the click's)."""
        f1 = min(f1, len(samples) // 2)
        on = next((f for f in range(f0, f1) if samples[2 * f] or samples[2 * f + 1]), None)
        if on is None:
            return "lost", "no sound in the %d frames the sink wrote" % (f1 - f0)
        lead = next(i for i, fr in enumerate(expected_stereo) if fr != (0, 0))
        start = max(f0, on - lead)
        why = click_at(samples, start, expected_stereo, silence_after)
        if why is None:
            return "intact", None
        # which frame of the click the first sound is (> 0: its head is missing), and the level of what was heard
        n = min(len(expected_stereo), f1 - on)

        def matches(i):
            m = min(64, len(expected_stereo) - i, n)
            return all((samples[2 * (on + j)], samples[2 * (on + j) + 1]) == expected_stereo[i + j] for j in range(m))
        head = next((i for i in range(len(expected_stereo)) if expected_stereo[i] != (0, 0) and matches(i)), None)
        got = sum(samples[2 * (on + i)] ** 2 + samples[2 * (on + i) + 1] ** 2 for i in range(n))
        exp = sum(l * l + r * r for l, r in expected_stereo) or 1
        return (damage_kind(samples, start, expected_stereo) or "damaged",
                "%s; first sound is click frame %s; level %+.2f dB" % (why, head, 10 * math.log10(max(got, 1) / exp)))


def wav_frames(path):
    """A 16-bit WAV's samples as a list of frames (tuples, one value per channel)."""
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2, path
        ch = w.getnchannels()
        a = array.array("h")
        a.frombytes(w.readframes(w.getnframes()))
    return [tuple(a[i:i + ch]) for i in range(0, len(a), ch)]


def damage_kind(samples, frame, expected_stereo):
    """How a click that click_at found damaged differs: 'hole' when silence was inserted into it (once or more)
    and everything else followed intact (what a server that plays a silent cycle and keeps the data does), else
    'lost' (frames missing or changed). None when the click is intact."""
    n = len(expected_stereo)

    def at(j):
        k = j * 2
        return (samples[k], samples[k + 1]) if k + 1 < len(samples) else None
    i, j, holes = 0, frame, 0
    while i < n:
        if at(j) == expected_stereo[i]:
            i, j = i + 1, j + 1
            continue
        gap = 0
        while at(j + gap) == (0, 0) and gap < RATE:
            gap += 1
        if gap == 0 or at(j + gap) != expected_stereo[i]:
            return "lost"
        holes, j = holes + 1, j + gap
    return "hole" if holes else None


def any_blind(monitors, t0, t1):
    """Whether some probe missed cycles while a click requested at t0 (ns; t1: the next request) could have
    arrived (at most 3 s after t0): then no probe's silence says the sink never had it."""
    return any(m.blind(t0, min(t1, t0 + 3_000_000_000)) for m in monitors)


def judge(monitors, t0, t1, expected_stereo, silence_after):
    """One click at the sink, requested at t0 (ns; t1: the next request), as two or more independent probes saw it.
    The sink's output is the same for every probe, so what they disagree on is a probe's, not the sink's: a probe
    alone can lose a cycle without seeing a gap (issue 12's "rare missing quantum": docs/PERFORMANCE.md, "Two
    probes"). Returns (verdict, onset ns or None, detail):
      'intact'    some probe has the click bit-exact and followed by silence
      'hole'/'lost' (damage_kind) every probe that heard it has it damaged, and one where it missed no cycle;
                  another probe agrees: damaged where it missed none either, or with the very same first difference
      'unchecked' damaged only where probes missed cycles, or in one probe with nothing to confirm it
      'unheard'   no probe has an onset, and none was blind meanwhile (a click to be reported with sound.failed)
      'blind'     no probe has an onset, and one missed cycles then (the probes cannot tell)
    """
    seen, onset = [], None
    for m in monitors:
        o = [x for x in m.onsets if t0 <= x[0] < t1]
        if not o:
            continue
        ns, fr = o[0]
        onset = ns if onset is None else onset
        why = click_at(m.samples(), fr, expected_stereo, silence_after)
        gap = m.missed(fr, len(expected_stereo) + silence_after)
        seen.append((why, gap, damage_kind(m.samples(), fr, expected_stereo) if why else None))
    if not seen:
        return ("blind" if any_blind(monitors, t0, t1) else "unheard"), None, None
    if any(why is None for why, _, _ in seen):
        disagree = [why for why, gap, _ in seen if why is not None and not gap]
        return "intact", onset, ("a probe alone: %s" % disagree[0]) if disagree else None
    clean = [(why, kind) for why, gap, kind in seen if not gap]
    if not clean:
        return "unchecked", onset, seen[0][0]
    why, kind = clean[0]
    others = [w for w, gap, _ in seen if not gap][1:] + [w for w, gap, _ in seen if gap and w == why]
    if len(monitors) > 1 and not others:
        return "unchecked", onset, why
    return kind, onset, why


def click_at(samples, frame, expected_stereo, silence_after):
    """Whether the stereo dump holds expected_stereo (list of (l, r)) at frame, followed by silence_after
    silent frames. Returns None when intact, else a sentence saying where it differs."""
    n = len(expected_stereo)
    if (frame + n + silence_after) * 2 > len(samples):
        return "the capture ends before the click does"
    for i, (l, r) in enumerate(expected_stereo):
        got = (samples[(frame + i) * 2], samples[(frame + i) * 2 + 1])
        if got != (l, r):
            return "frame %d of %d is %s, not %s" % (i, n, got, (l, r))
    for i in range(silence_after):
        k = (frame + n + i) * 2
        if samples[k] or samples[k + 1]:
            return "sound %d frames after the click's end" % i
    return None


class Daemon:
    """tabbard with its socket and state in a private directory, its environment from the rig."""

    def __init__(self, binary, sounds, rig, args=(), config=None, extra_env=None):
        self.dir = tempfile.mkdtemp(prefix="tabbard-pw-")
        self.socket = os.path.join(self.dir, "sock")
        argv = [binary, "--socket", self.socket, "--state", os.path.join(self.dir, "state.json"),
                "--sounds", sounds] + list(args)
        if os.environ.get("TABBARD_LOG_LEVEL"):   # a debugging aid: the daemon's log level in every case
            argv += ["--log-level", os.environ["TABBARD_LOG_LEVEL"]]
        if config is not None:
            cpath = os.path.join(self.dir, "config.json")
            with open(cpath, "w") as f:
                json.dump(config, f)
            argv += ["--config", cpath]
        self.log_path = os.path.join(self.dir, "log")
        self.log_file = open(self.log_path, "w")
        env = rig.child_env()
        env.update(extra_env or {})
        if os.environ.get("TRACE_PW"):  # a debugging aid: PipeWire's log inside the daemon (its ALSA plugin)
            env["PIPEWIRE_DEBUG"] = os.environ["TRACE_PW"]
            env["PIPEWIRE_LOG_SYSTEMD"] = "false"
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     stderr=subprocess.STDOUT)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError("tabbard exited %s: %s" % (self.proc.returncode, self.log()))
            try:
                Client(self.socket, timeout=2).close()
                return True
            except (OSError, ProtocolError):
                return False
        try:
            wait_for(up, 30, "tabbard's socket")
        except Exception:
            self.proc.kill()                 # never leave a daemon behind that never came up
            self.proc.wait()
            self.log_file.close()
            raise

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def audio_thread(self):
        """(policy, rt_priority) of the tabbard-audio thread once it has asked for its scheduling and logged
        the answer ("audio thread runs …" or "… stays …"): the thread is named before it asks
        (AudioThread.swift), so reading it as soon as it exists can catch it at normal priority."""
        wait_for(lambda: "audio thread runs" in self.log() or "audio thread stays" in self.log(), 30,
                 "the audio thread's scheduling in the log")
        return wait_for(lambda: sched(self.proc.pid, "tabbard-audio"), 30, "the audio thread")[0]

    def stop(self):
        rc = terminate(self.proc)
        self.log_file.close()
        return rc
