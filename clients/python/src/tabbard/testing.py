"""A headless tabbard for tests: the Python twin of Swift's `TabBarTesting` (docs/HARNESS.md).

`HeadlessDaemon()` starts the `tabbard` found on PATH on a private socket and state with
`--no-config --audio null --clock manual --capture`, and the sounds that belong to that
daemon. Time moves only by `advance(ms)`, and under the manual clock every event of a request
arrives before its reply — so `expect` never waits for an event that is not already there.
"""
from __future__ import annotations

import json
import sys
import os
import shutil
import signal
import subprocess
import tempfile
import time
import wave
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ._errors import ConnectError, Error
from .client import Client
from .events import Event


class HarnessError(AssertionError):
    """An expectation failed; the message says what arrived instead."""


@dataclass
class PlayedSound:
    name: str
    voice: int
    frame: int


@dataclass
class CapturedAudio:
    """The daemon's stream since the harness started: `samples` are interleaved 16-bit integers (a
    list), `rate` frames per second, `channels` per frame; `first_frame` is the stream position of
    samples[0]; `sounds` lists every `sound.played` (name, voice, the frame it started at)."""
    rate: int
    channels: int
    samples: List[int]
    first_frame: int = 0
    sounds: List[PlayedSound] = field(default_factory=list)

    @property
    def frames(self) -> int:
        return len(self.samples) // self.channels

    def frames_between(self, start: int, end: int) -> List[int]:
        """The samples of stream frames `start ..< end`."""
        a = (start - self.first_frame) * self.channels
        b = (end - self.first_frame) * self.channels
        return self.samples[max(a, 0):max(b, 0)]


def read_wav(path: str) -> "tuple[int, int, array[int]]":
    """(rate, channels, samples) of a 16-bit PCM WAV file."""
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2:
            raise HarnessError(f"{path}: {8 * w.getsampwidth()}-bit samples, expected 16")
        samples = array("h")
        samples.frombytes(w.readframes(w.getnframes()))
        if samples.itemsize != 2:  # pragma: no cover
            raise HarnessError("array('h') is not 16-bit here")
        if sys.byteorder == "big":  # pragma: no cover
            samples.byteswap()
        return w.getframerate(), w.getnchannels(), samples


def find_daemon(binary: Optional[str] = None) -> str:
    """`binary`, else `$TABBARD_BINARY`, else `tabbard` on PATH."""
    exe = binary or os.environ.get("TABBARD_BINARY") or shutil.which("tabbard")
    if not exe:
        raise HarnessError("no tabbard on PATH: install it, or put a build tree's .build/release on PATH")
    return exe


def daemon_sounds(binary: str) -> Optional[str]:
    """The sounds that belong to `binary`: the installed PREFIX/share/tabbard/sounds next to its
    bin/, else a build tree's Sounds/ (.build/<triple>/<config>/tabbard → repo/Sounds) — the
    places the daemon itself looks, without `$TABBARD_SOUNDS`."""
    exe = os.path.realpath(binary)
    bindir = os.path.dirname(exe)
    candidates = [os.path.join(os.path.dirname(bindir), "share", "tabbard", "sounds")]
    d = bindir
    for _ in range(4):
        d = os.path.dirname(d)
        candidates.append(os.path.join(d, "Sounds"))
    for c in candidates:
        if os.access(os.path.join(c, "click.wav"), os.R_OK):
            return c
    return None


def matches(params: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether every dotted key of `wanted` (`visibility.hidden`) has that value in `params`."""
    for path, value in wanted.items():
        v: Any = params
        for key in path.split("."):
            if not isinstance(v, dict) or key not in v:
                return False
            v = v[key]
        if v != value or type(v) is bool and type(value) is not bool:
            return False
    return True


class HeadlessDaemon:
    """A real tabbard on virtual time with its audio captured; `stop()` removes it all."""

    def __init__(self, binary: Optional[str] = None, *, sounds: Optional[str] = None,
                 configuration: Optional[Mapping[str, Any]] = None, arguments: Sequence[str] = (),
                 timeout: float = 10.0) -> None:
        self.binary = find_daemon(binary)
        self.sounds = sounds or daemon_sounds(self.binary)
        self.timeout = timeout
        self.directory = tempfile.mkdtemp(prefix="tabbard-harness-")
        self.socket_path = os.path.join(self.directory, "socket")
        self.state_path = os.path.join(self.directory, "state.json")
        self._log_path = os.path.join(self.directory, "tabbard.log")
        self._capture_index = 0
        self._captured = array("h")
        self._first_frame: Optional[int] = None
        self._format = (48000, 2)
        self._played: List[PlayedSound] = []
        self.inbox: List[Event] = []
        self._clients: List[Client] = []
        args = [self.binary, "--no-config", "--socket", self.socket_path, "--state", self.state_path,
                "--audio", "null", "--clock", "manual", "--capture", os.path.join(self.directory, "capture-0.wav")]
        if self.sounds:
            args += ["--sounds", self.sounds]
        args += list(arguments)
        env = {k: v for k, v in os.environ.items() if k not in ("TABBARD_SOCKET", "TABBARD_SOUNDS", "TABBARD_INSTANCE",
                                                                 "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID")}
        with open(self._log_path, "wb") as log:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            self.connection = self._connect()
            self.connection.subscribe()
            if configuration is not None:
                self.call("bar.configure", configuration)
        except BaseException:
            self.stop()
            raise

    def _connect(self) -> Client:
        deadline = time.monotonic() + self.timeout
        while True:
            if self.process.poll() is not None:
                raise HarnessError(f"tabbard exited with status {self.process.returncode}:\n{self.log}")
            try:
                return Client(self.socket_path, timeout=self.timeout)
            except ConnectError:
                if time.monotonic() > deadline:
                    raise HarnessError(f"tabbard did not answer on {self.socket_path} within {self.timeout} s:\n{self.log}")
                time.sleep(0.01)

    # Requests
    def client(self, *, timeout: Optional[float] = 10.0) -> Client:
        """A new connection of the test's own (closed by `stop()` if the test has not)."""
        c = Client(self.socket_path, timeout=timeout)
        self._clients.append(c)
        return c

    def call(self, method: str, params: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Any request on the harness's connection; its events are kept for `expect`."""
        r = self.connection.call(method, params)
        self._collect()
        return r

    def advance(self, ms: int) -> int:
        """Moves the daemon's clock by `ms`: every timer due on the way fires, in order, and the
        audio up to the new time is rendered. Returns the new time (`now_ms`)."""
        return int(self.call("clock.advance", {"ms": ms})["now_ms"])

    def now(self) -> int:
        return int(self.call("clock.get")["now_ms"])

    def state(self) -> Dict[str, Any]:
        """`state.get`'s state."""
        st = self.call("state.get")["state"]
        assert isinstance(st, dict)
        return st

    # Events
    def _collect(self) -> None:
        c = self.connection
        while c.pending_events:
            self._take(c.next_event(0))

    def _take(self, ev: Event) -> None:
        if ev.method == "sound.played":
            p = ev.params
            self._played.append(PlayedSound(str(p.get("name")), int(p.get("voice", -1)), int(p.get("frame", -1))))
        self.inbox.append(ev)

    def _sync(self) -> None:
        """One round trip on the harness's connection: after it, every event of every request
        made so far (on any connection) has arrived — the daemon sends them before the reply."""
        self.call("ping")

    def expect(self, event: str, where: Optional[Callable[[Dict[str, Any]], bool]] = None,
               **matching: Any) -> Dict[str, Any]:
        """The oldest unconsumed event named `event` whose params match (`phase="idle"`; dotted
        keys through a dict: `expect("x", **{"visibility.hidden": True})`) and `where`; it and the
        events before it are consumed. Fails at once (HarnessError, listing what arrived) when
        there is none after a round trip — under the manual clock nothing comes later by itself."""
        found = self._find(event, matching, where)
        if found is None:
            self._sync()
            found = self._find(event, matching, where)
        if found is None:
            seen = ", ".join(f"{e.method} {json.dumps(e.params, separators=(',', ':'))}" for e in self.inbox)
            want = f"{event} with {matching}" if matching else event
            raise HarnessError(f"expected {want}; " + (f"arrived instead: {seen}" if seen else "no event arrived"))
        index, ev = found
        del self.inbox[:index + 1]
        return ev.params

    def _find(self, event: str, matching: Mapping[str, Any],
              where: Optional[Callable[[Dict[str, Any]], bool]]) -> Optional["tuple[int, Event]"]:
        self._collect()
        for i, ev in enumerate(self.inbox):
            if ev.method == event and matches(ev.params, matching) and (where is None or where(ev.params)):
                return i, ev
        return None

    def expect_no_event(self, event: str, **matching: Any) -> None:
        """Fails if an event named `event` (matching) has arrived, after a round trip."""
        self._sync()
        for ev in self.inbox:
            if ev.method == event and matches(ev.params, matching):
                raise HarnessError(f"expected no {event}{f' with {matching}' if matching else ''}, got {ev.params}")

    @property
    def pending_events(self) -> List[Event]:
        """Events received and not yet consumed by `expect`, oldest first."""
        self._collect()
        return list(self.inbox)

    # Audio
    def captured_audio(self) -> CapturedAudio:
        """Everything the stream held since the harness started — the mix the device would
        have played — as interleaved 16-bit samples, with every sound that started in it."""
        stop = self.call("capture.stop")
        rate, channels, samples = read_wav(str(stop["path"]))
        self._format = (rate, channels)
        if self._first_frame is None:
            self._first_frame = int(stop.get("frame", 0))
        self._captured.extend(samples)
        os.unlink(str(stop["path"]))
        self._capture_index += 1
        self.call("capture.start", {"path": os.path.join(self.directory, f"capture-{self._capture_index}.wav")})
        return CapturedAudio(rate, channels, self._captured.tolist(), self._first_frame, list(self._played))

    # Life cycle
    @property
    def log(self) -> str:
        """The daemon's log (stderr) so far."""
        try:
            with open(self._log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def stop(self) -> Optional[int]:
        """Stops the daemon (SIGTERM, SIGKILL after the timeout) and removes its directory.
        Returns its exit status. Idempotent."""
        for c in [getattr(self, "connection", None)] + getattr(self, "_clients", []):
            if c is not None:
                c.close()
        status = self.process.poll()
        if status is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                status = self.process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                status = self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
        return status

    def __enter__(self) -> "HeadlessDaemon":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["HeadlessDaemon", "CapturedAudio", "PlayedSound", "HarnessError", "read_wav", "find_daemon",
           "daemon_sounds", "matches", "Error"]
