"""A tabbard for the OpenRPC tests: `tabbard --socket S --state F --audio null --sounds DIR --clock manual`
in a directory of the caller's, its socket polled until it accepts (against a deadline); stop() sends
SIGTERM and checks that it exits 0."""

import os
import signal
import socket
import subprocess
import time

START_TIMEOUT = 20.0


class Daemon:
    def __init__(self, binary, sounds, tmpdir, extra=()):
        self.socket = os.path.join(tmpdir, "s")
        self.log_path = os.path.join(tmpdir, "daemon.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([binary, "--socket", self.socket, "--state", os.path.join(tmpdir, "state.json"),
                                      "--audio", "null", "--sounds", sounds, *extra],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise AssertionError("tabbard exited with %s at start-up:\n%s" % (self.proc.returncode, self.log_text()))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.socket)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("tabbard's socket did not accept within %s s" % START_TIMEOUT)
                time.sleep(0.01)   # polling, bounded by the deadline
            finally:
                s.close()

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read()[-3000:].decode(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        if rc != 0:
            raise AssertionError("tabbard exited %s after SIGTERM:\n%s" % (rc, self.log_text()))
