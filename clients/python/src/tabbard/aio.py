"""The asyncio client."""
from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Dict, Generator, List, Mapping, Optional, Sequence

from ._errors import ConnectError, Disconnected, Error, Timeout, error_from_reply
from ._path import socket_path as resolve_socket_path
from ._path import untrusted_directory
from ._requests import Requests, request_line, subscribe_params
from .client import Backoff, greeting, parse_line
from .events import Event

Result = Dict[str, Any]
_LOST = Event("", {})  # put in the event queue when the connection is lost


class AsyncClient(Requests[Awaitable[Result]]):
    """The asyncio twin of `Client`: every request is a coroutine (`await client.select("chat")`),
    several may be in flight at once, and `events()` is an async iterator.

    It connects on first use (or `await client.connect()`; `async with AsyncClient() as c`)."""

    def __init__(self, socket_path: Optional[str] = None, *, instance: Optional[str] = None,
                 timeout: Optional[float] = 10.0, min_delay: float = 0.25, max_delay: float = 5.0) -> None:
        self.socket_path = resolve_socket_path(socket_path, instance)
        self.timeout = timeout
        self.hello: Dict[str, Any] = {}
        self.state: Optional[Dict[str, Any]] = None
        self.seq = -1
        self.reconnects = 0
        self._backoff = Backoff(min_delay, max_delay)
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._task: Optional["asyncio.Task[None]"] = None
        self._pending: Dict[int, "asyncio.Future[Result]"] = {}
        self._queue: "asyncio.Queue[Event]"  # made by connect(), inside the running loop
        self._next_id = 1
        self._closed = False
        self._lock: Optional[asyncio.Lock] = None
        self._was_lost = False

    async def connect(self) -> None:
        """Connects and reads the `hello` (kept in `.hello`); does nothing when connected."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._writer is not None:
                return
            self._closed = False
            why = untrusted_directory(self.socket_path)
            if why is not None:
                raise ConnectError(f"cannot connect to tabbard at {self.socket_path}: {why}")
            try:
                reader, writer = await asyncio.open_unix_connection(self.socket_path, limit=16 * 1024 * 1024)
            except OSError as e:
                raise ConnectError(f"cannot connect to tabbard at {self.socket_path}: {e.strerror or e}") from None
            try:
                line = await asyncio.wait_for(reader.readline(), self.timeout)
                if not line:
                    raise Disconnected("tabbard closed the connection before its hello")
                self.hello = greeting(parse_line(line))
            except asyncio.TimeoutError:
                writer.close()
                raise Timeout("no hello from tabbard in time") from None
            except BaseException:
                writer.close()
                raise
            self._reader, self._writer = reader, writer
            self._was_lost = False
            self._queue = asyncio.Queue()
            self._task = asyncio.ensure_future(self._read_loop(reader))

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                if not line.strip():
                    continue
                m = parse_line(line)
                if "result" in m or "error" in m:
                    rid = m.get("id")
                    fut = self._pending.pop(rid, None) if isinstance(rid, int) else None
                    if fut is not None and not fut.done():
                        if "error" in m:
                            fut.set_exception(error_from_reply(m["error"]))
                        else:
                            r = m["result"]
                            fut.set_result(r if isinstance(r, dict) else {"result": r})
                elif isinstance(m.get("method"), str):
                    p = m.get("params")
                    self._queue.put_nowait(Event(m["method"], p if isinstance(p, dict) else {}))
        except (OSError, ValueError, Error):
            pass
        finally:
            self._lost()

    def _lost(self) -> None:
        self._was_lost = True
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(Disconnected("the connection closed before the reply"))
        self._queue.put_nowait(_LOST)

    async def close(self) -> None:
        """Closes the connection; pending requests fail with `Disconnected`."""
        self._closed = True
        writer = self._writer
        if writer is not None:
            writer.close()
        task = self._task
        if task is not None:
            try:
                await task
            except BaseException:
                pass
            self._task = None

    async def __aenter__(self) -> "AsyncClient":
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._writer is not None

    async def call(self, method: str, params: Optional[Mapping[str, Any]] = None) -> Result:
        """Sends a request and awaits its reply: `result`, or the `tabbard.Error` of its kind."""
        if self._writer is None:
            if self._closed or self._was_lost:
                raise Disconnected("not connected to tabbard (the connection was lost; events() reconnects, "
                                   "or call connect())")
            await self.connect()
        writer = self._writer
        assert writer is not None
        request_id = self._next_id
        self._next_id += 1
        fut: "asyncio.Future[Result]" = asyncio.get_running_loop().create_future()
        self._pending[request_id] = fut
        writer.write(request_line(request_id, method, params))
        if writer.transport.get_write_buffer_size() > 65536:
            await writer.drain()  # the daemon reads slower than requests are made: wait for it
        try:
            return await asyncio.wait_for(fut, self.timeout)
        except asyncio.TimeoutError:
            raise Timeout(f"no reply to {method} within {self.timeout} s") from None
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Sends a notification (no reply)."""
        if self._writer is None:
            await self.connect()
        assert self._writer is not None
        self._writer.write(request_line(None, method, params))
        await self._writer.drain()

    async def subscribe(self, topics: Optional[Sequence[str]] = None) -> Result:
        """`subscribe` → `{"seq", "state"}`, kept in `.state`/`.seq`."""
        result = await self.call("subscribe", subscribe_params(topics))
        # Events queued before the reply are older than the snapshot.
        while not self._queue.empty():
            ev = self._queue.get_nowait()
            if ev is _LOST:
                self._queue.put_nowait(ev)
                break
        self.seq = int(result.get("seq", -1))
        st = result.get("state")
        self.state = st if isinstance(st, dict) else None
        return result

    async def unsubscribe(self) -> Result:
        return await self.call("unsubscribe")

    def events(self, topics: Optional[Sequence[str]] = None, *, timeout: Optional[float] = None,
               reconnect: bool = True) -> "EventStream":
        """An async iterator of `Event(method, params)`. It subscribes on its first step, or
        when awaited: `stream = await client.events(["tab"])` is subscribed on return.
        `timeout` and `reconnect` as for `Client.events`."""
        return EventStream(self, topics, timeout, reconnect)

    async def _resubscribe(self, topics: Optional[Sequence[str]]) -> Event:
        while True:
            if self._closed:
                raise Disconnected("the client was closed")
            await asyncio.sleep(self._backoff.next())
            self.reconnects += 1
            try:
                await self.connect()
                result = await self.subscribe(topics)
            except (ConnectError, Disconnected, Timeout):
                continue
            except Error as e:
                if e.kind == "permission_denied":
                    raise
                continue
            self._backoff.reset()
            return Event("state.resync", {"seq": result.get("seq"), "state": result.get("state"), "reconnected": True})


class EventStream:
    """What `AsyncClient.events()` returns: `async for method, params in stream`."""

    def __init__(self, client: AsyncClient, topics: Optional[Sequence[str]], timeout: Optional[float],
                 reconnect: bool) -> None:
        self.client, self.topics, self.timeout, self.reconnect = client, topics, timeout, reconnect
        self._subscribed = False
        self._extra: List[Event] = []

    async def _subscribe(self) -> "EventStream":
        if not self._subscribed:
            await self.client.subscribe(self.topics)
            self._subscribed = True
        return self

    def __await__(self) -> Generator[Any, None, "EventStream"]:
        return self._subscribe().__await__()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        await self._subscribe()
        c = self.client
        if self._extra:
            return self._extra.pop(0)
        while True:
            try:
                ev = await asyncio.wait_for(c._queue.get(), self.timeout)
            except asyncio.TimeoutError:
                raise Timeout(f"no event within {self.timeout} s") from None
            if ev is _LOST:
                if c._closed:
                    raise StopAsyncIteration
                if not self.reconnect:
                    raise Disconnected("tabbard closed the connection")
                return await c._resubscribe(self.topics)
            before = c.seq
            s = ev.seq
            if s is not None and s > c.seq:
                c.seq = s
            if (self.topics is None and s is not None and before >= 0 and s > before + 1
                    and ev.method not in ("state.resync", "bar.configured")):
                r = await c.state_get()
                if int(r["seq"]) >= c.seq:
                    c.seq, c.state = int(r["seq"]), r["state"]
                    self._extra.append(Event("state.resync", {"seq": c.seq, "state": c.state}))
            return ev
