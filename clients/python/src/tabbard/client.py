"""The blocking client."""
from __future__ import annotations

import json
import random
import select
import socket
import time
from collections import deque
from typing import Any, Deque, Dict, Iterator, Mapping, Optional, Sequence, Union

from ._errors import ConnectError, Disconnected, Error, ProtocolViolation, Timeout, error_from_reply
from ._path import socket_path as resolve_socket_path
from ._path import untrusted_directory
from ._requests import Requests, request_line, subscribe_params
from .events import Event

Result = Dict[str, Any]


def open_socket(path: str, timeout: Optional[float]) -> socket.socket:
    """A connected stream socket to `path` (ConnectError saying why not)."""
    why = untrusted_directory(path)
    if why is not None:
        raise ConnectError(f"cannot connect to tabbard at {path}: {why}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError as e:
        sock.close()
        hint = " (is tabbard running? start it with `tabbard`, or give its socket)" if isinstance(
            e, (FileNotFoundError, ConnectionRefusedError)) else ""
        raise ConnectError(f"cannot connect to tabbard at {path}: {e.strerror or e}{hint}") from None
    return sock


_decode = json.JSONDecoder().decode


def parse_line(line: Union[bytes, bytearray]) -> Dict[str, Any]:
    try:
        m = _decode(line.decode() if isinstance(line, (bytes, bytearray)) else bytes(line).decode())
    except ValueError:
        raise ProtocolViolation(f"tabbard sent a line that is not JSON: {line[:200]!r}") from None
    if not isinstance(m, dict):
        raise ProtocolViolation(f"tabbard sent a line that is not an object: {line[:200]!r}")
    return m


def greeting(m: Dict[str, Any]) -> Dict[str, Any]:
    """The hello's params from the first line, or the refusal it is raised as an exception."""
    if m.get("method") == "hello":
        params = m.get("params")
        return params if isinstance(params, dict) else {}
    if "error" in m and "method" not in m:
        raise error_from_reply(m["error"])
    raise ProtocolViolation(f"expected the hello notification first, got {json.dumps(m)[:200]}")


class Backoff:
    """The web client's reconnect delays: from `min_delay`, doubling up to `max_delay`, ±25 % jitter."""

    def __init__(self, min_delay: float = 0.25, max_delay: float = 5.0) -> None:
        self.min_delay, self.max_delay = min_delay, max_delay
        self.delay = min_delay

    def next(self) -> float:
        d = self.delay * (0.75 + random.random() * 0.5)
        self.delay = min(self.max_delay, self.delay * 2)
        return d

    def reset(self) -> None:
        self.delay = self.min_delay


class Client(Requests[Result]):
    """A blocking connection to tabbard.

    `Client()` connects to the socket `tabbarctl` would use (`socket_path`, else `instance`,
    `$TABBARD_SOCKET`, `$TABBARD_INSTANCE`, `$XDG_RUNTIME_DIR/tabbard/socket`, …) and reads the
    `hello` (kept in `.hello`). `call` sends a request and returns its `result`, or raises the
    `tabbard.Error` subclass of its kind. `events()` subscribes and iterates over the events;
    when the connection is lost it reconnects, subscribes again and yields a `state.resync` with
    the fresh snapshot (and `"reconnected": true`). Not thread-safe: one thread per client.
    """

    def __init__(self, socket_path: Optional[str] = None, *, instance: Optional[str] = None,
                 timeout: Optional[float] = 10.0, min_delay: float = 0.25, max_delay: float = 5.0) -> None:
        self.socket_path = resolve_socket_path(socket_path, instance)
        self.timeout = timeout
        self.hello: Dict[str, Any] = {}
        #: The last subscribe snapshot's state and the newest `seq` seen since (`events()`).
        self.state: Optional[Dict[str, Any]] = None
        self.seq = -1
        self.reconnects = 0
        self._backoff = Backoff(min_delay, max_delay)
        self._sock: Optional[socket.socket] = None
        self._buffer = bytearray()
        self._chunk = bytearray(65536)  # read into, never reallocated
        self._view = memoryview(self._chunk)
        self._queue: Deque[Event] = deque()
        self._next_id = 1
        self._closed = False
        self._connect()

    # Connection
    def _connect(self) -> None:
        self._sock = open_socket(self.socket_path, self.timeout)
        self._sock.settimeout(None)
        self._poll = select.poll()
        self._poll.register(self._sock, select.POLLIN)
        self._buffer = bytearray()
        self._queue.clear()
        try:
            self.hello = greeting(self._read_message(self._deadline(self.timeout)))
        except BaseException:
            self._drop()
            raise

    def _drop(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def reconnect(self) -> None:
        """Closes the connection (if any) and connects again (a new `hello`)."""
        self._drop()
        self._closed = False
        self._connect()

    def close(self) -> None:
        """Closes the connection; later calls raise `Disconnected`."""
        self._closed = True
        self._drop()

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def fileno(self) -> int:
        """The socket (for a front end's own poll loop; read with `pending_events` first)."""
        return self._sock.fileno() if self._sock is not None else -1

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Lines
    @staticmethod
    def _deadline(timeout: Optional[float]) -> Optional[float]:
        return None if timeout is None else time.monotonic() + timeout

    def _read_message(self, deadline: Optional[float]) -> Dict[str, Any]:
        sock = self._sock
        if sock is None:
            raise Disconnected("not connected to tabbard (the connection was closed)")
        while True:
            nl = self._buffer.find(b"\n")
            if nl >= 0:
                line = bytes(self._buffer[:nl])
                del self._buffer[:nl + 1]
                if line.strip():
                    return parse_line(line)
                continue
            # Wait with poll, then read what is there: the socket stays blocking, so a round trip
            # costs send, poll, read — as the project's own clients do (docs/PYTHON.md).
            if deadline is None:
                ready = self._poll.poll()
            else:
                wait = deadline - time.monotonic()
                ready = self._poll.poll(max(0, int(wait * 1000) + 1)) if wait > 0 else self._poll.poll(0)
            if not ready:
                raise Timeout("no message from tabbard in time")
            try:
                got = sock.recv_into(self._chunk)
            except InterruptedError:
                continue
            except OSError as e:
                self._drop()
                raise Disconnected(f"the connection to tabbard failed: {e.strerror or e}") from None
            if not got:
                self._drop()
                raise Disconnected("tabbard closed the connection")
            self._buffer += self._view[:got]

    def _send(self, data: bytes) -> None:
        if self._sock is None:
            raise Disconnected("not connected to tabbard (the connection was closed)")
        try:
            self._sock.sendall(data)
        except OSError as e:
            self._drop()
            raise Disconnected(f"the connection to tabbard failed: {e.strerror or e}") from None

    # Requests
    def call(self, method: str, params: Optional[Mapping[str, Any]] = None) -> Result:
        """Sends a request and waits for its reply: returns `result`; raises the `tabbard.Error`
        subclass of the error's kind (`UnknownTab`, `InvalidParams`, …), `Timeout`, `Disconnected`.
        Events that arrive meanwhile are kept for `events()`."""
        request_id = self._next_id
        self._next_id += 1
        self._send(request_line(request_id, method, params))
        deadline = self._deadline(self.timeout)
        sock = self._sock
        if not self._buffer and sock is not None and self._poll.poll(-1 if self.timeout is None else int(self.timeout * 1000)):
            # The usual case: the reply alone, in one read.
            try:
                got = sock.recv_into(self._chunk)
            except OSError:
                got = -1
            if got > 0 and self._chunk[got - 1] == 10 and self._chunk.find(b"\n", 0, got - 1) < 0:
                m = parse_line(self._chunk[:got])
                if m.get("id") == request_id and "result" in m:
                    result = m["result"]
                    return result if isinstance(result, dict) else {"result": result}
                self._buffer += self._view[:got]
            elif got > 0:
                self._buffer += self._view[:got]
            elif got == 0:
                self._drop()
                raise Disconnected("tabbard closed the connection")
        while True:
            m = self._read_message(deadline)
            if "result" in m or "error" in m:
                if m.get("id") == request_id:
                    if "error" in m:
                        raise error_from_reply(m["error"])
                    result = m["result"]
                    return result if isinstance(result, dict) else {"result": result}
                if m.get("id") is None and "error" in m:
                    raise error_from_reply(m["error"])
                continue  # a late reply to a call that timed out
            if isinstance(m.get("method"), str):
                params_in = m.get("params")
                self._queue.append(Event(m["method"], params_in if isinstance(params_in, dict) else {}))

    def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Sends a notification: carried out, nothing is replied (not even an error)."""
        self._send(request_line(None, method, params))

    # Events
    def subscribe(self, topics: Optional[Sequence[str]] = None) -> Result:
        """`subscribe` → `{"seq", "state"}`; the snapshot is kept in `.state`/`.seq`."""
        result = self.call("subscribe", subscribe_params(topics))
        self._queue.clear()  # older than the snapshot
        self.seq = int(result.get("seq", -1))
        state = result.get("state")
        self.state = state if isinstance(state, dict) else None
        return result

    def unsubscribe(self) -> Result:
        return self.call("unsubscribe")

    @property
    def pending_events(self) -> int:
        """Events received and not yet taken by `events()` (or `next_event`)."""
        return len(self._queue)

    def next_event(self, timeout: Optional[float] = None) -> Event:
        """The next event on a subscribed connection (Timeout after `timeout` s; None: wait)."""
        deadline = self._deadline(timeout)
        while not self._queue:
            m = self._read_message(deadline)
            if isinstance(m.get("method"), str) and "id" not in m:
                p = m.get("params")
                self._queue.append(Event(m["method"], p if isinstance(p, dict) else {}))
            elif m.get("id") is None and "error" in m:
                raise error_from_reply(m["error"])
        ev = self._queue.popleft()
        s = ev.seq
        if s is not None and s > self.seq:
            self.seq = s
        return ev

    def events(self, topics: Optional[Sequence[str]] = None, *, timeout: Optional[float] = None,
               reconnect: bool = True) -> Iterator[Event]:
        """Subscribes now (to `topics`: event names or prefixes such as "tab"; all when None) and
        returns an iterator of `Event(method, params)` tuples. `timeout`: seconds to wait for each
        event (None: for ever), then `Timeout`. With `reconnect`, a lost connection is retried
        with back-off (0.25 s doubling to 5 s, ±25 %) and the iterator yields
        `("state.resync", {"seq", "state", "reconnected": True})` once subscribed again."""
        self.subscribe(topics)
        return self._iterate(topics, timeout, reconnect)

    def _iterate(self, topics: Optional[Sequence[str]], timeout: Optional[float], reconnect: bool) -> Iterator[Event]:
        while True:
            try:
                before = self.seq
                ev = self.next_event(timeout)
            except Disconnected:
                if not reconnect or self._closed:
                    raise
                yield self._resubscribe(topics)
                continue
            yield ev
            s = ev.seq
            if (topics is None and s is not None and before >= 0 and s > before + 1
                    and ev.method not in ("state.resync", "bar.configured")):
                # A seq jump on a connection that gets every event: something was missed.
                r = self.state_get()
                if int(r["seq"]) >= self.seq:
                    self.seq, self.state = int(r["seq"]), r["state"]
                    yield Event("state.resync", {"seq": self.seq, "state": self.state})

    def _resubscribe(self, topics: Optional[Sequence[str]]) -> Event:
        while True:
            if self._closed:
                raise Disconnected("the client was closed")
            time.sleep(self._backoff.next())
            self.reconnects += 1
            try:
                self._drop()
                self._connect()
                result = self.subscribe(topics)
            except (ConnectError, Disconnected, Timeout):
                continue
            except Error as e:
                if e.kind == "permission_denied":
                    raise
                continue
            self._backoff.reset()
            return Event("state.resync", {"seq": result.get("seq"), "state": result.get("state"), "reconnected": True})
