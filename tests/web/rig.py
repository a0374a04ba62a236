"""The rig of the browser tests and the click benchmark: a daemon on a temporary
socket (null audio, temporary state), tabbard-web on an ephemeral port, a
`tabbarctl monitor`, and processes' output lines waited on with deadlines."""
import json
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
import time

WAIT_MS = 20000  # generous: the machine may be loaded


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def deadline_loop(seconds, what):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        yield
        time.sleep(0.02)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


class Lines:
    """The stdout lines of a process, read by a thread, waited on with a deadline."""

    def __init__(self, proc):
        self.proc = proc
        self.q = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def wait(self, predicate, what, seconds=WAIT_MS / 1000):
        for line in self.seen:
            if predicate(line):
                return line
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; saw {self.seen[-5:]}")
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"the process ended before {what}; saw {self.seen[-5:]}")
            self.seen.append(line)
            if predicate(line):
                return line


class Rig:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="tabbard-web-test.")
        os.chmod(self.tmp, 0o700)
        self.runtime = os.path.join(self.tmp, "run")
        os.mkdir(self.runtime, 0o700)
        self.sock = os.path.join(self.tmp, "s")
        self.state = os.path.join(self.tmp, "state.json")
        self.ctl = os.path.join(args.bin, "tabbarctl")
        self.env = dict(os.environ, XDG_RUNTIME_DIR=self.runtime, TABBARCTL=self.ctl,
                        TABBARD_EXAMPLES_DIR=os.path.join(args.root, "examples"))
        self.env.pop("TABBARD_SOCKET", None)
        self.daemon = None
        self.web = None
        self.monitor = None

    def start_daemon(self):
        log = open(os.path.join(self.tmp, "daemon.log"), "a")
        self.daemon = subprocess.Popen(
            [os.path.join(self.args.bin, "tabbard"), "--socket", self.sock, "--state", self.state,
             *getattr(self, "audio", ["--audio", "null"]), "--sounds", self.args.sounds],
            stdout=log, stderr=log, env=self.env)
        for _ in deadline_loop(30, "the daemon to answer"):
            if self.daemon.poll() is not None:
                raise AssertionError(f"the daemon exited with {self.daemon.returncode}")
            if subprocess.run([self.ctl, "--socket", self.sock, "ping"], capture_output=True).returncode == 0:
                return

    def stop_daemon(self):
        self.daemon.terminate()
        self.daemon.wait(timeout=30)

    def start_web(self):
        self.port = free_port()
        self.web = subprocess.Popen(
            [os.path.join(self.args.root, "web", "tabbard-web"), "--socket", self.sock, "--port", str(self.port)],
            stdout=subprocess.PIPE, stderr=open(os.path.join(self.tmp, "web.log"), "a"), text=True, env=self.env)
        line = Lines(self.web).wait(lambda l: l.startswith("web: "), "tabbard-web's address line", 30)
        self.url = line.split(" ", 1)[1]
        assert self.url.startswith(f"http://127.0.0.1:{self.port}/?token="), self.url
        self.token = self.url.split("token=", 1)[1]

    def start_monitor(self):
        self.monitor = subprocess.Popen([self.ctl, "--socket", self.sock, "monitor", "--json"],
                                        stdout=subprocess.PIPE, text=True, env=self.env)
        self.events = Lines(self.monitor)
        self.events.wait(lambda l: l.startswith('{"seq"'), "the monitor's snapshot")

    def ctl_json(self, *words):
        out = subprocess.run([self.ctl, "--socket", self.sock, "--json", *words],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    def state_now(self):
        return self.ctl_json("state")["state"]

    def close(self):
        for p in (self.monitor, self.web, self.daemon):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        if self.args.keep:
            print("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def open_page(browser, rig, viewport=None, query="", **options):
    """A page on the bridge, connected; `options` as for Browser.new_page (color_scheme, has_touch, …)."""
    page = browser.new_page(viewport=viewport or {"width": 420, "height": 640}, **options)
    page.on("pageerror", lambda e: print("  page error:", e))
    page.goto(rig.url + query)
    page.wait_for_function("document.body.dataset.connection === 'open'", timeout=WAIT_MS)
    return page
