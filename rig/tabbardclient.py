"""One connection to tabbard's socket, for the Python tests and benchmarks (tests/contract, tests/pipewire,
bench/sink): newline-delimited JSON-RPC 2.0 (docs/PROTOCOL.md). Python 3 standard library only.

It reads the hello, sends requests (each timed just before its first send()), matches replies by id, and keeps
the events (notifications) that arrive meanwhile in `events`. Every wait has a deadline (`timeout`, seconds).
What breaks the protocol raises ProtocolError, an AssertionError, so that a test counts it as a failure; a
deadline passed raises Timeout, both a ProtocolError and a TimeoutError.

Scripts import it with the one line
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig"))
(rig/ holds what tests/ and bench/ share: this client, pwrig.py, rig.sh, pwmonitor/)."""

import json
import select
import socket
import time


class ProtocolError(AssertionError):
    pass


class Timeout(ProtocolError, TimeoutError):
    pass


class Client:
    def __init__(self, path, timeout=15.0, read_hello=True):
        self.timeout = timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.sock.setblocking(False)
        self.buf = b""
        self.eof = False
        self.events = []
        self.next_id = 1
        self.hello = self.recv() if read_hello else None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    # -- lines ---------------------------------------------------------
    def send_raw(self, data):
        """Writes data (bytes or str) whole. While the socket is full it keeps reading, so that a daemon blocked
        on writing its replies cannot deadlock against us."""
        view = memoryview(data.encode() if isinstance(data, str) else data)
        deadline = None
        while view:
            try:
                view = view[self.sock.send(view):]
                continue
            except BlockingIOError:
                pass
            deadline = deadline or time.monotonic() + self.timeout
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("timed out writing to the daemon")
            r, _, _ = select.select([self.sock], [self.sock], [], left)
            if r:
                self._fill()

    def _fill(self):
        try:
            chunk = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.eof = True
        self.buf += chunk

    def recv_line(self, timeout=None):
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if self.eof:
                raise ProtocolError("connection closed by the daemon (buffered: %r)" % self.buf[:200])
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("timed out after %.1f s waiting for a line from the daemon" % timeout)
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                self._fill()
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def recv(self, timeout=None):
        line = self.recv_line(timeout)
        try:
            return json.loads(line)
        except ValueError:
            raise ProtocolError("daemon sent a line that is not JSON: %r" % line[:200])

    # -- JSON-RPC ------------------------------------------------------
    def request_obj(self, method, params=None, id_=None):
        """A request object with the next id (or id_)."""
        if id_ is None:
            id_, self.next_id = self.next_id, self.next_id + 1
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    def send(self, method, params=None):
        """Sends a request; returns (its id, CLOCK_MONOTONIC ns taken just before the send)."""
        req = self.request_obj(method, params)
        data = (json.dumps(req) + "\n").encode()
        t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        self.send_raw(data)
        return req["id"], t0

    def reply(self, id_, timeout=None):
        """The reply to id_ (the whole message); events read meanwhile go to `events`."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            msg = self.recv(max(0.0, deadline - time.monotonic()))
            if "id" not in msg:
                self.events.append(msg)
                continue
            if msg.get("id") != id_:
                raise ProtocolError("expected the reply to id %r, got %r" % (id_, msg))
            return msg

    def call_raw(self, method, params=None):
        return self.reply(self.send(method, params)[0])

    def call(self, method, params=None):
        """Calls and returns `result`; fails if the reply is an error."""
        rep = self.call_raw(method, params)
        if "error" in rep or "result" not in rep:
            raise ProtocolError("%s %s failed: %r" % (method, json.dumps(params), rep))
        return rep["result"]

    def call_error(self, method, params=None):
        """Calls and returns `error`; fails if the reply is a result."""
        rep = self.call_raw(method, params)
        if "error" not in rep:
            raise ProtocolError("%s %s: expected an error, got %r" % (method, json.dumps(params), rep))
        return rep["error"]

    # -- events --------------------------------------------------------
    def _event(self, msg, what):
        if "id" in msg:
            raise ProtocolError("unexpected reply while waiting for %s: %r" % (what, msg))
        return msg

    def wait_event(self, pred, timeout=None, what="event"):
        """The first event pred accepts, kept or read within timeout seconds; it leaves `events`."""
        for i, ev in enumerate(self.events):
            if pred(ev):
                return self.events.pop(i)
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("timed out after %.1f s waiting for %s (seen: %r)" % (timeout, what, self.events[-10:]))
            msg = self._event(self.recv(left), what)
            if pred(msg):
                return msg
            self.events.append(msg)

    def pump(self, timeout):
        """Reads one event into `events` if one arrives within timeout seconds."""
        if b"\n" not in self.buf and not self.eof:
            r, _, _ = select.select([self.sock], [], [], timeout)
            if r:
                self._fill()
        if b"\n" in self.buf:
            self.events.append(self._event(self.recv(0), "events"))
