"""Shared pieces of the Python client's tests: a real tabbard on the real clock that a test can
stop and start again on the same socket and state (for reconnects)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from typing import Iterator, List, Optional

import pytest

import tabbard
from tabbard.testing import daemon_sounds, find_daemon

DEADLINE = 20.0  # seconds any condition may take before a test fails


class RealDaemon:
    """tabbard --no-config --audio null on a private socket and state, real clock."""

    def __init__(self, directory: str) -> None:
        self.binary = find_daemon()
        self.directory = directory
        self.socket_path = os.path.join(directory, "socket")
        self.state_path = os.path.join(directory, "state.json")
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.log = open(os.path.join(directory, "tabbard.log"), "ab")

    def start(self) -> None:
        args = [self.binary, "--no-config", "--socket", self.socket_path, "--state", self.state_path,
                "--audio", "null"]
        sounds = daemon_sounds(self.binary)
        if sounds:
            args += ["--sounds", sounds]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + DEADLINE
        while True:
            assert self.process.poll() is None, "tabbard exited at start"
            try:
                tabbard.Client(self.socket_path).close()
                return
            except tabbard.ConnectError:
                assert time.monotonic() < deadline, "tabbard did not answer"
                time.sleep(0.01)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(DEADLINE)
        self.process = None


@pytest.fixture
def real_daemon() -> Iterator[RealDaemon]:
    directory = tempfile.mkdtemp(prefix="tabbard-pytest-")
    d = RealDaemon(directory)
    d.start()
    try:
        yield d
    finally:
        d.stop()
        d.log.close()
        shutil.rmtree(directory, ignore_errors=True)


def wait_for(condition: "object", what: str, timeout: float = DEADLINE) -> None:
    """Polls `condition()` until true (a deadline, not a sleep-and-hope)."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


__all__: List[str] = ["RealDaemon", "wait_for", "DEADLINE"]
